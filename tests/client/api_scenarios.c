/*
 * Scenarios of libsamsa's public API against a running broker, each one
 * checking what it gets:
 *
 *   api_scenarios BOOTSTRAP SCENARIO
 *
 *   pause_resume_lag  a paused partition is not read (the others are), its
 *                     lag grows; after the resume it is read on from where
 *                     it stopped: nothing skipped, nothing twice
 *   admin_configs     describe, alter (set, back to default) topic configs;
 *                     describe a broker's; an unknown topic's error
 *   admin_partitions  CreatePartitions: more partitions, then fewer refused (37)
 *                     plainly when the broker lacks API 37
 *   admin_records     DeleteRecords and ListOffsets (beginning, end, time)
 *   admin_groups      list, describe (Empty, then Stable with a member and
 *                     its assignment), group offsets, alter them, delete
 *                     (refused with members, then done)
 *   delivery_offsets  every record gets one delivery report with its own
 *                     partition, offset, value and opaque (batches of one
 *                     and of many, cut whole and cut short), the offsets
 *                     are where a consumer finds the values; a batch the
 *                     broker refuses reports each of its records failed
 *                     and samsa_producer_close counts them
 *   close_during_produce  two threads produce and a third polls with no
 *                     timeout while the producer is closed: each record
 *                     accepted gets one report (delivered or PURGED), the
 *                     threads get SAMSA_ERR_DESTROYED and stop, the poll
 *                     returns; then every call on the closed producer is
 *                     refused, as on a closed consumer and admin handle
 *   close_timeout     a group member reads, prints "ready", waits for a line
 *                     on stdin (the test kills the broker meanwhile), then
 *                     samsa_consumer_close(c, 2000) must return
 *                     SAMSA_ERR_TIMED_OUT within 2 s and a margin
 *   all_brokers_down  a group member reads, prints "ready", waits for a line
 *                     (the test kills the broker meanwhile), then polls: the
 *                     error callback must hear ALL_BROKERS_DOWN once within
 *                     12 s (the outage of issue 33)
 *   fair_fetch        three partitions on one broker, 100 one-record batches
 *                     each, read with fetch.max.bytes=1 (one batch per
 *                     response): the first 60 records come from every
 *                     partition, not all from the first
 *
 * Prints what it checks; exits 0 when every check held, 1 at the first that
 * did not (with the line), 2 on a usage error.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <samsa/samsa.h>

static const char *brokers;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fail(__LINE__, #cond, __VA_ARGS__);                                                    \
        }                                                                                          \
    } while (0)

__attribute__((noreturn, format(printf, 3, 4))) static void fail(int line, const char *cond,
                                                                 const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAILED line %d: %s: ", line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static samsa_conf *conf_with(const char *k1, const char *v1, const char *k2, const char *v2)
{
    char err[512];
    samsa_conf *conf = samsa_conf_new();
    CHECK(conf != NULL, "conf");
    CHECK(samsa_conf_set(conf, "bootstrap.servers", brokers, err, sizeof(err)) == SAMSA_OK, "%s",
          err);
    if (k1 != NULL) {
        CHECK(samsa_conf_set(conf, k1, v1, err, sizeof(err)) == SAMSA_OK, "%s", err);
    }
    if (k2 != NULL) {
        CHECK(samsa_conf_set(conf, k2, v2, err, sizeof(err)) == SAMSA_OK, "%s", err);
    }
    return conf;
}

static samsa_admin *admin(void)
{
    char err[512];
    samsa_conf *conf = conf_with(NULL, NULL, NULL, NULL);
    samsa_admin *a = samsa_admin_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(a != NULL, "%s", err);
    return a;
}

static void create_topic(samsa_admin *a, const char *name, int32_t partitions)
{
    char err[512];
    struct samsa_new_topic t = {name, partitions, 1, NULL, 0};
    int e = samsa_admin_create_topic(a, &t, 15000, err, sizeof(err));
    CHECK(e == SAMSA_OK, "create %s: %s", name, err);
}

/* value i to partition i % partitions, "v<i>"; waits for every report. */
static void produce(const char *topic, int n, int32_t partitions)
{
    char err[512];
    samsa_conf *conf = conf_with("linger.ms", "1", NULL, NULL);
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(p != NULL, "%s", err);
    for (int i = 0; i < n; i++) {
        char v[32];
        int len = snprintf(v, sizeof(v), "v%d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = topic, .partition = i % partitions,
                                 .value = v, .value_len = (size_t)len};
        CHECK(samsa_produce(p, &r) == SAMSA_OK, "produce %d", i);
    }
    CHECK(samsa_producer_close(p, 15000) == 0, "records not delivered");
    samsa_producer_destroy(p);
}

static int32_t topic_partitions(samsa_admin *a, const char *topic)
{
    samsa_metadata *md = NULL;
    const char *names[1] = {topic};
    CHECK(samsa_admin_metadata(a, names, 1, 10000, &md) == SAMSA_OK, "metadata");
    int32_t n = md->topic_count == 1 && md->topics[0].err == 0
                    ? (int32_t)md->topics[0].partition_count
                    : -1;
    samsa_metadata_free(md);
    return n;
}

/* ----------------------------------------------------- pause_resume_lag */

static void pause_resume_lag(void)
{
    samsa_admin *a = admin();
    create_topic(a, "pr", 2);
    samsa_admin_destroy(a);
    produce("pr", 200, 2); /* 100 on each partition */
    samsa_conf *conf = conf_with("fetch.wait.max.ms", "50", "max.partition.fetch.bytes", "1024");
    char err[512];
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(c != NULL, "%s", err);
    struct samsa_partition parts[2] = {{"pr", 0, SAMSA_OFFSET_BEGINNING},
                                       {"pr", 1, SAMSA_OFFSET_BEGINNING}};
    CHECK(samsa_consumer_assign(c, parts, 2) == SAMSA_OK, "assign");
    int64_t next[2] = {0, 0};
    int got = 0;
    int64_t deadline = now_ms() + 20000;
    /* Read until p0 is at 10. */
    while (next[0] < 10) {
        CHECK(now_ms() < deadline, "no 10 records of p0");
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m == NULL) {
            continue;
        }
        CHECK(m->offset == next[m->partition], "partition %d: offset %lld, expected %lld",
              m->partition, (long long)m->offset, (long long)next[m->partition]);
        next[m->partition]++;
        got++;
        samsa_message_free(m);
    }
    CHECK(samsa_consumer_pause(c, parts, 1) == SAMSA_OK, "pause");
    struct samsa_partition stranger = {"pr", 7, 0};
    CHECK(samsa_consumer_pause(c, &stranger, 1) == SAMSA_ERR_STATE, "pause of an unassigned one");
    int64_t paused_at = next[0];
    /* Only p1 now, to its end. */
    while (next[1] < 100) {
        CHECK(now_ms() < deadline, "p1 stopped at %lld", (long long)next[1]);
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m == NULL) {
            continue;
        }
        CHECK(m->partition == 1, "a record of paused p0 at %lld", (long long)m->offset);
        CHECK(m->offset == next[1], "p1 offset %lld, expected %lld", (long long)m->offset,
              (long long)next[1]);
        next[1]++;
        samsa_message_free(m);
    }
    struct samsa_lag lag;
    CHECK(samsa_consumer_lag(c, "pr", 0, &lag) == SAMSA_OK, "lag p0");
    printf("p0 paused: position %lld, high watermark %lld, lag %lld\n", (long long)lag.position,
           (long long)lag.high_watermark, (long long)lag.lag);
    CHECK(lag.paused && lag.position == paused_at && lag.high_watermark == 100 &&
              lag.lag == 100 - paused_at,
          "p0 lag: position %lld hwm %lld lag %lld", (long long)lag.position,
          (long long)lag.high_watermark, (long long)lag.lag);
    CHECK(samsa_consumer_lag(c, "pr", 1, &lag) == SAMSA_OK && lag.lag == 0 && !lag.paused,
          "p1 lag %lld", (long long)lag.lag);
    CHECK(samsa_consumer_lag(c, "pr", 9, &lag) == SAMSA_ERR_STATE, "lag of an unassigned one");
    struct samsa_partition *as = NULL;
    size_t an = 0;
    CHECK(samsa_consumer_assignment(c, &as, &an) == SAMSA_OK && an == 2, "assignment");
    for (size_t i = 0; i < an; i++) {
        CHECK(as[i].offset == next[as[i].partition], "assignment position of %d: %lld",
              as[i].partition, (long long)as[i].offset);
    }
    samsa_partitions_free(as, an);
    CHECK(samsa_consumer_resume(c, parts, 1) == SAMSA_OK, "resume");
    while (next[0] < 100) {
        CHECK(now_ms() < deadline, "p0 stopped at %lld after the resume", (long long)next[0]);
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m == NULL) {
            continue;
        }
        CHECK(m->partition == 0 && m->offset == next[0], "after resume: %d/%lld, expected 0/%lld",
              m->partition, (long long)m->offset, (long long)next[0]);
        next[0]++;
        samsa_message_free(m);
    }
    CHECK(samsa_consumer_lag(c, "pr", 0, &lag) == SAMSA_OK && lag.lag == 0 && lag.position == 100,
          "p0 lag at the end %lld", (long long)lag.lag);
    samsa_consumer_destroy(c);
    printf("pause_resume_lag: ok (%d records before the pause)\n", got);
}

/* -------------------------------------------------------- admin_configs */

static const struct samsa_config_entry *find_cfg(const samsa_configs *cf, const char *name)
{
    for (size_t i = 0; i < cf->count; i++) {
        if (strcmp(cf->entries[i].name, name) == 0) {
            return &cf->entries[i];
        }
    }
    return NULL;
}

static void admin_configs(void)
{
    char err[512];
    samsa_admin *a = admin();
    create_topic(a, "cfg", 1);
    samsa_configs *cf = NULL;
    CHECK(samsa_admin_describe_configs(a, SAMSA_RESOURCE_TOPIC, "cfg", 10000, &cf, err,
                                       sizeof(err)) == SAMSA_OK,
          "%s", err);
    const struct samsa_config_entry *e = find_cfg(cf, "retention.ms");
    CHECK(e != NULL && e->is_default && e->value != NULL, "retention.ms default");
    printf("retention.ms=%s (source %d)\n", e->value, e->source);
    samsa_configs_free(cf);
    struct samsa_config_op set[2] = {{"retention.ms", "123456"}, {"cleanup.policy", "compact"}};
    CHECK(samsa_admin_alter_configs(a, SAMSA_RESOURCE_TOPIC, "cfg", set, 2, 10000, err,
                                    sizeof(err)) == SAMSA_OK,
          "alter: %s", err);
    CHECK(samsa_admin_describe_configs(a, SAMSA_RESOURCE_TOPIC, "cfg", 10000, &cf, err,
                                       sizeof(err)) == SAMSA_OK,
          "%s", err);
    e = find_cfg(cf, "retention.ms");
    CHECK(e != NULL && !e->is_default && strcmp(e->value, "123456") == 0 && e->source == 1,
          "retention.ms after the change: %s", e != NULL ? e->value : "missing");
    e = find_cfg(cf, "cleanup.policy");
    CHECK(e != NULL && strcmp(e->value, "compact") == 0, "cleanup.policy");
    samsa_configs_free(cf);
    /* One back to its default; the other stays. */
    struct samsa_config_op reset[1] = {{"retention.ms", NULL}};
    CHECK(samsa_admin_alter_configs(a, SAMSA_RESOURCE_TOPIC, "cfg", reset, 1, 10000, err,
                                    sizeof(err)) == SAMSA_OK,
          "reset: %s", err);
    CHECK(samsa_admin_describe_configs(a, SAMSA_RESOURCE_TOPIC, "cfg", 10000, &cf, err,
                                       sizeof(err)) == SAMSA_OK,
          "%s", err);
    CHECK(find_cfg(cf, "retention.ms")->is_default, "retention.ms not back to its default");
    CHECK(strcmp(find_cfg(cf, "cleanup.policy")->value, "compact") == 0,
          "cleanup.policy lost by the reset of another key");
    samsa_configs_free(cf);
    struct samsa_config_op bad[1] = {{"retention.ms", "soon"}};
    int rc = samsa_admin_alter_configs(a, SAMSA_RESOURCE_TOPIC, "cfg", bad, 1, 10000, err,
                                       sizeof(err));
    printf("bad value: %s / %s\n", samsa_err_name(rc), err);
    CHECK(rc == 40 && strstr(err, "INVALID_CONFIG") != NULL, "a bad value: %d %s", rc, err);
    rc = samsa_admin_describe_configs(a, SAMSA_RESOURCE_TOPIC, "no-such-topic", 10000, &cf, err,
                                      sizeof(err));
    CHECK(rc == SAMSA_ERR_UNKNOWN_TOPIC && cf == NULL, "unknown topic: %d %s", rc, err);
    CHECK(samsa_admin_describe_configs(a, SAMSA_RESOURCE_BROKER, "0", 10000, &cf, err,
                                       sizeof(err)) == SAMSA_OK,
          "broker 0: %s", err);
    CHECK(cf->count > 0 && find_cfg(cf, "log.retention.hours") != NULL, "broker configs: %zu",
          cf->count);
    samsa_configs_free(cf);
    CHECK(samsa_admin_describe_configs(a, 7, "x", 1000, &cf, err, sizeof(err)) ==
              SAMSA_ERR_INVALID_ARG,
          "a bad resource type");
    samsa_admin_destroy(a);
    printf("admin_configs: ok\n");
}

/* ----------------------------------------------------- admin_partitions */

static void admin_partitions(void)
{
    char err[512];
    samsa_admin *a = admin();
    create_topic(a, "grow", 2);
    int rc = samsa_admin_create_partitions(a, "grow", 5, 10000, err, sizeof(err));
    printf("create partitions: %s: %s\n", samsa_err_name(rc), err);
    CHECK(rc == SAMSA_OK, "create partitions: %s", err);
    CHECK(topic_partitions(a, "grow") == 5, "partitions after: %d", topic_partitions(a, "grow"));
    rc = samsa_admin_create_partitions(a, "grow", 3, 10000, err, sizeof(err));
    CHECK(rc == 37, "fewer partitions: %d %s", rc, err);
    CHECK(samsa_admin_create_partitions(a, "grow", 0, 10000, err, sizeof(err)) ==
              SAMSA_ERR_INVALID_ARG,
          "zero partitions");
    samsa_admin_destroy(a);
    printf("admin_partitions: ok\n");
}

/* -------------------------------------------------------- admin_records */

static void admin_records(void)
{
    char err[512];
    samsa_admin *a = admin();
    create_topic(a, "del", 2);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t before = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    produce("del", 40, 2); /* 20 on each */
    int64_t off = -1;
    CHECK(samsa_admin_list_offset(a, "del", 0, SAMSA_OFFSET_END, &off, 10000) == SAMSA_OK &&
              off == 20,
          "end of p0: %lld", (long long)off);
    CHECK(samsa_admin_list_offset(a, "del", 0, before, &off, 10000) == SAMSA_OK && off == 0,
          "offset of a time before everything: %lld", (long long)off);
    CHECK(samsa_admin_list_offset(a, "del", 0, before + 3600000, &off, 10000) == SAMSA_OK &&
              off == -1,
          "offset of a time after everything: %lld", (long long)off);
    struct samsa_partition parts[3] = {
        {"del", 0, 5}, {"del", 1, SAMSA_OFFSET_END}, {"del", 9, 1}};
    int rc = samsa_admin_delete_records(a, parts, 3, 10000, err, sizeof(err));
    printf("delete records: %s (%s): low %lld %lld %lld\n", samsa_err_name(rc), err,
           (long long)parts[0].offset, (long long)parts[1].offset, (long long)parts[2].offset);
    CHECK(rc != SAMSA_OK && strstr(err, "del [9]") != NULL, "the missing partition: %d %s", rc,
          err);
    CHECK(parts[0].offset == 5 && parts[1].offset == 20 && parts[2].offset == -1,
          "low watermarks");
    CHECK(samsa_admin_list_offset(a, "del", 0, SAMSA_OFFSET_BEGINNING, &off, 10000) == SAMSA_OK &&
              off == 5,
          "beginning of p0: %lld", (long long)off);
    int64_t low = -1, high = -1;
    CHECK(samsa_admin_watermarks(a, "del", 1, &low, &high, 10000) == SAMSA_OK && low == 20 &&
              high == 20,
          "p1: %lld..%lld", (long long)low, (long long)high);
    samsa_admin_destroy(a);
    printf("admin_records: ok\n");
}

/* --------------------------------------------------------- admin_groups */

static bool listed(samsa_admin *a, const char *group)
{
    char err[512];
    samsa_group_list *l = NULL;
    CHECK(samsa_admin_list_groups(a, 10000, &l, err, sizeof(err)) == SAMSA_OK, "list: %s", err);
    CHECK(l->error_count == 0, "list: a broker failed: %s", l->errors[0].reason);
    bool found = false;
    for (size_t i = 0; i < l->count; i++) {
        found = found || strcmp(l->groups[i].group_id, group) == 0;
    }
    samsa_group_list_free(l);
    return found;
}

static void admin_groups(void)
{
    char err[512];
    samsa_admin *a = admin();
    create_topic(a, "gt", 3);
    produce("gt", 30, 3);
    struct samsa_partition commit[2] = {{"gt", 0, 4}, {"gt", 2, 7}};
    CHECK(samsa_admin_alter_group_offsets(a, "adm-g", commit, 2, 10000, err, sizeof(err)) ==
              SAMSA_OK,
          "alter offsets: %s", err);
    struct samsa_partition *offs = NULL;
    size_t n = 0;
    CHECK(samsa_admin_list_group_offsets(a, "adm-g", 10000, &offs, &n, err, sizeof(err)) ==
              SAMSA_OK,
          "%s", err);
    CHECK(n == 2, "%zu offsets", n);
    for (size_t i = 0; i < n; i++) {
        CHECK(strcmp(offs[i].topic, "gt") == 0 &&
                  offs[i].offset == (offs[i].partition == 0 ? 4 : 7) &&
                  (offs[i].partition == 0 || offs[i].partition == 2),
              "offset %zu: %s/%d %lld", i, offs[i].topic, offs[i].partition,
              (long long)offs[i].offset);
    }
    samsa_partitions_free(offs, n);
    CHECK(listed(a, "adm-g"), "adm-g not listed");
    samsa_group_description *d = NULL;
    CHECK(samsa_admin_describe_group(a, "adm-g", 10000, &d, err, sizeof(err)) == SAMSA_OK, "%s",
          err);
    CHECK(strcmp(d->state, "Empty") == 0 && d->member_count == 0 && d->coordinator_id == 0,
          "described %s with %zu members", d->state, d->member_count);
    samsa_group_description_free(d);
    /* A member joins: it resumes at the committed offsets. */
    samsa_conf *conf = conf_with("group.id", "adm-g", "client.id", "adm-member");
    char e2[512];
    CHECK(samsa_conf_set(conf, "auto.offset.reset", "earliest", e2, sizeof(e2)) == SAMSA_OK, "%s",
          e2);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(c != NULL, "%s", err);
    const char *topics[1] = {"gt"};
    CHECK(samsa_consumer_subscribe(c, topics, 1) == SAMSA_OK, "subscribe");
    int64_t first[3] = {-1, -1, -1};
    int got = 0;
    int64_t deadline = now_ms() + 20000;
    while (got < 30 - 4 - 7) {
        CHECK(now_ms() < deadline, "%d records", got);
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m == NULL) {
            continue;
        }
        if (first[m->partition] < 0) {
            first[m->partition] = m->offset;
        }
        got++;
        samsa_message_free(m);
    }
    CHECK(first[0] == 4 && first[1] == 0 && first[2] == 7, "first offsets %lld %lld %lld",
          (long long)first[0], (long long)first[1], (long long)first[2]);
    CHECK(samsa_admin_describe_group(a, "adm-g", 10000, &d, err, sizeof(err)) == SAMSA_OK, "%s",
          err);
    CHECK(strcmp(d->state, "Stable") == 0 && d->member_count == 1 &&
              strcmp(d->protocol, "range") == 0 && strcmp(d->protocol_type, "consumer") == 0,
          "described %s, %zu members, %s", d->state, d->member_count, d->protocol);
    const struct samsa_group_member *m = &d->members[0];
    CHECK(strcmp(m->client_id, "adm-member") == 0 && m->assignment_count == 3 &&
              m->client_host[0] != '\0',
          "member %s %s %zu", m->client_id, m->client_host, m->assignment_count);
    samsa_group_description_free(d);
    int rc = samsa_admin_alter_group_offsets(a, "adm-g", commit, 1, 5000, err, sizeof(err));
    CHECK(rc == 25 || rc == 27, "alter offsets of a group with a member: %d %s", rc, err);
    printf("alter offsets with a member: %s\n", err);
    rc = samsa_admin_delete_group(a, "adm-g", 10000, err, sizeof(err));
    CHECK(rc == 68, "delete with a member: %d %s", rc, err);
    samsa_consumer_destroy(c);
    rc = samsa_admin_delete_group(a, "adm-g", 10000, err, sizeof(err));
    CHECK(rc == SAMSA_OK, "delete: %d %s", rc, err);
    CHECK(!listed(a, "adm-g"), "adm-g still listed");
    rc = samsa_admin_delete_group(a, "adm-g", 10000, err, sizeof(err));
    CHECK(rc == 69, "delete an unknown group: %d %s", rc, err);
    CHECK(samsa_admin_list_group_offsets(a, "adm-g", 10000, &offs, &n, err, sizeof(err)) ==
                  SAMSA_OK &&
              n == 0,
          "offsets of a deleted group: %zu", n);
    samsa_partitions_free(offs, n);
    samsa_admin_destroy(a);
    printf("admin_groups: ok\n");
}

/* ----------------------------------------------------- delivery_offsets */

#define DR_RECORDS 3000
#define DR_PARTS 3

struct dr_seen {
    int reports[DR_RECORDS];
    int32_t partition[DR_RECORDS];
    int64_t offset[DR_RECORDS];
    int failed;
    int failed_err;
    int bad;
};

static void on_dr(const struct samsa_delivery *d, void *opaque)
{
    struct dr_seen *s = opaque;
    uintptr_t id = (uintptr_t)d->opaque;
    if (id == 0 || id > DR_RECORDS) {
        s->bad++;
        return;
    }
    int i = (int)(id - 1);
    char v[32];
    int len = snprintf(v, sizeof(v), "v%d", i);
    /* "v<i>", then nothing or 'x' padding */
    const char *dv = d->value;
    if (d->value_len < (size_t)len || memcmp(dv, v, (size_t)len) != 0 ||
        (d->value_len > (size_t)len && dv[len] != 'x')) {
        s->bad++;
    }
    s->reports[i]++;
    s->partition[i] = d->partition;
    s->offset[i] = d->offset;
    if (d->err != SAMSA_OK) {
        s->failed++;
        s->failed_err = d->err;
    }
}

static void delivery_offsets(void)
{
    static struct dr_seen seen;
    samsa_admin *a = admin();
    create_topic(a, "dr", DR_PARTS);
    const char *small[] = {"max.message.bytes=2000"};
    struct samsa_new_topic t = {"dr-small", 1, 1, small, 1};
    char err[512];
    CHECK(samsa_admin_create_topic(a, &t, 15000, err, sizeof(err)) == SAMSA_OK, "%s", err);
    samsa_admin_destroy(a);

    /* batches of at most 50 records: whole queues and queues cut short */
    samsa_conf *conf = conf_with("linger.ms", "20", "batch.num.messages", "50");
    samsa_conf_set_delivery_cb(conf, on_dr, &seen);
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(p != NULL, "%s", err);
    for (int i = 0; i < DR_RECORDS; i++) {
        char v[32];
        int len = snprintf(v, sizeof(v), "v%d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT,         .topic = "dr",
                                 .partition = i % DR_PARTS, .value = v,
                                 .value_len = (size_t)len,  .opaque = (void *)(uintptr_t)(i + 1)};
        CHECK(samsa_produce(p, &r) == SAMSA_OK, "produce %d", i);
        if (i % 700 == 0) {
            (void)samsa_producer_poll(p, 0); /* some reports served while producing */
        }
    }
    CHECK(samsa_producer_close(p, 15000) == 0, "records not delivered");
    samsa_producer_destroy(p);
    CHECK(seen.bad == 0 && seen.failed == 0, "%d bad reports, %d failed", seen.bad, seen.failed);
    int64_t next[DR_PARTS] = {0};
    for (int i = 0; i < DR_RECORDS; i++) {
        int32_t part = i % DR_PARTS;
        CHECK(seen.reports[i] == 1, "record %d: %d reports", i, seen.reports[i]);
        CHECK(seen.partition[i] == part && seen.offset[i] == next[part],
              "record %d: %d/%lld, expected %d/%lld", i, seen.partition[i],
              (long long)seen.offset[i], part, (long long)next[part]);
        next[part]++;
    }

    /* the consumer finds each value where its report said */
    conf = conf_with(NULL, NULL, NULL, NULL);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(c != NULL, "%s", err);
    struct samsa_partition parts[DR_PARTS];
    for (int32_t i = 0; i < DR_PARTS; i++) {
        parts[i] = (struct samsa_partition){"dr", i, SAMSA_OFFSET_BEGINNING};
    }
    CHECK(samsa_consumer_assign(c, parts, DR_PARTS) == SAMSA_OK, "assign");
    int64_t deadline = now_ms() + 20000;
    for (int got = 0; got < DR_RECORDS;) {
        CHECK(now_ms() < deadline, "consumed %d of %d", got, DR_RECORDS);
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m == NULL) {
            continue;
        }
        /* record i went to partition i % 3 as its (i / 3)th record */
        int i = (int)m->offset * DR_PARTS + m->partition;
        char v[32];
        int len = snprintf(v, sizeof(v), "v%d", i);
        CHECK(i < DR_RECORDS && m->value_len == (size_t)len &&
                  memcmp(m->value, v, (size_t)len) == 0,
              "%d/%lld holds %.*s, its report said v%d", m->partition, (long long)m->offset,
              (int)m->value_len, (const char *)m->value, i);
        samsa_message_free(m);
        got++;
    }
    samsa_consumer_destroy(c);

    /* one batch of 10 x 500 B, over the topic's max.message.bytes: refused whole */
    memset(&seen, 0, sizeof(seen));
    conf = conf_with("linger.ms", "1000", "acks", "1");
    samsa_conf_set_delivery_cb(conf, on_dr, &seen);
    p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(p != NULL, "%s", err);
    static char big[500];
    for (int i = 0; i < 10; i++) {
        int len = snprintf(big, sizeof(big), "v%d", i);
        memset(big + len, 'x', sizeof(big) - (size_t)len);
        struct samsa_record r = {SAMSA_RECORD_INIT,        .topic = "dr-small",
                                 .partition = 0,           .value = big,
                                 .value_len = sizeof(big), .opaque = (void *)(uintptr_t)(i + 1)};
        CHECK(samsa_produce(p, &r) == SAMSA_OK, "produce big %d", i);
    }
    size_t undelivered = samsa_producer_close(p, 15000);
    samsa_producer_destroy(p);
    printf("refused batch: %zu undelivered, %d failed reports (error %d)\n", undelivered,
           seen.failed, seen.failed_err);
    CHECK(seen.bad == 0, "%d bad reports", seen.bad);
    for (int i = 0; i < 10; i++) {
        CHECK(seen.reports[i] == 1, "refused record %d: %d reports", i, seen.reports[i]);
        CHECK(seen.offset[i] == -1, "a refused record with offset %lld",
              (long long)seen.offset[i]);
    }
    CHECK(seen.failed == 10 && seen.failed_err == 10 && undelivered == 10,
          "failed %d (error %d), undelivered %zu", seen.failed, seen.failed_err, undelivered);
    printf("delivery_offsets: ok\n");
}

/* ------------------------------------------------- close during produce */

struct race {
    samsa_producer *p;
    atomic_long accepted;  /* samsa_produce said SAMSA_OK */
    atomic_long reports;   /* delivery reports, any outcome */
    atomic_long purged;
    atomic_long refused;   /* producer threads that saw SAMSA_ERR_DESTROYED */
    atomic_bool stop_polling;
};

static void on_race_dr(const struct samsa_delivery *d, void *opaque)
{
    struct race *r = opaque;
    atomic_fetch_add(&r->reports, 1);
    if (d->err == SAMSA_ERR_PURGED) {
        atomic_fetch_add(&r->purged, 1);
    }
}

static void *race_produce(void *arg)
{
    struct race *r = arg;
    char v[100];
    memset(v, 'x', sizeof(v));
    for (long i = 0;; i++) {
        struct samsa_record rec = {SAMSA_RECORD_INIT,
                                   .topic = "race",
                                   .partition = SAMSA_PARTITION_ANY,
                                   .key = &i,
                                   .key_len = sizeof(i),
                                   .value = v,
                                   .value_len = sizeof(v)};
        int e = samsa_produce(r->p, &rec);
        if (e == SAMSA_OK) {
            atomic_fetch_add(&r->accepted, 1);
        } else if (e == SAMSA_ERR_QUEUE_FULL) {
            (void)samsa_producer_poll(r->p, 10);
        } else {
            CHECK(e == SAMSA_ERR_DESTROYED, "produce racing close: %s", samsa_err_name(e));
            atomic_fetch_add(&r->refused, 1);
            return NULL;
        }
    }
}

static void *race_poll(void *arg)
{
    struct race *r = arg;
    while (!atomic_load(&r->stop_polling)) {
        (void)samsa_producer_poll(r->p, -1); /* returns once the producer closes */
    }
    return NULL;
}

static void closed_consumer_and_admin_refuse(void)
{
    char err[512];
    samsa_conf *conf = conf_with("group.id", "closed", NULL, NULL);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(c != NULL, "%s", err);
    struct samsa_partition part = {"race", 0, SAMSA_OFFSET_BEGINNING};
    CHECK(samsa_consumer_assign(c, &part, 1) == SAMSA_OK, "assign");
    CHECK(samsa_consumer_close(c, 5000) == SAMSA_OK, "close");
    const char *topics[1] = {"race"};
    int64_t lo = 0, hi = 0;
    struct samsa_partition *parts = NULL;
    size_t count = 0;
    struct samsa_lag lag;
    CHECK(samsa_consumer_poll(c, 1000) == NULL, "poll on a closed consumer");
    CHECK(samsa_consumer_assign(c, &part, 1) == SAMSA_ERR_DESTROYED, "assign");
    CHECK(samsa_consumer_subscribe(c, topics, 1) == SAMSA_ERR_DESTROYED, "subscribe");
    CHECK(samsa_consumer_seek(c, "race", 0, 0, 1000) == SAMSA_ERR_DESTROYED, "seek");
    CHECK(samsa_consumer_commit(c, NULL, 0, false, 1000) == SAMSA_ERR_DESTROYED, "commit");
    CHECK(samsa_consumer_committed(c, &part, 1, 1000) == SAMSA_ERR_DESTROYED, "committed");
    CHECK(samsa_consumer_watermarks(c, "race", 0, &lo, &hi, 1000) == SAMSA_ERR_DESTROYED, "wm");
    CHECK(samsa_consumer_pause(c, &part, 1) == SAMSA_ERR_DESTROYED, "pause");
    CHECK(samsa_consumer_assignment(c, &parts, &count) == SAMSA_ERR_DESTROYED, "assignment");
    CHECK(samsa_consumer_lag(c, "race", 0, &lag) == SAMSA_ERR_DESTROYED, "lag");
    CHECK(!samsa_consumer_at_end(c), "at_end");
    CHECK(samsa_consumer_close(c, 1000) == SAMSA_ERR_DESTROYED, "second close");
    samsa_consumer_destroy(c);

    samsa_admin *a = admin();
    samsa_admin_close(a);
    samsa_metadata *md = NULL;
    err[0] = '\0';
    CHECK(samsa_admin_metadata(a, NULL, 0, 1000, &md) == SAMSA_ERR_DESTROYED, "metadata");
    CHECK(samsa_admin_delete_topic(a, "race", 1000, err, sizeof(err)) == SAMSA_ERR_DESTROYED,
          "delete_topic");
    CHECK(strstr(err, "the handle is closed") != NULL, "errstr \"%s\"", err);
    samsa_admin_close(a);
    samsa_admin_destroy(a);
}

static void close_during_produce(void)
{
    samsa_admin *a = admin();
    create_topic(a, "race", 3);
    samsa_admin_destroy(a);
    static struct race r;
    char err[512];
    samsa_conf *conf = conf_with("linger.ms", "2", "queue.buffering.max.messages", "50000");
    samsa_conf_set_delivery_cb(conf, on_race_dr, &r);
    r.p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(r.p != NULL, "%s", err);
    pthread_t producers[2], poller;
    for (int i = 0; i < 2; i++) {
        CHECK(pthread_create(&producers[i], NULL, race_produce, &r) == 0, "thread");
    }
    CHECK(pthread_create(&poller, NULL, race_poll, &r) == 0, "thread");
    int64_t deadline = now_ms() + 20000;
    while (atomic_load(&r.reports) < 60000) { /* well under way, reports flowing */
        CHECK(now_ms() < deadline, "only %ld reports", atomic_load(&r.reports));
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    int64_t t0 = now_ms();
    size_t undelivered = samsa_producer_close(r.p, 0); /* 0: what is queued is purged */
    int64_t took = now_ms() - t0;
    for (int i = 0; i < 2; i++) {
        CHECK(pthread_join(producers[i], NULL) == 0, "join");
    }
    atomic_store(&r.stop_polling, true);
    CHECK(pthread_join(poller, NULL) == 0, "join");
    long accepted = atomic_load(&r.accepted), reports = atomic_load(&r.reports);
    printf("close during produce: %ld accepted, %ld reports (%ld purged, close counted %zu), "
           "close took %lld ms\n", accepted, reports, atomic_load(&r.purged), undelivered,
           (long long)took);
    CHECK(atomic_load(&r.refused) == 2, "%ld producer threads refused", atomic_load(&r.refused));
    CHECK(reports == accepted, "%ld reports for %ld records accepted", reports, accepted);
    CHECK(took < 10000, "close took %lld ms", (long long)took);

    struct samsa_record rec = {SAMSA_RECORD_INIT, .topic = "race", .partition = 0, .value = "v",
                               .value_len = 1};
    CHECK(samsa_produce(r.p, &rec) == SAMSA_ERR_DESTROYED, "produce after close");
    CHECK(samsa_producer_flush(r.p, 1000) == SAMSA_ERR_DESTROYED, "flush after close");
    CHECK(samsa_producer_poll(r.p, 1000) == 0, "poll after close");
    CHECK(samsa_producer_outq_len(r.p) == 0, "outq_len after close");
    CHECK(samsa_producer_purge(r.p) == SAMSA_ERR_DESTROYED, "purge after close");
    CHECK(samsa_producer_close(r.p, 1000) == 0, "second close");
    samsa_producer_destroy(r.p);
    CHECK(atomic_load(&r.reports) == reports, "reports after close");
    closed_consumer_and_admin_refuse();
    printf("close_during_produce: ok\n");
}

/* ---------------------------------------------------------- close timeout */

/* A group member of `topic` (2 partitions, 20 records, group.id the
 * topic's name, from the earliest) made from conf (taken), which read all
 * 20, printed "ready" and got the go-ahead on stdin (the test killed the
 * broker meanwhile). */
static samsa_consumer *member_read_then_wait(const char *topic, samsa_conf *conf)
{
    samsa_admin *a = admin();
    create_topic(a, topic, 2);
    samsa_admin_destroy(a);
    produce(topic, 20, 2);
    char err[512];
    CHECK(samsa_conf_set(conf, "group.id", topic, err, sizeof(err)) == SAMSA_OK, "%s", err);
    CHECK(samsa_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof(err)) == SAMSA_OK,
          "%s", err);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(c != NULL, "%s", err);
    const char *topics[1] = {topic};
    CHECK(samsa_consumer_subscribe(c, topics, 1) == SAMSA_OK, "subscribe");
    int got = 0;
    int64_t deadline = now_ms() + 30000;
    while (got < 20) {
        CHECK(now_ms() < deadline, "read %d of 20", got);
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m != NULL) {
            got++;
            samsa_message_free(m);
        }
    }
    printf("ready\n");
    fflush(stdout);
    char line[16];
    CHECK(fgets(line, sizeof(line), stdin) != NULL, "no go-ahead on stdin");
    return c;
}

static void close_timeout(void)
{
    samsa_consumer *c = member_read_then_wait("ct", conf_with(NULL, NULL, NULL, NULL));
    int64_t t0 = now_ms();
    int e = samsa_consumer_close(c, 2000);
    int64_t took = now_ms() - t0;
    printf("close with the broker gone: %s after %lld ms\n", samsa_err_name(e), (long long)took);
    CHECK(e == SAMSA_ERR_TIMED_OUT, "close returned %s", samsa_err_name(e));
    CHECK(took <= 3500, "close took %lld ms for a 2000 ms timeout", (long long)took);
    samsa_consumer_destroy(c);
    printf("close_timeout: ok\n");
}

/* ------------------------------------------------------ all brokers down */

static atomic_int all_down_seen;

static void on_all_down(int err, const char *reason, void *opaque)
{
    (void)opaque;
    printf("error callback: %s: %s\n", samsa_err_name(err), reason);
    if (err == SAMSA_ERR_ALL_BROKERS_DOWN) {
        atomic_fetch_add(&all_down_seen, 1);
    }
}

static void all_brokers_down(void)
{
    /* The broker twice, as a cluster of several is listed: the second
     * bootstrap address is never connected to while the first answers. */
    char twice[600];
    const char *port = strrchr(brokers, ':');
    CHECK(port != NULL, "bootstrap %s", brokers);
    snprintf(twice, sizeof(twice), "%s,localhost%s", brokers, port);
    samsa_conf *conf = conf_with("bootstrap.servers", twice, NULL, NULL);
    samsa_conf_set_error_cb(conf, on_all_down, NULL);
    samsa_consumer *c = member_read_then_wait("down", conf);
    CHECK(atomic_load(&all_down_seen) == 0, "all brokers down while one was up");
    int64_t t0 = now_ms();
    while (atomic_load(&all_down_seen) == 0 && now_ms() - t0 < 12000) {
        samsa_message *m = samsa_consumer_poll(c, 100);
        samsa_message_free(m);
    }
    int64_t took = now_ms() - t0;
    printf("ALL_BROKERS_DOWN reported %lld ms after the broker was killed\n", (long long)took);
    CHECK(atomic_load(&all_down_seen) == 1, "%d ALL_BROKERS_DOWN in 12 s",
          atomic_load(&all_down_seen));
    CHECK(samsa_consumer_close(c, 1000) == SAMSA_ERR_TIMED_OUT, "close");
    samsa_consumer_destroy(c);
    printf("all_brokers_down: ok\n");
}

/* ----------------------------------------------------------- fair fetch */

static void fair_fetch(void)
{
    samsa_admin *a = admin();
    create_topic(a, "fair", 3);
    samsa_admin_destroy(a);
    /* one record per batch, 100 per partition */
    char err[512];
    samsa_conf *pconf = conf_with("linger.ms", "0", "batch.num.messages", "1");
    samsa_producer *p = samsa_producer_new(pconf, err, sizeof(err));
    samsa_conf_destroy(pconf);
    CHECK(p != NULL, "%s", err);
    for (int i = 0; i < 300; i++) {
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = "fair", .partition = i % 3,
                                 .value = "v", .value_len = 1};
        CHECK(samsa_produce(p, &r) == SAMSA_OK, "produce %d", i);
        CHECK(samsa_producer_flush(p, 10000) == SAMSA_OK, "flush %d", i);
    }
    CHECK(samsa_producer_close(p, 10000) == 0, "records not delivered");
    samsa_producer_destroy(p);
    /* every partition on the one broker, responses of one batch each */
    samsa_conf *conf = conf_with("fetch.max.bytes", "1", NULL, NULL);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(c != NULL, "%s", err);
    struct samsa_partition parts[3] = {{"fair", 0, SAMSA_OFFSET_BEGINNING},
                                       {"fair", 1, SAMSA_OFFSET_BEGINNING},
                                       {"fair", 2, SAMSA_OFFSET_BEGINNING}};
    CHECK(samsa_consumer_assign(c, parts, 3) == SAMSA_OK, "assign");
    int per[3] = {0, 0, 0};
    int64_t deadline = now_ms() + 20000;
    for (int got = 0; got < 60;) {
        CHECK(now_ms() < deadline, "read %d of 60", got);
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m != NULL) {
            per[m->partition]++;
            got++;
            samsa_message_free(m);
        }
    }
    printf("the first 60 records: %d, %d and %d of partitions 0, 1 and 2\n", per[0], per[1],
           per[2]);
    for (int i = 0; i < 3; i++) {
        CHECK(per[i] >= 10, "partition %d: %d of the first 60 records", i, per[i]);
    }
    CHECK(samsa_consumer_close(c, 5000) == SAMSA_OK, "close");
    samsa_consumer_destroy(c);
    printf("fair_fetch: ok\n");
}

/* ------------------------------------------------------------- hooks */

/* librdkafka's hooks on a real broker, with the I/O thread and a second
 * polling thread: statistics from the poll calls, a partitioner callback,
 * purge of what is in flight with each report's persistence status, then
 * the offset store of a consumer. */
struct hooks_seen {
    pthread_mutex_t lock;
    int stats;
    char last[8192];
    int by_status[3];
    int delivered, purged, other;
    int wrong_partition;
};

static void hooks_stats(const char *json, size_t len, void *opaque)
{
    struct hooks_seen *h = opaque;
    pthread_mutex_lock(&h->lock);
    h->stats++;
    (void)snprintf(h->last, sizeof(h->last), "%.*s", (int)len, json);
    pthread_mutex_unlock(&h->lock);
}

static int32_t hooks_partitioner(const char *topic, const void *key, size_t key_len,
                                 int32_t partition_count, void *cb_opaque, void *msg_opaque)
{
    (void)topic;
    (void)cb_opaque;
    (void)msg_opaque;
    return key_len > 0 ? (((const char *)key)[key_len - 1] - '0') % partition_count : 0;
}

static void hooks_dr(const struct samsa_delivery *d, void *opaque)
{
    struct hooks_seen *h = opaque;
    pthread_mutex_lock(&h->lock);
    if (d->status >= 0 && d->status < 3) {
        h->by_status[d->status]++;
    }
    if (d->err == SAMSA_OK) {
        h->delivered++;
        const char *k = d->key;
        h->wrong_partition += d->key_len > 0 && d->partition != (k[d->key_len - 1] - '0') % 3;
    } else if (d->err == SAMSA_ERR_PURGED) {
        h->purged++;
    } else {
        h->other++;
    }
    pthread_mutex_unlock(&h->lock);
}

static _Atomic bool hooks_stop;

static void *hooks_poller(void *arg)
{
    while (!atomic_load(&hooks_stop)) {
        (void)samsa_producer_poll(arg, 20);
    }
    return NULL;
}

/* A number field of the last statistics document, or -1. */
static long long hooks_field(struct hooks_seen *h, const char *name)
{
    char key[64];
    (void)snprintf(key, sizeof(key), "\"%s\":", name);
    pthread_mutex_lock(&h->lock);
    const char *at = strstr(h->last, key);
    long long v = at != NULL ? strtoll(at + strlen(key), NULL, 10) : -1;
    pthread_mutex_unlock(&h->lock);
    return v;
}

static void hooks(void)
{
    samsa_admin *a = admin();
    create_topic(a, "hooks", 3);
    samsa_admin_destroy(a);
    static struct hooks_seen h = {.lock = PTHREAD_MUTEX_INITIALIZER};
    char err[512];
    samsa_conf *conf = conf_with("statistics.interval.ms", "100", "linger.ms", "0");
    samsa_conf_set_stats_cb(conf, hooks_stats, &h);
    samsa_conf_set_partitioner_cb(conf, hooks_partitioner, NULL);
    samsa_conf_set_delivery_cb(conf, hooks_dr, &h);
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(p != NULL, "%s", err);
    pthread_t poller;
    CHECK(pthread_create(&poller, NULL, hooks_poller, p) == 0, "thread");
    for (int i = 0; i < 300; i++) {
        char k[16];
        int kl = snprintf(k, sizeof(k), "k%d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = "hooks", .partition = SAMSA_PARTITION_ANY, .key = k,
                                 .key_len = (size_t)kl, .value = "v", .value_len = 1};
        CHECK(samsa_produce(p, &r) == SAMSA_OK, "produce %d", i);
    }
    CHECK(samsa_producer_flush(p, 15000) == SAMSA_OK, "flush");
    int64_t deadline = now_ms() + 10000;
    while (hooks_field(&h, "txmsgs") != 300) {
        CHECK(now_ms() < deadline, "statistics: txmsgs %lld of 300 after %d documents",
              hooks_field(&h, "txmsgs"), h.stats);
        (void)samsa_producer_poll(p, 50);
    }
    CHECK(hooks_field(&h, "msg_cnt") == 0, "msg_cnt %lld", hooks_field(&h, "msg_cnt"));
    CHECK(hooks_field(&h, "tx") > 0, "tx");
    pthread_mutex_lock(&h.lock);
    CHECK(h.delivered == 300 && h.wrong_partition == 0 && h.by_status[SAMSA_MSG_PERSISTED] == 300,
          "delivered %d, %d on another partition than the callback's, %d persisted", h.delivered,
          h.wrong_partition, h.by_status[SAMSA_MSG_PERSISTED]);
    printf("statistics: %d documents; 300 records placed by the callback\n", h.stats);
    pthread_mutex_unlock(&h.lock);

    /* purge while records are on their way: each report says what it can */
    static char big[1000];
    memset(big, 'p', sizeof(big));
    for (int i = 0; i < 20000; i++) {
        char k[16];
        int kl = snprintf(k, sizeof(k), "k%d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = "hooks", .partition = SAMSA_PARTITION_ANY, .key = k,
                                 .key_len = (size_t)kl, .value = big, .value_len = sizeof(big)};
        CHECK(samsa_produce(p, &r) == SAMSA_OK, "produce %d", i);
    }
    CHECK(samsa_producer_purge_flags(p, SAMSA_PURGE_QUEUE | SAMSA_PURGE_INFLIGHT) == SAMSA_OK,
          "purge");
    CHECK(samsa_producer_flush(p, 15000) == SAMSA_OK, "flush after purge");
    pthread_mutex_lock(&h.lock);
    int persisted = h.by_status[SAMSA_MSG_PERSISTED] - 300;
    CHECK(h.delivered - 300 + h.purged == 20000 && h.other == 0 &&
              h.delivered - 300 == persisted &&
              h.purged == h.by_status[SAMSA_MSG_NOT_PERSISTED] +
                              h.by_status[SAMSA_MSG_POSSIBLY_PERSISTED],
          "of 20000: %d delivered, %d purged (%d not, %d possibly persisted), %d other",
          h.delivered - 300, h.purged, h.by_status[SAMSA_MSG_NOT_PERSISTED],
          h.by_status[SAMSA_MSG_POSSIBLY_PERSISTED], h.other);
    printf("purge: of 20000, %d delivered, %d purged (%d not persisted, %d possibly)\n",
           h.delivered - 300, h.purged, h.by_status[SAMSA_MSG_NOT_PERSISTED],
           h.by_status[SAMSA_MSG_POSSIBLY_PERSISTED]);
    int before = h.delivered;
    pthread_mutex_unlock(&h.lock);
    /* the idempotent producer goes on: no sequence error for what follows */
    for (int i = 0; i < 30; i++) {
        char k[16];
        int kl = snprintf(k, sizeof(k), "k%d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = "hooks", .partition = SAMSA_PARTITION_ANY, .key = k,
                                 .key_len = (size_t)kl, .value = "after", .value_len = 5};
        CHECK(samsa_produce(p, &r) == SAMSA_OK, "produce after purge %d", i);
    }
    CHECK(samsa_producer_flush(p, 15000) == SAMSA_OK, "flush the last");
    atomic_store(&hooks_stop, true);
    pthread_join(poller, NULL);
    pthread_mutex_lock(&h.lock);
    CHECK(h.delivered == before + 30 && h.other == 0, "after the purge: %d of 30 delivered, %d other",
          h.delivered - before, h.other);
    pthread_mutex_unlock(&h.lock);
    CHECK(samsa_producer_close(p, 10000) == 0, "close");
    samsa_producer_destroy(p);

    /* the offset store: only what the application stored is committed */
    samsa_conf *cconf = conf_with("group.id", "hooks-g", "enable.auto.offset.store", "false");
    CHECK(samsa_conf_set(cconf, "enable.auto.commit", "false", err, sizeof(err)) == SAMSA_OK,
          "%s", err);
    samsa_consumer *c = samsa_consumer_new(cconf, err, sizeof(err));
    samsa_conf_destroy(cconf);
    CHECK(c != NULL, "%s", err);
    struct samsa_partition parts[3] = {{"hooks", 0, SAMSA_OFFSET_BEGINNING},
                                       {"hooks", 1, SAMSA_OFFSET_BEGINNING},
                                       {"hooks", 2, SAMSA_OFFSET_BEGINNING}};
    CHECK(samsa_consumer_assign(c, parts, 3) == SAMSA_OK, "assign");
    deadline = now_ms() + 20000;
    for (int got = 0; got < 300;) {
        CHECK(now_ms() < deadline, "read %d of 300", got);
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m == NULL) {
            continue;
        }
        if (m->partition == 0 && m->offset == 10) {
            CHECK(samsa_consumer_store_message(c, m) == SAMSA_OK, "store");
        }
        got++;
        samsa_message_free(m);
    }
    CHECK(samsa_consumer_commit(c, NULL, 0, false, 10000) == SAMSA_OK, "commit");
    /* offsets for times (librdkafka's rd_kafka_offsets_for_times) */
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int64_t hour_later = (int64_t)wall.tv_sec * 1000 + 3600000; /* an hour later */
    struct samsa_partition times[3] = {{"hooks", 0, 0}, {"hooks", 1, hour_later},
                                       {"hooks", 2, SAMSA_OFFSET_END}};
    CHECK(samsa_consumer_offsets_for_times(c, times, 3, 10000) == SAMSA_OK, "offsets for times");
    int64_t high = -1;
    CHECK(samsa_consumer_watermarks(c, "hooks", 2, NULL, &high, 10000) == SAMSA_OK, "watermarks");
    CHECK(times[0].offset == 0 && times[1].offset == -1 && times[2].offset == high && high > 0,
          "offsets for 0, an hour later and the end: %lld, %lld, %lld (high %lld)",
          (long long)times[0].offset, (long long)times[1].offset, (long long)times[2].offset,
          (long long)high);
    struct samsa_partition bad_time = {"hooks", 0, -5};
    CHECK(samsa_consumer_offsets_for_times(c, &bad_time, 1, 1000) == SAMSA_ERR_INVALID_ARG,
          "a negative time");
    struct samsa_partition got[2] = {{"hooks", 0, 0}, {"hooks", 1, 0}};
    CHECK(samsa_consumer_committed(c, got, 2, 10000) == SAMSA_OK, "committed");
    CHECK(got[0].offset == 11 && got[1].offset == -1001, "committed %lld and %lld",
          (long long)got[0].offset, (long long)got[1].offset);
    CHECK(samsa_consumer_close(c, 5000) == SAMSA_OK, "close");
    samsa_consumer_destroy(c);
    printf("hooks: ok\n");
}

/* ------------------------------------------------------ delivery times */

static void on_time_dr(const struct samsa_delivery *d, void *opaque)
{
    struct samsa_delivery *out = opaque;
    *out = *d;
    out->topic = NULL; /* borrowed: not kept */
    out->key = out->value = NULL;
}

/* A delivery report's timestamp is the broker's on a LogAppendTime topic
 * (librdkafka's rd_kafka_message_timestamp with its type), the record's
 * own otherwise. */
static void delivery_times(void)
{
    samsa_admin *a = admin();
    char err[512];
    const char *lat[] = {"message.timestamp.type=LogAppendTime"};
    struct samsa_new_topic t = {"times-lat", 1, 1, lat, 1};
    CHECK(samsa_admin_create_topic(a, &t, 15000, err, sizeof(err)) == SAMSA_OK, "%s", err);
    create_topic(a, "times-ct", 1);
    samsa_admin_destroy(a);
    struct samsa_delivery got = {0};
    samsa_conf *conf = conf_with("linger.ms", "0", NULL, NULL);
    samsa_conf_set_delivery_cb(conf, on_time_dr, &got);
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(p != NULL, "%s", err);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int64_t before = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000 - 1000;
    const char *topics[2] = {"times-lat", "times-ct"};
    for (int i = 0; i < 2; i++) {
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = topics[i], .partition = 0, .value = "v",
                                 .value_len = 1, .timestamp = 1000};
        CHECK(samsa_produce(p, &r) == SAMSA_OK, "produce");
        CHECK(samsa_producer_flush(p, 15000) == SAMSA_OK, "flush");
        CHECK(got.err == SAMSA_OK && got.status == SAMSA_MSG_PERSISTED, "%s: err %d status %d",
              topics[i], got.err, got.status);
        printf("%s: timestamp %lld, type %d\n", topics[i], (long long)got.timestamp,
               got.timestamp_type);
        if (i == 0) {
            CHECK(got.timestamp_type == 1 && got.timestamp >= before, "LogAppendTime");
        } else {
            CHECK(got.timestamp_type == 0 && got.timestamp == 1000, "CreateTime");
        }
    }
    CHECK(samsa_producer_close(p, 10000) == 0, "close");
    samsa_producer_destroy(p);
    printf("delivery_times: ok\n");
}

/* ------------------------------------------------------------- regex */

/* A subscription to ^rx-.* (librdkafka's ^ convention): the member reads
 * the matching topic that exists, not the one that does not match, and a
 * matching topic created afterwards joins its assignment at a metadata
 * refresh (metadata.max.age.ms, librdkafka's
 * topic.metadata.refresh.interval.ms). */
static void regex_scenario(void)
{
    char err[512];
    samsa_admin *a = admin();
    create_topic(a, "rx-a", 2);
    create_topic(a, "other", 1);
    produce("rx-a", 10, 2);
    produce("other", 5, 1);
    samsa_conf *conf = conf_with("group.id", "rx-group", "metadata.max.age.ms", "1000");
    CHECK(samsa_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof(err)) == SAMSA_OK,
          "%s", err);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    CHECK(c != NULL, "%s", err);
    const char *topics[1] = {"^rx-.*"};
    CHECK(samsa_consumer_subscribe(c, topics, 1) == SAMSA_OK, "subscribe");
    int from_a = 0, from_b = 0;
    int64_t deadline = now_ms() + 30000;
    bool created = false;
    int64_t created_at = 0;
    while (from_a < 10 || from_b < 7) {
        CHECK(now_ms() < deadline, "read %d of rx-a's 10 and %d of rx-b's 7", from_a, from_b);
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m != NULL) {
            CHECK(strncmp(m->topic, "rx-", 3) == 0, "read a record of %s", m->topic);
            from_a += strcmp(m->topic, "rx-a") == 0;
            from_b += strcmp(m->topic, "rx-b") == 0;
            samsa_message_free(m);
        }
        if (from_a == 10 && !created) {
            /* a topic the pattern matches, created while the member reads */
            create_topic(a, "rx-b", 1);
            produce("rx-b", 7, 1);
            created = true;
            created_at = now_ms();
        }
    }
    printf("rx-a: %d records; rx-b, created after the subscription: %d records, the last "
           "%.1f s after its creation\n",
           from_a, from_b, (double)(now_ms() - created_at) / 1000.0);
    struct samsa_partition *as = NULL;
    size_t count = 0;
    CHECK(samsa_consumer_assignment(c, &as, &count) == SAMSA_OK, "assignment");
    CHECK(count == 3, "assigned %zu partitions, not rx-a's 2 and rx-b's 1", count);
    samsa_partitions_free(as, count);
    CHECK(samsa_consumer_close(c, 5000) == SAMSA_OK, "close");
    samsa_consumer_destroy(c);
    samsa_admin_destroy(a);
    printf("regex: ok\n");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: api_scenarios BOOTSTRAP SCENARIO\n");
        return 2;
    }
    brokers = argv[1];
    static const struct {
        const char *name;
        void (*fn)(void);
    } scenarios[] = {
        {"pause_resume_lag", pause_resume_lag}, {"admin_configs", admin_configs},
        {"admin_partitions", admin_partitions}, {"admin_records", admin_records},
        {"admin_groups", admin_groups}, {"delivery_offsets", delivery_offsets},
        {"close_during_produce", close_during_produce}, {"close_timeout", close_timeout},
        {"all_brokers_down", all_brokers_down}, {"fair_fetch", fair_fetch},
        {"hooks", hooks}, {"delivery_times", delivery_times},
        {"regex", regex_scenario},
    };
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        if (strcmp(argv[2], scenarios[i].name) == 0) {
            scenarios[i].fn();
            return 0;
        }
    }
    fprintf(stderr, "api_scenarios: no scenario \"%s\"\n", argv[2]);
    return 2;
}
