/* Unit tests for samsa-protocol's RecordBatch v2 code (record_batch.h). */
#include <samsa-protocol/alloc.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/record_batch.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_run.h"
#include "torture.h"

#define MiB ((size_t)1024 * 1024)
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define TS0 INT64_C(1700000000000)

/*
 * A batch written out field by field: two records, the first with key
 * "key", value "value" and one header hk=hv, the second with a null key, a
 * null value, no headers, one offset and 5 ms later.
 */
/* clang-format off */
static const uint8_t hand_batch[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* BaseOffset 0 */
    0x00, 0x00, 0x00, 0x4d,                         /* BatchLength 77 */
    0x00, 0x00, 0x00, 0x00,                         /* PartitionLeaderEpoch 0 */
    0x02,                                           /* Magic 2 */
    0xb5, 0x37, 0x1f, 0x12,                         /* CRC-32C of [21, 89) */
    0x00, 0x00,                                     /* Attributes: none, CreateTime */
    0x00, 0x00, 0x00, 0x01,                         /* LastOffsetDelta 1 */
    0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, /* BaseTimestamp 1700000000000 */
    0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x05, /* MaxTimestamp +5 */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* ProducerId -1 */
    0xff, 0xff,                                     /* ProducerEpoch -1 */
    0xff, 0xff, 0xff, 0xff,                         /* BaseSequence -1 */
    0x00, 0x00, 0x00, 0x02,                         /* RecordCount 2 */
    /* record 0 */
    0x28,                           /* length 20 */
    0x00,                           /* Attributes */
    0x00,                           /* TimestampDelta 0 */
    0x00,                           /* OffsetDelta 0 */
    0x06, 'k', 'e', 'y',            /* key, 3 bytes */
    0x0a, 'v', 'a', 'l', 'u', 'e',  /* value, 5 bytes */
    0x02,                           /* HeaderCount 1 */
    0x04, 'h', 'k',                 /* header key, 2 bytes */
    0x04, 'h', 'v',                 /* header value, 2 bytes */
    /* record 1 */
    0x0c,                           /* length 6 */
    0x00,                           /* Attributes */
    0x0a,                           /* TimestampDelta 5 */
    0x02,                           /* OffsetDelta 1 */
    0x01,                           /* key null */
    0x01,                           /* value null */
    0x00,                           /* HeaderCount 0 */
};
/* clang-format on */

static struct kp_bytes bytes_c(const char *s)
{
    struct kp_bytes b = KP_BYTES_NULL;
    if (s != NULL) {
        b.ptr = (const uint8_t *)s;
        b.len = (int32_t)strlen(s);
    }
    return b;
}

static bool bytes_is(struct kp_bytes b, const char *s)
{
    return kp_bytes_eq(b, bytes_c(s));
}

/* Recomputes BatchLength-independent CRC after a test damaged a batch. */
static void fix_crc(uint8_t *batch, size_t size)
{
    kp_store_be32(batch + 17, kp_crc32c(0, batch + 21, size - 21));
}

/*
 * A batch around a records block written by hand: header fields as given,
 * a correct BatchLength and CRC.
 */
static void assemble(struct kp_writer *out, const uint8_t *records, size_t len, int32_t count,
                     int32_t last_delta, int16_t attrs)
{
    size_t start = out->len;
    kp_wr_i64(out, 0);
    kp_wr_i32(out, 0);
    kp_wr_i32(out, 0);
    kp_wr_i8(out, 2);
    kp_wr_u32(out, 0);
    kp_wr_i16(out, attrs);
    kp_wr_i32(out, last_delta);
    kp_wr_i64(out, TS0);
    kp_wr_i64(out, TS0);
    kp_wr_i64(out, -1);
    kp_wr_i16(out, -1);
    kp_wr_i32(out, -1);
    kp_wr_i32(out, count);
    kp_wr_raw(out, records, len);
    CU_ASSERT_EQUAL_FATAL(out->err, 0);
    kp_wr_patch_i32(out, start + 8, (int32_t)(out->len - start - 12));
    fix_crc(out->buf + start, out->len - start);
}

/* Walks every record; returns the code that ended the walk. */
static int drain(const uint8_t *batch, size_t size, size_t max, int32_t *records)
{
    struct kp_batch_iter it;
    struct kp_record rec;
    int rc = kp_batch_iter_init(&it, batch, size, max);
    *records = 0;
    while (rc == 0) {
        rc = kp_batch_iter_next(&it, &rec);
        if (rc == 0) {
            (*records)++;
        }
    }
    kp_batch_iter_free(&it);
    return rc;
}

/* ---------------------------------------------------------------- round trips */

static const struct kp_record_header two_headers[] = {
    {{"trace", 5}, {(const uint8_t *)"abc", 3}},
    {{"empty", 5}, {NULL, -1}},
};

struct sample {
    const char *key;
    const char *value;
    size_t headers;
};

static const struct sample samples[] = {
    {"key-0", "value-0", 0}, {NULL, "null key", 0}, {"null value", NULL, 0},
    {NULL, NULL, 0},         {"", "", 2},           {"k", "with headers", 2},
};

static void build_samples_at(struct kp_writer *out, int codec, bool in_place)
{
    struct kp_batch_builder b;
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, codec, 0, TS0, 42, 3, 17, MiB), 0);
    if (in_place) {
        CU_ASSERT_EQUAL_FATAL(kp_batch_builder_write_into(&b, out), 0);
    }
    for (size_t i = 0; i < COUNT(samples); i++) {
        CU_ASSERT_EQUAL_FATAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0 + (int64_t)i * 10,
                                                   bytes_c(samples[i].key),
                                                   bytes_c(samples[i].value), two_headers,
                                                   samples[i].headers),
                              0);
    }
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, out), 0);
    kp_batch_builder_free(&b);
}

static void build_samples(struct kp_writer *out, int codec)
{
    build_samples_at(out, codec, false);
}

static void test_batch_round_trips_each_codec(void)
{
    static const int codecs[] = {KP_CODEC_NONE, KP_CODEC_GZIP, KP_CODEC_SNAPPY, KP_CODEC_LZ4,
                                 KP_CODEC_ZSTD};
    for (size_t c = 0; c < COUNT(codecs); c++) {
        struct kp_writer out;
        kp_wr_init(&out, SIZE_MAX);
        build_samples(&out, codecs[c]);

        struct kp_batch_header h;
        size_t size = 0;
        CU_ASSERT_EQUAL_FATAL(kp_batch_parse(out.buf, out.len, &h, &size), 0);
        CU_ASSERT_EQUAL(size, out.len);
        CU_ASSERT_EQUAL(kp_batch_codec(&h), codecs[c]);
        CU_ASSERT_EQUAL(h.Magic, 2);
        CU_ASSERT_EQUAL(h.RecordCount, (int32_t)COUNT(samples));
        CU_ASSERT_EQUAL(h.LastOffsetDelta, (int32_t)COUNT(samples) - 1);
        CU_ASSERT_EQUAL(h.BaseTimestamp, TS0);
        CU_ASSERT_EQUAL(h.MaxTimestamp, TS0 + 50);
        CU_ASSERT_EQUAL(h.ProducerId, 42);
        CU_ASSERT_EQUAL(h.ProducerEpoch, 3);
        CU_ASSERT_EQUAL(h.BaseSequence, 17);
        CU_ASSERT_EQUAL(h.PartitionLeaderEpoch, -1);
        CU_ASSERT_EQUAL(kp_batch_timestamp_type(&h), KP_TS_CREATE_TIME);

        struct kp_batch_iter it;
        struct kp_record rec;
        CU_ASSERT_EQUAL_FATAL(kp_batch_iter_init(&it, out.buf, out.len, MiB), 0);
        for (size_t i = 0; i < COUNT(samples); i++) {
            CU_ASSERT_EQUAL_FATAL(kp_batch_iter_next(&it, &rec), 0);
            CU_ASSERT_EQUAL(rec.Offset, (int64_t)i);
            CU_ASSERT_EQUAL(rec.OffsetDelta, (int32_t)i);
            CU_ASSERT_EQUAL(rec.Timestamp, TS0 + (int64_t)i * 10);
            CU_ASSERT_TRUE(bytes_is(rec.Key, samples[i].key));
            CU_ASSERT_TRUE(bytes_is(rec.Value, samples[i].value));
            CU_ASSERT_EQUAL(rec.HeaderCount, (int32_t)samples[i].headers);

            struct kp_header_iter hi;
            struct kp_record_header hd;
            kp_record_headers_init(&hi, &rec);
            for (size_t k = 0; k < samples[i].headers; k++) {
                CU_ASSERT_EQUAL_FATAL(kp_record_header_next(&hi, &hd), 0);
                CU_ASSERT_TRUE(kp_str_eq(hd.Key, two_headers[k].Key));
                CU_ASSERT_TRUE(kp_bytes_eq(hd.Value, two_headers[k].Value));
            }
            CU_ASSERT_EQUAL(kp_record_header_next(&hi, &hd), KP_ITER_END);
        }
        CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), KP_ITER_END);
        CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), KP_ITER_END);
        kp_batch_iter_free(&it);
        kp_wr_free(&out);
    }
}

static void test_batch_builder_matches_hand_written_bytes(void)
{
    struct kp_batch_builder b;
    struct kp_writer out;
    static const struct kp_record_header hdr = {{"hk", 2}, {(const uint8_t *)"hv", 2}};
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, TS0, -1, -1, -1, MiB), 0);
    kp_batch_builder_set_leader_epoch(&b, 0);
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, bytes_c("key"),
                                         bytes_c("value"), &hdr, 1),
                    0);
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0 + 5, KP_BYTES_NULL,
                                         KP_BYTES_NULL, NULL, 0),
                    0);
    CU_ASSERT_EQUAL(kp_batch_builder_size(&b), sizeof hand_batch);
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &out), 0);
    CU_ASSERT_EQUAL(out.len, sizeof hand_batch);
    CU_ASSERT_TRUE(out.len == sizeof hand_batch &&
                   memcmp(out.buf, hand_batch, sizeof hand_batch) == 0);
    kp_wr_free(&out);
    kp_batch_builder_free(&b);
}

static void test_batch_parses_hand_written_bytes(void)
{
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL_FATAL(kp_batch_parse(hand_batch, sizeof hand_batch, &h, &size), 0);
    CU_ASSERT_EQUAL(size, sizeof hand_batch);
    CU_ASSERT_EQUAL(h.BaseOffset, 0);
    CU_ASSERT_EQUAL(h.BatchLength, 77);
    CU_ASSERT_EQUAL(h.PartitionLeaderEpoch, 0);
    CU_ASSERT_EQUAL(h.CRC, 0xb5371f12u);
    CU_ASSERT_EQUAL(h.Attributes, 0);
    CU_ASSERT_EQUAL(h.LastOffsetDelta, 1);
    CU_ASSERT_EQUAL(h.MaxTimestamp, TS0 + 5);
    CU_ASSERT_EQUAL(h.ProducerId, -1);
    CU_ASSERT_EQUAL(h.ProducerEpoch, -1);
    CU_ASSERT_EQUAL(h.BaseSequence, -1);
    CU_ASSERT_EQUAL(h.RecordCount, 2);
    CU_ASSERT_EQUAL(kp_batch_last_offset(&h), 1);

    struct kp_batch_iter it;
    struct kp_record rec;
    CU_ASSERT_EQUAL_FATAL(kp_batch_iter_init(&it, hand_batch, sizeof hand_batch, MiB), 0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_iter_next(&it, &rec), 0);
    CU_ASSERT_TRUE(bytes_is(rec.Key, "key"));
    CU_ASSERT_TRUE(bytes_is(rec.Value, "value"));
    CU_ASSERT_EQUAL(rec.HeaderCount, 1);
    CU_ASSERT_EQUAL(rec.Headers.len, 6);
    struct kp_header_iter hi;
    struct kp_record_header hd;
    kp_record_headers_init(&hi, &rec);
    CU_ASSERT_EQUAL(kp_record_header_next(&hi, &hd), 0);
    CU_ASSERT_TRUE(kp_str_eq_c(hd.Key, "hk"));
    CU_ASSERT_TRUE(bytes_is(hd.Value, "hv"));
    CU_ASSERT_EQUAL(kp_record_header_next(&hi, &hd), KP_ITER_END);

    CU_ASSERT_EQUAL_FATAL(kp_batch_iter_next(&it, &rec), 0);
    CU_ASSERT_EQUAL(rec.Key.len, -1);
    CU_ASSERT_EQUAL(rec.Value.len, -1);
    CU_ASSERT_EQUAL(rec.Offset, 1);
    CU_ASSERT_EQUAL(rec.TimestampDelta, 5);
    CU_ASSERT_EQUAL(rec.Timestamp, TS0 + 5);
    CU_ASSERT_EQUAL(rec.HeaderCount, 0);
    CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), KP_ITER_END);
    kp_batch_iter_free(&it);
}

/* ---------------------------------------------------------------- framing */

static void test_batch_parse_returns_again_for_every_truncation(void)
{
    static const int codecs[] = {KP_CODEC_NONE, KP_CODEC_ZSTD};
    for (size_t c = 0; c < COUNT(codecs); c++) {
        struct kp_writer out;
        kp_wr_init(&out, SIZE_MAX);
        build_samples(&out, codecs[c]);
        for (size_t len = 0; len < out.len; len++) {
            /* a copy of exactly `len` bytes, so ASan sees any overread */
            uint8_t *prefix = malloc(len > 0 ? len : 1);
            if (prefix == NULL) {
                CU_FAIL("out of memory");
                break;
            }
            if (len > 0) {
                memcpy(prefix, out.buf, len);
            }
            struct kp_batch_header h;
            size_t size = 0;
            CU_ASSERT_EQUAL(kp_batch_parse(prefix, len, &h, &size), KP_AGAIN);
            CU_ASSERT_EQUAL(size, len < 12 ? 12 : out.len);
            CU_ASSERT_EQUAL(kp_batch_parse_lenient(prefix, len, &h, &size), KP_AGAIN);
            int32_t n = 0;
            CU_ASSERT_TRUE(drain(prefix, len, MiB, &n) < 0);
            free(prefix);
        }
        kp_wr_free(&out);
    }
}

static void test_batch_iter_rejects_every_truncated_records_block(void)
{
    /* the records block cut at every length, with BatchLength and the CRC
     * made to match: parse may accept, iteration must fail cleanly */
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    build_samples(&out, KP_CODEC_NONE);
    for (size_t len = 61; len < out.len; len++) {
        uint8_t *b = malloc(len);
        if (b == NULL) {
            CU_FAIL("out of memory");
            break;
        }
        memcpy(b, out.buf, len);
        kp_store_be32(b + 8, (uint32_t)(len - 12));
        fix_crc(b, len);
        struct kp_batch_header h;
        size_t size = 0;
        int rc = kp_batch_parse(b, len, &h, &size);
        CU_ASSERT_TRUE(rc == 0 || rc == KP_E_CORRUPT);
        int32_t n = 0;
        CU_ASSERT_EQUAL(drain(b, len, MiB, &n), KP_E_CORRUPT);
        CU_ASSERT_TRUE(n < (int32_t)COUNT(samples));
        free(b);
    }
    kp_wr_free(&out);
}

static void test_batch_rejects_negative_batch_length(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    kp_store_be32(b + 8, 0xfffffff0u);
    struct kp_batch_header h;
    size_t size = 1;
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_BAD_LENGTH);
    CU_ASSERT_EQUAL(size, 0);
    CU_ASSERT_EQUAL(kp_batch_parse(b, 12, &h, &size), KP_E_BAD_LENGTH);
    CU_ASSERT_EQUAL(kp_batch_peek(b, sizeof b, &h, &size), KP_E_BAD_LENGTH);
}

static void test_batch_rejects_huge_batch_length(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    struct kp_batch_header h;
    size_t size = 0;

    /* the whole batch would not fit an int32 size */
    kp_store_be32(b + 8, (uint32_t)INT32_MAX);
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_BAD_LENGTH);
    kp_store_be32(b + 8, (uint32_t)(INT32_MAX - 11));
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_BAD_LENGTH);

    /* the largest legal length: a partial batch, asking for all of it */
    kp_store_be32(b + 8, (uint32_t)(INT32_MAX - 12));
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_AGAIN);
    CU_ASSERT_EQUAL(size, (size_t)INT32_MAX);
    /* peek only needs the header */
    CU_ASSERT_EQUAL(kp_batch_peek(b, sizeof b, &h, &size), 0);
    CU_ASSERT_EQUAL(size, (size_t)INT32_MAX);
    struct kp_batch_iter it;
    CU_ASSERT_EQUAL(kp_batch_iter_init(&it, b, sizeof b, MiB), KP_E_BAD_LENGTH);
    kp_batch_iter_free(&it);
}

static void test_batch_rejects_batch_length_below_header(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    struct kp_batch_header h;
    size_t size = 0;
    kp_store_be32(b + 8, 48);
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_BAD_LENGTH);
    kp_store_be32(b + 8, 0);
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_BAD_LENGTH);
}

static void test_batch_rejects_bad_crc(void)
{
    uint8_t b[sizeof hand_batch];
    struct kp_batch_header h;
    size_t size = 0;

    /* a flipped bit anywhere in [21, end) */
    for (size_t at = 21; at < sizeof b; at++) {
        memcpy(b, hand_batch, sizeof b);
        b[at] ^= 0x10;
        CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_CRC);
        CU_ASSERT_EQUAL(kp_batch_parse_lenient(b, sizeof b, &h, &size), KP_E_CRC);
    }
    /* the CRC field itself */
    memcpy(b, hand_batch, sizeof b);
    b[20] ^= 0x01;
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_CRC);
    CU_ASSERT_EQUAL(h.CRC, 0xb5371f13u);

    /* the detection site is recorded in the reader */
    struct kp_reader r;
    kp_rd_init(&r, b, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_read(&r, KP_BATCH_STRICT, &h), KP_E_CRC);
    CU_ASSERT_EQUAL(r.err, KP_E_CRC);
    CU_ASSERT_PTR_NOT_NULL(r.err_file);
    CU_ASSERT_TRUE(r.err_line > 0);
    CU_ASSERT_EQUAL(r.off, 0);
}

static void test_batch_rejects_wrong_magic(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    b[16] = 1;
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_MAGIC);
    CU_ASSERT_EQUAL(h.Magic, 1);
    CU_ASSERT_EQUAL(h.BatchLength, 77);
    CU_ASSERT_EQUAL(size, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_peek(b, sizeof b, &h, &size), KP_E_MAGIC);
    CU_ASSERT_EQUAL(h.Magic, 1);

    /* a legacy v0 message, shorter than any v2 batch, is reported by magic:
     * offset 5, size 20, crc, magic 0, attributes 0, key null, value 6 bytes */
    static const uint8_t legacy[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
        0x14, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x06, 'l',  'e',  'g',  'a',  'c',  'y',
    };
    CU_ASSERT_EQUAL(kp_batch_parse(legacy, sizeof legacy, &h, &size), KP_E_MAGIC);
    CU_ASSERT_EQUAL(h.Magic, 0);
    CU_ASSERT_EQUAL(h.BaseOffset, 5);
    CU_ASSERT_EQUAL(size, sizeof legacy);
}

/* ---------------------------------------------------------------- counts */

static void test_batch_rejects_last_offset_delta_mismatch(void)
{
    uint8_t b[sizeof hand_batch];
    struct kp_batch_header h;
    size_t size = 0;
    memcpy(b, hand_batch, sizeof b);
    kp_store_be32(b + 23, 0); /* RecordCount 2, LastOffsetDelta 0 */
    fix_crc(b, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(kp_batch_parse_lenient(b, sizeof b, &h, &size), KP_E_CORRUPT);

    kp_store_be32(b + 23, 5); /* a gap: a producer never writes one */
    fix_crc(b, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_CORRUPT);

    kp_store_be32(b + 23, 0xffffffffu); /* negative */
    fix_crc(b, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_parse_lenient(b, sizeof b, &h, &size), KP_E_CORRUPT);
}

static void test_batch_lenient_accepts_compacted_gap(void)
{
    uint8_t b[sizeof hand_batch];
    struct kp_batch_header h;
    size_t size = 0;
    memcpy(b, hand_batch, sizeof b);
    kp_store_be32(b + 23, 5);
    fix_crc(b, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_parse_lenient(b, sizeof b, &h, &size), 0);
    CU_ASSERT_EQUAL(kp_batch_last_offset(&h), 5);
}

static void test_batch_rejects_negative_record_count(void)
{
    uint8_t b[sizeof hand_batch];
    struct kp_batch_header h;
    size_t size = 0;
    memcpy(b, hand_batch, sizeof b);
    kp_store_be32(b + 57, 0xffffffffu);
    fix_crc(b, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(kp_batch_parse_lenient(b, sizeof b, &h, &size), KP_E_CORRUPT);
    struct kp_batch_iter it;
    CU_ASSERT_EQUAL(kp_batch_iter_init(&it, b, sizeof b, MiB), KP_E_CORRUPT);
    kp_batch_iter_free(&it);
}

static void test_batch_rejects_huge_record_count(void)
{
    uint8_t b[sizeof hand_batch];
    struct kp_batch_header h;
    size_t size = 0;
    memcpy(b, hand_batch, sizeof b);
    /* consistent with LastOffsetDelta, impossible for 28 bytes of records */
    kp_store_be32(b + 23, (uint32_t)(INT32_MAX - 1));
    kp_store_be32(b + 57, (uint32_t)INT32_MAX);
    fix_crc(b, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_CORRUPT);
    struct kp_batch_iter it;
    CU_ASSERT_EQUAL(kp_batch_iter_init(&it, b, sizeof b, MiB), KP_E_CORRUPT);
    kp_batch_iter_free(&it);

    /* compressed: parse cannot tell, the iterator refuses before decoding */
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    build_samples(&out, KP_CODEC_LZ4);
    kp_store_be32(out.buf + 23, (uint32_t)(INT32_MAX - 1));
    kp_store_be32(out.buf + 57, (uint32_t)INT32_MAX);
    fix_crc(out.buf, out.len);
    CU_ASSERT_EQUAL(kp_batch_parse(out.buf, out.len, &h, &size), 0);
    CU_ASSERT_EQUAL(kp_batch_iter_init(&it, out.buf, out.len, MiB), KP_E_CORRUPT);
    kp_batch_iter_free(&it);
    kp_wr_free(&out);
}

static void test_batch_strict_rejects_empty_batch(void)
{
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    assemble(&out, NULL, 0, 0, 0, 0);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(out.buf, out.len, &h, &size), KP_E_CORRUPT);
    /* the cleaner keeps empty batches to remember a producer */
    CU_ASSERT_EQUAL(kp_batch_parse_lenient(out.buf, out.len, &h, &size), 0);
    int32_t n = -1;
    CU_ASSERT_EQUAL(drain(out.buf, out.len, MiB, &n), KP_ITER_END);
    CU_ASSERT_EQUAL(n, 0);
    kp_wr_free(&out);
}

/* ---------------------------------------------------------------- records */

static void test_batch_iter_rejects_overlong_varint(void)
{
    /* a record whose length is a 6-byte varint */
    static const uint8_t long_length[] = {0x8c, 0x80, 0x80, 0x80, 0x80, 0x00,
                                          0x00, 0x00, 0x00, 0x01, 0x01, 0x00};
    /* a record whose OffsetDelta's fifth byte carries more than 32 bits */
    static const uint8_t long_delta[] = {0x14, 0x00, 0x00, 0x80, 0x80, 0x80,
                                         0x80, 0x7f, 0x01, 0x01, 0x00};
    struct kp_writer out;
    struct kp_batch_iter it;
    struct kp_record rec;

    kp_wr_init(&out, SIZE_MAX);
    assemble(&out, long_length, sizeof long_length, 1, 0, 0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_iter_init(&it, out.buf, out.len, MiB), 0);
    CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(it.cause, KP_E_VARINT);
    CU_ASSERT_PTR_NOT_NULL(it.err_file);
    kp_batch_iter_free(&it);
    kp_wr_free(&out);

    kp_wr_init(&out, SIZE_MAX);
    assemble(&out, long_delta, sizeof long_delta, 1, 0, 0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_iter_init(&it, out.buf, out.len, MiB), 0);
    CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(it.cause, KP_E_VARINT);
    /* errors stick */
    CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), KP_E_CORRUPT);
    kp_batch_iter_free(&it);
    kp_wr_free(&out);
}

static void test_batch_iter_rejects_record_length_mismatch(void)
{
    /* minimal record body: attrs, ts, delta, key null, value null, 0 headers */
    static const uint8_t too_long[] = {0x0e, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00};
    static const uint8_t too_short[] = {0x0a, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00};
    static const uint8_t negative[] = {0x01, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00};
    static const uint8_t past_end[] = {0x7e, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00};
    const struct {
        const uint8_t *p;
        size_t n;
    } cases[] = {
        {too_long, sizeof too_long},
        {too_short, sizeof too_short},
        {negative, sizeof negative},
        {past_end, sizeof past_end},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        struct kp_writer out;
        kp_wr_init(&out, SIZE_MAX);
        assemble(&out, cases[i].p, cases[i].n, 1, 0, 0);
        int32_t n = 0;
        CU_ASSERT_EQUAL(drain(out.buf, out.len, MiB, &n), KP_E_CORRUPT);
        CU_ASSERT_EQUAL(n, 0);
        kp_wr_free(&out);
    }
}

static void test_batch_iter_rejects_fewer_records_than_count(void)
{
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    /* hand_batch's two records, claimed as three; enough bytes for three
     * minimal records, so only iteration can tell */
    assemble(&out, hand_batch + 61, sizeof hand_batch - 61, 3, 2, 0);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(out.buf, out.len, &h, &size), 0);
    int32_t n = 0;
    CU_ASSERT_EQUAL(drain(out.buf, out.len, MiB, &n), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(n, 2);
    kp_wr_free(&out);
}

static void test_batch_iter_rejects_more_records_than_count(void)
{
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    /* two records, claimed as one: the first is not handed out */
    assemble(&out, hand_batch + 61, sizeof hand_batch - 61, 1, 1, 0);
    int32_t n = 0;
    CU_ASSERT_EQUAL(drain(out.buf, out.len, MiB, &n), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(n, 0);
    kp_wr_free(&out);
}

static void test_batch_iter_rejects_non_increasing_offset_delta(void)
{
    /* two minimal records both at OffsetDelta 0, then one beyond
     * LastOffsetDelta */
    static const uint8_t same[] = {0x0c, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00,
                                   0x0c, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00};
    static const uint8_t beyond[] = {0x0c, 0x00, 0x00, 0x04, 0x01, 0x01, 0x00};
    struct kp_writer out;
    int32_t n = 0;

    kp_wr_init(&out, SIZE_MAX);
    assemble(&out, same, sizeof same, 2, 1, 0);
    CU_ASSERT_EQUAL(drain(out.buf, out.len, MiB, &n), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(n, 1);
    kp_wr_free(&out);

    kp_wr_init(&out, SIZE_MAX);
    assemble(&out, beyond, sizeof beyond, 1, 0, 0);
    CU_ASSERT_EQUAL(drain(out.buf, out.len, MiB, &n), KP_E_CORRUPT);
    kp_wr_free(&out);
}

static void test_batch_iter_rejects_null_header_key(void)
{
    /* one header: key null (0x01), value "x" */
    static const uint8_t rec[] = {0x12, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x01, 0x02, 'x'};
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    assemble(&out, rec, sizeof rec, 1, 0, 0);
    int32_t n = 0;
    CU_ASSERT_EQUAL(drain(out.buf, out.len, MiB, &n), KP_E_CORRUPT);
    kp_wr_free(&out);
}

static void test_batch_iter_rejects_huge_header_count(void)
{
    /* HeaderCount 1,000,000 in a 7-byte record */
    static const uint8_t rec[] = {0x10, 0x00, 0x00, 0x00, 0x01, 0x01, 0x80, 0x89, 0x7a};
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    assemble(&out, rec, sizeof rec, 1, 0, 0);
    int32_t n = 0;
    CU_ASSERT_EQUAL(drain(out.buf, out.len, MiB, &n), KP_E_CORRUPT);
    kp_wr_free(&out);
}

static void test_batch_iter_rejects_offset_overflow(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    kp_batch_set_base_offset(b, INT64_MAX);
    int32_t n = 0;
    CU_ASSERT_EQUAL(drain(b, sizeof b, MiB, &n), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(n, 1); /* INT64_MAX + 0 is fine, + 1 is not */
}

static void test_batch_iter_rejects_decompression_bomb(void)
{
    size_t len = 8 * MiB;
    uint8_t *zeros = calloc(1, len);
    if (zeros == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    struct kp_batch_builder b;
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_GZIP, 0, TS0, -1, -1, -1, 16 * MiB),
                          0);
    struct kp_bytes v = {zeros, (int32_t)len};
    CU_ASSERT_EQUAL_FATAL(
        kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, KP_BYTES_NULL, v, NULL, 0), 0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &out), 0);
    kp_batch_builder_free(&b);
    free(zeros);
    CU_ASSERT_TRUE(out.len < MiB / 8);

    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(out.buf, out.len, &h, &size), 0);
    struct kp_batch_iter it;
    CU_ASSERT_EQUAL(kp_batch_iter_init(&it, out.buf, out.len, MiB), KP_E_TOO_LARGE);
    CU_ASSERT_TRUE(it.plain.cap <= MiB);
    kp_batch_iter_free(&it);

    int32_t n = 0;
    CU_ASSERT_EQUAL(drain(out.buf, out.len, 16 * MiB, &n), KP_ITER_END);
    CU_ASSERT_EQUAL(n, 1);
    kp_wr_free(&out);
}

static void test_batch_iter_rejects_corrupt_compressed_block(void)
{
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    build_samples(&out, KP_CODEC_ZSTD);
    memset(out.buf + 61, 0xee, 8);
    fix_crc(out.buf, out.len);
    struct kp_batch_iter it;
    CU_ASSERT_EQUAL(kp_batch_iter_init(&it, out.buf, out.len, MiB), KP_E_COMPRESSION);
    kp_batch_iter_free(&it);
    kp_wr_free(&out);
}

static void test_batch_iter_rejects_unknown_codec(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    kp_store_be16(b + 21, 5);
    fix_crc(b, sizeof b);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), 0);
    CU_ASSERT_EQUAL(kp_batch_codec(&h), 5);
    struct kp_batch_iter it;
    CU_ASSERT_EQUAL(kp_batch_iter_init(&it, b, sizeof b, MiB), KP_E_UNSUPPORTED);
    kp_batch_iter_free(&it);
}

/* ---------------------------------------------------------------- scanning */

static void test_batch_read_walks_consecutive_batches(void)
{
    struct kp_writer log;
    kp_wr_init(&log, SIZE_MAX);
    kp_wr_raw(&log, hand_batch, sizeof hand_batch);
    build_samples(&log, KP_CODEC_SNAPPY);
    kp_wr_raw(&log, hand_batch, 40); /* a torn write at the end */

    struct kp_reader r;
    struct kp_batch_header h;
    kp_rd_init(&r, log.buf, log.len);
    CU_ASSERT_EQUAL(kp_batch_read(&r, KP_BATCH_LENIENT, &h), 0);
    CU_ASSERT_EQUAL(r.off, sizeof hand_batch);
    CU_ASSERT_EQUAL(kp_batch_read(&r, KP_BATCH_LENIENT, &h), 0);
    CU_ASSERT_EQUAL(h.RecordCount, (int32_t)COUNT(samples));
    size_t torn_at = r.off;
    CU_ASSERT_EQUAL(kp_batch_read(&r, KP_BATCH_LENIENT, &h), KP_AGAIN);
    CU_ASSERT_EQUAL(r.off, torn_at);
    CU_ASSERT_EQUAL(r.err, 0);
    CU_ASSERT_EQUAL(log.len - torn_at, 40);
    kp_wr_free(&log);
}

static void test_batch_peek_reads_header_without_crc(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    b[70] ^= 0xff; /* damage a record: peek does not look */
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_peek(b, 61, &h, &size), 0);
    CU_ASSERT_EQUAL(size, sizeof hand_batch);
    CU_ASSERT_EQUAL(h.LastOffsetDelta, 1);
    CU_ASSERT_EQUAL(h.RecordCount, 2);
    CU_ASSERT_EQUAL(h.MaxTimestamp, TS0 + 5);
    CU_ASSERT_EQUAL(kp_batch_peek(b, 60, &h, &size), KP_AGAIN);
    CU_ASSERT_EQUAL(kp_batch_parse(b, sizeof b, &h, &size), KP_E_CRC);
}

/* ---------------------------------------------------------------- rewrites */

static void test_batch_rewrite_base_offset_keeps_crc_valid(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    kp_batch_set_base_offset(b, 1000);
    kp_batch_set_leader_epoch(b, 7);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL_FATAL(kp_batch_parse(b, sizeof b, &h, &size), 0);
    CU_ASSERT_EQUAL(h.BaseOffset, 1000);
    CU_ASSERT_EQUAL(h.PartitionLeaderEpoch, 7);
    CU_ASSERT_EQUAL(h.CRC, 0xb5371f12u);
    CU_ASSERT_EQUAL(kp_batch_last_offset(&h), 1001);

    struct kp_batch_iter it;
    struct kp_record rec;
    CU_ASSERT_EQUAL_FATAL(kp_batch_iter_init(&it, b, sizeof b, MiB), 0);
    CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), 0);
    CU_ASSERT_EQUAL(rec.Offset, 1000);
    CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), 0);
    CU_ASSERT_EQUAL(rec.Offset, 1001);
    kp_batch_iter_free(&it);
}

static void test_batch_log_append_time_rewrite_yields_valid_crc(void)
{
    static const int codecs[] = {KP_CODEC_NONE, KP_CODEC_GZIP};
    const int64_t now = TS0 + 123456;
    for (size_t c = 0; c < COUNT(codecs); c++) {
        struct kp_writer out;
        kp_wr_init(&out, SIZE_MAX);
        build_samples(&out, codecs[c]);
        CU_ASSERT_EQUAL_FATAL(kp_batch_set_log_append_time(out.buf, out.len, now), 0);

        struct kp_batch_header h;
        size_t size = 0;
        CU_ASSERT_EQUAL_FATAL(kp_batch_parse(out.buf, out.len, &h, &size), 0);
        CU_ASSERT_EQUAL(kp_batch_timestamp_type(&h), KP_TS_LOG_APPEND_TIME);
        CU_ASSERT_EQUAL(h.MaxTimestamp, now);
        CU_ASSERT_EQUAL(h.BaseTimestamp, TS0);
        CU_ASSERT_EQUAL(kp_batch_codec(&h), codecs[c]);
        CU_ASSERT_EQUAL(h.CRC, kp_crc32c(0, out.buf + 21, out.len - 21));

        /* every record reports the append time, as Kafka does */
        struct kp_batch_iter it;
        struct kp_record rec;
        CU_ASSERT_EQUAL_FATAL(kp_batch_iter_init(&it, out.buf, out.len, MiB), 0);
        while (kp_batch_iter_next(&it, &rec) == 0) {
            CU_ASSERT_EQUAL(rec.Timestamp, now);
        }
        CU_ASSERT_EQUAL(it.err, 0);
        kp_batch_iter_free(&it);
        kp_wr_free(&out);
    }
}

static void test_batch_log_append_time_refuses_damaged_batch(void)
{
    uint8_t b[sizeof hand_batch];
    memcpy(b, hand_batch, sizeof b);
    b[80] ^= 0x01;
    uint8_t before[sizeof b];
    memcpy(before, b, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_set_log_append_time(b, sizeof b, TS0), KP_E_CRC);
    CU_ASSERT_EQUAL(memcmp(b, before, sizeof b), 0);

    memcpy(b, hand_batch, sizeof b);
    CU_ASSERT_EQUAL(kp_batch_set_log_append_time(b, sizeof b - 1, TS0), KP_E_BAD_LENGTH);
    CU_ASSERT_EQUAL(kp_batch_set_log_append_time(b, 60, TS0), KP_E_BAD_LENGTH);
    b[16] = 1;
    CU_ASSERT_EQUAL(kp_batch_set_log_append_time(b, sizeof b, TS0), KP_E_MAGIC);
}

/* ---------------------------------------------------------------- builder */

static void test_builder_refuses_record_over_max_bytes(void)
{
    struct kp_batch_builder b;
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, TS0, -1, -1, -1, 200), 0);
    int added = 0;
    int rc = 0;
    while (rc == 0) {
        rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, bytes_c("k"),
                                  bytes_c("0123456789012345678"), NULL, 0);
        if (rc == 0) {
            added++;
        }
    }
    CU_ASSERT_EQUAL(rc, KP_E_TOO_LARGE);
    CU_ASSERT_TRUE(added > 0);
    CU_ASSERT_TRUE(kp_batch_builder_size(&b) <= 200);

    /* the builder is still usable: a smaller record fits, then finish */
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_batch_builder_finish(&b, &out), 0);
    CU_ASSERT_TRUE(out.len <= 200);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(out.buf, out.len, &h, &size), 0);
    CU_ASSERT_EQUAL(h.RecordCount, added);
    kp_wr_free(&out);
    kp_batch_builder_free(&b);
}

static void test_builder_keeps_offset_gaps_for_cleaner(void)
{
    static const int32_t deltas[] = {0, 5, 9};
    struct kp_batch_builder b;
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_LZ4, 100, TS0, 7, 0, 0, MiB), 0);
    kp_batch_builder_set_last_offset_delta(&b, 12);
    for (size_t i = 0; i < COUNT(deltas); i++) {
        CU_ASSERT_EQUAL(kp_batch_builder_add(&b, deltas[i], TS0 + deltas[i], bytes_c("k"),
                                             bytes_c("v"), NULL, 0),
                        0);
    }
    /* beyond the kept last offset */
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, 13, TS0, bytes_c("k"), bytes_c("v"), NULL, 0),
                    KP_E_INVALID_ARG);
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &out), 0);
    kp_batch_builder_free(&b);

    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(out.buf, out.len, &h, &size), KP_E_CORRUPT);
    CU_ASSERT_EQUAL_FATAL(kp_batch_parse_lenient(out.buf, out.len, &h, &size), 0);
    CU_ASSERT_EQUAL(h.LastOffsetDelta, 12);
    CU_ASSERT_EQUAL(h.RecordCount, 3);
    CU_ASSERT_EQUAL(h.MaxTimestamp, TS0 + 9);

    struct kp_batch_iter it;
    struct kp_record rec;
    CU_ASSERT_EQUAL_FATAL(kp_batch_iter_init(&it, out.buf, out.len, MiB), 0);
    for (size_t i = 0; i < COUNT(deltas); i++) {
        CU_ASSERT_EQUAL_FATAL(kp_batch_iter_next(&it, &rec), 0);
        CU_ASSERT_EQUAL(rec.Offset, 100 + deltas[i]);
    }
    CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &rec), KP_ITER_END);
    kp_batch_iter_free(&it);
    kp_wr_free(&out);
}

static void test_builder_writes_empty_batch_for_cleaner(void)
{
    struct kp_batch_builder b;
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_ZSTD, 50, TS0, 9, 1, 4, MiB), 0);
    /* nothing to say where the batch ends */
    CU_ASSERT_EQUAL(kp_batch_builder_finish(&b, &out), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(out.len, 0);
    kp_batch_builder_set_last_offset_delta(&b, 3);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &out), 0);
    kp_batch_builder_free(&b);
    CU_ASSERT_EQUAL(out.len, 61);

    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL_FATAL(kp_batch_parse_lenient(out.buf, out.len, &h, &size), 0);
    CU_ASSERT_EQUAL(h.RecordCount, 0);
    CU_ASSERT_EQUAL(kp_batch_last_offset(&h), 53);
    CU_ASSERT_EQUAL(kp_batch_codec(&h), KP_CODEC_NONE);
    CU_ASSERT_EQUAL(h.ProducerId, 9);
    kp_wr_free(&out);
}

static void test_builder_sets_attribute_bits(void)
{
    struct kp_batch_builder b;
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_SNAPPY, 0, TS0, 1, 0, 0, MiB), 0);
    kp_batch_builder_set_flags(&b, true, true);
    kp_batch_builder_set_timestamp_type(&b, KP_TS_LOG_APPEND_TIME);
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, bytes_c("\x00\x00"),
                                         KP_BYTES_NULL, NULL, 0),
                    0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &out), 0);
    kp_batch_builder_free(&b);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL_FATAL(kp_batch_parse(out.buf, out.len, &h, &size), 0);
    CU_ASSERT_TRUE(kp_batch_is_transactional(&h));
    CU_ASSERT_TRUE(kp_batch_is_control(&h));
    CU_ASSERT_FALSE(kp_batch_has_delete_horizon(&h));
    CU_ASSERT_EQUAL(kp_batch_timestamp_type(&h), KP_TS_LOG_APPEND_TIME);
    CU_ASSERT_EQUAL(kp_batch_codec(&h), KP_CODEC_SNAPPY);
    CU_ASSERT_EQUAL(h.Attributes, 0x38 | KP_CODEC_SNAPPY);
    kp_wr_free(&out);
}

static void test_builder_rejects_invalid_arguments(void)
{
    struct kp_batch_builder b;
    CU_ASSERT_EQUAL(kp_batch_builder_init(&b, 6, 0, TS0, -1, -1, -1, MiB), KP_E_UNSUPPORTED);
    kp_batch_builder_free(&b);
    CU_ASSERT_EQUAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, TS0, -1, -1, -1, 60),
                    KP_E_INVALID_ARG);
    kp_batch_builder_free(&b);

    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, TS0, -1, -1, -1, MiB), 0);
    struct kp_bytes k = bytes_c("k");
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, 3, TS0, k, k, NULL, 0), 0);
    /* not increasing */
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, 3, TS0, k, k, NULL, 0), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, -5, TS0, k, k, NULL, 0), KP_E_INVALID_ARG);
    /* lengths */
    struct kp_bytes bad = {NULL, 4};
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, 4, TS0, bad, k, NULL, 0), KP_E_INVALID_ARG);
    struct kp_bytes neg = {(const uint8_t *)"x", -2};
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, 4, TS0, k, neg, NULL, 0), KP_E_INVALID_ARG);
    /* null header key */
    struct kp_record_header nullkey = {KP_STR_NULL, KP_BYTES_NULL};
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, 4, TS0, k, k, &nullkey, 1), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, 4, TS0, k, k, NULL, 1), KP_E_INVALID_ARG);
    /* a timestamp delta that overflows */
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, 4, INT64_MIN, k, k, NULL, 0), KP_E_INVALID_ARG);
    /* a kept last offset below a record already added */
    kp_batch_builder_set_last_offset_delta(&b, 2);
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_batch_builder_finish(&b, &out), KP_E_INVALID_ARG);
    kp_batch_builder_set_last_offset_delta(&b, -1);
    CU_ASSERT_EQUAL(kp_batch_builder_finish(&b, &out), 0);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse_lenient(out.buf, out.len, &h, &size), 0);
    CU_ASSERT_EQUAL(h.RecordCount, 1);
    CU_ASSERT_EQUAL(h.LastOffsetDelta, 3);
    kp_wr_free(&out);
    kp_batch_builder_free(&b);
}

static void test_builder_finish_respects_writer_ceiling(void)
{
    struct kp_batch_builder b;
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, TS0, -1, -1, -1, MiB), 0);
    CU_ASSERT_EQUAL(
        kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, bytes_c("k"), bytes_c("v"), NULL, 0),
        0);
    uint8_t small[64];
    struct kp_writer out;
    kp_wr_init_fixed(&out, small, sizeof small);
    CU_ASSERT_EQUAL(kp_batch_builder_finish(&b, &out), KP_E_TOO_LARGE);
    CU_ASSERT_EQUAL(out.len, 0);
    CU_ASSERT_EQUAL(out.err, 0);
    uint8_t big[128];
    kp_wr_init_fixed(&out, big, sizeof big);
    CU_ASSERT_EQUAL(kp_batch_builder_finish(&b, &out), 0);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(big, out.len, &h, &size), 0);
    kp_batch_builder_free(&b);
}

/* Built straight into a writer, a batch is byte for byte the one finish
 * appends, whatever the writer held before and for every codec. */
static void test_builder_written_into_a_writer_gives_the_same_bytes(void)
{
    static const int codecs[] = {KP_CODEC_NONE, KP_CODEC_GZIP, KP_CODEC_SNAPPY, KP_CODEC_LZ4,
                                 KP_CODEC_ZSTD};
    for (size_t c = 0; c < COUNT(codecs); c++) {
        struct kp_writer copied, direct;
        kp_wr_init(&copied, SIZE_MAX);
        kp_wr_init(&direct, SIZE_MAX);
        kp_wr_raw(&copied, "prefix", 6);
        kp_wr_raw(&direct, "prefix", 6);
        for (int k = 0; k < 2; k++) { /* two batches, one after the other */
            build_samples_at(&copied, codecs[c], false);
            build_samples_at(&direct, codecs[c], true);
        }
        CU_ASSERT_EQUAL(direct.len, copied.len);
        CU_ASSERT_TRUE(direct.len == copied.len && memcmp(direct.buf, copied.buf, direct.len) == 0);
        struct kp_batch_header h;
        size_t size = 0;
        CU_ASSERT_EQUAL(kp_batch_parse(direct.buf + 6, direct.len - 6, &h, &size), 0);
        CU_ASSERT_EQUAL(kp_batch_codec(&h), codecs[c]);
        CU_ASSERT_EQUAL(h.RecordCount, (int32_t)COUNT(samples));
        kp_wr_free(&copied);
        kp_wr_free(&direct);
    }
}

/* In place, a record that does not fit (the writer's ceiling or the
 * batch's) leaves the writer as it was and usable; finish seals what fit. */
static void test_builder_in_place_stops_at_either_ceiling(void)
{
    uint8_t buf[160];
    struct kp_writer out;
    kp_wr_init_fixed(&out, buf, sizeof buf);
    kp_wr_raw(&out, "ab", 2);
    struct kp_batch_builder b;
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, TS0, -1, -1, -1, MiB), 0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_write_into(&b, &out), 0);
    CU_ASSERT_EQUAL(out.len, 2 + KP_BATCH_HEADER_SIZE);
    CU_ASSERT_EQUAL(kp_batch_builder_write_into(&b, &out), KP_E_INVALID_ARG);
    int added = 0;
    size_t len_before = 0;
    int rc = 0;
    while (rc == 0) {
        len_before = out.len;
        rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, bytes_c("key"),
                                  bytes_c("twenty bytes of it.."), NULL, 0);
        added += rc == 0;
    }
    CU_ASSERT_EQUAL(rc, KP_E_TOO_LARGE);
    CU_ASSERT_TRUE(added >= 2);
    CU_ASSERT_EQUAL(out.len, len_before);
    CU_ASSERT_EQUAL(out.err, 0);
    CU_ASSERT_EQUAL(kp_batch_builder_size(&b), out.len - 2);
    struct kp_writer other;
    kp_wr_init(&other, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_batch_builder_finish(&b, &other), KP_E_INVALID_ARG);
    kp_wr_free(&other);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &out), 0);
    kp_batch_builder_free(&b);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL_FATAL(kp_batch_parse(buf + 2, out.len - 2, &h, &size), 0);
    CU_ASSERT_EQUAL(h.RecordCount, added);
    int32_t n = 0;
    CU_ASSERT_EQUAL(drain(buf + 2, size, MiB, &n), KP_ITER_END);
    CU_ASSERT_EQUAL(n, added);

    /* the batch's own ceiling, with a writer that has room to spare */
    struct kp_writer big;
    kp_wr_init(&big, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, TS0, -1, -1, -1, 100), 0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_write_into(&b, &big), 0);
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, bytes_c("key"),
                                         bytes_c("twenty bytes of it.."), NULL, 0),
                    0);
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, bytes_c("key"),
                                         bytes_c("twenty bytes of it.."), NULL, 0),
                    KP_E_TOO_LARGE);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &big), 0);
    CU_ASSERT_TRUE(big.len <= 100);
    CU_ASSERT_EQUAL(kp_batch_parse(big.buf, big.len, &h, &size), 0);
    CU_ASSERT_EQUAL(h.RecordCount, 1);
    kp_batch_builder_free(&b);
    kp_wr_free(&big);
}

struct walk_ctx {
    int codec;
    bool in_place;
};

/* Builds, parses and walks a batch as *ctx (a struct walk_ctx) says;
 * returns the first error. */
static int build_and_walk(void *ctx)
{
    const struct walk_ctx *wc = ctx;
    int codec = wc->codec;
    struct kp_batch_builder b;
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    int rc = kp_batch_builder_init(&b, codec, 0, TS0, -1, -1, -1, MiB);
    if (rc == 0 && wc->in_place) {
        rc = kp_batch_builder_write_into(&b, &out);
    }
    for (int i = 0; rc == 0 && i < 50; i++) {
        rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0 + i, bytes_c("key"),
                                  bytes_c("a value long enough to grow the buffer, twice over"),
                                  two_headers, 2);
    }
    if (rc == 0) {
        rc = kp_batch_builder_finish(&b, &out);
    }
    kp_batch_builder_free(&b);
    if (rc == 0) {
        struct kp_batch_header h;
        size_t size = 0;
        rc = kp_batch_parse(out.buf, out.len, &h, &size);
    }
    if (rc == 0) {
        int32_t n = 0;
        rc = drain(out.buf, out.len, MiB, &n);
        rc = rc == KP_ITER_END && n == 50 ? 0 : rc;
    }
    kp_wr_free(&out);
    return rc;
}

static void test_batch_survives_every_allocation_failure(void)
{
    /* the builder's buffer, the compressor's (zlib's through kp_malloc)
     * and the iterator's decompression buffer, each failing in turn */
    static const int codecs[] = {KP_CODEC_NONE, KP_CODEC_GZIP, KP_CODEC_SNAPPY, KP_CODEC_LZ4,
                                 KP_CODEC_ZSTD};
    static const char *const names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    unsigned long runs = 0;
    for (size_t c = 0; c < COUNT(codecs); c++) {
        for (int in_place = 0; in_place < 2; in_place++) {
            struct walk_ctx wc = {codecs[c], in_place != 0};
            runs += st_torture_each_allocation(build_and_walk, &wc, names[c]);
        }
    }
    printf("\n  %lu runs with an allocation failed\n", runs);
}

static CU_TestInfo tests[] = {
    {"test_batch_round_trips_each_codec", test_batch_round_trips_each_codec},
    {"test_builder_written_into_a_writer_gives_the_same_bytes",
     test_builder_written_into_a_writer_gives_the_same_bytes},
    {"test_builder_in_place_stops_at_either_ceiling", test_builder_in_place_stops_at_either_ceiling},
    {"test_batch_builder_matches_hand_written_bytes",
     test_batch_builder_matches_hand_written_bytes},
    {"test_batch_parses_hand_written_bytes", test_batch_parses_hand_written_bytes},
    {"test_batch_parse_returns_again_for_every_truncation",
     test_batch_parse_returns_again_for_every_truncation},
    {"test_batch_iter_rejects_every_truncated_records_block",
     test_batch_iter_rejects_every_truncated_records_block},
    {"test_batch_rejects_negative_batch_length", test_batch_rejects_negative_batch_length},
    {"test_batch_rejects_huge_batch_length", test_batch_rejects_huge_batch_length},
    {"test_batch_rejects_batch_length_below_header", test_batch_rejects_batch_length_below_header},
    {"test_batch_rejects_bad_crc", test_batch_rejects_bad_crc},
    {"test_batch_rejects_wrong_magic", test_batch_rejects_wrong_magic},
    {"test_batch_rejects_last_offset_delta_mismatch",
     test_batch_rejects_last_offset_delta_mismatch},
    {"test_batch_lenient_accepts_compacted_gap", test_batch_lenient_accepts_compacted_gap},
    {"test_batch_rejects_negative_record_count", test_batch_rejects_negative_record_count},
    {"test_batch_rejects_huge_record_count", test_batch_rejects_huge_record_count},
    {"test_batch_strict_rejects_empty_batch", test_batch_strict_rejects_empty_batch},
    {"test_batch_iter_rejects_overlong_varint", test_batch_iter_rejects_overlong_varint},
    {"test_batch_iter_rejects_record_length_mismatch",
     test_batch_iter_rejects_record_length_mismatch},
    {"test_batch_iter_rejects_fewer_records_than_count",
     test_batch_iter_rejects_fewer_records_than_count},
    {"test_batch_iter_rejects_more_records_than_count",
     test_batch_iter_rejects_more_records_than_count},
    {"test_batch_iter_rejects_non_increasing_offset_delta",
     test_batch_iter_rejects_non_increasing_offset_delta},
    {"test_batch_iter_rejects_null_header_key", test_batch_iter_rejects_null_header_key},
    {"test_batch_iter_rejects_huge_header_count", test_batch_iter_rejects_huge_header_count},
    {"test_batch_iter_rejects_offset_overflow", test_batch_iter_rejects_offset_overflow},
    {"test_batch_iter_rejects_decompression_bomb", test_batch_iter_rejects_decompression_bomb},
    {"test_batch_iter_rejects_corrupt_compressed_block",
     test_batch_iter_rejects_corrupt_compressed_block},
    {"test_batch_iter_rejects_unknown_codec", test_batch_iter_rejects_unknown_codec},
    {"test_batch_read_walks_consecutive_batches", test_batch_read_walks_consecutive_batches},
    {"test_batch_peek_reads_header_without_crc", test_batch_peek_reads_header_without_crc},
    {"test_batch_rewrite_base_offset_keeps_crc_valid",
     test_batch_rewrite_base_offset_keeps_crc_valid},
    {"test_batch_log_append_time_rewrite_yields_valid_crc",
     test_batch_log_append_time_rewrite_yields_valid_crc},
    {"test_batch_log_append_time_refuses_damaged_batch",
     test_batch_log_append_time_refuses_damaged_batch},
    {"test_builder_refuses_record_over_max_bytes", test_builder_refuses_record_over_max_bytes},
    {"test_builder_keeps_offset_gaps_for_cleaner", test_builder_keeps_offset_gaps_for_cleaner},
    {"test_builder_writes_empty_batch_for_cleaner", test_builder_writes_empty_batch_for_cleaner},
    {"test_builder_sets_attribute_bits", test_builder_sets_attribute_bits},
    {"test_builder_rejects_invalid_arguments", test_builder_rejects_invalid_arguments},
    {"test_builder_finish_respects_writer_ceiling", test_builder_finish_respects_writer_ceiling},
    {"test_batch_survives_every_allocation_failure", test_batch_survives_every_allocation_failure},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-record-batch", tests);
}
