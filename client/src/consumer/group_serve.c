/*
 * The member's turn on the I/O loop (sc_group_serve: the coordinator, the
 * stored offsets, the membership's state machine, auto commits) and its
 * part of samsa_consumer_close (sc_group_close).
 */
#include <string.h>

#include "consumer/group.h"

static int64_t membership_serve(struct sc_client *c, struct sc_group *g, int64_t now)
{
    if (g->closing) {
        return g->state == G_STABLE || g->state == G_REVOKING ? sc_group_heartbeat(c, g, now)
                                                              : INT64_MAX;
    }
    if ((g->state == G_STABLE || g->state == G_REVOKING) && g->polling == 0 &&
        now - g->last_poll > c->v->max_poll_interval_ms) {
        sc_group_poll_exceeded(c, g, now);
        return INT64_MAX;
    }
    switch (g->state) {
    case G_UNJOINED: {
        if (now < g->join_at) {
            return g->join_at;
        }
        struct sc_conn *coord = sc_group_coordinator(c);
        return coord == NULL ? now + 50 : sc_group_send_join(c, g, coord, now);
    }
    case G_ASSIGN_MD:
        return sc_group_send_assign_md(c, g, now);
    case G_SYNC_READY: {
        struct sc_conn *coord = sc_group_coordinator(c);
        return coord == NULL ? now + 50 : sc_group_send_sync(c, g, coord, now);
    }
    case G_STABLE:
        return sc_group_heartbeat(c, g, now);
    case G_REVOKING: {
        int64_t next = sc_group_heartbeat(c, g, now);
        if (g->state != G_REVOKING) {
            return now;
        }
        if (g->revoke_commit_todo) {
            struct sc_conn *coord = sc_group_coordinator(c);
            if (coord == NULL && now < g->revoke_deadline) {
                return sc_min64(next, now + 50);
            }
            g->revoke_commit_todo = false;
            struct sc_commit_arg *a =
                coord != NULL ? sc_group_commit_items(c, NULL, 0, true) : NULL;
            if (a != NULL && a->count > 0 &&
                sc_group_send_commit(c, coord, a, sc_group_on_revoke_commit, a) == SAMSA_OK) {
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
        if (sc_group_cooperative(c)) {
            sc_consumer_remove_revoking(c); /* the rest stays, fetched on */
        } else {
            sc_group_drop_assignment(c, g, false);
        }
        g->join_at = now;
        sc_group_set_state(c, g, G_UNJOINED);
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
    struct sc_group *g = sc_group_get(c);
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
            sc_group_fetch_stored(c, coord);
        } else {
            next = sc_min64(next, now + 50);
        }
    }
    if (c->v->enable_auto_commit && c->v->auto_commit_interval_ms > 0) {
        if (now >= g->next_auto_commit) {
            g->next_auto_commit = now + c->v->auto_commit_interval_ms;
            bool moved = false;
            for (int i = 0; i < c->cpart_count; i++) {
                moved = moved || (c->cparts[i]->stored >= 0 &&
                                  c->cparts[i]->stored != c->cparts[i]->committed);
            }
            if (moved && sc_group_in_generation(c) && (!c->subscribed || g->state == G_STABLE)) {
                struct sc_op *op = sc_group_commit_op(c, NULL, 0, true);
                if (op != NULL) {
                    sc_group_submit(c, op, c->v->request_timeout_ms);
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
        if ((g->state == G_STABLE || sc_group_cooperative(c)) && c->cpart_count > 0) {
            /* The partitions are given up: the rebalance callback sees them
             * go, inside close, and may still commit their positions. */
            sc_consumer_stop_fetching(c);
            (void)sc_group_post_revoked(c, g, false);
        }
    }
    (void)sc_serve_errors(c);
    struct sc_op *op = c->v->enable_auto_commit ? sc_group_commit_op(c, NULL, 0, true) : NULL;
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
        struct sc_op *leave = sc_op_create(&sc_leave_op, SC_OP_LEAVE_GROUP, NULL);
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
