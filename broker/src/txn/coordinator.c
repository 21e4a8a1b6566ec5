/* samsa-broker: the transaction coordinator (see coordinator.h). */
#include "txn/coordinator.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"

/* ProducerIdAndEpoch: an epoch this close to Short.MaxValue starts a new
 * producer id (TransactionMetadata.isProducerEpochExhausted) */
#define EPOCH_EXHAUSTED (INT16_MAX - 1)

void br_txn_init(struct br_txn_coordinator *c, const struct br_txn_ops *ops, void *ctx,
                 int32_t max_timeout_ms, int64_t id_expiration_ms, int64_t tick_interval_ms)
{
    memset(c, 0, sizeof *c);
    c->ops = ops;
    c->ctx = ctx;
    c->max_timeout_ms = max_timeout_ms;
    c->id_expiration_ms = id_expiration_ms;
    c->tick_interval_ms = tick_interval_ms;
}

static void txn_free(struct br_txn *t)
{
    for (size_t i = 0; i < t->nparts; i++) {
        kp_free(t->parts[i].topic);
    }
    kp_free(t->parts);
    kp_free(t->id);
    kp_free(t);
}

static void clear_parts(struct br_txn *t)
{
    for (size_t i = 0; i < t->nparts; i++) {
        kp_free(t->parts[i].topic);
    }
    t->nparts = 0;
}

void br_txn_fini(struct br_txn_coordinator *c)
{
    for (size_t i = 0; i < c->n; i++) {
        txn_free(c->txns[i]);
    }
    kp_free(c->txns);
    c->txns = NULL;
    c->n = c->cap = 0;
}

const char *br_txn_status_name(enum br_txn_status s)
{
    switch (s) {
    case BR_TXN_EMPTY:
        return "Empty";
    case BR_TXN_ONGOING:
        return "Ongoing";
    case BR_TXN_PREPARE_COMMIT:
        return "PrepareCommit";
    case BR_TXN_PREPARE_ABORT:
        return "PrepareAbort";
    case BR_TXN_COMPLETE_COMMIT:
        return "CompleteCommit";
    case BR_TXN_COMPLETE_ABORT:
        return "CompleteAbort";
    case BR_TXN_DEAD:
        return "Dead";
    }
    return "?";
}

struct br_txn *br_txn_find(const struct br_txn_coordinator *c, const char *id, size_t len)
{
    for (size_t i = 0; i < c->n; i++) {
        struct br_txn *t = c->txns[i];
        if (t->id_len == len && memcmp(t->id, id, len) == 0) {
            return t;
        }
    }
    return NULL;
}

static struct br_txn *txn_new(struct br_txn_coordinator *c, const char *id, size_t len)
{
    if (c->n == c->cap) {
        size_t cap = c->cap == 0 ? 8 : c->cap * 2;
        struct br_txn **v = kp_realloc(c->txns, cap * sizeof(struct br_txn *));
        if (v == NULL) {
            return NULL;
        }
        c->txns = v;
        c->cap = cap;
    }
    struct br_txn *t = kp_calloc(1, sizeof *t);
    char *copy = kp_malloc(len + 1);
    if (t == NULL || copy == NULL) {
        kp_free(t);
        kp_free(copy);
        return NULL;
    }
    memcpy(copy, id, len);
    copy[len] = '\0';
    t->id = copy;
    t->id_len = len;
    t->producer_id = -1;
    t->epoch = -1;
    t->status = BR_TXN_EMPTY;
    c->txns[c->n++] = t;
    return t;
}

/* Writes t's markers and completes it (Prepare* -> Complete*), or leaves
 * it in Prepare* for br_txn_tick to retry. True when completed. */
static bool complete(struct br_txn_coordinator *c, struct br_txn *t, int64_t now_ms)
{
    bool commit = t->status == BR_TXN_PREPARE_COMMIT;
    if (!c->ops->write_markers(c->ctx, t, commit, c->coordinator_epoch)) {
        return false;
    }
    t->status = commit ? BR_TXN_COMPLETE_COMMIT : BR_TXN_COMPLETE_ABORT;
    clear_parts(t);
    t->update_ms = now_ms;
    if (commit) {
        c->committed++;
    } else {
        c->aborted++;
    }
    return true;
}

/* An open transaction aborted in a bumped epoch: its producer, in the old
 * epoch, is fenced everywhere the ABORT lands (Kafka's PrepareEpochFence
 * then PrepareAbort). True when completed. */
static bool fence_and_abort(struct br_txn_coordinator *c, struct br_txn *t, int64_t now_ms)
{
    if (t->epoch < EPOCH_EXHAUSTED) {
        t->epoch++;
    }
    t->status = BR_TXN_PREPARE_ABORT;
    t->update_ms = now_ms;
    return complete(c, t, now_ms);
}

int16_t br_txn_init_producer_id(struct br_txn_coordinator *c, const char *id, size_t len,
                                int32_t timeout_ms, int64_t now_ms, int64_t *producer_id,
                                int16_t *epoch)
{
    if (len == 0) {
        return KP_ERR_INVALID_REQUEST;
    }
    if (timeout_ms <= 0 || timeout_ms > c->max_timeout_ms) {
        return KP_ERR_INVALID_TRANSACTION_TIMEOUT;
    }
    struct br_txn *t = br_txn_find(c, id, len);
    if (t == NULL) {
        t = txn_new(c, id, len);
        if (t == NULL) {
            return KP_ERR_COORDINATOR_NOT_AVAILABLE;
        }
    }
    switch (t->status) {
    case BR_TXN_PREPARE_COMMIT:
    case BR_TXN_PREPARE_ABORT:
        /* markers still to be written: the client retries */
        if (!complete(c, t, now_ms)) {
            return KP_ERR_CONCURRENT_TRANSACTIONS;
        }
        break;
    case BR_TXN_ONGOING:
        br_info("transactional id \"%s\": a new producer fences producer %lld epoch %d; its open "
                "transaction is aborted",
                t->id, (long long)t->producer_id, (int)t->epoch);
        c->fenced++;
        if (!fence_and_abort(c, t, now_ms)) {
            return KP_ERR_CONCURRENT_TRANSACTIONS;
        }
        break;
    default:
        break;
    }
    if (t->producer_id < 0 || t->epoch >= EPOCH_EXHAUSTED) {
        int64_t pid = -1;
        if (c->ops->new_producer_id(c->ctx, &pid) != 0) {
            return KP_ERR_COORDINATOR_NOT_AVAILABLE;
        }
        t->producer_id = pid;
        t->epoch = 0;
    } else {
        t->epoch++;
    }
    t->timeout_ms = timeout_ms;
    t->status = BR_TXN_EMPTY;
    t->update_ms = now_ms;
    *producer_id = t->producer_id;
    *epoch = t->epoch;
    return KP_ERR_NONE;
}

int16_t br_txn_check(const struct br_txn_coordinator *c, const char *id, size_t len,
                     int64_t producer_id, int16_t epoch, struct br_txn **out)
{
    *out = NULL;
    struct br_txn *t = br_txn_find(c, id, len);
    if (t == NULL || t->producer_id != producer_id) {
        return KP_ERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (t->epoch != epoch) {
        return KP_ERR_INVALID_PRODUCER_EPOCH;
    }
    if (t->status == BR_TXN_PREPARE_COMMIT || t->status == BR_TXN_PREPARE_ABORT) {
        return KP_ERR_CONCURRENT_TRANSACTIONS;
    }
    *out = t;
    return KP_ERR_NONE;
}

int br_txn_add_partition(struct br_txn_coordinator *c, struct br_txn *t, const char *topic,
                         size_t topic_len, int32_t partition, int64_t now_ms)
{
    (void)c;
    if (t->status != BR_TXN_ONGOING) {
        clear_parts(t);
        t->start_ms = now_ms;
        t->status = BR_TXN_ONGOING;
    }
    t->update_ms = now_ms;
    for (size_t i = 0; i < t->nparts; i++) {
        if (t->parts[i].partition == partition && strlen(t->parts[i].topic) == topic_len &&
            memcmp(t->parts[i].topic, topic, topic_len) == 0) {
            return 0;
        }
    }
    if (t->nparts == t->cap_parts) {
        size_t cap = t->cap_parts == 0 ? 4 : t->cap_parts * 2;
        struct br_txn_partition *v = kp_realloc(t->parts, cap * sizeof *v);
        if (v == NULL) {
            return KP_E_NOMEM;
        }
        t->parts = v;
        t->cap_parts = cap;
    }
    char *copy = kp_malloc(topic_len + 1);
    if (copy == NULL) {
        return KP_E_NOMEM;
    }
    memcpy(copy, topic, topic_len);
    copy[topic_len] = '\0';
    t->parts[t->nparts++] = (struct br_txn_partition){copy, partition};
    return 0;
}

int16_t br_txn_end(struct br_txn_coordinator *c, const char *id, size_t len, int64_t producer_id,
                   int16_t epoch, bool commit, int64_t now_ms)
{
    struct br_txn *t = br_txn_find(c, id, len);
    if (t == NULL || t->producer_id != producer_id) {
        return KP_ERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (epoch != t->epoch) {
        return KP_ERR_INVALID_PRODUCER_EPOCH;
    }
    switch (t->status) {
    case BR_TXN_ONGOING:
        t->status = commit ? BR_TXN_PREPARE_COMMIT : BR_TXN_PREPARE_ABORT;
        t->update_ms = now_ms;
        /* Kafka answers once the Prepare record is written; the markers
         * follow: here they are written at once, or retried by the tick */
        (void)complete(c, t, now_ms);
        return KP_ERR_NONE;
    case BR_TXN_COMPLETE_COMMIT:
        return commit ? KP_ERR_NONE : KP_ERR_INVALID_TXN_STATE;
    case BR_TXN_COMPLETE_ABORT:
        return commit ? KP_ERR_INVALID_TXN_STATE : KP_ERR_NONE;
    case BR_TXN_PREPARE_COMMIT:
    case BR_TXN_PREPARE_ABORT:
        return KP_ERR_CONCURRENT_TRANSACTIONS;
    default:
        return KP_ERR_INVALID_TXN_STATE;
    }
}

int16_t br_txn_abort(struct br_txn_coordinator *c, const char *id, size_t len, int64_t now_ms)
{
    struct br_txn *t = br_txn_find(c, id, len);
    if (t == NULL) {
        return KP_ERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (t->status != BR_TXN_ONGOING) {
        return KP_ERR_INVALID_TXN_STATE;
    }
    br_info("transactional id \"%s\": its transaction aborted by an operator, producer %lld "
            "epoch %d fenced",
            t->id, (long long)t->producer_id, (int)t->epoch);
    (void)fence_and_abort(c, t, now_ms);
    return KP_ERR_NONE;
}

void br_txn_tick(struct br_txn_coordinator *c, int64_t now_ms)
{
    if (now_ms - c->last_tick_ms < c->tick_interval_ms) {
        return;
    }
    c->last_tick_ms = now_ms;
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct br_txn *t = c->txns[i];
        switch (t->status) {
        case BR_TXN_ONGOING:
            if (now_ms - t->start_ms > t->timeout_ms) {
                br_info("transactional id \"%s\": its transaction passed its timeout of %d ms: "
                        "aborted, producer %lld fenced",
                        t->id, (int)t->timeout_ms, (long long)t->producer_id);
                c->timed_out++;
                (void)fence_and_abort(c, t, now_ms);
            }
            break;
        case BR_TXN_PREPARE_COMMIT:
        case BR_TXN_PREPARE_ABORT:
            (void)complete(c, t, now_ms);
            break;
        default:
            if (now_ms - t->update_ms > c->id_expiration_ms) {
                br_info("transactional id \"%s\": unused for %lld ms: removed", t->id,
                        (long long)c->id_expiration_ms);
                txn_free(t);
                continue;
            }
            break;
        }
        c->txns[k++] = t;
    }
    c->n = k;
}
