/*
 * Input positions: what a task's state already holds, so that nothing is
 * applied twice after a crash (issue 31's "after kill -9, no update counted
 * twice"; Kafka Streams 2.0 at least once applies again what was processed
 * since the last commit).
 *
 * A task records, per input partition, the next offset to read, and per
 * origin (the upstream task's input partition whose record was sent through
 * a repartition topic) the largest (offset, sequence) applied. Every
 * changelog record carries the input record that made it (header
 * samsa.pos) and that record's origin (samsa.origin); every repartition
 * record carries its origin. A restarted upstream task sends again what it
 * processed since its last commit, with the same origins in the same order
 * per partition: the downstream task skips them (st_task_seen).
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_be32(uint8_t *out, uint32_t v)
{
    out[0] = (uint8_t)(v >> 24);
    out[1] = (uint8_t)(v >> 16);
    out[2] = (uint8_t)(v >> 8);
    out[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *in)
{
    return (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 | (uint32_t)in[2] << 8 | in[3];
}

size_t st_hdr_pos_encode(uint8_t *out, const char *topic, int32_t partition, int64_t offset)
{
    size_t n = strlen(topic);
    st_put_be64(out, (uint64_t)offset);
    put_be32(out + 8, (uint32_t)partition);
    /* the header value's length ends the topic */
    memcpy(out + 12, topic, n); /* NOLINT(bugprone-not-null-terminated-result) */
    return 12 + n;
}

size_t st_hdr_origin_encode(uint8_t *out, const char *topic, int32_t partition, int64_t offset,
                            uint32_t seq)
{
    size_t n = strlen(topic);
    st_put_be64(out, (uint64_t)offset);
    put_be32(out + 8, seq);
    put_be32(out + 12, (uint32_t)partition);
    /* the header value's length ends the topic */
    memcpy(out + 16, topic, n); /* NOLINT(bugprone-not-null-terminated-result) */
    return 16 + n;
}

/* A topic name is 1 to 249 bytes (Kafka's Topic.validate): anything else
 * is a malformed header. */
static bool topic_id(struct st_pos_id *id, char kind, const uint8_t *p, size_t n,
                     int32_t partition)
{
    if (n == 0 || n > 249) {
        return false;
    }
    *id = (struct st_pos_id){kind, partition, (const char *)p, n};
    return true;
}

bool st_hdr_pos_decode(const void *v, size_t len, struct st_pos_id *id, int64_t *offset)
{
    const uint8_t *p = v;
    if (p == NULL || len <= 12) {
        return false;
    }
    *offset = (int64_t)st_get_be64(p);
    return topic_id(id, 'i', p + 12, len - 12, (int32_t)get_be32(p + 8));
}

bool st_hdr_origin_decode(const void *v, size_t len, struct st_pos_id *id, int64_t *offset,
                          int64_t *seq)
{
    const uint8_t *p = v;
    if (p == NULL || len <= 16) {
        return false;
    }
    *offset = (int64_t)st_get_be64(p);
    *seq = get_be32(p + 8);
    return topic_id(id, 'o', p + 16, len - 16, (int32_t)get_be32(p + 12));
}

bool st_task_seen(const struct st_task *task, const void *origin, size_t origin_len)
{
    struct st_pos_id id;
    int64_t offset = 0;
    int64_t seq = 0;
    if (!st_hdr_origin_decode(origin, origin_len, &id, &offset, &seq)) {
        return false;
    }
    const struct st_pos *e = st_pos_find(&task->pos, &id);
    return e != NULL && (offset < e->a || (offset == e->a && seq <= e->b));
}

bool st_task_holds(const struct st_task *task, const char *topic, int32_t partition,
                   int64_t offset)
{
    struct st_pos_id id = {'i', partition, topic, strlen(topic)};
    const struct st_pos *e = st_pos_find(&task->pos, &id);
    return e != NULL && offset < e->a;
}

void st_task_begin(struct st_task *task, const char *topic, int32_t partition, int64_t offset,
                   const void *origin, size_t origin_len)
{
    task->cur_topic = topic;
    task->cur_partition = partition;
    task->cur_offset = offset;
    task->cur_origin = origin;
    task->cur_origin_len = origin_len;
    task->seq = 0;
}

int st_task_applied(struct st_task *task)
{
    if (task->cur_topic == NULL) {
        return SAMSA_OK;
    }
    struct st_pos_id id = {'i', task->cur_partition, task->cur_topic, strlen(task->cur_topic)};
    int err = st_pos_raise(&task->pos, &id, task->cur_offset + 1, 0);
    int64_t offset = 0;
    int64_t seq = 0;
    if (err == SAMSA_OK && task->cur_origin != NULL &&
        st_hdr_origin_decode(task->cur_origin, task->cur_origin_len, &id, &offset, &seq)) {
        err = st_pos_raise(&task->pos, &id, offset, seq);
    }
    task->cur_topic = NULL;
    task->cur_origin = NULL;
    return err;
}

bool st_task_prepared(const struct st_task *task)
{
#ifdef SAMSA_ST_HAVE_LMDB
    return task->env == NULL || st_lmdb_open_txn(task->env);
#else
    (void)task;
    return true;
#endif
}

int st_task_prepare(struct st_task *task)
{
#ifdef SAMSA_ST_HAVE_LMDB
    if (task->env != NULL) {
        return st_lmdb_begin(task->env);
    }
#endif
    (void)task;
    return SAMSA_OK;
}

int st_task_checkpoint(struct st_task *task)
{
#ifdef SAMSA_ST_HAVE_LMDB
    if (task->env != NULL) {
        return st_lmdb_commit(task->env, &task->pos);
    }
#endif
    (void)task;
    return SAMSA_OK;
}
