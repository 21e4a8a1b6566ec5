/*
 * fuzz_client_response: what libsamsa does with the bytes brokers send.
 *
 * A client core runs detached (sc_client_new_detached: no I/O thread, no
 * sockets) while this harness plays its brokers: it takes every request
 * the client writes (conn->out), and answers the oldest one of a
 * connection as the input says, with a valid answer of a small model broker
 * (a cluster of two brokers, topics t0 and t1, a group coordinator, logs
 * that grow with what is produced), that answer with an error code, with it
 * damaged or split, with the input's own bytes as the body or as the whole
 * frame, or by dropping the connection. The client's handlers, its state
 * machines (metadata, producer batches and sequences, fetch positions,
 * group membership and the assignors, commits, admin ops) and its public
 * calls (poll, produce, commit, pause, lag, assignment) run on all of it.
 *
 * Input: byte 0: bits 0-1 the scenario (0 a group member subscribed to t0
 * and t1, 1 a consumer assigned t0 and t1 with group offsets, 2 an
 * idempotent producer, 3 an admin handle with every admin op queued),
 * bit 2 the brokers lack IncrementalAlterConfigs, bit 3 they lack
 * CreatePartitions, bit 4 old brokers (JoinGroup v0-3, OffsetFetch v1,
 * Fetch v4, Metadata v1), bits 5-7 the codec of fetched batches (% 5);
 * byte 1: the partitions of t0 and t1 (1-4 each), the producer's acks;
 * then steps of: op, arg, u16 length, that many bytes. op bits 0-2:
 *   0 the model's answer (arg &   4 the model's answer, one byte XORed
 *     15 = 15: a Metadata says t0
 *     has one partition more; 14:
 *     a Fetch finds 2 new records)
 *   1 the model's answer with       (position: the first two bytes, value:
 *     Kafka error errors[arg]       arg)
 *   2 the bytes as the body         5 the model's answer in two pieces
 *     (correlation id fixed)        6 the connection drops
 *   3 the bytes as the frame        7 no answer this step
 * op bits 3-4 which connection (of those with a request waiting), bits
 * 5-7 how far the clock jumps first (0 to 60 s); arg bits 4-7 what the
 * application does in the step (poll, commit, pause, resume, lag, produce).
 *
 * Checks, beyond "no crash, no sanitizer report, no leak":
 *   - every request the client writes decodes as a broker decodes it, and
 *     each connection's requests waiting for an answer are exactly those the
 *     client waits for, in order (acks=0 produce excepted);
 *   - the consumer's queue accounting holds (bytes, messages per partition);
 *     every message handed out is readable whole (key, value, headers);
 *   - a producer's outstanding count is what was produced minus the reports
 *     served.
 */
#define _GNU_SOURCE

#include "fuzz.h"

#include <string.h>

#define MB_CHECK(cond, what, value) fuzz_check((cond), (what), (value))
#include "../tests/client/model_broker.h"

#define MAX_STEPS 200

/* Kafka errors an answer may carry (op mode 1): the ones clients act on. */
static const int16_t errors[] = {
    -1, 1,  2,  3,  5,  6,  7,  10, 14, 15, 16, 22, 23, 25, 26, 27,
    35, 36, 37, 40, 41, 42, 45, 46, 47, 59, 68, 69, 79, 82, 87, 89,
};

static struct {
    struct sc_client *c;
    int scenario;
    int64_t skew;
    struct mb m; /* the model broker: flags, codec, topics, logs, group, requests */
    /* producer accounting */
    size_t produced;
    size_t reports;
    uint64_t sink; /* bytes of messages read, so nothing is optimized away */
} h;

static void take_all_requests(void)
{
    mb_take_all_requests(&h.m, h.c);
}

/* ---------------------------------------------------------- invariants */

static void check_consumer_queue(void)
{
    struct sc_client *c = h.c;
    size_t bytes = 0;
    for (const struct sc_cmsg *m = c->cq; m != NULL; m = m->next) {
        bytes += m->size;
        fuzz_check(m->next != NULL || m == c->cq_tail, "the queue's tail is not its last", 0);
    }
    fuzz_check(bytes == c->cq_bytes, "queued bytes miscounted", (int)(bytes - c->cq_bytes));
    for (int i = 0; i < c->cpart_count; i++) {
        int n = 0;
        for (const struct sc_cmsg *m = c->cq; m != NULL; m = m->next) {
            n += m->part == c->cparts[i] ? 1 : 0;
        }
        fuzz_check(n == c->cparts[i]->queued, "a partition's queued messages miscounted", n);
    }
}

static void read_message(const samsa_message *m)
{
    if (getenv("FUZZ_LOG") != NULL) {
        fprintf(stderr, "fuzz: message %s [%d] at %lld\n", m->topic, m->partition,
                (long long)m->offset);
    }
    uint64_t sum = (uint64_t)m->offset + (uint64_t)m->partition + strlen(m->topic);
    const uint8_t *k = m->key;
    const uint8_t *v = m->value;
    for (size_t i = 0; k != NULL && i < m->key_len; i++) {
        sum += k[i];
    }
    for (size_t i = 0; v != NULL && i < m->value_len; i++) {
        sum += v[i];
    }
    for (size_t i = 0; i < m->header_count; i++) {
        sum += strlen(m->headers[i].name);
        const uint8_t *hv = m->headers[i].value;
        for (size_t j = 0; hv != NULL && j < m->headers[i].value_len; j++) {
            sum += hv[j];
        }
    }
    h.sink += sum;
}

/* ------------------------------------------------------------- answers */

/* Appends to w the frame answering p as `mode` says. */
static void build_answer(struct kp_writer *w, const struct mb_pending *p, int mode, uint8_t arg,
                         const uint8_t *bytes, size_t n)
{
    if (mode == 3) { /* the input is the whole frame's payload */
        kp_wr_i32(w, (int32_t)n);
        kp_wr_raw(w, bytes, n);
        return;
    }
    if (mode == 2) { /* the input is the body */
        int16_t hv = kp_response_header_version(p->api, p->version);
        kp_wr_i32(w, (int32_t)(n + 4 + (hv >= 1 ? 1 : 0)));
        kp_wr_i32(w, p->corr);
        if (hv >= 1) {
            kp_wr_i8(w, 0); /* no tagged fields */
        }
        kp_wr_raw(w, bytes, n);
        return;
    }
    int16_t err = mode == 1 ? errors[arg % (sizeof(errors) / sizeof(errors[0]))] : 0;
    mb_encode_answer(&h.m, w, p, err, mode == 0 ? arg : 0);
    if (mode == 4 && w->len > 0) { /* one byte changed */
        size_t pos = n >= 2 ? fuzz_load_u16(bytes) : (n == 1 ? bytes[0] : 0);
        w->buf[pos % w->len] ^= arg != 0 ? arg : 0x80;
    }
}

/* --------------------------------------------------------- applications */

static void on_delivery(const struct samsa_delivery *d, void *opaque)
{
    (void)opaque;
    h.reports++;
    h.sink += (uint64_t)d->offset + d->key_len + d->value_len;
}

static void on_error(int err, const char *reason, void *opaque)
{
    (void)opaque;
    h.sink += (uint64_t)err + strlen(reason);
}

static void on_rebalance(bool assigned, const struct samsa_partition *parts, size_t count,
                         void *opaque)
{
    (void)opaque;
    for (size_t i = 0; i < count; i++) {
        h.sink += strlen(parts[i].topic) + (uint64_t)parts[i].partition + (assigned ? 1 : 0);
    }
}

static void produce_some(samsa_producer *p, uint8_t arg)
{
    for (int i = 0; i < 1 + arg % 4; i++) {
        char key[16];
        char value[32];
        int kl = snprintf(key, sizeof(key), "key-%zu", h.produced);
        int vl = snprintf(value, sizeof(value), "value-%zu", h.produced);
        struct samsa_header hd = {"trace", "x", 1};
        struct samsa_record r = {
            SAMSA_RECORD_INIT,
            .topic = (arg & 8) ? "t1" : (arg & 16 ? "unknown-topic" : "t0"),
            .partition = (arg & 32) ? (int32_t)(arg % 3) : SAMSA_PARTITION_ANY,
            .key = (arg & 64) ? NULL : key,
            .key_len = (size_t)kl,
            .value = value,
            .value_len = (size_t)vl,
            .headers = &hd,
            .header_count = (arg & 128) ? 1 : 0,
        };
        if (samsa_produce(p, &r) == SAMSA_OK) {
            h.produced++;
        }
    }
}

/* What the application does in one step (arg's high bits). */
static void act(samsa_consumer *cons, samsa_producer *prod, uint8_t arg)
{
    if (prod != NULL) {
        if ((arg >> 4) % 3 == 0) {
            produce_some(prod, arg);
        }
        (void)samsa_producer_poll(prod, 0);
        fuzz_check(samsa_producer_outq_len(prod) + h.reports == h.produced,
                   "outstanding records miscounted", (int)h.produced);
        return;
    }
    if (cons == NULL) {
        return;
    }
    for (int i = 0; i < 16; i++) {
        samsa_message *m = samsa_consumer_poll(cons, 0);
        if (m == NULL) {
            break;
        }
        read_message(m);
        samsa_message_free(m);
    }
    struct samsa_partition part = {"t0", 0, 0};
    struct samsa_lag lag;
    struct samsa_partition *as = NULL;
    size_t an = 0;
    int rc = SAMSA_OK;
    switch ((arg >> 4) & 7) {
    case 1:
        rc = samsa_consumer_commit(cons, NULL, 0, true, 0);
        break;
    case 2:
        rc = samsa_consumer_pause(cons, &part, 1);
        break;
    case 3:
        rc = samsa_consumer_resume(cons, &part, 1);
        break;
    case 4:
        rc = samsa_consumer_lag(cons, "t0", 0, &lag);
        h.sink += samsa_consumer_at_end(cons) ? 1 : 0;
        break;
    case 5:
        rc = samsa_consumer_assignment(cons, &as, &an);
        if (rc == SAMSA_OK) {
            samsa_partitions_free(as, an);
        }
        break;
    case 6: {
        struct samsa_partition explicit_offsets[1] = {{"t1", 1, 5}};
        rc = samsa_consumer_commit(cons, explicit_offsets, 1, true, 0);
        break;
    }
    default:
        break;
    }
    h.sink += (uint64_t)(int64_t)rc; /* any answer is fine: what matters is surviving */
}

/* ---------------------------------------------------------------- setup */

static void conf_set(samsa_conf *conf, const char *k, const char *v)
{
    char err[256];
    int e = samsa_conf_set(conf, k, v, err, sizeof(err));
    fuzz_check(e == SAMSA_OK, "a configuration the harness sets was refused", e);
}

/* An op for the I/O loop that no caller waits for. */
static void submit(struct sc_client *c, int kind, void *arg)
{
    struct sc_op *op = sc_op_new(kind, arg);
    fuzz_check(op != NULL, "out of memory", 0);
    op->abandoned = true;
    op->deadline = sc_now_ms() + 3600000;
    if (c->ops_tail != NULL) {
        c->ops_tail->next = op;
    } else {
        c->ops = op;
    }
    c->ops_tail = op;
}

static struct sc_admin_arg *admin_arg(const char *name)
{
    struct sc_admin_arg *a = kp_calloc(1, sizeof(*a));
    fuzz_check(a != NULL, "out of memory", 0);
    a->name = sc_strdup(name);
    fuzz_check(a->name != NULL, "out of memory", 0);
    return a;
}

static struct samsa_partition *parts2(void)
{
    struct samsa_partition *p = kp_calloc(2, sizeof(*p));
    fuzz_check(p != NULL, "out of memory", 0);
    p[0] = (struct samsa_partition){sc_strdup("t0"), 0, 3};
    p[1] = (struct samsa_partition){sc_strdup("t1"), 1, -1};
    fuzz_check(p[0].topic != NULL && p[1].topic != NULL, "out of memory", 0);
    return p;
}

/* Every admin op, queued at once. */
static void queue_admin_ops(struct sc_client *c)
{
    submit(c, SC_OP_METADATA, kp_calloc(1, sizeof(struct sc_md_arg)));
    struct sc_topic_arg *t = kp_calloc(1, sizeof(*t));
    fuzz_check(t != NULL, "out of memory", 0);
    t->name = sc_strdup("new-topic");
    t->partitions = -1;
    t->replication_factor = -1;
    submit(c, SC_OP_CREATE_TOPIC, t);
    struct sc_topic_arg *d = kp_calloc(1, sizeof(*d));
    fuzz_check(d != NULL, "out of memory", 0);
    d->name = sc_strdup("t1");
    submit(c, SC_OP_DELETE_TOPIC, d);
    struct sc_lo_arg *lo = kp_calloc(1, sizeof(*lo));
    fuzz_check(lo != NULL, "out of memory", 0);
    lo->topic = sc_strdup("t0");
    lo->watermarks = true;
    submit(c, SC_OP_LIST_OFFSETS, lo);
    struct sc_admin_arg *a = admin_arg("t0");
    a->resource_type = SAMSA_RESOURCE_TOPIC;
    submit(c, SC_OP_DESCRIBE_CONFIGS, a);
    a = admin_arg("t0");
    a->resource_type = SAMSA_RESOURCE_TOPIC;
    a->cfg_count = 2;
    a->cfg_names = kp_calloc(2, sizeof(char *));
    a->cfg_values = kp_calloc(2, sizeof(char *));
    fuzz_check(a->cfg_names != NULL && a->cfg_values != NULL, "out of memory", 0);
    a->cfg_names[0] = sc_strdup("retention.ms");
    a->cfg_values[0] = sc_strdup("1000");
    a->cfg_names[1] = sc_strdup("cleanup.policy");
    a->cfg_values[1] = NULL;
    submit(c, SC_OP_ALTER_CONFIGS, a);
    a = admin_arg("t0");
    a->total = 4;
    submit(c, SC_OP_CREATE_PARTITIONS, a);
    a = admin_arg("");
    a->parts = parts2();
    a->part_count = 2;
    a->leaders = kp_calloc(2, sizeof(int32_t));
    fuzz_check(a->leaders != NULL, "out of memory", 0);
    submit(c, SC_OP_DELETE_RECORDS, a);
    submit(c, SC_OP_LIST_GROUPS, admin_arg(""));
    submit(c, SC_OP_DESCRIBE_GROUP, admin_arg("fg"));
    submit(c, SC_OP_GROUP_OFFSETS, admin_arg("fg"));
    a = admin_arg("fg");
    a->parts = parts2();
    a->parts[1].offset = 7;
    a->part_count = 2;
    submit(c, SC_OP_ALTER_GROUP_OFFSETS, a);
    submit(c, SC_OP_DELETE_GROUP, admin_arg("fg"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    memset(&h, 0, sizeof(h));
    h.scenario = data[0] & 3;
    mb_init(&h.m, 1 + (data[1] & 3), 1 + ((data[1] >> 2) & 3));
    h.m.flags = (data[0] >> 2) & 7;
    h.m.codec = (data[0] >> 5) % 5;
    samsa_conf *conf = samsa_conf_new();
    fuzz_check(conf != NULL, "out of memory", 0);
    conf_set(conf, "bootstrap.servers", "fuzz-broker:9092,fuzz-broker:9093");
    conf_set(conf, "client.id", "fuzz");
    conf_set(conf, "retry.backoff.ms", "1");
    conf_set(conf, "reconnect.backoff.ms", "0");
    conf_set(conf, "reconnect.backoff.max.ms", "10");
    conf_set(conf, "heartbeat.interval.ms", "1000");
    conf_set(conf, "session.timeout.ms", "10000");
    conf_set(conf, "max.poll.interval.ms", "30000");
    conf_set(conf, "auto.commit.interval.ms", "500");
    conf_set(conf, "linger.ms", "0");
    conf_set(conf, "message.timeout.ms", "20000");
    conf_set(conf, "debug", getenv("FUZZ_LOG") != NULL ? "all" : "");
    samsa_conf_set_error_cb(conf, on_error, NULL);
    samsa_conf_set_rebalance_cb(conf, on_rebalance, NULL);
    samsa_conf_set_delivery_cb(conf, on_delivery, NULL);
    char kind = h.scenario == 2 ? 'p' : h.scenario == 3 ? 'a' : 'c';
    if (kind == 'c') {
        conf_set(conf, "group.id", "fg");
        conf_set(conf, "auto.offset.reset", (data[1] & 16) ? "earliest" : "latest");
        conf_set(conf, "partition.assignment.strategy",
                 (data[1] & 32) ? "roundrobin,range" : "range,roundrobin");
    }
    if (kind == 'p') {
        static const char *const acks[3] = {"all", "1", "0"};
        conf_set(conf, "acks", acks[(data[1] >> 4) % 3]);
        conf_set(conf, "compression.type", (data[1] & 64) ? "lz4" : "none");
    }
    char errstr[256];
    int e = sc_client_new_detached(kind, conf, &h.c, errstr, sizeof(errstr));
    samsa_conf_destroy(conf);
    fuzz_check(e == SAMSA_OK, "the detached client did not start", e);
    struct samsa_consumer cons = {.c = h.c};
    struct samsa_producer prod = {.c = h.c};
    if (h.scenario == 0) {
        const char *topics[2] = {"t0", "t1"};
        e = samsa_consumer_subscribe(&cons, topics, 2);
        fuzz_check(e == SAMSA_OK, "subscribe", e);
    } else if (h.scenario == 1) {
        struct samsa_partition parts[4] = {{"t0", 0, SAMSA_OFFSET_BEGINNING},
                                           {"t0", 1, SAMSA_OFFSET_STORED},
                                           {"t1", 0, SAMSA_OFFSET_END},
                                           {"t1", 1, 3}};
        e = samsa_consumer_assign(&cons, parts, 4);
        fuzz_check(e == SAMSA_OK, "assign", e);
    } else if (h.scenario == 2) {
        produce_some(&prod, 0);
        produce_some(&prod, 0x48);
    } else {
        pthread_mutex_lock(&h.c->lock);
        queue_admin_ops(h.c);
        pthread_mutex_unlock(&h.c->lock);
    }
    static const int64_t jumps[8] = {0, 0, 1, 10, 100, 1000, 10000, 60000};
    size_t at = 2;
    for (int step = 0; step < MAX_STEPS && at + 4 <= size; step++) {
        uint8_t op = data[at];
        uint8_t arg = data[at + 1];
        size_t n = fuzz_load_u16(data + at + 2);
        at += 4;
        if (n > size - at) {
            n = size - at;
        }
        const uint8_t *bytes = data + at;
        at += n;
        h.skew += jumps[op >> 5];

        pthread_mutex_lock(&h.c->lock);
        (void)sc_client_run_once(h.c, sc_now_ms() + h.skew);
        take_all_requests();
        if (kind == 'c') {
            check_consumer_queue();
        }
        pthread_mutex_unlock(&h.c->lock);

        act(kind == 'c' ? &cons : NULL, kind == 'p' ? &prod : NULL, arg);

        pthread_mutex_lock(&h.c->lock);
        take_all_requests();
        int mode = op & 7;
        struct mb_conn *waiting[MB_MAX_CONNS];
        int nw = 0;
        for (int i = 0; i < h.m.nconns; i++) {
            if (h.m.conns[i].n > 0 && h.m.conns[i].conn->state != SC_CONN_DOWN) {
                waiting[nw++] = &h.m.conns[i];
            }
        }
        if (nw > 0 && mode != 7) {
            struct mb_conn *hc = waiting[((op >> 3) & 3) % nw];
            if (mode == 6) {
                sc_conn_fail(h.c, hc->conn, "fuzz: connection lost");
            } else {
                struct kp_writer w;
                kp_wr_init(&w, (size_t)1 << 28);
                /* Answered or not, the client's own bookkeeping says what
                 * is still waiting (take_requests). */
                build_answer(&w, hc->q[0], mode == 5 ? 0 : mode, arg, bytes, n);
                if (getenv("FUZZ_LOG") != NULL) {
                    fprintf(stderr, "fuzz: answer %s v%d (mode %d) on node %d\n",
                            kp_api_find(hc->q[0]->api) != NULL ? kp_api_find(hc->q[0]->api)->name
                                                               : "?",
                            hc->q[0]->version, mode, hc->conn->node_id);
                }
                if (w.err == 0) {
                    size_t cut = mode == 5 && w.len > 1 ? 1 + (n > 0 ? bytes[0] : 0) % (w.len - 1)
                                                        : w.len;
                    sc_conn_feed(h.c, hc->conn, w.buf, cut);
                    if (cut < w.len) {
                        take_all_requests();
                        sc_conn_feed(h.c, hc->conn, w.buf + cut, w.len - cut);
                    }
                }
                kp_wr_free(&w);
            }
        }
        take_all_requests();
        if (kind == 'c') {
            check_consumer_queue();
        }
        pthread_mutex_unlock(&h.c->lock);
    }
    act(kind == 'c' ? &cons : NULL, kind == 'p' ? &prod : NULL, 0);
    sc_client_destroy(h.c);
    mb_free(&h.m);
    return 0;
}
