/* Unit tests for the reactor (broker/src/net.h): its timers, its ops tables
 * and in-process connections, with a user of its own instead of the broker. */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"
#include "cunit_run.h"
#include "reactor/net.h"

#define NTIMERS 5000

/* ---------------------------------------------------------------- a user */

struct user {
    int64_t fired_deadline[NTIMERS + 16];
    size_t nfired;
    bool order_broken;
    int64_t last_deadline;
    struct br_timer *rearm; /* rearmed once from its own callback */
    int64_t rearm_at;
    struct br_net *net;
    /* connections */
    size_t nframes;
    uint8_t last_frame[64];
    size_t last_len;
    struct br_conn *park_on; /* the next frame from this connection parks */
    void *parked_token;
    struct br_slot *parked_slot;
    size_t ncancelled;
    void *cancelled;
    size_t ndrains;
    size_t nready;
    size_t nheld; /* frames starting with 'h' held back (br_conn_hold) */
    /* frames starting with '!' are answered, then throttle their connection */
};

static void timer_fire(void *ctx, struct br_timer *t)
{
    struct user *u = ctx;
    if (t->deadline_ms < u->last_deadline) {
        u->order_broken = true;
    }
    u->last_deadline = t->deadline_ms;
    if (u->nfired < NTIMERS + 16) {
        u->fired_deadline[u->nfired] = t->deadline_ms;
    }
    u->nfired++;
    CU_ASSERT_FALSE(br_timer_armed(t)); /* disarmed before the call */
    if (t == u->rearm) {
        u->rearm = NULL;
        br_timer_arm(u->net, t, u->rearm_at);
    }
}

static const struct br_timer_ops test_timer = {"test", timer_fire};

static void user_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    struct user *u = ctx;
    u->nframes++;
    u->last_len = len < sizeof u->last_frame ? len : sizeof u->last_frame;
    memcpy(u->last_frame, payload, u->last_len);
    if (len > 0 && payload[0] == 'h' && br_conn_answers_pending(c)) {
        u->nheld++;
        br_conn_hold(c); /* it comes again once the answers before it are ready */
        return;
    }
    struct br_slot *s = br_conn_slot_new(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    if (s == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    if (c == u->park_on) {
        /* parked: answered later, or cancelled if the connection dies */
        br_slot_set_parked(s, u->parked_token);
        u->parked_slot = s;
        u->park_on = NULL;
        return;
    }
    /* the answer: the payload back, after a 4-byte size */
    uint8_t *out = kp_malloc(len + 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    if (out == NULL) {
        abort();
    }
    kp_store_be32(out, (uint32_t)len);
    memcpy(out + 4, payload, len);
    CU_ASSERT_EQUAL(br_slot_add_mem(s, out, len + 4), 0);
    br_slot_ready(c, s);
    if (len > 0 && payload[0] == '!') {
        br_conn_throttle(c, 40); /* answered, then muted (KIP-219) */
    }
}

static void user_cancel(void *ctx, void *parked)
{
    struct user *u = ctx;
    u->ncancelled++;
    u->cancelled = parked;
}

static void user_drain(void *ctx)
{
    struct user *u = ctx;
    u->ndrains++;
}

static const struct br_net_ops user_ops = {user_frame, user_cancel, user_drain, NULL};

static struct br_net *net_new(struct user *u)
{
    struct br_net_limits lim = {
        .max_connections = 16,
        .max_request_bytes = 1 << 20,
        .idle_ms = 0,
        .queued_max_bytes = 0,
    };
    struct br_net *n = NULL;
    CU_ASSERT_EQUAL_FATAL(br_net_create(&lim, &user_ops, u, &n), 0);
    if (n == NULL) {
        abort();
    }
    u->net = n;
    return n;
}

static struct user *user_new(void)
{
    struct user *u = kp_calloc(1, sizeof *u);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    if (u == NULL) {
        abort();
    }
    u->last_deadline = INT64_MIN;
    return u;
}

/* ---------------------------------------------------------------- timers */

/* Thousands of timers armed in a scrambled order, some cancelled, some
 * rearmed (earlier and later): every one still armed fires once, in
 * deadline order, and a cancelled one never fires. */
static void test_timers_fire_in_deadline_order(void)
{
    struct user *u = user_new();
    struct br_net *n = net_new(u);
    struct br_timer *t = kp_calloc(NTIMERS, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    if (t == NULL) {
        abort();
    }
    int64_t base = br_now_mono_ms() - (int64_t)10 * NTIMERS; /* all due by now */
    uint32_t x = 12345;
    for (size_t i = 0; i < NTIMERS; i++) {
        x = x * 1103515245u + 12345u;
        br_timer_init(&t[i], &test_timer, NULL);
        br_timer_arm(n, &t[i], base + (int64_t)(x % (5 * NTIMERS)));
    }
    size_t expected = NTIMERS;
    for (size_t i = 0; i < NTIMERS; i += 7) {
        br_timer_cancel(n, &t[i]);
        CU_ASSERT_FALSE(br_timer_armed(&t[i]));
        br_timer_cancel(n, &t[i]); /* twice is harmless */
        expected--;
    }
    for (size_t i = 3; i < NTIMERS; i += 11) {
        if (br_timer_armed(&t[i])) {
            br_timer_arm(n, &t[i], base + (int64_t)((i * 37) % ((size_t)5 * NTIMERS)));
        }
    }
    /* one far in the future: not due */
    struct br_timer later;
    br_timer_init(&later, &test_timer, NULL);
    br_timer_arm(n, &later, br_now_mono_ms() + (int64_t)3600 * 1000);
    br_net_poll(n);
    CU_ASSERT_EQUAL(u->nfired, expected);
    CU_ASSERT_FALSE(u->order_broken);
    for (size_t i = 0; i < NTIMERS; i++) {
        CU_ASSERT_FALSE(br_timer_armed(&t[i]));
    }
    CU_ASSERT_TRUE(br_timer_armed(&later));
    br_timer_cancel(n, &later);
    kp_free(t);
    br_net_free(n);
    kp_free(u);
}

/* A timer rearmed from its own callback fires again; cancelling the root
 * (the earliest) leaves the others in order. */
static void test_timer_rearmed_from_its_callback(void)
{
    struct user *u = user_new();
    struct br_net *n = net_new(u);
    struct br_timer a;
    struct br_timer b;
    struct br_timer c;
    br_timer_init(&a, &test_timer, NULL);
    br_timer_init(&b, &test_timer, NULL);
    br_timer_init(&c, &test_timer, NULL);
    int64_t now = br_now_mono_ms();
    br_timer_arm(n, &a, now - 30);
    br_timer_arm(n, &b, now - 20);
    br_timer_arm(n, &c, now - 10);
    br_timer_cancel(n, &a); /* the root */
    u->rearm = &b;
    u->rearm_at = now + (int64_t)3600 * 1000;
    br_net_poll(n);
    CU_ASSERT_EQUAL(u->nfired, 2); /* b, then c */
    CU_ASSERT_EQUAL(u->fired_deadline[0], now - 20);
    CU_ASSERT_EQUAL(u->fired_deadline[1], now - 10);
    CU_ASSERT_TRUE(br_timer_armed(&b));
    CU_ASSERT_FALSE(br_timer_armed(&c));
    br_timer_arm(n, &b, now - 5); /* earlier again: due */
    u->last_deadline = INT64_MIN;
    br_net_poll(n);
    CU_ASSERT_EQUAL(u->nfired, 3);
    CU_ASSERT_FALSE(br_timer_armed(&b));
    br_net_free(n);
    kp_free(u);
}

/* ---------------------------------------------------------------- watches */

static void watch_ready(void *ctx, struct br_watch *w)
{
    struct user *u = ctx;
    uint64_t v = 0;
    CU_ASSERT_EQUAL(read(w->fd, &v, sizeof v), (ssize_t)sizeof v);
    u->nready++;
}

static const struct br_watch_ops test_watch = {"test", watch_ready};

static void test_user_watch_calls_its_ops(void)
{
    struct user *u = user_new();
    struct br_net *n = net_new(u);
    struct br_watch w;
    memset(&w, 0, sizeof w);
    w.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    CU_ASSERT_FATAL(w.fd >= 0);
    CU_ASSERT_EQUAL(br_net_watch_add(n, &w, &test_watch), 0);
    br_net_poll(n);
    CU_ASSERT_EQUAL(u->nready, 0);
    uint64_t one = 1;
    CU_ASSERT_EQUAL(write(w.fd, &one, sizeof one), (ssize_t)sizeof one);
    br_net_poll(n);
    CU_ASSERT_EQUAL(u->nready, 1);
    br_net_free(n);
    (void)close(w.fd);
    kp_free(u);
}

/* ---------------------------------------------------------------- connections */

static void feed_frame(struct br_conn *c, const char *text)
{
    size_t len = strlen(text);
    uint8_t buf[64];
    CU_ASSERT_FATAL(len + 4 <= sizeof buf);
    kp_store_be32(buf, (uint32_t)len);
    for (size_t i = 0; i < len; i++) {
        buf[4 + i] = (uint8_t)text[i]; /* a frame: no terminator */
    }
    /* split anywhere: the reactor reassembles frames */
    CU_ASSERT_EQUAL(br_conn_local_feed(c, buf, 3), 0);
    CU_ASSERT_EQUAL(br_conn_local_feed(c, buf + 3, len + 1), 0);
}

/* The parked slot answered "TWO" (after its size) and made ready. */
static void answer_parked(struct user *u, struct br_conn *c)
{
    uint8_t *ans = kp_malloc(7);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ans);
    if (ans == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    kp_store_be32(ans, 3);
    static const uint8_t two[3] = {'T', 'W', 'O'};
    memcpy(ans + 4, two, sizeof two);
    br_slot_set_parked(u->parked_slot, NULL);
    CU_ASSERT_EQUAL(br_slot_add_mem(u->parked_slot, ans, 7), 0);
    br_slot_ready(c, u->parked_slot);
}

/* The connection freed with one request parked: cancelled once, token in hand. */
static void free_cancelling(struct user *u, struct br_net *n, struct br_conn *c, const int *token)
{
    br_conn_local_free(c);
    CU_ASSERT_EQUAL(u->ncancelled, 1);
    CU_ASSERT_PTR_EQUAL(u->cancelled, token);
    br_net_free(n);
    kp_free(u);
}

/* Frames reach the user whole; answers go out in request order, a parked
 * slot holding back the ones behind it until it is ready. */
static void test_parked_slot_holds_back_later_answers(void)
{
    struct user *u = user_new();
    struct br_net *n = net_new(u);
    struct br_conn *c = br_conn_local_new(n, "test");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    feed_frame(c, "one");
    CU_ASSERT_EQUAL(u->nframes, 1);
    CU_ASSERT_EQUAL(u->last_len, 3);
    CU_ASSERT_EQUAL(memcmp(u->last_frame, "one", 3), 0);
    size_t len = 0;
    const uint8_t *out = br_conn_local_output(c, &len);
    CU_ASSERT_EQUAL(len, 7);
    CU_ASSERT_EQUAL(memcmp(out + 4, "one", 3), 0);
    br_conn_local_consume(c, len);

    static int token;
    u->park_on = c;
    u->parked_token = &token;
    feed_frame(c, "two"); /* parked */
    feed_frame(c, "three");
    CU_ASSERT_EQUAL(u->nframes, 3);
    (void)br_conn_local_output(c, &len);
    CU_ASSERT_EQUAL(len, 0); /* "three" waits behind the parked slot */
    answer_parked(u, c);
    out = br_conn_local_output(c, &len);
    CU_ASSERT_EQUAL(len, 7 + 9);
    CU_ASSERT_EQUAL(memcmp(out + 4, "TWO", 3), 0);
    CU_ASSERT_EQUAL(memcmp(out + 11, "three", 5), 0);
    br_conn_local_free(c);
    CU_ASSERT_EQUAL(u->ncancelled, 0);
    br_net_free(n);
    kp_free(u);
}

/* A frame held back (br_conn_hold) comes again once every answer before it
 * is ready; the frames after it wait with it; one held on a connection that
 * goes away is dropped with it. */
static void test_held_frame_comes_again_when_those_before_are_answered(void)
{
    struct user *u = user_new();
    struct br_net *n = net_new(u);
    struct br_conn *c = br_conn_local_new(n, "test");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    feed_frame(c, "hnow"); /* nothing before it: answered at once */
    CU_ASSERT_EQUAL(u->nheld, 0);
    size_t len = 0;
    (void)br_conn_local_output(c, &len);
    CU_ASSERT_EQUAL(len, 8);
    br_conn_local_consume(c, len);

    static int token;
    u->park_on = c;
    u->parked_token = &token;
    feed_frame(c, "two");  /* parked */
    feed_frame(c, "hsix"); /* held */
    feed_frame(c, "ten");  /* not handled: behind the held one */
    CU_ASSERT_EQUAL(u->nframes, 3);
    CU_ASSERT_EQUAL(u->nheld, 1);
    (void)br_conn_local_output(c, &len);
    CU_ASSERT_EQUAL(len, 0);
    answer_parked(u, c);
    CU_ASSERT_EQUAL(u->nframes, 5); /* "hsix" again, then "ten" */
    CU_ASSERT_EQUAL(u->nheld, 1);
    const uint8_t *out = br_conn_local_output(c, &len);
    CU_ASSERT_EQUAL_FATAL(len, 7 + 8 + 7);
    CU_ASSERT_EQUAL(memcmp(out + 4, "TWO", 3), 0);
    CU_ASSERT_EQUAL(memcmp(out + 11, "hsix", 4), 0);
    CU_ASSERT_EQUAL(memcmp(out + 19, "ten", 3), 0);
    br_conn_local_consume(c, len);

    /* held behind a parked one, then the connection goes */
    u->park_on = c;
    feed_frame(c, "parked");
    feed_frame(c, "hlate");
    CU_ASSERT_EQUAL(u->nheld, 2);
    free_cancelling(u, n, c, &token);
}

/* A throttled connection (br_conn_throttle, KIP-219's mute) has its answer
 * out at once and no frame after it handled until the throttle time has
 * passed; then the frames it holds are handled. One freed while throttled
 * takes its timer with it. */
static void test_throttled_connection_waits_out_its_throttle(void)
{
    struct user *u = user_new();
    struct br_net *n = net_new(u);
    struct br_conn *c = br_conn_local_new(n, "test");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    int64_t t0 = br_now_mono_ms();
    feed_frame(c, "!one");
    feed_frame(c, "two");
    CU_ASSERT_EQUAL(u->nframes, 1);
    CU_ASSERT_TRUE(br_conn_throttled(c));
    size_t len = 0;
    const uint8_t *out = br_conn_local_output(c, &len);
    CU_ASSERT_EQUAL_FATAL(len, 8);
    CU_ASSERT_EQUAL(memcmp(out + 4, "!one", 4), 0);
    br_conn_local_consume(c, len);
    while (u->nframes < 2 && br_now_mono_ms() - t0 < 5000) {
        br_net_poll(n);
        struct timespec ts = {0, 2000000};
        (void)nanosleep(&ts, NULL);
    }
    CU_ASSERT_EQUAL(u->nframes, 2);
    CU_ASSERT_TRUE(br_now_mono_ms() - t0 >= 40);
    CU_ASSERT_FALSE(br_conn_throttled(c));
    out = br_conn_local_output(c, &len);
    CU_ASSERT_EQUAL_FATAL(len, 7);
    CU_ASSERT_EQUAL(memcmp(out + 4, "two", 3), 0);
    br_conn_local_consume(c, len);
    feed_frame(c, "!again"); /* throttled again, then freed */
    CU_ASSERT_TRUE(br_conn_throttled(c));
    br_conn_local_free(c);
    br_net_poll(n); /* no timer of the freed connection fires */
    br_net_free(n);
    kp_free(u);
}

/* A connection that goes away with a parked request cancels it through the
 * user's ops, once, and the user hears nothing else of it. */
static void test_closing_connection_cancels_its_parked_request(void)
{
    struct user *u = user_new();
    struct br_net *n = net_new(u);
    struct br_conn *c = br_conn_local_new(n, "test");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    static int token;
    u->park_on = c;
    u->parked_token = &token;
    feed_frame(c, "parked");
    CU_ASSERT_EQUAL(u->nframes, 1);
    free_cancelling(u, n, c, &token);
}

/* A frame claiming more than socket.request.max.bytes closes only that
 * connection, before the user sees anything. */
static void test_oversized_frame_closes_the_connection(void)
{
    struct user *u = user_new();
    struct br_net *n = net_new(u);
    struct br_conn *c = br_conn_local_new(n, "test");
    struct br_conn *other = br_conn_local_new(n, "other");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    uint8_t hostile[4];
    kp_store_be32(hostile, (uint32_t)(2 << 20));
    (void)br_conn_local_feed(c, hostile, sizeof hostile);
    CU_ASSERT_TRUE(br_conn_local_closed(c));
    CU_ASSERT_EQUAL(u->nframes, 0);
    feed_frame(other, "still here");
    CU_ASSERT_EQUAL(u->nframes, 1);
    CU_ASSERT_FALSE(br_conn_local_closed(other));
    br_conn_local_free(c);
    br_conn_local_free(other);
    br_net_free(n);
    kp_free(u);
}

/* ---------------------------------------------------------------- outbound */

/* The other end of an outbound connection: the test's own client. */
struct client {
    bool connected;
    bool closed;
    int err;
    size_t nframes;
    uint8_t *got; /* the last frame, copied */
    size_t got_len;
};

static void client_connected(void *ctx, struct br_conn *c)
{
    (void)c;
    struct client *cl = ctx;
    CU_ASSERT_FALSE(cl->closed);
    cl->connected = true;
}

static void client_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    (void)c;
    struct client *cl = ctx;
    kp_free(cl->got);
    cl->got = kp_malloc(len > 0 ? len : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cl->got);
    if (cl->got == NULL) {
        abort();
    }
    memcpy(cl->got, payload, len);
    cl->got_len = len;
    cl->nframes++;
}

static void client_closed(void *ctx, struct br_conn *c, int err)
{
    (void)c;
    struct client *cl = ctx;
    CU_ASSERT_FALSE(cl->closed); /* once */
    cl->closed = true;
    cl->err = err;
}

static const struct br_conn_ops client_ops = {client_connected, client_frame, client_closed};

/* Turns the loop until *flag or 10 s pass. */
static bool poll_until(struct br_net *n, const bool *flag)
{
    int64_t deadline = br_now_mono_ms() + 10000;
    while (!*flag && br_now_mono_ms() < deadline) {
        br_net_poll(n);
    }
    return *flag;
}

static bool poll_until_frames(struct br_net *n, const struct client *cl, size_t want)
{
    int64_t deadline = br_now_mono_ms() + 10000;
    while (cl->nframes < want && !cl->closed && br_now_mono_ms() < deadline) {
        br_net_poll(n);
    }
    return cl->nframes >= want;
}

static uint8_t *frame_of(const uint8_t *p, size_t len)
{
    uint8_t *f = kp_malloc(len + 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    if (f == NULL) {
        abort();
    }
    kp_store_be32(f, (uint32_t)len);
    memcpy(f + 4, p, len);
    return f;
}

static struct br_net *listening_net(struct user *u, int32_t max_request, int64_t queued_max,
                                    int *port)
{
    struct br_net_limits lim = {.max_connections = 16,
                                .max_request_bytes = max_request,
                                .queued_max_bytes = queued_max};
    struct br_net *n = NULL;
    CU_ASSERT_EQUAL_FATAL(br_net_create(&lim, &user_ops, u, &n), 0);
    if (n == NULL) {
        abort();
    }
    u->net = n;
    CU_ASSERT_EQUAL_FATAL(br_net_listen(n, "127.0.0.1", 0), 0);
    *port = br_net_bound_port(n, 0);
    CU_ASSERT_FATAL(*port > 0);
    return n;
}

/* An outbound connection to the reactor's own listener: requests sent
 * before the connect completed go out after it, in order; each answer (the
 * listener's user echoes) comes back whole, a 6 MiB one too, which takes
 * many partial writes and reads on each side. */
static void test_outbound_connection_exchanges_frames(void)
{
    struct user *u = user_new();
    int port = 0;
    struct br_net *n = listening_net(u, 16 << 20, 0, &port);
    struct client cl = {0};
    struct br_conn *c = NULL;
    CU_ASSERT_EQUAL_FATAL(br_conn_connect(n, "127.0.0.1", port, 16 << 20, &client_ops, &cl, &c), 0);
    CU_ASSERT_TRUE(br_conn_connecting(c));
    CU_ASSERT_EQUAL(br_conn_send(c, frame_of((const uint8_t *)"first", 5), 9), 0);
    CU_ASSERT_EQUAL(br_conn_send(c, frame_of((const uint8_t *)"second", 6), 10), 0);
    CU_ASSERT_TRUE(poll_until(n, &cl.connected));
    CU_ASSERT_FALSE(br_conn_connecting(c));
    CU_ASSERT_TRUE(poll_until_frames(n, &cl, 2));
    CU_ASSERT_EQUAL(u->nframes, 2);
    CU_ASSERT_EQUAL(cl.got_len, 6);
    CU_ASSERT_EQUAL(memcmp(cl.got, "second", 6), 0);

    size_t big = (size_t)6 << 20;
    uint8_t *payload = kp_malloc(big);
    CU_ASSERT_PTR_NOT_NULL_FATAL(payload);
    if (payload == NULL) {
        abort();
    }
    for (size_t i = 0; i < big; i++) {
        payload[i] = (uint8_t)(i * 131u + (i >> 13));
    }
    CU_ASSERT_EQUAL(br_conn_send(c, frame_of(payload, big), big + 4), 0);
    CU_ASSERT_TRUE(poll_until_frames(n, &cl, 3));
    CU_ASSERT_EQUAL_FATAL(cl.got_len, big);
    CU_ASSERT_EQUAL(memcmp(cl.got, payload, big), 0);
    kp_free(payload);
    CU_ASSERT_FALSE(cl.closed);
    br_conn_close(c); /* no closed callback for a close of its own */
    br_net_poll(n);
    CU_ASSERT_FALSE(cl.closed);
    kp_free(cl.got);
    br_net_free(n);
    kp_free(u);
}

/* A refused connect, a name that would need a lookup, an answer over the
 * frame limit and a peer that goes away: each reported once, with why. */
static void test_outbound_failures_are_reported(void)
{
    struct user *u = user_new();
    int port = 0;
    struct br_net *n = listening_net(u, 1 << 20, 0, &port);
    struct br_conn *c = NULL;
    struct client cl = {0};
    CU_ASSERT_EQUAL(br_conn_connect(n, "localhost", port, 1024, &client_ops, &cl, &c),
                    KP_E_INVALID_ARG); /* no DNS on the reactor */
    CU_ASSERT_PTR_NULL(c);

    /* a port nobody listens on: one bound, then closed */
    struct br_net *other = NULL;
    struct user *u2 = user_new();
    int dead_port = 0;
    other = listening_net(u2, 1024, 0, &dead_port);
    br_net_free(other);
    kp_free(u2);
    CU_ASSERT_EQUAL_FATAL(br_conn_connect(n, "127.0.0.1", dead_port, 1024, &client_ops, &cl, &c),
                          0);
    CU_ASSERT_TRUE(poll_until(n, &cl.closed));
    CU_ASSERT_FALSE(cl.connected);
    CU_ASSERT_EQUAL(cl.err, ECONNREFUSED);

    /* an echo of 2 KiB against a limit of 1 KiB */
    struct client big = {0};
    CU_ASSERT_EQUAL_FATAL(br_conn_connect(n, "127.0.0.1", port, 1024, &client_ops, &big, &c), 0);
    uint8_t blob[2048];
    memset(blob, 'x', sizeof blob);
    CU_ASSERT_EQUAL(br_conn_send(c, frame_of(blob, sizeof blob), sizeof blob + 4), 0);
    CU_ASSERT_TRUE(poll_until(n, &big.closed));
    CU_ASSERT_TRUE(big.connected);
    CU_ASSERT_EQUAL(big.nframes, 0);
    CU_ASSERT_EQUAL(big.err, EPROTO);

    /* the peer closes: a hostile frame size makes the listener's side close */
    struct client hung = {0};
    CU_ASSERT_EQUAL_FATAL(br_conn_connect(n, "127.0.0.1", port, 1024, &client_ops, &hung, &c), 0);
    uint8_t hostile[4];
    kp_store_be32(hostile, (uint32_t)(64 << 20));
    uint8_t *f = kp_malloc(sizeof hostile);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    if (f == NULL) {
        abort();
    }
    memcpy(f, hostile, sizeof hostile);
    CU_ASSERT_EQUAL(br_conn_send(c, f, sizeof hostile), 0);
    CU_ASSERT_TRUE(poll_until(n, &hung.closed));
    CU_ASSERT_TRUE(hung.connected);
    CU_ASSERT(hung.err == 0 || hung.err == ECONNRESET);
    br_net_free(n);
    kp_free(cl.got);
    kp_free(big.got);
    kp_free(hung.got);
    kp_free(u);
}

/* ---------------------------------------------------------------- queued.max.request.bytes */

/* A raw client socket: the frame it sends and how far it got. */
struct sender {
    int fd;
    uint8_t *frame;
    size_t len;
    size_t sent;
    size_t target; /* what it sends before it stalls */
};

static int client_socket(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CU_ASSERT_FATAL(fd >= 0);
    int sndbuf = 16 * 1024; /* so that a peer not read soon cannot send */
    CU_ASSERT_EQUAL(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf), 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CU_ASSERT_EQUAL_FATAL(connect(fd, (const struct sockaddr *)&sa, sizeof sa), 0);
    CU_ASSERT_EQUAL(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    return fd;
}

/* Sends what each socket takes up to its target, turning the reactor in
 * between, until every one reached it or none moved for 300 ms (the
 * reactor stopped reading them and their socket buffers are full).
 * Returns how many are short of their target. */
static size_t push_until_stalled(struct br_net *n, struct sender *s, size_t cnt)
{
    int64_t quiet_since = br_now_mono_ms();
    int64_t deadline = quiet_since + 20000;
    for (;;) {
        size_t short_of = 0;
        for (size_t i = 0; i < cnt; i++) {
            if (s[i].sent >= s[i].target) {
                continue;
            }
            ssize_t w = send(s[i].fd, s[i].frame + s[i].sent, s[i].target - s[i].sent,
                             MSG_NOSIGNAL);
            if (w > 0) {
                s[i].sent += (size_t)w;
                quiet_since = br_now_mono_ms();
            }
            short_of += s[i].sent < s[i].target;
        }
        br_net_poll(n);
        int64_t now = br_now_mono_ms();
        if (short_of == 0 || now - quiet_since >= 300 || now >= deadline) {
            return short_of;
        }
    }
}

static bool poll_until_count(struct br_net *n, const size_t *count, size_t want)
{
    int64_t deadline = br_now_mono_ms() + 10000;
    while (*count < want && br_now_mono_ms() < deadline) {
        br_net_poll(n);
    }
    return *count >= want;
}

/* A connection that will send a frame of len bytes (its size included)
 * filled with fill, target bytes of it at first. */
static void sender_open(struct sender *s, int port, size_t len, size_t target, char fill)
{
    s->len = len;
    s->frame = kp_malloc(len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->frame);
    if (s->frame == NULL) {
        abort();
    }
    memset(s->frame, fill, len);
    kp_store_be32(s->frame, (uint32_t)(len - 4));
    s->sent = 0;
    s->target = target;
    s->fd = client_socket(port);
}

/* The rest of every frame goes (the reactor turning meanwhile). */
static void senders_finish(struct br_net *n, struct sender *s, size_t cnt)
{
    for (size_t i = 0; i < cnt; i++) {
        s[i].target = s[i].len;
    }
    CU_ASSERT_EQUAL(push_until_stalled(n, s, cnt), 0);
}

static void senders_close(struct sender *s, size_t cnt)
{
    for (size_t i = 0; i < cnt; i++) {
        close(s[i].fd);
        kp_free(s[i].frame);
    }
}

/* A 5-byte frame, "small", on a connection of its own. */
static int send_small(int port)
{
    int fd = client_socket(port);
    static const uint8_t req[4 + 5] = {0, 0, 0, 5, 's', 'm', 'a', 'l', 'l'};
    CU_ASSERT_EQUAL(send(fd, req, sizeof req, MSG_NOSIGNAL), (ssize_t)sizeof req);
    return fd;
}

#define BIG_SENDERS 4
#define SMALL_SENDERS 3

/* queued.max.request.bytes at 1 MiB: four connections each send 800 KiB
 * of a 900 KiB frame and stall, and the reactor stops reading some of
 * them; a new connection's small frame is still handled. Once the big
 * frames' ends come, every one of them is handled, one after the other
 * as room frees. */
static void test_big_frames_leave_room_for_a_small_one(void)
{
    struct user *u = user_new();
    int port = 0;
    struct br_net *n = listening_net(u, 1 << 20, 1 << 20, &port);
    struct sender s[BIG_SENDERS];
    for (size_t i = 0; i < BIG_SENDERS; i++) {
        sender_open(&s[i], port, (size_t)900 * 1024, (size_t)800 * 1024, (char)('a' + i));
    }
    (void)push_until_stalled(n, s, BIG_SENDERS);
    CU_ASSERT_EQUAL(u->nframes, 0);
    /* big frames filled the limit less its reserve, and the one finishing
     * its frame went on: at most the limit and two frames (net_input.c) */
    struct br_net_counts nc;
    br_net_counts(n, &nc);
    CU_ASSERT(nc.input_big_bytes >= (size_t)896 * 1024);
    CU_ASSERT(nc.input_bytes <= ((size_t)1 << 20) + 2 * s[0].len);

    int small = send_small(port);
    CU_ASSERT_TRUE(poll_until_count(n, &u->nframes, 1));
    CU_ASSERT_EQUAL(u->last_len, 5);
    CU_ASSERT_EQUAL(memcmp(u->last_frame, "small", 5), 0);

    senders_finish(n, s, BIG_SENDERS);
    CU_ASSERT_TRUE(poll_until_count(n, &u->nframes, 1 + BIG_SENDERS));
    senders_close(s, BIG_SENDERS);
    close(small);
    br_net_free(n);
    kp_free(u);
}

/* Past the limit, small frames stalled in their middle fill the reserve
 * (128 KiB of 1 MiB) and then small frames wait too, but not for ever:
 * once the stalled ones' ends come, each finishes in turn and the small
 * frame that waited behind them is handled; then the big ones are. */
static void test_small_frames_stalled_in_the_reserve_still_finish(void)
{
    struct user *u = user_new();
    int port = 0;
    struct br_net *n = listening_net(u, 1 << 20, 1 << 20, &port);
    struct sender big[BIG_SENDERS];
    for (size_t i = 0; i < BIG_SENDERS; i++) {
        sender_open(&big[i], port, (size_t)1 << 20, (size_t)1000 * 1024, (char)('a' + i));
    }
    (void)push_until_stalled(n, big, BIG_SENDERS);
    struct br_net_counts nc;
    br_net_counts(n, &nc);
    CU_ASSERT(nc.input_bytes >= (size_t)1 << 20); /* small frames only in the reserve */
    struct sender mid[SMALL_SENDERS];
    for (size_t i = 0; i < SMALL_SENDERS; i++) {
        sender_open(&mid[i], port, (size_t)60 * 1024, (size_t)50 * 1024, (char)('m' + i));
    }
    (void)push_until_stalled(n, mid, SMALL_SENDERS);
    br_net_counts(n, &nc);
    CU_ASSERT(nc.input_bytes - nc.input_big_bytes <= (size_t)(128 + 64) * 1024);
    int small = send_small(port);
    senders_finish(n, mid, SMALL_SENDERS);
    CU_ASSERT_TRUE(poll_until_count(n, &u->nframes, SMALL_SENDERS + 1));
    senders_finish(n, big, BIG_SENDERS);
    CU_ASSERT_TRUE(poll_until_count(n, &u->nframes, SMALL_SENDERS + 1 + BIG_SENDERS));
    senders_close(big, BIG_SENDERS);
    senders_close(mid, SMALL_SENDERS);
    close(small);
    br_net_free(n);
    kp_free(u);
}

static CU_TestInfo tests[] = {
    {"timers_fire_in_deadline_order", test_timers_fire_in_deadline_order},
    {"timer_rearmed_from_its_callback", test_timer_rearmed_from_its_callback},
    {"user_watch_calls_its_ops", test_user_watch_calls_its_ops},
    {"parked_slot_holds_back_later_answers", test_parked_slot_holds_back_later_answers},
    {"closing_connection_cancels_its_parked_request",
     test_closing_connection_cancels_its_parked_request},
    {"held_frame_comes_again_when_those_before_are_answered",
     test_held_frame_comes_again_when_those_before_are_answered},
    {"throttled_connection_waits_out_its_throttle",
     test_throttled_connection_waits_out_its_throttle},
    {"oversized_frame_closes_the_connection", test_oversized_frame_closes_the_connection},
    {"outbound_connection_exchanges_frames", test_outbound_connection_exchanges_frames},
    {"outbound_failures_are_reported", test_outbound_failures_are_reported},
    {"big_frames_leave_room_for_a_small_one", test_big_frames_leave_room_for_a_small_one},
    {"small_frames_stalled_in_the_reserve_still_finish",
     test_small_frames_stalled_in_the_reserve_still_finish},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-reactor", tests);
}
