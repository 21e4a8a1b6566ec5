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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/compress.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/record_batch.h>
#include <samsa-protocol/schema.h>

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

    /* a segment: batches of several codecs at increasing offsets */
    kp_wr_init(&w, MAX_SEED);
    int rc = 0;
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
    kp_wr_free(&records);
    (void)fprintf(stderr, "fuzz-gen-seeds: %ld seeds written, %d failures\n", g.written,
                  g.failures);
    return g.failures == 0 ? 0 : 1;
}
