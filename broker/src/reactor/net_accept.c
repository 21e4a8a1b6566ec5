/* samsa-broker: the listeners' accepts: batches, refusals counted and
 * logged, the pause when descriptors run out (see net.h). */
#define _GNU_SOURCE

#include "reactor/net_internal.h"

#include "base/logging.h"

#include <samsa-protocol/header.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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
void net_refusal_tick(struct br_net *n)
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

void net_accept_resume_tick(struct br_net *n)
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


void net_conn_accept(struct br_net *n, struct listener *l)
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
        c->listener = (int)(l - n->listeners);
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
        net_ip_key(&ss, c->ip);
        if (!net_ip_admit(n, c, host)) {
            close(fd);
            kp_free(c);
            continue;
        }
        if (l->tls != NULL && net_tls_accept(c, l->tls, &net_tls_pending_task) != 0) {
            br_error("out of memory for the TLS of %s", c->peer);
            net_tls_close(c);
            net_ip_release(c);
            close(fd);
            kp_free(c);
            continue;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->watch};
        if (epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            net_tls_close(c);
            net_ip_release(c);
            close(fd);
            kp_free(c);
            continue;
        }
        net_conn_link(n, c);
        net_auth_accept(c, l);
        n->nconns++;
        n->accepted++;
        c->last_active_ms = n->now_ms;
        net_lru_append(c);
        br_debug("connection from %s", c->peer);
    }
}
