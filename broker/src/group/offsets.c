/*
 * samsa-broker: committed offsets (see group.h): the cache of each group,
 * the records the coordinator appends to __consumer_offsets (every commit
 * request becomes one batch, more when it passes the topic's
 * max.message.bytes, appended through the partition's leader append; what
 * the log took is pending until the records are replicated, and only then
 * committed, as in Kafka 2.0's GroupMetadata), offset expiry, and loading
 * a partition of the topic at start-up (records that do not decode are
 * skipped and counted).
 * @locality reactor thread
 */
#define _GNU_SOURCE

#include "group/group.h"

#include "base/logging.h"
#include "group/records.h"
#include "replica/partition.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/record_batch.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>


/* ---------------------------------------------------------------- the cache */

static int offset_cmp(const struct grp_offset *o, const char *topic, size_t tlen, int32_t partition)
{
    size_t ol = strlen(o->topic);
    size_t m = ol < tlen ? ol : tlen;
    int c = m > 0 ? memcmp(o->topic, topic, m) : 0;
    if (c != 0) {
        return c;
    }
    if (ol != tlen) {
        return ol < tlen ? -1 : 1;
    }
    return o->partition < partition ? -1 : (o->partition > partition ? 1 : 0);
}

static size_t offset_lower_bound(const struct grp_group *g, const char *topic, size_t tlen,
                                 int32_t partition)
{
    size_t lo = 0;
    size_t hi = g->noffsets;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (offset_cmp(&g->offsets[mid], topic, tlen, partition) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

const struct grp_offset *br_grp_offset_find(const struct grp_group *g, struct kp_str topic,
                                            int32_t partition)
{
    if (topic.len < 0) {
        return NULL;
    }
    size_t i = offset_lower_bound(g, topic.ptr, (size_t)topic.len, partition);
    if (i < g->noffsets &&
        offset_cmp(&g->offsets[i], topic.ptr, (size_t)topic.len, partition) == 0) {
        return &g->offsets[i];
    }
    return NULL;
}

static void offset_clear(struct grp_offset *o)
{
    kp_free(o->topic);
    kp_free(o->metadata);
}

void br_grp_offset_remove(struct grp_group *g, struct kp_str topic, int32_t partition)
{
    if (topic.len < 0) {
        return;
    }
    size_t i = offset_lower_bound(g, topic.ptr, (size_t)topic.len, partition);
    if (i < g->noffsets &&
        offset_cmp(&g->offsets[i], topic.ptr, (size_t)topic.len, partition) == 0) {
        offset_clear(&g->offsets[i]);
        memmove(&g->offsets[i], &g->offsets[i + 1], (g->noffsets - i - 1) * sizeof *g->offsets);
        g->noffsets--;
    }
}

int br_grp_offset_set(struct grp_group *g, struct kp_str topic, struct kp_str metadata,
                      const struct grp_offset *v)
{
    size_t tlen = topic.len > 0 ? (size_t)topic.len : 0;
    char *md = br_grp_dup_kstr(metadata);
    if (md == NULL) {
        return KP_E_NOMEM;
    }
    size_t i = offset_lower_bound(g, topic.ptr, tlen, v->partition);
    if (g->offsets != NULL && i < g->noffsets &&
        offset_cmp(&g->offsets[i], topic.ptr, tlen, v->partition) == 0) {
        struct grp_offset *o = &g->offsets[i];
        kp_free(o->metadata);
        o->metadata = md;
        o->offset = v->offset;
        o->leader_epoch = v->leader_epoch;
        o->commit_ts = v->commit_ts;
        o->expire_ts = v->expire_ts;
        o->log_offset = v->log_offset;
        return 0;
    }
    if (g->noffsets >= GRP_MAX_OFFSETS) {
        kp_free(md);
        return KP_E_TOO_LARGE;
    }
    if (g->offsets == NULL || g->noffsets == g->offsets_cap) {
        size_t cap = g->offsets_cap == 0 ? 8 : g->offsets_cap * 2;
        struct grp_offset *no = kp_realloc(g->offsets, cap * sizeof *no);
        if (no == NULL) {
            kp_free(md);
            return KP_E_NOMEM;
        }
        g->offsets = no;
        g->offsets_cap = cap;
    }
    char *tp = br_grp_dup_kstr(topic);
    if (tp == NULL) {
        kp_free(md);
        return KP_E_NOMEM;
    }
    memmove(&g->offsets[i + 1], &g->offsets[i], (g->noffsets - i) * sizeof *g->offsets);
    g->offsets[i] = *v;
    g->offsets[i].topic = tp;
    g->offsets[i].metadata = md;
    g->noffsets++;
    return 0;
}

void br_grp_offsets_free(struct grp_group *g)
{
    for (size_t i = 0; i < g->noffsets; i++) {
        offset_clear(&g->offsets[i]);
    }
    kp_free(g->offsets);
    g->offsets = NULL;
    g->noffsets = 0;
    g->offsets_cap = 0;
    for (size_t i = 0; i < g->npcommits; i++) {
        offset_clear(&g->pcommits[i].v);
    }
    kp_free(g->pcommits);
    g->pcommits = NULL;
    g->npcommits = 0;
    g->pcommits_cap = 0;
}

bool br_grp_has_offsets(const struct grp_group *g)
{
    return g->noffsets > 0 || g->npcommits > 0;
}

/* ---------------------------------------------------------------- pending commits */

bool br_grp_commit_pending(const struct grp_group *g, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < g->npcommits; i++) {
        const struct grp_offset *v = &g->pcommits[i].v;
        if (v->partition == partition && strcmp(v->topic, topic) == 0) {
            return true;
        }
    }
    return false;
}

/* Room for n more pending offsets in g, so that a commit whose records
 * the log took can always be staged. 0 or COORDINATOR_NOT_AVAILABLE. */
static int pending_reserve(struct grp_group *g, size_t n)
{
    if (n > GRP_MAX_OFFSETS - g->npcommits) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    size_t want = g->npcommits + n;
    if (want <= g->pcommits_cap) {
        return 0;
    }
    size_t cap = g->pcommits_cap == 0 ? 8 : g->pcommits_cap;
    while (cap < want) {
        cap *= 2;
    }
    struct grp_pending_commit *np = kp_realloc(g->pcommits, cap * sizeof *np);
    if (np == NULL) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    g->pcommits = np;
    g->pcommits_cap = cap;
    return 0;
}

/* Stages v (topic and metadata copied) under seq; room was reserved.
 * Returns 0 or KP_E_NOMEM. */
static int pending_add(struct grp_group *g, uint64_t seq, int64_t producer_id, struct kp_str topic,
                       struct kp_str metadata, const struct grp_offset *v)
{
    char *tp = br_grp_dup_kstr(topic);
    char *md = br_grp_dup_kstr(metadata);
    if (tp == NULL || md == NULL || g->npcommits >= g->pcommits_cap) {
        kp_free(tp);
        kp_free(md);
        return KP_E_NOMEM;
    }
    struct grp_pending_commit *pc = &g->pcommits[g->npcommits++];
    pc->seq = seq;
    pc->producer_id = producer_id;
    pc->v = *v;
    pc->v.topic = tp;
    pc->v.metadata = md;
    return 0;
}

int br_grp_offset_stage_txn(struct grp_group *g, int64_t producer_id, struct kp_str topic,
                            struct kp_str metadata, const struct grp_offset *v)
{
    if (pending_reserve(g, 1) != 0) {
        return KP_E_NOMEM;
    }
    return pending_add(g, 0, producer_id, topic, metadata, v);
}

/* A pending offset's end: committed (commit) unless the partition's
 * committed offset came from a later record (Kafka's onOffsetCommitAppend:
 * a commit whose record is older than the committed one's completed after
 * it and is not kept), then freed. 1 when committed. */
static size_t pending_end(struct grp_group *g, struct grp_pending_commit *pc, bool commit)
{
    size_t committed = 0;
    struct kp_str topic = kp_str_c(pc->v.topic);
    const struct grp_offset *cur = br_grp_offset_find(g, topic, pc->v.partition);
    if (commit && (cur == NULL || cur->log_offset < pc->v.log_offset)) {
        if (br_grp_offset_set(g, topic, kp_str_c(pc->v.metadata), &pc->v) != 0) {
            br_warn("group %s: out of memory committing an offset of %s-%" PRId32, g->id,
                    pc->v.topic, pc->v.partition);
        } else {
            committed = 1;
        }
    }
    offset_clear(&pc->v);
    return committed;
}

size_t br_grp_commit_settle(struct br_groups *gs, const char *group_id, size_t len, uint64_t seq,
                            bool ok)
{
    struct grp_group *g = gs != NULL && seq != 0 ? br_grp_find(gs, group_id, len) : NULL;
    if (g == NULL) {
        return 0;
    }
    size_t committed = 0;
    size_t keep = 0;
    for (size_t i = 0; i < g->npcommits; i++) {
        struct grp_pending_commit *pc = &g->pcommits[i];
        if (pc->seq != seq) {
            g->pcommits[keep++] = *pc;
            continue;
        }
        if (pc->producer_id >= 0 && ok) {
            /* replicated: it waits for its transaction's marker now */
            pc->seq = 0;
            g->pcommits[keep++] = *pc;
            continue;
        }
        committed += pending_end(g, pc, ok);
    }
    g->npcommits = keep;
    return committed;
}

/* Moves g's pending offsets of producer_id into its committed ones
 * (commit) or drops them. Returns how many were committed. */
static size_t txn_complete_group(struct grp_group *g, int64_t producer_id, bool commit)
{
    size_t committed = 0;
    size_t keep = 0;
    for (size_t i = 0; i < g->npcommits; i++) {
        struct grp_pending_commit *pc = &g->pcommits[i];
        if (pc->producer_id != producer_id) {
            g->pcommits[keep++] = *pc;
            continue;
        }
        committed += pending_end(g, pc, commit);
    }
    g->npcommits = keep;
    return committed;
}

size_t br_grp_txn_complete(struct br_groups *gs, int32_t partitions, int32_t index,
                           int64_t producer_id, bool commit)
{
    size_t committed = 0;
    for (struct grp_group *g = gs != NULL ? gs->first : NULL; g != NULL; g = g->next) {
        if (g->npcommits > 0 && br_group_partition_for(g->id, g->id_len, partitions) == index) {
            committed += txn_complete_group(g, producer_id, commit);
        }
    }
    return committed;
}

/* What Kafka 2.0's storeOffsets and storeGroup both answer for an append's
 * outcome; 0: theirs differ (or the outcome passes on as it is). */
static int store_error_common(int append_err)
{
    switch (append_err) {
    case KP_ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case KP_ERR_NOT_ENOUGH_REPLICAS:
    case KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    case KP_ERR_NOT_LEADER_OR_FOLLOWER:
    case KP_ERR_KAFKA_STORAGE_ERROR:
        return KP_ERR_NOT_COORDINATOR;
    default:
        return 0;
    }
}

static bool too_large(int append_err)
{
    return append_err == KP_ERR_MESSAGE_TOO_LARGE || append_err == KP_ERR_RECORD_LIST_TOO_LARGE ||
           append_err == KP_ERR_INVALID_FETCH_SIZE;
}

int br_grp_commit_error(int append_err)
{
    int common = store_error_common(append_err);
    if (common != 0) {
        return common;
    }
    return too_large(append_err) ? KP_ERR_INVALID_COMMIT_OFFSET_SIZE : append_err;
}

int br_grp_store_error(int append_err)
{
    int common = store_error_common(append_err);
    if (common != 0) {
        return common;
    }
    if (append_err == KP_ERR_REQUEST_TIMED_OUT) {
        return KP_ERR_REBALANCE_IN_PROGRESS;
    }
    return too_large(append_err) ? KP_ERR_UNKNOWN_SERVER_ERROR : append_err;
}

static struct kp_str gid(const struct grp_group *g)
{
    struct kp_str s = {g->id, (int32_t)g->id_len};
    return s;
}

/* ---------------------------------------------------------------- appending */

/* Records for one group's partition, cut into batches of at most the
 * topic's max.message.bytes. `done` counts the records already in the log:
 * after a failure, exactly the first `done` records were written. With
 * `offsets` (room for every record added), offsets[i] is where the log put
 * record i. */
struct appender {
    struct br_groups *gs;
    struct br_partition *p;
    struct kp_batch_builder bb;
    bool open;
    size_t max;
    int64_t now;
    size_t added; /* records in the open batch */
    size_t done;
    int64_t *offsets; /* NULL: not wanted */
    /* a transaction's records: its producer (-1: none) */
    int64_t producer_id;
    int16_t producer_epoch;
};

static int app_init(struct appender *a, struct br_groups *gs, const struct grp_group *g)
{
    memset(a, 0, sizeof *a);
    a->gs = gs;
    a->producer_id = -1;
    a->producer_epoch = -1;
    a->now = gs->ops->now_wall_ms(gs->ctx);
    int err = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    size_t max = 0;
    a->p = gs->ops->offsets_partition(gs->ctx, g->id, g->id_len, &max, &err);
    if (a->p == NULL) {
        return err != 0 ? err : KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (a->p->log == NULL) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    a->max = max > KP_BATCH_HEADER_SIZE ? max : (size_t)1 << 20;
    return 0;
}

static int app_flush(struct appender *a)
{
    if (!a->open) {
        return 0;
    }
    int err = 0;
    if (a->added > 0) {
        struct kp_writer w;
        kp_wr_init(&w, (size_t)INT32_MAX);
        err = kp_batch_builder_finish(&a->bb, &w);
        struct br_append app;
        if (err == 0) {
            /* no producer id: no sequence to refuse it */
            err = br_partition_append_leader(a->p, w.buf, w.len, a->now, &app);
            if (err != 0) {
                br_error("append to %s-%" PRId32 " failed: %s", BR_OFFSETS_TOPIC, a->p->index,
                         err < 0 ? kp_err_str(err) : kp_err_name(err));
            }
        }
        kp_wr_free(&w);
        if (err == 0) {
            for (size_t i = 0; a->offsets != NULL && i < a->added; i++) {
                a->offsets[a->done + i] = app.base + (int64_t)i;
            }
            a->done += a->added;
            a->added = 0;
        }
    }
    kp_batch_builder_free(&a->bb);
    a->open = false;
    if (err > 0) {
        return br_grp_commit_error(err);
    }
    return err != 0 ? KP_ERR_COORDINATOR_NOT_AVAILABLE : 0;
}

static int app_add(struct appender *a, struct kp_bytes key, struct kp_bytes value)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!a->open) {
            /* a transaction's records: a transactional batch of its
             * producer, without a sequence (Kafka's storeOffsets writes
             * them as the coordinator, not as the client) */
            int err = kp_batch_builder_init(&a->bb, KP_CODEC_NONE, 0, a->now, a->producer_id,
                                            a->producer_epoch, -1, a->max);
            if (err != 0) {
                kp_batch_builder_free(&a->bb);
                return KP_ERR_COORDINATOR_NOT_AVAILABLE;
            }
            kp_batch_builder_set_flags(&a->bb, a->producer_id >= 0, false);
            a->open = true;
            a->added = 0;
        }
        int err = kp_batch_builder_add(&a->bb, KP_OFFSET_DELTA_AUTO, a->now, key, value, NULL, 0);
        if (err == 0) {
            a->added++;
            return 0;
        }
        if (err != KP_E_TOO_LARGE || a->added == 0) {
            /* a record that fits no batch at all */
            return err == KP_E_TOO_LARGE ? KP_ERR_INVALID_COMMIT_OFFSET_SIZE
                                         : KP_ERR_COORDINATOR_NOT_AVAILABLE;
        }
        err = app_flush(a);
        if (err != 0) {
            return err;
        }
    }
    return KP_ERR_COORDINATOR_NOT_AVAILABLE;
}

static void app_free(struct appender *a)
{
    if (a->open) {
        kp_batch_builder_free(&a->bb);
        a->open = false;
    }
}

static struct kp_bytes wr_bytes(const struct kp_writer *w, size_t from, size_t to)
{
    struct kp_bytes b = {w->buf + from, (int32_t)(to - from)};
    return b;
}

/* Appends g's metadata record through a (initialized): 0, a Kafka error
 * (the commit mapping of app_flush) or a negative one. */
static int append_group_record(struct appender *a, const struct grp_group *g)
{
    struct kp_writer w;
    kp_wr_init(&w, (size_t)INT32_MAX / 2);
    br_grp_enc_group_key(&w, gid(g));
    size_t kend = w.len;
    br_grp_enc_group_value(&w, g, a->now);
    int err = w.err;
    if (err == 0) {
        err = app_add(a, wr_bytes(&w, 0, kend), wr_bytes(&w, kend, w.len));
    }
    if (err == 0) {
        err = app_flush(a);
    }
    kp_wr_free(&w);
    return err;
}

void br_grp_store_group(struct br_groups *gs, struct grp_group *g)
{
    struct appender a;
    int err = app_init(&a, gs, g);
    if (err == 0) {
        err = append_group_record(&a, g);
    }
    app_free(&a);
    if (err != 0) {
        br_warn("group %s: storing the group metadata failed: %s", g->id,
                err < 0 ? kp_err_str(err) : kp_err_name(err));
    }
}

int br_grp_store_generation(struct br_groups *gs, struct grp_group *g, uint64_t *seq)
{
    *seq = 0;
    struct appender a;
    int err = app_init(&a, gs, g);
    if (err == 0 && gs->ops->acks_all_check != NULL) {
        err = gs->ops->acks_all_check(gs->ctx, a.p);
        err = err != 0 ? br_grp_store_error(err) : 0;
    }
    if (err == 0) {
        err = append_group_record(&a, g);
        if (err == KP_ERR_INVALID_COMMIT_OFFSET_SIZE || err < 0) {
            /* a record too large for the partition (storeGroup's
             * MESSAGE_TOO_LARGE), or no memory to build it */
            err = KP_ERR_UNKNOWN_SERVER_ERROR;
        }
    }
    app_free(&a);
    if (err != 0) {
        br_warn("group %s: storing generation %" PRId32 " failed: %s", g->id, g->generation,
                kp_err_name(err));
        return err;
    }
    *seq = ++gs->commit_seq;
    return 0;
}

int br_grp_store_tombstones(struct br_groups *gs, struct grp_group *g)
{
    struct appender a;
    int err = app_init(&a, gs, g);
    struct kp_writer w;
    kp_wr_init(&w, (size_t)INT32_MAX / 2);
    for (size_t i = 0; i < g->noffsets && err == 0; i++) {
        kp_wr_reset(&w);
        const struct grp_offset *o = &g->offsets[i];
        br_grp_enc_offset_key(&w, gid(g), kp_str_c(o->topic), o->partition);
        err = w.err != 0 ? KP_ERR_COORDINATOR_NOT_AVAILABLE
                         : app_add(&a, wr_bytes(&w, 0, w.len), KP_BYTES_NULL);
    }
    if (err == 0) {
        kp_wr_reset(&w);
        br_grp_enc_group_key(&w, gid(g));
        err = w.err != 0 ? KP_ERR_COORDINATOR_NOT_AVAILABLE
                         : app_add(&a, wr_bytes(&w, 0, w.len), KP_BYTES_NULL);
    }
    if (err == 0) {
        err = app_flush(&a);
    }
    kp_wr_free(&w);
    app_free(&a);
    return err;
}

/* ---------------------------------------------------------------- commits */

static bool commit_metadata_fits(const struct br_groups *gs, const struct grp_commit *c)
{
    return c->metadata.len <= gs->cfg.offset_metadata_max_bytes;
}

int br_grp_offsets_store(struct br_groups *gs, struct grp_group *g, int top, int64_t retention_ms,
                         int64_t producer_id, int16_t producer_epoch, struct grp_commit *items,
                         size_t n, uint64_t *seq)
{
    *seq = 0;
    struct appender a;
    memset(&a, 0, sizeof a);
    if (top == 0) {
        top = app_init(&a, gs, g);
        a.producer_id = producer_id;
        a.producer_epoch = producer_epoch;
    }
    if (top == 0) {
        /* every record the log takes can be staged */
        top = pending_reserve(g, n);
    }
    int64_t now = gs->ops->now_wall_ms(gs->ctx);
    struct grp_offset *vals = kp_calloc(n == 0 ? 1 : n, sizeof *vals);
    size_t *added = kp_calloc(n == 0 ? 1 : n, sizeof *added);
    int64_t *at = kp_calloc(n == 0 ? 1 : n, sizeof *at);
    if (top == 0 && (vals == NULL || added == NULL || at == NULL)) {
        top = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    a.offsets = at;
    struct kp_writer w;
    kp_wr_init(&w, (size_t)INT32_MAX / 2);
    /* added[0..nadded) went into the appender, in this order */
    size_t nadded = 0;
    int fail = 0; /* the error for every record not written */
    if (top == 0 && gs->ops->acks_all_check != NULL) {
        fail = gs->ops->acks_all_check(gs->ctx, a.p);
        fail = fail != 0 ? br_grp_commit_error(fail) : 0;
    }
    for (size_t k = 0; k < n; k++) {
        struct grp_commit *c = &items[k];
        if (top != 0) {
            c->err = top;
            continue;
        }
        if (c->err != 0) {
            continue;
        }
        if (!commit_metadata_fits(gs, c)) {
            c->err = KP_ERR_OFFSET_METADATA_TOO_LARGE;
            continue;
        }
        if (fail != 0) {
            c->err = fail;
            continue;
        }
        struct grp_offset *v = &vals[k];
        v->partition = c->partition;
        v->offset = c->offset;
        v->leader_epoch = c->leader_epoch;
        v->commit_ts = c->commit_ts != -1 ? c->commit_ts : now;
        v->expire_ts = retention_ms != -1 ? now + retention_ms : -1;
        struct kp_str md = c->metadata.len >= 0 ? c->metadata : kp_str_c("");
        kp_wr_reset(&w);
        br_grp_enc_offset_key(&w, gid(g), c->topic, c->partition);
        size_t kend = w.len;
        br_grp_enc_offset_value(&w, v, md);
        int e = w.err != 0 ? KP_ERR_INVALID_COMMIT_OFFSET_SIZE
                           : app_add(&a, wr_bytes(&w, 0, kend), wr_bytes(&w, kend, w.len));
        if (e == KP_ERR_INVALID_COMMIT_OFFSET_SIZE) {
            c->err = e;
            continue;
        }
        if (e != 0) {
            fail = e;
            c->err = e;
            continue;
        }
        added[nadded++] = k;
    }
    kp_wr_free(&w);
    if (top == 0 && fail == 0) {
        fail = app_flush(&a);
    }
    app_free(&a);
    /* what the log took is pending until it is replicated (Kafka's
     * prepareOffsetCommit); the rest failed */
    uint64_t s = a.done > 0 ? ++gs->commit_seq : 0;
    for (size_t k = 0; k < nadded; k++) {
        struct grp_commit *c = &items[added[k]];
        if (k >= a.done) {
            c->err = fail != 0 ? fail : KP_ERR_COORDINATOR_NOT_AVAILABLE;
            continue;
        }
        struct kp_str md = c->metadata.len >= 0 ? c->metadata : kp_str_c("");
        struct grp_offset *v = &vals[added[k]];
        v->log_offset = at[k];
        if (pending_add(g, s, producer_id, c->topic, md, v) != 0) {
            br_warn("group %s: out of memory staging a committed offset", g->id);
            c->err = KP_ERR_COORDINATOR_NOT_AVAILABLE;
        } else {
            c->err = 0;
        }
    }
    *seq = s;
    kp_free(vals);
    kp_free(added);
    kp_free(at);
    return 0;
}

/* ---------------------------------------------------------------- expiry */

/* Writes tombstones for the Empty group's expired offsets and drops those
 * that made it into the log. Returns how many went. */
size_t br_grp_expire_offsets_of(struct br_groups *gs, struct grp_group *g, int64_t now,
                                int64_t retention)
{
    bool known_empty_since = g->protocol_type != NULL && g->state_ts >= 0;
    size_t *idx = kp_calloc(g->noffsets, sizeof *idx);
    if (idx == NULL) {
        return 0;
    }
    size_t nexp = 0;
    for (size_t i = 0; i < g->noffsets; i++) {
        const struct grp_offset *o = &g->offsets[i];
        int64_t base = known_empty_since ? g->state_ts : o->commit_ts;
        /* one with a commit in flight stays (Kafka's removeExpiredOffsets):
         * its tombstone would come after that commit's record */
        if (br_grp_commit_pending(g, o->topic, o->partition)) {
            continue;
        }
        if (o->expire_ts >= 0 ? now >= o->expire_ts : now - base >= retention) {
            idx[nexp++] = i;
        }
    }
    if (nexp == 0) {
        kp_free(idx);
        return 0;
    }
    struct appender a;
    int err = app_init(&a, gs, g);
    struct kp_writer w;
    kp_wr_init(&w, (size_t)INT32_MAX / 2);
    for (size_t k = 0; k < nexp && err == 0; k++) {
        const struct grp_offset *o = &g->offsets[idx[k]];
        kp_wr_reset(&w);
        br_grp_enc_offset_key(&w, gid(g), kp_str_c(o->topic), o->partition);
        err = w.err != 0 ? KP_ERR_COORDINATOR_NOT_AVAILABLE
                         : app_add(&a, wr_bytes(&w, 0, w.len), KP_BYTES_NULL);
    }
    kp_wr_free(&w);
    if (err == 0) {
        err = app_flush(&a);
    }
    app_free(&a);
    if (err != 0) {
        br_warn("group %s: writing tombstones for expired offsets failed: %s", g->id,
                kp_err_name(err));
    }
    /* the first a.done of them are in the log: those go, in order */
    size_t gone = a.done < nexp ? a.done : nexp;
    size_t keep = 0;
    size_t k = 0;
    for (size_t i = 0; i < g->noffsets; i++) {
        if (k < gone && idx[k] == i) {
            offset_clear(&g->offsets[i]);
            k++;
            continue;
        }
        g->offsets[keep++] = g->offsets[i];
    }
    g->noffsets = keep;
    kp_free(idx);
    if (gone > 0) {
        br_info("group %s: %zu committed offset(s) expired", g->id, gone);
    }
    return gone;
}
