/*
 * The admin handle: topics and cluster metadata, each call an op (ops.c)
 * that the I/O thread carries out while the caller waits.
 */
#include <string.h>

#include "consumer.h"

struct samsa_admin {
    struct sc_client *c;
};

samsa_admin *samsa_admin_new(const samsa_conf *conf, char *errstr, size_t errstr_size)
{
    samsa_admin *a = kp_calloc(1, sizeof(*a));
    if (a == NULL) {
        sc_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    if (sc_client_new('a', conf, &a->c, errstr, errstr_size) != SAMSA_OK) {
        kp_free(a);
        return NULL;
    }
    return a;
}

void samsa_admin_close(samsa_admin *a)
{
    if (a != NULL) {
        sc_client_destroy(a->c);
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
    struct sc_op *op = sc_op_new(kind, t);
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

int samsa_admin_create_topic(samsa_admin *a, const struct samsa_new_topic *nt, int timeout_ms,
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
                struct sc_op *op = sc_op_new(SC_OP_CREATE_TOPIC, t);
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
    struct sc_op *op = sc_op_new(SC_OP_CREATE_TOPIC, t);
    sc_op_free(op);
    sc_errf(errstr, errstr_size, "out of memory");
    return SAMSA_ERR_NOMEM;
}
}

int samsa_admin_delete_topic(samsa_admin *a, const char *name, int timeout_ms, char *errstr,
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

int samsa_admin_metadata(samsa_admin *a, const char *const *topics, size_t count, int timeout_ms,
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
    struct sc_op *op = sc_op_new(SC_OP_METADATA, m);
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

int samsa_admin_watermarks(samsa_admin *a, const char *topic, int32_t partition, int64_t *low,
                           int64_t *high, int timeout_ms)
{
    if (a == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return sc_watermarks(a->c, topic, partition, low, high, timeout_ms);
}
