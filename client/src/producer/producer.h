/*
 * The producer's internals, shared by the files of producer/: records.c
 * (samsa_produce's records and their reports), send.c (the I/O thread's
 * side: producer id, batches, ProduceRequest, answers) and producer.c (the
 * handle and its kind ops). The calls go one way: producer.c -> send.c ->
 * records.c -> accum.c, partitioner.c, core.
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

/* send.c */
/* The producer's turn of the I/O loop (lock held); returns when it next
 * wants to run. */
int64_t sc_producer_serve(struct sc_client *c, int64_t now);

#endif
