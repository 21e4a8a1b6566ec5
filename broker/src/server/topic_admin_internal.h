/*
 * samsa-broker: what topic_admin.c shares with topic_admin_jobs.c, the
 * jobs it gives the I/O worker. topic_admin.c uses topic_admin_jobs.c,
 * never the other way.
 *
 * @locality a job is made and freed on the reactor, run on the worker
 */
#ifndef SAMSA_BROKER_SERVER_TOPIC_ADMIN_INTERNAL_H
#define SAMSA_BROKER_SERVER_TOPIC_ADMIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/worker.h"
#include "cluster/metadata.h"
#include "storage/log.h"

/* A job of the worker on a topic's partition logs. */
struct log_job {
    struct br_job job; /* first: comes back as BR_MAIL_LOG_JOB */
    uint64_t op;
    bool make; /* make the logs; else remove the directories */
    bool sync; /* only fsync the log dirs (log_dirs) */
    char name[BR_TOPIC_NAME_MAX + 1];
    int32_t n;     /* partitions (make) or directories (remove) */
    int32_t first; /* make: the logs made are [first, n) (partitions added) */
    /* make: the log dirs (b->cfg.log_dirs: the strings do not change while
     * the broker runs), each partition's dir (owned copy), the settings;
     * the logs made, owned by the job until the reactor takes them */
    char *const *log_dirs;
    size_t n_log_dirs;
    size_t *dirs;
    struct br_log_config lc;
    struct br_log **logs;
    /* remove: the directories (owned; NULL entries are skipped) */
    char **paths;
    int rc;
    char err[256];
};

/* The directory of partition p of topic in log_dir, into buf: 0, or -1
 * when it does not fit. */
int br_topic_admin_partition_path(const char *log_dir, const char *topic, int32_t p, char *buf,
                                  size_t cap);
/* fsync(2) of a directory: 0, or -1 with errno. */
int br_topic_admin_fsync_dir(const char *path);

/* The job's run: makes the logs, syncs the log dirs or removes the
 * directories, with rc and err set. */
extern const struct br_job_ops br_topic_admin_log_job_ops;

#endif
