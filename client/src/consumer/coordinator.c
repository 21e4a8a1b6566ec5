/*
 * The group's coordinator: FindCoordinator on any connection, then the
 * coordinator's own connection (sc_conn_get_coordinator), and the errors
 * that make the member look for it again (Java's markCoordinatorUnknown).
 */
#include "consumer/group.h"

bool sc_group_coordinator_error(int err)
{
    return err == KP_ERR_NOT_COORDINATOR || err == KP_ERR_COORDINATOR_NOT_AVAILABLE ||
           err == KP_ERR_COORDINATOR_LOAD_IN_PROGRESS || err == SAMSA_ERR_TRANSPORT ||
           err == SAMSA_ERR_TIMED_OUT || err == SAMSA_ERR_BAD_RESPONSE;
}

void sc_group_lose_coordinator(struct sc_client *c)
{
    struct sc_group *g = sc_group_get(c);
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
    struct sc_group *g = sc_group_get(c);
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
    struct sc_group *g = sc_group_get(c);
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
            sc_group_lose_coordinator(c);
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
    if (sc_send_find_coordinator(c, any, c->v->group_id, 0, on_find_coordinator, NULL) == 0) {
        g->coord_inflight = true;
    }
    return NULL;
}
