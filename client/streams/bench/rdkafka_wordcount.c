/*
 * samsa-streams-bench-rdkafka: the word count written by hand on
 * librdkafka and LMDB, the loop a C programmer writes without
 * libsamsa-streams, run beside it by `ci/bench --streams`:
 *
 *     samsa-streams-bench-rdkafka BROKERS INPUT N APP_ID STATE_DIR
 *
 * A consumer in group APP_ID reads INPUT from its start; each poll's
 * records (up to 1000) are split into words as the word count example does
 * (runs of letters, digits and '_', lower-cased), each word's count is read,
 * incremented and written in one LMDB write transaction per batch
 * (STATE_DIR/APP_ID, one database, MDB_NOSYNC as the runtime's store) and
 * sent to APP_ID-out (key the word, value the count as a big-endian 64-bit integer, Java's LongSerializer);
 * every second, and at the end, the producer is flushed and the consumer's
 * offsets committed (at-least-once, as the runtime's commit.interval.ms of
 * 1000 in the bench). It does less than the runtime: no repartition topic
 * (one process owns every input partition, so a word's count is in one
 * place), no changelog (the state lives on this disk only), no record of
 * the input positions in the store (a crash double-counts what came after
 * the last commit).
 *
 * Timed from the poll that brought the first record until every line was
 * counted, its counts acknowledged and its offsets committed; prints one
 * JSON line as samsa-streams-bench does ("records": input lines).
 */
#include <librdkafka/rdkafka.h>
#include <lmdb.h>

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench_measure.h"

#define TIMEOUT_S 300
#define BATCH 1000

struct loop {
    rd_kafka_t *consumer, *producer;
    rd_kafka_topic_t *out;
    MDB_env *env;
    MDB_dbi dbi;
};

/* Counts one word in txn and sends the new count. */
static int count_word(struct loop *l, MDB_txn *txn, char *word, size_t len)
{
    MDB_val k = {len, word};
    MDB_val v;
    uint64_t count = 0;
    int rc = mdb_get(txn, l->dbi, &k, &v);
    if (rc == 0 && v.mv_size == sizeof count) {
        (void)memcpy(&count, v.mv_data, sizeof count);
    } else if (rc != MDB_NOTFOUND) {
        return rc;
    }
    count++;
    v.mv_size = sizeof count;
    v.mv_data = &count;
    rc = mdb_put(txn, l->dbi, &k, &v, 0);
    if (rc != 0) {
        return rc;
    }
    unsigned char be[8];
    for (int i = 0; i < 8; i++) {
        be[i] = (unsigned char)(count >> (56 - 8 * i));
    }
    while (rd_kafka_produce(l->out, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, be, sizeof be,
                            word, len, NULL) != 0) {
        if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            return -1;
        }
        (void)rd_kafka_poll(l->producer, 1);
    }
    return 0;
}

static int count_line(struct loop *l, MDB_txn *txn, const rd_kafka_message_t *m)
{
    const char *line = m->payload;
    char word[256];
    size_t len = 0;
    for (size_t i = 0; line != NULL && i <= m->len; i++) {
        unsigned char c = i < m->len ? (unsigned char)line[i] : ' ';
        if (isalnum(c) || c == '_') {
            if (len < sizeof word) {
                word[len++] = (char)tolower(c);
            }
            continue;
        }
        if (len > 0) {
            int rc = count_word(l, txn, word, len);
            if (rc != 0) {
                return rc;
            }
            len = 0;
        }
    }
    return 0;
}

static rd_kafka_t *new_client(rd_kafka_type_t type, const char *brokers, const char *group)
{
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    bool ok = rd_kafka_conf_set(conf, "bootstrap.servers", brokers, errstr, sizeof errstr) ==
              RD_KAFKA_CONF_OK;
    if (ok && group != NULL) {
        ok = rd_kafka_conf_set(conf, "group.id", group, errstr, sizeof errstr) ==
                 RD_KAFKA_CONF_OK &&
             rd_kafka_conf_set(conf, "auto.offset.reset", "earliest", errstr, sizeof errstr) ==
                 RD_KAFKA_CONF_OK &&
             rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof errstr) ==
                 RD_KAFKA_CONF_OK;
    }
    rd_kafka_t *rk = ok ? rd_kafka_new(type, conf, errstr, sizeof errstr) : NULL;
    if (rk == NULL) {
        (void)fprintf(stderr, "samsa-streams-bench-rdkafka: %s\n", errstr);
        if (!ok) {
            rd_kafka_conf_destroy(conf);
        }
    }
    return rk;
}

static int open_store(struct loop *l, const char *state_dir, const char *app_id)
{
    char path[1024];
    (void)snprintf(path, sizeof path, "%s/%s", state_dir, app_id);
    (void)mkdir(state_dir, 0755);
    (void)mkdir(path, 0755);
    MDB_txn *txn = NULL;
    int rc = mdb_env_create(&l->env);
    if (rc == 0) {
        rc = mdb_env_set_mapsize(l->env, (size_t)1 << 30);
    }
    if (rc == 0) {
        /* without fsync, as the runtime's LMDB store (src/store_lmdb.c) */
        rc = mdb_env_open(l->env, path, MDB_NOSYNC, 0644);
    }
    if (rc == 0) {
        rc = mdb_txn_begin(l->env, NULL, 0, &txn);
    }
    if (rc == 0) {
        rc = mdb_dbi_open(txn, NULL, 0, &l->dbi);
    }
    if (rc == 0) {
        rc = mdb_txn_commit(txn);
    } else if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    if (rc != 0) {
        (void)fprintf(stderr, "samsa-streams-bench-rdkafka: %s: %s\n", path, mdb_strerror(rc));
    }
    return rc;
}

/* Flushes the counts sent so far, then commits the consumer's positions. */
static int commit(struct loop *l)
{
    if (rd_kafka_flush(l->producer, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return -1;
    }
    rd_kafka_resp_err_t err = rd_kafka_commit(l->consumer, NULL, 0);
    return err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET ? 0 : -1;
}

static int run(struct loop *l, const char *input, long n)
{
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    (void)rd_kafka_topic_partition_list_add(topics, input, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t serr = rd_kafka_subscribe(l->consumer, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (serr != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return -1;
    }
    long got = 0;
    int rc = 0;
    double t0 = 0;
    double c0 = 0;
    double deadline = now_s() + TIMEOUT_S + (double)n / 20000; /* --full: minutes */
    double next_commit = 0;
    while (rc == 0 && got < n && now_s() < deadline) {
        double tp = now_s();
        double cp = cpu_s();
        rd_kafka_message_t *m = rd_kafka_consumer_poll(l->consumer, 100);
        if (m == NULL) {
            continue;
        }
        if (t0 == 0) {
            t0 = tp;
            c0 = cp;
            next_commit = t0 + 1;
        }
        MDB_txn *txn = NULL;
        rc = mdb_txn_begin(l->env, NULL, 0, &txn);
        for (int k = 0; m != NULL; k++) {
            if (rc == 0 && m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                rc = count_line(l, txn, m);
                got++;
            }
            rd_kafka_message_destroy(m);
            m = rc == 0 && got < n && k < BATCH - 1 ? rd_kafka_consumer_poll(l->consumer, 0)
                                                    : NULL;
        }
        if (txn != NULL) {
            rc = rc == 0 ? mdb_txn_commit(txn) : (mdb_txn_abort(txn), rc);
        }
        (void)rd_kafka_poll(l->producer, 0);
        if (rc == 0 && now_s() >= next_commit) {
            rc = commit(l);
            next_commit = now_s() + 1;
        }
    }
    if (rc == 0) {
        rc = commit(l);
    }
    if (rc != 0 || got != n) {
        (void)fprintf(stderr, "samsa-streams-bench-rdkafka: %ld of %ld lines (%d)\n", got, n,
                      rc);
        return -1;
    }
    double secs = now_s() - t0;
    double cpu = cpu_s() - c0;
    (void)printf("{\"scenario\":\"diy-rdkafka\",\"store\":\"lmdb\",\"records\":%ld,\"lines\":%ld,"
                 "\"seconds\":%.3f,\"records_per_s\":%.0f,\"cpu_s\":%.3f,"
                 "\"cpu_s_per_million\":%.3f,\"rss_kb\":%ld}\n",
                 got, got, secs, (double)got / secs, cpu, cpu * 1e6 / (double)got, hwm_kb());
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    if (argc != 6 || n <= 0) {
        (void)fprintf(stderr, "usage: %s BROKERS INPUT N APP_ID STATE_DIR\n", argv[0]);
        return 2;
    }
    const char *brokers = argv[1];
    const char *app_id = argv[4];
    char out[256];
    (void)snprintf(out, sizeof out, "%s-out", app_id);
    struct loop l = {0};
    l.consumer = new_client(RD_KAFKA_CONSUMER, brokers, app_id);
    l.producer = l.consumer != NULL ? new_client(RD_KAFKA_PRODUCER, brokers, NULL) : NULL;
    l.out = l.producer != NULL ? rd_kafka_topic_new(l.producer, out, NULL) : NULL;
    int rc = l.out != NULL ? open_store(&l, argv[5], app_id) : -1;
    if (rc == 0) {
        (void)rd_kafka_poll_set_consumer(l.consumer);
        rc = run(&l, argv[2], n);
    }
    if (l.consumer != NULL) {
        (void)rd_kafka_consumer_close(l.consumer);
        rd_kafka_destroy(l.consumer);
    }
    if (l.out != NULL) {
        rd_kafka_topic_destroy(l.out);
    }
    if (l.producer != NULL) {
        rd_kafka_destroy(l.producer);
    }
    if (l.env != NULL) {
        mdb_env_close(l.env);
    }
    return rc == 0 ? 0 : 1;
}
