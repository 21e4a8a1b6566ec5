/* Unit tests for the decimal parser (broker/src/base/number.h), Java's
 * Long.parseLong in radix 10 with a range. Links the base layer. */
#include <stdint.h>
#include <string.h>

#include "base/number.h"
#include "cunit_run.h"

struct i64_case {
    const char *text;
    int64_t min, max;
    bool ok;
    int64_t want;
};

static const struct i64_case i64_cases[] = {
    {"0", INT64_MIN, INT64_MAX, true, 0},
    {"42", INT64_MIN, INT64_MAX, true, 42},
    {"+42", INT64_MIN, INT64_MAX, true, 42},
    {"-42", INT64_MIN, INT64_MAX, true, -42},
    {"007", INT64_MIN, INT64_MAX, true, 7},
    {"-0", INT64_MIN, INT64_MAX, true, 0},
    {"9223372036854775807", INT64_MIN, INT64_MAX, true, INT64_MAX},
    {"-9223372036854775808", INT64_MIN, INT64_MAX, true, INT64_MIN},
    {"00000000000000000000009223372036854775807", INT64_MIN, INT64_MAX, true, INT64_MAX},
    /* overflow, one past each end and far past */
    {"9223372036854775808", INT64_MIN, INT64_MAX, false, 0},
    {"-9223372036854775809", INT64_MIN, INT64_MAX, false, 0},
    {"18446744073709551616", INT64_MIN, INT64_MAX, false, 0},
    {"99999999999999999999999", INT64_MIN, INT64_MAX, false, 0},
    /* the range */
    {"10", 0, 10, true, 10},
    {"11", 0, 10, false, 0},
    {"-1", 0, 10, false, 0},
    /* not a number */
    {"", INT64_MIN, INT64_MAX, false, 0},
    {"-", INT64_MIN, INT64_MAX, false, 0},
    {"+", INT64_MIN, INT64_MAX, false, 0},
    {"+-1", INT64_MIN, INT64_MAX, false, 0},
    {"--1", INT64_MIN, INT64_MAX, false, 0},
    {" 1", INT64_MIN, INT64_MAX, false, 0},
    {"1 ", INT64_MIN, INT64_MAX, false, 0},
    {"12a", INT64_MIN, INT64_MAX, false, 0},
    {"0x10", INT64_MIN, INT64_MAX, false, 0},
    {"1.0", INT64_MIN, INT64_MAX, false, 0},
    {"1e3", INT64_MIN, INT64_MAX, false, 0},
};

static void test_parses_javas_decimal_form_within_the_range(void)
{
    for (size_t i = 0; i < sizeof i64_cases / sizeof i64_cases[0]; i++) {
        const struct i64_case *c = &i64_cases[i];
        int64_t got = 12345;
        bool ok = br_num_parse_i64(c->text, strlen(c->text), c->min, c->max, &got);
        if (ok != c->ok || (ok && got != c->want) || (!ok && got != 12345)) {
            printf("\n  \"%s\": %s %lld\n", c->text, ok ? "accepted" : "refused", (long long)got);
        }
        CU_ASSERT_EQUAL(ok, c->ok);
        CU_ASSERT_EQUAL(got, c->ok ? c->want : 12345);
    }
}

static void test_reads_only_the_given_length(void)
{
    int64_t got = 0;
    CU_ASSERT_TRUE(br_num_parse_i64("123456", 3, INT64_MIN, INT64_MAX, &got));
    CU_ASSERT_EQUAL(got, 123);
    /* a NUL inside the length is a byte like any other */
    CU_ASSERT_FALSE(br_num_parse_i64("12\0" "3", 4, INT64_MIN, INT64_MAX, &got));
    CU_ASSERT_FALSE(br_num_parse_i64("-5", 1, INT64_MIN, INT64_MAX, &got));
    CU_ASSERT_FALSE(br_num_parse_i64(NULL, 0, INT64_MIN, INT64_MAX, &got));
}

static void test_unsigned_takes_digits_alone(void)
{
    uint64_t got = 7;
    CU_ASSERT_TRUE(br_num_parse_u64("18446744073709551615", 20, UINT64_MAX, &got));
    CU_ASSERT_EQUAL(got, UINT64_MAX);
    CU_ASSERT_FALSE(br_num_parse_u64("18446744073709551616", 20, UINT64_MAX, &got));
    CU_ASSERT_TRUE(br_num_parse_u64("00000000000000000042", 20, UINT64_MAX, &got));
    CU_ASSERT_EQUAL(got, 42);
    CU_ASSERT_FALSE(br_num_parse_u64("+1", 2, UINT64_MAX, &got));
    CU_ASSERT_FALSE(br_num_parse_u64("-1", 2, UINT64_MAX, &got));
    CU_ASSERT_FALSE(br_num_parse_u64("", 0, UINT64_MAX, &got));
    CU_ASSERT_FALSE(br_num_parse_u64("65536", 5, 65535, &got));
    CU_ASSERT_EQUAL(got, 42);
}

static void test_int32_keeps_to_32_bits(void)
{
    int32_t got = 0;
    CU_ASSERT_TRUE(br_num_parse_i32("2147483647", 10, INT32_MIN, INT32_MAX, &got));
    CU_ASSERT_EQUAL(got, INT32_MAX);
    CU_ASSERT_TRUE(br_num_parse_i32("-2147483648", 11, INT32_MIN, INT32_MAX, &got));
    CU_ASSERT_EQUAL(got, INT32_MIN);
    CU_ASSERT_FALSE(br_num_parse_i32("2147483648", 10, INT32_MIN, INT32_MAX, &got));
    CU_ASSERT_FALSE(br_num_parse_i32("-2147483649", 11, INT32_MIN, INT32_MAX, &got));
    CU_ASSERT_FALSE(br_num_parse_i32("5", 1, 10, 0, &got));
    CU_ASSERT_EQUAL(got, INT32_MIN);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"parses_javas_decimal_form_within_the_range",
         test_parses_javas_decimal_form_within_the_range},
        {"reads_only_the_given_length", test_reads_only_the_given_length},
        {"unsigned_takes_digits_alone", test_unsigned_takes_digits_alone},
        {"int32_keeps_to_32_bits", test_int32_keeps_to_32_bits},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("broker-number", tests);
}
