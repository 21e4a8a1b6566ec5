/* Unit tests for the log validator (broker/src/storage/log_validator.h):
 * what a producer's records must be before the append, as Kafka 2.0's
 * LogValidator has it. */
#define _GNU_SOURCE

#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/legacy.h>
#include <samsa-protocol/record_batch.h>

#include "base/logging.h"
#include "batches.h"
#include "cunit_run.h"
#include "storage/log_validator.h"

static struct br_validation checks(int16_t version)
{
    struct br_validation v = {version, 1 << 20, 1 << 20, false, 5000, "test", false};
    return v;
}

/* A batch of three records: taken in place, its header read. */
static void test_batch_taken_in_place(void)
{
    size_t len = 0;
    uint8_t *b = st_producer_batch(3, -1, -1, -1, &len);
    struct br_validation v = checks(7);
    struct br_validated out;
    CU_ASSERT_EQUAL(br_log_validate(b, len, &v, &out), KP_ERR_NONE);
    CU_ASSERT_PTR_EQUAL(out.batch, b);
    CU_ASSERT_PTR_NULL(out.owned);
    CU_ASSERT_EQUAL(out.size, len);
    CU_ASSERT_EQUAL(out.h.RecordCount, 3);
    CU_ASSERT_EQUAL(out.h.MaxTimestamp, 1002);
    kp_free(b);
}

/* A CreateTime batch whose MaxTimestamp is not its records' largest
 * (sarama writes -1) gets theirs, with a CRC that holds; LogAppendTime
 * stamps the append's time instead. */
static void test_max_timestamp_and_log_append_time(void)
{
    size_t len = 0;
    uint8_t *b = st_producer_batch(3, -1, -1, -1, &len);
    CU_ASSERT_EQUAL_FATAL(kp_batch_set_max_timestamp(b, len, -1), 0);
    struct br_validation v = checks(7);
    struct br_validated out;
    CU_ASSERT_EQUAL(br_log_validate(b, len, &v, &out), KP_ERR_NONE);
    CU_ASSERT_EQUAL(out.h.MaxTimestamp, 1002);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(b, len, &h, &size), 0); /* the CRC holds */
    CU_ASSERT_EQUAL(h.MaxTimestamp, 1002);

    v.log_append_time = true;
    CU_ASSERT_EQUAL(br_log_validate(b, len, &v, &out), KP_ERR_NONE);
    CU_ASSERT_EQUAL(kp_batch_parse(b, len, &h, &size), 0);
    CU_ASSERT_EQUAL(kp_batch_timestamp_type(&h), KP_TS_LOG_APPEND_TIME);
    CU_ASSERT_EQUAL(h.MaxTimestamp, 5000);
    kp_free(b);
}

/* A message set of magic 1 on Produce v2 becomes one batch of its records,
 * in a buffer of its own; the same bytes on v3 are refused. */
static void test_message_set_up_converted(void)
{
    size_t len = 0;
    uint8_t *b = st_producer_batch(4, -1, -1, -1, &len);
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    int32_t count = 0;
    CU_ASSERT_EQUAL_FATAL(kp_legacy_downconvert(b, len, 1, 0, 1 << 20, &w, &count), 0);
    CU_ASSERT_EQUAL(count, 4);
    size_t set_len = 0;
    uint8_t *set = kp_wr_steal(&w, &set_len);
    if (set == NULL) {
        abort();
    }
    struct br_validation v = checks(2);
    struct br_validated out;
    CU_ASSERT_EQUAL(br_log_validate(set, set_len, &v, &out), KP_ERR_NONE);
    CU_ASSERT_PTR_NOT_NULL(out.owned);
    CU_ASSERT_PTR_EQUAL(out.batch, out.owned);
    CU_ASSERT_EQUAL(out.h.RecordCount, 4);
    kp_free(out.owned);
    v = checks(3);
    CU_ASSERT_EQUAL(br_log_validate(set, set_len, &v, &out), KP_ERR_INVALID_RECORD);
    CU_ASSERT_PTR_NULL(out.owned);
    kp_free(set);
    kp_free(b);
}

/* What Kafka refuses: nothing, two batches, a corrupt CRC, more than
 * max.message.bytes, a control or transactional batch, an idempotent batch
 * without a sequence. */
static void test_refusals(void)
{
    size_t len = 0;
    uint8_t *b = st_producer_batch(2, -1, -1, -1, &len);
    struct br_validation v = checks(7);
    struct br_validated out;
    CU_ASSERT_EQUAL(br_log_validate(NULL, 0, &v, &out), KP_ERR_INVALID_RECORD);

    uint8_t *two = kp_malloc(2 * len);
    if (two == NULL) {
        abort();
    }
    memcpy(two, b, len);
    memcpy(two + len, b, len);
    CU_ASSERT_EQUAL(br_log_validate(two, 2 * len, &v, &out), KP_ERR_INVALID_RECORD);
    kp_free(two);

    v.max_message_bytes = (int32_t)len - 1;
    CU_ASSERT_EQUAL(br_log_validate(b, len, &v, &out), KP_ERR_MESSAGE_TOO_LARGE);
    v = checks(7);

    b[len - 1] ^= 0xff; /* a record byte: the CRC no longer holds */
    CU_ASSERT_EQUAL(br_log_validate(b, len, &v, &out), KP_ERR_CORRUPT_MESSAGE);
    kp_free(b);

    struct kp_batch_builder bb;
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&bb, KP_CODEC_NONE, 0, 1000, 9, 0, 0, 1 << 20), 0);
    kp_batch_builder_set_flags(&bb, true, false);
    struct kp_bytes val = {(const uint8_t *)"v", 1};
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_add(&bb, KP_OFFSET_DELTA_AUTO, 1000, KP_BYTES_NULL,
                                               val, NULL, 0),
                          0);
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&bb, &w), 0);
    kp_batch_builder_free(&bb);
    size_t tlen = 0;
    uint8_t *txn = kp_wr_steal(&w, &tlen);
    if (txn == NULL) {
        abort();
    }
    /* without a transactional id in the request: refused; with one: taken */
    CU_ASSERT_EQUAL(br_log_validate(txn, tlen, &v, &out), KP_ERR_INVALID_RECORD);
    v.transactional = true;
    CU_ASSERT_EQUAL(br_log_validate(txn, tlen, &v, &out), KP_ERR_NONE);
    kp_free(out.owned);
    v = checks(7);
    kp_free(txn);

    uint8_t *noseq = st_producer_batch(1, 9, 0, -1, &len);
    CU_ASSERT_EQUAL(br_log_validate(noseq, len, &v, &out), KP_ERR_INVALID_RECORD);
    kp_free(noseq);
}

static CU_TestInfo tests[] = {
    {"batch_taken_in_place", test_batch_taken_in_place},
    {"max_timestamp_and_log_append_time", test_max_timestamp_and_log_append_time},
    {"message_set_up_converted", test_message_set_up_converted},
    {"refusals", test_refusals},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-log_validator", tests);
}
