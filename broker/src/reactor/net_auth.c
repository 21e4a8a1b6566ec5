/* samsa-broker: what the reactor keeps of a connection's SASL
 * authentication (see net.h): the listener's data, the frame limit and the
 * deadline until authenticated, the principal after. The exchange itself
 * is its user's (security/sasl.c). */
#define _GNU_SOURCE

#include "reactor/net_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <string.h>

void br_net_listener_auth(struct br_net *n, size_t listener, void *auth, int32_t max_frame,
                          int64_t deadline_ms)
{
    if (listener < n->nlisteners) {
        n->listeners[listener].auth = auth;
        n->listeners[listener].auth_max_frame = max_frame;
        n->listeners[listener].auth_deadline_ms = deadline_ms;
    }
}

static const struct listener *conn_listener(const struct br_conn *c)
{
    if (c->listener < 0 || (size_t)c->listener >= c->net->nlisteners) {
        return NULL;
    }
    return &c->net->listeners[c->listener];
}

static void deadline_fire(void *ctx, struct br_timer *t)
{
    (void)ctx;
    struct br_conn *c = t->owner;
    if (c->dead || c->authenticated) {
        return;
    }
    const struct listener *l = conn_listener(c);
    br_info("closing %s: not authenticated within connections.max.unauthenticated.ms (%" PRId64
            " ms)",
            c->peer, l != NULL ? l->auth_deadline_ms : 0);
    net_conn_kill(c);
}

static const struct br_timer_ops deadline_ops = {"authentication deadline", deadline_fire};

void net_auth_accept(struct br_conn *c, const struct listener *l)
{
    br_timer_init(&c->auth_deadline, &deadline_ops, c);
    if (l->auth != NULL && l->auth_deadline_ms > 0) {
        br_timer_arm(c->net, &c->auth_deadline, c->net->now_ms + l->auth_deadline_ms);
    }
}

int32_t net_conn_max_frame(const struct br_conn *c)
{
    if (c->outbound) {
        return c->max_frame;
    }
    const struct listener *l = conn_listener(c);
    if (l != NULL && l->auth != NULL && !c->authenticated &&
        l->auth_max_frame < c->net->max_request_bytes) {
        return l->auth_max_frame;
    }
    return c->net->max_request_bytes;
}

void *br_conn_listener_auth(const struct br_conn *c)
{
    const struct listener *l = conn_listener(c);
    return l != NULL && !c->authenticated ? l->auth : NULL;
}

void *br_conn_auth_state(const struct br_conn *c)
{
    return c->auth;
}

void br_conn_set_auth_state(struct br_conn *c, void *auth, void (*free_fn)(void *auth))
{
    c->auth = auth;
    c->auth_free = free_fn;
}

int br_conn_authenticated(struct br_conn *c, const char *principal)
{
    size_t n = strlen(principal);
    char *copy = kp_malloc(n + 1);
    if (copy == NULL) {
        return -1;
    }
    memcpy(copy, principal, n + 1);
    kp_free(c->principal);
    c->principal = copy;
    c->authenticated = true;
    if (br_timer_armed(&c->auth_deadline)) {
        br_timer_cancel(c->net, &c->auth_deadline);
    }
    return 0;
}

const char *br_conn_principal(const struct br_conn *c)
{
    return c->principal != NULL ? c->principal : "User:ANONYMOUS";
}
