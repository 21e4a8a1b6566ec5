/*
 * samsa-broker: the reactor, connections and ordered responses.
 *
 * One thread runs everything here (the reactor thread): epoll over the
 * listeners, the connections, a signalfd and an eventfd; a timer heap drives
 * epoll_wait's timeout. Dispatch is a switch on the watch kind: no callbacks.
 *
 * A connection reads size-prefixed frames (size checked against
 * socket.request.max.bytes before anything is allocated) and hands each whole
 * frame to the broker. Input is buffered as it arrives, never reserved from
 * the claimed size: a connection with nothing pending reads into one shared
 * buffer and its whole frames are handled there; only the start of a frame
 * is kept in a buffer of its own, which doubles as bytes come, up to the
 * frame. While those buffers hold queued.max.request.bytes or more, no
 * connection is read except one that finishes the frame it holds.
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
 * connection without stopping their handling. A response is a chain of
 * memory chunks (sent with writev) and file regions (sent with sendfile).
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_NET_H
#define SAMSA_BROKER_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>

struct br_broker;
struct br_fileref;
struct br_conn;
struct br_slot;

enum br_watch_kind {
    BR_WATCH_LISTENER = 1,
    BR_WATCH_CONN,
    BR_WATCH_SIGNAL,
    BR_WATCH_WAKE,
};

/* The first member of everything registered with epoll. */
struct br_watch {
    enum br_watch_kind kind;
    int fd;
};

enum br_timer_kind {
    BR_TIMER_HOUSEKEEPING = 1, /* periodic: flushes, checkpoints */
    BR_TIMER_PARKED,           /* a parked fetch's deadline */
    BR_TIMER_GROUP,            /* group coordinator deadlines (group.c) */
    BR_TIMER_ADMIN,            /* a parked CreateTopics / DeleteTopics' timeout (topic_admin.c) */
};

struct br_timer {
    int64_t deadline_ms;
    enum br_timer_kind kind;
    void *owner;
    size_t heap_index; /* SIZE_MAX when not armed */
};

struct br_net;

/* Monotonic milliseconds and wall-clock milliseconds. */
int64_t br_now_mono_ms(void);
int64_t br_now_wall_ms(void);

/* Create the reactor; listen on each host:port (host "" = all).
 * connections.max.idle.ms and queued.max.request.bytes are read from
 * b->cfg. */
int br_net_create(struct br_broker *b, int max_connections, int32_t max_request_bytes,
                  struct br_net **out);
int br_net_listen(struct br_net *n, const char *host, int port);
/* The port a listener bound (for port 0 in tests), or -1. */
int br_net_bound_port(const struct br_net *n, size_t listener);
/* Run until a stop signal (SIGTERM, SIGINT; SIGHUP unless it was ignored at
 * start) arrives. Returns 0. */
int br_net_run(struct br_net *n);
/* Stop accepting, finish what is in flight (bounded wait), close everything. */
void br_net_drain(struct br_net *n, int64_t max_wait_ms);
void br_net_free(struct br_net *n);

/* Registers an extra watch (BR_WATCH_WAKE: a helper thread's eventfd, see
 * mailbox.h) for EPOLLIN; when it fires the reactor calls br_broker_wake.
 * The watch must outlive the registration; closing its fd ends it.
 * Returns 0 or -1 (errno). */
int br_net_watch_add(struct br_net *n, struct br_watch *w);

void br_timer_init(struct br_timer *t, enum br_timer_kind kind, void *owner);
void br_timer_arm(struct br_net *n, struct br_timer *t, int64_t deadline_ms);
void br_timer_cancel(struct br_net *n, struct br_timer *t);

/* ---- what the broker's request handling sees of a connection */

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
/* Close the connection once the slots already queued are sent (protocol
 * errors). No further requests are read from it. */
void br_conn_close_after_flush(struct br_conn *c);
/* "host:port" of the peer, for logs. */
const char *br_conn_peer(const struct br_conn *c);
struct br_net *br_conn_net(const struct br_conn *c);

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
 * timers, dead connections. For an in-process broker that br_net_run does
 * not drive. */
void br_net_poll(struct br_net *n);

#endif
