/*
 * Unit tests of libsamsa's pure parts: murmur2 and the partitioners (the
 * reference's Java test vectors), configuration parsing and its errors,
 * the per-partition batching and sequence state on a fake clock, the
 * range and roundrobin assignors, and the consumer protocol's bytes; and
 * the real client code, detached (no I/O thread, no sockets), against the
 * model broker of model_broker.h on a fake clock: nodes that die between
 * requests, refuse connections or stop coordinating.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_run.h"
#include "internal.h"
#include "producer/producer.h"

#include "model_broker.h"

#ifdef SAMSA_TEST_JANSSON
#include <jansson.h>
#endif

/* ------------------------------------------------------------ murmur2 */

static void test_murmur2_matches_java_and_librdkafka_vectors(void)
{
    CU_ASSERT_EQUAL(samsa_murmur2("kafka", 5), 0xd067cf64u);
    CU_ASSERT_EQUAL(samsa_murmur2("giberish123456789", 17), 0x8f552b0cu);
    CU_ASSERT_EQUAL(samsa_murmur2("1234", 4), 0x9fc97b14u);
    CU_ASSERT_EQUAL(samsa_murmur2("", 0), 0x106e08d9u);
    CU_ASSERT_EQUAL(samsa_murmur2("fd7af248-ce5c-46a5-93d7-1c0c9005b99d", 36), 0xf73a333au);
    CU_ASSERT_EQUAL(samsa_murmur2("100:48069", 9), 0x3c2c6ab1u);
    CU_ASSERT_EQUAL(samsa_murmur2("354afe16-939a-4ea8-8e17-8bb0840b6886", 36), 0x3aa31c28u);
    CU_ASSERT_EQUAL(samsa_murmur2("TT0124", 6), 0xaa07cf36u);
}

static void test_keys_land_where_java_puts_them(void)
{
    CU_ASSERT_EQUAL(samsa_partition_for_key("fd7af248-ce5c-46a5-93d7-1c0c9005b99d", 36, 32), 26);
    CU_ASSERT_EQUAL(samsa_partition_for_key("100:48069", 9, 12), 9);
    CU_ASSERT_EQUAL(samsa_partition_for_key("354afe16-939a-4ea8-8e17-8bb0840b6886", 36, 10), 4);
    CU_ASSERT_EQUAL(samsa_partition_for_key("f562ac3b-2224-4e25-a0ab-56094e10c239", 36, 10), 5);
    CU_ASSERT_EQUAL(samsa_partition_for_key("TT0124", 6, 15), 10);
    /* toPositive is & 0x7fffffff, not abs: a hash with the top bit set. */
    uint32_t h = samsa_murmur2("fd7af248-ce5c-46a5-93d7-1c0c9005b99d", 36);
    CU_ASSERT((h & 0x80000000u) != 0);
    CU_ASSERT_EQUAL(samsa_partition_for_key("x", 1, 0), -1);
}

static void test_empty_key_is_hashed_null_key_is_sticky(void)
{
    uint64_t rng = 12345;
    struct sc_sticky st = {-1, 0};
    int32_t empty = sc_partition_choose(SC_PART_MURMUR2_RANDOM, "", 0, 7, &st, 10, 1000, &rng);
    CU_ASSERT_EQUAL(empty, (int32_t)((0x106e08d9u & 0x7fffffffu) % 7));
    /* Null keys stay on one partition until batch.size bytes went there. */
    int32_t first = sc_partition_choose(SC_PART_MURMUR2_RANDOM, NULL, 0, 7, &st, 100, 1000, &rng);
    for (int i = 0; i < 9; i++) {
        CU_ASSERT_EQUAL(sc_partition_choose(SC_PART_MURMUR2_RANDOM, NULL, 0, 7, &st, 100, 1000,
                                            &rng),
                        first);
    }
    int32_t next = sc_partition_choose(SC_PART_MURMUR2_RANDOM, NULL, 0, 7, &st, 100, 1000, &rng);
    CU_ASSERT_NOT_EQUAL(next, first);
    CU_ASSERT(next >= 0 && next < 7);
}

static void test_consistent_modes_use_crc32_like_librdkafka(void)
{
    uint64_t rng = 1;
    struct sc_sticky st = {-1, 0};
    /* CRC32("kafka") = 0x3c6d6a8d... computed by zlib; % 10 checked
     * against kp_crc32 itself and the null key going to CRC32 of nothing. */
    CU_ASSERT_EQUAL(sc_partition_choose(SC_PART_CONSISTENT, NULL, 0, 5, &st, 1, 100, &rng), 0);
    int32_t a = sc_partition_choose(SC_PART_CONSISTENT_RANDOM, "kafka", 5, 10, &st, 1, 100, &rng);
    int32_t b = sc_partition_choose(SC_PART_CONSISTENT, "kafka", 5, 10, &st, 1, 100, &rng);
    CU_ASSERT_EQUAL(a, b);
    CU_ASSERT_EQUAL(sc_partition_choose(SC_PART_MURMUR2, NULL, 0, 7, &st, 1, 100, &rng),
                    (int32_t)((0x106e08d9u & 0x7fffffffu) % 7));
}

/* fnv1a and fnv1a_random: librdkafka's rd_fnv1a (the vectors of its
 * unittest_fnv1a, from Go's hash/fnv, made positive as Sarama does). */
static void test_fnv1a_modes_are_librdkafkas(void)
{
    uint64_t rng = 1;
    struct sc_sticky st = {-1, 0};
    static const struct {
        const char *key;
        uint32_t hash;
    } v[] = {{"kafka", 0xd33c4e1u}, {"giberish123456789", 0x77a58295u}, {"1234", 0x23bdd03u},
             {"234", 0x2dea3cd2u}, {"", 0x7ee3623bu}};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        size_t len = strlen(v[i].key);
        for (int32_t n = 1; n < 40; n += 7) {
            CU_ASSERT_EQUAL(sc_partition_choose(SC_PART_FNV1A, v[i].key, len, n, &st, 1, 100, &rng),
                            (int32_t)(v[i].hash % (uint32_t)n));
            CU_ASSERT_EQUAL(sc_partition_choose(SC_PART_FNV1A_RANDOM, v[i].key, len, n, &st, 1,
                                                100, &rng),
                            (int32_t)(v[i].hash % (uint32_t)n));
        }
    }
    /* a null key: fnv1a hashes it as empty, fnv1a_random places it sticky */
    CU_ASSERT_EQUAL(sc_partition_choose(SC_PART_FNV1A, NULL, 0, 13, &st, 1, 100, &rng),
                    (int32_t)(0x7ee3623bu % 13));
    int32_t first = sc_partition_choose(SC_PART_FNV1A_RANDOM, NULL, 0, 13, &st, 60, 100, &rng);
    CU_ASSERT_EQUAL(sc_partition_choose(SC_PART_FNV1A_RANDOM, NULL, 0, 13, &st, 60, 100, &rng),
                    first);
    samsa_conf *conf = samsa_conf_new();
    char err[256];
    CU_ASSERT_EQUAL(samsa_conf_set(conf, "partitioner", "fnv1a_random", err, sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(conf->v.partitioner, SC_PART_FNV1A_RANDOM);
    samsa_conf_destroy(conf);
}

/* ------------------------------------------------------------- config */

static void test_conf_defaults_are_librdkafka_and_java_names(void)
{
    samsa_conf *c = samsa_conf_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    if (c == NULL) {
        return; /* the analyser does not know the FATAL assertion leaves */
    }
    char buf[64];
    size_t n = sizeof(buf);
    CU_ASSERT_EQUAL(samsa_conf_get(c, "acks", buf, &n), SAMSA_OK);
    CU_ASSERT_STRING_EQUAL(buf, "all");
    n = sizeof(buf);
    CU_ASSERT_EQUAL(samsa_conf_get(c, "enable.idempotence", buf, &n), SAMSA_OK);
    CU_ASSERT_STRING_EQUAL(buf, "true");
    n = sizeof(buf);
    CU_ASSERT_EQUAL(samsa_conf_get(c, "partitioner", buf, &n), SAMSA_OK);
    CU_ASSERT_STRING_EQUAL(buf, "murmur2_random");
    CU_ASSERT_EQUAL(c->v.linger_ms, 5);
    CU_ASSERT_EQUAL(c->v.auto_offset_reset, SC_RESET_LATEST);
    CU_ASSERT_EQUAL(c->v.assignor_count, 2);
    CU_ASSERT_EQUAL(c->v.assignors[0], SC_ASSIGNOR_RANGE);
    CU_ASSERT_EQUAL(c->v.queue_max_bytes, 1048576LL * 1024);
    /* The size query: buf NULL gives the size needed. */
    n = 0;
    CU_ASSERT_EQUAL(samsa_conf_get(c, "client.id", NULL, &n), SAMSA_OK);
    CU_ASSERT_EQUAL(n, strlen("samsa") + 1);
    samsa_conf_destroy(c);
}

static void test_conf_accepts_aliases_and_reports_bad_values(void)
{
    samsa_conf *c = samsa_conf_new();
    char err[256];
    CU_ASSERT_EQUAL(samsa_conf_set(c, "metadata.broker.list", "h:1", err, sizeof(err)), SAMSA_OK);
    CU_ASSERT_STRING_EQUAL(c->v.bootstrap_servers, "h:1");
    CU_ASSERT_EQUAL(samsa_conf_set(c, "queue.buffering.max.ms", "50", err, sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(c->v.linger_ms, 50);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "auto.offset.reset", "smallest", err, sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(c->v.auto_offset_reset, SC_RESET_EARLIEST);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "buffer.memory", "4096", err, sizeof(err)), SAMSA_OK);
    CU_ASSERT_EQUAL(c->v.queue_max_bytes, 4096);

    CU_ASSERT_EQUAL(samsa_conf_set(c, "no.such.key", "1", err, sizeof(err)),
                    SAMSA_ERR_UNKNOWN_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no.such.key"));
    CU_ASSERT_EQUAL(samsa_conf_set(c, "linger.ms", "soon", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not an integer"));
    CU_ASSERT_EQUAL(c->v.linger_ms, 50); /* unchanged by a bad value */
    CU_ASSERT_EQUAL(samsa_conf_set(c, "linger.ms", "-1", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "outside"));
    CU_ASSERT_EQUAL(samsa_conf_set(c, "acks", "2", err, sizeof(err)), SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "all, -1, 0, 1"));
    CU_ASSERT_EQUAL(samsa_conf_set(c, "compression.type", "brotli", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "enable.auto.commit", "yes", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "partition.assignment.strategy", "roundrobin,range", err,
                                   sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(c->v.assignors[0], SC_ASSIGNOR_ROUNDROBIN);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "partition.assignment.strategy", "stiky", err,
                                   sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown assignor"));
    CU_ASSERT_EQUAL(samsa_conf_set(c, "partition.assignment.strategy", "cooperative-sticky", err,
                                   sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(c->v.assignor_count, 1);
    CU_ASSERT_EQUAL(c->v.assignors[0], SC_ASSIGNOR_COOPERATIVE_STICKY);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "partition.assignment.strategy",
                                   "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
                                   err, sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(c->v.assignors[0], SC_ASSIGNOR_COOPERATIVE_STICKY);
    /* eager and cooperative in one list: refused either way round, as
     * librdkafka does; the value before stays */
    err[0] = '\0';
    CU_ASSERT_EQUAL(samsa_conf_set(c, "partition.assignment.strategy", "range,cooperative-sticky",
                                   err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "must have the same protocol type"));
    err[0] = '\0';
    CU_ASSERT_EQUAL(samsa_conf_set(c, "partition.assignment.strategy", "cooperative-sticky,sticky",
                                   err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "must have the same protocol type"));
    CU_ASSERT_EQUAL(c->v.assignor_count, 1);
    CU_ASSERT_EQUAL(c->v.assignors[0], SC_ASSIGNOR_COOPERATIVE_STICKY);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "partition.assignment.strategy", "sticky,range", err,
                                   sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(c->v.assignors[0], SC_ASSIGNOR_STICKY);
    CU_ASSERT_EQUAL(c->v.assignors[1], SC_ASSIGNOR_RANGE);
    /* Java's class names, as a Java client's configuration spells them */
    CU_ASSERT_EQUAL(samsa_conf_set(c, "partition.assignment.strategy",
                                   "org.apache.kafka.clients.consumer.StickyAssignor,"
                                   "org.apache.kafka.clients.consumer.RoundRobinAssignor,"
                                   "org.apache.kafka.clients.consumer.RangeAssignor",
                                   err, sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(c->v.assignor_count, 3);
    CU_ASSERT_EQUAL(c->v.assignors[0], SC_ASSIGNOR_STICKY);
    CU_ASSERT_EQUAL(c->v.assignors[1], SC_ASSIGNOR_ROUNDROBIN);
    CU_ASSERT_EQUAL(c->v.assignors[2], SC_ASSIGNOR_RANGE);
    CU_ASSERT_EQUAL(samsa_conf_set(c, NULL, "1", err, sizeof(err)), SAMSA_ERR_INVALID_ARG);

    samsa_conf *d = samsa_conf_dup(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    if (d == NULL) {
        return;
    }
    CU_ASSERT_STRING_EQUAL(d->v.bootstrap_servers, "h:1");
    CU_ASSERT_PTR_NOT_EQUAL(d->v.bootstrap_servers, c->v.bootstrap_servers);
    samsa_conf_destroy(c);
    samsa_conf_destroy(d);
}

/* Every string-settable property of librdkafka 2.x (its
 * rd_kafka_conf_properties_show: global and topic, callbacks and pointers
 * left out), as a librdkafka configuration file lists them. */
static const char *const rdkafka_properties[] = {
    "builtin.features", "client.id", "metadata.broker.list", "bootstrap.servers",
    "message.max.bytes", "message.copy.max.bytes", "receive.message.max.bytes",
    "max.in.flight.requests.per.connection", "max.in.flight", "topic.metadata.refresh.interval.ms",
    "metadata.max.age.ms", "topic.metadata.refresh.fast.interval.ms",
    "topic.metadata.refresh.fast.cnt", "topic.metadata.refresh.sparse",
    "topic.metadata.propagation.max.ms", "topic.blacklist", "debug", "socket.timeout.ms",
    "socket.blocking.max.ms", "socket.send.buffer.bytes", "socket.receive.buffer.bytes",
    "socket.keepalive.enable", "socket.nagle.disable", "socket.max.fails", "broker.address.ttl",
    "broker.address.family", "socket.connection.setup.timeout.ms", "connections.max.idle.ms",
    "reconnect.backoff.jitter.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
    "statistics.interval.ms", "enabled_events", "log_level", "log.queue", "log.thread.name",
    "enable.random.seed", "log.connection.close", "internal.termination.signal",
    "api.version.request", "api.version.request.timeout.ms", "api.version.fallback.ms",
    "broker.version.fallback", "allow.auto.create.topics", "security.protocol",
    "ssl.cipher.suites", "ssl.curves.list", "ssl.sigalgs.list", "ssl.key.location",
    "ssl.key.password", "ssl.key.pem", "ssl.certificate.location", "ssl.certificate.pem",
    "ssl.ca.location", "ssl.ca.pem", "ssl.ca.certificate.stores", "ssl.crl.location",
    "ssl.keystore.location", "ssl.keystore.password", "ssl.providers", "ssl.engine.location",
    "ssl.engine.id", "enable.ssl.certificate.verification",
    "ssl.endpoint.identification.algorithm", "sasl.mechanisms", "sasl.mechanism",
    "sasl.kerberos.service.name", "sasl.kerberos.principal", "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.keytab", "sasl.kerberos.min.time.before.relogin", "sasl.username",
    "sasl.password", "sasl.oauthbearer.config", "enable.sasl.oauthbearer.unsecure.jwt",
    "sasl.oauthbearer.method", "sasl.oauthbearer.client.id", "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.scope", "sasl.oauthbearer.extensions", "sasl.oauthbearer.token.endpoint.url",
    "plugin.library.paths", "group.id", "group.instance.id", "partition.assignment.strategy",
    "session.timeout.ms", "heartbeat.interval.ms", "group.protocol.type",
    "coordinator.query.interval.ms", "max.poll.interval.ms", "enable.auto.commit",
    "auto.commit.interval.ms", "enable.auto.offset.store", "queued.min.messages",
    "queued.max.messages.kbytes", "fetch.wait.max.ms", "fetch.message.max.bytes",
    "max.partition.fetch.bytes", "fetch.max.bytes", "fetch.min.bytes", "fetch.error.backoff.ms",
    "offset.store.method", "isolation.level", "enable.partition.eof", "check.crcs", "client.rack",
    "transactional.id", "transaction.timeout.ms", "enable.idempotence", "enable.gapless.guarantee",
    "queue.buffering.max.messages", "queue.buffering.max.kbytes", "queue.buffering.max.ms",
    "linger.ms", "message.send.max.retries", "retries", "retry.backoff.ms",
    "queue.buffering.backpressure.threshold", "compression.codec", "compression.type",
    "batch.num.messages", "batch.size", "delivery.report.only.error",
    "sticky.partitioning.linger.ms", "request.required.acks", "acks", "request.timeout.ms",
    "message.timeout.ms", "delivery.timeout.ms", "queuing.strategy", "produce.offset.report",
    "partitioner", "compression.level", "auto.commit.enable", "auto.offset.reset",
    "offset.store.path", "offset.store.sync.interval.ms", "consume.callback.max.messages",
};

/* A librdkafka configuration ports: each of librdkafka's property names is
 * either accepted (libsamsa's key or alias, or the one value libsamsa
 * always runs with) or refused with exactly "known librdkafka property,
 * not supported by libsamsa"; never "unknown". With
 * unsupported.librdkafka.properties=warn they are accepted with the
 * sentence in errstr. */
static void test_conf_knows_every_librdkafka_property(void)
{
    samsa_conf *c = samsa_conf_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char err[512];
    char buf[64];
    size_t size = sizeof(buf);
    int accepted = 0, refused = 0;
    for (size_t i = 0; i < sizeof(rdkafka_properties) / sizeof(rdkafka_properties[0]); i++) {
        const char *name = rdkafka_properties[i];
        size = sizeof(buf);
        /* its current value (libsamsa's, or the one it always runs with) */
        if (samsa_conf_get(c, name, buf, &size) == SAMSA_OK) {
            CU_ASSERT_EQUAL(samsa_conf_set(c, name, buf, err, sizeof(err)), SAMSA_OK);
            accepted++;
            continue;
        }
        int e = samsa_conf_set(c, name, "1", err, sizeof(err));
        CU_ASSERT_EQUAL(e, SAMSA_ERR_NOT_IMPLEMENTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, ": known librdkafka property, not supported by libsamsa"));
        CU_ASSERT_EQUAL(strncmp(err, name, strlen(name)), 0);
        refused++;
    }
    printf("(%d of librdkafka's %d properties accepted, %d refused) ", accepted,
           accepted + refused, refused);
    CU_ASSERT(accepted >= 60);

    /* aliases that are librdkafka's names for libsamsa's keys */
    CU_ASSERT_EQUAL(samsa_conf_set(c, "topic.metadata.refresh.interval.ms", "1000", err, sizeof(err)),
                    SAMSA_OK);
    size = sizeof(buf);
    CU_ASSERT_EQUAL(samsa_conf_get(c, "metadata.max.age.ms", buf, &size), SAMSA_OK);
    CU_ASSERT_STRING_EQUAL(buf, "1000");
    CU_ASSERT_EQUAL(samsa_conf_set(c, "auto.commit.enable", "false", err, sizeof(err)), SAMSA_OK);
    size = sizeof(buf);
    CU_ASSERT_EQUAL(samsa_conf_get(c, "enable.auto.commit", buf, &size), SAMSA_OK);
    CU_ASSERT_STRING_EQUAL(buf, "false");
    CU_ASSERT_EQUAL(samsa_conf_set(c, "socket.keepalive.enable", "true", err, sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_TRUE(c->v.socket_keepalive);
    /* a value other than the one libsamsa runs with */
    CU_ASSERT_EQUAL(samsa_conf_set(c, "api.version.request", "false", err, sizeof(err)),
                    SAMSA_ERR_NOT_IMPLEMENTED);
    CU_ASSERT_STRING_EQUAL(err, "api.version.request=false: known librdkafka property, not "
                                "supported by libsamsa (it always runs as api.version.request=true)");
    CU_ASSERT_EQUAL(samsa_conf_set(c, "client.rack", "r1", err, sizeof(err)),
                    SAMSA_ERR_NOT_IMPLEMENTED);
    CU_ASSERT_STRING_EQUAL(err, "client.rack: known librdkafka property, not supported by libsamsa");
    /* not librdkafka's either */
    CU_ASSERT_EQUAL(samsa_conf_set(c, "no.such.key", "1", err, sizeof(err)),
                    SAMSA_ERR_UNKNOWN_CONFIG);
    /* the switch: a warning, and the configuration goes on */
    CU_ASSERT_EQUAL(samsa_conf_set(c, "unsupported.librdkafka.properties", "warn", err,
                                   sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "client.rack", "r1", err, sizeof(err)), SAMSA_OK);
    CU_ASSERT_STRING_EQUAL(err, "client.rack: known librdkafka property, not supported by "
                                "libsamsa; ignored");
    CU_ASSERT_EQUAL(samsa_conf_set(c, "no.such.key", "1", err, sizeof(err)),
                    SAMSA_ERR_UNKNOWN_CONFIG);
    samsa_conf_destroy(c);
}

static void test_conf_idempotence_conflicts(void)
{
    samsa_conf *c = samsa_conf_new();
    char err[256];
    CU_ASSERT_EQUAL(samsa_conf_set(c, "bootstrap.servers", "127.0.0.1:9", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "acks", "1", err, sizeof(err)), 0);
    /* The default yields to an explicit acks=1 ... */
    samsa_conf *d = samsa_conf_dup(c);
    CU_ASSERT_EQUAL(sc_conf_finalize(d, 'p', err, sizeof(err)), SAMSA_OK);
    CU_ASSERT_FALSE(d->v.enable_idempotence);
    samsa_conf_destroy(d);
    /* ... an explicit enable.idempotence=true does not. */
    CU_ASSERT_EQUAL(samsa_conf_set(c, "enable.idempotence", "true", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(sc_conf_finalize(c, 'p', err, sizeof(err)), SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "acks=all"));
    samsa_conf_destroy(c);
    /* No bootstrap.servers: a sentence saying so. */
    c = samsa_conf_new();
    CU_ASSERT_EQUAL(sc_conf_finalize(c, 'p', err, sizeof(err)), SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "bootstrap.servers"));
    samsa_producer *p = samsa_producer_new(c, err, sizeof(err));
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "bootstrap.servers"));
    samsa_conf_destroy(c);
}

/* The transactional producer's calls in each state, as librdkafka's
 * rdkafka_txnmgr.c allows them (rd_kafka_txn_require_state). */
static void test_txn_calls_allowed_in_each_state(void)
{
    enum { OK = SAMSA_OK, ST = SAMSA_ERR_STATE, FA = SAMSA_ERR_FATAL };
    /* rows: states UNINIT READY IN_TXN COMMITTING ABORTING ABORTABLE FATAL;
     * columns: calls INIT BEGIN PRODUCE SEND_OFFSETS COMMIT ABORT */
    static const int want[7][6] = {
        {OK, ST, ST, ST, ST, ST}, /* UNINIT: init only */
        {ST, OK, ST, ST, ST, ST}, /* READY: begin */
        {ST, ST, OK, OK, OK, OK}, /* IN_TXN */
        {ST, ST, ST, ST, OK, OK}, /* COMMITTING: commit again after a timeout, or abort */
        {ST, ST, ST, ST, ST, OK}, /* ABORTING: abort again */
        {ST, ST, ST, ST, ST, OK}, /* ABORTABLE: only an abort */
        {FA, FA, FA, FA, FA, FA}, /* FATAL: nothing */
    };
    for (int st = SC_TXN_UNINIT; st <= SC_TXN_FATAL; st++) {
        for (int call = SC_TXN_CALL_INIT; call <= SC_TXN_CALL_ABORT; call++) {
            if (sc_txn_may(st, call) != want[st][call]) {
                printf("\nstate %d call %d: %d, wanted %d\n", st, call, sc_txn_may(st, call),
                       want[st][call]);
            }
            CU_ASSERT_EQUAL(sc_txn_may(st, call), want[st][call]);
        }
    }
}

/* What a coordinator's (or a record's) error does to the transaction: the
 * retriable ones retried inside the call, the coordinator's moves looked up
 * again, fencing and a forgotten producer id fatal, the rest abortable. */
static void test_txn_errors_are_classified_as_librdkafka(void)
{
    CU_ASSERT_EQUAL(sc_txn_classify(SAMSA_OK), SC_TXN_OK);
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_CONCURRENT_TRANSACTIONS), SC_TXN_RETRY);
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_COORDINATOR_LOAD_IN_PROGRESS), SC_TXN_RETRY);
    CU_ASSERT_EQUAL(sc_txn_classify(SAMSA_ERR_TIMED_OUT), SC_TXN_RETRY);
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_NOT_COORDINATOR), SC_TXN_COORD_MOVED);
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_COORDINATOR_NOT_AVAILABLE), SC_TXN_COORD_MOVED);
    CU_ASSERT_EQUAL(sc_txn_classify(SAMSA_ERR_TRANSPORT), SC_TXN_COORD_MOVED);
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_INVALID_PRODUCER_EPOCH), SC_TXN_FATAL_ERR);
    CU_ASSERT_EQUAL(sc_txn_classify(90), SC_TXN_FATAL_ERR); /* PRODUCER_FENCED (2.7+) */
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_INVALID_PRODUCER_ID_MAPPING), SC_TXN_FATAL_ERR);
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
                    SC_TXN_FATAL_ERR);
    CU_ASSERT_EQUAL(sc_txn_classify(SAMSA_ERR_MSG_TIMED_OUT), SC_TXN_ABORTABLE_ERR);
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_UNKNOWN_TOPIC_OR_PARTITION), SC_TXN_ABORTABLE_ERR);
    CU_ASSERT_EQUAL(sc_txn_classify(KP_ERR_MESSAGE_TOO_LARGE), SC_TXN_ABORTABLE_ERR);
    CU_ASSERT_STRING_EQUAL(samsa_err_name(SAMSA_ERR_FENCED), "FENCED");
}

/* transactional.id implies idempotence (as librdkafka) and bounds a
 * record's life by the transaction's. */
/* librdkafka's security keys: enum values case-insensitive (its
 * rd_kafka_conf_s2i_find), an unknown protocol or mechanism refused when set. */
static void test_conf_security_keys(void)
{
    char err[256];
    char buf[64];
    size_t size = sizeof(buf);
    samsa_conf *c = samsa_conf_new();
    if (c == NULL) {
        CU_FAIL_FATAL("no conf");
        return;
    }
    CU_ASSERT_EQUAL(c->v.security_protocol, SC_SEC_PLAINTEXT);
    CU_ASSERT_TRUE(c->v.enable_ssl_certificate_verification);
    CU_ASSERT_EQUAL(c->v.ssl_endpoint_identification, 1);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "security.protocol", "SASL_SSL", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c->v.security_protocol, SC_SEC_SASL_SSL);
    CU_ASSERT_EQUAL(samsa_conf_get(c, "security.protocol", buf, &size), SAMSA_OK);
    CU_ASSERT_STRING_EQUAL(buf, "SASL_SSL");
    CU_ASSERT_EQUAL(samsa_conf_set(c, "security.protocol", "tls", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_STRING_EQUAL(err, "security.protocol: \"tls\" is not one of: plaintext, ssl, "
                                "sasl_plaintext, sasl_ssl");
    CU_ASSERT_EQUAL(c->v.security_protocol, SC_SEC_SASL_SSL); /* unchanged */
    CU_ASSERT_EQUAL(samsa_conf_set(c, "sasl.mechanism", "scram-sha-512", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c->v.sasl_mechanism, SC_SASL_SCRAM_SHA_512);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "sasl.mechanisms", "GSSAPI", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "ssl.endpoint.identification.algorithm", "none", err,
                                   sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(c->v.ssl_endpoint_identification, 0);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "sasl.username", "alice", err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(c->v.sasl_username, "alice");
    samsa_conf_destroy(c);
}

static void test_conf_transactional_id(void)
{
    char err[256];
    samsa_conf *c = samsa_conf_new();
    CU_ASSERT_EQUAL(samsa_conf_set(c, "bootstrap.servers", "127.0.0.1:9", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "transactional.id", "t", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "transaction.timeout.ms", "20000", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "transaction.timeout.ms", "999", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    samsa_conf *d = samsa_conf_dup(c);
    CU_ASSERT_EQUAL(sc_conf_finalize(d, 'p', err, sizeof(err)), SAMSA_OK);
    CU_ASSERT_TRUE(d->v.enable_idempotence);
    CU_ASSERT_EQUAL(d->v.message_timeout_ms, 20000);
    samsa_conf_destroy(d);
    d = samsa_conf_dup(c);
    CU_ASSERT_EQUAL(samsa_conf_set(d, "acks", "1", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(sc_conf_finalize(d, 'p', err, sizeof(err)), SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "transactional.id"));
    samsa_conf_destroy(d);
    d = samsa_conf_dup(c);
    CU_ASSERT_EQUAL(samsa_conf_set(d, "enable.idempotence", "false", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(sc_conf_finalize(d, 'p', err, sizeof(err)), SAMSA_ERR_INVALID_CONFIG);
    samsa_conf_destroy(d);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "message.timeout.ms", "30000", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(sc_conf_finalize(c, 'p', err, sizeof(err)), SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "transaction.timeout.ms"));
    samsa_conf_destroy(c);
}

static void test_broker_list_parsing(void)
{
    char *hosts[4];
    int ports[4];
    int n = 0;
    char err[256];
    CU_ASSERT_EQUAL(sc_parse_brokers("a:1, b ,PLAINTEXT://c:3", hosts, ports, 4, &n, err,
                                     sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_STRING_EQUAL(hosts[0], "a");
    CU_ASSERT_EQUAL(ports[0], 1);
    CU_ASSERT_STRING_EQUAL(hosts[1], "b");
    CU_ASSERT_EQUAL(ports[1], 9092);
    CU_ASSERT_STRING_EQUAL(hosts[2], "c");
    for (int i = 0; i < n; i++) {
        kp_free(hosts[i]);
    }
    CU_ASSERT_EQUAL(sc_parse_brokers("a:99999", hosts, ports, 4, &n, err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(sc_parse_brokers(":5", hosts, ports, 4, &n, err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
}

/* ----------------------------------------------------- batching, fake clock */

static struct sc_msg *mk(int64_t now, size_t size)
{
    struct sc_msg *m = calloc(1, sizeof(*m));
    m->enq_ms = now;
    m->size = size;
    return m;
}

static void free_batch(struct sc_batch *b)
{
    struct sc_msg *m;
    while ((m = sc_msgq_pop(&b->msgs)) != NULL) {
        free(m);
    }
    sc_batch_free(b);
}

static const struct sc_batch_rules rules = {
    .linger_ms = 10, .batch_size = 1000, .batch_num_messages = 4, .max_in_flight = 2,
    .idempotent = true,
};

static void test_linger_holds_records_until_due(void)
{
    struct sc_ppart pp = {0};
    sc_msgq_push(&pp.queue, mk(100, 10));
    int64_t wake = INT64_MAX;
    CU_ASSERT_FALSE(sc_ppart_ready(&pp, &rules, 105, false, &wake));
    CU_ASSERT_EQUAL(wake, 110);
    CU_ASSERT_TRUE(sc_ppart_ready(&pp, &rules, 110, false, NULL));
    CU_ASSERT_TRUE(sc_ppart_ready(&pp, &rules, 101, true, NULL)); /* flush ignores linger */
    struct sc_batch *b = sc_ppart_next_batch(&pp, &rules, 110);
    CU_ASSERT_EQUAL(b->msgs.count, 1);
    free_batch(b);
}

static void test_batch_size_and_count_cut_batches(void)
{
    struct sc_ppart pp = {0};
    for (int i = 0; i < 6; i++) {
        sc_msgq_push(&pp.queue, mk(0, 100));
    }
    /* Four records reach batch.num.messages: ready before the linger. */
    CU_ASSERT_TRUE(sc_ppart_ready(&pp, &rules, 1, false, NULL));
    struct sc_batch *b1 = sc_ppart_next_batch(&pp, &rules, 1);
    CU_ASSERT_EQUAL(b1->msgs.count, 4);
    CU_ASSERT_EQUAL(b1->base_seq, 0);
    CU_ASSERT_EQUAL(pp.inflight, 1);
    struct sc_ppart big = {0};
    sc_msgq_push(&big.queue, mk(0, 600));
    sc_msgq_push(&big.queue, mk(0, 600));
    CU_ASSERT_TRUE(sc_ppart_ready(&big, &rules, 1, false, NULL)); /* 1200 >= batch.size */
    struct sc_batch *b2 = sc_ppart_next_batch(&big, &rules, 1);
    CU_ASSERT_EQUAL(b2->msgs.count, 1); /* the second would pass batch.size */
    free_batch(b2);
    b2 = sc_ppart_next_batch(&big, &rules, 1);
    free_batch(b2);
    /* The rest of pp: numbered after the first batch. */
    struct sc_batch *b3 = sc_ppart_next_batch(&pp, &rules, 20);
    CU_ASSERT_EQUAL(b3->msgs.count, 2);
    CU_ASSERT_EQUAL(b3->base_seq, 4);
    CU_ASSERT_EQUAL(pp.next_seq, 6);
    CU_ASSERT_EQUAL(pp.inflight, 2);
    /* max.in.flight reached: nothing more leaves. */
    sc_msgq_push(&pp.queue, mk(0, 10));
    CU_ASSERT_FALSE(sc_ppart_ready(&pp, &rules, 50, true, NULL));
    free_batch(b1);
    free_batch(b3);
    free(sc_msgq_pop(&pp.queue));
}

static void test_retries_keep_sequence_order(void)
{
    struct sc_ppart pp = {0};
    for (int i = 0; i < 8; i++) {
        sc_msgq_push(&pp.queue, mk(0, 10));
    }
    struct sc_batch *a = sc_ppart_next_batch(&pp, &rules, 0); /* seq 0..3 */
    struct sc_batch *b = sc_ppart_next_batch(&pp, &rules, 0); /* seq 4..7 */
    a->sent = b->sent = true;
    sc_msgq_push(&pp.queue, mk(0, 10));
    /* The later batch fails first, then the earlier: retried in sequence
     * order, and only once nothing is in flight. */
    sc_ppart_batch_retry(&pp, b, 100, 50);
    CU_ASSERT_FALSE(sc_ppart_ready(&pp, &rules, 1000, true, NULL)); /* a still in flight */
    sc_ppart_batch_retry(&pp, a, 100, 50);
    int64_t wake = INT64_MAX;
    CU_ASSERT_FALSE(sc_ppart_ready(&pp, &rules, 120, true, &wake));
    CU_ASSERT_EQUAL(wake, 150);
    CU_ASSERT_TRUE(sc_ppart_ready(&pp, &rules, 150, false, NULL));
    struct sc_batch *r1 = sc_ppart_next_batch(&pp, &rules, 150);
    CU_ASSERT_PTR_EQUAL(r1, a);
    /* New records wait behind retried batches. */
    CU_ASSERT_FALSE(sc_ppart_ready(&pp, &rules, 150, true, NULL));
    sc_ppart_batch_done(&pp);
    struct sc_batch *r2 = sc_ppart_next_batch(&pp, &rules, 150);
    CU_ASSERT_PTR_EQUAL(r2, b);
    sc_ppart_batch_done(&pp);
    struct sc_batch *n = sc_ppart_next_batch(&pp, &rules, 150);
    CU_ASSERT_EQUAL(n->base_seq, 8);
    free_batch(a);
    free_batch(b);
    free_batch(n);
}

static void test_new_producer_id_renumbers_retries(void)
{
    struct sc_ppart pp = {0};
    for (int i = 0; i < 6; i++) {
        sc_msgq_push(&pp.queue, mk(0, 10));
    }
    struct sc_batch *a = sc_ppart_next_batch(&pp, &rules, 0);
    struct sc_batch *b = sc_ppart_next_batch(&pp, &rules, 0);
    sc_ppart_batch_retry(&pp, a, 0, 0);
    sc_ppart_batch_retry(&pp, b, 0, 0);
    pp.next_seq = 1000;
    sc_ppart_reset_sequence(&pp);
    CU_ASSERT_EQUAL(pp.retry->base_seq, 0);
    CU_ASSERT_EQUAL(pp.retry->next->base_seq, 4);
    CU_ASSERT_EQUAL(pp.next_seq, 6);
    free_batch(a);
    free_batch(b);
}

static void test_expiry_reports_old_records_and_flags_lost_sequences(void)
{
    struct sc_ppart pp = {0};
    sc_msgq_push(&pp.queue, mk(0, 10));
    struct sc_batch *a = sc_ppart_next_batch(&pp, &rules, 0);
    a->sent = true;
    sc_ppart_batch_retry(&pp, a, 0, 10);
    sc_msgq_push(&pp.queue, mk(50, 10));
    sc_msgq_push(&pp.queue, mk(500, 10));
    struct sc_msgq expired = {0};
    CU_ASSERT_FALSE(sc_ppart_expire(&pp, 99, 100, &expired));
    CU_ASSERT_EQUAL(expired.count, 0);
    CU_ASSERT_TRUE(sc_ppart_expire(&pp, 150, 100, &expired)); /* a sent batch expired */
    CU_ASSERT_EQUAL(expired.count, 2);
    CU_ASSERT_PTR_NULL(pp.retry);
    CU_ASSERT_EQUAL(pp.queue.count, 1);
    struct sc_msg *m;
    while ((m = sc_msgq_pop(&expired)) != NULL) {
        free(m);
    }
    free(sc_msgq_pop(&pp.queue));
}

static void test_sequence_wraps_at_int32_max(void)
{
    CU_ASSERT_EQUAL(sc_seq_add(INT32_MAX, 1), 0);
    CU_ASSERT_EQUAL(sc_seq_add(INT32_MAX - 1, 3), 1);
    CU_ASSERT_EQUAL(sc_seq_add(5, 3), 8);
}

/* ----------------------------------------------------------- assignors */

static void member(struct sc_member *m, const char *id, const char *t1, const char *t2)
{
    memset(m, 0, sizeof(*m));
    m->member_id = sc_strdup(id);
    m->topics = kp_calloc(2, sizeof(char *));
    m->topics[m->topic_count++] = sc_strdup(t1);
    if (t2 != NULL) {
        m->topics[m->topic_count++] = sc_strdup(t2);
    }
}

static bool has(const struct sc_member *m, const char *t, int32_t p)
{
    for (int i = 0; i < m->assigned_count; i++) {
        if (strcmp(m->assigned[i].topic, t) == 0 && m->assigned[i].partition == p) {
            return true;
        }
    }
    return false;
}

static void test_range_assignor_example_of_the_reference(void)
{
    /* 2 consumers, 2 topics x 3 partitions: C0 = t0p0 t0p1 t1p0 t1p1, C1 = t0p2 t1p2. */
    struct sc_member ms[2];
    member(&ms[0], "c1", "t0", "t1"); /* sorted by member id: "c0" first */
    member(&ms[1], "c0", "t0", "t1");
    const struct sc_topic_count counts[] = {{"t1", 3}, {"t0", 3}};
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_RANGE, ms, 2, counts, 2), 0);
    CU_ASSERT_STRING_EQUAL(ms[0].member_id, "c0");
    CU_ASSERT_EQUAL(ms[0].assigned_count, 4);
    CU_ASSERT_TRUE(has(&ms[0], "t0", 0) && has(&ms[0], "t0", 1) && has(&ms[0], "t1", 0) &&
                   has(&ms[0], "t1", 1));
    CU_ASSERT_EQUAL(ms[1].assigned_count, 2);
    CU_ASSERT_TRUE(has(&ms[1], "t0", 2) && has(&ms[1], "t1", 2));
    sc_member_clear(&ms[0]);
    sc_member_clear(&ms[1]);
}

static void test_roundrobin_deals_sorted_partitions_skipping_unsubscribed(void)
{
    struct sc_member ms[3];
    member(&ms[0], "a", "t0", NULL);
    member(&ms[1], "b", "t0", "t1");
    member(&ms[2], "c", "t1", NULL);
    struct sc_topic_count counts[] = {{"t0", 3}, {"t1", 2}};
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_ROUNDROBIN, ms, 3, counts, 2), 0);
    /* t0p0 -> a, t0p1 -> b, t0p2 -> (c skipped) a, t1p0 -> b, t1p1 -> c */
    CU_ASSERT_TRUE(has(&ms[0], "t0", 0) && has(&ms[0], "t0", 2));
    CU_ASSERT_EQUAL(ms[0].assigned_count, 2);
    CU_ASSERT_TRUE(has(&ms[1], "t0", 1) && has(&ms[1], "t1", 0));
    CU_ASSERT_EQUAL(ms[1].assigned_count, 2);
    CU_ASSERT_TRUE(has(&ms[2], "t1", 1));
    CU_ASSERT_EQUAL(ms[2].assigned_count, 1);
    for (int i = 0; i < 3; i++) {
        sc_member_clear(&ms[i]);
    }
}

static void test_range_gives_first_members_the_extra_partitions(void)
{
    struct sc_member ms[3];
    member(&ms[0], "m1", "t", NULL);
    member(&ms[1], "m2", "t", NULL);
    member(&ms[2], "m3", "t", NULL);
    struct sc_topic_count counts[] = {{"t", 7}};
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_RANGE, ms, 3, counts, 1), 0);
    CU_ASSERT_EQUAL(ms[0].assigned_count, 3);
    CU_ASSERT_TRUE(has(&ms[0], "t", 0) && has(&ms[0], "t", 2));
    CU_ASSERT_EQUAL(ms[1].assigned_count, 2);
    CU_ASSERT_TRUE(has(&ms[1], "t", 3) && has(&ms[1], "t", 4));
    CU_ASSERT_EQUAL(ms[2].assigned_count, 2);
    CU_ASSERT_TRUE(has(&ms[2], "t", 6));
    for (int i = 0; i < 3; i++) {
        sc_member_clear(&ms[i]);
    }
}

/* sticky: previous assignments as the members' UserData would give them */
static void owns(struct sc_member *m, const char *t, int32_t from, int32_t to, int32_t generation)
{
    int n = to - from;
    m->owned = kp_realloc(m->owned, (size_t)(m->owned_count + n) * sizeof(*m->owned));
    for (int32_t p = from; p < to; p++) {
        m->owned[m->owned_count].topic = sc_strdup(t);
        m->owned[m->owned_count].partition = p;
        m->owned_count++;
    }
    m->owned_generation = generation;
}

/* Each partition of counts[] assigned exactly once; returns max - min count. */
static int spread_and_once(struct sc_member *ms, int n, const struct sc_topic_count *counts,
                           int count_n)
{
    int lo = INT32_MAX;
    int hi = 0;
    for (int i = 0; i < n; i++) {
        lo = ms[i].assigned_count < lo ? ms[i].assigned_count : lo;
        hi = ms[i].assigned_count > hi ? ms[i].assigned_count : hi;
    }
    for (int t = 0; t < count_n; t++) {
        for (int32_t p = 0; p < counts[t].partitions; p++) {
            int holders = 0;
            for (int i = 0; i < n; i++) {
                holders += has(&ms[i], counts[t].topic, p) ? 1 : 0;
            }
            CU_ASSERT_EQUAL(holders, 1);
        }
    }
    return hi - lo;
}

/* The assignment becomes the next round's previous one. */
static void carry_over(struct sc_member *m, int32_t generation)
{
    sc_tps_free(m->owned, m->owned_count);
    m->owned = m->assigned;
    m->owned_count = m->assigned_count;
    m->owned_generation = generation;
    m->assigned = NULL;
    m->assigned_count = 0;
}

static int kept_of(const struct sc_member *m)
{
    int k = 0;
    for (int i = 0; i < m->owned_count; i++) {
        k += has(m, m->owned[i].topic, m->owned[i].partition) ? 1 : 0;
    }
    return k;
}

static void test_sticky_balances_then_keeps_across_joins_and_leaves(void)
{
    const struct sc_topic_count counts[] = {{"t1", 5}, {"t0", 5}};
    struct sc_member ms[4];
    member(&ms[0], "c", "t0", "t1");
    member(&ms[1], "a", "t0", "t1");
    member(&ms[2], "b", "t0", "t1");
    /* a first generation: nothing owned, 10 partitions over 3 */
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_STICKY, ms, 3, counts, 2), 0);
    CU_ASSERT_STRING_EQUAL(ms[0].member_id, "a");
    CU_ASSERT_TRUE(spread_and_once(ms, 3, counts, 2) <= 1);
    /* a fourth joins: 3+3+2+2 (or so); only what balance needs moves */
    for (int i = 0; i < 3; i++) {
        carry_over(&ms[i], 1);
    }
    member(&ms[3], "d", "t0", "t1");
    ms[3].owned_generation = -1;
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_STICKY, ms, 4, counts, 2), 0);
    CU_ASSERT_TRUE(spread_and_once(ms, 4, counts, 2) <= 1);
    int kept = 0;
    for (int i = 0; i < 4; i++) {
        kept += kept_of(&ms[i]);
        /* nobody loses more than balance asks: 10 over 4 is 2 or 3 each */
        CU_ASSERT_TRUE(ms[i].owned_count <= 3 || kept_of(&ms[i]) >= 2);
        CU_ASSERT_TRUE(kept_of(&ms[i]) == ms[i].owned_count || kept_of(&ms[i]) >= 2);
    }
    /* the new member's partitions, and no more, moved */
    CU_ASSERT_EQUAL(kept, 10 - ms[3].assigned_count);
    CU_ASSERT_TRUE(ms[3].assigned_count >= 2);
    /* "b" leaves: the others keep all they had, its partitions are spread */
    for (int i = 0; i < 4; i++) {
        carry_over(&ms[i], 2);
    }
    int b = 1; /* sorted: a, b, c, d */
    CU_ASSERT_STRING_EQUAL(ms[b].member_id, "b");
    sc_member_clear(&ms[b]);
    ms[b] = ms[3];
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_STICKY, ms, 3, counts, 2), 0);
    CU_ASSERT_TRUE(spread_and_once(ms, 3, counts, 2) <= 1);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(kept_of(&ms[i]), ms[i].owned_count);
    }
    for (int i = 0; i < 3; i++) {
        sc_member_clear(&ms[i]);
    }
}

static void test_sticky_respects_subscriptions_and_resolves_claims(void)
{
    /* a: t0 only; b: t0 and t1. t1's 4 partitions can only go to b, so a gets
     * t0 entirely unless balance lets b take some: 4 + 4 at best. */
    const struct sc_topic_count counts[] = {{"t0", 4}, {"t1", 4}};
    struct sc_member ms[2];
    member(&ms[0], "a", "t0", NULL);
    member(&ms[1], "b", "t0", "t1");
    /* b claims all of t0 (generation 3), a claims t0 0-1 from an older generation
     * and t1 0, which it no longer subscribes to */
    owns(&ms[1], "t0", 0, 4, 3);
    owns(&ms[0], "t0", 0, 2, 2);
    owns(&ms[0], "t1", 0, 1, 2);
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_STICKY, ms, 2, counts, 2), 0);
    CU_ASSERT_TRUE(spread_and_once(ms, 2, counts, 2) <= 1);
    CU_ASSERT_EQUAL(ms[0].assigned_count, 4); /* all of t0 */
    CU_ASSERT_EQUAL(ms[1].assigned_count, 4); /* all of t1 */
    for (int32_t p = 0; p < 4; p++) {
        CU_ASSERT_TRUE(has(&ms[0], "t0", p));
        CU_ASSERT_TRUE(has(&ms[1], "t1", p));
    }
    /* equal generations: the first in member-id order keeps a shared claim */
    sc_member_clear(&ms[0]);
    sc_member_clear(&ms[1]);
    const struct sc_topic_count one[] = {{"t0", 2}};
    member(&ms[0], "b", "t0", NULL);
    member(&ms[1], "a", "t0", NULL);
    owns(&ms[0], "t0", 0, 2, 5);
    owns(&ms[1], "t0", 0, 1, 5);
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_STICKY, ms, 2, one, 1), 0);
    CU_ASSERT_STRING_EQUAL(ms[0].member_id, "a");
    CU_ASSERT_TRUE(has(&ms[0], "t0", 0) && ms[0].assigned_count == 1);
    CU_ASSERT_TRUE(has(&ms[1], "t0", 1) && ms[1].assigned_count == 1);
    sc_member_clear(&ms[0]);
    sc_member_clear(&ms[1]);
}

static void test_sticky_user_data_is_kafkas_layout(void)
{
    char ab[] = "ab";
    char c[] = "c";
    const struct sc_tp tps[] = {{ab, 0}, {ab, 2}, {c, 1}};
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    sc_sticky_user_data_encode(&w, tps, 3, 7);
    static const uint8_t want[] = {
        0, 0, 0, 2,                         /* previous_assignment: 2 topics */
        0, 2, 'a', 'b', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, /* "ab" [0, 2] */
        0, 1, 'c', 0, 0, 0, 1, 0, 0, 0, 1,  /* "c" [1] */
        0, 0, 0, 7,                         /* generation */
    };
    CU_ASSERT_EQUAL_FATAL(w.len, sizeof(want));
    CU_ASSERT_EQUAL(memcmp(w.buf, want, sizeof(want)), 0);
    struct sc_tp *got = NULL;
    int n = 0;
    int32_t gen = 0;
    CU_ASSERT_EQUAL(sc_sticky_user_data_decode(w.buf, w.len, &got, &n, &gen), SAMSA_OK);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_STRING_EQUAL(got[1].topic, "ab");
    CU_ASSERT_EQUAL(got[1].partition, 2);
    CU_ASSERT_STRING_EQUAL(got[2].topic, "c");
    CU_ASSERT_EQUAL(gen, 7);
    sc_tps_free(got, n);
    /* Kafka 2.0's own: no generation */
    CU_ASSERT_EQUAL(sc_sticky_user_data_decode(w.buf, w.len - 4, &got, &n, &gen), SAMSA_OK);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(gen, -1);
    sc_tps_free(got, n);
    /* cut short: refused */
    CU_ASSERT_EQUAL(sc_sticky_user_data_decode(w.buf, 10, &got, &n, &gen),
                    SAMSA_ERR_BAD_RESPONSE);
    /* inside a Subscription, found again */
    struct kp_writer sw;
    kp_wr_init(&sw, 4096);
    char *topics[] = {ab, c};
    sc_subscription_encode_ud(&sw, topics, 2, NULL, 0, w.buf, w.len);
    struct kp_bytes ud;
    CU_ASSERT_EQUAL(sc_subscription_user_data(sw.buf, sw.len, &ud), SAMSA_OK);
    CU_ASSERT_EQUAL(ud.len, (int32_t)w.len);
    CU_ASSERT_EQUAL(memcmp(ud.ptr, w.buf, w.len), 0);
    kp_wr_free(&sw);
    kp_wr_free(&w);
}

/* cooperative-sticky: whether tp is in m's owned list */
static bool owned_has(const struct sc_member *m, const char *t, int32_t p)
{
    for (int i = 0; i < m->owned_count; i++) {
        if (strcmp(m->owned[i].topic, t) == 0 && m->owned[i].partition == p) {
            return true;
        }
    }
    return false;
}

/* No member is given a partition that it does not own and another member
 * owns now; returns how many owned partitions are given to nobody (those
 * being revoked). */
static int revoked_and_unassigned(struct sc_member *ms, int n, const struct sc_topic_count *counts,
                                  int count_n)
{
    int revoked = 0;
    for (int t = 0; t < count_n; t++) {
        for (int32_t p = 0; p < counts[t].partitions; p++) {
            int holders = 0;
            int owners = 0;
            for (int i = 0; i < n; i++) {
                holders += has(&ms[i], counts[t].topic, p) ? 1 : 0;
                owners += owned_has(&ms[i], counts[t].topic, p) ? 1 : 0;
            }
            CU_ASSERT_TRUE(holders <= 1);
            for (int i = 0; i < n; i++) {
                /* given to i: i owned it, or nobody did */
                if (has(&ms[i], counts[t].topic, p)) {
                    CU_ASSERT_TRUE(owned_has(&ms[i], counts[t].topic, p) || owners == 0);
                }
            }
            if (owners > 0 && holders == 0) {
                revoked++;
            }
        }
    }
    return revoked;
}

static void test_cooperative_sticky_hands_over_in_the_next_generation(void)
{
    const struct sc_topic_count counts[] = {{"t1", 3}, {"t0", 4}};
    struct sc_member ms[3];
    member(&ms[0], "b", "t0", "t1");
    member(&ms[1], "a", "t0", "t1");
    /* generation 1: two members, nothing owned: 7 partitions, 4 + 3 */
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_COOPERATIVE_STICKY, ms, 2, counts, 2), 0);
    CU_ASSERT_TRUE(spread_and_once(ms, 2, counts, 2) <= 1);
    CU_ASSERT_EQUAL(ms[0].assigned_count + ms[1].assigned_count, 7);
    /* generation 2: "c" joins. Balance wants 3/2/2, so two partitions move
     * to c; they are taken from a and b but given to nobody yet. */
    carry_over(&ms[0], 1);
    carry_over(&ms[1], 1);
    member(&ms[2], "c", "t0", "t1");
    ms[2].owned_generation = -1;
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_COOPERATIVE_STICKY, ms, 3, counts, 2), 0);
    CU_ASSERT_STRING_EQUAL(ms[2].member_id, "c");
    CU_ASSERT_EQUAL(revoked_and_unassigned(ms, 3, counts, 2), 2);
    CU_ASSERT_EQUAL(ms[2].assigned_count, 0);
    CU_ASSERT_EQUAL(ms[0].assigned_count + ms[1].assigned_count, 5);
    for (int i = 0; i < 2; i++) {
        /* what a and b are given is what they had, less what moves */
        CU_ASSERT_EQUAL(kept_of(&ms[i]), ms[i].assigned_count);
    }
    /* the two given up, as the members will report them revoked */
    struct sc_tp moving[2] = {{NULL, -1}, {NULL, -1}};
    int nm = 0;
    for (int i = 0; i < 2; i++) {
        for (int o = 0; o < ms[i].owned_count; o++) {
            if (!has(&ms[i], ms[i].owned[o].topic, ms[i].owned[o].partition) && nm < 2) {
                moving[nm++] = ms[i].owned[o];
            }
        }
    }
    CU_ASSERT_EQUAL_FATAL(nm, 2);
    char mt0[8];
    char mt1[8];
    snprintf(mt0, sizeof(mt0), "%s", moving[0].topic != NULL ? moving[0].topic : "");
    snprintf(mt1, sizeof(mt1), "%s", moving[1].topic != NULL ? moving[1].topic : "");
    int32_t mp0 = moving[0].partition;
    int32_t mp1 = moving[1].partition;
    /* generation 3: a and b own what generation 2 left them, c nothing:
     * c gets exactly the two, nobody else changes, 3/2/2 */
    for (int i = 0; i < 3; i++) {
        carry_over(&ms[i], 2);
    }
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_COOPERATIVE_STICKY, ms, 3, counts, 2), 0);
    CU_ASSERT_EQUAL(revoked_and_unassigned(ms, 3, counts, 2), 0);
    CU_ASSERT_TRUE(spread_and_once(ms, 3, counts, 2) <= 1);
    CU_ASSERT_EQUAL(ms[2].assigned_count, 2);
    CU_ASSERT_TRUE(has(&ms[2], mt0, mp0));
    CU_ASSERT_TRUE(has(&ms[2], mt1, mp1));
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(kept_of(&ms[i]), ms[i].owned_count);
        CU_ASSERT_EQUAL(ms[i].assigned_count, ms[i].owned_count);
    }
    for (int i = 0; i < 3; i++) {
        sc_member_clear(&ms[i]);
    }
}

static void test_cooperative_sticky_never_gives_a_partition_two_owners(void)
{
    /* b claims t0 0-3 (generation 4); a claims t0 0 from generation 3 (a
     * stale claim) and subscribes to t0 only; c is new. Whatever moves
     * goes to nobody in this generation. */
    const struct sc_topic_count counts[] = {{"t0", 6}};
    struct sc_member ms[3];
    member(&ms[0], "a", "t0", NULL);
    member(&ms[1], "b", "t0", NULL);
    member(&ms[2], "c", "t0", NULL);
    owns(&ms[1], "t0", 0, 4, 4);
    owns(&ms[0], "t0", 0, 1, 3);
    ms[2].owned_generation = -1;
    CU_ASSERT_EQUAL(sc_assign(SC_ASSIGNOR_COOPERATIVE_STICKY, ms, 3, counts, 1), 0);
    (void)revoked_and_unassigned(ms, 3, counts, 1);
    /* t0 4 and 5, owned by nobody, are given at once */
    int given = 0;
    for (int i = 0; i < 3; i++) {
        given += has(&ms[i], "t0", 4) ? 1 : 0;
        given += has(&ms[i], "t0", 5) ? 1 : 0;
    }
    CU_ASSERT_EQUAL(given, 2);
    /* t0 0, claimed twice, stays with nobody else than a claimant */
    CU_ASSERT_FALSE(has(&ms[2], "t0", 0));
    for (int i = 0; i < 3; i++) {
        sc_member_clear(&ms[i]);
    }
}

/* ------------------------------------------------ consumer protocol bytes */

static void test_subscription_v0_to_v3_decode(void)
{
    /* v0 as kafka-python writes it: version 0, ["b", "a"], UserData b"". */
    static const uint8_t v0[] = {0, 0, 0, 0, 0, 2, 0, 1, 'b', 0, 1, 'a', 0, 0, 0, 0};
    char **topics = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(sc_subscription_decode(v0, sizeof(v0), &topics, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(topics[0], "a"); /* sorted */
    CU_ASSERT_STRING_EQUAL(topics[1], "b");
    for (int i = 0; i < n; i++) {
        kp_free(topics[i]);
    }
    kp_free(topics);
    /* v3 as librdkafka writes it: OwnedPartitions, GenerationId, RackId. */
    static const uint8_t v3[] = {0, 3, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff,
                                 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 2,
                                 0, 0, 0, 5, 0xff, 0xff};
    CU_ASSERT_EQUAL_FATAL(sc_subscription_decode(v3, sizeof(v3), &topics, &n), 0);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(topics[0], "t");
    kp_free(topics[0]);
    kp_free(topics);
    /* A count beyond the bytes is an error, not an allocation. */
    static const uint8_t bad[] = {0, 0, 0x7f, 0xff, 0xff, 0xff};
    CU_ASSERT_NOT_EQUAL(sc_subscription_decode(bad, sizeof(bad), &topics, &n), 0);
}

static void test_subscription_encode_round_trips_and_is_byte_exact(void)
{
    char ta[] = "a", tbc[] = "bc";
    char *topics[] = {ta, tbc};
    struct sc_tp owned[] = {{ta, 1}, {ta, 2}};
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    sc_subscription_encode(&w, topics, 2, owned, 2);
    static const uint8_t want[] = {0, 1, 0, 0, 0, 2, 0, 1, 'a', 0, 2, 'b', 'c', 0, 0, 0, 0,
                                   0, 0, 0, 1, 0, 1, 'a', 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2};
    CU_ASSERT_EQUAL_FATAL(w.len, sizeof(want));
    CU_ASSERT_EQUAL(memcmp(w.buf, want, sizeof(want)), 0);
    kp_wr_free(&w);
}

static void test_cooperative_subscription_v3_is_byte_exact_and_round_trips(void)
{
    char ta[] = "a", tbc[] = "bc";
    char *topics[] = {ta, tbc};
    struct sc_tp owned[] = {{ta, 1}, {ta, 2}, {tbc, 0}};
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    sc_subscription_encode_v3(&w, topics, 2, owned, 3, 7);
    static const uint8_t want[] = {
        0, 3,                                   /* Version 3 */
        0, 0, 0, 2, 0, 1, 'a', 0, 2, 'b', 'c',  /* Topics ["a", "bc"] */
        0, 0, 0, 4, 0, 0, 0, 7,                 /* UserData: INT32 generation (Java's) */
        0, 0, 0, 2,                             /* OwnedPartitions: 2 topics */
        0, 1, 'a', 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, /* "a" [1, 2] */
        0, 2, 'b', 'c', 0, 0, 0, 1, 0, 0, 0, 0, /* "bc" [0] */
        0, 0, 0, 7,                             /* GenerationId */
        0xff, 0xff,                             /* RackId null */
    };
    CU_ASSERT_EQUAL_FATAL(w.len, sizeof(want));
    CU_ASSERT_EQUAL(memcmp(w.buf, want, sizeof(want)), 0);
    /* read back: topics, then what the member owns and its generation */
    char **got_topics = NULL;
    int nt = 0;
    CU_ASSERT_EQUAL_FATAL(sc_subscription_decode(w.buf, w.len, &got_topics, &nt), SAMSA_OK);
    CU_ASSERT_EQUAL(nt, 2);
    CU_ASSERT_STRING_EQUAL(got_topics[1], "bc");
    for (int i = 0; i < nt; i++) {
        kp_free(got_topics[i]);
    }
    kp_free(got_topics);
    struct sc_tp *tps = NULL;
    int n = 0;
    int32_t gen = 0;
    CU_ASSERT_EQUAL_FATAL(sc_subscription_ownership(w.buf, w.len, &tps, &n, &gen), SAMSA_OK);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_STRING_EQUAL(tps[0].topic, "a");
    CU_ASSERT_EQUAL(tps[1].partition, 2);
    CU_ASSERT_STRING_EQUAL(tps[2].topic, "bc");
    CU_ASSERT_EQUAL(tps[2].partition, 0);
    CU_ASSERT_EQUAL(gen, 7);
    sc_tps_free(tps, n);
    /* cut inside GenerationId: refused */
    CU_ASSERT_NOT_EQUAL(sc_subscription_ownership(w.buf, w.len - 4, &tps, &n, &gen), SAMSA_OK);
    kp_wr_free(&w);
}

static void test_cooperative_leader_reads_ownership_from_user_data_too(void)
{
    struct sc_tp *tps = NULL;
    int n = 0;
    int32_t gen = 0;
    /* v0, UserData of Java's CooperativeStickyAssignor: generation 9 only */
    static const uint8_t java_coop[] = {0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 4, 0, 0, 0, 9};
    CU_ASSERT_EQUAL(sc_subscription_ownership(java_coop, sizeof(java_coop), &tps, &n, &gen),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(gen, 9);
    sc_tps_free(tps, n);
    /* v0, UserData of the eager sticky layout: t [3], generation 5 */
    static const uint8_t eager[] = {0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 19,
                                    0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 5};
    CU_ASSERT_EQUAL(sc_subscription_ownership(eager, sizeof(eager), &tps, &n, &gen), SAMSA_OK);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(tps[0].topic, "t");
    CU_ASSERT_EQUAL(tps[0].partition, 3);
    CU_ASSERT_EQUAL(gen, 5);
    sc_tps_free(tps, n);
    /* v1: OwnedPartitions t [1] win over the UserData's t [3]; no
     * GenerationId field, so the UserData's generation 5 */
    static const uint8_t v1[] = {0, 1, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 19,
                                 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 5,
                                 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 1};
    CU_ASSERT_EQUAL(sc_subscription_ownership(v1, sizeof(v1), &tps, &n, &gen), SAMSA_OK);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(tps[0].partition, 1);
    CU_ASSERT_EQUAL(gen, 5);
    sc_tps_free(tps, n);
    /* v0 without UserData: a new member */
    static const uint8_t none[] = {0, 0, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff};
    CU_ASSERT_EQUAL(sc_subscription_ownership(none, sizeof(none), &tps, &n, &gen), SAMSA_OK);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(gen, -1);
    sc_tps_free(tps, n);
}

static void test_assignment_round_trip_and_empty(void)
{
    char t0[] = "t0", t1[] = "t1";
    struct sc_tp tps[] = {{t0, 0}, {t0, 2}, {t1, 1}};
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    sc_assignment_encode(&w, tps, 3);
    struct sc_tp *out = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(sc_assignment_decode(w.buf, w.len, &out, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_STRING_EQUAL(out[2].topic, "t1");
    CU_ASSERT_EQUAL(out[1].partition, 2);
    sc_tps_free(out, n);
    kp_wr_free(&w);
    CU_ASSERT_EQUAL(sc_assignment_decode(NULL, 0, &out, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    static const uint8_t trunc[] = {0, 0, 0, 0, 0, 1, 0, 2, 't'};
    CU_ASSERT_NOT_EQUAL(sc_assignment_decode(trunc, sizeof(trunc), &out, &n), 0);
}

static void test_error_names_and_sentences(void)
{
    CU_ASSERT_STRING_EQUAL(samsa_err_name(SAMSA_ERR_QUEUE_FULL), "QUEUE_FULL");
    CU_ASSERT_PTR_NOT_NULL(strstr(samsa_err_str(SAMSA_ERR_QUEUE_FULL), "samsa_producer_poll"));
    CU_ASSERT_STRING_EQUAL(samsa_err_name(3), "UNKNOWN_TOPIC_OR_PARTITION");
    CU_ASSERT_STRING_EQUAL(samsa_err_name(SAMSA_OK), "NO_ERROR");
    /* samsa.h's rule: Kafka's 3 is never handed out, the library's code is */
    CU_ASSERT_EQUAL(sc_err_public(3), SAMSA_ERR_UNKNOWN_TOPIC);
    CU_ASSERT_EQUAL(sc_err_public(6), 6);
    CU_ASSERT_EQUAL(sc_err_public(SAMSA_ERR_TIMED_OUT), SAMSA_ERR_TIMED_OUT);
    CU_ASSERT_STRING_EQUAL(samsa_err_name(SAMSA_ERR_MSG_TIMED_OUT), "MSG_TIMED_OUT");
    CU_ASSERT_STRING_EQUAL(samsa_version(), SAMSA_VERSION_STR);
}


/* --------------------------------------- model broker on a fake clock */

static int64_t fake_now = 1000000;

/* The client's clock (a weak definition in io.c): the detached client's
 * timers, backoffs and deadlines read the time the test sets. */
int64_t sc_now_ms(void)
{
    return fake_now;
}

/* A detached client and the model cluster it talks to. */
struct drv {
    struct mb m;
    struct sc_client *c;
    int answered[MB_MAX_NODES][SC_API_KEYS]; /* requests answered, by node and API */
    int refused[MB_MAX_NODES];               /* connections to a node id refused */
    unsigned not_coordinator;                /* bit n: node n answers the group's
                                              * requests NOT_COORDINATOR */
    int messages;                            /* consumed */
    int assigned;                            /* partitions the rebalance callback gave */
    int revoked;                             /* partitions it took, over all its calls */
    int64_t revoked_at[16];                  /* the offsets of the last "revoked" event */
    int revoked_n;
    int delivered;                           /* producer: reports without an error */
    int failed;                              /* producer: reports with one */
    int last_err;                            /* producer: the last report's error */
    int unsized;                             /* producer: reports whose struct_size is
                                              * not the library's sizeof */
    int all_down;                            /* SAMSA_ERR_ALL_BROKERS_DOWN errors */
    int unknown_topic;                       /* SAMSA_ERR_UNKNOWN_TOPIC errors */
    int unknown_partition;                   /* SAMSA_ERR_UNKNOWN_PARTITION errors */
    int logged;                              /* log lines at SAMSA_LOG_DEBUG */
    int txn_concurrent;                      /* the next so many AddPartitionsToTxn and
                                              * EndTxn answer CONCURRENT_TRANSACTIONS */
    int produce_before_add;                  /* batches of a partition the coordinator
                                              * had not added to the transaction */
    bool txn_fence;                          /* EndTxn answers INVALID_PRODUCER_EPOCH */
    int produce_not_txn;                     /* a transactional producer's Produce
                                              * batches without its id or attribute */
};

static void drv_log(int level, const char *line, void *opaque)
{
    struct drv *d = opaque;
    d->logged += level == SAMSA_LOG_DEBUG && line[0] != '\0';
}

static void drv_error(int err, const char *reason, void *opaque)
{
    struct drv *d = opaque;
    d->all_down += err == SAMSA_ERR_ALL_BROKERS_DOWN;
    d->unknown_topic += err == SAMSA_ERR_UNKNOWN_TOPIC;
    d->unknown_partition += err == SAMSA_ERR_UNKNOWN_PARTITION;
    (void)reason;
}

static void drv_delivered(const struct samsa_delivery *r, void *opaque)
{
    struct drv *d = opaque;
    d->last_err = r->err;
    d->unsized += r->struct_size != sizeof(struct samsa_delivery) ||
                  !SAMSA_HAS_FIELD(struct samsa_delivery, r, opaque);
    if (r->err == SAMSA_OK && r->offset >= 0) {
        d->delivered++;
    } else {
        d->failed++;
    }
}

static void drv_rebalance(bool assigned, const struct samsa_partition *parts, size_t count,
                          void *opaque)
{
    struct drv *d = opaque;
    d->assigned = assigned ? (int)count : 0;
    d->revoked += assigned ? 0 : (int)count;
    if (!assigned) {
        d->revoked_n = 0;
        for (size_t i = 0; i < count && i < 16; i++) {
            d->revoked_at[d->revoked_n++] = parts[i].offset;
        }
    }
}

static bool group_api(int16_t api)
{
    return api == KP_API_OFFSET_COMMIT || api == KP_API_OFFSET_FETCH ||
           api == KP_API_JOIN_GROUP || api == KP_API_HEARTBEAT || api == KP_API_LEAVE_GROUP ||
           api == KP_API_SYNC_GROUP || api == KP_API_DESCRIBE_GROUPS;
}

/* A client of `kind` on a two-node model (node 1 the controller and the
 * coordinator), bootstrapped from both. */
static void drv_start_with(struct drv *d, char kind, const char *key, const char *value);

static void drv_start(struct drv *d, char kind)
{
    drv_start_with(d, kind, NULL, NULL);
}

/* drv_start, with one more configuration key (key NULL: none). */
static void drv_start_with(struct drv *d, char kind, const char *key, const char *value)
{
    memset(d, 0, sizeof(*d));
    mb_init(&d->m, 2, 2);
    d->m.controller = 1;
    d->m.coordinator = 1;
    samsa_conf *conf = samsa_conf_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(conf);
    static const char *const kv[][2] = {
        {"bootstrap.servers", MB_HOST ":9092," MB_HOST ":9093"},
        {"reconnect.backoff.ms", "100"},
        {"reconnect.backoff.max.ms", "1000"},
        {"retry.backoff.ms", "100"},
        {"heartbeat.interval.ms", "1000"},
        {"session.timeout.ms", "10000"},
        {"enable.auto.commit", "false"},
        {"auto.offset.reset", "earliest"},
    };
    char err[256];
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
        CU_ASSERT_EQUAL_FATAL(samsa_conf_set(conf, kv[i][0], kv[i][1], err, sizeof(err)),
                              SAMSA_OK);
    }
    if (key != NULL) {
        CU_ASSERT_EQUAL_FATAL(samsa_conf_set(conf, key, value, err, sizeof(err)), SAMSA_OK);
    }
    samsa_conf_set_error_cb(conf, drv_error, d);
    samsa_conf_set_log_cb(conf, drv_log, d);
    if (kind == 'p') {
        samsa_conf_set_delivery_cb(conf, drv_delivered, d);
    }
    if (kind == 'c') {
        CU_ASSERT_EQUAL_FATAL(samsa_conf_set(conf, "group.id", "fg", err, sizeof(err)),
                              SAMSA_OK);
        samsa_conf_set_rebalance_cb(conf, drv_rebalance, d);
    }
    CU_ASSERT_EQUAL_FATAL(sc_client_new_detached(kind, conf, &d->c, err, sizeof(err)), SAMSA_OK);
    samsa_conf_destroy(conf);
}

static void drv_stop(struct drv *d)
{
    sc_client_destroy(d->c);
    mb_free(&d->m);
}

/* Node n goes down: its connections drop, new ones are refused. */
static void drv_kill(struct drv *d, int32_t n)
{
    pthread_mutex_lock(&d->c->lock);
    d->m.dead |= 1u << n;
    for (struct sc_conn *conn = d->c->conns; conn != NULL; conn = conn->next) {
        if (mb_node_of(conn) == n && conn->state != SC_CONN_DOWN) {
            sc_conn_fail(d->c, conn, "connection reset by peer");
        }
    }
    mb_take_all_requests(&d->m, d->c);
    pthread_mutex_unlock(&d->c->lock);
}

/* One turn of the client at the fake time, then every request it wrote
 * answered by the model: a dead node's connection is refused. */
static void drv_turn(struct drv *d)
{
    pthread_mutex_lock(&d->c->lock);
    (void)sc_client_run_once(d->c, fake_now);
    mb_take_all_requests(&d->m, d->c);
    for (int round = 0; round < 64; round++) {
        bool any = false;
        for (int i = 0; i < d->m.nconns; i++) {
            struct mb_conn *hc = &d->m.conns[i];
            if (hc->n == 0 || hc->conn->state == SC_CONN_DOWN) {
                continue;
            }
            any = true;
            int32_t node = mb_node_of(hc->conn);
            if (mb_is_dead(&d->m, node)) {
                if (hc->conn->node_id >= 0) {
                    d->refused[node]++; /* a node Metadata named, not a bootstrap address */
                }
                sc_conn_fail(d->c, hc->conn, "connection refused");
                mb_take_all_requests(&d->m, d->c);
                continue;
            }
            const struct mb_pending *p = hc->q[0];
            int16_t err = (d->not_coordinator & (1u << node)) != 0 && group_api(p->api)
                              ? KP_ERR_NOT_COORDINATOR
                              : 0;
            if (d->txn_concurrent > 0 &&
                (p->api == KP_API_ADD_PARTITIONS_TO_TXN || p->api == KP_API_END_TXN)) {
                d->txn_concurrent--;
                err = KP_ERR_CONCURRENT_TRANSACTIONS;
            }
            if (d->txn_fence && p->api == KP_API_END_TXN) {
                err = KP_ERR_INVALID_PRODUCER_EPOCH;
            }
            if (p->api == KP_API_PRODUCE && d->c->txn != NULL) {
                const struct kp_ProduceRequest *q = p->req.body;
                d->produce_not_txn += !kp_str_eq_c(q->TransactionalId, d->c->v->transactional_id);
                for (int32_t ti = 0; ti < q->TopicData.count; ti++) {
                    for (int32_t pi = 0; pi < q->TopicData.items[ti].PartitionData.count; pi++) {
                        const struct kp_ProduceRequest_PartitionProduceData *pd =
                            &q->TopicData.items[ti].PartitionData.items[pi];
                        struct kp_batch_header bh;
                        size_t size = 0;
                        d->produce_not_txn +=
                            kp_batch_peek(pd->Records.ptr, (size_t)pd->Records.len, &bh, &size) !=
                                0 ||
                            !kp_batch_is_transactional(&bh);
                        for (const struct sc_ptopic *tp = d->c->ptopics; tp != NULL;
                             tp = tp->next) {
                            if (kp_str_eq_c(q->TopicData.items[ti].Name, tp->name)) {
                                d->produce_before_add +=
                                    pd->Index < 0 || pd->Index >= tp->partition_count ||
                                    tp->parts[pd->Index].txn != SC_PPART_TXN_ADDED;
                            }
                        }
                    }
                }
            }
            struct kp_writer w;
            kp_wr_init(&w, (size_t)1 << 28);
            mb_encode_answer(&d->m, &w, p, err, 0);
            d->answered[node][p->api]++;
            sc_conn_feed(d->c, hc->conn, w.buf, w.len);
            kp_wr_free(&w);
            mb_take_all_requests(&d->m, d->c);
        }
        if (!any) {
            break;
        }
    }
    pthread_mutex_unlock(&d->c->lock);
}

/* Turns every 10 ms of fake time for ms; a consumer polls in each. */
static void drv_run(struct drv *d, int64_t ms)
{
    struct samsa_consumer cons = {.c = d->c};
    for (int64_t end = fake_now + ms; fake_now < end; fake_now += 10) {
        drv_turn(d);
        if (d->c->kind == 'p') {
            struct samsa_producer prod = {.c = d->c};
            (void)samsa_producer_poll(&prod, 0);
        }
        if (d->c->kind != 'c') {
            continue;
        }
        for (;;) {
            samsa_message *msg = samsa_consumer_poll(&cons, 0);
            if (msg == NULL) {
                break;
            }
            d->messages++;
            samsa_message_free(msg);
        }
    }
}

/* Queues an op no user thread waits for (the test reads it after). */
static struct sc_op *drv_queue(struct drv *d, struct sc_op *op);

static struct sc_op *drv_op(struct drv *d, int kind, void *arg)
{
    return drv_queue(d, sc_op_new(kind, arg));
}

static struct sc_op *drv_queue(struct drv *d, struct sc_op *op)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    if (op == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    op->deadline = fake_now + 30000;
    pthread_mutex_lock(&d->c->lock);
    if (d->c->ops_tail != NULL) {
        d->c->ops_tail->next = op;
    } else {
        d->c->ops = op;
    }
    d->c->ops_tail = op;
    pthread_mutex_unlock(&d->c->lock);
    return op;
}

/* The test is done with op: freed if finished, else left to the client
 * (which frees an abandoned op when it ends, or at destroy). */
static void drv_op_release(struct drv *d, struct sc_op *op)
{
    pthread_mutex_lock(&d->c->lock);
    bool done = op->done;
    op->abandoned = true;
    pthread_mutex_unlock(&d->c->lock);
    if (done) {
        sc_op_free(op);
    }
}

/* Runs until the refused node n was tried, then another node takes its
 * roles, as an election would. */
static void drv_run_until_refused(struct drv *d, int32_t n, int32_t successor)
{
    for (int i = 0; i < 500 && d->refused[n] == 0; i++) {
        drv_run(d, 10);
    }
    CU_ASSERT(d->refused[n] > 0);
    d->m.controller = successor;
    d->m.coordinator = successor;
}

static void test_admin_ops_leave_an_unreachable_controller_and_coordinator(void)
{
    struct drv d;
    drv_start(&d, 'a');
    drv_kill(&d, 1); /* Metadata still names it controller and coordinator */
    struct sc_topic_arg *t = kp_calloc(1, sizeof(*t));
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    if (t == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    t->name = sc_strdup("new-topic");
    t->partitions = 1;
    t->replication_factor = 1;
    struct sc_op *create = drv_op(&d, SC_OP_CREATE_TOPIC, t);
    struct sc_admin_arg *g = kp_calloc(1, sizeof(*g));
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    if (g == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    g->name = sc_strdup("fg");
    struct sc_op *describe = drv_op(&d, SC_OP_DESCRIBE_GROUP, g);
    drv_run_until_refused(&d, 1, 0);
    /* The refusal sends them back to Metadata: the new controller and
     * coordinator answer within a few backoffs, long before the 30 s
     * deadline (a client waiting for node 1 would still be waiting). */
    int64_t start = fake_now;
    while (fake_now - start < 5000 && !(create->done && describe->done)) {
        drv_run(&d, 10);
    }
    CU_ASSERT(fake_now - start < 1000);
    CU_ASSERT_TRUE(create->done);
    CU_ASSERT_EQUAL(create->err, SAMSA_OK);
    CU_ASSERT_TRUE(describe->done);
    CU_ASSERT_EQUAL(describe->err, SAMSA_OK);
    CU_ASSERT_EQUAL(d.answered[0][KP_API_CREATE_TOPICS], 1);
    CU_ASSERT_EQUAL(d.answered[0][KP_API_DESCRIBE_GROUPS], 1);
    drv_op_release(&d, create);
    drv_op_release(&d, describe);
    drv_stop(&d);
}

static void test_list_groups_answers_without_a_dead_broker(void)
{
    struct drv d;
    drv_start(&d, 'a');
    d.m.brokers = 3;
    d.m.controller = 0;
    drv_kill(&d, 1); /* Metadata names it; its connections are refused */
    struct sc_admin_arg *g = kp_calloc(1, sizeof(*g));
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    if (g == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    g->name = sc_strdup("");
    struct sc_op *op = drv_op(&d, SC_OP_LIST_GROUPS, g);
    int64_t start = fake_now;
    while (fake_now - start < 5000 && !op->done) {
        drv_run(&d, 10);
    }
    /* Done as soon as node 1 was refused and nodes 0 and 2 answered, not at
     * the 30 s deadline. */
    CU_ASSERT(fake_now - start < 1000);
    CU_ASSERT_TRUE_FATAL(op->done);
    CU_ASSERT_EQUAL(op->err, SAMSA_OK);
    CU_ASSERT_EQUAL(d.answered[0][KP_API_LIST_GROUPS], 1);
    CU_ASSERT_EQUAL(d.answered[2][KP_API_LIST_GROUPS], 1);
    samsa_group_list *l = g->groups;
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    if (l == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    CU_ASSERT_EQUAL(l->count, 2); /* fg and offsets-only, named by both */
    CU_ASSERT_EQUAL_FATAL(l->error_count, 1);
    CU_ASSERT_EQUAL(l->errors[0].node_id, 1);
    CU_ASSERT_EQUAL(l->errors[0].port, 9093);
    CU_ASSERT_EQUAL(l->errors[0].err, SAMSA_ERR_TRANSPORT);
    CU_ASSERT_PTR_NOT_NULL(strstr(l->errors[0].reason, "node 1 (" MB_HOST ":9093)"));
    drv_op_release(&d, op);
    drv_stop(&d);
}

static int total(const struct drv *d, int16_t api)
{
    int n = 0;
    for (int i = 0; i < MB_MAX_NODES; i++) {
        n += d->answered[i][api];
    }
    return n;
}

/* A member of group fg subscribed to t0 and t1 on node 1's coordinator,
 * with its partitions assigned and read to the end. */
static void drv_member(struct drv *d, struct samsa_consumer *cons)
{
    drv_start(d, 'c');
    cons->c = d->c;
    const char *topics[2] = {"t0", "t1"};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_subscribe(cons, topics, 2), SAMSA_OK);
    drv_run(d, 3000);
    CU_ASSERT(d->assigned > 0);
    CU_ASSERT(d->answered[1][KP_API_SYNC_GROUP] >= 1);
    CU_ASSERT(d->answered[1][KP_API_HEARTBEAT] >= 1);
    CU_ASSERT(d->messages > 0);
}

static void test_member_finds_a_new_coordinator_when_its_coordinator_dies(void)
{
    struct drv d;
    struct samsa_consumer cons = {0};
    drv_member(&d, &cons);
    int find = total(&d, KP_API_FIND_COORDINATOR);
    int joins = total(&d, KP_API_JOIN_GROUP);
    /* Between two heartbeats node 1 dies and node 0 takes the group over. */
    drv_kill(&d, 1);
    d.m.coordinator = 0;
    drv_run(&d, 4000); /* less than session.timeout.ms */
    CU_ASSERT(total(&d, KP_API_FIND_COORDINATOR) > find);
    CU_ASSERT(d.answered[0][KP_API_HEARTBEAT] >= 2);
    CU_ASSERT_EQUAL(total(&d, KP_API_JOIN_GROUP), joins); /* still a member */
    CU_ASSERT(d.refused[1] <= 4);
    drv_stop(&d);
}

static void test_cooperative_member_keeps_its_partitions_through_a_rejoin(void)
{
    struct drv d;
    struct samsa_consumer cons = {0};
    drv_start_with(&d, 'c', "partition.assignment.strategy", "cooperative-sticky");
    cons.c = d.c;
    const char *topics[2] = {"t0", "t1"};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_subscribe(&cons, topics, 2), SAMSA_OK);
    drv_run(&d, 3000);
    CU_ASSERT_EQUAL(d.revoked, 0);
    int joins = total(&d, KP_API_JOIN_GROUP);
    int syncs = total(&d, KP_API_SYNC_GROUP);
    /* what it holds now: the same objects must still be there afterwards,
     * fetched on from where they were (an eager member drops them) */
    struct sc_cpart *held[8];
    int64_t pos[8];
    int nh = 0;
    pthread_mutex_lock(&d.c->lock);
    for (int i = 0; i < d.c->cpart_count && nh < 8; i++) {
        held[nh] = d.c->cparts[i];
        pos[nh] = d.c->cparts[i]->position;
        nh++;
    }
    pthread_mutex_unlock(&d.c->lock);
    CU_ASSERT_FATAL(nh > 0);
    int messages = d.messages;
    CU_ASSERT(messages > 0);
    /* t0 grows a partition: the member rejoins */
    d.m.parts[0] = 3;
    pthread_mutex_lock(&d.c->lock);
    d.c->md_wanted = true;
    pthread_mutex_unlock(&d.c->lock);
    drv_run(&d, 3000);
    CU_ASSERT(total(&d, KP_API_JOIN_GROUP) > joins);
    CU_ASSERT(total(&d, KP_API_SYNC_GROUP) > syncs);
    CU_ASSERT_EQUAL(d.revoked, 0); /* nothing moved away: no revoked event */
    pthread_mutex_lock(&d.c->lock);
    for (int k = 0; k < nh; k++) {
        bool still = false;
        for (int i = 0; i < d.c->cpart_count; i++) {
            still = still || d.c->cparts[i] == held[k];
        }
        CU_ASSERT_TRUE(still);
        if (still) {
            CU_ASSERT_FALSE(held[k]->revoking);
            CU_ASSERT(held[k]->position >= pos[k]);
        }
    }
    pthread_mutex_unlock(&d.c->lock);
    drv_stop(&d);
}

static void test_member_moves_on_not_coordinator_and_keeps_its_commits(void)
{
    struct drv d;
    struct samsa_consumer cons = {0};
    drv_member(&d, &cons);
    int joins = total(&d, KP_API_JOIN_GROUP);
    CU_ASSERT_EQUAL(samsa_consumer_commit(&cons, NULL, 0, true, 0), SAMSA_OK);
    drv_run(&d, 500);
    CU_ASSERT_EQUAL(d.answered[1][KP_API_OFFSET_COMMIT], 1);
    for (int t = 0; t < MB_NT; t++) {
        for (int p = 0; p < d.m.parts[t]; p++) {
            d.m.end[t][p] += 5; /* more to read and commit */
        }
    }
    int read = d.messages;
    drv_run(&d, 500);
    CU_ASSERT(d.messages > read);
    /* Node 1, alive, stops coordinating fg (node 0 does now) just as the
     * member commits: the commit is refused NOT_COORDINATOR. */
    d.m.coordinator = 0;
    d.not_coordinator = 1u << 1;
    CU_ASSERT_EQUAL(samsa_consumer_commit(&cons, NULL, 0, true, 0), SAMSA_OK);
    drv_run(&d, 3000);
    CU_ASSERT_EQUAL(d.answered[1][KP_API_OFFSET_COMMIT], 2);
    CU_ASSERT(d.answered[0][KP_API_OFFSET_COMMIT] >= 1);
    CU_ASSERT(d.answered[0][KP_API_HEARTBEAT] >= 1);
    CU_ASSERT_EQUAL(total(&d, KP_API_JOIN_GROUP), joins);
    /* Every assigned partition's commit is its log end: nothing read was lost. */
    struct samsa_partition *as = NULL;
    size_t an = 0;
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_assignment(&cons, &as, &an), SAMSA_OK);
    CU_ASSERT(an > 0);
    for (size_t i = 0; i < an; i++) {
        int t = as[i].topic[1] - '0';
        CU_ASSERT_EQUAL(d.m.committed[t][as[i].partition], d.m.end[t][as[i].partition]);
    }
    samsa_partitions_free(as, an);
    drv_stop(&d);
}


/* Records the model's logs hold, all partitions of both topics. */
static int64_t logged(const struct drv *d, int64_t start[MB_NT][MB_MAXP])
{
    int64_t n = 0;
    for (int t = 0; t < MB_NT; t++) {
        for (int p = 0; p < d->m.parts[t]; p++) {
            n += d->m.end[t][p] - start[t][p];
        }
    }
    return n;
}

static void produce_n(struct drv *d, int n, size_t value_len)
{
    struct samsa_producer prod = {.c = d->c};
    char *value = calloc(1, value_len + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(value);
    if (value == NULL) {
        abort(); /* for the analysers */
    }
    memset(value, 'v', value_len);
    for (int i = 0; i < n; i++) {
        char key[16];
        int kl = snprintf(key, sizeof(key), "k%d", i);
        struct samsa_header h = {"h", "x", 1};
        struct samsa_record r = {
            SAMSA_RECORD_INIT,
            .topic = i % 3 == 0 ? "t1" : "t0",
            .partition = SAMSA_PARTITION_ANY,
            .key = key,
            .key_len = (size_t)kl,
            .value = value,
            .value_len = value_len,
            .headers = i % 5 == 0 ? &h : NULL,
            .header_count = i % 5 == 0 ? 1 : 0,
        };
        CU_ASSERT_EQUAL(samsa_produce(&prod, &r), SAMSA_OK);
    }
    free(value);
}

/* The producer writes its requests by hand with the batches built in
 * place: the model broker checks each frame is the protocol's encoding of
 * what it decodes to, and every record lands once, for each codec. */
static void test_produce_requests_are_the_protocols_encoding(void)
{
    static const char *const codecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    for (size_t k = 0; k < sizeof(codecs) / sizeof(codecs[0]); k++) {
        struct drv d;
        drv_start_with(&d, 'p', "compression.type", codecs[k]);
        int64_t start[MB_NT][MB_MAXP];
        memcpy(start, d.m.end, sizeof(start));
        produce_n(&d, 500, 40);
        drv_run(&d, 3000);
        CU_ASSERT_EQUAL(d.delivered, 500);
        CU_ASSERT_EQUAL(d.failed, 0);
        CU_ASSERT_EQUAL(logged(&d, start), 500);
        CU_ASSERT(d.answered[0][KP_API_PRODUCE] + d.answered[1][KP_API_PRODUCE] >= 2);
        drv_stop(&d);
    }
}

static size_t unsent_produce_bytes(const struct drv *d)
{
    size_t most = 0;
    for (const struct sc_conn *conn = d->c->conns; conn != NULL; conn = conn->next) {
        if (conn->node_id >= 0 && sc_conn_unsent(conn) > most) {
            most = sc_conn_unsent(conn);
        }
    }
    return most;
}

/*
 * Node 1, which leads t0-1, dies; Metadata names it leader for another ms
 * (until the controller notices), then node 0. Returns how many Metadata
 * requests the client made while the dead leader was named: an unreachable
 * leader must make it ask again and again (backing off), not once at the
 * disconnect. Then the election.
 */
static int leader_dies_unnoticed_for(struct drv *d, int64_t ms)
{
    int md = total(d, KP_API_METADATA);
    d->m.unnoticed |= 1u << 1;
    drv_kill(d, 1);
    drv_run(d, ms);
    CU_ASSERT(d->refused[1] > 0);
    d->m.unnoticed = 0; /* node 0 leads t0-1 now */
    return total(d, KP_API_METADATA) - md;
}

/* A consumer assigned t0-0 and t0-1 from the beginning, which read the
 * model's 4 + 5 records. */
static void drv_reading_t0(struct drv *d)
{
    drv_start(d, 'c');
    struct samsa_consumer cons = {.c = d->c};
    struct samsa_partition parts[2] = {{"t0", 0, SAMSA_OFFSET_BEGINNING},
                                       {"t0", 1, SAMSA_OFFSET_BEGINNING}};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_assign(&cons, parts, 2), SAMSA_OK);
    drv_run(d, 1000);
    CU_ASSERT_EQUAL_FATAL(d->messages, 4 + 5);
}

static void test_consumer_asks_metadata_until_its_dead_leader_is_replaced(void)
{
    struct drv d;
    drv_reading_t0(&d);
    int asked = leader_dies_unnoticed_for(&d, 3000);
    /* 100, 200, 400, then 500 ms apart: about 8 in 3 s, not 30 */
    CU_ASSERT(asked >= 5);
    CU_ASSERT(asked <= 10);
    d.m.end[0][1] += 5;
    int64_t elected = fake_now;
    while (fake_now - elected < 5000 && d.messages < 4 + 5 + 5) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(d.messages, 4 + 5 + 5);
    CU_ASSERT(fake_now - elected <= 1000); /* read from node 0 within a refresh */
    CU_ASSERT(d.answered[0][KP_API_FETCH] > 0);
    drv_stop(&d);
}

static void test_producer_asks_metadata_until_its_dead_leader_is_replaced(void)
{
    struct drv d;
    drv_start_with(&d, 'p', "compression.type", "none");
    produce_n(&d, 30, 10);
    drv_run(&d, 500);
    CU_ASSERT_EQUAL_FATAL(d.delivered, 30);
    d.delivered = 0;
    produce_n(&d, 30, 10); /* some for t0-1 */
    int asked = leader_dies_unnoticed_for(&d, 3000);
    CU_ASSERT(asked >= 5);
    CU_ASSERT(asked <= 10);
    CU_ASSERT(d.delivered < 30); /* t0-1's records wait for its leader */
    int64_t elected = fake_now;
    while (fake_now - elected < 5000 && d.delivered < 30) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(d.delivered, 30);
    CU_ASSERT_EQUAL(d.failed, 0);
    CU_ASSERT(fake_now - elected <= 1000);
    drv_stop(&d);
}

/* Every broker down: the error callback hears ALL_BROKERS_DOWN once per
 * outage (as librdkafka's error event), within a few reconnect backoffs,
 * and again in the next outage after the brokers came back. */
static void test_consumer_reports_every_broker_down(void)
{
    struct drv d;
    drv_reading_t0(&d);
    CU_ASSERT_EQUAL(d.all_down, 0);
    for (int outage = 1; outage <= 2; outage++) {
        drv_kill(&d, 0);
        drv_kill(&d, 1);
        int64_t down = fake_now;
        while (fake_now - down < 12000 && d.all_down < outage) {
            drv_run(&d, 10);
        }
        CU_ASSERT_EQUAL(d.all_down, outage);
        CU_ASSERT(fake_now - down <= 3000);
        drv_run(&d, 5000); /* once per outage */
        CU_ASSERT_EQUAL(d.all_down, outage);
        d.m.dead = 0;
        d.m.end[0][0] += 1;
        int before = d.messages;
        int64_t back = fake_now;
        while (fake_now - back < 5000 && d.messages == before) {
            drv_run(&d, 10);
        }
        CU_ASSERT_EQUAL(d.messages, before + 1); /* connected again */
    }
    drv_stop(&d);
}

/* A regular expression in a subscription (librdkafka's ^ convention) is
 * matched against every topic of the cluster: Metadata is asked for all
 * topics, the member joins with the topics it matches (and the names given
 * beside it, a missing one reported as such), and only their partitions
 * are assigned; one that does not compile is refused. */
static void test_regex_subscription_joins_with_the_topics_it_matches(void)
{
    struct drv d;
    drv_start(&d, 'c');
    struct samsa_consumer cons = {.c = d.c};
    const char *bad[1] = {"^t[0"};
    CU_ASSERT_EQUAL(samsa_consumer_subscribe(&cons, bad, 1), SAMSA_ERR_INVALID_ARG);
    const char *topics[2] = {"^t1$", "nosuch"};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_subscribe(&cons, topics, 2), SAMSA_OK);
    drv_run(&d, 3000);
    CU_ASSERT(d.assigned > 0);
    CU_ASSERT(d.messages > 0);
    CU_ASSERT_EQUAL(d.unknown_topic, 1);
    pthread_mutex_lock(&d.c->lock);
    CU_ASSERT(d.c->cpart_count > 0);
    for (int i = 0; i < d.c->cpart_count; i++) {
        CU_ASSERT_STRING_EQUAL(d.c->cparts[i]->topic, "t1");
    }
    pthread_mutex_unlock(&d.c->lock);
    drv_stop(&d);
}

/* A subscription or an assignment the cluster lacks reaches the error
 * callback once (librdkafka's "Subscribed topic not available" and its
 * consumer error for an assigned partition), instead of matching nothing
 * in silence. */
static void test_consumer_reports_what_the_cluster_lacks(void)
{
    struct drv d;
    drv_start(&d, 'c');
    struct samsa_consumer cons = {.c = d.c};
    const char *topics[2] = {"t0", "nosuch"};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_subscribe(&cons, topics, 2), SAMSA_OK);
    drv_run(&d, 3000);
    CU_ASSERT_EQUAL(d.unknown_topic, 1); /* once, though Metadata said it again */
    CU_ASSERT(d.assigned > 0);           /* t0 is read all the same */
    CU_ASSERT(d.messages > 0);
    drv_stop(&d);

    drv_start(&d, 'c');
    cons.c = d.c;
    struct samsa_partition parts[3] = {{"t0", 0, SAMSA_OFFSET_BEGINNING},
                                       {"t0", 99, SAMSA_OFFSET_BEGINNING},
                                       {"nosuch", 0, SAMSA_OFFSET_BEGINNING}};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_assign(&cons, parts, 3), SAMSA_OK);
    drv_run(&d, 3000);
    CU_ASSERT_EQUAL(d.unknown_partition, 1);
    CU_ASSERT_EQUAL(d.unknown_topic, 1);
    CU_ASSERT_EQUAL(d.messages, 4); /* the model's t0-0 */
    drv_stop(&d);
}

/* A record that waited message.timeout.ms is reported MSG_TIMED_OUT, not
 * the TIMED_OUT of a call's own deadline (samsa.h's rule for errors). */
static void test_producer_reports_expiry_as_msg_timed_out(void)
{
    struct drv d;
    drv_start_with(&d, 'p', "message.timeout.ms", "1000");
    drv_kill(&d, 0);
    drv_kill(&d, 1);
    produce_n(&d, 5, 10);
    drv_run(&d, 3000);
    CU_ASSERT_EQUAL(d.failed, 5);
    CU_ASSERT_EQUAL(d.delivered, 0);
    CU_ASSERT_EQUAL(d.last_err, SAMSA_ERR_MSG_TIMED_OUT);
    drv_stop(&d);
}

/* The offsets of a "revoked" event are what samsa.h says: the next offset
 * the application would have got, not how far fetching went. Records
 * fetched and never handed out are reported from their first (before: a
 * partition the application never read was revoked at its fetch position,
 * and an application storing that offset would skip what was fetched). */
static void test_revoked_offsets_are_what_the_application_gets_next(void)
{
    struct drv d;
    drv_start(&d, 'c');
    struct samsa_consumer cons = {.c = d.c};
    const char *topics[2] = {"t0", "t1"};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_subscribe(&cons, topics, 2), SAMSA_OK);
    samsa_message *first = NULL;
    for (int i = 0; i < 500 && first == NULL; i++) {
        drv_turn(&d);
        fake_now += 10;
        first = samsa_consumer_poll(&cons, 0); /* serves "assigned", then one record */
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    if (first == NULL) {
        abort(); /* for the analysers */
    }
    int64_t read_next = first->offset + 1;
    /* the library's sizeof, so SAMSA_HAS_FIELD answers for every field */
    CU_ASSERT_EQUAL(first->struct_size, sizeof(samsa_message));
    CU_ASSERT(SAMSA_HAS_FIELD(samsa_message, first, headers));
    samsa_message_free(first);
    for (int i = 0; i < 100; i++) { /* fetched and queued, not read */
        drv_turn(&d);
        fake_now += 10;
    }
    pthread_mutex_lock(&d.c->lock);
    int n = d.c->cpart_count;
    bool queued = d.c->cq != NULL;
    pthread_mutex_unlock(&d.c->lock);
    CU_ASSERT_FATAL(n > 1);
    CU_ASSERT_TRUE(queued);
    d.m.parts[0] = 3; /* t0 grows a partition: the member rejoins, revoking all */
    pthread_mutex_lock(&d.c->lock);
    d.c->md_wanted = true;
    pthread_mutex_unlock(&d.c->lock);
    for (int i = 0; i < 100 && d.revoked == 0; i++) {
        drv_turn(&d);
        fake_now += 10;
        samsa_message *m = samsa_consumer_poll(&cons, 0);
        CU_ASSERT_PTR_NULL(m); /* fetching stopped before the event */
        samsa_message_free(m);
    }
    CU_ASSERT_EQUAL_FATAL(d.revoked_n, n);
    for (int i = 0; i < d.revoked_n; i++) {
        /* the partition read once: after that record; the others: from
         * their first record (the model's logs start at 0) */
        CU_ASSERT(d.revoked_at[i] == 0 || d.revoked_at[i] == read_next);
    }
    int at_next = 0;
    for (int i = 0; i < d.revoked_n; i++) {
        at_next += d.revoked_at[i] == read_next;
    }
    CU_ASSERT(at_next >= 1);
    drv_stop(&d);
}

/* The log callback gets the client's debug lines (only with `debug` set),
 * and a librdkafka property ignored under the warn switch as a warning
 * that log_level can drop. */
static void warned(int level, const char *line, void *opaque)
{
    int *w = opaque;
    *w += level == SAMSA_LOG_WARNING && strstr(line, "client.rack") != NULL;
}

static void test_log_callback_gets_debug_lines_and_warnings(void)
{
    struct drv d;
    drv_reading_t0(&d);
    CU_ASSERT_EQUAL(d.logged, 0); /* debug not set */
    drv_stop(&d);
    drv_start_with(&d, 'c', "debug", "all");
    struct samsa_consumer cons = {.c = d.c};
    struct samsa_partition part = {"t0", 0, SAMSA_OFFSET_BEGINNING};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_assign(&cons, &part, 1), SAMSA_OK);
    drv_run(&d, 1000);
    CU_ASSERT(d.logged > 0); /* connections, metadata, leaders */
    drv_stop(&d);

    samsa_conf *c = samsa_conf_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    int w = 0;
    char err[256];
    samsa_conf_set_log_cb(c, warned, &w);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "unsupported.librdkafka.properties", "warn", err,
                                   sizeof(err)),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "client.rack", "r1", err, sizeof(err)), SAMSA_OK);
    CU_ASSERT_EQUAL(w, 1);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "log_level", "3", err, sizeof(err)), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_conf_set(c, "client.rack", "r1", err, sizeof(err)), SAMSA_OK);
    CU_ASSERT_EQUAL(w, 1); /* below log_level 4: dropped */
    samsa_conf_destroy(c);
}

/* samsa_producer_purge: the records queued and never sent are reported
 * PURGED at the next poll and leave the queue; the producer goes on. */
static void test_producer_purge_reports_what_was_never_sent(void)
{
    struct drv d;
    drv_start(&d, 'p');
    drv_kill(&d, 0);
    drv_kill(&d, 1);
    produce_n(&d, 5, 10);
    drv_run(&d, 500); /* no broker: nothing sent */
    struct samsa_producer prod = {.c = d.c};
    CU_ASSERT_EQUAL(samsa_producer_outq_len(&prod), 5);
    CU_ASSERT_EQUAL(samsa_producer_purge(&prod), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_producer_poll(&prod, 0), 5);
    CU_ASSERT_EQUAL(d.failed, 5);
    CU_ASSERT_EQUAL(d.last_err, SAMSA_ERR_PURGED);
    CU_ASSERT_EQUAL(samsa_producer_outq_len(&prod), 0);
    d.m.dead = 0; /* and it produces on */
    produce_n(&d, 3, 10);
    for (int i = 0; i < 500 && d.delivered < 3; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(d.delivered, 3);
    drv_stop(&d);
}

/* Growable structs (samsa.h): samsa_produce reads a record to its
 * struct_size. Without SAMSA_RECORD_INIT (0), or shorter than SONAME 0's
 * record, it is refused; a record of a newer samsa.h (a field past the
 * library's sizeof) is taken, its unknown tail ignored; every delivery
 * report carries the library's sizeof. */
static void test_records_are_read_to_their_struct_size(void)
{
    struct drv d;
    drv_start(&d, 'p');
    struct samsa_producer prod = {.c = d.c};
    struct samsa_record bare = {.topic = "t0", .partition = 0, .value = "v", .value_len = 1};
    CU_ASSERT_EQUAL(samsa_produce(&prod, &bare), SAMSA_ERR_INVALID_ARG);
    struct samsa_record shorter = {SAMSA_RECORD_INIT, .topic = "t0", .value = "v", .value_len = 1};
    shorter.struct_size = offsetof(struct samsa_record, opaque);
    CU_ASSERT_EQUAL(samsa_produce(&prod, &shorter), SAMSA_ERR_INVALID_ARG);
    struct newer_record {
        struct samsa_record r;
        uint64_t later_field; /* what a later samsa.h appends */
    } newer = {.r = {.topic = "t0", .partition = 0, .value = "v", .value_len = 1},
               .later_field = UINT64_MAX};
    newer.r.struct_size = sizeof(newer);
    CU_ASSERT_EQUAL(samsa_produce(&prod, &newer.r), SAMSA_OK);
    struct samsa_record now = {SAMSA_RECORD_INIT, .topic = "t1", .partition = 0, .value = "v",
                               .value_len = 1};
    CU_ASSERT_EQUAL(samsa_produce(&prod, &now), SAMSA_OK);
    for (int i = 0; i < 500 && d.delivered + d.failed < 2; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(d.delivered, 2);
    CU_ASSERT_EQUAL(d.failed, 0);
    CU_ASSERT_EQUAL(d.unsized, 0);
    drv_stop(&d);
}

/* A connection whose socket does not take what is queued on it gets no
 * more Produce requests past a few megabytes: the records wait in their
 * queues, and all go once it drains. */
static void test_produce_waits_for_a_connection_that_does_not_drain(void)
{
    struct drv d;
    drv_start_with(&d, 'p', "compression.type", "none");
    produce_n(&d, 30, 10); /* metadata, the producer id, the leaders' connections */
    drv_run(&d, 500);
    CU_ASSERT_EQUAL_FATAL(d.delivered, 30);
    d.delivered = 0;
    int64_t start[MB_NT][MB_MAXP];
    memcpy(start, d.m.end, sizeof(start));
    produce_n(&d, 6000, 4000); /* 24 MB */
    pthread_mutex_lock(&d.c->lock);
    size_t most = 0;
    for (int turn = 0; turn < 20; turn++) { /* nothing written to any socket */
        (void)sc_client_run_once(d.c, fake_now);
        size_t u = unsent_produce_bytes(&d);
        most = u > most ? u : most;
    }
    pthread_mutex_unlock(&d.c->lock);
    CU_ASSERT(most >= (size_t)1024 * 1024);
    /* 4 MiB, then one request more: at most four batches of batch.size */
    CU_ASSERT(most <= (size_t)(4 + 4) * 1024 * 1024 + 4096);
    CU_ASSERT_EQUAL(d.delivered, 0);
    drv_run(&d, 5000);
    CU_ASSERT_EQUAL(d.delivered, 6000);
    CU_ASSERT_EQUAL(d.failed, 0);
    CU_ASSERT_EQUAL(logged(&d, start), 6000);
    drv_stop(&d);
}

#ifdef SAMSA_TEST_JANSSON
/* The statistics documents a handle's stats callback got: the last one
 * parsed, and how many came. */
struct stats_seen {
    int count;
    json_t *last;
};

static void stats_seen_cb(const char *json, size_t json_len, void *opaque)
{
    struct stats_seen *s = opaque;
    CU_ASSERT_EQUAL(strlen(json), json_len);
    json_error_t jerr;
    json_t *doc = json_loadb(json, json_len, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL(doc);
    if (doc != NULL) {
        json_decref(s->last);
        s->last = doc;
        s->count++;
    }
}

/* drv_start with statistics every interval ms, each document parsed into st. */
static void drv_start_stats(struct drv *d, char kind, const char *interval,
                            struct stats_seen *st)
{
    drv_start_with(d, kind, "statistics.interval.ms", interval);
    d->c->conf->stats_cb = stats_seen_cb;
    d->c->conf->stats_opaque = st;
}

static json_int_t stats_int(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    CU_ASSERT(json_is_integer(v));
    return json_is_integer(v) ? json_integer_value(v) : -12345;
}

/* A string of obj ("" when missing, so that the test fails, not crashes). */
static const char *stats_str(json_t *obj, const char *key)
{
    const char *v = json_string_value(json_object_get(obj, key));
    CU_ASSERT_PTR_NOT_NULL(v);
    return v != NULL ? v : "";
}

/* The partitions object of topic in the last document (NULL: none). */
static json_t *stats_partitions(const struct stats_seen *s, const char *topic)
{
    json_t *t = json_object_get(json_object_get(s->last, "topics"), topic);
    return json_object_get(t, "partitions");
}

/* msgq_cnt summed over a topic's partitions (the unassigned one, -1, too). */
static json_int_t stats_queued(const struct stats_seen *s, const char *topic)
{
    json_int_t n = 0;
    const char *k;
    json_t *p;
    json_object_foreach(stats_partitions(s, topic), k, p) {
        n += stats_int(p, "msgq_cnt");
    }
    return n;
}

/* statistics.interval.ms and the stats callback, as librdkafka's: one
 * document per interval from the poll calls, whose counts are what the
 * producer did: records queued while no broker answers, then delivered. */
static void test_stats_callback_counts_what_the_producer_did(void)
{
    struct drv d;
    struct stats_seen st = {0};
    drv_start_stats(&d, 'p', "1000", &st);
    drv_kill(&d, 0);
    drv_kill(&d, 1);
    produce_n(&d, 5, 10); /* t1 gets records 0 and 3, t0 the three others */
    drv_run(&d, 1500);
    CU_ASSERT_EQUAL(st.count, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st.last);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(st.last, "type")), "producer");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(st.last, "client_id")), "samsa");
    CU_ASSERT(json_is_string(json_object_get(st.last, "name")));
    CU_ASSERT(stats_int(st.last, "ts") > 0);
    CU_ASSERT(stats_int(st.last, "time") > 1600000000); /* seconds since the epoch */
    CU_ASSERT_EQUAL(stats_int(st.last, "msg_cnt"), 5);
    CU_ASSERT(stats_int(st.last, "msg_size") > 50); /* 5 records of 10 bytes */
    CU_ASSERT_EQUAL(stats_int(st.last, "msg_max"), 100000);
    CU_ASSERT_EQUAL(stats_int(st.last, "txmsgs"), 0);
    CU_ASSERT_EQUAL(stats_queued(&st, "t0"), 3);
    CU_ASSERT_EQUAL(stats_queued(&st, "t1"), 2);
    CU_ASSERT(json_is_object(json_object_get(st.last, "brokers")));
    /* librdkafka's eos block of an idempotent producer: no id without a
     * broker */
    json_t *eos = json_object_get(st.last, "eos");
    CU_ASSERT_STRING_EQUAL(stats_str(eos, "idemp_state"), "RequestPID");
    CU_ASSERT_EQUAL(stats_int(eos, "producer_id"), -1);
    CU_ASSERT_EQUAL(stats_int(eos, "producer_epoch"), -1);
    CU_ASSERT_EQUAL(stats_int(eos, "epoch_cnt"), 0);
    CU_ASSERT_STRING_EQUAL(stats_str(eos, "txn_state"), "Init");
    CU_ASSERT(json_is_false(json_object_get(eos, "txn_may_enq")));
    CU_ASSERT_PTR_NULL(json_object_get(st.last, "cgrp")); /* not a group member */

    d.m.dead = 0;
    for (int i = 0; i < 500 && d.delivered < 5; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL_FATAL(d.delivered, 5);
    int before = st.count;
    drv_run(&d, 1000);
    CU_ASSERT_EQUAL(st.count, before + 1);
    CU_ASSERT_EQUAL(stats_int(st.last, "msg_cnt"), 0);
    CU_ASSERT_EQUAL(stats_int(st.last, "msg_size"), 0);
    CU_ASSERT_EQUAL(stats_int(st.last, "txmsgs"), 5);
    CU_ASSERT(stats_int(st.last, "tx") > 0);
    CU_ASSERT(stats_int(st.last, "rx") > 0);
    CU_ASSERT(stats_int(st.last, "tx_bytes") > 50);
    CU_ASSERT_EQUAL(stats_queued(&st, "t0"), 0);
    eos = json_object_get(st.last, "eos");
    CU_ASSERT_STRING_EQUAL(stats_str(eos, "idemp_state"), "Assigned");
    CU_ASSERT(stats_int(eos, "producer_id") >= 0);
    CU_ASSERT(stats_int(eos, "producer_epoch") >= 0);
    CU_ASSERT_EQUAL(stats_int(eos, "epoch_cnt"), 1);
    CU_ASSERT(stats_int(eos, "idemp_stateage") <= 1000 + 10);
    /* every broker the client talks to, by librdkafka's "host:port/id" name */
    int up = 0;
    const char *k;
    json_t *b;
    json_object_foreach(json_object_get(st.last, "brokers"), k, b) {
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(b, "name")), k);
        if (strcmp(json_string_value(json_object_get(b, "state")), "UP") == 0 &&
            stats_int(b, "nodeid") >= 0) {
            up++;
            CU_ASSERT(stats_int(b, "rx") > 0);
        }
    }
    CU_ASSERT(up >= 1);
    json_decref(st.last);
    drv_stop(&d);
}

/* A consumer's document: what it handed out, per partition where it stands
 * against the leader's watermarks. */
static void test_stats_callback_counts_what_the_consumer_read(void)
{
    struct drv d;
    struct stats_seen st = {0};
    drv_start_stats(&d, 'c', "500", &st);
    struct samsa_consumer cons = {.c = d.c};
    struct samsa_partition parts[2] = {{"t0", 0, SAMSA_OFFSET_BEGINNING},
                                       {"t0", 1, SAMSA_OFFSET_BEGINNING}};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_assign(&cons, parts, 2), SAMSA_OK);
    drv_run(&d, 1000);
    CU_ASSERT_EQUAL_FATAL(d.messages, 4 + 5);
    drv_run(&d, 600);
    CU_ASSERT(st.count >= 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st.last);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(st.last, "type")), "consumer");
    CU_ASSERT_EQUAL(stats_int(st.last, "rxmsgs"), 4 + 5);
    json_t *p0 = json_object_get(stats_partitions(&st, "t0"), "0");
    json_t *p1 = json_object_get(stats_partitions(&st, "t0"), "1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p1);
    CU_ASSERT_EQUAL(stats_int(p0, "app_offset"), 4);
    CU_ASSERT_EQUAL(stats_int(p0, "stored_offset"), 4);
    CU_ASSERT_EQUAL(stats_int(p0, "hi_offset"), 4);
    CU_ASSERT_EQUAL(stats_int(p0, "high_watermark"), 4);
    CU_ASSERT_EQUAL(stats_int(p0, "consumer_lag"), 0);
    CU_ASSERT_EQUAL(stats_int(p0, "msgq_cnt"), 0);
    CU_ASSERT_EQUAL(stats_int(p1, "app_offset"), 5);
    CU_ASSERT_EQUAL(stats_int(p1, "hi_offset"), 5);
    CU_ASSERT_EQUAL(stats_int(p1, "partition"), 1);
    /* a document waits for a poll: none is made while one waits */
    int before = st.count;
    pthread_mutex_lock(&d.c->lock);
    for (int i = 0; i < 5; i++) {
        fake_now += 600;
        (void)sc_client_run_once(d.c, fake_now);
    }
    pthread_mutex_unlock(&d.c->lock);
    drv_run(&d, 10);
    CU_ASSERT_EQUAL(st.count, before + 1);
    json_decref(st.last);
    drv_stop(&d);
}

/* A group member's document has librdkafka's cgrp block: the coordinator
 * up, the join state, the assignment's size, and each rebalance counted
 * with its reason; an idempotent producer's eos block is the producer's. */
static void test_stats_cgrp_follows_the_group(void)
{
    struct drv d;
    struct stats_seen st = {0};
    drv_start_stats(&d, 'c', "500", &st);
    struct samsa_consumer cons = {.c = d.c};
    drv_run(&d, 600); /* not subscribed yet */
    CU_ASSERT_PTR_NOT_NULL_FATAL(st.last);
    json_t *g = json_object_get(st.last, "cgrp");
    CU_ASSERT_STRING_EQUAL(stats_str(g, "join_state"), "init");
    CU_ASSERT_EQUAL(stats_int(g, "assignment_size"), 0);
    CU_ASSERT_EQUAL(stats_int(g, "rebalance_cnt"), 0);
    CU_ASSERT_EQUAL(stats_int(g, "rebalance_age"), -1);
    CU_ASSERT_PTR_NULL(json_object_get(st.last, "eos"));

    const char *topics[2] = {"t0", "t1"};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_subscribe(&cons, topics, 2), SAMSA_OK);
    drv_run(&d, 3000);
    CU_ASSERT_FATAL(d.assigned > 0);
    g = json_object_get(st.last, "cgrp");
    CU_ASSERT_STRING_EQUAL(stats_str(g, "state"), "up");
    CU_ASSERT_STRING_EQUAL(stats_str(g, "join_state"), "steady");
    CU_ASSERT_STRING_EQUAL(stats_str(g, "samsa_state"), "stable");
    pthread_mutex_lock(&d.c->lock);
    int held = d.c->cpart_count;
    pthread_mutex_unlock(&d.c->lock);
    CU_ASSERT(held > 0);
    CU_ASSERT_EQUAL(stats_int(g, "assignment_size"), held);
    CU_ASSERT_EQUAL(stats_int(g, "rebalance_cnt"), 1);
    CU_ASSERT(stats_int(g, "rebalance_age") >= 0);
    CU_ASSERT(stats_int(g, "rebalance_age") < 3000);
    CU_ASSERT(stats_int(g, "generation") >= 1);
    CU_ASSERT_STRING_EQUAL(stats_str(g, "rebalance_reason"), "");

    /* t0 grows a partition: revoked, joined again, assigned */
    d.m.parts[0] = 3;
    pthread_mutex_lock(&d.c->lock);
    d.c->md_wanted = true;
    pthread_mutex_unlock(&d.c->lock);
    drv_run(&d, 3000);
    g = json_object_get(st.last, "cgrp");
    CU_ASSERT_STRING_EQUAL(stats_str(g, "join_state"), "steady");
    pthread_mutex_lock(&d.c->lock);
    CU_ASSERT(d.c->cpart_count > held); /* t0's new partition too */
    CU_ASSERT_EQUAL(stats_int(g, "assignment_size"), d.c->cpart_count);
    pthread_mutex_unlock(&d.c->lock);
    CU_ASSERT_EQUAL(stats_int(g, "rebalance_cnt"), 3);
    CU_ASSERT_STRING_EQUAL(stats_str(g, "rebalance_reason"),
                           "t0 has 3 partitions, had 2");
    json_decref(st.last);
    drv_stop(&d);
}
#endif

/* A partitioner callback: its partition for each record, given the topic,
 * the key, the partition count and the record's opaque. */
struct part_seen {
    int calls;
    int32_t count_seen;
    int opaque_ok;
    int by_partition[4]; /* delivered, by partition */
    int unknown;         /* failed with UNKNOWN_PARTITION, partition -1 */
};

static int32_t last_digit_partitioner(const char *topic, const void *key, size_t key_len,
                                      int32_t partition_count, void *cb_opaque, void *msg_opaque)
{
    struct part_seen *s = cb_opaque;
    s->calls++;
    s->count_seen = partition_count;
    s->opaque_ok += msg_opaque == (void *)s;
    CU_ASSERT_STRING_EQUAL(topic, "t0");
    if (key == NULL || key_len == 0) {
        return 0;
    }
    int digit = ((const char *)key)[key_len - 1] - '0';
    return digit == 9 ? 7 : digit % partition_count; /* 7: a partition t0 lacks */
}

static void part_seen_delivered(const struct samsa_delivery *r, void *opaque)
{
    struct part_seen *s = opaque;
    if (r->err == SAMSA_OK && r->partition >= 0 && r->partition < 4) {
        s->by_partition[r->partition]++;
    } else if (r->err == SAMSA_ERR_UNKNOWN_PARTITION && r->partition == -1) {
        s->unknown++;
    }
}

/* Deliveries by topic (t0, t1) and partition. */
static void by_topic_delivered(const struct samsa_delivery *r, void *opaque)
{
    int(*seen)[4] = opaque;
    int t = strcmp(r->topic, "t0") == 0 ? 0 : strcmp(r->topic, "t1") == 0 ? 1 : -1;
    if (t >= 0 && r->err == SAMSA_OK && r->partition >= 0 && r->partition < 4) {
        seen[t][r->partition]++;
    }
}

static int32_t always_one(const char *topic, const void *key, size_t key_len,
                          int32_t partition_count, void *cb_opaque, void *msg_opaque)
{
    (void)topic, (void)key, (void)key_len, (void)partition_count, (void)msg_opaque;
    (*(int *)cb_opaque)++;
    return 1;
}

static int32_t always_zero(const char *topic, const void *key, size_t key_len,
                           int32_t partition_count, void *cb_opaque, void *msg_opaque)
{
    (void)key, (void)key_len, (void)partition_count, (void)msg_opaque;
    CU_ASSERT_STRING_EQUAL(topic, "t0");
    (*(int *)cb_opaque)++;
    return 0;
}

/* A topic conf's partitioner (librdkafka's rd_kafka_topic_conf_set_partitioner_cb
 * on the conf given to rd_kafka_topic_new) places its topic's records; the
 * other topics keep the handle's. A conf copied keeps its topic confs; a
 * topic conf takes `partitioner` by name and refuses the handle's keys. */
static void test_topic_conf_partitioner_overrides_the_handles(void)
{
    char err[256];
    samsa_topic_conf *tc = samsa_topic_conf_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tc);
    CU_ASSERT_EQUAL(samsa_topic_conf_set(tc, "linger.ms", "5", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "linger.ms: not a topic setting"));
    CU_ASSERT_EQUAL(samsa_topic_conf_set(tc, "partitioner", "nosuch", err, sizeof(err)),
                    SAMSA_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(samsa_topic_conf_set(tc, "partitioner", "murmur2", err, sizeof(err)),
                    SAMSA_OK);
    samsa_conf *conf = samsa_conf_new();
    CU_ASSERT_EQUAL(samsa_conf_set_topic_conf(conf, "t1", tc), SAMSA_OK);
    samsa_conf *copy = samsa_conf_dup(conf);
    samsa_conf_destroy(conf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    const struct samsa_topic_conf *got = sc_conf_topic(copy, "t1");
    if (got == NULL) {
        CU_FAIL_FATAL("the copy lost t1's topic conf");
        return;
    }
    CU_ASSERT_EQUAL(got->partitioner, SC_PART_MURMUR2);
    CU_ASSERT_PTR_NULL(sc_conf_topic(copy, "t0"));
    samsa_conf_destroy(copy);

    struct drv d;
    int handle_calls = 0, topic_calls = 0;
    int seen[2][4] = {{0}};
    drv_start(&d, 'p');
    samsa_topic_conf_set_partitioner_cb(tc, always_zero, &topic_calls);
    CU_ASSERT_EQUAL(samsa_conf_set_topic_conf(d.c->conf, "t0", tc), SAMSA_OK);
    samsa_topic_conf_destroy(tc); /* the conf has its copy */
    d.c->conf->partitioner_cb = always_one;
    d.c->conf->partitioner_opaque = &handle_calls;
    d.c->conf->dr_cb = by_topic_delivered;
    d.c->conf->dr_opaque = seen;
    struct samsa_producer prod = {.c = d.c};
    for (int i = 0; i < 10; i++) {
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = i % 2 == 0 ? "t0" : "t1",
                                 .partition = SAMSA_PARTITION_ANY, .key = "k", .key_len = 1,
                                 .value = "v", .value_len = 1};
        CU_ASSERT_EQUAL(samsa_produce(&prod, &r), SAMSA_OK);
    }
    for (int i = 0; i < 500 && seen[0][0] + seen[0][1] + seen[1][0] + seen[1][1] < 10; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(topic_calls, 5);
    CU_ASSERT_EQUAL(handle_calls, 5);
    CU_ASSERT_EQUAL(seen[0][0], 5); /* t0: its own partitioner */
    CU_ASSERT_EQUAL(seen[0][1], 0);
    CU_ASSERT_EQUAL(seen[1][1], 5); /* t1: the handle's */
    CU_ASSERT_EQUAL(seen[1][0], 0);
    drv_stop(&d);
}

static void test_partitioner_callback_places_records_and_fails_bad_answers(void)
{
    struct drv d;
    struct part_seen s = {0};
    drv_start(&d, 'p');
    d.c->conf->partitioner_cb = last_digit_partitioner;
    d.c->conf->partitioner_opaque = &s;
    d.c->conf->dr_cb = part_seen_delivered;
    d.c->conf->dr_opaque = &s;
    struct samsa_producer prod = {.c = d.c};
    for (int i = 0; i < 20; i++) {
        char key[8];
        int kl = snprintf(key, sizeof(key), "k%d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = "t0", .partition = SAMSA_PARTITION_ANY,
                                 .key = key, .key_len = (size_t)kl, .value = "v",
                                 .value_len = 1, .opaque = &s};
        CU_ASSERT_EQUAL(samsa_produce(&prod, &r), SAMSA_OK);
    }
    /* an explicit partition is not the callback's */
    struct samsa_record r1 = {SAMSA_RECORD_INIT, .topic = "t0", .partition = 1, .value = "v", .value_len = 1};
    CU_ASSERT_EQUAL(samsa_produce(&prod, &r1), SAMSA_OK);
    for (int i = 0; i < 500 && s.by_partition[0] + s.by_partition[1] + s.unknown < 21; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(s.calls, 20);
    CU_ASSERT_EQUAL(s.opaque_ok, 20);
    CU_ASSERT_EQUAL(s.count_seen, 2);
    /* keys k0..k19: last digits 0-9 twice; 9 -> 7 fails; even -> 0, odd -> 1 */
    CU_ASSERT_EQUAL(s.unknown, 2);
    CU_ASSERT_EQUAL(s.by_partition[0], 10);
    CU_ASSERT_EQUAL(s.by_partition[1], 8 + 1);
    drv_stop(&d);
}

/* The offset store (librdkafka's rd_kafka_offsets_store): with
 * enable.auto.offset.store=false a commit of the assignment sends what the
 * application stored, not how far it read. */
static void test_commit_sends_only_stored_offsets_without_auto_store(void)
{
    struct drv d;
    drv_start_with(&d, 'c', "enable.auto.offset.store", "false");
    struct samsa_consumer cons = {.c = d.c};
    struct samsa_partition parts[2] = {{"t0", 0, SAMSA_OFFSET_BEGINNING},
                                       {"t0", 1, SAMSA_OFFSET_BEGINNING}};
    CU_ASSERT_EQUAL_FATAL(samsa_consumer_assign(&cons, parts, 2), SAMSA_OK);
    samsa_message *second = NULL;
    for (int i = 0; i < 100 && second == NULL; i++) {
        drv_turn(&d);
        fake_now += 10;
        samsa_message *m;
        while ((m = samsa_consumer_poll(&cons, 0)) != NULL) {
            d.messages++;
            if (m->partition == 0 && m->offset == 1) {
                second = m;
            } else {
                samsa_message_free(m);
            }
        }
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(second);
    drv_run(&d, 500);
    CU_ASSERT_EQUAL(d.messages, 4 + 5);
    /* read everything, stored nothing: nothing to commit */
    CU_ASSERT_EQUAL(samsa_consumer_commit(&cons, NULL, 0, true, 0), SAMSA_OK);
    drv_run(&d, 500);
    CU_ASSERT_EQUAL(d.m.committed[0][0], -1);
    CU_ASSERT_EQUAL(d.m.committed[0][1], 2); /* the model's, from before */
    CU_ASSERT_EQUAL(samsa_consumer_store_message(&cons, second), SAMSA_OK);
    struct samsa_partition p1 = {"t0", 1, 3};
    CU_ASSERT_EQUAL(samsa_consumer_store_offsets(&cons, &p1, 1), SAMSA_OK);
    struct samsa_partition bad[2] = {{"t0", 0, 4}, {"t1", 0, 1}}; /* t1 is not assigned */
    CU_ASSERT_EQUAL(samsa_consumer_store_offsets(&cons, bad, 2), SAMSA_ERR_STATE);
    struct samsa_partition neg = {"t0", 0, -1};
    CU_ASSERT_EQUAL(samsa_consumer_store_offsets(&cons, &neg, 1), SAMSA_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(samsa_consumer_commit(&cons, NULL, 0, true, 0), SAMSA_OK);
    drv_run(&d, 500);
    CU_ASSERT_EQUAL(d.m.committed[0][0], 2); /* message 1 + 1, not the 4 read */
    CU_ASSERT_EQUAL(d.m.committed[0][1], 3);
    samsa_message_free(second);
    drv_stop(&d);

    /* librdkafka refuses the store while enable.auto.offset.store=true */
    drv_reading_t0(&d);
    struct samsa_consumer auto_cons = {.c = d.c};
    CU_ASSERT_EQUAL(samsa_consumer_store_offsets(&auto_cons, &p1, 1), SAMSA_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(samsa_consumer_commit(&auto_cons, NULL, 0, true, 0), SAMSA_OK);
    drv_run(&d, 500);
    CU_ASSERT_EQUAL(d.m.committed[0][0], 4); /* everything read */
    CU_ASSERT_EQUAL(d.m.committed[0][1], 5);
    drv_stop(&d);
}

/* Delivery reports by status (librdkafka's rd_kafka_message_status). */
struct status_seen {
    int by_status[3];
    int purged;
};

static void status_seen_cb(const struct samsa_delivery *r, void *opaque)
{
    struct status_seen *s = opaque;
    if (r->status >= 0 && r->status < 3) {
        s->by_status[r->status]++;
    }
    s->purged += r->err == SAMSA_ERR_PURGED;
    CU_ASSERT_EQUAL(r->status == SAMSA_MSG_PERSISTED, r->err == SAMSA_OK);
}

static int init_pid_answered(const struct drv *d)
{
    return d->answered[0][KP_API_INIT_PRODUCER_ID] + d->answered[1][KP_API_INIT_PRODUCER_ID];
}

/* rd_kafka_purge(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT): the
 * records on the wire are reported PURGED and POSSIBLY_PERSISTED, those never
 * sent NOT_PERSISTED; the idempotent producer takes a new producer id (its
 * purged sequence numbers would otherwise fail what follows) and produces on. */
/* A transactional producer (transactional.id id) on the model, its
 * transaction state set as samsa_producer_new sets it. */
static struct sc_txn *drv_start_txn(struct drv *d, const char *id)
{
    drv_start_with(d, 'p', "transactional.id", id);
    struct sc_txn *t = kp_calloc(1, sizeof(*t));
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    if (t == NULL) {
        abort(); /* for the analysers */
    }
    t->coord_id = -1;
    d->c->txn = t;
    return t;
}

/* Runs until op is done (at most 3 s of fake time). */
static void drv_run_op(struct drv *d, const struct sc_op *op)
{
    for (int i = 0; i < 300 && !op->done; i++) {
        drv_run(d, 10);
    }
    CU_ASSERT_TRUE(op->done);
}

/*
 * The transactional producer against the model: init_transactions finds
 * the coordinator (FindCoordinator key type 1) and takes the id there; a
 * transaction's records wait until AddPartitionsToTxn added their
 * partitions, retried while the coordinator answers CONCURRENT_TRANSACTIONS,
 * and go as transactional batches with the id; the commit is one EndTxn,
 * itself retried; then the partitions leave the transaction, and an empty
 * transaction commits without a request.
 */
static void test_txn_adds_partitions_first_and_retries_concurrent_transactions(void)
{
    struct drv d;
    struct sc_txn *t = drv_start_txn(&d, "tx-1");
    struct samsa_producer prod = {.c = d.c};
    struct samsa_record r = {SAMSA_RECORD_INIT, .topic = "t0", .partition = 0, .value = "v",
                             .value_len = 1};
    CU_ASSERT_EQUAL(samsa_produce(&prod, &r), SAMSA_ERR_STATE); /* before init */
    struct sc_op *op = drv_queue(&d, sc_txn_op_new(SC_TXN_CALL_INIT, NULL, NULL, 0));
    drv_run_op(&d, op);
    CU_ASSERT_EQUAL(op->err, SAMSA_OK);
    drv_op_release(&d, op);
    CU_ASSERT_EQUAL(t->state, SC_TXN_READY);
    CU_ASSERT_EQUAL(d.c->pid, 4242);
    CU_ASSERT_EQUAL(t->coord_id, 1);
    CU_ASSERT_EQUAL(d.answered[1][KP_API_INIT_PRODUCER_ID], 1); /* at the coordinator */
    CU_ASSERT_EQUAL(d.answered[0][KP_API_INIT_PRODUCER_ID], 0);
    CU_ASSERT_PTR_NULL(samsa_producer_begin_transaction(&prod));
    d.txn_concurrent = 2;
    produce_n(&d, 6, 10);
    for (int i = 0; i < 300 && d.delivered < 6; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(d.delivered, 6);
    CU_ASSERT_EQUAL(d.produce_before_add, 0);
    CU_ASSERT_EQUAL(d.produce_not_txn, 0);
    CU_ASSERT(d.answered[1][KP_API_ADD_PARTITIONS_TO_TXN] >= 3); /* 2 refused, then added */
    CU_ASSERT(t->added >= 2);
    CU_ASSERT_EQUAL(t->state, SC_TXN_IN_TXN);
    /* commit_transaction flushed (all 6 delivered): EndTxn, retried once */
    t->state = SC_TXN_COMMITTING;
    d.txn_concurrent = 1;
    op = drv_queue(&d, sc_txn_op_new(SC_TXN_CALL_COMMIT, NULL, NULL, 0));
    drv_run_op(&d, op);
    CU_ASSERT_EQUAL(op->err, SAMSA_OK);
    drv_op_release(&d, op);
    CU_ASSERT_EQUAL(d.answered[1][KP_API_END_TXN], 2);
    CU_ASSERT_EQUAL(t->state, SC_TXN_READY);
    CU_ASSERT_EQUAL(t->added, 0);
    CU_ASSERT_EQUAL(d.c->ptopics->parts[0].txn, SC_PPART_TXN_NONE);
    /* an empty transaction: no request */
    CU_ASSERT_PTR_NULL(samsa_producer_begin_transaction(&prod));
    t->state = SC_TXN_COMMITTING;
    op = drv_queue(&d, sc_txn_op_new(SC_TXN_CALL_COMMIT, NULL, NULL, 0));
    drv_run_op(&d, op);
    CU_ASSERT_EQUAL(op->err, SAMSA_OK);
    drv_op_release(&d, op);
    CU_ASSERT_EQUAL(d.answered[1][KP_API_END_TXN], 2);
    drv_stop(&d);
}

/* A coordinator that says the producer was fenced makes the transaction
 * fatal: the commit fails with SAMSA_ERR_FENCED and samsa_produce refuses
 * with SAMSA_ERR_FATAL from then on. */
static void test_txn_fenced_commit_is_fatal(void)
{
    struct drv d;
    struct sc_txn *t = drv_start_txn(&d, "tx-2");
    struct samsa_producer prod = {.c = d.c};
    struct sc_op *op = drv_queue(&d, sc_txn_op_new(SC_TXN_CALL_INIT, NULL, NULL, 0));
    drv_run_op(&d, op);
    drv_op_release(&d, op);
    CU_ASSERT_PTR_NULL(samsa_producer_begin_transaction(&prod));
    produce_n(&d, 3, 10);
    for (int i = 0; i < 300 && d.delivered < 3; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(d.delivered, 3);
    t->state = SC_TXN_COMMITTING;
    d.txn_fence = true; /* a newer producer with the id took the epoch */
    op = drv_queue(&d, sc_txn_op_new(SC_TXN_CALL_COMMIT, NULL, NULL, 0));
    drv_run_op(&d, op);
    CU_ASSERT_EQUAL(op->err, SAMSA_ERR_FENCED);
    drv_op_release(&d, op);
    CU_ASSERT_EQUAL(t->state, SC_TXN_FATAL);
    struct samsa_record r = {SAMSA_RECORD_INIT, .topic = "t0", .partition = 0, .value = "v",
                             .value_len = 1};
    CU_ASSERT_EQUAL(samsa_produce(&prod, &r), SAMSA_ERR_FATAL);
    samsa_txn_error *e = samsa_producer_begin_transaction(&prod);
    CU_ASSERT_TRUE(samsa_txn_error_is_fatal(e));
    CU_ASSERT_EQUAL(samsa_txn_error_code(e), SAMSA_ERR_FENCED);
    samsa_txn_error_destroy(e);
    drv_stop(&d);
}

static void test_purge_inflight_reports_possibly_persisted_and_renews_the_producer_id(void)
{
    struct drv d;
    struct status_seen st = {0};
    drv_start(&d, 'p');
    produce_n(&d, 30, 10); /* metadata, the producer id, the leaders' connections */
    drv_run(&d, 500);
    CU_ASSERT_EQUAL_FATAL(d.delivered, 30);
    d.c->conf->dr_cb = status_seen_cb;
    d.c->conf->dr_opaque = &st;
    int pids = init_pid_answered(&d);
    struct samsa_producer prod = {.c = d.c};
    produce_n(&d, 10, 10);
    pthread_mutex_lock(&d.c->lock);
    fake_now += 10; /* past linger.ms: sent, and left unanswered */
    (void)sc_client_run_once(d.c, fake_now);
    mb_take_all_requests(&d.m, d.c);
    int inflight = 0;
    for (struct sc_conn *conn = d.c->conns; conn != NULL; conn = conn->next) {
        inflight += conn->produce_inflight;
    }
    pthread_mutex_unlock(&d.c->lock);
    CU_ASSERT_FATAL(inflight > 0);
    produce_n(&d, 4, 10); /* queued, never sent */
    CU_ASSERT_EQUAL(samsa_producer_purge_flags(&prod, 0x8), SAMSA_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(samsa_producer_purge_flags(&prod, SAMSA_PURGE_QUEUE | SAMSA_PURGE_INFLIGHT),
                    SAMSA_OK);
    pthread_mutex_lock(&d.c->lock);
    (void)sc_client_run_once(d.c, fake_now); /* the I/O thread's part */
    pthread_mutex_unlock(&d.c->lock);
    CU_ASSERT_EQUAL(samsa_producer_poll(&prod, 0), 14);
    CU_ASSERT_EQUAL(st.purged, 14);
    CU_ASSERT_EQUAL(st.by_status[SAMSA_MSG_POSSIBLY_PERSISTED], 10);
    CU_ASSERT_EQUAL(st.by_status[SAMSA_MSG_NOT_PERSISTED], 4);
    CU_ASSERT_EQUAL(samsa_producer_outq_len(&prod), 0);
    produce_n(&d, 5, 10);
    for (int i = 0; i < 500 && st.by_status[SAMSA_MSG_PERSISTED] < 5; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(st.by_status[SAMSA_MSG_PERSISTED], 5);
    CU_ASSERT_EQUAL(st.purged, 14);
    CU_ASSERT(init_pid_answered(&d) > pids); /* a new producer id before them */
    drv_stop(&d);
}

/* A delivery report carries the record's headers, as librdkafka's
 * rd_kafka_message_headers on a delivered message. */
struct headers_seen {
    int with, without, wrong;
};

static void headers_seen_cb(const struct samsa_delivery *r, void *opaque)
{
    struct headers_seen *s = opaque;
    if (r->header_count == 0) {
        s->without += r->headers == NULL;
        return;
    }
    bool ok = r->header_count == 1 && strcmp(r->headers[0].name, "h") == 0 &&
              r->headers[0].value_len == 1 && memcmp(r->headers[0].value, "x", 1) == 0;
    s->with += ok;
    s->wrong += !ok;
}

static void test_delivery_reports_carry_the_records_headers(void)
{
    struct drv d;
    struct headers_seen s = {0};
    drv_start(&d, 'p');
    d.c->conf->dr_cb = headers_seen_cb;
    d.c->conf->dr_opaque = &s;
    produce_n(&d, 10, 10); /* records 0 and 5 have the header h=x */
    for (int i = 0; i < 500 && s.with + s.without + s.wrong < 10; i++) {
        drv_run(&d, 10);
    }
    CU_ASSERT_EQUAL(s.with, 2);
    CU_ASSERT_EQUAL(s.without, 8);
    CU_ASSERT_EQUAL(s.wrong, 0);
    drv_stop(&d);
}

int main(void)
{
    static CU_TestInfo tests[] = {
        {"murmur2_matches_java_and_librdkafka_vectors",
         test_murmur2_matches_java_and_librdkafka_vectors},
        {"keys_land_where_java_puts_them", test_keys_land_where_java_puts_them},
        {"empty_key_is_hashed_null_key_is_sticky", test_empty_key_is_hashed_null_key_is_sticky},
        {"consistent_modes_use_crc32_like_librdkafka",
         test_consistent_modes_use_crc32_like_librdkafka},
        {"conf_defaults_are_librdkafka_and_java_names",
         test_conf_defaults_are_librdkafka_and_java_names},
        {"conf_accepts_aliases_and_reports_bad_values",
         test_conf_accepts_aliases_and_reports_bad_values},
        {"conf_knows_every_librdkafka_property", test_conf_knows_every_librdkafka_property},
        {"conf_idempotence_conflicts", test_conf_idempotence_conflicts},
        {"conf_transactional_id", test_conf_transactional_id},
        {"conf_security_keys", test_conf_security_keys},
        {"txn_calls_allowed_in_each_state", test_txn_calls_allowed_in_each_state},
        {"txn_errors_are_classified_as_librdkafka", test_txn_errors_are_classified_as_librdkafka},
        {"txn_adds_partitions_first_and_retries_concurrent_transactions",
         test_txn_adds_partitions_first_and_retries_concurrent_transactions},
        {"txn_fenced_commit_is_fatal", test_txn_fenced_commit_is_fatal},
        {"broker_list_parsing", test_broker_list_parsing},
        {"linger_holds_records_until_due", test_linger_holds_records_until_due},
        {"batch_size_and_count_cut_batches", test_batch_size_and_count_cut_batches},
        {"retries_keep_sequence_order", test_retries_keep_sequence_order},
        {"new_producer_id_renumbers_retries", test_new_producer_id_renumbers_retries},
        {"expiry_reports_old_records_and_flags_lost_sequences",
         test_expiry_reports_old_records_and_flags_lost_sequences},
        {"sequence_wraps_at_int32_max", test_sequence_wraps_at_int32_max},
        {"range_assignor_example_of_the_reference", test_range_assignor_example_of_the_reference},
        {"roundrobin_deals_sorted_partitions_skipping_unsubscribed",
         test_roundrobin_deals_sorted_partitions_skipping_unsubscribed},
        {"range_gives_first_members_the_extra_partitions",
         test_range_gives_first_members_the_extra_partitions},
        {"sticky_balances_then_keeps_across_joins_and_leaves",
         test_sticky_balances_then_keeps_across_joins_and_leaves},
        {"sticky_respects_subscriptions_and_resolves_claims",
         test_sticky_respects_subscriptions_and_resolves_claims},
        {"sticky_user_data_is_kafkas_layout", test_sticky_user_data_is_kafkas_layout},
        {"cooperative_sticky_hands_over_in_the_next_generation",
         test_cooperative_sticky_hands_over_in_the_next_generation},
        {"cooperative_sticky_never_gives_a_partition_two_owners",
         test_cooperative_sticky_never_gives_a_partition_two_owners},
        {"subscription_v0_to_v3_decode", test_subscription_v0_to_v3_decode},
        {"cooperative_subscription_v3_is_byte_exact_and_round_trips",
         test_cooperative_subscription_v3_is_byte_exact_and_round_trips},
        {"cooperative_leader_reads_ownership_from_user_data_too",
         test_cooperative_leader_reads_ownership_from_user_data_too},
        {"subscription_encode_round_trips_and_is_byte_exact",
         test_subscription_encode_round_trips_and_is_byte_exact},
        {"assignment_round_trip_and_empty", test_assignment_round_trip_and_empty},
        {"error_names_and_sentences", test_error_names_and_sentences},
        {"admin_ops_leave_an_unreachable_controller_and_coordinator",
         test_admin_ops_leave_an_unreachable_controller_and_coordinator},
        {"list_groups_answers_without_a_dead_broker",
         test_list_groups_answers_without_a_dead_broker},
        {"member_finds_a_new_coordinator_when_its_coordinator_dies",
         test_member_finds_a_new_coordinator_when_its_coordinator_dies},
        {"cooperative_member_keeps_its_partitions_through_a_rejoin",
         test_cooperative_member_keeps_its_partitions_through_a_rejoin},
        {"member_moves_on_not_coordinator_and_keeps_its_commits",
         test_member_moves_on_not_coordinator_and_keeps_its_commits},
        {"produce_requests_are_the_protocols_encoding",
         test_produce_requests_are_the_protocols_encoding},
        {"produce_waits_for_a_connection_that_does_not_drain",
         test_produce_waits_for_a_connection_that_does_not_drain},
        {"consumer_asks_metadata_until_its_dead_leader_is_replaced",
         test_consumer_asks_metadata_until_its_dead_leader_is_replaced},
        {"producer_asks_metadata_until_its_dead_leader_is_replaced",
         test_producer_asks_metadata_until_its_dead_leader_is_replaced},
        {"consumer_reports_every_broker_down", test_consumer_reports_every_broker_down},
        {"producer_purge_reports_what_was_never_sent",
         test_producer_purge_reports_what_was_never_sent},
        {"records_are_read_to_their_struct_size", test_records_are_read_to_their_struct_size},
        {"log_callback_gets_debug_lines_and_warnings",
         test_log_callback_gets_debug_lines_and_warnings},
        {"revoked_offsets_are_what_the_application_gets_next",
         test_revoked_offsets_are_what_the_application_gets_next},
        {"producer_reports_expiry_as_msg_timed_out", test_producer_reports_expiry_as_msg_timed_out},
        {"consumer_reports_what_the_cluster_lacks", test_consumer_reports_what_the_cluster_lacks},
        {"fnv1a_modes_are_librdkafkas", test_fnv1a_modes_are_librdkafkas},
        {"delivery_reports_carry_the_records_headers",
         test_delivery_reports_carry_the_records_headers},
        {"purge_inflight_reports_possibly_persisted_and_renews_the_producer_id",
         test_purge_inflight_reports_possibly_persisted_and_renews_the_producer_id},
        {"commit_sends_only_stored_offsets_without_auto_store",
         test_commit_sends_only_stored_offsets_without_auto_store},
        {"regex_subscription_joins_with_the_topics_it_matches",
         test_regex_subscription_joins_with_the_topics_it_matches},
        {"topic_conf_partitioner_overrides_the_handles",
         test_topic_conf_partitioner_overrides_the_handles},
        {"partitioner_callback_places_records_and_fails_bad_answers",
         test_partitioner_callback_places_records_and_fails_bad_answers},
#ifdef SAMSA_TEST_JANSSON
        {"stats_callback_counts_what_the_producer_did",
         test_stats_callback_counts_what_the_producer_did},
        {"stats_callback_counts_what_the_consumer_read",
         test_stats_callback_counts_what_the_consumer_read},
        {"stats_cgrp_follows_the_group", test_stats_cgrp_follows_the_group},
#endif
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("client", tests);
}
