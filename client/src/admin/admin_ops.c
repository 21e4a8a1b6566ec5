/*
 * The admin ops beyond topics: configs (admin_configs.c: DescribeConfigs,
 * IncrementalAlterConfigs or AlterConfigs), partitions and records
 * (admin_records.c: CreatePartitions, DeleteRecords), and groups
 * (admin_groups.c: ListGroups on every broker, DescribeGroups, OffsetFetch
 * of a whole group, OffsetCommit as a tool, DeleteGroups on the
 * coordinator). Each is an op (core/ops.c) with a struct sc_admin_arg and
 * its family's const struct sc_op_ops; op->stage says how far it got:
 *
 *   stage 0  discovery: Metadata (brokers, controller, leaders) or
 *            FindCoordinator for a group
 *   stage 1+ the request itself (some have a second one)
 *
 * A response that says the node was the wrong one (NOT_CONTROLLER,
 * NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER, ...) sends the op back to stage 0
 * after retry.backoff.ms, until its deadline. Handlers copy what they keep
 * out of the response (it lives in the client's arena) and send nothing.
 *
 * This file: what they share (discovery, answers, the argument and the
 * results freed), declared in admin/admin_ops.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_ops.h"

char *sc_admin_dup_str(struct kp_str s)
{
    return sc_strndup(s.ptr != NULL ? s.ptr : "", (size_t)(s.len > 0 ? s.len : 0));
}

/* A copy of a nullable s into *out (NULL for null); false when out of memory. */
bool sc_admin_dup_nullable(struct kp_str s, char **out)
{
    *out = NULL;
    if (s.len < 0 || s.ptr == NULL) {
        return true;
    }
    *out = sc_strndup(s.ptr, (size_t)s.len);
    return *out != NULL;
}

void sc_admin_free_strs(char **v, int n)
{
    for (int i = 0; v != NULL && i < n; i++) {
        kp_free(v[i]);
    }
    kp_free(v);
}

void samsa_configs_free(samsa_configs *cf)
{
    if (cf == NULL) {
        return;
    }
    for (size_t i = 0; i < cf->count; i++) {
        kp_free((void *)(uintptr_t)cf->entries[i].name);
        kp_free((void *)(uintptr_t)cf->entries[i].value);
    }
    kp_free((void *)(uintptr_t)cf->entries);
    kp_free(cf);
}

void samsa_group_list_free(samsa_group_list *l)
{
    if (l == NULL) {
        return;
    }
    for (size_t i = 0; i < l->count; i++) {
        kp_free((void *)(uintptr_t)l->groups[i].group_id);
        kp_free((void *)(uintptr_t)l->groups[i].protocol_type);
    }
    kp_free((void *)(uintptr_t)l->groups);
    for (size_t i = 0; i < l->error_count; i++) {
        kp_free((void *)(uintptr_t)l->errors[i].host);
        kp_free((void *)(uintptr_t)l->errors[i].reason);
    }
    kp_free((void *)(uintptr_t)l->errors);
    kp_free(l);
}

void samsa_group_description_free(samsa_group_description *d)
{
    if (d == NULL) {
        return;
    }
    for (size_t i = 0; d->members != NULL && i < d->member_count; i++) {
        const struct samsa_group_member *m = &d->members[i];
        kp_free((void *)(uintptr_t)m->member_id);
        kp_free((void *)(uintptr_t)m->instance_id);
        kp_free((void *)(uintptr_t)m->client_id);
        kp_free((void *)(uintptr_t)m->client_host);
        samsa_partitions_free((struct samsa_partition *)(uintptr_t)m->assignment,
                              m->assignment_count);
    }
    kp_free((void *)(uintptr_t)d->members);
    kp_free((void *)(uintptr_t)d->group_id);
    kp_free((void *)(uintptr_t)d->state);
    kp_free((void *)(uintptr_t)d->protocol_type);
    kp_free((void *)(uintptr_t)d->protocol);
    kp_free(d);
}

void sc_admin_arg_free(void *arg)
{
    struct sc_admin_arg *a = arg;
    if (a == NULL) {
        return;
    }
    kp_free(a->name);
    sc_admin_free_strs(a->cfg_names, a->cfg_count);
    sc_admin_free_strs(a->cfg_values, a->cfg_count);
    sc_admin_free_strs(a->cur_names, a->cur_count);
    sc_admin_free_strs(a->cur_values, a->cur_count);
    samsa_partitions_free(a->parts, a->part_count);
    kp_free(a->leaders);
    kp_free(a->nodes);
    samsa_configs_free(a->configs);
    samsa_group_list_free(a->groups);
    samsa_group_description_free(a->desc);
    samsa_partitions_free(a->out, a->out_count);
    kp_free(a);
}

struct sc_conn *sc_admin_up_node(struct sc_client *c, int32_t id)
{
    struct sc_conn *conn = sc_conn_get(c, id);
    return sc_conn_is_up(conn) ? conn : NULL;
}

/* Kafka errors that mean "ask another node" (or the same one later). */
bool sc_admin_moved(int err)
{
    return err == KP_ERR_NOT_CONTROLLER || err == KP_ERR_NOT_COORDINATOR ||
           err == KP_ERR_COORDINATOR_NOT_AVAILABLE || err == KP_ERR_COORDINATOR_LOAD_IN_PROGRESS ||
           err == KP_ERR_NOT_LEADER_OR_FOLLOWER || err == KP_ERR_LEADER_NOT_AVAILABLE ||
           err == KP_ERR_REQUEST_TIMED_OUT;
}

/* A response with a Kafka error: back to discovery, or finished. */
void sc_admin_answered(struct sc_client *c, struct sc_op *op, int err)
{
    if (err != SAMSA_OK && sc_admin_moved(err) && sc_now_ms() < op->deadline) {
        op->stage = 0;
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return;
    }
    if (err != SAMSA_OK && op->errstr[0] == '\0') {
        sc_errf(op->errstr, sizeof(op->errstr), "%s", samsa_err_str(err));
    }
    sc_op_finish(c, op, err);
}

/* A transport failure: discovery again after a backoff. A response that
 * does not decode would not decode the next time either: finished. */
bool sc_admin_transport_failed(struct sc_client *c, struct sc_op *op, int err)
{
    if (err == 0) {
        return false;
    }
    if (err == SAMSA_ERR_BAD_RESPONSE) {
        sc_errf(op->errstr, sizeof(op->errstr),
                "BAD_RESPONSE: the broker's answer does not decode (see debug=all)");
        sc_op_finish(c, op, err);
        return true;
    }
    op->stage = 0;
    (void)sc_op_retry(c, op, err, sc_now_ms());
    return true;
}

void sc_admin_message_into(struct sc_op *op, int err, struct kp_str msg)
{
    if (err != SAMSA_OK && msg.len > 0 && msg.ptr != NULL) {
        sc_errf(op->errstr, sizeof(op->errstr), "%s: %.*s", samsa_err_name(err), (int)msg.len,
                msg.ptr);
    }
}

/* Stage 0 by Metadata: the brokers and the controller, and the leaders of
 * the parts' topics for DeleteRecords. */
static void on_discover_md(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                           void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct sc_admin_arg *a = op->arg;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_MetadataResponse *md = body;
    sc_record_brokers(c, md);
    kp_free(a->nodes);
    a->nodes = kp_calloc((size_t)(md->Brokers.count > 0 ? md->Brokers.count : 1), sizeof(int32_t));
    a->node_count = 0;
    if (a->nodes == NULL) {
        sc_op_finish(c, op, SAMSA_ERR_NOMEM);
        return;
    }
    for (int32_t i = 0; i < md->Brokers.count; i++) {
        a->nodes[a->node_count++] = md->Brokers.items[i].NodeId;
    }
    for (size_t i = 0; a->leaders != NULL && i < a->part_count; i++) {
        a->leaders[i] = -1;
        for (int32_t t = 0; t < md->Topics.count; t++) {
            const struct kp_MetadataResponse_MetadataResponseTopic *mt = &md->Topics.items[t];
            if (!kp_str_eq_c(mt->Name, a->parts[i].topic)) {
                continue;
            }
            for (int32_t p = 0; p < mt->Partitions.count; p++) {
                if (mt->Partitions.items[p].PartitionIndex == a->parts[i].partition) {
                    a->leaders[i] = mt->Partitions.items[p].LeaderId;
                }
            }
        }
    }
    op->sent = false;
    op->stage = 1;
}

int64_t sc_admin_discover_md(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        return now + 50;
    }
    /* The parts' topics for their leaders, else no topic: brokers only. */
    char **names = kp_calloc(a->part_count > 0 ? a->part_count : 1, sizeof(*names));
    int n = 0;
    if (names == NULL) {
        return now + c->v->retry_backoff_ms;
    }
    for (size_t i = 0; a->leaders != NULL && i < a->part_count; i++) {
        names[n++] = (char *)(uintptr_t)a->parts[i].topic;
    }
    int err = sc_send_metadata(c, conn, names, n, on_discover_md, op);
    kp_free(names);
    if (err == SAMSA_ERR_UNSUPPORTED) {
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
    op->sent = err == SAMSA_OK;
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

/* Stage 0 by FindCoordinator for the group a->name. */
static void on_discover_coord(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                              void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct sc_admin_arg *a = op->arg;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_FindCoordinatorResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    if (e != SAMSA_OK) {
        sc_admin_message_into(op, e, r->ErrorMessage);
        sc_admin_answered(c, op, e);
        return;
    }
    sc_broker_learn(c, r->NodeId, r->Host, r->Port);
    if (sc_broker_find(c, r->NodeId) == NULL) {
        (void)sc_op_retry(c, op, SAMSA_ERR_BAD_RESPONSE, sc_now_ms());
        return;
    }
    a->node = r->NodeId;
    op->sent = false;
    op->stage = 1;
}

int64_t sc_admin_discover_coord(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        return now + 50;
    }
    int err = sc_send_find_coordinator(c, conn, a->name, 0, on_discover_coord, op);
    if (err == SAMSA_ERR_UNSUPPORTED) {
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
    op->sent = err == SAMSA_OK;
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

/* The connection for a config resource: its broker, or any for a topic. */
struct sc_conn *sc_admin_resource_conn(struct sc_client *c, const struct sc_admin_arg *a)
{
    if (a->resource_type == SAMSA_RESOURCE_BROKER) {
        char *end = NULL;
        errno = 0;
        long id = strtol(a->name, &end, 10);
        if (errno == 0 && end != a->name && *end == '\0' && id >= 0 && id <= INT32_MAX) {
            return sc_admin_up_node(c, (int32_t)id);
        }
    }
    return sc_conn_any_up(c);
}

int sc_admin_unsupported(struct sc_client *c, struct sc_op *op, const char *api, int key,
                         const struct sc_conn *conn)
{
    sc_errf(op->errstr, sizeof(op->errstr),
            "UNSUPPORTED: the broker at %s:%d does not offer %s (API %d)", conn->host, conn->port,
            api, key);
    sc_op_finish(c, op, SAMSA_ERR_UNSUPPORTED);
    return SAMSA_ERR_UNSUPPORTED;
}
