/* samsa-broker: a standalone broker's topic jobs on the I/O worker (see
 * topic_admin.h): partition logs made, log dirs synced, directories
 * removed, away from the reactor. */
#define _GNU_SOURCE

#include "server/topic_admin_internal.h"

#include "base/logging.h"
#include "config/config.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the worker's side */

int br_topic_admin_partition_path(const char *log_dir, const char *topic, int32_t p, char *buf,
                                  size_t cap)
{
    int n = snprintf(buf, cap, "%s/%s-%" PRId32, log_dir, topic, p);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int br_topic_admin_fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    int rc = fsync(fd);
    int saved = errno;
    (void)close(fd);
    errno = saved;
    return rc;
}

/* Makes each partition's log; on failure removes what it made. */
static void make_logs(struct log_job *j)
{
    char path[PATH_MAX];
    int32_t made = j->first; /* partitions [first, made) may have a directory of this job's */
    bool used[BR_CONFIG_MAX_LOG_DIRS];
    memset(used, 0, sizeof used);
    for (int32_t p = j->first; p < j->n; p++) {
        /* a directory of this name anywhere is someone else's data: never
         * adopted into a new topic */
        for (size_t d = 0; d < j->n_log_dirs; d++) {
            struct stat st;
            if (br_topic_admin_partition_path(j->log_dirs[d], j->name, p, path, sizeof path) != 0) {
                (void)snprintf(j->err, sizeof j->err, "the path of %.200s-%" PRId32 " is too long",
                               j->name, p);
                goto out_undo;
            }
            if (lstat(path, &st) == 0) {
                (void)snprintf(j->err, sizeof j->err,
                               "%.150s already exists: it is not taken into a new partition "
                               "(move it away, then try again)",
                               path);
                goto out_undo;
            }
            if (errno != ENOENT) {
                (void)snprintf(j->err, sizeof j->err, "%.150s: %s", path, strerror(errno));
                goto out_undo;
            }
        }
        if (br_topic_admin_partition_path(j->log_dirs[j->dirs[p]], j->name, p, path, sizeof path) !=
            0) {
            (void)snprintf(j->err, sizeof j->err, "the path of %.200s-%" PRId32 " is too long",
                           j->name, p);
            goto out_undo;
        }
        made = p + 1; /* from here its directory may exist */
        /* no budget on this thread: the reactor hands the log to its own */
        /* (epoch 0 is recorded by the partition's first append, see
         * partition_setup: an empty partition writes no checkpoint) */
        int rc = br_log_open(path, &j->lc, 0, NULL, &j->logs[p]);
        if (rc != 0) {
            (void)snprintf(j->err, sizeof j->err, "cannot make the log %.150s: %s", path,
                           rc < 0 ? kp_err_str(rc) : kp_err_name(rc));
            goto out_undo;
        }
        used[j->dirs[p]] = true;
    }
    /* the new directories' entries, durable */
    for (size_t d = 0; d < j->n_log_dirs; d++) {
        if (used[d] && br_topic_admin_fsync_dir(j->log_dirs[d]) != 0) {
            (void)snprintf(j->err, sizeof j->err, "%.150s: fsync: %s", j->log_dirs[d],
                           strerror(errno));
            goto out_undo;
        }
    }
    j->rc = 0;
    return;

out_undo:
    j->rc = KP_ERR_KAFKA_STORAGE_ERROR;
    br_error("%s topic %s: %s", j->first > 0 ? "adding partitions to" : "creating", j->name,
             j->err);
    for (int32_t q = j->first; q < made; q++) {
        br_log_close(j->logs[q]);
        j->logs[q] = NULL;
        if (br_topic_admin_partition_path(j->log_dirs[j->dirs[q]], j->name, q, path, sizeof path) ==
                0 &&
            br_log_dir_remove(path) != 0) {
            br_error("cannot remove %s of a topic that was not created", path);
        }
    }
}

static void sync_log_dirs(struct log_job *j)
{
    j->rc = 0;
    for (size_t d = 0; d < j->n_log_dirs; d++) {
        if (br_topic_admin_fsync_dir(j->log_dirs[d]) != 0 && j->rc == 0) {
            j->rc = KP_ERR_KAFKA_STORAGE_ERROR;
            (void)snprintf(j->err, sizeof j->err, "%.150s: fsync: %s", j->log_dirs[d],
                           strerror(errno));
        }
    }
}

static void remove_dirs(struct log_job *j)
{
    j->rc = 0;
    for (int32_t i = 0; i < j->n; i++) {
        if (j->paths[i] == NULL) {
            continue;
        }
        int rc = br_log_dir_delete(j->paths[i]);
        if (rc != 0 && j->rc == 0) {
            j->rc = KP_ERR_KAFKA_STORAGE_ERROR;
            (void)snprintf(j->err, sizeof j->err, "cannot delete %.150s: %s", j->paths[i],
                           rc < 0 ? kp_err_str(rc) : kp_err_name(rc));
        }
    }
}

/* The worker thread: touches the job and the files it names only. */
static void log_job_run(struct br_job *job)
{
    struct log_job *j = (struct log_job *)(void *)job;
    j->err[0] = '\0';
    if (j->sync) {
        sync_log_dirs(j);
    } else if (j->make) {
        make_logs(j);
    } else {
        remove_dirs(j);
    }
}

const struct br_job_ops br_topic_admin_log_job_ops = {"partition logs", log_job_run};
