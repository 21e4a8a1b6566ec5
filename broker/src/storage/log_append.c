/* samsa-broker: a log's appends, leader and replica, and segment rolls
 * (see log.h). */
#define _GNU_SOURCE

#include "storage/log_internal.h"

#include "base/logging.h"

#include <inttypes.h>

/* ------------------------------------------------------------- append */

int log_roll(struct br_log *log)
{
    struct br_segment *old = log_active(log);
    int rc = br_segment_seal(old, log->dir);
    if (rc != 0) {
        log->failed = true;
        return rc;
    }
    struct br_segment *s = NULL;
    rc = log_dir_hold(log);
    if (rc != 0) {
        return rc;
    }
    rc = br_segment_create(log->dir_fd, log->dir, log->leo, log->files, &s);
    if (rc == 0) {
        rc = log_push_segment(log, s);
        if (rc != 0) {
            br_segment_free(s);
            if (br_segment_unlink(log->dir_fd, log->dir, log->leo) != 0) {
                log->failed = true;
            }
        }
    }
    log_dir_release(log);
    if (rc != 0) {
        return rc;
    }
    log->dir_changes++;
    log->rolled = true; /* the segment it closed is flushed next, as Kafka's Log.roll asks */
    br_info("%s: rolled new segment %020" PRId64 ".log after %" PRId64 " bytes", log->dir, log->leo,
            old->size);
    return 0;
}

static int maybe_roll(struct br_log *log, size_t len, int64_t last_offset, int64_t now_ms)
{
    struct br_segment *a = log_active(log);
    if (a->size == 0) {
        return 0;
    }
    if (a->first_append_ms > now_ms) {
        a->first_append_ms = now_ms; /* a timestamp from the future: count from now */
    }
    bool full_bytes = a->size > log->cfg.segment_bytes - (int64_t)len;
    bool full_time = a->first_append_ms >= 0 && now_ms - a->first_append_ms > log->cfg.segment_ms;
    bool full_index = br_segment_index_full(a, log->cfg.max_index_bytes);
    bool full_offsets = last_offset - a->base_offset > INT32_MAX;
    bool full_positions = a->size > INT32_MAX - (int64_t)len;
    if (!(full_bytes || full_time || full_index || full_offsets || full_positions)) {
        return 0;
    }
    return log_roll(log);
}

/* Checks that batch[0..len) is one batch; its header into *h. */
static int check_batch(const uint8_t *batch, size_t len, struct kp_batch_header *h)
{
    size_t size = 0;
    if (batch == NULL || len < KP_BATCH_HEADER_SIZE || len > INT32_MAX) {
        return KP_E_INVALID_ARG;
    }
    if (kp_batch_peek(batch, len, h, &size) != 0 || size != len || h->LastOffsetDelta < 0) {
        return KP_E_INVALID_ARG;
    }
    return 0;
}

static int write_batch(struct br_log *log, const uint8_t *batch, size_t len, int64_t base,
                       int64_t last, int64_t max_timestamp, int32_t epoch, int64_t now_ms)
{
    struct br_segment *a = log_active(log);
    int rc = br_segment_append(a, log->dir, batch, len, last, max_timestamp,
                               log->cfg.index_interval_bytes);
    if (a->io_failed) {
        log->failed = true;
    }
    if (rc != 0) {
        return rc;
    }
    if (a->first_append_ms < 0) {
        a->first_append_ms = now_ms;
    }
    log->leo = last + 1;
    log->size_bytes += (int64_t)len;
    if (log->first_unflushed_ms < 0) {
        log->first_unflushed_ms = now_ms;
    }
    if (epoch >= 0) {
        int r = br_leader_epochs_assign(&log->epochs, epoch, base);
        if (r == 1) {
            /* written by the flush that makes this batch durable: until
             * then a start recovers the segment and finds the epoch in it */
            log->epochs_unsaved = true;
        } else if (r < 0) {
            br_error("%s: leader epoch %d at offset %" PRId64 " not recorded: %s", log->dir,
                     (int)epoch, base, kp_err_name(r));
        }
    }
    log->wb_appended += (int64_t)len;
    log_wb_tell_due(log);
    if (log->leo - log->recovery_point >= log->cfg.flush_interval_messages) {
        return br_log_flush(log);
    }
    return 0;
}

int br_log_append(struct br_log *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                  int64_t now_ms, int64_t *base_offset)
{
    struct kp_batch_header h;
    *base_offset = -1;
    if (log->failed) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = check_batch(batch, len, &h);
    if (rc != 0) {
        return rc;
    }
    int64_t base = log->leo;
    if (base > INT64_MAX - 1 - h.LastOffsetDelta) {
        return KP_E_INVALID_ARG;
    }
    int64_t last = base + h.LastOffsetDelta;
    rc = maybe_roll(log, len, last, now_ms);
    if (rc != 0) {
        return rc;
    }
    kp_batch_set_base_offset(batch, base);
    kp_batch_set_leader_epoch(batch, leader_epoch);
    rc = write_batch(log, batch, len, base, last, h.MaxTimestamp, leader_epoch, now_ms);
    if (rc == 0) {
        *base_offset = base;
    }
    return rc;
}

int br_log_append_replica(struct br_log *log, const uint8_t *batch, size_t len, int64_t now_ms)
{
    struct kp_batch_header h;
    if (log->failed) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = check_batch(batch, len, &h);
    if (rc != 0) {
        return rc;
    }
    if (h.BaseOffset < log->leo || h.BaseOffset > INT64_MAX - 1 - h.LastOffsetDelta) {
        return KP_E_INVALID_ARG;
    }
    int64_t last = h.BaseOffset + h.LastOffsetDelta;
    rc = maybe_roll(log, len, last, now_ms);
    if (rc != 0) {
        return rc;
    }
    if (last - log_active(log)->base_offset > INT32_MAX) {
        return KP_E_INVALID_ARG; /* a gap larger than a segment can span */
    }
    return write_batch(log, batch, len, h.BaseOffset, last, h.MaxTimestamp, h.PartitionLeaderEpoch,
                       now_ms);
}
