/* samsa-broker: admin requests of a cluster parked until ZooKeeper and the
 * controller are done (see cluster_wait.h). */
#define _GNU_SOURCE

#include "server/cluster_wait.h"

#include "base/clock.h"
#include "base/logging.h"
#include "base/worker.h"

#include <samsa-protocol/alloc.h>

#include <stdio.h>
#include <string.h>

static void cwait_park_cancel(struct br_server *b, void *parked);
/* An admin request waiting for ZooKeeper parked: what its connection's end does to it (request.h) */
static const struct br_park_ops cwait_park_ops = {"an admin request waiting for ZooKeeper", cwait_park_cancel};

static void cwait_timeout(void *ctx, struct br_timer *t);
static const struct br_timer_ops cwait_timer = {"cluster admin request timeout", cwait_timeout};

static char *copy_str(const char *s, size_t n)
{
    char *c = kp_malloc(n + 1);
    if (c != NULL) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

struct br_cwait *br_cwait_new(struct br_req *r, size_t n)
{
    struct br_cwait *w = kp_calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    w->e = kp_calloc(n > 0 ? n : 1, sizeof *w->e);
    if (w->e == NULL) {
        kp_free(w);
        return NULL;
    }
    w->n = n;
    for (size_t i = 0; i < n; i++) {
        w->e[i].pending = true;
    }
    w->park.ops = &cwait_park_ops;
    w->b = r->b;
    w->api_key = r->hdr->RequestApiKey;
    w->version = r->version;
    w->correlation_id = r->hdr->CorrelationId;
    br_timer_init(&w->timer, &cwait_timer, w);
    w->next = r->b->ca.cwaits;
    r->b->ca.cwaits = w;
    return w;
}

int br_cwait_name(struct br_cwait *w, size_t i, struct kp_str name, int8_t type)
{
    w->e[i].type = type;
    w->e[i].name = copy_str(name.ptr != NULL ? name.ptr : "", name.len > 0 ? (size_t)name.len : 0);
    return w->e[i].name != NULL ? 0 : KP_E_NOMEM;
}

int br_cwait_keys(struct br_cwait *w, size_t i, const struct kp_str *keys, int32_t count)
{
    w->e[i].nkeys = count < 0 ? -1 : count;
    if (count <= 0) {
        return 0;
    }
    size_t bytes = (size_t)count * sizeof(struct kp_str);
    for (int32_t k = 0; k < count; k++) {
        bytes += keys[k].len > 0 ? (size_t)keys[k].len : 0;
    }
    struct kp_str *copy = kp_malloc(bytes);
    if (copy == NULL) {
        return KP_E_NOMEM;
    }
    char *text = (char *)(copy + count);
    for (int32_t k = 0; k < count; k++) {
        size_t len = keys[k].len > 0 ? (size_t)keys[k].len : 0;
        if (len > 0) {
            memcpy(text, keys[k].ptr, len);
        }
        copy[k] = (struct kp_str){text, (int32_t)len};
        text += len;
    }
    w->e[i].keys = copy;
    return 0;
}

static void cwait_free(struct br_cwait *w)
{
    struct br_server *b = w->b;
    for (struct br_cwait **pp = &b->ca.cwaits; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    /* operations still away finish without it */
    for (struct br_cop *op = b->ca.ops; op != NULL; op = op->next) {
        if (op->w == w) {
            op->w = NULL;
        }
    }
    if (b->net != NULL) {
        br_timer_cancel(b->net, &w->timer);
    }
    for (size_t i = 0; i < w->n; i++) {
        kp_free(w->e[i].name);
        kp_free(w->e[i].message);
        kp_free(w->e[i].keys);
        kp_free(w->e[i].topic_config);
    }
    kp_free(w->e);
    kp_free(w);
}

static struct kp_str str_of(const char *s)
{
    return s != NULL ? kp_str_c(s) : KP_STR_NULL;
}

/* The response of w's API from its entries, encoded into its slot. */
static void cwait_answer(struct br_cwait *w)
{
    size_t n = w->n;
    union {
        struct kp_DeleteTopicsResponse del;
        struct kp_CreatePartitionsResponse cp;
        struct kp_AlterConfigsResponse ac;
        struct kp_IncrementalAlterConfigsResponse iac;
        struct kp_InitProducerIdResponse pid;
        struct kp_DescribeConfigsResponse dc;
    } resp;
    memset(&resp, 0, sizeof resp);
    void *items = NULL;
    int rc = KP_E_NOMEM;
    struct kp_arena arena; /* DescribeConfigs: the configs' entries */
    kp_arena_init(&arena, (size_t)w->b->cfg.response_max_bytes);
    switch (w->api_key) {
    case KP_API_DESCRIBE_CONFIGS: {
        struct kp_DescribeConfigsResponse_DescribeConfigsResult *it = kp_calloc(n + 1, sizeof *it);
        items = it;
        rc = it != NULL ? 0 : KP_E_NOMEM;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const struct br_cwait_entry *e = &w->e[i];
            if (e->code != 0) {
                it[i].ErrorCode = e->code;
                it[i].ErrorMessage = str_of(e->message);
                it[i].ResourceType = e->type;
                it[i].ResourceName = str_of(e->name);
                continue;
            }
            rc = br_describe_config_resource(w->b, &arena, e->type, str_of(e->name), e->keys,
                                             e->nkeys, w->synonyms, e->topic_config, &it[i]);
        }
        resp.dc.Results.items = it;
        resp.dc.Results.count = (int32_t)n;
        break;
    }
    case KP_API_DELETE_TOPICS: {
        struct kp_DeleteTopicsResponse_DeletableTopicResult *it = kp_calloc(n + 1, sizeof *it);
        items = it;
        if (it != NULL) {
            for (size_t i = 0; i < n; i++) {
                it[i].Name = str_of(w->e[i].name);
                it[i].ErrorCode = w->e[i].code;
            }
            resp.del.Responses.items = it;
            resp.del.Responses.count = (int32_t)n;
            rc = 0;
        }
        break;
    }
    case KP_API_CREATE_PARTITIONS: {
        struct kp_CreatePartitionsResponse_CreatePartitionsTopicResult *it =
            kp_calloc(n + 1, sizeof *it);
        items = it;
        if (it != NULL) {
            for (size_t i = 0; i < n; i++) {
                it[i].Name = str_of(w->e[i].name);
                it[i].ErrorCode = w->e[i].code;
                it[i].ErrorMessage = w->e[i].code != 0 ? str_of(w->e[i].message) : KP_STR_NULL;
            }
            resp.cp.Results.items = it;
            resp.cp.Results.count = (int32_t)n;
            rc = 0;
        }
        break;
    }
    case KP_API_ALTER_CONFIGS: {
        struct kp_AlterConfigsResponse_AlterConfigsResourceResponse *it =
            kp_calloc(n + 1, sizeof *it);
        items = it;
        if (it != NULL) {
            for (size_t i = 0; i < n; i++) {
                it[i].ErrorCode = w->e[i].code;
                it[i].ErrorMessage = w->e[i].code != 0 ? str_of(w->e[i].message) : KP_STR_NULL;
                it[i].ResourceType = w->e[i].type;
                it[i].ResourceName = str_of(w->e[i].name);
            }
            resp.ac.Responses.items = it;
            resp.ac.Responses.count = (int32_t)n;
            rc = 0;
        }
        break;
    }
    case KP_API_INCREMENTAL_ALTER_CONFIGS: {
        struct kp_IncrementalAlterConfigsResponse_AlterConfigsResourceResponse *it =
            kp_calloc(n + 1, sizeof *it);
        items = it;
        if (it != NULL) {
            for (size_t i = 0; i < n; i++) {
                it[i].ErrorCode = w->e[i].code;
                it[i].ErrorMessage = w->e[i].code != 0 ? str_of(w->e[i].message) : KP_STR_NULL;
                it[i].ResourceType = w->e[i].type;
                it[i].ResourceName = str_of(w->e[i].name);
            }
            resp.iac.Responses.items = it;
            resp.iac.Responses.count = (int32_t)n;
            rc = 0;
        }
        break;
    }
    case KP_API_INIT_PRODUCER_ID:
        resp.pid.ErrorCode = n > 0 ? w->e[0].code : 0;
        resp.pid.ProducerId = resp.pid.ErrorCode == 0 ? w->producer_id : -1;
        resp.pid.ProducerEpoch = resp.pid.ErrorCode == 0 ? 0 : -1;
        rc = 0;
        break;
    default:
        rc = KP_E_INVALID_ARG;
        break;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    if (rc == 0) {
        struct kp_writer wr;
        kp_wr_init(&wr, (size_t)w->b->cfg.response_max_bytes);
        if (kp_response_encode(&wr, w->api_key, w->version, w->correlation_id, &resp) == 0) {
            buf = kp_wr_steal(&wr, &len);
        }
        kp_wr_free(&wr);
    }
    kp_free(items);
    kp_arena_free(&arena);
    if (buf == NULL || br_slot_add_mem(w->slot, buf, len) != 0) {
        br_error("answering a request (api %d) to %s failed: closing the connection",
                 (int)w->api_key, br_conn_peer(w->conn));
        br_conn_close_after_flush(w->conn);
    }
    br_slot_ready(w->conn, w->slot);
    cwait_free(w);
}

static bool all_done(const struct br_cwait *w)
{
    for (size_t i = 0; i < w->n; i++) {
        if (w->e[i].pending) {
            return false;
        }
    }
    return true;
}

static void maybe_answer(struct br_cwait *w)
{
    if (w->parked && all_done(w)) {
        cwait_answer(w);
    }
}

static void entry_set(struct br_cwait_entry *e, int code, const char *message)
{
    e->pending = false;
    e->code = (int16_t)kp_err_to_wire(code);
    kp_free(e->message);
    e->message = message != NULL && message[0] != '\0' ? copy_str(message, strlen(message)) : NULL;
}

void br_cwait_done(struct br_cwait *w, size_t i, int code, const char *message)
{
    if (i >= w->n || !w->e[i].pending) {
        return;
    }
    entry_set(&w->e[i], code, message);
    maybe_answer(w);
}

/* Whether entry e's condition holds now. */
static bool condition_met(const struct br_server *b, const struct br_cwait_entry *e)
{
    const char *name = e->name;
    const struct br_mc_topic *t = br_mc_topic(&b->mc, name, strlen(name));
    switch (e->until) {
    case BR_CWAIT_TOPIC_GONE:
        /* Kafka's DelayedDeleteTopics waits for the metadata cache to
         * forget the topic; here its znodes must be gone too (the marker
         * is deleted last), so that the name can be used again at once */
        return e->marker_gone && t == NULL;
    case BR_CWAIT_PARTITIONS_LED:
        /* DelayedCreatePartitions: every partition of the new assignment
         * has a leader in this broker's metadata cache */
        if (t == NULL || t->npartitions < e->count) {
            return false;
        }
        for (int32_t p = 0; p < e->count; p++) {
            if (!t->parts[p].present || t->parts[p].leader < 0) {
                return false;
            }
        }
        return true;
    case BR_CWAIT_NOTHING:
        return true;
    }
    return true;
}

void br_cwait_until(struct br_cwait *w, size_t i, enum br_cwait_until until)
{
    if (i >= w->n || !w->e[i].pending) {
        return;
    }
    w->e[i].until = until;
    if (condition_met(w->b, &w->e[i])) {
        br_cwait_done(w, i, 0, NULL);
    }
}

void br_cluster_metadata_changed(struct br_server *b)
{
    for (struct br_cwait *w = b->ca.cwaits; w != NULL;) {
        struct br_cwait *next = w->next;
        bool changed = false;
        for (size_t i = 0; i < w->n; i++) {
            struct br_cwait_entry *e = &w->e[i];
            if (e->pending && e->until != BR_CWAIT_NOTHING && condition_met(b, e)) {
                entry_set(e, 0, NULL);
                changed = true;
            }
        }
        if (changed) {
            maybe_answer(w); /* may free w */
        }
        w = next;
    }
}

int br_cwait_park(struct br_cwait *w, struct br_req *r, int32_t timeout_ms)
{
    w->conn = r->conn;
    w->slot = r->slot;
    if (r->slot == NULL) {
        cwait_free(w);
        return 0;
    }
    w->parked = true;
    br_slot_set_parked(r->slot, &w->park);
    if (all_done(w)) {
        cwait_answer(w);
        return 0;
    }
    if (timeout_ms > 0) {
        br_timer_arm(r->b->net, &w->timer, br_now_mono_ms() + timeout_ms);
    }
    return 0;
}

/* Entries not done by now: REQUEST_TIMED_OUT (their work goes on). */
static void time_out(struct br_cwait *w)
{
    for (size_t i = 0; i < w->n; i++) {
        if (w->e[i].pending) {
            entry_set(&w->e[i], KP_ERR_REQUEST_TIMED_OUT, NULL);
        }
    }
    cwait_answer(w);
}

static void cwait_timeout(void *ctx, struct br_timer *t)
{
    (void)ctx; /* the broker; the waiter is the timer's owner */
    time_out(t->owner);
}

static void cwait_park_cancel(struct br_server *b, void *parked)
{
    (void)b;
    cwait_free(parked);
}

void br_cluster_complete_waits(struct br_server *b)
{
    for (struct br_cwait *w = b->ca.cwaits; w != NULL;) {
        struct br_cwait *next = w->next;
        if (w->parked) {
            time_out(w);
        }
        w = next;
    }
}

/* ---------------------------------------------------------------- operations */

struct br_cop *br_cop_new(struct br_server *b, struct br_cwait *w, size_t index, const char *topic,
                          void (*done)(struct br_zk_call *, const struct br_zk_result *))
{
    struct br_cop *op = kp_calloc(1, sizeof *op);
    if (op == NULL) {
        return NULL;
    }
    op->call.done = done;
    op->b = b;
    op->w = w;
    op->index = index;
    (void)snprintf(op->topic, sizeof op->topic, "%s", topic != NULL ? topic : "");
    op->next = b->ca.ops;
    b->ca.ops = op;
    return op;
}

void br_cop_free(struct br_cop *op)
{
    for (struct br_cop **pp = &op->b->ca.ops; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == op) {
            *pp = op->next;
            break;
        }
    }
    kp_free(op->assignment);
    kp_free(op->assignment_first);
    kp_free(op->changes);
    kp_free(op->strings);
    kp_free(op->data);
    kp_free(op);
}

void br_cop_report(struct br_cop *op, int code, const char *message)
{
    struct br_cwait *w = op->w;
    op->w = NULL;
    if (w != NULL) {
        br_cwait_done(w, op->index, code, message);
    }
}

void br_cop_until(struct br_cop *op, enum br_cwait_until until, int32_t count)
{
    struct br_cwait *w = op->w;
    op->w = NULL;
    if (w != NULL && op->index < w->n) {
        w->e[op->index].count = count;
        br_cwait_until(w, op->index, until);
    }
}

bool br_cluster_zk_ready(const struct br_server *b)
{
    return b->zk != NULL && br_zk_state(b->zk) == BR_ZK_STATE_CONNECTED;
}

bool br_cluster_zk_alive(const struct br_server *b)
{
    if (b->zk == NULL) {
        return false;
    }
    enum br_zk_state st = br_zk_state(b->zk);
    return st == BR_ZK_STATE_CONNECTED || st == BR_ZK_STATE_DISCONNECTED;
}

/* ---------------------------------------------------------------- lifecycle */

int br_cluster_admin_start(struct br_server *b)
{
    b->ca.config_change_seen = -1;
    return br_worker_start(b->mailbox, b->in_process, "cluster", &b->ca.worker);
}

void br_cluster_admin_stop(struct br_server *b)
{
    br_cluster_complete_waits(b);
    br_cluster_broker_configs_free(b);
    if (b->ca.worker != NULL) {
        /* the removals queued run to their end; their messages free them */
        br_worker_stop(b->ca.worker);
        if (b->mailbox != NULL) {
            br_mailbox_deliver_all(b->mailbox, b);
        }
    }
}

void br_cluster_wait_free_all(struct br_server *b)
{
    br_cluster_broker_configs_free(b); /* again: a read may have ended since the stop */
    while (b->ca.cwaits != NULL) {
        cwait_free(b->ca.cwaits); /* answered at the drain; the connections are gone */
    }
    while (b->ca.ops != NULL) {
        br_cop_free(b->ca.ops);
    }
    br_worker_free(b->ca.worker);
    b->ca.worker = NULL;
}
