/*
 * The producer's per-partition queues and batches: pure state, no I/O and no
 * clock of its own (callers pass `now`), so that the unit tests drive it with
 * a fake clock.
 *
 * Order rule: a partition's records leave in the order they were produced.
 * Retried batches are kept sorted by sequence and are sent again only when
 * nothing else of the partition is in flight; new records wait behind them.
 */
#include <limits.h>

#include "core/internal.h"

void sc_msgq_push(struct sc_msgq *q, struct sc_msg *m)
{
    m->next = NULL;
    if (q->tail != NULL) {
        q->tail->next = m;
    } else {
        q->head = m;
    }
    q->tail = m;
    q->count++;
    q->bytes += m->size;
}

struct sc_msg *sc_msgq_pop(struct sc_msgq *q)
{
    struct sc_msg *m = q->head;
    if (m == NULL) {
        return NULL;
    }
    q->head = m->next;
    if (q->head == NULL) {
        q->tail = NULL;
    }
    q->count--;
    q->bytes -= m->size;
    m->next = NULL;
    return m;
}

void sc_msgq_concat(struct sc_msgq *dst, struct sc_msgq *src)
{
    if (src->head == NULL) {
        return;
    }
    if (dst->tail != NULL) {
        dst->tail->next = src->head;
    } else {
        dst->head = src->head;
    }
    dst->tail = src->tail;
    dst->count += src->count;
    dst->bytes += src->bytes;
    src->head = src->tail = NULL;
    src->count = 0;
    src->bytes = 0;
}

int32_t sc_seq_add(int32_t seq, int32_t n)
{
    int64_t s = (int64_t)seq + n;
    if (s > INT32_MAX) {
        s -= (int64_t)INT32_MAX + 1;
    }
    return (int32_t)s;
}

bool sc_ppart_ready(const struct sc_ppart *pp, const struct sc_batch_rules *rules, int64_t now,
                    bool flushing, int64_t *wake_at)
{
    if (pp->retry != NULL) {
        if (pp->inflight > 0) {
            return false; /* the response of what is in flight comes first */
        }
        if (pp->retry->retry_at_ms <= now) {
            return true;
        }
        if (wake_at != NULL) {
            *wake_at = sc_min64(*wake_at, pp->retry->retry_at_ms);
        }
        return false;
    }
    if (pp->queue.head == NULL || pp->inflight >= rules->max_in_flight) {
        return false;
    }
    if (flushing || pp->queue.bytes >= rules->batch_size ||
        pp->queue.count >= rules->batch_num_messages) {
        return true;
    }
    int64_t due = pp->queue.head->enq_ms + rules->linger_ms;
    if (due <= now) {
        return true;
    }
    if (wake_at != NULL) {
        *wake_at = sc_min64(*wake_at, due);
    }
    return false;
}

struct sc_batch *sc_ppart_next_batch(struct sc_ppart *pp, const struct sc_batch_rules *rules,
                                     int64_t now)
{
    (void)now;
    struct sc_batch *b = pp->retry;
    if (b != NULL) {
        pp->retry = b->next;
        b->next = NULL;
        pp->inflight++;
        return b;
    }
    if (pp->queue.head == NULL) {
        return NULL;
    }
    b = kp_calloc(1, sizeof(*b));
    if (b == NULL) {
        return NULL;
    }
    b->first_enq_ms = pp->queue.head->enq_ms;
    if (pp->queue.count <= rules->batch_num_messages && pp->queue.bytes <= rules->batch_size) {
        /* All of it fits (the usual case): taken whole, no walk over the records. */
        sc_msgq_concat(&b->msgs, &pp->queue);
    } else {
        /* At least one record, then as many as fit the size and count bounds:
         * the walk only reads the records, and the run found is cut off the
         * queue in one step. */
        struct sc_msg *last = pp->queue.head;
        int32_t count = 1;
        size_t bytes = last->size;
        while (last->next != NULL && count < rules->batch_num_messages &&
               bytes + last->next->size <= rules->batch_size) {
            last = last->next;
            count++;
            bytes += last->size;
        }
        b->msgs.head = pp->queue.head;
        b->msgs.tail = last;
        b->msgs.count = count;
        b->msgs.bytes = bytes;
        pp->queue.head = last->next;
        if (pp->queue.head == NULL) {
            pp->queue.tail = NULL;
        }
        pp->queue.count -= count;
        pp->queue.bytes -= bytes;
        last->next = NULL;
    }
    if (rules->idempotent) {
        b->base_seq = pp->next_seq;
        pp->next_seq = sc_seq_add(pp->next_seq, b->msgs.count);
    } else {
        b->base_seq = -1;
    }
    pp->inflight++;
    return b;
}

void sc_ppart_batch_done(struct sc_ppart *pp)
{
    if (pp->inflight > 0) {
        pp->inflight--;
    }
}

/* Sequence order that survives a wrap: compare distances from next_seq. */
static bool seq_before(const struct sc_ppart *pp, int32_t a, int32_t b)
{
    int64_t da = (int64_t)pp->next_seq - a;
    int64_t db = (int64_t)pp->next_seq - b;
    if (da <= 0) {
        da += (int64_t)INT32_MAX + 1;
    }
    if (db <= 0) {
        db += (int64_t)INT32_MAX + 1;
    }
    return da > db; /* further behind next_seq = older */
}

void sc_ppart_batch_retry(struct sc_ppart *pp, struct sc_batch *b, int64_t now, int backoff_ms)
{
    sc_ppart_batch_done(pp);
    b->retry_at_ms = now + backoff_ms;
    struct sc_batch **at = &pp->retry;
    if (b->base_seq >= 0) {
        while (*at != NULL && (*at)->base_seq >= 0 && seq_before(pp, (*at)->base_seq, b->base_seq)) {
            at = &(*at)->next;
        }
    } else {
        /* Not idempotent: batches come back in send order; keep that. */
        while (*at != NULL) {
            at = &(*at)->next;
        }
    }
    b->next = *at;
    *at = b;
}

void sc_ppart_reset_sequence(struct sc_ppart *pp)
{
    int32_t seq = 0;
    for (struct sc_batch *b = pp->retry; b != NULL; b = b->next) {
        b->base_seq = seq;
        seq = sc_seq_add(seq, b->msgs.count);
    }
    pp->next_seq = seq;
}

bool sc_ppart_expire(struct sc_ppart *pp, int64_t now, int timeout_ms, struct sc_msgq *expired)
{
    bool sent_lost = false;
    struct sc_batch **at = &pp->retry;
    while (*at != NULL) {
        struct sc_batch *b = *at;
        if (now - b->first_enq_ms >= timeout_ms) {
            *at = b->next;
            sent_lost = sent_lost || b->sent;
            if (b->sent) {
                sc_msgq_mark_possibly(&b->msgs);
            }
            sc_msgq_concat(expired, &b->msgs);
            sc_batch_free(b);
        } else {
            at = &b->next;
        }
    }
    while (pp->queue.head != NULL && now - pp->queue.head->enq_ms >= timeout_ms) {
        sc_msgq_push(expired, sc_msgq_pop(&pp->queue));
    }
    return sent_lost;
}

void sc_msgq_mark_possibly(struct sc_msgq *q)
{
    for (struct sc_msg *m = q->head; m != NULL; m = m->next) {
        m->status = SAMSA_MSG_POSSIBLY_PERSISTED;
    }
}

void sc_batch_free(struct sc_batch *b)
{
    kp_free(b);
}
