/*
 * The handle's Metadata refresh: every metadata.max.age.ms, and sooner when
 * a module wants it (sc_metadata_want: a leader unknown or unreachable),
 * never closer than the backoff below; the topics asked for and what an
 * answer means are the handle's kind's (struct sc_kind_ops).
 *
 * @locality: the I/O thread with c->lock held.
 */
#include <string.h>

#include "core/internal.h"

static void on_metadata(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    (void)ctx;
    c->md_inflight = false;
    if (err != 0) {
        c->md_wanted = true;
        return;
    }
    const struct kp_MetadataResponse *md = body;
    if (!sc_record_brokers(c, md)) {
        c->md_wanted = true;
        return;
    }
    /* A broker whose address changed gets a new connection. */
    for (struct sc_conn *cn = c->conns; cn != NULL; cn = cn->next) {
        const struct sc_broker_md *b = cn->node_id >= 0 ? sc_broker_find(c, cn->node_id) : NULL;
        if (b != NULL && (strcmp(b->host, cn->host) != 0 || b->port != cn->port)) {
            char *h = sc_strdup(b->host);
            if (h != NULL) {
                sc_conn_close(c, cn, SAMSA_ERR_TRANSPORT, "broker address changed");
                kp_free(cn->host);
                cn->host = h;
                cn->port = b->port;
            }
        }
    }
    /* A broker Metadata lists is registered, alive as far as the cluster
     * knows: a connection to it that failed (the broker restarted) is tried
     * again now rather than after its reconnect backoff (up to
     * reconnect.backoff.max.ms), so a leader back from a restart is used
     * within a refresh of its election. */
    int64_t now = sc_now_ms();
    for (struct sc_conn *cn = c->conns; cn != NULL; cn = cn->next) {
        if (cn->state == SC_CONN_DOWN && cn->wanted && cn->next_attempt_ms > now &&
            cn->node_id >= 0 && sc_broker_find(c, cn->node_id) != NULL) {
            cn->next_attempt_ms = now;
        }
    }
    c->md_last_ms = now;
    c->md_next_ms = c->md_last_ms + c->v->metadata_max_age_ms;
    if (c->kind_ops->on_metadata != NULL) {
        c->kind_ops->on_metadata(c, md);
    }
}

/*
 * Refreshes are never closer than retry.backoff.ms (at least 100 ms). Those
 * wanted one right after another (a leader still unreachable, or none
 * elected yet) double the gap up to MD_GAP_MAX_MS: through a long outage the
 * client asks twice a second, and a new leader is still seen within half a
 * second of its election (Java keeps retry.backoff.ms; librdkafka's fast
 * leader query doubles its interval up to the regular refresh interval).
 */
#define MD_GAP_MAX_MS 500

/* Returns when it wants to run next. */
int64_t sc_metadata_serve(struct sc_client *c, int64_t now)
{
    if (c->kind_ops->want_topics == NULL || c->md_inflight) {
        return INT64_MAX;
    }
    if (!c->md_wanted && now < c->md_next_ms) {
        return c->md_next_ms;
    }
    int base = c->v->retry_backoff_ms > 100 ? c->v->retry_backoff_ms : 100;
    int gap = c->md_gap_ms > base ? c->md_gap_ms : base;
    if (now - c->md_last_ms < gap && c->md_last_ms != 0) {
        return c->md_last_ms + gap;
    }
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        return INT64_MAX; /* a connection coming up wakes the loop */
    }
    const char *names[1024];
    int count = c->kind_ops->want_topics(c, names, 1024);
    int16_t ver = sc_conn_version(conn, KP_API_METADATA, 1, 6);
    if (ver < 0) {
        return INT64_MAX;
    }
    struct kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    struct kp_MetadataRequest_MetadataRequestTopic *t =
        kp_arena_alloc(&c->arena, sizeof(*t) * (size_t)(count > 0 ? count : 1));
    if (t == NULL) {
        return now + gap;
    }
    for (int i = 0; i < count; i++) {
        t[i].Name = kp_str_c(names[i]);
    }
    req.Topics.items = t;
    /* v1+: 0 = no topics (brokers only), null (-1) = every topic */
    req.Topics.count = count == SC_ALL_TOPICS ? -1 : count;
    req.AllowAutoTopicCreation = c->kind_ops->auto_create_topics || c->v->allow_auto_create_topics;
    if (sc_conn_send(c, conn, KP_API_METADATA, ver, &req, on_metadata, NULL) == 0) {
        bool following = c->md_last_ms != 0 && now - c->md_last_ms < 2 * (int64_t)gap;
        int max = base > MD_GAP_MAX_MS ? base : MD_GAP_MAX_MS;
        c->md_gap_ms = !following ? base : (gap * 2 > max ? max : gap * 2);
        c->md_inflight = true;
        c->md_wanted = false;
        c->md_last_ms = now;
    }
    kp_arena_reset(&c->arena);
    return c->md_wanted ? now + gap : INT64_MAX;
}
