/*
 * Ops: synchronous requests a user thread hands to the I/O thread (admin
 * calls, watermarks, commits), and the serve functions that carry them out.
 *
 * Life of an op: the user thread queues it and waits on ev_cond; the I/O
 * thread serves it (sending requests, retrying on transport errors until its
 * deadline) and finishes it. A caller that gives up marks it abandoned and
 * the I/O thread frees it when it finishes (never while a request of it is
 * in flight, so a response never meets a freed op).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"

struct sc_op *sc_op_create(const struct sc_op_ops *ops, int kind, void *arg)
{
    struct sc_op *op = kp_calloc(1, sizeof(*op));
    if (op != NULL) {
        op->ops = ops;
        op->kind = kind;
        op->arg = arg;
    }
    return op;
}

static void md_arg_free(void *arg)
{
    struct sc_md_arg *a = arg;
    if (a == NULL) {
        return;
    }
    for (int i = 0; i < a->count; i++) {
        kp_free(a->topics[i]);
    }
    kp_free(a->topics);
    samsa_metadata_free(a->md);
    kp_free(a);
}

static void topic_arg_free(void *arg)
{
    struct sc_topic_arg *a = arg;
    if (a == NULL) {
        return;
    }
    kp_free(a->name);
    for (int i = 0; i < a->cfg_count; i++) {
        kp_free(a->cfg_names[i]);
        kp_free(a->cfg_values[i]);
    }
    kp_free(a->cfg_names);
    kp_free(a->cfg_values);
    kp_free(a);
}

static void lo_arg_free(void *arg)
{
    struct sc_lo_arg *a = arg;
    if (a != NULL) {
        kp_free(a->topic);
        kp_free(a);
    }
}

void sc_op_free(struct sc_op *op)
{
    if (op == NULL) {
        return;
    }
    if (op->ops->free_arg != NULL) {
        op->ops->free_arg(op->arg);
    }
    kp_free(op);
}

void sc_op_finish(struct sc_client *c, struct sc_op *op, int err)
{
    struct sc_op **at = &c->ops;
    struct sc_op *prev = NULL;
    while (*at != NULL && *at != op) {
        prev = *at;
        at = &(*at)->next;
    }
    if (*at == op) {
        *at = op->next;
        if (c->ops_tail == op) {
            c->ops_tail = prev;
        }
    }
    op->next = NULL;
    op->err = err;
    op->done = true;
    op->sent = false;
    if (op->abandoned) {
        sc_op_free(op);
        return;
    }
    pthread_cond_broadcast(&c->ev_cond);
}

int sc_op_run(struct sc_client *c, struct sc_op **opp, int timeout_ms, char *errstr,
              size_t errstr_size)
{
    struct sc_op *op = *opp;
    int64_t now = sc_now_ms();
    op->deadline = timeout_ms < 0 ? INT64_MAX : now + timeout_ms;
    pthread_mutex_lock(&c->lock);
    if (c->terminate || c->closing) {
        pthread_mutex_unlock(&c->lock);
        return SAMSA_ERR_DESTROYED;
    }
    if (c->ops_tail != NULL) {
        c->ops_tail->next = op;
    } else {
        c->ops = op;
    }
    c->ops_tail = op;
    pthread_mutex_unlock(&c->lock);
    sc_wake(c);
    pthread_mutex_lock(&c->lock);
    /* The I/O thread finishes the op at its deadline; wait a little longer
     * so that it can. */
    int64_t give_up = op->deadline == INT64_MAX ? INT64_MAX : op->deadline + 1000;
    while (!op->done && !c->closing && (give_up == INT64_MAX || sc_now_ms() < give_up)) {
        sc_wait_cond(c, give_up);
    }
    int err;
    if (op->done) {
        err = sc_err_public(op->err);
        if (err != SAMSA_OK) {
            sc_errf(errstr, errstr_size, "%s",
                    op->errstr[0] != '\0' ? op->errstr : samsa_err_str(err));
        }
    } else {
        op->abandoned = true;
        *opp = NULL;
        err = c->closing ? SAMSA_ERR_DESTROYED : SAMSA_ERR_TIMED_OUT;
        if (c->closing) {
            sc_errf(errstr, errstr_size, "the handle was closed while the call waited");
        } else {
            sc_errf(errstr, errstr_size, "timed out after %d ms", timeout_ms);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

/* -------------------------------------------------------------- metadata */

samsa_metadata *sc_metadata_copy(const struct kp_MetadataResponse *r)
{
    samsa_metadata *md = kp_calloc(1, sizeof(*md));
    if (md == NULL) {
        return NULL;
    }
    md->controller_id = r->ControllerId;
    if (r->ClusterId.len >= 0) {
        md->cluster_id = sc_strndup(r->ClusterId.ptr, (size_t)r->ClusterId.len);
        if (md->cluster_id == NULL) {
            goto out_nomem;
        }
    }
    if (r->Brokers.count > 0) {
        struct samsa_broker_info *b = kp_calloc((size_t)r->Brokers.count, sizeof(*b));
        if (b == NULL) {
            goto out_nomem;
        }
        md->brokers = b;
        for (int32_t i = 0; i < r->Brokers.count; i++) {
            const struct kp_MetadataResponse_MetadataResponseBroker *s = &r->Brokers.items[i];
            b[i].id = s->NodeId;
            b[i].port = s->Port;
            b[i].host = sc_strndup(s->Host.ptr != NULL ? s->Host.ptr : "",
                                   (size_t)(s->Host.len > 0 ? s->Host.len : 0));
            md->broker_count++;
            if (b[i].host == NULL) {
                goto out_nomem;
            }
            if (s->Rack.len >= 0) {
                b[i].rack = sc_strndup(s->Rack.ptr, (size_t)s->Rack.len);
                if (b[i].rack == NULL) {
                    goto out_nomem;
                }
            }
        }
    }
    if (r->Topics.count > 0) {
        struct samsa_topic_info *t = kp_calloc((size_t)r->Topics.count, sizeof(*t));
        if (t == NULL) {
            goto out_nomem;
        }
        md->topics = t;
        for (int32_t i = 0; i < r->Topics.count; i++) {
            const struct kp_MetadataResponse_MetadataResponseTopic *s = &r->Topics.items[i];
            md->topic_count++;
            t[i].name = sc_strndup(s->Name.ptr != NULL ? s->Name.ptr : "",
                                   (size_t)(s->Name.len > 0 ? s->Name.len : 0));
            if (t[i].name == NULL) {
                goto out_nomem;
            }
            t[i].err = sc_err_public(sc_err_from_wire(s->ErrorCode));
            t[i].internal = s->IsInternal;
            if (s->Partitions.count <= 0) {
                continue;
            }
            struct samsa_partition_info *p = kp_calloc((size_t)s->Partitions.count, sizeof(*p));
            if (p == NULL) {
                goto out_nomem;
            }
            t[i].partitions = p;
            for (int32_t j = 0; j < s->Partitions.count; j++) {
                const struct kp_MetadataResponse_MetadataResponsePartition *sp =
                    &s->Partitions.items[j];
                t[i].partition_count++;
                p[j].id = sp->PartitionIndex;
                p[j].err = sc_err_public(sc_err_from_wire(sp->ErrorCode));
                p[j].leader = sp->LeaderId;
                if (sp->ReplicaNodes.count > 0) {
                    int32_t *rep = kp_calloc((size_t)sp->ReplicaNodes.count, sizeof(*rep));
                    if (rep == NULL) {
                        goto out_nomem;
                    }
                    memcpy(rep, sp->ReplicaNodes.items,
                           (size_t)sp->ReplicaNodes.count * sizeof(*rep));
                    p[j].replicas = rep;
                    p[j].replica_count = (size_t)sp->ReplicaNodes.count;
                }
                if (sp->IsrNodes.count > 0) {
                    int32_t *isr = kp_calloc((size_t)sp->IsrNodes.count, sizeof(*isr));
                    if (isr == NULL) {
                        goto out_nomem;
                    }
                    memcpy(isr, sp->IsrNodes.items, (size_t)sp->IsrNodes.count * sizeof(*isr));
                    p[j].isrs = isr;
                    p[j].isr_count = (size_t)sp->IsrNodes.count;
                }
            }
        }
    }
    return md;
out_nomem:
    samsa_metadata_free(md);
    return NULL;
}

void samsa_metadata_free(samsa_metadata *md)
{
    if (md == NULL) {
        return;
    }
    kp_free((void *)(uintptr_t)md->cluster_id);
    for (size_t i = 0; i < md->broker_count; i++) {
        kp_free((void *)(uintptr_t)md->brokers[i].host);
        kp_free((void *)(uintptr_t)md->brokers[i].rack);
    }
    kp_free((void *)(uintptr_t)md->brokers);
    for (size_t i = 0; i < md->topic_count; i++) {
        const struct samsa_topic_info *t = &md->topics[i];
        for (size_t j = 0; j < t->partition_count; j++) {
            kp_free((void *)(uintptr_t)t->partitions[j].replicas);
            kp_free((void *)(uintptr_t)t->partitions[j].isrs);
        }
        kp_free((void *)(uintptr_t)t->partitions);
        kp_free((void *)(uintptr_t)t->name);
    }
    kp_free((void *)(uintptr_t)md->topics);
    kp_free(md);
}

int64_t sc_op_retry(struct sc_client *c, struct sc_op *op, int err, int64_t now)
{
    op->sent = false;
    if (now >= op->deadline) {
        sc_op_finish(c, op, err == SAMSA_OK ? SAMSA_ERR_TIMED_OUT : err);
        return INT64_MAX;
    }
    op->retry_at = now + c->v->retry_backoff_ms;
    return op->retry_at;
}

bool sc_op_node_failed(struct sc_client *c, struct sc_op *op, int32_t id, int64_t now,
                       int64_t *wake)
{
    if (!sc_conn_failed(c, sc_conn_get(c, id))) {
        return false;
    }
    op->stage = 0;
    *wake = sc_op_retry(c, op, SAMSA_ERR_TRANSPORT, now);
    return true;
}

static void on_md_op(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (err != 0) {
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return;
    }
    struct sc_md_arg *a = op->arg;
    samsa_metadata_free(a->md);
    a->md = sc_metadata_copy(body);
    sc_op_finish(c, op, a->md != NULL ? SAMSA_OK : SAMSA_ERR_NOMEM);
}

int sc_send_find_coordinator(struct sc_client *c, struct sc_conn *conn, const char *key,
                             int8_t key_type, sc_resp_fn *fn, void *ctx)
{
    /* key types came with v1 (KIP-98) */
    int16_t ver = sc_conn_version(conn, KP_API_FIND_COORDINATOR, key_type != 0 ? 1 : 0, 2);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_FindCoordinatorRequest req;
    kp_FindCoordinatorRequest_init(&req);
    req.Key = kp_str_c(key);
    req.KeyType = key_type;
    return sc_conn_send(c, conn, KP_API_FIND_COORDINATOR, ver, &req, fn, ctx);
}

int sc_send_metadata(struct sc_client *c, struct sc_conn *conn, char *const *names, int n,
                         sc_resp_fn *fn, void *ctx)
{
    int16_t ver = sc_conn_version(conn, KP_API_METADATA, 1, 6);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    if (names == NULL) {
        req.Topics.items = NULL;
        req.Topics.count = -1; /* v1+: null = all topics */
    } else {
        struct kp_MetadataRequest_MetadataRequestTopic *t =
            kp_arena_alloc(&c->arena, sizeof(*t) * (size_t)(n > 0 ? n : 1));
        if (t == NULL) {
            return SAMSA_ERR_NOMEM;
        }
        for (int i = 0; i < n; i++) {
            t[i].Name = kp_str_c(names[i]);
        }
        req.Topics.items = t;
        req.Topics.count = n;
    }
    req.AllowAutoTopicCreation = false;
    int err = sc_conn_send(c, conn, KP_API_METADATA, ver, &req, fn, ctx);
    kp_arena_reset(&c->arena);
    return err;
}

static int64_t serve_metadata(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_md_arg *a = op->arg;
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        return now + 50;
    }
    int err = sc_send_metadata(c, conn, a->topics, a->count, on_md_op, op);
    if (err == SAMSA_ERR_UNSUPPORTED || err == SAMSA_ERR_NOMEM) {
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
    op->sent = err == SAMSA_OK;
    return INT64_MAX;
}

/* --------------------------------------------------- create/delete topic */

static void on_create(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (err != 0) {
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return;
    }
    const struct kp_CreateTopicsResponse *r = body;
    int res = SAMSA_ERR_BAD_RESPONSE;
    if (r->Topics.count >= 1) {
        const struct kp_CreateTopicsResponse_CreatableTopicResult *t = &r->Topics.items[0];
        res = sc_err_from_wire(t->ErrorCode);
        if (res == KP_ERR_NOT_CONTROLLER) {
            sc_metadata_want(c);
            op->stage = 0;
            (void)sc_op_retry(c, op, res, sc_now_ms());
            return;
        }
        if (res != 0) {
            if (t->ErrorMessage.len > 0) {
                sc_errf(op->errstr, sizeof(op->errstr), "%s: %.*s", samsa_err_name(res),
                        (int)t->ErrorMessage.len, t->ErrorMessage.ptr);
            } else {
                sc_errf(op->errstr, sizeof(op->errstr), "%s", samsa_err_str(res));
            }
        }
    }
    sc_op_finish(c, op, res);
}

static void on_delete(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (err != 0) {
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return;
    }
    const struct kp_DeleteTopicsResponse *r = body;
    int res = SAMSA_ERR_BAD_RESPONSE;
    if (r->Responses.count >= 1) {
        res = sc_err_from_wire(r->Responses.items[0].ErrorCode);
        if (res == KP_ERR_NOT_CONTROLLER) {
            op->stage = 0;
            (void)sc_op_retry(c, op, res, sc_now_ms());
            return;
        }
        if (res != 0) {
            sc_errf(op->errstr, sizeof(op->errstr), "%s", samsa_err_str(res));
        }
    }
    sc_op_finish(c, op, res);
}

/* Stage 0: learn the controller (Metadata, no topics); stage 1: send. */
static void on_controller(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                          void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (err != 0) {
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return;
    }
    sc_record_brokers(c, body);
    op->sent = false;
    op->stage = 1;
}

static int64_t serve_topic(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_topic_arg *a = op->arg;
    if (op->stage == 0) {
        struct sc_conn *conn = sc_conn_any_up(c);
        if (conn == NULL) {
            return now + 50;
        }
        int err = sc_send_metadata(c, conn, NULL, 0, on_controller, op);
        op->sent = err == SAMSA_OK;
        return INT64_MAX;
    }
    int64_t wake;
    if (c->controller_id >= 0 && sc_op_node_failed(c, op, c->controller_id, now, &wake)) {
        return wake;
    }
    struct sc_conn *conn = c->controller_id >= 0 ? sc_conn_get(c, c->controller_id) : NULL;
    if (conn == NULL) {
        conn = sc_conn_any_up(c);
    }
    if (!sc_conn_is_up(conn)) {
        return now + 50;
    }
    int err;
    if (op->kind == SC_OP_CREATE_TOPIC) {
        int16_t ver = sc_conn_version(conn, KP_API_CREATE_TOPICS, 0, 4);
        if (ver < 0) {
            sc_op_finish(c, op, SAMSA_ERR_UNSUPPORTED);
            return INT64_MAX;
        }
        if (ver < 4 && (a->partitions < 0 || a->replication_factor < 0)) {
            /* Before v4 the broker's defaults cannot be asked for. */
            if (a->partitions < 0) {
                a->partitions = 1;
            }
            if (a->replication_factor < 0) {
                a->replication_factor = 1;
            }
        }
        struct kp_CreateTopicsRequest req;
        kp_CreateTopicsRequest_init(&req);
        struct kp_CreateTopicsRequest_CreatableTopic t;
        memset(&t, 0, sizeof(t));
        t.Name = kp_str_c(a->name);
        t.NumPartitions = a->partitions;
        t.ReplicationFactor = a->replication_factor;
        t.Assignments.count = 0;
        struct kp_CreateTopicsRequest_CreateableTopicConfig cfg[64];
        int nc = a->cfg_count < 64 ? a->cfg_count : 64;
        for (int i = 0; i < nc; i++) {
            cfg[i].Name = kp_str_c(a->cfg_names[i]);
            cfg[i].Value = kp_str_c(a->cfg_values[i]);
        }
        t.Configs.items = cfg;
        t.Configs.count = nc;
        req.Topics.items = &t;
        req.Topics.count = 1;
        int64_t left = op->deadline == INT64_MAX ? 30000 : op->deadline - now;
        req.TimeoutMs = (int32_t)(left > 60000 ? 60000 : (left < 1 ? 1 : left));
        req.ValidateOnly = false;
        err = sc_conn_send(c, conn, KP_API_CREATE_TOPICS, ver, &req, on_create, op);
    } else {
        int16_t ver = sc_conn_version(conn, KP_API_DELETE_TOPICS, 0, 3);
        if (ver < 0) {
            sc_op_finish(c, op, SAMSA_ERR_UNSUPPORTED);
            return INT64_MAX;
        }
        struct kp_DeleteTopicsRequest req;
        kp_DeleteTopicsRequest_init(&req);
        struct kp_str name = kp_str_c(a->name);
        req.TopicNames.items = &name;
        req.TopicNames.count = 1;
        int64_t left = op->deadline == INT64_MAX ? 30000 : op->deadline - now;
        req.TimeoutMs = (int32_t)(left > 60000 ? 60000 : (left < 1 ? 1 : left));
        err = sc_conn_send(c, conn, KP_API_DELETE_TOPICS, ver, &req, on_delete, op);
    }
    op->sent = err == SAMSA_OK;
    return INT64_MAX;
}

/* ----------------------------------------------------------- ListOffsets */

static void on_lo_md(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    struct sc_op *op = ctx;
    struct sc_lo_arg *a = op->arg;
    if (err != 0) {
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return;
    }
    (void)conn;
    const struct kp_MetadataResponse *md = body;
    sc_record_brokers(c, md);
    op->sent = false;
    op->stage = 1;
    a->leader = -1;
    int res = SAMSA_ERR_UNKNOWN_TOPIC;
    for (int32_t i = 0; i < md->Topics.count; i++) {
        const struct kp_MetadataResponse_MetadataResponseTopic *t = &md->Topics.items[i];
        if (!kp_str_eq_c(t->Name, a->topic)) {
            continue;
        }
        res = t->ErrorCode != 0 ? sc_err_from_wire(t->ErrorCode) : SAMSA_ERR_UNKNOWN_PARTITION;
        for (int32_t j = 0; j < t->Partitions.count; j++) {
            if (t->Partitions.items[j].PartitionIndex == a->partition) {
                a->leader = t->Partitions.items[j].LeaderId;
                res = SAMSA_OK;
            }
        }
    }
    if (res != SAMSA_OK) {
        sc_op_finish(c, op, res);
        return;
    }
    if (a->leader < 0) {
        op->stage = 0;
        (void)sc_op_retry(c, op, KP_ERR_LEADER_NOT_AVAILABLE, sc_now_ms());
    }
}

static void on_lo(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct sc_lo_arg *a = op->arg;
    if (err != 0) {
        op->stage = 0;
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return;
    }
    const struct kp_ListOffsetsResponse *r = body;
    int res = SAMSA_ERR_BAD_RESPONSE;
    int64_t off = -1;
    for (int32_t i = 0; i < r->Topics.count; i++) {
        for (int32_t j = 0; j < r->Topics.items[i].Partitions.count; j++) {
            const struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *p =
                &r->Topics.items[i].Partitions.items[j];
            if (p->PartitionIndex == a->partition) {
                res = sc_err_from_wire(p->ErrorCode);
                off = p->Offset;
            }
        }
    }
    if (res == KP_ERR_NOT_LEADER_OR_FOLLOWER || res == KP_ERR_LEADER_NOT_AVAILABLE ||
        res == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
        op->stage = 0;
        (void)sc_op_retry(c, op, res, sc_now_ms());
        return;
    }
    if (res != SAMSA_OK) {
        sc_op_finish(c, op, res);
        return;
    }
    op->sent = false;
    if (!a->watermarks) {
        a->offset = off;
        sc_op_finish(c, op, SAMSA_OK);
    } else if (op->stage == 1) {
        a->low = off;
        op->stage = 2;
    } else {
        a->high = off;
        sc_op_finish(c, op, SAMSA_OK);
    }
}

static int64_t serve_list_offsets(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_lo_arg *a = op->arg;
    if (op->stage == 0) {
        struct sc_conn *conn = sc_conn_any_up(c);
        if (conn == NULL) {
            return now + 50;
        }
        char *names[1] = {a->topic};
        int err = sc_send_metadata(c, conn, names, 1, on_lo_md, op);
        op->sent = err == SAMSA_OK;
        return INT64_MAX;
    }
    int64_t wake;
    if (sc_op_node_failed(c, op, a->leader, now, &wake)) {
        return wake;
    }
    struct sc_conn *conn = sc_conn_get(c, a->leader);
    if (conn == NULL) {
        op->stage = 0;
        return now + 50;
    }
    if (!sc_conn_is_up(conn)) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_LIST_OFFSETS, 1, 3);
    if (ver < 0) {
        sc_op_finish(c, op, SAMSA_ERR_UNSUPPORTED);
        return INT64_MAX;
    }
    struct kp_ListOffsetsRequest req;
    kp_ListOffsetsRequest_init(&req);
    struct kp_ListOffsetsRequest_ListOffsetsPartition p;
    memset(&p, 0, sizeof(p));
    p.PartitionIndex = a->partition;
    p.Timestamp = a->watermarks ? (op->stage == 1 ? -2 : -1) : a->timestamp;
    p.MaxNumOffsets = 1;
    struct kp_ListOffsetsRequest_ListOffsetsTopic t;
    t.Name = kp_str_c(a->topic);
    t.Partitions.items = &p;
    t.Partitions.count = 1;
    req.ReplicaId = -1;
    req.IsolationLevel = (int8_t)c->v->isolation_level;
    req.Topics.items = &t;
    req.Topics.count = 1;
    int err = sc_conn_send(c, conn, KP_API_LIST_OFFSETS, ver, &req, on_lo, op);
    op->sent = err == SAMSA_OK;
    return INT64_MAX;
}

/* ----------------------------------------------------------------- serve */

const struct sc_op_ops sc_metadata_op = {serve_metadata, md_arg_free};
const struct sc_op_ops sc_topic_op = {serve_topic, topic_arg_free};
const struct sc_op_ops sc_list_offsets_op = {serve_list_offsets, lo_arg_free};

int64_t sc_ops_serve(struct sc_client *c, int64_t now)
{
    int64_t next = INT64_MAX;
    struct sc_op *op = c->ops;
    while (op != NULL) {
        struct sc_op *following = op->next; /* serve may finish (unlink) op */
        if (op->sent) {
            op = following;
            continue;
        }
        if (c->auth_err != 0) {
            /* TLS or SASL refused us: no broker will answer (sc_auth_failed) */
            snprintf(op->errstr, sizeof(op->errstr), "%s", c->auth_reason);
            sc_op_finish(c, op, c->auth_err);
        } else if (now >= op->deadline) {
            /* An abandoned op (an asynchronous one, or one its caller gave
             * up on) is still carried out until its deadline. */
            sc_op_finish(c, op, SAMSA_ERR_TIMED_OUT);
        } else if (op->retry_at > now) {
            next = sc_min64(next, op->retry_at);
        } else {
            /* serve may finish op, which frees an abandoned one: nothing
             * of op is read after it. */
            int64_t deadline = op->deadline;
            int64_t want = op->ops->serve(c, op, now);
            next = sc_min64(next, want);
            next = sc_min64(next, deadline);
        }
        op = following;
    }
    return next;
}
