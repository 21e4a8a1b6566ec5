/*
 * samsa-broker: dynamic broker configs (KIP-226, Kafka 2.0's
 * kafka/server/DynamicBrokerConfig.scala): which keys may change without a
 * restart, and a config's values of those keys recomputed from its static
 * text with the dynamic values laid over it (see config.h).
 */
#include "config/config_internal.h"

#include <samsa-protocol/alloc.h>

#include <stdio.h>
#include <string.h>

/*
 * Kafka 2.0's DynamicLogConfig.ReconfigurableConfigs (the broker synonyms of
 * the topic configs, LogConfig.TopicConfigSynonyms, but
 * log.message.format.version) that Samsa has, and the replication throttle
 * rates (DynamicConfig.Broker). The log cleaner's, the thread
 * pools', the listeners' and the security keys of DynamicBrokerConfig are
 * not dynamic here: Samsa's cleaner and reactor take them at start only.
 */
static const enum br_config_key dynamic_keys[] = {
    BR_CFG_LOG_SEGMENT_BYTES,
    BR_CFG_LOG_ROLL_MS,
    BR_CFG_LOG_ROLL_JITTER_MS,
    BR_CFG_LOG_INDEX_SIZE_MAX_BYTES,
    BR_CFG_LOG_FLUSH_INTERVAL_MESSAGES,
    BR_CFG_LOG_FLUSH_INTERVAL_MS,
    BR_CFG_LOG_RETENTION_BYTES,
    BR_CFG_LOG_RETENTION_MS,
    BR_CFG_MESSAGE_MAX_BYTES,
    BR_CFG_LOG_INDEX_INTERVAL_BYTES,
    BR_CFG_LOG_CLEANER_DELETE_RETENTION_MS,
    BR_CFG_LOG_CLEANER_MIN_COMPACTION_LAG_MS,
    BR_CFG_LOG_SEGMENT_DELETE_DELAY_MS,
    BR_CFG_LOG_CLEANER_MIN_CLEANABLE_RATIO,
    BR_CFG_LOG_CLEANUP_POLICY,
    BR_CFG_UNCLEAN_LEADER_ELECTION_ENABLE,
    BR_CFG_MIN_INSYNC_REPLICAS,
    BR_CFG_COMPRESSION_TYPE,
    BR_CFG_LOG_PREALLOCATE,
    BR_CFG_LOG_MESSAGE_TIMESTAMP_TYPE,
    BR_CFG_LOG_MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS,
    BR_CFG_LOG_MESSAGE_DOWNCONVERSION_ENABLE,
    /* DynamicConfig.Broker's throttle rates (per broker in Kafka 2.0;
     * here the cluster's <default> gives them too) */
    BR_CFG_LEADER_REPLICATION_THROTTLED_RATE,
    BR_CFG_FOLLOWER_REPLICATION_THROTTLED_RATE,
};

/* The static keys a dynamic key's value is resolved with (the ms key wins
 * over its hours and minutes): their static text goes with the dynamic
 * values so that what a dynamic value does not set stays as the file set
 * it. */
static const enum br_config_key companion_keys[] = {
    BR_CFG_LOG_ROLL_HOURS,         BR_CFG_LOG_ROLL_JITTER_HOURS, BR_CFG_LOG_RETENTION_HOURS,
    BR_CFG_LOG_RETENTION_MINUTES, BR_CFG_LOG_FLUSH_SCHEDULER_INTERVAL_MS,
};

bool br_config_key_dynamic(enum br_config_key k)
{
    for (size_t i = 0; i < sizeof dynamic_keys / sizeof dynamic_keys[0]; i++) {
        if (dynamic_keys[i] == k) {
            return true;
        }
    }
    return false;
}

static size_t field_size(enum kind kind)
{
    switch (kind) {
    case K_INT:
        return sizeof(int32_t);
    case K_SHORT:
        return sizeof(int16_t);
    case K_LONG:
        return sizeof(int64_t);
    case K_BOOL:
        return sizeof(bool);
    case K_RATIO:
        return sizeof(double);
    case K_CLEANUP:
        return sizeof(unsigned);
    case K_COMPRESSION:
    case K_TSTYPE:
    case K_LOGLEVEL:
        return sizeof(int);
    case K_FORMAT:
        return BR_FORMAT_VERSION_MAX + 1;
    case K_NUMBER:
    case K_SPECIAL:
        break;
    }
    return 0;
}

/* "name=value" of key k into out (kp_malloc'd), or NULL. */
static char *pair(const char *name, const char *value)
{
    size_t n = strlen(name) + strlen(value) + 2;
    char *s = kp_malloc(n);
    if (s != NULL) {
        (void)snprintf(s, n, "%s=%s", name, value);
    }
    return s;
}

int br_config_dynamic(struct br_config *c, const char *const *names, const char *const *values,
                      size_t n, bool apply, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        int k = br_config_find(names[i]);
        if (k < 0 || !br_config_key_dynamic((enum br_config_key)k)) {
            (void)snprintf(err, errlen, "Cannot update these configs dynamically: %s", names[i]);
            return KP_ERR_INVALID_REQUEST;
        }
    }
    size_t ncomp = sizeof companion_keys / sizeof companion_keys[0];
    size_t ndyn = sizeof dynamic_keys / sizeof dynamic_keys[0];
    char **over = kp_calloc(ncomp + ndyn + n + 1, sizeof *over);
    if (over == NULL) {
        (void)snprintf(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    size_t m = 0;
    int rc = 0;
    /* the static text first, then the dynamic values: the last one wins */
    for (size_t i = 0; i < ncomp + ndyn && rc == 0; i++) {
        enum br_config_key k = i < ncomp ? companion_keys[i] : dynamic_keys[i - ncomp];
        if (c->raw[k] != NULL) {
            over[m] = pair(cfg_keys[k].name, c->raw[k]);
            rc = over[m++] == NULL ? KP_E_NOMEM : 0;
        }
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        over[m] = pair(names[i], values[i] != NULL ? values[i] : "");
        rc = over[m++] == NULL ? KP_E_NOMEM : 0;
    }
    struct br_config tmp;
    memset(&tmp, 0, sizeof tmp);
    if (rc == 0) {
        rc = br_config_parse_buffer("", 0, "the dynamic broker configs", (const char *const *)over,
                                    m, &tmp, err, errlen);
        if (rc != 0) {
            rc = KP_ERR_INVALID_CONFIG;
        }
    } else {
        (void)snprintf(err, errlen, "out of memory");
    }
    if (rc == 0 && apply) {
        for (size_t i = 0; i < ndyn; i++) {
            const struct key_def *d = &cfg_keys[dynamic_keys[i]];
            size_t size = field_size(d->kind);
            if (size > 0) {
                memcpy((unsigned char *)c + d->offset, (const unsigned char *)&tmp + d->offset,
                       size);
            }
        }
        /* what the K_NUMBER keys resolve to */
        c->log_retention_ms = tmp.log_retention_ms;
        c->log_roll_ms = tmp.log_roll_ms;
        c->log_roll_jitter_ms = tmp.log_roll_jitter_ms;
        c->log_flush_interval_ms = tmp.log_flush_interval_ms;
    }
    br_config_free(&tmp);
    for (size_t i = 0; i < m; i++) {
        kp_free(over[i]);
    }
    kp_free(over);
    return rc;
}
