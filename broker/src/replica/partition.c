/* samsa-broker: the partition (see partition.h). */
#include "replica/partition.h"

#include "base/logging.h"

#include <samsa-protocol/record_batch.h>

#include <inttypes.h>

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
    p->role = BR_ROLE_LEADER;
    p->leader_epoch = br_log_latest_epoch(p->log);
    if (p->leader_epoch < 0) {
        p->leader_epoch = 0;
    }
    p->hw = br_log_end_offset(p->log);
}

void br_partition_become_follower(struct br_partition *p, int32_t leader_epoch)
{
    p->role = BR_ROLE_FOLLOWER;
    p->leader_epoch = leader_epoch;
}

void br_partition_set_leader_epoch(struct br_partition *p, int32_t leader_epoch)
{
    p->leader_epoch = leader_epoch;
}

int br_partition_append_leader(struct br_partition *p, uint8_t *batch, size_t len, int64_t now_ms,
                               struct br_append *out)
{
    *out = (struct br_append){.base = -1};
    struct kp_batch_header h;
    size_t size = 0;
    bool sequenced =
        kp_batch_peek(batch, len, &h, &size) == 0 && h.ProducerId >= 0 && h.BaseSequence >= 0;
    int32_t last_seq = 0;
    if (sequenced) {
        int64_t dup = -1;
        int kerr = 0;
        last_seq = br_seq_add(h.BaseSequence, h.LastOffsetDelta);
        enum br_seq_verdict v = br_producers_check(&p->producers, h.ProducerId, h.ProducerEpoch,
                                                   h.BaseSequence, last_seq, &dup, &kerr);
        if (v == BR_SEQ_DUPLICATE) {
            out->base = dup;
            out->duplicate = true;
            return 0;
        }
        if (v == BR_SEQ_ERROR) {
            out->seq_error = (int16_t)kerr;
            return 0;
        }
    }
    int err = br_log_append(p->log, batch, len, p->leader_epoch, now_ms, &out->base);
    if (err != 0) {
        return err;
    }
    if (sequenced &&
        br_producers_record(&p->producers, h.ProducerId, h.ProducerEpoch, h.BaseSequence, last_seq,
                            out->base, now_ms, BR_PARTITION_MAX_PRODUCERS) != 0) {
        br_warn("out of memory recording producer %" PRId64, h.ProducerId);
    }
    p->leo_bytes += (int64_t)len;
    hw_update(p);
    return 0;
}

int64_t br_partition_load_producers(struct br_partition *p)
{
    int64_t leo = br_log_end_offset(p->log);
    int64_t from = br_log_start_offset(p->log);
    if (leo - from > 100000) {
        from = leo - 100000;
    }
    int64_t max_id = -1;
    struct br_log_iter *it = NULL;
    if (from >= leo || br_log_iter_open(p->log, from, &it) != 0) {
        return max_id;
    }
    struct kp_batch_header h;
    while (br_log_iter_next(it, &h) == 0) {
        if (h.ProducerId > max_id) {
            max_id = h.ProducerId;
        }
        if (h.ProducerId >= 0 && h.BaseSequence >= 0) {
            (void)br_producers_record(&p->producers, h.ProducerId, h.ProducerEpoch, h.BaseSequence,
                                      br_seq_add(h.BaseSequence, h.LastOffsetDelta), h.BaseOffset,
                                      0, BR_PARTITION_MAX_PRODUCERS);
        }
    }
    br_log_iter_close(it);
    return max_id;
}
