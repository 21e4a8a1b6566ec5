/*
 * samsa-broker: Kafka's checkpoint files.
 *
 * Per log dir, one line per partition (recovery-point-offset-checkpoint,
 * replication-offset-checkpoint, log-start-offset-checkpoint):
 *
 *     0                      version
 *     2                      count
 *     my-topic 0 1234        topic partition offset
 *     other.topic 11 0
 *
 * Per partition dir, leader-epoch-checkpoint:
 *
 *     0                      version
 *     2                      count
 *     0 0                    epoch start_offset
 *     3 1200
 *
 * Writes are atomic: a temporary file "<path>.tmp" is written, fdatasync'ed
 * and renamed over <path>, then the directory is fsync'ed; a crash leaves
 * either the old file or the new one.
 *
 * Reads treat the file as hostile input (STYLE.md rules 7-10): lines at most
 * BR_CHECKPOINT_MAX_LINE bytes, each ending with '\n'; integers are decimal
 * digits with an optional '-' (no '+', no spaces, no leading zeros) checked
 * with strtoll and a range; fields separated by exactly one space; topics
 * match [a-zA-Z0-9._-]{1,249} and are neither "." nor ".."; the count must
 * equal the number of entry lines and stay within the caller's maximum;
 * offsets are >= 0, partitions and epochs within [0, INT32_MAX]; a
 * topic-partition appears once; leader epochs strictly increase and their
 * start offsets never decrease. A violation fails the whole file with
 * KP_E_CORRUPT and a br_checkpoint_error naming the line and the rule.
 *
 * Ownership: arrays returned by the readers belong to the caller, freed
 * with br_checkpoint_free (NULL is a no-op).
 * @locality any thread (no shared state)
 */
#ifndef SAMSA_BROKER_CHECKPOINT_H
#define SAMSA_BROKER_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

#include "base/names.h"
/* The longest line a reader accepts, without its '\n'. A topic line needs at
 * most 249 + 1 + 10 + 1 + 19 = 280 bytes. */
#define BR_CHECKPOINT_MAX_LINE 300

struct br_checkpoint_entry {
    char topic[BR_TOPIC_MAX + 1]; /* NUL-terminated */
    int32_t partition;
    int64_t offset;
};

struct br_epoch_entry {
    int32_t epoch;
    int64_t start_offset;
};

/* Where and why a file was rejected. */
struct br_checkpoint_error {
    int line;             /* 1-based line in the file; 0: the file as a whole */
    const char *reason;   /* a static sentence, never NULL after a failure */
    const char *src_file; /* detection site in our code */
    int src_line;
};

/* "<path>:<line>: <reason>" (line omitted when 0) into buf, always
 * NUL-terminated when cap > 0. */
void br_checkpoint_error_format(const char *path, const struct br_checkpoint_error *err, char *buf,
                                size_t cap);

/*
 * Parses a topic-partition checkpoint held in data[0..len). At most
 * max_entries entries are accepted (a larger count fails). On success
 * *out (NULL when *n == 0) and *n are set; on failure *out is NULL, *n 0,
 * and *err says why. Returns 0, KP_E_CORRUPT or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_checkpoint_parse(const char *data, size_t len, size_t max_entries,
                                      struct br_checkpoint_entry **out, size_t *n,
                                      struct br_checkpoint_error *err);

/* Reads and parses the file at path. A missing file is an empty checkpoint
 * (0, *n = 0). A file larger than max_entries lines can be fails before it
 * is read. Returns 0, KP_E_CORRUPT, KP_E_NOMEM, or
 * KP_ERR_KAFKA_STORAGE_ERROR (I/O; err->reason names the call). */
KP_MUST_CHECK int br_checkpoint_read(const char *path, size_t max_entries,
                                     struct br_checkpoint_entry **out, size_t *n,
                                     struct br_checkpoint_error *err);

/* Appends the file's text for e[0..n) to w. Entries must be valid (topic,
 * partition >= 0, offset >= 0): KP_E_INVALID_ARG otherwise, KP_E_NOMEM at
 * w's ceiling; w->len is restored on failure. */
KP_MUST_CHECK int br_checkpoint_encode(const struct br_checkpoint_entry *e, size_t n,
                                       struct kp_writer *w);

/* Encodes and writes atomically. Returns 0, KP_E_INVALID_ARG, KP_E_NOMEM or
 * KP_ERR_KAFKA_STORAGE_ERROR (logged with br_error). */
KP_MUST_CHECK int br_checkpoint_write(const char *path, const struct br_checkpoint_entry *e,
                                      size_t n);

/* The same four for leader-epoch-checkpoint files. */
KP_MUST_CHECK int br_epoch_checkpoint_parse(const char *data, size_t len, size_t max_entries,
                                            struct br_epoch_entry **out, size_t *n,
                                            struct br_checkpoint_error *err);
KP_MUST_CHECK int br_epoch_checkpoint_read(const char *path, size_t max_entries,
                                           struct br_epoch_entry **out, size_t *n,
                                           struct br_checkpoint_error *err);
KP_MUST_CHECK int br_epoch_checkpoint_encode(const struct br_epoch_entry *e, size_t n,
                                             struct kp_writer *w);
KP_MUST_CHECK int br_epoch_checkpoint_write(const char *path, const struct br_epoch_entry *e,
                                            size_t n);

/* Orders checkpoint entries by topic, then partition (qsort, bsearch). */
int br_checkpoint_entry_cmp(const void *a, const void *b);

/* Frees an array returned by a reader. */
void br_checkpoint_free(void *entries);

/*
 * Writes data[0..len) to path atomically (tmp, fdatasync, rename, fsync of
 * the directory). Shared by the checkpoint writers and anything else that
 * replaces a small file whole. Returns 0, KP_E_INVALID_ARG (path too long)
 * or KP_ERR_KAFKA_STORAGE_ERROR (logged with br_error).
 */
KP_MUST_CHECK int br_file_write_atomic(const char *path, const void *data, size_t len);

#endif
