/* samsa-broker: the handover of a cluster broker's leaderships before it
 * stops (see controlled_shutdown.h). */
#define _GNU_SOURCE

#include "controlled_shutdown.h"

#include "base/clock.h"
#include "base/logging.h"
#include "cluster/metadata_cache.h"
#include "cluster_member.h"
#include "reactor/net.h"
#include "replica/replication.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The largest answer taken: a ControlledShutdown response lists partitions. */
#define MAX_ANSWER_BYTES (64 * 1024 * 1024)

struct br_shutdown {
    struct br_broker *b;
    struct br_conn *conn;
    struct br_timer timer; /* the attempt's deadline, or the wait before the next */
    bool waiting;          /* an attempt is under way (else: backing off) */
    int32_t attempts;
    int32_t correlation;
    int64_t started_ms;
};

static void attempt(struct br_shutdown *s);

static void finish(struct br_shutdown *s, bool handed_over)
{
    if (s->conn != NULL) {
        br_conn_close(s->conn);
        s->conn = NULL;
    }
    br_timer_cancel(s->b->s.net, &s->timer);
    s->waiting = false;
    if (handed_over) {
        br_info("controlled shutdown: every partition this broker led is led elsewhere "
                "(%" PRId64 " ms): stopping",
                br_now_mono_ms() - s->started_ms);
    } else {
        br_warn("controlled shutdown: %" PRId32 " attempt(s) failed: stopping without handing "
                "every leadership over (clients wait for the controller to move them)",
                s->attempts);
    }
    br_net_stop(s->b->s.net);
}

/* An attempt failed (why): another after the backoff, or the end. */
static void failed(struct br_shutdown *s, const char *why)
{
    if (s->conn != NULL) {
        br_conn_close(s->conn);
        s->conn = NULL;
    }
    s->waiting = false;
    const struct br_config *cfg = &s->b->s.cfg;
    if (s->attempts >= cfg->controlled_shutdown_max_retries) {
        br_warn("controlled shutdown: attempt %" PRId32 " failed: %s", s->attempts, why);
        finish(s, false);
        return;
    }
    br_warn("controlled shutdown: attempt %" PRId32 " failed: %s; trying again in %" PRId64 " ms",
            s->attempts, why, cfg->controlled_shutdown_retry_backoff_ms);
    br_timer_arm(s->b->s.net, &s->timer, br_now_mono_ms() + cfg->controlled_shutdown_retry_backoff_ms);
}

static void send_request(struct br_shutdown *s)
{
    struct br_broker *b = s->b;
    char client_id[48];
    (void)snprintf(client_id, sizeof client_id, "samsa-broker-%" PRId32, b->s.node_id);
    struct kp_request_header h = {KP_API_CONTROLLED_SHUTDOWN, 1, ++s->correlation,
                                  kp_str_c(client_id)};
    struct kp_ControlledShutdownRequest q = {.BrokerId = b->s.node_id};
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    if (kp_request_encode(&w, &h, &q) != 0) {
        kp_wr_free(&w);
        failed(s, "the request does not encode");
        return;
    }
    size_t len = 0;
    uint8_t *frame = kp_wr_steal(&w, &len);
    if (br_conn_send(s->conn, frame, len) != 0) {
        failed(s, "cannot send to the controller");
    }
}

static void on_connected(void *ctx, struct br_conn *c)
{
    (void)c;
    (void)ctx; /* the request was queued at connect */
}

static void on_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    (void)c;
    struct br_shutdown *s = ctx;
    if (!s->waiting) {
        return;
    }
    struct kp_arena arena;
    kp_arena_init(&arena, len * 8 + 4096);
    struct kp_response_header h;
    void *body = NULL;
    int rc = kp_response_decode(payload, len, KP_API_CONTROLLED_SHUTDOWN, 1, &arena, &h, &body);
    if (rc != 0 || h.CorrelationId != s->correlation) {
        kp_arena_free(&arena);
        failed(s, "the controller's answer does not decode");
        return;
    }
    const struct kp_ControlledShutdownResponse *resp = body;
    char why[256];
    if (resp->ErrorCode != KP_ERR_NONE) {
        (void)snprintf(why, sizeof why, "the controller answered %s",
                       kp_err_name(resp->ErrorCode));
    } else if (resp->RemainingPartitions.count > 0) {
        const struct kp_ControlledShutdownResponse_RemainingPartition *first =
            &resp->RemainingPartitions.items[0];
        (void)snprintf(why, sizeof why,
                       "%" PRId32 " partition(s) have no other in-sync replica to lead them "
                       "(%.*s-%" PRId32 " first)",
                       resp->RemainingPartitions.count,
                       (int)(first->TopicName.len > 0 ? first->TopicName.len : 0),
                       first->TopicName.ptr, first->PartitionIndex);
    } else {
        kp_arena_free(&arena);
        finish(s, true);
        return;
    }
    kp_arena_free(&arena);
    failed(s, why);
}

static void on_closed(void *ctx, struct br_conn *c, int err)
{
    (void)c;
    struct br_shutdown *s = ctx;
    s->conn = NULL;
    if (s->waiting) {
        failed(s, err != 0 ? strerror(err) : "the controller closed the connection");
    }
}

static const struct br_conn_ops shutdown_conn_ops = {on_connected, on_frame, on_closed};

static void timer_fired(void *ctx, struct br_timer *t)
{
    (void)ctx; /* the broker: the timer's owner is the handover */
    struct br_shutdown *s = t->owner;
    if (s->waiting) {
        failed(s, "no answer from the controller in controller.socket.timeout.ms");
    } else {
        attempt(s);
    }
}

static const struct br_timer_ops shutdown_timer_ops = {"controlled shutdown", timer_fired};

static void attempt(struct br_shutdown *s)
{
    struct br_broker *b = s->b;
    s->attempts++;
    s->waiting = true;
    br_timer_arm(b->s.net, &s->timer, br_now_mono_ms() + b->s.cfg.controller_socket_timeout_ms);
    const struct br_mc_broker *ctl =
        b->s.mc.controller_id >= 0 ? br_mc_broker(&b->s.mc, b->s.mc.controller_id) : NULL;
    if (ctl == NULL) {
        failed(s, "no controller is known");
        return;
    }
    br_info("controlled shutdown: asking controller %" PRId32 " (%s:%" PRId32
            ") to move this broker's leaderships (attempt %" PRId32 ")",
            ctl->id, ctl->host, ctl->port, s->attempts);
    if (br_conn_connect(b->s.net, ctl->host, ctl->port, MAX_ANSWER_BYTES, &shutdown_conn_ops, s,
                        &s->conn) != 0) {
        s->conn = NULL;
        failed(s, "cannot connect to the controller");
        return;
    }
    send_request(s);
}

bool br_controlled_shutdown_begin(struct br_broker *b)
{
    if (!b->s.cfg.controlled_shutdown_enable ||
        b->s.cfg.controlled_shutdown_max_retries <= 0 || !br_member_registered(b) ||
        b->shutdown != NULL) {
        return true;
    }
    struct br_shutdown *s = kp_calloc(1, sizeof *s);
    if (s == NULL) {
        return true;
    }
    s->b = b;
    s->started_ms = br_now_mono_ms();
    br_timer_init(&s->timer, &shutdown_timer_ops, s);
    b->shutdown = s;
    /* a replica going away fetches no more, so that no leader takes it
     * back into an ISR the controller takes it out of (replica/replication.h) */
    size_t n = br_replication_stop_fetching(b->s.replication);
    if (n > 0) {
        br_info("controlled shutdown: stopped fetching %zu partition(s) as a follower", n);
    }
    attempt(s);
    return false;
}

void br_controlled_shutdown_free(struct br_broker *b)
{
    struct br_shutdown *s = b->shutdown;
    if (s == NULL) {
        return;
    }
    if (s->conn != NULL) {
        br_conn_close(s->conn);
    }
    if (b->s.net != NULL) {
        br_timer_cancel(b->s.net, &s->timer);
    }
    kp_free(s);
    b->shutdown = NULL;
}
