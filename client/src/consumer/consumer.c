/*
 * The consumer handle: assigned partitions (struct sc_cpart) are resolved to an
 * offset (ListOffsets, or the group's committed offset), then fetched from
 * their leaders, one Fetch in flight per leader covering all its
 * partitions. Fetched records are copied into messages queued for
 * samsa_consumer_poll; fetching pauses while queued.max.messages.kbytes are
 * waiting. The group membership (group.c) drives the assignment of a
 * subscribed consumer through sc_consumer_set_assignment.
 *
 * This file: samsa_consumer_*, the consumer's kind ops (struct sc_kind_ops:
 * its conf checks, the topics it wants metadata of, leaders followed, its
 * turn of the I/O loop, teardown); assignment.c holds the partitions and
 * their messages, fetch.c the reading, group*.c the group.
 */
#include <string.h>

#include "consumer/consumer.h"
#include "consumer/group.h"

static int gated_consumer_assign(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    if (sc == NULL || (parts == NULL && count > 0)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || parts[i].topic[0] == '\0' || parts[i].partition < 0 ||
            (parts[i].offset < 0 && parts[i].offset != SAMSA_OFFSET_BEGINNING &&
             parts[i].offset != SAMSA_OFFSET_END && parts[i].offset != SAMSA_OFFSET_STORED)) {
            return SAMSA_ERR_INVALID_ARG;
        }
        if (parts[i].offset == SAMSA_OFFSET_STORED && c->v->group_id[0] == '\0') {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    pthread_mutex_lock(&c->lock);
    int err = c->subscribed ? SAMSA_ERR_STATE : sc_consumer_set_assignment(c, parts, count);
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    return err;
}

int samsa_consumer_assign(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_assign(sc, parts, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int64_t consumer_serve(struct sc_client *c, int64_t now)
{
    int64_t next = INT64_MAX;
    next = sc_min64(next, sc_group_serve(c, now));
    if (sc_group_blocks_fetch(c)) {
        return next;
    }
    bool full = c->cq_bytes >= (size_t)c->v->queued_max_bytes;
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        if (p->revoking) {
            continue; /* being given up: the group removes it */
        }
        if (p->retry_at > now) {
            next = sc_min64(next, p->retry_at);
            continue;
        }
        if (p->state == SC_CP_NEED_OFFSET && p->reset == SAMSA_OFFSET_STORED) {
            continue; /* the group's OffsetFetch resolves it */
        }
        if (p->state != SC_CP_NEED_OFFSET &&
            (p->state != SC_CP_ACTIVE || full || p->fetching || p->paused)) {
            continue;
        }
        struct sc_conn *conn = sc_conn_leader(c, p->leader);
        if (conn == NULL) {
            continue; /* none elected, or unreachable: Metadata is asked again */
        }
        if (p->state == SC_CP_NEED_OFFSET) {
            sc_consumer_list_offsets(c, conn, now);
        } else if (!conn->fetch_inflight) {
            sc_consumer_fetch_from(c, conn, now);
        }
    }
    return next;
}

static int consumer_topics(struct sc_client *c, const char **names, int max)
{
    int n = sc_group_topics(c, names, max);
    if (n == SC_ALL_TOPICS) {
        return n; /* the assigned partitions' topics are among them */
    }
    for (int i = 0; i < c->cpart_count && n < max; i++) {
        bool seen = false;
        for (int j = 0; j < n; j++) {
            seen = seen || strcmp(names[j], c->cparts[i]->topic) == 0;
        }
        if (!seen) {
            names[n++] = c->cparts[i]->topic;
        }
    }
    return n;
}

static void consumer_metadata(struct sc_client *c, const struct kp_MetadataResponse *md)
{
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        for (int32_t ti = 0; ti < md->Topics.count; ti++) {
            const struct kp_MetadataResponse_MetadataResponseTopic *t = &md->Topics.items[ti];
            if (!kp_str_eq_c(t->Name, p->topic)) {
                continue;
            }
            int32_t leader = -1;
            bool found = false;
            for (int32_t pi = 0; pi < t->Partitions.count; pi++) {
                if (t->Partitions.items[pi].PartitionIndex == p->partition) {
                    leader = t->Partitions.items[pi].LeaderId;
                    found = true;
                }
            }
            /* As librdkafka's consumer error for an assigned partition the
             * cluster lacks: told once, fetched once it exists. */
            if (t->ErrorCode == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION ||
                (t->ErrorCode == 0 && !found)) {
                if (!p->missing_reported) {
                    p->missing_reported = true;
                    bool topic = t->ErrorCode != 0;
                    sc_post_error(c, topic ? SAMSA_ERR_UNKNOWN_TOPIC : SAMSA_ERR_UNKNOWN_PARTITION,
                                  "assigned partition %s [%d]: %s", p->topic, p->partition,
                                  topic ? "no such topic in the cluster"
                                        : "the topic has no such partition");
                }
            } else if (found) {
                p->missing_reported = false;
            }
            if (leader != p->leader) {
                sc_log(c, "%s [%d]: leader %d -> %d", p->topic, p->partition, p->leader, leader);
            }
            p->leader = leader;
            if (leader < 0) {
                c->md_wanted = true;
            }
        }
    }
    sc_group_metadata(c, md);
}

static void consumer_free_state(struct sc_client *c)
{
    sc_cq_drop(c, NULL);
    for (int i = 0; i < c->cpart_count; i++) {
        sc_cpart_free(c->cparts[i]);
    }
    kp_free(c->cparts);
    c->cparts = NULL;
    c->cpart_count = 0;
    sc_group_free(c);
}

/* ------------------------------------------------------------- public */

samsa_consumer *samsa_consumer_new(const samsa_conf *conf, char *errstr, size_t errstr_size)
{
    samsa_consumer *sc = kp_calloc(1, sizeof(*sc));
    if (sc == NULL) {
        sc_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    if (sc_client_create(&sc_consumer_kind, conf, &sc->c, errstr, errstr_size) != SAMSA_OK) {
        kp_free(sc);
        return NULL;
    }
    return sc;
}


static samsa_message *gated_consumer_poll(samsa_consumer *sc, int timeout_ms)
{
    if (sc == NULL) {
        return NULL;
    }
    struct sc_client *c = sc->c;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    pthread_mutex_lock(&c->lock);
    sc_group_polled(c, true);
    for (;;) {
        (void)sc_serve_errors(c);
        while (c->cq != NULL) {
            struct sc_cmsg *m = c->cq;
            c->cq = m->next;
            if (c->cq == NULL) {
                c->cq_tail = NULL;
            }
            bool was_full = c->cq_bytes >= (size_t)c->v->queued_max_bytes;
            c->cq_bytes -= m->size;
            m->part->queued--;
            if (m->epoch != m->part->epoch) {
                kp_free(m);
                continue;
            }
            m->part->app_offset = m->pub.offset + 1;
            if (c->v->enable_auto_offset_store) {
                m->part->stored = m->part->app_offset;
            }
            c->rxmsgs++;
            c->rxmsg_bytes += m->pub.key_len + m->pub.value_len;
            sc_group_polled(c, false);
            pthread_mutex_unlock(&c->lock);
            if (was_full) {
                sc_wake(c);
            }
            return &m->pub;
        }
        if (sc_now_ms() >= deadline || c->closing) {
            break;
        }
        sc_wait_cond(c, deadline);
    }
    sc_group_polled(c, false);
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

samsa_message *samsa_consumer_poll(samsa_consumer *sc, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return NULL;
    }
    samsa_message *ret = gated_consumer_poll(sc, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static bool gated_consumer_at_end(samsa_consumer *sc)
{
    if (sc == NULL) {
        return false;
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    bool end = c->cpart_count > 0;
    for (int i = 0; i < c->cpart_count && end; i++) {
        const struct sc_cpart *p = c->cparts[i];
        int64_t last = c->v->isolation_level == 1 && p->lso >= 0 ? p->lso : p->hwm;
        end = p->state == SC_CP_ACTIVE && last >= 0 && p->position >= last && p->queued == 0;
    }
    pthread_mutex_unlock(&c->lock);
    return end;
}

bool samsa_consumer_at_end(samsa_consumer *sc)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return false;
    }
    bool ret = gated_consumer_at_end(sc);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int seek_common(samsa_consumer *sc, const char *topic, int32_t partition, int64_t offset,
                       bool is_ts, int timeout_ms)
{
    if (sc == NULL || topic == NULL || (!is_ts && offset < 0 && offset != SAMSA_OFFSET_BEGINNING &&
                                        offset != SAMSA_OFFSET_END)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    struct sc_cpart *p = sc_cpart_find(c, topic, partition);
    if (p == NULL) {
        pthread_mutex_unlock(&c->lock);
        return SAMSA_ERR_STATE;
    }
    p->epoch++;
    sc_cq_drop(c, p);
    sc_cpart_set_offset(p, is_ts ? -1 : offset);
    if (is_ts) {
        p->reset = offset;
        p->reset_is_ts = true;
    }
    p->app_offset = -1;
    p->stored = -1;
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    pthread_mutex_lock(&c->lock);
    int err = SAMSA_OK;
    for (;;) {
        p = sc_cpart_find(c, topic, partition);
        if (p == NULL) {
            err = SAMSA_ERR_STATE;
            break;
        }
        if (p->state == SC_CP_ACTIVE || p->state == SC_CP_STOPPED) {
            break;
        }
        if (c->closing) {
            err = SAMSA_ERR_DESTROYED;
            break;
        }
        if (sc_now_ms() >= deadline) {
            err = SAMSA_ERR_TIMED_OUT;
            break;
        }
        sc_wait_cond(c, deadline);
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

static int gated_consumer_seek(samsa_consumer *sc, const char *topic, int32_t partition, int64_t offset,
                        int timeout_ms)
{
    return seek_common(sc, topic, partition, offset, false, timeout_ms);
}

int samsa_consumer_seek(samsa_consumer *sc, const char *topic, int32_t partition, int64_t offset,
                        int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_seek(sc, topic, partition, offset, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_seek_timestamp(samsa_consumer *sc, const char *topic, int32_t partition,
                                  int64_t timestamp_ms, int timeout_ms)
{
    if (timestamp_ms < 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return seek_common(sc, topic, partition, timestamp_ms, true, timeout_ms);
}

int samsa_consumer_seek_timestamp(samsa_consumer *sc, const char *topic, int32_t partition,
                                  int64_t timestamp_ms, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_seek_timestamp(sc, topic, partition, timestamp_ms, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

int sc_list_offset(struct sc_client *c, const char *topic, int32_t partition, int64_t timestamp,
                   int64_t *low, int64_t *high, int timeout_ms)
{
    if (topic == NULL || partition < 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_lo_arg *a = kp_calloc(1, sizeof(*a));
    struct sc_op *op = NULL;
    if (a == NULL || (a->topic = sc_strdup(topic)) == NULL ||
        (op = sc_op_create(&sc_list_offsets_op, SC_OP_LIST_OFFSETS, a)) == NULL) {
        if (a != NULL) {
            kp_free(a->topic);
        }
        kp_free(a);
        return SAMSA_ERR_NOMEM;
    }
    a->partition = partition;
    a->watermarks = timestamp == SC_WATERMARKS;
    a->timestamp = a->watermarks ? 0 : timestamp; /* -2 earliest and -1 latest, as on the wire */
    int err = sc_op_run(c, &op, timeout_ms, NULL, 0);
    if (op != NULL) {
        if (err == SAMSA_OK) {
            if (low != NULL) {
                *low = a->watermarks ? a->low : a->offset;
            }
            if (high != NULL) {
                *high = a->high;
            }
        }
        sc_op_free(op);
    }
    return err;
}

static int gated_consumer_watermarks(samsa_consumer *sc, const char *topic, int32_t partition,
                              int64_t *low, int64_t *high, int timeout_ms)
{
    if (sc == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return sc_list_offset(sc->c, topic, partition, SC_WATERMARKS, low, high, timeout_ms);
}

int samsa_consumer_watermarks(samsa_consumer *sc, const char *topic, int32_t partition,
                              int64_t *low, int64_t *high, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_watermarks(sc, topic, partition, low, high, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_offsets_for_times(samsa_consumer *sc, struct samsa_partition *parts,
                                            size_t count, int timeout_ms)
{
    if (sc == NULL || (parts == NULL && count > 0)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || parts[i].partition < 0 ||
            (parts[i].offset < 0 && parts[i].offset != SAMSA_OFFSET_BEGINNING &&
             parts[i].offset != SAMSA_OFFSET_END)) {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : sc_now_ms() + timeout_ms;
    for (size_t i = 0; i < count; i++) {
        int64_t left = deadline == INT64_MAX ? -1 : deadline - sc_now_ms();
        if (deadline != INT64_MAX && left <= 0) {
            return SAMSA_ERR_TIMED_OUT;
        }
        int err = sc_list_offset(sc->c, parts[i].topic, parts[i].partition, parts[i].offset,
                                 &parts[i].offset, NULL, (int)sc_min64(left, INT32_MAX));
        if (err != SAMSA_OK) {
            return err;
        }
    }
    return SAMSA_OK;
}

int samsa_consumer_offsets_for_times(samsa_consumer *sc, struct samsa_partition *parts,
                                     size_t count, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_offsets_for_times(sc, parts, count, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

int samsa_consumer_close(samsa_consumer *sc, int timeout_ms)
{
    if (sc == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    if (!sc_gate_close(&sc->gate, sc->c)) {
        return SAMSA_ERR_DESTROYED;
    }
    int err = sc_group_close(sc->c, timeout_ms);
    sc_gate_shut(&sc->gate);
    sc_client_destroy(sc->c);
    sc->c = NULL;
    return err;
}

void samsa_consumer_destroy(samsa_consumer *sc)
{
    if (sc != NULL) {
        (void)samsa_consumer_close(sc, -1);
        kp_free(sc);
    }
}

/* ------------------------------------------------- pause, resume, lag */

static int set_paused(samsa_consumer *sc, const struct samsa_partition *parts, size_t count,
                      bool paused)
{
    if (sc == NULL || (parts == NULL && count > 0)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || sc_cpart_find(c, parts[i].topic, parts[i].partition) == NULL) {
            pthread_mutex_unlock(&c->lock);
            return parts[i].topic == NULL ? SAMSA_ERR_INVALID_ARG : SAMSA_ERR_STATE;
        }
    }
    for (size_t i = 0; i < count; i++) {
        struct sc_cpart *p = sc_cpart_find(c, parts[i].topic, parts[i].partition);
        if (p->paused == paused) {
            continue;
        }
        p->paused = paused;
        if (paused) {
            /* What was fetched and not returned is fetched again after the
             * resume: the position goes back to the first of it. */
            int64_t first = sc_cq_drop(c, p);
            p->epoch++; /* and what is in flight is dropped on arrival */
            if (p->state == SC_CP_ACTIVE && first >= 0) {
                p->position = first;
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    return SAMSA_OK;
}

static int gated_consumer_pause(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    return set_paused(sc, parts, count, true);
}

int samsa_consumer_pause(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_pause(sc, parts, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_resume(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    return set_paused(sc, parts, count, false);
}

int samsa_consumer_resume(samsa_consumer *sc, const struct samsa_partition *parts, size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_resume(sc, parts, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

/* The next offset samsa_consumer_poll returns of p, or -1 while unresolved. */
static int64_t position_of(const struct sc_client *c, const struct sc_cpart *p)
{
    if (p->app_offset >= 0) {
        return p->app_offset;
    }
    if (p->state != SC_CP_ACTIVE) {
        return -1;
    }
    for (const struct sc_cmsg *m = c->cq; p->queued > 0 && m != NULL; m = m->next) {
        if (m->part == p && m->epoch == p->epoch) {
            return m->pub.offset;
        }
    }
    return p->position;
}

static int gated_consumer_assignment(samsa_consumer *sc, struct samsa_partition **parts, size_t *count)
{
    if (sc == NULL || parts == NULL || count == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    *parts = NULL;
    *count = 0;
    pthread_mutex_lock(&c->lock);
    size_t n = (size_t)c->cpart_count;
    struct samsa_partition *out = kp_calloc(n > 0 ? n : 1, sizeof(*out));
    int err = out != NULL ? SAMSA_OK : SAMSA_ERR_NOMEM;
    for (size_t i = 0; err == SAMSA_OK && i < n; i++) {
        const struct sc_cpart *p = c->cparts[i];
        char *t = sc_strdup(p->topic);
        if (t == NULL) {
            samsa_partitions_free(out, i);
            out = NULL;
            err = SAMSA_ERR_NOMEM;
            break;
        }
        int64_t pos = position_of(c, p);
        out[i].topic = t;
        out[i].partition = p->partition;
        out[i].offset = pos >= 0 ? pos : (p->reset_is_ts ? SAMSA_OFFSET_END : p->reset);
    }
    pthread_mutex_unlock(&c->lock);
    if (err == SAMSA_OK) {
        *parts = out;
        *count = n;
    }
    return err;
}

int samsa_consumer_assignment(samsa_consumer *sc, struct samsa_partition **parts, size_t *count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_assignment(sc, parts, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_lag(samsa_consumer *sc, const char *topic, int32_t partition,
                       struct samsa_lag *out)
{
    if (sc == NULL || topic == NULL || out == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    const struct sc_cpart *p = sc_cpart_find(c, topic, partition);
    if (p == NULL) {
        pthread_mutex_unlock(&c->lock);
        return SAMSA_ERR_STATE;
    }
    out->position = position_of(c, p);
    out->high_watermark = p->hwm;
    out->last_stable = p->lso;
    out->paused = p->paused;
    int64_t end = c->v->isolation_level == 1 && p->lso >= 0 ? p->lso : p->hwm;
    out->lag = end >= 0 && out->position >= 0 ? (end > out->position ? end - out->position : 0)
                                              : -1;
    pthread_mutex_unlock(&c->lock);
    return SAMSA_OK;
}

int samsa_consumer_lag(samsa_consumer *sc, const char *topic, int32_t partition,
                       struct samsa_lag *out)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_lag(sc, topic, partition, out);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

/* ------------------------------------------------------------- the kind */

static int consumer_check_conf(samsa_conf *conf, char *errstr, size_t errstr_size)
{
    const struct sc_conf_values *v = &conf->v;
    if (v->heartbeat_interval_ms >= v->session_timeout_ms) {
        sc_errf(errstr, errstr_size,
                "heartbeat.interval.ms (%d) must be lower than session.timeout.ms (%d)",
                v->heartbeat_interval_ms, v->session_timeout_ms);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    return SAMSA_OK;
}

const struct sc_kind_ops sc_consumer_kind = {
    .tag = 'c',
    .type = "consumer",
    .check_conf = consumer_check_conf,
    .want_topics = consumer_topics,
    .on_metadata = consumer_metadata,
    .serve = consumer_serve,
    .free_state = consumer_free_state,
    .stats = sc_group_stats,
};

/* ------------------------------------------------------ group metadata */

static samsa_consumer_group_metadata *group_metadata(const char *group_id, int32_t generation,
                                                     const char *member_id)
{
    samsa_consumer_group_metadata *md = kp_calloc(1, sizeof(*md));
    if (md == NULL) {
        return NULL;
    }
    md->group_id = sc_strdup(group_id);
    md->member_id = sc_strdup(member_id != NULL ? member_id : "");
    md->generation = generation;
    if (md->group_id == NULL || md->member_id == NULL) {
        samsa_consumer_group_metadata_destroy(md);
        return NULL;
    }
    return md;
}

samsa_consumer_group_metadata *samsa_consumer_group_metadata_new(const char *group_id)
{
    return group_id != NULL ? group_metadata(group_id, -1, "") : NULL;
}

void samsa_consumer_group_metadata_destroy(samsa_consumer_group_metadata *md)
{
    if (md != NULL) {
        kp_free(md->group_id);
        kp_free(md->member_id);
        kp_free(md);
    }
}

samsa_consumer_group_metadata *samsa_consumer_group_metadata_get(samsa_consumer *sc)
{
    if (sc == NULL || !sc_gate_enter(&sc->gate)) {
        return NULL;
    }
    struct sc_client *c = sc->c;
    samsa_consumer_group_metadata *md = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->v->group_id[0] != '\0') {
        const struct sc_group *g = sc_group_get(c);
        md = group_metadata(c->v->group_id, g != NULL ? g->generation : -1,
                            g != NULL ? sc_group_member_id(g) : "");
    }
    pthread_mutex_unlock(&c->lock);
    sc_gate_leave(&sc->gate);
    return md;
}
