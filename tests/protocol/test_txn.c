/*
 * The transaction APIs of Kafka 2.0, byte by byte: AddPartitionsToTxn v0-1,
 * AddOffsetsToTxn v0-1, EndTxn v0-1, WriteTxnMarkers v0 and TxnOffsetCommit
 * v0-1, requests and responses.
 *
 * Every vector below is written out by hand from the Struct schemas of Kafka
 * 2.0.0's clients/src/main/java/org/apache/kafka/common/requests/
 * <Name>Request.java and <Name>Response.java (the field names in the
 * comments are theirs), one comment per field, without the help of our
 * encoder: a description (.kpm) that gets a field, its type, its order or its
 * versions wrong fails here. In Kafka 2.0 v1 of every API here but
 * WriteTxnMarkers is v0's layout (V1 = V0 in each class: v1 only tells that
 * the client handles throttling itself), so a v1 vector is another message
 * in the same layout. Each vector decodes, its fields are checked one by
 * one, it re-encodes to the very same bytes, and every strict prefix of it,
 * and it with one more byte, fail to decode.
 */
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include <stdio.h>
#include <string.h>

#include "cunit_run.h"
#include "hand_vectors.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------ AddPartitionsToTxn */

static const uint8_t add_partitions_request_v0[] = {
    0x00, 0x02, 't',  'x',                          /* transactional_id "tx" */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* producer_id 1000 */
    0x00, 0x03,                                     /* producer_epoch 3 */
    0x00, 0x00, 0x00, 0x01,                         /* topics: 1 */
    0x00, 0x01, 't',                                /*   topic "t" */
    0x00, 0x00, 0x00, 0x02,                         /*   partitions: 2 */
    0x00, 0x00, 0x00, 0x00,                         /*     0 */
    0x00, 0x00, 0x00, 0x02,                         /*     2 */
};

static void check_add_partitions_request_v0(const void *msg)
{
    static const int32_t parts[] = {0, 2};
    const struct kp_AddPartitionsToTxnRequest *m = msg;
    CU_ASSERT(kp_str_eq_c(m->TransactionalId, "tx"));
    CU_ASSERT_EQUAL(m->ProducerId, 1000);
    CU_ASSERT_EQUAL(m->ProducerEpoch, 3);
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Topics.items[0].Name, "t"));
    CU_ASSERT(ints_are(m->Topics.items[0].Partitions.items, m->Topics.items[0].Partitions.count,
                       parts, 2));
}

static const uint8_t add_partitions_request_v1[] = {
    0x00, 0x08, 'c',  'o',  'p',  'i',  'e',  'r',  '-', '0', /* transactional_id "copier-0" */
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,           /* producer_id 0x0102030405060708 */
    0x7f, 0xff,                                               /* producer_epoch 32767 */
    0x00, 0x00, 0x00, 0x02,                                   /* topics: 2 */
    0x00, 0x01, 'a',                                          /*   [0] topic "a" */
    0x00, 0x00, 0x00, 0x01,                                   /*   partitions: 1 */
    0x00, 0x00, 0x00, 0x31,                                   /*     49 */
    0x00, 0x02, 'b',  'b',                                    /*   [1] topic "bb" */
    0x00, 0x00, 0x00, 0x00,                                   /*   partitions: 0 */
};

static void check_add_partitions_request_v1(const void *msg)
{
    static const int32_t parts[] = {49};
    const struct kp_AddPartitionsToTxnRequest *m = msg;
    CU_ASSERT(kp_str_eq_c(m->TransactionalId, "copier-0"));
    CU_ASSERT_EQUAL(m->ProducerId, 0x0102030405060708);
    CU_ASSERT_EQUAL(m->ProducerEpoch, 32767);
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 2);
    CU_ASSERT(kp_str_eq_c(m->Topics.items[0].Name, "a"));
    CU_ASSERT(ints_are(m->Topics.items[0].Partitions.items, m->Topics.items[0].Partitions.count,
                       parts, 1));
    CU_ASSERT(kp_str_eq_c(m->Topics.items[1].Name, "bb"));
    CU_ASSERT_EQUAL(m->Topics.items[1].Partitions.count, 0);
}

static const uint8_t add_partitions_response_v0[] = {
    0x00, 0x00, 0x00, 0x00, /* throttle_time_ms 0 */
    0x00, 0x00, 0x00, 0x01, /* errors: 1 */
    0x00, 0x01, 't',        /*   topic "t" */
    0x00, 0x00, 0x00, 0x02, /*   partition_errors: 2 */
    0x00, 0x00, 0x00, 0x00, /*     partition 0 */
    0x00, 0x00,             /*     error_code 0 */
    0x00, 0x00, 0x00, 0x02, /*     partition 2 */
    0x00, 0x37,             /*     error_code 55 OPERATION_NOT_ATTEMPTED */
};

static void check_add_partitions_response_v0(const void *msg)
{
    const struct kp_AddPartitionsToTxnResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 0);
    CU_ASSERT_EQUAL_FATAL(m->Results.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Results.items[0].Name, "t"));
    CU_ASSERT_EQUAL_FATAL(m->Results.items[0].Results.count, 2);
    CU_ASSERT_EQUAL(m->Results.items[0].Results.items[0].PartitionIndex, 0);
    CU_ASSERT_EQUAL(m->Results.items[0].Results.items[0].ErrorCode, 0);
    CU_ASSERT_EQUAL(m->Results.items[0].Results.items[1].PartitionIndex, 2);
    CU_ASSERT_EQUAL(m->Results.items[0].Results.items[1].ErrorCode, KP_ERR_OPERATION_NOT_ATTEMPTED);
}

static const uint8_t add_partitions_response_v1[] = {
    0x00, 0x00, 0x00, 0x64, /* throttle_time_ms 100 */
    0x00, 0x00, 0x00, 0x01, /* errors: 1 */
    0x00, 0x01, 'a',        /*   topic "a" */
    0x00, 0x00, 0x00, 0x01, /*   partition_errors: 1 */
    0x00, 0x00, 0x00, 0x31, /*     partition 49 */
    0x00, 0x33,             /*     error_code 51 CONCURRENT_TRANSACTIONS */
};

static void check_add_partitions_response_v1(const void *msg)
{
    const struct kp_AddPartitionsToTxnResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 100);
    CU_ASSERT_EQUAL_FATAL(m->Results.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Results.items[0].Name, "a"));
    CU_ASSERT_EQUAL_FATAL(m->Results.items[0].Results.count, 1);
    CU_ASSERT_EQUAL(m->Results.items[0].Results.items[0].PartitionIndex, 49);
    CU_ASSERT_EQUAL(m->Results.items[0].Results.items[0].ErrorCode, KP_ERR_CONCURRENT_TRANSACTIONS);
}

/* --------------------------------------------------------- AddOffsetsToTxn */

static const uint8_t add_offsets_request_v0[] = {
    0x00, 0x02, 't',  'x',                          /* transactional_id "tx" */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* producer_id 1000 */
    0x00, 0x03,                                     /* producer_epoch 3 */
    0x00, 0x01, 'g',                                /* group_id "g" */
};

static void check_add_offsets_request_v0(const void *msg)
{
    const struct kp_AddOffsetsToTxnRequest *m = msg;
    CU_ASSERT(kp_str_eq_c(m->TransactionalId, "tx"));
    CU_ASSERT_EQUAL(m->ProducerId, 1000);
    CU_ASSERT_EQUAL(m->ProducerEpoch, 3);
    CU_ASSERT(kp_str_eq_c(m->GroupId, "g"));
}

static const uint8_t add_offsets_request_v1[] = {
    0x00, 0x01, 'x',                                /* transactional_id "x" */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* producer_id 0 */
    0x00, 0x00,                                     /* producer_epoch 0 */
    0x00, 0x04, 'g',  'r',  'p',  '1',              /* group_id "grp1" */
};

static void check_add_offsets_request_v1(const void *msg)
{
    const struct kp_AddOffsetsToTxnRequest *m = msg;
    CU_ASSERT(kp_str_eq_c(m->TransactionalId, "x"));
    CU_ASSERT_EQUAL(m->ProducerId, 0);
    CU_ASSERT_EQUAL(m->ProducerEpoch, 0);
    CU_ASSERT(kp_str_eq_c(m->GroupId, "grp1"));
}

static const uint8_t add_offsets_response_v0[] = {
    0x00, 0x00, 0x00, 0x00, /* throttle_time_ms 0 */
    0x00, 0x00,             /* error_code 0 */
};

static void check_add_offsets_response_v0(const void *msg)
{
    const struct kp_AddOffsetsToTxnResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 0);
    CU_ASSERT_EQUAL(m->ErrorCode, 0);
}

static const uint8_t add_offsets_response_v1[] = {
    0x00, 0x00, 0x01, 0x00, /* throttle_time_ms 256 */
    0x00, 0x2f,             /* error_code 47 INVALID_PRODUCER_EPOCH */
};

static void check_add_offsets_response_v1(const void *msg)
{
    const struct kp_AddOffsetsToTxnResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 256);
    CU_ASSERT_EQUAL(m->ErrorCode, KP_ERR_INVALID_PRODUCER_EPOCH);
}

/* ------------------------------------------------------------------ EndTxn */

static const uint8_t end_txn_request_v0[] = {
    0x00, 0x02, 't',  'x',                          /* transactional_id "tx" */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* producer_id 1000 */
    0x00, 0x03,                                     /* producer_epoch 3 */
    0x01,                                           /* transaction_result 1 (COMMIT) */
};

static void check_end_txn_request_v0(const void *msg)
{
    const struct kp_EndTxnRequest *m = msg;
    CU_ASSERT(kp_str_eq_c(m->TransactionalId, "tx"));
    CU_ASSERT_EQUAL(m->ProducerId, 1000);
    CU_ASSERT_EQUAL(m->ProducerEpoch, 3);
    CU_ASSERT_TRUE(m->Committed);
}

static const uint8_t end_txn_request_v1[] = {
    0x00, 0x02, 't',  'y',                          /* transactional_id "ty" */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* producer_id 7 */
    0x00, 0x01,                                     /* producer_epoch 1 */
    0x00,                                           /* transaction_result 0 (ABORT) */
};

static void check_end_txn_request_v1(const void *msg)
{
    const struct kp_EndTxnRequest *m = msg;
    CU_ASSERT(kp_str_eq_c(m->TransactionalId, "ty"));
    CU_ASSERT_EQUAL(m->ProducerId, 7);
    CU_ASSERT_EQUAL(m->ProducerEpoch, 1);
    CU_ASSERT_FALSE(m->Committed);
}

static const uint8_t end_txn_response_v0[] = {
    0x00, 0x00, 0x00, 0x00, /* throttle_time_ms 0 */
    0x00, 0x30,             /* error_code 48 INVALID_TXN_STATE */
};

static void check_end_txn_response_v0(const void *msg)
{
    const struct kp_EndTxnResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 0);
    CU_ASSERT_EQUAL(m->ErrorCode, KP_ERR_INVALID_TXN_STATE);
}

static const uint8_t end_txn_response_v1[] = {
    0x00, 0x00, 0x00, 0x05, /* throttle_time_ms 5 */
    0x00, 0x00,             /* error_code 0 */
};

static void check_end_txn_response_v1(const void *msg)
{
    const struct kp_EndTxnResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 5);
    CU_ASSERT_EQUAL(m->ErrorCode, 0);
}

/* --------------------------------------------------------- WriteTxnMarkers */

static const uint8_t write_txn_markers_request_v0[] = {
    0x00, 0x00, 0x00, 0x02,                         /* transaction_markers: 2 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /*   [0] producer_id 1000 */
    0x00, 0x03,                                     /*   producer_epoch 3 */
    0x01,                                           /*   transaction_result 1 (COMMIT) */
    0x00, 0x00, 0x00, 0x02,                         /*   topics: 2 */
    0x00, 0x01, 't',                                /*     topic "t" */
    0x00, 0x00, 0x00, 0x02,                         /*     partitions: 2 */
    0x00, 0x00, 0x00, 0x00,                         /*       0 */
    0x00, 0x00, 0x00, 0x02,                         /*       2 */
    0x00, 0x12, '_',  '_',  'c',  'o',  'n',  's',  'u', 'm',
    'e',  'r',  '_',  'o',  'f',  'f',  's',  'e',  't', 's', /*     topic "__consumer_offsets" */
    0x00, 0x00, 0x00, 0x01,                                   /*     partitions: 1 */
    0x00, 0x00, 0x00, 0x1f,                                   /*       31 */
    0x00, 0x00, 0x00, 0x09,                                   /*   coordinator_epoch 9 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,           /*   [1] producer_id 7 */
    0x00, 0x00,                                               /*   producer_epoch 0 */
    0x00,                                                     /*   transaction_result 0 (ABORT) */
    0x00, 0x00, 0x00, 0x00,                                   /*   topics: 0 */
    0xff, 0xff, 0xff, 0xff,                                   /*   coordinator_epoch -1 */
};

static void check_write_txn_markers_request_v0(const void *msg)
{
    static const int32_t parts0[] = {0, 2};
    static const int32_t parts1[] = {31};
    const struct kp_WriteTxnMarkersRequest *m = msg;
    CU_ASSERT_EQUAL_FATAL(m->Markers.count, 2);
    const struct kp_WriteTxnMarkersRequest_WritableTxnMarker *k = m->Markers.items;
    CU_ASSERT_EQUAL(k[0].ProducerId, 1000);
    CU_ASSERT_EQUAL(k[0].ProducerEpoch, 3);
    CU_ASSERT_TRUE(k[0].TransactionResult);
    CU_ASSERT_EQUAL_FATAL(k[0].Topics.count, 2);
    CU_ASSERT(kp_str_eq_c(k[0].Topics.items[0].Name, "t"));
    CU_ASSERT(ints_are(k[0].Topics.items[0].PartitionIndexes.items,
                       k[0].Topics.items[0].PartitionIndexes.count, parts0, 2));
    CU_ASSERT(kp_str_eq_c(k[0].Topics.items[1].Name, "__consumer_offsets"));
    CU_ASSERT(ints_are(k[0].Topics.items[1].PartitionIndexes.items,
                       k[0].Topics.items[1].PartitionIndexes.count, parts1, 1));
    CU_ASSERT_EQUAL(k[0].CoordinatorEpoch, 9);
    CU_ASSERT_EQUAL(k[1].ProducerId, 7);
    CU_ASSERT_EQUAL(k[1].ProducerEpoch, 0);
    CU_ASSERT_FALSE(k[1].TransactionResult);
    CU_ASSERT_EQUAL(k[1].Topics.count, 0);
    CU_ASSERT_EQUAL(k[1].CoordinatorEpoch, -1);
}

static const uint8_t write_txn_markers_response_v0[] = {
    0x00, 0x00, 0x00, 0x01,                         /* transaction_markers: 1 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /*   producer_id 1000 (no throttle_time_ms) */
    0x00, 0x00, 0x00, 0x01,                         /*   topics: 1 */
    0x00, 0x01, 't',                                /*     topic "t" */
    0x00, 0x00, 0x00, 0x02,                         /*     partitions: 2 */
    0x00, 0x00, 0x00, 0x00,                         /*       partition 0 */
    0x00, 0x00,                                     /*       error_code 0 */
    0x00, 0x00, 0x00, 0x02,                         /*       partition 2 */
    0x00, 0x34, /*       error_code 52 TRANSACTION_COORDINATOR_FENCED */
};

static void check_write_txn_markers_response_v0(const void *msg)
{
    const struct kp_WriteTxnMarkersResponse *m = msg;
    CU_ASSERT_EQUAL_FATAL(m->Markers.count, 1);
    CU_ASSERT_EQUAL(m->Markers.items[0].ProducerId, 1000);
    CU_ASSERT_EQUAL_FATAL(m->Markers.items[0].Topics.count, 1);
    const struct kp_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult *t =
        &m->Markers.items[0].Topics.items[0];
    CU_ASSERT(kp_str_eq_c(t->Name, "t"));
    CU_ASSERT_EQUAL_FATAL(t->Partitions.count, 2);
    CU_ASSERT_EQUAL(t->Partitions.items[0].PartitionIndex, 0);
    CU_ASSERT_EQUAL(t->Partitions.items[0].ErrorCode, 0);
    CU_ASSERT_EQUAL(t->Partitions.items[1].PartitionIndex, 2);
    CU_ASSERT_EQUAL(t->Partitions.items[1].ErrorCode, KP_ERR_TRANSACTION_COORDINATOR_FENCED);
}

/* --------------------------------------------------------- TxnOffsetCommit */

static const uint8_t txn_offset_commit_request_v0[] = {
    0x00, 0x02, 't',  'x',                          /* transactional_id "tx" */
    0x00, 0x01, 'g',                                /* group_id "g" */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* producer_id 1000 */
    0x00, 0x03,                                     /* producer_epoch 3 */
    0x00, 0x00, 0x00, 0x01,                         /* topics: 1 */
    0x00, 0x02, 'i',  'n',                          /*   topic "in" */
    0x00, 0x00, 0x00, 0x02,                         /*   partitions: 2 */
    0x00, 0x00, 0x00, 0x00,                         /*     partition 0 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x86, 0xa0, /*     offset 100000 */
    0xff, 0xff,                                     /*     metadata null */
    0x00, 0x00, 0x00, 0x01,                         /*     partition 1 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /*     offset 0 */
    0x00, 0x02, 'm',  'd',                          /*     metadata "md" */
};

static void check_txn_offset_commit_request_v0(const void *msg)
{
    const struct kp_TxnOffsetCommitRequest *m = msg;
    CU_ASSERT(kp_str_eq_c(m->TransactionalId, "tx"));
    CU_ASSERT(kp_str_eq_c(m->GroupId, "g"));
    CU_ASSERT_EQUAL(m->ProducerId, 1000);
    CU_ASSERT_EQUAL(m->ProducerEpoch, 3);
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Topics.items[0].Name, "in"));
    CU_ASSERT_EQUAL_FATAL(m->Topics.items[0].Partitions.count, 2);
    const struct kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestPartition *p =
        m->Topics.items[0].Partitions.items;
    CU_ASSERT_EQUAL(p[0].PartitionIndex, 0);
    CU_ASSERT_EQUAL(p[0].CommittedOffset, 100000);
    CU_ASSERT_PTR_NULL(p[0].CommittedMetadata.ptr);
    CU_ASSERT_EQUAL(p[0].CommittedMetadata.len, -1);
    CU_ASSERT_EQUAL(p[1].PartitionIndex, 1);
    CU_ASSERT_EQUAL(p[1].CommittedOffset, 0);
    CU_ASSERT(kp_str_eq_c(p[1].CommittedMetadata, "md"));
}

static const uint8_t txn_offset_commit_request_v1[] = {
    0x00, 0x01, 'x',                                /* transactional_id "x" */
    0x00, 0x03, 'g',  'r',  'p',                    /* group_id "grp" */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* producer_id 7 */
    0x00, 0x01,                                     /* producer_epoch 1 */
    0x00, 0x00, 0x00, 0x00,                         /* topics: 0 */
};

static void check_txn_offset_commit_request_v1(const void *msg)
{
    const struct kp_TxnOffsetCommitRequest *m = msg;
    CU_ASSERT(kp_str_eq_c(m->TransactionalId, "x"));
    CU_ASSERT(kp_str_eq_c(m->GroupId, "grp"));
    CU_ASSERT_EQUAL(m->ProducerId, 7);
    CU_ASSERT_EQUAL(m->ProducerEpoch, 1);
    CU_ASSERT_EQUAL(m->Topics.count, 0);
}

static const uint8_t txn_offset_commit_response_v0[] = {
    0x00, 0x00, 0x00, 0x00, /* throttle_time_ms 0 */
    0x00, 0x00, 0x00, 0x01, /* topics: 1 */
    0x00, 0x02, 'i',  'n',  /*   topic "in" */
    0x00, 0x00, 0x00, 0x02, /*   partitions: 2 */
    0x00, 0x00, 0x00, 0x00, /*     partition 0 */
    0x00, 0x00,             /*     error_code 0 */
    0x00, 0x00, 0x00, 0x01, /*     partition 1 */
    0x00, 0x1c,             /*     error_code 28 INVALID_COMMIT_OFFSET_SIZE */
};

static void check_txn_offset_commit_response_v0(const void *msg)
{
    const struct kp_TxnOffsetCommitResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 0);
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Topics.items[0].Name, "in"));
    CU_ASSERT_EQUAL_FATAL(m->Topics.items[0].Partitions.count, 2);
    CU_ASSERT_EQUAL(m->Topics.items[0].Partitions.items[0].PartitionIndex, 0);
    CU_ASSERT_EQUAL(m->Topics.items[0].Partitions.items[0].ErrorCode, 0);
    CU_ASSERT_EQUAL(m->Topics.items[0].Partitions.items[1].PartitionIndex, 1);
    CU_ASSERT_EQUAL(m->Topics.items[0].Partitions.items[1].ErrorCode,
                    KP_ERR_INVALID_COMMIT_OFFSET_SIZE);
}

static const uint8_t txn_offset_commit_response_v1[] = {
    0x00, 0x00, 0x00, 0x0a, /* throttle_time_ms 10 */
    0x00, 0x00, 0x00, 0x01, /* topics: 1 */
    0x00, 0x01, 'o',        /*   topic "o" */
    0x00, 0x00, 0x00, 0x01, /*   partitions: 1 */
    0x00, 0x00, 0x00, 0x03, /*     partition 3 */
    0x00, 0x10,             /*     error_code 16 NOT_COORDINATOR */
};

static void check_txn_offset_commit_response_v1(const void *msg)
{
    const struct kp_TxnOffsetCommitResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 10);
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Topics.items[0].Name, "o"));
    CU_ASSERT_EQUAL_FATAL(m->Topics.items[0].Partitions.count, 1);
    CU_ASSERT_EQUAL(m->Topics.items[0].Partitions.items[0].PartitionIndex, 3);
    CU_ASSERT_EQUAL(m->Topics.items[0].Partitions.items[0].ErrorCode, KP_ERR_NOT_COORDINATOR);
}

static const struct vector vectors[] = {
    VECTOR(kp_AddPartitionsToTxnRequest_desc, 0, add_partitions_request_v0,
           check_add_partitions_request_v0),
    VECTOR(kp_AddPartitionsToTxnRequest_desc, 1, add_partitions_request_v1,
           check_add_partitions_request_v1),
    VECTOR(kp_AddPartitionsToTxnResponse_desc, 0, add_partitions_response_v0,
           check_add_partitions_response_v0),
    VECTOR(kp_AddPartitionsToTxnResponse_desc, 1, add_partitions_response_v1,
           check_add_partitions_response_v1),
    VECTOR(kp_AddOffsetsToTxnRequest_desc, 0, add_offsets_request_v0, check_add_offsets_request_v0),
    VECTOR(kp_AddOffsetsToTxnRequest_desc, 1, add_offsets_request_v1, check_add_offsets_request_v1),
    VECTOR(kp_AddOffsetsToTxnResponse_desc, 0, add_offsets_response_v0,
           check_add_offsets_response_v0),
    VECTOR(kp_AddOffsetsToTxnResponse_desc, 1, add_offsets_response_v1,
           check_add_offsets_response_v1),
    VECTOR(kp_EndTxnRequest_desc, 0, end_txn_request_v0, check_end_txn_request_v0),
    VECTOR(kp_EndTxnRequest_desc, 1, end_txn_request_v1, check_end_txn_request_v1),
    VECTOR(kp_EndTxnResponse_desc, 0, end_txn_response_v0, check_end_txn_response_v0),
    VECTOR(kp_EndTxnResponse_desc, 1, end_txn_response_v1, check_end_txn_response_v1),
    VECTOR(kp_WriteTxnMarkersRequest_desc, 0, write_txn_markers_request_v0,
           check_write_txn_markers_request_v0),
    VECTOR(kp_WriteTxnMarkersResponse_desc, 0, write_txn_markers_response_v0,
           check_write_txn_markers_response_v0),
    VECTOR(kp_TxnOffsetCommitRequest_desc, 0, txn_offset_commit_request_v0,
           check_txn_offset_commit_request_v0),
    VECTOR(kp_TxnOffsetCommitRequest_desc, 1, txn_offset_commit_request_v1,
           check_txn_offset_commit_request_v1),
    VECTOR(kp_TxnOffsetCommitResponse_desc, 0, txn_offset_commit_response_v0,
           check_txn_offset_commit_response_v0),
    VECTOR(kp_TxnOffsetCommitResponse_desc, 1, txn_offset_commit_response_v1,
           check_txn_offset_commit_response_v1),
};

static void test_vectors_decode_field_by_field_and_reencode_identically(void)
{
    vectors_decode_and_reencode(vectors, N(vectors));
}

static void test_vectors_cut_short_or_extended_do_not_decode(void)
{
    vectors_cut_short_or_extended_fail(vectors, N(vectors));
}

/* The crate's table holds keys 24-28 at Kafka 2.0's versions, none of them
 * flexible there, and every request and response version has a vector. */
static void test_every_transaction_version_has_a_vector(void)
{
    static const struct {
        int16_t key;
        const char *name;
        int16_t max;
        int16_t flex;
    } want[] = {
        {KP_API_ADD_PARTITIONS_TO_TXN, "AddPartitionsToTxn", 1, 3},
        {KP_API_ADD_OFFSETS_TO_TXN, "AddOffsetsToTxn", 1, 3},
        {KP_API_END_TXN, "EndTxn", 1, 3},
        {KP_API_WRITE_TXN_MARKERS, "WriteTxnMarkers", 0, 1},
        {KP_API_TXN_OFFSET_COMMIT, "TxnOffsetCommit", 1, 3},
    };
    for (size_t k = 0; k < N(want); k++) {
        const struct kp_api *api = kp_api_find(want[k].key);
        if (api == NULL) {
            fprintf(stderr, "\n  key %d missing from the table\n", want[k].key);
            CU_FAIL("a transaction API is missing from the table");
            continue;
        }
        CU_ASSERT_STRING_EQUAL(api->name, want[k].name);
        CU_ASSERT_EQUAL(api->min_version, 0);
        CU_ASSERT_EQUAL(api->max_version, want[k].max);
        CU_ASSERT_EQUAL(api->first_flexible, want[k].flex);
        CU_ASSERT(!kp_api_is_flexible(api, api->max_version));
        CU_ASSERT(vectors_cover_every_version(api, vectors, N(vectors)));
    }
}

/* A whole EndTxn v1 frame, header included, as a broker's dispatch decodes
 * it; and the WriteTxnMarkers response as a coordinator decodes it (header
 * v0: correlation id only). Versions Kafka 2.0 does not have are refused
 * with the correlation id still read. */
static void test_frames_decode_and_unknown_versions_are_refused(void)
{
    static const uint8_t end_txn[] = {
        0x00, 0x1a,                                     /* api_key 26 (EndTxn) */
        0x00, 0x01,                                     /* api_version 1 */
        0x00, 0x00, 0x00, 0x2a,                         /* correlation_id 42 */
        0x00, 0x02, 'c',  'l',                          /* client_id "cl" */
        0x00, 0x02, 't',  'y',                          /* transactional_id "ty" */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* producer_id 7 */
        0x00, 0x01,                                     /* producer_epoch 1 */
        0x00,                                           /* transaction_result 0 (ABORT) */
    };
    struct kp_arena a;
    kp_arena_init(&a, 1 << 20);
    struct kp_request req;
    CU_ASSERT_EQUAL_FATAL(kp_request_decode(end_txn, sizeof end_txn, &a, &req), 0);
    CU_ASSERT_EQUAL(req.header.RequestApiKey, KP_API_END_TXN);
    CU_ASSERT_EQUAL(req.header.RequestApiVersion, 1);
    CU_ASSERT_EQUAL(req.header.CorrelationId, 42);
    CU_ASSERT(kp_str_eq_c(req.header.ClientId, "cl"));
    check_end_txn_request_v1(req.body);

    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    CU_ASSERT_EQUAL(kp_request_encode(&w, &req.header, req.body), 0);
    CU_ASSERT_EQUAL_FATAL(w.len, 4 + sizeof end_txn);
    CU_ASSERT_EQUAL(kp_load_be32(w.buf), sizeof end_txn);
    CU_ASSERT(memcmp(w.buf + 4, end_txn, sizeof end_txn) == 0);
    kp_wr_free(&w);

    /* EndTxn v3 (flexible, Kafka 2.7) is not a version Samsa speaks */
    uint8_t v3[sizeof end_txn];
    memcpy(v3, end_txn, sizeof end_txn);
    v3[3] = 3;
    CU_ASSERT_EQUAL(kp_request_decode(v3, sizeof v3, &a, &req), KP_E_UNSUPPORTED);
    CU_ASSERT_EQUAL(req.header.CorrelationId, 42);
    CU_ASSERT_PTR_NULL(req.body);

    /* WriteTxnMarkers v1 (flexible, Kafka 2.8) neither */
    static const uint8_t markers_v1[] = {
        0x00, 0x1b,             /* api_key 27 */
        0x00, 0x01,             /* api_version 1 */
        0x00, 0x00, 0x00, 0x05, /* correlation_id 5 */
        0x00, 0x00,             /* client_id "" */
        0x00,                   /* tagged fields: 0 */
        0x01,                   /* markers: 0 (compact) */
        0x00,                   /* tagged fields: 0 */
    };
    CU_ASSERT_EQUAL(kp_request_decode(markers_v1, sizeof markers_v1, &a, &req), KP_E_UNSUPPORTED);
    CU_ASSERT_EQUAL(req.header.CorrelationId, 5);

    uint8_t resp[4 + sizeof write_txn_markers_response_v0];
    kp_store_be32(resp, 77); /* correlation_id 77 */
    memcpy(resp + 4, write_txn_markers_response_v0, sizeof write_txn_markers_response_v0);
    struct kp_response_header h;
    void *body = NULL;
    CU_ASSERT_EQUAL_FATAL(
        kp_response_decode(resp, sizeof resp, KP_API_WRITE_TXN_MARKERS, 0, &a, &h, &body), 0);
    CU_ASSERT_EQUAL(h.CorrelationId, 77);
    check_write_txn_markers_response_v0(body);
    kp_arena_free(&a);
}

/* Hostile counts are refused before they allocate: 2^31-1 topics, markers
 * or partitions with a few bytes present, and a negative count. */
static void test_hostile_counts_cannot_exhaust_the_arena(void)
{
    static const uint8_t many_topics[] = {
        0x00, 0x02, 't',  'x',                          /* transactional_id "tx" */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* producer_id 1000 */
        0x00, 0x03,                                     /* producer_epoch 3 */
        0x7f, 0xff, 0xff, 0xff,                         /* topics: 2147483647 */
        0x00, 0x01, 't',                                /*   topic "t" */
        0x00, 0x00, 0x00, 0x00,                         /*   partitions: 0 */
    };
    static const uint8_t many_markers[] = {
        0x7f, 0xff, 0xff, 0xff,                         /* transaction_markers: 2147483647 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /*   producer_id 1000 */
        0x00, 0x03,                                     /*   producer_epoch 3 */
        0x01,                                           /*   transaction_result 1 */
    };
    static const uint8_t many_partitions[] = {
        0x00, 0x00, 0x00, 0x01,                         /* transaction_markers: 1 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /*   producer_id 1000 */
        0x00, 0x03,                                     /*   producer_epoch 3 */
        0x01,                                           /*   transaction_result 1 */
        0x00, 0x00, 0x00, 0x01,                         /*   topics: 1 */
        0x00, 0x01, 't',                                /*     topic "t" */
        0x40, 0x00, 0x00, 0x00,                         /*     partitions: 2^30 */
        0x00, 0x00, 0x00, 0x00,                         /*       0 */
    };
    static const uint8_t negative_partitions[] = {
        0x00, 0x01, 'x',                                /* transactional_id "x" */
        0x00, 0x01, 'g',                                /* group_id "g" */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* producer_id 7 */
        0x00, 0x01,                                     /* producer_epoch 1 */
        0x00, 0x00, 0x00, 0x01,                         /* topics: 1 */
        0x00, 0x01, 'o',                                /*   topic "o" */
        0xff, 0xff, 0xff, 0xfe,                         /*   partitions: -2 */
    };
    static const uint8_t long_string[] = {
        0x7f, 0xff, 't', 'x', /* transactional_id of 32767 bytes, 2 present */
    };
    static const struct {
        const struct kp_msg_desc *desc;
        int16_t version;
        const uint8_t *bytes;
        size_t len;
    } cases[] = {
        {&kp_AddPartitionsToTxnRequest_desc, 1, many_topics, sizeof many_topics},
        {&kp_WriteTxnMarkersRequest_desc, 0, many_markers, sizeof many_markers},
        {&kp_WriteTxnMarkersRequest_desc, 0, many_partitions, sizeof many_partitions},
        {&kp_TxnOffsetCommitRequest_desc, 0, negative_partitions, sizeof negative_partitions},
        {&kp_EndTxnRequest_desc, 1, long_string, sizeof long_string},
    };
    for (size_t i = 0; i < N(cases); i++) {
        struct kp_arena a;
        kp_arena_init(&a, 1 << 20);
        void *msg = kp_arena_alloc(&a, cases[i].desc->body->size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
        size_t before = a.used;
        struct kp_reader r;
        kp_rd_init(&r, cases[i].bytes, cases[i].len);
        int err = kp_msg_decode(cases[i].desc, cases[i].version, &r, &a, msg);
        if (err == 0) {
            fprintf(stderr, "\n  hostile case %zu decoded\n", i);
        }
        CU_ASSERT_NOT_EQUAL(err, 0);
        CU_ASSERT(a.used - before < 4096);
        kp_arena_free(&a);
    }
}

static CU_TestInfo tests[] = {
    {"vectors_decode_field_by_field_and_reencode_identically",
     test_vectors_decode_field_by_field_and_reencode_identically},
    {"vectors_cut_short_or_extended_do_not_decode",
     test_vectors_cut_short_or_extended_do_not_decode},
    {"every_transaction_version_has_a_vector", test_every_transaction_version_has_a_vector},
    {"frames_decode_and_unknown_versions_are_refused",
     test_frames_decode_and_unknown_versions_are_refused},
    {"hostile_counts_cannot_exhaust_the_arena", test_hostile_counts_cannot_exhaust_the_arena},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-txn", tests);
}
