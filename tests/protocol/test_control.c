/*
 * Control records: the transaction markers of Kafka 2.0
 * (clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java,
 * EndTransactionMarker.java, MemoryRecords.writeEndTransactionalMarker).
 *
 * The marker batches below are written out by hand from those formats and
 * record_batch.h's layout; their CRC-32C was computed apart from the crate
 * (a bitwise CRC-32C in Python, polynomial 0x82F63B78, over bytes 21..end).
 */
#include <samsa-protocol/control.h>
#include <samsa-protocol/record_batch.h>

#include <stdio.h>
#include <string.h>

#include "cunit_run.h"

#define MAX_DECOMPRESSED ((size_t)1 << 20)

/* A COMMIT of producer 1000 epoch 3 at offset 100, coordinator epoch 9, as a
 * leader of epoch 5 writes it at 1500000000000 ms. */
static const uint8_t commit_batch[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, /* BaseOffset 100 */
    0x00, 0x00, 0x00, 0x42,                         /* BatchLength 66 */
    0x00, 0x00, 0x00, 0x05,                         /* PartitionLeaderEpoch 5 */
    0x02,                                           /* Magic 2 */
    0x8e, 0xd4, 0x29, 0x13,                         /* CRC-32C */
    0x00, 0x30,                                     /* Attributes: control | transactional */
    0x00, 0x00, 0x00, 0x00,                         /* LastOffsetDelta 0 */
    0x00, 0x00, 0x01, 0x5d, 0x3e, 0xf7, 0x98, 0x00, /* BaseTimestamp 1500000000000 */
    0x00, 0x00, 0x01, 0x5d, 0x3e, 0xf7, 0x98, 0x00, /* MaxTimestamp 1500000000000 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* ProducerId 1000 */
    0x00, 0x03,                                     /* ProducerEpoch 3 */
    0xff, 0xff, 0xff, 0xff,                         /* BaseSequence -1 */
    0x00, 0x00, 0x00, 0x01,                         /* RecordCount 1 */
    0x20,                                           /* record length 16 (zigzag varint) */
    0x00,                                           /*   Attributes 0 */
    0x00,                                           /*   TimestampDelta 0 */
    0x00,                                           /*   OffsetDelta 0 */
    0x08,                                           /*   key length 4 */
    0x00, 0x00,                                     /*     key: version 0 */
    0x00, 0x01,                                     /*     type 1 (COMMIT) */
    0x0c,                                           /*   value length 6 */
    0x00, 0x00,                                     /*     value: version 0 */
    0x00, 0x00, 0x00, 0x09,                         /*     coordinator_epoch 9 */
    0x00,                                           /*   HeaderCount 0 */
};

/* An ABORT of producer 7 epoch 0 at offset 0, coordinator epoch -1 (the
 * value Kafka's LogCleaner tests use for "none"), leader epoch 5. */
static const uint8_t abort_batch[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* BaseOffset 0 */
    0x00, 0x00, 0x00, 0x42,                         /* BatchLength 66 */
    0x00, 0x00, 0x00, 0x05,                         /* PartitionLeaderEpoch 5 */
    0x02,                                           /* Magic 2 */
    0x74, 0x58, 0x6b, 0x77,                         /* CRC-32C */
    0x00, 0x30,                                     /* Attributes: control | transactional */
    0x00, 0x00, 0x00, 0x00,                         /* LastOffsetDelta 0 */
    0x00, 0x00, 0x01, 0x5d, 0x3e, 0xf7, 0x98, 0x00, /* BaseTimestamp 1500000000000 */
    0x00, 0x00, 0x01, 0x5d, 0x3e, 0xf7, 0x98, 0x00, /* MaxTimestamp 1500000000000 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* ProducerId 7 */
    0x00, 0x00,                                     /* ProducerEpoch 0 */
    0xff, 0xff, 0xff, 0xff,                         /* BaseSequence -1 */
    0x00, 0x00, 0x00, 0x01,                         /* RecordCount 1 */
    0x20,                                           /* record length 16 */
    0x00, 0x00, 0x00,                               /*   Attributes, TimestampDelta, OffsetDelta */
    0x08, 0x00, 0x00, 0x00, 0x00,                   /*   key: version 0, type 0 (ABORT) */
    0x0c, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,       /*   value: version 0, coordinator_epoch -1 */
    0x00,                                           /*   HeaderCount 0 */
};

#define TS INT64_C(1500000000000)

static struct kp_bytes bytes(const uint8_t *p, size_t n)
{
    return (struct kp_bytes){p, (int32_t)n};
}

static void test_marker_batches_are_written_as_kafka_writes_them(void)
{
    CU_ASSERT_EQUAL(sizeof commit_batch, KP_TXN_MARKER_BATCH_SIZE);
    struct kp_writer w;
    kp_wr_init(&w, 1 << 16);
    struct kp_txn_marker commit = {KP_CONTROL_COMMIT, 9};
    CU_ASSERT_EQUAL_FATAL(kp_txn_marker_batch_write(&w, 100, 5, TS, 1000, 3, &commit), 0);
    CU_ASSERT(w.len == sizeof commit_batch && memcmp(w.buf, commit_batch, w.len) == 0);

    /* a second one appends after the first */
    struct kp_txn_marker abort = {KP_CONTROL_ABORT, -1};
    CU_ASSERT_EQUAL_FATAL(kp_txn_marker_batch_write(&w, 0, 5, TS, 7, 0, &abort), 0);
    CU_ASSERT(w.len == sizeof commit_batch + sizeof abort_batch &&
              memcmp(w.buf + sizeof commit_batch, abort_batch, sizeof abort_batch) == 0);
    kp_wr_free(&w);
}

static void test_marker_batches_parse_and_read_back(void)
{
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL_FATAL(kp_batch_parse(commit_batch, sizeof commit_batch, &h, &size), 0);
    CU_ASSERT_EQUAL(size, sizeof commit_batch);
    CU_ASSERT(kp_batch_is_control(&h));
    CU_ASSERT(kp_batch_is_transactional(&h));
    CU_ASSERT_EQUAL(h.BaseSequence, -1);
    struct kp_txn_marker m = {-1, 0};
    CU_ASSERT_EQUAL(kp_txn_marker_batch_read(commit_batch, size, MAX_DECOMPRESSED, &m), 0);
    CU_ASSERT_EQUAL(m.type, KP_CONTROL_COMMIT);
    CU_ASSERT_EQUAL(m.coordinator_epoch, 9);

    CU_ASSERT_EQUAL_FATAL(kp_batch_parse(abort_batch, sizeof abort_batch, &h, &size), 0);
    CU_ASSERT_EQUAL(kp_txn_marker_batch_read(abort_batch, size, MAX_DECOMPRESSED, &m), 0);
    CU_ASSERT_EQUAL(m.type, KP_CONTROL_ABORT);
    CU_ASSERT_EQUAL(m.coordinator_epoch, -1);
}

/* ControlRecordType.parseTypeId and EndTransactionMarker.deserializeValue:
 * short or negative-version keys and values are corrupt, later versions are
 * read as version 0, a type other than ABORT/COMMIT is a control record but
 * no marker. */
static void test_keys_and_values_follow_kafkas_readers(void)
{
    static const uint8_t key_commit[] = {0x00, 0x00, 0x00, 0x01};
    static const uint8_t key_v1_abort_longer[] = {0x00, 0x01, 0x00, 0x00, 0xaa};
    static const uint8_t key_short[] = {0x00, 0x00, 0x00};
    static const uint8_t key_negative[] = {0xff, 0xff, 0x00, 0x01};
    static const uint8_t key_unknown[] = {0x00, 0x00, 0x00, 0x05};
    static const uint8_t value_ok[] = {0x00, 0x00, 0x7f, 0xff, 0xff, 0xff};
    static const uint8_t value_v3_longer[] = {0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x01, 0x02};
    static const uint8_t value_short[] = {0x00, 0x00, 0x00, 0x00, 0x00};
    static const uint8_t value_negative[] = {0x80, 0x00, 0x00, 0x00, 0x00, 0x01};

    int16_t type = -1;
    CU_ASSERT_EQUAL(kp_control_key_decode(bytes(key_commit, sizeof key_commit), &type), 0);
    CU_ASSERT_EQUAL(type, KP_CONTROL_COMMIT);
    CU_ASSERT_EQUAL(
        kp_control_key_decode(bytes(key_v1_abort_longer, sizeof key_v1_abort_longer), &type), 0);
    CU_ASSERT_EQUAL(type, KP_CONTROL_ABORT);
    CU_ASSERT_EQUAL(kp_control_key_decode(bytes(key_unknown, sizeof key_unknown), &type), 0);
    CU_ASSERT_EQUAL(type, 5);
    CU_ASSERT_EQUAL(kp_control_key_decode(bytes(key_short, sizeof key_short), &type), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(kp_control_key_decode(bytes(key_negative, sizeof key_negative), &type),
                    KP_E_CORRUPT);
    CU_ASSERT_EQUAL(kp_control_key_decode(KP_BYTES_NULL, &type), KP_E_CORRUPT);

    struct kp_txn_marker m;
    CU_ASSERT_EQUAL(kp_txn_marker_decode(bytes(key_commit, sizeof key_commit),
                                         bytes(value_ok, sizeof value_ok), &m),
                    0);
    CU_ASSERT_EQUAL(m.type, KP_CONTROL_COMMIT);
    CU_ASSERT_EQUAL(m.coordinator_epoch, INT32_MAX);
    CU_ASSERT_EQUAL(kp_txn_marker_decode(bytes(key_v1_abort_longer, sizeof key_v1_abort_longer),
                                         bytes(value_v3_longer, sizeof value_v3_longer), &m),
                    0);
    CU_ASSERT_EQUAL(m.type, KP_CONTROL_ABORT);
    CU_ASSERT_EQUAL(m.coordinator_epoch, 2);
    CU_ASSERT_EQUAL(kp_txn_marker_decode(bytes(key_unknown, sizeof key_unknown),
                                         bytes(value_ok, sizeof value_ok), &m),
                    KP_E_CORRUPT);
    CU_ASSERT_EQUAL(kp_txn_marker_decode(bytes(key_commit, sizeof key_commit),
                                         bytes(value_short, sizeof value_short), &m),
                    KP_E_CORRUPT);
    CU_ASSERT_EQUAL(kp_txn_marker_decode(bytes(key_commit, sizeof key_commit),
                                         bytes(value_negative, sizeof value_negative), &m),
                    KP_E_CORRUPT);
    CU_ASSERT_EQUAL(kp_txn_marker_decode(bytes(key_commit, sizeof key_commit), KP_BYTES_NULL, &m),
                    KP_E_CORRUPT);
    CU_ASSERT_EQUAL(kp_txn_marker_decode(bytes(key_short, sizeof key_short),
                                         bytes(value_ok, sizeof value_ok), &m),
                    KP_E_CORRUPT);

    uint8_t key[KP_CONTROL_KEY_SIZE];
    uint8_t value[KP_TXN_MARKER_VALUE_SIZE];
    kp_control_key_encode(key, KP_CONTROL_COMMIT);
    kp_txn_marker_value_encode(value, INT32_MAX);
    CU_ASSERT(memcmp(key, key_commit, sizeof key) == 0);
    CU_ASSERT(memcmp(value, value_ok, sizeof value) == 0);
}

/* A marker of another type is not written; a writer's ceiling is kept; a
 * failure leaves the writer as it was. */
static void test_writing_refuses_bad_types_and_keeps_the_ceiling(void)
{
    struct kp_writer w;
    kp_wr_init(&w, KP_TXN_MARKER_BATCH_SIZE + 10);
    kp_wr_i16(&w, 0x1234);
    struct kp_txn_marker bad = {2, 0};
    CU_ASSERT_EQUAL(kp_txn_marker_batch_write(&w, 0, 0, TS, 1, 0, &bad), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(w.len, 2);
    struct kp_txn_marker ok = {KP_CONTROL_ABORT, 0};
    CU_ASSERT_EQUAL(kp_txn_marker_batch_write(&w, 0, 0, TS, 1, 0, &ok), 0);
    CU_ASSERT_EQUAL(w.len, 2 + KP_TXN_MARKER_BATCH_SIZE);
    CU_ASSERT_NOT_EQUAL(kp_txn_marker_batch_write(&w, 1, 0, TS, 1, 0, &ok), 0);
    CU_ASSERT_EQUAL(w.len, 2 + KP_TXN_MARKER_BATCH_SIZE);
    kp_wr_free(&w);
}

/* Reading: a data batch is no marker; a control batch without records, or
 * whose record is not a marker, is corrupt; a compressed one is read as
 * Kafka reads it (the first record); a cut batch never reads. */
static void test_reading_refuses_what_is_not_a_marker(void)
{
    struct kp_txn_marker m;
    uint8_t copy[sizeof commit_batch];

    /* the control bit cleared: a transactional data batch */
    memcpy(copy, commit_batch, sizeof copy);
    copy[22] = 0x10;
    CU_ASSERT_EQUAL(kp_txn_marker_batch_read(copy, sizeof copy, MAX_DECOMPRESSED, &m),
                    KP_E_INVALID_ARG);

    /* the key's type changed to 7 */
    memcpy(copy, commit_batch, sizeof copy);
    copy[KP_BATCH_HEADER_SIZE + 8] = 0x07;
    CU_ASSERT_EQUAL(kp_txn_marker_batch_read(copy, sizeof copy, MAX_DECOMPRESSED, &m),
                    KP_E_CORRUPT);

    /* every cut of the batch */
    for (size_t cut = 0; cut < sizeof commit_batch; cut++) {
        int rc = kp_txn_marker_batch_read(commit_batch, cut, MAX_DECOMPRESSED, &m);
        if (rc == 0) {
            fprintf(stderr, "\n  %zu of %zu bytes read as a marker\n", cut, sizeof commit_batch);
        }
        CU_ASSERT_NOT_EQUAL(rc, 0);
    }

    struct kp_writer w;
    kp_wr_init(&w, 1 << 16);
    struct kp_batch_builder b;

    /* a control batch the cleaner emptied */
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 10, TS, 7, 0, -1, 1024), 0);
    kp_batch_builder_set_flags(&b, true, true);
    kp_batch_builder_set_last_offset_delta(&b, 0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &w), 0);
    kp_batch_builder_free(&b);
    CU_ASSERT_EQUAL(kp_txn_marker_batch_read(w.buf, w.len, MAX_DECOMPRESSED, &m), KP_E_CORRUPT);

    /* a gzip control batch holding a COMMIT and then something else */
    w.len = 0;
    uint8_t key[KP_CONTROL_KEY_SIZE];
    uint8_t value[KP_TXN_MARKER_VALUE_SIZE];
    kp_control_key_encode(key, KP_CONTROL_COMMIT);
    kp_txn_marker_value_encode(value, 42);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_GZIP, 10, TS, 7, 0, -1, 1024), 0);
    kp_batch_builder_set_flags(&b, true, true);
    CU_ASSERT_EQUAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS, bytes(key, sizeof key),
                                         bytes(value, sizeof value), NULL, 0),
                    0);
    CU_ASSERT_EQUAL(
        kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, TS, KP_BYTES_NULL, KP_BYTES_NULL, NULL, 0),
        0);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &w), 0);
    kp_batch_builder_free(&b);
    CU_ASSERT_EQUAL(kp_txn_marker_batch_read(w.buf, w.len, MAX_DECOMPRESSED, &m), 0);
    CU_ASSERT_EQUAL(m.type, KP_CONTROL_COMMIT);
    CU_ASSERT_EQUAL(m.coordinator_epoch, 42);
    /* and under a ceiling too small for its records */
    CU_ASSERT_EQUAL(kp_txn_marker_batch_read(w.buf, w.len, 4, &m), KP_E_TOO_LARGE);
    kp_wr_free(&w);
}

static CU_TestInfo tests[] = {
    {"marker_batches_are_written_as_kafka_writes_them",
     test_marker_batches_are_written_as_kafka_writes_them},
    {"marker_batches_parse_and_read_back", test_marker_batches_parse_and_read_back},
    {"keys_and_values_follow_kafkas_readers", test_keys_and_values_follow_kafkas_readers},
    {"writing_refuses_bad_types_and_keeps_the_ceiling",
     test_writing_refuses_bad_types_and_keeps_the_ceiling},
    {"reading_refuses_what_is_not_a_marker", test_reading_refuses_what_is_not_a_marker},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-control", tests);
}
