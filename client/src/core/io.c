/*
 * The I/O thread of a handle: connections to brokers (non-blocking sockets,
 * ApiVersions first, strictly ordered responses), the poll(2) loop, cluster
 * metadata, and the error event queue the user's poll calls drain.
 *
 * @locality: every function here runs on the I/O thread with c->lock held,
 * except sc_client_create/destroy, sc_wake and sc_serve_errors (user threads).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"

/* A broker's response frame may not exceed this (a Fetch answer is bounded
 * by fetch.max.bytes plus headers; this is the ceiling for the rest). */
#define MAX_RESPONSE_BYTES ((size_t)512 * 1024 * 1024)
#define ARENA_MAX ((size_t)256 * 1024 * 1024)
#define MAX_POLL_FDS 256

/* Weak: the unit tests' model-broker driver (tests/client/test_client.c)
 * replaces it with a fake clock, so that a detached client's timers,
 * backoffs and deadlines all read the same time the test sets. Not exported
 * from libsamsa.so (libsamsa.map); nothing else defines it. */
__attribute__((weak)) int64_t sc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sc_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sc_err_from_wire(int16_t wire)
{
    return wire == -1 ? SAMSA_ERR_UNKNOWN : (int)wire;
}

void sc_log(const struct sc_client *c, const char *fmt, ...)
{
    if (c->v->debug == NULL || c->v->debug[0] == '\0') {
        return;
    }
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if (c->conf->log_cb != NULL) {
        /* where the line is made (samsa.h: the log callback's thread) */
        c->conf->log_cb(SAMSA_LOG_DEBUG, line, c->conf->log_opaque);
    } else {
        fprintf(stderr, "samsa %" PRId64 " [%c] %s\n", sc_now_ms(), c->kind, line);
    }
}

void sc_wake(struct sc_client *c)
{
    uint64_t one = 1;
    ssize_t n = write(c->wake_fd, &one, sizeof(one));
    (void)n; /* EAGAIN: the counter is already non-zero, the thread will wake */
}

/* ----------------------------------------------------------------- gate */

bool sc_gate_enter(struct sc_gate *g)
{
    atomic_fetch_add(&g->calls, 1);
    if (!atomic_load(&g->closed)) {
        return true;
    }
    /* closer is read only once closer_may_call says it was written */
    if (atomic_load(&g->closer_may_call) && pthread_equal(g->closer, pthread_self())) {
        return true;
    }
    atomic_fetch_sub(&g->calls, 1);
    return false;
}

void sc_gate_leave(struct sc_gate *g)
{
    atomic_fetch_sub(&g->calls, 1);
}

bool sc_gate_close(struct sc_gate *g, struct sc_client *c)
{
    bool open = false;
    if (!atomic_compare_exchange_strong(&g->closed, &open, true)) {
        return false;
    }
    g->closer = pthread_self();
    /* A call already inside may be waiting (a poll, a flush, an op, a
     * seek): c->closing makes each wait give up; the broadcast is repeated
     * for a call that read c->closing just before it was set. */
    pthread_mutex_lock(&c->lock);
    c->closing = true;
    pthread_mutex_unlock(&c->lock);
    while (atomic_load(&g->calls) > 0) {
        pthread_mutex_lock(&c->lock);
        pthread_cond_broadcast(&c->ev_cond);
        pthread_mutex_unlock(&c->lock);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    pthread_mutex_lock(&c->lock);
    c->closing = false;
    pthread_mutex_unlock(&c->lock);
    atomic_store(&g->closer_may_call, true);
    return true;
}

void sc_gate_shut(struct sc_gate *g)
{
    atomic_store(&g->closer_may_call, false);
}

/* --------------------------------------------------------------- errors */

void sc_post_error(struct sc_client *c, int err, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (n < 0) {
        reason[0] = '\0';
    }
    size_t len = strlen(reason);
    struct sc_err_ev *ev = kp_calloc(1, sizeof(*ev) + len + 1);
    if (ev == NULL) {
        return;
    }
    ev->err = sc_err_public(err);
    memcpy(ev->reason, reason, len + 1);
    if (c->errs_tail != NULL) {
        c->errs_tail->next = ev;
    } else {
        c->errs = ev;
    }
    c->errs_tail = ev;
    sc_log(c, "error %s: %s", samsa_err_name(err), reason);
    pthread_cond_broadcast(&c->ev_cond);
}

static void err_ev_free(struct sc_err_ev *ev)
{
    if (ev->parts != NULL) {
        for (size_t i = 0; i < ev->part_count; i++) {
            kp_free((void *)(uintptr_t)ev->parts[i].topic);
        }
        kp_free(ev->parts);
    }
    kp_free(ev);
}

int sc_serve_errors(struct sc_client *c)
{
    int ran = 0;
    while (c->errs != NULL) {
        struct sc_err_ev *ev = c->errs;
        c->errs = ev->next;
        if (c->errs == NULL) {
            c->errs_tail = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        if (ev->rebalance) {
            if (c->conf->rebalance_cb != NULL) {
                c->conf->rebalance_cb(ev->assigned, ev->parts, ev->part_count,
                                      c->conf->rebalance_opaque);
                ran++;
            }
        } else if (c->conf->error_cb != NULL) {
            c->conf->error_cb(ev->err, ev->reason, c->conf->error_opaque);
            ran++;
        }
        bool ack = ev->ack;
        err_ev_free(ev);
        pthread_mutex_lock(&c->lock);
        if (ack) {
            /* The group waits for this before it rejoins. */
            c->rebalance_acks++;
            sc_wake(c);
        }
    }
    return ran;
}

bool sc_post_rebalance(struct sc_client *c, bool assigned, const struct samsa_partition *parts,
                       size_t n, bool ack)
{
    struct sc_err_ev *ev = kp_calloc(1, sizeof(*ev) + 1);
    if (ev == NULL) {
        return false;
    }
    ev->rebalance = true;
    ev->assigned = assigned;
    ev->ack = ack;
    ev->parts = kp_calloc(n > 0 ? n : 1, sizeof(*ev->parts));
    if (ev->parts == NULL) {
        kp_free(ev);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char *t = sc_strdup(parts[i].topic);
        if (t == NULL) {
            err_ev_free(ev);
            return false;
        }
        ev->parts[i].topic = t;
        ev->parts[i].partition = parts[i].partition;
        ev->parts[i].offset = parts[i].offset;
        ev->part_count++;
    }
    if (c->errs_tail != NULL) {
        c->errs_tail->next = ev;
    } else {
        c->errs = ev;
    }
    c->errs_tail = ev;
    sc_log(c, "rebalance: %s %zu partition(s)", assigned ? "assigned" : "revoked", n);
    pthread_cond_broadcast(&c->ev_cond);
    return true;
}

/* ---------------------------------------------------------- connections */

static struct sc_conn *conn_new(struct sc_client *c, int32_t node_id, const char *host, int port)
{
    struct sc_conn *conn = kp_calloc(1, sizeof(*conn));
    if (conn == NULL) {
        return NULL;
    }
    conn->host = sc_strdup(host);
    if (conn->host == NULL) {
        kp_free(conn);
        return NULL;
    }
    conn->node_id = node_id;
    conn->port = port;
    conn->fd = -1;
    conn->backoff_ms = c->v->reconnect_backoff_ms;
    kp_wr_init(&conn->out, (size_t)1 << 30);
    conn->next = c->conns;
    c->conns = conn;
    return conn;
}

bool sc_conn_is_up(const struct sc_conn *conn)
{
    return conn != NULL && conn->state == SC_CONN_UP;
}

bool sc_conn_failed(const struct sc_client *c, const struct sc_conn *conn)
{
    /* conn_close doubles backoff_ms; a success puts it back to the base */
    return conn != NULL && conn->state == SC_CONN_DOWN &&
           conn->backoff_ms > c->v->reconnect_backoff_ms;
}

static void fail_requests(struct sc_client *c, struct sc_conn *conn, int err)
{
    struct sc_req *r = conn->reqs;
    conn->reqs = conn->reqs_tail = NULL;
    conn->req_count = 0;
    while (r != NULL) {
        struct sc_req *next = r->next;
        if (r->fn != NULL) {
            r->fn(c, conn, err, NULL, r->ctx);
        }
        kp_free(r);
        r = next;
    }
}

static void conn_close(struct sc_client *c, struct sc_conn *conn, int err, const char *why)
{
    if (conn->fd >= 0) {
        close(conn->fd);
        conn->fd = -1;
    }
    bool was_up = conn->state == SC_CONN_UP;
    conn->state = SC_CONN_DOWN;
    kp_wr_reset(&conn->out);
    conn->out_off = 0;
    conn->in_len = 0;
    int64_t now = sc_now_ms();
    conn->next_attempt_ms = now + conn->backoff_ms;
    int max = c->v->reconnect_backoff_max_ms;
    conn->backoff_ms = conn->backoff_ms * 2 > max ? max : (conn->backoff_ms * 2 + 1);
    sc_log(c, "connection to %s:%d (node %d) closed: %s", conn->host, conn->port, conn->node_id,
           why);
    if (was_up && conn->node_id >= 0) {
        /* A broker went away: where partitions lead may have changed. */
        sc_metadata_want(c);
    }
    fail_requests(c, conn, err);
    conn->produce_inflight = 0;
    conn->fetch_inflight = false;
}

static void conn_free(struct sc_conn *conn)
{
    if (conn->fd >= 0) {
        close(conn->fd);
    }
    kp_wr_free(&conn->out);
    kp_free(conn->in);
    kp_free(conn->host);
    kp_free(conn);
}

struct sc_conn *sc_conn_get(struct sc_client *c, int32_t node_id)
{
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        if (conn->node_id == node_id && !conn->coordinator) {
            conn->wanted = true;
            return conn;
        }
    }
    const struct sc_broker_md *b = sc_broker_find(c, node_id);
    if (b == NULL) {
        return NULL;
    }
    struct sc_conn *conn = conn_new(c, node_id, b->host, b->port);
    if (conn != NULL) {
        conn->wanted = true;
    }
    return conn;
}

struct sc_conn *sc_conn_get_coordinator(struct sc_client *c, int32_t node_id)
{
    struct sc_conn *found = NULL;
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        if (conn->coordinator) {
            /* Only the current coordinator's connection is kept wanted. */
            conn->wanted = conn->node_id == node_id;
            if (conn->node_id == node_id) {
                found = conn;
            }
        }
    }
    if (found != NULL) {
        return found;
    }
    const struct sc_broker_md *b = sc_broker_find(c, node_id);
    if (b == NULL) {
        return NULL;
    }
    struct sc_conn *conn = conn_new(c, node_id, b->host, b->port);
    if (conn != NULL) {
        conn->coordinator = true;
        conn->wanted = true;
    }
    return conn;
}

static struct sc_conn *find_up(struct sc_client *c)
{
    struct sc_conn *boot = NULL;
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        if (conn->state == SC_CONN_UP && !conn->coordinator) {
            if (conn->node_id >= 0) {
                return conn;
            }
            boot = conn;
        }
    }
    return boot;
}

struct sc_conn *sc_conn_any_up(struct sc_client *c)
{
    struct sc_conn *up = find_up(c);
    if (up == NULL) {
        /* Nothing is up: every known broker is worth trying (bootstrap
         * servers are tried whenever nothing is up, see conn_timeouts). */
        for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
            conn->wanted = true;
        }
    }
    return up;
}

int16_t sc_conn_version(const struct sc_conn *conn, int16_t api, int16_t lo, int16_t hi)
{
    if (api < 0 || api >= SC_API_KEYS || conn->api_max[api] < 0) {
        return -1;
    }
    int16_t v = hi < conn->api_max[api] ? hi : conn->api_max[api];
    const struct kp_api *a = kp_api_find(api);
    if (a != NULL && v > a->max_version) {
        v = a->max_version;
    }
    if (v < lo || v < conn->api_min[api]) {
        return -1;
    }
    return v;
}

static int track_request(struct sc_client *c, struct sc_conn *conn, int16_t api, int16_t version,
                         size_t before, sc_resp_fn *fn, void *ctx);

static int queue_request(struct sc_client *c, struct sc_conn *conn, int16_t api, int16_t version,
                         const void *body, sc_resp_fn *fn, void *ctx)
{
    struct kp_request_header h = {
        .RequestApiKey = api,
        .RequestApiVersion = version,
        .CorrelationId = c->next_corr,
        .ClientId = kp_str_c(c->v->client_id),
    };
    size_t before = conn->out.len;
    int err = kp_request_encode(&conn->out, &h, body);
    if (err != 0) {
        /* The writer's error sticks: start it again, dropping the partial frame. */
        conn->out.len = before;
        conn->out.err = 0;
        return err == KP_E_NOMEM ? SAMSA_ERR_NOMEM : SAMSA_ERR_INVALID_ARG;
    }
    return track_request(c, conn, api, version, before, fn, ctx);
}

/* The request framed at conn->out from `before`, with correlation id
 * c->next_corr, is queued: its response goes to fn. */
static int track_request(struct sc_client *c, struct sc_conn *conn, int16_t api, int16_t version,
                         size_t before, sc_resp_fn *fn, void *ctx)
{
    int32_t corr = c->next_corr;
    c->next_corr = c->next_corr == INT32_MAX ? 1 : c->next_corr + 1;
    if (fn == NULL) {
        return SAMSA_OK;
    }
    struct sc_req *r = kp_calloc(1, sizeof(*r));
    if (r == NULL) {
        conn->out.len = before;
        return SAMSA_ERR_NOMEM;
    }
    r->corr = corr;
    r->api_key = api;
    r->api_version = version;
    int timeout = c->v->request_timeout_ms;
    if (api == KP_API_FETCH) {
        timeout += c->v->fetch_wait_max_ms;
    }
    if (api == KP_API_JOIN_GROUP) {
        timeout += c->v->max_poll_interval_ms;
    }
    r->deadline = sc_now_ms() + timeout;
    r->fn = fn;
    r->ctx = ctx;
    if (conn->reqs_tail != NULL) {
        conn->reqs_tail->next = r;
    } else {
        conn->reqs = r;
    }
    conn->reqs_tail = r;
    conn->req_count++;
    return SAMSA_OK;
}

int sc_conn_send(struct sc_client *c, struct sc_conn *conn, int16_t api, int16_t version,
                 const void *body, sc_resp_fn *fn, void *ctx)
{
    if (conn->state != SC_CONN_UP) {
        return SAMSA_ERR_TRANSPORT;
    }
    return queue_request(c, conn, api, version, body, fn, ctx);
}

struct kp_writer *sc_conn_out(struct sc_conn *conn)
{
    if (conn->state != SC_CONN_UP) {
        return NULL;
    }
    /* What was written to the socket moves out: the buffer holds only what
     * is still to go, so that it stops growing once it fits a request. */
    if (conn->out_off > 0) {
        size_t left = conn->out.len - conn->out_off;
        memmove(conn->out.buf, conn->out.buf + conn->out_off, left);
        conn->out.len = left;
        conn->out_off = 0;
    }
    return &conn->out;
}

int sc_conn_send_written(struct sc_client *c, struct sc_conn *conn, int16_t api,
                         int16_t version, size_t start, sc_resp_fn *fn, void *ctx)
{
    if (conn->state != SC_CONN_UP || start > conn->out.len) {
        return SAMSA_ERR_TRANSPORT;
    }
    return track_request(c, conn, api, version, start, fn, ctx);
}

size_t sc_conn_unsent(const struct sc_conn *conn)
{
    return conn->out.len - conn->out_off;
}

static void on_api_versions(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                            void *ctx)
{
    (void)ctx;
    if (err != 0) {
        return; /* the connection is being closed */
    }
    const struct kp_ApiVersionsResponse *r = body;
    if (r->ErrorCode != 0) {
        conn_close(c, conn, SAMSA_ERR_TRANSPORT, "ApiVersions refused");
        return;
    }
    for (int i = 0; i < SC_API_KEYS; i++) {
        conn->api_max[i] = -1;
        conn->api_min[i] = 0;
    }
    for (int32_t i = 0; i < r->ApiKeys.count; i++) {
        const struct kp_ApiVersionsResponse_ApiVersion *a = &r->ApiKeys.items[i];
        if (a->ApiKey >= 0 && a->ApiKey < SC_API_KEYS && a->MaxVersion >= a->MinVersion) {
            conn->api_max[a->ApiKey] = a->MaxVersion;
            conn->api_min[a->ApiKey] = a->MinVersion;
        }
    }
    conn->state = SC_CONN_UP;
    conn->backoff_ms = c->v->reconnect_backoff_ms;
    c->all_down_reported = 0;
    sc_log(c, "connected to %s:%d (node %d)", conn->host, conn->port, conn->node_id);
}

static void conn_start(struct sc_client *c, struct sc_conn *conn, int64_t now)
{
    if (c->detached) {
        /* No socket: whoever drives the client answers, starting with
         * this ApiVersions (sc_conn_feed). */
        struct kp_ApiVersionsRequest vreq;
        kp_ApiVersionsRequest_init(&vreq);
        conn->state = SC_CONN_HANDSHAKE;
        conn->next_attempt_ms = now + c->v->socket_timeout_ms;
        if (queue_request(c, conn, KP_API_API_VERSIONS, 0, &vreq, on_api_versions, NULL) != 0) {
            conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
        }
        return;
    }
    char port[16];
    snprintf(port, sizeof(port), "%d", conn->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    /* getaddrinfo blocks this handle's I/O thread only (never a user
     * thread); bootstrap names are usually literal addresses. */
    int gai = getaddrinfo(conn->host, port, &hints, &res);
    if (gai != 0 || res == NULL) {
        conn->next_attempt_ms = now + conn->backoff_ms;
        conn_close(c, conn, SAMSA_ERR_TRANSPORT, gai_strerror(gai));
        return;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        freeaddrinfo(res);
        conn_close(c, conn, SAMSA_ERR_TRANSPORT, strerror(errno));
        return;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (c->v->socket_keepalive) {
        (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    }
    int rc = connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        conn_close(c, conn, SAMSA_ERR_TRANSPORT, strerror(e));
        return;
    }
    conn->fd = fd;
    conn->state = SC_CONN_CONNECTING;
    conn->next_attempt_ms = now + c->v->socket_timeout_ms; /* connect deadline */
    /* ApiVersions v0 first: every broker answers it, whatever its version. */
    struct kp_ApiVersionsRequest req;
    kp_ApiVersionsRequest_init(&req);
    if (queue_request(c, conn, KP_API_API_VERSIONS, 0, &req, on_api_versions, NULL) != 0) {
        conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
        return;
    }
    conn->state = SC_CONN_CONNECTING;
}

/*
 * send(2) and recv(2) on the I/O thread, with the client lock released for
 * the system call (they copy every byte of a request or response, and the
 * user's samsa_produce / poll calls need the lock meanwhile). A connection's
 * socket and buffers belong to the I/O thread alone (user calls reach them
 * only after the thread stopped), so nothing changes them while unlocked.
 */
static ssize_t send_unlocked(struct sc_client *c, struct sc_conn *conn)
{
    pthread_mutex_unlock(&c->lock);
    ssize_t n = send(conn->fd, conn->out.buf + conn->out_off, conn->out.len - conn->out_off,
                     MSG_NOSIGNAL);
    int saved = errno;
    pthread_mutex_lock(&c->lock);
    errno = saved;
    return n;
}

static ssize_t recv_unlocked(struct sc_client *c, struct sc_conn *conn)
{
    pthread_mutex_unlock(&c->lock);
    ssize_t n = recv(conn->fd, conn->in + conn->in_len, conn->in_cap - conn->in_len, 0);
    int saved = errno;
    pthread_mutex_lock(&c->lock);
    errno = saved;
    return n;
}

static void conn_write(struct sc_client *c, struct sc_conn *conn)
{
    while (conn->out_off < conn->out.len) {
        ssize_t n = send_unlocked(c, conn);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                return;
            }
            conn_close(c, conn, SAMSA_ERR_TRANSPORT, strerror(errno));
            return;
        }
        conn->out_off += (size_t)n;
    }
    conn->out.len = 0;
    conn->out_off = 0;
}

static void handle_frame(struct sc_client *c, struct sc_conn *conn, const uint8_t *payload,
                         size_t len)
{
    struct sc_req *r = conn->reqs;
    if (r == NULL) {
        conn_close(c, conn, SAMSA_ERR_BAD_RESPONSE, "a response to no request");
        return;
    }
    conn->reqs = r->next;
    if (conn->reqs == NULL) {
        conn->reqs_tail = NULL;
    }
    conn->req_count--;
    kp_arena_reset(&c->arena);
    struct kp_response_header h;
    void *body = NULL;
    int err = kp_response_decode(payload, len, r->api_key, r->api_version, &c->arena, &h, &body);
    if (err == 0 && h.CorrelationId != r->corr) {
        err = KP_E_CORRUPT;
    }
    if (err != 0) {
        char why[160];
        snprintf(why, sizeof(why), "undecodable %s v%d response (%s)",
                 kp_api_find(r->api_key) != NULL ? kp_api_find(r->api_key)->name : "?",
                 r->api_version, kp_err_name(err));
        sc_post_error(c, SAMSA_ERR_BAD_RESPONSE, "%s:%d: %s", conn->host, conn->port, why);
        if (r->fn != NULL) {
            r->fn(c, conn, SAMSA_ERR_BAD_RESPONSE, NULL, r->ctx);
        }
        kp_free(r);
        conn_close(c, conn, SAMSA_ERR_BAD_RESPONSE, why);
        return;
    }
    if (r->fn != NULL) {
        r->fn(c, conn, 0, body, r->ctx);
    }
    kp_free(r);
    kp_arena_reset(&c->arena);
}

static bool take_frames(struct sc_client *c, struct sc_conn *conn);

static void conn_read(struct sc_client *c, struct sc_conn *conn)
{
    for (;;) {
        if (conn->in_cap - conn->in_len < 65536) {
            size_t ncap = conn->in_cap == 0 ? 131072 : conn->in_cap * 2;
            uint8_t *n = kp_realloc(conn->in, ncap);
            if (n == NULL) {
                conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
                return;
            }
            conn->in = n;
            conn->in_cap = ncap;
        }
        ssize_t n = recv_unlocked(c, conn);
        if (n == 0) {
            conn_close(c, conn, SAMSA_ERR_TRANSPORT, "closed by the broker");
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            conn_close(c, conn, SAMSA_ERR_TRANSPORT, strerror(errno));
            return;
        }
        conn->in_len += (size_t)n;
        if (!take_frames(c, conn)) {
            return;
        }
    }
}

/* Handles every whole frame in conn->in, keeping a partial one at the
 * front. False when the connection was closed meanwhile. */
static bool take_frames(struct sc_client *c, struct sc_conn *conn)
{
    /* Whole frames first; a handler may close the connection. */
    size_t off = 0;
    while (conn->state != SC_CONN_DOWN) {
        int32_t size = 0;
        int fe = kp_frame_size(conn->in + off, conn->in_len - off, MAX_RESPONSE_BYTES, &size);
        if (fe == KP_AGAIN) {
            break;
        }
        if (fe != 0) {
            conn_close(c, conn, SAMSA_ERR_BAD_RESPONSE, "bad response frame size");
            return false;
        }
        if (conn->in_len - off - 4 < (size_t)size) {
            /* Make room for the whole frame at once. */
            size_t need = (size_t)size + 4;
            if (off > 0) {
                memmove(conn->in, conn->in + off, conn->in_len - off);
                conn->in_len -= off;
                off = 0;
            }
            if (conn->in_cap < need) {
                uint8_t *nb = kp_realloc(conn->in, need + 65536);
                if (nb == NULL) {
                    conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
                    return false;
                }
                conn->in = nb;
                conn->in_cap = need + 65536;
            }
            break;
        }
        handle_frame(c, conn, conn->in + off + 4, (size_t)size);
        off += 4 + (size_t)size;
    }
    if (conn->state == SC_CONN_DOWN) {
        return false;
    }
    if (off > 0) {
        memmove(conn->in, conn->in + off, conn->in_len - off);
        conn->in_len -= off;
    }
    return true;
}

void sc_conn_feed(struct sc_client *c, struct sc_conn *conn, const uint8_t *p, size_t n)
{
    if (conn->state == SC_CONN_DOWN || n > (size_t)MAX_RESPONSE_BYTES) {
        return;
    }
    if (conn->in_cap - conn->in_len < n) {
        size_t ncap = conn->in_len + n + 65536;
        uint8_t *nb = kp_realloc(conn->in, ncap);
        if (nb == NULL) {
            conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
            return;
        }
        conn->in = nb;
        conn->in_cap = ncap;
    }
    if (n > 0) {
        memcpy(conn->in + conn->in_len, p, n);
    }
    conn->in_len += n;
    (void)take_frames(c, conn);
}

void sc_conn_fail(struct sc_client *c, struct sc_conn *conn, const char *why)
{
    if (conn->state != SC_CONN_DOWN) {
        conn_close(c, conn, SAMSA_ERR_TRANSPORT, why);
    }
}

/* ------------------------------------------------------------- metadata */

const struct sc_broker_md *sc_broker_find(const struct sc_client *c, int32_t id)
{
    for (int i = 0; i < c->broker_count; i++) {
        if (c->brokers[i].id == id) {
            return &c->brokers[i];
        }
    }
    return NULL;
}

void sc_broker_learn(struct sc_client *c, int32_t id, struct kp_str host, int32_t port)
{
    if (sc_broker_find(c, id) != NULL || id < 0 || host.len <= 0 || port <= 0 || port > 65535) {
        return;
    }
    struct sc_broker_md *nb = kp_realloc(c->brokers, (size_t)(c->broker_count + 1) * sizeof(*nb));
    if (nb == NULL) {
        return;
    }
    c->brokers = nb;
    nb[c->broker_count].host = sc_strndup(host.ptr, (size_t)host.len);
    if (nb[c->broker_count].host == NULL) {
        return;
    }
    nb[c->broker_count].id = id;
    nb[c->broker_count].port = port;
    c->broker_count++;
}

void sc_metadata_want(struct sc_client *c)
{
    c->md_wanted = true;
}

struct sc_conn *sc_conn_leader(struct sc_client *c, int32_t node_id)
{
    struct sc_conn *conn = node_id >= 0 ? sc_conn_get(c, node_id) : NULL;
    if (conn == NULL || sc_conn_failed(c, conn)) {
        sc_metadata_want(c);
    }
    return sc_conn_is_up(conn) ? conn : NULL;
}

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
    struct sc_broker_md *nb = kp_calloc((size_t)(md->Brokers.count > 0 ? md->Brokers.count : 1),
                                        sizeof(*nb));
    if (nb == NULL) {
        c->md_wanted = true;
        return;
    }
    int n = 0;
    for (int32_t i = 0; i < md->Brokers.count; i++) {
        const struct kp_MetadataResponse_MetadataResponseBroker *b = &md->Brokers.items[i];
        if (b->Host.len < 0 || b->Port <= 0 || b->Port > 65535) {
            continue;
        }
        nb[n].id = b->NodeId;
        nb[n].host = sc_strndup(b->Host.ptr, (size_t)b->Host.len);
        nb[n].port = b->Port;
        if (nb[n].host == NULL) {
            continue;
        }
        n++;
    }
    for (int i = 0; i < c->broker_count; i++) {
        kp_free(c->brokers[i].host);
    }
    kp_free(c->brokers);
    c->brokers = nb;
    c->broker_count = n;
    c->controller_id = md->ControllerId;
    /* A broker whose address changed gets a new connection. */
    for (struct sc_conn *cn = c->conns; cn != NULL; cn = cn->next) {
        const struct sc_broker_md *b = cn->node_id >= 0 ? sc_broker_find(c, cn->node_id) : NULL;
        if (b != NULL && (strcmp(b->host, cn->host) != 0 || b->port != cn->port)) {
            char *h = sc_strdup(b->host);
            if (h != NULL) {
                conn_close(c, cn, SAMSA_ERR_TRANSPORT, "broker address changed");
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
static int64_t metadata_serve(struct sc_client *c, int64_t now)
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
    req.Topics.count = count; /* v1+: 0 = no topics (brokers only) */
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

/* ------------------------------------------------------------- the loop */

static int64_t conn_timeouts(struct sc_client *c, int64_t now)
{
    int64_t next = INT64_MAX;
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        if (conn->state == SC_CONN_DOWN) {
            if (conn->wanted || conn->node_id < 0) {
                bool needed = conn->node_id >= 0 || c->broker_count == 0 || find_up(c) == NULL;
                if (needed) {
                    if (conn->next_attempt_ms <= now) {
                        conn_start(c, conn, now);
                    }
                    if (conn->state == SC_CONN_DOWN) {
                        next = sc_min64(next, conn->next_attempt_ms);
                    }
                }
            }
            continue;
        }
        if (conn->state == SC_CONN_CONNECTING && conn->next_attempt_ms <= now) {
            conn_close(c, conn, SAMSA_ERR_TRANSPORT, "connect timed out");
            continue;
        }
        if (conn->reqs != NULL) {
            if (conn->reqs->deadline <= now) {
                conn_close(c, conn, SAMSA_ERR_TIMED_OUT, "request timed out");
                continue;
            }
            next = sc_min64(next, conn->reqs->deadline);
        }
    }
    return next;
}

static void report_all_down(struct sc_client *c)
{
    bool any = false;
    bool all_failed = true;
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        any = true;
        if (conn->state != SC_CONN_DOWN || conn->backoff_ms <= c->v->reconnect_backoff_ms) {
            all_failed = false;
        }
    }
    if (any && all_failed && c->all_down_reported == 0) {
        c->all_down_reported = 1;
        sc_post_error(c, SAMSA_ERR_ALL_BROKERS_DOWN,
                      "no broker reachable (bootstrap.servers=%s); retrying",
                      c->v->bootstrap_servers);
    }
}

int64_t sc_client_run_once(struct sc_client *c, int64_t now)
{
    /* a step of the wall clock reaches record timestamps within a turn (1 s at most) */
    c->wall_minus_mono_ms = sc_wall_ms() - sc_now_ms();
    int64_t next = now + 1000;
    next = sc_min64(next, conn_timeouts(c, now));
    next = sc_min64(next, metadata_serve(c, now));
    next = sc_min64(next, sc_ops_serve(c, now));
    if (c->kind_ops->serve != NULL) {
        next = sc_min64(next, c->kind_ops->serve(c, now));
    }
    /* The serve calls may have wanted new connections or metadata: start
     * them now rather than at the next wake. */
    int64_t real = sc_now_ms();
    int64_t later = real > now ? real : now; /* a harness may run ahead of the clock */
    next = sc_min64(next, conn_timeouts(c, later));
    next = sc_min64(next, metadata_serve(c, later));
    report_all_down(c);
    return next;
}

static void *io_main(void *arg)
{
    struct sc_client *c = arg;
    struct pollfd pfds[MAX_POLL_FDS];
    struct sc_conn *pconns[MAX_POLL_FDS];
    pthread_mutex_lock(&c->lock);
    while (!c->terminate) {
        int64_t next = sc_client_run_once(c, sc_now_ms());
        /* The serve calls may have queued bytes; write before sleeping. */
        int nfds = 1;
        pfds[0].fd = c->wake_fd;
        pfds[0].events = POLLIN;
        for (struct sc_conn *conn = c->conns; conn != NULL && nfds < MAX_POLL_FDS;
             conn = conn->next) {
            if (conn->fd < 0) {
                continue;
            }
            if (conn->state != SC_CONN_CONNECTING && conn->out_off < conn->out.len) {
                conn_write(c, conn);
                if (conn->fd < 0) {
                    continue;
                }
            }
            pfds[nfds].fd = conn->fd;
            pfds[nfds].events = POLLIN;
            if (conn->state == SC_CONN_CONNECTING || conn->out_off < conn->out.len) {
                pfds[nfds].events |= POLLOUT;
            }
            pfds[nfds].revents = 0;
            pconns[nfds] = conn;
            nfds++;
        }
        int64_t wait = next - sc_now_ms();
        if (wait < 0) {
            wait = 0;
        }
        pthread_mutex_unlock(&c->lock);
        int rc = poll(pfds, (nfds_t)nfds, (int)(wait > 1000 ? 1000 : wait));
        pthread_mutex_lock(&c->lock);
        if (rc <= 0) {
            continue;
        }
        if (pfds[0].revents != 0) {
            uint64_t v;
            ssize_t n = read(c->wake_fd, &v, sizeof(v));
            (void)n;
        }
        for (int i = 1; i < nfds; i++) {
            struct sc_conn *conn = pconns[i];
            if (pfds[i].revents == 0 || conn->fd != pfds[i].fd) {
                continue;
            }
            if (conn->state == SC_CONN_CONNECTING) {
                int soerr = 0;
                socklen_t sl = sizeof(soerr);
                if (getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
                    conn_close(c, conn, SAMSA_ERR_TRANSPORT,
                               strerror(soerr != 0 ? soerr : errno));
                    continue;
                }
                conn->state = SC_CONN_HANDSHAKE;
            }
            if ((pfds[i].revents & POLLOUT) != 0) {
                conn_write(c, conn);
            }
            if (conn->fd >= 0 && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                conn_read(c, conn);
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

void sc_wait_cond(struct sc_client *c, int64_t deadline)
{
    int64_t left = deadline == INT64_MAX ? 1000 : deadline - sc_now_ms();
    if (left <= 0) {
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = (int64_t)ts.tv_nsec + (left > 1000 ? 1000 : left) * 1000000;
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    pthread_cond_timedwait(&c->ev_cond, &c->lock, &ts);
}

/* ------------------------------------------------------------ lifecycle */

static int client_create(const struct sc_kind_ops *kind, const samsa_conf *conf, bool detached,
                         struct sc_client **out, char *errstr, size_t errstr_size);

int sc_client_create(const struct sc_kind_ops *kind, const samsa_conf *conf,
                     struct sc_client **out, char *errstr, size_t errstr_size)
{
    return client_create(kind, conf, false, out, errstr, errstr_size);
}

int sc_client_create_detached(const struct sc_kind_ops *kind, const samsa_conf *conf,
                              struct sc_client **out, char *errstr, size_t errstr_size)
{
    return client_create(kind, conf, true, out, errstr, errstr_size);
}

static int client_create(const struct sc_kind_ops *kind, const samsa_conf *conf, bool detached,
                         struct sc_client **out, char *errstr, size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    *out = NULL;
    if (conf == NULL) {
        sc_errf(errstr, errstr_size, "conf must not be NULL");
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = kp_calloc(1, sizeof(*c));
    if (c == NULL) {
        sc_errf(errstr, errstr_size, "out of memory");
        return SAMSA_ERR_NOMEM;
    }
    int err = SAMSA_ERR_NOMEM;
    c->kind_ops = kind;
    c->kind = kind->tag;
    c->detached = detached;
    c->wake_fd = -1;
    c->wall_minus_mono_ms = sc_wall_ms() - sc_now_ms();
    c->conf = samsa_conf_dup(conf);
    if (c->conf == NULL) {
        sc_errf(errstr, errstr_size, "out of memory");
        goto out_free;
    }
    c->v = &c->conf->v;
    err = sc_conf_finalize_for(c->conf, kind, errstr, errstr_size);
    if (err != SAMSA_OK) {
        goto out_free;
    }
    char *hosts[16];
    int ports[16];
    int n = 0;
    err = sc_parse_brokers(c->v->bootstrap_servers, hosts, ports, 16, &n, errstr, errstr_size);
    if (err != SAMSA_OK) {
        goto out_free;
    }
    for (int i = 0; i < n; i++) {
        if (conn_new(c, -2 - i, hosts[i], ports[i]) == NULL) {
            err = SAMSA_ERR_NOMEM;
        }
        kp_free(hosts[i]);
    }
    if (err != SAMSA_OK) {
        sc_errf(errstr, errstr_size, "out of memory");
        goto out_free;
    }
    kp_arena_init(&c->arena, ARENA_MAX);
    c->next_corr = 1;
    c->controller_id = -1;
    c->pid = -1;
    c->rng = detached ? 0x9e3779b97f4a7c15ULL /* the same runs every time */
                      : (uint64_t)sc_wall_ms() ^ ((uint64_t)(uintptr_t)c << 16) ^
                            0x9e3779b97f4a7c15ULL;
    if (c->rng == 0) {
        c->rng = 1;
    }
    c->rules.linger_ms = c->v->linger_ms;
    c->rules.batch_size = (size_t)c->v->batch_size;
    c->rules.batch_num_messages = c->v->batch_num_messages;
    c->rules.max_in_flight = c->v->max_in_flight;
    c->rules.idempotent = c->v->enable_idempotence;
    c->md_wanted = true;
    c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (c->wake_fd < 0) {
        sc_errf(errstr, errstr_size, "eventfd: %s", strerror(errno));
        err = SAMSA_ERR_TRANSPORT;
        goto out_free;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->ev_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (detached) {
        *out = c;
        return SAMSA_OK;
    }
    if (pthread_create(&c->thread, NULL, io_main, c) != 0) {
        sc_errf(errstr, errstr_size, "cannot start the I/O thread");
        err = SAMSA_ERR_NOMEM;
        pthread_cond_destroy(&c->ev_cond);
        pthread_mutex_destroy(&c->lock);
        goto out_free;
    }
    c->thread_started = true;
    *out = c;
    return SAMSA_OK;
out_free:
    if (c->wake_fd >= 0) {
        close(c->wake_fd);
    }
    while (c->conns != NULL) {
        struct sc_conn *next = c->conns->next;
        conn_free(c->conns);
        c->conns = next;
    }
    kp_arena_free(&c->arena);
    samsa_conf_destroy(c->conf);
    kp_free(c);
    return err;
}

void sc_client_destroy(struct sc_client *c)
{
    if (c == NULL) {
        return;
    }
    if (c->thread_started) {
        pthread_mutex_lock(&c->lock);
        c->terminate = true;
        pthread_mutex_unlock(&c->lock);
        sc_wake(c);
        pthread_join(c->thread, NULL);
    }
    pthread_mutex_lock(&c->lock);
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        fail_requests(c, conn, SAMSA_ERR_DESTROYED);
    }
    while (c->ops != NULL) {
        struct sc_op *op = c->ops;
        c->ops = op->next;
        sc_op_free(op);
    }
    if (c->kind_ops->free_state != NULL) {
        c->kind_ops->free_state(c);
    }
    while (c->errs != NULL) {
        struct sc_err_ev *ev = c->errs;
        c->errs = ev->next;
        err_ev_free(ev);
    }
    pthread_mutex_unlock(&c->lock);
    while (c->conns != NULL) {
        struct sc_conn *next = c->conns->next;
        conn_free(c->conns);
        c->conns = next;
    }
    for (int i = 0; i < c->broker_count; i++) {
        kp_free(c->brokers[i].host);
    }
    kp_free(c->brokers);
    kp_arena_free(&c->arena);
    close(c->wake_fd);
    pthread_cond_destroy(&c->ev_cond);
    pthread_mutex_destroy(&c->lock);
    samsa_conf_destroy(c->conf);
    kp_free(c);
}
