/* sm-items.h: the rows of samsa-monitor's lists: brokers, topics, partitions
 * (with their replicas), consumer groups and timeline events.
 *
 * They are plain records: SmCluster (sm-cluster.c) alone writes their
 * fields, everyone else reads them. Each emits "changed" (no arguments) at
 * most once per model flush when any field moved, so a cell binds to one
 * signal instead of a notify per field. Kept in one file because none of
 * them has behaviour of its own.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SM_OFFSET_UNKNOWN ((gint64)-1)

/* ------------------------------------------------------------ series */

/* A bounded series of readings over time, for the charts: the last
 * SM_SERIES_MAX points, each the value over an interval of the broker's
 * clock (snapshot.taken_ms), so that a chart's span is the brokers' time,
 * not the monitor's arrival times. A point not known is a gap: a counter
 * that went down (a restart, a deleted topic), no rate for that interval. */
#define SM_SERIES_MAX 120

typedef struct {
    gint64 from_ms; /* the interval the value stands for */
    gint64 to_ms;
    double value;
    gboolean known;
} SmPoint;

typedef struct {
    SmPoint points[SM_SERIES_MAX]; /* a ring */
    guint head;                    /* where the next point goes */
    guint n;
} SmSeries;

void sm_series_push(SmSeries *s, gint64 from_ms, gint64 to_ms, double value, gboolean known);
/* (transfer none) point i, 0 the oldest; NULL past the newest */
const SmPoint *sm_series_get(const SmSeries *s, guint i);
/* (transfer none) the newest point, NULL when empty */
const SmPoint *sm_series_last(const SmSeries *s);
/* the newest point replaced (the same round of readings); pushed when empty */
void sm_series_replace_last(SmSeries *s, gint64 from_ms, gint64 to_ms, double value);
/* the largest known value, 0 when none */
double sm_series_peak(const SmSeries *s);
/* from the oldest point's start to the newest's end, 0 when empty */
gint64 sm_series_span_ms(const SmSeries *s);
/* "45 s", "2 minutes", "3 hours": a span for people (caller frees) */
char *sm_format_span(gint64 ms);

typedef enum {
    SM_UNIT_PER_S,       /* "1,204/s" */
    SM_UNIT_BYTES_PER_S, /* "1.2 MB/s" */
    SM_UNIT_COUNT,       /* "1,204" */
} SmUnit;

/* a value for people, "1.2 MB/s" (caller frees) */
char *sm_format_value(double value, SmUnit unit);
/* the newest value, "—" when none or a gap (caller frees) */
char *sm_series_format_last(const SmSeries *s, SmUnit unit);
/* a chart's accessible label: "bytes in: 1.2 MB/s over the last 2
 * minutes, peak 3.4 MB/s", "bytes in: no readings yet", or when the
 * newest point is a gap "bytes in: no rate for the last reading (a counter
 * went down), peak 3.4 MB/s over the last 2 minutes" ("the broker is not
 * heard" when the gap has no length: sm_cluster_broker_unheard) (caller
 * frees) */
char *sm_series_describe(const SmSeries *s, const char *title, SmUnit unit);

/* messages in, bytes in and bytes out a second, per broker and for the
 * cluster (broker/README.md: /v1/brokers/{id}'s totals) */
typedef struct {
    SmSeries messages_in;
    SmSeries bytes_in;
    SmSeries bytes_out;
} SmRates;

/* a broker's last reading of its own totals: cumulative since it started */
typedef struct {
    gint64 taken_ms; /* the broker's clock; 0: no reading yet */
    gint64 started_ms;
    gint64 messages_in;
    gint64 bytes_in;
    gint64 bytes_out;
} SmTotals;

/* ------------------------------------------------------------ broker */

#define SM_TYPE_BROKER (sm_broker_get_type())
G_DECLARE_FINAL_TYPE(SmBroker, sm_broker, SM, BROKER, GObject)

struct _SmBroker {
    GObject parent_instance;
    gint32 id;
    char *host;
    gint32 port;
    char *admin_url;  /* NULL until a document names it */
    char *rack;       /* NULL: none */
    gboolean alive;
    gboolean controller;
    guint partitions_led; /* counted at each flush from the partitions */
    guint replicas;       /* replicas hosted, ditto */
    char *link;           /* the monitor's link to its admin API, for people */
    SmTotals totals;      /* the last reading of /v1/brokers/{id}'s totals */
    SmRates rates;        /* from the differences of its readings */
};

/* ------------------------------------------------------------ replica */

/* One replica of a partition, in assignment order. Offsets are
 * SM_OFFSET_UNKNOWN when no leader's view of the partition has been seen. */
typedef struct {
    gint32 broker;
    gint64 log_end_offset;
    gint64 lag;       /* the leader's LEO minus this one's */
    gint64 since_caught_up_ms;
    gboolean in_sync; /* member of the ISR */
    gboolean offline;
    /* the leader no longer reports this replica's LEO (a broker whose
     * session expired: "log_end_offset": null): log_end_offset is the last
     * one it reported, and the replica is shown offline */
    gboolean last_known;
} SmReplica;

/* ------------------------------------------------------------ partition */

#define SM_TYPE_PARTITION (sm_partition_get_type())
G_DECLARE_FINAL_TYPE(SmPartition, sm_partition, SM, PARTITION, GObject)

struct _SmPartition {
    GObject parent_instance;
    char *topic;
    gint32 partition;
    gint32 leader;      /* -1: none (offline) */
    gint32 leader_epoch;
    gint64 high_watermark;
    gint64 log_start_offset;
    gint64 log_end_offset;
    gint64 size_bytes;
    GArray *replicas;   /* SmReplica, assignment order */
    GArray *isr;        /* gint32 */
    gboolean under_min_isr;
    /* whose view the offsets are: the leader's (full, every replica's LEO)
     * or only a metadata cache's (HW and LEOs possibly unknown) */
    gboolean full_view;
    gint32 view_of;     /* the broker whose document was taken last */
    gint64 updated_ms;  /* the broker's snapshot time of the last update */
};

gboolean sm_partition_in_isr(const SmPartition *self, gint32 broker);
guint sm_partition_under_replicated(const SmPartition *self);
/* "1,204": offsets and counts for people (caller frees) */
char *sm_format_count(gint64 n);
/* ids joined by ", " (caller frees); osr: the replicas not in the ISR */
char *sm_partition_format_replicas(const SmPartition *self);
char *sm_partition_format_isr(const SmPartition *self);
char *sm_partition_format_osr(const SmPartition *self);
/* the accessible description of replica i, e.g. "replica 2: out of sync,
 * 1,204 behind the high watermark" (caller frees) */
char *sm_partition_describe_replica(const SmPartition *self, guint i);
/* every replica's description joined by "; " (caller frees) */
char *sm_partition_describe(const SmPartition *self);

/* ------------------------------------------------------------ topic */

#define SM_TYPE_TOPIC (sm_topic_get_type())
G_DECLARE_FINAL_TYPE(SmTopic, sm_topic, SM, TOPIC, GObject)

struct _SmTopic {
    GObject parent_instance;
    char *name;
    gboolean internal;
    gint32 min_insync_replicas; /* -1 unknown */
    GPtrArray *parts;           /* SmPartition *, indexed by partition number */
    GListStore *partitions;     /* the same, as a list model (synced at flush) */
    /* derived at each flush */
    guint replication_factor;
    guint under_replicated;
    guint under_min_isr;
    guint offline;
    gint64 size_bytes;
    gint64 hw_sum;
    double messages_per_s; /* from the HWs' sum between flushes */
    gint64 rate_at_us;
    gint64 rate_hw_sum;
};

/* (transfer none) the topic's partitions, in partition order */
GListModel *sm_topic_get_partitions(SmTopic *self);

/* ------------------------------------------------------------ group */

typedef struct {
    char *topic;
    gint32 partition;
    gint64 committed_offset;
    gint64 high_watermark;
    gint64 lag;
} SmGroupOffset;

/* one member of a group, as /v1/groups/{g}'s member_list shows it */
#define SM_TYPE_MEMBER (sm_member_get_type())
G_DECLARE_FINAL_TYPE(SmMember, sm_member, SM, MEMBER, GObject)

struct _SmMember {
    GObject parent_instance;
    char *member_id;
    char *client_id;
    char *host;       /* the broker's client_host, "/127.0.0.1" */
    char *assignment; /* "orders-0, orders-1" (at most 64 named, then "… (N)") */
    guint assigned;   /* partitions assigned */
};

#define SM_TYPE_GROUP (sm_group_get_type())
G_DECLARE_FINAL_TYPE(SmGroup, sm_group, SM, GROUP, GObject)

struct _SmGroup {
    GObject parent_instance;
    char *group_id;
    char *state;
    char *protocol;
    gint32 generation;
    gint32 members;
    gint32 coordinator;
    gint64 lag;
    GArray *offsets;   /* SmGroupOffset */
    GListStore *member_list; /* SmMember, the group document's order */
    SmSeries lag_history; /* the total lag, one point per group document */
};

/* ------------------------------------------------------------ event */

typedef enum {
    SM_EVENT_ISR_SHRINK,
    SM_EVENT_ISR_EXPAND,
    SM_EVENT_ISR_CHANGE,
    SM_EVENT_LEADER_CHANGE,
    SM_EVENT_BROKER_DOWN,
    SM_EVENT_BROKER_UP,
    SM_EVENT_CONTROLLER_CHANGE,
    SM_EVENT_TOPIC_CREATED,
    SM_EVENT_TOPIC_DELETED,
} SmEventKind;

#define SM_TYPE_EVENT (sm_event_get_type())
G_DECLARE_FINAL_TYPE(SmEvent, sm_event, SM, EVENT, GObject)

struct _SmEvent {
    GObject parent_instance;
    SmEventKind kind;
    gint64 time_ms;
    gint32 reported_by;
    char *topic; /* NULL for broker events */
    gint32 partition;
    char *text;  /* "watched-0: ISR shrank to 0, 1 (2 out)" */
};

const char *sm_event_kind_name(SmEventKind kind);
/* serious enough for a toast */
gboolean sm_event_is_alert(const SmEvent *self);

/* emits "changed" on any of the types above */
void sm_item_emit_changed(gpointer item);

G_END_DECLS
