/*
 * samsa-broker: a reference-counted file descriptor.
 *
 * A segment's .log file is shared by the segment and by every fetch slice
 * still waiting to go out with sendfile. The descriptor is closed when the
 * last reference goes, so a segment that retention or truncation deletes
 * stays readable for the slices that hold it.
 *
 * @locality reactor thread (the count is not atomic)
 */
#ifndef SAMSA_BROKER_FILEREF_H
#define SAMSA_BROKER_FILEREF_H

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

#endif
