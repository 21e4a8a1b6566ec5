/* samsa-broker: the composition root: start, run, stop, housekeeping (see
 * broker.h). */
#define _GNU_SOURCE

#include "broker.h"

#include "base/logging.h"
#include "admin_feed.h"
#include "base/mailbox.h"
#include "cluster_member.h"
#include "controlled_shutdown.h"
#include "log_dirs.h"
#include "reactor/net_tls.h"
#include "security/credentials.h"
#include "security/interbroker.h"
#include "security/sasl.h"
#include "server/admin_manager.h"
#include "server/client_quotas.h"
#include "server/group.h"
#include "server/local_controller.h"
#include "replica/replication.h"
#include "server/authorize.h"
#include "server/request.h"
#include "server/topic_admin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void br_broker_housekeeping(struct br_broker *b)
{
    int64_t mono = br_now_mono_ms();
    br_logm_tick(b->s.logs, br_now_wall_ms(), mono);
    br_replication_tick(b->s.replication, mono);
    br_txn_tick(&b->s.txn, br_now_wall_ms());
    br_client_quotas_tick(&b->s);
    br_timer_arm(b->s.net, &b->housekeeping, mono + 1000);
}

static void housekeeping_fire(void *ctx, struct br_timer *t)
{
    (void)t;
    br_broker_housekeeping(ctx);
}

static const struct br_timer_ops housekeeping_timer = {"housekeeping", housekeeping_fire};

void br_broker_wake(struct br_broker *b)
{
    br_mailbox_deliver_all(b->s.mailbox, &b->s);
}

/* What the reactor calls (net.h): the broker is its only user. */
static void net_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    struct br_broker *b = ctx;
    br_broker_handle_frame(&b->s, c, payload, len);
}

static void net_cancel_parked(void *ctx, void *parked)
{
    struct br_broker *b = ctx;
    br_broker_cancel_parked(&b->s, parked);
}

void br_broker_complete_all_parked(struct br_broker *b)
{
    /* the groups answer theirs first; the purgatory hands out every answer
     * and expires the fetches */
    br_groups_complete_all_parked(&b->s);
    br_purgatory_complete_all(&b->s.purgatory);
    br_topic_admin_complete_all_parked(&b->s);
    br_cluster_complete_creates(&b->s);
    br_cluster_complete_waits(&b->s);
    br_complete_controlled_shutdowns(&b->s);
    br_complete_controller_requests(&b->s);
}

static void net_drain(void *ctx)
{
    br_broker_complete_all_parked(ctx);
}

static bool net_stop_requested(void *ctx)
{
    return br_controlled_shutdown_begin(ctx);
}

static const struct br_net_ops broker_net_ops = {net_frame, net_cancel_parked, net_drain,
                                                 net_stop_requested};

static void mailbox_ready(void *ctx, struct br_watch *w)
{
    (void)w; /* one mailbox */
    br_broker_wake(ctx);
}

static const struct br_watch_ops mailbox_watch_ops = {"mailbox", mailbox_ready};

static int mailbox_watch_add(struct br_broker *b)
{
    b->mailbox_watch.fd = br_mailbox_fd(b->s.mailbox);
    return br_net_watch_add(b->s.net, &b->mailbox_watch, &mailbox_watch_ops);
}

/* What the log manager asks (storage/log_manager.h): the high watermark of
 * the partition a log belongs to. */
static int64_t log_high_watermark(void *ctx, const void *owner)
{
    (void)ctx;
    return ((const struct br_partition *)owner)->hw;
}

static const struct br_logm_ops log_manager_ops = {log_high_watermark};

/* The log dirs: made, locked, their recovery points read. */
static int open_log_manager(struct br_broker *b)
{
    const char *dirs[BR_CONFIG_MAX_LOG_DIRS];
    for (size_t i = 0; i < b->s.cfg.n_log_dirs; i++) {
        dirs[i] = b->s.cfg.log_dirs[i];
    }
    struct br_logm_config lc = {
        .dirs = dirs,
        .ndirs = b->s.cfg.n_log_dirs,
        .checkpoint_interval_ms = b->s.cfg.log_flush_offset_checkpoint_interval_ms,
        .retention_check_interval_ms = b->s.cfg.log_retention_check_interval_ms,
        .cleaner_enable = b->s.cfg.log_cleaner_enable,
        .cleaner_threads = b->s.cfg.log_cleaner_threads,
        .cleaner_backoff_ms = b->s.cfg.log_cleaner_backoff_ms,
        .writebehind_enable = b->s.cfg.log_writebehind_enable,
        .writebehind_window_bytes = b->s.cfg.log_writebehind_window_bytes,
        .writebehind_budget_bytes = b->s.cfg.log_writebehind_budget_bytes,
    };
    return br_logm_open(&lc, &log_manager_ops, b, &b->s.logs);
}

static int load_topics(struct br_broker *b, bool identity_existed);

/* The TLS context of SSL listener i, from the ssl.* keys and their
 * listener.name.<listener>. overrides. 0 or -1 (logged). */
static int tls_context(struct br_broker *b, size_t i)
{
    const struct br_config *c = &b->s.cfg;
    const char *l = c->listeners[i].name;
    struct br_tls_settings s;
    br_listener_tls_settings(c, l, &s);
    char err[512];
    int rc = br_tls_ctx_new(&s, &b->tls[i], err, sizeof err);
    if (rc != 0) {
        br_error("%s", rc == KP_E_NOMEM ? "out of memory" : err);
        return -1;
    }
    return 0;
}

/* The SASL of SASL listener i (sasl.enabled.mechanisms, the PLAIN users)
 * and, the first time, the SCRAM store: standalone from
 * sasl.scram.credentials.file. 0 or -1 (logged). */
static int sasl_listener(struct br_broker *b, size_t i)
{
    const struct br_config *c = &b->s.cfg;
    const struct br_listener *l = &c->listeners[i];
    char err[512];
    if (b->scram == NULL) {
        if (br_scram_store_new(&b->scram) != 0) {
            br_error("out of memory");
            return -1;
        }
        b->s.scram = b->scram; /* a cluster's from ZooKeeper (cluster_users.c) */
        const char *file = c->raw[BR_CFG_SASL_SCRAM_CREDENTIALS_FILE];
        if (file != NULL && c->zookeeper_connect != NULL) {
            br_warn("sasl.scram.credentials.file is for a standalone broker: a cluster's SCRAM "
                    "users are in ZooKeeper (/config/users, samsa users --zookeeper); %s is not "
                    "read",
                    file);
            file = NULL;
        }
        if (file != NULL && br_scram_store_load_file(b->scram, file, err, sizeof err) != 0) {
            br_error("%s", err);
            return -1;
        }
    }
    if (br_sasl_listener_new(c, l->name, b->scram, &b->sasl[i], err, sizeof err) != 0) {
        br_error("%s", err);
        return -1;
    }
    if (l->security_protocol == BR_SECURITY_SASL_PLAINTEXT) {
        br_warn("listener %s is SASL_PLAINTEXT: PLAIN passwords and the traffic cross the "
                "network in clear (SASL_SSL encrypts them)",
                l->name);
    }
    br_net_listener_auth(b->s.net, i, b->sasl[i], c->sasl_server_max_receive_size,
                         c->connections_max_unauthenticated_ms);
    return 0;
}

/* The advertised listeners as clients reach them: an empty host or 0.0.0.0
 * is not an address a client can use (127.0.0.1 there), port 0 is the one
 * the listener of that name bound. advertised_host/_port: the inter-broker
 * listener's (config.c made sure it is advertised). */
static void advertise(struct br_broker *b)
{
    const struct br_config *cfg = &b->s.cfg;
    b->s.nadvertised = 0;
    for (size_t i = 0; i < cfg->n_advertised_listeners; i++) {
        const struct br_listener *a = &cfg->advertised_listeners[i];
        struct br_advertised *e = &b->s.advertised[b->s.nadvertised++];
        (void)snprintf(e->listener, sizeof e->listener, "%s", a->name);
        (void)snprintf(e->host, sizeof e->host, "%s",
                       a->host[0] != '\0' && strcmp(a->host, "0.0.0.0") != 0 ? a->host
                                                                              : "127.0.0.1");
        e->port = a->port;
        e->security_protocol = a->security_protocol;
        for (size_t j = 0; j < cfg->n_listeners && a->port == 0 && !b->s.in_process; j++) {
            if (strcmp(cfg->listeners[j].name, a->name) == 0) {
                e->port = br_net_bound_port(b->s.net, j);
            }
        }
        if (strcmp(a->name, cfg->inter_broker_listener_name) == 0) {
            (void)snprintf(b->s.advertised_host, sizeof b->s.advertised_host, "%s", e->host);
            b->s.advertised_port = e->port;
        }
    }
}

int br_broker_start(struct br_broker *b)
{
    if (b->s.cfg.n_log_dirs == 0 || b->s.cfg.n_log_dirs > BR_CONFIG_MAX_LOG_DIRS) {
        br_error("log.dirs must name 1 to %d directories", BR_CONFIG_MAX_LOG_DIRS);
        return -1;
    }
    b->s.node_id = b->s.cfg.broker_id >= 0 ? b->s.cfg.broker_id : 0; /* until meta.properties says */
    /* a member of a cluster: topics and leadership come from the controller */
    b->cluster = b->s.cfg.zookeeper_connect != NULL;
    /* a cluster of one never grows: its __consumer_offsets has the one
     * replica it can have, whatever offsets.topic.replication.factor says */
    b->s.txn_topic_rf = b->s.cfg.transaction_state_log_replication_factor;
    if (!b->cluster && b->s.txn_topic_rf > 1) {
        b->s.txn_topic_rf = 1;
    }
    b->s.offsets_topic_rf = b->s.cfg.offsets_topic_replication_factor;
    if (!b->cluster && b->s.offsets_topic_rf > 1) {
        b->s.offsets_topic_rf = 1;
    }
    br_mc_init(&b->s.mc);
    br_supported_apis_init(&b->s, b->cluster);
    b->s.admin_ops = b->cluster ? &br_admin_zookeeper : &br_admin_standalone;
    br_fdlimit_init(b->s.cfg.log_open_files_max, &b->fdlimit);
    if (br_filecache_new(b->fdlimit.files_max, &b->s.files) != 0) {
        br_error("out of memory");
        return -1;
    }
    /* the listeners first: a port in use stops start-up before any file
     * (log dir, meta.properties with a new cluster id) is created */
    struct br_net_limits lim = {
        .max_connections = b->s.cfg.max_connections,
        .max_request_bytes = b->s.cfg.socket_request_max_bytes,
        .idle_ms = b->s.cfg.connections_max_idle_ms,
        .queued_max_bytes = b->s.cfg.queued_max_request_bytes,
    };
    if (br_net_create(&lim, &broker_net_ops, b, &b->s.net) != 0) {
        return -1;
    }
    if (br_net_limit_per_ip(b->s.net, b->s.cfg.max_connections_per_ip,
                            (const uint8_t(*)[16])b->s.cfg.ip_override_addr,
                            b->s.cfg.ip_override_max, b->s.cfg.n_ip_overrides) != 0) {
        br_error("out of memory");
        return -1;
    }
    br_purgatory_init(&b->s.purgatory, b->s.net, &b->s);
    for (size_t i = 0; i < b->s.cfg.n_listeners && !b->s.in_process; i++) {
        if (br_net_listen(b->s.net, b->s.cfg.listeners[i].host, b->s.cfg.listeners[i].port) != 0) {
            return -1;
        }
        int16_t sp = b->s.cfg.listeners[i].security_protocol;
        if (sp == BR_SECURITY_SSL || sp == BR_SECURITY_SASL_SSL) {
            if (tls_context(b, i) != 0) {
                return -1;
            }
            br_net_listener_tls(b->s.net, i, b->tls[i]);
        }
        if ((sp == BR_SECURITY_SASL_PLAINTEXT || sp == BR_SECURITY_SASL_SSL) &&
            sasl_listener(b, i) != 0) {
            return -1;
        }
    }
    if (open_log_manager(b) != 0) {
        return -1;
    }
    br_rm_init(&b->s.rm, &b->s.cfg, b->s.logs, b->s.files, &b->s.purgatory, &b->s.mc);
    bool identity_existed = false;
    if (br_log_dirs_load_identity(b, &identity_existed) != 0) {
        return -1;
    }
    if (!b->cluster && load_topics(b, identity_existed) != 0) {
        return -1;
    }
    br_logm_loaded(b->s.logs);
    br_info("loaded %zu topic(s)", b->s.rm.ntopics);
    br_fdlimit_report(&b->fdlimit, br_logm_log_count(b->s.logs), br_logm_segment_count(b->s.logs),
                      b->s.cfg.max_connections, br_config_is_set(&b->s.cfg, BR_CFG_MAX_CONNECTIONS));
    if (br_producer_ids_load(&b->s) != 0) {
        return -1;
    }
    b->logs_loaded = true;
    advertise(b);
    if (b->cluster) {
        /* the fetchers', markers' and controller's connections to the others */
        char err[512];
        if (br_interbroker_new(&b->s.cfg, b->s.node_id, &b->interbroker, err, sizeof err) != 0) {
            br_error("%s", err);
            return -1;
        }
        br_net_outbound_security(b->s.net, br_interbroker_security(b->interbroker));
    }
    if (br_mailbox_create(&b->s.mailbox) != 0 || mailbox_watch_add(b) != 0) {
        br_error("cannot make the reactor's mailbox");
        return -1;
    }
    if (br_logm_start(b->s.logs, b->s.mailbox, &b->s, b->s.in_process) != 0) {
        return -1;
    }
    /* standalone: topics are created and deleted here, off the reactor */
    if (!b->cluster && br_topic_admin_start(&b->s) != 0) {
        br_error("cannot start the I/O worker");
        return -1;
    }
    /* standalone is a cluster of one: this broker is its controller, and
     * hands its metadata cache what a controller would send */
    if (!b->cluster && br_local_controller_start(&b->s) != 0) {
        br_error("out of memory");
        return -1;
    }
    if (br_client_quotas_start(&b->s) != 0) {
        return -1;
    }
    br_timer_init(&b->housekeeping, &housekeeping_timer, b);
    br_timer_arm(b->s.net, &b->housekeeping, br_now_mono_ms() + 1000);
    if (br_authz_start(&b->s) != 0) {
        return -1; /* logged */
    }
    int terr = br_txn_server_start(&b->s);
    if (terr != 0) {
        br_error("transaction coordinator: %s", terr < 0 ? kp_err_str(terr) : kp_err_name(terr));
        return -1;
    }
    int gerr = br_groups_start(&b->s);
    if (gerr != 0) {
        br_error("group coordinator: %s", gerr < 0 ? kp_err_str(gerr) : kp_err_name(gerr));
        return -1;
    }
    /* before the registration, which names the admin API's URL */
    if (br_admin_feed_start(b) != 0) {
        return -1;
    }
    if (b->cluster) {
        struct br_replication_env env = {&b->s.cfg,  b->s.net,        b->s.node_id,
                                         &b->s.rm,   &b->s.mc,        &b->s.purgatory,
                                         NULL};
        if (br_replication_start(&env, &b->s.replication) != 0) {
            br_error("out of memory");
            return -1;
        }
        if (br_cluster_admin_start(&b->s) != 0) {
            br_error("cannot start the I/O worker");
            return -1;
        }
        return br_member_start(b);
    }
    br_info("broker %" PRId32 " of cluster %s serving as %s:%d (standalone)", b->s.node_id,
            b->s.cluster_id, b->s.advertised_host, b->s.advertised_port);
    return 0;
}

/* Standalone: the topics of the metadata file, their logs opened with
 * recovery, after the log dirs were checked against them. 0 or -1
 * (logged). */
static int load_topics(struct br_broker *b, bool identity_existed)
{
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/" BR_META_FILE_NAME, b->s.cfg.log_dirs[0]);
    char err[512];
    /* without the store's file, the log dirs are checked before it is made:
     * a refused start leaves no empty file behind */
    bool metadata_missing = access(path, F_OK) != 0 && errno == ENOENT;
    if (metadata_missing && br_log_dirs_scan(b, NULL, 0, true, identity_existed) != 0) {
        return -1;
    }
    if (br_meta_file_open(path, &b->s.meta, err, sizeof err) != 0) {
        br_error("metadata store %s: %s. It holds every topic, its partitions and its configs: "
                 "Samsa does not start on a damaged one; restore it from a backup",
                 path, err);
        return -1;
    }
    struct br_topic_meta *topics = NULL;
    size_t ntopics = 0;
    if (br_meta_load(&b->s.meta, &topics, &ntopics, err, sizeof err) != 0) {
        br_error("metadata store %s: %s", path, err);
        return -1;
    }
    if (!metadata_missing && br_log_dirs_scan(b, topics, ntopics, false, identity_existed) != 0) {
        br_topic_metas_free(topics, ntopics);
        return -1;
    }
    for (size_t i = 0; i < ntopics; i++) {
        if (br_rm_topic_load(&b->s.rm, &topics[i]) != 0) {
            br_error("cannot load topic %s", topics[i].name);
            br_topic_metas_free(topics, ntopics);
            return -1;
        }
    }
    br_topic_metas_free(topics, ntopics);
    return 0;
}

int br_broker_run(struct br_broker *b)
{
    int rc = br_net_run(b->s.net);
    b->s.stopping = true;
    br_net_drain(b->s.net, 5000);
    return rc;
}

void br_broker_stop(struct br_broker *b)
{
    /* checkpoints and the clean-shutdown mark only for logs that were
     * loaded: a start that failed before leaves the log dirs as they were */
    bool started = b->logs_loaded;
    bool flushed = true;
    /* the admin thread first: nothing is published after this */
    br_admin_feed_stop(b);
    /* first: a creation in flight ends with its topic complete (or not
     * there at all), before anything is flushed or checkpointed */
    br_topic_admin_stop(&b->s);
    br_cluster_admin_stop(&b->s);
    br_controller_requests_free(&b->s); /* answered at the drain (br_complete_controller_requests) */
    br_groups_stop(&b->s);
    br_txn_server_stop(&b->s);
    br_authz_stop(&b->s);
    /* the controller stops and the registration goes with the session;
     * then the fetchers */
    br_controlled_shutdown_free(b);
    br_member_stop(b);
    br_admin_feed_free(b); /* after the session: no answer comes any more */
    br_replication_stop(b->s.replication);
    b->s.replication = NULL;
    br_cluster_admin_free(&b->s);
    /* the flushes and checkpoint writes under way end, the cleaning stops;
     * from here on, the writes are made at once */
    br_logm_stop(b->s.logs);
    br_mailbox_free(b->s.mailbox);
    b->s.mailbox = NULL;
    if (b->s.logs != NULL) {
        flushed = br_logm_flush_all(b->s.logs);
        if (started) {
            br_logm_write_checkpoints(b->s.logs);
            /* Kafka's Log.close: each partition's producer state at its
             * log end, so that the next start reads no log to rebuild it */
            for (size_t i = 0; i < b->s.rm.ntopics; i++) {
                for (int32_t k = 0; k < b->s.rm.topics[i]->npartitions; k++) {
                    br_partition_snapshot_producers(&b->s.rm.topics[i]->partitions[k]);
                }
            }
        }
    }
    br_rm_fini(&b->s.rm);
    br_filecache_free(b->s.files); /* after the logs: every segment has left it */
    b->s.files = NULL;
    br_meta_close(&b->s.meta);
    if (b->s.net != NULL) {
        br_purgatory_fini(&b->s.purgatory);
    }
    br_net_free(b->s.net);
    b->s.net = NULL;
    for (size_t i = 0; i < BR_CONFIG_MAX_LISTENERS; i++) {
        br_tls_ctx_free(b->tls[i]); /* after the net: its connections used them */
        b->tls[i] = NULL;
        br_sasl_listener_free(b->sasl[i]);
        b->sasl[i] = NULL;
    }
    br_scram_store_free(b->scram);
    b->scram = NULL;
    br_interbroker_free(b->interbroker); /* after the net and the controller */
    b->interbroker = NULL;
    b->s.scram = NULL;
    /* every log closed: the dirs are marked clean and unlocked */
    br_logm_close(b->s.logs, flushed && started);
    b->s.logs = NULL;
    b->logs_loaded = false;
    br_mc_free(&b->s.mc);
    br_client_quotas_stop(&b->s);
}
