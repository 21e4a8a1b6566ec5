/*
 * samsa-broker: the group coordinator's membership state machine and the
 * group APIs but OffsetCommit/OffsetFetch (see group.h).
 *
 * The semantics follow Kafka's GroupCoordinator of the 2.x line (the
 * classic protocol): Empty -> PreparingRebalance (joins park until every
 * member rejoined or the rebalance timeout; a new group waits
 * group.initial.rebalance.delay.ms first) -> CompletingRebalance (the
 * leader got every member's metadata; followers' SyncGroups park until the
 * leader's) -> Stable. Heartbeats answer REBALANCE_IN_PROGRESS only in
 * PreparingRebalance. Static membership (group.instance.id) is kept to
 * this much: a join with a known instance id and no member id replaces the
 * old member.
 * @locality reactor thread
 */
#define _GNU_SOURCE

#include "server/group_internal.h"

#include "base/logging.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* A group deadline passed (session, join, offset expiry: grp_timer.kind). */
static void groups_timer_fire(void *ctx, struct br_timer *t);
static const struct br_timer_ops group_timer = {"group coordinator", groups_timer_fire};

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

/* A NUL-terminated copy of a wire string; a null one becomes "". */
static char *dup_kstr(struct kp_str s)
{
    return dup_mem(s.ptr, s.len > 0 ? (size_t)s.len : 0);
}

static struct kp_str cstr(const char *s)
{
    return kp_str_c(s != NULL ? s : "");
}

static bool kstr_is(struct kp_str a, const char *s)
{
    size_t n = strlen(s);
    return a.len >= 0 && (size_t)a.len == n && (n == 0 || memcmp(a.ptr, s, n) == 0);
}

static void *arena_array(struct kp_arena *a, size_t n, size_t size)
{
    return kp_arena_alloc(a, (n == 0 ? 1 : n) * size);
}

static struct br_net *net_of(struct br_groups *gs)
{
    return gs->b->net;
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

static void set_state(struct grp_group *g, enum grp_state s)
{
    br_debug("group %s: %s -> %s (generation %" PRId32 ")", g->id, br_grp_state_name(g->state),
             br_grp_state_name(s), g->generation);
    g->state = s;
    g->state_ts = br_now_wall_ms();
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

static struct grp_group *find_kstr(struct br_groups *gs, struct kp_str id)
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
    g->join_timer.kind = GRP_TIMER_JOIN;
    g->join_timer.obj = g;
    br_timer_init(&g->join_timer.timer, &group_timer, &g->join_timer);
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

/* ---------------------------------------------------------------- parked requests */

/* Unlinks a park from its member; the caller answers or drops the slot. */
static void park_unlink(struct grp_park *pk)
{
    struct grp_member *m = pk->member;
    if (m != NULL) {
        if (m->join_park == pk) {
            m->join_park = NULL;
        }
        if (m->sync_park == pk) {
            m->sync_park = NULL;
        }
    }
    pk->member = NULL;
}

static void park_free(struct grp_park *pk)
{
    kp_free(pk->answer);
    kp_free(pk);
}

static bool park_ready(void *ctx, struct br_delayed *d)
{
    (void)ctx;
    const struct grp_park *pk = d->owner;
    return pk->answered;
}

static void park_answer_join_error(struct grp_park *pk, int err);
static void park_answer_sync(struct grp_park *pk, int err, const uint8_t *assignment, int32_t len);

/* Out of the purgatory: its answer into the slot, which becomes ready. The
 * park is freed first: marking the slot ready may send, fail and kill the
 * connection, which cancels the other parks it holds. */
static void park_complete(void *ctx, struct br_delayed *d, bool expired)
{
    (void)ctx;
    (void)expired;
    struct grp_park *pk = d->owner;
    if (!pk->answered) {
        /* forced before the group answered (the broker stops) */
        if (pk->what == GRP_PARK_JOIN) {
            park_answer_join_error(pk, KP_ERR_NOT_COORDINATOR);
        } else {
            park_answer_sync(pk, KP_ERR_NOT_COORDINATOR, NULL, 0);
        }
    }
    struct br_conn *conn = pk->conn;
    struct br_slot *slot = pk->slot;
    bool close = pk->close_after;
    uint8_t *answer = pk->answer;
    size_t len = pk->answer_len;
    pk->answer = NULL;
    park_free(pk);
    if (answer != NULL && br_slot_add_mem(slot, answer, len) != 0) {
        br_error("a group response to %s: out of memory: closing the connection",
                 br_conn_peer(conn));
        close = true;
    }
    br_slot_ready(conn, slot);
    if (close) {
        br_conn_close_after_flush(conn);
    }
}

static const struct br_delayed_ops park_ops = {
    .name = "JoinGroup/SyncGroup",
    .ready = park_ready,
    .complete = park_complete,
};

static struct grp_park *park_new(struct br_req *r, struct grp_member *m, enum grp_park_kind what)
{
    struct grp_park *pk = kp_calloc(1, sizeof *pk);
    if (pk == NULL) {
        return NULL;
    }
    pk->park.kind = BR_PARK_GROUP;
    pk->what = what;
    pk->member = m;
    pk->gs = r->b->groups;
    pk->conn = r->conn;
    pk->slot = r->slot;
    pk->correlation_id = r->hdr->CorrelationId;
    pk->version = r->version;
    pk->max_bytes = (size_t)r->b->cfg.response_max_bytes;
    br_slot_set_parked(r->slot, &pk->park);
    br_delayed_init(&pk->delayed, &park_ops, pk, &pk->link, 1);
    br_delayed_watch(&pk->delayed, 0, &m->group->parks);
    /* no deadline of its own: the group's timers (join, session) answer it */
    br_purgatory_park(&r->b->purgatory, &pk->delayed, INT64_MAX);
    return pk;
}

/* Encodes resp (of the park's API and version) into an owned buffer. */
static int encode_answer(struct grp_park *pk, int16_t api_key, const void *resp, size_t max)
{
    struct kp_writer w;
    kp_wr_init(&w, max);
    int err = kp_response_encode(&w, api_key, pk->version, pk->correlation_id, resp);
    if (err != 0) {
        kp_wr_free(&w);
        return err;
    }
    kp_free(pk->answer);
    pk->answer = kp_wr_steal(&w, &pk->answer_len);
    return 0;
}

static void join_error_fill(struct kp_JoinGroupResponse *resp, int err, struct kp_str member_id);

/* The park's answer is resp: encoded now, unlinked from its member, handed
 * to the slot at the end of the turn (park_complete). */
static void park_answer(struct grp_park *pk, int16_t api_key, const void *resp)
{
    if (pk->answered) {
        return;
    }
    int32_t corr = pk->correlation_id;
    int16_t version = pk->version;
    char who[300];
    (void)snprintf(
        who, sizeof who, "member %s (client \"%.100s\")", pk->member != NULL ? pk->member->id : "?",
        pk->member != NULL && pk->member->client_id != NULL ? pk->member->client_id : "");
    park_unlink(pk);
    pk->answered = true;
    int err = encode_answer(pk, api_key, resp, pk->max_bytes);
    if (err != 0) {
        /* Kafka's answer to a request that failed: the API's error response
         * (JoinGroupRequest/SyncGroupRequest.getErrorResponse), which is
         * small whatever the ceiling */
        struct kp_JoinGroupResponse join;
        struct kp_SyncGroupResponse sync;
        join_error_fill(&join, KP_ERR_UNKNOWN_SERVER_ERROR, kp_str_c(""));
        kp_SyncGroupResponse_init(&sync);
        sync.ErrorCode = (int16_t)kp_err_to_wire(KP_ERR_UNKNOWN_SERVER_ERROR);
        sync.Assignment.ptr = (const uint8_t *)"";
        sync.Assignment.len = 0;
        int aerr = encode_answer(
            pk, api_key, api_key == KP_API_JOIN_GROUP ? (const void *)&join : (const void *)&sync,
            (size_t)INT32_MAX);
        br_error("%s v%d response to %s of %s (correlation %" PRId32 "): %s: %s",
                 kp_api_find(api_key)->name, version, br_conn_peer(pk->conn), who, corr,
                 err == KP_E_TOO_LARGE ? "the response is larger than response.max.bytes allows"
                                       : kp_err_str(err),
                 aerr == 0 ? "answered UNKNOWN_SERVER_ERROR" : "closing the connection");
        pk->close_after = aerr != 0;
    }
    br_purgatory_wake_op(&pk->gs->b->purgatory, &pk->delayed);
}

static void join_error_fill(struct kp_JoinGroupResponse *resp, int err, struct kp_str member_id)
{
    kp_JoinGroupResponse_init(resp);
    resp->ErrorCode = (int16_t)kp_err_to_wire(err);
    resp->GenerationId = -1;
    resp->ProtocolName = kp_str_c("");
    resp->Leader = kp_str_c("");
    resp->MemberId = member_id.len >= 0 ? member_id : kp_str_c("");
    resp->Members.items = NULL;
    resp->Members.count = 0;
}

static void park_answer_join_error(struct grp_park *pk, int err)
{
    struct kp_JoinGroupResponse resp;
    struct grp_member *m = pk->member;
    /* the id goes with the error only while the member still exists */
    join_error_fill(&resp, err,
                    err == KP_ERR_UNKNOWN_MEMBER_ID || m == NULL ? kp_str_c("") : cstr(m->id));
    park_answer(pk, KP_API_JOIN_GROUP, &resp);
}

static void park_answer_sync(struct grp_park *pk, int err, const uint8_t *assignment, int32_t len)
{
    struct kp_SyncGroupResponse resp;
    kp_SyncGroupResponse_init(&resp);
    resp.ErrorCode = (int16_t)kp_err_to_wire(err);
    resp.Assignment.ptr = assignment != NULL ? assignment : (const uint8_t *)"";
    resp.Assignment.len = assignment != NULL ? len : 0;
    park_answer(pk, KP_API_SYNC_GROUP, &resp);
}

/* Answers whatever the member has parked with err. */
static void member_answer_parks(struct grp_member *m, int err)
{
    if (m->join_park != NULL) {
        park_answer_join_error(m->join_park, err);
    }
    if (m->sync_park != NULL) {
        park_answer_sync(m->sync_park, err, NULL, 0);
    }
}

void br_groups_cancel_parked(struct br_broker *b, void *parked)
{
    struct grp_park *pk = parked;
    br_purgatory_cancel(&b->purgatory, &pk->delayed);
    struct grp_member *m = pk->member;
    if (m != NULL && pk->what == GRP_PARK_SYNC) {
        /* nobody waits for the assignment any more: the session timeout
         * decides about the member from now on */
        m->awaiting_sync = false;
    }
    /* a cancelled join keeps awaiting_join: the member counts as joined,
     * as in Kafka, whose join callback answers into a closed socket */
    park_unlink(pk);
    park_free(pk);
}

/* ---------------------------------------------------------------- members */

static void member_free(struct br_groups *gs, struct grp_member *m)
{
    if (m == NULL) {
        return;
    }
    if (gs->b->net != NULL) {
        br_timer_cancel(net_of(gs), &m->session.timer);
    }
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

struct grp_member *br_grp_member_find(struct grp_group *g, struct kp_str id)
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

void br_grp_heartbeat_reset(struct br_groups *gs, struct grp_member *m)
{
    br_timer_arm(net_of(gs), &m->session.timer, br_now_mono_ms() + m->session_timeout_ms);
}

/* Replaces the member's protocols with the request's. */
static int member_set_protocols(struct grp_member *m, const struct kp_JoinGroupRequest *q)
{
    size_t n = (size_t)q->Protocols.count;
    struct grp_protocol *ps = kp_calloc(n == 0 ? 1 : n, sizeof *ps);
    if (ps == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct kp_JoinGroupRequest_JoinGroupRequestProtocol *p = &q->Protocols.items[i];
        size_t mlen = p->Metadata.len > 0 ? (size_t)p->Metadata.len : 0;
        ps[i].name = dup_kstr(p->Name);
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
            memcpy(ps[i].metadata, p->Metadata.ptr, mlen);
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

static const struct grp_protocol *member_protocol(const struct grp_member *m, const char *name)
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
static bool member_matches(const struct grp_member *m, const struct kp_JoinGroupRequest *q)
{
    if ((size_t)q->Protocols.count != m->nprotocols) {
        return false;
    }
    for (size_t i = 0; i < m->nprotocols; i++) {
        const struct kp_JoinGroupRequest_JoinGroupRequestProtocol *p = &q->Protocols.items[i];
        int32_t mlen = p->Metadata.len > 0 ? p->Metadata.len : 0;
        if (!kstr_is(p->Name, m->protocols[i].name) || mlen != m->protocols[i].metadata_len ||
            (mlen > 0 && memcmp(p->Metadata.ptr, m->protocols[i].metadata, (size_t)mlen) != 0)) {
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

/* "/127.0.0.1" from "127.0.0.1:port", as Kafka shows a client's host. */
static char *client_host_of(const struct br_conn *c)
{
    const char *peer = br_conn_peer(c);
    const char *colon = strrchr(peer, ':');
    size_t n = colon != NULL ? (size_t)(colon - peer) : strlen(peer);
    char buf[80];
    int len = snprintf(buf, sizeof buf, "/%.*s", (int)(n < 64 ? n : 64), peer);
    return dup_mem(buf, len > 0 ? (size_t)len : 0);
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

/* Takes the member out of the group and frees it; its parked requests are
 * answered with err first. The leader passes to the first member left. */
static void member_remove(struct br_groups *gs, struct grp_group *g, struct grp_member *m, int err)
{
    member_answer_parks(m, err);
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

static int pending_add(struct grp_group *g, char *id, int64_t deadline)
{
    pending_prune(g, br_now_mono_ms());
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
static bool pending_take(struct grp_group *g, struct kp_str id)
{
    pending_prune(g, br_now_mono_ms());
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

/* Every parked SyncGroup gets err; assignments are forgotten. */
static void reset_and_propagate_assignment_error(struct br_groups *gs, struct grp_group *g, int err)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        struct grp_member *m = g->members[i];
        member_set_assignment(m, NULL, 0);
        if (m->awaiting_sync) {
            m->awaiting_sync = false;
            if (m->sync_park != NULL) {
                park_answer_sync(m->sync_park, err, NULL, 0);
            }
            br_grp_heartbeat_reset(gs, m);
        }
    }
}

static void prepare_rebalance(struct br_groups *gs, struct grp_group *g, const char *reason)
{
    if (g->state == GRP_COMPLETING_REBALANCE) {
        reset_and_propagate_assignment_error(gs, g, KP_ERR_REBALANCE_IN_PROGRESS);
    }
    int64_t now = br_now_mono_ms();
    int32_t timeout = group_rebalance_timeout(g);
    if (g->state == GRP_EMPTY) {
        /* Kafka's InitialDelayedJoin: wait for more members of a new group */
        int32_t delay = gs->b->cfg.group_initial_rebalance_delay_ms;
        g->initial_delay = true;
        g->new_member_added = false;
        g->initial_remaining_ms = timeout > delay ? timeout - delay : 0;
        br_timer_arm(net_of(gs), &g->join_timer.timer, now + delay);
    } else {
        g->initial_delay = false;
        br_timer_arm(net_of(gs), &g->join_timer.timer, now + timeout);
    }
    br_info("group %s: preparing to rebalance (generation %" PRId32 ", %zu member(s)): %s", g->id,
            g->generation, g->nmembers, reason);
    set_state(g, GRP_PREPARING_REBALANCE);
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
            all = member_protocol(g->members[i], cand) != NULL;
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
                bool candidate = member_protocol(first, p) != NULL;
                for (size_t j = 1; j < g->nmembers && candidate; j++) {
                    candidate = member_protocol(g->members[j], p) != NULL;
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

/* Kafka's supportsProtocols: an empty group takes any non-empty type and
 * protocol list; otherwise the type must match and one protocol must be
 * supported by every member. */
static bool supports_protocols(const struct grp_group *g, const struct kp_JoinGroupRequest *q)
{
    if (g->nmembers == 0) {
        return q->ProtocolType.len > 0 && q->Protocols.count > 0;
    }
    if (g->protocol_type == NULL || !kstr_is(q->ProtocolType, g->protocol_type)) {
        return false;
    }
    for (int32_t k = 0; k < q->Protocols.count; k++) {
        char name[256];
        struct kp_str pn = q->Protocols.items[k].Name;
        if (pn.len < 0 || (size_t)pn.len >= sizeof name) {
            continue;
        }
        memcpy(name, pn.ptr, (size_t)pn.len);
        name[pn.len] = '\0';
        bool all = true;
        for (size_t i = 0; i < g->nmembers && all; i++) {
            all = member_protocol(g->members[i], name) != NULL;
        }
        if (all) {
            return true;
        }
    }
    return false;
}

/* The JoinGroup answer of the current generation for m; the leader gets
 * every member's metadata for the chosen protocol. Arrays in `a`. */
static int join_result(const struct grp_group *g, const struct grp_member *m, struct kp_arena *a,
                       struct kp_JoinGroupResponse *resp)
{
    kp_JoinGroupResponse_init(resp);
    resp->ErrorCode = KP_ERR_NONE;
    resp->GenerationId = g->generation;
    resp->ProtocolName = cstr(g->protocol);
    resp->Leader = cstr(g->leader != NULL ? g->leader->id : NULL);
    resp->MemberId = cstr(m->id);
    resp->Members.items = NULL;
    resp->Members.count = 0;
    if (m != g->leader) {
        return 0;
    }
    resp->Members.items = arena_array(a, g->nmembers, sizeof *resp->Members.items);
    if (resp->Members.items == NULL) {
        return KP_E_NOMEM;
    }
    resp->Members.count = (int32_t)g->nmembers;
    for (size_t i = 0; i < g->nmembers; i++) {
        const struct grp_member *x = g->members[i];
        struct kp_JoinGroupResponse_JoinGroupResponseMember *out = &resp->Members.items[i];
        const struct grp_protocol *p = member_protocol(x, g->protocol);
        out->MemberId = cstr(x->id);
        out->GroupInstanceId = x->instance_id != NULL ? kp_str_c(x->instance_id) : KP_STR_NULL;
        out->Metadata.ptr = p != NULL ? p->metadata : (const uint8_t *)"";
        out->Metadata.len = p != NULL ? p->metadata_len : 0;
    }
    return 0;
}

/* Answers a member's parked JoinGroup with the current generation. */
static void answer_join(struct grp_group *g, struct grp_member *m)
{
    if (m->join_park == NULL) {
        return;
    }
    struct kp_arena a;
    kp_arena_init(&a, m->join_park->max_bytes);
    struct kp_JoinGroupResponse resp;
    if (join_result(g, m, &a, &resp) != 0) {
        br_error("JoinGroup v%d response to member %s of group %s (client \"%.100s\"): %s: "
                 "answered UNKNOWN_SERVER_ERROR",
                 m->join_park->version, m->id, g->id, m->client_id != NULL ? m->client_id : "",
                 a.refused > 0 ? "the response needs more memory than response.max.bytes allows"
                               : "out of memory");
        park_answer_join_error(m->join_park, KP_ERR_UNKNOWN_SERVER_ERROR);
    } else {
        park_answer(m->join_park, KP_API_JOIN_GROUP, &resp);
    }
    kp_arena_free(&a);
}

/* Kafka's onCompleteJoin: members that did not rejoin leave, the next
 * generation starts, every parked JoinGroup is answered. */
static void complete_join(struct br_groups *gs, struct grp_group *g)
{
    br_timer_cancel(net_of(gs), &g->join_timer.timer);
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
        set_state(g, GRP_EMPTY);
        br_info("group %s with generation %" PRId32 " is now empty", g->id, g->generation);
        br_grp_store_group(gs, g);
        return;
    }
    const char *p = select_protocol(g);
    g->protocol = dup_mem(p != NULL ? p : "", p != NULL ? strlen(p) : 0);
    if (g->leader == NULL) {
        g->leader = g->members[0];
    }
    set_state(g, GRP_COMPLETING_REBALANCE);
    br_info("group %s: generation %" PRId32 " with %zu member(s), protocol %s, leader %s", g->id,
            g->generation, g->nmembers, g->protocol != NULL ? g->protocol : "?", g->leader->id);
    /* answering may kill a connection, which only cancels parks: the
     * member array does not change under this loop */
    for (size_t i = 0; i < g->nmembers; i++) {
        struct grp_member *m = g->members[i];
        m->awaiting_join = false;
        m->is_new = false;
        answer_join(g, m);
        br_grp_heartbeat_reset(gs, m);
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
        if (m->sync_park != NULL) {
            park_answer_sync(m->sync_park, KP_ERR_NONE, m->assignment, m->assignment_len);
        }
        br_grp_heartbeat_reset(gs, m);
    }
}

static void join_timer_fired(struct br_groups *gs, struct grp_group *g)
{
    if (g->state != GRP_PREPARING_REBALANCE) {
        return;
    }
    if (g->initial_delay && g->new_member_added && g->initial_remaining_ms != 0) {
        /* more members arrived: wait again, within the rebalance timeout */
        int32_t configured = gs->b->cfg.group_initial_rebalance_delay_ms;
        int32_t delay = configured < g->initial_remaining_ms ? configured : g->initial_remaining_ms;
        g->new_member_added = false;
        g->initial_remaining_ms -= delay;
        br_timer_arm(net_of(gs), &g->join_timer.timer, br_now_mono_ms() + delay);
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
        br_grp_heartbeat_reset(gs, m);
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
    if (gs->b->net != NULL) {
        br_timer_cancel(net_of(gs), &g->join_timer.timer);
        /* answered above, their answers go out now: the key goes */
        br_purgatory_complete_key(&gs->b->purgatory, &g->parks);
    }
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

static uint64_t seed_rng(void)
{
    uint64_t s = (uint64_t)br_now_wall_ms() ^ ((uint64_t)br_now_mono_ms() << 32);
    FILE *f = fopen("/dev/urandom", "rb");
    if (f != NULL) {
        uint64_t r = 0;
        if (fread(&r, sizeof r, 1, f) == 1) {
            s ^= r;
        }
        (void)fclose(f);
    }
    return s;
}

int br_groups_start(struct br_broker *b)
{
    struct br_groups *gs = kp_calloc(1, sizeof *gs);
    if (gs == NULL) {
        return KP_E_NOMEM;
    }
    gs->b = b;
    gs->rng = seed_rng();
    gs->expiry.kind = GRP_TIMER_EXPIRY;
    gs->expiry.obj = gs;
    br_timer_init(&gs->expiry.timer, &group_timer, &gs->expiry);
    b->groups = gs;
    if (table_grow(gs) != 0) {
        br_groups_stop(b);
        return KP_E_NOMEM;
    }
    int err = br_grp_offsets_load(gs);
    if (err != 0) {
        br_groups_stop(b);
        return err;
    }
    br_timer_arm(b->net, &gs->expiry.timer,
                 br_now_mono_ms() + b->cfg.offsets_retention_check_interval_ms);
    return 0;
}

void br_groups_complete_all_parked(struct br_broker *b)
{
    struct br_groups *gs = b->groups;
    if (gs == NULL) {
        return;
    }
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        for (size_t i = 0; i < g->nmembers; i++) {
            member_answer_parks(g->members[i], KP_ERR_NOT_COORDINATOR);
        }
    }
}

void br_groups_stop(struct br_broker *b)
{
    struct br_groups *gs = b->groups;
    if (gs == NULL) {
        return;
    }
    br_groups_complete_all_parked(b);
    if (b->net != NULL) {
        br_timer_cancel(b->net, &gs->expiry.timer);
    }
    while (gs->first != NULL) {
        br_grp_remove(gs, gs->first, KP_ERR_NOT_COORDINATOR);
    }
    kp_free(gs->buckets);
    kp_free(gs);
    b->groups = NULL;
}

static void groups_timer_fire(void *ctx, struct br_timer *t)
{
    struct br_broker *b = ctx;
    struct br_groups *gs = b->groups;
    struct grp_timer *gt = t->owner;
    if (gs == NULL || gt == NULL) {
        return;
    }
    switch (gt->kind) {
    case GRP_TIMER_SESSION:
        session_expired(gs, gt->obj);
        break;
    case GRP_TIMER_JOIN:
        join_timer_fired(gs, gt->obj);
        break;
    case GRP_TIMER_EXPIRY:
        br_grp_offsets_expire(gs);
        br_timer_arm(b->net, &gs->expiry.timer,
                     br_now_mono_ms() + b->cfg.offsets_retention_check_interval_ms);
        break;
    }
}

/* ---------------------------------------------------------------- FindCoordinator */

int br_h_find_coordinator(struct br_req *r)
{
    const struct kp_FindCoordinatorRequest *q = r->body;
    struct br_broker *b = r->b;
    struct kp_FindCoordinatorResponse resp;
    kp_FindCoordinatorResponse_init(&resp);
    resp.ErrorMessage = KP_STR_NULL;
    resp.NodeId = -1;
    resp.Host = kp_str_c("");
    resp.Port = -1;
    int8_t key_type = r->version >= 1 ? q->KeyType : 0;
    if (key_type == 1) {
        resp.ErrorCode = KP_ERR_COORDINATOR_NOT_AVAILABLE;
        resp.ErrorMessage = kp_str_c("transactions are not supported");
        return br_respond(r, &resp);
    }
    if (key_type != 0) {
        resp.ErrorCode = KP_ERR_INVALID_REQUEST;
        resp.ErrorMessage = kp_str_c("unknown key type");
        return br_respond(r, &resp);
    }
    /* the coordinator is the leader of the group's partition of
     * __consumer_offsets, created on first use as Kafka does */
    int err = br_grp_offsets_topic_ensure(b->groups);
    if (err != 0) {
        resp.ErrorCode = (int16_t)kp_err_to_wire(err);
        resp.ErrorMessage = kp_str_c("the offsets topic is not available");
        return br_respond(r, &resp);
    }
    resp.ErrorCode = KP_ERR_NONE;
    resp.NodeId = b->node_id;
    resp.Host = kp_str_c(b->advertised_host);
    resp.Port = b->advertised_port;
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- JoinGroup */

static int join_respond_error(struct br_req *r, int err, struct kp_str member_id)
{
    struct kp_JoinGroupResponse resp;
    join_error_fill(&resp, err, member_id);
    return br_respond(r, &resp);
}

/* Parks the request as the member's join; an earlier parked join of the
 * same member is answered REBALANCE_IN_PROGRESS so that its slot moves. */
static int park_join(struct br_req *r, struct grp_member *m)
{
    if (m->join_park != NULL) {
        park_answer_join_error(m->join_park, KP_ERR_REBALANCE_IN_PROGRESS);
    }
    struct grp_park *pk = park_new(r, m, GRP_PARK_JOIN);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    m->join_park = pk;
    m->awaiting_join = true;
    return 0;
}

static int add_member_and_rebalance(struct br_groups *gs, struct br_req *r, struct grp_group *g,
                                    char *id, int32_t rebalance_timeout)
{
    const struct kp_JoinGroupRequest *q = r->body;
    struct grp_member *m = kp_calloc(1, sizeof *m);
    if (m == NULL) {
        kp_free(id);
        return KP_E_NOMEM;
    }
    m->group = g;
    m->id = id;
    m->session.kind = GRP_TIMER_SESSION;
    m->session.obj = m;
    br_timer_init(&m->session.timer, &group_timer, &m->session);
    m->client_id = dup_kstr(r->hdr->ClientId);
    m->client_host = client_host_of(r->conn);
    m->instance_id =
        r->version >= 5 && q->GroupInstanceId.len >= 0 ? dup_kstr(q->GroupInstanceId) : NULL;
    m->session_timeout_ms = q->SessionTimeoutMs;
    m->rebalance_timeout_ms = rebalance_timeout;
    char *ptype = g->nmembers == 0 ? dup_kstr(q->ProtocolType) : NULL;
    if (m->client_id == NULL || m->client_host == NULL ||
        (r->version >= 5 && q->GroupInstanceId.len >= 0 && m->instance_id == NULL) ||
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
    int err = park_join(r, m);
    if (err != 0) {
        member_remove(gs, g, m, KP_ERR_UNKNOWN_MEMBER_ID);
        return err;
    }
    m->is_new = true;
    /* a new member cannot heartbeat before it knows its id: Kafka's
     * NewMemberJoinTimeoutMs bounds its wait instead */
    br_timer_arm(net_of(gs), &m->session.timer, br_now_mono_ms() + GRP_NEW_MEMBER_JOIN_TIMEOUT_MS);
    br_debug("group %s: member %s joins (client %s, %s)", g->id, m->id, m->client_id,
             m->client_host);
    maybe_prepare_rebalance(gs, g, "a new member joined");
    return 0;
}

static int update_member_and_rebalance(struct br_groups *gs, struct br_req *r, struct grp_group *g,
                                       struct grp_member *m, int32_t rebalance_timeout)
{
    const struct kp_JoinGroupRequest *q = r->body;
    int err = member_set_protocols(m, q);
    if (err != 0) {
        return err;
    }
    m->session_timeout_ms = q->SessionTimeoutMs;
    m->rebalance_timeout_ms = rebalance_timeout;
    err = park_join(r, m);
    if (err != 0) {
        return err;
    }
    maybe_prepare_rebalance(gs, g, "a member rejoined with new metadata");
    return 0;
}

/* A known member that rejoins without changes while no rebalance is
 * needed: the current generation's answer at once. */
static int join_respond_current(struct br_req *r, struct grp_group *g, struct grp_member *m)
{
    struct kp_JoinGroupResponse resp;
    int err = join_result(g, m, r->arena, &resp);
    if (err == 0) {
        err = br_respond(r, &resp);
    }
    return err;
}

int br_h_join_group(struct br_req *r)
{
    const struct kp_JoinGroupRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    const struct br_config *cfg = &r->b->cfg;
    /* v0 has no rebalance timeout: the session timeout stands in for it */
    int32_t rebalance_timeout = r->version >= 1 ? q->RebalanceTimeoutMs : q->SessionTimeoutMs;
    if (rebalance_timeout < 0) {
        rebalance_timeout = q->SessionTimeoutMs;
    }
    bool require_known_id = r->version >= 4;
    struct kp_str iid = r->version >= 5 ? q->GroupInstanceId : KP_STR_NULL;

    if (q->GroupId.len <= 0) {
        return join_respond_error(r, KP_ERR_INVALID_GROUP_ID, q->MemberId);
    }
    if (q->SessionTimeoutMs < cfg->group_min_session_timeout_ms ||
        q->SessionTimeoutMs > cfg->group_max_session_timeout_ms) {
        return join_respond_error(r, KP_ERR_INVALID_SESSION_TIMEOUT, q->MemberId);
    }
    if (q->Protocols.count > GRP_MAX_PROTOCOLS) {
        return join_respond_error(r, KP_ERR_INCONSISTENT_GROUP_PROTOCOL, q->MemberId);
    }
    bool unknown = q->MemberId.len <= 0;
    struct grp_group *g = find_kstr(gs, q->GroupId);
    if (g == NULL) {
        if (!unknown) {
            return join_respond_error(r, KP_ERR_UNKNOWN_MEMBER_ID, q->MemberId);
        }
        g = br_grp_get_or_create(gs, q->GroupId.ptr, (size_t)q->GroupId.len);
        if (g == NULL) {
            return join_respond_error(r, KP_ERR_COORDINATOR_NOT_AVAILABLE, q->MemberId);
        }
    }
    if (g->state == GRP_DEAD) {
        return join_respond_error(r, KP_ERR_COORDINATOR_NOT_AVAILABLE, q->MemberId);
    }
    if (!supports_protocols(g, q)) {
        return join_respond_error(r, KP_ERR_INCONSISTENT_GROUP_PROTOCOL, q->MemberId);
    }
    int err = 0;
    if (unknown) {
        struct grp_member *old = member_by_instance(g, iid);
        if (old == NULL && g->nmembers >= GRP_MAX_MEMBERS) {
            return join_respond_error(r, KP_ERR_GROUP_MAX_SIZE_REACHED, q->MemberId);
        }
        char *id = make_member_id(gs, r->hdr->ClientId);
        if (id == NULL) {
            return KP_E_NOMEM;
        }
        if (old != NULL) {
            /* a static member came back: its old incarnation is fenced */
            br_info("group %s: static member %s replaced by %s", g->id, old->id, id);
            remove_member_and_update(gs, g, old, "a static member rejoined");
        } else if (require_known_id && iid.len < 0) {
            /* v4+: hand out the id, the client joins again with it */
            struct kp_str sid = kp_str_c(id);
            int e = pending_add(g, id, br_now_mono_ms() + q->SessionTimeoutMs);
            if (e != 0) {
                kp_free(id);
                return e;
            }
            return join_respond_error(r, KP_ERR_MEMBER_ID_REQUIRED, sid);
        }
        err = add_member_and_rebalance(gs, r, g, id, rebalance_timeout);
    } else {
        struct grp_member *m = br_grp_member_find(g, q->MemberId);
        if (m == NULL) {
            if (!pending_take(g, q->MemberId)) {
                return join_respond_error(r, KP_ERR_UNKNOWN_MEMBER_ID, q->MemberId);
            }
            if (g->nmembers >= GRP_MAX_MEMBERS) {
                return join_respond_error(r, KP_ERR_GROUP_MAX_SIZE_REACHED, q->MemberId);
            }
            char *id = dup_kstr(q->MemberId);
            if (id == NULL) {
                return KP_E_NOMEM;
            }
            err = add_member_and_rebalance(gs, r, g, id, rebalance_timeout);
        } else if (iid.len >= 0 && m->instance_id != NULL && !kstr_is(iid, m->instance_id)) {
            return join_respond_error(r, KP_ERR_FENCED_INSTANCE_ID, q->MemberId);
        } else {
            switch (g->state) {
            case GRP_PREPARING_REBALANCE:
                err = update_member_and_rebalance(gs, r, g, m, rebalance_timeout);
                break;
            case GRP_COMPLETING_REBALANCE:
                if (member_matches(m, q)) {
                    return join_respond_current(r, g, m);
                }
                err = update_member_and_rebalance(gs, r, g, m, rebalance_timeout);
                break;
            case GRP_STABLE:
                if (m != g->leader && member_matches(m, q)) {
                    return join_respond_current(r, g, m);
                }
                err = update_member_and_rebalance(gs, r, g, m, rebalance_timeout);
                break;
            case GRP_EMPTY:
            case GRP_DEAD:
                return join_respond_error(r, KP_ERR_UNKNOWN_MEMBER_ID, q->MemberId);
            }
        }
    }
    if (err != 0) {
        return err;
    }
    check_join_complete(gs, g);
    return 0;
}

/* ---------------------------------------------------------------- SyncGroup */

static int sync_respond(struct br_req *r, int err, const uint8_t *assignment, int32_t len)
{
    struct kp_SyncGroupResponse resp;
    kp_SyncGroupResponse_init(&resp);
    resp.ErrorCode = (int16_t)kp_err_to_wire(err);
    resp.Assignment.ptr = assignment != NULL ? assignment : (const uint8_t *)"";
    resp.Assignment.len = assignment != NULL ? len : 0;
    return br_respond(r, &resp);
}

/* The leader's assignments go to the members they name; members it left
 * out get an empty one. */
static int store_assignments(struct grp_group *g, const struct kp_SyncGroupRequest *q)
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
        for (int32_t k = 0; k < q->Assignments.count; k++) {
            const struct kp_SyncGroupRequest_SyncGroupRequestAssignment *as =
                &q->Assignments.items[k];
            if (!kstr_is(as->MemberId, g->members[i]->id)) {
                continue;
            }
            size_t n = as->Assignment.len > 0 ? (size_t)as->Assignment.len : 0;
            copies[i] = kp_malloc(n == 0 ? 1 : n);
            if (copies[i] == NULL) {
                err = KP_E_NOMEM;
                break;
            }
            if (n > 0) {
                memcpy(copies[i], as->Assignment.ptr, n);
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

int br_h_sync_group(struct br_req *r)
{
    const struct kp_SyncGroupRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    if (q->GroupId.len <= 0) {
        return sync_respond(r, KP_ERR_INVALID_GROUP_ID, NULL, 0);
    }
    struct grp_group *g = find_kstr(gs, q->GroupId);
    if (g == NULL) {
        return sync_respond(r, KP_ERR_UNKNOWN_MEMBER_ID, NULL, 0);
    }
    if (g->state == GRP_DEAD) {
        return sync_respond(r, KP_ERR_COORDINATOR_NOT_AVAILABLE, NULL, 0);
    }
    struct grp_member *m = br_grp_member_find(g, q->MemberId);
    if (m == NULL) {
        return sync_respond(r, KP_ERR_UNKNOWN_MEMBER_ID, NULL, 0);
    }
    if (r->version >= 3 && q->GroupInstanceId.len >= 0 && m->instance_id != NULL &&
        !kstr_is(q->GroupInstanceId, m->instance_id)) {
        return sync_respond(r, KP_ERR_FENCED_INSTANCE_ID, NULL, 0);
    }
    if (q->GenerationId != g->generation) {
        return sync_respond(r, KP_ERR_ILLEGAL_GENERATION, NULL, 0);
    }
    switch (g->state) {
    case GRP_EMPTY:
    case GRP_DEAD:
        return sync_respond(r, KP_ERR_UNKNOWN_MEMBER_ID, NULL, 0);
    case GRP_PREPARING_REBALANCE:
        return sync_respond(r, KP_ERR_REBALANCE_IN_PROGRESS, NULL, 0);
    case GRP_STABLE:
        br_grp_heartbeat_reset(gs, m);
        return sync_respond(r, KP_ERR_NONE, m->assignment, m->assignment_len);
    case GRP_COMPLETING_REBALANCE:
        break;
    }
    if (m->sync_park != NULL) {
        park_answer_sync(m->sync_park, KP_ERR_REBALANCE_IN_PROGRESS, NULL, 0);
    }
    struct grp_park *pk = park_new(r, m, GRP_PARK_SYNC);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    m->sync_park = pk;
    m->awaiting_sync = true;
    if (m == g->leader) {
        int err = store_assignments(g, q);
        if (err != 0) {
            /* nothing was stored: this leader's sync fails alone */
            m->awaiting_sync = false;
            park_answer_sync(pk, KP_ERR_UNKNOWN_SERVER_ERROR, NULL, 0);
            return 0;
        }
        br_grp_store_group(gs, g);
        set_and_propagate_assignment(gs, g);
        set_state(g, GRP_STABLE);
    }
    return 0;
}

/* ---------------------------------------------------------------- Heartbeat */

int br_h_heartbeat(struct br_req *r)
{
    const struct kp_HeartbeatRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    struct kp_HeartbeatResponse resp;
    kp_HeartbeatResponse_init(&resp);
    int err = KP_ERR_NONE;
    struct grp_group *g = q->GroupId.len > 0 ? find_kstr(gs, q->GroupId) : NULL;
    struct grp_member *m = g != NULL ? br_grp_member_find(g, q->MemberId) : NULL;
    if (q->GroupId.len <= 0) {
        err = KP_ERR_INVALID_GROUP_ID;
    } else if (g == NULL || g->state == GRP_EMPTY || m == NULL) {
        err = KP_ERR_UNKNOWN_MEMBER_ID;
    } else if (g->state == GRP_DEAD) {
        err = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    } else if (r->version >= 3 && q->GroupInstanceId.len >= 0 && m->instance_id != NULL &&
               !kstr_is(q->GroupInstanceId, m->instance_id)) {
        err = KP_ERR_FENCED_INSTANCE_ID;
    } else if (q->GenerationId != g->generation) {
        err = KP_ERR_ILLEGAL_GENERATION;
    } else {
        br_grp_heartbeat_reset(gs, m);
        /* only the join phase makes members rejoin */
        err = g->state == GRP_PREPARING_REBALANCE ? KP_ERR_REBALANCE_IN_PROGRESS : KP_ERR_NONE;
    }
    resp.ErrorCode = (int16_t)kp_err_to_wire(err);
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- LeaveGroup */

static int leave_one(struct br_groups *gs, struct grp_group *g, struct kp_str member_id,
                     struct kp_str iid)
{
    struct grp_member *m = NULL;
    if (member_id.len > 0) {
        m = br_grp_member_find(g, member_id);
        if (m != NULL && iid.len >= 0 && m->instance_id != NULL && !kstr_is(iid, m->instance_id)) {
            return KP_ERR_FENCED_INSTANCE_ID;
        }
    } else {
        m = member_by_instance(g, iid);
    }
    if (m == NULL) {
        /* a member id handed out but not used yet just goes */
        return member_id.len > 0 && pending_take(g, member_id) ? KP_ERR_NONE
                                                               : KP_ERR_UNKNOWN_MEMBER_ID;
    }
    br_info("group %s: member %s leaves", g->id, m->id);
    remove_member_and_update(gs, g, m, "a member left");
    return KP_ERR_NONE;
}

int br_h_leave_group(struct br_req *r)
{
    const struct kp_LeaveGroupRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    struct kp_LeaveGroupResponse resp;
    kp_LeaveGroupResponse_init(&resp);
    resp.Members.items = NULL;
    resp.Members.count = 0;
    int top = KP_ERR_NONE;
    struct grp_group *g = q->GroupId.len > 0 ? find_kstr(gs, q->GroupId) : NULL;
    if (q->GroupId.len <= 0) {
        top = KP_ERR_INVALID_GROUP_ID;
    } else if (g != NULL && g->state == GRP_DEAD) {
        top = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (r->version < 3) {
        if (top == KP_ERR_NONE) {
            top = g == NULL ? KP_ERR_UNKNOWN_MEMBER_ID : leave_one(gs, g, q->MemberId, KP_STR_NULL);
        }
        resp.ErrorCode = (int16_t)kp_err_to_wire(top);
        return br_respond(r, &resp);
    }
    resp.ErrorCode = (int16_t)kp_err_to_wire(top);
    if (top == KP_ERR_NONE) {
        resp.Members.items =
            arena_array(r->arena, (size_t)q->Members.count, sizeof *resp.Members.items);
        if (resp.Members.items == NULL) {
            return KP_E_NOMEM;
        }
        resp.Members.count = q->Members.count;
        for (int32_t i = 0; i < q->Members.count; i++) {
            const struct kp_LeaveGroupRequest_MemberIdentity *mi = &q->Members.items[i];
            struct kp_LeaveGroupResponse_MemberResponse *out = &resp.Members.items[i];
            out->MemberId = mi->MemberId;
            out->GroupInstanceId = mi->GroupInstanceId;
            /* the group may go away under a leave: look it up each time */
            g = find_kstr(gs, q->GroupId);
            int e = g == NULL ? KP_ERR_UNKNOWN_MEMBER_ID
                              : leave_one(gs, g, mi->MemberId, mi->GroupInstanceId);
            out->ErrorCode = (int16_t)kp_err_to_wire(e);
        }
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- DescribeGroups */

static int describe_groups(struct br_req *r, struct kp_arena *a)
{
    const struct kp_DescribeGroupsRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    struct kp_DescribeGroupsResponse resp;
    kp_DescribeGroupsResponse_init(&resp);
    resp.Groups.items = arena_array(a, (size_t)q->Groups.count, sizeof *resp.Groups.items);
    if (resp.Groups.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Groups.count = q->Groups.count;
    for (int32_t i = 0; i < q->Groups.count; i++) {
        struct kp_DescribeGroupsResponse_DescribedGroup *out = &resp.Groups.items[i];
        struct kp_str id = q->Groups.items[i];
        out->GroupId = id.len >= 0 ? id : kp_str_c("");
        out->ProtocolType = kp_str_c("");
        out->ProtocolData = kp_str_c("");
        out->Members.items = NULL;
        out->Members.count = 0;
        out->AuthorizedOperations = INT32_MIN;
        struct grp_group *g = find_kstr(gs, id);
        if (id.len < 0) {
            out->ErrorCode = KP_ERR_INVALID_GROUP_ID;
            out->GroupState = kp_str_c("");
            continue;
        }
        out->ErrorCode = KP_ERR_NONE;
        if (g == NULL) {
            /* Kafka describes a group it does not know as Dead */
            out->GroupState = kp_str_c("Dead");
            continue;
        }
        bool stable = g->state == GRP_STABLE;
        out->GroupState = kp_str_c(br_grp_state_name(g->state));
        out->ProtocolType = cstr(g->protocol_type);
        out->ProtocolData = stable ? cstr(g->protocol) : kp_str_c("");
        out->Members.items = arena_array(a, g->nmembers, sizeof *out->Members.items);
        if (out->Members.items == NULL) {
            return KP_E_NOMEM;
        }
        out->Members.count = (int32_t)g->nmembers;
        for (size_t k = 0; k < g->nmembers; k++) {
            const struct grp_member *m = g->members[k];
            struct kp_DescribeGroupsResponse_DescribedGroupMember *dm = &out->Members.items[k];
            const struct grp_protocol *p = stable ? member_protocol(m, g->protocol) : NULL;
            dm->MemberId = cstr(m->id);
            dm->GroupInstanceId = m->instance_id != NULL ? kp_str_c(m->instance_id) : KP_STR_NULL;
            dm->ClientId = cstr(m->client_id);
            dm->ClientHost = cstr(m->client_host);
            dm->MemberMetadata.ptr = p != NULL ? p->metadata : (const uint8_t *)"";
            dm->MemberMetadata.len = p != NULL ? p->metadata_len : 0;
            dm->MemberAssignment.ptr =
                stable && m->assignment != NULL ? m->assignment : (const uint8_t *)"";
            dm->MemberAssignment.len = stable && m->assignment != NULL ? m->assignment_len : 0;
        }
    }
    return br_respond(r, &resp);
}

int br_h_describe_groups(struct br_req *r)
{
    return describe_groups(r, r->arena);
}

/* ---------------------------------------------------------------- ListGroups */

int br_h_list_groups(struct br_req *r)
{
    struct br_groups *gs = r->b->groups;
    struct kp_ListGroupsResponse resp;
    kp_ListGroupsResponse_init(&resp);
    resp.ErrorCode = KP_ERR_NONE;
    resp.Groups.items = arena_array(r->arena, gs->ngroups, sizeof *resp.Groups.items);
    if (resp.Groups.items == NULL) {
        return KP_E_NOMEM;
    }
    int32_t n = 0;
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        if (g->state == GRP_DEAD) {
            continue;
        }
        resp.Groups.items[n].GroupId.ptr = g->id;
        resp.Groups.items[n].GroupId.len = (int32_t)g->id_len;
        resp.Groups.items[n].ProtocolType = cstr(g->protocol_type);
        n++;
    }
    resp.Groups.count = n;
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- DeleteGroups */

int br_h_delete_groups(struct br_req *r)
{
    const struct kp_DeleteGroupsRequest *q = r->body;
    struct br_groups *gs = r->b->groups;
    struct kp_DeleteGroupsResponse resp;
    kp_DeleteGroupsResponse_init(&resp);
    resp.Results.items =
        arena_array(r->arena, (size_t)q->GroupsNames.count, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = q->GroupsNames.count;
    for (int32_t i = 0; i < q->GroupsNames.count; i++) {
        struct kp_str id = q->GroupsNames.items[i];
        struct kp_DeleteGroupsResponse_DeletableGroupResult *out = &resp.Results.items[i];
        out->GroupId = id.len >= 0 ? id : kp_str_c("");
        struct grp_group *g = find_kstr(gs, id);
        int err = KP_ERR_NONE;
        if (id.len < 0) {
            err = KP_ERR_INVALID_GROUP_ID;
        } else if (g == NULL || g->state == GRP_DEAD) {
            err = KP_ERR_GROUP_ID_NOT_FOUND;
        } else if (g->state != GRP_EMPTY) {
            err = KP_ERR_NON_EMPTY_GROUP;
        } else {
            err = br_grp_store_tombstones(gs, g);
            if (err == 0) {
                br_info("group %s deleted", g->id);
                br_grp_remove(gs, g, KP_ERR_UNKNOWN_MEMBER_ID);
            }
        }
        out->ErrorCode = (int16_t)kp_err_to_wire(err);
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- admin views */

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
    br_grp_heartbeat_reset(gs, m);
    return 0;
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
    }
    kp_free(infos);
}

int br_groups_list(struct br_broker *b, struct br_group_info **out, size_t *n)
{
    struct br_groups *gs = b->groups;
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
    for (struct grp_group *g = gs->first; g != NULL && k < gs->ngroups; g = g->next) {
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
        if (in->group_id == NULL || in->protocol_type == NULL || in->protocol == NULL) {
            br_group_infos_free(infos, k);
            return KP_E_NOMEM;
        }
    }
    *out = infos;
    *n = k;
    return 0;
}
