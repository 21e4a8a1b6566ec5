/*
 * The inter-broker requests of Kafka 2.0 (IBP 2.0), byte by byte:
 * LeaderAndIsr v0-1, StopReplica v0, UpdateMetadata v0-4, ControlledShutdown
 * v1, and what a follower sends: Fetch v8 with a ReplicaId and
 * OffsetForLeaderEpoch v1.
 *
 * Every vector below is written out by hand from the Struct schemas of Kafka
 * 2.0.0's clients/src/main/java/org/apache/kafka/common/requests/
 * <Name>Request.java and <Name>Response.java, one comment per field, without
 * the help of our encoder: a description (.kpm) that gets a field, its type,
 * its order or its versions wrong fails here. Each vector decodes, its fields
 * are checked one by one, it re-encodes to the very same bytes, and every
 * strict prefix of it, and it with one more byte, fail to decode.
 */
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include <stdio.h>
#include <string.h>

#include "cunit_run.h"
#include "hand_vectors.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ LeaderAndIsr */

static const uint8_t leader_and_isr_request_v0[] = {
    0x00, 0x00, 0x00, 0x01, /* controller_id 1 */
    0x00, 0x00, 0x00, 0x07, /* controller_epoch 7 */
    0x00, 0x00, 0x00, 0x01, /* partition_states: 1 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x00, /*   partition 0 */
    0x00, 0x00, 0x00, 0x06, /*   controller_epoch 6 */
    0x00, 0x00, 0x00, 0x02, /*   leader 2 */
    0x00, 0x00, 0x00, 0x04, /*   leader_epoch 4 */
    0x00, 0x00, 0x00, 0x02, /*   isr: 2 */
    0x00, 0x00, 0x00, 0x02, /*     2 */
    0x00, 0x00, 0x00, 0x03, /*     3 */
    0x00, 0x00, 0x00, 0x09, /*   zk_version 9 */
    0x00, 0x00, 0x00, 0x03, /*   replicas: 3 */
    0x00, 0x00, 0x00, 0x02, /*     2 */
    0x00, 0x00, 0x00, 0x03, /*     3 */
    0x00, 0x00, 0x00, 0x01, /*     1 */
    0x00, 0x00, 0x00, 0x01, /* live_leaders: 1 */
    0x00, 0x00, 0x00, 0x02, /*   id 2 */
    0x00, 0x02, 'b',  '2',  /*   host "b2" */
    0x00, 0x00, 0x23, 0x84, /*   port 9092 */
};

static void check_leader_and_isr_request_v0(const void *msg)
{
    static const int32_t isr[] = {2, 3};
    static const int32_t replicas[] = {2, 3, 1};
    const struct kp_LeaderAndIsrRequest *m = msg;
    CU_ASSERT_EQUAL(m->ControllerId, 1);
    CU_ASSERT_EQUAL(m->ControllerEpoch, 7);
    CU_ASSERT_EQUAL_FATAL(m->UngroupedPartitionStates.count, 1);
    const struct kp_LeaderAndIsrRequest_LeaderAndIsrPartitionState *p =
        &m->UngroupedPartitionStates.items[0];
    CU_ASSERT(kp_str_eq_c(p->TopicName, "t1"));
    CU_ASSERT_EQUAL(p->PartitionIndex, 0);
    CU_ASSERT_EQUAL(p->ControllerEpoch, 6);
    CU_ASSERT_EQUAL(p->Leader, 2);
    CU_ASSERT_EQUAL(p->LeaderEpoch, 4);
    CU_ASSERT(ints_are(p->Isr.items, p->Isr.count, isr, 2));
    CU_ASSERT_EQUAL(p->ZkVersion, 9);
    CU_ASSERT(ints_are(p->Replicas.items, p->Replicas.count, replicas, 3));
    CU_ASSERT_FALSE(p->IsNew); /* v1+: its default */
    CU_ASSERT_EQUAL_FATAL(m->LiveLeaders.count, 1);
    CU_ASSERT_EQUAL(m->LiveLeaders.items[0].BrokerId, 2);
    CU_ASSERT(kp_str_eq_c(m->LiveLeaders.items[0].HostName, "b2"));
    CU_ASSERT_EQUAL(m->LiveLeaders.items[0].Port, 9092);
}

static const uint8_t leader_and_isr_request_v1[] = {
    0x00, 0x00, 0x00, 0x02,      /* controller_id 2 */
    0x00, 0x00, 0x00, 0x0c,      /* controller_epoch 12 */
    0x00, 0x00, 0x00, 0x02,      /* partition_states: 2 */
    0x00, 0x03, 'o',  'r',  'd', /*   [0] topic "ord" */
    0x00, 0x00, 0x00, 0x05,      /*   partition 5 */
    0x00, 0x00, 0x00, 0x0b,      /*   controller_epoch 11 */
    0x00, 0x00, 0x00, 0x01,      /*   leader 1 */
    0x00, 0x00, 0x01, 0x00,      /*   leader_epoch 256 */
    0x00, 0x00, 0x00, 0x01,      /*   isr: 1 */
    0x00, 0x00, 0x00, 0x01,      /*     1 */
    0xff, 0xff, 0xff, 0xff,      /*   zk_version -1 */
    0x00, 0x00, 0x00, 0x02,      /*   replicas: 2 */
    0x00, 0x00, 0x00, 0x01,      /*     1 */
    0x00, 0x00, 0x00, 0x03,      /*     3 */
    0x01,                        /*   is_new true */
    0x00, 0x03, 'o',  'r',  'd', /*   [1] topic "ord" */
    0x00, 0x00, 0x00, 0x06,      /*   partition 6 */
    0x00, 0x00, 0x00, 0x0b,      /*   controller_epoch 11 */
    0xff, 0xff, 0xff, 0xff,      /*   leader -1 (none) */
    0x00, 0x00, 0x00, 0x02,      /*   leader_epoch 2 */
    0x00, 0x00, 0x00, 0x00,      /*   isr: 0 */
    0x00, 0x00, 0x00, 0x00,      /*   zk_version 0 */
    0x00, 0x00, 0x00, 0x01,      /*   replicas: 1 */
    0x00, 0x00, 0x00, 0x03,      /*     3 */
    0x00,                        /*   is_new false */
    0x00, 0x00, 0x00, 0x00,      /* live_leaders: 0 */
};

static void check_leader_and_isr_request_v1(const void *msg)
{
    static const int32_t isr0[] = {1};
    static const int32_t replicas0[] = {1, 3};
    static const int32_t replicas1[] = {3};
    const struct kp_LeaderAndIsrRequest *m = msg;
    CU_ASSERT_EQUAL(m->ControllerId, 2);
    CU_ASSERT_EQUAL(m->ControllerEpoch, 12);
    CU_ASSERT_EQUAL_FATAL(m->UngroupedPartitionStates.count, 2);
    const struct kp_LeaderAndIsrRequest_LeaderAndIsrPartitionState *p =
        m->UngroupedPartitionStates.items;
    CU_ASSERT(kp_str_eq_c(p[0].TopicName, "ord"));
    CU_ASSERT_EQUAL(p[0].PartitionIndex, 5);
    CU_ASSERT_EQUAL(p[0].ControllerEpoch, 11);
    CU_ASSERT_EQUAL(p[0].Leader, 1);
    CU_ASSERT_EQUAL(p[0].LeaderEpoch, 256);
    CU_ASSERT(ints_are(p[0].Isr.items, p[0].Isr.count, isr0, 1));
    CU_ASSERT_EQUAL(p[0].ZkVersion, -1);
    CU_ASSERT(ints_are(p[0].Replicas.items, p[0].Replicas.count, replicas0, 2));
    CU_ASSERT_TRUE(p[0].IsNew);
    CU_ASSERT(kp_str_eq_c(p[1].TopicName, "ord"));
    CU_ASSERT_EQUAL(p[1].PartitionIndex, 6);
    CU_ASSERT_EQUAL(p[1].ControllerEpoch, 11);
    CU_ASSERT_EQUAL(p[1].Leader, -1);
    CU_ASSERT_EQUAL(p[1].LeaderEpoch, 2);
    CU_ASSERT_EQUAL(p[1].Isr.count, 0);
    CU_ASSERT_EQUAL(p[1].ZkVersion, 0);
    CU_ASSERT(ints_are(p[1].Replicas.items, p[1].Replicas.count, replicas1, 1));
    CU_ASSERT_FALSE(p[1].IsNew);
    CU_ASSERT_EQUAL(m->LiveLeaders.count, 0);
}

static const uint8_t leader_and_isr_response_v0[] = {
    0x00, 0x00,             /* error_code 0 */
    0x00, 0x00, 0x00, 0x02, /* partitions: 2 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x00, /*   partition 0 */
    0x00, 0x00,             /*   error_code 0 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x01, /*   partition 1 */
    0x00, 0x0b,             /*   error_code 11 STALE_CONTROLLER_EPOCH */
};

static void check_leader_and_isr_response_v0(const void *msg)
{
    const struct kp_LeaderAndIsrResponse *m = msg;
    CU_ASSERT_EQUAL(m->ErrorCode, 0);
    CU_ASSERT_EQUAL_FATAL(m->PartitionErrors.count, 2);
    CU_ASSERT(kp_str_eq_c(m->PartitionErrors.items[0].TopicName, "t1"));
    CU_ASSERT_EQUAL(m->PartitionErrors.items[0].PartitionIndex, 0);
    CU_ASSERT_EQUAL(m->PartitionErrors.items[0].ErrorCode, 0);
    CU_ASSERT(kp_str_eq_c(m->PartitionErrors.items[1].TopicName, "t1"));
    CU_ASSERT_EQUAL(m->PartitionErrors.items[1].PartitionIndex, 1);
    CU_ASSERT_EQUAL(m->PartitionErrors.items[1].ErrorCode, KP_ERR_STALE_CONTROLLER_EPOCH);
}

static const uint8_t leader_and_isr_response_v1[] = {
    0x00, 0x00,             /* error_code 0 */
    0x00, 0x00, 0x00, 0x01, /* partitions: 1 */
    0x00, 0x01, 'x',        /*   topic "x" */
    0x00, 0x00, 0x00, 0x02, /*   partition 2 */
    0x00, 0x38,             /*   error_code 56 KAFKA_STORAGE_ERROR */
};

static void check_leader_and_isr_response_v1(const void *msg)
{
    const struct kp_LeaderAndIsrResponse *m = msg;
    CU_ASSERT_EQUAL(m->ErrorCode, 0);
    CU_ASSERT_EQUAL_FATAL(m->PartitionErrors.count, 1);
    CU_ASSERT(kp_str_eq_c(m->PartitionErrors.items[0].TopicName, "x"));
    CU_ASSERT_EQUAL(m->PartitionErrors.items[0].PartitionIndex, 2);
    CU_ASSERT_EQUAL(m->PartitionErrors.items[0].ErrorCode, KP_ERR_KAFKA_STORAGE_ERROR);
}

/* ------------------------------------------------------------- StopReplica */

static const uint8_t stop_replica_request_v0[] = {
    0x00, 0x00, 0x00, 0x01, /* controller_id 1 */
    0x00, 0x00, 0x00, 0x07, /* controller_epoch 7 */
    0x01,                   /* delete_partitions true */
    0x00, 0x00, 0x00, 0x02, /* partitions: 2 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x00, /*   partition 0 */
    0x00, 0x02, 't',  '2',  /*   topic "t2" */
    0x00, 0x00, 0x00, 0x03, /*   partition 3 */
};

static void check_stop_replica_request_v0(const void *msg)
{
    const struct kp_StopReplicaRequest *m = msg;
    CU_ASSERT_EQUAL(m->ControllerId, 1);
    CU_ASSERT_EQUAL(m->ControllerEpoch, 7);
    CU_ASSERT_TRUE(m->DeletePartitions);
    CU_ASSERT_EQUAL_FATAL(m->UngroupedPartitions.count, 2);
    CU_ASSERT(kp_str_eq_c(m->UngroupedPartitions.items[0].TopicName, "t1"));
    CU_ASSERT_EQUAL(m->UngroupedPartitions.items[0].PartitionIndex, 0);
    CU_ASSERT(kp_str_eq_c(m->UngroupedPartitions.items[1].TopicName, "t2"));
    CU_ASSERT_EQUAL(m->UngroupedPartitions.items[1].PartitionIndex, 3);
}

static const uint8_t stop_replica_response_v0[] = {
    0x00, 0x0b,             /* error_code 11 STALE_CONTROLLER_EPOCH */
    0x00, 0x00, 0x00, 0x01, /* partitions: 1 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x00, /*   partition 0 */
    0x00, 0x00,             /*   error_code 0 */
};

static void check_stop_replica_response_v0(const void *msg)
{
    const struct kp_StopReplicaResponse *m = msg;
    CU_ASSERT_EQUAL(m->ErrorCode, KP_ERR_STALE_CONTROLLER_EPOCH);
    CU_ASSERT_EQUAL_FATAL(m->PartitionErrors.count, 1);
    CU_ASSERT(kp_str_eq_c(m->PartitionErrors.items[0].TopicName, "t1"));
    CU_ASSERT_EQUAL(m->PartitionErrors.items[0].PartitionIndex, 0);
    CU_ASSERT_EQUAL(m->PartitionErrors.items[0].ErrorCode, 0);
}

/* ---------------------------------------------------------- UpdateMetadata */

/* v0: a live broker is {id, host, port}. */
static const uint8_t update_metadata_request_v0[] = {
    0x00, 0x00, 0x00, 0x01, /* controller_id 1 */
    0x00, 0x00, 0x00, 0x07, /* controller_epoch 7 */
    0x00, 0x00, 0x00, 0x01, /* partition_states: 1 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x00, /*   partition 0 */
    0x00, 0x00, 0x00, 0x06, /*   controller_epoch 6 */
    0x00, 0x00, 0x00, 0x02, /*   leader 2 */
    0x00, 0x00, 0x00, 0x04, /*   leader_epoch 4 */
    0x00, 0x00, 0x00, 0x01, /*   isr: 1 */
    0x00, 0x00, 0x00, 0x02, /*     2 */
    0x00, 0x00, 0x00, 0x09, /*   zk_version 9 */
    0x00, 0x00, 0x00, 0x02, /*   replicas: 2 */
    0x00, 0x00, 0x00, 0x02, /*     2 */
    0x00, 0x00, 0x00, 0x01, /*     1 */
    0x00, 0x00, 0x00, 0x01, /* live_brokers: 1 */
    0x00, 0x00, 0x00, 0x02, /*   id 2 */
    0x00, 0x02, 'b',  '2',  /*   host "b2" */
    0x00, 0x00, 0x23, 0x84, /*   port 9092 */
};

static void check_update_metadata_request_v0(const void *msg)
{
    static const int32_t isr[] = {2};
    static const int32_t replicas[] = {2, 1};
    const struct kp_UpdateMetadataRequest *m = msg;
    CU_ASSERT_EQUAL(m->ControllerId, 1);
    CU_ASSERT_EQUAL(m->ControllerEpoch, 7);
    CU_ASSERT_EQUAL_FATAL(m->UngroupedPartitionStates.count, 1);
    const struct kp_UpdateMetadataRequest_UpdateMetadataPartitionState *p =
        &m->UngroupedPartitionStates.items[0];
    CU_ASSERT(kp_str_eq_c(p->TopicName, "t1"));
    CU_ASSERT_EQUAL(p->PartitionIndex, 0);
    CU_ASSERT_EQUAL(p->ControllerEpoch, 6);
    CU_ASSERT_EQUAL(p->Leader, 2);
    CU_ASSERT_EQUAL(p->LeaderEpoch, 4);
    CU_ASSERT(ints_are(p->Isr.items, p->Isr.count, isr, 1));
    CU_ASSERT_EQUAL(p->ZkVersion, 9);
    CU_ASSERT(ints_are(p->Replicas.items, p->Replicas.count, replicas, 2));
    CU_ASSERT_EQUAL(p->OfflineReplicas.count, 0); /* v4+ */
    CU_ASSERT_EQUAL_FATAL(m->LiveBrokers.count, 1);
    const struct kp_UpdateMetadataRequest_UpdateMetadataBroker *b = &m->LiveBrokers.items[0];
    CU_ASSERT_EQUAL(b->Id, 2);
    CU_ASSERT(kp_str_eq_c(b->V0Host, "b2"));
    CU_ASSERT_EQUAL(b->V0Port, 9092);
    CU_ASSERT_EQUAL(b->Endpoints.count, 0); /* v1+ */
    CU_ASSERT_EQUAL(b->Rack.len, -1);       /* v2+: null */
}

/* v1: end points, port before host; leader -2 marks a topic being deleted. */
static const uint8_t update_metadata_request_v1[] = {
    0x00, 0x00, 0x00, 0x03,      /* controller_id 3 */
    0x00, 0x00, 0x00, 0x02,      /* controller_epoch 2 */
    0x00, 0x00, 0x00, 0x01,      /* partition_states: 1 */
    0x00, 0x03, 'd',  'e',  'l', /*   topic "del" */
    0x00, 0x00, 0x00, 0x01,      /*   partition 1 */
    0x00, 0x00, 0x00, 0x02,      /*   controller_epoch 2 */
    0xff, 0xff, 0xff, 0xfe,      /*   leader -2 (LeaderDuringDelete) */
    0x00, 0x00, 0x00, 0x03,      /*   leader_epoch 3 */
    0x00, 0x00, 0x00, 0x00,      /*   isr: 0 */
    0x00, 0x00, 0x00, 0x05,      /*   zk_version 5 */
    0x00, 0x00, 0x00, 0x00,      /*   replicas: 0 */
    0x00, 0x00, 0x00, 0x01,      /* live_brokers: 1 */
    0x00, 0x00, 0x00, 0x03,      /*   id 3 */
    0x00, 0x00, 0x00, 0x01,      /*   end_points: 1 */
    0x00, 0x00, 0x23, 0x85,      /*     port 9093 */
    0x00, 0x02, 'b',  '3',       /*     host "b3" */
    0x00, 0x01,                  /*     security_protocol_type 1 (SSL) */
};

static void check_update_metadata_request_v1(const void *msg)
{
    const struct kp_UpdateMetadataRequest *m = msg;
    CU_ASSERT_EQUAL(m->ControllerId, 3);
    CU_ASSERT_EQUAL(m->ControllerEpoch, 2);
    CU_ASSERT_EQUAL_FATAL(m->UngroupedPartitionStates.count, 1);
    const struct kp_UpdateMetadataRequest_UpdateMetadataPartitionState *p =
        &m->UngroupedPartitionStates.items[0];
    CU_ASSERT(kp_str_eq_c(p->TopicName, "del"));
    CU_ASSERT_EQUAL(p->PartitionIndex, 1);
    CU_ASSERT_EQUAL(p->ControllerEpoch, 2);
    CU_ASSERT_EQUAL(p->Leader, -2);
    CU_ASSERT_EQUAL(p->LeaderEpoch, 3);
    CU_ASSERT_EQUAL(p->Isr.count, 0);
    CU_ASSERT_EQUAL(p->ZkVersion, 5);
    CU_ASSERT_EQUAL(p->Replicas.count, 0);
    CU_ASSERT_EQUAL_FATAL(m->LiveBrokers.count, 1);
    const struct kp_UpdateMetadataRequest_UpdateMetadataBroker *b = &m->LiveBrokers.items[0];
    CU_ASSERT_EQUAL(b->Id, 3);
    CU_ASSERT_EQUAL(b->V0Host.len, 0); /* v0 only */
    CU_ASSERT_EQUAL(b->V0Port, 0);
    CU_ASSERT_EQUAL_FATAL(b->Endpoints.count, 1);
    CU_ASSERT_EQUAL(b->Endpoints.items[0].Port, 9093);
    CU_ASSERT(kp_str_eq_c(b->Endpoints.items[0].Host, "b3"));
    CU_ASSERT_EQUAL(b->Endpoints.items[0].Listener.len, 0); /* v3+ */
    CU_ASSERT_EQUAL(b->Endpoints.items[0].SecurityProtocol, 1);
    CU_ASSERT_EQUAL(b->Rack.len, -1);
}

/* v2: a rack per broker, nullable. */
static const uint8_t update_metadata_request_v2[] = {
    0x00, 0x00, 0x00, 0x01,      /* controller_id 1 */
    0x00, 0x00, 0x00, 0x01,      /* controller_epoch 1 */
    0x00, 0x00, 0x00, 0x00,      /* partition_states: 0 */
    0x00, 0x00, 0x00, 0x02,      /* live_brokers: 2 */
    0x00, 0x00, 0x00, 0x01,      /*   id 1 */
    0x00, 0x00, 0x00, 0x01,      /*   end_points: 1 */
    0x00, 0x00, 0x23, 0x84,      /*     port 9092 */
    0x00, 0x02, 'b',  '1',       /*     host "b1" */
    0x00, 0x00,                  /*     security_protocol_type 0 (PLAINTEXT) */
    0x00, 0x03, 'r',  'k',  'a', /*   rack "rka" */
    0x00, 0x00, 0x00, 0x02,      /*   id 2 */
    0x00, 0x00, 0x00, 0x00,      /*   end_points: 0 */
    0xff, 0xff,                  /*   rack null */
};

static void check_update_metadata_request_v2(const void *msg)
{
    const struct kp_UpdateMetadataRequest *m = msg;
    CU_ASSERT_EQUAL(m->ControllerId, 1);
    CU_ASSERT_EQUAL(m->ControllerEpoch, 1);
    CU_ASSERT_EQUAL(m->UngroupedPartitionStates.count, 0);
    CU_ASSERT_EQUAL_FATAL(m->LiveBrokers.count, 2);
    const struct kp_UpdateMetadataRequest_UpdateMetadataBroker *b = m->LiveBrokers.items;
    CU_ASSERT_EQUAL(b[0].Id, 1);
    CU_ASSERT_EQUAL_FATAL(b[0].Endpoints.count, 1);
    CU_ASSERT_EQUAL(b[0].Endpoints.items[0].Port, 9092);
    CU_ASSERT(kp_str_eq_c(b[0].Endpoints.items[0].Host, "b1"));
    CU_ASSERT_EQUAL(b[0].Endpoints.items[0].SecurityProtocol, 0);
    CU_ASSERT(kp_str_eq_c(b[0].Rack, "rka"));
    CU_ASSERT_EQUAL(b[1].Id, 2);
    CU_ASSERT_EQUAL(b[1].Endpoints.count, 0);
    CU_ASSERT_EQUAL(b[1].Rack.len, -1);
}

/* v3: an end point names its listener, between host and security protocol. */
static const uint8_t update_metadata_request_v3[] = {
    0x00, 0x00, 0x00, 0x01, /* controller_id 1 */
    0x00, 0x00, 0x00, 0x04, /* controller_epoch 4 */
    0x00, 0x00, 0x00, 0x01, /* partition_states: 1 */
    0x00, 0x01, 'a',        /*   topic "a" */
    0x00, 0x00, 0x00, 0x00, /*   partition 0 */
    0x00, 0x00, 0x00, 0x04, /*   controller_epoch 4 */
    0x00, 0x00, 0x00, 0x01, /*   leader 1 */
    0x00, 0x00, 0x00, 0x00, /*   leader_epoch 0 */
    0x00, 0x00, 0x00, 0x01, /*   isr: 1 */
    0x00, 0x00, 0x00, 0x01, /*     1 */
    0x00, 0x00, 0x00, 0x00, /*   zk_version 0 */
    0x00, 0x00, 0x00, 0x01, /*   replicas: 1 */
    0x00, 0x00, 0x00, 0x01, /*     1 */
    0x00, 0x00, 0x00, 0x01, /* live_brokers: 1 */
    0x00, 0x00, 0x00, 0x01, /*   id 1 */
    0x00, 0x00, 0x00, 0x01, /*   end_points: 1 */
    0x00, 0x00, 0x23, 0x84, /*     port 9092 */
    0x00, 0x02, 'b',  '1',  /*     host "b1" */
    0x00, 0x08,             /*     listener_name: 8 bytes */
    'I',  'N',  'T',  'E',  /*       "INTE" */
    'R',  'N',  'A',  'L',  /*       "RNAL" */
    0x00, 0x02,             /*     security_protocol_type 2 (SASL_PLAINTEXT) */
    0xff, 0xff,             /*   rack null */
};

static void check_update_metadata_request_v3(const void *msg)
{
    static const int32_t one[] = {1};
    const struct kp_UpdateMetadataRequest *m = msg;
    CU_ASSERT_EQUAL(m->ControllerId, 1);
    CU_ASSERT_EQUAL(m->ControllerEpoch, 4);
    CU_ASSERT_EQUAL_FATAL(m->UngroupedPartitionStates.count, 1);
    const struct kp_UpdateMetadataRequest_UpdateMetadataPartitionState *p =
        &m->UngroupedPartitionStates.items[0];
    CU_ASSERT(kp_str_eq_c(p->TopicName, "a"));
    CU_ASSERT_EQUAL(p->PartitionIndex, 0);
    CU_ASSERT_EQUAL(p->ControllerEpoch, 4);
    CU_ASSERT_EQUAL(p->Leader, 1);
    CU_ASSERT_EQUAL(p->LeaderEpoch, 0);
    CU_ASSERT(ints_are(p->Isr.items, p->Isr.count, one, 1));
    CU_ASSERT_EQUAL(p->ZkVersion, 0);
    CU_ASSERT(ints_are(p->Replicas.items, p->Replicas.count, one, 1));
    CU_ASSERT_EQUAL_FATAL(m->LiveBrokers.count, 1);
    const struct kp_UpdateMetadataRequest_UpdateMetadataBroker *b = &m->LiveBrokers.items[0];
    CU_ASSERT_EQUAL(b->Id, 1);
    CU_ASSERT_EQUAL_FATAL(b->Endpoints.count, 1);
    CU_ASSERT_EQUAL(b->Endpoints.items[0].Port, 9092);
    CU_ASSERT(kp_str_eq_c(b->Endpoints.items[0].Host, "b1"));
    CU_ASSERT(kp_str_eq_c(b->Endpoints.items[0].Listener, "INTERNAL"));
    CU_ASSERT_EQUAL(b->Endpoints.items[0].SecurityProtocol, 2);
    CU_ASSERT_EQUAL(b->Rack.len, -1);
}

/* v4: a partition's offline replicas; what a 2.0 controller sends. */
static const uint8_t update_metadata_request_v4[] = {
    0x00, 0x00, 0x00, 0x02, /* controller_id 2 */
    0x00, 0x00, 0x00, 0x09, /* controller_epoch 9 */
    0x00, 0x00, 0x00, 0x01, /* partition_states: 1 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x02, /*   partition 2 */
    0x00, 0x00, 0x00, 0x08, /*   controller_epoch 8 */
    0x00, 0x00, 0x00, 0x01, /*   leader 1 */
    0x00, 0x00, 0x00, 0x07, /*   leader_epoch 7 */
    0x00, 0x00, 0x00, 0x01, /*   isr: 1 */
    0x00, 0x00, 0x00, 0x01, /*     1 */
    0x00, 0x00, 0x00, 0x0d, /*   zk_version 13 */
    0x00, 0x00, 0x00, 0x02, /*   replicas: 2 */
    0x00, 0x00, 0x00, 0x01, /*     1 */
    0x00, 0x00, 0x00, 0x03, /*     3 */
    0x00, 0x00, 0x00, 0x01, /*   offline_replicas: 1 */
    0x00, 0x00, 0x00, 0x03, /*     3 */
    0x00, 0x00, 0x00, 0x01, /* live_brokers: 1 */
    0x00, 0x00, 0x00, 0x01, /*   id 1 */
    0x00, 0x00, 0x00, 0x02, /*   end_points: 2 */
    0x00, 0x00, 0x23, 0x84, /*     port 9092 */
    0x00, 0x02, 'b',  '1',  /*     host "b1" */
    0x00, 0x09,             /*     listener_name: 9 bytes */
    'P',  'L',  'A',  'I',  /*       "PLAI" */
    'N',  'T',  'E',  'X',  /*       "NTEX" */
    'T',                    /*       "T" */
    0x00, 0x00,             /*     security_protocol_type 0 (PLAINTEXT) */
    0x00, 0x00, 0x23, 0x8e, /*     port 9102 */
    0x00, 0x02, 'b',  '1',  /*     host "b1" */
    0x00, 0x04,             /*     listener_name: 4 bytes */
    'R',  'E',  'P',  'L',  /*       "REPL" */
    0x00, 0x03,             /*     security_protocol_type 3 (SASL_SSL) */
    0x00, 0x02, 'r',  '1',  /*   rack "r1" */
};

static void check_update_metadata_request_v4(const void *msg)
{
    static const int32_t isr[] = {1};
    static const int32_t replicas[] = {1, 3};
    static const int32_t offline[] = {3};
    const struct kp_UpdateMetadataRequest *m = msg;
    CU_ASSERT_EQUAL(m->ControllerId, 2);
    CU_ASSERT_EQUAL(m->ControllerEpoch, 9);
    CU_ASSERT_EQUAL_FATAL(m->UngroupedPartitionStates.count, 1);
    const struct kp_UpdateMetadataRequest_UpdateMetadataPartitionState *p =
        &m->UngroupedPartitionStates.items[0];
    CU_ASSERT(kp_str_eq_c(p->TopicName, "t1"));
    CU_ASSERT_EQUAL(p->PartitionIndex, 2);
    CU_ASSERT_EQUAL(p->ControllerEpoch, 8);
    CU_ASSERT_EQUAL(p->Leader, 1);
    CU_ASSERT_EQUAL(p->LeaderEpoch, 7);
    CU_ASSERT(ints_are(p->Isr.items, p->Isr.count, isr, 1));
    CU_ASSERT_EQUAL(p->ZkVersion, 13);
    CU_ASSERT(ints_are(p->Replicas.items, p->Replicas.count, replicas, 2));
    CU_ASSERT(ints_are(p->OfflineReplicas.items, p->OfflineReplicas.count, offline, 1));
    CU_ASSERT_EQUAL_FATAL(m->LiveBrokers.count, 1);
    const struct kp_UpdateMetadataRequest_UpdateMetadataBroker *b = &m->LiveBrokers.items[0];
    CU_ASSERT_EQUAL(b->Id, 1);
    CU_ASSERT_EQUAL_FATAL(b->Endpoints.count, 2);
    CU_ASSERT_EQUAL(b->Endpoints.items[0].Port, 9092);
    CU_ASSERT(kp_str_eq_c(b->Endpoints.items[0].Host, "b1"));
    CU_ASSERT(kp_str_eq_c(b->Endpoints.items[0].Listener, "PLAINTEXT"));
    CU_ASSERT_EQUAL(b->Endpoints.items[0].SecurityProtocol, 0);
    CU_ASSERT_EQUAL(b->Endpoints.items[1].Port, 9102);
    CU_ASSERT(kp_str_eq_c(b->Endpoints.items[1].Host, "b1"));
    CU_ASSERT(kp_str_eq_c(b->Endpoints.items[1].Listener, "REPL"));
    CU_ASSERT_EQUAL(b->Endpoints.items[1].SecurityProtocol, 3);
    CU_ASSERT(kp_str_eq_c(b->Rack, "r1"));
}

/* Every version's response is the error code alone. */
static const uint8_t update_metadata_response_ok[] = {
    0x00, 0x00, /* error_code 0 */
};
static const uint8_t update_metadata_response_stale[] = {
    0x00, 0x0b, /* error_code 11 STALE_CONTROLLER_EPOCH */
};

static void check_update_metadata_response_ok(const void *msg)
{
    const struct kp_UpdateMetadataResponse *m = msg;
    CU_ASSERT_EQUAL(m->ErrorCode, 0);
}

static void check_update_metadata_response_stale(const void *msg)
{
    const struct kp_UpdateMetadataResponse *m = msg;
    CU_ASSERT_EQUAL(m->ErrorCode, KP_ERR_STALE_CONTROLLER_EPOCH);
}

/* ------------------------------------------------------ ControlledShutdown */

static const uint8_t controlled_shutdown_request_v1[] = {
    0x00, 0x00, 0x00, 0x03, /* broker_id 3 */
};

static void check_controlled_shutdown_request_v1(const void *msg)
{
    const struct kp_ControlledShutdownRequest *m = msg;
    CU_ASSERT_EQUAL(m->BrokerId, 3);
}

static const uint8_t controlled_shutdown_response_v1[] = {
    0x00, 0x00,             /* error_code 0 */
    0x00, 0x00, 0x00, 0x02, /* partitions_remaining: 2 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x01, /*   partition 1 */
    0x00, 0x02, 't',  '2',  /*   topic "t2" */
    0x00, 0x00, 0x00, 0x00, /*   partition 0 */
};

static void check_controlled_shutdown_response_v1(const void *msg)
{
    const struct kp_ControlledShutdownResponse *m = msg;
    CU_ASSERT_EQUAL(m->ErrorCode, 0);
    CU_ASSERT_EQUAL_FATAL(m->RemainingPartitions.count, 2);
    CU_ASSERT(kp_str_eq_c(m->RemainingPartitions.items[0].TopicName, "t1"));
    CU_ASSERT_EQUAL(m->RemainingPartitions.items[0].PartitionIndex, 1);
    CU_ASSERT(kp_str_eq_c(m->RemainingPartitions.items[1].TopicName, "t2"));
    CU_ASSERT_EQUAL(m->RemainingPartitions.items[1].PartitionIndex, 0);
}

/* ------------------------------------------------- what a follower sends */

/* Fetch v8 from a follower (ReplicaFetcherThread at IBP 2.0): replica_id is
 * the follower's broker id, the rest as a consumer's v7/v8. */
static const uint8_t fetch_request_v8_follower[] = {
    0x00, 0x00, 0x00, 0x02,                         /* replica_id 2 (a follower) */
    0x00, 0x00, 0x01, 0xf4,                         /* max_wait_time 500 */
    0x00, 0x00, 0x00, 0x01,                         /* min_bytes 1 */
    0x00, 0xa0, 0x00, 0x00,                         /* max_bytes 10485760 */
    0x00,                                           /* isolation_level 0 (READ_UNCOMMITTED) */
    0x00, 0x00, 0x00, 0x00,                         /* session_id 0 */
    0xff, 0xff, 0xff, 0xff,                         /* epoch -1 (no session) */
    0x00, 0x00, 0x00, 0x01,                         /* topics: 1 */
    0x00, 0x02, 't',  '1',                          /*   topic "t1" */
    0x00, 0x00, 0x00, 0x01,                         /*   partitions: 1 */
    0x00, 0x00, 0x00, 0x00,                         /*     partition 0 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, /* fetch_offset 42 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, /* log_start_offset 5 */
    0x00, 0x10, 0x00, 0x00,                         /* max_bytes 1048576 */
    0x00, 0x00, 0x00, 0x00,                         /* forgotten_topics_data: 0 */
};

static void check_fetch_request_v8_follower(const void *msg)
{
    const struct kp_FetchRequest *m = msg;
    CU_ASSERT_EQUAL(m->ReplicaId, 2);
    CU_ASSERT_EQUAL(m->MaxWaitMs, 500);
    CU_ASSERT_EQUAL(m->MinBytes, 1);
    CU_ASSERT_EQUAL(m->MaxBytes, 10485760);
    CU_ASSERT_EQUAL(m->IsolationLevel, 0);
    CU_ASSERT_EQUAL(m->SessionId, 0);
    CU_ASSERT_EQUAL(m->SessionEpoch, -1);
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Topics.items[0].Topic, "t1"));
    CU_ASSERT_EQUAL_FATAL(m->Topics.items[0].Partitions.count, 1);
    const struct kp_FetchRequest_FetchPartition *p = &m->Topics.items[0].Partitions.items[0];
    CU_ASSERT_EQUAL(p->Partition, 0);
    CU_ASSERT_EQUAL(p->CurrentLeaderEpoch, -1); /* v9+ */
    CU_ASSERT_EQUAL(p->FetchOffset, 42);
    CU_ASSERT_EQUAL(p->LogStartOffset, 5);
    CU_ASSERT_EQUAL(p->PartitionMaxBytes, 1048576);
    CU_ASSERT_EQUAL(m->ForgottenTopicsData.count, 0);
}

static const uint8_t fetch_response_v8[] = {
    0x00, 0x00, 0x00, 0x00,                         /* throttle_time_ms 0 */
    0x00, 0x00,                                     /* error_code 0 */
    0x00, 0x00, 0x00, 0x00,                         /* session_id 0 */
    0x00, 0x00, 0x00, 0x01,                         /* responses: 1 */
    0x00, 0x02, 't',  '1',                          /*   topic "t1" */
    0x00, 0x00, 0x00, 0x01,                         /*   partition_responses: 1 */
    0x00, 0x00, 0x00, 0x00,                         /*     partition 0 */
    0x00, 0x00,                                     /*     error_code 0 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2c, /* high_watermark 44 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b, /* last_stable_offset 43 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, /* log_start_offset 5 */
    0xff, 0xff, 0xff, 0xff,                         /* aborted_transactions null */
    0x00, 0x00, 0x00, 0x03, 0xaa, 0xbb, 0xcc,       /* record_set: 3 bytes */
};

static void check_fetch_response_v8(const void *msg)
{
    const struct kp_FetchResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 0);
    CU_ASSERT_EQUAL(m->ErrorCode, 0);
    CU_ASSERT_EQUAL(m->SessionId, 0);
    CU_ASSERT_EQUAL_FATAL(m->Responses.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Responses.items[0].Topic, "t1"));
    CU_ASSERT_EQUAL_FATAL(m->Responses.items[0].Partitions.count, 1);
    const struct kp_FetchResponse_PartitionData *p = &m->Responses.items[0].Partitions.items[0];
    CU_ASSERT_EQUAL(p->PartitionIndex, 0);
    CU_ASSERT_EQUAL(p->ErrorCode, 0);
    CU_ASSERT_EQUAL(p->HighWatermark, 44);
    CU_ASSERT_EQUAL(p->LastStableOffset, 43);
    CU_ASSERT_EQUAL(p->LogStartOffset, 5);
    CU_ASSERT_EQUAL(p->AbortedTransactions.count, -1);
    CU_ASSERT_EQUAL(p->PreferredReadReplica, -1); /* v11+ */
    CU_ASSERT_EQUAL_FATAL(p->Records.len, 3);
    CU_ASSERT_EQUAL(p->Records.ptr[0], 0xaa);
    CU_ASSERT_EQUAL(p->Records.ptr[2], 0xcc);
}

/* OffsetsForLeaderEpoch v1: what a 2.0 follower asks before truncating. */
static const uint8_t offset_for_leader_epoch_request_v1[] = {
    0x00, 0x00, 0x00, 0x01, /* topics: 1 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x02, /*   partitions: 2 */
    0x00, 0x00, 0x00, 0x00, /*     partition 0 */
    0x00, 0x00, 0x00, 0x04, /*     leader_epoch 4 */
    0x00, 0x00, 0x00, 0x01, /*     partition 1 */
    0x00, 0x00, 0x00, 0x00, /*     leader_epoch 0 */
};

static void check_offset_for_leader_epoch_request_v1(const void *msg)
{
    const struct kp_OffsetForLeaderEpochRequest *m = msg;
    CU_ASSERT_EQUAL(m->ReplicaId, -2); /* v3+ */
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Topics.items[0].Topic, "t1"));
    CU_ASSERT_EQUAL_FATAL(m->Topics.items[0].Partitions.count, 2);
    const struct kp_OffsetForLeaderEpochRequest_OffsetForLeaderPartition *p =
        m->Topics.items[0].Partitions.items;
    CU_ASSERT_EQUAL(p[0].Partition, 0);
    CU_ASSERT_EQUAL(p[0].CurrentLeaderEpoch, -1); /* v2+ */
    CU_ASSERT_EQUAL(p[0].LeaderEpoch, 4);
    CU_ASSERT_EQUAL(p[1].Partition, 1);
    CU_ASSERT_EQUAL(p[1].LeaderEpoch, 0);
}

static const uint8_t offset_for_leader_epoch_response_v1[] = {
    0x00, 0x00, 0x00, 0x01, /* topics: 1 */
    0x00, 0x02, 't',  '1',  /*   topic "t1" */
    0x00, 0x00, 0x00, 0x02, /*   partitions: 2 */
    0x00, 0x00,             /*     error_code 0 */
    0x00, 0x00, 0x00, 0x00, /*     partition 0 */
    0x00, 0x00, 0x00, 0x03, /*     leader_epoch 3 (the largest <= the one asked) */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x28, /* end_offset 40 */
    0x00, 0x06,                                     /*     error_code 6 NOT_LEADER_FOR_PARTITION */
    0x00, 0x00, 0x00, 0x01,                         /*     partition 1 */
    0xff, 0xff, 0xff, 0xff,                         /*     leader_epoch -1 */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* end_offset -1 */
};

static void check_offset_for_leader_epoch_response_v1(const void *msg)
{
    const struct kp_OffsetForLeaderEpochResponse *m = msg;
    CU_ASSERT_EQUAL(m->ThrottleTimeMs, 0); /* v2+ */
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT(kp_str_eq_c(m->Topics.items[0].Topic, "t1"));
    CU_ASSERT_EQUAL_FATAL(m->Topics.items[0].Partitions.count, 2);
    const struct kp_OffsetForLeaderEpochResponse_EpochEndOffset *p =
        m->Topics.items[0].Partitions.items;
    CU_ASSERT_EQUAL(p[0].ErrorCode, 0);
    CU_ASSERT_EQUAL(p[0].Partition, 0);
    CU_ASSERT_EQUAL(p[0].LeaderEpoch, 3);
    CU_ASSERT_EQUAL(p[0].EndOffset, 40);
    CU_ASSERT_EQUAL(p[1].ErrorCode, KP_ERR_NOT_LEADER_OR_FOLLOWER);
    CU_ASSERT_EQUAL(p[1].Partition, 1);
    CU_ASSERT_EQUAL(p[1].LeaderEpoch, -1);
    CU_ASSERT_EQUAL(p[1].EndOffset, -1);
}

/* ------------------------------------------------------------- the table */

static const struct vector vectors[] = {
    VECTOR(kp_LeaderAndIsrRequest_desc, 0, leader_and_isr_request_v0,
           check_leader_and_isr_request_v0),
    VECTOR(kp_LeaderAndIsrRequest_desc, 1, leader_and_isr_request_v1,
           check_leader_and_isr_request_v1),
    VECTOR(kp_LeaderAndIsrResponse_desc, 0, leader_and_isr_response_v0,
           check_leader_and_isr_response_v0),
    VECTOR(kp_LeaderAndIsrResponse_desc, 1, leader_and_isr_response_v1,
           check_leader_and_isr_response_v1),
    VECTOR(kp_StopReplicaRequest_desc, 0, stop_replica_request_v0, check_stop_replica_request_v0),
    VECTOR(kp_StopReplicaResponse_desc, 0, stop_replica_response_v0,
           check_stop_replica_response_v0),
    VECTOR(kp_UpdateMetadataRequest_desc, 0, update_metadata_request_v0,
           check_update_metadata_request_v0),
    VECTOR(kp_UpdateMetadataRequest_desc, 1, update_metadata_request_v1,
           check_update_metadata_request_v1),
    VECTOR(kp_UpdateMetadataRequest_desc, 2, update_metadata_request_v2,
           check_update_metadata_request_v2),
    VECTOR(kp_UpdateMetadataRequest_desc, 3, update_metadata_request_v3,
           check_update_metadata_request_v3),
    VECTOR(kp_UpdateMetadataRequest_desc, 4, update_metadata_request_v4,
           check_update_metadata_request_v4),
    VECTOR(kp_UpdateMetadataResponse_desc, 0, update_metadata_response_ok,
           check_update_metadata_response_ok),
    VECTOR(kp_UpdateMetadataResponse_desc, 1, update_metadata_response_stale,
           check_update_metadata_response_stale),
    VECTOR(kp_UpdateMetadataResponse_desc, 2, update_metadata_response_ok,
           check_update_metadata_response_ok),
    VECTOR(kp_UpdateMetadataResponse_desc, 3, update_metadata_response_stale,
           check_update_metadata_response_stale),
    VECTOR(kp_UpdateMetadataResponse_desc, 4, update_metadata_response_ok,
           check_update_metadata_response_ok),
    VECTOR(kp_ControlledShutdownRequest_desc, 1, controlled_shutdown_request_v1,
           check_controlled_shutdown_request_v1),
    VECTOR(kp_ControlledShutdownResponse_desc, 1, controlled_shutdown_response_v1,
           check_controlled_shutdown_response_v1),
    VECTOR(kp_FetchRequest_desc, 8, fetch_request_v8_follower, check_fetch_request_v8_follower),
    VECTOR(kp_FetchResponse_desc, 8, fetch_response_v8, check_fetch_response_v8),
    VECTOR(kp_OffsetForLeaderEpochRequest_desc, 1, offset_for_leader_epoch_request_v1,
           check_offset_for_leader_epoch_request_v1),
    VECTOR(kp_OffsetForLeaderEpochResponse_desc, 1, offset_for_leader_epoch_response_v1,
           check_offset_for_leader_epoch_response_v1),
};

/* ------------------------------------------------------------------ tests */

static void test_vectors_decode_field_by_field_and_reencode_identically(void)
{
    vectors_decode_and_reencode(vectors, N(vectors));
}

static void test_vectors_cut_short_or_extended_do_not_decode(void)
{
    vectors_cut_short_or_extended_fail(vectors, N(vectors));
}

/* At least one vector for every request and response version of the
 * inter-broker APIs, and the versions a 2.0 broker sends are the top of
 * the ranges (LeaderAndIsr v1, StopReplica v0, UpdateMetadata v4,
 * ControlledShutdown v1). */
static void test_every_interbroker_version_has_a_vector(void)
{
    static const struct {
        int16_t key;
        int16_t min;
        int16_t max;
    } want[] = {
        {KP_API_LEADER_AND_ISR, 0, 1},
        {KP_API_STOP_REPLICA, 0, 0},
        {KP_API_UPDATE_METADATA, 0, 4},
        {KP_API_CONTROLLED_SHUTDOWN, 1, 1},
    };
    for (size_t k = 0; k < N(want); k++) {
        const struct kp_api *api = kp_api_find(want[k].key);
        if (api == NULL) {
            CU_FAIL("an inter-broker API is missing from the table");
            continue;
        }
        CU_ASSERT_EQUAL(api->min_version, want[k].min);
        CU_ASSERT_EQUAL(api->max_version, want[k].max);
        CU_ASSERT(!kp_api_is_flexible(api, api->max_version));
        CU_ASSERT(vectors_cover_every_version(api, vectors, N(vectors)));
    }
}

/* The v1 layout of a live broker read as v0 is another message: the
 * versions of the description matter. */
static void test_update_metadata_versions_are_not_interchangeable(void)
{
    struct kp_arena a;
    kp_arena_init(&a, 1 << 20);
    struct kp_UpdateMetadataRequest m;
    struct kp_reader r;
    kp_rd_init(&r, update_metadata_request_v2, sizeof update_metadata_request_v2);
    CU_ASSERT_NOT_EQUAL(kp_UpdateMetadataRequest_decode(&r, 3, &a, &m), 0);
    kp_rd_init(&r, update_metadata_request_v4, sizeof update_metadata_request_v4);
    CU_ASSERT_NOT_EQUAL(kp_UpdateMetadataRequest_decode(&r, 3, &a, &m), 0);
    kp_rd_init(&r, leader_and_isr_request_v1, sizeof leader_and_isr_request_v1);
    struct kp_LeaderAndIsrRequest l;
    CU_ASSERT_NOT_EQUAL(kp_LeaderAndIsrRequest_decode(&r, 0, &a, &l), 0);
    kp_arena_free(&a);
}

/* A whole Fetch v8 frame from a follower, header included, as the broker's
 * dispatch decodes it: ReplicaId >= 0 survives decode and encode. */
static void test_follower_fetch_frame_round_trips(void)
{
    static const uint8_t header[] = {
        0x00, 0x01,             /* api_key 1 (Fetch) */
        0x00, 0x08,             /* api_version 8 */
        0x00, 0x00, 0x00, 0x63, /* correlation_id 99 */
        0x00, 0x0f, 'r',  'e',  'p', 'l', 'i', 'c', 'a',
        '-',  'f',  'e',  't',  'c', 'h', 'e', 'r', /* client_id "replica-fetcher" */
    };
    uint8_t frame[4 + sizeof header + sizeof fetch_request_v8_follower];
    size_t payload = sizeof header + sizeof fetch_request_v8_follower;
    kp_store_be32(frame, (uint32_t)payload);
    memcpy(frame + 4, header, sizeof header);
    memcpy(frame + 4 + sizeof header, fetch_request_v8_follower, sizeof fetch_request_v8_follower);

    struct kp_arena a;
    kp_arena_init(&a, 1 << 20);
    struct kp_request req;
    CU_ASSERT_EQUAL_FATAL(kp_request_decode(frame + 4, payload, &a, &req), 0);
    CU_ASSERT_EQUAL(req.header.RequestApiKey, KP_API_FETCH);
    CU_ASSERT_EQUAL(req.header.RequestApiVersion, 8);
    CU_ASSERT_EQUAL(req.header.CorrelationId, 99);
    CU_ASSERT(kp_str_eq_c(req.header.ClientId, "replica-fetcher"));
    CU_ASSERT_EQUAL(req.header_version, 1);
    check_fetch_request_v8_follower(req.body);
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    CU_ASSERT_EQUAL(kp_request_encode(&w, &req.header, req.body), 0);
    CU_ASSERT_EQUAL(w.len, sizeof frame);
    CU_ASSERT(w.len == sizeof frame && memcmp(w.buf, frame, sizeof frame) == 0);
    kp_wr_free(&w);
    kp_arena_free(&a);
}

/* ControlledShutdown v1 travels with the usual v1 header; v0 (a header
 * without client_id) is refused as a version Samsa does not speak, its
 * correlation id still read for the answer. */
static void test_controlled_shutdown_v1_frame_and_v0_refused(void)
{
    static const uint8_t v1[] = {
        0x00, 0x07,             /* api_key 7 */
        0x00, 0x01,             /* api_version 1 */
        0x00, 0x00, 0x00, 0x05, /* correlation_id 5 */
        0x00, 0x01, 'b',        /* client_id "b" */
        0x00, 0x00, 0x00, 0x03, /* broker_id 3 */
    };
    static const uint8_t v0[] = {
        0x00, 0x07,             /* api_key 7 */
        0x00, 0x00,             /* api_version 0 */
        0x00, 0x00, 0x00, 0x2a, /* correlation_id 42, no client_id */
        0x00, 0x00, 0x00, 0x03, /* broker_id 3 */
    };
    struct kp_arena a;
    kp_arena_init(&a, 1 << 20);
    struct kp_request req;
    CU_ASSERT_EQUAL_FATAL(kp_request_decode(v1, sizeof v1, &a, &req), 0);
    CU_ASSERT_EQUAL(req.header.CorrelationId, 5);
    CU_ASSERT(kp_str_eq_c(req.header.ClientId, "b"));
    CU_ASSERT_EQUAL(((const struct kp_ControlledShutdownRequest *)req.body)->BrokerId, 3);

    CU_ASSERT_EQUAL(kp_request_decode(v0, sizeof v0, &a, &req), KP_E_UNSUPPORTED);
    CU_ASSERT_EQUAL(req.header.RequestApiKey, KP_API_CONTROLLED_SHUTDOWN);
    CU_ASSERT_EQUAL(req.header.CorrelationId, 42);
    CU_ASSERT_PTR_NULL(req.body);
    kp_arena_free(&a);
}

/* A hostile count in a replica list is refused before it allocates: the
 * partition state claims 2^31-1 ISR members with 8 bytes present. */
static void test_replica_list_claims_cannot_exhaust_the_arena(void)
{
    static const uint8_t in[] = {
        0x00, 0x00, 0x00, 0x01, /* controller_id 1 */
        0x00, 0x00, 0x00, 0x07, /* controller_epoch 7 */
        0x00, 0x00, 0x00, 0x01, /* partition_states: 1 */
        0x00, 0x01, 't',        /*   topic "t" */
        0x00, 0x00, 0x00, 0x00, /*   partition 0 */
        0x00, 0x00, 0x00, 0x06, /*   controller_epoch 6 */
        0x00, 0x00, 0x00, 0x02, /*   leader 2 */
        0x00, 0x00, 0x00, 0x04, /*   leader_epoch 4 */
        0x7f, 0xff, 0xff, 0xff, /*   isr: 2147483647 */
        0x00, 0x00, 0x00, 0x02, /*     2 */
        0x00, 0x00, 0x00, 0x03, /*     3 */
    };
    struct kp_arena a;
    kp_arena_init(&a, 1 << 20);
    struct kp_LeaderAndIsrRequest m;
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    CU_ASSERT_NOT_EQUAL(kp_LeaderAndIsrRequest_decode(&r, 1, &a, &m), 0);
    CU_ASSERT(a.used < 4096);
    kp_arena_free(&a);
}

static CU_TestInfo tests[] = {
    {"vectors_decode_field_by_field_and_reencode_identically",
     test_vectors_decode_field_by_field_and_reencode_identically},
    {"vectors_cut_short_or_extended_do_not_decode",
     test_vectors_cut_short_or_extended_do_not_decode},
    {"every_interbroker_version_has_a_vector", test_every_interbroker_version_has_a_vector},
    {"update_metadata_versions_are_not_interchangeable",
     test_update_metadata_versions_are_not_interchangeable},
    {"follower_fetch_frame_round_trips", test_follower_fetch_frame_round_trips},
    {"controlled_shutdown_v1_frame_and_v0_refused",
     test_controlled_shutdown_v1_frame_and_v0_refused},
    {"replica_list_claims_cannot_exhaust_the_arena",
     test_replica_list_claims_cannot_exhaust_the_arena},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-interbroker", tests);
}
