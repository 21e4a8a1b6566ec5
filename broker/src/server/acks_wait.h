/*
 * samsa-broker: requests that wait for the ISR (Kafka's DelayedProduce as
 * a request sees it), on replica/delayed_produce.h:
 *
 * - acks=all (br_acks_park_produce): a Produce whose records are above the
 *   high watermark waits until the high watermark passes them (NONE, or
 *   NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
 *   min.insync.replicas), the partition is led elsewhere
 *   (NOT_LEADER_OR_FOLLOWER) or its timeout passes (REQUEST_TIMED_OUT);
 * - an append of this broker's own (the group coordinator's commit) waited
 *   for by its request (br_acks_park_hw).
 *
 * Standalone, a cluster of one, the high watermark is the log end at once
 * and nothing waits.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_ACKS_WAIT_H
#define SAMSA_BROKER_SERVER_ACKS_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "replica/delayed_produce.h"
#include "server/request.h"

/* acks=all: parks the request's answer resp (its arrays in r's arena)
 * until the high watermark of every partition in waits passes its
 * required offset. Returns 0 when parked (answered later), 1 when nothing
 * needs to wait (answer now), or KP_E_NOMEM. */
struct br_produce_wait {
    struct br_partition *p;
    int64_t required; /* the offset after the records appended */
    int32_t topic;    /* indexes into resp */
    int32_t part;
};
KP_MUST_CHECK int br_acks_park_produce(struct br_req *r, const struct kp_ProduceResponse *resp,
                                       const struct br_produce_wait *waits, size_t n,
                                       int32_t timeout_ms);

/* What an append waiting for the ISR answers once settled or expired
 * (br_partition_append_outcome with its topic's min.insync.replicas). */
int16_t br_acks_outcome(const struct br_append_wait *w);

/* A request waiting for an append this broker made as leader (the group
 * coordinator's commit, Kafka's offsets.commit.required.acks = -1) to
 * reach the ISR: its owner embeds this, fills done and cancelled, and
 * parks it with br_acks_park_hw. done answers and frees it with 0,
 * NOT_LEADER_OR_FOLLOWER (led elsewhere now), NOT_ENOUGH_REPLICAS_AFTER_APPEND
 * (replicated by fewer than min.insync.replicas) or REQUEST_TIMED_OUT;
 * cancelled frees it when its connection died. */
struct br_hw_wait {
    struct br_park park; /* first: its ops (request.h) */
    struct br_delayed_produce dp;
    struct br_append_wait wait; /* p, required, p->leader_term when parked */
    struct br_delay_link link;
    void (*done)(struct br_hw_wait *w, int16_t err);
    void (*cancelled)(struct br_hw_wait *w);
};
/* Parks w until p's high watermark reaches required (or timeout_ms pass).
 * false: nothing to wait for (already there, not the leader, no answer
 * wanted, or the broker stops): the caller answers now. */
bool br_acks_park_hw(struct br_req *r, struct br_hw_wait *w, struct br_partition *p,
                     int64_t required, int32_t timeout_ms);

#endif
