/*
 * samsa-broker: a partition's leader-epoch cache, the (epoch, start offset)
 * pairs behind OffsetsForLeaderEpoch (KIP-101, KIP-279), with Kafka's
 * LeaderEpochFileCache semantics. Persisting it (leader-epoch-checkpoint) is
 * the log's job; this is the in-memory sequence only.
 *
 * Invariant: epochs strictly increase, start offsets never decrease.
 * @locality reactor thread (owned by one br_log)
 */
#ifndef SAMSA_BROKER_LEADER_EPOCH_H
#define SAMSA_BROKER_LEADER_EPOCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "storage/checkpoint.h"

/* Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET. */
#define BR_EPOCH_UNDEFINED (-1)
#define BR_EPOCH_OFFSET_UNDEFINED (-1)

struct br_leader_epochs {
    struct br_epoch_entry *v; /* owned */
    size_t n;
    size_t cap;
};

void br_leader_epochs_init(struct br_leader_epochs *c);
void br_leader_epochs_free(struct br_leader_epochs *c);

/* Replaces the contents with e[0..n), which must keep the invariant
 * (br_epoch_checkpoint_parse checks it): KP_E_INVALID_ARG otherwise. */
KP_MUST_CHECK int br_leader_epochs_set(struct br_leader_epochs *c, const struct br_epoch_entry *e,
                                       size_t n);

/*
 * Kafka's assign: a no-op when epoch is the latest and start_offset is not
 * below its start; otherwise entries with an epoch >= `epoch` or a start
 * offset >= start_offset are removed from the end and (epoch, start_offset)
 * is appended. Returns 1 when the cache changed, 0 when not, KP_E_NOMEM, or
 * KP_E_INVALID_ARG for a negative epoch or offset.
 */
KP_MUST_CHECK int br_leader_epochs_assign(struct br_leader_epochs *c, int32_t epoch,
                                          int64_t start_offset);

/* Removes entries starting at or after end_offset (log truncation). Returns
 * true when something was removed. */
bool br_leader_epochs_truncate_from_end(struct br_leader_epochs *c, int64_t end_offset);

/* Removes entries that start at or before start_offset except the last of
 * them, which now starts at start_offset (log start moved). True when the
 * cache changed. */
bool br_leader_epochs_truncate_from_start(struct br_leader_epochs *c, int64_t start_offset);

/* The latest epoch, BR_EPOCH_UNDEFINED when empty. */
int32_t br_leader_epochs_latest(const struct br_leader_epochs *c);

/*
 * OffsetsForLeaderEpoch for `epoch` on a log ending at leo:
 *   - epoch undefined (< 0), or above every known one: (-1, -1);
 *   - the latest epoch: (epoch, leo);
 *   - below the first known epoch: (epoch, start of the first epoch);
 *   - otherwise: (the largest known epoch <= epoch, start of the next
 *     known epoch after it).
 */
void br_leader_epochs_end_offset_for(const struct br_leader_epochs *c, int32_t epoch, int64_t leo,
                                     int32_t *epoch_out, int64_t *end_offset);

#endif
