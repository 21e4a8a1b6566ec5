/*
 * samsa-broker: idempotent-producer state of one partition.
 *
 * For each producer id the partition keeps the epoch and the last five
 * batches (first and last sequence, base offset), as Kafka does
 * (ProducerStateEntry.NUM_BATCHES_TO_RETAIN = 5; the clients cap in-flight
 * requests at 5 for that reason). The rules (Kafka's
 * ProducerAppendInfo.checkSequence):
 *   - a batch equal to a retained one is a duplicate: not appended, answered
 *     with its original base offset;
 *   - an epoch below the stored one: INVALID_PRODUCER_EPOCH;
 *   - a newer epoch must start at sequence 0;
 *   - the same epoch must continue at last sequence + 1 (wrapping at
 *     INT32_MAX to 0);
 *   - an unknown producer id may start anywhere (its state was expired or
 *     the broker restarted without it).
 * Otherwise OUT_OF_ORDER_SEQUENCE_NUMBER.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_PRODUCER_STATE_H
#define SAMSA_BROKER_PRODUCER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BR_PRODUCER_BATCHES 5

struct br_producer_batch {
    int32_t first_seq;
    int32_t last_seq;
    int64_t base_offset;
};

struct br_producer {
    int64_t producer_id;
    int16_t epoch;
    uint8_t nbatches; /* retained, oldest first */
    struct br_producer_batch batches[BR_PRODUCER_BATCHES];
    int64_t last_used_ms;
};

struct br_producers {
    struct br_producer *items;
    size_t n;
    size_t cap;
};

enum br_seq_verdict {
    BR_SEQ_APPEND = 0, /* in order: append, then br_producers_record() */
    BR_SEQ_DUPLICATE,  /* *dup_offset holds the original base offset */
    BR_SEQ_ERROR,      /* *kafka_err holds the Kafka error code */
};

/* Check an incoming batch. */
enum br_seq_verdict br_producers_check(const struct br_producers *ps, int64_t producer_id,
                                       int16_t epoch, int32_t first_seq, int32_t last_seq,
                                       int64_t *dup_offset, int *kafka_err);
/* Remember an appended batch. Returns 0 or -1 (out of memory). At most
 * `max_producers` ids are kept; the least recently used one goes first. */
int br_producers_record(struct br_producers *ps, int64_t producer_id, int16_t epoch,
                        int32_t first_seq, int32_t last_seq, int64_t base_offset, int64_t now_ms,
                        size_t max_producers);
void br_producers_free(struct br_producers *ps);

/* last_seq of a batch: BaseSequence + LastOffsetDelta, wrapping past INT32_MAX. */
int32_t br_seq_add(int32_t seq, int32_t delta);

#endif
