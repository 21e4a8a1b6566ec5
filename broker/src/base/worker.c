/* samsa-broker: the I/O worker (see worker.h). */
#define _GNU_SOURCE

#include "base/worker.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

struct br_worker {
    struct br_mailbox *mailbox;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct br_job *head; /* guarded by mu: queued, oldest first */
    struct br_job *tail; /* guarded by mu */
    bool stop;           /* guarded by mu: run what is queued, then end */
    pthread_t thread;
    bool threaded; /* the thread runs (reactor only) */
    bool sync_ready;
    char name[16];
    /* submitted, not yet posted back: the reactor adds, the thread takes */
    atomic_size_t queued;
};

static void run_and_post(struct br_worker *w, struct br_job *job)
{
    job->ops->run(job);
    atomic_fetch_sub(&w->queued, 1);
    br_mailbox_post(w->mailbox, &job->mail);
}

void br_thread_name(const char *name)
{
    char comm[16];
    (void)snprintf(comm, sizeof comm, "samsa-%s", name);
    (void)pthread_setname_np(pthread_self(), comm);
}

static void *worker_main(void *arg)
{
    struct br_worker *w = arg;
    br_thread_name(w->name);
    for (;;) {
        (void)pthread_mutex_lock(&w->mu);
        while (!w->stop && w->head == NULL) {
            (void)pthread_cond_wait(&w->cv, &w->mu);
        }
        struct br_job *job = w->head;
        if (job == NULL) {
            /* stop asked and nothing left: what was submitted has run */
            (void)pthread_mutex_unlock(&w->mu);
            return NULL;
        }
        w->head = job->next;
        if (w->head == NULL) {
            w->tail = NULL;
        }
        (void)pthread_mutex_unlock(&w->mu);
        run_and_post(w, job);
    }
}

int br_worker_start(struct br_mailbox *mb, bool inline_jobs, const char *name,
                    struct br_worker **out)
{
    *out = NULL;
    struct br_worker *w = kp_calloc(1, sizeof *w);
    if (w == NULL) {
        return KP_E_NOMEM;
    }
    w->mailbox = mb;
    (void)snprintf(w->name, sizeof w->name, "%s", name);
    atomic_init(&w->queued, 0);
    if (!inline_jobs) {
        if (pthread_mutex_init(&w->mu, NULL) != 0) {
            goto out_free;
        }
        if (pthread_cond_init(&w->cv, NULL) != 0) {
            (void)pthread_mutex_destroy(&w->mu);
            goto out_free;
        }
        w->sync_ready = true;
        int e = pthread_create(&w->thread, NULL, worker_main, w);
        if (e != 0) {
            br_error("cannot start the I/O worker thread: %s", strerror(e));
            (void)pthread_cond_destroy(&w->cv);
            (void)pthread_mutex_destroy(&w->mu);
            goto out_free;
        }
        w->threaded = true;
    }
    *out = w;
    return 0;

out_free:
    kp_free(w);
    return KP_ERR_KAFKA_STORAGE_ERROR;
}

void br_worker_submit(struct br_worker *w, struct br_job *job)
{
    job->next = NULL;
    atomic_fetch_add(&w->queued, 1);
    if (!w->threaded) {
        run_and_post(w, job);
        return;
    }
    (void)pthread_mutex_lock(&w->mu);
    if (w->tail != NULL) {
        w->tail->next = job;
    } else {
        w->head = job;
    }
    w->tail = job;
    (void)pthread_cond_signal(&w->cv);
    (void)pthread_mutex_unlock(&w->mu);
}

size_t br_worker_queued(struct br_worker *w)
{
    return atomic_load(&w->queued);
}

void br_worker_stop(struct br_worker *w)
{
    if (w == NULL || !w->threaded) {
        return;
    }
    (void)pthread_mutex_lock(&w->mu);
    w->stop = true;
    (void)pthread_cond_signal(&w->cv);
    (void)pthread_mutex_unlock(&w->mu);
    (void)pthread_join(w->thread, NULL);
    w->threaded = false;
}

void br_worker_free(struct br_worker *w)
{
    if (w == NULL) {
        return;
    }
    br_worker_stop(w);
    if (w->sync_ready) {
        (void)pthread_cond_destroy(&w->cv);
        (void)pthread_mutex_destroy(&w->mu);
    }
    kp_free(w);
}
