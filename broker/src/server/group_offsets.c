/*
 * samsa-broker: committed offsets in __consumer_offsets (see group.h).
 *
 * Records use Kafka's formats (GroupMetadataManager), all big-endian with
 * int16-length strings:
 *
 *   offset commit key v1   int16 1, string group, string topic, int32 partition
 *   offset value v1        int16 1, int64 offset, string metadata,
 *                          int64 commit_timestamp, int64 expire_timestamp
 *   offset value v3        int16 3, int64 offset, int32 leader_epoch,
 *                          string metadata, int64 commit_timestamp
 *   group metadata key v2  int16 2, string group
 *   group value v1         int16 1, string protocol_type, int32 generation,
 *                          nullable string protocol, nullable string leader,
 *                          members[string member_id, string client_id,
 *                          string client_host, int32 rebalance_timeout,
 *                          int32 session_timeout, bytes subscription,
 *                          bytes assignment]
 *   group value v3         int16 3, string protocol_type, int32 generation,
 *                          nullable string protocol, nullable string leader,
 *                          int64 current_state_timestamp, members[string
 *                          member_id, nullable string group_instance_id,
 *                          string client_id, string client_host, int32
 *                          rebalance_timeout, int32 session_timeout, bytes
 *                          subscription, bytes assignment]
 *
 * and, read when loading, the older versions: offset commit key v0 as v1;
 * offset value v0 and v2: int64 offset, string metadata, int64
 * commit_timestamp; group value v2 as v3 without group_instance_id, v1 as
 * v2 without current_state_timestamp, v0 as v1 without rebalance_timeout.
 *
 * A null value is a tombstone (DeleteGroups, expiry). Written are the
 * versions Kafka 2.0 writes (GroupMetadataManager at 2.0.0:
 * CURRENT_OFFSET_VALUE_SCHEMA_VERSION and CURRENT_GROUP_VALUE_SCHEMA_VERSION
 * are both 1), which the tools built for it decode (Burrow 1.2.1 knows
 * group values 0 and 1 only), unless the record holds a field only a later
 * version has: an offset value is v1 (expire_timestamp -1 when the commit
 * asked no retention: Kafka 2.1+ reads that as no expiry of its own) but v3
 * for a commit with a leader epoch (OffsetCommit v6+) and no expiry; a group
 * value is v1 but v3 when a member has a group instance id (JoinGroup v5).
 * A v1 group value has no current_state_timestamp: after a restart the
 * offsets of a group loaded from one expire from their commit time, as in
 * Kafka 2.0 (not from when the group became empty). Every commit request becomes one batch
 * (more when it passes the topic's max.message.bytes), appended with
 * br_log_append to the group's partition; the cache changes only once the
 * batch is in the log. Loading reads values v0-v3 and group values v0-v3
 * (only the protocol type, generation and state time: members are not
 * restored); records that do not decode are skipped and counted. Decoding
 * (br_grp_record_decode) is pure and apart from applying a record to the
 * coordinator's state (br_grp_record_apply), so both can be tested alone.
 * @locality reactor thread
 */
#define _GNU_SOURCE

#include "server/group_internal.h"

#include "base/logging.h"
#include "server/topic_admin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOAD_READ_BYTES (1 << 20)
#define LOAD_MAX_BATCH_BYTES ((size_t)256 << 20)
#define LOAD_MAX_DECOMPRESSED ((size_t)256 << 20)
/* Kafka's offsets.topic.segment.bytes default, and the topic's settings. */
#define OFFSETS_SEGMENT_BYTES "104857600"

/* ---------------------------------------------------------------- the topic */

static struct br_topic *offsets_topic(struct br_groups *gs)
{
    return br_broker_find_topic(gs->b, kp_str_c(BR_OFFSETS_TOPIC));
}

int32_t br_grp_offsets_partitions(struct br_groups *gs)
{
    struct br_topic *t = offsets_topic(gs);
    return t != NULL ? t->npartitions : gs->b->cfg.offsets_topic_num_partitions;
}

int br_grp_offsets_topic_ensure(struct br_groups *gs)
{
    struct br_broker *b = gs->b;
    if (offsets_topic(gs) != NULL) {
        return 0;
    }
    if (br_topic_admin_creating(b, kp_str_c(BR_OFFSETS_TOPIC))) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE; /* until it is made */
    }
    static const struct {
        const char *key;
        const char *value;
    } settings[] = {
        {"cleanup.policy", "compact"},
        {"segment.bytes", OFFSETS_SEGMENT_BYTES},
        {"compression.type", "producer"},
    };
    struct br_kv kvs[sizeof settings / sizeof settings[0]];
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        kvs[i].key = kp_str_c(settings[i].key);
        kvs[i].value = kp_str_c(settings[i].value);
    }
    /* the replication factor is capped by the live brokers: one here */
    const int16_t live_brokers = 1;
    int16_t rf = b->cfg.offsets_topic_replication_factor < live_brokers
                     ? b->cfg.offsets_topic_replication_factor
                     : live_brokers;
    char err[256];
    int e =
        br_broker_create_topic(b, kp_str_c(BR_OFFSETS_TOPIC), b->cfg.offsets_topic_num_partitions,
                               rf, kvs, sizeof kvs / sizeof kvs[0], false, err, sizeof err);
    if (e != 0 && e != KP_ERR_TOPIC_ALREADY_EXISTS) {
        br_error("cannot create %s: %s", BR_OFFSETS_TOPIC, err);
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    br_info("creating %s with %" PRId32 " partition(s), replication factor %d (configured %d)",
            BR_OFFSETS_TOPIC, b->cfg.offsets_topic_num_partitions, rf,
            b->cfg.offsets_topic_replication_factor);
    /* the coordinator is not available until the topic is made, as in
     * Kafka, whose FindCoordinator answers so while it is being created */
    return KP_ERR_COORDINATOR_NOT_AVAILABLE;
}

int br_groups_ensure_offsets_topic(struct br_broker *b)
{
    if (b->groups == NULL) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    return br_grp_offsets_topic_ensure(b->groups);
}

/* The partition of __consumer_offsets that holds the group's records; NULL
 * when the topic is missing. */
static struct br_partition *group_partition(struct br_groups *gs, const char *id, size_t len)
{
    struct br_topic *t = offsets_topic(gs);
    if (t == NULL || t->npartitions <= 0) {
        return NULL;
    }
    return &t->partitions[br_group_partition_for(id, len, t->npartitions)];
}

/* ---------------------------------------------------------------- the cache */

static int off_cmp(const struct grp_offset *o, const char *topic, size_t tlen, int32_t partition)
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

static size_t off_lower_bound(const struct grp_group *g, const char *topic, size_t tlen,
                              int32_t partition)
{
    size_t lo = 0;
    size_t hi = g->noffsets;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (off_cmp(&g->offsets[mid], topic, tlen, partition) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static struct grp_offset *off_find(struct grp_group *g, struct kp_str topic, int32_t partition)
{
    if (topic.len < 0) {
        return NULL;
    }
    size_t i = off_lower_bound(g, topic.ptr, (size_t)topic.len, partition);
    if (i < g->noffsets && off_cmp(&g->offsets[i], topic.ptr, (size_t)topic.len, partition) == 0) {
        return &g->offsets[i];
    }
    return NULL;
}

static void off_clear(struct grp_offset *o)
{
    kp_free(o->topic);
    kp_free(o->metadata);
}

static void off_remove(struct grp_group *g, struct kp_str topic, int32_t partition)
{
    if (topic.len < 0) {
        return;
    }
    size_t i = off_lower_bound(g, topic.ptr, (size_t)topic.len, partition);
    if (i < g->noffsets && off_cmp(&g->offsets[i], topic.ptr, (size_t)topic.len, partition) == 0) {
        off_clear(&g->offsets[i]);
        memmove(&g->offsets[i], &g->offsets[i + 1], (g->noffsets - i - 1) * sizeof *g->offsets);
        g->noffsets--;
    }
}

/* Sets (topic, partition) to v (its topic and metadata are copied). */
static int off_set(struct grp_group *g, struct kp_str topic, struct kp_str metadata,
                   const struct grp_offset *v)
{
    size_t tlen = topic.len > 0 ? (size_t)topic.len : 0;
    size_t mlen = metadata.len > 0 ? (size_t)metadata.len : 0;
    char *md = kp_malloc(mlen + 1);
    if (md == NULL) {
        return KP_E_NOMEM;
    }
    if (mlen > 0) {
        memcpy(md, metadata.ptr, mlen);
    }
    md[mlen] = '\0';
    size_t i = off_lower_bound(g, topic.ptr, tlen, v->partition);
    if (i < g->noffsets && off_cmp(&g->offsets[i], topic.ptr, tlen, v->partition) == 0) {
        struct grp_offset *o = &g->offsets[i];
        kp_free(o->metadata);
        o->metadata = md;
        o->offset = v->offset;
        o->leader_epoch = v->leader_epoch;
        o->commit_ts = v->commit_ts;
        o->expire_ts = v->expire_ts;
        return 0;
    }
    if (g->noffsets >= GRP_MAX_OFFSETS) {
        kp_free(md);
        return KP_E_TOO_LARGE;
    }
    if (g->noffsets == g->offsets_cap) {
        size_t cap = g->offsets_cap == 0 ? 8 : g->offsets_cap * 2;
        struct grp_offset *no = kp_realloc(g->offsets, cap * sizeof *no);
        if (no == NULL) {
            kp_free(md);
            return KP_E_NOMEM;
        }
        g->offsets = no;
        g->offsets_cap = cap;
    }
    char *tp = kp_malloc(tlen + 1);
    if (tp == NULL) {
        kp_free(md);
        return KP_E_NOMEM;
    }
    if (tlen > 0) {
        memcpy(tp, topic.ptr, tlen);
    }
    tp[tlen] = '\0';
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
        off_clear(&g->offsets[i]);
    }
    kp_free(g->offsets);
    g->offsets = NULL;
    g->noffsets = 0;
    g->offsets_cap = 0;
}

/* ---------------------------------------------------------------- records */

static struct kp_str gid(const struct grp_group *g)
{
    struct kp_str s = {g->id, (int32_t)g->id_len};
    return s;
}

void br_grp_enc_offset_key(struct kp_writer *w, struct kp_str group, struct kp_str topic,
                           int32_t partition)
{
    kp_wr_i16(w, GRP_KEY_OFFSET_V1);
    kp_wr_string(w, group);
    kp_wr_string(w, topic);
    kp_wr_i32(w, partition);
}

void br_grp_enc_offset_value(struct kp_writer *w, const struct grp_offset *o,
                             struct kp_str metadata)
{
    /* Kafka 2.0's v1 (GroupMetadataManager.offsetCommitValue), unless the
     * commit carries a leader epoch, which only v3 holds. No expiry asked
     * is an expire_timestamp of -1, which Kafka 2.1+ reads as none. */
    if (o->expire_ts >= 0 || o->leader_epoch < 0) {
        kp_wr_i16(w, 1);
        kp_wr_i64(w, o->offset);
        kp_wr_string(w, metadata);
        kp_wr_i64(w, o->commit_ts);
        kp_wr_i64(w, o->expire_ts >= 0 ? o->expire_ts : -1);
    } else {
        kp_wr_i16(w, 3);
        kp_wr_i64(w, o->offset);
        kp_wr_i32(w, o->leader_epoch);
        kp_wr_string(w, metadata);
        kp_wr_i64(w, o->commit_ts);
    }
}

void br_grp_enc_group_key(struct kp_writer *w, struct kp_str group)
{
    kp_wr_i16(w, GRP_KEY_GROUP_V2);
    kp_wr_string(w, group);
}

static struct kp_str cstr(const char *s)
{
    return kp_str_c(s != NULL ? s : "");
}

int16_t br_grp_group_value_version(const struct grp_group *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->members[i]->instance_id != NULL) {
            return 3;
        }
    }
    return 1;
}

void br_grp_enc_group_value(struct kp_writer *w, const struct grp_group *g)
{
    int16_t version = br_grp_group_value_version(g);
    kp_wr_i16(w, version);
    kp_wr_string(w, cstr(g->protocol_type));
    kp_wr_i32(w, g->generation);
    kp_wr_string(w, g->protocol != NULL ? kp_str_c(g->protocol) : KP_STR_NULL);
    kp_wr_string(w, g->leader != NULL ? kp_str_c(g->leader->id) : KP_STR_NULL);
    if (version >= 2) {
        kp_wr_i64(w, g->state_ts >= 0 ? g->state_ts : br_now_wall_ms());
    }
    kp_wr_array_len(w, false, (int32_t)g->nmembers);
    for (size_t i = 0; i < g->nmembers; i++) {
        const struct grp_member *m = g->members[i];
        struct kp_bytes sub = {(const uint8_t *)"", 0};
        for (size_t k = 0; k < m->nprotocols && g->protocol != NULL; k++) {
            if (strcmp(m->protocols[k].name, g->protocol) == 0) {
                sub.ptr = m->protocols[k].metadata;
                sub.len = m->protocols[k].metadata_len;
            }
        }
        struct kp_bytes as = {m->assignment != NULL ? m->assignment : (const uint8_t *)"",
                              m->assignment != NULL ? m->assignment_len : 0};
        kp_wr_string(w, cstr(m->id));
        if (version >= 3) {
            kp_wr_string(w, m->instance_id != NULL ? kp_str_c(m->instance_id) : KP_STR_NULL);
        }
        kp_wr_string(w, cstr(m->client_id));
        kp_wr_string(w, cstr(m->client_host));
        kp_wr_i32(w, m->rebalance_timeout_ms);
        kp_wr_i32(w, m->session_timeout_ms);
        kp_wr_bytes(w, sub);
        kp_wr_bytes(w, as);
    }
}

/* ---------------------------------------------------------------- appending */

/* Records for one group's partition, cut into batches of at most the
 * topic's max.message.bytes. `done` counts the records already in the log:
 * after a failure, exactly the first `done` records were written. */
struct appender {
    struct br_groups *gs;
    struct br_partition *p;
    struct kp_batch_builder bb;
    bool open;
    size_t max;
    int64_t now;
    size_t added; /* records in the open batch */
    size_t done;
};

static int app_init(struct appender *a, struct br_groups *gs, const struct grp_group *g)
{
    memset(a, 0, sizeof *a);
    a->gs = gs;
    a->now = br_now_wall_ms();
    int err = br_grp_offsets_topic_ensure(gs);
    if (err != 0) {
        return err;
    }
    a->p = group_partition(gs, g->id, g->id_len);
    if (a->p == NULL || a->p->log == NULL) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    int32_t mmb = a->p->topic->config.max_message_bytes;
    a->max = mmb > KP_BATCH_HEADER_SIZE ? (size_t)mmb : (size_t)1 << 20;
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
            a->done += a->added;
            a->added = 0;
        }
    }
    kp_batch_builder_free(&a->bb);
    a->open = false;
    return err != 0 ? KP_ERR_COORDINATOR_NOT_AVAILABLE : 0;
}

static int app_add(struct appender *a, struct kp_bytes key, struct kp_bytes value)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!a->open) {
            int err = kp_batch_builder_init(&a->bb, KP_CODEC_NONE, 0, a->now, -1, -1, -1, a->max);
            if (err != 0) {
                kp_batch_builder_free(&a->bb);
                return KP_ERR_COORDINATOR_NOT_AVAILABLE;
            }
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

void br_grp_store_group(struct br_groups *gs, struct grp_group *g)
{
    struct appender a;
    int err = app_init(&a, gs, g);
    if (err == 0) {
        struct kp_writer w;
        kp_wr_init(&w, (size_t)INT32_MAX / 2);
        br_grp_enc_group_key(&w, gid(g));
        size_t kend = w.len;
        br_grp_enc_group_value(&w, g);
        if (w.err != 0) {
            err = w.err;
        } else {
            err = app_add(&a, wr_bytes(&w, 0, kend), wr_bytes(&w, kend, w.len));
            if (err == 0) {
                err = app_flush(&a);
            }
        }
        kp_wr_free(&w);
    }
    app_free(&a);
    if (err != 0) {
        br_warn("group %s: storing the group metadata failed: %s", g->id, kp_err_name(err));
    }
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

/* ---------------------------------------------------------------- OffsetCommit */

static void *arena_array(struct kp_arena *a, size_t n, size_t size)
{
    return kp_arena_alloc(a, (n == 0 ? 1 : n) * size);
}

struct commit_item {
    const struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *qt;
    const struct kp_OffsetCommitRequest_OffsetCommitRequestPartition *qp;
    struct kp_OffsetCommitResponse_OffsetCommitResponsePartition *out;
    struct grp_offset v;
};

static bool partition_exists(struct br_broker *b, struct kp_str topic, int32_t partition)
{
    struct br_topic *t = br_broker_find_topic(b, topic);
    return t != NULL && partition >= 0 && partition < t->npartitions;
}

/* items[] and added[] have room for every partition of the request. */
static int offset_commit(struct br_req *r, struct commit_item *items, struct commit_item **added)
{
    const struct kp_OffsetCommitRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    int32_t generation = r->version >= 1 ? q->GenerationId : -1;
    struct kp_str member = r->version >= 1 ? q->MemberId : kp_str_c("");
    struct kp_OffsetCommitResponse resp;
    kp_OffsetCommitResponse_init(&resp);
    resp.Topics.items = arena_array(r->arena, (size_t)q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = q->Topics.count;
    size_t n = 0;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *qt = &q->Topics.items[i];
        struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items =
            arena_array(r->arena, (size_t)qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            items[n].qt = qt;
            items[n].qp = &qt->Partitions.items[j];
            items[n].out = &rt->Partitions.items[j];
            items[n].out->PartitionIndex = items[n].qp->PartitionIndex;
            items[n].out->ErrorCode = KP_ERR_NONE;
            n++;
        }
    }

    int top = 0;
    struct grp_group *g = NULL;
    if (q->GroupId.len < 0) {
        top = KP_ERR_INVALID_GROUP_ID;
    } else {
        g = br_grp_find(gs, q->GroupId.ptr, (size_t)q->GroupId.len);
        if (g == NULL && generation < 0) {
            /* a group the coordinator does not know only stores offsets */
            g = br_grp_get_or_create(gs, q->GroupId.ptr, (size_t)q->GroupId.len);
            if (g == NULL) {
                top = KP_ERR_COORDINATOR_NOT_AVAILABLE;
            }
        } else if (g == NULL) {
            top = KP_ERR_ILLEGAL_GENERATION;
        }
    }
    if (top == 0) {
        top = br_grp_commit_check(gs, g, member, generation);
    }
    struct appender a;
    memset(&a, 0, sizeof a);
    if (top == 0) {
        top = app_init(&a, gs, g);
    }
    int64_t now = br_now_wall_ms();
    int32_t max_md = r->b->cfg.offset_metadata_max_bytes;
    struct kp_writer w;
    kp_wr_init(&w, (size_t)INT32_MAX / 2);
    /* added[0..nadded) went into the appender, in this order */
    size_t nadded = 0;
    int fail = 0; /* the error for every record not written */
    for (size_t k = 0; k < n; k++) {
        struct commit_item *it = &items[k];
        const struct kp_OffsetCommitRequest_OffsetCommitRequestPartition *qp = it->qp;
        if (top != 0) {
            it->out->ErrorCode = (int16_t)kp_err_to_wire(top);
            continue;
        }
        if (!partition_exists(r->b, it->qt->Name, qp->PartitionIndex)) {
            it->out->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        if (qp->CommittedMetadata.len > max_md) {
            it->out->ErrorCode = KP_ERR_OFFSET_METADATA_TOO_LARGE;
            continue;
        }
        if (fail != 0) {
            it->out->ErrorCode = (int16_t)kp_err_to_wire(fail);
            continue;
        }
        struct grp_offset *v = &it->v;
        v->partition = qp->PartitionIndex;
        v->offset = qp->CommittedOffset;
        v->leader_epoch = r->version >= 6 ? qp->CommittedLeaderEpoch : -1;
        v->commit_ts = r->version == 1 && qp->CommitTimestamp != -1 ? qp->CommitTimestamp : now;
        v->expire_ts = r->version >= 2 && r->version <= 4 && q->RetentionTimeMs != -1
                           ? now + q->RetentionTimeMs
                           : -1;
        struct kp_str md = qp->CommittedMetadata.len >= 0 ? qp->CommittedMetadata : kp_str_c("");
        kp_wr_reset(&w);
        br_grp_enc_offset_key(&w, gid(g), it->qt->Name, qp->PartitionIndex);
        size_t kend = w.len;
        br_grp_enc_offset_value(&w, v, md);
        int e = w.err != 0 ? KP_ERR_INVALID_COMMIT_OFFSET_SIZE
                           : app_add(&a, wr_bytes(&w, 0, kend), wr_bytes(&w, kend, w.len));
        if (e == KP_ERR_INVALID_COMMIT_OFFSET_SIZE) {
            it->out->ErrorCode = (int16_t)e;
            continue;
        }
        if (e != 0) {
            fail = e;
            it->out->ErrorCode = (int16_t)kp_err_to_wire(e);
            continue;
        }
        added[nadded++] = it;
    }
    kp_wr_free(&w);
    if (top == 0 && fail == 0) {
        fail = app_flush(&a);
    }
    app_free(&a);
    /* the cache follows the log: only what was written counts */
    for (size_t k = 0; k < nadded; k++) {
        struct commit_item *it = added[k];
        if (k >= a.done) {
            it->out->ErrorCode =
                (int16_t)kp_err_to_wire(fail != 0 ? fail : KP_ERR_COORDINATOR_NOT_AVAILABLE);
            continue;
        }
        struct kp_str md =
            it->qp->CommittedMetadata.len >= 0 ? it->qp->CommittedMetadata : kp_str_c("");
        if (off_set(g, it->qt->Name, md, &it->v) != 0) {
            br_warn("group %s: out of memory caching a committed offset", g->id);
            it->out->ErrorCode = KP_ERR_COORDINATOR_NOT_AVAILABLE;
        }
    }
    return br_respond(r, &resp);
}

int br_h_offset_commit(struct br_req *r)
{
    const struct kp_OffsetCommitRequest *q = r->body;
    size_t nparts = 0;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        nparts += (size_t)q->Topics.items[i].Partitions.count;
    }
    /* the decoded request bounds nparts by the bytes of the frame */
    struct commit_item *items = kp_calloc(nparts == 0 ? 1 : nparts, sizeof *items);
    struct commit_item **added = kp_calloc(nparts == 0 ? 1 : nparts, sizeof(struct commit_item *));
    int err = items != NULL && added != NULL ? offset_commit(r, items, added) : KP_E_NOMEM;
    kp_free(items);
    kp_free(added);
    return err;
}

/* ---------------------------------------------------------------- OffsetFetch */

static void fetch_fill(struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *out,
                       int32_t partition, const struct grp_offset *o)
{
    out->PartitionIndex = partition;
    out->ErrorCode = KP_ERR_NONE;
    out->CommittedOffset = o != NULL ? o->offset : -1;
    out->CommittedLeaderEpoch = o != NULL ? o->leader_epoch : -1;
    out->Metadata = o != NULL ? kp_str_c(o->metadata) : kp_str_c("");
}

/* Topics = null (v2+): every partition the group committed, by topic. */
static int fetch_all(struct kp_arena *a, struct grp_group *g, struct kp_OffsetFetchResponse *resp)
{
    size_t ntopics = 0;
    for (size_t i = 0; g != NULL && i < g->noffsets; i++) {
        if (i == 0 || strcmp(g->offsets[i].topic, g->offsets[i - 1].topic) != 0) {
            ntopics++;
        }
    }
    resp->Topics.items = arena_array(a, ntopics, sizeof *resp->Topics.items);
    if (resp->Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp->Topics.count = (int32_t)ntopics;
    size_t t = 0;
    size_t i = 0;
    while (g != NULL && i < g->noffsets) {
        size_t j = i;
        while (j < g->noffsets && strcmp(g->offsets[j].topic, g->offsets[i].topic) == 0) {
            j++;
        }
        struct kp_OffsetFetchResponse_OffsetFetchResponseTopic *rt = &resp->Topics.items[t++];
        rt->Name = kp_str_c(g->offsets[i].topic);
        rt->Partitions.items = arena_array(a, j - i, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = (int32_t)(j - i);
        for (size_t k = i; k < j; k++) {
            fetch_fill(&rt->Partitions.items[k - i], g->offsets[k].partition, &g->offsets[k]);
        }
        i = j;
    }
    return 0;
}

int br_h_offset_fetch(struct br_req *r)
{
    const struct kp_OffsetFetchRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    struct kp_OffsetFetchResponse resp;
    kp_OffsetFetchResponse_init(&resp);
    resp.ErrorCode = KP_ERR_NONE;
    int top = q->GroupId.len < 0 ? KP_ERR_INVALID_GROUP_ID : KP_ERR_NONE;
    struct grp_group *g =
        q->GroupId.len >= 0 ? br_grp_find(gs, q->GroupId.ptr, (size_t)q->GroupId.len) : NULL;
    if (r->version >= 2 && top != 0) {
        resp.ErrorCode = (int16_t)kp_err_to_wire(top);
        resp.Topics.items = NULL;
        resp.Topics.count = 0;
        return br_respond(r, &resp);
    }
    if (q->Topics.count < 0) {
        int err = fetch_all(r->arena, g, &resp);
        if (err == 0) {
            err = br_respond(r, &resp);
        }
        return err;
    }
    resp.Topics.items = arena_array(r->arena, (size_t)q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_OffsetFetchRequest_OffsetFetchRequestTopic *qt = &q->Topics.items[i];
        struct kp_OffsetFetchResponse_OffsetFetchResponseTopic *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        int32_t np = qt->PartitionIndexes.count > 0 ? qt->PartitionIndexes.count : 0;
        rt->Partitions.items = arena_array(r->arena, (size_t)np, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = np;
        for (int32_t j = 0; j < np; j++) {
            int32_t p = qt->PartitionIndexes.items[j];
            struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *out =
                &rt->Partitions.items[j];
            fetch_fill(out, p, g != NULL ? off_find(g, qt->Name, p) : NULL);
            if (top != 0) {
                out->ErrorCode = (int16_t)kp_err_to_wire(top);
            }
        }
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- expiry */

/* Writes tombstones for the Empty group's expired offsets and drops those
 * that made it into the log. Returns how many went. */
static size_t expire_group(struct br_groups *gs, struct grp_group *g, int64_t now,
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
            off_clear(&g->offsets[i]);
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

/* Kafka 2.1+ (KIP-211): offsets expire only while the group is Empty:
 * at their expire timestamp when the commit set one, else
 * offsets.retention.minutes after the group became empty (after the commit
 * for a group that never had members). An Empty group without offsets or
 * members goes, with a tombstone for its metadata. */
void br_grp_offsets_expire(struct br_groups *gs)
{
    int64_t now = br_now_wall_ms();
    int64_t retention = (int64_t)gs->b->cfg.offsets_retention_minutes * 60000;
    int64_t now_mono = br_now_mono_ms();
    size_t expired_total = 0;
    struct grp_group *next = NULL;
    for (struct grp_group *g = gs->first; g != NULL; g = next) {
        next = g->next;
        if (g->state != GRP_EMPTY) {
            continue;
        }
        if (g->noffsets > 0) {
            expired_total += expire_group(gs, g, now, retention);
        }
        /* pending member ids keep a group alive for their short life */
        bool pending = false;
        for (size_t i = 0; i < g->npending; i++) {
            pending = pending || g->pending[i].deadline_ms > now_mono;
        }
        if (g->noffsets == 0 && g->nmembers == 0 && !pending) {
            if (g->protocol_type != NULL || g->generation > 0) {
                if (br_grp_store_tombstones(gs, g) != 0) {
                    br_warn("group %s: writing its tombstone failed", g->id);
                    continue;
                }
            }
            br_debug("group %s: empty, without offsets: removed", g->id);
            br_grp_remove(gs, g, KP_ERR_UNKNOWN_MEMBER_ID);
        }
    }
    if (expired_total > 0) {
        br_info("%zu committed offset(s) expired", expired_total);
    }
}

/* ---------------------------------------------------------------- loading */

static int copy_str(struct kp_str s, char **out)
{
    size_t n = s.len > 0 ? (size_t)s.len : 0;
    char *c = kp_malloc(n + 1);
    if (c == NULL) {
        return KP_E_NOMEM;
    }
    if (n > 0) {
        memcpy(c, s.ptr, n);
    }
    c[n] = '\0';
    *out = c;
    return 0;
}

struct load_stats {
    size_t records;
    size_t skipped;
};

/* Records the reader's error and its detection site in out. */
static int decode_fail(const struct kp_reader *r, int err, struct grp_record *out)
{
    out->err_file = r->err_file;
    out->err_line = r->err_line;
    return r->err != 0 ? r->err : err;
}

static int decode_offset_value(struct kp_reader *vr, struct grp_record *out)
{
    switch (out->value_version) {
    case 0:
    case 2:
        out->offset = kp_rd_i64(vr);
        out->metadata = kp_rd_string(vr);
        out->commit_ts = kp_rd_i64(vr);
        break;
    case 1:
        out->offset = kp_rd_i64(vr);
        out->metadata = kp_rd_string(vr);
        out->commit_ts = kp_rd_i64(vr);
        out->expire_ts = kp_rd_i64(vr);
        break;
    case 3:
        out->offset = kp_rd_i64(vr);
        out->leader_epoch = kp_rd_i32(vr);
        out->metadata = kp_rd_string(vr);
        out->commit_ts = kp_rd_i64(vr);
        break;
    default:
        kp_rd_fail(vr, KP_E_UNSUPPORTED);
        break;
    }
    return vr->err;
}

static int decode_group_value(struct kp_reader *vr, struct grp_record *out)
{
    if (out->value_version < 0 || out->value_version > 3) {
        kp_rd_fail(vr, KP_E_UNSUPPORTED);
        return vr->err;
    }
    out->protocol_type = kp_rd_string(vr);
    out->generation = kp_rd_i32(vr);
    out->protocol = kp_rd_string(vr);
    out->leader = kp_rd_string(vr);
    if (out->value_version >= 2) {
        out->state_ts = kp_rd_i64(vr);
    }
    if (vr->err == 0) {
        out->members.ptr = vr->buf + vr->off;
        out->members.len = (int32_t)(vr->len - vr->off);
    }
    return vr->err;
}

int br_grp_record_decode(struct kp_bytes key, struct kp_bytes value, struct grp_record *out)
{
    memset(out, 0, sizeof *out);
    out->value_version = -1;
    out->group = KP_STR_NULL;
    out->topic = KP_STR_NULL;
    out->partition = -1;
    out->leader_epoch = -1;
    out->metadata = KP_STR_NULL;
    out->expire_ts = -1;
    out->protocol_type = KP_STR_NULL;
    out->protocol = KP_STR_NULL;
    out->leader = KP_STR_NULL;
    out->state_ts = -1;
    out->members = KP_BYTES_NULL;
    struct kp_reader kr;
    kp_rd_init(&kr, key.ptr, key.len > 0 ? (size_t)key.len : 0);
    if (key.len < 0) {
        kp_rd_fail(&kr, KP_E_CORRUPT); /* a record of this topic always has a key */
        return decode_fail(&kr, KP_E_CORRUPT, out);
    }
    out->key_version = kp_rd_i16(&kr);
    bool offset_key =
        out->key_version == GRP_KEY_OFFSET_V0 || out->key_version == GRP_KEY_OFFSET_V1;
    if (offset_key) {
        out->group = kp_rd_string(&kr);
        out->topic = kp_rd_string(&kr);
        out->partition = kp_rd_i32(&kr);
        if (kr.err == 0 && (out->group.len < 0 || out->topic.len < 0)) {
            kp_rd_fail(&kr, KP_E_CORRUPT);
        }
        /* the cache keeps topics as C strings: a NUL would make "t\0x" the
         * key "t" and break the order of its offsets (no Kafka topic has one) */
        if (kr.err == 0 && out->topic.len > 0 &&
            memchr(out->topic.ptr, '\0', (size_t)out->topic.len) != NULL) {
            kp_rd_fail(&kr, KP_E_CORRUPT);
        }
    } else if (out->key_version == GRP_KEY_GROUP_V2) {
        out->group = kp_rd_string(&kr);
        if (kr.err == 0 && out->group.len < 0) {
            kp_rd_fail(&kr, KP_E_CORRUPT);
        }
    } else {
        kp_rd_fail(&kr, KP_E_UNSUPPORTED);
    }
    if (kr.err != 0) {
        return decode_fail(&kr, kr.err, out);
    }
    if (value.len < 0) {
        return 0; /* a tombstone */
    }
    struct kp_reader vr;
    kp_rd_init(&vr, value.ptr, (size_t)value.len);
    out->value_version = kp_rd_i16(&vr);
    int err = offset_key ? decode_offset_value(&vr, out) : decode_group_value(&vr, out);
    if (err != 0) {
        return decode_fail(&vr, err, out);
    }
    return 0;
}

int br_grp_record_apply(struct br_groups *gs, const struct grp_record *rec)
{
    if (rec->group.len < 0) {
        return 0; /* not a decoded record */
    }
    size_t glen = (size_t)rec->group.len;
    if (rec->key_version != GRP_KEY_GROUP_V2) {
        if (rec->value_version < 0) {
            struct grp_group *g = br_grp_find(gs, rec->group.ptr, glen);
            if (g != NULL) {
                off_remove(g, rec->topic, rec->partition);
            }
            return 0;
        }
        struct grp_offset v;
        memset(&v, 0, sizeof v);
        v.partition = rec->partition;
        v.offset = rec->offset;
        v.leader_epoch = rec->leader_epoch;
        v.commit_ts = rec->commit_ts;
        v.expire_ts = rec->expire_ts;
        struct grp_group *g = br_grp_get_or_create(gs, rec->group.ptr, glen);
        if (g == NULL) {
            return KP_E_NOMEM;
        }
        return off_set(g, rec->topic, rec->metadata, &v);
    }
    if (rec->value_version < 0) {
        struct grp_group *g = br_grp_find(gs, rec->group.ptr, glen);
        if (g != NULL) {
            br_grp_remove(gs, g, KP_ERR_UNKNOWN_MEMBER_ID);
        }
        return 0;
    }
    /* members are not restored: after a restart they rejoin */
    struct grp_group *g = br_grp_get_or_create(gs, rec->group.ptr, glen);
    if (g == NULL) {
        return KP_E_NOMEM;
    }
    char *pt = NULL;
    if (rec->protocol_type.len > 0 && copy_str(rec->protocol_type, &pt) != 0) {
        return KP_E_NOMEM;
    }
    kp_free(g->protocol_type);
    g->protocol_type = pt;
    g->generation = rec->generation;
    g->state_ts = rec->state_ts;
    return 0;
}

/* The smallest member of each group value version, for the count check. */
static size_t member_min_size(int16_t version)
{
    /* strings 2 bytes each, int32 timeouts, bytes 4 each */
    switch (version) {
    case 0:
        return 3 * 2 + 4 + 2 * 4;
    case 1:
    case 2:
        return 3 * 2 + 2 * 4 + 2 * 4;
    default:
        return 4 * 2 + 2 * 4 + 2 * 4;
    }
}

int br_grp_members_begin(const struct grp_record *rec, struct grp_member_iter *it)
{
    memset(it, 0, sizeof *it);
    it->version = rec->value_version;
    kp_rd_init(&it->r, rec->members.ptr, rec->members.len > 0 ? (size_t)rec->members.len : 0);
    if (rec->key_version != GRP_KEY_GROUP_V2 || rec->value_version < 0 || rec->members.len < 0) {
        kp_rd_fail(&it->r, KP_E_INVALID_ARG);
        return it->r.err;
    }
    int32_t n =
        kp_rd_array_len(&it->r, false, false, GRP_MAX_MEMBERS, member_min_size(it->version));
    it->left = it->r.err == 0 ? n : 0;
    return it->r.err;
}

int br_grp_members_next(struct grp_member_iter *it, struct grp_record_member *m)
{
    memset(m, 0, sizeof *m);
    if (it->r.err != 0) {
        return it->r.err;
    }
    if (it->left <= 0) {
        return KP_ITER_END;
    }
    m->member_id = kp_rd_string(&it->r);
    m->instance_id = it->version >= 3 ? kp_rd_string(&it->r) : KP_STR_NULL;
    m->client_id = kp_rd_string(&it->r);
    m->client_host = kp_rd_string(&it->r);
    m->rebalance_timeout_ms = it->version >= 1 ? kp_rd_i32(&it->r) : 0;
    m->session_timeout_ms = kp_rd_i32(&it->r);
    if (it->version == 0) {
        m->rebalance_timeout_ms = m->session_timeout_ms;
    }
    m->subscription = kp_rd_bytes(&it->r);
    m->assignment = kp_rd_bytes(&it->r);
    if (it->r.err != 0) {
        return it->r.err;
    }
    it->left--;
    return 0;
}

/* Applies one record of the topic; malformed ones are skipped. */
static int load_record(struct br_groups *gs, const struct kp_record *rec, struct load_stats *st)
{
    st->records++;
    struct grp_record r;
    if (br_grp_record_decode(rec->Key, rec->Value, &r) != 0) {
        st->skipped++;
        return 0;
    }
    return br_grp_record_apply(gs, &r);
}

static int read_fully(int fd, uint8_t *buf, size_t len, int64_t pos)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(pos + (int64_t)got));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

static int load_partition(struct br_groups *gs, struct br_partition *p, struct load_stats *st)
{
    int64_t offset = br_log_start_offset(p->log);
    int64_t end = br_log_end_offset(p->log);
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    while (offset < end && rc == 0) {
        struct br_log_slice sl;
        int err = br_log_read(p->log, offset, end, LOAD_READ_BYTES, true, &sl);
        if (err != 0) {
            br_error("%s-%" PRId32 ": reading offset %" PRId64 " failed: %s", BR_OFFSETS_TOPIC,
                     p->index, offset, err < 0 ? kp_err_str(err) : kp_err_name(err));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        if (sl.len <= 0 || sl.next_offset <= offset) {
            br_log_slice_release(&sl);
            break;
        }
        size_t len = (size_t)sl.len;
        if (len > LOAD_MAX_BATCH_BYTES) {
            br_warn("%s-%" PRId32 ": a batch of %zu bytes at offset %" PRId64 " skipped",
                    BR_OFFSETS_TOPIC, p->index, len, offset);
            offset = sl.next_offset;
            br_log_slice_release(&sl);
            continue;
        }
        if (len > cap) {
            uint8_t *nb = kp_realloc(buf, len);
            if (nb == NULL) {
                br_log_slice_release(&sl);
                rc = KP_E_NOMEM;
                break;
            }
            buf = nb;
            cap = len;
        }
        if (read_fully(br_fileref_fd(sl.file), buf, len, sl.file_pos) != 0) {
            br_error("%s-%" PRId32 ": reading %zu bytes at position %" PRId64 " failed: %s",
                     BR_OFFSETS_TOPIC, p->index, len, sl.file_pos, strerror(errno));
            br_log_slice_release(&sl);
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        size_t pos = 0;
        while (pos < len && rc == 0) {
            struct kp_batch_header h;
            size_t size = 0;
            int e = kp_batch_parse_lenient(buf + pos, len - pos, &h, &size);
            if (e != 0) {
                /* the log validated these bytes when it opened: note and go on */
                br_warn("%s-%" PRId32 ": a damaged batch at file position %" PRId64
                        " (%s): the rest of this read is skipped",
                        BR_OFFSETS_TOPIC, p->index, sl.file_pos + (int64_t)pos, kp_err_str(e));
                break;
            }
            if (!kp_batch_is_control(&h)) {
                struct kp_batch_iter it;
                e = kp_batch_iter_init(&it, buf + pos, size, LOAD_MAX_DECOMPRESSED);
                struct kp_record rec;
                while (e == 0 && rc == 0) {
                    e = kp_batch_iter_next(&it, &rec);
                    if (e == 0) {
                        rc = load_record(gs, &rec, st);
                    }
                }
                if (e != 0 && e != KP_ITER_END) {
                    br_warn("%s-%" PRId32 ": records of the batch at offset %" PRId64
                            " do not decode (%s, %s:%d): the rest of it is skipped",
                            BR_OFFSETS_TOPIC, p->index, h.BaseOffset, kp_err_str(e),
                            it.err_file != NULL ? it.err_file : "?", it.err_line);
                }
                kp_batch_iter_free(&it);
            }
            pos += size;
        }
        offset = sl.next_offset;
        br_log_slice_release(&sl);
    }
    kp_free(buf);
    return rc;
}

int br_grp_offsets_load(struct br_groups *gs)
{
    struct br_topic *t = offsets_topic(gs);
    if (t == NULL) {
        return 0;
    }
    struct load_stats st = {0, 0};
    for (int32_t i = 0; i < t->npartitions; i++) {
        int err = load_partition(gs, &t->partitions[i], &st);
        if (err != 0) {
            return err;
        }
    }
    size_t noffsets = 0;
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        noffsets += g->noffsets;
    }
    br_info("loaded %zu group(s) with %zu committed offset(s) from %s (%zu record(s), %zu "
            "skipped)",
            gs->ngroups, noffsets, BR_OFFSETS_TOPIC, st.records, st.skipped);
    return 0;
}

/* ---------------------------------------------------------------- lag */

void br_group_lag_free(struct br_group_lag *lags, size_t n)
{
    if (lags == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        kp_free(lags[i].topic);
    }
    kp_free(lags);
}

int br_group_lag(struct br_broker *b, const char *group_id, size_t len, struct br_group_lag **out,
                 size_t *n)
{
    *out = NULL;
    *n = 0;
    struct br_groups *gs = b->groups;
    struct grp_group *g = gs != NULL ? br_grp_find(gs, group_id, len) : NULL;
    if (g == NULL) {
        return KP_ERR_GROUP_ID_NOT_FOUND;
    }
    if (g->noffsets == 0) {
        return 0;
    }
    struct br_group_lag *lags = kp_calloc(g->noffsets, sizeof *lags);
    if (lags == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < g->noffsets; i++) {
        const struct grp_offset *o = &g->offsets[i];
        struct br_group_lag *l = &lags[i];
        if (copy_str(kp_str_c(o->topic), &l->topic) != 0) {
            br_group_lag_free(lags, i);
            return KP_E_NOMEM;
        }
        l->partition = o->partition;
        l->committed = o->offset;
        l->high_watermark = -1;
        l->lag = -1;
        struct br_topic *t = br_broker_find_topic(b, kp_str_c(o->topic));
        if (t != NULL && o->partition >= 0 && o->partition < t->npartitions) {
            l->high_watermark = t->partitions[o->partition].hw;
            if (o->offset >= 0) {
                l->lag = l->high_watermark > o->offset ? l->high_watermark - o->offset : 0;
            }
        }
    }
    *out = lags;
    *n = g->noffsets;
    return 0;
}
