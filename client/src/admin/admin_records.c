/*
 * The admin calls on a topic's partitions and records: CreatePartitions on
 * the controller, DeleteRecords on each partition's leader (admin_ops.c
 * tells the stages every admin op goes through).
 */
#include <string.h>

#include "admin/admin_ops.h"

static void on_create_partitions(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                 void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_CreatePartitionsResponse *r = body;
    if (r->Results.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    int e = sc_err_from_wire(r->Results.items[0].ErrorCode);
    sc_admin_message_into(op, e, r->Results.items[0].ErrorMessage);
    sc_admin_answered(c, op, e);
}

static int64_t serve_create_partitions(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    if (op->stage == 0) {
        return sc_admin_discover_md(c, op, now);
    }
    int64_t wake;
    if (c->controller_id >= 0 && sc_op_node_failed(c, op, c->controller_id, now, &wake)) {
        return wake;
    }
    struct sc_conn *conn = c->controller_id >= 0 ? sc_admin_up_node(c, c->controller_id) : NULL;
    if (conn == NULL) {
        conn = sc_conn_any_up(c);
    }
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_CREATE_PARTITIONS, 0, 1);
    if (ver < 0) {
        (void)sc_admin_unsupported(c, op, "CreatePartitions", KP_API_CREATE_PARTITIONS, conn);
        return INT64_MAX;
    }
    struct kp_CreatePartitionsRequest_CreatePartitionsTopic t;
    memset(&t, 0, sizeof(t));
    t.Name = kp_str_c(a->name);
    t.Count = a->total;
    t.Assignments.items = NULL;
    t.Assignments.count = -1; /* null: the controller places them */
    struct kp_CreatePartitionsRequest req;
    kp_CreatePartitionsRequest_init(&req);
    req.Topics.items = &t;
    req.Topics.count = 1;
    int64_t left = op->deadline == INT64_MAX ? 30000 : op->deadline - now;
    req.TimeoutMs = (int32_t)(left > 60000 ? 60000 : (left < 1 ? 1 : left));
    req.ValidateOnly = false;
    op->sent = sc_conn_send(c, conn, KP_API_CREATE_PARTITIONS, ver, &req, on_create_partitions,
                            op) == SAMSA_OK;
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

/* -------------------------------------------------------- DeleteRecords */

static void on_delete_records(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                              void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct sc_admin_arg *a = op->arg;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_DeleteRecordsResponse *r = body;
    struct samsa_partition *p = &a->parts[a->next];
    int e = SAMSA_ERR_BAD_RESPONSE;
    int64_t low = -1;
    for (int32_t i = 0; i < r->Topics.count; i++) {
        if (!kp_str_eq_c(r->Topics.items[i].Name, p->topic)) {
            continue;
        }
        for (int32_t j = 0; j < r->Topics.items[i].Partitions.count; j++) {
            const struct kp_DeleteRecordsResponse_DeleteRecordsPartitionResult *pr =
                &r->Topics.items[i].Partitions.items[j];
            if (pr->PartitionIndex == p->partition) {
                e = sc_err_from_wire(pr->ErrorCode);
                low = pr->LowWatermark;
            }
        }
    }
    if (e != SAMSA_OK && sc_admin_moved(e) && sc_now_ms() < op->deadline) {
        op->stage = 0; /* a new leader: the same partition again */
        (void)sc_op_retry(c, op, e, sc_now_ms());
        return;
    }
    if (e != SAMSA_OK && a->first_err == SAMSA_OK) {
        a->first_err = e;
        sc_errf(op->errstr, sizeof(op->errstr), "%s [%d]: %s", p->topic, p->partition,
                samsa_err_str(e));
    }
    p->offset = e == SAMSA_OK ? low : -1;
    a->next++;
    op->sent = false;
    if (a->next >= a->part_count) {
        sc_op_finish(c, op, a->first_err);
    }
}

static int64_t serve_delete_records(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    if (a->next >= a->part_count) {
        sc_op_finish(c, op, a->first_err);
        return INT64_MAX;
    }
    if (op->stage == 0) {
        return sc_admin_discover_md(c, op, now);
    }
    struct samsa_partition *p = &a->parts[a->next];
    if (a->leaders[a->next] < 0) {
        /* No such partition (or no leader): this one fails, on to the next. */
        if (a->first_err == SAMSA_OK) {
            a->first_err = SAMSA_ERR_UNKNOWN_PARTITION;
            sc_errf(op->errstr, sizeof(op->errstr), "%s [%d]: %s", p->topic, p->partition,
                    samsa_err_str(SAMSA_ERR_UNKNOWN_PARTITION));
        }
        p->offset = -1;
        a->next++;
        return now;
    }
    int64_t wake;
    if (sc_op_node_failed(c, op, a->leaders[a->next], now, &wake)) {
        return wake;
    }
    struct sc_conn *conn = sc_admin_up_node(c, a->leaders[a->next]);
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_DELETE_RECORDS, 0, 1);
    if (ver < 0) {
        (void)sc_admin_unsupported(c, op, "DeleteRecords", KP_API_DELETE_RECORDS, conn);
        return INT64_MAX;
    }
    struct kp_DeleteRecordsRequest_DeleteRecordsPartition dp = {
        .PartitionIndex = p->partition,
        .Offset = p->offset >= 0 ? p->offset : -1, /* -1: up to the high watermark */
    };
    struct kp_DeleteRecordsRequest_DeleteRecordsTopic dt;
    dt.Name = kp_str_c(p->topic);
    dt.Partitions.items = &dp;
    dt.Partitions.count = 1;
    struct kp_DeleteRecordsRequest req;
    kp_DeleteRecordsRequest_init(&req);
    req.Topics.items = &dt;
    req.Topics.count = 1;
    int64_t left = op->deadline == INT64_MAX ? 30000 : op->deadline - now;
    req.TimeoutMs = (int32_t)(left > 60000 ? 60000 : (left < 1 ? 1 : left));
    op->sent =
        sc_conn_send(c, conn, KP_API_DELETE_RECORDS, ver, &req, on_delete_records, op) == SAMSA_OK;
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

const struct sc_op_ops sc_create_partitions_op = {serve_create_partitions, sc_admin_arg_free};
const struct sc_op_ops sc_delete_records_op = {serve_delete_records, sc_admin_arg_free};
