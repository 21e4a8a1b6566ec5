/* samsa-broker: a producer's records checked before the append (see
 * log_validator.h). */
#include "storage/log_validator.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/legacy.h>

/* The ErrorCode of a message set that did not up-convert: Kafka 2.0 answers
 * CORRUPT_MESSAGE for a bad CRC or structure (its InvalidRecordException
 * is a CorruptRecordException), MESSAGE_TOO_LARGE above the ceilings. */
static int16_t legacy_error(int err)
{
    switch (err) {
    case KP_E_TOO_LARGE:
        return KP_ERR_MESSAGE_TOO_LARGE;
    case KP_E_NOMEM:
        return KP_ERR_UNKNOWN_SERVER_ERROR;
    default:
        return KP_ERR_CORRUPT_MESSAGE;
    }
}

/*
 * Produce v0-v2 may carry MessageSet v0/v1: Kafka 2.0 (message.format.version
 * 2.0) converts it to one RecordBatch v2 (LogValidator's
 * convertAndAssignOffsetsNonCompressed and
 * validateMessagesAndAssignOffsetsCompressed), so does Samsa. The whole set,
 * wrappers decompressed, may take at most request_max_bytes: what one
 * request could have carried uncompressed. On success out holds the new
 * batch, in out->owned.
 */
static int16_t upconvert(const uint8_t *records, size_t len, const struct br_validation *v,
                         struct br_validated *out)
{
    size_t max = v->request_max_bytes;
    struct kp_writer w;
    kp_wr_init(&w, max + KP_BATCH_HEADER_SIZE);
    struct kp_legacy_info info;
    int err = kp_legacy_upconvert(records, len, max, max + KP_BATCH_HEADER_SIZE, &w, &info);
    if (err != 0) {
        kp_wr_free(&w);
        br_debug("produce v%d message set (magic %d) from %s refused: %s", v->produce_version,
                 info.magic, v->from, kp_err_str(err));
        return legacy_error(err);
    }
    out->owned = kp_wr_steal(&w, &out->size);
    out->batch = out->owned;
    if (kp_batch_parse(out->batch, out->size, &out->h, &out->size) != 0) {
        return KP_ERR_UNKNOWN_SERVER_ERROR; /* ours: the builder's batch */
    }
    if (out->size > (size_t)v->max_message_bytes) {
        return KP_ERR_MESSAGE_TOO_LARGE; /* Log.append checks the result */
    }
    return KP_ERR_NONE;
}

/*
 * Kafka's LogValidator sets a CreateTime batch's MaxTimestamp from its
 * records when the producer wrote another value (sarama writes -1), so that
 * the time index and ListOffsets by timestamp hold whoever produced, and
 * recomputes the CRC. An uncompressed batch is always checked (its records'
 * timestamps are read in place); a compressed one only when its
 * MaxTimestamp is below its BaseTimestamp, which no correct batch of a
 * client has (their first record is at BaseTimestamp): Kafka decompresses
 * every batch, which multiplied the broker's CPU for gzip producers by ten
 * (broker/README.md). Returns a Kafka error code for records that do not
 * decode.
 */
static int16_t fix_max_timestamp(const struct br_validation *v, struct br_validated *out)
{
    struct kp_batch_header *h = &out->h;
    if (kp_batch_codec(h) != KP_CODEC_NONE && h->MaxTimestamp >= h->BaseTimestamp) {
        return KP_ERR_NONE;
    }
    int64_t max_ts = 0;
    int err = kp_batch_records_max_timestamp(out->batch, out->size, v->request_max_bytes, &max_ts);
    if (err != 0) {
        br_debug("produce from %s refused: records: %s", v->from, kp_err_str(err));
        return err == KP_E_TOO_LARGE ? KP_ERR_MESSAGE_TOO_LARGE : KP_ERR_INVALID_RECORD;
    }
    if (max_ts != h->MaxTimestamp) {
        if (kp_batch_set_max_timestamp(out->batch, out->size, max_ts) != 0) {
            return KP_ERR_CORRUPT_MESSAGE;
        }
        h->MaxTimestamp = max_ts;
    }
    return KP_ERR_NONE;
}

int16_t br_log_validate(uint8_t *records, size_t len, const struct br_validation *v,
                        struct br_validated *out)
{
    out->batch = NULL;
    out->size = 0;
    out->owned = NULL;
    if (len == 0) {
        return KP_ERR_INVALID_RECORD;
    }
    if (len > (size_t)v->max_message_bytes) {
        return KP_ERR_MESSAGE_TOO_LARGE;
    }
    bool converted = false;
    /* v0-v2 may carry a message set (its magic byte sits where a batch
     * keeps its own); Kafka 2.0 does not check which format a version
     * carries below v3 (ProduceRequest.validateRecords) */
    if (v->produce_version < 3 && (len <= 16 || records[16] != KP_BATCH_MAGIC)) {
        int16_t code = upconvert(records, len, v, out);
        if (code != KP_ERR_NONE) {
            return code;
        }
        converted = true;
    } else {
        int err = kp_batch_parse(records, len, &out->h, &out->size);
        if (err != 0 || out->size != len) {
            /* exactly one RecordBatch of magic 2 per partition */
            br_debug("produce from %s rejected: %s", v->from,
                     err != 0 ? kp_err_str(err) : "more than one batch");
            return err == KP_E_CRC ? KP_ERR_CORRUPT_MESSAGE : KP_ERR_INVALID_RECORD;
        }
        out->batch = records;
    }
    const struct kp_batch_header *h = &out->h;
    if (kp_batch_codec(h) > KP_CODEC_ZSTD) {
        return KP_ERR_INVALID_RECORD;
    }
    if (kp_batch_codec(h) == KP_CODEC_ZSTD && v->produce_version < 7) {
        return KP_ERR_UNSUPPORTED_COMPRESSION_TYPE;
    }
    if (kp_batch_is_control(h)) {
        /* LogValidator: "Clients are not allowed to write control records" */
        br_debug("produce from %s rejected: a control batch", v->from);
        return KP_ERR_INVALID_RECORD;
    }
    if (kp_batch_is_transactional(h) && (!v->transactional || h->ProducerId < 0)) {
        /* a transaction's batch comes with its transactional id and its
         * producer id (ProduceRequest.validateRecords) */
        br_debug("produce from %s rejected: a transactional batch %s", v->from,
                 v->transactional ? "without a producer id" : "without a transactional id");
        return KP_ERR_INVALID_RECORD;
    }
    if (h->ProducerId >= 0 && h->BaseSequence < 0) {
        return KP_ERR_INVALID_RECORD;
    }
    if (v->log_append_time) {
        if (kp_batch_set_log_append_time(out->batch, out->size, v->now_ms) != 0) {
            return KP_ERR_CORRUPT_MESSAGE;
        }
        return KP_ERR_NONE;
    }
    return converted ? KP_ERR_NONE : fix_max_timestamp(v, out);
}
