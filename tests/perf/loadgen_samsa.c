/*
 * samsa-loadgen-libsamsa: samsa-loadgen's produce and consume modes on libsamsa's
 * public API, so that ci/bench can run the two client libraries side by side on
 * the same broker with the same parameters and read the same JSON line.
 *
 *   samsa-loadgen-libsamsa produce -b HOST:PORT -t TOPIC [options]
 *   samsa-loadgen-libsamsa consume -b HOST:PORT -t TOPIC --partitions N [options]
 *
 * The options and the JSON fields are samsa-loadgen's (tests/perf/README.md), with
 * --set passing libsamsa keys. What differs: no delivery-latency percentiles
 * (libsamsa does not timestamp its records for the application). --queued
 * (both tools) produces every message without serving a delivery report, reads
 * VmRSS and VmHWM once all are queued (queued_rss_kb, queued_hwm_kb, and
 * base_rss_kb before the first produce), then flushes.
 *
 * Exit status: 0 when every message went through, 1 when not, 2 on a usage error.
 */
#define _GNU_SOURCE /* getopt_long */

#include "args.h"
#include "procstat.h"

#include <samsa/samsa.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_SETS 32
#define MAX_COUNT INT64_C(1000000000)
#define MAX_SIZE INT64_C(100000000)
#define MAX_PARTITIONS 100000
#define POOL_BYTES ((size_t)1 << 20)

enum mode { MODE_PRODUCE, MODE_CONSUME };

static const char *const mode_names[] = {
    [MODE_PRODUCE] = "produce",
    [MODE_CONSUME] = "consume",
};

struct opts {
    enum mode mode;
    const char *bootstrap;
    const char *topic;
    const char *label;
    int64_t count;
    int64_t size;
    const char *acks;
    int64_t linger_ms;      /* -1: libsamsa's default */
    int64_t batch_size;     /* -1: libsamsa's default */
    int64_t batch_messages; /* -1: libsamsa's default */
    const char *compression;
    int64_t keys;           /* distinct keys used in turn; 0: null keys */
    int64_t partition;      /* -1: the partitioner decides */
    int64_t chunk;          /* >0: null-key messages go to partitions in turn, chunk each */
    int64_t partitions;     /* consume: partitions 0..N-1 */
    int64_t queue_messages; /* queue.buffering.max.messages */
    bool queued;            /* produce everything before serving any report */
    double timeout_s;
    const char *sets[MAX_SETS];
    size_t nsets;
};

struct result {
    int64_t msgs;
    int64_t bytes;
    int64_t errors;
    double elapsed_s;
    double cpu_s;
    bool complete;
    int64_t base_rss_kb;
    int64_t queued_rss_kb;
    int64_t queued_hwm_kb;
};

static void usage(FILE *to)
{
    fprintf(to,
            "usage: samsa-loadgen-libsamsa MODE -b HOST:PORT -t TOPIC [options]\n"
            "modes:\n"
            "  produce   produce --count messages of --size bytes\n"
            "  consume   consume --count messages from partitions 0..N-1 (assign, no group)\n"
            "options (as samsa-loadgen's):\n"
            "  -b, --bootstrap LIST      bootstrap.servers\n"
            "  -t, --topic NAME          topic\n"
            "  -n, --count N             messages (default 100000)\n"
            "  -s, --size BYTES          value size (default 100)\n"
            "      --acks 0|1|all        acks (default 1)\n"
            "      --linger-ms MS        linger.ms\n"
            "      --batch-size BYTES    batch.size\n"
            "      --batch-messages N    batch.num.messages\n"
            "      --compression CODEC   none, gzip, snappy, lz4, zstd (default none)\n"
            "      --keys K              K distinct keys used in turn (default 0: null keys)\n"
            "      --partition P         produce to partition P only\n"
            "      --chunk C             null keys: C messages to each partition in turn\n"
            "      --partitions N        consume: partitions 0..N-1 (needs the topic's count)\n"
            "      --queue-messages N    queue.buffering.max.messages (default 500000)\n"
            "      --queued              produce all before serving reports; report RSS then\n"
            "      --timeout S           give up after S seconds (default 120)\n"
            "      --set KEY=VALUE       any other libsamsa key (repeatable)\n"
            "      --label TEXT          copied into the JSON line ([A-Za-z0-9_.:-])\n");
}

static int conf_set(samsa_conf *conf, const char *key, const char *value)
{
    char errstr[512];
    if (samsa_conf_set(conf, key, value, errstr, sizeof(errstr)) != SAMSA_OK) {
        fprintf(stderr, "samsa-loadgen-libsamsa: %s=%s: %s\n", key, value, errstr);
        return -1;
    }
    return 0;
}

static int conf_set_i64(samsa_conf *conf, const char *key, int64_t value)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRId64, value);
    return conf_set(conf, key, buf);
}

/* bootstrap, client id, then the --set ones; NULL (said why) on a refused key */
static samsa_conf *base_conf(const struct opts *o)
{
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL || conf_set(conf, "bootstrap.servers", o->bootstrap) != 0 ||
        conf_set(conf, "client.id", "samsa-loadgen-libsamsa") != 0) {
        samsa_conf_destroy(conf);
        return NULL;
    }
    for (size_t i = 0; i < o->nsets; i++) {
        const char *eq = strchr(o->sets[i], '=');
        char key[256];
        size_t klen = eq != NULL ? (size_t)(eq - o->sets[i]) : 0;
        if (eq == NULL || klen == 0 || klen >= sizeof(key)) {
            fprintf(stderr, "samsa-loadgen-libsamsa: --set wants KEY=VALUE, not '%s'\n",
                    o->sets[i]);
            samsa_conf_destroy(conf);
            return NULL;
        }
        memcpy(key, o->sets[i], klen);
        key[klen] = '\0';
        if (conf_set(conf, key, eq + 1) != 0) {
            samsa_conf_destroy(conf);
            return NULL;
        }
    }
    return conf;
}

/* ---- produce ---------------------------------------------------------------------------- */

struct delivery {
    int64_t delivered;
    int64_t failed;
};

static void on_delivery(const struct samsa_delivery *report, void *opaque)
{
    struct delivery *d = opaque;
    if (report->err != SAMSA_OK) {
        if (d->failed == 0) {
            fprintf(stderr, "samsa-loadgen-libsamsa: delivery failed: %s\n",
                    samsa_err_str(report->err));
        }
        d->failed++;
        return;
    }
    d->delivered++;
}

/* The topic's partition count from the cluster's metadata, waiting for every leader;
 * -1 (said why) when the deadline passes first. */
static int32_t wait_for_topic(const struct opts *o, int64_t deadline_ns)
{
    samsa_conf *conf = base_conf(o);
    if (conf == NULL) {
        return -1;
    }
    char errstr[512];
    samsa_admin *a = samsa_admin_new(conf, errstr, sizeof(errstr));
    samsa_conf_destroy(conf);
    if (a == NULL) {
        fprintf(stderr, "samsa-loadgen-libsamsa: admin: %s\n", errstr);
        return -1;
    }
    int32_t found = -1;
    while (found < 0 && perf_now_ns() < deadline_ns) {
        samsa_metadata *md = NULL;
        const char *topics[] = {o->topic};
        if (samsa_admin_metadata(a, topics, 1, 2000, &md) == SAMSA_OK && md->topic_count == 1 &&
            md->topics[0].err == SAMSA_OK && md->topics[0].partition_count > 0) {
            bool leaders = true;
            for (size_t i = 0; i < md->topics[0].partition_count; i++) {
                leaders = leaders && md->topics[0].partitions[i].leader >= 0;
            }
            if (leaders) {
                found = (int32_t)md->topics[0].partition_count;
            }
        }
        samsa_metadata_free(md);
        if (found < 0) {
            usleep(100 * 1000);
        }
    }
    if (found < 0) {
        fprintf(stderr, "samsa-loadgen-libsamsa: topic %s not usable\n", o->topic);
    }
    samsa_admin_destroy(a);
    return found;
}

static samsa_producer *new_producer(const struct opts *o, struct delivery *d)
{
    samsa_conf *conf = base_conf(o);
    if (conf == NULL) {
        return NULL;
    }
    int rc = conf_set(conf, "acks", o->acks);
    rc |= conf_set(conf, "compression.type", o->compression);
    rc |= conf_set_i64(conf, "queue.buffering.max.messages", o->queue_messages);
    if (o->linger_ms >= 0) {
        rc |= conf_set_i64(conf, "linger.ms", o->linger_ms);
    }
    if (o->batch_size >= 0) {
        rc |= conf_set_i64(conf, "batch.size", o->batch_size);
    }
    if (o->batch_messages >= 0) {
        rc |= conf_set_i64(conf, "batch.num.messages", o->batch_messages);
    }
    samsa_producer *p = NULL;
    if (rc == 0) {
        char errstr[512];
        samsa_conf_set_delivery_cb(conf, on_delivery, d);
        p = samsa_producer_new(conf, errstr, sizeof(errstr));
        if (p == NULL) {
            fprintf(stderr, "samsa-loadgen-libsamsa: producer: %s\n", errstr);
        }
    }
    samsa_conf_destroy(conf);
    return p;
}

static int run_produce(const struct opts *o, struct result *r)
{
    int64_t deadline = perf_now_ns() + (int64_t)(o->timeout_s * 1e9);
    int rc = -1;
    struct delivery d = {0};
    samsa_producer *p = NULL;
    unsigned char *pool = malloc(POOL_BYTES + (size_t)o->size);
    if (pool == NULL) {
        fprintf(stderr, "samsa-loadgen-libsamsa: out of memory\n");
        return -1;
    }
    /* the same pool of random lower-case letters as samsa-loadgen's */
    uint64_t rnd = UINT64_C(88172645463325252);
    for (size_t i = 0; i < POOL_BYTES + (size_t)o->size; i++) {
        pool[i] = (unsigned char)('a' + perf_next_random(&rnd) % 26);
    }
    int32_t nparts = wait_for_topic(o, deadline);
    if (nparts < 0) {
        goto out;
    }
    if (o->partition >= nparts) {
        fprintf(stderr, "samsa-loadgen-libsamsa: %s has %" PRId32 " partitions\n", o->topic,
                nparts);
        goto out;
    }
    p = new_producer(o, &d);
    if (p == NULL) {
        goto out;
    }
    r->base_rss_kb = perf_status_kb("VmRSS");

    double cpu0 = perf_cpu_seconds();
    int64_t t0 = perf_now_ns();
    rnd = UINT64_C(0x9E3779B97F4A7C15);
    size_t size = (size_t)o->size;
    int64_t sent = 0;
    for (; sent < o->count; sent++) {
        if ((sent & 1023) == 0 && perf_now_ns() > deadline) {
            fprintf(stderr, "samsa-loadgen-libsamsa: timed out after producing %" PRId64 "\n",
                    sent);
            break;
        }
        char key[32];
        size_t key_len = 0;
        if (o->keys > 0) {
            int kl = snprintf(key, sizeof(key), "key-%08" PRId64, sent % o->keys);
            key_len = kl > 0 ? (size_t)kl : 0;
        }
        struct samsa_record rec = {
            SAMSA_RECORD_INIT,
            .topic = o->topic,
            .partition = o->partition >= 0 ? (int32_t)o->partition : SAMSA_PARTITION_ANY,
            .key = key_len > 0 ? key : NULL,
            .key_len = key_len,
            .value = pool + (size_t)(perf_next_random(&rnd) % POOL_BYTES),
            .value_len = size,
        };
        if (o->chunk > 0 && o->keys == 0 && o->partition < 0) {
            rec.partition = (int32_t)((sent / o->chunk) % nparts);
        }
        int err = samsa_produce(p, &rec);
        while (err == SAMSA_ERR_QUEUE_FULL && !o->queued && perf_now_ns() < deadline) {
            (void)samsa_producer_poll(p, 1); /* queue full: let deliveries drain it */
            err = samsa_produce(p, &rec);
        }
        if (err != SAMSA_OK) {
            fprintf(stderr, "samsa-loadgen-libsamsa: produce: %s\n", samsa_err_str(err));
            break;
        }
        r->bytes += (int64_t)(size + key_len);
        if (!o->queued && (sent & 255) == 0) {
            (void)samsa_producer_poll(p, 0);
        }
    }
    if (o->queued) {
        r->queued_rss_kb = perf_status_kb("VmRSS");
        r->queued_hwm_kb = perf_status_kb("VmHWM");
    }
    int flushed = -1;
    while (samsa_producer_outq_len(p) > 0 && perf_now_ns() < deadline) {
        int64_t left_ms = (deadline - perf_now_ns()) / 1000000;
        flushed = samsa_producer_flush(p, left_ms > 1000 ? 1000 : (int)left_ms);
    }
    if (samsa_producer_outq_len(p) == 0) {
        flushed = 0;
    } else {
        fprintf(stderr, "samsa-loadgen-libsamsa: %zu messages undelivered at the deadline\n",
                samsa_producer_outq_len(p));
    }
    int64_t t1 = perf_now_ns();
    r->cpu_s = perf_cpu_seconds() - cpu0;
    r->elapsed_s = (double)(t1 - t0) / 1e9;
    r->msgs = d.delivered;
    r->errors = d.failed;
    r->complete = sent == o->count && flushed == 0 && d.failed == 0 && d.delivered == o->count;
    rc = r->complete ? 0 : -1;

out:
    if (p != NULL) {
        (void)samsa_producer_close(p, 5000);
        samsa_producer_destroy(p);
    }
    free(pool);
    return rc;
}

/* ---- consume ---------------------------------------------------------------------------- */

static int run_consume(const struct opts *o, struct result *r)
{
    int64_t deadline = perf_now_ns() + (int64_t)(o->timeout_s * 1e9);
    int rc = -1;
    samsa_consumer *c = NULL;
    struct samsa_partition *parts = calloc((size_t)o->partitions, sizeof(*parts));
    samsa_conf *conf = base_conf(o);
    if (parts == NULL || conf == NULL) {
        goto out;
    }
    int32_t nparts = wait_for_topic(o, deadline);
    if (nparts < 0) {
        goto out;
    }
    if (o->partitions > nparts) {
        fprintf(stderr, "samsa-loadgen-libsamsa: %s has %" PRId32 " partitions\n", o->topic,
                nparts);
        goto out;
    }
    char errstr[512];
    c = samsa_consumer_new(conf, errstr, sizeof(errstr));
    if (c == NULL) {
        fprintf(stderr, "samsa-loadgen-libsamsa: consumer: %s\n", errstr);
        goto out;
    }
    for (int64_t i = 0; i < o->partitions; i++) {
        parts[i] = (struct samsa_partition){o->topic, (int32_t)i, SAMSA_OFFSET_BEGINNING};
    }

    double cpu0 = perf_cpu_seconds();
    int64_t t0 = perf_now_ns();
    int64_t t_last = t0;
    int err = samsa_consumer_assign(c, parts, (size_t)o->partitions);
    if (err != SAMSA_OK) {
        fprintf(stderr, "samsa-loadgen-libsamsa: assign: %s\n", samsa_err_str(err));
        goto out;
    }
    while (r->msgs < o->count && perf_now_ns() < deadline) {
        samsa_message *m = samsa_consumer_poll(c, 100);
        if (m == NULL) {
            continue;
        }
        r->msgs++;
        r->bytes += (int64_t)(m->value_len + m->key_len);
        t_last = perf_now_ns();
        samsa_message_free(m);
    }
    r->elapsed_s = (double)(t_last - t0) / 1e9;
    r->cpu_s = perf_cpu_seconds() - cpu0;
    r->complete = r->msgs >= o->count;
    if (!r->complete) {
        fprintf(stderr,
                "samsa-loadgen-libsamsa: consumed %" PRId64 " of %" PRId64 " before the deadline\n",
                r->msgs, o->count);
    }
    rc = r->complete ? 0 : -1;

out:
    samsa_consumer_destroy(c);
    samsa_conf_destroy(conf);
    free(parts);
    return rc;
}

/* ---- results and command line ----------------------------------------------------------- */

static void print_result(const struct opts *o, const struct result *r)
{
    double secs = r->elapsed_s > 0 ? r->elapsed_s : 1e-9;
    printf("{\"tool\":\"samsa-loadgen-libsamsa\",\"mode\":\"%s\",\"label\":\"%s\",\"topic\":\"%s\"",
           mode_names[o->mode], o->label, o->topic);
    printf(",\"complete\":%s,\"msgs\":%" PRId64 ",\"bytes\":%" PRId64 ",\"errors\":%" PRId64,
           r->complete ? "true" : "false", r->msgs, r->bytes, r->errors);
    printf(",\"elapsed_s\":%.6f,\"msgs_per_s\":%.1f,\"mb_per_s\":%.3f,\"client_cpu_s\":%.3f",
           r->elapsed_s, (double)r->msgs / secs, (double)r->bytes / secs / 1e6, r->cpu_s);
    if (o->mode == MODE_PRODUCE) {
        printf(",\"size\":%" PRId64 ",\"acks\":\"%s\",\"linger_ms\":%" PRId64
               ",\"batch_size\":%" PRId64 ",\"batch_messages\":%" PRId64
               ",\"compression\":\"%s\",\"keys\":%" PRId64,
               o->size, o->acks, o->linger_ms, o->batch_size, o->batch_messages, o->compression,
               o->keys);
        if (o->queued) {
            printf(",\"base_rss_kb\":%" PRId64 ",\"queued_rss_kb\":%" PRId64
                   ",\"queued_hwm_kb\":%" PRId64,
                   r->base_rss_kb, r->queued_rss_kb, r->queued_hwm_kb);
        }
    } else {
        printf(",\"partitions\":%" PRId64, o->partitions);
    }
    printf("}\n");
    fflush(stdout);
}

enum {
    OPT_ACKS = 256,
    OPT_LINGER,
    OPT_BATCH_SIZE,
    OPT_BATCH_MESSAGES,
    OPT_COMPRESSION,
    OPT_KEYS,
    OPT_PARTITION,
    OPT_CHUNK,
    OPT_PARTITIONS,
    OPT_QUEUE,
    OPT_QUEUED,
    OPT_TIMEOUT,
    OPT_SET,
    OPT_LABEL,
    OPT_HELP,
};

static const struct option long_opts[] = {
    {"bootstrap", required_argument, NULL, 'b'},
    {"topic", required_argument, NULL, 't'},
    {"count", required_argument, NULL, 'n'},
    {"size", required_argument, NULL, 's'},
    {"acks", required_argument, NULL, OPT_ACKS},
    {"linger-ms", required_argument, NULL, OPT_LINGER},
    {"batch-size", required_argument, NULL, OPT_BATCH_SIZE},
    {"batch-messages", required_argument, NULL, OPT_BATCH_MESSAGES},
    {"compression", required_argument, NULL, OPT_COMPRESSION},
    {"keys", required_argument, NULL, OPT_KEYS},
    {"partition", required_argument, NULL, OPT_PARTITION},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"partitions", required_argument, NULL, OPT_PARTITIONS},
    {"queue-messages", required_argument, NULL, OPT_QUEUE},
    {"queued", no_argument, NULL, OPT_QUEUED},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"set", required_argument, NULL, OPT_SET},
    {"label", required_argument, NULL, OPT_LABEL},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Parses argv into *o. 0 on success, 1 when help was printed, 2 on a usage error. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    static const char *const acks_names[] = {"0", "1", "-1", "all", NULL};
    static const char *const codec_names[] = {"none", "gzip", "snappy", "lz4", "zstd", NULL};
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 1;
    }
    if (strcmp(argv[1], "produce") == 0) {
        o->mode = MODE_PRODUCE;
    } else if (strcmp(argv[1], "consume") == 0) {
        o->mode = MODE_CONSUME;
    } else {
        fprintf(stderr, "samsa-loadgen-libsamsa: unknown mode '%s' (try --help)\n", argv[1]);
        return 2;
    }
    optind = 2;
    for (;;) {
        int c = getopt_long(argc, argv, "b:t:n:s:", long_opts, NULL);
        if (c == -1) {
            break;
        }
        int bad = 0;
        switch (c) {
        case 'b':
            o->bootstrap = optarg;
            break;
        case 't':
            o->topic = optarg;
            break;
        case 'n':
            bad = perf_parse_i64(optarg, 1, MAX_COUNT, &o->count);
            break;
        case 's':
            bad = perf_parse_i64(optarg, 0, MAX_SIZE, &o->size);
            break;
        case OPT_ACKS:
            o->acks = optarg;
            bad = perf_one_of(optarg, acks_names) ? 0 : -1;
            break;
        case OPT_LINGER:
            bad = perf_parse_i64(optarg, 0, 900000, &o->linger_ms);
            break;
        case OPT_BATCH_SIZE:
            bad = perf_parse_i64(optarg, 1, INT32_MAX, &o->batch_size);
            break;
        case OPT_BATCH_MESSAGES:
            bad = perf_parse_i64(optarg, 1, 1000000, &o->batch_messages);
            break;
        case OPT_COMPRESSION:
            o->compression = optarg;
            bad = perf_one_of(optarg, codec_names) ? 0 : -1;
            break;
        case OPT_KEYS:
            bad = perf_parse_i64(optarg, 0, INT32_MAX, &o->keys);
            break;
        case OPT_PARTITION:
            bad = perf_parse_i64(optarg, 0, INT32_MAX, &o->partition);
            break;
        case OPT_CHUNK:
            bad = perf_parse_i64(optarg, 0, MAX_COUNT, &o->chunk);
            break;
        case OPT_PARTITIONS:
            bad = perf_parse_i64(optarg, 1, MAX_PARTITIONS, &o->partitions);
            break;
        case OPT_QUEUE:
            bad = perf_parse_i64(optarg, 1, INT32_MAX, &o->queue_messages);
            break;
        case OPT_QUEUED:
            o->queued = true;
            break;
        case OPT_TIMEOUT:
            bad = perf_parse_double(optarg, 0.1, 86400.0, &o->timeout_s);
            break;
        case OPT_SET:
            if (o->nsets >= MAX_SETS) {
                bad = -1;
            } else {
                o->sets[o->nsets++] = optarg;
            }
            break;
        case OPT_LABEL:
            o->label = optarg;
            bad = perf_label_ok(optarg) ? 0 : -1;
            break;
        case OPT_HELP:
            usage(stdout);
            return 1;
        default:
            return 2;
        }
        if (bad != 0) {
            fprintf(stderr, "samsa-loadgen-libsamsa: bad value '%s' for an option (try --help)\n",
                    optarg);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "samsa-loadgen-libsamsa: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (o->bootstrap == NULL || o->topic == NULL || !perf_label_ok(o->topic)) {
        fprintf(stderr, "samsa-loadgen-libsamsa: --bootstrap and --topic ([A-Za-z0-9_.-]) are "
                        "required\n");
        return 2;
    }
    if (o->mode == MODE_CONSUME && o->partitions <= 0) {
        fprintf(stderr, "samsa-loadgen-libsamsa: consume needs --partitions\n");
        return 2;
    }
    if (o->queued && o->queue_messages < o->count) {
        /* every message must fit in the queue at once */
        o->queue_messages = o->count;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {
        .label = "",
        .count = 100000,
        .size = 100,
        .acks = "1",
        .linger_ms = -1,
        .batch_size = -1,
        .batch_messages = -1,
        .compression = "none",
        .partition = -1,
        .queue_messages = 500000,
        .timeout_s = 120.0,
    };
    int prc = parse_args(argc, argv, &o);
    if (prc != 0) {
        return prc == 1 ? 0 : 2;
    }
    struct result r = {0};
    int rc = o.mode == MODE_PRODUCE ? run_produce(&o, &r) : run_consume(&o, &r);
    print_result(&o, &r);
    return rc == 0 ? 0 : 1;
}
