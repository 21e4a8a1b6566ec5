/*
 * samsa-broker: what a producer's records must be before they are appended
 * as leader (Kafka 2.0's LogValidator, with the checks of
 * ProduceRequest.validateRecords and Log.append it goes with): one
 * RecordBatch of magic 2 per partition, or a MessageSet v0/v1 (Produce
 * v0-v2) up-converted to one; the codecs and versions allowed; no control
 * or transactional batch; a CreateTime batch's MaxTimestamp made its
 * records' largest; LogAppendTime stamped. Pure: bytes in, a batch and a
 * Kafka error code out; the Produce handler and the partition do the rest.
 * @locality any thread (no shared state)
 */
#ifndef SAMSA_BROKER_STORAGE_LOG_VALIDATOR_H
#define SAMSA_BROKER_STORAGE_LOG_VALIDATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/record_batch.h>

/* What the records are checked against. */
struct br_validation {
    int16_t produce_version;   /* the Produce request's version */
    int32_t max_message_bytes; /* the topic's max.message.bytes */
    /* socket.request.max.bytes: what a message set may take once its
     * wrappers are decompressed, and a batch's records when their
     * timestamps are read (what one request could carry uncompressed) */
    size_t request_max_bytes;
    bool log_append_time; /* message.timestamp.type=LogAppendTime */
    int64_t now_ms;       /* the append's wall-clock time (LogAppendTime) */
    const char *from;     /* the producer's peer, for debug logs */
    bool transactional;   /* the request names a transactional id */
};

/* The batch to append. */
struct br_validated {
    uint8_t *batch; /* the records given (changed in place), or `owned` */
    size_t size;
    struct kp_batch_header h;
    /* an up-converted message set: the caller frees it (kp_free), whatever
     * the result */
    uint8_t *owned;
};

/* Checks records[0..len) (writable: a MaxTimestamp or LogAppendTime is
 * written in place) as Kafka 2.0 does before an append as leader. Returns
 * KP_ERR_NONE with *out filled, or the Kafka error code of the partition's
 * answer (INVALID_RECORD, CORRUPT_MESSAGE, MESSAGE_TOO_LARGE,
 * UNSUPPORTED_COMPRESSION_TYPE, UNKNOWN_SERVER_ERROR). */
int16_t br_log_validate(uint8_t *records, size_t len, const struct br_validation *v,
                        struct br_validated *out);

#endif
