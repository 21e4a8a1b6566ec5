/* Unit tests for samsa-protocol's compression codecs (compress.h). */
#include <samsa-protocol/alloc.h>
#include <samsa-protocol/compress.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_run.h"
#include "torture.h"

#define MiB ((size_t)1024 * 1024)

static const int all_codecs[] = {
    KP_CODEC_NONE, KP_CODEC_GZIP, KP_CODEC_SNAPPY, KP_CODEC_LZ4, KP_CODEC_ZSTD,
};
static const int real_codecs[] = {KP_CODEC_GZIP, KP_CODEC_SNAPPY, KP_CODEC_LZ4, KP_CODEC_ZSTD};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t next_rand(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Compresses then decompresses `in` and checks the bytes come back. */
static void round_trip(int codec, const uint8_t *in, size_t len)
{
    struct kp_writer z;
    struct kp_writer plain;
    kp_wr_init(&z, SIZE_MAX);
    kp_wr_init(&plain, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(codec, in, len, &z), 0);
    CU_ASSERT_EQUAL(kp_decompress(codec, z.buf, z.len, len, &plain), 0);
    CU_ASSERT_EQUAL(plain.len, len);
    if (plain.len == len && len > 0) {
        CU_ASSERT_EQUAL(memcmp(plain.buf, in, len), 0);
    }
    kp_wr_free(&z);
    kp_wr_free(&plain);
}

static void test_compress_round_trips_each_codec(void)
{
    size_t big = (size_t)300 * 1024;
    uint8_t *random = malloc(big);
    uint8_t *text = malloc(big);
    if (random == NULL || text == NULL) {
        CU_FAIL("out of memory");
        free(random);
        free(text);
        return;
    }
    uint32_t seed = 1;
    for (size_t i = 0; i < big; i++) {
        random[i] = (uint8_t)next_rand(&seed);
        text[i] = (uint8_t)("the quick brown fox "[i % 20]);
    }
    for (size_t c = 0; c < COUNT(all_codecs); c++) {
        round_trip(all_codecs[c], (const uint8_t *)"", 0);
        round_trip(all_codecs[c], (const uint8_t *)"x", 1);
        round_trip(all_codecs[c], text, 1000);
        round_trip(all_codecs[c], text, big);
        round_trip(all_codecs[c], random, big);
    }
    free(random);
    free(text);
}

/* Bytes to compress and decompress under allocation torture. */
struct codec_input {
    int codec;
    const uint8_t *in;
    size_t len;
};

/* Compresses and decompresses the input; returns the first error,
 * KP_E_CORRUPT when other bytes come back. */
static int compress_and_back(void *ctx)
{
    const struct codec_input *ci = ctx;
    struct kp_writer z;
    struct kp_writer plain;
    kp_wr_init(&z, SIZE_MAX);
    kp_wr_init(&plain, SIZE_MAX);
    int rc = kp_compress(ci->codec, ci->in, ci->len, &z);
    if (rc == 0) {
        rc = kp_decompress(ci->codec, z.buf, z.len, ci->len, &plain);
    }
    if (rc == 0 && (plain.len != ci->len || memcmp(plain.buf, ci->in, ci->len) != 0)) {
        rc = KP_E_CORRUPT;
    }
    kp_wr_free(&z);
    kp_wr_free(&plain);
    return rc;
}

static void test_codecs_survive_every_allocation_failure(void)
{
    /* zlib's state and window (through kp_malloc) and the writers' growth
     * over several decompression windows, each failing in turn */
    size_t len = (size_t)200 * 1024;
    uint8_t *text = malloc(len);
    if (text == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    uint32_t seed = 7;
    for (size_t i = 0; i < len; i++) {
        text[i] = (uint8_t)("lorem ipsum dolor "[i % 18] ^ (next_rand(&seed) % 4 == 0));
    }
    unsigned long runs = 0;
    for (size_t c = 0; c < COUNT(all_codecs); c++) {
        struct codec_input ci = {all_codecs[c], text, len};
        char name[32];
        (void)snprintf(name, sizeof name, "codec %d", all_codecs[c]);
        runs += st_torture_each_allocation(compress_and_back, &ci, name);
    }
    free(text);
    printf("\n  %lu runs with an allocation failed\n", runs);
}

static void test_compress_writes_each_codecs_wire_format(void)
{
    const uint8_t *in = (const uint8_t *)"hello hello hello hello";
    size_t len = strlen((const char *)in);
    struct kp_writer w;

    kp_wr_init(&w, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(KP_CODEC_GZIP, in, len, &w), 0);
    CU_ASSERT_TRUE(w.len > 3 && w.buf[0] == 0x1f && w.buf[1] == 0x8b && w.buf[2] == 0x08);
    kp_wr_free(&w);

    kp_wr_init(&w, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(KP_CODEC_LZ4, in, len, &w), 0);
    CU_ASSERT_TRUE(w.len > 4 && memcmp(w.buf, "\x04\x22\x4d\x18", 4) == 0);
    /* FLG: version 01, block independence set */
    CU_ASSERT_TRUE(w.len > 5 && (w.buf[4] & 0xc0) == 0x40 && (w.buf[4] & 0x20) != 0);
    kp_wr_free(&w);

    kp_wr_init(&w, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(KP_CODEC_ZSTD, in, len, &w), 0);
    CU_ASSERT_TRUE(w.len > 4 && memcmp(w.buf, "\x28\xb5\x2f\xfd", 4) == 0);
    kp_wr_free(&w);

    /* raw snappy starts with the uncompressed length as a varint */
    kp_wr_init(&w, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(KP_CODEC_SNAPPY, in, len, &w), 0);
    CU_ASSERT_TRUE(w.len > 1 && w.buf[0] == len);
    kp_wr_free(&w);
}

static void test_decompress_appends_after_existing_bytes(void)
{
    struct kp_writer z;
    struct kp_writer out;
    for (size_t c = 0; c < COUNT(all_codecs); c++) {
        kp_wr_init(&z, SIZE_MAX);
        kp_wr_init(&out, SIZE_MAX);
        kp_wr_raw(&out, "abc", 3);
        CU_ASSERT_EQUAL_FATAL(kp_compress(all_codecs[c], (const uint8_t *)"def", 3, &z), 0);
        /* the ceiling counts only the appended bytes */
        CU_ASSERT_EQUAL(kp_decompress(all_codecs[c], z.buf, z.len, 3, &out), 0);
        CU_ASSERT_EQUAL(out.len, 6);
        CU_ASSERT_TRUE(out.len == 6 && memcmp(out.buf, "abcdef", 6) == 0);
        kp_wr_free(&z);
        kp_wr_free(&out);
    }
}

/* "hello" and " world" as raw snappy literals, in xerial framing. */
/* clang-format off */
static const uint8_t xerial_hello_world[] = {
    0x82, 'S',  'N',  'A',  'P',  'P',  'Y',  0x00, /* magic */
    0x00, 0x00, 0x00, 0x01,                         /* version 1 */
    0x00, 0x00, 0x00, 0x01,                         /* compat 1 */
    0x00, 0x00, 0x00, 0x07,                         /* chunk of 7 bytes */
    0x05, 0x10, 'h',  'e',  'l',  'l',  'o',        /* len 5, literal 5 */
    0x00, 0x00, 0x00, 0x08,                         /* chunk of 8 bytes */
    0x06, 0x14, ' ',  'w',  'o',  'r',  'l',  'd',  /* len 6, literal 6 */
};
/* clang-format on */

static void test_snappy_decodes_xerial_framing(void)
{
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(
        kp_decompress(KP_CODEC_SNAPPY, xerial_hello_world, sizeof xerial_hello_world, 1024, &out),
        0);
    CU_ASSERT_EQUAL(out.len, 11);
    CU_ASSERT_TRUE(out.len == 11 && memcmp(out.buf, "hello world", 11) == 0);
    kp_wr_free(&out);
}

static void test_snappy_accepts_little_endian_xerial_header(void)
{
    uint8_t in[sizeof xerial_hello_world];
    memcpy(in, xerial_hello_world, sizeof in);
    /* version and compat written little-endian, as some brokers did */
    static const uint8_t le_fields[8] = {0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00};
    memcpy(in + 8, le_fields, sizeof le_fields);
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_SNAPPY, in, sizeof in, 1024, &out), 0);
    CU_ASSERT_EQUAL(out.len, 11);
    kp_wr_free(&out);
}

static void test_snappy_decodes_raw_block(void)
{
    static const uint8_t raw[] = {0x05, 0x10, 'h', 'e', 'l', 'l', 'o'};
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_SNAPPY, raw, sizeof raw, 1024, &out), 0);
    CU_ASSERT_TRUE(out.len == 5 && memcmp(out.buf, "hello", 5) == 0);
    kp_wr_free(&out);
}

static void test_snappy_rejects_bad_xerial_chunk_lengths(void)
{
    uint8_t in[sizeof xerial_hello_world];
    struct kp_writer out;

    /* a chunk length past the end */
    memcpy(in, xerial_hello_world, sizeof in);
    in[19] = 0x40;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_SNAPPY, in, sizeof in, 1024, &out), KP_E_COMPRESSION);
    CU_ASSERT_EQUAL(out.len, 0);
    kp_wr_free(&out);

    /* a negative chunk length */
    memcpy(in, xerial_hello_world, sizeof in);
    in[16] = 0xff;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_SNAPPY, in, sizeof in, 1024, &out), KP_E_COMPRESSION);
    kp_wr_free(&out);

    /* a chunk length cut in half */
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_SNAPPY, xerial_hello_world, 29, 1024, &out),
                    KP_E_COMPRESSION);
    CU_ASSERT_EQUAL(out.len, 0);
    kp_wr_free(&out);
}

/* 64 MiB of zeros under a 1 MiB ceiling: refused, and the output buffer
 * never grew past the ceiling. */
static void check_bomb(int codec, const uint8_t *z, size_t z_len)
{
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(codec, z, z_len, MiB, &out), KP_E_TOO_LARGE);
    CU_ASSERT_EQUAL(out.len, 0);
    CU_ASSERT_TRUE(out.cap <= MiB);
    CU_ASSERT_EQUAL(out.err, 0);
    CU_ASSERT_EQUAL(out.max, SIZE_MAX); /* the ceiling is restored */
    kp_wr_free(&out);
}

static void bomb_test(int codec)
{
    size_t len = 64 * MiB;
    uint8_t *zeros = calloc(1, len);
    if (zeros == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    struct kp_writer z;
    kp_wr_init(&z, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(codec, zeros, len, &z), 0);
    free(zeros);
    CU_ASSERT_TRUE(z.len < len / 16);
    check_bomb(codec, z.buf, z.len);
    kp_wr_free(&z);
}

static void test_decompress_rejects_gzip_bomb(void)
{
    bomb_test(KP_CODEC_GZIP);
}

static void test_decompress_rejects_snappy_bomb(void)
{
    bomb_test(KP_CODEC_SNAPPY);
}

static void test_decompress_rejects_lz4_bomb(void)
{
    bomb_test(KP_CODEC_LZ4);
}

static void test_decompress_rejects_zstd_bomb(void)
{
    bomb_test(KP_CODEC_ZSTD);
}

static void test_decompress_rejects_xerial_snappy_bomb(void)
{
    /* 64 chunks of 1 MiB of zeros each */
    uint8_t *zeros = calloc(1, MiB);
    if (zeros == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    struct kp_writer chunk;
    kp_wr_init(&chunk, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(KP_CODEC_SNAPPY, zeros, MiB, &chunk), 0);
    free(zeros);
    struct kp_writer in;
    kp_wr_init(&in, SIZE_MAX);
    kp_wr_raw(&in, xerial_hello_world, 16);
    for (int i = 0; i < 64; i++) {
        kp_wr_i32(&in, (int32_t)chunk.len);
        kp_wr_raw(&in, chunk.buf, chunk.len);
    }
    CU_ASSERT_EQUAL_FATAL(in.err, 0);
    check_bomb(KP_CODEC_SNAPPY, in.buf, in.len);
    kp_wr_free(&in);
    kp_wr_free(&chunk);
}

static void test_snappy_rejects_claimed_length_over_ceiling(void)
{
    /* varint 0xffffffff (4 GiB - 1) then one literal byte: the claim alone
     * is refused, before any memory is reserved */
    static const uint8_t claim[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 'a'};
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_SNAPPY, claim, sizeof claim, MiB, &out), KP_E_TOO_LARGE);
    CU_ASSERT_EQUAL(out.cap, 0);
    kp_wr_free(&out);
}

static void test_decompress_accepts_output_exactly_at_ceiling(void)
{
    size_t len = (size_t)200 * 1024 + 3;
    uint8_t *data = malloc(len);
    if (data == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    for (size_t i = 0; i < len; i++) {
        data[i] = (uint8_t)(i * 7 / 13);
    }
    for (size_t c = 0; c < COUNT(all_codecs); c++) {
        struct kp_writer z;
        struct kp_writer out;
        kp_wr_init(&z, SIZE_MAX);
        CU_ASSERT_EQUAL_FATAL(kp_compress(all_codecs[c], data, len, &z), 0);

        kp_wr_init(&out, SIZE_MAX);
        CU_ASSERT_EQUAL(kp_decompress(all_codecs[c], z.buf, z.len, len, &out), 0);
        CU_ASSERT_EQUAL(out.len, len);
        CU_ASSERT_TRUE(out.cap <= len);
        kp_wr_free(&out);

        kp_wr_init(&out, SIZE_MAX);
        CU_ASSERT_EQUAL(kp_decompress(all_codecs[c], z.buf, z.len, len - 1, &out), KP_E_TOO_LARGE);
        CU_ASSERT_EQUAL(out.len, 0);
        kp_wr_free(&out);
        kp_wr_free(&z);
    }
    free(data);
}

static void test_decompress_respects_writer_ceiling(void)
{
    uint8_t small[10];
    struct kp_writer z;
    struct kp_writer out;
    for (size_t c = 0; c < COUNT(all_codecs); c++) {
        kp_wr_init(&z, SIZE_MAX);
        CU_ASSERT_EQUAL_FATAL(
            kp_compress(all_codecs[c], (const uint8_t *)"0123456789abcdef", 16, &z), 0);
        kp_wr_init_fixed(&out, small, sizeof small);
        CU_ASSERT_EQUAL(kp_decompress(all_codecs[c], z.buf, z.len, MiB, &out), KP_E_TOO_LARGE);
        CU_ASSERT_EQUAL(out.len, 0);
        CU_ASSERT_EQUAL(out.max, sizeof small);
        kp_wr_free(&z);
    }
}

static void test_compress_fits_small_fixed_writer_below_bound(void)
{
    /* 4 KiB of one byte compresses far below every codec's worst-case bound */
    static uint8_t in[4096];
    memset(in, 'a', sizeof in);
    uint8_t buf[512];
    for (size_t c = 0; c < COUNT(real_codecs); c++) {
        struct kp_writer out;
        kp_wr_init_fixed(&out, buf, sizeof buf);
        CU_ASSERT_EQUAL(kp_compress(real_codecs[c], in, sizeof in, &out), 0);
        CU_ASSERT_TRUE(out.len > 0 && out.len < sizeof buf);

        struct kp_writer back;
        kp_wr_init(&back, SIZE_MAX);
        CU_ASSERT_EQUAL(kp_decompress(real_codecs[c], out.buf, out.len, sizeof in, &back), 0);
        CU_ASSERT_TRUE(back.len == sizeof in && memcmp(back.buf, in, sizeof in) == 0);
        kp_wr_free(&back);

        uint8_t tiny[4];
        kp_wr_init_fixed(&out, tiny, sizeof tiny);
        CU_ASSERT_EQUAL(kp_compress(real_codecs[c], in, sizeof in, &out), KP_E_TOO_LARGE);
        CU_ASSERT_EQUAL(out.len, 0);
    }
}

static void test_decompress_rejects_corrupt_input(void)
{
    const char *text = "The quick brown fox jumps over the lazy dog, again and again.";
    size_t len = strlen(text);
    /* for snappy: a 5-byte claim, then a copy from before the start */
    static const uint8_t garbage[] = {0x05, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04,
                                      0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c};
    for (size_t c = 0; c < COUNT(real_codecs); c++) {
        int codec = real_codecs[c];
        struct kp_writer z;
        struct kp_writer out;
        kp_wr_init(&z, SIZE_MAX);
        CU_ASSERT_EQUAL_FATAL(kp_compress(codec, (const uint8_t *)text, len, &z), 0);

        /* garbage */
        kp_wr_init(&out, SIZE_MAX);
        CU_ASSERT_EQUAL(kp_decompress(codec, garbage, sizeof garbage, MiB, &out), KP_E_COMPRESSION);
        CU_ASSERT_EQUAL(out.len, 0);
        kp_wr_free(&out);

        /* every truncation: an error, never a crash, never a success that
         * invents bytes */
        for (size_t cut = 0; cut < z.len; cut++) {
            kp_wr_init(&out, SIZE_MAX);
            int rc = kp_decompress(codec, z.buf, cut, MiB, &out);
            CU_ASSERT_EQUAL(rc, KP_E_COMPRESSION);
            kp_wr_free(&out);
        }
        /* empty input */
        kp_wr_init(&out, SIZE_MAX);
        CU_ASSERT_EQUAL(kp_decompress(codec, z.buf, 0, MiB, &out), KP_E_COMPRESSION);
        kp_wr_free(&out);

        /* trailing garbage after a complete stream */
        kp_wr_raw(&z, garbage, sizeof garbage);
        kp_wr_init(&out, SIZE_MAX);
        CU_ASSERT_EQUAL(kp_decompress(codec, z.buf, z.len, MiB, &out), KP_E_COMPRESSION);
        CU_ASSERT_EQUAL(out.len, 0);
        kp_wr_free(&out);
        kp_wr_free(&z);
    }
}

static void test_gzip_rejects_bad_checksum(void)
{
    const char *text = "checksummed by the gzip trailer";
    struct kp_writer z;
    struct kp_writer out;
    kp_wr_init(&z, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(KP_CODEC_GZIP, (const uint8_t *)text, strlen(text), &z), 0);
    z.buf[z.len - 8] ^= 0x01; /* the CRC-32 in the trailer */
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_GZIP, z.buf, z.len, MiB, &out), KP_E_COMPRESSION);
    kp_wr_free(&out);
    kp_wr_free(&z);
}

static void test_gzip_accepts_concatenated_members(void)
{
    struct kp_writer z;
    struct kp_writer out;
    kp_wr_init(&z, SIZE_MAX);
    CU_ASSERT_EQUAL_FATAL(kp_compress(KP_CODEC_GZIP, (const uint8_t *)"hello ", 6, &z), 0);
    CU_ASSERT_EQUAL_FATAL(kp_compress(KP_CODEC_GZIP, (const uint8_t *)"world", 5, &z), 0);
    kp_wr_init(&out, SIZE_MAX);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_GZIP, z.buf, z.len, MiB, &out), 0);
    CU_ASSERT_TRUE(out.len == 11 && memcmp(out.buf, "hello world", 11) == 0);
    kp_wr_free(&out);
    kp_wr_free(&z);
}

static void test_codec_unknown_is_unsupported(void)
{
    static const int unknown[] = {-1, 5, 6, 7, 100};
    uint8_t in[4] = {1, 2, 3, 4};
    for (size_t i = 0; i < COUNT(unknown); i++) {
        struct kp_writer out;
        kp_wr_init(&out, SIZE_MAX);
        CU_ASSERT_EQUAL(kp_decompress(unknown[i], in, sizeof in, MiB, &out), KP_E_UNSUPPORTED);
        CU_ASSERT_EQUAL(kp_compress(unknown[i], in, sizeof in, &out), KP_E_UNSUPPORTED);
        CU_ASSERT_EQUAL(out.len, 0);
        kp_wr_free(&out);
    }
    CU_ASSERT_STRING_EQUAL(kp_codec_name(7), "unknown");
    CU_ASSERT_STRING_EQUAL(kp_codec_name(KP_CODEC_ZSTD), "zstd");
}

static void test_decompress_refuses_failed_writer(void)
{
    struct kp_writer out;
    kp_wr_init(&out, SIZE_MAX);
    kp_wr_fail(&out, KP_E_NOMEM);
    CU_ASSERT_EQUAL(kp_decompress(KP_CODEC_NONE, (const uint8_t *)"a", 1, MiB, &out), KP_E_NOMEM);
    CU_ASSERT_EQUAL(kp_compress(KP_CODEC_GZIP, (const uint8_t *)"a", 1, &out), KP_E_NOMEM);
    kp_wr_free(&out);
}

static CU_TestInfo tests[] = {
    {"test_compress_round_trips_each_codec", test_compress_round_trips_each_codec},
    {"test_codecs_survive_every_allocation_failure", test_codecs_survive_every_allocation_failure},
    {"test_compress_writes_each_codecs_wire_format", test_compress_writes_each_codecs_wire_format},
    {"test_decompress_appends_after_existing_bytes", test_decompress_appends_after_existing_bytes},
    {"test_snappy_decodes_xerial_framing", test_snappy_decodes_xerial_framing},
    {"test_snappy_accepts_little_endian_xerial_header",
     test_snappy_accepts_little_endian_xerial_header},
    {"test_snappy_decodes_raw_block", test_snappy_decodes_raw_block},
    {"test_snappy_rejects_bad_xerial_chunk_lengths", test_snappy_rejects_bad_xerial_chunk_lengths},
    {"test_decompress_rejects_gzip_bomb", test_decompress_rejects_gzip_bomb},
    {"test_decompress_rejects_snappy_bomb", test_decompress_rejects_snappy_bomb},
    {"test_decompress_rejects_lz4_bomb", test_decompress_rejects_lz4_bomb},
    {"test_decompress_rejects_zstd_bomb", test_decompress_rejects_zstd_bomb},
    {"test_decompress_rejects_xerial_snappy_bomb", test_decompress_rejects_xerial_snappy_bomb},
    {"test_snappy_rejects_claimed_length_over_ceiling",
     test_snappy_rejects_claimed_length_over_ceiling},
    {"test_decompress_accepts_output_exactly_at_ceiling",
     test_decompress_accepts_output_exactly_at_ceiling},
    {"test_decompress_respects_writer_ceiling", test_decompress_respects_writer_ceiling},
    {"test_compress_fits_small_fixed_writer_below_bound",
     test_compress_fits_small_fixed_writer_below_bound},
    {"test_decompress_rejects_corrupt_input", test_decompress_rejects_corrupt_input},
    {"test_gzip_rejects_bad_checksum", test_gzip_rejects_bad_checksum},
    {"test_gzip_accepts_concatenated_members", test_gzip_accepts_concatenated_members},
    {"test_codec_unknown_is_unsupported", test_codec_unknown_is_unsupported},
    {"test_decompress_refuses_failed_writer", test_decompress_refuses_failed_writer},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-compress", tests);
}
