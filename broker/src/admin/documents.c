/* samsa-broker: the admin API's JSON documents and stream events (see
 * documents.h). */
#include "admin/documents.h"

#include <json-glib/json-glib.h>
#include <string.h>

#define MAX_PATH_SEGMENTS 6

/* ------------------------------------------------------------ helpers */

static char *to_text(JsonBuilder *jb)
{
    JsonNode *root = json_builder_get_root(jb);
    JsonGenerator *gen = json_generator_new();
    json_generator_set_root(gen, root);
    char *text = json_generator_to_data(gen, NULL);
    g_object_unref(gen);
    json_node_unref(root);
    return text;
}

static void put_int(JsonBuilder *jb, const char *key, gint64 v)
{
    json_builder_set_member_name(jb, key);
    json_builder_add_int_value(jb, v);
}

/* v < 0: JSON null (not known here) */
static void put_double(JsonBuilder *jb, const char *key, double v)
{
    json_builder_set_member_name(jb, key);
    json_builder_add_double_value(jb, v);
}

static void put_known(JsonBuilder *jb, const char *key, gint64 v)
{
    json_builder_set_member_name(jb, key);
    if (v < 0) {
        json_builder_add_null_value(jb);
    } else {
        json_builder_add_int_value(jb, v);
    }
}

static void put_str(JsonBuilder *jb, const char *key, const char *v)
{
    json_builder_set_member_name(jb, key);
    if (v == NULL) {
        json_builder_add_null_value(jb);
    } else {
        json_builder_add_string_value(jb, v);
    }
}

static void put_bool(JsonBuilder *jb, const char *key, gboolean v)
{
    json_builder_set_member_name(jb, key);
    json_builder_add_boolean_value(jb, v);
}

static void put_ids(JsonBuilder *jb, const char *key, const int32_t *ids, int32_t n)
{
    json_builder_set_member_name(jb, key);
    json_builder_begin_array(jb);
    for (int32_t i = 0; i < n; i++) {
        json_builder_add_int_value(jb, ids[i]);
    }
    json_builder_end_array(jb);
}

static gboolean in_ids(const int32_t *ids, int32_t n, int32_t id)
{
    for (int32_t i = 0; i < n; i++) {
        if (ids[i] == id) {
            return TRUE;
        }
    }
    return FALSE;
}

static void put_configs(JsonBuilder *jb, const struct br_snap_kv *kv, size_t n)
{
    json_builder_set_member_name(jb, "configs");
    json_builder_begin_object(jb);
    for (size_t i = 0; i < n; i++) {
        /* a secret is named, never shown */
        put_str(jb, kv[i].key, kv[i].sensitive ? NULL : kv[i].value);
    }
    json_builder_end_object(jb);
}

/* [{"topic", "partition"}, ...] */
static void put_tps(JsonBuilder *jb, const char *key, const struct br_snap_tp *tps, size_t n)
{
    json_builder_set_member_name(jb, key);
    json_builder_begin_array(jb);
    for (size_t k = 0; k < n; k++) {
        json_builder_begin_object(jb);
        put_str(jb, "topic", tps[k].topic);
        put_int(jb, "partition", tps[k].partition);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
}

static void put_snapshot_info(JsonBuilder *jb, const struct br_snapshot *s)
{
    json_builder_set_member_name(jb, "snapshot");
    json_builder_begin_object(jb);
    put_int(jb, "version", (gint64)s->version);
    put_int(jb, "taken_ms", s->taken_ms);
    put_int(jb, "age_ms", MAX(0, g_get_real_time() / 1000 - s->taken_ms));
    json_builder_end_object(jb);
}

char *br_admin_error_json(guint status, const char *code, const char *message)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "error");
    json_builder_begin_object(jb);
    put_int(jb, "status", status);
    put_str(jb, "code", code);
    put_str(jb, "message", message);
    json_builder_end_object(jb);
    json_builder_end_object(jb);
    char *text = to_text(jb);
    g_object_unref(jb);
    return text;
}

/* ------------------------------------------------------------ partitions */

static const char *broker_admin_url(const struct br_snapshot *s, int32_t id)
{
    if (id == s->node_id) {
        return s->admin_url;
    }
    const struct br_snap_broker *b = br_snap_broker(s, id);
    return b != NULL ? b->admin_url : NULL;
}

/* Whether transaction x's open transaction has topic's partition. */
static gboolean txn_has(const struct br_snap_txn *x, const char *topic, int32_t partition)
{
    for (size_t k = 0; k < x->nparts; k++) {
        if (x->parts[k].partition == partition && g_strcmp0(x->parts[k].topic, topic) == 0) {
            return TRUE;
        }
    }
    return FALSE;
}

/* A move's replicas of the target not in the ISR yet, the ones it waits
 * for (KafkaController.onPartitionReassignment goes on once every
 * target replica is in the ISR), and the replicas it takes away: those of
 * the assignment not in the target. */
static void put_move_sets(JsonBuilder *jb, const struct br_snap_partition *p)
{
    json_builder_set_member_name(jb, "adding");
    json_builder_begin_array(jb);
    for (int32_t i = 0; i < p->ntarget; i++) {
        if (!in_ids(p->isr, p->nisr, p->target[i])) {
            json_builder_add_int_value(jb, p->target[i]);
        }
    }
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "removing");
    json_builder_begin_array(jb);
    for (int32_t i = 0; i < p->nreplicas; i++) {
        if (!in_ids(p->target, p->ntarget, p->replicas[i].broker)) {
            json_builder_add_int_value(jb, p->replicas[i].broker);
        }
    }
    json_builder_end_array(jb);
}

static void put_partition(JsonBuilder *jb, const struct br_snapshot *s,
                          const struct br_snap_topic *t, const struct br_snap_partition *p)
{
    json_builder_begin_object(jb);
    put_str(jb, "topic", t->name);
    put_int(jb, "partition", p->partition);
    put_int(jb, "leader", p->leader);
    put_int(jb, "leader_epoch", p->leader_epoch);
    put_known(jb, "high_watermark", p->high_watermark);
    put_known(jb, "last_stable_offset", p->last_stable_offset);
    put_known(jb, "log_start_offset", p->log_start_offset);
    put_known(jb, "log_end_offset", p->log_end_offset);
    put_known(jb, "size_bytes", p->size_bytes);
    /* what holds the LSO back: the open transactions that wrote here, as
     * the transaction coordinator on this broker knows them */
    json_builder_set_member_name(jb, "open_transactions");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < s->ntxns; i++) {
        if (s->txns[i].open && txn_has(&s->txns[i], t->name, p->partition)) {
            json_builder_add_string_value(jb, s->txns[i].transactional_id);
        }
    }
    json_builder_end_array(jb);
    /* whose view this is: the leader's (every replica's LEO) or the
     * metadata cache's (the leader's admin URL has the rest) */
    put_str(jb, "source", p->led_here ? "leader" : "metadata");
    put_bool(jb, "led_here", p->led_here);
    put_bool(jb, "hosted_here", p->hosted);
    put_str(jb, "leader_admin_url", p->leader >= 0 ? broker_admin_url(s, p->leader) : NULL);
    put_ids(jb, "isr", p->isr, p->nisr);
    json_builder_set_member_name(jb, "osr");
    json_builder_begin_array(jb);
    for (int32_t i = 0; i < p->nreplicas; i++) {
        if (!p->replicas[i].in_sync) {
            json_builder_add_int_value(jb, p->replicas[i].broker);
        }
    }
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "offline_replicas");
    json_builder_begin_array(jb);
    for (int32_t i = 0; i < p->nreplicas; i++) {
        if (p->replicas[i].offline) {
            json_builder_add_int_value(jb, p->replicas[i].broker);
        }
    }
    json_builder_end_array(jb);
    put_bool(jb, "under_replicated", p->nisr < p->nreplicas);
    put_bool(jb, "under_min_isr", t->min_isr > 0 && p->nisr < t->min_isr);
    json_builder_set_member_name(jb, "replicas");
    json_builder_begin_array(jb);
    for (int32_t i = 0; i < p->nreplicas; i++) {
        const struct br_snap_replica *r = &p->replicas[i];
        json_builder_begin_object(jb);
        put_int(jb, "broker", r->broker);
        put_bool(jb, "leader", r->broker == p->leader);
        put_known(jb, "log_end_offset", r->log_end_offset);
        put_known(jb, "lag", r->lag);
        put_bool(jb, "in_sync", r->in_sync);
        put_bool(jb, "offline", r->offline);
        put_known(jb, "last_caught_up_ms", r->last_caught_up_ms);
        put_known(jb, "time_since_caught_up_ms", r->since_caught_up_ms);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    /* a move under way: null when it is not moving */
    json_builder_set_member_name(jb, "reassignment");
    if (p->ntarget > 0) {
        json_builder_begin_object(jb);
        put_ids(jb, "target", p->target, p->ntarget);
        put_move_sets(jb, p);
        json_builder_end_object(jb);
    } else {
        json_builder_add_null_value(jb);
    }
    json_builder_end_object(jb);
}

static void put_partitions(JsonBuilder *jb, const struct br_snapshot *s,
                           const struct br_snap_topic *t, gboolean led_only)
{
    for (int32_t i = 0; i < t->npartitions; i++) {
        if (!led_only || t->parts[i].led_here) {
            put_partition(jb, s, t, &t->parts[i]);
        }
    }
}

/* ------------------------------------------------------------ documents */

static void doc_cluster(JsonBuilder *jb, const struct br_snapshot *s)
{
    struct br_snap_health h;
    br_snap_health(s, &h);
    json_builder_begin_object(jb);
    put_str(jb, "cluster_id", s->cluster_id);
    put_int(jb, "broker", s->node_id);
    put_str(jb, "mode", s->cluster ? "cluster" : "standalone");
    put_int(jb, "controller", s->controller_id);
    json_builder_set_member_name(jb, "brokers");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < s->nbrokers; i++) {
        const struct br_snap_broker *b = &s->brokers[i];
        json_builder_begin_object(jb);
        put_int(jb, "id", b->id);
        put_str(jb, "host", b->host);
        put_int(jb, "port", b->port);
        put_str(jb, "admin_url", b->admin_url);
        put_str(jb, "rack", b->rack);
        put_bool(jb, "alive", b->alive);
        put_bool(jb, "controller", b->id == s->controller_id);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    put_int(jb, "topics", (gint64)s->ntopics);
    put_int(jb, "partitions", (gint64)h.partitions);
    put_int(jb, "under_replicated_partitions", (gint64)h.under_replicated);
    put_int(jb, "under_min_isr_partitions", (gint64)h.under_min_isr);
    put_int(jb, "offline_partitions", (gint64)h.offline);
    put_int(jb, "partitions_led_here", (gint64)h.led_here);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

static void put_connections(JsonBuilder *jb, const struct br_snapshot *s,
                            const struct br_admin_live *live)
{
    json_builder_set_member_name(jb, "connections");
    json_builder_begin_object(jb);
    put_int(jb, "open", s->connections);
    put_int(jb, "accepted", s->connections_accepted);
    put_int(jb, "refused", s->connections_refused);
    put_int(jb, "refused_per_ip", s->connections_refused_per_ip);
    put_int(jb, "idle_closed", s->connections_idle_closed);
    json_builder_set_member_name(jb, "admin");
    json_builder_begin_object(jb);
    put_int(jb, "open", live->connections);
    put_int(jb, "stream_clients", live->stream_clients);
    put_int(jb, "refused", live->refused);
    put_int(jb, "idle_closed", live->idle_closed);
    put_int(jb, "streams_stalled", live->streams_stalled);
    json_builder_end_object(jb);
    json_builder_end_object(jb);
    /* what serving this API costs: the reactor's snapshots, the admin
     * thread's CPU */
    json_builder_set_member_name(jb, "admin_cost");
    json_builder_begin_object(jb);
    put_int(jb, "snapshots_built", s->snapshots_built);
    json_builder_set_member_name(jb, "reactor_ms");
    json_builder_add_double_value(jb, (double)s->reactor_us / 1000.0);
    json_builder_set_member_name(jb, "admin_thread_cpu_ms");
    json_builder_add_double_value(jb, (double)live->cpu_us / 1000.0);
    json_builder_end_object(jb);
}

static void doc_broker(JsonBuilder *jb, const struct br_snapshot *s,
                       const struct br_admin_live *live, const struct br_snap_broker *b)
{
    gboolean self = b->id == s->node_id;
    json_builder_begin_object(jb);
    put_int(jb, "id", b->id);
    put_str(jb, "host", b->host);
    put_int(jb, "port", b->port);
    put_str(jb, "admin_url", b->admin_url);
    put_str(jb, "rack", b->rack);
    put_bool(jb, "alive", b->alive);
    put_bool(jb, "controller", b->id == s->controller_id);
    /* the rest only a broker knows of itself: its own document has it */
    put_bool(jb, "self", self);
    if (self) {
        struct br_snap_health h;
        br_snap_health(s, &h);
        put_int(jb, "started_ms", s->started_ms);
        put_int(jb, "partitions_led", (gint64)h.led_here);
        put_int(jb, "under_replicated_led", (gint64)h.under_replicated_led_here);
        put_int(jb, "isr_shrinks", s->isr_shrinks);
        put_int(jb, "isr_expands", s->isr_expands);
        /* since the start, as leader, over every topic: a client's
         * rates are the differences of two readings */
        gint64 msgs = 0;
        gint64 in = 0;
        gint64 out = 0;
        for (size_t i = 0; i < s->ntopics; i++) {
            msgs += s->topics[i].messages_in;
            in += s->topics[i].bytes_in;
            out += s->topics[i].bytes_out;
        }
        json_builder_set_member_name(jb, "totals");
        json_builder_begin_object(jb);
        put_int(jb, "messages_in", msgs);
        put_int(jb, "bytes_in", in);
        put_int(jb, "bytes_out", out);
        json_builder_end_object(jb);
        const struct br_admin_rates *rates = live != NULL ? live->rates : NULL;
        double rate_msgs = 0.0;
        double rate_in = 0.0;
        double rate_out = 0.0;
        br_admin_rates_totals(rates, &rate_msgs, &rate_in, &rate_out);
        json_builder_set_member_name(jb, "rates");
        json_builder_begin_object(jb);
        put_int(jb, "window_ms", br_admin_rates_window_ms(rates));
        put_double(jb, "messages_in_per_s", rate_msgs);
        put_double(jb, "bytes_in_per_s", rate_in);
        put_double(jb, "bytes_out_per_s", rate_out);
        json_builder_end_object(jb);
        put_connections(jb, s, live);
        put_configs(jb, s->configs, s->nconfigs);
        json_builder_set_member_name(jb, "log_dirs");
        json_builder_begin_array(jb);
        for (size_t i = 0; i < s->nlog_dirs; i++) {
            json_builder_begin_object(jb);
            put_str(jb, "path", s->log_dirs[i].path);
            put_int(jb, "size_bytes", s->log_dirs[i].size_bytes);
            put_int(jb, "partitions", (gint64)s->log_dirs[i].partitions);
            json_builder_end_object(jb);
        }
        json_builder_end_array(jb);
        json_builder_set_member_name(jb, "requests");
        json_builder_begin_array(jb);
        for (size_t i = 0; i < s->napis; i++) {
            const struct br_snap_api *a = &s->apis[i];
            json_builder_begin_object(jb);
            put_int(jb, "api_key", a->key);
            put_str(jb, "api", a->name);
            put_int(jb, "requests", a->requests);
            put_double(jb, "per_s", br_admin_rates_api(rates, a->key));
            json_builder_set_member_name(jb, "mean_ms");
            json_builder_add_double_value(
                jb, a->requests > 0 ? (double)a->total_us / 1000.0 / (double)a->requests : 0.0);
            json_builder_set_member_name(jb, "max_ms");
            json_builder_add_double_value(jb, (double)a->max_us / 1000.0);
            json_builder_end_object(jb);
        }
        json_builder_end_array(jb);
    }
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

static void doc_topics(JsonBuilder *jb, const struct br_snapshot *s)
{
    json_builder_begin_object(jb);
    put_int(jb, "broker", s->node_id);
    json_builder_set_member_name(jb, "topics");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < s->ntopics; i++) {
        const struct br_snap_topic *t = &s->topics[i];
        size_t under = 0;
        size_t offline = 0;
        int32_t rf = 0;
        for (int32_t k = 0; k < t->npartitions; k++) {
            under += t->parts[k].nisr < t->parts[k].nreplicas ? 1U : 0U;
            offline += t->parts[k].leader < 0 ? 1U : 0U;
            rf = MAX(rf, t->parts[k].nreplicas);
        }
        json_builder_begin_object(jb);
        put_str(jb, "name", t->name);
        put_bool(jb, "internal", t->internal);
        put_int(jb, "partitions", t->npartitions);
        put_int(jb, "replication_factor", rf);
        put_int(jb, "under_replicated_partitions", (gint64)under);
        put_int(jb, "offline_partitions", (gint64)offline);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

static void doc_topic(JsonBuilder *jb, const struct br_snapshot *s,
                      const struct br_admin_live *live, const struct br_snap_topic *t,
                      gboolean with_configs)
{
    json_builder_begin_object(jb);
    put_int(jb, "broker", s->node_id);
    put_str(jb, "name", t->name);
    put_bool(jb, "internal", t->internal);
    gint32 from = s->node_id;
    JsonObject *elsewhere = NULL;
    gint64 min_isr = t->min_isr;
    if (t->nconfigs == 0 && live != NULL) {
        /* hosted elsewhere: the configs a hosting broker gave (peers.h) */
        elsewhere = br_admin_peers_configs(live->peers, t->name, &from);
        const char *v = elsewhere != NULL
                            ? json_object_get_string_member_with_default(
                                  elsewhere, "min.insync.replicas", NULL)
                            : NULL;
        if (min_isr < 0 && v != NULL) {
            min_isr = g_ascii_strtoll(v, NULL, 10);
        }
    }
    put_known(jb, "min_insync_replicas", min_isr);
    if (with_configs && elsewhere != NULL) {
        json_builder_set_member_name(jb, "configs");
        JsonNode *n = json_node_new(JSON_NODE_OBJECT);
        json_node_set_object(n, elsewhere);
        json_builder_add_value(jb, n);
        put_int(jb, "configs_from", from);
    } else if (with_configs) {
        put_configs(jb, t->configs, t->nconfigs);
        put_int(jb, "configs_from", t->nconfigs > 0 ? s->node_id : -1);
    }
    json_builder_set_member_name(jb, "partitions");
    json_builder_begin_array(jb);
    put_partitions(jb, s, t, FALSE);
    json_builder_end_array(jb);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

static void put_txn(JsonBuilder *jb, const struct br_snap_txn *x)
{
    json_builder_begin_object(jb);
    put_str(jb, "transactional_id", x->transactional_id);
    put_int(jb, "producer_id", x->producer_id);
    put_int(jb, "producer_epoch", x->epoch);
    put_str(jb, "state", x->state);
    put_int(jb, "timeout_ms", x->timeout_ms);
    put_known(jb, "start_ms", x->start_ms);
    put_known(jb, "age_ms", x->age_ms);
    put_int(jb, "last_update_ms", x->update_ms);
    put_tps(jb, "partitions", x->parts, x->nparts);
    json_builder_end_object(jb);
}

/* GET /v1/transactions: every transactional id the coordinator here
 * knows, and its counts since the start. */
static void doc_transactions(JsonBuilder *jb, const struct br_snapshot *s)
{
    json_builder_begin_object(jb);
    put_int(jb, "broker", s->node_id);
    json_builder_set_member_name(jb, "transactions");
    json_builder_begin_array(jb);
    gint64 open = 0;
    for (size_t i = 0; i < s->ntxns; i++) {
        put_txn(jb, &s->txns[i]);
        open += s->txns[i].open ? 1 : 0;
    }
    json_builder_end_array(jb);
    put_int(jb, "open", open);
    put_int(jb, "committed", s->txns_committed);
    put_int(jb, "aborted", s->txns_aborted);
    put_int(jb, "timed_out", s->txns_timed_out);
    put_int(jb, "fenced", s->txns_fenced);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

static void put_rate(JsonBuilder *jb, const char *key, double v)
{
    json_builder_set_member_name(jb, key);
    if (v < 0) {
        json_builder_add_null_value(jb);
    } else {
        json_builder_add_double_value(jb, v);
    }
}

/* GET /v1/quotas: the client quota entities in force here (as
 * /config/users/<user>/clients/<client-id> names them, null for a level
 * an entity has not) and every rate measured for them, with the throttle
 * time it earned and, while a connection of it is muted, the time left. */
static void doc_quotas(JsonBuilder *jb, const struct br_snapshot *s)
{
    json_builder_begin_object(jb);
    put_int(jb, "broker", s->node_id);
    json_builder_set_member_name(jb, "quotas");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < s->nquotas; i++) {
        const struct br_snap_quota *q = &s->quotas[i];
        json_builder_begin_object(jb);
        put_str(jb, "user", q->user);
        put_str(jb, "client_id", q->client);
        put_rate(jb, "producer_byte_rate", q->producer_byte_rate);
        put_rate(jb, "consumer_byte_rate", q->consumer_byte_rate);
        put_rate(jb, "request_percentage", q->request_percentage);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "clients");
    json_builder_begin_array(jb);
    gint64 throttled = 0;
    for (size_t i = 0; i < s->nquota_rates; i++) {
        const struct br_snap_quota_rate *r = &s->quota_rates[i];
        json_builder_begin_object(jb);
        put_str(jb, "type", r->type);
        put_str(jb, "user", r->user);
        put_str(jb, "client_id", r->client);
        put_rate(jb, "quota", r->limit);
        put_double(jb, "rate", r->rate);
        put_int(jb, "throttle_time_ms_total", r->throttle_total_ms);
        put_int(jb, "throttle_time_ms_left", r->throttle_left_ms);
        put_bool(jb, "throttled", r->throttle_left_ms > 0);
        json_builder_end_object(jb);
        throttled += r->throttle_left_ms > 0 ? 1 : 0;
    }
    json_builder_end_array(jb);
    put_int(jb, "throttled_now", throttled);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

/* GET /v1/reassignments: the partition moves under way
 * (/admin/reassign_partitions), each with its assignment while it moves
 * (the target, then the old replicas not in it), the replicas being added
 * and removed, its leader and HW, and each replica's LEO when this broker
 * leads it (a follower's LEO only its leader knows). */
static void doc_reassignments(JsonBuilder *jb, const struct br_snapshot *s)
{
    json_builder_begin_object(jb);
    put_int(jb, "broker", s->node_id);
    json_builder_set_member_name(jb, "reassignments");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < s->ntopics; i++) {
        const struct br_snap_topic *t = &s->topics[i];
        for (int32_t k = 0; k < t->npartitions; k++) {
            const struct br_snap_partition *p = &t->parts[k];
            if (p->ntarget == 0) {
                continue;
            }
            json_builder_begin_object(jb);
            put_str(jb, "topic", t->name);
            put_int(jb, "partition", p->partition);
            put_ids(jb, "target", p->target, p->ntarget);
            json_builder_set_member_name(jb, "replicas");
            json_builder_begin_array(jb);
            for (int32_t r = 0; r < p->nreplicas; r++) {
                json_builder_add_int_value(jb, p->replicas[r].broker);
            }
            json_builder_end_array(jb);
            put_move_sets(jb, p);
            put_int(jb, "leader", p->leader);
            put_bool(jb, "led_here", p->led_here);
            put_known(jb, "high_watermark", p->high_watermark);
            if (p->led_here) {
                json_builder_set_member_name(jb, "replica_leos");
                json_builder_begin_object(jb);
                for (int32_t r = 0; r < p->nreplicas; r++) {
                    char id[16];
                    g_snprintf(id, sizeof id, "%d", (int)p->replicas[r].broker);
                    put_known(jb, id, p->replicas[r].log_end_offset);
                }
                json_builder_end_object(jb);
            }
            put_ids(jb, "in_sync", p->isr, p->nisr);
            put_str(jb, "leader_admin_url",
                    p->leader >= 0 ? broker_admin_url(s, p->leader) : NULL);
            json_builder_end_object(jb);
        }
    }
    json_builder_end_array(jb);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

static const struct br_snap_txn *find_txn(const struct br_snapshot *s, const char *id)
{
    for (size_t i = 0; i < s->ntxns; i++) {
        if (g_strcmp0(s->txns[i].transactional_id, id) == 0) {
            return &s->txns[i];
        }
    }
    return NULL;
}

static void doc_led_partitions(JsonBuilder *jb, const struct br_snapshot *s)
{
    json_builder_begin_object(jb);
    put_int(jb, "broker", s->node_id);
    json_builder_set_member_name(jb, "partitions");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < s->ntopics; i++) {
        put_partitions(jb, s, &s->topics[i], TRUE);
    }
    json_builder_end_array(jb);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

void br_admin_lag(const struct br_snapshot *s, const struct br_admin_live *live,
                  const struct br_snap_lag *l, gint64 *hw, gint64 *lag, gint32 *from)
{
    *hw = l->high_watermark;
    *lag = l->lag;
    *from = l->high_watermark >= 0 ? s->node_id : -1;
    if (l->high_watermark < 0 && live != NULL &&
        br_admin_peers_hw(live->peers, l->topic, l->partition, hw, from)) {
        *lag = *hw > l->committed ? *hw - l->committed : 0;
    }
}

static void put_group_summary(JsonBuilder *jb, const struct br_snapshot *s,
                              const struct br_admin_live *live, const struct br_snap_group *g)
{
    put_str(jb, "group_id", g->group_id);
    put_str(jb, "state", g->state);
    put_str(jb, "protocol_type", g->protocol_type);
    put_str(jb, "protocol", g->protocol);
    put_int(jb, "generation", g->generation);
    put_int(jb, "members", (gint64)g->members);
    gint64 total = 0;
    for (size_t i = 0; i < g->nlags; i++) {
        gint64 hw = 0;
        gint64 lag = 0;
        gint32 from = -1;
        br_admin_lag(s, live, &g->lags[i], &hw, &lag, &from);
        total += lag > 0 ? lag : 0;
    }
    put_int(jb, "lag", total);
}

static void doc_groups(JsonBuilder *jb, const struct br_snapshot *s,
                       const struct br_admin_live *live)
{
    json_builder_begin_object(jb);
    put_int(jb, "broker", s->node_id);
    json_builder_set_member_name(jb, "groups");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < s->ngroups; i++) {
        json_builder_begin_object(jb);
        put_group_summary(jb, s, live, &s->groups[i]);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

static void doc_group(JsonBuilder *jb, const struct br_snapshot *s,
                      const struct br_admin_live *live, const struct br_snap_group *g)
{
    json_builder_begin_object(jb);
    put_int(jb, "broker", s->node_id);
    put_group_summary(jb, s, live, g);
    json_builder_set_member_name(jb, "member_list");
    json_builder_begin_array(jb);
    for (size_t i = 0; g->member_list != NULL && i < g->members; i++) {
        const struct br_snap_member *m = &g->member_list[i];
        json_builder_begin_object(jb);
        put_str(jb, "member_id", m->member_id);
        put_str(jb, "client_id", m->client_id);
        put_str(jb, "client_host", m->client_host);
        put_tps(jb, "assignment", m->assigned, m->nassigned);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "offsets");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < g->nlags; i++) {
        const struct br_snap_lag *l = &g->lags[i];
        gint64 hw = 0;
        gint64 lag = 0;
        gint32 from = -1;
        br_admin_lag(s, live, l, &hw, &lag, &from);
        json_builder_begin_object(jb);
        put_str(jb, "topic", l->topic);
        put_int(jb, "partition", l->partition);
        put_int(jb, "committed_offset", l->committed);
        put_known(jb, "high_watermark", hw);
        put_known(jb, "lag", lag);
        put_known(jb, "high_watermark_from", from);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    put_snapshot_info(jb, s);
    json_builder_end_object(jb);
}

static const struct br_snap_group *find_group(const struct br_snapshot *s, const char *id)
{
    for (size_t i = 0; i < s->ngroups; i++) {
        if (strcmp(s->groups[i].group_id, id) == 0) {
            return &s->groups[i];
        }
    }
    return NULL;
}

static gboolean parse_id(const char *text, int32_t *out)
{
    guint64 v = 0;
    if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXINT32, &v, NULL)) {
        return FALSE;
    }
    *out = (int32_t)v;
    return TRUE;
}

/* GET / and GET /v1: what the API serves, so that a first look at the
 * port finds the documents instead of a 404. The same list as
 * broker/README.md's "Documents". */
static const struct {
    const char *path;
    const char *what;
} index_entries[] = {
    {"/v1/cluster", "the cluster as this broker knows it: brokers, controller, counts"},
    {"/v1/brokers", "the live brokers' ids"},
    {"/v1/brokers/{id}", "one broker: address, admin URL, configs, connections"},
    {"/v1/topics", "every topic with its partition count and replication factor"},
    {"/v1/topics/{topic}", "one topic: its configs and partitions"},
    {"/v1/topics/{topic}/partitions", "one topic's partitions"},
    {"/v1/partitions", "the partitions this broker leads, every replica's LEO against the HW"},
    {"/v1/groups", "the consumer groups this broker coordinates, with their lag"},
    {"/v1/groups/{group}", "one group: members, assignments, offsets and lag"},
    {"/v1/transactions", "the transactional ids this broker coordinates: state, producer, age"},
    {"/v1/transactions/{id}", "one transactional id"},
    {"/v1/transactions/{id}/abort", "POST (with the token): abort its Ongoing transaction"},
    {"/v1/quotas", "client quotas in force here, the rates measured, the clients throttled now"},
    {"/v1/reassignments", "the partition moves under way: target, replicas added and removed, "
                          "each replica's LEO against the HW where led here"},
    {"/v1/stream", "WebSocket: a hello, then every change as it happens"},
    {"/metrics", "Prometheus metrics (text format 0.0.4)"},
};

static char *doc_index(void)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    put_str(jb, "api", "samsa admin API v1 (GET and HEAD; POST only for a transaction's abort)");
    json_builder_set_member_name(jb, "documents");
    json_builder_begin_array(jb);
    for (size_t i = 0; i < G_N_ELEMENTS(index_entries); i++) {
        json_builder_begin_object(jb);
        put_str(jb, "path", index_entries[i].path);
        put_str(jb, "what", index_entries[i].what);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    char *text = to_text(jb);
    g_object_unref(jb);
    return text;
}

char *br_admin_document(const struct br_snapshot *s, const struct br_admin_live *live,
                        const char *path, guint *status)
{
    *status = 200;
    if (strcmp(path, "/") == 0 || strcmp(path, "/v1") == 0 || strcmp(path, "/v1/") == 0) {
        return doc_index(); /* needs no state: served before the first snapshot too */
    }
    if (s == NULL) {
        *status = 503;
        return br_admin_error_json(503, "NOT_READY", "the broker has published no state yet");
    }
    /* /v1/a/b/c: the segments after "v1"; a trailing slash is not a segment */
    gchar **seg = g_strsplit(path, "/", MAX_PATH_SEGMENTS + 2);
    guint n = g_strv_length(seg);
    while (n > 1 && seg[n - 1][0] == '\0') {
        g_free(seg[n - 1]);
        seg[--n] = NULL;
    }
    JsonBuilder *jb = json_builder_new();
    const char *code = "NOT_FOUND";
    const char *why = "no such document";
    gboolean ok = FALSE;
    if (n >= 3 && seg[0][0] == '\0' && strcmp(seg[1], "v1") == 0) {
        const char *what = seg[2];
        if (n == 3 && strcmp(what, "cluster") == 0) {
            doc_cluster(jb, s);
            ok = TRUE;
        } else if (n == 3 && strcmp(what, "topics") == 0) {
            doc_topics(jb, s);
            ok = TRUE;
        } else if (n == 3 && strcmp(what, "partitions") == 0) {
            doc_led_partitions(jb, s);
            ok = TRUE;
        } else if (n == 3 && strcmp(what, "quotas") == 0) {
            doc_quotas(jb, s);
            ok = TRUE;
        } else if (n == 3 && strcmp(what, "reassignments") == 0) {
            doc_reassignments(jb, s);
            ok = TRUE;
        } else if (n == 3 && strcmp(what, "groups") == 0) {
            doc_groups(jb, s, live);
            ok = TRUE;
        } else if (n == 3 && strcmp(what, "brokers") == 0) {
            json_builder_begin_object(jb);
            json_builder_set_member_name(jb, "brokers");
            json_builder_begin_array(jb);
            for (size_t i = 0; i < s->nbrokers; i++) {
                json_builder_add_int_value(jb, s->brokers[i].id);
            }
            json_builder_end_array(jb);
            json_builder_end_object(jb);
            ok = TRUE;
        } else if (n == 4 && strcmp(what, "brokers") == 0) {
            int32_t id = -1;
            const struct br_snap_broker *b = NULL;
            if (!parse_id(seg[3], &id)) {
                code = "BAD_REQUEST";
                why = "a broker id is a number from 0 to 2147483647";
            } else {
                b = br_snap_broker(s, id);
                why = "no such broker";
            }
            if (b != NULL) {
                doc_broker(jb, s, live, b);
                ok = TRUE;
            }
        } else if ((n == 4 || n == 5) && strcmp(what, "topics") == 0) {
            const struct br_snap_topic *t = br_snap_topic(s, seg[3]);
            why = "no such topic";
            if (t != NULL && n == 4) {
                doc_topic(jb, s, live, t, TRUE);
                ok = TRUE;
            } else if (t != NULL && strcmp(seg[4], "partitions") == 0) {
                doc_topic(jb, s, live, t, FALSE);
                ok = TRUE;
            } else if (t != NULL) {
                why = "no such document";
            }
        } else if (n == 3 && strcmp(what, "transactions") == 0) {
            doc_transactions(jb, s);
            ok = TRUE;
        } else if (n == 4 && strcmp(what, "transactions") == 0) {
            /* the path comes decoded: an id with a '/' is in the list only */
            const struct br_snap_txn *x = find_txn(s, seg[3]);
            why = "no such transactional id (this broker's transaction coordinator does not know it)";
            if (x != NULL) {
                put_txn(jb, x);
                ok = TRUE;
            }
        } else if (n == 4 && strcmp(what, "groups") == 0) {
            const struct br_snap_group *g = find_group(s, seg[3]);
            why = "no such group (this broker is not its coordinator, or it does not exist)";
            if (g != NULL) {
                doc_group(jb, s, live, g);
                ok = TRUE;
            }
        }
    }
    g_strfreev(seg);
    char *text = NULL;
    if (ok) {
        text = to_text(jb);
    } else {
        *status = strcmp(code, "BAD_REQUEST") == 0 ? 400 : 404;
        text = br_admin_error_json(*status, code, why);
    }
    g_object_unref(jb);
    return text;
}

/* ------------------------------------------------------------ the stream */

static JsonBuilder *event_begin(const struct br_snapshot *s, guint64 *seq, const char *type)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    put_int(jb, "seq", (gint64)++*seq);
    put_str(jb, "type", type);
    put_int(jb, "broker", s->node_id);
    put_int(jb, "time_ms", s->taken_ms);
    return jb;
}

static void event_end(JsonBuilder *jb, GPtrArray *out)
{
    json_builder_end_object(jb);
    g_ptr_array_add(out, to_text(jb));
    g_object_unref(jb);
}

char *br_admin_stream_hello(const struct br_snapshot *s, guint64 seq, const char *stream_id)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    put_int(jb, "seq", (gint64)seq);
    put_str(jb, "type", "hello");
    put_str(jb, "stream", stream_id);
    if (s != NULL) {
        put_int(jb, "broker", s->node_id);
        put_str(jb, "admin_url", s->admin_url);
        put_int(jb, "snapshot", (gint64)s->version);
    }
    json_builder_end_object(jb);
    char *text = to_text(jb);
    g_object_unref(jb);
    return text;
}

static void broker_events(const struct br_snapshot *old, const struct br_snapshot *s, guint64 *seq,
                          GPtrArray *out)
{
    for (size_t i = 0; i < s->nbrokers; i++) {
        const struct br_snap_broker *b = &s->brokers[i];
        const struct br_snap_broker *was = old != NULL ? br_snap_broker(old, b->id) : NULL;
        gboolean was_alive = was != NULL && was->alive;
        if (b->alive != was_alive && (old != NULL || b->alive)) {
            JsonBuilder *jb = event_begin(s, seq, b->alive ? "broker_up" : "broker_down");
            put_int(jb, "id", b->id);
            put_str(jb, "host", b->host);
            put_int(jb, "port", b->port);
            put_str(jb, "admin_url", b->admin_url);
            event_end(jb, out);
        }
    }
    for (size_t i = 0; old != NULL && i < old->nbrokers; i++) {
        const struct br_snap_broker *was = &old->brokers[i];
        if (was->alive && br_snap_broker(s, was->id) == NULL) {
            JsonBuilder *jb = event_begin(s, seq, "broker_down");
            put_int(jb, "id", was->id);
            event_end(jb, out);
        }
    }
    if (old == NULL || old->controller_id != s->controller_id) {
        JsonBuilder *jb = event_begin(s, seq, "controller_change");
        put_int(jb, "controller", s->controller_id);
        put_int(jb, "previous", old != NULL ? old->controller_id : -1);
        event_end(jb, out);
    }
}

/* every member of a is one of b */
static gboolean subset(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    for (int32_t i = 0; i < na; i++) {
        if (!in_ids(b, nb, a[i])) {
            return FALSE;
        }
    }
    return TRUE;
}

static void put_difference(JsonBuilder *jb, const char *key, const int32_t *a, int32_t na,
                           const int32_t *b, int32_t nb)
{
    json_builder_set_member_name(jb, key);
    json_builder_begin_array(jb);
    for (int32_t i = 0; i < na; i++) {
        if (!in_ids(b, nb, a[i])) {
            json_builder_add_int_value(jb, a[i]);
        }
    }
    json_builder_end_array(jb);
}

static gboolean progressed(const struct br_snap_partition *was, const struct br_snap_partition *p)
{
    if (was->high_watermark != p->high_watermark ||
        was->last_stable_offset != p->last_stable_offset ||
        was->log_start_offset != p->log_start_offset ||
        was->log_end_offset != p->log_end_offset || was->nreplicas != p->nreplicas) {
        return TRUE;
    }
    for (int32_t i = 0; i < p->nreplicas; i++) {
        if (was->replicas[i].log_end_offset != p->replicas[i].log_end_offset) {
            return TRUE;
        }
    }
    return FALSE;
}

static void partition_events(const struct br_snap_topic *t, const struct br_snap_partition *was,
                             const struct br_snap_partition *p, const struct br_snapshot *s,
                             guint64 *seq, GPtrArray *out)
{
    if (was->leader != p->leader || was->leader_epoch != p->leader_epoch) {
        JsonBuilder *jb = event_begin(s, seq, "leader_change");
        put_str(jb, "topic", t->name);
        put_int(jb, "partition", p->partition);
        put_int(jb, "leader", p->leader);
        put_int(jb, "leader_epoch", p->leader_epoch);
        put_int(jb, "previous_leader", was->leader);
        put_int(jb, "previous_leader_epoch", was->leader_epoch);
        event_end(jb, out);
    }
    gboolean same = was->nisr == p->nisr && subset(was->isr, was->nisr, p->isr, p->nisr);
    if (!same) {
        const char *type = "isr_change";
        if (subset(p->isr, p->nisr, was->isr, was->nisr)) {
            type = "isr_shrink";
        } else if (subset(was->isr, was->nisr, p->isr, p->nisr)) {
            type = "isr_expand";
        }
        JsonBuilder *jb = event_begin(s, seq, type);
        put_str(jb, "topic", t->name);
        put_int(jb, "partition", p->partition);
        put_int(jb, "leader", p->leader);
        put_int(jb, "leader_epoch", p->leader_epoch);
        put_ids(jb, "isr", p->isr, p->nisr);
        put_ids(jb, "previous_isr", was->isr, was->nisr);
        put_difference(jb, "removed", was->isr, was->nisr, p->isr, p->nisr);
        put_difference(jb, "added", p->isr, p->nisr, was->isr, was->nisr);
        event_end(jb, out);
    }
}

static void put_progress(JsonBuilder *jb, const struct br_snap_topic *t,
                         const struct br_snap_partition *p)
{
    json_builder_begin_object(jb);
    put_str(jb, "topic", t->name);
    put_int(jb, "partition", p->partition);
    put_int(jb, "leader", p->leader);
    put_bool(jb, "led_here", p->led_here);
    put_known(jb, "high_watermark", p->high_watermark);
    put_known(jb, "last_stable_offset", p->last_stable_offset);
    put_known(jb, "log_start_offset", p->log_start_offset);
    put_known(jb, "log_end_offset", p->log_end_offset);
    json_builder_set_member_name(jb, "replicas");
    json_builder_begin_array(jb);
    for (int32_t i = 0; i < p->nreplicas; i++) {
        const struct br_snap_replica *r = &p->replicas[i];
        json_builder_begin_object(jb);
        put_int(jb, "broker", r->broker);
        put_known(jb, "log_end_offset", r->log_end_offset);
        put_known(jb, "lag", r->lag);
        put_bool(jb, "in_sync", r->in_sync);
        put_known(jb, "time_since_caught_up_ms", r->since_caught_up_ms);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
}

void br_admin_stream_events(const struct br_snapshot *old, const struct br_snapshot *s,
                            guint64 *seq, GPtrArray *out)
{
    broker_events(old, s, seq, out);
    /* topics made and gone, leaders and ISRs; progress collected into one
     * event per snapshot (so at most about 10 a second) */
    JsonBuilder *progress = NULL;
    for (size_t i = 0; i < s->ntopics; i++) {
        const struct br_snap_topic *t = &s->topics[i];
        const struct br_snap_topic *ot = old != NULL ? br_snap_topic(old, t->name) : NULL;
        if (ot == NULL && old != NULL) {
            JsonBuilder *jb = event_begin(s, seq, "topic_created");
            put_str(jb, "topic", t->name);
            put_int(jb, "partitions", t->npartitions);
            event_end(jb, out);
        }
        for (int32_t k = 0; k < t->npartitions; k++) {
            const struct br_snap_partition *p = &t->parts[k];
            const struct br_snap_partition *was =
                ot != NULL && k < ot->npartitions ? &ot->parts[k] : NULL;
            if (was != NULL) {
                partition_events(t, was, p, s, seq, out);
            }
            if (was == NULL || progressed(was, p)) {
                if (progress == NULL) {
                    progress = json_builder_new();
                    json_builder_begin_array(progress);
                }
                put_progress(progress, t, p);
            }
        }
    }
    for (size_t i = 0; old != NULL && i < old->ntopics; i++) {
        if (br_snap_topic(s, old->topics[i].name) == NULL) {
            JsonBuilder *jb = event_begin(s, seq, "topic_deleted");
            put_str(jb, "topic", old->topics[i].name);
            event_end(jb, out);
        }
    }
    if (progress != NULL) {
        json_builder_end_array(progress);
        JsonNode *parts = json_builder_get_root(progress);
        g_object_unref(progress);
        JsonBuilder *jb = event_begin(s, seq, "progress");
        json_builder_set_member_name(jb, "partitions");
        json_builder_add_value(jb, parts); /* takes parts */
        event_end(jb, out);
    }
}
