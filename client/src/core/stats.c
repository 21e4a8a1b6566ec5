/*
 * Statistics: every statistics.interval.ms the I/O thread writes a JSON
 * document of the handle's counters and queues it as an event; the next
 * poll-like call hands it to the stats callback (sc_serve_errors), as
 * librdkafka's stats_cb runs from rd_kafka_poll. The field names are
 * librdkafka's where they mean the same (its STATISTICS.md: the top level,
 * brokers{}, topics{}.partitions{}), with the broker admin API's names
 * (broker/src/admin/documents.c: high_watermark, log_start_offset) beside
 * them.
 *
 * @locality: the I/O thread with c->lock held (the connections' counters
 * are written there too, io.c).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

struct jbuf {
    char *p;
    size_t len, cap;
    bool failed;
};

static void jb_printf(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jb_printf(struct jbuf *b, const char *fmt, ...)
{
    for (;;) {
        if (b->failed) {
            return;
        }
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p != NULL ? b->p + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)n + 256;
        char *np = kp_realloc(b->p, cap);
        if (np == NULL) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

/* A JSON string: s with quotes, backslashes and control bytes escaped. */
static void jb_str(struct jbuf *b, const char *s)
{
    jb_printf(b, "\"");
    for (const unsigned char *q = (const unsigned char *)s; *q != '\0'; q++) {
        if (*q == '"' || *q == '\\') {
            jb_printf(b, "\\%c", *q);
        } else if (*q < 0x20) {
            jb_printf(b, "\\u%04x", *q);
        } else {
            jb_printf(b, "%c", *q);
        }
    }
    jb_printf(b, "\"");
}

static const char *conn_state_name(int state)
{
    switch (state) {
    case SC_CONN_CONNECTING:
        return "CONNECT";
    case SC_CONN_HANDSHAKE:
        return "APIVERSION_QUERY";
    case SC_CONN_UP:
        return "UP";
    default:
        return "DOWN";
    }
}

static void put_brokers(struct jbuf *b, const struct sc_client *c)
{
    jb_printf(b, "\"brokers\":{");
    bool first = true;
    for (const struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        if (conn->coordinator) {
            continue; /* the coordinator's own connection is counted apart below */
        }
        char name[300];
        (void)snprintf(name, sizeof(name), "%s:%d/%s%" PRId32, conn->host, conn->port,
                       conn->node_id < 0 ? "bootstrap" : "", conn->node_id);
        jb_printf(b, "%s", first ? "" : ",");
        first = false;
        jb_str(b, name);
        jb_printf(b, ":{\"name\":");
        jb_str(b, name);
        jb_printf(b, ",\"nodeid\":%" PRId32 ",\"nodename\":\"%s:%d\",\"state\":\"%s\"",
                  conn->node_id, conn->host, conn->port, conn_state_name(conn->state));
        uint64_t tx = conn->tx, rx = conn->rx, txb = conn->tx_bytes, rxb = conn->rx_bytes;
        int waitresp = conn->req_count;
        for (const struct sc_conn *o = c->conns; o != NULL; o = o->next) {
            if (o->coordinator && o->node_id == conn->node_id) {
                tx += o->tx;
                rx += o->rx;
                txb += o->tx_bytes;
                rxb += o->rx_bytes;
                waitresp += o->req_count;
            }
        }
        jb_printf(b,
                  ",\"outbuf_cnt\":%d,\"outbuf_bytes\":%zu,\"waitresp_cnt\":%d,\"tx\":%" PRIu64
                  ",\"txbytes\":%" PRIu64 ",\"rx\":%" PRIu64 ",\"rxbytes\":%" PRIu64
                  ",\"connects\":%" PRIu64 ",\"disconnects\":%" PRIu64 "}",
                  conn->out_off < conn->out.len ? 1 : 0, conn->out.len - conn->out_off, waitresp,
                  tx, txb, rx, rxb, conn->connects, conn->disconnects);
    }
    jb_printf(b, "}");
}

/* One partition's object; -1 for what this kind of handle does not know. */
struct part_stats {
    int32_t partition, leader;
    int64_t msgq_cnt, msgq_bytes;
    int64_t next_offset, app_offset, stored_offset, committed_offset;
    int64_t lo, hi, ls, lag;
};

static void put_partition(struct jbuf *b, const struct part_stats *s, bool first)
{
    jb_printf(b,
              "%s\"%" PRId32 "\":{\"partition\":%" PRId32 ",\"leader\":%" PRId32
              ",\"msgq_cnt\":%" PRId64 ",\"msgq_bytes\":%" PRId64 ",\"next_offset\":%" PRId64
              ",\"app_offset\":%" PRId64 ",\"stored_offset\":%" PRId64
              ",\"committed_offset\":%" PRId64 ",\"lo_offset\":%" PRId64
              ",\"log_start_offset\":%" PRId64 ",\"hi_offset\":%" PRId64
              ",\"high_watermark\":%" PRId64 ",\"ls_offset\":%" PRId64
              ",\"consumer_lag\":%" PRId64 "}",
              first ? "" : ",", s->partition, s->partition, s->leader, s->msgq_cnt,
              s->msgq_bytes, s->next_offset, s->app_offset, s->stored_offset,
              s->committed_offset, s->lo, s->lo, s->hi, s->hi, s->ls, s->lag);
}

/* A producer's topics (none for the other kinds); *first_topic: no topic
 * written yet. */
static void put_producer_topics(struct jbuf *b, const struct sc_client *c, bool *first_topic)
{
    for (const struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        jb_printf(b, "%s", *first_topic ? "" : ",");
        *first_topic = false;
        jb_str(b, t->name);
        jb_printf(b, ":{\"topic\":");
        jb_str(b, t->name);
        jb_printf(b, ",\"partitions\":{");
        for (int32_t i = 0; i < t->partition_count; i++) {
            const struct sc_ppart *pp = &t->parts[i];
            struct part_stats s = {i, pp->leader, pp->queue.count, (int64_t)pp->queue.bytes,
                                   -1, -1, -1, -1, -1, -1, -1, -1};
            put_partition(b, &s, i == 0);
        }
        /* records waiting for the topic's partition count: librdkafka's
         * unassigned partition, -1 */
        struct part_stats u = {-1, -1, t->unassigned.count, (int64_t)t->unassigned.bytes,
                               -1, -1, -1, -1, -1, -1, -1, -1};
        put_partition(b, &u, t->partition_count == 0);
        jb_printf(b, "}}");
    }
}

/* A consumer's assigned partitions by topic (none for the other kinds). */
static void put_consumer_topics(struct jbuf *b, const struct sc_client *c, bool *first_topic)
{
    for (int i = 0; i < c->cpart_count; i++) {
        const char *topic = c->cparts[i]->topic;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) {
            seen = strcmp(c->cparts[j]->topic, topic) == 0;
        }
        if (seen) {
            continue;
        }
        jb_printf(b, "%s", *first_topic ? "" : ",");
        *first_topic = false;
        jb_str(b, topic);
        jb_printf(b, ":{\"topic\":");
        jb_str(b, topic);
        jb_printf(b, ",\"partitions\":{");
        bool first = true;
        for (int j = i; j < c->cpart_count; j++) {
            const struct sc_cpart *p = c->cparts[j];
            if (strcmp(p->topic, topic) != 0) {
                continue;
            }
            int64_t queued_bytes = 0;
            for (const struct sc_cmsg *m = c->cq; p->queued > 0 && m != NULL; m = m->next) {
                queued_bytes += m->part == p ? (int64_t)m->size : 0;
            }
            int64_t end = c->v->isolation_level == 1 ? p->lso : p->hwm;
            int64_t at = p->app_offset >= 0 ? p->app_offset : -1;
            struct part_stats s = {
                p->partition,
                p->leader,
                p->queued,
                queued_bytes,
                p->state == SC_CP_ACTIVE ? p->position : -1,
                at,
                p->stored,
                p->committed,
                p->log_start,
                p->hwm,
                p->lso,
                end >= 0 && at >= 0 ? end - at : -1,
            };
            put_partition(b, &s, first);
            first = false;
        }
        jb_printf(b, "}}");
    }
}

/* The kind's blocks: librdkafka's cgrp and eos (STATISTICS.md). */
static void put_kind_blocks(struct jbuf *b, const struct sc_client *c, int64_t now)
{
    struct sc_kind_stats k = {.rebalance_age_ms = -1, .producer_id = -1, .producer_epoch = -1};
    if (c->kind_ops->stats == NULL) {
        return;
    }
    c->kind_ops->stats(c, now, &k);
    if (k.cgrp) {
        jb_printf(b, ",\"cgrp\":{\"state\":\"%s\",\"stateage\":%" PRId64
                     ",\"join_state\":\"%s\",\"samsa_state\":\"%s\",\"rebalance_age\":%" PRId64
                     ",\"rebalance_cnt\":%" PRId64 ",\"rebalance_reason\":",
                  k.state, k.stateage_ms, k.join_state, k.samsa_state, k.rebalance_age_ms,
                  k.rebalance_cnt);
        jb_str(b, k.rebalance_reason != NULL ? k.rebalance_reason : "");
        jb_printf(b, ",\"generation\":%" PRId32 ",\"assignment_size\":%d}", k.generation,
                  k.assignment_size);
    }
    if (k.eos) {
        /* without transactional.id: txn_state stays Init and may not
         * enqueue, as librdkafka's */
        jb_printf(b,
                  ",\"eos\":{\"idemp_state\":\"%s\",\"idemp_stateage\":%" PRId64
                  ",\"txn_state\":\"%s\",\"txn_stateage\":%" PRId64
                  ",\"txn_may_enq\":%s,\"producer_id\":%" PRId64
                  ",\"producer_epoch\":%d,\"epoch_cnt\":%" PRIu64 "}",
                  k.idemp_state, k.idemp_stateage_ms,
                  k.txn_state != NULL ? k.txn_state : "Init", now - c->created_ms,
                  k.txn_may_enq ? "true" : "false", k.producer_id, k.producer_epoch,
                  k.epoch_cnt);
    }
}

char *sc_stats_json(struct sc_client *c, int64_t now, size_t *len)
{
    struct jbuf b = {0};
    const char *type = c->kind_ops->type;
    jb_printf(&b, "{\"name\":");
    char name[300];
    (void)snprintf(name, sizeof(name), "%s#%s-%p", c->v->client_id, type, (const void *)c);
    jb_str(&b, name);
    jb_printf(&b, ",\"client_id\":");
    jb_str(&b, c->v->client_id);
    jb_printf(&b,
              ",\"type\":\"%s\",\"ts\":%" PRId64 ",\"time\":%" PRId64 ",\"age\":%" PRId64
              ",\"msg_cnt\":%zu,\"msg_size\":%zu,\"msg_max\":%d,\"msg_size_max\":%" PRId64
              ",\"tx\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"rx\":%" PRIu64
              ",\"rx_bytes\":%" PRIu64 ",\"txmsgs\":%" PRIu64 ",\"txmsg_bytes\":%" PRIu64
              ",\"rxmsgs\":%" PRIu64 ",\"rxmsg_bytes\":%" PRIu64 ",",
              type, now * 1000, (now + c->wall_minus_mono_ms) / 1000, (now - c->created_ms) * 1000,
              c->outq_msgs, c->outq_bytes, c->v->queue_max_messages, c->v->queue_max_bytes, c->tx, c->tx_bytes, c->rx,
              c->rx_bytes, c->txmsgs, c->txmsg_bytes, c->rxmsgs, c->rxmsg_bytes);
    put_brokers(&b, c);
    jb_printf(&b, ",\"topics\":{");
    bool first_topic = true;
    put_producer_topics(&b, c, &first_topic);
    put_consumer_topics(&b, c, &first_topic);
    jb_printf(&b, "}");
    put_kind_blocks(&b, c, now);
    jb_printf(&b, "}");
    if (b.failed) {
        kp_free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}

int64_t sc_stats_serve(struct sc_client *c, int64_t now)
{
    int interval = c->v->statistics_interval_ms;
    if (interval <= 0 || c->conf->stats_cb == NULL) {
        return INT64_MAX;
    }
    if (c->stats_next_ms == 0) {
        c->created_ms = now;
        c->stats_next_ms = now + interval;
    }
    if (now < c->stats_next_ms) {
        return c->stats_next_ms;
    }
    c->stats_next_ms = now + interval;
    if (c->stats_pending != NULL) {
        return c->stats_next_ms; /* the last one is still waiting for a poll */
    }
    size_t len = 0;
    char *json = sc_stats_json(c, now, &len);
    struct sc_err_ev *ev = json != NULL ? kp_calloc(1, sizeof(*ev) + len + 1) : NULL;
    if (ev != NULL) {
        ev->stats = true;
        memcpy(ev->reason, json, len + 1);
        c->stats_pending = ev;
        sc_post_event(c, ev);
    }
    kp_free(json);
    return c->stats_next_ms;
}
