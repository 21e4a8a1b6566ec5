/* samsa-broker: the admin API's snapshot: its arena, its references (see
 * snapshot.h). */
#include "admin/snapshot.h"

#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>

/* One block of the arena; blocks grow to 64 KiB, larger requests get a
 * block of their own. */
struct br_snap_chunk {
    struct br_snap_chunk *next;
    size_t used;
    size_t cap;
    _Alignas(16) unsigned char data[];
};

#define CHUNK_MIN ((size_t)64 * 1024)

struct br_snapshot *br_snap_new(void)
{
    struct br_snapshot *s = kp_calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    atomic_init(&s->refs, 1);
    s->controller_id = -1;
    return s;
}

void *br_snap_alloc(struct br_snapshot *s, size_t n)
{
    if (s->failed) {
        return NULL;
    }
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n) {
        s->failed = true;
        return NULL;
    }
    struct br_snap_chunk *c = s->chunks;
    if (c == NULL || c->cap - c->used < need) {
        size_t cap = need > CHUNK_MIN ? need : CHUNK_MIN;
        struct br_snap_chunk *nc = kp_malloc(sizeof *nc + cap);
        if (nc == NULL) {
            s->failed = true;
            return NULL;
        }
        nc->used = 0;
        nc->cap = cap;
        /* a block of its own goes behind the current one, which keeps its room */
        if (c != NULL && cap == need && need > CHUNK_MIN) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            s->chunks = nc;
        }
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += need;
    memset(p, 0, n);
    return p;
}

const char *br_snap_strndup(struct br_snapshot *s, const char *src, size_t len)
{
    if (src == NULL || len == SIZE_MAX) {
        return NULL;
    }
    char *d = br_snap_alloc(s, len + 1);
    if (d == NULL) {
        return NULL;
    }
    memcpy(d, src, len);
    d[len] = '\0';
    return d;
}

const char *br_snap_strdup(struct br_snapshot *s, const char *src)
{
    return src == NULL ? NULL : br_snap_strndup(s, src, strlen(src));
}

struct br_snapshot *br_snap_ref(struct br_snapshot *s)
{
    if (s != NULL) {
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    }
    return s;
}

void br_snap_unref(struct br_snapshot *s)
{
    if (s == NULL) {
        return;
    }
    /* release: every reader's loads happen before the free */
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) {
        return;
    }
    struct br_snap_chunk *c = s->chunks;
    while (c != NULL) {
        struct br_snap_chunk *next = c->next;
        kp_free(c);
        c = next;
    }
    kp_free(s);
}

const struct br_snap_topic *br_snap_topic(const struct br_snapshot *s, const char *name)
{
    size_t lo = 0;
    size_t hi = s->ntopics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->topics[mid].name, name);
        if (c == 0) {
            return &s->topics[mid];
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

const struct br_snap_broker *br_snap_broker(const struct br_snapshot *s, int32_t id)
{
    for (size_t i = 0; i < s->nbrokers; i++) {
        if (s->brokers[i].id == id) {
            return &s->brokers[i];
        }
    }
    return NULL;
}

void br_snap_health(const struct br_snapshot *s, struct br_snap_health *out)
{
    memset(out, 0, sizeof *out);
    for (size_t t = 0; t < s->ntopics; t++) {
        const struct br_snap_topic *tp = &s->topics[t];
        for (int32_t i = 0; i < tp->npartitions; i++) {
            const struct br_snap_partition *p = &tp->parts[i];
            out->partitions++;
            bool under = p->nisr < p->nreplicas;
            if (under) {
                out->under_replicated++;
            }
            if (tp->min_isr > 0 && p->nisr < tp->min_isr) {
                out->under_min_isr++;
            }
            if (p->leader < 0) {
                out->offline++;
            }
            if (p->led_here) {
                out->led_here++;
                if (under) {
                    out->under_replicated_led_here++;
                }
            }
        }
    }
}
