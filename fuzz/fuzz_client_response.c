/*
 * fuzz_client_response: what libsamsa does with the bytes brokers send.
 *
 * A client core runs detached (sc_client_new_detached: no I/O thread, no
 * sockets) while this harness plays its brokers: it takes every request
 * the client writes (conn->out), and answers the oldest one of a
 * connection as the input says, with a valid answer of a small model broker
 * (a cluster of two brokers, topics t0 and t1, a group coordinator, logs
 * that grow with what is produced), that answer with an error code, with it
 * damaged or split, with the input's own bytes as the body or as the whole
 * frame, or by dropping the connection. The client's handlers, its state
 * machines (metadata, producer batches and sequences, fetch positions,
 * group membership and the assignors, commits, admin ops) and its public
 * calls (poll, produce, commit, pause, lag, assignment) run on all of it.
 *
 * Input: byte 0: bits 0-1 the scenario (0 a group member subscribed to t0
 * and t1, 1 a consumer assigned t0 and t1 with group offsets, 2 an
 * idempotent producer, 3 an admin handle with every admin op queued),
 * bit 2 the brokers lack IncrementalAlterConfigs, bit 3 they lack
 * CreatePartitions, bit 4 old brokers (JoinGroup v0-3, OffsetFetch v1,
 * Fetch v4, Metadata v1), bits 5-7 the codec of fetched batches (% 5);
 * byte 1: the partitions of t0 and t1 (1-4 each), the producer's acks;
 * then steps of: op, arg, u16 length, that many bytes. op bits 0-2:
 *   0 the model's answer (arg &   4 the model's answer, one byte XORed
 *     15 = 15: a Metadata says t0
 *     has one partition more; 14:
 *     a Fetch finds 2 new records)
 *   1 the model's answer with       (position: the first two bytes, value:
 *     Kafka error errors[arg]       arg)
 *   2 the bytes as the body         5 the model's answer in two pieces
 *     (correlation id fixed)        6 the connection drops
 *   3 the bytes as the frame        7 no answer this step
 * op bits 3-4 which connection (of those with a request waiting), bits
 * 5-7 how far the clock jumps first (0 to 60 s); arg bits 4-7 what the
 * application does in the step (poll, commit, pause, resume, lag, produce).
 *
 * Checks, beyond "no crash, no sanitizer report, no leak":
 *   - every request the client writes decodes as a broker decodes it, and
 *     each connection's requests waiting for an answer are exactly those the
 *     client waits for, in order (acks=0 produce excepted);
 *   - the consumer's queue accounting holds (bytes, messages per partition);
 *     every message handed out is readable whole (key, value, headers);
 *   - a producer's outstanding count is what was produced minus the reports
 *     served.
 */
#define _GNU_SOURCE

#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>
#include <samsa-protocol/record_batch.h>

#include "internal.h"

#define MAX_STEPS 200
#define MAX_CONNS 16
#define MAX_PENDING 512
#define NT 2
#define MAXP 4
#define ARENA_MAX ((size_t)64 * 1024 * 1024)

static const char *const topic_names[NT] = {"t0", "t1"};

/* Kafka errors an answer may carry (op mode 1): the ones clients act on. */
static const int16_t errors[] = {
    -1, 1,  2,  3,  5,  6,  7,  10, 14, 15, 16, 22, 23, 25, 26, 27,
    35, 36, 37, 40, 41, 42, 45, 46, 47, 59, 68, 69, 79, 82, 87, 89,
};

struct pending {
    int32_t corr;
    int16_t api;
    int16_t version;
    uint8_t *payload; /* the request's bytes (the body's slices point here) */
    struct kp_arena arena;
    struct kp_request req;
};

struct hconn {
    struct sc_conn *conn;
    struct pending *q[MAX_PENDING];
    int n;
};

static struct {
    struct sc_client *c;
    int scenario;
    int flags;
    int codec;
    int64_t skew;
    struct hconn conns[MAX_CONNS];
    int nconns;
    /* the model broker */
    int32_t parts[NT];
    int64_t end[NT][MAXP];
    int64_t committed[NT][MAXP];
    int32_t generation;
    int member_seq;
    /* producer accounting */
    size_t produced;
    size_t reports;
    uint64_t sink; /* bytes of messages read, so nothing is optimized away */
} h;

/* ------------------------------------------------------------ requests */

static void pending_free(struct pending *p)
{
    kp_arena_free(&p->arena);
    kp_free(p->payload);
    kp_free(p);
}

static struct hconn *hconn_of(struct sc_conn *conn)
{
    for (int i = 0; i < h.nconns; i++) {
        if (h.conns[i].conn == conn) {
            return &h.conns[i];
        }
    }
    fuzz_check(h.nconns < MAX_CONNS, "more connections than the harness keeps", h.nconns);
    h.conns[h.nconns].conn = conn;
    h.conns[h.nconns].n = 0;
    return &h.conns[h.nconns++];
}


/* Takes the frames the client wrote on conn, as a broker reads them. */
static void take_requests(struct sc_conn *conn)
{
    struct hconn *hc = hconn_of(conn);
    size_t off = 0;
    while (off < conn->out.len) {
        int32_t size = 0;
        int fe = kp_frame_size(conn->out.buf + off, conn->out.len - off, 1 << 30, &size);
        fuzz_check(fe == 0 && conn->out.len - off - 4 >= (size_t)size,
                   "the client wrote a partial or bad frame", fe);
        struct pending *p = kp_calloc(1, sizeof(*p));
        fuzz_check(p != NULL, "out of memory", 0);
        p->payload = kp_malloc((size_t)size > 0 ? (size_t)size : 1);
        fuzz_check(p->payload != NULL, "out of memory", 0);
        memcpy(p->payload, conn->out.buf + off + 4, (size_t)size);
        kp_arena_init(&p->arena, ARENA_MAX);
        int err = kp_request_decode(p->payload, (size_t)size, &p->arena, &p->req);
        fuzz_check(err == 0, "the client sent a request a broker cannot decode", err);
        p->corr = p->req.header.CorrelationId;
        p->api = p->req.header.RequestApiKey;
        p->version = p->req.header.RequestApiVersion;
        off += 4 + (size_t)size;
        if (p->api == KP_API_PRODUCE && ((struct kp_ProduceRequest *)p->req.body)->Acks == 0) {
            pending_free(p); /* acks=0: no answer is read */
            continue;
        }
        if (hc->n == MAX_PENDING) {
            pending_free(p);
            sc_conn_fail(h.c, conn, "fuzz: too many requests waiting");
            break;
        }
        hc->q[hc->n++] = p;
    }
    conn->out.len = 0;
    conn->out_off = 0;
    /* The client answers and fails its requests from the oldest (a closed
     * connection fails them all): what it still waits for must be the tail
     * of what was sent, in order, exactly. */
    const struct sc_req *r = conn->reqs;
    int first = 0;
    while (first < hc->n && (r == NULL || hc->q[first]->corr != r->corr)) {
        first++;
    }
    fuzz_check(r == NULL || first < hc->n,
               "the client waits for an answer to a request it never sent",
               r != NULL ? r->corr : 0);
    for (int i = 0; i < first; i++) {
        pending_free(hc->q[i]);
    }
    memmove(hc->q, hc->q + first, (size_t)(hc->n - first) * sizeof(hc->q[0])); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
    hc->n -= first;
    int i = 0;
    for (; r != NULL; r = r->next, i++) {
        fuzz_check(i < hc->n && r->corr == hc->q[i]->corr,
                   "the client waits for requests out of order", r->corr);
        fuzz_check(r->api_key == hc->q[i]->api && r->api_version == hc->q[i]->version,
                   "a request waits for another API or version than it was sent as",
                   r->api_key);
    }
    fuzz_check(i == hc->n, "a request the client sent is not waited for", hc->n - i);
    fuzz_check(conn->req_count == hc->n, "the connection's request count is off",
               conn->req_count - hc->n);
}

static void take_all_requests(void)
{
    for (struct sc_conn *conn = h.c->conns; conn != NULL; conn = conn->next) {
        take_requests(conn);
    }
}

/* ---------------------------------------------------------- invariants */

static void check_consumer_queue(void)
{
    struct sc_client *c = h.c;
    size_t bytes = 0;
    for (const struct sc_cmsg *m = c->cq; m != NULL; m = m->next) {
        bytes += m->size;
        fuzz_check(m->next != NULL || m == c->cq_tail, "the queue's tail is not its last", 0);
    }
    fuzz_check(bytes == c->cq_bytes, "queued bytes miscounted", (int)(bytes - c->cq_bytes));
    for (int i = 0; i < c->cpart_count; i++) {
        int n = 0;
        for (const struct sc_cmsg *m = c->cq; m != NULL; m = m->next) {
            n += m->part == c->cparts[i] ? 1 : 0;
        }
        fuzz_check(n == c->cparts[i]->queued, "a partition's queued messages miscounted", n);
    }
}

static void read_message(const samsa_message *m)
{
    if (getenv("FUZZ_LOG") != NULL) {
        fprintf(stderr, "fuzz: message %s [%d] at %lld\n", m->topic, m->partition,
                (long long)m->offset);
    }
    uint64_t sum = (uint64_t)m->offset + (uint64_t)m->partition + strlen(m->topic);
    const uint8_t *k = m->key;
    const uint8_t *v = m->value;
    for (size_t i = 0; k != NULL && i < m->key_len; i++) {
        sum += k[i];
    }
    for (size_t i = 0; v != NULL && i < m->value_len; i++) {
        sum += v[i];
    }
    for (size_t i = 0; i < m->header_count; i++) {
        sum += strlen(m->headers[i].name);
        const uint8_t *hv = m->headers[i].value;
        for (size_t j = 0; hv != NULL && j < m->headers[i].value_len; j++) {
            sum += hv[j];
        }
    }
    h.sink += sum;
}

/* --------------------------------------------------------------- model */

#define ALLOC(a, n, type) ((type *)arena_alloc((a), (size_t)(n) * sizeof(type)))

static void *arena_alloc(struct kp_arena *a, size_t n)
{
    void *p = kp_arena_alloc(a, n > 0 ? n : 1);
    fuzz_check(p != NULL, "out of memory", 0);
    return p;
}

static int topic_index(struct kp_str name)
{
    for (int t = 0; t < NT; t++) {
        if (kp_str_eq_c(name, topic_names[t])) {
            return t;
        }
    }
    return -1;
}

static bool known(int t, int32_t p)
{
    return t >= 0 && p >= 0 && p < h.parts[t];
}

static struct kp_str str(const char *s)
{
    return kp_str_c(s);
}

static void *model_api_versions(struct kp_arena *a, int16_t err)
{
    struct kp_ApiVersionsResponse *r = ALLOC(a, 1, struct kp_ApiVersionsResponse);
    r->ErrorCode = err;
    r->ApiKeys.items = ALLOC(a, kp_apis_count, struct kp_ApiVersionsResponse_ApiVersion);
    for (size_t i = 0; i < kp_apis_count; i++) {
        int16_t key = kp_apis[i].key;
        if (((h.flags & 1) && key == KP_API_INCREMENTAL_ALTER_CONFIGS) ||
            ((h.flags & 2) && key == KP_API_CREATE_PARTITIONS)) {
            continue;
        }
        int16_t max = kp_apis[i].max_version;
        if (h.flags & 4) {
            max = key == KP_API_JOIN_GROUP       ? 3
                  : key == KP_API_OFFSET_FETCH   ? 1
                  : key == KP_API_FETCH          ? 4
                  : key == KP_API_METADATA       ? 1
                                                 : max;
        }
        struct kp_ApiVersionsResponse_ApiVersion *v = &r->ApiKeys.items[r->ApiKeys.count++];
        v->ApiKey = key;
        v->MinVersion = kp_apis[i].min_version;
        v->MaxVersion = max;
    }
    return r;
}

static void *model_metadata(struct kp_arena *a, const struct kp_MetadataRequest *q, int16_t err,
                            uint8_t arg)
{
    if ((arg & 0x0f) == 0x0f && h.parts[0] < MAXP) {
        h.parts[0]++; /* t0 grows: subscribed members join again */
    }
    struct kp_MetadataResponse *r = ALLOC(a, 1, struct kp_MetadataResponse);
    r->Brokers.items = ALLOC(a, 2, struct kp_MetadataResponse_MetadataResponseBroker);
    r->Brokers.count = 2;
    for (int b = 0; b < 2; b++) {
        r->Brokers.items[b].NodeId = b;
        r->Brokers.items[b].Host = str("fuzz-broker");
        r->Brokers.items[b].Port = 9092 + b;
        r->Brokers.items[b].Rack = KP_STR_NULL;
    }
    r->ClusterId = str("fuzz-cluster");
    r->ControllerId = 0;
    int n = q->Topics.count < 0 ? NT : q->Topics.count;
    r->Topics.items = ALLOC(a, n, struct kp_MetadataResponse_MetadataResponseTopic);
    for (int i = 0; i < n; i++) {
        struct kp_MetadataResponse_MetadataResponseTopic *t = &r->Topics.items[r->Topics.count++];
        struct kp_str name = q->Topics.count < 0 ? str(topic_names[i]) : q->Topics.items[i].Name;
        int ti = topic_index(name);
        t->Name = name;
        if (ti < 0) {
            t->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        t->ErrorCode = ti == 0 ? err : 0;
        t->Partitions.items =
            ALLOC(a, h.parts[ti], struct kp_MetadataResponse_MetadataResponsePartition);
        t->Partitions.count = h.parts[ti];
        for (int32_t p = 0; p < h.parts[ti]; p++) {
            struct kp_MetadataResponse_MetadataResponsePartition *mp = &t->Partitions.items[p];
            mp->PartitionIndex = p;
            mp->LeaderId = p % 2; /* both brokers lead some: two fetch connections */
            mp->ReplicaNodes.items = ALLOC(a, 1, int32_t);
            mp->ReplicaNodes.items[0] = p % 2;
            mp->ReplicaNodes.count = 1;
            mp->IsrNodes.items = mp->ReplicaNodes.items;
            mp->IsrNodes.count = 1;
        }
    }
    return r;
}

static void *model_find_coordinator(struct kp_arena *a, int16_t err)
{
    struct kp_FindCoordinatorResponse *r = ALLOC(a, 1, struct kp_FindCoordinatorResponse);
    r->ErrorCode = err;
    r->ErrorMessage = KP_STR_NULL;
    r->NodeId = err != 0 ? -1 : 0;
    r->Host = str(err != 0 ? "" : "fuzz-broker");
    r->Port = err != 0 ? -1 : 9092;
    return r;
}

static void *model_join(struct kp_arena *a, const struct kp_JoinGroupRequest *q, int16_t version,
                        int16_t err)
{
    struct kp_JoinGroupResponse *r = ALLOC(a, 1, struct kp_JoinGroupResponse);
    r->GenerationId = -1;
    r->ProtocolName = str("");
    r->Leader = str("");
    r->MemberId = q->MemberId;
    if (err != 0) {
        r->ErrorCode = err;
        if (err == KP_ERR_MEMBER_ID_REQUIRED) {
            r->MemberId = str("member-required");
        }
        return r;
    }
    if (q->MemberId.len <= 0 && version >= 4) {
        char *id = arena_alloc(a, 32);
        snprintf(id, 32, "member-%d", ++h.member_seq);
        r->ErrorCode = KP_ERR_MEMBER_ID_REQUIRED;
        r->MemberId = str(id);
        return r;
    }
    if (q->MemberId.len <= 0) {
        char *id = arena_alloc(a, 32);
        snprintf(id, 32, "member-%d", ++h.member_seq);
        r->MemberId = str(id);
    }
    r->GenerationId = ++h.generation;
    r->ProtocolName = q->Protocols.count > 0 ? q->Protocols.items[0].Name : str("range");
    r->Leader = r->MemberId;
    /* The member itself and one that never syncs: the assignment is shared. */
    r->Members.items = ALLOC(a, 2, struct kp_JoinGroupResponse_JoinGroupResponseMember);
    r->Members.count = 2;
    for (int i = 0; i < 2; i++) {
        r->Members.items[i].MemberId = i == 0 ? r->MemberId : str("zz-other-member");
        r->Members.items[i].GroupInstanceId = KP_STR_NULL;
        r->Members.items[i].Metadata = q->Protocols.count > 0 ? q->Protocols.items[0].Metadata
                                                               : (struct kp_bytes){NULL, 0};
    }
    return r;
}

static void *model_sync(struct kp_arena *a, const struct kp_SyncGroupRequest *q, int16_t err)
{
    struct kp_SyncGroupResponse *r = ALLOC(a, 1, struct kp_SyncGroupResponse);
    r->ErrorCode = err;
    r->Assignment = (struct kp_bytes){(const uint8_t *)"", 0};
    for (int32_t i = 0; i < q->Assignments.count; i++) {
        if (kp_str_eq(q->Assignments.items[i].MemberId, q->MemberId)) {
            r->Assignment = q->Assignments.items[i].Assignment;
        }
    }
    return r;
}

static void *model_offset_fetch(struct kp_arena *a, const struct kp_OffsetFetchRequest *q,
                                int16_t err)
{
    struct kp_OffsetFetchResponse *r = ALLOC(a, 1, struct kp_OffsetFetchResponse);
    r->ErrorCode = err;
    int n = q->Topics.count < 0 ? NT : q->Topics.count;
    r->Topics.items = ALLOC(a, n, struct kp_OffsetFetchResponse_OffsetFetchResponseTopic);
    r->Topics.count = n;
    for (int i = 0; i < n; i++) {
        struct kp_OffsetFetchResponse_OffsetFetchResponseTopic *t = &r->Topics.items[i];
        t->Name = q->Topics.count < 0 ? str(topic_names[i]) : q->Topics.items[i].Name;
        int ti = topic_index(t->Name);
        int np = q->Topics.count < 0 ? MAXP : q->Topics.items[i].PartitionIndexes.count;
        t->Partitions.items = ALLOC(a, np, struct kp_OffsetFetchResponse_OffsetFetchResponsePartition);
        t->Partitions.count = np;
        for (int j = 0; j < np; j++) {
            int32_t p = q->Topics.count < 0 ? j : q->Topics.items[i].PartitionIndexes.items[j];
            struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *op = &t->Partitions.items[j];
            op->PartitionIndex = p;
            op->CommittedOffset = known(ti, p) ? h.committed[ti][p] : -1;
            op->CommittedLeaderEpoch = -1;
            op->Metadata = str("");
            op->ErrorCode = known(ti, p) ? 0 : KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        }
    }
    return r;
}

static void *model_offset_commit(struct kp_arena *a, const struct kp_OffsetCommitRequest *q,
                                 int16_t err)
{
    struct kp_OffsetCommitResponse *r = ALLOC(a, 1, struct kp_OffsetCommitResponse);
    r->Topics.items =
        ALLOC(a, q->Topics.count, struct kp_OffsetCommitResponse_OffsetCommitResponseTopic);
    r->Topics.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *qt = &q->Topics.items[i];
        struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *t = &r->Topics.items[i];
        int ti = topic_index(qt->Name);
        t->Name = qt->Name;
        t->Partitions.items = ALLOC(a, qt->Partitions.count,
                                    struct kp_OffsetCommitResponse_OffsetCommitResponsePartition);
        t->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            int32_t p = qt->Partitions.items[j].PartitionIndex;
            t->Partitions.items[j].PartitionIndex = p;
            t->Partitions.items[j].ErrorCode = err;
            if (err == 0 && known(ti, p)) {
                h.committed[ti][p] = qt->Partitions.items[j].CommittedOffset;
            }
        }
    }
    return r;
}

static void *model_list_offsets(struct kp_arena *a, const struct kp_ListOffsetsRequest *q,
                                int16_t err)
{
    struct kp_ListOffsetsResponse *r = ALLOC(a, 1, struct kp_ListOffsetsResponse);
    r->Topics.items =
        ALLOC(a, q->Topics.count, struct kp_ListOffsetsResponse_ListOffsetsTopicResponse);
    r->Topics.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_ListOffsetsRequest_ListOffsetsTopic *qt = &q->Topics.items[i];
        struct kp_ListOffsetsResponse_ListOffsetsTopicResponse *t = &r->Topics.items[i];
        int ti = topic_index(qt->Name);
        t->Name = qt->Name;
        t->Partitions.items = ALLOC(a, qt->Partitions.count,
                                    struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse);
        t->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            int32_t p = qt->Partitions.items[j].PartitionIndex;
            int64_t ts = qt->Partitions.items[j].Timestamp;
            struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *lp = &t->Partitions.items[j];
            lp->PartitionIndex = p;
            lp->ErrorCode = known(ti, p) ? err : KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            lp->Timestamp = -1;
            lp->Offset = !known(ti, p) ? -1 : ts == -2 ? 0 : ts == -1 ? h.end[ti][p] : 0;
        }
    }
    return r;
}

/* One batch of up to 3 records of partition (t, p) from offset `from`. */
static struct kp_bytes records_of(struct kp_arena *a, int t, int32_t p, int64_t from)
{
    int64_t n = h.end[t][p] - from;
    if (from < 0 || n <= 0) {
        return (struct kp_bytes){(const uint8_t *)"", 0};
    }
    n = n > 3 ? 3 : n;
    struct kp_batch_builder bb;
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    struct kp_bytes out = {(const uint8_t *)"", 0};
    if (kp_batch_builder_init(&bb, h.codec, from, 1700000000000, -1, -1, -1, 1 << 20) == 0) {
        bool ok = true;
        for (int64_t i = 0; i < n && ok; i++) {
            char key[32];
            char value[64];
            int kl = snprintf(key, sizeof(key), "k%lld", (long long)from + (long long)i);
            int vl = snprintf(value, sizeof(value), "value %s/%d/%lld", topic_names[t], p,
                              (long long)from + (long long)i);
            struct kp_record_header hd = {str("h"), {(const uint8_t *)"hv", 2}};
            ok = kp_batch_builder_add(&bb, KP_OFFSET_DELTA_AUTO, 1700000000000 + i,
                                      (struct kp_bytes){(const uint8_t *)key, kl},
                                      (struct kp_bytes){(const uint8_t *)value, vl}, &hd,
                                      i % 2 == 0 ? 1 : 0) == 0;
        }
        if (ok && kp_batch_builder_finish(&bb, &w) == 0) {
            uint8_t *copy = arena_alloc(a, w.len);
            memcpy(copy, w.buf, w.len);
            out = (struct kp_bytes){copy, (int32_t)w.len};
        }
    }
    kp_batch_builder_free(&bb);
    kp_wr_free(&w);
    return out;
}

static void *model_fetch(struct kp_arena *a, const struct kp_FetchRequest *q, int16_t err,
                         uint8_t arg)
{
    struct kp_FetchResponse *r = ALLOC(a, 1, struct kp_FetchResponse);
    r->Responses.items =
        ALLOC(a, q->Topics.count, struct kp_FetchResponse_FetchableTopicResponse);
    r->Responses.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_FetchRequest_FetchTopic *qt = &q->Topics.items[i];
        struct kp_FetchResponse_FetchableTopicResponse *t = &r->Responses.items[i];
        int ti = topic_index(qt->Topic);
        t->Topic = qt->Topic;
        t->Partitions.items =
            ALLOC(a, qt->Partitions.count, struct kp_FetchResponse_PartitionData);
        t->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            int32_t p = qt->Partitions.items[j].Partition;
            struct kp_FetchResponse_PartitionData *pd = &t->Partitions.items[j];
            pd->PartitionIndex = p;
            pd->PreferredReadReplica = -1;
            pd->Records = (struct kp_bytes){(const uint8_t *)"", 0};
            if (!known(ti, p)) {
                pd->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            int64_t from = qt->Partitions.items[j].FetchOffset;
            if ((arg & 0x0f) == 0x0e && h.end[ti][p] < 1000000) {
                h.end[ti][p] += 2; /* someone produced meanwhile */
            }
            pd->ErrorCode = from > h.end[ti][p] ? KP_ERR_OFFSET_OUT_OF_RANGE : err;
            pd->HighWatermark = h.end[ti][p];
            pd->LastStableOffset = h.end[ti][p];
            pd->LogStartOffset = 0;
            if (pd->ErrorCode == 0) {
                pd->Records = records_of(a, ti, p, from);
            }
        }
    }
    return r;
}

static void *model_produce(struct kp_arena *a, const struct kp_ProduceRequest *q, int16_t err)
{
    struct kp_ProduceResponse *r = ALLOC(a, 1, struct kp_ProduceResponse);
    r->Responses.items =
        ALLOC(a, q->TopicData.count, struct kp_ProduceResponse_TopicProduceResponse);
    r->Responses.count = q->TopicData.count;
    for (int32_t i = 0; i < q->TopicData.count; i++) {
        const struct kp_ProduceRequest_TopicProduceData *qt = &q->TopicData.items[i];
        struct kp_ProduceResponse_TopicProduceResponse *t = &r->Responses.items[i];
        int ti = topic_index(qt->Name);
        t->Name = qt->Name;
        t->PartitionResponses.items = ALLOC(a, qt->PartitionData.count,
                                            struct kp_ProduceResponse_PartitionProduceResponse);
        t->PartitionResponses.count = qt->PartitionData.count;
        for (int32_t j = 0; j < qt->PartitionData.count; j++) {
            int32_t p = qt->PartitionData.items[j].Index;
            struct kp_ProduceResponse_PartitionProduceResponse *pr = &t->PartitionResponses.items[j];
            pr->Index = p;
            pr->LogAppendTimeMs = -1;
            pr->BaseOffset = -1;
            if (!known(ti, p)) {
                pr->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            pr->ErrorCode = err;
            if (err != 0) {
                continue;
            }
            struct kp_batch_header bh;
            size_t size = 0;
            const struct kp_bytes rec = qt->PartitionData.items[j].Records;
            pr->BaseOffset = h.end[ti][p];
            if (rec.len > 0 &&
                kp_batch_parse_lenient(rec.ptr, (size_t)rec.len, &bh, &size) == 0) {
                h.end[ti][p] += (int64_t)bh.LastOffsetDelta + 1;
            }
        }
    }
    return r;
}

static void *model_describe_configs(struct kp_arena *a, const struct kp_DescribeConfigsRequest *q,
                                    int16_t err)
{
    struct kp_DescribeConfigsResponse *r = ALLOC(a, 1, struct kp_DescribeConfigsResponse);
    r->Results.items =
        ALLOC(a, q->Resources.count, struct kp_DescribeConfigsResponse_DescribeConfigsResult);
    r->Results.count = q->Resources.count;
    for (int32_t i = 0; i < q->Resources.count; i++) {
        struct kp_DescribeConfigsResponse_DescribeConfigsResult *res = &r->Results.items[i];
        res->ErrorCode = err;
        res->ErrorMessage = err != 0 ? str("refused") : KP_STR_NULL;
        res->ResourceType = q->Resources.items[i].ResourceType;
        res->ResourceName = q->Resources.items[i].ResourceName;
        res->Configs.items = ALLOC(a, 3, struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult);
        res->Configs.count = 3;
        static const char *const names[3] = {"retention.ms", "cleanup.policy", "sasl.secret"};
        static const char *const values[3] = {"604800000", "compact", NULL};
        static const int8_t sources[3] = {5, 1, 1};
        for (int k = 0; k < 3; k++) {
            struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult *e = &res->Configs.items[k];
            e->Name = str(names[k]);
            e->Value = values[k] != NULL ? str(values[k]) : KP_STR_NULL;
            e->ConfigSource = sources[k];
            e->IsDefault = sources[k] == 5;
            e->IsSensitive = values[k] == NULL;
        }
    }
    return r;
}

static void *model_describe_groups(struct kp_arena *a, const struct kp_DescribeGroupsRequest *q,
                                   int16_t err)
{
    struct kp_DescribeGroupsResponse *r = ALLOC(a, 1, struct kp_DescribeGroupsResponse);
    r->Groups.items = ALLOC(a, q->Groups.count, struct kp_DescribeGroupsResponse_DescribedGroup);
    r->Groups.count = q->Groups.count;
    struct kp_writer sub;
    struct kp_writer asg;
    kp_wr_init(&sub, 1 << 16);
    kp_wr_init(&asg, 1 << 16);
    char *tps[2] = {(char *)(uintptr_t)"t0", (char *)(uintptr_t)"t1"};
    sc_subscription_encode(&sub, tps, 2, NULL, 0);
    struct sc_tp mine[2] = {{(char *)(uintptr_t)"t0", 0}, {(char *)(uintptr_t)"t1", 1}};
    sc_assignment_encode(&asg, mine, 2);
    uint8_t *sb = arena_alloc(a, sub.len);
    uint8_t *ab = arena_alloc(a, asg.len);
    memcpy(sb, sub.buf, sub.len);
    memcpy(ab, asg.buf, asg.len);
    for (int32_t i = 0; i < q->Groups.count; i++) {
        struct kp_DescribeGroupsResponse_DescribedGroup *g = &r->Groups.items[i];
        g->ErrorCode = err;
        g->GroupId = q->Groups.items[i];
        g->GroupState = str("Stable");
        g->ProtocolType = str("consumer");
        g->ProtocolData = str("range");
        g->AuthorizedOperations = INT32_MIN;
        g->Members.items = ALLOC(a, 1, struct kp_DescribeGroupsResponse_DescribedGroupMember);
        g->Members.count = 1;
        struct kp_DescribeGroupsResponse_DescribedGroupMember *m = &g->Members.items[0];
        m->MemberId = str("member-1");
        m->GroupInstanceId = KP_STR_NULL;
        m->ClientId = str("client");
        m->ClientHost = str("/127.0.0.1");
        m->MemberMetadata = (struct kp_bytes){sb, (int32_t)sub.len};
        m->MemberAssignment = (struct kp_bytes){ab, (int32_t)asg.len};
    }
    kp_wr_free(&sub);
    kp_wr_free(&asg);
    return r;
}

/* Answers of APIs whose only content here is an error code per element. */
static void *model_simple(struct kp_arena *a, const struct pending *p, int16_t err)
{
    const struct kp_api *api = kp_api_find(p->api);
    fuzz_check(api != NULL, "a request of an unknown API", p->api);
    void *r = arena_alloc(a, api->response->body->size);
    kp_msg_init(api->response, r);
    switch (p->api) {
    case KP_API_HEARTBEAT:
        ((struct kp_HeartbeatResponse *)r)->ErrorCode = err;
        break;
    case KP_API_LEAVE_GROUP:
        ((struct kp_LeaveGroupResponse *)r)->ErrorCode = err;
        break;
    case KP_API_INIT_PRODUCER_ID: {
        struct kp_InitProducerIdResponse *x = r;
        x->ErrorCode = err;
        x->ProducerId = err != 0 ? -1 : 4242;
        x->ProducerEpoch = 0;
        break;
    }
    case KP_API_CREATE_TOPICS: {
        const struct kp_CreateTopicsRequest *q = p->req.body;
        struct kp_CreateTopicsResponse *x = r;
        x->Topics.items = ALLOC(a, q->Topics.count, struct kp_CreateTopicsResponse_CreatableTopicResult);
        x->Topics.count = q->Topics.count;
        for (int32_t i = 0; i < q->Topics.count; i++) {
            x->Topics.items[i].Name = q->Topics.items[i].Name;
            x->Topics.items[i].ErrorCode = err;
            x->Topics.items[i].ErrorMessage = err != 0 ? str("no") : KP_STR_NULL;
        }
        break;
    }
    case KP_API_DELETE_TOPICS: {
        const struct kp_DeleteTopicsRequest *q = p->req.body;
        struct kp_DeleteTopicsResponse *x = r;
        x->Responses.items = ALLOC(a, q->TopicNames.count, struct kp_DeleteTopicsResponse_DeletableTopicResult);
        x->Responses.count = q->TopicNames.count;
        for (int32_t i = 0; i < q->TopicNames.count; i++) {
            x->Responses.items[i].Name = q->TopicNames.items[i];
            x->Responses.items[i].ErrorCode = err;
        }
        break;
    }
    case KP_API_INCREMENTAL_ALTER_CONFIGS: {
        const struct kp_IncrementalAlterConfigsRequest *q = p->req.body;
        struct kp_IncrementalAlterConfigsResponse *x = r;
        x->Responses.items =
            ALLOC(a, q->Resources.count,
                  struct kp_IncrementalAlterConfigsResponse_AlterConfigsResourceResponse);
        x->Responses.count = q->Resources.count;
        for (int32_t i = 0; i < q->Resources.count; i++) {
            x->Responses.items[i].ErrorCode = err;
            x->Responses.items[i].ErrorMessage = err != 0 ? str("bad value") : KP_STR_NULL;
            x->Responses.items[i].ResourceType = q->Resources.items[i].ResourceType;
            x->Responses.items[i].ResourceName = q->Resources.items[i].ResourceName;
        }
        break;
    }
    case KP_API_ALTER_CONFIGS: {
        const struct kp_AlterConfigsRequest *q = p->req.body;
        struct kp_AlterConfigsResponse *x = r;
        x->Responses.items = ALLOC(a, q->Resources.count, struct kp_AlterConfigsResponse_AlterConfigsResourceResponse);
        x->Responses.count = q->Resources.count;
        for (int32_t i = 0; i < q->Resources.count; i++) {
            x->Responses.items[i].ErrorCode = err;
            x->Responses.items[i].ErrorMessage = err != 0 ? str("bad value") : KP_STR_NULL;
            x->Responses.items[i].ResourceType = q->Resources.items[i].ResourceType;
            x->Responses.items[i].ResourceName = q->Resources.items[i].ResourceName;
        }
        break;
    }
    case KP_API_CREATE_PARTITIONS: {
        const struct kp_CreatePartitionsRequest *q = p->req.body;
        struct kp_CreatePartitionsResponse *x = r;
        x->Results.items = ALLOC(a, q->Topics.count, struct kp_CreatePartitionsResponse_CreatePartitionsTopicResult);
        x->Results.count = q->Topics.count;
        for (int32_t i = 0; i < q->Topics.count; i++) {
            x->Results.items[i].Name = q->Topics.items[i].Name;
            x->Results.items[i].ErrorCode = err;
            x->Results.items[i].ErrorMessage = KP_STR_NULL;
        }
        break;
    }
    case KP_API_DELETE_RECORDS: {
        const struct kp_DeleteRecordsRequest *q = p->req.body;
        struct kp_DeleteRecordsResponse *x = r;
        x->Topics.items = ALLOC(a, q->Topics.count, struct kp_DeleteRecordsResponse_DeleteRecordsTopicResult);
        x->Topics.count = q->Topics.count;
        for (int32_t i = 0; i < q->Topics.count; i++) {
            const struct kp_DeleteRecordsRequest_DeleteRecordsTopic *qt = &q->Topics.items[i];
            x->Topics.items[i].Name = qt->Name;
            x->Topics.items[i].Partitions.items = ALLOC(a, qt->Partitions.count, struct kp_DeleteRecordsResponse_DeleteRecordsPartitionResult);
            x->Topics.items[i].Partitions.count = qt->Partitions.count;
            for (int32_t j = 0; j < qt->Partitions.count; j++) {
                x->Topics.items[i].Partitions.items[j].PartitionIndex = qt->Partitions.items[j].PartitionIndex;
                x->Topics.items[i].Partitions.items[j].LowWatermark = qt->Partitions.items[j].Offset;
                x->Topics.items[i].Partitions.items[j].ErrorCode = err;
            }
        }
        break;
    }
    case KP_API_LIST_GROUPS: {
        struct kp_ListGroupsResponse *x = r;
        x->ErrorCode = err;
        x->Groups.items = ALLOC(a, 2, struct kp_ListGroupsResponse_ListedGroup);
        x->Groups.count = 2;
        x->Groups.items[0] = (struct kp_ListGroupsResponse_ListedGroup){str("fg"), str("consumer")};
        x->Groups.items[1] = (struct kp_ListGroupsResponse_ListedGroup){str("offsets-only"), str("")};
        break;
    }
    case KP_API_DELETE_GROUPS: {
        const struct kp_DeleteGroupsRequest *q = p->req.body;
        struct kp_DeleteGroupsResponse *x = r;
        x->Results.items = ALLOC(a, q->GroupsNames.count, struct kp_DeleteGroupsResponse_DeletableGroupResult);
        x->Results.count = q->GroupsNames.count;
        for (int32_t i = 0; i < q->GroupsNames.count; i++) {
            x->Results.items[i].GroupId = q->GroupsNames.items[i];
            x->Results.items[i].ErrorCode = err;
        }
        break;
    }
    default:
        break; /* every field zero or empty */
    }
    return r;
}

/* The model's answer to p, with error code err where the answer has one. */
static void *model_answer(struct kp_arena *a, const struct pending *p, int16_t err, uint8_t arg)
{
    const void *q = p->req.body;
    switch (p->api) {
    case KP_API_API_VERSIONS:
        return model_api_versions(a, err);
    case KP_API_METADATA:
        return model_metadata(a, q, err, arg);
    case KP_API_FIND_COORDINATOR:
        return model_find_coordinator(a, err);
    case KP_API_JOIN_GROUP:
        return model_join(a, q, p->version, err);
    case KP_API_SYNC_GROUP:
        return model_sync(a, q, err);
    case KP_API_OFFSET_FETCH:
        return model_offset_fetch(a, q, err);
    case KP_API_OFFSET_COMMIT:
        return model_offset_commit(a, q, err);
    case KP_API_LIST_OFFSETS:
        return model_list_offsets(a, q, err);
    case KP_API_FETCH:
        return model_fetch(a, q, err, arg);
    case KP_API_PRODUCE:
        return model_produce(a, q, err);
    case KP_API_DESCRIBE_CONFIGS:
        return model_describe_configs(a, q, err);
    case KP_API_DESCRIBE_GROUPS:
        return model_describe_groups(a, q, err);
    default:
        return model_simple(a, p, err);
    }
}

/* ------------------------------------------------------------- answers */

/* Appends to w the frame answering p as `mode` says. */
static void build_answer(struct kp_writer *w, const struct pending *p, int mode, uint8_t arg,
                         const uint8_t *bytes, size_t n)
{
    if (mode == 3) { /* the input is the whole frame's payload */
        kp_wr_i32(w, (int32_t)n);
        kp_wr_raw(w, bytes, n);
        return;
    }
    if (mode == 2) { /* the input is the body */
        int16_t hv = kp_response_header_version(p->api, p->version);
        kp_wr_i32(w, (int32_t)(n + 4 + (hv >= 1 ? 1 : 0)));
        kp_wr_i32(w, p->corr);
        if (hv >= 1) {
            kp_wr_i8(w, 0); /* no tagged fields */
        }
        kp_wr_raw(w, bytes, n);
        return;
    }
    struct kp_arena a;
    kp_arena_init(&a, ARENA_MAX);
    int16_t err = mode == 1 ? errors[arg % (sizeof(errors) / sizeof(errors[0]))] : 0;
    void *body = model_answer(&a, p, err, mode == 0 ? arg : 0);
    int e = kp_response_encode(w, p->api, p->version, p->corr, body);
    fuzz_check(e == 0, "the model's answer does not encode", e);
    kp_arena_free(&a);
    if (mode == 4 && w->len > 0) { /* one byte changed */
        size_t pos = n >= 2 ? fuzz_load_u16(bytes) : (n == 1 ? bytes[0] : 0);
        w->buf[pos % w->len] ^= arg != 0 ? arg : 0x80;
    }
}

/* --------------------------------------------------------- applications */

static void on_delivery(const struct samsa_delivery *d, void *opaque)
{
    (void)opaque;
    h.reports++;
    h.sink += (uint64_t)d->offset + d->key_len + d->value_len;
}

static void on_error(int err, const char *reason, void *opaque)
{
    (void)opaque;
    h.sink += (uint64_t)err + strlen(reason);
}

static void on_rebalance(bool assigned, const struct samsa_partition *parts, size_t count,
                         void *opaque)
{
    (void)opaque;
    for (size_t i = 0; i < count; i++) {
        h.sink += strlen(parts[i].topic) + (uint64_t)parts[i].partition + (assigned ? 1 : 0);
    }
}

static void produce_some(samsa_producer *p, uint8_t arg)
{
    for (int i = 0; i < 1 + arg % 4; i++) {
        char key[16];
        char value[32];
        int kl = snprintf(key, sizeof(key), "key-%zu", h.produced);
        int vl = snprintf(value, sizeof(value), "value-%zu", h.produced);
        struct samsa_header hd = {"trace", "x", 1};
        struct samsa_record r = {
            .topic = (arg & 8) ? "t1" : (arg & 16 ? "unknown-topic" : "t0"),
            .partition = (arg & 32) ? (int32_t)(arg % 3) : SAMSA_PARTITION_ANY,
            .key = (arg & 64) ? NULL : key,
            .key_len = (size_t)kl,
            .value = value,
            .value_len = (size_t)vl,
            .headers = &hd,
            .header_count = (arg & 128) ? 1 : 0,
        };
        if (samsa_produce(p, &r) == SAMSA_OK) {
            h.produced++;
        }
    }
}

/* What the application does in one step (arg's high bits). */
static void act(samsa_consumer *cons, samsa_producer *prod, uint8_t arg)
{
    if (prod != NULL) {
        if ((arg >> 4) % 3 == 0) {
            produce_some(prod, arg);
        }
        (void)samsa_producer_poll(prod, 0);
        fuzz_check(samsa_producer_outq_len(prod) + h.reports == h.produced,
                   "outstanding records miscounted", (int)h.produced);
        return;
    }
    if (cons == NULL) {
        return;
    }
    for (int i = 0; i < 16; i++) {
        samsa_message *m = samsa_consumer_poll(cons, 0);
        if (m == NULL) {
            break;
        }
        read_message(m);
        samsa_message_free(m);
    }
    struct samsa_partition part = {"t0", 0, 0};
    struct samsa_lag lag;
    struct samsa_partition *as = NULL;
    size_t an = 0;
    int rc = SAMSA_OK;
    switch ((arg >> 4) & 7) {
    case 1:
        rc = samsa_consumer_commit(cons, NULL, 0, true, 0);
        break;
    case 2:
        rc = samsa_consumer_pause(cons, &part, 1);
        break;
    case 3:
        rc = samsa_consumer_resume(cons, &part, 1);
        break;
    case 4:
        rc = samsa_consumer_lag(cons, "t0", 0, &lag);
        h.sink += samsa_consumer_at_end(cons) ? 1 : 0;
        break;
    case 5:
        rc = samsa_consumer_assignment(cons, &as, &an);
        if (rc == SAMSA_OK) {
            samsa_partitions_free(as, an);
        }
        break;
    case 6: {
        struct samsa_partition explicit_offsets[1] = {{"t1", 1, 5}};
        rc = samsa_consumer_commit(cons, explicit_offsets, 1, true, 0);
        break;
    }
    default:
        break;
    }
    h.sink += (uint64_t)(int64_t)rc; /* any answer is fine: what matters is surviving */
}

/* ---------------------------------------------------------------- setup */

static void conf_set(samsa_conf *conf, const char *k, const char *v)
{
    char err[256];
    int e = samsa_conf_set(conf, k, v, err, sizeof(err));
    fuzz_check(e == SAMSA_OK, "a configuration the harness sets was refused", e);
}

/* An op for the I/O loop that no caller waits for. */
static void submit(struct sc_client *c, int kind, void *arg)
{
    struct sc_op *op = sc_op_new(kind, arg);
    fuzz_check(op != NULL, "out of memory", 0);
    op->abandoned = true;
    op->deadline = sc_now_ms() + 3600000;
    if (c->ops_tail != NULL) {
        c->ops_tail->next = op;
    } else {
        c->ops = op;
    }
    c->ops_tail = op;
}

static struct sc_admin_arg *admin_arg(const char *name)
{
    struct sc_admin_arg *a = kp_calloc(1, sizeof(*a));
    fuzz_check(a != NULL, "out of memory", 0);
    a->name = sc_strdup(name);
    fuzz_check(a->name != NULL, "out of memory", 0);
    return a;
}

static struct samsa_partition *parts2(void)
{
    struct samsa_partition *p = kp_calloc(2, sizeof(*p));
    fuzz_check(p != NULL, "out of memory", 0);
    p[0] = (struct samsa_partition){sc_strdup("t0"), 0, 3};
    p[1] = (struct samsa_partition){sc_strdup("t1"), 1, -1};
    fuzz_check(p[0].topic != NULL && p[1].topic != NULL, "out of memory", 0);
    return p;
}

/* Every admin op, queued at once. */
static void queue_admin_ops(struct sc_client *c)
{
    submit(c, SC_OP_METADATA, kp_calloc(1, sizeof(struct sc_md_arg)));
    struct sc_topic_arg *t = kp_calloc(1, sizeof(*t));
    fuzz_check(t != NULL, "out of memory", 0);
    t->name = sc_strdup("new-topic");
    t->partitions = -1;
    t->replication_factor = -1;
    submit(c, SC_OP_CREATE_TOPIC, t);
    struct sc_topic_arg *d = kp_calloc(1, sizeof(*d));
    fuzz_check(d != NULL, "out of memory", 0);
    d->name = sc_strdup("t1");
    submit(c, SC_OP_DELETE_TOPIC, d);
    struct sc_lo_arg *lo = kp_calloc(1, sizeof(*lo));
    fuzz_check(lo != NULL, "out of memory", 0);
    lo->topic = sc_strdup("t0");
    lo->watermarks = true;
    submit(c, SC_OP_LIST_OFFSETS, lo);
    struct sc_admin_arg *a = admin_arg("t0");
    a->resource_type = SAMSA_RESOURCE_TOPIC;
    submit(c, SC_OP_DESCRIBE_CONFIGS, a);
    a = admin_arg("t0");
    a->resource_type = SAMSA_RESOURCE_TOPIC;
    a->cfg_count = 2;
    a->cfg_names = kp_calloc(2, sizeof(char *));
    a->cfg_values = kp_calloc(2, sizeof(char *));
    fuzz_check(a->cfg_names != NULL && a->cfg_values != NULL, "out of memory", 0);
    a->cfg_names[0] = sc_strdup("retention.ms");
    a->cfg_values[0] = sc_strdup("1000");
    a->cfg_names[1] = sc_strdup("cleanup.policy");
    a->cfg_values[1] = NULL;
    submit(c, SC_OP_ALTER_CONFIGS, a);
    a = admin_arg("t0");
    a->total = 4;
    submit(c, SC_OP_CREATE_PARTITIONS, a);
    a = admin_arg("");
    a->parts = parts2();
    a->part_count = 2;
    a->leaders = kp_calloc(2, sizeof(int32_t));
    fuzz_check(a->leaders != NULL, "out of memory", 0);
    submit(c, SC_OP_DELETE_RECORDS, a);
    submit(c, SC_OP_LIST_GROUPS, admin_arg(""));
    submit(c, SC_OP_DESCRIBE_GROUP, admin_arg("fg"));
    submit(c, SC_OP_GROUP_OFFSETS, admin_arg("fg"));
    a = admin_arg("fg");
    a->parts = parts2();
    a->parts[1].offset = 7;
    a->part_count = 2;
    submit(c, SC_OP_ALTER_GROUP_OFFSETS, a);
    submit(c, SC_OP_DELETE_GROUP, admin_arg("fg"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    memset(&h, 0, sizeof(h));
    h.scenario = data[0] & 3;
    h.flags = (data[0] >> 2) & 7;
    h.codec = (data[0] >> 5) % 5;
    h.parts[0] = 1 + (data[1] & 3);
    h.parts[1] = 1 + ((data[1] >> 2) & 3);
    for (int t = 0; t < NT; t++) {
        for (int p = 0; p < MAXP; p++) {
            h.end[t][p] = 4 + t + p;
            h.committed[t][p] = p == 1 ? 2 : -1;
        }
    }
    samsa_conf *conf = samsa_conf_new();
    fuzz_check(conf != NULL, "out of memory", 0);
    conf_set(conf, "bootstrap.servers", "fuzz-broker:9092,fuzz-broker:9093");
    conf_set(conf, "client.id", "fuzz");
    conf_set(conf, "retry.backoff.ms", "1");
    conf_set(conf, "reconnect.backoff.ms", "0");
    conf_set(conf, "reconnect.backoff.max.ms", "10");
    conf_set(conf, "heartbeat.interval.ms", "1000");
    conf_set(conf, "session.timeout.ms", "10000");
    conf_set(conf, "max.poll.interval.ms", "30000");
    conf_set(conf, "auto.commit.interval.ms", "500");
    conf_set(conf, "linger.ms", "0");
    conf_set(conf, "message.timeout.ms", "20000");
    conf_set(conf, "debug", getenv("FUZZ_LOG") != NULL ? "all" : "");
    samsa_conf_set_error_cb(conf, on_error, NULL);
    samsa_conf_set_rebalance_cb(conf, on_rebalance, NULL);
    samsa_conf_set_delivery_cb(conf, on_delivery, NULL);
    char kind = h.scenario == 2 ? 'p' : h.scenario == 3 ? 'a' : 'c';
    if (kind == 'c') {
        conf_set(conf, "group.id", "fg");
        conf_set(conf, "auto.offset.reset", (data[1] & 16) ? "earliest" : "latest");
        conf_set(conf, "partition.assignment.strategy",
                 (data[1] & 32) ? "roundrobin,range" : "range,roundrobin");
    }
    if (kind == 'p') {
        static const char *const acks[3] = {"all", "1", "0"};
        conf_set(conf, "acks", acks[(data[1] >> 4) % 3]);
        conf_set(conf, "compression.type", (data[1] & 64) ? "lz4" : "none");
    }
    char errstr[256];
    int e = sc_client_new_detached(kind, conf, &h.c, errstr, sizeof(errstr));
    samsa_conf_destroy(conf);
    fuzz_check(e == SAMSA_OK, "the detached client did not start", e);
    struct samsa_consumer cons = {h.c};
    struct samsa_producer prod = {h.c};
    if (h.scenario == 0) {
        const char *topics[2] = {"t0", "t1"};
        e = samsa_consumer_subscribe(&cons, topics, 2);
        fuzz_check(e == SAMSA_OK, "subscribe", e);
    } else if (h.scenario == 1) {
        struct samsa_partition parts[4] = {{"t0", 0, SAMSA_OFFSET_BEGINNING},
                                           {"t0", 1, SAMSA_OFFSET_STORED},
                                           {"t1", 0, SAMSA_OFFSET_END},
                                           {"t1", 1, 3}};
        e = samsa_consumer_assign(&cons, parts, 4);
        fuzz_check(e == SAMSA_OK, "assign", e);
    } else if (h.scenario == 2) {
        produce_some(&prod, 0);
        produce_some(&prod, 0x48);
    } else {
        pthread_mutex_lock(&h.c->lock);
        queue_admin_ops(h.c);
        pthread_mutex_unlock(&h.c->lock);
    }
    static const int64_t jumps[8] = {0, 0, 1, 10, 100, 1000, 10000, 60000};
    size_t at = 2;
    for (int step = 0; step < MAX_STEPS && at + 4 <= size; step++) {
        uint8_t op = data[at];
        uint8_t arg = data[at + 1];
        size_t n = fuzz_load_u16(data + at + 2);
        at += 4;
        if (n > size - at) {
            n = size - at;
        }
        const uint8_t *bytes = data + at;
        at += n;
        h.skew += jumps[op >> 5];

        pthread_mutex_lock(&h.c->lock);
        (void)sc_client_run_once(h.c, sc_now_ms() + h.skew);
        take_all_requests();
        if (kind == 'c') {
            check_consumer_queue();
        }
        pthread_mutex_unlock(&h.c->lock);

        act(kind == 'c' ? &cons : NULL, kind == 'p' ? &prod : NULL, arg);

        pthread_mutex_lock(&h.c->lock);
        take_all_requests();
        int mode = op & 7;
        struct hconn *waiting[MAX_CONNS];
        int nw = 0;
        for (int i = 0; i < h.nconns; i++) {
            if (h.conns[i].n > 0 && h.conns[i].conn->state != SC_CONN_DOWN) {
                waiting[nw++] = &h.conns[i];
            }
        }
        if (nw > 0 && mode != 7) {
            struct hconn *hc = waiting[((op >> 3) & 3) % nw];
            if (mode == 6) {
                sc_conn_fail(h.c, hc->conn, "fuzz: connection lost");
            } else {
                struct kp_writer w;
                kp_wr_init(&w, (size_t)1 << 28);
                /* Answered or not, the client's own bookkeeping says what
                 * is still waiting (take_requests). */
                build_answer(&w, hc->q[0], mode == 5 ? 0 : mode, arg, bytes, n);
                if (getenv("FUZZ_LOG") != NULL) {
                    fprintf(stderr, "fuzz: answer %s v%d (mode %d) on node %d\n",
                            kp_api_find(hc->q[0]->api) != NULL ? kp_api_find(hc->q[0]->api)->name
                                                               : "?",
                            hc->q[0]->version, mode, hc->conn->node_id);
                }
                if (w.err == 0) {
                    size_t cut = mode == 5 && w.len > 1 ? 1 + (n > 0 ? bytes[0] : 0) % (w.len - 1)
                                                        : w.len;
                    sc_conn_feed(h.c, hc->conn, w.buf, cut);
                    if (cut < w.len) {
                        take_all_requests();
                        sc_conn_feed(h.c, hc->conn, w.buf + cut, w.len - cut);
                    }
                }
                kp_wr_free(&w);
            }
        }
        take_all_requests();
        if (kind == 'c') {
            check_consumer_queue();
        }
        pthread_mutex_unlock(&h.c->lock);
    }
    act(kind == 'c' ? &cons : NULL, kind == 'p' ? &prod : NULL, 0);
    sc_client_destroy(h.c);
    for (int i = 0; i < h.nconns; i++) {
        for (int k = 0; k < h.conns[i].n; k++) {
            pending_free(h.conns[i].q[k]);
        }
    }
    return 0;
}
