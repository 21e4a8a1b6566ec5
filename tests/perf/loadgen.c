/*
 * samsa-loadgen: a Kafka load generator on librdkafka's public API, the same
 * client against any broker (samsa-broker, librdkafka's mock cluster, Kafka).
 *
 *   samsa-loadgen produce -b HOST:PORT -t TOPIC [options]
 *   samsa-loadgen consume -b HOST:PORT -t TOPIC [options]
 *   samsa-loadgen e2e     -b HOST:PORT -t TOPIC [options]
 *   samsa-loadgen create  -b HOST:PORT -t TOPIC --partitions N [--replication-factor R]
 *                         [--topic-config KEY=VALUE]...
 *
 * Each run prints exactly one line of JSON on stdout (the results); progress and
 * errors go to stderr. Exit status: 0 when every message went through, 1 when the
 * run failed or timed out (the JSON line still says how far it got), 2 on a usage
 * error.
 *
 * Latencies: delivery latency is librdkafka's own per-message latency (from
 * produce() to the broker's acknowledgement, rd_kafka_message_latency), so it does
 * not depend on how often the application polls. End-to-end latency (e2e mode)
 * is from produce() to the moment a consumer in this process receives the message;
 * the send time travels in the first 8 bytes of the value (CLOCK_MONOTONIC).
 */
#define _GNU_SOURCE /* getopt_long, clock_nanosleep */

#include "args.h"
#include "procstat.h"
#include "latency.h"

#include <librdkafka/rdkafka.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_SETS 32
#define MAX_TOPIC_CONFIGS 16
#define MAX_ASSIGN 100000
#define MAX_COUNT INT64_C(1000000000)
#define MAX_SIZE INT64_C(100000000)
#define POOL_BYTES ((size_t)1 << 20)
#define E2E_HEADER 16 /* send time (ns) and sequence number, both little-endian */
#define E2E_WARMUP 200

enum mode { MODE_PRODUCE, MODE_CONSUME, MODE_E2E, MODE_CREATE };

static const char *const mode_names[] = {
    [MODE_PRODUCE] = "produce",
    [MODE_CONSUME] = "consume",
    [MODE_E2E] = "e2e",
    [MODE_CREATE] = "create",
};

struct opts {
    enum mode mode;
    const char *bootstrap;
    const char *topic;
    const char *label;
    int64_t count;          /* messages to produce or consume */
    int64_t size;           /* value bytes per message */
    const char *acks;       /* as librdkafka spells it: 0, 1, all */
    int64_t linger_ms;      /* -1: librdkafka's default */
    int64_t batch_size;     /* -1: librdkafka's default */
    int64_t batch_messages; /* -1: librdkafka's default */
    const char *compression;
    int64_t keys;           /* distinct keys, used in turn; 0: null keys */
    int64_t partition;      /* produce to this partition; -1: the partitioner decides */
    int64_t chunk;          /* >0: null-key messages go to partitions in turn, chunk each */
    int64_t partitions;     /* create: partition count; consume: 0..N-1 unless --assign */
    int64_t replication;    /* create: replication factor */
    const char *assign;     /* consume: partition list such as 0-31 or 0,3,5 */
    const char *offset;     /* consume: beginning or end */
    double rate;            /* messages per second; 0: as fast as possible */
    int64_t queue_messages; /* queue.buffering.max.messages */
    int64_t fetch_wait_ms;  /* fetch.wait.max.ms; -1: librdkafka's default */
    bool queued;            /* produce everything before serving any report */
    int64_t txn_size;       /* >0: transactions of this many messages (needs
                             * --set transactional.id=...) */
    double timeout_s;       /* the whole run */
    const char *sets[MAX_SETS]; /* extra librdkafka properties, key=value */
    size_t nsets;
    const char *topic_configs[MAX_TOPIC_CONFIGS]; /* create: the topic's configs, key=value */
    size_t ntopic_configs;
};

struct result {
    int64_t msgs;
    int64_t bytes;
    int64_t errors;
    double elapsed_s;
    double cpu_s;
    bool complete;
    struct perf_latency dr;  /* delivery latency, us */
    struct perf_latency e2e; /* end-to-end latency, us */
    int64_t base_rss_kb;     /* --queued: VmRSS before the first produce */
    int64_t queued_rss_kb;   /* --queued: VmRSS and VmHWM once every message is queued */
    int64_t queued_hwm_kb;
};

static void usage(FILE *to)
{
    fprintf(to,
            "usage: samsa-loadgen MODE -b HOST:PORT -t TOPIC [options]\n"
            "modes:\n"
            "  produce   produce --count messages of --size bytes\n"
            "  consume   consume --count messages from --assign/--partitions (assign, no group)\n"
            "  e2e       produce at --rate while a consumer in this process reads them back\n"
            "  create    create TOPIC with --partitions partitions, wait for their leaders\n"
            "            (and, replicated, for every replica in the ISR)\n"
            "options:\n"
            "  -b, --bootstrap LIST      bootstrap.servers\n"
            "  -t, --topic NAME          topic\n"
            "  -n, --count N             messages (default 100000)\n"
            "  -s, --size BYTES          value size (default 100; e2e needs >= 16)\n"
            "      --acks 0|1|all        acks (default 1)\n"
            "      --linger-ms MS        linger.ms\n"
            "      --batch-size BYTES    batch.size\n"
            "      --batch-messages N    batch.num.messages\n"
            "      --compression CODEC   none, gzip, snappy, lz4, zstd (default none)\n"
            "      --keys K              K distinct keys used in turn (default 0: null keys)\n"
            "      --partition P         produce to partition P only\n"
            "      --chunk C             null keys: C messages to each partition in turn\n"
            "      --partitions N        create: partition count; consume: partitions 0..N-1\n"
            "      --replication-factor R  create: replicas per partition (default 1)\n"
            "      --topic-config KEY=VALUE  create: a config of the topic (repeatable)\n"
            "      --assign LIST         consume: partitions such as 0-31 or 0,3,5\n"
            "      --offset beginning|end  consume: where to start (default beginning)\n"
            "      --rate R              messages per second (default 0: unlimited)\n"
            "      --queue-messages N    queue.buffering.max.messages (default 500000)\n"
            "      --queued              produce: queue every message before serving any\n"
            "                            delivery report, report VmRSS/VmHWM then, flush\n"
            "      --txn-size N          produce: transactions of N messages each, committed\n"
            "                            in turn (with --set transactional.id=ID)\n"
            "      --fetch-wait-ms MS    fetch.wait.max.ms for consumers\n"
            "      --timeout S           give up after S seconds (default 120)\n"
            "      --set KEY=VALUE       any other librdkafka property (repeatable)\n"
            "      --label TEXT          copied into the JSON line ([A-Za-z0-9_.:-])\n");
}

static void sleep_until_ns(int64_t when)
{
    struct timespec ts = {
        .tv_sec = (time_t)(when / INT64_C(1000000000)),
        .tv_nsec = (long)(when % INT64_C(1000000000)),
    };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (size_t i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

/* Sets one property; prints librdkafka's reason and returns -1 when it is refused. */
static int conf_set(rd_kafka_conf_t *conf, const char *key, const char *value)
{
    char errstr[512];
    if (rd_kafka_conf_set(conf, key, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "samsa-loadgen: %s=%s: %s\n", key, value, errstr);
        return -1;
    }
    return 0;
}

static int conf_set_i64(rd_kafka_conf_t *conf, const char *key, int64_t value)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRId64, value);
    return conf_set(conf, key, buf);
}

/*
 * Splits "KEY=VALUE" into key (copied, NUL-terminated, at most cap - 1 bytes) and
 * *value (pointing into kv). 0 on success, -1 without a '=' or with an empty or
 * too long key.
 */
static int split_kv(const char *kv, char *key, size_t cap, const char **value)
{
    const char *eq = strchr(kv, '=');
    size_t klen = eq != NULL ? (size_t)(eq - kv) : 0;
    if (eq == NULL || klen == 0 || klen >= cap) {
        return -1;
    }
    memcpy(key, kv, klen);
    key[klen] = '\0';
    *value = eq + 1;
    return 0;
}

/* The properties every handle starts with: bootstrap, client id, then the --set ones. */
static rd_kafka_conf_t *base_conf(const struct opts *o)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (conf_set(conf, "bootstrap.servers", o->bootstrap) != 0 ||
        conf_set(conf, "client.id", "samsa-loadgen") != 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    for (size_t i = 0; i < o->nsets; i++) {
        char key[256];
        const char *value = NULL;
        if (split_kv(o->sets[i], key, sizeof(key), &value) != 0) {
            fprintf(stderr, "samsa-loadgen: --set wants KEY=VALUE, not '%s'\n", o->sets[i]);
            rd_kafka_conf_destroy(conf);
            return NULL;
        }
        if (conf_set(conf, key, value) != 0) {
            rd_kafka_conf_destroy(conf);
            return NULL;
        }
    }
    return conf;
}

/* Creates a handle; conf is consumed whether or not this succeeds. */
static rd_kafka_t *new_handle(rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
    char errstr[512];
    rd_kafka_t *rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
    if (rk == NULL) {
        fprintf(stderr, "samsa-loadgen: rd_kafka_new: %s\n", errstr);
        rd_kafka_conf_destroy(conf);
    }
    return rk;
}

/*
 * Waits until the topic's metadata lists at least one partition, each with a
 * leader and, when isr > 0, with at least isr replicas in its ISR. Returns the
 * partition count, or -1 when the deadline passes first.
 */
static int32_t wait_for_topic(rd_kafka_t *rk, const char *topic, int32_t isr, int64_t deadline_ns)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    if (rkt == NULL) {
        return -1;
    }
    int32_t found = -1;
    const char *why = "no answer";
    while (found < 0 && perf_now_ns() < deadline_ns) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 2000);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md != NULL) {
            if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
                md->topics[0].partition_cnt > 0) {
                bool leaders = true;
                bool in_sync = true;
                for (int i = 0; i < md->topics[0].partition_cnt; i++) {
                    if (md->topics[0].partitions[i].leader < 0) {
                        leaders = false;
                    }
                    if (md->topics[0].partitions[i].isr_cnt < isr) {
                        in_sync = false;
                    }
                }
                if (!leaders) {
                    why = "a partition without a leader";
                } else if (!in_sync) {
                    why = "a partition with fewer replicas in its ISR than its replication factor";
                } else {
                    found = md->topics[0].partition_cnt;
                }
            } else if (md->topic_cnt == 1) {
                why = rd_kafka_err2str(md->topics[0].err);
            }
        } else {
            why = rd_kafka_err2str(err);
        }
        if (md != NULL) {
            rd_kafka_metadata_destroy(md);
        }
        if (found < 0) {
            usleep(100 * 1000);
        }
    }
    if (found < 0) {
        fprintf(stderr, "samsa-loadgen: topic %s not usable: %s\n", topic, why);
    }
    rd_kafka_topic_destroy(rkt);
    return found;
}

/* ---- produce ---------------------------------------------------------------------------- */

/* State the delivery report callback updates; it runs on the thread that polls (main). */
struct delivery {
    struct perf_latency *dr;
    int64_t delivered;
    int64_t failed;
};

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    struct delivery *d = opaque;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (d->failed == 0) {
            fprintf(stderr, "samsa-loadgen: delivery failed: %s\n", rd_kafka_err2str(m->err));
        }
        d->failed++;
        return;
    }
    d->delivered++;
    perf_latency_add(d->dr, rd_kafka_message_latency(m));
}

/* The e2e consumer thread: reads everything produced after its start offsets. */
struct e2e_consumer {
    rd_kafka_t *rk;
    int64_t expect;           /* warm-up plus measured messages */
    struct perf_latency *e2e; /* measured messages only */
    atomic_llong received;
    atomic_bool stop;
    int64_t errors;
};

static void *e2e_consume(void *arg)
{
    struct e2e_consumer *c = arg;
    while (!atomic_load(&c->stop) && atomic_load(&c->received) < c->expect) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c->rk, 100);
        if (m == NULL) {
            continue;
        }
        int64_t now = perf_now_ns();
        if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                if (c->errors == 0) {
                    fprintf(stderr, "samsa-loadgen: e2e consumer: %s\n",
                            rd_kafka_message_errstr(m));
                }
                c->errors++;
            }
        } else if (m->len >= E2E_HEADER) {
            const unsigned char *p = m->payload;
            int64_t sent = (int64_t)get_le64(p);
            uint64_t seq = get_le64(p + 8);
            if (seq >= E2E_WARMUP) {
                perf_latency_add(c->e2e, (now - sent) / 1000);
            }
            atomic_fetch_add(&c->received, 1);
        }
        rd_kafka_message_destroy(m);
    }
    return NULL;
}

static rd_kafka_t *new_consumer(const struct opts *o)
{
    rd_kafka_conf_t *conf = base_conf(o);
    if (conf == NULL) {
        return NULL;
    }
    char group[64];
    /* assign() needs a group id; nothing is committed and no group is joined */
    snprintf(group, sizeof(group), "samsa-loadgen-%ld", (long)getpid());
    if (conf_set(conf, "group.id", group) != 0 ||
        conf_set(conf, "enable.auto.commit", "false") != 0 ||
        conf_set(conf, "enable.auto.offset.store", "false") != 0 ||
        conf_set(conf, "enable.partition.eof", "false") != 0 ||
        (o->fetch_wait_ms >= 0 && conf_set_i64(conf, "fetch.wait.max.ms", o->fetch_wait_ms) != 0)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_t *rk = new_handle(RD_KAFKA_CONSUMER, conf);
    if (rk != NULL) {
        rd_kafka_poll_set_consumer(rk);
    }
    return rk;
}

/* Assigns partitions 0..n-1 of the topic at their current end offsets. */
static int assign_at_end(rd_kafka_t *rk, const char *topic, int32_t n)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(n);
    int rc = 0;
    for (int32_t p = 0; p < n && rc == 0; p++) {
        int64_t lo = 0;
        int64_t hi = 0;
        rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 5000);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            fprintf(stderr, "samsa-loadgen: watermarks of %s [%" PRId32 "]: %s\n", topic, p,
                    rd_kafka_err2str(err));
            rc = -1;
        } else {
            rd_kafka_topic_partition_list_add(list, topic, p)->offset = hi;
        }
    }
    if (rc == 0) {
        rd_kafka_resp_err_t err = rd_kafka_assign(rk, list);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            fprintf(stderr, "samsa-loadgen: assign: %s\n", rd_kafka_err2str(err));
            rc = -1;
        }
    }
    rd_kafka_topic_partition_list_destroy(list);
    return rc;
}

static rd_kafka_t *new_producer(const struct opts *o, struct delivery *d)
{
    rd_kafka_conf_t *conf = base_conf(o);
    if (conf == NULL) {
        return NULL;
    }
    int rc = conf_set(conf, "acks", o->acks);
    rc |= conf_set(conf, "compression.codec", o->compression);
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
    if (rc != 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, d);
    return new_handle(RD_KAFKA_PRODUCER, conf);
}

/*
 * Produces messages [first, first + n) at o->rate (0: unlimited), polling for
 * delivery reports as it goes. Returns the number handed to librdkafka; stops
 * early at deadline_ns or on a produce error.
 */
static int64_t produce_range(const struct opts *o, rd_kafka_t *rk, rd_kafka_topic_t *rkt,
                             int32_t nparts, const unsigned char *pool, unsigned char *scratch,
                             int64_t first, int64_t n, bool stamp, int64_t deadline_ns,
                             int64_t *bytes)
{
    uint64_t rnd = UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)first;
    int64_t t0 = perf_now_ns();
    size_t size = (size_t)o->size;
    int32_t partition = o->partition >= 0 ? (int32_t)o->partition : RD_KAFKA_PARTITION_UA;
    int64_t i = 0;
    for (; i < n; i++) {
        if (o->rate > 0) {
            int64_t due = t0 + (int64_t)((double)i * 1e9 / o->rate);
            if (perf_now_ns() < due) {
                sleep_until_ns(due);
            }
        }
        if ((i & 1023) == 0 && perf_now_ns() > deadline_ns) {
            fprintf(stderr, "samsa-loadgen: timed out after producing %" PRId64 "\n", i);
            break;
        }
        const unsigned char *value = pool + (size_t)(perf_next_random(&rnd) % POOL_BYTES);
        if (stamp) {
            memcpy(scratch, value, size);
            put_le64(scratch, (uint64_t)perf_now_ns());
            put_le64(scratch + 8, (uint64_t)(first + i));
            value = scratch;
        }
        char key[32];
        size_t key_len = 0;
        if (o->keys > 0) {
            int kl = snprintf(key, sizeof(key), "key-%08" PRId64, (first + i) % o->keys);
            key_len = kl > 0 ? (size_t)kl : 0;
        }
        if (o->chunk > 0 && o->keys == 0 && o->partition < 0) {
            partition = (int32_t)(((first + i) / o->chunk) % nparts);
        }
        for (;;) {
            /* RD_KAFKA_MSG_F_COPY: librdkafka copies value and key before returning */
            int rc = rd_kafka_produce(rkt, partition, RD_KAFKA_MSG_F_COPY, (void *)(uintptr_t)value,
                                      size, key_len > 0 ? key : NULL, key_len, NULL);
            if (rc == 0) {
                break;
            }
            rd_kafka_resp_err_t err = rd_kafka_last_error();
            if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || o->queued) {
                fprintf(stderr, "samsa-loadgen: produce: %s\n", rd_kafka_err2str(err));
                return i;
            }
            rd_kafka_poll(rk, 1); /* queue full: let deliveries drain it */
            if (perf_now_ns() > deadline_ns) {
                fprintf(stderr, "samsa-loadgen: timed out with a full queue\n");
                return i;
            }
        }
        *bytes += (int64_t)(size + key_len);
        if (!o->queued && (o->rate > 0 || (i & 255) == 0)) {
            rd_kafka_poll(rk, 0);
        }
    }
    return i;
}

/* A transactional call's outcome: 0, or -1 with its error printed (and
 * freed). */
static int txn_call(rd_kafka_error_t *err, const char *what)
{
    if (err == NULL) {
        return 0;
    }
    fprintf(stderr, "samsa-loadgen: %s transaction: %s\n", what, rd_kafka_error_string(err));
    rd_kafka_error_destroy(err);
    return -1;
}

/* Flushes until every message is delivered or the deadline passes; 0 when all went out. */
static int flush_all(rd_kafka_t *rk, int64_t deadline_ns)
{
    while (rd_kafka_outq_len(rk) > 0) {
        int64_t left_ms = (deadline_ns - perf_now_ns()) / 1000000;
        if (left_ms <= 0) {
            fprintf(stderr, "samsa-loadgen: %d messages undelivered at the deadline\n",
                    rd_kafka_outq_len(rk));
            return -1;
        }
        (void)rd_kafka_flush(rk, left_ms > 1000 ? 1000 : (int)left_ms);
    }
    return 0;
}

static int run_produce(const struct opts *o, struct result *r)
{
    int64_t deadline = perf_now_ns() + (int64_t)(o->timeout_s * 1e9);
    bool e2e = o->mode == MODE_E2E;
    int64_t warmup = e2e ? E2E_WARMUP : 0;
    int rc = -1;
    struct delivery d = {.dr = &r->dr, .delivered = 0, .failed = 0};
    unsigned char *pool = NULL;
    unsigned char *scratch = NULL;
    rd_kafka_t *rk = NULL;
    rd_kafka_topic_t *rkt = NULL;
    struct e2e_consumer c = {.rk = NULL, .expect = warmup + o->count, .e2e = &r->e2e, .errors = 0};
    atomic_init(&c.received, 0);
    atomic_init(&c.stop, false);
    pthread_t consumer_thread;
    bool consumer_started = false;

    /* a pool of random lower-case letters (about 4.7 bits per byte, as text compresses) */
    pool = malloc(POOL_BYTES + (size_t)o->size);
    scratch = malloc((size_t)o->size + 1);
    if (pool == NULL || scratch == NULL) {
        fprintf(stderr, "samsa-loadgen: out of memory\n");
        goto out;
    }
    uint64_t rnd = UINT64_C(88172645463325252);
    for (size_t i = 0; i < POOL_BYTES + (size_t)o->size; i++) {
        pool[i] = (unsigned char)('a' + perf_next_random(&rnd) % 26);
    }

    rk = new_producer(o, &d);
    if (rk == NULL) {
        goto out;
    }
    rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    if (rkt == NULL) {
        fprintf(stderr, "samsa-loadgen: topic %s: %s\n", o->topic,
                rd_kafka_err2str(rd_kafka_last_error()));
        goto out;
    }
    int32_t nparts = wait_for_topic(rk, o->topic, 0, deadline);
    if (nparts < 0) {
        goto out;
    }
    if (o->partition >= nparts) {
        fprintf(stderr, "samsa-loadgen: %s has %" PRId32 " partitions\n", o->topic, nparts);
        goto out;
    }

    if (e2e) {
        c.rk = new_consumer(o);
        if (c.rk == NULL || assign_at_end(c.rk, o->topic, nparts) != 0) {
            goto out;
        }
        if (pthread_create(&consumer_thread, NULL, e2e_consume, &c) != 0) {
            fprintf(stderr, "samsa-loadgen: pthread_create failed\n");
            goto out;
        }
        consumer_started = true;
        /* warm-up: connections and the consumer's first fetches, not measured */
        int64_t warm_bytes = 0;
        if (produce_range(o, rk, rkt, nparts, pool, scratch, 0, warmup, true, deadline, &warm_bytes) !=
                warmup ||
            flush_all(rk, deadline) != 0) {
            goto out;
        }
        while (atomic_load(&c.received) < warmup && perf_now_ns() < deadline) {
            usleep(1000);
        }
        if (atomic_load(&c.received) < warmup) {
            fprintf(stderr, "samsa-loadgen: the e2e consumer got %lld of %" PRId64
                            " warm-up messages\n",
                    (long long)atomic_load(&c.received), warmup);
            goto out;
        }
        r->dr.len = 0; /* warm-up deliveries are not measured */
        d.delivered = 0;
    }

    if (o->txn_size > 0 && txn_call(rd_kafka_init_transactions(rk, 30000), "init") != 0) {
        goto out;
    }
    r->base_rss_kb = perf_status_kb("VmRSS");
    double cpu0 = perf_cpu_seconds();
    int64_t t0 = perf_now_ns();
    int64_t sent = 0;
    if (o->txn_size > 0) {
        /* transactions of txn_size messages, each committed before the next
         * begins (commit flushes its messages first) */
        while (sent < o->count) {
            int64_t n = o->count - sent < o->txn_size ? o->count - sent : o->txn_size;
            if (txn_call(rd_kafka_begin_transaction(rk), "begin") != 0) {
                break;
            }
            int64_t got = produce_range(o, rk, rkt, nparts, pool, scratch, warmup + sent, n,
                                        false, deadline, &r->bytes);
            if (got != n || txn_call(rd_kafka_commit_transaction(rk, 60000), "commit") != 0) {
                sent += got;
                break;
            }
            sent += n;
        }
    } else {
        sent = produce_range(o, rk, rkt, nparts, pool, scratch, warmup, o->count, e2e, deadline,
                             &r->bytes);
    }
    if (o->queued) {
        r->queued_rss_kb = perf_status_kb("VmRSS");
        r->queued_hwm_kb = perf_status_kb("VmHWM");
    }
    int flushed = flush_all(rk, deadline);
    int64_t t1 = perf_now_ns();
    if (e2e) {
        while (atomic_load(&c.received) < c.expect && perf_now_ns() < deadline) {
            usleep(1000);
        }
    }
    r->cpu_s = perf_cpu_seconds() - cpu0;
    r->elapsed_s = (double)(t1 - t0) / 1e9;
    r->msgs = d.delivered;
    r->errors = d.failed;
    r->complete = sent == o->count && flushed == 0 && d.failed == 0 && d.delivered == o->count;
    if (e2e) {
        int64_t got = atomic_load(&c.received) - warmup;
        if (got < o->count) {
            fprintf(stderr, "samsa-loadgen: the e2e consumer got %" PRId64 " of %" PRId64 "\n",
                    got, o->count);
            r->complete = false;
        }
    }
    rc = r->complete ? 0 : -1;

out:
    if (consumer_started) {
        atomic_store(&c.stop, true);
        pthread_join(consumer_thread, NULL);
        r->errors += c.errors;
    }
    if (c.rk != NULL) {
        rd_kafka_consumer_close(c.rk);
        rd_kafka_destroy(c.rk);
    }
    if (rkt != NULL) {
        rd_kafka_topic_destroy(rkt);
    }
    if (rk != NULL) {
        (void)rd_kafka_flush(rk, 5000);
        rd_kafka_destroy(rk);
    }
    free(scratch);
    free(pool);
    return rc;
}

/* ---- consume ---------------------------------------------------------------------------- */

static int run_consume(const struct opts *o, struct result *r)
{
    int64_t deadline = perf_now_ns() + (int64_t)(o->timeout_s * 1e9);
    int rc = -1;
    int32_t *ids = calloc(MAX_ASSIGN, sizeof(*ids));
    size_t nids = 0;
    rd_kafka_topic_partition_list_t *list = NULL;
    rd_kafka_t *rk = NULL;
    if (ids == NULL) {
        fprintf(stderr, "samsa-loadgen: out of memory\n");
        return -1;
    }
    if (o->assign != NULL) {
        if (perf_parse_id_list(o->assign, MAX_ASSIGN, ids, MAX_ASSIGN, &nids) != 0) {
            fprintf(stderr, "samsa-loadgen: bad --assign '%s'\n", o->assign);
            goto out;
        }
    } else {
        for (int64_t p = 0; p < o->partitions; p++) {
            ids[nids++] = (int32_t)p;
        }
    }
    int64_t start = strcmp(o->offset, "end") == 0 ? RD_KAFKA_OFFSET_END : RD_KAFKA_OFFSET_BEGINNING;

    rk = new_consumer(o);
    if (rk == NULL) {
        goto out;
    }
    int32_t nparts = wait_for_topic(rk, o->topic, 0, deadline);
    if (nparts < 0) {
        goto out;
    }
    list = rd_kafka_topic_partition_list_new((int)nids);
    for (size_t i = 0; i < nids; i++) {
        if (ids[i] >= nparts) {
            fprintf(stderr, "samsa-loadgen: %s has %" PRId32 " partitions\n", o->topic, nparts);
            goto out;
        }
        rd_kafka_topic_partition_list_add(list, o->topic, ids[i])->offset = start;
    }

    double cpu0 = perf_cpu_seconds();
    int64_t t0 = perf_now_ns();
    int64_t t_last = t0;
    rd_kafka_resp_err_t err = rd_kafka_assign(rk, list);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "samsa-loadgen: assign: %s\n", rd_kafka_err2str(err));
        goto out;
    }
    while (r->msgs < o->count && perf_now_ns() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (m == NULL) {
            continue;
        }
        if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                if (r->errors == 0) {
                    fprintf(stderr, "samsa-loadgen: consume: %s\n", rd_kafka_message_errstr(m));
                }
                r->errors++;
            }
        } else {
            r->msgs++;
            r->bytes += (int64_t)(m->len + m->key_len);
            t_last = perf_now_ns();
        }
        rd_kafka_message_destroy(m);
    }
    r->elapsed_s = (double)(t_last - t0) / 1e9;
    r->cpu_s = perf_cpu_seconds() - cpu0;
    r->complete = r->msgs >= o->count;
    if (!r->complete) {
        fprintf(stderr, "samsa-loadgen: consumed %" PRId64 " of %" PRId64 " before the deadline\n",
                r->msgs, o->count);
    }
    rc = r->complete ? 0 : -1;

out:
    if (rk != NULL) {
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
    }
    if (list != NULL) {
        rd_kafka_topic_partition_list_destroy(list);
    }
    free(ids);
    return rc;
}

/* ---- create ----------------------------------------------------------------------------- */

static int run_create(const struct opts *o, struct result *r)
{
    int64_t deadline = perf_now_ns() + (int64_t)(o->timeout_s * 1e9);
    int64_t t0 = perf_now_ns();
    int rc = -1;
    char errstr[512];
    rd_kafka_queue_t *q = NULL;
    rd_kafka_NewTopic_t *nt = NULL;
    rd_kafka_event_t *ev = NULL;
    rd_kafka_conf_t *conf = base_conf(o);
    if (conf == NULL) {
        return -1;
    }
    rd_kafka_t *rk = new_handle(RD_KAFKA_PRODUCER, conf);
    if (rk == NULL) {
        return -1;
    }
    q = rd_kafka_queue_new(rk);
    nt = rd_kafka_NewTopic_new(o->topic, (int)o->partitions, (int)o->replication, errstr,
                               sizeof(errstr));
    if (nt == NULL) {
        fprintf(stderr, "samsa-loadgen: create %s: %s\n", o->topic, errstr);
        goto out;
    }
    for (size_t i = 0; i < o->ntopic_configs; i++) {
        char key[256];
        const char *value = NULL;
        if (split_kv(o->topic_configs[i], key, sizeof(key), &value) != 0) {
            fprintf(stderr, "samsa-loadgen: --topic-config wants KEY=VALUE, not '%s'\n",
                    o->topic_configs[i]);
            goto out;
        }
        if (rd_kafka_NewTopic_set_config(nt, key, value) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            fprintf(stderr, "samsa-loadgen: create %s: config %s refused\n", o->topic, key);
            goto out;
        }
    }
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    ev = rd_kafka_queue_poll(q, (int)(o->timeout_s * 1000));
    if (ev == NULL) {
        fprintf(stderr, "samsa-loadgen: create %s: no answer\n", o->topic);
        goto out;
    }
    if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "samsa-loadgen: create %s: %s\n", o->topic,
                rd_kafka_event_error_string(ev));
        goto out;
    }
    const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
    size_t n = 0;
    const rd_kafka_topic_result_t **topics =
        res != NULL ? rd_kafka_CreateTopics_result_topics(res, &n) : NULL;
    for (size_t i = 0; i < n; i++) {
        rd_kafka_resp_err_t err = rd_kafka_topic_result_error(topics[i]);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
            const char *msg = rd_kafka_topic_result_error_string(topics[i]);
            fprintf(stderr, "samsa-loadgen: create %s: %s\n", o->topic,
                    msg != NULL ? msg : rd_kafka_err2str(err));
            goto out;
        }
    }
    /* replicated: every replica in the ISR, so that acks=all runs start at full strength */
    int32_t nparts = wait_for_topic(rk, o->topic, (int32_t)o->replication, deadline);
    if (nparts < 0) {
        goto out;
    }
    if (nparts != o->partitions) {
        fprintf(stderr, "samsa-loadgen: %s has %" PRId32 " partitions, not %" PRId64 "\n",
                o->topic, nparts, o->partitions);
        goto out;
    }
    r->complete = true;
    rc = 0;

out:
    r->elapsed_s = (double)(perf_now_ns() - t0) / 1e9;
    if (ev != NULL) {
        rd_kafka_event_destroy(ev);
    }
    if (nt != NULL) {
        rd_kafka_NewTopic_destroy(nt);
    }
    if (q != NULL) {
        rd_kafka_queue_destroy(q);
    }
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- results ---------------------------------------------------------------------------- */

static void print_pcts(const char *name, struct perf_latency *l)
{
    perf_latency_sort(l);
    printf(",\"%s_samples\":%zu,\"%s_p50_us\":%" PRId64 ",\"%s_p99_us\":%" PRId64
           ",\"%s_p999_us\":%" PRId64 ",\"%s_max_us\":%" PRId64,
           name, l->len, name, perf_latency_pct(l, 50.0), name, perf_latency_pct(l, 99.0), name,
           perf_latency_pct(l, 99.9), name, perf_latency_pct(l, 100.0));
}

static void print_result(const struct opts *o, struct result *r)
{
    double secs = r->elapsed_s > 0 ? r->elapsed_s : 1e-9;
    printf("{\"tool\":\"samsa-loadgen\",\"mode\":\"%s\",\"label\":\"%s\",\"topic\":\"%s\"",
           mode_names[o->mode], o->label, o->topic);
    printf(",\"complete\":%s,\"msgs\":%" PRId64 ",\"bytes\":%" PRId64 ",\"errors\":%" PRId64,
           r->complete ? "true" : "false", r->msgs, r->bytes, r->errors);
    printf(",\"elapsed_s\":%.6f,\"msgs_per_s\":%.1f,\"mb_per_s\":%.3f,\"client_cpu_s\":%.3f",
           r->elapsed_s, (double)r->msgs / secs, (double)r->bytes / secs / 1e6, r->cpu_s);
    if (o->mode == MODE_PRODUCE || o->mode == MODE_E2E) {
        printf(",\"size\":%" PRId64 ",\"acks\":\"%s\",\"linger_ms\":%" PRId64
               ",\"batch_size\":%" PRId64 ",\"batch_messages\":%" PRId64
               ",\"compression\":\"%s\",\"keys\":%" PRId64 ",\"rate\":%.1f",
               o->size, o->acks, o->linger_ms, o->batch_size, o->batch_messages, o->compression,
               o->keys, o->rate);
        print_pcts("dr", &r->dr);
        if (o->queued) {
            printf(",\"base_rss_kb\":%" PRId64 ",\"queued_rss_kb\":%" PRId64
                   ",\"queued_hwm_kb\":%" PRId64,
                   r->base_rss_kb, r->queued_rss_kb, r->queued_hwm_kb);
        }
    }
    if (o->mode == MODE_E2E) {
        print_pcts("e2e", &r->e2e);
    }
    if (o->mode == MODE_CREATE || o->mode == MODE_CONSUME) {
        printf(",\"partitions\":%" PRId64, o->partitions);
    }
    if (o->mode == MODE_CREATE) {
        printf(",\"replication_factor\":%" PRId64, o->replication);
    }
    printf("}\n");
    fflush(stdout);
}

/* ---- command line ----------------------------------------------------------------------- */

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
    OPT_REPLICATION,
    OPT_TOPIC_CONFIG,
    OPT_ASSIGN,
    OPT_OFFSET,
    OPT_RATE,
    OPT_QUEUE,
    OPT_FETCH_WAIT,
    OPT_QUEUED,
    OPT_TXN_SIZE,
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
    {"replication-factor", required_argument, NULL, OPT_REPLICATION},
    {"topic-config", required_argument, NULL, OPT_TOPIC_CONFIG},
    {"assign", required_argument, NULL, OPT_ASSIGN},
    {"offset", required_argument, NULL, OPT_OFFSET},
    {"rate", required_argument, NULL, OPT_RATE},
    {"queue-messages", required_argument, NULL, OPT_QUEUE},
    {"fetch-wait-ms", required_argument, NULL, OPT_FETCH_WAIT},
    {"queued", no_argument, NULL, OPT_QUEUED},
    {"txn-size", required_argument, NULL, OPT_TXN_SIZE},
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
    static const char *const offset_names[] = {"beginning", "end", NULL};
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 1;
    }
    bool known = false;
    for (size_t m = 0; m < sizeof(mode_names) / sizeof(mode_names[0]); m++) {
        if (strcmp(argv[1], mode_names[m]) == 0) {
            o->mode = (enum mode)m;
            known = true;
        }
    }
    if (!known) {
        fprintf(stderr, "samsa-loadgen: unknown mode '%s' (try --help)\n", argv[1]);
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
            bad = perf_parse_i64(optarg, 1, MAX_ASSIGN, &o->partitions);
            break;
        case OPT_REPLICATION:
            bad = perf_parse_i64(optarg, 1, INT16_MAX, &o->replication);
            break;
        case OPT_TOPIC_CONFIG:
            if (o->ntopic_configs >= MAX_TOPIC_CONFIGS || strchr(optarg, '=') == NULL) {
                bad = -1;
            } else {
                o->topic_configs[o->ntopic_configs++] = optarg;
            }
            break;
        case OPT_ASSIGN:
            o->assign = optarg;
            break;
        case OPT_OFFSET:
            o->offset = optarg;
            bad = perf_one_of(optarg, offset_names) ? 0 : -1;
            break;
        case OPT_RATE:
            bad = perf_parse_double(optarg, 0.0, 1e9, &o->rate);
            break;
        case OPT_QUEUE:
            bad = perf_parse_i64(optarg, 1, 10000000, &o->queue_messages);
            break;
        case OPT_FETCH_WAIT:
            bad = perf_parse_i64(optarg, 0, 300000, &o->fetch_wait_ms);
            break;
        case OPT_QUEUED:
            o->queued = true;
            break;
        case OPT_TXN_SIZE:
            bad = perf_parse_i64(optarg, 1, MAX_COUNT, &o->txn_size);
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
            fprintf(stderr, "samsa-loadgen: bad value '%s' for an option (try --help)\n", optarg);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "samsa-loadgen: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (o->bootstrap == NULL || o->topic == NULL) {
        fprintf(stderr, "samsa-loadgen: --bootstrap and --topic are required\n");
        return 2;
    }
    if (!perf_label_ok(o->topic)) {
        fprintf(stderr, "samsa-loadgen: a topic name is [A-Za-z0-9_.-]\n");
        return 2;
    }
    if (o->mode == MODE_E2E && o->size < E2E_HEADER) {
        fprintf(stderr, "samsa-loadgen: e2e needs --size >= %d\n", E2E_HEADER);
        return 2;
    }
    if (o->mode == MODE_CONSUME && o->assign == NULL && o->partitions <= 0) {
        fprintf(stderr, "samsa-loadgen: consume needs --partitions or --assign\n");
        return 2;
    }
    if (o->mode == MODE_CREATE && o->partitions <= 0) {
        fprintf(stderr, "samsa-loadgen: create needs --partitions\n");
        return 2;
    }
    if (o->queued && (o->mode != MODE_PRODUCE || o->rate > 0)) {
        fprintf(stderr, "samsa-loadgen: --queued is for produce at full speed\n");
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
        .keys = 0,
        .partition = -1,
        .chunk = 0,
        .partitions = 0,
        .replication = 1,
        .offset = "beginning",
        .rate = 0.0,
        .queue_messages = 500000,
        .fetch_wait_ms = -1,
        .timeout_s = 120.0,
    };
    int prc = parse_args(argc, argv, &o);
    if (prc != 0) {
        return prc == 1 ? 0 : 2;
    }

    struct result r = {0};
    size_t samples = o.mode == MODE_PRODUCE || o.mode == MODE_E2E ? (size_t)o.count : 0;
    if (perf_latency_init(&r.dr, samples) != 0 ||
        perf_latency_init(&r.e2e, o.mode == MODE_E2E ? samples : 0) != 0) {
        fprintf(stderr, "samsa-loadgen: out of memory for %zu latency samples\n", samples);
        perf_latency_free(&r.dr);
        return 1;
    }
    int rc = -1;
    switch (o.mode) {
    case MODE_PRODUCE:
    case MODE_E2E:
        rc = run_produce(&o, &r);
        break;
    case MODE_CONSUME:
        rc = run_consume(&o, &r);
        break;
    case MODE_CREATE:
        rc = run_create(&o, &r);
        break;
    }
    print_result(&o, &r);
    perf_latency_free(&r.dr);
    perf_latency_free(&r.e2e);
    return rc == 0 ? 0 : 1;
}
