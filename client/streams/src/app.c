/*
 * The runtime: one consumer-group member (group.id = application.id, the
 * range assignor, so that partition i of every topic of a sub-topology goes
 * to one member, as Kafka 2.0's StreamsPartitionAssignor keeps
 * co-partitioned topics together), one task per assigned (sub-topology,
 * partition), one idempotent producer for outputs, repartition and
 * changelog records.
 *
 * At-least-once (Kafka's processing.guarantee=at_least_once): input offsets
 * are committed only after every output and changelog record of what was
 * processed is acknowledged (producer flush with no failed report), at each
 * commit interval, before partitions are given up, and at close
 * (StreamTask.commit: flush the stores and the producer, then commit
 * offsets); the LMDB state and its positions after the group accepted the
 * offsets, so that a member the group moved on from writes none (fence()). A store is restored from its changelog when its task starts
 * (ProcessorStateManager / StoreChangelogReader: read from the beginning to
 * the end offset taken at the start of restore).
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RESTORE_TIMEOUT_MS 60000
#define FLUSH_TIMEOUT_MS 60000
#define COMMIT_TIMEOUT_MS 30000
#define POLL_BATCH 1000

struct tracked {
    char *topic;
    int32_t partition;
    int64_t next;  /* the next offset to read: what a commit writes */
    bool dirty;    /* processed since the last commit */
};

/* One changelog partition's next offset after the records of it that were
 * delivered: where the restore of its tail starts after the next commit. */
struct changelog_slot {
    char *topic;
    int32_t partition;
    int64_t next;
};

struct samsa_st_app {
    samsa_st_topology *t;
    char *application_id;
    samsa_conf *base;      /* the caller's conf: restore consumers are made from it */
    samsa_consumer *consumer;
    samsa_producer *producer;
    samsa_admin *admin;
    int64_t commit_interval_ms;
    int64_t last_commit_ms;
    /* fencing: how long the app may stand still (the smaller of
     * session.timeout.ms and max.poll.interval.ms) before it must learn
     * from the group whether it still owns its partitions; when its thread
     * last ran (CLOCK_MONOTONIC, which goes on while the process is
     * stopped); whether it stood still that long since its last commit */
    int64_t stall_ms;
    int64_t alive_ms;
    bool stalled;
    uint64_t fenced; /* commits the group refused because it moved on */
    struct st_tasks tasks;
    struct tracked *tracked;
    size_t tracked_count;
    uint64_t processed;
    uint64_t dropped_late_closed; /* of tasks already closed */
    uint64_t restored;
    uint64_t delivery_failures;
    int err;               /* sticky: the app cannot go on */
    char **subscribed;
    size_t subscribed_count;
    char *state_dir;       /* NULL: stores in memory */
    int state_lock_fd;     /* holds state_dir/<application.id>/.lock, or -1 */
    char why[512];         /* the sentence of the last error that has one */
    struct changelog_slot **slots;
    size_t slot_count;
    uint64_t skipped;      /* records already applied, sent again by a restart upstream */
    /* held (recursively) by the thread running the app wherever tasks and
     * stores change, and by samsa_st_app_query */
    pthread_mutex_t lock;
    bool lock_made;
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_delivery(const struct samsa_delivery *report, void *opaque)
{
    samsa_st_app *app = opaque;
    struct changelog_slot *slot = report->opaque;
    if (report->err == SAMSA_OK && slot != NULL && report->offset + 1 > slot->next) {
        slot->next = report->offset + 1;
    }
    if (report->err != SAMSA_OK) {
        app->delivery_failures++;
        (void)fprintf(stderr, "samsa-streams: a record to %s was not delivered: %s\n",
                      report->topic, samsa_err_str(report->err));
    }
}

/* The slot of a store's changelog partition, made at its first record. */
static struct changelog_slot *slot_of(samsa_st_app *app, samsa_st_store *s)
{
    if (s->changelog_slot != NULL) {
        return s->changelog_slot;
    }
    for (size_t i = 0; i < app->slot_count; i++) {
        if (app->slots[i]->partition == s->task->partition &&
            strcmp(app->slots[i]->topic, s->def->changelog) == 0) {
            s->changelog_slot = app->slots[i];
            return s->changelog_slot;
        }
    }
    struct changelog_slot **v =
        realloc(app->slots, (app->slot_count + 1) * sizeof(struct changelog_slot *));
    struct changelog_slot *slot = calloc(1, sizeof *slot);
    if (v != NULL) {
        app->slots = v;
    }
    if (v == NULL || slot == NULL || (slot->topic = st_strdup(s->def->changelog)) == NULL) {
        free(slot);
        return NULL; /* no memory: this record's offset is not noted, a restore reads more */
    }
    slot->partition = s->task->partition;
    slot->next = -1;
    v[app->slot_count++] = slot;
    s->changelog_slot = slot;
    return slot;
}

static int app_send(void *opaque, const char *topic, int32_t partition,
                    struct samsa_st_bytes key, struct samsa_st_bytes value, int64_t timestamp,
                    const struct samsa_header *headers, size_t header_count,
                    samsa_st_store *from)
{
    samsa_st_app *app = opaque;
    struct samsa_record r = {
        SAMSA_RECORD_INIT,
        .headers = headers,
        .header_count = header_count,
        .opaque = from != NULL ? slot_of(app, from) : NULL,
        .topic = topic,
        .partition = partition < 0 ? SAMSA_PARTITION_ANY : partition,
        .key = key.data,
        .key_len = key.len,
        .value = value.data,
        .value_len = value.len,
        .timestamp = timestamp > 0 ? timestamp : 0,
    };
    for (;;) {
        int err = samsa_produce(app->producer, &r);
        if (err != SAMSA_ERR_QUEUE_FULL) {
            return err;
        }
        (void)samsa_producer_poll(app->producer, 100);
    }
}

static struct tracked *tracked_find(samsa_st_app *app, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < app->tracked_count; i++) {
        if (app->tracked[i].partition == partition && strcmp(app->tracked[i].topic, topic) == 0) {
            return &app->tracked[i];
        }
    }
    return NULL;
}

/* Writes each task's state with its positions (LMDB: one transaction),
 * noting where its changelogs' tails will start. */
static int checkpoint_tasks(samsa_st_app *app)
{
    int err = SAMSA_OK;
    for (size_t i = 0; err == SAMSA_OK && i < app->tasks.count; i++) {
        struct st_task *task = app->tasks.v[i];
        for (size_t k = 0; err == SAMSA_OK && k < app->t->store_count; k++) {
            samsa_st_store *s = task->stores[k];
            const struct changelog_slot *slot = s != NULL ? s->changelog_slot : NULL;
            if (slot != NULL && slot->next >= 0) {
                struct st_pos_id id = {'c', slot->partition, slot->topic,
                                       strlen(slot->topic)};
                err = st_pos_raise(&task->pos, &id, slot->next, 0);
            }
        }
        if (err == SAMSA_OK) {
            err = st_task_checkpoint(task);
        }
    }
    return err;
}

/* The group moved on without this member (a rebalance it missed while it
 * stood still past session.timeout.ms, or left after max.poll.interval.ms):
 * its tasks may have new owners already. They are closed as a crash would
 * close them (LMDB's open write transaction aborted, nothing checkpointed,
 * in-memory state dropped) and their offsets forgotten; the consumer joins
 * again and the rebalance callback opens whatever the group gives it, each
 * restored from its changelog (Kafka 2.0's StreamThread: a
 * CommitFailedException is a TaskMigratedException, the tasks are closed
 * as zombies without committing). */
static void fence(samsa_st_app *app, int err)
{
    (void)snprintf(app->why, sizeof app->why,
                   "the group moved on without this instance (%s): its %zu tasks closed "
                   "without committing their state or offsets",
                   samsa_err_name(err), app->tasks.count);
    (void)fprintf(stderr, "samsa-streams: %s\n", app->why);
    app->fenced++;
    app->stalled = false; /* nothing left that the stall could have made stale */
    (void)pthread_mutex_lock(&app->lock);
    st_tasks_clear(&app->tasks);
    (void)pthread_mutex_unlock(&app->lock);
    for (size_t i = 0; i < app->tracked_count; i++) {
        free(app->tracked[i].topic);
    }
    app->tracked_count = 0;
}

/* Commits the group's offsets: those processed since the last commit, or,
 * after the app stood still past stall_ms, every partition with a known
 * position (a commit that only asks the group whether this member still
 * owns them). *moved_on: the group refused because it moved on. */
static int commit_offsets(samsa_st_app *app, bool *moved_on)
{
    *moved_on = false;
    size_t n = 0;
    for (size_t i = 0; i < app->tracked_count; i++) {
        const struct tracked *tr = &app->tracked[i];
        n += tr->dirty || (app->stalled && tr->next >= 0) ? 1 : 0;
    }
    if (n == 0) {
        return SAMSA_OK;
    }
    struct samsa_partition *parts = calloc(n, sizeof *parts);
    if (parts == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < app->tracked_count; i++) {
        const struct tracked *tr = &app->tracked[i];
        if (tr->dirty || (app->stalled && tr->next >= 0)) {
            parts[k++] = (struct samsa_partition){tr->topic, tr->partition, tr->next};
        }
    }
    int err = samsa_consumer_commit(app->consumer, parts, n, false, COMMIT_TIMEOUT_MS);
    free(parts);
    if (err == SAMSA_OK) {
        for (size_t i = 0; i < app->tracked_count; i++) {
            app->tracked[i].dirty = false;
        }
    }
    /* Kafka's ILLEGAL_GENERATION (22), UNKNOWN_MEMBER_ID (25): another
     * generation owns the partitions. REBALANCE_IN_PROGRESS is not: the
     * member still owns them and commits again from the rebalance callback. */
    *moved_on = err == 22 || err == 25;
    return err;
}

int samsa_st_app_commit(samsa_st_app *app)
{
    if (app == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    app->last_commit_ms = wall_ms();
    int err = samsa_producer_flush(app->producer, FLUSH_TIMEOUT_MS);
    if (err != SAMSA_OK) {
        return err;
    }
    if (app->delivery_failures > 0) {
        /* outputs of processed records are lost: committing their offsets
         * would lose them for good */
        app->err = SAMSA_ERR_FATAL;
        return app->err;
    }
    /* The group's offsets first: their commit is the one call that says
     * whether this member still owns its partitions, and a member that no
     * longer does must not write its state (the new owner restores from the
     * changelog and goes on from there). A crash between the two leaves the
     * state behind the offsets: the tasks restore the changelog's tail past
     * it and seek to the positions it carries (records that changed no
     * store are processed again, as after any crash). */
    bool moved_on = false;
    err = commit_offsets(app, &moved_on);
    if (moved_on) {
        fence(app, err);
    }
    if (err != SAMSA_OK) {
        return err;
    }
    app->stalled = false;
    (void)pthread_mutex_lock(&app->lock);
    err = checkpoint_tasks(app);
    (void)pthread_mutex_unlock(&app->lock);
    if (err != SAMSA_OK) {
        app->err = err;
    }
    return err;
}

static const struct samsa_header *header_of(const samsa_message *m, const char *name)
{
    for (size_t i = 0; i < m->header_count; i++) {
        if (strcmp(m->headers[i].name, name) == 0 && m->headers[i].value != NULL) {
            return &m->headers[i];
        }
    }
    return NULL;
}

/* Applies one changelog record unless the state already holds it: the
 * input record that made it (samsa.pos) is below the positions the state
 * on disk was committed with. What it applies raises the task's positions,
 * its origin's too. */
static int restore_record(samsa_st_app *app, struct st_task *task, samsa_st_store *s,
                          const samsa_message *m)
{
    const struct samsa_header *pos = header_of(m, ST_HDR_POS);
    const struct samsa_header *origin = header_of(m, ST_HDR_ORIGIN);
    struct st_pos_id id;
    int64_t offset = 0;
    int64_t seq = 0;
    bool known = pos != NULL && st_hdr_pos_decode(pos->value, pos->value_len, &id, &offset);
    if (known) {
        const struct st_pos *held = st_pos_find(&task->saved, &id);
        if (held != NULL && offset < held->a) {
            return SAMSA_OK;
        }
    }
    struct samsa_st_bytes k = {m->key, m->key_len};
    struct samsa_st_bytes v = {m->value, m->value_len};
    int err = st_store_restore(s, k, v);
    app->restored++;
    if (err == SAMSA_OK && known) {
        err = st_pos_raise(&task->pos, &id, offset + 1, 0);
    }
    if (err == SAMSA_OK && origin != NULL &&
        st_hdr_origin_decode(origin->value, origin->value_len, &id, &offset, &seq)) {
        err = st_pos_raise(&task->pos, &id, offset, seq);
    }
    return err;
}

/* Replays the store's changelog partition into it, up to the end offset
 * read when the restore starts: from the offset the state on disk was
 * committed with (LMDB: its tail only), else from the start. */
static int restore_store(samsa_st_app *app, struct st_task *task, samsa_st_store *s)
{
    int32_t partition = task->partition;
    struct st_pos_id cid = {'c', partition, s->def->changelog, strlen(s->def->changelog)};
    const struct st_pos *from = st_pos_find(&task->saved, &cid);
    char errstr[256];
    samsa_consumer *c = samsa_consumer_new(app->base, errstr, sizeof errstr);
    if (c == NULL) {
        (void)fprintf(stderr, "samsa-streams: restore consumer: %s\n", errstr);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    int64_t low = 0;
    int64_t high = 0;
    int err = samsa_consumer_watermarks(c, s->def->changelog, partition, &low, &high,
                                        RESTORE_TIMEOUT_MS);
    /* a changelog shorter than the state knew (the topic made again): all of it */
    int64_t start = from != NULL && from->a >= low && from->a <= high ? from->a : low;
    struct samsa_partition part = {s->def->changelog, partition, start};
    if (err == SAMSA_OK) {
        err = samsa_consumer_assign(c, &part, 1);
    }
    int64_t deadline = wall_ms() + RESTORE_TIMEOUT_MS;
    int64_t next = start;
    while (err == SAMSA_OK && next < high) {
        if (wall_ms() > deadline) {
            err = SAMSA_ERR_TIMED_OUT;
            break;
        }
        samsa_message *m = samsa_consumer_poll(c, 500);
        if (m == NULL) {
            continue;
        }
        if (m->offset < high) {
            err = restore_record(app, task, s, m);
        }
        next = m->offset + 1;
        samsa_message_free(m);
    }
    samsa_consumer_destroy(c); /* closed first: it commits nothing (auto commit off) */
    if (err != SAMSA_OK) {
        (void)fprintf(stderr, "samsa-streams: restoring %s partition %d: %s\n",
                      s->def->changelog, (int)partition, samsa_err_str(err));
    }
    return err;
}

static int open_task(samsa_st_app *app, size_t sub, int32_t partition)
{
    if (st_tasks_find(&app->tasks, sub, partition) != NULL) {
        return SAMSA_OK;
    }
    struct st_output out = {app_send, app};
    struct st_task *task =
        st_task_new(app->t, app->application_id, sub, partition, out, app->state_dir);
    if (task == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    int err = SAMSA_OK;
    for (size_t i = 0; err == SAMSA_OK && i < app->t->store_count; i++) {
        if (task->stores[i] != NULL) {
            err = restore_store(app, task, task->stores[i]);
        }
    }
    if (err == SAMSA_OK) {
        /* what the restore applied, on disk before anything else */
        err = st_task_checkpoint(task);
    }
    if (err == SAMSA_OK) {
        err = st_task_init(task, wall_ms());
    }
    if (err != SAMSA_OK) {
        st_task_destroy(task);
        return err;
    }
    /* restored out of sight; from here on queries see it */
    (void)pthread_mutex_lock(&app->lock);
    err = st_tasks_add(&app->tasks, task);
    (void)pthread_mutex_unlock(&app->lock);
    return err;
}

static void rebalance(samsa_st_app *app, bool assigned, const struct samsa_partition *parts,
                      size_t count);

static void on_rebalance(bool assigned, const struct samsa_partition *parts, size_t count,
                         void *opaque)
{
    rebalance(opaque, assigned, parts, count);
}

/* Opens or closes the tasks of parts: a task is restored before it is added
 * to app->tasks, under app->lock, and removed under it before it is closed. */
static void rebalance(samsa_st_app *app, bool assigned, const struct samsa_partition *parts,
                      size_t count)
{
    if (assigned) {
        app->stalled = false; /* a member of the group's current generation */
    } else {
        int err = samsa_st_app_commit(app);
        if (err != SAMSA_OK) {
            (void)fprintf(stderr, "samsa-streams: commit before giving partitions up: %s\n",
                          samsa_err_str(err));
        }
    }
    for (size_t i = 0; i < count; i++) {
        long sub = st_topology_sub_of(app->t, parts[i].topic);
        if (sub < 0) {
            continue;
        }
        struct tracked *tr = tracked_find(app, parts[i].topic, parts[i].partition);
        if (assigned) {
            int err = open_task(app, (size_t)sub, parts[i].partition);
            if (err != SAMSA_OK && app->err == SAMSA_OK) {
                app->err = err;
            }
            /* on from what the state holds, not from the group's offset */
            int64_t resume = -1;
            struct st_task *task = st_tasks_find(&app->tasks, (size_t)sub, parts[i].partition);
            struct st_pos_id id = {'i', parts[i].partition, parts[i].topic,
                                   strlen(parts[i].topic)};
            const struct st_pos *held = task != NULL ? st_pos_find(&task->pos, &id) : NULL;
            if (held != NULL) {
                err = samsa_consumer_seek(app->consumer, parts[i].topic, parts[i].partition,
                                          held->a, RESTORE_TIMEOUT_MS);
                if (err != SAMSA_OK) {
                    (void)fprintf(stderr, "samsa-streams: seek %s partition %d to %lld: %s\n",
                                  parts[i].topic, (int)parts[i].partition,
                                  (long long)held->a, samsa_err_str(err));
                }
                /* libsamsa refuses the seek (SAMSA_ERR_STATE) for some
                 * partitions of the assignment that follows a lost
                 * membership: the consumer then starts at the group's
                 * offset, and samsa_st_app_poll skips what the state holds */
                if (err != SAMSA_OK && err != SAMSA_ERR_STATE) {
                    app->err = app->err == SAMSA_OK ? err : app->err;
                }
                resume = held->a;
            }
            if (tr == NULL) {
                struct tracked *t2 =
                    realloc(app->tracked, (app->tracked_count + 1) * sizeof *t2);
                char *topic = st_strdup(parts[i].topic);
                if (t2 != NULL) {
                    app->tracked = t2;
                }
                if (t2 == NULL || topic == NULL) {
                    free(topic);
                    app->err = SAMSA_ERR_NOMEM;
                    continue;
                }
                app->tracked[app->tracked_count++] =
                    (struct tracked){topic, parts[i].partition, resume, resume >= 0};
            } else {
                tr->next = resume;
                tr->dirty = resume >= 0;
            }
        } else {
            (void)pthread_mutex_lock(&app->lock);
            app->dropped_late_closed += st_tasks_close(&app->tasks, (size_t)sub,
                                                       parts[i].partition);
            (void)pthread_mutex_unlock(&app->lock);
            if (tr != NULL) {
                free(tr->topic);
                *tr = app->tracked[--app->tracked_count];
            }
        }
    }
}

/* Creates one internal topic; one that exists already is taken as it is. */
static int create_internal(samsa_st_app *app, const char *name, int32_t partitions,
                           const char *const *config, size_t config_count, char *errstr,
                           size_t errstr_size)
{
    struct samsa_new_topic nt = {name, partitions, -1, config, config_count};
    int err = samsa_admin_create_topic(app->admin, &nt, 30000, errstr, errstr_size);
    return err == 36 /* TOPIC_ALREADY_EXISTS */ ? SAMSA_OK : err;
}

static int partition_count(const samsa_metadata *md, const char *topic, int32_t *out)
{
    for (size_t i = 0; i < md->topic_count; i++) {
        if (strcmp(md->topics[i].name, topic) == 0) {
            if (md->topics[i].err != 0 || md->topics[i].partition_count == 0) {
                return md->topics[i].err != 0 ? md->topics[i].err : SAMSA_ERR_UNKNOWN_TOPIC;
            }
            *out = (int32_t)md->topics[i].partition_count;
            return SAMSA_OK;
        }
    }
    return SAMSA_ERR_UNKNOWN_TOPIC;
}

static int add_subscribed(samsa_st_app *app, const char *topic)
{
    for (size_t i = 0; i < app->subscribed_count; i++) {
        if (strcmp(app->subscribed[i], topic) == 0) {
            return SAMSA_OK;
        }
    }
    char **s = realloc(app->subscribed, (app->subscribed_count + 1) * sizeof *s);
    if (s == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    app->subscribed = s;
    s[app->subscribed_count] = st_strdup(topic);
    if (s[app->subscribed_count] == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    app->subscribed_count++;
    return SAMSA_OK;
}

/* The sub-topology whose sink writes the repartition topic read by source
 * node n (its k-th topic), or -1. */
static long feeding_sub(const samsa_st_topology *t, const struct samsa_st_node *n, size_t k)
{
    for (size_t i = 0; i < t->node_count; i++) {
        const struct samsa_st_node *s = t->nodes[i];
        if (s->kind == ST_SINK && s->internal && strcmp(s->sink_resolved, n->resolved[k]) == 0) {
            return (long)s->sub;
        }
    }
    return -1;
}

/* Partition counts per sub-topology. Its source topics are co-partitioned
 * (a source of several topics, or a join reaching another source's store):
 * they must agree, a mismatch is refused naming both (Kafka 2.0's
 * CopartitionedTopicsValidator). A sub-topology reading repartition topics
 * only gets the largest count of the sub-topologies writing them, their
 * own sources' (StreamsPartitionAssignor sizes repartition topics so);
 * a repartition topic read with other topics takes theirs. Then the
 * internal topics are created. */
static int prepare_topics(samsa_st_app *app, char *errstr, size_t errstr_size)
{
    const samsa_st_topology *t = app->t;
    int32_t *parts = calloc(t->sub_count + 1, sizeof *parts);
    const char **named = calloc(t->sub_count + 1, sizeof *named);
    if (parts == NULL || named == NULL) {
        free(parts);
        free(named);
        return SAMSA_ERR_NOMEM;
    }
    int err = SAMSA_OK;
    for (size_t i = 0; err == SAMSA_OK && i < t->node_count; i++) {
        const struct samsa_st_node *n = t->nodes[i];
        if (n->kind != ST_SOURCE) {
            continue;
        }
        for (size_t k = 0; err == SAMSA_OK && k < n->topic_count; k++) {
            err = add_subscribed(app, n->resolved[k]);
            if (err != SAMSA_OK || n->internal) {
                continue;
            }
            samsa_metadata *md = NULL;
            const char *topic = n->resolved[k];
            int32_t count = 0;
            err = samsa_admin_metadata(app->admin, &topic, 1, 30000, &md);
            if (err == SAMSA_OK) {
                err = partition_count(md, topic, &count);
                samsa_metadata_free(md);
            }
            if (err != SAMSA_OK) {
                (void)snprintf(errstr, errstr_size, "source topic %s: %s", topic,
                               samsa_err_str(err));
            } else if (parts[n->sub] != 0 && parts[n->sub] != count) {
                (void)snprintf(errstr, errstr_size,
                               "co-partitioned topics (read by one sub-topology: a join, or one "
                               "source of several topics) must have the same partition count: "
                               "%s has %d, %s has %d",
                               topic, (int)count, named[n->sub], (int)parts[n->sub]);
                err = SAMSA_ERR_INVALID_CONFIG;
            } else {
                parts[n->sub] = count;
                named[n->sub] = topic;
            }
        }
    }
    /* repartition-only sub-topologies from the ones feeding them, over as
     * many rounds as a chain of repartitions can be long */
    for (size_t round = 0; round < t->sub_count; round++) {
        for (size_t i = 0; i < t->node_count; i++) {
            const struct samsa_st_node *n = t->nodes[i];
            if (n->kind != ST_SOURCE || !n->internal || named[n->sub] != NULL) {
                continue;
            }
            long from = feeding_sub(t, n, 0);
            if (from >= 0 && parts[from] > parts[n->sub]) {
                parts[n->sub] = parts[from];
            }
        }
    }
    for (size_t s = 0; s < t->sub_count; s++) {
        parts[s] = parts[s] > 0 ? parts[s] : 1; /* fed by nothing: read by nothing either */
    }
    for (size_t i = 0; err == SAMSA_OK && i < t->node_count; i++) {
        const struct samsa_st_node *n = t->nodes[i];
        if (n->kind == ST_SOURCE && n->internal) {
            err = create_internal(app, n->resolved[0], parts[n->sub], NULL, 0, errstr,
                                  errstr_size);
        }
    }
    /* dead-letter topics of windows: made when missing, as wide as the
     * widest sub-topology (a late record goes by its key, as Java's
     * producer would place it) */
    int32_t widest = 1;
    for (size_t s = 0; s < t->sub_count; s++) {
        widest = parts[s] > widest ? parts[s] : widest;
    }
    for (size_t i = 0; err == SAMSA_OK && i < t->late_topic_count; i++) {
        err = create_internal(app, t->late_topics[i], widest, NULL, 0, errstr, errstr_size);
    }
    for (size_t i = 0; err == SAMSA_OK && i < t->store_count; i++) {
        const struct st_store_def *d = &t->stores[i];
        char retention[64];
        /* Kafka 2.0's WindowedChangelogTopicConfig: compact,delete, kept
         * for the store's retention plus one day
         * (windowstore.changelog.additional.retention.ms) */
        (void)snprintf(retention, sizeof retention, "retention.ms=%lld",
                       (long long)d->retention_ms + 86400000LL);
        const char *kv_config[] = {"cleanup.policy=compact"};
        const char *window_config[] = {"cleanup.policy=compact,delete", retention};
        err = d->window ? create_internal(app, d->changelog, parts[t->nodes[d->node]->sub],
                                          window_config, 2, errstr, errstr_size)
                        : create_internal(app, d->changelog, parts[t->nodes[d->node]->sub],
                                          kv_config, 1, errstr, errstr_size);
    }
    free(parts);
    free(named);
    return err;
}

static int set(samsa_conf *conf, const char *key, const char *value, char *errstr,
               size_t errstr_size)
{
    return samsa_conf_set(conf, key, value, errstr, errstr_size);
}

/* The smaller of session.timeout.ms and max.poll.interval.ms: past either,
 * the group may have given this member's partitions to another. */
static int64_t member_timeout_ms(const samsa_conf *conf)
{
    int64_t ms = INT64_MAX;
    static const char *const keys[] = {"session.timeout.ms", "max.poll.interval.ms"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char buf[32];
        size_t len = sizeof buf;
        if (samsa_conf_get(conf, keys[i], buf, &len) == SAMSA_OK) {
            long long v = strtoll(buf, NULL, 10);
            ms = v > 0 && v < ms ? v : ms;
        }
    }
    return ms == INT64_MAX ? 45000 : ms; /* libsamsa's session.timeout.ms default */
}

samsa_st_app *samsa_st_app_new(samsa_st_topology *t, const char *application_id,
                               const samsa_conf *conf, int64_t commit_interval_ms, char *errstr,
                               size_t errstr_size)
{
    if (errstr != NULL && errstr_size > 0) {
        errstr[0] = '\0';
    }
    if (t == NULL || application_id == NULL || conf == NULL) {
        return NULL;
    }
    if (st_topology_resolve(t, application_id) != SAMSA_OK) {
        (void)snprintf(errstr, errstr_size, "topology: %s", t->msg);
        return NULL;
    }
    samsa_st_app *app = calloc(1, sizeof *app);
    samsa_conf *cc = NULL;
    samsa_conf *pc = NULL;
    pthread_mutexattr_t attr;
    if (app == NULL) {
        return NULL;
    }
    if (pthread_mutexattr_init(&attr) != 0) {
        free(app);
        return NULL;
    }
    /* recursive: a commit inside the rebalance callback takes it again */
    app->lock_made = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE) == 0 &&
                     pthread_mutex_init(&app->lock, &attr) == 0;
    (void)pthread_mutexattr_destroy(&attr);
    if (!app->lock_made) {
        free(app);
        return NULL;
    }
    app->t = t;
    app->state_lock_fd = -1;
    app->commit_interval_ms = commit_interval_ms > 0 ? commit_interval_ms : 30000;
    app->application_id = st_strdup(application_id);
    app->base = samsa_conf_dup(conf);
    cc = samsa_conf_dup(conf);
    pc = samsa_conf_dup(conf);
    if (app->application_id == NULL || app->base == NULL || cc == NULL || pc == NULL) {
        goto out_fail;
    }
    /* restore consumers read changelogs by assignment and commit nothing,
     * whatever group.id the caller's configuration names */
    if (set(app->base, "enable.auto.commit", "false", errstr, errstr_size) != SAMSA_OK) {
        goto out_fail;
    }
    app->admin = samsa_admin_new(conf, errstr, errstr_size);
    if (app->admin == NULL || prepare_topics(app, errstr, errstr_size) != SAMSA_OK) {
        goto out_fail;
    }
    /* the runtime commits by itself; every partition from its start
     * (Kafka Streams' consumer defaults: auto.offset.reset earliest,
     * enable.auto.commit false) */
    if (set(cc, "group.id", application_id, errstr, errstr_size) != SAMSA_OK ||
        set(cc, "enable.auto.commit", "false", errstr, errstr_size) != SAMSA_OK ||
        set(cc, "auto.offset.reset", "earliest", errstr, errstr_size) != SAMSA_OK ||
        set(cc, "partition.assignment.strategy", "range", errstr, errstr_size) != SAMSA_OK) {
        goto out_fail;
    }
    app->stall_ms = member_timeout_ms(cc);
    app->alive_ms = mono_ms();
    samsa_conf_set_rebalance_cb(cc, on_rebalance, app);
    samsa_conf_set_delivery_cb(pc, on_delivery, app);
    app->producer = samsa_producer_new(pc, errstr, errstr_size);
    if (app->producer == NULL) {
        goto out_fail;
    }
    app->consumer = samsa_consumer_new(cc, errstr, errstr_size);
    if (app->consumer == NULL) {
        goto out_fail;
    }
    int err = samsa_consumer_subscribe(app->consumer, (const char *const *)app->subscribed,
                                       app->subscribed_count);
    if (err != SAMSA_OK) {
        (void)snprintf(errstr, errstr_size, "subscribe: %s", samsa_err_str(err));
        goto out_fail;
    }
    samsa_conf_destroy(cc);
    samsa_conf_destroy(pc);
    app->last_commit_ms = wall_ms();
    return app;
out_fail:
    samsa_conf_destroy(cc);
    samsa_conf_destroy(pc);
    samsa_st_app_destroy(app);
    return NULL;
}

static int by_env(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)(*(struct st_task *const *)a)->env;
    uintptr_t y = (uintptr_t)(*(struct st_task *const *)b)->env;
    return x < y ? -1 : x > y;
}

/* LMDB: every task's write transaction open before app->lock is taken to
 * process, so that a put never takes an LMDB writer mutex under it. The
 * writer mutexes are taken all at once, in one order (by environment),
 * with none held (a commit releases them all): a task that came with a
 * rebalance while the others hold theirs costs a commit first. */
static int prepare_all(samsa_st_app *app)
{
    bool held = false;
    bool missing = false;
    for (size_t i = 0; i < app->tasks.count; i++) {
        if (app->tasks.v[i]->env != NULL) {
            bool open = st_task_prepared(app->tasks.v[i]);
            held = held || open;
            missing = missing || !open;
        }
    }
    if (!missing) {
        return SAMSA_OK;
    }
    int err = held ? samsa_st_app_commit(app) : SAMSA_OK;
    struct st_task **order =
        err == SAMSA_OK ? malloc(app->tasks.count * sizeof(struct st_task *)) : NULL;
    if (err == SAMSA_OK && order == NULL) {
        err = SAMSA_ERR_NOMEM;
    }
    if (err == SAMSA_OK) {
        memcpy(order, app->tasks.v, app->tasks.count * sizeof(struct st_task *));
        qsort(order, app->tasks.count, sizeof(struct st_task *), by_env);
        for (size_t i = 0; err == SAMSA_OK && i < app->tasks.count; i++) {
            err = st_task_prepare(order[i]);
        }
    }
    free(order);
    return err;
}

int samsa_st_app_poll(samsa_st_app *app, int timeout_ms)
{
    if (app == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    int done = 0;
    for (int wait = timeout_ms; app->err == SAMSA_OK && done < POLL_BATCH; wait = 0) {
        /* stood still (stopped, swapped out, a caller that did not poll)
         * longer than the group waits for a member, before or inside the
         * consumer's poll: the partitions may have moved */
        int64_t before = mono_ms();
        samsa_message *m = samsa_consumer_poll(app->consumer, wait);
        int64_t after = mono_ms();
        if (before - app->alive_ms > app->stall_ms ||
            after - before > app->stall_ms + (wait > 0 ? wait : 0)) {
            app->stalled = true;
        }
        app->alive_ms = after;
        if (m == NULL) {
            break;
        }
        if (app->stalled) {
            /* nothing more is processed before the group said whether this
             * member still owns its partitions: the commit asks it, and
             * closes the tasks when it moved on (m then has no task) */
            int probe = samsa_st_app_commit(app);
            if (app->stalled) {
                (void)fprintf(stderr, "samsa-streams: commit after standing still: %s\n",
                              samsa_err_str(probe));
                /* no answer yet: m comes again at the next poll */
                int err = samsa_consumer_seek(app->consumer, m->topic, m->partition, m->offset,
                                              COMMIT_TIMEOUT_MS);
                if (err != SAMSA_OK) {
                    app->err = err;
                }
                samsa_message_free(m);
                break;
            }
        }
        long sub = st_topology_sub_of(app->t, m->topic);
        struct st_task *task =
            sub >= 0 ? st_tasks_find(&app->tasks, (size_t)sub, m->partition) : NULL;
        struct tracked *tr = tracked_find(app, m->topic, m->partition);
        const struct samsa_header *origin = header_of(m, ST_HDR_ORIGIN);
        if (task != NULL && tr != NULL &&
            (st_task_holds(task, m->topic, m->partition, m->offset) ||
             (origin != NULL && st_task_seen(task, origin->value, origin->value_len)))) {
            /* below the task's position (a seek that did not happen), or
             * sent again by a restart upstream: applied already */
            app->skipped++;
            tr->next = m->offset + 1;
            tr->dirty = true;
        } else if (task != NULL && tr != NULL) {
            struct samsa_st_record rec = {{m->key, m->key_len}, {m->value, m->value_len},
                                          m->timestamp};
            int err = prepare_all(app);
            (void)pthread_mutex_lock(&app->lock);
            st_task_begin(task, m->topic, m->partition, m->offset,
                          origin != NULL ? origin->value : NULL,
                          origin != NULL ? origin->value_len : 0);
            if (err == SAMSA_OK) {
                err = st_task_process(task, m->topic, &rec);
            }
            if (err == SAMSA_OK) {
                err = st_task_applied(task);
            }
            (void)pthread_mutex_unlock(&app->lock);
            if (err != SAMSA_OK) {
                app->err = err;
            }
            tr->next = m->offset + 1;
            tr->dirty = true;
            app->processed++;
            done++;
        }
        samsa_message_free(m);
        app->alive_ms = mono_ms();
    }
    (void)samsa_producer_poll(app->producer, 0);
    int64_t now = wall_ms();
    if (app->err == SAMSA_OK) {
        app->err = prepare_all(app);
    }
    (void)pthread_mutex_lock(&app->lock);
    for (size_t i = 0; app->err == SAMSA_OK && i < app->tasks.count; i++) {
        app->err = st_task_wall_clock(app->tasks.v[i], now);
    }
    (void)pthread_mutex_unlock(&app->lock);
    if (app->err != SAMSA_OK) {
        return app->err;
    }
    if (now - app->last_commit_ms >= app->commit_interval_ms) {
        int err = samsa_st_app_commit(app);
        /* a commit the group refused (a rebalance under way) is tried again
         * at the next interval; what it covered is processed again at worst */
        if (err != SAMSA_OK && app->err != SAMSA_OK) {
            return app->err;
        }
    }
    return done;
}

int samsa_st_app_run(samsa_st_app *app, volatile const int *stop)
{
    while (!*stop) {
        int n = samsa_st_app_poll(app, 100);
        if (n < 0) {
            return n;
        }
    }
    return samsa_st_app_commit(app);
}

int st_set_state_dir(char **field, const char *dir)
{
#ifdef SAMSA_ST_HAVE_LMDB
    char *copy = dir != NULL ? st_strdup(dir) : NULL;
    if (dir != NULL && copy == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    free(*field);
    *field = copy;
    return SAMSA_OK;
#else
    (void)field;
    (void)dir;
    return SAMSA_ERR_NOT_IMPLEMENTED;
#endif
}

int samsa_st_app_set_state_dir(samsa_st_app *app, const char *dir)
{
    if (app == NULL || app->tasks.count > 0) {
        return app == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_STATE;
    }
    int fd = -1;
    int err = st_set_state_dir(&app->state_dir, dir);
    if (err == SAMSA_OK && dir != NULL) {
        err = st_state_lock(dir, app->application_id, &fd, app->why, sizeof app->why);
    }
    if (err != SAMSA_OK) { /* in memory, as before the call */
        free(app->state_dir);
        app->state_dir = NULL;
    }
    st_state_unlock(app->state_lock_fd);
    app->state_lock_fd = fd;
    return err;
}

const char *samsa_st_app_last_error(const samsa_st_app *app)
{
    return app != NULL ? app->why : "";
}

uint64_t samsa_st_app_processed(const samsa_st_app *app)
{
    return app->processed;
}

uint64_t samsa_st_app_dropped_late(const samsa_st_app *app)
{
    uint64_t n = app->dropped_late_closed;
    for (size_t i = 0; i < app->tasks.count; i++) {
        n += app->tasks.v[i]->dropped_late;
    }
    return n;
}

uint64_t samsa_st_app_restored(const samsa_st_app *app)
{
    return app->restored;
}

static int query(samsa_st_app *app, const char *store, struct samsa_st_bytes key, bool window,
                 int64_t window_start, void **value, size_t *len)
{
    if (app == NULL || store == NULL || value == NULL || len == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    *value = NULL;
    *len = 0;
    size_t def = SIZE_MAX;
    for (size_t i = 0; i < app->t->store_count; i++) {
        if (strcmp(app->t->stores[i].name, store) == 0) {
            def = i;
        }
    }
    if (def == SIZE_MAX || app->t->stores[def].window != window) {
        return SAMSA_ERR_INVALID_ARG;
    }
    int rc = 0;
    (void)pthread_mutex_lock(&app->lock);
    for (size_t i = 0; rc == 0 && i < app->tasks.count; i++) {
        samsa_st_store *s = app->tasks.v[i]->stores[def];
        struct samsa_st_bytes v;
        if (s == NULL || !(window ? samsa_st_window_get(s, key, window_start, &v)
                                  : samsa_st_kv_get(s, key, &v))) {
            continue;
        }
        *value = malloc(v.len > 0 ? v.len : 1);
        if (*value == NULL) {
            rc = SAMSA_ERR_NOMEM;
        } else {
            if (v.len > 0) {
                memcpy(*value, v.data, v.len);
            }
            *len = v.len;
            rc = 1;
        }
    }
    (void)pthread_mutex_unlock(&app->lock);
    return rc;
}

int samsa_st_app_query(samsa_st_app *app, const char *store, struct samsa_st_bytes key,
                       void **value, size_t *len)
{
    return query(app, store, key, false, 0, value, len);
}

int samsa_st_app_query_window(samsa_st_app *app, const char *store, struct samsa_st_bytes key,
                              int64_t window_start, void **value, size_t *len)
{
    return query(app, store, key, true, window_start, value, len);
}

uint64_t samsa_st_app_skipped(const samsa_st_app *app)
{
    return app->skipped;
}

void samsa_st_app_destroy(samsa_st_app *app)
{
    if (app == NULL) {
        return;
    }
    if (app->consumer != NULL) {
        if (app->err == SAMSA_OK) {
            int err = samsa_st_app_commit(app);
            if (err != SAMSA_OK) {
                (void)fprintf(stderr, "samsa-streams: commit at close: %s\n",
                              samsa_err_str(err));
            }
        }
        /* closed first, which revokes: on_rebalance closes the tasks */
        samsa_consumer_destroy(app->consumer);
    }
    if (app->producer != NULL) {
        (void)samsa_producer_close(app->producer, FLUSH_TIMEOUT_MS);
        samsa_producer_destroy(app->producer);
    }
    samsa_admin_destroy(app->admin);
    if (app->lock_made) {
        (void)pthread_mutex_lock(&app->lock);
    }
    st_tasks_clear(&app->tasks);
    if (app->lock_made) {
        (void)pthread_mutex_unlock(&app->lock);
        (void)pthread_mutex_destroy(&app->lock);
    }
    for (size_t i = 0; i < app->tracked_count; i++) {
        free(app->tracked[i].topic);
    }
    free(app->tracked);
    for (size_t i = 0; i < app->subscribed_count; i++) {
        free(app->subscribed[i]);
    }
    free(app->subscribed);
    for (size_t i = 0; i < app->slot_count; i++) {
        free(app->slots[i]->topic);
        free(app->slots[i]);
    }
    free(app->slots);
    samsa_conf_destroy(app->base);
    st_state_unlock(app->state_lock_fd); /* the tasks' LMDB files are closed */
    free(app->state_dir);
    free(app->application_id);
    free(app);
}
