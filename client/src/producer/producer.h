/*
 * The producer's internals, shared by the files of producer/: records.c
 * (samsa_produce's records and their reports), send.c (the I/O thread's
 * side: producer id, batches, ProduceRequest, answers) and producer.c (the
 * handle and its kind ops), txn.c (the transactional producer's I/O side:
 * its coordinator, AddPartitionsToTxn, the calls' ops) and txn_api.c (the
 * public transactional calls). The calls go one way: txn_api.c ->
 * producer.c -> send.c -> txn.c -> records.c -> accum.c, partitioner.c,
 * core.
 */
#ifndef SAMSA_CLIENT_PRODUCER_H
#define SAMSA_CLIENT_PRODUCER_H

#include "core/internal.h"

/* A record's key, value and headers, in its one block. Inline: the I/O
 * thread's encoder and the delivery reports read them for every record,
 * and a call into records.c each cost about 10% more instructions per
 * record on the produce path (callgrind, 200 k queued). */
static inline const uint8_t *sc_msg_key(const struct sc_msg *m)
{
    return m->data;
}

static inline const uint8_t *sc_msg_value(const struct sc_msg *m)
{
    return m->data + (m->key_len > 0 ? m->key_len : 0);
}

static inline const uint8_t *sc_msg_headers(const struct sc_msg *m)
{
    return sc_msg_value(m) + (m->value_len > 0 ? m->value_len : 0);
}

/* records.c */
void sc_msg_free(struct sc_msg *m);
/* m's headers as the public array (names NUL-terminated, values pointing
 * into m), one kp_malloc'd block; NULL when it has none or on no memory. */
struct samsa_header *sc_msg_header_list(const struct sc_msg *m);
/* Queues a delivery report with err for every record of q (emptied). */
void sc_msgq_report_all(struct sc_client *c, struct sc_msgq *q, int err);
/* Places m on its partition's queue (partition count known). */
void sc_ptopic_place(struct sc_client *c, struct sc_ptopic *t, struct sc_msg *m);

/* txn.c: the transactional producer (Kafka 2.0's KIP-98 as Java's
 * TransactionManager and librdkafka's rdkafka_txnmgr.c run it). */
enum sc_txn_state {
    SC_TXN_UNINIT = 0, /* init_transactions not done */
    SC_TXN_READY,      /* a producer id; no transaction */
    SC_TXN_IN_TXN,     /* begun */
    SC_TXN_COMMITTING, /* commit called (flushing, EndTxn) */
    SC_TXN_ABORTING,   /* abort called (purging, EndTxn) */
    SC_TXN_ABORTABLE,  /* the transaction failed: only an abort goes on */
    SC_TXN_FATAL,      /* fenced or forgotten: nothing goes on */
};

enum sc_txn_call {
    SC_TXN_CALL_INIT = 0,
    SC_TXN_CALL_BEGIN,
    SC_TXN_CALL_PRODUCE,
    SC_TXN_CALL_SEND_OFFSETS,
    SC_TXN_CALL_COMMIT,
    SC_TXN_CALL_ABORT,
};

/* What an error answered by a coordinator (or a record's delivery) does to
 * the transaction (librdkafka's rd_kafka_txn_handle_* and Java's
 * TransactionManager handlers, for Kafka 2.0's errors). */
enum sc_txn_class {
    SC_TXN_OK = 0,
    SC_TXN_RETRY,       /* the same request again after retry.backoff.ms */
    SC_TXN_COORD_MOVED, /* FindCoordinator again, then the request */
    SC_TXN_ABORTABLE_ERR,
    SC_TXN_FATAL_ERR,
};

struct sc_txn {
    int state;                /* enum sc_txn_state */
    int32_t coord_id;         /* the transaction coordinator; -1: unknown */
    bool coord_inflight;
    int64_t coord_retry_at;
    bool add_inflight;        /* an AddPartitionsToTxn on its way */
    int64_t add_retry_at;
    int added;                /* partitions the coordinator added */
    bool offsets_added;       /* AddOffsetsToTxn answered in this transaction */
    int err;                  /* the abortable or fatal error, SAMSA_OK */
    char reason[256];
};

/* Pure: whether `call` may be made in `state` (SAMSA_OK), else
 * SAMSA_ERR_STATE, or SAMSA_ERR_FATAL in SC_TXN_FATAL. Inline: records.c
 * (samsa_produce) asks it too, below txn.c. */
static inline int sc_txn_may(int state, int call)
{
    if (state == SC_TXN_FATAL) {
        return SAMSA_ERR_FATAL;
    }
    switch (call) {
    case SC_TXN_CALL_INIT:
        return state == SC_TXN_UNINIT ? SAMSA_OK : SAMSA_ERR_STATE;
    case SC_TXN_CALL_BEGIN:
        return state == SC_TXN_READY ? SAMSA_OK : SAMSA_ERR_STATE;
    case SC_TXN_CALL_PRODUCE:
    case SC_TXN_CALL_SEND_OFFSETS:
        return state == SC_TXN_IN_TXN ? SAMSA_OK : SAMSA_ERR_STATE;
    case SC_TXN_CALL_COMMIT: /* again after a timeout: it goes on */
        return state == SC_TXN_IN_TXN || state == SC_TXN_COMMITTING ? SAMSA_OK : SAMSA_ERR_STATE;
    case SC_TXN_CALL_ABORT:
        return state == SC_TXN_IN_TXN || state == SC_TXN_ABORTABLE ||
                       state == SC_TXN_ABORTING || state == SC_TXN_COMMITTING
                   ? SAMSA_OK
                   : SAMSA_ERR_STATE;
    default:
        return SAMSA_ERR_INVALID_ARG;
    }
}
/* The producer id and epoch an InitProducerId answered: every partition's
 * sequence starts again from 0 (lock held). */
void sc_producer_id_set(struct sc_client *c, int64_t pid, int16_t epoch);
/* Pure: the class of err (a Kafka or library code) for the transaction. */
int sc_txn_classify(int err);
/* The transaction failed with err: SC_TXN_ABORTABLE (or SC_TXN_FATAL when
 * fatal), the reason kept for the calls (lock held). */
void sc_txn_fail(struct sc_client *c, int err, bool fatal, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The transactional producer's turn (lock held, c->txn set): its
 * coordinator, AddPartitionsToTxn for the partitions that have records and
 * are not in the transaction yet. Returns when it next wants to run. */
int64_t sc_txn_serve(struct sc_client *c, int64_t now);
/* Whether pp's records may be sent now (always without a transaction). */
static inline bool sc_txn_may_send(const struct sc_client *c, const struct sc_ppart *pp)
{
    return c->txn == NULL || pp->txn == SC_PPART_TXN_ADDED;
}
/* The op of a transactional call (the caller runs it with sc_op_run):
 * SC_TXN_CALL_INIT, _SEND_OFFSETS (group and offsets copied), _COMMIT or
 * _ABORT. NULL: out of memory. */
struct sc_op *sc_txn_op_new(int call, const char *group_id, const struct samsa_partition *offsets,
                            size_t count);

/* send.c */
/* The producer's turn of the I/O loop (lock held); returns when it next
 * wants to run. */
int64_t sc_producer_serve(struct sc_client *c, int64_t now);

/* producer.c, for txn_api.c: flush as samsa_producer_flush (gate entered),
 * and what an abort drops: every record queued, and the batches waiting to
 * be sent again (lock held; a new producer id is wanted when there were
 * any: their sequence numbers are lost). */
int sc_producer_flush(samsa_producer *p, int timeout_ms);
void sc_producer_purge_for_abort(struct sc_client *c);

#endif
