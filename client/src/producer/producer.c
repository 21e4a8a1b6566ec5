/*
 * The producer: samsa_produce queues a copy of the record on its partition
 * (under the client lock); the I/O thread cuts batches (accum.c), encodes
 * them as RecordBatch v2 at send time (so a retry after a new producer id
 * carries the new id and sequence), sends one ProduceRequest per leader and
 * turns each answer into delivery reports that samsa_producer_poll serves.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"


/* Fail records of a topic that stays unknown this long (librdkafka's
 * topic.metadata.propagation.max.ms default). */
#define UNKNOWN_TOPIC_GRACE_MS 30000
/* A ProduceRequest carries at most this many bytes of batches. */
#define MAX_REQUEST_BYTES ((size_t)64 * 1024 * 1024)
#define MAX_REQUEST_PARTS 1024

/* ------------------------------------------------------------- records */

static const uint8_t *msg_key(const struct sc_msg *m)
{
    return m->data;
}

static const uint8_t *msg_value(const struct sc_msg *m)
{
    return m->data + (m->key_len > 0 ? m->key_len : 0);
}

static const uint8_t *msg_headers(const struct sc_msg *m)
{
    return msg_value(m) + (m->value_len > 0 ? m->value_len : 0);
}

static void msg_free(struct sc_msg *m)
{
    kp_free(m);
}

static struct sc_ptopic *ptopic_find(struct sc_client *c, const char *name, bool create)
{
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        if (strcmp(t->name, name) == 0) {
            return t;
        }
    }
    if (!create) {
        return NULL;
    }
    struct sc_ptopic *t = kp_calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    t->name = sc_strdup(name);
    if (t->name == NULL) {
        kp_free(t);
        return NULL;
    }
    t->sticky.partition = -1;
    t->next = c->ptopics;
    c->ptopics = t;
    c->md_wanted = true;
    return t;
}

/* The report of m is ready (lock held). */
static void report(struct sc_client *c, struct sc_msg *m, int err, int64_t offset)
{
    m->err = sc_err_public(err);
    m->offset = offset;
    m->run = 1;
    sc_msgq_push(&c->dr, m);
}

static void report_all(struct sc_client *c, struct sc_msgq *q, int err)
{
    struct sc_msg *m;
    while ((m = sc_msgq_pop(q)) != NULL) {
        report(c, m, err, -1);
    }
    pthread_cond_broadcast(&c->ev_cond);
}

/* Places m on its partition's queue (partition count known). */
static void place(struct sc_client *c, struct sc_ptopic *t, struct sc_msg *m)
{
    if (m->partition < 0) {
        const void *key = m->key_len >= 0 ? msg_key(m) : NULL;
        m->partition = sc_partition_choose(c->v->partitioner, key,
                                           (size_t)(m->key_len > 0 ? m->key_len : 0),
                                           t->partition_count, &t->sticky, m->size,
                                           c->rules.batch_size, &c->rng);
    }
    if (m->partition < 0 || m->partition >= t->partition_count) {
        report(c, m, SAMSA_ERR_UNKNOWN_PARTITION, -1);
        pthread_cond_broadcast(&c->ev_cond);
        return;
    }
    sc_msgq_push(&t->parts[m->partition].queue, m);
}

static int gated_produce(samsa_producer *p, const struct samsa_record *rec)
{
    if (p == NULL || rec == NULL || rec->topic == NULL || rec->topic[0] == '\0' ||
        (rec->key == NULL && rec->key_len > 0) || (rec->value == NULL && rec->value_len > 0) ||
        (rec->headers == NULL && rec->header_count > 0) || rec->partition < -1 ||
        rec->header_count > 100000) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = p->c;
    size_t hdr_bytes = 0;
    for (size_t i = 0; i < rec->header_count; i++) {
        if (rec->headers[i].name == NULL ||
            (rec->headers[i].value == NULL && rec->headers[i].value_len > 0)) {
            return SAMSA_ERR_INVALID_ARG;
        }
        hdr_bytes += 8 + strlen(rec->headers[i].name) +
                     (rec->headers[i].value != NULL ? rec->headers[i].value_len : 0);
    }
    size_t payload = rec->key_len + rec->value_len + hdr_bytes;
    if (rec->key_len > INT32_MAX || rec->value_len > INT32_MAX ||
        payload > (size_t)c->v->message_max_bytes) {
        return SAMSA_ERR_MSG_TOO_LARGE;
    }
    size_t size = sizeof(struct sc_msg) + payload;
    struct sc_msg *m = kp_malloc(size);
    if (m == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    memset(m, 0, sizeof(*m));
    m->size = size;
    m->opaque = rec->opaque;
    m->partition = rec->partition;
    m->key_len = rec->key != NULL ? (int32_t)rec->key_len : -1;
    m->value_len = rec->value != NULL ? (int32_t)rec->value_len : -1;
    m->header_count = (uint32_t)rec->header_count;
    m->headers_len = (uint32_t)hdr_bytes;
    m->offset = -1;
    uint8_t *w = m->data;
    if (rec->key_len > 0) {
        memcpy(w, rec->key, rec->key_len);
        w += rec->key_len;
    }
    if (rec->value_len > 0) {
        memcpy(w, rec->value, rec->value_len);
        w += rec->value_len;
    }
    for (size_t i = 0; i < rec->header_count; i++) {
        uint32_t nl = (uint32_t)strlen(rec->headers[i].name);
        int32_t vl = rec->headers[i].value != NULL ? (int32_t)rec->headers[i].value_len : -1;
        memcpy(w, &nl, 4);
        memcpy(w + 4, rec->headers[i].name, nl);
        w += 4 + nl;
        memcpy(w, &vl, 4);
        w += 4;
        if (vl > 0) {
            memcpy(w, rec->headers[i].value, (size_t)vl);
            w += vl;
        }
    }

    int err = SAMSA_OK;
    bool wake = false;
    pthread_mutex_lock(&c->lock);
    if (c->terminate) {
        err = SAMSA_ERR_DESTROYED;
        goto out_unlock;
    }
    if (c->fatal) {
        err = SAMSA_ERR_FATAL;
        goto out_unlock;
    }
    if (c->outq_msgs >= (size_t)c->v->queue_max_messages ||
        c->outq_bytes + size > (size_t)c->v->queue_max_bytes) {
        err = SAMSA_ERR_QUEUE_FULL;
        goto out_unlock;
    }
    struct sc_ptopic *t = ptopic_find(c, rec->topic, true);
    if (t == NULL) {
        err = SAMSA_ERR_NOMEM;
        goto out_unlock;
    }
    if (t->partition_count > 0 && rec->partition >= t->partition_count) {
        err = SAMSA_ERR_UNKNOWN_PARTITION;
        goto out_unlock;
    }
    m->topic = t;
    m->enq_ms = sc_now_ms();
    m->timestamp = rec->timestamp != 0 ? rec->timestamp : m->enq_ms + c->wall_minus_mono_ms;
    c->outq_msgs++;
    c->outq_bytes += size;
    if (t->partition_count == 0) {
        sc_msgq_push(&t->unassigned, m);
        wake = t->unassigned.count == 1;
    } else {
        place(c, t, m);
        if (m->partition >= 0 && m->partition < t->partition_count) {
            const struct sc_ppart *pp = &t->parts[m->partition];
            /* The I/O thread needs to hear of a first record (it sets the
             * linger timer) and of a full batch; not of every record. */
            wake = pp->queue.count == 1 || pp->queue.bytes >= c->rules.batch_size ||
                   pp->queue.count >= c->rules.batch_num_messages || c->v->linger_ms == 0;
        }
    }
    m = NULL;
out_unlock:
    pthread_mutex_unlock(&c->lock);
    msg_free(m);
    if (wake) {
        sc_wake(c);
    }
    return err;
}

int samsa_produce(samsa_producer *p, const struct samsa_record *rec)
{
    if (p != NULL && !sc_gate_enter(&p->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_produce(p, rec);
    if (p != NULL) {
        sc_gate_leave(&p->gate);
    }
    return ret;
}

/* -------------------------------------------------------- delivery reports */

static int serve_reports(struct sc_client *c)
{
    int ran = 0;
    while (c->dr.head != NULL) {
        struct sc_msgq q = c->dr;
        memset(&c->dr, 0, sizeof(c->dr));
        pthread_mutex_unlock(&c->lock);
        size_t n = 0, bytes = 0, failed = 0;
        struct sc_msg *m;
        int32_t left = 0; /* records of the current run after this one */
        int run_err = SAMSA_OK;
        int64_t offset = -1;
        while ((m = sc_msgq_pop(&q)) != NULL) {
            /* the records are a list in memory the I/O thread last read:
             * ask for the next while this one is reported (a GNU builtin,
             * gcc's and clang's) */
            __builtin_prefetch(q.head);
            if (left == 0) {
                run_err = m->err;
                offset = m->offset;
                left = m->run > 0 ? m->run - 1 : 0;
            } else {
                left--;
                offset = offset >= 0 ? offset + 1 : -1;
            }
            if (c->conf->dr_cb != NULL) {
                struct samsa_delivery d = {
                    .err = run_err,
                    .topic = m->topic != NULL ? m->topic->name : "",
                    .partition = m->partition,
                    .offset = offset,
                    .timestamp = m->timestamp,
                    .key = m->key_len >= 0 ? msg_key(m) : NULL,
                    .key_len = (size_t)(m->key_len > 0 ? m->key_len : 0),
                    .value = m->value_len >= 0 ? msg_value(m) : NULL,
                    .value_len = (size_t)(m->value_len > 0 ? m->value_len : 0),
                    .opaque = m->opaque,
                };
                c->conf->dr_cb(&d, c->conf->dr_opaque);
                ran++;
            }
            n++;
            bytes += m->size;
            failed += run_err != SAMSA_OK ? 1 : 0;
            msg_free(m);
        }
        pthread_mutex_lock(&c->lock);
        c->outq_msgs -= n;
        c->outq_bytes -= bytes;
        c->dr_failed += failed;
    }
    ran += sc_serve_errors(c);
    return ran;
}

static void wait_events(struct sc_client *c, int64_t deadline)
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

static int gated_producer_poll(samsa_producer *p, int timeout_ms)
{
    if (p == NULL) {
        return 0;
    }
    struct sc_client *c = p->c;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    pthread_mutex_lock(&c->lock);
    int ran = serve_reports(c);
    while (ran == 0 && c->dr.head == NULL && c->errs == NULL && !c->closing &&
           sc_now_ms() < deadline) {
        wait_events(c, deadline);
        ran += serve_reports(c);
    }
    pthread_mutex_unlock(&c->lock);
    return ran;
}

int samsa_producer_poll(samsa_producer *p, int timeout_ms)
{
    if (p != NULL && !sc_gate_enter(&p->gate)) {
        return 0; /* no callback ran */
    }
    int ret = gated_producer_poll(p, timeout_ms);
    if (p != NULL) {
        sc_gate_leave(&p->gate);
    }
    return ret;
}

static int gated_producer_flush(samsa_producer *p, int timeout_ms)
{
    if (p == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = p->c;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    pthread_mutex_lock(&c->lock);
    c->flushing++;
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    pthread_mutex_lock(&c->lock);
    (void)serve_reports(c);
    while (c->outq_msgs > 0 && !c->closing && sc_now_ms() < deadline) {
        wait_events(c, deadline);
        (void)serve_reports(c);
    }
    c->flushing--;
    int err = c->outq_msgs == 0 ? SAMSA_OK : c->closing ? SAMSA_ERR_DESTROYED : SAMSA_ERR_TIMED_OUT;
    pthread_mutex_unlock(&c->lock);
    return err;
}

int samsa_producer_flush(samsa_producer *p, int timeout_ms)
{
    if (p != NULL && !sc_gate_enter(&p->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_producer_flush(p, timeout_ms);
    if (p != NULL) {
        sc_gate_leave(&p->gate);
    }
    return ret;
}

static size_t gated_producer_outq_len(samsa_producer *p)
{
    if (p == NULL) {
        return 0;
    }
    pthread_mutex_lock(&p->c->lock);
    size_t n = p->c->outq_msgs;
    pthread_mutex_unlock(&p->c->lock);
    return n;
}

size_t samsa_producer_outq_len(samsa_producer *p)
{
    if (p != NULL && !sc_gate_enter(&p->gate)) {
        return 0;
    }
    size_t ret = gated_producer_outq_len(p);
    if (p != NULL) {
        sc_gate_leave(&p->gate);
    }
    return ret;
}

samsa_producer *samsa_producer_new(const samsa_conf *conf, char *errstr, size_t errstr_size)
{
    samsa_producer *p = kp_calloc(1, sizeof(*p));
    if (p == NULL) {
        sc_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    if (sc_client_create(&sc_producer_kind, conf, &p->c, errstr, errstr_size) != SAMSA_OK) {
        kp_free(p);
        return NULL;
    }
    return p;
}

/* Everything still queued becomes a PURGED report (lock held, thread
 * stopped). */
static void purge(struct sc_client *c, bool sent_too)
{
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        report_all(c, &t->unassigned, SAMSA_ERR_PURGED);
        for (int32_t i = 0; i < t->partition_count; i++) {
            struct sc_ppart *pp = &t->parts[i];
            while (sent_too && pp->retry != NULL) {
                struct sc_batch *b = pp->retry;
                pp->retry = b->next;
                report_all(c, &b->msgs, SAMSA_ERR_PURGED);
                sc_batch_free(b);
            }
            report_all(c, &pp->queue, SAMSA_ERR_PURGED);
        }
    }
}

size_t samsa_producer_close(samsa_producer *p, int timeout_ms)
{
    if (p == NULL || !sc_gate_close(&p->gate, p->c)) {
        return 0;
    }
    struct sc_client *c = p->c;
    /* what fails from here on counts, whether flush or purge serves it */
    pthread_mutex_lock(&c->lock);
    uint64_t failed_before = c->dr_failed;
    pthread_mutex_unlock(&c->lock);
    int flushed = samsa_producer_flush(p, timeout_ms);
    (void)flushed; /* what is left is purged below and counted */
    pthread_mutex_lock(&c->lock);
    c->terminate = true;
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    pthread_join(c->thread, NULL);
    c->thread_started = false;
    pthread_mutex_lock(&c->lock);
    /* In-flight batches come back as PURGED through their handlers. */
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        struct sc_req *r = conn->reqs;
        conn->reqs = conn->reqs_tail = NULL;
        while (r != NULL) {
            struct sc_req *next = r->next;
            if (r->fn != NULL) {
                r->fn(c, conn, SAMSA_ERR_DESTROYED, NULL, r->ctx);
            }
            kp_free(r);
            r = next;
        }
    }
    purge(c, true);
    (void)serve_reports(c);
    size_t undelivered = (size_t)(c->dr_failed - failed_before);
    pthread_mutex_unlock(&c->lock);
    sc_gate_shut(&p->gate);
    sc_client_destroy(c);
    p->c = NULL;
    return undelivered;
}

/* Records never sent have no sequence number yet (batches are numbered
 * when encoded), so dropping them leaves no hole for idempotence; batches
 * waiting for a retry were sent and are left to run their course. */
static int gated_producer_purge(samsa_producer *p)
{
    if (p == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = p->c;
    pthread_mutex_lock(&c->lock);
    purge(c, false);
    pthread_mutex_unlock(&c->lock);
    return SAMSA_OK;
}

int samsa_producer_purge(samsa_producer *p)
{
    if (p != NULL && !sc_gate_enter(&p->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_producer_purge(p);
    if (p != NULL) {
        sc_gate_leave(&p->gate);
    }
    return ret;
}

void samsa_producer_destroy(samsa_producer *p)
{
    if (p != NULL) {
        (void)samsa_producer_close(p, 0);
        kp_free(p);
    }
}

static void producer_free_state(struct sc_client *c)
{
    while (c->ptopics != NULL) {
        struct sc_ptopic *t = c->ptopics;
        c->ptopics = t->next;
        struct sc_msg *m;
        while ((m = sc_msgq_pop(&t->unassigned)) != NULL) {
            msg_free(m);
        }
        for (int32_t i = 0; i < t->partition_count; i++) {
            struct sc_ppart *pp = &t->parts[i];
            while (pp->retry != NULL) {
                struct sc_batch *b = pp->retry;
                pp->retry = b->next;
                while ((m = sc_msgq_pop(&b->msgs)) != NULL) {
                    msg_free(m);
                }
                sc_batch_free(b);
            }
            while ((m = sc_msgq_pop(&pp->queue)) != NULL) {
                msg_free(m);
            }
        }
        kp_free(t->parts);
        kp_free(t->name);
        kp_free(t);
    }
    struct sc_msg *m;
    while ((m = sc_msgq_pop(&c->dr)) != NULL) {
        msg_free(m);
    }
    kp_wr_free(&c->enc_records);
}

/* ------------------------------------------------------------- metadata */

static int producer_topics(struct sc_client *c, const char **names, int max)
{
    int n = 0;
    for (struct sc_ptopic *t = c->ptopics; t != NULL && n < max; t = t->next) {
        names[n++] = t->name;
    }
    return n;
}

static void producer_metadata(struct sc_client *c, const struct kp_MetadataResponse *md)
{
    int64_t now = sc_now_ms();
    for (int32_t i = 0; i < md->Topics.count; i++) {
        const struct kp_MetadataResponse_MetadataResponseTopic *mt = &md->Topics.items[i];
        if (mt->Name.len <= 0) {
            continue;
        }
        struct sc_ptopic *t = NULL;
        for (struct sc_ptopic *x = c->ptopics; x != NULL; x = x->next) {
            if (kp_str_eq_c(mt->Name, x->name)) {
                t = x;
            }
        }
        if (t == NULL) {
            continue;
        }
        int err = sc_err_from_wire(mt->ErrorCode);
        int32_t count = 0;
        for (int32_t j = 0; j < mt->Partitions.count; j++) {
            int32_t id = mt->Partitions.items[j].PartitionIndex;
            if (id >= 0 && id < 1000000 && id + 1 > count) {
                count = id + 1;
            }
        }
        if (err != 0 || count == 0) {
            t->err = err != 0 ? err : KP_ERR_LEADER_NOT_AVAILABLE;
            if (t->md_time == 0) {
                t->md_time = now; /* the first unknown answer starts the grace */
            }
            c->md_wanted = true;
            if (t->partition_count == 0 &&
                (err == KP_ERR_INVALID_TOPIC_EXCEPTION ||
                 err == KP_ERR_TOPIC_AUTHORIZATION_FAILED ||
                 now - t->md_time >= UNKNOWN_TOPIC_GRACE_MS)) {
                /* Kafka's 3 becomes SAMSA_ERR_UNKNOWN_TOPIC in both (sc_err_public) */
                sc_post_error(c, err, "topic %s: %s", t->name, samsa_err_str(err));
                report_all(c, &t->unassigned, err);
            }
            continue;
        }
        t->err = 0;
        t->md_time = now;
        if (count > t->partition_count) {
            struct sc_ppart *np = kp_realloc(t->parts, (size_t)count * sizeof(*np));
            if (np == NULL) {
                continue;
            }
            memset(np + t->partition_count, 0,
                   (size_t)(count - t->partition_count) * sizeof(*np));
            for (int32_t j = t->partition_count; j < count; j++) {
                np[j].leader = -1;
            }
            t->parts = np;
            t->partition_count = count;
        }
        for (int32_t j = 0; j < mt->Partitions.count; j++) {
            const struct kp_MetadataResponse_MetadataResponsePartition *mp =
                &mt->Partitions.items[j];
            if (mp->PartitionIndex < 0 || mp->PartitionIndex >= t->partition_count) {
                continue;
            }
            int32_t leader = mp->LeaderId;
            if (mp->ErrorCode != 0 && mp->ErrorCode != KP_ERR_REPLICA_NOT_AVAILABLE) {
                leader = -1;
            }
            if (leader < 0) {
                c->md_wanted = true;
            }
            t->parts[mp->PartitionIndex].leader = leader;
        }
        struct sc_msg *m;
        while ((m = sc_msgq_pop(&t->unassigned)) != NULL) {
            place(c, t, m);
        }
    }
}

/* ------------------------------------------------------------- produce */

struct produce_item {
    struct sc_ptopic *topic;
    int32_t partition;
    struct sc_batch *batch;
};

struct produce_ctx {
    int16_t acks;
    int count;
    struct produce_item items[];
};

static bool retriable(int err)
{
    switch (err) {
    case SAMSA_ERR_TRANSPORT:
    case SAMSA_ERR_TIMED_OUT:
    case SAMSA_ERR_BAD_RESPONSE:
    case KP_ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case KP_ERR_LEADER_NOT_AVAILABLE:
    case KP_ERR_NOT_LEADER_OR_FOLLOWER:
    case KP_ERR_REQUEST_TIMED_OUT:
    case KP_ERR_NETWORK_EXCEPTION:
    case KP_ERR_NOT_ENOUGH_REPLICAS:
    case KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case KP_ERR_KAFKA_STORAGE_ERROR:
    case KP_ERR_CORRUPT_MESSAGE:
    case KP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
        return true;
    default:
        return false;
    }
}

static void batch_done(struct sc_client *c, struct sc_ppart *pp, struct sc_batch *b, int err,
                       int64_t base_offset)
{
    sc_ppart_batch_done(pp);
    struct sc_msg *first = b->msgs.head;
    if (first != NULL) {
        /* one run: the records themselves are next touched by the user's poll */
        first->err = sc_err_public(err);
        first->offset = err == SAMSA_OK && base_offset >= 0 ? base_offset : -1;
        first->run = b->msgs.count;
        sc_msgq_concat(&c->dr, &b->msgs);
    }
    sc_batch_free(b);
    pthread_cond_broadcast(&c->ev_cond);
}

static void batch_result(struct sc_client *c, struct produce_item *it, int err, int64_t base)
{
    struct sc_ppart *pp = &it->topic->parts[it->partition];
    struct sc_batch *b = it->batch;
    int64_t now = sc_now_ms();
    if (err == SAMSA_OK || err == KP_ERR_DUPLICATE_SEQUENCE_NUMBER) {
        /* A duplicate was written before: the records are in the log,
         * the broker did not say where. */
        batch_done(c, pp, b, SAMSA_OK, err == SAMSA_OK ? base : -1);
        return;
    }
    if (err == SAMSA_ERR_DESTROYED) {
        batch_done(c, pp, b, SAMSA_ERR_PURGED, -1);
        return;
    }
    bool idem = c->rules.idempotent;
    if (idem && (err == KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER || err == KP_ERR_UNKNOWN_PRODUCER_ID)) {
        /* Behind an earlier batch being retried, a gap is expected: retry
         * in order. On the partition's oldest batch the broker lost our
         * state: a new producer id, numbered again from 0. */
        bool earlier = pp->retry != NULL;
        if (!earlier) {
            c->pid_reset = true;
            sc_log(c, "%s [%d]: %s, asking for a new producer id", it->topic->name,
                   it->partition, kp_err_name(err));
        }
        sc_ppart_batch_retry(pp, b, now, c->v->retry_backoff_ms);
        return;
    }
    if (retriable(err) && b->attempts <= c->v->retries) {
        if (err != SAMSA_ERR_TIMED_OUT) {
            sc_metadata_want(c);
        }
        sc_ppart_batch_retry(pp, b, now, c->v->retry_backoff_ms);
        return;
    }
    if (idem && b->sent) {
        /* The sequence now has a hole: start over with a new id. */
        c->pid_reset = true;
    }
    batch_done(c, pp, b, err, -1);
}

static void on_produce(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *vctx)
{
    struct produce_ctx *ctx = vctx;
    if (conn->produce_inflight > 0) {
        conn->produce_inflight--;
    }
    const struct kp_ProduceResponse *r = body;
    for (int i = 0; i < ctx->count; i++) {
        struct produce_item *it = &ctx->items[i];
        int perr = err != 0 ? err : SAMSA_ERR_BAD_RESPONSE;
        int64_t base = -1;
        if (err == 0) {
            for (int32_t ti = 0; ti < r->Responses.count; ti++) {
                const struct kp_ProduceResponse_TopicProduceResponse *tr = &r->Responses.items[ti];
                if (!kp_str_eq_c(tr->Name, it->topic->name)) {
                    continue;
                }
                for (int32_t pi = 0; pi < tr->PartitionResponses.count; pi++) {
                    const struct kp_ProduceResponse_PartitionProduceResponse *pr =
                        &tr->PartitionResponses.items[pi];
                    if (pr->Index == it->partition) {
                        perr = sc_err_from_wire(pr->ErrorCode);
                        base = pr->BaseOffset;
                    }
                }
            }
        }
        batch_result(c, it, perr, base);
    }
    kp_free(ctx);
}

/* Buffers above this are not kept for the next request. */
#define ENC_KEEP_MAX ((size_t)8 * 1024 * 1024)

/* Encodes b as one RecordBatch v2 onto out, built in place (out is left
 * as it was on failure). */
static int encode_batch(struct sc_client *c, const struct sc_batch *b, struct kp_writer *out)
{
    size_t before = out->len;
    struct kp_batch_builder bb;
    const struct sc_msg *first = b->msgs.head;
    size_t cap = 61 + b->msgs.bytes * 2 + (size_t)b->msgs.count * 64 + 4096;
    int err = kp_batch_builder_init(&bb, c->v->compression, 0, first->timestamp,
                                    c->rules.idempotent ? c->pid : -1,
                                    c->rules.idempotent ? c->pid_epoch : -1, b->base_seq, cap);
    if (err != 0) {
        kp_batch_builder_free(&bb);
        return err;
    }
    /* The builder writes its records into the client's kept buffer (same
     * ceiling as its own) rather than growing a new one for every batch. */
    size_t max = bb.records.max;
    kp_wr_free(&bb.records);
    bb.records = c->enc_records;
    kp_wr_reset(&bb.records);
    bb.records.max = max;
    err = kp_batch_builder_write_into(&bb, out);
    struct kp_record_header hdrs[64];
    for (const struct sc_msg *m = b->msgs.head; m != NULL && err == 0; m = m->next) {
        struct kp_bytes key = m->key_len >= 0 ? (struct kp_bytes){msg_key(m), m->key_len}
                                              : KP_BYTES_NULL;
        struct kp_bytes value = m->value_len >= 0 ? (struct kp_bytes){msg_value(m), m->value_len}
                                                  : KP_BYTES_NULL;
        struct kp_record_header *hv = hdrs;
        if (m->header_count > 64) {
            hv = kp_calloc(m->header_count, sizeof(*hv));
            if (hv == NULL) {
                err = KP_E_NOMEM;
                break;
            }
        }
        const uint8_t *hp = msg_headers(m);
        for (uint32_t i = 0; i < m->header_count; i++) {
            uint32_t nl;
            int32_t vl;
            memcpy(&nl, hp, 4);
            hv[i].Key = (struct kp_str){(const char *)hp + 4, (int32_t)nl};
            hp += 4 + nl;
            memcpy(&vl, hp, 4);
            hp += 4;
            hv[i].Value = vl >= 0 ? (struct kp_bytes){hp, vl} : KP_BYTES_NULL;
            hp += vl > 0 ? vl : 0;
        }
        err = kp_batch_builder_add(&bb, KP_OFFSET_DELTA_AUTO, m->timestamp, key, value, hv,
                                   m->header_count);
        if (hv != hdrs) {
            kp_free(hv);
        }
    }
    if (err == 0) {
        err = kp_batch_builder_finish(&bb, out);
    }
    if (err != 0) {
        out->len = before;
        out->err = 0;
    }
    c->enc_records = bb.records; /* taken back, to be kept or freed */
    kp_wr_init(&bb.records, 0);
    kp_batch_builder_free(&bb);
    if (c->enc_records.cap > ENC_KEEP_MAX) {
        kp_wr_free(&c->enc_records);
    }
    kp_wr_reset(&c->enc_records);
    return err;
}

static void on_init_pid(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    (void)ctx;
    c->pid_inflight = false;
    if (err != 0) {
        return;
    }
    const struct kp_InitProducerIdResponse *r = body;
    if (r->ErrorCode != 0) {
        int e = sc_err_from_wire(r->ErrorCode);
        if (e == KP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
            c->fatal = true;
            snprintf(c->fatal_reason, sizeof(c->fatal_reason), "InitProducerId: %s",
                     samsa_err_str(e));
            sc_post_error(c, SAMSA_ERR_FATAL, "%s", c->fatal_reason);
        }
        return;
    }
    c->pid = r->ProducerId;
    c->pid_epoch = r->ProducerEpoch;
    c->pid_reset = false;
    /* Every partition's sequence starts again from 0 under the new id. */
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        for (int32_t i = 0; i < t->partition_count; i++) {
            sc_ppart_reset_sequence(&t->parts[i]);
        }
    }
    sc_log(c, "producer id %lld epoch %d", (long long)c->pid, c->pid_epoch);
}

static bool any_inflight(const struct sc_client *c)
{
    for (const struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        for (int32_t i = 0; i < t->partition_count; i++) {
            if (t->parts[i].inflight > 0) {
                return true;
            }
        }
    }
    return false;
}

/* The producer id: returns true when produce may go on. */
static bool producer_id_ready(struct sc_client *c, int64_t now, int64_t *next)
{
    if (!c->rules.idempotent) {
        return true;
    }
    if (c->pid >= 0 && !c->pid_reset) {
        return true;
    }
    if (c->pid_inflight || (c->pid_reset && any_inflight(c))) {
        return false;
    }
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        *next = sc_min64(*next, now + 50);
        return false;
    }
    int16_t ver = sc_conn_version(conn, KP_API_INIT_PRODUCER_ID, 0, 1);
    if (ver < 0) {
        c->fatal = true;
        snprintf(c->fatal_reason, sizeof(c->fatal_reason),
                 "enable.idempotence=true but the broker has no InitProducerId");
        sc_post_error(c, SAMSA_ERR_FATAL, "%s", c->fatal_reason);
        return false;
    }
    struct kp_InitProducerIdRequest req;
    kp_InitProducerIdRequest_init(&req);
    req.TransactionalId = KP_STR_NULL;
    req.TransactionTimeoutMs = -1;
    if (sc_conn_send(c, conn, KP_API_INIT_PRODUCER_ID, ver, &req, on_init_pid, NULL) == 0) {
        c->pid_inflight = true;
    }
    return false;
}

static void expire(struct sc_client *c, int64_t now)
{
    int timeout = c->v->message_timeout_ms;
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        struct sc_msgq expired = {0};
        while (t->unassigned.head != NULL && now - t->unassigned.head->enq_ms >= timeout) {
            sc_msgq_push(&expired, sc_msgq_pop(&t->unassigned));
        }
        for (int32_t i = 0; i < t->partition_count; i++) {
            if (sc_ppart_expire(&t->parts[i], now, timeout, &expired) && c->rules.idempotent) {
                c->pid_reset = true;
            }
        }
        if (expired.head != NULL) {
            report_all(c, &expired, SAMSA_ERR_MSG_TIMED_OUT);
        }
    }
}

/* Produce requests wait while this much of what was queued on a connection
 * is still to be written to its socket: the records wait in their queues
 * (and batch better) rather than in a second copy. */
#define OUT_BACKLOG_MAX ((size_t)4 * 1024 * 1024)

/* Writes the ProduceRequest of items[0..n) as one frame at the end of out
 * (v3-v7, none of them flexible: the fields of the protocol's schema, in
 * its order), each batch built in its place. A batch that cannot be built
 * is left out (encode_err[i] says why), and a topic left with none; kept[i]
 * says which made it. Returns the number of batches in the frame; with 0
 * out is as it was. */
static int write_produce(struct sc_client *c, struct kp_writer *out, int16_t ver,
                         const struct produce_item *items, int n, int *encode_err, bool *kept)
{
    for (int i = 0; i < n; i++) {
        kept[i] = false;
        encode_err[i] = KP_E_TOO_LARGE; /* not reached: the frame is full */
    }
    size_t start = out->len;
    struct kp_request_header h = {
        .RequestApiKey = KP_API_PRODUCE,
        .RequestApiVersion = ver,
        .CorrelationId = c->next_corr,
        .ClientId = kp_str_c(c->v->client_id),
    };
    kp_wr_i32(out, 0); /* the frame's size, set at the end */
    kp_request_header_encode(out, kp_request_header_version(KP_API_PRODUCE, ver), &h);
    kp_wr_string(out, KP_STR_NULL); /* TransactionalId */
    kp_wr_i16(out, (int16_t)c->v->acks);
    kp_wr_i32(out, c->v->request_timeout_ms);
    size_t topics_at = out->len;
    kp_wr_i32(out, 0);
    int32_t topics = 0;
    int in_frame = 0;
    for (int i = 0; i < n && out->err == 0;) {
        const struct sc_ptopic *t = items[i].topic;
        size_t topic_start = out->len;
        kp_wr_string(out, kp_str_c(t->name));
        size_t parts_at = out->len;
        kp_wr_i32(out, 0);
        int32_t parts = 0;
        for (; i < n && items[i].topic == t && out->err == 0; i++) {
            size_t part_start = out->len;
            kp_wr_i32(out, items[i].partition);
            size_t len_at = out->len;
            kp_wr_i32(out, 0); /* Records' length */
            kept[i] = false;
            encode_err[i] = out->err != 0 ? out->err : encode_batch(c, items[i].batch, out);
            if (encode_err[i] == 0 && out->len - len_at - 4 > (size_t)INT32_MAX) {
                encode_err[i] = KP_E_TOO_LARGE;
            }
            if (encode_err[i] != 0) {
                if (out->err == 0 || encode_err[i] == out->err) {
                    out->len = part_start;
                    out->err = 0;
                }
                continue;
            }
            kp_wr_patch_i32(out, len_at, (int32_t)(out->len - len_at - 4));
            kept[i] = true;
            parts++;
        }
        if (parts == 0) {
            out->len = topic_start;
            continue;
        }
        kp_wr_patch_i32(out, parts_at, parts);
        topics++;
        in_frame += parts;
    }
    size_t frame = out->len - start - 4;
    if (out->err != 0 || in_frame == 0 || frame > (size_t)INT32_MAX) {
        for (int i = 0; i < n; i++) {
            if (kept[i]) {
                kept[i] = false;
                encode_err[i] = out->err == KP_E_NOMEM ? KP_E_NOMEM : KP_E_TOO_LARGE;
            }
        }
        out->len = start;
        out->err = 0;
        return 0;
    }
    kp_wr_patch_i32(out, topics_at, topics);
    kp_wr_patch_i32(out, start, (int32_t)frame);
    return in_frame;
}

/* Sends one ProduceRequest to conn with the ready batches of the
 * partitions it leads. */
static void produce_to(struct sc_client *c, struct sc_conn *conn, int64_t now, int64_t *next)
{
    int16_t ver = sc_conn_version(conn, KP_API_PRODUCE, 3, 7);
    if (ver < 0 || sc_conn_unsent(conn) >= OUT_BACKLOG_MAX) {
        return; /* a backlog: the socket's progress wakes the I/O thread */
    }
    struct kp_writer *out = sc_conn_out(conn);
    if (out == NULL) {
        return;
    }
    struct produce_item items[MAX_REQUEST_PARTS];
    int n = 0;
    size_t total = 0;
    bool flushing = c->flushing > 0;
    for (struct sc_ptopic *t = c->ptopics; t != NULL && n < MAX_REQUEST_PARTS; t = t->next) {
        for (int32_t i = 0; i < t->partition_count && n < MAX_REQUEST_PARTS; i++) {
            struct sc_ppart *pp = &t->parts[i];
            if (pp->leader != conn->node_id || total >= MAX_REQUEST_BYTES) {
                continue;
            }
            if (!sc_ppart_ready(pp, &c->rules, now, flushing, next)) {
                continue;
            }
            struct sc_batch *b = sc_ppart_next_batch(pp, &c->rules, now);
            if (b == NULL) {
                continue;
            }
            items[n].topic = t;
            items[n].partition = i;
            items[n].batch = b;
            total += b->msgs.bytes;
            n++;
        }
    }
    if (n == 0) {
        return;
    }
    /*
     * Encoding (and compressing) is the costly part: it runs without the lock
     * so that samsa_produce is not held up meanwhile. What it reads stays put:
     * a cut batch and its records belong to the I/O thread alone, as do the
     * connection's buffer, and the configuration and producer id change only
     * on this thread. The batches are built in the request, in its buffer.
     */
    int encode_err[MAX_REQUEST_PARTS];
    bool kept[MAX_REQUEST_PARTS];
    if (!c->detached) {
        pthread_mutex_unlock(&c->lock);
    }
    size_t start = out->len;
    int in_frame = write_produce(c, out, ver, items, n, encode_err, kept);
    if (!c->detached) {
        pthread_mutex_lock(&c->lock);
    }
    int m = 0; /* the encoded ones move to the front: items[0..m) */
    for (int i = 0; i < n; i++) {
        if (!kept[i]) {
            sc_log(c, "%s [%d]: cannot encode a batch: %s", items[i].topic->name,
                   items[i].partition, kp_err_name(encode_err[i]));
            batch_result(c, &items[i],
                         encode_err[i] == KP_E_NOMEM ? SAMSA_ERR_NOMEM : SAMSA_ERR_MSG_TOO_LARGE, -1);
            continue;
        }
        items[i].batch->attempts++;
        items[i].batch->sent = true;
        items[m++] = items[i];
    }
    if (in_frame == 0) {
        return;
    }
    n = m;
    int16_t acks = (int16_t)c->v->acks;
    int err = SAMSA_ERR_NOMEM;
    if (acks != 0) {
        struct produce_ctx *ctx = kp_malloc(sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
        if (ctx != NULL) {
            ctx->acks = acks;
            ctx->count = n;
            memcpy(ctx->items, items, (size_t)n * sizeof(items[0]));
            err = sc_conn_send_written(c, conn, KP_API_PRODUCE, ver, start, on_produce, ctx);
            if (err == SAMSA_OK) {
                conn->produce_inflight++;
            } else {
                kp_free(ctx);
            }
        }
    } else {
        err = sc_conn_send_written(c, conn, KP_API_PRODUCE, ver, start, NULL, NULL);
    }
    if (err != SAMSA_OK) {
        out->len = start; /* the frame goes nowhere */
    }
    for (int i = 0; i < n; i++) {
        if (err != SAMSA_OK) {
            batch_result(c, &items[i], SAMSA_ERR_TRANSPORT, -1);
        } else if (acks == 0) {
            /* acks=0: written to the socket is all anyone will know. */
            batch_done(c, &items[i].topic->parts[items[i].partition], items[i].batch, SAMSA_OK,
                       -1);
        }
    }
}

static int64_t producer_serve(struct sc_client *c, int64_t now)
{
    int64_t next = INT64_MAX;
    expire(c, now);
    if (!producer_id_ready(c, now, &next)) {
        return next;
    }
    /* Find each leader with something ready, connect to it, send. */
    bool flushing = c->flushing > 0;
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        if (t->partition_count == 0 && t->unassigned.head != NULL) {
            c->md_wanted = true;
        }
        for (int32_t i = 0; i < t->partition_count; i++) {
            struct sc_ppart *pp = &t->parts[i];
            if (pp->queue.head == NULL && pp->retry == NULL) {
                continue;
            }
            if (pp->leader < 0) {
                c->md_wanted = true;
                continue;
            }
            if (!sc_ppart_ready(pp, &c->rules, now, flushing, &next)) {
                continue;
            }
            /* an unreachable leader asks Metadata again */
            struct sc_conn *conn = sc_conn_leader(c, pp->leader);
            if (conn == NULL || conn->produce_inflight >= c->v->max_in_flight) {
                continue;
            }
            produce_to(c, conn, now, &next);
        }
    }
    /* Expiry needs a look now and then even without traffic. */
    if (c->outq_msgs > 0) {
        next = sc_min64(next, now + 100);
    }
    return next;
}

/* ------------------------------------------------------------- the kind */

static int producer_check_conf(samsa_conf *conf, char *errstr, size_t errstr_size)
{
    struct sc_conf_values *v = &conf->v;
    bool idem_set = sc_conf_is_set(conf, "enable.idempotence");
    if (v->enable_idempotence) {
        /* As Java 3.0+: explicit idempotence with conflicting settings is
         * an error; the default quietly yields to an explicit acks. */
        if (v->acks != -1 || v->max_in_flight > 5 || v->retries == 0) {
            if (idem_set) {
                sc_errf(errstr, errstr_size,
                        "enable.idempotence=true needs acks=all, "
                        "max.in.flight.requests.per.connection <= 5 and retries > 0");
                return SAMSA_ERR_INVALID_CONFIG;
            }
            v->enable_idempotence = false;
        }
    }
    if (v->batch_size < 100) {
        v->batch_size = 100;
    }
    return SAMSA_OK;
}

const struct sc_kind_ops sc_producer_kind = {
    .tag = 'p',
    .check_conf = producer_check_conf,
    .want_topics = producer_topics,
    .auto_create_topics = true,
    .on_metadata = producer_metadata,
    .serve = producer_serve,
    .free_state = producer_free_state,
};
