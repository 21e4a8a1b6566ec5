/* samsa-broker: the znode codecs' messages and their detection sites, and
 * JSON values read and written in Kafka's types (see zk_json.h). */
#define _POSIX_C_SOURCE 200809L

#include "cluster/zk_json_internal.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

/* ------------------------------------------------------------ messages */

/* s[0..n) for a message: quoted, at most QUOTE_BYTES of it, bytes outside
 * printable ASCII as \xNN (ZooKeeper data goes to the log, not raw). */
const char *zkj_q(const char *s, size_t n, char *buf)
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

/* Writes "<name>: what [<file>:<site>]" to the caller's buffer, the file
 * without its directories (zk_json.c, zk_json_topics.c...). */
__attribute__((format(printf, 4, 5))) void zkj_report_at(const struct dec *d, const char *file,
                                                         int site, const char *fmt, ...)
{
    if (d->err != NULL && d->errlen > 0) {
        const char *slash = strrchr(file, '/');
        const char *base = slash != NULL ? slash + 1 : file;
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        (void)snprintf(d->err, d->errlen, "%s: %s [%s:%d]",
                       d->name != NULL ? d->name : "znode data", what, base, site);
    }
}

const char *zkj_type_name(const json_t *v)
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

/* Kafka's to[Int]: a JSON integer within 32 bits (DecodeJson.DecodeInt,
 * Jackson's isInt), here also at least min. */
int zkj_as_int32_at(const struct dec *d, const json_t *v, const char *what, int32_t min,
                    int32_t *out, const char *file, int site)
{
    if (!json_is_integer(v)) {
        return fail_at(d, KP_E_CORRUPT, file, site, "%s is %s, not an integer", what,
                       zkj_type_name(v));
    }
    json_int_t x = json_integer_value(v);
    if (x < INT32_MIN || x > INT32_MAX) {
        return fail_at(d, KP_E_CORRUPT, file, site, "%s %lld does not fit 32 bits", what,
                       (long long)x);
    }
    if (x < min) {
        return fail_at(d, KP_E_CORRUPT, file, site, "%s %lld is below %d", what, (long long)x,
                       (int)min);
    }
    *out = (int32_t)x;
    return 0;
}

/* The integer member `key` (see as_int32_at); missing is an error. */
int zkj_get_int32_at(const struct dec *d, const json_t *obj, const char *key, int32_t min,
                     int32_t *out, const char *file, int site)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return fail_at(d, KP_E_CORRUPT, file, site, "no \"%s\"", key);
    }
    char what[64];
    (void)snprintf(what, sizeof what, "\"%s\"", key);
    return zkj_as_int32_at(d, v, what, min, out, file, site);
}

/* Kafka's to[String]: the string member `key` as s[0..*n) (jansson's: no
 * NUL inside, valid UTF-8), valid while the document lives. Missing: an
 * error when required, else *s = NULL; present, it must be a string. */
int zkj_get_string_at(const struct dec *d, const json_t *obj, const char *key, bool required,
                      const char **s, size_t *n, const char *file, int site)
{
    *s = NULL;
    *n = 0;
    const json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        return required ? fail_at(d, KP_E_CORRUPT, file, site, "no \"%s\"", key) : 0;
    }
    if (!json_is_string(v)) {
        return fail_at(d, KP_E_CORRUPT, file, site, "\"%s\" is %s, not a string", key,
                       zkj_type_name(v));
    }
    *s = json_string_value(v);
    *n = json_string_length(v);
    return 0;
}

/* A string member Kafka writes and does not read (a timestamp, a
 * version): its value as a long when it is a string that reads, else -1. */
int64_t zkj_lenient_long(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    int64_t x = -1;
    if (v != NULL && json_is_string(v) &&
        br_num_parse_i64(json_string_value(v), json_string_length(v), 0, INT64_MAX, &x)) {
        return x;
    }
    return -1;
}

bool zkj_has_control_byte(const char *s, size_t n)
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
int zkj_copy_text_at(const struct dec *d, const char *what, const char *s, size_t n,
                     bool allow_empty, char *dst, size_t cap, const char *file, int site)
{
    char qb[QMAX];
    if (n == 0 && !allow_empty) {
        return fail_at(d, KP_E_CORRUPT, file, site, "%s is empty", what);
    }
    if (n >= cap) {
        return fail_at(d, KP_E_TOO_LARGE, file, site, "%s %s is longer than %zu bytes", what,
                       zkj_q(s, n, qb), cap - 1);
    }
    if (zkj_has_control_byte(s, n)) {
        return fail_at(d, KP_E_CORRUPT, file, site, "%s %s holds a control byte", what,
                       zkj_q(s, n, qb));
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 0;
}

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a;
    int32_t y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* True when v[0..n) (n <= BR_META_MAX_REPLICATION_FACTOR) holds a value
 * twice; *dup is one such value. */
bool zkj_has_repeat(const int32_t *v, size_t n, int32_t *dup)
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
int zkj_read_id_list_at(const struct dec *d, const json_t *arr, const char *what, size_t min_count,
                        size_t max, int32_t *out, size_t *n, const char *file, int site)
{
    if (!json_is_array(arr)) {
        return fail_at(d, KP_E_CORRUPT, file, site, "%s is %s, not an array", what,
                       zkj_type_name(arr));
    }
    size_t count = json_array_size(arr);
    if (count > max) {
        return fail_at(d, KP_E_TOO_LARGE, file, site, "%s has %zu broker ids, more than %zu", what,
                       count, max);
    }
    if (count < min_count) {
        return fail_at(d, KP_E_CORRUPT, file, site, "%s is empty", what);
    }
    for (size_t i = 0; i < count; i++) {
        int rc = zkj_as_int32_at(d, json_array_get(arr, i), what, 0, &out[i], file, site);
        if (rc != 0) {
            return rc;
        }
    }
    int32_t dup = 0;
    if (zkj_has_repeat(out, count, &dup)) {
        return fail_at(d, KP_E_CORRUPT, file, site, "%s names broker %d twice", what, (int)dup);
    }
    *n = count;
    return 0;
}

/* Parses buf[0..len) into a JSON object. */
int zkj_parse(const struct dec *d, const char *buf, size_t len, json_t **out)
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
        return fail(d, KP_E_CORRUPT, "not JSON: %s at byte %d", zkj_q(e.text, strlen(e.text), qb),
                    e.position);
    }
    if (!json_is_object(j)) {
        int rc = fail(d, KP_E_CORRUPT, "%s, not a JSON object", zkj_type_name(j));
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

void zkj_enc_fail(struct enc *e, int rc)
{
    if (e->err == 0) {
        e->err = rc;
    }
}

json_t *zkj_enc_int(struct enc *e, int64_t v)
{
    json_t *j = e->err == 0 ? json_integer((json_int_t)v) : NULL;
    if (j == NULL) {
        zkj_enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

json_t *zkj_enc_strn(struct enc *e, const char *s, size_t n)
{
    if (e->err != 0) {
        return NULL;
    }
    if (!utf8_valid(s, n) || memchr(s, '\0', n) != NULL) {
        zkj_enc_fail(e, KP_E_INVALID_ARG);
        return NULL;
    }
    json_t *j = json_stringn(s, n);
    if (j == NULL) {
        zkj_enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

json_t *zkj_enc_str(struct enc *e, const char *s)
{
    return zkj_enc_strn(e, s, strlen(s));
}

/* A decimal string (Kafka writes longs as strings). */
json_t *zkj_enc_long_str(struct enc *e, int64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%lld", (long long)v);
    if (n <= 0 || (size_t)n >= sizeof b) {
        zkj_enc_fail(e, KP_E_INVALID_ARG);
        return NULL;
    }
    return zkj_enc_strn(e, b, (size_t)n);
}

json_t *zkj_enc_null(struct enc *e)
{
    json_t *j = e->err == 0 ? json_null() : NULL;
    if (j == NULL) {
        zkj_enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

json_t *zkj_enc_object(struct enc *e)
{
    json_t *j = e->err == 0 ? json_object() : NULL;
    if (j == NULL) {
        zkj_enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

json_t *zkj_enc_array(struct enc *e)
{
    json_t *j = e->err == 0 ? json_array() : NULL;
    if (j == NULL) {
        zkj_enc_fail(e, KP_E_NOMEM);
    }
    return j;
}

/* obj[key] = v, v's reference taken (released on any failure). */
void zkj_put(struct enc *e, json_t *obj, const char *key, json_t *v)
{
    if (obj == NULL || v == NULL) {
        zkj_enc_fail(e, KP_E_NOMEM);
        json_decref(v);
        return;
    }
    if (!utf8_valid(key, strlen(key))) {
        zkj_enc_fail(e, KP_E_INVALID_ARG);
        json_decref(v);
        return;
    }
    if (json_object_set_new(obj, key, v) != 0) {
        zkj_enc_fail(e, KP_E_NOMEM);
    }
}

/* arr += v, v's reference taken. */
void zkj_push(struct enc *e, json_t *arr, json_t *v)
{
    if (arr == NULL || v == NULL) {
        zkj_enc_fail(e, KP_E_NOMEM);
        json_decref(v);
        return;
    }
    if (json_array_append_new(arr, v) != 0) {
        zkj_enc_fail(e, KP_E_NOMEM);
    }
}

/* Renders root (released here) as compact JSON into a kp_malloc'd string. */
int zkj_finish(struct enc *e, json_t *root, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (root == NULL) {
        zkj_enc_fail(e, KP_E_NOMEM);
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
int zkj_dup_out(const char *s, size_t n, char **out, size_t *out_len)
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
