/*
 * fuzz_config: the broker's server.properties parser (br_config_parse_buffer)
 * and the topic-config defaults and descriptions built from its result.
 *
 * Input: the file's bytes, up to the first NUL; after it, up to 8
 * NUL-separated `--override key=value` strings.
 *
 * Checks, beyond "no crash, no over-read, no leak":
 *   - a rejected input leaves the config empty and says why in err;
 *   - an accepted one satisfies the documented invariants: at least one
 *     listener, advertised listener and log directory within the ceilings,
 *     effective retention -1 or >= 1, roll time >= 1, every DescribeConfigs
 *     entry named, with a value whenever the operator set the key;
 *   - the values the operator set, given back as overrides to an empty file,
 *     load again to the same configuration (what DescribeConfigs shows is
 *     what the broker runs with);
 *   - every topic config built from it describes itself within its text
 *     buffer.
 */
#include "fuzz.h"

#include <string.h>

#include "base/logging.h"
#include "config/config.h"
#include "config/topic_config.h"

#define MAX_OVERRIDES 8
#define ERRLEN 512

static bool listeners_equal(const struct br_listener *a, size_t na, const struct br_listener *b,
                            size_t nb)
{
    if (na != nb) {
        return false;
    }
    for (size_t i = 0; i < na; i++) {
        if (strcmp(a[i].name, b[i].name) != 0 || strcmp(a[i].host, b[i].host) != 0 ||
            a[i].port != b[i].port) {
            return false;
        }
    }
    return true;
}

static void check_invariants(const struct br_config *c)
{
    fuzz_check(c->n_listeners >= 1 && c->n_listeners <= BR_CONFIG_MAX_LISTENERS,
               "listener count out of bounds", (int)c->n_listeners);
    fuzz_check(c->n_advertised_listeners >= 1 &&
                   c->n_advertised_listeners <= BR_CONFIG_MAX_LISTENERS,
               "advertised listener count out of bounds", (int)c->n_advertised_listeners);
    fuzz_check(c->n_admin_listeners <= BR_CONFIG_MAX_LISTENERS, "admin listener count",
               (int)c->n_admin_listeners);
    fuzz_check(c->n_log_dirs >= 1 && c->n_log_dirs <= BR_CONFIG_MAX_LOG_DIRS,
               "log dir count out of bounds", (int)c->n_log_dirs);
    for (size_t i = 0; i < c->n_log_dirs; i++) {
        size_t n = strlen(c->log_dirs[i]);
        fuzz_check(n >= 1 && n <= BR_CONFIG_MAX_PATH, "log dir length", (int)n);
    }
    for (size_t i = 0; i < c->n_listeners; i++) {
        fuzz_check(c->listeners[i].name[0] != '\0', "listener without a name", (int)i);
    }
    fuzz_check(c->log_retention_ms == -1 || c->log_retention_ms >= 1, "retention", 0);
    fuzz_check(c->log_roll_ms >= 1, "roll time", 0);
    fuzz_check(c->log_roll_jitter_ms >= 0, "roll jitter", 0);
    fuzz_check(c->inter_broker_listener_name[0] != '\0', "no inter-broker listener", 0);
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        struct br_config_entry e;
        br_config_entry(c, (enum br_config_key)k, &e);
        fuzz_check(e.name != NULL, "entry without a name", k);
        if (e.source == BR_CONFIG_SOURCE_STATIC_BROKER) {
            /* a sensitive key (admin.auth.token) is described without its
             * value, as Kafka's DescribeConfigs describes passwords */
            fuzz_check((e.value != NULL) != e.sensitive &&
                           br_config_is_set(c, (enum br_config_key)k),
                       "a set key without a value, or a sensitive one with its value", k);
        } else {
            fuzz_check(e.source == BR_CONFIG_SOURCE_DEFAULT, "unknown source", k);
        }
    }
}

/* The set values as overrides to an empty file give the same configuration. */
static void check_reload(const struct br_config *c)
{
    char *bufs[BR_CFG__COUNT];
    const char *ov[BR_CFG__COUNT];
    size_t n = 0;
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        if (!br_config_is_set(c, (enum br_config_key)k)) {
            continue;
        }
        const char *name = br_config_key_name((enum br_config_key)k);
        size_t name_len = strlen(name);
        size_t value_len = strlen(c->raw[k]);
        bufs[n] = malloc(name_len + 1 + value_len + 1);
        fuzz_check(bufs[n] != NULL, "out of memory", 0);
        memcpy(bufs[n], name, name_len);
        bufs[n][name_len] = '=';
        memcpy(bufs[n] + name_len + 1, c->raw[k], value_len + 1);
        ov[n] = bufs[n];
        n++;
    }
    struct br_config d;
    char err[ERRLEN];
    int rc = br_config_parse_buffer("", 0, "reload", ov, n, &d, err, sizeof err);
    for (size_t i = 0; i < n; i++) {
        free(bufs[i]);
    }
    if (rc == KP_E_NOMEM) {
        return;
    }
    if (rc != 0) {
        (void)fprintf(stderr, "reload failed: %s\n", err);
    }
    fuzz_check(rc == 0, "the set values do not load again", rc);
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        struct br_config_entry a;
        struct br_config_entry b;
        br_config_entry(c, (enum br_config_key)k, &a);
        br_config_entry(&d, (enum br_config_key)k, &b);
        fuzz_check(a.source == b.source, "source differs after reload", k);
        fuzz_check((a.value == NULL) == (b.value == NULL) &&
                       (a.value == NULL || strcmp(a.value, b.value) == 0),
                   "value differs after reload", k);
    }
    fuzz_check(listeners_equal(c->listeners, c->n_listeners, d.listeners, d.n_listeners) &&
                   listeners_equal(c->advertised_listeners, c->n_advertised_listeners,
                                   d.advertised_listeners, d.n_advertised_listeners) &&
                   listeners_equal(c->admin_listeners, c->n_admin_listeners, d.admin_listeners,
                                   d.n_admin_listeners),
               "listeners differ after reload", 0);
    fuzz_check(c->n_log_dirs == d.n_log_dirs, "log dirs differ after reload", 0);
    for (size_t i = 0; i < c->n_log_dirs; i++) {
        fuzz_check(strcmp(c->log_dirs[i], d.log_dirs[i]) == 0, "log dir differs", (int)i);
    }
    fuzz_check(c->log_retention_ms == d.log_retention_ms && c->log_roll_ms == d.log_roll_ms &&
                   c->log_flush_interval_ms == d.log_flush_interval_ms &&
                   c->zookeeper_connection_timeout_ms == d.zookeeper_connection_timeout_ms,
               "effective values differ after reload", 0);
    fuzz_check((c->zookeeper_connect == NULL) == (d.zookeeper_connect == NULL) &&
                   (c->zookeeper_connect == NULL ||
                    strcmp(c->zookeeper_connect, d.zookeeper_connect) == 0),
               "zookeeper.connect differs after reload", 0);
    br_config_free(&d);
}

static void check_topic_config(const struct br_config *c)
{
    struct br_topic_config tc;
    br_topic_config_from_broker(c, &tc);
    fuzz_check(tc.set == 0, "a default topic config has keys set", (int)tc.set);
    for (int k = 0; k < BR_TCFG__COUNT; k++) {
        struct br_topic_config_entry e;
        br_topic_config_entry(&tc, c, (enum br_topic_config_key)k, &e);
        fuzz_check(e.name != NULL, "topic entry without a name", k);
        fuzz_check(memchr(e.value, '\0', sizeof e.value) != NULL, "unterminated value", k);
        fuzz_check(e.source == BR_CONFIG_SOURCE_DEFAULT ||
                       e.source == BR_CONFIG_SOURCE_STATIC_BROKER,
                   "a default topic key with a topic source", k);
        /* what is described can be set back */
        struct br_topic_config copy = tc;
        char err[ERRLEN];
        int rc = br_topic_config_set(&copy, e.name, e.value, err, sizeof err);
        if (rc != 0) {
            (void)fprintf(stderr, "%s=%s: %s\n", e.name, e.value, err);
        }
        fuzz_check(rc == 0, "a described topic value does not parse", k);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) {
        return 0;
    }
    /* INFO lines for ignored keys and warnings for repeated keys would
     * flood the output; errors are returned, not logged */
    br_logging_set_level(BR_LOG_ERROR);

    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t file_len = nul != NULL ? (size_t)(nul - text) : size;

    /* overrides: NUL-terminated copies of the chunks after the file */
    size_t rest = nul != NULL ? size - file_len - 1 : 0;
    char *ov_buf = malloc(rest + 1);
    fuzz_check(ov_buf != NULL, "out of memory", 0);
    const char *ov[MAX_OVERRIDES];
    size_t n_ov = 0;
    ov_buf[0] = '\0';
    if (nul != NULL) {
        memcpy(ov_buf, nul + 1, rest);
        ov_buf[rest] = '\0';
        const char *p = ov_buf;
        while (n_ov < MAX_OVERRIDES && p <= ov_buf + rest) {
            ov[n_ov++] = p;
            p += strlen(p) + 1;
        }
    }

    struct br_config c;
    char err[ERRLEN];
    int rc = br_config_parse_buffer(text, file_len, "fuzz", ov, n_ov, &c, err, sizeof err);
    free(ov_buf);
    if (rc != 0) {
        fuzz_check(rc == KP_ERR_INVALID_CONFIG || rc == KP_E_NOMEM, "undocumented error", rc);
        fuzz_check(err[0] != '\0', "a rejection without a message", rc);
        fuzz_check(c.n_log_dirs == 0 && c.log_dirs == NULL && c.zookeeper_connect == NULL,
                   "a failed load left state behind", rc);
        for (int k = 0; k < BR_CFG__COUNT; k++) {
            fuzz_check(c.raw[k] == NULL, "a failed load left a value behind", k);
        }
        br_config_free(&c);
        return 0;
    }
    check_invariants(&c);
    check_reload(&c);
    check_topic_config(&c);
    br_config_free(&c);
    return 0;
}
