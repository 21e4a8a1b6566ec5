/*
 * fuzz-gen-seeds: writes the seed corpora of the protocol harnesses.
 *
 *   fuzz-gen-seeds CORPUS_DIR [VECTORS_DIR]
 *
 * CORPUS_DIR is fuzz/corpus; its folders request/, response/, roundtrip/,
 * record_batch/ and compress/ are created when missing. For every API and
 * version of the table it writes
 *   request/      gen-<Api>-v<N>-<variant>.bin           a request payload
 *                                                         (header and body)
 *   response/     gen-<Api>-v<N>-<variant>.bin           selector + response
 *                                                         payload
 *   roundtrip/    gen-<Api>{Request,Response}-v<N>-<variant>.bin
 *                                                         selector + body
 * in the variants
 *   full    every field set, arrays of two elements, a record batch in Records
 *   nulls   as full, but each field the version lets be null is null
 *   tags    (flexible versions) full, with an unknown tagged field at the end
 * and, built with kp_batch_builder and the codecs,
 *   record_batch/ gen-*.bin   batches of every codec, control, transactional,
 *                             transaction markers (gen-txn-*),
 *                             log-append-time and compacted batches, segments
 *   compress/     gen-*.bin   codec byte + compressed bytes of every codec and
 *                             framing, and bombs past the harness's ceiling.
 * With VECTORS_DIR (tests/protocol/vectors: <client>/<frame>.bin files, each
 * holding whole frames), every captured frame also gives
 *   request/      vec-<client>-<frame>.bin    its payload
 *   roundtrip/    vec-<client>-<frame>.bin    selector + body
 *   record_batch/ vec-<client>-<frame>-<k>.bin  each Records field's bytes
 *   compress/     vec-<client>-<frame>-<k>.bin  each compressed records block
 *
 * Every message seed is decoded again before it is written; one that does
 * not decode is reported and makes the exit status 1. The output is
 * deterministic for given codec libraries: rerun after a codec change and
 * commit the difference.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/compress.h>
#include <samsa-protocol/control.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/legacy.h>
#include <samsa-protocol/record_batch.h>
#include <samsa-protocol/schema.h>

#include "base/logging.h"
#include "cluster/metadata.h"
#include "group/records.h"
#include "storage/checkpoint.h"
#include "storage/log.h"
#include "storage/segment.h"

#define RESPONSE_BIT 0x8000u
#define MAX_SEED ((size_t)16 * 1024 * 1024)
/* Nesting below this depth gets empty arrays: seeds stay small. */
#define MAX_FILL_DEPTH 4

enum variant {
    V_FULL,
    V_NULLS,
    V_TAGS,
};

static const char *const variant_names[] = {"full", "nulls", "tags"};

/* What went wrong, counted; the exit status is 1 when not 0. */
struct gen {
    const char *dir;
    int failures;
    long written;
    struct kp_bytes records; /* the batch put in every Records field */
};

static void fail(struct gen *g, const char *what, const char *name, int code)
{
    (void)fprintf(stderr, "fuzz-gen-seeds: %s: %s (%s)\n", name, what, kp_err_name(code));
    g->failures++;
}

/* ------------------------------------------------------------- output */

static void make_dir(struct gen *g, const char *sub)
{
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/%s", g->dir, sub);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        (void)fprintf(stderr, "fuzz-gen-seeds: %s: %s\n", path, strerror(errno));
        g->failures++;
    }
}

static void write_seed(struct gen *g, const char *sub, const char *name, const uint8_t *a,
                       size_t alen, const uint8_t *b, size_t blen)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s/%s", g->dir, sub, name);
    if (n < 0 || (size_t)n >= sizeof path) {
        fail(g, "path too long", name, 0);
        return;
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        (void)fprintf(stderr, "fuzz-gen-seeds: %s: %s\n", path, strerror(errno));
        g->failures++;
        return;
    }
    bool ok = (alen == 0 || fwrite(a, 1, alen, f) == alen) &&
              (blen == 0 || fwrite(b, 1, blen, f) == blen);
    if (fclose(f) != 0 || !ok) {
        (void)fprintf(stderr, "fuzz-gen-seeds: %s: write failed\n", path);
        g->failures++;
        return;
    }
    g->written++;
}

static void selector(uint8_t sel[4], int16_t key, uint16_t version)
{
    kp_store_be16(sel, (uint16_t)key);
    kp_store_be16(sel + 2, version);
}

/* ------------------------------------------------------------- filling */

struct fill {
    struct kp_arena *arena;
    int16_t version;
    bool nulls;
    struct kp_bytes records;
};

static const char *const strings[] = {"samsa-vectors", "samsa",   "rdkafka",
                                      "kafka-python",  "kafkajs", "consumer"};
static const uint8_t some_bytes[] = {0x00, 0x01, 0x02, 0x03, 0xde, 0xad, 0xbe, 0xef};

static void set_int(void *p, int type, int64_t v)
{
    switch (type) {
    case KP_T_INT8: {
        int8_t x = (int8_t)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case KP_T_INT16: {
        int16_t x = (int16_t)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case KP_T_UINT16: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case KP_T_INT32: {
        int32_t x = (int32_t)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case KP_T_INT64:
        memcpy(p, &v, sizeof v);
        break;
    default:
        break;
    }
}

/* Stores the n-th sample value of `type` at p. */
static void fill_value(int type, const struct kp_field *f, const struct fill *fl, void *p,
                       int64_t n)
{
    bool null = fl->nulls && kp_field_nullable(f, fl->version);
    switch (type) {
    case KP_T_BOOL: {
        bool b = true;
        memcpy(p, &b, sizeof b);
        break;
    }
    case KP_T_INT8:
    case KP_T_INT16:
    case KP_T_UINT16:
    case KP_T_INT32:
    case KP_T_INT64:
        set_int(p, type, n);
        break;
    case KP_T_FLOAT64: {
        double d = 0.5 + (double)n;
        memcpy(p, &d, sizeof d);
        break;
    }
    case KP_T_UUID: {
        struct kp_uuid u;
        for (size_t i = 0; i < sizeof u.b; i++) {
            u.b[i] = (uint8_t)(i * 17 + (size_t)n);
        }
        memcpy(p, &u, sizeof u);
        break;
    }
    case KP_T_STRING: {
        size_t count = sizeof strings / sizeof strings[0];
        struct kp_str s = null ? KP_STR_NULL : kp_str_c(strings[(size_t)n % count]);
        memcpy(p, &s, sizeof s);
        break;
    }
    case KP_T_BYTES: {
        struct kp_bytes b = {some_bytes, (int32_t)sizeof some_bytes};
        if (null) {
            b = KP_BYTES_NULL;
        }
        memcpy(p, &b, sizeof b);
        break;
    }
    case KP_T_RECORDS: {
        struct kp_bytes b = null ? KP_BYTES_NULL : fl->records;
        memcpy(p, &b, sizeof b);
        break;
    }
    default:
        break;
    }
}

/* Sets every field of `version` in base; returns false when the arena is
 * full. */
static bool fill_struct(const struct kp_struct_desc *s, const struct fill *fl, void *base,
                        int depth)
{
    for (uint32_t i = 0; i < s->nfields; i++) {
        const struct kp_field *f = &s->fields[i];
        if (!kp_field_in(f, fl->version)) {
            continue;
        }
        void *p = (uint8_t *)base + f->offset;
        if (f->type != KP_T_ARRAY) {
            fill_value(f->type, f, fl, p, (int64_t)i + 1);
            continue;
        }
        struct kp_array_any arr = {NULL, 0};
        if (fl->nulls && kp_field_nullable(f, fl->version)) {
            arr.count = -1;
        } else if (depth < MAX_FILL_DEPTH) {
            size_t esize = f->sub != NULL ? f->sub->size : kp_type_size(f->elem);
            arr.count = 2;
            arr.items = kp_arena_alloc(fl->arena, 2 * esize);
            if (arr.items == NULL) {
                return false;
            }
            for (int32_t j = 0; j < arr.count; j++) {
                void *item = (uint8_t *)arr.items + (size_t)j * esize;
                if (f->sub != NULL) {
                    if (!fill_struct(f->sub, fl, item, depth + 1)) {
                        return false;
                    }
                } else {
                    fill_value(f->elem, f, fl, item, (int64_t)j + 1);
                }
            }
        }
        memcpy(p, &arr, sizeof arr);
    }
    return true;
}

/* A message of `d` in `version` for `variant`, in the arena; NULL when the
 * arena is full. */
static void *make_message(const struct kp_msg_desc *d, int16_t version, enum variant v,
                          struct kp_arena *arena, struct kp_bytes records)
{
    void *msg = kp_arena_alloc(arena, d->body->size);
    if (msg == NULL) {
        return NULL;
    }
    kp_msg_init(d, msg);
    struct fill fl = {arena, version, v == V_NULLS, records};
    return fill_struct(d->body, &fl, msg, 0) ? msg : NULL;
}

/* The last byte of a flexible body is its (empty) top-level tag section:
 * replace it with one unknown tag (tag 5, two bytes), which decoders skip. */
static bool add_unknown_tag(struct kp_writer *w)
{
    static const uint8_t tags[] = {0x01, 0x05, 0x02, 'h', 'i'};
    if (w->err != 0 || w->len == 0 || w->buf[w->len - 1] != 0) {
        return false;
    }
    w->len--;
    kp_wr_raw(w, tags, sizeof tags);
    return w->err == 0;
}

/* ------------------------------------------------------------- messages */

static void gen_request(struct gen *g, const struct kp_api *api, int16_t version, enum variant v,
                        const char *name)
{
    struct kp_arena arena;
    struct kp_arena check;
    struct kp_writer w;
    struct kp_writer body;
    kp_arena_init(&arena, (size_t)1024 * 1024);
    kp_arena_init(&check, (size_t)1024 * 1024);
    kp_wr_init(&w, MAX_SEED);
    kp_wr_init(&body, MAX_SEED);
    void *msg = make_message(api->request, version, v, &arena, g->records);
    if (msg == NULL) {
        fail(g, "the arena cannot hold the message", name, KP_E_NOMEM);
        goto out_free;
    }
    struct kp_request_header h = {api->key, version, 7, kp_str_c("samsa")};
    int rc = kp_request_encode(&w, &h, msg);
    int rc2 = kp_msg_encode(api->request, version, &body, msg);
    if (rc != 0 || rc2 != 0) {
        fail(g, "the request does not encode", name, rc != 0 ? rc : rc2);
        goto out_free;
    }
    if (v == V_TAGS && (!add_unknown_tag(&w) || !add_unknown_tag(&body))) {
        fail(g, "the request does not end with a tag section", name, 0);
        goto out_free;
    }
    struct kp_request req;
    rc = kp_request_decode(w.buf + 4, w.len - 4, &check, &req);
    if (rc != 0) {
        fail(g, "the encoded request does not decode", name, rc);
        goto out_free;
    }
    uint8_t sel[4];
    char file[256];
    (void)snprintf(file, sizeof file, "gen-%s-v%d-%s.bin", api->name, version, variant_names[v]);
    write_seed(g, "request", file, w.buf + 4, w.len - 4, NULL, 0);
    selector(sel, api->key, (uint16_t)version);
    (void)snprintf(file, sizeof file, "gen-%sRequest-v%d-%s.bin", api->name, version,
                   variant_names[v]);
    write_seed(g, "roundtrip", file, sel, sizeof sel, body.buf, body.len);

out_free:
    kp_wr_free(&body);
    kp_wr_free(&w);
    kp_arena_free(&check);
    kp_arena_free(&arena);
}

static void gen_response(struct gen *g, const struct kp_api *api, int16_t version, enum variant v,
                         const char *name)
{
    struct kp_arena arena;
    struct kp_arena check;
    struct kp_writer w;
    struct kp_writer body;
    kp_arena_init(&arena, (size_t)1024 * 1024);
    kp_arena_init(&check, (size_t)1024 * 1024);
    kp_wr_init(&w, MAX_SEED);
    kp_wr_init(&body, MAX_SEED);
    void *msg = make_message(api->response, version, v, &arena, g->records);
    if (msg == NULL) {
        fail(g, "the arena cannot hold the message", name, KP_E_NOMEM);
        goto out_free;
    }
    int rc = kp_response_encode(&w, api->key, version, 7, msg);
    int rc2 = kp_msg_encode(api->response, version, &body, msg);
    if (rc != 0 || rc2 != 0) {
        fail(g, "the response does not encode", name, rc != 0 ? rc : rc2);
        goto out_free;
    }
    if (v == V_TAGS && (!add_unknown_tag(&w) || !add_unknown_tag(&body))) {
        fail(g, "the response does not end with a tag section", name, 0);
        goto out_free;
    }
    struct kp_response_header h;
    void *decoded = NULL;
    rc = kp_response_decode(w.buf + 4, w.len - 4, api->key, version, &check, &h, &decoded);
    if (rc != 0) {
        fail(g, "the encoded response does not decode", name, rc);
        goto out_free;
    }
    uint8_t sel[4];
    char file[256];
    selector(sel, api->key, (uint16_t)version);
    (void)snprintf(file, sizeof file, "gen-%s-v%d-%s.bin", api->name, version, variant_names[v]);
    write_seed(g, "response", file, sel, sizeof sel, w.buf + 4, w.len - 4);
    selector(sel, api->key, (uint16_t)((uint16_t)version | RESPONSE_BIT));
    (void)snprintf(file, sizeof file, "gen-%sResponse-v%d-%s.bin", api->name, version,
                   variant_names[v]);
    write_seed(g, "roundtrip", file, sel, sizeof sel, body.buf, body.len);

out_free:
    kp_wr_free(&body);
    kp_wr_free(&w);
    kp_arena_free(&check);
    kp_arena_free(&arena);
}

static void gen_messages(struct gen *g)
{
    for (size_t i = 0; i < kp_apis_count; i++) {
        const struct kp_api *api = &kp_apis[i];
        for (int16_t version = api->min_version; version <= api->max_version; version++) {
            for (int v = V_FULL; v <= V_TAGS; v++) {
                if (v == V_TAGS && !kp_api_is_flexible(api, version)) {
                    continue;
                }
                char name[128];
                (void)snprintf(name, sizeof name, "%s v%d %s", api->name, version,
                               variant_names[v]);
                gen_request(g, api, version, (enum variant)v, name);
                gen_response(g, api, version, (enum variant)v, name);
            }
        }
    }
}

/* ------------------------------------------------------------- batches */

enum batch_kind {
    B_PLAIN,
    B_TRANSACTIONAL,
    B_CONTROL,
    B_LOG_APPEND_TIME,
    B_COMPACTED, /* offset gaps, LastOffsetDelta past the last record */
    B_EMPTY,     /* every record compacted away */
};

static const char sample_text[] = "samsa record payload samsa record payload samsa record payload";

/* Appends one batch of `kind` to out; returns 0 or an error code. */
static int build_batch(struct kp_writer *out, int codec, int64_t base_offset, enum batch_kind kind,
                       int nrec)
{
    struct kp_batch_builder b;
    int rc = kp_batch_builder_init(&b, codec, base_offset, INT64_C(1700000000000), 4242, 3,
                                   (int32_t)base_offset, (size_t)1024 * 1024);
    if (rc != 0) {
        goto out_free;
    }
    if (kind == B_TRANSACTIONAL || kind == B_CONTROL) {
        kp_batch_builder_set_flags(&b, true, kind == B_CONTROL);
    }
    if (kind == B_LOG_APPEND_TIME) {
        kp_batch_builder_set_timestamp_type(&b, KP_TS_LOG_APPEND_TIME);
    }
    kp_batch_builder_set_leader_epoch(&b, 5);
    if (kind == B_COMPACTED || kind == B_EMPTY) {
        kp_batch_builder_set_last_offset_delta(&b, 3 * nrec + 1);
    }
    if (kind == B_CONTROL) {
        /* an end-transaction marker: key {version 0, type 1 (commit)},
         * value {version 0, coordinator epoch 5} */
        static const uint8_t key[] = {0, 0, 0, 1};
        static const uint8_t value[] = {0, 0, 0, 0, 0, 5};
        struct kp_bytes k = {key, (int32_t)sizeof key};
        struct kp_bytes v = {value, (int32_t)sizeof value};
        rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, INT64_C(1700000000000), k, v, NULL, 0);
        if (rc != 0) {
            goto out_free;
        }
        nrec = 0;
    }
    if (kind == B_EMPTY) {
        nrec = 0;
    }
    for (int i = 0; i < nrec; i++) {
        char key[32];
        char value[160];
        int klen = snprintf(key, sizeof key, "samsa-%s-%d", kp_codec_name(codec), i);
        int vlen = snprintf(value, sizeof value, "record %d %s", i, sample_text);
        struct kp_bytes k = {(const uint8_t *)key, klen};
        struct kp_bytes v = {(const uint8_t *)value, vlen};
        if (i == 1) {
            k = KP_BYTES_NULL;
        }
        struct kp_record_header hdrs[2] = {
            {kp_str_c("samsa-header"),
             {(const uint8_t *)kp_codec_name(codec), (int32_t)strlen(kp_codec_name(codec))}},
            {kp_str_c("null-value"), KP_BYTES_NULL},
        };
        size_t nh = (size_t)(i % 3);
        int32_t delta = kind == B_COMPACTED ? 3 * i + 1 : KP_OFFSET_DELTA_AUTO;
        rc = kp_batch_builder_add(&b, delta, INT64_C(1700000000000) + (int64_t)i * 7, k, v, hdrs,
                                  nh);
        if (rc != 0) {
            goto out_free;
        }
    }
    rc = kp_batch_builder_finish(&b, out);

out_free:
    kp_batch_builder_free(&b);
    return rc;
}

/* A MessageSet v1 entry (legacy magic 1): what old segments hold. */
static void legacy_message(struct kp_writer *w, int64_t offset)
{
    static const char value[] = "legacy";
    size_t at = w->len;
    kp_wr_i64(w, offset);
    kp_wr_i32(w, 0); /* size, patched */
    kp_wr_u32(w, 0); /* CRC, patched */
    kp_wr_i8(w, 1);  /* magic */
    kp_wr_i8(w, 0);  /* attributes */
    kp_wr_i64(w, INT64_C(1700000000000));
    kp_wr_i32(w, -1); /* null key */
    kp_wr_i32(w, (int32_t)(sizeof value - 1));
    kp_wr_raw(w, value, sizeof value - 1);
    if (w->err == 0) {
        kp_wr_patch_i32(w, at + 8, (int32_t)(w->len - at - 12));
        uint32_t crc = kp_crc32(0, w->buf + at + 16, w->len - at - 16);
        kp_store_be32(w->buf + at + 12, crc);
    }
}

static void gen_batches(struct gen *g)
{
    struct kp_writer w;
    char file[128];
    for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_MAX; codec++) {
        kp_wr_init(&w, MAX_SEED);
        int rc = build_batch(&w, codec, 0, B_PLAIN, 5);
        (void)snprintf(file, sizeof file, "gen-%s.bin", kp_codec_name(codec));
        if (rc != 0) {
            fail(g, "the batch does not build", file, rc);
        } else {
            write_seed(g, "record_batch", file, w.buf, w.len, NULL, 0);
        }
        kp_wr_free(&w);
    }

    static const struct {
        const char *name;
        enum batch_kind kind;
        int codec;
    } kinds[] = {
        {"transactional", B_TRANSACTIONAL, KP_CODEC_NONE},
        {"control", B_CONTROL, KP_CODEC_NONE},
        {"log-append-time", B_LOG_APPEND_TIME, KP_CODEC_LZ4},
        {"compacted", B_COMPACTED, KP_CODEC_NONE},
        {"compacted-zstd", B_COMPACTED, KP_CODEC_ZSTD},
        {"empty", B_EMPTY, KP_CODEC_NONE},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        kp_wr_init(&w, MAX_SEED);
        int rc = build_batch(&w, kinds[i].codec, 100, kinds[i].kind, 4);
        (void)snprintf(file, sizeof file, "gen-%s.bin", kinds[i].name);
        if (rc != 0) {
            fail(g, "the batch does not build", file, rc);
        } else {
            write_seed(g, "record_batch", file, w.buf, w.len, NULL, 0);
        }
        kp_wr_free(&w);
    }

    /* transaction markers as a leader writes them (control.h): an ABORT
     * alone, and a segment of a committed and an aborted transaction of one
     * producer, each batch followed by its marker */
    static const struct kp_txn_marker abort_marker = {KP_CONTROL_ABORT, 7};
    static const struct kp_txn_marker commit_marker = {KP_CONTROL_COMMIT, 7};
    kp_wr_init(&w, MAX_SEED);
    int rc = kp_txn_marker_batch_write(&w, 100, 5, INT64_C(1700000000000), 4242, 3, &abort_marker);
    if (rc != 0) {
        fail(g, "the marker does not build", "gen-txn-abort.bin", rc);
    } else {
        write_seed(g, "record_batch", "gen-txn-abort.bin", w.buf, w.len, NULL, 0);
    }
    kp_wr_free(&w);
    kp_wr_init(&w, MAX_SEED);
    rc = build_batch(&w, KP_CODEC_NONE, 0, B_TRANSACTIONAL, 3);
    if (rc == 0) {
        rc = kp_txn_marker_batch_write(&w, 3, 5, INT64_C(1700000000000), 4242, 3, &commit_marker);
    }
    if (rc == 0) {
        rc = build_batch(&w, KP_CODEC_ZSTD, 4, B_TRANSACTIONAL, 2);
    }
    if (rc == 0) {
        rc = kp_txn_marker_batch_write(&w, 6, 5, INT64_C(1700000000000), 4242, 3, &abort_marker);
    }
    if (rc != 0) {
        fail(g, "the transactions' segment does not build", "gen-txn-segment.bin", rc);
    } else {
        write_seed(g, "record_batch", "gen-txn-segment.bin", w.buf, w.len, NULL, 0);
    }
    kp_wr_free(&w);

    /* a segment: batches of several codecs at increasing offsets */
    kp_wr_init(&w, MAX_SEED);
    rc = 0;
    int64_t next = 0;
    for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_MAX && rc == 0; codec++) {
        rc = build_batch(&w, codec, next, B_PLAIN, 3);
        next += 3;
    }
    if (rc == 0) {
        rc = build_batch(&w, KP_CODEC_NONE, next, B_COMPACTED, 2);
    }
    if (rc != 0) {
        fail(g, "the segment does not build", "gen-segment.bin", rc);
    } else {
        write_seed(g, "record_batch", "gen-segment.bin", w.buf, w.len, NULL, 0);
        /* the same segment torn in its last batch, as a crash leaves it */
        write_seed(g, "record_batch", "gen-segment-torn.bin", w.buf, w.len - 20, NULL, 0);
    }
    kp_wr_free(&w);

    /* a segment written before and after an upgrade: legacy, then v2 */
    kp_wr_init(&w, MAX_SEED);
    legacy_message(&w, 0);
    legacy_message(&w, 1);
    rc = build_batch(&w, KP_CODEC_GZIP, 2, B_PLAIN, 2);
    if (rc != 0 || w.err != 0) {
        fail(g, "the legacy segment does not build", "gen-legacy-then-v2.bin", rc);
    } else {
        write_seed(g, "record_batch", "gen-legacy-then-v2.bin", w.buf, w.len, NULL, 0);
    }
    kp_wr_free(&w);

    /* Produce v0-v2 message sets of magic 0 and 1, plain and in a wrapper of
     * each legacy codec (magic-0 lz4 with Kafka's header checksum): the
     * broker's own down-conversion of a batch, as Fetch v0-v3 sends it */
    for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_LZ4; codec++) {
        for (int8_t magic = 0; magic <= 1; magic++) {
            struct kp_writer batch;
            kp_wr_init(&batch, MAX_SEED);
            kp_wr_init(&w, MAX_SEED);
            int32_t count = 0;
            (void)snprintf(file, sizeof file, "gen-legacy-v%d-%s.bin", magic, kp_codec_name(codec));
            rc = build_batch(&batch, codec, 0, B_PLAIN, 5);
            if (rc == 0) {
                rc = kp_legacy_downconvert(batch.buf, batch.len, magic, 0, MAX_SEED, &w, &count);
            }
            if (rc != 0) {
                fail(g, "the message set does not build", file, rc);
            } else {
                write_seed(g, "record_batch", file, w.buf, w.len, NULL, 0);
            }
            kp_wr_free(&w);
            kp_wr_free(&batch);
        }
    }
}

/* ------------------------------------------------------------- codecs */

static void write_compressed(struct gen *g, const char *file, int codec, const uint8_t *p, size_t n)
{
    uint8_t c = (uint8_t)codec;
    write_seed(g, "compress", file, &c, 1, p, n);
}

static void gen_compress(struct gen *g)
{
    /* a records block, as the codecs meet it in batches */
    struct kp_writer batch;
    struct kp_writer out;
    struct kp_writer out2;
    kp_wr_init(&batch, MAX_SEED);
    int rc = build_batch(&batch, KP_CODEC_NONE, 0, B_PLAIN, 6);
    if (rc != 0) {
        fail(g, "the sample batch does not build", "compress", rc);
        kp_wr_free(&batch);
        return;
    }
    const uint8_t *block = batch.buf + KP_BATCH_HEADER_SIZE;
    size_t block_len = batch.len - KP_BATCH_HEADER_SIZE;
    char file[128];

    for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_MAX; codec++) {
        kp_wr_init(&out, MAX_SEED);
        rc = kp_compress(codec, block, block_len, &out);
        (void)snprintf(file, sizeof file, "gen-%s.bin", kp_codec_name(codec));
        if (rc != 0) {
            fail(g, "kp_compress failed", file, rc);
        } else {
            write_compressed(g, file, codec, out.buf, out.len);
        }
        kp_wr_free(&out);
    }

    /* xerial/snappy-java framing, two chunks, version fields big- and
     * little-endian (some writers store them so) */
    static const uint8_t magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    for (int le = 0; le <= 1; le++) {
        kp_wr_init(&out, MAX_SEED);
        kp_wr_init(&out2, MAX_SEED);
        kp_wr_raw(&out, magic, sizeof magic);
        kp_wr_u32(&out, le ? 0x01000000u : 1u);
        kp_wr_u32(&out, le ? 0x01000000u : 1u);
        size_t half = block_len / 2;
        for (int chunk = 0; chunk < 2; chunk++) {
            kp_wr_reset(&out2);
            const uint8_t *p = chunk == 0 ? block : block + half;
            size_t n = chunk == 0 ? half : block_len - half;
            rc = kp_compress(KP_CODEC_SNAPPY, p, n, &out2);
            if (rc != 0) {
                break;
            }
            kp_wr_i32(&out, (int32_t)out2.len);
            kp_wr_raw(&out, out2.buf, out2.len);
        }
        const char *name = le ? "gen-snappy-xerial-le.bin" : "gen-snappy-xerial.bin";
        if (rc != 0 || out.err != 0) {
            fail(g, "the xerial stream does not build", name, rc);
        } else {
            write_compressed(g, name, KP_CODEC_SNAPPY, out.buf, out.len);
        }
        kp_wr_free(&out2);
        kp_wr_free(&out);
    }

    /* gzip: two concatenated members, and a bare zlib stream */
    kp_wr_init(&out, MAX_SEED);
    rc = kp_compress(KP_CODEC_GZIP, block, block_len / 2, &out);
    if (rc == 0) {
        rc = kp_compress(KP_CODEC_GZIP, block + block_len / 2, block_len - block_len / 2, &out);
    }
    if (rc != 0) {
        fail(g, "the gzip members do not build", "gen-gzip-members.bin", rc);
    } else {
        write_compressed(g, "gen-gzip-members.bin", KP_CODEC_GZIP, out.buf, out.len);
    }
    kp_wr_free(&out);

    uLongf zlen = compressBound((uLong)block_len);
    uint8_t *z = malloc(zlen);
    if (z == NULL || compress2(z, &zlen, block, (uLong)block_len, 6) != Z_OK) {
        fail(g, "the zlib stream does not build", "gen-gzip-zlib.bin", 0);
    } else {
        write_compressed(g, "gen-gzip-zlib.bin", KP_CODEC_GZIP, z, zlen);
    }
    free(z);

    /* bombs: 2 MiB of zeros, past the harness's 1 MiB ceiling, and exactly
     * 1 MiB, at it */
    static const struct {
        int codec;
        size_t n;
        const char *name;
    } bombs[] = {
        {KP_CODEC_GZIP, 2u << 20, "gen-gzip-bomb.bin"},
        {KP_CODEC_LZ4, 2u << 20, "gen-lz4-bomb.bin"},
        {KP_CODEC_ZSTD, 2u << 20, "gen-zstd-bomb.bin"},
        {KP_CODEC_ZSTD, 1u << 20, "gen-zstd-at-ceiling.bin"},
    };
    uint8_t *zeros = calloc(2u << 20, 1);
    for (size_t i = 0; zeros != NULL && i < sizeof bombs / sizeof bombs[0]; i++) {
        kp_wr_init(&out, MAX_SEED);
        rc = kp_compress(bombs[i].codec, zeros, bombs[i].n, &out);
        if (rc != 0) {
            fail(g, "the bomb does not build", bombs[i].name, rc);
        } else {
            write_compressed(g, bombs[i].name, bombs[i].codec, out.buf, out.len);
        }
        kp_wr_free(&out);
    }
    free(zeros);

    /* raw snappy that claims 2 GiB of output */
    static const uint8_t liar[] = {0xff, 0xff, 0xff, 0xff, 0x07, 0x00, 'h', 'i'};
    write_compressed(g, "gen-snappy-claims-2g.bin", KP_CODEC_SNAPPY, liar, sizeof liar);
    kp_wr_free(&batch);
}

/* ------------------------------------------------------------- vectors */

/* Calls out for every Records field of a decoded message. */
static void find_records(const struct kp_struct_desc *s, int16_t version, const void *base,
                         int depth, struct kp_bytes *found, size_t max, size_t *n)
{
    if (depth > 16) {
        return;
    }
    for (uint32_t i = 0; i < s->nfields; i++) {
        const struct kp_field *f = &s->fields[i];
        if (!kp_field_in(f, version)) {
            continue;
        }
        const uint8_t *p = (const uint8_t *)base + f->offset;
        if (f->type == KP_T_RECORDS && *n < max) {
            memcpy(&found[*n], p, sizeof found[*n]);
            if (found[*n].len > 0) {
                (*n)++;
            }
        } else if (f->type == KP_T_ARRAY && f->sub != NULL) {
            struct kp_array_any arr;
            memcpy(&arr, p, sizeof arr);
            for (int32_t j = 0; j < arr.count; j++) {
                const uint8_t *item = (const uint8_t *)arr.items + (size_t)j * f->sub->size;
                find_records(f->sub, version, item, depth + 1, found, max, n);
            }
        }
    }
}

static void gen_from_frame(struct gen *g, const char *stem, const uint8_t *payload, size_t len)
{
    char file[512];
    (void)snprintf(file, sizeof file, "vec-%s.bin", stem);
    write_seed(g, "request", file, payload, len, NULL, 0);

    struct kp_reader r;
    struct kp_request_header h;
    int16_t hv = 0;
    kp_rd_init(&r, payload, len);
    int rc = kp_request_header_decode(&r, &h, &hv);
    if (rc != 0) {
        fail(g, "the captured header does not decode", stem, rc);
        return;
    }
    uint8_t sel[4];
    selector(sel, h.RequestApiKey, (uint16_t)h.RequestApiVersion);
    write_seed(g, "roundtrip", file, sel, sizeof sel, payload + r.off, len - r.off);

    struct kp_arena arena;
    kp_arena_init(&arena, 64 * len + (size_t)64 * 1024);
    struct kp_request req;
    rc = kp_request_decode(payload, len, &arena, &req);
    if (rc != 0) {
        fail(g, "the captured request does not decode", stem, rc);
        kp_arena_free(&arena);
        return;
    }
    struct kp_bytes found[16];
    size_t n = 0;
    find_records(req.api->request->body, h.RequestApiVersion, req.body, 0, found, 16, &n);
    for (size_t i = 0; i < n; i++) {
        (void)snprintf(file, sizeof file, "vec-%s-%zu.bin", stem, i);
        write_seed(g, "record_batch", file, found[i].ptr, (size_t)found[i].len, NULL, 0);
        struct kp_batch_header bh;
        size_t bs = 0;
        if (kp_batch_parse_lenient(found[i].ptr, (size_t)found[i].len, &bh, &bs) == 0 &&
            kp_batch_codec(&bh) != KP_CODEC_NONE) {
            write_compressed(g, file, kp_batch_codec(&bh), found[i].ptr + KP_BATCH_HEADER_SIZE,
                             bs - KP_BATCH_HEADER_SIZE);
        }
    }
    kp_arena_free(&arena);
}

static int skip_dot_files(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

static void gen_vector_file(struct gen *g, const char *client, const char *path, const char *name)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        (void)fprintf(stderr, "fuzz-gen-seeds: %s: %s\n", path, strerror(errno));
        g->failures++;
        return;
    }
    uint8_t *buf = malloc(MAX_SEED);
    size_t len = buf != NULL ? fread(buf, 1, MAX_SEED, f) : 0;
    (void)fclose(f);
    size_t off = 0;
    int frame = 0;
    while (buf != NULL && off < len) {
        int32_t size = 0;
        int rc = kp_frame_size(buf + off, len - off, INT32_MAX, &size);
        if (rc != 0 || (size_t)size > len - off - 4) {
            fail(g, "not a whole frame", path, rc);
            break;
        }
        char stem[400];
        size_t nlen = strlen(name);
        int base = (int)(nlen > 4 && strcmp(name + nlen - 4, ".bin") == 0 ? nlen - 4 : nlen);
        if (frame == 0) {
            (void)snprintf(stem, sizeof stem, "%s-%.*s", client, base, name);
        } else {
            (void)snprintf(stem, sizeof stem, "%s-%.*s-%d", client, base, name, frame);
        }
        gen_from_frame(g, stem, buf + off + 4, (size_t)size);
        off += 4 + (size_t)size;
        frame++;
    }
    free(buf);
}

static void gen_vectors(struct gen *g, const char *dir)
{
    struct dirent **clients = NULL;
    int nc = scandir(dir, &clients, skip_dot_files, alphasort);
    if (nc < 0) {
        (void)fprintf(stderr, "fuzz-gen-seeds: %s: %s\n", dir, strerror(errno));
        g->failures++;
        return;
    }
    for (int i = 0; i < nc; i++) {
        char cdir[2048];
        struct stat st;
        (void)snprintf(cdir, sizeof cdir, "%s/%s", dir, clients[i]->d_name);
        struct dirent **files = NULL;
        int nf = stat(cdir, &st) == 0 && S_ISDIR(st.st_mode)
                     ? scandir(cdir, &files, skip_dot_files, alphasort)
                     : 0;
        for (int j = 0; j < nf; j++) {
            const char *name = files[j]->d_name;
            size_t nlen = strlen(name);
            if (nlen > 4 && strcmp(name + nlen - 4, ".bin") == 0) {
                char path[4096];
                (void)snprintf(path, sizeof path, "%s/%s", cdir, name);
                gen_vector_file(g, clients[i]->d_name, path, name);
            }
            free(files[j]);
        }
        free(files);
        free(clients[i]);
    }
    free(clients);
}

/* ------------------------------------------------------------- broker */

/* Text of `len` bytes with the first `from` replaced by `to` written as a
 * seed; a `from` that is not there is a bug of this generator. */
static void write_edited(struct gen *g, const char *sub, const char *name, const char *text,
                         size_t len, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (at == NULL || (size_t)(at - text) >= len) {
        fail(g, "the text to damage is not there", name, 0);
        return;
    }
    size_t head = (size_t)(at - text);
    size_t flen = strlen(from);
    size_t tlen = strlen(to);
    size_t n = len - flen + tlen;
    uint8_t *buf = malloc(n + 1);
    if (buf == NULL) {
        fail(g, "out of memory", name, KP_E_NOMEM);
        return;
    }
    memcpy(buf, text, head);
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): bytes, not a C string */
    memcpy(buf + head, to, tlen);
    memcpy(buf + head + tlen, at + flen, len - head - flen);
    write_seed(g, sub, name, buf, n, NULL, 0);
    free(buf);
}

/* The text with every "\n" made "\r\n". */
static void write_crlf(struct gen *g, const char *sub, const char *name, const char *text,
                       size_t len)
{
    uint8_t *buf = malloc(2 * len + 1);
    if (buf == NULL) {
        fail(g, "out of memory", name, KP_E_NOMEM);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            buf[n++] = '\r';
        }
        buf[n++] = (uint8_t)text[i];
    }
    write_seed(g, sub, name, buf, n, NULL, 0);
    free(buf);
}

/* ---- metadata_file: the standalone broker's metadata, as it writes it */

#define META_MAX_REPLICAS 64

struct meta_topic {
    const char *name;
    int32_t partitions;
    int16_t rf;
    int32_t first_broker; /* replicas rotate over brokers first..first+brokers-1 */
    int32_t brokers;
    const char *const *configs; /* key, value, key, value, ..., NULL */
};

static const char *const offsets_configs[] = {
    "cleanup.policy", "compact", "segment.bytes", "104857600", "compression.type",
    "producer",       NULL};
static const char *const payments_configs[] = {"min.insync.replicas",
                                               "2",
                                               "retention.ms",
                                               "604800000",
                                               "cleanup.policy",
                                               "compact,delete",
                                               "message.timestamp.type",
                                               "LogAppendTime",
                                               "leader.replication.throttled.replicas",
                                               "0:1,1:2",
                                               NULL};
static const char *const odd_configs[] = {"retention.bytes",
                                          "-1",
                                          "x-samsa.note",
                                          "100% \"quoted\" = value; tab\there",
                                          "empty.value",
                                          "",
                                          NULL};

/* Formats topics (broker ids assigned round-robin, Kafka's way) into *out. */
static int meta_format(const struct meta_topic *mt, size_t n, char **out, size_t *len)
{
    struct br_topic_meta *t = calloc(n > 0 ? n : 1, sizeof *t);
    int rc = t == NULL ? KP_E_NOMEM : 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        (void)snprintf(t[i].name, sizeof t[i].name, "%s", mt[i].name);
        t[i].partitions = mt[i].partitions;
        t[i].replication_factor = mt[i].rf;
        size_t total = (size_t)mt[i].partitions * (size_t)mt[i].rf;
        t[i].replicas = calloc(total, sizeof *t[i].replicas);
        size_t nc = 0;
        while (mt[i].configs != NULL && mt[i].configs[2 * nc] != NULL) {
            nc++;
        }
        t[i].configs = calloc(nc > 0 ? nc : 1, sizeof *t[i].configs);
        if (t[i].replicas == NULL || t[i].configs == NULL) {
            rc = KP_E_NOMEM;
            break;
        }
        for (size_t p = 0; p < (size_t)mt[i].partitions; p++) {
            for (size_t r = 0; r < (size_t)mt[i].rf; r++) {
                t[i].replicas[p * (size_t)mt[i].rf + r] =
                    mt[i].first_broker + (int32_t)((p + r) % (size_t)mt[i].brokers);
            }
        }
        for (size_t c = 0; c < nc; c++) {
            t[i].configs[c].key = strdup(mt[i].configs[2 * c]);
            t[i].configs[c].value = strdup(mt[i].configs[2 * c + 1]);
            t[i].n_configs++;
            if (t[i].configs[c].key == NULL || t[i].configs[c].value == NULL) {
                rc = KP_E_NOMEM;
            }
        }
        char msg[320];
        if (rc == 0 && br_topic_meta_check(&t[i], msg, sizeof msg) != 0) {
            (void)fprintf(stderr, "fuzz-gen-seeds: topic %s: %s\n", mt[i].name, msg);
            rc = KP_E_INVALID_ARG;
        }
    }
    if (rc == 0) {
        rc = br_meta_file_format(t, n, out, len);
    }
    for (size_t i = 0; t != NULL && i < n; i++) {
        for (size_t c = 0; t[i].configs != NULL && c < t[i].n_configs; c++) {
            free(t[i].configs[c].key);
            free(t[i].configs[c].value);
        }
        free(t[i].configs);
        free(t[i].replicas);
    }
    free(t);
    return rc;
}

static void write_meta(struct gen *g, const char *name, const struct meta_topic *mt, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    int rc = meta_format(mt, n, &text, &len);
    if (rc != 0) {
        fail(g, "the metadata does not format", name, rc);
        return;
    }
    write_seed(g, "metadata_file", name, (const uint8_t *)text, len, NULL, 0);
    kp_free(text);
}

static void gen_metadata_file(struct gen *g)
{
    char long_name[BR_TOPIC_NAME_MAX + 1];
    memset(long_name, 'n', BR_TOPIC_NAME_MAX);
    long_name[BR_TOPIC_NAME_MAX] = '\0';
    memcpy(long_name, "long.", 5);

    write_meta(g, "gen-empty.bin", NULL, 0);
    const struct meta_topic one[] = {{"events", 1, 1, 0, 1, NULL}};
    write_meta(g, "gen-one-topic.bin", one, 1);
    const struct meta_topic standalone[] = {
        {"orders", 3, 1, 0, 1, NULL},
        {"__consumer_offsets", 50, 1, 0, 1, offsets_configs},
    };
    write_meta(g, "gen-standalone.bin", standalone, 2);
    const struct meta_topic odd[] = {
        {long_name, 2, 1, 0, 1, odd_configs},
        {"a.b", 1, 1, 0, 1, NULL},
        {"_-.-_", 1, 1, 2147483646, 1, NULL},
    };
    write_meta(g, "gen-odd-names-and-values.bin", odd, 3);

    const struct meta_topic cluster[] = {
        {"payments.v1", 6, 3, 1, 3, payments_configs},
        {"audit_log", 2, 2, 1, 3, NULL},
        {"metrics-raw", 12, 1, 1, 3, NULL},
    };
    char *text = NULL;
    size_t len = 0;
    int rc = meta_format(cluster, 3, &text, &len);
    if (rc != 0) {
        fail(g, "the metadata does not format", "gen-cluster.bin", rc);
        return;
    }
    write_seed(g, "metadata_file", "gen-cluster.bin", (const uint8_t *)text, len, NULL, 0);

    /* damaged copies: what a torn write, an editor or a bug could leave */
    static const struct {
        const char *name;
        const char *from;
        const char *to;
    } edits[] = {
        {"bad-version.bin", "samsa-metadata 1\n", "samsa-metadata 2\n"},
        {"bad-no-header.bin", "samsa-metadata 1\n", ""},
        {"bad-no-end.bin", "end 3\n", ""},
        {"bad-end-count.bin", "end 3\n", "end 4\n"},
        {"bad-end-not-last.bin", "end 3\n", "end 3\ntopic late 1 1\npartition 0 1\n"},
        {"bad-end-unterminated.bin", "end 3\n", "end 3"},
        {"bad-topic-extra-field.bin", "topic audit_log 2 2\n", "topic audit_log 2 2 x\n"},
        {"bad-topic-two-spaces.bin", "topic audit_log 2 2\n", "topic audit_log  2 2\n"},
        {"bad-topic-zero-partitions.bin", "topic audit_log 2 2\n", "topic audit_log 0 2\n"},
        {"bad-topic-zero-rf.bin", "topic audit_log 2 2\n", "topic audit_log 2 0\n"},
        {"bad-topic-huge-counts.bin", "topic audit_log 2 2\n", "topic audit_log 99999 1024\n"},
        {"bad-topic-leading-zero.bin", "topic audit_log 2 2\n", "topic audit_log 02 2\n"},
        {"bad-topic-name-dotdot.bin", "topic audit_log 2 2\n", "topic .. 2 2\n"},
        {"bad-topic-name-escape.bin", "topic audit_log 2 2\n", "topic audit%2Flog 2 2\n"},
        {"bad-topic-repeated.bin", "topic audit_log 2 2\n", "topic metrics-raw 2 2\n"},
        {"names-differ-by-dot-and-underscore.bin", "topic audit_log 2 2\n",
         "topic payments_v1 2 2\n"},
        {"bad-partition-missing.bin", "partition 1 2,3\n", ""},
        {"bad-partition-order.bin", "partition 0 1,2\npartition 1 2,3\n",
         "partition 1 2,3\npartition 0 1,2\n"},
        {"bad-partition-extra.bin", "partition 1 2,3\n", "partition 1 2,3\npartition 2 3,1\n"},
        {"bad-replica-repeated.bin", "partition 1 2,3\n", "partition 1 2,2\n"},
        {"bad-replica-count.bin", "partition 1 2,3\n", "partition 1 2,3,1\n"},
        {"bad-replica-negative.bin", "partition 1 2,3\n", "partition 1 2,-3\n"},
        {"bad-replica-empty.bin", "partition 1 2,3\n", "partition 1 2,\n"},
        {"bad-replica-overflow.bin", "partition 1 2,3\n", "partition 1 2,2147483648\n"},
        {"bad-config-no-equals.bin", "config min.insync.replicas=2\n",
         "config min.insync.replicas\n"},
        {"bad-config-empty-key.bin", "config min.insync.replicas=2\n", "config =2\n"},
        {"bad-config-repeated.bin", "config retention.ms=604800000\n",
         "config min.insync.replicas=3\n"},
        {"bad-config-escape.bin", "config retention.ms=604800000\n", "config retention.ms=60%G0\n"},
        {"bad-config-nul.bin", "config retention.ms=604800000\n", "config retention.ms=6%0004\n"},
        {"bad-config-cut-escape.bin", "config retention.ms=604800000\n",
         "config retention.ms=604800%2\n"},
        {"bad-config-unencoded.bin", "config retention.ms=604800000\n",
         "config retention.ms=6048:00000\n"},
        {"bad-config-before-topic.bin", "topic payments.v1 6 3\n",
         "config retention.ms=1\ntopic payments.v1 6 3\n"},
        {"bad-control-byte.bin", "topic metrics-raw 12 1\n", "topic metrics-raw\t12 1\n"},
        {"bad-non-ascii.bin", "topic metrics-raw 12 1\n", "topic m\xc3\xa9trics 12 1\n"},
        {"bad-unknown-record.bin", "topic metrics-raw 12 1\n",
         "replica metrics-raw 0\ntopic metrics-raw 12 1\n"},
        {"comments-and-blank-lines.bin", "topic metrics-raw 12 1\n",
         "\n# metrics\n\ntopic metrics-raw 12 1\n#\n"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        write_edited(g, "metadata_file", edits[i].name, text, len, edits[i].from, edits[i].to);
    }
    write_crlf(g, "metadata_file", "bad-crlf.bin", text, len);
    /* cut short: a write torn at a line end and in the middle of a line */
    const char *mid = strstr(text, "topic audit_log");
    if (mid != NULL) {
        size_t at = (size_t)(mid - text);
        write_seed(g, "metadata_file", "bad-torn-at-line.bin", (const uint8_t *)text, at, NULL, 0);
        write_seed(g, "metadata_file", "bad-torn-in-line.bin", (const uint8_t *)text, at + 9, NULL,
                   0);
    }
    kp_free(text);
}

/* ---- checkpoint: Kafka's checkpoint files */

static void write_checkpoint(struct gen *g, const char *name, const struct br_checkpoint_entry *e,
                             size_t n)
{
    struct kp_writer w;
    kp_wr_init(&w, MAX_SEED);
    int rc = br_checkpoint_encode(e, n, &w);
    if (rc != 0) {
        fail(g, "the checkpoint does not encode", name, rc);
    } else {
        write_seed(g, "checkpoint", name, w.buf, w.len, NULL, 0);
    }
    kp_wr_free(&w);
}

static void write_epochs(struct gen *g, const char *name, const struct br_epoch_entry *e, size_t n)
{
    struct kp_writer w;
    kp_wr_init(&w, MAX_SEED);
    int rc = br_epoch_checkpoint_encode(e, n, &w);
    if (rc != 0) {
        fail(g, "the leader-epoch checkpoint does not encode", name, rc);
    } else {
        write_seed(g, "checkpoint", name, w.buf, w.len, NULL, 0);
    }
    kp_wr_free(&w);
}

static void gen_checkpoint(struct gen *g)
{
    write_checkpoint(g, "gen-empty.bin", NULL, 0);
    const struct br_checkpoint_entry two[] = {{"topic", 0, 5}, {"topic", 1, 7}};
    write_checkpoint(g, "gen-two-partitions.bin", two, 2);

    /* recovery-point-offset-checkpoint of a standalone broker */
    struct br_checkpoint_entry rp[53];
    size_t n = 0;
    for (int32_t p = 0; p < 50; p++) {
        struct br_checkpoint_entry e = {"__consumer_offsets", p, p % 7 == 0 ? 0 : 31 * p};
        rp[n++] = e;
    }
    const struct br_checkpoint_entry more[] = {
        {"orders", 0, 1200}, {"orders", 2, 987654321}, {"orders", 1, 0}};
    for (size_t i = 0; i < 3; i++) {
        rp[n++] = more[i];
    }
    write_checkpoint(g, "gen-recovery-point-offset-checkpoint.bin", rp, n);

    struct br_checkpoint_entry edge[3] = {
        {"", 2147483647, INT64_MAX}, {"a", 0, 0}, {"_-.", 12, 42}};
    memset(edge[0].topic, 'x', BR_TOPIC_MAX);
    edge[0].topic[BR_TOPIC_MAX] = '\0';
    write_checkpoint(g, "gen-limits.bin", edge, 3);
    const struct br_checkpoint_entry repl[] = {
        {"payments.v1", 0, 4711}, {"payments.v1", 3, 12}, {"audit_log", 1, 99}};
    write_checkpoint(g, "gen-replication-offset-checkpoint.bin", repl, 3);

    const struct br_epoch_entry e1[] = {{0, 0}};
    write_epochs(g, "gen-epoch-one.bin", e1, 1);
    const struct br_epoch_entry e3[] = {
        {0, 0}, {2, 150}, {5, 1200}, {6, 1200}, {2147483647, INT64_MAX}};
    write_epochs(g, "gen-epoch-several.bin", e3, 5);

    /* damaged files, each breaking one rule of checkpoint.h */
    static const char two_text[] = "0\n2\ntopic 0 5\ntopic 1 7\n";
    static const char epoch_text[] = "0\n3\n0 0\n2 150\n5 1200\n";
    static const struct {
        const char *name;
        const char *text;
        const char *from;
        const char *to;
    } edits[] = {
        {"bad-version.bin", two_text, "0\n2\n", "1\n2\n"},
        {"bad-count-high.bin", two_text, "0\n2\n", "0\n3\n"},
        {"bad-count-low.bin", two_text, "0\n2\n", "0\n1\n"},
        {"bad-count-huge.bin", two_text, "0\n2\n", "0\n9223372036854775807\n"},
        {"bad-no-final-newline.bin", two_text, "1 7\n", "1 7"},
        {"bad-crlf.bin", two_text, "\ntopic 1 7\n", "\r\ntopic 1 7\r\n"},
        {"bad-negative-offset.bin", two_text, "0 5", "0 -5"},
        {"bad-plus-sign.bin", two_text, "0 5", "0 +5"},
        {"bad-leading-zero.bin", two_text, "0 5", "0 05"},
        {"bad-minus-zero.bin", two_text, "0 5", "-0 5"},
        {"bad-offset-overflow.bin", two_text, "0 5", "0 9223372036854775808"},
        {"bad-partition-overflow.bin", two_text, "0 5", "2147483648 5"},
        {"bad-two-spaces.bin", two_text, "0 5", "0  5"},
        {"bad-tab.bin", two_text, "0 5", "0\t5"},
        {"bad-repeated-partition.bin", two_text, "topic 1 7", "topic 0 7"},
        {"bad-topic-dot.bin", two_text, "topic 1 7", ". 1 7"},
        {"bad-topic-slash.bin", two_text, "topic 1 7", "top/ic 1 7"},
        {"bad-missing-field.bin", two_text, "topic 1 7", "topic 7"},
        {"bad-extra-field.bin", two_text, "topic 1 7", "topic 1 7 0"},
        {"bad-blank-line.bin", two_text, "topic 1 7\n", "\ntopic 1 7\n"},
        {"bad-epoch-order.bin", epoch_text, "5 1200", "1 1200"},
        {"bad-epoch-repeated.bin", epoch_text, "5 1200", "2 1200"},
        {"bad-epoch-offset-back.bin", epoch_text, "5 1200", "5 100"},
        {"bad-epoch-negative.bin", epoch_text, "2 150", "-1 150"},
        {"bad-epoch-count.bin", epoch_text, "0\n3\n", "0\n4\n"},
        {"bad-epoch-three-fields.bin", epoch_text, "2 150", "2 150 3"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        write_edited(g, "checkpoint", edits[i].name, edits[i].text, strlen(edits[i].text),
                     edits[i].from, edits[i].to);
    }
    /* a line past the ceiling, and a topic one byte past Kafka's limit */
    char buf[BR_CHECKPOINT_MAX_LINE + 64];
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): file bytes, not a C string */
    memcpy(buf, "0\n1\n", 4);
    memset(buf + 4, 'y', BR_CHECKPOINT_MAX_LINE + 40);
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): file bytes, not a C string */
    memcpy(buf + BR_CHECKPOINT_MAX_LINE + 44, " 0 1\n", 5);
    write_seed(g, "checkpoint", "bad-line-too-long.bin", (const uint8_t *)buf,
               BR_CHECKPOINT_MAX_LINE + 49, NULL, 0);
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): file bytes, not a C string */
    memcpy(buf + 4 + BR_TOPIC_MAX + 1, " 0 1\n", 5);
    write_seed(g, "checkpoint", "bad-topic-too-long.bin", (const uint8_t *)buf,
               4 + BR_TOPIC_MAX + 1 + 5, NULL, 0);
}

/* ---- segment_recovery: segments written by the broker's own log */

#define SEG_HEADER 5
#define SEG_FIX_CRC 0x01
#define SEG_CLEAN 0x02
#define SEG_INDEX 0x04
#define SEG_SPLIT 0x08
#define SEG_INTERVAL_64 0x10

struct seg_files {
    uint8_t *log;
    size_t log_len;
    uint8_t *index;
    size_t index_len;
};

static uint8_t *slurp(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    uint8_t *buf = malloc(MAX_SEED);
    size_t n = buf != NULL ? fread(buf, 1, MAX_SEED, f) : 0;
    (void)fclose(f);
    *len = n;
    return buf;
}

/*
 * Appends batches[0..n) (whole v2 batches, laid end to end) to a new log
 * `copies` times, as a leader, with an index entry for every batch after the
 * first, and reads back the first segment's .log and .index.
 */
static int seg_write(const char *dir, const uint8_t *batches, size_t len, int copies,
                     struct seg_files *out)
{
    memset(out, 0, sizeof *out);
    char part[4200];
    (void)snprintf(part, sizeof part, "%s/seeds-0", dir);
    if (br_log_dir_remove(part) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct br_log_config cfg;
    br_log_config_defaults(&cfg);
    cfg.index_interval_bytes = 0;
    struct br_log *log = NULL;
    int rc = br_log_open(part, &cfg, 0, NULL, &log);
    for (int c = 0; c < copies && rc == 0; c++) {
        size_t pos = 0;
        while (pos < len && rc == 0) {
            struct kp_batch_header h;
            size_t size = 0;
            rc = kp_batch_parse(batches + pos, len - pos, &h, &size);
            uint8_t *copy = rc == 0 ? malloc(size) : NULL;
            if (rc == 0 && copy == NULL) {
                rc = KP_E_NOMEM;
            }
            if (rc == 0) {
                memcpy(copy, batches + pos, size);
                int64_t base = 0;
                rc = br_log_append(log, copy, size, 3 + c, INT64_C(1700000000000), &base);
                free(copy);
            }
            pos += size;
        }
    }
    br_log_close(log);
    if (rc == 0) {
        char path[4300];
        (void)snprintf(path, sizeof path, "%s/00000000000000000000.log", part);
        out->log = slurp(path, &out->log_len);
        (void)snprintf(path, sizeof path, "%s/00000000000000000000.index", part);
        out->index = slurp(path, &out->index_len);
        if (out->log == NULL || out->index == NULL) {
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    if (br_log_dir_remove(part) != 0 && rc == 0) {
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    return rc;
}

/* One harness input: the header, the index bytes, the log bytes and a tail. */
static void write_seg_seed(struct gen *g, const char *name, uint8_t flags, const uint8_t *index,
                           size_t index_len, size_t split, const uint8_t *log, size_t log_len,
                           const uint8_t *tail, size_t tail_len)
{
    if (index_len > 0xffff || split > 0xffff) {
        fail(g, "index or split beyond the header's 16 bits", name, 0);
        return;
    }
    size_t n = SEG_HEADER + index_len + log_len + tail_len;
    uint8_t *buf = malloc(n);
    if (buf == NULL) {
        fail(g, "out of memory", name, KP_E_NOMEM);
        return;
    }
    buf[0] = flags;
    kp_store_be16(buf + 1, (uint16_t)index_len);
    kp_store_be16(buf + 3, (uint16_t)split);
    if (index_len > 0) {
        memcpy(buf + SEG_HEADER, index, index_len);
    }
    memcpy(buf + SEG_HEADER + index_len, log, log_len);
    if (tail_len > 0) {
        memcpy(buf + SEG_HEADER + index_len + log_len, tail, tail_len);
    }
    write_seed(g, "segment_recovery", name, buf, n, NULL, 0);
    free(buf);
}

/* The damaged and split variants, from a segment of at least two batches. */
static void gen_segment_variants(struct gen *g, const char *stem, const struct seg_files *s)
{
    char name[512];
    /* the boundary of the middle batch */
    size_t bounds[64];
    size_t nb = 0;
    size_t pos = 0;
    while (pos < s->log_len && nb < 64) {
        struct kp_batch_header h;
        size_t size = 0;
        if (kp_batch_parse(s->log + pos, s->log_len - pos, &h, &size) != 0) {
            break;
        }
        bounds[nb++] = pos;
        pos += size;
    }
    if (nb < 2) {
        return;
    }
    size_t split = bounds[nb / 2];
    /* the first segment's index: the entries before the split */
    size_t keep = 0;
    while (keep + 8 <= s->index_len && kp_load_be32(s->index + keep + 4) < split) {
        keep += 8;
    }
    (void)snprintf(name, sizeof name, "%s-split.bin", stem);
    write_seg_seed(g, name, SEG_FIX_CRC | SEG_INDEX | SEG_SPLIT, s->index, keep, split, s->log,
                   s->log_len, NULL, 0);
    (void)snprintf(name, sizeof name, "%s-split-clean.bin", stem);
    write_seg_seed(g, name, SEG_FIX_CRC | SEG_CLEAN | SEG_INDEX | SEG_SPLIT, s->index, keep, split,
                   s->log, s->log_len, NULL, 0);

    /* torn: the last batch cut short, as a crash mid-write leaves it */
    size_t last = bounds[nb - 1];
    (void)snprintf(name, sizeof name, "%s-torn.bin", stem);
    write_seg_seed(g, name, SEG_FIX_CRC | SEG_INDEX, s->index, s->index_len, 0, s->log,
                   last + (s->log_len - last) / 2, NULL, 0);
    /* zeros after the end: a preallocated file, or blocks the crash left */
    static const uint8_t zeros[256];
    (void)snprintf(name, sizeof name, "%s-zero-tail.bin", stem);
    write_seg_seed(g, name, SEG_FIX_CRC | SEG_CLEAN | SEG_INDEX, s->index, s->index_len, 0, s->log,
                   s->log_len, zeros, sizeof zeros);
    /* the first batch again after the end: an old batch, offsets going back */
    (void)snprintf(name, sizeof name, "%s-old-batch-after-end.bin", stem);
    write_seg_seed(g, name, SEG_FIX_CRC | SEG_CLEAN | SEG_INDEX, s->index, s->index_len, 0, s->log,
                   s->log_len, s->log, bounds[1]);

    /* a bad CRC in the last batch, the CRC left as it is */
    uint8_t *bad = malloc(s->log_len);
    if (bad != NULL) {
        memcpy(bad, s->log, s->log_len);
        bad[s->log_len - 1] ^= 0x5a;
        (void)snprintf(name, sizeof name, "%s-bad-crc.bin", stem);
        write_seg_seed(g, name, SEG_INDEX, s->index, s->index_len, 0, bad, s->log_len, NULL, 0);
        free(bad);
    }
    /* an index that does not match its segment: a torn entry, an entry in
     * the middle of a batch, entries out of order */
    if (s->index_len >= 8) {
        uint8_t *idx = malloc(s->index_len + 4);
        if (idx != NULL) {
            memcpy(idx, s->index, s->index_len);
            (void)snprintf(name, sizeof name, "%s-index-torn.bin", stem);
            write_seg_seed(g, name, SEG_FIX_CRC | SEG_CLEAN | SEG_INDEX, idx, s->index_len - 3, 0,
                           s->log, s->log_len, NULL, 0);
            kp_store_be32(idx + s->index_len - 4, kp_load_be32(idx + s->index_len - 4) + 7);
            (void)snprintf(name, sizeof name, "%s-index-mid-batch.bin", stem);
            write_seg_seed(g, name, SEG_FIX_CRC | SEG_CLEAN | SEG_INDEX, idx, s->index_len, 0,
                           s->log, s->log_len, NULL, 0);
            memcpy(idx, s->index, s->index_len);
            kp_store_be32(idx + s->index_len - 4, (uint32_t)s->log_len + 4096);
            (void)snprintf(name, sizeof name, "%s-index-past-end.bin", stem);
            write_seg_seed(g, name, SEG_FIX_CRC | SEG_CLEAN | SEG_INDEX, idx, s->index_len, 0,
                           s->log, s->log_len, NULL, 0);
            if (s->index_len >= 16) {
                memcpy(idx, s->index + s->index_len - 8, 8);
                memcpy(idx + 8, s->index, s->index_len - 8);
                (void)snprintf(name, sizeof name, "%s-index-unordered.bin", stem);
                write_seg_seed(g, name, SEG_FIX_CRC | SEG_CLEAN | SEG_INDEX, idx, s->index_len, 0,
                               s->log, s->log_len, NULL, 0);
            }
            free(idx);
        }
    }
}

static int record_batch_seed(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return (strncmp(e->d_name, "gen-", 4) == 0 || strncmp(e->d_name, "vec-", 4) == 0) && n > 4 &&
           strcmp(e->d_name + n - 4, ".bin") == 0;
}

/*
 * For every gen-* and vec-* seed of record_batch/ (written above: the batches
 * of every codec and kind, and the clients' Produce batches), a log made of
 * its batches twice over, as a crash (recovery from the start) and a clean
 * stop left it, with and without its index; the multi-batch gen-segment and
 * one capture per client also as two segments, torn, with trailing garbage,
 * a bad CRC and damaged indexes. A seed whose bytes are not all v2 batches
 * (legacy entries, a torn tail) also goes in raw, without an index.
 */
static void gen_segment_recovery(struct gen *g)
{
    char dir[4096];
    char tmpl[256];
    const char *base = getenv("TMPDIR");
    (void)snprintf(tmpl, sizeof tmpl, "%s/samsa-gen-seeds-XXXXXX",
                   base != NULL && strlen(base) < 128 ? base : "/tmp");
    if (mkdtemp(tmpl) == NULL) {
        (void)fprintf(stderr, "fuzz-gen-seeds: %s: %s\n", tmpl, strerror(errno));
        g->failures++;
        return;
    }
    (void)snprintf(dir, sizeof dir, "%s/record_batch", g->dir);
    struct dirent **files = NULL;
    int nf = scandir(dir, &files, record_batch_seed, alphasort);
    if (nf < 0) {
        (void)fprintf(stderr, "fuzz-gen-seeds: %s: %s\n", dir, strerror(errno));
        g->failures++;
        nf = 0;
    }
    for (int i = 0; i < nf; i++) {
        const char *file = files[i]->d_name;
        char path[8192];
        char stem[256];
        char name[512];
        (void)snprintf(path, sizeof path, "%s/%s", dir, file);
        (void)snprintf(stem, sizeof stem, "%.*s", (int)(strlen(file) - 4), file);
        size_t len = 0;
        uint8_t *src = slurp(path, &len);
        if (src == NULL) {
            fail(g, "cannot read", path, 0);
            free(files[i]);
            continue;
        }
        /* the leading run of whole, valid v2 batches */
        size_t valid = 0;
        for (;;) {
            struct kp_batch_header h;
            size_t size = 0;
            if (valid >= len || kp_batch_parse(src + valid, len - valid, &h, &size) != 0) {
                break;
            }
            valid += size;
        }
        if (valid < len) {
            (void)snprintf(name, sizeof name, "%s-raw.bin", stem);
            write_seg_seed(g, name, SEG_FIX_CRC, NULL, 0, 0, src, len, NULL, 0);
        }
        if (valid > 0) {
            struct seg_files s;
            int rc = seg_write(tmpl, src, valid, 2, &s);
            if (rc != 0) {
                fail(g, "the broker's log does not take the batches", file, rc);
            } else {
                (void)snprintf(name, sizeof name, "%s-crash.bin", stem);
                write_seg_seed(g, name, SEG_FIX_CRC | SEG_INDEX, s.index, s.index_len, 0, s.log,
                               s.log_len, NULL, 0);
                (void)snprintf(name, sizeof name, "%s-clean.bin", stem);
                write_seg_seed(g, name, SEG_FIX_CRC | SEG_CLEAN | SEG_INDEX | SEG_INTERVAL_64,
                               s.index, s.index_len, 0, s.log, s.log_len, NULL, 0);
                (void)snprintf(name, sizeof name, "%s-no-index.bin", stem);
                write_seg_seed(g, name, SEG_FIX_CRC | SEG_INTERVAL_64, NULL, 0, 0, s.log, s.log_len,
                               NULL, 0);
                if (strcmp(stem, "gen-segment") == 0 || strstr(stem, "-none-0") != NULL) {
                    gen_segment_variants(g, stem, &s);
                }
            }
            free(s.log);
            free(s.index);
        }
        free(src);
        free(files[i]);
    }
    free(files);
    if (br_log_dir_remove(tmpl) != 0) {
        (void)fprintf(stderr, "fuzz-gen-seeds: cannot remove %s\n", tmpl);
        g->failures++;
    }
}

/* ---- index: a trusted segment's indexes, written by the broker's segment code */

#define IDX_HEADER 18
#define IDX_GIVEN 0
#define IDX_BROKER 1
#define IDX_PATCHED 2
#define IDX_MISSING 3
#define IDX_TIME(mode) ((mode) << 2)
#define IDX_LOG_FROM_INPUT 0x10
#define IDX_OPEN_LOG 0x20
#define IDX_BASE_GAP 0x40
#define IDX_TIGHT_LIMIT 0x80
#define IDX_TS INT64_C(1700000000000)

/* One fuzz_index input (see fuzz_index.c for the layout). */
struct idx_seed {
    uint8_t flags;
    uint8_t interval; /* index.interval.bytes / 16 */
    const uint8_t *idx;
    size_t idx_len;
    const uint8_t *tidx;
    size_t tidx_len;
    int32_t offset_delta; /* the offset to look up, from the base offset */
    int64_t ts;           /* the timestamp to look up */
    const uint8_t *log;
    size_t log_len;
};

static void write_index_seed(struct gen *g, const char *name, const struct idx_seed *s)
{
    if (s->idx_len > 0xffff || s->tidx_len > 0xffff) {
        fail(g, "an index beyond the header's 16 bits", name, 0);
        return;
    }
    size_t n = IDX_HEADER + s->idx_len + s->tidx_len + s->log_len;
    uint8_t *buf = malloc(n);
    if (buf == NULL) {
        fail(g, "out of memory", name, KP_E_NOMEM);
        return;
    }
    buf[0] = s->flags;
    buf[1] = s->interval;
    kp_store_be16(buf + 2, (uint16_t)s->idx_len);
    kp_store_be16(buf + 4, (uint16_t)s->tidx_len);
    kp_store_be32(buf + 6, (uint32_t)s->offset_delta);
    kp_store_be64(buf + 10, (uint64_t)s->ts);
    size_t at = IDX_HEADER;
    if (s->idx_len > 0) {
        memcpy(buf + at, s->idx, s->idx_len);
        at += s->idx_len;
    }
    if (s->tidx_len > 0) {
        memcpy(buf + at, s->tidx, s->tidx_len);
        at += s->tidx_len;
    }
    if (s->log_len > 0) {
        memcpy(buf + at, s->log, s->log_len);
    }
    write_seed(g, "index", name, buf, n, NULL, 0);
    free(buf);
}

struct idx_files {
    uint8_t *index;
    size_t index_len;
    uint8_t *timeindex;
    size_t timeindex_len;
};

/*
 * Appends the batches of log[0..len) (valid, offsets increasing) to a new
 * segment with br_segment_append at index.interval.bytes `interval`, seals
 * it as a roll does, and reads back its .index and .timeindex.
 */
static int idx_write(const char *dir, const uint8_t *log, size_t len, int32_t interval,
                     struct idx_files *out)
{
    memset(out, 0, sizeof *out);
    char part[4200];
    (void)snprintf(part, sizeof part, "%s/index-0", dir);
    if (br_log_dir_remove(part) != 0 || mkdir(part, 0755) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int dir_fd = open(part, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct kp_batch_header h;
    size_t size = 0;
    int rc = kp_batch_parse_lenient(log, len, &h, &size);
    struct br_segment *s = NULL;
    int64_t base = h.BaseOffset;
    if (rc == 0) {
        rc = br_segment_create(dir_fd, part, base, NULL, &s);
    }
    for (size_t pos = 0; rc == 0 && pos < len; pos += size) {
        rc = kp_batch_parse_lenient(log + pos, len - pos, &h, &size);
        if (rc == 0) {
            rc = br_segment_append(s, part, log + pos, size, kp_batch_last_offset(&h),
                                   h.MaxTimestamp, interval);
        }
    }
    if (rc == 0) {
        rc = br_segment_seal(s, part);
    }
    br_segment_free(s);
    (void)close(dir_fd);
    if (rc == 0) {
        char path[4300];
        (void)snprintf(path, sizeof path, "%s/%020lld.index", part, (long long)base);
        out->index = slurp(path, &out->index_len);
        (void)snprintf(path, sizeof path, "%s/%020lld.timeindex", part, (long long)base);
        out->timeindex = slurp(path, &out->timeindex_len);
        if (out->index == NULL || out->timeindex == NULL) {
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    if (br_log_dir_remove(part) != 0 && rc == 0) {
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    return rc;
}

/* Moves a batch's timestamps by d (its records' are deltas from its base
 * timestamp) and gives it its CRC again. */
static void shift_time(uint8_t *batch, size_t size, int64_t d)
{
    kp_store_be64(batch + 27, (uint64_t)((int64_t)kp_load_be64(batch + 27) + d));
    kp_store_be64(batch + 35, (uint64_t)((int64_t)kp_load_be64(batch + 35) + d));
    kp_store_be32(batch + 17, kp_crc32c(0, batch + KP_BATCH_CRC_START, size - KP_BATCH_CRC_START));
}

/* A segment of every codec and kind of batch, at increasing offsets with a
 * gap, whose MaxTimestamps go back and forth (so the time index skips some). */
static int idx_segment(struct kp_writer *w)
{
    static const struct {
        int codec;
        enum batch_kind kind;
        int nrec;
        int64_t base;
        int64_t shift;
    } plan[] = {
        {KP_CODEC_NONE, B_PLAIN, 3, 0, 0},         {KP_CODEC_GZIP, B_PLAIN, 3, 3, -60000},
        {KP_CODEC_SNAPPY, B_PLAIN, 3, 6, 60000},   {KP_CODEC_LZ4, B_PLAIN, 3, 9, 60000},
        {KP_CODEC_ZSTD, B_PLAIN, 3, 12, 30000},    {KP_CODEC_NONE, B_COMPACTED, 2, 15, 120000},
        {KP_CODEC_NONE, B_CONTROL, 0, 23, 120000}, {KP_CODEC_NONE, B_TRANSACTIONAL, 4, 24, 200000},
        {KP_CODEC_NONE, B_PLAIN, 5, 40, 100000},
    };
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        size_t at = w->len;
        int rc = build_batch(w, plan[i].codec, plan[i].base, plan[i].kind, plan[i].nrec);
        if (rc != 0) {
            return rc;
        }
        shift_time(w->buf + at, w->len - at, plan[i].shift);
    }
    return w->err;
}

/*
 * A segment whose first batch holds, as its one record's value, a whole
 * batch at offset 1000000: an index entry pointing at that inner batch
 * reads as a batch boundary.
 */
static int idx_nested(struct kp_writer *w, size_t *inner_pos)
{
    struct kp_writer inner;
    kp_wr_init(&inner, MAX_SEED);
    int rc = build_batch(&inner, KP_CODEC_NONE, 1000000, B_PLAIN, 2);
    struct kp_batch_builder b;
    if (rc == 0) {
        rc = kp_batch_builder_init(&b, KP_CODEC_NONE, 0, IDX_TS, -1, -1, -1, (size_t)1 << 20);
        if (rc == 0) {
            struct kp_bytes v = {inner.buf, (int32_t)inner.len};
            rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, IDX_TS, KP_BYTES_NULL, v, NULL, 0);
        }
        if (rc == 0) {
            rc = kp_batch_builder_finish(&b, w);
        }
        kp_batch_builder_free(&b);
    }
    *inner_pos = 0;
    for (size_t i = 0; rc == 0 && i + inner.len <= w->len; i++) {
        if (memcmp(w->buf + i, inner.buf, inner.len) == 0) {
            *inner_pos = i;
            break;
        }
    }
    if (rc == 0 && *inner_pos == 0) {
        rc = KP_E_CORRUPT;
    }
    if (rc == 0) {
        rc = build_batch(w, KP_CODEC_NONE, 1, B_PLAIN, 3);
    }
    kp_wr_free(&inner);
    return rc;
}

/* An entry's fields in an index file's bytes. */
static void idx_set(uint8_t *p, size_t entry, size_t i, size_t field, uint32_t v)
{
    kp_store_be32(p + i * entry + field, v);
}

static void gen_index_damage(struct gen *g, const struct idx_seed *base, const struct idx_files *f)
{
    size_t ni = f->index_len / 8;
    size_t nt = f->timeindex_len / 12;
    uint8_t *idx = malloc(f->index_len + 8);
    uint8_t *tidx = malloc(f->timeindex_len + 12);
    if (idx == NULL || tidx == NULL || ni < 3 || nt < 3) {
        fail(g, "the segment's indexes are too small to damage", "index", 0);
        free(idx);
        free(tidx);
        return;
    }
    struct idx_seed s = *base;
    s.idx = idx;
    s.tidx = tidx;
    static const char *const names[] = {
        "bad-index-torn.bin",
        "bad-index-mid-batch.bin",
        "bad-index-past-end.bin",
        "bad-index-unordered.bin",
        "bad-index-negative.bin",
        "bad-index-reaches-next-segment.bin",
        "bad-timeindex-torn.bin",
        "bad-timeindex-unordered.bin",
        "bad-timeindex-negative.bin",
        "trust-index-offset-below-its-batch.bin",
        "trust-timeindex-offset-late.bin",
        "trust-index-truncate.bin",
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        memcpy(idx, f->index, f->index_len);
        memcpy(tidx, f->timeindex, f->timeindex_len);
        s.idx_len = f->index_len;
        s.tidx_len = f->timeindex_len;
        s.flags = base->flags;
        uint32_t last_rel = kp_load_be32(idx + (ni - 1) * 8);
        uint32_t last_pos = kp_load_be32(idx + (ni - 1) * 8 + 4);
        switch (k) {
        case 0: /* a torn entry at the end */
            s.idx_len -= 3;
            break;
        case 1: /* a position inside its batch */
            idx_set(idx, 8, ni - 1, 4, last_pos + 7);
            break;
        case 2: /* a position past the end of the segment */
            idx_set(idx, 8, ni - 1, 4, (uint32_t)s.log_len + 4096);
            break;
        case 3: /* the last entry first */
            memcpy(idx, f->index + (ni - 1) * 8, 8);
            memcpy(idx + 8, f->index, (ni - 1) * 8);
            break;
        case 4:
            idx_set(idx, 8, 1, 0, 0xffffffffu);
            break;
        case 5: /* the next segment starts right after the last batch */
            s.flags |= IDX_TIGHT_LIMIT;
            idx_set(idx, 8, ni - 1, 0, last_rel + 100);
            break;
        case 6:
            s.tidx_len -= 5;
            break;
        case 7:
            memcpy(tidx, f->timeindex + 12, 12);
            memcpy(tidx + 12, f->timeindex, 12);
            break;
        case 8:
            kp_store_be64(tidx + 12, (uint64_t)INT64_C(-1));
            break;
        case 9: /* sound, but the first entry claims the base offset for a later
                 * batch: a read of the base offset starts past the batch holding it */
            idx_set(idx, 8, 0, 0, 0);
            s.offset_delta = 0;
            break;
        case 10: /* sound, but a time entry names the next entry's (later) batch */
            idx_set(tidx, 12, 1, 8, kp_load_be32(tidx + (size_t)2 * 12 + 8));
            s.ts = (int64_t)kp_load_be64(tidx + 12);
            break;
        case 11: /* the entry of case 9, met by a truncation to the base offset (the
                  * harness truncates when it does not open the partition) */
            s.flags &= (uint8_t)~IDX_OPEN_LOG;
            idx_set(idx, 8, 0, 0, 0);
            s.offset_delta = 0;
            break;
        default:
            break;
        }
        write_index_seed(g, names[k], &s);
    }
    free(idx);
    free(tidx);
}

/*
 * Seeds of fuzz_index: the harness's built-in log with the indexes the
 * broker writes at several index.interval.bytes, missing ones, opened alone
 * and as the trusted segment of a partition; a segment of every codec and
 * kind of batch with its indexes as br_segment_append and br_segment_seal
 * wrote them (given and as a patch of zeros), and damaged copies: broken
 * (bad-*: torn, mid-batch, past the end, unordered, negative, reaching the
 * next segment) and sound but wrong (trust-*: the reads through them go
 * astray); and an index entry pointing at a batch nested in a record.
 */
static void gen_index(struct gen *g)
{
    char tmpl[256];
    const char *tmp = getenv("TMPDIR");
    (void)snprintf(tmpl, sizeof tmpl, "%s/samsa-gen-seeds-XXXXXX",
                   tmp != NULL && strlen(tmp) < 128 ? tmp : "/tmp");
    if (mkdtemp(tmpl) == NULL) {
        (void)fprintf(stderr, "fuzz-gen-seeds: %s: %s\n", tmpl, strerror(errno));
        g->failures++;
        return;
    }
    static const struct {
        const char *name;
        uint8_t flags;
        uint8_t interval;
    } builtin[] = {
        {"gen-builtin-every-batch.bin", IDX_BROKER | IDX_TIME(IDX_BROKER), 0},
        {"gen-builtin-interval-64.bin", IDX_BROKER | IDX_TIME(IDX_BROKER), 4},
        {"gen-builtin-interval-4080.bin", IDX_BROKER | IDX_TIME(IDX_BROKER), 255},
        {"gen-builtin-log.bin", IDX_BROKER | IDX_TIME(IDX_BROKER) | IDX_OPEN_LOG, 0},
        {"gen-builtin-log-tight.bin",
         IDX_BROKER | IDX_TIME(IDX_BROKER) | IDX_OPEN_LOG | IDX_TIGHT_LIMIT, 4},
        {"gen-builtin-base-gap.bin",
         IDX_BROKER | IDX_TIME(IDX_BROKER) | IDX_OPEN_LOG | IDX_BASE_GAP, 16},
        {"gen-builtin-missing.bin", IDX_MISSING | IDX_TIME(IDX_MISSING) | IDX_OPEN_LOG, 0},
        {"gen-builtin-no-offset-index.bin", IDX_MISSING | IDX_TIME(IDX_BROKER) | IDX_OPEN_LOG, 0},
    };
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
        struct idx_seed s = {
            builtin[i].flags, builtin[i].interval, NULL, 0, NULL, 0, 17, 1600, NULL, 0};
        write_index_seed(g, builtin[i].name, &s);
    }

    struct kp_writer w;
    kp_wr_init(&w, MAX_SEED);
    int rc = idx_segment(&w);
    struct idx_files f = {NULL, 0, NULL, 0};
    struct idx_files f256 = {NULL, 0, NULL, 0};
    if (rc == 0) {
        rc = idx_write(tmpl, w.buf, w.len, 0, &f);
    }
    if (rc == 0) {
        rc = idx_write(tmpl, w.buf, w.len, 256, &f256);
    }
    if (rc != 0) {
        fail(g, "the broker's segment does not take the batches", "index", rc);
    } else {
        uint8_t given = IDX_GIVEN | IDX_TIME(IDX_GIVEN) | IDX_LOG_FROM_INPUT;
        struct idx_seed s = {given,           0,  f.index,        f.index_len, f.timeindex,
                             f.timeindex_len, 16, IDX_TS + 60000, w.buf,       w.len};
        write_index_seed(g, "gen-segment.bin", &s);
        s.flags = given | IDX_OPEN_LOG;
        write_index_seed(g, "gen-segment-log.bin", &s);
        struct idx_seed s256 = {
            given | IDX_OPEN_LOG, 16, f256.index,      f256.index_len, f256.timeindex,
            f256.timeindex_len,   30, IDX_TS + 120000, w.buf,          w.len};
        write_index_seed(g, "gen-segment-interval-256.bin", &s256);
        /* a patch of zeros over the broker's own indexes: bytes to flip */
        uint8_t *zeros = calloc(f.index_len + f.timeindex_len + 1, 1);
        if (zeros != NULL) {
            struct idx_seed p = {IDX_PATCHED | IDX_TIME(IDX_PATCHED) | IDX_LOG_FROM_INPUT |
                                     IDX_OPEN_LOG,
                                 0,
                                 zeros,
                                 f.index_len,
                                 zeros,
                                 f.timeindex_len,
                                 22,
                                 IDX_TS + 200000,
                                 w.buf,
                                 w.len};
            write_index_seed(g, "gen-segment-patch.bin", &p);
            free(zeros);
        }
        s.flags = given | IDX_OPEN_LOG;
        gen_index_damage(g, &s, &f);
    }
    free(f.index);
    free(f.timeindex);
    free(f256.index);
    free(f256.timeindex);
    kp_wr_free(&w);

    /* an entry at a batch inside a record: it parses as a boundary */
    kp_wr_init(&w, MAX_SEED);
    size_t inner = 0;
    rc = idx_nested(&w, &inner);
    if (rc != 0) {
        fail(g, "the nested segment does not build", "trust-index-nested-batch.bin", rc);
    } else {
        uint8_t entry[8];
        kp_store_be32(entry, 0);
        kp_store_be32(entry + 4, (uint32_t)inner);
        struct idx_seed s = {IDX_GIVEN | IDX_TIME(IDX_GIVEN) | IDX_LOG_FROM_INPUT | IDX_OPEN_LOG,
                             0,
                             entry,
                             sizeof entry,
                             NULL,
                             0,
                             0,
                             IDX_TS,
                             w.buf,
                             w.len};
        write_index_seed(g, "trust-index-nested-batch.bin", &s);
    }
    kp_wr_free(&w);
    if (br_log_dir_remove(tmpl) != 0) {
        (void)fprintf(stderr, "fuzz-gen-seeds: cannot remove %s\n", tmpl);
        g->failures++;
    }
}

/* ---- group_records: __consumer_offsets records, by the coordinator's encoders */

#define GRP_SEQUENCE 0x01
#define GRP_TOMBSTONE 0x02
#define GRP_THROUGH_LOG 0x04
#define GRP_LOG_CONTROL 0x08
#define GRP_LOG_PER(n) (((n)-1) << 4)
#define GRP_NULL_LEN 0xffff
#define GRP_TS INT64_C(1700000000000)

/* Appends one record in the sequence layout of fuzz_group_records: u16
 * length and bytes of the key, then of the value (0xffff: null). */
static void grp_frame(struct kp_writer *out, const uint8_t *key, size_t klen, const uint8_t *value,
                      size_t vlen, bool tombstone)
{
    kp_wr_u16(out, (uint16_t)klen);
    kp_wr_raw(out, key, klen);
    kp_wr_u16(out, tombstone ? (uint16_t)GRP_NULL_LEN : (uint16_t)vlen);
    if (!tombstone) {
        kp_wr_raw(out, value, vlen);
    }
}

/* One record alone: the selector, the key's length and bytes, the value. */
static void write_grp_single(struct gen *g, const char *name, const struct kp_writer *w,
                             size_t kend, bool tombstone)
{
    if (w->err != 0 || kend > 0xfffe) {
        fail(g, "the record does not encode", name, w->err);
        return;
    }
    uint8_t head[3] = {tombstone ? GRP_TOMBSTONE : 0, 0, 0};
    kp_store_be16(head + 1, (uint16_t)kend);
    write_seed(g, "group_records", name, head, sizeof head, w->buf, tombstone ? kend : w->len);
}

/* The consumer protocol's subscription (v0: topics, user data) and
 * assignment (v0: topic partitions, user data). */
static void consumer_subscription(struct kp_writer *w, const char *topic)
{
    kp_wr_i16(w, 0);
    kp_wr_i32(w, 1);
    kp_wr_string(w, kp_str_c(topic));
    kp_wr_i32(w, -1);
}

static void consumer_assignment(struct kp_writer *w, const char *topic, int32_t first, int32_t n)
{
    kp_wr_i16(w, 0);
    kp_wr_i32(w, 1);
    kp_wr_string(w, kp_str_c(topic));
    kp_wr_i32(w, n);
    for (int32_t p = first; p < first + n; p++) {
        kp_wr_i32(w, p);
    }
    kp_wr_i32(w, -1);
}

/* A Kafka group metadata value of `version` with two members. */
static void kafka_group_value(struct kp_writer *w, int16_t version)
{
    kp_wr_i16(w, version);
    kp_wr_string(w, kp_str_c("consumer"));
    kp_wr_i32(w, 7);
    kp_wr_string(w, kp_str_c("range"));
    kp_wr_string(w, kp_str_c("rdkafka-4f7c"));
    if (version >= 2) {
        kp_wr_i64(w, GRP_TS);
    }
    kp_wr_i32(w, 2);
    static const char *const ids[] = {"rdkafka-4f7c", "kafka-python-2.0.2-91ab"};
    static const char *const clients[] = {"rdkafka", "kafka-python-2.0.2"};
    for (int32_t i = 0; i < 2; i++) {
        kp_wr_string(w, kp_str_c(ids[i]));
        if (version >= 3) {
            kp_wr_string(w, i == 0 ? kp_str_c("instance-1") : KP_STR_NULL);
        }
        kp_wr_string(w, kp_str_c(clients[i]));
        kp_wr_string(w, kp_str_c(i == 0 ? "/10.0.0.7" : "/10.0.0.8"));
        if (version >= 1) {
            kp_wr_i32(w, 300000);
        }
        kp_wr_i32(w, 10000);
        struct kp_writer b;
        kp_wr_init(&b, 4096);
        consumer_subscription(&b, "orders");
        kp_wr_bytes(w, (struct kp_bytes){b.buf, (int32_t)b.len});
        kp_wr_reset(&b);
        consumer_assignment(&b, "orders", 3 * i, 3);
        kp_wr_bytes(w, (struct kp_bytes){b.buf, (int32_t)b.len});
        kp_wr_free(&b);
    }
}

/* A Kafka offset commit value of `version`. */
static void kafka_offset_value(struct kp_writer *w, int16_t version, int64_t offset)
{
    kp_wr_i16(w, version);
    kp_wr_i64(w, offset);
    if (version == 3) {
        kp_wr_i32(w, 4);
    }
    kp_wr_string(w, kp_str_c(version == 0 ? "" : "checkpoint-a"));
    kp_wr_i64(w, GRP_TS + version);
    if (version == 1) {
        kp_wr_i64(w, GRP_TS + 86400000);
    }
}

/* Member objects as the coordinator holds them, for br_grp_enc_group_value. */
struct grp_seed_group {
    struct grp_group g;
    struct grp_member m[2];
    struct grp_member *members[2];
    struct grp_protocol proto[2];
    uint8_t sub[2][64];
    uint8_t asg[2][64];
};

static void grp_seed_group_init(struct grp_seed_group *s, int32_t generation, size_t nmembers)
{
    /* the coordinator's strings are its own (char *): give it copies */
    static char ptype[] = "consumer";
    static char protocol[] = "range";
    static char id0[] = "consumer-1-2b0e8a";
    static char id1[] = "consumer-2-77c1f0";
    static char instance[] = "payments-worker-0";
    static char client[] = "payments";
    static char host0[] = "/192.168.7.1";
    static char host1[] = "/192.168.7.2";
    char *const ids[] = {id0, id1};
    char *const hosts[] = {host0, host1};
    memset(s, 0, sizeof *s);
    s->g.protocol_type = ptype;
    s->g.generation = generation;
    s->g.state_ts = GRP_TS + generation;
    s->g.protocol = nmembers > 0 ? protocol : NULL;
    size_t n = nmembers < 2 ? nmembers : 2;
    for (size_t i = 0; i < n; i++) {
        struct grp_member *m = &s->m[i];
        struct kp_writer b;
        kp_wr_init_fixed(&b, s->sub[i], sizeof s->sub[i]);
        consumer_subscription(&b, "payments");
        s->proto[i].name = protocol;
        s->proto[i].metadata = s->sub[i];
        s->proto[i].metadata_len = (int32_t)b.len;
        kp_wr_init_fixed(&b, s->asg[i], sizeof s->asg[i]);
        consumer_assignment(&b, "payments", (int32_t)i * 2, 2);
        m->assignment = s->asg[i];
        m->assignment_len = (int32_t)b.len;
        m->id = ids[i];
        m->instance_id = i == 0 ? instance : NULL;
        m->client_id = client;
        m->client_host = hosts[i];
        m->rebalance_timeout_ms = 300000;
        m->session_timeout_ms = 10000;
        m->protocols = &s->proto[i];
        m->nprotocols = 1;
        s->members[i] = m;
    }
    s->g.members = s->members;
    s->g.nmembers = n;
    s->g.leader = n > 0 ? &s->m[0] : NULL;
}

/* Appends the broker's record for the group's metadata (or its tombstone). */
static void grp_group_record(struct kp_writer *seq, struct kp_str id, const struct grp_group *g)
{
    struct kp_writer w;
    kp_wr_init(&w, MAX_SEED);
    br_grp_enc_group_key(&w, id);
    size_t kend = w.len;
    if (g != NULL) {
        br_grp_enc_group_value(&w, g, 1000);
    }
    grp_frame(seq, w.buf, kend, w.buf + kend, w.len - kend, g == NULL);
    kp_wr_free(&w);
}

/* Appends the broker's record for a commit (or its tombstone). */
static void grp_offset_record(struct kp_writer *seq, struct kp_str id, const char *topic,
                              int32_t partition, const struct grp_offset *o)
{
    struct kp_writer w;
    kp_wr_init(&w, MAX_SEED);
    br_grp_enc_offset_key(&w, id, kp_str_c(topic), partition);
    size_t kend = w.len;
    if (o != NULL) {
        br_grp_enc_offset_value(&w, o, kp_str_c(""));
    }
    grp_frame(seq, w.buf, kend, w.buf + kend, w.len - kend, o == NULL);
    kp_wr_free(&w);
}

/* A sequence of records, applied directly (log_opts < 0) or loaded from a
 * log of batches made with log_opts (codec, control batches, records per
 * batch: see fuzz_group_records.c). */
static void write_grp_sequence(struct gen *g, const char *name, struct kp_writer *seq, int log_opts)
{
    if (seq->err != 0) {
        fail(g, "the records do not encode", name, seq->err);
        return;
    }
    uint8_t head[2] = {GRP_SEQUENCE, 0};
    if (log_opts >= 0) {
        head[0] |= GRP_THROUGH_LOG;
        head[1] = (uint8_t)log_opts;
    }
    write_seed(g, "group_records", name, head, log_opts >= 0 ? 2 : 1, seq->buf, seq->len);
}

/*
 * Seeds of fuzz_group_records: gen-*, records as the coordinator writes them
 * (br_grp_enc_*: offset commits v3 and v1, a group with members, an emptied
 * group, tombstones, and a group's life as a sequence); kafka-*, Kafka's
 * formats written out field by field: offset commit key v0/v1 with values
 * v0-v3, group values v0-v3 with two members, all of them as a sequence;
 * bad-*: one broken rule each.
 */
static void gen_group_records(struct gen *g)
{
    struct kp_str id = kp_str_c("payments-consumers");
    struct kp_writer w;
    kp_wr_init(&w, MAX_SEED);

    struct grp_offset o = {NULL, 3, 1200, 5, NULL, GRP_TS, -1, -1};
    br_grp_enc_offset_key(&w, id, kp_str_c("payments"), 3);
    size_t kend = w.len;
    br_grp_enc_offset_value(&w, &o, kp_str_c("{\"at\":\"worker-0\"}"));
    write_grp_single(g, "gen-offset-commit-v3.bin", &w, kend, false);
    write_grp_single(g, "gen-offset-tombstone.bin", &w, kend, true);
    kp_wr_reset(&w);
    struct grp_offset ox = {NULL, 0, 0, -1, NULL, GRP_TS, GRP_TS + 86400000, -1};
    br_grp_enc_offset_key(&w, kp_str_c(""), kp_str_c("t"), 0);
    kend = w.len;
    br_grp_enc_offset_value(&w, &ox, kp_str_c(""));
    write_grp_single(g, "gen-offset-commit-v1-expire-empty-group.bin", &w, kend, false);

    struct grp_seed_group sg;
    grp_seed_group_init(&sg, 12, 2);
    kp_wr_reset(&w);
    br_grp_enc_group_key(&w, id);
    kend = w.len;
    br_grp_enc_group_value(&w, &sg.g, GRP_TS);
    write_grp_single(g, "gen-group-two-members.bin", &w, kend, false);
    write_grp_single(g, "gen-group-tombstone.bin", &w, kend, true);
    grp_seed_group_init(&sg, 13, 0);
    kp_wr_reset(&w);
    br_grp_enc_group_key(&w, id);
    kend = w.len;
    br_grp_enc_group_value(&w, &sg.g, GRP_TS);
    write_grp_single(g, "gen-group-empty.bin", &w, kend, false);

    /* a group's life as the coordinator logs it: a generation, commits,
     * the next generation, re-commits, the group emptied, offsets expired,
     * the group deleted; then another group that only commits */
    struct kp_writer seq;
    kp_wr_init(&seq, MAX_SEED);
    grp_seed_group_init(&sg, 1, 2);
    grp_group_record(&seq, id, &sg.g);
    for (int32_t p = 0; p < 4; p++) {
        struct grp_offset c = {NULL, p, 100 + p, 5, NULL, GRP_TS + 5000, -1, -1};
        grp_offset_record(&seq, id, "payments", p, &c);
    }
    grp_seed_group_init(&sg, 2, 1);
    grp_group_record(&seq, id, &sg.g);
    struct grp_offset c2 = {NULL, 1, 250, 6, NULL, GRP_TS + 9000, -1, -1};
    grp_offset_record(&seq, id, "payments", 1, &c2);
    grp_seed_group_init(&sg, 3, 0);
    grp_group_record(&seq, id, &sg.g);
    for (int32_t p = 0; p < 4; p++) {
        grp_offset_record(&seq, id, "payments", p, NULL);
    }
    grp_group_record(&seq, id, NULL);
    struct grp_offset c3 = {NULL, 0, 7, -1, NULL, GRP_TS + 10000, GRP_TS + 20000, -1};
    grp_offset_record(&seq, kp_str_c("console-consumer-31337"), "audit_log", 0, &c3);
    write_grp_sequence(g, "gen-group-lifecycle.bin", &seq, -1);
    /* as the coordinator appends them: one batch per request */
    write_grp_sequence(g, "gen-group-lifecycle-log.bin", &seq, KP_CODEC_NONE | GRP_LOG_PER(4));

    /* Kafka's formats, every version */
    kp_wr_reset(&seq);
    char name[128];
    for (int16_t v = 0; v <= 3; v++) {
        kp_wr_reset(&w);
        kp_wr_i16(&w, v < 2 ? v : 1); /* offset commit key v0 for the old values */
        kp_wr_string(&w, kp_str_c("kafka-group"));
        kp_wr_string(&w, kp_str_c("orders"));
        kp_wr_i32(&w, v);
        kend = w.len;
        kafka_offset_value(&w, v, 1000 + v);
        (void)snprintf(name, sizeof name, "kafka-offset-key-v%d-value-v%d.bin", v < 2 ? v : 1, v);
        write_grp_single(g, name, &w, kend, false);
        grp_frame(&seq, w.buf, kend, w.buf + kend, w.len - kend, false);
    }
    for (int16_t v = 0; v <= 3; v++) {
        kp_wr_reset(&w);
        kp_wr_i16(&w, GRP_KEY_GROUP_V2);
        kp_wr_string(&w, kp_str_c("kafka-group"));
        kend = w.len;
        kafka_group_value(&w, v);
        (void)snprintf(name, sizeof name, "kafka-group-value-v%d.bin", v);
        write_grp_single(g, name, &w, kend, false);
        grp_frame(&seq, w.buf, kend, w.buf + kend, w.len - kend, false);
    }
    write_grp_sequence(g, "kafka-all-versions.bin", &seq, -1);
    write_grp_sequence(g, "kafka-all-versions-log-zstd-markers.bin", &seq,
                       KP_CODEC_ZSTD | GRP_LOG_CONTROL | GRP_LOG_PER(3));
    write_grp_sequence(g, "kafka-all-versions-log-gzip.bin", &seq, KP_CODEC_GZIP | GRP_LOG_PER(16));

    /* one broken rule each, in the last record (kafka-group-value-v3) */
    size_t members_at = kend;
    {
        struct kp_reader r;
        kp_rd_init(&r, w.buf + kend, w.len - kend);
        (void)kp_rd_i16(&r);
        (void)kp_rd_string(&r);
        (void)kp_rd_i32(&r);
        (void)kp_rd_string(&r);
        (void)kp_rd_string(&r);
        (void)kp_rd_i64(&r);
        members_at += r.off;
    }
    static const char *const bad[] = {
        "bad-key-version-3.bin",
        "bad-group-value-v4.bin",
        "bad-group-null.bin",
        "bad-key-cut.bin",
        "bad-value-cut-in-members.bin",
        "bad-members-count-huge.bin",
        "bad-members-count-negative.bin",
    };
    uint8_t *buf = malloc(w.len);
    for (size_t i = 0; buf != NULL && i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(buf, w.buf, w.len);
        size_t len = w.len;
        size_t klen = kend;
        switch (i) {
        case 0:
            kp_store_be16(buf, 3);
            break;
        case 1:
            kp_store_be16(buf + kend, 4);
            break;
        case 2: /* a null group: the key ends at its length */
            kp_store_be16(buf + 2, 0xffff);
            break;
        case 3:
            klen = 8;
            len = 8;
            break;
        case 4:
            len = members_at + 20;
            break;
        case 5:
            kp_store_be32(buf + members_at, 0x7fffffff);
            break;
        default:
            kp_store_be32(buf + members_at, 0xfffffffe);
            break;
        }
        uint8_t head[3] = {0, 0, 0};
        kp_store_be16(head + 1, (uint16_t)klen);
        write_seed(g, "group_records", bad[i], head, sizeof head, buf, len);
    }
    free(buf);
    /* offset commits: an unknown value version, a topic with a NUL byte */
    kp_wr_reset(&w);
    br_grp_enc_offset_key(&w, id, kp_str_c("payments"), 0);
    kend = w.len;
    kp_wr_i16(&w, 4);
    kp_wr_i64(&w, 1);
    write_grp_single(g, "bad-offset-value-v4.bin", &w, kend, false);
    kp_wr_reset(&w);
    br_grp_enc_offset_key(&w, id, (struct kp_str){"pay\0ments", 9}, 0);
    kend = w.len;
    br_grp_enc_offset_value(&w, &o, kp_str_c(""));
    write_grp_single(g, "bad-offset-topic-nul.bin", &w, kend, false);
    static const uint8_t null_key[] = {GRP_SEQUENCE, 0xff, 0xff, 0x00, 0x00};
    write_seed(g, "group_records", "bad-null-key.bin", null_key, sizeof null_key, NULL, 0);
    kp_wr_free(&seq);
    kp_wr_free(&w);
}

static void gen_broker(struct gen *g)
{
    static const char *const subs[] = {"metadata_file", "checkpoint", "segment_recovery", "index",
                                       "group_records"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        make_dir(g, subs[i]);
    }
    br_logging_set_level(BR_LOG_ERROR);
    gen_metadata_file(g);
    gen_checkpoint(g);
    gen_segment_recovery(g);
    gen_index(g);
    gen_group_records(g);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        (void)fprintf(stderr, "usage: fuzz-gen-seeds CORPUS_DIR [VECTORS_DIR]\n");
        return 2;
    }
    struct gen g = {argv[1], 0, 0, KP_BYTES_NULL};
    static const char *const subs[] = {"request", "response", "roundtrip", "record_batch",
                                       "compress"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        make_dir(&g, subs[i]);
    }

    /* the batch every Records field of the message seeds carries */
    struct kp_writer records;
    kp_wr_init(&records, MAX_SEED);
    int rc = build_batch(&records, KP_CODEC_NONE, 0, B_PLAIN, 2);
    if (rc != 0) {
        fail(&g, "the records batch does not build", "Records", rc);
    } else {
        g.records.ptr = records.buf;
        g.records.len = (int32_t)records.len;
    }

    gen_messages(&g);
    gen_batches(&g);
    gen_compress(&g);
    if (argc == 3) {
        gen_vectors(&g, argv[2]);
    }
    gen_broker(&g); /* after the record_batch seeds: the segments are made of them */
    kp_wr_free(&records);
    (void)fprintf(stderr, "fuzz-gen-seeds: %ld seeds written, %d failures\n", g.written,
                  g.failures);
    return g.failures == 0 ? 0 : 1;
}
