/*
 * samsa-broker: the group coordinator's groups table (hashed by Java's
 * String.hashCode, as Kafka places a group), its timers, the waiters of
 * joins and syncs, and the small helpers its files share (see group.h).
 * @locality reactor thread
 */
#include "group/coordinator_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

char *grp_dup_mem(const void *p, size_t n)
{
    char *s = kp_malloc(n + 1);
    if (s == NULL) {
        return NULL;
    }
    if (n > 0) {
        memcpy(s, p, n);
    }
    s[n] = '\0';
    return s;
}

char *br_grp_dup_kstr(struct kp_str s)
{
    return grp_dup_mem(s.ptr, s.len > 0 ? (size_t)s.len : 0);
}

bool grp_kstr_is(struct kp_str a, const char *s)
{
    size_t n = strlen(s);
    return a.len >= 0 && (size_t)a.len == n && (n == 0 || memcmp(a.ptr, s, n) == 0);
}

int64_t grp_now_mono(const struct br_groups *gs)
{
    return gs->ops->now_mono_ms(gs->ctx);
}

void grp_timer_init(struct br_groups *gs, struct grp_timer *t, enum grp_timer_kind kind,
                    void *obj)
{
    t->kind = kind;
    t->obj = obj;
    gs->ops->timer_init(gs->ctx, t);
}

void grp_timer_arm(struct br_groups *gs, struct grp_timer *t, int64_t deadline_ms)
{
    gs->ops->timer_arm(gs->ctx, t, deadline_ms);
}

void grp_timer_cancel(struct br_groups *gs, struct grp_timer *t)
{
    gs->ops->timer_cancel(gs->ctx, t);
}

const char *br_grp_state_name(enum grp_state s)
{
    switch (s) {
    case GRP_EMPTY:
        return "Empty";
    case GRP_PREPARING_REBALANCE:
        return "PreparingRebalance";
    case GRP_COMPLETING_REBALANCE:
        return "CompletingRebalance";
    case GRP_STABLE:
        return "Stable";
    case GRP_DEAD:
        return "Dead";
    }
    return "Dead";
}

void grp_set_state(struct br_groups *gs, struct grp_group *g, enum grp_state s)
{
    br_debug("group %s: %s -> %s (generation %" PRId32 ")", g->id, br_grp_state_name(g->state),
             br_grp_state_name(s), g->generation);
    g->state = s;
    g->state_ts = gs->ops->now_wall_ms(gs->ctx);
    /* a group record still waiting for the ISR no longer decides anything
     * (Kafka's callback checks the state and the generation) */
    g->store_seq = 0;
}

/* ---------------------------------------------------------------- Java's hash */

int32_t br_group_java_hash(const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s;
    uint32_t h = 0;
    size_t i = 0;
    while (i < len) {
        uint32_t cp = 0xFFFD;
        size_t n = 1;
        uint8_t c = p[i];
        if (c < 0x80) {
            cp = c;
        } else if (c >= 0xC2 && c <= 0xDF && len - i >= 2 && (p[i + 1] & 0xC0) == 0x80) {
            cp = (uint32_t)(c & 0x1F) << 6 | (p[i + 1] & 0x3Fu);
            n = 2;
        } else if (c >= 0xE0 && c <= 0xEF && len - i >= 3 && (p[i + 1] & 0xC0) == 0x80 &&
                   (p[i + 2] & 0xC0) == 0x80) {
            cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(p[i + 1] & 0x3F) << 6 | (p[i + 2] & 0x3Fu);
            n = 3;
            if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) {
                cp = 0xFFFD; /* overlong or a surrogate: malformed */
                n = 1;
            }
        } else if (c >= 0xF0 && c <= 0xF4 && len - i >= 4 && (p[i + 1] & 0xC0) == 0x80 &&
                   (p[i + 2] & 0xC0) == 0x80 && (p[i + 3] & 0xC0) == 0x80) {
            cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(p[i + 1] & 0x3F) << 12 |
                 (uint32_t)(p[i + 2] & 0x3F) << 6 | (p[i + 3] & 0x3Fu);
            n = 4;
            if (cp < 0x10000 || cp > 0x10FFFF) {
                cp = 0xFFFD;
                n = 1;
            }
        }
        if (cp >= 0x10000) {
            /* a surrogate pair: two UTF-16 code units */
            uint32_t v = cp - 0x10000;
            h = 31u * h + (0xD800u + (v >> 10));
            h = 31u * h + (0xDC00u + (v & 0x3FFu));
        } else {
            h = 31u * h + cp;
        }
        i += n;
    }
    return (int32_t)h;
}

int32_t br_group_partition_for(const char *group_id, size_t len, int32_t partitions)
{
    if (partitions <= 0) {
        return 0;
    }
    int32_t h = br_group_java_hash(group_id, len);
    int32_t a = h == INT32_MIN ? 0 : (h < 0 ? -h : h); /* Kafka's Utils.abs */
    return a % partitions;
}

/* ---------------------------------------------------------------- groups table */

uint64_t grp_fnv1a(const char *s, size_t len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)s[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

struct grp_group *br_grp_find(struct br_groups *gs, const char *id, size_t len)
{
    if (gs->nbuckets == 0) {
        return NULL;
    }
    struct grp_group *g = gs->buckets[grp_fnv1a(id, len) & (gs->nbuckets - 1)];
    while (g != NULL) {
        if (g->id_len == len && (len == 0 || memcmp(g->id, id, len) == 0)) {
            return g;
        }
        g = g->hnext;
    }
    return NULL;
}

struct grp_group *br_grp_find_kstr(struct br_groups *gs, struct kp_str id)
{
    if (id.len < 0) {
        return NULL;
    }
    return br_grp_find(gs, id.ptr, (size_t)id.len);
}

int grp_table_grow(struct br_groups *gs)
{
    size_t n = gs->nbuckets == 0 ? 64 : gs->nbuckets * 2;
    struct grp_group **nb = kp_calloc(n, sizeof(struct grp_group *));
    if (nb == NULL) {
        return KP_E_NOMEM;
    }
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        size_t k = grp_fnv1a(g->id, g->id_len) & (n - 1);
        g->hnext = nb[k];
        nb[k] = g;
    }
    kp_free(gs->buckets);
    gs->buckets = nb;
    gs->nbuckets = n;
    return 0;
}

struct grp_group *br_grp_get_or_create(struct br_groups *gs, const char *id, size_t len)
{
    struct grp_group *g = br_grp_find(gs, id, len);
    if (g != NULL) {
        return g;
    }
    if (gs->ngroups >= GRP_MAX_GROUPS) {
        br_warn("refusing a new group: %d groups held", GRP_MAX_GROUPS);
        return NULL;
    }
    if (gs->ngroups >= gs->nbuckets && grp_table_grow(gs) != 0) {
        return NULL;
    }
    g = kp_calloc(1, sizeof *g);
    if (g == NULL) {
        return NULL;
    }
    g->id = grp_dup_mem(id, len);
    if (g->id == NULL) {
        kp_free(g);
        return NULL;
    }
    g->id_len = len;
    g->state = GRP_EMPTY;
    g->state_ts = -1;
    grp_timer_init(gs, &g->join_timer, GRP_TIMER_JOIN, g);
    size_t k = grp_fnv1a(id, len) & (gs->nbuckets - 1);
    g->hnext = gs->buckets[k];
    gs->buckets[k] = g;
    g->prev = gs->last;
    if (gs->last != NULL) {
        gs->last->next = g;
    } else {
        gs->first = g;
    }
    gs->last = g;
    gs->ngroups++;
    return g;
}

/* ---------------------------------------------------------------- waiters */

/* Answers the member's waiting join with err (the current generation when
 * err is 0); it is unlinked first. */
void grp_answer_join_waiter(struct br_groups *gs, struct grp_member *m, int err)
{
    void *w = m->join_waiter;
    if (w == NULL) {
        return;
    }
    m->join_waiter = NULL;
    gs->ops->join_answer(gs->ctx, w, err, m->group, m);
}

void grp_answer_sync_waiter(struct br_groups *gs, struct grp_member *m, int err,
                            const uint8_t *assignment, int32_t len)
{
    void *w = m->sync_waiter;
    if (w == NULL) {
        return;
    }
    m->sync_waiter = NULL;
    gs->ops->sync_answer(gs->ctx, w, err, assignment, len);
}

/* Answers whatever the member has waiting with err. */
void grp_member_answer_waiters(struct br_groups *gs, struct grp_member *m, int err)
{
    grp_answer_join_waiter(gs, m, err);
    grp_answer_sync_waiter(gs, m, err, NULL, 0);
}

void br_grp_waiter_gone(struct br_groups *gs, struct grp_member *m, void *waiter)
{
    (void)gs;
    if (m == NULL || waiter == NULL) {
        return;
    }
    if (m->sync_waiter == waiter) {
        m->sync_waiter = NULL;
        /* nobody waits for the assignment any more: the session timeout
         * decides about the member from now on */
        m->awaiting_sync = false;
    }
    if (m->join_waiter == waiter) {
        /* the member stays joined (awaiting_join) */
        m->join_waiter = NULL;
    }
}
