/* samsa-broker: the log cleaner's threads and schedule (see log_cleaner.h). */
#define _GNU_SOURCE

#include "log_cleaner.h"

#include "log_flusher.h"

#include "base/logging.h"
#include "broker.h"
#include "reactor/mailbox.h"
#include "storage/checkpoint.h"
#include "storage/cleaner.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- the broker's cleaner */

struct cleaner_task {
    struct br_mail mail; /* first: posted back through the mailbox */
    struct cleaner_task *next;
    uint64_t id;
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t partition;
    struct br_clean_job *job;
    int rc;
};

struct br_cleaner {
    struct br_mailbox *mailbox; /* set before the threads start */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct cleaner_task *queue; /* guarded by mu */
    bool stop;                  /* guarded by mu */
    atomic_bool abort;          /* polled by running jobs */
    pthread_t *threads;
    size_t nthreads;
    bool sync_ready; /* mu and cv exist */
    /* reactor only */
    size_t inflight;
    int64_t next_look_ms;
    uint64_t next_id;
    bool stopping;
};

/* A finished task back on the reactor thread (the mailbox delivers it). */
static void cleaned_delivered(void *ctx, struct br_mail *m);

static void *cleaner_main(void *arg)
{
    struct br_cleaner *c = arg;
    for (;;) {
        (void)pthread_mutex_lock(&c->mu);
        while (!c->stop && c->queue == NULL) {
            (void)pthread_cond_wait(&c->cv, &c->mu);
        }
        if (c->stop) {
            (void)pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        struct cleaner_task *t = c->queue;
        c->queue = t->next;
        (void)pthread_mutex_unlock(&c->mu);
        t->rc = br_clean_job_run(t->job, &c->abort);
        t->mail.deliver = cleaned_delivered;
        br_mailbox_post(c->mailbox, &t->mail);
    }
}

static struct br_partition *task_partition(struct br_broker *b, const struct cleaner_task *t)
{
    struct br_topic *tp = br_broker_find_topic(b, kp_str_c(t->topic));
    if (tp == NULL || t->partition < 0 || t->partition >= tp->npartitions) {
        return NULL;
    }
    struct br_partition *p = &tp->partitions[t->partition];
    return p->clean.job == t->id ? p : NULL;
}

static void task_free(struct cleaner_task *t)
{
    br_clean_job_free(t->job);
    kp_free(t);
}

static void params_of(const struct br_broker *b, const struct br_topic *t,
                      const struct br_partition *p, struct br_clean_params *out)
{
    out->first_dirty_offset = p->clean.first_dirty_offset;
    out->now_ms = br_now_wall_ms();
    out->delete_retention_ms = t->config.delete_retention_ms;
    out->min_compaction_lag_ms = t->config.min_compaction_lag_ms;
    out->segment_bytes = t->config.segment_bytes;
    size_t threads = b->cfg.log_cleaner_threads > 0 ? (size_t)b->cfg.log_cleaner_threads : 1;
    out->max_map_entries = br_clean_map_entries(threads);
}

/* The dirtiest log at or above its min.cleanable.dirty.ratio, not being
 * cleaned; NULL when none. */
static struct br_partition *dirtiest(struct br_broker *b, double *best_ratio)
{
    struct br_partition *best = NULL;
    *best_ratio = -1;
    for (size_t i = 0; i < b->ntopics; i++) {
        struct br_topic *t = b->topics[i];
        if ((t->config.cleanup_policy & BR_CLEANUP_COMPACT) == 0) {
            continue;
        }
        for (int32_t k = 0; k < t->npartitions; k++) {
            struct br_partition *p = &t->partitions[k];
            if (p->log == NULL || p->clean.job != 0 || p->clean.failed) {
                continue;
            }
            struct br_clean_params prm;
            params_of(b, t, p, &prm);
            double ratio = 0;
            int64_t dirty = 0;
            if (br_clean_dirty_ratio(p->log, &prm, &ratio, &dirty) != 0 || dirty == 0) {
                continue;
            }
            if (ratio >= t->config.min_cleanable_dirty_ratio && ratio > *best_ratio) {
                best = p;
                *best_ratio = ratio;
            }
        }
    }
    return best;
}

/* Hands out jobs while threads are free. */
static void schedule(struct br_broker *b)
{
    struct br_cleaner *c = b->cleaner;
    while (c != NULL && !c->stopping && c->nthreads > 0 && c->inflight < c->nthreads) {
        double ratio = 0;
        struct br_partition *p = dirtiest(b, &ratio);
        if (p == NULL) {
            return;
        }
        struct br_clean_params prm;
        params_of(b, p->topic, p, &prm);
        struct cleaner_task *t = kp_calloc(1, sizeof *t);
        if (t == NULL) {
            return;
        }
        int rc = br_clean_job_prepare(p->log, &prm, &t->job);
        if (rc != 0 || t->job == NULL) {
            if (rc != 0) {
                br_error("cannot prepare cleaning %s-%" PRId32 ": %s", p->topic->name, p->index,
                         kp_err_name(rc));
                p->clean.failed = true;
            }
            kp_free(t);
            if (rc == 0) {
                return; /* nothing after all: the ratio said otherwise */
            }
            continue;
        }
        t->id = ++c->next_id;
        (void)snprintf(t->topic, sizeof t->topic, "%s", p->topic->name);
        t->partition = p->index;
        p->clean.job = t->id;
        c->inflight++;
        br_debug("cleaning %s-%" PRId32 " (dirty ratio %.3f, from offset %" PRId64 ")",
                 p->topic->name, p->index, ratio, br_clean_job_stats(t->job)->first_dirty_offset);
        (void)pthread_mutex_lock(&c->mu);
        t->next = c->queue;
        c->queue = t;
        (void)pthread_cond_signal(&c->cv);
        (void)pthread_mutex_unlock(&c->mu);
    }
}

/* cleaner-offset-checkpoint of log dir d: every compacted partition there. */
static void write_checkpoint(struct br_broker *b, size_t d)
{
    size_t n = 0;
    for (size_t i = 0; i < b->ntopics; i++) {
        n += (size_t)b->topics[i]->npartitions;
    }
    struct br_checkpoint_entry *e = kp_calloc(n == 0 ? 1 : n, sizeof *e);
    if (e == NULL) {
        br_error("out of memory writing %s", BR_CLEANER_CHECKPOINT);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < b->ntopics; i++) {
        const struct br_topic *t = b->topics[i];
        if ((t->config.cleanup_policy & BR_CLEANUP_COMPACT) == 0) {
            continue;
        }
        for (int32_t p = 0; p < t->npartitions; p++) {
            const struct br_partition *part = &t->partitions[p];
            if (part->dir_index != d || part->clean.first_dirty_offset <= 0) {
                continue;
            }
            (void)snprintf(e[k].topic, sizeof e[k].topic, "%s", t->name);
            e[k].partition = p;
            e[k].offset = part->clean.first_dirty_offset;
            k++;
        }
    }
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/%s", b->cfg.log_dirs[d], BR_CLEANER_CHECKPOINT);
    br_flusher_write_checkpoint(b, path, e, k); /* off the reactor */
}

static void read_checkpoints(struct br_broker *b)
{
    for (size_t d = 0; d < b->cfg.n_log_dirs; d++) {
        struct br_checkpoint_entry *e = NULL;
        size_t n = 0;
        if (!br_broker_read_dir_checkpoint(b, d, BR_CLEANER_CHECKPOINT,
                                           "compacted logs are cleaned from their start", &e, &n)) {
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            struct br_partition *p = br_broker_checkpoint_partition(b, &e[i], d);
            if (p != NULL) {
                p->clean.first_dirty_offset = e[i].offset;
            }
        }
        br_checkpoint_free(e);
    }
}

int br_cleaner_start(struct br_broker *b)
{
    read_checkpoints(b);
    struct br_cleaner *c = kp_calloc(1, sizeof *c);
    if (c == NULL) {
        return KP_E_NOMEM;
    }
    c->mailbox = b->mailbox;
    atomic_init(&c->abort, false);
    b->cleaner = c;
    if (!b->cfg.log_cleaner_enable || b->cfg.log_cleaner_threads <= 0) {
        br_info("log cleaner disabled: compacted topics are not compacted");
        return 0;
    }
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (pthread_cond_init(&c->cv, NULL) != 0) {
        (void)pthread_mutex_destroy(&c->mu);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    c->sync_ready = true;
    size_t want = (size_t)b->cfg.log_cleaner_threads;
    c->threads = kp_calloc(want, sizeof *c->threads);
    if (c->threads == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < want; i++) {
        int e = pthread_create(&c->threads[i], NULL, cleaner_main, c);
        if (e != 0) {
            br_error("cannot start a log cleaner thread: %s", strerror(e));
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        c->nthreads++;
    }
    c->next_look_ms = br_now_mono_ms() + b->cfg.log_cleaner_backoff_ms;
    br_info("log cleaner: %zu thread(s), looking for dirty logs every %" PRId64 " ms", c->nthreads,
            b->cfg.log_cleaner_backoff_ms);
    return 0;
}

void br_cleaner_tick(struct br_broker *b, int64_t now_mono_ms)
{
    struct br_cleaner *c = b->cleaner;
    if (c == NULL || c->nthreads == 0 || b->stopping || now_mono_ms < c->next_look_ms) {
        return;
    }
    c->next_look_ms = now_mono_ms + b->cfg.log_cleaner_backoff_ms;
    schedule(b);
}

static void cleaned_delivered(void *ctx, struct br_mail *m)
{
    struct br_broker *b = ctx;
    struct cleaner_task *t = (struct cleaner_task *)(void *)m;
    struct br_cleaner *c = b->cleaner;
    c->inflight--;
    struct br_partition *p = task_partition(b, t);
    bool swapped = false;
    if (p == NULL || c->stopping) {
        br_debug("cleaning of %s-%" PRId32 " discarded: the topic changed or the broker stops",
                 t->topic, t->partition);
    } else if (t->rc != 0) {
        if (t->rc != KP_AGAIN) {
            br_error("cleaning %s-%" PRId32 " failed (%s); it is not cleaned again until "
                     "the next start",
                     t->topic, t->partition, kp_err_name(t->rc));
            p->clean.failed = true;
        }
    } else if ((p->topic->config.cleanup_policy & BR_CLEANUP_COMPACT) == 0) {
        br_info("cleaning of %s-%" PRId32 " discarded: the topic is no longer compacted", t->topic,
                t->partition);
    } else {
        int64_t t0 = br_now_mono_ms();
        int rc = br_clean_job_commit(p->log, t->job, &swapped);
        int64_t swap_ms = br_now_mono_ms() - t0;
        const struct br_clean_stats *st = br_clean_job_stats(t->job);
        if (rc != 0) {
            br_error("swapping the cleaned segments of %s-%" PRId32 " failed: %s", t->topic,
                     t->partition, kp_err_name(rc));
        } else if (!swapped) {
            br_info("cleaning of %s-%" PRId32 " discarded: the log changed meanwhile", t->topic,
                    t->partition);
        } else {
            p->clean.first_dirty_offset = st->cleaned_to;
            br_info("cleaned %s-%" PRId32 ": offsets [%" PRId64 ", %" PRId64 "), %" PRId64
                    " -> %" PRId64 " records, %" PRId64 " -> %" PRId64
                    " bytes, %zu -> %zu segments, %" PRId64 " tombstones dropped, "
                    "%zu keys mapped, %" PRId64 " ms (swap %" PRId64 " ms)",
                    t->topic, t->partition, br_log_start_offset(p->log), st->cleaned_to,
                    st->records_read, st->records_kept, st->bytes_before, st->bytes_after,
                    st->segments_before, st->segments_after, st->tombstones_dropped, st->map_keys,
                    st->elapsed_ms, swap_ms);
        }
    }
    if (p != NULL) {
        p->clean.job = 0;
    }
    if (swapped) {
        write_checkpoint(b, p->dir_index);
    }
    task_free(t);
    if (swapped) {
        schedule(b); /* Kafka's cleaner goes straight on to the next dirty log */
    }
}

void br_cleaner_stop(struct br_broker *b)
{
    struct br_cleaner *c = b->cleaner;
    if (c == NULL) {
        return;
    }
    c->stopping = true;
    if (c->sync_ready) {
        (void)pthread_mutex_lock(&c->mu);
        c->stop = true;
        atomic_store(&c->abort, true);
        (void)pthread_cond_broadcast(&c->cv);
        (void)pthread_mutex_unlock(&c->mu);
    }
    for (size_t i = 0; i < c->nthreads; i++) {
        (void)pthread_join(c->threads[i], NULL);
    }
    /* jobs never started, then jobs finished and posted */
    while (c->queue != NULL) {
        struct cleaner_task *t = c->queue;
        c->queue = t->next;
        struct br_partition *p = task_partition(b, t);
        if (p != NULL) {
            p->clean.job = 0;
        }
        task_free(t);
    }
    if (b->mailbox != NULL) {
        br_broker_wake(b);
    }
    for (size_t d = 0; d < b->cfg.n_log_dirs; d++) {
        write_checkpoint(b, d);
    }
    if (c->sync_ready) {
        (void)pthread_cond_destroy(&c->cv);
        (void)pthread_mutex_destroy(&c->mu);
    }
    kp_free(c->threads);
    kp_free(c);
    b->cleaner = NULL;
}
