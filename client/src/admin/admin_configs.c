/*
 * The admin calls on configs: DescribeConfigs of a topic or a broker, and
 * IncrementalAlterConfigs, else AlterConfigs on the dynamic set
 * DescribeConfigs reports with the changes applied (admin_ops.c tells the
 * stages every admin op goes through).
 */
#include <string.h>

#include "admin/admin_ops.h"

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
        char *name = sc_admin_dup_str(s->Name);
        if (name == NULL || !sc_admin_dup_nullable(s->Value, &value)) {
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
    if (sc_admin_transport_failed(c, op, err)) {
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
        sc_admin_message_into(op, e, res->ErrorMessage);
        sc_admin_answered(c, op, e);
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
    sc_admin_free_strs(a->cur_names, a->cur_count);
    sc_admin_free_strs(a->cur_values, a->cur_count);
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
        char *name = sc_admin_dup_str(s->Name);
        char *value = NULL;
        if (name == NULL || !sc_admin_dup_nullable(s->Value, &value)) {
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
        return sc_admin_unsupported(c, op, "DescribeConfigs", KP_API_DESCRIBE_CONFIGS, conn);
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
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    /* Both responses have the same shape. */
    const struct kp_AlterConfigsResponse *r = body;
    if (r->Responses.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    int e = sc_err_from_wire(r->Responses.items[0].ErrorCode);
    sc_admin_message_into(op, e, r->Responses.items[0].ErrorMessage);
    sc_admin_answered(c, op, e);
}

static void on_incremental_alter(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                 void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    if (sc_admin_transport_failed(c, op, err)) {
        return;
    }
    const struct kp_IncrementalAlterConfigsResponse *r = body;
    if (r->Responses.count < 1) {
        sc_op_finish(c, op, SAMSA_ERR_BAD_RESPONSE);
        return;
    }
    int e = sc_err_from_wire(r->Responses.items[0].ErrorCode);
    sc_admin_message_into(op, e, r->Responses.items[0].ErrorMessage);
    sc_admin_answered(c, op, e);
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
        return sc_admin_unsupported(c, op, "AlterConfigs", KP_API_ALTER_CONFIGS, conn);
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
        return sc_admin_discover_md(c, op, now);
    }
    struct sc_conn *conn = sc_admin_resource_conn(c, op->arg);
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

const struct sc_op_ops sc_configs_op = {serve_configs, sc_admin_arg_free};
