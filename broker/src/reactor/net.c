/* samsa-broker: the reactor (see net.h): its setup, loop, end-of-turn
 * tasks and in-process connections; connections, input and output in the
 * net_*.c files that net_internal.h lists. */
#define _GNU_SOURCE

#include "reactor/net.h"

#include "reactor/net_internal.h"

#include "base/logging.h"

#include <samsa-protocol/header.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>

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

void br_net_outbound_security(struct br_net *n, const struct br_outbound_security *sec)
{
    n->out_sec = *sec;
}

void br_net_listener_tls(struct br_net *n, size_t listener, struct br_tls_ctx *t)
{
    if (listener < n->nlisteners) {
        n->listeners[listener].tls = t;
    }
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
    *out = (struct br_net_counts){n->nconns,      n->accepted,         n->turned_away,
                                  n->refused_per_ip, n->idle_closed, n->in_bytes,
                                  n->big_bytes};
}

int br_net_bound_port(const struct br_net *n, size_t listener)
{
    return listener < n->nlisteners ? n->listeners[listener].port : -1;
}

/* ---------------------------------------------------------------- loop */

static void bury(struct br_net *n)
{
    bool any = n->graveyard != NULL;
    while (n->graveyard != NULL) {
        struct br_conn *c = n->graveyard;
        n->graveyard = c->next;
        net_conn_destroy(c);
    }
    if (any) {
        net_queue_update(n); /* their buffers are free, a finisher may be gone */
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
        net_conn_kill(c);
    }
}

static void net_tick(struct br_net *n)
{
    net_accept_resume_tick(n);
    net_refusal_tick(n);
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

/* The next step of c's TLS handshake (net_tls.c); once done, a request
 * that came with the last flight is read at once. */
static void handshake_step(struct br_conn *c)
{
    switch (net_tls_handshake(c)) {
    case NET_TLS_DONE:
        if (c->outbound) {
            net_conn_secured(c);
            break;
        }
        net_conn_touch(c);
        net_conn_update_events(c);
        net_conn_readable(c);
        break;
    case NET_TLS_AGAIN:
        net_conn_update_events(c);
        break;
    case NET_TLS_FAILED:
        net_conn_kill(c);
        break;
    }
}

static void handle_event(struct br_net *n, struct epoll_event *ev)
{
    struct br_watch *w = ev->data.ptr;
    switch (w->kind) {
    case BR_WATCH_LISTENER:
        net_conn_accept(n, (struct listener *)(void *)w);
        break;
    case BR_WATCH_CONN: {
        struct br_conn *c = (struct br_conn *)(void *)w;
        if (c->dead) {
            break;
        }
        if (c->connecting && !c->tcp_done) {
            net_conn_connect_done(c);
            break;
        }
        if ((ev->events & (EPOLLERR | EPOLLHUP)) != 0 && (ev->events & EPOLLIN) == 0) {
            net_conn_kill(c);
            break;
        }
        if (c->tls_handshaking) {
            handshake_step(c);
            break;
        }
        if (c->ssl != NULL && c->tls_wants_write && (ev->events & EPOLLOUT) != 0) {
            /* a read that needed to write first can go on */
            c->tls_wants_write = false;
            net_conn_readable(c);
            if (c->dead) {
                break;
            }
        }
        if ((ev->events & EPOLLOUT) != 0) {
            net_conn_flush(c);
        }
        if ((ev->events & EPOLLIN) != 0) {
            net_conn_readable(c);
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
        net_conn_flush(each);
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
                    net_conn_flush(c);
                }
            }
        }
        bury(n);
    }
    while (n->conns != NULL) {
        net_conn_kill(n->conns);
    }
    bury(n);
}

void br_net_free(struct br_net *n)
{
    if (n == NULL) {
        return;
    }
    while (n->conns != NULL) {
        net_conn_kill(n->conns);
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
    net_ip_limits_free(n);
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
    c->listener = -1;
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
    if ((c->in == NULL || c->in_cap - c->in_len < len) && net_in_resize(c, c->in_len + len) != 0) {
        return -1;
    }
    memcpy(c->in + c->in_len, p, len);
    c->in_len += len;
    net_in_account(c);
    if (!c->processing) {
        net_conn_process(c);
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
    net_conn_kill(c);
    net_conn_destroy(c);
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
