/*
 * samsa-broker: the I/O worker, a helper thread for the blocking work the
 * reactor must not wait for: making and removing partition directories,
 * segment and index files and their fsyncs, rewriting the metadata file.
 *
 * The reactor submits a job; the worker thread runs it (job->ops->run) and
 * posts it back through the reactor's mailbox with the kind the submitter
 * set in job->mail.kind. Jobs run one at a time, in the order they were
 * submitted: a job submitted after another sees everything the other did
 * on disk (a topic's directories are removed before a topic of the same
 * name is made again; the metadata file is never written by two jobs at
 * once).
 *
 *   job->mail.kind = BR_MAIL_META;           reactor
 *   br_worker_submit(w, job);                ownership passes to the worker
 *   ... ops->run(job) ...                    worker thread
 *   br_broker_wake -> switch on the kind      reactor: the job is its again
 *
 * A job touches nothing but itself and the files it names while it is away
 * (what it needs travels in it; what it makes, such as opened logs, is
 * handed over in it and owned by the reactor once taken from the mailbox).
 *
 * An inline worker (an in-process broker: the stateful fuzz harness) has no
 * thread: br_worker_submit runs the job at once on the calling thread and
 * posts it, so runs are reproducible. After br_worker_stop the worker is
 * inline too, so that work submitted while the broker stops still runs.
 *
 * @locality br_worker_*: the reactor thread. ops->run: the worker thread
 * (or the submitting thread, inline).
 */
#ifndef SAMSA_BROKER_WORKER_H
#define SAMSA_BROKER_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa-protocol/err.h>

#include "base/mailbox.h"

struct br_job;

/* What a kind of job does; a const table per kind. */
struct br_job_ops {
    const char *name;
    /* Does the work and records the outcome in the job; never fails as a
     * call (errors travel in the job). */
    void (*run)(struct br_job *job);
};

/* The first member of a job's own struct (container by cast, as br_mail). */
struct br_job {
    struct br_mail mail; /* first: posted back through the mailbox */
    struct br_job *next; /* the worker's queue */
    const struct br_job_ops *ops;
};

struct br_worker;

/* A worker posting to mb (which must outlive it), with its thread started
 * unless inline_jobs; the thread is called name (br_thread_name). Returns
 * 0, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR (no thread, mutex or
 * condition variable). *out owned by the caller. */
KP_MUST_CHECK int br_worker_start(struct br_mailbox *mb, bool inline_jobs, const char *name,
                                  struct br_worker **out);

/* Names the calling thread for top -H, ps -L and /proc/PID/task/TID/comm:
 * "samsa-" and name, cut to the kernel's 15 bytes. Operators and the
 * benchmarks read a thread's CPU time by that name. */
void br_thread_name(const char *name);

/* Queues the job (job->ops and job->mail.kind set); it comes back through
 * the mailbox once run. Never fails. */
void br_worker_submit(struct br_worker *w, struct br_job *job);

/* Jobs submitted and not yet posted back. */
size_t br_worker_queued(struct br_worker *w);

/* Runs every job still queued, then ends the thread; the worker stays
 * usable, inline. Their messages are in the mailbox. NULL is a no-op. */
void br_worker_stop(struct br_worker *w);

/* Stops the worker (br_worker_stop) and frees it. NULL is a no-op. */
void br_worker_free(struct br_worker *w);

#endif
