/* samsa-broker: /metrics, the Prometheus text exposition of a snapshot
 * (see documents.h). Names are those the Prometheus JMX exporter's Kafka
 * rules give Kafka's MBeans (kafka.server<type=ReplicaManager,
 * name=UnderReplicatedPartitions> is
 * kafka_server_replicamanager_underreplicatedpartitions), so a Kafka
 * dashboard reads them; what Kafka has no MBean for is samsa_*, and group
 * lag is named as kafka_exporter names it (kafka_consumergroup_lag). */
#include "admin/documents.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

/* A label value with \, " and newline escaped. */
static void label(GString *out, const char *name, const char *value)
{
    g_string_append(out, name);
    g_string_append(out, "=\"");
    for (const char *p = value != NULL ? value : ""; *p != '\0'; p++) {
        if (*p == '\\' || *p == '"') {
            g_string_append_c(out, '\\');
            g_string_append_c(out, *p);
        } else if (*p == '\n') {
            g_string_append(out, "\\n");
        } else {
            g_string_append_c(out, *p);
        }
    }
    g_string_append_c(out, '"');
}

static void head(GString *out, const char *name, const char *type, const char *help)
{
    g_string_append_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample per client quota rate, labelled as Kafka tags its quota
 * sensors (ClientQuotaManager): its rate, or the throttle time it earned. */
static void quota_series(GString *out, const struct br_snapshot *s, const char *name,
                         const char *type, const char *help, gboolean throttle)
{
    head(out, name, type, help);
    for (size_t i = 0; i < s->nquota_rates; i++) {
        const struct br_snap_quota_rate *r = &s->quota_rates[i];
        g_string_append(out, name);
        g_string_append_c(out, '{');
        label(out, "type", r->type);
        g_string_append_c(out, ',');
        label(out, "user", r->user);
        g_string_append_c(out, ',');
        label(out, "client_id", r->client);
        if (throttle) {
            g_string_append_printf(out, "} %" G_GINT64_FORMAT "\n", r->throttle_total_ms);
        } else {
            g_string_append_printf(out, "} %.3f\n", r->rate);
        }
    }
}

/* One sample per replication role of an integer field of its quota
 * (snapshot.h's repl_quota); a bound of none is left out. */
static void repl_series(GString *out, const struct br_snapshot *s, const char *name,
                        const char *type, const char *help, size_t field)
{
    static const char *const roles[2] = {"leader", "follower"};
    head(out, name, type, help);
    for (int r = 0; r < 2; r++) {
        gint64 v = 0;
        memcpy(&v, (const char *)&s->repl_quota[r] + field, sizeof v);
        if (field == offsetof(struct br_snap_repl_quota, bound) && v == G_MAXINT64) {
            continue;
        }
        g_string_append(out, name);
        g_string_append_c(out, '{');
        label(out, "role", roles[r]);
        g_string_append_printf(out, "} %" G_GINT64_FORMAT "\n", v);
    }
}

static void plain(GString *out, const char *name, const char *type, const char *help, gint64 v)
{
    head(out, name, type, help);
    g_string_append_printf(out, "%s %" G_GINT64_FORMAT "\n", name, v);
}

static void topic_counter(GString *out, const struct br_snapshot *s, const char *name,
                          const char *help, size_t field)
{
    head(out, name, "counter", help);
    for (size_t i = 0; i < s->ntopics; i++) {
        const struct br_snap_topic *t = &s->topics[i];
        gint64 v = 0;
        memcpy(&v, (const char *)t + field, sizeof v);
        g_string_append(out, name);
        g_string_append_c(out, '{');
        label(out, "topic", t->name);
        g_string_append_printf(out, "} %" G_GINT64_FORMAT "\n", v);
    }
}

/* One sample per partition this broker hosts (or leads, led_only). */
typedef gint64 (*partition_value)(const struct br_snap_partition *p);

static gint64 p_leo(const struct br_snap_partition *p)
{
    return p->log_end_offset;
}

static gint64 p_log_start(const struct br_snap_partition *p)
{
    return p->log_start_offset;
}

static gint64 p_lso(const struct br_snap_partition *p)
{
    return p->last_stable_offset;
}

static gint64 p_hw(const struct br_snap_partition *p)
{
    return p->high_watermark;
}

static gint64 p_size(const struct br_snap_partition *p)
{
    return p->size_bytes;
}

static gint64 p_under(const struct br_snap_partition *p)
{
    return p->nisr < p->nreplicas ? 1 : 0;
}

static gint64 p_isr(const struct br_snap_partition *p)
{
    return p->nisr;
}

static void per_partition(GString *out, const struct br_snapshot *s, const char *name,
                          const char *help, partition_value f, gboolean led_only)
{
    head(out, name, "gauge", help);
    for (size_t i = 0; i < s->ntopics; i++) {
        const struct br_snap_topic *t = &s->topics[i];
        for (int32_t k = 0; k < t->npartitions; k++) {
            const struct br_snap_partition *p = &t->parts[k];
            if (!p->hosted || (led_only && !p->led_here)) {
                continue;
            }
            g_string_append(out, name);
            g_string_append_c(out, '{');
            label(out, "topic", t->name);
            g_string_append_printf(out, ",partition=\"%" PRId32 "\"} %" G_GINT64_FORMAT "\n",
                                   p->partition, f(p));
        }
    }
}

static void per_replica(GString *out, const struct br_snapshot *s, const char *name,
                        const char *help, gboolean lag)
{
    head(out, name, "gauge", help);
    for (size_t i = 0; i < s->ntopics; i++) {
        const struct br_snap_topic *t = &s->topics[i];
        for (int32_t k = 0; k < t->npartitions; k++) {
            const struct br_snap_partition *p = &t->parts[k];
            for (int32_t r = 0; p->led_here && r < p->nreplicas; r++) {
                const struct br_snap_replica *rep = &p->replicas[r];
                gint64 v = lag ? rep->lag : rep->log_end_offset;
                if (v < 0) {
                    continue;
                }
                g_string_append(out, name);
                g_string_append_c(out, '{');
                label(out, "topic", t->name);
                g_string_append_printf(out,
                                       ",partition=\"%" PRId32 "\",replica=\"%" PRId32
                                       "\"} %" G_GINT64_FORMAT "\n",
                                       p->partition, rep->broker, v);
            }
        }
    }
}

char *br_admin_metrics(const struct br_snapshot *s, const struct br_admin_live *live)
{
    GString *out = g_string_sized_new(4096);
    struct br_snap_health h;
    br_snap_health(s, &h);
    topic_counter(out, s, "kafka_server_brokertopicmetrics_messagesin_total",
                  "Records appended as leader (MessagesInPerSec)",
                  offsetof(struct br_snap_topic, messages_in));
    topic_counter(out, s, "kafka_server_brokertopicmetrics_bytesin_total",
                  "Bytes appended as leader (BytesInPerSec)",
                  offsetof(struct br_snap_topic, bytes_in));
    topic_counter(out, s, "kafka_server_brokertopicmetrics_bytesout_total",
                  "Record bytes sent by Fetch (BytesOutPerSec)",
                  offsetof(struct br_snap_topic, bytes_out));
    plain(out, "kafka_server_replicamanager_underreplicatedpartitions", "gauge",
          "Partitions led here with fewer in-sync replicas than replicas",
          (gint64)h.under_replicated_led_here);
    plain(out, "kafka_server_replicamanager_leadercount", "gauge", "Partitions led here",
          (gint64)h.led_here);
    gint64 hosted = 0;
    for (size_t i = 0; i < s->ntopics; i++) {
        for (int32_t k = 0; k < s->topics[i].npartitions; k++) {
            hosted += s->topics[i].parts[k].hosted ? 1 : 0;
        }
    }
    plain(out, "kafka_server_replicamanager_partitioncount", "gauge", "Partitions hosted here",
          hosted);
    plain(out, "kafka_server_replicamanager_isrshrinks_total", "counter",
          "ISR shrinks of partitions led here (IsrShrinksPerSec)", s->isr_shrinks);
    plain(out, "kafka_server_replicamanager_isrexpands_total", "counter",
          "ISR expansions of partitions led here (IsrExpandsPerSec)", s->isr_expands);
    plain(out, "kafka_controller_kafkacontroller_activecontrollercount", "gauge",
          "1 on the active controller", s->controller_id == s->node_id ? 1 : 0);
    plain(out, "kafka_controller_kafkacontroller_offlinepartitionscount", "gauge",
          "Partitions without a leader, as this broker knows them", (gint64)h.offline);
    plain(out, "samsa_cluster_underminisrpartitions", "gauge",
          "Partitions with fewer in-sync replicas than min.insync.replicas", (gint64)h.under_min_isr);
    gint64 open_txns = 0;
    for (size_t i = 0; i < s->ntxns; i++) {
        open_txns += s->txns[i].open ? 1 : 0;
    }
    plain(out, "samsa_transactions_open", "gauge",
          "Transactions open (Ongoing, Prepare*) on the transaction coordinator here", open_txns);
    plain(out, "samsa_transactions_committed_total", "counter", "Transactions committed",
          s->txns_committed);
    plain(out, "samsa_transactions_aborted_total", "counter",
          "Transactions aborted (by their producer, a timeout, fencing or an operator)",
          s->txns_aborted);
    plain(out, "samsa_transactions_timed_out_total", "counter",
          "Transactions aborted for passing transaction.timeout.ms", s->txns_timed_out);
    /* connections, named as the JMX exporter names Kafka's
     * socket-server-metrics (connection-count, connection-creation-total) */
    plain(out, "kafka_server_socket_server_metrics_connection_count", "gauge",
          "Client connections open on the Kafka listeners", s->connections);
    plain(out, "kafka_server_socket_server_metrics_connection_creation_total", "counter",
          "Client connections accepted on the Kafka listeners", s->connections_accepted);
    plain(out, "samsa_server_connections_refused_total", "counter",
          "Client connections refused (max.connections, max.connections.per.ip, stopping)",
          s->connections_refused);
    plain(out, "samsa_server_connections_refused_per_ip_total", "counter",
          "Client connections refused for max.connections.per.ip (Kafka's "
          "TooManyConnectionsException)",
          s->connections_refused_per_ip);
    plain(out, "samsa_server_connections_idle_closed_total", "counter",
          "Client connections closed idle (connections.max.idle.ms)", s->connections_idle_closed);
    plain(out, "samsa_admin_connections", "gauge", "Admin API connections open, streams included",
          live->connections);
    plain(out, "samsa_admin_stream_clients", "gauge", "Admin API WebSocket stream clients",
          live->stream_clients);
    plain(out, "samsa_admin_connections_refused_total", "counter",
          "Admin API connections refused (admin.max.connections)", live->refused);
    plain(out, "samsa_admin_connections_idle_closed_total", "counter",
          "Admin API connections closed idle (admin.connections.max.idle.ms)", live->idle_closed);
    plain(out, "samsa_admin_streams_stalled_total", "counter",
          "Stream clients cut off for not reading (admin.stream.max.stall.ms)",
          live->streams_stalled);
    plain(out, "samsa_admin_snapshots_total", "counter",
          "Snapshots of the broker's state the reactor built for the admin API", s->snapshots_built);
    head(out, "samsa_admin_reactor_seconds_total", "counter",
         "Reactor time spent for the admin API (the fingerprint every 100 ms, the snapshots)");
    g_string_append_printf(out, "samsa_admin_reactor_seconds_total %.6f\n",
                           (double)s->reactor_us / 1e6);
    head(out, "samsa_admin_thread_cpu_seconds_total", "counter",
         "CPU time of the admin API's thread (HTTP, WebSocket, rendering)");
    g_string_append_printf(out, "samsa_admin_thread_cpu_seconds_total %.6f\n",
                           (double)live->cpu_us / 1e6);

    /* Kafka's replication quotas (ReplicationQuotaManager's byte-rate of
     * the LeaderReplication and FollowerReplication types) */
    head(out, "kafka_server_replication_byte_rate", "gauge",
         "Bytes/s of throttled replicas (LeaderReplication, FollowerReplication byte-rate)");
    for (int r = 0; r < 2; r++) {
        g_string_append(out, "kafka_server_replication_byte_rate{");
        label(out, "type", r == 0 ? "LeaderReplication" : "FollowerReplication");
        g_string_append_printf(out, "} %.3f\n", s->repl_quota[r].rate);
    }
    repl_series(out, s, "samsa_replication_throttled_rate", "gauge",
                "{leader,follower}.replication.throttled.rate in force (absent: none)",
                offsetof(struct br_snap_repl_quota, bound));
    repl_series(out, s, "samsa_replication_throttled_bytes_total", "counter",
                "Bytes of throttled replicas sent (leader) or received (follower)",
                offsetof(struct br_snap_repl_quota, bytes_total));
    repl_series(out, s, "samsa_replication_throttled_total", "counter",
                "Partitions held back from a replica fetch by the replication quota",
                offsetof(struct br_snap_repl_quota, throttled_total));

    /* Kafka's quota sensors (ClientQuotaManager: byte-rate and throttle-time
     * of the Produce, Fetch and Request types, tagged user and client-id) */
    quota_series(out, s, "kafka_server_quota_rate", "gauge",
                 "Rate measured for client quotas: bytes/s (Produce, Fetch) or % (Request)",
                 FALSE);
    quota_series(out, s, "kafka_server_quota_throttle_time_ms_total", "counter",
                 "Throttle time given to clients over their quota (connections muted for it)",
                 TRUE);
    head(out, "kafka_network_requestmetrics_requests_total", "counter",
         "Requests handled, by API (RequestsPerSec)");
    for (size_t i = 0; i < s->napis; i++) {
        g_string_append(out, "kafka_network_requestmetrics_requests_total{");
        label(out, "request", s->apis[i].name);
        g_string_append_printf(out, "} %" G_GINT64_FORMAT "\n", s->apis[i].requests);
    }
    head(out, "kafka_network_requestmetrics_totaltimems", "summary",
         "Time from a request's arrival to its response, by API (TotalTimeMs)");
    for (size_t i = 0; i < s->napis; i++) {
        g_string_append(out, "kafka_network_requestmetrics_totaltimems_sum{");
        label(out, "request", s->apis[i].name);
        g_string_append_printf(out, "} %.3f\n", (double)s->apis[i].total_us / 1000.0);
        g_string_append(out, "kafka_network_requestmetrics_totaltimems_count{");
        label(out, "request", s->apis[i].name);
        g_string_append_printf(out, "} %" G_GINT64_FORMAT "\n", s->apis[i].requests);
    }

    per_partition(out, s, "kafka_log_log_logendoffset", "Log end offset of the replica here",
                  p_leo, FALSE);
    per_partition(out, s, "kafka_log_log_logstartoffset", "Log start offset of the replica here",
                  p_log_start, FALSE);
    per_partition(out, s, "kafka_log_log_size", "Bytes of the replica's segments", p_size, FALSE);
    per_partition(out, s, "samsa_partition_highwatermark", "High watermark", p_hw, FALSE);
    per_partition(out, s, "samsa_partition_laststableoffset",
                  "Last stable offset: read_committed consumers read below it", p_lso, FALSE);
    per_partition(out, s, "kafka_cluster_partition_underreplicated",
                  "1 when a partition led here has fewer in-sync replicas than replicas", p_under,
                  TRUE);
    per_partition(out, s, "kafka_cluster_partition_insyncreplicascount",
                  "In-sync replicas of a partition led here", p_isr, TRUE);
    per_replica(out, s, "samsa_replica_logendoffset",
                "Each replica's log end offset as its leader knows it", FALSE);
    per_replica(out, s, "samsa_replica_lag",
                "Each replica's lag behind its leader's log end offset", TRUE);

    head(out, "kafka_consumergroup_lag", "gauge",
         "Committed offset's distance from the high watermark, groups coordinated here");
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct br_snap_group *g = &s->groups[i];
        for (size_t k = 0; k < g->nlags; k++) {
            gint64 hw = 0;
            gint64 lag = 0;
            gint32 from = -1;
            br_admin_lag(s, live, &g->lags[k], &hw, &lag, &from);
            if (lag < 0) {
                continue;
            }
            g_string_append(out, "kafka_consumergroup_lag{");
            label(out, "consumergroup", g->group_id);
            g_string_append_c(out, ',');
            label(out, "topic", g->lags[k].topic);
            g_string_append_printf(out, ",partition=\"%" PRId32 "\"} %" G_GINT64_FORMAT "\n",
                                   g->lags[k].partition, lag);
        }
    }
    head(out, "kafka_consumergroup_current_offset", "gauge", "Committed offset");
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct br_snap_group *g = &s->groups[i];
        for (size_t k = 0; k < g->nlags; k++) {
            g_string_append(out, "kafka_consumergroup_current_offset{");
            label(out, "consumergroup", g->group_id);
            g_string_append_c(out, ',');
            label(out, "topic", g->lags[k].topic);
            g_string_append_printf(out, ",partition=\"%" PRId32 "\"} %" G_GINT64_FORMAT "\n",
                                   g->lags[k].partition, g->lags[k].committed);
        }
    }
    return g_string_free(out, FALSE);
}
