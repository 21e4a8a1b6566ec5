/* Unit tests for the broker's checkpoint files (broker/src/checkpoint.h). */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/err.h>

#include "base/logging.h"
#include "cunit_run.h"
#include "storage/checkpoint.h"

#define MAX_ENTRIES 1000

static struct br_checkpoint_error last_err;

/* Parses a topic checkpoint; returns the code, keeps the error. */
static int parse_topics(const char *text, size_t *n)
{
    struct br_checkpoint_entry *e = NULL;
    size_t count = 0;
    int rc = br_checkpoint_parse(text, strlen(text), MAX_ENTRIES, &e, &count, &last_err);
    if (rc != 0) {
        CU_ASSERT_PTR_NULL(e);
        CU_ASSERT_EQUAL(count, 0);
        CU_ASSERT_PTR_NOT_NULL(last_err.reason);
        CU_ASSERT_PTR_NOT_NULL(last_err.src_file);
        CU_ASSERT(last_err.src_line > 0);
    }
    br_checkpoint_free(e);
    if (n != NULL) {
        *n = count;
    }
    return rc;
}

static int parse_epochs(const char *text)
{
    struct br_epoch_entry *e = NULL;
    size_t count = 0;
    int rc = br_epoch_checkpoint_parse(text, strlen(text), MAX_ENTRIES, &e, &count, &last_err);
    br_checkpoint_free(e);
    return rc;
}

/* text must be rejected at `line` with a reason containing `needle`. */
static void expect_topics_rejected(const char *text, int line, const char *needle)
{
    int rc = parse_topics(text, NULL);
    CU_ASSERT_EQUAL(rc, KP_E_CORRUPT);
    CU_ASSERT_EQUAL(last_err.line, line);
    if (last_err.reason != NULL) {
        CU_ASSERT_PTR_NOT_NULL(strstr(last_err.reason, needle));
        if (strstr(last_err.reason, needle) == NULL || last_err.line != line) {
            fprintf(stderr, "\n  got line %d: %s\n", last_err.line, last_err.reason);
        }
    }
}

static void expect_epochs_rejected(const char *text, int line, const char *needle)
{
    int rc = parse_epochs(text);
    CU_ASSERT_EQUAL(rc, KP_E_CORRUPT);
    CU_ASSERT_EQUAL(last_err.line, line);
    if (last_err.reason != NULL) {
        CU_ASSERT_PTR_NOT_NULL(strstr(last_err.reason, needle));
    }
}

/* ------------------------------------------------------------- accepted */

static void test_topics_parse_valid_file(void)
{
    const char *text = "0\n3\nmy-topic 0 1234\nother.topic_x 11 0\nmy-topic 1 "
                       "9223372036854775807\n";
    struct br_checkpoint_entry *e = NULL;
    size_t n = 0;
    int rc = br_checkpoint_parse(text, strlen(text), MAX_ENTRIES, &e, &n, &last_err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_STRING_EQUAL(e[0].topic, "my-topic");
    CU_ASSERT_EQUAL(e[0].partition, 0);
    CU_ASSERT_EQUAL(e[0].offset, 1234);
    CU_ASSERT_STRING_EQUAL(e[1].topic, "other.topic_x");
    CU_ASSERT_EQUAL(e[1].partition, 11);
    CU_ASSERT_EQUAL(e[2].offset, INT64_MAX);
    br_checkpoint_free(e);
}

static void test_topics_parse_empty_checkpoint(void)
{
    size_t n = 99;
    CU_ASSERT_EQUAL(parse_topics("0\n0\n", &n), 0);
    CU_ASSERT_EQUAL(n, 0);
}

static void test_topics_accept_249_char_topic(void)
{
    char text[400];
    char topic[BR_TOPIC_MAX + 1];
    memset(topic, 'a', BR_TOPIC_MAX);
    topic[BR_TOPIC_MAX] = '\0';
    (void)snprintf(text, sizeof text, "0\n1\n%s 2147483647 5\n", topic);
    size_t n = 0;
    CU_ASSERT_EQUAL(parse_topics(text, &n), 0);
    CU_ASSERT_EQUAL(n, 1);
}

static void test_epochs_parse_valid_file(void)
{
    const char *text = "0\n3\n0 0\n3 1200\n4 1200\n";
    struct br_epoch_entry *e = NULL;
    size_t n = 0;
    int rc = br_epoch_checkpoint_parse(text, strlen(text), MAX_ENTRIES, &e, &n, &last_err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_EQUAL(e[1].epoch, 3);
    CU_ASSERT_EQUAL(e[1].start_offset, 1200);
    CU_ASSERT_EQUAL(e[2].epoch, 4);
    br_checkpoint_free(e);
}

/* ------------------------------------------------------------- rejected: layout */

static void test_rejects_empty_file(void)
{
    expect_topics_rejected("", 1, "unexpected end of file");
}

static void test_rejects_unsupported_version(void)
{
    expect_topics_rejected("1\n0\n", 1, "unsupported version");
}

static void test_rejects_missing_count(void)
{
    expect_topics_rejected("0\n", 2, "unexpected end of file");
}

static void test_rejects_fewer_lines_than_count(void)
{
    expect_topics_rejected("0\n2\ntopic-with-a-long-name 0 1\n", 4, "fewer lines than the count");
}

static void test_rejects_more_lines_than_count(void)
{
    expect_topics_rejected("0\n1\nt 0 1\nt 1 1\n", 4, "more lines than the count");
}

static void test_rejects_count_larger_than_file(void)
{
    expect_topics_rejected("0\n100\nt 0 1\n", 2, "count larger than the lines");
}

static void test_rejects_count_above_maximum(void)
{
    expect_topics_rejected("0\n1001\n", 2, "above the maximum");
}

static void test_rejects_negative_count(void)
{
    expect_topics_rejected("0\n-1\n", 2, "negative count");
}

static void test_rejects_missing_final_newline(void)
{
    expect_topics_rejected("0\n1\ntopic 0 1", 3, "does not end with a newline");
}

static void test_rejects_line_too_long(void)
{
    char text[BR_CHECKPOINT_MAX_LINE + 64];
    memcpy(text, "0\n1\n", 4);
    memset(text + 4, 'a', BR_CHECKPOINT_MAX_LINE + 10);
    text[4 + BR_CHECKPOINT_MAX_LINE + 10] = '\0';
    expect_topics_rejected(text, 3, "line too long");
}

static void test_rejects_empty_line(void)
{
    expect_topics_rejected("0\n1\n\n\n\n\n\n\n", 3, "empty field");
}

static void test_rejects_crlf_line_endings(void)
{
    expect_topics_rejected("0\r\n0\r\n", 1, "not an integer");
}

static void test_rejects_trailing_blank_line(void)
{
    expect_topics_rejected("0\n1\nt 0 1\n\n", 4, "more lines than the count");
}

/* ------------------------------------------------------------- rejected: fields */

static void test_rejects_too_few_fields(void)
{
    expect_topics_rejected("0\n1\ntopic 0\n", 3, "too few fields");
}

static void test_rejects_too_many_fields(void)
{
    expect_topics_rejected("0\n1\nt 0 1 2\n", 3, "too many fields");
}

static void test_rejects_double_space(void)
{
    expect_topics_rejected("0\n1\nt  0 1\n", 3, "empty field");
}

static void test_rejects_leading_space(void)
{
    expect_topics_rejected("0\n1\n t 0 1\n", 3, "empty field");
}

static void test_rejects_trailing_space(void)
{
    expect_topics_rejected("0\n1\nt 0 1 \n", 3, "empty field");
}

static void test_rejects_tab_separator(void)
{
    expect_topics_rejected("0\n1\nt\t0 1\n", 3, "too few fields");
}

/* ------------------------------------------------------------- rejected: integers */

static void test_rejects_plus_sign(void)
{
    expect_topics_rejected("0\n1\nt +0 1\n", 3, "not an integer");
}

static void test_rejects_leading_zero(void)
{
    expect_topics_rejected("0\n1\nt 0 01\n", 3, "leading zero");
}

static void test_rejects_negative_zero(void)
{
    expect_topics_rejected("0\n1\nt -0 1\n", 3, "negative zero");
}

static void test_rejects_non_digit_in_offset(void)
{
    expect_topics_rejected("0\n1\nt 0 12x\n", 3, "not an integer");
}

static void test_rejects_hex_offset(void)
{
    expect_topics_rejected("0\n1\nt 0 0x10\n", 3, "not an integer");
}

static void test_rejects_offset_overflow(void)
{
    expect_topics_rejected("0\n1\nt 0 9223372036854775808\n", 3, "out of range");
}

static void test_rejects_overlong_integer(void)
{
    expect_topics_rejected("0\n1\nt 0 123456789012345678901\n", 3, "out of range");
}

static void test_rejects_negative_offset(void)
{
    expect_topics_rejected("0\n1\nt 0 -1\n", 3, "out of range");
}

static void test_rejects_negative_partition(void)
{
    expect_topics_rejected("0\n1\nt -1 5\n", 3, "out of range");
}

static void test_rejects_partition_above_int32(void)
{
    expect_topics_rejected("0\n1\nt 2147483648 5\n", 3, "out of range");
}

static void test_rejects_lone_minus(void)
{
    expect_topics_rejected("0\n1\nt - 5\n", 3, "not an integer");
}

/* ------------------------------------------------------------- rejected: topics */

static void test_rejects_invalid_topic_character(void)
{
    expect_topics_rejected("0\n1\nmy/topic 0 1\n", 3, "invalid topic name");
}

static void test_rejects_topic_too_long(void)
{
    char text[400];
    char topic[BR_TOPIC_MAX + 2];
    memset(topic, 'a', BR_TOPIC_MAX + 1);
    topic[BR_TOPIC_MAX + 1] = '\0';
    (void)snprintf(text, sizeof text, "0\n1\n%s 0 5\n", topic);
    expect_topics_rejected(text, 3, "invalid topic name");
}

static void test_rejects_dot_topics(void)
{
    expect_topics_rejected("0\n1\n. 0 1\n", 3, "invalid topic name");
    expect_topics_rejected("0\n1\n.. 0 1\n", 3, "invalid topic name");
}

static void test_rejects_non_ascii_topic(void)
{
    expect_topics_rejected("0\n1\ntop\xc3\xa9 0 1\n", 3, "invalid topic name");
}

static void test_rejects_duplicate_topic_partition(void)
{
    expect_topics_rejected("0\n2\nt 0 1\nt 0 2\n", 0, "appears twice");
}

/* ------------------------------------------------------------- rejected: epochs */

static void test_epochs_reject_non_increasing_epoch(void)
{
    expect_epochs_rejected("0\n2\n3 0\n3 10\n", 4, "do not strictly increase");
}

static void test_epochs_reject_decreasing_offset(void)
{
    expect_epochs_rejected("0\n2\n1 10\n2 5\n", 4, "start offsets decrease");
}

static void test_epochs_reject_negative_epoch(void)
{
    expect_epochs_rejected("0\n1\n-1 0\n", 3, "out of range");
}

static void test_epochs_reject_three_fields(void)
{
    expect_epochs_rejected("0\n1\n1 0 0\n", 3, "too many fields");
}

static void test_epochs_reject_epoch_above_int32(void)
{
    expect_epochs_rejected("0\n1\n2147483648 0\n", 3, "out of range");
}

/* ------------------------------------------------------------- files */

static char tmpdir[64];

static void make_tmpdir(void)
{
    (void)snprintf(tmpdir, sizeof tmpdir, "/tmp/samsa-ckpt-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
}

static void remove_tmpdir(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char path[256];
        (void)snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        (void)unlink(path);
    }
    CU_ASSERT_EQUAL(rmdir(tmpdir), 0);
}

static void write_text(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, text, len), (ssize_t)len);
    CU_ASSERT_EQUAL(close(fd), 0);
}

static void test_file_round_trip(void)
{
    make_tmpdir();
    char path[256];
    (void)snprintf(path, sizeof path, "%s/recovery-point-offset-checkpoint", tmpdir);
    struct br_checkpoint_entry in[3] = {
        {"a-b", 0, 0},
        {"topic.x", 7, 42},
        {"z", 2147483647, INT64_MAX},
    };
    CU_ASSERT_EQUAL_FATAL(br_checkpoint_write(path, in, 3), 0);
    struct br_checkpoint_entry *out = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_checkpoint_read(path, MAX_ENTRIES, &out, &n, &last_err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(out[i].topic, in[i].topic);
        CU_ASSERT_EQUAL(out[i].partition, in[i].partition);
        CU_ASSERT_EQUAL(out[i].offset, in[i].offset);
    }
    br_checkpoint_free(out);

    /* the exact bytes Kafka writes */
    char buf[256];
    int fd = open(path, O_RDONLY);
    CU_ASSERT_FATAL(fd >= 0);
    ssize_t got = read(fd, buf, sizeof buf - 1);
    (void)close(fd);
    CU_ASSERT_FATAL(got > 0);
    buf[got] = '\0';
    CU_ASSERT_STRING_EQUAL(buf, "0\n3\na-b 0 0\ntopic.x 7 42\nz 2147483647 9223372036854775807\n");

    /* no temporary file left behind */
    char tmp[300];
    (void)snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CU_ASSERT_EQUAL(access(tmp, F_OK), -1);
    const char *names[] = {"recovery-point-offset-checkpoint"};
    remove_tmpdir(names, 1);
}

static void test_epoch_file_round_trip(void)
{
    make_tmpdir();
    char path[256];
    (void)snprintf(path, sizeof path, "%s/leader-epoch-checkpoint", tmpdir);
    struct br_epoch_entry in[2] = {{0, 0}, {5, 100}};
    CU_ASSERT_EQUAL_FATAL(br_epoch_checkpoint_write(path, in, 2), 0);
    struct br_epoch_entry *out = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_epoch_checkpoint_read(path, MAX_ENTRIES, &out, &n, &last_err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(out[1].epoch, 5);
    CU_ASSERT_EQUAL(out[1].start_offset, 100);
    br_checkpoint_free(out);
    const char *names[] = {"leader-epoch-checkpoint"};
    remove_tmpdir(names, 1);
}

static void test_missing_file_is_empty(void)
{
    struct br_checkpoint_entry *out = NULL;
    size_t n = 7;
    int rc =
        br_checkpoint_read("/tmp/samsa-no-such-dir/checkpoint", MAX_ENTRIES, &out, &n, &last_err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(out);
}

static void test_file_rejects_nul_byte(void)
{
    make_tmpdir();
    char path[256];
    (void)snprintf(path, sizeof path, "%s/cp", tmpdir);
    write_text(path, "0\n1\nt\0 0 1\n", 11);
    struct br_checkpoint_entry *out = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(br_checkpoint_read(path, MAX_ENTRIES, &out, &n, &last_err), KP_E_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(last_err.reason, "NUL"));
    const char *names[] = {"cp"};
    remove_tmpdir(names, 1);
}

static void test_file_rejects_size_above_ceiling(void)
{
    make_tmpdir();
    char path[256];
    (void)snprintf(path, sizeof path, "%s/cp", tmpdir);
    /* 2 entries allowed: at most 4 lines of 301 bytes */
    static char big[2000];
    memset(big, '1', sizeof big);
    write_text(path, big, sizeof big);
    struct br_checkpoint_entry *out = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(br_checkpoint_read(path, 2, &out, &n, &last_err), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(last_err.line, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(last_err.reason, "larger than"));
    const char *names[] = {"cp"};
    remove_tmpdir(names, 1);
}

static void test_error_format_names_file_and_line(void)
{
    CU_ASSERT_EQUAL(parse_topics("0\n1\nt 0 x\n", NULL), KP_E_CORRUPT);
    char msg[256];
    br_checkpoint_error_format("/data/replication-offset-checkpoint", &last_err, msg, sizeof msg);
    CU_ASSERT_STRING_EQUAL(msg, "/data/replication-offset-checkpoint:3: not an integer");
}

static void test_encode_rejects_invalid_entries(void)
{
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    struct br_checkpoint_entry bad_topic = {"a b", 0, 1};
    struct br_checkpoint_entry bad_offset = {"t", 0, -1};
    CU_ASSERT_EQUAL(br_checkpoint_encode(&bad_topic, 1, &w), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(w.len, 0);
    CU_ASSERT_EQUAL(br_checkpoint_encode(&bad_offset, 1, &w), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(w.len, 0);
    kp_wr_free(&w);
}

static void test_topic_name_rules(void)
{
    CU_ASSERT_TRUE(br_topic_name_valid("a", 1));
    CU_ASSERT_TRUE(br_topic_name_valid("A-z_0.9", 7));
    CU_ASSERT_TRUE(br_topic_name_valid("...", 3));
    CU_ASSERT_FALSE(br_topic_name_valid("", 0));
    CU_ASSERT_FALSE(br_topic_name_valid(".", 1));
    CU_ASSERT_FALSE(br_topic_name_valid("..", 2));
    CU_ASSERT_FALSE(br_topic_name_valid("a b", 3));
    CU_ASSERT_FALSE(br_topic_name_valid("a\nb", 3));
}

static CU_TestInfo tests[] = {
    {"topics_parse_valid_file", test_topics_parse_valid_file},
    {"topics_parse_empty_checkpoint", test_topics_parse_empty_checkpoint},
    {"topics_accept_249_char_topic", test_topics_accept_249_char_topic},
    {"epochs_parse_valid_file", test_epochs_parse_valid_file},
    {"rejects_empty_file", test_rejects_empty_file},
    {"rejects_unsupported_version", test_rejects_unsupported_version},
    {"rejects_missing_count", test_rejects_missing_count},
    {"rejects_fewer_lines_than_count", test_rejects_fewer_lines_than_count},
    {"rejects_more_lines_than_count", test_rejects_more_lines_than_count},
    {"rejects_count_larger_than_file", test_rejects_count_larger_than_file},
    {"rejects_count_above_maximum", test_rejects_count_above_maximum},
    {"rejects_negative_count", test_rejects_negative_count},
    {"rejects_missing_final_newline", test_rejects_missing_final_newline},
    {"rejects_line_too_long", test_rejects_line_too_long},
    {"rejects_empty_line", test_rejects_empty_line},
    {"rejects_crlf_line_endings", test_rejects_crlf_line_endings},
    {"rejects_trailing_blank_line", test_rejects_trailing_blank_line},
    {"rejects_too_few_fields", test_rejects_too_few_fields},
    {"rejects_too_many_fields", test_rejects_too_many_fields},
    {"rejects_double_space", test_rejects_double_space},
    {"rejects_leading_space", test_rejects_leading_space},
    {"rejects_trailing_space", test_rejects_trailing_space},
    {"rejects_tab_separator", test_rejects_tab_separator},
    {"rejects_plus_sign", test_rejects_plus_sign},
    {"rejects_leading_zero", test_rejects_leading_zero},
    {"rejects_negative_zero", test_rejects_negative_zero},
    {"rejects_non_digit_in_offset", test_rejects_non_digit_in_offset},
    {"rejects_hex_offset", test_rejects_hex_offset},
    {"rejects_offset_overflow", test_rejects_offset_overflow},
    {"rejects_overlong_integer", test_rejects_overlong_integer},
    {"rejects_negative_offset", test_rejects_negative_offset},
    {"rejects_negative_partition", test_rejects_negative_partition},
    {"rejects_partition_above_int32", test_rejects_partition_above_int32},
    {"rejects_lone_minus", test_rejects_lone_minus},
    {"rejects_invalid_topic_character", test_rejects_invalid_topic_character},
    {"rejects_topic_too_long", test_rejects_topic_too_long},
    {"rejects_dot_topics", test_rejects_dot_topics},
    {"rejects_non_ascii_topic", test_rejects_non_ascii_topic},
    {"rejects_duplicate_topic_partition", test_rejects_duplicate_topic_partition},
    {"epochs_reject_non_increasing_epoch", test_epochs_reject_non_increasing_epoch},
    {"epochs_reject_decreasing_offset", test_epochs_reject_decreasing_offset},
    {"epochs_reject_negative_epoch", test_epochs_reject_negative_epoch},
    {"epochs_reject_three_fields", test_epochs_reject_three_fields},
    {"epochs_reject_epoch_above_int32", test_epochs_reject_epoch_above_int32},
    {"file_round_trip", test_file_round_trip},
    {"epoch_file_round_trip", test_epoch_file_round_trip},
    {"missing_file_is_empty", test_missing_file_is_empty},
    {"file_rejects_nul_byte", test_file_rejects_nul_byte},
    {"file_rejects_size_above_ceiling", test_file_rejects_size_above_ceiling},
    {"error_format_names_file_and_line", test_error_format_names_file_and_line},
    {"encode_rejects_invalid_entries", test_encode_rejects_invalid_entries},
    {"topic_name_rules", test_topic_name_rules},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-checkpoint", tests);
}
