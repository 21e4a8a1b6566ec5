/*
 * samsa-broker: the functions a segment's files share (segment.c: create,
 * open, append, truncate; segment_io.c: the files' names and I/O;
 * segment_index.c: the indexes and lookups; segment_recovery.c: the
 * recovery scan). Calls go one way: segment.c and segment_recovery.c ->
 * segment_index.c -> segment_io.c. Not for the segment's users: they
 * include segment.h.
 */
#ifndef SAMSA_BROKER_STORAGE_SEGMENT_INTERNAL_H
#define SAMSA_BROKER_STORAGE_SEGMENT_INTERNAL_H

#include "storage/segment.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What checking an index entry against the .log found. UNKNOWN: the file
 * could not be read (not the entry's fault: it is not condemned). */
enum entry_check {
    ENTRY_MISMATCH = 0,
    ENTRY_MATCH = 1,
    ENTRY_UNKNOWN = 2,
};

/* segment_index.c */
void seg_drop_offsets_from(struct br_segment *s, size_t n);
void seg_drop_times_at_or_after(struct br_segment *s, int64_t offset);
enum entry_check seg_entry_matches(struct br_segment *s, const char *dir,
                                   const struct br_offset_entry *e);
int seg_grow(void **v, size_t *cap, size_t want, size_t elem);
int seg_index_batch(struct br_segment *s, int64_t pos, int64_t size, int64_t last_offset,
                    int64_t max_timestamp, int32_t interval);
int seg_push_time(struct br_segment *s, int64_t ts, int64_t offset);
void seg_reset_tail_state(struct br_segment *s);
int seg_sync_indexes(struct br_segment *s, const char *dir);
enum entry_check seg_time_entry_matches(struct br_segment *s, const char *dir,
                                        const struct br_time_entry *e);
int seg_write_index(struct br_segment *s, const char *dir, bool time, bool sync);

/* segment_io.c */
int seg_file_path(const struct br_segment *s, const char *dir, const char *suffix, char *buf,
                  size_t cap);
int seg_file_size(int fd, int64_t *size);
int seg_pwrite_full(int fd, const void *buf, size_t n, int64_t pos);
int seg_truncate_fd(int fd, int64_t len);

#endif
