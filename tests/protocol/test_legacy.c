/* Unit tests for samsa-protocol's MessageSet v0/v1 conversions (legacy.h). */
#include <samsa-protocol/alloc.h>
#include <samsa-protocol/compress.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/legacy.h>
#include <samsa-protocol/record_batch.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_run.h"
#include "torture.h"

#define MiB ((size_t)1024 * 1024)
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define TS0 INT64_C(1700000000000)

/* clang-format off */
/* Magic 0, offset 0, key "key", value "value". */
static const uint8_t msg_v0[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* Offset 0 */
    0x00, 0x00, 0x00, 0x16,                         /* MessageSize 22 */
    0x23, 0x56, 0xc1, 0x37,                         /* Crc: CRC-32 of [16, 34) */
    0x00,                                           /* Magic 0 */
    0x00,                                           /* Attributes: none */
    0x00, 0x00, 0x00, 0x03, 'k', 'e', 'y',          /* Key */
    0x00, 0x00, 0x00, 0x05, 'v', 'a', 'l', 'u', 'e' /* Value */
};

/* Magic 1, offset 0, timestamp 1700000000000, null key, value "v". */
static const uint8_t msg_v1[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* Offset 0 */
    0x00, 0x00, 0x00, 0x17,                         /* MessageSize 23 */
    0xc1, 0x67, 0x2a, 0xc5,                         /* Crc */
    0x01,                                           /* Magic 1 */
    0x00,                                           /* Attributes: none, CreateTime */
    0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, /* Timestamp */
    0xff, 0xff, 0xff, 0xff,                         /* Key: null */
    0x00, 0x00, 0x00, 0x01, 'v'                     /* Value */
};
/* clang-format on */

struct rec {
    int64_t offset;
    int64_t ts;
    const char *key; /* NULL: null */
    const char *value;
};

static struct kp_bytes bytes_c(const char *s)
{
    struct kp_bytes b = KP_BYTES_NULL;
    if (s != NULL) {
        b.ptr = (const uint8_t *)s;
        b.len = (int32_t)strlen(s);
    }
    return b;
}

static void put_be32(struct kp_writer *w, size_t at, uint32_t v)
{
    kp_store_be32(w->buf + at, v);
}

/* One legacy message appended to w (the writer under test is not used). */
static void message(struct kp_writer *w, int8_t magic, int8_t attrs, int64_t offset, int64_t ts,
                    const char *key, const char *value)
{
    size_t at = w->len;
    kp_wr_i64(w, offset);
    kp_wr_i32(w, 0);
    kp_wr_u32(w, 0);
    kp_wr_i8(w, magic);
    kp_wr_i8(w, attrs);
    if (magic == 1) {
        kp_wr_i64(w, ts);
    }
    kp_wr_bytes(w, bytes_c(key));
    kp_wr_bytes(w, bytes_c(value));
    CU_ASSERT_FATAL(w->err == 0);
    put_be32(w, at + 8, (uint32_t)(w->len - at - 12));
    put_be32(w, at + 12, kp_crc32(0, w->buf + at + 16, w->len - at - 16));
}

/* A wrapper of inner[0..n) compressed with codec (magic-0 lz4: with the
 * given header checksum style). */
static void wrapper(struct kp_writer *w, int8_t magic, int codec, int8_t attrs, int64_t offset,
                    int64_t ts, const struct kp_writer *inner, bool broken_lz4)
{
    struct kp_writer z;
    kp_wr_init(&z, 16 * MiB);
    CU_ASSERT_FATAL(kp_compress(codec, inner->buf, inner->len, &z) == 0);
    if (codec == KP_CODEC_LZ4 && broken_lz4) {
        size_t hc = 6; /* Samsa's frames have no content size or dictionary */
        z.buf[hc] = (uint8_t)((kp_xxh32(z.buf, hc, 0) >> 8) & 0xff);
    }
    size_t at = w->len;
    kp_wr_i64(w, offset);
    kp_wr_i32(w, 0);
    kp_wr_u32(w, 0);
    kp_wr_i8(w, magic);
    kp_wr_i8(w, (int8_t)(attrs | codec));
    if (magic == 1) {
        kp_wr_i64(w, ts);
    }
    kp_wr_i32(w, -1);
    kp_wr_i32(w, (int32_t)z.len);
    kp_wr_raw(w, z.buf, z.len);
    kp_wr_free(&z);
    CU_ASSERT_FATAL(w->err == 0);
    put_be32(w, at + 8, (uint32_t)(w->len - at - 12));
    put_be32(w, at + 12, kp_crc32(0, w->buf + at + 16, w->len - at - 16));
}

static bool same(struct kp_bytes b, const char *s)
{
    return kp_bytes_eq(b, bytes_c(s));
}

/* The batch in w[0..len) must hold exactly want[0..n) and have codec. */
static void check_batch(const struct kp_writer *w, int codec, const struct rec *want, size_t n)
{
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_FATAL(kp_batch_parse(w->buf, w->len, &h, &size) == 0);
    CU_ASSERT_EQUAL(size, w->len);
    CU_ASSERT_EQUAL(kp_batch_codec(&h), codec);
    CU_ASSERT_EQUAL(h.ProducerId, -1);
    CU_ASSERT_EQUAL(h.RecordCount, (int32_t)n);
    struct kp_batch_iter it;
    CU_ASSERT_FATAL(kp_batch_iter_init(&it, w->buf, w->len, 16 * MiB) == 0);
    int64_t max_ts = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        struct kp_record r;
        CU_ASSERT_FATAL(kp_batch_iter_next(&it, &r) == 0);
        CU_ASSERT_EQUAL(r.Offset, want[i].offset);
        CU_ASSERT_EQUAL(r.Timestamp, want[i].ts);
        CU_ASSERT(same(r.Key, want[i].key));
        CU_ASSERT(same(r.Value, want[i].value));
        CU_ASSERT_EQUAL(r.HeaderCount, 0);
        max_ts = r.Timestamp > max_ts ? r.Timestamp : max_ts;
    }
    struct kp_record r;
    CU_ASSERT_EQUAL(kp_batch_iter_next(&it, &r), KP_ITER_END);
    kp_batch_iter_free(&it);
    CU_ASSERT_EQUAL(h.MaxTimestamp, max_ts);
}

static int upconvert(const uint8_t *p, size_t len, struct kp_writer *out)
{
    struct kp_legacy_info info;
    return kp_legacy_upconvert(p, len, 16 * MiB, 16 * MiB, out, &info);
}

static void test_xxh32_known_values(void)
{
    CU_ASSERT_EQUAL(kp_xxh32("", 0, 0), 0x02cc5d05u);
    CU_ASSERT_EQUAL(kp_xxh32("abc", 3, 0), 0x32d153ffu);
    const char *s = "Nobody inspects the spammish repetition";
    CU_ASSERT_EQUAL(kp_xxh32(s, strlen(s), 0), 0xe2293b2fu);
}

static void test_upconvert_hand_written_messages(void)
{
    struct kp_writer set;
    kp_wr_init(&set, MiB);
    kp_wr_raw(&set, msg_v0, sizeof msg_v0);
    kp_wr_raw(&set, msg_v1, sizeof msg_v1);
    struct kp_writer out;
    kp_wr_init(&out, MiB);
    struct kp_legacy_info info;
    CU_ASSERT_FATAL(kp_legacy_upconvert(set.buf, set.len, MiB, MiB, &out, &info) == 0);
    CU_ASSERT_EQUAL(info.count, 2);
    CU_ASSERT_EQUAL(info.magic, 1);
    CU_ASSERT_EQUAL(info.codec, KP_CODEC_NONE);
    /* magic 0 has no timestamp: -1 (Kafka's NO_TIMESTAMP) */
    const struct rec want[] = {{0, -1, "key", "value"}, {1, TS0, NULL, "v"}};
    check_batch(&out, KP_CODEC_NONE, want, COUNT(want));
    kp_wr_free(&out);
    kp_wr_free(&set);
}

static void test_upconvert_every_codec_in_wrappers(void)
{
    for (int codec = KP_CODEC_GZIP; codec <= KP_CODEC_LZ4; codec++) {
        for (int8_t magic = 0; magic <= 1; magic++) {
            /* magic-0 lz4 with Kafka's header checksum and with LZ4's */
            int variants = codec == KP_CODEC_LZ4 && magic == 0 ? 2 : 1;
            for (int broken = 0; broken < variants; broken++) {
                struct kp_writer inner;
                kp_wr_init(&inner, MiB);
                message(&inner, magic, 0, 0, TS0 + 7, "a", NULL);
                message(&inner, magic, 0, 1, TS0 + 3, NULL, "bb");
                message(&inner, magic, 0, 2, TS0 + 9, "c", "ccc");
                struct kp_writer set;
                kp_wr_init(&set, MiB);
                wrapper(&set, magic, codec, 0, 2, TS0 + 9, &inner, broken != 0);
                struct kp_writer out;
                kp_wr_init(&out, MiB);
                CU_ASSERT_EQUAL_FATAL(upconvert(set.buf, set.len, &out), 0);
                int64_t t = magic == 1;
                const struct rec want[] = {{0, t ? TS0 + 7 : -1, "a", NULL},
                                           {1, t ? TS0 + 3 : -1, NULL, "bb"},
                                           {2, t ? TS0 + 9 : -1, "c", "ccc"}};
                check_batch(&out, codec, want, COUNT(want));
                kp_wr_free(&out);
                kp_wr_free(&set);
                kp_wr_free(&inner);
            }
        }
    }
}

static void test_upconvert_log_append_time_wrapper_gives_its_timestamp(void)
{
    struct kp_writer inner;
    kp_wr_init(&inner, MiB);
    message(&inner, 1, 0, 0, 5, "a", "1");
    message(&inner, 1, 0, 1, 6, "b", "2");
    struct kp_writer set;
    kp_wr_init(&set, MiB);
    wrapper(&set, 1, KP_CODEC_GZIP, KP_LEGACY_ATTR_LOG_APPEND_TIME, 1, TS0, &inner, false);
    struct kp_writer out;
    kp_wr_init(&out, MiB);
    CU_ASSERT_EQUAL_FATAL(upconvert(set.buf, set.len, &out), 0);
    const struct rec want[] = {{0, TS0, "a", "1"}, {1, TS0, "b", "2"}};
    check_batch(&out, KP_CODEC_GZIP, want, COUNT(want));
    kp_wr_free(&out);
    kp_wr_free(&set);
    kp_wr_free(&inner);
}

static void test_upconvert_rejects_damage(void)
{
    struct kp_writer out;
    kp_wr_init(&out, MiB);
    uint8_t bad[sizeof msg_v0];
    /* a CRC byte, a value byte: KP_E_CRC */
    memcpy(bad, msg_v0, sizeof bad);
    bad[13] ^= 1;
    CU_ASSERT_EQUAL(upconvert(bad, sizeof bad, &out), KP_E_CRC);
    memcpy(bad, msg_v0, sizeof bad);
    bad[sizeof bad - 1] ^= 1;
    CU_ASSERT_EQUAL(upconvert(bad, sizeof bad, &out), KP_E_CRC);
    /* truncated, trailing bytes, empty */
    CU_ASSERT_EQUAL(upconvert(msg_v0, sizeof msg_v0 - 1, &out), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(upconvert(msg_v0, 5, &out), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(upconvert(msg_v0, 0, &out), KP_E_CORRUPT);
    /* a key length running past the message */
    struct kp_writer w;
    kp_wr_init(&w, MiB);
    message(&w, 0, 0, 0, -1, "key", "value");
    kp_store_be32(w.buf + 18, 100);
    kp_store_be32(w.buf + 12, kp_crc32(0, w.buf + 16, w.len - 16));
    CU_ASSERT_EQUAL(upconvert(w.buf, w.len, &out), KP_E_CORRUPT);
    /* magic 2 and an unknown codec (zstd has no legacy form) */
    kp_wr_reset(&w);
    message(&w, 0, KP_CODEC_ZSTD, 0, -1, NULL, "x");
    CU_ASSERT_EQUAL(upconvert(w.buf, w.len, &out), KP_E_CORRUPT);
    kp_wr_reset(&w);
    message(&w, 0, 0, 0, -1, NULL, "x");
    w.buf[16] = 2;
    kp_store_be32(w.buf + 12, kp_crc32(0, w.buf + 16, w.len - 16));
    CU_ASSERT_EQUAL(upconvert(w.buf, w.len, &out), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(out.len, 0);
    kp_wr_free(&w);
    kp_wr_free(&out);
}

static void test_upconvert_rejects_bad_wrappers(void)
{
    struct kp_writer out;
    kp_wr_init(&out, MiB);
    struct kp_writer inner;
    kp_wr_init(&inner, MiB);
    struct kp_writer set;
    kp_wr_init(&set, MiB);
    /* an inner message with a bad CRC */
    message(&inner, 1, 0, 0, 1, "k", "v");
    inner.buf[inner.len - 1] ^= 1;
    wrapper(&set, 1, KP_CODEC_SNAPPY, 0, 0, 1, &inner, false);
    CU_ASSERT_EQUAL(upconvert(set.buf, set.len, &out), KP_E_CRC);
    /* a compressed inner message */
    kp_wr_reset(&inner);
    kp_wr_reset(&set);
    message(&inner, 1, KP_CODEC_GZIP, 0, 1, "k", "v");
    wrapper(&set, 1, KP_CODEC_GZIP, 0, 0, 1, &inner, false);
    CU_ASSERT_EQUAL(upconvert(set.buf, set.len, &out), KP_E_CORRUPT);
    /* an inner magic unlike the wrapper's */
    kp_wr_reset(&inner);
    kp_wr_reset(&set);
    message(&inner, 0, 0, 0, -1, "k", "v");
    wrapper(&set, 1, KP_CODEC_GZIP, 0, 0, 1, &inner, false);
    CU_ASSERT_EQUAL(upconvert(set.buf, set.len, &out), KP_E_CORRUPT);
    /* an empty inner set, and a value that is not gzip */
    kp_wr_reset(&inner);
    kp_wr_reset(&set);
    wrapper(&set, 1, KP_CODEC_GZIP, 0, 0, 1, &inner, false);
    CU_ASSERT_EQUAL(upconvert(set.buf, set.len, &out), KP_E_CORRUPT);
    kp_wr_reset(&set);
    message(&set, 1, KP_CODEC_GZIP, 0, 1, NULL, "not gzip");
    CU_ASSERT_EQUAL(upconvert(set.buf, set.len, &out), KP_E_COMPRESSION);
    /* a null wrapper value */
    kp_wr_reset(&set);
    message(&set, 1, KP_CODEC_GZIP, 0, 1, NULL, NULL);
    CU_ASSERT_EQUAL(upconvert(set.buf, set.len, &out), KP_E_CORRUPT);
    /* the decompression ceiling */
    kp_wr_reset(&inner);
    kp_wr_reset(&set);
    char big[4096];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    message(&inner, 1, 0, 0, 1, NULL, big);
    wrapper(&set, 1, KP_CODEC_GZIP, 0, 0, 1, &inner, false);
    struct kp_legacy_info info;
    CU_ASSERT_EQUAL(kp_legacy_upconvert(set.buf, set.len, 1000, MiB, &out, &info),
                    KP_E_TOO_LARGE);
    CU_ASSERT_EQUAL(out.len, 0);
    kp_wr_free(&set);
    kp_wr_free(&inner);
    kp_wr_free(&out);
}

/* A v2 batch of three records (one with a header) at base 100. */
static void v2_batch(struct kp_writer *out, int codec, bool log_append)
{
    struct kp_batch_builder b;
    CU_ASSERT_FATAL(kp_batch_builder_init(&b, codec, 100, TS0, -1, -1, -1, MiB) == 0);
    if (log_append) {
        kp_batch_builder_set_timestamp_type(&b, KP_TS_LOG_APPEND_TIME);
    }
    static const struct kp_record_header hdr = {{"hk", 2}, {(const uint8_t *)"hv", 2}};
    CU_ASSERT_FATAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0 + 4, bytes_c("a"),
                                         bytes_c("1"), &hdr, 1) == 0);
    CU_ASSERT_FATAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0 + 2, KP_BYTES_NULL,
                                         bytes_c("22"), NULL, 0) == 0);
    CU_ASSERT_FATAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0 + 9, bytes_c("c"),
                                         KP_BYTES_NULL, NULL, 0) == 0);
    CU_ASSERT_FATAL(kp_batch_builder_finish(&b, out) == 0);
    kp_batch_builder_free(&b);
}

/* Walks a legacy set by hand: offsets, timestamps, attributes of the top
 * level messages into the arrays (at most n); returns how many. */
static size_t top_level(const struct kp_writer *w, int64_t *offsets, int8_t *attrs, size_t n)
{
    size_t pos = 0;
    size_t i = 0;
    while (pos + 12 <= w->len && i < n) {
        offsets[i] = (int64_t)kp_load_be64(w->buf + pos);
        attrs[i] = (int8_t)w->buf[pos + 17];
        pos += 12 + kp_load_be32(w->buf + pos + 8);
        i++;
    }
    CU_ASSERT_EQUAL(pos, w->len);
    return i;
}

static void test_downconvert_then_upconvert_keeps_records(void)
{
    for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_LZ4; codec++) {
        for (int8_t magic = 0; magic <= 1; magic++) {
            struct kp_writer batch;
            kp_wr_init(&batch, MiB);
            v2_batch(&batch, codec, false);
            struct kp_writer set;
            kp_wr_init(&set, MiB);
            int32_t count = 0;
            CU_ASSERT_EQUAL_FATAL(
                kp_legacy_downconvert(batch.buf, batch.len, magic, 0, MiB, &set, &count), 0);
            CU_ASSERT_EQUAL(count, 3);
            int64_t offsets[4] = {0};
            int8_t attrs[4] = {0};
            size_t n = top_level(&set, offsets, attrs, 4);
            if (codec == KP_CODEC_NONE) {
                CU_ASSERT_EQUAL(n, 3);
                CU_ASSERT_EQUAL(offsets[0], 100);
                CU_ASSERT_EQUAL(offsets[2], 102);
            } else {
                /* one wrapper at the last offset, with the batch's codec */
                CU_ASSERT_EQUAL(n, 1);
                CU_ASSERT_EQUAL(offsets[0], 102);
                CU_ASSERT_EQUAL(attrs[0] & KP_LEGACY_ATTR_CODEC_MASK, codec);
            }
            /* back to v2 (offsets from 0, headers gone) */
            struct kp_writer back;
            kp_wr_init(&back, MiB);
            CU_ASSERT_EQUAL_FATAL(upconvert(set.buf, set.len, &back), 0);
            int64_t t = magic == 1;
            const struct rec want[] = {{0, t ? TS0 + 4 : -1, "a", "1"},
                                       {1, t ? TS0 + 2 : -1, NULL, "22"},
                                       {2, t ? TS0 + 9 : -1, "c", NULL}};
            check_batch(&back, codec, want, COUNT(want));
            kp_wr_free(&back);
            kp_wr_free(&set);
            kp_wr_free(&batch);
        }
    }
}

/* A v2 batch to take down to a magic and back up under allocation torture. */
struct convert_case {
    const struct kp_writer *batch;
    int8_t magic;
};

/* Downconverts the case's batch and upconverts the set again; returns the
 * first error, KP_E_CORRUPT when a record went missing. */
static int down_and_up(void *ctx)
{
    const struct convert_case *cc = ctx;
    struct kp_writer set;
    struct kp_writer back;
    kp_wr_init(&set, MiB);
    kp_wr_init(&back, MiB);
    int32_t count = 0;
    int rc = kp_legacy_downconvert(cc->batch->buf, cc->batch->len, cc->magic, 0, MiB, &set,
                                   &count);
    struct kp_legacy_info info;
    if (rc == 0) {
        rc = kp_legacy_upconvert(set.buf, set.len, MiB, MiB, &back, &info);
    }
    if (rc == 0 && (count != 3 || info.count != 3)) {
        rc = KP_E_CORRUPT;
    }
    kp_wr_free(&back);
    kp_wr_free(&set);
    return rc;
}

static void test_conversions_survive_every_allocation_failure(void)
{
    /* the writers' growth, zlib's state (gzip) and the copy that mends a
     * magic-0 lz4 frame's checksum, each failing in turn */
    unsigned long runs = 0;
    for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_LZ4; codec++) {
        struct kp_writer batch;
        kp_wr_init(&batch, MiB);
        v2_batch(&batch, codec, false);
        for (int8_t magic = 0; magic <= 1; magic++) {
            struct convert_case cc = {&batch, magic};
            char name[64];
            (void)snprintf(name, sizeof name, "codec %d to magic %d and back", codec, magic);
            runs += st_torture_each_allocation(down_and_up, &cc, name);
        }
        kp_wr_free(&batch);
    }
    printf("\n  %lu runs with an allocation failed\n", runs);
}

static void test_downconvert_magic1_wrapper_layout(void)
{
    struct kp_writer batch;
    kp_wr_init(&batch, MiB);
    v2_batch(&batch, KP_CODEC_GZIP, true);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_FATAL(kp_batch_parse(batch.buf, batch.len, &h, &size) == 0);
    struct kp_writer set;
    kp_wr_init(&set, MiB);
    int32_t count = 0;
    CU_ASSERT_FATAL(kp_legacy_downconvert(batch.buf, batch.len, 1, 0, MiB, &set, &count) == 0);
    /* wrapper: LogAppendTime bit, the batch's MaxTimestamp */
    CU_ASSERT_EQUAL(set.buf[17], KP_CODEC_GZIP | KP_LEGACY_ATTR_LOG_APPEND_TIME);
    CU_ASSERT_EQUAL((int64_t)kp_load_be64(set.buf + 18), h.MaxTimestamp);
    /* inner: relative offsets 0..2, each with the LogAppendTime bit */
    int32_t vlen = (int32_t)kp_load_be32(set.buf + 30);
    struct kp_writer plain;
    kp_wr_init(&plain, MiB);
    CU_ASSERT_FATAL(kp_decompress(KP_CODEC_GZIP, set.buf + 34, (size_t)vlen, MiB, &plain) == 0);
    int64_t offsets[4] = {0};
    int8_t attrs[4] = {0};
    CU_ASSERT_EQUAL(top_level(&plain, offsets, attrs, 4), 3);
    CU_ASSERT_EQUAL(offsets[0], 0);
    CU_ASSERT_EQUAL(offsets[2], 2);
    CU_ASSERT_EQUAL(attrs[1], KP_LEGACY_ATTR_LOG_APPEND_TIME);
    kp_wr_free(&plain);
    kp_wr_free(&set);
    kp_wr_free(&batch);
}

static void test_downconvert_lz4_magic0_has_kafkas_checksum(void)
{
    struct kp_writer batch;
    kp_wr_init(&batch, MiB);
    v2_batch(&batch, KP_CODEC_LZ4, false);
    for (int8_t magic = 0; magic <= 1; magic++) {
        struct kp_writer set;
        kp_wr_init(&set, MiB);
        int32_t count = 0;
        CU_ASSERT_FATAL(
            kp_legacy_downconvert(batch.buf, batch.len, magic, 0, MiB, &set, &count) == 0);
        const uint8_t *f = set.buf + 12 + 4 + 2 + (magic == 1 ? 8 : 0) + 4 + 4;
        uint8_t broken = (uint8_t)((kp_xxh32(f, 6, 0) >> 8) & 0xff);
        uint8_t right = (uint8_t)((kp_xxh32(f + 4, 2, 0) >> 8) & 0xff);
        CU_ASSERT_EQUAL(f[6], magic == 0 ? broken : right);
        kp_wr_free(&set);
    }
    kp_wr_free(&batch);
}

static void test_downconvert_from_the_middle_of_a_batch(void)
{
    struct kp_writer batch;
    kp_wr_init(&batch, MiB);
    v2_batch(&batch, KP_CODEC_NONE, false);
    struct kp_writer set;
    kp_wr_init(&set, MiB);
    int32_t count = 0;
    CU_ASSERT_FATAL(kp_legacy_downconvert(batch.buf, batch.len, 1, 102, MiB, &set, &count) == 0);
    CU_ASSERT_EQUAL(count, 1);
    CU_ASSERT_EQUAL((int64_t)kp_load_be64(set.buf), 102);
    kp_wr_free(&set);
    /* compressed batches go whole (the consumer skips what it did not ask) */
    kp_wr_reset(&batch);
    v2_batch(&batch, KP_CODEC_SNAPPY, false);
    kp_wr_init(&set, MiB);
    CU_ASSERT_FATAL(kp_legacy_downconvert(batch.buf, batch.len, 1, 102, MiB, &set, &count) == 0);
    CU_ASSERT_EQUAL(count, 3);
    kp_wr_free(&set);
    kp_wr_free(&batch);
}

static void test_downconvert_refusals_leave_the_writer(void)
{
    struct kp_writer batch;
    kp_wr_init(&batch, MiB);
    v2_batch(&batch, KP_CODEC_ZSTD, false);
    struct kp_writer set;
    kp_wr_init(&set, 40);
    kp_wr_raw(&set, "prefix", 6);
    int32_t count = 0;
    CU_ASSERT_EQUAL(kp_legacy_downconvert(batch.buf, batch.len, 1, 0, MiB, &set, &count),
                    KP_E_UNSUPPORTED);
    CU_ASSERT_EQUAL(kp_legacy_downconvert(batch.buf, batch.len, 2, 0, MiB, &set, &count),
                    KP_E_UNSUPPORTED);
    kp_wr_reset(&batch);
    v2_batch(&batch, KP_CODEC_NONE, false);
    /* over the writer's ceiling of 40 bytes: the writer as it was */
    CU_ASSERT_EQUAL(kp_legacy_downconvert(batch.buf, batch.len, 0, 0, MiB, &set, &count),
                    KP_E_TOO_LARGE);
    CU_ASSERT_EQUAL(set.len, 6);
    CU_ASSERT_EQUAL(set.err, 0);
    kp_wr_free(&set);
    /* a control batch gives nothing */
    kp_wr_reset(&batch);
    struct kp_batch_builder b;
    CU_ASSERT_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, TS0, 5, 0, 0, MiB) == 0);
    kp_batch_builder_set_flags(&b, true, true);
    CU_ASSERT_FATAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS0, bytes_c("k"),
                                         bytes_c("v"), NULL, 0) == 0);
    CU_ASSERT_FATAL(kp_batch_builder_finish(&b, &batch) == 0);
    kp_batch_builder_free(&b);
    kp_wr_init(&set, MiB);
    CU_ASSERT_EQUAL(kp_legacy_downconvert(batch.buf, batch.len, 1, 0, MiB, &set, &count), 0);
    CU_ASSERT_EQUAL(count, 0);
    CU_ASSERT_EQUAL(set.len, 0);
    kp_wr_free(&set);
    kp_wr_free(&batch);
}

static void test_max_timestamp_rewritten_from_records(void)
{
    struct kp_writer batch;
    kp_wr_init(&batch, MiB);
    v2_batch(&batch, KP_CODEC_GZIP, false);
    /* MaxTimestamp -1 as sarama writes it, with a valid CRC */
    kp_store_be64(batch.buf + 35, (uint64_t)-1);
    kp_store_be32(batch.buf + 17, kp_crc32c(0, batch.buf + 21, batch.len - 21));
    int64_t max_ts = 0;
    CU_ASSERT_FATAL(kp_batch_records_max_timestamp(batch.buf, batch.len, MiB, &max_ts) == 0);
    CU_ASSERT_EQUAL(max_ts, TS0 + 9);
    CU_ASSERT_FATAL(kp_batch_set_max_timestamp(batch.buf, batch.len, max_ts) == 0);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_FATAL(kp_batch_parse(batch.buf, batch.len, &h, &size) == 0);
    CU_ASSERT_EQUAL(h.MaxTimestamp, TS0 + 9);
    CU_ASSERT_EQUAL(h.Attributes & KP_BATCH_ATTR_LOG_APPEND_TIME, 0);
    /* a damaged batch is never given a valid CRC */
    batch.buf[batch.len - 1] ^= 1;
    CU_ASSERT_EQUAL(kp_batch_set_max_timestamp(batch.buf, batch.len, 1), KP_E_CRC);
    kp_wr_free(&batch);
}

static CU_TestInfo tests[] = {
    {"xxh32_known_values", test_xxh32_known_values},
    {"upconvert_hand_written_messages", test_upconvert_hand_written_messages},
    {"upconvert_every_codec_in_wrappers", test_upconvert_every_codec_in_wrappers},
    {"upconvert_log_append_time_wrapper_gives_its_timestamp",
     test_upconvert_log_append_time_wrapper_gives_its_timestamp},
    {"upconvert_rejects_damage", test_upconvert_rejects_damage},
    {"upconvert_rejects_bad_wrappers", test_upconvert_rejects_bad_wrappers},
    {"downconvert_then_upconvert_keeps_records", test_downconvert_then_upconvert_keeps_records},
    {"conversions_survive_every_allocation_failure",
     test_conversions_survive_every_allocation_failure},
    {"downconvert_magic1_wrapper_layout", test_downconvert_magic1_wrapper_layout},
    {"downconvert_lz4_magic0_has_kafkas_checksum",
     test_downconvert_lz4_magic0_has_kafkas_checksum},
    {"downconvert_from_the_middle_of_a_batch", test_downconvert_from_the_middle_of_a_batch},
    {"downconvert_refusals_leave_the_writer", test_downconvert_refusals_leave_the_writer},
    {"max_timestamp_rewritten_from_records", test_max_timestamp_rewritten_from_records},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-legacy", tests);
}
