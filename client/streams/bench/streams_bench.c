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
 *         then=sigkill: SIGKILL itself once everything is processed and
 *         committed (the word count before `restore`)
 *     samsa-streams-bench BROKERS restore INPUT N APP_ID [state.dir=DIR]
 *         the word count started again after then=sigkill: the time until its
 *         store is restored (run_restore)
 *     samsa-streams-bench BROKERS latency SCENARIO INPUT RATE N APP_ID [state.dir=DIR]
 *         p50/p99 latency at a fixed input rate (run_latency)
 *     KEY=VALUE arguments after APP_ID are set in every libsamsa configuration.
 *
 * "records" counts every record the runtime took from the consumer (input
 * and repartition records); cpu_s is this process's user + system time
 * over the timed span (getrusage, every thread), rss_kb its VmHWM at the end.
 */
#include <samsa/streams.h>

#include <ctype.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_measure.h"
#include "example.h"

#define KEYS 10000
#define WORDS_PER_LINE 3
#define TIMEOUT_S 120 /* and a second per 20,000 records (deadline_for) */

/* When a run over records records gives up: --full's 10 M lines take minutes. */
static double deadline_for(double records)
{
    return now_s() + TIMEOUT_S + records / 20000;
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

/* KEY=VALUE arguments after the scenario's: set in every configuration made */
static const char *conf_args[8];
static int conf_arg_count;

static samsa_conf *make_conf(const char *brokers)
{
    char errstr[256];
    samsa_conf *conf = samsa_conf_new();
    int err = conf != NULL ? samsa_conf_set(conf, "bootstrap.servers", brokers, errstr,
                                            sizeof errstr)
                           : SAMSA_ERR_NOMEM;
    for (int i = 0; err == SAMSA_OK && i < conf_arg_count; i++) {
        char key[128];
        const char *eq = strchr(conf_args[i], '=');
        (void)snprintf(key, sizeof key, "%.*s", (int)(eq - conf_args[i]), conf_args[i]);
        err = samsa_conf_set(conf, key, eq + 1, errstr, sizeof errstr);
    }
    if (err != SAMSA_OK) {
        (void)fprintf(stderr, "samsa-streams-bench: %s\n", conf == NULL ? "no memory" : errstr);
        samsa_conf_destroy(conf);
        return NULL;
    }
    return conf;
}

/* Line i of the input: key k<i % 10000>, 3 words w<0..9999> from *seed. */
static int line_of(long i, unsigned *seed, char *key, size_t key_size, char *line,
                   size_t line_size)
{
    int len = 0;
    (void)snprintf(key, key_size, "k%ld", i % KEYS);
    for (int w = 0; w < WORDS_PER_LINE; w++) {
        *seed = *seed * 1103515245u + 12345u;
        len += snprintf(line + len, line_size - (size_t)len, "%sw%u", w > 0 ? " " : "",
                        (*seed >> 8) % KEYS);
    }
    return len;
}

/* samsa_produce, waiting while the producer's queue is full. */
static int produce_waiting(samsa_producer *p, const struct samsa_record *r)
{
    int err = samsa_produce(p, r);
    while (err == SAMSA_ERR_QUEUE_FULL) {
        (void)samsa_producer_poll(p, 1);
        err = samsa_produce(p, r);
    }
    return err;
}

/* Produces line i of the input (line_of) to topic; timestamp 0: now. */
static int produce_line(samsa_producer *p, const char *topic, long i, unsigned *seed,
                        int64_t timestamp)
{
    char key[16];
    char line[64];
    int len = line_of(i, seed, key, sizeof key, line, sizeof line);
    struct samsa_record r = {SAMSA_RECORD_INIT,
                             .topic = topic,
                             .partition = SAMSA_PARTITION_ANY,
                             .key = key,
                             .key_len = strlen(key),
                             .value = line,
                             .value_len = (size_t)len,
                             .timestamp = timestamp};
    return produce_waiting(p, &r);
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
        err = produce_line(p, topic, i, &seed, base + i);
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
    double deadline = deadline_for((double)n);
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
            err = produce_waiting(p, &r);
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

static void put_be64(unsigned char *p, int64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)((uint64_t)v & 0xff);
        v = (int64_t)((uint64_t)v >> 8);
    }
}

static int64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return (int64_t)v;
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

/* The latency runs' last node: the value with the record's timestamp (the
 * input record's LogAppendTime, carried by the runtime to every record it
 * made from it) appended as 8 bytes big-endian, read back by lat_reader. */
static int stamp_value(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    unsigned char buf[256 + 8];
    size_t n = rec->value.len < 256 ? rec->value.len : 256;
    if (n > 0) {
        (void)memcpy(buf, rec->value.data, n);
    }
    put_be64(buf + n, rec->timestamp);
    return samsa_st_emit(out, rec->key, (struct samsa_st_bytes){buf, n + 8});
}

/* The topology of scenario over input, writing to out; *per_input: the
 * records the runtime takes from its consumer per input record. */
static samsa_st_topology *build(const char *scenario, const char *input, const char *out,
                                long *per_input, bool stamp)
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
    if (stamp) {
        tail = samsa_st_map_values(tail, stamp_value, NULL);
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
                       const char *app_id, const char *state_dir, bool sigkill)
{
    char errstr[512];
    char out[256];
    long per_input = 1;
    (void)snprintf(out, sizeof out, "%s-out", app_id);
    samsa_st_topology *t = build(scenario, input, out, &per_input, false);
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
    double deadline = deadline_for((double)want);
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
        if (sigkill) {
            /* everything processed and committed: killed as kill -9 would,
             * nothing closed (`restore` measures the restart) */
            (void)fflush(stdout);
            (void)kill(getpid(), SIGKILL);
        }
    } else {
        (void)fprintf(stderr, "samsa-streams-bench: %s: %llu of %llu records (%s)\n", scenario,
                      (unsigned long long)done, (unsigned long long)want, samsa_err_str(err));
        err = err == SAMSA_OK ? SAMSA_ERR_TIMED_OUT : err;
    }
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    return err == SAMSA_OK ? 0 : 1;
}

/* ------------------------------------------------------------ latency
 * `latency SCENARIO INPUT RATE N APP_ID [state.dir=DIR]`: INPUT and
 * APP_ID-out have message.timestamp.type=LogAppendTime (ci/bench makes
 * them so). A thread produces one warm-up line, then (once its output was
 * read back: the app's group joined, its tasks restored, every topic on its
 * way fetched from once) N lines at RATE lines a second; the app runs the scenario with stamp_value as its last node
 * (raw: the copy's value stamped the same way); a consumer of APP_ID-out
 * reads every output and takes its LogAppendTime minus the stamped input's
 * LogAppendTime: both the broker's clock, so no clock skew between
 * processes enters. The warm-up's outputs are left out. */

#define OUT_PARTITIONS 4 /* ci/bench creates APP_ID-out and the input with 4 */
#define WARMUP "warmup"

struct lat_feed {
    const char *brokers, *topic;
    long n;
    double rate;
    atomic_int go;   /* set once the warm-up line's output was read back */
    atomic_int done; /* the N lines are acknowledged (1) or failed (-1) */
};

static void *lat_feed_run(void *arg)
{
    struct lat_feed *f = arg;
    char errstr[256];
    samsa_conf *conf = make_conf(f->brokers);
    samsa_producer *p = conf != NULL ? samsa_producer_new(conf, errstr, sizeof errstr) : NULL;
    samsa_conf_destroy(conf);
    if (p == NULL) {
        atomic_store(&f->done, -1);
        return NULL;
    }
    struct samsa_record w = {SAMSA_RECORD_INIT,
                             .topic = f->topic,
                             .partition = SAMSA_PARTITION_ANY,
                             .key = WARMUP,
                             .key_len = strlen(WARMUP),
                             .value = WARMUP,
                             .value_len = strlen(WARMUP)};
    int err = samsa_produce(p, &w);
    if (err == SAMSA_OK) {
        err = samsa_producer_flush(p, 30000);
    }
    double deadline = now_s() + TIMEOUT_S;
    while (err == SAMSA_OK && !atomic_load(&f->go) && now_s() < deadline) {
        (void)samsa_producer_poll(p, 10);
    }
    unsigned seed = 12345;
    double t0 = now_s();
    for (long i = 0; err == SAMSA_OK && i < f->n; i++) {
        double due = t0 + (double)i / f->rate;
        double ahead = due - now_s();
        if (ahead > 0.0005) {
            struct timespec ts = {0, (long)(ahead * 1e9)};
            (void)samsa_producer_poll(p, 0);
            (void)nanosleep(&ts, NULL);
        }
        err = produce_line(p, f->topic, i, &seed, 0);
    }
    if (err == SAMSA_OK) {
        err = samsa_producer_flush(p, 60000);
    }
    samsa_producer_destroy(p);
    atomic_store(&f->done, err == SAMSA_OK ? 1 : -1);
    return NULL;
}

struct lat_reader {
    const char *brokers;
    char topic[256];
    atomic_int stop;
    atomic_int *warm; /* set once the warm-up line's output was read */
    int64_t *ms; /* one latency per output, warm-up left out */
    size_t count, cap;
    long not_append_time; /* outputs without LogAppendTime (the topic misconfigured) */
    atomic_long got;
};

static void *lat_reader_run(void *arg)
{
    struct lat_reader *r = arg;
    char errstr[256];
    samsa_conf *conf = make_conf(r->brokers);
    if (conf != NULL &&
        (samsa_conf_set(conf, "group.id", "streams-bench-latency", errstr, sizeof errstr) ||
         samsa_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof errstr))) {
        samsa_conf_destroy(conf);
        conf = NULL;
    }
    samsa_consumer *c = conf != NULL ? samsa_consumer_new(conf, errstr, sizeof errstr) : NULL;
    samsa_conf_destroy(conf);
    struct samsa_partition parts[OUT_PARTITIONS];
    for (int i = 0; i < OUT_PARTITIONS; i++) {
        parts[i] = (struct samsa_partition){r->topic, i, SAMSA_OFFSET_BEGINNING};
    }
    if (c == NULL || samsa_consumer_assign(c, parts, OUT_PARTITIONS) != SAMSA_OK) {
        (void)fprintf(stderr, "samsa-streams-bench: latency reader: %s\n", errstr);
        samsa_consumer_destroy(c);
        return NULL;
    }
    while (!atomic_load(&r->stop)) {
        samsa_message *m = samsa_consumer_poll(c, 100);
        if (m == NULL) {
            continue;
        }
        /* the windowed count's key is the key and its window's start */
        bool warm = m->key_len >= strlen(WARMUP) && memcmp(m->key, WARMUP, strlen(WARMUP)) == 0;
        if (warm) {
            atomic_store(r->warm, 1);
        }
        if (!warm && m->value_len >= 8) {
            if (m->timestamp_type != 1) {
                r->not_append_time++;
            }
            if (r->count == r->cap) {
                size_t cap = r->cap > 0 ? r->cap * 2 : 65536;
                int64_t *ms = realloc(r->ms, cap * sizeof *ms);
                if (ms == NULL) {
                    samsa_message_free(m);
                    break;
                }
                r->ms = ms;
                r->cap = cap;
            }
            r->ms[r->count++] =
                m->timestamp - get_be64((const unsigned char *)m->value + m->value_len - 8);
            atomic_fetch_add(&r->got, 1);
        }
        samsa_message_free(m);
    }
    samsa_consumer_destroy(c);
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* raw's side of a latency run: every record of input copied to out with
 * its value stamped with its timestamp. */
struct raw_copier {
    samsa_consumer *c;
    samsa_producer *p;
    const char *out;
    uint64_t processed;
};

static int raw_step(struct raw_copier *rc, int timeout_ms)
{
    int err = SAMSA_OK;
    samsa_message *m = samsa_consumer_poll(rc->c, timeout_ms);
    for (int k = 0; m != NULL && err == SAMSA_OK; k++) {
        unsigned char buf[256 + 8];
        size_t n = m->value_len < 256 ? m->value_len : 256;
        if (n > 0) {
            (void)memcpy(buf, m->value, n);
        }
        put_be64(buf + n, m->timestamp);
        struct samsa_record r = {SAMSA_RECORD_INIT,
                                 .topic = rc->out,
                                 .partition = SAMSA_PARTITION_ANY,
                                 .key = m->key,
                                 .key_len = m->key_len,
                                 .value = buf,
                                 .value_len = n + 8};
        err = produce_waiting(rc->p, &r);
        samsa_message_free(m);
        rc->processed++;
        m = k < 999 && err == SAMSA_OK ? samsa_consumer_poll(rc->c, 0) : NULL;
    }
    samsa_message_free(m);
    (void)samsa_producer_poll(rc->p, 0);
    return err;
}

static int run_latency(const char *brokers, const char *scenario, const char *input, double rate,
                       long n, const char *app_id, const char *state_dir)
{
    char errstr[512] = "";
    char out[256];
    long per_input = 1;
    (void)snprintf(out, sizeof out, "%s-out", app_id);
    bool raw = strcmp(scenario, "raw") == 0;
    samsa_st_topology *t = raw ? NULL : build(scenario, input, out, &per_input, true);
    struct raw_copier rc = {.out = out};
    samsa_st_app *app = NULL;
    samsa_conf *conf = raw || t != NULL ? make_conf(brokers) : NULL;
    if (conf != NULL && raw) {
        if (samsa_conf_set(conf, "group.id", app_id, errstr, sizeof errstr) == SAMSA_OK &&
            samsa_conf_set(conf, "auto.offset.reset", "earliest", errstr, sizeof errstr) ==
                SAMSA_OK) {
            rc.p = samsa_producer_new(conf, errstr, sizeof errstr);
            rc.c = rc.p != NULL ? samsa_consumer_new(conf, errstr, sizeof errstr) : NULL;
        }
    } else if (conf != NULL) {
        app = samsa_st_app_new(t, app_id, conf, 1000, errstr, sizeof errstr);
    }
    samsa_conf_destroy(conf);
    int err = app != NULL || rc.c != NULL ? SAMSA_OK : SAMSA_ERR_INVALID_ARG;
    if (err == SAMSA_OK && raw) {
        const char *topics[] = {input};
        err = samsa_consumer_subscribe(rc.c, topics, 1);
    }
    if (err == SAMSA_OK && state_dir != NULL) {
        err = samsa_st_app_set_state_dir(app, state_dir);
    }
    /* outputs expected from the N lines: stateless drops the keys ending
     * in 0 (line i has key k<i % 10000>), the word count has 3 per line */
    long outputs = n;
    if (strcmp(scenario, "stateless") == 0) {
        outputs = n - (n + 9) / 10;
    } else if (strcmp(scenario, "wordcount") == 0) {
        outputs = n * WORDS_PER_LINE;
    }
    struct lat_feed feed = {.brokers = brokers, .topic = input, .n = n, .rate = rate};
    struct lat_reader reader = {.brokers = brokers, .warm = &feed.go};
    (void)snprintf(reader.topic, sizeof reader.topic, "%s", out);
    pthread_t feed_th;
    pthread_t reader_th;
    bool threads = err == SAMSA_OK &&
                   pthread_create(&reader_th, NULL, lat_reader_run, &reader) == 0;
    if (threads && pthread_create(&feed_th, NULL, lat_feed_run, &feed) != 0) {
        atomic_store(&reader.stop, 1);
        (void)pthread_join(reader_th, NULL);
        threads = false;
    }
    err = threads ? err : SAMSA_ERR_INVALID_ARG;
    /* the warm-up line too: one word for the word count */
    uint64_t want = (per_input > 1 ? 2 : 1) + (uint64_t)n * (uint64_t)per_input;
    double deadline = now_s() + TIMEOUT_S + (double)n / rate;
    uint64_t done = 0;
    while (err == SAMSA_OK && now_s() < deadline && atomic_load(&feed.done) >= 0 &&
           (done < want || atomic_load(&feed.done) == 0)) {
        if (raw) {
            err = raw_step(&rc, 100);
            done = rc.processed;
        } else {
            int got = samsa_st_app_poll(app, 100);
            err = got < 0 ? got : SAMSA_OK;
            done = samsa_st_app_processed(app);
        }
    }
    if (err == SAMSA_OK) {
        err = raw ? samsa_producer_flush(rc.p, 60000) : samsa_st_app_commit(app);
    }
    while (err == SAMSA_OK && atomic_load(&reader.got) < outputs && now_s() < deadline) {
        struct timespec ts = {0, 10000000};
        (void)nanosleep(&ts, NULL);
    }
    if (threads) {
        atomic_store(&feed.go, 1);
        (void)pthread_join(feed_th, NULL);
        atomic_store(&reader.stop, 1);
        (void)pthread_join(reader_th, NULL);
    }
    if (err == SAMSA_OK && (done != want || (long)reader.count != outputs ||
                            reader.not_append_time > 0 || feed.done != 1)) {
        (void)fprintf(stderr,
                      "samsa-streams-bench: latency %s: processed %llu of %llu, read %zu of %ld "
                      "outputs (%ld without LogAppendTime), input %s\n",
                      scenario, (unsigned long long)done, (unsigned long long)want,
                      reader.count, outputs, reader.not_append_time,
                      feed.done == 1 ? "sent" : "failed");
        err = SAMSA_ERR_TIMED_OUT;
    }
    if (err == SAMSA_OK) {
        qsort(reader.ms, reader.count, sizeof *reader.ms, cmp_i64);
        size_t c = reader.count;
        (void)printf("{\"scenario\":\"%s\",\"store\":\"%s\",\"mode\":\"latency\","
                     "\"rate\":%.0f,\"lines\":%ld,\"outputs\":%zu,\"p50_ms\":%lld,"
                     "\"p99_ms\":%lld,\"max_ms\":%lld}\n",
                     scenario, raw ? "-" : state_dir != NULL ? "lmdb" : "memory", rate, n, c,
                     (long long)reader.ms[c / 2], (long long)reader.ms[c - 1 - c / 100],
                     (long long)reader.ms[c - 1]);
    } else {
        (void)fprintf(stderr, "samsa-streams-bench: latency %s: %s %s\n", scenario,
                      samsa_err_str(err), errstr);
    }
    free(reader.ms);
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    samsa_consumer_destroy(rc.c);
    samsa_producer_destroy(rc.p);
    return err == SAMSA_OK ? 0 : 1;
}

/* ------------------------------------------------------------ restore
 * `restore INPUT N APP_ID [state.dir=DIR]`: the word count started again
 * after `wordcount ... then=sigkill` (its outputs flushed and its offsets
 * committed, then SIGKILL: no close ran). Timed from before samsa_st_app_new
 * until the store `counts` answers an interactive query for every word of
 * the N lines: a task is queryable only once its stores are restored
 * (app.c's open_task), so that is the restore finished, the group's join
 * included. Prints the seconds, the changelog records replayed
 * (samsa_st_app_restored) and the changelog's records (its end offsets
 * minus its start offsets, 4 partitions). */
static int changelog_records(const char *brokers, const char *topic, long long *records)
{
    char errstr[256];
    samsa_conf *conf = make_conf(brokers);
    samsa_consumer *c = conf != NULL ? samsa_consumer_new(conf, errstr, sizeof errstr) : NULL;
    samsa_conf_destroy(conf);
    int err = c != NULL ? SAMSA_OK : SAMSA_ERR_INVALID_CONFIG;
    *records = 0;
    for (int32_t p = 0; err == SAMSA_OK && p < OUT_PARTITIONS; p++) {
        int64_t low = 0;
        int64_t high = 0;
        err = samsa_consumer_watermarks(c, topic, p, &low, &high, 30000);
        *records += high - low;
    }
    samsa_consumer_destroy(c);
    return err;
}

static int run_restore(const char *brokers, const char *input, long n, const char *app_id,
                       const char *state_dir)
{
    double t0 = now_s();
    char errstr[512] = "";
    char out[256];
    long per_input = 1;
    (void)snprintf(out, sizeof out, "%s-out", app_id);
    samsa_st_topology *t = build("wordcount", input, out, &per_input, false);
    samsa_conf *conf = t != NULL ? make_conf(brokers) : NULL;
    samsa_st_app *app =
        conf != NULL ? samsa_st_app_new(t, app_id, conf, 1000, errstr, sizeof errstr) : NULL;
    samsa_conf_destroy(conf);
    int err = app != NULL ? SAMSA_OK : SAMSA_ERR_INVALID_ARG;
    if (err == SAMSA_OK && state_dir != NULL) {
        err = samsa_st_app_set_state_dir(app, state_dir);
    }
    /* the words the input has: line_of's draws again */
    static bool present[KEYS];
    unsigned seed = 12345;
    for (long i = 0; i < n; i++) {
        char key[16];
        char line[64];
        (void)line_of(i, &seed, key, sizeof key, line, sizeof line);
        for (const char *w = strchr(line, 'w'); w != NULL; w = strchr(w + 1, 'w')) {
            present[strtol(w + 1, NULL, 10) % KEYS] = true;
        }
    }
    long next = 0; /* words below it answered */
    double deadline = deadline_for((double)n * WORDS_PER_LINE);
    while (err == SAMSA_OK && next < KEYS && now_s() < deadline) {
        int got = samsa_st_app_poll(app, 100);
        err = got < 0 ? got : SAMSA_OK;
        while (err == SAMSA_OK && next < KEYS) {
            char word[16];
            int len = snprintf(word, sizeof word, "w%ld", next);
            void *v = NULL;
            size_t vlen = 0;
            int q = present[next] ? samsa_st_app_query(app, "counts",
                                                       (struct samsa_st_bytes){word, (size_t)len},
                                                       &v, &vlen)
                                  : 1;
            free(v);
            if (q < 0) {
                err = q;
            } else if (q == 0) {
                break;
            } else {
                next++;
            }
        }
    }
    double secs = now_s() - t0;
    char changelog[300];
    (void)snprintf(changelog, sizeof changelog, "%s-counts-changelog", app_id);
    long long records = 0;
    if (err == SAMSA_OK && next < KEYS) {
        err = SAMSA_ERR_TIMED_OUT;
    }
    if (err == SAMSA_OK) {
        err = changelog_records(brokers, changelog, &records);
    }
    if (err == SAMSA_OK) {
        (void)printf("{\"scenario\":\"restore\",\"store\":\"%s\",\"mode\":\"restore\","
                     "\"seconds\":%.3f,\"restored\":%llu,\"changelog_records\":%lld,"
                     "\"reprocessed\":%llu}\n",
                     state_dir != NULL ? "lmdb" : "memory", secs,
                     (unsigned long long)samsa_st_app_restored(app), records,
                     (unsigned long long)samsa_st_app_processed(app));
    } else {
        (void)fprintf(stderr, "samsa-streams-bench: restore: %ld of %d words answered: %s %s\n",
                      next, KEYS, samsa_err_str(err), errstr);
    }
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    return err == SAMSA_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[2], "latency") == 0) {

        /* latency SCENARIO INPUT RATE N APP_ID [state.dir=DIR] */
        double rate = argc > 5 ? strtod(argv[5], NULL) : 0;
        long lines = argc > 6 ? strtol(argv[6], NULL, 10) : 0;
        if (argc < 8 || rate <= 0 || lines <= 0) {
            (void)fprintf(stderr, "usage: %s BROKERS latency SCENARIO INPUT RATE N APP_ID "
                                  "[state.dir=DIR]\n", argv[0]);
            return 2;
        }
        const char *dir = argc > 8 && strncmp(argv[8], "state.dir=", 10) == 0 ? argv[8] + 10
                                                                              : NULL;
        return run_latency(argv[1], argv[3], argv[4], rate, lines, argv[7], dir);
    }
    long n = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
    if (argc < 5 || n <= 0 || (strcmp(argv[2], "produce") != 0 && argc < 6)) {
        (void)fprintf(stderr,
                      "usage: %s BROKERS produce INPUT N\n"
                      "       %s BROKERS raw|stateless|wordcount|windowed INPUT N APP_ID "
                      "[state.dir=DIR] [then=sigkill] [KEY=VALUE]...\n"
                      "       %s BROKERS restore INPUT N APP_ID [state.dir=DIR] [KEY=VALUE]...\n",
                      argv[0], argv[0], argv[0]);
        return 2;
    }
    if (strcmp(argv[2], "produce") == 0) {
        return produce_input(argv[1], argv[3], n);
    }
    if (strcmp(argv[2], "raw") == 0) {
        return run_raw(argv[1], argv[3], n, argv[5]);
    }
    const char *state_dir = NULL;
    bool sigkill = false;
    for (int i = 6; i < argc; i++) {
        if (strncmp(argv[i], "state.dir=", 10) == 0) {
            state_dir = argv[i] + 10;
        } else if (strcmp(argv[i], "then=sigkill") == 0) {
            sigkill = true;
        } else if (strchr(argv[i], '=') != NULL && conf_arg_count < 8) {
            conf_args[conf_arg_count++] = argv[i];
        }
    }
    if (strcmp(argv[2], "restore") == 0) {
        return run_restore(argv[1], argv[3], n, argv[5], state_dir);
    }
    return run_streams(argv[1], argv[2], argv[3], n, argv[5], state_dir, sigkill);
}
