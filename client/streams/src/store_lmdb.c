/*
 * The LMDB backend of the stores: one LMDB environment per task, in
 * <state dir>/<application.id>/<sub-topology>_<partition> (Kafka Streams'
 * state.dir/<application.id>/<taskId> layout, ProcessorStateManager.java
 * 2.0), one named database per store and one, "__positions", for the
 * task's input positions (position.c). The puts between two commits go into
 * one write transaction, which the commit closes after writing the
 * positions into it (st_lmdb_commit): the state on disk and the positions
 * it reflects are always each other's, whatever moment a kill -9 comes at
 * (Kafka 2.0 writes its changelog offsets to a .checkpoint file after
 * flushing the stores, ProcessorStateManager.checkpoint, so that the two
 * can disagree after a crash; KIP-892 brings the transaction to trunk).
 * Committed without fsync (MDB_NOSYNC): the changelog topic is the durable
 * copy, and LMDB keeps the file consistent through a process crash (a
 * system crash may undo the last transactions: lmdb.h, MDB_NOSYNC).
 *
 * A value read is copied into the backend's buffer: LMDB's pointers live
 * only as long as their read transaction.
 */
#include "internal.h"

#ifdef SAMSA_ST_HAVE_LMDB

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct st_lmdb_env {
    MDB_env *env;
    unsigned refs;
    MDB_dbi positions;
    MDB_txn *txn;   /* the write transaction since the last commit, or NULL */
};

#define POSITIONS_DB "__positions"

/* The open write transaction (begun when there is none). */
static int write_txn(struct st_lmdb_env *e, MDB_txn **txn)
{
    if (e->txn == NULL) {
        int rc = mdb_txn_begin(e->env, NULL, 0, &e->txn);
        if (rc != 0) {
            e->txn = NULL;
            return rc;
        }
    }
    *txn = e->txn;
    return 0;
}

/* A read transaction, or the open write one (which sees its own puts). */
static int read_txn(struct st_lmdb_env *e, MDB_txn **txn)
{
    if (e->txn != NULL) {
        *txn = e->txn;
        return 0;
    }
    return mdb_txn_begin(e->env, NULL, MDB_RDONLY, txn);
}

static void read_done(struct st_lmdb_env *e, MDB_txn *txn)
{
    if (txn != e->txn) {
        mdb_txn_abort(txn);
    }
}

struct lmdb_store {
    struct st_lmdb_env *env;
    MDB_dbi dbi;
    uint8_t *buf;   /* the last value read */
    size_t buf_cap;
};

static int lmdb_err(int rc)
{
    if (rc == 0) {
        return SAMSA_OK;
    }
    return rc == ENOMEM || rc == MDB_MAP_FULL ? SAMSA_ERR_NOMEM : SAMSA_ERR_UNKNOWN;
}

struct st_lmdb_env *st_lmdb_env_open(const char *state_dir, const char *application_id,
                                     size_t sub, int32_t partition, size_t stores)
{
    size_t n = strlen(state_dir) + strlen(application_id) + 64;
    char *dir = malloc(n);
    struct st_lmdb_env *e = calloc(1, sizeof *e);
    MDB_txn *txn = NULL;
    if (dir == NULL || e == NULL) {
        goto out_fail;
    }
    (void)snprintf(dir, n, "%s/%s/%zu_%d", state_dir, application_id, sub, (int)partition);
    if (st_mkdir_p(dir) != 0 || mdb_env_create(&e->env) != 0) {
        goto out_fail;
    }
    /* a map of 1 GiB of address space per task; pages come as they are used */
    if (mdb_env_set_maxdbs(e->env, (MDB_dbi)stores + 2) != 0 ||
        mdb_env_set_mapsize(e->env, (size_t)1 << 30) != 0 ||
        mdb_env_open(e->env, dir, MDB_NOSYNC | MDB_NOTLS, 0600) != 0 ||
        mdb_txn_begin(e->env, NULL, 0, &txn) != 0) {
        mdb_env_close(e->env);
        e->env = NULL;
        goto out_fail;
    }
    if (mdb_dbi_open(txn, POSITIONS_DB, MDB_CREATE, &e->positions) != 0) {
        mdb_txn_abort(txn);
        txn = NULL;
    }
    if (txn == NULL || mdb_txn_commit(txn) != 0) { /* frees txn either way */
        mdb_env_close(e->env);
        e->env = NULL;
        goto out_fail;
    }
    free(dir);
    e->refs = 1; /* the opener's */
    return e;
out_fail:
    free(dir);
    free(e);
    return NULL;
}

void st_lmdb_env_unref(struct st_lmdb_env *e)
{
    if (e != NULL && --e->refs == 0) {
        if (e->txn != NULL) {
            mdb_txn_abort(e->txn); /* not committed: as if the process had died here */
        }
        mdb_env_close(e->env);
        free(e);
    }
}

static bool lmdb_get(void *impl, struct samsa_st_bytes key, struct samsa_st_bytes *value)
{
    struct lmdb_store *s = impl;
    MDB_txn *txn = NULL;
    MDB_val k = {key.len, (void *)(uintptr_t)key.data};
    MDB_val v;
    value->data = NULL;
    value->len = 0;
    if (read_txn(s->env, &txn) != 0) {
        return false;
    }
    bool found = mdb_get(txn, s->dbi, &k, &v) == 0;
    if (found && v.mv_size > s->buf_cap) {
        uint8_t *b = realloc(s->buf, v.mv_size);
        found = b != NULL;
        if (b != NULL) {
            s->buf = b;
            s->buf_cap = v.mv_size;
        }
    }
    if (found) {
        if (v.mv_size > 0) {
            memcpy(s->buf, v.mv_data, v.mv_size);
        }
        value->data = s->buf != NULL ? (const void *)s->buf : (const void *)"";
        value->len = v.mv_size;
    }
    read_done(s->env, txn);
    return found;
}

static int lmdb_put(void *impl, struct samsa_st_bytes key, struct samsa_st_bytes value)
{
    struct lmdb_store *s = impl;
    MDB_txn *txn = NULL;
    int rc = write_txn(s->env, &txn);
    if (rc != 0) {
        return lmdb_err(rc);
    }
    MDB_val k = {key.len, (void *)(uintptr_t)key.data};
    if (value.data == NULL) {
        rc = mdb_del(txn, s->dbi, &k, NULL);
        rc = rc == MDB_NOTFOUND ? 0 : rc;
    } else {
        MDB_val v = {value.len, (void *)(uintptr_t)value.data};
        rc = mdb_put(txn, s->dbi, &k, &v, 0);
    }
    if (rc != 0) {
        /* a failed put spoils the transaction (lmdb.h): the puts since the
         * last commit are lost, and the task stops on this error */
        mdb_txn_abort(txn);
        s->env->txn = NULL;
    }
    return lmdb_err(rc);
}

int st_lmdb_positions_load(struct st_lmdb_env *e, struct st_positions *pos)
{
    MDB_txn *txn = NULL;
    MDB_cursor *c = NULL;
    int rc = read_txn(e, &txn);
    if (rc != 0) {
        return lmdb_err(rc);
    }
    rc = mdb_cursor_open(txn, e->positions, &c);
    int err = lmdb_err(rc);
    if (rc == 0) {
        MDB_val k;
        MDB_val v;
        struct st_pos_id id;
        for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && err == SAMSA_OK;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            /* a key that is no position id is not ours: left alone */
            if (v.mv_size != 16 || !st_pos_id_parse(k.mv_data, k.mv_size, &id)) {
                continue;
            }
            err = st_pos_raise(pos, &id, (int64_t)st_get_be64(v.mv_data),
                               (int64_t)st_get_be64((const uint8_t *)v.mv_data + 8));
        }
        mdb_cursor_close(c);
    }
    read_done(e, txn);
    return err;
}

int st_lmdb_begin(struct st_lmdb_env *e)
{
    MDB_txn *txn = NULL;
    return lmdb_err(write_txn(e, &txn));
}

bool st_lmdb_open_txn(const struct st_lmdb_env *e)
{
    return e->txn != NULL;
}

int st_lmdb_commit(struct st_lmdb_env *e, const struct st_positions *pos)
{
    MDB_txn *txn = e->txn;
    if (txn == NULL) {
        return SAMSA_OK;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < pos->count; i++) {
        uint8_t value[16];
        st_put_be64(value, (uint64_t)pos->v[i].a);
        st_put_be64(value + 8, (uint64_t)pos->v[i].b);
        MDB_val k = {strlen(pos->v[i].key), pos->v[i].key};
        MDB_val v = {sizeof value, value};
        rc = mdb_put(txn, e->positions, &k, &v, 0);
    }
    if (rc != 0) {
        if (txn != NULL) {
            mdb_txn_abort(txn);
        }
    } else {
        rc = mdb_txn_commit(txn); /* frees txn either way */
    }
    e->txn = NULL;
    return lmdb_err(rc);
}

static void lmdb_each(void *impl,
                      bool (*fn)(struct samsa_st_bytes key, struct samsa_st_bytes value,
                                 void *opaque),
                      void *opaque)
{
    struct lmdb_store *s = impl;
    MDB_txn *txn = NULL;
    MDB_cursor *c = NULL;
    if (read_txn(s->env, &txn) != 0) {
        return;
    }
    if (mdb_cursor_open(txn, s->dbi, &c) == 0) {
        MDB_val k;
        MDB_val v;
        for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            struct samsa_st_bytes kb = {k.mv_data, k.mv_size};
            struct samsa_st_bytes vb = {v.mv_data, v.mv_size};
            if (!fn(kb, vb, opaque)) {
                break;
            }
        }
        mdb_cursor_close(c);
    }
    read_done(s->env, txn);
}

static size_t lmdb_count(void *impl)
{
    struct lmdb_store *s = impl;
    MDB_txn *txn = NULL;
    MDB_stat st;
    size_t n = 0;
    if (read_txn(s->env, &txn) == 0) {
        if (mdb_stat(txn, s->dbi, &st) == 0) {
            n = st.ms_entries;
        }
        read_done(s->env, txn);
    }
    return n;
}

static void lmdb_destroy(void *impl)
{
    struct lmdb_store *s = impl;
    if (s == NULL) {
        return;
    }
    st_lmdb_env_unref(s->env);
    free(s->buf);
    free(s);
}

const struct st_backend st_lmdb_backend = {lmdb_get, lmdb_put, lmdb_each, lmdb_count,
                                           lmdb_destroy};

void *st_lmdb_new(struct st_lmdb_env *env, const char *name)
{
    struct lmdb_store *s = calloc(1, sizeof *s);
    MDB_txn *txn = NULL;
    if (s == NULL || mdb_txn_begin(env->env, NULL, 0, &txn) != 0) {
        free(s);
        return NULL;
    }
    if (mdb_dbi_open(txn, name, MDB_CREATE, &s->dbi) != 0) {
        mdb_txn_abort(txn);
        free(s);
        return NULL;
    }
    if (mdb_txn_commit(txn) != 0) { /* frees txn either way */
        free(s);
        return NULL;
    }
    s->env = env;
    env->refs++;
    return s;
}

#else
/* built without liblmdb: samsa_st_*_set_state_dir refuse (app.c) */
typedef int st_no_lmdb;
#endif
