/* Unit tests for the controller's topic deletion without ZooKeeper
 * (broker/src/cluster/topic_deletion.h), the rules of Kafka 2.0's
 * TopicDeletionManager: StopReplica with delete to every broker holding a
 * replica, a broker down or failing is ineligible until it is live again,
 * the topic done once every broker deleted its replicas. Links the cluster
 * layer. */
#include <stdbool.h>
#include <stdint.h>

#include "cluster/topic_deletion.h"
#include "cunit_run.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A deletion of generation 7 over up to 16 replicas, with the arrays a
 * step writes into. */
struct fixture {
    int32_t brokers[16];
    uint8_t state[16];
    struct br_deletion_progress p;
    int32_t ask[16];
    int32_t waits[16];
    struct br_deletion_step step;
};

static void fixture_init(struct fixture *f, const struct br_deletion_replicas *parts,
                         int32_t nparts)
{
    CU_ASSERT_TRUE_FATAL(br_deletion_replica_count(parts, nparts) <= N(f->brokers));
    f->p.gen = 7;
    f->p.brokers = f->brokers;
    f->p.state = f->state;
    f->p.n = br_deletion_brokers(parts, nparts, f->brokers);
    for (size_t k = 0; k < f->p.n; k++) {
        f->state[k] = DEL_NONE;
    }
    f->step.ask = f->ask;
    f->step.waits = f->waits;
}

static void resume(struct fixture *f, const int32_t *live, size_t nlive)
{
    f->step.nask = 99;
    f->step.nwaits = 99;
    br_deletion_resume(&f->p, live, nlive, &f->step);
}

static uint8_t state_of(const struct fixture *f, int32_t broker)
{
    for (size_t k = 0; k < f->p.n; k++) {
        if (f->brokers[k] == broker) {
            return f->state[k];
        }
    }
    CU_FAIL("broker holds no replica");
    return DEL_NONE;
}

/* RF 3 on brokers 0, 1, 2: three partitions, each with all three */
static const int32_t p0[] = {0, 1, 2};
static const int32_t p1[] = {1, 2, 0};
static const int32_t p2[] = {2, 0, 1};
static const struct br_deletion_replicas rf3[] = {{p0, 3}, {p1, 3}, {p2, 3}};

static void test_every_broker_holding_a_replica_is_counted_once(void)
{
    int32_t out[9];
    CU_ASSERT_EQUAL(br_deletion_replica_count(rf3, 3), 9);
    CU_ASSERT_EQUAL_FATAL(br_deletion_brokers(rf3, 3, out), 3);
    /* in the order they first appear */
    CU_ASSERT_EQUAL(out[0], 0);
    CU_ASSERT_EQUAL(out[1], 1);
    CU_ASSERT_EQUAL(out[2], 2);
}

static void test_a_broker_down_is_ineligible_until_it_is_back_and_deletes(void)
{
    struct fixture f;
    fixture_init(&f, rf3, 3);
    /* 2 down: 0 and 1 asked, 2 ineligible, not done */
    const int32_t live01[] = {1, 0};
    resume(&f, live01, N(live01));
    CU_ASSERT_EQUAL_FATAL(f.step.nask, 2);
    CU_ASSERT_EQUAL(f.ask[0], 0);
    CU_ASSERT_EQUAL(f.ask[1], 1);
    CU_ASSERT_EQUAL_FATAL(f.step.nwaits, 1);
    CU_ASSERT_EQUAL(f.waits[0], 2);
    CU_ASSERT_FALSE(f.step.done);
    CU_ASSERT_EQUAL(state_of(&f, 0), DEL_STARTED);
    CU_ASSERT_EQUAL(state_of(&f, 2), DEL_INELIGIBLE);
    /* still down at the next step: not asked, and no second "waits" */
    resume(&f, live01, N(live01));
    CU_ASSERT_EQUAL(f.step.nask, 0);
    CU_ASSERT_EQUAL(f.step.nwaits, 0);
    CU_ASSERT_FALSE(f.step.done);
    /* 0 and 1 answer: not done, 2 has not deleted */
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 0, true), 1);
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 1, true), 1);
    CU_ASSERT_EQUAL(state_of(&f, 0), DEL_DONE);
    resume(&f, live01, N(live01));
    CU_ASSERT_EQUAL(f.step.nask, 0);
    CU_ASSERT_FALSE(f.step.done);
    /* 2 back: asked, and only it */
    const int32_t live_all[] = {0, 1, 2};
    resume(&f, live_all, N(live_all));
    CU_ASSERT_EQUAL_FATAL(f.step.nask, 1);
    CU_ASSERT_EQUAL(f.ask[0], 2);
    CU_ASSERT_EQUAL(f.step.nwaits, 0);
    CU_ASSERT_FALSE(f.step.done);
    /* 2 fails: ineligible, asked again at the next step it is live */
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 2, false), 1);
    CU_ASSERT_EQUAL(state_of(&f, 2), DEL_INELIGIBLE);
    resume(&f, live_all, N(live_all));
    CU_ASSERT_EQUAL_FATAL(f.step.nask, 1);
    CU_ASSERT_EQUAL(f.ask[0], 2);
    /* 2 lost while asked: ineligible, not asked while it is down */
    br_deletion_lost_broker(&f.p, 2);
    CU_ASSERT_EQUAL(state_of(&f, 2), DEL_INELIGIBLE);
    resume(&f, live01, N(live01));
    CU_ASSERT_EQUAL(f.step.nask, 0);
    CU_ASSERT_FALSE(f.step.done);
    /* 2 back and ok: done */
    resume(&f, live_all, N(live_all));
    CU_ASSERT_EQUAL_FATAL(f.step.nask, 1);
    CU_ASSERT_EQUAL(f.ask[0], 2);
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 2, true), 1);
    resume(&f, live_all, N(live_all));
    CU_ASSERT_EQUAL(f.step.nask, 0);
    CU_ASSERT_EQUAL(f.step.nwaits, 0);
    CU_ASSERT_TRUE(f.step.done);
}

static void test_an_answer_of_another_generation_or_to_no_request_is_ignored(void)
{
    struct fixture f;
    fixture_init(&f, rf3, 3);
    const int32_t live_all[] = {0, 1, 2};
    resume(&f, live_all, N(live_all));
    CU_ASSERT_EQUAL(f.step.nask, 3);
    /* an earlier deletion of the same name (generation 6) answers */
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 6, 0, true), 0);
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 6, 1, false), 0);
    CU_ASSERT_EQUAL(state_of(&f, 0), DEL_STARTED);
    CU_ASSERT_EQUAL(state_of(&f, 1), DEL_STARTED);
    /* a broker holding no replica answers */
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 5, true), 0);
    /* a second answer to one request changes nothing */
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 0, true), 1);
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 0, false), 0);
    CU_ASSERT_EQUAL(state_of(&f, 0), DEL_DONE);
    /* a done broker lost: still done, never asked again */
    br_deletion_lost_broker(&f.p, 0);
    CU_ASSERT_EQUAL(state_of(&f, 0), DEL_DONE);
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 1, true), 1);
    CU_ASSERT_EQUAL(br_deletion_answer(&f.p, 7, 2, true), 1);
    resume(&f, live_all, N(live_all));
    CU_ASSERT_EQUAL(f.step.nask, 0);
    CU_ASSERT_TRUE(f.step.done);
}

static void test_a_topic_without_replicas_is_done_at_once(void)
{
    struct fixture f;
    fixture_init(&f, rf3, 0);
    CU_ASSERT_EQUAL(f.p.n, 0);
    resume(&f, NULL, 0);
    CU_ASSERT_EQUAL(f.step.nask, 0);
    CU_ASSERT_EQUAL(f.step.nwaits, 0);
    CU_ASSERT_TRUE(f.step.done);
}

static void test_each_brokers_stop_replica_names_exactly_its_partitions(void)
{
    /* 4 partitions on brokers 3, 4, 5, RF 1 and 2 mixed */
    const int32_t a0[] = {3};
    const int32_t a1[] = {4, 5};
    const int32_t a2[] = {5, 3};
    const int32_t a3[] = {4};
    const struct br_deletion_replicas parts[] = {{a0, 1}, {a1, 2}, {a2, 2}, {a3, 1}};
    int32_t held[4];
    CU_ASSERT_EQUAL_FATAL(br_deletion_partitions_of(parts, 4, 3, held), 2);
    CU_ASSERT_EQUAL(held[0], 0);
    CU_ASSERT_EQUAL(held[1], 2);
    CU_ASSERT_EQUAL_FATAL(br_deletion_partitions_of(parts, 4, 4, held), 2);
    CU_ASSERT_EQUAL(held[0], 1);
    CU_ASSERT_EQUAL(held[1], 3);
    CU_ASSERT_EQUAL_FATAL(br_deletion_partitions_of(parts, 4, 5, held), 2);
    CU_ASSERT_EQUAL(held[0], 1);
    CU_ASSERT_EQUAL(held[1], 2);
    /* a broker holding none: nothing */
    CU_ASSERT_EQUAL(br_deletion_partitions_of(parts, 4, 0, held), 0);
    /* the deletion asks exactly the three */
    struct fixture f;
    fixture_init(&f, parts, 4);
    CU_ASSERT_EQUAL_FATAL(f.p.n, 3);
    const int32_t live[] = {0, 3, 4, 5, 6};
    resume(&f, live, N(live));
    CU_ASSERT_EQUAL_FATAL(f.step.nask, 3);
    CU_ASSERT_EQUAL(f.ask[0], 3);
    CU_ASSERT_EQUAL(f.ask[1], 4);
    CU_ASSERT_EQUAL(f.ask[2], 5);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"every_broker_holding_a_replica_is_counted_once",
         test_every_broker_holding_a_replica_is_counted_once},
        {"a_broker_down_is_ineligible_until_it_is_back_and_deletes",
         test_a_broker_down_is_ineligible_until_it_is_back_and_deletes},
        {"an_answer_of_another_generation_or_to_no_request_is_ignored",
         test_an_answer_of_another_generation_or_to_no_request_is_ignored},
        {"a_topic_without_replicas_is_done_at_once", test_a_topic_without_replicas_is_done_at_once},
        {"each_brokers_stop_replica_names_exactly_its_partitions",
         test_each_brokers_stop_replica_names_exactly_its_partitions},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("broker-topic_deletion", tests);
}
