/*
 * samsa-broker: the group coordinator's lifecycle and the events members
 * send (see group.h): JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * DeleteGroups, commits and the admin views; the groups table is in
 * group_table.c, members and the state machine in members.c.
 * @locality reactor thread
 */

#include "group/coordinator_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <string.h>

/* ---------------------------------------------------------------- lifecycle */

static void group_free(struct br_groups *gs, struct grp_group *g, int err)
{
    while (g->nmembers > 0) {
        grp_member_remove(gs, g, g->members[g->nmembers - 1], err);
    }
    grp_timer_cancel(gs, &g->join_timer);
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
    size_t k = grp_fnv1a(g->id, g->id_len) & (gs->nbuckets - 1);
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
    grp_timer_init(gs, &gs->expiry, GRP_TIMER_EXPIRY, gs);
    if (grp_table_grow(gs) != 0) {
        kp_free(gs);
        return NULL;
    }
    grp_timer_arm(gs, &gs->expiry, grp_now_mono(gs) + gs->cfg.retention_check_interval_ms);
    return gs;
}

void br_groups_answer_all(struct br_groups *gs)
{
    if (gs == NULL) {
        return;
    }
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        for (size_t i = 0; i < g->nmembers; i++) {
            grp_member_answer_waiters(gs, g->members[i], KP_ERR_NOT_COORDINATOR);
        }
    }
}

void br_groups_free(struct br_groups *gs)
{
    if (gs == NULL) {
        return;
    }
    br_groups_answer_all(gs);
    grp_timer_cancel(gs, &gs->expiry);
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
        grp_session_expired(gs, t->obj);
        break;
    case GRP_TIMER_JOIN:
        grp_join_timer_fired(gs, t->obj);
        break;
    case GRP_TIMER_EXPIRY:
        br_grp_offsets_expire(gs);
        grp_timer_arm(gs, &gs->expiry, grp_now_mono(gs) + gs->cfg.retention_check_interval_ms);
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
    grp_answer_join_waiter(gs, m, KP_ERR_REBALANCE_IN_PROGRESS);
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
    grp_timer_init(gs, &m->session, GRP_TIMER_SESSION, m);
    m->client_id = br_grp_dup_kstr(q->client_id);
    m->client_host = br_grp_dup_kstr(q->client_host);
    m->instance_id = q->instance_id.len >= 0 ? br_grp_dup_kstr(q->instance_id) : NULL;
    m->session_timeout_ms = q->session_timeout_ms;
    m->rebalance_timeout_ms = q->rebalance_timeout_ms;
    char *ptype = g->nmembers == 0 ? br_grp_dup_kstr(q->protocol_type) : NULL;
    if (m->client_id == NULL || m->client_host == NULL ||
        (q->instance_id.len >= 0 && m->instance_id == NULL) ||
        (g->nmembers == 0 && ptype == NULL) || grp_member_set_protocols(m, q) != 0) {
        kp_free(ptype);
        grp_member_free(gs, m);
        return KP_E_NOMEM;
    }
    if (g->nmembers == g->members_cap) {
        size_t cap = g->members_cap == 0 ? 4 : g->members_cap * 2;
        struct grp_member **nm = kp_realloc(g->members, cap * sizeof(struct grp_member *));
        if (nm == NULL) {
            kp_free(ptype);
            grp_member_free(gs, m);
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
    grp_timer_arm(gs, &m->session, grp_now_mono(gs) + GRP_NEW_MEMBER_JOIN_TIMEOUT_MS);
    br_debug("group %s: member %s joins (client %s, %s)", g->id, m->id, m->client_id,
             m->client_host);
    grp_maybe_prepare_rebalance(gs, g, "a new member joined");
    return 0;
}

static int update_member_and_rebalance(struct br_groups *gs, const struct grp_join_req *q,
                                       struct grp_group *g, struct grp_member *m, void *waiter,
                                       struct grp_join_out *out)
{
    int err = grp_member_set_protocols(m, q);
    if (err != 0) {
        return err;
    }
    m->session_timeout_ms = q->session_timeout_ms;
    m->rebalance_timeout_ms = q->rebalance_timeout_ms;
    wait_join(gs, m, waiter, out);
    grp_maybe_prepare_rebalance(gs, g, "a member rejoined with new metadata");
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
    if (g->protocol_type == NULL || !grp_kstr_is(q->protocol_type, g->protocol_type)) {
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
    if (iid.len >= 0 && m->instance_id != NULL && !grp_kstr_is(iid, m->instance_id)) {
        return join_error(out, KP_ERR_FENCED_INSTANCE_ID, q->member_id);
    }
    switch (g->state) {
    case GRP_PREPARING_REBALANCE:
        return update_member_and_rebalance(gs, q, g, m, waiter, out);
    case GRP_COMPLETING_REBALANCE:
        if (grp_member_matches(m, q)) {
            return join_now(g, m, out);
        }
        return update_member_and_rebalance(gs, q, g, m, waiter, out);
    case GRP_STABLE:
        if (m != g->leader && grp_member_matches(m, q)) {
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
    struct grp_member *old = grp_member_by_instance(g, q->instance_id);
    if (old == NULL && g->nmembers >= GRP_MAX_MEMBERS) {
        return join_error(out, KP_ERR_GROUP_MAX_SIZE_REACHED, q->member_id);
    }
    char *id = grp_make_member_id(gs, q->client_id);
    if (id == NULL) {
        return KP_E_NOMEM;
    }
    if (old != NULL) {
        /* a static member came back: its old incarnation is fenced */
        br_info("group %s: static member %s replaced by %s", g->id, old->id, id);
        grp_remove_member_and_update(gs, g, old, "a static member rejoined");
    } else if (q->require_known_id && q->instance_id.len < 0) {
        /* v4+: hand out the id, the client joins again with it */
        int e = grp_pending_add(gs, g, id, grp_now_mono(gs) + q->session_timeout_ms);
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
        } else if (!grp_pending_take(gs, g, q->member_id)) {
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
    grp_check_join_complete(gs, g);
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
            if (!grp_kstr_is(as->member_id, g->members[i]->id)) {
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
            grp_member_set_assignment(g->members[i], copies[i], lens[i]);
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
        !grp_kstr_is(q->instance_id, m->instance_id)) {
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
        grp_heartbeat_reset(gs, m);
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
        grp_answer_sync_waiter(gs, m, KP_ERR_REBALANCE_IN_PROGRESS, NULL, 0);
        m->awaiting_sync = false;
        return sync_error(out, KP_ERR_UNKNOWN_SERVER_ERROR);
    }
    grp_answer_sync_waiter(gs, m, KP_ERR_REBALANCE_IN_PROGRESS, NULL, 0);
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
            grp_store_done(gs, g, err);
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
    if (instance_id.len >= 0 && m->instance_id != NULL && !grp_kstr_is(instance_id, m->instance_id)) {
        return KP_ERR_FENCED_INSTANCE_ID;
    }
    if (generation != g->generation) {
        return KP_ERR_ILLEGAL_GENERATION;
    }
    grp_heartbeat_reset(gs, m);
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
            !grp_kstr_is(instance_id, m->instance_id)) {
            return KP_ERR_FENCED_INSTANCE_ID;
        }
    } else {
        m = grp_member_by_instance(g, instance_id);
    }
    if (m == NULL) {
        /* a member id handed out but not used yet just goes */
        return member_id.len > 0 && grp_pending_take(gs, g, member_id) ? KP_ERR_NONE
                                                                   : KP_ERR_UNKNOWN_MEMBER_ID;
    }
    br_info("group %s: member %s leaves", g->id, m->id);
    grp_remove_member_and_update(gs, g, m, "a member left");
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
    grp_heartbeat_reset(gs, m);
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
            tps[*n].topic = grp_dup_mem(topic.ptr, (size_t)topic.len);
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
        ms[i].member_id = grp_dup_mem(m->id, strlen(m->id));
        ms[i].client_id = grp_dup_mem(cid, strlen(cid));
        ms[i].client_host = grp_dup_mem(host, strlen(host));
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
        in->group_id = grp_dup_mem(g->id, g->id_len);
        in->protocol_type = grp_dup_mem(ptype, strlen(ptype));
        in->protocol = grp_dup_mem(proto, strlen(proto));
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

/* ---------------------------------------------------------------- commits */

int br_grp_commit(struct br_groups *gs, struct kp_str group_id, struct kp_str member_id,
                  int32_t generation, int64_t retention_ms, struct grp_commit *items, size_t n,
                  uint64_t *seq)
{
    int top = 0;
    struct grp_group *g = NULL;
    if (group_id.len < 0) {
        top = KP_ERR_INVALID_GROUP_ID;
    } else {
        g = br_grp_find(gs, group_id.ptr, (size_t)group_id.len);
        if (g == NULL && generation < 0) {
            /* a group the coordinator does not know only stores offsets */
            g = br_grp_get_or_create(gs, group_id.ptr, (size_t)group_id.len);
            if (g == NULL) {
                top = KP_ERR_COORDINATOR_NOT_AVAILABLE;
            }
        } else if (g == NULL) {
            top = KP_ERR_ILLEGAL_GENERATION;
        }
    }
    if (top == 0) {
        top = br_grp_commit_check(gs, g, member_id, generation);
    }
    return br_grp_offsets_store(gs, g, top, retention_ms, -1, -1, items, n, seq);
}

int br_grp_txn_commit(struct br_groups *gs, struct kp_str group_id, int64_t producer_id,
                      int16_t producer_epoch, struct grp_commit *items, size_t n, uint64_t *seq)
{
    int top = 0;
    struct grp_group *g = NULL;
    if (group_id.len < 0) {
        top = KP_ERR_INVALID_GROUP_ID;
    } else {
        g = br_grp_get_or_create(gs, group_id.ptr, (size_t)group_id.len);
        if (g == NULL) {
            top = KP_ERR_COORDINATOR_NOT_AVAILABLE;
        }
    }
    return br_grp_offsets_store(gs, g, top, -1, producer_id, producer_epoch, items, n, seq);
}

/* ---------------------------------------------------------------- expiry */

/* Kafka 2.1+ (KIP-211): offsets expire only while the group is Empty:
 * at their expire timestamp when the commit set one, else
 * offsets.retention.minutes after the group became empty (after the commit
 * for a group that never had members). An Empty group without offsets or
 * members goes, with a tombstone for its metadata. */
void br_grp_offsets_expire(struct br_groups *gs)
{
    int64_t now = gs->ops->now_wall_ms(gs->ctx);
    int64_t retention = (int64_t)gs->cfg.offsets_retention_minutes * 60000;
    int64_t now_mono = gs->ops->now_mono_ms(gs->ctx);
    size_t expired_total = 0;
    struct grp_group *next = NULL;
    for (struct grp_group *g = gs->first; g != NULL; g = next) {
        next = g->next;
        if (g->state != GRP_EMPTY) {
            continue;
        }
        if (g->noffsets > 0) {
            expired_total += br_grp_expire_offsets_of(gs, g, now, retention);
        }
        /* pending member ids keep a group alive for their short life */
        bool pending = false;
        for (size_t i = 0; i < g->npending; i++) {
            pending = pending || g->pending[i].deadline_ms > now_mono;
        }
        if (!br_grp_has_offsets(g) && g->nmembers == 0 && !pending) {
            if (g->protocol_type != NULL || g->generation > 0) {
                if (br_grp_store_tombstones(gs, g) != 0) {
                    br_warn("group %s: writing its tombstone failed", g->id);
                    continue;
                }
            }
            br_debug("group %s: empty, without offsets: removed", g->id);
            br_grp_remove(gs, g, KP_ERR_UNKNOWN_MEMBER_ID);
        }
    }
    if (expired_total > 0) {
        br_info("%zu committed offset(s) expired", expired_total);
    }
}
