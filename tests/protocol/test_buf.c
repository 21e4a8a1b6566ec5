/* Unit tests for the bounded reader and ceilinged writer. */
#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>

#include <string.h>

#include "cunit_run.h"

static void test_reader_reads_big_endian_integers(void)
{
    static const uint8_t in[] = {0x7f, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef,
                                 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    CU_ASSERT_EQUAL(kp_rd_i8(&r), 0x7f);
    CU_ASSERT_EQUAL(kp_rd_i16(&r), 0x1234);
    CU_ASSERT_EQUAL(kp_rd_u32(&r), 0xdeadbeefu);
    CU_ASSERT_EQUAL(kp_rd_i64(&r), 0x0102030405060708);
    CU_ASSERT_EQUAL(r.err, 0);
    CU_ASSERT_EQUAL(kp_rd_remaining(&r), 0);
}

static void test_reader_error_is_sticky(void)
{
    static const uint8_t in[] = {0x00, 0x01, 0x02};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    CU_ASSERT_EQUAL(kp_rd_i32(&r), 0);
    CU_ASSERT_EQUAL(r.err, KP_E_TRUNCATED);
    CU_ASSERT_PTR_NOT_NULL(r.err_file);
    CU_ASSERT(r.err_line > 0);
    /* a read that would fit still returns zero once the reader failed */
    CU_ASSERT_EQUAL(kp_rd_i8(&r), 0);
    CU_ASSERT_EQUAL(r.off, 0);
    CU_ASSERT_EQUAL(r.err, KP_E_TRUNCATED);
}

static void test_reader_decodes_unsigned_varints(void)
{
    static const struct {
        uint8_t bytes[5];
        size_t n;
        uint32_t value;
    } cases[] = {
        {{0x00}, 1, 0},
        {{0x7f}, 1, 127},
        {{0x80, 0x01}, 2, 128},
        {{0xac, 0x02}, 2, 300},
        {{0xff, 0xff, 0xff, 0xff, 0x0f}, 5, 0xffffffffu},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kp_reader r;
        kp_rd_init(&r, cases[i].bytes, cases[i].n);
        CU_ASSERT_EQUAL(kp_rd_uvarint(&r), cases[i].value);
        CU_ASSERT_EQUAL(r.err, 0);
        CU_ASSERT_EQUAL(r.off, cases[i].n);
    }
}

static void test_reader_decodes_zigzag_varints(void)
{
    static const struct {
        uint8_t bytes[10];
        size_t n;
        int64_t value;
    } cases[] = {
        {{0x00}, 1, 0},
        {{0x01}, 1, -1},
        {{0x02}, 1, 1},
        {{0x03}, 1, -2},
        {{0xfe, 0xff, 0xff, 0xff, 0x0f}, 5, INT32_MAX},
        {{0xff, 0xff, 0xff, 0xff, 0x0f}, 5, INT32_MIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kp_reader r;
        kp_rd_init(&r, cases[i].bytes, cases[i].n);
        CU_ASSERT_EQUAL(kp_rd_varint(&r), cases[i].value);
        CU_ASSERT_EQUAL(r.err, 0);
        kp_rd_init(&r, cases[i].bytes, cases[i].n);
        CU_ASSERT_EQUAL(kp_rd_varlong(&r), cases[i].value);
    }
    static const uint8_t minlong[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    struct kp_reader r;
    kp_rd_init(&r, minlong, sizeof minlong);
    CU_ASSERT_EQUAL(kp_rd_varlong(&r), INT64_MIN);
    CU_ASSERT_EQUAL(r.err, 0);
}

static void test_reader_rejects_overlong_varint(void)
{
    static const uint8_t six[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    static const uint8_t big5[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
    static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                     0x80, 0x80, 0x80, 0x80, 0x00};
    struct kp_reader r;
    kp_rd_init(&r, six, sizeof six);
    (void)kp_rd_uvarint(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_VARINT);
    kp_rd_init(&r, big5, sizeof big5);
    (void)kp_rd_varint(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_VARINT);
    kp_rd_init(&r, eleven, sizeof eleven);
    (void)kp_rd_varlong(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_VARINT);
}

static void test_reader_rejects_truncated_varint(void)
{
    static const uint8_t in[] = {0x80, 0x80};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_uvarint(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_TRUNCATED);
}

static void test_reader_reads_nullable_strings(void)
{
    static const uint8_t in[] = {0x00, 0x03, 'a', 'b', 'c', 0xff, 0xff, 0x00, 0x00,
                                 0x04, 'x', 'y', 'z', 0x00, 0x01};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    struct kp_str s = kp_rd_string(&r);
    CU_ASSERT(kp_str_eq_c(s, "abc"));
    s = kp_rd_string(&r);
    CU_ASSERT_EQUAL(s.len, -1);
    s = kp_rd_string(&r);
    CU_ASSERT_EQUAL(s.len, 0);
    s = kp_rd_compact_string(&r);
    CU_ASSERT(kp_str_eq_c(s, "xyz"));
    s = kp_rd_compact_string(&r);
    CU_ASSERT_EQUAL(s.len, -1);
    s = kp_rd_compact_string(&r);
    CU_ASSERT_EQUAL(s.len, 0);
    CU_ASSERT_EQUAL(r.err, 0);
    CU_ASSERT_EQUAL(kp_rd_remaining(&r), 0);
}

static void test_reader_rejects_negative_string_length(void)
{
    static const uint8_t in[] = {0xff, 0xfe, 'a'};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_string(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_BAD_LENGTH);
}

static void test_reader_rejects_string_longer_than_input(void)
{
    static const uint8_t in[] = {0x7f, 0xff, 'a'};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_string(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_TRUNCATED);
}

static void test_reader_rejects_negative_and_huge_bytes_length(void)
{
    static const uint8_t neg[] = {0xff, 0xff, 0xff, 0xfe};
    static const uint8_t huge[] = {0x7f, 0xff, 0xff, 0xff, 0x00};
    static const uint8_t huge_compact[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    struct kp_reader r;
    kp_rd_init(&r, neg, sizeof neg);
    (void)kp_rd_bytes(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_BAD_LENGTH);
    kp_rd_init(&r, huge, sizeof huge);
    (void)kp_rd_bytes(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_TRUNCATED);
    kp_rd_init(&r, huge_compact, sizeof huge_compact);
    (void)kp_rd_compact_bytes(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_BAD_LENGTH);
}

static void test_reader_rejects_negative_array_len(void)
{
    static const uint8_t in[] = {0xff, 0xff, 0xff, 0xfe};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_array_len(&r, false, true, 100, 1);
    CU_ASSERT_EQUAL(r.err, KP_E_BAD_LENGTH);
}

static void test_reader_rejects_null_array_when_not_nullable(void)
{
    static const uint8_t in[] = {0xff, 0xff, 0xff, 0xff};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    CU_ASSERT_EQUAL(kp_rd_array_len(&r, false, true, 100, 1), -1);
    CU_ASSERT_EQUAL(r.err, 0);
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_array_len(&r, false, false, 100, 1);
    CU_ASSERT_EQUAL(r.err, KP_E_BAD_LENGTH);
}

static void test_reader_rejects_array_count_above_max(void)
{
    static const uint8_t in[] = {0x00, 0x00, 0x00, 0x65, 0, 0, 0, 0};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_array_len(&r, false, false, 100, 0);
    CU_ASSERT_EQUAL(r.err, KP_E_TOO_LARGE);
}

static void test_reader_rejects_array_count_beyond_bytes_present(void)
{
    /* claims 1000 int32 elements with 8 bytes left: never believed */
    static const uint8_t in[] = {0x00, 0x00, 0x03, 0xe8, 0, 0, 0, 1, 0, 0, 0, 2};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_array_len(&r, false, false, 100000, 4);
    CU_ASSERT_EQUAL(r.err, KP_E_BAD_LENGTH);
    kp_rd_init(&r, in, sizeof in);
    CU_ASSERT_EQUAL(kp_rd_array_len(&r, false, false, 100000, 0), 1000);
}

static void test_reader_skips_tagged_fields(void)
{
    /* two tags: 0 with 2 bytes, 5 with 1 byte; then a marker byte */
    static const uint8_t in[] = {0x02, 0x00, 0x02, 0xaa, 0xbb, 0x05, 0x01, 0xcc, 0x42};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    CU_ASSERT_EQUAL(kp_rd_skip_tags(&r), 2);
    CU_ASSERT_EQUAL(kp_rd_i8(&r), 0x42);
    CU_ASSERT_EQUAL(r.err, 0);
}

static void test_reader_rejects_descending_tags(void)
{
    static const uint8_t in[] = {0x02, 0x05, 0x00, 0x01, 0x00};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_skip_tags(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_CORRUPT);
}

static void test_reader_rejects_tag_count_beyond_bytes(void)
{
    static const uint8_t in[] = {0xff, 0xff, 0x03, 0x00};
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    (void)kp_rd_skip_tags(&r);
    CU_ASSERT_EQUAL(r.err, KP_E_BAD_LENGTH);
}

static void test_writer_round_trips_every_encoding(void)
{
    struct kp_writer w;
    kp_wr_init(&w, 1 << 16);
    struct kp_uuid u;
    for (int i = 0; i < 16; i++) {
        u.b[i] = (uint8_t)i;
    }
    kp_wr_i8(&w, -5);
    kp_wr_i16(&w, -300);
    kp_wr_i32(&w, -70000);
    kp_wr_i64(&w, INT64_MIN);
    kp_wr_uvarint(&w, 0xffffffffu);
    kp_wr_varint(&w, INT32_MIN);
    kp_wr_varlong(&w, INT64_MAX);
    kp_wr_string(&w, kp_str_c("hello"));
    kp_wr_string(&w, KP_STR_NULL);
    kp_wr_compact_string(&w, kp_str_c("compact"));
    kp_wr_compact_bytes(&w, KP_BYTES_NULL);
    kp_wr_uuid(&w, u);
    kp_wr_f64(&w, 2.5);
    CU_ASSERT_EQUAL_FATAL(w.err, 0);

    struct kp_reader r;
    kp_rd_init(&r, w.buf, w.len);
    CU_ASSERT_EQUAL(kp_rd_i8(&r), -5);
    CU_ASSERT_EQUAL(kp_rd_i16(&r), -300);
    CU_ASSERT_EQUAL(kp_rd_i32(&r), -70000);
    CU_ASSERT_EQUAL(kp_rd_i64(&r), INT64_MIN);
    CU_ASSERT_EQUAL(kp_rd_uvarint(&r), 0xffffffffu);
    CU_ASSERT_EQUAL(kp_rd_varint(&r), INT32_MIN);
    CU_ASSERT_EQUAL(kp_rd_varlong(&r), INT64_MAX);
    CU_ASSERT(kp_str_eq_c(kp_rd_string(&r), "hello"));
    CU_ASSERT_EQUAL(kp_rd_string(&r).len, -1);
    CU_ASSERT(kp_str_eq_c(kp_rd_compact_string(&r), "compact"));
    CU_ASSERT_EQUAL(kp_rd_compact_bytes(&r).len, -1);
    struct kp_uuid v = kp_rd_uuid(&r);
    CU_ASSERT_EQUAL(memcmp(u.b, v.b, 16), 0);
    CU_ASSERT_DOUBLE_EQUAL(kp_rd_f64(&r), 2.5, 0.0);
    CU_ASSERT_EQUAL(r.err, 0);
    CU_ASSERT_EQUAL(kp_rd_remaining(&r), 0);
    kp_wr_free(&w);
}

static void test_writer_stops_at_its_ceiling(void)
{
    struct kp_writer w;
    kp_wr_init(&w, 10);
    kp_wr_i64(&w, 1);
    CU_ASSERT_EQUAL(w.err, 0);
    kp_wr_i32(&w, 2);
    CU_ASSERT_EQUAL(w.err, KP_E_TOO_LARGE);
    CU_ASSERT_EQUAL(w.len, 8);
    kp_wr_i8(&w, 3); /* sticky: no-op */
    CU_ASSERT_EQUAL(w.len, 8);
    kp_wr_free(&w);

    uint8_t fixed[4];
    kp_wr_init_fixed(&w, fixed, sizeof fixed);
    kp_wr_i32(&w, 0x01020304);
    CU_ASSERT_EQUAL(w.err, 0);
    CU_ASSERT_EQUAL(fixed[0], 1);
    kp_wr_i8(&w, 0);
    CU_ASSERT_EQUAL(w.err, KP_E_TOO_LARGE);
}

static void test_writer_rejects_oversized_classic_string(void)
{
    static char big[40000];
    memset(big, 'a', sizeof big);
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    struct kp_str s = {big, (int32_t)sizeof big};
    kp_wr_string(&w, s);
    CU_ASSERT_EQUAL(w.err, KP_E_TOO_LARGE);
    kp_wr_free(&w);
}

static void test_varint_sizes_match_encodings(void)
{
    static const int64_t values[] = {0, 1, -1, 63, -64, 64, 8191, -8192, 8192,
                                     INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        struct kp_writer w;
        kp_wr_init(&w, 64);
        kp_wr_varlong(&w, values[i]);
        CU_ASSERT_EQUAL(w.len, kp_varlong_size(values[i]));
        if (values[i] >= INT32_MIN && values[i] <= INT32_MAX) {
            kp_wr_reset(&w);
            kp_wr_varint(&w, (int32_t)values[i]);
            CU_ASSERT_EQUAL(w.len, kp_varint_size((int32_t)values[i]));
        }
        kp_wr_free(&w);
    }
}

static void test_arena_enforces_its_ceiling(void)
{
    struct kp_arena a;
    kp_arena_init(&a, 10000);
    void *p = kp_arena_alloc(&a, 6000);
    CU_ASSERT_PTR_NOT_NULL(p);
    CU_ASSERT_EQUAL(a.refused, 0);
    CU_ASSERT_PTR_NULL(kp_arena_alloc(&a, 6000));
    /* the refusal is remembered (the first one), for the caller's message */
    CU_ASSERT_EQUAL(a.refused, 6000);
    CU_ASSERT_PTR_NULL(kp_arena_alloc(&a, 7000));
    CU_ASSERT_EQUAL(a.refused, 6000);
    CU_ASSERT_PTR_NOT_NULL(kp_arena_alloc(&a, 100));
    kp_arena_reset(&a);
    CU_ASSERT_EQUAL(a.refused, 0);
    CU_ASSERT_PTR_NOT_NULL(kp_arena_alloc(&a, 9000));
    kp_arena_free(&a);
}

static CU_TestInfo tests[] = {
    {"reader_reads_big_endian_integers", test_reader_reads_big_endian_integers},
    {"reader_error_is_sticky", test_reader_error_is_sticky},
    {"reader_decodes_unsigned_varints", test_reader_decodes_unsigned_varints},
    {"reader_decodes_zigzag_varints", test_reader_decodes_zigzag_varints},
    {"reader_rejects_overlong_varint", test_reader_rejects_overlong_varint},
    {"reader_rejects_truncated_varint", test_reader_rejects_truncated_varint},
    {"reader_reads_nullable_strings", test_reader_reads_nullable_strings},
    {"reader_rejects_negative_string_length", test_reader_rejects_negative_string_length},
    {"reader_rejects_string_longer_than_input", test_reader_rejects_string_longer_than_input},
    {"reader_rejects_negative_and_huge_bytes_length",
     test_reader_rejects_negative_and_huge_bytes_length},
    {"reader_rejects_negative_array_len", test_reader_rejects_negative_array_len},
    {"reader_rejects_null_array_when_not_nullable",
     test_reader_rejects_null_array_when_not_nullable},
    {"reader_rejects_array_count_above_max", test_reader_rejects_array_count_above_max},
    {"reader_rejects_array_count_beyond_bytes_present",
     test_reader_rejects_array_count_beyond_bytes_present},
    {"reader_skips_tagged_fields", test_reader_skips_tagged_fields},
    {"reader_rejects_descending_tags", test_reader_rejects_descending_tags},
    {"reader_rejects_tag_count_beyond_bytes", test_reader_rejects_tag_count_beyond_bytes},
    {"writer_round_trips_every_encoding", test_writer_round_trips_every_encoding},
    {"writer_stops_at_its_ceiling", test_writer_stops_at_its_ceiling},
    {"writer_rejects_oversized_classic_string", test_writer_rejects_oversized_classic_string},
    {"varint_sizes_match_encodings", test_varint_sizes_match_encodings},
    {"arena_enforces_its_ceiling", test_arena_enforces_its_ceiling},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-buf", tests);
}
