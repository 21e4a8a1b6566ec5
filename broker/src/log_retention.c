/* samsa-broker: the retention schedule and the log start checkpoints (see
 * log_retention.h). */
#define _GNU_SOURCE

#include "log_retention.h"

#include "base/logging.h"
#include "broker.h"
#include "storage/checkpoint.h"
#include "storage/retention.h"

#include <inttypes.h>

#define LOG_START_CHECKPOINT "log-start-offset-checkpoint"

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
            int rc = br_retention_apply(
                part->log, (t->config.cleanup_policy & BR_CLEANUP_DELETE) != 0,
                t->config.retention_ms, t->config.retention_bytes, part->hw, now, NULL);
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
