/*
 * The transactional producer's public calls (samsa.h, "Transactions"), as
 * librdkafka's rd_kafka_init_transactions, _begin_transaction,
 * _send_offsets_to_transaction, _commit_transaction, _abort_transaction,
 * and their errors as its rd_kafka_error_t. Each checks the state
 * (sc_txn_may), then runs its op on the I/O thread (txn.c); commit flushes
 * first and abort drops what is not sent first, as librdkafka's do.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "producer/producer.h"

struct samsa_txn_error {
    int code;
    bool fatal;
    bool retriable;
    bool txn_requires_abort;
    char str[512];
};

/* What is handed out when the error itself cannot be allocated. */
static struct samsa_txn_error nomem_error = {SAMSA_ERR_NOMEM, false, true, false,
                                         "Local: out of memory"};

static samsa_txn_error *error_new(int code, bool fatal, bool retriable, bool abort, const char *fmt,
                              ...) __attribute__((format(printf, 5, 6)));

static samsa_txn_error *error_new(int code, bool fatal, bool retriable, bool abort, const char *fmt,
                              ...)
{
    samsa_txn_error *e = kp_calloc(1, sizeof(*e));
    if (e == NULL) {
        return &nomem_error;
    }
    e->code = code;
    e->fatal = fatal;
    e->retriable = retriable && !fatal && !abort;
    e->txn_requires_abort = abort && !fatal;
    va_list ap;
    va_start(ap, fmt);
    sc_verrf(e->str, sizeof(e->str), fmt, ap);
    va_end(ap);
    return e;
}

int samsa_txn_error_code(const samsa_txn_error *e)
{
    return e != NULL ? e->code : SAMSA_OK;
}

const char *samsa_txn_error_string(const samsa_txn_error *e)
{
    return e != NULL ? e->str : "Success";
}

int samsa_txn_error_is_fatal(const samsa_txn_error *e)
{
    return e != NULL && e->fatal ? 1 : 0;
}

int samsa_txn_error_is_retriable(const samsa_txn_error *e)
{
    return e != NULL && e->retriable ? 1 : 0;
}

int samsa_txn_error_txn_requires_abort(const samsa_txn_error *e)
{
    return e != NULL && e->txn_requires_abort ? 1 : 0;
}

void samsa_txn_error_destroy(samsa_txn_error *e)
{
    if (e != NULL && e != &nomem_error) {
        kp_free(e);
    }
}

/* The error of a call that failed with err (errstr its sentence), typed by
 * the state the transaction is in now (lock held). */
static samsa_txn_error *typed(struct sc_client *c, const char *call, int err, const char *errstr)
{
    const struct sc_txn *t = c->txn;
    if (t->state == SC_TXN_FATAL) {
        return error_new(t->err, true, false, false, "%s: fatal: %s", call, t->reason);
    }
    if (t->state == SC_TXN_ABORTABLE) {
        return error_new(t->err, false, false, true, "%s: the transaction must be aborted: %s",
                         call, t->reason);
    }
    return error_new(sc_err_public(err), false,
                     err == SAMSA_ERR_TIMED_OUT || sc_txn_classify(err) == SC_TXN_RETRY ||
                         sc_txn_classify(err) == SC_TXN_COORD_MOVED,
                     false, "%s: %s", call, errstr != NULL && errstr[0] != '\0' ? errstr
                                                                            : samsa_err_str(err));
}

static const char *const call_names[] = {
    [SC_TXN_CALL_INIT] = "init_transactions",
    [SC_TXN_CALL_BEGIN] = "begin_transaction",
    [SC_TXN_CALL_PRODUCE] = "produce",
    [SC_TXN_CALL_SEND_OFFSETS] = "send_offsets_to_transaction",
    [SC_TXN_CALL_COMMIT] = "commit_transaction",
    [SC_TXN_CALL_ABORT] = "abort_transaction",
};

/* Whether call may be made now; if so the state becomes `to` (unless -1);
 * else the error (lock held). */
static samsa_txn_error *enter_state(struct sc_client *c, int call, int to)
{
    if (c->txn == NULL) {
        return error_new(SAMSA_ERR_STATE, false, false, false,
                         "%s: not a transactional producer (no transactional.id)",
                         call_names[call]);
    }
    int err = sc_txn_may(c->txn->state, call);
    if (err == SAMSA_ERR_FATAL || (err != SAMSA_OK && c->txn->state == SC_TXN_ABORTABLE)) {
        return typed(c, call_names[call], err, NULL);
    }
    if (err != SAMSA_OK) {
        static const char *const names[] = {"uninitialized", "ready",   "in a transaction",
                                            "committing",    "aborting", "abortable",
                                            "fatal"};
        return error_new(err, false, false, false, "%s: not allowed while %s", call_names[call],
                         names[c->txn->state]);
    }
    if (to >= 0) {
        c->txn->state = to;
    }
    return NULL;
}

/* Runs the op of call within timeout_ms; NULL or its typed error. */
static samsa_txn_error *run_op(struct sc_client *c, int call, const char *group,
                           const struct samsa_partition *offsets, size_t count, int timeout_ms)
{
    struct sc_op *op = sc_txn_op_new(call, group, offsets, count);
    if (op == NULL) {
        return &nomem_error;
    }
    char errstr[512] = "";
    int err = sc_op_run(c, &op, timeout_ms, errstr, sizeof(errstr));
    sc_op_free(op);
    if (err == SAMSA_OK) {
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    samsa_txn_error *e = typed(c, call_names[call], err, errstr);
    pthread_mutex_unlock(&c->lock);
    return e;
}

static int remaining(int64_t deadline)
{
    if (deadline == INT64_MAX) {
        return -1;
    }
    int64_t left = deadline - sc_now_ms();
    return left > 0 ? (int)(left < INT32_MAX ? left : INT32_MAX) : 0;
}

static samsa_txn_error *gated_init(samsa_producer *p, int timeout_ms)
{
    struct sc_client *c = p->c;
    pthread_mutex_lock(&c->lock);
    samsa_txn_error *e = enter_state(c, SC_TXN_CALL_INIT, -1);
    pthread_mutex_unlock(&c->lock);
    return e != NULL ? e : run_op(c, SC_TXN_CALL_INIT, NULL, NULL, 0, timeout_ms);
}

static samsa_txn_error *gated_begin(samsa_producer *p)
{
    struct sc_client *c = p->c;
    pthread_mutex_lock(&c->lock);
    samsa_txn_error *e = enter_state(c, SC_TXN_CALL_BEGIN, SC_TXN_IN_TXN);
    pthread_mutex_unlock(&c->lock);
    return e;
}

static samsa_txn_error *gated_send_offsets(samsa_producer *p, const struct samsa_partition *offsets,
                                       size_t count, const samsa_consumer_group_metadata *md,
                                       int timeout_ms)
{
    struct sc_client *c = p->c;
    if (md == NULL || md->group_id == NULL || md->group_id[0] == '\0' ||
        (offsets == NULL && count > 0)) {
        return error_new(SAMSA_ERR_INVALID_ARG, false, false, false,
                         "send_offsets_to_transaction: no group, or no offsets");
    }
    for (size_t i = 0; i < count; i++) {
        if (offsets[i].topic == NULL || offsets[i].partition < 0 || offsets[i].offset < 0) {
            return error_new(SAMSA_ERR_INVALID_ARG, false, false, false,
                             "send_offsets_to_transaction: offset %zu is not a topic, partition "
                             "and offset >= 0",
                             i);
        }
    }
    pthread_mutex_lock(&c->lock);
    samsa_txn_error *e = enter_state(c, SC_TXN_CALL_SEND_OFFSETS, -1);
    pthread_mutex_unlock(&c->lock);
    if (e != NULL || count == 0) {
        return e; /* nothing to send: as librdkafka, no request */
    }
    return run_op(c, SC_TXN_CALL_SEND_OFFSETS, md->group_id, offsets, count, timeout_ms);
}

static samsa_txn_error *gated_commit(samsa_producer *p, int timeout_ms)
{
    struct sc_client *c = p->c;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    pthread_mutex_lock(&c->lock);
    samsa_txn_error *e = enter_state(c, SC_TXN_CALL_COMMIT, SC_TXN_COMMITTING);
    pthread_mutex_unlock(&c->lock);
    if (e != NULL) {
        return e;
    }
    sc_wake(c);
    int err = sc_producer_flush(p, timeout_ms);
    pthread_mutex_lock(&c->lock);
    if (err != SAMSA_OK || c->txn->state != SC_TXN_COMMITTING) {
        e = typed(c, "commit_transaction", err,
                  err == SAMSA_ERR_TIMED_OUT ? "records not acknowledged in time: call it again"
                                             : NULL);
    }
    pthread_mutex_unlock(&c->lock);
    if (e != NULL) {
        return e;
    }
    return run_op(c, SC_TXN_CALL_COMMIT, NULL, NULL, 0, remaining(deadline));
}

static samsa_txn_error *gated_abort(samsa_producer *p, int timeout_ms)
{
    struct sc_client *c = p->c;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    pthread_mutex_lock(&c->lock);
    samsa_txn_error *e = enter_state(c, SC_TXN_CALL_ABORT, SC_TXN_ABORTING);
    if (e == NULL) {
        sc_producer_purge_for_abort(c);
    }
    pthread_mutex_unlock(&c->lock);
    if (e != NULL) {
        return e;
    }
    sc_wake(c);
    /* what is in flight comes back (its reports served) before EndTxn */
    int err = sc_producer_flush(p, timeout_ms);
    if (err != SAMSA_OK) {
        pthread_mutex_lock(&c->lock);
        e = typed(c, "abort_transaction", err,
                  "records in flight not answered in time: call it again");
        pthread_mutex_unlock(&c->lock);
        return e;
    }
    return run_op(c, SC_TXN_CALL_ABORT, NULL, NULL, 0, remaining(deadline));
}

samsa_txn_error *samsa_producer_init_transactions(samsa_producer *p, int timeout_ms)
{
    if (p == NULL || !sc_gate_enter(&p->gate)) {
        return error_new(p == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_DESTROYED, false, false,
                         false, "init_transactions: %s", p == NULL ? "no producer" : "closed");
    }
    samsa_txn_error *e = gated_init(p, timeout_ms);
    sc_gate_leave(&p->gate);
    return e;
}

samsa_txn_error *samsa_producer_begin_transaction(samsa_producer *p)
{
    if (p == NULL || !sc_gate_enter(&p->gate)) {
        return error_new(p == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_DESTROYED, false, false,
                         false, "begin_transaction: %s", p == NULL ? "no producer" : "closed");
    }
    samsa_txn_error *e = gated_begin(p);
    sc_gate_leave(&p->gate);
    return e;
}

samsa_txn_error *samsa_producer_send_offsets_to_transaction(samsa_producer *p,
                                                        const struct samsa_partition *offsets,
                                                        size_t count,
                                                        const samsa_consumer_group_metadata *md,
                                                        int timeout_ms)
{
    if (p == NULL || !sc_gate_enter(&p->gate)) {
        return error_new(p == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_DESTROYED, false, false,
                         false, "send_offsets_to_transaction: %s",
                         p == NULL ? "no producer" : "closed");
    }
    samsa_txn_error *e = gated_send_offsets(p, offsets, count, md, timeout_ms);
    sc_gate_leave(&p->gate);
    return e;
}

samsa_txn_error *samsa_producer_commit_transaction(samsa_producer *p, int timeout_ms)
{
    if (p == NULL || !sc_gate_enter(&p->gate)) {
        return error_new(p == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_DESTROYED, false, false,
                         false, "commit_transaction: %s", p == NULL ? "no producer" : "closed");
    }
    samsa_txn_error *e = gated_commit(p, timeout_ms);
    sc_gate_leave(&p->gate);
    return e;
}

samsa_txn_error *samsa_producer_abort_transaction(samsa_producer *p, int timeout_ms)
{
    if (p == NULL || !sc_gate_enter(&p->gate)) {
        return error_new(p == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_DESTROYED, false, false,
                         false, "abort_transaction: %s", p == NULL ? "no producer" : "closed");
    }
    samsa_txn_error *e = gated_abort(p, timeout_ms);
    sc_gate_leave(&p->gate);
    return e;
}
