/* samsa-broker: server.properties loaded into the typed configuration (see
 * config.h): the loading, the generic keys, the keys resolved together and
 * the cross checks; the key table, the value parsers and the listeners in
 * config_keys.c, config_values.c and config_listeners.c. */
#define _POSIX_C_SOURCE 200809L

#include "config/config.h"

#include "config/config_internal.h"
#include "config/properties.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"

/* ------------------------------------------------------------ loading */

/* Parses a numeric key within its table range: 1 with *v, 0 when null, or
 * KP_ERR_INVALID_CONFIG (negated as -1 after key_error has reported). */
static int number_of(struct load *ld, enum br_config_key k, int64_t *v)
{
    const char *s = cfg_text_of(ld, k);
    char msg[256];
    if (s == NULL) {
        return 0;
    }
    if (br_config_parse_long(s, cfg_keys[k].min, cfg_keys[k].max, v, msg, sizeof msg) != 0) {
        (void)cfg_key_error(ld, k, "%s", msg);
        return -1;
    }
    return 1;
}

#define LISTENER_PREFIX "listener.name."

/* listener.name.<listener>.<ssl key> = value (Kafka's per-listener
 * prefix); a later one for the same listener and key wins. */
static int assign_listener_key(struct load *ld, const char *key, const char *value,
                               const char *at)
{
    char q[QUOTE_MAX];
    const char *name = key + strlen(LISTENER_PREFIX);
    const char *dot = strchr(name, '.');
    size_t n = dot != NULL ? (size_t)(dot - name) : 0;
    int k = dot != NULL ? br_config_find(dot + 1) : -1;
    if (n == 0 || n > BR_LISTENER_NAME_MAX || k < BR_CFG_SSL_KEYSTORE_TYPE ||
        k > BR_CFG_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM) {
        cfg_set_msg(ld->err, ld->errlen,
                    "%sunknown config key %s: a listener.name.<listener>. prefix takes the "
                    "ssl.* keys (SASL is not there yet)",
                    at, Q(key, q));
        return KP_ERR_INVALID_CONFIG;
    }
    struct br_config *c = ld->c;
    char upper[BR_LISTENER_NAME_MAX + 1];
    for (size_t i = 0; i < n; i++) {
        upper[i] = cfg_to_upper(name[i]);
    }
    upper[n] = '\0';
    char *copy = cfg_dup_string(value);
    if (copy == NULL) {
        cfg_set_msg(ld->err, ld->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < c->n_listener_overrides; i++) {
        struct br_listener_override *o = &c->listener_overrides[i];
        if (o->key == k && strcmp(o->listener, upper) == 0) {
            kp_free(o->value);
            o->value = copy;
            return 0;
        }
    }
    struct br_listener_override *grown =
        kp_realloc(c->listener_overrides, (c->n_listener_overrides + 1) * sizeof *grown);
    if (grown == NULL) {
        kp_free(copy);
        cfg_set_msg(ld->err, ld->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    c->listener_overrides = grown;
    struct br_listener_override *o = &grown[c->n_listener_overrides++];
    memcpy(o->listener, upper, n + 1);
    o->key = k;
    o->value = copy;
    return 0;
}

/* Records key = value from `line` (0 for an override). */
static int assign(struct load *ld, const char *key, const char *value, unsigned line)
{
    char q[QUOTE_MAX];
    char at[256];
    if (line == 0) {
        (void)snprintf(at, sizeof at, "--override ");
    } else {
        (void)snprintf(at, sizeof at, "%s:%u: ", ld->name, line);
    }
    if (key[0] == '\0') {
        cfg_set_msg(ld->err, ld->errlen, "%sempty config key", at);
        return KP_ERR_INVALID_CONFIG;
    }
    if (strncmp(key, LISTENER_PREFIX, strlen(LISTENER_PREFIX)) == 0) {
        return assign_listener_key(ld, key, value, at);
    }
    int k = br_config_find(key);
    if (k < 0) {
        if (br_config_key_ignored(key)) {
            br_info("%s%s has no effect in Samsa; ignored", at, key);
            return 0;
        }
        cfg_set_msg(ld->err, ld->errlen, "%sunknown config key %s", at, Q(key, q));
        return KP_ERR_INVALID_CONFIG;
    }
    char *copy = cfg_dup_string(value);
    if (copy == NULL) {
        cfg_set_msg(ld->err, ld->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    if (ld->c->raw[k] != NULL) {
        if (ld->origin[k].line != 0 && line != 0) {
            br_warn("%s%s is set again: the value of line %u is replaced", at, key,
                    ld->origin[k].line);
        }
        kp_free(ld->c->raw[k]);
    }
    ld->c->raw[k] = copy;
    ld->origin[k].line = line;
    return 0;
}

/* ---------------------------------------------------- java.util.Properties */

static int parse_file(struct load *ld, const char *buf, size_t len, char *line_buf)
{
    struct br_props lx;
    br_props_init(&lx, buf, len);
    for (;;) {
        char msg[256];
        char *key = NULL;
        char *value = NULL;
        unsigned line = 0;
        int r = br_props_next(&lx, line_buf, &key, &value, &line, msg, sizeof msg);
        if (r < 0) {
            cfg_set_msg(ld->err, ld->errlen, "%s:%s", ld->name, msg);
            return KP_ERR_INVALID_CONFIG;
        }
        if (r == 0) {
            return 0;
        }
        int rc = assign(ld, key, value, line);
        if (rc != 0) {
            return rc;
        }
    }
}

static int parse_override(struct load *ld, const char *ov, char *line_buf)
{
    char q[QUOTE_MAX];
    size_t n = strlen(ov);
    if (n > BR_CONFIG_MAX_LINE_BYTES) {
        cfg_set_msg(ld->err, ld->errlen, "--override longer than %zu bytes", BR_CONFIG_MAX_LINE_BYTES);
        return KP_ERR_INVALID_CONFIG;
    }
    memcpy(line_buf, ov, n + 1);
    char *eq = strchr(line_buf, '=');
    if (eq == NULL) {
        cfg_set_msg(ld->err, ld->errlen, "--override %s: expected key=value", Q(ov, q));
        return KP_ERR_INVALID_CONFIG;
    }
    *eq = '\0';
    return assign(ld, br_props_trim(line_buf), br_props_trim(eq + 1), 0);
}

/* ------------------------------------------------------------ generic keys */

static int parse_typed(struct load *ld, enum br_config_key k)
{
    const struct key_def *d = &cfg_keys[k];
    const char *s = cfg_text_of(ld, k);
    unsigned char *field = (unsigned char *)ld->c + d->offset;
    char msg[256];
    int64_t v = 0;
    int rc = 0;
    if (s == NULL || d->kind == K_SPECIAL) {
        return 0;
    }
    switch (d->kind) {
    case K_INT: {
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, sizeof msg);
        int32_t x = (int32_t)v;
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_SHORT: {
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, sizeof msg);
        int16_t x = (int16_t)v;
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_LONG:
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &v, sizeof v);
        }
        break;
    case K_NUMBER:
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, sizeof msg);
        break;
    case K_BOOL: {
        bool b = false;
        rc = br_config_parse_bool(s, &b, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &b, sizeof b);
        }
        break;
    }
    case K_RATIO: {
        double x = 0;
        rc = br_config_parse_ratio(s, &x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_CLEANUP: {
        unsigned x = 0;
        rc = br_config_parse_cleanup_policy(s, &x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_COMPRESSION: {
        int x = 0;
        rc = br_config_parse_compression(s, &x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_TSTYPE: {
        int x = 0;
        rc = br_config_parse_timestamp_type(s, &x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_LOGLEVEL: {
        int x = br_logging_parse_level(s);
        if (x < 0) {
            char q[QUOTE_MAX];
            cfg_set_msg(msg, sizeof msg, "%s is not a log level: it must be debug, info, warn or error",
                    Q(s, q));
            rc = -1;
        } else {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_FORMAT: {
        char x[BR_FORMAT_VERSION_MAX + 1];
        rc = br_config_parse_format_version(s, x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, x, sizeof x);
        }
        break;
    }
    case K_SPECIAL:
        break;
    }
    if (rc != 0) {
        return cfg_key_error(ld, k, "%s", msg);
    }
    return 0;
}

/* ------------------------------------------------------------ the rest */

static int resolve_log_dirs(struct load *ld)
{
    struct br_config *c = ld->c;
    enum br_config_key k = br_config_is_set(c, BR_CFG_LOG_DIRS) ? BR_CFG_LOG_DIRS : BR_CFG_LOG_DIR;
    const char *s = cfg_text_of(ld, k);
    char q[QUOTE_MAX];
    size_t count = 1;
    for (const char *p = s; *p != '\0'; p++) {
        count += *p == ',' ? 1u : 0u;
    }
    if (count > BR_CONFIG_MAX_LOG_DIRS) {
        return cfg_key_error(ld, k, "more than %d directories", BR_CONFIG_MAX_LOG_DIRS);
    }
    c->log_dirs = kp_calloc(count, sizeof *c->log_dirs);
    if (c->log_dirs == NULL) {
        cfg_set_msg(ld->err, ld->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        while (len > 0 && (unsigned char)*item <= ' ') {
            item++;
            len--;
        }
        while (len > 0 && (unsigned char)item[len - 1] <= ' ') {
            len--;
        }
        if (len > BR_CONFIG_MAX_PATH) {
            return cfg_key_error(ld, k, "a directory name is longer than %d bytes", BR_CONFIG_MAX_PATH);
        }
        if (len > 0) {
            for (size_t i = 0; i < c->n_log_dirs; i++) {
                if (strlen(c->log_dirs[i]) == len && memcmp(c->log_dirs[i], item, len) == 0) {
                    return cfg_key_error(ld, k, "directory %s is listed twice",
                                     cfg_quoted(item, len, q, sizeof q));
                }
            }
            char *dir = kp_malloc(len + 1);
            if (dir == NULL) {
                cfg_set_msg(ld->err, ld->errlen, "out of memory");
                return KP_E_NOMEM;
            }
            memcpy(dir, item, len);
            dir[len] = '\0';
            c->log_dirs[c->n_log_dirs++] = dir;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    if (c->n_log_dirs == 0) {
        return cfg_key_error(ld, k, "no directory given");
    }
    return 0;
}

static int resolve_zookeeper(struct load *ld)
{
    struct br_config *c = ld->c;
    const char *s = c->raw[BR_CFG_ZOOKEEPER_CONNECT];
    if (s == NULL || s[0] == '\0') {
        return 0; /* standalone */
    }
    if (strlen(s) > BR_ZK_CONNECT_MAX) {
        return cfg_key_error(ld, BR_CFG_ZOOKEEPER_CONNECT, "longer than %d bytes", BR_ZK_CONNECT_MAX);
    }
    /* host:port[,host:port...][/chroot]: no spaces, no empty host */
    const char *chroot = strchr(s, '/');
    size_t hosts_len = chroot != NULL ? (size_t)(chroot - s) : strlen(s);
    bool ok = hosts_len > 0 && s[0] != ',' && s[hosts_len - 1] != ',';
    for (size_t i = 0; ok && s[i] != '\0'; i++) {
        unsigned char ch = (unsigned char)s[i];
        ok = ch > ' ' && ch < 0x7f && !(i < hosts_len && i > 0 && s[i] == ',' && s[i - 1] == ',');
    }
    if (!ok) {
        char q[QUOTE_MAX];
        return cfg_key_error(ld, BR_CFG_ZOOKEEPER_CONNECT,
                         "%s is not a ZooKeeper connect string host:port[,host:port...][/chroot]",
                         Q(s, q));
    }
    c->zookeeper_connect = cfg_dup_string(s);
    if (c->zookeeper_connect == NULL) {
        cfg_set_msg(ld->err, ld->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    return 0;
}

/* broker.rack (Kafka's RackProp): at most BR_RACK_MAX bytes of printable
 * text, registered in /brokers/ids/<id>; empty or unset: no rack. */
static int resolve_rack(struct load *ld)
{
    const char *s = ld->c->raw[BR_CFG_BROKER_RACK];
    if (s == NULL) {
        return 0;
    }
    size_t n = strlen(s);
    bool ok = n <= BR_RACK_MAX;
    for (size_t i = 0; ok && i < n; i++) {
        ok = (unsigned char)s[i] >= ' ' && s[i] != 0x7f;
    }
    if (!ok) {
        char q[QUOTE_MAX];
        return cfg_key_error(ld, BR_CFG_BROKER_RACK,
                             "%s is not a rack: at most %d bytes without control characters",
                             Q(s, q), BR_RACK_MAX);
    }
    return 0;
}

/* Kafka's precedence: the first key of `order` that has a value wins, times
 * its multiplier. *from is the key that supplied it. */
static int effective(struct load *ld, const enum br_config_key *order, const int64_t *mult,
                     size_t n, int64_t *out, enum br_config_key *from)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = 0;
        int r = number_of(ld, order[i], &v);
        if (r < 0) {
            return KP_ERR_INVALID_CONFIG;
        }
        if (r > 0) {
            /* int32 values times at most an hour's milliseconds fit int64 */
            *out = v * mult[i];
            *from = order[i];
            return 0;
        }
    }
    *out = 0;
    *from = order[n - 1];
    return 0;
}

static int resolve_effective(struct load *ld)
{
    struct br_config *c = ld->c;
    enum br_config_key from = BR_CFG__COUNT;
    int64_t v = 0;
    int rc;

    static const enum br_config_key retention[] = {
        BR_CFG_LOG_RETENTION_MS, BR_CFG_LOG_RETENTION_MINUTES, BR_CFG_LOG_RETENTION_HOURS};
    static const int64_t retention_mult[] = {1, 60000, 3600000};
    rc = effective(ld, retention, retention_mult, 3, &v, &from);
    if (rc != 0) {
        return rc;
    }
    if (v == 0) {
        return cfg_key_error(ld, from, "retention must be unlimited (-1) or at least 1 ms");
    }
    c->log_retention_ms = v < 0 ? -1 : v;

    static const enum br_config_key roll[] = {BR_CFG_LOG_ROLL_MS, BR_CFG_LOG_ROLL_HOURS};
    static const enum br_config_key jitter[] = {BR_CFG_LOG_ROLL_JITTER_MS,
                                                BR_CFG_LOG_ROLL_JITTER_HOURS};
    static const int64_t hour_mult[] = {1, 3600000};
    rc = effective(ld, roll, hour_mult, 2, &c->log_roll_ms, &from);
    if (rc == 0) {
        rc = effective(ld, jitter, hour_mult, 2, &c->log_roll_jitter_ms, &from);
    }
    if (rc != 0) {
        return rc;
    }

    int r = number_of(ld, BR_CFG_LOG_FLUSH_INTERVAL_MS, &v);
    if (r < 0) {
        return KP_ERR_INVALID_CONFIG;
    }
    c->log_flush_interval_ms = r > 0 ? v : c->log_flush_scheduler_interval_ms;

    r = number_of(ld, BR_CFG_LOG_OPEN_FILES_MAX, &v);
    if (r < 0) {
        return KP_ERR_INVALID_CONFIG;
    }
    c->log_open_files_max = r > 0 ? (int32_t)v : 0;

    r = number_of(ld, BR_CFG_ZOOKEEPER_CONNECTION_TIMEOUT_MS, &v);
    if (r < 0) {
        return KP_ERR_INVALID_CONFIG;
    }
    c->zookeeper_connection_timeout_ms = r > 0 ? (int32_t)v : c->zookeeper_session_timeout_ms;

    /* the default must not refuse a request socket.request.max.bytes allows */
    if (!br_config_is_set(c, BR_CFG_QUEUED_MAX_REQUEST_BYTES) &&
        c->queued_max_request_bytes < c->socket_request_max_bytes) {
        c->queued_max_request_bytes = c->socket_request_max_bytes;
    }
    return 0;
}

/* Kafka's KafkaConfig.validateValues, the parts that concern Samsa. */
static int cross_checks(struct load *ld)
{
    const struct br_config *c = ld->c;
    if (c->broker_id_generation_enable) {
        if (c->broker_id < -1 || c->broker_id > c->reserved_broker_max_id) {
            return cfg_key_error(ld, BR_CFG_BROKER_ID,
                             "must be -1 (generated) or between 0 and reserved.broker.max.id "
                             "(%d)",
                             (int)c->reserved_broker_max_id);
        }
    } else if (c->broker_id < 0) {
        return cfg_key_error(ld, BR_CFG_BROKER_ID,
                         "must be at least 0 when broker.id.generation.enable is false");
    }
    if (c->replica_fetch_wait_max_ms > c->replica_socket_timeout_ms) {
        return cfg_key_error(ld, BR_CFG_REPLICA_FETCH_WAIT_MAX_MS,
                         "must not exceed replica.socket.timeout.ms (%d)",
                         (int)c->replica_socket_timeout_ms);
    }
    if (c->replica_fetch_wait_max_ms > c->replica_lag_time_max_ms) {
        return cfg_key_error(ld, BR_CFG_REPLICA_FETCH_WAIT_MAX_MS,
                         "must not exceed replica.lag.time.max.ms (%lld), or the ISR shrinks "
                         "on quiet topics",
                         (long long)c->replica_lag_time_max_ms);
    }
    if (c->queued_max_request_bytes > 0 &&
        c->queued_max_request_bytes < c->socket_request_max_bytes) {
        /* KafkaConfig's check: a request of the largest allowed size must fit */
        return cfg_key_error(ld, BR_CFG_QUEUED_MAX_REQUEST_BYTES,
                         "must be at least socket.request.max.bytes (%d), or -1 for no limit",
                         (int)c->socket_request_max_bytes);
    }
    if (c->connections_max_idle_ms == 0) {
        /* Kafka accepts 0 and then closes every connection as soon as it
         * pauses: no configuration means that */
        return cfg_key_error(ld, BR_CFG_CONNECTIONS_MAX_IDLE_MS,
                         "0 would close every connection the moment it pauses: give at least "
                         "1 ms, or -1 to never close idle connections");
    }
    /* SimpleAclAuthorizer (Kafka 2.0) or AclAuthorizer (2.4), the same
     * rules; no other class runs here */
    const char *authz = cfg_text_of(ld, BR_CFG_AUTHORIZER_CLASS_NAME);
    if (authz != NULL && authz[0] != '\0') {
        if (strcmp(authz, "kafka.security.auth.SimpleAclAuthorizer") != 0 &&
            strcmp(authz, "kafka.security.authorizer.AclAuthorizer") != 0) {
            return cfg_key_error(ld, BR_CFG_AUTHORIZER_CLASS_NAME,
                                 "only kafka.security.auth.SimpleAclAuthorizer (or "
                                 "kafka.security.authorizer.AclAuthorizer) is built in");
        }
        ld->c->authorizer = true;
    }
    if (c->group_min_session_timeout_ms > c->group_max_session_timeout_ms) {
        return cfg_key_error(ld, BR_CFG_GROUP_MIN_SESSION_TIMEOUT_MS,
                         "must not exceed group.max.session.timeout.ms (%d)",
                         (int)c->group_max_session_timeout_ms);
    }
    return 0;
}

void br_config_free(struct br_config *c)
{
    if (c == NULL) {
        return;
    }
    for (size_t k = 0; k < BR_CFG__COUNT; k++) {
        kp_free(c->raw[k]);
    }
    if (c->log_dirs != NULL) {
        for (size_t i = 0; i < c->n_log_dirs; i++) {
            kp_free(c->log_dirs[i]);
        }
        kp_free(c->log_dirs);
    }
    kp_free(c->zookeeper_connect);
    for (size_t i = 0; i < c->n_listener_overrides; i++) {
        kp_free(c->listener_overrides[i].value);
    }
    kp_free(c->listener_overrides);
    memset(c, 0, sizeof *c);
}

int br_config_parse_buffer(const char *buf, size_t len, const char *name,
                           const char *const *overrides, size_t n_overrides, struct br_config *out,
                           char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cfg_set_msg(err, errlen, "%s", "");
    if (name == NULL) {
        name = "(config)";
    }
    if (len > BR_CONFIG_MAX_FILE_BYTES) {
        cfg_set_msg(err, errlen, "%s: larger than %zu bytes", name, BR_CONFIG_MAX_FILE_BYTES);
        return KP_ERR_INVALID_CONFIG;
    }
    struct load *ld = kp_calloc(1, sizeof *ld);
    char *line_buf = kp_malloc(BR_CONFIG_MAX_LINE_BYTES + 1);
    int rc = 0;
    if (ld == NULL || line_buf == NULL) {
        cfg_set_msg(err, errlen, "out of memory");
        rc = KP_E_NOMEM;
        goto out_free;
    }
    ld->c = out;
    ld->name = name;
    ld->err = err;
    ld->errlen = errlen;

    rc = parse_file(ld, buf, len, line_buf);
    for (size_t i = 0; rc == 0 && i < n_overrides; i++) {
        rc = parse_override(ld, overrides[i], line_buf);
    }
    for (int k = 0; rc == 0 && k < BR_CFG__COUNT; k++) {
        rc = parse_typed(ld, (enum br_config_key)k);
    }
    if (rc == 0) {
        rc = cfg_resolve_listeners(ld);
    }
    if (rc == 0) {
        rc = resolve_log_dirs(ld);
    }
    if (rc == 0) {
        rc = resolve_zookeeper(ld);
    }
    if (rc == 0) {
        rc = resolve_rack(ld);
    }
    if (rc == 0) {
        rc = resolve_effective(ld);
    }
    if (rc == 0) {
        rc = cross_checks(ld);
    }
out_free:
    kp_free(line_buf);
    kp_free(ld);
    if (rc != 0) {
        br_config_free(out);
    }
    return rc;
}

int br_config_check_available(const struct br_config *c, char *err, size_t errlen)
{
    if (c->zookeeper_connect != NULL && c->broker_id < 0) {
        cfg_set_msg(err, errlen,
                "broker.id must be set (0 or more) on a broker of a cluster: ids generated "
                "from ZooKeeper (broker.id.generation.enable) are not supported");
        return KP_ERR_INVALID_CONFIG;
    }
    return 0;
}

int br_config_defaults(struct br_config *out, char *err, size_t errlen)
{
    return br_config_parse_buffer(NULL, 0, "(defaults)", NULL, 0, out, err, errlen);
}

int br_config_load(const char *path, const char *const *overrides, size_t n_overrides,
                   struct br_config *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cfg_set_msg(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        cfg_set_msg(err, errlen, "%s: not a regular file", path);
        (void)close(fd);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    /* read at most one byte past the ceiling, whatever st_size claims */
    char *buf = kp_malloc(BR_CONFIG_MAX_FILE_BYTES + 1);
    if (buf == NULL) {
        (void)close(fd);
        cfg_set_msg(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    size_t len = 0;
    int rc = 0;
    while (len < BR_CONFIG_MAX_FILE_BYTES + 1) {
        ssize_t r = read(fd, buf + len, BR_CONFIG_MAX_FILE_BYTES + 1 - len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            cfg_set_msg(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        if (r == 0) {
            break;
        }
        len += (size_t)r;
    }
    (void)close(fd);
    if (rc == 0) {
        rc = br_config_parse_buffer(buf, len, path, overrides, n_overrides, out, err, errlen);
    }
    kp_free(buf);
    return rc;
}
