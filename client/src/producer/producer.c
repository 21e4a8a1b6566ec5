/*
 * The producer handle: samsa_producer_new, _poll (delivery reports),
 * _flush, _close, _purge, _destroy, and the producer's kind ops (struct
 * sc_kind_ops: its conf checks, the topics it wants metadata of, leaders and
 * partition counts from Metadata, its turn of the I/O loop in send.c,
 * teardown). records.c takes samsa_produce's records; send.c sends them.
 */
#include <string.h>
#include <time.h>

#include "producer/producer.h"

/* Fail records of a topic that stays unknown this long (librdkafka's
 * topic.metadata.propagation.max.ms default). */
#define UNKNOWN_TOPIC_GRACE_MS 30000

static int serve_reports(struct sc_client *c)
{
    int ran = 0;
    while (c->dr.head != NULL) {
        struct sc_msgq q = c->dr;
        memset(&c->dr, 0, sizeof(c->dr));
        pthread_mutex_unlock(&c->lock);
        size_t n = 0, bytes = 0, failed = 0, ok_bytes = 0;
        struct sc_msg *m;
        int32_t left = 0; /* records of the current run after this one */
        int run_err = SAMSA_OK;
        int run_status = SAMSA_MSG_NOT_PERSISTED;
        int64_t run_log_append = -1; /* the broker's LogAppendTime of the run */
        int64_t offset = -1;
        int first_err = SAMSA_OK;
        while ((m = sc_msgq_pop(&q)) != NULL) {
            /* the records are a list in memory the I/O thread last read:
             * ask for the next while this one is reported (a GNU builtin,
             * gcc's and clang's) */
            __builtin_prefetch(q.head);
            if (left == 0) {
                run_err = m->err;
                run_status = m->status & ~SC_MSG_LOG_APPEND_TIME;
                run_log_append = (m->status & SC_MSG_LOG_APPEND_TIME) != 0 ? m->timestamp : -1;
                offset = m->offset;
                left = m->run > 0 ? m->run - 1 : 0;
            } else {
                left--;
                offset = offset >= 0 ? offset + 1 : -1;
            }
            if (c->conf->dr_cb != NULL) {
                struct samsa_header *hs = m->header_count > 0 ? sc_msg_header_list(m) : NULL;
                struct samsa_delivery d = {
                    .struct_size = sizeof(struct samsa_delivery),
                    .err = run_err,
                    .topic = m->topic != NULL ? m->topic->name : "",
                    .partition = m->partition,
                    .offset = offset,
                    .timestamp = run_log_append >= 0 ? run_log_append : m->timestamp,
                    .key = m->key_len >= 0 ? sc_msg_key(m) : NULL,
                    .key_len = (size_t)(m->key_len > 0 ? m->key_len : 0),
                    .value = m->value_len >= 0 ? sc_msg_value(m) : NULL,
                    .value_len = (size_t)(m->value_len > 0 ? m->value_len : 0),
                    .opaque = m->opaque,
                    .status = run_status,
                    .timestamp_type = run_log_append >= 0 ? 1 : 0,
                    .headers = hs,
                    .header_count = hs != NULL ? m->header_count : 0,
                };
                c->conf->dr_cb(&d, c->conf->dr_opaque);
                kp_free(hs);
                ran++;
            }
            n++;
            bytes += m->size;
            failed += run_err != SAMSA_OK ? 1 : 0;
            first_err = first_err == SAMSA_OK ? run_err : first_err;
            ok_bytes += run_err == SAMSA_OK ? m->size : 0;
            sc_msg_free(m);
        }
        pthread_mutex_lock(&c->lock);
        c->outq_msgs -= n;
        c->outq_bytes -= bytes;
        c->dr_failed += failed;
        c->txmsgs += n - failed;
        c->txmsg_bytes += ok_bytes;
        if (first_err != SAMSA_OK) {
            /* a record of the transaction was not delivered: it must abort
             * (librdkafka's abortable error; ignored while aborting), or,
             * refused for a fenced epoch, nothing goes on (fatal) */
            sc_txn_fail(c, first_err, sc_txn_classify(first_err) == SC_TXN_FATAL_ERR,
                        "a record's delivery failed: %s", samsa_err_str(first_err));
        }
    }
    ran += sc_serve_errors(c);
    return ran;
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
        sc_wait_cond(c, deadline);
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

int sc_producer_flush(samsa_producer *p, int timeout_ms)
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
        sc_wait_cond(c, deadline);
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
    int ret = sc_producer_flush(p, timeout_ms);
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
    if (p->c->v->transactional_id[0] != '\0') {
        struct sc_txn *t = kp_calloc(1, sizeof(*t));
        if (t == NULL) {
            sc_errf(errstr, errstr_size, "out of memory");
            samsa_producer_destroy(p);
            return NULL;
        }
        t->coord_id = -1;
        pthread_mutex_lock(&p->c->lock);
        p->c->txn = t; /* read by the I/O thread from here on */
        pthread_mutex_unlock(&p->c->lock);
    }
    return p;
}

/* Everything still queued becomes a PURGED report (lock held, thread
 * stopped). */
static void purge(struct sc_client *c, bool sent_too)
{
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        sc_msgq_report_all(c, &t->unassigned, SAMSA_ERR_PURGED);
        for (int32_t i = 0; i < t->partition_count; i++) {
            struct sc_ppart *pp = &t->parts[i];
            while (sent_too && pp->retry != NULL) {
                struct sc_batch *b = pp->retry;
                pp->retry = b->next;
                sc_msgq_mark_possibly(&b->msgs); /* sent before: no answer says more */
                sc_msgq_report_all(c, &b->msgs, SAMSA_ERR_PURGED);
                sc_batch_free(b);
            }
            sc_msgq_report_all(c, &pp->queue, SAMSA_ERR_PURGED);
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

/* In flight: the I/O thread owns the connections, so it does it
 * (send.c's purge_inflight) while this call waits. */
static int gated_producer_purge_flags(samsa_producer *p, int flags)
{
    if (p == NULL || (flags & ~(SAMSA_PURGE_QUEUE | SAMSA_PURGE_INFLIGHT)) != 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    int err = (flags & SAMSA_PURGE_QUEUE) != 0 ? gated_producer_purge(p) : SAMSA_OK;
    if ((flags & SAMSA_PURGE_INFLIGHT) == 0) {
        return err;
    }
    struct sc_client *c = p->c;
    pthread_mutex_lock(&c->lock);
    c->purge_inflight = true;
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    pthread_mutex_lock(&c->lock);
    while (c->purge_inflight && !c->closing && !c->detached) {
        sc_wait_cond(c, INT64_MAX);
    }
    err = c->purge_inflight && c->closing ? SAMSA_ERR_DESTROYED : err;
    pthread_mutex_unlock(&c->lock);
    return err;
}

int samsa_producer_purge_flags(samsa_producer *p, int flags)
{
    if (p != NULL && !sc_gate_enter(&p->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_producer_purge_flags(p, flags);
    if (p != NULL) {
        sc_gate_leave(&p->gate);
    }
    return ret;
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

void sc_producer_purge_for_abort(struct sc_client *c)
{
    bool sent = false;
    for (struct sc_ptopic *t = c->ptopics; t != NULL && !sent; t = t->next) {
        for (int32_t i = 0; i < t->partition_count; i++) {
            sent = sent || t->parts[i].retry != NULL;
        }
    }
    purge(c, true);
    c->pid_reset = c->pid_reset || sent;
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
            sc_msg_free(m);
        }
        for (int32_t i = 0; i < t->partition_count; i++) {
            struct sc_ppart *pp = &t->parts[i];
            while (pp->retry != NULL) {
                struct sc_batch *b = pp->retry;
                pp->retry = b->next;
                while ((m = sc_msgq_pop(&b->msgs)) != NULL) {
                    sc_msg_free(m);
                }
                sc_batch_free(b);
            }
            while ((m = sc_msgq_pop(&pp->queue)) != NULL) {
                sc_msg_free(m);
            }
        }
        kp_free(t->parts);
        kp_free(t->name);
        kp_free(t);
    }
    struct sc_msg *m;
    while ((m = sc_msgq_pop(&c->dr)) != NULL) {
        sc_msg_free(m);
    }
    kp_wr_free(&c->enc_records);
    kp_free(c->txn);
    c->txn = NULL;
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
                sc_msgq_report_all(c, &t->unassigned, err);
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
            sc_ptopic_place(c, t, m);
        }
    }
}

static int producer_check_conf(samsa_conf *conf, char *errstr, size_t errstr_size)
{
    struct sc_conf_values *v = &conf->v;
    bool idem_set = sc_conf_is_set(conf, "enable.idempotence");
    if (v->transactional_id[0] != '\0') {
        /* as librdkafka: a transactional producer is idempotent, and a
         * record may not outlive its transaction */
        if (!v->enable_idempotence || v->acks != -1 || v->max_in_flight > 5 || v->retries == 0) {
            sc_errf(errstr, errstr_size,
                    "transactional.id needs enable.idempotence=true, acks=all, "
                    "max.in.flight.requests.per.connection <= 5 and retries > 0");
            return SAMSA_ERR_INVALID_CONFIG;
        }
        if (!sc_conf_is_set(conf, "message.timeout.ms")) {
            v->message_timeout_ms = v->transaction_timeout_ms;
        } else if (v->message_timeout_ms > v->transaction_timeout_ms) {
            sc_errf(errstr, errstr_size,
                    "message.timeout.ms must not be above transaction.timeout.ms");
            return SAMSA_ERR_INVALID_CONFIG;
        }
    }
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

/* librdkafka's eos block, for an idempotent producer only (as its
 * rd_kafka_stats_emit_all writes it). */
static void producer_stats(const struct sc_client *c, int64_t now, struct sc_kind_stats *out)
{
    if (!c->rules.idempotent) {
        return;
    }
    out->eos = true;
    out->idemp_state = c->idemp_state != NULL ? c->idemp_state : "RequestPID";
    out->idemp_stateage_ms = c->idemp_state != NULL ? now - c->idemp_state_ms : 0;
    out->producer_id = c->pid;
    out->producer_epoch = c->pid >= 0 ? c->pid_epoch : -1;
    out->epoch_cnt = c->pid_assigned;
    if (c->txn != NULL) {
        /* librdkafka's rd_kafka_txn_state_names for the states we have */
        static const char *const names[] = {
            [SC_TXN_UNINIT] = "Init",
            [SC_TXN_READY] = "Ready",
            [SC_TXN_IN_TXN] = "InTransaction",
            [SC_TXN_COMMITTING] = "CommittingTransaction",
            [SC_TXN_ABORTING] = "AbortingTransaction",
            [SC_TXN_ABORTABLE] = "AbortableError",
            [SC_TXN_FATAL] = "FatalError",
        };
        out->txn_state = names[c->txn->state];
        out->txn_may_enq = c->txn->state == SC_TXN_IN_TXN;
    }
}

const struct sc_kind_ops sc_producer_kind = {
    .tag = 'p',
    .type = "producer",
    .check_conf = producer_check_conf,
    .want_topics = producer_topics,
    .auto_create_topics = true,
    .on_metadata = producer_metadata,
    .serve = sc_producer_serve,
    .free_state = producer_free_state,
    .stats = producer_stats,
};
