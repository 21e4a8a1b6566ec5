/*
 * Staying in the group: a Heartbeat every heartbeat.interval.ms (no answer
 * within session.timeout.ms loses the membership), LeaveGroup (an op at
 * close, sc_leave_op; fire-and-forget after max.poll.interval.ms).
 */
#include "consumer/group.h"

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
        sc_group_rejoin(c, g, "the coordinator is rebalancing the group");
        break;
    case KP_ERR_UNKNOWN_MEMBER_ID:
        sc_group_lost(c, g, true, "Heartbeat: UNKNOWN_MEMBER_ID");
        break;
    case KP_ERR_ILLEGAL_GENERATION:
        sc_group_lost(c, g, false, "Heartbeat: ILLEGAL_GENERATION");
        break;
    case KP_ERR_FENCED_INSTANCE_ID:
        sc_group_drop_assignment(c, g, true);
        sc_post_error(c, SAMSA_ERR_FATAL,
                      "group %s: FENCED_INSTANCE_ID: another consumer uses group.instance.id=%s;"
                      " this one stops consuming",
                      c->v->group_id, c->v->group_instance_id);
        sc_group_set_state(c, g, G_FATAL);
        break;
    default:
        if (sc_group_coordinator_error(e)) {
            sc_group_lose_coordinator(c);
            g->next_hb = sc_now_ms() + c->v->retry_backoff_ms;
        } else {
            sc_log(c, "group %s: Heartbeat: %s", c->v->group_id, kp_err_name(e));
        }
        break;
    }
}

int64_t sc_group_heartbeat(struct sc_client *c, struct sc_group *g, int64_t now)
{
    if (now - g->last_hb_ok > c->v->session_timeout_ms) {
        sc_group_lost(c, g, true, "no heartbeat answered within session.timeout.ms");
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
        return now + sc_group_join_backoff_ms(c);
    }
    struct kp_HeartbeatRequest req;
    kp_HeartbeatRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.GenerationId = g->generation;
    req.MemberId = kp_str_c(sc_group_member_id(g));
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
        .MemberId = kp_str_c(sc_group_member_id(g)),
        .GroupInstanceId = KP_STR_NULL,
    };
    struct kp_LeaveGroupRequest req;
    kp_LeaveGroupRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.MemberId = kp_str_c(sc_group_member_id(g));
    req.Members.items = &who;
    req.Members.count = 1;
    return sc_conn_send(c, coord, KP_API_LEAVE_GROUP, ver, &req, fn, ctx);
}

static void on_leave_op(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    int e = err != 0 ? err : sc_err_from_wire(((const struct kp_LeaveGroupResponse *)body)->ErrorCode);
    if (sc_group_coordinator_error(e) && sc_now_ms() < op->deadline) {
        sc_group_lose_coordinator(c);
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

static int64_t serve_leave(struct sc_client *c, struct sc_op *op, int64_t now)
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

const struct sc_op_ops sc_leave_op = {serve_leave, NULL};

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
void sc_group_poll_exceeded(struct sc_client *c, struct sc_group *g, int64_t now)
{
    sc_post_error(c, SAMSA_ERR_MAX_POLL_EXCEEDED,
                  "group %s: no samsa_consumer_poll for %lld ms (max.poll.interval.ms=%d): left "
                  "the group, its partitions go to other members; the next poll joins again",
                  c->v->group_id, (long long)(now - g->last_poll), c->v->max_poll_interval_ms);
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord != NULL && g->member_id != NULL) {
        (void)send_leave(c, g, coord, on_leave_ignored, NULL);
    }
    sc_group_drop_assignment(c, g, true);
    kp_free(g->member_id);
    g->member_id = NULL;
    g->generation = -1;
    sc_group_set_state(c, g, G_POLL_EXCEEDED);
}
