/*
 * The test driver: a topology run with no broker, as Kafka's
 * TopologyTestDriver (2.0's streams/test-utils) runs one. Every task lives
 * in this process; what sinks and changelogs write is kept per topic for
 * samsa_st_driver_read; records written to a repartition topic are fed to
 * the task reading it once the record that caused them is done.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct kept {
    struct kept *next;
    char *topic;
    int32_t partition;
    struct samsa_st_record rec;
    uint8_t *key;
    uint8_t *value;
};

struct samsa_st_driver {
    samsa_st_topology *t;
    char *application_id;
    int64_t wall;
    struct st_tasks tasks;
    struct kept *out_head, *out_tail;         /* outputs, oldest first */
    struct kept *pending_head, *pending_tail; /* repartition records to feed */
    struct kept *last_read;
    char *state_dir;       /* NULL: stores in memory */
};

static void kept_free(struct kept *k)
{
    if (k != NULL) {
        free(k->topic);
        free(k->key);
        free(k->value);
        free(k);
    }
}

/* A copy of b into *buf, *view pointing at it (b null: both stay NULL). */
static bool copy_view(struct samsa_st_bytes b, uint8_t **buf, struct samsa_st_bytes *view)
{
    if (b.data == NULL) {
        return true;
    }
    *buf = malloc(b.len + 1);
    if (*buf == NULL) {
        return false;
    }
    memcpy(*buf, b.data, b.len);
    view->data = *buf;
    view->len = b.len;
    return true;
}

static struct kept *kept_new(const char *topic, int32_t partition, struct samsa_st_bytes key,
                             struct samsa_st_bytes value, int64_t ts)
{
    struct kept *k = calloc(1, sizeof *k);
    if (k == NULL) {
        return NULL;
    }
    k->topic = st_strdup(topic);
    k->partition = partition;
    k->rec.timestamp = ts;
    if (k->topic == NULL || !copy_view(key, &k->key, &k->rec.key) ||
        !copy_view(value, &k->value, &k->rec.value)) {
        kept_free(k);
        return NULL;
    }
    return k;
}

static void append(struct kept **head, struct kept **tail, struct kept *k)
{
    if (*tail != NULL) {
        (*tail)->next = k;
    } else {
        *head = k;
    }
    *tail = k;
}

static int driver_send(void *opaque, const char *topic, int32_t partition,
                       struct samsa_st_bytes key, struct samsa_st_bytes value, int64_t timestamp,
                       const struct samsa_header *headers, size_t header_count,
                       samsa_st_store *from)
{
    (void)headers;
    (void)header_count;
    (void)from;
    samsa_st_driver *d = opaque;
    struct kept *k = kept_new(topic, partition < 0 ? 0 : partition, key, value, timestamp);
    if (k == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    bool repartition = false;
    for (size_t i = 0; i < d->t->node_count; i++) {
        const struct samsa_st_node *n = d->t->nodes[i];
        if (n->kind == ST_SINK && n->internal && strcmp(n->sink_resolved, topic) == 0) {
            repartition = true;
        }
    }
    if (repartition) {
        append(&d->pending_head, &d->pending_tail, k);
    } else {
        append(&d->out_head, &d->out_tail, k);
    }
    return SAMSA_OK;
}

samsa_st_driver *samsa_st_driver_new(samsa_st_topology *t, const char *application_id,
                                     int64_t wall_ms)
{
    if (t == NULL || application_id == NULL || st_topology_resolve(t, application_id) != SAMSA_OK) {
        return NULL;
    }
    samsa_st_driver *d = calloc(1, sizeof *d);
    if (d == NULL) {
        return NULL;
    }
    d->t = t;
    d->wall = wall_ms;
    d->application_id = st_strdup(application_id);
    if (d->application_id == NULL) {
        free(d);
        return NULL;
    }
    return d;
}

int samsa_st_driver_set_state_dir(samsa_st_driver *d, const char *dir)
{
    if (d == NULL || d->tasks.count > 0) {
        return d == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_STATE;
    }
    return st_set_state_dir(&d->state_dir, dir);
}

void samsa_st_driver_destroy(samsa_st_driver *d)
{
    if (d == NULL) {
        return;
    }
    st_tasks_clear(&d->tasks);
    for (struct kept *k = d->out_head; k != NULL;) {
        struct kept *next = k->next;
        kept_free(k);
        k = next;
    }
    for (struct kept *k = d->pending_head; k != NULL;) {
        struct kept *next = k->next;
        kept_free(k);
        k = next;
    }
    kept_free(d->last_read);
    free(d->state_dir);
    free(d->application_id);
    free(d);
}

static struct st_task *task_for(samsa_st_driver *d, size_t sub, int32_t partition, int *err)
{
    struct st_task *task = st_tasks_find(&d->tasks, sub, partition);
    if (task != NULL) {
        return task;
    }
    struct st_output out = {driver_send, d};
    task = st_task_new(d->t, d->application_id, sub, partition, out, d->state_dir);
    *err = task != NULL ? st_tasks_add(&d->tasks, task) : SAMSA_ERR_NOMEM;
    if (*err == SAMSA_OK) {
        *err = st_task_init(task, d->wall);
    }
    return *err == SAMSA_OK ? task : NULL;
}

/* Every record piped is committed to LMDB stores at once, as if each were
 * a commit of the runtime. */
static int checkpoint(samsa_st_driver *d)
{
    for (size_t i = 0; i < d->tasks.count; i++) {
        int err = st_task_checkpoint(d->tasks.v[i]);
        if (err != SAMSA_OK) {
            return err;
        }
    }
    return SAMSA_OK;
}

static int feed(samsa_st_driver *d, const char *topic, int32_t partition,
                const struct samsa_st_record *rec)
{
    long sub = st_topology_sub_of(d->t, topic);
    if (sub < 0) {
        return SAMSA_ERR_UNKNOWN_TOPIC;
    }
    int err = SAMSA_OK;
    struct st_task *task = task_for(d, (size_t)sub, partition, &err);
    if (task == NULL) {
        return err;
    }
    return st_task_process(task, topic, rec);
}

int samsa_st_driver_pipe_partition(samsa_st_driver *d, const char *topic, int32_t partition,
                                   struct samsa_st_bytes key, struct samsa_st_bytes value,
                                   int64_t timestamp)
{
    if (d == NULL || topic == NULL || partition < 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct samsa_st_record rec = {key, value, timestamp};
    int err = feed(d, topic, partition, &rec);
    /* repartition records, each fed once the one before it is done (records
     * it causes in turn join the queue's end) */
    while (d->pending_head != NULL) {
        struct kept *k = d->pending_head;
        d->pending_head = k->next;
        if (d->pending_head == NULL) {
            d->pending_tail = NULL;
        }
        if (err == SAMSA_OK) {
            err = feed(d, k->topic, 0, &k->rec);
        }
        kept_free(k);
    }
    return err == SAMSA_OK ? checkpoint(d) : err;
}

int samsa_st_driver_pipe(samsa_st_driver *d, const char *topic, struct samsa_st_bytes key,
                         struct samsa_st_bytes value, int64_t timestamp)
{
    return samsa_st_driver_pipe_partition(d, topic, 0, key, value, timestamp);
}

int samsa_st_driver_advance_wall(samsa_st_driver *d, int64_t ms)
{
    if (d == NULL || ms < 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    d->wall += ms;
    for (size_t i = 0; i < d->tasks.count; i++) {
        int err = st_task_wall_clock(d->tasks.v[i], d->wall);
        if (err != SAMSA_OK) {
            return err;
        }
    }
    return checkpoint(d);
}

bool samsa_st_driver_read(samsa_st_driver *d, const char *topic, struct samsa_st_record *out)
{
    kept_free(d->last_read);
    d->last_read = NULL;
    struct kept *prev = NULL;
    for (struct kept *k = d->out_head; k != NULL; prev = k, k = k->next) {
        if (strcmp(k->topic, topic) != 0) {
            continue;
        }
        if (prev != NULL) {
            prev->next = k->next;
        } else {
            d->out_head = k->next;
        }
        if (d->out_tail == k) {
            d->out_tail = prev;
        }
        d->last_read = k;
        *out = k->rec;
        return true;
    }
    return false;
}

samsa_st_store *samsa_st_driver_store(samsa_st_driver *d, const char *name)
{
    for (size_t s = 0; s < d->t->store_count; s++) {
        if (strcmp(d->t->stores[s].name, name) != 0) {
            continue;
        }
        for (size_t i = 0; i < d->tasks.count; i++) {
            if (d->tasks.v[i]->partition == 0 && d->tasks.v[i]->stores[s] != NULL) {
                return d->tasks.v[i]->stores[s];
            }
        }
    }
    return NULL;
}

uint64_t samsa_st_driver_dropped_late(const samsa_st_driver *d)
{
    uint64_t n = 0;
    for (size_t i = 0; i < d->tasks.count; i++) {
        n += d->tasks.v[i]->dropped_late;
    }
    return n;
}
