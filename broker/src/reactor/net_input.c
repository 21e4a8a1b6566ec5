/* samsa-broker: a connection's input: reads through the shared buffer,
 * frames, the read gates of queued.max.request.bytes, muting (see net.h). */
#define _GNU_SOURCE

#include "reactor/net_internal.h"

#include "base/logging.h"

#include <samsa-protocol/header.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- input */

/* Sets c's input buffer to cap bytes (in_len <= cap, 0 < cap), keeping its
 * content, and the net's count with it (in_free releases it). 0, or -1 when
 * memory runs out (c is unchanged). */
KP_MUST_CHECK int net_in_resize(struct br_conn *c, size_t cap)
{
    if (cap == 0 || cap < c->in_len) {
        return -1; /* not asked for by the callers */
    }
    if (cap == c->in_cap && c->in != NULL) {
        return 0;
    }
    uint8_t *nb = kp_realloc(c->in, cap);
    if (nb == NULL) {
        return -1;
    }
    c->net->in_bytes = c->net->in_bytes - c->in_cap + cap;
    c->in = nb;
    c->in_cap = cap;
    net_in_account(c);
    return 0;
}

/* The most a buffer holding p[0..len) needs: the frame at its start once its
 * size is known and allowed, at least READ_CHUNK. */
static size_t frame_limit(const uint8_t *p, size_t len, int32_t max_request_bytes)
{
    size_t lim = READ_CHUNK;
    if (len >= 4) {
        int32_t size = (int32_t)kp_load_be32(p);
        if (size > 0 && size <= max_request_bytes && (size_t)size + 4 > lim) {
            lim = (size_t)size + 4;
        }
    }
    return lim;
}

/* Room for the next read: the buffer doubles (a claim alone reserves
 * nothing: 100 MB announced and 14 bytes sent hold MIN_IN_CAP). */
KP_MUST_CHECK static int in_grow(struct br_conn *c)
{
    size_t lim = frame_limit(c->in, c->in_len, c->net->max_request_bytes);
    size_t cap = c->in_cap < MIN_IN_CAP ? MIN_IN_CAP : c->in_cap * 2;
    cap = cap > lim ? lim : cap;
    if (cap <= c->in_len) {
        /* whole frames are handled before the next read: not reached */
        cap = c->in_len + MIN_IN_CAP;
    }
    return net_in_resize(c, cap);
}

/* The unhandled end of a read into scratch becomes c's buffer. */
KP_MUST_CHECK static int in_stash(struct br_conn *c, const uint8_t *p, size_t len)
{
    size_t lim = frame_limit(p, len, c->net->max_request_bytes);
    size_t cap = len * 2 > MIN_IN_CAP ? len * 2 : MIN_IN_CAP;
    cap = cap > lim ? lim : cap;
    cap = cap < c->in_len + len ? c->in_len + len : cap;
    if (cap > c->in_cap && net_in_resize(c, cap) != 0) {
        return -1;
    }
    memcpy(c->in + c->in_len, p, len);
    c->in_len += len;
    net_in_account(c);
    return 0;
}

/* After frames were handled: an empty buffer is freed (the next read goes
 * to scratch), a mostly empty large one shrinks unless the frame it now
 * starts with needs it all. */
static void in_trim(struct br_conn *c)
{
    if (c->in_len == 0) {
        net_in_free(c);
    } else if (c->in_cap > READ_CHUNK && c->in_len < c->in_cap / 4 &&
               frame_limit(c->in, c->in_len, c->net->max_request_bytes) < c->in_cap) {
        size_t cap = c->in_len * 2 > MIN_IN_CAP ? c->in_len * 2 : MIN_IN_CAP;
        if (net_in_resize(c, cap) != 0) {
            br_debug("cannot shrink the input buffer of %s: keeping it", c->peer);
        }
    }
}

/* Buffers of big frames may grow: under queued.max.request.bytes less its
 * reserve (or no limit). Under it every connection reads as it comes. */
static bool big_open(const struct br_net *n)
{
    return n->queued_max <= 0 || (uint64_t)n->in_bytes < (uint64_t)n->queued_big_max;
}

/* Buffers of small frames may grow: under the limit, or under the reserve. */
static bool small_open(const struct br_net *n)
{
    return (uint64_t)n->in_bytes < (uint64_t)n->queued_max ||
           (uint64_t)(n->in_bytes - n->big_bytes) < (uint64_t)(n->queued_max - n->queued_big_max);
}

/* c holds the start of a frame and may go on reading it. */
static bool may_finish(const struct br_conn *c)
{
    return !c->dead && !c->closing && !c->held && !c->throttled && c->in_len > 0 &&
           c->nslots < MAX_QUEUED_SLOTS;
}

/* Not read until its class may read again (or it is chosen to finish its
 * frame). */
static void conn_mute(struct br_conn *c, enum in_class cls)
{
    struct br_net *n = c->net;
    if (c->muted) {
        return;
    }
    if (n->queue[IN_SMALL].muted_head == NULL && n->queue[IN_BIG].muted_head == NULL) {
        const char *what = cls == IN_BIG ? "less its reserve: frames over 64 KiB wait"
                                         : "and its reserve: reading paused";
        if (!n->queued_max_logged) {
            br_info("input buffers hold %zu bytes (%zu of frames over 64 KiB), over "
                    "queued.max.request.bytes (%" PRId64 ") %s until requests complete (said "
                    "once; later at debug)",
                    n->in_bytes, n->big_bytes, n->queued_max, what);
            n->queued_max_logged = true;
        } else {
            br_debug("input buffers hold %zu bytes (%zu of frames over 64 KiB), over "
                     "queued.max.request.bytes (%" PRId64 ") %s",
                     n->in_bytes, n->big_bytes, n->queued_max, what);
        }
    }
    struct in_queue *q = &n->queue[cls];
    c->muted = true;
    c->mute_class = cls;
    c->mute_prev = q->muted_tail;
    c->mute_next = NULL;
    if (q->muted_tail != NULL) {
        q->muted_tail->mute_next = c;
    } else {
        q->muted_head = c;
    }
    q->muted_tail = c;
    net_conn_update_events(c);
}

static void conn_unmute(struct br_conn *c)
{
    if (!c->muted) {
        return;
    }
    net_mute_unlink(c);
    net_conn_update_events(c); /* may kill it */
}

enum gate {
    GATE_SHUT = 0, /* muted, or nothing to read */
    GATE_READ,     /* read, at most *want bytes */
    GATE_HEADER,   /* read the rest of the frame's size only */
};

/* Over queued.max.request.bytes less its reserve: may c read, and how far?
 * The size of its next frame comes from its buffer or, not taken, from its
 * socket. A big frame is read only by its class's finisher, the first
 * connection holding the start of one to ask; a small one while small
 * frames may grow (or by theirs), and only to its end, so that no start of
 * a big frame behind it is taken on the reserve. */
static enum gate read_gate(struct br_conn *c, size_t *want)
{
    struct br_net *n = c->net;
    uint8_t hdr[4];
    size_t have = c->in_len < 4 ? c->in_len : 4;
    if (have > 0) {
        memcpy(hdr, c->in, have);
    }
    if (have < 4) {
        ssize_t r = net_io_peek(c, hdr + have, 4 - have);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return GATE_SHUT;
        }
        have += r > 0 ? (size_t)r : 0; /* an error or the end: the read finds it */
    }
    int32_t max = net_conn_max_frame(c);
    int32_t size = have == 4 ? (int32_t)kp_load_be32(hdr) : 0;
    if (c->in_len < 4 && have == 4 && (size < 0 || size > max)) {
        return GATE_HEADER; /* refused as soon as it is read */
    }
    enum in_class cls = have == 4 && net_frame_is_big(size) ? IN_BIG : IN_SMALL;
    struct in_queue *q = &n->queue[cls];
    if (cls == IN_BIG && n->queue[IN_SMALL].finisher == c) {
        n->queue[IN_SMALL].finisher = NULL; /* its size came: a big frame */
        conn_mute(c, cls);
        net_queue_update(n);
        return GATE_SHUT;
    }
    if ((cls == IN_BIG || !small_open(n)) && q->finisher != c) {
        if (q->finisher != NULL || !may_finish(c)) {
            conn_mute(c, cls);
            return GATE_SHUT;
        }
        q->finisher = c;
    }
    if (have < 4) {
        return GATE_HEADER;
    }
    size_t total = (size_t)size + 4;
    /* c holds less than its frame (a whole one is handled before a read) */
    *want = total > c->in_len ? total - c->in_len : SIZE_MAX;
    return GATE_READ;
}

/* After input was handled or freed: under the limit less its reserve
 * everyone reads again; over it, small frames while they may grow, and in
 * each class one connection holding the start of a frame must be able to
 * finish it (the others may all be waiting for that). */
void net_queue_update(struct br_net *n)
{
    if (n->queued_max <= 0) {
        return;
    }
    for (size_t k = 0; k < IN_CLASSES; k++) {
        struct br_conn *f = n->queue[k].finisher;
        if (f != NULL && !may_finish(f)) {
            n->queue[k].finisher = NULL;
        }
    }
    bool open[IN_CLASSES] = {[IN_SMALL] = small_open(n), [IN_BIG] = big_open(n)};
    for (size_t k = 0; k < IN_CLASSES; k++) {
        struct in_queue *q = &n->queue[k];
        if (!open[k]) {
            continue;
        }
        q->finisher = NULL;
        if (q->muted_head != NULL) {
            br_debug("input buffers hold %zu bytes (%zu of frames over 64 KiB): reading %s "
                     "frames again",
                     n->in_bytes, n->big_bytes, k == IN_BIG ? "big" : "small");
        }
        while (q->muted_head != NULL) {
            conn_unmute(q->muted_head);
        }
    }
    for (size_t k = 0; k < IN_CLASSES; k++) {
        struct in_queue *q = &n->queue[k];
        if (q->finisher != NULL || q->muted_head == NULL) {
            continue;
        }
        for (struct br_conn *m = q->muted_head; m != NULL; m = m->mute_next) {
            if (may_finish(m)) {
                q->finisher = m;
                conn_unmute(m);
                break;
            }
        }
    }
}

/* Handles the whole frames at the start of buf[0..len) and returns the
 * bytes they took. c may be dead (a bad frame size) or closing on return. */
static size_t handle_frames(struct br_conn *c, uint8_t *buf, size_t len)
{
    size_t pos = 0;
    int32_t max = net_conn_max_frame(c);
    while (!c->dead && !c->closing && !c->held && !c->throttled &&
           (c->outbound || c->nslots < MAX_QUEUED_SLOTS) && len - pos >= 4) {
        int32_t size = 0;
        int err = kp_frame_size(buf + pos, len - pos, max, &size);
        if (err != 0) {
            c->error = EPROTO;
            br_warn("closing %s: frame size %" PRId32
                    " rejected (%s; %s %" PRId32 ")",
                    c->peer, (int32_t)kp_load_be32(buf + pos), kp_err_str(err),
                    max < c->net->max_request_bytes ? "before authentication, at most"
                                                    : "socket.request.max.bytes",
                    max);
            net_conn_kill(c);
            break;
        }
        if (len - pos - 4 < (size_t)size) {
            break;
        }
        if (c->outbound && c->pre_frame != NULL) {
            c->pre_frame(c, buf + pos + 4, (size_t)size);
        } else if (c->outbound) {
            c->conn_ops->frame(c->conn_ctx, c, buf + pos + 4, (size_t)size);
        } else {
            c->net->ops->frame(c->net->ctx, c, buf + pos + 4, (size_t)size);
            if (c->held) {
                break; /* not taken: it comes again (br_conn_hold) */
            }
        }
        pos += 4 + (size_t)size;
    }
    return pos;
}

/* Handle every whole frame in c's input buffer. */
void net_conn_process(struct br_conn *c)
{
    struct br_net *n = c->net;
    c->processing = true;
    size_t pos = handle_frames(c, c->in, c->in_len);
    c->processing = false;
    if (c->dead) {
        return;
    }
    if (pos > 0) {
        memmove(c->in, c->in + pos, c->in_len - pos);
        c->in_len -= pos;
        net_in_account(c);
        for (size_t k = 0; k < IN_CLASSES; k++) {
            if (n->queue[k].finisher == c) {
                n->queue[k].finisher = NULL; /* its frame is done: another may go */
            }
        }
    }
    in_trim(c);
    net_queue_update(n);
    net_conn_update_events(c);
}

/* c had nothing buffered and read len bytes into the net's scratch buffer:
 * handle the whole frames there, keep the rest. */
static void conn_process_scratch(struct br_conn *c, size_t len)
{
    uint8_t *buf = c->net->scratch;
    c->processing = true;
    size_t pos = handle_frames(c, buf, len);
    c->processing = false;
    if (c->dead) {
        return;
    }
    if (pos < len && !c->closing && in_stash(c, buf + pos, len - pos) != 0) {
        br_error("out of memory reading from %s", c->peer);
        net_conn_kill(c);
        return;
    }
    net_conn_update_events(c);
}

void net_conn_readable(struct br_conn *c)
{
    struct br_net *n = c->net;
    size_t budget = READ_BUDGET;
    for (;;) {
        if (c->dead || c->closing || c->held || c->throttled ||
            (!c->outbound && c->nslots >= MAX_QUEUED_SLOTS)) {
            return;
        }
        enum gate g = GATE_READ;
        size_t want = SIZE_MAX;
        if (!big_open(n)) {
            g = read_gate(c, &want);
            if (g == GATE_SHUT) {
                return;
            }
        }
        bool scratch = c->in_len == 0 && g == GATE_READ;
        int err = 0;
        if (g == GATE_HEADER) {
            /* a buffer of the size alone: if it announces a big frame, the
             * 4 bytes are all it took from the reserve */
            err = c->in_cap != 4 ? net_in_resize(c, 4) : 0;
        } else if (!scratch && c->in_cap == c->in_len) {
            err = in_grow(c);
        }
        if (err != 0) {
            br_error("out of memory reading from %s", c->peer);
            net_conn_kill(c);
            return;
        }
        uint8_t *dst = scratch ? n->scratch : c->in + c->in_len;
        size_t room = scratch ? READ_CHUNK : c->in_cap - c->in_len;
        ssize_t r = net_io_read(c, dst, room < want ? room : want);
        if (r > 0) {
            net_conn_touch(c);
            if (scratch) {
                conn_process_scratch(c, (size_t)r);
            } else {
                c->in_len += (size_t)r;
                net_in_account(c);
                net_conn_process(c);
            }
            if ((size_t)r >= budget) {
                net_tls_kick(c); /* what OpenSSL holds epoll does not report */
                return; /* the next turn goes on */
            }
            budget -= (size_t)r;
            continue;
        }
        if (r == 0) {
            br_debug("%s closed the connection", c->peer);
            net_conn_kill(c);
            return;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            br_debug("read from %s: %s", c->peer, strerror(errno));
            c->error = errno;
            net_conn_kill(c);
        }
        return;
    }
}

/* Reads what OpenSSL decrypted and holds: epoll reports only the socket
 * (net_tls_kick posts it). */
static void tls_pending_run(void *ctx, struct br_task *t)
{
    (void)ctx;
    struct br_conn *c = t->owner;
    if (!c->dead) {
        net_conn_readable(c);
    }
}

const struct br_task_ops net_tls_pending_task = {"TLS bytes already decrypted", tls_pending_run};
