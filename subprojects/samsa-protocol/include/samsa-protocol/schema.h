/*
 * samsa-protocol: message descriptors and the one codec that walks them.
 *
 * Every Kafka message Samsa speaks is described once in the schema/ descriptions (.kpm). The
 * generator turns each description into a C struct plus a descriptor table
 * (messages.h / messages.c); the functions below decode, encode, compare,
 * print and initialise any message in any supported version from those
 * tables. There is no hand-written codec per version.
 *
 * Decoded messages point into the reader's buffer (strings, bytes, records)
 * and into the arena (arrays): keep both alive while the message is used.
 */
#ifndef SAMSA_PROTOCOL_SCHEMA_H
#define SAMSA_PROTOCOL_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

enum kp_type {
    KP_T_BOOL = 1,
    KP_T_INT8,
    KP_T_INT16,
    KP_T_UINT16,
    KP_T_INT32,
    KP_T_INT64,
    KP_T_FLOAT64,
    KP_T_STRING,
    KP_T_BYTES,
    KP_T_RECORDS,
    KP_T_UUID,
    KP_T_ARRAY, /* of kp_field.elem scalars, or of kp_field.sub structs */
};

/* The in-memory shape of every array field: { T *items; int32_t count; }.
 * count == -1 is a null array. */
struct kp_array_any {
    void *items;
    int32_t count;
};

struct kp_struct_desc;

struct kp_field {
    const char *name;
    uint32_t offset;  /* offsetof() in the parent struct */
    uint8_t type;     /* enum kp_type */
    uint8_t elem;     /* KP_T_ARRAY of scalars: the element type, else 0 */
    int16_t ver_min;  /* the field exists in [ver_min, ver_max] */
    int16_t ver_max;
    int16_t null_min; /* nullable in [null_min, null_max]; min > max: never */
    int16_t null_max;
    int32_t max_count;    /* arrays: largest count accepted from the wire */
    int64_t dflt;         /* integers/bool: the default; strings: 1 = null */
    const struct kp_struct_desc *sub; /* arrays of structs: the element */
};

struct kp_struct_desc {
    const char *name;
    uint32_t size; /* sizeof() the C struct */
    uint32_t nfields;
    const struct kp_field *fields;
};

struct kp_msg_desc {
    const char *name; /* "ProduceRequest" */
    int16_t api_key;
    bool is_request;
    int16_t min_version;
    int16_t max_version;
    int16_t first_flexible; /* INT16_MAX when the API has no flexible version */
    const struct kp_struct_desc *body;
};

/* An entry of the API table (messages.c): what Samsa supports. */
struct kp_api {
    const char *name; /* "Produce" */
    const struct kp_msg_desc *request;
    const struct kp_msg_desc *response;
    int16_t key;
    int16_t min_version;
    int16_t max_version;
    int16_t first_flexible;
};

/* The API table, ascending by key; defined in generated messages.c. */
extern const struct kp_api kp_apis[];
extern const size_t kp_apis_count;

/* The table entry for an API key, or NULL if Samsa does not speak it. */
const struct kp_api *kp_api_find(int16_t key);

static inline bool kp_api_is_flexible(const struct kp_api *api, int16_t version)
{
    return api != NULL && version >= api->first_flexible;
}

/*
 * Decode a whole message body of `version` from `r` into `out` (a zeroed or
 * uninitialised struct of d->body->size bytes). Arrays are allocated from
 * `arena`. The message must use every byte left in `r` (else KP_E_TRAILING).
 * Returns 0, a KP_E_* code (also left in r->err with its detection site), or
 * KP_E_UNSUPPORTED for a version outside the descriptor's range.
 */
KP_MUST_CHECK int kp_msg_decode(const struct kp_msg_desc *d, int16_t version,
                                struct kp_reader *r, struct kp_arena *arena, void *out);

/* Decode as above but leave any bytes after the message in `r`. */
KP_MUST_CHECK int kp_msg_decode_prefix(const struct kp_msg_desc *d, int16_t version,
                                       struct kp_reader *r, struct kp_arena *arena, void *out);

/*
 * Encode `msg` as `version` onto `w`. Fields the version lacks are skipped.
 * A null where the version does not allow one fails with KP_E_INVALID_ARG.
 * Returns 0 or the writer's sticky error.
 */
KP_MUST_CHECK int kp_msg_encode(const struct kp_msg_desc *d, int16_t version,
                                struct kp_writer *w, const void *msg);

/*
 * Zero-copy records: encode as kp_msg_encode, except that a `records` field
 * whose ptr is NULL and len > 0 is written as its length only, and
 * hook->splice(ctx, at, len) is called with the writer position where those
 * len bytes belong. The caller sends them from elsewhere (the broker: from a
 * segment file with sendfile) between w->buf[0..at) and w->buf[at..).
 * Splices are reported in encoding order.
 */
struct kp_splice_hook {
    void (*splice)(void *ctx, size_t at, int32_t len);
    void *ctx;
};

KP_MUST_CHECK int kp_msg_encode_spliced(const struct kp_msg_desc *d, int16_t version,
                                        struct kp_writer *w, const void *msg,
                                        const struct kp_splice_hook *hook);

/* Set every field to its default (as a decoder of a version without it would). */
void kp_msg_init(const struct kp_msg_desc *d, void *msg);

/* True when every field that exists in `version` is equal in a and b. */
bool kp_msg_equal(const struct kp_msg_desc *d, int16_t version, const void *a, const void *b);

/* Append a JSON rendering of the fields of `version` to `out` (bytes as hex,
 * shortened past 64 bytes; records as their size). */
void kp_msg_format(const struct kp_msg_desc *d, int16_t version, const void *msg,
                   struct kp_writer *out);

/* Whether a field exists / may be null in a version. */
static inline bool kp_field_in(const struct kp_field *f, int16_t version)
{
    return version >= f->ver_min && version <= f->ver_max;
}
static inline bool kp_field_nullable(const struct kp_field *f, int16_t version)
{
    return version >= f->null_min && version <= f->null_max;
}

/* Bytes a C value of a scalar type takes (for arrays of scalars). */
size_t kp_type_size(int type);

#endif
