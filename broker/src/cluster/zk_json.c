/* samsa-broker: Kafka 2.0's znode data, encoded and decoded (see zk_json.h). */
#define _POSIX_C_SOURCE 200809L

#include "cluster/zk_json.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/names.h"

/* ------------------------------------------------------------ messages */

/* Bytes of a quoted value in a message, and the buffer q() needs. */
#define QUOTE_BYTES 48
#define QMAX (QUOTE_BYTES * 4 + 8)

/* s[0..n) for a message: quoted, at most QUOTE_BYTES of it, bytes outside
 * printable ASCII as \xNN (ZooKeeper data goes to the log, not raw). */
static const char *q(const char *s, size_t n, char *buf)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    buf[o++] = '"';
    for (size_t i = 0; i < n && i < QUOTE_BYTES; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            buf[o++] = (char)c;
        } else {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        }
    }
    buf[o++] = '"';
    if (n > QUOTE_BYTES) {
        buf[o++] = '.';
        buf[o++] = '.';
        buf[o++] = '.';
    }
    buf[o] = '\0';
    return buf;
}

/* What a decoder reports to: the data's name and the caller's buffer. */
struct dec {
    const char *name;
    char *err;
    size_t errlen;
};

/* Writes "<name>: what [zk_json.c:site]" to the caller's buffer. */
__attribute__((format(printf, 3, 4))) static void report_at(const struct dec *d, int site,
                                                            const char *fmt, ...)
{
    if (d->err != NULL && d->errlen > 0) {
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        (void)snprintf(d->err, d->errlen, "%s: %s [zk_json.c:%d]",
                       d->name != NULL ? d->name : "znode data", what, site);
    }
}

/* Reports and gives rc: the code stays visible at the call site (the
 * static analysers follow no variadic call). */
#define fail(d, rc, ...) (report_at((d), __LINE__, __VA_ARGS__), (rc))
#define fail_at(d, rc, site, ...) (report_at((d), (site), __VA_ARGS__), (rc))

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "a JSON value";
}

/* ------------------------------------------------------------ reading values */

/*
 * s[0..n) as Java's Long.parseLong reads it (Kafka's toInt/toLong on a
 * string): an optional '+' or '-', then one or more ASCII digits, nothing
 * else. True when it reads and lies in [min, max].
 */
static bool java_parse_long(const char *s, size_t n, int64_t min, int64_t max, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n) {
        return false;
    }
    /* accumulated as a negative number, which reaches INT64_MIN */
    int64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        int64_t digit = s[i] - '0';
        /* C division truncates toward zero: this is ceil((MIN + digit) / 10) */
        if (v < (INT64_MIN + digit) / 10) {
            return false;
        }
        v = v * 10 - digit;
    }
    if (!neg) {
        if (v == INT64_MIN) {
            return false;
        }
        v = -v;
    }
    if (v < min || v > max) {
        return false;
    }
    *out = v;
    return true;
}

/* Kafka's to[Int]: a JSON integer within 32 bits (DecodeJson.DecodeInt,
 * Jackson's isInt), here also at least min. */
static int as_int32_at(const struct dec *d, const json_t *v, const char *what, int32_t min,
                       int32_t *out, int site)
{
    if (!json_is_integer(v)) {
        return fail_at(d, KP_E_CORRUPT, site, "%s is %s, not an integer", what, type_name(v));
    }
    json_int_t x = json_integer_value(v);
    if (x < INT32_MIN || x > INT32_MAX) {
        return fail_at(d, KP_E_CORRUPT, site, "%s %lld does not fit 32 bits", what, (long long)x);
    }
    if (x < min) {
        return fail_at(d, KP_E_CORRUPT, site, "%s %lld is below %d", what, (long long)x, (int)min);
    }
    *out = (int32_t)x;
    return 0;
}

#define as_int32(d, v, what, min, out) as_int32_at((d), (v), (what), (min), (out), __LINE__)

/* The integer member `key` (see as_int32_at); missing is an error. */
static int get_int32_at(const struct dec *d, const json_t *obj, const char *key, int32_t min,
                        int32_t *out, int site)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return fail_at(d, KP_E_CORRUPT, site, "no \"%s\"", key);
    }
    char what[64];
    (void)snprintf(what, sizeof what, "\"%s\"", key);
    return as_int32_at(d, v, what, min, out, site);
}

#define get_int32(d, obj, key, min, out) get_int32_at((d), (obj), (key), (min), (out), __LINE__)

/* Kafka's to[String]: the string member `key` as s[0..*n) (jansson's: no
 * NUL inside, valid UTF-8), valid while the document lives. Missing: an
 * error when required, else *s = NULL; present, it must be a string. */
static int get_string_at(const struct dec *d, const json_t *obj, const char *key, bool required,
                         const char **s, size_t *n, int site)
{
    *s = NULL;
    *n = 0;
    const json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return required ? fail_at(d, KP_E_CORRUPT, site, "no \"%s\"", key) : 0;
    }
    if (!json_is_string(v)) {
        return fail_at(d, KP_E_CORRUPT, site, "\"%s\" is %s, not a string", key, type_name(v));
    }
    *s = json_string_value(v);
    *n = json_string_length(v);
    return 0;
}

#define get_string(d, obj, key, required, s, n)                                                    \
    get_string_at((d), (obj), (key), (required), (s), (n), __LINE__)

/* A string member Kafka writes and does not read (a timestamp, a
 * version): its value as a long when it is a string that reads, else -1. */
static int64_t lenient_long(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    int64_t x = -1;
    if (v != NULL && json_is_string(v) &&
        java_parse_long(json_string_value(v), json_string_length(v), 0, INT64_MAX, &x)) {
        return x;
    }
    return -1;
}

static bool has_control_byte(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) {
            return true;
        }
    }
    return false;
}

/* Copies s[0..n) into dst (cap bytes with its NUL): 1..cap-1 bytes (0 too
 * when allow_empty), no control bytes. */
static int copy_text_at(const struct dec *d, const char *what, const char *s, size_t n,
                        bool allow_empty, char *dst, size_t cap, int site)
{
    char qb[QMAX];
    if (n == 0 && !allow_empty) {
        return fail_at(d, KP_E_CORRUPT, site, "%s is empty", what);
    }
    if (n >= cap) {
        return fail_at(d, KP_E_TOO_LARGE, site, "%s %s is longer than %zu bytes", what, q(s, n, qb),
                       cap - 1);
    }
    if (has_control_byte(s, n)) {
        return fail_at(d, KP_E_CORRUPT, site, "%s %s holds a control byte", what, q(s, n, qb));
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 0;
}

#define copy_text(d, what, s, n, allow_empty, dst, cap)                                            \
    copy_text_at((d), (what), (s), (n), (allow_empty), (dst), (cap), __LINE__)

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a;
    int32_t y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* True when v[0..n) (n <= BR_META_MAX_REPLICATION_FACTOR) holds a value
 * twice; *dup is one such value. */
static bool has_repeat(const int32_t *v, size_t n, int32_t *dup)
{
    int32_t sorted[BR_META_MAX_REPLICATION_FACTOR];
    if (n > BR_META_MAX_REPLICATION_FACTOR) {
        return false; /* callers bound n first */
    }
    if (n < 2) {
        return false;
    }
    memcpy(sorted, v, n * sizeof v[0]);
    qsort(sorted, n, sizeof sorted[0], cmp_int32);
    for (size_t i = 1; i < n; i++) {
        if (sorted[i] == sorted[i - 1]) {
            *dup = sorted[i];
            return true;
        }
    }
    return false;
}

/*
 * A list of broker ids (a partition's replicas, an ISR) into out[0..*n):
 * a JSON array of at most max distinct integers >= 0, at least min_count.
 */
static int read_id_list_at(const struct dec *d, const json_t *arr, const char *what,
                           size_t min_count, size_t max, int32_t *out, size_t *n, int site)
{
    if (!json_is_array(arr)) {
        return fail_at(d, KP_E_CORRUPT, site, "%s is %s, not an array", what, type_name(arr));
    }
    size_t count = json_array_size(arr);
    if (count > max) {
        return fail_at(d, KP_E_TOO_LARGE, site, "%s has %zu broker ids, more than %zu", what, count,
                       max);
    }
    if (count < min_count) {
        return fail_at(d, KP_E_CORRUPT, site, "%s is empty", what);
    }
    for (size_t i = 0; i < count; i++) {
        int rc = as_int32_at(d, json_array_get(arr, i), what, 0, &out[i], site);
        if (rc != 0) {
            return rc;
        }
    }
    int32_t dup = 0;
    if (has_repeat(out, count, &dup)) {
        return fail_at(d, KP_E_CORRUPT, site, "%s names broker %d twice", what, (int)dup);
    }
    *n = count;
    return 0;
}

#define read_id_list(d, arr, what, min_count, max, out, n)                                         \
    read_id_list_at((d), (arr), (what), (min_count), (max), (out), (n), __LINE__)

/* Parses buf[0..len) into a JSON object. */
static int parse(const struct dec *d, const char *buf, size_t len, json_t **out)
{
    *out = NULL;
    if (len > BR_ZK_JSON_MAX_BYTES) {
        return fail(d, KP_E_TOO_LARGE, "%zu bytes, more than the %zu read", len,
                    BR_ZK_JSON_MAX_BYTES);
    }
    if (buf == NULL || len == 0) {
        return fail(d, KP_E_CORRUPT, "no data where a JSON object is expected");
    }
    json_error_t e;
    memset(&e, 0, sizeof e);
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
    if (j == NULL) {
        if (json_error_code(&e) == json_error_out_of_memory) {
            return fail(d, KP_E_NOMEM, "out of memory parsing the JSON");
        }
        char qb[QMAX];
        e.text[sizeof e.text - 1] = '\0';
        return fail(d, KP_E_CORRUPT, "not JSON: %s at byte %d", q(e.text, strlen(e.text), qb),
                    e.position);
    }
    if (!json_is_object(j)) {
        int rc = fail(d, KP_E_CORRUPT, "%s, not a JSON object", type_name(j));
        json_decref(j);
        return rc;
    }
    *out = j;
    return 0;
}

/* ------------------------------------------------------------ writing values */

/* Valid UTF-8 (what jansson takes in a string): no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
static bool utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t len = 0;
        uint32_t cp = 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
            cp = c & 0x1fu;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            cp = c & 0x0fu;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            cp = c & 0x07u;
        } else {
            return false;
        }
        if (n - i < len) {
            return false;
        }
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (s[i + k] & 0x3fu);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff)) {
            return false;
        }
        i += len;
    }
    return true;
}

/* A document being built. Errors stick: once a step failed the later ones
 * do nothing and finish() reports the first failure. */
struct enc {
    int err;
};

static void enc_fail(struct enc *e, int rc)
{
    if (e->err == 0) {
        e->err = rc;
    }
}

static json_t *enc_int(struct enc *e, int64_t v)
{
    json_t *j = e->err == 0 ? json_integer((json_int_t)v) : NULL;
    if (j == NULL) {
        enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

static json_t *enc_strn(struct enc *e, const char *s, size_t n)
{
    if (e->err != 0) {
        return NULL;
    }
    if (!utf8_valid(s, n) || memchr(s, '\0', n) != NULL) {
        enc_fail(e, KP_E_INVALID_ARG);
        return NULL;
    }
    json_t *j = json_stringn(s, n);
    if (j == NULL) {
        enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

static json_t *enc_str(struct enc *e, const char *s)
{
    return enc_strn(e, s, strlen(s));
}

/* A decimal string (Kafka writes longs as strings). */
static json_t *enc_long_str(struct enc *e, int64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%lld", (long long)v);
    if (n <= 0 || (size_t)n >= sizeof b) {
        enc_fail(e, KP_E_INVALID_ARG);
        return NULL;
    }
    return enc_strn(e, b, (size_t)n);
}

static json_t *enc_null(struct enc *e)
{
    json_t *j = e->err == 0 ? json_null() : NULL;
    if (j == NULL) {
        enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

static json_t *enc_object(struct enc *e)
{
    json_t *j = e->err == 0 ? json_object() : NULL;
    if (j == NULL) {
        enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

static json_t *enc_array(struct enc *e)
{
    json_t *j = e->err == 0 ? json_array() : NULL;
    if (j == NULL) {
        enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

/* obj[key] = v, v's reference taken (released on any failure). */
static void put(struct enc *e, json_t *obj, const char *key, json_t *v)
{
    if (obj == NULL || v == NULL) {
        enc_fail(e, KP_E_NOMEM);
        json_decref(v);
        return;
    }
    if (!utf8_valid(key, strlen(key))) {
        enc_fail(e, KP_E_INVALID_ARG);
        json_decref(v);
        return;
    }
    if (json_object_set_new(obj, key, v) != 0) {
        enc_fail(e, KP_E_NOMEM);
    }
}

/* arr += v, v's reference taken. */
static void push(struct enc *e, json_t *arr, json_t *v)
{
    if (arr == NULL || v == NULL) {
        enc_fail(e, KP_E_NOMEM);
        json_decref(v);
        return;
    }
    if (json_array_append_new(arr, v) != 0) {
        enc_fail(e, KP_E_NOMEM);
    }
}

/* Renders root (released here) as compact JSON into a kp_malloc'd string. */
static int finish(struct enc *e, json_t *root, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (root == NULL) {
        enc_fail(e, KP_E_NOMEM);
    }
    if (e->err != 0) {
        json_decref(root);
        return e->err;
    }
    size_t flags = JSON_COMPACT;
    size_t need = json_dumpb(root, NULL, 0, flags);
    int rc = 0;
    if (need == 0) {
        rc = KP_E_NOMEM;
    } else if (need > BR_ZK_JSON_MAX_BYTES) {
        rc = KP_E_TOO_LARGE;
    } else {
        char *buf = kp_malloc(need + 1);
        if (buf == NULL) {
            rc = KP_E_NOMEM;
        } else if (json_dumpb(root, buf, need, flags) != need) {
            kp_free(buf);
            rc = KP_E_NOMEM;
        } else {
            buf[need] = '\0';
            *out = buf;
            *out_len = need;
        }
    }
    json_decref(root);
    return rc;
}

/* Text without its NUL into a kp_malloc'd string. */
static int dup_out(const char *s, size_t n, char **out, size_t *out_len)
{
    *out = kp_malloc(n + 1);
    *out_len = 0;
    if (*out == NULL) {
        return KP_E_NOMEM;
    }
    memcpy(*out, s, n);
    (*out)[n] = '\0';
    *out_len = n;
    return 0;
}

/* ------------------------------------------------------------ /brokers/ids/<id> */

static const char *const protocol_names[] = {
    [BR_ZK_PLAINTEXT] = "PLAINTEXT",
    [BR_ZK_SSL] = "SSL",
    [BR_ZK_SASL_PLAINTEXT] = "SASL_PLAINTEXT",
    [BR_ZK_SASL_SSL] = "SASL_SSL",
};

#define N_PROTOCOLS (sizeof protocol_names / sizeof protocol_names[0])

const char *br_zk_security_protocol_name(enum br_zk_security_protocol p)
{
    if ((unsigned)p < N_PROTOCOLS) {
        return protocol_names[p];
    }
    return "UNKNOWN";
}

/* SecurityProtocol.forName: the name in any case. */
static bool protocol_by_name(const char *s, size_t n, enum br_zk_security_protocol *out)
{
    for (size_t i = 0; i < N_PROTOCOLS; i++) {
        const char *p = protocol_names[i];
        if (strlen(p) != n) {
            continue;
        }
        size_t k = 0;
        while (k < n && (s[k] == p[k] || (s[k] >= 'a' && s[k] <= 'z' && s[k] - 32 == p[k]))) {
            k++;
        }
        if (k == n) {
            *out = (enum br_zk_security_protocol)i;
            return true;
        }
    }
    return false;
}

/* The host characters of EndPoint.scala's uriParseExp: [0-9a-zA-Z\-%._:]. */
static bool host_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '%' || c == '.' || c == '_' || c == ':';
}

static bool host_valid(const char *s, size_t n)
{
    if (n > BR_ZK_HOST_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!host_byte((unsigned char)s[i])) {
            return false;
        }
    }
    return true;
}

/* A listener name as Samsa takes it: 1..BR_ZK_LISTENER_MAX printable ASCII
 * bytes without spaces (Kafka takes anything before "://"). */
static bool listener_valid(const char *s, size_t n)
{
    if (n == 0 || n > BR_ZK_LISTENER_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f) {
            return false;
        }
    }
    return true;
}

/*
 * One "LISTENER://host:port" string of "endpoints", as EndPoint.createEndPoint
 * reads it with ^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+): the host
 * holds no '/', so the listener runs to the last "://"; the host's class
 * holds ':', so the port follows the last ':'; a '[' may open the host and
 * a ']' close it. The listener name is upper-cased (ListenerName.normalised)
 * and its protocol looked up in the map (its keys as written), or, without
 * a map, taken from a listener named after its protocol.
 */
static int read_endpoint(const struct dec *d, const char *s, size_t n, const json_t *map,
                         size_t index, struct br_zk_endpoint *ep)
{
    char qb[QMAX];
    size_t sep = n;
    for (size_t i = n; i >= 3; i--) {
        if (s[i - 3] == ':' && s[i - 2] == '/' && s[i - 1] == '/') {
            sep = i - 3;
            break;
        }
    }
    if (sep == n) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu] %s is not LISTENER://host:port", index,
                    q(s, n, qb));
    }
    if (!listener_valid(s, sep)) {
        return fail(d, KP_E_CORRUPT,
                    "endpoints[%zu] %s: the listener name must be 1 to %d "
                    "printable ASCII bytes",
                    index, q(s, n, qb), BR_ZK_LISTENER_MAX);
    }
    const char *rest = s + sep + 3;
    size_t rlen = n - sep - 3;
    size_t colon = rlen;
    for (size_t i = rlen; i > 0; i--) {
        if (rest[i - 1] == ':') {
            colon = i - 1;
            break;
        }
    }
    if (colon == rlen) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu] %s has no :port", index, q(s, n, qb));
    }
    const char *port_s = rest + colon + 1;
    size_t port_n = rlen - colon - 1;
    int64_t port = 0;
    bool digits = port_n > 0 && port_s[0] != '+';
    if (!digits || !java_parse_long(port_s, port_n, INT32_MIN, INT32_MAX, &port)) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu] %s: the port is not a 32-bit number", index,
                    q(s, n, qb));
    }
    if (port < 0 || port > 65535) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu] %s: port %lld is not 0..65535", index,
                    q(s, n, qb), (long long)port);
    }
    size_t h0 = 0;
    size_t h1 = colon;
    if (h1 > 0 && rest[0] == '[') {
        h0 = 1;
    }
    if (h1 > h0 && rest[h1 - 1] == ']') {
        h1--;
    }
    if (!host_valid(rest + h0, h1 - h0)) {
        return fail(d, KP_E_CORRUPT,
                    "endpoints[%zu] %s: the host must be at most %d bytes of "
                    "[0-9a-zA-Z-%%._:]",
                    index, q(s, n, qb), BR_ZK_HOST_MAX);
    }
    memset(ep, 0, sizeof *ep);
    for (size_t i = 0; i < sep; i++) {
        char c = s[i];
        ep->listener[i] = c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
    }
    memcpy(ep->host, rest + h0, h1 - h0);
    ep->port = (int32_t)port;

    const char *proto = NULL;
    size_t proto_n = 0;
    if (map != NULL) {
        const json_t *v = json_object_get(map, ep->listener);
        if (v != NULL) {
            proto = json_string_value(v); /* every value was checked to be a protocol */
            proto_n = json_string_length(v);
        }
    } else {
        proto = ep->listener;
        proto_n = sep;
    }
    if (proto == NULL || !protocol_by_name(proto, proto_n, &ep->security_protocol)) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu]: no security protocol for listener %s%s",
                    index, q(ep->listener, sep, qb),
                    map != NULL ? " in listener_security_protocol_map" : "");
    }
    return 0;
}

void br_zk_broker_clear(struct br_zk_broker *b)
{
    if (b == NULL) {
        return;
    }
    kp_free(b->endpoints);
    memset(b, 0, sizeof *b);
}

static int broker_v1(const struct dec *d, const json_t *root, struct br_zk_broker *out)
{
    const char *host = NULL;
    size_t host_n = 0;
    int32_t port = 0;
    int rc = get_string(d, root, "host", true, &host, &host_n);
    if (rc == 0) {
        rc = get_int32(d, root, "port", 0, &port);
    }
    if (rc != 0) {
        return rc;
    }
    char qb[QMAX];
    if (port > 65535) {
        return fail(d, KP_E_CORRUPT, "\"port\" %d is not 0..65535", (int)port);
    }
    if (!host_valid(host, host_n)) {
        return fail(d, KP_E_CORRUPT, "\"host\" %s must be at most %d bytes of [0-9a-zA-Z-%%._:]",
                    q(host, host_n, qb), BR_ZK_HOST_MAX);
    }
    out->endpoints = kp_calloc(1, sizeof out->endpoints[0]);
    if (out->endpoints == NULL) {
        return fail(d, KP_E_NOMEM, "out of memory");
    }
    out->n_endpoints = 1;
    struct br_zk_endpoint *ep = &out->endpoints[0];
    memcpy(ep->listener, "PLAINTEXT", sizeof "PLAINTEXT");
    memcpy(ep->host, host, host_n);
    ep->port = port;
    ep->security_protocol = BR_ZK_PLAINTEXT;
    return 0;
}

static int broker_v2(const struct dec *d, const json_t *root, struct br_zk_broker *out)
{
    char qb[QMAX];
    json_t *map = json_object_get(root, "listener_security_protocol_map");
    if (map != NULL) {
        if (!json_is_object(map)) {
            return fail(d, KP_E_CORRUPT, "\"listener_security_protocol_map\" is %s, not an object",
                        type_name(map));
        }
        /* Kafka maps every entry through SecurityProtocol.forName */
        for (void *it = json_object_iter(map); it != NULL; it = json_object_iter_next(map, it)) {
            const char *key = json_object_iter_key(it);
            const json_t *v = json_object_iter_value(it);
            enum br_zk_security_protocol p;
            if (!json_is_string(v)) {
                return fail(d, KP_E_CORRUPT,
                            "listener_security_protocol_map[%s] is %s, not a "
                            "string",
                            q(key, strlen(key), qb), type_name(v));
            }
            if (!protocol_by_name(json_string_value(v), json_string_length(v), &p)) {
                return fail(d, KP_E_CORRUPT,
                            "listener_security_protocol_map[%s]: %s is no "
                            "security protocol",
                            q(key, strlen(key), qb),
                            q(json_string_value(v), json_string_length(v), qb));
            }
        }
    }
    const json_t *eps = json_object_get(root, "endpoints");
    if (eps == NULL) {
        return fail(d, KP_E_CORRUPT, "no \"endpoints\"");
    }
    if (!json_is_array(eps)) {
        return fail(d, KP_E_CORRUPT, "\"endpoints\" is %s, not an array", type_name(eps));
    }
    size_t n = json_array_size(eps);
    if (n > BR_ZK_MAX_ENDPOINTS) {
        return fail(d, KP_E_TOO_LARGE, "%zu endpoints, more than %d", n, BR_ZK_MAX_ENDPOINTS);
    }
    if (n == 0) {
        return fail(d, KP_E_CORRUPT, "\"endpoints\" is empty: the broker cannot be reached");
    }
    out->endpoints = kp_calloc(n, sizeof out->endpoints[0]);
    if (out->endpoints == NULL) {
        return fail(d, KP_E_NOMEM, "out of memory");
    }
    out->n_endpoints = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(eps, i);
        if (!json_is_string(v)) {
            return fail(d, KP_E_CORRUPT, "endpoints[%zu] is %s, not a string", i, type_name(v));
        }
        int rc = read_endpoint(d, json_string_value(v), json_string_length(v), map, i,
                               &out->endpoints[i]);
        if (rc != 0) {
            return rc;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(out->endpoints[k].listener, out->endpoints[i].listener) == 0) {
                return fail(d, KP_E_CORRUPT, "listener %s is in \"endpoints\" twice",
                            q(out->endpoints[i].listener, strlen(out->endpoints[i].listener), qb));
            }
        }
    }
    /* Option[String]: null is no rack */
    const json_t *rack = json_object_get(root, "rack");
    if (rack != NULL && !json_is_null(rack)) {
        if (!json_is_string(rack)) {
            return fail(d, KP_E_CORRUPT, "\"rack\" is %s, not a string", type_name(rack));
        }
        int rc = copy_text(d, "\"rack\"", json_string_value(rack), json_string_length(rack), true,
                           out->rack, sizeof out->rack);
        if (rc != 0) {
            return rc;
        }
        out->has_rack = true;
    }
    return 0;
}

int br_zk_broker_decode(const char *buf, size_t len, const char *name, struct br_zk_broker *out,
                        char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* BrokerIdZNode.decode: version and jmx_port are read first, always */
    rc = get_int32(&d, root, "version", INT32_MIN, &out->version);
    if (rc == 0) {
        rc = get_int32(&d, root, "jmx_port", INT32_MIN, &out->jmx_port);
    }
    if (rc == 0 && out->version < 1) {
        rc = fail(&d, KP_E_UNSUPPORTED,
                  "version %d: Kafka reads broker registrations from "
                  "version 1 on",
                  (int)out->version);
    }
    if (rc == 0) {
        rc = out->version == 1 ? broker_v1(&d, root, out) : broker_v2(&d, root, out);
    }
    if (rc == 0) {
        out->timestamp_ms = lenient_long(root, "timestamp");
        const json_t *admin = json_object_get(root, "admin_endpoint");
        const char *url = json_is_string(admin) ? json_string_value(admin) : NULL;
        size_t url_n = json_is_string(admin) ? json_string_length(admin) : 0;
        if (url != NULL && url_n <= BR_ZK_ADMIN_ENDPOINT_MAX && !has_control_byte(url, url_n)) {
            memcpy(out->admin_endpoint, url, url_n);
            out->admin_endpoint[url_n] = '\0';
        }
    }
    json_decref(root);
    if (rc != 0) {
        br_zk_broker_clear(out);
    }
    return rc;
}

/* EndPoint.connectionString: LISTENER://host:port, Utils.formatAddress
 * putting an IPv6 host in brackets, ":port" alone for a null host. */
static int endpoint_string(const struct br_zk_endpoint *ep, char *buf, size_t cap, size_t *n)
{
    int w;
    if (ep->host[0] == '\0') {
        w = snprintf(buf, cap, "%s://:%d", ep->listener, (int)ep->port);
    } else if (strchr(ep->host, ':') != NULL) {
        w = snprintf(buf, cap, "%s://[%s]:%d", ep->listener, ep->host, (int)ep->port);
    } else {
        w = snprintf(buf, cap, "%s://%s:%d", ep->listener, ep->host, (int)ep->port);
    }
    if (w < 0 || (size_t)w >= cap) {
        return KP_E_INVALID_ARG;
    }
    *n = (size_t)w;
    return 0;
}

int br_zk_broker_encode(const struct br_zk_broker *b, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (b->n_endpoints == 0 || b->n_endpoints > BR_ZK_MAX_ENDPOINTS || b->endpoints == NULL) {
        return KP_E_INVALID_ARG;
    }
    const struct br_zk_endpoint *plain = NULL;
    for (size_t i = 0; i < b->n_endpoints; i++) {
        const struct br_zk_endpoint *ep = &b->endpoints[i];
        size_t ln = strnlen(ep->listener, sizeof ep->listener);
        size_t hn = strnlen(ep->host, sizeof ep->host);
        if (ln == sizeof ep->listener || hn == sizeof ep->host ||
            !listener_valid(ep->listener, ln) || !host_valid(ep->host, hn) || ep->port < 0 ||
            ep->port > 65535 || (unsigned)ep->security_protocol >= N_PROTOCOLS) {
            return KP_E_INVALID_ARG;
        }
        for (size_t k = 0; k < ln; k++) {
            if (ep->listener[k] >= 'a' && ep->listener[k] <= 'z') {
                return KP_E_INVALID_ARG; /* Kafka would read it upper-cased */
            }
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(b->endpoints[k].listener, ep->listener) == 0) {
                return KP_E_INVALID_ARG;
            }
        }
        if (plain == NULL && ep->security_protocol == BR_ZK_PLAINTEXT) {
            plain = ep;
        }
    }
    size_t rack_n = b->has_rack ? strnlen(b->rack, sizeof b->rack) : 0;
    if (b->has_rack && (rack_n == sizeof b->rack || has_control_byte(b->rack, rack_n))) {
        return KP_E_INVALID_ARG;
    }

    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_int(&e, 4));
    /* BrokerIdZNode.encode: the first PLAINTEXT endpoint, for old clients */
    if (plain != NULL && plain->host[0] != '\0') {
        put(&e, root, "host", enc_str(&e, plain->host));
    } else {
        put(&e, root, "host", enc_null(&e));
    }
    put(&e, root, "port", enc_int(&e, plain != NULL ? plain->port : -1));
    json_t *eps = enc_array(&e);
    json_t *map = enc_object(&e);
    for (size_t i = 0; i < b->n_endpoints; i++) {
        const struct br_zk_endpoint *ep = &b->endpoints[i];
        char s[BR_ZK_LISTENER_MAX + BR_ZK_HOST_MAX + 24];
        size_t n = 0;
        if (endpoint_string(ep, s, sizeof s, &n) != 0) {
            enc_fail(&e, KP_E_INVALID_ARG);
        }
        push(&e, eps, enc_strn(&e, s, n));
        put(&e, map, ep->listener, enc_str(&e, protocol_names[ep->security_protocol]));
    }
    put(&e, root, "endpoints", eps);
    put(&e, root, "listener_security_protocol_map", map);
    if (b->has_rack) {
        put(&e, root, "rack", enc_strn(&e, b->rack, rack_n));
    }
    put(&e, root, "jmx_port", enc_int(&e, b->jmx_port));
    put(&e, root, "timestamp", enc_long_str(&e, b->timestamp_ms));
    size_t admin_n = strnlen(b->admin_endpoint, sizeof b->admin_endpoint);
    if (admin_n > 0 && admin_n < sizeof b->admin_endpoint &&
        !has_control_byte(b->admin_endpoint, admin_n)) {
        put(&e, root, "admin_endpoint", enc_strn(&e, b->admin_endpoint, admin_n));
    }
    return finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /controller */

int br_zk_controller_encode(int32_t broker_id, int64_t timestamp_ms, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (broker_id < 0) {
        return KP_E_INVALID_ARG;
    }
    /* ControllerZNode.encode */
    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_int(&e, 1));
    put(&e, root, "brokerid", enc_int(&e, broker_id));
    put(&e, root, "timestamp", enc_long_str(&e, timestamp_ms));
    return finish(&e, root, out, out_len);
}

int br_zk_controller_decode(const char *buf, size_t len, const char *name,
                            struct br_zk_controller *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* ControllerZNode.decode reads brokerid alone */
    rc = get_int32(&d, root, "brokerid", 0, &out->broker_id);
    if (rc == 0) {
        const json_t *v = json_object_get(root, "version");
        json_int_t ver = v != NULL && json_is_integer(v) ? json_integer_value(v) : -1;
        out->version = ver >= 0 && ver <= INT32_MAX ? (int32_t)ver : -1;
        out->timestamp_ms = lenient_long(root, "timestamp");
    } else {
        memset(out, 0, sizeof *out);
    }
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------------ /controller_epoch */

int br_zk_controller_epoch_encode(int32_t epoch, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (epoch < 0) {
        return KP_E_INVALID_ARG;
    }
    char b[16];
    int n = snprintf(b, sizeof b, "%d", (int)epoch);
    if (n <= 0 || (size_t)n >= sizeof b) {
        return KP_E_INVALID_ARG;
    }
    return dup_out(b, (size_t)n, out, out_len);
}

int br_zk_controller_epoch_decode(const char *buf, size_t len, const char *name, int32_t *epoch,
                                  char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    *epoch = 0;
    if (len > BR_ZK_JSON_MAX_BYTES) {
        return fail(&d, KP_E_TOO_LARGE, "%zu bytes, more than the %zu read", len,
                    BR_ZK_JSON_MAX_BYTES);
    }
    /* ControllerEpochZNode.decode: new String(bytes, UTF_8).toInt */
    int64_t v = 0;
    if (buf == NULL || !java_parse_long(buf, len, INT32_MIN, INT32_MAX, &v)) {
        return fail(&d, KP_E_CORRUPT, "%s is not a 32-bit decimal number",
                    buf != NULL ? q(buf, len, qb) : "no data");
    }
    if (v < 0) {
        return fail(&d, KP_E_CORRUPT, "controller epoch %lld is negative", (long long)v);
    }
    *epoch = (int32_t)v;
    return 0;
}

/* ------------------------------------------------------------ /brokers/topics/<t> */

void br_zk_topic_assignment_clear(struct br_zk_topic_assignment *a)
{
    if (a == NULL) {
        return;
    }
    kp_free(a->first);
    kp_free(a->replicas);
    memset(a, 0, sizeof *a);
}

int br_zk_topic_assignment_decode(const char *buf, size_t len, const char *name,
                                  struct br_zk_topic_assignment *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    const json_t **by_partition = NULL;
    /* TopicZNode.decode reads "partitions" alone */
    json_t *parts = json_object_get(root, "partitions");
    if (parts == NULL) {
        rc = fail(&d, KP_E_CORRUPT, "no \"partitions\"");
        goto out;
    }
    if (!json_is_object(parts)) {
        rc = fail(&d, KP_E_CORRUPT, "\"partitions\" is %s, not an object", type_name(parts));
        goto out;
    }
    size_t n = json_object_size(parts);
    if (n > BR_META_MAX_PARTITIONS) {
        rc = fail(&d, KP_E_TOO_LARGE, "%zu partitions, more than %d", n, BR_META_MAX_PARTITIONS);
        goto out;
    }
    if (n == 0) {
        rc = fail(&d, KP_E_CORRUPT, "\"partitions\" is empty");
        goto out;
    }
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    by_partition = kp_calloc(n, sizeof by_partition[0]);
    out->first = kp_calloc(n + 1, sizeof out->first[0]);
    if (by_partition == NULL || out->first == NULL) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
        goto out;
    }
    /* keys: partition ids as Integer.parseInt reads them, each once, 0..n-1 */
    int64_t total = 0;
    for (void *it = json_object_iter(parts); it != NULL; it = json_object_iter_next(parts, it)) {
        const char *key = json_object_iter_key(it);
        const json_t *v = json_object_iter_value(it);
        int64_t p = 0;
        size_t kn = strlen(key);
        if (!java_parse_long(key, kn, INT32_MIN, INT32_MAX, &p)) {
            rc = fail(&d, KP_E_CORRUPT, "partition id %s is not a 32-bit decimal number",
                      q(key, kn, qb));
            goto out;
        }
        if (p < 0) {
            rc = fail(&d, KP_E_CORRUPT, "partition id %lld is negative", (long long)p);
            goto out;
        }
        if ((size_t)p >= n) {
            rc = fail(&d, KP_E_CORRUPT,
                      "partition %lld among %zu partitions: they must be "
                      "numbered 0 to %zu",
                      (long long)p, n, n - 1);
            goto out;
        }
        if (by_partition[(size_t)p] != NULL) {
            rc = fail(&d, KP_E_CORRUPT,
                      "partition %lld is given twice (as %s and another "
                      "spelling)",
                      (long long)p, q(key, kn, qb));
            goto out;
        }
        if (!json_is_array(v)) {
            rc = fail(&d, KP_E_CORRUPT, "partition %lld: the replicas are %s, not an array",
                      (long long)p, type_name(v));
            goto out;
        }
        by_partition[(size_t)p] = v;
        total += (int64_t)json_array_size(v);
        if (total > BR_META_MAX_REPLICAS) {
            rc = fail(&d, KP_E_TOO_LARGE, "more than %lld replicas in all",
                      (long long)BR_META_MAX_REPLICAS);
            goto out;
        }
    }
    out->replicas = kp_calloc(total > 0 ? (size_t)total : 1, sizeof out->replicas[0]);
    if (out->replicas == NULL) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
        goto out;
    }
    size_t at = 0;
    for (size_t p = 0; p < n; p++) {
        char what[48];
        (void)snprintf(what, sizeof what, "partition %zu", p);
        size_t count = 0;
        out->first[p] = (int32_t)at;
        rc = read_id_list(&d, by_partition[p], what, 1, BR_META_MAX_REPLICATION_FACTOR,
                          out->replicas + at, &count);
        if (rc != 0) {
            goto out;
        }
        at += count;
    }
    out->first[n] = (int32_t)at;
    out->n_partitions = (int32_t)n;

out:
    kp_free(by_partition);
    json_decref(root);
    if (rc != 0) {
        br_zk_topic_assignment_clear(out);
    }
    return rc;
}

int br_zk_topic_assignment_encode(const struct br_zk_topic_assignment *a, char **out,
                                  size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (a->n_partitions < 1 || a->n_partitions > BR_META_MAX_PARTITIONS || a->first == NULL ||
        a->replicas == NULL || a->first[0] != 0) {
        return KP_E_INVALID_ARG;
    }
    for (int32_t p = 0; p < a->n_partitions; p++) {
        int32_t count = a->first[p + 1] - a->first[p];
        int32_t dup = 0;
        if (count < 1 || count > BR_META_MAX_REPLICATION_FACTOR ||
            a->first[p + 1] > BR_META_MAX_REPLICAS ||
            has_repeat(a->replicas + a->first[p], (size_t)count, &dup)) {
            return KP_E_INVALID_ARG;
        }
        for (int32_t i = a->first[p]; i < a->first[p + 1]; i++) {
            if (a->replicas[i] < 0) {
                return KP_E_INVALID_ARG;
            }
        }
    }
    /* TopicZNode.encode */
    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_int(&e, 1));
    json_t *parts = enc_object(&e);
    for (int32_t p = 0; p < a->n_partitions && e.err == 0; p++) {
        json_t *arr = enc_array(&e);
        for (int32_t i = a->first[p]; i < a->first[p + 1]; i++) {
            push(&e, arr, enc_int(&e, a->replicas[i]));
        }
        char key[16];
        (void)snprintf(key, sizeof key, "%d", (int)p);
        put(&e, parts, key, arr);
    }
    put(&e, root, "partitions", parts);
    return finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ .../partitions/<p>/state */

void br_zk_partition_state_clear(struct br_zk_partition_state *s)
{
    if (s == NULL) {
        return;
    }
    kp_free(s->isr);
    memset(s, 0, sizeof *s);
}

int br_zk_partition_state_decode(const char *buf, size_t len, const char *name,
                                 struct br_zk_partition_state *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* TopicPartitionStateZNode.decode: leader, leader_epoch, isr,
     * controller_epoch (LeaderAndIsr.NoLeader is -1, the first epochs 0) */
    rc = get_int32(&d, root, "leader", -1, &out->leader);
    if (rc == 0) {
        rc = get_int32(&d, root, "leader_epoch", 0, &out->leader_epoch);
    }
    if (rc == 0) {
        rc = get_int32(&d, root, "controller_epoch", 0, &out->controller_epoch);
    }
    const json_t *isr = rc == 0 ? json_object_get(root, "isr") : NULL;
    if (rc == 0 && isr == NULL) {
        rc = fail(&d, KP_E_CORRUPT, "no \"isr\"");
    }
    if (rc == 0 && isr != NULL) {
        size_t n = json_is_array(isr) ? json_array_size(isr) : 0;
        out->isr = kp_calloc(n > 0 ? n : 1, sizeof out->isr[0]);
        if (out->isr == NULL) {
            rc = fail(&d, KP_E_NOMEM, "out of memory");
        } else {
            rc = read_id_list(&d, isr, "\"isr\"", 0, BR_META_MAX_REPLICATION_FACTOR, out->isr,
                              &out->n_isr);
        }
    }
    json_decref(root);
    if (rc != 0) {
        br_zk_partition_state_clear(out);
    }
    return rc;
}

int br_zk_partition_state_encode(const struct br_zk_partition_state *s, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    int32_t dup = 0;
    if (s->leader < -1 || s->leader_epoch < 0 || s->controller_epoch < 0 ||
        s->n_isr > BR_META_MAX_REPLICATION_FACTOR || (s->n_isr > 0 && s->isr == NULL) ||
        has_repeat(s->isr, s->n_isr, &dup)) {
        return KP_E_INVALID_ARG;
    }
    for (size_t i = 0; i < s->n_isr; i++) {
        if (s->isr[i] < 0) {
            return KP_E_INVALID_ARG;
        }
    }
    /* TopicPartitionStateZNode.encode */
    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_int(&e, 1));
    put(&e, root, "leader", enc_int(&e, s->leader));
    put(&e, root, "leader_epoch", enc_int(&e, s->leader_epoch));
    json_t *isr = enc_array(&e);
    for (size_t i = 0; i < s->n_isr; i++) {
        push(&e, isr, enc_int(&e, s->isr[i]));
    }
    put(&e, root, "isr", isr);
    put(&e, root, "controller_epoch", enc_int(&e, s->controller_epoch));
    return finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /config/topics/<t> */

void br_zk_configs_free(struct br_meta_config *configs, size_t n)
{
    if (configs == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        kp_free(configs[i].key);
        kp_free(configs[i].value);
    }
    kp_free(configs);
}

static char *dup_n(const char *s, size_t n)
{
    char *p = kp_malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

int br_zk_topic_config_decode(const char *buf, size_t len, const char *name,
                              struct br_meta_config **configs, size_t *n, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    *configs = NULL;
    *n = 0;
    if (len == 0) {
        return 0; /* ConfigEntityZNode.decode: no data, no configs */
    }
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    struct br_meta_config *cs = NULL;
    size_t count = 0;
    json_t *cfg = json_object_get(root, "config");
    if (cfg == NULL) {
        goto out; /* no "config": no configs, as for Kafka */
    }
    if (!json_is_object(cfg)) {
        rc = fail(&d, KP_E_CORRUPT, "\"config\" is %s, not an object", type_name(cfg));
        goto out;
    }
    size_t want = json_object_size(cfg);
    if (want > BR_META_MAX_CONFIGS) {
        rc = fail(&d, KP_E_TOO_LARGE, "%zu configs, more than %d", want, BR_META_MAX_CONFIGS);
        goto out;
    }
    if (want == 0) {
        goto out;
    }
    cs = kp_calloc(want, sizeof cs[0]);
    if (cs == NULL) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
        goto out;
    }
    for (void *it = json_object_iter(cfg); it != NULL; it = json_object_iter_next(cfg, it)) {
        const char *key = json_object_iter_key(it);
        const json_t *v = json_object_iter_value(it);
        size_t kn = strlen(key);
        if (!json_is_string(v)) {
            rc = fail(&d, KP_E_CORRUPT, "config %s is %s, not a string", q(key, kn, qb),
                      type_name(v));
            goto out;
        }
        cs[count].key = dup_n(key, kn);
        cs[count].value = dup_n(json_string_value(v), json_string_length(v));
        count++;
        if (cs[count - 1].key == NULL || cs[count - 1].value == NULL) {
            rc = fail(&d, KP_E_NOMEM, "out of memory");
            goto out;
        }
    }
    char msg[256];
    int crc = br_meta_configs_check(cs, count, msg, sizeof msg);
    if (crc == KP_E_NOMEM) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
    } else if (crc != 0) {
        rc = fail(&d, KP_E_CORRUPT, "%s", msg);
    }

out:
    json_decref(root);
    if (rc != 0) {
        br_zk_configs_free(cs, count);
        return rc;
    }
    if (count == 0) {
        kp_free(cs);
        cs = NULL;
    }
    *configs = cs;
    *n = count;
    return 0;
}

int br_zk_topic_config_encode(const struct br_meta_config *configs, size_t n, char **out,
                              size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    char msg[256];
    if (br_meta_configs_check(configs, n, msg, sizeof msg) != 0) {
        return KP_E_INVALID_ARG;
    }
    /* ConfigEntityZNode.encode */
    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_int(&e, 1));
    json_t *cfg = enc_object(&e);
    for (size_t i = 0; i < n; i++) {
        put(&e, cfg, configs[i].key, enc_str(&e, configs[i].value));
    }
    put(&e, root, "config", cfg);
    return finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /config/changes/config_change_<seq>
 */

/* The entity types each version names (DynamicConfigManager.scala). */
static bool entity_type_known(const char *s, size_t n, int32_t version)
{
    static const char *const v2[] = {"topics", "clients", "users", "brokers"};
    size_t known = version == 1 ? 2 : 4;
    for (size_t i = 0; i < known; i++) {
        if (strlen(v2[i]) == n && memcmp(v2[i], s, n) == 0) {
            return true;
        }
    }
    return false;
}

int br_zk_config_change_decode(const char *buf, size_t len, const char *name,
                               struct br_zk_config_change *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    const char *type = NULL;
    size_t type_n = 0;
    const char *ename = NULL;
    size_t ename_n = 0;
    rc = get_int32(&d, root, "version", INT32_MIN, &out->version);
    if (rc == 0 && out->version != 1 && out->version != 2) {
        rc = fail(&d, KP_E_UNSUPPORTED, "version %d: Kafka reads versions 1 and 2",
                  (int)out->version);
    }
    if (rc == 0 && out->version == 1) {
        rc = get_string(&d, root, "entity_type", true, &type, &type_n);
        if (rc == 0) {
            rc = get_string(&d, root, "entity_name", true, &ename, &ename_n);
        }
    } else if (rc == 0) {
        const char *path = NULL;
        size_t path_n = 0;
        rc = get_string(&d, root, "entity_path", true, &path, &path_n);
        const char *slash = rc == 0 ? memchr(path, '/', path_n) : NULL;
        if (rc == 0 && slash == NULL) {
            rc = fail(&d, KP_E_CORRUPT, "\"entity_path\" %s is not <entity type>/<name>",
                      q(path, path_n, qb));
        }
        if (rc == 0) {
            type = path;
            type_n = (size_t)(slash - path);
            ename = slash + 1;
            ename_n = path_n - type_n - 1;
        }
    }
    if (rc == 0 && !entity_type_known(type, type_n, out->version)) {
        rc = fail(&d, KP_E_CORRUPT, "entity type %s is not one of %s", q(type, type_n, qb),
                  out->version == 1 ? "topics, clients" : "topics, clients, users, brokers");
    }
    if (rc == 0) {
        memcpy(out->entity_type, type, type_n);
        out->entity_type[type_n] = '\0';
        rc = copy_text(&d, "the entity name", ename, ename_n, false, out->entity_name,
                       sizeof out->entity_name);
    }
    json_decref(root);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
    }
    return rc;
}

int br_zk_config_change_encode(const char *entity_type, const char *entity_name, char **out,
                               size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    size_t tn = strlen(entity_type);
    size_t nn = strlen(entity_name);
    if (!entity_type_known(entity_type, tn, 2) || nn == 0 || nn > BR_ZK_ENTITY_NAME_MAX ||
        has_control_byte(entity_name, nn)) {
        return KP_E_INVALID_ARG;
    }
    char path[16 + BR_ZK_ENTITY_NAME_MAX + 2];
    int w = snprintf(path, sizeof path, "%s/%s", entity_type, entity_name);
    if (w < 0 || (size_t)w >= sizeof path) {
        return KP_E_INVALID_ARG;
    }
    /* ConfigEntityChangeNotificationSequenceZNode.encode */
    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_int(&e, 2));
    put(&e, root, "entity_path", enc_strn(&e, path, (size_t)w));
    return finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------
 * /isr_change_notification/isr_change_<seq> */

int br_zk_isr_change_decode(const char *buf, size_t len, const char *name,
                            struct br_zk_topic_partition **tps, size_t *n, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    *tps = NULL;
    *n = 0;
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    struct br_zk_topic_partition *out = NULL;
    /* IsrChangeNotificationSequenceZNode.decode */
    const json_t *parts = json_object_get(root, "partitions");
    if (parts == NULL) {
        rc = fail(&d, KP_E_CORRUPT, "no \"partitions\"");
        goto out;
    }
    if (!json_is_array(parts)) {
        rc = fail(&d, KP_E_CORRUPT, "\"partitions\" is %s, not an array", type_name(parts));
        goto out;
    }
    size_t count = json_array_size(parts);
    if (count > BR_ZK_MAX_NOTIFIED) {
        rc = fail(&d, KP_E_TOO_LARGE, "%zu partitions, more than %zu", count, BR_ZK_MAX_NOTIFIED);
        goto out;
    }
    if (count == 0) {
        goto out;
    }
    out = kp_calloc(count, sizeof out[0]);
    if (out == NULL) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < count && rc == 0; i++) {
        const json_t *tp = json_array_get(parts, i);
        if (!json_is_object(tp)) {
            rc = fail(&d, KP_E_CORRUPT, "partitions[%zu] is %s, not an object", i, type_name(tp));
            break;
        }
        const char *topic = NULL;
        size_t topic_n = 0;
        rc = get_string(&d, tp, "topic", true, &topic, &topic_n);
        if (rc == 0) {
            rc = get_int32(&d, tp, "partition", 0, &out[i].partition);
        }
        if (rc == 0 && !br_topic_name_valid(topic, topic_n)) {
            rc = fail(&d, KP_E_CORRUPT, "partitions[%zu]: %s is not a valid topic name", i,
                      q(topic, topic_n, qb));
        }
        if (rc == 0) {
            memcpy(out[i].topic, topic, topic_n);
        }
    }
    if (rc == 0) {
        *n = count;
    }

out:
    json_decref(root);
    if (rc != 0) {
        kp_free(out);
        return rc;
    }
    *tps = out;
    return 0;
}

int br_zk_isr_change_encode(const struct br_zk_topic_partition *tps, size_t n, char **out,
                            size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (n > BR_ZK_MAX_NOTIFIED || (n > 0 && tps == NULL)) {
        return KP_E_INVALID_ARG;
    }
    for (size_t i = 0; i < n; i++) {
        size_t tn = strnlen(tps[i].topic, sizeof tps[i].topic);
        if (!br_topic_name_valid(tps[i].topic, tn) || tps[i].partition < 0) {
            return KP_E_INVALID_ARG;
        }
    }
    /* IsrChangeNotificationSequenceZNode.encode */
    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_int(&e, 1));
    json_t *arr = enc_array(&e);
    for (size_t i = 0; i < n && e.err == 0; i++) {
        json_t *tp = enc_object(&e);
        put(&e, tp, "topic", enc_str(&e, tps[i].topic));
        put(&e, tp, "partition", enc_int(&e, tps[i].partition));
        push(&e, arr, tp);
    }
    put(&e, root, "partitions", arr);
    return finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /cluster/id */

int br_zk_cluster_id_decode(const char *buf, size_t len, const char *name,
                            char id[BR_ZK_CLUSTER_ID_MAX + 1], char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    id[0] = '\0';
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* ClusterIdZNode.fromJson reads "id" alone */
    const char *s = NULL;
    size_t n = 0;
    rc = get_string(&d, root, "id", true, &s, &n);
    if (rc == 0) {
        rc = copy_text(&d, "\"id\"", s, n, false, id, BR_ZK_CLUSTER_ID_MAX + 1);
    }
    json_decref(root);
    if (rc != 0) {
        id[0] = '\0';
    }
    return rc;
}

int br_zk_cluster_id_encode(const char *id, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    size_t n = strlen(id);
    if (n == 0 || n > BR_ZK_CLUSTER_ID_MAX || has_control_byte(id, n)) {
        return KP_E_INVALID_ARG;
    }
    /* ClusterIdZNode.toJson: the version is the string "1" */
    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_str(&e, "1"));
    put(&e, root, "id", enc_strn(&e, id, n));
    return finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /latest_producer_id_block */

int br_zk_producer_id_block_decode(const char *buf, size_t len, const char *name,
                                   struct br_zk_producer_id_block *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* ProducerIdManager.parseProducerIdBlockData: broker, block_start,
     * block_end, the last two strings read with toLong */
    const char *start = NULL;
    size_t start_n = 0;
    const char *end = NULL;
    size_t end_n = 0;
    rc = get_int32(&d, root, "broker", 0, &out->broker_id);
    if (rc == 0) {
        rc = get_string(&d, root, "block_start", true, &start, &start_n);
    }
    if (rc == 0) {
        rc = get_string(&d, root, "block_end", true, &end, &end_n);
    }
    if (rc == 0 && !java_parse_long(start, start_n, 0, INT64_MAX, &out->block_start)) {
        rc = fail(&d, KP_E_CORRUPT, "\"block_start\" %s is not a decimal number >= 0",
                  q(start, start_n, qb));
    }
    if (rc == 0 && !java_parse_long(end, end_n, 0, INT64_MAX, &out->block_end)) {
        rc = fail(&d, KP_E_CORRUPT, "\"block_end\" %s is not a decimal number >= 0",
                  q(end, end_n, qb));
    }
    if (rc == 0 && out->block_end < out->block_start) {
        rc = fail(&d, KP_E_CORRUPT, "block %lld..%lld ends before it starts",
                  (long long)out->block_start, (long long)out->block_end);
    }
    json_decref(root);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
    }
    return rc;
}

int br_zk_producer_id_block_encode(const struct br_zk_producer_id_block *b, char **out,
                                   size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (b->broker_id < 0 || b->block_start < 0 || b->block_end < b->block_start) {
        return KP_E_INVALID_ARG;
    }
    /* ProducerIdManager.generateProducerIdBlockJson */
    struct enc e = {0};
    json_t *root = enc_object(&e);
    put(&e, root, "version", enc_int(&e, 1));
    put(&e, root, "broker", enc_int(&e, b->broker_id));
    put(&e, root, "block_start", enc_long_str(&e, b->block_start));
    put(&e, root, "block_end", enc_long_str(&e, b->block_end));
    return finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ sequential znodes */

int br_zk_sequence_number(const char *name, const char *prefix, int64_t *seq)
{
    *seq = 0;
    size_t pn = strlen(prefix);
    size_t n = strlen(name);
    /* ZooKeeper appends the parent's counter as %010d */
    if (n != pn + 10 || memcmp(name, prefix, pn) != 0) {
        return KP_E_CORRUPT;
    }
    int64_t v = 0;
    for (size_t i = pn; i < n; i++) {
        if (name[i] < '0' || name[i] > '9') {
            return KP_E_CORRUPT;
        }
        v = v * 10 + (name[i] - '0');
    }
    *seq = v;
    return 0;
}
