/*
 * samsa-broker: replication on a broker of a cluster (Kafka's
 * ReplicaManager's replication half and its ReplicaFetcherThreads):
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
 *   announced to the controller through /isr_change_notification.
 *
 * It knows its owner only through struct br_replication_env: the hosted
 * partitions (replica_manager.h), the reactor, the ZooKeeper session, the
 * metadata cache, the purgatory and the config. Every call takes a NULL
 * replication (a standalone broker has none) and does nothing then.
 * acks=all's wait is the request layer's (server/acks_wait.h) on
 * replica/delayed_produce.h.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REPLICA_REPLICATION_H
#define SAMSA_BROKER_REPLICA_REPLICATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "cluster/metadata_cache.h"
#include "cluster/zk.h"
#include "config/config.h"
#include "reactor/net.h"
#include "reactor/purgatory.h"
#include "replica/partition.h"
#include "replica/replica_manager.h"

struct br_replication;

/* What replication uses of its owner (each outlives it). */
struct br_replication_env {
    const struct br_config *cfg;
    struct br_net *net;
    int32_t node_id;
    struct br_replica_manager *rm;
    const struct br_metadata_cache *mc;
    struct br_purgatory *purgatory;
    struct br_zk *zk; /* NULL until the session is open (br_replication_set_zk) */
};

/* *out: replication over env (copied). 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_replication_start(const struct br_replication_env *env,
                                       struct br_replication **out);
/* The broker's ZooKeeper session, once open (NULL: closed). */
void br_replication_set_zk(struct br_replication *rep, struct br_zk *zk);
/* Closes the fetchers and frees what is in flight (after the ZooKeeper
 * session closed: no answer comes any more). NULL-safe. */
void br_replication_stop(struct br_replication *rep);
/* The ISR shrinks and expands this broker made as leader, for the admin
 * API (0 and 0 without replication). */
void br_replication_isr_counts(const struct br_replication *rep, int64_t *shrinks,
                               int64_t *expands);

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
int16_t br_replication_become(struct br_replication *rep, struct br_partition *p,
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
size_t br_replication_fence(struct br_replication *rep, bool expired, int64_t now_ms);

/* The session never expired (it came back within its timeout): the fenced
 * partitions lead again. Returns how many. */
size_t br_replication_unfence(struct br_replication *rep);

/* The session is connected again: ISR writes whose outcome was unknown
 * (their reply lost with the connection) are sent again now. */
void br_replication_zk_connected(struct br_replication *rep);

/* This broker is shutting down (a controlled shutdown began): every
 * fetcher stops, and br_replication_become no longer starts one. A
 * replica that goes on fetching while the controller takes it out of the
 * ISRs, or that the controller makes a follower of a partition it led,
 * is caught up and joins the ISR again, and then acks=all waits for a
 * broker that is gone until replica.lag.time.max.ms takes it out. (Kafka
 * 2.0 stops the follower with StopReplica "first", racing the ISR change:
 * KafkaController.doControlledShutdown.) Returns how many partitions were
 * being fetched. */
size_t br_replication_stop_fetching(struct br_replication *rep);

/* p no longer replicates here (StopReplica): its fetching stops. */
void br_replication_forget(struct br_replication *rep, struct br_partition *p);

/* The leader's side of a follower's Fetch of p at fetch_offset. */
void br_replication_follower_fetch(struct br_replication *rep, struct br_partition *p,
                                   int32_t replica, int64_t fetch_offset);

/* Housekeeping: followers out of sync leave the ISR; ISR changes are
 * announced. */
void br_replication_tick(struct br_replication *rep, int64_t now_ms);

/*
 * Replication throttles (Kafka 2.0's ReplicationQuotaManager, one for each
 * role, quota/replication_quota.h): the follower holds back, in its Fetch
 * requests, the replicas of follower.replication.throttled.replicas not in
 * sync while its rate is over follower.replication.throttled.rate, and
 * counts their bytes received; the leader's side is the Fetch handler's
 * (server/fetch.c), through the calls below.
 */
enum br_repl_role { BR_REPL_LEADER = 0, BR_REPL_FOLLOWER = 1 };

/* Whether p (led here) is in leader.replication.throttled.replicas for
 * this broker (isThrottled). */
bool br_replication_leader_throttled(const struct br_replication *rep, const struct br_partition *p);
/* ReplicaManager.shouldLeaderThrottle: p is throttled, replica is not in
 * its ISR and the leader quota is exceeded at now_ms: its data is left out
 * of replica's Fetch answer. */
bool br_replication_leader_holds(struct br_replication *rep, const struct br_partition *p,
                                 int32_t replica, int64_t now_ms);
/* The bytes of throttled partitions a follower's Fetch answer carried
 * (KafkaApis.handleFetchRequest: quotas.leader.record). */
void br_replication_leader_sent(struct br_replication *rep, int64_t bytes, int64_t now_ms);
/* One partition's data left out of a follower's answer (the metrics). */
void br_replication_leader_held(struct br_replication *rep);

/* What the metrics show of a role's quota. */
struct br_repl_quota_view {
    int64_t bound;           /* bytes/s; INT64_MAX: none */
    double rate;             /* bytes/s of throttled replicas now */
    int64_t bytes_total;     /* of throttled replicas, in all */
    int64_t throttled_total; /* partitions held back from a fetch, in all */
};
void br_replication_quota_view(struct br_replication *rep, enum br_repl_role role, int64_t now_ms,
                               struct br_repl_quota_view *out);

#endif
