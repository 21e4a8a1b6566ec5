/*
 * samsa-broker: idempotent-producer state of one partition (Kafka 2.0's
 * ProducerStateManager, core/src/main/scala/kafka/log/
 * ProducerStateManager.scala).
 *
 * For each producer id the partition keeps the epoch and the last five
 * batches (Kafka's BatchMetadata: last sequence, last offset, offset delta,
 * max timestamp), as Kafka does (ProducerStateEntry.NUM_BATCHES_TO_RETAIN =
 * 5; the clients cap in-flight requests at 5 for that reason), and the
 * transaction fields a later transaction coordinator needs (coordinator
 * epoch, first offset of the open transaction; -1 for idempotent
 * producers).
 *
 * The rules for a client's batch (Kafka 2.0's
 * Log.analyzeAndValidateProducerState, ProducerAppendInfo.checkProducerEpoch
 * and checkSequence), in this order:
 *   - a batch of the stored epoch whose sequence range equals a retained
 *     batch's is a duplicate: not appended, answered with its original first
 *     offset;
 *   - an epoch below the stored one: INVALID_PRODUCER_EPOCH (Kafka's
 *     ProducerFencedException);
 *   - a producer the partition does not know (never seen, or only in batches
 *     below the log start offset: Kafka's isProducerRetained, truncateHead)
 *     must start at sequence 0, else UNKNOWN_PRODUCER_ID: the client then
 *     compares the log start offset in the answer with its last acknowledged
 *     offset (TransactionManager.canRetry) and starts over only when
 *     retention removed its batches;
 *   - a known producer with a newer epoch must start at 0, else
 *     OUT_OF_ORDER_SEQUENCE_NUMBER;
 *   - the same epoch must continue at last sequence + 1 (wrapping at
 *     INT32_MAX to 0), else OUT_OF_ORDER_SEQUENCE_NUMBER.
 * A follower's batches and those replayed from the log are recorded
 * without these checks (Kafka's ValidationType.None).
 *
 * Snapshots (storage/producer_snapshot.h) hold one entry per retained
 * batch, a producer's oldest first. Kafka 2.0 writes only each producer's
 * last batch, and its reader keeps the last entry of a producer id: a
 * file of ours read by Kafka gives the state Kafka would have written,
 * one of Kafka's read here gives one batch per producer, and ours keep
 * the five across a restart (a retry of any of them is a duplicate).
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_PRODUCER_STATE_H
#define SAMSA_BROKER_PRODUCER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "storage/producer_snapshot.h"

#define BR_PRODUCER_BATCHES 5

/* Kafka's BatchMetadata (first sequence kept too: the offset delta is
 * LastOffsetDelta, which the sequences' wrap does not change) */
struct br_producer_batch {
    int32_t first_seq;
    int32_t last_seq;
    int64_t last_offset;
    int32_t offset_delta; /* last offset - first offset */
    int64_t timestamp;    /* the batch's MaxTimestamp */
};

struct br_producer {
    int64_t producer_id;
    int16_t epoch;
    int32_t coordinator_epoch; /* -1: no transaction marker yet */
    int64_t txn_first_offset;  /* -1: no transaction open */
    uint8_t nbatches;          /* retained, oldest first */
    struct br_producer_batch batches[BR_PRODUCER_BATCHES];
    int64_t last_used_ms;
};

struct br_producers {
    struct br_producer *items;
    size_t n;
    size_t cap;
    /* the offset of the latest snapshot written or loaded (Kafka's
     * lastSnapOffset): a snapshot is taken only past it; -1 none */
    int64_t snap_offset;
    /* producers with a transaction open here (txn_first_offset >= 0) */
    size_t open_txns;
};

enum br_seq_verdict {
    BR_SEQ_APPEND = 0, /* in order: append, then br_producers_record() */
    BR_SEQ_DUPLICATE,  /* *dup_offset holds the original first offset */
    BR_SEQ_ERROR,      /* *kafka_err holds the Kafka error code */
};

/* What br_producers_check and br_producers_record are told of a batch. */
struct br_producer_append {
    int64_t producer_id;
    int16_t epoch;
    int32_t first_seq;
    int32_t last_seq;
    int64_t first_offset; /* recording only */
    int32_t offset_delta; /* LastOffsetDelta */
    int64_t timestamp;    /* MaxTimestamp; recording only */
    bool transactional;   /* the batch's transactional attribute bit */
};

/* A transaction a marker completed (Kafka's CompletedTxn): its producer,
 * its first offset (the marker's own when it had no batch here) and the
 * marker's offset. */
struct br_txn_span {
    int64_t producer_id;
    int64_t first_offset;
    int64_t last_offset;
};

/* Checks a client's batch against the state, with the partition's log
 * start offset: producers and batches wholly below it are not known. */
enum br_seq_verdict br_producers_check(const struct br_producers *ps, int64_t log_start,
                                       const struct br_producer_append *a, int64_t *dup_offset,
                                       int *kafka_err);

/* Whether a non-transactional batch of a producer with a transaction open
 * (Kafka's ProducerAppendInfo.append: InvalidTxnStateException): called
 * after br_producers_check said APPEND. KP_ERR_NONE or INVALID_TXN_STATE. */
int16_t br_producers_check_txn(const struct br_producers *ps, const struct br_producer_append *a);

/*
 * Checks a transaction marker of (producer_id, epoch) written by a
 * coordinator in coordinator_epoch (Kafka's appendEndTxnMarker): an epoch
 * below the producer's is INVALID_PRODUCER_EPOCH, a coordinator epoch below
 * the one the producer's last marker carried TRANSACTION_COORDINATOR_FENCED;
 * KP_ERR_NONE otherwise.
 */
int16_t br_producers_check_marker(const struct br_producers *ps, int64_t producer_id,
                                  int16_t epoch, int32_t coordinator_epoch);

/*
 * Records a marker at marker_offset (checked, or a follower's): the
 * producer's open transaction ends (*done: its first offset, or the
 * marker's when it wrote nothing here), its epoch becomes the marker's and
 * its coordinator epoch the marker's. 0 or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_producers_end_txn(struct br_producers *ps, int64_t producer_id, int16_t epoch,
                                       int32_t coordinator_epoch, int64_t marker_offset,
                                       int64_t now_ms, struct br_txn_span *done);

/* The first offset of the oldest transaction open here, or -1. */
int64_t br_producers_first_open_txn(const struct br_producers *ps);

/* Remembers an appended batch; a transactional one opens its producer's
 * transaction at its first offset unless one is open. Returns 0 or
 * KP_E_NOMEM. At most `max_producers` ids are kept; the least recently
 * used one without an open transaction goes first (Kafka never expires a
 * producer with one open, isProducerExpired). */
KP_MUST_CHECK int br_producers_record(struct br_producers *ps, const struct br_producer_append *a,
                                      int64_t now_ms, size_t max_producers);

/* The snapshot's entries: each retained batch at or above log_start, a
 * producer's oldest first (Kafka's writeSnapshot writes the last one),
 * into *out (kp_free; NULL when *n == 0). 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_producers_to_snapshot(const struct br_producers *ps, int64_t log_start,
                                           struct br_psnap_entry **out, size_t *n);

/* Loads a snapshot's entries into an empty state, each one batch added to
 * its producer's window in file order (a new epoch starts it over); those
 * below log_start are left out (Kafka's isProducerRetained). 0 or
 * KP_E_NOMEM. */
KP_MUST_CHECK int br_producers_load_snapshot(struct br_producers *ps,
                                             const struct br_psnap_entry *e, size_t n,
                                             int64_t log_start, size_t max_producers);

/* Forgets every producer (snap_offset too). */
void br_producers_free(struct br_producers *ps);

/* last_seq of a batch: BaseSequence + LastOffsetDelta, wrapping past INT32_MAX. */
int32_t br_seq_add(int32_t seq, int32_t delta);

#endif
