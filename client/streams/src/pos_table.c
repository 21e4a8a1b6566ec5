/*
 * A task's table of input positions (see position.c): keys and the
 * largest (offset, sequence) per key. Pure: it calls no other file of the
 * library but its allocation helper, so the LMDB store that loads it and
 * the task that raises it both use it without using each other.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_pos_key(char out[ST_POS_KEY_MAX], char kind, const char *topic, int32_t partition)
{
    (void)snprintf(out, ST_POS_KEY_MAX, "%c%d:%s", kind, (int)partition, topic);
}

struct st_pos *st_pos_find(const struct st_positions *p, const char *key)
{
    for (size_t i = 0; i < p->count; i++) {
        if (strcmp(p->v[i].key, key) == 0) {
            return &p->v[i];
        }
    }
    return NULL;
}

int st_pos_raise(struct st_positions *p, const char *key, int64_t a, int64_t b)
{
    struct st_pos *e = st_pos_find(p, key);
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
    v[p->count].key = st_strdup(key);
    if (v[p->count].key == NULL) {
        return SAMSA_ERR_NOMEM;
    }
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
