/* samsa-broker: Kafka 2.0's ACL znodes (see zk_json.h): the ACLs of a
 * resource pattern, /kafka-acl/<type>/<name> and
 * /kafka-acl-extended/prefixed/<type>/<name> (Acl.toJsonCompatibleMap,
 * Acl.fromBytes), and the extended change notification
 * (ExtendedAclChangeEvent, ZkData.scala 600-660). */
#define _POSIX_C_SOURCE 200809L

#include "cluster/zk_json_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <samsa-protocol/alloc.h>

/* An entry's name field read with the parser of its kind (case-insensitive,
 * as Kafka's fromString). */
static int acl_name(const struct dec *d, json_t *o, size_t i, const char *key,
                    int (*parse)(const char *, size_t), int *out)
{
    char qb[QMAX];
    const char *s = NULL;
    size_t n = 0;
    int rc = get_string(d, o, key, true, &s, &n);
    if (rc != 0) {
        return rc;
    }
    *out = parse(s, n);
    if (*out < 0) {
        return fail(d, KP_E_CORRUPT, "ACL %zu: %s %s is not one Kafka knows", i, key,
                    zkj_q(s, n, qb));
    }
    return 0;
}

/* A text field of an entry, copied (no control byte, at most max bytes). */
static int acl_text(const struct dec *d, json_t *o, size_t i, const char *key, size_t max,
                    char **out)
{
    char qb[QMAX];
    const char *s = NULL;
    size_t n = 0;
    int rc = get_string(d, o, key, true, &s, &n);
    if (rc != 0) {
        return rc;
    }
    if (n == 0 || n > max || zkj_has_control_byte(s, n)) {
        return fail(d, KP_E_CORRUPT, "ACL %zu: %s %s is empty, too long or holds a control byte",
                    i, key, zkj_q(s, n, qb));
    }
    *out = kp_malloc(n + 1);
    if (*out == NULL) {
        return KP_E_NOMEM;
    }
    memcpy(*out, s, n);
    (*out)[n] = '\0';
    return 0;
}

void br_zk_acls_free(struct br_acl *acls, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kp_free(acls[i].principal);
        kp_free(acls[i].host);
    }
    kp_free(acls);
}

int br_zk_acls_decode(const char *buf, size_t len, const char *name, struct br_acl **out,
                      size_t *n_out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    *out = NULL;
    *n_out = 0;
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    int32_t version = 0;
    rc = get_int32(&d, root, "version", INT32_MIN, &version);
    if (rc == 0 && version != 1) {
        rc = fail(&d, KP_E_UNSUPPORTED, "version %d: Kafka reads version 1", (int)version);
    }
    json_t *arr = rc == 0 ? json_object_get(root, "acls") : NULL;
    if (rc == 0 && !json_is_array(arr)) {
        rc = fail(&d, KP_E_CORRUPT, "\"acls\" is %s, not an array",
                  arr == NULL ? "missing" : zkj_type_name(arr));
    }
    size_t n = rc == 0 ? json_array_size(arr) : 0;
    if (rc == 0 && n > BR_ZK_ACLS_MAX) {
        rc = fail(&d, KP_E_TOO_LARGE, "%zu ACLs: more than %d", n, BR_ZK_ACLS_MAX);
    }
    struct br_acl *acls = rc == 0 && n > 0 ? kp_calloc(n, sizeof *acls) : NULL;
    if (rc == 0 && n > 0 && acls == NULL) {
        rc = KP_E_NOMEM;
    }
    size_t got = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *o = json_array_get(arr, i);
        if (!json_is_object(o)) {
            rc = fail(&d, KP_E_CORRUPT, "ACL %zu is %s, not an object", i, zkj_type_name(o));
            break;
        }
        int op = 0;
        int perm = 0;
        struct br_acl *a = &acls[got];
        rc = acl_name(&d, o, i, "operation", br_acl_op_parse, &op);
        if (rc == 0) {
            rc = acl_name(&d, o, i, "permissionType", br_acl_perm_parse, &perm);
        }
        if (rc == 0) {
            rc = acl_text(&d, o, i, "principal", BR_ZK_ACL_TEXT_MAX, &a->principal);
        }
        if (rc == 0) {
            rc = acl_text(&d, o, i, "host", BR_ZK_ACL_TEXT_MAX, &a->host);
        }
        if (rc == 0 && memchr(a->principal, ':', strlen(a->principal)) == NULL) {
            rc = fail(&d, KP_E_CORRUPT, "ACL %zu: the principal is not \"Type:name\"", i);
        }
        if (rc != 0) {
            kp_free(a->principal);
            kp_free(a->host);
            a->principal = a->host = NULL;
            break;
        }
        a->op = (int8_t)op;
        a->perm = (int8_t)perm;
        got++;
    }
    json_decref(root);
    if (rc != 0) {
        br_zk_acls_free(acls, got);
        return rc;
    }
    *out = acls;
    *n_out = got;
    return 0;
}

int br_zk_acls_encode(const struct br_acl *acls, size_t n, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (n > BR_ZK_ACLS_MAX) {
        return KP_E_INVALID_ARG;
    }
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    json_t *arr = zkj_enc_array(&e);
    for (size_t i = 0; i < n; i++) {
        const struct br_acl *a = &acls[i];
        if (a->op <= BR_ACL_OP_ANY || a->op > BR_ACL_OP_IDEMPOTENT_WRITE ||
            (a->perm != BR_ACL_PERM_ALLOW && a->perm != BR_ACL_PERM_DENY)) {
            zkj_enc_fail(&e, KP_E_INVALID_ARG);
            break;
        }
        json_t *o = zkj_enc_object(&e);
        zkj_put(&e, o, "principal", zkj_enc_str(&e, a->principal));
        zkj_put(&e, o, "permissionType", zkj_enc_str(&e, br_acl_perm_name(a->perm)));
        zkj_put(&e, o, "operation", zkj_enc_str(&e, br_acl_op_name(a->op)));
        zkj_put(&e, o, "host", zkj_enc_str(&e, a->host));
        zkj_push(&e, arr, o);
    }
    zkj_put(&e, root, "acls", arr);
    return zkj_finish(&e, root, out, out_len);
}

int br_zk_acl_change_decode(const char *buf, size_t len, bool extended, const char *name,
                            struct br_zk_acl_change *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    memset(out, 0, sizeof *out);
    const char *type = NULL;
    size_t type_n = 0;
    const char *rname = NULL;
    size_t rname_n = 0;
    out->pattern = BR_ACL_PAT_LITERAL;
    json_t *root = NULL;
    int rc = 0;
    if (!extended) {
        /* /kafka-acl-changes: "Topic:orders" (LiteralAclChangeEvent) */
        const char *colon = buf != NULL ? memchr(buf, ':', len) : NULL;
        if (colon == NULL) {
            return fail(&d, KP_E_CORRUPT, "%s is not <resource type>:<name>",
                        zkj_q(buf != NULL ? buf : "", buf != NULL ? len : 0, qb));
        }
        type = buf;
        type_n = (size_t)(colon - buf);
        rname = colon + 1;
        rname_n = len - type_n - 1;
    } else {
        rc = zkj_parse(&d, buf, len, &root);
        if (rc != 0) {
            return rc;
        }
        int32_t version = 0;
        const char *pt = NULL;
        size_t pt_n = 0;
        rc = get_int32(&d, root, "version", INT32_MIN, &version);
        if (rc == 0 && version != 1) {
            rc = fail(&d, KP_E_UNSUPPORTED, "version %d: Kafka reads version 1", (int)version);
        }
        if (rc == 0) {
            rc = get_string(&d, root, "resourceType", true, &type, &type_n);
        }
        if (rc == 0) {
            rc = get_string(&d, root, "name", true, &rname, &rname_n);
        }
        if (rc == 0) {
            rc = get_string(&d, root, "patternType", true, &pt, &pt_n);
        }
        if (rc == 0) {
            if (pt_n == 8 && strncasecmp(pt, "PREFIXED", 8) == 0) {
                out->pattern = BR_ACL_PAT_PREFIXED;
            } else if (!(pt_n == 7 && strncasecmp(pt, "LITERAL", 7) == 0)) {
                rc = fail(&d, KP_E_CORRUPT, "patternType %s is neither LITERAL nor PREFIXED",
                          zkj_q(pt, pt_n, qb));
            }
        }
    }
    int t = rc == 0 ? br_acl_rtype_parse(type, type_n) : -1;
    if (rc == 0 && t < 0) {
        rc = fail(&d, KP_E_CORRUPT, "resource type %s is not one Kafka knows",
                  zkj_q(type, type_n, qb));
    }
    if (rc == 0 && (rname_n == 0 || rname_n > BR_ZK_ACL_TEXT_MAX ||
                    zkj_has_control_byte(rname, rname_n))) {
        rc = fail(&d, KP_E_CORRUPT, "resource name %s is empty, too long or holds a control byte",
                  zkj_q(rname, rname_n, qb));
    }
    if (rc == 0) {
        out->type = (int8_t)t;
        memcpy(out->name, rname, rname_n);
        out->name[rname_n] = '\0';
    }
    json_decref(root);
    return rc;
}

int br_zk_acl_change_encode(const struct br_zk_acl_change *c, const char **folder, char **out,
                            size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    const char *type = br_acl_rtype_name(c->type);
    size_t n = strnlen(c->name, sizeof c->name);
    if (n == 0 || n > BR_ZK_ACL_TEXT_MAX || zkj_has_control_byte(c->name, n)) {
        return KP_E_INVALID_ARG;
    }
    if (c->pattern != BR_ACL_PAT_PREFIXED) {
        /* LiteralAclChangeStore: "<type>:<name>", not JSON */
        *folder = "/kafka-acl-changes";
        size_t cap = strlen(type) + 1 + n + 1;
        char *text = kp_malloc(cap);
        if (text == NULL) {
            return KP_E_NOMEM;
        }
        (void)snprintf(text, cap, "%s:%s", type, c->name);
        *out = text;
        *out_len = cap - 1;
        return 0;
    }
    /* ExtendedAclChangeStore's ExtendedAclChangeEvent */
    *folder = "/kafka-acl-extended-changes";
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    zkj_put(&e, root, "resourceType", zkj_enc_str(&e, type));
    zkj_put(&e, root, "name", zkj_enc_strn(&e, c->name, n));
    zkj_put(&e, root, "patternType", zkj_enc_str(&e, "PREFIXED"));
    return zkj_finish(&e, root, out, out_len);
}

bool br_zk_acl_path(int8_t pattern, int8_t type, const char *name, char *buf, size_t len)
{
    if (strchr(name, '/') != NULL || name[0] == '\0') {
        return false;
    }
    int w = snprintf(buf, len, "%s/%s/%s",
                     pattern == BR_ACL_PAT_PREFIXED ? "/kafka-acl-extended/prefixed"
                                                    : "/kafka-acl",
                     br_acl_rtype_name(type), name);
    return w > 0 && (size_t)w < len;
}
