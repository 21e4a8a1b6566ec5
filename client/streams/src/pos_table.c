/*
 * A task's table of input positions (see position.c): per position id
 * (kind, partition, topic) the largest (offset, sequence). Pure: it calls
 * no other file of the library but its allocation helper, so the LMDB store
 * that loads it and the task that raises it both use it without using each
 * other.
 *
 * The per-record calls (st_pos_find, st_pos_raise on an id whose topic is a
 * view into a message or a header) compare kind, partition and the topic's
 * bytes: nothing is formatted or copied per record. The key string LMDB
 * stores ("<kind><partition>:<topic>") is made once, when an id is added.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Writes n in decimal at out (at least 12 bytes); returns the length. */
static size_t put_decimal(char *out, int32_t n)
{
    char tmp[12];
    size_t len = 0;
    uint32_t u = n < 0 ? 0u - (uint32_t)n : (uint32_t)n;
    do {
        tmp[len++] = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    size_t k = 0;
    if (n < 0) {
        out[k++] = '-';
    }
    while (len > 0) {
        out[k++] = tmp[--len];
    }
    return k;
}

bool st_pos_id_parse(const char *key, size_t len, struct st_pos_id *out)
{
    const char *colon = len > 2 ? memchr(key, ':', len) : NULL;
    if (colon == NULL || colon == key + 1 || (size_t)(colon - key) > 12 ||
        (size_t)(key + len - colon) < 2) {
        return false;
    }
    int64_t n = 0;
    bool negative = key[1] == '-';
    const char *p = key + (negative ? 2 : 1);
    if (p == colon) {
        return false;
    }
    for (; p < colon; p++) {
        if (*p < '0' || *p > '9') {
            return false;
        }
        n = n * 10 + (*p - '0');
    }
    n = negative ? -n : n;
    if (n < INT32_MIN || n > INT32_MAX) {
        return false;
    }
    out->kind = key[0];
    out->partition = (int32_t)n;
    out->topic = colon + 1;
    out->topic_len = (size_t)(key + len - colon - 1);
    return true;
}

static bool same(const struct st_pos *e, const struct st_pos_id *id)
{
    return e->id.kind == id->kind && e->id.partition == id->partition &&
           e->id.topic_len == id->topic_len && memcmp(e->id.topic, id->topic, id->topic_len) == 0;
}

struct st_pos *st_pos_find(const struct st_positions *p, const struct st_pos_id *id)
{
    for (size_t i = 0; i < p->count; i++) {
        if (same(&p->v[i], id)) {
            return &p->v[i];
        }
    }
    return NULL;
}

int st_pos_raise(struct st_positions *p, const struct st_pos_id *id, int64_t a, int64_t b)
{
    struct st_pos *e = st_pos_find(p, id);
    if (e != NULL) {
        if (a > e->a || (a == e->a && b > e->b)) {
            e->a = a;
            e->b = b;
        }
        return SAMSA_OK;
    }
    struct st_pos *v = realloc(p->v, (p->count + 1) * sizeof *v);
    if (v == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    p->v = v;
    /* "<kind><partition>:<topic>" and its terminator */
    char *key = malloc(1 + 12 + 1 + id->topic_len + 1);
    if (key == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    size_t n = 0;
    key[n++] = id->kind;
    n += put_decimal(key + n, id->partition);
    key[n++] = ':';
    memcpy(key + n, id->topic, id->topic_len);
    key[n + id->topic_len] = '\0';
    v[p->count].key = key;
    v[p->count].id = (struct st_pos_id){id->kind, id->partition, key + n, id->topic_len};
    v[p->count].a = a;
    v[p->count].b = b;
    p->count++;
    return SAMSA_OK;
}

void st_pos_clear(struct st_positions *p)
{
    for (size_t i = 0; i < p->count; i++) {
        free(p->v[i].key);
    }
    free(p->v);
    p->v = NULL;
    p->count = 0;
}
