/*
 * samsa-broker: the purgatory, where requests wait (Kafka's
 * DelayedOperationPurgatory): a delayed operation is parked with a deadline
 * and the keys it waits on (a partition, a group), and leaves it once, in
 * one of three ways:
 *
 *   - completed: one of its keys was woken (br_purgatory_wake) and its
 *     ops->ready, asked at the end of that loop turn, said it can complete
 *     (a Fetch that now has MinBytes); ops->complete(expired = false);
 *   - expired: its deadline passed, or its user forced it now
 *     (br_purgatory_complete_key, br_purgatory_complete_all);
 *     ops->complete(expired = true) answers with what there is;
 *   - cancelled (br_purgatory_cancel): its connection died; no callback.
 *
 * Waking never completes anything inside the call: the woken operations are
 * queued and asked from a reactor task at the end of the turn, so an append
 * that wakes fetches returns before any of them runs, and an operation is
 * asked once per turn however many times its keys were woken. ops->ready
 * learns which of its keys were woken since it was last asked
 * (br_delayed_woken), so it updates what it knows of those alone instead of
 * redoing the whole request (a Fetch parked on many partitions, woken by an
 * append to one).
 *
 * Keys are intrusive: a struct br_delay_key in the object waited on, and one
 * struct br_delay_link per key in the operation (storage its user gives), so
 * parking, waking and leaving never allocate and cannot fail.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REACTOR_PURGATORY_H
#define SAMSA_BROKER_REACTOR_PURGATORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reactor/net.h"

struct br_delayed;
struct br_delay_link;

/* What operations wait on; embedded in the object (zeroed = no waiter). */
struct br_delay_key {
    struct br_delay_link *first;
};

/* One key an operation waits on (the operation's storage). */
struct br_delay_link {
    struct br_delay_key *key;
    struct br_delayed *op;
    struct br_delay_link *prev;
    struct br_delay_link *next;
    bool woken; /* woken since ops->ready was last asked */
};

struct br_delayed_ops {
    const char *name; /* for logs */
    /* Some of its keys were woken this turn: can it complete now? It is
     * still parked during the call and must not leave the purgatory from
     * it; true makes the purgatory complete it at once. */
    bool (*ready)(void *ctx, struct br_delayed *d);
    /* It has left the purgatory (no key, no deadline): answer now and free
     * it if it is the owner's to free. expired: the deadline passed or the
     * completion was forced, so it answers with what there is. */
    void (*complete)(void *ctx, struct br_delayed *d, bool expired);
};

struct br_purgatory;

struct br_delayed {
    const struct br_delayed_ops *ops;
    void *owner;
    struct br_purgatory *pg;
    struct br_timer timer;
    struct br_delay_link *links;
    size_t nlinks;
    struct br_delayed *prev; /* every parked operation */
    struct br_delayed *next;
    struct br_delayed *qprev; /* the woken ones, to ask at the end of the turn */
    struct br_delayed *qnext;
    bool queued;
    bool parked;
};

struct br_purgatory {
    struct br_net *net;
    void *ctx; /* the ops' first argument */
    struct br_delayed *all;
    size_t count;
    struct br_delayed *woken; /* a queue: first in, first asked */
    struct br_delayed *woken_tail;
    struct br_delayed *ask_last; /* while asking: the last one of this turn */
    struct br_task task;
};

/* ctx is passed to every operation's ops. */
void br_purgatory_init(struct br_purgatory *pg, struct br_net *net, void *ctx);
/* Every parked operation expires now (br_purgatory_complete_all). */
void br_purgatory_fini(struct br_purgatory *pg);

/* An operation with storage for nlinks keys (links[0..nlinks), which must
 * live as long as it is parked), not parked yet. */
void br_delayed_init(struct br_delayed *d, const struct br_delayed_ops *ops, void *owner,
                     struct br_delay_link *links, size_t nlinks);
/* Before br_purgatory_park: link i waits on key (each link once). */
void br_delayed_watch(struct br_delayed *d, size_t i, struct br_delay_key *key);
/* Woken since it was last asked; ops->ready reads it (cleared after). */
bool br_delayed_woken(const struct br_delayed *d, size_t i);

/* Parks d until deadline_ms (monotonic). Cannot fail. */
void br_purgatory_park(struct br_purgatory *pg, struct br_delayed *d, int64_t deadline_ms);
/* The operations waiting on key are asked at the end of this turn. */
void br_purgatory_wake(struct br_purgatory *pg, struct br_delay_key *key);
/* d alone is asked at the end of this turn, as if one of its keys had been
 * woken (its user knows it can complete: a group's answer is ready). */
void br_purgatory_wake_op(struct br_purgatory *pg, struct br_delayed *d);
/* Every operation waiting on key expires now, inside this call (the object
 * holding the key is about to move or go). */
void br_purgatory_complete_key(struct br_purgatory *pg, struct br_delay_key *key);
/* Every parked operation expires now (shutdown). */
void br_purgatory_complete_all(struct br_purgatory *pg);
/* d leaves without a callback (its connection died). A d not parked is a
 * no-op. */
void br_purgatory_cancel(struct br_purgatory *pg, struct br_delayed *d);
/* How many are parked. */
size_t br_purgatory_count(const struct br_purgatory *pg);
/* Some operation waits on key. */
bool br_delay_key_watched(const struct br_delay_key *key);

#endif
