/*
 * The admin calls on groups: ListGroups on every broker (one that fails is
 * listed in the result's errors), DescribeGroups, OffsetFetch of a whole
 * group, OffsetCommit as a tool, DeleteGroups, each on the group's
 * coordinator (admin_ops.c tells the stages every admin op goes through).
 */
#include <string.h>

#include "admin/admin_ops.h"

#define MAX_RESULTS 1000000

static int add_group(struct sc_admin_arg *a, struct kp_str id, struct kp_str type)
{
    samsa_group_list *l = a->groups;
    for (size_t i = 0; i < l->count; i++) {
        if (kp_str_eq_c(id, l->groups[i].group_id)) {
            return SAMSA_OK; /* listed by another broker too */
        }
    }
    if (l->count >= MAX_RESULTS) {
        return SAMSA_ERR_BAD_RESPONSE;
    }
    if (l->count == a->groups_cap) {
        size_t ncap = a->groups_cap > 0 ? a->groups_cap * 2 : 16;
        struct samsa_group_listing *ng =
            kp_realloc((void *)(uintptr_t)l->groups, ncap * sizeof(*ng));
        if (ng == NULL) {
            return SAMSA_ERR_NOMEM;
        }
        l->groups = ng;
        a->groups_cap = ncap;
    }
    struct samsa_group_listing *g = (struct samsa_group_listing *)(uintptr_t)&l->groups[l->count];
    g->group_id = sc_admin_dup_str(id);
    g->protocol_type = sc_admin_dup_str(type);
    l->count++; /* counted even when a copy failed, so that the free finds it */
    return g->group_id != NULL && g->protocol_type != NULL ? SAMSA_OK : SAMSA_ERR_NOMEM;
}

/* The broker being asked (a->nodes[a->next]) failed: noted in the list's
 * errors, and the next broker is asked. */
static int broker_failed(struct sc_client *c, struct sc_admin_arg *a, int err, const char *what)
{
    samsa_group_list *l = a->groups;
    int32_t id = a->nodes[a->next];
    a->next++;
    struct samsa_broker_error *ne =
        kp_realloc((void *)(uintptr_t)l->errors, (l->error_count + 1) * sizeof(*ne));
    if (ne == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    l->errors = ne;
    const struct sc_broker_md *b = sc_broker_find(c, id);
    struct samsa_broker_error *e = &ne[l->error_count++];
    char reason[512];
    sc_errf(reason, sizeof(reason), "node %d (%s:%d): %s", id, b != NULL ? b->host : "?",
            b != NULL ? b->port : -1, what);
    e->node_id = id;
    e->host = sc_strdup(b != NULL ? b->host : "");
    e->port = b != NULL ? b->port : -1;
    e->err = err;
    e->reason = sc_strdup(reason);
    sc_log(c, "ListGroups: %s", reason);
    return e->host != NULL && e->reason != NULL ? SAMSA_OK : SAMSA_ERR_NOMEM;
}

static void on_list_groups(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                           void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct sc_admin_arg *a = op->arg;
    op->sent = false;
    if (err != 0) {
        /* Lost on the way: asked again, unless the connection cannot be
         * made again (serve_list_groups then moves on). */
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return;
    }
    const struct kp_ListGroupsResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    if (e == KP_ERR_COORDINATOR_LOAD_IN_PROGRESS || e == KP_ERR_COORDINATOR_NOT_AVAILABLE) {
        (void)sc_op_retry(c, op, e, sc_now_ms());
        return;
    }
    if (e != SAMSA_OK) {
        char what[256];
        sc_errf(what, sizeof(what), "ListGroups: %s", samsa_err_str(e));
        int fe = broker_failed(c, a, e, what);
        if (fe != SAMSA_OK) {
            sc_op_finish(c, op, fe);
        }
        return;
    }
    for (int32_t i = 0; i < r->Groups.count; i++) {
        int ae = add_group(a, r->Groups.items[i].GroupId, r->Groups.items[i].ProtocolType);
        if (ae != SAMSA_OK) {
            sc_op_finish(c, op, ae);
            return;
        }
    }
    a->next++;
}

static int64_t serve_list_groups(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    if (op->stage == 0) {
        return sc_admin_discover_md(c, op, now);
    }
    if (a->groups == NULL) {
        a->groups = kp_calloc(1, sizeof(*a->groups));
        if (a->groups == NULL) {
            sc_op_finish(c, op, SAMSA_ERR_NOMEM);
            return INT64_MAX;
        }
    }
    for (;;) {
        if (a->next >= (size_t)a->node_count) {
            sc_op_finish(c, op, SAMSA_OK);
            return INT64_MAX;
        }
        if (!sc_conn_failed(c, sc_conn_get(c, a->nodes[a->next]))) {
            break;
        }
        /* Refused, or lost and not made again: a broker Metadata names is
         * down. Its groups are missing; the others are not waited on for
         * it until the deadline. */
        int fe = broker_failed(c, a, SAMSA_ERR_TRANSPORT,
                               "cannot connect (connection refused or lost)");
        if (fe != SAMSA_OK) {
            sc_op_finish(c, op, fe);
            return INT64_MAX;
        }
    }
    struct sc_conn *conn = sc_admin_up_node(c, a->nodes[a->next]);
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_LIST_GROUPS, 0, 2);
    if (ver < 0) {
        (void)sc_admin_unsupported(c, op, "ListGroups", KP_API_LIST_GROUPS, conn);
        return INT64_MAX;
    }
    struct kp_ListGroupsRequest req;
    kp_ListGroupsRequest_init(&req);
    op->sent = sc_conn_send(c, conn, KP_API_LIST_GROUPS, ver, &req, on_list_groups, op) == SAMSA_OK;
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

/* ------------------------------------------------------ DescribeGroups */

static int member_copy(struct samsa_group_member *dst,
                       const struct kp_DescribeGroupsResponse_DescribedGroupMember *m,
                       bool consumer)
{
    char *instance = NULL;
    dst->member_id = sc_admin_dup_str(m->MemberId);
    dst->client_id = sc_admin_dup_str(m->ClientId);
    dst->client_host = sc_admin_dup_str(m->ClientHost);
    if (!sc_admin_dup_nullable(m->GroupInstanceId, &instance) || dst->member_id == NULL ||
        dst->client_id == NULL || dst->client_host == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    dst->instance_id = instance;
    if (!consumer || m->MemberAssignment.len <= 0) {
        return SAMSA_OK;
    }
    struct sc_tp *tps = NULL;
    int n = 0;
    if (sc_assignment_decode(m->MemberAssignment.ptr, (size_t)m->MemberAssignment.len, &tps, &n) !=
        SAMSA_OK) {
        return SAMSA_OK; /* not the consumer protocol's bytes: no assignment shown */
    }
    struct samsa_partition *parts = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*parts));
    if (parts == NULL) {
        sc_tps_free(tps, n);
        return SAMSA_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        parts[i].topic = tps[i].topic; /* moved */
        parts[i].partition = tps[i].partition;
        parts[i].offset = -1;
    }
    kp_free(tps);
    dst->assignment = parts;
    dst->assignment_count = (size_t)n;
    return SAMSA_OK;
}

static samsa_group_description *desc_copy(const struct kp_DescribeGroupsResponse_DescribedGroup *g,
                                          int32_t coordinator)
{
    samsa_group_description *d = kp_calloc(1, sizeof(*d));
    if (d == NULL) {
        return NULL;
    }
    d->coordinator_id = coordinator;
    d->group_id = sc_admin_dup_str(g->GroupId);
    d->state = sc_admin_dup_str(g->GroupState);
    d->protocol_type = sc_admin_dup_str(g->ProtocolType);
    d->protocol = sc_admin_dup_str(g->ProtocolData);
    int32_t n = g->Members.count > 0 ? g->Members.count : 0;
    struct samsa_group_member *ms = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*ms));
    d->members = ms;
    if (d->group_id == NULL || d->state == NULL || d->protocol_type == NULL ||
        d->protocol == NULL || ms == NULL) {
        samsa_group_description_free(d);
        return NULL;
    }
    bool consumer = kp_str_eq_c(g->ProtocolType, "consumer");
    for (int32_t i = 0; i < n; i++) {
        d->member_count++;
        if (member_copy(&ms[i], &g->Members.items[i], consumer) != SAMSA_OK) {
            samsa_group_description_free(d);
            return NULL;
        }
    }
    return d;
}

static void on_describe_group(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                              void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct sc_admin_arg *a = op->arg;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_DescribeGroupsResponse *r = body;
    if (r->Groups.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    const struct kp_DescribeGroupsResponse_DescribedGroup *g = &r->Groups.items[0];
    int e = sc_err_from_wire(g->ErrorCode);
    if (e != SAMSA_OK) {
        sc_admin_answered(c, op, e);
        return;
    }
    samsa_group_description_free(a->desc);
    a->desc = desc_copy(g, a->node);
    sc_op_finish(c, op, a->desc != NULL ? SAMSA_OK : SAMSA_ERR_NOMEM);
}

/* ------------------------------------------------- group offsets, delete */

static void on_group_offsets(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                             void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct sc_admin_arg *a = op->arg;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_OffsetFetchResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    if (e != SAMSA_OK) {
        sc_admin_answered(c, op, e);
        return;
    }
    size_t n = 0;
    for (int32_t i = 0; i < r->Topics.count; i++) {
        n += (size_t)(r->Topics.items[i].Partitions.count > 0 ? r->Topics.items[i].Partitions.count
                                                               : 0);
    }
    samsa_partitions_free(a->out, a->out_count);
    a->out_count = 0;
    a->out = kp_calloc(n > 0 ? n : 1, sizeof(*a->out));
    if (a->out == NULL) {
        sc_op_finish(c, op, SAMSA_ERR_NOMEM);
        return;
    }
    for (int32_t i = 0; i < r->Topics.count; i++) {
        const struct kp_OffsetFetchResponse_OffsetFetchResponseTopic *t = &r->Topics.items[i];
        for (int32_t j = 0; j < t->Partitions.count; j++) {
            const struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *p =
                &t->Partitions.items[j];
            if (p->ErrorCode != 0 || p->CommittedOffset < 0) {
                continue;
            }
            char *topic = sc_admin_dup_str(t->Name);
            if (topic == NULL) {
                sc_op_finish(c, op, SAMSA_ERR_NOMEM);
                return;
            }
            a->out[a->out_count].topic = topic;
            a->out[a->out_count].partition = p->PartitionIndex;
            a->out[a->out_count].offset = p->CommittedOffset;
            a->out_count++;
        }
    }
    sc_op_finish(c, op, SAMSA_OK);
}

static void on_alter_group_offsets(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                   void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct sc_admin_arg *a = op->arg;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_OffsetCommitResponse *r = body;
    int first = SAMSA_OK;
    for (int32_t i = 0; i < r->Topics.count && first == SAMSA_OK; i++) {
        for (int32_t j = 0; j < r->Topics.items[i].Partitions.count; j++) {
            int e = sc_err_from_wire(r->Topics.items[i].Partitions.items[j].ErrorCode);
            if (e != SAMSA_OK) {
                first = e;
                break;
            }
        }
    }
    if (first != SAMSA_OK && !sc_admin_moved(first)) {
        sc_errf(op->errstr, sizeof(op->errstr), "group %s: %s%s", a->name, samsa_err_str(first),
                first == KP_ERR_UNKNOWN_MEMBER_ID || first == KP_ERR_REBALANCE_IN_PROGRESS
                    ? " (the group has members: stop them first)"
                    : "");
    }
    sc_admin_answered(c, op, first);
}

static void on_delete_group(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                            void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_DeleteGroupsResponse *r = body;
    if (r->Results.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    sc_admin_answered(c, op, sc_err_from_wire(r->Results.items[0].ErrorCode));
}

static int64_t serve_group_op(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    if (op->stage == 0) {
        return sc_admin_discover_coord(c, op, now);
    }
    int64_t wake;
    if (sc_op_node_failed(c, op, a->node, now, &wake)) {
        return wake;
    }
    struct sc_conn *conn = sc_admin_up_node(c, a->node);
    if (conn == NULL) {
        if (sc_broker_find(c, a->node) == NULL) {
            op->stage = 0;
        }
        return now + 50;
    }
    struct kp_str name = kp_str_c(a->name);
    int err = SAMSA_ERR_UNSUPPORTED;
    if (op->kind == SC_OP_DESCRIBE_GROUP) {
        int16_t ver = sc_conn_version(conn, KP_API_DESCRIBE_GROUPS, 0, 4);
        if (ver < 0) {
            (void)sc_admin_unsupported(c, op, "DescribeGroups", KP_API_DESCRIBE_GROUPS, conn);
            return INT64_MAX;
        }
        struct kp_DescribeGroupsRequest req;
        kp_DescribeGroupsRequest_init(&req);
        req.Groups.items = &name;
        req.Groups.count = 1;
        err = sc_conn_send(c, conn, KP_API_DESCRIBE_GROUPS, ver, &req, on_describe_group, op);
    } else if (op->kind == SC_OP_GROUP_OFFSETS) {
        int16_t ver = sc_conn_version(conn, KP_API_OFFSET_FETCH, 2, 5);
        if (ver < 0) {
            (void)sc_admin_unsupported(c, op, "OffsetFetch v2+", KP_API_OFFSET_FETCH, conn);
            return INT64_MAX;
        }
        struct kp_OffsetFetchRequest req;
        kp_OffsetFetchRequest_init(&req);
        req.GroupId = name;
        req.Topics.items = NULL;
        req.Topics.count = -1; /* null: every partition the group has committed */
        err = sc_conn_send(c, conn, KP_API_OFFSET_FETCH, ver, &req, on_group_offsets, op);
    } else if (op->kind == SC_OP_ALTER_GROUP_OFFSETS) {
        int16_t ver = sc_conn_version(conn, KP_API_OFFSET_COMMIT, 2, 7);
        if (ver < 0) {
            (void)sc_admin_unsupported(c, op, "OffsetCommit v2+", KP_API_OFFSET_COMMIT, conn);
            return INT64_MAX;
        }
        size_t n = a->part_count;
        struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *ts =
            kp_calloc(n > 0 ? n : 1, sizeof(*ts));
        struct kp_OffsetCommitRequest_OffsetCommitRequestPartition *ps =
            kp_calloc(n > 0 ? n : 1, sizeof(*ps));
        if (ts == NULL || ps == NULL) {
            kp_free(ts);
            kp_free(ps);
            return now + c->v->retry_backoff_ms;
        }
        int nt = 0;
        size_t np = 0;
        for (size_t i = 0; i < n; i++) {
            bool seen = false;
            for (int t = 0; t < nt && !seen; t++) {
                seen = kp_str_eq_c(ts[t].Name, a->parts[i].topic);
            }
            if (seen) {
                continue;
            }
            ts[nt].Name = kp_str_c(a->parts[i].topic);
            ts[nt].Partitions.items = &ps[np];
            ts[nt].Partitions.count = 0;
            for (size_t j = i; j < n; j++) {
                if (strcmp(a->parts[j].topic, a->parts[i].topic) == 0) {
                    ps[np].PartitionIndex = a->parts[j].partition;
                    ps[np].CommittedOffset = a->parts[j].offset;
                    ps[np].CommittedLeaderEpoch = -1;
                    ps[np].CommitTimestamp = -1;
                    ps[np].CommittedMetadata = kp_str_c("");
                    np++;
                    ts[nt].Partitions.count++;
                }
            }
            nt++;
        }
        struct kp_OffsetCommitRequest req;
        kp_OffsetCommitRequest_init(&req);
        req.GroupId = name;
        req.GenerationId = -1;
        req.MemberId = kp_str_c("");
        req.GroupInstanceId = KP_STR_NULL;
        req.RetentionTimeMs = -1;
        req.Topics.items = ts;
        req.Topics.count = nt;
        err = sc_conn_send(c, conn, KP_API_OFFSET_COMMIT, ver, &req, on_alter_group_offsets, op);
        kp_free(ts);
        kp_free(ps);
    } else {
        int16_t ver = sc_conn_version(conn, KP_API_DELETE_GROUPS, 0, 1);
        if (ver < 0) {
            (void)sc_admin_unsupported(c, op, "DeleteGroups", KP_API_DELETE_GROUPS, conn);
            return INT64_MAX;
        }
        struct kp_DeleteGroupsRequest req;
        kp_DeleteGroupsRequest_init(&req);
        req.GroupsNames.items = &name;
        req.GroupsNames.count = 1;
        err = sc_conn_send(c, conn, KP_API_DELETE_GROUPS, ver, &req, on_delete_group, op);
    }
    op->sent = err == SAMSA_OK;
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

const struct sc_op_ops sc_list_groups_op = {serve_list_groups, sc_admin_arg_free};
const struct sc_op_ops sc_group_op = {serve_group_op, sc_admin_arg_free};
