/*
 * A model of a small Kafka cluster for a detached libsamsa client
 * (sc_client_new_detached): the fuzz harness fuzz/fuzz_client_response.c
 * makes it lie, fail, garble or drop; the unit tests (test_client.c) drive
 * the client against it on a fake clock, with nodes that die, refuse
 * connections or stop coordinating.
 *
 * What it models: `brokers` nodes (0, 1, ...) at MB_HOST:9092+id, topics t0
 * and t1 (parts[] partitions, partition p led by p % brokers, or by the
 * next live node when that one is dead and `unnoticed` does not keep it),
 * one group (and every transactional id) whose coordinator is
 * `coordinator` (JoinGroup answers with the member itself and one that
 * never syncs), committed offsets and logs shared by all nodes (logs grow
 * with what is produced), ListGroups naming two groups on every node.
 *
 * The requests: mb_take_all_requests takes every frame the client wrote
 * (conn->out), decodes it as a broker would and keeps it on that
 * connection's queue (struct mb_conn) until answered; it checks the
 * client waits for exactly those requests, in order. mb_encode_answer
 * writes the model's answer to the oldest one, with a Kafka error code
 * where the answer has one.
 *
 * Header only (static functions): an includer defines MB_CHECK(cond, what,
 * value) to report a broken expectation (default: print and abort).
 */
#ifndef SAMSA_TESTS_CLIENT_MODEL_BROKER_H
#define SAMSA_TESTS_CLIENT_MODEL_BROKER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>
#include <samsa-protocol/record_batch.h>

#include "internal.h"

#ifndef MB_CHECK
#define MB_CHECK(cond, what, value)                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "model broker: %s (%d)\n", (what), (int)(value));            \
            abort();                                                                     \
        }                                                                                \
    } while (0)
#endif

#define MB_HOST "fuzz-broker"
#define MB_MAX_CONNS 16
#define MB_MAX_PENDING 512
#define MB_MAX_NODES 4
#define MB_NT 2
#define MB_MAXP 4
#define MB_ARENA_MAX ((size_t)64 * 1024 * 1024)

static const char *const mb_topic_names[MB_NT] = {"t0", "t1"};

/* One request taken from the client, waiting for its answer. */
struct mb_pending {
    int32_t corr;
    int16_t api;
    int16_t version;
    uint8_t *payload; /* the request's bytes (the body's slices point here) */
    struct kp_arena arena;
    struct kp_request req;
};

/* A client connection and its requests waiting, oldest first. */
struct mb_conn {
    struct sc_conn *conn;
    struct mb_pending *q[MB_MAX_PENDING];
    int n;
};

struct mb {
    int flags;            /* 1 no IncrementalAlterConfigs, 2 no CreatePartitions,
                           * 4 old versions (JoinGroup v0-3, OffsetFetch v1, Fetch v4,
                           * Metadata v1) */
    int codec;            /* of fetched batches */
    int brokers;          /* nodes in Metadata, 1..MB_MAX_NODES */
    int32_t controller;   /* Metadata's ControllerId */
    int32_t coordinator;  /* what FindCoordinator names */
    unsigned dead;        /* bit n: node n is down (leads nothing) */
    unsigned unnoticed;   /* bit n: node n is down, but Metadata still names it
                           * leader (the controller has not noticed yet) */
    int32_t parts[MB_NT];
    int64_t end[MB_NT][MB_MAXP];
    int64_t committed[MB_NT][MB_MAXP];
    int32_t generation;
    int member_seq;
    struct mb_conn conns[MB_MAX_CONNS];
    int nconns;
};

/* The model as the fuzz harness starts it: two nodes, node 0 controller and
 * coordinator, logs of 4 + t + p records, partition 1 committed at 2. */
static inline void mb_init(struct mb *m, int32_t parts_t0, int32_t parts_t1)
{
    memset(m, 0, sizeof(*m));
    m->brokers = 2;
    m->parts[0] = parts_t0;
    m->parts[1] = parts_t1;
    for (int t = 0; t < MB_NT; t++) {
        for (int p = 0; p < MB_MAXP; p++) {
            m->end[t][p] = 4 + t + p;
            m->committed[t][p] = p == 1 ? 2 : -1;
        }
    }
}

/* The node a connection goes to (bootstrap ones by their port), or -1. */
static inline int32_t mb_node_of(const struct sc_conn *conn)
{
    if (conn->node_id >= 0) {
        return conn->node_id;
    }
    int32_t n = (int32_t)(conn->port - 9092);
    return n >= 0 && n < MB_MAX_NODES ? n : -1;
}

static inline bool mb_is_dead(const struct mb *m, int32_t node)
{
    return node < 0 || node >= m->brokers || (m->dead & (1u << node)) != 0;
}

/* The leader of partition p: p % brokers, else the next live node (a dead
 * one the controller has not noticed still counts). */
static inline int32_t mb_leader(const struct mb *m, int32_t p)
{
    for (int i = 0; i < m->brokers; i++) {
        int32_t n = (p + i) % m->brokers;
        if (!mb_is_dead(m, n) || (m->unnoticed & (1u << n)) != 0) {
            return n;
        }
    }
    return p % m->brokers;
}


static inline void mb_pending_free(struct mb_pending *p)
{
    kp_arena_free(&p->arena);
    kp_free(p->payload);
    kp_free(p);
}

static inline struct mb_conn *mb_hconn_of(struct mb *m, struct sc_conn *conn)
{
    for (int i = 0; i < m->nconns; i++) {
        if (m->conns[i].conn == conn) {
            return &m->conns[i];
        }
    }
    MB_CHECK(m->nconns < MB_MAX_CONNS, "more connections than the harness keeps", m->nconns);
    m->conns[m->nconns].conn = conn;
    m->conns[m->nconns].n = 0;
    return &m->conns[m->nconns++];
}


/* Takes the frames the client wrote on conn, as a broker reads them. */
static inline void mb_take_requests(struct mb *m, struct sc_client *c, struct sc_conn *conn)
{
    struct mb_conn *hc = mb_hconn_of(m, conn);
    size_t off = 0;
    while (off < conn->out.len) {
        int32_t size = 0;
        int fe = kp_frame_size(conn->out.buf + off, conn->out.len - off, 1 << 30, &size);
        MB_CHECK(fe == 0 && conn->out.len - off - 4 >= (size_t)size,
                   "the client wrote a partial or bad frame", fe);
        struct mb_pending *p = kp_calloc(1, sizeof(*p));
        MB_CHECK(p != NULL, "out of memory", 0);
        p->payload = kp_malloc((size_t)size > 0 ? (size_t)size : 1);
        MB_CHECK(p->payload != NULL, "out of memory", 0);
        memcpy(p->payload, conn->out.buf + off + 4, (size_t)size);
        kp_arena_init(&p->arena, MB_ARENA_MAX);
        int err = kp_request_decode(p->payload, (size_t)size, &p->arena, &p->req);
        MB_CHECK(err == 0, "the client sent a request a broker cannot decode", err);
        /* every frame is the protocol's encoding of what it says, byte for
         * byte (the producer writes its requests by hand, batches in place) */
        struct kp_writer again;
        kp_wr_init(&again, (size_t)1 << 30);
        err = kp_request_encode(&again, &p->req.header, p->req.body);
        MB_CHECK(err == 0 && again.len == 4 + (size_t)size &&
                     memcmp(again.buf, conn->out.buf + off, again.len) == 0,
                 "the client's frame differs from the protocol's encoding of it", err);
        kp_wr_free(&again);
        p->corr = p->req.header.CorrelationId;
        p->api = p->req.header.RequestApiKey;
        p->version = p->req.header.RequestApiVersion;
        off += 4 + (size_t)size;
        if (p->api == KP_API_PRODUCE && ((struct kp_ProduceRequest *)p->req.body)->Acks == 0) {
            mb_pending_free(p); /* acks=0: no answer is read */
            continue;
        }
        if (hc->n == MB_MAX_PENDING) {
            mb_pending_free(p);
            sc_conn_fail(c, conn, "model broker: too many requests waiting");
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
    MB_CHECK(r == NULL || first < hc->n,
               "the client waits for an answer to a request it never sent",
               r != NULL ? r->corr : 0);
    for (int i = 0; i < first; i++) {
        mb_pending_free(hc->q[i]);
    }
    memmove(hc->q, hc->q + first, (size_t)(hc->n - first) * sizeof(hc->q[0])); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
    hc->n -= first;
    int i = 0;
    for (; r != NULL; r = r->next, i++) {
        MB_CHECK(i < hc->n && r->corr == hc->q[i]->corr,
                   "the client waits for requests out of order", r->corr);
        MB_CHECK(r->api_key == hc->q[i]->api && r->api_version == hc->q[i]->version,
                   "a request waits for another API or version than it was sent as",
                   r->api_key);
    }
    MB_CHECK(i == hc->n, "a request the client sent is not waited for", hc->n - i);
    MB_CHECK(conn->req_count == hc->n, "the connection's request count is off",
               conn->req_count - hc->n);
}

static inline void mb_take_all_requests(struct mb *m, struct sc_client *c)
{
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        mb_take_requests(m, c, conn);
    }
}

/* --------------------------------------------------------------- model */

#define ALLOC(a, n, type) ((type *)mb_arena_alloc((a), (size_t)(n) * sizeof(type)))

static inline void *mb_arena_alloc(struct kp_arena *a, size_t n)
{
    void *p = kp_arena_alloc(a, n > 0 ? n : 1);
    MB_CHECK(p != NULL, "out of memory", 0);
    return p;
}

static inline int mb_topic_index(struct kp_str name)
{
    for (int t = 0; t < MB_NT; t++) {
        if (kp_str_eq_c(name, mb_topic_names[t])) {
            return t;
        }
    }
    return -1;
}

static inline bool mb_known(struct mb *m, int t, int32_t p)
{
    return t >= 0 && p >= 0 && p < m->parts[t];
}

static inline struct kp_str mb_str(const char *s)
{
    return kp_str_c(s);
}

static inline void *mb_api_versions(struct mb *m, struct kp_arena *a, int16_t err)
{
    struct kp_ApiVersionsResponse *r = ALLOC(a, 1, struct kp_ApiVersionsResponse);
    r->ErrorCode = err;
    r->ApiKeys.items = ALLOC(a, kp_apis_count, struct kp_ApiVersionsResponse_ApiVersion);
    for (size_t i = 0; i < kp_apis_count; i++) {
        int16_t key = kp_apis[i].key;
        if (((m->flags & 1) && key == KP_API_INCREMENTAL_ALTER_CONFIGS) ||
            ((m->flags & 2) && key == KP_API_CREATE_PARTITIONS)) {
            continue;
        }
        int16_t max = kp_apis[i].max_version;
        if (m->flags & 4) {
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

static inline void *mb_metadata(struct mb *m, struct kp_arena *a, const struct kp_MetadataRequest *q, int16_t err,
                            uint8_t arg)
{
    if ((arg & 0x0f) == 0x0f && m->parts[0] < MB_MAXP) {
        m->parts[0]++; /* t0 grows: subscribed members join again */
    }
    struct kp_MetadataResponse *r = ALLOC(a, 1, struct kp_MetadataResponse);
    r->Brokers.items = ALLOC(a, m->brokers, struct kp_MetadataResponse_MetadataResponseBroker);
    r->Brokers.count = m->brokers;
    for (int b = 0; b < m->brokers; b++) {
        r->Brokers.items[b].NodeId = b;
        r->Brokers.items[b].Host = mb_str(MB_HOST);
        r->Brokers.items[b].Port = 9092 + b;
        r->Brokers.items[b].Rack = KP_STR_NULL;
    }
    r->ClusterId = mb_str("fuzz-cluster");
    r->ControllerId = m->controller;
    int n = q->Topics.count < 0 ? MB_NT : q->Topics.count;
    r->Topics.items = ALLOC(a, n, struct kp_MetadataResponse_MetadataResponseTopic);
    for (int i = 0; i < n; i++) {
        struct kp_MetadataResponse_MetadataResponseTopic *t = &r->Topics.items[r->Topics.count++];
        struct kp_str name = q->Topics.count < 0 ? mb_str(mb_topic_names[i]) : q->Topics.items[i].Name;
        int ti = mb_topic_index(name);
        t->Name = name;
        if (ti < 0) {
            t->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        t->ErrorCode = ti == 0 ? err : 0;
        t->Partitions.items =
            ALLOC(a, m->parts[ti], struct kp_MetadataResponse_MetadataResponsePartition);
        t->Partitions.count = m->parts[ti];
        for (int32_t p = 0; p < m->parts[ti]; p++) {
            struct kp_MetadataResponse_MetadataResponsePartition *mp = &t->Partitions.items[p];
            mp->PartitionIndex = p;
            mp->LeaderId = mb_leader(m, p); /* both brokers lead some: two fetch connections */
            mp->ReplicaNodes.items = ALLOC(a, 1, int32_t);
            mp->ReplicaNodes.items[0] = mp->LeaderId;
            mp->ReplicaNodes.count = 1;
            mp->IsrNodes.items = mp->ReplicaNodes.items;
            mp->IsrNodes.count = 1;
        }
    }
    return r;
}

static inline void *mb_find_coordinator(struct mb *m, struct kp_arena *a, int16_t err)
{
    struct kp_FindCoordinatorResponse *r = ALLOC(a, 1, struct kp_FindCoordinatorResponse);
    r->ErrorCode = err;
    r->ErrorMessage = KP_STR_NULL;
    r->NodeId = err != 0 ? -1 : m->coordinator;
    r->Host = mb_str(err != 0 ? "" : MB_HOST);
    r->Port = err != 0 ? -1 : 9092 + m->coordinator;
    return r;
}

static inline void *mb_join(struct mb *m, struct kp_arena *a, const struct kp_JoinGroupRequest *q, int16_t version,
                        int16_t err)
{
    struct kp_JoinGroupResponse *r = ALLOC(a, 1, struct kp_JoinGroupResponse);
    r->GenerationId = -1;
    r->ProtocolName = mb_str("");
    r->Leader = mb_str("");
    r->MemberId = q->MemberId;
    if (err != 0) {
        r->ErrorCode = err;
        if (err == KP_ERR_MEMBER_ID_REQUIRED) {
            r->MemberId = mb_str("member-required");
        }
        return r;
    }
    if (q->MemberId.len <= 0 && version >= 4) {
        char *id = mb_arena_alloc(a, 32);
        snprintf(id, 32, "member-%d", ++m->member_seq);
        r->ErrorCode = KP_ERR_MEMBER_ID_REQUIRED;
        r->MemberId = mb_str(id);
        return r;
    }
    if (q->MemberId.len <= 0) {
        char *id = mb_arena_alloc(a, 32);
        snprintf(id, 32, "member-%d", ++m->member_seq);
        r->MemberId = mb_str(id);
    }
    r->GenerationId = ++m->generation;
    r->ProtocolName = q->Protocols.count > 0 ? q->Protocols.items[0].Name : mb_str("range");
    r->Leader = r->MemberId;
    /* The member itself and one that never syncs: the assignment is shared. */
    r->Members.items = ALLOC(a, 2, struct kp_JoinGroupResponse_JoinGroupResponseMember);
    r->Members.count = 2;
    for (int i = 0; i < 2; i++) {
        r->Members.items[i].MemberId = i == 0 ? r->MemberId : mb_str("zz-other-member");
        r->Members.items[i].GroupInstanceId = KP_STR_NULL;
        r->Members.items[i].Metadata = q->Protocols.count > 0 ? q->Protocols.items[0].Metadata
                                                               : (struct kp_bytes){NULL, 0};
    }
    return r;
}

static inline void *mb_sync(struct kp_arena *a, const struct kp_SyncGroupRequest *q, int16_t err)
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

static inline void *mb_offset_fetch(struct mb *m, struct kp_arena *a, const struct kp_OffsetFetchRequest *q,
                                int16_t err)
{
    struct kp_OffsetFetchResponse *r = ALLOC(a, 1, struct kp_OffsetFetchResponse);
    r->ErrorCode = err;
    int n = q->Topics.count < 0 ? MB_NT : q->Topics.count;
    r->Topics.items = ALLOC(a, n, struct kp_OffsetFetchResponse_OffsetFetchResponseTopic);
    r->Topics.count = n;
    for (int i = 0; i < n; i++) {
        struct kp_OffsetFetchResponse_OffsetFetchResponseTopic *t = &r->Topics.items[i];
        t->Name = q->Topics.count < 0 ? mb_str(mb_topic_names[i]) : q->Topics.items[i].Name;
        int ti = mb_topic_index(t->Name);
        int np = q->Topics.count < 0 ? MB_MAXP : q->Topics.items[i].PartitionIndexes.count;
        t->Partitions.items = ALLOC(a, np, struct kp_OffsetFetchResponse_OffsetFetchResponsePartition);
        t->Partitions.count = np;
        for (int j = 0; j < np; j++) {
            int32_t p = q->Topics.count < 0 ? j : q->Topics.items[i].PartitionIndexes.items[j];
            struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *op = &t->Partitions.items[j];
            op->PartitionIndex = p;
            op->CommittedOffset = mb_known(m, ti, p) ? m->committed[ti][p] : -1;
            op->CommittedLeaderEpoch = -1;
            op->Metadata = mb_str("");
            op->ErrorCode = mb_known(m, ti, p) ? 0 : KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        }
    }
    return r;
}

static inline void *mb_offset_commit(struct mb *m, struct kp_arena *a, const struct kp_OffsetCommitRequest *q,
                                 int16_t err)
{
    struct kp_OffsetCommitResponse *r = ALLOC(a, 1, struct kp_OffsetCommitResponse);
    r->Topics.items =
        ALLOC(a, q->Topics.count, struct kp_OffsetCommitResponse_OffsetCommitResponseTopic);
    r->Topics.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *qt = &q->Topics.items[i];
        struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *t = &r->Topics.items[i];
        int ti = mb_topic_index(qt->Name);
        t->Name = qt->Name;
        t->Partitions.items = ALLOC(a, qt->Partitions.count,
                                    struct kp_OffsetCommitResponse_OffsetCommitResponsePartition);
        t->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            int32_t p = qt->Partitions.items[j].PartitionIndex;
            t->Partitions.items[j].PartitionIndex = p;
            t->Partitions.items[j].ErrorCode = err;
            if (err == 0 && mb_known(m, ti, p)) {
                m->committed[ti][p] = qt->Partitions.items[j].CommittedOffset;
            }
        }
    }
    return r;
}

static inline void *mb_list_offsets(struct mb *m, struct kp_arena *a, const struct kp_ListOffsetsRequest *q,
                                int16_t err)
{
    struct kp_ListOffsetsResponse *r = ALLOC(a, 1, struct kp_ListOffsetsResponse);
    r->Topics.items =
        ALLOC(a, q->Topics.count, struct kp_ListOffsetsResponse_ListOffsetsTopicResponse);
    r->Topics.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_ListOffsetsRequest_ListOffsetsTopic *qt = &q->Topics.items[i];
        struct kp_ListOffsetsResponse_ListOffsetsTopicResponse *t = &r->Topics.items[i];
        int ti = mb_topic_index(qt->Name);
        t->Name = qt->Name;
        t->Partitions.items = ALLOC(a, qt->Partitions.count,
                                    struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse);
        t->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            int32_t p = qt->Partitions.items[j].PartitionIndex;
            int64_t ts = qt->Partitions.items[j].Timestamp;
            struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *lp = &t->Partitions.items[j];
            lp->PartitionIndex = p;
            lp->ErrorCode = mb_known(m, ti, p) ? err : KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            lp->Timestamp = -1;
            lp->Offset = !mb_known(m, ti, p) ? -1 : ts == -2 ? 0 : ts == -1 ? m->end[ti][p] : 0;
        }
    }
    return r;
}

/* One batch of up to 3 records of partition (t, p) from offset `from`. */
static inline struct kp_bytes mb_records_of(struct mb *m, struct kp_arena *a, int t, int32_t p, int64_t from)
{
    int64_t n = m->end[t][p] - from;
    if (from < 0 || n <= 0) {
        return (struct kp_bytes){(const uint8_t *)"", 0};
    }
    n = n > 3 ? 3 : n;
    struct kp_batch_builder bb;
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    struct kp_bytes out = {(const uint8_t *)"", 0};
    if (kp_batch_builder_init(&bb, m->codec, from, 1700000000000, -1, -1, -1, 1 << 20) == 0) {
        bool ok = true;
        for (int64_t i = 0; i < n && ok; i++) {
            char key[32];
            char value[64];
            int kl = snprintf(key, sizeof(key), "k%lld", (long long)from + (long long)i);
            int vl = snprintf(value, sizeof(value), "value %s/%d/%lld", mb_topic_names[t], p,
                              (long long)from + (long long)i);
            struct kp_record_header hd = {mb_str("h"), {(const uint8_t *)"hv", 2}};
            ok = kp_batch_builder_add(&bb, KP_OFFSET_DELTA_AUTO, 1700000000000 + i,
                                      (struct kp_bytes){(const uint8_t *)key, kl},
                                      (struct kp_bytes){(const uint8_t *)value, vl}, &hd,
                                      i % 2 == 0 ? 1 : 0) == 0;
        }
        if (ok && kp_batch_builder_finish(&bb, &w) == 0) {
            uint8_t *copy = mb_arena_alloc(a, w.len);
            memcpy(copy, w.buf, w.len);
            out = (struct kp_bytes){copy, (int32_t)w.len};
        }
    }
    kp_batch_builder_free(&bb);
    kp_wr_free(&w);
    return out;
}

static inline void *mb_fetch(struct mb *m, struct kp_arena *a, const struct kp_FetchRequest *q, int16_t err,
                         uint8_t arg)
{
    struct kp_FetchResponse *r = ALLOC(a, 1, struct kp_FetchResponse);
    r->Responses.items =
        ALLOC(a, q->Topics.count, struct kp_FetchResponse_FetchableTopicResponse);
    r->Responses.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_FetchRequest_FetchTopic *qt = &q->Topics.items[i];
        struct kp_FetchResponse_FetchableTopicResponse *t = &r->Responses.items[i];
        int ti = mb_topic_index(qt->Topic);
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
            if (!mb_known(m, ti, p)) {
                pd->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            int64_t from = qt->Partitions.items[j].FetchOffset;
            if ((arg & 0x0f) == 0x0e && m->end[ti][p] < 1000000) {
                m->end[ti][p] += 2; /* someone produced meanwhile */
            }
            pd->ErrorCode = from > m->end[ti][p] ? KP_ERR_OFFSET_OUT_OF_RANGE : err;
            pd->HighWatermark = m->end[ti][p];
            pd->LastStableOffset = m->end[ti][p];
            pd->LogStartOffset = 0;
            if (pd->ErrorCode == 0) {
                pd->Records = mb_records_of(m, a, ti, p, from);
            }
        }
    }
    return r;
}

static inline void *mb_produce(struct mb *m, struct kp_arena *a, const struct kp_ProduceRequest *q, int16_t err)
{
    struct kp_ProduceResponse *r = ALLOC(a, 1, struct kp_ProduceResponse);
    r->Responses.items =
        ALLOC(a, q->TopicData.count, struct kp_ProduceResponse_TopicProduceResponse);
    r->Responses.count = q->TopicData.count;
    for (int32_t i = 0; i < q->TopicData.count; i++) {
        const struct kp_ProduceRequest_TopicProduceData *qt = &q->TopicData.items[i];
        struct kp_ProduceResponse_TopicProduceResponse *t = &r->Responses.items[i];
        int ti = mb_topic_index(qt->Name);
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
            if (!mb_known(m, ti, p)) {
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
            pr->BaseOffset = m->end[ti][p];
            if (rec.len > 0 &&
                kp_batch_parse_lenient(rec.ptr, (size_t)rec.len, &bh, &size) == 0) {
                m->end[ti][p] += (int64_t)bh.LastOffsetDelta + 1;
            }
        }
    }
    return r;
}

static inline void *mb_describe_configs(struct kp_arena *a, const struct kp_DescribeConfigsRequest *q,
                                    int16_t err)
{
    struct kp_DescribeConfigsResponse *r = ALLOC(a, 1, struct kp_DescribeConfigsResponse);
    r->Results.items =
        ALLOC(a, q->Resources.count, struct kp_DescribeConfigsResponse_DescribeConfigsResult);
    r->Results.count = q->Resources.count;
    for (int32_t i = 0; i < q->Resources.count; i++) {
        struct kp_DescribeConfigsResponse_DescribeConfigsResult *res = &r->Results.items[i];
        res->ErrorCode = err;
        res->ErrorMessage = err != 0 ? mb_str("refused") : KP_STR_NULL;
        res->ResourceType = q->Resources.items[i].ResourceType;
        res->ResourceName = q->Resources.items[i].ResourceName;
        res->Configs.items = ALLOC(a, 3, struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult);
        res->Configs.count = 3;
        static const char *const names[3] = {"retention.ms", "cleanup.policy", "sasl.secret"};
        static const char *const values[3] = {"604800000", "compact", NULL};
        static const int8_t sources[3] = {5, 1, 1};
        for (int k = 0; k < 3; k++) {
            struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult *e = &res->Configs.items[k];
            e->Name = mb_str(names[k]);
            e->Value = values[k] != NULL ? mb_str(values[k]) : KP_STR_NULL;
            e->ConfigSource = sources[k];
            e->IsDefault = sources[k] == 5;
            e->IsSensitive = values[k] == NULL;
        }
    }
    return r;
}

static inline void *mb_describe_groups(struct kp_arena *a, const struct kp_DescribeGroupsRequest *q,
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
    uint8_t *sb = mb_arena_alloc(a, sub.len);
    uint8_t *ab = mb_arena_alloc(a, asg.len);
    memcpy(sb, sub.buf, sub.len);
    memcpy(ab, asg.buf, asg.len);
    for (int32_t i = 0; i < q->Groups.count; i++) {
        struct kp_DescribeGroupsResponse_DescribedGroup *g = &r->Groups.items[i];
        g->ErrorCode = err;
        g->GroupId = q->Groups.items[i];
        g->GroupState = mb_str("Stable");
        g->ProtocolType = mb_str("consumer");
        g->ProtocolData = mb_str("range");
        g->AuthorizedOperations = INT32_MIN;
        g->Members.items = ALLOC(a, 1, struct kp_DescribeGroupsResponse_DescribedGroupMember);
        g->Members.count = 1;
        struct kp_DescribeGroupsResponse_DescribedGroupMember *m = &g->Members.items[0];
        m->MemberId = mb_str("member-1");
        m->GroupInstanceId = KP_STR_NULL;
        m->ClientId = mb_str("client");
        m->ClientHost = mb_str("/127.0.0.1");
        m->MemberMetadata = (struct kp_bytes){sb, (int32_t)sub.len};
        m->MemberAssignment = (struct kp_bytes){ab, (int32_t)asg.len};
    }
    kp_wr_free(&sub);
    kp_wr_free(&asg);
    return r;
}

/* Answers of APIs whose only content here is an error code per element. */
static inline void *mb_simple(struct kp_arena *a, const struct mb_pending *p, int16_t err)
{
    const struct kp_api *api = kp_api_find(p->api);
    MB_CHECK(api != NULL, "a request of an unknown API", p->api);
    void *r = mb_arena_alloc(a, api->response->body->size);
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
            x->Topics.items[i].ErrorMessage = err != 0 ? mb_str("no") : KP_STR_NULL;
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
            x->Responses.items[i].ErrorMessage = err != 0 ? mb_str("bad value") : KP_STR_NULL;
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
            x->Responses.items[i].ErrorMessage = err != 0 ? mb_str("bad value") : KP_STR_NULL;
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
        x->Groups.items[0] = (struct kp_ListGroupsResponse_ListedGroup){mb_str("fg"), mb_str("consumer")};
        x->Groups.items[1] = (struct kp_ListGroupsResponse_ListedGroup){mb_str("offsets-only"), mb_str("")};
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
    case KP_API_ADD_PARTITIONS_TO_TXN: {
        const struct kp_AddPartitionsToTxnRequest *q = p->req.body;
        struct kp_AddPartitionsToTxnResponse *x = r;
        x->Results.items = ALLOC(a, q->Topics.count, struct kp_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult);
        x->Results.count = q->Topics.count;
        for (int32_t i = 0; i < q->Topics.count; i++) {
            x->Results.items[i].Name = q->Topics.items[i].Name;
            x->Results.items[i].Results.count = q->Topics.items[i].Partitions.count;
            x->Results.items[i].Results.items = ALLOC(a, q->Topics.items[i].Partitions.count,
                                                      struct kp_AddPartitionsToTxnResponse_AddPartitionsToTxnPartitionResult);
            for (int32_t j = 0; j < q->Topics.items[i].Partitions.count; j++) {
                x->Results.items[i].Results.items[j].PartitionIndex = q->Topics.items[i].Partitions.items[j];
                x->Results.items[i].Results.items[j].ErrorCode = err;
            }
        }
        break;
    }
    case KP_API_END_TXN:
        ((struct kp_EndTxnResponse *)r)->ErrorCode = err;
        break;
    case KP_API_ADD_OFFSETS_TO_TXN:
        ((struct kp_AddOffsetsToTxnResponse *)r)->ErrorCode = err;
        break;
    case KP_API_TXN_OFFSET_COMMIT: {
        const struct kp_TxnOffsetCommitRequest *q = p->req.body;
        struct kp_TxnOffsetCommitResponse *x = r;
        x->Topics.items = ALLOC(a, q->Topics.count, struct kp_TxnOffsetCommitResponse_TxnOffsetCommitResponseTopic);
        x->Topics.count = q->Topics.count;
        for (int32_t i = 0; i < q->Topics.count; i++) {
            x->Topics.items[i].Name = q->Topics.items[i].Name;
            x->Topics.items[i].Partitions.count = q->Topics.items[i].Partitions.count;
            x->Topics.items[i].Partitions.items = ALLOC(a, q->Topics.items[i].Partitions.count,
                                                        struct kp_TxnOffsetCommitResponse_TxnOffsetCommitResponsePartition);
            for (int32_t j = 0; j < q->Topics.items[i].Partitions.count; j++) {
                x->Topics.items[i].Partitions.items[j].PartitionIndex =
                    q->Topics.items[i].Partitions.items[j].PartitionIndex;
                x->Topics.items[i].Partitions.items[j].ErrorCode = err;
            }
        }
        break;
    }
    default:
        break; /* every field zero or empty */
    }
    return r;
}

/* The model's answer to p, with error code err where the answer has one. */
static inline void *mb_answer(struct mb *m, struct kp_arena *a, const struct mb_pending *p, int16_t err, uint8_t arg)
{
    const void *q = p->req.body;
    switch (p->api) {
    case KP_API_API_VERSIONS:
        return mb_api_versions(m, a, err);
    case KP_API_METADATA:
        return mb_metadata(m, a, q, err, arg);
    case KP_API_FIND_COORDINATOR:
        return mb_find_coordinator(m, a, err);
    case KP_API_JOIN_GROUP:
        return mb_join(m, a, q, p->version, err);
    case KP_API_SYNC_GROUP:
        return mb_sync(a, q, err);
    case KP_API_OFFSET_FETCH:
        return mb_offset_fetch(m, a, q, err);
    case KP_API_OFFSET_COMMIT:
        return mb_offset_commit(m, a, q, err);
    case KP_API_LIST_OFFSETS:
        return mb_list_offsets(m, a, q, err);
    case KP_API_FETCH:
        return mb_fetch(m, a, q, err, arg);
    case KP_API_PRODUCE:
        return mb_produce(m, a, q, err);
    case KP_API_DESCRIBE_CONFIGS:
        return mb_describe_configs(a, q, err);
    case KP_API_DESCRIBE_GROUPS:
        return mb_describe_groups(a, q, err);
    default:
        return mb_simple(a, p, err);
    }
}


/* Appends to w the frame of the model's answer to p, with the Kafka error
 * err where the answer has one (arg: what mb_answer says). */
static inline void mb_encode_answer(struct mb *m, struct kp_writer *w, const struct mb_pending *p,
                                    int16_t err, uint8_t arg)
{
    struct kp_arena a;
    kp_arena_init(&a, MB_ARENA_MAX);
    void *body = mb_answer(m, &a, p, err, arg);
    int e = kp_response_encode(w, p->api, p->version, p->corr, body);
    MB_CHECK(e == 0, "the model's answer does not encode", e);
    kp_arena_free(&a);
}

/* Frees the requests still waiting. */
static inline void mb_free(struct mb *m)
{
    for (int i = 0; i < m->nconns; i++) {
        for (int k = 0; k < m->conns[i].n; k++) {
            mb_pending_free(m->conns[i].q[k]);
        }
        m->conns[i].n = 0;
    }
    m->nconns = 0;
}

#endif
