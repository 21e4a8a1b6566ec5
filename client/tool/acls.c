/*
 * samsa acls: a cluster's ACLs as Kafka 2.0's kafka-acls.sh keeps them with
 * --authorizer-properties zookeeper.connect=... (AclCommand.scala): read and
 * written in SimpleAclAuthorizer's znodes, each change announced so that
 * every broker takes it.
 *
 *   samsa acls --zookeeper ZK --list [RESOURCE]...
 *   samsa acls --zookeeper ZK --add|--remove [--allow-principal P]...
 *              [--deny-principal P]... [--allow-host H]... [--deny-host H]...
 *              [--operation OP]... [--producer] [--consumer] RESOURCE...
 *              [--resource-pattern-type literal|prefixed]
 *   RESOURCE: --topic T | --group G | --cluster | --transactional-id ID
 *
 * The znodes are the broker's (broker/src/cluster/zk_json.h, linked in):
 * /kafka-acl/<type>/<name> and /kafka-acl-extended/prefixed/<type>/<name>,
 * written conditionally on the version read and deleted when emptied (as
 * SimpleAclAuthorizer.updateResourceAcls), then a notification in
 * /kafka-acl-changes or /kafka-acl-extended-changes. Output as AclCommand's.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <samsa-protocol/alloc.h>

#include "auth/acl.h"
#include "cluster/zk_json.h"

#include "tool.h"
#include "zk.h"

#define MAX_ITEMS 64

static const char acls_help[] =
    "usage: samsa acls --zookeeper HOST:PORT[/CHROOT] --list [RESOURCE]...\n"
    "       samsa acls --zookeeper HOST:PORT[/CHROOT] --add|--remove\n"
    "                  [--allow-principal P]... [--deny-principal P]...\n"
    "                  [--allow-host H]... [--deny-host H]... [--operation OP]...\n"
    "                  [--producer] [--consumer] RESOURCE...\n"
    "                  [--resource-pattern-type literal|prefixed]\n"
    "RESOURCE: --topic T | --group G | --cluster | --transactional-id ID\n"
    "Principals are Type:name (User:alice, User:CN=alice,O=org); hosts default to *;\n"
    "operations (Read, Write, Create, Delete, Alter, Describe, ClusterAction,\n"
    "DescribeConfigs, AlterConfigs, IdempotentWrite, All) default to All.\n"
    "--producer: Write, Describe and Create on the topics (Write and Describe on\n"
    "the transactional ids); --consumer: Read and Describe on the topics, Read on\n"
    "the groups. --remove without principals removes every ACL of the resources.\n"
    "As Kafka 2.0's kafka-acls.sh --authorizer-properties zookeeper.connect=...:\n"
    "the ACL znodes written and every broker told through a change notification.\n";

struct resource {
    int8_t type;
    const char *name;
};

struct acl_args {
    const char *zookeeper;
    int mode; /* 'l', 'a', 'r' */
    int8_t pattern;
    bool producer, consumer;
    const char *allow[MAX_ITEMS], *deny[MAX_ITEMS], *allow_host[MAX_ITEMS],
        *deny_host[MAX_ITEMS];
    size_t nallow, ndeny, nallow_host, ndeny_host;
    int8_t ops[MAX_ITEMS];
    size_t nops;
    struct resource res[MAX_ITEMS];
    size_t nres;
};

__attribute__((format(printf, 1, 2))) static int usage_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "samsa acls: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", acls_help);
    return EXIT_USAGE;
}

static int push(const char **list, size_t *n, const char *v)
{
    if (*n >= MAX_ITEMS) {
        return -1;
    }
    list[(*n)++] = v;
    return 0;
}

/* -1 when parsed (go on), else the exit status. */
static int parse_args(int argc, char **argv, struct acl_args *a)
{
    memset(a, 0, sizeof *a);
    a->pattern = BR_ACL_PAT_LITERAL;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            fputs(acls_help, stdout);
            return 0;
        }
        if (strcmp(o, "--list") == 0 || strcmp(o, "--add") == 0 || strcmp(o, "--remove") == 0) {
            if (a->mode != 0) {
                return usage_err("%s: one of --list, --add and --remove", o);
            }
            a->mode = strcmp(o, "--list") == 0 ? 'l' : (strcmp(o, "--add") == 0 ? 'a' : 'r');
            continue;
        }
        if (strcmp(o, "--producer") == 0) {
            a->producer = true;
            continue;
        }
        if (strcmp(o, "--consumer") == 0) {
            a->consumer = true;
            continue;
        }
        if (strcmp(o, "--force") == 0) {
            continue; /* kafka-acls.sh's: no question is asked here */
        }
        if (strcmp(o, "--cluster") == 0) {
            if (a->nres < MAX_ITEMS) {
                a->res[a->nres++] = (struct resource){BR_ACL_RES_CLUSTER, BR_ACL_CLUSTER_NAME};
            }
            continue;
        }
        if (v == NULL) {
            return usage_err("%s needs a value", o);
        }
        if (strcmp(o, "--zookeeper") == 0) {
            a->zookeeper = v;
        } else if (strcmp(o, "--authorizer-properties") == 0) {
            if (strncmp(v, "zookeeper.connect=", 18) != 0) {
                return usage_err("--authorizer-properties %s: only zookeeper.connect=...", v);
            }
            a->zookeeper = v + 18;
        } else if (strcmp(o, "--allow-principal") == 0) {
            rc = push(a->allow, &a->nallow, v);
        } else if (strcmp(o, "--deny-principal") == 0) {
            rc = push(a->deny, &a->ndeny, v);
        } else if (strcmp(o, "--allow-host") == 0) {
            rc = push(a->allow_host, &a->nallow_host, v);
        } else if (strcmp(o, "--deny-host") == 0) {
            rc = push(a->deny_host, &a->ndeny_host, v);
        } else if (strcmp(o, "--operation") == 0) {
            int op = br_acl_op_parse(v, strlen(v));
            if (op < BR_ACL_OP_ALL) {
                return usage_err("unknown operation %s", v);
            }
            rc = a->nops < MAX_ITEMS ? 0 : -1;
            if (rc == 0) {
                a->ops[a->nops++] = (int8_t)op;
            }
        } else if (strcmp(o, "--topic") == 0 || strcmp(o, "--group") == 0 ||
                   strcmp(o, "--transactional-id") == 0) {
            int8_t type = strcmp(o, "--topic") == 0   ? BR_ACL_RES_TOPIC
                          : strcmp(o, "--group") == 0 ? BR_ACL_RES_GROUP
                                                      : BR_ACL_RES_TXN_ID;
            rc = a->nres < MAX_ITEMS ? 0 : -1;
            if (rc == 0) {
                a->res[a->nres++] = (struct resource){type, v};
            }
        } else if (strcmp(o, "--resource-pattern-type") == 0) {
            if (strcasecmp(v, "literal") == 0) {
                a->pattern = BR_ACL_PAT_LITERAL;
            } else if (strcasecmp(v, "prefixed") == 0) {
                a->pattern = BR_ACL_PAT_PREFIXED;
            } else {
                return usage_err("--resource-pattern-type %s: literal or prefixed", v);
            }
        } else {
            return usage_err("unknown argument %s", o);
        }
        if (rc != 0) {
            return usage_err("%s: too many", o);
        }
        i++;
    }
    if (a->zookeeper == NULL) {
        return usage_err("%s", "--zookeeper HOST:PORT[/CHROOT] is needed (the ACLs are in ZooKeeper)");
    }
    if (a->mode == 0) {
        return usage_err("%s", "one of --list, --add and --remove is needed");
    }
    if (a->mode != 'l' && a->nres == 0) {
        return usage_err("%s", "a resource is needed (--topic, --group, --cluster, --transactional-id)");
    }
    if (a->mode == 'a' && a->nallow + a->ndeny == 0) {
        return usage_err("%s", "--add needs --allow-principal or --deny-principal");
    }
    const char *const *ps[2] = {a->allow, a->deny};
    size_t nps[2] = {a->nallow, a->ndeny};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < nps[k]; i++) {
            const char *colon = strchr(ps[k][i], ':');
            if (colon == NULL || colon == ps[k][i] || colon[1] == '\0') {
                return usage_err("principal %s is not Type:name (User:alice)", ps[k][i]);
            }
        }
    }
    for (size_t i = 0; i < a->nres; i++) {
        if (a->res[i].name[0] == '\0' || strchr(a->res[i].name, '/') != NULL) {
            return usage_err("resource name \"%s\" cannot be a znode's (empty, or a '/')",
                             a->res[i].name);
        }
    }
    if ((a->producer || a->consumer) && a->nops > 0) {
        return usage_err("%s", "--producer and --consumer choose the operations: no --operation");
    }
    return -1;
}

/* AclCommand's operations for --producer and --consumer, or the ones
 * given (All when none), for a resource of type t. */
static size_t ops_for(const struct acl_args *a, int8_t t, int8_t *out)
{
    size_t n = 0;
    if (a->producer) {
        if (t == BR_ACL_RES_TOPIC) {
            out[n++] = BR_ACL_OP_WRITE;
            out[n++] = BR_ACL_OP_DESCRIBE;
            out[n++] = BR_ACL_OP_CREATE;
        } else if (t == BR_ACL_RES_TXN_ID) {
            out[n++] = BR_ACL_OP_WRITE;
            out[n++] = BR_ACL_OP_DESCRIBE;
        }
    }
    if (a->consumer) {
        if (t == BR_ACL_RES_TOPIC) {
            out[n++] = BR_ACL_OP_READ;
            out[n++] = BR_ACL_OP_DESCRIBE;
        } else if (t == BR_ACL_RES_GROUP) {
            out[n++] = BR_ACL_OP_READ;
        }
    }
    if (a->producer || a->consumer) {
        return n;
    }
    for (size_t i = 0; i < a->nops; i++) {
        out[n++] = a->ops[i];
    }
    if (n == 0) {
        out[n++] = BR_ACL_OP_ALL;
    }
    return n;
}

/* Whether Kafka 2.0's ResourceType supports op (ResourceType.scala's
 * supportedOperations, which AclCommand.validateOperation checks). */
static bool supported(int8_t type, int8_t op)
{
    switch (type) {
    case BR_ACL_RES_TOPIC:
        return op == BR_ACL_OP_READ || op == BR_ACL_OP_WRITE || op == BR_ACL_OP_CREATE ||
               op == BR_ACL_OP_DESCRIBE || op == BR_ACL_OP_DELETE || op == BR_ACL_OP_ALTER ||
               op == BR_ACL_OP_DESCRIBE_CONFIGS || op == BR_ACL_OP_ALTER_CONFIGS ||
               op == BR_ACL_OP_ALL;
    case BR_ACL_RES_GROUP:
        return op == BR_ACL_OP_READ || op == BR_ACL_OP_DESCRIBE || op == BR_ACL_OP_DELETE ||
               op == BR_ACL_OP_ALL;
    case BR_ACL_RES_CLUSTER:
        return op == BR_ACL_OP_CREATE || op == BR_ACL_OP_CLUSTER_ACTION ||
               op == BR_ACL_OP_DESCRIBE_CONFIGS || op == BR_ACL_OP_ALTER_CONFIGS ||
               op == BR_ACL_OP_IDEMPOTENT_WRITE || op == BR_ACL_OP_ALTER ||
               op == BR_ACL_OP_DESCRIBE || op == BR_ACL_OP_ALL;
    case BR_ACL_RES_TXN_ID:
        return op == BR_ACL_OP_DESCRIBE || op == BR_ACL_OP_WRITE || op == BR_ACL_OP_ALL;
    default:
        return false;
    }
}

static bool same_acl(const struct br_acl *x, const struct br_acl *y)
{
    return x->op == y->op && x->perm == y->perm && strcmp(x->principal, y->principal) == 0 &&
           strcmp(x->host, y->host) == 0;
}

/* The ACL entries the arguments name for a resource of type t into
 * want (principal and host borrowed from argv): how many. */
static size_t wanted(const struct acl_args *a, int8_t t, struct br_acl *want, size_t cap)
{
    int8_t ops[MAX_ITEMS + 8];
    size_t nops = ops_for(a, t, ops);
    static const char *const star[] = {BR_ACL_WILDCARD};
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        const char *const *ps = k == 0 ? a->allow : a->deny;
        size_t np = k == 0 ? a->nallow : a->ndeny;
        const char *const *hs = k == 0 ? a->allow_host : a->deny_host;
        size_t nh = k == 0 ? a->nallow_host : a->ndeny_host;
        if (nh == 0) {
            hs = star;
            nh = 1;
        }
        for (size_t p = 0; p < np; p++) {
            for (size_t h = 0; h < nh; h++) {
                for (size_t o = 0; o < nops && n < cap; o++) {
                    want[n++] = (struct br_acl){(char *)(uintptr_t)ps[p], (char *)(uintptr_t)hs[h],
                                                ops[o],
                                                k == 0 ? BR_ACL_PERM_ALLOW : BR_ACL_PERM_DENY};
                }
            }
        }
    }
    return n;
}

static void print_resource_acls(const char *head, int8_t type, int8_t pattern, const char *name,
                                const struct br_acl *acls, size_t n)
{
    /* AclCommand: "Current ACLs for resource `Topic:LITERAL:orders`:" and
     * each Acl.toString on its own line, tab first */
    printf("%s ACLs for resource `%s:%s:%s`: \n", head, br_acl_rtype_name(type),
           pattern == BR_ACL_PAT_PREFIXED ? "PREFIXED" : "LITERAL", name);
    for (size_t i = 0; i < n; i++) {
        printf(" \t%s has %s permission for operations: %s from hosts: %s\n", acls[i].principal,
               br_acl_perm_name(acls[i].perm), br_acl_op_name(acls[i].op), acls[i].host);
    }
    printf("\n");
}

/* The ACLs of a pattern: 0 (none when *n is 0), or EXIT_FAIL. */
static int read_acls(zhandle_t *zh, const char *path, struct br_acl **acls, size_t *n,
                     struct Stat *st, bool *exists)
{
    *acls = NULL;
    *n = 0;
    char *data = NULL;
    int len = 0;
    int rc = zk_read(zh, path, &data, &len, st);
    *exists = rc == ZOK;
    if (rc == ZNONODE) {
        return 0;
    }
    if (rc != ZOK) {
        fprintf(stderr, "samsa acls: reading %s: %s\n", path, zerror(rc));
        return EXIT_FAIL;
    }
    char err[256];
    rc = len == 0 ? 0 : br_zk_acls_decode(data, (size_t)len, path, acls, n, err, sizeof err);
    free(data);
    if (rc != 0) {
        fprintf(stderr, "samsa acls: %s\n", err);
        return EXIT_FAIL;
    }
    return 0;
}

static int announce(zhandle_t *zh, int8_t type, int8_t pattern, const char *name)
{
    struct br_zk_acl_change ch = {type, pattern, ""};
    (void)snprintf(ch.name, sizeof ch.name, "%s", name);
    const char *folder = NULL;
    char *data = NULL;
    size_t len = 0;
    if (br_zk_acl_change_encode(&ch, &folder, &data, &len) != 0) {
        return EXIT_FAIL;
    }
    char path[128];
    (void)snprintf(path, sizeof path, "%s/acl_changes_", folder);
    int rc = zoo_create(zh, path, data, (int)len, &ZOO_OPEN_ACL_UNSAFE, ZOO_SEQUENCE, NULL, 0);
    if (rc == ZNONODE) {
        zk_make_parents(zh, path);
        rc = zoo_create(zh, path, data, (int)len, &ZOO_OPEN_ACL_UNSAFE, ZOO_SEQUENCE, NULL, 0);
    }
    kp_free(data);
    if (rc != ZOK) {
        fprintf(stderr, "samsa acls: the change notification in %s: %s\n", folder, zerror(rc));
        return EXIT_FAIL;
    }
    return 0;
}

/* --add or --remove on one resource pattern: read, changed, written back
 * conditionally (retried on a lost race), announced. */
static int change(zhandle_t *zh, const struct acl_args *a, const struct resource *r)
{
    char path[BR_ZK_ACL_TEXT_MAX + 96];
    if (!br_zk_acl_path(a->pattern, r->type, r->name, path, sizeof path)) {
        fprintf(stderr, "samsa acls: %s cannot be a znode's name\n", r->name);
        return EXIT_FAIL;
    }
    struct br_acl want[4 * MAX_ITEMS];
    size_t nwant = wanted(a, r->type, want, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < nwant; i++) {
        if (!supported(r->type, want[i].op)) {
            fprintf(stderr, "samsa acls: ResourceType %s only supports some operations: %s is "
                            "not one\n",
                    br_acl_rtype_name(r->type), br_acl_op_name(want[i].op));
            return EXIT_FAIL;
        }
    }
    if (a->mode == 'a' || nwant > 0) {
        print_resource_acls(a->mode == 'a' ? "Adding" : "Removing", r->type, a->pattern, r->name,
                            want, nwant);
    }
    for (int attempt = 0; attempt < 10; attempt++) {
        struct br_acl *have = NULL;
        size_t nhave = 0;
        struct Stat st;
        bool exists = false;
        int rc = read_acls(zh, path, &have, &nhave, &st, &exists);
        if (rc != 0) {
            return rc;
        }
        /* the entries after the change: borrowed pointers into have/want */
        struct br_acl *next = kp_calloc(nhave + nwant + 1, sizeof *next);
        if (next == NULL) {
            br_zk_acls_free(have, nhave);
            return EXIT_FAIL;
        }
        size_t n = 0;
        for (size_t i = 0; i < nhave; i++) {
            bool drop = a->mode == 'r' && (nwant == 0 || (a->nallow + a->ndeny) == 0);
            for (size_t j = 0; j < nwant && !drop && a->mode == 'r'; j++) {
                drop = same_acl(&have[i], &want[j]);
            }
            if (!drop) {
                next[n++] = have[i];
            }
        }
        for (size_t j = 0; j < nwant && a->mode == 'a'; j++) {
            bool dup = false;
            for (size_t i = 0; i < n && !dup; i++) {
                dup = same_acl(&next[i], &want[j]);
            }
            if (!dup) {
                next[n++] = want[j];
            }
        }
        bool same = n == nhave;
        if (n == 0) {
            rc = exists ? zoo_delete(zh, path, st.version) : ZOK;
        } else if (same && a->mode == 'r') {
            rc = ZOK;
        } else {
            char *json = NULL;
            size_t len = 0;
            if (br_zk_acls_encode(next, n, &json, &len) != 0) {
                rc = ZSYSTEMERROR;
            } else {
                rc = exists ? zoo_set(zh, path, json, (int)len, st.version)
                            : zk_create(zh, path, json, len);
                kp_free(json);
            }
        }
        kp_free(next);
        br_zk_acls_free(have, nhave);
        if (rc == ZBADVERSION || rc == ZNODEEXISTS || (rc == ZNONODE && exists)) {
            continue; /* another writer first: read again */
        }
        if (rc != ZOK) {
            fprintf(stderr, "samsa acls: writing %s: %s\n", path, zerror(rc));
            return EXIT_FAIL;
        }
        return announce(zh, r->type, a->pattern, r->name);
    }
    fprintf(stderr, "samsa acls: %s kept changing under this command: try again\n", path);
    return EXIT_FAIL;
}

static int list_one(zhandle_t *zh, int8_t pattern, int8_t type, const char *name)
{
    char path[BR_ZK_ACL_TEXT_MAX + 96];
    if (!br_zk_acl_path(pattern, type, name, path, sizeof path)) {
        return 0;
    }
    struct br_acl *acls = NULL;
    size_t n = 0;
    struct Stat st;
    bool exists = false;
    int rc = read_acls(zh, path, &acls, &n, &st, &exists);
    if (rc == 0 && n > 0) {
        print_resource_acls("Current", type, pattern, name, acls, n);
    }
    br_zk_acls_free(acls, n);
    return rc;
}

static int list(zhandle_t *zh, const struct acl_args *a)
{
    int rc = 0;
    if (a->nres > 0) {
        for (size_t i = 0; i < a->nres && rc == 0; i++) {
            rc = list_one(zh, a->pattern, a->res[i].type, a->res[i].name);
        }
        return rc;
    }
    static const int8_t types[] = {BR_ACL_RES_TOPIC, BR_ACL_RES_GROUP, BR_ACL_RES_CLUSTER,
                                   BR_ACL_RES_TXN_ID, BR_ACL_RES_DELEGATION_TOKEN};
    for (int p = 0; p < 2 && rc == 0; p++) {
        int8_t pattern = p == 0 ? BR_ACL_PAT_LITERAL : BR_ACL_PAT_PREFIXED;
        for (size_t t = 0; t < sizeof types / sizeof types[0] && rc == 0; t++) {
            char dir[128];
            (void)snprintf(dir, sizeof dir, "%s/%s",
                           p == 0 ? "/kafka-acl" : "/kafka-acl-extended/prefixed",
                           br_acl_rtype_name(types[t]));
            struct String_vector kids;
            memset(&kids, 0, sizeof kids);
            int zrc = zoo_get_children(zh, dir, 0, &kids);
            if (zrc == ZNONODE) {
                continue;
            }
            if (zrc != ZOK) {
                fprintf(stderr, "samsa acls: listing %s: %s\n", dir, zerror(zrc));
                return EXIT_FAIL;
            }
            for (int32_t k = 0; k < kids.count && rc == 0; k++) {
                rc = list_one(zh, pattern, types[t], kids.data[k]);
            }
            deallocate_String_vector(&kids);
        }
    }
    return rc;
}

int cmd_acls(int argc, char **argv)
{
    struct acl_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    zhandle_t *zh = zk_open("acls", a.zookeeper, 10000);
    if (zh == NULL) {
        return EXIT_FAIL;
    }
    if (a.mode == 'l') {
        rc = list(zh, &a);
    } else {
        rc = 0;
        for (size_t i = 0; i < a.nres && rc == 0; i++) {
            rc = change(zh, &a, &a.res[i]);
        }
        /* AclCommand lists each resource's ACLs after the change */
        for (size_t i = 0; i < a.nres && rc == 0; i++) {
            rc = list_one(zh, a.pattern, a.res[i].type, a.res[i].name);
        }
    }
    zk_close(zh);
    return rc;
}
