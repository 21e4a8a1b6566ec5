/* samsa-broker: the partition (see partition.h). */
#include "replica/partition.h"

/* An ISR of one: the high watermark follows the log end at once. */
static void hw_update(struct br_partition *p)
{
    int64_t leo = br_log_end_offset(p->log);
    p->hw_bytes = p->leo_bytes;
    if (leo != p->hw) {
        p->hw = leo;
        if (p->ops != NULL) {
            p->ops->hw_moved(p->ops_ctx, p);
        }
    }
}

void br_partition_become_leader(struct br_partition *p, const struct br_partition_ops *ops,
                                void *ops_ctx)
{
    p->ops = ops;
    p->ops_ctx = ops_ctx;
    p->leader_epoch = br_log_latest_epoch(p->log);
    if (p->leader_epoch < 0) {
        p->leader_epoch = 0;
    }
    p->hw = br_log_end_offset(p->log);
}

int br_partition_append_leader(struct br_partition *p, uint8_t *batch, size_t len, int64_t now_ms,
                               int64_t *base)
{
    int err = br_log_append(p->log, batch, len, p->leader_epoch, now_ms, base);
    if (err != 0) {
        return err;
    }
    p->leo_bytes += (int64_t)len;
    hw_update(p);
    return 0;
}
