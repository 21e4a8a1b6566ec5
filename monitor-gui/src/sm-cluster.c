/* sm-cluster.c: one cluster's model, assembled from its brokers' admin API
 * documents and streams (see sm-cluster.h). */
#include "sm-cluster.h"

#include <string.h>

#define MAX_EVENTS 1000
#define MAX_PARTITIONS_PER_TOPIC 100000 /* a bound on a partition number we believe */
#define MAX_REPLICAS SM_PROGRESS_MAX_REPLICAS
#define DEDUP_WINDOW_MS 30000
/* the changes one broker lost or back brings (its going, the leaders moved
 * off it, the ISRs it leaves) come within seconds of each other: within a
 * minute of the first they are one group */
#define GROUP_WINDOW_MS 60000
#define MAX_MEMBERS 10000 /* a group's members we show */
#define MAX_CONFIGS 1000  /* a topic's configs we show */
#define MAX_TRANSACTIONS 10000 /* transactional ids we show of one coordinator */
#define MAX_TXN_PARTITIONS 1000 /* an open transaction's partitions we name */
#define MAX_MOVES 100000 /* partition moves we show of one document */
#define MAX_QUOTAS 10000 /* quota entities and rates we show of one broker */
/* two readings further apart than this give no rate: an average over a
 * link lost for minutes would draw a flat line where nothing was seen */
#define MAX_RATE_INTERVAL_MS 60000

struct _SmCluster {
    GObject parent_instance;
    GListStore *brokers;   /* SmBroker, by id */
    GListStore *topics;    /* SmTopic, by name */
    GListStore *groups;    /* SmGroup, by id */
    GListStore *transactions; /* SmTransaction, by id */
    GListStore *moves;     /* SmPartition being moved, by topic and partition */
    GListStore *quotas;    /* SmQuota, by key */
    GListStore *quota_rates; /* SmQuotaRate, by key */
    GListStore *events;    /* SmEvent, newest first */
    GHashTable *broker_by_id;  /* GINT_TO_POINTER(id) -> SmBroker (borrowed from brokers_all) */
    GPtrArray *brokers_all;    /* SmBroker *, owned */
    GHashTable *topic_by_name; /* name -> SmTopic, owned */
    GHashTable *group_by_id;   /* id -> SmGroup, owned */
    GHashTable *txn_by_id;     /* transactional id -> SmTransaction, owned */
    GHashTable *moving;        /* SmPartition -> itself, referenced: those with a target */
    GHashTable *quota_by_key;  /* key -> SmQuota, owned */
    GHashTable *rate_by_key;   /* key -> SmQuotaRate, owned */
    GHashTable *dirty;         /* row -> row, referenced */
    GPtrArray *new_events;     /* SmEvent * made since the flush ("event" at the flush) */
    GPtrArray *new_rows;       /* SmEvent * rows (events or groups) for the flush's splice */
    GHashTable *open_groups;   /* "lost/2", "back/2" -> the row (event or group), referenced */
    GHashTable *seen_events;   /* dedup key -> time_ms (boxed in the pointer) */
    gboolean brokers_moved, topics_moved, groups_moved, txns_moved;
    gboolean moves_moved, quotas_moved;
    gboolean is_dirty;
    gboolean flushing; /* within sm_cluster_flush */
    SmClusterSummary summary;
    SmRates rates; /* the sum of the brokers' */
};

enum { SIG_DIRTY, SIG_FLUSHED, SIG_EVENT, SIG_ADMIN_URL, SIG_WANTS_PARTITIONS, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(SmCluster, sm_cluster, G_TYPE_OBJECT)

/* ------------------------------------------------------------ JSON, read defensively */

static gint64 get_int(JsonObject *o, const char *key, gint64 dflt)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, key) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n)) {
        return dflt;
    }
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_INT64) {
        return json_node_get_int(n);
    }
    if (t == G_TYPE_DOUBLE) {
        return (gint64)json_node_get_double(n);
    }
    return dflt;
}

static gint32 get_id(JsonObject *o, const char *key, gint32 dflt)
{
    gint64 v = get_int(o, key, dflt);
    return v < G_MININT32 || v > G_MAXINT32 ? dflt : (gint32)v;
}

static gboolean get_bool(JsonObject *o, const char *key, gboolean dflt)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, key) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_BOOLEAN) {
        return dflt;
    }
    return json_node_get_boolean(n);
}

/* (transfer none) NULL unless a string */
static const char *get_str(JsonObject *o, const char *key)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, key) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING) {
        return NULL;
    }
    return json_node_get_string(n);
}

/* (transfer none) NULL unless an object */
static JsonObject *get_object(JsonObject *o, const char *key)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, key) : NULL;
    return n != NULL && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

/* (transfer none) NULL unless an array */
static JsonArray *get_array(JsonObject *o, const char *key)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, key) : NULL;
    return n != NULL && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

static JsonObject *array_object(JsonArray *a, guint i)
{
    JsonNode *n = json_array_get_element(a, i);
    return n != NULL && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

static void read_ids(JsonArray *a, GArray *out)
{
    g_array_set_size(out, 0);
    guint n = a != NULL ? MIN(json_array_get_length(a), MAX_REPLICAS) : 0;
    for (guint i = 0; i < n; i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (e != NULL && JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_INT64) {
            gint64 v = json_node_get_int(e);
            if (v >= 0 && v <= G_MAXINT32) {
                gint32 id = (gint32)v;
                g_array_append_val(out, id);
            }
        }
    }
}

static gboolean same_ids(const GArray *a, const GArray *b)
{
    return a->len == b->len &&
           (a->len == 0 || memcmp(a->data, b->data, a->len * sizeof(gint32)) == 0);
}

static gboolean set_str(char **field, const char *value)
{
    if (g_strcmp0(*field, value) == 0) {
        return FALSE;
    }
    g_free(*field);
    *field = g_strdup(value);
    return TRUE;
}

/* ------------------------------------------------------------ rows */

static void mark(SmCluster *self, gpointer row)
{
    if (row != NULL && !g_hash_table_contains(self->dirty, row)) {
        g_hash_table_add(self->dirty, g_object_ref(row));
    }
    if (!self->is_dirty) {
        self->is_dirty = TRUE;
        g_signal_emit(self, signals[SIG_DIRTY], 0);
    }
}

static SmBroker *ensure_broker(SmCluster *self, gint32 id)
{
    SmBroker *b = g_hash_table_lookup(self->broker_by_id, GINT_TO_POINTER(id));
    if (b == NULL) {
        b = g_object_new(SM_TYPE_BROKER, NULL);
        b->id = id;
        g_ptr_array_add(self->brokers_all, b);
        g_hash_table_insert(self->broker_by_id, GINT_TO_POINTER(id), b);
        self->brokers_moved = TRUE;
        mark(self, NULL);
    }
    return b;
}

static void broker_admin_url(SmCluster *self, SmBroker *b, const char *url)
{
    if (url != NULL && set_str(&b->admin_url, url)) {
        mark(self, b);
        g_signal_emit(self, signals[SIG_ADMIN_URL], 0, (gint)b->id, url);
    }
}

static SmTopic *ensure_topic(SmCluster *self, const char *name)
{
    SmTopic *t = g_hash_table_lookup(self->topic_by_name, name);
    if (t == NULL) {
        t = g_object_new(SM_TYPE_TOPIC, NULL);
        t->name = g_strdup(name);
        g_hash_table_insert(self->topic_by_name, t->name, t);
        self->topics_moved = TRUE;
        mark(self, NULL);
    }
    return t;
}

static SmPartition *ensure_partition(SmCluster *self, SmTopic *t, gint32 p)
{
    if (p < 0 || p >= MAX_PARTITIONS_PER_TOPIC) {
        return NULL;
    }
    while (t->parts->len <= (guint)p) {
        SmPartition *np = g_object_new(SM_TYPE_PARTITION, NULL);
        np->topic = g_strdup(t->name);
        np->partition = (gint32)t->parts->len;
        np->throttled = sm_topic_throttled_on(t, np->partition);
        g_ptr_array_add(t->parts, np);
        mark(self, t); /* the flush splices the new rows in */
    }
    return g_ptr_array_index(t->parts, p);
}

SmBroker *sm_cluster_find_broker(SmCluster *self, gint32 id)
{
    return g_hash_table_lookup(self->broker_by_id, GINT_TO_POINTER(id));
}

SmTopic *sm_cluster_find_topic(SmCluster *self, const char *name)
{
    return name != NULL ? g_hash_table_lookup(self->topic_by_name, name) : NULL;
}

SmPartition *sm_cluster_find_partition(SmCluster *self, const char *topic, gint32 partition)
{
    SmTopic *t = sm_cluster_find_topic(self, topic);
    if (t == NULL || partition < 0 || (guint)partition >= t->parts->len) {
        return NULL;
    }
    return g_ptr_array_index(t->parts, partition);
}

/* ------------------------------------------------------------ events */

/* the row open for what broker subject lost (or back) brought at t_ms */
static SmEvent *open_row(SmCluster *self, gint32 subject, gboolean lost, gint64 t_ms)
{
    char key[32];
    (void)g_snprintf(key, sizeof key, "%s/%d", lost ? "lost" : "back", (int)subject);
    SmEvent *row = g_hash_table_lookup(self->open_groups, key);
    return row != NULL && ABS(t_ms - row->time_ms) <= GROUP_WINDOW_MS ? row : NULL;
}

/* row, shown or waiting for the flush, replaced by with */
static void replace_row(SmCluster *self, SmEvent *row, SmEvent *with)
{
    guint i = 0;
    if (g_ptr_array_find(self->new_rows, row, &i)) {
        g_object_unref(self->new_rows->pdata[i]);
        self->new_rows->pdata[i] = g_object_ref(with);
    } else if (g_list_store_find(self->events, row, &i)) {
        gpointer items[] = {with};
        g_list_store_splice(self->events, i, 1, items, 1);
    }
}

/* e's row: its own, or under the group of what broker subject lost (or
 * back) brought; the first such change stays a row of its own until a
 * second joins it (subject -1: no broker's) */
static void place_event(SmCluster *self, SmEvent *e, gint32 subject, gboolean lost)
{
    SmEvent *row = subject >= 0 ? open_row(self, subject, lost, e->time_ms) : NULL;
    if (row == NULL) {
        g_ptr_array_add(self->new_rows, g_object_ref(e));
        if (subject >= 0) {
            g_hash_table_replace(self->open_groups,
                                 g_strdup_printf("%s/%d", lost ? "lost" : "back", (int)subject),
                                 g_object_ref(e));
        }
        return;
    }
    if (!sm_event_is_group(row)) {
        SmEvent *g = sm_event_new_group(subject, lost, row);
        replace_row(self, row, g);
        g_hash_table_replace(self->open_groups,
                             g_strdup_printf("%s/%d", lost ? "lost" : "back", (int)subject), g);
        row = g;
    }
    sm_event_group_add(row, e);
    mark(self, row);
}

static void add_event(SmCluster *self, SmEventKind kind, JsonObject *ev, const char *key,
                      char *text /* taken */, gint32 subject, gboolean lost)
{
    gint64 t = get_int(ev, "time_ms", 0);
    gpointer was = NULL;
    if (key != NULL && g_hash_table_lookup_extended(self->seen_events, key, NULL, &was)) {
        gint64 then = *(gint64 *)was;
        if (t - then < DEDUP_WINDOW_MS && then - t < DEDUP_WINDOW_MS) {
            g_free(text); /* another broker's report of the same change */
            return;
        }
    }
    if (key != NULL) {
        gint64 *at = g_new(gint64, 1);
        *at = t;
        g_hash_table_replace(self->seen_events, g_strdup(key), at);
    }
    SmEvent *e = g_object_new(SM_TYPE_EVENT, NULL);
    e->kind = kind;
    e->time_ms = t;
    e->reported_by = get_id(ev, "broker", -1);
    e->topic = g_strdup(get_str(ev, "topic"));
    e->partition = get_id(ev, "partition", -1);
    e->text = text;
    g_ptr_array_add(self->new_events, e);
    place_event(self, e, subject, lost);
    mark(self, NULL);
}

static char *ids_text(const GArray *ids)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < ids->len; i++) {
        g_string_append_printf(s, i > 0 ? ", %d" : "%d", (int)g_array_index(ids, gint32, i));
    }
    return g_string_free(s, FALSE);
}

/* ------------------------------------------------------------ partitions */

static void read_replica(JsonObject *o, SmReplica *r)
{
    r->broker = get_id(o, "broker", -1);
    r->log_end_offset = get_int(o, "log_end_offset", SM_OFFSET_UNKNOWN);
    r->lag = get_int(o, "lag", SM_OFFSET_UNKNOWN);
    r->since_caught_up_ms = get_int(o, "time_since_caught_up_ms", SM_OFFSET_UNKNOWN);
    r->in_sync = get_bool(o, "in_sync", FALSE);
    r->offline = get_bool(o, "offline", FALSE);
    r->last_known = FALSE;
}

/* r's LEO unknown in the leader's own view while the model knew one: the
 * replica's broker is gone (the leader forgets a follower whose session
 * expired, Kafka 2.0's Partition.updateAssignmentAndIsr /
 * ReplicaManager's offline replicas): its last known LEO and "offline",
 * not an empty track like an empty partition's */
static void keep_last_known(SmReplica *r, const SmReplica *old)
{
    if (r->log_end_offset == SM_OFFSET_UNKNOWN && old->log_end_offset != SM_OFFSET_UNKNOWN) {
        r->log_end_offset = old->log_end_offset;
        r->lag = old->lag;
        r->offline = TRUE;
        r->last_known = TRUE;
    }
}

/* the replicas of a document, keeping what the old view knew of an
 * offset the new one does not */
static void take_replicas(SmPartition *p, JsonArray *a, gboolean full)
{
    guint n = a != NULL ? MIN(json_array_get_length(a), MAX_REPLICAS) : 0;
    GArray *next = g_array_sized_new(FALSE, TRUE, sizeof(SmReplica), n);
    for (guint i = 0; i < n; i++) {
        SmReplica r;
        read_replica(array_object(a, i), &r);
        if (r.broker < 0) {
            continue;
        }
        for (guint k = 0; k < p->replicas->len; k++) {
            const SmReplica *old = &g_array_index(p->replicas, SmReplica, k);
            if (old->broker != r.broker) {
                continue;
            }
            if (full) {
                keep_last_known(&r, old);
            } else if (r.log_end_offset == SM_OFFSET_UNKNOWN) {
                r.log_end_offset = old->log_end_offset;
                r.lag = old->lag;
                r.offline = old->offline;
                r.last_known = old->last_known;
            }
        }
        g_array_append_val(next, r);
    }
    g_array_unref(p->replicas);
    p->replicas = next;
}

static void sync_in_sync_flags(SmPartition *p)
{
    for (guint i = 0; i < p->replicas->len; i++) {
        SmReplica *r = &g_array_index(p->replicas, SmReplica, i);
        r->in_sync = sm_partition_in_isr(p, r->broker);
    }
}

/* a JSON array's strings (the first max) joined by ", "; NULL when none */
static char *join_strings(JsonArray *a, guint max)
{
    GString *s = g_string_new(NULL);
    guint n = MIN(json_array_get_length(a), max);
    for (guint i = 0; i < n; i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (e != NULL && JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING) {
            g_string_append_printf(s, "%s%s", s->len > 0 ? ", " : "", json_node_get_string(e));
        }
    }
    if (s->len == 0) {
        g_string_free(s, TRUE);
        return NULL;
    }
    return g_string_free(s, FALSE);
}

/* p's move: the replicas it moves to (NULL or empty: not moving) */
static void set_target(SmCluster *self, SmPartition *p, JsonArray *target)
{
    g_autoptr(GArray) ids = g_array_new(FALSE, TRUE, sizeof(gint32));
    read_ids(target, ids);
    if (same_ids(ids, p->target)) {
        return;
    }
    g_array_set_size(p->target, 0);
    g_array_append_vals(p->target, ids->data, ids->len);
    gboolean was = g_hash_table_contains(self->moving, p);
    if (ids->len > 0 && !was) {
        g_hash_table_add(self->moving, g_object_ref(p));
        self->moves_moved = TRUE;
    } else if (ids->len == 0 && was) {
        g_hash_table_remove(self->moving, p);
        self->moves_moved = TRUE;
    }
    mark(self, p);
}

/* /v1/reassignments: every move under way (the znode every broker
 * watches); a partition it does not list is not moving. A partition the
 * model does not know yet is left to its own document, which carries its
 * "reassignment" too: no topic is made up from a move. */
static void apply_reassignments_doc(SmCluster *self, JsonObject *doc)
{
    JsonArray *a = get_array(doc, "reassignments");
    g_autoptr(GHashTable) listed = g_hash_table_new(NULL, NULL);
    guint n = a != NULL ? MIN(json_array_get_length(a), MAX_MOVES) : 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = array_object(a, i);
        const char *topic = get_str(o, "topic");
        gint32 pn = get_id(o, "partition", -1);
        JsonArray *target = get_array(o, "target");
        if (topic == NULL || target == NULL || json_array_get_length(target) == 0) {
            continue;
        }
        SmPartition *p = sm_cluster_find_partition(self, topic, pn);
        if (p != NULL) {
            set_target(self, p, target);
            g_hash_table_add(listed, p);
        }
    }
    g_autoptr(GPtrArray) done = g_ptr_array_new();
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, self->moving);
    while (g_hash_table_iter_next(&it, &k, NULL)) {
        if (!g_hash_table_contains(listed, k)) {
            g_ptr_array_add(done, k);
        }
    }
    for (guint i = 0; i < done->len; i++) {
        set_target(self, done->pdata[i], NULL);
    }
    mark(self, NULL);
}

/* A partition as a document shows it (source "leader" or "metadata"),
 * from broker `from`. */
static void apply_partition(SmCluster *self, JsonObject *d, gint32 from, gint64 taken_ms)
{
    const char *topic = get_str(d, "topic");
    gint32 pn = get_id(d, "partition", -1);
    gint32 epoch = get_id(d, "leader_epoch", -1);
    if (topic == NULL || pn < 0) {
        return;
    }
    SmTopic *t = ensure_topic(self, topic);
    SmPartition *p = ensure_partition(self, t, pn);
    if (p == NULL || epoch < p->leader_epoch) {
        return; /* an older epoch than the one shown */
    }
    gboolean led = get_bool(d, "led_here", FALSE);
    gboolean newer = epoch > p->leader_epoch;
    if (!newer && !led && p->full_view) {
        return; /* the leader's view of this epoch is the better one */
    }
    p->leader = get_id(d, "leader", -1);
    p->leader_epoch = epoch;
    read_ids(get_array(d, "isr"), p->isr);
    take_replicas(p, get_array(d, "replicas"), led);
    p->under_min_isr = get_bool(d, "under_min_isr", FALSE);
    gint64 hw = get_int(d, "high_watermark", SM_OFFSET_UNKNOWN);
    if (led || hw != SM_OFFSET_UNKNOWN) {
        p->high_watermark = hw;
        p->last_stable_offset = get_int(d, "last_stable_offset", SM_OFFSET_UNKNOWN);
        JsonArray *held = get_array(d, "open_transactions");
        if (held != NULL) {
            g_clear_pointer(&p->held_by, g_free);
            p->held_by = join_strings(held, MAX_TXN_PARTITIONS);
        }
        p->log_start_offset = get_int(d, "log_start_offset", SM_OFFSET_UNKNOWN);
        p->log_end_offset = get_int(d, "log_end_offset", SM_OFFSET_UNKNOWN);
        p->size_bytes = get_int(d, "size_bytes", SM_OFFSET_UNKNOWN);
    }
    p->full_view = led;
    p->view_of = from;
    p->updated_ms = taken_ms;
    JsonNode *move = json_object_get_member(d, "reassignment");
    if (move != NULL) {
        /* a broker that knows moves: null is none */
        set_target(self, p, JSON_NODE_HOLDS_OBJECT(move)
                                ? get_array(json_node_get_object(move), "target")
                                : NULL);
    }
    if (!led && p->leader >= 0) {
        /* the leader's own view is elsewhere: ask for it when its stream
         * has not given it yet */
        g_signal_emit(self, signals[SIG_WANTS_PARTITIONS], 0, (gint)p->leader, topic);
    }
    mark(self, p);
}

static gint cmp_strings(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* /v1/topics/{t}'s "configs" (name -> string, null for a secret one) */
static void apply_configs(SmCluster *self, SmTopic *t, JsonObject *configs, gint32 from)
{
    GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
    JsonObjectIter it;
    const char *key;
    JsonNode *v;
    const char *leader_throttled = get_str(configs, "leader.replication.throttled.replicas");
    const char *follower_throttled = get_str(configs, "follower.replication.throttled.replicas");
    /* "" is Kafka's default: none */
    gboolean throttles_moved = set_str(
        &t->leader_throttled,
        leader_throttled != NULL && leader_throttled[0] != '\0' ? leader_throttled : NULL);
    throttles_moved = set_str(&t->follower_throttled, follower_throttled != NULL &&
                                                          follower_throttled[0] != '\0'
                                                      ? follower_throttled
                                                      : NULL) ||
                      throttles_moved;
    if (throttles_moved) {
        for (guint i = 0; i < t->parts->len; i++) {
            SmPartition *p = g_ptr_array_index(t->parts, i);
            g_free(p->throttled);
            p->throttled = sm_topic_throttled_on(t, p->partition);
            mark(self, p);
        }
    }
    json_object_iter_init(&it, configs);
    while (json_object_iter_next(&it, &key, &v) && lines->len < MAX_CONFIGS) {
        const char *value = JSON_NODE_HOLDS_VALUE(v) &&
                                    json_node_get_value_type(v) == G_TYPE_STRING
                                ? json_node_get_string(v)
                                : NULL;
        g_ptr_array_add(lines, g_strdup_printf("%s = %s", key, value != NULL ? value : "(hidden)"));
    }
    g_ptr_array_sort(lines, cmp_strings);
    gboolean same = t->configs != NULL && t->configs->len == lines->len && t->configs_from == from;
    for (guint i = 0; same && i < lines->len; i++) {
        same = strcmp(t->configs->pdata[i], lines->pdata[i]) == 0;
    }
    if (same) {
        g_ptr_array_unref(lines);
        return;
    }
    g_clear_pointer(&t->configs, g_ptr_array_unref);
    t->configs = lines;
    t->configs_from = from;
    mark(self, t);
}

static void apply_partitions_doc(SmCluster *self, JsonObject *doc)
{
    JsonArray *a = get_array(doc, "partitions");
    gint32 from = get_id(doc, "broker", -1);
    JsonObject *snap = NULL;
    JsonNode *sn = json_object_get_member(doc, "snapshot");
    if (sn != NULL && JSON_NODE_HOLDS_OBJECT(sn)) {
        snap = json_node_get_object(sn);
    }
    gint64 taken = get_int(snap, "taken_ms", 0);
    const char *name = get_str(doc, "name");
    if (name != NULL) {
        SmTopic *t = ensure_topic(self, name);
        gint32 min_isr = get_id(doc, "min_insync_replicas", -1);
        gboolean internal = get_bool(doc, "internal", FALSE);
        if (t->min_insync_replicas != min_isr || t->internal != internal) {
            t->min_insync_replicas = min_isr;
            t->internal = internal;
            mark(self, t);
        }
    }
    JsonNode *cn = json_object_get_member(doc, "configs");
    if (name != NULL && cn != NULL && JSON_NODE_HOLDS_OBJECT(cn)) {
        apply_configs(self, ensure_topic(self, name), json_node_get_object(cn),
                      get_id(doc, "configs_from", -1));
    }
    guint n = a != NULL ? json_array_get_length(a) : 0;
    for (guint i = 0; i < n; i++) {
        apply_partition(self, array_object(a, i), from, taken);
    }
}

/* ------------------------------------------------------------ progress, digested */

/* one entry of a "progress" message from broker `from`; t is its topic
 * (NULL: not known here) */
static void apply_progress(SmCluster *self, const SmProgress *pr, const SmProgressEntry *e,
                           SmTopic *t)
{
    gint32 from = pr->broker;
    SmPartition *p = NULL;
    if (t != NULL && e->partition >= 0 && (guint)e->partition < t->parts->len) {
        p = g_ptr_array_index(t->parts, e->partition);
    }
    if (p == NULL) {
        if (e->topic != NULL) {
            g_signal_emit(self, signals[SIG_WANTS_PARTITIONS], 0, (gint)from, e->topic);
        }
        return;
    }
    const SmReplica *reps = e->n_replicas > 0
                                ? &g_array_index(pr->replicas, SmReplica, e->first_replica)
                                : NULL;
    if (!e->led_here) {
        /* a follower's own LEO; only while no leader's view is shown */
        if (p->full_view) {
            return;
        }
        for (guint i = 0; i < e->n_replicas; i++) {
            const SmReplica *r = &reps[i];
            for (guint k = 0; k < p->replicas->len && r->log_end_offset >= 0; k++) {
                SmReplica *have = &g_array_index(p->replicas, SmReplica, k);
                if (have->broker == r->broker) {
                    have->log_end_offset = r->log_end_offset;
                }
            }
        }
        if (e->high_watermark != SM_OFFSET_UNKNOWN) {
            p->high_watermark = e->high_watermark;
            p->last_stable_offset = e->last_stable_offset;
        }
        mark(self, p);
        return;
    }
    if (e->leader != from || p->leader != from) {
        /* from a leader whose epoch this model has not seen: its document has it */
        g_signal_emit(self, signals[SIG_WANTS_PARTITIONS], 0, (gint)from, e->topic);
        return;
    }
    p->high_watermark = e->high_watermark;
    p->last_stable_offset = e->last_stable_offset;
    if (!sm_partition_lso_held(p)) {
        /* whoever held it is done; the next document names a new one */
        g_clear_pointer(&p->held_by, g_free);
    }
    p->log_start_offset = e->log_start_offset;
    p->log_end_offset = e->log_end_offset;
    for (guint i = 0; i < e->n_replicas; i++) {
        const SmReplica *r = &reps[i];
        for (guint k = 0; k < p->replicas->len; k++) {
            SmReplica *have = &g_array_index(p->replicas, SmReplica, k);
            if (have->broker == r->broker) {
                SmReplica next = *have;
                next.log_end_offset = r->log_end_offset;
                next.lag = r->lag;
                next.since_caught_up_ms = r->since_caught_up_ms;
                next.in_sync = r->in_sync;
                /* progress carries no "offline": a LEO the leader reports is
                 * a replica it hears from (a document's flag from while the
                 * broker was gone is not kept); a null one keeps the last */
                if (r->log_end_offset != SM_OFFSET_UNKNOWN) {
                    next.offline = FALSE;
                }
                next.last_known = FALSE;
                keep_last_known(&next, have);
                *have = next;
            }
        }
    }
    /* the leader's in_sync flags are its ISR: keep the ISR's order when
     * the membership is the same */
    gboolean same = TRUE;
    guint in_sync = 0;
    for (guint k = 0; k < p->replicas->len; k++) {
        const SmReplica *r = &g_array_index(p->replicas, SmReplica, k);
        if (r->in_sync) {
            in_sync++;
            same = same && sm_partition_in_isr(p, r->broker);
        }
    }
    if (!same || in_sync != p->isr->len) {
        g_array_set_size(p->isr, 0);
        for (guint k = 0; k < p->replicas->len; k++) {
            const SmReplica *r = &g_array_index(p->replicas, SmReplica, k);
            if (r->in_sync) {
                g_array_append_val(p->isr, r->broker);
            }
        }
    }
    p->full_view = TRUE;
    p->view_of = from;
    p->updated_ms = pr->time_ms;
    mark(self, p);
}

void sm_cluster_apply_progress(SmCluster *self, const SmProgress *pr)
{
    g_return_if_fail(SM_IS_CLUSTER(self));
    /* a message lists a topic's partitions together: one lookup a run */
    const char *last = NULL;
    SmTopic *t = NULL;
    for (guint i = 0; i < pr->entries->len; i++) {
        const SmProgressEntry *e = &g_array_index(pr->entries, SmProgressEntry, i);
        if (e->topic != last) {
            last = e->topic;
            t = sm_cluster_find_topic(self, e->topic);
        }
        apply_progress(self, pr, e, t);
    }
}

static void apply_leader_change(SmCluster *self, JsonObject *ev, gint32 from)
{
    const char *topic = get_str(ev, "topic");
    gint32 pn = get_id(ev, "partition", -1);
    gint32 epoch = get_id(ev, "leader_epoch", -1);
    gint32 leader = get_id(ev, "leader", -1);
    if (topic == NULL || pn < 0) {
        return;
    }
    SmPartition *p = ensure_partition(self, ensure_topic(self, topic), pn);
    if (p == NULL) {
        return;
    }
    if (epoch > p->leader_epoch) {
        p->leader = leader;
        p->leader_epoch = epoch;
        p->full_view = FALSE;
        p->view_of = from;
        mark(self, p);
        if (leader >= 0) {
            g_signal_emit(self, signals[SIG_WANTS_PARTITIONS], 0, (gint)leader, topic);
        }
    }
    char key[300];
    (void)g_snprintf(key, sizeof key, "leader/%s/%d/%d", topic, (int)pn, (int)epoch);
    gint32 was = get_id(ev, "previous_leader", -1);
    if (leader == was) {
        /* a new epoch, the same leader (a controller's election that kept
         * it, an ISR change bumping the epoch): nothing an operator needs
         * in the timeline */
        return;
    }
    char *text = leader >= 0
                     ? g_strdup_printf("%s-%d: leader %d (was %d), epoch %d", topic, (int)pn,
                                       (int)leader, (int)was, (int)epoch)
                     : g_strdup_printf("%s-%d: no leader (was %d), epoch %d", topic, (int)pn,
                                       (int)was, (int)epoch);
    /* the leaders moved off a broker lost, or back to one back */
    gint64 t = get_int(ev, "time_ms", 0);
    gboolean lost = was >= 0 && open_row(self, was, TRUE, t) != NULL;
    gboolean back = !lost && leader >= 0 && open_row(self, leader, FALSE, t) != NULL;
    add_event(self, SM_EVENT_LEADER_CHANGE, ev, key, text, back ? leader : was, !back);
}

static void apply_isr_event(SmCluster *self, JsonObject *ev, gint32 from, SmEventKind kind)
{
    const char *topic = get_str(ev, "topic");
    gint32 pn = get_id(ev, "partition", -1);
    gint32 epoch = get_id(ev, "leader_epoch", -1);
    if (topic == NULL || pn < 0) {
        return;
    }
    SmPartition *p = ensure_partition(self, ensure_topic(self, topic), pn);
    if (p == NULL) {
        return;
    }
    g_autoptr(GArray) isr = g_array_new(FALSE, FALSE, sizeof(gint32));
    read_ids(get_array(ev, "isr"), isr);
    gint32 leader = get_id(ev, "leader", -1);
    /* the leader writes the ISR, so its report is the first and the
     * authority; another broker's is taken while no leader's view is shown */
    gboolean take = epoch > p->leader_epoch ||
                    (epoch == p->leader_epoch && (from == p->leader || !p->full_view));
    if (take && !same_ids(isr, p->isr)) {
        if (epoch > p->leader_epoch) {
            p->full_view = FALSE;
            p->leader = leader;
            p->leader_epoch = epoch;
        }
        g_array_set_size(p->isr, 0);
        g_array_append_vals(p->isr, isr->data, isr->len);
        sync_in_sync_flags(p);
        mark(self, p);
    }
    g_autoptr(GArray) removed = g_array_new(FALSE, FALSE, sizeof(gint32));
    g_autoptr(GArray) added = g_array_new(FALSE, FALSE, sizeof(gint32));
    read_ids(get_array(ev, "removed"), removed);
    read_ids(get_array(ev, "added"), added);
    g_autofree char *isr_s = ids_text(isr);
    g_autofree char *removed_s = ids_text(removed);
    g_autofree char *added_s = ids_text(added);
    char key[300];
    (void)g_snprintf(key, sizeof key, "isr/%s/%d/%d/%s", topic, (int)pn, (int)epoch, isr_s);
    char *text;
    if (kind == SM_EVENT_ISR_SHRINK) {
        text = g_strdup_printf("%s-%d: ISR shrank to [%s], replica %s out of sync", topic,
                               (int)pn, isr_s, removed_s);
    } else if (kind == SM_EVENT_ISR_EXPAND) {
        text = g_strdup_printf("%s-%d: ISR expanded to [%s], replica %s back in sync", topic,
                               (int)pn, isr_s, added_s);
    } else {
        text = g_strdup_printf("%s-%d: ISR now [%s]", topic, (int)pn, isr_s);
    }
    /* the replica that left (or came back to) the ISR */
    gint32 subject = -1;
    if (kind == SM_EVENT_ISR_SHRINK && removed->len > 0) {
        subject = g_array_index(removed, gint32, 0);
    } else if (kind == SM_EVENT_ISR_EXPAND && added->len > 0) {
        subject = g_array_index(added, gint32, 0);
    }
    add_event(self, kind, ev, key, text, subject, kind != SM_EVENT_ISR_EXPAND);
}

/* ------------------------------------------------------------ brokers and topics */

static void apply_broker_fields(SmCluster *self, SmBroker *b, JsonObject *o)
{
    gboolean moved = FALSE;
    moved |= set_str(&b->host, get_str(o, "host"));
    gint32 port = get_id(o, "port", b->port);
    moved |= port != b->port;
    b->port = port;
    moved |= set_str(&b->rack, get_str(o, "rack"));
    if (moved) {
        mark(self, b);
    }
    broker_admin_url(self, b, get_str(o, "admin_url"));
}

/* a broker not heard: its rates end now with a gap (its row says "—", its
 * sparkline stops, the cluster's sum leaves it), and its next reading
 * starts afresh, a rate needing two again */
static void end_rates(SmCluster *self, SmBroker *b)
{
    SmSeries *series[] = {&b->rates.messages_in, &b->rates.bytes_in, &b->rates.bytes_out};
    for (guint i = 0; i < G_N_ELEMENTS(series); i++) {
        const SmPoint *last = sm_series_last(series[i]);
        if (last != NULL && last->known) {
            sm_series_push(series[i], last->to_ms, last->to_ms, 0, FALSE);
        }
    }
    b->totals.taken_ms = 0;
    mark(self, b);
}

void sm_cluster_broker_unheard(SmCluster *self, gint32 id)
{
    SmBroker *b = sm_cluster_find_broker(self, id);
    if (b != NULL) {
        end_rates(self, b);
    }
}

static void set_alive(SmCluster *self, SmBroker *b, gboolean alive)
{
    if (b->alive != alive) {
        b->alive = alive;
        if (!alive) {
            end_rates(self, b);
        }
        mark(self, b);
    }
}

static void set_controller(SmCluster *self, gint32 controller)
{
    self->summary.controller = controller;
    for (guint i = 0; i < self->brokers_all->len; i++) {
        SmBroker *b = g_ptr_array_index(self->brokers_all, i);
        if (b->controller != (b->id == controller)) {
            b->controller = b->id == controller;
            mark(self, b);
        }
    }
    mark(self, NULL);
}

static void apply_cluster_doc(SmCluster *self, JsonObject *doc)
{
    const char *id = get_str(doc, "cluster_id");
    if (id != NULL && set_str(&self->summary.cluster_id, id)) {
        mark(self, NULL);
    }
    JsonArray *a = get_array(doc, "brokers");
    guint n = a != NULL ? MIN(json_array_get_length(a), 10000) : 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = array_object(a, i);
        gint32 bid = get_id(o, "id", -1);
        if (bid < 0) {
            continue;
        }
        SmBroker *b = ensure_broker(self, bid);
        apply_broker_fields(self, b, o);
        set_alive(self, b, get_bool(o, "alive", FALSE));
    }
    set_controller(self, get_id(doc, "controller", -1));
}

static void apply_topics_doc(SmCluster *self, JsonObject *doc)
{
    JsonArray *a = get_array(doc, "topics");
    guint n = a != NULL ? json_array_get_length(a) : 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = array_object(a, i);
        const char *name = get_str(o, "name");
        if (name == NULL) {
            continue;
        }
        SmTopic *t = ensure_topic(self, name);
        gboolean internal = get_bool(o, "internal", FALSE);
        if (t->internal != internal) {
            t->internal = internal;
            mark(self, t);
        }
    }
}

static SmGroup *ensure_group(SmCluster *self, const char *id)
{
    SmGroup *g = g_hash_table_lookup(self->group_by_id, id);
    if (g == NULL) {
        g = g_object_new(SM_TYPE_GROUP, NULL);
        g->group_id = g_strdup(id);
        g_hash_table_insert(self->group_by_id, g->group_id, g);
        self->groups_moved = TRUE;
        mark(self, NULL);
    }
    return g;
}

static void apply_group_summary(SmCluster *self, SmGroup *g, JsonObject *o, gint32 from)
{
    set_str(&g->state, get_str(o, "state"));
    set_str(&g->protocol, get_str(o, "protocol"));
    g->generation = get_id(o, "generation", -1);
    g->members = get_id(o, "members", 0);
    g->coordinator = from;
    g->lag = get_int(o, "lag", 0);
    mark(self, g);
}

static void apply_groups_doc(SmCluster *self, JsonObject *doc)
{
    JsonArray *a = get_array(doc, "groups");
    gint32 from = get_id(doc, "broker", -1);
    guint n = a != NULL ? json_array_get_length(a) : 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = array_object(a, i);
        const char *id = get_str(o, "group_id");
        if (id != NULL) {
            apply_group_summary(self, ensure_group(self, id), o, from);
        }
    }
}

static void free_string(gpointer s)
{
    g_string_free(s, TRUE);
}

/* /v1/transactions of broker `from`: its coordinator's ids, all of them;
 * an id of that broker no longer in it is gone (expired) */
static void apply_transactions_doc(SmCluster *self, JsonObject *doc)
{
    JsonArray *a = get_array(doc, "transactions");
    gint32 from = get_id(doc, "broker", -1);
    /* an age is the snapshot's; the document says how old that was when
     * it was served */
    gint64 served_after = MAX(get_int(get_object(doc, "snapshot"), "age_ms", 0), 0);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    /* the partitions each open transaction holds: a partition whose LSO
     * the stream moved behind its HW since its document names them */
    g_autoptr(GHashTable) holders = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                                          free_string);
    guint n = a != NULL ? MIN(json_array_get_length(a), MAX_TRANSACTIONS) : 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = array_object(a, i);
        const char *id = get_str(o, "transactional_id");
        if (id == NULL) {
            continue;
        }
        SmTransaction *x = g_hash_table_lookup(self->txn_by_id, id);
        if (x == NULL) {
            x = g_object_new(SM_TYPE_TRANSACTION, NULL);
            x->transactional_id = g_strdup(id);
            g_hash_table_insert(self->txn_by_id, x->transactional_id, x);
            self->txns_moved = TRUE;
        }
        g_hash_table_add(seen, x->transactional_id);
        set_str(&x->state, get_str(o, "state"));
        x->producer_id = get_int(o, "producer_id", -1);
        x->producer_epoch = get_id(o, "producer_epoch", -1);
        x->timeout_ms = get_id(o, "timeout_ms", -1);
        x->age_ms = get_int(o, "age_ms", -1);
        if (x->age_ms >= 0) {
            x->age_ms += served_after;
        }
        x->coordinator = from;
        GString *parts = g_string_new(NULL);
        JsonArray *pa = get_array(o, "partitions");
        guint np = pa != NULL ? MIN(json_array_get_length(pa), MAX_TXN_PARTITIONS) : 0;
        for (guint k = 0; k < np; k++) {
            JsonObject *tp = array_object(pa, k);
            const char *topic = get_str(tp, "topic");
            if (topic != NULL) {
                gint32 pn = get_id(tp, "partition", -1);
                g_string_append_printf(parts, "%s%s-%d", parts->len > 0 ? ", " : "", topic,
                                       (int)pn);
                SmPartition *held = sm_cluster_find_partition(self, topic, pn);
                if (held != NULL && sm_transaction_is_open(x)) {
                    GString *ids = g_hash_table_lookup(holders, held);
                    if (ids == NULL) {
                        ids = g_string_new(NULL);
                        g_hash_table_insert(holders, held, ids);
                    }
                    g_string_append_printf(ids, "%s%s", ids->len > 0 ? ", " : "", id);
                }
            }
        }
        g_free(x->partitions);
        x->partitions = g_string_free(parts, FALSE);
        mark(self, x);
    }
    GHashTableIter it;
    gpointer k;
    gpointer v;
    g_hash_table_iter_init(&it, holders);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        SmPartition *p = k;
        if (g_strcmp0(p->held_by, ((GString *)v)->str) != 0) {
            g_free(p->held_by);
            p->held_by = g_strdup(((GString *)v)->str);
            mark(self, p);
        }
    }
    g_hash_table_iter_init(&it, self->txn_by_id);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        SmTransaction *x = v;
        if (x->coordinator == from && !g_hash_table_contains(seen, x->transactional_id)) {
            g_hash_table_iter_remove(&it);
            self->txns_moved = TRUE;
        }
    }
    mark(self, NULL);
}

/* a quota's value: < 0 for null (not set) or a value of another type */
static double get_rate(JsonObject *o, const char *key)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, key) : NULL;
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n)) {
        return -1;
    }
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_DOUBLE) {
        return json_node_get_double(n);
    }
    return t == G_TYPE_INT64 ? (double)json_node_get_int(n) : -1;
}

static gboolean set_double(double *field, double v)
{
    if (*field == v) {
        return FALSE;
    }
    *field = v;
    return TRUE;
}

/* /v1/quotas of broker `from`: the entities in force (cluster-wide: one
 * that `from` listed last and lists no more is gone) and `from`'s own
 * rates (replaced) */
static void apply_quotas_doc(SmCluster *self, JsonObject *doc)
{
    gint32 from = get_id(doc, "broker", -1);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    JsonArray *a = get_array(doc, "quotas");
    guint n = a != NULL ? MIN(json_array_get_length(a), MAX_QUOTAS) : 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = array_object(a, i);
        const char *user = get_str(o, "user");
        const char *client = get_str(o, "client_id");
        if (o == NULL || (user == NULL && client == NULL)) {
            continue;
        }
        /* \x1f: a separator no name has; \x01 for a level the entity has not */
        g_autofree char *key = g_strdup_printf("%s\x1f%s", user != NULL ? user : "\x01",
                                               client != NULL ? client : "\x01");
        SmQuota *q = g_hash_table_lookup(self->quota_by_key, key);
        if (q == NULL) {
            q = g_object_new(SM_TYPE_QUOTA, NULL);
            q->key = g_steal_pointer(&key);
            q->user = g_strdup(user);
            q->client_id = g_strdup(client);
            g_hash_table_insert(self->quota_by_key, q->key, q);
            self->quotas_moved = TRUE;
        }
        g_hash_table_add(seen, q->key);
        q->from = from;
        gboolean moved = set_double(&q->producer_byte_rate, get_rate(o, "producer_byte_rate"));
        moved = set_double(&q->consumer_byte_rate, get_rate(o, "consumer_byte_rate")) || moved;
        moved = set_double(&q->request_percentage, get_rate(o, "request_percentage")) || moved;
        if (moved) {
            mark(self, q);
        }
    }
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, self->quota_by_key);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        SmQuota *q = v;
        if (q->from == from && !g_hash_table_contains(seen, q->key)) {
            g_hash_table_iter_remove(&it);
            self->quotas_moved = TRUE;
        }
    }
    g_hash_table_remove_all(seen);
    a = get_array(doc, "clients");
    n = a != NULL ? MIN(json_array_get_length(a), MAX_QUOTAS) : 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = array_object(a, i);
        const char *type = get_str(o, "type");
        const char *user = get_str(o, "user");
        const char *client = get_str(o, "client_id");
        if (type == NULL || user == NULL || client == NULL) {
            continue;
        }
        g_autofree char *key = g_strdup_printf("%010d\x1f%s\x1f%s\x1f%s", (int)from, type,
                                               user, client);
        SmQuotaRate *r = g_hash_table_lookup(self->rate_by_key, key);
        if (r == NULL) {
            r = g_object_new(SM_TYPE_QUOTA_RATE, NULL);
            r->key = g_steal_pointer(&key);
            r->broker = from;
            r->type = g_strdup(type);
            r->user = g_strdup(user);
            r->client_id = g_strdup(client);
            g_hash_table_insert(self->rate_by_key, r->key, r);
            self->quotas_moved = TRUE;
        }
        g_hash_table_add(seen, r->key);
        gint64 total = get_int(o, "throttle_time_ms_total", 0);
        gint64 left = get_int(o, "throttle_time_ms_left", 0);
        gboolean moved = set_double(&r->quota, get_rate(o, "quota"));
        moved = set_double(&r->rate, MAX(get_rate(o, "rate"), 0)) || moved;
        moved = moved || r->throttle_total_ms != total || r->throttle_left_ms != left;
        r->throttle_total_ms = total;
        r->throttle_left_ms = left;
        if (moved) {
            mark(self, r);
        }
    }
    g_hash_table_iter_init(&it, self->rate_by_key);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        SmQuotaRate *r = v;
        if (r->broker == from && !g_hash_table_contains(seen, r->key)) {
            g_hash_table_iter_remove(&it);
            self->quotas_moved = TRUE;
        }
    }
    mark(self, NULL);
}

static void apply_group_doc(SmCluster *self, JsonObject *doc)
{
    const char *id = get_str(doc, "group_id");
    if (id == NULL) {
        return;
    }
    SmGroup *g = ensure_group(self, id);
    apply_group_summary(self, g, doc, get_id(doc, "broker", -1));
    g_array_set_size(g->offsets, 0);
    JsonArray *a = get_array(doc, "offsets");
    guint n = a != NULL ? MIN(json_array_get_length(a), 100000) : 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *o = array_object(a, i);
        SmGroupOffset off = {
            .topic = g_strdup(get_str(o, "topic")),
            .partition = get_id(o, "partition", -1),
            .committed_offset = get_int(o, "committed_offset", SM_OFFSET_UNKNOWN),
            .high_watermark = get_int(o, "high_watermark", SM_OFFSET_UNKNOWN),
            .lag = get_int(o, "lag", SM_OFFSET_UNKNOWN),
        };
        g_array_append_val(g->offsets, off);
    }
    /* the members (the broker's member_list); a document without one keeps
     * what was shown */
    JsonArray *ml = get_array(doc, "member_list");
    if (ml != NULL) {
        guint nm = MIN(json_array_get_length(ml), MAX_MEMBERS);
        g_autoptr(GPtrArray) members = g_ptr_array_new_with_free_func(g_object_unref);
        for (guint i = 0; i < nm; i++) {
            JsonObject *o = array_object(ml, i);
            SmMember *m = g_object_new(SM_TYPE_MEMBER, NULL);
            m->member_id = g_strdup(get_str(o, "member_id"));
            m->client_id = g_strdup(get_str(o, "client_id"));
            m->host = g_strdup(get_str(o, "client_host"));
            GString *s = g_string_new(NULL);
            JsonArray *as = get_array(o, "assignment");
            guint na = as != NULL ? json_array_get_length(as) : 0;
            for (guint k = 0; k < na; k++) {
                JsonObject *tp = array_object(as, k);
                const char *topic = get_str(tp, "topic");
                gint32 pn = get_id(tp, "partition", -1);
                if (topic == NULL || pn < 0) {
                    continue;
                }
                m->assigned++;
                if (m->assigned <= 64) {
                    g_string_append_printf(s, "%s%s-%d", s->len > 0 ? ", " : "", topic, (int)pn);
                }
            }
            if (m->assigned > 64) {
                g_string_append_printf(s, ", … (%u)", m->assigned);
            }
            m->assignment = g_string_free(s, FALSE);
            g_ptr_array_add(members, m);
        }
        guint had = g_list_model_get_n_items(G_LIST_MODEL(g->member_list));
        g_list_store_splice(g->member_list, 0, had, members->pdata, members->len);
    }
    /* the lag's history, on the coordinator's clock */
    gint64 taken = get_int(get_object(doc, "snapshot"), "taken_ms", 0);
    if (taken <= 0) {
        taken = g_get_real_time() / 1000;
    }
    const SmPoint *last = sm_series_last(&g->lag_history);
    if (last != NULL && taken <= last->to_ms) {
        /* the same snapshot read again, or a coordinator's clock behind
         * the last one's: the newest value stands for the newest time */
        sm_series_replace_last(&g->lag_history, last->from_ms, last->to_ms, (double)g->lag);
    } else {
        sm_series_push(&g->lag_history, last != NULL ? last->to_ms : taken, taken,
                       (double)g->lag, TRUE);
    }
}

/* ------------------------------------------------------------ throughput */

/* the cluster's point of this round of readings: each broker's newest
 * known rate, if it was read within one and a half of its intervals of
 * `to`: a reading a little late still counts, a broker gone (or whose link
 * is lost, or whose counters were reset) drops out of the sum */
static double cluster_sum(SmCluster *self, gint64 to, SmSeries *(*which)(SmRates *))
{
    double sum = 0;
    for (guint i = 0; i < self->brokers_all->len; i++) {
        SmBroker *b = g_ptr_array_index(self->brokers_all, i);
        const SmPoint *p = sm_series_last(which(&b->rates));
        if (p == NULL || !p->known) {
            continue;
        }
        gint64 fresh = MAX(p->to_ms - p->from_ms, (gint64)1000) * 3 / 2;
        if (to - p->to_ms < fresh && p->to_ms - to < fresh) {
            sum += p->value;
        }
    }
    return sum;
}

static SmSeries *messages_in(SmRates *r)
{
    return &r->messages_in;
}

static SmSeries *bytes_in(SmRates *r)
{
    return &r->bytes_in;
}

static SmSeries *bytes_out(SmRates *r)
{
    return &r->bytes_out;
}

/* the brokers are read together (sm-client.c): a reading within half an
 * interval of the cluster's newest point belongs to its round and
 * updates it; a later one starts the next point */
static void cluster_rates(SmCluster *self, gint64 from, gint64 to)
{
    SmSeries *(*const series[])(SmRates *) = {messages_in, bytes_in, bytes_out};
    const SmPoint *last = sm_series_last(&self->rates.messages_in);
    gboolean same_round = last != NULL && to - last->to_ms < (to - from) / 2 &&
                          last->to_ms - to < (to - from) / 2;
    for (guint i = 0; i < G_N_ELEMENTS(series); i++) {
        double sum = cluster_sum(self, to, series[i]);
        if (same_round) {
            /* the round's interval stays the first reading's */
            sm_series_replace_last(series[i](&self->rates), last->from_ms, to, sum);
        } else {
            sm_series_push(series[i](&self->rates), from, to, sum, TRUE);
        }
    }
}

/* GET /v1/brokers/{id} from the broker itself ("self": true): its totals
 * since it started; a rate is the difference of two readings over the time
 * between their snapshots */
static void apply_broker_doc(SmCluster *self, JsonObject *doc)
{
    gint32 id = get_id(doc, "id", -1);
    JsonObject *totals = get_object(doc, "totals");
    if (id < 0) {
        return;
    }
    SmBroker *b = ensure_broker(self, id);
    apply_broker_fields(self, b, doc);
    if (!get_bool(doc, "self", FALSE) || totals == NULL) {
        return; /* another broker's document: no totals in it */
    }
    SmTotals now = {
        .taken_ms = get_int(get_object(doc, "snapshot"), "taken_ms", 0),
        .started_ms = get_int(doc, "started_ms", 0),
        .messages_in = get_int(totals, "messages_in", -1),
        .bytes_in = get_int(totals, "bytes_in", -1),
        .bytes_out = get_int(totals, "bytes_out", -1),
    };
    if (now.taken_ms <= 0 || now.messages_in < 0 || now.bytes_in < 0 || now.bytes_out < 0) {
        return; /* not a reading we can use */
    }
    SmTotals was = b->totals;
    if (was.taken_ms > 0 && now.taken_ms <= was.taken_ms) {
        return; /* the same snapshot read twice, or an older one */
    }
    b->totals = now;
    if (was.taken_ms == 0) {
        mark(self, b);
        return; /* the first reading: a rate needs two */
    }
    gint64 dt = now.taken_ms - was.taken_ms;
    /* a counter lower than before is a restart or a deleted topic's share
     * gone; a new start time is a restart even when the counters grew
     * past their old values in between */
    gboolean reset = now.messages_in < was.messages_in || now.bytes_in < was.bytes_in ||
                     now.bytes_out < was.bytes_out || now.started_ms != was.started_ms ||
                     dt > MAX_RATE_INTERVAL_MS;
    double sec = (double)dt / 1000.0;
    sm_series_push(&b->rates.messages_in, was.taken_ms, now.taken_ms,
                   (double)(now.messages_in - was.messages_in) / sec, !reset);
    sm_series_push(&b->rates.bytes_in, was.taken_ms, now.taken_ms,
                   (double)(now.bytes_in - was.bytes_in) / sec, !reset);
    sm_series_push(&b->rates.bytes_out, was.taken_ms, now.taken_ms,
                   (double)(now.bytes_out - was.bytes_out) / sec, !reset);
    cluster_rates(self, was.taken_ms, now.taken_ms);
    mark(self, b);
}

static void remove_topic(SmCluster *self, const char *name)
{
    SmTopic *t = g_hash_table_lookup(self->topic_by_name, name);
    for (guint i = 0; t != NULL && i < t->parts->len; i++) {
        /* a deleted topic's partitions move no more */
        if (g_hash_table_remove(self->moving, g_ptr_array_index(t->parts, i))) {
            self->moves_moved = TRUE;
        }
    }
    if (g_hash_table_remove(self->topic_by_name, name)) {
        self->topics_moved = TRUE;
        mark(self, NULL);
    }
}

/* ------------------------------------------------------------ the stream */

static void apply_event(SmCluster *self, JsonObject *ev)
{
    const char *type = get_str(ev, "type");
    gint32 from = get_id(ev, "broker", -1);
    if (type == NULL) {
        return;
    }
    if (strcmp(type, "progress") == 0) {
        /* the one digest reads text (a message that came here as JSON
         * objects: the tests' and sm_cluster_apply_text's) */
        g_autoptr(JsonNode) node = json_node_init_object(json_node_alloc(), ev);
        g_autofree char *text = json_to_string(node, FALSE);
        g_autoptr(SmProgress) pr = sm_progress_new_from_text(text, strlen(text));
        if (pr != NULL) {
            sm_cluster_apply_progress(self, pr);
        }
    } else if (strcmp(type, "leader_change") == 0) {
        apply_leader_change(self, ev, from);
    } else if (strcmp(type, "isr_shrink") == 0) {
        apply_isr_event(self, ev, from, SM_EVENT_ISR_SHRINK);
    } else if (strcmp(type, "isr_expand") == 0) {
        apply_isr_event(self, ev, from, SM_EVENT_ISR_EXPAND);
    } else if (strcmp(type, "isr_change") == 0) {
        apply_isr_event(self, ev, from, SM_EVENT_ISR_CHANGE);
    } else if (strcmp(type, "broker_up") == 0 || strcmp(type, "broker_down") == 0) {
        gint32 id = get_id(ev, "id", -1);
        if (id < 0) {
            return;
        }
        gboolean up = type[7] == 'u';
        SmBroker *b = ensure_broker(self, id);
        if (up) {
            apply_broker_fields(self, b, ev);
        }
        set_alive(self, b, up);
        if (!up) {
            end_rates(self, b); /* whatever the model believed of it before */
        }
        char key[64];
        (void)g_snprintf(key, sizeof key, "broker/%d/%s", (int)id, up ? "up" : "down");
        /* a broker back clears the memory of it going, and the reverse */
        char other[64];
        (void)g_snprintf(other, sizeof other, "broker/%d/%s", (int)id, up ? "down" : "up");
        g_hash_table_remove(self->seen_events, other);
        add_event(self, up ? SM_EVENT_BROKER_UP : SM_EVENT_BROKER_DOWN, ev, key,
                  g_strdup_printf(up ? "broker %d is up" : "broker %d is gone", (int)id), id,
                  !up);
    } else if (strcmp(type, "controller_change") == 0) {
        gint32 c = get_id(ev, "controller", -1);
        gint32 was = get_id(ev, "previous", -1);
        set_controller(self, c);
        if (was >= 0) {
            char key[64];
            (void)g_snprintf(key, sizeof key, "controller/%d/%d", (int)was, (int)c);
            add_event(self, SM_EVENT_CONTROLLER_CHANGE, ev, key,
                      g_strdup_printf("controller %d (was %d)", (int)c, (int)was), -1, FALSE);
        }
    } else if (strcmp(type, "topic_created") == 0) {
        const char *topic = get_str(ev, "topic");
        if (topic != NULL) {
            ensure_topic(self, topic);
            g_signal_emit(self, signals[SIG_WANTS_PARTITIONS], 0, (gint)from, topic);
            char key[300];
            (void)g_snprintf(key, sizeof key, "topic/%s/created", topic);
            add_event(self, SM_EVENT_TOPIC_CREATED, ev, key,
                      g_strdup_printf("topic %s created", topic), -1, FALSE);
        }
    } else if (strcmp(type, "topic_deleted") == 0) {
        const char *topic = get_str(ev, "topic");
        if (topic != NULL) {
            remove_topic(self, topic);
            char key[300];
            (void)g_snprintf(key, sizeof key, "topic/%s/deleted", topic);
            add_event(self, SM_EVENT_TOPIC_DELETED, ev, key,
                      g_strdup_printf("topic %s deleted", topic), -1, FALSE);
        }
    }
    /* "hello" and types this version does not know: nothing to show */
}

void sm_cluster_apply_object(SmCluster *self, JsonObject *obj)
{
    g_return_if_fail(SM_IS_CLUSTER(self));
    if (obj == NULL) {
        return;
    }
    if (json_object_has_member(obj, "type") && json_object_has_member(obj, "seq")) {
        apply_event(self, obj);
    } else if (json_object_has_member(obj, "cluster_id")) {
        apply_cluster_doc(self, obj);
    } else if (json_object_has_member(obj, "self") && json_object_has_member(obj, "id")) {
        apply_broker_doc(self, obj);
    } else if (json_object_has_member(obj, "group_id")) {
        apply_group_doc(self, obj);
    } else if (get_array(obj, "groups") != NULL) {
        apply_groups_doc(self, obj);
    } else if (get_array(obj, "transactions") != NULL) {
        apply_transactions_doc(self, obj);
    } else if (get_array(obj, "reassignments") != NULL) {
        apply_reassignments_doc(self, obj);
    } else if (get_array(obj, "quotas") != NULL && get_array(obj, "clients") != NULL) {
        apply_quotas_doc(self, obj);
    } else if (get_array(obj, "topics") != NULL) {
        apply_topics_doc(self, obj);
    } else if (get_array(obj, "partitions") != NULL) {
        apply_partitions_doc(self, obj);
    }
}

gboolean sm_cluster_apply_text(SmCluster *self, const char *text, gssize len, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    if (!json_parser_load_from_data(parser, text, len, error)) {
        return FALSE;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error_literal(error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_INVALID_DATA,
                            "not a JSON object");
        return FALSE;
    }
    sm_cluster_apply_object(self, json_node_get_object(root));
    return TRUE;
}

/* ------------------------------------------------------------ flush */

static gint cmp_broker(gconstpointer a, gconstpointer b)
{
    const SmBroker *x = *(SmBroker *const *)a;
    const SmBroker *y = *(SmBroker *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

static gint cmp_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static gint cmp_partition(gconstpointer a, gconstpointer b)
{
    const SmPartition *x = *(SmPartition *const *)a;
    const SmPartition *y = *(SmPartition *const *)b;
    int c = strcmp(x->topic, y->topic);
    return c != 0 ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

/* replaces store's items with those of values (a hash table's) sorted */
static void resync(GListStore *store, GPtrArray *items)
{
    guint old = g_list_model_get_n_items(G_LIST_MODEL(store));
    g_list_store_splice(store, 0, old, items->pdata, items->len);
}

/* the values of a table keyed by strings, in the keys' order */
static GPtrArray *values_by_key(GHashTable *table)
{
    g_autoptr(GPtrArray) keys = g_ptr_array_sized_new(g_hash_table_size(table));
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, table);
    while (g_hash_table_iter_next(&it, &k, NULL)) {
        g_ptr_array_add(keys, k);
    }
    g_ptr_array_sort(keys, cmp_name);
    GPtrArray *items = g_ptr_array_sized_new(keys->len);
    for (guint i = 0; i < keys->len; i++) {
        g_ptr_array_add(items, g_hash_table_lookup(table, keys->pdata[i]));
    }
    return items;
}

static void sync_topics(SmCluster *self)
{
    g_autoptr(GPtrArray) items = values_by_key(self->topic_by_name);
    resync(self->topics, items);
}

static void sync_groups(SmCluster *self)
{
    g_autoptr(GPtrArray) items = values_by_key(self->group_by_id);
    resync(self->groups, items);
}

/* what each topic and broker shows is counted again from the partitions */
static void recount(SmCluster *self)
{
    SmClusterSummary *s = &self->summary;
    s->partitions = s->under_replicated = s->under_min_isr = s->offline = 0;
    s->topics = g_hash_table_size(self->topic_by_name);
    s->brokers = self->brokers_all->len;
    s->brokers_alive = 0;
    guint nb = self->brokers_all->len;
    guint *led = g_new0(guint, nb + 1);
    guint *hosted = g_new0(guint, nb + 1);
    for (guint i = 0; i < nb; i++) {
        s->brokers_alive += ((SmBroker *)g_ptr_array_index(self->brokers_all, i))->alive ? 1 : 0;
    }
    gint64 now = g_get_monotonic_time();
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, self->topic_by_name);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        SmTopic *t = v;
        guint rf = 0, under = 0, under_min = 0, offline = 0;
        gint64 size = 0, hw_sum = 0;
        for (guint k = 0; k < t->parts->len; k++) {
            SmPartition *p = g_ptr_array_index(t->parts, k);
            rf = MAX(rf, p->replicas->len);
            under += sm_partition_under_replicated(p);
            under_min += p->under_min_isr ? 1 : 0;
            offline += p->leader < 0 ? 1 : 0;
            size += MAX(p->size_bytes, 0);
            hw_sum += MAX(p->high_watermark, 0);
            for (guint r = 0; r < p->replicas->len; r++) {
                gint32 b = g_array_index(p->replicas, SmReplica, r).broker;
                for (guint j = 0; j < nb; j++) {
                    if (((SmBroker *)g_ptr_array_index(self->brokers_all, j))->id == b) {
                        hosted[j]++;
                        led[j] += b == p->leader ? 1 : 0;
                        break;
                    }
                }
            }
        }
        s->partitions += t->parts->len;
        s->under_replicated += under;
        s->under_min_isr += under_min;
        s->offline += offline;
        double rate = t->messages_per_s;
        if (t->rate_at_us == 0) {
            t->rate_at_us = now;
            t->rate_hw_sum = hw_sum;
        } else if (now - t->rate_at_us >= G_USEC_PER_SEC) {
            rate = (double)(hw_sum - t->rate_hw_sum) * G_USEC_PER_SEC / (double)(now - t->rate_at_us);
            t->rate_at_us = now;
            t->rate_hw_sum = hw_sum;
        }
        if (rf != t->replication_factor || under != t->under_replicated ||
            under_min != t->under_min_isr || offline != t->offline || size != t->size_bytes ||
            hw_sum != t->hw_sum || rate != t->messages_per_s) {
            t->replication_factor = rf;
            t->under_replicated = under;
            t->under_min_isr = under_min;
            t->offline = offline;
            t->size_bytes = size;
            t->hw_sum = hw_sum;
            t->messages_per_s = rate;
            if (!g_hash_table_contains(self->dirty, t)) {
                g_hash_table_add(self->dirty, g_object_ref(t));
            }
        }
    }
    for (guint j = 0; j < nb; j++) {
        SmBroker *b = g_ptr_array_index(self->brokers_all, j);
        if (b->partitions_led != led[j] || b->replicas != hosted[j]) {
            b->partitions_led = led[j];
            b->replicas = hosted[j];
            if (!g_hash_table_contains(self->dirty, b)) {
                g_hash_table_add(self->dirty, g_object_ref(b));
            }
        }
    }
    g_free(led);
    g_free(hosted);
}

/* a dirty row's one "changed" (events are never dirty: made, not changed) */
static void emit_changed(gpointer row)
{
    if (SM_IS_BROKER(row)) {
        sm_broker_emit_changed(row);
    } else if (SM_IS_PARTITION(row)) {
        sm_partition_emit_changed(row);
    } else if (SM_IS_TOPIC(row)) {
        sm_topic_emit_changed(row);
    } else if (SM_IS_GROUP(row)) {
        sm_group_emit_changed(row);
    } else if (SM_IS_TRANSACTION(row)) {
        sm_transaction_emit_changed(row);
    } else if (SM_IS_QUOTA(row)) {
        sm_quota_emit_changed(row);
    } else if (SM_IS_QUOTA_RATE(row)) {
        sm_quota_rate_emit_changed(row);
    } else if (SM_IS_EVENT(row)) {
        sm_event_emit_changed(row); /* a group that grew */
    }
}

guint sm_cluster_flush(SmCluster *self)
{
    g_return_val_if_fail(SM_IS_CLUSTER(self), 0);
    if (!self->is_dirty) {
        return 0;
    }
    self->is_dirty = FALSE;
    self->flushing = TRUE;
    recount(self);
    if (self->brokers_moved) {
        self->brokers_moved = FALSE;
        g_autoptr(GPtrArray) sorted = g_ptr_array_copy(self->brokers_all, NULL, NULL);
        g_ptr_array_set_free_func(sorted, NULL); /* the copy borrows */
        g_ptr_array_sort(sorted, cmp_broker);
        resync(self->brokers, sorted);
    }
    if (self->topics_moved) {
        self->topics_moved = FALSE;
        sync_topics(self);
    }
    if (self->groups_moved) {
        self->groups_moved = FALSE;
        sync_groups(self);
    }
    if (self->txns_moved) {
        self->txns_moved = FALSE;
        g_autoptr(GPtrArray) items = values_by_key(self->txn_by_id);
        resync(self->transactions, items);
    }
    if (self->moves_moved) {
        self->moves_moved = FALSE;
        g_autoptr(GPtrArray) items = g_ptr_array_sized_new(g_hash_table_size(self->moving));
        GHashTableIter it;
        gpointer k;
        g_hash_table_iter_init(&it, self->moving);
        while (g_hash_table_iter_next(&it, &k, NULL)) {
            g_ptr_array_add(items, k);
        }
        g_ptr_array_sort(items, cmp_partition);
        resync(self->moves, items);
    }
    if (self->quotas_moved) {
        self->quotas_moved = FALSE;
        g_autoptr(GPtrArray) quotas = values_by_key(self->quota_by_key);
        resync(self->quotas, quotas);
        g_autoptr(GPtrArray) rates = values_by_key(self->rate_by_key);
        resync(self->quota_rates, rates);
    }
    /* the dirty set is swapped out first: a handler may change rows again */
    GHashTable *dirty = self->dirty;
    self->dirty = g_hash_table_new_full(NULL, NULL, g_object_unref, NULL);
    guint n = 0;
    GHashTableIter it;
    gpointer row;
    g_hash_table_iter_init(&it, dirty);
    while (g_hash_table_iter_next(&it, &row, NULL)) {
        if (SM_IS_TOPIC(row)) {
            SmTopic *t = row;
            guint have = g_list_model_get_n_items(G_LIST_MODEL(t->partitions));
            if (have != t->parts->len) {
                g_list_store_splice(t->partitions, have, 0, t->parts->pdata + have,
                                    t->parts->len - have);
            }
        }
        emit_changed(row);
        n++;
    }
    g_hash_table_unref(dirty);
    if (self->new_events->len > 0) {
        g_autoptr(GPtrArray) fresh = self->new_events;
        self->new_events = g_ptr_array_new_with_free_func(g_object_unref);
        g_autoptr(GPtrArray) rows = self->new_rows;
        self->new_rows = g_ptr_array_new_with_free_func(g_object_unref);
        /* newest first */
        g_autoptr(GPtrArray) rev = g_ptr_array_sized_new(rows->len);
        for (guint i = rows->len; i > 0; i--) {
            g_ptr_array_add(rev, rows->pdata[i - 1]);
        }
        g_list_store_splice(self->events, 0, 0, rev->pdata, rev->len);
        guint total = g_list_model_get_n_items(G_LIST_MODEL(self->events));
        if (total > MAX_EVENTS) {
            g_list_store_splice(self->events, MAX_EVENTS, total - MAX_EVENTS, NULL, 0);
        }
        for (guint i = 0; i < fresh->len; i++) {
            g_signal_emit(self, signals[SIG_EVENT], 0, fresh->pdata[i]);
        }
    }
    self->flushing = FALSE;
    g_signal_emit(self, signals[SIG_FLUSHED], 0);
    return n;
}

gboolean sm_cluster_is_dirty(SmCluster *self)
{
    return self->is_dirty;
}

gboolean sm_cluster_is_flushing(SmCluster *self)
{
    return self->flushing;
}

/* ------------------------------------------------------------ object */

SmCluster *sm_cluster_new(void)
{
    return g_object_new(SM_TYPE_CLUSTER, NULL);
}

GListModel *sm_cluster_get_brokers(SmCluster *self)
{
    return G_LIST_MODEL(self->brokers);
}

GListModel *sm_cluster_get_topics(SmCluster *self)
{
    return G_LIST_MODEL(self->topics);
}

GListModel *sm_cluster_get_groups(SmCluster *self)
{
    return G_LIST_MODEL(self->groups);
}

GListModel *sm_cluster_get_transactions(SmCluster *self)
{
    return G_LIST_MODEL(self->transactions);
}

GListModel *sm_cluster_get_moves(SmCluster *self)
{
    return G_LIST_MODEL(self->moves);
}

GListModel *sm_cluster_get_quotas(SmCluster *self)
{
    return G_LIST_MODEL(self->quotas);
}

GListModel *sm_cluster_get_quota_rates(SmCluster *self)
{
    return G_LIST_MODEL(self->quota_rates);
}

SmTransaction *sm_cluster_find_transaction(SmCluster *self, const char *id)
{
    g_return_val_if_fail(SM_IS_CLUSTER(self), NULL);
    return id != NULL ? g_hash_table_lookup(self->txn_by_id, id) : NULL;
}

GListModel *sm_cluster_get_events(SmCluster *self)
{
    return G_LIST_MODEL(self->events);
}

const SmClusterSummary *sm_cluster_get_summary(SmCluster *self)
{
    return &self->summary;
}

const SmRates *sm_cluster_get_rates(SmCluster *self)
{
    return &self->rates;
}

static void sm_cluster_dispose(GObject *object)
{
    SmCluster *self = SM_CLUSTER(object);
    g_clear_object(&self->brokers);
    g_clear_object(&self->topics);
    g_clear_object(&self->groups);
    g_clear_object(&self->transactions);
    g_clear_object(&self->moves);
    g_clear_object(&self->quotas);
    g_clear_object(&self->quota_rates);
    g_clear_object(&self->events);
    g_clear_pointer(&self->dirty, g_hash_table_unref);
    g_clear_pointer(&self->broker_by_id, g_hash_table_unref);
    g_clear_pointer(&self->brokers_all, g_ptr_array_unref);
    g_clear_pointer(&self->topic_by_name, g_hash_table_unref);
    g_clear_pointer(&self->group_by_id, g_hash_table_unref);
    g_clear_pointer(&self->txn_by_id, g_hash_table_unref);
    g_clear_pointer(&self->moving, g_hash_table_unref);
    g_clear_pointer(&self->quota_by_key, g_hash_table_unref);
    g_clear_pointer(&self->rate_by_key, g_hash_table_unref);
    g_clear_pointer(&self->new_events, g_ptr_array_unref);
    g_clear_pointer(&self->seen_events, g_hash_table_unref);
    g_clear_pointer(&self->new_rows, g_ptr_array_unref);
    g_clear_pointer(&self->open_groups, g_hash_table_unref);
    g_clear_pointer(&self->summary.cluster_id, g_free);
    G_OBJECT_CLASS(sm_cluster_parent_class)->dispose(object);
}

static void sm_cluster_class_init(SmClusterClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = sm_cluster_dispose;
    signals[SIG_DIRTY] = g_signal_new("dirty", SM_TYPE_CLUSTER, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                      NULL, G_TYPE_NONE, 0);
    signals[SIG_FLUSHED] = g_signal_new("flushed", SM_TYPE_CLUSTER, G_SIGNAL_RUN_LAST, 0, NULL,
                                        NULL, NULL, G_TYPE_NONE, 0);
    signals[SIG_EVENT] = g_signal_new("event", SM_TYPE_CLUSTER, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                      NULL, G_TYPE_NONE, 1, SM_TYPE_EVENT);
    signals[SIG_ADMIN_URL] = g_signal_new("admin-url", SM_TYPE_CLUSTER, G_SIGNAL_RUN_LAST, 0, NULL,
                                          NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_STRING);
    signals[SIG_WANTS_PARTITIONS] =
        g_signal_new("wants-partitions", SM_TYPE_CLUSTER, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                     G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_STRING);
}

static void sm_cluster_init(SmCluster *self)
{
    self->brokers = g_list_store_new(SM_TYPE_BROKER);
    self->topics = g_list_store_new(SM_TYPE_TOPIC);
    self->groups = g_list_store_new(SM_TYPE_GROUP);
    self->transactions = g_list_store_new(SM_TYPE_TRANSACTION);
    self->moves = g_list_store_new(SM_TYPE_PARTITION);
    self->quotas = g_list_store_new(SM_TYPE_QUOTA);
    self->quota_rates = g_list_store_new(SM_TYPE_QUOTA_RATE);
    self->events = g_list_store_new(SM_TYPE_EVENT);
    self->broker_by_id = g_hash_table_new(NULL, NULL);
    self->brokers_all = g_ptr_array_new_with_free_func(g_object_unref);
    self->topic_by_name = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_object_unref);
    self->group_by_id = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_object_unref);
    self->txn_by_id = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_object_unref);
    self->moving = g_hash_table_new_full(NULL, NULL, g_object_unref, NULL);
    self->quota_by_key = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_object_unref);
    self->rate_by_key = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_object_unref);
    self->dirty = g_hash_table_new_full(NULL, NULL, g_object_unref, NULL);
    self->new_events = g_ptr_array_new_with_free_func(g_object_unref);
    self->seen_events = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    self->new_rows = g_ptr_array_new_with_free_func(g_object_unref);
    self->open_groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref);
    self->summary.controller = -1;
}

char *sm_cluster_bootstrap_servers(SmCluster *self)
{
    g_return_val_if_fail(SM_IS_CLUSTER(self), NULL);
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->brokers_all->len; i++) {
        const SmBroker *b = g_ptr_array_index(self->brokers_all, i);
        if (b->alive && b->host != NULL && b->port > 0) {
            g_string_append_printf(s, "%s%s:%d", s->len > 0 ? "," : "", b->host, (int)b->port);
        }
    }
    if (s->len == 0) {
        g_string_free(s, TRUE);
        return NULL;
    }
    return g_string_free(s, FALSE);
}
