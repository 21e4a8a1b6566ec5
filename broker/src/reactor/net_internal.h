/*
 * samsa-broker: the reactor's model and the functions its files share
 * (net.c: the reactor's setup, its loop, end-of-turn tasks and in-process
 * connections; net_timer.c: the timers' pairing heap; net_conn.c: a
 * connection's lifecycle and its accounting; net_accept.c: the
 * listeners' accepts; net_input.c: reading and framing requests;
 * net_output.c: response slots, writes and outbound connections;
 * net_tls.c: OpenSSL's calls; net_auth.c: SASL listeners' frame limit,
 * deadline and principal). Calls go one way: net.c above the others,
 * net_conn.c below them, net_tls.c and net_timer.c below it. Not for the
 * reactor's users: they include net.h.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REACTOR_NET_INTERNAL_H
#define SAMSA_BROKER_REACTOR_NET_INTERNAL_H

#include "reactor/net.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#define MAX_LISTENERS 8
/* The shared read buffer, and the size a connection's buffer may reach for
 * frames smaller than it (so pipelined requests are read together). */
#define READ_CHUNK 65536u
/* Frames of at most this many bytes, their size included, are small: one
 * read into the shared buffer takes them whole. The others are big. */
#define SMALL_FRAME READ_CHUNK
/* The part of queued.max.request.bytes that buffers of big frames may not
 * fill (1/QUEUED_RESERVE_DIV of it): it stays for small requests. */
#define QUEUED_RESERVE_DIV 8
/* The first size of a connection's own input buffer; it doubles from there
 * as bytes arrive, up to the frame being read. */
#define MIN_IN_CAP 4096u
#define MAX_EVENTS 128
#define MAX_IOV 64
/* Stop reading a connection while this many responses wait to be sent. */
#define MAX_QUEUED_SLOTS 1024u
/* Bytes read from one connection per readiness event: a peer that sends
 * faster than the broker appends would otherwise keep the reactor in its
 * read loop, and the mailbox (flushes, write-behind), timers and the other
 * connections would wait until it paused. epoll is level-triggered: the
 * rest is read at the next turn. */
#define READ_BUDGET ((size_t)4 << 20)
/* Connections accepted per listener event: the rest wait for the next turn,
 * so a flood of connections cannot starve the ones already open. */
#define ACCEPT_BATCH 256
/* How long the listeners stay unwatched when accept cannot get a descriptor
 * (or memory) and the spare descriptor does not help. */
#define ACCEPT_PAUSE_MS 1000
/* Refused connections are counted and logged once per interval. */
#define REFUSAL_LOG_INTERVAL_MS 10000

enum chunk_kind {
    CHUNK_MEM = 1,
    CHUNK_FILE,
};

struct chunk {
    struct chunk *next;
    enum chunk_kind kind;
    uint8_t *buf;            /* CHUNK_MEM: owned */
    struct br_fileref *file; /* CHUNK_FILE: referenced */
    int64_t pos;             /* CHUNK_FILE: file position of the next byte */
    size_t len;              /* bytes left to send */
    size_t off;              /* CHUNK_MEM: bytes of buf already sent */
};

struct br_slot {
    struct br_slot *next;
    struct chunk *head;
    struct chunk *tail;
    bool ready;
    void *parked; /* the user's parked request, if any */
};

/* Over queued.max.request.bytes less its reserve, a connection waits, or
 * finishes its frame, as one of these (struct br_net). */
enum in_class {
    IN_SMALL = 0, /* a small frame, or one whose size has not come yet */
    IN_BIG,
    IN_CLASSES,
};

struct br_conn {
    struct br_watch watch; /* first: epoll hands it back */
    struct br_net *net;
    struct br_conn *prev;
    struct br_conn *next;
    /* the idle list (connections.max.idle.ms): socket connections, least
     * recently active first */
    struct br_conn *lru_prev;
    struct br_conn *lru_next;
    int64_t last_active_ms; /* monotonic: the last byte read or written */
    bool in_lru;
    /* the net's list of connections of its class not read while over
     * queued.max.request.bytes (less its reserve, for big frames) */
    struct br_conn *mute_prev;
    struct br_conn *mute_next;
    bool muted;
    enum in_class mute_class; /* while muted */
    /* Input not handled yet: the start of a frame, or whole frames left
     * while too many responses wait. NULL when there is none: a connection
     * with nothing buffered reads into the net's scratch buffer. */
    uint8_t *in;
    size_t in_len;
    size_t in_cap;
    size_t in_big; /* counted in the net's big_bytes: in_cap while in starts a big frame */
    struct br_slot *slots;
    struct br_slot *slots_tail;
    unsigned nslots;
    bool closing;    /* no more reads; close once flushed */
    bool dead;       /* closed: freed at the end of the loop iteration */
    bool want_out;   /* EPOLLOUT registered */
    bool reading;    /* EPOLLIN registered */
    bool processing; /* inside conn_process: no re-entry */
    bool held;       /* br_conn_hold: not read until every slot is ready */
    bool throttled;  /* br_conn_throttle: not read until throttle_timer fires */
    struct br_timer throttle_timer;
    bool local;      /* in process, no socket (br_conn_local_new) */
    /* outbound (br_conn_connect): its frames go to its own ops, it is not
     * counted against max.connections nor closed for idleness, and what it
     * queues are requests, which do not hold back its reading */
    bool outbound;
    bool connecting;   /* outbound: not ready for its user (connect, TLS, SASL) */
    bool tcp_done;     /* outbound: the TCP connect completed */
    bool user_closed;  /* outbound: br_conn_close, so no ops->closed */
    int error;         /* outbound: why it closed (errno), 0 for a clean close */
    int32_t max_frame; /* outbound: the largest response frame taken */
    /* outbound, while it authenticates: the exchange's frame being sent
     * (ahead of every frame its user queued) */
    uint8_t *pre_out;
    size_t pre_out_len;
    size_t pre_out_off;
    /* ... and where the answers go meanwhile (net_output.c's exchange step) */
    void (*pre_frame)(struct br_conn *c, const uint8_t *payload, size_t len);
    char host[48]; /* outbound: the address connected to */
    const struct br_conn_ops *conn_ops;
    void *conn_ctx;
    int listener; /* accepted: the index of its listener (br_net_listen order); else -1 */
    /* TLS (net_tls.c), on a connection of an SSL listener; ssl is NULL on
     * the others */
    struct ssl_st *ssl;
    bool tls_handshaking;   /* SSL_do_handshake has not completed */
    bool tls_wants_write;   /* the last handshake step or read wants EPOLLOUT */
    bool tls_write_blocked; /* SSL_write_ex wants to be called again */
    bool tls_ktls;          /* the kernel encrypts: file regions go by SSL_sendfile */
    bool tls_failed;        /* a fatal TLS error: no close_notify (SSL_shutdown's rule) */
    uint8_t *tls_out;       /* plaintext of one record not yet taken by SSL_write_ex */
    size_t tls_out_len;
    struct br_task tls_task; /* reads what OpenSSL holds and epoll cannot report */
    /* SASL (net_auth.c), on a connection of a SASL listener: its user's
     * authentication state, freed with auth_free when it dies; the
     * deadline (connections.max.unauthenticated.ms) */
    void *auth; /* outbound: the SASL client's exchange (br_outbound_auth_ops) */
    void (*auth_free)(void *auth);
    bool authenticated;
    char *principal; /* "User:<name>" once authenticated, owned */
    struct br_timer auth_deadline;
    uint8_t *out; /* local: the bytes "sent", until taken */
    size_t out_len;
    size_t out_cap;
    char peer[64];
    uint8_t ip[16]; /* the peer's address, IPv4-mapped (max.connections.per.ip) */
    bool ip_counted; /* counted in the net's per-address counts */
};

struct listener {
    struct br_watch watch;
    int port;
    struct br_tls_ctx *tls; /* an SSL listener's, else NULL (not owned) */
    /* a SASL listener's user data (br_net_listener_auth), else NULL */
    void *auth;
    int32_t auth_max_frame;   /* the largest frame before authentication */
    int64_t auth_deadline_ms; /* <= 0: none */
};

/* The connections of one class over the limit: the one that may finish the
 * frame it holds, and those that wait. */
struct in_queue {
    struct br_conn *finisher;
    struct br_conn *muted_head;
    struct br_conn *muted_tail;
};

struct br_net {
    const struct br_net_ops *ops;
    void *ctx;
    int epfd;
    struct br_watch sig;
    struct listener listeners[MAX_LISTENERS];
    size_t nlisteners;
    struct br_conn *conns;
    size_t nconns;    /* accepted ones (max.connections) */
    uint64_t accepted;    /* since the start: connections accepted */
    uint64_t turned_away; /* ... refused (max.connections, stopping) */
    uint64_t idle_closed; /* ... closed idle (connections.max.idle.ms) */
    size_t noutbound; /* br_conn_connect's */
    struct br_outbound_security out_sec; /* theirs (br_net_outbound_security) */
    int max_connections;
    /* max.connections.per.ip (net_accept.c, Kafka's ConnectionQuotas): the
     * accepted connections per source address, in an open-addressing
     * table; only while a limit is set (ip_limited) */
    bool ip_limited;
    int32_t max_per_ip;
    uint8_t (*ip_override_addr)[16]; /* owned copies */
    int32_t *ip_override_max;
    size_t n_ip_overrides;
    struct ip_count *ip_counts; /* ip_cap slots (a power of two), ip_used in use */
    size_t ip_cap;
    size_t ip_used;
    uint64_t refused_per_ip;     /* since the start */
    int64_t ip_refusal_log_ms;   /* the next refusal logged at INFO, not before */
    uint64_t ip_refused_unlogged; /* refusals since the last one logged */
    int32_t max_request_bytes;
    bool stopping;
    bool stop_signalled; /* a stop signal came and the user stops the loop itself */
    struct br_timer *timers; /* the earliest deadline: the heap's root */
    struct br_task *tasks;   /* posted, in order (br_task_post) */
    struct br_task *tasks_tail;
    struct br_task *run_last;  /* while run_tasks runs: the last one of its turn */
    struct br_conn *graveyard; /* dead connections freed after dispatch */
    int64_t now_ms;            /* monotonic, taken after each epoll_wait */
    /* connections.max.idle.ms, <= 0 = never. As Kafka's Selector does,
     * connections sit on a list in the order of their last activity; the
     * head is the only one to look at. */
    int64_t idle_ms;
    struct br_conn *lru_head;
    struct br_conn *lru_tail;
    /* Input. Reads of connections with nothing buffered go to scratch and
     * their whole frames are handled from there (Redis 7.4's reusable query
     * buffer); only what is left of a frame is copied to the connection's
     * own buffer. in_bytes is the capacity of all those buffers, big_bytes
     * that of the ones starting a big frame (over SMALL_FRAME). An eighth
     * of queued.max.request.bytes (> 0) is a reserve that big frames may
     * not fill: from queued_big_max up, a connection learns the size of its
     * next frame (from its buffer, or with MSG_PEEK so that nothing is
     * taken) before it reads. A big frame then waits on its class's muted
     * list (without EPOLLIN); a small one is read, up to its end only,
     * while in_bytes is under the limit or the small frames' buffers under
     * the reserve, and waits otherwise. So a new client's small request is
     * served however many big frames stall half-sent. In each class one
     * connection holding the start of a frame, its finisher, may read on
     * to complete it, so that buffers that can only empty by being
     * completed do not wait on each other: a big frame larger than the
     * room left is read once those before it are done. Memory stays below
     * about the limit plus two frames of socket.request.max.bytes (the big
     * finisher's frame, and the last doubling of a buffer let in under the
     * gate) plus 4 bytes a connection (a frame's size read alone, which may
     * announce a big frame). */
    uint8_t *scratch; /* READ_CHUNK bytes */
    int64_t queued_max;
    int64_t queued_big_max; /* queued_max less its reserve */
    size_t in_bytes;
    size_t big_bytes;
    struct in_queue queue[IN_CLASSES];
    bool queued_max_logged; /* the first time over the limit is said at INFO */
    /* Out of descriptors (nginx's and Redis's answer): a descriptor held
     * open on /dev/null is closed to accept the pending connection and
     * close it at once, so the peer sees a clean close instead of hanging in
     * the backlog, and the listener stops being readable. Without a spare
     * (it could not be reopened: a helper thread took the slot) the
     * listeners are unwatched for ACCEPT_PAUSE_MS. */
    int spare_fd; /* -1 when none */
    bool accept_paused;
    int64_t accept_resume_ms; /* when accept_paused */
    /* accept failures since the last log line; the line is written at most
     * once per REFUSAL_LOG_INTERVAL_MS */
    uint64_t refused;       /* connections closed at once */
    uint64_t pauses;        /* times the listeners were unwatched */
    int refusal_errno;      /* the last accept error counted */
    int64_t refusal_log_ms; /* the next summary; 0 = no refusals lately */
};

/* net_accept.c */
void net_accept_resume_tick(struct br_net *n);
void net_conn_accept(struct br_net *n, struct listener *l);
void net_refusal_tick(struct br_net *n);
/* max.connections.per.ip (br_net_limit_per_ip sets it): a closed
 * connection's count given back; the table freed */
void net_ip_release(struct br_conn *c);
/* The address of a peer as the counts key it (IPv4 mapped into IPv6). */
void net_ip_key(const struct sockaddr_storage *ss, uint8_t out[16]);
/* Whether c, from host, may stay (net_ip.c, Kafka's ConnectionQuotas.inc):
 * false when its address has its limit already (counted, logged); when
 * true c is counted until net_ip_release. */
bool net_ip_admit(struct br_net *n, struct br_conn *c, const char *host);
void net_ip_limits_free(struct br_net *n);

/* net_auth.c */
/* on accept: the deadline of a connection of a SASL listener */
void net_auth_accept(struct br_conn *c, const struct listener *l);
/* the largest request frame c takes now */
int32_t net_conn_max_frame(const struct br_conn *c);

/* net_conn.c */
void net_chunk_free(struct chunk *ch);
void net_conn_destroy(struct br_conn *c);
void net_conn_kill(struct br_conn *c);
void net_conn_link(struct br_net *n, struct br_conn *c);
void net_conn_touch(struct br_conn *c);
void net_conn_update_events(struct br_conn *c);
bool net_frame_is_big(int32_t size);
void net_in_account(struct br_conn *c);
void net_in_free(struct br_conn *c);
void net_lru_append(struct br_conn *c);
void net_mute_unlink(struct br_conn *c);
void net_slot_free(struct br_slot *s);

/* net_input.c */
extern const struct br_task_ops net_tls_pending_task;
void net_conn_process(struct br_conn *c);
void net_conn_readable(struct br_conn *c);
KP_MUST_CHECK int net_in_resize(struct br_conn *c, size_t cap);
void net_queue_update(struct br_net *n);

/* net_tls.c: OpenSSL calls on a connection of an SSL listener */
struct br_tls_ctx;
enum net_tls_step {
    NET_TLS_DONE = 1,
    NET_TLS_AGAIN, /* tls_wants_write says which way it waits */
    NET_TLS_FAILED, /* logged with the peer and the reason */
};
/* pending: the task that reads what OpenSSL holds (net_input.c's) */
KP_MUST_CHECK int net_tls_accept(struct br_conn *c, struct br_tls_ctx *t,
                                 const struct br_task_ops *pending);
/* an outbound connection's client side: host is what the server's
 * certificate must name */
KP_MUST_CHECK int net_tls_connect(struct br_conn *c, struct br_tls_ctx *t, const char *host,
                                  const struct br_task_ops *pending);
enum net_tls_step net_tls_handshake(struct br_conn *c);
/* read(2) and recv(MSG_PEEK), through TLS on a TLS connection */
ssize_t net_io_read(struct br_conn *c, void *buf, size_t len);
ssize_t net_io_peek(struct br_conn *c, void *buf, size_t len);
/* posts c's pending task when c would read and OpenSSL holds decrypted
 * bytes, which epoll cannot report */
void net_tls_kick(struct br_conn *c);
/* SSL_write_ex of buf whole (one record at most 16 KiB): 1 written, 0 would
 * block (the same bytes again later), -1 broken */
int net_tls_write(struct br_conn *c, const void *buf, size_t len);
/* SSL_sendfile (kernel TLS): bytes sent, 0 would block, -1 broken */
ssize_t net_tls_sendfile(struct br_conn *c, int fd, int64_t pos, size_t len);
/* close_notify (best effort) and the SSL freed; before the socket closes */
void net_tls_close(struct br_conn *c);

/* net_output.c */
void net_conn_connect_done(struct br_conn *c);
/* an outbound connection's TLS handshake completed: SASL, or its user */
void net_conn_secured(struct br_conn *c);
void net_conn_flush(struct br_conn *c);

#endif
