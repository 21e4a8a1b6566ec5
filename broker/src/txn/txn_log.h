/*
 * samsa-broker: the records of `__transaction_state`, Kafka 2.0's format
 * (core/src/main/scala/kafka/coordinator/transaction/TransactionLog.scala:
 * keyToBytes, valueToBytes, readTxnRecordKey, readTxnRecordValue).
 * Big-endian, each part starting with its int16 version, 0:
 *
 *   key    version int16, transactional_id STRING (int16 length)
 *   value  version int16, producer_id int64, producer_epoch int16,
 *          transaction_timeout int32, transaction_status int8,
 *          transaction_partitions nullable ARRAY (null when Empty) of
 *            {topic STRING, partition_ids ARRAY of int32},
 *          transaction_entry_timestamp int64 (the last update, wall ms),
 *          transaction_start_timestamp int64
 *   a tombstone (null value) removes an expired id.
 *
 * Records read back are hostile input: a version other than 0, a negative
 * length, a status out of range, bytes missing or left over fail the
 * decode with KP_E_CORRUPT; the loader skips such a record.
 * @locality any thread (no state)
 */
#ifndef SAMSA_BROKER_TXN_TXN_LOG_H
#define SAMSA_BROKER_TXN_TXN_LOG_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

#include "txn/coordinator.h"

/* A transactional id's record: t's fields (its partitions listed when its
 * status is not Empty). kp_writer errors are the writer's (w->err). */
void br_txn_log_key(struct kp_writer *w, const char *id, size_t len);
void br_txn_log_value(struct kp_writer *w, const struct br_txn *t);

/* The transactional id of a key (borrowed from key). 0 or KP_E_CORRUPT. */
KP_MUST_CHECK int br_txn_log_key_decode(struct kp_bytes key, struct kp_str *id);

/*
 * A value decoded into *t (its id untouched; its partitions replaced by
 * the record's, allocated). 0, KP_E_CORRUPT (t unchanged) or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_txn_log_value_decode(struct kp_bytes value, struct br_txn *t);

#endif
