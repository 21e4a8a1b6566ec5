/*
 * samsa-broker: the transaction coordinator (Kafka 2.0's
 * core/src/main/scala/kafka/coordinator/transaction/
 * TransactionCoordinator.scala, TransactionMetadata.scala,
 * TransactionStateManager.scala).
 *
 * One record per transactional id: its producer id and epoch, its
 * transaction timeout, its state and the partitions of the open
 * transaction. The state machine is Kafka's (status bytes as
 * TransactionLog writes them):
 *
 *     Empty -> Ongoing           AddPartitionsToTxn
 *     Ongoing -> PrepareCommit   EndTxn(commit)    -> markers -> CompleteCommit
 *     Ongoing -> PrepareAbort    EndTxn(abort), a timeout, or a newer
 *                                InitProducerId (fencing: the epoch is
 *                                bumped first) -> markers -> CompleteAbort
 *     Empty, Complete* -> Dead   transactional.id.expiration.ms unused
 *
 * Markers go through the owner's ops (write_markers): standalone written
 * at once; on a cluster sent to each partition's leader, after the
 * Prepare* record reached the ISR, with br_txn_markers_done called once
 * every leader took its marker. A transaction whose markers are not all
 * written stays in Prepare* (its producer hears CONCURRENT_TRANSACTIONS)
 * and is retried by br_txn_tick.
 *
 * Every change is written to `__transaction_state` (ops->write, Kafka's
 * record format, txn_log.h) before it is made, as Kafka's
 * appendTransactionToLog does; a change whose write fails is not made and
 * the request answers the write's error. br_txn_load_record rebuilds the
 * records at start-up. Times are wall-clock milliseconds, as the records
 * keep them.
 *
 * On a cluster a broker coordinates the ids of the __transaction_state
 * partitions it leads (TransactionStateManager.loadTransactionsForTxnTopicPartition
 * and removeTransactionsForTxnTopicPartition): the owner loads a
 * partition's records with br_txn_load_record when it comes to lead it and
 * drops them with br_txn_unload when it stops.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_TXN_COORDINATOR_H
#define SAMSA_BROKER_TXN_COORDINATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

/* TransactionMetadata's states, as TransactionLog writes them */
enum br_txn_status {
    BR_TXN_EMPTY = 0,
    BR_TXN_ONGOING = 1,
    BR_TXN_PREPARE_COMMIT = 2,
    BR_TXN_PREPARE_ABORT = 3,
    BR_TXN_COMPLETE_COMMIT = 4,
    BR_TXN_COMPLETE_ABORT = 5,
    BR_TXN_DEAD = 6,
};

struct br_txn_partition {
    char *topic; /* owned, NUL-terminated */
    int32_t partition;
};

struct br_txn {
    char *id; /* owned, NUL-terminated */
    size_t id_len;
    int64_t producer_id;
    int16_t epoch;
    int32_t timeout_ms;
    enum br_txn_status status;
    struct br_txn_partition *parts; /* owned: the open transaction's */
    size_t nparts;
    size_t cap_parts;
    int64_t start_ms;  /* the open transaction's first AddPartitionsToTxn */
    int64_t update_ms; /* the last change */
    int64_t log_end;   /* the offset after its last record in __transaction_state (-1: unknown) */
};

struct br_txn_ops {
    /* a new producer id (the broker's allocator): 0 or an error */
    int (*new_producer_id)(void *ctx, int64_t *id);
    /* appends a record of transactional id (key, value: txn_log.h; value
     * null: a tombstone) to its partition of __transaction_state; 0 once
     * it is in the log (*log_end: the offset after it), else the Kafka
     * error the request answers (the change is then not made) */
    int (*write)(void *ctx, const char *id, size_t id_len, struct kp_bytes key,
                 struct kp_bytes value, int64_t *log_end);
    /* writes t's markers (COMMIT when commit, else ABORT) in t's producer
     * id and epoch on each of its partitions; true when every partition
     * took its marker (or no longer exists); false when some are still to
     * be written (under way: br_txn_markers_done follows, or retried by
     * br_txn_tick) */
    bool (*write_markers)(void *ctx, const struct br_txn *t, bool commit);
};

struct br_txn_coordinator {
    struct br_txn **txns; /* owned */
    size_t n;
    size_t cap;
    const struct br_txn_ops *ops;
    void *ctx;
    int32_t max_timeout_ms;      /* transaction.max.timeout.ms */
    int64_t id_expiration_ms;    /* transactional.id.expiration.ms */
    int64_t tick_interval_ms;    /* transaction.abort.timed.out.transaction.cleanup.interval.ms */
    int64_t last_tick_ms;
    /* counts, for the admin API and the logs */
    int64_t committed;
    int64_t aborted;
    int64_t timed_out;
    int64_t fenced;
};

void br_txn_init(struct br_txn_coordinator *c, const struct br_txn_ops *ops, void *ctx,
                 int32_t max_timeout_ms, int64_t id_expiration_ms, int64_t tick_interval_ms);
void br_txn_fini(struct br_txn_coordinator *c);

/* The record of transactional id, or NULL. */
struct br_txn *br_txn_find(const struct br_txn_coordinator *c, const char *id, size_t len);

/*
 * InitProducerId with a transactional id (TransactionCoordinator.
 * handleInitProducerId): a new id gets a new producer id at epoch 0; a
 * known one its epoch + 1 (a new producer id when the epoch is exhausted);
 * an open transaction is aborted first in a bumped epoch, so that the
 * producer it belonged to is fenced. Errors: INVALID_REQUEST (empty id),
 * INVALID_TRANSACTION_TIMEOUT, CONCURRENT_TRANSACTIONS (markers pending),
 * COORDINATOR_NOT_AVAILABLE (out of memory or ids).
 */
int16_t br_txn_init_producer_id(struct br_txn_coordinator *c, const char *id, size_t len,
                                int32_t timeout_ms, int64_t now_ms, int64_t *producer_id,
                                int16_t *epoch);

/*
 * The checks of AddPartitionsToTxn and EndTxn on (id, producer id,
 * epoch): INVALID_PRODUCER_ID_MAPPING (unknown id or another producer id),
 * INVALID_PRODUCER_EPOCH, CONCURRENT_TRANSACTIONS (Prepare*), or NONE with
 * *out the record.
 */
int16_t br_txn_check(const struct br_txn_coordinator *c, const char *id, size_t len,
                     int64_t producer_id, int16_t epoch, struct br_txn **out);

/* A partition named by a request (the topic's name not NUL-terminated). */
struct br_txn_partition_ref {
    const char *topic;
    size_t topic_len;
    int32_t partition;
};

/* Adds partitions to t's transaction (checked with br_txn_check), written
 * as one record: the transaction is Ongoing from now. KP_ERR_NONE, the
 * write's error or COORDINATOR_NOT_AVAILABLE (out of memory); t unchanged
 * on error. */
int16_t br_txn_add_partitions(struct br_txn_coordinator *c, struct br_txn *t,
                              const struct br_txn_partition_ref *parts, size_t n, int64_t now_ms);

/*
 * EndTxn (handleEndTransaction): Ongoing -> Prepare* -> markers ->
 * Complete*. A retry of a completed end with the same result is NONE, with
 * the other INVALID_TXN_STATE; Empty is INVALID_TXN_STATE.
 */
int16_t br_txn_end(struct br_txn_coordinator *c, const char *id, size_t len, int64_t producer_id,
                   int16_t epoch, bool commit, int64_t now_ms);

/*
 * An operator's abort of a hanging transaction (the admin API): an
 * Ongoing transaction is fenced and aborted as its timeout would
 * (markers written, or retried by br_txn_tick). INVALID_PRODUCER_ID_MAPPING
 * for an unknown id, INVALID_TXN_STATE when no transaction is Ongoing, or
 * the error of writing PrepareAbort to __transaction_state (nothing
 * changed).
 */
int16_t br_txn_abort(struct br_txn_coordinator *c, const char *id, size_t len, int64_t now_ms);

/*
 * A transactional Produce to (topic, partition) by (producer_id, epoch) of
 * id, checked against the coordinator before the partition takes it (what
 * Kafka 3.6's KIP-890 verification does; free here, where the coordinator
 * and the partition share a process): the id unknown or of another
 * producer INVALID_PRODUCER_ID_MAPPING, an older epoch INVALID_PRODUCER_EPOCH
 * (a zombie), a partition not in its Ongoing transaction INVALID_TXN_STATE
 * (a request delayed past its transaction's end, which would otherwise
 * open a transaction no marker ever closes and hold the LSO back for good).
 */
int16_t br_txn_check_produce(const struct br_txn_coordinator *c, const char *id, size_t len,
                             int64_t producer_id, int16_t epoch, const char *topic,
                             size_t topic_len, int32_t partition);

/* The periodic work, at most every tick_interval_ms: Ongoing
 * transactions past their timeout aborted in a bumped epoch
 * (abortTimedOutTransactions), Prepare* markers retried, ids unused past
 * the expiration removed. */
void br_txn_tick(struct br_txn_coordinator *c, int64_t now_ms);

/* One record of __transaction_state read back (start-up, in log order):
 * the id's state as written, a tombstone or Dead removing it. 0, or
 * KP_E_CORRUPT (the record is skipped), KP_E_NOMEM. */
KP_MUST_CHECK int br_txn_load_record(struct br_txn_coordinator *c, struct kp_bytes key,
                                     struct kp_bytes value);

/* The markers of id's transaction in Prepare* were all written (the
 * owner's write_markers said they were under way): it is completed now
 * (the Complete record written, or retried by br_txn_tick when that
 * fails). Nothing when id is unknown or not in Prepare*. */
void br_txn_markers_done(struct br_txn_coordinator *c, const char *id, size_t len, int64_t now_ms);

/* Drops the records of every id for which gone(arg, id, len) is true (a
 * __transaction_state partition led elsewhere now): their state stays in
 * the log for the next coordinator. Returns how many. */
size_t br_txn_unload(struct br_txn_coordinator *c, bool (*gone)(void *arg, const char *id, size_t len),
                     void *arg);

/* Completes every transaction in Prepare* for which mine(arg, id, len) is
 * true (NULL: all): a coordinator that just loaded a partition finishes
 * what its predecessor left (Kafka's loadTransactionsForTxnTopicPartition
 * sends their markers again). */
void br_txn_resume(struct br_txn_coordinator *c, bool (*mine)(void *arg, const char *id, size_t len),
                   void *arg, int64_t now_ms);

/* Kafka's name of a state ("Ongoing"). */
const char *br_txn_status_name(enum br_txn_status s);

#endif
