/*
 * samsa-protocol: RecordBatch v2 (magic 2), the unit Samsa stores and serves.
 *
 * Layout (all big-endian; names as Kafka spells them):
 *
 *   off  field                 type    in CRC
 *     0  BaseOffset            int64   no   the broker assigns it
 *     8  BatchLength           int32   no   bytes after this field
 *    12  PartitionLeaderEpoch  int32   no   the broker may rewrite it
 *    16  Magic                 int8    no   2
 *    17  CRC                   uint32       CRC-32C over [21, end)
 *    21  Attributes            int16   yes  codec, timestamp type, flags
 *    23  LastOffsetDelta       int32   yes
 *    27  BaseTimestamp         int64   yes
 *    35  MaxTimestamp          int64   yes
 *    43  ProducerId            int64   yes
 *    51  ProducerEpoch         int16   yes
 *    53  BaseSequence          int32   yes
 *    57  RecordCount           int32   yes  never compressed
 *    61  Records                       yes  compressed as one block if codec != 0
 *
 * Each record: length varint, Attributes int8, TimestampDelta varlong,
 * OffsetDelta varint, key (varint length, -1 = null), value (likewise),
 * HeaderCount varint, then HeaderCount x (key varint length + bytes,
 * value varint length (-1 = null) + bytes). Varints are zigzag-encoded.
 *
 * Which check to use where:
 *   - a producer's batch (Produce): kp_batch_parse (strict): RecordCount >= 1
 *     and LastOffsetDelta == RecordCount - 1, as Kafka's LogValidator;
 *   - a stored batch (log recovery, segment scans, fetch from a replica):
 *     kp_batch_parse_lenient: the log cleaner keeps a batch's last offset
 *     when it drops records, and may keep an empty batch (RecordCount 0) to
 *     preserve a producer's state, so only LastOffsetDelta >= RecordCount - 1
 *     is required;
 *   - a hot path that only needs offsets and sizes of batches already
 *     checked when they were appended: kp_batch_peek (no CRC, 61 bytes).
 * None of them decompresses; kp_batch_iter_* decodes the records.
 *
 * All functions are pure and thread-safe on distinct objects. Slices in a
 * kp_record point into the batch (uncompressed) or into the iterator's
 * buffer (compressed): they live until the batch is freed or
 * kp_batch_iter_free is called, whichever comes first.
 */
#ifndef SAMSA_PROTOCOL_RECORD_BATCH_H
#define SAMSA_PROTOCOL_RECORD_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/compress.h>
#include <samsa-protocol/err.h>

#define KP_BATCH_MAGIC 2
/* BaseOffset + BatchLength: the bytes not counted in BatchLength. */
#define KP_BATCH_LOG_OVERHEAD 12
/* Size of the batch header, up to the first record. */
#define KP_BATCH_HEADER_SIZE 61
/* The smallest valid BatchLength (a header without records). */
#define KP_BATCH_MIN_LENGTH (KP_BATCH_HEADER_SIZE - KP_BATCH_LOG_OVERHEAD)
/* The CRC covers [KP_BATCH_CRC_START, end). */
#define KP_BATCH_CRC_START 21
/* The smallest encoded record: 7 one-byte fields. */
#define KP_RECORD_MIN_SIZE 7

/* Attributes bits. */
#define KP_BATCH_ATTR_CODEC_MASK 0x07
#define KP_BATCH_ATTR_LOG_APPEND_TIME 0x08
#define KP_BATCH_ATTR_TRANSACTIONAL 0x10
#define KP_BATCH_ATTR_CONTROL 0x20
#define KP_BATCH_ATTR_DELETE_HORIZON 0x40

enum kp_timestamp_type {
    KP_TS_CREATE_TIME = 0,
    KP_TS_LOG_APPEND_TIME = 1,
};

struct kp_batch_header {
    int64_t BaseOffset;
    int32_t BatchLength;
    int32_t PartitionLeaderEpoch;
    int8_t Magic;
    uint32_t CRC;
    int16_t Attributes;
    int32_t LastOffsetDelta;
    int64_t BaseTimestamp;
    int64_t MaxTimestamp;
    int64_t ProducerId;
    int16_t ProducerEpoch;
    int32_t BaseSequence;
    int32_t RecordCount;
};

/* enum kp_codec value; may be > KP_CODEC_MAX for a batch we cannot decode. */
static inline int kp_batch_codec(const struct kp_batch_header *h)
{
    return h->Attributes & KP_BATCH_ATTR_CODEC_MASK;
}

static inline enum kp_timestamp_type kp_batch_timestamp_type(const struct kp_batch_header *h)
{
    return (h->Attributes & KP_BATCH_ATTR_LOG_APPEND_TIME) != 0 ? KP_TS_LOG_APPEND_TIME
                                                                : KP_TS_CREATE_TIME;
}

static inline bool kp_batch_is_transactional(const struct kp_batch_header *h)
{
    return (h->Attributes & KP_BATCH_ATTR_TRANSACTIONAL) != 0;
}

static inline bool kp_batch_is_control(const struct kp_batch_header *h)
{
    return (h->Attributes & KP_BATCH_ATTR_CONTROL) != 0;
}

static inline bool kp_batch_has_delete_horizon(const struct kp_batch_header *h)
{
    return (h->Attributes & KP_BATCH_ATTR_DELETE_HORIZON) != 0;
}

/* Total size of the batch on the wire: BatchLength + 12. */
static inline size_t kp_batch_size(const struct kp_batch_header *h)
{
    return (size_t)h->BatchLength + KP_BATCH_LOG_OVERHEAD;
}

/* Offset of the last record; the next batch starts at this + 1.
 * Parse guarantees LastOffsetDelta >= 0; BaseOffset is the caller's to trust
 * (the broker assigns it). */
static inline int64_t kp_batch_last_offset(const struct kp_batch_header *h)
{
    return h->BaseOffset + h->LastOffsetDelta;
}

/* ---------------------------------------------------------------- parsing */

enum kp_batch_mode {
    KP_BATCH_STRICT = 0,  /* producers' batches */
    KP_BATCH_LENIENT = 1, /* stored and compacted batches */
};

/*
 * Parses and validates the batch at r's position and advances r past it.
 *
 * Returns
 *   0                 a valid batch: *h filled, r advanced by kp_batch_size(h);
 *   KP_AGAIN          fewer than 12 bytes, or fewer than BatchLength + 12:
 *                     a partial trailing batch; r unchanged, r->err untouched;
 *   KP_E_BAD_LENGTH   BatchLength < 49 or > INT32_MAX - 12;
 *   KP_E_MAGIC        Magic != 2: h->BaseOffset, BatchLength,
 *                     PartitionLeaderEpoch (a legacy message's CRC) and
 *                     Magic are filled, so a caller can tell a MessageSet v0/v1
 *                     (BatchLength may then be below 49) and skip
 *                     kp_batch_size(h) bytes;
 *   KP_E_CRC          CRC mismatch;
 *   KP_E_CORRUPT      RecordCount < 0, more records than bytes (uncompressed),
 *                     or the LastOffsetDelta rule of `mode` broken.
 * Every error is recorded in r (code, file, line) and sticks there.
 */
KP_MUST_CHECK int kp_batch_read(struct kp_reader *r, enum kp_batch_mode mode,
                                struct kp_batch_header *h);

/*
 * kp_batch_read on p[0..len) in strict mode. On 0 and KP_E_MAGIC,
 * *batch_size is the batch's total size; on KP_AGAIN it is the total size
 * needed when known, else 12 (a lower bound).
 */
KP_MUST_CHECK int kp_batch_parse(const uint8_t *p, size_t len, struct kp_batch_header *h,
                                 size_t *batch_size);

/* The same in lenient mode. */
KP_MUST_CHECK int kp_batch_parse_lenient(const uint8_t *p, size_t len, struct kp_batch_header *h,
                                         size_t *batch_size);

/*
 * Reads the 61-byte header of the batch at p without the CRC or record
 * checks, and without requiring the rest of the batch to be present: for
 * scans over batches that were validated when appended. Needs len >= 61
 * (else KP_AGAIN); checks BatchLength's range (KP_E_BAD_LENGTH) and the
 * magic (KP_E_MAGIC, partial header as in kp_batch_read). *batch_size is
 * the batch's total size on 0 and KP_E_MAGIC.
 */
KP_MUST_CHECK int kp_batch_peek(const uint8_t *p, size_t len, struct kp_batch_header *h,
                                size_t *batch_size);

/* ---------------------------------------------------------------- records */

struct kp_record {
    int8_t Attributes;
    int64_t TimestampDelta;
    int32_t OffsetDelta;
    struct kp_bytes Key;   /* len -1: null */
    struct kp_bytes Value; /* len -1: null */
    int32_t HeaderCount;
    struct kp_bytes Headers; /* the HeaderCount encoded headers, checked */
    int64_t Offset;          /* BaseOffset + OffsetDelta */
    /* BaseTimestamp + TimestampDelta; MaxTimestamp for LogAppendTime batches,
     * as Kafka reports it */
    int64_t Timestamp;
};

/* kp_batch_iter_next's "no more records". */
#define KP_ITER_END 1

struct kp_batch_iter {
    struct kp_batch_header h;
    struct kp_reader rd;    /* over the records block */
    struct kp_writer plain; /* owned: the decompressed records block */
    int32_t index;          /* records returned so far */
    int32_t prev_delta;     /* OffsetDelta of the previous record, -1 at first */
    int err;                /* sticky: the error every later call returns */
    int cause;              /* the reader's specific code behind err, if any */
    const char *err_file;   /* where err was detected */
    int err_line;
};

/*
 * Prepares to walk the records of batch[0..size). The header is read as by
 * kp_batch_peek, and size must be exactly the batch's size; the CRC is not
 * checked (call kp_batch_parse first for untrusted bytes; the iterator is
 * memory-safe on any input regardless). A compressed records block is
 * decompressed into an owned buffer of at most max_decompressed bytes.
 * Returns 0, KP_E_BAD_LENGTH, KP_E_MAGIC, KP_E_CORRUPT (RecordCount < 0 or
 * more records than bytes), KP_E_UNSUPPORTED (codec), KP_E_TOO_LARGE
 * (decompressed size above max_decompressed), KP_E_COMPRESSION, KP_E_NOMEM.
 * kp_batch_iter_free must be called in every case.
 */
KP_MUST_CHECK int kp_batch_iter_init(struct kp_batch_iter *it, const uint8_t *batch, size_t size,
                                     size_t max_decompressed);

/*
 * The next record into *rec: 0, KP_ITER_END after RecordCount records, or
 * KP_E_CORRUPT (truncated record, record length not matching its fields,
 * overlong varint, null header key, OffsetDelta not increasing or beyond
 * LastOffsetDelta, Offset or Timestamp overflowing, fewer records than
 * RecordCount, or bytes left after the last one). Errors are sticky;
 * it->cause keeps the underlying reader code (e.g. KP_E_VARINT) and
 * it->err_file/err_line the detection site. The record with index
 * RecordCount - 1 is only returned once the block is known to end with it.
 */
KP_MUST_CHECK int kp_batch_iter_next(struct kp_batch_iter *it, struct kp_record *rec);

void kp_batch_iter_free(struct kp_batch_iter *it);

/* One record header. Key is never null. */
struct kp_record_header {
    struct kp_str Key;
    struct kp_bytes Value; /* len -1: null */
};

struct kp_header_iter {
    struct kp_reader rd;
    int32_t left;
};

/* Starts walking rec->Headers (already checked by kp_batch_iter_next). */
void kp_record_headers_init(struct kp_header_iter *hi, const struct kp_record *rec);

/* 0 with the next header, KP_ITER_END, or KP_E_CORRUPT on a Headers slice
 * that did not come from kp_batch_iter_next. */
KP_MUST_CHECK int kp_record_header_next(struct kp_header_iter *hi, struct kp_record_header *hdr);

/* ---------------------------------------------------------------- building */

/* kp_batch_builder_add's offset_delta: one more than the previous record's
 * (0 for the first). */
#define KP_OFFSET_DELTA_AUTO (-1)

struct kp_batch_builder {
    struct kp_writer records; /* owned: the uncompressed records block */
    struct kp_writer *out;    /* kp_batch_builder_write_into's, or NULL */
    size_t out_start;         /* where the batch starts in out */
    int codec;
    int16_t Attributes; /* without the codec bits */
    int32_t PartitionLeaderEpoch;
    int64_t BaseOffset;
    int64_t BaseTimestamp;
    int64_t MaxTimestamp;
    int64_t ProducerId;
    int16_t ProducerEpoch;
    int32_t BaseSequence;
    int32_t RecordCount;
    int32_t LastOffsetDelta;      /* of the last record added, -1 before */
    int32_t last_offset_override; /* -1: none */
    size_t max_bytes;             /* ceiling on the uncompressed batch */
};

/*
 * Starts a batch. max_bytes bounds the uncompressed batch (61 + records);
 * a compressed batch is usually smaller. PartitionLeaderEpoch starts at -1,
 * the timestamp type at CreateTime, no flags.
 * Returns 0, KP_E_UNSUPPORTED (codec), or KP_E_INVALID_ARG (max_bytes < 61).
 * kp_batch_builder_free must be called in every case.
 */
KP_MUST_CHECK int kp_batch_builder_init(struct kp_batch_builder *b, int codec, int64_t base_offset,
                                        int64_t base_timestamp, int64_t producer_id,
                                        int16_t producer_epoch, int32_t base_sequence,
                                        size_t max_bytes);

/*
 * Builds the batch straight into out, after what it holds (call before the
 * first add): the 61-byte header is reserved there now; an uncompressed
 * batch's records are written onto out as they are added and finish fills
 * the header in place, so each record is copied once. A compressed batch
 * keeps its records in the builder until finish compresses them onto out.
 * Until finish succeeds nothing else may write to out, and finish must be
 * given this out. A failed add leaves out as it was before that add; to
 * give the batch up, set out->len back to what it was before this call.
 * Returns 0, KP_E_INVALID_ARG (after an add, or a second call),
 * KP_E_TOO_LARGE (out's ceiling) or KP_E_NOMEM.
 */
KP_MUST_CHECK int kp_batch_builder_write_into(struct kp_batch_builder *b, struct kp_writer *out);

void kp_batch_builder_set_timestamp_type(struct kp_batch_builder *b, enum kp_timestamp_type type);
/* Sets or clears the transactional and control attribute bits. */
void kp_batch_builder_set_flags(struct kp_batch_builder *b, bool transactional, bool control);
void kp_batch_builder_set_leader_epoch(struct kp_batch_builder *b, int32_t epoch);

/*
 * For the cleaner: keep the original batch's LastOffsetDelta even though
 * its last records were dropped (or all of them: a batch may then be
 * finished with no records). Must be >= every added OffsetDelta; checked
 * by add and finish (KP_E_INVALID_ARG). A negative delta clears it.
 */
void kp_batch_builder_set_last_offset_delta(struct kp_batch_builder *b, int32_t delta);

/*
 * Appends a record. offset_delta is KP_OFFSET_DELTA_AUTO or a value greater
 * than the previous record's (gaps allowed, for the cleaner). timestamp is
 * absolute; Key and Value may be null (len -1); headers[0..header_count)
 * must have non-null keys.
 * Returns 0; KP_E_TOO_LARGE when the record does not fit under max_bytes
 * (nothing is added: finish this batch and start another);
 * KP_E_INVALID_ARG on a bad delta, length or header key; KP_E_NOMEM.
 * Only KP_E_NOMEM leaves the builder unusable.
 */
KP_MUST_CHECK int kp_batch_builder_add(struct kp_batch_builder *b, int32_t offset_delta,
                                       int64_t timestamp, struct kp_bytes key,
                                       struct kp_bytes value,
                                       const struct kp_record_header *headers, size_t header_count);

/* Uncompressed size of the batch so far (61 + records). */
size_t kp_batch_builder_size(const struct kp_batch_builder *b);

/*
 * Appends the complete batch to `out` (or completes it there, after
 * kp_batch_builder_write_into): compresses the records when the
 * codec is not none, and sets LastOffsetDelta, MaxTimestamp (BaseTimestamp
 * when there are no records), RecordCount, BatchLength and the CRC.
 * A batch without records needs kp_batch_builder_set_last_offset_delta.
 * Returns 0, KP_E_INVALID_ARG, KP_E_TOO_LARGE (out's ceiling, or a batch
 * above INT32_MAX), KP_E_COMPRESSION, KP_E_NOMEM; out->len is restored on
 * failure. The builder is left as it was: free it, or finish again.
 */
KP_MUST_CHECK int kp_batch_builder_finish(struct kp_batch_builder *b, struct kp_writer *out);

void kp_batch_builder_free(struct kp_batch_builder *b);

/* ---------------------------------------------------------------- rewrites */

/*
 * In-place rewrites of a batch that kp_batch_parse* accepted: `batch` must
 * point at least at its 61-byte header. BaseOffset and PartitionLeaderEpoch
 * lie outside the CRC, so it stays valid.
 */
void kp_batch_set_base_offset(uint8_t *batch, int64_t base_offset);
void kp_batch_set_leader_epoch(uint8_t *batch, int32_t epoch);

/*
 * Marks batch[0..size) as LogAppendTime with MaxTimestamp = ts (Kafka keeps
 * BaseTimestamp) and recomputes the CRC. The old CRC is checked in the same
 * pass, so a damaged batch is never given a valid CRC.
 * Returns 0, KP_E_BAD_LENGTH (size is not the batch's size), KP_E_MAGIC,
 * or KP_E_CRC (batch left untouched).
 */
KP_MUST_CHECK int kp_batch_set_log_append_time(uint8_t *batch, size_t size, int64_t ts);

/*
 * Sets batch[0..size)'s MaxTimestamp to ts and recomputes the CRC, checking
 * the old one in the same pass (as kp_batch_set_log_append_time): for a
 * producer's batch whose MaxTimestamp is not its records' largest (sarama
 * sends -1), as Kafka's LogValidator corrects it.
 * Returns 0, KP_E_BAD_LENGTH, KP_E_MAGIC or KP_E_CRC (batch left untouched).
 */
KP_MUST_CHECK int kp_batch_set_max_timestamp(uint8_t *batch, size_t size, int64_t ts);

/*
 * The largest record timestamp (BaseTimestamp + TimestampDelta) of the
 * batch batch[0..size) (decompressed under max_decompressed), into
 * *max_ts; BaseTimestamp when it has no records. Reads each record's length
 * and TimestampDelta only; the records must fill the block exactly.
 * Returns 0, an error of kp_batch_iter_init, or KP_E_CORRUPT.
 */
KP_MUST_CHECK int kp_batch_records_max_timestamp(const uint8_t *batch, size_t size,
                                                 size_t max_decompressed, int64_t *max_ts);

#endif
