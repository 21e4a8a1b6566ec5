/* samsa-broker: the parsers and printers of config values (Java's number
 * rules, booleans, ratios, cleanup.policy, compression, timestamp types,
 * format versions) and the small string helpers (see config.h). */
#define _POSIX_C_SOURCE 200809L

#include "config/config_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <samsa-protocol/alloc.h>

#include "base/number.h"

/* ------------------------------------------------------------ small helpers */

char *cfg_dup_string(const char *s)
{
    size_t n = strlen(s);
    char *p = kp_malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n + 1);
    }
    return p;
}

bool cfg_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

bool cfg_is_alnum(char c)
{
    return cfg_is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char cfg_to_upper(char c)
{
    return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
}

__attribute__((format(printf, 3, 4))) void cfg_set_msg(char *msg, size_t msglen, const char *fmt,
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

/*
 * A value as messages show it: in quotes, at most 64 bytes, control bytes
 * and non-ASCII as '?', so that hostile input cannot forge log lines.
 */
const char *cfg_quoted(const char *v, size_t n, char *buf, size_t buflen)
{
    size_t o = 0;
    if (buflen < 8) {
        return "";
    }
    buf[o++] = '\'';
    size_t i = 0;
    for (; i < n && i < 64 && o + 5 < buflen && v[i] != '\0'; i++) {
        unsigned char c = (unsigned char)v[i];
        buf[o++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    if (i < n && v[i] != '\0') {
        buf[o++] = '.';
        buf[o++] = '.';
        buf[o++] = '.';
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

/* ------------------------------------------------------------ value parsers */

int br_config_parse_long(const char *s, int64_t min, int64_t max, int64_t *out, char *msg,
                         size_t msglen)
{
    char q[QUOTE_MAX];
    const char *p = s;
    if (*p == '+' || *p == '-') {
        p++;
    }
    if (!cfg_is_digit(*p)) {
        cfg_set_msg(msg, msglen, "%s is not an integer", Q(s, q));
        return -1;
    }
    for (const char *d = p; *d != '\0'; d++) {
        if (!cfg_is_digit(*d)) {
            cfg_set_msg(msg, msglen, "%s is not an integer", Q(s, q));
            return -1;
        }
    }
    /* the form is checked above: what the parser refuses is out of range */
    if (!br_num_parse_i64(s, strlen(s), min, max, out)) {
        cfg_set_msg(msg, msglen, "%s is out of range: it must be between %lld and %lld", Q(s, q),
                (long long)min, (long long)max);
        return -1;
    }
    return 0;
}

int br_config_parse_bool(const char *s, bool *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    if (strcasecmp(s, "true") == 0) {
        *out = true;
        return 0;
    }
    if (strcasecmp(s, "false") == 0) {
        *out = false;
        return 0;
    }
    cfg_set_msg(msg, msglen, "%s is not a boolean: it must be true or false", Q(s, q));
    return -1;
}

int br_config_parse_ratio(const char *s, double *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    bool digit = false;
    for (const char *p = s; *p != '\0'; p++) {
        if (cfg_is_digit(*p)) {
            digit = true;
        } else if (*p != '.' && *p != 'e' && *p != 'E' && *p != '+' && *p != '-') {
            digit = false;
            break;
        }
    }
    if (!digit) {
        cfg_set_msg(msg, msglen, "%s is not a number", Q(s, q));
        return -1;
    }
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == NULL || *end != '\0' || errno == ERANGE) {
        cfg_set_msg(msg, msglen, "%s is not a number", Q(s, q));
        return -1;
    }
    if (!isfinite(v) || v < 0.0 || v > 1.0) {
        cfg_set_msg(msg, msglen, "%s is out of range: it must be between 0 and 1", Q(s, q));
        return -1;
    }
    *out = v;
    return 0;
}

int br_config_parse_cleanup_policy(const char *s, unsigned *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    unsigned flags = 0;
    const char *p = s;
    while (*p != '\0') {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        /* Kafka splits on \s*,\s* */
        while (n > 0 && (unsigned char)*item <= ' ') {
            item++;
            n--;
        }
        while (n > 0 && (unsigned char)item[n - 1] <= ' ') {
            n--;
        }
        if (n == 6 && memcmp(item, "delete", 6) == 0) {
            flags |= BR_CLEANUP_DELETE;
        } else if (n == 7 && memcmp(item, "compact", 7) == 0) {
            flags |= BR_CLEANUP_COMPACT;
        } else if (n > 0 || comma != NULL) {
            cfg_set_msg(msg, msglen, "%s is not a cleanup policy: it must be delete, compact or both",
                    cfg_quoted(item, n, q, sizeof q));
            return -1;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    *out = flags;
    return 0;
}

static const char *const compression_names[] = {"uncompressed", "gzip", "snappy", "lz4", "zstd"};

int br_config_parse_compression(const char *s, int *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    if (strcmp(s, "producer") == 0) {
        *out = BR_COMPRESSION_PRODUCER;
        return 0;
    }
    for (size_t i = 0; i < sizeof compression_names / sizeof compression_names[0]; i++) {
        if (strcmp(s, compression_names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    }
    cfg_set_msg(msg, msglen,
            "%s is not a compression type: it must be one of producer, uncompressed, gzip, "
            "snappy, lz4, zstd",
            Q(s, q));
    return -1;
}

int br_config_parse_timestamp_type(const char *s, int *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    if (strcmp(s, "CreateTime") == 0) {
        *out = BR_TIMESTAMP_CREATE_TIME;
        return 0;
    }
    if (strcmp(s, "LogAppendTime") == 0) {
        *out = BR_TIMESTAMP_LOG_APPEND_TIME;
        return 0;
    }
    cfg_set_msg(msg, msglen, "%s is not a timestamp type: it must be CreateTime or LogAppendTime",
            Q(s, q));
    return -1;
}

/* 1 to 3 digits; returns how many, 0 if none or too many. */
static size_t version_part(const char *p)
{
    size_t n = 0;
    while (n < 4 && cfg_is_digit(p[n])) {
        n++;
    }
    return n >= 1 && n <= 3 ? n : 0;
}

int br_config_parse_format_version(const char *s, char out[BR_FORMAT_VERSION_MAX + 1], char *msg,
                                   size_t msglen)
{
    char q[QUOTE_MAX];
    /* N.N[.N[.N]][-IVN] */
    const char *p = s;
    size_t parts = 0;
    size_t n = version_part(p);
    while (n > 0) {
        parts++;
        p += n;
        if (*p != '.' || parts == 4) {
            break;
        }
        p++;
        n = version_part(p);
        if (n == 0) {
            parts = 0; /* a dot not followed by digits */
            break;
        }
    }
    bool ok = parts >= 2;
    if (ok && p[0] == '-' && p[1] == 'I' && p[2] == 'V') {
        p += 3;
        n = version_part(p);
        ok = n > 0;
        p += n;
    }
    if (!ok || *p != '\0' || strlen(s) > BR_FORMAT_VERSION_MAX) {
        cfg_set_msg(msg, msglen, "%s is not a message format version such as 2.0-IV1 or 0.10.2",
                Q(s, q));
        return -1;
    }
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

const char *br_cleanup_policy_str(unsigned flags, char *buf, size_t buflen)
{
    const char *s = "";
    if ((flags & BR_CLEANUP_COMPACT) != 0 && (flags & BR_CLEANUP_DELETE) != 0) {
        s = "compact,delete";
    } else if ((flags & BR_CLEANUP_COMPACT) != 0) {
        s = "compact";
    } else if ((flags & BR_CLEANUP_DELETE) != 0) {
        s = "delete";
    }
    if (buflen > 0) {
        (void)snprintf(buf, buflen, "%s", s);
    }
    return buf;
}

const char *br_compression_str(int compression)
{
    if (compression == BR_COMPRESSION_PRODUCER) {
        return "producer";
    }
    if (compression >= 0 &&
        (size_t)compression < sizeof compression_names / sizeof compression_names[0]) {
        return compression_names[compression];
    }
    return "unknown";
}

const char *br_timestamp_type_str(int type)
{
    return type == BR_TIMESTAMP_LOG_APPEND_TIME ? "LogAppendTime" : "CreateTime";
}
