/*
 * samsa-broker: the partition, one replica of a topic-partition on this
 * broker: its log, its role's state (the leader epoch, the high watermark)
 * and its producers' sequence state. The one way records are appended as
 * leader is br_partition_append_leader: the append, the high watermark
 * moved, and whoever waits on the partition woken, in that order.
 *
 * Standalone today, this broker leads every partition with an ISR of one,
 * so the high watermark is the log end offset (Kafka's Partition: HW = min
 * LEO over the ISR). Replication makes HW its own rule here.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REPLICA_PARTITION_H
#define SAMSA_BROKER_REPLICA_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "reactor/purgatory.h"
#include "replica/producer_state.h"
#include "storage/log.h"
#include "storage/log_manager.h"
#include "replica/txn_state.h"

struct br_partition;
/* what the layers above keep on a partition (server/state.h) */
struct br_topic;

/* What the leader knows of a follower (Kafka's Replica on the leader). */
struct br_remote_replica {
    int32_t broker;
    int64_t leo;               /* its last fetch offset; -1 until it fetched */
    int64_t last_caught_up_ms; /* the latest time its fetch offset reached the leader's LEO */
    int64_t last_fetch_leader_leo;
    int64_t last_fetch_ms;
};

/* What this broker's replica of the partition is. */
enum br_replica_role {
    BR_ROLE_NONE = 0, /* not hosted here (a partition of a cluster's topic) */
    BR_ROLE_LEADER,
    BR_ROLE_FOLLOWER,
};

struct br_partition {
    struct br_topic *topic;
    int32_t index;
    enum br_replica_role role;
    struct br_log *log;
    struct br_managed_log *managed; /* the log manager's record of the log */
    int32_t leader_epoch;
    /* counts this replica's terms as leader: moves when it becomes leader
     * after not leading, not when the controller bumps the epoch of a
     * leader that stays (an ISR change): an append waiting for the ISR is
     * still in this leader's log as long as the term holds */
    uint32_t leader_term;
    int64_t hw; /* high watermark: min LEO over the ISR (here: ISR of one); read it, never set it */
    struct br_producers producers;
    /* where the requests parked on the partition (key `delayed`) wait: the
     * partition wakes them when its high watermark moves, and, with
     * followers, when records are appended as leader (their fetches count
     * them). NULL: nobody waits. */
    struct br_purgatory *waiters;
    /* bytes appended as leader since the partition opened, and those of
     * them below the high watermark: a parked Fetch counts what appends
     * brought it from these (server/fetch.c) */
    int64_t leo_bytes;
    int64_t hw_bytes;
    /* replication (cluster mode; standalone: one replica, this broker, in
     * sync): the assigned replicas in assignment order, the ISR, what the
     * leader knows of each follower, the state znode's version and the
     * controller epoch of the last leadership decision (LeaderAndIsr) */
    int32_t *assigned; /* owned */
    int32_t nassigned;
    int32_t *isr; /* owned */
    int32_t nisr;
    struct br_remote_replica *remotes; /* owned, one per assigned replica but this one */
    int32_t nremotes;
    int32_t leader_id;
    int32_t zk_version;
    int32_t controller_epoch;
    /* an ISR change is being written to ZooKeeper (its outcome may be
     * unknown: a reply lost with the connection); none other starts until
     * it is settled (br_partition_isr_change_end) */
    bool isr_writing;
    /* the follower that change adds, or -1: the high watermark counts it
     * while the change is in flight, so that nothing is acknowledged
     * without a replica ZooKeeper may already name in sync (the maximal
     * ISR of Kafka's KIP-497) */
    int32_t isr_joining;
    /* fenced because ZooKeeper names a newer leadership than this one (an
     * ISR write found it): only the controller's LeaderAndIsr lifts it,
     * not the session coming back */
    bool superseded;
    bool truncating; /* a follower yet to agree with its leader where its log ends */
    /* led here, but this broker's ZooKeeper session is gone: it acts as
     * no leader (br_replication_fence) until LeaderAndIsr says what it is */
    bool fenced;
    int64_t lag_max_ms;         /* replica.lag.time.max.ms */
    int64_t epoch_start_offset; /* the leader's LEO when its epoch began */
    /* what delayed operations on this partition wait on (in `waiters`) */
    struct br_delay_key delayed;
    /* its finished transactions: the aborted ones, the completed ones
     * not replicated yet (the open ones are `producers`') */
    struct br_txn_state txns;
};

/* Makes p the leader of its log (already opened, p->log set): the leader
 * epoch is the log's latest (0 when it has none: epoch 0 reaches
 * leader-epoch-checkpoint with the first append, as Kafka's Log.append
 * assigns it), the high watermark the log end. */
void br_partition_become_leader(struct br_partition *p, struct br_purgatory *waiters);

/* Makes p a follower of its log (already opened, p->log set) in
 * leader_epoch: it takes no appends as leader. Replication (fetching from
 * the leader) is the layer above's. */
void br_partition_become_follower(struct br_partition *p, int32_t leader_epoch);

/* A LeaderAndIsr's state of the partition (cluster mode). */
struct br_leadership {
    int32_t leader;
    int32_t leader_epoch;
    int32_t controller_epoch;
    int32_t zk_version;
    const int32_t *isr;
    int32_t nisr;
    const int32_t *assigned;
    int32_t nassigned;
};

/*
 * Takes a controller's decision (Kafka's Partition.makeLeader and
 * makeFollower): the assignment, the ISR, the epochs. As leader
 * (me == s->leader): every follower's LEO unknown, those in the ISR
 * caught up as of now_ms, the others not; the high watermark may move
 * (an ISR of one). As follower: the high watermark stays (min of its own
 * and the leader's, from fetches). Returns 0 or KP_E_NOMEM (unchanged).
 */
KP_MUST_CHECK int br_partition_take_leadership(struct br_partition *p, int32_t me,
                                               const struct br_leadership *s, int64_t now_ms,
                                               int64_t lag_max_ms);

/* A follower fetched at fetch_offset (Kafka's Replica.updateLogReadResult):
 * its LEO and last caught-up time; then the high watermark may move.
 * Unknown brokers are ignored (false). */
bool br_partition_follower_fetched(struct br_partition *p, int32_t broker, int64_t fetch_offset,
                                   int64_t now_ms);

/* Whether follower `broker`, whose Fetch is being handled, joins the ISR
 * (Kafka 2.0's maybeExpandIsr, with 2.0.1's condition that it reached the
 * leader's start of its epoch): assigned, out of the ISR, its fetch offset
 * at the high watermark or beyond. Only the replica that fetched is
 * considered: a paused follower whose stale offset equals the high
 * watermark is not taken back by another follower's fetch. */
bool br_partition_isr_candidate(const struct br_partition *p, int32_t broker);

/* An ISR change starts being written to ZooKeeper: `joining` is the
 * follower it adds (-1: none), counted by the high watermark until the
 * change is settled. */
void br_partition_isr_change_begin(struct br_partition *p, int32_t joining);

/* The change is settled (taken, dropped or superseded): the high
 * watermark counts the ISR alone again and may move. */
void br_partition_isr_change_end(struct br_partition *p, int64_t now_ms);

/* Whether a leader takes an append with this acks: acks=all (-1) with fewer
 * replicas in sync than min_insync (the topic's min.insync.replicas) is
 * refused, NOT_ENOUGH_REPLICAS, and nothing is written (Kafka's
 * Partition.appendRecordsToLeader). KP_ERR_NONE otherwise. */
int16_t br_partition_check_acks(const struct br_partition *p, int16_t acks, int32_t min_insync);

/* An append as leader in term `term` (p->leader_term then) up to offset
 * `required` is settled: led elsewhere since, or replicated. A new epoch
 * of the same leader (the controller took a dead follower out of the ISR)
 * keeps the records where they are: the append waits on, as Kafka's
 * DelayedProduce does. */
bool br_partition_append_settled(const struct br_partition *p, int64_t required, uint32_t term);

/* What such an append answers once settled or expired: NONE,
 * NOT_LEADER_OR_FOLLOWER (led elsewhere since), NOT_ENOUGH_REPLICAS_AFTER_APPEND
 * (replicated, but the ISR is below min_insync: Kafka's
 * checkEnoughReplicasReachOffset) or REQUEST_TIMED_OUT. */
int16_t br_partition_append_outcome(const struct br_partition *p, int64_t required, uint32_t term,
                                    int32_t min_insync);

/* ZooKeeper names a newer leadership than this leader's: it acts as no
 * leader (fenced, its waiting appends answered by the term's end) until
 * the controller's LeaderAndIsr says what it is. */
void br_partition_supersede(struct br_partition *p);

/* This broker's ZooKeeper session is gone (or every in-sync follower is
 * silent past it): p acts as no leader, its term is over and what waits on
 * it is answered now, until LeaderAndIsr says what it is or ZooKeeper still
 * names it (br_partition_unfence). */
void br_partition_fence(struct br_partition *p);
/* The fence lifted (the session came back, or ZooKeeper still names this
 * leadership); never a superseded one's. True when p was fenced and is no
 * longer. */
bool br_partition_unfence(struct br_partition *p);

/* p zeroed, the partition `index` of t, whose waiters wait in `waiters`
 * (its log comes with br_partition_attach_log). */
void br_partition_init(struct br_partition *p, struct br_topic *t, int32_t index,
                       struct br_purgatory *waiters);
/* p, the partition `index` of t, takes its opened log (br_partition_close
 * closes it); the rest of p stays as it is. */
void br_partition_attach_log(struct br_partition *p, struct br_topic *t, int32_t index,
                             struct br_log *log);
/* A replica of a cluster's partition hosted here: what it is comes from
 * the controller (no role yet), and its high watermark starts at the
 * checkpointed one (Kafka's Partition.getOrCreateReplica), at most its log
 * end. */
void br_partition_host_replica(struct br_partition *p, int64_t checkpointed_hw);
/* What waits on p answered now, its producers and replication state
 * freed, its log taken from the log manager and closed. p keeps its topic
 * and index. */
void br_partition_close(struct br_partition *p, struct br_log_manager *logs);

/* A follower's log cut back to `to` (where its leader's epoch ends, or the
 * leader's high watermark): the producers' state rebuilt from the log, the
 * high watermark at most `to`. 0 or br_log_truncate_to's error. */
KP_MUST_CHECK int br_partition_truncate_to(struct br_partition *p, int64_t to);
/* A follower wholly behind its leader's log start: the log emptied and
 * started at `start`. 0 or br_log_truncate_fully_and_start_at's error. */
KP_MUST_CHECK int br_partition_restart_at(struct br_partition *p, int64_t start);
/* The leader's log start moved to `start`: the follower's follows (its
 * segments below it deleted), when it is within the follower's log. */
KP_MUST_CHECK int br_partition_follow_log_start(struct br_partition *p, int64_t start);
/* A follower and its leader agreed where its log ends (agreed), or it is
 * to ask again (an epoch of its own ended elsewhere). */
void br_partition_epoch_agreed(struct br_partition *p, bool agreed);

/* ISR members but the leader not caught up within lag_max_ms (Kafka's
 * getOutOfSyncReplicas): written to out (room for nisr), their count. */
int32_t br_partition_out_of_sync(const struct br_partition *p, int64_t now_ms, int32_t *out);

/* The ISR is now isr[0..n) with the state znode at zk_version (written by
 * this leader): the high watermark may move. 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_partition_set_isr(struct br_partition *p, const int32_t *isr, int32_t n,
                                       int32_t zk_version, int64_t now_ms);

/* Kafka's maybeIncrementLeaderHW: the least LEO of the leader, the ISR and
 * the followers caught up within lag_max_ms; the high watermark only grows.
 * Calls ops->hw_moved when it moved. */
void br_partition_advance_hw(struct br_partition *p, int64_t now_ms);

/* A follower's high watermark from its leader: min(its LEO, leader_hw). */
void br_partition_follower_hw(struct br_partition *p, int64_t leader_hw);

bool br_partition_in_isr(const struct br_partition *p, int32_t broker);

/* Frees what replication holds (the topic frees the partition). */
void br_partition_free_replication(struct br_partition *p);

/* How many producer ids a partition remembers (the least recently used
 * one is forgotten first). */
#define BR_PARTITION_MAX_PRODUCERS 10000

/* What an append as leader did. */
struct br_append {
    int64_t base;      /* the batch's first offset; a duplicate's: the original's */
    bool duplicate;    /* a retry of a batch the log has: nothing appended */
    int16_t seq_error; /* the producer's sequence refused it (Kafka's code): nothing appended */
};

/*
 * Appends a batch as leader. A batch of an idempotent producer (ProducerId
 * and BaseSequence >= 0) is checked against that producer's last five
 * batches first (producer_state.h), as Kafka's Log.append does before it
 * assigns offsets: a retry of one of them is not appended again and
 * answers its first offset (out->duplicate); a sequence, epoch or producer
 * it refuses sets out->seq_error (OUT_OF_ORDER_SEQUENCE_NUMBER,
 * INVALID_PRODUCER_EPOCH, UNKNOWN_PRODUCER_ID) and appends nothing.
 * Otherwise: br_log_append in the leader's epoch (a segment it rolls takes
 * a producer snapshot at its base first, Kafka's Log.roll), the
 * producer's window records the batch, the high watermark moves and
 * ops->hw_moved is called. Returns 0 (see *out) or br_log_append's error
 * (nothing changed).
 */
KP_MUST_CHECK int br_partition_append_leader(struct br_partition *p, uint8_t *batch, size_t len,
                                             int64_t now_ms, struct br_append *out);

/*
 * The one way a follower appends (a batch of its leader's, kept verbatim:
 * offsets and leader epoch as the leader wrote them): br_log_append_replica
 * (a roll takes a snapshot, as the leader's does), then the producer's
 * window records the batch, as Kafka's
 * Log.appendAsFollower updates the producer state, so that a follower
 * that becomes leader knows each idempotent producer's last sequences
 * (without them its first batch after the failover would be out of order).
 * Returns 0 or br_log_append_replica's error (nothing changed).
 */
KP_MUST_CHECK int br_partition_append_follower(struct br_partition *p, const uint8_t *batch,
                                               size_t len, int64_t now_ms);

/*
 * Rebuilds the producers' state (start-up; Kafka 2.0's
 * Log.loadProducerState): from the latest snapshot at or below the log end
 * (storage/producer_snapshot.h; a corrupt one is deleted with a warning and
 * the next older one tried), then every batch after it; with no snapshot,
 * from the whole log. Snapshots past the log end or below its start are
 * deleted first. Returns the largest producer id seen, -1 when none.
 */
int64_t br_partition_load_producers(struct br_partition *p);

/* After a truncation: the state rebuilt as br_partition_load_producers
 * does, from the log as it is now (Kafka's truncateTo: loadProducerState). */
void br_partition_reload_producers(struct br_partition *p);

/* ---------------------------------------------------------- transactions */

/*
 * The last stable offset (Kafka 2.0's Replica.lastStableOffset): the first
 * offset of the oldest transaction still open here, or of the oldest
 * completed one whose marker the high watermark has not passed, when that
 * is below the high watermark; the high watermark otherwise. A
 * read_committed consumer reads below it.
 */
int64_t br_partition_lso(struct br_partition *p);

/*
 * Appends a transaction marker as leader (Kafka's
 * Log.appendAsLeader(isFromClient = false) of WriteTxnMarkers' batch):
 * COMMIT (commit) or ABORT of producer_id's transaction in epoch, written
 * by a coordinator in coordinator_epoch. *kafka_err: the producer state's
 * refusal (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED; nothing
 * appended) or NONE. *offset: the marker's offset. The transaction
 * completes (an ABORT indexed in `.txnindex`), the high watermark moves.
 * Returns 0 or the append's error (nothing changed).
 */
KP_MUST_CHECK int br_partition_append_marker(struct br_partition *p, int64_t producer_id,
                                             int16_t epoch, int32_t coordinator_epoch,
                                             bool commit, int64_t now_ms, int16_t *kafka_err,
                                             int64_t *offset);

/*
 * The aborted transactions a read_committed Fetch at fetch_offset answers
 * with records up to `upper` (exclusive; Kafka's
 * TransactionIndex.collectAbortedTxns: marker at or past fetch_offset,
 * first offset below upper): written to out (room for cap), their count
 * returned (more than cap: call again with that room).
 */
size_t br_partition_aborted_txns(const struct br_partition *p, int64_t fetch_offset, int64_t upper,
                                 struct br_aborted_txn *out, size_t cap);

/* A clean shutdown: a snapshot at the log end, unless one is there already
 * (Kafka's Log.close), written now when the log manager is stopped. */
void br_partition_snapshot_producers(struct br_partition *p);

#endif
