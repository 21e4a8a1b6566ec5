/*
 * samsa-protocol: RecordBatch v2 parsing, record iteration, building and
 * in-place rewrites (see record_batch.h).
 *
 * Every byte of a batch is untrusted: lengths are range-checked as signed
 * 32-bit values before use, and reads go through bounded readers. A
 * detected corruption records the file and line that found it (in the
 * caller's reader for kp_batch_read, in the iterator for records).
 */
#include <samsa-protocol/alloc.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/record_batch.h>

#include <string.h>

/* Field offsets in the batch header. */
#define OFF_BATCH_LENGTH 8
#define OFF_MAGIC 16
#define OFF_CRC 17
#define OFF_ATTRIBUTES 21
#define OFF_MAX_TIMESTAMP 35
#define OFF_PRODUCER_ID 43

/* A legacy message needs BatchLength >= 5 to reach its magic byte. */
#define LEGACY_MIN_LENGTH (OFF_MAGIC + 1 - KP_BATCH_LOG_OVERHEAD)

/* ---------------------------------------------------------------- helpers */

static bool add_i64(int64_t a, int64_t b, int64_t *sum)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
        return false;
    }
    *sum = a + b;
    return true;
}

static bool sub_i64(int64_t a, int64_t b, int64_t *diff)
{
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) {
        return false;
    }
    *diff = a - b;
    return true;
}

/* Records `code` in r (first error wins) and returns it. */
static int fail_at(struct kp_reader *r, int code, const char *file, int line)
{
    kp_rd_fail_at(r, code, file, line);
    return code;
}
#define FAIL(r, code) fail_at((r), (code), __FILE__, __LINE__)

/* Decodes the 61-byte header at p; the caller has checked the 61 bytes. */
static void decode_header(const uint8_t *p, struct kp_batch_header *h)
{
    struct kp_reader hr;
    kp_rd_init(&hr, p, KP_BATCH_HEADER_SIZE);
    h->BaseOffset = kp_rd_i64(&hr);
    h->BatchLength = kp_rd_i32(&hr);
    h->PartitionLeaderEpoch = kp_rd_i32(&hr);
    h->Magic = kp_rd_i8(&hr);
    h->CRC = kp_rd_u32(&hr);
    h->Attributes = kp_rd_i16(&hr);
    h->LastOffsetDelta = kp_rd_i32(&hr);
    h->BaseTimestamp = kp_rd_i64(&hr);
    h->MaxTimestamp = kp_rd_i64(&hr);
    h->ProducerId = kp_rd_i64(&hr);
    h->ProducerEpoch = kp_rd_i16(&hr);
    h->BaseSequence = kp_rd_i32(&hr);
    h->RecordCount = kp_rd_i32(&hr);
}

/*
 * The checks shared by kp_batch_read and kp_batch_peek, on the `avail`
 * bytes at p: enough bytes, BatchLength's range, the magic. `whole`: the
 * complete batch must be present (else only the 61-byte header). Fills
 * BaseOffset, BatchLength and, once visible, PartitionLeaderEpoch and
 * Magic. Errors are recorded in r; KP_AGAIN is not.
 */
static int check_frame(struct kp_reader *r, const uint8_t *p, size_t avail, bool whole,
                       struct kp_batch_header *h)
{
    if (avail < KP_BATCH_LOG_OVERHEAD) {
        return KP_AGAIN;
    }
    h->BaseOffset = (int64_t)kp_load_be64(p);
    h->BatchLength = (int32_t)kp_load_be32(p + OFF_BATCH_LENGTH);
    if (h->BatchLength < 0 || h->BatchLength > INT32_MAX - KP_BATCH_LOG_OVERHEAD) {
        return FAIL(r, KP_E_BAD_LENGTH);
    }
    bool legacy_visible = avail > OFF_MAGIC && p[OFF_MAGIC] != KP_BATCH_MAGIC;
    if (h->BatchLength < KP_BATCH_MIN_LENGTH &&
        (h->BatchLength < LEGACY_MIN_LENGTH || !legacy_visible)) {
        /* too short for a v2 batch; a shorter legacy message is let through
         * to the magic check below so that callers can recognise it */
        return FAIL(r, KP_E_BAD_LENGTH);
    }
    size_t size = kp_batch_size(h);
    if (whole && avail < size) {
        return KP_AGAIN;
    }
    if (avail <= OFF_MAGIC) {
        return KP_AGAIN;
    }
    h->PartitionLeaderEpoch = (int32_t)kp_load_be32(p + KP_BATCH_LOG_OVERHEAD);
    h->Magic = (int8_t)p[OFF_MAGIC];
    if (h->Magic != KP_BATCH_MAGIC) {
        return FAIL(r, KP_E_MAGIC);
    }
    if (avail < KP_BATCH_HEADER_SIZE) {
        return KP_AGAIN;
    }
    return 0;
}

/* The record-count rules of `mode` on a decoded header. */
static int check_counts(struct kp_reader *r, enum kp_batch_mode mode,
                        const struct kp_batch_header *h)
{
    if (h->RecordCount < 0 || h->LastOffsetDelta < 0) {
        return FAIL(r, KP_E_CORRUPT);
    }
    if (mode == KP_BATCH_STRICT) {
        /* producers number their records 0..RecordCount-1 */
        if (h->RecordCount == 0 || h->LastOffsetDelta != h->RecordCount - 1) {
            return FAIL(r, KP_E_CORRUPT);
        }
    } else if (h->LastOffsetDelta < h->RecordCount - 1) {
        /* the cleaner leaves gaps, never more records than offsets */
        return FAIL(r, KP_E_CORRUPT);
    }
    if (kp_batch_codec(h) == KP_CODEC_NONE) {
        size_t body = kp_batch_size(h) - KP_BATCH_HEADER_SIZE;
        if ((size_t)h->RecordCount > body / KP_RECORD_MIN_SIZE) {
            return FAIL(r, KP_E_CORRUPT);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- parsing */

int kp_batch_read(struct kp_reader *r, enum kp_batch_mode mode, struct kp_batch_header *h)
{
    memset(h, 0, sizeof *h);
    if (r->err != 0) {
        return r->err;
    }
    size_t avail = kp_rd_remaining(r);
    const uint8_t *p = avail > 0 ? r->buf + r->off : NULL;

    int rc = check_frame(r, p, avail, true, h);
    if (rc != 0) {
        return rc;
    }
    size_t size = kp_batch_size(h);
    decode_header(p, h);

    uint32_t crc = kp_crc32c(0, p + KP_BATCH_CRC_START, size - KP_BATCH_CRC_START);
    if (crc != h->CRC) {
        return FAIL(r, KP_E_CRC);
    }
    rc = check_counts(r, mode, h);
    if (rc != 0) {
        return rc;
    }
    kp_rd_skip(r, size);
    return r->err;
}

static int parse(const uint8_t *p, size_t len, enum kp_batch_mode mode, struct kp_batch_header *h,
                 size_t *batch_size)
{
    struct kp_reader r;
    kp_rd_init(&r, p, len);
    int rc = kp_batch_read(&r, mode, h);
    if (rc == KP_AGAIN && len < KP_BATCH_LOG_OVERHEAD) {
        *batch_size = KP_BATCH_LOG_OVERHEAD;
    } else if (rc == KP_E_BAD_LENGTH) {
        *batch_size = 0;
    } else {
        *batch_size = kp_batch_size(h);
    }
    return rc;
}

int kp_batch_parse(const uint8_t *p, size_t len, struct kp_batch_header *h, size_t *batch_size)
{
    return parse(p, len, KP_BATCH_STRICT, h, batch_size);
}

int kp_batch_parse_lenient(const uint8_t *p, size_t len, struct kp_batch_header *h,
                           size_t *batch_size)
{
    return parse(p, len, KP_BATCH_LENIENT, h, batch_size);
}

int kp_batch_peek(const uint8_t *p, size_t len, struct kp_batch_header *h, size_t *batch_size)
{
    struct kp_reader r;
    kp_rd_init(&r, p, len);
    memset(h, 0, sizeof *h);
    *batch_size = 0;
    int rc = check_frame(&r, p, p != NULL ? len : 0, false, h);
    if (rc == 0) {
        decode_header(p, h);
    }
    if (rc == 0 || rc == KP_E_MAGIC) {
        *batch_size = kp_batch_size(h);
    }
    return rc;
}

/* ---------------------------------------------------------------- records */

static int iter_fail_at(struct kp_batch_iter *it, int code, int cause, const char *file, int line)
{
    if (it->err == 0) {
        it->err = code;
        it->cause = cause;
        it->err_file = file;
        it->err_line = line;
    }
    return it->err;
}
#define ITER_FAIL(it, code, cause) iter_fail_at((it), (code), (cause), __FILE__, __LINE__)

int kp_batch_iter_init(struct kp_batch_iter *it, const uint8_t *batch, size_t size,
                       size_t max_decompressed)
{
    memset(it, 0, sizeof *it);
    kp_wr_init(&it->plain, 0);
    kp_rd_init(&it->rd, NULL, 0);
    it->prev_delta = -1;

    size_t batch_size = 0;
    int rc = kp_batch_peek(batch, size, &it->h, &batch_size);
    if (rc == KP_AGAIN || (rc == 0 && batch_size != size)) {
        /* the caller hands over whole batches: a size mismatch is damage */
        rc = KP_E_BAD_LENGTH;
    }
    if (rc != 0) {
        return ITER_FAIL(it, rc, 0);
    }
    const struct kp_batch_header *h = &it->h;
    if (h->RecordCount < 0 || h->LastOffsetDelta < 0 || h->LastOffsetDelta < h->RecordCount - 1) {
        return ITER_FAIL(it, KP_E_CORRUPT, 0);
    }

    int codec = kp_batch_codec(h);
    const uint8_t *body = batch + KP_BATCH_HEADER_SIZE;
    size_t body_len = size - KP_BATCH_HEADER_SIZE;
    if (codec > KP_CODEC_MAX) {
        return ITER_FAIL(it, KP_E_UNSUPPORTED, 0);
    }
    if (codec == KP_CODEC_NONE || (body_len == 0 && h->RecordCount == 0)) {
        /* empty batches kept by the cleaner have no block to decompress */
        kp_rd_init(&it->rd, body, body_len);
    } else {
        kp_wr_init(&it->plain, max_decompressed);
        rc = kp_decompress(codec, body, body_len, max_decompressed, &it->plain);
        if (rc != 0) {
            return ITER_FAIL(it, rc, 0);
        }
        kp_rd_init(&it->rd, it->plain.buf, it->plain.len);
    }
    /* a claimed count never drives more work than the bytes present */
    if ((size_t)h->RecordCount > kp_rd_remaining(&it->rd) / KP_RECORD_MIN_SIZE) {
        return ITER_FAIL(it, KP_E_CORRUPT, 0);
    }
    return 0;
}

/* Walks HeaderCount headers in rr, checking each; false on damage. */
static bool skip_headers(struct kp_reader *rr, int32_t count)
{
    for (int32_t i = 0; i < count && rr->err == 0; i++) {
        struct kp_bytes key = kp_rd_varint_bytes(rr);
        if (rr->err == 0 && key.len < 0) {
            return false; /* header keys are never null */
        }
        (void)kp_rd_varint_bytes(rr);
    }
    return rr->err == 0;
}

int kp_batch_iter_next(struct kp_batch_iter *it, struct kp_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->Key = KP_BYTES_NULL;
    rec->Value = KP_BYTES_NULL;
    if (it->err != 0) {
        return it->err;
    }
    struct kp_reader *r = &it->rd;
    const struct kp_batch_header *h = &it->h;
    if (it->index >= h->RecordCount) {
        if (kp_rd_remaining(r) != 0) {
            /* bytes after the last record: more records than RecordCount */
            return ITER_FAIL(it, KP_E_CORRUPT, KP_E_TRAILING);
        }
        return KP_ITER_END;
    }

    int32_t length = kp_rd_varint(r);
    if (r->err != 0) {
        /* the block ended early: fewer records than RecordCount */
        return ITER_FAIL(it, KP_E_CORRUPT, r->err);
    }
    if (length < KP_RECORD_MIN_SIZE - 1) {
        return ITER_FAIL(it, KP_E_CORRUPT, KP_E_BAD_LENGTH);
    }
    struct kp_bytes raw = kp_rd_raw(r, length);
    if (r->err != 0) {
        return ITER_FAIL(it, KP_E_CORRUPT, r->err);
    }

    /* the record's fields must consume exactly `length` bytes */
    struct kp_reader rr;
    kp_rd_init(&rr, raw.ptr, (size_t)raw.len);
    rec->Attributes = kp_rd_i8(&rr);
    rec->TimestampDelta = kp_rd_varlong(&rr);
    rec->OffsetDelta = kp_rd_varint(&rr);
    rec->Key = kp_rd_varint_bytes(&rr);
    rec->Value = kp_rd_varint_bytes(&rr);
    rec->HeaderCount = kp_rd_varint(&rr);
    if (rr.err != 0) {
        return ITER_FAIL(it, KP_E_CORRUPT, rr.err);
    }
    /* each header takes at least two bytes */
    if (rec->HeaderCount < 0 || (size_t)rec->HeaderCount > kp_rd_remaining(&rr) / 2) {
        return ITER_FAIL(it, KP_E_CORRUPT, KP_E_BAD_LENGTH);
    }
    size_t headers_at = rr.off;
    if (!skip_headers(&rr, rec->HeaderCount)) {
        return ITER_FAIL(it, KP_E_CORRUPT, rr.err);
    }
    rec->Headers.ptr = raw.ptr + headers_at;
    rec->Headers.len = (int32_t)(rr.off - headers_at);
    if (kp_rd_remaining(&rr) != 0) {
        return ITER_FAIL(it, KP_E_CORRUPT, KP_E_TRAILING);
    }

    /* offsets strictly increase and stay within the batch */
    if (rec->OffsetDelta <= it->prev_delta || rec->OffsetDelta > h->LastOffsetDelta) {
        return ITER_FAIL(it, KP_E_CORRUPT, 0);
    }
    if (!add_i64(h->BaseOffset, rec->OffsetDelta, &rec->Offset)) {
        return ITER_FAIL(it, KP_E_CORRUPT, 0);
    }
    if (kp_batch_timestamp_type(h) == KP_TS_LOG_APPEND_TIME) {
        rec->Timestamp = h->MaxTimestamp;
    } else if (!add_i64(h->BaseTimestamp, rec->TimestampDelta, &rec->Timestamp)) {
        return ITER_FAIL(it, KP_E_CORRUPT, 0);
    }

    it->index++;
    it->prev_delta = rec->OffsetDelta;
    if (it->index == h->RecordCount && kp_rd_remaining(r) != 0) {
        /* do not hand out the last record of a block that goes on */
        return ITER_FAIL(it, KP_E_CORRUPT, KP_E_TRAILING);
    }
    return 0;
}

void kp_batch_iter_free(struct kp_batch_iter *it)
{
    if (it == NULL) {
        return;
    }
    kp_wr_free(&it->plain);
    kp_rd_init(&it->rd, NULL, 0);
}

void kp_record_headers_init(struct kp_header_iter *hi, const struct kp_record *rec)
{
    if (rec->Headers.ptr != NULL && rec->Headers.len > 0) {
        kp_rd_init(&hi->rd, rec->Headers.ptr, (size_t)rec->Headers.len);
    } else {
        kp_rd_init(&hi->rd, NULL, 0);
    }
    hi->left = rec->HeaderCount;
}

int kp_record_header_next(struct kp_header_iter *hi, struct kp_record_header *hdr)
{
    hdr->Key = KP_STR_NULL;
    hdr->Value = KP_BYTES_NULL;
    if (hi->rd.err != 0) {
        return KP_E_CORRUPT;
    }
    if (hi->left <= 0) {
        if (kp_rd_remaining(&hi->rd) != 0) {
            kp_rd_fail(&hi->rd, KP_E_TRAILING);
            return KP_E_CORRUPT;
        }
        return KP_ITER_END;
    }
    struct kp_bytes key = kp_rd_varint_bytes(&hi->rd);
    struct kp_bytes value = kp_rd_varint_bytes(&hi->rd);
    if (hi->rd.err == 0 && key.len < 0) {
        kp_rd_fail(&hi->rd, KP_E_CORRUPT);
    }
    if (hi->rd.err != 0) {
        return KP_E_CORRUPT;
    }
    hdr->Key.ptr = (const char *)key.ptr;
    hdr->Key.len = key.len;
    hdr->Value = value;
    hi->left--;
    return 0;
}

/* ---------------------------------------------------------------- building */

int kp_batch_builder_init(struct kp_batch_builder *b, int codec, int64_t base_offset,
                          int64_t base_timestamp, int64_t producer_id, int16_t producer_epoch,
                          int32_t base_sequence, size_t max_bytes)
{
    memset(b, 0, sizeof *b);
    kp_wr_init(&b->records, 0);
    b->codec = KP_CODEC_NONE;
    b->PartitionLeaderEpoch = -1;
    b->BaseOffset = base_offset;
    b->BaseTimestamp = base_timestamp;
    b->MaxTimestamp = INT64_MIN;
    b->ProducerId = producer_id;
    b->ProducerEpoch = producer_epoch;
    b->BaseSequence = base_sequence;
    b->LastOffsetDelta = -1;
    b->last_offset_override = -1;
    if (codec < KP_CODEC_NONE || codec > KP_CODEC_MAX) {
        return KP_E_UNSUPPORTED;
    }
    if (max_bytes < KP_BATCH_HEADER_SIZE) {
        return KP_E_INVALID_ARG;
    }
    /* BatchLength is an int32: the whole batch is at most INT32_MAX bytes */
    if (max_bytes > INT32_MAX) {
        max_bytes = INT32_MAX;
    }
    b->codec = codec;
    b->max_bytes = max_bytes;
    kp_wr_init(&b->records, max_bytes - KP_BATCH_HEADER_SIZE);
    return 0;
}

/* The writer the records go to, and where they start in it. */
static bool in_place(const struct kp_batch_builder *b)
{
    return b->out != NULL && b->codec == KP_CODEC_NONE;
}

static struct kp_writer *records_writer(struct kp_batch_builder *b)
{
    return in_place(b) ? b->out : &b->records;
}

static size_t records_len(const struct kp_batch_builder *b)
{
    return in_place(b) ? b->out->len - b->out_start - KP_BATCH_HEADER_SIZE : b->records.len;
}

int kp_batch_builder_write_into(struct kp_batch_builder *b, struct kp_writer *out)
{
    if (b->max_bytes == 0 || b->out != NULL || b->RecordCount > 0 || b->records.len > 0 ||
        out == NULL) {
        return KP_E_INVALID_ARG;
    }
    if (out->err != 0) {
        return out->err;
    }
    if (out->max < out->len || out->max - out->len < KP_BATCH_HEADER_SIZE) {
        return KP_E_TOO_LARGE;
    }
    size_t start = out->len;
    if (kp_wr_reserve(out, KP_BATCH_HEADER_SIZE) == NULL) {
        int err = out->err;
        out->err = 0;
        out->len = start;
        return err;
    }
    b->out = out;
    b->out_start = start;
    return 0;
}

void kp_batch_builder_set_timestamp_type(struct kp_batch_builder *b, enum kp_timestamp_type type)
{
    if (type == KP_TS_LOG_APPEND_TIME) {
        b->Attributes = (int16_t)(b->Attributes | KP_BATCH_ATTR_LOG_APPEND_TIME);
    } else {
        b->Attributes = (int16_t)(b->Attributes & ~KP_BATCH_ATTR_LOG_APPEND_TIME);
    }
}

void kp_batch_builder_set_flags(struct kp_batch_builder *b, bool transactional, bool control)
{
    int attrs = b->Attributes & ~(KP_BATCH_ATTR_TRANSACTIONAL | KP_BATCH_ATTR_CONTROL);
    if (transactional) {
        attrs |= KP_BATCH_ATTR_TRANSACTIONAL;
    }
    if (control) {
        attrs |= KP_BATCH_ATTR_CONTROL;
    }
    b->Attributes = (int16_t)attrs;
}

void kp_batch_builder_set_leader_epoch(struct kp_batch_builder *b, int32_t epoch)
{
    b->PartitionLeaderEpoch = epoch;
}

void kp_batch_builder_set_last_offset_delta(struct kp_batch_builder *b, int32_t delta)
{
    b->last_offset_override = delta < 0 ? -1 : delta;
}

/* Encoded size of record-style bytes: varint length, then the bytes. */
static uint64_t varint_bytes_size(int32_t len)
{
    return len < 0 ? 1 : kp_varint_size(len) + (uint64_t)len;
}

static bool bytes_ok(struct kp_bytes v)
{
    return v.len >= -1 && (v.len <= 0 || v.ptr != NULL);
}

static uint64_t zigzag64(int64_t v)
{
    uint64_t u = (uint64_t)v;
    return (u << 1) ^ (0u - (u >> 63));
}

static uint8_t *put_uvarlong(uint8_t *d, uint64_t v)
{
    while (v >= 0x80) {
        *d++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *d++ = (uint8_t)v;
    return d;
}

static uint8_t *put_varint(uint8_t *d, int32_t v)
{
    return put_uvarlong(d, zigzag64(v));
}

static uint8_t *put_varint_bytes(uint8_t *d, struct kp_bytes v)
{
    if (v.len < 0) {
        return put_varint(d, -1);
    }
    d = put_varint(d, v.len);
    if (v.len > 0) {
        memcpy(d, v.ptr, (size_t)v.len);
    }
    return d + v.len;
}

int kp_batch_builder_add(struct kp_batch_builder *b, int32_t offset_delta, int64_t timestamp,
                         struct kp_bytes key, struct kp_bytes value,
                         const struct kp_record_header *headers, size_t header_count)
{
    if (b->records.err != 0) {
        return b->records.err;
    }
    if (b->max_bytes == 0) {
        return KP_E_INVALID_ARG; /* init failed */
    }
    int32_t delta = offset_delta;
    if (offset_delta == KP_OFFSET_DELTA_AUTO) {
        if (b->LastOffsetDelta == INT32_MAX) {
            return KP_E_TOO_LARGE;
        }
        delta = b->LastOffsetDelta + 1;
    } else if (offset_delta < 0 || offset_delta <= b->LastOffsetDelta) {
        return KP_E_INVALID_ARG;
    }
    if (b->last_offset_override >= 0 && delta > b->last_offset_override) {
        return KP_E_INVALID_ARG;
    }
    if (b->RecordCount == INT32_MAX) {
        return KP_E_TOO_LARGE;
    }
    int64_t ts_delta = 0;
    if (!sub_i64(timestamp, b->BaseTimestamp, &ts_delta)) {
        return KP_E_INVALID_ARG;
    }
    if (!bytes_ok(key) || !bytes_ok(value) || header_count > INT32_MAX ||
        (header_count > 0 && headers == NULL)) {
        return KP_E_INVALID_ARG;
    }

    /* exact size first: a record that does not fit leaves no trace */
    uint64_t body = 1 + kp_varlong_size(ts_delta) + kp_varint_size(delta) +
                    varint_bytes_size(key.len) + varint_bytes_size(value.len) +
                    kp_varint_size((int32_t)header_count);
    for (size_t i = 0; i < header_count; i++) {
        const struct kp_record_header *hd = &headers[i];
        if (hd->Key.len < 0 || (hd->Key.len > 0 && hd->Key.ptr == NULL) || !bytes_ok(hd->Value)) {
            return KP_E_INVALID_ARG;
        }
        body += varint_bytes_size(hd->Key.len) + varint_bytes_size(hd->Value.len);
        if (body > INT32_MAX) {
            return KP_E_TOO_LARGE;
        }
    }
    if (body > INT32_MAX) {
        return KP_E_TOO_LARGE;
    }
    uint64_t total = kp_varint_size((int32_t)body) + body;
    struct kp_writer *w = records_writer(b);
    size_t room = b->max_bytes - KP_BATCH_HEADER_SIZE - records_len(b);
    if (w->max - w->len < room) {
        room = w->max - w->len;
    }
    if (total > room) {
        return KP_E_TOO_LARGE;
    }

    /* one reservation, then the fields written straight into it */
    size_t before = w->len;
    uint8_t *d = kp_wr_reserve(w, (size_t)total);
    if (d == NULL) {
        int err = w->err;
        if (w == b->out) {
            w->err = 0; /* out stays usable: only this record is lost */
        }
        w->len = before;
        return err;
    }
    d = put_varint(d, (int32_t)body);
    *d++ = 0; /* record Attributes: unused by Kafka */
    d = put_uvarlong(d, zigzag64(ts_delta));
    d = put_varint(d, delta);
    d = put_varint_bytes(d, key);
    d = put_varint_bytes(d, value);
    d = put_varint(d, (int32_t)header_count);
    for (size_t i = 0; i < header_count; i++) {
        struct kp_bytes hkey = {(const uint8_t *)headers[i].Key.ptr, headers[i].Key.len};
        d = put_varint_bytes(d, hkey);
        d = put_varint_bytes(d, headers[i].Value);
    }
    b->RecordCount++;
    b->LastOffsetDelta = delta;
    if (timestamp > b->MaxTimestamp) {
        b->MaxTimestamp = timestamp;
    }
    return 0;
}

size_t kp_batch_builder_size(const struct kp_batch_builder *b)
{
    return KP_BATCH_HEADER_SIZE + records_len(b);
}

/* The 61 bytes of the header at batch. */
static void put_header(uint8_t *batch, const struct kp_batch_builder *b, int codec,
                       int32_t last_delta, int64_t max_ts)
{
    kp_store_be64(batch, (uint64_t)b->BaseOffset);
    kp_store_be32(batch + OFF_BATCH_LENGTH, 0); /* set with the CRC */
    kp_store_be32(batch + KP_BATCH_LOG_OVERHEAD, (uint32_t)b->PartitionLeaderEpoch);
    batch[OFF_MAGIC] = (uint8_t)KP_BATCH_MAGIC;
    kp_store_be32(batch + OFF_CRC, 0);
    kp_store_be16(batch + OFF_ATTRIBUTES, (uint16_t)(b->Attributes | codec));
    kp_store_be32(batch + OFF_ATTRIBUTES + 2, (uint32_t)last_delta);
    kp_store_be64(batch + OFF_ATTRIBUTES + 6, (uint64_t)b->BaseTimestamp);
    kp_store_be64(batch + OFF_MAX_TIMESTAMP, (uint64_t)max_ts);
    kp_store_be64(batch + OFF_PRODUCER_ID, (uint64_t)b->ProducerId);
    kp_store_be16(batch + OFF_PRODUCER_ID + 8, (uint16_t)b->ProducerEpoch);
    kp_store_be32(batch + OFF_PRODUCER_ID + 10, (uint32_t)b->BaseSequence);
    kp_store_be32(batch + OFF_PRODUCER_ID + 14, (uint32_t)b->RecordCount);
}

int kp_batch_builder_finish(struct kp_batch_builder *b, struct kp_writer *out)
{
    if (b->records.err != 0) {
        return b->records.err;
    }
    if (out->err != 0) {
        return out->err;
    }
    if (b->max_bytes == 0 || (b->out != NULL && b->out != out)) {
        return KP_E_INVALID_ARG; /* init failed, or not the writer it was built in */
    }
    int32_t last_delta = b->LastOffsetDelta;
    if (b->last_offset_override >= 0) {
        if (b->last_offset_override < b->LastOffsetDelta) {
            return KP_E_INVALID_ARG;
        }
        last_delta = b->last_offset_override;
    }
    if (last_delta < 0) {
        return KP_E_INVALID_ARG; /* no records and no override */
    }
    /* an empty batch carries no records block, so no codec (as Kafka) */
    int codec = b->RecordCount > 0 ? b->codec : KP_CODEC_NONE;
    int64_t max_ts = b->RecordCount > 0 ? b->MaxTimestamp : b->BaseTimestamp;
    size_t before = out->len; /* restored on failure */
    size_t start = b->out != NULL ? b->out_start : out->len;
    if (b->out == NULL) {
        size_t need = KP_BATCH_HEADER_SIZE + (codec == KP_CODEC_NONE ? b->records.len : 0);
        if (out->max < out->len || out->max - out->len < need) {
            return KP_E_TOO_LARGE; /* checked first: the writer stays usable */
        }
        (void)kp_wr_reserve(out, KP_BATCH_HEADER_SIZE);
    }
    int rc = out->err;
    if (rc == 0 && !in_place(b)) {
        if (codec == KP_CODEC_NONE) {
            kp_wr_raw(out, b->records.buf, b->records.len);
            rc = out->err;
        } else {
            rc = kp_compress(codec, b->records.buf, b->records.len, out);
        }
    }
    if (rc != 0) {
        goto out_drop_batch;
    }
    size_t size = out->len - start;
    if (size > INT32_MAX) {
        rc = KP_E_TOO_LARGE;
        goto out_drop_batch;
    }
    uint8_t *batch = out->buf + start;
    put_header(batch, b, codec, last_delta, max_ts);
    kp_store_be32(batch + OFF_BATCH_LENGTH, (uint32_t)(size - KP_BATCH_LOG_OVERHEAD));
    kp_store_be32(batch + OFF_CRC,
                  kp_crc32c(0, batch + KP_BATCH_CRC_START, size - KP_BATCH_CRC_START));
    b->out = NULL; /* done: the builder writes there no more */
    return 0;

out_drop_batch:
    out->len = before;
    out->err = 0;
    return rc;
}

void kp_batch_builder_free(struct kp_batch_builder *b)
{
    if (b == NULL) {
        return;
    }
    kp_wr_free(&b->records);
}

/* ---------------------------------------------------------------- rewrites */

void kp_batch_set_base_offset(uint8_t *batch, int64_t base_offset)
{
    kp_store_be64(batch, (uint64_t)base_offset);
}

void kp_batch_set_leader_epoch(uint8_t *batch, int32_t epoch)
{
    kp_store_be32(batch + KP_BATCH_LOG_OVERHEAD, (uint32_t)epoch);
}

static int rewrite_front(uint8_t *batch, size_t size, bool log_append, int64_t ts)
{
    if (size < KP_BATCH_HEADER_SIZE) {
        return KP_E_BAD_LENGTH;
    }
    int32_t length = (int32_t)kp_load_be32(batch + OFF_BATCH_LENGTH);
    if (length < KP_BATCH_MIN_LENGTH || (size_t)length != size - KP_BATCH_LOG_OVERHEAD) {
        return KP_E_BAD_LENGTH;
    }
    if (batch[OFF_MAGIC] != KP_BATCH_MAGIC) {
        return KP_E_MAGIC;
    }
    /*
     * Only bytes [21, 43) change. The CRC of the unchanged tail [43, end)
     * is computed once and combined with the old and the new front, so the
     * old CRC is verified without a second pass over the records.
     */
    const size_t front = OFF_PRODUCER_ID - KP_BATCH_CRC_START;
    size_t tail = size - OFF_PRODUCER_ID;
    uint32_t tail_crc = kp_crc32c(0, batch + OFF_PRODUCER_ID, tail);
    uint32_t old_crc =
        kp_crc32c_combine(kp_crc32c(0, batch + KP_BATCH_CRC_START, front), tail_crc, tail);
    if (old_crc != kp_load_be32(batch + OFF_CRC)) {
        return KP_E_CRC;
    }
    if (log_append) {
        uint16_t attrs = kp_load_be16(batch + OFF_ATTRIBUTES);
        kp_store_be16(batch + OFF_ATTRIBUTES, (uint16_t)(attrs | KP_BATCH_ATTR_LOG_APPEND_TIME));
    }
    kp_store_be64(batch + OFF_MAX_TIMESTAMP, (uint64_t)ts);
    uint32_t new_crc =
        kp_crc32c_combine(kp_crc32c(0, batch + KP_BATCH_CRC_START, front), tail_crc, tail);
    kp_store_be32(batch + OFF_CRC, new_crc);
    return 0;
}

int kp_batch_set_log_append_time(uint8_t *batch, size_t size, int64_t ts)
{
    return rewrite_front(batch, size, true, ts);
}

int kp_batch_set_max_timestamp(uint8_t *batch, size_t size, int64_t ts)
{
    return rewrite_front(batch, size, false, ts);
}

int kp_batch_records_max_timestamp(const uint8_t *batch, size_t size, size_t max_decompressed,
                                   int64_t *max_ts)
{
    struct kp_batch_iter it;
    int err = kp_batch_iter_init(&it, batch, size, max_decompressed);
    if (err != 0) {
        kp_batch_iter_free(&it);
        return err;
    }
    /*
     * Only each record's length and TimestampDelta are read: a third of
     * the work of kp_batch_iter_next, on the produce path of every batch.
     * Records must still fill the block exactly, RecordCount of them.
     */
    struct kp_reader *r = &it.rd;
    int64_t base = it.h.BaseTimestamp;
    int64_t max = base;
    for (int32_t i = 0; i < it.h.RecordCount && err == 0; i++) {
        int32_t len = kp_rd_varint(r);
        if (r->err != 0 || len < KP_RECORD_MIN_SIZE - 1 || (size_t)len > kp_rd_remaining(r)) {
            err = KP_E_CORRUPT;
            break;
        }
        struct kp_reader rr;
        kp_rd_init(&rr, r->buf + r->off, (size_t)len);
        kp_rd_skip(r, (size_t)len);
        (void)kp_rd_i8(&rr); /* Attributes */
        int64_t delta = kp_rd_varlong(&rr);
        int64_t ts = 0;
        if (rr.err != 0 || !add_i64(base, delta, &ts)) {
            err = KP_E_CORRUPT;
            break;
        }
        if (i == 0 || ts > max) {
            max = ts;
        }
    }
    if (err == 0 && kp_rd_remaining(r) != 0) {
        err = KP_E_CORRUPT;
    }
    kp_batch_iter_free(&it);
    if (err != 0) {
        return err;
    }
    *max_ts = max;
    return 0;
}
