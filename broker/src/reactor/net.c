/* samsa-broker: reactor, connections, ordered responses (see net.h). */
#define _GNU_SOURCE

#include "reactor/net.h"

#include "base/fileref.h"
#include "base/logging.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/header.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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
    bool local;      /* in process, no socket (br_conn_local_new) */
    /* outbound (br_conn_connect): its frames go to its own ops, it is not
     * counted against max.connections nor closed for idleness, and what it
     * queues are requests, which do not hold back its reading */
    bool outbound;
    bool connecting;   /* outbound: the connect has not completed */
    bool user_closed;  /* outbound: br_conn_close, so no ops->closed */
    int error;         /* outbound: why it closed (errno), 0 for a clean close */
    int32_t max_frame; /* outbound: the largest response frame taken */
    const struct br_conn_ops *conn_ops;
    void *conn_ctx;
    uint8_t *out; /* local: the bytes "sent", until taken */
    size_t out_len;
    size_t out_cap;
    char peer[64];
};

struct listener {
    struct br_watch watch;
    int port;
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
    int max_connections;
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

/* ---------------------------------------------------------------- timers */

void br_timer_init(struct br_timer *t, const struct br_timer_ops *ops, void *owner)
{
    t->deadline_ms = 0;
    t->ops = ops;
    t->owner = owner;
    t->child = NULL;
    t->next = NULL;
    t->prev = NULL;
    t->armed = false;
}

bool br_timer_armed(const struct br_timer *t)
{
    return t->armed;
}

/* The root of the two heaps a and b (detached roots, either NULL): the
 * later one becomes the leftmost child of the earlier. */
static struct br_timer *heap_meld(struct br_timer *a, struct br_timer *b)
{
    if (a == NULL) {
        return b;
    }
    if (b == NULL) {
        return a;
    }
    if (b->deadline_ms < a->deadline_ms) {
        struct br_timer *t = a;
        a = b;
        b = t;
    }
    b->prev = a;
    b->next = a->child;
    if (a->child != NULL) {
        a->child->prev = b;
    }
    a->child = b;
    return a;
}

/* The two-pass pairing of a list of siblings into one heap: pairs melded
 * left to right, then the pairs melded right to left (what bounds the
 * amortized cost of removing the minimum to O(log n)). */
static struct br_timer *heap_merge_pairs(struct br_timer *first)
{
    struct br_timer *stack = NULL;
    while (first != NULL) {
        struct br_timer *a = first;
        struct br_timer *b = a->next;
        first = b != NULL ? b->next : NULL;
        a->next = NULL;
        a->prev = NULL;
        if (b != NULL) {
            b->next = NULL;
            b->prev = NULL;
        }
        a = heap_meld(a, b);
        a->next = stack; /* a root: its sibling link is free to chain the pairs */
        stack = a;
    }
    struct br_timer *root = NULL;
    while (stack != NULL) {
        struct br_timer *s = stack;
        stack = s->next;
        s->next = NULL;
        root = heap_meld(root, s);
    }
    return root;
}

void br_timer_cancel(struct br_net *n, struct br_timer *t)
{
    if (!t->armed) {
        return;
    }
    if (t == n->timers) {
        n->timers = heap_merge_pairs(t->child);
    } else {
        if (t->prev->child == t) {
            t->prev->child = t->next;
        } else {
            t->prev->next = t->next;
        }
        if (t->next != NULL) {
            t->next->prev = t->prev;
        }
        n->timers = heap_meld(n->timers, heap_merge_pairs(t->child));
    }
    t->child = NULL;
    t->next = NULL;
    t->prev = NULL;
    t->armed = false;
}

void br_timer_arm(struct br_net *n, struct br_timer *t, int64_t deadline_ms)
{
    br_timer_cancel(n, t);
    t->deadline_ms = deadline_ms;
    t->armed = true;
    n->timers = heap_meld(n->timers, t);
}

/* ---------------------------------------------------------------- setup */

int br_net_create(const struct br_net_limits *lim, const struct br_net_ops *ops, void *ctx,
                  struct br_net **out)
{
    struct br_net *n = kp_calloc(1, sizeof *n);
    if (n == NULL) {
        return -1;
    }
    n->ops = ops;
    n->ctx = ctx;
    n->idle_ms = lim->idle_ms;
    n->queued_max = lim->queued_max_bytes;
    n->queued_big_max = n->queued_max - n->queued_max / QUEUED_RESERVE_DIV;
    n->scratch = kp_malloc(READ_CHUNK);
    if (n->scratch == NULL) {
        kp_free(n);
        return -1;
    }
    n->max_connections = lim->max_connections;
    n->max_request_bytes = lim->max_request_bytes;
    n->epfd = epoll_create1(EPOLL_CLOEXEC);
    n->sig.fd = -1;
    n->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (n->spare_fd < 0) {
        br_warn("cannot open /dev/null for a spare descriptor (%s): when descriptors run "
                "out, pending connections wait instead of being closed",
                strerror(errno));
    }
    n->now_ms = br_now_mono_ms();
    if (n->epfd < 0) {
        br_error("epoll_create1: %s", strerror(errno));
        goto out_free;
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    /* SIGHUP (the terminal closed) stops cleanly too, as it stops Kafka's
     * JVM; ignored at start (nohup, kafka-server-start.sh -daemon) it stays
     * ignored: a blocked signal would reach the signalfd even then */
    struct sigaction hup;
    if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN) {
        sigaddset(&mask, SIGHUP);
    }
    if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0) {
        goto out_close_ep;
    }
    n->sig.kind = BR_WATCH_SIGNAL;
    n->sig.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (n->sig.fd < 0) {
        br_error("signalfd: %s", strerror(errno));
        goto out_close_ep;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &n->sig};
    if (epoll_ctl(n->epfd, EPOLL_CTL_ADD, n->sig.fd, &ev) != 0) {
        goto out_close_sig;
    }
    /* a peer that vanishes must not kill the broker */
    signal(SIGPIPE, SIG_IGN);
    *out = n;
    return 0;

out_close_sig:
    close(n->sig.fd);
out_close_ep:
    close(n->epfd);
out_free:
    if (n->spare_fd >= 0) {
        close(n->spare_fd);
    }
    kp_free(n->scratch);
    kp_free(n);
    return -1;
}

int br_net_listen(struct br_net *n, const char *host, int port)
{
    if (n->nlisteners >= MAX_LISTENERS) {
        br_error("too many listeners");
        return -1;
    }
    char portstr[16];
    (void)snprintf(portstr, sizeof portstr, "%d", port);
    /* errors name the address as listeners spells it: IPv6 in brackets */
    const char *lb = strchr(host, ':') != NULL ? "[" : "";
    const char *rb = lb[0] != '\0' ? "]" : "";
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host[0] != '\0' ? host : NULL, portstr, &hints, &res);
    if (gai != 0) {
        br_error("listeners: %s%s%s:%d: %s", lb, host, rb, port, gai_strerror(gai));
        return -1;
    }
    int fd = -1;
    int why = 0; /* errno of the last failed attempt */
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            why = errno;
            continue;
        }
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
            break;
        }
        why = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        /* the key and the address, as the operator wrote them */
        br_error("listeners: %s%s%s:%d: %s", lb, host, rb, port, strerror(why));
        return -1;
    }
    struct listener *l = &n->listeners[n->nlisteners];
    l->watch.kind = BR_WATCH_LISTENER;
    l->watch.fd = fd;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl = sizeof ss;
    l->port = port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            l->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            l->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        }
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l->watch};
    if (epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        return -1;
    }
    n->nlisteners++;
    br_info("listening on %s:%d", host[0] != '\0' ? host : "*", l->port);
    return 0;
}

int br_net_watch_add(struct br_net *n, struct br_watch *w, const struct br_watch_ops *ops)
{
    w->kind = BR_WATCH_USER;
    w->ops = ops;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};
    return epoll_ctl(n->epfd, EPOLL_CTL_ADD, w->fd, &ev);
}

void br_net_counts(const struct br_net *n, struct br_net_counts *out)
{
    *out = (struct br_net_counts){n->nconns,      n->accepted,  n->turned_away,
                                  n->idle_closed, n->in_bytes, n->big_bytes};
}

int br_net_bound_port(const struct br_net *n, size_t listener)
{
    return listener < n->nlisteners ? n->listeners[listener].port : -1;
}

/* ---------------------------------------------------------------- slots */

struct br_net *br_conn_net(const struct br_conn *c)
{
    return c->net;
}

const char *br_conn_peer(const struct br_conn *c)
{
    return c->peer;
}

static void chunk_free(struct chunk *ch)
{
    if (ch->kind == CHUNK_MEM) {
        kp_free(ch->buf);
    } else {
        br_fileref_unref(ch->file);
    }
    kp_free(ch);
}

static void slot_free(struct br_slot *s)
{
    struct chunk *ch = s->head;
    while (ch != NULL) {
        struct chunk *next = ch->next;
        chunk_free(ch);
        ch = next;
    }
    kp_free(s);
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

static void conn_update_events(struct br_conn *c);
static void conn_flush(struct br_conn *c);
static void conn_process(struct br_conn *c);
static void in_free(struct br_conn *c);
static void mute_unlink(struct br_conn *c);

void br_slot_ready(struct br_conn *c, struct br_slot *s)
{
    s->ready = true;
    s->parked = NULL;
    if (c->slots == s) {
        conn_flush(c);
    }
    if (c->held && !c->dead && !br_conn_answers_pending(c)) {
        /* the frame held back comes again, and reading resumes */
        c->held = false;
        if (!c->processing && !c->closing && c->in_len >= 4 && c->nslots < MAX_QUEUED_SLOTS) {
            conn_process(c);
        } else {
            conn_update_events(c);
        }
    }
}

void br_conn_close_after_flush(struct br_conn *c)
{
    c->closing = true;
    conn_update_events(c);
    if (c->slots == NULL) {
        conn_flush(c);
    }
}

/* ---------------------------------------------------------------- conns */

static void lru_unlink(struct br_conn *c)
{
    struct br_net *n = c->net;
    if (!c->in_lru) {
        return;
    }
    if (c->lru_prev != NULL) {
        c->lru_prev->lru_next = c->lru_next;
    } else {
        n->lru_head = c->lru_next;
    }
    if (c->lru_next != NULL) {
        c->lru_next->lru_prev = c->lru_prev;
    } else {
        n->lru_tail = c->lru_prev;
    }
    c->lru_prev = NULL;
    c->lru_next = NULL;
    c->in_lru = false;
}

static void lru_append(struct br_conn *c)
{
    struct br_net *n = c->net;
    c->lru_prev = n->lru_tail;
    c->lru_next = NULL;
    if (n->lru_tail != NULL) {
        n->lru_tail->lru_next = c;
    } else {
        n->lru_head = c;
    }
    n->lru_tail = c;
    c->in_lru = true;
}

/* Bytes moved on c: it goes to the end of the idle list. */
static void conn_touch(struct br_conn *c)
{
    if (!c->in_lru) {
        return; /* local, or dead */
    }
    c->last_active_ms = c->net->now_ms;
    if (c->net->lru_tail != c) {
        lru_unlink(c);
        lru_append(c);
    }
}

static void conn_kill(struct br_conn *c)
{
    if (c->dead) {
        return;
    }
    c->dead = true;
    if (c->outbound && !c->user_closed) {
        /* its user forgets it now; it is freed at the end of the turn */
        c->conn_ops->closed(c->conn_ctx, c, c->error);
    }
    lru_unlink(c);
    mute_unlink(c);
    for (size_t k = 0; k < IN_CLASSES; k++) {
        if (c->net->queue[k].finisher == c) {
            c->net->queue[k].finisher = NULL; /* bury() picks the next */
        }
    }
    if (c->watch.fd >= 0) {
        (void)epoll_ctl(c->net->epfd, EPOLL_CTL_DEL, c->watch.fd, NULL);
        close(c->watch.fd);
        c->watch.fd = -1;
    }
    /* parked requests of this connection go away with it */
    for (struct br_slot *s = c->slots; s != NULL; s = s->next) {
        if (s->parked != NULL) {
            c->net->ops->cancel_parked(c->net->ctx, s->parked);
            s->parked = NULL;
        }
    }
    if (c->local) {
        /* not on the list; its owner frees it (br_conn_local_free) */
        return;
    }
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        c->net->conns = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    if (c->outbound) {
        c->net->noutbound--;
    } else {
        c->net->nconns--;
    }
    c->next = c->net->graveyard;
    c->prev = NULL;
    c->net->graveyard = c;
}

static void conn_destroy(struct br_conn *c)
{
    struct br_slot *s = c->slots;
    while (s != NULL) {
        struct br_slot *next = s->next;
        slot_free(s);
        s = next;
    }
    /* freeing only now: a handler may still use its payload when a write
     * error kills the connection under it */
    in_free(c);
    kp_free(c->out);
    kp_free(c);
}

static void conn_update_events(struct br_conn *c)
{
    if (c->dead || c->local) {
        return;
    }
    bool want_in =
        !c->closing && (c->outbound || c->nslots < MAX_QUEUED_SLOTS) && !c->muted &&
        !c->connecting && !c->held;
    bool want_out = c->connecting || (c->slots != NULL && c->slots->ready);
    if (want_in == c->reading && want_out == c->want_out) {
        return;
    }
    struct epoll_event ev = {.events = (want_in ? EPOLLIN : 0u) | (want_out ? EPOLLOUT : 0u),
                             .data.ptr = &c->watch};
    if (epoll_ctl(c->net->epfd, EPOLL_CTL_MOD, c->watch.fd, &ev) != 0) {
        br_warn("epoll_ctl on %s: %s", c->peer, strerror(errno));
        conn_kill(c);
        return;
    }
    c->reading = want_in;
    c->want_out = want_out;
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
        chunk_free(ch);
    }
    return 0;
}

/* Send what can be sent now, strictly from the head slot. */
static void conn_flush(struct br_conn *c)
{
    if (c->connecting) {
        return; /* sent once connected */
    }
    while (!c->dead && c->slots != NULL && c->slots->ready) {
        struct br_slot *s = c->slots;
        if (c->local && local_send(c, s) != 0) {
            conn_kill(c);
            return;
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
                    conn_touch(c);
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
                            chunk_free(x);
                        }
                    }
                }
            } else {
                off_t pos = (off_t)ch->pos;
                size_t want = ch->len > 0x7ffff000u ? 0x7ffff000u : ch->len;
                n = sendfile(c->watch.fd, br_fileref_fd(ch->file), &pos, want);
                if (n > 0) {
                    conn_touch(c);
                    ch->pos += n;
                    ch->len -= (size_t)n;
                    if (ch->len == 0) {
                        s->head = ch->next;
                        if (s->head == NULL) {
                            s->tail = NULL;
                        }
                        chunk_free(ch);
                    }
                } else if (n == 0) {
                    /* the file is shorter than promised: the response can
                     * never be completed, so the connection must go */
                    br_error("sendfile to %s: file ended early", c->peer);
                    conn_kill(c);
                    return;
                }
            }
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    conn_update_events(c);
                    return;
                }
                if (errno == EINTR) {
                    continue;
                }
                br_debug("write to %s: %s", c->peer, strerror(errno));
                c->error = errno;
                conn_kill(c);
                return;
            }
        }
        c->slots = s->next;
        if (c->slots == NULL) {
            c->slots_tail = NULL;
        }
        c->nslots--;
        slot_free(s);
    }
    if (c->dead) {
        return;
    }
    if (c->closing && c->slots == NULL) {
        conn_kill(c);
        return;
    }
    /* frames left unread while too many responses were queued */
    if (!c->processing && !c->closing && !c->held && c->in_len >= 4 &&
        c->nslots < MAX_QUEUED_SLOTS) {
        conn_process(c);
        return;
    }
    conn_update_events(c);
}

/* On the net's list of connections (socket ones: the local ones are their
 * owners'). */
static void conn_link(struct br_net *n, struct br_conn *c)
{
    c->prev = NULL;
    c->next = n->conns;
    if (n->conns != NULL) {
        n->conns->prev = c;
    }
    n->conns = c;
}

/* ---------------------------------------------------------------- accept */

/* What an accept error means for the listener. */
enum accept_verdict {
    ACCEPT_DRAINED = 1, /* nothing pending */
    ACCEPT_RETRY,       /* that connection failed: try the next one */
    ACCEPT_STARVED,     /* no descriptor or no memory: back off */
};

static enum accept_verdict accept_verdict(int err)
{
    switch (err) {
    case EAGAIN:
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
        return ACCEPT_DRAINED;
    /* accept(2): errors already pending on the new connection are passed
     * on; they concern that connection only */
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH:
    case EPERM: /* a firewall rule refused it */
        return ACCEPT_RETRY;
    default:
        /* EMFILE, ENFILE, ENOBUFS, ENOMEM, and anything unexpected: the
         * listener stays readable, so retrying at once would spin */
        return ACCEPT_STARVED;
    }
}

static const char *refusal_reason(int err, char *buf, size_t len)
{
    struct rlimit rl;
    if (err == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur == RLIM_INFINITY) {
            (void)snprintf(buf, len, "out of file descriptors (no limit)");
        } else {
            (void)snprintf(buf, len, "out of file descriptors (limit %llu)",
                           (unsigned long long)rl.rlim_cur);
        }
    } else if (err == ENFILE) {
        (void)snprintf(buf, len, "the system is out of file descriptors (fs.file-max)");
    } else if (err == ENOBUFS || err == ENOMEM) {
        (void)snprintf(buf, len, "out of memory (%s)", strerror(err));
    } else {
        (void)snprintf(buf, len, "%s", strerror(err));
    }
    return buf;
}

/* Counts a refused connection (refused) or a pause (!refused); the first
 * of a series is logged at once, the rest once per interval. */
static void accept_failed(struct br_net *n, int err, bool refused)
{
    if (refused) {
        n->refused++;
    } else {
        n->pauses++;
    }
    n->refusal_errno = err;
    if (n->refusal_log_ms == 0) {
        char why[96];
        br_warn("accept: %s: %s; counts follow every %d s while it lasts",
                refusal_reason(err, why, sizeof why),
                refused ? "closing new connections at once" : "not accepting for a while",
                REFUSAL_LOG_INTERVAL_MS / 1000);
        n->refusal_log_ms = n->now_ms + REFUSAL_LOG_INTERVAL_MS;
    }
}

/* The summary line, once per interval while refusals go on. */
static void refusal_tick(struct br_net *n)
{
    if (n->refusal_log_ms == 0 || n->now_ms < n->refusal_log_ms) {
        return;
    }
    if (n->refused == 0 && n->pauses == 0) {
        br_info("accept: accepting connections again");
        n->refusal_log_ms = 0;
        return;
    }
    char why[96];
    char paused[64] = "";
    if (n->pauses > 0) {
        (void)snprintf(paused, sizeof paused, ", stopped accepting %llu time(s)",
                       (unsigned long long)n->pauses);
    }
    br_warn("accept: %s: refused %llu connection(s)%s in the last %d s",
            refusal_reason(n->refusal_errno, why, sizeof why), (unsigned long long)n->refused,
            paused, REFUSAL_LOG_INTERVAL_MS / 1000);
    n->refused = 0;
    n->pauses = 0;
    n->refusal_log_ms = n->now_ms + REFUSAL_LOG_INTERVAL_MS;
}

static void listeners_watch(struct br_net *n, bool on)
{
    for (size_t i = 0; i < n->nlisteners; i++) {
        struct epoll_event ev = {.events = on ? EPOLLIN : 0u, .data.ptr = &n->listeners[i].watch};
        if (epoll_ctl(n->epfd, EPOLL_CTL_MOD, n->listeners[i].watch.fd, &ev) != 0) {
            br_error("epoll_ctl on a listener: %s", strerror(errno));
        }
    }
}

static void accept_pause(struct br_net *n, int err)
{
    accept_failed(n, err, false);
    if (!n->accept_paused) {
        listeners_watch(n, false);
        n->accept_paused = true;
    }
    n->accept_resume_ms = n->now_ms + ACCEPT_PAUSE_MS;
}

static void accept_resume_tick(struct br_net *n)
{
    if (!n->accept_paused || n->now_ms < n->accept_resume_ms) {
        return;
    }
    if (n->spare_fd < 0) {
        n->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    n->accept_paused = false;
    if (!n->stopping) {
        listeners_watch(n, true);
    }
}

/* Out of descriptors: give the spare to the pending connection, close it,
 * take the spare back. ACCEPT_RETRY when a connection was refused that way
 * and the spare is back (go on with the next one), ACCEPT_DRAINED when none
 * was pending (Linux reports EMFILE before it looks at the queue),
 * ACCEPT_STARVED when the spare did not help. */
static enum accept_verdict accept_refuse_with_spare(struct br_net *n, struct listener *l, int err)
{
    if (n->spare_fd < 0 || (err != EMFILE && err != ENFILE)) {
        return ACCEPT_STARVED;
    }
    close(n->spare_fd);
    n->spare_fd = -1;
    int fd = accept4(l->watch.fd, NULL, NULL, SOCK_CLOEXEC);
    enum accept_verdict v = fd >= 0 ? ACCEPT_RETRY : accept_verdict(errno);
    if (fd >= 0) {
        close(fd);
        accept_failed(n, err, true);
    }
    n->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (n->spare_fd < 0) {
        v = ACCEPT_STARVED; /* another thread took the slot */
    }
    return v;
}

static void conn_accept(struct br_net *n, struct listener *l)
{
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof ss);
        socklen_t sl = sizeof ss;
        int fd = accept4(l->watch.fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            enum accept_verdict v = accept_verdict(err);
            if (v == ACCEPT_DRAINED) {
                return;
            }
            if (v == ACCEPT_RETRY) {
                continue;
            }
            v = accept_refuse_with_spare(n, l, err);
            if (v == ACCEPT_RETRY) {
                continue;
            }
            if (v == ACCEPT_STARVED) {
                accept_pause(n, err);
            }
            return;
        }
        if (n->stopping || (n->max_connections > 0 && n->nconns >= (size_t)n->max_connections)) {
            br_warn("refusing a connection: %s",
                    n->stopping ? "stopping" : "max.connections reached");
            n->turned_away++;
            close(fd);
            continue;
        }
        struct br_conn *c = kp_calloc(1, sizeof *c);
        if (c == NULL) {
            close(fd);
            accept_pause(n, ENOMEM);
            return;
        }
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->watch.kind = BR_WATCH_CONN;
        c->watch.fd = fd;
        c->net = n;
        c->reading = true;
        char host[INET6_ADDRSTRLEN] = "?";
        int port = 0;
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
            (void)inet_ntop(AF_INET, &sa->sin_addr, host, sizeof host);
            port = ntohs(sa->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *sa = (struct sockaddr_in6 *)&ss;
            (void)inet_ntop(AF_INET6, &sa->sin6_addr, host, sizeof host);
            port = ntohs(sa->sin6_port);
        }
        (void)snprintf(c->peer, sizeof c->peer, "%s:%d", host, port);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->watch};
        if (epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            close(fd);
            kp_free(c);
            continue;
        }
        conn_link(n, c);
        n->nconns++;
        n->accepted++;
        c->last_active_ms = n->now_ms;
        lru_append(c);
        br_debug("connection from %s", c->peer);
    }
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
    c->connecting = true; /* even when it connected at once: connected comes from the loop */
    c->want_out = true;
    c->max_frame = max_frame_bytes;
    c->conn_ops = ops;
    c->conn_ctx = ctx;
    (void)snprintf(c->peer, sizeof c->peer, "%s%s%s:%d", ss.ss_family == AF_INET6 ? "[" : "", host,
                   ss.ss_family == AF_INET6 ? "]" : "", port);
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = &c->watch};
    if (epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int err = errno;
        close(fd);
        kp_free(c);
        return -err;
    }
    conn_link(n, c);
    n->noutbound++;
    c->last_active_ms = n->now_ms;
    *out = c;
    return 0;
}

/* The connect of an outbound connection finished, one way or the other. */
static void conn_connect_done(struct br_conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->watch.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
    }
    if (err != 0) {
        br_debug("connecting to %s: %s", c->peer, strerror(err));
        c->error = err;
        conn_kill(c);
        return;
    }
    c->connecting = false;
    conn_update_events(c);
    c->conn_ops->connected(c->conn_ctx, c);
    if (!c->dead) {
        conn_flush(c); /* what was sent while connecting */
    }
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
    conn_kill(c);
}

bool br_conn_connecting(const struct br_conn *c)
{
    return c->connecting;
}

/* ---------------------------------------------------------------- input */

/* Whether a frame of this size (as read from the wire) is big. A negative
 * one is not: it is refused as soon as its 4 bytes are in. */
static bool frame_is_big(int32_t size)
{
    return size > (int32_t)(SMALL_FRAME - 4);
}

/* c's buffer counts among the big frames' while it starts with one; after
 * any change of c->in, in_len or in_cap. */
static void in_account(struct br_conn *c)
{
    size_t big = c->in_len >= 4 && frame_is_big((int32_t)kp_load_be32(c->in)) ? c->in_cap : 0;
    c->net->big_bytes = c->net->big_bytes - c->in_big + big;
    c->in_big = big;
}

/* Sets c's input buffer to cap bytes (in_len <= cap, 0 < cap), keeping its
 * content, and the net's count with it (in_free releases it). 0, or -1 when
 * memory runs out (c is unchanged). */
KP_MUST_CHECK static int in_resize(struct br_conn *c, size_t cap)
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
    in_account(c);
    return 0;
}

static void in_free(struct br_conn *c)
{
    c->net->in_bytes -= c->in_cap;
    kp_free(c->in);
    c->in = NULL;
    c->in_len = 0;
    c->in_cap = 0;
    in_account(c);
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
    return in_resize(c, cap);
}

/* The unhandled end of a read into scratch becomes c's buffer. */
KP_MUST_CHECK static int in_stash(struct br_conn *c, const uint8_t *p, size_t len)
{
    size_t lim = frame_limit(p, len, c->net->max_request_bytes);
    size_t cap = len * 2 > MIN_IN_CAP ? len * 2 : MIN_IN_CAP;
    cap = cap > lim ? lim : cap;
    cap = cap < c->in_len + len ? c->in_len + len : cap;
    if (cap > c->in_cap && in_resize(c, cap) != 0) {
        return -1;
    }
    memcpy(c->in + c->in_len, p, len);
    c->in_len += len;
    in_account(c);
    return 0;
}

/* After frames were handled: an empty buffer is freed (the next read goes
 * to scratch), a mostly empty large one shrinks unless the frame it now
 * starts with needs it all. */
static void in_trim(struct br_conn *c)
{
    if (c->in_len == 0) {
        in_free(c);
    } else if (c->in_cap > READ_CHUNK && c->in_len < c->in_cap / 4 &&
               frame_limit(c->in, c->in_len, c->net->max_request_bytes) < c->in_cap) {
        size_t cap = c->in_len * 2 > MIN_IN_CAP ? c->in_len * 2 : MIN_IN_CAP;
        if (in_resize(c, cap) != 0) {
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
    return !c->dead && !c->closing && !c->held && c->in_len > 0 && c->nslots < MAX_QUEUED_SLOTS;
}

static void mute_unlink(struct br_conn *c)
{
    if (!c->muted) {
        return;
    }
    struct in_queue *q = &c->net->queue[c->mute_class];
    if (c->mute_prev != NULL) {
        c->mute_prev->mute_next = c->mute_next;
    } else {
        q->muted_head = c->mute_next;
    }
    if (c->mute_next != NULL) {
        c->mute_next->mute_prev = c->mute_prev;
    } else {
        q->muted_tail = c->mute_prev;
    }
    c->mute_prev = NULL;
    c->mute_next = NULL;
    c->muted = false;
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
    conn_update_events(c);
}

static void conn_unmute(struct br_conn *c)
{
    if (!c->muted) {
        return;
    }
    mute_unlink(c);
    conn_update_events(c); /* may kill it */
}

static void queue_update(struct br_net *n);

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
        ssize_t r = recv(c->watch.fd, hdr + have, 4 - have, MSG_PEEK);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return GATE_SHUT;
        }
        have += r > 0 ? (size_t)r : 0; /* an error or the end: the read finds it */
    }
    int32_t max = c->outbound ? c->max_frame : n->max_request_bytes;
    int32_t size = have == 4 ? (int32_t)kp_load_be32(hdr) : 0;
    if (c->in_len < 4 && have == 4 && (size < 0 || size > max)) {
        return GATE_HEADER; /* refused as soon as it is read */
    }
    enum in_class cls = have == 4 && frame_is_big(size) ? IN_BIG : IN_SMALL;
    struct in_queue *q = &n->queue[cls];
    if (cls == IN_BIG && n->queue[IN_SMALL].finisher == c) {
        n->queue[IN_SMALL].finisher = NULL; /* its size came: a big frame */
        conn_mute(c, cls);
        queue_update(n);
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
static void queue_update(struct br_net *n)
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
    int32_t max = c->outbound ? c->max_frame : c->net->max_request_bytes;
    while (!c->dead && !c->closing && !c->held && (c->outbound || c->nslots < MAX_QUEUED_SLOTS) &&
           len - pos >= 4) {
        int32_t size = 0;
        int err = kp_frame_size(buf + pos, len - pos, max, &size);
        if (err != 0) {
            c->error = EPROTO;
            br_warn("closing %s: frame size %" PRId32
                    " rejected (%s; socket.request.max.bytes %" PRId32 ")",
                    c->peer, (int32_t)kp_load_be32(buf + pos), kp_err_str(err),
                    c->net->max_request_bytes);
            conn_kill(c);
            break;
        }
        if (len - pos - 4 < (size_t)size) {
            break;
        }
        if (c->outbound) {
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
static void conn_process(struct br_conn *c)
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
        in_account(c);
        for (size_t k = 0; k < IN_CLASSES; k++) {
            if (n->queue[k].finisher == c) {
                n->queue[k].finisher = NULL; /* its frame is done: another may go */
            }
        }
    }
    in_trim(c);
    queue_update(n);
    conn_update_events(c);
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
        conn_kill(c);
        return;
    }
    conn_update_events(c);
}

static void conn_readable(struct br_conn *c)
{
    struct br_net *n = c->net;
    size_t budget = READ_BUDGET;
    for (;;) {
        if (c->dead || c->closing || c->held || (!c->outbound && c->nslots >= MAX_QUEUED_SLOTS)) {
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
            err = c->in_cap != 4 ? in_resize(c, 4) : 0;
        } else if (!scratch && c->in_cap == c->in_len) {
            err = in_grow(c);
        }
        if (err != 0) {
            br_error("out of memory reading from %s", c->peer);
            conn_kill(c);
            return;
        }
        uint8_t *dst = scratch ? n->scratch : c->in + c->in_len;
        size_t room = scratch ? READ_CHUNK : c->in_cap - c->in_len;
        ssize_t r = read(c->watch.fd, dst, room < want ? room : want);
        if (r > 0) {
            conn_touch(c);
            if (scratch) {
                conn_process_scratch(c, (size_t)r);
            } else {
                c->in_len += (size_t)r;
                in_account(c);
                conn_process(c);
            }
            if ((size_t)r >= budget) {
                return; /* the next turn goes on */
            }
            budget -= (size_t)r;
            continue;
        }
        if (r == 0) {
            br_debug("%s closed the connection", c->peer);
            conn_kill(c);
            return;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            br_debug("read from %s: %s", c->peer, strerror(errno));
            c->error = errno;
            conn_kill(c);
        }
        return;
    }
}

/* ---------------------------------------------------------------- loop */

static void bury(struct br_net *n)
{
    bool any = n->graveyard != NULL;
    while (n->graveyard != NULL) {
        struct br_conn *c = n->graveyard;
        n->graveyard = c->next;
        conn_destroy(c);
    }
    if (any) {
        queue_update(n); /* their buffers are free, a finisher may be gone */
    }
}

/* The reactor's own deadlines (kept out of the timer heap, which holds its
 * users' timers). */
/* Connections idle for connections.max.idle.ms are closed, with whatever
 * they had queued: a peer that sends nothing and reads nothing (its
 * responses cannot drain) must not hold a connection slot, buffers and the
 * files of its queued sendfile slices (deleted segments) forever. */
static void idle_tick(struct br_net *n)
{
    if (n->idle_ms <= 0) {
        return;
    }
    while (n->lru_head != NULL && n->now_ms - n->lru_head->last_active_ms >= n->idle_ms) {
        struct br_conn *c = n->lru_head;
        br_debug("closing %s: idle for %" PRId64 " ms (connections.max.idle.ms %" PRId64 ")%s",
                 c->peer, n->now_ms - c->last_active_ms, n->idle_ms,
                 c->slots != NULL ? " with responses unsent" : "");
        n->idle_closed++;
        conn_kill(c);
    }
}

static void net_tick(struct br_net *n)
{
    accept_resume_tick(n);
    refusal_tick(n);
    idle_tick(n);
}

static int64_t net_next_deadline(const struct br_net *n)
{
    int64_t d = INT64_MAX;
    if (n->accept_paused && n->accept_resume_ms < d) {
        d = n->accept_resume_ms;
    }
    if (n->refusal_log_ms != 0 && n->refusal_log_ms < d) {
        d = n->refusal_log_ms;
    }
    if (n->idle_ms > 0 && n->lru_head != NULL) {
        int64_t last = n->lru_head->last_active_ms;
        int64_t at = last <= INT64_MAX - n->idle_ms ? last + n->idle_ms : INT64_MAX;
        d = at < d ? at : d;
    }
    return d;
}

static void fire_timers(struct br_net *n)
{
    int64_t now = br_now_mono_ms();
    n->now_ms = now;
    while (n->timers != NULL && n->timers->deadline_ms <= now) {
        struct br_timer *t = n->timers;
        br_timer_cancel(n, t);
        t->ops->fire(n->ctx, t);
    }
    net_tick(n);
}

void br_task_init(struct br_task *t, const struct br_task_ops *ops, void *owner)
{
    t->ops = ops;
    t->owner = owner;
    t->next = NULL;
    t->posted = false;
}

void br_task_post(struct br_net *n, struct br_task *t)
{
    if (t->posted) {
        return;
    }
    t->posted = true;
    t->next = NULL;
    if (n->tasks_tail != NULL) {
        n->tasks_tail->next = t;
    } else {
        n->tasks = t;
    }
    n->tasks_tail = t;
}

void br_task_cancel(struct br_net *n, struct br_task *t)
{
    if (!t->posted) {
        return;
    }
    struct br_task *prev = NULL;
    for (struct br_task *each = n->tasks; each != NULL; prev = each, each = each->next) {
        if (each != t) {
            continue;
        }
        if (prev != NULL) {
            prev->next = t->next;
        } else {
            n->tasks = t->next;
        }
        if (n->tasks_tail == t) {
            n->tasks_tail = prev;
        }
        if (n->run_last == t) {
            n->run_last = prev;
        }
        break;
    }
    t->next = NULL;
    t->posted = false;
}

/* Runs the tasks posted so far; those they post wait for the next turn.
 * The ones to run are a prefix of the queue, up to run_last: a task that
 * runs may post (behind it) or cancel (br_task_cancel keeps run_last on the
 * prefix) any other. */
static void run_tasks(struct br_net *n)
{
    n->run_last = n->tasks_tail;
    while (n->run_last != NULL) {
        struct br_task *t = n->tasks;
        if (t == NULL) {
            break; /* not reached: run_last is on the queue */
        }
        if (t == n->run_last) {
            n->run_last = NULL;
        }
        n->tasks = t->next;
        if (n->tasks == NULL) {
            n->tasks_tail = NULL;
        }
        t->next = NULL;
        t->posted = false;
        t->ops->run(n->ctx, t);
    }
}

static int loop_timeout(const struct br_net *n)
{
    if (n->tasks != NULL) {
        return 0;
    }
    int64_t next = net_next_deadline(n);
    if (n->timers != NULL && n->timers->deadline_ms < next) {
        next = n->timers->deadline_ms;
    }
    if (next == INT64_MAX) {
        return 1000;
    }
    int64_t d = next - br_now_mono_ms();
    if (d < 0) {
        return 0;
    }
    return d > 1000 ? 1000 : (int)d;
}

static void handle_event(struct br_net *n, struct epoll_event *ev)
{
    struct br_watch *w = ev->data.ptr;
    switch (w->kind) {
    case BR_WATCH_LISTENER:
        conn_accept(n, (struct listener *)(void *)w);
        break;
    case BR_WATCH_CONN: {
        struct br_conn *c = (struct br_conn *)(void *)w;
        if (c->dead) {
            break;
        }
        if (c->connecting) {
            conn_connect_done(c);
            break;
        }
        if ((ev->events & (EPOLLERR | EPOLLHUP)) != 0 && (ev->events & EPOLLIN) == 0) {
            conn_kill(c);
            break;
        }
        if ((ev->events & EPOLLOUT) != 0) {
            conn_flush(c);
        }
        if ((ev->events & EPOLLIN) != 0) {
            conn_readable(c);
        }
        break;
    }
    case BR_WATCH_SIGNAL: {
        struct signalfd_siginfo si;
        while (read(w->fd, &si, sizeof si) == (ssize_t)sizeof si) {
            const char *name = si.ssi_signo == SIGHUP   ? "SIGHUP"
                               : si.ssi_signo == SIGINT ? "SIGINT"
                                                        : "SIGTERM";
            if (n->stop_signalled || n->ops->stop_requested == NULL) {
                br_info("signal %u (%s) received: stopping", si.ssi_signo, name);
                n->stopping = true;
            } else {
                br_info("signal %u (%s) received: stopping (another one stops at once)",
                        si.ssi_signo, name);
                n->stop_signalled = true;
                n->stopping = n->ops->stop_requested(n->ctx);
            }
        }
        break;
    }
    case BR_WATCH_USER:
        w->ops->ready(n->ctx, w);
        break;
    }
}

void br_net_stop(struct br_net *n)
{
    n->stopping = true;
}

int br_net_run(struct br_net *n)
{
    struct epoll_event evs[MAX_EVENTS];
    while (!n->stopping) {
        int cnt = epoll_wait(n->epfd, evs, MAX_EVENTS, loop_timeout(n));
        if (cnt < 0 && errno != EINTR) {
            br_error("epoll_wait: %s", strerror(errno));
            return -1;
        }
        n->now_ms = br_now_mono_ms();
        for (int i = 0; i < cnt; i++) {
            handle_event(n, &evs[i]);
        }
        fire_timers(n);
        run_tasks(n);
        bury(n);
    }
    return 0;
}

void br_net_drain(struct br_net *n, int64_t max_wait_ms)
{
    /* stop accepting */
    for (size_t i = 0; i < n->nlisteners; i++) {
        (void)epoll_ctl(n->epfd, EPOLL_CTL_DEL, n->listeners[i].watch.fd, NULL);
        close(n->listeners[i].watch.fd);
        n->listeners[i].watch.fd = -1;
    }
    n->nlisteners = 0;
    /* answer parked requests now and send what is queued */
    n->ops->drain(n->ctx);
    struct br_conn *each = n->conns;
    while (each != NULL) {
        /* conn_flush may kill it (it then moves to the graveyard) */
        struct br_conn *next = each->next;
        each->closing = true;
        conn_flush(each);
        each = next;
    }
    bury(n);
    int64_t deadline = br_now_mono_ms() + max_wait_ms;
    struct epoll_event evs[MAX_EVENTS];
    while (n->conns != NULL && br_now_mono_ms() < deadline) {
        int cnt = epoll_wait(n->epfd, evs, MAX_EVENTS, 100);
        for (int i = 0; i < cnt; i++) {
            struct br_watch *w = evs[i].data.ptr;
            if (w->kind == BR_WATCH_CONN) {
                struct br_conn *c = (struct br_conn *)(void *)w;
                if (!c->dead) {
                    conn_flush(c);
                }
            }
        }
        bury(n);
    }
    while (n->conns != NULL) {
        conn_kill(n->conns);
    }
    bury(n);
}

void br_net_free(struct br_net *n)
{
    if (n == NULL) {
        return;
    }
    while (n->conns != NULL) {
        conn_kill(n->conns);
    }
    bury(n);
    for (size_t i = 0; i < n->nlisteners; i++) {
        close(n->listeners[i].watch.fd);
    }
    if (n->sig.fd >= 0) {
        close(n->sig.fd);
    }
    if (n->spare_fd >= 0) {
        close(n->spare_fd);
    }
    close(n->epfd);
    kp_free(n->scratch);
    kp_free(n);
}

/* ---------------------------------------------------------------- local */

struct br_conn *br_conn_local_new(struct br_net *n, const char *peer)
{
    struct br_conn *c = kp_calloc(1, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    c->watch.kind = BR_WATCH_CONN;
    c->watch.fd = -1;
    c->net = n;
    c->local = true;
    (void)snprintf(c->peer, sizeof c->peer, "%s", peer);
    return c;
}

int br_conn_local_feed(struct br_conn *c, const uint8_t *p, size_t len)
{
    if (c->dead || c->closing) {
        return -1;
    }
    if (len == 0) {
        return 0;
    }
    if (len > SIZE_MAX - c->in_len) {
        return -1;
    }
    if ((c->in == NULL || c->in_cap - c->in_len < len) && in_resize(c, c->in_len + len) != 0) {
        return -1;
    }
    memcpy(c->in + c->in_len, p, len);
    c->in_len += len;
    in_account(c);
    if (!c->processing) {
        conn_process(c);
    }
    return 0;
}

const uint8_t *br_conn_local_output(const struct br_conn *c, size_t *len)
{
    *len = c->out_len;
    return c->out;
}

void br_conn_local_consume(struct br_conn *c, size_t n)
{
    if (n >= c->out_len) {
        c->out_len = 0;
        return;
    }
    memmove(c->out, c->out + n, c->out_len - n);
    c->out_len -= n;
}

bool br_conn_local_closed(const struct br_conn *c)
{
    return c->dead || c->closing;
}

void br_conn_local_free(struct br_conn *c)
{
    if (c == NULL) {
        return;
    }
    conn_kill(c);
    conn_destroy(c);
}

void br_net_poll(struct br_net *n)
{
    struct epoll_event evs[MAX_EVENTS];
    int cnt = epoll_wait(n->epfd, evs, MAX_EVENTS, 0);
    n->now_ms = br_now_mono_ms();
    for (int i = 0; i < cnt; i++) {
        handle_event(n, &evs[i]);
    }
    fire_timers(n);
    run_tasks(n);
    bury(n);
}
