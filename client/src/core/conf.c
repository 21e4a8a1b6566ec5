/*
 * Configuration: string keys named and defaulted as librdkafka and the Java
 * client name them. One const table drives set, get, defaults and errors.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"

enum key_type {
    KT_STRING,
    KT_INT,
    KT_BOOL,
    KT_ENUM,
    KT_ASSIGNORS,
    KT_BYTES64, /* int64 scaled by `scale` */
};

struct enum_name {
    const char *name;
    int value;
};

struct key_desc {
    const char *name;
    const char *alias;  /* another accepted name, or NULL */
    const char *alias2;
    int type;
    size_t offset;      /* into struct sc_conf_values */
    int64_t min, max;
    int64_t scale;      /* KT_BYTES64 */
    const char *dflt;
    const struct enum_name *names;
};

static const struct enum_name acks_names[] = {
    {"all", -1}, {"-1", -1}, {"0", 0}, {"1", 1}, {NULL, 0},
};
static const struct enum_name codec_names[] = {
    {"none", KP_CODEC_NONE}, {"gzip", KP_CODEC_GZIP}, {"snappy", KP_CODEC_SNAPPY},
    {"lz4", KP_CODEC_LZ4},   {"zstd", KP_CODEC_ZSTD}, {NULL, 0},
};
static const struct enum_name partitioner_names[] = {
    {"murmur2_random", SC_PART_MURMUR2_RANDOM},
    {"murmur2", SC_PART_MURMUR2},
    {"consistent_random", SC_PART_CONSISTENT_RANDOM},
    {"consistent", SC_PART_CONSISTENT},
    {"random", SC_PART_RANDOM},
    {"fnv1a", SC_PART_FNV1A},
    {"fnv1a_random", SC_PART_FNV1A_RANDOM},
    {NULL, 0},
};
static const struct enum_name reset_names[] = {
    {"earliest", SC_RESET_EARLIEST}, {"smallest", SC_RESET_EARLIEST},
    {"beginning", SC_RESET_EARLIEST}, {"latest", SC_RESET_LATEST},
    {"largest", SC_RESET_LATEST},    {"end", SC_RESET_LATEST},
    {"error", SC_RESET_ERROR},       {NULL, 0},
};
static const struct enum_name unsupported_names[] = {
    {"error", 0}, {"warn", 1}, {NULL, 0},
};
/* librdkafka's CONFIGURATION.md (2.x): security.protocol, sasl.mechanisms
 * (GSSAPI and OAUTHBEARER are not here), ssl.endpoint.identification.algorithm */
static const struct enum_name security_names[] = {
    {"plaintext", SC_SEC_PLAINTEXT},           {"ssl", SC_SEC_SSL},
    {"sasl_plaintext", SC_SEC_SASL_PLAINTEXT}, {"sasl_ssl", SC_SEC_SASL_SSL},
    {NULL, 0},
};
static const struct enum_name sasl_names[] = {
    {"PLAIN", SC_SASL_PLAIN},
    {"SCRAM-SHA-256", SC_SASL_SCRAM_SHA_256},
    {"SCRAM-SHA-512", SC_SASL_SCRAM_SHA_512},
    {NULL, 0},
};
static const struct enum_name endpoint_names[] = {
    {"https", 1}, {"none", 0}, {NULL, 0},
};
static const struct enum_name isolation_names[] = {
    {"read_uncommitted", 0}, {"read_committed", 1}, {NULL, 0},
};

#define OFF(f) offsetof(struct sc_conf_values, f)

/* Defaults: librdkafka's where the two clients differ, except where the
 * README says otherwise (enable.idempotence: Java's true; partitioner:
 * Java's murmur2 placement). */
static const struct key_desc keys[] = {
    {"bootstrap.servers", "metadata.broker.list", NULL, KT_STRING, OFF(bootstrap_servers), 0, 0,
     0, "", NULL},
    {"client.id", NULL, NULL, KT_STRING, OFF(client_id), 0, 0, 0, "samsa", NULL},
    {"acks", "request.required.acks", NULL, KT_ENUM, OFF(acks), 0, 0, 0, "all", acks_names},
    {"enable.idempotence", NULL, NULL, KT_BOOL, OFF(enable_idempotence), 0, 0, 0, "true", NULL},
    {"linger.ms", "queue.buffering.max.ms", NULL, KT_INT, OFF(linger_ms), 0, 900000, 0, "5",
     NULL},
    {"batch.size", NULL, NULL, KT_INT, OFF(batch_size), 1, 2147483647, 0, "1000000", NULL},
    {"batch.num.messages", NULL, NULL, KT_INT, OFF(batch_num_messages), 1, 1000000, 0, "10000",
     NULL},
    {"compression.type", "compression.codec", NULL, KT_ENUM, OFF(compression), 0, 0, 0, "none",
     codec_names},
    {"max.in.flight.requests.per.connection", "max.in.flight", NULL, KT_INT, OFF(max_in_flight),
     1, 1000000, 0, "5", NULL},
    {"message.timeout.ms", "delivery.timeout.ms", NULL, KT_INT, OFF(message_timeout_ms), 1,
     2147483647, 0, "300000", NULL},
    {"retries", "message.send.max.retries", NULL, KT_INT, OFF(retries), 0, 2147483647, 0,
     "2147483647", NULL},
    {"retry.backoff.ms", NULL, NULL, KT_INT, OFF(retry_backoff_ms), 1, 300000, 0, "100", NULL},
    {"request.timeout.ms", NULL, NULL, KT_INT, OFF(request_timeout_ms), 1, 900000, 0, "30000",
     NULL},
    {"socket.timeout.ms", NULL, NULL, KT_INT, OFF(socket_timeout_ms), 10, 300000, 0, "60000",
     NULL},
    {"metadata.max.age.ms", "topic.metadata.refresh.interval.ms", NULL, KT_INT,
     OFF(metadata_max_age_ms), 1, 86400000, 0, "300000", NULL},
    {"queue.buffering.max.messages", NULL, NULL, KT_INT, OFF(queue_max_messages), 1, 2147483647,
     0, "100000", NULL},
    {"queue.buffering.max.kbytes", NULL, NULL, KT_BYTES64, OFF(queue_max_bytes), 1, 2147483647,
     1024, "1048576", NULL},
    {"buffer.memory", NULL, NULL, KT_BYTES64, OFF(queue_max_bytes), 1024, INT64_MAX / 2, 1,
     "1073741824", NULL},
    {"partitioner", NULL, NULL, KT_ENUM, OFF(partitioner), 0, 0, 0, "murmur2_random",
     partitioner_names},
    {"message.max.bytes", "max.request.size", NULL, KT_INT, OFF(message_max_bytes), 1000,
     1000000000, 0, "1000000", NULL},
    {"group.id", NULL, NULL, KT_STRING, OFF(group_id), 0, 0, 0, "", NULL},
    {"group.instance.id", NULL, NULL, KT_STRING, OFF(group_instance_id), 0, 0, 0, "", NULL},
    {"auto.offset.reset", NULL, NULL, KT_ENUM, OFF(auto_offset_reset), 0, 0, 0, "latest",
     reset_names},
    {"enable.auto.commit", "auto.commit.enable", NULL, KT_BOOL, OFF(enable_auto_commit), 0, 0, 0, "true", NULL},
    {"enable.auto.offset.store", NULL, NULL, KT_BOOL, OFF(enable_auto_offset_store), 0, 0, 0,
     "true", NULL},
    {"auto.commit.interval.ms", NULL, NULL, KT_INT, OFF(auto_commit_interval_ms), 0, 86400000, 0,
     "5000", NULL},
    {"session.timeout.ms", NULL, NULL, KT_INT, OFF(session_timeout_ms), 1, 3600000, 0, "45000",
     NULL},
    {"heartbeat.interval.ms", NULL, NULL, KT_INT, OFF(heartbeat_interval_ms), 1, 3600000, 0,
     "3000", NULL},
    {"max.poll.interval.ms", NULL, NULL, KT_INT, OFF(max_poll_interval_ms), 1, 86400000, 0,
     "300000", NULL},
    {"partition.assignment.strategy", NULL, NULL, KT_ASSIGNORS, OFF(assignors), 0, 0, 0,
     "range,roundrobin", NULL},
    {"fetch.wait.max.ms", "fetch.max.wait.ms", NULL, KT_INT, OFF(fetch_wait_max_ms), 0, 300000, 0,
     "500", NULL},
    {"fetch.min.bytes", NULL, NULL, KT_INT, OFF(fetch_min_bytes), 1, 100000000, 0, "1", NULL},
    {"fetch.max.bytes", NULL, NULL, KT_INT, OFF(fetch_max_bytes), 0, 2147483135, 0, "52428800",
     NULL},
    {"max.partition.fetch.bytes", "fetch.message.max.bytes", NULL, KT_INT,
     OFF(max_partition_fetch_bytes), 1, 1000000000, 0, "1048576", NULL},
    {"isolation.level", NULL, NULL, KT_ENUM, OFF(isolation_level), 0, 0, 0, "read_committed",
     isolation_names},
    {"queued.max.messages.kbytes", NULL, NULL, KT_BYTES64, OFF(queued_max_bytes), 1, 2097151,
     1024, "65536", NULL},
    {"allow.auto.create.topics", NULL, NULL, KT_BOOL, OFF(allow_auto_create_topics), 0, 0, 0,
     "false", NULL},
    {"reconnect.backoff.ms", NULL, NULL, KT_INT, OFF(reconnect_backoff_ms), 0, 3600000, 0, "100",
     NULL},
    {"reconnect.backoff.max.ms", NULL, NULL, KT_INT, OFF(reconnect_backoff_max_ms), 0, 3600000,
     0, "10000", NULL},
    {"debug", NULL, NULL, KT_STRING, OFF(debug), 0, 0, 0, "", NULL},
    {"log_level", NULL, NULL, KT_INT, OFF(log_level), 0, 7, 0, "6", NULL},
    {"socket.keepalive.enable", NULL, NULL, KT_BOOL, OFF(socket_keepalive), 0, 0, 0, "false",
     NULL},
    {"unsupported.librdkafka.properties", NULL, NULL, KT_ENUM, OFF(unsupported_rdkafka), 0, 0, 0,
     "error", unsupported_names},
    {"statistics.interval.ms", NULL, NULL, KT_INT, OFF(statistics_interval_ms), 0, 86400000, 0,
     "0", NULL},
    {"transactional.id", NULL, NULL, KT_STRING, OFF(transactional_id), 0, 0, 0, "", NULL},
    {"transaction.timeout.ms", NULL, NULL, KT_INT, OFF(transaction_timeout_ms), 1000, 2147483647,
     0, "60000", NULL},
    {"security.protocol", NULL, NULL, KT_ENUM, OFF(security_protocol), 0, 0, 0, "plaintext",
     security_names},
    {"ssl.ca.location", NULL, NULL, KT_STRING, OFF(ssl_ca_location), 0, 0, 0, "", NULL},
    {"ssl.certificate.location", NULL, NULL, KT_STRING, OFF(ssl_certificate_location), 0, 0, 0,
     "", NULL},
    {"ssl.key.location", NULL, NULL, KT_STRING, OFF(ssl_key_location), 0, 0, 0, "", NULL},
    {"ssl.key.password", NULL, NULL, KT_STRING, OFF(ssl_key_password), 0, 0, 0, "", NULL},
    {"ssl.endpoint.identification.algorithm", NULL, NULL, KT_ENUM,
     OFF(ssl_endpoint_identification), 0, 0, 0, "https", endpoint_names},
    {"enable.ssl.certificate.verification", NULL, NULL, KT_BOOL,
     OFF(enable_ssl_certificate_verification), 0, 0, 0, "true", NULL},
    /* librdkafka's default is GSSAPI, which libsamsa does not have */
    {"sasl.mechanisms", "sasl.mechanism", NULL, KT_ENUM, OFF(sasl_mechanism), 0, 0, 0, "PLAIN",
     sasl_names},
    {"sasl.username", NULL, NULL, KT_STRING, OFF(sasl_username), 0, 0, 0, "", NULL},
    {"sasl.password", NULL, NULL, KT_STRING, OFF(sasl_password), 0, 0, 0, "", NULL},
};

#define KEY_COUNT (sizeof(keys) / sizeof(keys[0]))
_Static_assert(KEY_COUNT <= SC_CONF_MAX_KEYS, "raise SC_CONF_MAX_KEYS");

void sc_verrf(char *buf, size_t size, const char *fmt, va_list ap)
{
    if (buf == NULL || size == 0) {
        return;
    }
    int n = vsnprintf(buf, size, fmt, ap);
    if (n < 0) {
        buf[0] = '\0';
    }
}

void sc_errf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sc_verrf(buf, size, fmt, ap);
    va_end(ap);
}

char *sc_strndup(const char *s, size_t n)
{
    char *d = kp_malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *sc_strdup(const char *s)
{
    return sc_strndup(s, strlen(s));
}

/*
 * librdkafka's properties (its CONFIGURATION.md, 2.x) that are not keys of
 * the table above. Where libsamsa always does what one value says, that
 * value is accepted (and nothing else); the others are known, not
 * supported: samsa_conf_set refuses them with "known librdkafka property,
 * not supported by libsamsa" (SAMSA_ERR_NOT_IMPLEMENTED), or accepts them
 * with that warning when unsupported.librdkafka.properties=warn.
 */
static const struct {
    const char *name;
    const char *value; /* what libsamsa always does */
} rdkafka_fixed[] = {
    {"api.version.request", "true"},      /* ApiVersions first on every connection */
    {"socket.nagle.disable", "true"},     /* TCP_NODELAY on every socket */
    {"broker.address.family", "any"},     /* getaddrinfo with AF_UNSPEC */
    {"connections.max.idle.ms", "0"},     /* idle connections are kept */
    {"group.protocol.type", "consumer"},
    {"offset.store.method", "broker"},    /* offsets are committed to the group */
    {"queuing.strategy", "fifo"},
    {"produce.offset.report", "true"},    /* every delivery report has its offset */
    {"enable.random.seed", "true"},
    {"enable.partition.eof", "false"},    /* samsa_consumer_at_end instead */
};

static const char *const rdkafka_unsupported[] = {
    "builtin.features", "message.copy.max.bytes", "receive.message.max.bytes",
    "topic.metadata.refresh.fast.interval.ms", "topic.metadata.refresh.fast.cnt",
    "topic.metadata.refresh.sparse", "topic.metadata.propagation.max.ms", "topic.blacklist",
    "socket.blocking.max.ms", "socket.send.buffer.bytes", "socket.receive.buffer.bytes",
    "socket.max.fails", "broker.address.ttl", "socket.connection.setup.timeout.ms",
    "reconnect.backoff.jitter.ms", "enabled_events",
    "log.queue", "log.thread.name", "log.connection.close", "internal.termination.signal",
    "api.version.request.timeout.ms", "api.version.fallback.ms", "broker.version.fallback",
    "ssl.cipher.suites", "ssl.curves.list", "ssl.sigalgs.list", "ssl.key.pem",
    "ssl.certificate.pem", "ssl.ca.pem", "ssl.ca.certificate.stores", "ssl.crl.location",
    "ssl.keystore.location", "ssl.keystore.password", "ssl.providers", "ssl.engine.location",
    "ssl.engine.id", "sasl.kerberos.service.name", "sasl.kerberos.principal",
    "sasl.kerberos.kinit.cmd", "sasl.kerberos.keytab", "sasl.kerberos.min.time.before.relogin",
    "sasl.oauthbearer.config", "enable.sasl.oauthbearer.unsecure.jwt",
    "sasl.oauthbearer.method", "sasl.oauthbearer.client.id", "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.scope", "sasl.oauthbearer.extensions", "sasl.oauthbearer.token.endpoint.url",
    "plugin.library.paths", "coordinator.query.interval.ms",
    "queued.min.messages", "fetch.error.backoff.ms", "check.crcs", "client.rack",
    "enable.gapless.guarantee",
    "queue.buffering.backpressure.threshold", "delivery.report.only.error",
    "sticky.partitioning.linger.ms", "compression.level", "offset.store.path",
    "offset.store.sync.interval.ms", "consume.callback.max.messages",
};

static int find_key(const char *name)
{
    for (size_t i = 0; i < KEY_COUNT; i++) {
        if (strcmp(keys[i].name, name) == 0 ||
            (keys[i].alias != NULL && strcmp(keys[i].alias, name) == 0) ||
            (keys[i].alias2 != NULL && strcmp(keys[i].alias2, name) == 0)) {
            return (int)i;
        }
    }
    return -1;
}

static void *field(struct sc_conf_values *v, const struct key_desc *k)
{
    return (char *)v + k->offset;
}

/* Strict decimal integer: optional sign, digits, nothing else. */
static bool parse_int64(const char *s, int64_t *out)
{
    if (s[0] == '\0') {
        return false;
    }
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') {
        return false;
    }
    *out = (int64_t)x;
    return true;
}

static void enum_list(const struct enum_name *names, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (const struct enum_name *e = names; e->name != NULL; e++) {
        int n = snprintf(buf + off, size - off, "%s%s", off == 0 ? "" : ", ", e->name);
        if (n < 0 || (size_t)n >= size - off) {
            break;
        }
        off += (size_t)n;
    }
}

static int parse_assignors(const char *value, int *out, int *count, char *errstr,
                           size_t errstr_size)
{
    int n = 0;
    const char *p = value;
    while (*p != '\0') {
        while (*p == ' ' || *p == ',') {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        const char *e = p;
        while (*e != '\0' && *e != ',' && *e != ' ') {
            e++;
        }
        size_t len = (size_t)(e - p);
        /* the protocol names, and Java's class names for them */
        static const struct {
            const char *name;
            int assignor;
        } names[] = {
            {"range", SC_ASSIGNOR_RANGE},
            {"org.apache.kafka.clients.consumer.RangeAssignor", SC_ASSIGNOR_RANGE},
            {"roundrobin", SC_ASSIGNOR_ROUNDROBIN},
            {"org.apache.kafka.clients.consumer.RoundRobinAssignor", SC_ASSIGNOR_ROUNDROBIN},
            {"sticky", SC_ASSIGNOR_STICKY},
            {"org.apache.kafka.clients.consumer.StickyAssignor", SC_ASSIGNOR_STICKY},
            {"cooperative-sticky", SC_ASSIGNOR_COOPERATIVE_STICKY},
            {"org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
             SC_ASSIGNOR_COOPERATIVE_STICKY},
        };
        int a = -1;
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && a < 0; k++) {
            if (strlen(names[k].name) == len && memcmp(p, names[k].name, len) == 0) {
                a = names[k].assignor;
            }
        }
        if (a < 0) {
            sc_errf(errstr, errstr_size,
                    "partition.assignment.strategy: unknown assignor \"%.*s\" (accepted: range, "
                    "roundrobin, sticky, cooperative-sticky)",
                    (int)len, p);
            return SAMSA_ERR_INVALID_CONFIG;
        }
        if (n > 0 && sc_assignor_cooperative(out[0]) != sc_assignor_cooperative(a)) {
            /* A group runs one rebalance protocol: an eager member would
             * drop what a cooperative one keeps (librdkafka refuses it too). */
            sc_errf(errstr, errstr_size,
                    "partition.assignment.strategy: all assignors must have the same protocol "
                    "type: \"%s\" is %s, \"%.*s\" is %s (online migration between eager and "
                    "cooperative assignors is not supported)",
                    sc_assignor_name(out[0]),
                    sc_assignor_cooperative(out[0]) ? "cooperative" : "eager", (int)len, p,
                    sc_assignor_cooperative(a) ? "cooperative" : "eager");
            return SAMSA_ERR_INVALID_CONFIG;
        }
        for (int i = 0; i < n; i++) {
            if (out[i] == a) {
                a = -1;
            }
        }
        if (a >= 0) {
            if (n == SC_MAX_ASSIGNORS) {
                break;
            }
            out[n++] = a;
        }
        p = e;
    }
    if (n == 0) {
        sc_errf(errstr, errstr_size, "partition.assignment.strategy: no assignor given");
        return SAMSA_ERR_INVALID_CONFIG;
    }
    *count = n;
    return SAMSA_OK;
}

/* Parses value for key k into v (not touching str[]). */
static int apply(struct sc_conf_values *v, const struct key_desc *k, const char *value,
                 char *errstr, size_t errstr_size)
{
    switch (k->type) {
    case KT_STRING: {
        char *copy = sc_strdup(value);
        if (copy == NULL) {
            return SAMSA_ERR_NOMEM;
        }
        char **slot = field(v, k);
        kp_free(*slot);
        *slot = copy;
        return SAMSA_OK;
    }
    case KT_INT:
    case KT_BYTES64: {
        int64_t x;
        if (!parse_int64(value, &x)) {
            sc_errf(errstr, errstr_size, "%s: \"%s\" is not an integer", k->name, value);
            return SAMSA_ERR_INVALID_CONFIG;
        }
        if (x < k->min || x > k->max) {
            sc_errf(errstr, errstr_size, "%s: %lld is outside %lld..%lld", k->name, (long long)x,
                    (long long)k->min, (long long)k->max);
            return SAMSA_ERR_INVALID_CONFIG;
        }
        if (k->type == KT_INT) {
            *(int *)field(v, k) = (int)x;
        } else {
            *(int64_t *)field(v, k) = x * k->scale;
        }
        return SAMSA_OK;
    }
    case KT_BOOL:
        if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0) {
            *(bool *)field(v, k) = true;
        } else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0) {
            *(bool *)field(v, k) = false;
        } else {
            sc_errf(errstr, errstr_size, "%s: \"%s\" is not a boolean (true or false)", k->name,
                    value);
            return SAMSA_ERR_INVALID_CONFIG;
        }
        return SAMSA_OK;
    case KT_ENUM:
        /* case-insensitive, as librdkafka's rd_kafka_conf_s2i_find (src/rdkafka_conf.c) */
        for (const struct enum_name *e = k->names; e->name != NULL; e++) {
            if (strcasecmp(e->name, value) == 0) {
                *(int *)field(v, k) = e->value;
                return SAMSA_OK;
            }
        }
        {
            char list[256];
            enum_list(k->names, list, sizeof(list));
            sc_errf(errstr, errstr_size, "%s: \"%s\" is not one of: %s", k->name, value, list);
        }
        return SAMSA_ERR_INVALID_CONFIG;
    case KT_ASSIGNORS:
        return parse_assignors(value, v->assignors, &v->assignor_count, errstr, errstr_size);
    default:
        return SAMSA_ERR_INVALID_CONFIG;
    }
}

samsa_conf *samsa_conf_new(void)
{
    samsa_conf *conf = kp_calloc(1, sizeof(*conf));
    if (conf == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < KEY_COUNT; i++) {
        /* buffer.memory shares queue.buffering.max.kbytes' field: the
         * kbytes default is the one that applies. */
        if (strcmp(keys[i].name, "buffer.memory") == 0) {
            continue;
        }
        if (apply(&conf->v, &keys[i], keys[i].dflt, NULL, 0) != SAMSA_OK) {
            samsa_conf_destroy(conf);
            return NULL;
        }
        conf->str[i] = sc_strdup(keys[i].dflt);
        if (conf->str[i] == NULL) {
            samsa_conf_destroy(conf);
            return NULL;
        }
    }
    conf->str[find_key("buffer.memory")] = sc_strdup("1073741824");
    return conf;
}

static void topic_confs_free(struct samsa_topic_conf *t)
{
    while (t != NULL) {
        struct samsa_topic_conf *next = t->next;
        samsa_topic_conf_destroy(t);
        t = next;
    }
}

void samsa_conf_destroy(samsa_conf *conf)
{
    if (conf == NULL) {
        return;
    }
    topic_confs_free(conf->topic_confs);
    for (size_t i = 0; i < KEY_COUNT; i++) {
        kp_free(conf->str[i]);
        if (keys[i].type == KT_STRING) {
            char **slot = field(&conf->v, &keys[i]);
            kp_free(*slot);
        }
    }
    kp_free(conf);
}

samsa_conf *samsa_conf_dup(const samsa_conf *conf)
{
    if (conf == NULL) {
        return NULL;
    }
    samsa_conf *d = kp_calloc(1, sizeof(*d));
    if (d == NULL) {
        return NULL;
    }
    *d = *conf;
    d->topic_confs = NULL;
    bool ok = true;
    struct samsa_topic_conf **tail = &d->topic_confs;
    for (const struct samsa_topic_conf *t = conf->topic_confs; ok && t != NULL; t = t->next) {
        *tail = samsa_topic_conf_dup(t);
        if (*tail == NULL) {
            ok = false;
            break;
        }
        (*tail)->topic = sc_strdup(t->topic);
        ok = (*tail)->topic != NULL;
        tail = &(*tail)->next;
    }
    for (size_t i = 0; i < KEY_COUNT; i++) {
        d->str[i] = conf->str[i] != NULL ? sc_strdup(conf->str[i]) : NULL;
        ok = ok && (conf->str[i] == NULL || d->str[i] != NULL);
        if (keys[i].type == KT_STRING) {
            char **dst = field(&d->v, &keys[i]);
            char *const *src = (char *const *)((const char *)&conf->v + keys[i].offset);
            *dst = *src != NULL ? sc_strdup(*src) : NULL;
            ok = ok && (*src == NULL || *dst != NULL);
        }
    }
    if (!ok) {
        samsa_conf_destroy(d);
        return NULL;
    }
    return d;
}

static bool same_value(const char *fixed, const char *value)
{
    if (strcmp(fixed, "true") == 0 && strcmp(value, "1") == 0) {
        return true;
    }
    if (strcmp(fixed, "false") == 0 && strcmp(value, "0") == 0) {
        return true;
    }
    return strcasecmp(fixed, value) == 0;
}

/* The fixed value libsamsa runs with for a librdkafka property, or NULL. */
static const char *rdkafka_fixed_value(const char *key)
{
    for (size_t i = 0; i < sizeof(rdkafka_fixed) / sizeof(rdkafka_fixed[0]); i++) {
        if (strcmp(rdkafka_fixed[i].name, key) == 0) {
            return rdkafka_fixed[i].value;
        }
    }
    return NULL;
}

/* samsa_conf_set for a key that is not libsamsa's own: one of librdkafka's
 * (accepted at the value libsamsa always runs with, else refused or, with
 * unsupported.librdkafka.properties=warn, accepted with the warning), or
 * unknown to both. */
static int set_rdkafka_only(samsa_conf *conf, const char *key, const char *value, char *errstr,
                            size_t errstr_size)
{
    const char *fixed = rdkafka_fixed_value(key);
    bool known = fixed != NULL;
    for (size_t i = 0; !known && i < sizeof(rdkafka_unsupported) / sizeof(rdkafka_unsupported[0]);
         i++) {
        known = strcmp(rdkafka_unsupported[i], key) == 0;
    }
    if (!known) {
        sc_errf(errstr, errstr_size,
                "unknown configuration key \"%s\" (client/README.md lists them)", key);
        return SAMSA_ERR_UNKNOWN_CONFIG;
    }
    if (fixed != NULL && same_value(fixed, value)) {
        return SAMSA_OK;
    }
    bool warn = conf->v.unsupported_rdkafka == 1;
    if (fixed != NULL) {
        sc_errf(errstr, errstr_size,
                "%s=%s: known librdkafka property, not supported by libsamsa (it always runs "
                "as %s=%s)%s",
                key, value, key, fixed, warn ? "; ignored" : "");
    } else {
        sc_errf(errstr, errstr_size,
                "%s: known librdkafka property, not supported by libsamsa%s", key,
                warn ? "; ignored" : "");
    }
    if (warn) {
        if (conf->v.log_level >= SAMSA_LOG_WARNING) {
            char line[300];
            sc_errf(line, sizeof(line), "%s: known librdkafka property, not supported by "
                    "libsamsa; ignored", key);
            if (conf->log_cb != NULL) {
                conf->log_cb(SAMSA_LOG_WARNING, line, conf->log_opaque);
            } else {
                fprintf(stderr, "samsa: warning: %s\n", line);
            }
        }
        return SAMSA_OK;
    }
    return SAMSA_ERR_NOT_IMPLEMENTED;
}

int samsa_conf_set(samsa_conf *conf, const char *key, const char *value, char *errstr,
                   size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (conf == NULL || key == NULL || value == NULL) {
        sc_errf(errstr, errstr_size, "samsa_conf_set: conf, key and value must not be NULL");
        return SAMSA_ERR_INVALID_ARG;
    }
    int i = find_key(key);
    if (i < 0) {
        return set_rdkafka_only(conf, key, value, errstr, errstr_size);
    }
    /* Parse into a scratch copy of the one field so a bad value changes
     * nothing. */
    struct sc_conf_values scratch = conf->v;
    if (keys[i].type == KT_STRING) {
        char **slot = field(&scratch, &keys[i]);
        *slot = NULL; /* apply frees the old value only through conf->v below */
    }
    int err = apply(&scratch, &keys[i], value, errstr, errstr_size);
    if (err != SAMSA_OK) {
        if (keys[i].type == KT_STRING) {
            kp_free(*(char **)field(&scratch, &keys[i]));
        }
        return err;
    }
    char *copy = sc_strdup(value);
    if (copy == NULL) {
        if (keys[i].type == KT_STRING) {
            kp_free(*(char **)field(&scratch, &keys[i]));
        }
        return SAMSA_ERR_NOMEM;
    }
    if (keys[i].type == KT_STRING) {
        char **old = field(&conf->v, &keys[i]);
        kp_free(*old);
    }
    conf->v = scratch;
    kp_free(conf->str[i]);
    conf->str[i] = copy;
    conf->set_mask |= (uint64_t)1 << i;
    /* The two names of the producer's memory bound share one field. */
    if (keys[i].offset == OFF(queue_max_bytes)) {
        for (size_t j = 0; j < KEY_COUNT; j++) {
            if ((int)j != i && keys[j].offset == keys[i].offset) {
                char buf[32];
                snprintf(buf, sizeof(buf), "%lld",
                         (long long)(conf->v.queue_max_bytes / keys[j].scale));
                char *c2 = sc_strdup(buf);
                if (c2 != NULL) {
                    kp_free(conf->str[j]);
                    conf->str[j] = c2;
                }
            }
        }
    }
    return SAMSA_OK;
}

int samsa_conf_get(const samsa_conf *conf, const char *key, char *buf, size_t *size)
{
    if (conf == NULL || key == NULL || size == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    int i = find_key(key);
    const char *fixed = i < 0 ? rdkafka_fixed_value(key) : NULL;
    if (i < 0 && fixed == NULL) {
        return SAMSA_ERR_UNKNOWN_CONFIG;
    }
    const char *s = fixed != NULL ? fixed : conf->str[i] != NULL ? conf->str[i] : "";
    size_t need = strlen(s) + 1;
    if (buf != NULL && *size > 0) {
        size_t n = need <= *size ? need - 1 : *size - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
    }
    *size = need;
    return SAMSA_OK;
}

bool sc_conf_is_set(const samsa_conf *conf, const char *key)
{
    int i = find_key(key);
    return i >= 0 && (conf->set_mask & ((uint64_t)1 << i)) != 0;
}

void samsa_conf_set_delivery_cb(samsa_conf *conf, samsa_delivery_cb *cb, void *cb_opaque)
{
    if (conf != NULL) {
        conf->dr_cb = cb;
        conf->dr_opaque = cb_opaque;
    }
}

void samsa_conf_set_log_cb(samsa_conf *conf, samsa_log_cb *cb, void *cb_opaque)
{
    if (conf != NULL) {
        conf->log_cb = cb;
        conf->log_opaque = cb_opaque;
    }
}

void samsa_conf_set_stats_cb(samsa_conf *conf, samsa_stats_cb *cb, void *cb_opaque)
{
    if (conf != NULL) {
        conf->stats_cb = cb;
        conf->stats_opaque = cb_opaque;
    }
}

void samsa_conf_set_partitioner_cb(samsa_conf *conf, samsa_partitioner_cb *cb, void *cb_opaque)
{
    if (conf != NULL) {
        conf->partitioner_cb = cb;
        conf->partitioner_opaque = cb_opaque;
    }
}

samsa_topic_conf *samsa_topic_conf_new(void)
{
    samsa_topic_conf *t = kp_calloc(1, sizeof(*t));
    if (t != NULL) {
        t->partitioner = -1;
    }
    return t;
}

samsa_topic_conf *samsa_topic_conf_dup(const samsa_topic_conf *tconf)
{
    samsa_topic_conf *t = tconf != NULL ? samsa_topic_conf_new() : NULL;
    if (t != NULL) {
        t->partitioner = tconf->partitioner;
        t->partitioner_cb = tconf->partitioner_cb;
        t->partitioner_opaque = tconf->partitioner_opaque;
    }
    return t;
}

void samsa_topic_conf_destroy(samsa_topic_conf *tconf)
{
    if (tconf != NULL) {
        kp_free(tconf->topic);
        kp_free(tconf);
    }
}

int samsa_topic_conf_set(samsa_topic_conf *tconf, const char *key, const char *value,
                         char *errstr, size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (tconf == NULL || key == NULL || value == NULL) {
        sc_errf(errstr, errstr_size,
                "samsa_topic_conf_set: tconf, key and value must not be NULL");
        return SAMSA_ERR_INVALID_ARG;
    }
    if (strcmp(key, "partitioner") != 0) {
        sc_errf(errstr, errstr_size,
                "%s: not a topic setting of libsamsa (only partitioner; the others are the "
                "handle's: samsa_conf_set)",
                key);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    int i = find_key(key);
    struct sc_conf_values scratch = {0};
    int err = apply(&scratch, &keys[i], value, errstr, errstr_size);
    if (err == SAMSA_OK) {
        tconf->partitioner = scratch.partitioner;
    }
    return err;
}

void samsa_topic_conf_set_partitioner_cb(samsa_topic_conf *tconf, samsa_partitioner_cb *cb,
                                         void *cb_opaque)
{
    if (tconf != NULL) {
        tconf->partitioner_cb = cb;
        tconf->partitioner_opaque = cb_opaque;
    }
}

int samsa_conf_set_topic_conf(samsa_conf *conf, const char *topic, const samsa_topic_conf *tconf)
{
    if (conf == NULL || topic == NULL || topic[0] == '\0' || tconf == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    samsa_topic_conf *t = samsa_topic_conf_dup(tconf);
    char *name = sc_strdup(topic);
    if (t == NULL || name == NULL) {
        samsa_topic_conf_destroy(t);
        kp_free(name);
        return SAMSA_ERR_NOMEM;
    }
    t->topic = name;
    /* the topic's earlier settings go: the last call wins */
    for (struct samsa_topic_conf **pp = &conf->topic_confs; *pp != NULL; pp = &(*pp)->next) {
        if (strcmp((*pp)->topic, topic) == 0) {
            struct samsa_topic_conf *old = *pp;
            *pp = old->next;
            samsa_topic_conf_destroy(old);
            break;
        }
    }
    t->next = conf->topic_confs;
    conf->topic_confs = t;
    return SAMSA_OK;
}

const struct samsa_topic_conf *sc_conf_topic(const samsa_conf *conf, const char *topic)
{
    for (const struct samsa_topic_conf *t = conf->topic_confs; t != NULL; t = t->next) {
        if (strcmp(t->topic, topic) == 0) {
            return t;
        }
    }
    return NULL;
}

void samsa_conf_set_error_cb(samsa_conf *conf, samsa_error_cb *cb, void *cb_opaque)
{
    if (conf != NULL) {
        conf->error_cb = cb;
        conf->error_opaque = cb_opaque;
    }
}

void samsa_conf_set_rebalance_cb(samsa_conf *conf, samsa_rebalance_cb *cb, void *cb_opaque)
{
    if (conf != NULL) {
        conf->rebalance_cb = cb;
        conf->rebalance_opaque = cb_opaque;
    }
}

int sc_parse_brokers(const char *list, char **hosts, int *ports, int max, int *count, char *errstr,
                     size_t errstr_size)
{
    int n = 0;
    const char *p = list;
    int err = SAMSA_OK;
    while (*p != '\0') {
        while (*p == ' ' || *p == ',') {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        const char *e = p;
        while (*e != '\0' && *e != ',' && *e != ' ') {
            e++;
        }
        /* Accept an optional PLAINTEXT:// prefix, as Java does. */
        if ((size_t)(e - p) > 12 && memcmp(p, "PLAINTEXT://", 12) == 0) {
            p += 12;
        }
        const char *colon = NULL;
        for (const char *q = p; q < e; q++) {
            if (*q == ':') {
                colon = q;
            }
        }
        int port = 9092;
        const char *hend = e;
        if (colon != NULL) {
            char digits[8];
            size_t dl = (size_t)(e - colon - 1);
            int64_t x = -1;
            if (dl > 0 && dl < sizeof(digits)) {
                memcpy(digits, colon + 1, dl);
                digits[dl] = '\0';
                if (!parse_int64(digits, &x)) {
                    x = -1;
                }
            }
            if (x < 1 || x > 65535) {
                sc_errf(errstr, errstr_size, "bootstrap.servers: bad port in \"%.*s\"",
                        (int)(e - p), p);
                err = SAMSA_ERR_INVALID_CONFIG;
                goto out_free;
            }
            port = (int)x;
            hend = colon;
        }
        if (hend == p) {
            sc_errf(errstr, errstr_size, "bootstrap.servers: empty host in \"%.*s\"", (int)(e - p),
                    p);
            err = SAMSA_ERR_INVALID_CONFIG;
            goto out_free;
        }
        if (n == max) {
            break;
        }
        hosts[n] = sc_strndup(p, (size_t)(hend - p));
        if (hosts[n] == NULL) {
            err = SAMSA_ERR_NOMEM;
            goto out_free;
        }
        ports[n] = port;
        n++;
        p = e;
    }
    if (n == 0) {
        sc_errf(errstr, errstr_size,
                "bootstrap.servers is not set (e.g. \"127.0.0.1:9092\"; alias metadata.broker.list)");
        return SAMSA_ERR_INVALID_CONFIG;
    }
    *count = n;
    return SAMSA_OK;
out_free:
    for (int i = 0; i < n; i++) {
        kp_free(hosts[i]);
    }
    return err;
}

int sc_conf_finalize_for(samsa_conf *conf, const struct sc_kind_ops *kind, char *errstr,
                         size_t errstr_size)
{
    char *hosts[16];
    int ports[16];
    int n = 0;
    int err = sc_parse_brokers(conf->v.bootstrap_servers, hosts, ports, 16, &n, errstr,
                               errstr_size);
    if (err != SAMSA_OK) {
        return err;
    }
    for (int i = 0; i < n; i++) {
        kp_free(hosts[i]);
    }
    return kind->check_conf != NULL ? kind->check_conf(conf, errstr, errstr_size) : SAMSA_OK;
}
