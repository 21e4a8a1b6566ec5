/* samsa-broker: reference-counted file descriptors and the file cache (see
 * fileref.h). */
#define _GNU_SOURCE

#include "base/fileref.h"

#include <samsa-protocol/alloc.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

struct br_fileref {
    int fd;
    unsigned long refs;
};

struct br_fileref *br_fileref_new(int fd)
{
    struct br_fileref *f = kp_malloc(sizeof *f);
    if (f == NULL) {
        (void)close(fd);
        return NULL;
    }
    f->fd = fd;
    f->refs = 1;
    return f;
}

struct br_fileref *br_fileref_ref(struct br_fileref *f)
{
    if (f != NULL) {
        f->refs++;
    }
    return f;
}

void br_fileref_unref(struct br_fileref *f)
{
    if (f == NULL) {
        return;
    }
    assert(f->refs > 0);
    if (--f->refs == 0) {
        /* a failed close of a descriptor opened for reading loses nothing;
         * writers fdatasync before they depend on the data */
        (void)close(f->fd);
        kp_free(f);
    }
}

int br_fileref_fd(const struct br_fileref *f)
{
    return f->fd;
}

/* ------------------------------------------------------------ the cache */

struct br_filecache {
    size_t max;
    size_t n;                          /* listed entries */
    struct br_filecache_entry *newest; /* NULL when empty */
    struct br_filecache_entry *oldest;
    unsigned long evictions;
};

int br_filecache_new(size_t max_open, struct br_filecache **out)
{
    *out = NULL;
    if (max_open == 0) {
        return KP_E_INVALID_ARG;
    }
    struct br_filecache *c = kp_calloc(1, sizeof *c);
    if (c == NULL) {
        return KP_E_NOMEM;
    }
    c->max = max_open;
    *out = c;
    return 0;
}

void br_filecache_free(struct br_filecache *c)
{
    if (c == NULL) {
        return;
    }
    assert(c->n == 0); /* the owners of the entries are gone first */
    kp_free(c);
}

size_t br_filecache_max(const struct br_filecache *c)
{
    return c->max;
}

size_t br_filecache_open_count(const struct br_filecache *c)
{
    return c->n;
}

unsigned long br_filecache_evictions(const struct br_filecache *c)
{
    return c->evictions;
}

static void unlink_entry(struct br_filecache *c, struct br_filecache_entry *e)
{
    if (e->newer != NULL) {
        e->newer->older = e->older;
    } else {
        c->newest = e->older;
    }
    if (e->older != NULL) {
        e->older->newer = e->newer;
    } else {
        c->oldest = e->newer;
    }
    e->newer = NULL;
    e->older = NULL;
    e->listed = false;
    c->n--;
}

static void push_newest(struct br_filecache *c, struct br_filecache_entry *e)
{
    e->older = c->newest;
    e->newer = NULL;
    if (c->newest != NULL) {
        c->newest->newer = e;
    } else {
        c->oldest = e;
    }
    c->newest = e;
    e->listed = true;
    c->n++;
}

bool br_filecache_evict_one(struct br_filecache *c)
{
    if (c == NULL || c->oldest == NULL) {
        return false;
    }
    struct br_filecache_entry *e = c->oldest;
    unlink_entry(c, e);
    br_fileref_unref(e->file);
    e->file = NULL;
    c->evictions++;
    return true;
}

void br_filecache_put(struct br_filecache *c, struct br_filecache_entry *e, struct br_fileref *file)
{
    assert(e->file == NULL && !e->listed);
    e->file = file;
    if (c == NULL || file == NULL) {
        return;
    }
    push_newest(c, e);
    while (c->n > c->max && c->oldest != e) {
        (void)br_filecache_evict_one(c);
    }
}

void br_filecache_touch(struct br_filecache *c, struct br_filecache_entry *e)
{
    if (c == NULL || !e->listed || c->newest == e) {
        return;
    }
    unlink_entry(c, e);
    push_newest(c, e);
}

void br_filecache_drop(struct br_filecache *c, struct br_filecache_entry *e)
{
    if (e->listed) {
        assert(c != NULL);
        unlink_entry(c, e);
    }
    br_fileref_unref(e->file);
    e->file = NULL;
}

int br_filecache_openat(struct br_filecache *c, int dir_fd, const char *name, int flags,
                        unsigned mode)
{
    for (;;) {
        int fd = openat(dir_fd, name, flags | O_CLOEXEC, (mode_t)mode);
        if (fd >= 0) {
            return fd;
        }
        int e = errno;
        if (e == EINTR) {
            continue;
        }
        if ((e == EMFILE || e == ENFILE) && br_filecache_evict_one(c)) {
            continue;
        }
        errno = e;
        return -1;
    }
}

int br_write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
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
