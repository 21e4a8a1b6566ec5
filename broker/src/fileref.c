/* samsa-broker: reference-counted file descriptors (see fileref.h). */
#include "fileref.h"

#include <samsa-protocol/alloc.h>

#include <assert.h>
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
