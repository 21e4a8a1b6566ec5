/*
 * samsa-broker: the group coordinator's membership state machine (see
 * group.h): the groups table, members, pending member ids, the join and
 * sync phases, sessions and the coordinator's timers.
 * @locality reactor thread
 */
#include "group/group.h"

#include "base/logging.h"
#include "group/records.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static char *dup_mem(const void *p, size_t n)
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
    return dup_mem(s.ptr, s.len > 0 ? (size_t)s.len : 0);
}

static bool kstr_is(struct kp_str a, const char *s)
{
    size_t n = strlen(s);
    return a.len >= 0 && (size_t)a.len == n && (n == 0 || memcmp(a.ptr, s, n) == 0);
}

static int64_t now_mono(const struct br_groups *gs)
{
    return gs->ops->now_mono_ms(gs->ctx);
}

static void timer_init(struct br_groups *gs, struct grp_timer *t, enum grp_timer_kind kind,
                       void *obj)
{
    t->kind = kind;
    t->obj = obj;
    gs->ops->timer_init(gs->ctx, t);
}

static void timer_arm(struct br_groups *gs, struct grp_timer *t, int64_t deadline_ms)
{
    gs->ops->timer_arm(gs->ctx, t, deadline_ms);
}

static void timer_cancel(struct br_groups *gs, struct grp_timer *t)
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

static void set_state(struct br_groups *gs, struct grp_group *g, enum grp_state s)
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

static uint64_t fnv1a(const char *s, size_t len)
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
    struct grp_group *g = gs->buckets[fnv1a(id, len) & (gs->nbuckets - 1)];
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

static int table_grow(struct br_groups *gs)
{
    size_t n = gs->nbuckets == 0 ? 64 : gs->nbuckets * 2;
    struct grp_group **nb = kp_calloc(n, sizeof(struct grp_group *));
    if (nb == NULL) {
        return KP_E_NOMEM;
    }
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        size_t k = fnv1a(g->id, g->id_len) & (n - 1);
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
    if (gs->ngroups >= gs->nbuckets && table_grow(gs) != 0) {
        return NULL;
    }
    g = kp_calloc(1, sizeof *g);
    if (g == NULL) {
        return NULL;
    }
    g->id = dup_mem(id, len);
    if (g->id == NULL) {
        kp_free(g);
        return NULL;
    }
    g->id_len = len;
    g->state = GRP_EMPTY;
    g->state_ts = -1;
    timer_init(gs, &g->join_timer, GRP_TIMER_JOIN, g);
    size_t k = fnv1a(id, len) & (gs->nbuckets - 1);
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
static void answer_join_waiter(struct br_groups *gs, struct grp_member *m, int err)
{
    void *w = m->join_waiter;
    if (w == NULL) {
        return;
    }
    m->join_waiter = NULL;
    gs->ops->join_answer(gs->ctx, w, err, m->group, m);
}

static void answer_sync_waiter(struct br_groups *gs, struct grp_member *m, int err,
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
static void member_answer_waiters(struct br_groups *gs, struct grp_member *m, int err)
{
    answer_join_waiter(gs, m, err);
    answer_sync_waiter(gs, m, err, NULL, 0);
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

/* ---------------------------------------------------------------- members */

static void member_free(struct br_groups *gs, struct grp_member *m)
{
    if (m == NULL) {
        return;
    }
    timer_cancel(gs, &m->session);
    for (size_t i = 0; i < m->nprotocols; i++) {
        kp_free(m->protocols[i].name);
        kp_free(m->protocols[i].metadata);
    }
    kp_free(m->protocols);
    kp_free(m->assignment);
    kp_free(m->id);
    kp_free(m->instance_id);
    kp_free(m->client_id);
    kp_free(m->client_host);
    kp_free(m);
}

struct grp_member *br_grp_member_find(const struct grp_group *g, struct kp_str id)
{
    if (id.len < 0) {
        return NULL;
    }
    for (size_t i = 0; i < g->nmembers; i++) {
        if (kstr_is(id, g->members[i]->id)) {
            return g->members[i];
        }
    }
    return NULL;
}

static struct grp_member *member_by_instance(struct grp_group *g, struct kp_str iid)
{
    if (iid.len < 0) {
        return NULL;
    }
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->members[i]->instance_id != NULL && kstr_is(iid, g->members[i]->instance_id)) {
            return g->members[i];
        }
    }
    return NULL;
}

/* A member's session deadline starts again (heartbeat, commit, join). */
static void heartbeat_reset(struct br_groups *gs, struct grp_member *m)
{
    timer_arm(gs, &m->session, now_mono(gs) + m->session_timeout_ms);
}

/* Replaces the member's protocols with the request's. */
static int member_set_protocols(struct grp_member *m, const struct grp_join_req *q)
{
    size_t n = q->nprotocols;
    struct grp_protocol *ps = kp_calloc(n == 0 ? 1 : n, sizeof *ps);
    if (ps == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct grp_join_protocol *p = &q->protocols[i];
        size_t mlen = p->metadata.len > 0 ? (size_t)p->metadata.len : 0;
        ps[i].name = br_grp_dup_kstr(p->name);
        ps[i].metadata = kp_malloc(mlen == 0 ? 1 : mlen);
        ps[i].metadata_len = (int32_t)mlen;
        if (ps[i].name == NULL || ps[i].metadata == NULL) {
            for (size_t k = 0; k <= i; k++) {
                kp_free(ps[k].name);
                kp_free(ps[k].metadata);
            }
            kp_free(ps);
            return KP_E_NOMEM;
        }
        if (mlen > 0) {
            memcpy(ps[i].metadata, p->metadata.ptr, mlen);
        }
    }
    for (size_t i = 0; i < m->nprotocols; i++) {
        kp_free(m->protocols[i].name);
        kp_free(m->protocols[i].metadata);
    }
    kp_free(m->protocols);
    m->protocols = ps;
    m->nprotocols = n;
    return 0;
}

const struct grp_protocol *br_grp_member_protocol(const struct grp_member *m, const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < m->nprotocols; i++) {
        if (strcmp(m->protocols[i].name, name) == 0) {
            return &m->protocols[i];
        }
    }
    return NULL;
}

/* Kafka's MemberMetadata.matches: the same protocols, in the same order,
 * with the same metadata. */
static bool member_matches(const struct grp_member *m, const struct grp_join_req *q)
{
    if (q->nprotocols != m->nprotocols) {
        return false;
    }
    for (size_t i = 0; i < m->nprotocols; i++) {
        const struct grp_join_protocol *p = &q->protocols[i];
        int32_t mlen = p->metadata.len > 0 ? p->metadata.len : 0;
        if (!kstr_is(p->name, m->protocols[i].name) || mlen != m->protocols[i].metadata_len ||
            (mlen > 0 && memcmp(p->metadata.ptr, m->protocols[i].metadata, (size_t)mlen) != 0)) {
            return false;
        }
    }
    return true;
}

static void member_set_assignment(struct grp_member *m, uint8_t *a, int32_t len)
{
    kp_free(m->assignment);
    m->assignment = a;
    m->assignment_len = a != NULL ? len : 0;
}

static uint64_t rng_next(struct br_groups *gs)
{
    /* splitmix64 */
    uint64_t z = (gs->rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Kafka's member id: "<client id>-<random UUID>". The client id part is
 * cut at 1024 bytes (on a UTF-8 boundary) so the id stays a short string. */
static char *make_member_id(struct br_groups *gs, struct kp_str client_id)
{
    size_t n = client_id.len > 0 ? (size_t)client_id.len : 0;
    if (n > 1024) {
        n = 1024;
        while (n > 0 && ((uint8_t)client_id.ptr[n] & 0xC0) == 0x80) {
            n--;
        }
    }
    uint8_t u[16];
    uint64_t a = rng_next(gs);
    uint64_t b = rng_next(gs);
    for (int i = 0; i < 8; i++) {
        u[i] = (uint8_t)(a >> (8 * i));
        u[8 + i] = (uint8_t)(b >> (8 * i));
    }
    u[6] = (uint8_t)((u[6] & 0x0F) | 0x40); /* version 4 */
    u[8] = (uint8_t)((u[8] & 0x3F) | 0x80); /* IETF variant */
    char uuid[37];
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            uuid[k++] = '-';
        }
        uuid[k++] = hex[u[i] >> 4];
        uuid[k++] = hex[u[i] & 15];
    }
    uuid[k] = '\0';
    char *id = kp_malloc(n + 1 + 36 + 1);
    if (id == NULL) {
        return NULL;
    }
    if (n > 0) {
        memcpy(id, client_id.ptr, n);
    }
    id[n] = '-';
    memcpy(id + n + 1, uuid, 37);
    return id;
}

static int32_t group_rebalance_timeout(const struct grp_group *g)
{
    int32_t t = 0;
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->members[i]->rebalance_timeout_ms > t) {
            t = g->members[i]->rebalance_timeout_ms;
        }
    }
    return t;
}

/* Takes the member out of the group and frees it; its waiters are
 * answered with err first. The leader passes to the first member left. */
static void member_remove(struct br_groups *gs, struct grp_group *g, struct grp_member *m, int err)
{
    member_answer_waiters(gs, m, err);
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->members[i] == m) {
            memmove(&g->members[i], &g->members[i + 1],
                    (g->nmembers - i - 1) * sizeof(struct grp_member *));
            g->nmembers--;
            break;
        }
    }
    if (g->leader == m) {
        g->leader = g->nmembers > 0 ? g->members[0] : NULL;
    }
    member_free(gs, m);
}

/* ---------------------------------------------------------------- pending member ids */

static void pending_prune(struct grp_group *g, int64_t now)
{
    size_t k = 0;
    for (size_t i = 0; i < g->npending; i++) {
        if (g->pending[i].deadline_ms > now) {
            g->pending[k++] = g->pending[i];
        } else {
            kp_free(g->pending[i].id);
        }
    }
    g->npending = k;
}

static int pending_add(struct br_groups *gs, struct grp_group *g, char *id, int64_t deadline)
{
    pending_prune(g, now_mono(gs));
    if (g->npending == GRP_MAX_PENDING) {
        /* the oldest one goes: its client will get UNKNOWN_MEMBER_ID */
        kp_free(g->pending[0].id);
        memmove(&g->pending[0], &g->pending[1], (g->npending - 1) * sizeof *g->pending);
        g->npending--;
    }
    if (g->npending == g->pending_cap) {
        size_t cap = g->pending_cap == 0 ? 4 : g->pending_cap * 2;
        struct grp_pending *np = kp_realloc(g->pending, cap * sizeof *np);
        if (np == NULL) {
            return KP_E_NOMEM;
        }
        g->pending = np;
        g->pending_cap = cap;
    }
    g->pending[g->npending].id = id;
    g->pending[g->npending].deadline_ms = deadline;
    g->npending++;
    return 0;
}

/* Removes a live pending id; true when it was there. */
static bool pending_take(struct br_groups *gs, struct grp_group *g, struct kp_str id)
{
    pending_prune(g, now_mono(gs));
    for (size_t i = 0; i < g->npending; i++) {
        if (kstr_is(id, g->pending[i].id)) {
            kp_free(g->pending[i].id);
            memmove(&g->pending[i], &g->pending[i + 1], (g->npending - i - 1) * sizeof *g->pending);
            g->npending--;
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------- state machine */

static void complete_join(struct br_groups *gs, struct grp_group *g);

static bool all_joined(const struct grp_group *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        if (!g->members[i]->awaiting_join) {
            return false;
        }
    }
    return true;
}

/* Kafka's joinPurgatory.checkAndComplete: the join phase ends as soon as
 * every member rejoined (not during the initial delay). */
static void check_join_complete(struct br_groups *gs, struct grp_group *g)
{
    if (g->state == GRP_PREPARING_REBALANCE && !g->initial_delay && all_joined(g)) {
        complete_join(gs, g);
    }
}

/* Every waiting SyncGroup gets err; assignments are forgotten. */
static void reset_and_propagate_assignment_error(struct br_groups *gs, struct grp_group *g, int err)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        struct grp_member *m = g->members[i];
        member_set_assignment(m, NULL, 0);
        if (m->awaiting_sync) {
            m->awaiting_sync = false;
            answer_sync_waiter(gs, m, err, NULL, 0);
            heartbeat_reset(gs, m);
        }
    }
}

static void prepare_rebalance(struct br_groups *gs, struct grp_group *g, const char *reason)
{
    if (g->state == GRP_COMPLETING_REBALANCE) {
        reset_and_propagate_assignment_error(gs, g, KP_ERR_REBALANCE_IN_PROGRESS);
    }
    int64_t now = now_mono(gs);
    int32_t timeout = group_rebalance_timeout(g);
    if (g->state == GRP_EMPTY) {
        /* Kafka's InitialDelayedJoin: wait for more members of a new group */
        int32_t delay = gs->cfg.initial_rebalance_delay_ms;
        g->initial_delay = true;
        g->new_member_added = false;
        g->initial_remaining_ms = timeout > delay ? timeout - delay : 0;
        timer_arm(gs, &g->join_timer, now + delay);
    } else {
        g->initial_delay = false;
        timer_arm(gs, &g->join_timer, now + timeout);
    }
    br_info("group %s: preparing to rebalance (generation %" PRId32 ", %zu member(s)): %s", g->id,
            g->generation, g->nmembers, reason);
    set_state(gs, g, GRP_PREPARING_REBALANCE);
    /* Kafka's tryCompleteElseWatch: done already when nobody is missing */
    check_join_complete(gs, g);
}

static void maybe_prepare_rebalance(struct br_groups *gs, struct grp_group *g, const char *reason)
{
    if (g->state == GRP_STABLE || g->state == GRP_COMPLETING_REBALANCE || g->state == GRP_EMPTY) {
        prepare_rebalance(gs, g, reason);
    }
}

/* Kafka's removeMemberAndUpdateGroup (LeaveGroup, session expiry). */
static void remove_member_and_update(struct br_groups *gs, struct grp_group *g,
                                     struct grp_member *m, const char *reason)
{
    member_remove(gs, g, m, KP_ERR_UNKNOWN_MEMBER_ID);
    switch (g->state) {
    case GRP_DEAD:
    case GRP_EMPTY:
        break;
    case GRP_STABLE:
    case GRP_COMPLETING_REBALANCE:
        maybe_prepare_rebalance(gs, g, reason);
        break;
    case GRP_PREPARING_REBALANCE:
        check_join_complete(gs, g);
        break;
    }
}

/* The protocol most members prefer among those all of them support
 * (Kafka's GroupMetadata.selectProtocol). */
static const char *select_protocol(const struct grp_group *g)
{
    if (g->nmembers == 0) {
        return NULL;
    }
    const struct grp_member *first = g->members[0];
    const char *best = NULL;
    size_t best_votes = 0;
    for (size_t c = 0; c < first->nprotocols; c++) {
        const char *cand = first->protocols[c].name;
        bool all = true;
        for (size_t i = 1; i < g->nmembers && all; i++) {
            all = br_grp_member_protocol(g->members[i], cand) != NULL;
        }
        if (!all) {
            continue;
        }
        /* votes: each member's first choice among the candidates */
        size_t votes = 0;
        for (size_t i = 0; i < g->nmembers; i++) {
            const struct grp_member *m = g->members[i];
            for (size_t k = 0; k < m->nprotocols; k++) {
                const char *p = m->protocols[k].name;
                bool candidate = br_grp_member_protocol(first, p) != NULL;
                for (size_t j = 1; j < g->nmembers && candidate; j++) {
                    candidate = br_grp_member_protocol(g->members[j], p) != NULL;
                }
                if (candidate) {
                    votes += strcmp(p, cand) == 0 ? 1 : 0;
                    break;
                }
            }
        }
        if (best == NULL || votes > best_votes) {
            best = cand;
            best_votes = votes;
        }
    }
    return best;
}

void br_grp_join_fill(const struct grp_group *g, const struct grp_member *m,
                      struct grp_join_view *out)
{
    out->generation = g->generation;
    out->protocol = g->protocol != NULL ? g->protocol : "";
    out->leader = g->leader != NULL ? g->leader->id : "";
    out->member_id = m->id;
    out->nmembers = m == g->leader ? g->nmembers : 0;
}

/* Kafka's onCompleteJoin: members that did not rejoin leave, the next
 * generation starts, every waiting JoinGroup is answered. */
static void complete_join(struct br_groups *gs, struct grp_group *g)
{
    timer_cancel(gs, &g->join_timer);
    g->initial_delay = false;
    for (size_t i = g->nmembers; i > 0; i--) {
        struct grp_member *m = g->members[i - 1];
        if (!m->awaiting_join) {
            br_info("group %s: member %s did not rejoin in time: removed", g->id, m->id);
            member_remove(gs, g, m, KP_ERR_UNKNOWN_MEMBER_ID);
        }
    }
    g->generation = g->generation == INT32_MAX ? 1 : g->generation + 1;
    kp_free(g->protocol);
    g->protocol = NULL;
    if (g->nmembers == 0) {
        set_state(gs, g, GRP_EMPTY);
        br_info("group %s with generation %" PRId32 " is now empty", g->id, g->generation);
        br_grp_store_group(gs, g);
        return;
    }
    const char *p = select_protocol(g);
    g->protocol = dup_mem(p != NULL ? p : "", p != NULL ? strlen(p) : 0);
    if (g->leader == NULL) {
        g->leader = g->members[0];
    }
    set_state(gs, g, GRP_COMPLETING_REBALANCE);
    br_info("group %s: generation %" PRId32 " with %zu member(s), protocol %s, leader %s", g->id,
            g->generation, g->nmembers, g->protocol != NULL ? g->protocol : "?", g->leader->id);
    /* answering may kill a connection, which only takes waiters back:
     * the member array does not change under this loop */
    for (size_t i = 0; i < g->nmembers; i++) {
        struct grp_member *m = g->members[i];
        m->awaiting_join = false;
        m->is_new = false;
        answer_join_waiter(gs, m, KP_ERR_NONE);
        heartbeat_reset(gs, m);
    }
}

/* The leader's SyncGroup arrived: every member gets its assignment. */
static void set_and_propagate_assignment(struct br_groups *gs, struct grp_group *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        struct grp_member *m = g->members[i];
        if (!m->awaiting_sync) {
            continue;
        }
        m->awaiting_sync = false;
        answer_sync_waiter(gs, m, KP_ERR_NONE, m->assignment, m->assignment_len);
        heartbeat_reset(gs, m);
    }
}

/* The leader's group record was replicated (err 0) or not (err: what the
 * syncs get): Kafka 2.0's storeGroup callback in doSyncGroup. */
static void store_done(struct br_groups *gs, struct grp_group *g, int err)
{
    g->store_seq = 0;
    if (err == KP_ERR_NONE) {
        set_and_propagate_assignment(gs, g);
        set_state(gs, g, GRP_STABLE);
        return;
    }
    br_warn("group %s: the record of generation %" PRId32 " was not stored (%s): the syncs "
            "answered so, and the group rebalances",
            g->id, g->generation, kp_err_name(err));
    reset_and_propagate_assignment_error(gs, g, err);
    maybe_prepare_rebalance(gs, g, "the group's record was not stored");
}

bool br_grp_store_settle(struct br_groups *gs, const char *group_id, size_t len, uint64_t seq,
                         int append_err)
{
    struct grp_group *g = gs != NULL && seq != 0 ? br_grp_find(gs, group_id, len) : NULL;
    if (g == NULL || g->state != GRP_COMPLETING_REBALANCE || g->store_seq != seq) {
        return false;
    }
    store_done(gs, g, append_err == KP_ERR_NONE ? KP_ERR_NONE : br_grp_store_error(append_err));
    return true;
}

static void join_timer_fired(struct br_groups *gs, struct grp_group *g)
{
    if (g->state != GRP_PREPARING_REBALANCE) {
        return;
    }
    if (g->initial_delay && g->new_member_added && g->initial_remaining_ms != 0) {
        /* more members arrived: wait again, within the rebalance timeout */
        int32_t configured = gs->cfg.initial_rebalance_delay_ms;
        int32_t delay = configured < g->initial_remaining_ms ? configured : g->initial_remaining_ms;
        g->new_member_added = false;
        g->initial_remaining_ms -= delay;
        timer_arm(gs, &g->join_timer, now_mono(gs) + delay);
        return;
    }
    complete_join(gs, g);
}

static void session_expired(struct br_groups *gs, struct grp_member *m)
{
    struct grp_group *g = m->group;
    /* Kafka's shouldKeepAlive: a member waiting in a join (unless it is new
     * and past the new-member timeout) or for its assignment stays */
    if ((m->awaiting_join && !m->is_new) || m->awaiting_sync) {
        heartbeat_reset(gs, m);
        return;
    }
    br_info("group %s: member %s timed out (session timeout %" PRId32 " ms): removed", g->id, m->id,
            m->session_timeout_ms);
    remove_member_and_update(gs, g, m, "a member's session timed out");
}

/* ---------------------------------------------------------------- lifecycle */

static void group_free(struct br_groups *gs, struct grp_group *g, int err)
{
    while (g->nmembers > 0) {
        member_remove(gs, g, g->members[g->nmembers - 1], err);
    }
    timer_cancel(gs, &g->join_timer);
    /* answered above: the user lets their answers go out now */
    gs->ops->group_gone(gs->ctx, g);
    for (size_t i = 0; i < g->npending; i++) {
        kp_free(g->pending[i].id);
    }
    kp_free(g->pending);
    kp_free(g->members);
    br_grp_offsets_free(g);
    kp_free(g->protocol_type);
    kp_free(g->protocol);
    kp_free(g->id);
    kp_free(g);
}

void br_grp_remove(struct br_groups *gs, struct grp_group *g, int err)
{
    size_t k = fnv1a(g->id, g->id_len) & (gs->nbuckets - 1);
    struct grp_group **pp = &gs->buckets[k];
    while (*pp != NULL && *pp != g) {
        pp = &(*pp)->hnext;
    }
    if (*pp == g) {
        *pp = g->hnext;
    }
    if (g->prev != NULL) {
        g->prev->next = g->next;
    } else {
        gs->first = g->next;
    }
    if (g->next != NULL) {
        g->next->prev = g->prev;
    } else {
        gs->last = g->prev;
    }
    gs->ngroups--;
    group_free(gs, g, err);
}

size_t br_grp_unload_partition(struct br_groups *gs, int32_t partitions, int32_t index)
{
    size_t n = 0;
    struct grp_group *g = gs->first;
    while (g != NULL) {
        struct grp_group *next = g->next;
        if (br_group_partition_for(g->id, g->id_len, partitions) == index) {
            br_grp_remove(gs, g, KP_ERR_NOT_COORDINATOR);
            n++;
        }
        g = next;
    }
    return n;
}

struct br_groups *br_groups_new(const struct br_grp_ops *ops, void *ctx,
                                const struct br_grp_config *cfg, uint64_t seed)
{
    struct br_groups *gs = kp_calloc(1, sizeof *gs);
    if (gs == NULL) {
        return NULL;
    }
    gs->ops = ops;
    gs->ctx = ctx;
    gs->cfg = *cfg;
    gs->rng = seed;
    timer_init(gs, &gs->expiry, GRP_TIMER_EXPIRY, gs);
    if (table_grow(gs) != 0) {
        kp_free(gs);
        return NULL;
    }
    timer_arm(gs, &gs->expiry, now_mono(gs) + gs->cfg.retention_check_interval_ms);
    return gs;
}

void br_groups_answer_all(struct br_groups *gs)
{
    if (gs == NULL) {
        return;
    }
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        for (size_t i = 0; i < g->nmembers; i++) {
            member_answer_waiters(gs, g->members[i], KP_ERR_NOT_COORDINATOR);
        }
    }
}

void br_groups_free(struct br_groups *gs)
{
    if (gs == NULL) {
        return;
    }
    br_groups_answer_all(gs);
    timer_cancel(gs, &gs->expiry);
    while (gs->first != NULL) {
        br_grp_remove(gs, gs->first, KP_ERR_NOT_COORDINATOR);
    }
    kp_free(gs->buckets);
    kp_free(gs);
}

void br_grp_timer_fired(struct br_groups *gs, struct grp_timer *t)
{
    switch (t->kind) {
    case GRP_TIMER_SESSION:
        session_expired(gs, t->obj);
        break;
    case GRP_TIMER_JOIN:
        join_timer_fired(gs, t->obj);
        break;
    case GRP_TIMER_EXPIRY:
        br_grp_offsets_expire(gs);
        timer_arm(gs, &gs->expiry, now_mono(gs) + gs->cfg.retention_check_interval_ms);
        break;
    }
}

/* ---------------------------------------------------------------- JoinGroup */

/* The outcome of a join answered with err at once. */
static int join_error(struct grp_join_out *out, int err, struct kp_str member_id)
{
    out->outcome = GRP_ANSWER_ERROR;
    out->err = err;
    out->member_id = member_id.len >= 0 ? member_id : kp_str_c("");
    return 0;
}

/* The waiter becomes the member's join; an earlier waiting join of the
 * same member is answered REBALANCE_IN_PROGRESS so that its slot moves. */
static void wait_join(struct br_groups *gs, struct grp_member *m, void *waiter,
                      struct grp_join_out *out)
{
    answer_join_waiter(gs, m, KP_ERR_REBALANCE_IN_PROGRESS);
    m->join_waiter = waiter;
    m->awaiting_join = true;
    out->outcome = GRP_WAIT;
    out->group = m->group;
    out->member = m;
}

static int add_member_and_rebalance(struct br_groups *gs, const struct grp_join_req *q,
                                    struct grp_group *g, char *id, void *waiter,
                                    struct grp_join_out *out)
{
    struct grp_member *m = kp_calloc(1, sizeof *m);
    if (m == NULL) {
        kp_free(id);
        return KP_E_NOMEM;
    }
    m->group = g;
    m->id = id;
    timer_init(gs, &m->session, GRP_TIMER_SESSION, m);
    m->client_id = br_grp_dup_kstr(q->client_id);
    m->client_host = br_grp_dup_kstr(q->client_host);
    m->instance_id = q->instance_id.len >= 0 ? br_grp_dup_kstr(q->instance_id) : NULL;
    m->session_timeout_ms = q->session_timeout_ms;
    m->rebalance_timeout_ms = q->rebalance_timeout_ms;
    char *ptype = g->nmembers == 0 ? br_grp_dup_kstr(q->protocol_type) : NULL;
    if (m->client_id == NULL || m->client_host == NULL ||
        (q->instance_id.len >= 0 && m->instance_id == NULL) ||
        (g->nmembers == 0 && ptype == NULL) || member_set_protocols(m, q) != 0) {
        kp_free(ptype);
        member_free(gs, m);
        return KP_E_NOMEM;
    }
    if (g->nmembers == g->members_cap) {
        size_t cap = g->members_cap == 0 ? 4 : g->members_cap * 2;
        struct grp_member **nm = kp_realloc(g->members, cap * sizeof(struct grp_member *));
        if (nm == NULL) {
            kp_free(ptype);
            member_free(gs, m);
            return KP_E_NOMEM;
        }
        g->members = nm;
        g->members_cap = cap;
    }
    if (ptype != NULL) {
        kp_free(g->protocol_type);
        g->protocol_type = ptype;
    }
    if (g->state == GRP_PREPARING_REBALANCE && g->generation == 0) {
        g->new_member_added = true;
    }
    g->members[g->nmembers++] = m;
    if (g->leader == NULL) {
        g->leader = m;
    }
    wait_join(gs, m, waiter, out);
    m->is_new = true;
    /* a new member cannot heartbeat before it knows its id: Kafka's
     * NewMemberJoinTimeoutMs bounds its wait instead */
    timer_arm(gs, &m->session, now_mono(gs) + GRP_NEW_MEMBER_JOIN_TIMEOUT_MS);
    br_debug("group %s: member %s joins (client %s, %s)", g->id, m->id, m->client_id,
             m->client_host);
    maybe_prepare_rebalance(gs, g, "a new member joined");
    return 0;
}

static int update_member_and_rebalance(struct br_groups *gs, const struct grp_join_req *q,
                                       struct grp_group *g, struct grp_member *m, void *waiter,
                                       struct grp_join_out *out)
{
    int err = member_set_protocols(m, q);
    if (err != 0) {
        return err;
    }
    m->session_timeout_ms = q->session_timeout_ms;
    m->rebalance_timeout_ms = q->rebalance_timeout_ms;
    wait_join(gs, m, waiter, out);
    maybe_prepare_rebalance(gs, g, "a member rejoined with new metadata");
    return 0;
}

/* A known member that rejoins without changes while no rebalance is
 * needed: the current generation's answer at once. */
static int join_now(struct grp_group *g, struct grp_member *m, struct grp_join_out *out)
{
    out->outcome = GRP_ANSWER_NOW;
    out->group = g;
    out->member = m;
    return 0;
}

/* Kafka's supportsProtocols: an empty group takes any non-empty type and
 * protocol list; otherwise the type must match and one protocol must be
 * supported by every member. */
static bool supports_protocols(const struct grp_group *g, const struct grp_join_req *q)
{
    if (g->nmembers == 0) {
        return q->protocol_type.len > 0 && q->nprotocols > 0;
    }
    if (g->protocol_type == NULL || !kstr_is(q->protocol_type, g->protocol_type)) {
        return false;
    }
    for (size_t k = 0; k < q->nprotocols; k++) {
        char name[256];
        struct kp_str pn = q->protocols[k].name;
        if (pn.len < 0 || (size_t)pn.len >= sizeof name) {
            continue;
        }
        memcpy(name, pn.ptr, (size_t)pn.len);
        name[pn.len] = '\0';
        bool all = true;
        for (size_t i = 0; i < g->nmembers && all; i++) {
            all = br_grp_member_protocol(g->members[i], name) != NULL;
        }
        if (all) {
            return true;
        }
    }
    return false;
}

static int join_known(struct br_groups *gs, const struct grp_join_req *q, struct grp_group *g,
                      struct grp_member *m, void *waiter, struct grp_join_out *out)
{
    struct kp_str iid = q->instance_id;
    if (iid.len >= 0 && m->instance_id != NULL && !kstr_is(iid, m->instance_id)) {
        return join_error(out, KP_ERR_FENCED_INSTANCE_ID, q->member_id);
    }
    switch (g->state) {
    case GRP_PREPARING_REBALANCE:
        return update_member_and_rebalance(gs, q, g, m, waiter, out);
    case GRP_COMPLETING_REBALANCE:
        if (member_matches(m, q)) {
            return join_now(g, m, out);
        }
        return update_member_and_rebalance(gs, q, g, m, waiter, out);
    case GRP_STABLE:
        if (m != g->leader && member_matches(m, q)) {
            return join_now(g, m, out);
        }
        return update_member_and_rebalance(gs, q, g, m, waiter, out);
    case GRP_EMPTY:
    case GRP_DEAD:
        break;
    }
    return join_error(out, KP_ERR_UNKNOWN_MEMBER_ID, q->member_id);
}

static int join_unknown(struct br_groups *gs, const struct grp_join_req *q, struct grp_group *g,
                        void *waiter, struct grp_join_out *out)
{
    struct grp_member *old = member_by_instance(g, q->instance_id);
    if (old == NULL && g->nmembers >= GRP_MAX_MEMBERS) {
        return join_error(out, KP_ERR_GROUP_MAX_SIZE_REACHED, q->member_id);
    }
    char *id = make_member_id(gs, q->client_id);
    if (id == NULL) {
        return KP_E_NOMEM;
    }
    if (old != NULL) {
        /* a static member came back: its old incarnation is fenced */
        br_info("group %s: static member %s replaced by %s", g->id, old->id, id);
        remove_member_and_update(gs, g, old, "a static member rejoined");
    } else if (q->require_known_id && q->instance_id.len < 0) {
        /* v4+: hand out the id, the client joins again with it */
        int e = pending_add(gs, g, id, now_mono(gs) + q->session_timeout_ms);
        if (e != 0) {
            kp_free(id);
            return e;
        }
        return join_error(out, KP_ERR_MEMBER_ID_REQUIRED, kp_str_c(id));
    }
    return add_member_and_rebalance(gs, q, g, id, waiter, out);
}

int br_grp_join(struct br_groups *gs, const struct grp_join_req *q, void *waiter,
                struct grp_join_out *out)
{
    memset(out, 0, sizeof *out);
    if (q->group_id.len <= 0) {
        return join_error(out, KP_ERR_INVALID_GROUP_ID, q->member_id);
    }
    if (q->session_timeout_ms < gs->cfg.min_session_timeout_ms ||
        q->session_timeout_ms > gs->cfg.max_session_timeout_ms) {
        return join_error(out, KP_ERR_INVALID_SESSION_TIMEOUT, q->member_id);
    }
    if (q->nprotocols > GRP_MAX_PROTOCOLS) {
        return join_error(out, KP_ERR_INCONSISTENT_GROUP_PROTOCOL, q->member_id);
    }
    bool unknown = q->member_id.len <= 0;
    struct grp_group *g = br_grp_find_kstr(gs, q->group_id);
    if (g == NULL) {
        if (!unknown) {
            return join_error(out, KP_ERR_UNKNOWN_MEMBER_ID, q->member_id);
        }
        g = br_grp_get_or_create(gs, q->group_id.ptr, (size_t)q->group_id.len);
        if (g == NULL) {
            return join_error(out, KP_ERR_COORDINATOR_NOT_AVAILABLE, q->member_id);
        }
    }
    if (g->state == GRP_DEAD) {
        return join_error(out, KP_ERR_COORDINATOR_NOT_AVAILABLE, q->member_id);
    }
    if (!supports_protocols(g, q)) {
        return join_error(out, KP_ERR_INCONSISTENT_GROUP_PROTOCOL, q->member_id);
    }
    int err = 0;
    if (unknown) {
        err = join_unknown(gs, q, g, waiter, out);
    } else {
        struct grp_member *m = br_grp_member_find(g, q->member_id);
        if (m != NULL) {
            err = join_known(gs, q, g, m, waiter, out);
        } else if (!pending_take(gs, g, q->member_id)) {
            return join_error(out, KP_ERR_UNKNOWN_MEMBER_ID, q->member_id);
        } else if (g->nmembers >= GRP_MAX_MEMBERS) {
            return join_error(out, KP_ERR_GROUP_MAX_SIZE_REACHED, q->member_id);
        } else {
            char *id = br_grp_dup_kstr(q->member_id);
            if (id == NULL) {
                return KP_E_NOMEM;
            }
            err = add_member_and_rebalance(gs, q, g, id, waiter, out);
        }
    }
    if (err != 0 || out->outcome != GRP_WAIT) {
        return err;
    }
    check_join_complete(gs, g);
    return 0;
}

/* ---------------------------------------------------------------- SyncGroup */

/* The leader's assignments go to the members they name; members it left
 * out get an empty one. */
static int store_assignments(struct grp_group *g, const struct grp_sync_req *q)
{
    uint8_t **copies = kp_calloc(g->nmembers == 0 ? 1 : g->nmembers, sizeof *copies);
    int32_t *lens = kp_calloc(g->nmembers == 0 ? 1 : g->nmembers, sizeof *lens);
    if (copies == NULL || lens == NULL) {
        kp_free(copies);
        kp_free(lens);
        return KP_E_NOMEM;
    }
    int err = 0;
    for (size_t i = 0; i < g->nmembers && err == 0; i++) {
        for (size_t k = 0; k < q->nassignments; k++) {
            const struct grp_assignment *as = &q->assignments[k];
            if (!kstr_is(as->member_id, g->members[i]->id)) {
                continue;
            }
            size_t n = as->assignment.len > 0 ? (size_t)as->assignment.len : 0;
            copies[i] = kp_malloc(n == 0 ? 1 : n);
            if (copies[i] == NULL) {
                err = KP_E_NOMEM;
                break;
            }
            if (n > 0) {
                memcpy(copies[i], as->assignment.ptr, n);
            }
            lens[i] = (int32_t)n;
            break;
        }
    }
    for (size_t i = 0; i < g->nmembers; i++) {
        if (err != 0) {
            kp_free(copies[i]);
        } else {
            member_set_assignment(g->members[i], copies[i], lens[i]);
        }
    }
    kp_free(copies);
    kp_free(lens);
    return err;
}

static int sync_error(struct grp_sync_out *out, int err)
{
    out->outcome = GRP_ANSWER_ERROR;
    out->err = err;
    return 0;
}

int br_grp_sync(struct br_groups *gs, const struct grp_sync_req *q, void *waiter,
                struct grp_sync_out *out)
{
    memset(out, 0, sizeof *out);
    if (q->group_id.len <= 0) {
        return sync_error(out, KP_ERR_INVALID_GROUP_ID);
    }
    struct grp_group *g = br_grp_find_kstr(gs, q->group_id);
    if (g == NULL) {
        return sync_error(out, KP_ERR_UNKNOWN_MEMBER_ID);
    }
    if (g->state == GRP_DEAD) {
        return sync_error(out, KP_ERR_COORDINATOR_NOT_AVAILABLE);
    }
    struct grp_member *m = br_grp_member_find(g, q->member_id);
    if (m == NULL) {
        return sync_error(out, KP_ERR_UNKNOWN_MEMBER_ID);
    }
    if (q->instance_id.len >= 0 && m->instance_id != NULL &&
        !kstr_is(q->instance_id, m->instance_id)) {
        return sync_error(out, KP_ERR_FENCED_INSTANCE_ID);
    }
    if (q->generation != g->generation) {
        return sync_error(out, KP_ERR_ILLEGAL_GENERATION);
    }
    switch (g->state) {
    case GRP_EMPTY:
    case GRP_DEAD:
        return sync_error(out, KP_ERR_UNKNOWN_MEMBER_ID);
    case GRP_PREPARING_REBALANCE:
        return sync_error(out, KP_ERR_REBALANCE_IN_PROGRESS);
    case GRP_STABLE:
        heartbeat_reset(gs, m);
        out->outcome = GRP_ANSWER_NOW;
        out->assignment = m->assignment;
        out->assignment_len = m->assignment_len;
        return 0;
    case GRP_COMPLETING_REBALANCE:
        break;
    }
    if (m == g->leader && store_assignments(g, q) != 0) {
        /* nothing was stored: this leader's sync fails alone (an earlier
         * one of it waiting is answered first, as a newer sync does) */
        answer_sync_waiter(gs, m, KP_ERR_REBALANCE_IN_PROGRESS, NULL, 0);
        m->awaiting_sync = false;
        return sync_error(out, KP_ERR_UNKNOWN_SERVER_ERROR);
    }
    answer_sync_waiter(gs, m, KP_ERR_REBALANCE_IN_PROGRESS, NULL, 0);
    m->sync_waiter = waiter;
    m->awaiting_sync = true;
    out->outcome = GRP_WAIT;
    out->group = g;
    out->member = m;
    if (m == g->leader) {
        /* the group stays in CompletingRebalance until its record is
         * replicated; a sync of the leader while an earlier record waits
         * appends again, and only the latest record (the assignments the
         * members hold now) settles the generation */
        uint64_t seq = 0;
        int err = br_grp_store_generation(gs, g, &seq);
        if (err != 0) {
            store_done(gs, g, err);
        } else {
            g->store_seq = seq;
            out->store_seq = seq;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- Heartbeat, LeaveGroup */

int br_grp_heartbeat(struct br_groups *gs, struct kp_str group_id, struct kp_str member_id,
                     struct kp_str instance_id, int32_t generation)
{
    struct grp_group *g = group_id.len > 0 ? br_grp_find_kstr(gs, group_id) : NULL;
    struct grp_member *m = g != NULL ? br_grp_member_find(g, member_id) : NULL;
    if (group_id.len <= 0) {
        return KP_ERR_INVALID_GROUP_ID;
    }
    if (g == NULL || g->state == GRP_EMPTY || m == NULL) {
        return KP_ERR_UNKNOWN_MEMBER_ID;
    }
    if (g->state == GRP_DEAD) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (instance_id.len >= 0 && m->instance_id != NULL && !kstr_is(instance_id, m->instance_id)) {
        return KP_ERR_FENCED_INSTANCE_ID;
    }
    if (generation != g->generation) {
        return KP_ERR_ILLEGAL_GENERATION;
    }
    heartbeat_reset(gs, m);
    /* only the join phase makes members rejoin */
    return g->state == GRP_PREPARING_REBALANCE ? KP_ERR_REBALANCE_IN_PROGRESS : KP_ERR_NONE;
}

int br_grp_leave(struct br_groups *gs, struct grp_group *g, struct kp_str member_id,
                 struct kp_str instance_id)
{
    struct grp_member *m = NULL;
    if (member_id.len > 0) {
        m = br_grp_member_find(g, member_id);
        if (m != NULL && instance_id.len >= 0 && m->instance_id != NULL &&
            !kstr_is(instance_id, m->instance_id)) {
            return KP_ERR_FENCED_INSTANCE_ID;
        }
    } else {
        m = member_by_instance(g, instance_id);
    }
    if (m == NULL) {
        /* a member id handed out but not used yet just goes */
        return member_id.len > 0 && pending_take(gs, g, member_id) ? KP_ERR_NONE
                                                                   : KP_ERR_UNKNOWN_MEMBER_ID;
    }
    br_info("group %s: member %s leaves", g->id, m->id);
    remove_member_and_update(gs, g, m, "a member left");
    return KP_ERR_NONE;
}

/* ---------------------------------------------------------------- DeleteGroups */

int br_grp_delete(struct br_groups *gs, struct kp_str group_id)
{
    struct grp_group *g = br_grp_find_kstr(gs, group_id);
    if (group_id.len < 0) {
        return KP_ERR_INVALID_GROUP_ID;
    }
    if (g == NULL || g->state == GRP_DEAD) {
        return KP_ERR_GROUP_ID_NOT_FOUND;
    }
    if (g->state != GRP_EMPTY) {
        return KP_ERR_NON_EMPTY_GROUP;
    }
    int err = br_grp_store_tombstones(gs, g);
    if (err == 0) {
        br_info("group %s deleted", g->id);
        br_grp_remove(gs, g, KP_ERR_UNKNOWN_MEMBER_ID);
    }
    return err;
}

/* ---------------------------------------------------------------- commits, admin views */

int br_grp_commit_check(struct br_groups *gs, struct grp_group *g, struct kp_str member_id,
                        int32_t generation)
{
    if (g->state == GRP_DEAD) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (generation < 0 && g->state == GRP_EMPTY) {
        return 0; /* the group only stores offsets (manual assignment) */
    }
    struct grp_member *m = br_grp_member_find(g, member_id);
    if (m == NULL) {
        return KP_ERR_UNKNOWN_MEMBER_ID;
    }
    if (generation != g->generation) {
        return KP_ERR_ILLEGAL_GENERATION;
    }
    if (g->state == GRP_COMPLETING_REBALANCE) {
        return KP_ERR_REBALANCE_IN_PROGRESS;
    }
    heartbeat_reset(gs, m);
    return 0;
}

void br_group_tps_free(struct br_group_tp *tps, size_t n)
{
    for (size_t k = 0; tps != NULL && k < n; k++) {
        kp_free(tps[k].topic);
    }
    kp_free(tps);
}

static void member_infos_free(struct br_group_member_info *ms, size_t n)
{
    for (size_t i = 0; ms != NULL && i < n; i++) {
        kp_free(ms[i].member_id);
        kp_free(ms[i].client_id);
        kp_free(ms[i].client_host);
        br_group_tps_free(ms[i].assigned, ms[i].nassigned);
    }
    kp_free(ms);
}

void br_group_infos_free(struct br_group_info *infos, size_t n)
{
    if (infos == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        kp_free(infos[i].group_id);
        kp_free(infos[i].protocol_type);
        kp_free(infos[i].protocol);
        member_infos_free(infos[i].member_list, infos[i].members);
    }
    kp_free(infos);
}

int br_grp_assignment_decode(const uint8_t *buf, int32_t len, struct br_group_tp **out,
                             size_t *n)
{
    *out = NULL;
    *n = 0;
    if (buf == NULL || len < 6) {
        return -1;
    }
    struct kp_reader r;
    kp_rd_init(&r, buf, (size_t)len);
    int16_t version = kp_rd_i16(&r);
    int32_t ntopics = kp_rd_i32(&r);
    if (r.err != 0 || version < 0 || ntopics < 0 || (size_t)ntopics > kp_rd_remaining(&r) / 6) {
        return -1;
    }
    size_t cap = 0;
    struct br_group_tp *tps = NULL;
    for (int32_t t = 0; t < ntopics; t++) {
        struct kp_str topic = kp_rd_string(&r);
        int32_t np = kp_rd_i32(&r);
        if (r.err != 0 || topic.len < 0 || np < 0 || (size_t)np > kp_rd_remaining(&r) / 4) {
            goto fail;
        }
        for (int32_t k = 0; k < np; k++) {
            int32_t partition = kp_rd_i32(&r);
            if (*n == cap) {
                cap = cap == 0 ? 8 : cap * 2;
                struct br_group_tp *grown = kp_realloc(tps, cap * sizeof *grown);
                if (grown == NULL) {
                    goto fail;
                }
                tps = grown;
            }
            tps[*n].topic = dup_mem(topic.ptr, (size_t)topic.len);
            tps[*n].partition = partition;
            if (tps[*n].topic == NULL) {
                goto fail;
            }
            (*n)++;
        }
    }
    if (r.err != 0) {
        goto fail;
    }
    *out = tps;
    return 0;
fail:
    br_group_tps_free(tps, *n);
    *n = 0;
    return -1;
}

/* The members of g as the admin API shows them. 0 or KP_E_NOMEM. */
static int member_infos(const struct grp_group *g, struct br_group_member_info **out)
{
    *out = NULL;
    if (g->nmembers == 0) {
        return 0;
    }
    struct br_group_member_info *ms = kp_calloc(g->nmembers, sizeof *ms);
    if (ms == NULL) {
        return KP_E_NOMEM;
    }
    bool consumer = g->protocol_type != NULL && strcmp(g->protocol_type, "consumer") == 0;
    for (size_t i = 0; i < g->nmembers; i++) {
        const struct grp_member *m = g->members[i];
        const char *cid = m->client_id != NULL ? m->client_id : "";
        const char *host = m->client_host != NULL ? m->client_host : "";
        ms[i].member_id = dup_mem(m->id, strlen(m->id));
        ms[i].client_id = dup_mem(cid, strlen(cid));
        ms[i].client_host = dup_mem(host, strlen(host));
        if (ms[i].member_id == NULL || ms[i].client_id == NULL || ms[i].client_host == NULL) {
            member_infos_free(ms, g->nmembers);
            return KP_E_NOMEM;
        }
        if (consumer && m->assignment != NULL) {
            (void)br_grp_assignment_decode(m->assignment, m->assignment_len, &ms[i].assigned,
                                           &ms[i].nassigned);
        }
    }
    *out = ms;
    return 0;
}

int br_groups_list(const struct br_groups *gs, struct br_group_info **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (gs == NULL || gs->ngroups == 0) {
        return 0;
    }
    struct br_group_info *infos = kp_calloc(gs->ngroups, sizeof *infos);
    if (infos == NULL) {
        return KP_E_NOMEM;
    }
    size_t k = 0;
    for (const struct grp_group *g = gs->first; g != NULL && k < gs->ngroups; g = g->next) {
        struct br_group_info *in = &infos[k++];
        bool has_protocol = g->state == GRP_STABLE || g->state == GRP_COMPLETING_REBALANCE;
        const char *proto = has_protocol && g->protocol != NULL ? g->protocol : "";
        const char *ptype = g->protocol_type != NULL ? g->protocol_type : "";
        in->group_id = dup_mem(g->id, g->id_len);
        in->protocol_type = dup_mem(ptype, strlen(ptype));
        in->protocol = dup_mem(proto, strlen(proto));
        in->state = br_grp_state_name(g->state);
        in->generation = g->generation;
        in->members = g->nmembers;
        in->committed_partitions = g->noffsets;
        if (in->group_id == NULL || in->protocol_type == NULL || in->protocol == NULL ||
            member_infos(g, &in->member_list) != 0) {
            br_group_infos_free(infos, k);
            return KP_E_NOMEM;
        }
    }
    *out = infos;
    *n = k;
    return 0;
}
