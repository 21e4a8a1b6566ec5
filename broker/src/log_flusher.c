/* samsa-broker: the log flushes and checkpoint writes, off the reactor
 * (see log_flusher.h). */
#include "log_flusher.h"

#include "base/logging.h"
#include "reactor/mailbox.h"
#include "reactor/worker.h"
#include "server/state.h"
#include "storage/checkpoint.h"
#include "storage/log.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Logs per flush job: each holds a descriptor per file it syncs, so a job
 * holds a few dozen at most. */
#define FLUSH_BATCH 16

struct br_flusher {
    struct br_worker *worker;
    bool flushing;    /* a flush job is away */
    bool checkpoints; /* the offset checkpoints are being written */
    int64_t last_checkpoint_ms;
    size_t next_topic; /* where the next look for due logs starts */
    int32_t next_partition;
};

/* ------------------------------------------------------------ checkpoint files */

struct ckpt_file {
    char path[PATH_MAX];
    struct br_checkpoint_entry *e; /* owned */
    size_t n;
};

struct ckpt_job {
    struct br_job job; /* first */
    bool offsets;      /* the periodic offset checkpoints */
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
    struct br_broker *b = ctx;
    struct ckpt_job *j = (struct ckpt_job *)m;
    if (j->offsets && b->flusher != NULL) {
        b->flusher->checkpoints = false;
    }
    ckpt_job_free(j);
}

/* Runs j on the thread, or here and now without one. */
static void ckpt_submit(struct br_broker *b, struct ckpt_job *j)
{
    if (b->flusher == NULL) {
        write_files(j->files, j->nfiles);
        ckpt_job_free(j);
        return;
    }
    j->job.ops = &ckpt_ops;
    j->job.mail.deliver = ckpt_done;
    br_worker_submit(b->flusher->worker, &j->job);
}

void br_flusher_write_checkpoint(struct br_broker *b, const char *path,
                                 struct br_checkpoint_entry *e, size_t n)
{
    struct ckpt_job *j = kp_calloc(1, sizeof *j + sizeof j->files[0]);
    if (j == NULL) {
        br_error("out of memory writing %s", path);
        kp_free(e);
        return;
    }
    j->nfiles = 1;
    (void)snprintf(j->files[0].path, sizeof j->files[0].path, "%s", path);
    j->files[0].e = e;
    j->files[0].n = n;
    ckpt_submit(b, j);
}

static const char *const offset_files[3] = {BR_RECOVERY_CHECKPOINT, "replication-offset-checkpoint",
                                            "log-start-offset-checkpoint"};

/* The offset checkpoints of every log dir, their entries taken now; NULL
 * when out of memory (logged). */
static struct ckpt_job *offset_checkpoints(struct br_broker *b)
{
    size_t ndirs = b->cfg.n_log_dirs;
    struct ckpt_job *j = kp_calloc(1, sizeof *j + 3 * ndirs * sizeof j->files[0]);
    if (j == NULL) {
        br_error("out of memory writing checkpoints");
        return NULL;
    }
    j->offsets = true;
    size_t n = 0; /* room for every partition in each dir's lists */
    for (size_t i = 0; i < b->ntopics; i++) {
        n += (size_t)b->topics[i]->npartitions;
    }
    for (size_t d = 0; d < ndirs; d++) {
        struct ckpt_file *f = &j->files[3 * d];
        for (int k = 0; k < 3; k++) {
            f[k].e = kp_calloc(n == 0 ? 1 : n, sizeof *f[k].e);
            j->nfiles++;
            if (f[k].e == NULL) {
                br_error("out of memory writing checkpoints");
                ckpt_job_free(j);
                return NULL;
            }
            (void)snprintf(f[k].path, sizeof f[k].path, "%s/%s", b->cfg.log_dirs[d],
                           offset_files[k]);
        }
        size_t k = 0;
        for (size_t i = 0; i < b->ntopics; i++) {
            const struct br_topic *t = b->topics[i];
            for (int32_t p = 0; p < t->npartitions; p++) {
                const struct br_partition *part = &t->partitions[p];
                if (part->dir_index != d || part->log == NULL) {
                    continue;
                }
                const int64_t offsets[3] = {br_log_recovery_point(part->log), part->hw,
                                            br_log_start_offset(part->log)};
                for (int x = 0; x < 3; x++) {
                    struct br_checkpoint_entry *e = &f[x].e[k];
                    (void)snprintf(e->topic, sizeof e->topic, "%s", t->name);
                    e->partition = p;
                    e->offset = offsets[x];
                }
                k++;
            }
        }
        for (int x = 0; x < 3; x++) {
            f[x].n = k;
        }
    }
    return j;
}

void br_flusher_write_offset_checkpoints(struct br_broker *b)
{
    struct ckpt_job *j = offset_checkpoints(b);
    if (j != NULL) {
        write_files(j->files, j->nfiles);
        ckpt_job_free(j);
    }
}

/* ------------------------------------------------------------ log flushes */

struct flush_job {
    struct br_job job; /* first */
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

static void start_flushes(struct br_broker *b, int64_t wall_ms);

static void flush_done(void *ctx, struct br_mail *m)
{
    struct br_broker *b = ctx;
    struct flush_job *j = (struct flush_job *)m;
    bool full = j->n == FLUSH_BATCH;
    for (size_t i = 0; i < j->n; i++) {
        /* a failure was logged with its file; the log is failed now */
        int rc = br_log_flush_end(j->f[i]);
        (void)rc;
    }
    kp_free(j);
    if (b->flusher != NULL) {
        b->flusher->flushing = false;
        if (full) {
            start_flushes(b, br_now_wall_ms()); /* more may be due */
        }
    }
}

/* Begins the flushes of up to FLUSH_BATCH due logs, from where the last
 * look stopped, and sends them to the thread. */
static void start_flushes(struct br_broker *b, int64_t wall_ms)
{
    struct br_flusher *fl = b->flusher;
    if (fl->flushing || b->ntopics == 0) {
        return;
    }
    struct flush_job *j = kp_calloc(1, sizeof *j);
    if (j == NULL) {
        br_error("out of memory flushing logs");
        return;
    }
    size_t ti = fl->next_topic < b->ntopics ? fl->next_topic : 0;
    int32_t p = ti == fl->next_topic ? fl->next_partition : 0;
    /* once round every partition at most */
    for (size_t seen = 0; seen <= b->ntopics; seen++) {
        const struct br_topic *t = b->topics[ti];
        for (; p < t->npartitions && j->n < FLUSH_BATCH; p++) {
            struct br_log *log = t->partitions[p].log;
            if (log == NULL || !br_log_flush_due(log, wall_ms)) {
                continue;
            }
            int rc = br_log_flush_begin(log, wall_ms, &j->f[j->n]);
            if (rc == 0) {
                j->n++;
            } else {
                br_error("flushing %s-%" PRId32 " failed: %s", t->name, p, kp_err_name(rc));
            }
        }
        if (j->n == FLUSH_BATCH) {
            break;
        }
        ti = ti + 1 < b->ntopics ? ti + 1 : 0;
        p = 0;
    }
    fl->next_topic = ti;
    fl->next_partition = p;
    if (j->n == 0) {
        kp_free(j);
        return;
    }
    fl->flushing = true;
    j->job.ops = &flush_ops;
    j->job.mail.deliver = flush_done;
    br_worker_submit(fl->worker, &j->job);
}

/* ------------------------------------------------------------ schedule */

void br_flusher_tick(struct br_broker *b, int64_t wall_ms, int64_t mono_ms)
{
    struct br_flusher *fl = b->flusher;
    if (fl == NULL) {
        return;
    }
    start_flushes(b, wall_ms);
    if (!fl->checkpoints &&
        (b->checkpoints_due ||
         mono_ms - fl->last_checkpoint_ms >= b->cfg.log_flush_offset_checkpoint_interval_ms)) {
        struct ckpt_job *j = offset_checkpoints(b);
        if (j != NULL) {
            fl->checkpoints = true;
            fl->last_checkpoint_ms = mono_ms;
            b->checkpoints_due = false;
            ckpt_submit(b, j);
        }
    }
}

int br_flusher_start(struct br_broker *b)
{
    struct br_flusher *fl = kp_calloc(1, sizeof *fl);
    if (fl == NULL) {
        return KP_E_NOMEM;
    }
    int rc = br_worker_start(b->mailbox, b->in_process, &fl->worker);
    if (rc != 0) {
        kp_free(fl);
        return rc;
    }
    fl->last_checkpoint_ms = br_now_mono_ms();
    b->flusher = fl;
    return 0;
}

void br_flusher_stop(struct br_broker *b)
{
    struct br_flusher *fl = b->flusher;
    if (fl == NULL) {
        return;
    }
    /* the jobs queued run; their ends (and whatever else was posted) are
     * delivered here; nothing new starts once the flusher is gone */
    br_worker_stop(fl->worker);
    b->flusher = NULL;
    br_mailbox_deliver_all(b->mailbox, b);
    br_worker_free(fl->worker);
    kp_free(fl);
}
