/* Unit tests for the controller's leader elections without ZooKeeper
 * (broker/src/cluster/leader_election.h), the rules of Kafka 2.0's
 * PartitionLeaderElectionAlgorithms. Links the cluster layer. */
#include <stdbool.h>
#include <stdint.h>

#include "cluster/leader_election.h"
#include "cunit_run.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const int32_t *const none = NULL;

static void test_offline_picks_the_first_live_assigned_replica_in_the_isr(void)
{
    /* assignment order decides, not ISR order: 2 before 3 */
    const int32_t asg[] = {1, 2, 3};
    const int32_t isr[] = {3, 2};
    const int32_t live[] = {3, 2};
    struct br_election e = {asg, N(asg), isr, N(isr), live, N(live), none, 0};
    bool unclean = true;
    CU_ASSERT_EQUAL(br_elect_offline(&e, false, &unclean), 2);
    CU_ASSERT_FALSE(unclean);
    /* a live replica outside the ISR is passed over */
    const int32_t isr3[] = {3};
    const int32_t live_all[] = {1, 2, 3};
    struct br_election e2 = {asg, N(asg), isr3, N(isr3), live_all, N(live_all), none, 0};
    CU_ASSERT_EQUAL(br_elect_offline(&e2, false, &unclean), 3);
    /* an ISR member that is not live is passed over */
    const int32_t isr12[] = {1, 2};
    const int32_t live23[] = {2, 3};
    struct br_election e3 = {asg, N(asg), isr12, N(isr12), live23, N(live23), none, 0};
    CU_ASSERT_EQUAL(br_elect_offline(&e3, false, &unclean), 2);
}

static void test_offline_without_a_live_isr_member_stays_offline_unless_unclean(void)
{
    const int32_t asg[] = {1, 2, 3};
    const int32_t isr[] = {1};
    const int32_t live[] = {3, 2};
    struct br_election e = {asg, N(asg), isr, N(isr), live, N(live), none, 0};
    bool unclean = true;
    CU_ASSERT_EQUAL(br_elect_offline(&e, false, &unclean), BR_NO_LEADER);
    CU_ASSERT_FALSE(unclean);
    /* unclean.leader.election.enable: the first live assigned replica */
    CU_ASSERT_EQUAL(br_elect_offline(&e, true, &unclean), 2);
    CU_ASSERT_TRUE(unclean);
    /* nothing live at all: offline even when unclean */
    struct br_election dead = {asg, N(asg), isr, N(isr), none, 0, none, 0};
    CU_ASSERT_EQUAL(br_elect_offline(&dead, true, &unclean), BR_NO_LEADER);
    CU_ASSERT_FALSE(unclean);
}

static void test_offline_takes_a_broker_shutting_down_only_when_no_other_can_lead(void)
{
    const int32_t asg[] = {1, 2, 3};
    const int32_t isr[] = {1, 2, 3};
    const int32_t live[] = {1, 2, 3};
    const int32_t shut1[] = {1};
    bool unclean = false;
    struct br_election e = {asg, N(asg), isr, N(isr), live, N(live), shut1, N(shut1)};
    CU_ASSERT_EQUAL(br_elect_offline(&e, false, &unclean), 2);
    const int32_t shut_all[] = {3, 2, 1};
    struct br_election e2 = {asg, N(asg), isr, N(isr), live, N(live), shut_all, N(shut_all)};
    CU_ASSERT_EQUAL(br_elect_offline(&e2, false, &unclean), 1);
    CU_ASSERT_FALSE(unclean);
}

static void test_controlled_shutdown_picks_the_first_live_isr_member_not_shutting_down(void)
{
    const int32_t asg[] = {4, 5, 6};
    const int32_t isr[] = {6, 5, 4};
    const int32_t live[] = {4, 5, 6};
    const int32_t shut4[] = {4};
    struct br_election e = {asg, N(asg), isr, N(isr), live, N(live), shut4, N(shut4)};
    CU_ASSERT_EQUAL(br_elect_controlled_shutdown(&e), 5);
    /* 5 is not live: 6 */
    const int32_t live46[] = {4, 6};
    struct br_election e2 = {asg, N(asg), isr, N(isr), live46, N(live46), shut4, N(shut4)};
    CU_ASSERT_EQUAL(br_elect_controlled_shutdown(&e2), 6);
    /* the only other in-sync replica shuts down too: none (the leader stays) */
    const int32_t isr45[] = {4, 5};
    const int32_t shut45[] = {5, 4};
    struct br_election e3 = {asg, N(asg), isr45, N(isr45), live, N(live), shut45, N(shut45)};
    CU_ASSERT_EQUAL(br_elect_controlled_shutdown(&e3), BR_NO_LEADER);
    /* only the broker shutting down is in sync: none */
    const int32_t isr4[] = {4};
    struct br_election e4 = {asg, N(asg), isr4, N(isr4), live, N(live), shut4, N(shut4)};
    CU_ASSERT_EQUAL(br_elect_controlled_shutdown(&e4), BR_NO_LEADER);
}

static void test_preferred_is_the_first_assigned_replica_if_live_and_in_sync(void)
{
    const int32_t asg[] = {7, 8, 9};
    const int32_t isr[] = {9, 8, 7};
    const int32_t live[] = {7, 8, 9};
    struct br_election e = {asg, N(asg), isr, N(isr), live, N(live), none, 0};
    CU_ASSERT_EQUAL(br_elect_preferred(&e), 7);
    /* out of sync: no election, even though 8 could lead */
    const int32_t isr89[] = {8, 9};
    struct br_election e2 = {asg, N(asg), isr89, N(isr89), live, N(live), none, 0};
    CU_ASSERT_EQUAL(br_elect_preferred(&e2), BR_NO_LEADER);
    /* not live */
    const int32_t live89[] = {8, 9};
    struct br_election e3 = {asg, N(asg), isr, N(isr), live89, N(live89), none, 0};
    CU_ASSERT_EQUAL(br_elect_preferred(&e3), BR_NO_LEADER);
    /* no assignment */
    struct br_election e4 = {none, 0, isr, N(isr), live, N(live), none, 0};
    CU_ASSERT_EQUAL(br_elect_preferred(&e4), BR_NO_LEADER);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"offline_picks_the_first_live_assigned_replica_in_the_isr",
         test_offline_picks_the_first_live_assigned_replica_in_the_isr},
        {"offline_without_a_live_isr_member_stays_offline_unless_unclean",
         test_offline_without_a_live_isr_member_stays_offline_unless_unclean},
        {"offline_takes_a_broker_shutting_down_only_when_no_other_can_lead",
         test_offline_takes_a_broker_shutting_down_only_when_no_other_can_lead},
        {"controlled_shutdown_picks_the_first_live_isr_member_not_shutting_down",
         test_controlled_shutdown_picks_the_first_live_isr_member_not_shutting_down},
        {"preferred_is_the_first_assigned_replica_if_live_and_in_sync",
         test_preferred_is_the_first_assigned_replica_if_live_and_in_sync},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("broker-leader_election", tests);
}
