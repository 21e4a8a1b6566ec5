/*
 * kp-capture: a small Kafka-speaking listener that records the request frames
 * real clients send, for Samsa's byte-exact codec vectors.
 *
 *   kp-capture PORT OUTDIR TAG [KEEP]
 *
 * It listens on 127.0.0.1:PORT (0 picks a free port) and prints one line
 * "kp-capture listening on 127.0.0.1:<port>" on stdout once it accepts
 * connections. Every request frame (its 4-byte size included) is written to
 * OUTDIR/TAG/<ApiName>-v<version>-<n>.bin; Produce frames carry the codec of
 * their first batch: Produce-v<version>-<codec>-<n>.bin. Only the first KEEP
 * (default 3) frames of each API, version (and codec) are kept.
 *
 * It answers just enough for clients to go on: one broker (node 1, itself),
 * every topic asked for exists with one partition, produced batches are kept
 * in memory (BaseOffset rewritten) and served back by Fetch, a consumer group
 * always has one member that leads it. It is a test tool, not a broker: one
 * thread, poll() over non-blocking sockets, requests of a connection handled
 * in order (answers are therefore in request order), and an empty Fetch held
 * back for a while (at most 500 ms) so that consumers do not spin.
 *
 * It runs until killed.
 */
#define _POSIX_C_SOURCE 200809L

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>
#include <samsa-protocol/schema.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

enum {
    MAX_CONNS = 64,
    FRAME_MAX = 64 * 1024 * 1024, /* largest request frame accepted */
    OUT_MAX = 256 * 1024 * 1024,  /* ceiling on a connection's pending answers */
    LOG_MAX = 256 * 1024 * 1024,  /* ceiling on one partition's stored batches */
    ARENA_MAX = 64 * 1024 * 1024, /* ceiling on one request's decoded arrays */
    HOLD_MAX_MS = 500,            /* longest an empty Fetch is held back */
    MAX_KEY = 64,
    MAX_VERSION = 16,
    NCODECS = 6, /* none..zstd, plus legacy or unknown */
    NODE_ID = 1,
};

#define HOST "127.0.0.1"

/* One batch stored in a partition's log. */
struct batch {
    size_t pos;   /* where it starts in the log's bytes */
    int64_t base; /* its first offset */
    int64_t next; /* the offset after its last record */
};

/* One partition: the batches produced to it, in order. */
struct plog {
    char *topic;
    int32_t partition;
    struct kp_writer data;
    struct batch *batches;
    size_t nbatches;
    size_t capbatches;
    int64_t next_offset; /* high watermark */
};

struct conn {
    int fd;
    uint8_t *in;
    size_t in_len;
    size_t in_cap;
    struct kp_writer out; /* answers not yet sent, from out_off on */
    size_t out_off;
    struct kp_writer held; /* an answer held back until held_until */
    bool holding;
    int64_t held_until;
    bool closing;
};

struct capture {
    char dir[PATH_MAX]; /* OUTDIR/TAG */
    int keep;
    int32_t port;
    struct plog *logs;
    size_t nlogs;
    size_t caplogs;
    char **topics; /* topics seen, for "all topics" metadata */
    size_t ntopics;
    size_t captopics;
    unsigned long member_seq;
    int kept[MAX_KEY][MAX_VERSION][NCODECS + 1]; /* [codec + 1]: 0 = no codec */
    struct conn conns[MAX_CONNS];
    size_t nconns;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        return 0;
    }
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *str_dup_slice(struct kp_str s)
{
    size_t n = s.len > 0 ? (size_t)s.len : 0;
    char *p = malloc(n + 1);
    if (p == NULL) {
        return NULL;
    }
    if (n > 0) {
        memcpy(p, s.ptr, n);
    }
    p[n] = '\0';
    return p;
}

/* ------------------------------------------------------------- topics and logs */

static bool topic_known(const struct capture *c, struct kp_str name)
{
    for (size_t i = 0; i < c->ntopics; i++) {
        if (kp_str_eq_c(name, c->topics[i])) {
            return true;
        }
    }
    return false;
}

static void topic_remember(struct capture *c, struct kp_str name)
{
    if (name.len <= 0 || topic_known(c, name)) {
        return;
    }
    if (c->ntopics == c->captopics) {
        size_t cap = c->captopics == 0 ? 8 : c->captopics * 2;
        char **t = realloc(c->topics, cap * sizeof *t);
        if (t == NULL) {
            return;
        }
        c->topics = t;
        c->captopics = cap;
    }
    char *s = str_dup_slice(name);
    if (s != NULL) {
        c->topics[c->ntopics++] = s;
    }
}

static struct plog *log_find(struct capture *c, struct kp_str topic, int32_t partition)
{
    for (size_t i = 0; i < c->nlogs; i++) {
        if (c->logs[i].partition == partition && kp_str_eq_c(topic, c->logs[i].topic)) {
            return &c->logs[i];
        }
    }
    return NULL;
}

static struct plog *log_get(struct capture *c, struct kp_str topic, int32_t partition)
{
    struct plog *l = log_find(c, topic, partition);
    if (l != NULL) {
        return l;
    }
    if (c->nlogs == c->caplogs) {
        size_t cap = c->caplogs == 0 ? 8 : c->caplogs * 2;
        struct plog *t = realloc(c->logs, cap * sizeof *t);
        if (t == NULL) {
            return NULL;
        }
        c->logs = t;
        c->caplogs = cap;
    }
    l = &c->logs[c->nlogs];
    memset(l, 0, sizeof *l);
    l->topic = str_dup_slice(topic);
    if (l->topic == NULL) {
        return NULL;
    }
    l->partition = partition;
    kp_wr_init(&l->data, LOG_MAX);
    c->nlogs++;
    return l;
}

/* Appends the batches of a Produce partition to the log, rewriting each
 * BaseOffset. Returns the offset of the first record, or -1 on bad input. */
static int64_t log_append(struct plog *l, struct kp_bytes records)
{
    int64_t first = l->next_offset;
    size_t len = records.len > 0 ? (size_t)records.len : 0;
    size_t off = 0;
    while (len - off >= 12) {
        const uint8_t *b = records.ptr + off;
        int32_t blen = (int32_t)kp_load_be32(b + 8);
        if (blen < 0 || (size_t)blen > len - off - 12) {
            return -1;
        }
        size_t total = 12 + (size_t)blen;
        int64_t count = 1; /* a legacy message */
        if (total >= 61 && b[16] == 2) {
            count = (int32_t)kp_load_be32(b + 57);
            if (count < 1) {
                count = 1;
            }
        }
        if (l->nbatches == l->capbatches) {
            size_t cap = l->capbatches == 0 ? 16 : l->capbatches * 2;
            struct batch *t = realloc(l->batches, cap * sizeof *t);
            if (t == NULL) {
                return -1;
            }
            l->batches = t;
            l->capbatches = cap;
        }
        size_t pos = l->data.len;
        uint8_t *dst = kp_wr_reserve(&l->data, total);
        if (dst == NULL) {
            return -1;
        }
        memcpy(dst, b, total); /* kp_wr_reserve has counted the bytes */
        kp_store_be64(dst, (uint64_t)l->next_offset);
        l->batches[l->nbatches].pos = pos;
        l->batches[l->nbatches].base = l->next_offset;
        l->batches[l->nbatches].next = l->next_offset + count;
        l->nbatches++;
        l->next_offset += count;
        off += total;
    }
    return first;
}

/* The stored batches from the one holding `offset` on; an empty (never null)
 * slice when there are none. */
static struct kp_bytes log_read(const struct plog *l, int64_t offset)
{
    struct kp_bytes r = {(const uint8_t *)"", 0};
    if (l == NULL) {
        return r;
    }
    for (size_t i = 0; i < l->nbatches; i++) {
        if (l->batches[i].next > offset) {
            size_t n = l->data.len - l->batches[i].pos;
            r.ptr = l->data.buf + l->batches[i].pos;
            r.len = n > INT32_MAX ? INT32_MAX : (int32_t)n;
            return r;
        }
    }
    return r;
}

/* --------------------------------------------------------------------- capture */

static const char *const codec_names[NCODECS] = {"none", "gzip", "snappy", "lz4", "zstd", "legacy"};

/* The codec of the first batch of a Produce request: 0..4, 5 for anything
 * else (legacy messages, unknown codecs), -1 when there is no batch. */
static int produce_codec(const struct kp_ProduceRequest *p)
{
    for (int32_t t = 0; t < p->TopicData.count; t++) {
        const struct kp_ProduceRequest_TopicProduceData *td = &p->TopicData.items[t];
        for (int32_t i = 0; i < td->PartitionData.count; i++) {
            struct kp_bytes r = td->PartitionData.items[i].Records;
            if (r.len >= 23 && r.ptr[16] == 2) {
                int codec = r.ptr[22] & 7;
                return codec <= 4 ? codec : 5;
            }
            if (r.len > 0) {
                return 5;
            }
        }
    }
    return -1;
}

/* Writes the frame (size included) to DIR/<name>-v<ver>[-<codec>]-<n>.bin
 * while fewer than `keep` frames of that kind were written. */
static void capture_frame(struct capture *c, const uint8_t *frame, size_t len, int16_t key,
                          int16_t version, int codec)
{
    if (key < 0 || key >= MAX_KEY || version < 0 || version >= MAX_VERSION) {
        return;
    }
    int *n = &c->kept[key][version][codec < 0 ? 0 : codec + 1];
    if (*n >= c->keep) {
        return;
    }
    const struct kp_api *api = kp_api_find(key);
    char name[64];
    if (api != NULL) {
        (void)snprintf(name, sizeof name, "%s", api->name);
    } else {
        (void)snprintf(name, sizeof name, "Api%d", (int)key);
    }
    char path[PATH_MAX + 128];
    int w;
    if (codec >= 0) {
        w = snprintf(path, sizeof path, "%s/%s-v%d-%s-%d.bin", c->dir, name, (int)version,
                     codec_names[codec], *n);
    } else {
        w = snprintf(path, sizeof path, "%s/%s-v%d-%d.bin", c->dir, name, (int)version, *n);
    }
    if (w < 0 || (size_t)w >= sizeof path) {
        return;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        (void)fprintf(stderr, "kp-capture: %s: %s\n", path, strerror(errno));
        return;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, frame + done, len - done);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            (void)fprintf(stderr, "kp-capture: %s: %s\n", path, strerror(errno));
            break;
        }
        done += (size_t)k;
    }
    (void)close(fd);
    (*n)++;
}

/* -------------------------------------------------------------------- handlers */

/* What a handler asks of the caller. */
enum answer {
    ANSWER = 0,      /* encode the response body */
    ANSWER_NONE = 1, /* send nothing (Produce with acks=0) */
    ANSWER_HOLD = 2, /* encode it, but hold it back for a while */
};

struct ctx {
    struct capture *c;
    struct kp_arena *arena;
    const struct kp_request *req;
    int16_t version;
    int hold_ms;
};

#define ARENA_ARRAY(cx, arr, n)                                                                    \
    ((arr).items = kp_arena_alloc((cx)->arena, sizeof *(arr).items * (size_t)((n) > 0 ? (n) : 1)), \
     (arr).count = (n), (arr).items != NULL)

static int32_t *one_node(struct ctx *cx)
{
    int32_t *p = kp_arena_alloc(cx->arena, sizeof *p);
    if (p != NULL) {
        *p = NODE_ID;
    }
    return p;
}

static int on_api_versions(struct ctx *cx, struct kp_ApiVersionsResponse *resp)
{
    if (!ARENA_ARRAY(cx, resp->ApiKeys, (int32_t)kp_apis_count)) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < kp_apis_count; i++) {
        resp->ApiKeys.items[i].ApiKey = kp_apis[i].key;
        resp->ApiKeys.items[i].MinVersion = kp_apis[i].min_version;
        resp->ApiKeys.items[i].MaxVersion = kp_apis[i].max_version;
    }
    resp->ErrorCode = 0;
    resp->ThrottleTimeMs = 0;
    return ANSWER;
}

static int fill_metadata_topic(struct ctx *cx, struct kp_MetadataResponse_MetadataResponseTopic *t,
                               struct kp_str name)
{
    t->ErrorCode = 0;
    t->Name = name;
    t->IsInternal = false;
    if (!ARENA_ARRAY(cx, t->Partitions, 1)) {
        return KP_E_NOMEM;
    }
    struct kp_MetadataResponse_MetadataResponsePartition *p = &t->Partitions.items[0];
    p->ErrorCode = 0;
    p->PartitionIndex = 0;
    p->LeaderId = NODE_ID;
    p->ReplicaNodes.items = one_node(cx);
    p->ReplicaNodes.count = 1;
    p->IsrNodes.items = one_node(cx);
    p->IsrNodes.count = 1;
    p->OfflineReplicas.items = NULL;
    p->OfflineReplicas.count = 0;
    if (p->ReplicaNodes.items == NULL || p->IsrNodes.items == NULL) {
        return KP_E_NOMEM;
    }
    return 0;
}

static int on_metadata(struct ctx *cx, const struct kp_MetadataRequest *req,
                       struct kp_MetadataResponse *resp)
{
    struct capture *c = cx->c;
    if (!ARENA_ARRAY(cx, resp->Brokers, 1)) {
        return KP_E_NOMEM;
    }
    resp->Brokers.items[0].NodeId = NODE_ID;
    resp->Brokers.items[0].Host = kp_str_c(HOST);
    resp->Brokers.items[0].Port = c->port;
    resp->Brokers.items[0].Rack = KP_STR_NULL;
    resp->ClusterId = kp_str_c("samsa-capture");
    resp->ControllerId = NODE_ID;
    resp->ThrottleTimeMs = 0;

    bool all = req->Topics.count < 0 || (cx->version == 0 && req->Topics.count == 0);
    if (all) {
        int32_t n = (int32_t)c->ntopics;
        if (!ARENA_ARRAY(cx, resp->Topics, n)) {
            return KP_E_NOMEM;
        }
        for (int32_t i = 0; i < n; i++) {
            int err = fill_metadata_topic(cx, &resp->Topics.items[i], kp_str_c(c->topics[i]));
            if (err != 0) {
                return err;
            }
        }
        return ANSWER;
    }
    if (!ARENA_ARRAY(cx, resp->Topics, req->Topics.count)) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < req->Topics.count; i++) {
        topic_remember(c, req->Topics.items[i].Name);
        int err = fill_metadata_topic(cx, &resp->Topics.items[i], req->Topics.items[i].Name);
        if (err != 0) {
            return err;
        }
    }
    return ANSWER;
}

static int on_produce(struct ctx *cx, const struct kp_ProduceRequest *req,
                      struct kp_ProduceResponse *resp)
{
    if (!ARENA_ARRAY(cx, resp->Responses, req->TopicData.count)) {
        return KP_E_NOMEM;
    }
    for (int32_t t = 0; t < req->TopicData.count; t++) {
        const struct kp_ProduceRequest_TopicProduceData *td = &req->TopicData.items[t];
        struct kp_ProduceResponse_TopicProduceResponse *tr = &resp->Responses.items[t];
        topic_remember(cx->c, td->Name);
        tr->Name = td->Name;
        if (!ARENA_ARRAY(cx, tr->PartitionResponses, td->PartitionData.count)) {
            return KP_E_NOMEM;
        }
        for (int32_t i = 0; i < td->PartitionData.count; i++) {
            const struct kp_ProduceRequest_PartitionProduceData *pd = &td->PartitionData.items[i];
            struct kp_ProduceResponse_PartitionProduceResponse *pr =
                &tr->PartitionResponses.items[i];
            struct plog *l = log_get(cx->c, td->Name, pd->Index);
            int64_t base = l != NULL ? log_append(l, pd->Records) : -1;
            pr->Index = pd->Index;
            pr->ErrorCode = base < 0 ? KP_ERR_CORRUPT_MESSAGE : 0;
            pr->BaseOffset = base;
            pr->LogAppendTimeMs = -1;
            pr->LogStartOffset = 0;
        }
    }
    resp->ThrottleTimeMs = 0;
    return req->Acks == 0 ? ANSWER_NONE : ANSWER;
}

static int on_fetch(struct ctx *cx, const struct kp_FetchRequest *req,
                    struct kp_FetchResponse *resp)
{
    int64_t total = 0;
    resp->ThrottleTimeMs = 0;
    resp->ErrorCode = 0;
    resp->SessionId = 0;
    if (!ARENA_ARRAY(cx, resp->Responses, req->Topics.count)) {
        return KP_E_NOMEM;
    }
    for (int32_t t = 0; t < req->Topics.count; t++) {
        const struct kp_FetchRequest_FetchTopic *ft = &req->Topics.items[t];
        struct kp_FetchResponse_FetchableTopicResponse *tr = &resp->Responses.items[t];
        tr->Topic = ft->Topic;
        if (!ARENA_ARRAY(cx, tr->Partitions, ft->Partitions.count)) {
            return KP_E_NOMEM;
        }
        for (int32_t i = 0; i < ft->Partitions.count; i++) {
            const struct kp_FetchRequest_FetchPartition *fp = &ft->Partitions.items[i];
            struct kp_FetchResponse_PartitionData *pd = &tr->Partitions.items[i];
            const struct plog *l = log_find(cx->c, ft->Topic, fp->Partition);
            int64_t hw = l != NULL ? l->next_offset : 0;
            pd->PartitionIndex = fp->Partition;
            pd->ErrorCode = 0;
            pd->HighWatermark = hw;
            pd->LastStableOffset = hw;
            pd->LogStartOffset = 0;
            pd->AbortedTransactions.items = NULL;
            pd->AbortedTransactions.count = 0;
            pd->PreferredReadReplica = -1;
            pd->Records = log_read(l, fp->FetchOffset);
            total += pd->Records.len;
        }
    }
    if (total == 0 && req->MaxWaitMs > 0) {
        cx->hold_ms = req->MaxWaitMs < HOLD_MAX_MS ? req->MaxWaitMs : HOLD_MAX_MS;
        return ANSWER_HOLD;
    }
    return ANSWER;
}

static int on_list_offsets(struct ctx *cx, const struct kp_ListOffsetsRequest *req,
                           struct kp_ListOffsetsResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    if (!ARENA_ARRAY(cx, resp->Topics, req->Topics.count)) {
        return KP_E_NOMEM;
    }
    for (int32_t t = 0; t < req->Topics.count; t++) {
        const struct kp_ListOffsetsRequest_ListOffsetsTopic *rt = &req->Topics.items[t];
        struct kp_ListOffsetsResponse_ListOffsetsTopicResponse *tr = &resp->Topics.items[t];
        tr->Name = rt->Name;
        if (!ARENA_ARRAY(cx, tr->Partitions, rt->Partitions.count)) {
            return KP_E_NOMEM;
        }
        for (int32_t i = 0; i < rt->Partitions.count; i++) {
            const struct kp_ListOffsetsRequest_ListOffsetsPartition *rp = &rt->Partitions.items[i];
            struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *pr =
                &tr->Partitions.items[i];
            const struct plog *l = log_find(cx->c, rt->Name, rp->PartitionIndex);
            int64_t off = (rp->Timestamp == -1 && l != NULL) ? l->next_offset : 0;
            pr->PartitionIndex = rp->PartitionIndex;
            pr->ErrorCode = 0;
            pr->Timestamp = -1;
            pr->Offset = off;
            if (!ARENA_ARRAY(cx, pr->OldStyleOffsets, 1)) {
                return KP_E_NOMEM;
            }
            pr->OldStyleOffsets.items[0] = off;
        }
    }
    return ANSWER;
}

static int on_find_coordinator(struct ctx *cx, struct kp_FindCoordinatorResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    resp->ErrorCode = 0;
    resp->ErrorMessage = KP_STR_NULL;
    resp->NodeId = NODE_ID;
    resp->Host = kp_str_c(HOST);
    resp->Port = cx->c->port;
    return ANSWER;
}

static int on_join_group(struct ctx *cx, const struct kp_JoinGroupRequest *req,
                         struct kp_JoinGroupResponse *resp)
{
    struct kp_str member = req->MemberId;
    if (member.len <= 0) {
        char *id = kp_arena_alloc(cx->arena, 300);
        if (id == NULL) {
            return KP_E_NOMEM;
        }
        struct kp_str cid = cx->req->header.ClientId;
        int n = snprintf(id, 300, "%.*s-%lu", cid.len > 200 ? 200 : (int)cid.len,
                         cid.ptr != NULL ? cid.ptr : "", ++cx->c->member_seq);
        if (n < 0) {
            return KP_E_INVALID_ARG;
        }
        member.ptr = id;
        member.len = n >= 300 ? 299 : n;
    }
    resp->ThrottleTimeMs = 0;
    resp->ErrorCode = 0;
    resp->GenerationId = 1;
    resp->Leader = member;
    resp->MemberId = member;
    if (req->Protocols.count < 1) {
        resp->ErrorCode = KP_ERR_INCONSISTENT_GROUP_PROTOCOL;
        resp->ProtocolName = kp_str_c("");
        resp->Members.items = NULL;
        resp->Members.count = 0;
        return ANSWER;
    }
    resp->ProtocolName = req->Protocols.items[0].Name;
    if (!ARENA_ARRAY(cx, resp->Members, 1)) {
        return KP_E_NOMEM;
    }
    resp->Members.items[0].MemberId = member;
    resp->Members.items[0].GroupInstanceId = req->GroupInstanceId;
    resp->Members.items[0].Metadata = req->Protocols.items[0].Metadata;
    return ANSWER;
}

static int on_sync_group(const struct kp_SyncGroupRequest *req, struct kp_SyncGroupResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    resp->ErrorCode = 0;
    resp->Assignment.ptr = (const uint8_t *)"";
    resp->Assignment.len = 0;
    for (int32_t i = 0; i < req->Assignments.count; i++) {
        if (kp_str_eq(req->Assignments.items[i].MemberId, req->MemberId)) {
            resp->Assignment = req->Assignments.items[i].Assignment;
        }
    }
    return ANSWER;
}

static int on_leave_group(struct ctx *cx, const struct kp_LeaveGroupRequest *req,
                          struct kp_LeaveGroupResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    resp->ErrorCode = 0;
    if (req->Members.count > 0) {
        if (!ARENA_ARRAY(cx, resp->Members, req->Members.count)) {
            return KP_E_NOMEM;
        }
        for (int32_t i = 0; i < req->Members.count; i++) {
            resp->Members.items[i].MemberId = req->Members.items[i].MemberId;
            resp->Members.items[i].GroupInstanceId = req->Members.items[i].GroupInstanceId;
            resp->Members.items[i].ErrorCode = 0;
        }
    }
    return ANSWER;
}

static int on_offset_commit(struct ctx *cx, const struct kp_OffsetCommitRequest *req,
                            struct kp_OffsetCommitResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    if (!ARENA_ARRAY(cx, resp->Topics, req->Topics.count)) {
        return KP_E_NOMEM;
    }
    for (int32_t t = 0; t < req->Topics.count; t++) {
        const struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *rt = &req->Topics.items[t];
        struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *tr = &resp->Topics.items[t];
        tr->Name = rt->Name;
        if (!ARENA_ARRAY(cx, tr->Partitions, rt->Partitions.count)) {
            return KP_E_NOMEM;
        }
        for (int32_t i = 0; i < rt->Partitions.count; i++) {
            tr->Partitions.items[i].PartitionIndex = rt->Partitions.items[i].PartitionIndex;
            tr->Partitions.items[i].ErrorCode = 0;
        }
    }
    return ANSWER;
}

static int on_offset_fetch(struct ctx *cx, const struct kp_OffsetFetchRequest *req,
                           struct kp_OffsetFetchResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    resp->ErrorCode = 0;
    int32_t n = req->Topics.count > 0 ? req->Topics.count : 0;
    if (!ARENA_ARRAY(cx, resp->Topics, n)) {
        return KP_E_NOMEM;
    }
    for (int32_t t = 0; t < n; t++) {
        const struct kp_OffsetFetchRequest_OffsetFetchRequestTopic *rt = &req->Topics.items[t];
        struct kp_OffsetFetchResponse_OffsetFetchResponseTopic *tr = &resp->Topics.items[t];
        int32_t np = rt->PartitionIndexes.count > 0 ? rt->PartitionIndexes.count : 0;
        tr->Name = rt->Name;
        if (!ARENA_ARRAY(cx, tr->Partitions, np)) {
            return KP_E_NOMEM;
        }
        for (int32_t i = 0; i < np; i++) {
            struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *p =
                &tr->Partitions.items[i];
            p->PartitionIndex = rt->PartitionIndexes.items[i];
            p->CommittedOffset = -1;
            p->CommittedLeaderEpoch = -1;
            p->Metadata = kp_str_c("");
            p->ErrorCode = 0;
        }
    }
    return ANSWER;
}

static int on_create_topics(struct ctx *cx, const struct kp_CreateTopicsRequest *req,
                            struct kp_CreateTopicsResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    if (!ARENA_ARRAY(cx, resp->Topics, req->Topics.count)) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < req->Topics.count; i++) {
        topic_remember(cx->c, req->Topics.items[i].Name);
        resp->Topics.items[i].Name = req->Topics.items[i].Name;
        resp->Topics.items[i].ErrorCode = 0;
        resp->Topics.items[i].ErrorMessage = KP_STR_NULL;
    }
    return ANSWER;
}

static int on_delete_topics(struct ctx *cx, const struct kp_DeleteTopicsRequest *req,
                            struct kp_DeleteTopicsResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    if (!ARENA_ARRAY(cx, resp->Responses, req->TopicNames.count)) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < req->TopicNames.count; i++) {
        resp->Responses.items[i].Name = req->TopicNames.items[i];
        resp->Responses.items[i].ErrorCode = 0;
    }
    return ANSWER;
}

static int on_init_producer_id(struct kp_InitProducerIdResponse *resp)
{
    resp->ThrottleTimeMs = 0;
    resp->ErrorCode = 0;
    resp->ProducerId = 1;
    resp->ProducerEpoch = 0;
    return ANSWER;
}

/* Fills `resp` (already initialised to the defaults) for the request. APIs
 * without a case get the defaults: every error code 0, every array empty. */
static int dispatch(struct ctx *cx, void *resp)
{
    const void *body = cx->req->body;
    switch (cx->req->header.RequestApiKey) {
    case KP_API_API_VERSIONS:
        return on_api_versions(cx, resp);
    case KP_API_METADATA:
        return on_metadata(cx, body, resp);
    case KP_API_PRODUCE:
        return on_produce(cx, body, resp);
    case KP_API_FETCH:
        return on_fetch(cx, body, resp);
    case KP_API_LIST_OFFSETS:
        return on_list_offsets(cx, body, resp);
    case KP_API_FIND_COORDINATOR:
        return on_find_coordinator(cx, resp);
    case KP_API_JOIN_GROUP:
        return on_join_group(cx, body, resp);
    case KP_API_SYNC_GROUP:
        return on_sync_group(body, resp);
    case KP_API_LEAVE_GROUP:
        return on_leave_group(cx, body, resp);
    case KP_API_OFFSET_COMMIT:
        return on_offset_commit(cx, body, resp);
    case KP_API_OFFSET_FETCH:
        return on_offset_fetch(cx, body, resp);
    case KP_API_CREATE_TOPICS:
        return on_create_topics(cx, body, resp);
    case KP_API_DELETE_TOPICS:
        return on_delete_topics(cx, body, resp);
    case KP_API_INIT_PRODUCER_ID:
        return on_init_producer_id(resp);
    default:
        return ANSWER;
    }
}

/* ApiVersions in a version Samsa does not speak: a v0 body, error 35, that
 * lists only ApiVersions itself, so the client can retry with one we do. */
static int answer_unsupported_api_versions(struct conn *cn, int32_t correlation_id)
{
    struct kp_ApiVersionsResponse_ApiVersion only = {KP_API_API_VERSIONS, 0, 0};
    const struct kp_api *api = kp_api_find(KP_API_API_VERSIONS);
    if (api != NULL) {
        only.MinVersion = api->min_version;
        only.MaxVersion = api->max_version;
    }
    struct kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    resp.ErrorCode = KP_ERR_UNSUPPORTED_VERSION;
    resp.ApiKeys.items = &only;
    resp.ApiKeys.count = 1;
    return kp_response_encode(&cn->out, KP_API_API_VERSIONS, 0, correlation_id, &resp);
}

/* Handles one whole frame (size included). Returns 0, or an error after which
 * the connection is closed. */
static int handle_frame(struct capture *c, struct conn *cn, const uint8_t *frame, size_t len)
{
    struct kp_arena arena;
    struct kp_request req;
    kp_arena_init(&arena, ARENA_MAX);
    memset(&req, 0, sizeof req);
    int err = kp_request_decode(frame + 4, len - 4, &arena, &req);
    int16_t key = req.header.RequestApiKey;
    int16_t ver = req.header.RequestApiVersion;
    int codec = -1;
    if (err == 0 && key == KP_API_PRODUCE) {
        codec = produce_codec(req.body);
    }
    capture_frame(c, frame, len, key, ver, codec);
    (void)fprintf(stderr, "kp-capture: fd %d %s v%d corr %d client '%.*s': %s\n", cn->fd,
                  req.api != NULL ? req.api->name : "?", (int)ver, (int)req.header.CorrelationId,
                  req.header.ClientId.len > 0 ? (int)req.header.ClientId.len : 0,
                  req.header.ClientId.ptr != NULL ? req.header.ClientId.ptr : "",
                  err == 0 ? "ok" : kp_err_name(err));
    if (err == KP_E_UNSUPPORTED && key == KP_API_API_VERSIONS) {
        err = answer_unsupported_api_versions(cn, req.header.CorrelationId);
        goto out_free_arena;
    }
    if (err != 0) {
        goto out_free_arena;
    }
    if (req.api == NULL) { /* cannot happen after a successful decode */
        err = KP_E_UNSUPPORTED;
        goto out_free_arena;
    }

    void *resp = kp_arena_alloc(&arena, req.api->response->body->size);
    if (resp == NULL) {
        err = KP_E_NOMEM;
        goto out_free_arena;
    }
    kp_msg_init(req.api->response, resp);
    struct ctx cx = {c, &arena, &req, ver, 0};
    int what = dispatch(&cx, resp);
    if (what < 0) {
        err = what;
        goto out_free_arena;
    }
    if (what == ANSWER_NONE) {
        goto out_free_arena;
    }
    if (what == ANSWER_HOLD) {
        kp_wr_reset(&cn->held);
        err = kp_response_encode(&cn->held, key, ver, req.header.CorrelationId, resp);
        cn->holding = err == 0;
        cn->held_until = now_ms() + cx.hold_ms;
        goto out_free_arena;
    }
    err = kp_response_encode(&cn->out, key, ver, req.header.CorrelationId, resp);

out_free_arena:
    kp_arena_free(&arena);
    return err;
}

/* ----------------------------------------------------------------- connections */

static void conn_close(struct capture *c, size_t i)
{
    struct conn *cn = &c->conns[i];
    (void)fprintf(stderr, "kp-capture: fd %d closed\n", cn->fd);
    (void)close(cn->fd);
    free(cn->in);
    kp_wr_free(&cn->out);
    kp_wr_free(&cn->held);
    c->conns[i] = c->conns[c->nconns - 1];
    c->nconns--;
}

/* Handles the whole frames buffered on a connection, unless an answer is
 * held back: the next request waits for it, so answers stay in order. */
static void conn_process(struct capture *c, struct conn *cn, int64_t now)
{
    if (cn->holding && now >= cn->held_until) {
        kp_wr_raw(&cn->out, cn->held.buf, cn->held.len);
        kp_wr_reset(&cn->held);
        cn->holding = false;
        if (cn->out.err != 0) {
            cn->closing = true;
            return;
        }
    }
    size_t off = 0;
    while (!cn->holding && !cn->closing && cn->in_len - off >= 4) {
        int32_t size = 0;
        int err = kp_frame_size(cn->in + off, cn->in_len - off, FRAME_MAX, &size);
        if (err == KP_AGAIN) {
            break;
        }
        if (err != 0) {
            (void)fprintf(stderr, "kp-capture: fd %d: bad frame size: %s\n", cn->fd,
                          kp_err_name(err));
            cn->closing = true;
            break;
        }
        if (cn->in_len - off - 4 < (size_t)size) {
            break;
        }
        err = handle_frame(c, cn, cn->in + off, 4 + (size_t)size);
        if (err != 0) {
            (void)fprintf(stderr, "kp-capture: fd %d: closing: %s\n", cn->fd, kp_err_name(err));
            cn->closing = true;
        }
        off += 4 + (size_t)size;
    }
    if (off > 0) {
        memmove(cn->in, cn->in + off, cn->in_len - off);
        cn->in_len -= off;
    }
}

/* Reads what the socket has. Returns false when the connection is done. */
static bool conn_read(struct conn *cn)
{
    for (;;) {
        if (cn->in_cap - cn->in_len < 65536) {
            size_t cap = cn->in_cap == 0 ? 131072 : cn->in_cap * 2;
            if (cap > (size_t)FRAME_MAX + 131072) {
                return cn->in_cap - cn->in_len > 0;
            }
            uint8_t *p = realloc(cn->in, cap);
            if (p == NULL) {
                return false;
            }
            cn->in = p;
            cn->in_cap = cap;
        }
        ssize_t n = recv(cn->fd, cn->in + cn->in_len, cn->in_cap - cn->in_len, 0);
        if (n > 0) {
            cn->in_len += (size_t)n;
            continue;
        }
        if (n == 0) {
            return false;
        }
        if (errno == EINTR) {
            continue;
        }
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

/* Sends what is pending. Returns false when the connection is broken. */
static bool conn_write(struct conn *cn)
{
    while (cn->out_off < cn->out.len) {
        ssize_t n =
            send(cn->fd, cn->out.buf + cn->out_off, cn->out.len - cn->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            cn->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return true;
        }
        return false;
    }
    kp_wr_reset(&cn->out);
    cn->out_off = 0;
    return true;
}

static int set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL, 0);
    if (fl < 0) {
        return -1;
    }
    return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void accept_all(struct capture *c, int lfd)
{
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            return;
        }
        if (c->nconns == MAX_CONNS || set_nonblocking(fd) != 0) {
            (void)close(fd);
            continue;
        }
        struct conn *cn = &c->conns[c->nconns++];
        memset(cn, 0, sizeof *cn);
        cn->fd = fd;
        kp_wr_init(&cn->out, OUT_MAX);
        kp_wr_init(&cn->held, OUT_MAX);
        (void)fprintf(stderr, "kp-capture: fd %d accepted\n", fd);
    }
}

static int listen_on(int32_t port, int32_t *bound)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return -1;
    }
    int one = 1;
    struct sockaddr_in sa;
    socklen_t salen = sizeof sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 ||
        set_nonblocking(fd) != 0 || getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
        (void)close(fd);
        return -1;
    }
    *bound = ntohs(sa.sin_port);
    return fd;
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        (void)fprintf(stderr, "kp-capture: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static bool parse_int(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        return false;
    }
    *out = v;
    return true;
}

static void serve(struct capture *c, int lfd)
{
    struct pollfd pfds[MAX_CONNS + 1];
    for (;;) {
        int64_t now = now_ms();
        int timeout = -1;
        for (size_t i = 0; i < c->nconns; i++) {
            conn_process(c, &c->conns[i], now);
        }
        size_t i = 0;
        while (i < c->nconns) {
            struct conn *cn = &c->conns[i];
            if (cn->out_off < cn->out.len && !conn_write(cn)) {
                cn->closing = true;
            }
            if (cn->closing && cn->out_off >= cn->out.len) {
                conn_close(c, i);
                continue;
            }
            i++;
        }
        pfds[0].fd = lfd;
        pfds[0].events = POLLIN;
        pfds[0].revents = 0;
        for (i = 0; i < c->nconns; i++) {
            struct conn *cn = &c->conns[i];
            pfds[i + 1].fd = cn->fd;
            pfds[i + 1].events = 0;
            pfds[i + 1].revents = 0;
            if (!cn->holding && !cn->closing) {
                pfds[i + 1].events |= POLLIN;
            }
            if (cn->out_off < cn->out.len) {
                pfds[i + 1].events |= POLLOUT;
            }
            if (cn->holding) {
                int64_t wait = cn->held_until - now;
                int w = wait < 0 ? 0 : (int)wait;
                if (timeout < 0 || w < timeout) {
                    timeout = w;
                }
            }
        }
        size_t n = c->nconns;
        if (poll(pfds, (nfds_t)(n + 1), timeout) < 0) {
            if (errno == EINTR) {
                continue;
            }
            (void)fprintf(stderr, "kp-capture: poll: %s\n", strerror(errno));
            return;
        }
        for (i = 0; i < n; i++) {
            struct conn *cn = &c->conns[i];
            if ((pfds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !conn_read(cn)) {
                /* Peer gone: still answer what it sent, then close. */
                conn_process(c, cn, now_ms());
                cn->closing = true;
                cn->holding = false;
            }
            if ((pfds[i + 1].revents & POLLOUT) != 0 && !conn_write(cn)) {
                cn->closing = true;
            }
        }
        if ((pfds[0].revents & POLLIN) != 0) {
            accept_all(c, lfd);
        }
    }
}

int main(int argc, char **argv)
{
    long port = 0;
    long keep = 3;
    if (argc < 4 || argc > 5 || !parse_int(argv[1], 0, 65535, &port) ||
        (argc == 5 && !parse_int(argv[4], 1, 1000, &keep))) {
        (void)fprintf(stderr, "usage: kp-capture PORT OUTDIR TAG [KEEP]\n");
        return 2;
    }
    if (strchr(argv[3], '/') != NULL || argv[3][0] == '\0' || argv[3][0] == '.') {
        (void)fprintf(stderr, "kp-capture: TAG must be a plain name\n");
        return 2;
    }
    static struct capture c;
    int w = snprintf(c.dir, sizeof c.dir, "%s/%s", argv[2], argv[3]);
    if (w < 0 || (size_t)w >= sizeof c.dir || make_dir(argv[2]) != 0 || make_dir(c.dir) != 0) {
        return 1;
    }
    c.keep = (int)keep;
    int lfd = listen_on((int32_t)port, &c.port);
    if (lfd < 0) {
        (void)fprintf(stderr, "kp-capture: cannot listen on %s:%ld: %s\n", HOST, port,
                      strerror(errno));
        return 1;
    }
    (void)printf("kp-capture listening on %s:%d\n", HOST, (int)c.port);
    (void)fflush(stdout);
    serve(&c, lfd);
    (void)close(lfd);
    return 1;
}
