/*
 * The admin ops beyond topics: configs (DescribeConfigs, IncrementalAlterConfigs
 * or AlterConfigs), CreatePartitions, DeleteRecords, and groups (ListGroups
 * on every broker, DescribeGroups, OffsetFetch of a whole group, OffsetCommit
 * as a tool, DeleteGroups on the coordinator). Each is an op (ops.c) with a
 * struct sc_admin_arg; op->stage says how far it got:
 *
 *   stage 0  discovery: Metadata (brokers, controller, leaders) or
 *            FindCoordinator for a group
 *   stage 1+ the request itself (some have a second one)
 *
 * A response that says the node was the wrong one (NOT_CONTROLLER,
 * NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER, ...) sends the op back to stage 0
 * after retry.backoff.ms, until its deadline. Handlers copy what they keep
 * out of the response (it lives in the client's arena) and send nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define MAX_RESULTS 1000000

/* ------------------------------------------------------------- helpers */

/* A copy of s ("" for null); NULL only when out of memory. */
static char *dup_str(struct kp_str s)
{
    return sc_strndup(s.ptr != NULL ? s.ptr : "", (size_t)(s.len > 0 ? s.len : 0));
}

/* A copy of a nullable s into *out (NULL for null); false when out of memory. */
static bool dup_nullable(struct kp_str s, char **out)
{
    *out = NULL;
    if (s.len < 0 || s.ptr == NULL) {
        return true;
    }
    *out = sc_strndup(s.ptr, (size_t)s.len);
    return *out != NULL;
}

static void free_strs(char **v, int n)
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

void sc_admin_arg_free(struct sc_admin_arg *a)
{
    if (a == NULL) {
        return;
    }
    kp_free(a->name);
    free_strs(a->cfg_names, a->cfg_count);
    free_strs(a->cfg_values, a->cfg_count);
    free_strs(a->cur_names, a->cur_count);
    free_strs(a->cur_values, a->cur_count);
    samsa_partitions_free(a->parts, a->part_count);
    kp_free(a->leaders);
    kp_free(a->nodes);
    samsa_configs_free(a->configs);
    samsa_group_list_free(a->groups);
    samsa_group_description_free(a->desc);
    samsa_partitions_free(a->out, a->out_count);
    kp_free(a);
}

static struct sc_conn *up_node(struct sc_client *c, int32_t id)
{
    struct sc_conn *conn = sc_conn_get(c, id);
    return sc_conn_is_up(conn) ? conn : NULL;
}

/* Kafka errors that mean "ask another node" (or the same one later). */
static bool moved(int err)
{
    return err == KP_ERR_NOT_CONTROLLER || err == KP_ERR_NOT_COORDINATOR ||
           err == KP_ERR_COORDINATOR_NOT_AVAILABLE || err == KP_ERR_COORDINATOR_LOAD_IN_PROGRESS ||
           err == KP_ERR_NOT_LEADER_OR_FOLLOWER || err == KP_ERR_LEADER_NOT_AVAILABLE ||
           err == KP_ERR_REQUEST_TIMED_OUT;
}

/* A response with a Kafka error: back to discovery, or finished. */
static void answered(struct sc_client *c, struct sc_op *op, int err)
{
    if (err != SAMSA_OK && moved(err) && sc_now_ms() < op->deadline) {
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
static bool transport_failed(struct sc_client *c, struct sc_op *op, int err)
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

static void message_into(struct sc_op *op, int err, struct kp_str msg)
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
    if (transport_failed(c, op, err)) {
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

static int64_t discover_md(struct sc_client *c, struct sc_op *op, int64_t now)
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
    if (transport_failed(c, op, err)) {
        return;
    }
    const struct kp_FindCoordinatorResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    if (e != SAMSA_OK) {
        message_into(op, e, r->ErrorMessage);
        answered(c, op, e);
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

static int64_t discover_coord(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_FIND_COORDINATOR, 0, 2);
    if (ver < 0) {
        sc_op_finish(c, op, SAMSA_ERR_UNSUPPORTED);
        return INT64_MAX;
    }
    struct kp_FindCoordinatorRequest req;
    kp_FindCoordinatorRequest_init(&req);
    req.Key = kp_str_c(a->name);
    req.KeyType = 0;
    op->sent = sc_conn_send(c, conn, KP_API_FIND_COORDINATOR, ver, &req, on_discover_coord, op) ==
               SAMSA_OK;
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

/* The connection for a config resource: its broker, or any for a topic. */
static struct sc_conn *resource_conn(struct sc_client *c, const struct sc_admin_arg *a)
{
    if (a->resource_type == SAMSA_RESOURCE_BROKER) {
        char *end = NULL;
        errno = 0;
        long id = strtol(a->name, &end, 10);
        if (errno == 0 && end != a->name && *end == '\0' && id >= 0 && id <= INT32_MAX) {
            return up_node(c, (int32_t)id);
        }
    }
    return sc_conn_any_up(c);
}

static int unsupported(struct sc_client *c, struct sc_op *op, const char *api, int key,
                       const struct sc_conn *conn)
{
    sc_errf(op->errstr, sizeof(op->errstr),
            "UNSUPPORTED: the broker at %s:%d does not offer %s (API %d)", conn->host, conn->port,
            api, key);
    sc_op_finish(c, op, SAMSA_ERR_UNSUPPORTED);
    return SAMSA_ERR_UNSUPPORTED;
}

/* ------------------------------------------------------ DescribeConfigs */

static samsa_configs *configs_copy(const struct kp_DescribeConfigsResponse_DescribeConfigsResult *r,
                                   bool has_source)
{
    samsa_configs *cf = kp_calloc(1, sizeof(*cf));
    if (cf == NULL) {
        return NULL;
    }
    int32_t n = r->Configs.count > 0 ? r->Configs.count : 0;
    struct samsa_config_entry *e = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*e));
    if (e == NULL) {
        kp_free(cf);
        return NULL;
    }
    cf->entries = e;
    for (int32_t i = 0; i < n; i++) {
        const struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult *s =
            &r->Configs.items[i];
        char *value = NULL;
        char *name = dup_str(s->Name);
        if (name == NULL || !dup_nullable(s->Value, &value)) {
            kp_free(name);
            samsa_configs_free(cf);
            return NULL;
        }
        e[cf->count].name = name;
        e[cf->count].value = value;
        e[cf->count].source = has_source ? s->ConfigSource : -1;
        e[cf->count].is_default = has_source ? s->ConfigSource == 5 : s->IsDefault;
        e[cf->count].read_only = s->ReadOnly;
        e[cf->count].sensitive = s->IsSensitive;
        cf->count++;
    }
    return cf;
}

/* A dynamic configuration (one AlterConfigs keeps only if it is sent). */
static bool is_dynamic(const struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult *s,
                       bool has_source)
{
    if (has_source) {
        return s->ConfigSource >= 1 && s->ConfigSource <= 3;
    }
    return !s->IsDefault && !s->ReadOnly;
}

static void on_describe_configs(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                void *ctx)
{
    struct sc_op *op = ctx;
    struct sc_admin_arg *a = op->arg;
    if (transport_failed(c, op, err)) {
        return;
    }
    const struct kp_DescribeConfigsResponse *r = body;
    if (r->Results.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    const struct kp_DescribeConfigsResponse_DescribeConfigsResult *res = &r->Results.items[0];
    int e = sc_err_from_wire(res->ErrorCode);
    if (e != SAMSA_OK) {
        message_into(op, e, res->ErrorMessage);
        answered(c, op, e);
        return;
    }
    /* The version answered: v1+ has ConfigSource. */
    bool has_source = sc_conn_version(conn, KP_API_DESCRIBE_CONFIGS, 0, 2) >= 1;
    if (op->kind == SC_OP_DESCRIBE_CONFIGS) {
        samsa_configs_free(a->configs);
        a->configs = configs_copy(res, has_source);
        sc_op_finish(c, op, a->configs != NULL ? SAMSA_OK : SAMSA_ERR_NOMEM);
        return;
    }
    /* AlterConfigs without API 44: remember the dynamic ones. */
    free_strs(a->cur_names, a->cur_count);
    free_strs(a->cur_values, a->cur_count);
    a->cur_count = 0;
    int32_t n = res->Configs.count > 0 ? res->Configs.count : 0;
    a->cur_names = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    a->cur_values = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    if (a->cur_names == NULL || a->cur_values == NULL) {
        sc_op_finish(c, op, SAMSA_ERR_NOMEM);
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        const struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult *s =
            &res->Configs.items[i];
        if (!is_dynamic(s, has_source) || s->IsSensitive) {
            continue; /* a sensitive value is not shown, so it cannot be sent back */
        }
        char *name = dup_str(s->Name);
        char *value = NULL;
        if (name == NULL || !dup_nullable(s->Value, &value)) {
            kp_free(name);
            sc_op_finish(c, op, SAMSA_ERR_NOMEM);
            return;
        }
        a->cur_names[a->cur_count] = name;
        a->cur_values[a->cur_count] = value;
        a->cur_count++;
    }
    op->sent = false;
    op->stage = 2;
}

static int send_describe_configs(struct sc_client *c, struct sc_op *op, struct sc_conn *conn)
{
    struct sc_admin_arg *a = op->arg;
    int16_t ver = sc_conn_version(conn, KP_API_DESCRIBE_CONFIGS, 0, 2);
    if (ver < 0) {
        return unsupported(c, op, "DescribeConfigs", KP_API_DESCRIBE_CONFIGS, conn);
    }
    struct kp_DescribeConfigsRequest_DescribeConfigsResource res;
    memset(&res, 0, sizeof(res));
    res.ResourceType = a->resource_type;
    res.ResourceName = kp_str_c(a->name);
    res.ConfigurationKeys.items = NULL;
    res.ConfigurationKeys.count = -1; /* null: every key */
    struct kp_DescribeConfigsRequest req;
    kp_DescribeConfigsRequest_init(&req);
    req.Resources.items = &res;
    req.Resources.count = 1;
    req.IncludeSynonyms = false;
    int err = sc_conn_send(c, conn, KP_API_DESCRIBE_CONFIGS, ver, &req, on_describe_configs, op);
    op->sent = err == SAMSA_OK;
    return err;
}

/* -------------------------------------------------------- AlterConfigs */

static void on_alter_configs(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                             void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (transport_failed(c, op, err)) {
        return;
    }
    /* Both responses have the same shape. */
    const struct kp_AlterConfigsResponse *r = body;
    if (r->Responses.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    int e = sc_err_from_wire(r->Responses.items[0].ErrorCode);
    message_into(op, e, r->Responses.items[0].ErrorMessage);
    answered(c, op, e);
}

static void on_incremental_alter(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                 void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (transport_failed(c, op, err)) {
        return;
    }
    const struct kp_IncrementalAlterConfigsResponse *r = body;
    if (r->Responses.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    int e = sc_err_from_wire(r->Responses.items[0].ErrorCode);
    message_into(op, e, r->Responses.items[0].ErrorMessage);
    answered(c, op, e);
}

static int send_incremental_alter(struct sc_client *c, struct sc_op *op, struct sc_conn *conn,
                                  int16_t ver)
{
    struct sc_admin_arg *a = op->arg;
    struct kp_IncrementalAlterConfigsRequest_AlterableConfig *cfg =
        kp_calloc((size_t)(a->cfg_count > 0 ? a->cfg_count : 1), sizeof(*cfg));
    if (cfg == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    for (int i = 0; i < a->cfg_count; i++) {
        cfg[i].Name = kp_str_c(a->cfg_names[i]);
        cfg[i].ConfigOperation = a->cfg_values[i] != NULL ? 0 : 1; /* SET : DELETE */
        cfg[i].Value = a->cfg_values[i] != NULL ? kp_str_c(a->cfg_values[i]) : KP_STR_NULL;
    }
    struct kp_IncrementalAlterConfigsRequest_AlterConfigsResource res;
    res.ResourceType = a->resource_type;
    res.ResourceName = kp_str_c(a->name);
    res.Configs.items = cfg;
    res.Configs.count = a->cfg_count;
    struct kp_IncrementalAlterConfigsRequest req;
    kp_IncrementalAlterConfigsRequest_init(&req);
    req.Resources.items = &res;
    req.Resources.count = 1;
    req.ValidateOnly = false;
    int err = sc_conn_send(c, conn, KP_API_INCREMENTAL_ALTER_CONFIGS, ver, &req,
                           on_incremental_alter, op);
    kp_free(cfg);
    op->sent = err == SAMSA_OK;
    return err;
}

/* AlterConfigs replaces the resource's whole dynamic set: the set now with
 * the changes applied. */
static int send_full_alter(struct sc_client *c, struct sc_op *op, struct sc_conn *conn)
{
    struct sc_admin_arg *a = op->arg;
    int16_t ver = sc_conn_version(conn, KP_API_ALTER_CONFIGS, 0, 1);
    if (ver < 0) {
        return unsupported(c, op, "AlterConfigs", KP_API_ALTER_CONFIGS, conn);
    }
    int cap = a->cur_count + a->cfg_count;
    struct kp_AlterConfigsRequest_AlterableConfig *cfg =
        kp_calloc((size_t)(cap > 0 ? cap : 1), sizeof(*cfg));
    if (cfg == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    int n = 0;
    for (int i = 0; i < a->cur_count; i++) {
        bool changed = false;
        for (int j = 0; j < a->cfg_count && !changed; j++) {
            changed = strcmp(a->cfg_names[j], a->cur_names[i]) == 0;
        }
        if (!changed) {
            cfg[n].Name = kp_str_c(a->cur_names[i]);
            cfg[n].Value = a->cur_values[i] != NULL ? kp_str_c(a->cur_values[i]) : KP_STR_NULL;
            n++;
        }
    }
    for (int j = 0; j < a->cfg_count; j++) {
        if (a->cfg_values[j] != NULL) { /* a NULL one is left out: back to its default */
            cfg[n].Name = kp_str_c(a->cfg_names[j]);
            cfg[n].Value = kp_str_c(a->cfg_values[j]);
            n++;
        }
    }
    struct kp_AlterConfigsRequest_AlterConfigsResource res;
    res.ResourceType = a->resource_type;
    res.ResourceName = kp_str_c(a->name);
    res.Configs.items = cfg;
    res.Configs.count = n;
    struct kp_AlterConfigsRequest req;
    kp_AlterConfigsRequest_init(&req);
    req.Resources.items = &res;
    req.Resources.count = 1;
    req.ValidateOnly = false;
    int err = sc_conn_send(c, conn, KP_API_ALTER_CONFIGS, ver, &req, on_alter_configs, op);
    kp_free(cfg);
    op->sent = err == SAMSA_OK;
    return err;
}

static int64_t serve_configs(struct sc_client *c, struct sc_op *op, int64_t now)
{
    if (op->stage == 0) {
        return discover_md(c, op, now);
    }
    struct sc_conn *conn = resource_conn(c, op->arg);
    if (conn == NULL) {
        return now + 50;
    }
    int err;
    if (op->kind == SC_OP_DESCRIBE_CONFIGS) {
        err = send_describe_configs(c, op, conn);
    } else if (op->stage == 1) {
        int16_t iver = sc_conn_version(conn, KP_API_INCREMENTAL_ALTER_CONFIGS, 0, 1);
        err = iver >= 0 ? send_incremental_alter(c, op, conn, iver)
                        : send_describe_configs(c, op, conn);
    } else {
        err = send_full_alter(c, op, conn);
    }
    if (err == SAMSA_ERR_UNSUPPORTED) {
        return INT64_MAX; /* finished */
    }
    return op->sent ? INT64_MAX : now + c->v->retry_backoff_ms;
}

/* ---------------------------------------------------- CreatePartitions */

static void on_create_partitions(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                 void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (transport_failed(c, op, err)) {
        return;
    }
    const struct kp_CreatePartitionsResponse *r = body;
    if (r->Results.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    int e = sc_err_from_wire(r->Results.items[0].ErrorCode);
    message_into(op, e, r->Results.items[0].ErrorMessage);
    answered(c, op, e);
}

static int64_t serve_create_partitions(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    if (op->stage == 0) {
        return discover_md(c, op, now);
    }
    int64_t wake;
    if (c->controller_id >= 0 && sc_op_node_failed(c, op, c->controller_id, now, &wake)) {
        return wake;
    }
    struct sc_conn *conn = c->controller_id >= 0 ? up_node(c, c->controller_id) : NULL;
    if (conn == NULL) {
        conn = sc_conn_any_up(c);
    }
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_CREATE_PARTITIONS, 0, 1);
    if (ver < 0) {
        (void)unsupported(c, op, "CreatePartitions", KP_API_CREATE_PARTITIONS, conn);
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
    if (transport_failed(c, op, err)) {
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
    if (e != SAMSA_OK && moved(e) && sc_now_ms() < op->deadline) {
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
        return discover_md(c, op, now);
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
    struct sc_conn *conn = up_node(c, a->leaders[a->next]);
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_DELETE_RECORDS, 0, 1);
    if (ver < 0) {
        (void)unsupported(c, op, "DeleteRecords", KP_API_DELETE_RECORDS, conn);
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

/* ----------------------------------------------------------- ListGroups */

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
    g->group_id = dup_str(id);
    g->protocol_type = dup_str(type);
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
        return discover_md(c, op, now);
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
    struct sc_conn *conn = up_node(c, a->nodes[a->next]);
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_LIST_GROUPS, 0, 2);
    if (ver < 0) {
        (void)unsupported(c, op, "ListGroups", KP_API_LIST_GROUPS, conn);
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
    dst->member_id = dup_str(m->MemberId);
    dst->client_id = dup_str(m->ClientId);
    dst->client_host = dup_str(m->ClientHost);
    if (!dup_nullable(m->GroupInstanceId, &instance) || dst->member_id == NULL ||
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
    d->group_id = dup_str(g->GroupId);
    d->state = dup_str(g->GroupState);
    d->protocol_type = dup_str(g->ProtocolType);
    d->protocol = dup_str(g->ProtocolData);
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
    if (transport_failed(c, op, err)) {
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
        answered(c, op, e);
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
    if (transport_failed(c, op, err)) {
        return;
    }
    const struct kp_OffsetFetchResponse *r = body;
    int e = sc_err_from_wire(r->ErrorCode);
    if (e != SAMSA_OK) {
        answered(c, op, e);
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
            char *topic = dup_str(t->Name);
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
    if (transport_failed(c, op, err)) {
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
    if (first != SAMSA_OK && !moved(first)) {
        sc_errf(op->errstr, sizeof(op->errstr), "group %s: %s%s", a->name, samsa_err_str(first),
                first == KP_ERR_UNKNOWN_MEMBER_ID || first == KP_ERR_REBALANCE_IN_PROGRESS
                    ? " (the group has members: stop them first)"
                    : "");
    }
    answered(c, op, first);
}

static void on_delete_group(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                            void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (transport_failed(c, op, err)) {
        return;
    }
    const struct kp_DeleteGroupsResponse *r = body;
    if (r->Results.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    answered(c, op, sc_err_from_wire(r->Results.items[0].ErrorCode));
}

static int64_t serve_group_op(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_admin_arg *a = op->arg;
    if (op->stage == 0) {
        return discover_coord(c, op, now);
    }
    int64_t wake;
    if (sc_op_node_failed(c, op, a->node, now, &wake)) {
        return wake;
    }
    struct sc_conn *conn = up_node(c, a->node);
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
            (void)unsupported(c, op, "DescribeGroups", KP_API_DESCRIBE_GROUPS, conn);
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
            (void)unsupported(c, op, "OffsetFetch v2+", KP_API_OFFSET_FETCH, conn);
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
            (void)unsupported(c, op, "OffsetCommit v2+", KP_API_OFFSET_COMMIT, conn);
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
            (void)unsupported(c, op, "DeleteGroups", KP_API_DELETE_GROUPS, conn);
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

/* ----------------------------------------------------------------- serve */

static int64_t serve_admin(struct sc_client *c, struct sc_op *op, int64_t now)
{
    switch (op->kind) {
    case SC_OP_DESCRIBE_CONFIGS:
    case SC_OP_ALTER_CONFIGS:
        return serve_configs(c, op, now);
    case SC_OP_CREATE_PARTITIONS:
        return serve_create_partitions(c, op, now);
    case SC_OP_DELETE_RECORDS:
        return serve_delete_records(c, op, now);
    case SC_OP_LIST_GROUPS:
        return serve_list_groups(c, op, now);
    default:
        return serve_group_op(c, op, now);
    }
}

static void admin_arg_free(void *arg)
{
    sc_admin_arg_free(arg);
}

const struct sc_op_ops sc_admin_op = {serve_admin, admin_arg_free};
