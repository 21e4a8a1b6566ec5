/*
 * samsa-broker: OffsetCommit and OffsetFetch on the wire, and the
 * coordinator's way to __consumer_offsets (see group.h): the topic created
 * on first use with its own settings, the partition a group's records go
 * to, loading every partition at start-up, the lag of a group's commits.
 * The records and the cache are the coordinator's (group/offsets.c).
 * @locality reactor thread
 */
#define _GNU_SOURCE

#include "server/group.h"

#include "base/logging.h"
#include "group/group.h"
#include "server/request.h"
#include "server/topic_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Kafka's offsets.topic.segment.bytes default, and the topic's settings. */
#define OFFSETS_SEGMENT_BYTES "104857600"

/* ---------------------------------------------------------------- the topic */

static struct br_topic *offsets_topic(struct br_broker *b)
{
    return br_broker_find_topic(b, kp_str_c(BR_OFFSETS_TOPIC));
}

int br_groups_ensure_offsets_topic(struct br_broker *b)
{
    if (offsets_topic(b) != NULL) {
        return 0;
    }
    if (b->cluster) {
        /* the coordinators of a cluster come with the replicated offsets
         * topic, not yet there */
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
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

struct br_partition *br_group_offsets_partition(void *ctx, const char *id, size_t len,
                                                size_t *max_batch, int *err)
{
    struct br_broker *b = ctx;
    *err = br_groups_ensure_offsets_topic(b);
    if (*err != 0) {
        return NULL;
    }
    struct br_topic *t = offsets_topic(b);
    if (t == NULL || t->npartitions <= 0) {
        *err = KP_ERR_COORDINATOR_NOT_AVAILABLE;
        return NULL;
    }
    struct br_partition *p = &t->partitions[br_group_partition_for(id, len, t->npartitions)];
    int32_t mmb = t->config.max_message_bytes;
    *max_batch = mmb > 0 ? (size_t)mmb : 0;
    return p;
}

int br_group_offsets_load(struct br_broker *b)
{
    struct br_topic *t = offsets_topic(b);
    if (t == NULL) {
        return 0;
    }
    struct grp_load_stats st = {0, 0};
    for (int32_t i = 0; i < t->npartitions; i++) {
        int err = br_grp_load_partition(b->groups, &t->partitions[i], &st);
        if (err != 0) {
            return err;
        }
    }
    size_t noffsets = 0;
    for (struct grp_group *g = b->groups->first; g != NULL; g = g->next) {
        noffsets += g->noffsets;
    }
    br_info("loaded %zu group(s) with %zu committed offset(s) from %s (%zu record(s), %zu "
            "skipped)",
            b->groups->ngroups, noffsets, BR_OFFSETS_TOPIC, st.records, st.skipped);
    return 0;
}

/* ---------------------------------------------------------------- OffsetCommit */

static void *arena_array(struct kp_arena *a, size_t n, size_t size)
{
    return kp_arena_alloc(a, (n == 0 ? 1 : n) * size);
}

static bool partition_exists(struct br_broker *b, struct kp_str topic, int32_t partition)
{
    struct br_topic *t = br_broker_find_topic(b, topic);
    return t != NULL && partition >= 0 && partition < t->npartitions;
}

static int offset_commit(struct br_req *r, struct grp_commit *items)
{
    const struct kp_OffsetCommitRequest *q = r->body;
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
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            const struct kp_OffsetCommitRequest_OffsetCommitRequestPartition *qp =
                &qt->Partitions.items[j];
            struct grp_commit *c = &items[n++];
            c->topic = qt->Name;
            c->partition = qp->PartitionIndex;
            c->offset = qp->CommittedOffset;
            c->leader_epoch = r->version >= 6 ? qp->CommittedLeaderEpoch : -1;
            c->metadata = qp->CommittedMetadata;
            c->commit_ts = r->version == 1 ? qp->CommitTimestamp : -1;
            c->err = partition_exists(r->b, qt->Name, qp->PartitionIndex)
                         ? 0
                         : KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        }
    }
    int64_t retention = r->version >= 2 && r->version <= 4 ? q->RetentionTimeMs : -1;
    (void)br_grp_commit(r->b->groups, q->GroupId, r->version >= 1 ? q->MemberId : kp_str_c(""),
                        r->version >= 1 ? q->GenerationId : -1, retention, items, n);
    n = 0;
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
            rt->Partitions.items[j].PartitionIndex = qt->Partitions.items[j].PartitionIndex;
            rt->Partitions.items[j].ErrorCode = (int16_t)kp_err_to_wire(items[n++].err);
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
    struct grp_commit *items = kp_calloc(nparts == 0 ? 1 : nparts, sizeof *items);
    int err = items != NULL ? offset_commit(r, items) : KP_E_NOMEM;
    kp_free(items);
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
            fetch_fill(out, p, g != NULL ? br_grp_offset_find(g, qt->Name, p) : NULL);
            if (top != 0) {
                out->ErrorCode = (int16_t)kp_err_to_wire(top);
            }
        }
    }
    return br_respond(r, &resp);
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
        l->topic = br_grp_dup_kstr(kp_str_c(o->topic));
        if (l->topic == NULL) {
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
