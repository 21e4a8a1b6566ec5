/* Unit tests for the group coordinator's pure parts (broker/src/group.h):
 * Java's String.hashCode over UTF-16 and the partition of
 * __consumer_offsets a group maps to. Expected values come from Java's
 * definition (s[0]*31^(n-1) + ... over UTF-16 code units). */
#define _GNU_SOURCE

#include <stdint.h>
#include <string.h>

#include "cunit_run.h"
#include "group.h"
#include "logging.h"

static int32_t hash_of(const char *s)
{
    return br_group_java_hash(s, strlen(s));
}

static void test_java_hash_of_ascii_strings(void)
{
    CU_ASSERT_EQUAL(hash_of(""), 0);
    CU_ASSERT_EQUAL(hash_of("g1"), 3242);
    CU_ASSERT_EQUAL(hash_of("console-consumer-12345"), 158455506);
}

static void test_java_hash_of_two_and_three_byte_utf8(void)
{
    /* "grüppe-Ω": U+00FC and U+03A9 are single UTF-16 units */
    CU_ASSERT_EQUAL(hash_of("gr\xc3\xbcppe-\xce\xa9"), 243491696);
    /* "日本語グループ" */
    CU_ASSERT_EQUAL(hash_of("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x82\xb0\xe3\x83\xab"
                            "\xe3\x83\xbc\xe3\x83\x97"),
                    -305235731);
}

static void test_java_hash_counts_a_surrogate_pair_as_two_units(void)
{
    /* "emoji-😀-group": U+1F600 is D83D DE00 in UTF-16 */
    CU_ASSERT_EQUAL(hash_of("emoji-\xf0\x9f\x98\x80-group"), -1581567172);
}

static void test_java_hash_replaces_malformed_bytes(void)
{
    /* a lone 0xFF byte and a stray continuation byte are U+FFFD each */
    CU_ASSERT_EQUAL(hash_of("a\xff"
                            "b"),
                    2124838);
    CU_ASSERT_EQUAL(hash_of("\x80\xbf"), 2097056);
    /* an overlong encoding of '/' is not '/' */
    CU_ASSERT_NOT_EQUAL(hash_of("\xc0\xaf"), hash_of("/"));
}

static void test_java_hash_uses_the_given_length(void)
{
    CU_ASSERT_EQUAL(br_group_java_hash("g1xyz", 2), 3242);
    CU_ASSERT_EQUAL(br_group_java_hash("a\0b", 3), (int32_t)(97 * 31 * 31 + 0 * 31 + 98));
}

static void test_partition_is_kafka_utils_abs_modulo(void)
{
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, 50), 42);
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, 7), 1);
    /* a negative hash: Utils.abs */
    CU_ASSERT_EQUAL(br_group_partition_for("emoji-\xf0\x9f\x98\x80-group", 16, 50), 22);
    CU_ASSERT_EQUAL(br_group_partition_for("emoji-\xf0\x9f\x98\x80-group", 16, 7), 3);
}

static void test_partition_of_integer_min_hash_is_zero(void)
{
    /* "polygenelubricants".hashCode() == Integer.MIN_VALUE, and Kafka's
     * Utils.abs maps it to 0 (Math.abs would stay negative) */
    CU_ASSERT_EQUAL(hash_of("polygenelubricants"), INT32_MIN);
    CU_ASSERT_EQUAL(br_group_partition_for("polygenelubricants", 18, 50), 0);
    CU_ASSERT_EQUAL(br_group_partition_for("polygenelubricants", 18, 7), 0);
}

static void test_partition_of_a_bad_count_is_zero(void)
{
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, 0), 0);
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, -3), 0);
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, 1), 0);
}

static CU_TestInfo tests[] = {
    {"java_hash_of_ascii_strings", test_java_hash_of_ascii_strings},
    {"java_hash_of_two_and_three_byte_utf8", test_java_hash_of_two_and_three_byte_utf8},
    {"java_hash_counts_a_surrogate_pair_as_two_units",
     test_java_hash_counts_a_surrogate_pair_as_two_units},
    {"java_hash_replaces_malformed_bytes", test_java_hash_replaces_malformed_bytes},
    {"java_hash_uses_the_given_length", test_java_hash_uses_the_given_length},
    {"partition_is_kafka_utils_abs_modulo", test_partition_is_kafka_utils_abs_modulo},
    {"partition_of_integer_min_hash_is_zero", test_partition_of_integer_min_hash_is_zero},
    {"partition_of_a_bad_count_is_zero", test_partition_of_a_bad_count_is_zero},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-group", tests);
}
