/*
 * samsa-streams-bench: one scenario of `ci/bench --streams` against a
 * running broker, timed from the poll that brought the first input record
 * until every record is processed and its outputs acknowledged (the
 * group's join and the topics' creation left out), printed as one JSON line:
 *
 *     samsa-streams-bench BROKERS produce INPUT N
 *         N lines "wNNNN wNNNN wNNNN" (10,000 distinct words) keyed "kNNNN"
 *         (10,000 keys), timestamps 1 ms apart, into INPUT
 *     samsa-streams-bench BROKERS SCENARIO INPUT N APP_ID [state.dir=DIR]
 *         SCENARIO: raw        libsamsa's consumer and producer, each record
 *                              copied to APP_ID-out (the rate the runtime
 *                              is held against)
 *                   stateless  filter (keys ending in 0 dropped) and
 *                              map_values (upper case) to APP_ID-out
 *                   wordcount  flat_map to words (the word count example's
 *                              split), group_by_key through a repartition
 *                              topic, count
 *                   windowed   group_by_key, tumbling 1 s windows, count
 *
 * "records" counts every record the runtime took from the consumer (input
 * and repartition records); cpu_s is this process's user + system time
 * over the timed span (getrusage, every thread), rss_kb its VmHWM at the end.
 */
#include <samsa/streams.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "example.h"

#define KEYS 10000
#define WORDS_PER_LINE 3
#define TIMEOUT_S 120

static double now_s(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        return 0;
    }
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static long hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
        }
    }
    if (f != NULL) {
        (void)fclose(f);
    }
    return kb;
}

/* The span being timed: from the poll that brought the first record. */
struct span {
    double t0, c0;      /* at the start of the poll that brought the first record */
    double tp, cp;      /* at the start of the latest poll */
    bool started;
};

static void span_poll(struct span *s)
{
    s->tp = now_s();
    s->cp = cpu_s();
}

static void span_got(struct span *s)
{
    if (!s->started) {
        s->started = true;
        s->t0 = s->tp;
        s->c0 = s->cp;
    }
}

static int report(const char *scenario, const struct span *s, unsigned long long records,
                  const char *store)
{
    double secs = now_s() - s->t0;
    double cpu = cpu_s() - s->c0;
    (void)printf("{\"scenario\":\"%s\",\"store\":\"%s\",\"records\":%llu,\"seconds\":%.3f,"
                 "\"records_per_s\":%.0f,\"cpu_s\":%.3f,\"cpu_s_per_million\":%.3f,"
                 "\"rss_kb\":%ld}\n",
                 scenario, store, records, secs, secs > 0 ? (double)records / secs : 0.0, cpu,
                 records > 0 ? cpu * 1e6 / (double)records : 0.0, hwm_kb());
    return 0;
}

static samsa_conf *make_conf(const char *brokers)
{
    char errstr[256];
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL ||
        samsa_conf_set(conf, "bootstrap.servers", brokers, errstr, sizeof errstr) != SAMSA_OK) {
        (void)fprintf(stderr, "samsa-streams-bench: %s\n", conf == NULL ? "no memory" : errstr);
        samsa_conf_destroy(conf);
        return NULL;
    }
    return conf;
}

static int produce_input(const char *brokers, const char *topic, long n)
{
    char errstr[256];
    samsa_conf *conf = make_conf(brokers);
    samsa_producer *p = conf != NULL ? samsa_producer_new(conf, errstr, sizeof errstr) : NULL;
    samsa_conf_destroy(conf);
    if (p == NULL) {
        return 1;
    }
    int64_t base = (int64_t)time(NULL) * 1000 - n;
    unsigned seed = 12345;
    int err = SAMSA_OK;
    for (long i = 0; err == SAMSA_OK && i < n; i++) {
        char key[16];
        char line[64];
        int len = 0;
        (void)snprintf(key, sizeof key, "k%ld", i % KEYS);
        for (int w = 0; w < WORDS_PER_LINE; w++) {
            seed = seed * 1103515245u + 12345u;
            len += snprintf(line + len, sizeof line - (size_t)len, "%sw%u", w > 0 ? " " : "",
                            (seed >> 8) % KEYS);
        }
        struct samsa_record r = {SAMSA_RECORD_INIT,
                                 .topic = topic,
                                 .partition = SAMSA_PARTITION_ANY,
                                 .key = key,
                                 .key_len = strlen(key),
                                 .value = line,
                                 .value_len = (size_t)len,
                                 .timestamp = base + i};
        err = samsa_produce(p, &r);
        while (err == SAMSA_ERR_QUEUE_FULL) {
            (void)samsa_producer_poll(p, 10);
            err = samsa_produce(p, &r);
        }
    }
    if (err == SAMSA_OK) {
        err = samsa_producer_flush(p, 60000);
    }
    samsa_producer_destroy(p);
    if (err != SAMSA_OK) {
        (void)fprintf(stderr, "samsa-streams-bench: produce: %s\n", samsa_err_str(err));
        return 1;
    }
    return 0;
}

/* libsamsa alone: consume every record of input and produce a copy. */
static int run_raw(const char *brokers, const char *input, long n, const char *app_id)
{
    char errstr[256];
    char out[256];
    (void)snprintf(out, sizeof out, "%s-out", app_id);
    samsa_conf *conf = make_conf(brokers);
    if (conf == NULL || samsa_conf_set(conf, "group.id", app_id, errstr, sizeof errstr) ||
        samsa_conf_set(conf, "auto.offset.reset", "earliest", errstr, sizeof errstr) ||
        samsa_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof errstr)) {
        samsa_conf_destroy(conf);
        return 1;
    }
    samsa_producer *p = samsa_producer_new(conf, errstr, sizeof errstr);
    samsa_consumer *c = p != NULL ? samsa_consumer_new(conf, errstr, sizeof errstr) : NULL;
    samsa_conf_destroy(conf);
    const char *topics[] = {input};
    int err = c != NULL ? samsa_consumer_subscribe(c, topics, 1) : SAMSA_ERR_INVALID_ARG;
    struct span s = {0};
    long got = 0;
    double deadline = now_s() + TIMEOUT_S;
    while (err == SAMSA_OK && got < n && now_s() < deadline) {
        span_poll(&s);
        samsa_message *m = samsa_consumer_poll(c, 100);
        for (int k = 0; m != NULL; k++) {
            span_got(&s);
            struct samsa_record r = {SAMSA_RECORD_INIT,
                                     .topic = out,
                                     .partition = SAMSA_PARTITION_ANY,
                                     .key = m->key,
                                     .key_len = m->key_len,
                                     .value = m->value,
                                     .value_len = m->value_len,
                                     .timestamp = m->timestamp};
            err = samsa_produce(p, &r);
            while (err == SAMSA_ERR_QUEUE_FULL) {
                (void)samsa_producer_poll(p, 1);
                err = samsa_produce(p, &r);
            }
            samsa_message_free(m);
            got++;
            /* up to 1000 records a round, as samsa_st_app_poll takes */
            m = err == SAMSA_OK && got < n && k < 999 ? samsa_consumer_poll(c, 0) : NULL;
        }
        (void)samsa_producer_poll(p, 0);
    }
    if (err == SAMSA_OK) {
        err = samsa_producer_flush(p, 60000);
    }
    if (err == SAMSA_OK) {
        err = samsa_consumer_commit(c, NULL, 0, false, 30000);
    }
    if (err == SAMSA_OK && got == n) {
        (void)report("raw", &s, (unsigned long long)got, "-");
    } else {
        (void)fprintf(stderr, "samsa-streams-bench: raw: %ld of %ld (%s) %s\n", got, n,
                      samsa_err_str(err), c == NULL || p == NULL ? errstr : "");
        err = err == SAMSA_OK ? SAMSA_ERR_TIMED_OUT : err;
    }
    samsa_consumer_destroy(c);
    samsa_producer_destroy(p);
    return err == SAMSA_OK ? 0 : 1;
}

static bool key_kept(const struct samsa_st_record *rec, void *opaque)
{
    (void)opaque;
    return rec->key.len == 0 || ((const char *)rec->key.data)[rec->key.len - 1] != '0';
}

static int upper(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    char buf[256];
    size_t n = rec->value.len < sizeof buf ? rec->value.len : sizeof buf;
    for (size_t i = 0; i < n; i++) {
        buf[i] = (char)toupper(((const unsigned char *)rec->value.data)[i]);
    }
    return samsa_st_emit(out, rec->key, (struct samsa_st_bytes){buf, n});
}

/* The topology of scenario over input, writing to out; *per_input: the
 * records the runtime takes from its consumer per input record. */
static samsa_st_topology *build(const char *scenario, const char *input, const char *out,
                                long *per_input)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *topics[] = {input};
    samsa_st_stream *s = samsa_st_stream_from(t, topics, 1);
    samsa_st_stream *tail = NULL;
    *per_input = 1;
    if (strcmp(scenario, "stateless") == 0) {
        tail = samsa_st_map_values(samsa_st_filter(s, key_kept, NULL), upper, NULL);
    } else if (strcmp(scenario, "wordcount") == 0) {
        samsa_st_stream *words = samsa_st_flat_map(s, example_split_words, NULL);
        tail = samsa_st_to_stream(
            samsa_st_count(samsa_st_group_by_key(words, "counts"), "counts"));
        *per_input = 1 + WORDS_PER_LINE;
    } else if (strcmp(scenario, "windowed") == 0) {
        struct samsa_st_windows w = {.size_ms = 1000, .advance_ms = 1000, .grace_ms = 60000};
        tail = samsa_st_to_stream(samsa_st_count(
            samsa_st_windowed_by(samsa_st_group_by_key(s, "by-key"), &w), "windows"));
    } else {
        samsa_st_topology_destroy(t);
        return NULL;
    }
    if (samsa_st_to(tail, out) != SAMSA_OK) {
        const char *msg = "?";
        (void)samsa_st_topology_error(t, &msg);
        (void)fprintf(stderr, "samsa-streams-bench: topology: %s\n", msg);
        samsa_st_topology_destroy(t);
        return NULL;
    }
    return t;
}

static int run_streams(const char *brokers, const char *scenario, const char *input, long n,
                       const char *app_id, const char *state_dir)
{
    char errstr[512];
    char out[256];
    long per_input = 1;
    (void)snprintf(out, sizeof out, "%s-out", app_id);
    samsa_st_topology *t = build(scenario, input, out, &per_input);
    samsa_conf *conf = t != NULL ? make_conf(brokers) : NULL;
    samsa_st_app *app =
        conf != NULL ? samsa_st_app_new(t, app_id, conf, 1000, errstr, sizeof errstr) : NULL;
    samsa_conf_destroy(conf);
    if (app == NULL) {
        (void)fprintf(stderr, "samsa-streams-bench: %s\n", t != NULL ? errstr : "topology");
        samsa_st_topology_destroy(t);
        return 1;
    }
    int err = state_dir != NULL ? samsa_st_app_set_state_dir(app, state_dir) : SAMSA_OK;
    uint64_t want = (uint64_t)n * (uint64_t)per_input;
    struct span s = {0};
    double deadline = now_s() + TIMEOUT_S;
    while (err == SAMSA_OK && samsa_st_app_processed(app) < want && now_s() < deadline) {
        span_poll(&s);
        int got = samsa_st_app_poll(app, 100);
        if (got < 0) {
            err = got;
        } else if (got > 0) {
            span_got(&s);
        }
    }
    if (err == SAMSA_OK) {
        err = samsa_st_app_commit(app);
    }
    uint64_t done = samsa_st_app_processed(app);
    if (err == SAMSA_OK && done == want) {
        (void)report(scenario, &s, (unsigned long long)done,
                     state_dir != NULL ? "lmdb" : "memory");
    } else {
        (void)fprintf(stderr, "samsa-streams-bench: %s: %llu of %llu records (%s)\n", scenario,
                      (unsigned long long)done, (unsigned long long)want, samsa_err_str(err));
        err = err == SAMSA_OK ? SAMSA_ERR_TIMED_OUT : err;
    }
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    return err == SAMSA_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    long n = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
    if (argc < 5 || n <= 0 || (strcmp(argv[2], "produce") != 0 && argc < 6)) {
        (void)fprintf(stderr,
                      "usage: %s BROKERS produce INPUT N\n"
                      "       %s BROKERS raw|stateless|wordcount|windowed INPUT N APP_ID "
                      "[state.dir=DIR]\n",
                      argv[0], argv[0]);
        return 2;
    }
    if (strcmp(argv[2], "produce") == 0) {
        return produce_input(argv[1], argv[3], n);
    }
    if (strcmp(argv[2], "raw") == 0) {
        return run_raw(argv[1], argv[3], n, argv[5]);
    }
    const char *state_dir = NULL;
    if (argc > 6 && strncmp(argv[6], "state.dir=", 10) == 0) {
        state_dir = argv[6] + 10;
    }
    return run_streams(argv[1], argv[2], argv[3], n, argv[5], state_dir);
}
