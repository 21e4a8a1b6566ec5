/*
 * samsa-broker: producer-state snapshot files, Kafka 2.0's format
 * (ProducerStateManager.scala: PidSnapshotMapSchema, writeSnapshot,
 * readSnapshot; Log.producerSnapshotFile).
 *
 * A partition directory holds `<20-digit offset>.snapshot` files: the
 * idempotent producers' state as of that offset (exclusive: the state
 * after every batch below it and none at or above it). Version 1,
 * big-endian:
 *
 *     int16   version = 1
 *     uint32  crc     CRC32C of every byte after this field
 *     int32   count   of producer entries (not -1)
 *     count x
 *       int64  producer_id
 *       int16  epoch
 *       int32  last_sequence              of the producer's last batch
 *       int64  last_offset                of that batch
 *       int32  offset_delta               its last minus first sequence
 *       int64  timestamp                  its max timestamp
 *       int32  coordinator_epoch          -1: no transaction marker yet
 *       int64  current_txn_first_offset   -1: no transaction open
 *
 * Files are written atomically (br_file_write_atomic: temp, fdatasync,
 * rename, directory fsync); Kafka 2.0 wrote them in place, which a crash
 * can leave torn. A file read back is hostile input: a wrong version,
 * length, count or CRC fails it with KP_E_CORRUPT and a reason (the
 * caller ignores it, warns and rebuilds the state from the log, as
 * Kafka's loadFromSnapshot does with a CorruptSnapshotException).
 *
 * @locality any thread (no shared state); the directory functions take the
 * partition directory's path.
 */
#ifndef SAMSA_BROKER_STORAGE_PRODUCER_SNAPSHOT_H
#define SAMSA_BROKER_STORAGE_PRODUCER_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

#define BR_PSNAP_VERSION 1
#define BR_PSNAP_SUFFIX ".snapshot"
/* bytes before the entries (version, crc, count) and per entry */
#define BR_PSNAP_HEADER_BYTES 10
#define BR_PSNAP_ENTRY_BYTES 46
/* the most entries a file may hold: more than a partition ever keeps
 * (BR_PARTITION_MAX_PRODUCERS) with room to spare */
#define BR_PSNAP_MAX_ENTRIES 1000000

struct br_psnap_entry {
    int64_t producer_id;
    int16_t epoch;
    int32_t last_seq;
    int64_t last_offset;
    int32_t offset_delta;
    int64_t timestamp;
    int32_t coordinator_epoch;
    int64_t txn_first_offset;
};

/* Appends the file's bytes for e[0..n) to w (the CRC filled in). Returns
 * 0, or w's error (KP_E_NOMEM at its ceiling). */
KP_MUST_CHECK int br_psnap_encode(const struct br_psnap_entry *e, size_t n, struct kp_writer *w);

/*
 * Parses a file's bytes. On success *out (owned by the caller, kp_free;
 * NULL when *n == 0) and *n. On failure *out NULL, *n 0, *why a static
 * sentence and the detection site in *where_line. Returns 0, KP_E_CORRUPT
 * or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_psnap_parse(const uint8_t *data, size_t len, struct br_psnap_entry **out,
                                 size_t *n, const char **why, int *where_line);

/* "<dir>/<20-digit offset>.snapshot" into buf. 0 or KP_E_INVALID_ARG (too
 * long). */
KP_MUST_CHECK int br_psnap_path(const char *dir, int64_t offset, char *buf, size_t cap);

/* The offsets of dir's snapshot files, ascending, into *out (kp_free;
 * NULL when none). A missing dir has none. 0, KP_E_NOMEM or
 * KP_ERR_KAFKA_STORAGE_ERROR (logged). */
KP_MUST_CHECK int br_psnap_list(const char *dir, int64_t **out, size_t *n);

/* The same for any `<20-digit offset><suffix>` files of dir (".snapshot",
 * ".txnindex"). */
KP_MUST_CHECK int br_offset_files_list(const char *dir, const char *suffix, int64_t **out,
                                       size_t *n);

/* Reads and parses one file (as br_psnap_parse; a missing file or an I/O
 * error is KP_ERR_KAFKA_STORAGE_ERROR with *why saying so). */
KP_MUST_CHECK int br_psnap_read(const char *path, struct br_psnap_entry **out, size_t *n,
                                const char **why);

/*
 * The latest snapshot of dir at an offset in [min_offset, max_offset]:
 * *offset and its entries, or *offset = -1 (and no entries) when there is
 * none. A file that cannot be read or parsed is logged with br_warn,
 * deleted (as Kafka does) and the next older one tried. 0 or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_psnap_load_latest(const char *dir, int64_t min_offset, int64_t max_offset,
                                       int64_t *offset, struct br_psnap_entry **out, size_t *n);

/* Encodes and writes <dir>/<offset>.snapshot atomically: br_psnap_write_tmp
 * then br_psnap_commit_tmp. 0, KP_E_NOMEM, KP_E_INVALID_ARG or
 * KP_ERR_KAFKA_STORAGE_ERROR (logged). */
KP_MUST_CHECK int br_psnap_write(const char *dir, int64_t offset, const struct br_psnap_entry *e,
                                 size_t n);
/* The two steps: the file under "<name>.tmp", written and fdatasync'ed
 * (removed on failure); then renamed to its name and the directory
 * fsync'ed (keep), or removed (!keep). */
KP_MUST_CHECK int br_psnap_write_tmp(const char *dir, int64_t offset,
                                     const struct br_psnap_entry *e, size_t n);
KP_MUST_CHECK int br_psnap_commit_tmp(const char *dir, int64_t offset, bool keep);

/* Deletes dir's snapshots below `below` and above `above` (Kafka's
 * deleteSnapshotsBefore and truncateAndReload's out-of-range files).
 * Failures are logged; returns how many were deleted. */
size_t br_psnap_delete_outside(const char *dir, int64_t below, int64_t above);

#endif
