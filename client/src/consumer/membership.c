/*
 * Joining the group: samsa_consumer_subscribe, JoinGroup (MEMBER_ID_REQUIRED),
 * the leader's Metadata of every member's topics and its assignor run,
 * SyncGroup and the assignment applied (eager, or as a difference under
 * cooperative-sticky).
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/group.h"

/*
 * librdkafka's convention (rd_kafka_subscribe): a name starting with ^ is a
 * regular expression, the whole name with its ^ (no topic name holds ^:
 * Kafka's legal characters are [a-zA-Z0-9._-], Kafka 2.0's
 * common/internals/Topic.java). POSIX extended syntax (regcomp); one that
 * does not compile is SAMSA_ERR_INVALID_ARG.
 */
static int split_subscription(const char *const *topics, size_t count, struct sc_subscription *s)
{
    s->literals = kp_calloc(count, sizeof(*s->literals));
    s->patterns = kp_calloc(count, sizeof(*s->patterns));
    s->regexes = kp_calloc(count, sizeof(*s->regexes));
    if (s->literals == NULL || s->patterns == NULL || s->regexes == NULL) {
        sc_subscription_free(s);
        return SAMSA_ERR_NOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        if (topics[i][0] != '^') {
            s->literals[s->literal_count] = sc_strdup(topics[i]);
            if (s->literals[s->literal_count] == NULL) {
                sc_subscription_free(s);
                return SAMSA_ERR_NOMEM;
            }
            s->literal_count++;
            continue;
        }
        if (regcomp(&s->regexes[s->pattern_count], topics[i], REG_EXTENDED | REG_NOSUB) != 0) {
            sc_subscription_free(s);
            return SAMSA_ERR_INVALID_ARG;
        }
        s->patterns[s->pattern_count] = sc_strdup(topics[i]);
        s->pattern_count++; /* regfree'd from here on */
        if (s->patterns[s->pattern_count - 1] == NULL) {
            sc_subscription_free(s);
            return SAMSA_ERR_NOMEM;
        }
    }
    return SAMSA_OK;
}

static int gated_consumer_subscribe(samsa_consumer *sc, const char *const *topics, size_t count)
{
    if (sc == NULL || topics == NULL || count == 0 || count > MAX_SUB_TOPICS) {
        return SAMSA_ERR_INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        if (topics[i] == NULL || topics[i][0] == '\0') {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    struct sc_client *c = sc->c;
    if (c->v->group_id[0] == '\0') {
        return SAMSA_ERR_INVALID_CONFIG;
    }
    struct sc_subscription sub = {0};
    int perr = split_subscription(topics, count, &sub);
    if (perr != SAMSA_OK) {
        return perr;
    }
    char **names = kp_calloc(count, sizeof(*names));
    int32_t *parts = kp_calloc(count, sizeof(*parts));
    int n = 0;
    if (names == NULL || parts == NULL) {
        goto out_nomem;
    }
    for (int i = 0; i < sub.literal_count; i++) {
        names[n] = sc_strdup(sub.literals[i]);
        if (names[n] == NULL) {
            goto out_nomem;
        }
        n++;
    }
    n = sc_group_sort_names(names, n);
    for (int i = 0; i < n; i++) {
        parts[i] = -1;
    }
    pthread_mutex_lock(&c->lock);
    struct sc_group *g = sc_group_get(c);
    if (g == NULL || (!c->subscribed && c->cpart_count > 0) || (g != NULL && g->closing)) {
        pthread_mutex_unlock(&c->lock);
        for (int i = 0; i < n; i++) {
            kp_free(names[i]);
        }
        kp_free(names);
        kp_free(parts);
        sc_subscription_free(&sub);
        return g == NULL ? SAMSA_ERR_NOMEM : SAMSA_ERR_STATE;
    }
    bool same = c->subscribed && g->topic_count == n;
    for (int i = 0; same && i < n; i++) {
        same = strcmp(g->topics[i], names[i]) == 0;
    }
    sc_group_free_topics(g);
    sc_subscription_free(&g->sub);
    g->topics = names;
    g->topic_parts = parts;
    g->topic_count = n;
    g->sub = sub;
    c->subscribed = true;
    c->md_wanted = true;
    if (g->state == G_IDLE) {
        g->last_poll = sc_now_ms();
        /* patterns: the first join waits for the topics they match */
        g->await_match = g->sub.pattern_count > 0;
        g->join_at = g->await_match ? INT64_MAX : 0;
        sc_group_set_state(c, g, G_UNJOINED);
    } else if (g->sub.pattern_count > 0) {
        /* the next Metadata answer (asked for above) matches them and
         * joins again if the topics differ */
        g->await_match = true;
    } else if (!same) {
        sc_group_rejoin(c, g, "the subscription changed");
    }
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    return SAMSA_OK;
out_nomem:
    for (int i = 0; i < n; i++) {
        kp_free(names[i]);
    }
    kp_free(names);
    kp_free(parts);
    sc_subscription_free(&sub);
    return SAMSA_ERR_NOMEM;
}

int samsa_consumer_subscribe(samsa_consumer *sc, const char *const *topics, size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_subscribe(sc, topics, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

/* JoinGroup ---------------------------------------------------------- */

static int assignor_by_name(const struct sc_client *c, struct kp_str name)
{
    for (int i = 0; i < c->v->assignor_count; i++) {
        if (kp_str_eq_c(name, sc_assignor_name(c->v->assignors[i]))) {
            return c->v->assignors[i];
        }
    }
    return -1;
}

/* Copies the members of a leader's JoinGroup answer (their subscriptions
 * decoded). A member whose Subscription does not decode gets no topics. */
static int take_members(struct sc_client *c, struct sc_group *g,
                        const struct kp_JoinGroupResponse *r)
{
    sc_group_clear_members(g);
    int n = r->Members.count > 0 ? r->Members.count : 0;
    g->members = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*g->members));
    if (g->members == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        const struct kp_JoinGroupResponse_JoinGroupResponseMember *m = &r->Members.items[i];
        struct sc_member *dst = &g->members[g->member_count];
        dst->member_id = sc_strndup(m->MemberId.ptr != NULL ? m->MemberId.ptr : "",
                                    (size_t)(m->MemberId.len > 0 ? m->MemberId.len : 0));
        if (dst->member_id == NULL) {
            return SAMSA_ERR_NOMEM;
        }
        g->member_count++;
        if (m->GroupInstanceId.len >= 0 && m->GroupInstanceId.ptr != NULL) {
            dst->instance_id = sc_strndup(m->GroupInstanceId.ptr, (size_t)m->GroupInstanceId.len);
        }
        int err = m->Metadata.len > 0 ? sc_subscription_decode(m->Metadata.ptr,
                                                               (size_t)m->Metadata.len,
                                                               &dst->topics, &dst->topic_count)
                                      : SAMSA_ERR_BAD_RESPONSE;
        if (err == SAMSA_ERR_NOMEM) {
            return err;
        }
        if (err != SAMSA_OK) {
            sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                          "group %s: member %s sent a Subscription that does not decode; it "
                          "gets no partitions",
                          c->v->group_id, dst->member_id);
            continue;
        }
        dst->owned_generation = -1;
        if (sc_assignor_cooperative(g->assignor)) {
            /* what the member owns now: OwnedPartitions, else its UserData
             * (none when neither decodes: it is then treated as new) */
            err = sc_subscription_ownership(m->Metadata.ptr, (size_t)m->Metadata.len, &dst->owned,
                                            &dst->owned_count, &dst->owned_generation);
            if (err == SAMSA_ERR_NOMEM) {
                return err;
            }
            continue;
        }
        /* the sticky assignor's UserData: what the member had (none when absent or
         * not decodable: it is then treated as a new member) */
        struct kp_bytes ud;
        if (sc_subscription_user_data(m->Metadata.ptr, (size_t)m->Metadata.len, &ud) ==
                SAMSA_OK &&
            ud.len > 0) {
            err = sc_sticky_user_data_decode(ud.ptr, (size_t)ud.len, &dst->owned,
                                             &dst->owned_count, &dst->owned_generation);
            if (err == SAMSA_ERR_NOMEM) {
                return err;
            }
        }
    }
    return SAMSA_OK;
}

static int cmp_tp(const void *a, const void *b)
{
    const struct sc_tp *x = a;
    const struct sc_tp *y = b;
    int d = strcmp(x->topic, y->topic);
    return d != 0 ? d : (x->partition > y->partition) - (x->partition < y->partition);
}

/* Keeps parts[0..n) (copied, sorted) as this member's last assignment. */
static int remember_owned(struct sc_group *g, const struct samsa_partition *parts, int n)
{
    struct sc_tp *tps = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*tps));
    if (tps == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        tps[i].topic = sc_strdup(parts[i].topic);
        tps[i].partition = parts[i].partition;
        if (tps[i].topic == NULL) {
            sc_tps_free(tps, i);
            return SAMSA_ERR_NOMEM;
        }
    }
    qsort(tps, (size_t)n, sizeof(*tps), cmp_tp);
    sc_tps_free(g->owned, g->owned_count);
    g->owned = tps;
    g->owned_count = n;
    g->owned_generation = g->generation;
    return SAMSA_OK;
}

/* cooperative: an error between JoinGroup and SyncGroup that ends the
 * membership loses what the member kept fetching (eager had dropped it). */
static void coop_lost(struct sc_client *c, struct sc_group *g, const char *why)
{
    if (sc_group_cooperative(c) && c->cpart_count > 0) {
        sc_log(c, "group %s: membership lost (%s): partitions dropped", c->v->group_id, why);
        sc_group_drop_assignment(c, g, true);
    }
}

static void on_join(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    (void)ctx;
    struct sc_group *g = c->group;
    if (g == NULL || g->state != G_JOINING) {
        return;
    }
    int64_t now = sc_now_ms();
    if (err != 0) {
        sc_group_lose_coordinator(c);
        g->join_at = now + c->v->retry_backoff_ms;
        sc_group_set_state(c, g, G_UNJOINED);
        return;
    }
    const struct kp_JoinGroupResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    g->join_at = now;
    sc_group_set_state(c, g, G_UNJOINED);
    switch (e) {
    case SAMSA_OK:
        break;
    case KP_ERR_MEMBER_ID_REQUIRED:
        sc_group_set_member_id(g, r->MemberId); /* and join again at once with it */
        return;
    case KP_ERR_UNKNOWN_MEMBER_ID:
        sc_group_set_member_id(g, KP_STR_NULL);
        coop_lost(c, g, "JoinGroup: UNKNOWN_MEMBER_ID");
        return;
    case KP_ERR_REBALANCE_IN_PROGRESS:
        return;
    case KP_ERR_FENCED_INSTANCE_ID:
        sc_post_error(c, SAMSA_ERR_FATAL,
                      "group %s: FENCED_INSTANCE_ID: another consumer uses group.instance.id=%s;"
                      " this one stops consuming",
                      c->v->group_id, c->v->group_instance_id);
        sc_group_set_state(c, g, G_FATAL);
        return;
    default:
        if (sc_group_coordinator_error(e)) {
            sc_group_lose_coordinator(c);
            g->join_at = now + c->v->retry_backoff_ms;
            return;
        }
        sc_post_error(c, e, "group %s: JoinGroup: %s; trying again", c->v->group_id,
                      samsa_err_str(e));
        g->join_at = now + sc_group_join_backoff_ms(c);
        return;
    }
    int assignor = assignor_by_name(c, r->ProtocolName);
    sc_group_set_member_id(g, r->MemberId);
    if (g->member_id == NULL || assignor < 0) {
        sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                      "group %s: JoinGroup answered protocol \"%.*s\", not one offered", c->v->group_id,
                      (int)(r->ProtocolName.len > 0 ? r->ProtocolName.len : 0),
                      r->ProtocolName.ptr != NULL ? r->ProtocolName.ptr : "");
        g->join_at = now + sc_group_join_backoff_ms(c);
        return;
    }
    g->generation = r->GenerationId;
    g->assignor = assignor;
    g->leader = kp_str_eq(r->Leader, r->MemberId);
    g->last_hb_ok = now;
    sc_log(c, "group %s: generation %d, member %s%s, protocol %s", c->v->group_id,
           g->generation, g->member_id, g->leader ? " (leader)" : "", sc_assignor_name(assignor));
    if (g->leader) {
        if (take_members(c, g, r) != SAMSA_OK) {
            sc_group_clear_members(g);
            g->join_at = now + c->v->retry_backoff_ms;
            return;
        }
        g->assign_md_inflight = false;
        sc_group_set_state(c, g, G_ASSIGN_MD);
    } else {
        sc_group_set_state(c, g, G_SYNC_READY);
    }
}

/* cooperative-sticky's Subscription (v3) into w: what the member fetches
 * now, sorted by topic then partition, and the generation that gave it (-1
 * with nothing owned). A failure is w's error. */
static void coop_subscription(struct sc_client *c, const struct sc_group *g, struct kp_writer *w)
{
    int n = c->cpart_count;
    struct sc_tp *tps = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*tps));
    if (tps == NULL) {
        kp_wr_fail(w, SAMSA_ERR_NOMEM);
        return;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!c->cparts[i]->revoking) {
            tps[k].topic = c->cparts[i]->topic; /* borrowed */
            tps[k].partition = c->cparts[i]->partition;
            k++;
        }
    }
    qsort(tps, (size_t)k, sizeof(*tps), cmp_tp);
    sc_subscription_encode_v3(w, g->topics, g->topic_count, tps, k,
                              k > 0 ? g->owned_generation : -1);
    kp_free(tps);
}

int64_t sc_group_send_join(struct sc_client *c, struct sc_group *g, struct sc_conn *coord,
                           int64_t now)
{
    int16_t ver = sc_conn_version(coord, KP_API_JOIN_GROUP, 0, 5);
    if (ver < 0) {
        sc_post_error(c, SAMSA_ERR_UNSUPPORTED, "group %s: the coordinator lacks JoinGroup",
                      c->v->group_id);
        g->join_at = now + sc_group_join_backoff_ms(c);
        return g->join_at;
    }
    struct kp_writer w;
    kp_wr_init(&w, (size_t)16 * 1024 * 1024);
    if (sc_group_cooperative(c)) {
        coop_subscription(c, g, &w); /* the only assignor: cooperative-sticky */
    } else {
        sc_subscription_encode(&w, g->topics, g->topic_count, NULL, 0);
    }
    /* sticky's Subscription carries the last assignment in its UserData */
    struct kp_writer ud;
    struct kp_writer sw;
    kp_wr_init(&ud, (size_t)16 * 1024 * 1024);
    kp_wr_init(&sw, (size_t)16 * 1024 * 1024);
    sc_sticky_user_data_encode(&ud, g->owned, g->owned_count, g->owned_generation);
    sc_subscription_encode_ud(&sw, g->topics, g->topic_count, NULL, 0, ud.buf, ud.len);
    if (w.err != 0 || ud.err != 0 || sw.err != 0) {
        kp_wr_free(&w);
        kp_wr_free(&ud);
        kp_wr_free(&sw);
        g->join_at = now + c->v->retry_backoff_ms;
        return g->join_at;
    }
    struct kp_JoinGroupRequest_JoinGroupRequestProtocol protos[SC_MAX_ASSIGNORS];
    int np = c->v->assignor_count < SC_MAX_ASSIGNORS ? c->v->assignor_count : SC_MAX_ASSIGNORS;
    for (int i = 0; i < np; i++) {
        const struct kp_writer *meta = c->v->assignors[i] == SC_ASSIGNOR_STICKY ? &sw : &w;
        protos[i].Name = kp_str_c(sc_assignor_name(c->v->assignors[i]));
        protos[i].Metadata = (struct kp_bytes){meta->buf, (int32_t)meta->len};
    }
    struct kp_JoinGroupRequest req;
    kp_JoinGroupRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.SessionTimeoutMs = c->v->session_timeout_ms;
    req.RebalanceTimeoutMs = c->v->max_poll_interval_ms;
    req.MemberId = kp_str_c(sc_group_member_id(g));
    req.GroupInstanceId =
        c->v->group_instance_id[0] != '\0' ? kp_str_c(c->v->group_instance_id) : KP_STR_NULL;
    req.ProtocolType = kp_str_c("consumer");
    req.Protocols.items = protos;
    req.Protocols.count = np;
    int err = sc_conn_send(c, coord, KP_API_JOIN_GROUP, ver, &req, on_join, NULL);
    kp_wr_free(&w);
    kp_wr_free(&ud);
    kp_wr_free(&sw);
    if (err != SAMSA_OK) {
        g->join_at = now + c->v->retry_backoff_ms;
        return g->join_at;
    }
    g->generation = -1;
    sc_group_set_state(c, g, G_JOINING);
    return INT64_MAX;
}

/* The leader's assignment ------------------------------------------- */

struct assign_md_ctx {
    int32_t generation;
};

static void on_assign_md(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                         void *vctx)
{
    (void)conn;
    struct assign_md_ctx *ctx = vctx;
    int32_t gen = ctx->generation;
    kp_free(ctx);
    struct sc_group *g = c->group;
    if (g == NULL || g->state != G_ASSIGN_MD || g->generation != gen) {
        return;
    }
    g->assign_md_inflight = false;
    if (err != 0) {
        return; /* asked again by the next serve */
    }
    const struct kp_MetadataResponse *md = body;
    /* Every topic any member subscribes to, with its partition count (0
     * when the cluster does not have it: nobody gets it). */
    int cap = 0;
    for (int i = 0; i < g->member_count; i++) {
        cap += g->members[i].topic_count;
    }
    struct sc_topic_count *counts = kp_calloc((size_t)(cap > 0 ? cap : 1), sizeof(*counts));
    if (counts == NULL) {
        return;
    }
    int n = 0;
    for (int i = 0; i < g->member_count; i++) {
        for (int k = 0; k < g->members[i].topic_count; k++) {
            const char *t = g->members[i].topics[k];
            bool seen = false;
            for (int j = 0; j < n && !seen; j++) {
                seen = strcmp(counts[j].topic, t) == 0;
            }
            if (seen) {
                continue;
            }
            counts[n].topic = t;
            counts[n].partitions = 0;
            for (int32_t m = 0; m < md->Topics.count; m++) {
                if (kp_str_eq_c(md->Topics.items[m].Name, t)) {
                    int32_t pc = md->Topics.items[m].Partitions.count;
                    counts[n].partitions = pc > 0 ? pc : 0;
                }
            }
            n++;
        }
    }
    /* The leader's own view of its topics follows this snapshot. */
    for (int i = 0; i < g->topic_count; i++) {
        for (int j = 0; j < n; j++) {
            if (strcmp(counts[j].topic, g->topics[i]) == 0 &&
                (counts[j].partitions > 0 || g->topic_parts[i] != TOPIC_MISSING)) {
                g->topic_parts[i] = counts[j].partitions; /* a missing one stays told */
            }
        }
    }
    int aerr = sc_assign(g->assignor, g->members, g->member_count, counts, n);
    kp_free(counts);
    if (aerr != SAMSA_OK) {
        return; /* out of memory: the next serve asks again */
    }
    sc_group_set_state(c, g, G_SYNC_READY);
}

int64_t sc_group_send_assign_md(struct sc_client *c, struct sc_group *g, int64_t now)
{
    if (g->assign_md_inflight) {
        return INT64_MAX;
    }
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_METADATA, 1, 6);
    if (ver < 0) {
        return now + sc_group_join_backoff_ms(c);
    }
    int cap = 0;
    for (int i = 0; i < g->member_count; i++) {
        cap += g->members[i].topic_count;
    }
    struct kp_MetadataRequest_MetadataRequestTopic *ts =
        kp_arena_alloc(&c->arena, sizeof(*ts) * (size_t)(cap > 0 ? cap : 1));
    struct assign_md_ctx *ctx = kp_malloc(sizeof(*ctx));
    if (ts == NULL || ctx == NULL) {
        kp_arena_reset(&c->arena);
        kp_free(ctx);
        return now + c->v->retry_backoff_ms;
    }
    int n = 0;
    for (int i = 0; i < g->member_count; i++) {
        for (int k = 0; k < g->members[i].topic_count; k++) {
            bool seen = false;
            for (int j = 0; j < n && !seen; j++) {
                seen = kp_str_eq_c(ts[j].Name, g->members[i].topics[k]);
            }
            if (!seen) {
                ts[n++].Name = kp_str_c(g->members[i].topics[k]);
            }
        }
    }
    struct kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    req.Topics.items = ts;
    req.Topics.count = n; /* 0: no topics at all, which assigns nothing */
    req.AllowAutoTopicCreation = false;
    ctx->generation = g->generation;
    int err = sc_conn_send(c, conn, KP_API_METADATA, ver, &req, on_assign_md, ctx);
    kp_arena_reset(&c->arena);
    if (err != SAMSA_OK) {
        kp_free(ctx);
        return now + c->v->retry_backoff_ms;
    }
    g->assign_md_inflight = true;
    return INT64_MAX;
}

/* SyncGroup ---------------------------------------------------------- */

/*
 * cooperative: SyncGroup's assignment parts[0..k) applied as a difference.
 * Revoked (owned, not assigned) are marked: fetching them stops, their
 * "revoked" event goes first and the member joins again at once (REVOKING
 * commits, waits for the event, then removes them). Added (assigned, not
 * owned) start from their committed offsets, with an "assigned" event of
 * them alone. The others go on as they were.
 */
static void apply_incremental(struct sc_client *c, struct sc_group *g,
                              const struct samsa_partition *parts, int k, int64_t now)
{
    if (g->closing) {
        return; /* close already gave everything up: nothing to change now */
    }
    struct samsa_partition *added = kp_calloc((size_t)(k > 0 ? k : 1), sizeof(*added));
    if (added == NULL || remember_owned(g, parts, k) != SAMSA_OK) {
        kp_free(added);
        g->join_at = now + c->v->retry_backoff_ms;
        return; /* UNJOINED: joins again, keeping what it has */
    }
    int na = 0;
    for (int i = 0; i < k; i++) {
        if (sc_cpart_find(c, parts[i].topic, parts[i].partition) == NULL) {
            added[na++] = parts[i];
        }
    }
    int nr = 0;
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        bool kept = false;
        for (int j = 0; j < k && !kept; j++) {
            kept = parts[j].partition == p->partition && strcmp(parts[j].topic, p->topic) == 0;
        }
        if (!kept && !p->revoking) {
            sc_consumer_revoking(c, p);
            nr++;
        }
    }
    if (sc_consumer_add_parts(c, added, (size_t)na) != SAMSA_OK) {
        /* What could not be added is not fetched: the next generation
         * (joined at once) gives it again. */
        g->rejoin_pending = true;
    }
    g->last_hb_ok = now;
    g->next_hb = now + c->v->heartbeat_interval_ms;
    g->hb_inflight = false;
    sc_group_set_state(c, g, G_STABLE);
    sc_log(c, "group %s: generation %d: %d partition(s) assigned, %d added, %d revoked",
           c->v->group_id, g->generation, k, na, nr);
    if (nr > 0) {
        g->rejoin_pending = false;
        sc_group_rejoin(c, g,
                        "partitions given up: their new owners get them in the next generation");
    }
    if (sc_post_rebalance(c, true, added, (size_t)na, false)) {
        sc_group_rebalanced(g);
    }
    kp_free(added);
    if (g->state == G_STABLE && g->rejoin_pending) {
        g->rejoin_pending = false;
        sc_group_rejoin(c, g, "wanted while joining");
    }
}

static void on_sync(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    (void)ctx;
    struct sc_group *g = c->group;
    if (g == NULL || g->state != G_SYNCING) {
        return;
    }
    int64_t now = sc_now_ms();
    sc_group_clear_members(g);
    g->join_at = now;
    sc_group_set_state(c, g, G_UNJOINED);
    if (err != 0) {
        sc_group_lose_coordinator(c);
        g->join_at = now + c->v->retry_backoff_ms;
        return;
    }
    const struct kp_SyncGroupResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    if (e == KP_ERR_UNKNOWN_MEMBER_ID) {
        sc_group_set_member_id(g, KP_STR_NULL);
        coop_lost(c, g, "SyncGroup: UNKNOWN_MEMBER_ID");
        return;
    }
    if (e == KP_ERR_ILLEGAL_GENERATION) {
        coop_lost(c, g, "SyncGroup: ILLEGAL_GENERATION");
        return;
    }
    if (e == KP_ERR_REBALANCE_IN_PROGRESS) {
        return;
    }
    if (e != SAMSA_OK) {
        if (sc_group_coordinator_error(e)) {
            sc_group_lose_coordinator(c);
            g->join_at = now + c->v->retry_backoff_ms;
            return;
        }
        sc_post_error(c, e, "group %s: SyncGroup: %s; joining again", c->v->group_id,
                      samsa_err_str(e));
        g->join_at = now + sc_group_join_backoff_ms(c);
        return;
    }
    struct sc_tp *tps = NULL;
    int n = 0;
    int derr = sc_assignment_decode(r->Assignment.ptr, (size_t)(r->Assignment.len > 0
                                                                    ? r->Assignment.len
                                                                    : 0),
                                    &tps, &n);
    if (derr != SAMSA_OK) {
        sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                      "group %s: the Assignment of generation %d does not decode; joining again",
                      c->v->group_id, g->generation);
        g->join_at = now + sc_group_join_backoff_ms(c);
        return;
    }
    struct samsa_partition *parts = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*parts));
    int k = 0;
    for (int i = 0; parts != NULL && i < n; i++) {
        if (tps[i].partition < 0 || tps[i].topic[0] == '\0') {
            continue; /* not a partition: ignored */
        }
        bool dup = false;
        for (int j = 0; j < k && !dup; j++) {
            dup = parts[j].partition == tps[i].partition && strcmp(parts[j].topic, tps[i].topic) == 0;
        }
        if (!dup) {
            parts[k].topic = tps[i].topic;
            parts[k].partition = tps[i].partition;
            parts[k].offset = SAMSA_OFFSET_STORED;
            k++;
        }
    }
    if (parts != NULL && sc_group_cooperative(c)) {
        apply_incremental(c, g, parts, k, now);
        kp_free(parts);
        sc_tps_free(tps, n);
        return;
    }
    int aerr = parts != NULL ? sc_consumer_set_assignment(c, parts, (size_t)k) : SAMSA_ERR_NOMEM;
    if (aerr == SAMSA_OK) {
        aerr = remember_owned(g, parts, k);
    }
    if (aerr == SAMSA_OK) {
        if (sc_post_rebalance(c, true, parts, (size_t)k, false)) {
            sc_group_rebalanced(g);
        }
        g->last_hb_ok = now;
        g->next_hb = now + c->v->heartbeat_interval_ms;
        g->hb_inflight = false;
        sc_group_set_state(c, g, G_STABLE);
        sc_log(c, "group %s: generation %d: %d partition(s) assigned", c->v->group_id,
               g->generation, k);
    } else {
        g->join_at = now + c->v->retry_backoff_ms;
    }
    kp_free(parts);
    sc_tps_free(tps, n);
    if (g->state == G_STABLE && g->rejoin_pending) {
        g->rejoin_pending = false;
        sc_group_rejoin(c, g, "wanted while joining");
    }
}

int64_t sc_group_send_sync(struct sc_client *c, struct sc_group *g, struct sc_conn *coord,
                           int64_t now)
{
    int16_t ver = sc_conn_version(coord, KP_API_SYNC_GROUP, 0, 3);
    if (ver < 0) {
        g->join_at = now + sc_group_join_backoff_ms(c);
        sc_group_set_state(c, g, G_UNJOINED);
        return g->join_at;
    }
    int n = g->leader ? g->member_count : 0;
    struct kp_writer *ws = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*ws));
    struct kp_SyncGroupRequest_SyncGroupRequestAssignment *as =
        kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*as));
    int err = SAMSA_ERR_NOMEM;
    if (ws == NULL || as == NULL) {
        goto out;
    }
    err = SAMSA_OK;
    for (int i = 0; i < n; i++) {
        kp_wr_init(&ws[i], (size_t)64 * 1024 * 1024);
        sc_assignment_encode(&ws[i], g->members[i].assigned, g->members[i].assigned_count);
        if (ws[i].err != 0) {
            err = SAMSA_ERR_NOMEM;
        }
        as[i].MemberId = kp_str_c(g->members[i].member_id);
        as[i].Assignment = (struct kp_bytes){ws[i].buf, (int32_t)ws[i].len};
    }
    if (err == SAMSA_OK) {
        struct kp_SyncGroupRequest req;
        kp_SyncGroupRequest_init(&req);
        req.GroupId = kp_str_c(c->v->group_id);
        req.GenerationId = g->generation;
        req.MemberId = kp_str_c(sc_group_member_id(g));
        req.GroupInstanceId = c->v->group_instance_id[0] != '\0'
                                  ? kp_str_c(c->v->group_instance_id)
                                  : KP_STR_NULL;
        req.Assignments.items = as;
        req.Assignments.count = n;
        err = sc_conn_send(c, coord, KP_API_SYNC_GROUP, ver, &req, on_sync, NULL);
    }
out:
    for (int i = 0; ws != NULL && i < n; i++) {
        kp_wr_free(&ws[i]);
    }
    kp_free(ws);
    kp_free(as);
    if (err != SAMSA_OK) {
        return now + c->v->retry_backoff_ms;
    }
    sc_group_set_state(c, g, G_SYNCING);
    return INT64_MAX;
}
