/* samsa-broker: retention (see retention.h). */
#define _GNU_SOURCE

#include "storage/retention.h"

#include "base/logging.h"

#include <inttypes.h>

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

int br_retention_apply(struct br_log *log, bool by_time_and_size, int64_t retention_ms,
                       int64_t retention_bytes, int64_t hw, int64_t now_ms, size_t *deleted)
{
    if (deleted != NULL) {
        *deleted = 0;
    }
    int64_t upto = br_log_start_offset(log);
    size_t by_time = 0;
    size_t by_size = 0;
    if (by_time_and_size) {
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
