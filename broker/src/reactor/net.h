/*
 * samsa-broker: the reactor, connections and ordered responses.
 *
 * One thread runs everything here (the reactor thread): epoll over the
 * listeners, the connections, a signalfd and an eventfd; a timer heap drives
 * epoll_wait's timeout. It names none of its users' concepts: connections,
 * timers and extra watches reach their users through const ops tables.
 *
 * A connection reads size-prefixed frames (size checked against
 * socket.request.max.bytes before anything is allocated) and hands each whole
 * frame to the broker. Input is buffered as it arrives, never reserved from
 * the claimed size: a connection with nothing pending reads into one shared
 * buffer and its whole frames are handled there; only the start of a frame
 * is kept in a buffer of its own, which doubles as bytes come, up to the
 * frame. Frames over 64 KiB are big: their buffers may fill
 * queued.max.request.bytes less a reserve of an eighth of it, small frames
 * all of it, or the reserve whatever big frames hold; past that a
 * connection waits unread, except, in each class, one that finishes the
 * frame it holds. So small requests are served while big frames stall.
 *
 * Connections idle (no byte read or written) for connections.max.idle.ms
 * are closed, queued responses and all. When descriptors run out, a spare
 * one is given up to accept and close each pending connection; otherwise
 * the listeners pause for a second; either way once-per-10-s log lines count
 * what was refused.
 *
 * Every request that gets a response takes a slot in
 * the connection's FIFO when it arrives; slots are sent strictly in order,
 * so a parked request (long-poll Fetch) holds back later responses on its
 * connection without stopping their handling, unless the user holds the
 * connection (br_conn_hold) until they are ready. A response is a chain of
 * memory chunks (sent with writev) and file regions (sent with sendfile).
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_NET_H
#define SAMSA_BROKER_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

#include "base/clock.h"

struct br_fileref;
struct br_conn;
struct br_slot;
struct br_net;

/*
 * The reactor knows its user only through these tables and one context
 * pointer (given to br_net_create), passed back to every callback. All run
 * on the reactor thread.
 */

/* The user of the connections. */
struct br_net_ops {
    /* A whole request frame (the payload after its size), valid only during
     * the call and writable in place. */
    void (*frame)(void *ctx, struct br_conn *c, uint8_t *payload, size_t len);
    /* The connection of a parked slot (br_slot_set_parked) died: whatever
     * `parked` is, it is released now and never answered. */
    void (*cancel_parked)(void *ctx, void *parked);
    /* br_net_drain began: answer every parked request now. */
    void (*drain)(void *ctx);
    /* A stop signal arrived: true stops the loop now; false means the user
     * stops it later (br_net_stop), after work of its own (a broker of a
     * cluster hands its leaderships over first). A second signal stops at
     * once. NULL: stop now. */
    bool (*stop_requested)(void *ctx);
};

/* What the reactor watches for the others is told apart by this kind; a
 * BR_WATCH_USER watch calls its ops. */
enum br_watch_kind {
    BR_WATCH_LISTENER = 1,
    BR_WATCH_CONN,
    BR_WATCH_SIGNAL,
    BR_WATCH_USER,
};

struct br_watch;

struct br_watch_ops {
    const char *name; /* for logs */
    /* The descriptor is readable. */
    void (*ready)(void *ctx, struct br_watch *w);
};

/* The first member of everything registered with epoll. */
struct br_watch {
    enum br_watch_kind kind;
    int fd;
    const struct br_watch_ops *ops; /* BR_WATCH_USER */
};

struct br_timer;

struct br_timer_ops {
    const char *name; /* for logs */
    /* The deadline passed; the timer is disarmed before the call and may be
     * armed again from it. ctx is the net's user's (br_net_create's ctx),
     * not the timer's: its owner is t->owner (br_timer_init's). */
    void (*fire)(void *ctx, struct br_timer *t);
};

/*
 * A deadline. Arming never allocates, so it cannot fail: the timers form an
 * intrusive pairing heap (Fredman, Sedgewick, Sleator and Tarjan, 1986)
 * through these links.
 */
struct br_timer {
    int64_t deadline_ms;
    const struct br_timer_ops *ops;
    void *owner;
    struct br_timer *child; /* the leftmost of its subtrees */
    struct br_timer *next;  /* the next sibling */
    struct br_timer *prev;  /* the previous sibling, or the parent of a leftmost child */
    bool armed;
};

/* The reactor's limits, from the broker's configuration. */
struct br_net_limits {
    int max_connections;       /* max.connections */
    int32_t max_request_bytes; /* socket.request.max.bytes */
    int64_t idle_ms;           /* connections.max.idle.ms, <= 0: never */
    int64_t queued_max_bytes;  /* queued.max.request.bytes, <= 0: no limit */
};

/* Create the reactor. ops and ctx are its user's (they outlive it). */
int br_net_create(const struct br_net_limits *lim, const struct br_net_ops *ops, void *ctx,
                  struct br_net **out);
/* max.connections.per.ip (max_per_ip; INT32_MAX, or 0 without overrides:
 * no limit) and its overrides: n addresses (IPv4 as IPv4-mapped IPv6) with
 * their limits, copied. Before the first accept. Returns 0 or -1 (out of
 * memory). */
KP_MUST_CHECK int br_net_limit_per_ip(struct br_net *n, int32_t max_per_ip,
                                      const uint8_t (*addr)[16], const int32_t *max,
                                      size_t count);
int br_net_listen(struct br_net *n, const char *host, int port);
/* Makes listener number `listener` an SSL one: its connections speak TLS
 * with t (net_tls.h), which must outlive the net. */
struct br_tls_ctx;
void br_net_listener_tls(struct br_net *n, size_t listener, struct br_tls_ctx *t);
/* Makes listener number `listener` a SASL one (SASL_PLAINTEXT, SASL_SSL):
 * `auth` is its user's (br_conn_listener_auth gives it back), its
 * connections take frames of at most max_frame bytes until authenticated
 * (Kafka's 524288) and are closed when not authenticated within
 * deadline_ms (<= 0: never). */
void br_net_listener_auth(struct br_net *n, size_t listener, void *auth, int32_t max_frame,
                          int64_t deadline_ms);
/* The port a listener bound (for port 0 in tests), or -1. Listeners are
 * numbered from 0 in the order br_net_listen made them. */
int br_net_bound_port(const struct br_net *n, size_t listener);

/* The accepted (client) connections: open now, and since the start
 * accepted, refused (max.connections, stopping) and closed for being idle
 * (connections.max.idle.ms). Outbound connections are not counted. And
 * what the input buffers of all connections hold now (what
 * queued.max.request.bytes bounds), of it those of big frames. */
struct br_net_counts {
    size_t open;
    uint64_t accepted;
    uint64_t refused;
    uint64_t refused_per_ip; /* of refused: over max.connections.per.ip */
    uint64_t idle_closed;
    size_t input_bytes;
    size_t input_big_bytes;
};
void br_net_counts(const struct br_net *n, struct br_net_counts *out);
/* Run until a stop signal (SIGTERM, SIGINT; SIGHUP unless it was ignored at
 * start) arrives. Returns 0. */
int br_net_run(struct br_net *n);
/* br_net_run returns after the current turn. */
void br_net_stop(struct br_net *n);
/* Stop accepting, finish what is in flight (bounded wait), close everything. */
void br_net_drain(struct br_net *n, int64_t max_wait_ms);
void br_net_free(struct br_net *n);

/* Registers w (a helper thread's eventfd, see mailbox.h) for EPOLLIN: when
 * it is readable the reactor calls ops->ready. The watch must outlive the
 * registration; closing its fd ends it. Returns 0 or -1 (errno). */
int br_net_watch_add(struct br_net *n, struct br_watch *w, const struct br_watch_ops *ops);

void br_timer_init(struct br_timer *t, const struct br_timer_ops *ops, void *owner);
/* (Re)arms t for deadline_ms (monotonic); it cannot fail. */
void br_timer_arm(struct br_net *n, struct br_timer *t, int64_t deadline_ms);
void br_timer_cancel(struct br_net *n, struct br_timer *t);
bool br_timer_armed(const struct br_timer *t);

/* ---- work at the end of the loop turn
 *
 * A posted task runs once, after the turn's events and due timers and
 * before the reactor waits again: what an event makes possible (a fetch an
 * append can now answer) is done after the event's handler returned, never
 * inside it. A task posted while the tasks run goes in the next turn, which
 * then does not wait. Posting cannot fail. */
struct br_task;

struct br_task_ops {
    const char *name; /* for logs */
    void (*run)(void *ctx, struct br_task *t);
};

struct br_task {
    const struct br_task_ops *ops;
    void *owner;
    struct br_task *next;
    bool posted;
};

void br_task_init(struct br_task *t, const struct br_task_ops *ops, void *owner);
/* Runs t at the end of this turn; a posted task is not posted twice. */
void br_task_post(struct br_net *n, struct br_task *t);
/* Takes t off the queue if it is on it. */
void br_task_cancel(struct br_net *n, struct br_task *t);

/* ---- what the user of a connection sees of it */

/* A new response slot at the tail of the connection's FIFO. */
struct br_slot *br_conn_slot_new(struct br_conn *c);
/* Append memory the slot now owns (freed with kp_free). */
int br_slot_add_mem(struct br_slot *s, uint8_t *buf, size_t len);
/* Append a file region (takes a reference on the file). */
int br_slot_add_file(struct br_slot *s, struct br_fileref *f, int64_t pos, size_t len);
/* Nothing was added to the slot and it is not ready: its response is still
 * to be written (a failed handler's error answer can go there). */
bool br_slot_is_empty(const struct br_slot *s);
/* The slot is complete: the connection may send it once those before it went. */
void br_slot_ready(struct br_conn *c, struct br_slot *s);
/* Owner data for a parked request; cancelled (NULL'd) if the connection dies. */
void br_slot_set_parked(struct br_slot *s, void *parked);
/* Whether a response of c is still to be written (a slot not ready). */
bool br_conn_answers_pending(const struct br_conn *c);
/* From ops->frame: the frame is not taken now. c is neither read nor
 * handled further until every response before it is ready; then the same
 * frame comes again. As a Kafka broker reads a connection's next request
 * only once it answered the one before (its SocketServer mutes the
 * channel in between). */
void br_conn_hold(struct br_conn *c);
/* KIP-219's mute (Kafka 2.0's ClientQuotaManager.throttle): c is not read
 * for ms from now (its responses still go out); frames it already holds
 * wait too. A throttle while one runs keeps the later end. */
void br_conn_throttle(struct br_conn *c, int64_t ms);
bool br_conn_throttled(const struct br_conn *c);
/* Close the connection once the slots already queued are sent (protocol
 * errors). No further requests are read from it. */
void br_conn_close_after_flush(struct br_conn *c);
/* The listener an accepted connection came in on (its number, see
 * br_net_bound_port); -1 for outbound and in-process connections. */
int br_conn_listener(const struct br_conn *c);
/* The SASL listener's user data (br_net_listener_auth) of a connection that
 * is not authenticated yet; NULL on other listeners and once authenticated. */
void *br_conn_listener_auth(const struct br_conn *c);
/* The user's authentication state of c (NULL until set), and setting it:
 * free_fn(auth) runs when c dies. */
void *br_conn_auth_state(const struct br_conn *c);
void br_conn_set_auth_state(struct br_conn *c, void *auth, void (*free_fn)(void *auth));
/* Authentication succeeded as `principal` ("User:alice", copied): the
 * frame limit and deadline end. 0, or -1 when memory runs out. */
KP_MUST_CHECK int br_conn_authenticated(struct br_conn *c, const char *principal);
/* "User:<name>" of an authenticated connection, else "User:ANONYMOUS" (as
 * Kafka's DefaultKafkaPrincipalBuilder). */
const char *br_conn_principal(const struct br_conn *c);
/* "host:port" of the peer, for logs. */
const char *br_conn_peer(const struct br_conn *c);
/* The subject of the certificate the peer of a TLS connection presented
 * (mutual TLS), in RFC 2253 form as Java's X500Principal.getName() writes
 * it ("CN=alice,OU=eng"): its length, 0 with buf "" when there is none. */
size_t br_conn_tls_subject(const struct br_conn *c, char *buf, size_t len);
struct br_net *br_conn_net(const struct br_conn *c);

/* ---- outbound connections (a follower's fetcher, the controller's
 * channel to a broker)
 *
 * The user's ops, called on the reactor thread. Exactly one of connected
 * and closed comes first; closed comes once, unless the user closed the
 * connection itself (br_conn_close); after closed the connection is gone. */
struct br_conn_ops {
    /* the connect completed: requests sent before go out now */
    void (*connected)(void *ctx, struct br_conn *c);
    /* a whole response frame (after its size), valid only during the call */
    void (*frame)(void *ctx, struct br_conn *c, uint8_t *payload, size_t len);
    /* the connect failed or the connection closed: err is an errno value
     * (ECONNREFUSED, EPROTO for a frame over max_frame_bytes...), 0 when the
     * peer closed it cleanly */
    void (*closed)(void *ctx, struct br_conn *c, int err);
};

/* The security of every outbound connection of a net: they all go to
 * other brokers' inter-broker listener (Kafka 2.0's ChannelBuilders for
 * the inter-broker listener). After the TCP connect a TLS handshake as a
 * client (tls set: br_tls_client_ctx_new), then a SASL exchange (auth
 * set), and only then ops->connected and the frames queued: while it lasts
 * br_conn_connecting is true. A failed handshake or exchange closes the
 * connection with EPROTO (TLS) or EACCES (SASL), logged at WARN. */
struct br_outbound_auth_ops {
    /* a new exchange's state; NULL when memory ran out */
    void *(*start)(void *arg);
    /* its next step: resp is the answer to the last frame (NULL the first
     * time); 1 with *frame (a whole request frame, kp_malloc'd, *len
     * bytes) to send, 0 authenticated, -1 failed (logged, naming peer) */
    int (*step)(void *state, const char *peer, const uint8_t *resp, size_t resp_len,
                uint8_t **frame, size_t *len);
    void (*free)(void *state);
};
struct br_outbound_security {
    struct br_tls_ctx *tls;                  /* NULL: no TLS */
    const struct br_outbound_auth_ops *auth; /* NULL: no SASL */
    void *auth_arg;
};
/* Copied; what it points to must outlive the net. Before the first
 * br_conn_connect. */
void br_net_outbound_security(struct br_net *n, const struct br_outbound_security *sec);

/* Starts connecting to host:port without blocking. host must be a numeric
 * IPv4 or IPv6 address: the reactor does no name lookups (resolve on
 * another thread). Frames up to max_frame_bytes are taken; a larger one
 * closes the connection. Not counted against max.connections, never closed
 * for idleness. Returns 0 (*out set; the outcome comes through ops),
 * KP_E_INVALID_ARG (not a numeric address, a bad port, the reactor
 * stopping), KP_E_NOMEM, or -errno when no socket could be made. */
KP_MUST_CHECK int br_conn_connect(struct br_net *n, const char *host, int port,
                                  int32_t max_frame_bytes, const struct br_conn_ops *ops, void *ctx,
                                  struct br_conn **out);
/* Queues a whole frame (its 4-byte size included), which the connection
 * now owns (kp_malloc'd), after those queued before; sent once connected.
 * 0, or -1 when the connection is closing or memory ran out (frame freed). */
KP_MUST_CHECK int br_conn_send(struct br_conn *c, uint8_t *frame, size_t len);
/* Closes it now, queued frames and all; ops->closed is not called. */
void br_conn_close(struct br_conn *c);
/* True until the connect completed. */
bool br_conn_connecting(const struct br_conn *c);

/* ---- in-process connections (the stateful fuzz harness, tests)
 *
 * A local connection has no socket: request bytes are fed to it as if read,
 * and what it would send collects in a buffer, in order (file regions are
 * read with pread where a socket would get sendfile). It is not on the
 * net's list of connections: its owner frees it, before the net. */
struct br_conn *br_conn_local_new(struct br_net *n, const char *peer);
/* Bytes as read from the socket (frames may be split anywhere); whole
 * frames are handled at once. 0, or -1 once the connection is closed (a
 * protocol error closes it) or memory runs out. */
int br_conn_local_feed(struct br_conn *c, const uint8_t *p, size_t len);
/* The bytes sent so far and not yet consumed. */
const uint8_t *br_conn_local_output(const struct br_conn *c, size_t *len);
void br_conn_local_consume(struct br_conn *c, size_t n);
/* True once the broker closed it (or will, once its responses are out). */
bool br_conn_local_closed(const struct br_conn *c);
/* Cancels what it parked and frees it. NULL is a no-op. */
void br_conn_local_free(struct br_conn *c);
/* One reactor turn without blocking: ready watches (the mailbox), due
 * timers, posted tasks, dead connections. For an in-process broker that br_net_run does
 * not drive. */
void br_net_poll(struct br_net *n);

#endif
