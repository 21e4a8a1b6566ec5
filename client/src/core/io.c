/*
 * A handle's connections to brokers: non-blocking sockets, ApiVersions
 * first, requests tracked and responses matched in order, frames bounded by
 * MAX_RESPONSE_BYTES, reconnect backoff and the connect and request
 * timeouts; the brokers the handle knows (id -> host:port) and the leader's
 * connection, asking Metadata again when it cannot be had.
 *
 * @locality: the I/O thread with c->lock held (the harness's thread for a
 * detached client).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/internal.h"

/* A broker's response frame may not exceed this (a Fetch answer is bounded
 * by fetch.max.bytes plus headers; this is the ceiling for the rest). */
#define MAX_RESPONSE_BYTES ((size_t)512 * 1024 * 1024)

struct sc_conn *sc_conn_new(struct sc_client *c, int32_t node_id, const char *host, int port)
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

void sc_conn_fail_requests(struct sc_client *c, struct sc_conn *conn, int err)
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

void sc_conn_close(struct sc_client *c, struct sc_conn *conn, int err, const char *why)
{
    sc_tls_close(conn);
    explicit_bzero(&conn->sasl, sizeof(conn->sasl));
    if (conn->fd >= 0) {
        close(conn->fd);
        conn->fd = -1;
    }
    bool was_up = conn->state == SC_CONN_UP;
    conn->disconnects += was_up ? 1 : 0;
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
    sc_conn_fail_requests(c, conn, err);
    conn->produce_inflight = 0;
    conn->fetch_inflight = false;
}

void sc_conn_free(struct sc_conn *conn)
{
    sc_tls_close(conn);
    explicit_bzero(&conn->sasl, sizeof(conn->sasl));
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
    struct sc_conn *conn = sc_conn_new(c, node_id, b->host, b->port);
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
    struct sc_conn *conn = sc_conn_new(c, node_id, b->host, b->port);
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
    size_t bytes = conn->out.len - before; /* the frame just written (stats.c) */
    conn->tx++;
    conn->tx_bytes += bytes;
    c->tx++;
    c->tx_bytes += bytes;
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

int sc_conn_send_auth(struct sc_client *c, struct sc_conn *conn, int16_t api, int16_t version,
                      const void *body, sc_resp_fn *fn, void *ctx)
{
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
        sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, "ApiVersions refused");
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
    if (c->authenticate != NULL) {
        c->authenticate(c, conn); /* sc_conn_up once authenticated */
        return;
    }
    sc_conn_up(c, conn);
}

void sc_conn_up(struct sc_client *c, struct sc_conn *conn)
{
    conn->state = SC_CONN_UP;
    conn->connects++;
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
            sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
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
        sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, gai_strerror(gai));
        return;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        freeaddrinfo(res);
        sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, strerror(errno));
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
        sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, strerror(e));
        return;
    }
    conn->fd = fd;
    conn->state = SC_CONN_CONNECTING;
    conn->next_attempt_ms = now + c->v->socket_timeout_ms; /* connect deadline */
    if (c->ssl_ctx != NULL && sc_tls_start(c, conn) != SAMSA_OK) {
        sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
        return;
    }
    /* ApiVersions v0 first: every broker answers it, whatever its version. */
    struct kp_ApiVersionsRequest req;
    kp_ApiVersionsRequest_init(&req);
    if (queue_request(c, conn, KP_API_API_VERSIONS, 0, &req, on_api_versions, NULL) != 0) {
        sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
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
    const uint8_t *p = conn->out.buf + conn->out_off;
    size_t len = conn->out.len - conn->out_off;
    ssize_t n = conn->ssl != NULL ? sc_tls_write(conn, p, len)
                                  : send(conn->fd, p, len, MSG_NOSIGNAL);
    int saved = errno;
    pthread_mutex_lock(&c->lock);
    errno = saved;
    return n;
}

static ssize_t recv_unlocked(struct sc_client *c, struct sc_conn *conn)
{
    pthread_mutex_unlock(&c->lock);
    uint8_t *p = conn->in + conn->in_len;
    size_t room = conn->in_cap - conn->in_len;
    ssize_t n = conn->ssl != NULL ? sc_tls_read(conn, p, room) : recv(conn->fd, p, room, 0);
    int saved = errno;
    pthread_mutex_lock(&c->lock);
    errno = saved;
    return n;
}

/* A read or write failed with errno: a TLS error before the connection is
 * up is the handshake's (the broker refusing our certificate under TLS 1.3
 * says so after the client's side of the handshake is done). */
static void conn_io_failed(struct sc_client *c, struct sc_conn *conn)
{
    if (errno == EPROTO && conn->ssl != NULL) {
        if (conn->tls_fatal && conn->state != SC_CONN_UP) {
            sc_auth_failed(c, conn, SAMSA_ERR_SSL, "%s:%d: TLS handshake failed: %s",
                           conn->host, conn->port, conn->tls_err);
            return;
        }
        char why[300];
        snprintf(why, sizeof(why), "TLS: %s", conn->tls_err);
        sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, why);
        return;
    }
    sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, strerror(errno));
}

/* One step of conn's TLS handshake; true when it is done. */
static bool tls_step(struct sc_client *c, struct sc_conn *conn)
{
    int step = sc_tls_handshake(c, conn);
    if (step == SC_TLS_LOST) {
        char why[300];
        snprintf(why, sizeof(why), "%s", conn->tls_err);
        sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, why);
    } else if (step == SC_TLS_REFUSED) {
        sc_auth_failed(c, conn, SAMSA_ERR_SSL, "%s:%d: TLS handshake failed: %s", conn->host,
                       conn->port, conn->tls_err);
    }
    return step == SC_TLS_DONE;
}

void sc_conn_write(struct sc_client *c, struct sc_conn *conn)
{
    if (conn->tls_want != 0 && !tls_step(c, conn)) {
        return;
    }
    while (conn->out_off < conn->out.len) {
        ssize_t n = send_unlocked(c, conn);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                return;
            }
            conn_io_failed(c, conn);
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
        sc_conn_close(c, conn, SAMSA_ERR_BAD_RESPONSE, "a response to no request");
        return;
    }
    conn->reqs = r->next;
    if (conn->reqs == NULL) {
        conn->reqs_tail = NULL;
    }
    conn->req_count--;
    conn->rx++;
    conn->rx_bytes += len + 4; /* with its size */
    c->rx++;
    c->rx_bytes += len + 4;
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
        sc_conn_close(c, conn, SAMSA_ERR_BAD_RESPONSE, why);
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
                sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
                return;
            }
            conn->in = n;
            conn->in_cap = ncap;
        }
        ssize_t n = recv_unlocked(c, conn);
        if (n == 0) {
            sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, "closed by the broker");
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            conn_io_failed(c, conn);
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
            sc_conn_close(c, conn, SAMSA_ERR_BAD_RESPONSE, "bad response frame size");
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
                    sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
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
            sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
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
        sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, why);
    }
}

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

bool sc_record_brokers(struct sc_client *c, const struct kp_MetadataResponse *md)
{
    struct sc_broker_md *nb = kp_calloc((size_t)(md->Brokers.count > 0 ? md->Brokers.count : 1),
                                        sizeof(*nb));
    if (nb == NULL) {
        return false; /* keep the old list */
    }
    int n = 0;
    for (int32_t i = 0; i < md->Brokers.count; i++) {
        const struct kp_MetadataResponse_MetadataResponseBroker *b = &md->Brokers.items[i];
        if (b->Host.len <= 0 || b->Port <= 0 || b->Port > 65535) {
            continue;
        }
        nb[n].host = sc_strndup(b->Host.ptr, (size_t)b->Host.len);
        if (nb[n].host == NULL) {
            continue;
        }
        nb[n].id = b->NodeId;
        nb[n].port = b->Port;
        n++;
    }
    for (int i = 0; i < c->broker_count; i++) {
        kp_free(c->brokers[i].host);
    }
    kp_free(c->brokers);
    c->brokers = nb;
    c->broker_count = n;
    c->controller_id = md->ControllerId;
    return true;
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

int64_t sc_conn_timeouts(struct sc_client *c, int64_t now)
{
    int64_t next = INT64_MAX;
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        if (conn->state == SC_CONN_DOWN) {
            if (c->auth_err != 0) {
                continue; /* the same credentials would fail again */
            }
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
            sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, "connect timed out");
            continue;
        }
        if (conn->reqs != NULL) {
            if (conn->reqs->deadline <= now) {
                sc_conn_close(c, conn, SAMSA_ERR_TIMED_OUT, "request timed out");
                continue;
            }
            next = sc_min64(next, conn->reqs->deadline);
        }
    }
    return next;
}

void sc_conn_ready(struct sc_client *c, struct sc_conn *conn, short revents)
{
    if (conn->state == SC_CONN_CONNECTING) {
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
            sc_conn_close(c, conn, SAMSA_ERR_TRANSPORT, strerror(soerr != 0 ? soerr : errno));
            return;
        }
        conn->state = SC_CONN_HANDSHAKE;
    }
    if (conn->tls_want != 0) {
        /* the TLS handshake first, whichever way the socket is ready; once
         * done the queued ApiVersions goes out at once */
        if (!tls_step(c, conn)) {
            return;
        }
        revents |= POLLOUT;
    }
    if ((revents & POLLOUT) != 0) {
        sc_conn_write(c, conn);
    }
    if (conn->fd >= 0 && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        conn_read(c, conn);
    }
}

short sc_conn_events(const struct sc_conn *conn)
{
    if (conn->state == SC_CONN_CONNECTING) {
        return POLLOUT;
    }
    if (conn->tls_want != 0) {
        return conn->tls_want;
    }
    return (short)(POLLIN | (conn->out_off < conn->out.len ? POLLOUT : 0));
}

void sc_auth_failed(struct sc_client *c, struct sc_conn *conn, int err, const char *fmt, ...)
{
    char reason[sizeof(c->auth_reason)];
    va_list ap;
    va_start(ap, fmt);
    sc_verrf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (c->auth_err == 0) {
        c->auth_err = err;
        memcpy(c->auth_reason, reason, sizeof(reason));
        sc_post_error(c, err, "%s", reason);
        if (c->v->log_level >= SAMSA_LOG_ERR) {
            char line[sizeof(reason) + 64];
            snprintf(line, sizeof(line), "%s: %s", samsa_err_name(err), reason);
            if (c->conf->log_cb != NULL) {
                c->conf->log_cb(SAMSA_LOG_ERR, line, c->conf->log_opaque);
            } else {
                fprintf(stderr, "samsa: error: %s\n", line);
            }
        }
    }
    sc_conn_close(c, conn, err, reason);
}
