/*
 * The producer's records: samsa_produce copies a record (key, value and
 * headers in one block, struct sc_msg) onto its topic's queue, or its
 * partition's once the partition count is known (the partitioner, with
 * Java's placement by default), and a record's delivery report is queued
 * for samsa_producer_poll. Called by producer.c and send.c; calls accum.c,
 * partitioner.c and core.
 */
#include <limits.h>
#include <string.h>

#include "producer/producer.h"

struct samsa_header *sc_msg_header_list(const struct sc_msg *m)
{
    if (m->header_count == 0) {
        return NULL;
    }
    /* the array, then each name with its NUL: one block for the report */
    size_t n = m->header_count;
    struct samsa_header *hs = kp_malloc(n * sizeof(*hs) + m->headers_len);
    if (hs == NULL) {
        return NULL;
    }
    char *names = (char *)(hs + n);
    const uint8_t *p = sc_msg_headers(m);
    for (size_t i = 0; i < n; i++) {
        uint32_t nl;
        int32_t vl;
        memcpy(&nl, p, 4);
        memcpy(names, p + 4, nl);
        names[nl] = '\0';
        memcpy(&vl, p + 4 + nl, 4);
        hs[i].name = names;
        hs[i].value = vl >= 0 ? p + 8 + nl : NULL;
        hs[i].value_len = vl > 0 ? (size_t)vl : 0;
        names += nl + 1;
        p += 8 + nl + (vl > 0 ? (size_t)vl : 0);
    }
    return hs;
}

void sc_msg_free(struct sc_msg *m)
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
    /* the topic's own partitioner (samsa_conf_set_topic_conf), else the handle's */
    const struct samsa_topic_conf *tc = sc_conf_topic(c->conf, name);
    t->partitioner = tc != NULL && tc->partitioner >= 0 ? tc->partitioner : c->v->partitioner;
    t->partitioner_cb = c->conf->partitioner_cb;
    t->partitioner_opaque = c->conf->partitioner_opaque;
    if (tc != NULL && (tc->partitioner_cb != NULL || tc->partitioner >= 0)) {
        t->partitioner_cb = tc->partitioner_cb;
        t->partitioner_opaque = tc->partitioner_opaque;
    }
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
    /* NOT_PERSISTED (0) unless marked possibly written (sc_msgq_mark_possibly) */
    m->status = err == SAMSA_OK ? SAMSA_MSG_PERSISTED : m->status;
    sc_msgq_push(&c->dr, m);
}

void sc_msgq_report_all(struct sc_client *c, struct sc_msgq *q, int err)
{
    struct sc_msg *m;
    while ((m = sc_msgq_pop(q)) != NULL) {
        report(c, m, err, -1);
    }
    pthread_cond_broadcast(&c->ev_cond);
}

/* Places m on its partition's queue (partition count known). */
void sc_ptopic_place(struct sc_client *c, struct sc_ptopic *t, struct sc_msg *m)
{
    if (m->partition < 0 && t->partitioner_cb != NULL) {
        /* the application's (samsa.h); one out of range is failed below */
        const void *key = m->key_len >= 0 ? sc_msg_key(m) : NULL;
        int32_t p = t->partitioner_cb(t->name, key, (size_t)(m->key_len > 0 ? m->key_len : 0),
                                      t->partition_count, t->partitioner_opaque, m->opaque);
        m->partition = p >= 0 && p < t->partition_count ? p : -1; /* its report says -1 */
    } else if (m->partition < 0) {
        const void *key = m->key_len >= 0 ? sc_msg_key(m) : NULL;
        m->partition = sc_partition_choose(t->partitioner, key,
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
    if (c->txn != NULL && sc_txn_may(c->txn->state, SC_TXN_CALL_PRODUCE) != SAMSA_OK) {
        err = SAMSA_ERR_STATE; /* no transaction begun, or it must abort */
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
        sc_ptopic_place(c, t, m);
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
    sc_msg_free(m);
    if (wake) {
        sc_wake(c);
    }
    return err;
}

/* samsa_record as SONAME 0 first had it: the smallest struct_size taken
 * (samsa.h, "Growable structs"). */
#define SC_RECORD_SIZE_0 (offsetof(struct samsa_record, opaque) + sizeof(void *))

/* The caller's struct_size bytes of rec, the fields its samsa.h lacked 0. */
static int sized_produce(samsa_producer *p, const struct samsa_record *rec)
{
    if (rec == NULL || rec->struct_size < SC_RECORD_SIZE_0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    if (rec->struct_size >= sizeof(struct samsa_record)) {
        return gated_produce(p, rec); /* this header's record or a newer one */
    }
    struct samsa_record full;
    memset(&full, 0, sizeof(full));
    memcpy(&full, rec, rec->struct_size < sizeof(full) ? rec->struct_size : sizeof(full));
    return gated_produce(p, &full);
}

int samsa_produce(samsa_producer *p, const struct samsa_record *rec)
{
    if (p != NULL && !sc_gate_enter(&p->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = sized_produce(p, rec);
    if (p != NULL) {
        sc_gate_leave(&p->gate);
    }
    return ret;
}
