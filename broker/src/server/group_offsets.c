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

#include "base/clock.h"
#include "base/logging.h"
#include "cluster/metadata_cache.h"
#include "group/group.h"
#include "server/acks_wait.h"
#include "replica/replication.h"
#include "server/request.h"
#include "server/topic_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Kafka's offsets.topic.segment.bytes default, and the topic's settings. */
#define OFFSETS_SEGMENT_BYTES "104857600"

/* ---------------------------------------------------------------- the topic */

static struct br_topic *offsets_topic(struct br_server *b)
{
    return br_rm_find_topic(&b->rm, kp_str_c(BR_OFFSETS_TOPIC));
}

/* The cluster's view of the topic (the controller's UpdateMetadata). */
static const struct br_mc_topic *offsets_mc_topic(const struct br_server *b)
{
    return br_mc_topic(&b->mc, BR_OFFSETS_TOPIC, sizeof BR_OFFSETS_TOPIC - 1);
}

/* The topic's settings, whoever creates it. */
static const struct {
    const char *key;
    const char *value;
} offsets_settings[] = {
    {"cleanup.policy", "compact"},
    {"segment.bytes", OFFSETS_SEGMENT_BYTES},
    {"compression.type", "producer"},
};
#define N_OFFSETS_SETTINGS (sizeof offsets_settings / sizeof offsets_settings[0])

static void offsets_kvs(struct br_kv *kvs)
{
    for (size_t i = 0; i < N_OFFSETS_SETTINGS; i++) {
        kvs[i].key = kp_str_c(offsets_settings[i].key);
        kvs[i].value = kp_str_c(offsets_settings[i].value);
    }
}

/*
 * __consumer_offsets is made as Kafka 2.0's KafkaApis.createInternalTopic
 * makes it: offsets.topic.num.partitions partitions with
 * offsets.topic.replication.factor replicas, and not at all while fewer
 * brokers are alive than that factor (its error says so; FindCoordinator
 * answers COORDINATOR_NOT_AVAILABLE meanwhile). A standalone broker, a
 * cluster of one that never grows, makes it with one replica
 * (b->offsets_topic_rf).
 */
int br_groups_ensure_offsets_topic(struct br_server *b)
{
    struct br_kv kvs[N_OFFSETS_SETTINGS];
    offsets_kvs(kvs);
    struct br_internal_topic it = {
        BR_OFFSETS_TOPIC,
        b->cfg.offsets_topic_num_partitions,
        b->offsets_topic_rf,
        b->cfg.offsets_topic_replication_factor,
        "offsets.topic.replication.factor",
        kvs,
        N_OFFSETS_SETTINGS,
        &b->offsets_create_ms,
    };
    return br_ensure_internal_topic(b, &it);
}

/* The number of partitions a group's partition is chosen among: the
 * cluster's (the controller's word; a standalone broker's own,
 * local_controller.h). */
static int32_t offsets_partitions(const struct br_server *b)
{
    const struct br_mc_topic *mt = offsets_mc_topic(b);
    return mt != NULL ? mt->npartitions : 0;
}

/* The partition of group id's records when this broker leads it, or NULL
 * with *err: COORDINATOR_NOT_AVAILABLE while the topic is missing,
 * NOT_COORDINATOR when another broker leads it (Kafka's
 * GroupCoordinator.validateGroupStatus). */
static struct br_partition *group_partition(struct br_server *b, const char *id, size_t len,
                                            int *err)
{
    *err = br_groups_ensure_offsets_topic(b);
    if (*err != 0) {
        return NULL;
    }
    return br_internal_partition(offsets_topic(b), offsets_partitions(b), id, len, err);
}

int br_groups_check_coordinator(struct br_server *b, struct kp_str group_id)
{
    if (group_id.len < 0) {
        return 0;
    }
    int err = 0;
    return group_partition(b, group_id.ptr, (size_t)group_id.len, &err) != NULL ? 0 : err;
}

int br_groups_find_coordinator(struct br_server *b, struct kp_str key, const char *listener,
                               int32_t *node, const char **host, int32_t *port)
{
    int err = br_groups_ensure_offsets_topic(b);
    if (err != 0) {
        return err;
    }
    const struct br_mc_topic *mt = offsets_mc_topic(b);
    return br_internal_coordinator(b, BR_OFFSETS_TOPIC, mt != NULL ? mt->npartitions : 0, key,
                                   listener, node, host, port);
}

void br_groups_leadership_changed(struct br_server *b, struct br_partition *p, bool was_leader)
{
    bool leads = p->role == BR_ROLE_LEADER;
    if (b->groups == NULL || leads == was_leader || p->topic != offsets_topic(b)) {
        return;
    }
    int32_t n = offsets_partitions(b);
    if (n <= 0) {
        n = p->topic->npartitions;
    }
    /* Kafka's handleGroupEmigration; on immigration too, so nothing stale
     * of an earlier term stays */
    size_t gone = br_grp_unload_partition(b->groups, n, p->index);
    if (!leads) {
        br_info("%s-%" PRId32 " is led elsewhere now: %zu group(s) handed over", BR_OFFSETS_TOPIC,
                p->index, gone);
        return;
    }
    /* Kafka's handleGroupImmigration: the partition's records read into
     * the coordinator before it answers for its groups */
    int64_t t0 = br_now_mono_ms();
    size_t before = b->groups->ngroups;
    struct grp_load_stats st = {0, 0};
    int err = br_grp_load_partition(b->groups, p, &st);
    if (err != 0) {
        br_error("%s-%" PRId32 ": loading the groups failed (%s): its groups are not served",
                 BR_OFFSETS_TOPIC, p->index, err < 0 ? kp_err_str(err) : kp_err_name(err));
        (void)br_grp_unload_partition(b->groups, n, p->index);
        return;
    }
    br_info("coordinator of %s-%" PRId32 " (epoch %" PRId32 "): %zu group(s) loaded from %zu "
            "record(s) in %" PRId64 " ms",
            BR_OFFSETS_TOPIC, p->index, p->leader_epoch, b->groups->ngroups - before, st.records,
            br_now_mono_ms() - t0);
}

struct br_partition *br_group_offsets_partition(void *ctx, const char *id, size_t len,
                                                size_t *max_batch, int *err)
{
    struct br_server *b = ctx;
    struct br_partition *p = group_partition(b, id, len, err);
    if (p == NULL) {
        return NULL;
    }
    struct br_topic *t = p->topic;
    int32_t mmb = t->config.max_message_bytes;
    *max_batch = mmb > 0 ? (size_t)mmb : 0;
    return p;
}

int br_group_acks_all_check(void *ctx, const struct br_partition *p)
{
    (void)ctx;
    return br_partition_check_acks(p, -1, p->topic->config.min_insync_replicas);
}

int br_group_offsets_load(struct br_server *b)
{
    struct br_topic *t = offsets_topic(b);
    if (t == NULL) {
        /* nothing hosted yet (a broker of a cluster hosts its partitions
         * once the controller says; its coordinators load a partition when
         * they come to lead it: br_groups_leadership_changed) */
        return 0;
    }
    struct grp_load_stats st = {0, 0};
    for (int32_t i = 0; i < t->npartitions; i++) {
        if (t->partitions[i].role != BR_ROLE_LEADER) {
            continue;
        }
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

/* Any partition of the cluster, hosted here or not (Kafka checks its
 * metadata cache). */
static bool partition_exists(struct br_server *b, struct kp_str topic, int32_t partition)
{
    const struct br_mc_partition *mp =
        topic.len > 0 ? br_mc_partition(&b->mc, topic.ptr, (size_t)topic.len, partition) : NULL;
    return mp != NULL && mp->present;
}

/*
 * A cluster's commit is pending until its records reach the ISR (Kafka's
 * offsets.commit.required.acks = -1, offsets.commit.timeout.ms): then its
 * offsets become committed and the client hears NONE; when the wait fails
 * they are dropped and the client hears the error (br_grp_commit_error).
 * Where the wait stands is the partition's (br_partition_append_outcome),
 * which an orphaned commit (below) asks without a parked answer.
 */

/* Settles commit seq of group by the wait's outcome err and, with resp,
 * puts the error Kafka answers into every partition that was pending. */
static void commit_settle(struct br_server *b, struct kp_str group, uint64_t seq, int16_t err,
                          struct kp_OffsetCommitResponse *resp)
{
    (void)br_grp_commit_settle(b->groups, group.ptr, group.len > 0 ? (size_t)group.len : 0, seq,
                               err == KP_ERR_NONE);
    if (err == KP_ERR_NONE || resp == NULL) {
        return;
    }
    int16_t code = (int16_t)br_grp_commit_error(err);
    br_warn("an offset commit of group %.*s was not replicated (%s): dropped, answered %s",
            (int)group.len, group.ptr, kp_err_name(err), kp_err_name(code));
    for (int32_t i = 0; i < resp->Topics.count; i++) {
        struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *t = &resp->Topics.items[i];
        for (int32_t j = 0; j < t->Partitions.count; j++) {
            if (t->Partitions.items[j].ErrorCode == KP_ERR_NONE) {
                t->Partitions.items[j].ErrorCode = code;
            }
        }
    }
}

/* Settles what the coordinator appended under seq for group by the wait's
 * outcome err: the generation's group record (br_grp_store_settle), or a
 * commit (commit_settle) whose client hears nothing of it. */
static void append_settle(struct br_server *b, struct kp_str group, uint64_t seq, bool group_record,
                          int16_t err)
{
    if (!group_record) {
        commit_settle(b, group, seq, err, NULL);
        return;
    }
    (void)br_grp_store_settle(b->groups, group.ptr, group.len > 0 ? (size_t)group.len : 0, seq,
                              err);
}

/* An append of the coordinator waiting for the ISR with no request parked
 * for it: a commit whose connection closed while it waited, or the group
 * record of a generation, whose syncs wait in the coordinator. It is
 * settled when the wait ends, as Kafka's DelayedProduce completes (and
 * calls storeOffsets' or storeGroup's callback) without a connection. */
struct append_wait {
    struct br_delayed_produce dp;
    struct br_append_wait wait;
    struct br_delay_link link;
    struct br_server *b;
    uint64_t seq;
    bool group_record;
    int32_t group_len;
    char group[]; /* group_len bytes */
};

static void append_wait_done(struct br_delayed_produce *dp, bool expired)
{
    (void)expired;
    struct append_wait *o = dp->owner;
    struct kp_str group = {o->group, o->group_len};
    append_settle(o->b, group, o->seq, o->group_record, br_acks_outcome(&o->wait));
    kp_free(o);
}

/* Parks a wait for p's high watermark to reach required (p led in term)
 * until deadline_ms, settling seq of group then. 0, or KP_E_NOMEM
 * (nothing parked). */
static int append_wait_park(struct br_server *b, struct br_partition *p, int64_t required,
                            uint32_t term, struct kp_str group, uint64_t seq, bool group_record,
                            int64_t deadline_ms)
{
    size_t glen = group.len > 0 ? (size_t)group.len : 0;
    struct append_wait *o = kp_calloc(1, sizeof *o + glen);
    if (o == NULL) {
        return KP_E_NOMEM;
    }
    o->b = b;
    o->wait = (struct br_append_wait){p, required, term};
    o->seq = seq;
    o->group_record = group_record;
    o->group_len = (int32_t)glen;
    if (glen > 0) {
        memcpy(o->group, group.ptr, glen);
    }
    br_delayed_produce_init(&o->dp, &o->wait, &o->link, 1, append_wait_done, o);
    br_delayed_produce_park(&b->purgatory, &o->dp, deadline_ms);
    return 0;
}

/* The answer of a cluster's OffsetCommit, copied out of the request. */
struct commit_wait {
    struct br_hw_wait wait; /* first */
    struct br_server *b;
    struct br_conn *conn;
    struct br_slot *slot;
    int16_t version;
    int32_t correlation_id;
    struct kp_str group; /* in arena */
    uint64_t seq;
    int64_t deadline_ms;
    struct kp_arena arena;
    struct kp_OffsetCommitResponse resp;
};

static void commit_wait_free(struct commit_wait *cw)
{
    kp_arena_free(&cw->arena);
    kp_free(cw);
}

static void commit_wait_done(struct br_hw_wait *w, int16_t err)
{
    struct commit_wait *cw = (struct commit_wait *)(void *)w;
    commit_settle(cw->b, cw->group, cw->seq, err, &cw->resp);
    br_answer_parked(cw->b, cw->conn, cw->slot, KP_API_OFFSET_COMMIT, cw->version,
                     cw->correlation_id, &cw->resp);
    commit_wait_free(cw);
}

static void commit_wait_cancelled(struct br_hw_wait *w)
{
    struct commit_wait *cw = (struct commit_wait *)(void *)w;
    const struct br_append_wait *aw = &w->wait;
    int16_t err = KP_ERR_REQUEST_TIMED_OUT;
    if (br_partition_append_settled(aw->p, aw->required, aw->term)) {
        err = br_acks_outcome(aw);
    } else {
        if (append_wait_park(cw->b, aw->p, aw->required, aw->term, cw->group, cw->seq, false,
                             cw->deadline_ms) == 0) {
            commit_wait_free(cw);
            return;
        }
        br_warn("out of memory keeping an offset commit of group %s whose client went: dropped",
                cw->group.ptr);
    }
    commit_settle(cw->b, cw->group, cw->seq, err, NULL);
    commit_wait_free(cw);
}

/* Parks r's answer resp until p's high watermark reaches required, or
 * settles commit seq now when nothing is left to wait for. 1: not parked
 * (resp says the outcome: answer now), 0: parked, KP_E_NOMEM (settled as
 * failed). */
static int commit_park(struct br_req *r, struct kp_OffsetCommitResponse *resp,
                       struct br_partition *p, int64_t required, struct kp_str group, uint64_t seq)
{
    uint32_t term = p->leader_term;
    struct br_append_wait aw = {p, required, term};
    if (br_partition_append_settled(p, required, term)) {
        commit_settle(r->b, group, seq, br_acks_outcome(&aw), resp);
        return 1;
    }
    struct commit_wait *cw = kp_calloc(1, sizeof *cw);
    if (cw == NULL) {
        commit_settle(r->b, group, seq, KP_ERR_REQUEST_TIMED_OUT, NULL);
        return KP_E_NOMEM;
    }
    kp_arena_init(&cw->arena, br_request_arena_max(r->len) + 65536);
    cw->resp = *resp;
    int32_t nt = resp->Topics.count > 0 ? resp->Topics.count : 0;
    cw->resp.Topics.items = arena_array(&cw->arena, (size_t)nt, sizeof *cw->resp.Topics.items);
    size_t glen = group.len > 0 ? (size_t)group.len : 0;
    char *gid = kp_arena_alloc(&cw->arena, glen + 1);
    bool ok = cw->resp.Topics.items != NULL && gid != NULL;
    for (int32_t i = 0; ok && i < nt; i++) {
        const struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *src =
            &resp->Topics.items[i];
        struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *dst = &cw->resp.Topics.items[i];
        *dst = *src;
        size_t nl = src->Name.len > 0 ? (size_t)src->Name.len : 0;
        char *name = kp_arena_alloc(&cw->arena, nl + 1);
        int32_t np = src->Partitions.count > 0 ? src->Partitions.count : 0;
        dst->Partitions.items = arena_array(&cw->arena, (size_t)np, sizeof *dst->Partitions.items);
        ok = name != NULL && dst->Partitions.items != NULL;
        if (ok) {
            if (nl > 0) {
                memcpy(name, src->Name.ptr, nl);
            }
            name[nl] = '\0';
            dst->Name.ptr = name;
            if (np > 0) {
                memcpy(dst->Partitions.items, src->Partitions.items,
                       (size_t)np * sizeof *dst->Partitions.items);
            }
        }
    }
    if (!ok) {
        commit_wait_free(cw);
        commit_settle(r->b, group, seq, KP_ERR_REQUEST_TIMED_OUT, NULL);
        return KP_E_NOMEM;
    }
    if (glen > 0) {
        memcpy(gid, group.ptr, glen);
    }
    gid[glen] = '\0';
    cw->group.ptr = gid;
    cw->group.len = (int32_t)glen;
    cw->seq = seq;
    cw->b = r->b;
    cw->conn = r->conn;
    cw->slot = r->slot;
    cw->version = r->version;
    cw->correlation_id = r->hdr->CorrelationId;
    cw->wait.done = commit_wait_done;
    cw->wait.cancelled = commit_wait_cancelled;
    int32_t timeout = r->b->cfg.offsets_commit_timeout_ms;
    cw->deadline_ms = br_now_mono_ms() + timeout;
    if (!br_acks_park_hw(r, &cw->wait, p, required, timeout)) {
        /* no answer wanted, or the broker stops (its partitions go to
         * other leaders): the wait fails */
        commit_wait_free(cw);
        commit_settle(r->b, group, seq, KP_ERR_NOT_LEADER_OR_FOLLOWER, resp);
        return 1;
    }
    return 0;
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
    /* a cluster: this broker must lead the group's partition, and the
     * commit waits for its records to reach the ISR */
    int coord = br_groups_check_coordinator(r->b, q->GroupId);
    struct br_partition *gp = NULL;
    uint64_t seq = 0;
    if (coord != 0) {
        for (size_t i = 0; i < n; i++) {
            items[i].err = coord;
        }
    } else {
        if (q->GroupId.len >= 0) {
            int gerr = 0;
            gp = group_partition(r->b, q->GroupId.ptr, (size_t)q->GroupId.len, &gerr);
        }
        (void)br_grp_commit(r->b->groups, q->GroupId, r->version >= 1 ? q->MemberId : kp_str_c(""),
                            r->version >= 1 ? q->GenerationId : -1, retention, items, n, &seq);
    }
    int err = 0;
    n = 0;
    for (int32_t i = 0; i < q->Topics.count && err == 0; i++) {
        const struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *qt = &q->Topics.items[i];
        struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items =
            arena_array(r->arena, (size_t)qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            err = KP_E_NOMEM;
            break;
        }
        rt->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            rt->Partitions.items[j].PartitionIndex = qt->Partitions.items[j].PartitionIndex;
            rt->Partitions.items[j].ErrorCode = (int16_t)kp_err_to_wire(items[n++].err);
        }
    }
    if (seq == 0) {
        return err != 0 ? err : br_respond(r, &resp);
    }
    if (err != 0) {
        /* no answer goes: the commit is dropped */
        commit_settle(r->b, q->GroupId, seq, KP_ERR_REQUEST_TIMED_OUT, NULL);
        return err;
    }
    if (gp == NULL) {
        commit_settle(r->b, q->GroupId, seq, KP_ERR_NOT_LEADER_OR_FOLLOWER, &resp);
        return br_respond(r, &resp);
    }
    int parked = commit_park(r, &resp, gp, br_log_end_offset(gp->log), q->GroupId, seq);
    return parked <= 0 ? parked : br_respond(r, &resp);
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

/* ---------------------------------------------------------------- the group record */

void br_group_store_wait(struct br_server *b, struct kp_str group_id, uint64_t seq)
{
    size_t glen = group_id.len > 0 ? (size_t)group_id.len : 0;
    int gerr = 0;
    struct br_partition *p = group_partition(b, group_id.ptr, glen, &gerr);
    if (p == NULL) {
        (void)br_grp_store_settle(b->groups, group_id.ptr, glen, seq,
                                  KP_ERR_NOT_LEADER_OR_FOLLOWER);
        return;
    }
    /* Kafka's appendForGroup: offsets.commit.required.acks (-1) and
     * offsets.commit.timeout.ms, as a commit */
    int64_t required = br_log_end_offset(p->log);
    uint32_t term = p->leader_term;
    int32_t timeout = b->cfg.offsets_commit_timeout_ms;
    struct br_append_wait aw = {p, required, term};
    if (br_partition_append_settled(p, required, term) || timeout <= 0 || br_broker_stopping(b)) {
        int16_t err = br_acks_outcome(&aw);
        (void)br_grp_store_settle(b->groups, group_id.ptr, glen, seq, err);
        return;
    }
    if (append_wait_park(b, p, required, term, group_id, seq, true, br_now_mono_ms() + timeout) !=
        0) {
        br_warn("out of memory waiting for the record of group %.*s to be replicated", (int)glen,
                group_id.ptr);
        (void)br_grp_store_settle(b->groups, group_id.ptr, glen, seq, KP_ERR_REQUEST_TIMED_OUT);
    }
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
    int top = q->GroupId.len < 0 ? KP_ERR_INVALID_GROUP_ID
                                 : br_groups_check_coordinator(r->b, q->GroupId);
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

int br_group_lag(struct br_server *b, const char *group_id, size_t len, struct br_group_lag **out,
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
        struct br_topic *t = br_rm_find_topic(&b->rm, kp_str_c(o->topic));
        /* only a replica here knows the HW: on a cluster a topic's other
         * partitions are known to this broker but not hosted */
        if (t != NULL && o->partition >= 0 && o->partition < t->npartitions &&
            t->partitions[o->partition].role != BR_ROLE_NONE &&
            t->partitions[o->partition].log != NULL) {
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
