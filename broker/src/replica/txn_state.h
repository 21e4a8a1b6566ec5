/*
 * samsa-broker: a partition's finished transactions (Kafka 2.0's
 * ProducerStateManager.unreplicatedTxns and completeTxn, lastStableOffset,
 * and the TransactionIndex of its segments): the aborted transactions of
 * the log, ascending by marker offset, kept in memory and in the
 * `.txnindex` files (storage/txn_index.h), and the completed transactions
 * whose marker the high watermark has not passed yet, which still hold the
 * last stable offset back. The open ones are the producers' state's
 * (producer_state.h).
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REPLICA_TXN_STATE_H
#define SAMSA_BROKER_REPLICA_TXN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replica/producer_state.h"
#include "storage/txn_index.h"

struct br_txn_state {
    struct br_aborted_txn *aborted; /* owned */
    size_t naborted;
    size_t cap_aborted;
    struct br_txn_span *unreplicated; /* owned */
    size_t nunreplicated;
    size_t cap_unreplicated;
};

/* The last stable offset under high watermark hw (Kafka's
 * Replica.lastStableOffset): the first offset of the oldest open
 * transaction (ps) or completed one whose marker hw has not passed, when
 * below hw; hw otherwise. Completed ones hw passed are forgotten. */
int64_t br_txn_state_lso(struct br_txn_state *ts, const struct br_producers *ps, int64_t hw);

/* A marker completed `done` (ps already without it) under high watermark
 * hw: it waits for hw to pass its marker; an ABORT is indexed, in memory
 * and in dir's `.txnindex` of the segment based at seg_base. */
void br_txn_state_complete(struct br_txn_state *ts, const struct br_producers *ps,
                           const struct br_txn_span *done, bool commit, int64_t hw,
                           const char *dir, int64_t seg_base);

/* The aborted transactions overlapping [fetch_offset, upper) (Kafka's
 * TransactionIndex.collectAbortedTxns: marker at or past fetch_offset,
 * first offset below upper), written to out (room for cap); their count
 * is returned (more than cap: call again with that room). */
size_t br_txn_state_aborted(const struct br_txn_state *ts, int64_t fetch_offset, int64_t upper,
                            struct br_aborted_txn *out, size_t cap);

/* Starts over from dir's `.txnindex` files, cut at the log end leo (what a
 * truncation or a crash's recovery removed goes), those below start left
 * out. */
void br_txn_state_load(struct br_txn_state *ts, const char *dir, int64_t start, int64_t leo);

void br_txn_state_free(struct br_txn_state *ts);

#endif
