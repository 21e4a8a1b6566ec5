/*
 * samsa-broker: the group coordinator (Kafka's classic group protocol).
 *
 * Membership lives in memory: groups, their members, generations, the chosen
 * protocol and the leader's assignments (group.c). Committed offsets are
 * records in the internal compacted topic __consumer_offsets, Kafka's key and
 * value formats, appended with br_log_append to the partition
 * abs(java_hashcode(group)) % partitions and read back when the broker
 * starts (group_offsets.c). The coordinator of a group is the leader of that
 * partition: this broker, standalone.
 *
 * JoinGroup and SyncGroup park their response slot (struct br_park, kind
 * BR_PARK_GROUP) until the group moves on; the connection keeps its
 * responses in request order because a parked slot holds back the ones
 * behind it. A connection that dies cancels its parked requests
 * (br_groups_cancel_parked) but its members stay until their session
 * timeout, as in Kafka. Deadlines (sessions, rebalances, the initial
 * rebalance delay, offset expiry) are reactor timers sharing one ops table
 * (their grp_timer's kind tells them apart).
 *
 * @locality reactor thread: no locks anywhere.
 */
#ifndef SAMSA_BROKER_GROUP_H
#define SAMSA_BROKER_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

struct br_broker;
struct br_req;
struct br_timer;

/* The internal topic that holds committed offsets and group records. */
#define BR_OFFSETS_TOPIC "__consumer_offsets"

/*
 * Creates the coordinator (b->groups) and loads every committed offset and
 * group record from __consumer_offsets when the topic exists (it is created
 * on first use otherwise). Needs the topics loaded and b->net created.
 * Arms the offset expiry check. Returns 0, KP_E_NOMEM or
 * KP_ERR_KAFKA_STORAGE_ERROR (a partition of the topic could not be read).
 */
KP_MUST_CHECK int br_groups_start(struct br_broker *b);

/* Answers parked requests (NOT_COORDINATOR), cancels the timers and frees
 * everything; b->groups becomes NULL. NULL groups are a no-op. */
void br_groups_stop(struct br_broker *b);

/* Starts creating __consumer_offsets with its own settings
 * (offsets.topic.*, cleanup.policy=compact) when it is missing, as
 * FindCoordinator does: for paths that would otherwise create it as an
 * ordinary topic (Metadata's auto-creation). Returns 0 when it exists, or
 * COORDINATOR_NOT_AVAILABLE (being made, or it cannot be). */
KP_MUST_CHECK int br_groups_ensure_offsets_topic(struct br_broker *b);

/* A connection died with a parked JoinGroup or SyncGroup (BR_PARK_GROUP):
 * its slot is forgotten, its member stays. */
void br_groups_cancel_parked(struct br_broker *b, void *parked);

/* Shutdown: every parked JoinGroup and SyncGroup is answered now with
 * NOT_COORDINATOR, so the clients look for the coordinator again. */
void br_groups_complete_all_parked(struct br_broker *b);

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

/*
 * Java's String.hashCode of a UTF-8 group id (over its UTF-16 code units;
 * each byte of an ill-formed sequence counts as one U+FFFD, where Java's
 * decoder may put one U+FFFD for a whole truncated sequence), and
 * Kafka's partition of __consumer_offsets for it:
 * Utils.abs(hashCode) % partitions (Utils.abs(INT32_MIN) = 0).
 */
int32_t br_group_java_hash(const char *s, size_t len);
int32_t br_group_partition_for(const char *group_id, size_t len, int32_t partitions);

/* ---- for the admin API */

/* One committed partition of a group against its partition's HW. */
struct br_group_lag {
    char *topic; /* owned by the array (br_group_lag_free) */
    int32_t partition;
    int64_t committed;      /* the committed offset: the next one to consume */
    int64_t high_watermark; /* -1: the partition does not exist (any more) */
    int64_t lag;            /* max(HW - committed, 0); -1 when unknown */
};

/*
 * Every committed partition of group_id[0..len), sorted by topic and
 * partition. *out (caller owns it: br_group_lag_free) may be NULL when
 * *n is 0. Returns 0, KP_ERR_GROUP_ID_NOT_FOUND or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_group_lag(struct br_broker *b, const char *group_id, size_t len,
                               struct br_group_lag **out, size_t *n);
void br_group_lag_free(struct br_group_lag *lags, size_t n);

/* One group as DescribeGroups would summarize it. */
struct br_group_info {
    char *group_id;      /* owned by the array (br_group_infos_free) */
    char *protocol_type; /* "" when none */
    char *protocol;      /* the chosen assignor; "" outside Stable/CompletingRebalance */
    const char *state;   /* "Empty", "PreparingRebalance", ... (static) */
    int32_t generation;
    size_t members;
    size_t committed_partitions;
};

/* Every group the coordinator holds, in creation order. Returns 0 or
 * KP_E_NOMEM; caller owns *out (br_group_infos_free). */
KP_MUST_CHECK int br_groups_list(struct br_broker *b, struct br_group_info **out, size_t *n);
void br_group_infos_free(struct br_group_info *infos, size_t n);

#endif
