/* samsa-broker: topics of a cluster in ZooKeeper: a new topic written as
 * Kafka's AdminZkClient writes it, and a hosted topic's configs read from
 * /config/topics/<t> (see request.h). */
#define _GNU_SOURCE

#include "base/clock.h"
#include "base/logging.h"
#include "cluster/assignment.h"
#include "cluster/zk.h"
#include "cluster/zk_call.h"
#include "cluster/zk_json.h"
#include "server/cluster_wait.h"
#include "server/request.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void create_park_cancel(struct br_server *b, void *parked);
/* A CreateTopics waiting for ZooKeeper parked: what its connection's end does to it (request.h) */
static const struct br_park_ops create_park_ops = {"a CreateTopics waiting for ZooKeeper", create_park_cancel};

/* A ZooKeeper request of this module, freed when answered; those still
 * away when the session closes are freed with the broker
 * (br_cluster_admin_free). */
struct br_topic_zk_op {
    struct br_zk_call call; /* first */
    struct br_topic_zk_op *next;
    struct br_server *b;
    struct br_cluster_create *waiter; /* CREATE from a CreateTopics: told the outcome */
    int32_t waiter_index;
    int32_t partitions; /* CREATE: how many */
    char topic[BR_TOPIC_NAME_MAX + 1];
    char *assignment; /* CREATE: the assignment's JSON, written once the config is */
    size_t assignment_len;
    char *config; /* CREATE: the config's JSON, kept to be sent again */
    size_t config_len;
    int attempts;      /* CREATE: writes sent again after a lost answer */
    bool sent_unknown; /* CREATE: an assignment write's outcome was not known */
};

/* Creates whose answer was lost (CONNECTIONLOSS: ZooKeeper may have
 * applied them) are sent again this many times, as Kafka 2.0's
 * KafkaZkClient.retryRequestUntilConnected sends them again once connected;
 * a request sent while the session reconnects waits in the client. */
#define MAX_RESENDS 10

static struct br_topic_zk_op *op_new(struct br_server *b, const char *topic,
                                     void (*done)(struct br_zk_call *, const struct br_zk_result *))
{
    struct br_topic_zk_op *op = kp_calloc(1, sizeof *op);
    if (op == NULL) {
        return NULL;
    }
    op->call.done = done;
    op->b = b;
    (void)snprintf(op->topic, sizeof op->topic, "%s", topic);
    op->next = b->ca.zk_ops;
    b->ca.zk_ops = op;
    return op;
}

/* A CreateTopics waiting for its topics' writes. */
struct br_cluster_create {
    struct br_park park; /* first: its ops (request.h) */
    struct br_cluster_create *next;
    struct br_server *b;
    struct br_conn *conn;
    struct br_slot *slot;
    int16_t version;
    int32_t correlation_id;
    bool parked;
    int32_t outstanding;   /* writes not answered yet */
    struct kp_arena arena; /* the answer's copy */
    struct kp_CreateTopicsResponse resp;
    int16_t *codes;  /* per topic: the writes' outcome, applied to resp when parked */
    int32_t *nparts; /* per topic: the partitions created (0: none) */
    int32_t ncodes;
    /* the writes done, waiting (timeout_ms) for every created topic's
     * partitions to have a leader in this broker's metadata cache, as Kafka
     * 2.0's DelayedCreatePartitions does: a client that produces right after
     * CreateTopics then finds its leaders */
    int32_t timeout_ms;
    bool leaders_wait;
    struct br_timer timer;
};

static void create_free(struct br_cluster_create *w)
{
    br_timer_cancel(w->b->net, &w->timer);
    for (struct br_cluster_create **pp = &w->b->ca.creates; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    /* writes still away no longer report to it */
    for (struct br_topic_zk_op *op = w->b->ca.zk_ops; op != NULL; op = op->next) {
        if (op->waiter == w) {
            op->waiter = NULL;
        }
    }
    kp_arena_free(&w->arena);
    kp_free(w->codes);
    kp_free(w->nparts);
    kp_free(w);
}

static void create_answer(struct br_cluster_create *w)
{
    for (int32_t i = 0; i < w->resp.Topics.count && i < w->ncodes; i++) {
        if (w->codes[i] != KP_ERR_NONE) {
            w->resp.Topics.items[i].ErrorCode = w->codes[i];
        }
    }
    struct kp_writer wr;
    kp_wr_init(&wr, (size_t)w->b->cfg.response_max_bytes);
    size_t len = 0;
    uint8_t *buf = NULL;
    if (kp_response_encode(&wr, KP_API_CREATE_TOPICS, w->version, w->correlation_id, &w->resp) ==
        0) {
        buf = kp_wr_steal(&wr, &len);
    }
    kp_wr_free(&wr);
    if (buf == NULL || br_slot_add_mem(w->slot, buf, len) != 0) {
        br_error("answering a CreateTopics to %s failed: closing the connection",
                 br_conn_peer(w->conn));
        br_conn_close_after_flush(w->conn);
    }
    br_slot_ready(w->conn, w->slot);
    create_free(w);
}

/* Topic i of w created here and every partition of it led, as the metadata
 * cache has it (true for a topic whose creation failed: nothing to wait for). */
static bool topic_led(const struct br_cluster_create *w, int32_t i)
{
    const struct kp_CreateTopicsResponse_CreatableTopicResult *t = &w->resp.Topics.items[i];
    if (w->codes[i] != KP_ERR_NONE || t->ErrorCode != KP_ERR_NONE || t->Name.len <= 0) {
        return true;
    }
    const struct br_mc_topic *mt = br_mc_topic(&w->b->mc, t->Name.ptr, (size_t)t->Name.len);
    if (mt == NULL || mt->npartitions < w->nparts[i] || mt->npartitions == 0) {
        return false;
    }
    for (int32_t k = 0; k < mt->npartitions; k++) {
        if (!mt->parts[k].present || mt->parts[k].leader < 0) {
            return false;
        }
    }
    return true;
}

static bool all_led(const struct br_cluster_create *w)
{
    for (int32_t i = 0; i < w->resp.Topics.count && i < w->ncodes; i++) {
        if (!topic_led(w, i)) {
            return false;
        }
    }
    return true;
}

/* timeout_ms passed: the topics still without leaders are REQUEST_TIMED_OUT
 * (Kafka's DelayedCreatePartitions); they are made all the same. */
static void leaders_timeout(void *ctx, struct br_timer *t)
{
    (void)ctx;
    struct br_cluster_create *w = t->owner;
    for (int32_t i = 0; i < w->resp.Topics.count && i < w->ncodes; i++) {
        if (!topic_led(w, i)) {
            w->codes[i] = KP_ERR_REQUEST_TIMED_OUT;
        }
    }
    create_answer(w);
}

static const struct br_timer_ops leaders_timer = {"CreateTopics waiting for leaders",
                                                  leaders_timeout};

/* The writes are done: answer now, or once the partitions have leaders. */
static void create_writes_done(struct br_cluster_create *w)
{
    if (w->timeout_ms <= 0 || all_led(w)) {
        create_answer(w);
        return;
    }
    w->leaders_wait = true;
    br_timer_arm(w->b->net, &w->timer, br_now_mono_ms() + w->timeout_ms);
}

void br_cluster_creates_check(struct br_server *b)
{
    for (struct br_cluster_create *w = b->ca.creates; w != NULL;) {
        struct br_cluster_create *next = w->next;
        if (w->leaders_wait && all_led(w)) {
            create_answer(w);
        }
        w = next;
    }
}

/* A started write of topic `index` of w (partitions of it) was answered
 * with code. */
static void create_report(struct br_cluster_create *w, int32_t index, int16_t code,
                          int32_t partitions)
{
    if (index >= 0 && index < w->ncodes && code != KP_ERR_NONE) {
        w->codes[index] = code;
    }
    if (index >= 0 && index < w->ncodes && code == KP_ERR_NONE) {
        w->nparts[index] = partitions;
    }
    if (--w->outstanding == 0 && w->parked) {
        create_writes_done(w);
    }
}

struct br_cluster_create *br_cluster_create_begin(struct br_server *b)
{
    struct br_cluster_create *w = kp_calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    w->park.ops = &create_park_ops;
    w->b = b;
    br_timer_init(&w->timer, &leaders_timer, w);
    kp_arena_init(&w->arena, (size_t)b->cfg.response_max_bytes);
    w->next = b->ca.creates;
    b->ca.creates = w;
    return w;
}

int br_cluster_park_create(struct br_cluster_create *w, struct br_req *r,
                           const struct kp_CreateTopicsResponse *resp, int32_t timeout_ms)
{
    w->timeout_ms = timeout_ms;
    if (w->outstanding == 0 || r->slot == NULL) {
        create_free(w);
        return 1;
    }
    int32_t n = resp->Topics.count > 0 ? resp->Topics.count : 0;
    struct kp_CreateTopicsResponse_CreatableTopicResult *topics =
        kp_arena_alloc(&w->arena, (size_t)(n > 0 ? n : 1) * sizeof *topics);
    w->codes = kp_calloc((size_t)(n > 0 ? n : 1), sizeof *w->codes);
    w->nparts = kp_calloc((size_t)(n > 0 ? n : 1), sizeof *w->nparts);
    if (topics == NULL || w->codes == NULL || w->nparts == NULL) {
        create_free(w);
        return KP_E_NOMEM;
    }
    /* the answer copied out of the request's arena and frame */
    w->resp = *resp;
    w->resp.Topics.items = topics;
    w->ncodes = n;
    for (int32_t i = 0; i < n; i++) {
        topics[i] = resp->Topics.items[i];
        struct kp_str *strs[2] = {&topics[i].Name, &topics[i].ErrorMessage};
        for (int k = 0; k < 2; k++) {
            if (strs[k]->ptr == NULL || strs[k]->len <= 0) {
                continue;
            }
            char *copy = kp_arena_alloc(&w->arena, (size_t)strs[k]->len);
            if (copy == NULL) {
                create_free(w);
                return KP_E_NOMEM;
            }
            memcpy(copy, strs[k]->ptr, (size_t)strs[k]->len);
            strs[k]->ptr = copy;
        }
    }
    w->conn = r->conn;
    w->slot = r->slot;
    w->version = r->version;
    w->correlation_id = r->hdr->CorrelationId;
    w->parked = true;
    br_slot_set_parked(r->slot, &w->park);
    return 0;
}

static void create_park_cancel(struct br_server *b, void *parked)
{
    (void)b;
    create_free(parked);
}

void br_cluster_complete_creates(struct br_server *b)
{
    for (struct br_cluster_create *w = b->ca.creates; w != NULL;) {
        struct br_cluster_create *next = w->next;
        if (w->parked) {
            br_timer_cancel(b->net, &w->timer);
            /* the writes not answered by now: their outcome is unknown */
            for (struct br_topic_zk_op *op = b->ca.zk_ops; op != NULL; op = op->next) {
                if (op->waiter == w && op->waiter_index >= 0 && op->waiter_index < w->ncodes) {
                    w->codes[op->waiter_index] = KP_ERR_REQUEST_TIMED_OUT;
                }
            }
            create_answer(w);
        }
        w = next;
    }
}

static void op_free(struct br_topic_zk_op *op)
{
    for (struct br_topic_zk_op **pp = &op->b->ca.zk_ops; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == op) {
            *pp = op->next;
            break;
        }
    }
    kp_free(op->config);
    kp_free(op->assignment);
    kp_free(op);
}

void br_cluster_admin_free(struct br_server *b)
{
    while (b->ca.creates != NULL) {
        create_free(b->ca.creates); /* answered at the drain; the connections are gone */
    }
    while (b->ca.zk_ops != NULL) {
        op_free(b->ca.zk_ops);
    }
    br_cluster_wait_free_all(b);
}

/* ---------------------------------------------------------------- creating a topic */

/* A creation's writes ended with code: its CreateTopics, if any, is told. */
static void create_done(struct br_topic_zk_op *op, int16_t code)
{
    struct br_cluster_create *w = op->waiter;
    op->waiter = NULL;
    if (w != NULL) {
        create_report(w, op->waiter_index, code, op->partitions);
    }
}

static void assignment_written(struct br_zk_call *call, const struct br_zk_result *r);

/* The assignment's create, sent (again); false when it could not be. */
static bool send_assignment(struct br_topic_zk_op *op)
{
    struct br_server *b = op->b;
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s", op->topic);
    op->call.done = assignment_written;
    return b->zk != NULL && br_zk_create(b->zk, path, op->assignment, op->assignment_len,
                                         BR_ZK_PERSISTENT, br_zk_call_tag(&op->call)) == 0;
}

/* A lost answer means nothing: sent again while the session lives. */
static bool resend_lost(struct br_topic_zk_op *op, const struct br_zk_result *r)
{
    return r->rc == BR_ZK_CONNECTIONLOSS && op->b->zk != NULL &&
           br_zk_state(op->b->zk) != BR_ZK_STATE_EXPIRED && ++op->attempts <= MAX_RESENDS;
}

static void assignment_created(struct br_topic_zk_op *op)
{
    create_done(op, KP_ERR_NONE);
    br_info("topic %s written to ZooKeeper: the controller makes its partitions", op->topic);
    op_free(op);
}

/* After a lost answer and NODEEXISTS: the assignment ZooKeeper holds is
 * this request's own (the same JSON, random start and shift included) when
 * the lost create was applied; the topic was created by it. */
static void assignment_read_back(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_topic_zk_op *op = (struct br_topic_zk_op *)(void *)call;
    if (r->rc == BR_ZK_OK && !r->data_null && r->data_len == op->assignment_len &&
        memcmp(r->data, op->assignment, op->assignment_len) == 0) {
        br_info("topic %s: the create whose answer was lost was applied", op->topic);
        assignment_created(op);
        return;
    }
    create_done(op, r->rc == BR_ZK_OK ? KP_ERR_TOPIC_ALREADY_EXISTS : KP_ERR_UNKNOWN_SERVER_ERROR);
    op_free(op);
}

static void assignment_written(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_topic_zk_op *op = (struct br_topic_zk_op *)(void *)call;
    if (r->rc == BR_ZK_OK) {
        assignment_created(op);
        return;
    }
    if (resend_lost(op, r)) {
        br_warn("creating topic %s: the answer of /brokers/topics/%s was lost: sent again",
                op->topic, op->topic);
        op->sent_unknown = true;
        if (send_assignment(op)) {
            return;
        }
    }
    if (r->rc == BR_ZK_NODEEXISTS && op->sent_unknown) {
        char path[BR_TOPIC_NAME_MAX + 32];
        (void)snprintf(path, sizeof path, "/brokers/topics/%s", op->topic);
        op->call.done = assignment_read_back;
        if (br_zk_get(op->b->zk, path, false, br_zk_call_tag(&op->call)) == 0) {
            return;
        }
    }
    create_done(op, r->rc == BR_ZK_NODEEXISTS ? KP_ERR_TOPIC_ALREADY_EXISTS
                                              : KP_ERR_UNKNOWN_SERVER_ERROR);
    if (r->rc == BR_ZK_NODEEXISTS) {
        br_debug("topic %s: created already", op->topic); /* a repeated auto-creation */
    } else {
        br_warn("creating topic %s: writing /brokers/topics/%s: %s", op->topic, op->topic,
                br_zk_rc_name(r->rc));
    }
    op_free(op);
}

static void config_written(struct br_zk_call *call, const struct br_zk_result *r);

/* The config's create, sent (again); false when it could not be. */
static bool send_config(struct br_topic_zk_op *op)
{
    struct br_server *b = op->b;
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/config/topics/%s", op->topic);
    op->call.done = config_written;
    return b->zk != NULL && br_zk_create(b->zk, path, op->config, op->config_len, BR_ZK_PERSISTENT,
                                         br_zk_call_tag(&op->call)) == 0;
}

static void config_written(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_topic_zk_op *op = (struct br_topic_zk_op *)(void *)call;
    if (resend_lost(op, r)) {
        br_warn("creating topic %s: the answer of /config/topics/%s was lost: sent again",
                op->topic, op->topic);
        if (send_config(op)) {
            return;
        }
    }
    /* the config may be there already (a topic deleted and made again, or
     * the create whose answer was lost) */
    if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NODEEXISTS) {
        br_warn("creating topic %s: writing /config/topics/%s: %s", op->topic, op->topic,
                br_zk_rc_name(r->rc));
        create_done(op, KP_ERR_UNKNOWN_SERVER_ERROR);
        op_free(op);
        return;
    }
    if (!send_assignment(op)) {
        br_warn("creating topic %s: cannot write its assignment", op->topic);
        create_done(op, KP_ERR_UNKNOWN_SERVER_ERROR);
        op_free(op);
    }
}

/* A random value for Kafka's random start index and shift. */
static uint32_t pick(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return (uint32_t)(x >> 32);
}

int br_cluster_create_topic(struct br_server *b, const struct br_topic_meta *m,
                            const int32_t *manual, char *err, size_t errlen)
{
    const struct br_metadata_cache *mc = &b->mc;
    size_t n = mc->nbrokers;
    if (m->replication_factor < 1 || (size_t)m->replication_factor > n) {
        (void)snprintf(err, errlen, "Replication factor: %d larger than available brokers: %zu.",
                       m->replication_factor, n);
        return KP_ERR_INVALID_REPLICATION_FACTOR;
    }
    if (b->zk == NULL || br_zk_state(b->zk) != BR_ZK_STATE_CONNECTED) {
        (void)snprintf(err, errlen, "this broker is not connected to ZooKeeper");
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int32_t ids[BR_META_MAX_REPLICATION_FACTOR];
    int32_t *brokers = n <= BR_META_MAX_REPLICATION_FACTOR ? ids : kp_calloc(n, sizeof *brokers);
    const char **racks = kp_calloc(n + 1, sizeof *racks);
    size_t total = (size_t)m->partitions * (size_t)m->replication_factor;
    int32_t *replicas = kp_calloc(total, sizeof *replicas);
    int32_t *first = kp_calloc((size_t)m->partitions + 1, sizeof *first);
    int rc = KP_ERR_KAFKA_STORAGE_ERROR;
    char *cfg_json = NULL;
    size_t cfg_len = 0;
    char *asg_json = NULL;
    size_t asg_len = 0;
    if (brokers == NULL || racks == NULL || replicas == NULL || first == NULL) {
        (void)snprintf(err, errlen, "out of memory");
        goto out;
    }
    br_mc_brokers_with_racks(mc, brokers, racks);
    if (b->ca.rng == 0) {
        b->ca.rng = (uint64_t)br_now_wall_ms() * 2654435761u + (uint64_t)b->node_id + 1;
    }
    uint32_t start = pick(&b->ca.rng);
    uint32_t shift = pick(&b->ca.rng);
    if (manual != NULL) {
        memcpy(replicas, manual, total * sizeof *replicas);
    } else {
        /* Kafka 2.0's CreateTopics places with racks when the brokers have
         * them (AdminManager: RackAwareMode.Enforced) */
        int arc = br_assign_replicas_racks(brokers, racks, n, 0, m->partitions,
                                           m->replication_factor, start, shift, replicas);
        if (arc != 0) {
            (void)snprintf(err, errlen, "%s",
                           arc == BR_ASSIGN_RACKS_INCOMPLETE ? BR_ASSIGN_RACKS_INCOMPLETE_MSG
                                                             : "cannot assign the replicas");
            rc = KP_ERR_UNKNOWN_SERVER_ERROR;
            goto out;
        }
    }
    for (int32_t p = 0; p <= m->partitions; p++) {
        first[p] = p * m->replication_factor;
    }
    struct br_zk_topic_assignment a = {m->partitions, first, replicas};
    if (br_zk_topic_config_encode(m->configs, m->n_configs, &cfg_json, &cfg_len) != 0 ||
        br_zk_topic_assignment_encode(&a, &asg_json, &asg_len) != 0) {
        (void)snprintf(err, errlen, "cannot encode the topic for ZooKeeper");
        goto out;
    }
    struct br_topic_zk_op *op = op_new(b, m->name, config_written);
    if (op == NULL) {
        (void)snprintf(err, errlen, "out of memory");
        goto out;
    }
    op->assignment = asg_json;
    op->assignment_len = asg_len;
    asg_json = NULL;
    op->config = cfg_json;
    op->config_len = cfg_len;
    cfg_json = NULL;
    /* as Kafka's AdminZkClient: the config first, then the assignment the
     * controller watches for */
    if (!send_config(op)) {
        op_free(op);
        (void)snprintf(err, errlen, "cannot write to ZooKeeper");
        goto out;
    }
    if (b->ca.create_waiter != NULL) {
        op->waiter = b->ca.create_waiter;
        op->waiter_index = b->ca.create_waiter_index;
        op->partitions = m->partitions;
        op->waiter->outstanding++;
    }
    br_info("creating topic %s: %" PRId32 " partition(s), replication factor %d", m->name,
            m->partitions, m->replication_factor);
    rc = 0;
out:
    kp_free(cfg_json);
    kp_free(asg_json);
    kp_free(first);
    kp_free(replicas);
    kp_free(racks);
    if (brokers != ids) {
        kp_free(brokers);
    }
    return rc;
}

/* ---------------------------------------------------------------- a hosted topic's configs */

int br_cluster_topic_config_decode(struct br_server *b, const char *topic,
                                   const struct br_zk_result *r, struct br_topic_config *tc,
                                   size_t *overrides)
{
    br_topic_config_from_broker(&b->cfg, tc);
    *overrides = 0;
    if (r->rc == BR_ZK_NONODE || (r->rc == BR_ZK_OK && r->data == NULL)) {
        return 0; /* no znode: the broker's defaults */
    }
    if (r->rc != BR_ZK_OK) {
        return -1;
    }
    struct br_meta_config *cfgs = NULL;
    size_t n = 0;
    char err[256];
    if (br_zk_topic_config_decode(r->data, r->data_len, r->path, &cfgs, &n, err, sizeof err) != 0) {
        br_warn("topic %s: %s (the broker's defaults apply)", topic, err);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (br_topic_config_set(tc, cfgs[i].key, cfgs[i].value, err, sizeof err) != 0) {
            br_warn("topic %s: config %s ignored: %s", topic, cfgs[i].key, err);
        }
    }
    br_zk_configs_free(cfgs, n);
    *overrides = n;
    return 0;
}

static void configs_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_topic_zk_op *op = (struct br_topic_zk_op *)(void *)call;
    struct br_server *b = op->b;
    struct br_topic *t = br_rm_find_topic(&b->rm, kp_str_c(op->topic));
    if (t == NULL || r->rc != BR_ZK_OK || r->data == NULL) {
        if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
            br_warn("topic %s: reading its configs: %s (the broker's defaults apply)", op->topic,
                    br_zk_rc_name(r->rc));
        }
        op_free(op);
        return;
    }
    struct br_topic_config tc;
    size_t n = 0;
    if (br_cluster_topic_config_decode(b, op->topic, r, &tc, &n) != 0) {
        op_free(op);
        return;
    }
    t->config = tc;
    struct br_log_config lc;
    br_topic_log_config(&tc, &lc);
    for (int32_t p = 0; p < t->npartitions; p++) {
        if (t->partitions[p].log != NULL && br_log_set_config(t->partitions[p].log, &lc) != 0) {
            br_warn("%s-%" PRId32 ": its configs could not be applied", op->topic, p);
        }
    }
    br_info("topic %s: %zu config(s) from ZooKeeper", op->topic, n);
    op_free(op);
}

void br_cluster_read_topic_configs(struct br_server *b, const char *topic)
{
    if (b->zk == NULL) {
        return;
    }
    struct br_topic_zk_op *op = op_new(b, topic, configs_read);
    if (op == NULL) {
        return;
    }
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/config/topics/%s", topic);
    if (br_zk_get(b->zk, path, false, br_zk_call_tag(&op->call)) != 0) {
        op_free(op);
    }
}
