/* samsa-broker: the admin API's snapshots, built and published by the
 * reactor (see admin_feed.h). */
#define _GNU_SOURCE

#include "admin_feed.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/schema.h>

#include "admin/admin.h"
#include "base/clock.h"
#include "base/mailbox.h"
#include "base/logging.h"
#include "replica/replication.h"
#include "cluster/zk.h"
#include "cluster/zk_call.h"
#include "cluster/zk_json.h"
#include "group/group.h"
#include "quota/quota.h"
#include "reassign_watch.h"
#include "server/group.h"
#include "txn/coordinator.h"

#define TICK_MS 100
#define REFRESH_MS 1000
#define MAX_GROUPS_WITH_LAG 1000
#define URL_MAX 255

struct feed_url {
    int32_t id;
    char url[URL_MAX + 1];
};

/* One read of /brokers/ids/<id> in flight (lives until its answer, or
 * the feed's free after the session closed). */
struct url_read {
    struct br_zk_call call; /* first: the tag */
    struct br_admin_feed *f;
    struct url_read *next;
    int32_t id;
};

struct br_admin_feed {
    struct br_broker *b;
    struct br_admin *admin;
    struct br_timer timer;
    uint64_t version;
    uint64_t fingerprint;
    int64_t next_build_ms;
    int64_t last_publish_ms;
    int64_t started_ms;
    /* the other brokers' admin URLs, from their registrations */
    struct feed_url *urls;
    size_t nurls;
    struct url_read *reads;
    uint64_t brokers_seen; /* fingerprint of the live brokers last read */
    int64_t builds;        /* snapshots built */
    int64_t reactor_us;    /* the reactor's time in the ticks: fingerprints and builds */
    struct br_reassign_watch *moves; /* the partition moves under way (a cluster's) */
};

/* ------------------------------------------------------------ the fingerprint */

static uint64_t mix(uint64_t h, int64_t v)
{
    h ^= (uint64_t)v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t brokers_fingerprint(const struct br_broker *b)
{
    uint64_t h = mix(0, (int64_t)b->s.mc.nbrokers);
    for (size_t i = 0; i < b->s.mc.nbrokers; i++) {
        h = mix(h, b->s.mc.brokers[i].id);
        h = mix(h, b->s.mc.brokers[i].port);
    }
    return h;
}

/* What the documents show, folded: a change of any of it makes a new
 * snapshot. Integers only: cheap enough for 10 times a second. */
static uint64_t fingerprint(struct br_broker *b)
{
    uint64_t h = mix(brokers_fingerprint(b), b->s.mc.controller_id);
    h = mix(h, (int64_t)br_reassign_watch_version(b->admin_feed->moves));
    h = mix(h, b->s.quotas != NULL ? (int64_t)br_quotas_version(b->s.quotas) : 0);
    for (int role = BR_REPL_LEADER; role <= BR_REPL_FOLLOWER; role++) {
        struct br_repl_quota_view v;
        br_replication_quota_view(b->s.replication, (enum br_repl_role)role, br_now_mono_ms(), &v);
        h = mix(h, v.bytes_total);
        h = mix(h, v.throttled_total);
        h = mix(h, v.bound);
    }
    h = mix(h, (int64_t)b->s.rm.ntopics);
    h = mix(h, (int64_t)b->s.mc.ntopics);
    for (size_t t = 0; t < b->s.rm.ntopics; t++) {
        struct br_topic *tp = b->s.rm.topics[t];
        h = mix(h, tp->npartitions);
        for (int32_t i = 0; i < tp->npartitions; i++) {
            struct br_partition *p = &tp->partitions[i];
            if (p->role == BR_ROLE_NONE || p->log == NULL) {
                continue;
            }
            h = mix(h, p->role);
            h = mix(h, p->leader_epoch);
            h = mix(h, p->hw);
            h = mix(h, br_partition_lso(p));
            h = mix(h, br_log_end_offset(p->log));
            h = mix(h, br_log_start_offset(p->log));
            h = mix(h, p->nisr);
            for (int32_t k = 0; k < p->nisr; k++) {
                h = mix(h, p->isr[k]);
            }
            for (int32_t k = 0; k < p->nremotes; k++) {
                h = mix(h, p->remotes[k].leo);
            }
        }
    }
    h = mix(h, (int64_t)b->s.txn.n);
    for (size_t i = 0; i < b->s.txn.n; i++) {
        const struct br_txn *x = b->s.txn.txns[i];
        h = mix(h, x->producer_id);
        h = mix(h, x->epoch);
        h = mix(h, x->status);
        h = mix(h, (int64_t)x->nparts);
    }
    for (size_t t = 0; t < b->s.mc.ntopics; t++) {
        const struct br_mc_topic *tp = b->s.mc.topics[t];
        for (int32_t i = 0; i < tp->npartitions; i++) {
            const struct br_mc_partition *p = &tp->parts[i];
            h = mix(h, p->leader);
            h = mix(h, p->leader_epoch);
            h = mix(h, p->nisr);
            for (int32_t k = 0; k < p->nisr; k++) {
                h = mix(h, p->isr[k]);
            }
        }
    }
    return h;
}

/* ------------------------------------------------------------ building */

static struct br_partition *local_partition(struct br_broker *b, const char *topic, int32_t index)
{
    struct br_topic *t = br_rm_find_topic(&b->s.rm, kp_str_c(topic));
    if (t == NULL || index < 0 || index >= t->npartitions) {
        return NULL;
    }
    struct br_partition *p = &t->partitions[index];
    return p->role == BR_ROLE_NONE || p->log == NULL ? NULL : p;
}

static bool mc_alive(const struct br_broker *b, int32_t id)
{
    return br_mc_broker(&b->s.mc, id) != NULL;
}

static bool has_id(const int32_t *ids, int32_t n, int32_t id)
{
    for (int32_t i = 0; i < n; i++) {
        if (ids[i] == id) {
            return true;
        }
    }
    return false;
}

struct clocks {
    int64_t mono;
    int64_t wall;
};

/* A partition this broker leads: every replica from what it knows. */
static void fill_led(struct br_snapshot *s, const struct br_broker *b, const struct br_partition *p,
                     const struct clocks *now, struct br_snap_partition *out)
{
    int64_t leo = br_log_end_offset(p->log);
    out->leader = b->s.node_id;
    out->led_here = true;
    int32_t self = b->s.node_id;
    int32_t nrep = p->nassigned > 0 ? p->nassigned : 1;
    const int32_t *rep = p->nassigned > 0 ? p->assigned : &self;
    out->nreplicas = nrep;
    out->replicas = br_snap_alloc(s, (size_t)nrep * sizeof *out->replicas);
    int32_t nisr = p->nisr > 0 ? p->nisr : 1;
    const int32_t *isr = p->nisr > 0 ? p->isr : &self;
    out->nisr = nisr;
    out->isr = br_snap_alloc(s, (size_t)nisr * sizeof *out->isr);
    if (out->replicas == NULL || out->isr == NULL) {
        out->nreplicas = 0;
        out->nisr = 0;
        return;
    }
    memcpy(out->isr, isr, (size_t)nisr * sizeof *isr);
    for (int32_t i = 0; i < nrep; i++) {
        struct br_snap_replica *r = &out->replicas[i];
        r->broker = rep[i];
        r->in_sync = has_id(isr, nisr, rep[i]);
        r->offline = !mc_alive(b, rep[i]);
        r->log_end_offset = -1;
        r->lag = -1;
        r->last_caught_up_ms = -1;
        r->since_caught_up_ms = -1;
        if (rep[i] == self) {
            r->log_end_offset = leo;
            r->lag = 0;
            r->last_caught_up_ms = now->wall;
            r->since_caught_up_ms = 0;
            r->offline = false;
            continue;
        }
        for (int32_t k = 0; k < p->nremotes; k++) {
            const struct br_remote_replica *rr = &p->remotes[k];
            if (rr->broker != rep[i]) {
                continue;
            }
            r->log_end_offset = rr->leo;
            r->lag = rr->leo >= 0 ? (leo > rr->leo ? leo - rr->leo : 0) : -1;
            if (rr->last_caught_up_ms > 0) {
                int64_t since = now->mono - rr->last_caught_up_ms;
                r->since_caught_up_ms = since > 0 ? since : 0;
                r->last_caught_up_ms = now->wall - r->since_caught_up_ms;
            }
        }
    }
}

/* A partition led elsewhere: the metadata cache's view, and this
 * broker's own replica when it has one. */
static void fill_cached(struct br_snapshot *s, const struct br_broker *b,
                        const struct br_mc_partition *mp, const struct br_partition *p,
                        struct br_snap_partition *out)
{
    out->leader = mp != NULL && mp->present ? mp->leader : -1;
    out->leader_epoch = mp != NULL && mp->present ? mp->leader_epoch : -1;
    if (mp == NULL || !mp->present) {
        return;
    }
    out->nreplicas = mp->nreplicas;
    out->replicas = br_snap_alloc(s, (size_t)mp->nreplicas * sizeof *out->replicas + 1);
    out->nisr = mp->nisr;
    out->isr = br_snap_alloc(s, (size_t)mp->nisr * sizeof *out->isr + 1);
    if (out->replicas == NULL || out->isr == NULL) {
        out->nreplicas = 0;
        out->nisr = 0;
        return;
    }
    memcpy(out->isr, mp->isr, (size_t)mp->nisr * sizeof *mp->isr);
    for (int32_t i = 0; i < mp->nreplicas; i++) {
        struct br_snap_replica *r = &out->replicas[i];
        r->broker = mp->replicas[i];
        r->in_sync = has_id(mp->isr, mp->nisr, r->broker);
        r->offline = !mc_alive(b, r->broker) || has_id(mp->offline, mp->noffline, r->broker);
        r->log_end_offset = -1;
        r->lag = -1;
        r->last_caught_up_ms = -1;
        r->since_caught_up_ms = -1;
        if (p != NULL && r->broker == b->s.node_id) {
            r->log_end_offset = br_log_end_offset(p->log);
        }
    }
}

static void fill_partition(struct br_snapshot *s, struct br_broker *b, const char *topic,
                           int32_t index, const struct br_mc_partition *mp,
                           const struct clocks *now, struct br_snap_partition *out)
{
    struct br_partition *p = local_partition(b, topic, index);
    out->partition = index;
    out->high_watermark = -1;
    out->last_stable_offset = -1;
    out->log_start_offset = -1;
    out->log_end_offset = -1;
    out->size_bytes = -1;
    if (p != NULL) {
        out->hosted = true;
        out->high_watermark = p->hw;
        out->last_stable_offset = br_partition_lso(p);
        out->log_start_offset = br_log_start_offset(p->log);
        out->log_end_offset = br_log_end_offset(p->log);
        out->size_bytes = br_log_size_bytes(p->log);
        out->leader_epoch = p->leader_epoch;
    }
    if (p != NULL && p->role == BR_ROLE_LEADER) {
        fill_led(s, b, p, now, out);
    } else {
        fill_cached(s, b, mp, p, out);
    }
}

static void fill_configs(struct br_snapshot *s, const struct br_topic *t, const struct br_config *bc,
                         struct br_snap_topic *out)
{
    out->configs = br_snap_alloc(s, (size_t)BR_TCFG__COUNT * sizeof *out->configs);
    if (out->configs == NULL) {
        return;
    }
    for (int k = 0; k < BR_TCFG__COUNT; k++) {
        struct br_topic_config_entry e;
        br_topic_config_entry(&t->config, bc, (enum br_topic_config_key)k, &e);
        out->configs[k].key = e.name;
        out->configs[k].value = br_snap_strdup(s, e.value);
        out->configs[k].sensitive = e.sensitive;
    }
    out->nconfigs = BR_TCFG__COUNT;
}

static void fill_topic(struct br_snapshot *s, struct br_broker *b, const char *name,
                       const struct br_mc_topic *mt, const struct clocks *now,
                       struct br_snap_topic *out)
{
    struct br_topic *t = br_rm_find_topic(&b->s.rm, kp_str_c(name));
    out->name = br_snap_strdup(s, name);
    out->min_isr = -1;
    int32_t np = mt != NULL ? mt->npartitions : 0;
    if (t != NULL) {
        out->internal = t->internal;
        out->min_isr = t->config.min_insync_replicas;
        out->messages_in = t->messages_in;
        out->bytes_in = t->bytes_in;
        out->bytes_out = t->bytes_out;
        np = np > t->npartitions ? np : t->npartitions;
        fill_configs(s, t, &b->s.cfg, out);
    } else {
        out->internal = name != NULL && strcmp(name, "__consumer_offsets") == 0;
    }
    out->parts = br_snap_alloc(s, (size_t)np * sizeof *out->parts + 1);
    if (out->parts == NULL) {
        return;
    }
    out->npartitions = np;
    for (int32_t i = 0; i < np; i++) {
        const struct br_mc_partition *mp = mt != NULL && i < mt->npartitions ? &mt->parts[i] : NULL;
        fill_partition(s, b, name, i, mp, now, &out->parts[i]);
    }
}

static void fill_topics(struct br_snapshot *s, struct br_broker *b, const struct clocks *now)
{
    /* the cluster's topics, as the metadata cache knows them (sorted; a
     * standalone broker's own, local_controller.h) */
    s->topics = br_snap_alloc(s, b->s.mc.ntopics * sizeof *s->topics + 1);
    if (s->topics == NULL) {
        return;
    }
    s->ntopics = b->s.mc.ntopics;
    for (size_t i = 0; i < b->s.mc.ntopics; i++) {
        fill_topic(s, b, b->s.mc.topics[i]->name, b->s.mc.topics[i], now, &s->topics[i]);
    }
}

static int by_id(const void *x, const void *y)
{
    const struct br_snap_broker *a = x;
    const struct br_snap_broker *c = y;
    return (a->id > c->id) - (a->id < c->id);
}

static const char *url_of(const struct br_admin_feed *f, int32_t id)
{
    if (id == f->b->s.node_id) {
        return br_admin_url(f->admin);
    }
    for (size_t i = 0; i < f->nurls; i++) {
        if (f->urls[i].id == id) {
            return f->urls[i].url;
        }
    }
    return NULL;
}

/* The live brokers (the metadata cache), and those a partition names
 * that are not alive. */
static void fill_brokers(struct br_snapshot *s, struct br_admin_feed *f)
{
    struct br_broker *b = f->b;
    size_t cap = b->s.mc.nbrokers + 16;
    s->brokers = br_snap_alloc(s, cap * sizeof *s->brokers);
    if (s->brokers == NULL) {
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < b->s.mc.nbrokers; i++) {
        const struct br_mc_broker *m = &b->s.mc.brokers[i];
        s->brokers[n++] = (struct br_snap_broker){
            m->id, br_snap_strdup(s, m->host), m->port, m->has_rack ? br_snap_strdup(s, m->rack) : NULL,
            br_snap_strdup(s, url_of(f, m->id)), true};
    }
    for (size_t t = 0; t < s->ntopics && n < cap; t++) {
        for (int32_t i = 0; i < s->topics[t].npartitions && n < cap; i++) {
            const struct br_snap_partition *p = &s->topics[t].parts[i];
            for (int32_t r = 0; r < p->nreplicas && n < cap; r++) {
                int32_t id = p->replicas[r].broker;
                bool known = false;
                for (size_t k = 0; k < n && !known; k++) {
                    known = s->brokers[k].id == id;
                }
                if (!known) {
                    s->brokers[n++] = (struct br_snap_broker){id, NULL, -1, NULL, NULL, false};
                }
            }
        }
    }
    qsort(s->brokers, n, sizeof *s->brokers, by_id);
    s->nbrokers = n;
}

static void fill_groups(struct br_snapshot *s, struct br_broker *b)
{
    struct br_group_info *infos = NULL;
    size_t n = 0;
    if (b->s.groups == NULL || br_groups_list(b->s.groups, &infos, &n) != 0 || n == 0) {
        br_group_infos_free(infos, n);
        return;
    }
    s->groups = br_snap_alloc(s, n * sizeof *s->groups);
    if (s->groups != NULL) {
        s->ngroups = n;
        for (size_t i = 0; i < n; i++) {
            struct br_snap_group *g = &s->groups[i];
            g->group_id = br_snap_strdup(s, infos[i].group_id);
            g->protocol_type = br_snap_strdup(s, infos[i].protocol_type);
            g->protocol = br_snap_strdup(s, infos[i].protocol);
            g->state = br_snap_strdup(s, infos[i].state);
            g->generation = infos[i].generation;
            g->members = infos[i].members;
            g->member_list = infos[i].member_list != NULL
                                 ? br_snap_alloc(s, g->members * sizeof *g->member_list + 1)
                                 : NULL;
            for (size_t m = 0; g->member_list != NULL && m < g->members; m++) {
                const struct br_group_member_info *in = &infos[i].member_list[m];
                struct br_snap_member *out = &g->member_list[m];
                out->member_id = br_snap_strdup(s, in->member_id);
                out->client_id = br_snap_strdup(s, in->client_id);
                out->client_host = br_snap_strdup(s, in->client_host);
                out->assigned = br_snap_alloc(s, in->nassigned * sizeof *out->assigned + 1);
                out->nassigned = out->assigned != NULL ? in->nassigned : 0;
                for (size_t k = 0; k < out->nassigned; k++) {
                    out->assigned[k] = (struct br_snap_tp){br_snap_strdup(s, in->assigned[k].topic),
                                                           in->assigned[k].partition};
                }
            }
            struct br_group_lag *lags = NULL;
            size_t nl = 0;
            if (i >= MAX_GROUPS_WITH_LAG ||
                br_group_lag(&b->s, infos[i].group_id, strlen(infos[i].group_id), &lags, &nl) != 0) {
                continue;
            }
            g->lags = br_snap_alloc(s, nl * sizeof *g->lags + 1);
            if (g->lags != NULL) {
                g->nlags = nl;
                for (size_t k = 0; k < nl; k++) {
                    g->lags[k] = (struct br_snap_lag){br_snap_strdup(s, lags[k].topic),
                                                      lags[k].partition, lags[k].committed,
                                                      lags[k].high_watermark, lags[k].lag};
                }
            }
            br_group_lag_free(lags, nl);
        }
    }
    br_group_infos_free(infos, n);
}

/* Every transactional id the coordinator here knows (its times are on
 * the wall clock, as __transaction_state keeps them). */
static void fill_txns(struct br_snapshot *s, const struct br_txn_coordinator *c,
                      const struct clocks *now)
{
    s->txns_committed = c->committed;
    s->txns_aborted = c->aborted;
    s->txns_timed_out = c->timed_out;
    s->txns_fenced = c->fenced;
    s->txns = br_snap_alloc(s, c->n * sizeof *s->txns + 1);
    if (s->txns == NULL) {
        return;
    }
    s->ntxns = c->n;
    for (size_t i = 0; i < c->n; i++) {
        const struct br_txn *t = c->txns[i];
        struct br_snap_txn *o = &s->txns[i];
        o->transactional_id = br_snap_strndup(s, t->id, t->id_len);
        o->producer_id = t->producer_id;
        o->epoch = t->epoch;
        o->timeout_ms = t->timeout_ms;
        o->state = br_txn_status_name(t->status);
        o->open = t->status == BR_TXN_ONGOING || t->status == BR_TXN_PREPARE_COMMIT ||
                  t->status == BR_TXN_PREPARE_ABORT;
        o->start_ms = -1;
        o->age_ms = -1;
        if (o->open && t->start_ms >= 0) {
            o->start_ms = t->start_ms;
            o->age_ms = now->wall > t->start_ms ? now->wall - t->start_ms : 0;
        }
        o->update_ms = t->update_ms;
        o->parts = br_snap_alloc(s, t->nparts * sizeof *o->parts + 1);
        o->nparts = o->parts != NULL ? t->nparts : 0;
        for (size_t k = 0; k < o->nparts; k++) {
            o->parts[k] = (struct br_snap_tp){br_snap_strdup(s, t->parts[k].topic),
                                              t->parts[k].partition};
        }
    }
}

/* The client quotas in force and the rates measured for them. */
static void fill_quotas(struct br_snapshot *s, struct br_quotas *q, const struct clocks *now)
{
    static const char *const type_names[BR_QUOTA_TYPES] = {"Produce", "Fetch", "Request"};
    if (q == NULL) {
        return;
    }
    size_t n = br_quotas_count(q);
    s->quotas = br_snap_alloc(s, n * sizeof *s->quotas + 1);
    s->nquotas = s->quotas != NULL ? n : 0;
    for (size_t i = 0; i < s->nquotas; i++) {
        const struct br_quota_entity *e = br_quotas_at(q, i);
        struct br_snap_quota *o = &s->quotas[i];
        o->user = e->user != NULL ? br_snap_strdup(s, e->user) : NULL;
        o->client = e->client != NULL ? br_snap_strdup(s, e->client) : NULL;
        o->producer_byte_rate = e->set[BR_QUOTA_PRODUCE] ? e->value[BR_QUOTA_PRODUCE] : -1;
        o->consumer_byte_rate = e->set[BR_QUOTA_FETCH] ? e->value[BR_QUOTA_FETCH] : -1;
        o->request_percentage = e->set[BR_QUOTA_REQUEST] ? e->value[BR_QUOTA_REQUEST] : -1;
    }
    size_t nr = br_quotas_sensor_count(q, now->mono);
    s->quota_rates = br_snap_alloc(s, nr * sizeof *s->quota_rates + 1);
    s->nquota_rates = s->quota_rates != NULL ? nr : 0;
    for (size_t i = 0; i < s->nquota_rates; i++) {
        struct br_quota_sensor_view v;
        br_quotas_sensor_at(q, i, now->mono, &v);
        s->quota_rates[i] = (struct br_snap_quota_rate){
            .type = type_names[v.type],
            .user = br_snap_strdup(s, v.user),
            .client = br_snap_strdup(s, v.client),
            .limit = v.has_limit ? v.limit : -1,
            .rate = v.rate,
            .throttle_total_ms = v.throttle_total_ms,
            .throttle_left_ms =
                v.throttled_until_ms > now->mono ? v.throttled_until_ms - now->mono : 0,
        };
    }
}

static void fill_broker_self(struct br_snapshot *s, struct br_broker *b)
{
    s->configs = br_snap_alloc(s, (size_t)BR_CFG__COUNT * sizeof *s->configs);
    if (s->configs != NULL) {
        s->nconfigs = BR_CFG__COUNT;
        for (int k = 0; k < BR_CFG__COUNT; k++) {
            struct br_config_entry e;
            br_config_entry(&b->s.cfg, (enum br_config_key)k, &e);
            s->configs[k] = (struct br_snap_kv){e.name, e.sensitive ? NULL : br_snap_strdup(s, e.value),
                                                e.sensitive};
        }
    }
    size_t nd = br_logm_dir_count(b->s.logs);
    s->log_dirs = br_snap_alloc(s, nd * sizeof *s->log_dirs + 1);
    if (s->log_dirs != NULL) {
        s->nlog_dirs = nd;
        for (size_t d = 0; d < nd; d++) {
            s->log_dirs[d].path = br_snap_strdup(s, br_logm_dir(b->s.logs, d));
            s->log_dirs[d].partitions = br_logm_dir_partitions(b->s.logs, d);
        }
        for (size_t t = 0; t < b->s.rm.ntopics; t++) {
            const struct br_topic *tp = b->s.rm.topics[t];
            for (int32_t i = 0; i < tp->npartitions; i++) {
                const struct br_partition *p = &tp->partitions[i];
                if (p->log != NULL && p->managed != NULL) {
                    size_t d = br_managed_log_dir(p->managed);
                    if (d < nd) {
                        s->log_dirs[d].size_bytes += br_log_size_bytes(p->log);
                    }
                }
            }
        }
    }
    size_t na = 0;
    for (int k = 0; k < BR_MAX_APIS; k++) {
        na += b->s.api.stats[k].requests > 0 ? 1U : 0U;
    }
    s->apis = br_snap_alloc(s, na * sizeof *s->apis + 1);
    if (s->apis != NULL) {
        for (int k = 0; k < BR_MAX_APIS; k++) {
            const struct br_api_stats *st = &b->s.api.stats[k];
            if (st->requests == 0) {
                continue;
            }
            const struct kp_api *api = kp_api_find((int16_t)k);
            s->apis[s->napis++] = (struct br_snap_api){(int16_t)k, api != NULL ? api->name : "?",
                                                       st->requests, st->total_us, st->max_us};
        }
    }
    br_replication_isr_counts(b->s.replication, &s->isr_shrinks, &s->isr_expands);
    for (int role = BR_REPL_LEADER; role <= BR_REPL_FOLLOWER; role++) {
        struct br_repl_quota_view v;
        br_replication_quota_view(b->s.replication, (enum br_repl_role)role, br_now_mono_ms(), &v);
        s->repl_quota[role] =
            (struct br_snap_repl_quota){v.bound, v.rate, v.bytes_total, v.throttled_total};
    }
    struct br_net_counts nc;
    br_net_counts(b->s.net, &nc);
    s->connections = (int64_t)nc.open;
    s->connections_accepted = (int64_t)nc.accepted;
    s->connections_refused = (int64_t)nc.refused;
    s->connections_refused_per_ip = (int64_t)nc.refused_per_ip;
    s->connections_idle_closed = (int64_t)nc.idle_closed;
}

/* The moves under way, on the partitions they move. A move of a
 * partition the metadata does not know yet is not shown (the controller
 * refuses it, or its topic comes with the next UpdateMetadata). */
static void fill_moves(struct br_snapshot *s, const struct br_reassign_watch *w)
{
    size_t n = 0;
    const struct br_zk_reassignment *moves = br_reassign_watch_moves(w, &n);
    for (size_t i = 0; i < n; i++) {
        const struct br_zk_reassignment *m = &moves[i];
        const struct br_snap_topic *t = br_snap_topic(s, m->tp.topic);
        if (t == NULL || m->tp.partition >= t->npartitions) {
            continue;
        }
        struct br_snap_partition *p = &t->parts[m->tp.partition];
        if (p->ntarget > 0) {
            continue; /* listed twice: the controller takes the first */
        }
        p->target = br_snap_alloc(s, m->nreplicas * sizeof *p->target);
        if (p->target != NULL) {
            memcpy(p->target, m->replicas, m->nreplicas * sizeof *p->target);
            p->ntarget = (int32_t)m->nreplicas;
        }
    }
}

static struct br_snapshot *build(struct br_admin_feed *f)
{
    struct br_broker *b = f->b;
    struct br_snapshot *s = br_snap_new();
    if (s == NULL) {
        return NULL;
    }
    struct clocks now = {br_now_mono_ms(), br_now_wall_ms()};
    s->version = ++f->version;
    s->taken_ms = now.wall;
    s->started_ms = f->started_ms;
    s->node_id = b->s.node_id;
    s->cluster_id = br_snap_strdup(s, b->s.cluster_id);
    s->cluster = b->cluster;
    s->controller_id = b->s.mc.controller_id;
    s->admin_url = br_snap_strdup(s, br_admin_url(f->admin));
    fill_topics(s, b, &now);
    fill_moves(s, f->moves);
    fill_brokers(s, f);
    fill_groups(s, b);
    fill_txns(s, &b->s.txn, &now);
    fill_quotas(s, b->s.quotas, &now);
    fill_broker_self(s, b);
    if (s->failed) {
        br_snap_unref(s);
        return NULL;
    }
    return s;
}

/* ------------------------------------------------------------ the other brokers' URLs */

static void url_read_free(struct url_read *r)
{
    struct br_admin_feed *f = r->f;
    for (struct url_read **pp = &f->reads; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    kp_free(r);
}

static void set_url(struct br_admin_feed *f, int32_t id, const char *url)
{
    for (size_t i = 0; i < f->nurls; i++) {
        if (f->urls[i].id == id) {
            (void)snprintf(f->urls[i].url, sizeof f->urls[i].url, "%s", url);
            return;
        }
    }
    struct feed_url *nu = kp_realloc(f->urls, (f->nurls + 1) * sizeof *nu);
    if (nu == NULL) {
        return;
    }
    f->urls = nu;
    f->urls[f->nurls].id = id;
    (void)snprintf(f->urls[f->nurls].url, sizeof f->urls[f->nurls].url, "%s", url);
    f->nurls++;
}

static void url_read_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct url_read *rd = (struct url_read *)(void *)call;
    struct br_admin_feed *f = rd->f;
    if (r->rc == BR_ZK_OK && r->data != NULL) {
        struct br_zk_broker reg;
        char err[256];
        if (br_zk_broker_decode(r->data, r->data_len, r->path, &reg, err, sizeof err) == 0) {
            set_url(f, rd->id, reg.admin_endpoint);
            f->fingerprint = 0; /* publish the URL soon */
            br_zk_broker_clear(&reg);
        }
    }
    url_read_free(rd);
}

static void read_urls(struct br_admin_feed *f)
{
    struct br_broker *b = f->b;
    uint64_t seen = brokers_fingerprint(b);
    if (b->s.zk == NULL || seen == f->brokers_seen) {
        return;
    }
    f->brokers_seen = seen;
    for (size_t i = 0; i < b->s.mc.nbrokers; i++) {
        int32_t id = b->s.mc.brokers[i].id;
        if (id == b->s.node_id) {
            continue;
        }
        struct url_read *rd = kp_calloc(1, sizeof *rd);
        if (rd == NULL) {
            f->brokers_seen = 0;
            return;
        }
        rd->call.done = url_read_done;
        rd->f = f;
        rd->id = id;
        char path[64];
        (void)snprintf(path, sizeof path, "/brokers/ids/%" PRId32, id);
        if (br_zk_get(b->s.zk, path, false, br_zk_call_tag(&rd->call)) != 0) {
            kp_free(rd);
            f->brokers_seen = 0; /* again next time */
            return;
        }
        rd->next = f->reads;
        f->reads = rd;
    }
}

/* ------------------------------------------------------------ the timer */

static void tick(void *ctx, struct br_timer *t)
{
    (void)ctx; /* the reactor's user (the broker); the timer's owner is the feed */
    struct br_admin_feed *f = t->owner;
    struct br_broker *b = f->b;
    int64_t now = br_now_mono_ms();
    br_timer_arm(b->s.net, &f->timer, now + TICK_MS);
    if (b->s.stopping) {
        return;
    }
    int64_t tick_start = br_now_mono_us();
    read_urls(f);
    uint64_t fp = fingerprint(b);
    if ((fp == f->fingerprint && now - f->last_publish_ms < REFRESH_MS) || now < f->next_build_ms) {
        f->reactor_us += br_now_mono_us() - tick_start;
        return;
    }
    int64_t t0 = br_now_mono_us();
    struct br_snapshot *s = build(f);
    int64_t took_us = br_now_mono_us() - t0;
    /* the next build waits 50 times this one's time: at most ~2% */
    f->next_build_ms = now + took_us * 50 / 1000;
    f->builds++;
    f->reactor_us += br_now_mono_us() - tick_start;
    if (s == NULL) {
        return;
    }
    s->snapshots_built = f->builds;
    s->reactor_us = f->reactor_us;
    f->fingerprint = fp;
    f->last_publish_ms = now;
    br_admin_publish(f->admin, s);
}

static const struct br_timer_ops feed_timer = {"admin snapshot", tick};

/* ------------------------------------------------------------ operator actions */

/* Reactor thread: the abort an operator asked for (admin thread ->
 * mailbox -> here), answered back to the admin thread. */
static void abort_deliver(void *ctx, struct br_mail *m)
{
    struct br_server *s = ctx;
    struct br_admin_action *act = (struct br_admin_action *)(void *)m;
    act->error = br_txn_abort(&s->txn, act->transactional_id, act->transactional_id_len,
                              br_now_wall_ms());
    br_admin_action_done(act);
}

/* Admin thread: the mailbox is made before the admin thread starts and
 * freed after it stopped. */
static void submit(void *ctx, struct br_admin_action *act)
{
    struct br_admin_feed *f = ctx;
    act->mail.deliver = abort_deliver;
    br_mailbox_post(f->b->s.mailbox, &act->mail);
}

static const struct br_admin_ops admin_ops = {submit};

/* ------------------------------------------------------------ start and stop */

int br_admin_feed_start(struct br_broker *b)
{
    const struct br_config *c = &b->s.cfg;
    if (c->n_admin_listeners == 0 || b->s.in_process) {
        return 0;
    }
    struct br_admin_feed *f = kp_calloc(1, sizeof *f);
    if (f == NULL) {
        br_error("out of memory");
        return -1;
    }
    f->b = b;
    f->started_ms = br_now_wall_ms();
    f->moves = br_reassign_watch_new(b);
    if (f->moves == NULL) {
        br_error("out of memory");
        kp_free(f);
        return -1;
    }
    struct br_admin_listener ls[BR_CONFIG_MAX_LISTENERS];
    for (size_t i = 0; i < c->n_admin_listeners; i++) {
        ls[i].host = c->admin_listeners[i].host;
        ls[i].port = c->admin_listeners[i].port;
        ls[i].https = strcmp(c->admin_listeners[i].name, "HTTPS") == 0;
    }
    /* checked at load: none, requested or required (unset: none) */
    const char *auth = c->raw[BR_CFG_ADMIN_SSL_CLIENT_AUTH] != NULL
                           ? c->raw[BR_CFG_ADMIN_SSL_CLIENT_AUTH]
                           : "none";
    struct br_admin_config ac = {
        .listeners = ls,
        .nlisteners = c->n_admin_listeners,
        .token = c->raw[BR_CFG_ADMIN_AUTH_TOKEN],
        .tls_keystore = c->raw[BR_CFG_ADMIN_SSL_KEYSTORE_LOCATION],
        .tls_truststore = c->raw[BR_CFG_ADMIN_SSL_TRUSTSTORE_LOCATION],
        .tls_client_auth = strcmp(auth, "required") == 0    ? BR_ADMIN_CLIENT_AUTH_REQUIRED
                           : strcmp(auth, "requested") == 0 ? BR_ADMIN_CLIENT_AUTH_REQUESTED
                                                            : BR_ADMIN_CLIENT_AUTH_NONE,
        .max_connections = c->admin_max_connections,
        .max_stream_clients = c->admin_stream_max_clients,
        .idle_ms = c->admin_connections_max_idle_ms,
        .stall_ms = c->admin_stream_max_stall_ms,
        .node_id = b->s.node_id,
        .ops = &admin_ops,
        .ops_ctx = f,
    };
    char err[512];
    if (br_admin_start(&ac, &f->admin, err, sizeof err) != 0) {
        br_error("admin API: %s", err);
        br_reassign_watch_free(f->moves);
        kp_free(f);
        return -1;
    }
    b->admin_feed = f;
    br_info("admin API at %s", br_admin_url(f->admin));
    br_timer_init(&f->timer, &feed_timer, f);
    br_timer_arm(b->s.net, &f->timer, br_now_mono_ms());
    return 0;
}

const char *br_admin_feed_url(const struct br_broker *b)
{
    const struct br_admin_feed *f = b->admin_feed;
    return f != NULL && f->admin != NULL ? br_admin_url(f->admin) : NULL;
}

void br_admin_feed_zk_connected(struct br_broker *b)
{
    if (b->admin_feed != NULL) {
        br_reassign_watch_read(b->admin_feed->moves);
    }
}

void br_admin_feed_zk_watch(struct br_broker *b, enum br_zk_watch kind, const char *path)
{
    if (b->admin_feed != NULL) {
        br_reassign_watch_event(b->admin_feed->moves, kind, path);
    }
}

void br_admin_feed_stop(struct br_broker *b)
{
    struct br_admin_feed *f = b->admin_feed;
    if (f == NULL || f->admin == NULL) {
        return;
    }
    br_timer_cancel(b->s.net, &f->timer);
    br_admin_stop(f->admin);
    f->admin = NULL;
}

void br_admin_feed_free(struct br_broker *b)
{
    struct br_admin_feed *f = b->admin_feed;
    if (f == NULL) {
        return;
    }
    br_admin_feed_stop(b);
    while (f->reads != NULL) {
        url_read_free(f->reads);
    }
    kp_free(f->urls);
    br_reassign_watch_free(f->moves);
    kp_free(f);
    b->admin_feed = NULL;
}
