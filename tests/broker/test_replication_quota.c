/* Unit tests for replication quotas (broker/src/quota/replication_quota.h):
 * Kafka 2.0's ReplicationQuotaManager (a SimpleRate against the bound, the
 * throttled-replica lists of ConfigHandler.parseThrottledPartitions and
 * LogConfig's ThrottledReplicaListValidator) and the sampled rate under it
 * (rate.h: SimpleRate.java, Rate.java). */
#define _GNU_SOURCE

#include <stdint.h>
#include <string.h>

#include <samsa-protocol/err.h>

#include "config/topic_config.h"
#include "cunit_run.h"
#include "quota/rate.h"
#include "quota/replication_quota.h"

/* SimpleRate divides by one window at least, Rate by window_num - 1. */
static void test_simple_rate_takes_one_window_at_least(void)
{
    struct br_rate simple;
    struct br_rate rate;
    CU_ASSERT_EQUAL_FATAL(br_rate_init(&simple, 11, 1000, 1), 0);
    CU_ASSERT_EQUAL_FATAL(br_rate_init(&rate, 11, 1000, 10), 0);
    br_rate_record(&simple, 1000, 0);
    br_rate_record(&rate, 1000, 0);
    int64_t w = 0;
    CU_ASSERT_DOUBLE_EQUAL(br_rate_measure(&simple, 100, &w), 1000, 1e-9);
    CU_ASSERT_EQUAL(w, 1000);
    CU_ASSERT_DOUBLE_EQUAL(br_rate_measure(&rate, 100, &w), 1000.0 * 1000 / 10100, 1e-9);
    CU_ASSERT_EQUAL(w, 10100);
    /* past one window SimpleRate divides by the time since the oldest sample */
    CU_ASSERT_DOUBLE_EQUAL(br_rate_measure(&simple, 4000, &w), 250, 1e-9);
    CU_ASSERT_EQUAL(w, 4000);
    br_rate_free(&simple);
    br_rate_free(&rate);
}

static void test_rate_rejects_bad_windows(void)
{
    struct br_rate r;
    CU_ASSERT_EQUAL(br_rate_init(&r, 0, 1000, 1), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_rate_init(&r, 11, 0, 1), KP_E_INVALID_ARG);
    br_rate_free(&r);
    struct br_repl_quota q;
    CU_ASSERT_EQUAL(br_repl_quota_init(&q, 11, 0), KP_E_INVALID_ARG);
    br_repl_quota_free(&q);
}

/* Exceeded while the rate is over the bound, never without one. */
static void test_exceeded_over_the_bound_only(void)
{
    struct br_repl_quota q;
    CU_ASSERT_EQUAL_FATAL(br_repl_quota_init(&q, 11, 1), 0);
    br_repl_quota_record(&q, 2000, 0);
    CU_ASSERT_FALSE(br_repl_quota_exceeded(&q, 2000, 0)); /* 2000/s: acceptable */
    br_repl_quota_record(&q, 1, 0);
    CU_ASSERT_TRUE(br_repl_quota_exceeded(&q, 2000, 0));
    CU_ASSERT_FALSE(br_repl_quota_exceeded(&q, INT64_MAX, 0)); /* Long.MaxValue: none */
    CU_ASSERT_TRUE(br_repl_quota_exceeded(&q, 0, 0));          /* 0: all held back */
    CU_ASSERT_EQUAL(br_repl_quota_wait_ms(&q, 0, 0), 1000);
    CU_ASSERT_TRUE(br_repl_quota_unbounded(-1));
    /* 2001 bytes over 1.5 s */
    CU_ASSERT_FALSE(br_repl_quota_exceeded(&q, 2000, 1500));
    CU_ASSERT_EQUAL(q.bytes_total, 2001);
    br_repl_quota_free(&q);
}

/* The wait is until the rate falls to the bound, within one window. */
static void test_wait_until_under_the_bound(void)
{
    struct br_repl_quota q;
    CU_ASSERT_EQUAL_FATAL(br_repl_quota_init(&q, 11, 1), 0);
    CU_ASSERT_EQUAL(br_repl_quota_wait_ms(&q, 1000, 0), 0);
    br_repl_quota_record(&q, 1500, 0);
    /* 1500 bytes at 1000/s: under it from 1500 ms */
    CU_ASSERT_EQUAL(br_repl_quota_wait_ms(&q, 1000, 200), 500);
    CU_ASSERT_FALSE(br_repl_quota_exceeded(&q, 1000, 1500));
    /* far over: a window at most, then measured again */
    br_repl_quota_record(&q, 100000, 1500);
    CU_ASSERT_EQUAL(br_repl_quota_wait_ms(&q, 1000, 1500), 1000);
    br_repl_quota_free(&q);
}

/* A steady flow held to the bound measures the bound, over many windows
 * (samples older than window_num windows are dropped). */
static void test_flow_held_to_the_bound_measures_it(void)
{
    struct br_repl_quota q;
    CU_ASSERT_EQUAL_FATAL(br_repl_quota_init(&q, 11, 1), 0);
    const int64_t bound = (int64_t)2 * 1024 * 1024;
    int64_t sent = 0;
    int64_t now = 0;
    /* a fetcher of 256 KiB chunks that asks every 10 ms, or waits */
    while (now < 60000) {
        int64_t wait = br_repl_quota_wait_ms(&q, bound, now);
        if (wait > 0) {
            now += wait;
            continue;
        }
        br_repl_quota_record(&q, (int64_t)256 * 1024, now);
        sent += (int64_t)256 * 1024;
        now += 10;
    }
    double avg = (double)sent * 1000.0 / (double)now;
    CU_ASSERT_TRUE(avg > 0.95 * (double)bound && avg < 1.1 * (double)bound);
    double rate = br_repl_quota_rate(&q, now);
    CU_ASSERT_TRUE(rate > 0.9 * (double)bound && rate < 1.1 * (double)bound);
    br_repl_quota_free(&q);
}

/* parseThrottledPartitions: "*" is every partition; pairs name this broker. */
static void test_lists_name_partition_and_broker(void)
{
    CU_ASSERT_TRUE(br_throttled_replicas_match("*", 7, 3));
    CU_ASSERT_TRUE(br_throttled_replicas_match(" * ", 0, 0));
    CU_ASSERT_FALSE(br_throttled_replicas_match("", 0, 0));
    CU_ASSERT_FALSE(br_throttled_replicas_match(NULL, 0, 0));
    const char *list = "0:101,1:102, 2:101 ,10:1";
    CU_ASSERT_TRUE(br_throttled_replicas_match(list, 0, 101));
    CU_ASSERT_FALSE(br_throttled_replicas_match(list, 0, 102));
    CU_ASSERT_TRUE(br_throttled_replicas_match(list, 1, 102));
    CU_ASSERT_TRUE(br_throttled_replicas_match(list, 2, 101));
    CU_ASSERT_TRUE(br_throttled_replicas_match(list, 10, 1));
    CU_ASSERT_FALSE(br_throttled_replicas_match(list, 1, 1));
    CU_ASSERT_FALSE(br_throttled_replicas_match(list, 3, 101));
}

/* ThrottledReplicaListValidator: "*" or pairs; a topic's value kept as set,
 * trimmed, and its list throttles by it. */
static void test_topic_lists_are_validated(void)
{
    struct br_config bc;
    memset(&bc, 0, sizeof bc);
    struct br_topic_config tc;
    br_topic_config_from_broker(&bc, &tc);
    const char *keys[] = {"leader.replication.throttled.replicas",
                          "follower.replication.throttled.replicas"};
    char msg[300];
    const char *good[] = {"", "*", "0:1", "0:1,1:2", " 0:1 , 1:2 ", "  "};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        for (size_t k = 0; k < 2; k++) {
            CU_ASSERT_EQUAL(br_topic_config_set(&tc, keys[k], good[i], msg, sizeof msg), 0);
        }
    }
    const char *bad[] = {"a",     "0",    "0:",    ":1",  "0:1,",         "0:1;1:2",
                         "*,0:1", "-1:0", "0:1:2", "0 1", "12345678901:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        msg[0] = '\0';
        CU_ASSERT_EQUAL(br_topic_config_set(&tc, keys[0], bad[i], msg, sizeof msg),
                        KP_ERR_INVALID_CONFIG);
        CU_ASSERT_TRUE(strstr(msg, "literal '*'") != NULL);
    }
    CU_ASSERT_EQUAL(br_topic_config_set(&tc, keys[0], " 0:1,3:1 ", msg, sizeof msg), 0);
    CU_ASSERT_EQUAL(br_topic_config_set(&tc, keys[1], "*", msg, sizeof msg), 0);
    struct br_topic_config_entry e;
    br_topic_config_entry(&tc, NULL, BR_TCFG_LEADER_REPLICATION_THROTTLED_REPLICAS, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "0:1,3:1");
    CU_ASSERT_TRUE(
        br_topic_config_throttled(&tc, BR_TCFG_LEADER_REPLICATION_THROTTLED_REPLICAS, 3, 1));
    CU_ASSERT_FALSE(
        br_topic_config_throttled(&tc, BR_TCFG_LEADER_REPLICATION_THROTTLED_REPLICAS, 2, 1));
    CU_ASSERT_TRUE(
        br_topic_config_throttled(&tc, BR_TCFG_FOLLOWER_REPLICATION_THROTTLED_REPLICAS, 2, 5));
    CU_ASSERT_EQUAL(br_topic_config_unset(&tc, &bc, keys[1], msg, sizeof msg), 0);
    CU_ASSERT_FALSE(
        br_topic_config_throttled(&tc, BR_TCFG_FOLLOWER_REPLICATION_THROTTLED_REPLICAS, 2, 5));
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"simple_rate_takes_one_window_at_least", test_simple_rate_takes_one_window_at_least},
        {"rate_rejects_bad_windows", test_rate_rejects_bad_windows},
        {"exceeded_over_the_bound_only", test_exceeded_over_the_bound_only},
        {"wait_until_under_the_bound", test_wait_until_under_the_bound},
        {"flow_held_to_the_bound_measures_it", test_flow_held_to_the_bound_measures_it},
        {"lists_name_partition_and_broker", test_lists_name_partition_and_broker},
        {"topic_lists_are_validated", test_topic_lists_are_validated},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("broker-replication-quota", tests);
}
