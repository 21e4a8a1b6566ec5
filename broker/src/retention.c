/* samsa-broker: retention (see retention.h). */
#define _GNU_SOURCE

#include "retention.h"

#include "broker.h"
#include "checkpoint.h"
#include "logging.h"

#include <inttypes.h>
#include <stdio.h>

#define LOG_START_CHECKPOINT "log-start-offset-checkpoint"

/* The offset just past segment i: the next one's base, or the LEO. */
static int upper_bound(const struct br_log *log, size_t i, int64_t *upper)
{
    if (i + 1 >= br_log_segment_count(log)) {
        *upper = br_log_end_offset(log);
        return 0;
    }
    struct br_log_segment_info next;
    int rc = br_log_segment_info(log, i + 1, &next);
    *upper = next.base_offset;
    return rc;
}

/* Kafka's deletableSegments: the leading segments that `breached` accepts,
 * each below the high watermark, the active one only when not empty.
 * Starts at segment `from`; *count of them, *upto the end of the last. */
enum rule {
    RULE_TIME,
    RULE_SIZE,
};

static int deletable(const struct br_log *log, size_t from, enum rule rule, int64_t limit,
                     int64_t hw, int64_t now_ms, size_t *count, int64_t *upto)
{
    size_t n = br_log_segment_count(log);
    int64_t diff = 0;
    *count = 0;
    if (rule == RULE_SIZE) {
        diff = br_log_size_bytes(log) - limit;
        for (size_t i = 0; i < from; i++) {
            struct br_log_segment_info si;
            int rc = br_log_segment_info(log, i, &si);
            if (rc != 0) {
                return rc;
            }
            diff -= si.size_bytes;
        }
    }
    for (size_t i = from; i < n; i++) {
        struct br_log_segment_info si;
        int64_t upper = 0;
        int rc = br_log_segment_info(log, i, &si);
        if (rc == 0) {
            rc = upper_bound(log, i, &upper);
        }
        if (rc != 0) {
            return rc;
        }
        if ((si.active && si.size_bytes == 0) || hw < upper) {
            break;
        }
        bool breached = false;
        if (rule == RULE_TIME) {
            int64_t largest = si.max_timestamp >= 0 ? si.max_timestamp : si.last_modified_ms;
            breached = now_ms - largest > limit;
        } else if (diff - si.size_bytes >= 0) {
            diff -= si.size_bytes;
            breached = true;
        }
        if (!breached) {
            break;
        }
        (*count)++;
        *upto = upper;
    }
    return 0;
}

int br_retention_apply(struct br_log *log, unsigned cleanup_policy, int64_t retention_ms,
                       int64_t retention_bytes, int64_t hw, int64_t now_ms, size_t *deleted)
{
    if (deleted != NULL) {
        *deleted = 0;
    }
    int64_t upto = br_log_start_offset(log);
    size_t by_time = 0;
    size_t by_size = 0;
    if ((cleanup_policy & BR_CLEANUP_DELETE) != 0) {
        int rc = 0;
        if (retention_ms >= 0) {
            rc = deletable(log, 0, RULE_TIME, retention_ms, hw, now_ms, &by_time, &upto);
        }
        if (rc == 0 && retention_bytes >= 0) {
            rc = deletable(log, by_time, RULE_SIZE, retention_bytes, hw, now_ms, &by_size, &upto);
        }
        if (rc != 0) {
            return rc;
        }
    }
    if (upto < br_log_start_offset(log)) {
        upto = br_log_start_offset(log);
    }
    size_t n = 0;
    int rc = br_log_delete_segments_before(log, upto, &n);
    if (n > 0) {
        br_info("%s: retention deleted %zu segment(s) (%zu past retention.ms %" PRId64
                ", %zu past retention.bytes %" PRId64 "); log start offset %" PRId64,
                br_log_dir(log), n, by_time, retention_ms, by_size, retention_bytes,
                br_log_start_offset(log));
    }
    if (deleted != NULL) {
        *deleted = n;
    }
    return rc;
}

void br_retention_tick(struct br_broker *b, int64_t now_mono_ms)
{
    if (now_mono_ms - b->last_retention_ms < b->cfg.log_retention_check_interval_ms) {
        return;
    }
    b->last_retention_ms = now_mono_ms;
    int64_t now = br_now_wall_ms();
    for (size_t i = 0; i < b->ntopics; i++) {
        struct br_topic *t = b->topics[i];
        for (int32_t p = 0; p < t->npartitions; p++) {
            struct br_partition *part = &t->partitions[p];
            if (part->log == NULL) {
                continue;
            }
            int rc = br_retention_apply(part->log, t->config.cleanup_policy, t->config.retention_ms,
                                        t->config.retention_bytes, part->hw, now, NULL);
            if (rc != 0) {
                br_error("retention of %s-%" PRId32 " failed: %s", t->name, p, kp_err_name(rc));
            }
        }
    }
}

void br_retention_load_start_offsets(struct br_broker *b)
{
    for (size_t d = 0; d < b->cfg.n_log_dirs; d++) {
        struct br_checkpoint_entry *e = NULL;
        size_t n = 0;
        if (!br_broker_read_dir_checkpoint(b, d, LOG_START_CHECKPOINT,
                                           "log start offsets are the first segments' base "
                                           "offsets",
                                           &e, &n)) {
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            struct br_partition *p = br_broker_checkpoint_partition(b, &e[i], d);
            if (p == NULL || p->log == NULL || e[i].offset <= br_log_start_offset(p->log)) {
                continue;
            }
            const struct br_topic *t = p->topic;
            int64_t start = e[i].offset;
            if (start > br_log_end_offset(p->log)) {
                br_warn("%s-%" PRId32 ": checkpointed log start offset %" PRId64
                        " is past the log end %" PRId64 "; starting at the end",
                        t->name, e[i].partition, start, br_log_end_offset(p->log));
                start = br_log_end_offset(p->log);
            }
            if (br_log_set_start_offset(p->log, start) != 0 ||
                br_log_delete_segments_before(p->log, start, NULL) != 0) {
                br_error("%s-%" PRId32 ": cannot apply the log start offset %" PRId64, t->name,
                         e[i].partition, start);
                continue;
            }
            br_info("%s-%" PRId32 ": log start offset %" PRId64 " (from %s)", t->name,
                    e[i].partition, br_log_start_offset(p->log), LOG_START_CHECKPOINT);
        }
        br_checkpoint_free(e);
    }
}
