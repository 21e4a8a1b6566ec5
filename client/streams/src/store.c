/*
 * State stores: the public get/put calls, the changelog write of each put,
 * window expiry, and the in-memory backend (a chained hash table). A store
 * reaches its engine only through struct st_backend, so that a persistent
 * engine (LMDB) is another backend behind the same calls.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a: keys come from the application, not from an adversary here. */
uint32_t st_hash(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

struct entry {
    struct entry *next;
    uint32_t hash;
    size_t key_len;
    size_t value_len;
    uint8_t *value;
    uint8_t key[];
};

struct memory {
    struct entry **buckets;
    size_t bucket_count;
    size_t count;
};

void *st_memory_new(void)
{
    struct memory *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return NULL;
    }
    m->bucket_count = 64;
    m->buckets = calloc(m->bucket_count, sizeof(struct entry *));
    if (m->buckets == NULL) {
        free(m);
        return NULL;
    }
    return m;
}

static struct entry **find(struct memory *m, struct samsa_st_bytes key, uint32_t h)
{
    struct entry **e = &m->buckets[h & (m->bucket_count - 1)];
    while (*e != NULL &&
           ((*e)->hash != h || (*e)->key_len != key.len ||
            (key.len > 0 && memcmp((*e)->key, key.data, key.len) != 0))) {
        e = &(*e)->next;
    }
    return e;
}

static bool memory_get(void *impl, struct samsa_st_bytes key, struct samsa_st_bytes *value)
{
    struct memory *m = impl;
    struct entry *e = *find(m, key, st_hash(key.data, key.len));
    if (e == NULL) {
        value->data = NULL;
        value->len = 0;
        return false;
    }
    value->data = e->value;
    value->len = e->value_len;
    return true;
}

static void grow(struct memory *m)
{
    size_t n = m->bucket_count * 2;
    struct entry **b = calloc(n, sizeof(struct entry *));
    if (b == NULL) {
        return; /* longer chains, still correct */
    }
    for (size_t i = 0; i < m->bucket_count; i++) {
        struct entry *e = m->buckets[i];
        while (e != NULL) {
            struct entry *next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->bucket_count = n;
}

static int memory_put(void *impl, struct samsa_st_bytes key, struct samsa_st_bytes value)
{
    struct memory *m = impl;
    uint32_t h = st_hash(key.data, key.len);
    struct entry **slot = find(m, key, h);
    struct entry *e = *slot;
    if (value.data == NULL) {
        if (e != NULL) {
            *slot = e->next;
            free(e->value);
            free(e);
            m->count--;
        }
        return SAMSA_OK;
    }
    uint8_t *v = malloc(value.len > 0 ? value.len : 1);
    if (v == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    if (value.len > 0) {
        memcpy(v, value.data, value.len);
    }
    if (e != NULL) {
        free(e->value);
        e->value = v;
        e->value_len = value.len;
        return SAMSA_OK;
    }
    e = malloc(sizeof *e + key.len);
    if (e == NULL) {
        free(v);
        return SAMSA_ERR_NOMEM;
    }
    e->hash = h;
    e->key_len = key.len;
    if (key.len > 0) {
        memcpy(e->key, key.data, key.len);
    }
    e->value = v;
    e->value_len = value.len;
    e->next = *slot;
    *slot = e;
    if (++m->count > m->bucket_count / 4 * 3) {
        grow(m);
    }
    return SAMSA_OK;
}

static void memory_each(void *impl,
                        bool (*fn)(struct samsa_st_bytes key, struct samsa_st_bytes value,
                                   void *opaque),
                        void *opaque)
{
    struct memory *m = impl;
    for (size_t i = 0; i < m->bucket_count; i++) {
        for (struct entry *e = m->buckets[i]; e != NULL; e = e->next) {
            struct samsa_st_bytes k = {e->key, e->key_len};
            struct samsa_st_bytes v = {e->value, e->value_len};
            if (!fn(k, v, opaque)) {
                return;
            }
        }
    }
}

static size_t memory_count(void *impl)
{
    return ((struct memory *)impl)->count;
}

static void memory_destroy(void *impl)
{
    struct memory *m = impl;
    if (m == NULL) {
        return;
    }
    for (size_t i = 0; i < m->bucket_count; i++) {
        struct entry *e = m->buckets[i];
        while (e != NULL) {
            struct entry *next = e->next;
            free(e->value);
            free(e);
            e = next;
        }
    }
    free(m->buckets);
    free(m);
}

const struct st_backend st_memory_backend = {memory_get, memory_put, memory_each, memory_count,
                                             memory_destroy};

/* ---- the public calls */

static int logged_put(samsa_st_store *s, struct samsa_st_bytes key, struct samsa_st_bytes value)
{
    int err = s->ops->put(s->impl, key, value);
    if (err != SAMSA_OK) {
        return err;
    }
    struct st_task *task = s->task;
    int64_t ts = task->stream_time < 0 ? 0 : task->stream_time;
    if (task->cur_topic == NULL || strlen(task->cur_topic) >= 256) {
        return task->out.send(task->out.opaque, s->def->changelog, task->partition, key, value,
                              ts, NULL, 0, s);
    }
    /* the input record that made this update, and its origin: a restore
     * learns from them what the state holds (position.c) */
    uint8_t pos[12 + 256];
    struct samsa_header h[2] = {
        {ST_HDR_POS, pos, st_hdr_pos_encode(pos, task->cur_topic, task->cur_partition,
                                            task->cur_offset)},
        {ST_HDR_ORIGIN, task->cur_origin, task->cur_origin_len},
    };
    return task->out.send(task->out.opaque, s->def->changelog, task->partition, key, value, ts,
                          h, task->cur_origin != NULL ? 2 : 1, s);
}

int st_store_restore(samsa_st_store *s, struct samsa_st_bytes key, struct samsa_st_bytes value)
{
    return s->ops->put(s->impl, key, value);
}

bool samsa_st_kv_get(samsa_st_store *s, struct samsa_st_bytes key, struct samsa_st_bytes *value)
{
    return s->ops->get(s->impl, key, value);
}

int samsa_st_kv_put(samsa_st_store *s, struct samsa_st_bytes key, struct samsa_st_bytes value)
{
    if (s == NULL || s->def->window) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return logged_put(s, key, value);
}

void samsa_st_kv_each(samsa_st_store *s,
                      bool (*fn)(struct samsa_st_bytes key, struct samsa_st_bytes value,
                                 void *opaque),
                      void *opaque)
{
    s->ops->each(s->impl, fn, opaque);
}

size_t samsa_st_kv_count(samsa_st_store *s)
{
    return s->ops->count(s->impl);
}

/* A window store's key: the record key, then the window start big-endian
 * (the layout of Kafka 2.0's WindowKeySchema.toStoreKeyBinary, without its
 * sequence number: a window holds one aggregate here). */
static uint8_t *window_key(struct samsa_st_bytes key, int64_t start, struct samsa_st_bytes *out)
{
    uint8_t *k = malloc(key.len + 8);
    if (k == NULL) {
        return NULL;
    }
    if (key.len > 0) {
        memcpy(k, key.data, key.len);
    }
    st_put_be64(k + key.len, (uint64_t)start);
    out->data = k;
    out->len = key.len + 8;
    return k;
}

bool samsa_st_window_get(samsa_st_store *s, struct samsa_st_bytes key, int64_t window_start,
                         struct samsa_st_bytes *value)
{
    struct samsa_st_bytes k;
    uint8_t *buf = window_key(key, window_start, &k);
    if (buf == NULL) {
        value->data = NULL;
        value->len = 0;
        return false;
    }
    bool found = s->ops->get(s->impl, k, value);
    free(buf);
    return found;
}

struct expired {
    int64_t before;
    struct samsa_st_bytes *keys;
    size_t count;
    size_t cap;
    bool nomem;
};

static bool collect_expired(struct samsa_st_bytes key, struct samsa_st_bytes value, void *opaque)
{
    (void)value;
    struct expired *x = opaque;
    if (key.len < 8 || (int64_t)st_get_be64((const uint8_t *)key.data + key.len - 8) >= x->before) {
        return true;
    }
    if (x->count == x->cap) {
        size_t cap = x->cap != 0 ? x->cap * 2 : 16;
        struct samsa_st_bytes *k = realloc(x->keys, cap * sizeof *k);
        if (k == NULL) {
            x->nomem = true;
            return false;
        }
        x->keys = k;
        x->cap = cap;
    }
    uint8_t *copy = malloc(key.len);
    if (copy == NULL) {
        x->nomem = true;
        return false;
    }
    memcpy(copy, key.data, key.len);
    x->keys[x->count].data = copy;
    x->keys[x->count].len = key.len;
    x->count++;
    return true;
}

/* Forgets windows that started more than retention before stream time, at
 * most every quarter retention (the changelog keeps them until the topic's
 * own retention: Kafka 2.0 gives window changelogs cleanup.policy
 * compact,delete for that). */
static void expire(samsa_st_store *s)
{
    int64_t now = s->task->stream_time;
    int64_t every = s->def->retention_ms / 4 > 0 ? s->def->retention_ms / 4 : 1;
    if (now - s->swept_at < every) {
        return;
    }
    s->swept_at = now;
    struct expired x = {.before = now - s->def->retention_ms};
    s->ops->each(s->impl, collect_expired, &x);
    struct samsa_st_bytes none = {NULL, 0};
    for (size_t i = 0; i < x.count; i++) {
        (void)s->ops->put(s->impl, x.keys[i], none); /* a delete cannot fail */
        free((void *)(uintptr_t)x.keys[i].data);
    }
    free(x.keys);
}

int samsa_st_window_put(samsa_st_store *s, struct samsa_st_bytes key, int64_t window_start,
                        struct samsa_st_bytes value)
{
    if (s == NULL || !s->def->window) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct samsa_st_bytes k;
    uint8_t *buf = window_key(key, window_start, &k);
    if (buf == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    int err = logged_put(s, k, value);
    free(buf);
    if (err == SAMSA_OK) {
        expire(s);
    }
    return err;
}
