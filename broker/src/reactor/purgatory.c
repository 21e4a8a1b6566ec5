/*
 * samsa-broker: the purgatory (see purgatory.h).
 *
 * Every parked operation is on one list (pg->all, for shutdown), each of
 * its links on its key's list, and its deadline in the reactor's timer
 * heap. Waking puts the operation on the woken queue once and posts the
 * purgatory's task; the task asks the operations queued before it began,
 * in order, so an operation woken while the task runs (by a completion) is
 * asked in the next turn.
 */
#include "reactor/purgatory.h"

#include <stddef.h>

static void queue_remove(struct br_purgatory *pg, struct br_delayed *d)
{
    if (!d->queued) {
        return;
    }
    if (pg->ask_last == d) {
        pg->ask_last = d->qprev; /* NULL: d was the last of the turn's prefix */
    }
    if (d->qprev != NULL) {
        d->qprev->qnext = d->qnext;
    } else {
        pg->woken = d->qnext;
    }
    if (d->qnext != NULL) {
        d->qnext->qprev = d->qprev;
    } else {
        pg->woken_tail = d->qprev;
    }
    d->qprev = d->qnext = NULL;
    d->queued = false;
}

/* Takes d out of everything: keys, queue, timer, the parked list. */
static void unpark(struct br_purgatory *pg, struct br_delayed *d)
{
    for (size_t i = 0; i < d->nlinks; i++) {
        struct br_delay_link *l = &d->links[i];
        if (l->key == NULL) {
            continue;
        }
        if (l->prev != NULL) {
            l->prev->next = l->next;
        } else {
            l->key->first = l->next;
        }
        if (l->next != NULL) {
            l->next->prev = l->prev;
        }
        l->prev = l->next = NULL;
        l->woken = false;
    }
    queue_remove(pg, d);
    br_timer_cancel(pg->net, &d->timer);
    if (d->prev != NULL) {
        d->prev->next = d->next;
    } else {
        pg->all = d->next;
    }
    if (d->next != NULL) {
        d->next->prev = d->prev;
    }
    d->prev = d->next = NULL;
    d->parked = false;
    pg->count--;
}

static void finish(struct br_purgatory *pg, struct br_delayed *d, bool expired)
{
    unpark(pg, d);
    d->ops->complete(pg->ctx, d, expired);
}

static void on_deadline(void *ctx, struct br_timer *t)
{
    (void)ctx;
    struct br_delayed *d = t->owner;
    finish(d->pg, d, true);
}

static const struct br_timer_ops deadline_ops = {
    .name = "delayed operation",
    .fire = on_deadline,
};

static void ask_woken(void *ctx, struct br_task *t)
{
    (void)ctx;
    struct br_purgatory *pg = t->owner;
    pg->ask_last = pg->woken_tail;
    while (pg->ask_last != NULL) {
        struct br_delayed *d = pg->woken;
        if (d == NULL) {
            break; /* not reached: ask_last is on the queue */
        }
        if (d == pg->ask_last) {
            pg->ask_last = NULL;
        }
        queue_remove(pg, d);
        bool ready = d->ops->ready(pg->ctx, d);
        for (size_t i = 0; i < d->nlinks; i++) {
            d->links[i].woken = false;
        }
        if (ready) {
            finish(pg, d, false);
        }
    }
}

static const struct br_task_ops ask_ops = {
    .name = "woken delayed operations",
    .run = ask_woken,
};

void br_purgatory_init(struct br_purgatory *pg, struct br_net *net, void *ctx)
{
    *pg = (struct br_purgatory){.net = net, .ctx = ctx};
    br_task_init(&pg->task, &ask_ops, pg);
}

void br_purgatory_fini(struct br_purgatory *pg)
{
    br_purgatory_complete_all(pg);
    br_task_cancel(pg->net, &pg->task);
}

void br_delayed_init(struct br_delayed *d, const struct br_delayed_ops *ops, void *owner,
                     struct br_delay_link *links, size_t nlinks)
{
    *d = (struct br_delayed){.ops = ops, .owner = owner, .links = links, .nlinks = nlinks};
    br_timer_init(&d->timer, &deadline_ops, d);
    for (size_t i = 0; i < nlinks; i++) {
        links[i] = (struct br_delay_link){.op = d};
    }
}

void br_delayed_watch(struct br_delayed *d, size_t i, struct br_delay_key *key)
{
    d->links[i].key = key;
}

bool br_delayed_woken(const struct br_delayed *d, size_t i)
{
    return d->links[i].woken;
}

void br_purgatory_park(struct br_purgatory *pg, struct br_delayed *d, int64_t deadline_ms)
{
    d->pg = pg;
    d->parked = true;
    d->prev = NULL;
    d->next = pg->all;
    if (pg->all != NULL) {
        pg->all->prev = d;
    }
    pg->all = d;
    pg->count++;
    for (size_t i = 0; i < d->nlinks; i++) {
        struct br_delay_link *l = &d->links[i];
        if (l->key == NULL) {
            continue;
        }
        l->woken = false;
        l->prev = NULL;
        l->next = l->key->first;
        if (l->next != NULL) {
            l->next->prev = l;
        }
        l->key->first = l;
    }
    br_timer_arm(pg->net, &d->timer, deadline_ms);
}

static void enqueue(struct br_purgatory *pg, struct br_delayed *d)
{
    if (d->queued) {
        return;
    }
    d->queued = true;
    d->qnext = NULL;
    d->qprev = pg->woken_tail;
    if (pg->woken_tail != NULL) {
        pg->woken_tail->qnext = d;
    } else {
        pg->woken = d;
    }
    pg->woken_tail = d;
}

void br_purgatory_wake(struct br_purgatory *pg, struct br_delay_key *key)
{
    for (struct br_delay_link *l = key->first; l != NULL; l = l->next) {
        l->woken = true;
        enqueue(pg, l->op);
    }
    if (pg->woken != NULL) {
        br_task_post(pg->net, &pg->task);
    }
}

void br_purgatory_wake_op(struct br_purgatory *pg, struct br_delayed *d)
{
    if (!d->parked) {
        return;
    }
    enqueue(pg, d);
    br_task_post(pg->net, &pg->task);
}

void br_purgatory_complete_key(struct br_purgatory *pg, struct br_delay_key *key)
{
    while (key->first != NULL) {
        finish(pg, key->first->op, true);
    }
}

void br_purgatory_complete_all(struct br_purgatory *pg)
{
    while (pg->all != NULL) {
        finish(pg, pg->all, true);
    }
}

void br_purgatory_cancel(struct br_purgatory *pg, struct br_delayed *d)
{
    if (d->parked) {
        unpark(pg, d);
    }
}

size_t br_purgatory_count(const struct br_purgatory *pg)
{
    return pg->count;
}

bool br_delay_key_watched(const struct br_delay_key *key)
{
    return key->first != NULL;
}
