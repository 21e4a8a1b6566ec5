/*
 * fuzz_record_batch: RecordBatch v2 validation and record iteration, every
 * compression codec included, the way the broker meets batches: one in a
 * Produce request, and one after another in a segment file.
 *
 * Input: bytes of a segment (zero or more batches, possibly legacy
 * MessageSet entries, possibly a torn tail).
 *
 * What runs:
 *   1. kp_batch_parse (strict), kp_batch_parse_lenient and kp_batch_peek on
 *      the input: they must agree (strict accepts a subset of lenient; peek
 *      reads the same header and size).
 *   2. A copy of the input in which the CRC of every complete batch is
 *      recomputed, so the fuzzer reaches the record-count rules and the
 *      records without having to forge CRC-32C. It is walked as a segment
 *      reader does (kp_batch_read, lenient, batch after batch, skipping
 *      legacy entries by their length); no batch of it may fail its CRC.
 *      For each batch: every record is iterated (kp_batch_iter_*,
 *      decompressed with a 4 MiB ceiling) with its headers, checking
 *      offsets, slices and counts; a batch that iterates to its end is
 *      rebuilt with kp_batch_builder and must iterate to the same records;
 *      a control batch's records are read as transaction markers and the
 *      batch's marker (kp_txn_marker_batch_read) written again and read back;
 *      then the in-place rewrites (log-append time, base offset, leader
 *      epoch) must leave a batch that still parses.
 *   3. The original input walked the same way (most of it stops at a CRC)
 *      and, when it is not exactly one batch, handed to the iterator whole,
 *      which must stay memory-safe on any bytes.
 *   4. The input as a MessageSet v0/v1 (Produce v0-v2), as it is and in a
 *      copy whose top-level CRC-32s are recomputed: kp_legacy_upconvert; a
 *      batch it makes must parse strictly and hold info.count records, and
 *      down-converted to magic 0 and 1 and up-converted again it must hold
 *      the same keys and values (timestamps too in magic 1). Every valid
 *      batch of step 2 is down-converted the same way (Fetch v0-v3).
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/control.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/legacy.h>
#include <samsa-protocol/record_batch.h>

/* The broker's ceiling on a decompressed batch is its max.message.bytes
 * scale; 4 MiB keeps each input's work bounded. */
#define MAX_DECOMPRESSED ((size_t)4 * 1024 * 1024)

/* Batches with more records are not rebuilt: the check is per record. */
#define REBUILD_MAX_RECORDS 4096

/* Where a batch keeps its CRC (record_batch.h's layout). */
#define BATCH_CRC_OFFSET 17

/* The MaxTimestamp the log-append-time rewrite writes. */
#define APPEND_TIME INT64_C(0x0123456789abcdef)

/* Attribute bits the builder sets itself (the codec aside). */
#define BUILDER_ATTRS                                                                              \
    (KP_BATCH_ATTR_LOG_APPEND_TIME | KP_BATCH_ATTR_TRANSACTIONAL | KP_BATCH_ATTR_CONTROL)

/* ------------------------------------------------------------- helpers */

/* Reads every byte of a slice through a library call the compiler cannot
 * drop, so that the sanitizers see an over-long slice. */
static uint32_t touch(uint32_t crc, const uint8_t *p, int32_t len)
{
    fuzz_check(len >= -1, "a slice has a length below -1", len);
    fuzz_check(len <= 0 || p != NULL, "a non-empty slice has no bytes", len);
    return len > 0 ? kp_crc32c(crc, p, (size_t)len) : crc;
}

static bool same_header(const struct kp_batch_header *a, const struct kp_batch_header *b)
{
    return a->BaseOffset == b->BaseOffset && a->BatchLength == b->BatchLength &&
           a->PartitionLeaderEpoch == b->PartitionLeaderEpoch && a->Magic == b->Magic &&
           a->CRC == b->CRC && a->Attributes == b->Attributes &&
           a->LastOffsetDelta == b->LastOffsetDelta && a->BaseTimestamp == b->BaseTimestamp &&
           a->MaxTimestamp == b->MaxTimestamp && a->ProducerId == b->ProducerId &&
           a->ProducerEpoch == b->ProducerEpoch && a->BaseSequence == b->BaseSequence &&
           a->RecordCount == b->RecordCount;
}

static bool add_i64(int64_t a, int64_t b, int64_t *sum)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
        return false;
    }
    *sum = a + b;
    return true;
}

/* ------------------------------------------------------------- parsers */

/* The three header readers on the bytes at p must agree. */
static void check_parsers(const uint8_t *p, size_t len)
{
    struct kp_batch_header strict;
    struct kp_batch_header lenient;
    struct kp_batch_header peek;
    size_t strict_size = 0;
    size_t lenient_size = 0;
    size_t peek_size = 0;
    int rs = kp_batch_parse(p, len, &strict, &strict_size);
    int rl = kp_batch_parse_lenient(p, len, &lenient, &lenient_size);
    int rp = kp_batch_peek(p, len, &peek, &peek_size);

    if (rs == 0) {
        fuzz_check(rl == 0, "strict parsing accepts a batch that lenient parsing rejects", rl);
        fuzz_check(same_header(&strict, &lenient) && strict_size == lenient_size,
                   "strict and lenient parsing read different headers", 0);
    }
    if (rl == 0) {
        fuzz_check(lenient_size == kp_batch_size(&lenient) && lenient_size <= len &&
                       lenient_size >= KP_BATCH_HEADER_SIZE,
                   "an accepted batch has an impossible size", (int)lenient_size);
        fuzz_check(lenient.Magic == KP_BATCH_MAGIC, "an accepted batch has a wrong magic",
                   lenient.Magic);
        fuzz_check(lenient.RecordCount >= 0 && lenient.LastOffsetDelta >= 0 &&
                       lenient.LastOffsetDelta >= lenient.RecordCount - 1,
                   "an accepted batch breaks the record-count rules", lenient.RecordCount);
        fuzz_check(rp == 0 && same_header(&peek, &lenient) && peek_size == lenient_size,
                   "kp_batch_peek disagrees with kp_batch_parse_lenient", rp);
    }
    if (rs == 0) {
        fuzz_check(strict.RecordCount >= 1 && strict.LastOffsetDelta == strict.RecordCount - 1,
                   "a strictly accepted batch breaks the producer's numbering", strict.RecordCount);
    }
    /* peek needs fewer bytes than parsing, which waits for the whole batch */
    if (rl == KP_E_MAGIC) {
        fuzz_check(rp == KP_E_MAGIC && peek_size == lenient_size,
                   "kp_batch_parse_lenient sees a legacy magic that kp_batch_peek does not", rp);
    }
    if (rp == KP_E_MAGIC) {
        fuzz_check(rl == KP_E_MAGIC || rl == KP_AGAIN,
                   "kp_batch_peek sees a legacy magic that kp_batch_parse_lenient does not", rl);
    }
}

/* ------------------------------------------------------------- records */

static bool iter_init_documented(int rc)
{
    return rc == 0 || rc == KP_E_BAD_LENGTH || rc == KP_E_MAGIC || rc == KP_E_CORRUPT ||
           rc == KP_E_UNSUPPORTED || rc == KP_E_TOO_LARGE || rc == KP_E_COMPRESSION ||
           rc == KP_E_NOMEM;
}

/* Walks rec's headers, checking them; *hdrs (when not NULL) receives them in
 * a buffer the caller frees. Returns the digest of their bytes. */
static uint32_t walk_headers(const struct kp_record *rec, uint32_t crc,
                             struct kp_record_header **hdrs)
{
    struct kp_header_iter hi;
    struct kp_record_header hdr;
    kp_record_headers_init(&hi, rec);
    if (hdrs != NULL) {
        *hdrs = calloc(rec->HeaderCount > 0 ? (size_t)rec->HeaderCount : 1, sizeof **hdrs);
        fuzz_check(*hdrs != NULL, "out of memory for record headers", rec->HeaderCount);
    }
    int32_t n = 0;
    for (;;) {
        int rc = kp_record_header_next(&hi, &hdr);
        if (rc == KP_ITER_END) {
            break;
        }
        fuzz_check(rc == 0, "a header kp_batch_iter_next checked does not read back", rc);
        fuzz_check(n < rec->HeaderCount, "more headers than HeaderCount", n);
        fuzz_check(hdr.Key.len >= 0, "a record header has a null key", hdr.Key.len);
        crc = touch(crc, (const uint8_t *)hdr.Key.ptr, hdr.Key.len);
        crc = touch(crc, hdr.Value.ptr, hdr.Value.len);
        if (hdrs != NULL) {
            (*hdrs)[n] = hdr;
        }
        n++;
    }
    fuzz_check(n == rec->HeaderCount, "fewer headers than HeaderCount", n);
    return crc;
}

static bool same_headers(const struct kp_record *a, const struct kp_record *b)
{
    struct kp_header_iter ha;
    struct kp_header_iter hb;
    kp_record_headers_init(&ha, a);
    kp_record_headers_init(&hb, b);
    for (;;) {
        struct kp_record_header x;
        struct kp_record_header y;
        int ra = kp_record_header_next(&ha, &x);
        int rb = kp_record_header_next(&hb, &y);
        if (ra != rb) {
            return false;
        }
        if (ra != 0) {
            return ra == KP_ITER_END;
        }
        if (!kp_str_eq(x.Key, y.Key) || !kp_bytes_eq(x.Value, y.Value)) {
            return false;
        }
    }
}

/*
 * Rebuilds the batch `h` whose records recs[0..n) were all read, without
 * compression, and checks that the rebuilt batch parses and iterates to the
 * same records. block_len is the size of the (decompressed) records block:
 * a rebuilt block is never larger, its varints being the shortest.
 */
static void check_rebuild(const struct kp_batch_header *h, const struct kp_record *recs, int32_t n,
                          size_t block_len)
{
    struct kp_batch_builder b;
    struct kp_writer out;
    size_t max_bytes = KP_BATCH_HEADER_SIZE + block_len;
    kp_wr_init(&out, max_bytes);
    int rc = kp_batch_builder_init(&b, KP_CODEC_NONE, h->BaseOffset, h->BaseTimestamp,
                                   h->ProducerId, h->ProducerEpoch, h->BaseSequence, max_bytes);
    fuzz_check(rc == 0, "kp_batch_builder_init failed", rc);
    kp_batch_builder_set_timestamp_type(&b, kp_batch_timestamp_type(h));
    kp_batch_builder_set_flags(&b, kp_batch_is_transactional(h), kp_batch_is_control(h));
    kp_batch_builder_set_leader_epoch(&b, h->PartitionLeaderEpoch);
    kp_batch_builder_set_last_offset_delta(&b, h->LastOffsetDelta);

    for (int32_t i = 0; i < n; i++) {
        int64_t ts = 0;
        if (!add_i64(h->BaseTimestamp, recs[i].TimestampDelta, &ts)) {
            /* a log-append-time batch may carry deltas no timestamp fits:
             * the builder cannot express it, nothing to compare */
            goto out_free;
        }
        struct kp_record_header *hdrs = NULL;
        (void)walk_headers(&recs[i], 0, &hdrs);
        rc = kp_batch_builder_add(&b, recs[i].OffsetDelta, ts, recs[i].Key, recs[i].Value, hdrs,
                                  (size_t)recs[i].HeaderCount);
        free(hdrs);
        fuzz_check(rc == 0, "kp_batch_builder_add rejected a record the iterator read", rc);
    }
    rc = kp_batch_builder_finish(&b, &out);
    fuzz_check(rc == 0, "kp_batch_builder_finish failed on records the iterator read", rc);

    struct kp_batch_header nh;
    size_t nsize = 0;
    rc = kp_batch_parse_lenient(out.buf, out.len, &nh, &nsize);
    fuzz_check(rc == 0 && nsize == out.len, "a rebuilt batch does not parse", rc);
    fuzz_check(nh.BaseOffset == h->BaseOffset &&
                   nh.PartitionLeaderEpoch == h->PartitionLeaderEpoch &&
                   nh.LastOffsetDelta == h->LastOffsetDelta &&
                   nh.BaseTimestamp == h->BaseTimestamp && nh.ProducerId == h->ProducerId &&
                   nh.ProducerEpoch == h->ProducerEpoch && nh.BaseSequence == h->BaseSequence &&
                   nh.RecordCount == h->RecordCount && kp_batch_codec(&nh) == KP_CODEC_NONE &&
                   (nh.Attributes & BUILDER_ATTRS) == (h->Attributes & BUILDER_ATTRS),
               "a rebuilt batch has another header", 0);
    if (kp_batch_parse(out.buf, out.len, &nh, &nsize) != 0) {
        fuzz_check(h->RecordCount == 0 || h->LastOffsetDelta != h->RecordCount - 1,
                   "a rebuilt producer batch fails strict parsing", h->RecordCount);
    }

    struct kp_batch_iter it;
    rc = kp_batch_iter_init(&it, out.buf, out.len, MAX_DECOMPRESSED);
    fuzz_check(rc == 0, "a rebuilt batch cannot be iterated", rc);
    for (int32_t i = 0; i <= n; i++) {
        struct kp_record rec;
        rc = kp_batch_iter_next(&it, &rec);
        if (i == n) {
            fuzz_check(rc == KP_ITER_END, "a rebuilt batch has more records", rc);
            break;
        }
        fuzz_check(rc == 0, "a rebuilt batch has fewer records", rc);
        fuzz_check(rec.OffsetDelta == recs[i].OffsetDelta &&
                       rec.TimestampDelta == recs[i].TimestampDelta &&
                       kp_bytes_eq(rec.Key, recs[i].Key) && kp_bytes_eq(rec.Value, recs[i].Value) &&
                       rec.HeaderCount == recs[i].HeaderCount && same_headers(&rec, &recs[i]),
                   "a rebuilt batch holds another record", i);
    }
    kp_batch_iter_free(&it);

out_free:
    kp_batch_builder_free(&b);
    kp_wr_free(&out);
}

/* ------------------------------------------------------------- markers */

/* A control record's key and value as a transaction marker: what the key
 * reader and the marker reader say agree, and a marker re-encodes to a key
 * and value that read back the same. */
static void check_control_record(const struct kp_record *rec)
{
    int16_t type = -1;
    int rk = kp_control_key_decode(rec->Key, &type);
    fuzz_check(rk == 0 || rk == KP_E_CORRUPT, "kp_control_key_decode returned an undocumented code",
               rk);
    struct kp_txn_marker m = {-1, 0};
    int rm = kp_txn_marker_decode(rec->Key, rec->Value, &m);
    fuzz_check(rm == 0 || rm == KP_E_CORRUPT, "kp_txn_marker_decode returned an undocumented code",
               rm);
    if (rm != 0) {
        return;
    }
    fuzz_check(rk == 0 && type == m.type, "a marker's type is not its key's", rk);
    fuzz_check(m.type == KP_CONTROL_ABORT || m.type == KP_CONTROL_COMMIT,
               "a marker of neither ABORT nor COMMIT", m.type);
    uint8_t key[KP_CONTROL_KEY_SIZE];
    uint8_t value[KP_TXN_MARKER_VALUE_SIZE];
    kp_control_key_encode(key, m.type);
    kp_txn_marker_value_encode(value, m.coordinator_epoch);
    struct kp_txn_marker again = {-1, 0};
    int rc = kp_txn_marker_decode((struct kp_bytes){key, (int32_t)sizeof key},
                                  (struct kp_bytes){value, (int32_t)sizeof value}, &again);
    fuzz_check(rc == 0 && again.type == m.type && again.coordinator_epoch == m.coordinator_epoch,
               "a re-encoded marker does not read back the same", rc);
}

/*
 * kp_txn_marker_batch_read on a batch lenient parsing accepted as `h`: a
 * data batch is refused as such, a control batch answers its first record's
 * marker or an error; a marker read is written again as Kafka's leader
 * writes it (kp_txn_marker_batch_write), which parses strictly as a control
 * transactional batch of one record and reads back the same.
 */
static void check_marker_batch(const uint8_t *batch, size_t size, const struct kp_batch_header *h)
{
    struct kp_txn_marker m = {-1, 0};
    int rc = kp_txn_marker_batch_read(batch, size, MAX_DECOMPRESSED, &m);
    if (!kp_batch_is_control(h)) {
        fuzz_check(rc == KP_E_INVALID_ARG || (rc != 0 && iter_init_documented(rc)),
                   "a data batch read as a marker", rc);
        return;
    }
    fuzz_check(rc == 0 || rc == KP_E_CORRUPT || iter_init_documented(rc),
               "kp_txn_marker_batch_read returned an undocumented code", rc);
    if (rc != 0) {
        return;
    }
    fuzz_check(h->RecordCount >= 1, "a control batch without records read as a marker",
               h->RecordCount);
    fuzz_check(m.type == KP_CONTROL_ABORT || m.type == KP_CONTROL_COMMIT,
               "a marker batch of neither ABORT nor COMMIT", m.type);
    struct kp_writer w;
    kp_wr_init(&w, 1024);
    rc = kp_txn_marker_batch_write(&w, h->BaseOffset, h->PartitionLeaderEpoch, h->BaseTimestamp,
                                   h->ProducerId, h->ProducerEpoch, &m);
    fuzz_check(rc == 0 && w.len == KP_TXN_MARKER_BATCH_SIZE,
               "a marker read cannot be written again", rc);
    struct kp_batch_header nh;
    size_t nsize = 0;
    rc = kp_batch_parse(w.buf, w.len, &nh, &nsize);
    fuzz_check(rc == 0 && nsize == w.len && nh.Attributes == KP_TXN_MARKER_ATTRS &&
                   nh.RecordCount == 1 && nh.BaseSequence == -1 && nh.BaseOffset == h->BaseOffset &&
                   nh.ProducerId == h->ProducerId && nh.ProducerEpoch == h->ProducerEpoch,
               "a written marker batch does not parse as one", rc);
    struct kp_txn_marker again = {-1, 0};
    rc = kp_txn_marker_batch_read(w.buf, w.len, MAX_DECOMPRESSED, &again);
    fuzz_check(rc == 0 && again.type == m.type && again.coordinator_epoch == m.coordinator_epoch,
               "a written marker batch does not read back the same", rc);
    kp_wr_free(&w);
}

/*
 * Iterates every record of batch[0..size) with its headers and checks what
 * the iterator promises. `rebuild`: rebuild a batch that iterates to its
 * end and compare.
 */
static void check_records(const uint8_t *batch, size_t size, bool rebuild)
{
    struct kp_batch_iter it;
    struct kp_record *recs = NULL;
    int rc = kp_batch_iter_init(&it, batch, size, MAX_DECOMPRESSED);
    fuzz_check(iter_init_documented(rc), "kp_batch_iter_init returned an undocumented code", rc);
    if (rc != 0) {
        fuzz_check(it.err == rc, "kp_batch_iter_init's error is not sticky", rc);
        struct kp_record rec;
        fuzz_check(kp_batch_iter_next(&it, &rec) == rc,
                   "kp_batch_iter_next ignores kp_batch_iter_init's error", rc);
        goto out_free;
    }
    const struct kp_batch_header *h = &it.h;
    if (rebuild && h->RecordCount <= REBUILD_MAX_RECORDS) {
        recs = calloc(h->RecordCount > 0 ? (size_t)h->RecordCount : 1, sizeof *recs);
        fuzz_check(recs != NULL, "out of memory for records", h->RecordCount);
    }
    size_t block_len = it.rd.len;

    uint32_t crc = 0;
    int32_t n = 0;
    int32_t prev_delta = -1;
    struct kp_record rec;
    for (;;) {
        rc = kp_batch_iter_next(&it, &rec);
        if (rc != 0) {
            break;
        }
        fuzz_check(n < h->RecordCount, "more records than RecordCount", n);
        fuzz_check(rec.OffsetDelta > prev_delta && rec.OffsetDelta <= h->LastOffsetDelta,
                   "a record's OffsetDelta is out of order or past LastOffsetDelta",
                   rec.OffsetDelta);
        int64_t offset = 0;
        fuzz_check(add_i64(h->BaseOffset, rec.OffsetDelta, &offset) && rec.Offset == offset,
                   "a record's Offset is not BaseOffset + OffsetDelta", rec.OffsetDelta);
        if (kp_batch_timestamp_type(h) == KP_TS_LOG_APPEND_TIME) {
            fuzz_check(rec.Timestamp == h->MaxTimestamp,
                       "a log-append-time record does not carry MaxTimestamp", n);
        } else {
            int64_t ts = 0;
            fuzz_check(add_i64(h->BaseTimestamp, rec.TimestampDelta, &ts) && rec.Timestamp == ts,
                       "a record's Timestamp is not BaseTimestamp + TimestampDelta", n);
        }
        fuzz_check(rec.HeaderCount >= 0, "a record has a negative HeaderCount", rec.HeaderCount);
        crc = touch(crc, rec.Key.ptr, rec.Key.len);
        crc = touch(crc, rec.Value.ptr, rec.Value.len);
        crc = touch(crc, rec.Headers.ptr, rec.Headers.len);
        crc = walk_headers(&rec, crc, NULL);
        if (kp_batch_is_control(h)) {
            check_control_record(&rec);
        }
        if (recs != NULL) {
            recs[n] = rec;
        }
        prev_delta = rec.OffsetDelta;
        n++;
    }
    fuzz_check(rc == KP_ITER_END || rc == KP_E_CORRUPT,
               "kp_batch_iter_next returned an undocumented code", rc);
    fuzz_check(kp_batch_iter_next(&it, &rec) == rc, "kp_batch_iter_next's end is not sticky", rc);
    if (rc == KP_ITER_END) {
        fuzz_check(n == h->RecordCount, "the iterator ended before RecordCount records", n);
        if (recs != NULL) {
            check_rebuild(h, recs, n, block_len);
        }
    }

out_free:
    free(recs);
    kp_batch_iter_free(&it);
}

/* ------------------------------------------------------------- rewrites */

/* The in-place rewrites of batch[0..size), a batch lenient parsing accepted
 * as `h`: each must leave a batch that still parses. Mutates the batch. */
static void check_rewrites(uint8_t *batch, size_t size, const struct kp_batch_header *h)
{
    struct kp_batch_header nh;
    size_t nsize = 0;

    int rc = kp_batch_set_log_append_time(batch, size, APPEND_TIME);
    fuzz_check(rc == 0, "kp_batch_set_log_append_time rejected an accepted batch", rc);
    rc = kp_batch_parse_lenient(batch, size, &nh, &nsize);
    fuzz_check(rc == 0 && nsize == size, "a batch stamped with log-append time does not parse", rc);
    fuzz_check(nh.MaxTimestamp == APPEND_TIME &&
                   kp_batch_timestamp_type(&nh) == KP_TS_LOG_APPEND_TIME &&
                   nh.BaseTimestamp == h->BaseTimestamp &&
                   (nh.Attributes & ~KP_BATCH_ATTR_LOG_APPEND_TIME) ==
                       (h->Attributes & ~KP_BATCH_ATTR_LOG_APPEND_TIME) &&
                   nh.RecordCount == h->RecordCount,
               "kp_batch_set_log_append_time changed more than it should", 0);

    kp_batch_set_base_offset(batch, INT64_C(0x7000000000000000));
    kp_batch_set_leader_epoch(batch, 7);
    rc = kp_batch_parse_lenient(batch, size, &nh, &nsize);
    fuzz_check(rc == 0 && nh.BaseOffset == INT64_C(0x7000000000000000) &&
                   nh.PartitionLeaderEpoch == 7,
               "a batch with a rewritten BaseOffset or epoch does not parse", rc);
}

/* ------------------------------------------------------------- segments */

/* Recomputes the CRC of every complete batch of p[0..len), stepping over
 * batches the way walk_segment does. */
static void fix_crcs(uint8_t *p, size_t len)
{
    size_t off = 0;
    while (len - off >= KP_BATCH_LOG_OVERHEAD) {
        struct kp_batch_header h;
        size_t bs = 0;
        int rc = kp_batch_peek(p + off, len - off, &h, &bs);
        if ((rc != 0 && rc != KP_E_MAGIC) || bs > len - off) {
            return;
        }
        if (rc == 0) {
            uint32_t crc = kp_crc32c(0, p + off + KP_BATCH_CRC_START, bs - KP_BATCH_CRC_START);
            kp_store_be32(p + off + BATCH_CRC_OFFSET, crc);
        }
        off += bs;
    }
}

/*
 * Walks p[0..len) as a segment reader does. With wp (then wp == p, writable):
 * the CRCs were fixed, so no batch may fail its CRC, and each batch's parsers,
 * records and rewrites are checked (the rewrites change the bytes).
 */
static void check_downconvert(const uint8_t *batch, size_t size);

static void walk_segment(uint8_t *wp, const uint8_t *p, size_t len)
{
    bool fixed = wp != NULL;
    size_t off = 0;
    while (off < len) {
        struct kp_reader r;
        struct kp_batch_header h;
        kp_rd_init(&r, p + off, len - off);
        if (fixed) {
            check_parsers(p + off, len - off);
        }
        int rc = kp_batch_read(&r, KP_BATCH_LENIENT, &h);
        if (rc == KP_AGAIN) {
            fuzz_check(r.err == 0 && r.off == 0, "KP_AGAIN moved or failed the reader", r.err);
            return; /* a torn tail: recovery truncates here */
        }
        if (rc != 0) {
            fuzz_check(r.err == rc, "kp_batch_read's error is not recorded in the reader", rc);
        }
        if (rc == KP_E_MAGIC) {
            /* a legacy MessageSet entry: step over it */
            size_t bs = kp_batch_size(&h);
            if (bs > len - off) {
                return;
            }
            off += bs;
            continue;
        }
        if (rc != 0) {
            if (fixed) {
                fuzz_check(rc != KP_E_CRC, "a batch fails the CRC just computed for it", rc);
                if (rc == KP_E_CORRUPT) {
                    /* the iterator must stay safe on batches parsing rejects */
                    check_records(p + off, kp_batch_size(&h), false);
                }
            }
            return;
        }
        size_t bs = kp_batch_size(&h);
        fuzz_check(r.off == bs && bs <= len - off, "kp_batch_read advanced by the wrong amount",
                   (int)r.off);
        if (fixed) {
            check_records(p + off, bs, true);
            check_marker_batch(p + off, bs, &h);
            check_downconvert(p + off, bs);
            check_rewrites(wp + off, bs, &h);
        }
        off += bs;
    }
}


/* ------------------------------------------------------------- legacy */

/* Recomputes the CRC-32 of every complete top-level legacy message. */
static void fix_legacy_crcs(uint8_t *p, size_t len)
{
    size_t off = 0;
    while (len - off >= KP_LEGACY_LOG_OVERHEAD + 5) {
        int32_t size = (int32_t)kp_load_be32(p + off + 8);
        if (size < 5 || (size_t)size > len - off - KP_LEGACY_LOG_OVERHEAD) {
            return;
        }
        uint8_t *m = p + off + KP_LEGACY_LOG_OVERHEAD;
        kp_store_be32(m, kp_crc32(0, m + 4, (size_t)size - 4));
        off += KP_LEGACY_LOG_OVERHEAD + (size_t)size;
    }
}

/* Keys, values and (when with_ts) timestamps of a and b (two v2 batches)
 * must be the same; b's timestamps are -1 otherwise. */
static void check_same_records(const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                               bool with_ts)
{
    struct kp_batch_iter ia;
    struct kp_batch_iter ib;
    int ra = kp_batch_iter_init(&ia, a, an, MAX_DECOMPRESSED);
    int rb = kp_batch_iter_init(&ib, b, bn, MAX_DECOMPRESSED);
    fuzz_check(ra == 0 && rb == 0, "a converted batch does not iterate", ra != 0 ? ra : rb);
    int32_t n = 0;
    for (;;) {
        struct kp_record x;
        struct kp_record y;
        ra = kp_batch_iter_next(&ia, &x);
        rb = kp_batch_iter_next(&ib, &y);
        fuzz_check(ra == rb, "converted batches differ in their records", n);
        if (ra != 0) {
            fuzz_check(ra == KP_ITER_END, "a converted batch's records do not decode", ra);
            break;
        }
        fuzz_check(kp_bytes_eq(x.Key, y.Key) && kp_bytes_eq(x.Value, y.Value),
                   "a record's key or value changed in conversion", n);
        fuzz_check(y.Timestamp == (with_ts ? x.Timestamp : -1),
                   "a record's timestamp changed in conversion", n);
        n++;
    }
    kp_batch_iter_free(&ia);
    kp_batch_iter_free(&ib);
}

/* Down-converts the valid batch[0..size) to magic 0 and 1 and back. */
static void check_downconvert(const uint8_t *batch, size_t size)
{
    struct kp_batch_header h;
    size_t bs = 0;
    if (kp_batch_parse_lenient(batch, size, &h, &bs) != 0 || bs != size) {
        return;
    }
    for (int8_t magic = 0; magic <= 1; magic++) {
        struct kp_writer set;
        kp_wr_init(&set, MAX_DECOMPRESSED);
        int32_t count = 0;
        int rc = kp_legacy_downconvert(batch, size, magic, h.BaseOffset, MAX_DECOMPRESSED, &set,
                                       &count);
        fuzz_check(rc == 0 || rc == KP_E_TOO_LARGE || rc == KP_E_UNSUPPORTED ||
                       rc == KP_E_CORRUPT || rc == KP_E_COMPRESSION || rc == KP_E_NOMEM,
                   "kp_legacy_downconvert returned an undocumented code", rc);
        fuzz_check(rc == 0 || set.len == 0, "a failed down-conversion left bytes", rc);
        if (rc == 0 && count > 0 && !kp_batch_is_control(&h)) {
            struct kp_writer back;
            kp_wr_init(&back, MAX_DECOMPRESSED + KP_BATCH_HEADER_SIZE);
            struct kp_legacy_info info;
            rc = kp_legacy_upconvert(set.buf, set.len, MAX_DECOMPRESSED,
                                     MAX_DECOMPRESSED + KP_BATCH_HEADER_SIZE, &back, &info);
            if (rc == 0) {
                fuzz_check(info.count == count, "up-conversion lost messages", info.count);
                /* a LogAppendTime batch comes back as CreateTime at its
                 * MaxTimestamp, which the iterator already reports */
                check_same_records(batch, size, back.buf, back.len, magic == 1);
            } else {
                fuzz_check(rc == KP_E_TOO_LARGE || rc == KP_E_NOMEM || rc == KP_E_CORRUPT,
                           "a down-converted set does not up-convert", rc);
            }
            kp_wr_free(&back);
        }
        kp_wr_free(&set);
    }
}

/* p[0..len) as a Produce v0-v2 message set. */
static void check_upconvert(const uint8_t *p, size_t len)
{
    struct kp_writer out;
    kp_wr_init(&out, MAX_DECOMPRESSED + KP_BATCH_HEADER_SIZE);
    struct kp_legacy_info info;
    int rc = kp_legacy_upconvert(p, len, MAX_DECOMPRESSED, MAX_DECOMPRESSED + KP_BATCH_HEADER_SIZE,
                                 &out, &info);
    fuzz_check(rc == 0 || rc == KP_E_CRC || rc == KP_E_CORRUPT || rc == KP_E_COMPRESSION ||
                   rc == KP_E_TOO_LARGE || rc == KP_E_NOMEM,
               "kp_legacy_upconvert returned an undocumented code", rc);
    fuzz_check(rc == 0 || out.len == 0, "a failed up-conversion left bytes", rc);
    if (rc == 0) {
        struct kp_batch_header h;
        size_t bs = 0;
        rc = kp_batch_parse(out.buf, out.len, &h, &bs);
        fuzz_check(rc == 0 && bs == out.len, "an up-converted batch does not parse", rc);
        fuzz_check(h.RecordCount == info.count, "an up-converted batch's RecordCount is wrong",
                   h.RecordCount);
        check_records(out.buf, out.len, false);
        check_downconvert(out.buf, out.len);
    }
    kp_wr_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) {
        return 0;
    }
    check_parsers(data, size);

    uint8_t *copy = malloc(size > 0 ? size : 1);
    fuzz_check(copy != NULL, "out of memory for the input's copy", (int)size);
    if (size > 0) {
        memcpy(copy, data, size);
    }
    fix_crcs(copy, size);
    walk_segment(copy, copy, size);
    free(copy);

    walk_segment(NULL, data, size);

    struct kp_batch_header h;
    size_t bs = 0;
    if (kp_batch_peek(data, size, &h, &bs) != 0 || bs != size) {
        check_records(data, size, false);
    }

    check_upconvert(data, size);
    copy = malloc(size > 0 ? size : 1);
    fuzz_check(copy != NULL, "out of memory for the input's copy", (int)size);
    if (size > 0) {
        memcpy(copy, data, size);
    }
    fix_legacy_crcs(copy, size);
    check_upconvert(copy, size);
    free(copy);
    return 0;
}
