/* Unit tests for client quotas (broker/src/quota/quota.h): Kafka 2.0's
 * precedence of entities (ClientQuotaManager.scala), its sampled rate
 * (Rate.java, SampledStat.java) and throttle time, and the standalone
 * quota file. */
#define _GNU_SOURCE

#include <string.h>

#include <samsa-protocol/err.h>

#include "cunit_run.h"
#include "quota/quota.h"

static const struct br_quota_config kafka_defaults = {11, 1, INT64_MAX, INT64_MAX};

static struct br_quota_name nm(const char *s)
{
    return (struct br_quota_name){s, strlen(s)};
}

static struct br_quotas *make(const struct br_quota_config *cfg)
{
    struct br_quotas *q = NULL;
    CU_ASSERT_EQUAL_FATAL(br_quotas_new(cfg, &q), 0);
    return q;
}

static void set(struct br_quotas *q, const char *user, const char *client, enum br_quota_type t,
                double v)
{
    struct br_quota_entity e = {.user = user, .client = client};
    for (size_t i = 0; i < br_quotas_count(q); i++) {
        const struct br_quota_entity *have = br_quotas_at(q, i);
        bool u = (have->user == NULL && user == NULL) ||
                 (have->user != NULL && user != NULL && strcmp(have->user, user) == 0);
        bool c = (have->client == NULL && client == NULL) ||
                 (have->client != NULL && client != NULL && strcmp(have->client, client) == 0);
        if (u && c) {
            memcpy(e.set, have->set, sizeof e.set);
            memcpy(e.value, have->value, sizeof e.value);
        }
    }
    e.set[t] = v > 0;
    e.value[t] = v;
    CU_ASSERT_EQUAL(br_quotas_set_entity(q, &e), 0);
}

static double limit_of(struct br_quotas *q, const char *user, const char *client)
{
    double v = -1;
    if (!br_quotas_limit(q, BR_QUOTA_PRODUCE, nm(user), nm(client), &v)) {
        return -1;
    }
    return v;
}

/* Each of the eight levels wins over those after it, and removing it
 * uncovers the next (ClientQuotaManager's order). */
static void test_precedence_is_kafkas_order(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    const char *D = BR_QUOTA_DEFAULT;
    struct {
        const char *user;
        const char *client;
    } levels[] = {
        {"alice", "app"}, {"alice", D}, {"alice", NULL}, {D, "app"},
        {D, D},           {D, NULL},    {NULL, "app"},   {NULL, D},
    };
    size_t n = sizeof levels / sizeof levels[0];
    for (size_t i = 0; i < n; i++) {
        set(q, levels[i].user, levels[i].client, BR_QUOTA_PRODUCE, (double)(100 * (i + 1)));
    }
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(limit_of(q, "alice", "app"), (double)(100 * (i + 1)));
        set(q, levels[i].user, levels[i].client, BR_QUOTA_PRODUCE, 0);
    }
    CU_ASSERT_EQUAL(limit_of(q, "alice", "app"), -1);
    CU_ASSERT_EQUAL(br_quotas_count(q), 0);
    br_quotas_free(q);
}

/* A quota of another user or client id does not hold this one. */
static void test_other_names_do_not_match(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, "bob", NULL, BR_QUOTA_PRODUCE, 10);
    set(q, NULL, "other", BR_QUOTA_PRODUCE, 20);
    set(q, "alice", "other", BR_QUOTA_PRODUCE, 30);
    CU_ASSERT_EQUAL(limit_of(q, "alice", "app"), -1);
    CU_ASSERT_EQUAL(limit_of(q, "ANONYMOUS", "other"), 20);
    CU_ASSERT_EQUAL(limit_of(q, "alice", "other"), 30);
    CU_ASSERT_EQUAL(limit_of(q, "bob", "other"), 10);
    /* a client id that is a prefix of another is another */
    CU_ASSERT_EQUAL(limit_of(q, "ANONYMOUS", "othe"), -1);
    br_quotas_free(q);
}

/* quota.producer.default holds a client id without a quota of its own,
 * below /config/clients/<default>; the consumer's stays apart. */
static void test_broker_default_is_the_last_level(void)
{
    struct br_quota_config cfg = kafka_defaults;
    cfg.producer_default = 5000;
    struct br_quotas *q = make(&cfg);
    CU_ASSERT_EQUAL(limit_of(q, "ANONYMOUS", "app"), 5000);
    double v = 0;
    CU_ASSERT_FALSE(br_quotas_limit(q, BR_QUOTA_FETCH, nm("ANONYMOUS"), nm("app"), &v));
    set(q, NULL, BR_QUOTA_DEFAULT, BR_QUOTA_PRODUCE, 700);
    CU_ASSERT_EQUAL(limit_of(q, "ANONYMOUS", "app"), 700);
    br_quotas_free(q);
}

/* The first record sees a window of window.num - 1 whole windows (10 s):
 * 21000 bytes at once is 2100 B/s, over 1000 by 1.1 times the quota, so
 * 11 s of throttle ((O - T) / T * W). 1000 bytes (100 B/s) earns none. */
static void test_throttle_time_is_kafkas_formula(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, NULL, "app", BR_QUOTA_PRODUCE, 1000);
    int64_t t0 = 1000000;
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_PRODUCE, nm("ANONYMOUS"), nm("app"), 1000, t0),
                    0);
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_PRODUCE, nm("ANONYMOUS"), nm("app"), 20000, t0),
                    11000);
    /* another client id is not held, and has a rate of its own */
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_PRODUCE, nm("ANONYMOUS"), nm("free"), 1e9, t0),
                    0);
    br_quotas_free(q);
}

/* Samples older than window.num windows no longer count: 11 s after a burst
 * the rate starts again from nothing. */
static void test_old_samples_expire(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, NULL, "app", BR_QUOTA_PRODUCE, 1000);
    int64_t t0 = 5000;
    CU_ASSERT_TRUE(br_quotas_record(q, BR_QUOTA_PRODUCE, nm("U"), nm("app"), 50000, t0) > 0);
    CU_ASSERT_TRUE(br_quotas_record(q, BR_QUOTA_PRODUCE, nm("U"), nm("app"), 1, t0 + 5000) > 0);
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_PRODUCE, nm("U"), nm("app"), 1000, t0 + 11000),
                    0);
    br_quotas_free(q);
}

/* A steady 900 B/s over many windows is under a quota of 1000: no
 * throttle; 1200 B/s is throttled by about 20 % of the window (10 to 11 s:
 * the sample being filled counts whole). */
static void test_steady_rate_over_windows(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, NULL, "app", BR_QUOTA_PRODUCE, 1000);
    set(q, NULL, "fast", BR_QUOTA_PRODUCE, 1000);
    int32_t at_quota = 0;
    int32_t over = 0;
    for (int64_t t = 0; t < 30000; t += 100) {
        at_quota = br_quotas_record(q, BR_QUOTA_PRODUCE, nm("U"), nm("app"), 90, 10000 + t);
        over = br_quotas_record(q, BR_QUOTA_PRODUCE, nm("U"), nm("fast"), 120, 10000 + t);
    }
    CU_ASSERT_EQUAL(at_quota, 0);
    CU_ASSERT_TRUE(over >= 1900 && over <= 2400);
    br_quotas_free(q);
}

/* A user's quota is shared by all of the user's client ids (one rate named
 * by the user alone); /config/clients/X is per client id. */
static void test_user_level_shares_one_rate(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, "alice", NULL, BR_QUOTA_PRODUCE, 1000);
    int64_t t0 = 0;
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_PRODUCE, nm("alice"), nm("a"), 6000, t0), 0);
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_PRODUCE, nm("alice"), nm("b"), 6000, t0), 2000);
    CU_ASSERT_EQUAL(br_quotas_sensor_count(q, t0), 1);
    br_quotas_free(q);
}

/* A throttled Fetch's bytes are taken back (unrecordQuotaSensor). */
static void test_unrecord_takes_bytes_back(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, NULL, "c", BR_QUOTA_FETCH, 1000);
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_FETCH, nm("U"), nm("c"), 9000, 0), 0);
    CU_ASSERT_TRUE(br_quotas_record(q, BR_QUOTA_FETCH, nm("U"), nm("c"), 9000, 0) > 0);
    br_quotas_unrecord(q, BR_QUOTA_FETCH, nm("U"), nm("c"), 9000, 0);
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_FETCH, nm("U"), nm("c"), 500, 0), 0);
    br_quotas_free(q);
}

/* request_percentage: microseconds as percent of a second, the throttle
 * capped at one window (ClientRequestQuotaManager.maxThrottleTimeMs). */
static void test_request_quota_is_capped_at_a_window(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, NULL, "c", BR_QUOTA_REQUEST, 10);
    /* 0.5 s in handlers over a window of 10 s: 5 % */
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_REQUEST, nm("U"), nm("c"), 500000, 0), 0);
    CU_ASSERT_EQUAL(br_quotas_record(q, BR_QUOTA_REQUEST, nm("U"), nm("c"), 5e6, 0), 1000);
    br_quotas_free(q);
}

/* The admin API's view: the rate, its quota and the throttle earned. */
static void test_sensor_view(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, NULL, "app", BR_QUOTA_PRODUCE, 1000);
    (void)br_quotas_record(q, BR_QUOTA_PRODUCE, nm("U"), nm("app"), 20000, 0);
    br_quotas_throttled(q, BR_QUOTA_PRODUCE, nm("U"), nm("app"), 11000, 0);
    CU_ASSERT_EQUAL_FATAL(br_quotas_sensor_count(q, 0), 1);
    struct br_quota_sensor_view v;
    br_quotas_sensor_at(q, 0, 0, &v);
    CU_ASSERT_STRING_EQUAL(v.user, "");
    CU_ASSERT_STRING_EQUAL(v.client, "app");
    CU_ASSERT_TRUE(v.has_limit);
    CU_ASSERT_EQUAL(v.limit, 1000);
    CU_ASSERT_EQUAL(v.rate, 2000);
    CU_ASSERT_EQUAL(v.throttle_total_ms, 11000);
    CU_ASSERT_EQUAL(v.throttled_until_ms, 11000);
    /* an hour without records forgets it */
    CU_ASSERT_EQUAL(br_quotas_sensor_count(q, BR_QUOTA_SENSOR_EXPIRY_MS), 0);
    br_quotas_free(q);
}

static void test_entity_paths(void)
{
    char u[64];
    char c[64];
    bool hu = false;
    bool hc = false;
    CU_ASSERT_EQUAL(br_quota_entity_path("clients/x", u, sizeof u, c, sizeof c, &hu, &hc), 0);
    CU_ASSERT_FALSE(hu);
    CU_ASSERT_TRUE(hc);
    CU_ASSERT_STRING_EQUAL(c, "x");
    CU_ASSERT_EQUAL(br_quota_entity_path("users/<default>/clients/y", u, sizeof u, c, sizeof c,
                                         &hu, &hc),
                    0);
    CU_ASSERT_TRUE(hu && hc);
    CU_ASSERT_STRING_EQUAL(u, "<default>");
    CU_ASSERT_STRING_EQUAL(c, "y");
    CU_ASSERT_EQUAL(br_quota_entity_path("users/u", u, sizeof u, c, sizeof c, &hu, &hc), 0);
    CU_ASSERT_TRUE(hu && !hc);
    const char *bad[] = {"", "clients/", "users/", "topics/t", "users/u/", "users/u/topics/x",
                         "clients/a/b", "users//clients/x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(br_quota_entity_path(bad[i], u, sizeof u, c, sizeof c, &hu, &hc),
                        KP_E_INVALID_ARG);
    }
}

static void test_values(void)
{
    double v = 0;
    CU_ASSERT_TRUE(br_quota_value_parse("1024", 4, &v));
    CU_ASSERT_EQUAL(v, 1024);
    CU_ASSERT_TRUE(br_quota_value_parse("12.5", 4, &v));
    CU_ASSERT_EQUAL(v, 12.5);
    const char *bad[] = {"", "0", "-1", "1.", ".5", "1e3", "abc", "1.2.3", "0.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_FALSE(br_quota_value_parse(bad[i], strlen(bad[i]), &v));
    }
}

static void test_file_replaces_every_entity(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, NULL, "gone", BR_QUOTA_PRODUCE, 1);
    const char *text = "# quotas\n"
                       "clients/app producer_byte_rate=1024\n"
                       "\n"
                       "  users/<default>/clients/<default> consumer_byte_rate=2048,"
                       "request_percentage=50.5  \r\n";
    char err[200] = "";
    CU_ASSERT_EQUAL(br_quota_file_apply(q, text, strlen(text), err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(br_quotas_count(q), 2);
    CU_ASSERT_EQUAL(limit_of(q, "U", "gone"), -1);
    CU_ASSERT_EQUAL(limit_of(q, "U", "app"), 1024);
    double v = 0;
    CU_ASSERT_TRUE(br_quotas_limit(q, BR_QUOTA_REQUEST, nm("U"), nm("x"), &v));
    CU_ASSERT_EQUAL(v, 50.5);
    br_quotas_free(q);
}

static void test_bad_file_changes_nothing(void)
{
    struct br_quotas *q = make(&kafka_defaults);
    set(q, NULL, "kept", BR_QUOTA_PRODUCE, 5);
    const char *bad[] = {
        "clients/a producer_byte_rate=1\nclients/b bytes=1\n",
        "clients/a\n",
        "topics/a producer_byte_rate=1\n",
        "clients/a producer_byte_rate=0\n",
        "clients/a producer_byte_rate\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[200] = "";
        CU_ASSERT_EQUAL(br_quota_file_apply(q, bad[i], strlen(bad[i]), err, sizeof err),
                        KP_E_INVALID_ARG);
        CU_ASSERT_TRUE(strncmp(err, "line ", 5) == 0);
        CU_ASSERT_EQUAL(limit_of(q, "U", "kept"), 5);
    }
    br_quotas_free(q);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"precedence_is_kafkas_order", test_precedence_is_kafkas_order},
        {"other_names_do_not_match", test_other_names_do_not_match},
        {"broker_default_is_the_last_level", test_broker_default_is_the_last_level},
        {"throttle_time_is_kafkas_formula", test_throttle_time_is_kafkas_formula},
        {"old_samples_expire", test_old_samples_expire},
        {"steady_rate_over_windows", test_steady_rate_over_windows},
        {"user_level_shares_one_rate", test_user_level_shares_one_rate},
        {"unrecord_takes_bytes_back", test_unrecord_takes_bytes_back},
        {"request_quota_is_capped_at_a_window", test_request_quota_is_capped_at_a_window},
        {"sensor_view", test_sensor_view},
        {"entity_paths", test_entity_paths},
        {"values", test_values},
        {"file_replaces_every_entity", test_file_replaces_every_entity},
        {"bad_file_changes_nothing", test_bad_file_changes_nothing},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("broker-quota", tests);
}
