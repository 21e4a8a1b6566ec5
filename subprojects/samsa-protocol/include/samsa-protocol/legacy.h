/*
 * samsa-protocol: the legacy message formats (MessageSet v0/v1, magic 0 and
 * 1) and their conversion to and from RecordBatch v2, as Kafka 2.0 converts
 * them (LogValidator on Produce, RecordsUtil.downConvert on Fetch).
 *
 * A message set is a sequence of messages (all big-endian):
 *
 *   Offset     int64
 *   MessageSize int32   bytes after this field
 *   Crc        uint32  CRC-32 (IEEE) over Magic..end
 *   Magic      int8    0 or 1
 *   Attributes int8    bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4),
 *                      bit 3 timestamp type (magic 1; 1 = LogAppendTime)
 *   Timestamp  int64   magic 1 only
 *   Key        bytes   int32 length, -1 = null
 *   Value      bytes   int32 length, -1 = null
 *
 * A compressed message (a "wrapper") holds in its Value an inner message
 * set compressed with its codec; inner messages are never compressed. In
 * magic 1 the inner offsets are relative (0..n-1) and the wrapper's offset
 * is the last inner message's absolute offset; in magic 0 all offsets are
 * absolute. A magic-1 wrapper marked LogAppendTime gives its timestamp to
 * every inner message (AbstractLegacyRecordBatch).
 *
 * LZ4 in magic 0 is Kafka's broken framing (KAFKA-3160): the LZ4 frame's
 * header checksum byte was computed over the frame magic too. It is
 * accepted here with either checksum and written the broken way, as Kafka
 * 2.0's KafkaLZ4BlockOutputStream does for magic 0.
 *
 * All input is untrusted: every length is checked against the bytes present,
 * every CRC is checked (inner messages too), and decompression has the
 * caller's ceiling. Pure functions, thread-safe on distinct objects.
 */
#ifndef SAMSA_PROTOCOL_LEGACY_H
#define SAMSA_PROTOCOL_LEGACY_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

/* Offset + MessageSize: the bytes not counted in MessageSize. */
#define KP_LEGACY_LOG_OVERHEAD 12
/* Crc through the Value length of an empty message, per magic. */
#define KP_LEGACY_MIN_SIZE_V0 14
#define KP_LEGACY_MIN_SIZE_V1 22
#define KP_LEGACY_ATTR_CODEC_MASK 0x07
#define KP_LEGACY_ATTR_LOG_APPEND_TIME 0x08

/* What kp_legacy_upconvert found. */
struct kp_legacy_info {
    int8_t magic;  /* of the last message (0 or 1) */
    int codec;     /* the last wrapper's codec, KP_CODEC_NONE when none */
    int32_t count; /* messages converted (inner ones counted, not wrappers) */
};

/*
 * Converts the message set set[0..len) (magic 0 or 1 messages, compressed
 * wrappers included) into one RecordBatch v2 appended to `out`, as Kafka
 * 2.0's LogValidator does: every message becomes a record, in order, with
 * offset deltas 0..n-1 (BaseOffset 0: the caller assigns offsets), its key
 * and value (nulls kept), no headers, and its timestamp (magic 0: -1, "no
 * timestamp"; magic 1: the message's, or its LogAppendTime wrapper's). The
 * batch is CreateTime, has no producer id, PartitionLeaderEpoch -1, and is
 * compressed with the last wrapper's codec (Kafka's compression.type
 * "producer"), else uncompressed. MaxTimestamp is the records' largest.
 *
 * max_decompressed bounds all decompressed bytes together, max_batch the
 * uncompressed v2 batch.
 *
 * Returns 0, or (out->len restored, *info partly filled):
 *   KP_E_CRC          a message's CRC (outer or inner) does not match;
 *   KP_E_CORRUPT      a truncated message or trailing bytes, a magic other
 *                     than 0/1, a wrapper with a null value, an empty set,
 *                     a compressed inner message, an inner magic unlike its
 *                     wrapper's, or an unknown codec (zstd included: it has
 *                     no legacy form);
 *   KP_E_COMPRESSION  a wrapper's value does not decompress;
 *   KP_E_TOO_LARGE    over max_decompressed or max_batch (or out's ceiling);
 *   KP_E_NOMEM.
 */
KP_MUST_CHECK int kp_legacy_upconvert(const uint8_t *set, size_t len, size_t max_decompressed,
                                      size_t max_batch, struct kp_writer *out,
                                      struct kp_legacy_info *info);

/*
 * Appends the records of the RecordBatch v2 batch[0..size) (already
 * validated, e.g. by kp_batch_parse_lenient) to `out` as messages of
 * `magic` (0 or 1), as Kafka 2.0's RecordsUtil.downConvert does:
 *   - an uncompressed batch gives one message per record whose offset is
 *     first_offset or more (a fetch from the middle of a batch), with
 *     absolute offsets;
 *   - a compressed batch gives one wrapper of all its records compressed
 *     with the batch's codec (inner offsets relative in magic 1, absolute
 *     in magic 0; the wrapper's offset is the last record's);
 *   - magic 1 keeps the timestamps (LogAppendTime batches: the batch's
 *     MaxTimestamp, with the timestamp-type bit set); magic 0 has none;
 *   - headers are dropped; a control batch gives nothing.
 * *count is the number of records written (0 is not an error).
 *
 * Returns 0, or (out left as it was, its error cleared) ... or out->err
 * when out had already failed:
 *   KP_E_UNSUPPORTED  zstd (no legacy form) or an unknown codec, or magic
 *                     not 0/1;
 *   KP_E_CORRUPT, KP_E_BAD_LENGTH, KP_E_MAGIC, KP_E_COMPRESSION: the batch
 *                     did not iterate;
 *   KP_E_TOO_LARGE    over max_decompressed or out's ceiling;
 *   KP_E_NOMEM.
 */
KP_MUST_CHECK int kp_legacy_downconvert(const uint8_t *batch, size_t size, int8_t magic,
                                        int64_t first_offset, size_t max_decompressed,
                                        struct kp_writer *out, int32_t *count);

/* XXH32 of p[0..n) with `seed` (the LZ4 frame's checksum function). */
uint32_t kp_xxh32(const void *p, size_t n, uint32_t seed);

#endif
