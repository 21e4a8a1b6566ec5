/*
 * samsa-broker: what the znode codecs' files share (zk_json_values.c: the
 * messages with their detection sites, reading and writing JSON values in
 * Kafka's types; zk_json.c: brokers, the controller, the cluster id, the
 * producer id block, sequential znodes; zk_json_topics.c: topics, partition
 * states, topic configs, change notifications). Calls go one way: the
 * znode files -> zk_json_values.c. Not for the codecs' users: they include
 * zk_json.h.
 */
#ifndef SAMSA_BROKER_CLUSTER_ZK_JSON_INTERNAL_H
#define SAMSA_BROKER_CLUSTER_ZK_JSON_INTERNAL_H

#include "cluster/zk_json.h"

#include "base/number.h"

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a quoted value in a message, and the buffer q() needs. */
#define QUOTE_BYTES 48
#define QMAX (QUOTE_BYTES * 4 + 8)

/* What a decoder reports to: the data's name and the caller's buffer. */
struct dec {
    const char *name;
    char *err;
    size_t errlen;
};

/* Reports and gives rc: the code stays visible at the call site (the
 * static analysers follow no variadic call). */
#define fail(d, rc, ...) (zkj_report_at((d), __FILE__, __LINE__, __VA_ARGS__), (rc))
#define fail_at(d, rc, file, site, ...) (zkj_report_at((d), (file), (site), __VA_ARGS__), (rc))

/* Kafka's JSON types read, each reporting at its caller's site. */
#define as_int32(d, v, what, min, out)                                                             \
    zkj_as_int32_at((d), (v), (what), (min), (out), __FILE__, __LINE__)

#define get_int32(d, obj, key, min, out)                                                           \
    zkj_get_int32_at((d), (obj), (key), (min), (out), __FILE__, __LINE__)

#define get_string(d, obj, key, required, s, n)                                                    \
    zkj_get_string_at((d), (obj), (key), (required), (s), (n), __FILE__, __LINE__)

#define copy_text(d, what, s, n, allow_empty, dst, cap)                                            \
    zkj_copy_text_at((d), (what), (s), (n), (allow_empty), (dst), (cap), __FILE__, __LINE__)

#define read_id_list(d, arr, what, min_count, max, out, n)                                         \
    zkj_read_id_list_at((d), (arr), (what), (min_count), (max), (out), (n), __FILE__, __LINE__)

/* A document being built. Errors stick: once a step failed the later ones
 * do nothing and finish() reports the first failure. */
struct enc {
    int err;
};

/* zk_json_values.c; the *_at functions report at the site their macros
 * above pass */
int zkj_as_int32_at(const struct dec *d, const json_t *v, const char *what, int32_t min,
                    int32_t *out, const char *file, int site);
int zkj_copy_text_at(const struct dec *d, const char *what, const char *s, size_t n,
                     bool allow_empty, char *dst, size_t cap, const char *file, int site);
int zkj_dup_out(const char *s, size_t n, char **out, size_t *out_len);
json_t *zkj_enc_array(struct enc *e);
void zkj_enc_fail(struct enc *e, int rc);
json_t *zkj_enc_int(struct enc *e, int64_t v);
json_t *zkj_enc_long_str(struct enc *e, int64_t v);
json_t *zkj_enc_null(struct enc *e);
json_t *zkj_enc_object(struct enc *e);
json_t *zkj_enc_str(struct enc *e, const char *s);
json_t *zkj_enc_strn(struct enc *e, const char *s, size_t n);
int zkj_finish(struct enc *e, json_t *root, char **out, size_t *out_len);
int zkj_get_int32_at(const struct dec *d, const json_t *obj, const char *key, int32_t min,
                     int32_t *out, const char *file, int site);
int zkj_get_string_at(const struct dec *d, const json_t *obj, const char *key, bool required,
                      const char **s, size_t *n, const char *file, int site);
bool zkj_has_control_byte(const char *s, size_t n);
bool zkj_has_repeat(const int32_t *v, size_t n, int32_t *dup);
int64_t zkj_lenient_long(const json_t *obj, const char *key);
int zkj_parse(const struct dec *d, const char *buf, size_t len, json_t **out);
void zkj_push(struct enc *e, json_t *arr, json_t *v);
void zkj_put(struct enc *e, json_t *obj, const char *key, json_t *v);
const char *zkj_q(const char *s, size_t n, char *buf);
int zkj_read_id_list_at(const struct dec *d, const json_t *arr, const char *what, size_t min_count,
                        size_t max, int32_t *out, size_t *n, const char *file, int site);
__attribute__((format(printf, 4, 5))) void zkj_report_at(const struct dec *d, const char *file,
                                                         int site, const char *fmt, ...);
const char *zkj_type_name(const json_t *v);

#endif
