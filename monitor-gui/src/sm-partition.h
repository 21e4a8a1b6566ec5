/* sm-partition.h: a partition of a topic with its replicas, a row of the
 * partitions page.
 *
 * A plain record: SmCluster (sm-cluster.c) alone writes its fields, everyone
 * else reads them. It emits "changed" (no arguments) at most once per model
 * flush when any field moved, so a cell binds to one signal instead of a
 * notify per field.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include "sm-series.h"
#include <gio/gio.h>

G_BEGIN_DECLS

/* One replica of a partition, in assignment order. Offsets are
 * SM_OFFSET_UNKNOWN when no leader's view of the partition has been seen. */
typedef struct {
    gint32 broker;
    gint64 log_end_offset;
    gint64 lag; /* the leader's LEO minus this one's */
    gint64 since_caught_up_ms;
    gboolean in_sync; /* member of the ISR */
    gboolean offline;
    /* the leader no longer reports this replica's LEO (a broker whose
     * session expired: "log_end_offset": null): log_end_offset is the last
     * one it reported, and the replica is shown offline */
    gboolean last_known;
} SmReplica;

#define SM_TYPE_PARTITION (sm_partition_get_type())
G_DECLARE_FINAL_TYPE(SmPartition, sm_partition, SM, PARTITION, GObject)

struct _SmPartition {
    GObject parent_instance;
    char *topic;
    gint32 partition;
    gint32 leader; /* -1: none (offline) */
    gint32 leader_epoch;
    gint64 high_watermark;
    /* the last stable offset (read_committed consumers read below it), and
     * the open transactions that wrote here ("ops-1, ops-2"; NULL: none
     * known), as the broker's transaction coordinator knows them */
    gint64 last_stable_offset;
    char *held_by;
    gint64 log_start_offset;
    gint64 log_end_offset;
    gint64 size_bytes;
    GArray *replicas; /* SmReplica, assignment order */
    GArray *isr;      /* gint32 */
    gboolean under_min_isr;
    /* whose view the offsets are: the leader's (full, every replica's LEO)
     * or only a metadata cache's (HW and LEOs possibly unknown) */
    gboolean full_view;
    gint32 view_of;    /* the broker whose document was taken last */
    gint64 updated_ms; /* the broker's snapshot time of the last update */
    /* a move under way (/v1/reassignments, the document's "reassignment"):
     * the replicas it moves to, the first the preferred leader (gint32;
     * empty when not moving). While it moves the assignment is the target
     * then the old replicas not in it (Kafka 2.0's
     * KafkaController.onPartitionReassignment). */
    GArray *target;
    /* the topic's replication throttles on this partition, from its
     * configs: "leader 0, 1; follower 3", "leader all"; NULL: none */
    char *throttled;
};

gboolean sm_partition_in_isr(const SmPartition *self, gint32 broker);
guint sm_partition_under_replicated(const SmPartition *self);
/* ids joined by ", " (caller frees); osr: the replicas not in the ISR */
char *sm_partition_format_replicas(const SmPartition *self);
char *sm_partition_format_isr(const SmPartition *self);
char *sm_partition_format_osr(const SmPartition *self);
/* each replica's log end offset, "0: 5,000, 1: 5,000, 2: 3,796 (offline)",
 * "—" for one unknown (caller frees) */
char *sm_partition_format_leos(const SmPartition *self);
/* the replicas behind the high watermark and by how much, "2: 1,204"; empty
 * when none is (caller frees) */
char *sm_partition_format_behind(const SmPartition *self);
/* the accessible description of replica i, e.g. "replica 2: out of sync,
 * 1,204 behind the high watermark" (caller frees) */
char *sm_partition_describe_replica(const SmPartition *self, guint i);
/* every replica's description joined by "; " (caller frees) */
char *sm_partition_describe(const SmPartition *self);
/* TRUE when the LSO is known and held behind the HW: an open transaction
 * holds read_committed consumers back */
gboolean sm_partition_lso_held(const SmPartition *self);
/* the LSO for people: "—" unknown, "5,000" at
 * the HW, "4,980 (ops-1)" when held by ops-1's open transaction (caller
 * frees) */
char *sm_partition_format_lso(const SmPartition *self);
/* a move under way: TRUE when the partition has a target */
gboolean sm_partition_is_moving(const SmPartition *self);
/* while it moves: a replica of the target not in the ISR yet (what the move
 * waits for), a replica of the assignment not in the target (to go) */
gboolean sm_partition_adding(const SmPartition *self, gint32 broker);
gboolean sm_partition_removing(const SmPartition *self, gint32 broker);
/* the move for people, "to 1, 2, 3: adding 3, removing 0"; "" when not
 * moving (caller frees) */
char *sm_partition_format_move(const SmPartition *self);
/* the target, "1, 2, 3"; the replicas being added with their LEO against
 * the HW, "3: 1 of 12 (11 behind)", "3: — of 12" before its first fetch,
 * "3: caught up" at the HW; the replicas being removed, "0" (caller frees) */
char *sm_partition_format_target(const SmPartition *self);
char *sm_partition_format_adding(const SmPartition *self);
char *sm_partition_format_removing(const SmPartition *self);
/* emits "changed" (sm_cluster_flush) */
void sm_partition_emit_changed(SmPartition *self);

G_END_DECLS
