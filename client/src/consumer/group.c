/*
 * group.id for a consumer: the group coordinator (FindCoordinator; its own
 * connection), committed offsets (OffsetFetch resolves SAMSA_OFFSET_STORED),
 * commits (sync, async, auto commit every auto.commit.interval.ms) and,
 * after samsa_consumer_subscribe, membership of the classic consumer group
 * protocol (reference §A4), eager as Java's range and roundrobin are:
 *
 *   UNJOINED --JoinGroup--> JOINING --(leader: Metadata of every member's
 *   topics, then the chosen assignor)--> SYNC_READY --SyncGroup--> SYNCING
 *   --assignment applied, "assigned" event--> STABLE (a Heartbeat every
 *   heartbeat.interval.ms, auto commits)
 *
 *   STABLE --a rejoin is wanted (REBALANCE_IN_PROGRESS, a subscribed topic's
 *   partition count changed, a new subscription)--> REVOKING: fetching
 *   stops, the positions are committed (enable.auto.commit) and the
 *   "revoked" event is served by the user's poll (a rebalance callback may
 *   still commit the generation's positions there); then the assignment is
 *   dropped and the member joins again (Java's onJoinPrepare).
 *
 *   Membership lost (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, no heartbeat
 *   answered within session.timeout.ms): the assignment is dropped at once,
 *   nothing can be committed for it any more, and the member joins again.
 *
 *   No poll for max.poll.interval.ms: LeaveGroup, the assignment dropped,
 *   SAMSA_ERR_MAX_POLL_EXCEEDED for the error callback; the next poll joins
 *   again (as the Java client does).
 *
 * cooperative-sticky (KIP-429, incremental) changes three things:
 *   - a rejoin keeps the assignment: REVOKING only commits (enable.auto.commit)
 *     and, when partitions are being given up, waits for the user's poll to
 *     have run their "revoked" event; then they alone are removed. Fetching
 *     of the others goes on through JOINING and SYNCING (commits only while
 *     the generation lasts: STABLE and REVOKING);
 *   - the Subscription is v3 with OwnedPartitions (what the member fetches
 *     now) and GenerationId; the leader reads what each member owns from it;
 *   - SyncGroup's assignment is applied as a difference: revoked = owned -
 *     assigned are marked (fetching them stops at once) and get a "revoked"
 *     event, added = assigned - owned start (committed offsets) with an
 *     "assigned" event, the rest go on untouched. Revoked partitions make
 *     the member join again at once, so that their new owners get them in
 *     the next generation. A lost membership drops everything, as eager.
 *
 * A simple consumer (assign, no subscribe) commits with generation -1 and an
 * empty member id, which the coordinator accepts for an Empty group.
 *
 * Response handlers only change state (the response lives in the client's
 * arena, which the send helpers reuse); sc_group_serve sends.
 *
 * This file: what every part of the group shares (struct sc_group, created
 * on demand; the subscription's topics; the state; the assignment dropped
 * or revoked; a membership lost; a rejoin wanted) and what Metadata and the
 * user's polls mean for the group. consumer/group.h lists the other files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/group.h"

static const char *const state_names[] = {
    "idle",   "unjoined", "joining",        "assign-metadata", "sync-ready",
    "syncing", "stable",  "revoking",       "poll-exceeded",   "fatal",
};

void sc_op_commit_arg_free(void *varg)
{
    struct sc_commit_arg *a = varg;
    if (a == NULL) {
        return;
    }
    for (int i = 0; i < a->count; i++) {
        kp_free(a->items[i].topic);
    }
    kp_free(a->items);
    kp_free(a);
}

struct sc_group *sc_group_get(struct sc_client *c)
{
    if (c->group == NULL && c->v->group_id[0] != '\0') {
        c->group = kp_calloc(1, sizeof(*c->group));
        if (c->group != NULL) {
            c->group->coord_id = -1;
            c->group->generation = -1;
            c->group->owned_generation = -1;
            c->group->next_auto_commit = sc_now_ms() + c->v->auto_commit_interval_ms;
            c->group->last_poll = sc_now_ms();
            c->group->state_ms = c->group->last_poll;
        }
    }
    return c->group;
}

const char *sc_group_member_id(const struct sc_group *g)
{
    return g->member_id != NULL ? g->member_id : "";
}

void sc_group_set_member_id(struct sc_group *g, struct kp_str id)
{
    kp_free(g->member_id);
    g->member_id = id.len > 0 ? sc_strndup(id.ptr, (size_t)id.len) : NULL;
}

void sc_group_clear_members(struct sc_group *g)
{
    for (int i = 0; i < g->member_count; i++) {
        sc_member_clear(&g->members[i]);
    }
    kp_free(g->members);
    g->members = NULL;
    g->member_count = 0;
}

void sc_group_free_topics(struct sc_group *g)
{
    for (int i = 0; i < g->topic_count; i++) {
        kp_free(g->topics[i]);
    }
    kp_free(g->topics);
    kp_free(g->topic_parts);
    g->topics = NULL;
    g->topic_parts = NULL;
    g->topic_count = 0;
}

void sc_subscription_free(struct sc_subscription *s)
{
    for (int i = 0; i < s->literal_count; i++) {
        kp_free(s->literals[i]);
    }
    for (int i = 0; i < s->pattern_count; i++) {
        kp_free(s->patterns[i]);
        regfree(&s->regexes[i]);
    }
    kp_free(s->literals);
    kp_free(s->patterns);
    kp_free(s->regexes);
    memset(s, 0, sizeof(*s));
}

void sc_group_free(struct sc_client *c)
{
    struct sc_group *g = c->group;
    if (g == NULL) {
        return;
    }
    sc_group_clear_members(g);
    sc_group_free_topics(g);
    sc_subscription_free(&g->sub);
    sc_tps_free(g->owned, g->owned_count);
    kp_free(g->member_id);
    kp_free(g);
    c->group = NULL;
}

/* Whether the group runs incremental rebalances (the configuration refuses
 * a list mixing eager and cooperative assignors). */
bool sc_group_cooperative(const struct sc_client *c)
{
    return c->v->assignor_count > 0 && sc_assignor_cooperative(c->v->assignors[0]);
}

void sc_group_set_state(struct sc_client *c, struct sc_group *g, int state)
{
    if (g->state != state) {
        sc_log(c, "group %s: %s -> %s", c->v->group_id, state_names[g->state],
               state_names[state]);
        g->state_ms = sc_now_ms();
    }
    g->state = state;
}

void sc_group_rebalanced(struct sc_group *g)
{
    g->rebalance_cnt++;
    g->rebalance_ms = sc_now_ms();
}

static void note_reason(struct sc_group *g, const char *why)
{
    (void)snprintf(g->rebalance_reason, sizeof(g->rebalance_reason), "%s", why);
}

/* librdkafka's cgrp names (rdkafka_cgrp.c's rd_kafka_cgrp_state_names and
 * rd_kafka_cgrp_join_state_names) for what our states mean. */
void sc_group_stats(const struct sc_client *c, int64_t now, struct sc_kind_stats *out)
{
    const struct sc_group *g = c->group;
    if (c->v->group_id[0] == '\0') {
        return;
    }
    out->cgrp = true;
    out->assignment_size = c->cpart_count;
    if (g == NULL) {
        out->state = "init";
        out->join_state = "init";
        out->samsa_state = state_names[G_IDLE];
        out->rebalance_reason = "";
        out->generation = -1;
        return;
    }
    out->state = g->coord_id >= 0 ? "up" : g->coord_inflight ? "query-coord" : "init";
    switch (g->state) {
    case G_JOINING:
        out->join_state = "wait-join";
        break;
    case G_ASSIGN_MD:
        out->join_state = "wait-metadata";
        break;
    case G_SYNC_READY:
    case G_SYNCING:
        out->join_state = "wait-sync";
        break;
    case G_STABLE:
        out->join_state = "steady";
        break;
    case G_REVOKING:
        out->join_state = "wait-unassign-call";
        break;
    default:
        out->join_state = "init";
        break;
    }
    out->samsa_state = state_names[g->state];
    out->stateage_ms = now - g->state_ms;
    out->rebalance_cnt = g->rebalance_cnt;
    out->rebalance_age_ms = g->rebalance_ms > 0 ? now - g->rebalance_ms : -1;
    out->rebalance_reason = g->rebalance_reason;
    out->generation = g->generation;
}

bool sc_group_blocks_fetch(struct sc_client *c)
{
    /* cooperative: what the member owns is fetched through rebalances (the
     * partitions being given up are marked and skipped one by one) */
    return c->subscribed && c->group != NULL && c->group->state != G_STABLE &&
           !sc_group_cooperative(c);
}

int sc_group_topics(struct sc_client *c, const char **names, int max)
{
    const struct sc_group *g = c->group;
    if (g != NULL && c->subscribed && g->sub.pattern_count > 0) {
        return SC_ALL_TOPICS; /* the patterns are matched against every topic */
    }
    int n = 0;
    for (int i = 0; g != NULL && c->subscribed && i < g->topic_count && n < max; i++) {
        names[n++] = g->topics[i];
    }
    return n;
}

/* The assignment as samsa_partition (topics borrowed from the cparts):
 * those marked revoking when `revoking`, else the others. */
static struct samsa_partition *assignment_view(struct sc_client *c, bool revoking, int *count)
{
    struct samsa_partition *v =
        kp_calloc((size_t)(c->cpart_count > 0 ? c->cpart_count : 1), sizeof(*v));
    int n = 0;
    for (int i = 0; v != NULL && i < c->cpart_count; i++) {
        if (c->cparts[i]->revoking != revoking) {
            continue;
        }
        v[n].topic = c->cparts[i]->topic;
        v[n].partition = c->cparts[i]->partition;
        v[n].offset = sc_cpart_next_for_app(c, c->cparts[i]);
        n++;
    }
    *count = n;
    return v;
}

/* Queues the "revoked" event of the assignment (cooperative: the partitions
 * marked revoking when `revoking`, else the others; eager marks none); with
 * `ack` the group waits for the user's poll to have run it. */
static bool post_revoked_of(struct sc_client *c, struct sc_group *g, bool revoking, bool ack)
{
    int n = 0;
    struct samsa_partition *v = assignment_view(c, revoking, &n);
    bool posted = v != NULL && n > 0 && sc_post_rebalance(c, false, v, (size_t)n, ack);
    kp_free(v);
    if (posted) {
        sc_group_rebalanced(g);
    }
    if (posted && ack) {
        g->acks_posted++;
    }
    return posted;
}

bool sc_group_post_revoked(struct sc_client *c, struct sc_group *g, bool ack)
{
    return post_revoked_of(c, g, false, ack);
}

/* Drops the assignment at once (the partitions are lost to this member). */
void sc_group_drop_assignment(struct sc_client *c, struct sc_group *g, bool post)
{
    if (post) {
        (void)sc_group_post_revoked(c, g, false);
    }
    if (c->cpart_count > 0) {
        int err = sc_consumer_set_assignment(c, NULL, 0);
        (void)err; /* clearing allocates one slot; on failure the old one stays */
    }
}

int sc_group_join_backoff_ms(const struct sc_client *c)
{
    return c->v->retry_backoff_ms > 1000 ? c->v->retry_backoff_ms : 1000;
}

/* The generation is gone: drop everything and join again. */
void sc_group_lost(struct sc_client *c, struct sc_group *g, bool reset_member, const char *why)
{
    sc_log(c, "group %s: membership lost (%s): joining again", c->v->group_id, why);
    note_reason(g, why);
    sc_group_drop_assignment(c, g, true);
    g->generation = -1;
    if (reset_member) {
        kp_free(g->member_id);
        g->member_id = NULL;
    }
    sc_group_clear_members(g);
    g->rejoin_pending = false;
    g->join_at = sc_now_ms();
    sc_group_set_state(c, g, G_UNJOINED);
}


/* A rejoin is wanted. */
void sc_group_rejoin(struct sc_client *c, struct sc_group *g, const char *why)
{
    if (g->closing) {
        return;
    }
    switch (g->state) {
    case G_JOINING:
    case G_ASSIGN_MD:
    case G_SYNC_READY:
    case G_SYNCING:
        g->rejoin_pending = true;
        return;
    case G_STABLE:
        break;
    default:
        return;
    }
    sc_log(c, "group %s: rejoining: %s", c->v->group_id, why);
    note_reason(g, why);
    g->join_at = sc_now_ms();
    if (sc_group_cooperative(c)) {
        /* The assignment stays and is fetched on; the positions are
         * committed first (Java's onJoinPrepare) and the partitions marked
         * revoking wait for their "revoked" event to have been served. */
        sc_group_set_state(c, g, G_REVOKING);
        g->revoke_commit_inflight = false;
        g->revoke_commit_todo = c->v->enable_auto_commit && c->cpart_count > 0;
        g->revoke_wait_ack = c->conf->rebalance_cb != NULL && post_revoked_of(c, g, true, true);
        g->revoke_deadline = sc_now_ms() + c->v->max_poll_interval_ms;
        return;
    }
    if (c->cpart_count == 0) {
        sc_group_set_state(c, g, G_UNJOINED);
        return;
    }
    sc_group_set_state(c, g, G_REVOKING);
    sc_consumer_stop_fetching(c);
    /* Sent by membership_serve: rejoin runs inside response handlers, whose
     * response lives in the arena a send would reuse. */
    g->revoke_commit_inflight = false;
    g->revoke_commit_todo = c->v->enable_auto_commit;
    g->revoke_wait_ack = c->conf->rebalance_cb != NULL && sc_group_post_revoked(c, g, true);
    /* A user who does not poll is out of the group after this anyway. */
    g->revoke_deadline = sc_now_ms() + c->v->max_poll_interval_ms;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sc_group_sort_names(char **names, int n)
{
    qsort(names, (size_t)n, sizeof(*names), cmp_cstr);
    int u = 0;
    for (int i = 0; i < n; i++) {
        if (u > 0 && strcmp(names[u - 1], names[i]) == 0) {
            kp_free(names[i]);
            names[i] = NULL;
            continue;
        }
        names[u++] = names[i];
    }
    return u;
}

/* Whether the subscription's patterns take topic (librdkafka matches a
 * pattern against every topic of the metadata, rd_kafka_metadata_topic_match;
 * internal topics are left out, as Java's exclude.internal.topics=true). A
 * topic answered with an error is taken only if it was already (a leader
 * being elected must not make the member join twice). */
static bool pattern_takes(const struct sc_group *g,
                          const struct kp_MetadataResponse_MetadataResponseTopic *mt)
{
    if (mt->IsInternal || mt->ErrorCode == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION ||
        mt->Name.len <= 0 || mt->Name.len > 255) {
        return false;
    }
    char name[256];
    memcpy(name, mt->Name.ptr, (size_t)mt->Name.len);
    name[mt->Name.len] = '\0';
    bool had = false;
    for (int i = 0; i < g->topic_count && !had; i++) {
        had = strcmp(g->topics[i], name) == 0;
    }
    if (mt->ErrorCode != 0 && !had) {
        return false;
    }
    for (int i = 0; i < g->sub.pattern_count; i++) {
        if (regexec(&g->sub.regexes[i], name, 0, NULL, 0) == 0) {
            return true;
        }
    }
    return false;
}

/* The subscription's topics again from a Metadata answer of every topic:
 * the names given and what the patterns match now. A change makes the
 * member join again with them (or join at all, the first time). */
static void rematch(struct sc_client *c, struct sc_group *g, const struct kp_MetadataResponse *md)
{
    int cap = g->sub.literal_count + (md->Topics.count > 0 ? md->Topics.count : 0);
    char **names = kp_calloc((size_t)(cap > 0 ? cap : 1), sizeof(*names));
    int32_t *parts = kp_calloc((size_t)(cap > 0 ? cap : 1), sizeof(*parts));
    int n = 0;
    bool ok = names != NULL && parts != NULL;
    for (int i = 0; ok && i < g->sub.literal_count; i++) {
        names[n] = sc_strdup(g->sub.literals[i]);
        ok = names[n] != NULL;
        n += ok ? 1 : 0;
    }
    for (int32_t t = 0; ok && t < md->Topics.count; t++) {
        if (!pattern_takes(g, &md->Topics.items[t])) {
            continue;
        }
        names[n] = sc_strndup(md->Topics.items[t].Name.ptr, (size_t)md->Topics.items[t].Name.len);
        ok = names[n] != NULL;
        n += ok ? 1 : 0;
    }
    if (!ok) {
        goto out_free; /* no memory: the next answer tries again */
    }
    n = sc_group_sort_names(names, n);
    for (int i = 0; i < n; i++) {
        parts[i] = -1;
        for (int j = 0; j < g->topic_count; j++) {
            if (strcmp(g->topics[j], names[i]) == 0) {
                parts[i] = g->topic_parts[j]; /* kept: its partition count too */
            }
        }
    }
    bool same = n == g->topic_count;
    for (int i = 0; same && i < n; i++) {
        same = strcmp(names[i], g->topics[i]) == 0;
    }
    if (same && !g->await_match) {
        goto out_free;
    }
    char why[160];
    snprintf(why, sizeof(why), "the subscription's patterns match %d topic(s) now, %d before",
             n - g->sub.literal_count, g->topic_count - g->sub.literal_count);
    sc_group_free_topics(g);
    g->topics = names;
    g->topic_parts = parts;
    g->topic_count = n;
    if (g->await_match && g->state == G_UNJOINED) {
        g->join_at = sc_now_ms(); /* the first join, with them */
        note_reason(g, why);
    } else {
        sc_group_rejoin(c, g, why);
    }
    g->await_match = false;
    return;
out_free:
    for (int i = 0; names != NULL && i < n; i++) {
        kp_free(names[i]);
    }
    kp_free(names);
    kp_free(parts);
}

void sc_group_metadata(struct sc_client *c, const struct kp_MetadataResponse *md)
{
    struct sc_group *g = c->group;
    if (g == NULL || !c->subscribed) {
        return;
    }
    if (g->sub.pattern_count > 0) {
        rematch(c, g, md);
    }
    for (int i = 0; i < g->topic_count; i++) {
        bool listed = false;
        for (int32_t t = 0; t < md->Topics.count && !listed; t++) {
            listed = kp_str_eq_c(md->Topics.items[t].Name, g->topics[i]);
        }
        if (!listed && g->sub.pattern_count > 0) {
            /* an answer of every topic leaves out a name it lacks rather
             * than answering UNKNOWN_TOPIC_OR_PARTITION for it */
            if (g->topic_parts[i] != TOPIC_MISSING) {
                sc_post_error(c, SAMSA_ERR_UNKNOWN_TOPIC,
                              "subscribed topic %s not available: no such topic in the cluster",
                              g->topics[i]);
            }
            g->topic_parts[i] = TOPIC_MISSING;
            continue;
        }
        for (int32_t t = 0; t < md->Topics.count; t++) {
            const struct kp_MetadataResponse_MetadataResponseTopic *mt = &md->Topics.items[t];
            if (!kp_str_eq_c(mt->Name, g->topics[i])) {
                continue;
            }
            int32_t n = mt->Partitions.count > 0 ? mt->Partitions.count : 0;
            int32_t had = g->topic_parts[i] == TOPIC_MISSING ? 0 : g->topic_parts[i];
            if (mt->ErrorCode == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
                /* librdkafka: "Subscribed topic not available" (a consumer
                 * error); once per topic until it is seen */
                if (g->topic_parts[i] != TOPIC_MISSING) {
                    sc_post_error(c, SAMSA_ERR_UNKNOWN_TOPIC,
                                  "subscribed topic %s not available: no such topic in the "
                                  "cluster",
                                  g->topics[i]);
                }
                if (had > 0) {
                    char why[300];
                    snprintf(why, sizeof(why), "%s is gone, had %d partitions", g->topics[i],
                             had);
                    sc_group_rejoin(c, g, why);
                }
                g->topic_parts[i] = TOPIC_MISSING;
                continue;
            }
            if (had >= 0 && had != n) {
                char why[300];
                snprintf(why, sizeof(why), "%s has %d partitions, had %d", g->topics[i], n, had);
                g->topic_parts[i] = n;
                sc_group_rejoin(c, g, why);
            }
            g->topic_parts[i] = n;
        }
    }
}

void sc_group_polled(struct sc_client *c, bool entering)
{
    struct sc_group *g = c->group;
    if (g == NULL || !c->subscribed) {
        return;
    }
    g->last_poll = sc_now_ms();
    if (entering) {
        g->polling++;
        if (g->state == G_POLL_EXCEEDED && !g->closing) {
            g->join_at = g->last_poll;
            sc_group_set_state(c, g, G_UNJOINED);
            sc_wake(c);
        }
    } else if (g->polling > 0) {
        g->polling--;
    }
}
