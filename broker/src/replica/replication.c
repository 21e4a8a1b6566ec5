/* samsa-broker: replication on a broker of a cluster: follower fetchers,
 * the leader's ISR and its writes to ZooKeeper (see replication.h). */
#define _GNU_SOURCE

#include "replica/replication.h"

#include "base/clock.h"
#include "base/logging.h"
#include "cluster/zk.h"
#include "cluster/zk_call.h"
#include "cluster/zk_json.h"
#include "config/topic_config.h"
#include "quota/replication_quota.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/record_batch.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The largest Fetch response a follower takes (its MaxBytes and the
 * frame's overhead). */
#define FETCH_FRAME_SLACK ((int32_t)1 << 20)

struct fetch_part {
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t partition;
    /* the leader's high watermark less this log's end after the last
     * answer (Kafka's fetcherLagStats); -1 before one: not in sync */
    int64_t lag;
};

struct fetcher {
    struct fetcher *next;
    struct br_replication *rep;
    int32_t leader;
    char host[BR_MC_HOST_MAX + 1];
    int32_t port;
    struct br_conn *conn;
    bool inflight;
    int16_t inflight_api; /* Fetch, or OffsetForLeaderEpoch for truncating partitions */
    int32_t correlation;
    struct fetch_part *parts;
    size_t nparts, cap;
    struct br_timer backoff;
};

/* An ISR change being written: the state znode's data as this leader
 * writes it, and the version it is conditional on. At most one a
 * partition (p->isr_writing). */
struct isr_write {
    struct br_zk_call call; /* first */
    struct isr_write *next;
    struct br_replication *rep;
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int32_t leader_epoch;
    int32_t controller_epoch;
    int32_t zk_version;
    int32_t *isr;
    int32_t nisr;
    bool retry; /* its outcome unknown: to be sent again once connected */
    /* a LeaderAndIsr decided the partition while w's request was with
     * ZooKeeper: its answer is of no use, and w is freed when it comes */
    bool dropped;
};

struct br_replication {
    struct br_replication_env env; /* the owner's parts (replication.h) */
    int64_t isr_shrinks;           /* counted for the admin API */
    int64_t isr_expands;
    struct fetcher *fetchers;
    struct isr_write *writes;              /* in flight */
    struct br_zk_topic_partition *changed; /* ISR changes to announce */
    size_t nchanged, changed_cap;
    struct br_zk_call notify_call;
    int64_t last_shrink_ms;
    bool stopped; /* br_replication_stop_fetching: no fetcher starts again */
    /* Kafka's ReplicationQuotaManagers (QuotaFactory: LeaderReplication,
     * FollowerReplication); no bytes measured when they could not be made */
    struct br_repl_quota quota[2];
    bool quotas_ok;
};

/* ---------------------------------------------------------------- fetchers */

static struct br_partition *local_partition(struct br_replica_manager *rm, struct kp_str topic,
                                           int32_t index)
{
    struct br_topic *t = br_rm_find_topic(rm, topic);
    if (t == NULL || index < 0 || index >= t->npartitions || t->partitions[index].log == NULL) {
        return NULL;
    }
    return &t->partitions[index];
}

static void fetcher_send(struct fetcher *f);
static const struct br_conn_ops fetcher_conn_ops;

static void fetcher_close(struct fetcher *f)
{
    if (f->conn != NULL) {
        br_conn_close(f->conn);
        f->conn = NULL;
    }
    f->inflight = false;
}

static void fetcher_free(struct fetcher *f)
{
    fetcher_close(f);
    if (f->rep->env.net != NULL) {
        br_timer_cancel(f->rep->env.net, &f->backoff);
    }
    kp_free(f->parts);
    kp_free(f);
}

/* Connects when there is something to fetch and no connection. */
static void fetcher_kick(struct fetcher *f)
{
    if (f->nparts == 0 || br_timer_armed(&f->backoff)) {
        return;
    }
    if (f->conn == NULL) {
        const struct br_replication_env *b = &f->rep->env;
        int32_t max = b->cfg->replica_fetch_response_max_bytes + FETCH_FRAME_SLACK;
        if (br_conn_connect(f->rep->env.net, f->host, f->port, max, &fetcher_conn_ops, f,
                            &f->conn) != 0) {
            f->conn = NULL;
            br_warn("replica fetcher: cannot connect to broker %" PRId32 " at %s:%" PRId32,
                    f->leader, f->host, f->port);
            br_timer_arm(f->rep->env.net, &f->backoff,
                         br_now_mono_ms() + f->rep->env.cfg->replica_fetch_backoff_ms);
        }
        return;
    }
    if (!br_conn_connecting(f->conn)) {
        fetcher_send(f);
    }
}

static void backoff_fire(void *ctx, struct br_timer *t)
{
    (void)ctx; /* the broker: the timer's owner is the fetcher */
    fetcher_kick(t->owner);
}

static const struct br_timer_ops backoff_timer = {"replica fetch backoff", backoff_fire};

static void fetcher_backoff(struct fetcher *f)
{
    if (!br_timer_armed(&f->backoff)) {
        br_timer_arm(f->rep->env.net, &f->backoff,
                     br_now_mono_ms() + f->rep->env.cfg->replica_fetch_backoff_ms);
    }
}

/* Encodes and sends a request of the fetcher; false when it could not. */
static bool fetcher_request(struct fetcher *f, int16_t api, int16_t version, const void *body)
{
    struct br_replication_env *b = &f->rep->env;
    char client_id[48];
    (void)snprintf(client_id, sizeof client_id, "samsa-replica-fetcher-%" PRId32, b->node_id);
    struct kp_request_header h = {api, version, ++f->correlation, kp_str_c(client_id)};
    struct kp_writer w;
    kp_wr_init(&w, (size_t)64 * 1024 * 1024);
    int rc = kp_request_encode(&w, &h, body);
    if (rc != 0) {
        kp_wr_free(&w);
        br_error("replica fetcher: cannot encode a request (api %d): %s", api, kp_err_str(rc));
        return false;
    }
    size_t len = 0;
    uint8_t *frame = kp_wr_steal(&w, &len);
    if (br_conn_send(f->conn, frame, len) != 0) {
        fetcher_close(f);
        return false;
    }
    f->inflight = true;
    f->inflight_api = api;
    return true;
}

/* OffsetForLeaderEpoch v1 for the partitions that have yet to truncate
 * (Kafka's AbstractFetcherThread.maybeTruncate): each asks where its own
 * latest epoch ends on the leader. True when one was sent. */
static bool send_epoch_queries(struct fetcher *f)
{
    struct br_replication_env *b = &f->rep->env;
    struct kp_OffsetForLeaderEpochRequest_OffsetForLeaderTopic *topics =
        kp_calloc(f->nparts, sizeof *topics);
    struct kp_OffsetForLeaderEpochRequest_OffsetForLeaderPartition *parts =
        kp_calloc(f->nparts, sizeof *parts);
    if (topics == NULL || parts == NULL) {
        kp_free(topics);
        kp_free(parts);
        return false;
    }
    int32_t ntopics = 0;
    size_t np = 0;
    for (size_t i = 0; i < f->nparts; i++) {
        const struct br_partition *p =
            local_partition(b->rm, kp_str_c(f->parts[i].topic), f->parts[i].partition);
        if (p == NULL || p->role != BR_ROLE_FOLLOWER || p->leader_id != f->leader ||
            !p->truncating) {
            continue;
        }
        if (ntopics == 0 || !kp_str_eq_c(topics[ntopics - 1].Topic, f->parts[i].topic)) {
            topics[ntopics].Topic = kp_str_c(f->parts[i].topic);
            topics[ntopics].Partitions.items = &parts[np];
            ntopics++;
        }
        struct kp_OffsetForLeaderEpochRequest_OffsetForLeaderPartition *qp = &parts[np++];
        qp->Partition = f->parts[i].partition;
        qp->CurrentLeaderEpoch = -1;
        qp->LeaderEpoch = br_log_latest_epoch(p->log);
        topics[ntopics - 1].Partitions.count++;
    }
    bool sent = false;
    if (ntopics > 0) {
        struct kp_OffsetForLeaderEpochRequest q;
        memset(&q, 0, sizeof q);
        q.ReplicaId = b->node_id;
        q.Topics.items = topics;
        q.Topics.count = ntopics;
        sent = fetcher_request(f, KP_API_OFFSET_FOR_LEADER_EPOCH, 1, &q);
        if (!sent) {
            fetcher_backoff(f);
        }
    }
    kp_free(topics);
    kp_free(parts);
    return sent || ntopics > 0;
}

/* Kafka 2.0's ReplicaFetcherThread.shouldFollowerThrottle: a replica in
 * follower.replication.throttled.replicas, not in sync (behind the
 * leader's high watermark at the last answer, or none yet) while the
 * follower quota is exceeded; in-sync replicas are never held back, so
 * that a throttle does not take them out of the ISR. */
static bool follower_throttled(struct br_replication *rep, const struct br_partition *p,
                               const struct fetch_part *fp, int64_t now_ms)
{
    return rep->quotas_ok &&
           br_topic_config_throttled(&p->topic->config,
                                     BR_TCFG_FOLLOWER_REPLICATION_THROTTLED_REPLICAS, p->index,
                                     rep->env.node_id) &&
           fp->lag != 0 &&
           br_repl_quota_exceeded(&rep->quota[BR_REPL_FOLLOWER],
                                  rep->env.cfg->follower_replication_throttled_rate, now_ms);
}

/* Waits ms before the fetcher sends again (every partition held back by
 * the follower quota: no request to spin on). */
static void fetcher_wait(struct fetcher *f, int64_t ms)
{
    if (!br_timer_armed(&f->backoff)) {
        br_timer_arm(f->rep->env.net, &f->backoff, br_now_mono_ms() + ms);
    }
}

/* The Fetch v8 a follower sends (Kafka's ReplicaFetcherThread): every
 * partition it follows from this leader, from its log end, but those the
 * follower quota holds back. */
static void fetcher_send(struct fetcher *f)
{
    struct br_replication_env *b = &f->rep->env;
    if (f->inflight || f->conn == NULL || f->nparts == 0) {
        return;
    }
    if (send_epoch_queries(f)) {
        return;
    }
    struct kp_FetchRequest_FetchTopic *topics = kp_calloc(f->nparts, sizeof *topics);
    struct kp_FetchRequest_FetchPartition *parts = kp_calloc(f->nparts, sizeof *parts);
    if (topics == NULL || parts == NULL) {
        kp_free(topics);
        kp_free(parts);
        fetcher_backoff(f);
        return;
    }
    int32_t ntopics = 0;
    size_t np = 0;
    size_t held = 0;
    int64_t now = br_now_mono_ms();
    /* parts are kept sorted by topic: one FetchTopic per run of a name */
    for (size_t i = 0; i < f->nparts; i++) {
        const struct br_partition *p =
            local_partition(b->rm, kp_str_c(f->parts[i].topic), f->parts[i].partition);
        if (p == NULL || p->role != BR_ROLE_FOLLOWER || p->leader_id != f->leader ||
            p->truncating) {
            continue;
        }
        if (follower_throttled(f->rep, p, &f->parts[i], now)) {
            br_repl_quota_throttled(&f->rep->quota[BR_REPL_FOLLOWER]);
            held++;
            continue;
        }
        if (ntopics == 0 || !kp_str_eq_c(topics[ntopics - 1].Topic, f->parts[i].topic)) {
            topics[ntopics].Topic = kp_str_c(f->parts[i].topic);
            topics[ntopics].Partitions.items = &parts[np];
            topics[ntopics].Partitions.count = 0;
            ntopics++;
        }
        struct kp_FetchRequest_FetchPartition *fp = &parts[np++];
        fp->Partition = f->parts[i].partition;
        fp->CurrentLeaderEpoch = -1;
        fp->FetchOffset = br_log_end_offset(p->log);
        fp->LogStartOffset = br_log_start_offset(p->log);
        fp->PartitionMaxBytes = b->cfg->replica_fetch_max_bytes;
        topics[ntopics - 1].Partitions.count++;
    }
    if (ntopics == 0) {
        kp_free(topics);
        kp_free(parts);
        if (held > 0) {
            /* until the rate is under the bound again, a window at most */
            fetcher_wait(f,
                         br_repl_quota_wait_ms(&f->rep->quota[BR_REPL_FOLLOWER],
                                               b->cfg->follower_replication_throttled_rate, now));
        }
        return;
    }
    struct kp_FetchRequest q;
    memset(&q, 0, sizeof q);
    q.ReplicaId = b->node_id;
    q.MaxWaitMs = b->cfg->replica_fetch_wait_max_ms;
    q.MinBytes = b->cfg->replica_fetch_min_bytes;
    q.MaxBytes = b->cfg->replica_fetch_response_max_bytes;
    q.IsolationLevel = 0;
    q.SessionId = 0;
    q.SessionEpoch = -1; /* no fetch session: every request names every partition */
    q.Topics.items = topics;
    q.Topics.count = ntopics;
    if (!fetcher_request(f, KP_API_FETCH, 8, &q)) {
        fetcher_backoff(f);
    }
    kp_free(topics);
    kp_free(parts);
}

/* Where a follower truncates once its leader answered (Kafka 2.0's
 * AbstractFetcherThread.getOffsetTruncationState, KIP-101 + KIP-279). */
static void truncate_follower(struct fetcher *f, struct kp_str topic,
                              const struct kp_OffsetForLeaderEpochResponse_EpochEndOffset *e)
{
    struct br_replication_env *b = &f->rep->env;
    struct br_partition *p = local_partition(b->rm, topic, e->Partition);
    if (p == NULL || p->role != BR_ROLE_FOLLOWER || p->leader_id != f->leader || !p->truncating) {
        return;
    }
    if (e->ErrorCode != 0) {
        br_debug("%s-%" PRId32 ": OffsetForLeaderEpoch from broker %" PRId32 ": %s", p->topic->name, p->index,
                 f->leader, kp_err_name(e->ErrorCode));
        fetcher_backoff(f);
        return;
    }
    int64_t leo = br_log_end_offset(p->log);
    int64_t to;
    bool done = true;
    if (e->EndOffset < 0) {
        /* the leader knows no such epoch: the high watermark, Kafka's
         * fallback */
        to = p->hw < leo ? p->hw : leo;
    } else if (e->LeaderEpoch < 0) {
        to = e->EndOffset < leo ? e->EndOffset : leo; /* a v0 answer: KIP-101 */
    } else {
        int32_t mine = -1;
        int64_t my_end = -1;
        if (br_log_end_offset_for_epoch(p->log, e->LeaderEpoch, &mine, &my_end) != 0) {
            my_end = -1;
        }
        if (my_end < 0) {
            to = e->EndOffset < leo ? e->EndOffset : leo;
        } else if (mine != e->LeaderEpoch) {
            /* our largest epoch at or below the leader's is another one:
             * cut to where ours ends and ask again */
            to = my_end < leo ? my_end : leo;
            done = false;
        } else {
            to = e->EndOffset < my_end ? e->EndOffset : my_end;
            to = to < leo ? to : leo;
        }
    }
    if (to < leo) {
        if (to < p->hw) {
            br_warn("%s-%" PRId32 ": truncating to %" PRId64 ", below the high watermark %" PRId64,
                    p->topic->name, p->index, to, p->hw);
        }
        int rc = br_partition_truncate_to(p, to);
        if (rc != 0) {
            br_error("%s-%" PRId32 ": truncation to %" PRId64 " failed: %s", p->topic->name, p->index, to,
                     kp_err_name(rc));
            fetcher_backoff(f);
            return;
        }
        br_info("%s-%" PRId32 ": truncated from %" PRId64 " to %" PRId64
                " where the leader's epoch %" PRId32 " ends",
                p->topic->name, p->index, leo, to, e->LeaderEpoch);
    }
    br_partition_epoch_agreed(p, done);
}

static int cmp_part(const struct fetch_part *a, const char *topic, int32_t partition);

/* The fetcher's entry of p, or NULL. */
static struct fetch_part *find_part(struct fetcher *f, const struct br_partition *p)
{
    size_t lo = 0;
    size_t hi = f->nparts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_part(&f->parts[mid], p->topic->name, p->index);
        if (c == 0) {
            return &f->parts[mid];
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

/* The leader's answer for one partition. */
static void take_partition(struct fetcher *f, struct kp_str topic,
                           const struct kp_FetchResponse_PartitionData *d)
{
    struct br_replication_env *b = &f->rep->env;
    struct br_partition *p = local_partition(b->rm, topic, d->PartitionIndex);
    if (p == NULL || p->role != BR_ROLE_FOLLOWER || p->leader_id != f->leader) {
        return;
    }
    if (d->ErrorCode == 0 && d->Records.len > 0 && f->rep->quotas_ok &&
        br_topic_config_throttled(&p->topic->config,
                                  BR_TCFG_FOLLOWER_REPLICATION_THROTTLED_REPLICAS, p->index,
                                  b->node_id)) {
        /* processPartitionData: a throttled replica's bytes count, in sync
         * or not */
        br_repl_quota_record(&f->rep->quota[BR_REPL_FOLLOWER], d->Records.len, br_now_mono_ms());
    }
    if (d->ErrorCode == KP_ERR_OFFSET_OUT_OF_RANGE) {
        int64_t leo = br_log_end_offset(p->log);
        int rc = 0;
        if (leo < d->LogStartOffset) {
            /* wholly behind the leader's log start: start over there */
            br_warn("%s-%" PRId32 ": log end %" PRId64 " is below the leader's log start %" PRId64
                    ": starting the log there",
                    p->topic->name, p->index, leo, d->LogStartOffset);
            rc = br_partition_restart_at(p, d->LogStartOffset);
        } else if (d->HighWatermark >= 0 && d->HighWatermark < leo) {
            br_warn("%s-%" PRId32 ": log end %" PRId64 " is past the leader's: truncating to "
                    "its high watermark %" PRId64,
                    p->topic->name, p->index, leo, d->HighWatermark);
            rc = br_partition_truncate_to(p, d->HighWatermark);
        }
        if (rc != 0) {
            br_error("%s-%" PRId32 ": truncation failed: %s", p->topic->name, p->index, kp_err_name(rc));
        }
        fetcher_backoff(f);
        return;
    }
    if (d->ErrorCode != 0) {
        br_debug("%s-%" PRId32 ": fetch from broker %" PRId32 ": %s", p->topic->name, p->index, f->leader,
                 kp_err_name(d->ErrorCode));
        fetcher_backoff(f);
        return;
    }
    const uint8_t *at = d->Records.ptr;
    size_t left = d->Records.len > 0 ? (size_t)d->Records.len : 0;
    int64_t now = br_now_wall_ms();
    bool appended = false;
    while (left > 0) {
        struct kp_batch_header h;
        size_t size = 0;
        if (kp_batch_peek(at, left, &h, &size) != 0 || size > left) {
            break; /* the last batch cut by the size limit, or bytes we cannot take */
        }
        int64_t leo = br_log_end_offset(p->log);
        if (h.BaseOffset + h.LastOffsetDelta >= leo) {
            int rc = br_partition_append_follower(p, at, size, now);
            if (rc != 0) {
                br_error("%s-%" PRId32 ": appending the leader's batch at %" PRId64 " failed: %s",
                         p->topic->name, p->index, h.BaseOffset, kp_err_name(rc));
                fetcher_backoff(f);
                break;
            }
            appended = true;
        }
        at += size;
        left -= size;
    }
    if (br_partition_follow_log_start(p, d->LogStartOffset) != 0) {
        br_warn("%s-%" PRId32 ": cannot follow the leader's log start %" PRId64, p->topic->name, p->index,
                d->LogStartOffset);
    }
    br_partition_follower_hw(p, d->HighWatermark);
    struct fetch_part *fp = find_part(f, p);
    if (fp != NULL) {
        int64_t lag = d->HighWatermark - br_log_end_offset(p->log);
        fp->lag = lag > 0 ? lag : 0;
    }
    (void)appended;
}

static void fetcher_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    (void)c;
    struct fetcher *f = ctx;
    f->inflight = false;
    struct kp_arena arena;
    kp_arena_init(&arena, len * 16 + 65536);
    struct kp_response_header h;
    void *body = NULL;
    int16_t api = f->inflight_api;
    int rc = kp_response_decode(payload, len, api, api == KP_API_FETCH ? 8 : 1, &arena, &h, &body);
    if (rc != 0 || h.CorrelationId != f->correlation) {
        br_warn("replica fetcher: broker %" PRId32 " answered with bytes that do not decode: %s",
                f->leader, rc != 0 ? kp_err_str(rc) : "another correlation id");
        kp_arena_free(&arena);
        fetcher_close(f);
        fetcher_backoff(f);
        return;
    }
    if (api == KP_API_OFFSET_FOR_LEADER_EPOCH) {
        const struct kp_OffsetForLeaderEpochResponse *er = body;
        for (int32_t i = 0; i < er->Topics.count; i++) {
            const struct kp_OffsetForLeaderEpochResponse_OffsetForLeaderTopicResult *t =
                &er->Topics.items[i];
            for (int32_t j = 0; j < t->Partitions.count; j++) {
                truncate_follower(f, t->Topic, &t->Partitions.items[j]);
            }
        }
        kp_arena_free(&arena);
        fetcher_kick(f);
        return;
    }
    const struct kp_FetchResponse *resp = body;
    if (resp->ErrorCode != 0) {
        br_warn("replica fetcher: broker %" PRId32 " refused the Fetch: %s", f->leader,
                kp_err_name(resp->ErrorCode));
        fetcher_backoff(f);
    }
    for (int32_t i = 0; i < resp->Responses.count; i++) {
        const struct kp_FetchResponse_FetchableTopicResponse *t = &resp->Responses.items[i];
        for (int32_t j = 0; j < t->Partitions.count; j++) {
            take_partition(f, t->Topic, &t->Partitions.items[j]);
        }
    }
    kp_arena_free(&arena);
    fetcher_kick(f);
}

static void fetcher_connected(void *ctx, struct br_conn *c)
{
    (void)c;
    fetcher_send(ctx);
}

static void fetcher_closed(void *ctx, struct br_conn *c, int err)
{
    (void)c;
    struct fetcher *f = ctx;
    f->conn = NULL;
    f->inflight = false;
    br_debug("replica fetcher: connection to broker %" PRId32 " closed (%s)", f->leader,
             err != 0 ? strerror(err) : "by the peer");
    fetcher_backoff(f);
}

static const struct br_conn_ops fetcher_conn_ops = {fetcher_connected, fetcher_frame,
                                                    fetcher_closed};

static int cmp_part(const struct fetch_part *a, const char *topic, int32_t partition)
{
    int c = strcmp(a->topic, topic);
    return c != 0 ? c : (a->partition < partition ? -1 : (a->partition > partition ? 1 : 0));
}

/* Takes p out of every fetcher (one that empties is freed). */
static void unfollow(struct br_replication *rep, const struct br_partition *p)
{
    for (struct fetcher **fp = &rep->fetchers; *fp != NULL;) {
        struct fetcher *f = *fp;
        for (size_t i = 0; i < f->nparts; i++) {
            if (cmp_part(&f->parts[i], p->topic->name, p->index) == 0) {
                memmove(&f->parts[i], &f->parts[i + 1], (f->nparts - i - 1) * sizeof *f->parts);
                f->nparts--;
                break;
            }
        }
        if (f->nparts == 0) {
            *fp = f->next;
            fetcher_free(f);
        } else {
            fp = &f->next;
        }
    }
}

/* Adds p to the fetcher of its leader (made when missing), at `where`
 * when given, else where the metadata cache has the leader. */
static int follow(struct br_replication *rep, const struct br_partition *p,
                  const struct br_leader_endpoint *where)
{
    struct br_replication_env *b = &rep->env;
    char host[BR_MC_HOST_MAX + 1];
    int32_t port = 0;
    if (where != NULL && where->host != NULL && where->host_len > 0 &&
        where->host_len < sizeof host) {
        (void)snprintf(host, sizeof host, "%.*s", (int)where->host_len, where->host);
        port = where->port;
    } else {
        const struct br_mc_broker *leader = br_mc_broker(b->mc, p->leader_id);
        if (leader == NULL) {
            br_warn("%s-%" PRId32 ": its leader %" PRId32 " is not a live broker here yet: it "
                    "is fetched for once the controller says where",
                    p->topic->name, p->index, p->leader_id);
            return 0;
        }
        (void)snprintf(host, sizeof host, "%s", leader->host);
        port = leader->port;
    }
    struct fetcher *f = rep->fetchers;
    while (f != NULL &&
           (f->leader != p->leader_id || f->port != port || strcmp(f->host, host) != 0)) {
        f = f->next;
    }
    if (f == NULL) {
        f = kp_calloc(1, sizeof *f);
        if (f == NULL) {
            return KP_E_NOMEM;
        }
        f->rep = rep;
        f->leader = p->leader_id;
        (void)snprintf(f->host, sizeof f->host, "%s", host);
        f->port = port;
        br_timer_init(&f->backoff, &backoff_timer, f);
        f->next = rep->fetchers;
        rep->fetchers = f;
    }
    size_t at = 0;
    while (at < f->nparts && cmp_part(&f->parts[at], p->topic->name, p->index) < 0) {
        at++;
    }
    if (at < f->nparts && cmp_part(&f->parts[at], p->topic->name, p->index) == 0) {
        fetcher_kick(f);
        return 0;
    }
    if (f->nparts == f->cap) {
        size_t cap = f->cap == 0 ? 8 : f->cap * 2;
        struct fetch_part *np = kp_realloc(f->parts, cap * sizeof *np);
        if (np == NULL) {
            return KP_E_NOMEM;
        }
        f->parts = np;
        f->cap = cap;
    }
    memmove(&f->parts[at + 1], &f->parts[at], (f->nparts - at) * sizeof *f->parts);
    (void)snprintf(f->parts[at].topic, sizeof f->parts[at].topic, "%s", p->topic->name);
    f->parts[at].partition = p->index;
    f->parts[at].lag = -1;
    f->nparts++;
    fetcher_kick(f);
    return 0;
}

/* ---------------------------------------------------------------- the ISR in ZooKeeper */

static void note_isr_change(struct br_replication *rep, const struct br_partition *p)
{
    for (size_t i = 0; i < rep->nchanged; i++) {
        if (rep->changed[i].partition == p->index &&
            strcmp(rep->changed[i].topic, p->topic->name) == 0) {
            return;
        }
    }
    if (rep->nchanged == rep->changed_cap) {
        size_t cap = rep->changed_cap == 0 ? 16 : rep->changed_cap * 2;
        struct br_zk_topic_partition *nc = kp_realloc(rep->changed, cap * sizeof *nc);
        if (nc == NULL) {
            return; /* the controller learns of it with the next change */
        }
        rep->changed = nc;
        rep->changed_cap = cap;
    }
    (void)snprintf(rep->changed[rep->nchanged].topic, sizeof rep->changed[0].topic, "%s",
                   p->topic->name);
    rep->changed[rep->nchanged].partition = p->index;
    rep->nchanged++;
}

static void isr_write_free(struct isr_write *w)
{
    struct br_replication *rep = w->rep;
    for (struct isr_write **pp = &rep->writes; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    kp_free(w->isr);
    kp_free(w);
}

/* The state znode w writes. */
static void isr_write_path(const struct isr_write *w, char *path, size_t len)
{
    (void)snprintf(path, len, "/brokers/topics/%s/partitions/%" PRId32 "/state", w->topic,
                   w->partition);
}

/* The partition w writes for, while it leads in the epoch w was made in;
 * NULL: a new leadership decides now (w is of no use any more). */
static struct br_partition *isr_write_partition(const struct isr_write *w)
{
    struct br_partition *p = local_partition(w->rep->env.rm, kp_str_c(w->topic), w->partition);
    if (w->dropped || p == NULL || p->role != BR_ROLE_LEADER ||
        p->leader_epoch != w->leader_epoch) {
        return NULL;
    }
    return p;
}

/* w is settled: the partition may start another change. */
static void isr_write_end(struct isr_write *w, struct br_partition *p)
{
    if (p != NULL) {
        br_partition_isr_change_end(p, br_now_mono_ms());
    }
    isr_write_free(w);
}

/* ZooKeeper took w (directly, or found holding exactly what it wrote after
 * a reply was lost): the ISR is w's at `version`. */
static void isr_taken(struct isr_write *w, struct br_partition *p, const int32_t *isr, int32_t n,
                      int32_t version, const char *how)
{
    int32_t old = p->nisr;
    if (br_partition_set_isr(p, isr, n, version, br_now_mono_ms()) == 0) {
        if (n < old) {
            w->rep->isr_shrinks++;
        } else if (n > old) {
            w->rep->isr_expands++;
        }
        br_info("%s-%" PRId32 ": ISR now %" PRId32 " replica(s) (was %" PRId32 ")%s", w->topic,
                w->partition, n, old, how);
        note_isr_change(w->rep, p);
    }
    isr_write_end(w, p);
}

static bool same_ids(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
    if (na != nb) {
        return false;
    }
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++) {
            found = a[i] == b[j];
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

static int isr_write_send(struct isr_write *w);

/* The outcome of w is unknown (the connection or the session went before
 * the reply came, and ZooKeeper may have applied it): w is sent again once
 * the session is connected (Kafka's retryRequestUntilConnected), and
 * meanwhile the partition starts no other change and its high watermark
 * counts the joining replica. */
static void isr_write_unknown(struct isr_write *w, const char *what, int rc)
{
    w->retry = true;
    br_warn("%s-%" PRId32 ": %s the ISR: %s, outcome unknown: sent again once ZooKeeper is "
            "connected",
            w->topic, w->partition, what, br_zk_rc_name(rc));
}

static bool outcome_unknown(int rc)
{
    return rc == BR_ZK_CONNECTIONLOSS || rc == BR_ZK_SESSIONEXPIRED || rc == BR_ZK_CLOSING ||
           rc == BR_ZK_NOMEM || rc == BR_ZK_ERROR;
}

/* The state znode read back after BADVERSION (Kafka's
 * ReplicationUtils.checkLeaderAndIsrZkData): what w wrote means w was
 * applied (its reply lost); the same leadership with another ISR is taken
 * as ZooKeeper has it; a newer leadership fences this leader until the
 * controller's LeaderAndIsr. */
static void isr_read_back(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct isr_write *w = (struct isr_write *)(void *)call;
    struct br_replication_env *b = &w->rep->env;
    struct br_partition *p = isr_write_partition(w);
    if (p == NULL) {
        isr_write_free(w);
        return;
    }
    if (outcome_unknown(r->rc)) {
        isr_write_unknown(w, "reading back", r->rc);
        return;
    }
    struct br_zk_partition_state st = {0};
    char err[256];
    if (r->rc != BR_ZK_OK || r->data == NULL || !r->has_stat ||
        br_zk_partition_state_decode(r->data, r->data_len, r->path, &st, err, sizeof err) != 0) {
        br_warn("%s-%" PRId32 ": the state znode cannot be read back (%s): ISR change dropped "
                "until the controller's next LeaderAndIsr",
                w->topic, w->partition, r->rc == BR_ZK_OK ? err : br_zk_rc_name(r->rc));
        isr_write_end(w, p);
        return;
    }
    if (st.leader == b->node_id && st.leader_epoch == w->leader_epoch &&
        st.controller_epoch == w->controller_epoch &&
        same_ids(st.isr, st.n_isr, w->isr, (size_t)w->nisr)) {
        isr_taken(w, p, w->isr, w->nisr, r->stat.version,
                  " (ZooKeeper had applied the write whose reply was lost)");
    } else if (st.leader == b->node_id && st.leader_epoch == w->leader_epoch) {
        br_warn("%s-%" PRId32 ": ZooKeeper holds another ISR of this leadership: taken as it is",
                w->topic, w->partition);
        isr_taken(w, p, st.isr, (int32_t)st.n_isr, r->stat.version, " (as ZooKeeper has it)");
    } else {
        br_warn("%s-%" PRId32 ": ZooKeeper names leader %" PRId32 " in epoch %" PRId32
                " (this broker leads epoch %" PRId32 "): no longer leading until the "
                "controller's LeaderAndIsr",
                w->topic, w->partition, st.leader, st.leader_epoch, w->leader_epoch);
        br_partition_supersede(p);
        isr_write_end(w, p);
    }
    br_zk_partition_state_clear(&st);
}

static void isr_written(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct isr_write *w = (struct isr_write *)(void *)call;
    struct br_replication_env *b = &w->rep->env;
    struct br_partition *p = isr_write_partition(w);
    if (p == NULL) {
        isr_write_free(w); /* a new leadership decides now */
        return;
    }
    if (r->rc == BR_ZK_OK && r->has_stat) {
        isr_taken(w, p, w->isr, w->nisr, r->stat.version, "");
    } else if (r->rc == BR_ZK_BADVERSION) {
        /* the version moved: by this very write, if an earlier attempt's
         * reply was lost, or by the controller; the znode says which */
        w->call.done = isr_read_back;
        char path[BR_TOPIC_NAME_MAX + 64];
        isr_write_path(w, path, sizeof path);
        if (br_zk_get(b->zk, path, false, br_zk_call_tag(&w->call)) != 0) {
            isr_write_unknown(w, "reading back", BR_ZK_NOMEM);
        }
    } else if (outcome_unknown(r->rc)) {
        isr_write_unknown(w, "writing", r->rc);
    } else {
        br_warn("%s-%" PRId32 ": writing the ISR failed: %s", w->topic, w->partition,
                br_zk_rc_name(r->rc));
        isr_write_end(w, p);
    }
}

/* Sends w's conditional setData (again, after an unknown outcome: with the
 * version it first named, so that an applied first attempt makes it
 * BADVERSION and the read-back tells). 0, or -1: not sent. */
static int isr_write_send(struct isr_write *w)
{
    struct br_replication_env *b = &w->rep->env;
    struct br_zk_partition_state s = {b->node_id, w->leader_epoch, w->controller_epoch, w->isr,
                                      (size_t)w->nisr};
    char *json = NULL;
    size_t len = 0;
    if (br_zk_partition_state_encode(&s, &json, &len) != 0) {
        return -1;
    }
    char path[BR_TOPIC_NAME_MAX + 64];
    isr_write_path(w, path, sizeof path);
    w->call.done = isr_written;
    w->retry = false;
    int rc = br_zk_set(b->zk, path, json, len, w->zk_version, br_zk_call_tag(&w->call));
    kp_free(json);
    return rc == 0 ? 0 : -1;
}

/* Writes p's ISR as isr[0..n) (Kafka's ReplicationUtils.updateLeaderAndIsr:
 * the leader's epoch and the controller's, conditional on the version). */
static void write_isr(struct br_replication *rep, struct br_partition *p, const int32_t *isr,
                      int32_t n)
{
    struct br_replication_env *b = &rep->env;
    if (p->isr_writing || b->zk == NULL || br_zk_state(b->zk) != BR_ZK_STATE_CONNECTED) {
        return;
    }
    struct isr_write *w = kp_calloc(1, sizeof *w);
    int32_t *copy = kp_calloc(n > 0 ? (size_t)n : 1, sizeof *copy);
    if (w == NULL || copy == NULL) {
        kp_free(w);
        kp_free(copy);
        return;
    }
    memcpy(copy, isr, (size_t)n * sizeof *copy);
    w->rep = rep;
    (void)snprintf(w->topic, sizeof w->topic, "%s", p->topic->name);
    w->partition = p->index;
    w->leader_epoch = p->leader_epoch;
    w->controller_epoch = p->controller_epoch;
    w->zk_version = p->zk_version;
    w->isr = copy;
    w->nisr = n;
    if (isr_write_send(w) != 0) {
        kp_free(copy);
        kp_free(w);
        return;
    }
    w->next = rep->writes;
    rep->writes = w;
    int32_t joining = -1;
    for (int32_t i = 0; i < n; i++) {
        if (!br_partition_in_isr(p, isr[i])) {
            joining = isr[i];
        }
    }
    br_partition_isr_change_begin(p, joining);
}

/* The writes whose outcome is unknown, sent again now that the session is
 * connected; those of a leadership gone are dropped. */
static void retry_isr_writes(struct br_replication *rep)
{
    struct br_replication_env *b = &rep->env;
    if (b->zk == NULL || br_zk_state(b->zk) != BR_ZK_STATE_CONNECTED) {
        return;
    }
    struct isr_write *next = NULL;
    for (struct isr_write *w = rep->writes; w != NULL; w = next) {
        next = w->next;
        if (!w->retry) {
            continue;
        }
        struct br_partition *p = isr_write_partition(w);
        if (p == NULL) {
            isr_write_free(w);
        } else if (isr_write_send(w) != 0) {
            w->retry = true; /* the next tick tries again */
        }
    }
}

/* A leadership decided by the controller: what this leader was writing of
 * an older one is of no use any more. A write waiting to be sent again
 * goes now; one whose request is with ZooKeeper is marked, and goes when
 * its answer comes (the request's tag is w). */
static void drop_isr_writes(struct br_replication *rep, const struct br_partition *p)
{
    struct isr_write *next = NULL;
    for (struct isr_write *w = rep->writes; w != NULL; w = next) {
        next = w->next;
        if (w->partition != p->index || strcmp(w->topic, p->topic->name) != 0) {
            continue;
        }
        if (w->retry) {
            isr_write_free(w);
        } else {
            w->dropped = true;
        }
    }
}

static void notified(struct br_zk_call *call, const struct br_zk_result *r)
{
    (void)call;
    if (r->rc != BR_ZK_OK) {
        br_warn("announcing ISR changes failed: %s", br_zk_rc_name(r->rc));
    }
}

/* One /isr_change_notification/isr_change_<seq> with every change since
 * the last (Kafka's ReplicaManager.maybePropagateIsrChanges). */
static void announce(struct br_replication *rep)
{
    struct br_replication_env *b = &rep->env;
    if (rep->nchanged == 0 || b->zk == NULL || br_zk_state(b->zk) != BR_ZK_STATE_CONNECTED) {
        return;
    }
    char *json = NULL;
    size_t len = 0;
    if (br_zk_isr_change_encode(rep->changed, rep->nchanged, &json, &len) != 0) {
        return;
    }
    int rc = br_zk_create(b->zk, "/isr_change_notification/isr_change_", json, len,
                          BR_ZK_PERSISTENT_SEQUENTIAL, br_zk_call_tag(&rep->notify_call));
    kp_free(json);
    if (rc == 0) {
        rep->nchanged = 0;
    }
}

/* ---------------------------------------------------------------- the API */

int br_replication_start(const struct br_replication_env *env, struct br_replication **out)
{
    struct br_replication *rep = kp_calloc(1, sizeof *rep);
    if (rep == NULL) {
        return KP_E_NOMEM;
    }
    rep->env = *env;
    rep->notify_call.done = notified;
    rep->last_shrink_ms = br_now_mono_ms();
    rep->quotas_ok = true;
    for (int i = 0; i < 2; i++) {
        if (br_repl_quota_init(&rep->quota[i], env->cfg->replication_quota_window_num,
                               env->cfg->replication_quota_window_size_s) != 0) {
            rep->quotas_ok = false;
        }
    }
    if (!rep->quotas_ok) {
        br_warn("replication quotas could not be made: replication is not throttled");
    }
    *out = rep;
    return 0;
}

void br_replication_set_zk(struct br_replication *rep, struct br_zk *zk)
{
    if (rep != NULL) {
        rep->env.zk = zk;
    }
}

void br_replication_isr_counts(const struct br_replication *rep, int64_t *shrinks, int64_t *expands)
{
    *shrinks = rep != NULL ? rep->isr_shrinks : 0;
    *expands = rep != NULL ? rep->isr_expands : 0;
}

void br_replication_stop(struct br_replication *rep)
{
    if (rep == NULL) {
        return;
    }
    while (rep->fetchers != NULL) {
        struct fetcher *f = rep->fetchers;
        rep->fetchers = f->next;
        fetcher_free(f);
    }
    while (rep->writes != NULL) {
        isr_write_free(rep->writes);
    }
    kp_free(rep->changed);
    br_repl_quota_free(&rep->quota[0]);
    br_repl_quota_free(&rep->quota[1]);
    kp_free(rep);
}

int16_t br_replication_become(struct br_replication *rep, struct br_partition *p,
                              const struct br_leadership *s, const struct br_leader_endpoint *at)
{
    if (rep == NULL) {
        return KP_ERR_UNKNOWN_SERVER_ERROR;
    }
    const struct br_replication_env *b = &rep->env;
    bool was_leader = p->role == BR_ROLE_LEADER;
    int rc = br_partition_take_leadership(p, b->node_id, s, br_now_mono_ms(),
                                          b->cfg->replica_lag_time_max_ms);
    if (rc != 0) {
        return KP_ERR_UNKNOWN_SERVER_ERROR;
    }
    drop_isr_writes(rep, p);
    if (p->role == BR_ROLE_LEADER) {
        unfollow(rep, p);
        br_info("%s-%" PRId32 ": leader in epoch %" PRId32 ", %" PRId32 " in sync, high "
                "watermark %" PRId64 ", log end %" PRId64 "%s",
                p->topic->name, p->index, p->leader_epoch, p->nisr, p->hw,
                br_log_end_offset(p->log), was_leader ? "" : " (was not)");
        return 0;
    }
    /* a follower: what waited on it as a leader is answered (produces
     * waiting for acks learn it is led elsewhere) */
    br_purgatory_complete_key(b->purgatory, &p->delayed);
    unfollow(rep, p);
    br_info("%s-%" PRId32 ": follower of broker %" PRId32 " in epoch %" PRId32 ", log end %" PRId64
            "%s",
            p->topic->name, p->index, p->leader_id, p->leader_epoch, br_log_end_offset(p->log),
            rep->stopped ? " (not fetching: this broker is shutting down)" : "");
    if (p->leader_id >= 0 && !rep->stopped && follow(rep, p, at) != 0) {
        return KP_ERR_UNKNOWN_SERVER_ERROR;
    }
    return 0;
}

/* Every in-sync follower of p silent since before cutoff (at least one):
 * a follower out of the ISR may just be down, and a leader alone in its
 * ISR waits for the session's expiry, as one without followers does. */
static bool followers_silent(const struct br_partition *p, int64_t cutoff)
{
    int32_t in_sync = 0;
    for (int32_t k = 0; k < p->nremotes; k++) {
        if (!br_partition_in_isr(p, p->remotes[k].broker)) {
            continue;
        }
        in_sync++;
        if (p->remotes[k].last_fetch_ms >= cutoff) {
            return false;
        }
    }
    return in_sync > 0;
}

size_t br_replication_fence(struct br_replication *rep, bool expired, int64_t now_ms)
{
    if (rep == NULL) {
        return 0;
    }
    const struct br_replication_env *b = &rep->env;
    int64_t cutoff = now_ms - b->cfg->zookeeper_session_timeout_ms;
    size_t n = 0;
    for (size_t t = 0; t < b->rm->ntopics; t++) {
        struct br_topic *tp = b->rm->topics[t];
        for (int32_t i = 0; i < tp->npartitions; i++) {
            struct br_partition *p = &tp->partitions[i];
            if (p->role != BR_ROLE_LEADER || p->log == NULL || p->fenced ||
                (!expired && !followers_silent(p, cutoff))) {
                continue;
            }
            br_partition_fence(p);
            n++;
        }
    }
    return n;
}

size_t br_replication_unfence(struct br_replication *rep)
{
    if (rep == NULL) {
        return 0;
    }
    const struct br_replication_env *b = &rep->env;
    size_t n = 0;
    for (size_t t = 0; t < b->rm->ntopics; t++) {
        struct br_topic *tp = b->rm->topics[t];
        for (int32_t i = 0; i < tp->npartitions; i++) {
            struct br_partition *p = &tp->partitions[i];
            if (br_partition_unfence(p)) {
                n++;
            }
        }
    }
    return n;
}

void br_replication_zk_connected(struct br_replication *rep)
{
    if (rep != NULL) {
        retry_isr_writes(rep);
    }
}

size_t br_replication_stop_fetching(struct br_replication *rep)
{
    if (rep == NULL) {
        return 0;
    }
    rep->stopped = true;
    size_t n = 0;
    while (rep->fetchers != NULL) {
        struct fetcher *f = rep->fetchers;
        rep->fetchers = f->next;
        n += f->nparts;
        fetcher_free(f);
    }
    return n;
}

void br_replication_forget(struct br_replication *rep, struct br_partition *p)
{
    if (rep != NULL) {
        unfollow(rep, p);
    }
}

void br_replication_follower_fetch(struct br_replication *rep, struct br_partition *p,
                                   int32_t replica, int64_t fetch_offset)
{
    if (rep == NULL || p->role != BR_ROLE_LEADER ||
        !br_partition_follower_fetched(p, replica, fetch_offset, br_now_mono_ms())) {
        return;
    }
    if (p->isr_writing || !br_partition_isr_candidate(p, replica)) {
        return;
    }
    int32_t joins = replica;
    int32_t isr[BR_META_MAX_REPLICATION_FACTOR];
    int32_t n = 0;
    for (int32_t i = 0; i < p->nisr && n < BR_META_MAX_REPLICATION_FACTOR - 1; i++) {
        isr[n++] = p->isr[i];
    }
    isr[n++] = joins;
    br_info("%s-%" PRId32 ": broker %" PRId32 " caught up with the high watermark %" PRId64
            ": joining the ISR",
            p->topic->name, p->index, joins, p->hw);
    write_isr(rep, p, isr, n);
}

void br_replication_tick(struct br_replication *rep, int64_t now_ms)
{
    if (rep == NULL) {
        return;
    }
    const struct br_replication_env *b = &rep->env;
    /* Kafka checks every replica.lag.time.max.ms / 2 */
    if (now_ms - rep->last_shrink_ms >= b->cfg->replica_lag_time_max_ms / 2) {
        rep->last_shrink_ms = now_ms;
        for (size_t i = 0; i < b->rm->ntopics; i++) {
            struct br_topic *t = b->rm->topics[i];
            for (int32_t k = 0; k < t->npartitions; k++) {
                struct br_partition *p = &t->partitions[k];
                if (p->role != BR_ROLE_LEADER || p->log == NULL || p->nremotes == 0 ||
                    p->isr_writing) {
                    continue;
                }
                int32_t out[BR_META_MAX_REPLICATION_FACTOR];
                int32_t nout = br_partition_out_of_sync(p, now_ms, out);
                if (nout == 0) {
                    continue;
                }
                int32_t isr[BR_META_MAX_REPLICATION_FACTOR];
                int32_t n = 0;
                for (int32_t j = 0; j < p->nisr; j++) {
                    bool gone = false;
                    for (int32_t x = 0; x < nout; x++) {
                        gone = gone || out[x] == p->isr[j];
                    }
                    if (!gone) {
                        isr[n++] = p->isr[j];
                    }
                }
                br_info("%s-%" PRId32 ": %" PRId32 " follower(s) not caught up for %" PRId64
                        " ms leave the ISR",
                        t->name, k, nout, b->cfg->replica_lag_time_max_ms);
                write_isr(rep, p, isr, n);
            }
        }
    }
    retry_isr_writes(rep);
    announce(rep);
}

/* ---------------------------------------------------------------- the leader's quota */

bool br_replication_leader_throttled(const struct br_replication *rep, const struct br_partition *p)
{
    return rep != NULL && rep->quotas_ok &&
           br_topic_config_throttled(&p->topic->config,
                                     BR_TCFG_LEADER_REPLICATION_THROTTLED_REPLICAS, p->index,
                                     rep->env.node_id);
}

bool br_replication_leader_holds(struct br_replication *rep, const struct br_partition *p,
                                 int32_t replica, int64_t now_ms)
{
    if (!br_replication_leader_throttled(rep, p) || br_partition_in_isr(p, replica)) {
        return false;
    }
    return br_repl_quota_exceeded(&rep->quota[BR_REPL_LEADER],
                                  rep->env.cfg->leader_replication_throttled_rate, now_ms);
}

void br_replication_leader_sent(struct br_replication *rep, int64_t bytes, int64_t now_ms)
{
    if (rep != NULL && rep->quotas_ok) {
        br_repl_quota_record(&rep->quota[BR_REPL_LEADER], bytes, now_ms);
    }
}

void br_replication_leader_held(struct br_replication *rep)
{
    if (rep != NULL && rep->quotas_ok) {
        br_repl_quota_throttled(&rep->quota[BR_REPL_LEADER]);
    }
}

void br_replication_quota_view(struct br_replication *rep, enum br_repl_role role, int64_t now_ms,
                               struct br_repl_quota_view *out)
{
    *out = (struct br_repl_quota_view){.bound = INT64_MAX};
    if (rep == NULL || !rep->quotas_ok) {
        return;
    }
    struct br_repl_quota *q = &rep->quota[role];
    out->bound = role == BR_REPL_LEADER ? rep->env.cfg->leader_replication_throttled_rate
                                        : rep->env.cfg->follower_replication_throttled_rate;
    out->rate = br_repl_quota_rate(q, now_ms);
    out->bytes_total = q->bytes_total;
    out->throttled_total = q->throttled_total;
}
