/*
 * samsa-protocol: control records, the transaction markers (COMMIT, ABORT)
 * a partition leader writes when a transaction ends.
 *
 * Kafka 2.0 (clients/src/main/java/org/apache/kafka/common/record/
 * ControlRecordType.java, EndTransactionMarker.java, and
 * MemoryRecords.writeEndTransactionalMarker):
 *
 *   a marker batch  RecordBatch v2 with the control (0x20) and transactional
 *                   (0x10) attribute bits, uncompressed, the transaction's
 *                   ProducerId and ProducerEpoch, BaseSequence -1, one record
 *                   (OffsetDelta 0, no headers);
 *   its key         Version int16 (0), Type int16 (ABORT 0, COMMIT 1): 4 bytes;
 *   its value       Version int16 (0), CoordinatorEpoch int32: 6 bytes.
 *
 * Readers follow Kafka's: a key or value shorter than its version-0 size or
 * with a negative version is corrupt; a higher version is read as version 0
 * (later versions may only add fields after these); a key of another type is
 * a control record of a kind this reader does not know, which a consumer
 * skips but which is not a transaction marker.
 */
#ifndef SAMSA_PROTOCOL_CONTROL_H
#define SAMSA_PROTOCOL_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/record_batch.h>

/* ControlRecordType.CURRENT_CONTROL_RECORD_KEY_SIZE */
#define KP_CONTROL_KEY_SIZE 4
/* EndTransactionMarker.CURRENT_END_TXN_MARKER_VALUE_SIZE */
#define KP_TXN_MARKER_VALUE_SIZE 6
/* The attribute bits of a marker batch. */
#define KP_TXN_MARKER_ATTRS (KP_BATCH_ATTR_TRANSACTIONAL | KP_BATCH_ATTR_CONTROL)
/* The size of a marker batch as Kafka writes it: the 61-byte header and one
 * record of 1 (length) + 1 + 1 + 1 + 1 + 4 + 1 + 6 + 1 bytes. */
#define KP_TXN_MARKER_BATCH_SIZE (KP_BATCH_HEADER_SIZE + 17)

enum kp_control_type {
    KP_CONTROL_ABORT = 0,
    KP_CONTROL_COMMIT = 1,
};

struct kp_txn_marker {
    int16_t type; /* KP_CONTROL_ABORT or KP_CONTROL_COMMIT */
    int32_t coordinator_epoch;
};

/* The version-0 key of a control record of `type`. */
void kp_control_key_encode(uint8_t key[KP_CONTROL_KEY_SIZE], int16_t type);

/*
 * The type of a control record's key (ControlRecordType.parseTypeId): 0 with
 * *type set (any value: ABORT, COMMIT or one this reader does not know), or
 * KP_E_CORRUPT for a null key, one under 4 bytes or a negative version.
 */
KP_MUST_CHECK int kp_control_key_decode(struct kp_bytes key, int16_t *type);

/* The version-0 value of a transaction marker. */
void kp_txn_marker_value_encode(uint8_t value[KP_TXN_MARKER_VALUE_SIZE], int32_t coordinator_epoch);

/*
 * A control record as a transaction marker (EndTransactionMarker.deserialize):
 * 0 with *out filled; KP_E_CORRUPT when the key does not decode, its type is
 * neither ABORT nor COMMIT, or the value is null, under 6 bytes or of a
 * negative version.
 */
KP_MUST_CHECK int kp_txn_marker_decode(struct kp_bytes key, struct kp_bytes value,
                                       struct kp_txn_marker *out);

/*
 * Appends a whole marker batch to out, as Kafka's leader writes it:
 * BaseOffset base_offset, PartitionLeaderEpoch leader_epoch, timestamp as
 * both BaseTimestamp and MaxTimestamp, the producer's id and epoch,
 * BaseSequence -1, attributes KP_TXN_MARKER_ATTRS (CreateTime,
 * uncompressed), one record. Returns 0, KP_E_INVALID_ARG (a type other than
 * ABORT or COMMIT), KP_E_TOO_LARGE (out's ceiling) or KP_E_NOMEM; out->len
 * is restored on failure.
 */
KP_MUST_CHECK int kp_txn_marker_batch_write(struct kp_writer *out, int64_t base_offset,
                                            int32_t leader_epoch, int64_t timestamp,
                                            int64_t producer_id, int16_t producer_epoch,
                                            const struct kp_txn_marker *marker);

/*
 * The marker of batch[0..size), a batch kp_batch_parse_lenient accepted (the
 * CRC is not checked again): its first record, as Kafka's ProducerStateManager
 * reads a control batch (`batch.iterator.next()`), decompressed under
 * max_decompressed when the batch is compressed. Returns 0 with *out filled;
 * KP_E_INVALID_ARG when the batch is not a control batch; KP_E_CORRUPT when
 * it has no record or its first record is not a transaction marker; or an
 * error of kp_batch_iter_init.
 */
KP_MUST_CHECK int kp_txn_marker_batch_read(const uint8_t *batch, size_t size,
                                           size_t max_decompressed, struct kp_txn_marker *out);

#endif
