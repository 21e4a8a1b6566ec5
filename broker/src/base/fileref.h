/*
 * samsa-broker: a reference-counted file descriptor, and the budget of
 * open segment files.
 *
 * A segment's .log file is shared by the segment and by every fetch slice
 * still waiting to go out with sendfile. The descriptor is closed when the
 * last reference goes, so a segment that retention or truncation deletes
 * stays readable for the slices that hold it.
 *
 * The file cache bounds how many of those files the logs keep open
 * (log.open.files.max): each segment has an entry; an entry holding its
 * file is in a list from the most to the least recently used, and putting
 * one more file in beyond the budget closes the least recently used
 * entry's file (its reference, that is: a slice holding the same file
 * keeps it open until it is sent). The segment reopens its file by name
 * when it needs it again (segment_io.c). So the descriptors of the logs grow
 * with what is in use, not with the number of partitions.
 *
 * @locality reactor thread (the counts are not atomic). A cleaner thread
 * may use a reference the reactor gave it (br_fileref_fd only), never a
 * cache.
 */
#ifndef SAMSA_BROKER_FILEREF_H
#define SAMSA_BROKER_FILEREF_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa-protocol/err.h>

struct br_fileref;

/* Wraps fd (ownership transferred) with one reference. Returns NULL when the
 * allocation fails; fd is then closed. */
struct br_fileref *br_fileref_new(int fd);

/* One more reference; returns f (NULL stays NULL). */
struct br_fileref *br_fileref_ref(struct br_fileref *f);

/* Drops a reference; the last one closes the descriptor. NULL is a no-op. */
void br_fileref_unref(struct br_fileref *f);

/* The descriptor, valid while the caller holds a reference. */
int br_fileref_fd(const struct br_fileref *f);

/* ------------------------------------------------------------ the cache */

struct br_filecache;

/* One file's place in a cache, embedded in its owner (a segment). Starts
 * zeroed: no file, in no list. */
struct br_filecache_entry {
    struct br_filecache_entry *newer; /* towards the most recently used */
    struct br_filecache_entry *older;
    struct br_fileref *file; /* the entry's reference; NULL while closed */
    bool listed;             /* in a cache's list (file != NULL there) */
};

/* A cache keeping at most max_open files (>= 1). *out owned by the caller
 * (br_filecache_free). 0, KP_E_INVALID_ARG or KP_E_NOMEM. */
KP_MUST_CHECK int br_filecache_new(size_t max_open, struct br_filecache **out);

/* Frees the cache; every entry must have been dropped (br_filecache_drop)
 * first. NULL is a no-op. */
void br_filecache_free(struct br_filecache *c);

size_t br_filecache_max(const struct br_filecache *c);
/* Entries holding their file now. */
size_t br_filecache_open_count(const struct br_filecache *c);
/* Files the cache closed to stay within its budget, since it was made. */
unsigned long br_filecache_evictions(const struct br_filecache *c);

/*
 * Gives e the file (reference transferred; e must hold none) and makes it
 * the most recently used; beyond the budget, the least recently used other
 * entries lose theirs. c NULL: e just holds the file, counted nowhere and
 * never closed by a budget (a segment of a cleaner thread, a tool).
 */
void br_filecache_put(struct br_filecache *c, struct br_filecache_entry *e,
                      struct br_fileref *file);

/* e (which holds its file) becomes the most recently used. The hot path:
 * a few pointer moves. c NULL: nothing. */
void br_filecache_touch(struct br_filecache *c, struct br_filecache_entry *e);

/* e lets its file go (closed unless other references hold it) and leaves
 * the list. A no-op for an entry holding nothing. */
void br_filecache_drop(struct br_filecache *c, struct br_filecache_entry *e);

/* Closes the least recently used entry's file. False when no entry holds
 * one (or c is NULL). For an open that failed with EMFILE/ENFILE. */
bool br_filecache_evict_one(struct br_filecache *c);

/* openat(2) with O_CLOEXEC added, retried on EINTR, and, while it fails with
 * EMFILE or ENFILE, retried after closing c's least recently used file
 * (so running out of descriptors costs the cache its coldest files before
 * it costs a request). -1 with errno set on failure. c may be NULL. */
int br_filecache_openat(struct br_filecache *c, int dir_fd, const char *name, int flags,
                        unsigned mode);

/* Writes n bytes of buf to fd (at its offset), going on after short writes
 * and EINTR: 0, or -1 with errno set. */
int br_write_full(int fd, const void *buf, size_t n);

#endif
