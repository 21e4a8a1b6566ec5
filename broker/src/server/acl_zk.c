/*
 * samsa-broker: a cluster's ACLs in ZooKeeper, as Kafka 2.0's
 * SimpleAclAuthorizer keeps them (ZkData.scala 452-660, KafkaZkClient's
 * ACL methods, SimpleAclAuthorizer.updateResourceAcls):
 *
 *   /kafka-acl/<type>/<name>                      a literal pattern's ACLs
 *   /kafka-acl-extended/prefixed/<type>/<name>    a prefixed pattern's
 *   /kafka-acl-changes/acl_changes_<seq>          "Topic:orders"
 *   /kafka-acl-extended-changes/acl_changes_<seq> {"version":1,...}
 *
 * Every broker reads all of them when its session starts (the change
 * notifications listed first, so that none made meanwhile is missed),
 * then re-reads a resource pattern whenever a notification names it.
 * CreateAcls and DeleteAcls read each pattern they change, write it back
 * conditionally on the version read (created when missing, deleted when
 * empty; retried on a lost race, as updateResourceAcls retries), announce
 * it with a notification, and answer once every pattern is written.
 *
 * @locality reactor thread
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"
#include "base/number.h"
#include "cluster/zk_json.h"
#include "server/acl_zk.h"
#include "server/cluster_wait.h"
#include "server/state.h"

#define LITERAL_ROOT "/kafka-acl"
#define EXT_ROOT "/kafka-acl-extended"
#define PREFIXED_ROOT "/kafka-acl-extended/prefixed"
#define CHANGES "/kafka-acl-changes"
#define EXT_CHANGES "/kafka-acl-extended-changes"
#define CHANGE_PREFIX "acl_changes_"
/* A conditional write that lost to another writer is tried again this many
 * times (SimpleAclAuthorizer's maxUpdateRetries is 10). */
#define MAX_ATTEMPTS 10

/* ---------------------------------------------------------------- paths */

/* The znode of a resource pattern; false when the name cannot be a znode's
 * (a '/', too long). */
/* A resource pattern's znode path back into its parts. */
static bool parse_path(const char *path, int8_t *pattern, int8_t *type, const char **name)
{
    const char *rest = NULL;
    if (strncmp(path, PREFIXED_ROOT "/", sizeof PREFIXED_ROOT) == 0) {
        *pattern = BR_ACL_PAT_PREFIXED;
        rest = path + sizeof PREFIXED_ROOT;
    } else if (strncmp(path, LITERAL_ROOT "/", sizeof LITERAL_ROOT) == 0) {
        *pattern = BR_ACL_PAT_LITERAL;
        rest = path + sizeof LITERAL_ROOT;
    } else {
        return false;
    }
    const char *slash = strchr(rest, '/');
    if (slash == NULL || slash[1] == '\0' || strchr(slash + 1, '/') != NULL) {
        return false;
    }
    int t = br_acl_rtype_parse(rest, (size_t)(slash - rest));
    if (t < 0) {
        return false;
    }
    *type = (int8_t)t;
    *name = slash + 1;
    return true;
}

/* ---------------------------------------------------------------- reading */

static void resource_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    int8_t pattern = 0;
    int8_t type = 0;
    const char *name = NULL;
    if (!parse_path(r->path, &pattern, &type, &name)) {
        br_cop_free(op);
        return;
    }
    if (r->rc == BR_ZK_NONODE) {
        br_acl_remove(&b->authz.store, type, pattern, name, strlen(name));
    } else if (r->rc == BR_ZK_OK) {
        struct br_acl *acls = NULL;
        size_t n = 0;
        char err[512];
        if (br_zk_acls_decode(r->data, r->data_null ? 0 : r->data_len, r->path, &acls, &n, err,
                              sizeof err) != 0) {
            /* Kafka's broker would fail to read it too: the pattern keeps
             * what this broker knew */
            br_warn("ACLs not read: %s", err);
        } else if (br_acl_set(&b->authz.store, type, pattern, name, strlen(name), acls, n) != 0) {
            br_error("out of memory keeping the ACLs of %s", r->path);
        }
        br_zk_acls_free(acls, n);
    } else {
        br_warn("reading %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

static void read_path(struct br_server *b, const char *path)
{
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, resource_read);
    if (op != NULL && (!br_cluster_zk_ready(b) ||
                       br_zk_get(b->zk, path, false, br_zk_call_tag(&op->call)) != 0)) {
        br_cop_free(op);
    }
}

/* The children of /kafka-acl/<type> (or the prefixed one): each read. */
static void names_listed(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    if (r->rc == BR_ZK_OK) {
        for (size_t i = 0; i < r->n_children; i++) {
            char path[BR_ZK_ACL_TEXT_MAX + 96];
            int w = snprintf(path, sizeof path, "%s/%s", r->path, r->children[i]);
            if (w > 0 && (size_t)w < sizeof path) {
                read_path(b, path);
            }
        }
    } else if (r->rc != BR_ZK_NONODE) {
        br_warn("listing %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

/* The children of a root: the resource types, each listed. */
static void types_listed(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    if (r->rc == BR_ZK_OK) {
        for (size_t i = 0; i < r->n_children; i++) {
            const char *t = r->children[i];
            if (br_acl_rtype_parse(t, strlen(t)) < 0) {
                continue; /* "prefixed" under /kafka-acl-extended, or a type unknown here */
            }
            char path[160];
            (void)snprintf(path, sizeof path, "%s/%s", r->path, t);
            struct br_cop *one = br_cop_new(b, NULL, 0, NULL, names_listed);
            if (one != NULL && (!br_cluster_zk_ready(b) ||
                                br_zk_get_children(b->zk, path, false,
                                                   br_zk_call_tag(&one->call)) != 0)) {
                br_cop_free(one);
            }
        }
    } else if (r->rc != BR_ZK_NONODE) {
        br_warn("listing %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

static void list_root(struct br_server *b, const char *root)
{
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, types_listed);
    if (op != NULL && (!br_cluster_zk_ready(b) ||
                       br_zk_get_children(b->zk, root, false, br_zk_call_tag(&op->call)) != 0)) {
        br_cop_free(op);
    }
}

/* ---------------------------------------------------------------- notifications */

static bool extended_changes(const char *path)
{
    return strncmp(path, EXT_CHANGES, sizeof EXT_CHANGES - 1) == 0;
}

static void change_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    struct br_zk_acl_change ch;
    char err[512];
    if (r->rc == BR_ZK_OK && r->data != NULL &&
        br_zk_acl_change_decode(r->data, r->data_len, extended_changes(r->path), r->path, &ch, err,
                                sizeof err) == 0) {
        char path[BR_ZK_ACL_TEXT_MAX + 96];
        if (br_zk_acl_path(ch.pattern, ch.type, ch.name, path, sizeof path)) {
            read_path(b, path);
        }
    } else if (r->rc == BR_ZK_OK) {
        br_warn("ignoring ACL change %s: %s", r->path, r->data == NULL ? "no data" : err);
    } else if (r->rc != BR_ZK_NONODE) {
        br_warn("reading ACL change %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

/* A changes folder's notifications (watched again): those newer than the
 * last seen read in order; the first listing after the session started
 * only notes where they are (the whole tree is read after it). */
static void changes_listed(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    br_cop_free(op);
    int k = extended_changes(r->path) ? 1 : 0;
    struct br_authz *a = &b->authz;
    if (r->rc != BR_ZK_OK) {
        br_warn("listing %s: %s", r->path, br_zk_rc_name(r->rc));
        return;
    }
    int64_t *seqs = kp_calloc(r->n_children > 0 ? r->n_children : 1, sizeof *seqs);
    if (seqs == NULL) {
        br_error("out of memory reading the ACL changes");
        return;
    }
    size_t n = 0;
    int64_t newest = a->change_seen[k];
    for (size_t i = 0; i < r->n_children; i++) {
        int64_t seq = 0;
        if (br_zk_sequence_number(r->children[i], CHANGE_PREFIX, &seq) != 0) {
            continue;
        }
        newest = seq > newest ? seq : newest;
        if (a->changes_listed[k] && seq > a->change_seen[k]) {
            seqs[n++] = seq;
        }
    }
    qsort(seqs, n, sizeof *seqs, br_num_cmp_i64);
    for (size_t i = 0; i < n; i++) {
        char path[96];
        (void)snprintf(path, sizeof path, "%s/" CHANGE_PREFIX "%010" PRId64, r->path, seqs[i]);
        struct br_cop *one = br_cop_new(b, NULL, 0, NULL, change_read);
        if (one != NULL && (!br_cluster_zk_ready(b) ||
                            br_zk_get(b->zk, path, false, br_zk_call_tag(&one->call)) != 0)) {
            br_cop_free(one);
        }
    }
    kp_free(seqs);
    a->change_seen[k] = newest;
    a->changes_listed[k] = true;
}

static void list_changes(struct br_server *b, const char *path)
{
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, changes_listed);
    if (op != NULL && (!br_cluster_zk_ready(b) ||
                       br_zk_get_children(b->zk, path, true, br_zk_call_tag(&op->call)) != 0)) {
        br_cop_free(op);
    }
}

static void path_made(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NODEEXISTS) {
        br_warn("creating %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

void br_acl_zk_start(struct br_server *b)
{
    if (!b->authz.on || b->zk == NULL) {
        return;
    }
    /* KafkaZkClient.createAclPaths; ZooKeeper serves a session's requests
     * in order: the listings below see them */
    static const char *const paths[] = {LITERAL_ROOT, CHANGES, EXT_ROOT, PREFIXED_ROOT,
                                        EXT_CHANGES};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        struct br_cop *op = br_cop_new(b, NULL, 0, NULL, path_made);
        if (op != NULL && (!br_cluster_zk_ready(b) ||
                           br_zk_create(b->zk, paths[i], "", 0, BR_ZK_PERSISTENT,
                                        br_zk_call_tag(&op->call)) != 0)) {
            br_cop_free(op);
        }
    }
    /* the notifications newer than the newest seen are read (across
     * reconnections and new sessions); the very first listing only notes
     * where they are, the whole tree being read after it */
    list_changes(b, CHANGES);
    list_changes(b, EXT_CHANGES);
    list_root(b, LITERAL_ROOT);
    list_root(b, PREFIXED_ROOT);
}

void br_acl_zk_watch(struct br_server *b, enum br_zk_watch kind, const char *path)
{
    if (!b->authz.on || kind != BR_ZK_WATCH_CHILD) {
        return;
    }
    if (strcmp(path, CHANGES) == 0 || strcmp(path, EXT_CHANGES) == 0) {
        list_changes(b, path);
    }
}

/* ---------------------------------------------------------------- writing */

/* A CreateAcls or DeleteAcls of a cluster: its answer, encoded when every
 * pattern it changes is written. */
struct acl_write {
    struct br_park park; /* first */
    struct br_server *b;
    struct br_conn *conn; /* NULL: the connection went */
    struct br_slot *slot;
    uint8_t *frame; /* the answer if all goes well */
    size_t len;
    uint8_t *fail_frame; /* the answer if a write failed */
    size_t fail_len;
    size_t pending;
    bool failed;
};

/* One resource pattern's change: the bindings to add and the filters'
 * matches to remove, applied to what ZooKeeper holds. */
struct pattern_change {
    struct br_cop *op;
    struct acl_write *w;
    int8_t type;
    int8_t pattern;
    char *name;
    struct br_acl *add;
    size_t nadd;
    struct br_acl *del;
    size_t ndel;
};

static void write_finish(struct acl_write *w)
{
    if (w->pending > 0) {
        return;
    }
    if (w->conn != NULL) {
        uint8_t **f = w->failed ? &w->fail_frame : &w->frame;
        size_t len = w->failed ? w->fail_len : w->len;
        if (br_slot_add_mem(w->slot, *f, len) != 0) {
            br_conn_close_after_flush(w->conn);
        }
        *f = NULL;
        br_slot_ready(w->conn, w->slot);
    }
    kp_free(w->frame);
    kp_free(w->fail_frame);
    kp_free(w);
}

static void write_cancel(struct br_server *b, void *parked)
{
    (void)b;
    struct acl_write *w = parked;
    w->conn = NULL; /* the writes go on; nobody hears of them */
}

static const struct br_park_ops write_park_ops = {"an ACL change waiting for ZooKeeper",
                                                  write_cancel};

static void change_free(struct pattern_change *c)
{
    br_zk_acls_free(c->add, c->nadd);
    br_zk_acls_free(c->del, c->ndel);
    kp_free(c->name);
    kp_free(c);
}

/* The pattern's change ended (failed: the answer says so). */
static void change_done(struct pattern_change *c, bool ok, const char *why)
{
    struct acl_write *w = c->w;
    if (!ok) {
        br_warn("the ACLs of %s %s were not written: %s", br_acl_rtype_name(c->type), c->name, why);
        w->failed = true;
    }
    w->pending--;
    br_cop_free(c->op);
    change_free(c);
    write_finish(w);
}

static void pattern_read(struct br_zk_call *call, const struct br_zk_result *r);

static int read_pattern(struct pattern_change *c)
{
    char path[BR_ZK_ACL_TEXT_MAX + 96];
    if (!br_zk_acl_path(c->pattern, c->type, c->name, path, sizeof path)) {
        return -1;
    }
    c->op->call.done = pattern_read;
    return br_cluster_zk_ready(c->op->b) ? br_zk_get(c->op->b->zk, path, false,
                                                      br_zk_call_tag(&c->op->call))
                                         : -1;
}

static void announced(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct pattern_change *c = op->owner;
    /* the pattern is written: a notification lost only delays the other
     * brokers until their next session (as in Kafka) */
    if (r->rc != BR_ZK_OK) {
        br_warn("the ACL change notification of %s was not written: %s", c->name,
                br_zk_rc_name(r->rc));
    }
    op->owner = NULL;
    change_done(c, true, NULL);
}

static void pattern_written(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct pattern_change *c = op->owner;
    struct br_server *b = op->b;
    if ((r->rc == BR_ZK_BADVERSION || r->rc == BR_ZK_NODEEXISTS || r->rc == BR_ZK_NONODE ||
         r->rc == BR_ZK_CONNECTIONLOSS) &&
        ++op->attempts < MAX_ATTEMPTS && read_pattern(c) == 0) {
        return; /* another writer first, or the answer lost: read and merge again */
    }
    if (r->rc != BR_ZK_OK) {
        op->owner = NULL;
        change_done(c, false, br_zk_rc_name(r->rc));
        return;
    }
    /* this broker's cache now, the others' by the notification */
    char path[BR_ZK_ACL_TEXT_MAX + 96];
    (void)br_zk_acl_path(c->pattern, c->type, c->name, path, sizeof path);
    read_path(b, path);
    char *json = NULL;
    size_t json_len = 0;
    const char *folder = CHANGES;
    struct br_zk_acl_change ch = {c->type, c->pattern, ""};
    (void)snprintf(ch.name, sizeof ch.name, "%s", c->name);
    /* the name escaped as JSON: a group's may hold any byte but controls */
    int rc = br_zk_acl_change_encode(&ch, &folder, &json, &json_len);
    if (rc != 0) {
        json = NULL;
    }
    char seq_path[64];
    (void)snprintf(seq_path, sizeof seq_path, "%s/" CHANGE_PREFIX, folder);
    op->call.done = announced;
    kp_free(op->data);
    op->data = json;
    op->data_len = json_len;
    rc = json == NULL || !br_cluster_zk_ready(b)
             ? -1
             : br_zk_create(b->zk, seq_path, json, op->data_len, BR_ZK_PERSISTENT_SEQUENTIAL,
                            br_zk_call_tag(&op->call));
    if (rc != 0) {
        op->owner = NULL;
        change_done(c, true, NULL); /* written; only the notification is missing */
    }
}

static bool same_entry(const struct br_acl *a, const struct br_acl *b)
{
    return a->op == b->op && a->perm == b->perm && strcmp(a->principal, b->principal) == 0 &&
           strcmp(a->host, b->host) == 0;
}

/* What ZooKeeper holds, merged with the change and written back on its
 * version. */
static void pattern_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct pattern_change *c = op->owner;
    struct br_server *b = op->b;
    struct br_acl *have = NULL;
    size_t nhave = 0;
    char err[512] = "";
    if (r->rc == BR_ZK_OK &&
        br_zk_acls_decode(r->data, r->data_null ? 0 : r->data_len, r->path, &have, &nhave, err,
                          sizeof err) != 0) {
        op->owner = NULL;
        change_done(c, false, err);
        return;
    }
    if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
        if (++op->attempts < MAX_ATTEMPTS && read_pattern(c) == 0) {
            return;
        }
        op->owner = NULL;
        change_done(c, false, br_zk_rc_name(r->rc));
        return;
    }
    /* the merged set: what is there, less the deletions, plus the additions */
    struct br_acl *merged = kp_calloc(nhave + c->nadd + 1, sizeof *merged);
    size_t n = 0;
    for (size_t i = 0; merged != NULL && i < nhave; i++) {
        bool gone = false;
        for (size_t k = 0; k < c->ndel && !gone; k++) {
            gone = same_entry(&have[i], &c->del[k]);
        }
        if (!gone) {
            merged[n++] = have[i];
        }
    }
    for (size_t i = 0; merged != NULL && i < c->nadd; i++) {
        bool dup = false;
        for (size_t k = 0; k < n && !dup; k++) {
            dup = same_entry(&merged[k], &c->add[i]);
        }
        if (!dup) {
            merged[n++] = c->add[i];
        }
    }
    char *json = NULL;
    size_t len = 0;
    int rc = merged == NULL ? KP_E_NOMEM : n > 0 ? br_zk_acls_encode(merged, n, &json, &len) : 0;
    kp_free(merged); /* its strings are have's and c's */
    br_zk_acls_free(have, nhave);
    if (rc != 0) {
        op->owner = NULL;
        change_done(c, false, "the ACLs do not encode");
        return;
    }
    op->call.done = pattern_written;
    kp_free(op->data);
    op->data = json;
    op->data_len = len;
    char path[BR_ZK_ACL_TEXT_MAX + 96];
    (void)br_zk_acl_path(c->pattern, c->type, c->name, path, sizeof path);
    if (!br_cluster_zk_ready(b)) {
        rc = -1;
    } else if (r->rc == BR_ZK_NONODE) {
        /* nothing there: created (its parents first: a type folder Kafka
         * makes with it, createRecursive) */
        if (n == 0) {
            op->owner = NULL;
            change_done(c, true, NULL);
            return;
        }
        char parent[160];
        const char *slash = strrchr(path, '/');
        (void)snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
        struct br_cop *mk = br_cop_new(b, NULL, 0, NULL, path_made);
        if (mk != NULL && br_zk_create(b->zk, parent, "", 0, BR_ZK_PERSISTENT,
                                       br_zk_call_tag(&mk->call)) != 0) {
            br_cop_free(mk);
        }
        rc = br_zk_create(b->zk, path, json, len, BR_ZK_PERSISTENT, br_zk_call_tag(&op->call));
    } else if (n == 0) {
        rc = br_zk_delete(b->zk, path, r->stat.version, br_zk_call_tag(&op->call));
    } else {
        rc = br_zk_set(b->zk, path, json, len, r->stat.version, br_zk_call_tag(&op->call));
    }
    if (rc != 0) {
        op->owner = NULL;
        change_done(c, false, "ZooKeeper is not reachable");
    }
}

struct br_acl_zk_write *br_acl_zk_write_begin(struct br_req *r, const void *resp,
                                              const void *fail_resp)
{
    struct acl_write *w = kp_calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    struct kp_writer kw;
    const void *answers[2] = {resp, fail_resp};
    for (int i = 0; i < 2; i++) {
        kp_wr_init(&kw, (size_t)r->b->cfg.response_max_bytes);
        int err = kp_response_encode(&kw, r->hdr->RequestApiKey, r->version,
                                     r->hdr->CorrelationId, answers[i]);
        uint8_t *f = err == 0 ? kp_wr_steal(&kw, i == 0 ? &w->len : &w->fail_len) : NULL;
        kp_wr_free(&kw);
        if (i == 0) {
            w->frame = f;
        } else {
            w->fail_frame = f;
        }
    }
    if (w->frame == NULL || w->fail_frame == NULL) {
        kp_free(w->frame);
        kp_free(w->fail_frame);
        kp_free(w);
        return NULL;
    }
    w->b = r->b;
    w->conn = r->conn;
    w->slot = r->slot;
    w->park.ops = &write_park_ops;
    w->pending = 1; /* released by br_acl_zk_write_end */
    return (struct br_acl_zk_write *)w;
}

static struct br_acl *copy_entries(const struct br_acl *v, size_t n)
{
    struct br_acl *out = kp_calloc(n > 0 ? n : 1, sizeof *out);
    for (size_t i = 0; out != NULL && i < n; i++) {
        size_t pl = strlen(v[i].principal);
        size_t hl = strlen(v[i].host);
        out[i].principal = kp_malloc(pl + 1);
        out[i].host = kp_malloc(hl + 1);
        if (out[i].principal == NULL || out[i].host == NULL) {
            br_zk_acls_free(out, i + 1);
            return NULL;
        }
        memcpy(out[i].principal, v[i].principal, pl + 1);
        memcpy(out[i].host, v[i].host, hl + 1);
        out[i].op = v[i].op;
        out[i].perm = v[i].perm;
    }
    return out;
}

int br_acl_zk_write_pattern(struct br_acl_zk_write *wh, int8_t type, int8_t pattern,
                            const char *name, const struct br_acl *add, size_t nadd,
                            const struct br_acl *del, size_t ndel)
{
    struct acl_write *w = (struct acl_write *)wh;
    struct pattern_change *c = kp_calloc(1, sizeof *c);
    if (c == NULL) {
        return KP_E_NOMEM;
    }
    size_t nl = strlen(name);
    c->name = kp_malloc(nl + 1);
    c->add = copy_entries(add, nadd);
    c->del = copy_entries(del, ndel);
    c->op = br_cop_new(w->b, NULL, 0, NULL, pattern_read);
    if (c->name == NULL || c->add == NULL || c->del == NULL || c->op == NULL) {
        if (c->op != NULL) {
            br_cop_free(c->op);
        }
        c->nadd = c->add != NULL ? nadd : 0;
        c->ndel = c->del != NULL ? ndel : 0;
        change_free(c);
        return KP_E_NOMEM;
    }
    memcpy(c->name, name, nl + 1);
    c->nadd = nadd;
    c->ndel = ndel;
    c->type = type;
    c->pattern = pattern;
    c->w = w;
    c->op->owner = c;
    w->pending++;
    if (read_pattern(c) != 0) {
        c->op->owner = NULL;
        change_done(c, false, "ZooKeeper is not reachable, or the name cannot be a znode's");
    }
    return 0;
}

int br_acl_zk_write_end(struct br_acl_zk_write *wh, struct br_req *r)
{
    struct acl_write *w = (struct acl_write *)wh;
    if (w->pending > 1 && r->slot != NULL) {
        br_slot_set_parked(r->slot, &w->park);
    } else if (r->slot == NULL) {
        w->conn = NULL;
    }
    w->pending--;
    write_finish(w);
    return 0;
}
