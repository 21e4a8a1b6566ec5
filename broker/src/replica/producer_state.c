/* samsa-broker: idempotent-producer state (see producer_state.h). */
#include "replica/producer_state.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include <stdint.h>
#include <string.h>

/* Kafka's RecordBatch.NO_PRODUCER_EPOCH and NO_SEQUENCE */
#define NO_EPOCH (-1)

int32_t br_seq_add(int32_t seq, int32_t delta)
{
    int64_t v = (int64_t)seq + delta;
    if (v > INT32_MAX) {
        v -= (int64_t)INT32_MAX + 1;
    } else if (v < 0 && seq >= 0) {
        v += (int64_t)INT32_MAX + 1; /* a first sequence before the wrap */
    }
    return (int32_t)v;
}

static struct br_producer *find(const struct br_producers *ps, int64_t id)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->items[i].producer_id == id) {
            return &ps->items[i];
        }
    }
    return NULL;
}

static int64_t batch_first_offset(const struct br_producer_batch *b)
{
    return b->last_offset - b->offset_delta;
}

/* Kafka's isProducerRetained: a producer whose last batch lies below the
 * log start is gone with it. */
static bool retained(const struct br_producer *p, int64_t log_start)
{
    return p->nbatches > 0 && p->batches[p->nbatches - 1].last_offset >= log_start;
}

enum br_seq_verdict br_producers_check(const struct br_producers *ps, int64_t log_start,
                                       const struct br_producer_append *a, int64_t *dup_offset,
                                       int *kafka_err)
{
    const struct br_producer *p = find(ps, a->producer_id);
    /* a producer without batches holds the epoch a marker gave it (a
     * fencing abort): it stays known whatever the log start */
    if (p != NULL && p->nbatches > 0 && !retained(p, log_start)) {
        p = NULL;
    }
    int16_t stored = p != NULL ? p->epoch : NO_EPOCH;
    /* findDuplicateBatch: only the stored epoch's batches, those the log
     * still holds (removeBatchesOlderThan) */
    if (p != NULL && a->epoch == stored) {
        for (unsigned i = 0; i < p->nbatches; i++) {
            const struct br_producer_batch *b = &p->batches[i];
            if (b->first_seq == a->first_seq && b->last_seq == a->last_seq &&
                b->last_offset >= log_start) {
                *dup_offset = batch_first_offset(b);
                return BR_SEQ_DUPLICATE;
            }
        }
    }
    /* checkProducerEpoch */
    if (a->epoch < stored) {
        *kafka_err = KP_ERR_INVALID_PRODUCER_EPOCH;
        return BR_SEQ_ERROR;
    }
    /* checkSequence */
    if (a->epoch != stored) {
        if (a->first_seq != 0) {
            *kafka_err = stored == NO_EPOCH ? KP_ERR_UNKNOWN_PRODUCER_ID
                                            : KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
            return BR_SEQ_ERROR;
        }
        return BR_SEQ_APPEND;
    }
    if (p == NULL || p->nbatches == 0) {
        /* epoch -1 (Kafka's NO_PRODUCER_EPOCH) of a producer never seen,
         * or the epoch of a marker: no last sequence, so 0 only */
        if (a->first_seq != 0) {
            *kafka_err = KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
            return BR_SEQ_ERROR;
        }
        return BR_SEQ_APPEND;
    }
    int32_t last = p->batches[p->nbatches - 1].last_seq;
    bool in_seq = (int64_t)a->first_seq == (int64_t)last + 1 ||
                  (a->first_seq == 0 && last == INT32_MAX);
    if (!in_seq) {
        *kafka_err = KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
        return BR_SEQ_ERROR;
    }
    return BR_SEQ_APPEND;
}

/* p's slot for producer_id: the existing one, a new one, or the least
 * recently used one's once max_producers (0: no limit) are kept. NULL: out
 * of memory. */
static struct br_producer *slot(struct br_producers *ps, int64_t producer_id,
                                size_t max_producers)
{
    struct br_producer *p = find(ps, producer_id);
    if (p != NULL) {
        return p;
    }
    size_t lru = SIZE_MAX;
    if (max_producers > 0 && ps->n >= max_producers) {
        for (size_t i = 0; i < ps->n; i++) {
            if (ps->items[i].txn_first_offset < 0 &&
                (lru == SIZE_MAX || ps->items[i].last_used_ms < ps->items[lru].last_used_ms)) {
                lru = i;
            }
        }
    }
    if (lru != SIZE_MAX) {
        p = &ps->items[lru];
    } else {
        if (ps->n == ps->cap) {
            size_t cap = ps->cap == 0 ? 4 : ps->cap * 2;
            struct br_producer *items = kp_realloc(ps->items, cap * sizeof *items);
            if (items == NULL) {
                return NULL;
            }
            ps->items = items;
            ps->cap = cap;
        }
        p = &ps->items[ps->n++];
    }
    memset(p, 0, sizeof *p);
    p->producer_id = producer_id;
    p->epoch = NO_EPOCH;
    p->coordinator_epoch = -1;
    p->txn_first_offset = -1;
    return p;
}

static void add_batch(struct br_producer *p, int16_t epoch, const struct br_producer_batch *b)
{
    /* ProducerStateEntry.maybeUpdateEpoch: a new epoch starts over */
    if (epoch != p->epoch) {
        p->epoch = epoch;
        p->nbatches = 0;
    }
    if (p->nbatches == BR_PRODUCER_BATCHES) {
        memmove(&p->batches[0], &p->batches[1], (BR_PRODUCER_BATCHES - 1) * sizeof p->batches[0]);
        p->nbatches--;
    }
    p->batches[p->nbatches++] = *b;
}

int br_producers_record(struct br_producers *ps, const struct br_producer_append *a, int64_t now_ms,
                        size_t max_producers)
{
    struct br_producer *p = slot(ps, a->producer_id, max_producers);
    if (p == NULL) {
        return KP_E_NOMEM;
    }
    struct br_producer_batch b = {
        .first_seq = a->first_seq,
        .last_seq = a->last_seq,
        .last_offset = a->first_offset + a->offset_delta,
        .offset_delta = a->offset_delta,
        .timestamp = a->timestamp,
    };
    add_batch(p, a->epoch, &b);
    p->last_used_ms = now_ms;
    if (a->transactional && p->txn_first_offset < 0) {
        p->txn_first_offset = a->first_offset;
        ps->open_txns++;
    }
    return 0;
}

int16_t br_producers_check_txn(const struct br_producers *ps, const struct br_producer_append *a)
{
    const struct br_producer *p = find(ps, a->producer_id);
    if (!a->transactional && p != NULL && p->txn_first_offset >= 0) {
        return KP_ERR_INVALID_TXN_STATE;
    }
    return KP_ERR_NONE;
}

int16_t br_producers_check_marker(const struct br_producers *ps, int64_t producer_id,
                                  int16_t epoch, int32_t coordinator_epoch)
{
    const struct br_producer *p = find(ps, producer_id);
    if (p == NULL) {
        return KP_ERR_NONE; /* an empty transaction, or one retention took */
    }
    if (epoch < p->epoch) {
        return KP_ERR_INVALID_PRODUCER_EPOCH;
    }
    if (p->coordinator_epoch > coordinator_epoch) {
        return KP_ERR_TRANSACTION_COORDINATOR_FENCED;
    }
    return KP_ERR_NONE;
}

int br_producers_end_txn(struct br_producers *ps, int64_t producer_id, int16_t epoch,
                         int32_t coordinator_epoch, int64_t marker_offset, int64_t now_ms,
                         struct br_txn_span *done)
{
    struct br_producer *p = slot(ps, producer_id, 0); /* a marker always has room */
    if (p == NULL) {
        return KP_E_NOMEM;
    }
    *done = (struct br_txn_span){producer_id, marker_offset, marker_offset};
    if (p->txn_first_offset >= 0) {
        done->first_offset = p->txn_first_offset;
        p->txn_first_offset = -1;
        ps->open_txns--;
    }
    /* maybeUpdateEpoch: a marker of a bumped epoch (a fenced producer's
     * abort) starts the producer's batches over */
    if (epoch != p->epoch) {
        p->epoch = epoch;
        p->nbatches = 0;
    }
    p->coordinator_epoch = coordinator_epoch;
    p->last_used_ms = now_ms;
    return 0;
}

int64_t br_producers_first_open_txn(const struct br_producers *ps)
{
    if (ps->open_txns == 0) {
        return -1;
    }
    int64_t first = -1;
    for (size_t i = 0; i < ps->n; i++) {
        int64_t f = ps->items[i].txn_first_offset;
        if (f >= 0 && (first < 0 || f < first)) {
            first = f;
        }
    }
    return first;
}

int br_producers_to_snapshot(const struct br_producers *ps, int64_t log_start,
                             struct br_psnap_entry **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (ps->n == 0) {
        return 0;
    }
    struct br_psnap_entry *e = kp_calloc(ps->n * BR_PRODUCER_BATCHES, sizeof *e);
    if (e == NULL) {
        return KP_E_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < ps->n; i++) {
        const struct br_producer *p = &ps->items[i];
        if (p->nbatches == 0 && p->epoch >= 0) {
            /* an epoch from a marker, without a batch since: Kafka's
             * entry of last sequence -1 */
            e[k++] = (struct br_psnap_entry){
                .producer_id = p->producer_id,
                .epoch = p->epoch,
                .last_seq = -1,
                .last_offset = -1,
                .offset_delta = 0,
                .timestamp = p->last_used_ms,
                .coordinator_epoch = p->coordinator_epoch,
                .txn_first_offset = p->txn_first_offset,
            };
            continue;
        }
        if (!retained(p, log_start)) {
            continue;
        }
        /* every retained batch, oldest first: the last entry of a producer
         * is the one Kafka's reader keeps */
        for (unsigned j = 0; j < p->nbatches; j++) {
            const struct br_producer_batch *b = &p->batches[j];
            if (b->last_offset < log_start) {
                continue;
            }
            e[k++] = (struct br_psnap_entry){
                .producer_id = p->producer_id,
                .epoch = p->epoch,
                .last_seq = b->last_seq,
                .last_offset = b->last_offset,
                .offset_delta = b->offset_delta,
                .timestamp = b->timestamp,
                .coordinator_epoch = p->coordinator_epoch,
                .txn_first_offset = p->txn_first_offset,
            };
        }
    }
    if (k == 0) {
        kp_free(e);
        return 0;
    }
    *out = e;
    *n = k;
    return 0;
}

/* p's open transaction's first offset (-1: none), counted in ps. */
static void set_txn(struct br_producers *ps, struct br_producer *p, int64_t first)
{
    if (p->txn_first_offset < 0 && first >= 0) {
        ps->open_txns++;
    } else if (p->txn_first_offset >= 0 && first < 0) {
        ps->open_txns--;
    }
    p->txn_first_offset = first < 0 ? -1 : first;
}

int br_producers_load_snapshot(struct br_producers *ps, const struct br_psnap_entry *e, size_t n,
                               int64_t log_start, size_t max_producers)
{
    for (size_t i = 0; i < n; i++) {
        if (e[i].producer_id < 0) {
            continue;
        }
        if (e[i].last_seq < 0 && e[i].epoch >= 0) {
            /* an entry without a batch: the epoch a marker gave the
             * producer (Kafka writes last_sequence -1 for it) */
            struct br_producer *p = slot(ps, e[i].producer_id, max_producers);
            if (p == NULL) {
                return KP_E_NOMEM;
            }
            p->epoch = e[i].epoch;
            p->nbatches = 0;
            p->coordinator_epoch = e[i].coordinator_epoch;
            set_txn(ps, p, e[i].txn_first_offset);
            p->last_used_ms = e[i].timestamp;
            continue;
        }
        /* an entry below the log start is not kept */
        if (e[i].last_seq < 0 || e[i].last_offset < log_start || e[i].offset_delta < 0) {
            continue;
        }
        struct br_producer *p = slot(ps, e[i].producer_id, max_producers);
        if (p == NULL) {
            return KP_E_NOMEM;
        }
        struct br_producer_batch b = {
            .first_seq = br_seq_add(e[i].last_seq, -e[i].offset_delta),
            .last_seq = e[i].last_seq,
            .last_offset = e[i].last_offset,
            .offset_delta = e[i].offset_delta,
            .timestamp = e[i].timestamp,
        };
        add_batch(p, e[i].epoch, &b);
        p->coordinator_epoch = e[i].coordinator_epoch;
        set_txn(ps, p, e[i].txn_first_offset);
        p->last_used_ms = e[i].timestamp;
    }
    return 0;
}

void br_producers_free(struct br_producers *ps)
{
    kp_free(ps->items);
    ps->items = NULL;
    ps->n = 0;
    ps->cap = 0;
    ps->snap_offset = 0;
    ps->open_txns = 0;
}
