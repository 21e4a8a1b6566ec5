/* Unit tests for the replica assignment of new topics
 * (broker/src/cluster/assignment.h). Links the cluster layer. */
#include <stdint.h>
#include <string.h>

#include "cluster/assignment.h"
#include "cunit_run.h"

/* Kafka 2.0's AdminUtilsTest.testReplicaAssignment: brokers 0-4, 10
 * partitions, replication factor 3, start index 0, shift 0. */
static void test_matches_kafkas_rack_unaware_assignment(void)
{
    const int32_t brokers[] = {0, 1, 2, 3, 4};
    static const int32_t want[10][3] = {
        {0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 0}, {4, 0, 1},
        {0, 2, 3}, {1, 3, 4}, {2, 4, 0}, {3, 0, 1}, {4, 1, 2},
    };
    int32_t got[30];
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas(brokers, 5, 10, 3, 0, 0, got), 0);
    CU_ASSERT_EQUAL(memcmp(got, want, sizeof want), 0);
}

static void test_every_partition_has_distinct_replicas_and_leaders_spread(void)
{
    const int32_t brokers[] = {3, 7, 9};
    for (uint32_t start = 0; start < 3; start++) {
        for (uint32_t shift = 0; shift < 3; shift++) {
            int32_t got[12 * 3];
            CU_ASSERT_EQUAL_FATAL(br_assign_replicas(brokers, 3, 12, 3, start, shift, got), 0);
            int leaders[10] = {0};
            for (int p = 0; p < 12; p++) {
                const int32_t *r = &got[(size_t)p * 3];
                CU_ASSERT(r[0] != r[1] && r[0] != r[2] && r[1] != r[2]);
                leaders[r[0]]++;
            }
            CU_ASSERT_EQUAL(leaders[3], 4);
            CU_ASSERT_EQUAL(leaders[7], 4);
            CU_ASSERT_EQUAL(leaders[9], 4);
        }
    }
}

static void test_refuses_more_replicas_than_brokers(void)
{
    const int32_t brokers[] = {0, 1};
    int32_t got[6];
    CU_ASSERT_EQUAL(br_assign_replicas(brokers, 2, 2, 3, 0, 0, got), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_assign_replicas(brokers, 2, 0, 1, 0, 0, got), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_assign_replicas(brokers, 0, 1, 1, 0, 0, got), KP_E_INVALID_ARG);
    /* one broker, one replica each */
    CU_ASSERT_EQUAL(br_assign_replicas(brokers, 1, 3, 1, 5, 5, got), 0);
    CU_ASSERT(got[0] == 0 && got[1] == 0 && got[2] == 0);
}

/* Partitions added to a topic (Kafka 2.0's AdminZkClient.addPartitions):
 * brokers 0-4, partition 0's first replica 2 gives start and shift 2, the
 * numbering goes on from the existing 3 partitions; worked out by hand
 * from AdminUtils.assignReplicasToBrokersRackUnaware. */
static void test_added_partitions_continue_kafkas_numbering(void)
{
    const int32_t brokers[] = {0, 1, 2, 3, 4};
    static const int32_t want[4][2] = {{0, 3}, {1, 4}, {2, 1}, {3, 2}};
    int32_t got[8];
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas_from(brokers, 5, 3, 4, 2, 2, 2, got), 0);
    CU_ASSERT_EQUAL(memcmp(got, want, sizeof want), 0);
    /* placing 0-2 and then 3-9 is placing 0-9 at once */
    int32_t whole[10 * 3];
    int32_t parts[10 * 3];
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas(brokers, 5, 10, 3, 4, 1, whole), 0);
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas_from(brokers, 5, 0, 3, 3, 4, 1, parts), 0);
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas_from(brokers, 5, 3, 7, 3, 4, 1, &parts[9]), 0);
    CU_ASSERT_EQUAL(memcmp(whole, parts, sizeof whole), 0);
    CU_ASSERT_EQUAL(br_assign_replicas_from(brokers, 5, -1, 1, 1, 0, 0, got), KP_E_INVALID_ARG);
}

/* Kafka 2.0's AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers:
 * six brokers over three racks (alternated 0, 3, 1, 5, 4, 2), 7 partitions,
 * replication factor 3, start 0, shift 0. */
static void test_matches_kafkas_rack_aware_assignment(void)
{
    const int32_t brokers[] = {0, 1, 2, 3, 4, 5};
    const char *const racks[] = {"rack1", "rack3", "rack3", "rack2", "rack2", "rack1"};
    static const int32_t want[7][3] = {
        {0, 3, 1}, {3, 1, 5}, {1, 5, 4}, {5, 4, 2}, {4, 2, 0}, {2, 0, 3}, {0, 4, 2},
    };
    int32_t got[21];
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas_racks(brokers, racks, 6, 0, 7, 3, 0, 0, got), 0);
    CU_ASSERT_EQUAL(memcmp(got, want, sizeof want), 0);
    /* one replica per rack whatever the start and shift */
    for (uint32_t start = 0; start < 6; start++) {
        CU_ASSERT_EQUAL_FATAL(
            br_assign_replicas_racks(brokers, racks, 6, 0, 7, 3, start, start + 1, got), 0);
        for (int p = 0; p < 7; p++) {
            const int32_t *r = &got[(size_t)p * 3];
            CU_ASSERT(strcmp(racks[r[0]], racks[r[1]]) != 0 &&
                      strcmp(racks[r[0]], racks[r[2]]) != 0 &&
                      strcmp(racks[r[1]], racks[r[2]]) != 0);
        }
    }
}

/* No rack anywhere: the rack-unaware placement; some only: refused. */
static void test_racks_all_or_none(void)
{
    const int32_t brokers[] = {0, 1, 2, 3, 4};
    const char *const none[] = {NULL, NULL, NULL, NULL, NULL};
    const char *const some[] = {"a", NULL, "b", "a", "b"};
    int32_t plain[30];
    int32_t got[30];
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas(brokers, 5, 10, 3, 2, 3, plain), 0);
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas_racks(brokers, none, 5, 0, 10, 3, 2, 3, got), 0);
    CU_ASSERT_EQUAL(memcmp(got, plain, sizeof plain), 0);
    CU_ASSERT_EQUAL_FATAL(br_assign_replicas_racks(brokers, NULL, 5, 0, 10, 3, 2, 3, got), 0);
    CU_ASSERT_EQUAL(memcmp(got, plain, sizeof plain), 0);
    CU_ASSERT_EQUAL(br_assign_replicas_racks(brokers, some, 5, 0, 10, 3, 2, 3, got),
                    BR_ASSIGN_RACKS_INCOMPLETE);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"matches_kafkas_rack_unaware_assignment", test_matches_kafkas_rack_unaware_assignment},
        {"every_partition_has_distinct_replicas_and_leaders_spread",
         test_every_partition_has_distinct_replicas_and_leaders_spread},
        {"refuses_more_replicas_than_brokers", test_refuses_more_replicas_than_brokers},
        {"added_partitions_continue_kafkas_numbering",
         test_added_partitions_continue_kafkas_numbering},
        {"matches_kafkas_rack_aware_assignment", test_matches_kafkas_rack_aware_assignment},
        {"racks_all_or_none", test_racks_all_or_none},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("broker-assignment", tests);
}
