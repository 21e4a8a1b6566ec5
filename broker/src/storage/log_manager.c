/* samsa-broker: the log manager (see log_manager.h). */
#define _GNU_SOURCE

#include "storage/log_manager.h"

#include "base/clock.h"
#include "base/logging.h"
#include "base/worker.h"
#include "storage/cleaner.h"
#include "storage/producer_snapshot.h"
#include "storage/retention.h"

#include <samsa-protocol/alloc.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Logs per flush job: each holds a descriptor per file it syncs, so a job
 * holds a few dozen at most. */
#define FLUSH_BATCH 16

struct br_managed_log {
    char topic[BR_TOPIC_MAX + 1];
    int32_t partition;
    size_t dir;
    struct br_log *log;
    const void *owner;
    /* the cleaner's state */
    int64_t first_dirty_offset; /* the part not yet cleaned begins here */
    uint64_t clean_job;         /* the job in flight, 0 when none */
    bool clean_failed;          /* a job failed: not cleaned until the next start */
    /* write-behind */
    struct br_log_manager *lm;
    struct br_managed_log *wb_next; /* in lm's list of logs due */
    bool wb_queued;
    int64_t wb_seen; /* br_log_wb_appended at the last tick */
    /* producer snapshots being written, newest first */
    struct snap_job *snaps;
};

struct clean_task;

struct br_log_manager {
    struct br_logm_config cfg; /* cfg.dirs points at dirs */
    char **dirs;
    const struct br_logm_ops *ops;
    void *ctx;
    int locks[BR_LOGM_MAX_DIRS];
    size_t placed[BR_LOGM_MAX_DIRS]; /* partitions per dir, reservations included */
    /* recovery points and high watermarks read at open, sorted
     * (br_checkpoint_entry_cmp) */
    struct br_checkpoint_entry *recovery;
    size_t nrecovery;
    struct br_checkpoint_entry *hws;
    size_t nhws;
    /* the logs, sorted by topic, then partition */
    struct br_managed_log **logs;
    size_t nlogs;
    size_t logs_cap;
    struct br_mailbox *mailbox;
    void *mail_ctx;
    bool stopped; /* br_logm_stop ran: writes are made at once */
    /* flushes and checkpoint writes */
    struct br_worker *flusher;
    bool flushing;    /* a flush job is away */
    bool checkpoints; /* the offset checkpoints are being written */
    bool checkpoints_due;
    int64_t last_checkpoint_ms;
    size_t next_flush; /* where the next look for due logs starts */
    /* retention */
    int64_t last_retention_ms;
    /* the cleaner */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct clean_task *queue; /* guarded by mu */
    bool stop;                /* guarded by mu */
    atomic_bool abort;        /* polled by running jobs */
    bool sync_ready;          /* mu and cv exist */
    pthread_t *threads;
    size_t nthreads;
    size_t inflight;
    int64_t next_look_ms;
    uint64_t next_id;
    /* write-behind: the logs due, oldest first; one job away at a time */
    struct br_managed_log *wb_head;
    struct br_managed_log *wb_tail;
    bool wb_busy;
    int64_t wb_window; /* the window every log has now; 0: off */
    /* a snapshot job's rename and a truncation's cancel of it, one at a
     * time (br_logm_snapshots_cancel_above) */
    pthread_mutex_t snap_mu;
    bool snap_mu_ready;
};

/* ---------------------------------------------------------------- log dirs */

static int mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof tmp, "%s", path);
    if (n <= 0 || (size_t)n >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
        return -1;
    }
    return 0;
}

static int lock_dir(struct br_log_manager *lm, size_t i)
{
    char path[PATH_MAX];
    (void)snprintf(path, sizeof path, "%s/.lock", lm->dirs[i]);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        br_error("cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        br_error("log dir %s is in use by another broker (%s is locked)", lm->dirs[i], path);
        close(fd);
        return -1;
    }
    lm->locks[i] = fd;
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

/* Reads checkpoint file `name` of dir d into *e, *n (br_checkpoint_free).
 * False when it cannot be read: the reason is logged as a warning with
 * `without`, what the broker does without it. */
static bool read_dir_checkpoint(const struct br_log_manager *lm, size_t d, const char *name,
                                const char *without, struct br_checkpoint_entry **e, size_t *n)
{
    char path[PATH_MAX];
    (void)snprintf(path, sizeof path, "%s/%s", lm->dirs[d], name);
    struct br_checkpoint_error cerr;
    *e = NULL;
    *n = 0;
    if (br_checkpoint_read(path, BR_LOGM_MAX_CHECKPOINT_ENTRIES, e, n, &cerr) != 0) {
        char msg[512];
        br_checkpoint_error_format(path, &cerr, msg, sizeof msg);
        br_warn("ignoring %s (%s)", msg, without);
        return false;
    }
    return true;
}

/* Reads checkpoint file `name` of dir d and adds its entries to *all. */
static int read_offsets(struct br_log_manager *lm, size_t d, const char *name, const char *without,
                        struct br_checkpoint_entry **all, size_t *nall)
{
    char path[PATH_MAX];
    (void)snprintf(path, sizeof path, "%s/%s", lm->dirs[d], name);
    if (access(path, F_OK) != 0) {
        return 0;
    }
    struct br_checkpoint_entry *e = NULL;
    size_t n = 0;
    if (!read_dir_checkpoint(lm, d, name, without, &e, &n)) {
        return 0;
    }
    int rc = 0;
    if (n > 0) {
        struct br_checkpoint_entry *grown = kp_realloc(*all, (*nall + n) * sizeof *grown);
        if (grown == NULL) {
            br_error("out of memory reading %s", path);
            rc = -1;
        } else {
            memcpy(grown + *nall, e, n * sizeof *e);
            *all = grown;
            *nall += n;
        }
    }
    br_checkpoint_free(e);
    return rc;
}

static int64_t writebehind_window(const struct br_log_manager *lm, size_t active);

int br_logm_open(const struct br_logm_config *cfg, const struct br_logm_ops *ops, void *ctx,
                 struct br_log_manager **out)
{
    *out = NULL;
    if (cfg->ndirs == 0 || cfg->ndirs > BR_LOGM_MAX_DIRS) {
        br_error("log.dirs must name 1 to %d directories", BR_LOGM_MAX_DIRS);
        return -1;
    }
    struct br_log_manager *lm = kp_calloc(1, sizeof *lm);
    if (lm == NULL) {
        br_error("out of memory");
        return -1;
    }
    for (size_t i = 0; i < BR_LOGM_MAX_DIRS; i++) {
        lm->locks[i] = -1;
    }
    lm->cfg = *cfg;
    lm->ops = ops;
    lm->ctx = ctx;
    atomic_init(&lm->abort, false);
    if (pthread_mutex_init(&lm->snap_mu, NULL) != 0) {
        br_error("cannot make a mutex");
        goto out_close;
    }
    lm->snap_mu_ready = true;
    lm->dirs = kp_calloc(cfg->ndirs, sizeof *lm->dirs);
    if (lm->dirs == NULL) {
        br_error("out of memory");
        goto out_close;
    }
    for (size_t i = 0; i < cfg->ndirs; i++) {
        size_t len = strlen(cfg->dirs[i]);
        lm->dirs[i] = kp_malloc(len + 1);
        if (lm->dirs[i] == NULL) {
            br_error("out of memory");
            goto out_close;
        }
        memcpy(lm->dirs[i], cfg->dirs[i], len + 1);
    }
    lm->cfg.dirs = (const char *const *)lm->dirs;
    for (size_t i = 0; i < cfg->ndirs; i++) {
        bool first = log_dir_is_new(lm->dirs[i]);
        if (mkdirs(lm->dirs[i]) != 0) {
            br_error("cannot create log dir %s: %s", lm->dirs[i], strerror(errno));
            goto out_close;
        }
        if (lock_dir(lm, i) != 0) {
            goto out_close;
        }
        char path[PATH_MAX];
        (void)snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", lm->dirs[i]);
        bool clean = access(path, F_OK) == 0;
        (void)unlink(path);
        if (first) {
            br_info("log dir %s: first start", lm->dirs[i]);
        } else {
            br_info("log dir %s: last stop was %s", lm->dirs[i],
                    clean ? "clean" : "unclean: recovering");
        }
        if (read_offsets(lm, i, BR_RECOVERY_CHECKPOINT, "every segment will be recovered",
                         &lm->recovery, &lm->nrecovery) != 0 ||
            read_offsets(lm, i, BR_REPLICATION_CHECKPOINT, "high watermarks start at the log start",
                         &lm->hws, &lm->nhws) != 0) {
            goto out_close;
        }
    }
    if (lm->nrecovery > 1) {
        qsort(lm->recovery, lm->nrecovery, sizeof *lm->recovery, br_checkpoint_entry_cmp);
    }
    if (lm->nhws > 1) {
        qsort(lm->hws, lm->nhws, sizeof *lm->hws, br_checkpoint_entry_cmp);
    }
    lm->wb_window = writebehind_window(lm, 1);
    int64_t now = br_now_mono_ms();
    lm->last_checkpoint_ms = now;
    lm->last_retention_ms = now;
    *out = lm;
    return 0;

out_close:
    br_logm_close(lm, false);
    return -1;
}

size_t br_logm_dir_count(const struct br_log_manager *lm)
{
    return lm->cfg.ndirs;
}

const char *br_logm_dir(const struct br_log_manager *lm, size_t d)
{
    return d < lm->cfg.ndirs ? lm->dirs[d] : NULL;
}

static int64_t lookup_offset(const struct br_checkpoint_entry *all, size_t n, const char *topic,
                             int32_t partition)
{
    if (n == 0) {
        return 0;
    }
    struct br_checkpoint_entry key;
    memset(&key, 0, sizeof key);
    (void)snprintf(key.topic, sizeof key.topic, "%s", topic);
    key.partition = partition;
    const struct br_checkpoint_entry *e =
        bsearch(&key, all, n, sizeof key, br_checkpoint_entry_cmp);
    return e != NULL ? e->offset : 0;
}

int64_t br_logm_recovery_point(const struct br_log_manager *lm, const char *topic,
                               int32_t partition)
{
    return lookup_offset(lm->recovery, lm->nrecovery, topic, partition);
}

int64_t br_logm_checkpointed_hw(const struct br_log_manager *lm, const char *topic,
                                int32_t partition)
{
    return lookup_offset(lm->hws, lm->nhws, topic, partition);
}

/* ---------------------------------------------------------------- placement */

size_t br_logm_place(struct br_log_manager *lm)
{
    size_t best = 0;
    for (size_t d = 1; d < lm->cfg.ndirs; d++) {
        if (lm->placed[d] < lm->placed[best]) {
            best = d;
        }
    }
    lm->placed[best]++;
    return best;
}

size_t br_logm_find_dir(struct br_log_manager *lm, const char *topic, int32_t partition)
{
    for (size_t d = 0; d < lm->cfg.ndirs; d++) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/%s-%" PRId32, lm->dirs[d], topic, partition);
        if (n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0) {
            lm->placed[d]++;
            return d;
        }
    }
    return br_logm_place(lm);
}

void br_logm_release(struct br_log_manager *lm, size_t dir)
{
    if (dir < lm->cfg.ndirs && lm->placed[dir] > 0) {
        lm->placed[dir]--;
    }
}

size_t br_logm_dir_partitions(const struct br_log_manager *lm, size_t d)
{
    return d < lm->cfg.ndirs ? lm->placed[d] : 0;
}

/* ---------------------------------------------------------------- the logs */

static int cmp_key(const char *topic, int32_t partition, const struct br_managed_log *ml)
{
    int c = strcmp(topic, ml->topic);
    if (c != 0) {
        return c;
    }
    return partition < ml->partition ? -1 : (partition > ml->partition ? 1 : 0);
}

/* The index of topic-partition in lm->logs, or where it would go. */
static size_t lower_bound(const struct br_log_manager *lm, const char *topic, int32_t partition)
{
    size_t lo = 0;
    size_t hi = lm->nlogs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(topic, partition, lm->logs[mid]) > 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static struct br_managed_log *find(const struct br_log_manager *lm, const char *topic,
                                   int32_t partition)
{
    size_t i = lower_bound(lm, topic, partition);
    if (i < lm->nlogs && cmp_key(topic, partition, lm->logs[i]) == 0) {
        return lm->logs[i];
    }
    return NULL;
}

static const struct br_log_wb_ops wb_log_ops;

int br_logm_add(struct br_log_manager *lm, struct br_log *log, const char *topic, int32_t partition,
                size_t dir, const void *owner, struct br_managed_log **out)
{
    *out = NULL;
    size_t i = lower_bound(lm, topic, partition);
    if ((i < lm->nlogs && cmp_key(topic, partition, lm->logs[i]) == 0) || dir >= lm->cfg.ndirs ||
        strlen(topic) > BR_TOPIC_MAX) {
        return KP_E_INVALID_ARG;
    }
    if (lm->nlogs == lm->logs_cap) {
        size_t cap = lm->logs_cap == 0 ? 64 : lm->logs_cap * 2;
        struct br_managed_log **nl = kp_realloc(lm->logs, cap * sizeof(struct br_managed_log *));
        if (nl == NULL) {
            return KP_E_NOMEM;
        }
        lm->logs = nl;
        lm->logs_cap = cap;
    }
    struct br_managed_log *ml = kp_calloc(1, sizeof *ml);
    if (ml == NULL) {
        return KP_E_NOMEM;
    }
    (void)snprintf(ml->topic, sizeof ml->topic, "%s", topic);
    ml->partition = partition;
    ml->dir = dir;
    ml->log = log;
    ml->owner = owner;
    ml->lm = lm;
    if (lm->wb_window > 0) {
        br_log_set_writebehind(log, lm->wb_window, &wb_log_ops, ml);
        ml->wb_seen = br_log_wb_appended(log);
    }
    memmove(&lm->logs[i + 1], &lm->logs[i], (lm->nlogs - i) * sizeof(struct br_managed_log *));
    lm->logs[i] = ml;
    lm->nlogs++;
    *out = ml;
    return 0;
}

void br_logm_remove(struct br_log_manager *lm, struct br_managed_log *ml)
{
    if (ml == NULL) {
        return;
    }
    size_t i = lower_bound(lm, ml->topic, ml->partition);
    if (i < lm->nlogs && lm->logs[i] == ml) {
        memmove(&lm->logs[i], &lm->logs[i + 1],
                (lm->nlogs - i - 1) * sizeof(struct br_managed_log *));
        lm->nlogs--;
    }
    if (ml->wb_queued) {
        struct br_managed_log **pp = &lm->wb_head;
        struct br_managed_log *prev = NULL;
        while (*pp != NULL && *pp != ml) {
            prev = *pp;
            pp = &(*pp)->wb_next;
        }
        if (*pp == ml) {
            *pp = ml->wb_next;
            if (lm->wb_tail == ml) {
                lm->wb_tail = prev;
            }
        }
    }
    br_log_set_writebehind(ml->log, 0, NULL, NULL); /* the log may outlive ml */
    /* snapshots still being written are not (the topic goes, or the log
     * is closed): their jobs end on their own */
    br_logm_snapshots_cancel_above(ml, -1);
    br_logm_release(lm, ml->dir);
    kp_free(ml);
}

void br_logm_set_owner(struct br_managed_log *ml, const void *owner)
{
    if (ml != NULL) {
        ml->owner = owner;
    }
}

size_t br_managed_log_dir(const struct br_managed_log *ml)
{
    return ml->dir;
}

size_t br_logm_log_count(const struct br_log_manager *lm)
{
    return lm->nlogs;
}

size_t br_logm_segment_count(const struct br_log_manager *lm)
{
    size_t n = 0;
    for (size_t i = 0; i < lm->nlogs; i++) {
        n += br_log_segment_count(lm->logs[i]->log);
    }
    return n;
}

/* The log a checkpoint entry of dir d names, when it is held in that dir. */
static struct br_managed_log *entry_log(const struct br_log_manager *lm,
                                        const struct br_checkpoint_entry *e, size_t d)
{
    struct br_managed_log *ml = find(lm, e->topic, e->partition);
    return ml != NULL && ml->dir == d ? ml : NULL;
}

static void load_start_offsets(struct br_log_manager *lm, size_t d)
{
    struct br_checkpoint_entry *e = NULL;
    size_t n = 0;
    if (!read_dir_checkpoint(lm, d, BR_LOG_START_CHECKPOINT,
                             "log start offsets are the first segments' base offsets", &e, &n)) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct br_managed_log *ml = entry_log(lm, &e[i], d);
        if (ml == NULL || e[i].offset <= br_log_start_offset(ml->log)) {
            continue;
        }
        int64_t start = e[i].offset;
        int64_t leo = br_log_end_offset(ml->log);
        if (start > leo) {
            br_warn("%s-%" PRId32 ": checkpointed log start offset %" PRId64
                    " is past the log end %" PRId64 "; starting at the end",
                    ml->topic, ml->partition, start, leo);
            start = leo;
        }
        if (br_log_set_start_offset(ml->log, start) != 0 ||
            br_log_delete_segments_before(ml->log, start, NULL) != 0) {
            br_error("%s-%" PRId32 ": cannot apply the log start offset %" PRId64, ml->topic,
                     ml->partition, start);
            continue;
        }
        br_info("%s-%" PRId32 ": log start offset %" PRId64 " (from %s)", ml->topic, ml->partition,
                br_log_start_offset(ml->log), BR_LOG_START_CHECKPOINT);
    }
    br_checkpoint_free(e);
}

static void load_first_dirty_offsets(struct br_log_manager *lm, size_t d)
{
    struct br_checkpoint_entry *e = NULL;
    size_t n = 0;
    if (!read_dir_checkpoint(lm, d, BR_CLEANER_CHECKPOINT,
                             "compacted logs are cleaned from their start", &e, &n)) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct br_managed_log *ml = entry_log(lm, &e[i], d);
        if (ml != NULL) {
            ml->first_dirty_offset = e[i].offset;
        }
    }
    br_checkpoint_free(e);
}

void br_logm_loaded(struct br_log_manager *lm)
{
    for (size_t d = 0; d < lm->cfg.ndirs; d++) {
        load_start_offsets(lm, d);
        load_first_dirty_offsets(lm, d);
    }
}

/* ---------------------------------------------------------------- checkpoint files */

struct ckpt_file {
    char path[PATH_MAX];
    struct br_checkpoint_entry *e; /* owned */
    size_t n;
};

struct ckpt_job {
    struct br_job job; /* first */
    struct br_log_manager *lm;
    bool offsets; /* the periodic offset checkpoints */
    size_t nfiles;
    struct ckpt_file files[];
};

static void write_files(struct ckpt_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (br_checkpoint_write(files[i].path, files[i].e, files[i].n) != 0) {
            br_error("writing %s failed", files[i].path);
        }
    }
}

static void ckpt_run(struct br_job *job)
{
    struct ckpt_job *j = (struct ckpt_job *)job;
    write_files(j->files, j->nfiles);
}

static const struct br_job_ops ckpt_ops = {"checkpoints", ckpt_run};

static void ckpt_job_free(struct ckpt_job *j)
{
    for (size_t i = 0; i < j->nfiles; i++) {
        kp_free(j->files[i].e);
    }
    kp_free(j);
}

static void ckpt_done(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct ckpt_job *j = (struct ckpt_job *)m;
    if (j->offsets) {
        j->lm->checkpoints = false;
    }
    ckpt_job_free(j);
}

/* Runs j on the flusher thread, or here and now without one. */
static void ckpt_submit(struct br_log_manager *lm, struct ckpt_job *j)
{
    if (lm->flusher == NULL || lm->stopped) {
        write_files(j->files, j->nfiles);
        ckpt_job_free(j);
        return;
    }
    j->lm = lm;
    j->job.ops = &ckpt_ops;
    j->job.mail.deliver = ckpt_done;
    br_worker_submit(lm->flusher, &j->job);
}

static const char *const offset_files[3] = {BR_RECOVERY_CHECKPOINT, BR_REPLICATION_CHECKPOINT,
                                            BR_LOG_START_CHECKPOINT};

/* The offset checkpoints of every log dir, their entries taken now; NULL
 * when out of memory (logged). */
static struct ckpt_job *offset_checkpoints(struct br_log_manager *lm)
{
    size_t ndirs = lm->cfg.ndirs;
    struct ckpt_job *j = kp_calloc(1, sizeof *j + 3 * ndirs * sizeof j->files[0]);
    if (j == NULL) {
        br_error("out of memory writing checkpoints");
        return NULL;
    }
    j->offsets = true;
    for (size_t d = 0; d < ndirs; d++) {
        struct ckpt_file *f = &j->files[3 * d];
        size_t room = lm->placed[d] > 0 ? lm->placed[d] : 1;
        for (int k = 0; k < 3; k++) {
            f[k].e = kp_calloc(room, sizeof *f[k].e);
            j->nfiles++;
            if (f[k].e == NULL) {
                br_error("out of memory writing checkpoints");
                ckpt_job_free(j);
                return NULL;
            }
            (void)snprintf(f[k].path, sizeof f[k].path, "%s/%s", lm->dirs[d], offset_files[k]);
        }
    }
    for (size_t i = 0; i < lm->nlogs; i++) {
        const struct br_managed_log *ml = lm->logs[i];
        struct ckpt_file *f = &j->files[3 * ml->dir];
        if (f[0].n >= lm->placed[ml->dir]) {
            continue; /* never: every log holds a place in its dir */
        }
        const int64_t offsets[3] = {br_log_recovery_point(ml->log),
                                    lm->ops->high_watermark(lm->ctx, ml->owner),
                                    br_log_start_offset(ml->log)};
        for (int x = 0; x < 3; x++) {
            struct br_checkpoint_entry *e = &f[x].e[f[x].n++];
            (void)snprintf(e->topic, sizeof e->topic, "%s", ml->topic);
            e->partition = ml->partition;
            e->offset = offsets[x];
        }
    }
    return j;
}

void br_logm_write_checkpoints(struct br_log_manager *lm)
{
    struct ckpt_job *j = offset_checkpoints(lm);
    if (j != NULL) {
        write_files(j->files, j->nfiles);
        ckpt_job_free(j);
    }
}

void br_logm_checkpoints_soon(struct br_log_manager *lm)
{
    lm->checkpoints_due = true;
}

/* cleaner-offset-checkpoint of dir d: every compacted log there. */
static void write_cleaner_checkpoint(struct br_log_manager *lm, size_t d)
{
    struct ckpt_job *j = kp_calloc(1, sizeof *j + sizeof j->files[0]);
    size_t room = lm->placed[d] > 0 ? lm->placed[d] : 1;
    struct br_checkpoint_entry *e = kp_calloc(room, sizeof *e);
    if (j == NULL || e == NULL) {
        br_error("out of memory writing %s", BR_CLEANER_CHECKPOINT);
        kp_free(j);
        kp_free(e);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < lm->nlogs && k < room; i++) {
        const struct br_managed_log *ml = lm->logs[i];
        if (ml->dir != d || !br_log_config(ml->log)->cleanup_compact ||
            ml->first_dirty_offset <= 0) {
            continue;
        }
        (void)snprintf(e[k].topic, sizeof e[k].topic, "%s", ml->topic);
        e[k].partition = ml->partition;
        e[k].offset = ml->first_dirty_offset;
        k++;
    }
    j->nfiles = 1;
    (void)snprintf(j->files[0].path, sizeof j->files[0].path, "%s/%s", lm->dirs[d],
                   BR_CLEANER_CHECKPOINT);
    j->files[0].e = e;
    j->files[0].n = k;
    ckpt_submit(lm, j); /* off the reactor */
}

/* ---------------------------------------------------------------- flushes */

struct flush_job {
    struct br_job job; /* first */
    struct br_log_manager *lm;
    size_t n;
    struct br_log_flush *f[FLUSH_BATCH];
};

static void flush_run(struct br_job *job)
{
    struct flush_job *j = (struct flush_job *)job;
    for (size_t i = 0; i < j->n; i++) {
        br_log_flush_run(j->f[i]);
    }
}

static const struct br_job_ops flush_ops = {"log flush", flush_run};

static void start_flushes(struct br_log_manager *lm, int64_t wall_ms);

static void flush_done(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct flush_job *j = (struct flush_job *)m;
    struct br_log_manager *lm = j->lm;
    bool full = j->n == FLUSH_BATCH;
    for (size_t i = 0; i < j->n; i++) {
        /* a failure was logged with its file; the log is failed now */
        int rc = br_log_flush_end(j->f[i]);
        (void)rc;
    }
    kp_free(j);
    lm->flushing = false;
    if (full && !lm->stopped) {
        start_flushes(lm, br_now_wall_ms()); /* more may be due */
    }
}

/* Begins the flushes of up to FLUSH_BATCH due logs, from where the last
 * look stopped, and sends them to the thread. */
static void start_flushes(struct br_log_manager *lm, int64_t wall_ms)
{
    if (lm->flushing || lm->nlogs == 0) {
        return;
    }
    struct flush_job *j = kp_calloc(1, sizeof *j);
    if (j == NULL) {
        br_error("out of memory flushing logs");
        return;
    }
    size_t i = lm->next_flush < lm->nlogs ? lm->next_flush : 0;
    /* once round every log at most */
    for (size_t seen = 0; seen < lm->nlogs && j->n < FLUSH_BATCH; seen++) {
        const struct br_managed_log *ml = lm->logs[i];
        i = i + 1 < lm->nlogs ? i + 1 : 0;
        if (!br_log_flush_due(ml->log, wall_ms)) {
            continue;
        }
        int rc = br_log_flush_begin(ml->log, wall_ms, &j->f[j->n]);
        if (rc == 0) {
            j->n++;
        } else {
            br_error("flushing %s-%" PRId32 " failed: %s", ml->topic, ml->partition,
                     kp_err_name(rc));
        }
    }
    lm->next_flush = i;
    if (j->n == 0) {
        kp_free(j);
        return;
    }
    lm->flushing = true;
    j->lm = lm;
    j->job.ops = &flush_ops;
    j->job.mail.deliver = flush_done;
    br_worker_submit(lm->flusher, &j->job);
}

bool br_logm_flush_all(struct br_log_manager *lm)
{
    bool ok = true;
    for (size_t i = 0; i < lm->nlogs; i++) {
        const struct br_managed_log *ml = lm->logs[i];
        if (br_log_flush(ml->log) != 0) {
            br_error("flushing %s-%" PRId32 " failed", ml->topic, ml->partition);
            ok = false;
        }
    }
    return ok;
}

/* ---------------------------------------------------------------- write-behind */

#define WB_MIN_WINDOW (INT64_C(1) << 20)

/* The window each log gets when `active` logs are appended to: the
 * configured one, lowered so that they keep within the budget together
 * (each keeps about 2.5 windows cached), never below 1 MiB. 0: off. */
static int64_t writebehind_window(const struct br_log_manager *lm, size_t active)
{
    if (!lm->cfg.writebehind_enable || lm->cfg.writebehind_window_bytes <= 0) {
        return 0;
    }
    int64_t w = lm->cfg.writebehind_window_bytes;
    if (lm->cfg.writebehind_budget_bytes > 0) {
        int64_t share = lm->cfg.writebehind_budget_bytes * 2 / 5 / (int64_t)(active > 0 ? active : 1);
        if (share < w) {
            w = share;
        }
    }
    return w < WB_MIN_WINDOW ? WB_MIN_WINDOW : w;
}

struct wb_job {
    struct br_job job; /* first */
    struct br_log_manager *lm;
    size_t n;
    struct br_log_wb *w[FLUSH_BATCH];
};

static void wb_run(struct br_job *job)
{
    struct wb_job *j = (struct wb_job *)job;
    for (size_t i = 0; i < j->n; i++) {
        br_log_wb_run(j->w[i]);
    }
}

static const struct br_job_ops wb_ops = {"write-behind", wb_run};

static void start_writebehind(struct br_log_manager *lm);

static void wb_done(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct wb_job *j = (struct wb_job *)m;
    struct br_log_manager *lm = j->lm;
    for (size_t i = 0; i < j->n; i++) {
        /* a failure was logged with its file; the log is failed now */
        int rc = br_log_wb_end(j->w[i]);
        (void)rc;
    }
    kp_free(j);
    lm->wb_busy = false;
    start_writebehind(lm);
}

/* Begins the write-behind of up to FLUSH_BATCH logs due and sends it to
 * the flusher thread; nothing while a job is away, before the thread
 * runs or once it stopped (the logs stay due). */
static void start_writebehind(struct br_log_manager *lm)
{
    if (lm->wb_busy || lm->wb_head == NULL || lm->flusher == NULL || lm->stopped) {
        return;
    }
    struct wb_job *j = kp_calloc(1, sizeof *j);
    if (j == NULL) {
        return; /* the logs stay due: the next tick tries again */
    }
    while (lm->wb_head != NULL && j->n < FLUSH_BATCH) {
        struct br_managed_log *ml = lm->wb_head;
        lm->wb_head = ml->wb_next;
        if (lm->wb_head == NULL) {
            lm->wb_tail = NULL;
        }
        ml->wb_next = NULL;
        ml->wb_queued = false;
        struct br_log_wb *w = NULL;
        if (br_log_wb_begin(ml->log, &w) == 0 && w != NULL) {
            j->w[j->n++] = w;
        }
    }
    if (j->n == 0) {
        kp_free(j);
        return;
    }
    lm->wb_busy = true;
    j->lm = lm;
    j->job.ops = &wb_ops;
    j->job.mail.deliver = wb_done;
    br_worker_submit(lm->flusher, &j->job);
}

/* A log's appends passed a step (br_log_wb_ops.due): it is due. */
static void wb_log_due(void *ctx)
{
    struct br_managed_log *ml = ctx;
    struct br_log_manager *lm = ml->lm;
    if (!ml->wb_queued) {
        ml->wb_queued = true;
        ml->wb_next = NULL;
        if (lm->wb_tail != NULL) {
            lm->wb_tail->wb_next = ml;
        } else {
            lm->wb_head = ml;
        }
        lm->wb_tail = ml;
    }
    start_writebehind(lm);
}

static const struct br_log_wb_ops wb_log_ops = {wb_log_due};

/* Once a second: the window follows the logs appended to since the last
 * tick, and the logs left due are sent. */
static void writebehind_tick(struct br_log_manager *lm)
{
    if (lm->wb_window <= 0) {
        return;
    }
    size_t active = 0;
    for (size_t i = 0; i < lm->nlogs; i++) {
        struct br_managed_log *ml = lm->logs[i];
        int64_t a = br_log_wb_appended(ml->log);
        if (a != ml->wb_seen) {
            active++;
            ml->wb_seen = a;
        }
    }
    int64_t w = writebehind_window(lm, active);
    if (w != lm->wb_window) {
        lm->wb_window = w;
        for (size_t i = 0; i < lm->nlogs; i++) {
            br_log_set_writebehind(lm->logs[i]->log, w, &wb_log_ops, lm->logs[i]);
        }
    }
    start_writebehind(lm);
}

int64_t br_logm_writebehind_window(const struct br_log_manager *lm)
{
    return lm->wb_window;
}

/* ---------------------------------------------------------------- producer snapshots */

struct snap_job {
    struct br_job job; /* first */
    struct br_log_manager *lm;
    struct br_managed_log *ml; /* NULL once the log left the manager */
    struct snap_job *next;     /* in ml->snaps */
    char dir[PATH_MAX];
    int64_t offset;
    int64_t keep_from;
    struct br_psnap_entry *e; /* owned */
    size_t n;
    bool cancelled; /* under lm->snap_mu */
};

/* The flusher thread: the file is written and synced under a temporary
 * name, and takes its own name only while no truncation has cancelled it
 * (under the mutex, so a truncation that cancels it after the rename
 * finds the file there to delete). */
static void snap_run(struct br_job *job)
{
    struct snap_job *j = (struct snap_job *)job;
    if (br_psnap_write_tmp(j->dir, j->offset, j->e, j->n) != 0) {
        br_warn("%s: producer snapshot at %" PRId64 " not written", j->dir, j->offset);
        return;
    }
    (void)pthread_mutex_lock(&j->lm->snap_mu);
    bool keep = !j->cancelled;
    int rc = br_psnap_commit_tmp(j->dir, j->offset, keep);
    (void)pthread_mutex_unlock(&j->lm->snap_mu);
    if (rc == 0 && keep) {
        (void)br_psnap_delete_outside(j->dir, j->keep_from, INT64_MAX);
    }
}

static const struct br_job_ops snap_ops = {"producer snapshot", snap_run};

static void snap_done(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct snap_job *j = (struct snap_job *)m;
    if (j->ml != NULL) {
        struct snap_job **pp = &j->ml->snaps;
        while (*pp != NULL && *pp != j) {
            pp = &(*pp)->next;
        }
        if (*pp == j) {
            *pp = j->next;
        }
    }
    kp_free(j->e);
    kp_free(j);
}

void br_logm_snapshot(struct br_managed_log *ml, const char *dir, int64_t offset,
                      struct br_psnap_entry *e, size_t n, int64_t keep_from)
{
    struct br_log_manager *lm = ml != NULL ? ml->lm : NULL;
    if (lm == NULL || lm->flusher == NULL || lm->stopped) {
        if (br_psnap_write(dir, offset, e, n) == 0) {
            (void)br_psnap_delete_outside(dir, keep_from, INT64_MAX);
        } else {
            br_warn("%s: producer snapshot at %" PRId64 " not written", dir, offset);
        }
        kp_free(e);
        return;
    }
    struct snap_job *j = kp_calloc(1, sizeof *j);
    if (j == NULL || snprintf(j->dir, sizeof j->dir, "%s", dir) >= (int)sizeof j->dir) {
        br_warn("%s: producer snapshot at %" PRId64 " not written", dir, offset);
        kp_free(j);
        kp_free(e);
        return;
    }
    j->lm = lm;
    j->ml = ml;
    j->offset = offset;
    j->keep_from = keep_from;
    j->e = e;
    j->n = n;
    j->next = ml->snaps;
    ml->snaps = j;
    j->job.ops = &snap_ops;
    j->job.mail.deliver = snap_done;
    br_worker_submit(lm->flusher, &j->job);
}

void br_logm_snapshots_cancel_above(struct br_managed_log *ml, int64_t offset)
{
    if (ml == NULL || ml->snaps == NULL) {
        return;
    }
    struct br_log_manager *lm = ml->lm;
    (void)pthread_mutex_lock(&lm->snap_mu);
    for (struct snap_job *j = ml->snaps; j != NULL; j = j->next) {
        if (j->offset > offset) {
            j->cancelled = true;
        }
    }
    (void)pthread_mutex_unlock(&lm->snap_mu);
    if (offset < 0) {
        /* the log leaves the manager: the jobs forget it */
        for (struct snap_job *j = ml->snaps; j != NULL; j = j->next) {
            j->ml = NULL;
        }
        ml->snaps = NULL;
    }
}

/* ---------------------------------------------------------------- retention */

static void retention_tick(struct br_log_manager *lm, int64_t now_mono_ms)
{
    if (now_mono_ms - lm->last_retention_ms < lm->cfg.retention_check_interval_ms) {
        return;
    }
    lm->last_retention_ms = now_mono_ms;
    int64_t now = br_now_wall_ms();
    for (size_t i = 0; i < lm->nlogs; i++) {
        const struct br_managed_log *ml = lm->logs[i];
        const struct br_log_config *c = br_log_config(ml->log);
        int rc = br_retention_apply(ml->log, c->cleanup_delete, c->retention_ms, c->retention_bytes,
                                    lm->ops->high_watermark(lm->ctx, ml->owner), now, NULL);
        if (rc != 0) {
            br_error("retention of %s-%" PRId32 " failed: %s", ml->topic, ml->partition,
                     kp_err_name(rc));
        }
    }
}

/* ---------------------------------------------------------------- the cleaner */

struct clean_task {
    struct br_mail mail; /* first: posted back through the mailbox */
    struct clean_task *next;
    struct br_log_manager *lm;
    uint64_t id;
    char topic[BR_TOPIC_MAX + 1];
    int32_t partition;
    struct br_clean_job *job;
    int rc;
};

static void cleaned_delivered(void *ctx, struct br_mail *m);

static void *cleaner_main(void *arg)
{
    struct br_log_manager *lm = arg;
    br_thread_name("cleaner");
    for (;;) {
        (void)pthread_mutex_lock(&lm->mu);
        while (!lm->stop && lm->queue == NULL) {
            (void)pthread_cond_wait(&lm->cv, &lm->mu);
        }
        if (lm->stop) {
            (void)pthread_mutex_unlock(&lm->mu);
            return NULL;
        }
        struct clean_task *t = lm->queue;
        lm->queue = t->next;
        (void)pthread_mutex_unlock(&lm->mu);
        t->rc = br_clean_job_run(t->job, &lm->abort);
        t->mail.deliver = cleaned_delivered;
        br_mailbox_post(lm->mailbox, &t->mail);
    }
}

/* The log a task came from, while it is held and the task is its job. */
static struct br_managed_log *task_log(const struct br_log_manager *lm, const struct clean_task *t)
{
    struct br_managed_log *ml = find(lm, t->topic, t->partition);
    return ml != NULL && ml->clean_job == t->id ? ml : NULL;
}

static void task_free(struct clean_task *t)
{
    br_clean_job_free(t->job);
    kp_free(t);
}

static void params_of(const struct br_log_manager *lm, const struct br_managed_log *ml,
                      struct br_clean_params *out)
{
    const struct br_log_config *c = br_log_config(ml->log);
    out->first_dirty_offset = ml->first_dirty_offset;
    out->now_ms = br_now_wall_ms();
    out->delete_retention_ms = c->delete_retention_ms;
    out->min_compaction_lag_ms = c->min_compaction_lag_ms;
    out->segment_bytes = c->segment_bytes;
    out->max_map_entries = br_clean_map_entries(lm->nthreads > 0 ? lm->nthreads : 1);
}

/* The dirtiest compacted log at or above its min.cleanable.dirty.ratio, not
 * being cleaned; NULL when none. */
static struct br_managed_log *dirtiest(const struct br_log_manager *lm, double *best_ratio)
{
    struct br_managed_log *best = NULL;
    *best_ratio = -1;
    for (size_t i = 0; i < lm->nlogs; i++) {
        struct br_managed_log *ml = lm->logs[i];
        const struct br_log_config *c = br_log_config(ml->log);
        if (!c->cleanup_compact || ml->clean_job != 0 || ml->clean_failed) {
            continue;
        }
        struct br_clean_params prm;
        params_of(lm, ml, &prm);
        double ratio = 0;
        int64_t dirty = 0;
        if (br_clean_dirty_ratio(ml->log, &prm, &ratio, &dirty) != 0 || dirty == 0) {
            continue;
        }
        if (ratio >= c->min_cleanable_dirty_ratio && ratio > *best_ratio) {
            best = ml;
            *best_ratio = ratio;
        }
    }
    return best;
}

/* Hands out jobs while threads are free. */
static void schedule(struct br_log_manager *lm)
{
    while (!lm->stopped && lm->nthreads > 0 && lm->inflight < lm->nthreads) {
        double ratio = 0;
        struct br_managed_log *ml = dirtiest(lm, &ratio);
        if (ml == NULL) {
            return;
        }
        struct br_clean_params prm;
        params_of(lm, ml, &prm);
        struct clean_task *t = kp_calloc(1, sizeof *t);
        if (t == NULL) {
            return;
        }
        int rc = br_clean_job_prepare(ml->log, &prm, &t->job);
        if (rc != 0 || t->job == NULL) {
            kp_free(t);
            if (rc == 0) {
                return; /* nothing after all: the ratio said otherwise */
            }
            br_error("cannot prepare cleaning %s-%" PRId32 ": %s", ml->topic, ml->partition,
                     kp_err_name(rc));
            ml->clean_failed = true;
            continue;
        }
        t->lm = lm;
        t->id = ++lm->next_id;
        (void)snprintf(t->topic, sizeof t->topic, "%s", ml->topic);
        t->partition = ml->partition;
        ml->clean_job = t->id;
        lm->inflight++;
        br_debug("cleaning %s-%" PRId32 " (dirty ratio %.3f, from offset %" PRId64 ")", ml->topic,
                 ml->partition, ratio, br_clean_job_stats(t->job)->first_dirty_offset);
        (void)pthread_mutex_lock(&lm->mu);
        t->next = lm->queue;
        lm->queue = t;
        (void)pthread_cond_signal(&lm->cv);
        (void)pthread_mutex_unlock(&lm->mu);
    }
}

/* Swaps a finished cleaning in; true when the log took it. */
static bool commit_cleaning(struct br_managed_log *ml, struct clean_task *t)
{
    bool swapped = false;
    int64_t t0 = br_now_mono_ms();
    int rc = br_clean_job_commit(ml->log, t->job, &swapped);
    int64_t swap_ms = br_now_mono_ms() - t0;
    const struct br_clean_stats *st = br_clean_job_stats(t->job);
    if (rc != 0) {
        br_error("swapping the cleaned segments of %s-%" PRId32 " failed: %s", t->topic,
                 t->partition, kp_err_name(rc));
        return false;
    }
    if (!swapped) {
        br_info("cleaning of %s-%" PRId32 " discarded: the log changed meanwhile", t->topic,
                t->partition);
        return false;
    }
    ml->first_dirty_offset = st->cleaned_to;
    br_info("cleaned %s-%" PRId32 ": offsets [%" PRId64 ", %" PRId64 "), %" PRId64 " -> %" PRId64
            " records, %" PRId64 " -> %" PRId64 " bytes, %zu -> %zu segments, %" PRId64
            " tombstones and %" PRId64 " aborted records dropped, %zu keys mapped, %" PRId64
            " ms (swap %" PRId64 " ms)",
            t->topic, t->partition, br_log_start_offset(ml->log), st->cleaned_to, st->records_read,
            st->records_kept, st->bytes_before, st->bytes_after, st->segments_before,
            st->segments_after, st->tombstones_dropped, st->aborted_dropped, st->map_keys,
            st->elapsed_ms, swap_ms);
    return true;
}

static void cleaned_delivered(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct clean_task *t = (struct clean_task *)(void *)m;
    struct br_log_manager *lm = t->lm;
    lm->inflight--;
    struct br_managed_log *ml = task_log(lm, t);
    bool swapped = false;
    if (ml == NULL || lm->stopped) {
        br_debug("cleaning of %s-%" PRId32 " discarded: the topic changed or the broker stops",
                 t->topic, t->partition);
    } else if (t->rc != 0) {
        if (t->rc != KP_AGAIN) {
            br_error("cleaning %s-%" PRId32 " failed (%s); it is not cleaned again until "
                     "the next start",
                     t->topic, t->partition, kp_err_name(t->rc));
            ml->clean_failed = true;
        }
    } else if (!br_log_config(ml->log)->cleanup_compact) {
        br_info("cleaning of %s-%" PRId32 " discarded: the topic is no longer compacted", t->topic,
                t->partition);
    } else {
        swapped = commit_cleaning(ml, t);
    }
    if (ml != NULL) {
        ml->clean_job = 0;
    }
    if (swapped) {
        write_cleaner_checkpoint(lm, ml->dir);
    }
    task_free(t);
    if (swapped) {
        schedule(lm); /* Kafka's cleaner goes straight on to the next dirty log */
    }
}

static int start_cleaner(struct br_log_manager *lm)
{
    if (!lm->cfg.cleaner_enable || lm->cfg.cleaner_threads <= 0) {
        br_info("log cleaner disabled: compacted topics are not compacted");
        return 0;
    }
    if (pthread_mutex_init(&lm->mu, NULL) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (pthread_cond_init(&lm->cv, NULL) != 0) {
        (void)pthread_mutex_destroy(&lm->mu);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    lm->sync_ready = true;
    size_t want = (size_t)lm->cfg.cleaner_threads;
    lm->threads = kp_calloc(want, sizeof *lm->threads);
    if (lm->threads == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < want; i++) {
        int e = pthread_create(&lm->threads[i], NULL, cleaner_main, lm);
        if (e != 0) {
            br_error("cannot start a log cleaner thread: %s", strerror(e));
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        lm->nthreads++;
    }
    lm->next_look_ms = br_now_mono_ms() + lm->cfg.cleaner_backoff_ms;
    br_info("log cleaner: %zu thread(s), looking for dirty logs every %" PRId64 " ms", lm->nthreads,
            lm->cfg.cleaner_backoff_ms);
    return 0;
}

static void stop_cleaner(struct br_log_manager *lm)
{
    if (lm->sync_ready) {
        (void)pthread_mutex_lock(&lm->mu);
        lm->stop = true;
        atomic_store(&lm->abort, true);
        (void)pthread_cond_broadcast(&lm->cv);
        (void)pthread_mutex_unlock(&lm->mu);
    }
    for (size_t i = 0; i < lm->nthreads; i++) {
        (void)pthread_join(lm->threads[i], NULL);
    }
    /* jobs never started; those finished are in the mailbox */
    while (lm->queue != NULL) {
        struct clean_task *t = lm->queue;
        lm->queue = t->next;
        struct br_managed_log *ml = task_log(lm, t);
        if (ml != NULL) {
            ml->clean_job = 0;
        }
        lm->inflight--;
        task_free(t);
    }
    if (lm->sync_ready) {
        (void)pthread_cond_destroy(&lm->cv);
        (void)pthread_mutex_destroy(&lm->mu);
        lm->sync_ready = false;
    }
    kp_free(lm->threads);
    lm->threads = NULL;
    lm->nthreads = 0;
}

/* ---------------------------------------------------------------- schedule */

int br_logm_start(struct br_log_manager *lm, struct br_mailbox *mb, void *mail_ctx,
                  bool inline_jobs)
{
    lm->mailbox = mb;
    lm->mail_ctx = mail_ctx;
    int rc = br_worker_start(mb, inline_jobs, "flusher", &lm->flusher);
    if (rc != 0) {
        br_error("cannot start the log flusher thread");
        return rc;
    }
    lm->last_checkpoint_ms = br_now_mono_ms();
    lm->last_retention_ms = lm->last_checkpoint_ms;
    rc = start_cleaner(lm);
    if (rc != 0) {
        br_error("cannot start the log cleaner");
    }
    return rc;
}

void br_logm_tick(struct br_log_manager *lm, int64_t wall_ms, int64_t mono_ms)
{
    if (lm->stopped) {
        return;
    }
    if (lm->flusher != NULL) {
        start_flushes(lm, wall_ms);
    }
    if (!lm->checkpoints && (lm->checkpoints_due ||
                             mono_ms - lm->last_checkpoint_ms >= lm->cfg.checkpoint_interval_ms)) {
        struct ckpt_job *j = offset_checkpoints(lm);
        if (j != NULL) {
            lm->checkpoints = true;
            lm->last_checkpoint_ms = mono_ms;
            lm->checkpoints_due = false;
            ckpt_submit(lm, j);
        }
    }
    retention_tick(lm, mono_ms);
    writebehind_tick(lm);
    if (lm->nthreads > 0 && mono_ms >= lm->next_look_ms) {
        lm->next_look_ms = mono_ms + lm->cfg.cleaner_backoff_ms;
        schedule(lm);
    }
}

void br_logm_stop(struct br_log_manager *lm)
{
    if (lm == NULL || lm->stopped || lm->mailbox == NULL) {
        return;
    }
    lm->stopped = true;
    stop_cleaner(lm);
    /* the flushes and checkpoint writes queued run; their ends and the
     * cleanings finished (discarded) are delivered here, with whatever
     * else was posted */
    br_worker_stop(lm->flusher);
    br_mailbox_deliver_all(lm->mailbox, lm->mail_ctx);
    br_worker_free(lm->flusher);
    lm->flusher = NULL;
    for (size_t d = 0; d < lm->cfg.ndirs; d++) {
        write_cleaner_checkpoint(lm, d); /* at once: stopped */
    }
}

void br_logm_close(struct br_log_manager *lm, bool clean)
{
    if (lm == NULL) {
        return;
    }
    br_logm_stop(lm);
    for (size_t i = 0; i < lm->nlogs; i++) {
        kp_free(lm->logs[i]); /* the logs are their owners' */
    }
    kp_free(lm->logs);
    for (size_t i = 0; i < lm->cfg.ndirs && lm->dirs != NULL; i++) {
        if (clean && lm->locks[i] >= 0) {
            char path[PATH_MAX];
            (void)snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", lm->dirs[i]);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd >= 0) {
                close(fd);
            }
        }
        if (lm->locks[i] >= 0) {
            close(lm->locks[i]);
        }
        kp_free(lm->dirs[i]);
    }
    kp_free(lm->dirs);
    kp_free(lm->recovery);
    kp_free(lm->hws);
    if (lm->snap_mu_ready) {
        (void)pthread_mutex_destroy(&lm->snap_mu);
    }
    kp_free(lm);
}
