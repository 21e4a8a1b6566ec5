/*
 * A librdkafka program ported to libsamsa by renaming calls: its
 * configuration (librdkafka's property names) and its callbacks (delivery
 * reports, errors, statistics, rebalances, a topic's partitioner) kept as
 * they were. Each libsamsa call has the librdkafka call it replaces in the
 * comment beside it (client/README.md, "For a librdkafka user").
 *
 *   rdkafka_port BROKERS TOPIC COUNT
 *
 * produces COUNT records to TOPIC (two partitions or more: the topic's
 * partitioner puts even keys on partition 0, odd ones on 1), then reads them
 * back as a member of group "port", and prints what it saw. Exit status 0
 * when every record was delivered and read once, 1 otherwise, 2 on usage.
 */
#include <samsa/samsa.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct app {
    int delivered, failed, wrong_partition;
    int errors, stats, assigned, revoked;
    int read, read_twice;
    unsigned char *seen; /* one byte per record: read already */
    int count;
};

/* rd_kafka_conf_set_dr_msg_cb's callback: (rk, rkmessage, opaque) */
static void on_delivery(const struct samsa_delivery *r, void *opaque)
{
    struct app *app = opaque;
    if (r->err != SAMSA_OK) {
        fprintf(stderr, "delivery failed: %s\n", samsa_err_str(r->err));
        app->failed++;
        return;
    }
    app->delivered++;
    /* the key's last digit says where the partitioner put it */
    int digit = r->key_len > 0 ? ((const char *)r->key)[r->key_len - 1] - '0' : 0;
    app->wrong_partition += r->partition != digit % 2;
}

/* rd_kafka_conf_set_error_cb's callback: (rk, err, reason, opaque) */
static void on_error(int err, const char *reason, void *opaque)
{
    struct app *app = opaque;
    app->errors++;
    fprintf(stderr, "error: %s: %s\n", samsa_err_name(err), reason);
}

/* rd_kafka_conf_set_stats_cb's callback: (rk, json, len, opaque), returning 0 */
static void on_stats(const char *json, size_t len, void *opaque)
{
    struct app *app = opaque;
    app->stats++;
    if (len == 0 || json[0] != '{') {
        fprintf(stderr, "statistics: not a JSON object\n");
    }
}

/* rd_kafka_conf_set_rebalance_cb's callback: (rk, err, partitions, opaque),
 * where librdkafka's must call rd_kafka_assign itself; libsamsa applies
 * the assignment and tells */
static void on_rebalance(bool assigned, const struct samsa_partition *parts, size_t count,
                         void *opaque)
{
    struct app *app = opaque;
    (void)parts;
    if (assigned) {
        app->assigned += (int)count;
    } else {
        app->revoked += (int)count;
    }
}

/* rd_kafka_topic_conf_set_partitioner_cb's callback: (rkt, key, keylen,
 * partition_cnt, rkt_opaque, msg_opaque) */
static int32_t by_last_digit(const char *topic, const void *key, size_t key_len,
                             int32_t partition_count, void *cb_opaque, void *msg_opaque)
{
    (void)topic;
    (void)cb_opaque;
    (void)msg_opaque;
    int digit = key_len > 0 ? ((const char *)key)[key_len - 1] - '0' : 0;
    return partition_count >= 2 ? digit % 2 : 0;
}

/* rd_kafka_conf_set(conf, key, value, errstr, sizeof errstr) */
static int set(samsa_conf *conf, const char *key, const char *value)
{
    char errstr[512];
    if (samsa_conf_set(conf, key, value, errstr, sizeof(errstr)) != SAMSA_OK) {
        fprintf(stderr, "%s\n", errstr);
        return -1;
    }
    return 0;
}

static int produce(const char *brokers, const char *topic, struct app *app)
{
    char errstr[512];
    samsa_conf *conf = samsa_conf_new();               /* rd_kafka_conf_new() */
    if (conf == NULL || set(conf, "bootstrap.servers", brokers) != 0 ||
        set(conf, "socket.keepalive.enable", "true") != 0 || set(conf, "linger.ms", "5") != 0 ||
        set(conf, "compression.codec", "lz4") != 0 || set(conf, "client.id", "port") != 0 ||
        set(conf, "statistics.interval.ms", "100") != 0) {
        samsa_conf_destroy(conf);
        return -1;
    }
    samsa_conf_set_delivery_cb(conf, on_delivery, app); /* rd_kafka_conf_set_dr_msg_cb */
    samsa_conf_set_error_cb(conf, on_error, app);       /* rd_kafka_conf_set_error_cb */
    samsa_conf_set_stats_cb(conf, on_stats, app);       /* rd_kafka_conf_set_stats_cb */
    samsa_topic_conf *tconf = samsa_topic_conf_new();  /* rd_kafka_topic_conf_new() */
    samsa_topic_conf_set_partitioner_cb(tconf, by_last_digit, NULL); /* ..._set_partitioner_cb */
    int ok = tconf != NULL && samsa_conf_set_topic_conf(conf, topic, tconf) == SAMSA_OK;
    samsa_topic_conf_destroy(tconf);                   /* rd_kafka_topic_new keeps its own */
    samsa_producer *p = ok ? samsa_producer_new(conf, errstr, sizeof(errstr)) : NULL;
    samsa_conf_destroy(conf); /* rd_kafka_new takes conf; samsa_producer_new copies it */
    if (p == NULL) {                                   /* rd_kafka_new(RD_KAFKA_PRODUCER) */
        fprintf(stderr, "producer: %s\n", ok ? errstr : "topic conf");
        return -1;
    }
    for (int i = 0; i < app->count; i++) {
        char key[16], value[32];
        int kl = snprintf(key, sizeof(key), "k%d", i);
        int vl = snprintf(value, sizeof(value), "record %d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = topic, /* rd_kafka_producev */
                                 .partition = SAMSA_PARTITION_ANY,  /* RD_KAFKA_PARTITION_UA */
                                 .key = key, .key_len = (size_t)kl,
                                 .value = value, .value_len = (size_t)vl};
        int err = samsa_produce(p, &r);
        if (err == SAMSA_ERR_QUEUE_FULL) {             /* RD_KAFKA_RESP_ERR__QUEUE_FULL */
            (void)samsa_producer_poll(p, 100);         /* rd_kafka_poll(rk, 100) */
            i--;
            continue;
        }
        if (err != SAMSA_OK) {
            fprintf(stderr, "produce: %s\n", samsa_err_str(err));
            break;
        }
        (void)samsa_producer_poll(p, 0);               /* rd_kafka_poll(rk, 0) */
    }
    size_t left = samsa_producer_close(p, 10000);      /* rd_kafka_flush(rk, 10000) */
    samsa_producer_destroy(p);                         /* rd_kafka_destroy(rk) */
    return left == 0 ? 0 : -1;
}

static int consume(const char *brokers, const char *topic, struct app *app)
{
    char errstr[512];
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL || set(conf, "bootstrap.servers", brokers) != 0 ||
        set(conf, "group.id", "port") != 0 || set(conf, "auto.offset.reset", "earliest") != 0 ||
        set(conf, "enable.auto.commit", "true") != 0 ||
        set(conf, "statistics.interval.ms", "100") != 0) {
        samsa_conf_destroy(conf);
        return -1;
    }
    samsa_conf_set_error_cb(conf, on_error, app);
    samsa_conf_set_stats_cb(conf, on_stats, app);
    samsa_conf_set_rebalance_cb(conf, on_rebalance, app); /* rd_kafka_conf_set_rebalance_cb */
    samsa_consumer *c = samsa_consumer_new(conf, errstr, sizeof(errstr));
    samsa_conf_destroy(conf);
    if (c == NULL) {                                   /* rd_kafka_new(RD_KAFKA_CONSUMER) */
        fprintf(stderr, "consumer: %s\n", errstr);
        return -1;
    }
    const char *topics[1] = {topic};                   /* rd_kafka_topic_partition_list_add */
    if (samsa_consumer_subscribe(c, topics, 1) != SAMSA_OK) { /* rd_kafka_subscribe */
        samsa_consumer_destroy(c);
        return -1;
    }
    int idle = 0;
    while (app->read < app->count && idle < 150) {     /* 15 s without a record: give up */
        samsa_message *m = samsa_consumer_poll(c, 100); /* rd_kafka_consumer_poll(rk, 100) */
        if (m == NULL) {
            idle++;
            continue;
        }
        idle = 0;
        int i = -1;                                    /* m->payload, m->len */
        if (m->value_len > 7 && m->value_len < 20 && memcmp(m->value, "record ", 7) == 0) {
            char digits[20];
            memcpy(digits, (const char *)m->value + 7, m->value_len - 7);
            digits[m->value_len - 7] = '\0';
            i = (int)strtol(digits, NULL, 10);
        }
        if (i >= 0 && i < app->count) {
            app->read_twice += app->seen[i];
            app->read += !app->seen[i];
            app->seen[i] = 1;
        }
        samsa_message_free(m);                         /* rd_kafka_message_destroy(m) */
    }
    int closed = samsa_consumer_close(c, 10000);       /* rd_kafka_consumer_close(rk) */
    samsa_consumer_destroy(c);                         /* rd_kafka_destroy(rk) */
    return closed == SAMSA_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long count = argc == 4 ? strtol(argv[3], &end, 10) : 0;
    if (argc != 4 || *end != '\0' || count <= 0 || count > 1000000) {
        fprintf(stderr, "usage: rdkafka_port BROKERS TOPIC COUNT\n");
        return 2;
    }
    struct app app = {.count = (int)count};
    app.seen = calloc((size_t)app.count, 1);
    if (app.seen == NULL) {
        return 1;
    }
    int rc = produce(argv[1], argv[2], &app) == 0 && consume(argv[1], argv[2], &app) == 0 ? 0 : 1;
    printf("delivered %d, failed %d, on the wrong partition %d; read %d, twice %d; "
           "assigned %d, revoked %d; statistics %d, errors %d\n",
           app.delivered, app.failed, app.wrong_partition, app.read, app.read_twice,
           app.assigned, app.revoked, app.stats, app.errors);
    if (app.delivered != app.count || app.wrong_partition != 0 || app.read != app.count ||
        app.read_twice != 0 || app.assigned == 0 || app.stats == 0) {
        rc = 1;
    }
    free(app.seen);
    return rc;
}
