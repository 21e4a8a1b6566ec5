/* samsa-broker: the partition (see partition.h). */
#define _POSIX_C_SOURCE 200809L

#include "replica/partition.h"

#include "base/fileref.h"
#include "base/logging.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/control.h>
#include <samsa-protocol/record_batch.h>

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

static void hw_set(struct br_partition *p, int64_t hw)
{
    if (hw > p->hw) {
        p->hw = hw;
        /* what parked consumers count: the bytes below the new mark are
         * not known one by one; taking them all wakes a parked fetch at
         * worst early, and it returns what it finds */
        p->hw_bytes = p->leo_bytes;
        if (p->waiters != NULL) {
            br_purgatory_wake(p->waiters, &p->delayed);
        }
    }
}

bool br_partition_in_isr(const struct br_partition *p, int32_t broker)
{
    for (int32_t i = 0; i < p->nisr; i++) {
        if (p->isr[i] == broker) {
            return true;
        }
    }
    return false;
}

void br_partition_advance_hw(struct br_partition *p, int64_t now_ms)
{
    int64_t hw = br_log_end_offset(p->log);
    for (int32_t i = 0; i < p->nremotes; i++) {
        const struct br_remote_replica *r = &p->remotes[i];
        bool counts = br_partition_in_isr(p, r->broker) ||
                      (p->isr_writing && r->broker == p->isr_joining) ||
                      now_ms - r->last_caught_up_ms <= p->lag_max_ms;
        if (!counts) {
            continue;
        }
        if (r->leo < 0) {
            return; /* an ISR member the new leader has not heard from yet */
        }
        if (r->leo < hw) {
            hw = r->leo;
        }
    }
    hw_set(p, hw);
}

/* Standalone, or an ISR of one: the high watermark follows the log end. */
static void hw_update(struct br_partition *p, int64_t now_ms)
{
    if (p->nremotes == 0) {
        hw_set(p, br_log_end_offset(p->log));
        return;
    }
    br_partition_advance_hw(p, now_ms);
}

void br_partition_become_leader(struct br_partition *p, struct br_purgatory *waiters)
{
    p->waiters = waiters;
    if (p->role != BR_ROLE_LEADER) {
        p->leader_term++;
    }
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

static int copy_ids(int32_t **dst, int32_t *n, const int32_t *src, int32_t count)
{
    int32_t *c = kp_calloc(count > 0 ? (size_t)count : 1, sizeof *c);
    if (c == NULL) {
        return KP_E_NOMEM;
    }
    if (count > 0) {
        memcpy(c, src, (size_t)count * sizeof *c);
    }
    kp_free(*dst);
    *dst = c;
    *n = count;
    return 0;
}

int br_partition_take_leadership(struct br_partition *p, int32_t me, const struct br_leadership *s,
                                 int64_t now_ms, int64_t lag_max_ms)
{
    int32_t nremotes = 0;
    struct br_remote_replica *remotes =
        kp_calloc(s->nassigned > 0 ? (size_t)s->nassigned : 1, sizeof *remotes);
    if (remotes == NULL) {
        return KP_E_NOMEM;
    }
    if (copy_ids(&p->assigned, &p->nassigned, s->assigned, s->nassigned) != 0 ||
        copy_ids(&p->isr, &p->nisr, s->isr, s->nisr) != 0) {
        kp_free(remotes);
        return KP_E_NOMEM;
    }
    bool was_leader = p->role == BR_ROLE_LEADER && p->leader_id == me;
    p->leader_epoch = s->leader_epoch;
    p->controller_epoch = s->controller_epoch;
    p->zk_version = s->zk_version;
    p->leader_id = s->leader;
    p->lag_max_ms = lag_max_ms;
    p->isr_writing = false;
    p->isr_joining = -1;
    p->superseded = false;
    p->fenced = false; /* the controller said what it is */
    if (s->leader != me) {
        kp_free(remotes);
        kp_free(p->remotes);
        p->remotes = NULL;
        p->nremotes = 0;
        p->role = BR_ROLE_FOLLOWER;
        /* KIP-101/279: before it fetches, a follower asks its leader where
         * its latest epoch ends and truncates there (each new epoch: Kafka
         * 2.0.1's KAFKA-7164) */
        p->truncating = true;
        return 0;
    }
    p->truncating = false;
    int64_t leo = br_log_end_offset(p->log);
    for (int32_t i = 0; i < s->nassigned; i++) {
        if (s->assigned[i] == me) {
            continue;
        }
        struct br_remote_replica *r = &remotes[nremotes++];
        r->broker = s->assigned[i];
        /* Kafka's makeLeader: every follower's LEO unknown; those in the
         * ISR caught up as of now, the others never */
        r->leo = -1;
        r->last_caught_up_ms = br_partition_in_isr(p, r->broker) ? now_ms : 0;
        r->last_fetch_leader_leo = leo;
        r->last_fetch_ms = now_ms;
    }
    kp_free(p->remotes);
    p->remotes = remotes;
    p->nremotes = nremotes;
    p->role = BR_ROLE_LEADER;
    if (!was_leader) {
        p->epoch_start_offset = leo;
        p->leader_term++;
    }
    /* the new epoch starts at the log end now, not at the first append
     * (Kafka 2.0.1's KAFKA-7415): a follower asking where its latest epoch
     * ends is answered right even before anything is appended in it */
    if (br_log_latest_epoch(p->log) < s->leader_epoch &&
        br_log_epoch_assign_deferred(p->log, s->leader_epoch, leo) != 0) {
        br_warn("%s (partition %" PRId32 "): leader epoch %" PRId32 " not recorded at %" PRId64,
                br_log_dir(p->log), p->index, s->leader_epoch, leo);
    }
    hw_update(p, now_ms);
    return 0;
}

bool br_partition_follower_fetched(struct br_partition *p, int32_t broker, int64_t fetch_offset,
                                   int64_t now_ms)
{
    for (int32_t i = 0; i < p->nremotes; i++) {
        struct br_remote_replica *r = &p->remotes[i];
        if (r->broker != broker) {
            continue;
        }
        int64_t leo = br_log_end_offset(p->log);
        /* the latest time its fetch offset was at the leader's LEO: this
         * fetch's, or the previous fetch's when it reached the LEO then */
        if (fetch_offset >= leo) {
            r->last_caught_up_ms = now_ms > r->last_caught_up_ms ? now_ms : r->last_caught_up_ms;
        } else if (fetch_offset >= r->last_fetch_leader_leo &&
                   r->last_fetch_ms > r->last_caught_up_ms) {
            r->last_caught_up_ms = r->last_fetch_ms;
        }
        r->leo = fetch_offset;
        r->last_fetch_leader_leo = leo;
        r->last_fetch_ms = now_ms;
        br_partition_advance_hw(p, now_ms);
        return true;
    }
    return false;
}

bool br_partition_isr_candidate(const struct br_partition *p, int32_t broker)
{
    for (int32_t i = 0; i < p->nremotes; i++) {
        const struct br_remote_replica *r = &p->remotes[i];
        if (r->broker == broker) {
            return !br_partition_in_isr(p, broker) && r->leo >= p->hw &&
                   r->leo >= p->epoch_start_offset;
        }
    }
    return false;
}

void br_partition_isr_change_begin(struct br_partition *p, int32_t joining)
{
    p->isr_writing = true;
    p->isr_joining = joining;
}

void br_partition_isr_change_end(struct br_partition *p, int64_t now_ms)
{
    p->isr_writing = false;
    p->isr_joining = -1;
    if (p->role == BR_ROLE_LEADER && p->log != NULL) {
        hw_update(p, now_ms); /* without the joining replica it may move */
    }
}

/* This term is over: what waits on the partition is answered now
 * (appends waiting for the ISR learn it). */
static void end_term(struct br_partition *p)
{
    p->leader_term++;
    if (p->waiters != NULL) {
        br_purgatory_complete_key(p->waiters, &p->delayed);
    }
}

int16_t br_partition_check_acks(const struct br_partition *p, int16_t acks, int32_t min_insync)
{
    /* a standalone broker's partition has no replication state: its ISR
     * is itself */
    if (acks == -1 && p->nassigned > 0 && p->nisr < min_insync) {
        return KP_ERR_NOT_ENOUGH_REPLICAS;
    }
    return KP_ERR_NONE;
}

bool br_partition_append_settled(const struct br_partition *p, int64_t required, uint32_t term)
{
    return p->role != BR_ROLE_LEADER || p->leader_term != term || p->hw >= required;
}

int16_t br_partition_append_outcome(const struct br_partition *p, int64_t required, uint32_t term,
                                    int32_t min_insync)
{
    if (p->role != BR_ROLE_LEADER || p->leader_term != term) {
        return KP_ERR_NOT_LEADER_OR_FOLLOWER;
    }
    if (p->hw >= required) {
        return br_partition_check_acks(p, -1, min_insync) != 0
                   ? KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND
                   : KP_ERR_NONE;
    }
    return KP_ERR_REQUEST_TIMED_OUT;
}

void br_partition_supersede(struct br_partition *p)
{
    p->fenced = true;
    p->superseded = true;
    end_term(p);
}

void br_partition_fence(struct br_partition *p)
{
    p->fenced = true;
    end_term(p);
}

bool br_partition_unfence(struct br_partition *p)
{
    if (!p->fenced || p->superseded) {
        return false;
    }
    p->fenced = false;
    return true;
}

void br_partition_init(struct br_partition *p, struct br_topic *t, int32_t index,
                       struct br_purgatory *waiters)
{
    memset(p, 0, sizeof *p);
    p->topic = t;
    p->index = index;
    p->waiters = waiters;
}

void br_partition_attach_log(struct br_partition *p, struct br_topic *t, int32_t index,
                             struct br_log *log)
{
    p->topic = t;
    p->index = index;
    p->log = log;
}

void br_partition_host_replica(struct br_partition *p, int64_t checkpointed_hw)
{
    p->role = BR_ROLE_NONE;
    int64_t leo = br_log_end_offset(p->log);
    p->hw = checkpointed_hw < leo ? checkpointed_hw : leo;
    p->hw_bytes = p->leo_bytes;
}

void br_partition_close(struct br_partition *p, struct br_log_manager *logs)
{
    if (p->waiters != NULL) {
        /* parked fetches on this partition are answered now */
        br_purgatory_complete_key(p->waiters, &p->delayed);
    }
    br_producers_free(&p->producers);
    br_txn_state_free(&p->txns);
    br_partition_free_replication(p);
    br_logm_remove(logs, p->managed);
    p->managed = NULL;
    br_log_close(p->log);
    p->log = NULL;
}

int br_partition_truncate_to(struct br_partition *p, int64_t to)
{
    int rc = br_log_truncate_to(p->log, to);
    br_partition_reload_producers(p);
    if (rc == 0 && p->hw > to) {
        p->hw = to;
    }
    return rc;
}

int br_partition_restart_at(struct br_partition *p, int64_t start)
{
    int rc = br_log_truncate_fully_and_start_at(p->log, start);
    br_partition_reload_producers(p);
    if (rc == 0 && p->hw > start) {
        p->hw = start;
    }
    return rc;
}

int br_partition_follow_log_start(struct br_partition *p, int64_t start)
{
    if (start <= br_log_start_offset(p->log) || start > br_log_end_offset(p->log)) {
        return 0;
    }
    int rc = br_log_set_start_offset(p->log, start);
    return rc != 0 ? rc : br_log_delete_segments_before(p->log, start, NULL);
}

void br_partition_epoch_agreed(struct br_partition *p, bool agreed)
{
    p->truncating = !agreed;
}

int32_t br_partition_out_of_sync(const struct br_partition *p, int64_t now_ms, int32_t *out)
{
    int32_t n = 0;
    for (int32_t i = 0; i < p->nremotes; i++) {
        const struct br_remote_replica *r = &p->remotes[i];
        if (br_partition_in_isr(p, r->broker) && now_ms - r->last_caught_up_ms > p->lag_max_ms) {
            out[n++] = r->broker;
        }
    }
    return n;
}

int br_partition_set_isr(struct br_partition *p, const int32_t *isr, int32_t n, int32_t zk_version,
                         int64_t now_ms)
{
    if (copy_ids(&p->isr, &p->nisr, isr, n) != 0) {
        return KP_E_NOMEM;
    }
    p->zk_version = zk_version;
    if (p->role == BR_ROLE_LEADER) {
        hw_update(p, now_ms); /* a smaller ISR may let it move */
    }
    return 0;
}

void br_partition_follower_hw(struct br_partition *p, int64_t leader_hw)
{
    int64_t leo = br_log_end_offset(p->log);
    int64_t hw = leader_hw < leo ? leader_hw : leo;
    /* a follower's mark follows its leader's, even down after a truncation */
    if (hw != p->hw) {
        p->hw = hw;
        p->hw_bytes = p->leo_bytes;
    }
}

void br_partition_free_replication(struct br_partition *p)
{
    kp_free(p->assigned);
    kp_free(p->isr);
    kp_free(p->remotes);
    p->assigned = NULL;
    p->isr = NULL;
    p->remotes = NULL;
    p->nassigned = p->nisr = p->nremotes = 0;
}

/* What the producer state is told of a batch at first_offset. */
static struct br_producer_append producer_append(const struct kp_batch_header *h,
                                                 int64_t first_offset)
{
    return (struct br_producer_append){
        .transactional = (h->Attributes & KP_BATCH_ATTR_TRANSACTIONAL) != 0,
        .producer_id = h->ProducerId,
        .epoch = h->ProducerEpoch,
        .first_seq = h->BaseSequence,
        .last_seq = br_seq_add(h->BaseSequence, h->LastOffsetDelta),
        .first_offset = first_offset,
        .offset_delta = h->LastOffsetDelta,
        .timestamp = h->MaxTimestamp,
    };
}

/*
 * Kafka's ProducerStateManager.takeSnapshot: the producers' state as of
 * offset (every batch below it, none at or above it) to
 * <offset>.snapshot, unless a snapshot at or past it was taken; written
 * off this thread by the log manager.
 */
static void take_snapshot(struct br_partition *p, int64_t offset)
{
    if (offset <= p->producers.snap_offset) {
        return;
    }
    struct br_psnap_entry *e = NULL;
    size_t n = 0;
    if (br_producers_to_snapshot(&p->producers, br_log_start_offset(p->log), &e, &n) != 0) {
        br_warn("%s: out of memory taking a producer snapshot", br_log_dir(p->log));
        return;
    }
    p->producers.snap_offset = offset;
    br_logm_snapshot(p->managed, br_log_dir(p->log), offset, e, n,
                     br_log_snapshot_keep_from(p->log));
}

/* After an append that began in the segment at seg_before: a roll takes a
 * snapshot at the new segment's base offset, with the state before the
 * batch that rolled it (Kafka's Log.roll), so that a segment's recovery
 * starts from the snapshot at its base. */
static void snapshot_if_rolled(struct br_partition *p, int64_t seg_before)
{
    int64_t seg = br_log_active_base_offset(p->log);
    if (seg != seg_before) {
        take_snapshot(p, seg);
    }
}

static void record_producer(struct br_partition *p, const struct br_producer_append *a,
                            int64_t now_ms)
{
    if (br_producers_record(&p->producers, a, now_ms, BR_PARTITION_MAX_PRODUCERS) != 0) {
        br_warn("out of memory recording producer %" PRId64, a->producer_id);
    }
}

static void appended(struct br_partition *p, int64_t seg_before, int64_t len)
{
    snapshot_if_rolled(p, seg_before);
    p->leo_bytes += len;
    if (p->nremotes > 0 && p->waiters != NULL) {
        /* followers parked on it count the bytes (without followers the
         * high watermark's move wakes whoever waits) */
        br_purgatory_wake(p->waiters, &p->delayed);
    }
}

/* ---------------------------------------------------------- transactions */

/* a marker batch is one small record: anything this large is no marker */
#define MAX_MARKER_BATCH 4096

/* Kafka's completeTxn and updateTxnIndex: the transaction waits for the
 * high watermark to pass its marker; an ABORT is indexed in the segment
 * the marker is in, the active one (a roll comes before the batch that
 * causes it). */
static void complete_txn(struct br_partition *p, const struct br_txn_span *done, bool commit)
{
    br_txn_state_complete(&p->txns, &p->producers, done, commit, p->hw, br_log_dir(p->log),
                          br_log_active_base_offset(p->log));
}

int64_t br_partition_lso(struct br_partition *p)
{
    return br_txn_state_lso(&p->txns, &p->producers, p->hw);
}

static void txn_control(struct br_partition *p, const uint8_t *batch, size_t len,
                              int64_t now_ms)
{
    struct kp_batch_header h;
    size_t size = 0;
    if (kp_batch_peek(batch, len, &h, &size) != 0 ||
        (h.Attributes & KP_BATCH_ATTR_CONTROL) == 0 || h.ProducerId < 0) {
        return;
    }
    struct kp_txn_marker m;
    int err = kp_txn_marker_batch_read(batch, size, MAX_MARKER_BATCH, &m);
    if (err != 0) {
        br_warn("%s: the control batch at %" PRId64 " is no transaction marker (%s): ignored",
                br_log_dir(p->log), h.BaseOffset, kp_err_str(err));
        return;
    }
    struct br_txn_span done;
    if (br_producers_end_txn(&p->producers, h.ProducerId, h.ProducerEpoch, m.coordinator_epoch,
                             h.BaseOffset, now_ms, &done) != 0) {
        br_error("%s: out of memory ending producer %" PRId64 "'s transaction", br_log_dir(p->log),
                 h.ProducerId);
        return;
    }
    complete_txn(p, &done, m.type == KP_CONTROL_COMMIT);
}

/* The bytes of the batch whose header h the log's replay read. 0 with
 * *out (kp_free), or an error. */
static int read_batch(struct br_partition *p, const struct kp_batch_header *h, uint8_t **out,
                      size_t *len)
{
    size_t size = (size_t)KP_BATCH_LOG_OVERHEAD + (size_t)(uint32_t)h->BatchLength;
    if (size > MAX_MARKER_BATCH) {
        return KP_E_CORRUPT;
    }
    struct br_log_slice sl;
    int err = br_log_read(p->log, h->BaseOffset, h->BaseOffset + h->LastOffsetDelta + 1,
                          (int32_t)size, true, &sl);
    if (err != 0) {
        return err;
    }
    if (sl.len <= 0 || (size_t)sl.len < size) {
        br_log_slice_release(&sl);
        return KP_E_CORRUPT;
    }
    uint8_t *buf = kp_malloc(size);
    if (buf == NULL) {
        br_log_slice_release(&sl);
        return KP_E_NOMEM;
    }
    ssize_t r = pread(br_fileref_fd(sl.file), buf, size, (off_t)sl.file_pos);
    br_log_slice_release(&sl);
    if (r != (ssize_t)size) {
        kp_free(buf);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    *out = buf;
    *len = size;
    return 0;
}

static void txn_replay(struct br_partition *p, const struct kp_batch_header *h)
{
    uint8_t *batch = NULL;
    size_t len = 0;
    int err = read_batch(p, h, &batch, &len);
    if (err != 0) {
        br_warn("%s: the control batch at %" PRId64 " could not be read (%s): ignored",
                br_log_dir(p->log), h->BaseOffset, kp_err_str(err));
        return;
    }
    txn_control(p, batch, len, h->MaxTimestamp);
    kp_free(batch);
}

int br_partition_append_marker(struct br_partition *p, int64_t producer_id, int16_t epoch,
                               int32_t coordinator_epoch, bool commit, int64_t now_ms,
                               int16_t *kafka_err, int64_t *offset)
{
    *offset = -1;
    *kafka_err = br_producers_check_marker(&p->producers, producer_id, epoch, coordinator_epoch);
    if (*kafka_err != KP_ERR_NONE) {
        return 0;
    }
    uint8_t buf[KP_TXN_MARKER_BATCH_SIZE + 16];
    struct kp_writer w;
    kp_wr_init_fixed(&w, buf, sizeof buf);
    struct kp_txn_marker m = {commit ? KP_CONTROL_COMMIT : KP_CONTROL_ABORT, coordinator_epoch};
    int err = kp_txn_marker_batch_write(&w, 0, p->leader_epoch, now_ms, producer_id, epoch, &m);
    if (err != 0) {
        return err;
    }
    int64_t seg_before = br_log_active_base_offset(p->log);
    err = br_log_append(p->log, buf, w.len, p->leader_epoch, now_ms, offset);
    if (err != 0) {
        return err;
    }
    appended(p, seg_before, (int64_t)w.len);
    struct br_txn_span done;
    if (br_producers_end_txn(&p->producers, producer_id, epoch, coordinator_epoch, *offset, now_ms,
                             &done) != 0) {
        br_error("%s: out of memory ending producer %" PRId64 "'s transaction", br_log_dir(p->log),
                 producer_id);
    } else {
        complete_txn(p, &done, commit);
    }
    hw_update(p, now_ms);
    return 0;
}

size_t br_partition_aborted_txns(const struct br_partition *p, int64_t fetch_offset, int64_t upper,
                                 struct br_aborted_txn *out, size_t cap)
{
    return br_txn_state_aborted(&p->txns, fetch_offset, upper, out, cap);
}


int br_partition_append_leader(struct br_partition *p, uint8_t *batch, size_t len, int64_t now_ms,
                               struct br_append *out)
{
    *out = (struct br_append){.base = -1};
    struct kp_batch_header h;
    size_t size = 0;
    bool sequenced =
        kp_batch_peek(batch, len, &h, &size) == 0 && h.ProducerId >= 0 && h.BaseSequence >= 0;
    struct br_producer_append pa = {0};
    if (sequenced) {
        int64_t dup = -1;
        int kerr = 0;
        pa = producer_append(&h, -1);
        enum br_seq_verdict v =
            br_producers_check(&p->producers, br_log_start_offset(p->log), &pa, &dup, &kerr);
        if (v == BR_SEQ_DUPLICATE) {
            out->base = dup;
            out->duplicate = true;
            return 0;
        }
        if (v == BR_SEQ_ERROR) {
            out->seq_error = (int16_t)kerr;
            return 0;
        }
        out->seq_error = br_producers_check_txn(&p->producers, &pa);
        if (out->seq_error != KP_ERR_NONE) {
            return 0;
        }
    }
    int64_t seg_before = br_log_active_base_offset(p->log);
    int err = br_log_append(p->log, batch, len, p->leader_epoch, now_ms, &out->base);
    if (err != 0) {
        return err;
    }
    appended(p, seg_before, (int64_t)len);
    if (sequenced) {
        pa.first_offset = out->base;
        record_producer(p, &pa, now_ms);
    }
    hw_update(p, now_ms);
    return 0;
}




int br_partition_append_follower(struct br_partition *p, const uint8_t *batch, size_t len,
                                 int64_t now_ms)
{
    int64_t seg_before = br_log_active_base_offset(p->log);
    int err = br_log_append_replica(p->log, batch, len, now_ms);
    if (err != 0) {
        return err;
    }
    snapshot_if_rolled(p, seg_before);
    struct kp_batch_header h;
    size_t size = 0;
    if (kp_batch_peek(batch, len, &h, &size) == 0 && h.ProducerId >= 0) {
        if (h.BaseSequence >= 0) {
            struct br_producer_append pa = producer_append(&h, h.BaseOffset);
            record_producer(p, &pa, now_ms);
        } else if ((h.Attributes & KP_BATCH_ATTR_CONTROL) != 0) {
            /* a marker: the follower keeps the same transactions as its
             * leader (Kafka's appendAsFollower updates the producer state) */
            txn_control(p, batch, len, now_ms);
        }
    }
    p->leo_bytes += (int64_t)len;
    return 0;
}

void br_partition_reload_producers(struct br_partition *p)
{
    (void)br_partition_load_producers(p);
}

void br_partition_snapshot_producers(struct br_partition *p)
{
    if (p->log != NULL) {
        take_snapshot(p, br_log_end_offset(p->log));
    }
}

int64_t br_partition_load_producers(struct br_partition *p)
{
    br_producers_free(&p->producers);
    const char *dir = br_log_dir(p->log);
    int64_t leo = br_log_end_offset(p->log);
    int64_t start = br_log_start_offset(p->log);
    /* Kafka's truncateAndReload: snapshots past the log end describe
     * batches the log no longer has (a truncation), and those below its
     * start producers it no longer has; those still being written past the
     * end are not, then those written are deleted */
    br_logm_snapshots_cancel_above(p->managed, leo);
    (void)br_psnap_delete_outside(dir, start, leo);
    /* the aborted transactions from the `.txnindex` files; the replay
     * below restores those a crash took from them */
    br_txn_state_load(&p->txns, dir, start, leo);
    int64_t max_id = -1;
    int64_t snap = -1;
    struct br_psnap_entry *e = NULL;
    size_t n = 0;
    if (br_psnap_load_latest(dir, start, leo, &snap, &e, &n) != 0 ||
        br_producers_load_snapshot(&p->producers, e, n, start, BR_PARTITION_MAX_PRODUCERS) != 0) {
        br_warn("%s: out of memory loading a producer snapshot: the state comes from the log", dir);
        br_producers_free(&p->producers);
        snap = -1;
    }
    for (size_t i = 0; i < n; i++) {
        max_id = e[i].producer_id > max_id ? e[i].producer_id : max_id;
    }
    kp_free(e);
    /* the log after the snapshot, or the whole log without one (Kafka's
     * rebuildProducerState), recorded as a follower's batches are */
    int64_t from = snap > start ? snap : start;
    if (snap >= 0) {
        p->producers.snap_offset = snap;
    }
    struct br_log_iter *it = NULL;
    if (from >= leo || br_log_iter_open(p->log, from, &it) != 0) {
        return max_id;
    }
    struct kp_batch_header h;
    while (br_log_iter_next(it, &h) == 0) {
        if (h.ProducerId > max_id) {
            max_id = h.ProducerId;
        }
        if (h.ProducerId >= 0 && h.BaseSequence >= 0 && h.BaseOffset + h.LastOffsetDelta >= from) {
            struct br_producer_append pa = producer_append(&h, h.BaseOffset);
            if (br_producers_record(&p->producers, &pa, h.MaxTimestamp,
                                    BR_PARTITION_MAX_PRODUCERS) != 0) {
                br_warn("%s: out of memory loading producer %" PRId64, dir, h.ProducerId);
            }
        } else if (h.ProducerId >= 0 && (h.Attributes & KP_BATCH_ATTR_CONTROL) != 0 &&
                   h.BaseOffset >= from) {
            txn_replay(p, &h);
        }
    }
    br_log_iter_close(it);
    return max_id;
}
