/* samsa-broker: a cluster's transaction markers on their way to the
 * partitions' leaders (see txn_markers.h). */
#include "server/txn_markers.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include "base/clock.h"
#include "base/logging.h"
#include "reactor/net.h"
#include "replica/delayed_produce.h"
#include "server/state.h"

/* The wait before a partition's marker is sent again (Kafka's marker
 * channel retries on its next poll, after a metadata refresh). */
#define RETRY_BACKOFF_MS 100
/* How often a Prepare record the ISR does not have yet is asked about
 * again when its wait ended without it. */
#define LOG_RECHECK_MS 1000
/* The largest WriteTxnMarkers answer taken. */
#define MAX_ANSWER_BYTES ((size_t)1024 * 1024)

struct mk_part {
    char *topic; /* owned, NUL-terminated */
    int32_t partition;
    bool done;
};

struct mk_job;

/* One WriteTxnMarkers in flight to one broker. */
struct mk_send {
    struct mk_send *next; /* the job's */
    struct mk_job *job;
    struct br_conn *conn;
    int32_t broker;
    int32_t correlation;
    size_t *idx; /* owned: the job's parts it carries */
    size_t n;
    struct br_timer deadline;
};

struct mk_job {
    struct mk_job *next;
    struct br_server *b;
    char *id; /* owned, NUL-terminated */
    size_t id_len;
    int64_t producer_id;
    int16_t epoch;
    bool commit;
    int32_t coordinator_epoch;
    struct mk_part *parts; /* owned */
    size_t nparts;
    /* the Prepare record's wait for the ISR: parked, or done */
    bool waiting_log;
    bool log_ok;
    struct br_delayed_produce dp;
    struct br_append_wait wait;
    struct br_delay_link link;
    struct mk_send *sends; /* in flight */
    struct br_timer retry;
    bool all_done;
};

struct br_txn_markers {
    struct mk_job *jobs;
    int32_t correlation;
};

static struct br_txn_markers *markers_of(struct br_server *b)
{
    if (b->txn_markers == NULL) {
        b->txn_markers = kp_calloc(1, sizeof *b->txn_markers);
    }
    return b->txn_markers;
}

static void send_free(struct br_server *b, struct mk_send *s)
{
    br_timer_cancel(b->net, &s->deadline);
    if (s->conn != NULL) {
        br_conn_close(s->conn);
    }
    kp_free(s->idx);
    kp_free(s);
}

static void job_unlink(struct br_txn_markers *m, struct mk_job *j)
{
    for (struct mk_job **pp = &m->jobs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == j) {
            *pp = j->next;
            return;
        }
    }
}

static bool job_listed(const struct br_txn_markers *m, const struct mk_job *j)
{
    for (const struct mk_job *k = m->jobs; k != NULL; k = k->next) {
        if (k == j) {
            return true;
        }
    }
    return false;
}

static void job_free(struct mk_job *j)
{
    struct br_server *b = j->b;
    if (j->waiting_log) {
        br_delayed_produce_cancel(&b->purgatory, &j->dp);
    }
    br_timer_cancel(b->net, &j->retry);
    while (j->sends != NULL) {
        struct mk_send *s = j->sends;
        j->sends = s->next;
        send_free(b, s);
    }
    for (size_t i = 0; i < j->nparts; i++) {
        kp_free(j->parts[i].topic);
    }
    kp_free(j->parts);
    kp_free(j->id);
    kp_free(j);
}

static struct mk_job *job_find(const struct br_txn_markers *m, const struct br_txn *t, bool commit)
{
    for (struct mk_job *j = m->jobs; j != NULL; j = j->next) {
        if (j->id_len == t->id_len && memcmp(j->id, t->id, t->id_len) == 0 &&
            j->producer_id == t->producer_id && j->epoch == t->epoch && j->commit == commit) {
            return j;
        }
    }
    return NULL;
}

/* Every partition took its marker. */
static bool job_complete(const struct mk_job *j)
{
    for (size_t i = 0; i < j->nparts; i++) {
        if (!j->parts[i].done) {
            return false;
        }
    }
    return true;
}

/* The job's markers are all written: the coordinator completes the
 * transaction (its write_markers takes the job away); a job it did not
 * take (the id went meanwhile) goes here. */
static void job_finished(struct mk_job *j)
{
    struct br_server *b = j->b;
    j->all_done = true;
    br_debug("transactional id \"%s\": the %s markers of producer %" PRId64 " are written on "
             "%zu partition(s)",
             j->id, j->commit ? "COMMIT" : "ABORT", j->producer_id, j->nparts);
    br_txn_markers_done(&b->txn, j->id, j->id_len, br_now_wall_ms());
    struct br_txn_markers *m = b->txn_markers;
    if (m != NULL && job_listed(m, j)) {
        job_unlink(m, j);
        job_free(j);
    }
}

static void send_round(struct mk_job *j);

/* A round's request ended: when none is left in flight, the job is done
 * or tries the rest again after the backoff. */
static void send_ended(struct mk_send *s)
{
    struct mk_job *j = s->job;
    for (struct mk_send **pp = &j->sends; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    send_free(j->b, s);
    if (j->sends != NULL) {
        return;
    }
    if (job_complete(j)) {
        job_finished(j);
        return;
    }
    br_timer_arm(j->b->net, &j->retry, br_now_mono_ms() + RETRY_BACKOFF_MS);
}

static void on_connected(void *ctx, struct br_conn *c)
{
    (void)ctx;
    (void)c; /* the request was queued at connect */
}

/* The part of s's job for (name, index) among those s carries, or NULL. */
static struct mk_part *carried_part(const struct mk_send *s, struct kp_str name, int32_t index)
{
    for (size_t k = 0; k < s->n; k++) {
        struct mk_part *p = &s->job->parts[s->idx[k]];
        if (p->partition == index && name.len >= 0 && strlen(p->topic) == (size_t)name.len &&
            memcmp(p->topic, name.ptr, (size_t)name.len) == 0) {
            return p;
        }
    }
    return NULL;
}

static void on_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    (void)c;
    struct mk_send *s = ctx;
    struct mk_job *j = s->job;
    struct kp_arena arena;
    kp_arena_init(&arena, len * 8 + 4096);
    struct kp_response_header h;
    void *body = NULL;
    int rc = kp_response_decode(payload, len, KP_API_WRITE_TXN_MARKERS, 0, &arena, &h, &body);
    if (rc != 0 || h.CorrelationId != s->correlation) {
        br_warn("transactional id \"%s\": broker %" PRId32 "'s WriteTxnMarkers answer does not "
                "decode: sending again",
                j->id, s->broker);
    } else {
        const struct kp_WriteTxnMarkersResponse *resp = body;
        for (int32_t m = 0; m < resp->Markers.count; m++) {
            const struct kp_WriteTxnMarkersResponse_WritableTxnMarkerResult *mr =
                &resp->Markers.items[m];
            for (int32_t t = 0; mr->ProducerId == j->producer_id && t < mr->Topics.count; t++) {
                const struct kp_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult *tr =
                    &mr->Topics.items[t];
                for (int32_t k = 0; k < tr->Partitions.count; k++) {
                    int16_t e = tr->Partitions.items[k].ErrorCode;
                    struct mk_part *p = carried_part(s, tr->Name, tr->Partitions.items[k].PartitionIndex);
                    if (p == NULL) {
                        continue;
                    }
                    if (e == KP_ERR_NONE || e == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
                        p->done = true; /* written, or nothing left to mark */
                    } else if (e == KP_ERR_INVALID_PRODUCER_EPOCH ||
                               e == KP_ERR_TRANSACTION_COORDINATOR_FENCED) {
                        br_warn("%s-%" PRId32 ": the %s marker of transactional id \"%s\" "
                                "refused: %s",
                                p->topic, p->partition, j->commit ? "COMMIT" : "ABORT", j->id,
                                kp_err_name(e));
                        p->done = true;
                    } else {
                        br_debug("%s-%" PRId32 ": the marker of transactional id \"%s\" not "
                                 "written by broker %" PRId32 " (%s): sending again",
                                 p->topic, p->partition, j->id, s->broker, kp_err_name(e));
                    }
                }
            }
        }
    }
    kp_arena_free(&arena);
    send_ended(s);
}

static void on_closed(void *ctx, struct br_conn *c, int err)
{
    (void)c;
    struct mk_send *s = ctx;
    s->conn = NULL;
    br_debug("transactional id \"%s\": broker %" PRId32 " closed the marker connection (%s): "
             "sending again",
             s->job->id, s->broker, err != 0 ? strerror(err) : "closed");
    send_ended(s);
}

static const struct br_conn_ops marker_conn_ops = {on_connected, on_frame, on_closed};

static void deadline_fired(void *ctx, struct br_timer *t)
{
    (void)ctx;
    struct mk_send *s = t->owner;
    br_warn("transactional id \"%s\": no WriteTxnMarkers answer from broker %" PRId32
            " within %d ms: sending again",
            s->job->id, s->broker, BR_TXN_REQUEST_TIMEOUT_MS);
    send_ended(s);
}

static const struct br_timer_ops deadline_timer_ops = {"txn marker deadline", deadline_fired};

/* The request to broker `leader` for the job's parts idx[0..n), queued on
 * a connection of its own. 0, or -1 (nothing sent: the round retries). */
static int send_to(struct mk_job *j, int32_t leader, size_t *idx, size_t n)
{
    struct br_server *b = j->b;
    const struct br_mc_broker *mb = br_mc_broker(&b->mc, leader);
    if (mb == NULL) {
        return -1;
    }
    struct mk_send *s = kp_calloc(1, sizeof *s);
    struct kp_WriteTxnMarkersRequest_WritableTxnMarkerTopic *topics =
        kp_calloc(n, sizeof *topics);
    int32_t *indexes = kp_calloc(n, sizeof *indexes);
    if (s == NULL || topics == NULL || indexes == NULL) {
        kp_free(s);
        kp_free(topics);
        kp_free(indexes);
        kp_free(idx);
        return -1;
    }
    /* one topic entry per partition: Kafka groups them, a reader takes both */
    for (size_t k = 0; k < n; k++) {
        const struct mk_part *p = &j->parts[idx[k]];
        indexes[k] = p->partition;
        topics[k].Name = kp_str_c(p->topic);
        topics[k].PartitionIndexes.items = &indexes[k];
        topics[k].PartitionIndexes.count = 1;
    }
    struct kp_WriteTxnMarkersRequest_WritableTxnMarker marker = {
        j->producer_id, j->epoch, j->commit, {topics, (int32_t)n}, j->coordinator_epoch};
    struct kp_WriteTxnMarkersRequest q = {{&marker, 1}};
    struct br_txn_markers *m = b->txn_markers;
    char client_id[48];
    (void)snprintf(client_id, sizeof client_id, "samsa-broker-%" PRId32, b->node_id);
    s->correlation = ++m->correlation;
    struct kp_request_header h = {KP_API_WRITE_TXN_MARKERS, 0, s->correlation,
                                  kp_str_c(client_id)};
    struct kp_writer w;
    kp_wr_init(&w, MAX_ANSWER_BYTES);
    int err = kp_request_encode(&w, &h, &q);
    kp_free(topics);
    kp_free(indexes);
    size_t len = 0;
    uint8_t *frame = err == 0 ? kp_wr_steal(&w, &len) : NULL;
    kp_wr_free(&w);
    s->job = j;
    s->broker = leader;
    s->idx = idx;
    s->n = n;
    br_timer_init(&s->deadline, &deadline_timer_ops, s);
    if (frame == NULL ||
        br_conn_connect(b->net, mb->host, mb->port, (int32_t)MAX_ANSWER_BYTES, &marker_conn_ops, s,
                        &s->conn) != 0) {
        kp_free(frame);
        s->conn = NULL;
        send_free(b, s);
        return -1;
    }
    if (br_conn_send(s->conn, frame, len) != 0) {
        send_free(b, s);
        return -1;
    }
    br_timer_arm(b->net, &s->deadline, br_now_mono_ms() + BR_TXN_REQUEST_TIMEOUT_MS);
    s->next = j->sends;
    j->sends = s;
    return 0;
}

/* Sends the markers not yet written, one request per leader. */
static void send_round(struct mk_job *j)
{
    struct br_server *b = j->b;
    bool missing = false;
    bool *taken = kp_calloc(j->nparts > 0 ? j->nparts : 1, sizeof *taken);
    if (taken == NULL) {
        br_timer_arm(b->net, &j->retry, br_now_mono_ms() + RETRY_BACKOFF_MS);
        return;
    }
    for (size_t i = 0; i < j->nparts; i++) {
        if (j->parts[i].done || taken[i]) {
            continue;
        }
        const struct mk_part *p = &j->parts[i];
        const struct br_mc_partition *mp =
            br_mc_partition(&b->mc, p->topic, strlen(p->topic), p->partition);
        if (mp == NULL) {
            j->parts[i].done = true; /* the topic or partition is gone: nothing to mark */
            continue;
        }
        if (!mp->present || mp->leader < 0) {
            missing = true; /* no leader now: the next round */
            continue;
        }
        int32_t leader = mp->leader;
        size_t *idx = kp_calloc(j->nparts, sizeof *idx);
        if (idx == NULL) {
            missing = true;
            break;
        }
        size_t n = 0;
        for (size_t k = i; k < j->nparts; k++) {
            if (j->parts[k].done || taken[k]) {
                continue;
            }
            const struct br_mc_partition *mk =
                br_mc_partition(&b->mc, j->parts[k].topic, strlen(j->parts[k].topic),
                                j->parts[k].partition);
            if (mk != NULL && mk->present && mk->leader == leader) {
                idx[n++] = k;
                taken[k] = true;
            }
        }
        if (send_to(j, leader, idx, n) != 0) {
            missing = true;
        }
    }
    kp_free(taken);
    if (j->sends != NULL) {
        return; /* the last answer decides (send_ended) */
    }
    if (!missing && job_complete(j)) {
        job_finished(j);
        return;
    }
    br_timer_arm(b->net, &j->retry, br_now_mono_ms() + RETRY_BACKOFF_MS);
}

static void check_log(struct mk_job *j);

static void retry_fired(void *ctx, struct br_timer *t)
{
    (void)ctx;
    struct mk_job *j = t->owner;
    if (j->sends != NULL || j->waiting_log) {
        return;
    }
    if (!j->log_ok) {
        check_log(j);
    } else {
        send_round(j);
    }
}

static const struct br_timer_ops retry_timer_ops = {"txn marker retry", retry_fired};

/* Where the Prepare record's wait for the ISR ended: the markers go, or
 * the job waits on. */
static void log_settled(struct mk_job *j)
{
    struct br_partition *p = j->wait.p;
    int16_t e = br_partition_append_outcome(p, j->wait.required, j->wait.term,
                                            p->topic->config.min_insync_replicas);
    if (e == KP_ERR_NONE) {
        j->log_ok = true;
        send_round(j);
        return;
    }
    if (e == KP_ERR_NOT_LEADER_OR_FOLLOWER) {
        /* led elsewhere: the next coordinator sends them (the job goes
         * with the partition's ids, br_txn_markers_forget) */
        br_info("transactional id \"%s\": its partition of __transaction_state is led "
                "elsewhere before its markers were sent",
                j->id);
        return;
    }
    /* in the leader's log, and in the ISR once the ISR is large enough
     * again (NOT_ENOUGH_REPLICAS_AFTER_APPEND) or the followers catch up
     * (REQUEST_TIMED_OUT): asked again later */
    br_debug("transactional id \"%s\": its Prepare record is not replicated yet (%s)", j->id,
             kp_err_name(e));
    br_timer_arm(j->b->net, &j->retry, br_now_mono_ms() + LOG_RECHECK_MS);
}

static void log_wait_done(struct br_delayed_produce *dp, bool expired)
{
    (void)expired;
    struct mk_job *j = dp->owner;
    j->waiting_log = false;
    log_settled(j);
}

/* Parks the job until its Prepare record is in the ISR (or settles it now). */
static void check_log(struct mk_job *j)
{
    br_delayed_produce_init(&j->dp, &j->wait, &j->link, 1, log_wait_done, j);
    if (br_delayed_produce_settled(&j->dp)) {
        log_settled(j);
        return;
    }
    j->waiting_log = true;
    br_delayed_produce_park(&j->b->purgatory, &j->dp, br_now_mono_ms() + BR_TXN_REQUEST_TIMEOUT_MS);
}

bool br_txn_markers_write(struct br_server *b, const struct br_txn *t, bool commit,
                          struct br_partition *log_p)
{
    struct br_txn_markers *m = markers_of(b);
    if (m == NULL || log_p == NULL) {
        return false;
    }
    struct mk_job *j = job_find(m, t, commit);
    if (j != NULL) {
        if (!j->all_done) {
            return false;
        }
        job_unlink(m, j);
        job_free(j);
        return true;
    }
    j = kp_calloc(1, sizeof *j);
    if (j == NULL) {
        return false;
    }
    j->b = b;
    j->id = kp_malloc(t->id_len + 1);
    j->parts = kp_calloc(t->nparts > 0 ? t->nparts : 1, sizeof *j->parts);
    bool ok = j->id != NULL && j->parts != NULL;
    for (size_t i = 0; ok && i < t->nparts; i++) {
        size_t tl = strlen(t->parts[i].topic);
        j->parts[i].topic = kp_malloc(tl + 1);
        ok = j->parts[i].topic != NULL;
        if (ok) {
            memcpy(j->parts[i].topic, t->parts[i].topic, tl + 1);
            j->parts[i].partition = t->parts[i].partition;
            j->nparts = i + 1;
        }
    }
    if (!ok) {
        job_free(j);
        return false;
    }
    memcpy(j->id, t->id, t->id_len);
    j->id[t->id_len] = '\0';
    j->id_len = t->id_len;
    j->producer_id = t->producer_id;
    j->epoch = t->epoch;
    j->commit = commit;
    j->coordinator_epoch = log_p->leader_epoch;
    br_timer_init(&j->retry, &retry_timer_ops, j);
    j->next = m->jobs;
    m->jobs = j;
    /* the markers go once the Prepare record is in the ISR: from the
     * reactor's next turn, so that the coordinator is called back
     * (br_txn_markers_done) by an answer or a timer, never from here */
    j->wait = (struct br_append_wait){log_p, t->log_end > 0 ? t->log_end : 0, log_p->leader_term};
    br_timer_arm(b->net, &j->retry, br_now_mono_ms());
    return false;
}

void br_txn_markers_forget(struct br_server *b, bool (*gone)(void *arg, const char *id, size_t len),
                           void *arg)
{
    struct br_txn_markers *m = b->txn_markers;
    if (m == NULL) {
        return;
    }
    for (struct mk_job **pp = &m->jobs; *pp != NULL;) {
        struct mk_job *j = *pp;
        if (gone == NULL || gone(arg, j->id, j->id_len)) {
            *pp = j->next;
            job_free(j);
        } else {
            pp = &j->next;
        }
    }
    if (gone == NULL) {
        kp_free(m);
        b->txn_markers = NULL;
    }
}

size_t br_txn_markers_pending(const struct br_server *b)
{
    size_t n = 0;
    for (const struct mk_job *j = b->txn_markers != NULL ? b->txn_markers->jobs : NULL; j != NULL;
         j = j->next) {
        n++;
    }
    return n;
}
