/*
 * The client core of a handle: created for a kind (struct sc_kind_ops) with
 * a private copy of the configuration, its I/O thread (poll(2) on the
 * connections and the wake eventfd), one turn of the loop (timers,
 * connections, metadata, ops, the kind's own work) and the teardown.
 *
 * @locality: sc_client_create/destroy run on user threads;
 * the loop on the I/O thread with c->lock held.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"

#define ARENA_MAX ((size_t)256 * 1024 * 1024)
#define MAX_POLL_FDS 256

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
    next = sc_min64(next, sc_conn_timeouts(c, now));
    next = sc_min64(next, sc_metadata_serve(c, now));
    next = sc_min64(next, sc_ops_serve(c, now));
    next = sc_min64(next, sc_stats_serve(c, now));
    if (c->kind_ops->serve != NULL) {
        next = sc_min64(next, c->kind_ops->serve(c, now));
    }
    /* The serve calls may have wanted new connections or metadata: start
     * them now rather than at the next wake. */
    int64_t real = sc_now_ms();
    int64_t later = real > now ? real : now; /* a harness may run ahead of the clock */
    next = sc_min64(next, sc_conn_timeouts(c, later));
    next = sc_min64(next, sc_metadata_serve(c, later));
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
                sc_conn_write(c, conn);
                if (conn->fd < 0) {
                    continue;
                }
            }
            if (sc_tls_pending(conn)) {
                /* OpenSSL holds bytes it read already: poll(2) will not
                 * announce them, so they are taken now */
                sc_conn_ready(c, conn, POLLIN);
                if (conn->fd < 0) {
                    continue;
                }
            }
            pfds[nfds].fd = conn->fd;
            pfds[nfds].events = sc_conn_events(conn);
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
            sc_conn_ready(c, conn, pfds[i].revents);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
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
    if (err == SAMSA_OK) {
        err = sc_tls_ctx_new(c, errstr, errstr_size);
    }
    if (SC_SEC_USES_SASL(c->v->security_protocol) && !detached) {
        c->authenticate = sc_sasl_start;
    }
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
        if (sc_conn_new(c, -2 - i, hosts[i], ports[i]) == NULL) {
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
        sc_conn_free(c->conns);
        c->conns = next;
    }
    kp_arena_free(&c->arena);
    sc_tls_ctx_free(c);
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
        sc_conn_fail_requests(c, conn, SAMSA_ERR_DESTROYED);
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
        sc_err_ev_free(ev);
    }
    pthread_mutex_unlock(&c->lock);
    while (c->conns != NULL) {
        struct sc_conn *next = c->conns->next;
        sc_conn_free(c->conns);
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
    sc_tls_ctx_free(c);
    samsa_conf_destroy(c->conf);
    kp_free(c);
}
