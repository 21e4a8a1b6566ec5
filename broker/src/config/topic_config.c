/* samsa-broker: topic-level configuration (see topic_config.h). */
#define _POSIX_C_SOURCE 200809L

#include "config/topic_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tkind {
    T_INT,         /* int32_t */
    T_LONG,        /* int64_t */
    T_BOOL,        /* bool */
    T_RATIO,       /* double in [0, 1] */
    T_CLEANUP,     /* unsigned flags */
    T_COMPRESSION, /* int */
    T_TSTYPE,      /* int */
    T_FORMAT,      /* char[BR_FORMAT_VERSION_MAX + 1] */
    T_REPLICAS,    /* char[BR_TOPIC_CONFIG_VALUE_MAX + 1]: a throttled-replica list */
};

struct tkey {
    const char *name;
    enum tkind kind;
    size_t offset;
    int64_t min;
    int64_t max;
    const char *const *synonyms; /* broker keys, NULL-terminated */
};

/* Broker synonyms: the keys that give each topic key its default. */
static const char *const syn_cleanup[] = {"log.cleanup.policy", NULL};
static const char *const syn_compression[] = {"compression.type", NULL};
static const char *const syn_delete_retention[] = {"log.cleaner.delete.retention.ms", NULL};
static const char *const syn_file_delete[] = {"log.segment.delete.delay.ms", NULL};
static const char *const syn_flush_messages[] = {"log.flush.interval.messages", NULL};
static const char *const syn_flush_ms[] = {"log.flush.interval.ms",
                                           "log.flush.scheduler.interval.ms", NULL};
static const char *const syn_index_interval[] = {"log.index.interval.bytes", NULL};
static const char *const syn_max_message[] = {"message.max.bytes", NULL};
static const char *const syn_downconversion[] = {"log.message.downconversion.enable", NULL};
static const char *const syn_format[] = {"log.message.format.version", NULL};
static const char *const syn_ts_diff[] = {"log.message.timestamp.difference.max.ms", NULL};
static const char *const syn_ts_type[] = {"log.message.timestamp.type", NULL};
static const char *const syn_dirty_ratio[] = {"log.cleaner.min.cleanable.ratio", NULL};
static const char *const syn_compaction_lag[] = {"log.cleaner.min.compaction.lag.ms", NULL};
static const char *const syn_min_isr[] = {"min.insync.replicas", NULL};
static const char *const syn_preallocate[] = {"log.preallocate", NULL};
static const char *const syn_retention_bytes[] = {"log.retention.bytes", NULL};
static const char *const syn_retention_ms[] = {"log.retention.ms", "log.retention.minutes",
                                               "log.retention.hours", NULL};
static const char *const syn_segment_bytes[] = {"log.segment.bytes", NULL};
static const char *const syn_index_bytes[] = {"log.index.size.max.bytes", NULL};
static const char *const syn_jitter[] = {"log.roll.jitter.ms", "log.roll.jitter.hours", NULL};
static const char *const syn_segment_ms[] = {"log.roll.ms", "log.roll.hours", NULL};
static const char *const syn_unclean[] = {"unclean.leader.election.enable", NULL};
static const char *const syn_none[] = {NULL};

#define TF(f) offsetof(struct br_topic_config, f)
#define NONE 0, 0

static const struct tkey tkeys[BR_TCFG__COUNT] = {
    [BR_TCFG_CLEANUP_POLICY] = {"cleanup.policy", T_CLEANUP, TF(cleanup_policy), NONE, syn_cleanup},
    [BR_TCFG_COMPRESSION_TYPE] = {"compression.type", T_COMPRESSION, TF(compression_type), NONE,
                                  syn_compression},
    [BR_TCFG_DELETE_RETENTION_MS] = {"delete.retention.ms", T_LONG, TF(delete_retention_ms), 0,
                                     INT64_MAX, syn_delete_retention},
    [BR_TCFG_FILE_DELETE_DELAY_MS] = {"file.delete.delay.ms", T_LONG, TF(file_delete_delay_ms), 0,
                                      INT64_MAX, syn_file_delete},
    [BR_TCFG_FLUSH_MESSAGES] = {"flush.messages", T_LONG, TF(flush_messages), 0, INT64_MAX,
                                syn_flush_messages},
    [BR_TCFG_FLUSH_MS] = {"flush.ms", T_LONG, TF(flush_ms), 0, INT64_MAX, syn_flush_ms},
    [BR_TCFG_FOLLOWER_REPLICATION_THROTTLED_REPLICAS] = {
        "follower.replication.throttled.replicas", T_REPLICAS,
        TF(follower_replication_throttled_replicas), NONE, syn_none},
    [BR_TCFG_INDEX_INTERVAL_BYTES] = {"index.interval.bytes", T_INT, TF(index_interval_bytes), 0,
                                      INT32_MAX, syn_index_interval},
    [BR_TCFG_LEADER_REPLICATION_THROTTLED_REPLICAS] = {
        "leader.replication.throttled.replicas", T_REPLICAS,
        TF(leader_replication_throttled_replicas), NONE, syn_none},
    [BR_TCFG_MAX_MESSAGE_BYTES] = {"max.message.bytes", T_INT, TF(max_message_bytes), 0, INT32_MAX,
                                   syn_max_message},
    [BR_TCFG_MESSAGE_DOWNCONVERSION_ENABLE] = {"message.downconversion.enable", T_BOOL,
                                               TF(message_downconversion_enable), NONE,
                                               syn_downconversion},
    [BR_TCFG_MESSAGE_FORMAT_VERSION] = {"message.format.version", T_FORMAT,
                                        TF(message_format_version), NONE, syn_format},
    [BR_TCFG_MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS] = {"message.timestamp.difference.max.ms", T_LONG,
                                                     TF(message_timestamp_difference_max_ms), 0,
                                                     INT64_MAX, syn_ts_diff},
    [BR_TCFG_MESSAGE_TIMESTAMP_TYPE] = {"message.timestamp.type", T_TSTYPE,
                                        TF(message_timestamp_type), NONE, syn_ts_type},
    [BR_TCFG_MIN_CLEANABLE_DIRTY_RATIO] = {"min.cleanable.dirty.ratio", T_RATIO,
                                           TF(min_cleanable_dirty_ratio), NONE, syn_dirty_ratio},
    [BR_TCFG_MIN_COMPACTION_LAG_MS] = {"min.compaction.lag.ms", T_LONG, TF(min_compaction_lag_ms),
                                       0, INT64_MAX, syn_compaction_lag},
    [BR_TCFG_MIN_INSYNC_REPLICAS] = {"min.insync.replicas", T_INT, TF(min_insync_replicas), 1,
                                     INT32_MAX, syn_min_isr},
    [BR_TCFG_PREALLOCATE] = {"preallocate", T_BOOL, TF(preallocate), NONE, syn_preallocate},
    [BR_TCFG_RETENTION_BYTES] = {"retention.bytes", T_LONG, TF(retention_bytes), INT64_MIN,
                                 INT64_MAX, syn_retention_bytes},
    [BR_TCFG_RETENTION_MS] = {"retention.ms", T_LONG, TF(retention_ms), -1, INT64_MAX,
                              syn_retention_ms},
    [BR_TCFG_SEGMENT_BYTES] = {"segment.bytes", T_INT, TF(segment_bytes), 14, INT32_MAX,
                               syn_segment_bytes},
    [BR_TCFG_SEGMENT_INDEX_BYTES] = {"segment.index.bytes", T_INT, TF(segment_index_bytes), 4,
                                     INT32_MAX, syn_index_bytes},
    [BR_TCFG_SEGMENT_JITTER_MS] = {"segment.jitter.ms", T_LONG, TF(segment_jitter_ms), 0, INT64_MAX,
                                   syn_jitter},
    [BR_TCFG_SEGMENT_MS] = {"segment.ms", T_LONG, TF(segment_ms), 1, INT64_MAX, syn_segment_ms},
    [BR_TCFG_UNCLEAN_LEADER_ELECTION_ENABLE] = {"unclean.leader.election.enable", T_BOOL,
                                                TF(unclean_leader_election_enable), NONE,
                                                syn_unclean},
};

static size_t field_size(enum tkind kind)
{
    switch (kind) {
    case T_INT:
        return sizeof(int32_t);
    case T_LONG:
        return sizeof(int64_t);
    case T_BOOL:
        return sizeof(bool);
    case T_RATIO:
        return sizeof(double);
    case T_CLEANUP:
        return sizeof(unsigned);
    case T_COMPRESSION:
    case T_TSTYPE:
        return sizeof(int);
    case T_FORMAT:
        return BR_FORMAT_VERSION_MAX + 1;
    case T_REPLICAS:
        return BR_TOPIC_CONFIG_VALUE_MAX + 1;
    }
    return 0;
}

__attribute__((format(printf, 3, 4))) static void set_msg(char *msg, size_t msglen, const char *fmt,
                                                          ...)
{
    if (msg == NULL || msglen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

/* A name as messages show it: at most 64 printable ASCII bytes. */
static const char *printable(const char *s, char *buf, size_t buflen)
{
    size_t o = 0;
    for (size_t i = 0; i < 64 && o + 4 < buflen && s[i] != '\0'; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[o++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    if (strlen(s) > 64 && o + 4 < buflen) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

int br_topic_config_find(const char *name)
{
    for (int k = 0; k < BR_TCFG__COUNT; k++) {
        if (strcmp(tkeys[k].name, name) == 0) {
            return k;
        }
    }
    return -1;
}

const char *br_topic_config_key_name(enum br_topic_config_key k)
{
    if ((int)k < 0 || k >= BR_TCFG__COUNT) {
        return NULL;
    }
    return tkeys[k].name;
}

bool br_topic_config_is_set(const struct br_topic_config *tc, enum br_topic_config_key k)
{
    return (int)k >= 0 && k < BR_TCFG__COUNT && (tc->set & (1u << k)) != 0;
}

void br_topic_config_from_broker(const struct br_config *b, struct br_topic_config *out)
{
    memset(out, 0, sizeof *out);
    out->cleanup_policy = b->log_cleanup_policy;
    out->compression_type = b->compression_type;
    out->delete_retention_ms = b->log_cleaner_delete_retention_ms;
    out->file_delete_delay_ms = b->log_segment_delete_delay_ms;
    out->flush_messages = b->log_flush_interval_messages;
    out->flush_ms = b->log_flush_interval_ms;
    out->index_interval_bytes = b->log_index_interval_bytes;
    out->max_message_bytes = b->message_max_bytes;
    out->message_downconversion_enable = b->log_message_downconversion_enable;
    memcpy(out->message_format_version, b->log_message_format_version,
           sizeof out->message_format_version);
    out->message_format_version[BR_FORMAT_VERSION_MAX] = '\0';
    out->message_timestamp_difference_max_ms = b->log_message_timestamp_difference_max_ms;
    out->message_timestamp_type = b->log_message_timestamp_type;
    out->min_cleanable_dirty_ratio = b->log_cleaner_min_cleanable_ratio;
    out->min_compaction_lag_ms = b->log_cleaner_min_compaction_lag_ms;
    out->min_insync_replicas = b->min_insync_replicas;
    out->preallocate = b->log_preallocate;
    out->retention_bytes = b->log_retention_bytes;
    out->retention_ms = b->log_retention_ms;
    out->segment_bytes = b->log_segment_bytes;
    out->segment_index_bytes = b->log_index_size_max_bytes;
    out->segment_jitter_ms = b->log_roll_jitter_ms;
    out->segment_ms = b->log_roll_ms;
    out->unclean_leader_election_enable = b->unclean_leader_election_enable;
    out->set = 0;
}

/* ------------------------------------------------------------ throttled-replica lists */

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    return s;
}

/* An unsigned decimal at *s (at most 10 digits): its value, and *s past it;
 * -1 when there is none. */
static int64_t read_id(const char **s)
{
    const char *p = *s;
    int64_t v = 0;
    int n = 0;
    while (*p >= '0' && *p <= '9' && n < 10) {
        v = v * 10 + (*p - '0');
        p++;
        n++;
    }
    if (n == 0 || (*p >= '0' && *p <= '9')) {
        return -1;
    }
    *s = p;
    return v;
}

/* One "p:b" item at *s (spaces around it skipped): 0 and *s at the ',' or
 * the end after it, or -1. */
static int read_item(const char **s, int64_t *partition, int64_t *broker)
{
    const char *p = skip_space(*s);
    *partition = read_id(&p);
    if (*partition < 0 || *p != ':') {
        return -1;
    }
    p++;
    *broker = read_id(&p);
    if (*broker < 0) {
        return -1;
    }
    p = skip_space(p);
    if (*p != ',' && *p != '\0') {
        return -1;
    }
    *s = p;
    return 0;
}

/* ThrottledReplicaListValidator (LogConfig.scala): "", "*" or
 * "p:b[,p:b]..." (spaces around an item allowed). */
static int validate_replicas(const char *list, char *msg, size_t msglen)
{
    const char *s = skip_space(list);
    if (*s == '\0' || (*s == '*' && *skip_space(s + 1) == '\0')) {
        return 0;
    }
    for (;;) {
        int64_t partition = 0;
        int64_t broker = 0;
        if (read_item(&s, &partition, &broker) != 0) {
            /* Kafka's message (ThrottledReplicaListValidator) */
            (void)snprintf(msg, msglen,
                           "must be the literal '*' or a list of replicas in the following "
                           "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
            return -1;
        }
        if (*s == '\0') {
            return 0;
        }
        s++; /* the ',' */
    }
}

bool br_throttled_replicas_match(const char *list, int32_t partition, int32_t broker)
{
    if (list == NULL) {
        return false;
    }
    const char *s = skip_space(list);
    if (*s == '\0') {
        return false;
    }
    if (*s == '*') {
        return true;
    }
    while (*s != '\0') {
        int64_t p = 0;
        int64_t b = 0;
        if (read_item(&s, &p, &b) != 0) {
            return false; /* validated when set: not reached */
        }
        if (p == partition && b == broker) {
            return true;
        }
        if (*s == ',') {
            s++;
        }
    }
    return false;
}

bool br_topic_config_throttled(const struct br_topic_config *tc, enum br_topic_config_key k,
                               int32_t partition, int32_t broker)
{
    if (k == BR_TCFG_LEADER_REPLICATION_THROTTLED_REPLICAS) {
        return br_throttled_replicas_match(tc->leader_replication_throttled_replicas, partition,
                                           broker);
    }
    if (k == BR_TCFG_FOLLOWER_REPLICATION_THROTTLED_REPLICAS) {
        return br_throttled_replicas_match(tc->follower_replication_throttled_replicas,
                                           partition, broker);
    }
    return false;
}

/* Parses `s` as key k into `field` (field_size(kind) bytes). */
static int parse_value(const struct tkey *d, const char *s, unsigned char *field, char *msg,
                       size_t msglen)
{
    int rc = -1;
    switch (d->kind) {
    case T_INT: {
        int64_t v = 0;
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, msglen);
        int32_t x = (int32_t)v;
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case T_LONG: {
        int64_t v = 0;
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, msglen);
        if (rc == 0) {
            memcpy(field, &v, sizeof v);
        }
        break;
    }
    case T_BOOL: {
        bool v = false;
        rc = br_config_parse_bool(s, &v, msg, msglen);
        if (rc == 0) {
            memcpy(field, &v, sizeof v);
        }
        break;
    }
    case T_RATIO: {
        double v = 0;
        rc = br_config_parse_ratio(s, &v, msg, msglen);
        if (rc == 0) {
            memcpy(field, &v, sizeof v);
        }
        break;
    }
    case T_CLEANUP: {
        unsigned v = 0;
        rc = br_config_parse_cleanup_policy(s, &v, msg, msglen);
        if (rc == 0) {
            memcpy(field, &v, sizeof v);
        }
        break;
    }
    case T_COMPRESSION: {
        int v = 0;
        rc = br_config_parse_compression(s, &v, msg, msglen);
        if (rc == 0) {
            memcpy(field, &v, sizeof v);
        }
        break;
    }
    case T_TSTYPE: {
        int v = 0;
        rc = br_config_parse_timestamp_type(s, &v, msg, msglen);
        if (rc == 0) {
            memcpy(field, &v, sizeof v);
        }
        break;
    }
    case T_FORMAT: {
        char v[BR_FORMAT_VERSION_MAX + 1];
        rc = br_config_parse_format_version(s, v, msg, msglen);
        if (rc == 0) {
            memcpy(field, v, sizeof v);
        }
        break;
    }
    case T_REPLICAS:
        /* s is at most BR_TOPIC_CONFIG_VALUE_MAX bytes (br_topic_config_set) */
        rc = validate_replicas(s, msg, msglen);
        if (rc == 0) {
            size_t n = strlen(s);
            memcpy(field, s, n + 1); /* with its NUL */
        }
        break;
    }
    return rc;
}

int br_topic_config_set(struct br_topic_config *tc, const char *key, const char *value, char *err,
                        size_t errlen)
{
    char shown[80];
    if (key == NULL) {
        set_msg(err, errlen, "a config name is missing");
        return KP_ERR_INVALID_REQUEST;
    }
    int k = br_topic_config_find(key);
    if (k < 0) {
        set_msg(err, errlen, "unknown topic config name: %s", printable(key, shown, sizeof shown));
        return KP_ERR_INVALID_CONFIG;
    }
    const struct tkey *d = &tkeys[k];
    if (value == NULL) {
        set_msg(err, errlen, "%s: null values are not supported for topic configs", d->name);
        return KP_ERR_INVALID_REQUEST;
    }
    size_t n = strlen(value);
    if (n > BR_TOPIC_CONFIG_VALUE_MAX) {
        set_msg(err, errlen, "%s: value longer than %d bytes", d->name, BR_TOPIC_CONFIG_VALUE_MAX);
        return KP_ERR_INVALID_CONFIG;
    }
    /* trim as Kafka's ConfigDef does: bytes <= ' ' at both ends */
    char buf[BR_TOPIC_CONFIG_VALUE_MAX + 1];
    size_t start = 0;
    while (start < n && (unsigned char)value[start] <= ' ') {
        start++;
    }
    while (n > start && (unsigned char)value[n - 1] <= ' ') {
        n--;
    }
    memcpy(buf, value + start, n - start);
    buf[n - start] = '\0';

    unsigned char field[BR_TOPIC_CONFIG_VALUE_MAX + 1]; /* the largest kind: T_REPLICAS */
    char msg[256];
    if (parse_value(d, buf, field, msg, sizeof msg) != 0) {
        set_msg(err, errlen, "%s: %s", d->name, msg);
        return KP_ERR_INVALID_CONFIG;
    }
    memcpy((unsigned char *)tc + d->offset, field, field_size(d->kind));
    tc->set |= 1u << k;
    return 0;
}

int br_topic_config_unset(struct br_topic_config *tc, const struct br_config *broker,
                          const char *key, char *err, size_t errlen)
{
    char shown[80];
    int k = key != NULL ? br_topic_config_find(key) : -1;
    if (k < 0) {
        set_msg(err, errlen, "unknown topic config name: %s",
                key != NULL ? printable(key, shown, sizeof shown) : "(null)");
        return KP_ERR_INVALID_CONFIG;
    }
    struct br_topic_config defaults;
    br_topic_config_from_broker(broker, &defaults);
    const struct tkey *d = &tkeys[k];
    memcpy((unsigned char *)tc + d->offset, (const unsigned char *)&defaults + d->offset,
           field_size(d->kind));
    tc->set &= ~(1u << k);
    return 0;
}

/* Java-like shortest text that reads back as the same double: "0.5", "1.0". */
static void render_double(double v, char *buf, size_t buflen)
{
    for (int prec = 1; prec <= 17; prec++) {
        (void)snprintf(buf, buflen, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) {
            break;
        }
    }
    if (strpbrk(buf, ".eEn") == NULL && strlen(buf) + 2 < buflen) {
        size_t n = strlen(buf);
        memcpy(buf + n, ".0", 3);
    }
}

static void render(const struct tkey *d, const unsigned char *field, char *buf, size_t buflen)
{
    switch (d->kind) {
    case T_INT: {
        int32_t v;
        memcpy(&v, field, sizeof v);
        (void)snprintf(buf, buflen, "%ld", (long)v);
        break;
    }
    case T_LONG: {
        int64_t v;
        memcpy(&v, field, sizeof v);
        (void)snprintf(buf, buflen, "%lld", (long long)v);
        break;
    }
    case T_BOOL: {
        bool v;
        memcpy(&v, field, sizeof v);
        (void)snprintf(buf, buflen, "%s", v ? "true" : "false");
        break;
    }
    case T_RATIO: {
        double v;
        memcpy(&v, field, sizeof v);
        render_double(v, buf, buflen);
        break;
    }
    case T_CLEANUP: {
        unsigned v;
        memcpy(&v, field, sizeof v);
        (void)br_cleanup_policy_str(v, buf, buflen);
        break;
    }
    case T_COMPRESSION: {
        int v;
        memcpy(&v, field, sizeof v);
        (void)snprintf(buf, buflen, "%s", br_compression_str(v));
        break;
    }
    case T_TSTYPE: {
        int v;
        memcpy(&v, field, sizeof v);
        (void)snprintf(buf, buflen, "%s", br_timestamp_type_str(v));
        break;
    }
    case T_FORMAT: {
        char v[BR_FORMAT_VERSION_MAX + 1];
        memcpy(v, field, sizeof v);
        v[BR_FORMAT_VERSION_MAX] = '\0';
        (void)snprintf(buf, buflen, "%s", v);
        break;
    }
    case T_REPLICAS:
        (void)snprintf(buf, buflen, "%.*s", BR_TOPIC_CONFIG_VALUE_MAX, (const char *)field);
        break;
    }
}

void br_topic_config_entry(const struct br_topic_config *tc, const struct br_config *broker,
                           enum br_topic_config_key k, struct br_topic_config_entry *out)
{
    static const char *const no_synonyms[] = {NULL};
    memset(out, 0, sizeof *out);
    out->broker_synonyms = no_synonyms;
    if ((int)k < 0 || k >= BR_TCFG__COUNT) {
        return;
    }
    const struct tkey *d = &tkeys[k];
    out->name = d->name;
    out->broker_synonyms = d->synonyms;
    out->read_only = false;
    out->sensitive = false;
    render(d, (const unsigned char *)tc + d->offset, out->value, sizeof out->value);
    if (br_topic_config_is_set(tc, k)) {
        out->source = BR_CONFIG_SOURCE_DYNAMIC_TOPIC;
        return;
    }
    out->source = BR_CONFIG_SOURCE_DEFAULT;
    for (size_t i = 0; broker != NULL && d->synonyms[i] != NULL; i++) {
        int bk = br_config_find(d->synonyms[i]);
        if (bk >= 0 && br_config_is_set(broker, (enum br_config_key)bk)) {
            out->source = BR_CONFIG_SOURCE_STATIC_BROKER;
            break;
        }
    }
}
