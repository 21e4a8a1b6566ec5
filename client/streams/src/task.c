/*
 * A task: one sub-topology running for one partition (Kafka 2.0's
 * StreamTask, task id = sub-topology x partition as TaskId.java has it),
 * with its processors' states, its stores, its stream time and its
 * punctuations. The runtime and the test driver both run records through
 * st_task_process.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct st_task *st_task_new(const samsa_st_topology *t, const char *application_id, size_t sub,
                            int32_t partition, struct st_output out, const char *state_dir)
{
#ifdef SAMSA_ST_HAVE_LMDB
    struct st_lmdb_env *env = NULL;
#endif
    struct st_task *task = calloc(1, sizeof *task);
    if (task == NULL) {
        return NULL;
    }
    task->t = t;
    task->application_id = application_id;
    task->sub = sub;
    task->partition = partition;
    task->out = out;
    task->stream_time = -1;
    task->ctx.task = task;
    task->states = calloc(t->node_count + 1, sizeof *task->states);
    task->stores = calloc(t->store_count + 1, sizeof(samsa_st_store *));
    if (task->states == NULL || task->stores == NULL) {
        goto out_free;
    }
    for (size_t i = 0; i < t->node_count; i++) {
        const struct samsa_st_node *n = t->nodes[i];
        if (n->sub != sub || n->kind != ST_PROCESSOR) {
            continue;
        }
        if (n->proc->create != NULL) {
            task->states[i] = n->proc->create(n->opaque);
            if (task->states[i] == NULL) {
                goto out_free;
            }
        } else {
            task->states[i] = n->opaque;
        }
    }
    for (size_t i = 0; i < t->store_count; i++) {
        if (t->nodes[t->stores[i].node]->sub != sub) {
            continue;
        }
        samsa_st_store *s = calloc(1, sizeof *s);
        if (s == NULL) {
            goto out_free;
        }
        task->stores[i] = s;
        s->def = &t->stores[i];
        s->task = task;
        s->swept_at = INT64_MIN / 2;
        s->ops = &st_memory_backend;
        if (state_dir == NULL) {
            s->impl = st_memory_new();
        } else {
#ifdef SAMSA_ST_HAVE_LMDB
            if (env == NULL) {
                env = st_lmdb_env_open(state_dir, application_id, sub, partition, t->store_count);
            }
            s->ops = &st_lmdb_backend;
            s->impl = env != NULL ? st_lmdb_new(env, s->def->name) : NULL;
#endif
        }
        if (s->impl == NULL) {
            goto out_free;
        }
    }
#ifdef SAMSA_ST_HAVE_LMDB
    task->env = env; /* the opener's reference, dropped in st_task_destroy */
    env = NULL;
    /* the positions of the state on disk: what the restore of the
     * changelog's tail starts from (app.c) */
    if (task->env != NULL && (st_lmdb_positions_load(task->env, &task->saved) != SAMSA_OK ||
                              st_lmdb_positions_load(task->env, &task->pos) != SAMSA_OK)) {
        goto out_free;
    }
#endif
    return task;
out_free:
#ifdef SAMSA_ST_HAVE_LMDB
    st_lmdb_env_unref(env);
#endif
    st_task_destroy(task);
    return NULL;
}

int st_task_init(struct st_task *task, int64_t wall_ms)
{
    task->wall_time = wall_ms;
    const samsa_st_topology *t = task->t;
    for (size_t i = 0; i < t->node_count; i++) {
        const struct samsa_st_node *n = t->nodes[i];
        if (n->sub != task->sub || n->kind != ST_PROCESSOR || n->proc->init == NULL) {
            continue;
        }
        task->ctx.node = i;
        int err = n->proc->init(&task->ctx, task->states[i]);
        if (err != SAMSA_OK) {
            return err;
        }
    }
    return SAMSA_OK;
}

void st_task_destroy(struct st_task *task)
{
    if (task == NULL) {
        return;
    }
    const samsa_st_topology *t = task->t;
    for (size_t i = 0; task->states != NULL && i < t->node_count; i++) {
        const struct samsa_st_node *n = t->nodes[i];
        if (n->sub == task->sub && n->kind == ST_PROCESSOR && n->proc->create != NULL &&
            n->proc->destroy != NULL && task->states[i] != NULL) {
            n->proc->destroy(task->states[i]);
        }
    }
    for (size_t i = 0; task->stores != NULL && i < t->store_count; i++) {
        samsa_st_store *s = task->stores[i];
        if (s != NULL) {
            if (s->impl != NULL) {
                s->ops->destroy(s->impl);
            }
            free(s);
        }
    }
#ifdef SAMSA_ST_HAVE_LMDB
    st_lmdb_env_unref(task->env);
#endif
    st_pos_clear(&task->pos);
    st_pos_clear(&task->saved);
    free(task->states);
    free(task->stores);
    free(task->puncs);
    free(task);
}

struct st_task *st_tasks_find(const struct st_tasks *ts, size_t sub, int32_t partition)
{
    for (size_t i = 0; i < ts->count; i++) {
        if (ts->v[i]->sub == sub && ts->v[i]->partition == partition) {
            return ts->v[i];
        }
    }
    return NULL;
}

int st_tasks_add(struct st_tasks *ts, struct st_task *task)
{
    struct st_task **v = realloc(ts->v, (ts->count + 1) * sizeof(struct st_task *));
    if (v == NULL) {
        st_task_destroy(task);
        return SAMSA_ERR_NOMEM;
    }
    ts->v = v;
    v[ts->count++] = task;
    return SAMSA_OK;
}

uint64_t st_tasks_close(struct st_tasks *ts, size_t sub, int32_t partition)
{
    for (size_t i = 0; i < ts->count; i++) {
        struct st_task *task = ts->v[i];
        if (task->sub == sub && task->partition == partition) {
            uint64_t dropped = task->dropped_late;
            st_task_destroy(task);
            ts->v[i] = ts->v[--ts->count];
            return dropped;
        }
    }
    return 0;
}

void st_tasks_clear(struct st_tasks *ts)
{
    for (size_t i = 0; i < ts->count; i++) {
        st_task_destroy(ts->v[i]);
    }
    free(ts->v);
    ts->v = NULL;
    ts->count = 0;
}

static int run_node(struct st_task *task, size_t index, const struct samsa_st_record *rec)
{
    const struct samsa_st_node *n = task->t->nodes[index];
    if (n->kind == ST_SINK) {
        if (!n->internal || task->cur_topic == NULL) {
            return task->out.send(task->out.opaque, n->sink_resolved, -1, rec->key, rec->value,
                                  rec->timestamp, NULL, 0, NULL);
        }
        /* through a repartition topic: the record that made it, numbered,
         * so that the reader skips what a restart of this task sends again */
        uint8_t origin[16 + 256];
        struct samsa_header h = {ST_HDR_ORIGIN, origin, 0};
        if (strlen(task->cur_topic) >= 256) {
            return SAMSA_ERR_INVALID_ARG;
        }
        h.value_len = st_hdr_origin_encode(origin, task->cur_topic, task->cur_partition,
                                           task->cur_offset, task->seq++);
        return task->out.send(task->out.opaque, n->sink_resolved, -1, rec->key, rec->value,
                              rec->timestamp, &h, 1, NULL);
    }
    if (n->kind == ST_SOURCE) {
        return st_task_forward(task, index, SIZE_MAX, rec);
    }
    size_t saved = task->ctx.node;
    task->ctx.node = index;
    int err = n->proc->process(&task->ctx, rec, task->states[index]);
    task->ctx.node = saved;
    return err;
}

int st_task_forward(struct st_task *task, size_t node, size_t child,
                    const struct samsa_st_record *rec)
{
    const struct samsa_st_node *n = task->t->nodes[node];
    if (child != SIZE_MAX) {
        if (child >= n->child_count) {
            return SAMSA_ERR_INVALID_ARG;
        }
        return run_node(task, n->children[child], rec);
    }
    for (size_t i = 0; i < n->child_count; i++) {
        int err = run_node(task, n->children[i], rec);
        if (err != SAMSA_OK) {
            return err;
        }
    }
    return SAMSA_OK;
}

/* Runs the punctuations of one type due at now (Kafka 2.0's
 * PunctuationQueue.mayPunctuate: at most once per check, the next one
 * interval after the last due time, missed intervals skipped). */
static int punctuate(struct st_task *task, enum samsa_st_punctuation type, int64_t now)
{
    for (size_t i = 0; i < task->punc_count; i++) {
        struct st_punctuation *p = &task->puncs[i];
        if (p->type != type || now < 0) {
            continue;
        }
        if (p->next == INT64_MIN) {
            /* the first: the first multiple of interval at or after now */
            p->next = (now + p->interval - 1) / p->interval * p->interval;
        }
        if (now < p->next) {
            continue;
        }
        p->next += ((now - p->next) / p->interval + 1) * p->interval;
        size_t saved = task->ctx.node;
        task->ctx.node = p->node;
        p->cb(&task->ctx, now, task->states[p->node]);
        task->ctx.node = saved;
    }
    return SAMSA_OK;
}

int st_task_process(struct st_task *task, const char *topic, const struct samsa_st_record *rec)
{
    const samsa_st_topology *t = task->t;
    if (rec->timestamp > task->stream_time) {
        task->stream_time = rec->timestamp;
    }
    for (size_t i = 0; i < t->node_count; i++) {
        const struct samsa_st_node *n = t->nodes[i];
        if (n->kind != ST_SOURCE || n->sub != task->sub) {
            continue;
        }
        for (size_t k = 0; k < n->topic_count; k++) {
            if (strcmp(n->resolved[k], topic) == 0) {
                int err = run_node(task, i, rec);
                if (err != SAMSA_OK) {
                    return err;
                }
            }
        }
    }
    return punctuate(task, SAMSA_ST_STREAM_TIME, task->stream_time);
}

int st_task_wall_clock(struct st_task *task, int64_t now_ms)
{
    task->wall_time = now_ms;
    return punctuate(task, SAMSA_ST_WALL_CLOCK, now_ms);
}

/* ---- the context of a processor */

int samsa_st_forward(samsa_st_context *ctx, const struct samsa_st_record *rec)
{
    return st_task_forward(ctx->task, ctx->node, SIZE_MAX, rec);
}

int samsa_st_forward_to(samsa_st_context *ctx, size_t child, const struct samsa_st_record *rec)
{
    return st_task_forward(ctx->task, ctx->node, child, rec);
}

samsa_st_store *samsa_st_context_store(samsa_st_context *ctx, const char *name)
{
    const samsa_st_topology *t = ctx->task->t;
    for (size_t i = 0; i < t->store_count; i++) {
        if (strcmp(t->stores[i].name, name) == 0) {
            return ctx->task->stores[i];
        }
    }
    return NULL;
}

int samsa_st_schedule(samsa_st_context *ctx, int64_t interval_ms, enum samsa_st_punctuation type,
                      samsa_st_punctuator *cb)
{
    struct st_task *task = ctx->task;
    if (interval_ms <= 0 || cb == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct st_punctuation *p = realloc(task->puncs, (task->punc_count + 1) * sizeof *p);
    if (p == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    task->puncs = p;
    p[task->punc_count++] = (struct st_punctuation){
        .node = ctx->node, .interval = interval_ms, .type = type, .cb = cb, .next = INT64_MIN};
    return SAMSA_OK;
}

int64_t samsa_st_context_stream_time(const samsa_st_context *ctx)
{
    return ctx->task->stream_time;
}

int32_t samsa_st_context_partition(const samsa_st_context *ctx)
{
    return ctx->task->partition;
}

const char *samsa_st_context_application_id(const samsa_st_context *ctx)
{
    return ctx->task->application_id;
}
