/* samsa-broker: the transaction coordinator (see coordinator.h). */
#include "txn/coordinator.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"
#include "txn/txn_log.h"

/* ProducerIdAndEpoch: an epoch this close to Short.MaxValue starts a new
 * producer id (TransactionMetadata.isProducerEpochExhausted) */
#define EPOCH_EXHAUSTED (INT16_MAX - 1)
/* a record's most bytes: the id and a transaction's partitions */
#define RECORD_MAX (1 << 20)

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

static void clear_parts(struct br_txn *t)
{
    for (size_t i = 0; i < t->nparts; i++) {
        kp_free(t->parts[i].topic);
    }
    t->nparts = 0;
}

static void txn_free(struct br_txn *t)
{
    clear_parts(t);
    kp_free(t->parts);
    kp_free(t->id);
    kp_free(t);
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

static size_t find_index(const struct br_txn_coordinator *c, const char *id, size_t len)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct br_txn *t = c->txns[i];
        if (t->id_len == len && memcmp(t->id, id, len) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

struct br_txn *br_txn_find(const struct br_txn_coordinator *c, const char *id, size_t len)
{
    size_t i = find_index(c, id, len);
    return i == SIZE_MAX ? NULL : c->txns[i];
}

static void remove_at(struct br_txn_coordinator *c, size_t i)
{
    txn_free(c->txns[i]);
    memmove(c->txns + i, c->txns + i + 1, (c->n - i - 1) * sizeof(struct br_txn *));
    c->n--;
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
    t->start_ms = -1;
    t->log_end = -1;
    t->status = BR_TXN_EMPTY;
    c->txns[c->n++] = t;
    return t;
}

/* Writes t's record as it is now (tombstone: the id's removal). 0 or the
 * Kafka error of the write. */
static int persist(struct br_txn_coordinator *c, struct br_txn *t, bool tombstone)
{
    struct kp_writer kw;
    struct kp_writer vw;
    kp_wr_init(&kw, RECORD_MAX);
    kp_wr_init(&vw, RECORD_MAX);
    br_txn_log_key(&kw, t->id, t->id_len);
    if (!tombstone) {
        br_txn_log_value(&vw, t);
    }
    int rc = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    if (kw.err == 0 && vw.err == 0) {
        struct kp_bytes key = {kw.buf, (int32_t)kw.len};
        struct kp_bytes value = tombstone ? KP_BYTES_NULL : (struct kp_bytes){vw.buf, (int32_t)vw.len};
        int64_t end = -1;
        rc = c->ops->write(c->ctx, t->id, t->id_len, key, value, &end);
        if (rc == 0) {
            t->log_end = end;
        }
    }
    kp_wr_free(&kw);
    kp_wr_free(&vw);
    return rc;
}

/* What a change may have to undo when its write fails. */
struct saved {
    int64_t producer_id;
    int16_t epoch;
    int32_t timeout_ms;
    enum br_txn_status status;
    size_t nparts;
    int64_t start_ms;
    int64_t update_ms;
};

static struct saved save(const struct br_txn *t)
{
    return (struct saved){t->producer_id, t->epoch,  t->timeout_ms, t->status,
                          t->nparts,      t->start_ms, t->update_ms};
}

static void restore(struct br_txn *t, const struct saved *s)
{
    for (size_t i = s->nparts; i < t->nparts; i++) {
        kp_free(t->parts[i].topic);
    }
    t->nparts = s->nparts;
    t->producer_id = s->producer_id;
    t->epoch = s->epoch;
    t->timeout_ms = s->timeout_ms;
    t->status = s->status;
    t->start_ms = s->start_ms;
    t->update_ms = s->update_ms;
}

/* Makes t's status `to` (written first). 0 or the write's error (t
 * unchanged). */
static int transition(struct br_txn_coordinator *c, struct br_txn *t, enum br_txn_status to,
                      int64_t now_ms)
{
    struct saved s = save(t);
    t->status = to;
    t->update_ms = now_ms;
    int rc = persist(c, t, false);
    if (rc != 0) {
        restore(t, &s);
    }
    return rc;
}

/* Writes t's markers and completes it (Prepare* -> Complete*), or leaves
 * it in Prepare* for br_txn_tick to retry. True when completed. */
static bool complete(struct br_txn_coordinator *c, struct br_txn *t, int64_t now_ms)
{
    bool commit = t->status == BR_TXN_PREPARE_COMMIT;
    if (!c->ops->write_markers(c->ctx, t, commit)) {
        return false;
    }
    /* the Complete record lists no partitions: they are cleared first,
     * and kept (for a retry) if it cannot be written */
    size_t nparts = t->nparts;
    t->nparts = 0;
    if (transition(c, t, commit ? BR_TXN_COMPLETE_COMMIT : BR_TXN_COMPLETE_ABORT, now_ms) != 0) {
        t->nparts = nparts;
        return false;
    }
    t->nparts = nparts;
    clear_parts(t);
    if (commit) {
        c->committed++;
    } else {
        c->aborted++;
    }
    return true;
}

/* An open transaction aborted in a bumped epoch: its producer, in the old
 * epoch, is fenced everywhere the ABORT lands (Kafka's PrepareEpochFence
 * then PrepareAbort). 0 when completed, CONCURRENT_TRANSACTIONS when its
 * markers are still to be written, or the write's error. */
static int fence_and_abort(struct br_txn_coordinator *c, struct br_txn *t, int64_t now_ms)
{
    struct saved s = save(t);
    if (t->epoch < EPOCH_EXHAUSTED) {
        t->epoch++;
    }
    t->status = BR_TXN_PREPARE_ABORT;
    t->update_ms = now_ms;
    int rc = persist(c, t, false);
    if (rc != 0) {
        restore(t, &s);
        return rc;
    }
    return complete(c, t, now_ms) ? 0 : KP_ERR_CONCURRENT_TRANSACTIONS;
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
    case BR_TXN_ONGOING: {
        br_info("transactional id \"%s\": a new producer fences producer %lld epoch %d; its open "
                "transaction is aborted",
                t->id, (long long)t->producer_id, (int)t->epoch);
        c->fenced++;
        int rc = fence_and_abort(c, t, now_ms);
        if (rc != 0) {
            return (int16_t)rc;
        }
        break;
    }
    default:
        break;
    }
    struct saved s = save(t);
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
    t->start_ms = -1;
    t->update_ms = now_ms;
    int rc = persist(c, t, false);
    if (rc != 0) {
        restore(t, &s);
        if (s.producer_id < 0) {
            /* never written: the id is not kept */
            remove_at(c, find_index(c, id, len));
        }
        return (int16_t)rc;
    }
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

static bool has_partition(const struct br_txn *t, const struct br_txn_partition_ref *r)
{
    for (size_t i = 0; i < t->nparts; i++) {
        if (t->parts[i].partition == r->partition && strlen(t->parts[i].topic) == r->topic_len &&
            memcmp(t->parts[i].topic, r->topic, r->topic_len) == 0) {
            return true;
        }
    }
    return false;
}

int16_t br_txn_add_partitions(struct br_txn_coordinator *c, struct br_txn *t,
                              const struct br_txn_partition_ref *parts, size_t n, int64_t now_ms)
{
    bool all_in = t->status == BR_TXN_ONGOING;
    for (size_t i = 0; i < n && all_in; i++) {
        all_in = has_partition(t, &parts[i]);
    }
    if (all_in) {
        return KP_ERR_NONE; /* a subset of what is open: nothing to write */
    }
    struct saved s = save(t);
    if (t->status != BR_TXN_ONGOING) {
        clear_parts(t);
        s.nparts = 0;
        t->start_ms = now_ms;
        t->status = BR_TXN_ONGOING;
    }
    t->update_ms = now_ms;
    for (size_t i = 0; i < n; i++) {
        if (has_partition(t, &parts[i])) {
            continue;
        }
        if (t->nparts == t->cap_parts) {
            size_t cap = t->cap_parts == 0 ? 4 : t->cap_parts * 2;
            struct br_txn_partition *v = kp_realloc(t->parts, cap * sizeof *v);
            if (v == NULL) {
                restore(t, &s);
                return KP_ERR_COORDINATOR_NOT_AVAILABLE;
            }
            t->parts = v;
            t->cap_parts = cap;
        }
        char *copy = kp_malloc(parts[i].topic_len + 1);
        if (copy == NULL) {
            restore(t, &s);
            return KP_ERR_COORDINATOR_NOT_AVAILABLE;
        }
        memcpy(copy, parts[i].topic, parts[i].topic_len);
        copy[parts[i].topic_len] = '\0';
        t->parts[t->nparts++] = (struct br_txn_partition){copy, parts[i].partition};
    }
    int rc = persist(c, t, false);
    if (rc != 0) {
        restore(t, &s);
        return (int16_t)rc;
    }
    return KP_ERR_NONE;
}

int16_t br_txn_check_produce(const struct br_txn_coordinator *c, const char *id, size_t len,
                             int64_t producer_id, int16_t epoch, const char *topic,
                             size_t topic_len, int32_t partition)
{
    const struct br_txn *t = br_txn_find(c, id, len);
    if (t == NULL || t->producer_id != producer_id) {
        return KP_ERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (epoch < t->epoch) {
        return KP_ERR_INVALID_PRODUCER_EPOCH;
    }
    struct br_txn_partition_ref r = {topic, topic_len, partition};
    if (epoch != t->epoch || t->status != BR_TXN_ONGOING || !has_partition(t, &r)) {
        return KP_ERR_INVALID_TXN_STATE;
    }
    return KP_ERR_NONE;
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
    case BR_TXN_ONGOING: {
        int rc = transition(c, t, commit ? BR_TXN_PREPARE_COMMIT : BR_TXN_PREPARE_ABORT, now_ms);
        if (rc != 0) {
            return (int16_t)rc;
        }
        /* Kafka answers once the Prepare record is written; the markers
         * follow: here they are written at once, or retried by the tick */
        (void)complete(c, t, now_ms);
        return KP_ERR_NONE;
    }
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
    int rc = fence_and_abort(c, t, now_ms);
    /* markers still to be written: PrepareAbort is recorded, the tick
     * finishes it as it does a timed-out one */
    return rc == 0 || rc == KP_ERR_CONCURRENT_TRANSACTIONS ? KP_ERR_NONE : (int16_t)rc;
}

void br_txn_tick(struct br_txn_coordinator *c, int64_t now_ms)
{
    if (now_ms - c->last_tick_ms < c->tick_interval_ms) {
        return;
    }
    c->last_tick_ms = now_ms;
    for (size_t i = 0; i < c->n;) {
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
            if (now_ms - t->update_ms > c->id_expiration_ms && persist(c, t, true) == 0) {
                br_info("transactional id \"%s\": unused for %lld ms: removed", t->id,
                        (long long)c->id_expiration_ms);
                remove_at(c, i);
                continue;
            }
            break;
        }
        i++;
    }
}

void br_txn_markers_done(struct br_txn_coordinator *c, const char *id, size_t len, int64_t now_ms)
{
    struct br_txn *t = br_txn_find(c, id, len);
    if (t != NULL && (t->status == BR_TXN_PREPARE_COMMIT || t->status == BR_TXN_PREPARE_ABORT)) {
        (void)complete(c, t, now_ms);
    }
}

size_t br_txn_unload(struct br_txn_coordinator *c, bool (*gone)(void *arg, const char *id, size_t len),
                     void *arg)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n;) {
        if (gone(arg, c->txns[i]->id, c->txns[i]->id_len)) {
            remove_at(c, i);
            n++;
        } else {
            i++;
        }
    }
    return n;
}

void br_txn_resume(struct br_txn_coordinator *c, bool (*mine)(void *arg, const char *id, size_t len),
                   void *arg, int64_t now_ms)
{
    /* complete() may write, never remove: the array stays as it is */
    for (size_t i = 0; i < c->n; i++) {
        struct br_txn *t = c->txns[i];
        if ((t->status == BR_TXN_PREPARE_COMMIT || t->status == BR_TXN_PREPARE_ABORT) &&
            (mine == NULL || mine(arg, t->id, t->id_len))) {
            (void)complete(c, t, now_ms);
        }
    }
}

int br_txn_load_record(struct br_txn_coordinator *c, struct kp_bytes key, struct kp_bytes value)
{
    struct kp_str id;
    if (br_txn_log_key_decode(key, &id) != 0) {
        return KP_E_CORRUPT;
    }
    size_t i = find_index(c, id.ptr, (size_t)id.len);
    if (value.len < 0) {
        if (i != SIZE_MAX) {
            remove_at(c, i);
        }
        return 0;
    }
    struct br_txn *t = i != SIZE_MAX ? c->txns[i] : txn_new(c, id.ptr, (size_t)id.len);
    if (t == NULL) {
        return KP_E_NOMEM;
    }
    int rc = br_txn_log_value_decode(value, t);
    if (rc != 0) {
        if (i == SIZE_MAX) {
            remove_at(c, c->n - 1);
        }
        return rc;
    }
    if (t->status == BR_TXN_DEAD) {
        remove_at(c, find_index(c, id.ptr, (size_t)id.len));
    }
    return 0;
}
