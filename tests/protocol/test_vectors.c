/*
 * Request frames captured from real clients (vectors/<client>/, see
 * vectors/README.md): every frame decodes with the API and version its name
 * says and re-encodes to the very same bytes; the RecordBatch of every Produce
 * frame has a valid CRC, the codec its name says and the records the capture
 * script produced. Every .bin under vectors/ must be listed in the tables
 * below, and every file listed must be there.
 */
#define _POSIX_C_SOURCE 200809L

#include <samsa-protocol/compress.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>
#include <samsa-protocol/record_batch.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_run.h"

#define VECTORS_DIR "vectors"
#define FILE_MAX ((size_t)16 * 1024 * 1024)
#define ARENA_MAX ((size_t)64 * 1024 * 1024)

/* The value of every record the capture script produces follows
 * "<client> <tag> record <i> " with this text (see capture.sh). */
#define PAYLOAD_HALF                                                                               \
    "samsa vector payload samsa vector payload samsa vector payload samsa vector payload"
#define PAYLOAD PAYLOAD_HALF " " PAYLOAD_HALF

struct vector {
    const char *file;
    int16_t api_key;
    int16_t version;
};

/* A Produce frame: one topic, one partition, one RecordBatch whose records
 * are keyed "<client>-<tag>-<i>" for i in [0, records). */
struct produce_vector {
    const char *file;
    int codec;
    const char *tag;
    int32_t records;
    bool idempotent; /* ProducerId 1, epoch 0, sequence 0 (kp-capture's answer) */
};

struct client {
    const char *dir;       /* vectors/<dir>/ */
    const char *client_id; /* the ClientId of every frame */
    const struct vector *vectors;
    size_t nvectors;
    const struct produce_vector *produce;
    size_t nproduce;
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* kcat 1.7.1 (librdkafka 2.0.2). */
static const struct vector kcat_vectors[] = {
    {"ApiVersions-v3.bin", KP_API_API_VERSIONS, 3},
    {"Fetch-v11.bin", KP_API_FETCH, 11},
    {"FindCoordinator-v2.bin", KP_API_FIND_COORDINATOR, 2},
    {"Heartbeat-v3.bin", KP_API_HEARTBEAT, 3},
    {"InitProducerId-v1.bin", KP_API_INIT_PRODUCER_ID, 1},
    {"JoinGroup-v5.bin", KP_API_JOIN_GROUP, 5},
    {"LeaveGroup-v1.bin", KP_API_LEAVE_GROUP, 1},
    {"ListOffsets-v2.bin", KP_API_LIST_OFFSETS, 2},
    {"Metadata-v4.bin", KP_API_METADATA, 4},
    {"OffsetCommit-v7.bin", KP_API_OFFSET_COMMIT, 7},
    {"OffsetFetch-v5.bin", KP_API_OFFSET_FETCH, 5},
    {"Produce-v7-gzip.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-idempotent.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-lz4.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-none.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-snappy.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-zstd.bin", KP_API_PRODUCE, 7},
    {"SyncGroup-v3.bin", KP_API_SYNC_GROUP, 3},
};

static const struct produce_vector kcat_produce[] = {
    {"Produce-v7-none.bin", KP_CODEC_NONE, "none", 3, false},
    {"Produce-v7-gzip.bin", KP_CODEC_GZIP, "gzip", 3, false},
    {"Produce-v7-snappy.bin", KP_CODEC_SNAPPY, "snappy", 3, false},
    {"Produce-v7-lz4.bin", KP_CODEC_LZ4, "lz4", 3, false},
    {"Produce-v7-zstd.bin", KP_CODEC_ZSTD, "zstd", 3, false},
    {"Produce-v7-idempotent.bin", KP_CODEC_NONE, "idempotent", 1, true},
};

/* kafka-python 2.0.2. */
static const struct vector kafka_python_vectors[] = {
    {"ApiVersions-v0.bin", KP_API_API_VERSIONS, 0},
    {"CreateTopics-v3.bin", KP_API_CREATE_TOPICS, 3},
    {"DeleteTopics-v3.bin", KP_API_DELETE_TOPICS, 3},
    {"Fetch-v4.bin", KP_API_FETCH, 4},
    {"FindCoordinator-v0.bin", KP_API_FIND_COORDINATOR, 0},
    {"Heartbeat-v1.bin", KP_API_HEARTBEAT, 1},
    {"JoinGroup-v2.bin", KP_API_JOIN_GROUP, 2},
    {"LeaveGroup-v1.bin", KP_API_LEAVE_GROUP, 1},
    {"ListOffsets-v1.bin", KP_API_LIST_OFFSETS, 1},
    {"Metadata-v0.bin", KP_API_METADATA, 0},
    {"Metadata-v1.bin", KP_API_METADATA, 1},
    {"Metadata-v5.bin", KP_API_METADATA, 5},
    {"OffsetCommit-v2.bin", KP_API_OFFSET_COMMIT, 2},
    {"OffsetFetch-v1.bin", KP_API_OFFSET_FETCH, 1},
    {"Produce-v7-gzip.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-lz4.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-none.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-snappy.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-zstd.bin", KP_API_PRODUCE, 7},
    {"SyncGroup-v1.bin", KP_API_SYNC_GROUP, 1},
};

static const struct produce_vector kafka_python_produce[] = {
    {"Produce-v7-none.bin", KP_CODEC_NONE, "none", 3, false},
    {"Produce-v7-gzip.bin", KP_CODEC_GZIP, "gzip", 3, false},
    {"Produce-v7-snappy.bin", KP_CODEC_SNAPPY, "snappy", 3, false}, /* xerial framing */
    {"Produce-v7-lz4.bin", KP_CODEC_LZ4, "lz4", 3, false},
    {"Produce-v7-zstd.bin", KP_CODEC_ZSTD, "zstd", 3, false},
};

/* kafkajs 2.2.4. */
static const struct vector kafkajs_vectors[] = {
    {"ApiVersions-v2.bin", KP_API_API_VERSIONS, 2},
    {"CreateTopics-v3.bin", KP_API_CREATE_TOPICS, 3},
    {"DeleteTopics-v1.bin", KP_API_DELETE_TOPICS, 1},
    {"Fetch-v11.bin", KP_API_FETCH, 11},
    {"FindCoordinator-v2.bin", KP_API_FIND_COORDINATOR, 2},
    {"Heartbeat-v3.bin", KP_API_HEARTBEAT, 3},
    {"InitProducerId-v1.bin", KP_API_INIT_PRODUCER_ID, 1},
    {"JoinGroup-v5.bin", KP_API_JOIN_GROUP, 5},
    {"LeaveGroup-v3.bin", KP_API_LEAVE_GROUP, 3},
    {"ListOffsets-v3.bin", KP_API_LIST_OFFSETS, 3},
    {"Metadata-v6.bin", KP_API_METADATA, 6},
    {"OffsetCommit-v5.bin", KP_API_OFFSET_COMMIT, 5},
    {"OffsetFetch-v4.bin", KP_API_OFFSET_FETCH, 4},
    {"Produce-v7-gzip.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-idempotent.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-lz4.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-none.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-snappy.bin", KP_API_PRODUCE, 7},
    {"Produce-v7-zstd.bin", KP_API_PRODUCE, 7},
    {"SyncGroup-v3.bin", KP_API_SYNC_GROUP, 3},
};

static const struct produce_vector kafkajs_produce[] = {
    {"Produce-v7-none.bin", KP_CODEC_NONE, "none", 3, false},
    {"Produce-v7-gzip.bin", KP_CODEC_GZIP, "gzip", 3, false},
    {"Produce-v7-snappy.bin", KP_CODEC_SNAPPY, "snappy", 3, false},
    {"Produce-v7-lz4.bin", KP_CODEC_LZ4, "lz4", 3, false},
    {"Produce-v7-zstd.bin", KP_CODEC_ZSTD, "zstd", 3, false},
    {"Produce-v7-idempotent.bin", KP_CODEC_NONE, "idempotent", 1, true},
};

static const struct client kcat = {
    .dir = "kcat",
    .client_id = "rdkafka",
    .vectors = kcat_vectors,
    .nvectors = N(kcat_vectors),
    .produce = kcat_produce,
    .nproduce = N(kcat_produce),
};
static const struct client kafka_python = {
    .dir = "kafka-python",
    .client_id = "kafka-python",
    .vectors = kafka_python_vectors,
    .nvectors = N(kafka_python_vectors),
    .produce = kafka_python_produce,
    .nproduce = N(kafka_python_produce),
};
static const struct client kafkajs = {
    .dir = "kafkajs",
    .client_id = "kafkajs",
    .vectors = kafkajs_vectors,
    .nvectors = N(kafkajs_vectors),
    .produce = kafkajs_produce,
    .nproduce = N(kafkajs_produce),
};

static const struct client *const clients[] = {&kcat, &kafka_python, &kafkajs};

/* ------------------------------------------------------------------ helpers */

/* An assertion whose failure names the vector it is about (CUnit copies the
 * text). Returns `ok`. */
static bool check_at(bool ok, const char *what, const char *path, unsigned line)
{
    char msg[600];
    (void)snprintf(msg, sizeof msg, "%.280s: %.300s", path, what);
    (void)CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, line, msg, __FILE__, "", CU_FALSE);
    return ok;
}
#define CHECK(ok, path) check_at((ok), #ok, (path), __LINE__)

static void vector_path(char *out, size_t n, const struct client *c, const char *file)
{
    (void)snprintf(out, n, "%s/%s/%s", VECTORS_DIR, c->dir, file);
}

/* The whole file, or NULL (caller frees with free). */
static uint8_t *load(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    uint8_t *buf = malloc(FILE_MAX);
    size_t n = buf != NULL ? fread(buf, 1, FILE_MAX, f) : 0;
    bool bad = ferror(f) != 0 || !feof(f);
    (void)fclose(f);
    if (buf == NULL || bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* A loaded vector whose frame size matches and whose request decoded. */
struct decoded {
    uint8_t *frame;
    size_t len;
    struct kp_arena arena;
    struct kp_request req;
};

static bool decode_vector(const struct client *c, const char *file, int16_t key, int16_t version,
                          const char *path, struct decoded *d)
{
    memset(d, 0, sizeof *d);
    kp_arena_init(&d->arena, ARENA_MAX);
    d->frame = load(path, &d->len);
    if (!CHECK(d->frame != NULL, path)) {
        return false;
    }
    int32_t size = -1;
    if (!CHECK(kp_frame_size(d->frame, d->len, (int32_t)FILE_MAX, &size) == 0, path) ||
        !CHECK((size_t)size + 4 == d->len, path)) {
        return false;
    }
    int err = kp_request_decode(d->frame + 4, d->len - 4, &d->arena, &d->req);
    if (err != 0) {
        (void)fprintf(stderr, "  %s: %s (%s)\n", path, kp_err_name(err), file);
    }
    if (!CHECK(err == 0, path)) {
        return false;
    }
    bool ok = CHECK(d->req.header.RequestApiKey == key, path);
    ok = CHECK(d->req.header.RequestApiVersion == version, path) && ok;
    ok = CHECK(kp_str_eq_c(d->req.header.ClientId, c->client_id), path) && ok;
    return ok;
}

static void decoded_free(struct decoded *d)
{
    free(d->frame);
    kp_arena_free(&d->arena);
}

/* ------------------------------------------------------------- re-encoding */

static void check_reencodes(const struct client *c, const struct vector *v)
{
    char path[256];
    vector_path(path, sizeof path, c, v->file);
    struct decoded d;
    if (decode_vector(c, v->file, v->api_key, v->version, path, &d)) {
        struct kp_writer w;
        kp_wr_init(&w, FILE_MAX);
        CHECK(kp_request_encode(&w, &d.req.header, d.req.body) == 0, path);
        CHECK(w.len == d.len, path);
        bool same = w.len == d.len && w.err == 0 && memcmp(w.buf, d.frame, d.len) == 0;
        if (!same && w.err == 0) {
            size_t at = 0;
            while (at < w.len && at < d.len && w.buf[at] == d.frame[at]) {
                at++;
            }
            (void)fprintf(stderr,
                          "  %s: re-encoded %zu bytes, captured %zu, first difference at %zu\n",
                          path, w.len, d.len, at);
        }
        CHECK(same, path);
        kp_wr_free(&w);
    }
    decoded_free(&d);
}

static void check_client_reencodes(const struct client *c)
{
    for (size_t i = 0; i < c->nvectors; i++) {
        check_reencodes(c, &c->vectors[i]);
    }
}

static void test_kcat_requests_reencode_identically(void)
{
    check_client_reencodes(&kcat);
}

static void test_kafka_python_requests_reencode_identically(void)
{
    check_client_reencodes(&kafka_python);
}

static void test_kafkajs_requests_reencode_identically(void)
{
    check_client_reencodes(&kafkajs);
}

/* ------------------------------------------------------------ record batches */

static bool bytes_eq_c(struct kp_bytes b, const char *s)
{
    size_t n = strlen(s);
    return b.len >= 0 && (size_t)b.len == n && (n == 0 || memcmp(b.ptr, s, n) == 0);
}

/* The records of a batch are those the capture script produced. */
static void check_records(const struct client *c, const struct produce_vector *p,
                          const struct kp_bytes batch, const struct kp_batch_header *h,
                          const char *path)
{
    struct kp_batch_iter it;
    int err = kp_batch_iter_init(&it, batch.ptr, (size_t)batch.len, FILE_MAX);
    if (CHECK(err == 0, path)) {
        for (int32_t i = 0; i < p->records; i++) {
            char key[128];
            char value[512];
            (void)snprintf(key, sizeof key, "%s-%s-%d", c->dir, p->tag, (int)i);
            (void)snprintf(value, sizeof value, "%s %s record %d %s", c->dir, p->tag, (int)i,
                           PAYLOAD);
            struct kp_record rec;
            if (!CHECK(kp_batch_iter_next(&it, &rec) == 0, path)) {
                break;
            }
            CHECK(rec.Offset == h->BaseOffset + i, path);
            CHECK(bytes_eq_c(rec.Key, key), path);
            CHECK(bytes_eq_c(rec.Value, value), path);
            CHECK(rec.HeaderCount == 1, path);
            struct kp_header_iter hi;
            struct kp_record_header hdr;
            kp_record_headers_init(&hi, &rec);
            if (CHECK(kp_record_header_next(&hi, &hdr) == 0, path)) {
                CHECK(kp_str_eq_c(hdr.Key, "samsa-header"), path);
                CHECK(bytes_eq_c(hdr.Value, p->tag), path);
            }
        }
        struct kp_record end;
        CHECK(kp_batch_iter_next(&it, &end) == KP_ITER_END, path);
    }
    kp_batch_iter_free(&it);
}

static void check_produce(const struct client *c, const struct produce_vector *p)
{
    char path[256];
    vector_path(path, sizeof path, c, p->file);
    struct decoded d;
    if (!decode_vector(c, p->file, KP_API_PRODUCE, 7, path, &d)) {
        decoded_free(&d);
        return;
    }
    const struct kp_ProduceRequest *req = d.req.body;
    if (!CHECK(req->TopicData.count == 1, path) ||
        !CHECK(req->TopicData.items[0].PartitionData.count == 1, path)) {
        decoded_free(&d);
        return;
    }
    CHECK(kp_str_eq_c(req->TopicData.items[0].Name, "samsa-vectors"), path);
    struct kp_bytes records = req->TopicData.items[0].PartitionData.items[0].Records;
    struct kp_batch_header h;
    size_t size = 0;
    if (CHECK(records.len > 0, path) &&
        CHECK(kp_batch_parse(records.ptr, (size_t)records.len, &h, &size) == 0, path) &&
        CHECK(size == (size_t)records.len, path)) { /* exactly one batch, CRC valid */
        CHECK(h.Magic == KP_BATCH_MAGIC, path);
        CHECK(kp_batch_codec(&h) == p->codec, path);
        CHECK(h.RecordCount == p->records, path);
        CHECK(h.LastOffsetDelta == p->records - 1, path);
        CHECK(!kp_batch_is_transactional(&h) && !kp_batch_is_control(&h), path);
        if (p->idempotent) {
            CHECK(h.ProducerId == 1 && h.ProducerEpoch == 0 && h.BaseSequence == 0, path);
        } else {
            CHECK(h.ProducerId == -1, path);
        }
        check_records(c, p, records, &h, path);
    }
    decoded_free(&d);
}

static void check_client_produce(const struct client *c)
{
    for (size_t i = 0; i < c->nproduce; i++) {
        check_produce(c, &c->produce[i]);
    }
}

static void test_kcat_produce_batches_hold_the_records_sent_with_each_codec(void)
{
    check_client_produce(&kcat);
}

static void test_kafka_python_produce_batches_hold_the_records_sent_with_each_codec(void)
{
    check_client_produce(&kafka_python);
}

static void test_kafkajs_produce_batches_hold_the_records_sent_with_each_codec(void)
{
    check_client_produce(&kafkajs);
}

/* ------------------------------------------------------------ the file list */

static const struct client *client_named(const char *dir)
{
    for (size_t i = 0; i < N(clients); i++) {
        if (strcmp(clients[i]->dir, dir) == 0) {
            return clients[i];
        }
    }
    return NULL;
}

static bool listed(const struct client *c, const char *file)
{
    for (size_t i = 0; i < c->nvectors; i++) {
        if (strcmp(c->vectors[i].file, file) == 0) {
            return true;
        }
    }
    return false;
}

static bool is_bin(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".bin") == 0;
}

/* Every client folder under vectors/ is known and every .bin in it is in the
 * tables above (the tables' files must exist: the other tests open them). */
static void test_every_captured_vector_is_listed(void)
{
    DIR *top = opendir(VECTORS_DIR);
    if (!CHECK(top != NULL, VECTORS_DIR)) {
        return;
    }
    size_t seen = 0;
    for (const struct dirent *e = readdir(top); e != NULL; e = readdir(top)) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) {
            continue;
        }
        char dirpath[256];
        (void)snprintf(dirpath, sizeof dirpath, "%s/%.200s", VECTORS_DIR, e->d_name);
        const struct client *c = client_named(e->d_name);
        if (!CHECK(c != NULL, dirpath)) {
            continue;
        }
        DIR *sub = opendir(dirpath);
        if (!CHECK(sub != NULL, dirpath)) {
            continue;
        }
        for (const struct dirent *f = readdir(sub); f != NULL; f = readdir(sub)) {
            if (f->d_name[0] == '.') {
                continue;
            }
            char path[512];
            (void)snprintf(path, sizeof path, "%.220s/%.200s", dirpath, f->d_name);
            CHECK(is_bin(f->d_name) && listed(c, f->d_name), path);
            seen++;
        }
        (void)closedir(sub);
    }
    (void)closedir(top);
    size_t want = 0;
    for (size_t i = 0; i < N(clients); i++) {
        want += clients[i]->nvectors;
    }
    CHECK(seen == want, VECTORS_DIR);
}

/* The minimum: these requests from every client, and a Produce with
 * every codec the client supports (all five, for all three clients). */
static void test_every_client_has_the_required_requests_and_codecs(void)
{
    static const int16_t required[] = {
        KP_API_API_VERSIONS, KP_API_METADATA,         KP_API_PRODUCE,
        KP_API_FETCH,        KP_API_FIND_COORDINATOR, KP_API_JOIN_GROUP,
    };
    for (size_t i = 0; i < N(clients); i++) {
        const struct client *c = clients[i];
        for (size_t k = 0; k < N(required); k++) {
            bool found = false;
            for (size_t j = 0; j < c->nvectors; j++) {
                found = found || c->vectors[j].api_key == required[k];
            }
            CHECK(found, c->dir);
        }
        for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_ZSTD; codec++) {
            bool found = false;
            for (size_t j = 0; j < c->nproduce; j++) {
                found = found || c->produce[j].codec == codec;
            }
            CHECK(found, c->dir);
        }
    }
}

/* What the ApiVersions v3 of librdkafka carries in its flexible body. */
static void test_kcat_api_versions_v3_names_librdkafka_2_0_2(void)
{
    char path[256];
    vector_path(path, sizeof path, &kcat, "ApiVersions-v3.bin");
    struct decoded d;
    if (decode_vector(&kcat, "ApiVersions-v3.bin", KP_API_API_VERSIONS, 3, path, &d)) {
        const struct kp_ApiVersionsRequest *req = d.req.body;
        CHECK(d.req.header_version == 2, path);
        CHECK(kp_str_eq_c(req->ClientSoftwareName, "librdkafka"), path);
        CHECK(kp_str_eq_c(req->ClientSoftwareVersion, "2.0.2"), path);
    }
    decoded_free(&d);
}

/* kafka-python's version probe asks for all topics with an empty v0 array. */
static void test_kafka_python_metadata_v0_probe_asks_for_all_topics(void)
{
    char path[256];
    vector_path(path, sizeof path, &kafka_python, "Metadata-v0.bin");
    struct decoded d;
    if (decode_vector(&kafka_python, "Metadata-v0.bin", KP_API_METADATA, 0, path, &d)) {
        const struct kp_MetadataRequest *req = d.req.body;
        CHECK(req->Topics.count == 0, path);
    }
    decoded_free(&d);
}

/* JoinGroup metadata is opaque BYTES: every client offers a "consumer" protocol
 * with non-empty metadata. */
static void check_join_group(const struct client *c, const char *file, int16_t version)
{
    char path[256];
    vector_path(path, sizeof path, c, file);
    struct decoded d;
    if (decode_vector(c, file, KP_API_JOIN_GROUP, version, path, &d)) {
        const struct kp_JoinGroupRequest *req = d.req.body;
        CHECK(kp_str_eq_c(req->ProtocolType, "consumer"), path);
        if (CHECK(req->Protocols.count >= 1, path)) {
            CHECK(req->Protocols.items[0].Metadata.len > 0, path);
        }
    }
    decoded_free(&d);
}

static void test_join_group_requests_offer_consumer_protocols_with_metadata(void)
{
    check_join_group(&kcat, "JoinGroup-v5.bin", 5);
    check_join_group(&kafka_python, "JoinGroup-v2.bin", 2);
    check_join_group(&kafkajs, "JoinGroup-v5.bin", 5);
}

static CU_TestInfo tests[] = {
    {"test_every_captured_vector_is_listed", test_every_captured_vector_is_listed},
    {"test_every_client_has_the_required_requests_and_codecs",
     test_every_client_has_the_required_requests_and_codecs},
    {"test_kcat_requests_reencode_identically", test_kcat_requests_reencode_identically},
    {"test_kafka_python_requests_reencode_identically",
     test_kafka_python_requests_reencode_identically},
    {"test_kafkajs_requests_reencode_identically", test_kafkajs_requests_reencode_identically},
    {"test_kcat_produce_batches_hold_the_records_sent_with_each_codec",
     test_kcat_produce_batches_hold_the_records_sent_with_each_codec},
    {"test_kafka_python_produce_batches_hold_the_records_sent_with_each_codec",
     test_kafka_python_produce_batches_hold_the_records_sent_with_each_codec},
    {"test_kafkajs_produce_batches_hold_the_records_sent_with_each_codec",
     test_kafkajs_produce_batches_hold_the_records_sent_with_each_codec},
    {"test_kcat_api_versions_v3_names_librdkafka_2_0_2",
     test_kcat_api_versions_v3_names_librdkafka_2_0_2},
    {"test_kafka_python_metadata_v0_probe_asks_for_all_topics",
     test_kafka_python_metadata_v0_probe_asks_for_all_topics},
    {"test_join_group_requests_offer_consumer_protocols_with_metadata",
     test_join_group_requests_offer_consumer_protocols_with_metadata},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-vectors", tests);
}
