/* samsa-broker: idempotent-producer state (see producer_state.h). */
#include "replica/producer_state.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include <string.h>

int32_t br_seq_add(int32_t seq, int32_t delta)
{
    int64_t v = (int64_t)seq + delta;
    if (v > INT32_MAX) {
        v -= (int64_t)INT32_MAX + 1;
    }
    return (int32_t)v;
}

static const struct br_producer *find(const struct br_producers *ps, int64_t id)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->items[i].producer_id == id) {
            return &ps->items[i];
        }
    }
    return NULL;
}

enum br_seq_verdict br_producers_check(const struct br_producers *ps, int64_t producer_id,
                                       int16_t epoch, int32_t first_seq, int32_t last_seq,
                                       int64_t *dup_offset, int *kafka_err)
{
    const struct br_producer *p = find(ps, producer_id);
    if (p == NULL || p->nbatches == 0) {
        return BR_SEQ_APPEND;
    }
    if (epoch < p->epoch) {
        *kafka_err = KP_ERR_INVALID_PRODUCER_EPOCH;
        return BR_SEQ_ERROR;
    }
    if (epoch == p->epoch) {
        for (unsigned i = 0; i < p->nbatches; i++) {
            if (p->batches[i].first_seq == first_seq && p->batches[i].last_seq == last_seq) {
                *dup_offset = p->batches[i].base_offset;
                return BR_SEQ_DUPLICATE;
            }
        }
        int32_t expect = br_seq_add(p->batches[p->nbatches - 1].last_seq, 1);
        if (first_seq != expect) {
            *kafka_err = KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
            return BR_SEQ_ERROR;
        }
        return BR_SEQ_APPEND;
    }
    /* a bumped epoch starts over at sequence 0 */
    if (first_seq != 0) {
        *kafka_err = KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
        return BR_SEQ_ERROR;
    }
    return BR_SEQ_APPEND;
}

int br_producers_record(struct br_producers *ps, int64_t producer_id, int16_t epoch,
                        int32_t first_seq, int32_t last_seq, int64_t base_offset, int64_t now_ms,
                        size_t max_producers)
{
    struct br_producer *p = NULL;
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->items[i].producer_id == producer_id) {
            p = &ps->items[i];
            break;
        }
    }
    if (p == NULL) {
        if (ps->n >= max_producers && ps->n > 0) {
            /* evict the least recently used producer */
            size_t lru = 0;
            for (size_t i = 1; i < ps->n; i++) {
                if (ps->items[i].last_used_ms < ps->items[lru].last_used_ms) {
                    lru = i;
                }
            }
            p = &ps->items[lru];
        } else {
            if (ps->n == ps->cap) {
                size_t cap = ps->cap == 0 ? 4 : ps->cap * 2;
                struct br_producer *items = kp_realloc(ps->items, cap * sizeof *items);
                if (items == NULL) {
                    return -1;
                }
                ps->items = items;
                ps->cap = cap;
            }
            p = &ps->items[ps->n++];
        }
        memset(p, 0, sizeof *p);
        p->producer_id = producer_id;
        p->epoch = epoch;
    }
    if (epoch != p->epoch) {
        p->epoch = epoch;
        p->nbatches = 0;
    }
    if (p->nbatches == BR_PRODUCER_BATCHES) {
        memmove(&p->batches[0], &p->batches[1], (BR_PRODUCER_BATCHES - 1) * sizeof p->batches[0]);
        p->nbatches--;
    }
    struct br_producer_batch nb = {first_seq, last_seq, base_offset};
    p->batches[p->nbatches++] = nb;
    p->last_used_ms = now_ms;
    return 0;
}

void br_producers_free(struct br_producers *ps)
{
    kp_free(ps->items);
    ps->items = NULL;
    ps->n = 0;
    ps->cap = 0;
}
