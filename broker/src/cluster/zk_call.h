/*
 * samsa-broker: what a ZooKeeper request's tag carries (zk.h): the call
 * that made it. Every request of the broker's session is made with
 * br_zk_call_tag(call), and the session's owner hands each answer to
 * call->done on the reactor thread. A call is the first member of its
 * maker's struct (container by cast) and lives until its answer, or until
 * the session is closed at stop (no answer comes after br_zk_close).
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_CLUSTER_ZK_CALL_H
#define SAMSA_BROKER_CLUSTER_ZK_CALL_H

#include <stdint.h>

#include "cluster/zk.h"

struct br_zk_call {
    void (*done)(struct br_zk_call *call, const struct br_zk_result *r);
};

static inline uint64_t br_zk_call_tag(struct br_zk_call *call)
{
    return (uint64_t)(uintptr_t)call;
}

/* The answer of a request made with br_zk_call_tag: to its call. */
static inline void br_zk_call_done(uint64_t tag, const struct br_zk_result *r)
{
    struct br_zk_call *call = (struct br_zk_call *)(uintptr_t)tag;
    if (call != NULL) {
        call->done(call, r);
    }
}

#endif
