/* samsa-broker: ACLs and the decision (see acl.h). */
#include "auth/acl.h"

#include <string.h>
#include <strings.h>

#include <samsa-protocol/alloc.h>

void br_acl_store_init(struct br_acl_store *s)
{
    memset(s, 0, sizeof *s);
}

static void acls_free(struct br_acl *acls, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kp_free(acls[i].principal);
        kp_free(acls[i].host);
    }
    kp_free(acls);
}

static void resource_free(struct br_acl_resource *r)
{
    acls_free(r->acls, r->n);
    kp_free(r->name);
}

void br_acl_store_fini(struct br_acl_store *s)
{
    for (size_t i = 0; i < s->n; i++) {
        resource_free(&s->res[i]);
    }
    kp_free(s->res);
    memset(s, 0, sizeof *s);
}

static char *dup_n(const char *p, size_t n)
{
    char *s = kp_malloc(n + 1);
    if (s != NULL) {
        if (n > 0) {
            memcpy(s, p, n);
        }
        s[n] = '\0';
    }
    return s;
}

static bool same(const char *a, const char *b, size_t blen)
{
    return strlen(a) == blen && (blen == 0 || memcmp(a, b, blen) == 0);
}

struct br_acl_resource *br_acl_find(const struct br_acl_store *s, int8_t type, int8_t pattern,
                                    const char *name, size_t len)
{
    for (size_t i = 0; i < s->n; i++) {
        struct br_acl_resource *r = &s->res[i];
        if (r->type == type && r->pattern == pattern && same(r->name, name, len)) {
            return r;
        }
    }
    return NULL;
}

/* The resource pattern, made empty when missing; NULL: out of memory. */
static struct br_acl_resource *resource_get(struct br_acl_store *s, int8_t type, int8_t pattern,
                                            const char *name, size_t len)
{
    struct br_acl_resource *r = br_acl_find(s, type, pattern, name, len);
    if (r != NULL) {
        return r;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap == 0 ? 8 : s->cap * 2;
        struct br_acl_resource *v = kp_realloc(s->res, cap * sizeof *v);
        if (v == NULL) {
            return NULL;
        }
        s->res = v;
        s->cap = cap;
    }
    char *copy = dup_n(name, len);
    if (copy == NULL) {
        return NULL;
    }
    r = &s->res[s->n++];
    memset(r, 0, sizeof *r);
    r->type = type;
    r->pattern = pattern;
    r->name = copy;
    return r;
}

static void resource_remove(struct br_acl_store *s, struct br_acl_resource *r)
{
    size_t i = (size_t)(r - s->res);
    resource_free(r);
    memmove(s->res + i, s->res + i + 1, (s->n - i - 1) * sizeof *s->res);
    s->n--;
}

/* Appends an entry (its strings copied) unless r has it. */
static int entry_add(struct br_acl_resource *r, const char *principal, size_t plen, const char *host,
                     size_t hlen, int8_t op, int8_t perm)
{
    for (size_t i = 0; i < r->n; i++) {
        const struct br_acl *a = &r->acls[i];
        if (a->op == op && a->perm == perm && same(a->principal, principal, plen) &&
            same(a->host, host, hlen)) {
            return 0;
        }
    }
    if (r->n == r->cap) {
        size_t cap = r->cap == 0 ? 4 : r->cap * 2;
        struct br_acl *v = kp_realloc(r->acls, cap * sizeof *v);
        if (v == NULL) {
            return KP_E_NOMEM;
        }
        r->acls = v;
        r->cap = cap;
    }
    char *p = dup_n(principal, plen);
    char *h = dup_n(host, hlen);
    if (p == NULL || h == NULL) {
        kp_free(p);
        kp_free(h);
        return KP_E_NOMEM;
    }
    r->acls[r->n++] = (struct br_acl){p, h, op, perm};
    return 0;
}

void br_acl_remove(struct br_acl_store *s, int8_t type, int8_t pattern, const char *name,
                   size_t len)
{
    struct br_acl_resource *old = br_acl_find(s, type, pattern, name, len);
    if (old != NULL) {
        resource_remove(s, old);
    }
}

int br_acl_set(struct br_acl_store *s, int8_t type, int8_t pattern, const char *name, size_t len,
               const struct br_acl *acls, size_t n)
{
    if (n == 0) {
        br_acl_remove(s, type, pattern, name, len);
        return 0;
    }
    /* built apart, then swapped in: a failure leaves the store as it was */
    struct br_acl_resource fresh = {type, pattern, NULL, NULL, 0, 0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = entry_add(&fresh, acls[i].principal, strlen(acls[i].principal), acls[i].host,
                       strlen(acls[i].host), acls[i].op, acls[i].perm);
    }
    struct br_acl_resource *r = rc == 0 ? resource_get(s, type, pattern, name, len) : NULL;
    if (r == NULL) {
        acls_free(fresh.acls, fresh.n);
        return KP_E_NOMEM;
    }
    acls_free(r->acls, r->n);
    r->acls = fresh.acls;
    r->n = fresh.n;
    r->cap = fresh.cap;
    return 0;
}

int br_acl_add(struct br_acl_store *s, const struct br_acl_binding *b)
{
    struct br_acl_resource *r = resource_get(s, b->type, b->pattern, b->name, b->name_len);
    if (r == NULL) {
        return KP_E_NOMEM;
    }
    int rc = entry_add(r, b->principal, b->principal_len, b->host, b->host_len, b->op, b->perm);
    if (rc != 0 && r->n == 0) {
        resource_remove(s, r);
    }
    return rc;
}

bool br_acl_binding_valid(const struct br_acl_binding *b)
{
    return b->type > BR_ACL_RES_ANY && b->type <= BR_ACL_RES_DELEGATION_TOKEN &&
           (b->pattern == BR_ACL_PAT_LITERAL || b->pattern == BR_ACL_PAT_PREFIXED) &&
           b->name != NULL && b->principal != NULL && b->host != NULL &&
           b->op > BR_ACL_OP_ANY && b->op <= BR_ACL_OP_IDEMPOTENT_WRITE &&
           (b->perm == BR_ACL_PERM_DENY || b->perm == BR_ACL_PERM_ALLOW);
}

bool br_acl_filter_matches(const struct br_acl_binding *f, const struct br_acl_resource *r,
                           const struct br_acl *a)
{
    /* ResourcePatternFilter.matches */
    if (f->type != BR_ACL_RES_ANY && f->type != r->type) {
        return false;
    }
    if (f->pattern != BR_ACL_PAT_ANY && f->pattern != BR_ACL_PAT_MATCH &&
        f->pattern != r->pattern) {
        return false;
    }
    if (f->name != NULL) {
        bool hit;
        if (f->pattern == BR_ACL_PAT_ANY || f->pattern == r->pattern) {
            hit = same(r->name, f->name, f->name_len);
        } else if (r->pattern == BR_ACL_PAT_LITERAL) {
            hit = same(r->name, f->name, f->name_len) || strcmp(r->name, BR_ACL_WILDCARD) == 0;
        } else {
            size_t pl = strlen(r->name);
            hit = pl <= f->name_len && memcmp(f->name, r->name, pl) == 0;
        }
        if (!hit) {
            return false;
        }
    }
    /* AccessControlEntryFilter.matches */
    if (f->principal != NULL && !same(a->principal, f->principal, f->principal_len)) {
        return false;
    }
    if (f->host != NULL && !same(a->host, f->host, f->host_len)) {
        return false;
    }
    if (f->op != BR_ACL_OP_ANY && f->op != a->op) {
        return false;
    }
    return f->perm == BR_ACL_PERM_ANY || f->perm == a->perm;
}

/* Whether resource pattern r applies to resource (type, name)
 * (SimpleAclAuthorizer.getMatchingAcls). */
static bool applies(const struct br_acl_resource *r, enum br_acl_rtype type, const char *name,
                    size_t len)
{
    if (r->type != (int8_t)type) {
        return false;
    }
    if (r->pattern == BR_ACL_PAT_LITERAL) {
        return strcmp(r->name, BR_ACL_WILDCARD) == 0 || same(r->name, name, len);
    }
    size_t pl = strlen(r->name);
    return r->pattern == BR_ACL_PAT_PREFIXED && pl <= len && memcmp(name, r->name, pl) == 0;
}

/* Whether an ACL of permission perm grants or denies op to (principal,
 * host): its principal, host and operation match (aclMatch). */
static bool entry_matches(const struct br_acl *a, int8_t perm, const char *principal,
                          const char *host, enum br_acl_op op)
{
    return a->perm == perm &&
           (strcmp(a->principal, principal) == 0 || strcmp(a->principal, BR_ACL_ANY_USER) == 0) &&
           (a->op == (int8_t)op || a->op == BR_ACL_OP_ALL) &&
           (strcmp(a->host, host) == 0 || strcmp(a->host, BR_ACL_WILDCARD) == 0);
}

bool br_acl_authorize(const struct br_acl_store *s, const struct br_acl_config *cfg,
                      const char *principal, const char *host, enum br_acl_op op,
                      enum br_acl_rtype type, const char *name, size_t len)
{
    for (size_t i = 0; i < cfg->nsuper; i++) {
        if (strcmp(cfg->super_users[i], principal) == 0) {
            return true;
        }
    }
    /* what op implies for an ALLOW (Describe by Read, Write, Delete and
     * Alter; DescribeConfigs by AlterConfigs) */
    static const enum br_acl_op describe_by[] = {BR_ACL_OP_DESCRIBE, BR_ACL_OP_READ,
                                                 BR_ACL_OP_WRITE, BR_ACL_OP_DELETE,
                                                 BR_ACL_OP_ALTER};
    static const enum br_acl_op describe_configs_by[] = {BR_ACL_OP_DESCRIBE_CONFIGS,
                                                         BR_ACL_OP_ALTER_CONFIGS};
    const enum br_acl_op *allow_ops = &op;
    size_t nallow = 1;
    if (op == BR_ACL_OP_DESCRIBE) {
        allow_ops = describe_by;
        nallow = sizeof describe_by / sizeof describe_by[0];
    } else if (op == BR_ACL_OP_DESCRIBE_CONFIGS) {
        allow_ops = describe_configs_by;
        nallow = sizeof describe_configs_by / sizeof describe_configs_by[0];
    }
    bool any = false;
    bool allowed = false;
    for (size_t i = 0; i < s->n; i++) {
        const struct br_acl_resource *r = &s->res[i];
        if (r->n == 0 || !applies(r, type, name, len)) {
            continue;
        }
        any = true;
        for (size_t k = 0; k < r->n; k++) {
            if (entry_matches(&r->acls[k], BR_ACL_PERM_DENY, principal, host, op)) {
                return false; /* a Deny wins */
            }
            for (size_t j = 0; !allowed && j < nallow; j++) {
                allowed = entry_matches(&r->acls[k], BR_ACL_PERM_ALLOW, principal, host,
                                        allow_ops[j]);
            }
        }
    }
    return allowed || (!any && cfg->allow_if_no_acl);
}

/* ---------------------------------------------------------------- names */

static const char *const rtype_names[] = {"Unknown", "Any",   "Topic",          "Group",
                                          "Cluster", "TransactionalId", "DelegationToken"};
static const char *const op_names[] = {"Unknown", "Any", "All",   "Read",  "Write",
                                       "Create",  "Delete", "Alter", "Describe", "ClusterAction",
                                       "DescribeConfigs", "AlterConfigs", "IdempotentWrite"};
static const char *const perm_names[] = {"Unknown", "Any", "Deny", "Allow"};
static const char *const pattern_names[] = {"Unknown", "Any", "Match", "Literal", "Prefixed"};

#define NAME_OF(table, v)                                                                         \
    ((v) >= 0 && (size_t)(v) < sizeof(table) / sizeof((table)[0]) ? (table)[v] : "Unknown")

const char *br_acl_rtype_name(int8_t t)
{
    return NAME_OF(rtype_names, t);
}

const char *br_acl_op_name(int8_t op)
{
    return NAME_OF(op_names, op);
}

const char *br_acl_perm_name(int8_t p)
{
    return NAME_OF(perm_names, p);
}

const char *br_acl_pattern_name(int8_t p)
{
    return NAME_OF(pattern_names, p);
}

/* The index of s among names[first..n), case-insensitively; -1. */
static int parse_name(const char *const *names, size_t n, size_t first, const char *s, size_t len)
{
    for (size_t i = first; i < n; i++) {
        if (strlen(names[i]) == len && strncasecmp(names[i], s, len) == 0) {
            return (int)i;
        }
    }
    return -1;
}

int br_acl_rtype_parse(const char *s, size_t len)
{
    return parse_name(rtype_names, sizeof rtype_names / sizeof rtype_names[0], 2, s, len);
}

int br_acl_op_parse(const char *s, size_t len)
{
    return parse_name(op_names, sizeof op_names / sizeof op_names[0], 2, s, len);
}

int br_acl_perm_parse(const char *s, size_t len)
{
    return parse_name(perm_names, sizeof perm_names / sizeof perm_names[0], 2, s, len);
}

int16_t br_acl_denied_error(enum br_acl_rtype type)
{
    switch (type) {
    case BR_ACL_RES_TOPIC:
        return KP_ERR_TOPIC_AUTHORIZATION_FAILED;
    case BR_ACL_RES_GROUP:
        return KP_ERR_GROUP_AUTHORIZATION_FAILED;
    case BR_ACL_RES_TXN_ID:
        return KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    case BR_ACL_RES_DELEGATION_TOKEN:
        return KP_ERR_DELEGATION_TOKEN_AUTHORIZATION_FAILED;
    default:
        return KP_ERR_CLUSTER_AUTHORIZATION_FAILED;
    }
}
