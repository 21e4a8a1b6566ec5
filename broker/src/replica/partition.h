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

struct br_partition;
/* what the layers above keep on a partition (server/state.h) */
struct br_topic;

/* What the partition's user does when its high watermark moves (the
 * server: answers the fetches parked on it). */
struct br_partition_ops {
    void (*hw_moved)(void *ctx, struct br_partition *p);
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
    int64_t hw; /* high watermark: min LEO over the ISR (here: ISR of one); read it, never set it */
    struct br_producers producers;
    const struct br_partition_ops *ops;
    void *ops_ctx;
    /* bytes appended as leader since the partition opened, and those of
     * them below the high watermark: a parked Fetch counts what appends
     * brought it from these (server/fetch.c) */
    int64_t leo_bytes;
    int64_t hw_bytes;
    /* what delayed operations on this partition wait on (server/fetch.c) */
    struct br_delay_key delayed;
};

/* Makes p the leader of its log (already opened, p->log set): the leader
 * epoch is the log's latest (0 when it has none: epoch 0 reaches
 * leader-epoch-checkpoint with the first append, as Kafka's Log.append
 * assigns it), the high watermark the log end. */
void br_partition_become_leader(struct br_partition *p, const struct br_partition_ops *ops,
                                void *ops_ctx);

/* Makes p a follower of its log (already opened, p->log set) in
 * leader_epoch: it takes no appends as leader. Replication (fetching from
 * the leader) is the layer above's. */
void br_partition_become_follower(struct br_partition *p, int32_t leader_epoch);

/* Sets the leader epoch the controller gave the leader (cluster mode; a
 * standalone leader keeps its log's). */
void br_partition_set_leader_epoch(struct br_partition *p, int32_t leader_epoch);

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
 * INVALID_PRODUCER_EPOCH, UNKNOWN_PRODUCER_ID, DUPLICATE_SEQUENCE_NUMBER)
 * and appends nothing. Otherwise: br_log_append in the leader's epoch, the
 * producer's window records the batch, the high watermark moves and
 * ops->hw_moved is called. Returns 0 (see *out) or br_log_append's error
 * (nothing changed).
 */
KP_MUST_CHECK int br_partition_append_leader(struct br_partition *p, uint8_t *batch, size_t len,
                                             int64_t now_ms, struct br_append *out);

/* Rebuilds the producers' windows from the batches of the log's last
 * 100,000 offsets (start-up). Returns the largest producer id seen, -1
 * when none. */
int64_t br_partition_load_producers(struct br_partition *p);

#endif
