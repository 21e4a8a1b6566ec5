/*
 * samsa-broker: the group APIs on the wire but OffsetCommit/OffsetFetch
 * (see group.h): each handler decodes, asks the coordinator (group/group.h)
 * and encodes its answer; a JoinGroup or SyncGroup that must wait parks its
 * slot in the broker's purgatory (struct grp_park) until the coordinator
 * answers it through the ops below. The ops are also the coordinator's
 * clocks and its timers (reactor timers).
 * @locality reactor thread
 */
#define _GNU_SOURCE

#include "server/group.h"

#include "base/clock.h"
#include "base/logging.h"
#include "group/group.h"
#include "server/request.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void group_park_cancel(struct br_server *b, void *parked);
/* A JoinGroup or SyncGroup parked: what its connection's end does to it (request.h) */
static const struct br_park_ops group_park_ops = {"a JoinGroup or SyncGroup", group_park_cancel};

/* A parked JoinGroup or SyncGroup: a delayed operation of the broker's
 * purgatory, waiting on its group's key (forced when the group goes). The
 * coordinator answers it through the ops (its answer is encoded then and
 * the operation woken); the purgatory hands the answer to the slot at the
 * end of the turn. */
struct grp_park {
    struct br_park park; /* first: its ops (request.h) */
    bool is_join;
    struct grp_member *member; /* NULL once answered or before it waits */
    struct br_server *b;
    struct br_delayed delayed;
    struct br_delay_link link;
    bool parked; /* in the purgatory */
    struct br_conn *conn;
    struct br_slot *slot;
    int32_t correlation_id;
    int16_t version;
    size_t max_bytes; /* response.max.bytes: the answer's ceiling */
    bool answered;
    bool close_after; /* no answer could be encoded: close the connection */
    uint8_t *answer;  /* the encoded response (owned) */
    size_t answer_len;
    char who[300]; /* the member, for the log of a failed answer */
};

static struct kp_str cstr(const char *s)
{
    return kp_str_c(s != NULL ? s : "");
}

static void *arena_array(struct kp_arena *a, size_t n, size_t size)
{
    return kp_arena_alloc(a, (n == 0 ? 1 : n) * size);
}

/* ---------------------------------------------------------------- parks */

static void park_free(struct grp_park *pk)
{
    kp_free(pk->answer);
    kp_free(pk);
}

static bool park_ready(void *ctx, struct br_delayed *d)
{
    (void)ctx;
    const struct grp_park *pk = d->owner;
    return pk->answered;
}

static void park_answer_error(struct grp_park *pk, int err);

/* Out of the purgatory: its answer into the slot, which becomes ready. The
 * park is freed first: marking the slot ready may send, fail and kill the
 * connection, which cancels the other parks it holds. */
static void park_complete(void *ctx, struct br_delayed *d, bool expired)
{
    (void)ctx;
    (void)expired;
    struct grp_park *pk = d->owner;
    if (!pk->answered) {
        /* forced before the group answered (the broker stops) */
        if (pk->member != NULL) {
            br_grp_waiter_gone(pk->b->groups, pk->member, pk);
            pk->member = NULL;
        }
        park_answer_error(pk, KP_ERR_NOT_COORDINATOR);
    }
    struct br_conn *conn = pk->conn;
    struct br_slot *slot = pk->slot;
    bool close = pk->close_after;
    uint8_t *answer = pk->answer;
    size_t len = pk->answer_len;
    pk->answer = NULL;
    park_free(pk);
    if (answer != NULL && br_slot_add_mem(slot, answer, len) != 0) {
        br_error("a group response to %s: out of memory: closing the connection",
                 br_conn_peer(conn));
        close = true;
    }
    br_slot_ready(conn, slot);
    if (close) {
        br_conn_close_after_flush(conn);
    }
}

static const struct br_delayed_ops park_ops = {
    .name = "JoinGroup/SyncGroup",
    .ready = park_ready,
    .complete = park_complete,
};

/* A park for the request, not in the purgatory yet (park_wait puts it). */
static struct grp_park *park_new(struct br_req *r, bool is_join)
{
    struct grp_park *pk = kp_calloc(1, sizeof *pk);
    if (pk == NULL) {
        return NULL;
    }
    pk->park.ops = &group_park_ops;
    pk->is_join = is_join;
    pk->b = r->b;
    pk->conn = r->conn;
    pk->slot = r->slot;
    pk->correlation_id = r->hdr->CorrelationId;
    pk->version = r->version;
    pk->max_bytes = (size_t)r->b->cfg.response_max_bytes;
    br_delayed_init(&pk->delayed, &park_ops, pk, &pk->link, 1);
    return pk;
}

/* The coordinator kept the park as m's waiter: into the purgatory, on the
 * group's key. Answered already (the rebalance completed inside the call):
 * it completes at the end of this turn. */
static void park_wait(struct br_req *r, struct grp_park *pk, struct grp_group *g,
                      struct grp_member *m)
{
    (void)snprintf(pk->who, sizeof pk->who, "member %s (client \"%.100s\")", m->id,
                   m->client_id != NULL ? m->client_id : "");
    if (!pk->answered) {
        pk->member = m;
    }
    br_slot_set_parked(r->slot, &pk->park);
    br_delayed_watch(&pk->delayed, 0, &g->waiters);
    /* no deadline of its own: the group's timers (join, session) answer it */
    br_purgatory_park(&r->b->purgatory, &pk->delayed, INT64_MAX);
    pk->parked = true;
    if (pk->answered) {
        br_purgatory_wake_op(&r->b->purgatory, &pk->delayed);
    }
}

/* Encodes resp (of the park's API and version) into an owned buffer. */
static int encode_answer(struct grp_park *pk, int16_t api_key, const void *resp, size_t max)
{
    struct kp_writer w;
    kp_wr_init(&w, max);
    int err = kp_response_encode(&w, api_key, pk->version, pk->correlation_id, resp);
    if (err != 0) {
        kp_wr_free(&w);
        return err;
    }
    kp_free(pk->answer);
    pk->answer = kp_wr_steal(&w, &pk->answer_len);
    return 0;
}

static void join_error_fill(struct kp_JoinGroupResponse *resp, int err, struct kp_str member_id)
{
    kp_JoinGroupResponse_init(resp);
    resp->ErrorCode = (int16_t)kp_err_to_wire(err);
    resp->GenerationId = -1;
    resp->ProtocolName = kp_str_c("");
    resp->Leader = kp_str_c("");
    resp->MemberId = member_id.len >= 0 ? member_id : kp_str_c("");
    resp->Members.items = NULL;
    resp->Members.count = 0;
}

static void sync_fill(struct kp_SyncGroupResponse *resp, int err, const uint8_t *assignment,
                      int32_t len)
{
    kp_SyncGroupResponse_init(resp);
    resp->ErrorCode = (int16_t)kp_err_to_wire(err);
    resp->Assignment.ptr = assignment != NULL ? assignment : (const uint8_t *)"";
    resp->Assignment.len = assignment != NULL ? len : 0;
}

/* The park's answer is resp: encoded now, handed to the slot at the end of
 * the turn (park_complete). */
static void park_answer(struct grp_park *pk, const void *resp)
{
    if (pk->answered) {
        return;
    }
    int16_t api_key = pk->is_join ? KP_API_JOIN_GROUP : KP_API_SYNC_GROUP;
    pk->member = NULL;
    pk->answered = true;
    int err = encode_answer(pk, api_key, resp, pk->max_bytes);
    if (err != 0) {
        /* Kafka's answer to a request that failed: the API's error response
         * (JoinGroupRequest/SyncGroupRequest.getErrorResponse), which is
         * small whatever the ceiling */
        struct kp_JoinGroupResponse join;
        struct kp_SyncGroupResponse sync;
        join_error_fill(&join, KP_ERR_UNKNOWN_SERVER_ERROR, kp_str_c(""));
        sync_fill(&sync, KP_ERR_UNKNOWN_SERVER_ERROR, NULL, 0);
        int aerr =
            encode_answer(pk, api_key, pk->is_join ? (const void *)&join : (const void *)&sync,
                          (size_t)INT32_MAX);
        br_error("%s v%d response to %s of %s (correlation %" PRId32 "): %s: %s",
                 kp_api_find(api_key)->name, pk->version, br_conn_peer(pk->conn),
                 pk->who[0] != '\0' ? pk->who : "a member", pk->correlation_id,
                 err == KP_E_TOO_LARGE ? "the response is larger than response.max.bytes allows"
                                       : kp_err_str(err),
                 aerr == 0 ? "answered UNKNOWN_SERVER_ERROR" : "closing the connection");
        pk->close_after = aerr != 0;
    }
    if (pk->parked) {
        br_purgatory_wake_op(&pk->b->purgatory, &pk->delayed);
    }
}

static void park_answer_error(struct grp_park *pk, int err)
{
    if (pk->is_join) {
        struct kp_JoinGroupResponse resp;
        join_error_fill(&resp, err, kp_str_c(""));
        park_answer(pk, &resp);
    } else {
        struct kp_SyncGroupResponse resp;
        sync_fill(&resp, err, NULL, 0);
        park_answer(pk, &resp);
    }
}

/* The JoinGroup answer of the current generation of g for m; the leader
 * gets every member's metadata for the chosen protocol. Arrays in `a`. */
static int join_result(const struct grp_group *g, const struct grp_member *m, struct kp_arena *a,
                       struct kp_JoinGroupResponse *resp)
{
    struct grp_join_view v;
    br_grp_join_fill(g, m, &v);
    kp_JoinGroupResponse_init(resp);
    resp->ErrorCode = KP_ERR_NONE;
    resp->GenerationId = v.generation;
    resp->ProtocolName = kp_str_c(v.protocol);
    resp->Leader = kp_str_c(v.leader);
    resp->MemberId = kp_str_c(v.member_id);
    resp->Members.items = NULL;
    resp->Members.count = 0;
    if (v.nmembers == 0) {
        return 0;
    }
    resp->Members.items = arena_array(a, v.nmembers, sizeof *resp->Members.items);
    if (resp->Members.items == NULL) {
        return KP_E_NOMEM;
    }
    resp->Members.count = (int32_t)v.nmembers;
    for (size_t i = 0; i < v.nmembers; i++) {
        const struct grp_member *x = g->members[i];
        struct kp_JoinGroupResponse_JoinGroupResponseMember *out = &resp->Members.items[i];
        const struct grp_protocol *p = br_grp_member_protocol(x, g->protocol);
        out->MemberId = cstr(x->id);
        out->GroupInstanceId = x->instance_id != NULL ? kp_str_c(x->instance_id) : KP_STR_NULL;
        out->Metadata.ptr = p != NULL ? p->metadata : (const uint8_t *)"";
        out->Metadata.len = p != NULL ? p->metadata_len : 0;
    }
    return 0;
}

/* ---------------------------------------------------------------- the coordinator's ops */

static int64_t ops_now_mono(void *ctx)
{
    (void)ctx;
    return br_now_mono_ms();
}

static int64_t ops_now_wall(void *ctx)
{
    (void)ctx;
    return br_now_wall_ms();
}

static void group_timer_fire(void *ctx, struct br_timer *t)
{
    struct br_server *b = ctx;
    if (b->groups != NULL && t->owner != NULL) {
        br_grp_timer_fired(b->groups, t->owner);
    }
}

static const struct br_timer_ops group_timer = {"group coordinator", group_timer_fire};

static void ops_timer_init(void *ctx, struct grp_timer *t)
{
    (void)ctx;
    br_timer_init(&t->rt, &group_timer, t);
}

static void ops_timer_arm(void *ctx, struct grp_timer *t, int64_t deadline_ms)
{
    struct br_server *b = ctx;
    if (b->net != NULL) {
        br_timer_arm(b->net, &t->rt, deadline_ms);
    }
}

static void ops_timer_cancel(void *ctx, struct grp_timer *t)
{
    struct br_server *b = ctx;
    if (b->net != NULL) {
        br_timer_cancel(b->net, &t->rt);
    }
}

static void ops_join_answer(void *ctx, void *waiter, int err, const struct grp_group *g,
                            const struct grp_member *m)
{
    (void)ctx;
    struct grp_park *pk = waiter;
    if (err != KP_ERR_NONE) {
        struct kp_JoinGroupResponse resp;
        /* the id goes with the error only while the member still exists */
        join_error_fill(&resp, err,
                        err == KP_ERR_UNKNOWN_MEMBER_ID || m == NULL ? kp_str_c("") : cstr(m->id));
        park_answer(pk, &resp);
        return;
    }
    struct kp_arena a;
    kp_arena_init(&a, pk->max_bytes);
    struct kp_JoinGroupResponse resp;
    if (join_result(g, m, &a, &resp) != 0) {
        br_error("JoinGroup v%d response to member %s of group %s (client \"%.100s\"): %s: "
                 "answered UNKNOWN_SERVER_ERROR",
                 pk->version, m->id, g->id, m->client_id != NULL ? m->client_id : "",
                 a.refused > 0 ? "the response needs more memory than response.max.bytes allows"
                               : "out of memory");
        park_answer_error(pk, KP_ERR_UNKNOWN_SERVER_ERROR);
    } else {
        park_answer(pk, &resp);
    }
    kp_arena_free(&a);
}

static void ops_sync_answer(void *ctx, void *waiter, int err, const uint8_t *assignment,
                            int32_t len)
{
    (void)ctx;
    struct kp_SyncGroupResponse resp;
    sync_fill(&resp, err, assignment, len);
    park_answer(waiter, &resp);
}

static void ops_group_gone(void *ctx, struct grp_group *g)
{
    struct br_server *b = ctx;
    if (b->net != NULL) {
        /* answered already, their answers go out now: the key goes */
        br_purgatory_complete_key(&b->purgatory, &g->waiters);
    }
}

static const struct br_grp_ops group_ops = {
    .now_mono_ms = ops_now_mono,
    .now_wall_ms = ops_now_wall,
    .timer_init = ops_timer_init,
    .timer_arm = ops_timer_arm,
    .timer_cancel = ops_timer_cancel,
    .join_answer = ops_join_answer,
    .sync_answer = ops_sync_answer,
    .group_gone = ops_group_gone,
    .offsets_partition = br_group_offsets_partition,
    .acks_all_check = br_group_acks_all_check,
};

/* ---------------------------------------------------------------- lifecycle */

static uint64_t seed_rng(void)
{
    uint64_t s = (uint64_t)br_now_wall_ms() ^ ((uint64_t)br_now_mono_ms() << 32);
    FILE *f = fopen("/dev/urandom", "rb");
    if (f != NULL) {
        uint64_t r = 0;
        if (fread(&r, sizeof r, 1, f) == 1) {
            s ^= r;
        }
        (void)fclose(f);
    }
    return s;
}

int br_groups_start(struct br_server *b)
{
    const struct br_config *cfg = &b->cfg;
    struct br_grp_config gc = {
        .initial_rebalance_delay_ms = cfg->group_initial_rebalance_delay_ms,
        .min_session_timeout_ms = cfg->group_min_session_timeout_ms,
        .max_session_timeout_ms = cfg->group_max_session_timeout_ms,
        .offset_metadata_max_bytes = cfg->offset_metadata_max_bytes,
        .offsets_retention_minutes = cfg->offsets_retention_minutes,
        .retention_check_interval_ms = cfg->offsets_retention_check_interval_ms,
    };
    b->groups = br_groups_new(&group_ops, b, &gc, seed_rng());
    if (b->groups == NULL) {
        return KP_E_NOMEM;
    }
    int err = br_group_offsets_load(b);
    if (err != 0) {
        br_groups_stop(b);
        return err;
    }
    return 0;
}

void br_groups_complete_all_parked(struct br_server *b)
{
    br_groups_answer_all(b->groups);
}

void br_groups_stop(struct br_server *b)
{
    br_groups_free(b->groups);
    b->groups = NULL;
}

static void group_park_cancel(struct br_server *b, void *parked)
{
    struct grp_park *pk = parked;
    br_purgatory_cancel(&b->purgatory, &pk->delayed);
    if (pk->member != NULL) {
        br_grp_waiter_gone(b->groups, pk->member, pk);
    }
    park_free(pk);
}

/* ---------------------------------------------------------------- FindCoordinator */

int br_h_find_coordinator(struct br_req *r)
{
    const struct kp_FindCoordinatorRequest *q = r->body;
    struct br_server *b = r->b;
    struct kp_FindCoordinatorResponse resp;
    kp_FindCoordinatorResponse_init(&resp);
    resp.ErrorMessage = KP_STR_NULL;
    resp.NodeId = -1;
    resp.Host = kp_str_c("");
    resp.Port = -1;
    int8_t key_type = r->version >= 1 ? q->KeyType : 0;
    if (key_type != 0 && key_type != 1) {
        resp.ErrorCode = KP_ERR_INVALID_REQUEST;
        resp.ErrorMessage = kp_str_c("unknown key type");
        return br_respond(r, &resp);
    }
    /* the coordinator is the leader of the key's partition of
     * __consumer_offsets (a group) or __transaction_state (a
     * transactional id), created on first use as Kafka does */
    int32_t node = -1;
    const char *host = "";
    int32_t port = -1;
    int err = key_type == 1 ? br_txn_find_coordinator(b, q->Key, br_req_listener(r), &node, &host,
                                                      &port)
                            : br_groups_find_coordinator(b, q->Key, br_req_listener(r), &node,
                                                         &host, &port);
    if (err != 0) {
        resp.ErrorCode = (int16_t)kp_err_to_wire(err);
        resp.ErrorMessage = kp_str_c(key_type == 1
                                         ? "the transaction coordinator is not available yet"
                                         : "the group's coordinator is not available yet");
        return br_respond(r, &resp);
    }
    resp.ErrorCode = KP_ERR_NONE;
    resp.NodeId = node;
    resp.Host = kp_str_c(host);
    resp.Port = port;
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- JoinGroup */

/* "/127.0.0.1" from "127.0.0.1:port", as Kafka shows a client's host. */
static struct kp_str client_host_of(struct kp_arena *a, const struct br_conn *c)
{
    const char *peer = br_conn_peer(c);
    const char *colon = strrchr(peer, ':');
    size_t n = colon != NULL ? (size_t)(colon - peer) : strlen(peer);
    char buf[80];
    int len = snprintf(buf, sizeof buf, "/%.*s", (int)(n < 64 ? n : 64), peer);
    char *s = kp_arena_alloc(a, sizeof buf);
    if (s == NULL || len < 0) {
        return kp_str_c("");
    }
    memcpy(s, buf, sizeof buf);
    return kp_str_c(s);
}

int br_h_join_group(struct br_req *r)
{
    const struct kp_JoinGroupRequest *q = r->body;
    struct grp_join_req jq;
    memset(&jq, 0, sizeof jq);
    jq.group_id = q->GroupId;
    jq.member_id = q->MemberId;
    jq.instance_id = r->version >= 5 ? q->GroupInstanceId : KP_STR_NULL;
    jq.client_id = r->hdr->ClientId;
    jq.client_host = client_host_of(r->arena, r->conn);
    jq.protocol_type = q->ProtocolType;
    jq.session_timeout_ms = q->SessionTimeoutMs;
    /* v0 has no rebalance timeout: the session timeout stands in for it */
    jq.rebalance_timeout_ms = r->version >= 1 ? q->RebalanceTimeoutMs : q->SessionTimeoutMs;
    if (jq.rebalance_timeout_ms < 0) {
        jq.rebalance_timeout_ms = q->SessionTimeoutMs;
    }
    jq.require_known_id = r->version >= 4;
    size_t np = q->Protocols.count > 0 ? (size_t)q->Protocols.count : 0;
    if (np <= GRP_MAX_PROTOCOLS) {
        struct grp_join_protocol *ps = arena_array(r->arena, np, sizeof *ps);
        if (ps == NULL) {
            return KP_E_NOMEM;
        }
        for (size_t i = 0; i < np; i++) {
            ps[i].name = q->Protocols.items[i].Name;
            ps[i].metadata = q->Protocols.items[i].Metadata;
        }
        jq.protocols = ps;
    }
    jq.nprotocols = np; /* more than GRP_MAX_PROTOCOLS: refused before they are read */
    int coord = br_groups_check_coordinator(r->b, q->GroupId);
    if (coord != 0) {
        struct kp_JoinGroupResponse resp;
        join_error_fill(&resp, coord, q->MemberId);
        return br_respond(r, &resp);
    }
    struct grp_park *pk = park_new(r, true);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    struct grp_join_out out;
    int err = br_grp_join(r->b->groups, &jq, pk, &out);
    if (err == 0 && out.outcome == GRP_WAIT) {
        park_wait(r, pk, out.group, out.member);
        return 0;
    }
    park_free(pk);
    if (err != 0) {
        return err;
    }
    struct kp_JoinGroupResponse resp;
    if (out.outcome == GRP_ANSWER_NOW) {
        err = join_result(out.group, out.member, r->arena, &resp);
        return err == 0 ? br_respond(r, &resp) : err;
    }
    join_error_fill(&resp, out.err, out.member_id);
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- SyncGroup */

int br_h_sync_group(struct br_req *r)
{
    const struct kp_SyncGroupRequest *q = r->body;
    struct grp_sync_req sq;
    memset(&sq, 0, sizeof sq);
    sq.group_id = q->GroupId;
    sq.member_id = q->MemberId;
    sq.instance_id = r->version >= 3 ? q->GroupInstanceId : KP_STR_NULL;
    sq.generation = q->GenerationId;
    size_t na = q->Assignments.count > 0 ? (size_t)q->Assignments.count : 0;
    struct grp_assignment *as = arena_array(r->arena, na, sizeof *as);
    if (as == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < na; i++) {
        as[i].member_id = q->Assignments.items[i].MemberId;
        as[i].assignment = q->Assignments.items[i].Assignment;
    }
    sq.assignments = as;
    sq.nassignments = na;
    int coord = br_groups_check_coordinator(r->b, q->GroupId);
    if (coord != 0) {
        struct kp_SyncGroupResponse resp;
        sync_fill(&resp, coord, NULL, 0);
        return br_respond(r, &resp);
    }
    struct grp_park *pk = park_new(r, false);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    struct grp_sync_out out;
    int err = br_grp_sync(r->b->groups, &sq, pk, &out);
    if (err == 0 && out.outcome == GRP_WAIT) {
        park_wait(r, pk, out.group, out.member);
        if (out.store_seq != 0) {
            /* the leader's: every sync waits for the group's record */
            br_group_store_wait(r->b, q->GroupId, out.store_seq);
        }
        return 0;
    }
    park_free(pk);
    if (err != 0) {
        return err;
    }
    struct kp_SyncGroupResponse resp;
    if (out.outcome == GRP_ANSWER_NOW) {
        sync_fill(&resp, KP_ERR_NONE, out.assignment, out.assignment_len);
    } else {
        sync_fill(&resp, out.err, NULL, 0);
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- Heartbeat */

int br_h_heartbeat(struct br_req *r)
{
    const struct kp_HeartbeatRequest *q = r->body;
    struct kp_HeartbeatResponse resp;
    kp_HeartbeatResponse_init(&resp);
    int err = br_groups_check_coordinator(r->b, q->GroupId);
    if (err == 0) {
        err = br_grp_heartbeat(r->b->groups, q->GroupId, q->MemberId,
                               r->version >= 3 ? q->GroupInstanceId : KP_STR_NULL, q->GenerationId);
    }
    resp.ErrorCode = (int16_t)kp_err_to_wire(err);
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- LeaveGroup */

int br_h_leave_group(struct br_req *r)
{
    const struct kp_LeaveGroupRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    struct kp_LeaveGroupResponse resp;
    kp_LeaveGroupResponse_init(&resp);
    resp.Members.items = NULL;
    resp.Members.count = 0;
    int top = KP_ERR_NONE;
    struct grp_group *g = q->GroupId.len > 0 ? br_grp_find_kstr(gs, q->GroupId) : NULL;
    if (q->GroupId.len <= 0) {
        top = KP_ERR_INVALID_GROUP_ID;
    } else if ((top = br_groups_check_coordinator(r->b, q->GroupId)) != 0) {
        /* another broker coordinates the group */
    } else if (g != NULL && g->state == GRP_DEAD) {
        top = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (r->version < 3) {
        if (top == KP_ERR_NONE) {
            top = g == NULL ? KP_ERR_UNKNOWN_MEMBER_ID
                            : br_grp_leave(gs, g, q->MemberId, KP_STR_NULL);
        }
        resp.ErrorCode = (int16_t)kp_err_to_wire(top);
        return br_respond(r, &resp);
    }
    resp.ErrorCode = (int16_t)kp_err_to_wire(top);
    if (top == KP_ERR_NONE) {
        resp.Members.items =
            arena_array(r->arena, (size_t)q->Members.count, sizeof *resp.Members.items);
        if (resp.Members.items == NULL) {
            return KP_E_NOMEM;
        }
        resp.Members.count = q->Members.count;
        for (int32_t i = 0; i < q->Members.count; i++) {
            const struct kp_LeaveGroupRequest_MemberIdentity *mi = &q->Members.items[i];
            struct kp_LeaveGroupResponse_MemberResponse *out = &resp.Members.items[i];
            out->MemberId = mi->MemberId;
            out->GroupInstanceId = mi->GroupInstanceId;
            /* the group may go away under a leave: look it up each time */
            g = br_grp_find_kstr(gs, q->GroupId);
            int e = g == NULL ? KP_ERR_UNKNOWN_MEMBER_ID
                              : br_grp_leave(gs, g, mi->MemberId, mi->GroupInstanceId);
            out->ErrorCode = (int16_t)kp_err_to_wire(e);
        }
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- DescribeGroups */

static int describe_groups(struct br_req *r, struct kp_arena *a)
{
    const struct kp_DescribeGroupsRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    struct kp_DescribeGroupsResponse resp;
    kp_DescribeGroupsResponse_init(&resp);
    resp.Groups.items = arena_array(a, (size_t)q->Groups.count, sizeof *resp.Groups.items);
    if (resp.Groups.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Groups.count = q->Groups.count;
    for (int32_t i = 0; i < q->Groups.count; i++) {
        struct kp_DescribeGroupsResponse_DescribedGroup *out = &resp.Groups.items[i];
        struct kp_str id = q->Groups.items[i];
        out->GroupId = id.len >= 0 ? id : kp_str_c("");
        out->ProtocolType = kp_str_c("");
        out->ProtocolData = kp_str_c("");
        out->Members.items = NULL;
        out->Members.count = 0;
        out->AuthorizedOperations = INT32_MIN;
        struct grp_group *g = br_grp_find_kstr(gs, id);
        if (id.len < 0) {
            out->ErrorCode = KP_ERR_INVALID_GROUP_ID;
            out->GroupState = kp_str_c("");
            continue;
        }
        out->ErrorCode = (int16_t)kp_err_to_wire(br_groups_check_coordinator(r->b, id));
        if (out->ErrorCode != KP_ERR_NONE) {
            out->GroupState = kp_str_c("");
            continue;
        }
        if (g == NULL) {
            /* Kafka describes a group it does not know as Dead */
            out->GroupState = kp_str_c("Dead");
            continue;
        }
        bool stable = g->state == GRP_STABLE;
        out->GroupState = kp_str_c(br_grp_state_name(g->state));
        out->ProtocolType = cstr(g->protocol_type);
        out->ProtocolData = stable ? cstr(g->protocol) : kp_str_c("");
        out->Members.items = arena_array(a, g->nmembers, sizeof *out->Members.items);
        if (out->Members.items == NULL) {
            return KP_E_NOMEM;
        }
        out->Members.count = (int32_t)g->nmembers;
        for (size_t k = 0; k < g->nmembers; k++) {
            const struct grp_member *m = g->members[k];
            struct kp_DescribeGroupsResponse_DescribedGroupMember *dm = &out->Members.items[k];
            const struct grp_protocol *p = stable ? br_grp_member_protocol(m, g->protocol) : NULL;
            dm->MemberId = cstr(m->id);
            dm->GroupInstanceId = m->instance_id != NULL ? kp_str_c(m->instance_id) : KP_STR_NULL;
            dm->ClientId = cstr(m->client_id);
            dm->ClientHost = cstr(m->client_host);
            dm->MemberMetadata.ptr = p != NULL ? p->metadata : (const uint8_t *)"";
            dm->MemberMetadata.len = p != NULL ? p->metadata_len : 0;
            dm->MemberAssignment.ptr =
                stable && m->assignment != NULL ? m->assignment : (const uint8_t *)"";
            dm->MemberAssignment.len = stable && m->assignment != NULL ? m->assignment_len : 0;
        }
    }
    return br_respond(r, &resp);
}

int br_h_describe_groups(struct br_req *r)
{
    return describe_groups(r, r->arena);
}

/* ---------------------------------------------------------------- ListGroups */

int br_h_list_groups(struct br_req *r)
{
    struct br_groups *gs = r->b->groups;
    struct kp_ListGroupsResponse resp;
    kp_ListGroupsResponse_init(&resp);
    resp.ErrorCode = KP_ERR_NONE;
    resp.Groups.items = arena_array(r->arena, gs->ngroups, sizeof *resp.Groups.items);
    if (resp.Groups.items == NULL) {
        return KP_E_NOMEM;
    }
    int32_t n = 0;
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        if (g->state == GRP_DEAD) {
            continue;
        }
        resp.Groups.items[n].GroupId.ptr = g->id;
        resp.Groups.items[n].GroupId.len = (int32_t)g->id_len;
        resp.Groups.items[n].ProtocolType = cstr(g->protocol_type);
        n++;
    }
    resp.Groups.count = n;
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- DeleteGroups */

int br_h_delete_groups(struct br_req *r)
{
    const struct kp_DeleteGroupsRequest *q = r->body;
    struct kp_DeleteGroupsResponse resp;
    kp_DeleteGroupsResponse_init(&resp);
    resp.Results.items =
        arena_array(r->arena, (size_t)q->GroupsNames.count, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = q->GroupsNames.count;
    for (int32_t i = 0; i < q->GroupsNames.count; i++) {
        struct kp_str id = q->GroupsNames.items[i];
        struct kp_DeleteGroupsResponse_DeletableGroupResult *out = &resp.Results.items[i];
        out->GroupId = id.len >= 0 ? id : kp_str_c("");
        int err = br_groups_check_coordinator(r->b, id);
        out->ErrorCode = (int16_t)kp_err_to_wire(err != 0 ? err : br_grp_delete(r->b->groups, id));
    }
    return br_respond(r, &resp);
}
