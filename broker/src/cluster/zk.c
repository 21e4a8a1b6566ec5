/*
 * samsa-broker: an asynchronous ZooKeeper session (see zk.h).
 *
 * Three kinds of message come back through the reactor's mailbox, each the
 * first member of what it reports on: a request (struct zk_req, posted by
 * its completion), an event (struct zk_event: a session state or a watch,
 * posted by the watcher), the end of a helper thread (struct zk_helper).
 * Each posted message holds a reference on the br_zk, so the br_zk outlives
 * every message still in the mailbox, also after br_zk_close.
 *
 * Every session gets a number (gen). Events carry the number of the session
 * they come from; those of an earlier session are dropped on delivery.
 * Requests are answered whatever their session.
 *
 * One watcher serves a session (the handle's default one: reads pass
 * watch = 1), as in Kafka's ZooKeeperClient: no per-watch context to free,
 * and the client library reports each session event once.
 */
#define _GNU_SOURCE

#include "cluster/zk.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"
#include "base/number.h"
#include "base/worker.h"

/* The context of one session's handle, read by the client's threads. */
struct zk_sess {
    struct br_zk *zk;
    uint32_t gen;
};

struct zk_req;
struct zk_helper;

/* What the reactor calls with each kind of message (mailbox.h). */
static void deliver_req(void *ctx, struct br_mail *m);
static void deliver_event(void *ctx, struct br_mail *m);
static void deliver_helper(void *ctx, struct br_mail *m);
static void deliver_lost(void *ctx, struct br_mail *m);

struct br_zk {
    /* first: posted when an event could not be copied (see on_watch) */
    struct br_mail lost_mail;

    /* Set before any other thread runs, read by all of them, never written. */
    struct br_mailbox *mb;
    char *hosts;  /* the connect string's hosts */
    char *chroot; /* "" or "/a/b" */
    size_t chroot_len;
    int32_t session_timeout_ms;

    /* Shared: the owner's reference and one per message in the mailbox. */
    atomic_int refs;
    atomic_bool lost_posted;
    atomic_uint lost_gen;

    /* The reactor thread's. */
    const struct br_zk_ops *ops;
    void *ctx;
    enum br_zk_state state;
    zhandle_t *zh;        /* the current session's handle; NULL while a helper starts it */
    struct zk_sess *sess; /* its context */
    uint32_t gen;
    struct zk_helper *helper; /* a helper thread under way */
    bool link_up;             /* the current session's last state was CONNECTED */
    bool chroot_ready;        /* the chroot exists (made by this session) */
    int chroot_pending;       /* its creations under way */
    bool chroot_failed;
    bool has_session;
    int64_t session_id;
    uint8_t passwd[16];
    struct zk_req *reqs; /* under way: issued and not yet delivered */
    bool closed;
};

/* A request. The fields after `posted` are written by whoever answers it
 * (a client thread, or the reactor for an answer given at once) before the
 * post, and read by the reactor after it. */
struct zk_req {
    struct br_mail mail; /* first */
    struct br_zk *zk;
    struct zk_req *prev; /* zk->reqs, reactor thread */
    struct zk_req *next;
    uint64_t tag;
    enum br_zk_op op;
    bool internal; /* zk.c's own: the chroot's creation */
    uint32_t gen;
    char *path; /* as the owner named it */
    atomic_bool posted;
    int zrc;
    int rc; /* 0: from zrc; else BR_ZK_TOO_LARGE, BR_ZK_NOMEM */
    char *data;
    size_t data_len;
    bool data_null;
    bool has_stat;
    struct br_zk_stat stat;
    const char **children; /* one allocation: the pointers, then the names */
    size_t n_children;
    char *created;
};

/* A session state or a watch, copied by the watcher. */
struct zk_event {
    struct br_mail mail; /* first */
    struct br_zk *zk;
    uint32_t gen;
    int type;  /* ZOO_SESSION_EVENT, ZOO_CHANGED_EVENT... */
    int state; /* ZOO_CONNECTED_STATE... */
    char *path;
    int64_t session_id; /* ZOO_CONNECTED_STATE */
    uint8_t passwd[16];
};

/* A helper thread: closes old_zh, opens the new session's handle. */
struct zk_helper {
    struct br_mail mail; /* first */
    struct br_zk *zk;
    pthread_t thread;
    zhandle_t *old_zh;
    struct zk_sess *old_sess;
    struct zk_sess *new_sess;
    zhandle_t *new_zh; /* written by the helper before it posts */
    int init_errno;
    bool joined; /* br_zk_close joined it already */
};

/* ------------------------------------------------------------ references */

static void zk_free(struct br_zk *zk)
{
    kp_free(zk->hosts);
    kp_free(zk->chroot);
    kp_free(zk);
}

/* Any thread: m goes to the reactor, holding a reference on zk. */
static void post(struct br_zk *zk, struct br_mail *m)
{
    atomic_fetch_add(&zk->refs, 1);
    br_mailbox_post(zk->mb, m);
}

/* Reactor thread: the last reference frees zk. No client thread can take
 * one then: they only do while the owner's reference holds. */
static void unref(struct br_zk *zk)
{
    if (atomic_fetch_sub(&zk->refs, 1) == 1) {
        zk_free(zk);
    }
}

/* ------------------------------------------------------------ names */

void br_zk_library_logging_off(void)
{
    zoo_set_debug_level((ZooLogLevel)0); /* 0: off (the client's own rule) */
}

const char *br_zk_rc_name(int rc)
{
    static const char *const names[] = {
        [BR_ZK_OK] = "OK",
        [BR_ZK_NONODE] = "NONODE",
        [BR_ZK_NODEEXISTS] = "NODEEXISTS",
        [BR_ZK_BADVERSION] = "BADVERSION",
        [BR_ZK_NOTEMPTY] = "NOTEMPTY",
        [BR_ZK_NOCHILDRENFOREPHEMERALS] = "NOCHILDRENFOREPHEMERALS",
        [BR_ZK_CONNECTIONLOSS] = "CONNECTIONLOSS",
        [BR_ZK_SESSIONEXPIRED] = "SESSIONEXPIRED",
        [BR_ZK_CLOSING] = "CLOSING",
        [BR_ZK_TOO_LARGE] = "TOO_LARGE",
        [BR_ZK_NOMEM] = "NOMEM",
        [BR_ZK_ERROR] = "ERROR",
    };
    if (rc >= 0 && (size_t)rc < sizeof names / sizeof names[0] && names[rc] != NULL) {
        return names[rc];
    }
    return "UNKNOWN";
}

/* ZooKeeper's code as the owner acts on it. */
static int map_zrc(int zrc)
{
    switch (zrc) {
    case ZOK:
        return BR_ZK_OK;
    case ZNONODE:
        return BR_ZK_NONODE;
    case ZNODEEXISTS:
        return BR_ZK_NODEEXISTS;
    case ZBADVERSION:
        return BR_ZK_BADVERSION;
    case ZNOTEMPTY:
        return BR_ZK_NOTEMPTY;
    case ZNOCHILDRENFOREPHEMERALS:
        return BR_ZK_NOCHILDRENFOREPHEMERALS;
    case ZCONNECTIONLOSS:
    case ZOPERATIONTIMEOUT:
    case ZSESSIONMOVED: /* another connection took the session: not applied, retry */
        return BR_ZK_CONNECTIONLOSS;
    case ZSESSIONEXPIRED:
    case ZINVALIDSTATE: /* the handle is expired (or failed authentication) */
    case ZAUTHFAILED:
        return BR_ZK_SESSIONEXPIRED;
    case ZCLOSING:
        return BR_ZK_CLOSING;
    default:
        return BR_ZK_ERROR;
    }
}

/* ------------------------------------------------------------ paths */

/*
 * ZooKeeper's rule for a path (PathUtils.validatePath), on ASCII: "/", or
 * "/" then components separated by '/', none empty, "." or "..", no
 * control byte. A sequential create's path may end with '/': ZooKeeper
 * appends its counter.
 */
static bool path_valid(const char *p, bool sequential)
{
    size_t n = strnlen(p, BR_ZK_PATH_MAX + 1);
    if (n == 0 || n > BR_ZK_PATH_MAX || p[0] != '/') {
        return false;
    }
    if (n == 1) {
        return true;
    }
    size_t start = 1;
    for (size_t i = 1; i <= n; i++) {
        if (i < n) {
            unsigned char c = (unsigned char)p[i];
            if (c < 0x20 || c >= 0x7f) {
                return false;
            }
            if (c != '/') {
                continue;
            }
        }
        size_t len = i - start;
        if (len == 0) {
            if (!(i == n && sequential)) {
                return false; /* "//" or a trailing '/' */
            }
        } else if ((len == 1 && p[start] == '.') ||
                   (len == 2 && p[start] == '.' && p[start + 1] == '.')) {
            return false;
        }
        start = i + 1;
    }
    return true;
}

/* full (a path as ZooKeeper names it) as the owner names it, or NULL when
 * it lies outside the chroot. Any thread. */
static const char *relative(const struct br_zk *zk, const char *full)
{
    if (zk->chroot_len == 0) {
        return full;
    }
    if (strncmp(full, zk->chroot, zk->chroot_len) != 0) {
        return NULL;
    }
    if (full[zk->chroot_len] == '\0') {
        return "/";
    }
    return full[zk->chroot_len] == '/' ? full + zk->chroot_len : NULL;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *p = kp_malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n + 1);
    }
    return p;
}

/* ------------------------------------------------------------ the client's threads */

/* The client library's log lines, into ours (any thread). They look like
 * "<time>:<pid>(<thread>):ZOO_INFO@<function>@<line>: <message>". */
static void on_log(const char *message)
{
    enum br_level level = BR_LOG_INFO;
    const char *at = strstr(message, "ZOO_");
    if (at != NULL) {
        if (strncmp(at, "ZOO_ERROR", 9) == 0) {
            level = BR_LOG_ERROR;
        } else if (strncmp(at, "ZOO_WARN", 8) == 0) {
            level = BR_LOG_WARN;
        } else if (strncmp(at, "ZOO_DEBUG", 9) == 0) {
            level = BR_LOG_DEBUG;
        }
        message = at;
    }
    size_t n = strlen(message);
    while (n > 0 && (message[n - 1] == '\n' || message[n - 1] == '\r')) {
        n--;
    }
    br_logmsg(level, __FILE__, __LINE__, "zookeeper client: %.*s", (int)(n > 2000 ? 2000 : n),
              message);
}

static struct zk_req *req_of(const void *data)
{
    /* the context given to zoo_a*: ours, handed back as const */
    return (struct zk_req *)(uintptr_t)data;
}

static void copy_stat(struct zk_req *r, const struct Stat *st)
{
    if (st == NULL) {
        return;
    }
    r->has_stat = true;
    r->stat.czxid = st->czxid;
    r->stat.mzxid = st->mzxid;
    r->stat.ctime_ms = st->ctime;
    r->stat.ephemeral_owner = st->ephemeralOwner;
    r->stat.version = st->version;
    r->stat.cversion = st->cversion;
    r->stat.data_length = st->dataLength;
    r->stat.num_children = st->numChildren;
}

/* Any thread: the answer is in r; off it goes. */
static void answer(struct zk_req *r, int zrc)
{
    r->zrc = zrc;
    atomic_store(&r->posted, true);
    post(r->zk, &r->mail);
}

static void on_void(int rc, const void *data)
{
    answer(req_of(data), rc);
}

static void on_stat(int rc, const struct Stat *stat, const void *data)
{
    struct zk_req *r = req_of(data);
    if (rc == ZOK) {
        copy_stat(r, stat);
    }
    answer(r, rc);
}

static void on_data(int rc, const char *value, int value_len, const struct Stat *stat,
                    const void *data)
{
    struct zk_req *r = req_of(data);
    if (rc == ZOK) {
        copy_stat(r, stat);
        if (value == NULL || value_len < 0) {
            r->data_null = true;
        } else if ((size_t)value_len > BR_ZK_DATA_MAX) {
            r->rc = BR_ZK_TOO_LARGE;
        } else {
            r->data = kp_malloc((size_t)value_len + 1);
            if (r->data == NULL) {
                r->rc = BR_ZK_NOMEM;
            } else {
                memcpy(r->data, value, (size_t)value_len);
                r->data[value_len] = '\0';
                r->data_len = (size_t)value_len;
            }
        }
    }
    answer(r, rc);
}

static void on_string(int rc, const char *value, const void *data)
{
    struct zk_req *r = req_of(data);
    if (rc == ZOK && value != NULL) {
        const char *rel = relative(r->zk, value);
        r->created = dup_str(rel != NULL ? rel : value);
        if (r->created == NULL) {
            r->rc = BR_ZK_NOMEM;
        }
    }
    answer(r, rc);
}

static void on_children(int rc, const struct String_vector *strings, const struct Stat *stat,
                        const void *data)
{
    struct zk_req *r = req_of(data);
    if (rc == ZOK) {
        copy_stat(r, stat);
        size_t n = strings != NULL && strings->count > 0 ? (size_t)strings->count : 0;
        size_t bytes = n * sizeof(char *);
        for (size_t i = 0; i < n && n <= BR_ZK_MAX_CHILDREN; i++) {
            bytes += strlen(strings->data[i]) + 1;
        }
        if (n > BR_ZK_MAX_CHILDREN) {
            r->rc = BR_ZK_TOO_LARGE;
        } else if (n > 0) {
            /* the pointers, then the names, in one allocation */
            void *block = kp_malloc(bytes);
            if (block == NULL) {
                r->rc = BR_ZK_NOMEM;
            } else {
                const char **ptrs = block;
                char *names = (char *)block + n * sizeof(char *);
                for (size_t i = 0; i < n; i++) {
                    size_t len = strlen(strings->data[i]);
                    memcpy(names, strings->data[i], len + 1);
                    ptrs[i] = names;
                    names += len + 1;
                }
                r->children = ptrs;
                r->n_children = n;
            }
        }
    }
    answer(r, rc);
}

/*
 * The session's watcher, on the client's completion thread: session states
 * and watch events, copied and posted. Without memory for the copy the
 * event would be lost; the session is then given up (see deliver_lost).
 */
static void on_watch(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    const struct zk_sess *s = ctx;
    struct br_zk *zk = s->zk;
    struct zk_event *ev = kp_calloc(1, sizeof *ev);
    if (ev != NULL && type != ZOO_SESSION_EVENT && path != NULL) {
        ev->path = dup_str(path);
        if (ev->path == NULL) {
            kp_free(ev);
            ev = NULL;
        }
    }
    if (ev == NULL) {
        atomic_store(&zk->lost_gen, s->gen);
        if (!atomic_exchange(&zk->lost_posted, true)) {
            post(zk, &zk->lost_mail);
        }
        return;
    }
    ev->zk = zk;
    ev->gen = s->gen;
    ev->type = type;
    ev->state = state;
    if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE) {
        const clientid_t *id = zoo_client_id(zh);
        if (id != NULL) {
            ev->session_id = id->client_id;
            memcpy(ev->passwd, id->passwd, sizeof ev->passwd);
        }
    }
    ev->mail.deliver = deliver_event;
    post(zk, &ev->mail);
}

/* ------------------------------------------------------------ the helper thread */

/* Ends the previous handle, starts the next, posts that it is done. The
 * only blocking calls of the client library outside br_zk_close. */
static void *helper_main(void *arg)
{
    struct zk_helper *h = arg;
    struct br_zk *zk = h->zk;
    br_thread_name("zk");
    if (h->old_zh != NULL) {
        /* answers what was under way with ZCLOSING; tells a live session's
         * server, waiting for it up to about 4.5 s */
        int rc = zookeeper_close(h->old_zh);
        if (rc != ZOK) {
            br_warn("zookeeper: closing the previous session: %s", zerror(rc));
        }
    }
    kp_free(h->old_sess); /* its handle's threads are gone */
    errno = 0;
    h->new_zh = zookeeper_init2(zk->hosts, on_watch, zk->session_timeout_ms, NULL, h->new_sess,
                                ZOO_NO_LOG_CLIENTENV, on_log);
    h->init_errno = errno;
    post(zk, &h->mail);
    return NULL;
}

/* Starts a session: a new context and a helper thread that closes the
 * current handle (if any) and opens the new one. Nothing changes on
 * failure. */
static int start_session(struct br_zk *zk)
{
    struct zk_helper *h = kp_calloc(1, sizeof *h);
    struct zk_sess *s = kp_calloc(1, sizeof *s);
    if (h == NULL || s == NULL) {
        kp_free(h);
        kp_free(s);
        return KP_E_NOMEM;
    }
    s->zk = zk;
    s->gen = zk->gen + 1;
    h->mail.deliver = deliver_helper;
    h->zk = zk;
    h->old_zh = zk->zh;
    h->old_sess = zk->sess;
    h->new_sess = s;
    int rc = pthread_create(&h->thread, NULL, helper_main, h);
    if (rc != 0) {
        br_error("zookeeper: cannot start a thread to open the session: %s", strerror(rc));
        kp_free(h);
        kp_free(s);
        return KP_E_NOMEM;
    }
    zk->helper = h;
    zk->gen = s->gen;
    zk->sess = s;
    zk->zh = NULL;
    zk->state = BR_ZK_STATE_OPENING;
    zk->link_up = false;
    zk->chroot_ready = false;
    zk->chroot_pending = 0;
    zk->chroot_failed = false;
    zk->has_session = false;
    return 0;
}

/* ------------------------------------------------------------ the reactor: requests */

static void req_link(struct br_zk *zk, struct zk_req *r)
{
    r->prev = NULL;
    r->next = zk->reqs;
    if (zk->reqs != NULL) {
        zk->reqs->prev = r;
    }
    zk->reqs = r;
}

static void req_unlink(struct br_zk *zk, struct zk_req *r)
{
    if (r->prev != NULL) {
        r->prev->next = r->next;
    } else if (zk->reqs == r) {
        zk->reqs = r->next;
    }
    if (r->next != NULL) {
        r->next->prev = r->prev;
    }
    r->prev = NULL;
    r->next = NULL;
}

static void req_free(struct zk_req *r)
{
    kp_free(r->path);
    kp_free(r->data);
    kp_free((void *)r->children);
    kp_free(r->created);
    kp_free(r);
}

/*
 * A request of the owner (or, internal, of zk.c), linked and ready to send:
 * *full is the path to give ZooKeeper (kp_free it after). Returns 0 with
 * *r NULL when it was answered at once (no usable session), KP_E_INVALID_ARG
 * or KP_E_NOMEM with nothing made.
 */
static int begin(struct br_zk *zk, enum br_zk_op op, const char *path, bool sequential,
                 bool internal, uint64_t tag, struct zk_req **out, char **full)
{
    *out = NULL;
    *full = NULL;
    if (zk == NULL || zk->closed || path == NULL || !path_valid(path, sequential)) {
        return KP_E_INVALID_ARG;
    }
    size_t n = strlen(path);
    size_t prefix = internal ? 0 : zk->chroot_len;
    if (prefix + n > BR_ZK_PATH_MAX) {
        return KP_E_INVALID_ARG;
    }
    struct zk_req *r = kp_calloc(1, sizeof *r);
    if (r == NULL) {
        return KP_E_NOMEM;
    }
    r->mail.deliver = deliver_req;
    r->zk = zk;
    r->tag = tag;
    r->op = op;
    r->internal = internal;
    r->gen = zk->gen;
    r->path = dup_str(path);
    if (r->path == NULL) {
        kp_free(r);
        return KP_E_NOMEM;
    }
    int refuse = 0;
    if (zk->state == BR_ZK_STATE_EXPIRED) {
        refuse = ZSESSIONEXPIRED;
    } else if (zk->zh == NULL || (zk->state == BR_ZK_STATE_OPENING && !internal)) {
        refuse = ZCONNECTIONLOSS; /* not connected yet: wait for CONNECTED */
    }
    if (refuse == 0) {
        /* "/" in the chroot is the chroot itself */
        size_t keep = prefix > 0 && n == 1 ? 0 : n;
        *full = kp_malloc(prefix + keep + 1);
        if (*full == NULL) {
            req_free(r);
            return KP_E_NOMEM;
        }
        memcpy(*full, zk->chroot, prefix);
        memcpy(*full + prefix, path, keep);
        (*full)[prefix + keep] = '\0';
    }
    req_link(zk, r);
    if (refuse != 0) {
        answer(r, refuse);
        return 0;
    }
    *out = r;
    return 0;
}

/* After the zoo_a* call: what it returned decides who answers r. */
static void sent(struct zk_req *r, char *full, int zrc)
{
    if (zrc == ZMARSHALLINGERROR) {
        /* the library ran out of memory, perhaps after it kept the
         * request: it stays under way (zk.h) */
        br_error("zookeeper: %s: the client library is out of memory; the request may never "
                 "be answered",
                 full);
    } else if (zrc != ZOK) {
        answer(r, zrc); /* refused before it left: the completion never comes */
    }
    kp_free(full);
}

static int data_len_int(const void *data, size_t len, int *out)
{
    if (len > BR_ZK_DATA_MAX) {
        return KP_E_INVALID_ARG;
    }
    *out = data == NULL ? -1 : (int)len; /* -1: no data (Kafka's null) */
    return 0;
}

static int create_at(struct br_zk *zk, const char *path, const void *data, size_t len,
                     enum br_zk_mode mode, bool internal, uint64_t tag)
{
    int vlen = 0;
    int flags;
    switch (mode) {
    case BR_ZK_PERSISTENT:
        flags = ZOO_PERSISTENT;
        break;
    case BR_ZK_EPHEMERAL:
        flags = ZOO_EPHEMERAL;
        break;
    case BR_ZK_PERSISTENT_SEQUENTIAL:
        flags = ZOO_PERSISTENT_SEQUENTIAL;
        break;
    case BR_ZK_EPHEMERAL_SEQUENTIAL:
        flags = ZOO_EPHEMERAL_SEQUENTIAL;
        break;
    default:
        return KP_E_INVALID_ARG;
    }
    if (data_len_int(data, len, &vlen) != 0) {
        return KP_E_INVALID_ARG;
    }
    bool sequential = mode == BR_ZK_PERSISTENT_SEQUENTIAL || mode == BR_ZK_EPHEMERAL_SEQUENTIAL;
    struct zk_req *r = NULL;
    char *full = NULL;
    int rc = begin(zk, BR_ZK_OP_CREATE, path, sequential, internal, tag, &r, &full);
    if (rc != 0 || r == NULL) {
        return rc;
    }
    int zrc = zoo_acreate(zk->zh, full, data, vlen, &ZOO_OPEN_ACL_UNSAFE, flags, on_string, r);
    sent(r, full, zrc);
    return 0;
}

int br_zk_create(struct br_zk *zk, const char *path, const void *data, size_t len,
                 enum br_zk_mode mode, uint64_t tag)
{
    return create_at(zk, path, data, len, mode, false, tag);
}

int br_zk_get(struct br_zk *zk, const char *path, bool watch, uint64_t tag)
{
    struct zk_req *r = NULL;
    char *full = NULL;
    int rc = begin(zk, BR_ZK_OP_GET, path, false, false, tag, &r, &full);
    if (rc != 0 || r == NULL) {
        return rc;
    }
    sent(r, full, zoo_aget(zk->zh, full, watch ? 1 : 0, on_data, r));
    return 0;
}

int br_zk_set(struct br_zk *zk, const char *path, const void *data, size_t len, int32_t version,
              uint64_t tag)
{
    int vlen = 0;
    if (data_len_int(data, len, &vlen) != 0 || version < -1) {
        return KP_E_INVALID_ARG;
    }
    struct zk_req *r = NULL;
    char *full = NULL;
    int rc = begin(zk, BR_ZK_OP_SET, path, false, false, tag, &r, &full);
    if (rc != 0 || r == NULL) {
        return rc;
    }
    sent(r, full, zoo_aset(zk->zh, full, data, vlen, version, on_stat, r));
    return 0;
}

int br_zk_delete(struct br_zk *zk, const char *path, int32_t version, uint64_t tag)
{
    if (version < -1) {
        return KP_E_INVALID_ARG;
    }
    struct zk_req *r = NULL;
    char *full = NULL;
    int rc = begin(zk, BR_ZK_OP_DELETE, path, false, false, tag, &r, &full);
    if (rc != 0 || r == NULL) {
        return rc;
    }
    sent(r, full, zoo_adelete(zk->zh, full, version, on_void, r));
    return 0;
}

int br_zk_exists(struct br_zk *zk, const char *path, bool watch, uint64_t tag)
{
    struct zk_req *r = NULL;
    char *full = NULL;
    int rc = begin(zk, BR_ZK_OP_EXISTS, path, false, false, tag, &r, &full);
    if (rc != 0 || r == NULL) {
        return rc;
    }
    sent(r, full, zoo_aexists(zk->zh, full, watch ? 1 : 0, on_stat, r));
    return 0;
}

int br_zk_get_children(struct br_zk *zk, const char *path, bool watch, uint64_t tag)
{
    struct zk_req *r = NULL;
    char *full = NULL;
    int rc = begin(zk, BR_ZK_OP_GET_CHILDREN, path, false, false, tag, &r, &full);
    if (rc != 0 || r == NULL) {
        return rc;
    }
    sent(r, full, zoo_aget_children2(zk->zh, full, watch ? 1 : 0, on_children, r));
    return 0;
}

/* ------------------------------------------------------------ the reactor: the session */

static void tell(struct br_zk *zk, enum br_zk_event ev)
{
    zk->ops->session(zk->ctx, zk, ev);
}

static void expire(struct br_zk *zk, const char *why)
{
    if (zk->state == BR_ZK_STATE_EXPIRED) {
        return;
    }
    br_warn("zookeeper: session 0x%llx %s", (unsigned long long)zk->session_id, why);
    zk->state = BR_ZK_STATE_EXPIRED;
    zk->link_up = false;
    zk->has_session = false;
    tell(zk, BR_ZK_EVENT_EXPIRED);
}

/* Creates every missing znode of the chroot's path, persistent and empty
 * (Kafka 2.0's KafkaServer.initZkClient: makeSurePersistentPathExists on
 * the chroot before it connects to it). */
static void start_chroot(struct br_zk *zk)
{
    zk->chroot_failed = false;
    char path[BR_ZK_PATH_MAX + 1];
    for (size_t i = 1; i <= zk->chroot_len; i++) {
        if (i < zk->chroot_len && zk->chroot[i] != '/') {
            continue;
        }
        memcpy(path, zk->chroot, i);
        path[i] = '\0';
        int rc = create_at(zk, path, NULL, 0, BR_ZK_PERSISTENT, true, 0);
        if (rc != 0) {
            br_error("zookeeper: cannot create the chroot %s: %s", path, kp_err_str(rc));
            zk->chroot_failed = true;
            break;
        }
        zk->chroot_pending++;
    }
}

/* Moves the session on when it can: a link up and a handle, then the
 * chroot made, then CONNECTED told. */
static void advance(struct br_zk *zk)
{
    if (zk->closed || zk->zh == NULL || !zk->link_up || zk->state == BR_ZK_STATE_EXPIRED) {
        return;
    }
    if (!zk->chroot_ready) {
        if (zk->chroot_len == 0) {
            zk->chroot_ready = true;
        } else if (zk->chroot_pending == 0) {
            start_chroot(zk);
        }
        if (!zk->chroot_ready) {
            return;
        }
    }
    if (zk->state == BR_ZK_STATE_OPENING || zk->state == BR_ZK_STATE_DISCONNECTED) {
        zk->state = BR_ZK_STATE_CONNECTED;
        tell(zk, BR_ZK_EVENT_CONNECTED);
    }
}

/* An answer to one of the chroot's creations. */
static void chroot_done(struct br_zk *zk, const struct zk_req *r)
{
    if (r->gen != zk->gen || zk->chroot_pending == 0) {
        return; /* an earlier session's */
    }
    zk->chroot_pending--;
    if (r->zrc != ZOK && r->zrc != ZNODEEXISTS) {
        /* a connection lost is retried at the next CONNECTED; anything
         * else (no permission) leaves the session OPENING: the owner's
         * connection timeout ends it */
        br_warn("zookeeper: creating the chroot %s: %s", r->path, zerror(r->zrc));
        zk->chroot_failed = true;
    }
    if (zk->chroot_pending == 0 && !zk->chroot_failed) {
        zk->chroot_ready = true;
        advance(zk);
    }
}

static void deliver_req(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct zk_req *r = (struct zk_req *)(void *)m;
    struct br_zk *zk = r->zk;
    req_unlink(zk, r);
    if (zk->closed) {
        /* nobody to tell */
    } else if (r->internal) {
        chroot_done(zk, r);
    } else {
        struct br_zk_result res;
        memset(&res, 0, sizeof res);
        res.op = r->op;
        res.zrc = r->zrc;
        res.rc = r->rc != 0 && r->zrc == ZOK ? r->rc : map_zrc(r->zrc);
        res.path = r->path;
        if (res.rc == BR_ZK_OK) {
            res.data = r->data;
            res.data_len = r->data_len;
            res.data_null = r->data_null;
            res.has_stat = r->has_stat;
            res.stat = r->stat;
            res.children = r->children;
            res.n_children = r->n_children;
            res.created_path = r->created;
        }
        zk->ops->done(zk->ctx, zk, r->tag, &res);
    }
    req_free(r);
    unref(zk);
}

static void session_event(struct br_zk *zk, const struct zk_event *ev)
{
    if (ev->state == ZOO_CONNECTED_STATE) {
        bool first = !zk->has_session;
        zk->link_up = true;
        zk->has_session = true;
        zk->session_id = ev->session_id;
        memcpy(zk->passwd, ev->passwd, sizeof zk->passwd);
        if (first) {
            br_info("zookeeper: session 0x%llx established with %s%s%s",
                    (unsigned long long)zk->session_id, zk->hosts,
                    zk->chroot_len > 0 ? ", chroot " : "", zk->chroot);
        }
        advance(zk);
    } else if (ev->state == ZOO_EXPIRED_SESSION_STATE) {
        expire(zk, "expired");
    } else if (ev->state == ZOO_AUTH_FAILED_STATE) {
        expire(zk, "failed authentication");
    } else {
        /* CONNECTING (ASSOCIATING, NOTCONNECTED): the link is down, the
         * client reconnects */
        zk->link_up = false;
        if (zk->state == BR_ZK_STATE_CONNECTED) {
            br_warn("zookeeper: session 0x%llx disconnected; reconnecting",
                    (unsigned long long)zk->session_id);
            zk->state = BR_ZK_STATE_DISCONNECTED;
            tell(zk, BR_ZK_EVENT_DISCONNECTED);
        }
    }
}

static void watch_event(struct br_zk *zk, const struct zk_event *ev)
{
    enum br_zk_watch kind;
    if (ev->type == ZOO_CREATED_EVENT) {
        kind = BR_ZK_WATCH_CREATED;
    } else if (ev->type == ZOO_DELETED_EVENT) {
        kind = BR_ZK_WATCH_DELETED;
    } else if (ev->type == ZOO_CHANGED_EVENT) {
        kind = BR_ZK_WATCH_CHANGED;
    } else if (ev->type == ZOO_CHILD_EVENT) {
        kind = BR_ZK_WATCH_CHILD;
    } else {
        br_debug("zookeeper: watch event %d on %s ignored", ev->type,
                 ev->path != NULL ? ev->path : "(no path)");
        return;
    }
    const char *path = ev->path != NULL ? relative(zk, ev->path) : NULL;
    if (path == NULL) {
        br_debug("zookeeper: watch event on %s, outside the chroot, ignored",
                 ev->path != NULL ? ev->path : "(no path)");
        return;
    }
    zk->ops->watch(zk->ctx, zk, kind, path);
}

static void deliver_event(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct zk_event *ev = (struct zk_event *)(void *)m;
    struct br_zk *zk = ev->zk;
    /* an earlier session's events are over */
    if (!zk->closed && ev->gen == zk->gen) {
        if (ev->type == ZOO_SESSION_EVENT) {
            session_event(zk, ev);
        } else {
            watch_event(zk, ev);
        }
    }
    kp_free(ev->path);
    kp_free(ev);
    unref(zk);
}

static void deliver_helper(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct zk_helper *h = (struct zk_helper *)(void *)m;
    struct br_zk *zk = h->zk;
    if (!h->joined) {
        /* it posted this as its last act: the join waits for its return */
        (void)pthread_join(h->thread, NULL);
    }
    if (zk->helper == h) {
        zk->helper = NULL;
    }
    if (!zk->closed && h->new_sess->gen == zk->gen) {
        zk->zh = h->new_zh;
        if (zk->zh == NULL) {
            br_error("zookeeper: cannot start a session with %s: %s", zk->hosts,
                     h->init_errno != 0 ? strerror(h->init_errno) : "unknown error");
            expire(zk, "could not be started");
        } else {
            advance(zk); /* its CONNECTED may have come first */
        }
    }
    kp_free(h);
    unref(zk);
}

static void deliver_lost(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct br_zk *zk = (struct br_zk *)(void *)m;
    unsigned gen = atomic_load(&zk->lost_gen);
    atomic_store(&zk->lost_posted, false);
    if (!zk->closed && gen == zk->gen) {
        br_error("zookeeper: an event of session 0x%llx could not be copied (out of memory): "
                 "the session is given up",
                 (unsigned long long)zk->session_id);
        expire(zk, "given up");
    }
    unref(zk);
}

/* ------------------------------------------------------------ open, reopen, close */

/* host:port[,host:port...]: no empty entry, each with a port 1..65535. */
static bool hosts_valid(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != ',') {
            continue;
        }
        const char *e = s + start;
        size_t len = i - start;
        size_t colon = len;
        for (size_t k = len; k > 0; k--) {
            if (e[k - 1] == ':') {
                colon = k - 1;
                break;
            }
        }
        if (colon == len || colon == 0 || len - colon - 1 == 0 || len - colon - 1 > 5) {
            return false;
        }
        uint64_t port = 0;
        if (!br_num_parse_u64(e + colon + 1, len - colon - 1, 65535, &port) || port < 1) {
            return false;
        }
        start = i + 1;
    }
    return true;
}

__attribute__((format(printf, 3, 4))) static int open_error(char *err, size_t errlen,
                                                            const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return KP_E_INVALID_ARG;
}

int br_zk_open(const struct br_zk_config *cfg, struct br_mailbox *mb, const struct br_zk_ops *ops,
               void *ctx, struct br_zk **out, char *err, size_t errlen)
{
    *out = NULL;
    const char *s = cfg->connect;
    size_t n = s != NULL ? strnlen(s, BR_ZK_CONNECT_MAX + 1) : 0;
    if (n == 0 || n > BR_ZK_CONNECT_MAX) {
        return open_error(err, errlen, "zookeeper.connect must hold 1 to %d bytes",
                          BR_ZK_CONNECT_MAX);
    }
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f) {
            return open_error(err, errlen,
                              "zookeeper.connect: byte %zu is not printable ASCII "
                              "(spaces are not allowed)",
                              i);
        }
    }
    const char *slash = memchr(s, '/', n);
    size_t hosts_n = slash != NULL ? (size_t)(slash - s) : n;
    if (!hosts_valid(s, hosts_n)) {
        return open_error(err, errlen,
                          "zookeeper.connect: \"%.*s\" is not host:port[,host:port"
                          "...]",
                          (int)hosts_n, s);
    }
    const char *chroot = slash != NULL ? slash : "";
    size_t chroot_n = n - hosts_n;
    if (chroot_n == 1) {
        chroot_n = 0; /* "/" is the root: no chroot */
        chroot = "";
    }
    if (chroot_n > 0 && (!path_valid(chroot, false) || chroot_n > BR_ZK_PATH_MAX / 2)) {
        return open_error(err, errlen,
                          "zookeeper.connect: the chroot \"%s\" is not a valid "
                          "ZooKeeper path (no trailing '/', no empty, \".\" or \"..\" part)",
                          chroot);
    }
    if (cfg->session_timeout_ms < 1) {
        return open_error(err, errlen, "zookeeper.session.timeout.ms must be at least 1");
    }
    if (mb == NULL || ops == NULL || ops->session == NULL || ops->watch == NULL ||
        ops->done == NULL) {
        return open_error(err, errlen, "no mailbox or no ops");
    }
    struct br_zk *zk = kp_calloc(1, sizeof *zk);
    if (zk == NULL) {
        goto out_nomem;
    }
    zk->hosts = kp_malloc(hosts_n + 1);
    zk->chroot = kp_malloc(chroot_n + 1);
    if (zk->hosts == NULL || zk->chroot == NULL) {
        goto out_free;
    }
    memcpy(zk->hosts, s, hosts_n);
    zk->hosts[hosts_n] = '\0';
    memcpy(zk->chroot, chroot, chroot_n);
    zk->chroot[chroot_n] = '\0';
    zk->chroot_len = chroot_n;
    zk->session_timeout_ms = cfg->session_timeout_ms;
    zk->mb = mb;
    zk->ops = ops;
    zk->ctx = ctx;
    zk->lost_mail.deliver = deliver_lost;
    atomic_init(&zk->refs, 1);
    atomic_init(&zk->lost_posted, false);
    atomic_init(&zk->lost_gen, 0);
    zk->state = BR_ZK_STATE_OPENING;
    if (start_session(zk) != 0) {
        goto out_free;
    }
    *out = zk;
    return 0;

out_free:
    zk_free(zk);
out_nomem:
    if (err != NULL && errlen > 0) {
        (void)snprintf(err, errlen, "out of memory, or no thread, starting the ZooKeeper session");
    }
    return KP_E_NOMEM;
}

int br_zk_reopen(struct br_zk *zk)
{
    if (zk == NULL || zk->closed || zk->helper != NULL) {
        return KP_E_INVALID_ARG;
    }
    return start_session(zk);
}

void br_zk_close(struct br_zk *zk)
{
    if (zk == NULL || zk->closed) {
        return;
    }
    zk->closed = true;
    zk->state = BR_ZK_STATE_CLOSED;
    if (zk->helper != NULL) {
        struct zk_helper *h = zk->helper;
        (void)pthread_join(h->thread, NULL);
        h->joined = true;
        zk->zh = h->new_zh; /* the session it started is the current one */
        zk->helper = NULL;  /* its message, in the mailbox, frees it */
    }
    if (zk->zh != NULL) {
        /* answers what is under way with ZCLOSING (posted, delivered to
         * nobody); tells the server, so the session's ephemeral znodes go
         * now rather than at its timeout */
        int rc = zookeeper_close(zk->zh);
        if (rc != ZOK) {
            br_warn("zookeeper: closing session 0x%llx: %s", (unsigned long long)zk->session_id,
                    zerror(rc));
        }
        zk->zh = NULL;
    }
    kp_free(zk->sess);
    zk->sess = NULL;
    /* every client thread is gone: a request not answered now never is */
    struct zk_req *r = zk->reqs;
    while (r != NULL) {
        struct zk_req *next = r->next;
        if (!atomic_load(&r->posted)) {
            req_unlink(zk, r);
            req_free(r);
        }
        r = next;
    }
    unref(zk);
}

enum br_zk_state br_zk_state(const struct br_zk *zk)
{
    return zk->state;
}

int br_zk_session(const struct br_zk *zk, int64_t *id, uint8_t passwd[16])
{
    if (zk->closed || !zk->has_session) {
        return KP_E_INVALID_ARG;
    }
    *id = zk->session_id;
    memcpy(passwd, zk->passwd, sizeof zk->passwd);
    return 0;
}

const char *br_zk_chroot(const struct br_zk *zk)
{
    return zk->chroot;
}

const char *br_zk_hosts(const struct br_zk *zk)
{
    return zk->hosts;
}
