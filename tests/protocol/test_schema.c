/*
 * Round trips and malformed input for every API and version of the table:
 * a message filled with pseudo-random values for the fields of a version is
 * encoded, decoded, compared field by field and encoded again to the same
 * bytes; every truncation of the encoding fails cleanly.
 */
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include <stdio.h>
#include <string.h>

#include "cunit_run.h"
#include "torture.h"

struct rng {
    uint64_t s;
};

static uint64_t next(struct rng *g)
{
    /* xorshift64* */
    g->s ^= g->s >> 12;
    g->s ^= g->s << 25;
    g->s ^= g->s >> 27;
    return g->s * 0x2545F4914F6CDD1DULL;
}

static const char text_pool[] = "abcdefghijklmnopqrstuvwxyz-_.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

static void fill_struct(const struct kp_struct_desc *s, int16_t version, struct rng *g,
                        struct kp_arena *a, void *base, int depth);

static void fill_scalar(int type, bool nullable, struct rng *g, void *at)
{
    if (at == NULL) {
        return;
    }
    uint64_t r = next(g);
    switch (type) {
    case KP_T_BOOL: {
        bool v = (r & 1) != 0;
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_INT8: {
        int8_t v = (int8_t)r;
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_INT16: {
        int16_t v = (int16_t)r;
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_UINT16: {
        uint16_t v = (uint16_t)r;
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_INT32: {
        int32_t v = (int32_t)r;
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_INT64: {
        int64_t v = (int64_t)r;
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_FLOAT64: {
        double v = (double)(r % 100000) / 7.0;
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_UUID: {
        struct kp_uuid v;
        for (int i = 0; i < 16; i++) {
            v.b[i] = (uint8_t)(next(g) >> 11);
        }
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_STRING: {
        struct kp_str v;
        if (nullable && r % 5 == 0) {
            v = KP_STR_NULL;
        } else {
            size_t off = (size_t)(r >> 8) % (sizeof text_pool - 1);
            size_t len = (size_t)(r >> 20) % (sizeof text_pool - 1 - off);
            v.ptr = text_pool + off;
            v.len = (int32_t)len;
        }
        memcpy(at, &v, sizeof v);
        break;
    }
    case KP_T_BYTES:
    case KP_T_RECORDS: {
        struct kp_bytes v;
        if (nullable && r % 5 == 0) {
            v = KP_BYTES_NULL;
        } else {
            v.ptr = (const uint8_t *)text_pool;
            v.len = (int32_t)((r >> 8) % (sizeof text_pool - 1));
        }
        memcpy(at, &v, sizeof v);
        break;
    }
    default:
        break;
    }
}

static void fill_struct(const struct kp_struct_desc *s, int16_t version, struct rng *g,
                        struct kp_arena *a, void *base, int depth)
{
    if (base == NULL) {
        CU_FAIL("no memory for a message");
        return;
    }
    for (uint32_t i = 0; i < s->nfields; i++) {
        const struct kp_field *f = &s->fields[i];
        if (!kp_field_in(f, version)) {
            continue;
        }
        void *at = (uint8_t *)base + f->offset;
        bool nullable = kp_field_nullable(f, version);
        if (f->type != KP_T_ARRAY) {
            fill_scalar(f->type, nullable, g, at);
            continue;
        }
        struct kp_array_any arr = {NULL, 0};
        uint64_t r = next(g);
        if (nullable && r % 4 == 0) {
            arr.count = -1;
        } else {
            arr.count = (int32_t)(r % (depth == 0 ? 4u : 3u));
            size_t esize = f->sub != NULL ? f->sub->size : kp_type_size(f->elem);
            arr.items = kp_arena_alloc(a, (size_t)arr.count * esize + 1);
            if (arr.items == NULL) {
                CU_FAIL("arena exhausted");
                return;
            }
            for (int32_t j = 0; j < arr.count; j++) {
                void *item = (uint8_t *)arr.items + (size_t)j * esize;
                if (f->sub != NULL) {
                    kp_msg_init(&(struct kp_msg_desc){.body = f->sub}, item);
                    fill_struct(f->sub, version, g, a, item, depth + 1);
                } else {
                    fill_scalar(f->elem, false, g, item);
                }
            }
        }
        memcpy(at, &arr, sizeof arr);
    }
}

/* Encode a random message, decode it, compare, re-encode: same bytes.
 * Then every strict prefix of the encoding must fail to decode. */
static void round_trip(const struct kp_msg_desc *d, int16_t version, uint64_t seed)
{
    struct kp_arena a;
    kp_arena_init(&a, 1 << 22);
    struct rng g = {seed * 0x9E3779B97F4A7C15ULL + 1};
    void *msg = kp_arena_alloc(&a, d->body->size);
    void *back = kp_arena_alloc(&a, d->body->size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    kp_msg_init(d, msg);
    fill_struct(d->body, version, &g, &a, msg, 0);

    struct kp_writer w1;
    struct kp_writer w2;
    kp_wr_init(&w1, 1 << 20);
    kp_wr_init(&w2, 1 << 20);
    int err = kp_msg_encode(d, version, &w1, msg);
    if (err != 0) {
        fprintf(stderr, "\n%s v%d: encode failed: %s\n", d->name, version, kp_err_name(err));
    }
    CU_ASSERT_EQUAL_FATAL(err, 0);

    struct kp_reader r;
    kp_rd_init(&r, w1.buf, w1.len);
    err = kp_msg_decode(d, version, &r, &a, back);
    if (err != 0) {
        fprintf(stderr, "\n%s v%d: decode failed: %s at %s:%d\n", d->name, version,
                kp_err_name(err), r.err_file, r.err_line);
    }
    CU_ASSERT_EQUAL(err, 0);
    CU_ASSERT(kp_msg_equal(d, version, msg, back));
    CU_ASSERT_EQUAL(kp_msg_encode(d, version, &w2, back), 0);
    CU_ASSERT_EQUAL(w1.len, w2.len);
    CU_ASSERT(w1.len == w2.len && (w1.len == 0 || memcmp(w1.buf, w2.buf, w1.len) == 0));

    for (size_t cut = 0; cut < w1.len; cut++) {
        struct kp_arena a2;
        kp_arena_init(&a2, 1 << 22);
        void *tmp = kp_arena_alloc(&a2, d->body->size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
        kp_rd_init(&r, w1.buf, cut);
        err = kp_msg_decode(d, version, &r, &a2, tmp);
        if (err == 0) {
            fprintf(stderr, "\n%s v%d: a %zu-byte prefix of %zu decoded\n", d->name, version,
                    cut, w1.len);
        }
        CU_ASSERT_NOT_EQUAL(err, 0);
        kp_arena_free(&a2);
    }
    kp_wr_free(&w1);
    kp_wr_free(&w2);
    kp_arena_free(&a);
}

static void test_every_api_and_version_round_trips(void)
{
    unsigned checked = 0;
    for (size_t i = 0; i < kp_apis_count; i++) {
        const struct kp_api *api = &kp_apis[i];
        for (int16_t v = api->min_version; v <= api->max_version; v++) {
            for (uint64_t seed = 1; seed <= 8; seed++) {
                round_trip(api->request, v, seed + (uint64_t)api->key * 1000 + (uint64_t)v * 10);
                round_trip(api->response, v, seed + (uint64_t)api->key * 7777 + (uint64_t)v);
            }
            checked++;
        }
    }
    CU_ASSERT(checked >= kp_apis_count);
    printf("\n  %u API versions round-tripped (requests and responses)\n", checked);
}

/* One encoded message, decoded and encoded again under allocation torture. */
struct codec_case {
    const struct kp_msg_desc *d;
    int16_t version;
    const uint8_t *bytes;
    size_t len;
};

/* Decodes the case's bytes into a fresh arena and encodes them again;
 * returns the first error, KP_E_CORRUPT when the bytes differ. */
static int decode_and_encode(void *ctx)
{
    const struct codec_case *cc = ctx;
    struct kp_arena a;
    kp_arena_init(&a, 1 << 22);
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    int err = KP_E_NOMEM;
    void *msg = kp_arena_alloc(&a, cc->d->body->size);
    if (msg != NULL) {
        struct kp_reader r;
        kp_rd_init(&r, cc->bytes, cc->len);
        err = kp_msg_decode(cc->d, cc->version, &r, &a, msg);
    }
    if (err == 0) {
        err = kp_msg_encode(cc->d, cc->version, &w, msg);
    }
    if (err == 0 && (w.len != cc->len || (w.len > 0 && memcmp(w.buf, cc->bytes, w.len) != 0))) {
        err = KP_E_CORRUPT;
    }
    kp_wr_free(&w);
    kp_arena_free(&a);
    return err;
}

static unsigned long torture_one(const struct kp_msg_desc *d, int16_t version, uint64_t seed)
{
    struct kp_arena a;
    kp_arena_init(&a, 1 << 22);
    struct rng g = {seed * 0x9E3779B97F4A7C15ULL + 1};
    void *msg = kp_arena_alloc(&a, d->body->size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
    kp_msg_init(d, msg);
    fill_struct(d->body, version, &g, &a, msg, 0);
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    CU_ASSERT_EQUAL_FATAL(kp_msg_encode(d, version, &w, msg), 0);
    struct codec_case cc = {d, version, w.buf, w.len};
    char name[96];
    (void)snprintf(name, sizeof name, "%s v%d", d->name, version);
    unsigned long runs = st_torture_each_allocation(decode_and_encode, &cc, name);
    kp_wr_free(&w);
    kp_arena_free(&a);
    return runs;
}

static void test_every_api_and_version_survives_every_allocation_failure(void)
{
    /* decoding (the arena's chunks) and encoding (the writer's growth) of
     * every message the table knows, each allocation failing in turn */
    unsigned long runs = 0;
    for (size_t i = 0; i < kp_apis_count; i++) {
        const struct kp_api *api = &kp_apis[i];
        for (int16_t v = api->min_version; v <= api->max_version; v++) {
            runs += torture_one(api->request, v, (uint64_t)api->key * 1000 + (uint64_t)v * 10 + 1);
            runs += torture_one(api->response, v, (uint64_t)api->key * 7777 + (uint64_t)v + 1);
        }
    }
    printf("\n  %lu runs with an allocation failed\n", runs);
}

static void test_api_table_is_sorted_and_consistent(void)
{
    CU_ASSERT(kp_apis_count > 0);
    for (size_t i = 0; i < kp_apis_count; i++) {
        const struct kp_api *api = &kp_apis[i];
        if (i > 0) {
            CU_ASSERT(kp_apis[i - 1].key < api->key);
        }
        /* every API from version 0 but ControlledShutdown, v1 only (its v0
         * request header has no ClientId: see controlled_shutdown.kpm) */
        CU_ASSERT_EQUAL(api->min_version, api->key == KP_API_CONTROLLED_SHUTDOWN ? 1 : 0);
        CU_ASSERT(api->max_version >= api->min_version);
        CU_ASSERT_PTR_EQUAL(kp_api_find(api->key), api);
        CU_ASSERT_EQUAL(api->request->api_key, api->key);
        CU_ASSERT_EQUAL(api->response->api_key, api->key);
        CU_ASSERT(api->request->is_request);
        CU_ASSERT(!api->response->is_request);
    }
    CU_ASSERT_PTR_NULL(kp_api_find(-1));
    CU_ASSERT_PTR_NULL(kp_api_find(10000));
}

static void test_decode_rejects_unsupported_version(void)
{
    static const uint8_t empty[1] = {0};
    struct kp_arena a;
    kp_arena_init(&a, 4096);
    struct kp_ApiVersionsRequest req;
    struct kp_reader r;
    kp_rd_init(&r, empty, 0);
    CU_ASSERT_EQUAL(kp_ApiVersionsRequest_decode(&r, 4, &a, &req), KP_E_UNSUPPORTED);
    kp_rd_init(&r, empty, 0);
    CU_ASSERT_EQUAL(kp_ApiVersionsRequest_decode(&r, -1, &a, &req), KP_E_UNSUPPORTED);
    kp_arena_free(&a);
}

static void test_decode_rejects_trailing_bytes(void)
{
    static const uint8_t v0_plus_one[] = {0x00};
    struct kp_arena a;
    kp_arena_init(&a, 4096);
    struct kp_ApiVersionsRequest req;
    struct kp_reader r;
    kp_rd_init(&r, v0_plus_one, sizeof v0_plus_one);
    CU_ASSERT_EQUAL(kp_ApiVersionsRequest_decode(&r, 0, &a, &req), KP_E_TRAILING);
    kp_arena_free(&a);
}

static void test_encode_rejects_null_in_non_nullable_field(void)
{
    struct kp_ApiVersionsRequest req;
    kp_ApiVersionsRequest_init(&req);
    req.ClientSoftwareName = KP_STR_NULL;
    struct kp_writer w;
    kp_wr_init(&w, 1024);
    CU_ASSERT_EQUAL(kp_ApiVersionsRequest_encode(&w, 3, &req), KP_E_INVALID_ARG);
    kp_wr_free(&w);
}

static void test_api_versions_v3_response_uses_header_v0(void)
{
    /* a v3 body is flexible (compact array, tags) but its header has no tag
     * section: correlation id 7, error 0, one key, throttle 0, no tags */
    static const uint8_t expect[] = {
        0x00, 0x00, 0x00, 0x13,                   /* frame size 19 */
        0x00, 0x00, 0x00, 0x07,                   /* CorrelationId */
        0x00, 0x00,                               /* ErrorCode */
        0x02,                                     /* 1 entry, compact */
        0x00, 0x12, 0x00, 0x00, 0x00, 0x03, 0x00, /* key 18: 0-3, tags */
        0x00, 0x00, 0x00, 0x00,                   /* ThrottleTimeMs */
        0x00,                                     /* tags */
    };
    struct kp_ApiVersionsResponse_ApiVersion key = {18, 0, 3};
    struct kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    resp.ApiKeys.items = &key;
    resp.ApiKeys.count = 1;
    struct kp_writer w;
    kp_wr_init(&w, 1024);
    CU_ASSERT_EQUAL_FATAL(kp_response_encode(&w, 18, 3, 7, &resp), 0);
    CU_ASSERT_EQUAL(w.len, sizeof expect);
    CU_ASSERT(w.len == sizeof expect && memcmp(w.buf, expect, sizeof expect) == 0);
    kp_wr_free(&w);
}

static void test_frame_size_is_checked_before_allocation(void)
{
    static const uint8_t neg[] = {0x80, 0x00, 0x00, 0x00};
    static const uint8_t big[] = {0x10, 0x00, 0x00, 0x00};
    static const uint8_t ok[] = {0x00, 0x00, 0x00, 0x10};
    int32_t size = 0;
    CU_ASSERT_EQUAL(kp_frame_size(ok, 3, 1 << 20, &size), KP_AGAIN);
    CU_ASSERT_EQUAL(kp_frame_size(neg, 4, 1 << 20, &size), KP_E_BAD_LENGTH);
    CU_ASSERT_EQUAL(kp_frame_size(big, 4, 1 << 20, &size), KP_E_TOO_LARGE);
    CU_ASSERT_EQUAL(kp_frame_size(ok, 4, 1 << 20, &size), 0);
    CU_ASSERT_EQUAL(size, 16);
}

static void test_request_decode_reports_unknown_api_with_header(void)
{
    /* api 999 v0, correlation 42, client "c" */
    static const uint8_t in[] = {0x03, 0xe7, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a,
                                 0x00, 0x01, 'c'};
    struct kp_arena a;
    kp_arena_init(&a, 4096);
    struct kp_request req;
    CU_ASSERT_EQUAL(kp_request_decode(in, sizeof in, &a, &req), KP_E_UNSUPPORTED);
    CU_ASSERT_EQUAL(req.header.CorrelationId, 42);
    CU_ASSERT_PTR_NULL(req.api);
    kp_arena_free(&a);
}

static void test_request_header_null_client_id_reads_as_empty(void)
{
    /* ApiVersions v0, correlation 1, client id null */
    static const uint8_t in[] = {0x00, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff};
    struct kp_arena a;
    kp_arena_init(&a, 4096);
    struct kp_request req;
    CU_ASSERT_EQUAL(kp_request_decode(in, sizeof in, &a, &req), 0);
    CU_ASSERT_EQUAL(req.header.ClientId.len, 0);
    CU_ASSERT_EQUAL(req.header_version, 1);
    kp_arena_free(&a);
}

static void test_array_claims_cannot_exhaust_the_arena(void)
{
    /* ApiVersions response v0 claiming 10000 entries with 6 bytes present */
    static const uint8_t in[] = {0x00, 0x00, 0x00, 0x00, 0x27, 0x10, 0x00, 0x12, 0x00, 0x00,
                                 0x00, 0x03};
    struct kp_arena a;
    kp_arena_init(&a, 1 << 20);
    struct kp_ApiVersionsResponse resp;
    struct kp_reader r;
    kp_rd_init(&r, in, sizeof in);
    CU_ASSERT_EQUAL(kp_ApiVersionsResponse_decode(&r, 0, &a, &resp), KP_E_BAD_LENGTH);
    CU_ASSERT(a.used < 1024);
    kp_arena_free(&a);
}

static void test_format_renders_json(void)
{
    struct kp_ApiVersionsResponse_ApiVersion key = {18, 0, 3};
    struct kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    resp.ApiKeys.items = &key;
    resp.ApiKeys.count = 1;
    resp.ThrottleTimeMs = 5;
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    kp_msg_format(&kp_ApiVersionsResponse_desc, 1, &resp, &w);
    kp_wr_i8(&w, 0);
    CU_ASSERT_EQUAL_FATAL(w.err, 0);
    CU_ASSERT_STRING_EQUAL((const char *)w.buf,
                           "{\"ErrorCode\": 0, \"ApiKeys\": [{\"ApiKey\": 18, \"MinVersion\": 0, "
                           "\"MaxVersion\": 3}], \"ThrottleTimeMs\": 5}");
    kp_wr_free(&w);
}

static void test_error_names_and_texts(void)
{
    CU_ASSERT_STRING_EQUAL(kp_err_name(KP_ERR_UNSUPPORTED_COMPRESSION_TYPE),
                           "UNSUPPORTED_COMPRESSION_TYPE");
    CU_ASSERT_EQUAL(KP_ERR_UNSUPPORTED_COMPRESSION_TYPE, 76);
    CU_ASSERT_EQUAL(KP_ERR_MEMBER_ID_REQUIRED, 79);
    CU_ASSERT_STRING_EQUAL(kp_err_name(KP_E_TRUNCATED), "E_TRUNCATED");
    CU_ASSERT_STRING_EQUAL(kp_err_name(12345), "UNKNOWN_ERROR_CODE");
    CU_ASSERT(strlen(kp_err_str(KP_ERR_NOT_COORDINATOR)) > 0);
    CU_ASSERT_EQUAL(kp_err_to_wire(KP_ERR_UNKNOWN_SERVER_ERROR), -1);
    CU_ASSERT_EQUAL(kp_err_from_wire(-1), KP_ERR_UNKNOWN_SERVER_ERROR);
    CU_ASSERT_EQUAL(kp_err_to_wire(KP_E_CRC), -1);
}

struct splices {
    size_t at[4];
    int32_t len[4];
    size_t n;
};

static void record_splice(void *ctx, size_t at, int32_t len)
{
    struct splices *sp = ctx;
    if (sp->n < 4) {
        sp->at[sp->n] = at;
        sp->len[sp->n] = len;
        sp->n++;
    }
}

static void test_spliced_records_leave_room_for_file_bytes(void)
{
    /* a Fetch response whose records are "spliced": the encoder writes the
     * length, reports the position, and the bytes go out from elsewhere */
    static const uint8_t records[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    struct kp_FetchResponse_PartitionData part;
    struct kp_FetchResponse_FetchableTopicResponse topic;
    struct kp_FetchResponse resp;
    kp_FetchResponse_init(&resp);
    kp_msg_init(&(struct kp_msg_desc){.body = kp_FetchResponse_desc.body->fields[3].sub}, &topic);
    memset(&part, 0, sizeof part);
    part.HighWatermark = 10;
    part.PreferredReadReplica = -1;
    part.Records.ptr = records;
    part.Records.len = 10;
    topic.Topic = kp_str_c("t");
    topic.Partitions.items = &part;
    topic.Partitions.count = 1;
    resp.Responses.items = &topic;
    resp.Responses.count = 1;

    struct kp_writer whole;
    kp_wr_init(&whole, 4096);
    CU_ASSERT_EQUAL_FATAL(kp_FetchResponse_encode(&whole, 11, &resp), 0);

    part.Records.ptr = NULL; /* now spliced */
    struct splices sp = {{0}, {0}, 0};
    struct kp_splice_hook hook = {record_splice, &sp};
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    CU_ASSERT_EQUAL_FATAL(kp_msg_encode_spliced(&kp_FetchResponse_desc, 11, &w, &resp, &hook), 0);
    CU_ASSERT_EQUAL_FATAL(sp.n, 1);
    CU_ASSERT_EQUAL(sp.len[0], 10);
    /* the pieces around the splice plus the file bytes give the whole */
    CU_ASSERT_EQUAL_FATAL(w.len + 10, whole.len);
    CU_ASSERT_EQUAL(memcmp(w.buf, whole.buf, sp.at[0]), 0);
    CU_ASSERT_EQUAL(memcmp(whole.buf + sp.at[0], records, 10), 0);
    CU_ASSERT_EQUAL(memcmp(w.buf + sp.at[0], whole.buf + sp.at[0] + 10, w.len - sp.at[0]), 0);
    /* without a hook a spliced field cannot be encoded */
    struct kp_writer w2;
    kp_wr_init(&w2, 4096);
    CU_ASSERT_EQUAL(kp_FetchResponse_encode(&w2, 11, &resp), KP_E_INVALID_ARG);
    kp_wr_free(&w2);
    kp_wr_free(&w);
    kp_wr_free(&whole);
}

static CU_TestInfo tests[] = {
    {"spliced_records_leave_room_for_file_bytes",
     test_spliced_records_leave_room_for_file_bytes},
    {"api_table_is_sorted_and_consistent", test_api_table_is_sorted_and_consistent},
    {"every_api_and_version_round_trips", test_every_api_and_version_round_trips},
    {"every_api_and_version_survives_every_allocation_failure",
     test_every_api_and_version_survives_every_allocation_failure},
    {"decode_rejects_unsupported_version", test_decode_rejects_unsupported_version},
    {"decode_rejects_trailing_bytes", test_decode_rejects_trailing_bytes},
    {"encode_rejects_null_in_non_nullable_field", test_encode_rejects_null_in_non_nullable_field},
    {"api_versions_v3_response_uses_header_v0", test_api_versions_v3_response_uses_header_v0},
    {"frame_size_is_checked_before_allocation", test_frame_size_is_checked_before_allocation},
    {"request_decode_reports_unknown_api_with_header",
     test_request_decode_reports_unknown_api_with_header},
    {"request_header_null_client_id_reads_as_empty",
     test_request_header_null_client_id_reads_as_empty},
    {"array_claims_cannot_exhaust_the_arena", test_array_claims_cannot_exhaust_the_arena},
    {"format_renders_json", test_format_renders_json},
    {"error_names_and_texts", test_error_names_and_texts},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-schema", tests);
}
