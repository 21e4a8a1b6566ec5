/* samsa-broker: a partition's finished transactions (see txn_state.h). */
#include "replica/txn_state.h"

#include <inttypes.h>
#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) {
        return 0;
    }
    size_t ncap = *cap == 0 ? 4 : *cap * 2;
    void *nv = kp_realloc(*v, ncap * size);
    if (nv == NULL) {
        return KP_E_NOMEM;
    }
    *v = nv;
    *cap = ncap;
    return 0;
}

int64_t br_txn_state_lso(struct br_txn_state *ts, const struct br_producers *ps, int64_t hw)
{
    /* onHighWatermarkUpdated: completed transactions the mark passed no
     * longer count */
    size_t k = 0;
    for (size_t i = 0; i < ts->nunreplicated; i++) {
        if (ts->unreplicated[i].last_offset >= hw) {
            ts->unreplicated[k++] = ts->unreplicated[i];
        }
    }
    ts->nunreplicated = k;
    int64_t first = br_producers_first_open_txn(ps);
    for (size_t i = 0; i < ts->nunreplicated; i++) {
        int64_t f = ts->unreplicated[i].first_offset;
        if (first < 0 || f < first) {
            first = f;
        }
    }
    return first >= 0 && first < hw ? first : hw;
}

void br_txn_state_complete(struct br_txn_state *ts, const struct br_producers *ps,
                           const struct br_txn_span *done, bool commit, int64_t hw,
                           const char *dir, int64_t seg_base)
{
    if (done->last_offset >= hw) {
        void *v = ts->unreplicated;
        if (grow(&v, &ts->cap_unreplicated, ts->nunreplicated, sizeof *ts->unreplicated) == 0) {
            ts->unreplicated = v;
            ts->unreplicated[ts->nunreplicated++] = *done;
        } else {
            br_warn("%s: out of memory completing a transaction", dir);
        }
    }
    if (commit) {
        return;
    }
    if (ts->naborted > 0 && ts->aborted[ts->naborted - 1].last_offset >= done->last_offset) {
        return; /* indexed already (a replay of a marker the index has) */
    }
    /* ProducerStateManager.lastStableOffset(completedTxn): the first offset
     * of another open transaction, else the one after the marker */
    int64_t next_open = br_producers_first_open_txn(ps);
    struct br_aborted_txn e = {
        .producer_id = done->producer_id,
        .first_offset = done->first_offset,
        .last_offset = done->last_offset,
        .last_stable_offset = next_open >= 0 ? next_open : done->last_offset + 1,
    };
    void *v = ts->aborted;
    if (grow(&v, &ts->cap_aborted, ts->naborted, sizeof *ts->aborted) != 0) {
        br_error("%s: out of memory indexing an aborted transaction", dir);
        return;
    }
    ts->aborted = v;
    ts->aborted[ts->naborted++] = e;
    if (br_txnidx_append(dir, seg_base, &e) != 0) {
        br_error("%s: the aborted transaction of producer %" PRId64 " at %" PRId64
                 " is indexed in memory only",
                 dir, e.producer_id, e.last_offset);
    }
}

size_t br_txn_state_aborted(const struct br_txn_state *ts, int64_t fetch_offset, int64_t upper,
                            struct br_aborted_txn *out, size_t cap)
{
    /* the first entry whose marker is at or past fetch_offset */
    size_t lo = 0;
    size_t hi = ts->naborted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ts->aborted[mid].last_offset < fetch_offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    size_t n = 0;
    for (size_t i = lo; i < ts->naborted; i++) {
        if (ts->aborted[i].first_offset < upper) {
            if (n < cap) {
                out[n] = ts->aborted[i];
            }
            n++;
        }
    }
    return n;
}

void br_txn_state_free(struct br_txn_state *ts)
{
    kp_free(ts->aborted);
    kp_free(ts->unreplicated);
    memset(ts, 0, sizeof *ts);
}

void br_txn_state_load(struct br_txn_state *ts, const char *dir, int64_t start, int64_t leo)
{
    br_txn_state_free(ts);
    struct br_aborted_txn *v = NULL;
    size_t n = 0;
    if (br_txnidx_load(dir, start, leo, &v, &n) != 0) {
        br_error("%s: the aborted-transaction index could not be read: the log's replay "
                 "restores only the aborts after the latest producer snapshot",
                 dir);
        return;
    }
    ts->aborted = v;
    ts->naborted = n;
    ts->cap_aborted = n;
}
