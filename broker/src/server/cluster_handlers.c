/* samsa-broker: the controller's requests to a broker of a cluster
 * (LeaderAndIsr, UpdateMetadata, StopReplica) and Metadata answered from
 * the metadata cache (see request.h). */
#define _GNU_SOURCE

#include "base/logging.h"
#include "base/clock.h"
#include "base/mailbox.h"
#include "base/worker.h"
#include "cluster/controller.h"
#include "group/group.h"
#include "server/group.h"
#include "server/cluster_wait.h"
#include "replica/replication.h"
#include "server/request.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void controller_park_cancel(struct br_server *b, void *parked);
/* A controller's request parked: what its connection's end does to it (request.h) */
static const struct br_park_ops controller_park_ops = {"a controller's request", controller_park_cancel};

static void shutdown_park_cancel(struct br_server *b, void *parked);
/* A ControlledShutdown parked: what its connection's end does to it (request.h) */
static const struct br_park_ops shutdown_park_ops = {"a ControlledShutdown", shutdown_park_cancel};


/* ---------------------------------------------------------------- UpdateMetadata */

static bool ctl_wait_turn(struct br_req *r, int (*handler)(struct br_req *r));

int br_h_update_metadata(struct br_req *r)
{
    if (ctl_wait_turn(r, br_h_update_metadata)) {
        return 0;
    }
    const struct kp_UpdateMetadataRequest *q = r->body;
    struct kp_UpdateMetadataResponse resp;
    kp_UpdateMetadataResponse_init(&resp);
    /* each broker's host and port: those of the inter-broker listener,
     * which followers fetch from; Metadata picks the client's listener */
    int rc = br_mc_update(&r->b->mc, q, r->version, r->b->cfg.inter_broker_listener_name);
    if (rc == KP_E_NOMEM) {
        return rc;
    }
    resp.ErrorCode = (int16_t)rc;
    if (rc == 0) {
        /* requests waiting for the controller's work check again */
        br_cluster_metadata_changed(r->b);
        br_cluster_creates_check(r->b);
        br_debug("metadata from controller %" PRId32 " (epoch %" PRId32 "): %zu live broker(s), "
                 "%" PRId32 " partition state(s)",
                 q->ControllerId, q->ControllerEpoch, r->b->mc.nbrokers,
                 q->UngroupedPartitionStates.count);
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- LeaderAndIsr */

static bool contains(const int32_t *a, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++) {
        if (a[i] == x) {
            return true;
        }
    }
    return false;
}

/* The request's epoch for a replica that has one must be newer than its
 * own; but a leadership fenced when the session went (br_replication_fence)
 * takes the controller's word at the same epoch: it still leads. */
static bool stale(struct br_server *b,
                  const struct kp_LeaderAndIsrRequest_LeaderAndIsrPartitionState *s)
{
    const struct br_topic *t = br_rm_find_topic(&b->rm, s->TopicName);
    if (t == NULL || s->PartitionIndex < 0 || s->PartitionIndex >= t->npartitions) {
        return false;
    }
    const struct br_partition *have = &t->partitions[s->PartitionIndex];
    return have->role != BR_ROLE_NONE && s->LeaderEpoch <= have->leader_epoch &&
           !(have->fenced && s->LeaderEpoch == have->leader_epoch);
}

/* One partition's state (Kafka's ReplicaManager.becomeLeaderOrFollower):
 * its error code. was_stale: stale() as it was when the request came
 * (a log installed since then leads at epoch 0 until this takes it). */
/* A topic this broker hosts a replica of for the first time: its configs
 * are read from /config/topics/<t> and applied to its logs. */
static void read_configs_if_new(struct br_server *b, struct kp_str name, bool existed)
{
    const struct br_topic *t = existed ? NULL : br_rm_find_topic(&b->rm, name);
    if (t != NULL) {
        br_cluster_read_topic_configs(b, t->name);
    }
}

static int16_t become(struct br_server *b, const struct kp_LeaderAndIsrRequest *q,
                      const struct kp_LeaderAndIsrRequest_LeaderAndIsrPartitionState *s,
                      bool was_stale)
{
    if (!contains(s->Replicas.items, s->Replicas.count, b->node_id)) {
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    if (was_stale) {
        return KP_ERR_STALE_CONTROLLER_EPOCH;
    }
    const struct br_mc_topic *mt =
        br_mc_topic(&b->mc, s->TopicName.ptr, s->TopicName.len > 0 ? (size_t)s->TopicName.len : 0);
    struct br_partition *p = NULL;
    bool existed = br_rm_find_topic(&b->rm, s->TopicName) != NULL;
    int rc = br_rm_host_partition(&b->rm, s->TopicName, s->PartitionIndex,
                                      mt != NULL ? mt->npartitions : 0, &p);
    read_configs_if_new(b, s->TopicName, existed);
    if (rc != 0) {
        return (int16_t)rc;
    }
    bool was_leader = p->role == BR_ROLE_LEADER;
    struct br_leadership l = {
        .leader = s->Leader,
        .leader_epoch = s->LeaderEpoch,
        .controller_epoch = s->ControllerEpoch,
        .zk_version = s->ZkVersion,
        .isr = s->Isr.items,
        .nisr = s->Isr.count,
        .assigned = s->Replicas.items,
        .nassigned = s->Replicas.count,
    };
    /* a follower fetches from where the request says its leader is */
    struct br_leader_endpoint at = {NULL, 0, 0};
    for (int32_t i = 0; i < q->LiveLeaders.count; i++) {
        const struct kp_LeaderAndIsrRequest_LeaderAndIsrLiveLeader *ll = &q->LiveLeaders.items[i];
        if (ll->BrokerId == s->Leader && ll->HostName.len > 0) {
            at = (struct br_leader_endpoint){ll->HostName.ptr, (size_t)ll->HostName.len,
                                             ll->Port};
            break;
        }
    }
    int16_t err = br_replication_become(b->replication, p, &l, &at);
    if (err == KP_ERR_NONE) {
        br_groups_leadership_changed(b, p, was_leader);
        br_txn_leadership_changed(b, p, was_leader);
    }
    return err;
}

/* Every partition's state applied, the answer in resp (its array from
 * arena). was_stale[i]: stale() of state i when the request came, or NULL
 * to ask now. */
static int apply_leader_and_isr(struct br_server *b, const struct kp_LeaderAndIsrRequest *q,
                                const bool *was_stale, struct kp_arena *arena,
                                struct kp_LeaderAndIsrResponse *resp)
{
    kp_LeaderAndIsrResponse_init(resp);
    int32_t n = q->UngroupedPartitionStates.count;
    resp->PartitionErrors.items =
        kp_arena_alloc(arena, (size_t)(n > 0 ? n : 1) * sizeof *resp->PartitionErrors.items);
    if (resp->PartitionErrors.items == NULL) {
        return KP_E_NOMEM;
    }
    resp->PartitionErrors.count = n;
    for (int32_t i = 0; i < n; i++) {
        const struct kp_LeaderAndIsrRequest_LeaderAndIsrPartitionState *s =
            &q->UngroupedPartitionStates.items[i];
        struct kp_LeaderAndIsrResponse_LeaderAndIsrPartitionError *e =
            &resp->PartitionErrors.items[i];
        e->TopicName = s->TopicName;
        e->PartitionIndex = s->PartitionIndex;
        e->ErrorCode = become(b, q, s, was_stale != NULL ? was_stale[i] : stale(b, s));
    }
    return 0;
}

/* The controller's requests to this broker (LeaderAndIsr, StopReplica,
 * UpdateMetadata) are applied in the order they come. A LeaderAndIsr that
 * names replicas whose logs are to be opened (made, or recovered after an
 * unclean stop: file work that for a topic of 1,000 partitions held the
 * reactor 8.5 s) waits on its slot while the cluster worker opens them,
 * then is applied and answered as if it had just come; the controller's
 * requests that come meanwhile (it sends one at a time, but sends again
 * after a timeout or a new connection) wait behind it in a queue
 * (parked), so that none acts on a replica whose log is
 * being opened. The reactor serves everyone else. */
struct br_ctl_wait {
    struct br_park park; /* first: its ops (request.h) */
    struct br_ctl_wait *next;
    struct br_conn *conn; /* NULL once the connection died */
    struct br_slot *slot;
    uint8_t *payload; /* the request's frame, copied, and its decoding */
    size_t len;
    struct kp_arena arena;
    struct kp_request req;
    int (*handler)(struct br_req *r);
    /* a LeaderAndIsr whose logs are being opened: stale() of each
     * partition state when it came (an installed log leads at epoch 0
     * until its state is applied); NULL for one that waits its turn */
    bool *was_stale;
};

/* The worker's job: the logs opened. */
struct lai_job {
    struct br_job job; /* first: comes back through the mailbox */
    size_t n;
    struct br_log_opening *opens;
    int64_t started_ms;
};

static void ctl_wait_free(struct br_ctl_wait *w)
{
    kp_free(w->was_stale);
    kp_arena_free(&w->arena);
    kp_free(w->payload);
    kp_free(w);
}

/* A copy of r to apply later (its frame copied and decoded again); NULL
 * when out of memory. */
static struct br_ctl_wait *ctl_wait_new(struct br_req *r, int (*handler)(struct br_req *r))
{
    struct br_ctl_wait *w = kp_calloc(1, sizeof *w);
    uint8_t *payload = kp_malloc(r->len > 0 ? r->len : 1);
    if (w == NULL || payload == NULL) {
        kp_free(w);
        kp_free(payload);
        return NULL;
    }
    memcpy(payload, r->payload, r->len);
    w->payload = payload;
    w->len = r->len;
    kp_arena_init(&w->arena, br_request_arena_max(r->len));
    if (kp_request_decode(w->payload, w->len, &w->arena, &w->req) != 0) {
        ctl_wait_free(w);
        return NULL;
    }
    w->park.ops = &controller_park_ops;
    w->conn = r->conn;
    w->slot = r->slot;
    w->handler = handler;
    return w;
}

/* The request w holds, as its handler takes it (arena: the answer's). */
static struct br_req ctl_wait_req(struct br_server *b, struct br_ctl_wait *w,
                                  struct kp_arena *arena)
{
    return (struct br_req){b,           w->conn,    w->slot,     &w->req.header,
                           w->req.header.RequestApiVersion, w->req.body, arena, w->payload,
                           w->len, NULL, NULL};
}

static void ctl_push_back(struct br_server *b, struct br_ctl_wait *w)
{
    struct br_ctl_wait **pp = &b->ctlreq.ctl_waits;
    while (*pp != NULL) {
        pp = &(*pp)->next;
    }
    *pp = w;
}

static void ctl_unlink(struct br_server *b, struct br_ctl_wait *w)
{
    for (struct br_ctl_wait **pp = &b->ctlreq.ctl_waits; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            return;
        }
    }
}

/* A controller's request that comes while others wait waits behind them:
 * true when r was queued (or answered: out of memory). */
static bool ctl_wait_turn(struct br_req *r, int (*handler)(struct br_req *r))
{
    struct br_server *b = r->b;
    if (b->ctlreq.ctl_waits == NULL || b->ctlreq.ctl_resuming || r->slot == NULL) {
        return false;
    }
    struct br_ctl_wait *w = ctl_wait_new(r, handler);
    if (w == NULL) {
        br_respond_failed(r, KP_E_NOMEM);
        return true;
    }
    ctl_push_back(b, w);
    br_slot_set_parked(r->slot, &w->park);
    return true;
}

/* Takes the queue's head off and, unless its connection died, runs
 * apply on the request it holds (an error it returns is answered). */
static void ctl_run_head(struct br_server *b,
                         int (*apply)(struct br_server *b, struct br_ctl_wait *w, struct br_req *r))
{
    struct br_ctl_wait *w = b->ctlreq.ctl_waits;
    b->ctlreq.ctl_waits = w->next;
    if (w->conn != NULL) {
        br_slot_set_parked(w->slot, NULL);
        struct kp_arena arena;
        kp_arena_init(&arena, (size_t)b->cfg.response_max_bytes);
        struct br_req r = ctl_wait_req(b, w, &arena);
        int err = apply(b, w, &r);
        if (err != 0) {
            br_respond_failed(&r, err);
        }
        kp_arena_free(&arena);
    }
    ctl_wait_free(w);
}

/* A request that waited its turn: its handler, as if it had just come. */
static int run_handler(struct br_server *b, struct br_ctl_wait *w, struct br_req *r)
{
    b->ctlreq.ctl_resuming = true;
    int err = w->handler(r);
    b->ctlreq.ctl_resuming = false;
    return err;
}

/* Applies the queued requests in order until one opens logs again (it
 * stays at the head) or none is left. */
static void ctl_resume(struct br_server *b)
{
    while (b->ctlreq.ctl_waits != NULL && b->ctlreq.ctl_waits->was_stale == NULL) {
        ctl_run_head(b, run_handler);
    }
}

/* The LeaderAndIsr whose logs are now open: applied (states judged stale
 * as they were when it came) and answered. */
static int apply_opened(struct br_server *b, struct br_ctl_wait *w, struct br_req *r)
{
    struct kp_LeaderAndIsrResponse resp;
    if (br_broker_stopping(b)) {
        kp_LeaderAndIsrResponse_init(&resp);
        resp.ErrorCode = KP_ERR_BROKER_NOT_AVAILABLE;
        return br_respond(r, &resp);
    }
    int err = apply_leader_and_isr(b, w->req.body, w->was_stale, r->arena, &resp);
    return err != 0 ? err : br_respond(r, &resp);
}

static void lai_job_run(struct br_job *job)
{
    struct lai_job *j = (struct lai_job *)(void *)job;
    for (size_t i = 0; i < j->n; i++) {
        br_rm_host_open(&j->opens[i]);
    }
}

static const struct br_job_ops lai_job_ops = {"LeaderAndIsr logs", lai_job_run};

/* On the reactor: the logs are open; they are installed, the LeaderAndIsr
 * at the queue's head applied and answered (when its connection is still
 * there: else the controller sends it again), then what waited behind it. */
static void lai_delivered(void *ctx, struct br_mail *m)
{
    struct br_server *b = ctx;
    struct lai_job *j = (struct lai_job *)(void *)m;
    size_t failed = 0;
    for (size_t i = 0; i < j->n; i++) {
        /* a failure is logged, and answered by the partition's become */
        failed += br_rm_host_install(&b->rm, &j->opens[i]) != 0 ? 1 : 0;
    }
    br_info("LeaderAndIsr: %zu replica log(s) opened off the reactor in %" PRId64
            " ms (%zu failed)",
            j->n, br_now_mono_ms() - j->started_ms, failed);
    kp_free(j->opens);
    kp_free(j);
    const struct br_ctl_wait *w = b->ctlreq.ctl_waits; /* the LeaderAndIsr the job was for */
    if (w == NULL || w->was_stale == NULL) {
        return; /* cannot happen: the head waits for the one job under way */
    }
    ctl_run_head(b, apply_opened);
    ctl_resume(b);
}

/* The logs q's replicas need opened, prepared in *out (kp_free): how many. */
static size_t logs_to_open(struct br_server *b, const struct kp_LeaderAndIsrRequest *q,
                           struct br_log_opening **out)
{
    *out = NULL;
    int32_t n = q->UngroupedPartitionStates.count;
    struct br_log_opening *opens = NULL;
    size_t nopen = 0;
    for (int32_t i = 0; i < n; i++) {
        const struct kp_LeaderAndIsrRequest_LeaderAndIsrPartitionState *s =
            &q->UngroupedPartitionStates.items[i];
        if (!contains(s->Replicas.items, s->Replicas.count, b->node_id) || stale(b, s)) {
            continue;
        }
        bool twice = false;
        for (size_t k = 0; k < nopen && !twice; k++) {
            twice = opens[k].index == s->PartitionIndex &&
                    kp_str_eq_c(s->TopicName, opens[k].topic);
        }
        if (twice) {
            continue;
        }
        if (opens == NULL) {
            opens = kp_calloc((size_t)n, sizeof *opens);
            if (opens == NULL) {
                return 0; /* opened on the reactor, as before */
            }
        }
        const struct br_mc_topic *mt = br_mc_topic(
            &b->mc, s->TopicName.ptr, s->TopicName.len > 0 ? (size_t)s->TopicName.len : 0);
        /* not 0: its log is there, or it cannot be hosted (become answers) */
        bool existed = br_rm_find_topic(&b->rm, s->TopicName) != NULL;
        int hosted = br_rm_host_prepare(&b->rm, s->TopicName, s->PartitionIndex,
                                            mt != NULL ? mt->npartitions : 0, &opens[nopen]);
        read_configs_if_new(b, s->TopicName, existed);
        if (hosted == 0) {
            nopen++;
        }
    }
    if (nopen == 0) {
        kp_free(opens);
        return 0;
    }
    *out = opens;
    return nopen;
}

/* Parks r at the queue's head until the worker opened its replicas' logs:
 * 0 when parked, 1 when none is to be opened (apply it now), or
 * KP_E_NOMEM. */
static int open_logs_first(struct br_req *r, const struct kp_LeaderAndIsrRequest *q)
{
    struct br_server *b = r->b;
    if (r->slot == NULL || b->ca.worker == NULL || br_broker_stopping(b)) {
        return 1;
    }
    /* staleness first: an installed log leads at epoch 0 until its state
     * is applied */
    int32_t nstates = q->UngroupedPartitionStates.count;
    bool *was_stale = kp_calloc((size_t)(nstates > 0 ? nstates : 1), sizeof *was_stale);
    if (was_stale == NULL) {
        return 1; /* opened on the reactor, as before */
    }
    for (int32_t i = 0; i < nstates; i++) {
        was_stale[i] = stale(b, &q->UngroupedPartitionStates.items[i]);
    }
    struct br_log_opening *opens = NULL;
    size_t n = logs_to_open(b, q, &opens);
    if (n == 0) {
        kp_free(was_stale);
        return 1;
    }
    struct br_ctl_wait *w = ctl_wait_new(r, br_h_leader_and_isr);
    struct lai_job *j = kp_calloc(1, sizeof *j);
    if (w == NULL || j == NULL) {
        for (size_t i = 0; i < n; i++) {
            br_logm_release(b->logs, opens[i].dir);
        }
        kp_free(opens);
        kp_free(was_stale);
        if (w != NULL) {
            ctl_wait_free(w);
        }
        kp_free(j);
        return KP_E_NOMEM;
    }
    w->was_stale = was_stale;
    /* at the head: the requests queued behind it came after it */
    w->next = b->ctlreq.ctl_waits;
    b->ctlreq.ctl_waits = w;
    j->job.ops = &lai_job_ops;
    j->job.mail.deliver = lai_delivered;
    j->n = n;
    j->opens = opens;
    j->started_ms = br_now_mono_ms();
    br_slot_set_parked(r->slot, &w->park);
    br_worker_submit(b->ca.worker, &j->job);
    return 0;
}

int br_h_leader_and_isr(struct br_req *r)
{
    if (ctl_wait_turn(r, br_h_leader_and_isr)) {
        return 0;
    }
    const struct kp_LeaderAndIsrRequest *q = r->body;
    struct kp_LeaderAndIsrResponse resp;
    kp_LeaderAndIsrResponse_init(&resp);
    int rc = br_mc_check_epoch(&r->b->mc, q->ControllerId, q->ControllerEpoch);
    if (rc != 0) {
        resp.ErrorCode = (int16_t)rc;
        return br_respond(r, &resp);
    }
    rc = open_logs_first(r, q);
    if (rc <= 0) {
        return rc;
    }
    rc = apply_leader_and_isr(r->b, q, NULL, r->arena, &resp);
    if (rc != 0) {
        return rc;
    }
    return br_respond(r, &resp);
}

static void controller_park_cancel(struct br_server *b, void *parked)
{
    struct br_ctl_wait *w = parked;
    if (w->was_stale != NULL) {
        /* its job is under way: it stays at the head, answered by no one */
        w->conn = NULL;
        w->slot = NULL;
        return;
    }
    ctl_unlink(b, w);
    ctl_wait_free(w);
}

void br_complete_controller_requests(struct br_server *b)
{
    for (struct br_ctl_wait *w = b->ctlreq.ctl_waits; w != NULL; w = w->next) {
        if (w->conn == NULL) {
            continue;
        }
        struct kp_arena arena;
        kp_arena_init(&arena, (size_t)b->cfg.response_max_bytes);
        struct br_req r = ctl_wait_req(b, w, &arena);
        br_slot_set_parked(w->slot, NULL);
        br_respond_failed(&r, KP_ERR_BROKER_NOT_AVAILABLE);
        kp_arena_free(&arena);
        w->conn = NULL; /* answered: the queue goes with the job's answer or the stop */
        w->slot = NULL;
    }
}

void br_controller_requests_free(struct br_server *b)
{
    while (b->ctlreq.ctl_waits != NULL) {
        struct br_ctl_wait *w = b->ctlreq.ctl_waits;
        b->ctlreq.ctl_waits = w->next;
        ctl_wait_free(w);
    }
}

/* ---------------------------------------------------------------- StopReplica */

/* The directories a StopReplica with delete_partitions renamed, for the
 * worker to remove. */
struct removals {
    char **paths;
    size_t n, cap;
};

static void removals_add(struct removals *rm, char *path)
{
    if (path == NULL) {
        return;
    }
    if (rm->n == rm->cap) {
        size_t cap = rm->cap == 0 ? 8 : rm->cap * 2;
        char **np = kp_realloc(rm->paths, cap * sizeof *np);
        if (np == NULL) {
            br_error("out of memory: %s stays on disk", path);
            kp_free(path);
            return;
        }
        rm->paths = np;
        rm->cap = cap;
    }
    rm->paths[rm->n++] = path;
}

/* A replica of a deleted topic that was never opened since this broker
 * started (it was down while the topic was deleted: Kafka's
 * ReplicaManager.stopReplica deletes such a log too): its directory in any
 * log dir renamed to its delete name. */
static int16_t delete_on_disk(struct br_server *b, const char *topic, int32_t index,
                              struct removals *rm)
{
    int16_t code = KP_ERR_NONE;
    for (size_t d = 0; d < b->cfg.n_log_dirs; d++) {
        char path[4096];
        char target[4096];
        int n = snprintf(path, sizeof path, "%s/%s-%" PRId32, b->cfg.log_dirs[d], topic, index);
        struct stat st;
        if (n < 0 || (size_t)n >= sizeof path || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            continue;
        }
        if (br_log_delete_dir_name(b->cfg.log_dirs[d], topic, index, target, sizeof target) != 0 ||
            rename(path, target) != 0) {
            br_error("cannot rename %s to delete it: %s", path, strerror(errno));
            code = KP_ERR_KAFKA_STORAGE_ERROR;
            continue;
        }
        char *copy = kp_malloc(strlen(target) + 1);
        if (copy != NULL) {
            memcpy(copy, target, strlen(target) + 1);
        }
        removals_add(rm, copy);
    }
    return code;
}

/* One partition of a StopReplica with delete_partitions (Kafka's
 * ReplicaManager.stopReplica): the replica goes, its log with it. */
static int16_t stop_and_delete(struct br_req *r, struct kp_str name, int32_t index,
                               struct removals *rm)
{
    struct br_server *b = r->b;
    if (name.len <= 0 || (size_t)name.len > BR_TOPIC_NAME_MAX ||
        !br_topic_name_valid(name.ptr, (size_t)name.len) || index < 0) {
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    char topic[BR_TOPIC_NAME_MAX + 1];
    memcpy(topic, name.ptr, (size_t)name.len);
    topic[name.len] = '\0';
    struct br_topic *t = br_rm_find_topic(&b->rm, name);
    if (t != NULL && index < t->npartitions && t->partitions[index].log != NULL) {
        char *dir = NULL;
        br_replication_forget(b->replication, &t->partitions[index]); /* nothing fetches for it */
        int rc = br_rm_partition_delete(&b->rm, t, index, &dir);
        br_info("%s-%" PRId32 ": replica deleted (StopReplica), its directory to be removed",
                topic, index);
        removals_add(rm, dir);
        br_rm_topic_forget_if_empty(&b->rm, t);
        return (int16_t)rc;
    }
    return delete_on_disk(b, topic, index, rm);
}

int br_h_stop_replica(struct br_req *r)
{
    if (ctl_wait_turn(r, br_h_stop_replica)) {
        return 0;
    }
    const struct kp_StopReplicaRequest *q = r->body;
    struct kp_StopReplicaResponse resp;
    kp_StopReplicaResponse_init(&resp);
    int rc = br_mc_check_epoch(&r->b->mc, q->ControllerId, q->ControllerEpoch);
    if (rc != 0) {
        resp.ErrorCode = (int16_t)rc;
        return br_respond(r, &resp);
    }
    int32_t n = q->UngroupedPartitions.count;
    resp.PartitionErrors.items = br_req_array(r, (size_t)n, sizeof *resp.PartitionErrors.items);
    if (resp.PartitionErrors.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.PartitionErrors.count = n;
    struct removals rm = {NULL, 0, 0};
    for (int32_t i = 0; i < n; i++) {
        const struct kp_StopReplicaRequest_StopReplicaPartitionV0 *s =
            &q->UngroupedPartitions.items[i];
        resp.PartitionErrors.items[i].TopicName = s->TopicName;
        resp.PartitionErrors.items[i].PartitionIndex = s->PartitionIndex;
        resp.PartitionErrors.items[i].ErrorCode = KP_ERR_NONE;
        if (q->DeletePartitions) {
            resp.PartitionErrors.items[i].ErrorCode =
                stop_and_delete(r, s->TopicName, s->PartitionIndex, &rm);
            continue;
        }
        struct br_topic *t = br_rm_find_topic(&r->b->rm, s->TopicName);
        if (t == NULL || s->PartitionIndex < 0 || s->PartitionIndex >= t->npartitions) {
            continue;
        }
        /* it stops serving (delete_partitions false: the log stays) */
        struct br_partition *p = &t->partitions[s->PartitionIndex];
        if (p->log != NULL) {
            bool was_leader = p->role == BR_ROLE_LEADER;
            br_replication_forget(r->b->replication, p);
            br_purgatory_complete_key(&r->b->purgatory, &p->delayed);
            br_partition_become_follower(p, p->leader_epoch);
            br_groups_leadership_changed(r->b, p, was_leader);
            br_txn_leadership_changed(r->b, p, was_leader);
        }
    }
    /* the files go off the reactor; the answer does not wait for them */
    br_cluster_remove_dirs(r->b, rm.paths, rm.n);
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- ControlledShutdown */

/* A ControlledShutdown parked on its slot until the controller's thread
 * answers (by id: the answer may come after the connection died). */
struct br_cs_wait {
    struct br_park park; /* first: its ops (request.h) */
    struct br_cs_wait *next;
    uint64_t id;
    struct br_conn *conn;
    struct br_slot *slot;
    int16_t version;
    int32_t correlation_id;
};

/* What travels from the controller's thread back to the reactor. */
struct cs_answer {
    struct br_mail mail; /* first */
    struct br_server *b;
    uint64_t id;
    int32_t broker;
    int16_t err;
    size_t n;
    struct br_shutdown_remaining *remaining; /* owned */
};

static void cs_unlink(struct br_server *b, struct br_cs_wait *w)
{
    for (struct br_cs_wait **pp = &b->ctlreq.cs_waits; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            return;
        }
    }
}

static void cs_answer_wait(struct br_server *b, struct br_cs_wait *w, int16_t err,
                           const struct br_shutdown_remaining *remaining, size_t n)
{
    struct kp_ControlledShutdownResponse resp;
    kp_ControlledShutdownResponse_init(&resp);
    resp.ErrorCode = err;
    struct kp_ControlledShutdownResponse_RemainingPartition *items =
        kp_calloc(n > 0 ? n : 1, sizeof *items);
    if (items == NULL) {
        resp.ErrorCode = KP_ERR_UNKNOWN_SERVER_ERROR;
        n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        items[i].TopicName = kp_str_c(remaining[i].topic);
        items[i].PartitionIndex = remaining[i].partition;
    }
    resp.RemainingPartitions.items = items;
    resp.RemainingPartitions.count = (int32_t)n;
    br_answer_parked(b, w->conn, w->slot, KP_API_CONTROLLED_SHUTDOWN, w->version,
                     w->correlation_id, &resp);
    kp_free(items);
}

/* On the reactor: the controller answered. */
static void cs_deliver(void *ctx, struct br_mail *m)
{
    struct br_server *b = ctx;
    struct cs_answer *a = (struct cs_answer *)(void *)m;
    for (struct br_cs_wait *w = b->ctlreq.cs_waits; w != NULL; w = w->next) {
        if (w->id == a->id) {
            cs_unlink(b, w);
            cs_answer_wait(b, w, a->err, a->remaining, a->n);
            kp_free(w);
            break;
        }
    }
    kp_free(a->remaining);
    kp_free(a);
}

/* On the controller's thread (or the one stopping it). */
static void cs_done(void *ctx, int16_t err, const struct br_shutdown_remaining *remaining, size_t n)
{
    struct cs_answer *a = ctx;
    a->err = err;
    a->n = 0;
    if (n > 0) {
        a->remaining = kp_calloc(n, sizeof *a->remaining);
        if (a->remaining == NULL) {
            a->err = KP_ERR_UNKNOWN_SERVER_ERROR;
        } else {
            memcpy(a->remaining, remaining, n * sizeof *remaining);
            a->n = n;
        }
    }
    br_info("ControlledShutdown of broker %" PRId32 ": %s, %zu partition(s) still led by it",
            a->broker, kp_err_name(err), n);
    a->mail.deliver = cs_deliver;
    br_mailbox_post(a->b->mailbox, &a->mail);
}

int br_h_controlled_shutdown(struct br_req *r)
{
    const struct kp_ControlledShutdownRequest *q = r->body;
    struct br_server *b = r->b;
    struct kp_ControlledShutdownResponse resp;
    kp_ControlledShutdownResponse_init(&resp);
    resp.RemainingPartitions.items = NULL;
    resp.RemainingPartitions.count = 0;
    if (b->controller == NULL || !br_controller_active(b->controller, NULL) ||
        br_broker_stopping(b) || r->slot == NULL) {
        resp.ErrorCode = KP_ERR_NOT_CONTROLLER;
        return br_respond(r, &resp);
    }
    struct br_cs_wait *w = kp_calloc(1, sizeof *w);
    struct cs_answer *a = kp_calloc(1, sizeof *a);
    if (w == NULL || a == NULL) {
        kp_free(w);
        kp_free(a);
        return KP_E_NOMEM;
    }
    w->park.ops = &shutdown_park_ops;
    w->id = ++b->ctlreq.cs_next_id;
    w->conn = r->conn;
    w->slot = r->slot;
    w->version = r->version;
    w->correlation_id = r->hdr->CorrelationId;
    a->b = b;
    a->id = w->id;
    a->broker = q->BrokerId;
    if (br_controller_controlled_shutdown(b->controller, q->BrokerId, cs_done, a) != 0) {
        kp_free(w);
        kp_free(a);
        return KP_E_NOMEM;
    }
    w->next = b->ctlreq.cs_waits;
    b->ctlreq.cs_waits = w;
    br_slot_set_parked(r->slot, &w->park);
    return 0;
}

static void shutdown_park_cancel(struct br_server *b, void *parked)
{
    struct br_cs_wait *w = parked;
    cs_unlink(b, w);
    kp_free(w); /* the controller's answer finds no one waiting */
}

void br_complete_controlled_shutdowns(struct br_server *b)
{
    while (b->ctlreq.cs_waits != NULL) {
        struct br_cs_wait *w = b->ctlreq.cs_waits;
        b->ctlreq.cs_waits = w->next;
        cs_answer_wait(b, w, KP_ERR_NOT_CONTROLLER, NULL, 0);
        kp_free(w);
    }
}

/* ---------------------------------------------------------------- OffsetForLeaderEpoch */

/* A follower asks where an epoch of this leader's log ends (KIP-101, v1
 * with the epoch that end belongs to, KIP-279; Kafka's
 * ReplicaManager.lastOffsetForLeaderEpoch). */
int br_h_offset_for_leader_epoch(struct br_req *r)
{
    const struct kp_OffsetForLeaderEpochRequest *q = r->body;
    struct kp_OffsetForLeaderEpochResponse resp;
    kp_OffsetForLeaderEpochResponse_init(&resp);
    resp.Topics.items = br_req_array(r, (size_t)q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_OffsetForLeaderEpochRequest_OffsetForLeaderTopic *qt = &q->Topics.items[i];
        struct kp_OffsetForLeaderEpochResponse_OffsetForLeaderTopicResult *rt =
            &resp.Topics.items[i];
        rt->Topic = qt->Topic;
        rt->Partitions.items =
            br_req_array(r, (size_t)qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            const struct kp_OffsetForLeaderEpochRequest_OffsetForLeaderPartition *qp =
                &qt->Partitions.items[j];
            struct kp_OffsetForLeaderEpochResponse_EpochEndOffset *rp = &rt->Partitions.items[j];
            rp->Partition = qp->Partition;
            rp->LeaderEpoch = -1;
            rp->EndOffset = -1;
            const struct br_partition *p =
                br_rm_leader_partition(&r->b->rm, qt->Topic, qp->Partition, &rp->ErrorCode);
            if (p == NULL) {
                continue;
            }
            int32_t epoch = -1;
            int64_t end = -1;
            if (br_log_end_offset_for_epoch(p->log, qp->LeaderEpoch, &epoch, &end) != 0) {
                epoch = -1;
                end = -1;
            }
            rp->LeaderEpoch = epoch;
            rp->EndOffset = end;
        }
    }
    return br_respond(r, &resp);
}
