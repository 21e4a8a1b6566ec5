/*
 * samsa-broker: the group coordinator's members, pending member ids and
 * the state machine that moves a group through a rebalance (see group.h).
 * @locality reactor thread
 */
#include "group/coordinator_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <string.h>

/* ---------------------------------------------------------------- members */

void grp_member_free(struct br_groups *gs, struct grp_member *m)
{
    if (m == NULL) {
        return;
    }
    grp_timer_cancel(gs, &m->session);
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
        if (grp_kstr_is(id, g->members[i]->id)) {
            return g->members[i];
        }
    }
    return NULL;
}

struct grp_member *grp_member_by_instance(struct grp_group *g, struct kp_str iid)
{
    if (iid.len < 0) {
        return NULL;
    }
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->members[i]->instance_id != NULL && grp_kstr_is(iid, g->members[i]->instance_id)) {
            return g->members[i];
        }
    }
    return NULL;
}

/* A member's session deadline starts again (heartbeat, commit, join). */
void grp_heartbeat_reset(struct br_groups *gs, struct grp_member *m)
{
    grp_timer_arm(gs, &m->session, grp_now_mono(gs) + m->session_timeout_ms);
}

/* Replaces the member's protocols with the request's. */
int grp_member_set_protocols(struct grp_member *m, const struct grp_join_req *q)
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
bool grp_member_matches(const struct grp_member *m, const struct grp_join_req *q)
{
    if (q->nprotocols != m->nprotocols) {
        return false;
    }
    for (size_t i = 0; i < m->nprotocols; i++) {
        const struct grp_join_protocol *p = &q->protocols[i];
        int32_t mlen = p->metadata.len > 0 ? p->metadata.len : 0;
        if (!grp_kstr_is(p->name, m->protocols[i].name) || mlen != m->protocols[i].metadata_len ||
            (mlen > 0 && memcmp(p->metadata.ptr, m->protocols[i].metadata, (size_t)mlen) != 0)) {
            return false;
        }
    }
    return true;
}

void grp_member_set_assignment(struct grp_member *m, uint8_t *a, int32_t len)
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
char *grp_make_member_id(struct br_groups *gs, struct kp_str client_id)
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
void grp_member_remove(struct br_groups *gs, struct grp_group *g, struct grp_member *m, int err)
{
    grp_member_answer_waiters(gs, m, err);
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
    grp_member_free(gs, m);
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

int grp_pending_add(struct br_groups *gs, struct grp_group *g, char *id, int64_t deadline)
{
    pending_prune(g, grp_now_mono(gs));
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
bool grp_pending_take(struct br_groups *gs, struct grp_group *g, struct kp_str id)
{
    pending_prune(g, grp_now_mono(gs));
    for (size_t i = 0; i < g->npending; i++) {
        if (grp_kstr_is(id, g->pending[i].id)) {
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
void grp_check_join_complete(struct br_groups *gs, struct grp_group *g)
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
        grp_member_set_assignment(m, NULL, 0);
        if (m->awaiting_sync) {
            m->awaiting_sync = false;
            grp_answer_sync_waiter(gs, m, err, NULL, 0);
            grp_heartbeat_reset(gs, m);
        }
    }
}

static void prepare_rebalance(struct br_groups *gs, struct grp_group *g, const char *reason)
{
    if (g->state == GRP_COMPLETING_REBALANCE) {
        reset_and_propagate_assignment_error(gs, g, KP_ERR_REBALANCE_IN_PROGRESS);
    }
    int64_t now = grp_now_mono(gs);
    int32_t timeout = group_rebalance_timeout(g);
    if (g->state == GRP_EMPTY) {
        /* Kafka's InitialDelayedJoin: wait for more members of a new group */
        int32_t delay = gs->cfg.initial_rebalance_delay_ms;
        g->initial_delay = true;
        g->new_member_added = false;
        g->initial_remaining_ms = timeout > delay ? timeout - delay : 0;
        grp_timer_arm(gs, &g->join_timer, now + delay);
    } else {
        g->initial_delay = false;
        grp_timer_arm(gs, &g->join_timer, now + timeout);
    }
    br_info("group %s: preparing to rebalance (generation %" PRId32 ", %zu member(s)): %s", g->id,
            g->generation, g->nmembers, reason);
    grp_set_state(gs, g, GRP_PREPARING_REBALANCE);
    /* Kafka's tryCompleteElseWatch: done already when nobody is missing */
    grp_check_join_complete(gs, g);
}

void grp_maybe_prepare_rebalance(struct br_groups *gs, struct grp_group *g, const char *reason)
{
    if (g->state == GRP_STABLE || g->state == GRP_COMPLETING_REBALANCE || g->state == GRP_EMPTY) {
        prepare_rebalance(gs, g, reason);
    }
}

/* Kafka's removeMemberAndUpdateGroup (LeaveGroup, session expiry). */
void grp_remove_member_and_update(struct br_groups *gs, struct grp_group *g,
                                  struct grp_member *m, const char *reason)
{
    grp_member_remove(gs, g, m, KP_ERR_UNKNOWN_MEMBER_ID);
    switch (g->state) {
    case GRP_DEAD:
    case GRP_EMPTY:
        break;
    case GRP_STABLE:
    case GRP_COMPLETING_REBALANCE:
        grp_maybe_prepare_rebalance(gs, g, reason);
        break;
    case GRP_PREPARING_REBALANCE:
        grp_check_join_complete(gs, g);
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
    grp_timer_cancel(gs, &g->join_timer);
    g->initial_delay = false;
    for (size_t i = g->nmembers; i > 0; i--) {
        struct grp_member *m = g->members[i - 1];
        if (!m->awaiting_join) {
            br_info("group %s: member %s did not rejoin in time: removed", g->id, m->id);
            grp_member_remove(gs, g, m, KP_ERR_UNKNOWN_MEMBER_ID);
        }
    }
    g->generation = g->generation == INT32_MAX ? 1 : g->generation + 1;
    kp_free(g->protocol);
    g->protocol = NULL;
    if (g->nmembers == 0) {
        grp_set_state(gs, g, GRP_EMPTY);
        br_info("group %s with generation %" PRId32 " is now empty", g->id, g->generation);
        br_grp_store_group(gs, g);
        return;
    }
    const char *p = select_protocol(g);
    g->protocol = grp_dup_mem(p != NULL ? p : "", p != NULL ? strlen(p) : 0);
    if (g->leader == NULL) {
        g->leader = g->members[0];
    }
    grp_set_state(gs, g, GRP_COMPLETING_REBALANCE);
    br_info("group %s: generation %" PRId32 " with %zu member(s), protocol %s, leader %s", g->id,
            g->generation, g->nmembers, g->protocol != NULL ? g->protocol : "?", g->leader->id);
    /* answering may kill a connection, which only takes waiters back:
     * the member array does not change under this loop */
    for (size_t i = 0; i < g->nmembers; i++) {
        struct grp_member *m = g->members[i];
        m->awaiting_join = false;
        m->is_new = false;
        grp_answer_join_waiter(gs, m, KP_ERR_NONE);
        grp_heartbeat_reset(gs, m);
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
        grp_answer_sync_waiter(gs, m, KP_ERR_NONE, m->assignment, m->assignment_len);
        grp_heartbeat_reset(gs, m);
    }
}

/* The leader's group record was replicated (err 0) or not (err: what the
 * syncs get): Kafka 2.0's storeGroup callback in doSyncGroup. */
void grp_store_done(struct br_groups *gs, struct grp_group *g, int err)
{
    g->store_seq = 0;
    if (err == KP_ERR_NONE) {
        set_and_propagate_assignment(gs, g);
        grp_set_state(gs, g, GRP_STABLE);
        return;
    }
    br_warn("group %s: the record of generation %" PRId32 " was not stored (%s): the syncs "
            "answered so, and the group rebalances",
            g->id, g->generation, kp_err_name(err));
    reset_and_propagate_assignment_error(gs, g, err);
    grp_maybe_prepare_rebalance(gs, g, "the group's record was not stored");
}

bool br_grp_store_settle(struct br_groups *gs, const char *group_id, size_t len, uint64_t seq,
                         int append_err)
{
    struct grp_group *g = gs != NULL && seq != 0 ? br_grp_find(gs, group_id, len) : NULL;
    if (g == NULL || g->state != GRP_COMPLETING_REBALANCE || g->store_seq != seq) {
        return false;
    }
    grp_store_done(gs, g, append_err == KP_ERR_NONE ? KP_ERR_NONE : br_grp_store_error(append_err));
    return true;
}

void grp_join_timer_fired(struct br_groups *gs, struct grp_group *g)
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
        grp_timer_arm(gs, &g->join_timer, grp_now_mono(gs) + delay);
        return;
    }
    complete_join(gs, g);
}

void grp_session_expired(struct br_groups *gs, struct grp_member *m)
{
    struct grp_group *g = m->group;
    /* Kafka's shouldKeepAlive: a member waiting in a join (unless it is new
     * and past the new-member timeout) or for its assignment stays */
    if ((m->awaiting_join && !m->is_new) || m->awaiting_sync) {
        grp_heartbeat_reset(gs, m);
        return;
    }
    br_info("group %s: member %s timed out (session timeout %" PRId32 " ms): removed", g->id, m->id,
            m->session_timeout_ms);
    grp_remove_member_and_update(gs, g, m, "a member's session timed out");
}
