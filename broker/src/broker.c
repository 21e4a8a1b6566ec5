/* samsa-broker: the composition root: start, run, stop, housekeeping (see
 * broker.h). */
#define _GNU_SOURCE

#include "broker.h"

#include "base/logging.h"
#include "log_cleaner.h"
#include "log_dirs.h"
#include "log_flusher.h"
#include "log_retention.h"
#include "reactor/mailbox.h"
#include "server/group.h"
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
    br_flusher_tick(b, br_now_wall_ms(), mono);
    br_retention_tick(b, mono);
    br_cleaner_tick(b, mono);
    br_timer_arm(b->net, &b->housekeeping, mono + 1000);
}

static void housekeeping_fire(void *ctx, struct br_timer *t)
{
    (void)t;
    br_broker_housekeeping(ctx);
}

static const struct br_timer_ops housekeeping_timer = {"housekeeping", housekeeping_fire};

void br_broker_wake(struct br_broker *b)
{
    br_mailbox_deliver_all(b->mailbox, b);
}

static int lock_dir(struct br_broker *b, size_t i)
{
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/.lock", b->cfg.log_dirs[i]);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        br_error("cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        br_error("log dir %s is in use by another broker (%s is locked)", b->cfg.log_dirs[i], path);
        close(fd);
        return -1;
    }
    b->dir_locks[i] = fd;
    return 0;
}

/* A log dir that does not exist yet, or holds no meta.properties and no
 * partition (no subdirectory; a file system's lost+found aside): a first
 * start, not a stop that needs recovery. */
static bool log_dir_is_new(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return errno == ENOENT;
    }
    bool fresh = true;
    while (fresh) {
        const struct dirent *de = readdir(d);
        if (de == NULL) {
            break;
        }
        const char *name = de->d_name;
        if (strcmp(name, "meta.properties") == 0) {
            fresh = false;
            continue;
        }
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "lost+found") == 0) {
            continue;
        }
        struct stat st;
        bool is_dir = de->d_type == DT_DIR;
        if (de->d_type == DT_UNKNOWN && fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            is_dir = S_ISDIR(st.st_mode);
        }
        fresh = !is_dir;
    }
    (void)closedir(d);
    return fresh;
}

/* What the reactor calls (net.h): the broker is its only user. */
static void net_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    br_broker_handle_frame(ctx, c, payload, len);
}

static void net_cancel_parked(void *ctx, void *parked)
{
    br_broker_cancel_parked(ctx, parked);
}

static void net_drain(void *ctx)
{
    br_broker_complete_all_parked(ctx);
}

static const struct br_net_ops broker_net_ops = {net_frame, net_cancel_parked, net_drain};

static void mailbox_ready(void *ctx, struct br_watch *w)
{
    (void)w; /* one mailbox */
    br_broker_wake(ctx);
}

static const struct br_watch_ops mailbox_watch_ops = {"mailbox", mailbox_ready};

int br_broker_start(struct br_broker *b)
{
    for (size_t i = 0; i < BR_CONFIG_MAX_LOG_DIRS; i++) {
        b->dir_locks[i] = -1;
    }
    if (b->cfg.n_log_dirs == 0 || b->cfg.n_log_dirs > BR_CONFIG_MAX_LOG_DIRS) {
        br_error("log.dirs must name 1 to %d directories", BR_CONFIG_MAX_LOG_DIRS);
        return -1;
    }
    b->node_id = b->cfg.broker_id >= 0 ? b->cfg.broker_id : 0; /* until meta.properties says */
    br_supported_apis_init(b);
    br_fdlimit_init(b->cfg.log_open_files_max, &b->fdlimit);
    if (br_filecache_new(b->fdlimit.files_max, &b->files) != 0) {
        br_error("out of memory");
        return -1;
    }
    /* the listeners first: a port in use stops start-up before any file
     * (log dir, meta.properties with a new cluster id) is created */
    struct br_net_limits lim = {
        .max_connections = b->cfg.max_connections,
        .max_request_bytes = b->cfg.socket_request_max_bytes,
        .idle_ms = b->cfg.connections_max_idle_ms,
        .queued_max_bytes = b->cfg.queued_max_request_bytes,
    };
    if (br_net_create(&lim, &broker_net_ops, b, &b->net) != 0) {
        return -1;
    }
    br_purgatory_init(&b->purgatory, b->net, b);
    for (size_t i = 0; i < b->cfg.n_listeners && !b->in_process; i++) {
        if (br_net_listen(b->net, b->cfg.listeners[i].host, b->cfg.listeners[i].port) != 0) {
            return -1;
        }
    }
    bool first_start[BR_CONFIG_MAX_LOG_DIRS];
    for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
        first_start[i] = log_dir_is_new(b->cfg.log_dirs[i]);
        if (br_mkdirs(b->cfg.log_dirs[i]) != 0) {
            br_error("cannot create log dir %s: %s", b->cfg.log_dirs[i], strerror(errno));
            return -1;
        }
        if (lock_dir(b, i) != 0) {
            return -1;
        }
    }
    bool identity_existed = false;
    if (br_log_dirs_load_identity(b, &identity_existed) != 0) {
        return -1;
    }
    /* recovery points, and whether the last stop was clean */
    for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
        char path[4096];
        (void)snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", b->cfg.log_dirs[i]);
        bool clean = access(path, F_OK) == 0;
        (void)unlink(path);
        if (first_start[i]) {
            br_info("log dir %s: first start", b->cfg.log_dirs[i]);
        } else {
            br_info("log dir %s: last stop was %s", b->cfg.log_dirs[i],
                    clean ? "clean" : "unclean: recovering");
        }
        (void)snprintf(path, sizeof path, "%s/%s", b->cfg.log_dirs[i], BR_RECOVERY_CHECKPOINT);
        struct br_checkpoint_entry *e = NULL;
        size_t n = 0;
        if (access(path, F_OK) == 0) {
            if (br_broker_read_dir_checkpoint(b, i, BR_RECOVERY_CHECKPOINT,
                                              "every segment will be recovered", &e, &n)) {
                struct br_checkpoint_entry *all =
                    kp_realloc(b->recovery, (b->nrecovery + n + 1) * sizeof *all);
                if (all != NULL) {
                    if (n > 0) {
                        memcpy(all + b->nrecovery, e, n * sizeof *e);
                    }
                    b->recovery = all;
                    b->nrecovery += n;
                }
            }
            br_checkpoint_free(e);
        }
    }
    if (b->nrecovery > 1) {
        qsort(b->recovery, b->nrecovery, sizeof *b->recovery, br_checkpoint_entry_cmp);
    }
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/" BR_META_FILE_NAME, b->cfg.log_dirs[0]);
    char err[512];
    /* without the store's file, the log dirs are checked before it is made:
     * a refused start leaves no empty file behind */
    bool metadata_missing = access(path, F_OK) != 0 && errno == ENOENT;
    if (metadata_missing && br_log_dirs_scan(b, NULL, 0, true, identity_existed) != 0) {
        return -1;
    }
    if (br_meta_file_open(path, &b->meta, err, sizeof err) != 0) {
        br_error("metadata store %s: %s. It holds every topic, its partitions and its configs: "
                 "Samsa does not start on a damaged one; restore it from a backup",
                 path, err);
        return -1;
    }
    struct br_topic_meta *topics = NULL;
    size_t ntopics = 0;
    if (br_meta_load(&b->meta, &topics, &ntopics, err, sizeof err) != 0) {
        br_error("metadata store %s: %s", path, err);
        return -1;
    }
    if (!metadata_missing && br_log_dirs_scan(b, topics, ntopics, false, identity_existed) != 0) {
        br_topic_metas_free(topics, ntopics);
        return -1;
    }
    for (size_t i = 0; i < ntopics; i++) {
        if (br_broker_topic_load(b, &topics[i]) != 0) {
            br_error("cannot load topic %s", topics[i].name);
            br_topic_metas_free(topics, ntopics);
            return -1;
        }
    }
    br_topic_metas_free(topics, ntopics);
    br_retention_load_start_offsets(b);
    br_info("loaded %zu topic(s)", b->ntopics);
    size_t npartitions = 0;
    size_t nsegments = 0;
    for (size_t i = 0; i < b->ntopics; i++) {
        const struct br_topic *t = b->topics[i];
        for (int32_t p = 0; p < t->npartitions; p++) {
            npartitions++;
            nsegments +=
                t->partitions[p].log != NULL ? br_log_segment_count(t->partitions[p].log) : 0;
        }
    }
    br_fdlimit_report(&b->fdlimit, npartitions, nsegments, b->cfg.max_connections,
                      br_config_is_set(&b->cfg, BR_CFG_MAX_CONNECTIONS));
    if (br_producer_ids_load(b) != 0) {
        return -1;
    }
    b->logs_loaded = true;
    /* advertise: advertised.listeners, else the listener (0.0.0.0 or "" is
     * not an address a client can use: fall back to 127.0.0.1 there) */
    const struct br_listener *adv = &b->cfg.advertised_listeners[0];
    (void)snprintf(b->advertised_host, sizeof b->advertised_host, "%s",
                   adv->host[0] != '\0' && strcmp(adv->host, "0.0.0.0") != 0 ? adv->host
                                                                             : "127.0.0.1");
    b->advertised_port = adv->port != 0 || b->in_process ? adv->port : br_net_bound_port(b->net, 0);
    if (br_mailbox_create(&b->mailbox) != 0 ||
        br_net_watch_add(b->net, br_mailbox_watch(b->mailbox), &mailbox_watch_ops) != 0 ||
        br_cleaner_start(b) != 0) {
        br_error("cannot start the log cleaner");
        return -1;
    }
    if (br_flusher_start(b) != 0) {
        br_error("cannot start the log flusher thread");
        return -1;
    }
    if (br_topic_admin_start(b) != 0) {
        br_error("cannot start the I/O worker");
        return -1;
    }
    b->last_retention_ms = br_now_mono_ms();
    br_timer_init(&b->housekeeping, &housekeeping_timer, b);
    br_timer_arm(b->net, &b->housekeeping, br_now_mono_ms() + 1000);
    int gerr = br_groups_start(b);
    if (gerr != 0) {
        br_error("group coordinator: %s", gerr < 0 ? kp_err_str(gerr) : kp_err_name(gerr));
        return -1;
    }
    br_info("broker %" PRId32 " of cluster %s serving as %s:%d (standalone)", b->node_id,
            b->cluster_id, b->advertised_host, b->advertised_port);
    return 0;
}

int br_broker_run(struct br_broker *b)
{
    int rc = br_net_run(b->net);
    b->stopping = true;
    br_net_drain(b->net, 5000);
    return rc;
}

void br_broker_stop(struct br_broker *b)
{
    /* checkpoints and the clean-shutdown mark only for logs that were
     * loaded: a start that failed before leaves the log dirs as they were */
    bool started = b->logs_loaded;
    bool flushed = true;
    /* first: a creation in flight ends with its topic complete (or not
     * there at all), before anything is flushed or checkpointed */
    br_topic_admin_stop(b);
    br_groups_stop(b);
    /* the flushes and checkpoint writes under way end; from here on, the
     * writes are made at once */
    br_flusher_stop(b);
    br_cleaner_stop(b);
    br_mailbox_free(b->mailbox);
    b->mailbox = NULL;
    for (size_t i = 0; i < b->ntopics; i++) {
        struct br_topic *t = b->topics[i];
        for (int32_t p = 0; p < t->npartitions; p++) {
            if (t->partitions[p].log != NULL && br_log_flush(t->partitions[p].log) != 0) {
                br_error("flushing %s-%" PRId32 " failed", t->name, p);
                flushed = false;
            }
        }
    }
    if (started) {
        br_flusher_write_offset_checkpoints(b);
    }
    for (size_t i = 0; i < b->ntopics; i++) {
        br_broker_topic_free(b, b->topics[i]);
    }
    kp_free(b->topics);
    b->topics = NULL;
    b->ntopics = 0;
    br_filecache_free(b->files); /* after the logs: every segment has left it */
    b->files = NULL;
    br_meta_close(&b->meta);
    if (b->net != NULL) {
        br_purgatory_fini(&b->purgatory);
    }
    br_net_free(b->net);
    b->net = NULL;
    if (flushed && started) {
        for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
            char path[4096];
            (void)snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", b->cfg.log_dirs[i]);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd >= 0) {
                close(fd);
            }
        }
    }
    b->net = NULL;
    for (size_t i = 0; i < BR_CONFIG_MAX_LOG_DIRS; i++) {
        if (b->dir_locks[i] >= 0) {
            close(b->dir_locks[i]);
            b->dir_locks[i] = -1;
        }
    }
    kp_free(b->recovery);
    b->recovery = NULL;
    b->logs_loaded = false;
}
