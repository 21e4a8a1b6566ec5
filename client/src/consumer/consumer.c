/*
 * The consumer: assigned partitions (struct sc_cpart) are resolved to an
 * offset (ListOffsets, or the group's committed offset), then fetched from
 * their leaders, one Fetch in flight per leader covering all its
 * partitions. Fetched records are copied into messages queued for
 * samsa_consumer_poll; fetching pauses while queued.max.messages.kbytes are
 * waiting. The group membership (group.c) drives the assignment of a
 * subscribed consumer through sc_consumer_set_assignment.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer/consumer.h"

#define MAX_FETCH_PARTS 1024
#define MAX_DECOMPRESSED ((size_t)256 * 1024 * 1024)

/* ------------------------------------------------------------- messages */

void samsa_message_free(samsa_message *msg)
{
    kp_free(msg); /* the public struct is the start of the one block */
}

static void cq_push(struct sc_client *c, struct sc_cmsg *m)
{
    m->next = NULL;
    if (c->cq_tail != NULL) {
        c->cq_tail->next = m;
    } else {
        c->cq = m;
    }
    c->cq_tail = m;
    c->cq_bytes += m->size;
    m->part->queued++;
}

int64_t sc_cq_drop(struct sc_client *c, const struct sc_cpart *part)
{
    struct sc_cmsg **at = &c->cq;
    int64_t lowest = -1;
    c->cq_tail = NULL;
    while (*at != NULL) {
        struct sc_cmsg *m = *at;
        if (part == NULL || m->part == part) {
            if (part != NULL && m->part == part && m->epoch == part->epoch &&
                (lowest < 0 || m->pub.offset < lowest)) {
                lowest = m->pub.offset;
            }
            *at = m->next;
            c->cq_bytes -= m->size;
            m->part->queued--;
            kp_free(m);
        } else {
            c->cq_tail = m;
            at = &m->next;
        }
    }
    return lowest;
}

int64_t sc_cpart_next_for_app(const struct sc_client *c, const struct sc_cpart *part)
{
    if (part->app_offset >= 0) {
        return part->app_offset;
    }
    /* nothing handed out yet: the first fetched and queued, else where
     * fetching stands */
    int64_t lowest = -1;
    for (const struct sc_cmsg *m = c->cq; m != NULL; m = m->next) {
        if (m->part == part && m->epoch == part->epoch && (lowest < 0 || m->pub.offset < lowest)) {
            lowest = m->pub.offset;
        }
    }
    return lowest >= 0 ? lowest : part->position;
}

static struct sc_cmsg *make_msg(struct sc_cpart *part, const struct kp_record *rec, int ts_type)
{
    size_t tlen = strlen(part->topic);
    size_t klen = rec->Key.len > 0 ? (size_t)rec->Key.len : 0;
    size_t vlen = rec->Value.len > 0 ? (size_t)rec->Value.len : 0;
    size_t hcount = rec->HeaderCount > 0 ? (size_t)rec->HeaderCount : 0;
    size_t hbytes = (size_t)(rec->Headers.len > 0 ? rec->Headers.len : 0) + hcount;
    size_t size = sizeof(struct sc_cmsg) + hcount * sizeof(struct samsa_header) + tlen + 1 + klen +
                  vlen + hbytes;
    struct sc_cmsg *m = kp_malloc(size);
    if (m == NULL) {
        return NULL;
    }
    memset(m, 0, sizeof(*m));
    struct samsa_header *hv = (struct samsa_header *)(void *)(m + 1);
    char *p = (char *)(hv + hcount);
    memcpy(p, part->topic, tlen + 1);
    m->pub.topic = p;
    p += tlen + 1;
    if (rec->Key.len >= 0) {
        if (klen > 0) {
            memcpy(p, rec->Key.ptr, klen);
        }
        m->pub.key = p;
        m->pub.key_len = klen;
        p += klen;
    }
    if (rec->Value.len >= 0) {
        if (vlen > 0) {
            memcpy(p, rec->Value.ptr, vlen);
        }
        m->pub.value = p;
        m->pub.value_len = vlen;
        p += vlen;
    }
    if (hcount > 0) {
        struct kp_header_iter hi;
        kp_record_headers_init(&hi, rec);
        struct kp_record_header h;
        size_t n = 0;
        while (n < hcount && kp_record_header_next(&hi, &h) == 0) {
            memcpy(p, h.Key.ptr, (size_t)h.Key.len);
            p[h.Key.len] = '\0';
            hv[n].name = p;
            p += h.Key.len + 1;
            if (h.Value.len >= 0) {
                memcpy(p, h.Value.ptr, (size_t)h.Value.len);
                hv[n].value = p;
                hv[n].value_len = (size_t)h.Value.len;
                p += h.Value.len;
            }
            n++;
        }
        m->pub.headers = hv;
        m->pub.header_count = n;
    }
    m->pub.partition = part->partition;
    m->pub.offset = rec->Offset;
    m->pub.timestamp = rec->Timestamp;
    m->pub.timestamp_type = ts_type;
    m->part = part;
    m->epoch = part->epoch;
    m->size = size;
    return m;
}

/* ---------------------------------------------------------- assignment */

struct sc_cpart *sc_cpart_find(struct sc_client *c, const char *topic, int32_t partition)
{
    for (int i = 0; i < c->cpart_count; i++) {
        if (c->cparts[i]->partition == partition && strcmp(c->cparts[i]->topic, topic) == 0) {
            return c->cparts[i];
        }
    }
    return NULL;
}

static void cpart_free(struct sc_cpart *p)
{
    if (p != NULL) {
        kp_free(p->topic);
        kp_free(p);
    }
}

/* Sets where a partition starts: an absolute offset is used as is, a
 * logical one is resolved by the I/O thread. */
static void cpart_set_offset(struct sc_cpart *p, int64_t offset)
{
    if (offset >= 0) {
        p->state = SC_CP_ACTIVE;
        p->position = offset;
    } else {
        p->state = SC_CP_NEED_OFFSET;
        p->reset = offset;
        p->reset_is_ts = false;
    }
    p->retry_at = 0;
}

int sc_consumer_set_assignment(struct sc_client *c, const struct samsa_partition *parts,
                               size_t count)
{
    struct sc_cpart **np = kp_calloc(count > 0 ? count : 1, sizeof(*np)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
    if (np == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        np[i] = kp_calloc(1, sizeof(*np[i]));
        if (np[i] == NULL || (np[i]->topic = sc_strdup(parts[i].topic)) == NULL) {
            for (size_t j = 0; j <= i; j++) {
                cpart_free(np[j]);
            }
            kp_free(np);
            return SAMSA_ERR_NOMEM;
        }
        np[i]->partition = parts[i].partition;
        np[i]->leader = -1;
        np[i]->hwm = -1;
        np[i]->lso = -1;
        np[i]->log_start = -1;
        np[i]->app_offset = -1;
        np[i]->committed = -1;
        cpart_set_offset(np[i], parts[i].offset);
    }
    /* A partition kept across the change keeps its position. */
    for (size_t i = 0; i < count; i++) {
        struct sc_cpart *old = sc_cpart_find(c, np[i]->topic, np[i]->partition);
        if (old != NULL && old->state == SC_CP_ACTIVE && parts[i].offset == SAMSA_OFFSET_STORED) {
            np[i]->state = SC_CP_ACTIVE;
            np[i]->position = old->app_offset >= 0 ? old->app_offset : old->position;
        }
    }
    sc_cq_drop(c, NULL);
    for (int i = 0; i < c->cpart_count; i++) {
        cpart_free(c->cparts[i]);
    }
    kp_free(c->cparts);
    c->cparts = np;
    c->cpart_count = (int)count;
    c->md_wanted = true;
    return SAMSA_OK;
}

static int gated_consumer_assign(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    if (sc == NULL || (parts == NULL && count > 0)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || parts[i].topic[0] == '\0' || parts[i].partition < 0 ||
            (parts[i].offset < 0 && parts[i].offset != SAMSA_OFFSET_BEGINNING &&
             parts[i].offset != SAMSA_OFFSET_END && parts[i].offset != SAMSA_OFFSET_STORED)) {
            return SAMSA_ERR_INVALID_ARG;
        }
        if (parts[i].offset == SAMSA_OFFSET_STORED && c->v->group_id[0] == '\0') {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    pthread_mutex_lock(&c->lock);
    int err = c->subscribed ? SAMSA_ERR_STATE : sc_consumer_set_assignment(c, parts, count);
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    return err;
}

int samsa_consumer_assign(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_assign(sc, parts, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

int sc_consumer_add_parts(struct sc_client *c, const struct samsa_partition *parts, size_t count)
{
    if (count == 0) {
        return SAMSA_OK;
    }
    size_t total = (size_t)c->cpart_count + count;
    struct sc_cpart **np = kp_realloc(c->cparts, total * sizeof(*np)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
    if (np == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    c->cparts = np;
    for (size_t i = 0; i < count; i++) {
        struct sc_cpart *p = kp_calloc(1, sizeof(*p));
        if (p == NULL || (p->topic = sc_strdup(parts[i].topic)) == NULL) {
            cpart_free(p);
            return SAMSA_ERR_NOMEM; /* those added so far stay: they are valid */
        }
        p->partition = parts[i].partition;
        p->leader = -1;
        p->hwm = -1;
        p->lso = -1;
        p->log_start = -1;
        p->app_offset = -1;
        p->committed = -1;
        cpart_set_offset(p, parts[i].offset);
        c->cparts[c->cpart_count++] = p;
    }
    c->md_wanted = true;
    return SAMSA_OK;
}

void sc_consumer_revoking(struct sc_client *c, struct sc_cpart *p)
{
    p->revoking = true;
    p->epoch++; /* answers in flight are for the old epoch */
    (void)sc_cq_drop(c, p);
}

void sc_consumer_remove_revoking(struct sc_client *c)
{
    int k = 0;
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        if (p->revoking) {
            (void)sc_cq_drop(c, p);
            cpart_free(p);
        } else {
            c->cparts[k++] = p;
        }
    }
    c->cpart_count = k;
}

void sc_consumer_stop_fetching(struct sc_client *c)
{
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        /* What was fetched and not handed out is dropped: the position goes
         * back to the first of it, the next offset the application would
         * have got (what the "revoked" event reports, samsa.h). */
        int64_t first = sc_cq_drop(c, p);
        if (p->state == SC_CP_ACTIVE && first >= 0) {
            p->position = first;
        }
        p->epoch++; /* answers in flight are for the old epoch */
    }
}

/* ------------------------------------------------------- offset resets */

/* Where auto.offset.reset sends a partition (or it stops). */
static void apply_reset_policy(struct sc_client *c, struct sc_cpart *p, const char *why)
{
    if (c->v->auto_offset_reset == SC_RESET_ERROR) {
        p->state = SC_CP_STOPPED;
        sc_post_error(c, KP_ERR_OFFSET_OUT_OF_RANGE,
                      "%s [%d]: %s and auto.offset.reset=error: partition stopped", p->topic,
                      p->partition, why);
        return;
    }
    cpart_set_offset(p, c->v->auto_offset_reset == SC_RESET_EARLIEST ? SAMSA_OFFSET_BEGINNING
                                                                      : SAMSA_OFFSET_END);
    sc_log(c, "%s [%d]: %s: reset to %s", p->topic, p->partition, why,
           c->v->auto_offset_reset == SC_RESET_EARLIEST ? "earliest" : "latest");
}

struct lo_ctx {
    int count;
    struct {
        struct sc_cpart *part;
        int epoch;
    } items[];
};

static bool cpart_alive(struct sc_client *c, const struct sc_cpart *p)
{
    for (int i = 0; i < c->cpart_count; i++) {
        if (c->cparts[i] == p) {
            return true;
        }
    }
    return false;
}

static void on_list_offsets(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                            void *vctx)
{
    (void)conn;
    struct lo_ctx *ctx = vctx;
    const struct kp_ListOffsetsResponse *r = body;
    int64_t now = sc_now_ms();
    for (int i = 0; i < ctx->count; i++) {
        struct sc_cpart *p = ctx->items[i].part;
        if (!cpart_alive(c, p) || p->epoch != ctx->items[i].epoch || p->state != SC_CP_QUERYING) {
            continue;
        }
        p->state = SC_CP_NEED_OFFSET;
        if (err != 0) {
            p->retry_at = now + c->v->retry_backoff_ms;
            continue;
        }
        int perr = SAMSA_ERR_BAD_RESPONSE;
        int64_t off = -1;
        for (int32_t ti = 0; ti < r->Topics.count; ti++) {
            if (!kp_str_eq_c(r->Topics.items[ti].Name, p->topic)) {
                continue;
            }
            for (int32_t pi = 0; pi < r->Topics.items[ti].Partitions.count; pi++) {
                const struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *pr =
                    &r->Topics.items[ti].Partitions.items[pi];
                if (pr->PartitionIndex == p->partition) {
                    perr = sc_err_from_wire(pr->ErrorCode);
                    off = pr->Offset;
                }
            }
        }
        if (perr == SAMSA_OK && off < 0 && p->reset_is_ts) {
            /* No record at or after that time: the end. */
            p->reset = SAMSA_OFFSET_END;
            p->reset_is_ts = false;
            continue;
        }
        if (perr == SAMSA_OK && off >= 0) {
            p->state = SC_CP_ACTIVE;
            p->position = off;
            pthread_cond_broadcast(&c->ev_cond);
            continue;
        }
        p->retry_at = now + c->v->retry_backoff_ms;
        c->md_wanted = true;
    }
    kp_free(ctx);
}

static void list_offsets_to(struct sc_client *c, struct sc_conn *conn, int64_t now)
{
    int16_t ver = sc_conn_version(conn, KP_API_LIST_OFFSETS, 1, 3);
    if (ver < 0) {
        return;
    }
    struct kp_ListOffsetsRequest_ListOffsetsPartition ps[MAX_FETCH_PARTS];
    struct kp_ListOffsetsRequest_ListOffsetsTopic ts[MAX_FETCH_PARTS];
    struct sc_cpart *parts[MAX_FETCH_PARTS];
    int n = 0;
    int nt = 0;
    /* Partitions grouped by topic: one pass per distinct topic. */
    for (int i = 0; i < c->cpart_count && n < MAX_FETCH_PARTS; i++) {
        struct sc_cpart *p = c->cparts[i];
        if (p->state != SC_CP_NEED_OFFSET || p->leader != conn->node_id || p->retry_at > now ||
            p->reset == SAMSA_OFFSET_STORED || p->revoking) {
            continue;
        }
        bool seen = false;
        for (int t = 0; t < nt; t++) {
            seen = seen || kp_str_eq_c(ts[t].Name, p->topic);
        }
        if (seen) {
            continue;
        }
        ts[nt].Name = kp_str_c(p->topic);
        ts[nt].Partitions.items = &ps[n];
        ts[nt].Partitions.count = 0;
        for (int j = i; j < c->cpart_count && n < MAX_FETCH_PARTS; j++) {
            struct sc_cpart *q = c->cparts[j];
            if (q->state != SC_CP_NEED_OFFSET || q->leader != conn->node_id || q->retry_at > now ||
                q->reset == SAMSA_OFFSET_STORED || q->revoking || strcmp(q->topic, p->topic) != 0) {
                continue;
            }
            memset(&ps[n], 0, sizeof(ps[n]));
            ps[n].PartitionIndex = q->partition;
            ps[n].Timestamp = q->reset_is_ts ? q->reset
                                             : (q->reset == SAMSA_OFFSET_BEGINNING ? -2 : -1);
            ps[n].MaxNumOffsets = 1;
            parts[n] = q;
            ts[nt].Partitions.count++;
            n++;
        }
        nt++;
    }
    if (n == 0) {
        return;
    }
    struct lo_ctx *ctx = kp_malloc(sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
    if (ctx == NULL) {
        return;
    }
    ctx->count = n;
    for (int i = 0; i < n; i++) {
        ctx->items[i].part = parts[i];
        ctx->items[i].epoch = parts[i]->epoch;
    }
    struct kp_ListOffsetsRequest req;
    kp_ListOffsetsRequest_init(&req);
    req.ReplicaId = -1;
    req.IsolationLevel = (int8_t)c->v->isolation_level;
    req.Topics.items = ts;
    req.Topics.count = nt;
    if (sc_conn_send(c, conn, KP_API_LIST_OFFSETS, ver, &req, on_list_offsets, ctx) != 0) {
        kp_free(ctx);
        return;
    }
    for (int i = 0; i < n; i++) {
        parts[i]->state = SC_CP_QUERYING;
    }
}

/* ---------------------------------------------------------------- fetch */

struct fetch_ctx {
    int count;
    struct {
        struct sc_cpart *part;
        int epoch;
    } items[];
};

/* Appends the records of one partition's answer to the queue. */
static void take_records(struct sc_client *c, struct sc_cpart *p, struct kp_bytes records)
{
    if (records.len <= 0) {
        return;
    }
    const uint8_t *buf = records.ptr;
    size_t len = (size_t)records.len;
    size_t off = 0;
    while (off < len) {
        struct kp_batch_header h;
        size_t size = 0;
        int err = kp_batch_parse_lenient(buf + off, len - off, &h, &size);
        if (err == KP_AGAIN) {
            break; /* the partial batch at the end of a size-bounded answer */
        }
        if (err == KP_E_MAGIC && size > 0 && size <= len - off) {
            /* A legacy MessageSet: skipped (Samsa writes only magic 2). */
            sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                          "%s [%d]: a magic %d message set at offset %lld skipped", p->topic,
                          p->partition, h.Magic, (long long)h.BaseOffset);
            if (h.BaseOffset >= p->position) {
                p->position = h.BaseOffset + 1;
            }
            off += size;
            continue;
        }
        if (err != 0) {
            sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                          "%s [%d]: undecodable batch at offset %lld (%s); fetching again",
                          p->topic, p->partition, (long long)p->position, kp_err_name(err));
            p->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
            return;
        }
        int64_t next = kp_batch_last_offset(&h) + 1;
        if (next <= p->position || kp_batch_is_control(&h)) {
            if (next > p->position) {
                p->position = next;
            }
            off += size;
            continue;
        }
        struct kp_batch_iter it;
        err = kp_batch_iter_init(&it, buf + off, size, MAX_DECOMPRESSED);
        if (err == 0) {
            struct kp_record rec;
            int ts_type = kp_batch_timestamp_type(&h) == KP_TS_LOG_APPEND_TIME ? 1 : 0;
            while ((err = kp_batch_iter_next(&it, &rec)) == 0) {
                if (rec.Offset < p->position) {
                    continue;
                }
                struct sc_cmsg *m = make_msg(p, &rec, ts_type);
                if (m == NULL) {
                    err = KP_E_NOMEM;
                    break;
                }
                cq_push(c, m);
                p->position = rec.Offset + 1;
            }
            if (err == KP_ITER_END) {
                err = 0;
            }
        }
        kp_batch_iter_free(&it);
        if (err != 0) {
            sc_post_error(c, SAMSA_ERR_BAD_RESPONSE, "%s [%d]: batch at %lld: %s", p->topic,
                          p->partition, (long long)h.BaseOffset, kp_err_name(err));
            p->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
            return;
        }
        if (next > p->position) {
            p->position = next; /* compacted away or filtered: skip the gap */
        }
        off += size;
    }
}

static void on_fetch(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *vctx)
{
    struct fetch_ctx *ctx = vctx;
    conn->fetch_inflight = false;
    const struct kp_FetchResponse *r = body;
    int64_t now = sc_now_ms();
    for (int i = 0; i < ctx->count; i++) {
        struct sc_cpart *p = ctx->items[i].part;
        if (!cpart_alive(c, p)) {
            continue;
        }
        p->fetching = false;
        if (p->epoch != ctx->items[i].epoch || p->state != SC_CP_ACTIVE) {
            continue; /* seeked meanwhile: this answer is for the old position */
        }
        if (err != 0) {
            p->retry_at = now + c->v->retry_backoff_ms;
            continue;
        }
        const struct kp_FetchResponse_PartitionData *pd = NULL;
        for (int32_t ti = 0; ti < r->Responses.count && pd == NULL; ti++) {
            if (!kp_str_eq_c(r->Responses.items[ti].Topic, p->topic)) {
                continue;
            }
            for (int32_t pi = 0; pi < r->Responses.items[ti].Partitions.count; pi++) {
                if (r->Responses.items[ti].Partitions.items[pi].PartitionIndex == p->partition) {
                    pd = &r->Responses.items[ti].Partitions.items[pi];
                }
            }
        }
        if (pd == NULL) {
            continue;
        }
        int perr = sc_err_from_wire(pd->ErrorCode);
        if (perr == KP_ERR_OFFSET_OUT_OF_RANGE) {
            char why[64];
            snprintf(why, sizeof(why), "offset %lld out of range", (long long)p->position);
            apply_reset_policy(c, p, why);
            continue;
        }
        if (perr != 0) {
            p->retry_at = now + c->v->retry_backoff_ms;
            c->md_wanted = true;
            sc_log(c, "%s [%d]: fetch: %s", p->topic, p->partition, kp_err_name(perr));
            continue;
        }
        p->hwm = pd->HighWatermark;
        p->lso = pd->LastStableOffset;
        p->log_start = pd->LogStartOffset;
        take_records(c, p, pd->Records);
    }
    kp_free(ctx);
    pthread_cond_broadcast(&c->ev_cond);
}

static void fetch_from(struct sc_client *c, struct sc_conn *conn, int64_t now)
{
    int16_t ver = sc_conn_version(conn, KP_API_FETCH, 4, 11);
    if (ver < 0) {
        return;
    }
    static const int max_parts = MAX_FETCH_PARTS;
    struct kp_FetchRequest_FetchPartition ps[MAX_FETCH_PARTS];
    struct kp_FetchRequest_FetchTopic ts[MAX_FETCH_PARTS];
    struct sc_cpart *parts[MAX_FETCH_PARTS];
    int n = 0, nt = 0;
    /* Each Fetch starts its list one partition further on, as KIP-74 asks
     * of consumers (and Java's fetch sessions, librdkafka's round-robin
     * fetch list do): a leader that fills the response in request order up
     * to fetch.max.bytes then serves every partition in turn rather than
     * the first until it is drained. */
    int count = c->cpart_count;
    int first = count > 0 ? (int)(conn->fetch_rotate++ % (uint32_t)count) : 0;
    for (int i = 0; i < count && n < max_parts; i++) {
        struct sc_cpart *p = c->cparts[(first + i) % count];
        if (p->state != SC_CP_ACTIVE || p->leader != conn->node_id || p->fetching ||
            p->paused || p->revoking || p->retry_at > now) {
            continue;
        }
        bool seen = false;
        for (int t = 0; t < nt; t++) {
            seen = seen || kp_str_eq_c(ts[t].Topic, p->topic);
        }
        if (seen) {
            continue;
        }
        ts[nt].Topic = kp_str_c(p->topic);
        ts[nt].Partitions.items = &ps[n];
        ts[nt].Partitions.count = 0;
        for (int j = i; j < count && n < max_parts; j++) {
            struct sc_cpart *q = c->cparts[(first + j) % count];
            if (q->state != SC_CP_ACTIVE || q->leader != conn->node_id || q->fetching ||
                q->paused || q->revoking || q->retry_at > now || strcmp(q->topic, p->topic) != 0) {
                continue;
            }
            memset(&ps[n], 0, sizeof(ps[n]));
            ps[n].Partition = q->partition;
            ps[n].CurrentLeaderEpoch = -1;
            ps[n].FetchOffset = q->position;
            ps[n].LogStartOffset = -1;
            ps[n].PartitionMaxBytes = c->v->max_partition_fetch_bytes;
            parts[n] = q;
            ts[nt].Partitions.count++;
            n++;
        }
        nt++;
    }
    if (n == 0) {
        return;
    }
    struct fetch_ctx *ctx = kp_malloc(sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
    if (ctx == NULL) {
        return;
    }
    ctx->count = n;
    for (int i = 0; i < n; i++) {
        ctx->items[i].part = parts[i];
        ctx->items[i].epoch = parts[i]->epoch;
    }
    struct kp_FetchRequest req;
    kp_FetchRequest_init(&req);
    req.ReplicaId = -1;
    req.MaxWaitMs = c->v->fetch_wait_max_ms;
    req.MinBytes = c->v->fetch_min_bytes;
    req.MaxBytes = c->v->fetch_max_bytes;
    req.IsolationLevel = (int8_t)c->v->isolation_level;
    req.SessionId = 0;
    req.SessionEpoch = -1;
    req.Topics.items = ts;
    req.Topics.count = nt;
    req.ForgottenTopicsData.items = NULL;
    req.ForgottenTopicsData.count = 0;
    req.RackId = kp_str_c("");
    if (sc_conn_send(c, conn, KP_API_FETCH, ver, &req, on_fetch, ctx) != 0) {
        kp_free(ctx);
        return;
    }
    conn->fetch_inflight = true;
    for (int i = 0; i < n; i++) {
        parts[i]->fetching = true;
    }
}

static int64_t consumer_serve(struct sc_client *c, int64_t now)
{
    int64_t next = INT64_MAX;
    next = sc_min64(next, sc_group_serve(c, now));
    if (sc_group_blocks_fetch(c)) {
        return next;
    }
    bool full = c->cq_bytes >= (size_t)c->v->queued_max_bytes;
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        if (p->revoking) {
            continue; /* being given up: the group removes it */
        }
        if (p->retry_at > now) {
            next = sc_min64(next, p->retry_at);
            continue;
        }
        if (p->state == SC_CP_NEED_OFFSET && p->reset == SAMSA_OFFSET_STORED) {
            continue; /* the group's OffsetFetch resolves it */
        }
        if (p->state != SC_CP_NEED_OFFSET &&
            (p->state != SC_CP_ACTIVE || full || p->fetching || p->paused)) {
            continue;
        }
        struct sc_conn *conn = sc_conn_leader(c, p->leader);
        if (conn == NULL) {
            continue; /* none elected, or unreachable: Metadata is asked again */
        }
        if (p->state == SC_CP_NEED_OFFSET) {
            list_offsets_to(c, conn, now);
        } else if (!conn->fetch_inflight) {
            fetch_from(c, conn, now);
        }
    }
    return next;
}

static int consumer_topics(struct sc_client *c, const char **names, int max)
{
    int n = sc_group_topics(c, names, max);
    for (int i = 0; i < c->cpart_count && n < max; i++) {
        bool seen = false;
        for (int j = 0; j < n; j++) {
            seen = seen || strcmp(names[j], c->cparts[i]->topic) == 0;
        }
        if (!seen) {
            names[n++] = c->cparts[i]->topic;
        }
    }
    return n;
}

static void consumer_metadata(struct sc_client *c, const struct kp_MetadataResponse *md)
{
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        for (int32_t ti = 0; ti < md->Topics.count; ti++) {
            const struct kp_MetadataResponse_MetadataResponseTopic *t = &md->Topics.items[ti];
            if (!kp_str_eq_c(t->Name, p->topic)) {
                continue;
            }
            int32_t leader = -1;
            bool found = false;
            for (int32_t pi = 0; pi < t->Partitions.count; pi++) {
                if (t->Partitions.items[pi].PartitionIndex == p->partition) {
                    leader = t->Partitions.items[pi].LeaderId;
                    found = true;
                }
            }
            /* As librdkafka's consumer error for an assigned partition the
             * cluster lacks: told once, fetched once it exists. */
            if (t->ErrorCode == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION ||
                (t->ErrorCode == 0 && !found)) {
                if (!p->missing_reported) {
                    p->missing_reported = true;
                    bool topic = t->ErrorCode != 0;
                    sc_post_error(c, topic ? SAMSA_ERR_UNKNOWN_TOPIC : SAMSA_ERR_UNKNOWN_PARTITION,
                                  "assigned partition %s [%d]: %s", p->topic, p->partition,
                                  topic ? "no such topic in the cluster"
                                        : "the topic has no such partition");
                }
            } else if (found) {
                p->missing_reported = false;
            }
            if (leader != p->leader) {
                sc_log(c, "%s [%d]: leader %d -> %d", p->topic, p->partition, p->leader, leader);
            }
            p->leader = leader;
            if (leader < 0) {
                c->md_wanted = true;
            }
        }
    }
    sc_group_metadata(c, md);
}

static void consumer_free_state(struct sc_client *c)
{
    sc_cq_drop(c, NULL);
    for (int i = 0; i < c->cpart_count; i++) {
        cpart_free(c->cparts[i]);
    }
    kp_free(c->cparts);
    c->cparts = NULL;
    c->cpart_count = 0;
    sc_group_free(c);
}

/* ------------------------------------------------------------- public */

samsa_consumer *samsa_consumer_new(const samsa_conf *conf, char *errstr, size_t errstr_size)
{
    samsa_consumer *sc = kp_calloc(1, sizeof(*sc));
    if (sc == NULL) {
        sc_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    if (sc_client_create(&sc_consumer_kind, conf, &sc->c, errstr, errstr_size) != SAMSA_OK) {
        kp_free(sc);
        return NULL;
    }
    return sc;
}

void sc_wait_cond(struct sc_client *c, int64_t deadline)
{
    int64_t left = deadline == INT64_MAX ? 1000 : deadline - sc_now_ms();
    if (left <= 0) {
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = (int64_t)ts.tv_nsec + (left > 1000 ? 1000 : left) * 1000000;
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    pthread_cond_timedwait(&c->ev_cond, &c->lock, &ts);
}

static samsa_message *gated_consumer_poll(samsa_consumer *sc, int timeout_ms)
{
    if (sc == NULL) {
        return NULL;
    }
    struct sc_client *c = sc->c;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    pthread_mutex_lock(&c->lock);
    sc_group_polled(c, true);
    for (;;) {
        (void)sc_serve_errors(c);
        while (c->cq != NULL) {
            struct sc_cmsg *m = c->cq;
            c->cq = m->next;
            if (c->cq == NULL) {
                c->cq_tail = NULL;
            }
            bool was_full = c->cq_bytes >= (size_t)c->v->queued_max_bytes;
            c->cq_bytes -= m->size;
            m->part->queued--;
            if (m->epoch != m->part->epoch) {
                kp_free(m);
                continue;
            }
            m->part->app_offset = m->pub.offset + 1;
            sc_group_polled(c, false);
            pthread_mutex_unlock(&c->lock);
            if (was_full) {
                sc_wake(c);
            }
            return &m->pub;
        }
        if (sc_now_ms() >= deadline || c->closing) {
            break;
        }
        sc_wait_cond(c, deadline);
    }
    sc_group_polled(c, false);
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

samsa_message *samsa_consumer_poll(samsa_consumer *sc, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return NULL;
    }
    samsa_message *ret = gated_consumer_poll(sc, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static bool gated_consumer_at_end(samsa_consumer *sc)
{
    if (sc == NULL) {
        return false;
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    bool end = c->cpart_count > 0;
    for (int i = 0; i < c->cpart_count && end; i++) {
        const struct sc_cpart *p = c->cparts[i];
        int64_t last = c->v->isolation_level == 1 && p->lso >= 0 ? p->lso : p->hwm;
        end = p->state == SC_CP_ACTIVE && last >= 0 && p->position >= last && p->queued == 0;
    }
    pthread_mutex_unlock(&c->lock);
    return end;
}

bool samsa_consumer_at_end(samsa_consumer *sc)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return false;
    }
    bool ret = gated_consumer_at_end(sc);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int seek_common(samsa_consumer *sc, const char *topic, int32_t partition, int64_t offset,
                       bool is_ts, int timeout_ms)
{
    if (sc == NULL || topic == NULL || (!is_ts && offset < 0 && offset != SAMSA_OFFSET_BEGINNING &&
                                        offset != SAMSA_OFFSET_END)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    struct sc_cpart *p = sc_cpart_find(c, topic, partition);
    if (p == NULL) {
        pthread_mutex_unlock(&c->lock);
        return SAMSA_ERR_STATE;
    }
    p->epoch++;
    sc_cq_drop(c, p);
    cpart_set_offset(p, is_ts ? -1 : offset);
    if (is_ts) {
        p->reset = offset;
        p->reset_is_ts = true;
    }
    p->app_offset = -1;
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    pthread_mutex_lock(&c->lock);
    int err = SAMSA_OK;
    for (;;) {
        p = sc_cpart_find(c, topic, partition);
        if (p == NULL) {
            err = SAMSA_ERR_STATE;
            break;
        }
        if (p->state == SC_CP_ACTIVE || p->state == SC_CP_STOPPED) {
            break;
        }
        if (c->closing) {
            err = SAMSA_ERR_DESTROYED;
            break;
        }
        if (sc_now_ms() >= deadline) {
            err = SAMSA_ERR_TIMED_OUT;
            break;
        }
        sc_wait_cond(c, deadline);
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

static int gated_consumer_seek(samsa_consumer *sc, const char *topic, int32_t partition, int64_t offset,
                        int timeout_ms)
{
    return seek_common(sc, topic, partition, offset, false, timeout_ms);
}

int samsa_consumer_seek(samsa_consumer *sc, const char *topic, int32_t partition, int64_t offset,
                        int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_seek(sc, topic, partition, offset, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_seek_timestamp(samsa_consumer *sc, const char *topic, int32_t partition,
                                  int64_t timestamp_ms, int timeout_ms)
{
    if (timestamp_ms < 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return seek_common(sc, topic, partition, timestamp_ms, true, timeout_ms);
}

int samsa_consumer_seek_timestamp(samsa_consumer *sc, const char *topic, int32_t partition,
                                  int64_t timestamp_ms, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_seek_timestamp(sc, topic, partition, timestamp_ms, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

int sc_watermarks(struct sc_client *c, const char *topic, int32_t partition, int64_t *low,
                  int64_t *high, int timeout_ms)
{
    if (topic == NULL || partition < 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_lo_arg *a = kp_calloc(1, sizeof(*a));
    struct sc_op *op = NULL;
    if (a == NULL || (a->topic = sc_strdup(topic)) == NULL ||
        (op = sc_op_new(SC_OP_LIST_OFFSETS, a)) == NULL) {
        if (a != NULL) {
            kp_free(a->topic);
        }
        kp_free(a);
        return SAMSA_ERR_NOMEM;
    }
    a->partition = partition;
    a->watermarks = true;
    int err = sc_op_run(c, &op, timeout_ms, NULL, 0);
    if (op != NULL) {
        if (err == SAMSA_OK) {
            if (low != NULL) {
                *low = a->low;
            }
            if (high != NULL) {
                *high = a->high;
            }
        }
        sc_op_free(op);
    }
    return err;
}

static int gated_consumer_watermarks(samsa_consumer *sc, const char *topic, int32_t partition,
                              int64_t *low, int64_t *high, int timeout_ms)
{
    if (sc == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return sc_watermarks(sc->c, topic, partition, low, high, timeout_ms);
}

int samsa_consumer_watermarks(samsa_consumer *sc, const char *topic, int32_t partition,
                              int64_t *low, int64_t *high, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_watermarks(sc, topic, partition, low, high, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

int samsa_consumer_close(samsa_consumer *sc, int timeout_ms)
{
    if (sc == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    if (!sc_gate_close(&sc->gate, sc->c)) {
        return SAMSA_ERR_DESTROYED;
    }
    int err = sc_group_close(sc->c, timeout_ms);
    sc_gate_shut(&sc->gate);
    sc_client_destroy(sc->c);
    sc->c = NULL;
    return err;
}

void samsa_consumer_destroy(samsa_consumer *sc)
{
    if (sc != NULL) {
        (void)samsa_consumer_close(sc, -1);
        kp_free(sc);
    }
}

/* ------------------------------------------------- pause, resume, lag */

static int set_paused(samsa_consumer *sc, const struct samsa_partition *parts, size_t count,
                      bool paused)
{
    if (sc == NULL || (parts == NULL && count > 0)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || sc_cpart_find(c, parts[i].topic, parts[i].partition) == NULL) {
            pthread_mutex_unlock(&c->lock);
            return parts[i].topic == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_STATE;
        }
    }
    for (size_t i = 0; i < count; i++) {
        struct sc_cpart *p = sc_cpart_find(c, parts[i].topic, parts[i].partition);
        if (p->paused == paused) {
            continue;
        }
        p->paused = paused;
        if (paused) {
            /* What was fetched and not returned is fetched again after the
             * resume: the position goes back to the first of it. */
            int64_t first = sc_cq_drop(c, p);
            p->epoch++; /* and what is in flight is dropped on arrival */
            if (p->state == SC_CP_ACTIVE && first >= 0) {
                p->position = first;
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    return SAMSA_OK;
}

static int gated_consumer_pause(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    return set_paused(sc, parts, count, true);
}

int samsa_consumer_pause(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_pause(sc, parts, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_resume(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    return set_paused(sc, parts, count, false);
}

int samsa_consumer_resume(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_resume(sc, parts, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

/* The next offset samsa_consumer_poll returns of p, or -1 while unresolved. */
static int64_t position_of(const struct sc_client *c, const struct sc_cpart *p)
{
    if (p->app_offset >= 0) {
        return p->app_offset;
    }
    if (p->state != SC_CP_ACTIVE) {
        return -1;
    }
    for (const struct sc_cmsg *m = c->cq; p->queued > 0 && m != NULL; m = m->next) {
        if (m->part == p && m->epoch == p->epoch) {
            return m->pub.offset;
        }
    }
    return p->position;
}

static int gated_consumer_assignment(samsa_consumer *sc, struct samsa_partition **parts, size_t *count)
{
    if (sc == NULL || parts == NULL || count == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    *parts = NULL;
    *count = 0;
    pthread_mutex_lock(&c->lock);
    size_t n = (size_t)c->cpart_count;
    struct samsa_partition *out = kp_calloc(n > 0 ? n : 1, sizeof(*out));
    int err = out != NULL ? SAMSA_OK : SAMSA_ERR_NOMEM;
    for (size_t i = 0; err == SAMSA_OK && i < n; i++) {
        const struct sc_cpart *p = c->cparts[i];
        char *t = sc_strdup(p->topic);
        if (t == NULL) {
            samsa_partitions_free(out, i);
            out = NULL;
            err = SAMSA_ERR_NOMEM;
            break;
        }
        int64_t pos = position_of(c, p);
        out[i].topic = t;
        out[i].partition = p->partition;
        out[i].offset = pos >= 0 ? pos : (p->reset_is_ts ? SAMSA_OFFSET_END : p->reset);
    }
    pthread_mutex_unlock(&c->lock);
    if (err == SAMSA_OK) {
        *parts = out;
        *count = n;
    }
    return err;
}

int samsa_consumer_assignment(samsa_consumer *sc, struct samsa_partition **parts, size_t *count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_assignment(sc, parts, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_lag(samsa_consumer *sc, const char *topic, int32_t partition,
                       struct samsa_lag *out)
{
    if (sc == NULL || topic == NULL || out == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    const struct sc_cpart *p = sc_cpart_find(c, topic, partition);
    if (p == NULL) {
        pthread_mutex_unlock(&c->lock);
        return SAMSA_ERR_STATE;
    }
    out->position = position_of(c, p);
    out->high_watermark = p->hwm;
    out->last_stable = p->lso;
    out->paused = p->paused;
    int64_t end = c->v->isolation_level == 1 && p->lso >= 0 ? p->lso : p->hwm;
    out->lag = end >= 0 && out->position >= 0 ? (end > out->position ? end - out->position : 0)
                                              : -1;
    pthread_mutex_unlock(&c->lock);
    return SAMSA_OK;
}

int samsa_consumer_lag(samsa_consumer *sc, const char *topic, int32_t partition,
                       struct samsa_lag *out)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_lag(sc, topic, partition, out);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

/* ------------------------------------------------------------- the kind */

static int consumer_check_conf(samsa_conf *conf, char *errstr, size_t errstr_size)
{
    const struct sc_conf_values *v = &conf->v;
    if (v->heartbeat_interval_ms >= v->session_timeout_ms) {
        sc_errf(errstr, errstr_size,
                "heartbeat.interval.ms (%d) must be lower than session.timeout.ms (%d)",
                v->heartbeat_interval_ms, v->session_timeout_ms);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    return SAMSA_OK;
}

const struct sc_kind_ops sc_consumer_kind = {
    .tag = 'c',
    .check_conf = consumer_check_conf,
    .want_topics = consumer_topics,
    .on_metadata = consumer_metadata,
    .serve = consumer_serve,
    .free_state = consumer_free_state,
};
