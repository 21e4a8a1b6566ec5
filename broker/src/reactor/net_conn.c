/* samsa-broker: a connection's lifecycle (linked, touched, killed,
 * destroyed, the idle LRU), its epoll interest and its input accounting
 * (see net.h). */
#define _GNU_SOURCE

#include "reactor/net_internal.h"

#include "base/fileref.h"
#include "base/logging.h"

#include <samsa-protocol/header.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

void net_chunk_free(struct chunk *ch)
{
    if (ch->kind == CHUNK_MEM) {
        kp_free(ch->buf);
    } else {
        br_fileref_unref(ch->file);
    }
    kp_free(ch);
}

void net_slot_free(struct br_slot *s)
{
    struct chunk *ch = s->head;
    while (ch != NULL) {
        struct chunk *next = ch->next;
        net_chunk_free(ch);
        ch = next;
    }
    kp_free(s);
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

void net_lru_append(struct br_conn *c)
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
void net_conn_touch(struct br_conn *c)
{
    if (!c->in_lru) {
        return; /* local, or dead */
    }
    c->last_active_ms = c->net->now_ms;
    if (c->net->lru_tail != c) {
        lru_unlink(c);
        net_lru_append(c);
    }
}

void net_conn_kill(struct br_conn *c)
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
    net_mute_unlink(c);
    br_timer_cancel(c->net, &c->throttle_timer);
    for (size_t k = 0; k < IN_CLASSES; k++) {
        if (c->net->queue[k].finisher == c) {
            c->net->queue[k].finisher = NULL; /* bury() picks the next */
        }
    }
    net_tls_close(c);
    /* the SASL exchange's state goes (its timers with it), and the
     * authentication deadline */
    if (br_timer_armed(&c->auth_deadline)) {
        br_timer_cancel(c->net, &c->auth_deadline);
    }
    if (c->auth != NULL && c->auth_free != NULL) {
        c->auth_free(c->auth);
    }
    c->auth = NULL;
    c->auth_free = NULL;
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
        net_ip_release(c);
    }
    c->next = c->net->graveyard;
    c->prev = NULL;
    c->net->graveyard = c;
}

void net_conn_destroy(struct br_conn *c)
{
    struct br_slot *s = c->slots;
    while (s != NULL) {
        struct br_slot *next = s->next;
        net_slot_free(s);
        s = next;
    }
    /* freeing only now: a handler may still use its payload when a write
     * error kills the connection under it */
    net_in_free(c);
    kp_free(c->principal);
    kp_free(c->out);
    kp_free(c->tls_out);
    kp_free(c->pre_out);
    kp_free(c);
}

void net_conn_update_events(struct br_conn *c)
{
    if (c->dead || c->local) {
        return;
    }
    bool want_in =
        !c->closing && (c->outbound || c->nslots < MAX_QUEUED_SLOTS) && !c->muted &&
        (!c->connecting || c->tcp_done) && !c->held && !c->throttled;
    /* while an outbound one connects, only the connect or the SASL
     * client's frame is written: its user's frames wait */
    bool want_out = c->connecting ? !c->tcp_done || c->pre_out != NULL
                                  : c->slots != NULL && c->slots->ready;
    if (c->tls_handshaking) {
        /* the handshake's next step says which way it waits */
        want_in = !c->tls_wants_write;
        want_out = c->tls_wants_write;
    } else if (c->ssl != NULL && c->tls_wants_write) {
        want_out = true; /* a read must write first (net.c goes on reading) */
    }
    if (want_in == c->reading && want_out == c->want_out) {
        if (want_in) {
            net_tls_kick(c);
        }
        return;
    }
    struct epoll_event ev = {.events = (want_in ? EPOLLIN : 0u) | (want_out ? EPOLLOUT : 0u),
                             .data.ptr = &c->watch};
    if (epoll_ctl(c->net->epfd, EPOLL_CTL_MOD, c->watch.fd, &ev) != 0) {
        br_warn("epoll_ctl on %s: %s", c->peer, strerror(errno));
        net_conn_kill(c);
        return;
    }
    c->reading = want_in;
    c->want_out = want_out;
    if (want_in) {
        net_tls_kick(c);
    }
}

/* On the net's list of connections (socket ones: the local ones are their
 * owners'). */
void net_conn_link(struct br_net *n, struct br_conn *c)
{
    c->prev = NULL;
    c->next = n->conns;
    if (n->conns != NULL) {
        n->conns->prev = c;
    }
    n->conns = c;
}

/* Whether a frame of this size (as read from the wire) is big. A negative
 * one is not: it is refused as soon as its 4 bytes are in. */
bool net_frame_is_big(int32_t size)
{
    return size > (int32_t)(SMALL_FRAME - 4);
}

/* c's buffer counts among the big frames' while it starts with one; after
 * any change of c->in, in_len or in_cap. */
void net_in_account(struct br_conn *c)
{
    size_t big = c->in_len >= 4 && net_frame_is_big((int32_t)kp_load_be32(c->in)) ? c->in_cap : 0;
    c->net->big_bytes = c->net->big_bytes - c->in_big + big;
    c->in_big = big;
}

void net_in_free(struct br_conn *c)
{
    c->net->in_bytes -= c->in_cap;
    kp_free(c->in);
    c->in = NULL;
    c->in_len = 0;
    c->in_cap = 0;
    net_in_account(c);
}

void net_mute_unlink(struct br_conn *c)
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
