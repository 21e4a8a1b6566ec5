/*
 * samsa-broker: DescribeAcls, CreateAcls and DeleteAcls v0-1 (Kafka 2.0's
 * KafkaApis.handleDescribeAcls, handleCreateAcls, handleDeleteAcls) and a
 * standalone broker's ACL file (see authorize.c).
 *
 * The file, <first log dir>/acls.json, holds every binding in the names
 * Kafka's tools print:
 *   {"version":1,"acls":[{"resourceType":"Topic","name":"orders",
 *     "patternType":"LITERAL","principal":"User:alice","host":"*",
 *     "operation":"Read","permissionType":"Allow"}]}
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"
#include "base/worker.h"
#include "cluster/zk_json.h"
#include "reactor/net.h"
#include "server/acl_zk.h"
#include "server/authorize.h"
#include "server/request.h"
#include "server/state.h"
#include "server/topic_admin.h"

#define ACL_FILE "acls.json"

/* ---------------------------------------------------------------- the file */

static const char *pattern_file_name(int8_t p)
{
    return p == BR_ACL_PAT_PREFIXED ? "PREFIXED" : "LITERAL";
}

/* The store as the file's JSON (kp_malloc'd), or NULL. */
static char *store_json(const struct br_acl_store *s, size_t *len)
{
    json_t *root = json_object();
    json_t *arr = json_array();
    if (root == NULL || arr == NULL) {
        json_decref(root);
        json_decref(arr);
        return NULL;
    }
    (void)json_object_set_new(root, "version", json_integer(1));
    for (size_t i = 0; i < s->n; i++) {
        const struct br_acl_resource *r = &s->res[i];
        for (size_t k = 0; k < r->n; k++) {
            const struct br_acl *a = &r->acls[k];
            json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "resourceType",
                                  br_acl_rtype_name(r->type), "name", r->name, "patternType",
                                  pattern_file_name(r->pattern), "principal", a->principal,
                                  "host", a->host, "operation", br_acl_op_name(a->op),
                                  "permissionType", br_acl_perm_name(a->perm));
            if (o == NULL || json_array_append_new(arr, o) != 0) {
                json_decref(root);
                json_decref(arr);
                return NULL;
            }
        }
    }
    (void)json_object_set_new(root, "acls", arr);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (text == NULL) {
        return NULL;
    }
    *len = strlen(text);
    char *out = kp_malloc(*len + 1);
    if (out != NULL) {
        memcpy(out, text, *len + 1);
    }
    free(text);
    return out;
}

static int field(json_t *o, const char *key, const char **out)
{
    json_t *v = json_object_get(o, key);
    *out = json_is_string(v) ? json_string_value(v) : NULL;
    return *out != NULL ? 0 : -1;
}

/* Reads the file into the store: 0 (a missing file is no ACL), or -1 with
 * the reason in err. */
static int load_file(struct br_acl_store *s, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        if (errno == ENOENT) {
            return 0;
        }
        (void)snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    (void)fclose(f);
    if (root == NULL) {
        (void)snprintf(err, errlen, "%s: line %d: %s", path, je.line, je.text);
        return -1;
    }
    json_t *acls = json_object_get(root, "acls");
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1 || !json_is_array(acls)) {
        json_decref(root);
        (void)snprintf(err, errlen, "%s: not a version 1 ACL file (\"version\":1, \"acls\":[...])",
                       path);
        return -1;
    }
    size_t i;
    json_t *o;
    json_array_foreach(acls, i, o)
    {
        const char *rt, *name, *pt, *principal, *host, *op, *perm;
        if (field(o, "resourceType", &rt) != 0 || field(o, "name", &name) != 0 ||
            field(o, "patternType", &pt) != 0 || field(o, "principal", &principal) != 0 ||
            field(o, "host", &host) != 0 || field(o, "operation", &op) != 0 ||
            field(o, "permissionType", &perm) != 0) {
            json_decref(root);
            (void)snprintf(err, errlen, "%s: ACL %zu lacks one of resourceType, name, "
                                        "patternType, principal, host, operation, permissionType",
                           path, i);
            return -1;
        }
        int t = br_acl_rtype_parse(rt, strlen(rt));
        int o_ = br_acl_op_parse(op, strlen(op));
        int p = br_acl_perm_parse(perm, strlen(perm));
        int pat = strcasecmp(pt, "PREFIXED") == 0 ? BR_ACL_PAT_PREFIXED
                  : strcasecmp(pt, "LITERAL") == 0 ? BR_ACL_PAT_LITERAL
                                                   : -1;
        struct br_acl_binding b = {(int8_t)t,        (int8_t)pat, name, strlen(name), principal,
                                   strlen(principal), host,       strlen(host), (int8_t)o_,
                                   (int8_t)p};
        if (t < 0 || o_ < 0 || p < 0 || pat < 0 || !br_acl_binding_valid(&b)) {
            json_decref(root);
            (void)snprintf(err, errlen, "%s: ACL %zu names an unknown type, operation, "
                                        "permission or pattern type",
                           path, i);
            return -1;
        }
        if (br_acl_add(s, &b) != 0) {
            json_decref(root);
            (void)snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    json_decref(root);
    return 0;
}

/* A write of the file, and the answer waiting for it. */
struct acl_save {
    struct br_job job; /* first: comes back through the mailbox */
    struct br_park park;
    struct br_server *b;
    struct br_conn *conn; /* NULL: its connection went */
    struct br_slot *slot;
    uint8_t *frame; /* the answer */
    size_t len;
    char *path;
    char *text;
    size_t tlen;
    int err; /* errno of the write */
};

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* worker thread: a temporary file, synced, renamed over the file */
static void save_run(struct br_job *job)
{
    struct acl_save *s = (struct acl_save *)(void *)job;
    char tmp[4200];
    (void)snprintf(tmp, sizeof tmp, "%s.tmp", s->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    s->err = 0;
    if (fd < 0 || write_all(fd, s->text, s->tlen) != 0 || fsync(fd) != 0) {
        s->err = errno;
    }
    if (fd >= 0 && close(fd) != 0 && s->err == 0) {
        s->err = errno;
    }
    if (s->err == 0 && rename(tmp, s->path) != 0) {
        s->err = errno;
    }
}

static const struct br_job_ops save_ops = {"acl file", save_run};

static void save_free(struct acl_save *s)
{
    kp_free(s->frame);
    kp_free(s->path);
    kp_free(s->text);
    kp_free(s);
}

static void save_delivered(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct acl_save *s = (struct acl_save *)(void *)m;
    if (s->err != 0) {
        br_error("%s could not be written (%s): the ACLs changed here are lost at a restart",
                 s->path, strerror(s->err));
    }
    if (s->conn != NULL) {
        uint8_t *buf = s->frame;
        s->frame = NULL;
        if (br_slot_add_mem(s->slot, buf, s->len) != 0) {
            br_conn_close_after_flush(s->conn);
        }
        br_slot_ready(s->conn, s->slot);
    }
    save_free(s);
}

static void save_cancel(struct br_server *b, void *parked)
{
    (void)b;
    struct acl_save *s = (struct acl_save *)(void *)((char *)parked - offsetof(struct acl_save, park));
    s->conn = NULL; /* the write goes on; nobody hears of it */
}

static const struct br_park_ops save_park_ops = {"an ACL change waiting for its file",
                                                 save_cancel};

static char *acl_path(const struct br_server *b)
{
    const char *dir = b->cfg.log_dirs != NULL && b->cfg.log_dirs[0] != NULL ? b->cfg.log_dirs[0]
                                                                            : ".";
    size_t n = strlen(dir) + sizeof ACL_FILE + 1;
    char *p = kp_malloc(n);
    if (p != NULL) {
        (void)snprintf(p, n, "%s/%s", dir, ACL_FILE);
    }
    return p;
}

/* Answers resp once the store is written to the file. */
static int respond_saved(struct br_req *r, const void *resp)
{
    struct br_server *b = r->b;
    struct acl_save *s = kp_calloc(1, sizeof *s);
    struct kp_writer w;
    kp_wr_init(&w, (size_t)b->cfg.response_max_bytes);
    int err = s == NULL ? KP_E_NOMEM
                        : kp_response_encode(&w, r->hdr->RequestApiKey, r->version,
                                             r->hdr->CorrelationId, resp);
    if (err == 0) {
        s->frame = kp_wr_steal(&w, &s->len);
        s->path = acl_path(b);
        s->text = store_json(&b->authz.store, &s->tlen);
        err = s->frame == NULL || s->path == NULL || s->text == NULL ? KP_E_NOMEM : 0;
    }
    kp_wr_free(&w);
    if (err != 0 || r->slot == NULL) {
        if (s != NULL) {
            save_free(s);
        }
        return err;
    }
    s->b = b;
    s->conn = r->conn;
    s->slot = r->slot;
    s->park.ops = &save_park_ops;
    s->job.ops = &save_ops;
    s->job.mail.deliver = save_delivered;
    br_slot_set_parked(r->slot, &s->park);
    br_worker_submit(br_topic_admin_worker(b), &s->job);
    return 0;
}

/* ---------------------------------------------------------------- start, stop */

int br_authz_start(struct br_server *b)
{
    struct br_authz *a = &b->authz;
    br_acl_store_init(&a->store);
    a->on = b->cfg.authorizer;
    a->change_seen[0] = a->change_seen[1] = -1; /* sequence numbers start at 0 */
    if (!a->on) {
        return 0;
    }
    /* super.users: principals separated by ';' (KafkaConfig) */
    const char *su = b->cfg.raw[BR_CFG_SUPER_USERS];
    for (const char *p = su; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ';');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        while (n > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) {
            n--;
        }
        if (n > 0) {
            char **v = kp_realloc(a->super_users, (a->nsuper + 1) * sizeof *v);
            char *copy = kp_malloc(n + 1);
            if (v == NULL || copy == NULL) {
                kp_free(copy);
                if (v != NULL) {
                    a->super_users = v;
                }
                return KP_E_NOMEM;
            }
            memcpy(copy, p, n);
            copy[n] = '\0';
            a->super_users = v;
            a->super_users[a->nsuper++] = copy;
        }
        p = end != NULL ? end + 1 : p + n;
    }
    char *path = acl_path(b);
    char err[512];
    int rc = path == NULL ? -1 : load_file(&a->store, path, err, sizeof err);
    if (rc != 0) {
        br_error("the ACLs cannot be read: %s", path == NULL ? "out of memory" : err);
        kp_free(path);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    size_t nacls = 0;
    for (size_t i = 0; i < a->store.n; i++) {
        nacls += a->store.res[i].n;
    }
    br_info("authorizer on (SimpleAclAuthorizer's rules): %zu ACL(s) on %zu resource "
            "pattern(s) from %s, %zu super user(s), allow.everyone.if.no.acl.found=%s",
            nacls, a->store.n, path, a->nsuper,
            b->cfg.allow_everyone_if_no_acl_found ? "true" : "false");
    kp_free(path);
    return 0;
}

void br_authz_stop(struct br_server *b)
{
    struct br_authz *a = &b->authz;
    br_acl_store_fini(&a->store);
    for (size_t i = 0; i < a->nsuper; i++) {
        kp_free(a->super_users[i]);
    }
    kp_free(a->super_users);
    a->super_users = NULL;
    a->nsuper = 0;
    a->on = false;
}

/* ---------------------------------------------------------------- the requests */

static struct br_acl_binding filter_of(int8_t type, struct kp_str name, int8_t pattern,
                                       struct kp_str principal, struct kp_str host, int8_t op,
                                       int8_t perm)
{
    return (struct br_acl_binding){type,
                                   pattern,
                                   name.len >= 0 ? name.ptr : NULL,
                                   name.len > 0 ? (size_t)name.len : 0,
                                   principal.len >= 0 ? principal.ptr : NULL,
                                   principal.len > 0 ? (size_t)principal.len : 0,
                                   host.len >= 0 ? host.ptr : NULL,
                                   host.len > 0 ? (size_t)host.len : 0,
                                   op,
                                   perm};
}

static int security_disabled(struct br_req *r)
{
    return br_respond_error(r, KP_ERR_SECURITY_DISABLED, "No Authorizer is configured on the broker");
}

int br_h_describe_acls(struct br_req *r)
{
    const struct kp_DescribeAclsRequest *q = r->body;
    struct br_server *b = r->b;
    if (!b->authz.on) {
        return security_disabled(r);
    }
    struct br_acl_binding f =
        filter_of(q->ResourceTypeFilter, q->ResourceNameFilter,
                  r->version >= 1 ? q->PatternTypeFilter : BR_ACL_PAT_LITERAL, q->PrincipalFilter,
                  q->HostFilter, q->Operation, q->PermissionType);
    struct kp_DescribeAclsResponse resp;
    kp_DescribeAclsResponse_init(&resp);
    resp.ErrorMessage = KP_STR_NULL;
    const struct br_acl_store *s = &b->authz.store;
    resp.Resources.items = br_req_array(r, s->n, sizeof *resp.Resources.items);
    if (resp.Resources.items == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < s->n; i++) {
        const struct br_acl_resource *res = &s->res[i];
        struct kp_DescribeAclsResponse_DescribeAclsResource *out =
            &resp.Resources.items[resp.Resources.count];
        out->Acls.items = br_req_array(r, res->n, sizeof *out->Acls.items);
        if (out->Acls.items == NULL) {
            return KP_E_NOMEM;
        }
        out->Acls.count = 0;
        for (size_t k = 0; k < res->n; k++) {
            const struct br_acl *a = &res->acls[k];
            if (br_acl_filter_matches(&f, res, a)) {
                out->Acls.items[out->Acls.count++] =
                    (struct kp_DescribeAclsResponse_AclDescription){
                        kp_str_c(a->principal), kp_str_c(a->host), a->op, a->perm};
            }
        }
        if (out->Acls.count > 0) {
            out->ResourceType = res->type;
            out->ResourceName = kp_str_c(res->name);
            out->PatternType = res->pattern;
            resp.Resources.count++;
        }
    }
    return br_respond(r, &resp);
}

/* A cluster's CreateAcls: each valid binding written to its pattern's
 * znode (acl_zk.c); the answer once all are, or each of them failed. */
static int create_in_zookeeper(struct br_req *r, const struct kp_CreateAclsResponse *resp,
                               const bool *valid)
{
    const struct kp_CreateAclsRequest *q = r->body;
    struct kp_CreateAclsResponse fail = *resp;
    fail.Results.items = br_req_array(r, (size_t)resp->Results.count, sizeof *fail.Results.items);
    if (fail.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < resp->Results.count; i++) {
        fail.Results.items[i] = resp->Results.items[i];
        if (valid[i]) {
            fail.Results.items[i].ErrorCode = KP_ERR_UNKNOWN_SERVER_ERROR;
            fail.Results.items[i].ErrorMessage = kp_str_c("the ACLs could not be written to ZooKeeper");
        }
    }
    struct br_acl_zk_write *w = br_acl_zk_write_begin(r, resp, &fail);
    if (w == NULL) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < resp->Results.count; i++) {
        if (!valid[i]) {
            continue;
        }
        const struct kp_CreateAclsRequest_AclCreation *c = &q->Creations.items[i];
        char name[BR_ZK_ACL_TEXT_MAX + 1];
        char principal[BR_ZK_ACL_TEXT_MAX + 1];
        char host[BR_ZK_ACL_TEXT_MAX + 1];
        if (c->ResourceName.len > BR_ZK_ACL_TEXT_MAX || c->Principal.len > BR_ZK_ACL_TEXT_MAX ||
            c->Host.len > BR_ZK_ACL_TEXT_MAX) {
            continue; /* answered as written: nothing ZooKeeper could hold */
        }
        (void)snprintf(name, sizeof name, "%.*s", (int)c->ResourceName.len, c->ResourceName.ptr);
        (void)snprintf(principal, sizeof principal, "%.*s", (int)c->Principal.len,
                       c->Principal.ptr);
        (void)snprintf(host, sizeof host, "%.*s", (int)c->Host.len, c->Host.ptr);
        struct br_acl a = {principal, host, c->Operation, c->PermissionType};
        int8_t pattern = r->version >= 1 ? c->ResourcePatternType : BR_ACL_PAT_LITERAL;
        if (br_acl_zk_write_pattern(w, c->ResourceType, pattern, name, &a, 1, NULL, 0) != 0) {
            br_error("out of memory writing an ACL");
        }
    }
    return br_acl_zk_write_end(w, r);
}

int br_h_create_acls(struct br_req *r)
{
    const struct kp_CreateAclsRequest *q = r->body;
    struct br_server *b = r->b;
    if (!b->authz.on) {
        return security_disabled(r);
    }
    struct kp_CreateAclsResponse resp;
    kp_CreateAclsResponse_init(&resp);
    int32_t n = q->Creations.count > 0 ? q->Creations.count : 0;
    resp.Results.items = br_req_array(r, (size_t)n, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = n;
    bool changed = false;
    bool *valid = br_req_array(r, (size_t)n, sizeof *valid);
    if (valid == NULL) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < n; i++) {
        const struct kp_CreateAclsRequest_AclCreation *c = &q->Creations.items[i];
        struct br_acl_binding bd = filter_of(
            c->ResourceType, c->ResourceName,
            r->version >= 1 ? c->ResourcePatternType : BR_ACL_PAT_LITERAL, c->Principal, c->Host,
            c->Operation, c->PermissionType);
        int16_t code = KP_ERR_NONE;
        const char *why = NULL;
        /* KafkaApis.handleCreateAcls' checks */
        if (!br_acl_binding_valid(&bd)) {
            code = KP_ERR_INVALID_REQUEST;
            why = "the binding names an unknown or indefinite value (ANY, MATCH, UNKNOWN)";
        } else if (bd.name_len == 0) {
            code = KP_ERR_INVALID_REQUEST;
            why = "Invalid empty resource name";
        } else if (bd.type == BR_ACL_RES_CLUSTER &&
                   (bd.name_len != sizeof BR_ACL_CLUSTER_NAME - 1 ||
                    memcmp(bd.name, BR_ACL_CLUSTER_NAME, bd.name_len) != 0)) {
            code = KP_ERR_INVALID_REQUEST;
            why = "The only valid name for the CLUSTER resource is kafka-cluster";
        } else if (memchr(bd.principal, ':', bd.principal_len) == NULL) {
            code = KP_ERR_INVALID_REQUEST;
            why = "a principal is \"Type:name\" (User:alice)";
        } else if (b->zk != NULL) {
            valid[i] = true; /* written to ZooKeeper below */
        } else if (br_acl_add(&b->authz.store, &bd) != 0) {
            code = KP_ERR_UNKNOWN_SERVER_ERROR;
            why = "out of memory";
        } else {
            changed = true;
            char principal[600];
            br_req_principal(r, principal, sizeof principal);
            br_info("ACL added by %s: %s %.*s (%s): %.*s from %.*s %s %s", principal,
                    br_acl_rtype_name(bd.type), (int)bd.name_len, bd.name,
                    br_acl_pattern_name(bd.pattern), (int)bd.principal_len, bd.principal,
                    (int)bd.host_len, bd.host, br_acl_perm_name(bd.perm), br_acl_op_name(bd.op));
        }
        resp.Results.items[i].ErrorCode = code;
        resp.Results.items[i].ErrorMessage = why != NULL ? kp_str_c(why) : KP_STR_NULL;
    }
    if (b->zk != NULL) {
        return create_in_zookeeper(r, &resp, valid);
    }
    return changed ? respond_saved(r, &resp) : br_respond(r, &resp);
}

/* A cluster's DeleteAcls: each ACL matched removed from its pattern's
 * znode; the answer (the matches) once all are written. */
static int delete_in_zookeeper(struct br_req *r, const struct kp_DeleteAclsResponse *resp)
{
    struct kp_DeleteAclsResponse fail = *resp;
    fail.FilterResults.items =
        br_req_array(r, (size_t)resp->FilterResults.count, sizeof *fail.FilterResults.items);
    if (fail.FilterResults.items == NULL) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < resp->FilterResults.count; i++) {
        fail.FilterResults.items[i] = (struct kp_DeleteAclsResponse_DeleteAclsFilterResult){
            KP_ERR_UNKNOWN_SERVER_ERROR, kp_str_c("the ACLs could not be written to ZooKeeper"),
            {NULL, 0}};
    }
    struct br_acl_zk_write *w = br_acl_zk_write_begin(r, resp, &fail);
    if (w == NULL) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < resp->FilterResults.count; i++) {
        const struct kp_DeleteAclsResponse_DeleteAclsFilterResult *fr = &resp->FilterResults.items[i];
        for (int32_t k = 0; k < fr->MatchingAcls.count; k++) {
            const struct kp_DeleteAclsResponse_DeleteAclsMatchingAcl *m = &fr->MatchingAcls.items[k];
            /* the strings were copied NUL-terminated into the response */
            struct br_acl a = {(char *)(uintptr_t)m->Principal.ptr, (char *)(uintptr_t)m->Host.ptr,
                               m->Operation, m->PermissionType};
            if (br_acl_zk_write_pattern(w, m->ResourceType, m->PatternType, m->ResourceName.ptr,
                                        NULL, 0, &a, 1) != 0) {
                br_error("out of memory deleting an ACL");
            }
        }
    }
    return br_acl_zk_write_end(w, r);
}

int br_h_delete_acls(struct br_req *r)
{
    const struct kp_DeleteAclsRequest *q = r->body;
    struct br_server *b = r->b;
    if (!b->authz.on) {
        return security_disabled(r);
    }
    struct br_acl_store *s = &b->authz.store;
    struct kp_DeleteAclsResponse resp;
    kp_DeleteAclsResponse_init(&resp);
    int32_t nf = q->Filters.count > 0 ? q->Filters.count : 0;
    resp.FilterResults.items = br_req_array(r, (size_t)nf, sizeof *resp.FilterResults.items);
    if (resp.FilterResults.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.FilterResults.count = nf;
    size_t total = 0;
    for (size_t i = 0; i < s->n; i++) {
        total += s->res[i].n;
    }
    bool changed = false;
    for (int32_t fi = 0; fi < nf; fi++) {
        const struct kp_DeleteAclsRequest_DeleteAclsFilter *qf = &q->Filters.items[fi];
        struct br_acl_binding f = filter_of(
            qf->ResourceTypeFilter, qf->ResourceNameFilter,
            r->version >= 1 ? qf->PatternTypeFilter : BR_ACL_PAT_LITERAL, qf->PrincipalFilter,
            qf->HostFilter, qf->Operation, qf->PermissionType);
        struct kp_DeleteAclsResponse_DeleteAclsFilterResult *fr = &resp.FilterResults.items[fi];
        fr->ErrorMessage = KP_STR_NULL;
        fr->MatchingAcls.items = br_req_array(r, total, sizeof *fr->MatchingAcls.items);
        if (fr->MatchingAcls.items == NULL) {
            return KP_E_NOMEM;
        }
        for (size_t i = 0; i < s->n;) {
            struct br_acl_resource *res = &s->res[i];
            /* the entries that stay, compacted in place; those matched answered
             * (their strings copied into the response first) */
            size_t keep = 0;
            for (size_t k = 0; k < res->n; k++) {
                struct br_acl *a = &res->acls[k];
                if (!br_acl_filter_matches(&f, res, a)) {
                    res->acls[keep++] = *a;
                    continue;
                }
                size_t pl = strlen(a->principal), hl = strlen(a->host), nl = strlen(res->name);
                char *pc = br_req_array(r, pl + 1, 1);
                char *hc = br_req_array(r, hl + 1, 1);
                char *nc = br_req_array(r, nl + 1, 1);
                if (pc == NULL || hc == NULL || nc == NULL) {
                    res->acls[keep++] = *a; /* kept: the answer could not say it went */
                    continue;
                }
                memcpy(pc, a->principal, pl + 1);
                memcpy(hc, a->host, hl + 1);
                memcpy(nc, res->name, nl + 1);
                fr->MatchingAcls.items[fr->MatchingAcls.count++] =
                    (struct kp_DeleteAclsResponse_DeleteAclsMatchingAcl){
                        KP_ERR_NONE, KP_STR_NULL, res->type, {nc, (int32_t)nl}, res->pattern,
                        {pc, (int32_t)pl}, {hc, (int32_t)hl}, a->op, a->perm};
                changed = true;
                if (b->zk != NULL) {
                    /* a cluster's store changes when ZooKeeper has */
                    res->acls[keep++] = *a;
                    continue;
                }
                kp_free(a->principal);
                kp_free(a->host);
            }
            res->n = keep;
            if (res->n == 0) {
                /* the pattern's last entry went: the pattern goes (its znode would) */
                br_acl_remove(s, res->type, res->pattern, res->name, strlen(res->name));
            } else {
                i++;
            }
        }
    }
    if (b->zk != NULL && changed) {
        return delete_in_zookeeper(r, &resp);
    }
    return changed ? respond_saved(r, &resp) : br_respond(r, &resp);
}
