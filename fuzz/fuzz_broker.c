/*
 * fuzz_broker: the broker core, stateful, in process. Each input is a
 * sequence of operations played against a fresh broker (its own log dir
 * under $TMPDIR, no listener: requests go through in-process connections,
 * br_conn_local_new) while a model of what was acknowledged is kept, and
 * every answer is checked against it.
 *
 * Input: a stream of operations, each an opcode byte and its parameters
 * (bytes past the end read as 0); at most MAX_OPS per input.
 *   produce      Produce v3-7 of 1-16 records (codec, keys, timestamps,
 *                acks 1/all/0, idempotent once a producer id is known)
 *   resend       the last idempotent batch of a partition, again
 *   fetch        Fetch v4-11 (MaxWaitMs 0) from an acknowledged offset,
 *                the end, 0 or anywhere, with small or large limits
 *   offsets      ListOffsets v1-3: earliest, latest and by timestamp
 *   delete_recs  DeleteRecords v0-1
 *   create       CreateTopics v0-4 (partitions, replication factor,
 *                configs such as segment.bytes 200 or retention.ms 1)
 *   delete       DeleteTopics v0-3
 *   alter        IncrementalAlterConfigs of a topic
 *   init_pid     InitProducerId v0-1
 *   metadata     Metadata v0-6
 *   commit       OffsetCommit v2-7 (generation -1) and OffsetFetch v1-5
 *   housekeeping the broker's periodic work now (flush, retention,
 *                checkpoints)
 *   restart      a clean stop and a start on the same directory
 *   raw          a frame of the input's bytes, on a second connection (not
 *                sent if it is a CreateTopics or CreatePartitions for more
 *                than RAW_MAX_NEW_PARTITIONS partitions: see raw_expect)
 *
 * Checks, beyond "no crash, no sanitizer report, no leak":
 *   - a well-formed request is answered at once (nothing here waits; a
 *     CreateTopics or DeleteTopics once the mailbox brought back its jobs,
 *     which run inline), in order, with its correlation id, in bytes the
 *     client's decoder takes, and never closes the connection (but an
 *     acks=0 Produce that fails, which closes it as Kafka does: the client
 *     then opens another);
 *   - on the raw connection every answer decodes for the request it answers,
 *     in order, and a malformed frame closes only that connection;
 *   - offsets increase: each acknowledged base offset is at or past the end
 *     of the previous acknowledged batch of its partition;
 *   - the high watermark and the LEO (ListOffsets latest) are at or past
 *     every acknowledged offset; the log start offset never goes back
 *     (DeleteRecords, retention, restarts) and stays <= the HW;
 *   - a Fetch below the HW and at or past the log start returns the batch
 *     holding the offset asked for; every record returned is below the HW,
 *     in increasing offsets, and an acknowledged record has the value it was
 *     produced with (nothing acknowledged is lost or changed, restarts
 *     included);
 *   - an idempotent batch sent again is not appended again;
 *   - an InitProducerId without a transactional id (the only kind sent:
 *     the broker offers no transactions) returns an id >= 0 never handed
 *     out before in this input, restarts included, and epoch 0, as Kafka
 *     2.0's TransactionCoordinator.handleInitProducerId does;
 *   - a committed offset reads back, restarts included.
 * A DeleteTopics (structured or raw) forgets the model of the topics it
 * names; a raw request that can change committed offsets forgets those.
 * The log cleaner is off (its threads would make runs irreproducible).
 */
#define _GNU_SOURCE

#include "fuzz.h"
#include "fuzz_tmp.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/compress.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>
#include <samsa-protocol/record_batch.h>

#include "base/logging.h"
#include "broker.h"
#include "reactor/net.h"
#include "server/topic_admin.h"

#define MAX_OPS 40
#define NTOPICS 4
#define MAX_PARTS 4
#define MAX_ACKED 1024
#define NGROUPS 2
#define RAW_MAX 4096
#define RAW_MAX_NEW_PARTITIONS 64
#define EXPECT_MAX 64
#define PIDS_MAX 64 /* producer ids remembered per input (MAX_OPS bounds them) */
#define ARENA_MAX ((size_t)64 * 1024 * 1024)

/* t.x and t_x collide in Kafka's metric names: creating both is refused. */
static const char *const topic_names[NTOPICS] = {"t0", "t1", "t.x", "t_x"};

struct acked {
    int64_t offset;
    uint32_t crc; /* of the value */
};

struct mpart {
    int64_t acked_end;   /* one past the last acknowledged offset, 0 when none */
    int64_t start_floor; /* the log start offset seen last (never goes back) */
    struct acked rec[MAX_ACKED];
    size_t n;
    int32_t next_seq; /* idempotent producer: the next sequence */
    uint8_t *last;    /* the last idempotent batch sent, for resend */
    size_t last_len;
    int64_t last_base; /* its acknowledged base offset */
    int32_t last_count;
};

struct mtopic {
    struct mpart parts[MAX_PARTS];
};

struct commit {
    bool known; /* the model knows what the broker holds */
    int64_t offset;
};

struct expect {
    int32_t corr;
    int16_t api;
    int16_t version;
};

static struct {
    struct br_broker b;
    bool started;
    char root[128];
    struct br_conn *main;
    struct br_conn *raw;
    int32_t corr;
    struct mtopic topics[NTOPICS];
    struct commit commits[NGROUPS][NTOPICS][MAX_PARTS];
    int64_t pid;
    int16_t epoch;
    int64_t pids[PIDS_MAX]; /* every producer id handed out in this input */
    size_t npids;
    uint32_t value_counter;
    struct expect expect[EXPECT_MAX];
    size_t nexpect;
} h;

struct input {
    const uint8_t *p;
    size_t n;
    size_t i;
};

static uint8_t in_u8(struct input *in)
{
    return in->i < in->n ? in->p[in->i++] : 0;
}

static uint16_t in_u16(struct input *in)
{
    uint16_t hi = in_u8(in);
    return (uint16_t)(hi << 8 | in_u8(in));
}

/* ---------------------------------------------------------------- files */

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_tree(const char *path)
{
    (void)nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---------------------------------------------------------------- broker */

static void broker_start(void)
{
    struct br_config cfg = h.b.s.cfg;
    memset(&h.b, 0, sizeof h.b);
    h.b.s.cfg = cfg;
    h.b.s.in_process = true;
    int rc = br_broker_start(&h.b);
    fuzz_check(rc == 0, "the broker did not start", rc);
    /* br_net_create blocks these for its signalfd: let them stop the fuzzer */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    (void)sigprocmask(SIG_UNBLOCK, &mask, NULL);
    h.started = true;
    h.main = br_conn_local_new(h.b.s.net, "fuzz-main");
    h.raw = br_conn_local_new(h.b.s.net, "fuzz-raw");
    fuzz_check(h.main != NULL && h.raw != NULL, "out of memory", 0);
}

static void raw_drain(bool closing);

static void broker_stop(void)
{
    if (!h.started) {
        return;
    }
    br_broker_complete_all_parked(&h.b);
    raw_drain(true);
    br_conn_local_free(h.main);
    br_conn_local_free(h.raw);
    h.main = NULL;
    h.raw = NULL;
    br_broker_stop(&h.b);
    h.started = false;
}

/* ---------------------------------------------------------------- model */

static struct mpart *mpart_of(int t, int32_t p)
{
    return t >= 0 && p >= 0 && p < MAX_PARTS ? &h.topics[t].parts[p] : NULL;
}

static void forget_topic(int t)
{
    for (int p = 0; p < MAX_PARTS; p++) {
        kp_free(h.topics[t].parts[p].last);
    }
    memset(&h.topics[t], 0, sizeof h.topics[t]);
    for (int g = 0; g < NGROUPS; g++) {
        for (int p = 0; p < MAX_PARTS; p++) {
            h.commits[g][t][p].known = false;
        }
    }
}

static int topic_index(struct kp_str name)
{
    for (int t = 0; t < NTOPICS; t++) {
        if (kp_str_eq_c(name, topic_names[t])) {
            return t;
        }
    }
    return -1;
}

static const struct acked *find_acked(const struct mpart *m, int64_t offset)
{
    size_t lo = 0;
    size_t hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->rec[mid].offset < offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < m->n && m->rec[lo].offset == offset ? &m->rec[lo] : NULL;
}

/* ---------------------------------------------------------------- requests */

/* The versions of an API the broker serves; false when it serves none. */
static bool api_versions(int16_t key, int16_t *min, int16_t *max)
{
    for (size_t i = 0; i < h.b.s.api.nversions; i++) {
        if (h.b.s.api.versions[i].ApiKey == key) {
            *min = h.b.s.api.versions[i].MinVersion;
            *max = h.b.s.api.versions[i].MaxVersion;
            return true;
        }
    }
    *min = 0;
    *max = -1;
    return false;
}

/* Encodes and sends a request on the main connection; its answer must be
 * there at once. Returns the decoded response body (in arena), or NULL when
 * no answer is due (acks=0). */
static void *call(int16_t api, int16_t version, const void *body, struct kp_arena *arena,
                  bool answered)
{
    struct kp_request_header hdr = {api, version, ++h.corr, kp_str_c("fuzz-broker")};
    struct kp_writer w;
    kp_wr_init(&w, ARENA_MAX);
    int rc = kp_request_encode(&w, &hdr, body);
    fuzz_check(rc == 0, "a request did not encode", rc);
    rc = br_conn_local_feed(h.main, w.buf, w.len);
    kp_wr_free(&w);
    if (!answered && rc == 0 && br_conn_local_closed(h.main)) {
        /* an acks=0 Produce that failed closes the connection, as Kafka's
         * does (the producer then reconnects): so does this client */
        size_t left = 0;
        (void)br_conn_local_output(h.main, &left);
        fuzz_check(left == 0, "an answer to acks=0", (int)left);
        br_conn_local_free(h.main);
        h.main = br_conn_local_new(h.b.s.net, "fuzz-main");
        fuzz_check(h.main != NULL, "out of memory", 0);
        return NULL;
    }
    fuzz_check(rc == 0 && !br_conn_local_closed(h.main),
               "a well-formed request closed the connection", api);
    size_t len = 0;
    const uint8_t *out = br_conn_local_output(h.main, &len);
    /* CreateTopics and DeleteTopics answer once their jobs (run inline, in
     * process) come back through the mailbox: deliver them */
    for (int round = 0; answered && len == 0 && br_topic_admin_busy(&h.b.s) && round < 16; round++) {
        br_broker_wake(&h.b);
        out = br_conn_local_output(h.main, &len);
    }
    if (!answered) {
        fuzz_check(len == 0, "an answer to acks=0", (int)len);
        return NULL;
    }
    fuzz_check(len >= 4 && out != NULL, "a request was not answered at once", api);
    size_t size = kp_load_be32(out);
    fuzz_check(len == size + 4, "more or less than one whole answer", (int)len);
    /* the decoded slices point into the bytes: keep them in the arena */
    uint8_t *copy = kp_arena_alloc(arena, len);
    if (copy == NULL) {
        fuzz_fail_at("arena", 0, __FILE__, __LINE__);
    }
    memcpy(copy, out, len);
    br_conn_local_consume(h.main, len);
    struct kp_response_header rh;
    void *resp = NULL;
    rc = kp_response_decode(copy + 4, size, api, version, arena, &rh, &resp);
    fuzz_check(rc == 0, "an answer does not decode", api * 100 + version);
    fuzz_check(rh.CorrelationId == hdr.CorrelationId, "an answer with another correlation id",
               rh.CorrelationId);
    return resp;
}

/* ---------------------------------------------------------------- raw */

/* Checks a successful InitProducerId answer (structured or raw) against
 * every id handed out before in this input, and remembers its id. */
static void check_new_producer_id(int64_t id, int16_t epoch)
{
    fuzz_check(id >= 0, "a negative producer id", (int)id);
    fuzz_check(epoch == 0, "a new producer id with an epoch other than 0", epoch);
    for (size_t i = 0; i < h.npids; i++) {
        fuzz_check(h.pids[i] != id, "a producer id handed out twice", (int)i);
    }
    if (h.npids < PIDS_MAX) {
        h.pids[h.npids++] = id;
    }
}

static void raw_check_output(void)
{
    size_t len = 0;
    const uint8_t *out = br_conn_local_output(h.raw, &len);
    if (out == NULL) {
        fuzz_check(len == 0, "bytes sent but no buffer", (int)len);
        return;
    }
    size_t pos = 0;
    while (len - pos >= 4) {
        size_t size = kp_load_be32(out + pos);
        fuzz_check(size <= len - pos - 4, "a torn answer on the raw connection", (int)size);
        fuzz_check(h.nexpect > 0, "an answer nobody asked for", (int)size);
        struct expect e = h.expect[0];
        memmove(h.expect, h.expect + 1, (h.nexpect - 1) * sizeof h.expect[0]);
        h.nexpect--;
        struct kp_arena arena;
        kp_arena_init(&arena, ARENA_MAX);
        struct kp_response_header rh;
        void *resp = NULL;
        int rc = kp_response_decode(out + pos + 4, size, e.api, e.version, &arena, &rh, &resp);
        fuzz_check(rc == 0, "a raw answer does not decode", e.api * 100 + e.version);
        fuzz_check(rh.CorrelationId == e.corr, "a raw answer out of order", rh.CorrelationId);
        if (e.api == KP_API_INIT_PRODUCER_ID) {
            /* a transactional id is refused, so an id always is a new one */
            const struct kp_InitProducerIdResponse *ip = resp;
            if (ip->ErrorCode == 0) {
                check_new_producer_id(ip->ProducerId, ip->ProducerEpoch);
            }
        }
        kp_arena_free(&arena);
        pos += 4 + size;
    }
    fuzz_check(pos == len, "a partial answer on the raw connection", (int)(len - pos));
    br_conn_local_consume(h.raw, len);
}

/* Checks what the raw connection sent; once it is closed (or the broker
 * stops), every answer due must have come, and a new connection replaces it. */
static void raw_drain(bool closing)
{
    raw_check_output();
    if (!closing && !br_conn_local_closed(h.raw)) {
        return;
    }
    if (h.nexpect > 0) {
        /* requests parked before the close are answered now */
        br_broker_complete_all_parked(&h.b);
        raw_check_output();
    }
    fuzz_check(h.nexpect == 0, "a raw request was never answered", (int)h.nexpect);
    if (!closing) {
        br_conn_local_free(h.raw);
        h.raw = br_conn_local_new(h.b.s.net, "fuzz-raw");
        fuzz_check(h.raw != NULL, "out of memory", 0);
    }
}

/* What the broker will answer to a frame, as the client expects it: true
 * when an answer is due. */
/*
 * How many partitions a decoded CreateTopics or CreatePartitions asks for in
 * all (a topic that takes the default counts num.partitions, 2 here).
 */
static int64_t raw_new_partitions(int16_t api, const void *body)
{
    int64_t n = 0;
    if (api == KP_API_CREATE_TOPICS) {
        const struct kp_CreateTopicsRequest *c = body;
        for (int32_t i = 0; i < c->Topics.count; i++) {
            const struct kp_CreateTopicsRequest_CreatableTopic *t = &c->Topics.items[i];
            int32_t k = t->NumPartitions > 0 ? t->NumPartitions : 2;
            n += k > t->Assignments.count ? k : t->Assignments.count;
        }
    } else if (api == KP_API_CREATE_PARTITIONS) {
        const struct kp_CreatePartitionsRequest *c = body;
        for (int32_t i = 0; i < c->Topics.count; i++) {
            n += c->Topics.items[i].Count > 0 ? c->Topics.items[i].Count : 0;
        }
    }
    return n;
}

/*
 * Decodes a raw frame as the broker will and notes the answer it is owed.
 * Returns false for a frame not to send: a CreateTopics or CreatePartitions
 * for more than RAW_MAX_NEW_PARTITIONS partitions. Every restart reopens each
 * partition, so one request for 16,385 of them turned an input into 16 s of
 * directory scans; the broker at 10,000 partitions, restarts included, is
 * tested by test_partitions instead.
 */
static bool raw_expect(const uint8_t *payload, size_t len, bool *due_out)
{
    struct kp_arena arena;
    kp_arena_init(&arena, len * 16 + 65536);
    struct kp_request req;
    memset(&req, 0, sizeof req);
    int rc = kp_request_decode(payload, len, &arena, &req);
    int16_t api = req.header.RequestApiKey;
    int16_t version = req.header.RequestApiVersion;
    int16_t min = 0;
    int16_t max = 0;
    bool served = api_versions(api, &min, &max);
    struct expect e = {req.header.CorrelationId, api, version};
    bool due = false;
    if (rc == 0 && raw_new_partitions(api, req.body) > RAW_MAX_NEW_PARTITIONS) {
        kp_arena_free(&arena);
        return false;
    }
    if (api == KP_API_API_VERSIONS && len >= 8 && (rc == KP_E_UNSUPPORTED || version > max)) {
        /* an ApiVersions of a version the broker does not read is answered
         * in v0, whatever its body (KIP-511: the client then retries with
         * a version from the answer) */
        e.version = 0;
        due = true;
    } else if (rc == 0 && served && version >= min && version <= max) {
        due = api != KP_API_PRODUCE || ((const struct kp_ProduceRequest *)req.body)->Acks != 0;
        if (api == KP_API_DELETE_TOPICS) {
            const struct kp_DeleteTopicsRequest *d = req.body;
            for (int32_t i = 0; i < d->TopicNames.count; i++) {
                int t = topic_index(d->TopicNames.items[i]);
                if (t >= 0) {
                    forget_topic(t);
                }
            }
        }
        if (api == KP_API_OFFSET_COMMIT || api == KP_API_DELETE_GROUPS) {
            memset(h.commits, 0, sizeof h.commits);
        }
    }
    if (due) {
        fuzz_check(h.nexpect < EXPECT_MAX, "expectations", 0);
        h.expect[h.nexpect++] = e;
    }
    kp_arena_free(&arena);
    *due_out = due;
    return true;
}

static void op_raw(struct input *in)
{
    size_t len = in_u16(in) % RAW_MAX;
    if (len > in->n - in->i) {
        len = in->n - in->i;
    }
    uint8_t frame[4 + RAW_MAX];
    kp_store_be32(frame, (uint32_t)len);
    memcpy(frame + 4, in->p + in->i, len);
    in->i += len;
    if (h.nexpect >= EXPECT_MAX - 1) {
        return;
    }
    bool due = false;
    if (!raw_expect(frame + 4, len, &due)) {
        return;
    }
    int32_t corr = due ? h.expect[h.nexpect - 1].corr : 0;
    (void)br_conn_local_feed(h.raw, frame, len + 4);
    raw_check_output();
    if (due && br_conn_local_closed(h.raw) && h.nexpect > 0 &&
        h.expect[h.nexpect - 1].corr == corr) {
        /* a handler that fails closes the connection without an answer
         * (out of memory, a request past its arena): not a finding here */
        h.nexpect--;
    }
    raw_drain(false);
}

/* ---------------------------------------------------------------- produce */

static uint32_t make_value(uint8_t *buf, size_t len, int t, int32_t p)
{
    uint32_t k = ++h.value_counter;
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t)(k * 31u + (uint32_t)i * 7u + (uint32_t)t * 3u + (uint32_t)p);
    }
    if (len >= 4) {
        kp_store_be32(buf, k);
    }
    return kp_crc32c(0, buf, len);
}

struct built {
    uint8_t *batch;
    size_t len;
    int32_t count;
    uint32_t crcs[16];
};

static void build_batch(struct input *in, int t, int32_t p, bool idempotent, struct built *out)
{
    uint8_t shape = in_u8(in);
    int32_t count = 1 + (shape & 15);
    int codec = (shape >> 4) % 5;
    uint8_t ts_kind = in_u8(in);
    int64_t now = br_now_wall_ms();
    int64_t ts = ts_kind < 200 ? now : (ts_kind < 230 ? 1000 : now + 3600000);
    struct mpart *m = mpart_of(t, p);
    struct kp_batch_builder bb;
    int rc =
        kp_batch_builder_init(&bb, codec, 0, ts, idempotent ? h.pid : -1, idempotent ? h.epoch : -1,
                              idempotent && m != NULL ? m->next_seq : -1, (size_t)1 << 20);
    fuzz_check(rc == 0, "builder", rc);
    uint8_t value[600];
    for (int32_t i = 0; i < count; i++) {
        size_t vlen = (size_t)(in_u8(in) % 3) * 250 + (size_t)i;
        out->crcs[i] = make_value(value, vlen, t, p);
        char key[8];
        (void)snprintf(key, sizeof key, "k%d", (int)(i % 5));
        struct kp_bytes k = (shape & 0x80) != 0
                                ? KP_BYTES_NULL
                                : (struct kp_bytes){(const uint8_t *)key, (int32_t)strlen(key)};
        rc = kp_batch_builder_add(&bb, KP_OFFSET_DELTA_AUTO, ts + i, k,
                                  (struct kp_bytes){value, (int32_t)vlen}, NULL, 0);
        fuzz_check(rc == 0, "builder add", rc);
    }
    struct kp_writer w;
    kp_wr_init(&w, (size_t)2 << 20);
    rc = kp_batch_builder_finish(&bb, &w);
    fuzz_check(rc == 0, "builder finish", rc);
    kp_batch_builder_free(&bb);
    out->batch = kp_wr_steal(&w, &out->len);
    fuzz_check(out->batch != NULL, "out of memory", 0);
    out->count = count;
}

/* Sends batch to t/p; returns the partition answer's error (or -1 for
 * acks=0) and its base offset. */
static int produce(int t, int32_t p, int16_t version, int16_t acks, const uint8_t *batch,
                   size_t len, int64_t *base)
{
    struct kp_ProduceRequest req;
    kp_ProduceRequest_init(&req);
    req.TransactionalId = KP_STR_NULL;
    req.Acks = acks;
    req.TimeoutMs = 1000;
    struct kp_ProduceRequest_PartitionProduceData pd = {p, {batch, (int32_t)len}};
    struct kp_ProduceRequest_TopicProduceData td;
    td.Name = kp_str_c(topic_names[t]);
    td.PartitionData.items = &pd;
    td.PartitionData.count = 1;
    req.TopicData.items = &td;
    req.TopicData.count = 1;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    const struct kp_ProduceResponse *resp = call(KP_API_PRODUCE, version, &req, &arena, acks != 0);
    int err = -1;
    if (resp != NULL) {
        fuzz_check(resp->Responses.count == 1 &&
                       resp->Responses.items[0].PartitionResponses.count == 1,
                   "a Produce answer without its partition", resp->Responses.count);
        const struct kp_ProduceResponse_PartitionProduceResponse *pr =
            &resp->Responses.items[0].PartitionResponses.items[0];
        fuzz_check(pr->Index == p, "a Produce answer for another partition", pr->Index);
        err = pr->ErrorCode;
        *base = pr->BaseOffset;
    }
    kp_arena_free(&arena);
    return err;
}

static void op_produce(struct input *in)
{
    int t = in_u8(in) % NTOPICS;
    int32_t p = in_u8(in) % (MAX_PARTS + 1);
    uint8_t mode = in_u8(in);
    int16_t version = (int16_t)(3 + mode % 5);
    int16_t acks = (mode >> 3) % 3 == 0 ? 1 : ((mode >> 3) % 3 == 1 ? -1 : 0);
    struct mpart *m = mpart_of(t, p);
    bool idempotent = h.pid >= 0 && (mode & 0x40) != 0 && acks == -1 && m != NULL;
    struct built bt;
    build_batch(in, t, p, idempotent, &bt);
    int64_t base = -1;
    int err = produce(t, p, version, acks, bt.batch, bt.len, &base);
    if (err == 0) {
        fuzz_check(base >= 0, "a negative base offset", (int)base);
        if (m != NULL) {
            fuzz_check(base >= m->acked_end, "an offset handed out twice",
                       (int)(m->acked_end - base));
            for (int32_t i = 0; i < bt.count && m->n < MAX_ACKED; i++) {
                m->rec[m->n++] = (struct acked){base + i, bt.crcs[i]};
            }
            m->acked_end = base + bt.count;
            if (idempotent) {
                m->next_seq += bt.count;
                kp_free(m->last);
                m->last = bt.batch;
                m->last_len = bt.len;
                m->last_base = base;
                m->last_count = bt.count;
                bt.batch = NULL;
            }
        }
    } else if (idempotent && err != KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER) {
        /* not written: the sequence stays */
    }
    kp_free(bt.batch);
}

static int64_t list_offset(int t, int32_t p, int16_t version, int64_t ts, int *err);

static void op_resend(struct input *in)
{
    int t = in_u8(in) % NTOPICS;
    int32_t p = in_u8(in) % MAX_PARTS;
    struct mpart *m = mpart_of(t, p);
    if (m->last == NULL) {
        return;
    }
    int e1 = 0;
    int e2 = 0;
    int64_t leo = list_offset(t, p, 2, -1, &e1);
    int64_t base = -1;
    int err = produce(t, p, 7, -1, m->last, m->last_len, &base);
    int64_t leo2 = list_offset(t, p, 2, -1, &e2);
    if (e1 == 0 && e2 == 0) {
        fuzz_check(leo2 == leo, "an idempotent batch was appended twice", (int)(leo2 - leo));
    }
    if (err == 0) {
        fuzz_check(base == m->last_base, "a duplicate answered with another offset",
                   (int)(base - m->last_base));
    }
}

/* ---------------------------------------------------------------- offsets */

static int64_t list_offset(int t, int32_t p, int16_t version, int64_t ts, int *err)
{
    struct kp_ListOffsetsRequest req;
    kp_ListOffsetsRequest_init(&req);
    req.ReplicaId = -1;
    struct kp_ListOffsetsRequest_ListOffsetsPartition lp = {p, ts, 1};
    struct kp_ListOffsetsRequest_ListOffsetsTopic lt;
    lt.Name = kp_str_c(topic_names[t]);
    lt.Partitions.items = &lp;
    lt.Partitions.count = 1;
    req.Topics.items = &lt;
    req.Topics.count = 1;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    const struct kp_ListOffsetsResponse *resp =
        call(KP_API_LIST_OFFSETS, version, &req, &arena, true);
    fuzz_check(resp->Topics.count == 1 && resp->Topics.items[0].Partitions.count == 1,
               "a ListOffsets answer without its partition", resp->Topics.count);
    const struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *pr =
        &resp->Topics.items[0].Partitions.items[0];
    *err = pr->ErrorCode;
    int64_t off = pr->Offset;
    kp_arena_free(&arena);
    return off;
}

/* Earliest and latest of t/p against the model; 0 when both were answered. */
static int check_offsets(int t, int32_t p, int16_t version, int64_t *earliest, int64_t *latest)
{
    int e1 = 0;
    int e2 = 0;
    *earliest = list_offset(t, p, version, -2, &e1);
    *latest = list_offset(t, p, version, -1, &e2);
    struct mpart *m = mpart_of(t, p);
    if (e1 != 0 || e2 != 0 || m == NULL) {
        return -1;
    }
    fuzz_check(*earliest >= 0 && *earliest <= *latest, "log start past the LEO",
               (int)(*earliest - *latest));
    fuzz_check(*latest >= m->acked_end, "the LEO below an acknowledged offset",
               (int)(m->acked_end - *latest));
    fuzz_check(*earliest >= m->start_floor, "the log start offset went back",
               (int)(m->start_floor - *earliest));
    m->start_floor = *earliest;
    return 0;
}

static void op_offsets(struct input *in)
{
    int t = in_u8(in) % NTOPICS;
    int32_t p = in_u8(in) % MAX_PARTS;
    uint8_t mode = in_u8(in);
    int16_t version = (int16_t)(1 + mode % 3);
    int64_t earliest = 0;
    int64_t latest = 0;
    if (check_offsets(t, p, version, &earliest, &latest) != 0) {
        return;
    }
    int err = 0;
    int64_t ts = (mode & 0x80) != 0 ? br_now_wall_ms() - in_u8(in) : (int64_t)in_u16(in);
    int64_t off = list_offset(t, p, version, ts, &err);
    if (err == 0) {
        fuzz_check(off == -1 || (off >= earliest && off <= latest),
                   "a timestamp lookup outside the log", (int)off);
    }
}

/* ---------------------------------------------------------------- fetch */

static int check_offsets(int t, int32_t p, int16_t version, int64_t *earliest, int64_t *latest);

static void check_records(struct mpart *m, const struct kp_bytes *records, int64_t fetch_offset,
                          int64_t hw, int64_t log_start)
{
    const uint8_t *p = records->ptr;
    size_t len = records->len > 0 ? (size_t)records->len : 0;
    size_t pos = 0;
    int64_t prev_last = -1;
    bool first = true;
    while (pos < len) {
        struct kp_batch_header bh;
        size_t bsize = 0;
        int rc = kp_batch_parse_lenient(p + pos, len - pos, &bh, &bsize);
        if (rc == KP_AGAIN) {
            /* a batch cut by the size limit: only ever the last one */
            break;
        }
        fuzz_check(rc == 0, "a fetched batch does not parse", rc);
        int64_t last = kp_batch_last_offset(&bh);
        fuzz_check(bh.BaseOffset > prev_last, "fetched offsets go backwards", (int)bh.BaseOffset);
        fuzz_check(last < hw, "a batch past the high watermark", (int)(last - hw));
        if (first) {
            fuzz_check(last >= fetch_offset, "the first batch ends before the fetch offset",
                       (int)(fetch_offset - last));
            fuzz_check(bh.BaseOffset <= fetch_offset || fetch_offset < log_start,
                       "the batch holding the fetch offset is missing",
                       (int)(bh.BaseOffset - fetch_offset));
            first = false;
        }
        prev_last = last;
        struct kp_batch_iter it;
        rc = kp_batch_iter_init(&it, p + pos, bsize, (size_t)64 << 20);
        fuzz_check(rc == 0, "a fetched batch cannot be read", rc);
        struct kp_record rec;
        while ((rc = kp_batch_iter_next(&it, &rec)) == 0) {
            const struct acked *a = m != NULL ? find_acked(m, rec.Offset) : NULL;
            if (a != NULL) {
                uint32_t crc =
                    rec.Value.len > 0 ? kp_crc32c(0, rec.Value.ptr, (size_t)rec.Value.len) : 0;
                fuzz_check(crc == a->crc, "an acknowledged record changed", (int)rec.Offset);
            }
        }
        fuzz_check(rc == KP_ITER_END, "a fetched record does not parse", rc);
        kp_batch_iter_free(&it);
        pos += bsize;
    }
}

static void fetch_at(int t, int32_t p, int16_t version, int64_t offset, int32_t part_max,
                     int32_t max)
{
    struct kp_FetchRequest req;
    kp_FetchRequest_init(&req);
    req.ReplicaId = -1;
    req.MaxWaitMs = 0;
    req.MinBytes = 1;
    req.MaxBytes = max;
    req.IsolationLevel = 0;
    req.SessionId = 0;
    req.SessionEpoch = -1;
    struct kp_FetchRequest_FetchPartition fp = {p, -1, offset, -1, part_max};
    struct kp_FetchRequest_FetchTopic ft;
    ft.Topic = kp_str_c(topic_names[t]);
    ft.Partitions.items = &fp;
    ft.Partitions.count = 1;
    req.Topics.items = &ft;
    req.Topics.count = 1;
    req.RackId = kp_str_c("");
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    const struct kp_FetchResponse *resp = call(KP_API_FETCH, version, &req, &arena, true);
    fuzz_check(resp->Responses.count == 1 && resp->Responses.items[0].Partitions.count == 1,
               "a Fetch answer without its partition", resp->Responses.count);
    const struct kp_FetchResponse_PartitionData *pd = &resp->Responses.items[0].Partitions.items[0];
    struct mpart *m = mpart_of(t, p);
    if (pd->ErrorCode == 0) {
        fuzz_check(pd->LogStartOffset <= pd->HighWatermark, "log start past the HW",
                   (int)(pd->LogStartOffset - pd->HighWatermark));
        fuzz_check(pd->LastStableOffset <= pd->HighWatermark, "LSO past the HW",
                   (int)(pd->LastStableOffset - pd->HighWatermark));
        if (m != NULL) {
            fuzz_check(pd->HighWatermark >= m->acked_end, "the HW below an acknowledged offset",
                       (int)(m->acked_end - pd->HighWatermark));
            if (pd->LogStartOffset >= 0) {
                fuzz_check(pd->LogStartOffset >= m->start_floor, "the log start went back",
                           (int)(m->start_floor - pd->LogStartOffset));
                m->start_floor = pd->LogStartOffset;
            }
        }
        if (offset < pd->HighWatermark && offset >= pd->LogStartOffset) {
            fuzz_check(pd->Records.len > 0, "a fetch below the HW returned nothing", (int)offset);
        }
        check_records(m, &pd->Records, offset, pd->HighWatermark, pd->LogStartOffset);
    }
    int err = pd->ErrorCode;
    kp_arena_free(&arena);
    int64_t earliest = 0;
    int64_t latest = 0;
    if (err == KP_ERR_OFFSET_OUT_OF_RANGE && check_offsets(t, p, 3, &earliest, &latest) == 0) {
        fuzz_check(offset < earliest || offset > latest, "an offset in the log out of range",
                   (int)offset);
    }
}

static void op_fetch(struct input *in)
{
    int t = in_u8(in) % NTOPICS;
    int32_t p = in_u8(in) % (MAX_PARTS + 1);
    uint8_t mode = in_u8(in);
    int16_t version = (int16_t)(4 + mode % 8);
    struct mpart *m = mpart_of(t, p);
    int64_t offset;
    uint8_t which = in_u8(in);
    switch (which % 4) {
    case 0:
        offset = m != NULL && m->n > 0 ? m->rec[in_u8(in) % m->n].offset : 0;
        break;
    case 1:
        offset = m != NULL ? m->acked_end : 0;
        break;
    case 2:
        offset = m != NULL ? m->start_floor : 0;
        break;
    default:
        offset = (int64_t)in_u16(in) - 16;
        break;
    }
    int32_t part_max = (mode & 0x20) != 0 ? 1 + in_u8(in) * 4 : 1048576;
    int32_t max = (mode & 0x40) != 0 ? 1 + in_u8(in) * 4 : 52428800;
    fetch_at(t, p, version, offset, part_max, max);
}

/* ---------------------------------------------------------------- admin */

static void op_delete_records(struct input *in)
{
    int t = in_u8(in) % NTOPICS;
    int32_t p = in_u8(in) % MAX_PARTS;
    uint8_t mode = in_u8(in);
    struct mpart *m = mpart_of(t, p);
    int64_t offset = (mode & 1) != 0 ? -1 : in_u8(in) % (m->acked_end + 2);
    struct kp_DeleteRecordsRequest req;
    kp_DeleteRecordsRequest_init(&req);
    struct kp_DeleteRecordsRequest_DeleteRecordsPartition dp = {p, offset};
    struct kp_DeleteRecordsRequest_DeleteRecordsTopic dt;
    dt.Name = kp_str_c(topic_names[t]);
    dt.Partitions.items = &dp;
    dt.Partitions.count = 1;
    req.Topics.items = &dt;
    req.Topics.count = 1;
    req.TimeoutMs = 1000;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    const struct kp_DeleteRecordsResponse *resp =
        call(KP_API_DELETE_RECORDS, (int16_t)((mode >> 1) & 1), &req, &arena, true);
    fuzz_check(resp->Topics.count == 1 && resp->Topics.items[0].Partitions.count == 1,
               "a DeleteRecords answer without its partition", resp->Topics.count);
    const struct kp_DeleteRecordsResponse_DeleteRecordsPartitionResult *r =
        &resp->Topics.items[0].Partitions.items[0];
    if (r->ErrorCode == 0) {
        fuzz_check(offset < 0 || r->LowWatermark >= offset, "DeleteRecords kept records",
                   (int)(offset - r->LowWatermark));
        fuzz_check(r->LowWatermark >= m->start_floor, "DeleteRecords moved the start back",
                   (int)(m->start_floor - r->LowWatermark));
        m->start_floor = r->LowWatermark;
    }
    kp_arena_free(&arena);
}

static const char *const config_names[] = {
    "segment.bytes",       "segment.ms",     "retention.ms",           "retention.bytes",
    "max.message.bytes",   "cleanup.policy", "message.timestamp.type", "index.interval.bytes",
    "segment.index.bytes", "flush.messages", "min.insync.replicas",    "compression.type",
};
static const char *const config_values[][3] = {
    {"200", "1000", "x"},
    {"1", "100000", "0"},
    {"1", "-1", "60000"},
    {"1", "-1", "500"},
    {"100", "2000", "1000000"},
    {"compact", "delete", "bogus"},
    {"LogAppendTime", "CreateTime", "x"},
    {"0", "128", "-1"},
    {"4", "100", "1"},
    {"1", "1000", "0"},
    {"1", "2", "0"},
    {"gzip", "producer", "lz77"},
};
#define NCONFIGS (sizeof config_names / sizeof config_names[0])

static void op_create(struct input *in)
{
    int t = in_u8(in) % NTOPICS;
    uint8_t mode = in_u8(in);
    int16_t version = (int16_t)(mode % 5);
    struct kp_CreateTopicsRequest req;
    kp_CreateTopicsRequest_init(&req);
    struct kp_CreateTopicsRequest_CreatableTopic ct;
    memset(&ct, 0, sizeof ct);
    ct.Name = kp_str_c(topic_names[t]);
    ct.NumPartitions = (mode & 0x80) != 0 && version >= 4 ? -1 : 1 + (mode >> 3) % MAX_PARTS;
    ct.ReplicationFactor = (mode & 0x40) != 0 ? 3 : 1;
    struct kp_CreateTopicsRequest_CreateableTopicConfig cfg[3];
    int32_t ncfg = in_u8(in) % 4;
    for (int32_t i = 0; i < ncfg; i++) {
        uint8_t c = in_u8(in);
        size_t k = c % NCONFIGS;
        cfg[i].Name = kp_str_c(config_names[k]);
        cfg[i].Value = kp_str_c(config_values[k][(c >> 4) % 3]);
    }
    ct.Configs.items = cfg;
    ct.Configs.count = ncfg;
    req.Topics.items = &ct;
    req.Topics.count = 1;
    req.TimeoutMs = 1000;
    req.ValidateOnly = (mode & 0x20) != 0 && version >= 1;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    (void)call(KP_API_CREATE_TOPICS, version, &req, &arena, true);
    kp_arena_free(&arena);
}

static void op_delete(struct input *in)
{
    int t = in_u8(in) % NTOPICS;
    int16_t version = (int16_t)(in_u8(in) % 4);
    struct kp_DeleteTopicsRequest req;
    kp_DeleteTopicsRequest_init(&req);
    struct kp_str name = kp_str_c(topic_names[t]);
    req.TopicNames.items = &name;
    req.TopicNames.count = 1;
    req.TimeoutMs = 1000;
    forget_topic(t);
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    (void)call(KP_API_DELETE_TOPICS, version, &req, &arena, true);
    kp_arena_free(&arena);
}

static void op_alter(struct input *in)
{
    int t = in_u8(in) % NTOPICS;
    uint8_t mode = in_u8(in);
    struct kp_IncrementalAlterConfigsRequest req;
    kp_IncrementalAlterConfigsRequest_init(&req);
    struct kp_IncrementalAlterConfigsRequest_AlterableConfig ac[2];
    int32_t n = 1 + (mode & 1);
    for (int32_t i = 0; i < n; i++) {
        uint8_t c = in_u8(in);
        size_t k = c % NCONFIGS;
        ac[i].Name = kp_str_c(config_names[k]);
        ac[i].ConfigOperation = (int8_t)((c >> 6) % 2); /* SET, DELETE */
        ac[i].Value =
            ac[i].ConfigOperation == 0 ? kp_str_c(config_values[k][(c >> 4) % 3]) : KP_STR_NULL;
    }
    struct kp_IncrementalAlterConfigsRequest_AlterConfigsResource res;
    res.ResourceType = 2;
    res.ResourceName = kp_str_c(topic_names[t]);
    res.Configs.items = ac;
    res.Configs.count = n;
    req.Resources.items = &res;
    req.Resources.count = 1;
    req.ValidateOnly = (mode & 2) != 0;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    (void)call(KP_API_INCREMENTAL_ALTER_CONFIGS, (int16_t)((mode >> 2) & 1), &req, &arena, true);
    kp_arena_free(&arena);
}

static void op_init_pid(struct input *in)
{
    struct kp_InitProducerIdRequest req;
    kp_InitProducerIdRequest_init(&req);
    req.TransactionalId = KP_STR_NULL;
    req.TransactionTimeoutMs = 60000;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    const struct kp_InitProducerIdResponse *resp =
        call(KP_API_INIT_PRODUCER_ID, (int16_t)(in_u8(in) & 1), &req, &arena, true);
    if (resp->ErrorCode == 0) {
        check_new_producer_id(resp->ProducerId, resp->ProducerEpoch);
        h.pid = resp->ProducerId;
        h.epoch = resp->ProducerEpoch;
        for (int t = 0; t < NTOPICS; t++) {
            for (int p = 0; p < MAX_PARTS; p++) {
                struct mpart *m = &h.topics[t].parts[p];
                m->next_seq = 0;
                kp_free(m->last);
                m->last = NULL;
            }
        }
    }
    kp_arena_free(&arena);
}

static void op_metadata(struct input *in)
{
    uint8_t mode = in_u8(in);
    int16_t version = (int16_t)(mode % 7);
    struct kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    struct kp_MetadataRequest_MetadataRequestTopic mt = {
        kp_str_c(topic_names[(mode >> 3) % NTOPICS])};
    if ((mode & 0x80) != 0 || version == 0) {
        req.Topics.items = &mt;
        req.Topics.count = 1;
    } else {
        req.Topics.items = NULL;
        req.Topics.count = -1; /* all topics */
    }
    req.AllowAutoTopicCreation = (mode & 0x40) != 0;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    (void)call(KP_API_METADATA, version, &req, &arena, true);
    kp_arena_free(&arena);
}

static void offset_fetch(int g, int t, int32_t p, int16_t version)
{
    char group[16]; /* "g" and any int: gcc's -Wformat-truncation counts INT_MIN */
    (void)snprintf(group, sizeof group, "g%d", g);
    struct kp_OffsetFetchRequest req;
    kp_OffsetFetchRequest_init(&req);
    req.GroupId = kp_str_c(group);
    struct kp_OffsetFetchRequest_OffsetFetchRequestTopic ot;
    ot.Name = kp_str_c(topic_names[t]);
    ot.PartitionIndexes.items = &p;
    ot.PartitionIndexes.count = 1;
    req.Topics.items = &ot;
    req.Topics.count = 1;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    const struct kp_OffsetFetchResponse *resp =
        call(KP_API_OFFSET_FETCH, version, &req, &arena, true);
    struct commit *c = &h.commits[g][t][p];
    if (c->known && resp->ErrorCode == 0 && resp->Topics.count == 1 &&
        resp->Topics.items[0].Partitions.count == 1) {
        const struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *op =
            &resp->Topics.items[0].Partitions.items[0];
        if (op->ErrorCode == 0) {
            fuzz_check(op->CommittedOffset == c->offset, "a committed offset changed",
                       (int)(op->CommittedOffset - c->offset));
        }
    }
    kp_arena_free(&arena);
}

static void op_commit(struct input *in)
{
    int g = in_u8(in) % NGROUPS;
    int t = in_u8(in) % NTOPICS;
    int32_t p = in_u8(in) % MAX_PARTS;
    uint8_t mode = in_u8(in);
    int16_t version = (int16_t)(2 + mode % 6);
    int64_t offset = in_u16(in);
    char group[16]; /* "g" and any int: gcc's -Wformat-truncation counts INT_MIN */
    (void)snprintf(group, sizeof group, "g%d", g);
    struct kp_OffsetCommitRequest req;
    kp_OffsetCommitRequest_init(&req);
    req.GroupId = kp_str_c(group);
    req.GenerationId = -1;
    req.MemberId = kp_str_c("");
    req.GroupInstanceId = KP_STR_NULL;
    req.RetentionTimeMs = -1;
    struct kp_OffsetCommitRequest_OffsetCommitRequestPartition cp = {p, offset, -1, -1,
                                                                     kp_str_c("m")};
    struct kp_OffsetCommitRequest_OffsetCommitRequestTopic ctp;
    ctp.Name = kp_str_c(topic_names[t]);
    ctp.Partitions.items = &cp;
    ctp.Partitions.count = 1;
    req.Topics.items = &ctp;
    req.Topics.count = 1;
    struct kp_arena arena;
    kp_arena_init(&arena, ARENA_MAX);
    const struct kp_OffsetCommitResponse *resp =
        call(KP_API_OFFSET_COMMIT, version, &req, &arena, true);
    if (resp->Topics.count == 1 && resp->Topics.items[0].Partitions.count == 1 &&
        resp->Topics.items[0].Partitions.items[0].ErrorCode == 0) {
        h.commits[g][t][p] = (struct commit){true, offset};
    }
    kp_arena_free(&arena);
    offset_fetch(g, t, p, (int16_t)(1 + (mode >> 4) % 5));
}

static void op_housekeeping(void)
{
    br_timer_cancel(h.b.s.net, &h.b.housekeeping);
    br_broker_housekeeping(&h.b);
    br_net_poll(h.b.s.net);
    raw_drain(false);
}

/* Everything the model holds, checked against the broker. */
static void check_all(void)
{
    for (int t = 0; t < NTOPICS; t++) {
        for (int32_t p = 0; p < MAX_PARTS; p++) {
            struct mpart *m = &h.topics[t].parts[p];
            if (m->n == 0) {
                continue;
            }
            int64_t earliest = 0;
            int64_t latest = 0;
            if (check_offsets(t, p, 3, &earliest, &latest) == 0) {
                fetch_at(t, p, 11, earliest, 1048576, 52428800);
            }
        }
        for (int g = 0; g < NGROUPS; g++) {
            for (int32_t p = 0; p < MAX_PARTS; p++) {
                if (h.commits[g][t][p].known) {
                    offset_fetch(g, t, p, 5);
                }
            }
        }
    }
}

static void op_restart(void)
{
    broker_stop();
    h.nexpect = 0;
    broker_start();
    check_all();
}

/* ---------------------------------------------------------------- entry */

static bool setup(void)
{
    if (!fuzz_make_tmp_dir(h.root, sizeof h.root, "broker")) {
        return false;
    }
    char cfg[1024];
    int n = snprintf(cfg, sizeof cfg,
                     "log.dirs=%s/d\n"
                     "listeners=PLAINTEXT://127.0.0.1:9092\n"
                     "log.cleaner.enable=false\n"
                     "offsets.topic.num.partitions=2\n"
                     "group.initial.rebalance.delay.ms=0\n"
                     "log.retention.check.interval.ms=1\n"
                     "log.flush.offset.checkpoint.interval.ms=1\n"
                     "num.partitions=2\n",
                     h.root);
    char err[512];
    int rc =
        br_config_parse_buffer(cfg, (size_t)n, "fuzz_broker", NULL, 0, &h.b.s.cfg, err, sizeof err);
    if (rc != 0) {
        (void)fprintf(stderr, "fuzz_broker: %s\n", err);
        return false;
    }
    return true;
}

static const char *const op_names[16] = {
    "produce", "produce",  "produce",        "resend", "fetch",
    "fetch",   "offsets",  "delete_records", "create", "delete",
    "alter",   "init_pid", "metadata",       "commit", "housekeeping or restart",
    "raw",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        br_logging_set_level(getenv("FUZZ_LOG") != NULL ? BR_LOG_DEBUG : BR_LOG_ERROR);
        ready = setup();
        if (!ready) {
            abort();
        }
    }
    if (size > FUZZ_MAX_INPUT) {
        return 0;
    }
    char dir[192];
    (void)snprintf(dir, sizeof dir, "%s/d", h.root);
    remove_tree(dir);
    for (int t = 0; t < NTOPICS; t++) {
        forget_topic(t);
    }
    memset(h.commits, 0, sizeof h.commits);
    h.pid = -1;
    h.epoch = -1;
    h.npids = 0;
    h.nexpect = 0;
    broker_start();

    struct input in = {data, size, 0};
    bool trace = getenv("FUZZ_LOG") != NULL;
    for (int ops = 0; ops < MAX_OPS && in.i < in.n; ops++) {
        uint8_t op = in_u8(&in) % 16;
        if (trace) {
            (void)fprintf(stderr, "fuzz_broker: op %d: %s at input byte %zu\n", ops, op_names[op],
                          in.i - 1);
        }
        switch (op) {
        case 0:
        case 1:
        case 2:
            op_produce(&in);
            break;
        case 3:
            op_resend(&in);
            break;
        case 4:
        case 5:
            op_fetch(&in);
            break;
        case 6:
            op_offsets(&in);
            break;
        case 7:
            op_delete_records(&in);
            break;
        case 8:
            op_create(&in);
            break;
        case 9:
            op_delete(&in);
            break;
        case 10:
            op_alter(&in);
            break;
        case 11:
            op_init_pid(&in);
            break;
        case 12:
            op_metadata(&in);
            break;
        case 13:
            op_commit(&in);
            break;
        case 14:
            if ((in_u8(&in) & 1) != 0) {
                op_housekeeping();
            } else {
                op_restart();
            }
            break;
        default:
            op_raw(&in);
            break;
        }
    }
    check_all();
    broker_stop();
    for (int t = 0; t < NTOPICS; t++) {
        forget_topic(t);
    }
    return 0;
}
