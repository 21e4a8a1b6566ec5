/*
 * samsa-broker: replication on a broker of a cluster (Kafka's
 * ReplicaManager, its fetcher threads and DelayedProduce):
 *
 * - leadership from LeaderAndIsr (br_replication_become): a leader tracks
 *   its followers, a follower is fetched for;
 * - follower fetchers: one outbound connection per leader broker on the
 *   reactor, Fetch v8 with this broker's id as ReplicaId from each
 *   partition's log end, the leader's batches appended verbatim (offsets
 *   and leader epochs kept, so replica logs are byte-identical), the high
 *   watermark taken as min(own log end, the leader's), the leader's log
 *   start followed; a failed connection is retried after
 *   replica.fetch.backoff.ms;
 * - on the leader, each follower fetch records the follower's log end and
 *   last caught-up time (br_replication_follower_fetch), a follower that
 *   reached the high watermark joins the ISR, and one not caught up for
 *   replica.lag.time.max.ms leaves it (br_replication_tick); ISR changes are
 *   written to the partition's state znode conditionally on its version
 *   (a version that moved drops the change, as Kafka 2.0 does) and
 *   announced to the controller through /isr_change_notification;
 * - acks=all (br_replication_park_produce): a Produce whose records are
 *   above the high watermark waits until the high watermark passes them
 *   (NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
 *   min.insync.replicas), the partition is led elsewhere
 *   (NOT_LEADER_OR_FOLLOWER) or its timeout passes (REQUEST_TIMED_OUT).
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_REPLICATION_H
#define SAMSA_BROKER_SERVER_REPLICATION_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "replica/delayed_produce.h"
#include "server/request.h"

struct br_replication;

KP_MUST_CHECK int br_replication_start(struct br_server *b);
/* Closes the fetchers and frees what is in flight (after the ZooKeeper
 * session closed: no answer comes any more). NULL-safe. */
void br_replication_stop(struct br_server *b);

/* Where a follower fetches from: the leader's endpoint as the LeaderAndIsr
 * named it among its live leaders (host not NUL-terminated), or none. */
struct br_leader_endpoint {
    const char *host; /* NULL: the request named none */
    size_t host_len;
    int32_t port;
};

/* A LeaderAndIsr for p (hosted here): leader or follower in its epoch. A
 * follower fetches from at: the request's live leader (Kafka 2.0's
 * ReplicaManager.makeFollowers takes the leader from it), else where this
 * broker's metadata cache says the leader is. Returns 0 or a Kafka error
 * code. */
int16_t br_replication_become(struct br_server *b, struct br_partition *p,
                              const struct br_leadership *s, const struct br_leader_endpoint *at);

/* This broker's ZooKeeper session is gone: the controller gives its
 * leaderships to others. With expired, every partition it leads is fenced;
 * without (ZooKeeper unreachable for zookeeper.session.timeout.ms: either
 * this broker is cut off, and ZooKeeper has expired its session, or
 * ZooKeeper itself is down, and no session expires), only those whose
 * in-sync followers have all stopped fetching for as long (cut off from
 * them too): while ZooKeeper is down and the followers fetch, leaders lead
 * on, as in Kafka; a partition without in-sync followers waits for the
 * expiry. A fenced
 * partition: Produce, Fetch, ListOffsets and
 * OffsetsForLeaderEpoch answer NOT_LEADER_OR_FOLLOWER, Metadata names no
 * leader for it, and appends waiting for the ISR are answered
 * NOT_LEADER_OR_FOLLOWER (the producer retries on the new leader), until
 * LeaderAndIsr says what the partition is. Kafka 2.0 lets such a leader
 * serve on until the controller reaches it: a client that asks it for
 * metadata then goes back to it, and an idempotent producer whose later
 * sequence numbers went to the new leader gets OUT_OF_ORDER_SEQUENCE_NUMBER
 * from it (fatal in librdkafka). Returns how many were fenced. */
size_t br_replication_fence(struct br_server *b, bool expired, int64_t now_ms);

/* The session never expired (it came back within its timeout): the fenced
 * partitions lead again. Returns how many. */
size_t br_replication_unfence(struct br_server *b);

/* The session is connected again: ISR writes whose outcome was unknown
 * (their reply lost with the connection) are sent again now. */
void br_replication_zk_connected(struct br_server *b);

/* This broker is shutting down (a controlled shutdown began): every
 * fetcher stops, and br_replication_become no longer starts one. A
 * replica that goes on fetching while the controller takes it out of the
 * ISRs, or that the controller makes a follower of a partition it led,
 * is caught up and joins the ISR again, and then acks=all waits for a
 * broker that is gone until replica.lag.time.max.ms takes it out. (Kafka
 * 2.0 stops the follower with StopReplica "first", racing the ISR change:
 * KafkaController.doControlledShutdown.) Returns how many partitions were
 * being fetched. */
size_t br_replication_stop_fetching(struct br_server *b);

/* p no longer replicates here (StopReplica): its fetching stops. */
void br_replication_forget(struct br_server *b, struct br_partition *p);

/* The leader's side of a follower's Fetch of p at fetch_offset. */
void br_replication_follower_fetch(struct br_server *b, struct br_partition *p, int32_t replica,
                                   int64_t fetch_offset);

/* Housekeeping: followers out of sync leave the ISR; ISR changes are
 * announced. */
void br_replication_tick(struct br_server *b, int64_t now_ms);

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
KP_MUST_CHECK int br_replication_park_produce(struct br_req *r,
                                              const struct kp_ProduceResponse *resp,
                                              const struct br_produce_wait *waits, size_t n,
                                              int32_t timeout_ms);

/* What an append waiting for the ISR answers once settled or expired
 * (br_partition_append_outcome with its topic's min.insync.replicas). */
int16_t br_replication_append_outcome(const struct br_append_wait *w);

/* A request waiting for an append this broker made as leader (the group
 * coordinator's commit, Kafka's offsets.commit.required.acks = -1) to
 * reach the ISR: its owner embeds this, fills done and cancelled, and
 * parks it with br_replication_park_hw. done answers and frees it with 0,
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
bool br_replication_park_hw(struct br_req *r, struct br_hw_wait *w, struct br_partition *p,
                            int64_t required, int32_t timeout_ms);

#endif
