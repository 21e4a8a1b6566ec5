/* samsa-broker: /admin/reassign_partitions watched for the admin API (see
 * reassign_watch.h). */
#include "reassign_watch.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"
#include "cluster/zk_call.h"

/* One request of the watch: the call first (the tag), its watch behind. */
struct rw_call {
    struct br_zk_call call;
    struct br_reassign_watch *w;
};

struct br_reassign_watch {
    struct br_broker *b;
    struct rw_call exists;
    struct rw_call get;
    bool busy;  /* an exists or its get under way */
    bool again; /* the watch fired meanwhile: read once more after it */
    struct br_zk_reassignment *moves;
    size_t nmoves;
    uint64_t version;
};

static void set_moves(struct br_reassign_watch *w, struct br_zk_reassignment *moves, size_t n)
{
    kp_free(w->moves);
    w->moves = moves;
    w->nmoves = n;
    w->version++;
}

/* The read is over: another one when the watch fired meanwhile. */
static void read_over(struct br_reassign_watch *w)
{
    w->busy = false;
    if (w->again) {
        w->again = false;
        br_reassign_watch_read(w);
    }
}

static void get_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_reassign_watch *w = ((struct rw_call *)(void *)call)->w;
    if (r->rc == BR_ZK_OK) {
        struct br_zk_reassignment *moves = NULL;
        size_t n = 0;
        char err[256];
        if (r->data == NULL || r->data_len == 0) {
            set_moves(w, NULL, 0);
        } else if (br_zk_reassignment_decode(r->data, r->data_len, r->path, &moves, &n, err,
                                             sizeof err) == 0) {
            set_moves(w, moves, n);
        } else {
            /* the controller refuses it too: nothing moves */
            br_warn("admin API: %s ignored: %s", r->path, err);
            set_moves(w, NULL, 0);
        }
    } else if (r->rc == BR_ZK_NONODE) {
        set_moves(w, NULL, 0); /* deleted between the exists and the get: its watch fired */
    } else {
        br_warn("admin API: reading %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    read_over(w);
}

static void exists_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_reassign_watch *w = ((struct rw_call *)(void *)call)->w;
    struct br_zk *zk = w->b->s.zk;
    if (r->rc == BR_ZK_OK && zk != NULL &&
        br_zk_get(zk, BR_REASSIGN_PATH, false, br_zk_call_tag(&w->get.call)) == 0) {
        return; /* busy until its answer */
    }
    if (r->rc == BR_ZK_NONODE) {
        if (w->nmoves > 0) {
            set_moves(w, NULL, 0);
        }
    } else if (r->rc != BR_ZK_OK) {
        /* a session that went: read again when one connects */
        br_warn("admin API: watching %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    read_over(w);
}

struct br_reassign_watch *br_reassign_watch_new(struct br_broker *b)
{
    struct br_reassign_watch *w = kp_calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    w->b = b;
    w->exists = (struct rw_call){{exists_done}, w};
    w->get = (struct rw_call){{get_done}, w};
    return w;
}

void br_reassign_watch_free(struct br_reassign_watch *w)
{
    if (w == NULL) {
        return;
    }
    kp_free(w->moves);
    kp_free(w);
}

void br_reassign_watch_read(struct br_reassign_watch *w)
{
    if (w == NULL) {
        return;
    }
    if (w->busy) {
        w->again = true;
        return;
    }
    struct br_zk *zk = w->b->s.zk;
    if (zk == NULL || br_zk_state(zk) != BR_ZK_STATE_CONNECTED) {
        return; /* read when the session connects */
    }
    if (br_zk_exists(zk, BR_REASSIGN_PATH, true, br_zk_call_tag(&w->exists.call)) != 0) {
        br_warn("admin API: %s not watched", BR_REASSIGN_PATH);
        return;
    }
    w->busy = true;
}

void br_reassign_watch_event(struct br_reassign_watch *w, enum br_zk_watch kind,
                             const char *path)
{
    if (w != NULL && kind != BR_ZK_WATCH_CHILD && strcmp(path, BR_REASSIGN_PATH) == 0) {
        br_reassign_watch_read(w);
    }
}

const struct br_zk_reassignment *br_reassign_watch_moves(const struct br_reassign_watch *w,
                                                         size_t *n)
{
    *n = w != NULL ? w->nmoves : 0;
    return w != NULL ? w->moves : NULL;
}

uint64_t br_reassign_watch_version(const struct br_reassign_watch *w)
{
    return w != NULL ? w->version : 0;
}
