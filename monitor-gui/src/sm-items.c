/* sm-items.c: the rows of samsa-monitor's lists (see sm-items.h). */
#include "sm-items.h"

#include <string.h>

static guint broker_changed, partition_changed, topic_changed, group_changed;

static guint new_changed_signal(GType type)
{
    return g_signal_new("changed", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

void sm_item_emit_changed(gpointer item)
{
    guint id = 0;
    if (SM_IS_BROKER(item)) {
        id = broker_changed;
    } else if (SM_IS_PARTITION(item)) {
        id = partition_changed;
    } else if (SM_IS_TOPIC(item)) {
        id = topic_changed;
    } else if (SM_IS_GROUP(item)) {
        id = group_changed;
    } else {
        return;
    }
    g_signal_emit(item, id, 0);
}

/* ------------------------------------------------------------ broker */

G_DEFINE_FINAL_TYPE(SmBroker, sm_broker, G_TYPE_OBJECT)

static void sm_broker_finalize(GObject *object)
{
    SmBroker *self = SM_BROKER(object);
    g_free(self->host);
    g_free(self->admin_url);
    g_free(self->rack);
    g_free(self->link);
    G_OBJECT_CLASS(sm_broker_parent_class)->finalize(object);
}

static void sm_broker_class_init(SmBrokerClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_broker_finalize;
    broker_changed = new_changed_signal(SM_TYPE_BROKER);
}

static void sm_broker_init(SmBroker *self)
{
    self->id = -1;
}

/* ------------------------------------------------------------ partition */

G_DEFINE_FINAL_TYPE(SmPartition, sm_partition, G_TYPE_OBJECT)

static void sm_partition_finalize(GObject *object)
{
    SmPartition *self = SM_PARTITION(object);
    g_free(self->topic);
    g_array_unref(self->replicas);
    g_array_unref(self->isr);
    G_OBJECT_CLASS(sm_partition_parent_class)->finalize(object);
}

static void sm_partition_class_init(SmPartitionClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_partition_finalize;
    partition_changed = new_changed_signal(SM_TYPE_PARTITION);
}

static void sm_partition_init(SmPartition *self)
{
    self->leader = -1;
    self->leader_epoch = -1;
    self->high_watermark = SM_OFFSET_UNKNOWN;
    self->log_start_offset = SM_OFFSET_UNKNOWN;
    self->log_end_offset = SM_OFFSET_UNKNOWN;
    self->size_bytes = SM_OFFSET_UNKNOWN;
    self->view_of = -1;
    self->replicas = g_array_new(FALSE, TRUE, sizeof(SmReplica));
    self->isr = g_array_new(FALSE, TRUE, sizeof(gint32));
}

gboolean sm_partition_in_isr(const SmPartition *self, gint32 broker)
{
    for (guint i = 0; i < self->isr->len; i++) {
        if (g_array_index(self->isr, gint32, i) == broker) {
            return TRUE;
        }
    }
    return FALSE;
}

guint sm_partition_under_replicated(const SmPartition *self)
{
    return self->isr->len < self->replicas->len ? 1 : 0;
}

char *sm_format_count(gint64 n)
{
    char digits[32];
    (void)g_snprintf(digits, sizeof digits, "%" G_GINT64_FORMAT, n < 0 ? -n : n);
    size_t len = strlen(digits);
    GString *s = g_string_sized_new(len + len / 3 + 2);
    if (n < 0) {
        g_string_append_c(s, '-');
    }
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) {
            g_string_append_c(s, ',');
        }
        g_string_append_c(s, digits[i]);
    }
    return g_string_free(s, FALSE);
}

/* ------------------------------------------------------------ series */

void sm_series_push(SmSeries *s, gint64 from_ms, gint64 to_ms, double value, gboolean known)
{
    SmPoint *p = &s->points[s->head];
    p->from_ms = from_ms;
    p->to_ms = to_ms;
    p->value = known ? value : 0;
    p->known = known;
    s->head = (s->head + 1) % SM_SERIES_MAX;
    s->n = MIN(s->n + 1, (guint)SM_SERIES_MAX);
}

const SmPoint *sm_series_get(const SmSeries *s, guint i)
{
    if (i >= s->n) {
        return NULL;
    }
    return &s->points[(s->head + SM_SERIES_MAX - s->n + i) % SM_SERIES_MAX];
}

const SmPoint *sm_series_last(const SmSeries *s)
{
    return s->n > 0 ? sm_series_get(s, s->n - 1) : NULL;
}

void sm_series_replace_last(SmSeries *s, gint64 from_ms, gint64 to_ms, double value)
{
    if (s->n == 0) {
        sm_series_push(s, from_ms, to_ms, value, TRUE);
        return;
    }
    SmPoint *p = &s->points[(s->head + SM_SERIES_MAX - 1) % SM_SERIES_MAX];
    p->from_ms = MIN(p->from_ms, from_ms);
    p->to_ms = MAX(p->to_ms, to_ms);
    p->value = value;
    p->known = TRUE;
}

double sm_series_peak(const SmSeries *s)
{
    double peak = 0;
    for (guint i = 0; i < s->n; i++) {
        const SmPoint *p = sm_series_get(s, i);
        if (p->known) {
            peak = MAX(peak, p->value);
        }
    }
    return peak;
}

gint64 sm_series_span_ms(const SmSeries *s)
{
    if (s->n == 0) {
        return 0;
    }
    return MAX(sm_series_last(s)->to_ms - sm_series_get(s, 0)->from_ms, 0);
}

char *sm_format_span(gint64 ms)
{
    gint64 sec = (ms + 500) / 1000;
    if (sec < 90) {
        return g_strdup_printf("%d s", (int)MAX(sec, 1));
    }
    gint64 min = (sec + 30) / 60;
    if (min < 90) {
        return g_strdup_printf("%d minutes", (int)min);
    }
    return g_strdup_printf("%d hours", (int)((min + 30) / 60));
}

char *sm_format_value(double value, SmUnit unit)
{
    double v = MAX(value, 0);
    if (unit == SM_UNIT_BYTES_PER_S) {
        g_autofree char *size = g_format_size((guint64)(v + 0.5));
        return g_strconcat(size, "/s", NULL);
    }
    if (unit == SM_UNIT_PER_S && v < 10) {
        return g_strdup_printf("%.1f/s", v);
    }
    g_autofree char *count = sm_format_count((gint64)(MIN(v, 1e18) + 0.5));
    return unit == SM_UNIT_PER_S ? g_strconcat(count, "/s", NULL) : g_steal_pointer(&count);
}

static const SmPoint *last_known(const SmSeries *s)
{
    for (guint i = s->n; i > 0; i--) {
        const SmPoint *p = sm_series_get(s, i - 1);
        if (p->known) {
            return p;
        }
    }
    return NULL;
}

char *sm_series_format_last(const SmSeries *s, SmUnit unit)
{
    const SmPoint *p = sm_series_last(s);
    return p != NULL && p->known ? sm_format_value(p->value, unit) : g_strdup("—");
}

char *sm_series_describe(const SmSeries *s, const char *title, SmUnit unit)
{
    const SmPoint *p = last_known(s);
    if (p == NULL) {
        return g_strdup_printf("%s: no readings yet", title);
    }
    g_autofree char *span = sm_format_span(sm_series_span_ms(s));
    g_autofree char *peak = sm_format_value(sm_series_peak(s), unit);
    const SmPoint *last = sm_series_last(s);
    if (!last->known) {
        /* a gap of no length: the broker not heard (sm_cluster_broker_unheard) */
        return g_strdup_printf("%s: no rate for the last reading (%s), peak %s over the last %s",
                               title,
                               last->from_ms == last->to_ms ? "the broker is not heard"
                                                            : "a counter went down",
                               peak, span);
    }
    g_autofree char *now = sm_format_value(p->value, unit);
    return g_strdup_printf("%s: %s over the last %s, peak %s", title, now, span, peak);
}

static char *join_ids(const gint32 *ids, guint n)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        g_string_append_printf(s, i > 0 ? ", %d" : "%d", (int)ids[i]);
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_format_replicas(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->replicas->len; i++) {
        g_string_append_printf(s, i > 0 ? ", %d" : "%d",
                               (int)g_array_index(self->replicas, SmReplica, i).broker);
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_format_isr(const SmPartition *self)
{
    return join_ids((const gint32 *)(const void *)self->isr->data, self->isr->len);
}

char *sm_partition_format_osr(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    gboolean first = TRUE;
    for (guint i = 0; i < self->replicas->len; i++) {
        gint32 b = g_array_index(self->replicas, SmReplica, i).broker;
        if (!sm_partition_in_isr(self, b)) {
            g_string_append_printf(s, first ? "%d" : ", %d", (int)b);
            first = FALSE;
        }
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_describe_replica(const SmPartition *self, guint i)
{
    g_return_val_if_fail(i < self->replicas->len, NULL);
    const SmReplica *r = &g_array_index(self->replicas, SmReplica, i);
    gboolean in_isr = sm_partition_in_isr(self, r->broker);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "replica %d: ", (int)r->broker);
    if (r->broker == self->leader) {
        g_string_append(s, "leader, ");
    }
    if (r->offline) {
        g_string_append(s, "offline, ");
    }
    g_string_append(s, in_isr ? "in sync" : "out of sync");
    if (r->log_end_offset == SM_OFFSET_UNKNOWN || self->high_watermark == SM_OFFSET_UNKNOWN) {
        g_string_append(s, ", log end offset unknown");
    } else {
        gint64 d = self->high_watermark - r->log_end_offset;
        g_autofree char *n = sm_format_count(d < 0 ? -d : d);
        if (r->last_known) {
            g_string_append(s, ", last known");
        }
        if (d > 0) {
            g_string_append_printf(s, ", %s behind the high watermark", n);
        } else if (d < 0) {
            g_string_append_printf(s, ", %s ahead of the high watermark", n);
        } else {
            g_string_append(s, ", at the high watermark");
        }
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_describe(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->replicas->len; i++) {
        g_autofree char *one = sm_partition_describe_replica(self, i);
        if (i > 0) {
            g_string_append(s, "; ");
        }
        g_string_append(s, one);
    }
    return g_string_free(s, FALSE);
}

/* ------------------------------------------------------------ topic */

G_DEFINE_FINAL_TYPE(SmTopic, sm_topic, G_TYPE_OBJECT)

static void sm_topic_finalize(GObject *object)
{
    SmTopic *self = SM_TOPIC(object);
    g_free(self->name);
    g_ptr_array_unref(self->parts);
    g_clear_object(&self->partitions);
    G_OBJECT_CLASS(sm_topic_parent_class)->finalize(object);
}

static void sm_topic_class_init(SmTopicClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_topic_finalize;
    topic_changed = new_changed_signal(SM_TYPE_TOPIC);
}

static void sm_topic_init(SmTopic *self)
{
    self->min_insync_replicas = -1;
    self->parts = g_ptr_array_new_with_free_func(g_object_unref);
    self->partitions = g_list_store_new(SM_TYPE_PARTITION);
}

GListModel *sm_topic_get_partitions(SmTopic *self)
{
    return G_LIST_MODEL(self->partitions);
}

/* ------------------------------------------------------------ group */

G_DEFINE_FINAL_TYPE(SmMember, sm_member, G_TYPE_OBJECT)

static void sm_member_finalize(GObject *object)
{
    SmMember *self = SM_MEMBER(object);
    g_free(self->member_id);
    g_free(self->client_id);
    g_free(self->host);
    g_free(self->assignment);
    G_OBJECT_CLASS(sm_member_parent_class)->finalize(object);
}

static void sm_member_class_init(SmMemberClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_member_finalize;
}

static void sm_member_init(SmMember *self)
{
    (void)self;
}

G_DEFINE_FINAL_TYPE(SmGroup, sm_group, G_TYPE_OBJECT)

static void clear_offset(gpointer p)
{
    g_free(((SmGroupOffset *)p)->topic);
}

static void sm_group_finalize(GObject *object)
{
    SmGroup *self = SM_GROUP(object);
    g_free(self->group_id);
    g_free(self->state);
    g_free(self->protocol);
    g_array_unref(self->offsets);
    g_object_unref(self->member_list);
    G_OBJECT_CLASS(sm_group_parent_class)->finalize(object);
}

static void sm_group_class_init(SmGroupClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_group_finalize;
    group_changed = new_changed_signal(SM_TYPE_GROUP);
}

static void sm_group_init(SmGroup *self)
{
    self->coordinator = -1;
    self->offsets = g_array_new(FALSE, TRUE, sizeof(SmGroupOffset));
    g_array_set_clear_func(self->offsets, clear_offset);
    self->member_list = g_list_store_new(SM_TYPE_MEMBER);
}

/* ------------------------------------------------------------ event */

G_DEFINE_FINAL_TYPE(SmEvent, sm_event, G_TYPE_OBJECT)

static void sm_event_finalize(GObject *object)
{
    SmEvent *self = SM_EVENT(object);
    g_free(self->topic);
    g_free(self->text);
    G_OBJECT_CLASS(sm_event_parent_class)->finalize(object);
}

static void sm_event_class_init(SmEventClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_event_finalize;
}

static void sm_event_init(SmEvent *self)
{
    self->partition = -1;
}

const char *sm_event_kind_name(SmEventKind kind)
{
    switch (kind) {
    case SM_EVENT_ISR_SHRINK:
        return "ISR shrink";
    case SM_EVENT_ISR_EXPAND:
        return "ISR expand";
    case SM_EVENT_ISR_CHANGE:
        return "ISR change";
    case SM_EVENT_LEADER_CHANGE:
        return "leader change";
    case SM_EVENT_BROKER_DOWN:
        return "broker gone";
    case SM_EVENT_BROKER_UP:
        return "broker up";
    case SM_EVENT_CONTROLLER_CHANGE:
        return "controller change";
    case SM_EVENT_TOPIC_CREATED:
        return "topic created";
    case SM_EVENT_TOPIC_DELETED:
        return "topic deleted";
    }
    return "event";
}

gboolean sm_event_is_alert(const SmEvent *self)
{
    return self->kind == SM_EVENT_ISR_SHRINK || self->kind == SM_EVENT_BROKER_DOWN ||
           self->kind == SM_EVENT_LEADER_CHANGE;
}
