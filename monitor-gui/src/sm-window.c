/* sm-window.c: samsa-monitor's main window (see sm-window.h). */
#include "sm-window.h"

#include <string.h>

#include "sm-browser.h"
#include "sm-confirm.h"
#include "sm-chart.h"
#include "sm-replica-bar.h"

struct _SmWindow {
    AdwApplicationWindow parent_instance;
    SmCluster *cluster;
    SmClient *client;
    /* template children */
    AdwViewStack *stack;
    AdwToastOverlay *toasts;
    GtkLabel *status_label;
    GtkLabel *summary_label;
    GtkLabel *health_label;
    GtkExpander *problems_expander;
    GtkListBox *problems_list;
    char *problems_shown; /* the rows' texts as last built: not rebuilt unchanged */
    GtkColumnView *brokers_view;
    GtkColumnView *topics_view;
    GtkColumnView *partitions_view;
    GtkColumnView *groups_view;
    GtkColumnView *members_view;
    GtkLabel *members_label;
    GtkColumnView *events_view;
    GtkExpander *configs_expander;
    GtkBox *messages_box;
    GtkButton *new_topic_button;
    GtkButton *delete_topic_button;
    GtkButton *reset_offsets_button;
    GtkButton *abort_txn_button;
    GtkColumnView *transactions_view;
    GtkColumnView *moves_view;
    GtkColumnView *quotas_view;
    GtkColumnView *quota_rates_view;
    GtkLabel *configs_label;
    char *configs_asked; /* the topic whose configs were asked for last */
    GtkDropDown *event_kind;
    GtkSearchEntry *event_search;
    GtkSearchEntry *topic_search;
    GtkDropDown *topic_choice;
    GtkBox *charts_box;
    GtkBox *lag_box;
    /* */
    SmChart *charts[3]; /* the cluster's messages in, bytes in, bytes out */
    SmChart *lag_chart; /* the chosen group's lag */
    GtkSortListModel *partitions_sorted;
    GtkSortListModel *members_sorted;
    GtkCustomFilter *topic_filter;
    GtkCustomFilter *event_filter;
    char *topic; /* the partitions page's */
    guint flush_tick;
    guint flush_idle;
    guint alerts;
    char *last_alert;
    SmFlushStats stats;
    /* the model's and the link's signals, disconnected in dispose */
    gulong on_dirty_id;
    gulong on_flushed_id;
    gulong on_event_id;
    gulong on_status_id;
};

enum { PROP_0, PROP_CLUSTER, PROP_CLIENT, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(SmWindow, sm_window, ADW_TYPE_APPLICATION_WINDOW)

/* ------------------------------------------------------------ columns */

typedef char *(*CellText)(gpointer item);

/* a pointer into a const table handed to GLib's gpointer user data, which
 * only ever gives it back */
static gpointer unconst(const void *p)
{
    return (gpointer)(guintptr)p;
}

typedef enum {
    CELL_TEXT,
    CELL_REPLICA_BAR, /* a partition's replicas */
    CELL_SPARKLINE,   /* a broker's messages in a second */
    CELL_RATE,        /* text as wide as "1,000.0 kB/s" */
    CELL_WIDE_TEXT,   /* text as wide as "0: 12,345, 1: 12,345, 2: 12,345" */
    CELL_TREE_TEXT,   /* text behind an expander: a group's changes under it */
    CELL_LSO,         /* an offset at least, as wide as "4,980 (copier-1)" when there is room */
} CellWidget;

typedef struct {
    const char *title;
    CellText text;      /* NULL unless CELL_TEXT */
    GCompareDataFunc cmp; /* NULL: not sortable */
    gboolean numeric;
    gboolean expand;
    CellWidget cell;
    /* the cell's natural width in characters, so that its usual text is
     * not cut (a host with its port, a group's or member's id); 0: by the
     * kind of cell */
    guint chars;
} Column;

static char *offset_text(gint64 v)
{
    return v < 0 ? g_strdup("—") : sm_format_count(v);
}

static char *bytes_text(gint64 v)
{
    return v < 0 ? g_strdup("—") : g_format_size((guint64)v);
}

/* brokers */
static char *b_id(gpointer i) { return g_strdup_printf("%d", (int)SM_BROKER(i)->id); }
static char *b_host(gpointer i)
{
    SmBroker *b = SM_BROKER(i);
    return b->host != NULL ? g_strdup_printf("%s:%d", b->host, (int)b->port) : g_strdup("—");
}
static char *b_rack(gpointer i) { return g_strdup(SM_BROKER(i)->rack ? SM_BROKER(i)->rack : "—"); }
static char *b_alive(gpointer i) { return g_strdup(SM_BROKER(i)->alive ? "alive" : "GONE"); }
static char *b_controller(gpointer i) { return g_strdup(SM_BROKER(i)->controller ? "controller" : ""); }
/* alive, hosting replicas, leading none: the preferred leaders come back
 * only at the controller's next imbalance check
 * (leader.imbalance.check.interval.seconds, 300 s: Kafka 2.0's
 * KafkaController.checkAndTriggerAutoLeaderRebalance) */
static gboolean b_leads_nothing(const SmBroker *b)
{
    return b->alive && b->replicas > 0 && b->partitions_led == 0;
}
static char *b_led(gpointer i)
{
    SmBroker *b = SM_BROKER(i);
    return b_leads_nothing(b) ? g_strdup("0: leads nothing")
                              : g_strdup_printf("%u", b->partitions_led);
}
static char *b_replicas(gpointer i) { return g_strdup_printf("%u", SM_BROKER(i)->replicas); }
static char *b_bytes_in(gpointer i)
{
    return sm_series_format_last(&SM_BROKER(i)->rates.bytes_in, SM_UNIT_BYTES_PER_S);
}
static char *b_bytes_out(gpointer i)
{
    return sm_series_format_last(&SM_BROKER(i)->rates.bytes_out, SM_UNIT_BYTES_PER_S);
}
static char *b_admin(gpointer i) { return g_strdup(SM_BROKER(i)->admin_url ? SM_BROKER(i)->admin_url : "—"); }
static char *b_link(gpointer i) { return g_strdup(SM_BROKER(i)->link ? SM_BROKER(i)->link : "—"); }

static const Column broker_columns[] = {
    {"Broker", b_id, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Host", b_host, NULL, FALSE, FALSE, CELL_TEXT, 16},
    {"Rack", b_rack, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"State", b_alive, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"Role", b_controller, NULL, FALSE, FALSE, CELL_TEXT, 10},
    {"Partitions led", b_led, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Replicas", b_replicas, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Messages in", NULL, NULL, FALSE, FALSE, CELL_SPARKLINE, 0},
    {"Bytes in", b_bytes_in, NULL, TRUE, FALSE, CELL_RATE, 0},
    {"Bytes out", b_bytes_out, NULL, TRUE, FALSE, CELL_RATE, 0},
    {"Admin API", b_admin, NULL, FALSE, TRUE, CELL_TEXT, 0},
    {"Monitor's link", b_link, NULL, FALSE, FALSE, CELL_TEXT, 0},
};

/* topics */
static char *t_name(gpointer i) { return g_strdup(SM_TOPIC(i)->name); }
static char *t_parts(gpointer i) { return g_strdup_printf("%u", SM_TOPIC(i)->parts->len); }
static char *t_rf(gpointer i) { return g_strdup_printf("%u", SM_TOPIC(i)->replication_factor); }
static char *t_urp(gpointer i) { return g_strdup_printf("%u", SM_TOPIC(i)->under_replicated); }
static char *t_offline(gpointer i) { return g_strdup_printf("%u", SM_TOPIC(i)->offline); }
static char *t_size(gpointer i) { return bytes_text(SM_TOPIC(i)->size_bytes); }
static char *t_rate(gpointer i) { return g_strdup_printf("%.1f/s", SM_TOPIC(i)->messages_per_s); }
static char *t_min_isr(gpointer i)
{
    gint32 m = SM_TOPIC(i)->min_insync_replicas;
    return m < 0 ? g_strdup("—") : g_strdup_printf("%d", (int)m);
}

static int t_cmp_name(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    return g_strcmp0(((const SmTopic *)a)->name, ((const SmTopic *)b)->name);
}
static int t_cmp_urp(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    guint x = ((const SmTopic *)a)->under_replicated, y = ((const SmTopic *)b)->under_replicated;
    return (x > y) - (x < y);
}
static int t_cmp_parts(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    guint x = ((const SmTopic *)a)->parts->len, y = ((const SmTopic *)b)->parts->len;
    return (x > y) - (x < y);
}
static int t_cmp_rate(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    double x = ((const SmTopic *)a)->messages_per_s, y = ((const SmTopic *)b)->messages_per_s;
    return (x > y) - (x < y);
}
static int t_cmp_size(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    gint64 x = ((const SmTopic *)a)->size_bytes, y = ((const SmTopic *)b)->size_bytes;
    return (x > y) - (x < y);
}

static const Column topic_columns[] = {
    {"Topic", t_name, t_cmp_name, FALSE, TRUE, CELL_TEXT, 0},
    {"Partitions", t_parts, t_cmp_parts, TRUE, FALSE, CELL_TEXT, 0},
    {"RF", t_rf, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"min ISR", t_min_isr, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Under-replicated", t_urp, t_cmp_urp, TRUE, FALSE, CELL_TEXT, 0},
    {"Offline", t_offline, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Size", t_size, t_cmp_size, TRUE, FALSE, CELL_TEXT, 0},
    {"Messages", t_rate, t_cmp_rate, TRUE, FALSE, CELL_TEXT, 0},
};

/* partitions */
static char *p_num(gpointer i) { return g_strdup_printf("%d", (int)SM_PARTITION(i)->partition); }
static char *p_leader(gpointer i)
{
    gint32 l = SM_PARTITION(i)->leader;
    return l < 0 ? g_strdup("none") : g_strdup_printf("%d", (int)l);
}
static char *p_epoch(gpointer i) { return g_strdup_printf("%d", (int)SM_PARTITION(i)->leader_epoch); }
static char *p_ar(gpointer i) { return sm_partition_format_replicas(SM_PARTITION(i)); }
static char *p_isr(gpointer i) { return sm_partition_format_isr(SM_PARTITION(i)); }
static char *p_osr(gpointer i) { return sm_partition_format_osr(SM_PARTITION(i)); }
static char *p_start(gpointer i) { return offset_text(SM_PARTITION(i)->log_start_offset); }
static char *p_hw(gpointer i) { return offset_text(SM_PARTITION(i)->high_watermark); }
static char *p_lso(gpointer i) { return sm_partition_format_lso(SM_PARTITION(i)); }
static char *p_leos(gpointer i) { return sm_partition_format_leos(SM_PARTITION(i)); }
static char *p_behind(gpointer i) { return sm_partition_format_behind(SM_PARTITION(i)); }
/* a move under way and the topic's replication throttles on the
 * partition: "to 1, 2, 3: adding 3, removing 0 · throttled: leader 1" */
static char *p_move(gpointer i)
{
    SmPartition *p = SM_PARTITION(i);
    g_autofree char *move = sm_partition_format_move(p);
    if (p->throttled == NULL) {
        return g_steal_pointer(&move);
    }
    return g_strdup_printf("%s%sthrottled: %s", move, move[0] != '\0' ? " · " : "", p->throttled);
}

static int p_cmp_num(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    gint32 x = ((const SmPartition *)a)->partition, y = ((const SmPartition *)b)->partition;
    return (x > y) - (x < y);
}
static int p_cmp_osr(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    guint x = ((const SmPartition *)a)->replicas->len - ((const SmPartition *)a)->isr->len;
    guint y = ((const SmPartition *)b)->replicas->len - ((const SmPartition *)b)->isr->len;
    return (x > y) - (x < y);
}
static int p_cmp_leader(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    gint32 x = ((const SmPartition *)a)->leader, y = ((const SmPartition *)b)->leader;
    return (x > y) - (x < y);
}

static const Column partition_columns[] = {
    {"Partition", p_num, p_cmp_num, TRUE, FALSE, CELL_TEXT, 0},
    {"Leader", p_leader, p_cmp_leader, TRUE, FALSE, CELL_TEXT, 0},
    {"Epoch", p_epoch, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"AR", p_ar, NULL, FALSE, FALSE, CELL_TEXT, 7},
    {"ISR", p_isr, NULL, FALSE, FALSE, CELL_TEXT, 7},
    {"OSR", p_osr, p_cmp_osr, FALSE, FALSE, CELL_TEXT, 0},
    {"Log start", p_start, NULL, TRUE, FALSE, CELL_TEXT, 9},
    {"HW", p_hw, NULL, TRUE, FALSE, CELL_TEXT, 9},
    {"LSO", p_lso, NULL, FALSE, FALSE, CELL_LSO, 0},
    {"LEO per replica", p_leos, NULL, FALSE, FALSE, CELL_WIDE_TEXT, 0},
    {"Behind HW", p_behind, NULL, FALSE, FALSE, CELL_TEXT, 9},
    {"Move, throttle", p_move, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"Replicas: own scale per row", NULL, NULL, FALSE, TRUE, CELL_REPLICA_BAR, 0},
};

/* partitions being moved */
static char *mv_name(gpointer i)
{
    return g_strdup_printf("%s-%d", SM_PARTITION(i)->topic, (int)SM_PARTITION(i)->partition);
}
static char *mv_target(gpointer i) { return sm_partition_format_target(SM_PARTITION(i)); }
static char *mv_adding(gpointer i) { return sm_partition_format_adding(SM_PARTITION(i)); }
static char *mv_removing(gpointer i) { return sm_partition_format_removing(SM_PARTITION(i)); }
static char *mv_throttled(gpointer i)
{
    const char *t = SM_PARTITION(i)->throttled;
    return g_strdup(t != NULL ? t : "");
}

static const Column move_columns[] = {
    {"Partition", mv_name, NULL, FALSE, FALSE, CELL_TEXT, 14},
    {"Leader", p_leader, p_cmp_leader, TRUE, FALSE, CELL_TEXT, 0},
    {"Target", mv_target, NULL, FALSE, FALSE, CELL_TEXT, 9},
    {"AR now", p_ar, NULL, FALSE, FALSE, CELL_TEXT, 9},
    {"ISR", p_isr, NULL, FALSE, FALSE, CELL_TEXT, 7},
    {"Adding: LEO of HW", mv_adding, NULL, FALSE, FALSE, CELL_WIDE_TEXT, 0},
    {"Removing", mv_removing, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"Throttled", mv_throttled, NULL, FALSE, FALSE, CELL_TEXT, 22},
    {"Replicas: own scale per row", NULL, NULL, FALSE, TRUE, CELL_REPLICA_BAR, 0},
};

/* client quotas in force */
static char *q_user(gpointer i) { return g_strdup(SM_QUOTA(i)->user ? SM_QUOTA(i)->user : "—"); }
static char *q_client(gpointer i)
{
    return g_strdup(SM_QUOTA(i)->client_id ? SM_QUOTA(i)->client_id : "—");
}
static char *q_produce(gpointer i) { return sm_quota_format_bytes(SM_QUOTA(i)->producer_byte_rate); }
static char *q_fetch(gpointer i) { return sm_quota_format_bytes(SM_QUOTA(i)->consumer_byte_rate); }
static char *q_request(gpointer i) { return sm_quota_format_percent(SM_QUOTA(i)->request_percentage); }

static const Column quota_columns[] = {
    {"User", q_user, NULL, FALSE, FALSE, CELL_TEXT, 16},
    {"Client id", q_client, NULL, FALSE, FALSE, CELL_TEXT, 16},
    {"Produce", q_produce, NULL, TRUE, FALSE, CELL_RATE, 0},
    {"Fetch", q_fetch, NULL, TRUE, FALSE, CELL_RATE, 0},
    {"Request", q_request, NULL, TRUE, FALSE, CELL_TEXT, 0},
};

/* the rates each broker measures for them */
static char *qr_broker(gpointer i) { return g_strdup_printf("%d", (int)SM_QUOTA_RATE(i)->broker); }
static char *qr_type(gpointer i) { return g_strdup(SM_QUOTA_RATE(i)->type); }
static char *qr_user(gpointer i)
{
    const char *u = SM_QUOTA_RATE(i)->user;
    return g_strdup(u != NULL && u[0] != '\0' ? u : "—");
}
static char *qr_client(gpointer i)
{
    const char *c = SM_QUOTA_RATE(i)->client_id;
    return g_strdup(c != NULL && c[0] != '\0' ? c : "—");
}
static char *qr_rate(gpointer i) { return sm_quota_rate_format(SM_QUOTA_RATE(i)); }
static char *qr_throttle(gpointer i) { return sm_quota_rate_format_throttle(SM_QUOTA_RATE(i)); }
static char *qr_total(gpointer i)
{
    g_autofree char *n = sm_format_count(SM_QUOTA_RATE(i)->throttle_total_ms);
    return g_strdup_printf("%s ms", n);
}

static const Column quota_rate_columns[] = {
    {"Broker", qr_broker, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Type", qr_type, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"User", qr_user, NULL, FALSE, FALSE, CELL_TEXT, 16},
    {"Client id", qr_client, NULL, FALSE, FALSE, CELL_TEXT, 16},
    {"Rate of quota", qr_rate, NULL, FALSE, FALSE, CELL_WIDE_TEXT, 0},
    {"Throttled now", qr_throttle, NULL, FALSE, FALSE, CELL_TEXT, 24},
    {"Throttle time", qr_total, NULL, TRUE, FALSE, CELL_TEXT, 0},
};

/* groups */
static char *g_id(gpointer i) { return g_strdup(SM_GROUP(i)->group_id); }
static char *g_state(gpointer i) { return g_strdup(SM_GROUP(i)->state ? SM_GROUP(i)->state : "—"); }
static char *g_members(gpointer i) { return g_strdup_printf("%d", (int)SM_GROUP(i)->members); }
static char *g_coord(gpointer i) { return g_strdup_printf("%d", (int)SM_GROUP(i)->coordinator); }
static char *g_lag(gpointer i) { return sm_format_count(SM_GROUP(i)->lag); }
static char *g_parts(gpointer i)
{
    SmGroup *g = SM_GROUP(i);
    GString *s = g_string_new(NULL);
    for (guint k = 0; k < g->offsets->len && k < 8; k++) {
        const SmGroupOffset *o = &g_array_index(g->offsets, SmGroupOffset, k);
        g_autofree char *lag = offset_text(o->lag);
        g_string_append_printf(s, "%s%s-%d: %s", k ? ", " : "", o->topic ? o->topic : "?",
                               (int)o->partition, lag);
    }
    if (g->offsets->len > 8) {
        g_string_append_printf(s, ", … (%u)", g->offsets->len);
    }
    return g_string_free(s, FALSE);
}
static char *g_trend(gpointer i)
{
    /* the lag's last documents as a sparkline */
    static const char *const bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    const SmSeries *lag = &SM_GROUP(i)->lag_history;
    guint n = MIN(lag->n, 20u);
    double max = 1;
    for (guint k = lag->n - n; k < lag->n; k++) {
        max = MAX(max, sm_series_get(lag, k)->value);
    }
    GString *s = g_string_new(NULL);
    for (guint k = lag->n - n; k < lag->n; k++) {
        guint level = (guint)(sm_series_get(lag, k)->value / max * 7.0);
        g_string_append(s, bars[MIN(level, 7u)]);
    }
    return g_string_free(s, FALSE);
}
static int g_cmp_lag(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    gint64 x = ((const SmGroup *)a)->lag, y = ((const SmGroup *)b)->lag;
    return (x > y) - (x < y);
}

static const Column group_columns[] = {
    {"Group", g_id, NULL, FALSE, FALSE, CELL_TEXT, 28},
    {"State", g_state, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"Members", g_members, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Coordinator", g_coord, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Lag", g_lag, g_cmp_lag, TRUE, FALSE, CELL_TEXT, 0},
    {"Lag trend", g_trend, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"Lag per partition", g_parts, NULL, FALSE, TRUE, CELL_TEXT, 0},
};

/* transactional ids */
static char *x_id(gpointer i) { return g_strdup(SM_TRANSACTION(i)->transactional_id); }
static char *x_state(gpointer i)
{
    return g_strdup(SM_TRANSACTION(i)->state ? SM_TRANSACTION(i)->state : "—");
}
static char *x_producer(gpointer i)
{
    SmTransaction *x = SM_TRANSACTION(i);
    return g_strdup_printf("%" G_GINT64_FORMAT ", epoch %d", x->producer_id, (int)x->producer_epoch);
}
static char *x_age(gpointer i)
{
    gint64 ms = SM_TRANSACTION(i)->age_ms;
    return ms < 0 ? g_strdup("—") : g_strdup_printf("%.1f s", (double)ms / 1000.0);
}
static char *x_timeout(gpointer i)
{
    gint32 ms = SM_TRANSACTION(i)->timeout_ms;
    return ms < 0 ? g_strdup("—") : g_strdup_printf("%.0f s", (double)ms / 1000.0);
}
static char *x_parts(gpointer i)
{
    const char *p = SM_TRANSACTION(i)->partitions;
    return g_strdup(p != NULL && p[0] != '\0' ? p : "—");
}
static char *x_coord(gpointer i) { return g_strdup_printf("%d", (int)SM_TRANSACTION(i)->coordinator); }
static int x_cmp_age(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    gint64 x = ((const SmTransaction *)a)->age_ms, y = ((const SmTransaction *)b)->age_ms;
    return (x > y) - (x < y);
}
static int x_cmp_id(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    return g_strcmp0(((const SmTransaction *)a)->transactional_id,
                     ((const SmTransaction *)b)->transactional_id);
}

static const Column transaction_columns[] = {
    {"Transactional id", x_id, x_cmp_id, FALSE, FALSE, CELL_TEXT, 20},
    {"State", x_state, NULL, FALSE, FALSE, CELL_TEXT, 16},
    {"Producer", x_producer, NULL, FALSE, FALSE, CELL_TEXT, 26},
    {"Age", x_age, x_cmp_age, TRUE, FALSE, CELL_TEXT, 0},
    {"Timeout", x_timeout, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Partitions", x_parts, NULL, FALSE, TRUE, CELL_TEXT, 0},
    {"Coordinator", x_coord, NULL, TRUE, FALSE, CELL_TEXT, 0},
};

/* members of the chosen group */
static char *m_id(gpointer i) { return g_strdup(SM_MEMBER(i)->member_id ? SM_MEMBER(i)->member_id : "—"); }
static char *m_client(gpointer i) { return g_strdup(SM_MEMBER(i)->client_id ? SM_MEMBER(i)->client_id : "—"); }
static char *m_host(gpointer i) { return g_strdup(SM_MEMBER(i)->host ? SM_MEMBER(i)->host : "—"); }
static char *m_assigned(gpointer i)
{
    SmMember *m = SM_MEMBER(i);
    return m->assigned > 0 ? g_strdup(m->assignment) : g_strdup("none");
}
static int m_cmp_client(gconstpointer a, gconstpointer b, gpointer ud)
{
    (void)ud;
    return g_strcmp0(((const SmMember *)a)->client_id, ((const SmMember *)b)->client_id);
}

static const Column member_columns[] = {
    {"Member", m_id, NULL, FALSE, FALSE, CELL_TEXT, 48},
    {"Client", m_client, m_cmp_client, FALSE, FALSE, CELL_TEXT, 14},
    {"Host", m_host, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"Assigned partitions", m_assigned, NULL, FALSE, TRUE, CELL_TEXT, 0},
};

/* events */
static char *e_time(gpointer i)
{
    gint64 ms = SM_EVENT(i)->time_ms;
    g_autoptr(GDateTime) t = g_date_time_new_from_unix_local(ms / 1000);
    return t != NULL ? g_date_time_format(t, "%H:%M:%S") : g_strdup("—");
}
static char *e_kind(gpointer i) { return g_strdup(sm_event_kind_name(SM_EVENT(i)->kind)); }
static char *e_text(gpointer i) { return g_strdup(SM_EVENT(i)->text); }
static char *e_by(gpointer i) { return g_strdup_printf("%d", (int)SM_EVENT(i)->reported_by); }

static const Column event_columns[] = {
    {"Time", e_time, NULL, TRUE, FALSE, CELL_TEXT, 0},
    {"Event", e_kind, NULL, FALSE, FALSE, CELL_TEXT, 0},
    {"What", e_text, NULL, FALSE, TRUE, CELL_TREE_TEXT, 0},
    {"First reported by", e_by, NULL, TRUE, FALSE, CELL_TEXT, 0},
};

/* a cell's health colour, libadwaita's style classes: a broker GONE in
 * red, alive in green; one leading nothing, or whose link is not
 * streaming, in amber. NULL: none. */
static const char *cell_style(const Column *col, gpointer item)
{
    /* an LSO held behind the HW: an open transaction holds read_committed
     * consumers back */
    if (SM_IS_PARTITION(item)) {
        if (col->text == p_move || col->text == mv_adding) {
            return sm_partition_is_moving(item) ? "warning" : NULL;
        }
        return col->text == p_lso && sm_partition_lso_held(item) ? "warning" : NULL;
    }
    /* a client throttled now */
    if (SM_IS_QUOTA_RATE(item)) {
        return col->text == qr_throttle && sm_quota_rate_throttled(item) ? "warning" : NULL;
    }
    /* a transaction open */
    if (SM_IS_TRANSACTION(item)) {
        return col->text == x_state && sm_transaction_is_open(item) ? "warning" : NULL;
    }
    if (!SM_IS_BROKER(item)) {
        return NULL;
    }
    const SmBroker *b = SM_BROKER(item);
    if (col->text == b_alive) {
        return b->alive ? "success" : "error";
    }
    if (col->text == b_led) {
        return b_leads_nothing(b) ? "warning" : NULL;
    }
    if (col->text == b_link) {
        return b->link == NULL || strcmp(b->link, "streaming") == 0 ? NULL : "warning";
    }
    return NULL;
}

/* a partition's move and throttles in words (transfer full; NULL: neither) */
static char *move_tooltip(const SmPartition *p)
{
    if (!sm_partition_is_moving(p) && p->throttled == NULL) {
        return NULL;
    }
    GString *s = g_string_new(NULL);
    if (sm_partition_is_moving(p)) {
        g_autofree char *target = sm_partition_format_target(p);
        g_autofree char *adding = sm_partition_format_adding(p);
        g_autofree char *removing = sm_partition_format_removing(p);
        g_string_append_printf(s, "Being moved to replicas %s", target);
        if (adding[0] != '\0') {
            g_string_append_printf(s, "; being added (log end offset of the high watermark): %s",
                                   adding);
        }
        if (removing[0] != '\0') {
            g_string_append_printf(s, "; being removed: %s", removing);
        }
    }
    if (p->throttled != NULL) {
        g_string_append_printf(s, "%sReplication throttled (the topic's configs): %s",
                               s->len > 0 ? ".\n" : "", p->throttled);
    }
    return g_string_free(s, FALSE);
}

/* a cell's tooltip, the whole of what a narrow cell may cut: a held LSO
 * (transfer full; NULL: none) */
static char *cell_tooltip(const Column *col, gpointer item)
{
    if (SM_IS_PARTITION(item) && col->text == p_move) {
        return move_tooltip(item);
    }
    if (!SM_IS_PARTITION(item) || col->text != p_lso || !sm_partition_lso_held(item)) {
        return NULL;
    }
    const SmPartition *p = item;
    g_autofree char *behind = sm_format_count(p->high_watermark - p->last_stable_offset);
    return g_strdup_printf("The last stable offset is held %s behind the high watermark by the "
                           "open transaction of %s: read_committed consumers read below it",
                           behind, p->held_by != NULL ? p->held_by : "a producer");
}

static void set_style_class(GtkWidget *w, const char *cls)
{
    static const char *const all[] = {"success", "warning", "error"};
    for (size_t i = 0; i < G_N_ELEMENTS(all); i++) {
        if (g_strcmp0(all[i], cls) == 0) {
            gtk_widget_add_css_class(w, all[i]);
        } else {
            gtk_widget_remove_css_class(w, all[i]);
        }
    }
}

/* the row's item: an event's row in the events' tree is a GtkTreeListRow
 * holding it (transfer none: its list holds it) */
static gpointer row_item(GtkListItem *li)
{
    gpointer item = gtk_list_item_get_item(li);
    if (GTK_IS_TREE_LIST_ROW(item)) {
        gpointer inner = gtk_tree_list_row_get_item(item);
        if (inner != NULL) {
            g_object_unref(inner); /* the tree row keeps it */
        }
        /* borrowed, not freed: the row holds its item while the cell shows it */
        /* cppcheck-suppress deallocret */
        return inner;
    }
    return item;
}

/* a text cell's GtkInscription, behind an expander for CELL_TREE_TEXT */
static GtkWidget *cell_text_widget(GtkListItem *li)
{
    GtkWidget *w = gtk_list_item_get_child(li);
    return GTK_IS_TREE_EXPANDER(w) ? gtk_tree_expander_get_child(GTK_TREE_EXPANDER(w)) : w;
}

/* a text cell follows its row's "changed" while bound */
static void cell_refresh(gpointer item, GtkListItem *li)
{
    const Column *col = g_object_get_data(G_OBJECT(li), "sm-column");
    g_autofree char *text = col->text(item);
    GtkWidget *w = cell_text_widget(li);
    gtk_inscription_set_text(GTK_INSCRIPTION(w), text);
    set_style_class(w, cell_style(col, item));
    g_autofree char *tip = cell_tooltip(col, item);
    if (g_strcmp0(gtk_widget_get_tooltip_text(w), tip) != 0) {
        gtk_widget_set_tooltip_text(w, tip);
    }
}

static void cell_setup(GtkSignalListItemFactory *f, GtkListItem *li, gpointer ud)
{
    (void)f;
    const Column *col = ud;
    g_object_set_data(G_OBJECT(li), "sm-column", unconst(col));
    if (col->cell == CELL_REPLICA_BAR) {
        gtk_list_item_set_child(li, sm_replica_bar_new());
        return;
    }
    if (col->cell == CELL_SPARKLINE) {
        gtk_list_item_set_child(li, sm_chart_new(SM_CHART_MESSAGES_IN, TRUE));
        return;
    }
    GtkWidget *w = gtk_inscription_new(NULL);
    gtk_inscription_set_min_chars(GTK_INSCRIPTION(w), 3);
    guint chars = col->cell == CELL_RATE        ? 12
                  : col->cell == CELL_WIDE_TEXT ? 30
                  : col->cell == CELL_LSO       ? 16
                                                : 8;
    if (col->cell == CELL_LSO) {
        /* an offset and a short holder's id whole at 1100 px; a longer id
         * is cut (the tooltip says it all) */
        gtk_inscription_set_min_chars(GTK_INSCRIPTION(w), 9);
    }
    if (col->chars > 0) {
        /* its minimum too: GTK shares a narrow view's width out to the
         * columns closest to their natural width first, so a wide natural
         * alone left the host at 8 characters */
        chars = col->chars;
        gtk_inscription_set_min_chars(GTK_INSCRIPTION(w), chars);
    } else if (col->expand) {
        chars = 40;
    }
    gtk_inscription_set_nat_chars(GTK_INSCRIPTION(w), chars);
    if (col->numeric) {
        gtk_inscription_set_xalign(GTK_INSCRIPTION(w), 1.0f);
        gtk_widget_add_css_class(w, "numeric");
    }
    if (col->cell == CELL_TREE_TEXT) {
        GtkWidget *expander = gtk_tree_expander_new();
        gtk_tree_expander_set_child(GTK_TREE_EXPANDER(expander), w);
        w = expander;
    }
    gtk_list_item_set_child(li, w);
}

static void cell_bind(GtkSignalListItemFactory *f, GtkListItem *li, gpointer ud)
{
    (void)f;
    const Column *col = ud;
    gpointer item = row_item(li);
    if (col->cell == CELL_TREE_TEXT) {
        gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(gtk_list_item_get_child(li)),
                                       gtk_list_item_get_item(li));
    }
    if (col->cell == CELL_REPLICA_BAR) {
        sm_replica_bar_set_partition(SM_REPLICA_BAR(gtk_list_item_get_child(li)), item);
        return;
    }
    if (col->cell == CELL_SPARKLINE) {
        sm_chart_set_series(SM_CHART(gtk_list_item_get_child(li)), item, "changed",
                            &SM_BROKER(item)->rates.messages_in);
        return;
    }
    cell_refresh(item, li);
    if (!SM_IS_MEMBER(item)) {
        gulong id = g_signal_connect(item, "changed", G_CALLBACK(cell_refresh), li);
        g_object_set_data(G_OBJECT(li), "sm-handler", GSIZE_TO_POINTER((gsize)id));
    }
}

static void cell_unbind(GtkSignalListItemFactory *f, GtkListItem *li, gpointer ud)
{
    (void)f;
    const Column *col = ud;
    gpointer item = row_item(li);
    if (col->cell == CELL_TREE_TEXT) {
        gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(gtk_list_item_get_child(li)), NULL);
    }
    if (col->cell == CELL_REPLICA_BAR) {
        sm_replica_bar_set_partition(SM_REPLICA_BAR(gtk_list_item_get_child(li)), NULL);
        return;
    }
    if (col->cell == CELL_SPARKLINE) {
        sm_chart_set_series(SM_CHART(gtk_list_item_get_child(li)), NULL, NULL, NULL);
        return;
    }
    gulong id = (gulong)GPOINTER_TO_SIZE(g_object_get_data(G_OBJECT(li), "sm-handler"));
    if (id != 0 && item != NULL) {
        g_signal_handler_disconnect(item, id);
    }
    g_object_set_data(G_OBJECT(li), "sm-handler", NULL);
}

/* the columns of view; returns its sort model (view owns it) */
static GtkSortListModel *add_columns(GtkColumnView *view, const Column *cols, size_t n,
                                     GListModel *model)
{
    for (size_t i = 0; i < n; i++) {
        GtkListItemFactory *f = gtk_signal_list_item_factory_new();
        g_signal_connect(f, "setup", G_CALLBACK(cell_setup), unconst(&cols[i]));
        g_signal_connect(f, "bind", G_CALLBACK(cell_bind), unconst(&cols[i]));
        g_signal_connect(f, "unbind", G_CALLBACK(cell_unbind), unconst(&cols[i]));
        GtkColumnViewColumn *c = gtk_column_view_column_new(cols[i].title, f);
        gtk_column_view_column_set_expand(c, cols[i].expand);
        gtk_column_view_column_set_resizable(c, TRUE);
        if (cols[i].cmp != NULL) {
            GtkCustomSorter *s = gtk_custom_sorter_new(cols[i].cmp, NULL, NULL);
            gtk_column_view_column_set_sorter(c, GTK_SORTER(s));
            g_object_unref(s);
        }
        gtk_column_view_append_column(view, c);
        g_object_unref(c);
    }
    GtkSorter *sorter = gtk_column_view_get_sorter(view);
    GtkSortListModel *sorted =
        gtk_sort_list_model_new(model != NULL ? g_object_ref(model) : NULL,
                                sorter != NULL ? g_object_ref(sorter) : NULL);
    gtk_column_view_set_model(view, GTK_SELECTION_MODEL(gtk_single_selection_new(
                                        G_LIST_MODEL(g_object_ref(sorted)))));
    g_object_unref(sorted); /* the selection holds it */
    return sorted;
}

/* ------------------------------------------------------------ flushing */

static void do_flush(SmWindow *self)
{
    gint64 t0 = g_get_monotonic_time();
    guint n = sm_cluster_flush(self->cluster);
    gint64 dt = g_get_monotonic_time() - t0;
    self->stats.flushes++;
    self->stats.rows += n;
    self->stats.total_us += dt;
    self->stats.max_us = MAX(self->stats.max_us, dt);
}

static gboolean flush_on_tick(GtkWidget *w, GdkFrameClock *clock, gpointer ud)
{
    (void)w;
    (void)clock;
    SmWindow *self = SM_WINDOW(ud);
    self->flush_tick = 0;
    g_clear_handle_id(&self->flush_idle, g_source_remove);
    do_flush(self);
    return G_SOURCE_REMOVE;
}

static gboolean flush_on_idle(gpointer ud)
{
    SmWindow *self = SM_WINDOW(ud);
    self->flush_idle = 0;
    if (self->flush_tick != 0) {
        gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->flush_tick);
        self->flush_tick = 0;
    }
    do_flush(self);
    return G_SOURCE_REMOVE;
}

/* one flush a frame; an idle as well, for a window not drawn (minimised,
 * or not shown yet) whose frame clock does not tick, at a priority below
 * drawing so that a drawn window flushes on its frame first */
static void on_dirty(SmCluster *cluster, gpointer ud)
{
    (void)cluster;
    SmWindow *self = SM_WINDOW(ud);
    if (self->flush_tick == 0 && gtk_widget_get_mapped(GTK_WIDGET(self))) {
        self->flush_tick = gtk_widget_add_tick_callback(GTK_WIDGET(self), flush_on_tick, self, NULL);
    }
    if (self->flush_idle == 0) {
        self->flush_idle = g_timeout_add_full(G_PRIORITY_LOW, 50, flush_on_idle, self, NULL);
    }
}

static void update_summary(SmWindow *self)
{
    const SmClusterSummary *s = sm_cluster_get_summary(self->cluster);
    g_autofree char *head = NULL;
    /* no broker answers (a wrong URL, the cluster down): say so, in red,
     * not "0 of 0 brokers alive" as if the cluster were empty and well */
    if (self->client != NULL && sm_client_count_connected(self->client) == 0) {
        head = s->brokers > 0 ? g_strdup_printf("Not connected: no broker answers (last seen: "
                                                "%u of %u brokers alive)",
                                                s->brokers_alive, s->brokers)
                              : g_strdup("Not connected: no broker answers");
        gtk_label_set_text(self->summary_label, head);
        gtk_label_set_text(self->health_label, sm_client_get_status(self->client));
        set_style_class(GTK_WIDGET(self->summary_label), "error");
        set_style_class(GTK_WIDGET(self->health_label), "error");
        return;
    }
    set_style_class(GTK_WIDGET(self->summary_label), NULL);
    if (s->controller >= 0) {
        head = g_strdup_printf("Cluster %s: %u of %u brokers alive, controller %d",
                               s->cluster_id ? s->cluster_id : "?", s->brokers_alive, s->brokers,
                               (int)s->controller);
    } else {
        head = g_strdup_printf("Cluster %s: %u of %u brokers alive, no controller",
                               s->cluster_id ? s->cluster_id : "?", s->brokers_alive, s->brokers);
    }
    gtk_label_set_text(self->summary_label, head);
    g_autofree char *health = g_strdup_printf(
        "%u topics, %u partitions: %u under-replicated, %u under min ISR, %u offline",
        s->topics, s->partitions, s->under_replicated, s->under_min_isr, s->offline);
    gtk_label_set_text(self->health_label, health);
    set_style_class(GTK_WIDGET(self->health_label),
                    s->offline > 0 || s->under_min_isr > 0 ? "error"
                    : s->under_replicated > 0              ? "warning"
                                                           : NULL);
}

/* ------------------------------------------------------------ problems */

#define MAX_PROBLEM_ROWS 200

/* what is wrong with p, for people; NULL: nothing */
static char *partition_problem(const SmPartition *p)
{
    if (p->leader < 0) {
        return g_strdup_printf("%s-%d: offline, no leader", p->topic, (int)p->partition);
    }
    g_autofree char *isr = sm_partition_format_isr(p);
    if (p->under_min_isr) {
        return g_strdup_printf("%s-%d: under min ISR, ISR [%s]", p->topic, (int)p->partition,
                               isr);
    }
    if (sm_partition_under_replicated(p)) {
        g_autofree char *osr = sm_partition_format_osr(p);
        return g_strdup_printf("%s-%d: under-replicated, ISR [%s], out of sync [%s]", p->topic,
                               (int)p->partition, isr, osr);
    }
    return NULL;
}

static void add_problem_row(SmWindow *self, const char *text, const char *topic,
                            const char *style)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_widget_set_margin_start(label, 8);
    gtk_widget_set_margin_top(label, 2);
    gtk_widget_set_margin_bottom(label, 2);
    if (style != NULL) {
        gtk_widget_add_css_class(label, style);
    }
    GtkWidget *row = gtk_list_box_row_new();
    gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(row), label);
    gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), topic != NULL);
    if (topic != NULL) {
        g_object_set_data_full(G_OBJECT(row), "sm-topic", g_strdup(topic), g_free);
        gtk_widget_set_tooltip_text(row, "Show the topic's partitions");
    }
    gtk_list_box_append(self->problems_list, row);
}

/* the under-replicated, under-min-ISR and offline partitions, one click
 * (the expander) from the counts; the list is built only while shown */
static void update_problems(SmWindow *self)
{
    const SmClusterSummary *s = sm_cluster_get_summary(self->cluster);
    guint n = s->under_replicated + s->offline + s->under_min_isr;
    gtk_widget_set_visible(GTK_WIDGET(self->problems_expander), n > 0);
    g_autofree char *title =
        g_strdup_printf("Partitions that need attention: %u offline, %u under min ISR, %u "
                        "under-replicated",
                        s->offline, s->under_min_isr, s->under_replicated);
    gtk_expander_set_label(self->problems_expander, title);
    gboolean shown = n > 0 && gtk_expander_get_expanded(self->problems_expander);
    GListModel *topics = sm_cluster_get_topics(self->cluster);
    g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func(g_object_unref);
    g_autoptr(GString) key = g_string_new(NULL);
    guint more = 0;
    for (guint i = 0; shown && i < g_list_model_get_n_items(topics); i++) {
        g_autoptr(SmTopic) t = g_list_model_get_item(topics, i);
        for (guint k = 0; k < t->parts->len; k++) {
            SmPartition *p = g_ptr_array_index(t->parts, k);
            g_autofree char *text = partition_problem(p);
            if (text == NULL) {
                continue;
            }
            if (found->len >= MAX_PROBLEM_ROWS) {
                more++;
                continue;
            }
            g_ptr_array_add(found, g_object_ref(p));
            g_string_append_printf(key, "%s\n", text);
        }
    }
    g_string_append_printf(key, "%u", more);
    if (g_strcmp0(key->str, self->problems_shown) == 0) {
        return; /* the same rows: left alone, so that a click on one is not lost */
    }
    g_free(self->problems_shown);
    self->problems_shown = g_strdup(key->str);
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->problems_list))) != NULL) {
        gtk_list_box_remove(self->problems_list, child);
    }
    for (guint i = 0; i < found->len; i++) {
        const SmPartition *p = g_ptr_array_index(found, i);
        g_autofree char *text = partition_problem(p);
        add_problem_row(self, text, p->topic,
                        p->leader < 0 || p->under_min_isr ? "error" : "warning");
    }
    if (more > 0) {
        g_autofree char *text = g_strdup_printf("… and %u more", more);
        add_problem_row(self, text, NULL, NULL);
    }
}

static void on_problems_expanded(GtkExpander *e, GParamSpec *pspec, gpointer ud)
{
    (void)e;
    (void)pspec;
    update_problems(SM_WINDOW(ud));
}

static void on_problem_activated(GtkListBox *list, GtkListBoxRow *row, gpointer ud)
{
    (void)list;
    SmWindow *self = SM_WINDOW(ud);
    const char *topic = g_object_get_data(G_OBJECT(row), "sm-topic");
    if (topic != NULL) {
        sm_window_show_topic(self, topic);
        sm_window_show_page(self, "partitions");
    }
}

static guint topic_position(SmWindow *self, const char *name)
{
    GListModel *topics = sm_cluster_get_topics(self->cluster);
    guint n = g_list_model_get_n_items(topics);
    for (guint i = 0; i < n && name != NULL; i++) {
        g_autoptr(SmTopic) t = g_list_model_get_item(topics, i);
        if (g_strcmp0(t->name, name) == 0) {
            return i;
        }
    }
    return GTK_INVALID_LIST_POSITION;
}

/* the partitions page's topic configs (/v1/topics/{t}), asked for once
 * when a link is open and the topic has none read */
static void update_configs(SmWindow *self)
{
    SmTopic *t = sm_cluster_find_topic(self->cluster, self->topic);
    if (t == NULL) {
        gtk_widget_set_visible(GTK_WIDGET(self->configs_expander), FALSE);
        return;
    }
    if (t->configs == NULL && self->client != NULL &&
        g_strcmp0(self->configs_asked, t->name) != 0 &&
        sm_client_read_topic(self->client, t->name)) {
        g_free(self->configs_asked);
        self->configs_asked = g_strdup(t->name);
    }
    g_autofree char *text = sm_topic_format_configs(t);
    g_autofree char *title = NULL;
    if (t->configs == NULL) {
        title = g_strdup_printf("Configs of %s: not read yet", t->name);
    } else if (t->configs_from < 0) {
        title = g_strdup_printf("Configs of %s: not known (no live broker hosts it)", t->name);
    } else {
        title = g_strdup_printf("Configs of %s (%u, from broker %d)", t->name, t->configs->len,
                                (int)t->configs_from);
    }
    gtk_widget_set_visible(GTK_WIDGET(self->configs_expander), TRUE);
    if (g_strcmp0(gtk_expander_get_label(self->configs_expander), title) != 0) {
        gtk_expander_set_label(self->configs_expander, title);
    }
    if (g_strcmp0(gtk_label_get_text(self->configs_label), text != NULL ? text : "") != 0) {
        gtk_label_set_text(self->configs_label, text != NULL ? text : "");
    }
}

static void on_flushed(SmCluster *cluster, gpointer ud)
{
    (void)cluster;
    SmWindow *self = SM_WINDOW(ud);
    update_summary(self);
    update_problems(self);
    /* the partitions page's topic: set again when the topics list was
     * rebuilt, or the first time there is one */
    SmTopic *t = sm_cluster_find_topic(self->cluster, self->topic);
    GListModel *shown = gtk_sort_list_model_get_model(self->partitions_sorted);
    if (t != NULL && shown != sm_topic_get_partitions(t)) {
        gtk_sort_list_model_set_model(self->partitions_sorted, sm_topic_get_partitions(t));
    }
    if (self->topic == NULL && g_list_model_get_n_items(sm_cluster_get_topics(self->cluster)) > 0) {
        g_autoptr(SmTopic) first = g_list_model_get_item(sm_cluster_get_topics(self->cluster), 0);
        sm_window_show_topic(self, first->name);
    }
    update_configs(self);
    guint pos = topic_position(self, self->topic);
    if (pos != GTK_INVALID_LIST_POSITION && gtk_drop_down_get_selected(self->topic_choice) != pos) {
        gtk_drop_down_set_selected(self->topic_choice, pos);
    }
    if (self->alerts > 0) {
        g_autofree char *text = self->alerts == 1
                                    ? g_strdup(self->last_alert)
                                    : g_strdup_printf("%s (and %u more: see Events)",
                                                      self->last_alert, self->alerts - 1);
        AdwToast *toast = adw_toast_new(text);
        adw_toast_set_timeout(toast, 4);
        adw_toast_overlay_add_toast(self->toasts, toast);
        self->alerts = 0;
    }
}

static void on_event(SmCluster *cluster, SmEvent *e, gpointer ud)
{
    (void)cluster;
    SmWindow *self = SM_WINDOW(ud);
    if (sm_event_is_alert(e)) {
        self->alerts++;
        g_free(self->last_alert);
        self->last_alert = g_strdup(e->text);
    }
}

/* the status line in amber while a link is lost or silent, the summary
 * following it */
static void on_status(SmClient *client, gpointer ud)
{
    SmWindow *self = SM_WINDOW(ud);
    gtk_label_set_text(self->status_label, sm_client_get_status(client));
    gboolean bad = sm_client_is_degraded(client);
    set_style_class(GTK_WIDGET(self->status_label), bad ? "warning" : NULL);
    if (bad) {
        gtk_widget_remove_css_class(GTK_WIDGET(self->status_label), "dim-label");
    } else {
        gtk_widget_add_css_class(GTK_WIDGET(self->status_label), "dim-label");
    }
    update_summary(self);
}

/* ------------------------------------------------------------ navigation */

void sm_window_show_page(SmWindow *self, const char *name)
{
    adw_view_stack_set_visible_child_name(self->stack, name);
}

void sm_window_show_topic(SmWindow *self, const char *topic)
{
    g_return_if_fail(SM_IS_WINDOW(self));
    g_free(self->topic);
    self->topic = g_strdup(topic);
    SmTopic *t = sm_cluster_find_topic(self->cluster, topic);
    gtk_sort_list_model_set_model(self->partitions_sorted,
                                  t != NULL ? sm_topic_get_partitions(t) : NULL);
    guint pos = topic_position(self, topic);
    if (pos != GTK_INVALID_LIST_POSITION) {
        gtk_drop_down_set_selected(self->topic_choice, pos);
    }
    update_configs(self);
}

static void on_topic_activated(GtkColumnView *view, guint position, gpointer ud)
{
    SmWindow *self = SM_WINDOW(ud);
    GListModel *m = G_LIST_MODEL(gtk_column_view_get_model(view));
    g_autoptr(SmTopic) t = g_list_model_get_item(m, position);
    if (t != NULL) {
        sm_window_show_topic(self, t->name);
        sm_window_show_page(self, "partitions");
    }
}

static void on_topic_chosen(GtkDropDown *dd, GParamSpec *pspec, gpointer ud)
{
    (void)pspec;
    SmWindow *self = SM_WINDOW(ud);
    if (sm_cluster_is_flushing(self->cluster)) {
        return; /* the topics list changed under it: on_flushed selects the topic again */
    }
    SmTopic *t = gtk_drop_down_get_selected_item(dd);
    if (t != NULL && g_strcmp0(t->name, self->topic) != 0) {
        sm_window_show_topic(self, t->name);
    }
}

static void topic_choice_setup(GtkSignalListItemFactory *f, GtkListItem *li, gpointer ud)
{
    (void)f;
    (void)ud;
    gtk_list_item_set_child(li, gtk_label_new(NULL));
}

static void topic_choice_bind(GtkSignalListItemFactory *f, GtkListItem *li, gpointer ud)
{
    (void)f;
    (void)ud;
    SmTopic *t = gtk_list_item_get_item(li);
    gtk_label_set_text(GTK_LABEL(gtk_list_item_get_child(li)), t->name);
}

static gboolean topic_matches(gpointer item, gpointer ud)
{
    SmWindow *self = SM_WINDOW(ud);
    const char *q = gtk_editable_get_text(GTK_EDITABLE(self->topic_search));
    if (q == NULL || q[0] == '\0') {
        return TRUE;
    }
    g_autofree char *name = g_utf8_casefold(SM_TOPIC(item)->name, -1);
    g_autofree char *needle = g_utf8_casefold(q, -1);
    return strstr(name, needle) != NULL;
}

/* the events page's choice: 0 all, 1 brokers, 2 leaders, 3 ISR, 4 topics
 * and the controller; a group is of each kind of change it holds */
static gboolean event_of_choice(const SmEvent *e, guint choice)
{
    const guint *n = e->counts;
    gboolean group = sm_event_is_group(e);
    switch (choice) {
    case 1:
        return group || e->kind == SM_EVENT_BROKER_DOWN || e->kind == SM_EVENT_BROKER_UP;
    case 2:
        return e->kind == SM_EVENT_LEADER_CHANGE || (group && n[SM_EVENT_LEADER_CHANGE] > 0);
    case 3:
        return e->kind == SM_EVENT_ISR_SHRINK || e->kind == SM_EVENT_ISR_EXPAND ||
               e->kind == SM_EVENT_ISR_CHANGE ||
               (group && n[SM_EVENT_ISR_SHRINK] + n[SM_EVENT_ISR_EXPAND] + n[SM_EVENT_ISR_CHANGE] > 0);
    case 4:
        return e->kind == SM_EVENT_CONTROLLER_CHANGE || e->kind == SM_EVENT_TOPIC_CREATED ||
               e->kind == SM_EVENT_TOPIC_DELETED;
    default:
        return TRUE;
    }
}

static gboolean event_matches(gpointer item, gpointer ud)
{
    SmWindow *self = SM_WINDOW(ud);
    const SmEvent *e = SM_EVENT(item);
    return event_of_choice(e, gtk_drop_down_get_selected(self->event_kind)) &&
           sm_event_matches(e, gtk_editable_get_text(GTK_EDITABLE(self->event_search)));
}

static void on_event_filter(GObject *w, GParamSpec *pspec, gpointer ud)
{
    (void)w;
    (void)pspec;
    gtk_filter_changed(GTK_FILTER(SM_WINDOW(ud)->event_filter), GTK_FILTER_CHANGE_DIFFERENT);
}

static void on_event_search(GtkSearchEntry *entry, gpointer ud)
{
    on_event_filter(G_OBJECT(entry), NULL, ud);
}

/* a group's changes, under its row */
static GListModel *event_children(gpointer item, gpointer ud)
{
    (void)ud;
    SmEvent *e = SM_EVENT(item);
    return e->children != NULL ? G_LIST_MODEL(g_object_ref(e->children)) : NULL;
}

static void on_search(GtkSearchEntry *entry, gpointer ud)
{
    (void)entry;
    gtk_filter_changed(GTK_FILTER(SM_WINDOW(ud)->topic_filter), GTK_FILTER_CHANGE_DIFFERENT);
}

/* the members page follows the chosen group */
static void show_members(SmWindow *self, SmGroup *g)
{
    gtk_sort_list_model_set_model(self->members_sorted,
                                  g != NULL ? G_LIST_MODEL(g->member_list) : NULL);
    g_autofree char *text =
        g != NULL ? g_strdup_printf("Members of %s", g->group_id) : g_strdup("Members: choose a group");
    gtk_label_set_text(self->members_label, text);
    g_autofree char *title = g != NULL ? g_strdup_printf("lag of %s", g->group_id)
                                       : g_strdup("lag of the chosen group");
    sm_chart_set_title(self->lag_chart, title);
    sm_chart_set_series(self->lag_chart, g != NULL ? G_OBJECT(g) : NULL, "changed",
                        g != NULL ? &g->lag_history : NULL);
}

static void on_group_chosen(GtkSingleSelection *sel, GParamSpec *pspec, gpointer ud)
{
    (void)pspec;
    gpointer item = gtk_single_selection_get_selected_item(sel);
    show_members(SM_WINDOW(ud), item != NULL ? SM_GROUP(item) : NULL);
}

void sm_window_show_group(SmWindow *self, const char *group)
{
    GtkSingleSelection *sel = GTK_SINGLE_SELECTION(gtk_column_view_get_model(self->groups_view));
    GListModel *m = G_LIST_MODEL(sel);
    for (guint i = 0; i < g_list_model_get_n_items(m); i++) {
        g_autoptr(SmGroup) g = g_list_model_get_item(m, i);
        if (g_strcmp0(g->group_id, group) == 0) {
            gtk_single_selection_set_selected(sel, i);
            show_members(self, g);
            return;
        }
    }
}

GtkWidget *sm_window_get_chart(SmWindow *self, SmChartKind kind)
{
    if (kind == SM_CHART_LAG) {
        return GTK_WIDGET(self->lag_chart);
    }
    return (guint)kind < G_N_ELEMENTS(self->charts) ? GTK_WIDGET(self->charts[kind]) : NULL;
}

GtkWidget *sm_window_get_members_view(SmWindow *self)
{
    return GTK_WIDGET(self->members_view);
}

/* ------------------------------------------------------------ object */

SmCluster *sm_window_get_cluster(SmWindow *self)
{
    return self->cluster;
}

const SmFlushStats *sm_window_get_flush_stats(SmWindow *self)
{
    return &self->stats;
}

GtkWidget *sm_window_get_partitions_view(SmWindow *self)
{
    return GTK_WIDGET(self->partitions_view);
}

GtkWidget *sm_window_get_problems(SmWindow *self)
{
    return GTK_WIDGET(self->problems_expander);
}

const char *sm_window_get_health_text(SmWindow *self)
{
    return gtk_label_get_text(self->health_label);
}

SmWindow *sm_window_new(GtkApplication *app, SmCluster *cluster, SmClient *client)
{
    return g_object_new(SM_TYPE_WINDOW, "application", app, "cluster", cluster, "client", client,
                        NULL);
}

/* ------------------------------------------------------------ changes */

static SmConfirmOn confirm_on(SmWindow *self)
{
    SmConfirmOn on = {GTK_WINDOW(self), self->toasts, self->cluster};
    return on;
}

AdwMessageDialog *sm_window_confirm_create_topic(SmWindow *self, const char *name,
                                                 gint32 partitions, gint16 replication_factor)
{
    g_return_val_if_fail(SM_IS_WINDOW(self), NULL);
    SmConfirmOn on = confirm_on(self);
    return sm_confirm_create_topic(&on, name, partitions, replication_factor);
}

AdwMessageDialog *sm_window_confirm_delete_topic(SmWindow *self, const char *topic)
{
    g_return_val_if_fail(SM_IS_WINDOW(self), NULL);
    SmConfirmOn on = confirm_on(self);
    return sm_confirm_delete_topic(&on, topic);
}

AdwMessageDialog *sm_window_confirm_reset_offsets(SmWindow *self, const char *group,
                                                  gboolean to_earliest)
{
    g_return_val_if_fail(SM_IS_WINDOW(self), NULL);
    SmConfirmOn on = confirm_on(self);
    return sm_confirm_reset_offsets(&on, group, to_earliest);
}

AdwMessageDialog *sm_window_confirm_abort_transaction(SmWindow *self, const char *id)
{
    g_return_val_if_fail(SM_IS_WINDOW(self), NULL);
    SmTransaction *x = sm_cluster_find_transaction(self->cluster, id);
    if (x == NULL) {
        sm_confirm_toast(self->toasts, "No such transactional id");
        return NULL;
    }
    SmConfirmOn on = confirm_on(self);
    return sm_confirm_abort_transaction(&on, self->client, x);
}

static void on_abort_txn(GtkButton *b, gpointer ud)
{
    (void)b;
    SmWindow *self = SM_WINDOW(ud);
    GtkSingleSelection *sel =
        GTK_SINGLE_SELECTION(gtk_column_view_get_model(self->transactions_view));
    SmTransaction *x = gtk_single_selection_get_selected_item(sel);
    if (x == NULL) {
        sm_confirm_toast(self->toasts, "Choose the transaction to abort first");
        return;
    }
    if (!sm_transaction_is_open(x)) {
        g_autofree char *text =
            g_strdup_printf("Transaction %s is %s: nothing open to abort", x->transactional_id,
                            x->state != NULL ? x->state : "unknown");
        sm_confirm_toast(self->toasts, text);
        return;
    }
    (void)sm_window_confirm_abort_transaction(self, x->transactional_id);
}

GtkWidget *sm_window_get_transactions_view(SmWindow *self)
{
    return GTK_WIDGET(self->transactions_view);
}

static void on_new_topic(GtkButton *b, gpointer ud)
{
    (void)b;
    SmWindow *self = SM_WINDOW(ud);
    const SmClusterSummary *s = sm_cluster_get_summary(self->cluster);
    (void)sm_window_confirm_create_topic(self, "", 1, (gint16)CLAMP(s->brokers_alive, 1u, 3u));
}

static void on_delete_topic(GtkButton *b, gpointer ud)
{
    (void)b;
    SmWindow *self = SM_WINDOW(ud);
    GtkSingleSelection *sel = GTK_SINGLE_SELECTION(gtk_column_view_get_model(self->topics_view));
    SmTopic *t = gtk_single_selection_get_selected_item(sel);
    if (t == NULL) {
        sm_confirm_toast(self->toasts, "Choose the topic to delete first");
        return;
    }
    (void)sm_window_confirm_delete_topic(self, t->name);
}

static void on_reset_offsets(GtkButton *b, gpointer ud)
{
    (void)b;
    SmWindow *self = SM_WINDOW(ud);
    GtkSingleSelection *sel = GTK_SINGLE_SELECTION(gtk_column_view_get_model(self->groups_view));
    SmGroup *g = gtk_single_selection_get_selected_item(sel);
    if (g == NULL) {
        sm_confirm_toast(self->toasts, "Choose the group first");
        return;
    }
    (void)sm_window_confirm_reset_offsets(self, g->group_id, TRUE);
}

static void sm_window_set_property(GObject *object, guint id, const GValue *value,
                                   GParamSpec *pspec)
{
    SmWindow *self = SM_WINDOW(object);
    switch (id) {
    case PROP_CLUSTER:
        self->cluster = g_value_dup_object(value);
        break;
    case PROP_CLIENT:
        self->client = g_value_dup_object(value);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void sm_window_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    SmWindow *self = SM_WINDOW(object);
    switch (id) {
    case PROP_CLUSTER:
        g_value_set_object(value, self->cluster);
        break;
    case PROP_CLIENT:
        g_value_set_object(value, self->client);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

/* the window wired to its model and link, once both construct properties
 * are set: g_object_new alone gives a whole window (an empty model of its
 * own when none is given) */
static void sm_window_constructed(GObject *object)
{
    SmWindow *self = SM_WINDOW(object);
    G_OBJECT_CLASS(sm_window_parent_class)->constructed(object);
    if (self->cluster == NULL) {
        self->cluster = sm_cluster_new();
    }
    SmCluster *cluster = self->cluster;
    SmClient *client = self->client;
    self->on_dirty_id = g_signal_connect(cluster, "dirty", G_CALLBACK(on_dirty), self);
    self->on_flushed_id = g_signal_connect(cluster, "flushed", G_CALLBACK(on_flushed), self);
    self->on_event_id = g_signal_connect(cluster, "event", G_CALLBACK(on_event), self);
    add_columns(self->brokers_view, broker_columns, G_N_ELEMENTS(broker_columns),
                sm_cluster_get_brokers(cluster));
    GtkWidget *browser = sm_browser_new(cluster);
    gtk_widget_set_vexpand(browser, TRUE);
    gtk_box_append(self->messages_box, browser);
    g_signal_connect(self->new_topic_button, "clicked", G_CALLBACK(on_new_topic), self);
    g_signal_connect(self->delete_topic_button, "clicked", G_CALLBACK(on_delete_topic), self);
    g_signal_connect(self->reset_offsets_button, "clicked", G_CALLBACK(on_reset_offsets), self);
    g_signal_connect(self->abort_txn_button, "clicked", G_CALLBACK(on_abort_txn), self);
    /* the cluster's throughput, drawn again at each flush */
    const SmRates *rates = sm_cluster_get_rates(cluster);
    const SmSeries *series[] = {&rates->messages_in, &rates->bytes_in, &rates->bytes_out};
    for (guint i = 0; i < G_N_ELEMENTS(self->charts); i++) {
        self->charts[i] = SM_CHART(sm_chart_new((SmChartKind)i, FALSE));
        gtk_widget_set_hexpand(GTK_WIDGET(self->charts[i]), TRUE);
        sm_chart_set_series(self->charts[i], G_OBJECT(cluster), "flushed", series[i]);
        gtk_box_append(self->charts_box, GTK_WIDGET(self->charts[i]));
    }
    self->topic_filter = gtk_custom_filter_new(topic_matches, self, NULL);
    GtkFilterListModel *filtered = gtk_filter_list_model_new(
        G_LIST_MODEL(g_object_ref(sm_cluster_get_topics(cluster))),
        GTK_FILTER(g_object_ref(self->topic_filter)));
    add_columns(self->topics_view, topic_columns, G_N_ELEMENTS(topic_columns),
                G_LIST_MODEL(filtered));
    g_object_unref(filtered);
    self->partitions_sorted = g_object_ref(add_columns(
        self->partitions_view, partition_columns, G_N_ELEMENTS(partition_columns), NULL));
    add_columns(self->groups_view, group_columns, G_N_ELEMENTS(group_columns),
                sm_cluster_get_groups(cluster));
    add_columns(self->transactions_view, transaction_columns, G_N_ELEMENTS(transaction_columns),
                sm_cluster_get_transactions(cluster));
    add_columns(self->moves_view, move_columns, G_N_ELEMENTS(move_columns),
                sm_cluster_get_moves(cluster));
    add_columns(self->quotas_view, quota_columns, G_N_ELEMENTS(quota_columns),
                sm_cluster_get_quotas(cluster));
    add_columns(self->quota_rates_view, quota_rate_columns, G_N_ELEMENTS(quota_rate_columns),
                sm_cluster_get_quota_rates(cluster));
    self->members_sorted = g_object_ref(
        add_columns(self->members_view, member_columns, G_N_ELEMENTS(member_columns), NULL));
    g_signal_connect(gtk_column_view_get_model(self->groups_view), "notify::selected-item",
                     G_CALLBACK(on_group_chosen), self);
    /* events: newest first, filtered by kind and text, a group's changes
     * under its row */
    self->event_filter = gtk_custom_filter_new(event_matches, self, NULL);
    GtkFilterListModel *events = gtk_filter_list_model_new(
        G_LIST_MODEL(g_object_ref(sm_cluster_get_events(cluster))),
        GTK_FILTER(g_object_ref(self->event_filter)));
    GtkTreeListModel *tree =
        gtk_tree_list_model_new(G_LIST_MODEL(events), FALSE, FALSE, event_children, NULL, NULL);
    add_columns(self->events_view, event_columns, G_N_ELEMENTS(event_columns), G_LIST_MODEL(tree));
    g_object_unref(tree);
    g_signal_connect(self->event_kind, "notify::selected", G_CALLBACK(on_event_filter), self);
    g_signal_connect(self->event_search, "search-changed", G_CALLBACK(on_event_search), self);
    /* partitions in partition order until a column is clicked */
    GListModel *cols = gtk_column_view_get_columns(self->partitions_view);
    g_autoptr(GtkColumnViewColumn) first = g_list_model_get_item(cols, 0);
    gtk_column_view_sort_by_column(self->partitions_view, first, GTK_SORT_ASCENDING);

    GtkListItemFactory *f = gtk_signal_list_item_factory_new();
    g_signal_connect(f, "setup", G_CALLBACK(topic_choice_setup), NULL);
    g_signal_connect(f, "bind", G_CALLBACK(topic_choice_bind), NULL);
    gtk_drop_down_set_factory(self->topic_choice, f);
    g_object_unref(f);
    gtk_drop_down_set_model(self->topic_choice, sm_cluster_get_topics(cluster));
    g_signal_connect(self->topic_choice, "notify::selected-item", G_CALLBACK(on_topic_chosen),
                     self);
    g_signal_connect(self->topics_view, "activate", G_CALLBACK(on_topic_activated), self);
    g_signal_connect(self->topic_search, "search-changed", G_CALLBACK(on_search), self);
    g_signal_connect(self->problems_expander, "notify::expanded",
                     G_CALLBACK(on_problems_expanded), self);
    g_signal_connect(self->problems_list, "row-activated", G_CALLBACK(on_problem_activated), self);
    if (client != NULL) {
        self->on_status_id = g_signal_connect(client, "status-changed", G_CALLBACK(on_status), self);
        on_status(client, self);
    } else {
        gtk_label_set_text(self->status_label, "not connected");
    }
    update_summary(self);
    if (sm_cluster_is_dirty(cluster)) {
        on_dirty(cluster, self);
    } else {
        on_flushed(cluster, self);
    }
}

static void sm_window_dispose(GObject *object)
{
    SmWindow *self = SM_WINDOW(object);
    g_clear_handle_id(&self->flush_idle, g_source_remove);
    if (self->cluster != NULL) {
        g_clear_signal_handler(&self->on_dirty_id, self->cluster);
        g_clear_signal_handler(&self->on_flushed_id, self->cluster);
        g_clear_signal_handler(&self->on_event_id, self->cluster);
        g_clear_object(&self->cluster);
    }
    if (self->client != NULL) {
        g_clear_signal_handler(&self->on_status_id, self->client);
        g_clear_object(&self->client);
    }
    g_clear_object(&self->partitions_sorted);
    g_clear_object(&self->members_sorted);
    g_clear_object(&self->topic_filter);
    g_clear_object(&self->event_filter);
    gtk_widget_dispose_template(GTK_WIDGET(self), SM_TYPE_WINDOW);
    G_OBJECT_CLASS(sm_window_parent_class)->dispose(object);
}

static void sm_window_finalize(GObject *object)
{
    SmWindow *self = SM_WINDOW(object);
    g_free(self->topic);
    g_free(self->configs_asked);
    g_free(self->last_alert);
    g_free(self->problems_shown);
    G_OBJECT_CLASS(sm_window_parent_class)->finalize(object);
}

static void sm_window_class_init(SmWindowClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    oc->dispose = sm_window_dispose;
    oc->finalize = sm_window_finalize;
    oc->set_property = sm_window_set_property;
    oc->get_property = sm_window_get_property;
    oc->constructed = sm_window_constructed;
    props[PROP_CLUSTER] = g_param_spec_object("cluster", NULL, NULL, SM_TYPE_CLUSTER,
                                              G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                  G_PARAM_STATIC_STRINGS);
    props[PROP_CLIENT] = g_param_spec_object("client", NULL, NULL, SM_TYPE_CLIENT,
                                             G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                 G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(oc, N_PROPS, props);
    g_type_ensure(SM_TYPE_REPLICA_BAR);
    gtk_widget_class_set_template_from_resource(wc, "/org/samsa/Monitor/sm-window.ui");
    gtk_widget_class_bind_template_child(wc, SmWindow, stack);
    gtk_widget_class_bind_template_child(wc, SmWindow, toasts);
    gtk_widget_class_bind_template_child(wc, SmWindow, status_label);
    gtk_widget_class_bind_template_child(wc, SmWindow, summary_label);
    gtk_widget_class_bind_template_child(wc, SmWindow, health_label);
    gtk_widget_class_bind_template_child(wc, SmWindow, problems_expander);
    gtk_widget_class_bind_template_child(wc, SmWindow, problems_list);
    gtk_widget_class_bind_template_child(wc, SmWindow, brokers_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, topics_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, partitions_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, groups_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, members_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, members_label);
    gtk_widget_class_bind_template_child(wc, SmWindow, events_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, configs_expander);
    gtk_widget_class_bind_template_child(wc, SmWindow, messages_box);
    gtk_widget_class_bind_template_child(wc, SmWindow, new_topic_button);
    gtk_widget_class_bind_template_child(wc, SmWindow, delete_topic_button);
    gtk_widget_class_bind_template_child(wc, SmWindow, reset_offsets_button);
    gtk_widget_class_bind_template_child(wc, SmWindow, abort_txn_button);
    gtk_widget_class_bind_template_child(wc, SmWindow, transactions_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, moves_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, quotas_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, quota_rates_view);
    gtk_widget_class_bind_template_child(wc, SmWindow, configs_label);
    gtk_widget_class_bind_template_child(wc, SmWindow, event_kind);
    gtk_widget_class_bind_template_child(wc, SmWindow, event_search);
    gtk_widget_class_bind_template_child(wc, SmWindow, topic_search);
    gtk_widget_class_bind_template_child(wc, SmWindow, topic_choice);
    gtk_widget_class_bind_template_child(wc, SmWindow, charts_box);
    gtk_widget_class_bind_template_child(wc, SmWindow, lag_box);
}

static void sm_window_init(SmWindow *self)
{
    gtk_widget_init_template(GTK_WIDGET(self));
    self->lag_chart = SM_CHART(sm_chart_new(SM_CHART_LAG, FALSE));
    gtk_widget_set_hexpand(GTK_WIDGET(self->lag_chart), TRUE);
    sm_chart_set_title(self->lag_chart, "lag of the chosen group");
    gtk_box_append(self->lag_box, GTK_WIDGET(self->lag_chart));
}
