/*
 * The admin handle: topics and cluster metadata, each call an op (ops.c)
 * that the I/O thread carries out while the caller waits.
 */
#include <string.h>

#include "consumer/consumer.h"


samsa_admin *samsa_admin_new(const samsa_conf *conf, char *errstr, size_t errstr_size)
{
    samsa_admin *a = kp_calloc(1, sizeof(*a));
    if (a == NULL) {
        sc_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    if (sc_client_create(&sc_admin_kind, conf, &a->c, errstr, errstr_size) != SAMSA_OK) {
        kp_free(a);
        return NULL;
    }
    return a;
}

void samsa_admin_close(samsa_admin *a)
{
    if (a != NULL && sc_gate_close(&a->gate, a->c)) {
        sc_gate_shut(&a->gate);
        sc_client_destroy(a->c);
        a->c = NULL;
    }
}

void samsa_admin_destroy(samsa_admin *a)
{
    if (a != NULL) {
        samsa_admin_close(a);
        kp_free(a);
    }
}

static struct sc_topic_arg *topic_arg(const char *name)
{
    struct sc_topic_arg *t = kp_calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    t->name = sc_strdup(name);
    if (t->name == NULL) {
        kp_free(t);
        return NULL;
    }
    return t;
}

static int run_topic_op(samsa_admin *a, int kind, struct sc_topic_arg *t, int timeout_ms,
                        char *errstr, size_t errstr_size)
{
    struct sc_op *op = sc_op_create(&sc_topic_op, kind, t);
    if (op == NULL) {
        kp_free(t->name);
        kp_free(t);
        sc_errf(errstr, errstr_size, "out of memory");
        return SAMSA_ERR_NOMEM;
    }
    int err = sc_op_run(a->c, &op, timeout_ms, errstr, errstr_size);
    sc_op_free(op);
    return err;
}

static int gated_admin_create_topic(samsa_admin *a, const struct samsa_new_topic *nt, int timeout_ms,
                             char *errstr, size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || nt == NULL || nt->name == NULL || nt->name[0] == '\0' ||
        (nt->config == NULL && nt->config_count > 0) || nt->config_count > 64) {
        sc_errf(errstr, errstr_size, "a topic needs a name (and at most 64 configs)");
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_topic_arg *t = topic_arg(nt->name);
    if (t == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    t->partitions = nt->partitions;
    t->replication_factor = nt->replication_factor;
    if (nt->config_count > 0) {
        t->cfg_names = kp_calloc(nt->config_count, sizeof(char *));
        t->cfg_values = kp_calloc(nt->config_count, sizeof(char *));
        if (t->cfg_names == NULL || t->cfg_values == NULL) {
            goto out_nomem;
        }
        for (size_t i = 0; i < nt->config_count; i++) {
            const char *kv = nt->config[i];
            const char *eq = kv != NULL ? strchr(kv, '=') : NULL;
            if (eq == NULL || eq == kv) {
                sc_errf(errstr, errstr_size, "topic config \"%s\" is not key=value",
                        kv != NULL ? kv : "(null)");
                t->cfg_count = (int)i;
                struct sc_op *op = sc_op_create(&sc_topic_op, SC_OP_CREATE_TOPIC, t);
                if (op != NULL) {
                    sc_op_free(op);
                }
                return SAMSA_ERR_INVALID_ARG;
            }
            t->cfg_names[i] = sc_strndup(kv, (size_t)(eq - kv));
            t->cfg_values[i] = sc_strdup(eq + 1);
            t->cfg_count = (int)i + 1;
            if (t->cfg_names[i] == NULL || t->cfg_values[i] == NULL) {
                goto out_nomem;
            }
        }
    }
    return run_topic_op(a, SC_OP_CREATE_TOPIC, t, timeout_ms, errstr, errstr_size);
out_nomem: {
    struct sc_op *op = sc_op_create(&sc_topic_op, SC_OP_CREATE_TOPIC, t);
    sc_op_free(op);
    sc_errf(errstr, errstr_size, "out of memory");
    return SAMSA_ERR_NOMEM;
}
}

int samsa_admin_create_topic(samsa_admin *a, const struct samsa_new_topic *nt, int timeout_ms,
                             char *errstr, size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_create_topic: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_create_topic(a, nt, timeout_ms, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_delete_topic(samsa_admin *a, const char *name, int timeout_ms, char *errstr,
                             size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || name == NULL || name[0] == '\0') {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_topic_arg *t = topic_arg(name);
    if (t == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    return run_topic_op(a, SC_OP_DELETE_TOPIC, t, timeout_ms, errstr, errstr_size);
}

int samsa_admin_delete_topic(samsa_admin *a, const char *name, int timeout_ms, char *errstr,
                             size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_delete_topic: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_delete_topic(a, name, timeout_ms, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_metadata(samsa_admin *a, const char *const *topics, size_t count, int timeout_ms,
                         samsa_metadata **out)
{
    if (a == NULL || out == NULL || (topics == NULL && count > 0) || count > 100000) {
        return SAMSA_ERR_INVALID_ARG;
    }
    *out = NULL;
    struct sc_md_arg *m = kp_calloc(1, sizeof(*m));
    if (m == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    struct sc_op *op = sc_op_create(&sc_metadata_op, SC_OP_METADATA, m);
    if (op == NULL) {
        kp_free(m);
        return SAMSA_ERR_NOMEM;
    }
    if (topics != NULL) {
        m->topics = kp_calloc(count > 0 ? count : 1, sizeof(char *));
        if (m->topics == NULL) {
            sc_op_free(op);
            return SAMSA_ERR_NOMEM;
        }
        for (size_t i = 0; i < count; i++) {
            m->topics[i] = sc_strdup(topics[i] != NULL ? topics[i] : "");
            if (m->topics[i] == NULL) {
                sc_op_free(op);
                return SAMSA_ERR_NOMEM;
            }
            m->count = (int)i + 1;
        }
    }
    int err = sc_op_run(a->c, &op, timeout_ms, NULL, 0);
    if (op != NULL) {
        if (err == SAMSA_OK) {
            *out = m->md;
            m->md = NULL;
        }
        sc_op_free(op);
    }
    return err;
}

int samsa_admin_metadata(samsa_admin *a, const char *const *topics, size_t count, int timeout_ms,
                         samsa_metadata **out)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_metadata(a, topics, count, timeout_ms, out);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_watermarks(samsa_admin *a, const char *topic, int32_t partition, int64_t *low,
                           int64_t *high, int timeout_ms)
{
    if (a == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return sc_list_offset(a->c, topic, partition, SC_WATERMARKS, low, high, timeout_ms);
}

int samsa_admin_watermarks(samsa_admin *a, const char *topic, int32_t partition, int64_t *low,
                           int64_t *high, int timeout_ms)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_watermarks(a, topic, partition, low, high, timeout_ms);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_list_offset(samsa_admin *a, const char *topic, int32_t partition,
                            int64_t timestamp, int64_t *offset, int timeout_ms)
{
    if (a == NULL || topic == NULL || partition < 0 || offset == NULL ||
        (timestamp < 0 && timestamp != SAMSA_OFFSET_BEGINNING && timestamp != SAMSA_OFFSET_END)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return sc_list_offset(a->c, topic, partition, timestamp, offset, NULL, timeout_ms);
}

int samsa_admin_list_offset(samsa_admin *a, const char *topic, int32_t partition,
                            int64_t timestamp, int64_t *offset, int timeout_ms)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_list_offset(a, topic, partition, timestamp, offset, timeout_ms);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

/* ------------------------------------------------------- the other ops */

static struct sc_admin_arg *admin_arg(const char *name)
{
    struct sc_admin_arg *x = kp_calloc(1, sizeof(*x));
    if (x == NULL) {
        return NULL;
    }
    x->name = sc_strdup(name != NULL ? name : "");
    if (x->name == NULL) {
        kp_free(x);
        return NULL;
    }
    return x;
}

/* Runs an admin op on x (freed in every case); *keep receives the finished
 * op when the caller wants its results (it frees it with sc_op_free). */
static int run_admin(samsa_admin *a, const struct sc_op_ops *ops, int kind, struct sc_admin_arg *x,
                     int timeout_ms, char *errstr, size_t errstr_size, struct sc_op **keep)
{
    if (keep != NULL) {
        *keep = NULL;
    }
    struct sc_op *op = x != NULL ? sc_op_create(ops, kind, x) : NULL;
    if (op == NULL) {
        sc_admin_arg_free(x);
        sc_errf(errstr, errstr_size, "out of memory");
        return SAMSA_ERR_NOMEM;
    }
    int err = sc_op_run(a->c, &op, timeout_ms, errstr, errstr_size);
    if (op != NULL && keep != NULL) {
        *keep = op; /* finished, with or without an error */
    } else {
        sc_op_free(op);
    }
    return err;
}

/* A copy of parts (topics copied); NULL when out of memory. */
static struct samsa_partition *parts_dup(const struct samsa_partition *parts, size_t count)
{
    struct samsa_partition *p = kp_calloc(count > 0 ? count : 1, sizeof(*p));
    for (size_t i = 0; p != NULL && i < count; i++) {
        p[i] = parts[i];
        p[i].topic = sc_strdup(parts[i].topic);
        if (p[i].topic == NULL) {
            samsa_partitions_free(p, i);
            return NULL;
        }
    }
    return p;
}

static int gated_admin_create_partitions(samsa_admin *a, const char *topic, int32_t total, int timeout_ms,
                                  char *errstr, size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || topic == NULL || topic[0] == '\0' || total < 1) {
        sc_errf(errstr, errstr_size, "a topic name and a partition count of at least 1");
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_admin_arg *x = admin_arg(topic);
    if (x != NULL) {
        x->total = total;
    }
    return run_admin(a, &sc_create_partitions_op, SC_OP_CREATE_PARTITIONS, x,
                     timeout_ms, errstr, errstr_size, NULL);
}

int samsa_admin_create_partitions(samsa_admin *a, const char *topic, int32_t total, int timeout_ms,
                                  char *errstr, size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_create_partitions: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_create_partitions(a, topic, total, timeout_ms, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_delete_records(samsa_admin *a, struct samsa_partition *parts, size_t count,
                               int timeout_ms, char *errstr, size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || parts == NULL || count == 0 || count > 100000) {
        return SAMSA_ERR_INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || parts[i].partition < 0 ||
            (parts[i].offset < 0 && parts[i].offset != SAMSA_OFFSET_END)) {
            sc_errf(errstr, errstr_size, "partition %zu: a topic, a partition and an offset "
                                         "(or SAMSA_OFFSET_END)", i);
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    struct sc_admin_arg *x = admin_arg("");
    if (x != NULL) {
        x->parts = parts_dup(parts, count);
        x->part_count = x->parts != NULL ? count : 0;
        x->leaders = kp_calloc(count, sizeof(*x->leaders));
        if (x->parts == NULL || x->leaders == NULL) {
            sc_admin_arg_free(x);
            x = NULL;
        }
    }
    struct sc_op *op = NULL;
    int err = run_admin(a, &sc_delete_records_op, SC_OP_DELETE_RECORDS, x,
                        timeout_ms, errstr, errstr_size, &op);
    for (size_t i = 0; op == NULL && i < count; i++) {
        parts[i].offset = -1; /* timed out: unknown */
    }
    if (op != NULL) {
        struct sc_admin_arg *res = op->arg;
        for (size_t i = 0; i < count; i++) {
            parts[i].offset = res->parts[i].offset;
        }
        sc_op_free(op);
    }
    return err;
}

int samsa_admin_delete_records(samsa_admin *a, struct samsa_partition *parts, size_t count,
                               int timeout_ms, char *errstr, size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_delete_records: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_delete_records(a, parts, count, timeout_ms, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int copy_cfg_ops(struct sc_admin_arg *x, const struct samsa_config_op *ops, size_t count)
{
    x->cfg_names = kp_calloc(count > 0 ? count : 1, sizeof(char *));
    x->cfg_values = kp_calloc(count > 0 ? count : 1, sizeof(char *));
    if (x->cfg_names == NULL || x->cfg_values == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        x->cfg_names[i] = sc_strdup(ops[i].name);
        x->cfg_values[i] = ops[i].value != NULL ? sc_strdup(ops[i].value) : NULL;
        x->cfg_count = (int)i + 1;
        if (x->cfg_names[i] == NULL || (ops[i].value != NULL && x->cfg_values[i] == NULL)) {
            return SAMSA_ERR_NOMEM;
        }
    }
    return SAMSA_OK;
}

static bool resource_ok(int type, const char *name)
{
    return (type == SAMSA_RESOURCE_TOPIC || type == SAMSA_RESOURCE_BROKER) && name != NULL &&
           name[0] != '\0';
}

static int gated_admin_describe_configs(samsa_admin *a, int resource_type, const char *name,
                                 int timeout_ms, samsa_configs **out, char *errstr,
                                 size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || out == NULL || !resource_ok(resource_type, name)) {
        sc_errf(errstr, errstr_size, "a resource type (topic or broker) and a name");
        return SAMSA_ERR_INVALID_ARG;
    }
    *out = NULL;
    struct sc_admin_arg *x = admin_arg(name);
    if (x != NULL) {
        x->resource_type = (int8_t)resource_type;
    }
    struct sc_op *op = NULL;
    int err = run_admin(a, &sc_configs_op, SC_OP_DESCRIBE_CONFIGS, x,
                        timeout_ms, errstr, errstr_size, &op);
    if (op != NULL) {
        struct sc_admin_arg *res = op->arg;
        if (err == SAMSA_OK) {
            *out = res->configs;
            res->configs = NULL;
        }
        sc_op_free(op);
    }
    return err;
}

int samsa_admin_describe_configs(samsa_admin *a, int resource_type, const char *name,
                                 int timeout_ms, samsa_configs **out, char *errstr,
                                 size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_describe_configs: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_describe_configs(a, resource_type, name, timeout_ms, out, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_alter_configs(samsa_admin *a, int resource_type, const char *name,
                              const struct samsa_config_op *ops, size_t count, int timeout_ms,
                              char *errstr, size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || !resource_ok(resource_type, name) || ops == NULL || count == 0 ||
        count > 1000) {
        sc_errf(errstr, errstr_size, "a resource type (topic or broker), a name and 1 to 1000 "
                                     "changes");
        return SAMSA_ERR_INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        if (ops[i].name == NULL || ops[i].name[0] == '\0') {
            sc_errf(errstr, errstr_size, "change %zu has no name", i);
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    struct sc_admin_arg *x = admin_arg(name);
    if (x != NULL) {
        x->resource_type = (int8_t)resource_type;
        if (copy_cfg_ops(x, ops, count) != SAMSA_OK) {
            sc_admin_arg_free(x);
            x = NULL;
        }
    }
    return run_admin(a, &sc_configs_op, SC_OP_ALTER_CONFIGS, x,
                     timeout_ms, errstr, errstr_size, NULL);
}

int samsa_admin_alter_configs(samsa_admin *a, int resource_type, const char *name,
                              const struct samsa_config_op *ops, size_t count, int timeout_ms,
                              char *errstr, size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_alter_configs: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_alter_configs(a, resource_type, name, ops, count, timeout_ms, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_list_groups(samsa_admin *a, int timeout_ms, samsa_group_list **out, char *errstr,
                            size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || out == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    *out = NULL;
    struct sc_op *op = NULL;
    int err = run_admin(a, &sc_list_groups_op, SC_OP_LIST_GROUPS, admin_arg(""),
                        timeout_ms, errstr, errstr_size, &op);
    if (op != NULL) {
        struct sc_admin_arg *res = op->arg;
        if (err == SAMSA_OK) {
            *out = res->groups;
            res->groups = NULL;
        }
        sc_op_free(op);
    }
    return err;
}

int samsa_admin_list_groups(samsa_admin *a, int timeout_ms, samsa_group_list **out, char *errstr,
                            size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_list_groups: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_list_groups(a, timeout_ms, out, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_describe_group(samsa_admin *a, const char *group, int timeout_ms,
                               samsa_group_description **out, char *errstr, size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || out == NULL || group == NULL || group[0] == '\0') {
        return SAMSA_ERR_INVALID_ARG;
    }
    *out = NULL;
    struct sc_op *op = NULL;
    int err =
        run_admin(a, &sc_group_op, SC_OP_DESCRIBE_GROUP, admin_arg(group),
                  timeout_ms, errstr, errstr_size, &op);
    if (op != NULL) {
        struct sc_admin_arg *res = op->arg;
        if (err == SAMSA_OK) {
            *out = res->desc;
            res->desc = NULL;
        }
        sc_op_free(op);
    }
    return err;
}

int samsa_admin_describe_group(samsa_admin *a, const char *group, int timeout_ms,
                               samsa_group_description **out, char *errstr, size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_describe_group: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_describe_group(a, group, timeout_ms, out, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_list_group_offsets(samsa_admin *a, const char *group, int timeout_ms,
                                   struct samsa_partition **parts, size_t *count, char *errstr,
                                   size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || group == NULL || group[0] == '\0' || parts == NULL || count == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    *parts = NULL;
    *count = 0;
    struct sc_op *op = NULL;
    int err =
        run_admin(a, &sc_group_op, SC_OP_GROUP_OFFSETS, admin_arg(group),
                  timeout_ms, errstr, errstr_size, &op);
    if (op != NULL) {
        struct sc_admin_arg *res = op->arg;
        if (err == SAMSA_OK) {
            *parts = res->out;
            *count = res->out_count;
            res->out = NULL;
            res->out_count = 0;
        }
        sc_op_free(op);
    }
    return err;
}

int samsa_admin_list_group_offsets(samsa_admin *a, const char *group, int timeout_ms,
                                   struct samsa_partition **parts, size_t *count, char *errstr,
                                   size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_list_group_offsets: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_list_group_offsets(a, group, timeout_ms, parts, count, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_alter_group_offsets(samsa_admin *a, const char *group,
                                    const struct samsa_partition *parts, size_t count,
                                    int timeout_ms, char *errstr, size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || group == NULL || group[0] == '\0' || parts == NULL || count == 0 ||
        count > 100000) {
        return SAMSA_ERR_INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || parts[i].partition < 0 || parts[i].offset < 0) {
            sc_errf(errstr, errstr_size, "partition %zu: a topic, a partition and an offset", i);
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    struct sc_admin_arg *x = admin_arg(group);
    if (x != NULL) {
        x->parts = parts_dup(parts, count);
        x->part_count = x->parts != NULL ? count : 0;
        if (x->parts == NULL) {
            sc_admin_arg_free(x);
            x = NULL;
        }
    }
    return run_admin(a, &sc_group_op, SC_OP_ALTER_GROUP_OFFSETS, x,
                     timeout_ms, errstr, errstr_size, NULL);
}

int samsa_admin_alter_group_offsets(samsa_admin *a, const char *group,
                                    const struct samsa_partition *parts, size_t count,
                                    int timeout_ms, char *errstr, size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_alter_group_offsets: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_alter_group_offsets(a, group, parts, count, timeout_ms, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

static int gated_admin_delete_group(samsa_admin *a, const char *group, int timeout_ms, char *errstr,
                             size_t errstr_size)
{
    sc_errf(errstr, errstr_size, "%s", "");
    if (a == NULL || group == NULL || group[0] == '\0') {
        return SAMSA_ERR_INVALID_ARG;
    }
    return run_admin(a, &sc_group_op, SC_OP_DELETE_GROUP, admin_arg(group),
                     timeout_ms, errstr, errstr_size,
                     NULL);
}

int samsa_admin_delete_group(samsa_admin *a, const char *group, int timeout_ms, char *errstr,
                             size_t errstr_size)
{
    if (a != NULL && !sc_gate_enter(&a->gate)) {
        sc_errf(errstr, errstr_size, "samsa_admin_delete_group: the handle is closed");
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_admin_delete_group(a, group, timeout_ms, errstr, errstr_size);
    if (a != NULL) {
        sc_gate_leave(&a->gate);
    }
    return ret;
}

/* ------------------------------------------------------------- the kind */

/* An admin handle keeps no state of its own on the I/O loop and no metadata:
 * each call is an op that asks for what it needs. */
const struct sc_kind_ops sc_admin_kind = {
    .tag = 'a',
    .type = "admin",
};
