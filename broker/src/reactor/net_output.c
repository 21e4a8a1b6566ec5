/* samsa-broker: a connection's output: response slots in request order,
 * writev and sendfile, outbound connections (see net.h). */
#define _GNU_SOURCE

#include "reactor/net_internal.h"

#include "base/fileref.h"
#include "base/logging.h"

#include <samsa-protocol/header.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---------------------------------------------------------------- slots */

struct br_net *br_conn_net(const struct br_conn *c)
{
    return c->net;
}

int br_conn_listener(const struct br_conn *c)
{
    return c->listener;
}

const char *br_conn_peer(const struct br_conn *c)
{
    return c->peer;
}

struct br_slot *br_conn_slot_new(struct br_conn *c)
{
    struct br_slot *s = kp_calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    if (c->slots_tail != NULL) {
        c->slots_tail->next = s;
    } else {
        c->slots = s;
    }
    c->slots_tail = s;
    c->nslots++;
    return s;
}

static void slot_append(struct br_slot *s, struct chunk *ch)
{
    if (s->tail != NULL) {
        s->tail->next = ch;
    } else {
        s->head = ch;
    }
    s->tail = ch;
}

int br_slot_add_mem(struct br_slot *s, uint8_t *buf, size_t len)
{
    if (len == 0) {
        kp_free(buf);
        return 0;
    }
    struct chunk *ch = kp_calloc(1, sizeof *ch);
    if (ch == NULL) {
        kp_free(buf);
        return -1;
    }
    ch->kind = CHUNK_MEM;
    ch->buf = buf;
    ch->len = len;
    slot_append(s, ch);
    return 0;
}

int br_slot_add_file(struct br_slot *s, struct br_fileref *f, int64_t pos, size_t len)
{
    if (len == 0) {
        return 0;
    }
    struct chunk *ch = kp_calloc(1, sizeof *ch);
    if (ch == NULL) {
        return -1;
    }
    ch->kind = CHUNK_FILE;
    ch->file = br_fileref_ref(f);
    ch->pos = pos;
    ch->len = len;
    slot_append(s, ch);
    return 0;
}

bool br_slot_is_empty(const struct br_slot *s)
{
    return s->head == NULL && !s->ready;
}

void br_slot_set_parked(struct br_slot *s, void *parked)
{
    s->parked = parked;
}

bool br_conn_answers_pending(const struct br_conn *c)
{
    for (const struct br_slot *s = c->slots; s != NULL; s = s->next) {
        if (!s->ready) {
            return true;
        }
    }
    return false;
}

void br_conn_hold(struct br_conn *c)
{
    c->held = true;
}

/* The throttle ran out: what c holds is handled and reading resumes. */
static void throttle_fire(void *ctx, struct br_timer *t)
{
    (void)ctx;
    struct br_conn *c = t->owner;
    c->throttled = false;
    if (c->dead) {
        return;
    }
    if (!c->processing && !c->closing && !c->held && c->in_len >= 4 &&
        c->nslots < MAX_QUEUED_SLOTS) {
        net_conn_process(c);
    } else {
        net_conn_update_events(c);
    }
}

static const struct br_timer_ops throttle_ops = {"a throttled connection", throttle_fire};

void br_conn_throttle(struct br_conn *c, int64_t ms)
{
    if (ms <= 0 || c->dead || c->outbound) {
        return;
    }
    if (c->throttle_timer.ops == NULL) {
        br_timer_init(&c->throttle_timer, &throttle_ops, c);
    }
    int64_t until = br_now_mono_ms() + ms;
    if (c->throttled && c->throttle_timer.deadline_ms >= until) {
        return; /* a longer throttle already runs */
    }
    c->throttled = true;
    br_timer_arm(c->net, &c->throttle_timer, until);
    net_conn_update_events(c);
}

bool br_conn_throttled(const struct br_conn *c)
{
    return c->throttled;
}

void br_slot_ready(struct br_conn *c, struct br_slot *s)
{
    s->ready = true;
    s->parked = NULL;
    if (c->slots == s) {
        net_conn_flush(c);
    }
    if (c->held && !c->dead && !br_conn_answers_pending(c)) {
        /* the frame held back comes again, and reading resumes */
        c->held = false;
        if (!c->processing && !c->closing && !c->throttled && c->in_len >= 4 &&
            c->nslots < MAX_QUEUED_SLOTS) {
            net_conn_process(c);
        } else {
            net_conn_update_events(c);
        }
    }
}

void br_conn_close_after_flush(struct br_conn *c)
{
    c->closing = true;
    net_conn_update_events(c);
    if (c->slots == NULL) {
        net_conn_flush(c);
    }
}

/* A local connection "sends" a slot by copying its bytes to c->out (file
 * regions with pread, as sendfile would read them) and freeing its chunks.
 * 0, or -1 when memory runs out or a file ends early. */
static int local_send(struct br_conn *c, struct br_slot *s)
{
    while (s->head != NULL) {
        struct chunk *ch = s->head;
        if (c->out_cap - c->out_len < ch->len) {
            size_t cap =
                c->out_cap * 2 > c->out_len + ch->len ? c->out_cap * 2 : c->out_len + ch->len;
            uint8_t *nb = kp_realloc(c->out, cap);
            if (nb == NULL) {
                return -1;
            }
            c->out = nb;
            c->out_cap = cap;
        }
        if (ch->kind == CHUNK_MEM) {
            memcpy(c->out + c->out_len, ch->buf + ch->off, ch->len);
        } else {
            size_t got = 0;
            while (got < ch->len) {
                ssize_t n = pread(br_fileref_fd(ch->file), c->out + c->out_len + got, ch->len - got,
                                  (off_t)(ch->pos + (int64_t)got));
                if (n < 0 && errno == EINTR) {
                    continue;
                }
                if (n <= 0) {
                    br_error("local connection %s: file ended early", c->peer);
                    return -1;
                }
                got += (size_t)n;
            }
        }
        c->out_len += ch->len;
        s->head = ch->next;
        if (s->head == NULL) {
            s->tail = NULL;
        }
        net_chunk_free(ch);
    }
    return 0;
}

/* ---------------------------------------------------------------- TLS */

/* One TLS record's worth of plaintext: what the user-space output path
 * copies memory and reads file regions (pread) into before SSL_write_ex. */
#define TLS_OUT_CAP 16384u

static void chunk_done(struct br_slot *s, struct chunk *ch)
{
    s->head = ch->next;
    if (s->head == NULL) {
        s->tail = NULL;
    }
    net_chunk_free(ch);
}

/* Takes up to the buffer's room from the head chunks of s into c's output
 * buffer: memory copied, file regions read with pread (not those the
 * kernel sends: kTLS). -1 when a file ended early. */
static int tls_fill(struct br_conn *c, struct br_slot *s)
{
    while (s->head != NULL && c->tls_out_len < TLS_OUT_CAP) {
        struct chunk *ch = s->head;
        if (ch->kind == CHUNK_FILE && c->tls_ktls) {
            break;
        }
        size_t room = TLS_OUT_CAP - c->tls_out_len;
        size_t take = ch->len < room ? ch->len : room;
        uint8_t *dst = c->tls_out + c->tls_out_len;
        if (ch->kind == CHUNK_MEM) {
            memcpy(dst, ch->buf + ch->off, take);
            ch->off += take;
        } else {
            ssize_t n = pread(br_fileref_fd(ch->file), dst, take, (off_t)ch->pos);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                br_error("reading a file for %s: it ended early", c->peer);
                return -1;
            }
            take = (size_t)n;
            ch->pos += n;
        }
        ch->len -= take;
        c->tls_out_len += take;
        if (ch->len == 0) {
            chunk_done(s, ch);
        }
    }
    return 0;
}

/* Writes slot s through TLS: records of up to 16 KiB from c's output
 * buffer, which holds them until OpenSSL took them (after WANT_WRITE the
 * same bytes go again), or file regions by SSL_sendfile under kernel TLS.
 * 1 all of it, 0 would block (the interest is set), -1 c was killed. */
static int tls_send_slot(struct br_conn *c, struct br_slot *s)
{
    if (c->tls_out == NULL) {
        c->tls_out = kp_malloc(TLS_OUT_CAP);
        if (c->tls_out == NULL) {
            br_error("out of memory writing to %s", c->peer);
            net_conn_kill(c);
            return -1;
        }
    }
    for (;;) {
        int r = 1;
        if (c->tls_out_len > 0) {
            r = net_tls_write(c, c->tls_out, c->tls_out_len);
            if (r > 0) {
                c->tls_out_len = 0;
            }
        } else if (s->head == NULL) {
            return 1;
        } else if (s->head->kind == CHUNK_FILE && c->tls_ktls) {
            struct chunk *ch = s->head;
            size_t want = ch->len > 0x7ffff000u ? 0x7ffff000u : ch->len;
            ssize_t n = net_tls_sendfile(c, br_fileref_fd(ch->file), ch->pos, want);
            r = n > 0 ? 1 : (int)n;
            if (n > 0) {
                ch->pos += n;
                ch->len -= (size_t)n;
                if (ch->len == 0) {
                    chunk_done(s, ch);
                }
            }
        } else {
            if (tls_fill(c, s) != 0) {
                net_conn_kill(c);
                return -1;
            }
            continue; /* nothing sent yet: the buffer goes next */
        }
        if (r > 0) {
            net_conn_touch(c);
            continue;
        }
        if (r == 0) {
            net_conn_update_events(c);
            return 0;
        }
        c->error = EPIPE;
        net_conn_kill(c);
        return -1;
    }
}

/* The SASL client's frame of an outbound connection that authenticates,
 * before any of its user's. */
static void pre_out_flush(struct br_conn *c)
{
    while (c->pre_out != NULL && c->tcp_done && !c->tls_handshaking && !c->dead) {
        const uint8_t *p = c->pre_out + c->pre_out_off;
        size_t left = c->pre_out_len - c->pre_out_off;
        ssize_t n = 0;
        if (c->ssl != NULL) {
            int r = net_tls_write(c, p, left);
            n = r == 1 ? (ssize_t)left : r == 0 ? 0 : -1;
            errno = r == 0 ? EAGAIN : EPIPE;
        } else {
            n = write(c->watch.fd, p, left);
        }
        if (n > 0) {
            net_conn_touch(c);
            c->pre_out_off += (size_t)n;
            if (c->pre_out_off == c->pre_out_len) {
                kp_free(c->pre_out);
                c->pre_out = NULL;
            }
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            c->error = errno;
            net_conn_kill(c);
            return;
        }
        break;
    }
    net_conn_update_events(c);
}

/* Send what can be sent now, strictly from the head slot. */
void net_conn_flush(struct br_conn *c)
{
    if (c->connecting) {
        pre_out_flush(c); /* the rest once connected */
        return;
    }
    while (!c->dead && c->slots != NULL && c->slots->ready) {
        struct br_slot *s = c->slots;
        if (c->local && local_send(c, s) != 0) {
            net_conn_kill(c);
            return;
        }
        if (c->ssl != NULL && !c->tls_handshaking && tls_send_slot(c, s) <= 0) {
            return; /* would block (interest set), or killed */
        }
        while (s->head != NULL) {
            struct chunk *ch = s->head;
            ssize_t n;
            if (ch->kind == CHUNK_MEM) {
                struct iovec iov[MAX_IOV];
                int cnt = 0;
                for (struct chunk *x = ch; x != NULL && x->kind == CHUNK_MEM && cnt < MAX_IOV;
                     x = x->next) {
                    iov[cnt].iov_base = x->buf + x->off;
                    iov[cnt].iov_len = x->len;
                    cnt++;
                }
                n = writev(c->watch.fd, iov, cnt);
                if (n > 0) {
                    net_conn_touch(c);
                    size_t left = (size_t)n;
                    while (left > 0 && s->head != NULL) {
                        struct chunk *x = s->head;
                        size_t take = left < x->len ? left : x->len;
                        x->off += take;
                        x->len -= take;
                        left -= take;
                        if (x->len == 0) {
                            s->head = x->next;
                            if (s->head == NULL) {
                                s->tail = NULL;
                            }
                            net_chunk_free(x);
                        }
                    }
                }
            } else {
                off_t pos = (off_t)ch->pos;
                size_t want = ch->len > 0x7ffff000u ? 0x7ffff000u : ch->len;
                n = sendfile(c->watch.fd, br_fileref_fd(ch->file), &pos, want);
                if (n > 0) {
                    net_conn_touch(c);
                    ch->pos += n;
                    ch->len -= (size_t)n;
                    if (ch->len == 0) {
                        s->head = ch->next;
                        if (s->head == NULL) {
                            s->tail = NULL;
                        }
                        net_chunk_free(ch);
                    }
                } else if (n == 0) {
                    /* the file is shorter than promised: the response can
                     * never be completed, so the connection must go */
                    br_error("sendfile to %s: file ended early", c->peer);
                    net_conn_kill(c);
                    return;
                }
            }
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    net_conn_update_events(c);
                    return;
                }
                if (errno == EINTR) {
                    continue;
                }
                br_debug("write to %s: %s", c->peer, strerror(errno));
                c->error = errno;
                net_conn_kill(c);
                return;
            }
        }
        c->slots = s->next;
        if (c->slots == NULL) {
            c->slots_tail = NULL;
        }
        c->nslots--;
        net_slot_free(s);
    }
    if (c->dead) {
        return;
    }
    if (c->closing && c->slots == NULL) {
        net_conn_kill(c);
        return;
    }
    /* frames left unread while too many responses were queued */
    if (!c->processing && !c->closing && !c->held && !c->throttled && c->in_len >= 4 &&
        c->nslots < MAX_QUEUED_SLOTS) {
        net_conn_process(c);
        return;
    }
    net_conn_update_events(c);
}

/* ---------------------------------------------------------------- outbound */

/* A numeric IPv4 or IPv6 address and a port into *ss: no name lookup here
 * (the reactor never waits on DNS). False when host is not such an address. */
static bool numeric_address(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        *len = sizeof *in4;
        return true;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *len = sizeof *in6;
        return true;
    }
    return false;
}

int br_conn_connect(struct br_net *n, const char *host, int port, int32_t max_frame_bytes,
                    const struct br_conn_ops *ops, void *ctx, struct br_conn **out)
{
    *out = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    if (n->stopping || port <= 0 || port > 65535 || max_frame_bytes <= 0 ||
        !numeric_address(host, port, &ss, &sl)) {
        return KP_E_INVALID_ARG;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&ss, sl) != 0 && errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        return -err;
    }
    struct br_conn *c = kp_calloc(1, sizeof *c);
    if (c == NULL) {
        close(fd);
        return KP_E_NOMEM;
    }
    c->watch.kind = BR_WATCH_CONN;
    c->watch.fd = fd;
    c->net = n;
    c->outbound = true;
    c->listener = -1;
    c->connecting = true; /* even when it connected at once: connected comes from the loop */
    c->want_out = true;
    c->max_frame = max_frame_bytes;
    c->conn_ops = ops;
    c->conn_ctx = ctx;
    (void)snprintf(c->host, sizeof c->host, "%s", host);
    (void)snprintf(c->peer, sizeof c->peer, "%s%s%s:%d", ss.ss_family == AF_INET6 ? "[" : "", host,
                   ss.ss_family == AF_INET6 ? "]" : "", port);
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = &c->watch};
    if (epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int err = errno;
        close(fd);
        kp_free(c);
        return -err;
    }
    net_conn_link(n, c);
    n->noutbound++;
    c->last_active_ms = n->now_ms;
    *out = c;
    return 0;
}

/* The connect of an outbound connection finished, one way or the other. */
void net_conn_connect_done(struct br_conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->watch.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
    }
    if (err != 0) {
        br_debug("connecting to %s: %s", c->peer, strerror(err));
        c->error = err;
        net_conn_kill(c);
        return;
    }
    c->tcp_done = true;
    if (c->net->out_sec.tls != NULL) {
        /* the TLS handshake on readiness (net.c), then net_conn_secured */
        if (net_tls_connect(c, c->net->out_sec.tls, c->host, &net_tls_pending_task) != 0) {
            c->error = ENOMEM;
            net_conn_kill(c);
            return;
        }
        net_conn_update_events(c);
        return;
    }
    net_conn_secured(c);
}

/* Connected, encrypted and authenticated as the net's outbound security
 * wants: its user's turn. */
static void outbound_ready(struct br_conn *c)
{
    c->connecting = false;
    net_conn_touch(c);
    net_conn_update_events(c);
    c->conn_ops->connected(c->conn_ctx, c);
    if (!c->dead) {
        net_conn_flush(c); /* what was sent while connecting */
    }
}

static void auth_client_step(struct br_conn *c, const uint8_t *resp, size_t len);

void net_conn_secured(struct br_conn *c)
{
    const struct br_outbound_security *sec = &c->net->out_sec;
    if (sec->auth == NULL) {
        outbound_ready(c);
        return;
    }
    c->auth = sec->auth->start(sec->auth_arg);
    c->auth_free = sec->auth->free;
    if (c->auth == NULL) {
        c->error = ENOMEM;
        net_conn_kill(c);
        return;
    }
    c->pre_frame = auth_client_step;
    auth_client_step(c, NULL, 0);
}

/* The SASL exchange's next step: the first, or with the answer to its
 * last frame (c->pre_frame while c authenticates). */
static void auth_client_step(struct br_conn *c, const uint8_t *resp, size_t len)
{
    const struct br_outbound_security *sec = &c->net->out_sec;
    if (c->auth == NULL || c->pre_out != NULL) {
        /* an answer to nothing asked: not the exchange's peer */
        br_warn("SASL with %s: an answer before the request went", c->peer);
        c->error = EPROTO;
        net_conn_kill(c);
        return;
    }
    uint8_t *frame = NULL;
    size_t flen = 0;
    int r = sec->auth->step(c->auth, c->peer, resp, len, &frame, &flen);
    if (r < 0) {
        kp_free(frame);
        c->error = EACCES;
        net_conn_kill(c);
        return;
    }
    if (r == 0) {
        kp_free(frame);
        c->auth_free(c->auth);
        c->auth = NULL;
        c->auth_free = NULL;
        c->pre_frame = NULL;
        outbound_ready(c);
        return;
    }
    c->pre_out = frame;
    c->pre_out_len = flen;
    c->pre_out_off = 0;
    pre_out_flush(c);
}

int br_conn_send(struct br_conn *c, uint8_t *frame, size_t len)
{
    if (c->dead || c->closing) {
        kp_free(frame);
        return -1;
    }
    struct br_slot *s = br_conn_slot_new(c);
    if (s == NULL) {
        kp_free(frame);
        return -1;
    }
    if (br_slot_add_mem(s, frame, len) != 0) {
        br_slot_ready(c, s); /* empty: nothing is sent for it, nothing waits on it */
        return -1;
    }
    br_slot_ready(c, s);
    return 0;
}

void br_conn_close(struct br_conn *c)
{
    c->user_closed = true;
    net_conn_kill(c);
}

bool br_conn_connecting(const struct br_conn *c)
{
    return c->connecting;
}
