/*
 * group.id for a consumer: the group coordinator (FindCoordinator; its own
 * connection), committed offsets (OffsetFetch resolves SAMSA_OFFSET_STORED),
 * commits (sync, async, auto commit every auto.commit.interval.ms) and,
 * after samsa_consumer_subscribe, membership of the classic consumer group
 * protocol (reference §A4), eager as Java's range and roundrobin are:
 *
 *   UNJOINED --JoinGroup--> JOINING --(leader: Metadata of every member's
 *   topics, then the chosen assignor)--> SYNC_READY --SyncGroup--> SYNCING
 *   --assignment applied, "assigned" event--> STABLE (a Heartbeat every
 *   heartbeat.interval.ms, auto commits)
 *
 *   STABLE --a rejoin is wanted (REBALANCE_IN_PROGRESS, a subscribed topic's
 *   partition count changed, a new subscription)--> REVOKING: fetching
 *   stops, the positions are committed (enable.auto.commit) and the
 *   "revoked" event is served by the user's poll (a rebalance callback may
 *   still commit the generation's positions there); then the assignment is
 *   dropped and the member joins again (Java's onJoinPrepare).
 *
 *   Membership lost (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, no heartbeat
 *   answered within session.timeout.ms): the assignment is dropped at once,
 *   nothing can be committed for it any more, and the member joins again.
 *
 *   No poll for max.poll.interval.ms: LeaveGroup, the assignment dropped,
 *   SAMSA_ERR_MAX_POLL_EXCEEDED for the error callback; the next poll joins
 *   again (as the Java client does).
 *
 * cooperative-sticky (KIP-429, incremental) changes three things:
 *   - a rejoin keeps the assignment: REVOKING only commits (enable.auto.commit)
 *     and, when partitions are being given up, waits for the user's poll to
 *     have run their "revoked" event; then they alone are removed. Fetching
 *     of the others goes on through JOINING and SYNCING (commits only while
 *     the generation lasts: STABLE and REVOKING);
 *   - the Subscription is v3 with OwnedPartitions (what the member fetches
 *     now) and GenerationId; the leader reads what each member owns from it;
 *   - SyncGroup's assignment is applied as a difference: revoked = owned -
 *     assigned are marked (fetching them stops at once) and get a "revoked"
 *     event, added = assigned - owned start (committed offsets) with an
 *     "assigned" event, the rest go on untouched. Revoked partitions make
 *     the member join again at once, so that their new owners get them in
 *     the next generation. A lost membership drops everything, as eager.
 *
 * A simple consumer (assign, no subscribe) commits with generation -1 and an
 * empty member id, which the coordinator accepts for an Empty group.
 *
 * Response handlers only change state (the response lives in the client's
 * arena, which the send helpers reuse); sc_group_serve sends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/consumer.h"

#define TOPIC_MISSING (-2)
#define MAX_SUB_TOPICS 10000

enum g_state {
    G_IDLE = 0,      /* not subscribed */
    G_UNJOINED,      /* JoinGroup once join_at has come and the coordinator is up */
    G_JOINING,       /* JoinGroup in flight */
    G_ASSIGN_MD,     /* leader: Metadata of the members' topics, then assign */
    G_SYNC_READY,    /* SyncGroup to send */
    G_SYNCING,       /* SyncGroup in flight */
    G_STABLE,        /* a member of `generation` with its assignment */
    G_REVOKING,      /* commit and the revoke event before joining again */
    G_POLL_EXCEEDED, /* left after max.poll.interval.ms; the next poll joins */
    G_FATAL,         /* FENCED_INSTANCE_ID: membership given up */
};

static const char *const state_names[] = {
    "idle",   "unjoined", "joining",        "assign-metadata", "sync-ready",
    "syncing", "stable",  "revoking",       "poll-exceeded",   "fatal",
};

struct sc_group {
    /* coordinator */
    int32_t coord_id; /* -1: unknown */
    bool coord_inflight;
    int64_t coord_retry_at;
    /* stored offsets and auto commit */
    bool ofetch_inflight;
    int64_t next_auto_commit;

    /* membership */
    int state;
    bool closing;              /* samsa_consumer_close: never join again */
    char **topics;             /* the subscription, sorted, unique */
    int topic_count;
    int32_t *topic_parts;      /* partition count last seen per topic; -1: not yet;
                                * TOPIC_MISSING: not in the cluster (told) */
    char *member_id;           /* NULL: none yet ("" on the wire) */
    int32_t generation;        /* -1 outside a generation */
    int assignor;              /* the protocol the coordinator chose */
    bool leader;
    struct sc_member *members; /* the leader's view of this generation */
    int member_count;
    struct sc_tp *owned;       /* the last assignment SyncGroup gave (sorted): what the
                                * sticky assignor's UserData tells the next leader */
    int owned_count;
    int32_t owned_generation;
    bool assign_md_inflight;
    int64_t join_at;
    bool rejoin_pending;       /* wanted while a join was under way */
    bool hb_inflight;
    int64_t next_hb;
    int64_t last_hb_ok;        /* last heartbeat (or join) the coordinator answered */
    int64_t last_poll;
    int polling;               /* user threads inside samsa_consumer_poll */
    bool revoke_commit_todo;   /* the commit before joining again is still to send */
    bool revoke_commit_inflight;
    bool revoke_wait_ack;
    uint64_t acks_posted;
    int64_t revoke_deadline;
};

struct sc_commit_item {
    char *topic;
    int32_t partition;
    int64_t offset;
};

struct sc_commit_arg {
    int count;
    struct sc_commit_item *items;
    int32_t generation; /* what the request carried */
};

void sc_op_commit_arg_free(void *varg)
{
    struct sc_commit_arg *a = varg;
    if (a == NULL) {
        return;
    }
    for (int i = 0; i < a->count; i++) {
        kp_free(a->items[i].topic);
    }
    kp_free(a->items);
    kp_free(a);
}

static struct sc_group *group(struct sc_client *c)
{
    if (c->group == NULL && c->v->group_id[0] != '\0') {
        c->group = kp_calloc(1, sizeof(*c->group));
        if (c->group != NULL) {
            c->group->coord_id = -1;
            c->group->generation = -1;
            c->group->owned_generation = -1;
            c->group->next_auto_commit = sc_now_ms() + c->v->auto_commit_interval_ms;
            c->group->last_poll = sc_now_ms();
        }
    }
    return c->group;
}

static const char *member_id(const struct sc_group *g)
{
    return g->member_id != NULL ? g->member_id : "";
}

static void set_member_id(struct sc_group *g, struct kp_str id)
{
    kp_free(g->member_id);
    g->member_id = id.len > 0 ? sc_strndup(id.ptr, (size_t)id.len) : NULL;
}

static void clear_members(struct sc_group *g)
{
    for (int i = 0; i < g->member_count; i++) {
        sc_member_clear(&g->members[i]);
    }
    kp_free(g->members);
    g->members = NULL;
    g->member_count = 0;
}

static void free_topics(struct sc_group *g)
{
    for (int i = 0; i < g->topic_count; i++) {
        kp_free(g->topics[i]);
    }
    kp_free(g->topics);
    kp_free(g->topic_parts);
    g->topics = NULL;
    g->topic_parts = NULL;
    g->topic_count = 0;
}

void sc_group_free(struct sc_client *c)
{
    struct sc_group *g = c->group;
    if (g == NULL) {
        return;
    }
    clear_members(g);
    free_topics(g);
    sc_tps_free(g->owned, g->owned_count);
    kp_free(g->member_id);
    kp_free(g);
    c->group = NULL;
}

/* Whether the group runs incremental rebalances (the configuration refuses
 * a list mixing eager and cooperative assignors). */
static bool cooperative(const struct sc_client *c)
{
    return c->v->assignor_count > 0 && sc_assignor_cooperative(c->v->assignors[0]);
}

static void set_state(struct sc_client *c, struct sc_group *g, int state)
{
    if (g->state != state) {
        sc_log(c, "group %s: %s -> %s", c->v->group_id, state_names[g->state],
               state_names[state]);
    }
    g->state = state;
}

bool sc_group_blocks_fetch(struct sc_client *c)
{
    /* cooperative: what the member owns is fetched through rebalances (the
     * partitions being given up are marked and skipped one by one) */
    return c->subscribed && c->group != NULL && c->group->state != G_STABLE && !cooperative(c);
}

int sc_group_topics(struct sc_client *c, const char **names, int max)
{
    const struct sc_group *g = c->group;
    int n = 0;
    for (int i = 0; g != NULL && c->subscribed && i < g->topic_count && n < max; i++) {
        names[n++] = g->topics[i];
    }
    return n;
}

/* The assignment as samsa_partition (topics borrowed from the cparts):
 * those marked revoking when `revoking`, else the others. */
static struct samsa_partition *assignment_view(struct sc_client *c, bool revoking, int *count)
{
    struct samsa_partition *v =
        kp_calloc((size_t)(c->cpart_count > 0 ? c->cpart_count : 1), sizeof(*v));
    int n = 0;
    for (int i = 0; v != NULL && i < c->cpart_count; i++) {
        if (c->cparts[i]->revoking != revoking) {
            continue;
        }
        v[n].topic = c->cparts[i]->topic;
        v[n].partition = c->cparts[i]->partition;
        v[n].offset = sc_cpart_next_for_app(c, c->cparts[i]);
        n++;
    }
    *count = n;
    return v;
}

/* Queues the "revoked" event of the assignment (cooperative: the partitions
 * marked revoking when `revoking`, else the others; eager marks none); with
 * `ack` the group waits for the user's poll to have run it. */
static bool post_revoked_of(struct sc_client *c, struct sc_group *g, bool revoking, bool ack)
{
    int n = 0;
    struct samsa_partition *v = assignment_view(c, revoking, &n);
    bool posted = v != NULL && n > 0 && sc_post_rebalance(c, false, v, (size_t)n, ack);
    kp_free(v);
    if (posted && ack) {
        g->acks_posted++;
    }
    return posted;
}

static bool post_revoked(struct sc_client *c, struct sc_group *g, bool ack)
{
    return post_revoked_of(c, g, false, ack);
}

/* Drops the assignment at once (the partitions are lost to this member). */
static void drop_assignment(struct sc_client *c, struct sc_group *g, bool post)
{
    if (post) {
        (void)post_revoked(c, g, false);
    }
    if (c->cpart_count > 0) {
        int err = sc_consumer_set_assignment(c, NULL, 0);
        (void)err; /* clearing allocates one slot; on failure the old one stays */
    }
}

static int join_backoff_ms(const struct sc_client *c)
{
    return c->v->retry_backoff_ms > 1000 ? c->v->retry_backoff_ms : 1000;
}

/* The generation is gone: drop everything and join again. */
static void lost(struct sc_client *c, struct sc_group *g, bool reset_member, const char *why)
{
    sc_log(c, "group %s: membership lost (%s): joining again", c->v->group_id, why);
    drop_assignment(c, g, true);
    g->generation = -1;
    if (reset_member) {
        kp_free(g->member_id);
        g->member_id = NULL;
    }
    clear_members(g);
    g->rejoin_pending = false;
    g->join_at = sc_now_ms();
    set_state(c, g, G_UNJOINED);
}

static int send_commit(struct sc_client *c, struct sc_conn *conn, struct sc_commit_arg *a,
                       sc_resp_fn *fn, void *ctx);
static struct sc_commit_arg *commit_items(struct sc_client *c, const struct samsa_partition *offsets,
                                          size_t count, bool changed_only);
static void on_revoke_commit(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                             void *vctx);
struct sc_conn *sc_group_coordinator(struct sc_client *c);

/* A rejoin is wanted. */
static void rejoin(struct sc_client *c, struct sc_group *g, const char *why)
{
    if (g->closing) {
        return;
    }
    switch (g->state) {
    case G_JOINING:
    case G_ASSIGN_MD:
    case G_SYNC_READY:
    case G_SYNCING:
        g->rejoin_pending = true;
        return;
    case G_STABLE:
        break;
    default:
        return;
    }
    sc_log(c, "group %s: rejoining: %s", c->v->group_id, why);
    g->join_at = sc_now_ms();
    if (cooperative(c)) {
        /* The assignment stays and is fetched on; the positions are
         * committed first (Java's onJoinPrepare) and the partitions marked
         * revoking wait for their "revoked" event to have been served. */
        set_state(c, g, G_REVOKING);
        g->revoke_commit_inflight = false;
        g->revoke_commit_todo = c->v->enable_auto_commit && c->cpart_count > 0;
        g->revoke_wait_ack = c->conf->rebalance_cb != NULL && post_revoked_of(c, g, true, true);
        g->revoke_deadline = sc_now_ms() + c->v->max_poll_interval_ms;
        return;
    }
    if (c->cpart_count == 0) {
        set_state(c, g, G_UNJOINED);
        return;
    }
    set_state(c, g, G_REVOKING);
    sc_consumer_stop_fetching(c);
    /* Sent by membership_serve: rejoin runs inside response handlers, whose
     * response lives in the arena a send would reuse. */
    g->revoke_commit_inflight = false;
    g->revoke_commit_todo = c->v->enable_auto_commit;
    g->revoke_wait_ack = c->conf->rebalance_cb != NULL && post_revoked(c, g, true);
    /* A user who does not poll is out of the group after this anyway. */
    g->revoke_deadline = sc_now_ms() + c->v->max_poll_interval_ms;
}

void sc_group_metadata(struct sc_client *c, const struct kp_MetadataResponse *md)
{
    struct sc_group *g = c->group;
    if (g == NULL || !c->subscribed) {
        return;
    }
    for (int i = 0; i < g->topic_count; i++) {
        for (int32_t t = 0; t < md->Topics.count; t++) {
            const struct kp_MetadataResponse_MetadataResponseTopic *mt = &md->Topics.items[t];
            if (!kp_str_eq_c(mt->Name, g->topics[i])) {
                continue;
            }
            int32_t n = mt->Partitions.count > 0 ? mt->Partitions.count : 0;
            int32_t had = g->topic_parts[i] == TOPIC_MISSING ? 0 : g->topic_parts[i];
            if (mt->ErrorCode == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
                /* librdkafka: "Subscribed topic not available" (a consumer
                 * error); once per topic until it is seen */
                if (g->topic_parts[i] != TOPIC_MISSING) {
                    sc_post_error(c, SAMSA_ERR_UNKNOWN_TOPIC,
                                  "subscribed topic %s not available: no such topic in the "
                                  "cluster",
                                  g->topics[i]);
                }
                if (had > 0) {
                    char why[300];
                    snprintf(why, sizeof(why), "%s is gone, had %d partitions", g->topics[i],
                             had);
                    rejoin(c, g, why);
                }
                g->topic_parts[i] = TOPIC_MISSING;
                continue;
            }
            if (had >= 0 && had != n) {
                char why[300];
                snprintf(why, sizeof(why), "%s has %d partitions, had %d", g->topics[i], n, had);
                g->topic_parts[i] = n;
                rejoin(c, g, why);
            }
            g->topic_parts[i] = n;
        }
    }
}

void sc_group_polled(struct sc_client *c, bool entering)
{
    struct sc_group *g = c->group;
    if (g == NULL || !c->subscribed) {
        return;
    }
    g->last_poll = sc_now_ms();
    if (entering) {
        g->polling++;
        if (g->state == G_POLL_EXCEEDED && !g->closing) {
            g->join_at = g->last_poll;
            set_state(c, g, G_UNJOINED);
            sc_wake(c);
        }
    } else if (g->polling > 0) {
        g->polling--;
    }
}

/* ---------------------------------------------------------- coordinator */

static bool coordinator_error(int err)
{
    return err == KP_ERR_NOT_COORDINATOR || err == KP_ERR_COORDINATOR_NOT_AVAILABLE ||
           err == KP_ERR_COORDINATOR_LOAD_IN_PROGRESS || err == SAMSA_ERR_TRANSPORT ||
           err == SAMSA_ERR_TIMED_OUT || err == SAMSA_ERR_BAD_RESPONSE;
}

static void lose_coordinator(struct sc_client *c)
{
    struct sc_group *g = group(c);
    if (g != NULL && g->coord_id >= 0) {
        sc_log(c, "group %s: coordinator %d lost: looking for it again", c->v->group_id,
               g->coord_id);
        g->coord_id = -1;
        g->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
    }
}

static void on_find_coordinator(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                void *ctx)
{
    (void)conn;
    (void)ctx;
    struct sc_group *g = group(c);
    if (g == NULL) {
        return;
    }
    g->coord_inflight = false;
    if (err != 0) {
        g->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    const struct kp_FindCoordinatorResponse *r = body;
    if (r->ErrorCode != 0 || r->Host.len <= 0 || r->Port <= 0 || r->Port > 65535 ||
        r->NodeId < 0) {
        g->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        sc_log(c, "FindCoordinator: %s", kp_err_name(sc_err_from_wire(r->ErrorCode)));
        return;
    }
    sc_broker_learn(c, r->NodeId, r->Host, r->Port);
    if (sc_broker_find(c, r->NodeId) == NULL) {
        g->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    g->coord_id = r->NodeId;
    sc_log(c, "group %s: coordinator is node %d", c->v->group_id, r->NodeId);
}

struct sc_conn *sc_group_coordinator(struct sc_client *c)
{
    struct sc_group *g = group(c);
    if (g == NULL) {
        return NULL;
    }
    if (g->coord_id >= 0) {
        struct sc_conn *conn = sc_conn_get_coordinator(c, g->coord_id);
        if (sc_conn_failed(c, conn)) {
            /* Its connection was lost or refused with nothing in flight
             * to fail (between heartbeats): the coordinator died or its
             * partition moved. Ask who leads the group now (the Java
             * client's markCoordinatorUnknown on a disconnect). */
            lose_coordinator(c);
            conn = NULL;
        } else if (conn != NULL) {
            return sc_conn_is_up(conn) ? conn : NULL;
        }
        g->coord_id = -1;
    }
    if (g->coord_inflight || g->coord_retry_at > sc_now_ms()) {
        return NULL;
    }
    struct sc_conn *any = sc_conn_any_up(c);
    if (any == NULL) {
        return NULL;
    }
    int16_t ver = sc_conn_version(any, KP_API_FIND_COORDINATOR, 0, 2);
    if (ver < 0) {
        return NULL;
    }
    struct kp_FindCoordinatorRequest req;
    kp_FindCoordinatorRequest_init(&req);
    req.Key = kp_str_c(c->v->group_id);
    req.KeyType = 0;
    if (sc_conn_send(c, any, KP_API_FIND_COORDINATOR, ver, &req, on_find_coordinator, NULL) == 0) {
        g->coord_inflight = true;
    }
    return NULL;
}

/* ------------------------------------------------- stored offsets (fetch) */

struct ofetch_ctx {
    int count;
    struct {
        char *topic;
        int32_t partition;
        int epoch;
    } items[];
};

static void ofetch_ctx_free(struct ofetch_ctx *ctx)
{
    for (int i = 0; i < ctx->count; i++) {
        kp_free(ctx->items[i].topic);
    }
    kp_free(ctx);
}

static int64_t committed_in(const struct kp_OffsetFetchResponse *r, const char *topic,
                            int32_t partition, int *err)
{
    *err = r->ErrorCode != 0 ? sc_err_from_wire(r->ErrorCode) : SAMSA_ERR_BAD_RESPONSE;
    for (int32_t i = 0; i < r->Topics.count; i++) {
        if (!kp_str_eq_c(r->Topics.items[i].Name, topic)) {
            continue;
        }
        for (int32_t j = 0; j < r->Topics.items[i].Partitions.count; j++) {
            const struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *p =
                &r->Topics.items[i].Partitions.items[j];
            if (p->PartitionIndex == partition) {
                *err = sc_err_from_wire(p->ErrorCode);
                return p->CommittedOffset;
            }
        }
    }
    return -1;
}

static void on_stored_offsets(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                              void *vctx)
{
    (void)conn;
    struct ofetch_ctx *ctx = vctx;
    struct sc_group *g = group(c);
    if (g != NULL) {
        g->ofetch_inflight = false;
    }
    for (int i = 0; i < ctx->count; i++) {
        struct sc_cpart *p = sc_cpart_find(c, ctx->items[i].topic, ctx->items[i].partition);
        if (p == NULL || p->epoch != ctx->items[i].epoch || p->state != SC_CP_NEED_OFFSET ||
            p->reset != SAMSA_OFFSET_STORED) {
            continue;
        }
        int perr = err;
        int64_t off = -1;
        if (err == 0) {
            off = committed_in(body, p->topic, p->partition, &perr);
        }
        if (perr != 0) {
            if (coordinator_error(perr)) {
                lose_coordinator(c);
            }
            p->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
            continue;
        }
        if (off >= 0) {
            p->state = SC_CP_ACTIVE;
            p->position = off;
            p->committed = off;
        } else {
            /* Nothing committed: auto.offset.reset decides. */
            p->reset = c->v->auto_offset_reset == SC_RESET_EARLIEST ? SAMSA_OFFSET_BEGINNING
                                                                     : SAMSA_OFFSET_END;
            if (c->v->auto_offset_reset == SC_RESET_ERROR) {
                p->state = SC_CP_STOPPED;
                sc_post_error(c, KP_ERR_OFFSET_OUT_OF_RANGE,
                              "%s [%d]: no committed offset and auto.offset.reset=error",
                              p->topic, p->partition);
            }
        }
        pthread_cond_broadcast(&c->ev_cond);
    }
    ofetch_ctx_free(ctx);
}

/* An OffsetFetch request for items (topic, partition) onto conn. */
static int send_offset_fetch(struct sc_client *c, struct sc_conn *conn, char *const *topics,
                             const int32_t *partitions, int n, sc_resp_fn *fn, void *ctx)
{
    int16_t ver = sc_conn_version(conn, KP_API_OFFSET_FETCH, 1, 5);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_OffsetFetchRequest_OffsetFetchRequestTopic *ts =
        kp_arena_alloc(&c->arena, sizeof(*ts) * (size_t)n);
    int32_t *ps = kp_arena_alloc(&c->arena, sizeof(*ps) * (size_t)n);
    if (ts == NULL || ps == NULL) {
        kp_arena_reset(&c->arena);
        return SAMSA_ERR_NOMEM;
    }
    int nt = 0;
    int np = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int t = 0; t < nt; t++) {
            seen = seen || kp_str_eq_c(ts[t].Name, topics[i]);
        }
        if (seen) {
            continue;
        }
        ts[nt].Name = kp_str_c(topics[i]);
        ts[nt].PartitionIndexes.items = &ps[np];
        ts[nt].PartitionIndexes.count = 0;
        for (int j = i; j < n; j++) {
            if (strcmp(topics[j], topics[i]) == 0) {
                ps[np++] = partitions[j];
                ts[nt].PartitionIndexes.count++;
            }
        }
        nt++;
    }
    struct kp_OffsetFetchRequest req;
    kp_OffsetFetchRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.Topics.items = ts;
    req.Topics.count = nt;
    int err = sc_conn_send(c, conn, KP_API_OFFSET_FETCH, ver, &req, fn, ctx);
    kp_arena_reset(&c->arena);
    return err;
}

static void fetch_stored(struct sc_client *c, struct sc_conn *coord)
{
    struct sc_group *g = group(c);
    int n = 0;
    for (int i = 0; i < c->cpart_count; i++) {
        const struct sc_cpart *p = c->cparts[i];
        n += p->state == SC_CP_NEED_OFFSET && p->reset == SAMSA_OFFSET_STORED &&
                     p->retry_at <= sc_now_ms() && !p->revoking
                 ? 1
                 : 0;
    }
    if (n == 0 || g->ofetch_inflight) {
        return;
    }
    struct ofetch_ctx *ctx = kp_calloc(1, sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
    char **topics = kp_calloc((size_t)n, sizeof(*topics));
    int32_t *parts = kp_calloc((size_t)n, sizeof(*parts));
    if (ctx == NULL || topics == NULL || parts == NULL) {
        kp_free(ctx);
        kp_free(topics);
        kp_free(parts);
        return;
    }
    int k = 0;
    for (int i = 0; i < c->cpart_count && k < n; i++) {
        const struct sc_cpart *p = c->cparts[i];
        if (p->state == SC_CP_NEED_OFFSET && p->reset == SAMSA_OFFSET_STORED &&
            p->retry_at <= sc_now_ms() && !p->revoking) {
            ctx->items[k].topic = sc_strdup(p->topic);
            if (ctx->items[k].topic == NULL) {
                break;
            }
            ctx->items[k].partition = p->partition;
            ctx->items[k].epoch = p->epoch;
            topics[k] = ctx->items[k].topic;
            parts[k] = p->partition;
            k++;
        }
    }
    ctx->count = k;
    if (k > 0 && send_offset_fetch(c, coord, topics, parts, k, on_stored_offsets, ctx) == 0) {
        g->ofetch_inflight = true;
    } else {
        ofetch_ctx_free(ctx);
    }
    kp_free(topics);
    kp_free(parts);
}

/* ---------------------------------------------------------------- commit */

/* Items of offsets[0..count), or of every position the application has
 * been handed (offsets NULL; only those that moved since their last commit
 * when `changed_only`). Lock held. */
static struct sc_commit_arg *commit_items(struct sc_client *c, const struct samsa_partition *offsets,
                                          size_t count, bool changed_only)
{
    struct sc_commit_arg *a = kp_calloc(1, sizeof(*a));
    size_t n = offsets != NULL ? count : (size_t)c->cpart_count;
    if (a == NULL) {
        return NULL;
    }
    a->generation = -1;
    a->items = kp_calloc(n > 0 ? n : 1, sizeof(*a->items));
    if (a->items == NULL) {
        kp_free(a);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *topic;
        int32_t partition;
        int64_t off;
        if (offsets != NULL) {
            topic = offsets[i].topic;
            partition = offsets[i].partition;
            off = offsets[i].offset;
        } else {
            const struct sc_cpart *p = c->cparts[i];
            topic = p->topic;
            partition = p->partition;
            off = p->app_offset;
            if (off < 0 || (changed_only && off == p->committed)) {
                continue;
            }
        }
        a->items[a->count].topic = sc_strdup(topic);
        if (a->items[a->count].topic == NULL) {
            sc_op_commit_arg_free(a);
            return NULL;
        }
        a->items[a->count].partition = partition;
        a->items[a->count].offset = off;
        a->count++;
    }
    return a;
}

/* Whether a subscribed member may commit now: only inside a generation. */
static bool in_generation(const struct sc_client *c)
{
    const struct sc_group *g = c->group;
    return !c->subscribed ||
           (g != NULL && g->generation >= 0 && (g->state == G_STABLE || g->state == G_REVOKING));
}

/* An OffsetCommit of a's items onto conn, with the member's generation and
 * id (a subscribed consumer) or -1 and "" (a simple one). */
static int send_commit(struct sc_client *c, struct sc_conn *conn, struct sc_commit_arg *a,
                       sc_resp_fn *fn, void *ctx)
{
    int16_t ver = sc_conn_version(conn, KP_API_OFFSET_COMMIT, 2, 7);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *ts =
        kp_arena_alloc(&c->arena, sizeof(*ts) * (size_t)(a->count > 0 ? a->count : 1));
    struct kp_OffsetCommitRequest_OffsetCommitRequestPartition *ps =
        kp_arena_alloc(&c->arena, sizeof(*ps) * (size_t)(a->count > 0 ? a->count : 1));
    if (ts == NULL || ps == NULL) {
        kp_arena_reset(&c->arena);
        return SAMSA_ERR_NOMEM;
    }
    int nt = 0;
    int np = 0;
    for (int i = 0; i < a->count; i++) {
        bool seen = false;
        for (int t = 0; t < nt; t++) {
            seen = seen || kp_str_eq_c(ts[t].Name, a->items[i].topic);
        }
        if (seen) {
            continue;
        }
        ts[nt].Name = kp_str_c(a->items[i].topic);
        ts[nt].Partitions.items = &ps[np];
        ts[nt].Partitions.count = 0;
        for (int j = i; j < a->count; j++) {
            if (strcmp(a->items[j].topic, a->items[i].topic) != 0) {
                continue;
            }
            memset(&ps[np], 0, sizeof(ps[np]));
            ps[np].PartitionIndex = a->items[j].partition;
            ps[np].CommittedOffset = a->items[j].offset;
            ps[np].CommittedLeaderEpoch = -1;
            ps[np].CommitTimestamp = -1;
            ps[np].CommittedMetadata = kp_str_c("");
            np++;
            ts[nt].Partitions.count++;
        }
        nt++;
    }
    const struct sc_group *g = c->group;
    bool member = c->subscribed && g != NULL;
    struct kp_OffsetCommitRequest req;
    kp_OffsetCommitRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.GenerationId = member ? g->generation : -1;
    req.MemberId = kp_str_c(member ? member_id(g) : "");
    req.GroupInstanceId = member && c->v->group_instance_id[0] != '\0'
                              ? kp_str_c(c->v->group_instance_id)
                              : KP_STR_NULL;
    req.RetentionTimeMs = -1;
    req.Topics.items = ts;
    req.Topics.count = nt;
    a->generation = req.GenerationId;
    int err = sc_conn_send(c, conn, KP_API_OFFSET_COMMIT, ver, &req, fn, ctx);
    kp_arena_reset(&c->arena);
    return err;
}

/* The first error of an OffsetCommit answer (or of its transport). */
static int commit_result(int err, const void *body)
{
    if (err != 0) {
        return err;
    }
    const struct kp_OffsetCommitResponse *r = body;
    for (int32_t i = 0; i < r->Topics.count; i++) {
        for (int32_t j = 0; j < r->Topics.items[i].Partitions.count; j++) {
            int e = sc_err_from_wire(r->Topics.items[i].Partitions.items[j].ErrorCode);
            if (e != 0) {
                return e;
            }
        }
    }
    return SAMSA_OK;
}

/* What a commit's answer says about the membership it was made in. */
static void commit_answered(struct sc_client *c, const struct sc_commit_arg *a, int res)
{
    struct sc_group *g = c->group;
    if (res == SAMSA_OK) {
        for (int i = 0; i < a->count; i++) {
            struct sc_cpart *p = sc_cpart_find(c, a->items[i].topic, a->items[i].partition);
            if (p != NULL) {
                p->committed = a->items[i].offset;
            }
        }
        return;
    }
    if (coordinator_error(res)) {
        lose_coordinator(c);
        return;
    }
    if (!c->subscribed || g == NULL || a->generation != g->generation || a->generation < 0) {
        return; /* an answer about a generation already left */
    }
    if (res == KP_ERR_UNKNOWN_MEMBER_ID) {
        lost(c, g, true, "OffsetCommit: UNKNOWN_MEMBER_ID");
    } else if (res == KP_ERR_ILLEGAL_GENERATION) {
        lost(c, g, false, "OffsetCommit: ILLEGAL_GENERATION");
    } else if (res == KP_ERR_REBALANCE_IN_PROGRESS) {
        rejoin(c, g, "OffsetCommit: REBALANCE_IN_PROGRESS");
    }
}

static void on_revoke_commit(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                             void *vctx)
{
    (void)conn;
    struct sc_commit_arg *a = vctx;
    int res = commit_result(err, body);
    struct sc_group *g = c->group;
    if (g != NULL) {
        g->revoke_commit_inflight = false;
    }
    if (res != SAMSA_OK) {
        sc_post_error(c, res, "group %s: commit before rejoining: %s", c->v->group_id,
                      samsa_err_str(res));
    }
    commit_answered(c, a, res);
    sc_op_commit_arg_free(a);
}

static void on_commit(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *vctx)
{
    (void)conn;
    struct sc_op *op = vctx;
    struct sc_commit_arg *a = op->arg;
    op->sent = false;
    int res = commit_result(err, body);
    if (coordinator_error(res) && sc_now_ms() < op->deadline) {
        lose_coordinator(c);
        op->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    commit_answered(c, a, res);
    if (res != SAMSA_OK) {
        sc_errf(op->errstr, sizeof(op->errstr), "OffsetCommit for group %s: %s", c->v->group_id,
                samsa_err_str(res));
        if (op->abandoned) {
            sc_post_error(c, res, "%s", op->errstr);
        }
    }
    sc_op_finish(c, op, res);
}

int64_t sc_op_commit_serve(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_commit_arg *a = op->arg;
    if (a->count == 0) {
        sc_op_finish(c, op, SAMSA_OK);
        return INT64_MAX;
    }
    if (!in_generation(c)) {
        sc_errf(op->errstr, sizeof(op->errstr),
                "OffsetCommit for group %s: not a member of a generation now (rebalancing)",
                c->v->group_id);
        if (op->abandoned) {
            sc_post_error(c, KP_ERR_REBALANCE_IN_PROGRESS, "%s", op->errstr);
        }
        sc_op_finish(c, op, KP_ERR_REBALANCE_IN_PROGRESS);
        return INT64_MAX;
    }
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord == NULL) {
        return now + 20;
    }
    int err = send_commit(c, coord, a, on_commit, op);
    if (err == SAMSA_ERR_UNSUPPORTED || err == SAMSA_ERR_NOMEM) {
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
    op->sent = err == SAMSA_OK;
    return INT64_MAX;
}

static void on_committed(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                         void *vctx)
{
    (void)conn;
    struct sc_op *op = vctx;
    struct sc_commit_arg *a = op->arg;
    op->sent = false;
    int res = err;
    for (int i = 0; i < a->count && err == 0; i++) {
        int perr = 0;
        a->items[i].offset = committed_in(body, a->items[i].topic, a->items[i].partition, &perr);
        if (perr != 0 && res == 0) {
            res = perr;
        }
        if (a->items[i].offset < 0) {
            a->items[i].offset = -1001;
        }
    }
    if (coordinator_error(res) && sc_now_ms() < op->deadline) {
        lose_coordinator(c);
        op->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    sc_op_finish(c, op, res);
}

int64_t sc_op_committed_serve(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_commit_arg *a = op->arg;
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord == NULL) {
        return now + 20;
    }
    char **topics = kp_calloc((size_t)(a->count > 0 ? a->count : 1), sizeof(*topics));
    int32_t *parts = kp_calloc((size_t)(a->count > 0 ? a->count : 1), sizeof(*parts));
    if (topics == NULL || parts == NULL) {
        kp_free(topics);
        kp_free(parts);
        sc_op_finish(c, op, SAMSA_ERR_NOMEM);
        return INT64_MAX;
    }
    for (int i = 0; i < a->count; i++) {
        topics[i] = a->items[i].topic;
        parts[i] = a->items[i].partition;
    }
    int err = send_offset_fetch(c, coord, topics, parts, a->count, on_committed, op);
    kp_free(topics);
    kp_free(parts);
    if (err == SAMSA_ERR_UNSUPPORTED || err == SAMSA_ERR_NOMEM) {
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
    op->sent = err == SAMSA_OK;
    return INT64_MAX;
}

static struct sc_op *commit_op(struct sc_client *c, const struct samsa_partition *offsets,
                               size_t count, bool changed_only)
{
    struct sc_commit_arg *a = commit_items(c, offsets, count, changed_only);
    if (a == NULL) {
        return NULL;
    }
    struct sc_op *op = sc_op_new(SC_OP_COMMIT, a);
    if (op == NULL) {
        sc_op_commit_arg_free(a);
    }
    return op;
}

/* Queues op for the I/O thread without waiting (lock held). */
static void submit(struct sc_client *c, struct sc_op *op, int timeout_ms)
{
    op->abandoned = true;
    op->deadline = sc_now_ms() + timeout_ms;
    if (c->ops_tail != NULL) {
        c->ops_tail->next = op;
    } else {
        c->ops = op;
    }
    c->ops_tail = op;
}

static int gated_consumer_commit(samsa_consumer *sc, const struct samsa_partition *offsets, size_t count,
                          bool async, int timeout_ms)
{
    if (sc == NULL || (offsets == NULL && count > 0)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    if (c->v->group_id[0] == '\0') {
        return SAMSA_ERR_STATE;
    }
    for (size_t i = 0; offsets != NULL && i < count; i++) {
        if (offsets[i].topic == NULL || offsets[i].partition < 0 || offsets[i].offset < 0) {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    pthread_mutex_lock(&c->lock);
    struct sc_op *op = commit_op(c, offsets, count, false);
    if (op != NULL && async) {
        submit(c, op, c->v->request_timeout_ms);
    }
    pthread_mutex_unlock(&c->lock);
    if (op == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    sc_wake(c);
    if (async) {
        return SAMSA_OK;
    }
    int err = sc_op_run(c, &op, timeout_ms, NULL, 0);
    sc_op_free(op);
    return err;
}

int samsa_consumer_commit(samsa_consumer *sc, const struct samsa_partition *offsets, size_t count,
                          bool async, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_commit(sc, offsets, count, async, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_committed(samsa_consumer *sc, struct samsa_partition *parts, size_t count,
                             int timeout_ms)
{
    if (sc == NULL || parts == NULL || count == 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    if (c->v->group_id[0] == '\0') {
        return SAMSA_ERR_STATE;
    }
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || parts[i].partition < 0) {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    pthread_mutex_lock(&c->lock);
    struct sc_op *op = commit_op(c, parts, count, false);
    pthread_mutex_unlock(&c->lock);
    if (op == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    op->kind = SC_OP_COMMITTED;
    int err = sc_op_run(c, &op, timeout_ms, NULL, 0);
    if (op != NULL) {
        struct sc_commit_arg *a = op->arg;
        for (size_t i = 0; err == SAMSA_OK && i < count && (int)i < a->count; i++) {
            parts[i].offset = a->items[i].offset;
        }
        sc_op_free(op);
    }
    return err;
}

int samsa_consumer_committed(samsa_consumer *sc, struct samsa_partition *parts, size_t count,
                             int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_committed(sc, parts, count, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

/* ------------------------------------------------------------ membership */

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int gated_consumer_subscribe(samsa_consumer *sc, const char *const *topics, size_t count)
{
    if (sc == NULL || topics == NULL || count == 0 || count > MAX_SUB_TOPICS) {
        return SAMSA_ERR_INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        if (topics[i] == NULL || topics[i][0] == '\0') {
            return SAMSA_ERR_INVALID_ARG;
        }
        /* librdkafka's convention: a name starting with ^ is a regular
         * expression (no topic name can hold ^: Kafka's legal characters
         * are [a-zA-Z0-9._-], Kafka 2.0's common/internals/Topic.java).
         * Refused rather than matching nothing. */
        if (topics[i][0] == '^') {
            return SAMSA_ERR_NOT_IMPLEMENTED;
        }
    }
    struct sc_client *c = sc->c;
    if (c->v->group_id[0] == '\0') {
        return SAMSA_ERR_INVALID_CONFIG;
    }
    char **names = kp_calloc(count, sizeof(*names));
    int32_t *parts = kp_calloc(count, sizeof(*parts));
    int n = 0;
    if (names == NULL || parts == NULL) {
        goto out_nomem;
    }
    for (size_t i = 0; i < count; i++) {
        names[n] = sc_strdup(topics[i]);
        if (names[n] == NULL) {
            goto out_nomem;
        }
        n++;
    }
    qsort(names, (size_t)n, sizeof(*names), cmp_cstr);
    int u = 0;
    for (int i = 0; i < n; i++) {
        if (u > 0 && strcmp(names[u - 1], names[i]) == 0) {
            kp_free(names[i]);
            continue;
        }
        names[u] = names[i];
        parts[u] = -1;
        u++;
    }
    n = u;
    pthread_mutex_lock(&c->lock);
    struct sc_group *g = group(c);
    if (g == NULL || (!c->subscribed && c->cpart_count > 0) || (g != NULL && g->closing)) {
        pthread_mutex_unlock(&c->lock);
        for (int i = 0; i < n; i++) {
            kp_free(names[i]);
        }
        kp_free(names);
        kp_free(parts);
        return g == NULL ? SAMSA_ERR_NOMEM : SAMSA_ERR_STATE;
    }
    bool same = c->subscribed && g->topic_count == n;
    for (int i = 0; same && i < n; i++) {
        same = strcmp(g->topics[i], names[i]) == 0;
    }
    free_topics(g);
    g->topics = names;
    g->topic_parts = parts;
    g->topic_count = n;
    c->subscribed = true;
    c->md_wanted = true;
    if (g->state == G_IDLE) {
        g->join_at = 0;
        g->last_poll = sc_now_ms();
        set_state(c, g, G_UNJOINED);
    } else if (!same) {
        rejoin(c, g, "the subscription changed");
    }
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    return SAMSA_OK;
out_nomem:
    for (int i = 0; i < n; i++) {
        kp_free(names[i]);
    }
    kp_free(names);
    kp_free(parts);
    return SAMSA_ERR_NOMEM;
}

int samsa_consumer_subscribe(samsa_consumer *sc, const char *const *topics, size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_subscribe(sc, topics, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

/* JoinGroup ---------------------------------------------------------- */

static int assignor_by_name(const struct sc_client *c, struct kp_str name)
{
    for (int i = 0; i < c->v->assignor_count; i++) {
        if (kp_str_eq_c(name, sc_assignor_name(c->v->assignors[i]))) {
            return c->v->assignors[i];
        }
    }
    return -1;
}

/* Copies the members of a leader's JoinGroup answer (their subscriptions
 * decoded). A member whose Subscription does not decode gets no topics. */
static int take_members(struct sc_client *c, struct sc_group *g,
                        const struct kp_JoinGroupResponse *r)
{
    clear_members(g);
    int n = r->Members.count > 0 ? r->Members.count : 0;
    g->members = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*g->members));
    if (g->members == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        const struct kp_JoinGroupResponse_JoinGroupResponseMember *m = &r->Members.items[i];
        struct sc_member *dst = &g->members[g->member_count];
        dst->member_id = sc_strndup(m->MemberId.ptr != NULL ? m->MemberId.ptr : "",
                                    (size_t)(m->MemberId.len > 0 ? m->MemberId.len : 0));
        if (dst->member_id == NULL) {
            return SAMSA_ERR_NOMEM;
        }
        g->member_count++;
        if (m->GroupInstanceId.len >= 0 && m->GroupInstanceId.ptr != NULL) {
            dst->instance_id = sc_strndup(m->GroupInstanceId.ptr, (size_t)m->GroupInstanceId.len);
        }
        int err = m->Metadata.len > 0 ? sc_subscription_decode(m->Metadata.ptr,
                                                               (size_t)m->Metadata.len,
                                                               &dst->topics, &dst->topic_count)
                                      : SAMSA_ERR_BAD_RESPONSE;
        if (err == SAMSA_ERR_NOMEM) {
            return err;
        }
        if (err != SAMSA_OK) {
            sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                          "group %s: member %s sent a Subscription that does not decode; it "
                          "gets no partitions",
                          c->v->group_id, dst->member_id);
            continue;
        }
        dst->owned_generation = -1;
        if (sc_assignor_cooperative(g->assignor)) {
            /* what the member owns now: OwnedPartitions, else its UserData
             * (none when neither decodes: it is then treated as new) */
            err = sc_subscription_ownership(m->Metadata.ptr, (size_t)m->Metadata.len, &dst->owned,
                                            &dst->owned_count, &dst->owned_generation);
            if (err == SAMSA_ERR_NOMEM) {
                return err;
            }
            continue;
        }
        /* the sticky assignor's UserData: what the member had (none when absent or
         * not decodable: it is then treated as a new member) */
        struct kp_bytes ud;
        if (sc_subscription_user_data(m->Metadata.ptr, (size_t)m->Metadata.len, &ud) ==
                SAMSA_OK &&
            ud.len > 0) {
            err = sc_sticky_user_data_decode(ud.ptr, (size_t)ud.len, &dst->owned,
                                             &dst->owned_count, &dst->owned_generation);
            if (err == SAMSA_ERR_NOMEM) {
                return err;
            }
        }
    }
    return SAMSA_OK;
}

static int cmp_tp(const void *a, const void *b)
{
    const struct sc_tp *x = a;
    const struct sc_tp *y = b;
    int d = strcmp(x->topic, y->topic);
    return d != 0 ? d : (x->partition > y->partition) - (x->partition < y->partition);
}

/* Keeps parts[0..n) (copied, sorted) as this member's last assignment. */
static int remember_owned(struct sc_group *g, const struct samsa_partition *parts, int n)
{
    struct sc_tp *tps = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*tps));
    if (tps == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        tps[i].topic = sc_strdup(parts[i].topic);
        tps[i].partition = parts[i].partition;
        if (tps[i].topic == NULL) {
            sc_tps_free(tps, i);
            return SAMSA_ERR_NOMEM;
        }
    }
    qsort(tps, (size_t)n, sizeof(*tps), cmp_tp);
    sc_tps_free(g->owned, g->owned_count);
    g->owned = tps;
    g->owned_count = n;
    g->owned_generation = g->generation;
    return SAMSA_OK;
}

/* cooperative: an error between JoinGroup and SyncGroup that ends the
 * membership loses what the member kept fetching (eager had dropped it). */
static void coop_lost(struct sc_client *c, struct sc_group *g, const char *why)
{
    if (cooperative(c) && c->cpart_count > 0) {
        sc_log(c, "group %s: membership lost (%s): partitions dropped", c->v->group_id, why);
        drop_assignment(c, g, true);
    }
}

static void on_join(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    (void)ctx;
    struct sc_group *g = c->group;
    if (g == NULL || g->state != G_JOINING) {
        return;
    }
    int64_t now = sc_now_ms();
    if (err != 0) {
        lose_coordinator(c);
        g->join_at = now + c->v->retry_backoff_ms;
        set_state(c, g, G_UNJOINED);
        return;
    }
    const struct kp_JoinGroupResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    g->join_at = now;
    set_state(c, g, G_UNJOINED);
    switch (e) {
    case SAMSA_OK:
        break;
    case KP_ERR_MEMBER_ID_REQUIRED:
        set_member_id(g, r->MemberId); /* and join again at once with it */
        return;
    case KP_ERR_UNKNOWN_MEMBER_ID:
        set_member_id(g, KP_STR_NULL);
        coop_lost(c, g, "JoinGroup: UNKNOWN_MEMBER_ID");
        return;
    case KP_ERR_REBALANCE_IN_PROGRESS:
        return;
    case KP_ERR_FENCED_INSTANCE_ID:
        sc_post_error(c, SAMSA_ERR_FATAL,
                      "group %s: FENCED_INSTANCE_ID: another consumer uses group.instance.id=%s;"
                      " this one stops consuming",
                      c->v->group_id, c->v->group_instance_id);
        set_state(c, g, G_FATAL);
        return;
    default:
        if (coordinator_error(e)) {
            lose_coordinator(c);
            g->join_at = now + c->v->retry_backoff_ms;
            return;
        }
        sc_post_error(c, e, "group %s: JoinGroup: %s; trying again", c->v->group_id,
                      samsa_err_str(e));
        g->join_at = now + join_backoff_ms(c);
        return;
    }
    int assignor = assignor_by_name(c, r->ProtocolName);
    set_member_id(g, r->MemberId);
    if (g->member_id == NULL || assignor < 0) {
        sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                      "group %s: JoinGroup answered protocol \"%.*s\", not one offered", c->v->group_id,
                      (int)(r->ProtocolName.len > 0 ? r->ProtocolName.len : 0),
                      r->ProtocolName.ptr != NULL ? r->ProtocolName.ptr : "");
        g->join_at = now + join_backoff_ms(c);
        return;
    }
    g->generation = r->GenerationId;
    g->assignor = assignor;
    g->leader = kp_str_eq(r->Leader, r->MemberId);
    g->last_hb_ok = now;
    sc_log(c, "group %s: generation %d, member %s%s, protocol %s", c->v->group_id,
           g->generation, g->member_id, g->leader ? " (leader)" : "", sc_assignor_name(assignor));
    if (g->leader) {
        if (take_members(c, g, r) != SAMSA_OK) {
            clear_members(g);
            g->join_at = now + c->v->retry_backoff_ms;
            return;
        }
        g->assign_md_inflight = false;
        set_state(c, g, G_ASSIGN_MD);
    } else {
        set_state(c, g, G_SYNC_READY);
    }
}

/* cooperative-sticky's Subscription (v3) into w: what the member fetches
 * now, sorted by topic then partition, and the generation that gave it (-1
 * with nothing owned). A failure is w's error. */
static void coop_subscription(struct sc_client *c, const struct sc_group *g, struct kp_writer *w)
{
    int n = c->cpart_count;
    struct sc_tp *tps = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*tps));
    if (tps == NULL) {
        kp_wr_fail(w, SAMSA_ERR_NOMEM);
        return;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!c->cparts[i]->revoking) {
            tps[k].topic = c->cparts[i]->topic; /* borrowed */
            tps[k].partition = c->cparts[i]->partition;
            k++;
        }
    }
    qsort(tps, (size_t)k, sizeof(*tps), cmp_tp);
    sc_subscription_encode_v3(w, g->topics, g->topic_count, tps, k,
                              k > 0 ? g->owned_generation : -1);
    kp_free(tps);
}

static int64_t send_join(struct sc_client *c, struct sc_group *g, struct sc_conn *coord,
                         int64_t now)
{
    int16_t ver = sc_conn_version(coord, KP_API_JOIN_GROUP, 0, 5);
    if (ver < 0) {
        sc_post_error(c, SAMSA_ERR_UNSUPPORTED, "group %s: the coordinator lacks JoinGroup",
                      c->v->group_id);
        g->join_at = now + join_backoff_ms(c);
        return g->join_at;
    }
    struct kp_writer w;
    kp_wr_init(&w, (size_t)16 * 1024 * 1024);
    if (cooperative(c)) {
        coop_subscription(c, g, &w); /* the only assignor: cooperative-sticky */
    } else {
        sc_subscription_encode(&w, g->topics, g->topic_count, NULL, 0);
    }
    /* sticky's Subscription carries the last assignment in its UserData */
    struct kp_writer ud;
    struct kp_writer sw;
    kp_wr_init(&ud, (size_t)16 * 1024 * 1024);
    kp_wr_init(&sw, (size_t)16 * 1024 * 1024);
    sc_sticky_user_data_encode(&ud, g->owned, g->owned_count, g->owned_generation);
    sc_subscription_encode_ud(&sw, g->topics, g->topic_count, NULL, 0, ud.buf, ud.len);
    if (w.err != 0 || ud.err != 0 || sw.err != 0) {
        kp_wr_free(&w);
        kp_wr_free(&ud);
        kp_wr_free(&sw);
        g->join_at = now + c->v->retry_backoff_ms;
        return g->join_at;
    }
    struct kp_JoinGroupRequest_JoinGroupRequestProtocol protos[SC_MAX_ASSIGNORS];
    int np = c->v->assignor_count < SC_MAX_ASSIGNORS ? c->v->assignor_count : SC_MAX_ASSIGNORS;
    for (int i = 0; i < np; i++) {
        const struct kp_writer *meta = c->v->assignors[i] == SC_ASSIGNOR_STICKY ? &sw : &w;
        protos[i].Name = kp_str_c(sc_assignor_name(c->v->assignors[i]));
        protos[i].Metadata = (struct kp_bytes){meta->buf, (int32_t)meta->len};
    }
    struct kp_JoinGroupRequest req;
    kp_JoinGroupRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.SessionTimeoutMs = c->v->session_timeout_ms;
    req.RebalanceTimeoutMs = c->v->max_poll_interval_ms;
    req.MemberId = kp_str_c(member_id(g));
    req.GroupInstanceId =
        c->v->group_instance_id[0] != '\0' ? kp_str_c(c->v->group_instance_id) : KP_STR_NULL;
    req.ProtocolType = kp_str_c("consumer");
    req.Protocols.items = protos;
    req.Protocols.count = np;
    int err = sc_conn_send(c, coord, KP_API_JOIN_GROUP, ver, &req, on_join, NULL);
    kp_wr_free(&w);
    kp_wr_free(&ud);
    kp_wr_free(&sw);
    if (err != SAMSA_OK) {
        g->join_at = now + c->v->retry_backoff_ms;
        return g->join_at;
    }
    g->generation = -1;
    set_state(c, g, G_JOINING);
    return INT64_MAX;
}

/* The leader's assignment ------------------------------------------- */

struct assign_md_ctx {
    int32_t generation;
};

static void on_assign_md(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                         void *vctx)
{
    (void)conn;
    struct assign_md_ctx *ctx = vctx;
    int32_t gen = ctx->generation;
    kp_free(ctx);
    struct sc_group *g = c->group;
    if (g == NULL || g->state != G_ASSIGN_MD || g->generation != gen) {
        return;
    }
    g->assign_md_inflight = false;
    if (err != 0) {
        return; /* asked again by the next serve */
    }
    const struct kp_MetadataResponse *md = body;
    /* Every topic any member subscribes to, with its partition count (0
     * when the cluster does not have it: nobody gets it). */
    int cap = 0;
    for (int i = 0; i < g->member_count; i++) {
        cap += g->members[i].topic_count;
    }
    struct sc_topic_count *counts = kp_calloc((size_t)(cap > 0 ? cap : 1), sizeof(*counts));
    if (counts == NULL) {
        return;
    }
    int n = 0;
    for (int i = 0; i < g->member_count; i++) {
        for (int k = 0; k < g->members[i].topic_count; k++) {
            const char *t = g->members[i].topics[k];
            bool seen = false;
            for (int j = 0; j < n && !seen; j++) {
                seen = strcmp(counts[j].topic, t) == 0;
            }
            if (seen) {
                continue;
            }
            counts[n].topic = t;
            counts[n].partitions = 0;
            for (int32_t m = 0; m < md->Topics.count; m++) {
                if (kp_str_eq_c(md->Topics.items[m].Name, t)) {
                    int32_t pc = md->Topics.items[m].Partitions.count;
                    counts[n].partitions = pc > 0 ? pc : 0;
                }
            }
            n++;
        }
    }
    /* The leader's own view of its topics follows this snapshot. */
    for (int i = 0; i < g->topic_count; i++) {
        for (int j = 0; j < n; j++) {
            if (strcmp(counts[j].topic, g->topics[i]) == 0 &&
                (counts[j].partitions > 0 || g->topic_parts[i] != TOPIC_MISSING)) {
                g->topic_parts[i] = counts[j].partitions; /* a missing one stays told */
            }
        }
    }
    int aerr = sc_assign(g->assignor, g->members, g->member_count, counts, n);
    kp_free(counts);
    if (aerr != SAMSA_OK) {
        return; /* out of memory: the next serve asks again */
    }
    set_state(c, g, G_SYNC_READY);
}

static int64_t send_assign_md(struct sc_client *c, struct sc_group *g, int64_t now)
{
    if (g->assign_md_inflight) {
        return INT64_MAX;
    }
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_METADATA, 1, 6);
    if (ver < 0) {
        return now + join_backoff_ms(c);
    }
    int cap = 0;
    for (int i = 0; i < g->member_count; i++) {
        cap += g->members[i].topic_count;
    }
    struct kp_MetadataRequest_MetadataRequestTopic *ts =
        kp_arena_alloc(&c->arena, sizeof(*ts) * (size_t)(cap > 0 ? cap : 1));
    struct assign_md_ctx *ctx = kp_malloc(sizeof(*ctx));
    if (ts == NULL || ctx == NULL) {
        kp_arena_reset(&c->arena);
        kp_free(ctx);
        return now + c->v->retry_backoff_ms;
    }
    int n = 0;
    for (int i = 0; i < g->member_count; i++) {
        for (int k = 0; k < g->members[i].topic_count; k++) {
            bool seen = false;
            for (int j = 0; j < n && !seen; j++) {
                seen = kp_str_eq_c(ts[j].Name, g->members[i].topics[k]);
            }
            if (!seen) {
                ts[n++].Name = kp_str_c(g->members[i].topics[k]);
            }
        }
    }
    struct kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    req.Topics.items = ts;
    req.Topics.count = n; /* 0: no topics at all, which assigns nothing */
    req.AllowAutoTopicCreation = false;
    ctx->generation = g->generation;
    int err = sc_conn_send(c, conn, KP_API_METADATA, ver, &req, on_assign_md, ctx);
    kp_arena_reset(&c->arena);
    if (err != SAMSA_OK) {
        kp_free(ctx);
        return now + c->v->retry_backoff_ms;
    }
    g->assign_md_inflight = true;
    return INT64_MAX;
}

/* SyncGroup ---------------------------------------------------------- */

/*
 * cooperative: SyncGroup's assignment parts[0..k) applied as a difference.
 * Revoked (owned, not assigned) are marked: fetching them stops, their
 * "revoked" event goes first and the member joins again at once (REVOKING
 * commits, waits for the event, then removes them). Added (assigned, not
 * owned) start from their committed offsets, with an "assigned" event of
 * them alone. The others go on as they were.
 */
static void apply_incremental(struct sc_client *c, struct sc_group *g,
                              const struct samsa_partition *parts, int k, int64_t now)
{
    if (g->closing) {
        return; /* close already gave everything up: nothing to change now */
    }
    struct samsa_partition *added = kp_calloc((size_t)(k > 0 ? k : 1), sizeof(*added));
    if (added == NULL || remember_owned(g, parts, k) != SAMSA_OK) {
        kp_free(added);
        g->join_at = now + c->v->retry_backoff_ms;
        return; /* UNJOINED: joins again, keeping what it has */
    }
    int na = 0;
    for (int i = 0; i < k; i++) {
        if (sc_cpart_find(c, parts[i].topic, parts[i].partition) == NULL) {
            added[na++] = parts[i];
        }
    }
    int nr = 0;
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        bool kept = false;
        for (int j = 0; j < k && !kept; j++) {
            kept = parts[j].partition == p->partition && strcmp(parts[j].topic, p->topic) == 0;
        }
        if (!kept && !p->revoking) {
            sc_consumer_revoking(c, p);
            nr++;
        }
    }
    if (sc_consumer_add_parts(c, added, (size_t)na) != SAMSA_OK) {
        /* What could not be added is not fetched: the next generation
         * (joined at once) gives it again. */
        g->rejoin_pending = true;
    }
    g->last_hb_ok = now;
    g->next_hb = now + c->v->heartbeat_interval_ms;
    g->hb_inflight = false;
    set_state(c, g, G_STABLE);
    sc_log(c, "group %s: generation %d: %d partition(s) assigned, %d added, %d revoked",
           c->v->group_id, g->generation, k, na, nr);
    if (nr > 0) {
        g->rejoin_pending = false;
        rejoin(c, g, "partitions given up: their new owners get them in the next generation");
    }
    (void)sc_post_rebalance(c, true, added, (size_t)na, false);
    kp_free(added);
    if (g->state == G_STABLE && g->rejoin_pending) {
        g->rejoin_pending = false;
        rejoin(c, g, "wanted while joining");
    }
}

static void on_sync(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    (void)ctx;
    struct sc_group *g = c->group;
    if (g == NULL || g->state != G_SYNCING) {
        return;
    }
    int64_t now = sc_now_ms();
    clear_members(g);
    g->join_at = now;
    set_state(c, g, G_UNJOINED);
    if (err != 0) {
        lose_coordinator(c);
        g->join_at = now + c->v->retry_backoff_ms;
        return;
    }
    const struct kp_SyncGroupResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    if (e == KP_ERR_UNKNOWN_MEMBER_ID) {
        set_member_id(g, KP_STR_NULL);
        coop_lost(c, g, "SyncGroup: UNKNOWN_MEMBER_ID");
        return;
    }
    if (e == KP_ERR_ILLEGAL_GENERATION) {
        coop_lost(c, g, "SyncGroup: ILLEGAL_GENERATION");
        return;
    }
    if (e == KP_ERR_REBALANCE_IN_PROGRESS) {
        return;
    }
    if (e != SAMSA_OK) {
        if (coordinator_error(e)) {
            lose_coordinator(c);
            g->join_at = now + c->v->retry_backoff_ms;
            return;
        }
        sc_post_error(c, e, "group %s: SyncGroup: %s; joining again", c->v->group_id,
                      samsa_err_str(e));
        g->join_at = now + join_backoff_ms(c);
        return;
    }
    struct sc_tp *tps = NULL;
    int n = 0;
    int derr = sc_assignment_decode(r->Assignment.ptr, (size_t)(r->Assignment.len > 0
                                                                    ? r->Assignment.len
                                                                    : 0),
                                    &tps, &n);
    if (derr != SAMSA_OK) {
        sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                      "group %s: the Assignment of generation %d does not decode; joining again",
                      c->v->group_id, g->generation);
        g->join_at = now + join_backoff_ms(c);
        return;
    }
    struct samsa_partition *parts = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*parts));
    int k = 0;
    for (int i = 0; parts != NULL && i < n; i++) {
        if (tps[i].partition < 0 || tps[i].topic[0] == '\0') {
            continue; /* not a partition: ignored */
        }
        bool dup = false;
        for (int j = 0; j < k && !dup; j++) {
            dup = parts[j].partition == tps[i].partition && strcmp(parts[j].topic, tps[i].topic) == 0;
        }
        if (!dup) {
            parts[k].topic = tps[i].topic;
            parts[k].partition = tps[i].partition;
            parts[k].offset = SAMSA_OFFSET_STORED;
            k++;
        }
    }
    if (parts != NULL && cooperative(c)) {
        apply_incremental(c, g, parts, k, now);
        kp_free(parts);
        sc_tps_free(tps, n);
        return;
    }
    int aerr = parts != NULL ? sc_consumer_set_assignment(c, parts, (size_t)k) : SAMSA_ERR_NOMEM;
    if (aerr == SAMSA_OK) {
        aerr = remember_owned(g, parts, k);
    }
    if (aerr == SAMSA_OK) {
        (void)sc_post_rebalance(c, true, parts, (size_t)k, false);
        g->last_hb_ok = now;
        g->next_hb = now + c->v->heartbeat_interval_ms;
        g->hb_inflight = false;
        set_state(c, g, G_STABLE);
        sc_log(c, "group %s: generation %d: %d partition(s) assigned", c->v->group_id,
               g->generation, k);
    } else {
        g->join_at = now + c->v->retry_backoff_ms;
    }
    kp_free(parts);
    sc_tps_free(tps, n);
    if (g->state == G_STABLE && g->rejoin_pending) {
        g->rejoin_pending = false;
        rejoin(c, g, "wanted while joining");
    }
}

static int64_t send_sync(struct sc_client *c, struct sc_group *g, struct sc_conn *coord,
                         int64_t now)
{
    int16_t ver = sc_conn_version(coord, KP_API_SYNC_GROUP, 0, 3);
    if (ver < 0) {
        g->join_at = now + join_backoff_ms(c);
        set_state(c, g, G_UNJOINED);
        return g->join_at;
    }
    int n = g->leader ? g->member_count : 0;
    struct kp_writer *ws = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*ws));
    struct kp_SyncGroupRequest_SyncGroupRequestAssignment *as =
        kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*as));
    int err = SAMSA_ERR_NOMEM;
    if (ws == NULL || as == NULL) {
        goto out;
    }
    err = SAMSA_OK;
    for (int i = 0; i < n; i++) {
        kp_wr_init(&ws[i], (size_t)64 * 1024 * 1024);
        sc_assignment_encode(&ws[i], g->members[i].assigned, g->members[i].assigned_count);
        if (ws[i].err != 0) {
            err = SAMSA_ERR_NOMEM;
        }
        as[i].MemberId = kp_str_c(g->members[i].member_id);
        as[i].Assignment = (struct kp_bytes){ws[i].buf, (int32_t)ws[i].len};
    }
    if (err == SAMSA_OK) {
        struct kp_SyncGroupRequest req;
        kp_SyncGroupRequest_init(&req);
        req.GroupId = kp_str_c(c->v->group_id);
        req.GenerationId = g->generation;
        req.MemberId = kp_str_c(member_id(g));
        req.GroupInstanceId = c->v->group_instance_id[0] != '\0'
                                  ? kp_str_c(c->v->group_instance_id)
                                  : KP_STR_NULL;
        req.Assignments.items = as;
        req.Assignments.count = n;
        err = sc_conn_send(c, coord, KP_API_SYNC_GROUP, ver, &req, on_sync, NULL);
    }
out:
    for (int i = 0; ws != NULL && i < n; i++) {
        kp_wr_free(&ws[i]);
    }
    kp_free(ws);
    kp_free(as);
    if (err != SAMSA_OK) {
        return now + c->v->retry_backoff_ms;
    }
    set_state(c, g, G_SYNCING);
    return INT64_MAX;
}

/* Heartbeat ---------------------------------------------------------- */

static void on_heartbeat(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                         void *ctx)
{
    (void)conn;
    struct sc_group *g = c->group;
    if (g == NULL) {
        return;
    }
    g->hb_inflight = false;
    int32_t gen = (int32_t)(intptr_t)ctx;
    if (gen != g->generation || (g->state != G_STABLE && g->state != G_REVOKING)) {
        return;
    }
    int e = err != 0 ? err : sc_err_from_wire(((const struct kp_HeartbeatResponse *)body)->ErrorCode);
    switch (e) {
    case SAMSA_OK:
        g->last_hb_ok = sc_now_ms();
        break;
    case KP_ERR_REBALANCE_IN_PROGRESS:
        g->last_hb_ok = sc_now_ms();
        rejoin(c, g, "the coordinator is rebalancing the group");
        break;
    case KP_ERR_UNKNOWN_MEMBER_ID:
        lost(c, g, true, "Heartbeat: UNKNOWN_MEMBER_ID");
        break;
    case KP_ERR_ILLEGAL_GENERATION:
        lost(c, g, false, "Heartbeat: ILLEGAL_GENERATION");
        break;
    case KP_ERR_FENCED_INSTANCE_ID:
        drop_assignment(c, g, true);
        sc_post_error(c, SAMSA_ERR_FATAL,
                      "group %s: FENCED_INSTANCE_ID: another consumer uses group.instance.id=%s;"
                      " this one stops consuming",
                      c->v->group_id, c->v->group_instance_id);
        set_state(c, g, G_FATAL);
        break;
    default:
        if (coordinator_error(e)) {
            lose_coordinator(c);
            g->next_hb = sc_now_ms() + c->v->retry_backoff_ms;
        } else {
            sc_log(c, "group %s: Heartbeat: %s", c->v->group_id, kp_err_name(e));
        }
        break;
    }
}

static int64_t heartbeat(struct sc_client *c, struct sc_group *g, int64_t now)
{
    if (now - g->last_hb_ok > c->v->session_timeout_ms) {
        lost(c, g, true, "no heartbeat answered within session.timeout.ms");
        return now;
    }
    if (g->hb_inflight) {
        return INT64_MAX;
    }
    if (now < g->next_hb) {
        return g->next_hb;
    }
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(coord, KP_API_HEARTBEAT, 0, 3);
    if (ver < 0) {
        return now + join_backoff_ms(c);
    }
    struct kp_HeartbeatRequest req;
    kp_HeartbeatRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.GenerationId = g->generation;
    req.MemberId = kp_str_c(member_id(g));
    req.GroupInstanceId =
        c->v->group_instance_id[0] != '\0' ? kp_str_c(c->v->group_instance_id) : KP_STR_NULL;
    if (sc_conn_send(c, coord, KP_API_HEARTBEAT, ver, &req, on_heartbeat,
                     (void *)(intptr_t)g->generation) == SAMSA_OK) {
        g->hb_inflight = true;
    }
    g->next_hb = now + c->v->heartbeat_interval_ms;
    return g->next_hb;
}

/* LeaveGroup --------------------------------------------------------- */

static int send_leave(struct sc_client *c, struct sc_group *g, struct sc_conn *coord,
                      sc_resp_fn *fn, void *ctx)
{
    int16_t ver = sc_conn_version(coord, KP_API_LEAVE_GROUP, 0, 3);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_LeaveGroupRequest_MemberIdentity who = {
        .MemberId = kp_str_c(member_id(g)),
        .GroupInstanceId = KP_STR_NULL,
    };
    struct kp_LeaveGroupRequest req;
    kp_LeaveGroupRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.MemberId = kp_str_c(member_id(g));
    req.Members.items = &who;
    req.Members.count = 1;
    return sc_conn_send(c, coord, KP_API_LEAVE_GROUP, ver, &req, fn, ctx);
}

static void on_leave_op(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    int e = err != 0 ? err : sc_err_from_wire(((const struct kp_LeaveGroupResponse *)body)->ErrorCode);
    if (coordinator_error(e) && sc_now_ms() < op->deadline) {
        lose_coordinator(c);
        op->sent = false;
        op->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    struct sc_group *g = c->group;
    sc_log(c, "group %s: LeaveGroup: %s", c->v->group_id, samsa_err_name(e));
    if (g != NULL && (e == SAMSA_OK || e == KP_ERR_UNKNOWN_MEMBER_ID)) {
        kp_free(g->member_id);
        g->member_id = NULL;
        g->generation = -1;
    }
    sc_op_finish(c, op, e == KP_ERR_UNKNOWN_MEMBER_ID ? SAMSA_OK : e);
}

int64_t sc_op_leave_serve(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_group *g = c->group;
    if (g == NULL || !c->subscribed || g->member_id == NULL) {
        sc_op_finish(c, op, SAMSA_OK);
        return INT64_MAX;
    }
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord == NULL) {
        return now + 20;
    }
    int err = send_leave(c, g, coord, on_leave_op, op);
    if (err == SAMSA_ERR_UNSUPPORTED) {
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
    op->sent = err == SAMSA_OK;
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

static void on_leave_ignored(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                             void *ctx)
{
    (void)c;
    (void)conn;
    (void)err;
    (void)body;
    (void)ctx;
}

/* max.poll.interval.ms passed without a poll: leave as Java does. */
static void poll_exceeded(struct sc_client *c, struct sc_group *g, int64_t now)
{
    sc_post_error(c, SAMSA_ERR_MAX_POLL_EXCEEDED,
                  "group %s: no samsa_consumer_poll for %lld ms (max.poll.interval.ms=%d): left "
                  "the group, its partitions go to other members; the next poll joins again",
                  c->v->group_id, (long long)(now - g->last_poll), c->v->max_poll_interval_ms);
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord != NULL && g->member_id != NULL) {
        (void)send_leave(c, g, coord, on_leave_ignored, NULL);
    }
    drop_assignment(c, g, true);
    kp_free(g->member_id);
    g->member_id = NULL;
    g->generation = -1;
    set_state(c, g, G_POLL_EXCEEDED);
}

/* ----------------------------------------------------------------- serve */

static int64_t membership_serve(struct sc_client *c, struct sc_group *g, int64_t now)
{
    if (g->closing) {
        return g->state == G_STABLE || g->state == G_REVOKING ? heartbeat(c, g, now) : INT64_MAX;
    }
    if ((g->state == G_STABLE || g->state == G_REVOKING) && g->polling == 0 &&
        now - g->last_poll > c->v->max_poll_interval_ms) {
        poll_exceeded(c, g, now);
        return INT64_MAX;
    }
    switch (g->state) {
    case G_UNJOINED: {
        if (now < g->join_at) {
            return g->join_at;
        }
        struct sc_conn *coord = sc_group_coordinator(c);
        return coord == NULL ? now + 50 : send_join(c, g, coord, now);
    }
    case G_ASSIGN_MD:
        return send_assign_md(c, g, now);
    case G_SYNC_READY: {
        struct sc_conn *coord = sc_group_coordinator(c);
        return coord == NULL ? now + 50 : send_sync(c, g, coord, now);
    }
    case G_STABLE:
        return heartbeat(c, g, now);
    case G_REVOKING: {
        int64_t next = heartbeat(c, g, now);
        if (g->state != G_REVOKING) {
            return now;
        }
        if (g->revoke_commit_todo) {
            struct sc_conn *coord = sc_group_coordinator(c);
            if (coord == NULL && now < g->revoke_deadline) {
                return sc_min64(next, now + 50);
            }
            g->revoke_commit_todo = false;
            struct sc_commit_arg *a = coord != NULL ? commit_items(c, NULL, 0, true) : NULL;
            if (a != NULL && a->count > 0 &&
                send_commit(c, coord, a, on_revoke_commit, a) == SAMSA_OK) {
                g->revoke_commit_inflight = true;
            } else {
                sc_op_commit_arg_free(a);
            }
        }
        bool acked = !g->revoke_wait_ack || c->rebalance_acks >= g->acks_posted ||
                     now >= g->revoke_deadline;
        if (g->revoke_commit_inflight || !acked) {
            return sc_min64(next, g->revoke_deadline);
        }
        if (cooperative(c)) {
            sc_consumer_remove_revoking(c); /* the rest stays, fetched on */
        } else {
            drop_assignment(c, g, false);
        }
        g->join_at = now;
        set_state(c, g, G_UNJOINED);
        return now;
    }
    default:
        return INT64_MAX;
    }
}

int64_t sc_group_serve(struct sc_client *c, int64_t now)
{
    if (c->v->group_id[0] == '\0') {
        return INT64_MAX;
    }
    struct sc_group *g = group(c);
    if (g == NULL) {
        return now + 100;
    }
    int64_t next = INT64_MAX;
    if (c->subscribed) {
        next = membership_serve(c, g, now);
    }
    bool need_stored = false;
    for (int i = 0; i < c->cpart_count; i++) {
        need_stored = need_stored || (c->cparts[i]->state == SC_CP_NEED_OFFSET &&
                                      c->cparts[i]->reset == SAMSA_OFFSET_STORED &&
                                      !c->cparts[i]->revoking);
    }
    if (need_stored && !sc_group_blocks_fetch(c)) {
        struct sc_conn *coord = sc_group_coordinator(c);
        if (coord != NULL) {
            fetch_stored(c, coord);
        } else {
            next = sc_min64(next, now + 50);
        }
    }
    if (c->v->enable_auto_commit && c->v->auto_commit_interval_ms > 0) {
        if (now >= g->next_auto_commit) {
            g->next_auto_commit = now + c->v->auto_commit_interval_ms;
            bool moved = false;
            for (int i = 0; i < c->cpart_count; i++) {
                moved = moved || (c->cparts[i]->app_offset >= 0 &&
                                  c->cparts[i]->app_offset != c->cparts[i]->committed);
            }
            if (moved && in_generation(c) && (!c->subscribed || g->state == G_STABLE)) {
                struct sc_op *op = commit_op(c, NULL, 0, true);
                if (op != NULL) {
                    submit(c, op, c->v->request_timeout_ms);
                }
            }
        }
        next = sc_min64(next, g->next_auto_commit);
    }
    return next;
}

/* ----------------------------------------------------------------- close */

static bool commit_pending(const struct sc_client *c)
{
    for (const struct sc_op *op = c->ops; op != NULL; op = op->next) {
        if (op->kind == SC_OP_COMMIT) {
            return true;
        }
    }
    return false;
}

/* What is left of close's deadline for a step bounded by cap_ms; close's
 * timeout_ms < 0 leaves each step its cap. */
static int close_step_ms(int64_t deadline, int cap_ms)
{
    if (deadline == INT64_MAX) {
        return cap_ms;
    }
    int64_t left = deadline - sc_now_ms();
    return left <= 0 ? 0 : left < cap_ms ? (int)left : cap_ms;
}

int sc_group_close(struct sc_client *c, int timeout_ms)
{
    if (c->v->group_id[0] == '\0') {
        return SAMSA_OK;
    }
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    int result = SAMSA_OK;
    pthread_mutex_lock(&c->lock);
    struct sc_group *g = c->group;
    bool member = false;
    if (c->subscribed && g != NULL) {
        g->closing = true;
        member = g->member_id != NULL;
        if ((g->state == G_STABLE || cooperative(c)) && c->cpart_count > 0) {
            /* The partitions are given up: the rebalance callback sees them
             * go, inside close, and may still commit their positions. */
            sc_consumer_stop_fetching(c);
            (void)post_revoked(c, g, false);
        }
    }
    (void)sc_serve_errors(c);
    struct sc_op *op = c->v->enable_auto_commit ? commit_op(c, NULL, 0, true) : NULL;
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    if (op != NULL) {
        /* best effort, as Java's close(): the result says how it went */
        result = sc_op_run(c, &op, close_step_ms(deadline, c->v->request_timeout_ms), NULL, 0);
        sc_op_free(op);
    }
    /* Asynchronous commits still on their way are waited for (bounded), so
     * that what the application committed last is what a restart finds. */
    int64_t commits_by = sc_now_ms() + close_step_ms(deadline, c->v->request_timeout_ms);
    pthread_mutex_lock(&c->lock);
    while (commit_pending(c) && sc_now_ms() < commits_by) {
        sc_wait_cond(c, commits_by);
    }
    if (commit_pending(c) && result == SAMSA_OK) {
        result = SAMSA_ERR_TIMED_OUT;
    }
    pthread_mutex_unlock(&c->lock);
    /* A static member (group.instance.id) keeps its place: no LeaveGroup. */
    if (member && c->v->group_instance_id[0] == '\0') {
        struct sc_op *leave = sc_op_new(SC_OP_LEAVE_GROUP, NULL);
        if (leave != NULL) {
            int cap = c->v->request_timeout_ms < 10000 ? c->v->request_timeout_ms : 10000;
            int err = sc_op_run(c, &leave, close_step_ms(deadline, cap), NULL, 0);
            if (result == SAMSA_OK) {
                result = err;
            }
            sc_op_free(leave);
        }
    }
    return result;
}
