/*
 * samsa-broker: the group coordinator on the wire (Kafka's classic group
 * protocol). The coordinator itself, its state machine and committed
 * offsets, is the group layer (group/group.h); here are its handlers
 * (group_handlers.c, group_offsets.c), its ops (the broker's clocks,
 * reactor timers, the purgatory) and its way to __consumer_offsets: the
 * partition abs(java_hashcode(group)) % partitions, led here standalone.
 *
 * JoinGroup and SyncGroup park their response slot (struct br_park) until
 * the group moves on; the connection keeps its
 * responses in request order because a parked slot holds back the ones
 * behind it. A connection that dies cancels its parked requests
 * (br_groups_cancel_parked) but its members stay until their session
 * timeout, as in Kafka.
 *
 * @locality reactor thread: no locks anywhere.
 */
#ifndef SAMSA_BROKER_GROUP_H
#define SAMSA_BROKER_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "group/group.h"

#include <samsa-protocol/buf.h>

struct br_server;
struct br_req;
struct br_partition;

/*
 * Creates the coordinator (b->groups) and loads every committed offset and
 * group record from __consumer_offsets when the topic exists (it is created
 * on first use otherwise). Needs the topics loaded and b->net created.
 * Arms the offset expiry check. Returns 0, KP_E_NOMEM or
 * KP_ERR_KAFKA_STORAGE_ERROR (a partition of the topic could not be read).
 */
KP_MUST_CHECK int br_groups_start(struct br_server *b);

/* Answers parked requests (NOT_COORDINATOR), cancels the timers and frees
 * everything; b->groups becomes NULL. NULL groups are a no-op. */
void br_groups_stop(struct br_server *b);

/* Starts creating __consumer_offsets with its own settings
 * (offsets.topic.*, cleanup.policy=compact) when it is missing, as
 * FindCoordinator does: for paths that would otherwise create it as an
 * ordinary topic (Metadata's auto-creation). Returns 0 when it exists, or
 * COORDINATOR_NOT_AVAILABLE (being made, or it cannot be). */
KP_MUST_CHECK int br_groups_ensure_offsets_topic(struct br_server *b);

/* A cluster (Kafka's GroupCoordinator.validateGroupStatus): 0 when this
 * broker coordinates group_id (it leads the group's partition of
 * __consumer_offsets), NOT_COORDINATOR when another broker does,
 * COORDINATOR_NOT_AVAILABLE while the topic is missing. Standalone: 0. */
int br_groups_check_coordinator(struct br_server *b, struct kp_str group_id);

/* FindCoordinator's answer for a group: the broker leading its partition
 * (a cluster: from the metadata cache; standalone: this one), as reached
 * on `listener`. Returns 0 or COORDINATOR_NOT_AVAILABLE (the topic is
 * being made, the partition has no live leader, or the leader has no such
 * listener). host stays valid until the next metadata change. */
int br_groups_find_coordinator(struct br_server *b, struct kp_str key, const char *listener,
                               int32_t *node, const char **host, int32_t *port);

/* LeaderAndIsr or StopReplica changed this broker's role for p: when p
 * is a partition of __consumer_offsets, the groups of a partition it
 * leads now are loaded from its records, those of one it no longer leads
 * are handed over (their waiters answered NOT_COORDINATOR). */
void br_groups_leadership_changed(struct br_server *b, struct br_partition *p, bool was_leader);


/* Shutdown: every parked JoinGroup and SyncGroup is answered now with
 * NOT_COORDINATOR, so the clients look for the coordinator again. */
void br_groups_complete_all_parked(struct br_server *b);

/* Handlers (dispatch table in broker.c). Each answers through br_respond,
 * parks the request, or returns a KP_E_* code to close the connection. */
int br_h_find_coordinator(struct br_req *r);
int br_h_join_group(struct br_req *r);
int br_h_sync_group(struct br_req *r);
int br_h_heartbeat(struct br_req *r);
int br_h_leave_group(struct br_req *r);
int br_h_offset_commit(struct br_req *r);
int br_h_offset_fetch(struct br_req *r);
int br_h_describe_groups(struct br_req *r);
int br_h_list_groups(struct br_req *r);
int br_h_delete_groups(struct br_req *r);

/* ---- shared by group_handlers.c and group_offsets.c */

/* The coordinator's ops->offsets_partition (group/group.h); ctx is the
 * broker. */
struct br_partition *br_group_offsets_partition(void *ctx, const char *id, size_t len,
                                                size_t *max_batch, int *err);
/* The coordinator's ops->acks_all_check: a cluster's commit is refused
 * (NOT_ENOUGH_REPLICAS) while the partition's ISR is smaller than its
 * min.insync.replicas; a standalone broker's log is its ISR. */
int br_group_acks_all_check(void *ctx, const struct br_partition *p);
/* The leader's SyncGroup appended its group's record under seq
 * (grp_sync_out.store_seq): settles it once the record reaches the ISR of
 * the group's partition, or when that wait fails (offsets.commit.timeout.ms,
 * the ISR below min.insync.replicas, led elsewhere), through the purgatory
 * with no request parked for it (the syncs wait in the coordinator); a
 * standalone broker settles it at once. */
void br_group_store_wait(struct br_server *b, struct kp_str group_id, uint64_t seq);
/* Reads every partition of __consumer_offsets into b->groups. */
KP_MUST_CHECK int br_group_offsets_load(struct br_server *b);

/* ---- for the admin API */

/* One committed partition of a group against its partition's HW. */
struct br_group_lag {
    char *topic; /* owned by the array (br_group_lag_free) */
    int32_t partition;
    int64_t committed;      /* the committed offset: the next one to consume */
    int64_t high_watermark; /* -1: no replica of the partition here (or it is gone) */
    int64_t lag;            /* max(HW - committed, 0); -1 when unknown */
};

/*
 * Every committed partition of group_id[0..len), sorted by topic and
 * partition. *out (caller owns it: br_group_lag_free) may be NULL when
 * *n is 0. Returns 0, KP_ERR_GROUP_ID_NOT_FOUND or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_group_lag(struct br_server *b, const char *group_id, size_t len,
                               struct br_group_lag **out, size_t *n);
void br_group_lag_free(struct br_group_lag *lags, size_t n);

#endif
