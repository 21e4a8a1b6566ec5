/*
 * samsa-broker: the log manager, Kafka's LogManager: the log dirs and
 * every log held in them, and the work done on the logs as a whole.
 *
 * It owns
 * - the log dirs: made when missing, each locked (`.lock`, flock) so no
 *   second broker opens it, the clean-shutdown mark (`.kafka_cleanshutdown`)
 *   read and removed at open and written at a clean close;
 * - placement: a new partition goes to the dir holding the fewest
 *   partitions (Kafka's rule), one found on disk to its dir;
 * - the logs (a table by topic and partition, each with its dir) and the
 *   checkpoint files of each dir: recovery-point-offset-checkpoint (read at
 *   open: where recovery of each log starts), replication-offset-checkpoint
 *   (the high watermarks, asked of the owner), log-start-offset-checkpoint
 *   and cleaner-offset-checkpoint (read once every log is added: moved log
 *   starts and first dirty offsets);
 * - the schedule, driven by br_logm_tick: the flushes that are due
 *   (flush.ms) and the offset checkpoints
 *   (log.flush.offset.checkpoint.interval.ms) on a flusher thread of its
 *   own, retention (log.retention.check.interval.ms), and the cleaner's
 *   choice of the dirtiest compacted log, cleaned on log.cleaner.threads
 *   threads. Each log's policy is its own config (br_log_config:
 *   cleanup.policy, retention, the cleaner's settings).
 *
 * Write-behind (log.h's br_log_wb_*): appends copy into the page cache,
 * and a page cache that grows into memory the machine never touched makes
 * each copy slow (first touch of a page is costly, most of all on a
 * virtual machine), while pages reused once written back and dropped are
 * warm. So each log's bytes a window W behind its end have their
 * writeback started, and those 2W behind are written back and dropped;
 * each log thus keeps about 2.5W cached. W is
 * log.writebehind.window.bytes, lowered (to 1 MiB at least) so that the
 * logs appended to in the last second keep within
 * log.writebehind.budget.bytes together. The calls run on the flusher
 * thread, in jobs of up to 16 logs, one job away at a time. Consumers and
 * followers at the end of a log read from the cache; a reader more than
 * about 2W behind reads from disk (sendfile then waits for the disk on
 * the reactor thread, as any read of bytes the kernel evicted does).
 * Durability is the flush policy's alone: write-behind never moves a
 * recovery point, and drops only pages already written back.
 *
 * The threads touch nothing but their job and the files it names; what they
 * did comes back through the mailbox and ends on the reactor thread. The
 * log manager knows of its user only what the ops say: the high watermark
 * of a log's partition (replication belongs to the layer above; retention
 * never deletes at or above it).
 *
 *   br_logm_open(&cfg, &ops, ctx, &lm)            log dirs locked, recovery points read
 *   br_logm_place / br_logm_find_dir              which dir a log goes to
 *   br_log_open(..., br_logm_recovery_point(..))  (the caller opens each log)
 *   br_logm_add(lm, log, topic, p, dir, owner, &ml)
 *   br_logm_loaded(lm)                            start and cleaner checkpoints applied
 *   br_logm_start(lm, mailbox, mail_ctx, inline)  threads
 *   br_logm_tick(lm, wall, mono)                  every second
 *   br_logm_remove(lm, ml)                        before the caller closes the log
 *   br_logm_stop(lm)                              threads joined
 *   br_logm_flush_all(lm); br_logm_write_checkpoints(lm)
 *   br_logm_close(lm, clean)                      after every log is removed
 *
 * @locality reactor thread (and the main thread before and after the
 * reactor runs); the jobs run on its threads.
 */
#ifndef SAMSA_BROKER_STORAGE_LOG_MANAGER_H
#define SAMSA_BROKER_STORAGE_LOG_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "base/mailbox.h"
#include "storage/checkpoint.h"
#include "storage/log.h"
#include "storage/producer_snapshot.h"

#define BR_LOGM_MAX_DIRS 64
#define BR_LOGM_MAX_CHECKPOINT_ENTRIES 1000000

#define BR_RECOVERY_CHECKPOINT "recovery-point-offset-checkpoint"
#define BR_REPLICATION_CHECKPOINT "replication-offset-checkpoint"
#define BR_LOG_START_CHECKPOINT "log-start-offset-checkpoint"
#define BR_CLEANER_CHECKPOINT "cleaner-offset-checkpoint"

struct br_logm_config {
    const char *const *dirs; /* ndirs paths, copied */
    size_t ndirs;
    int64_t checkpoint_interval_ms;      /* log.flush.offset.checkpoint.interval.ms */
    int64_t retention_check_interval_ms; /* log.retention.check.interval.ms */
    bool cleaner_enable;                 /* log.cleaner.enable */
    int32_t cleaner_threads;             /* log.cleaner.threads */
    int64_t cleaner_backoff_ms;          /* log.cleaner.backoff.ms */
    /* write-behind (below); off when !writebehind_enable or window 0 */
    bool writebehind_enable;          /* log.writebehind.enable */
    int64_t writebehind_window_bytes; /* log.writebehind.window.bytes */
    int64_t writebehind_budget_bytes; /* log.writebehind.budget.bytes */
};

/* What the manager asks its user. */
struct br_logm_ops {
    /* The high watermark of the partition owner (as given to br_logm_add)
     * holds the log of. */
    int64_t (*high_watermark)(void *ctx, const void *owner);
};

struct br_log_manager;
/* One log the manager holds. */
struct br_managed_log;

/*
 * Makes and locks every log dir, reads and removes its clean-shutdown
 * mark (logged: first start, clean, or unclean and recovering) and reads
 * its recovery points. Returns 0, or -1 with the reason logged (a dir that
 * cannot be made, one locked by another process, out of memory): start-up
 * stops. *out owned by the caller (br_logm_close).
 */
KP_MUST_CHECK int br_logm_open(const struct br_logm_config *cfg, const struct br_logm_ops *ops,
                               void *ctx, struct br_log_manager **out);

size_t br_logm_dir_count(const struct br_log_manager *lm);
const char *br_logm_dir(const struct br_log_manager *lm, size_t d);

/* Where recovery of topic-partition starts: its recovery point as read at
 * open (0 when none). */
int64_t br_logm_recovery_point(const struct br_log_manager *lm, const char *topic,
                               int32_t partition);

/* The high watermark topic-partition had at the last checkpoint before
 * this start (replication-offset-checkpoint; 0 when none): where a
 * replica's starts (Kafka: min of it and the log end). */
int64_t br_logm_checkpointed_hw(const struct br_log_manager *lm, const char *topic,
                                int32_t partition);

/* Placement. br_logm_place reserves a place in the dir with the fewest
 * partitions (counting reservations) and returns it; br_logm_find_dir
 * reserves one in the dir that already holds topic-partition on disk, else
 * as br_logm_place. A reservation becomes the log's at br_logm_add; one not
 * used is given back with br_logm_release. */
size_t br_logm_place(struct br_log_manager *lm);
size_t br_logm_find_dir(struct br_log_manager *lm, const char *topic, int32_t partition);
void br_logm_release(struct br_log_manager *lm, size_t dir);
/* Partitions placed in dir d (reservations included). */
size_t br_logm_dir_partitions(const struct br_log_manager *lm, size_t d);

/*
 * Takes log (open, in dir `dir`, placed there by a reservation) under
 * management: it is flushed, checkpointed, retained and cleaned from now
 * on. owner is what the ops are asked about. The log stays the caller's to
 * close, after br_logm_remove. Returns 0 or KP_E_NOMEM (nothing taken, the
 * reservation kept); KP_E_INVALID_ARG when the topic-partition is held
 * already.
 */
KP_MUST_CHECK int br_logm_add(struct br_log_manager *lm, struct br_log *log, const char *topic,
                              int32_t partition, size_t dir, const void *owner,
                              struct br_managed_log **out);

/* Takes the log out (its place given back); a cleaning of it under way is
 * discarded when it comes back. NULL is a no-op. */
void br_logm_remove(struct br_log_manager *lm, struct br_managed_log *ml);

/* The owner moved (the ops are asked about the new one). */
void br_logm_set_owner(struct br_managed_log *ml, const void *owner);

/* The log dir holding it (an index of the config's dirs). */
size_t br_managed_log_dir(const struct br_managed_log *ml);

/*
 * A producer-state snapshot of the log in dir (ml's; NULL: a log outside
 * the manager) at `offset`, e[0..n) taken (kp_free): written atomically on
 * the flusher thread (here and now when there is none, or it stopped),
 * then the dir's snapshots below keep_from deleted (Kafka's Log.roll
 * takeSnapshot, deleteSnapshotsAfterRecoveryPointCheckpoint). A failure
 * is logged: the state is rebuilt from an older snapshot and the log.
 */
void br_logm_snapshot(struct br_managed_log *ml, const char *dir, int64_t offset,
                      struct br_psnap_entry *e, size_t n, int64_t keep_from);

/* ml's log was truncated to `offset`: snapshots above it still being
 * written are not (those already written are the caller's to delete, after
 * this call). -1: every one. NULL is a no-op. */
void br_logm_snapshots_cancel_above(struct br_managed_log *ml, int64_t offset);

/* Start-up, once every log found is added: moves each log's start to its
 * log-start-offset-checkpoint entry (deleting the segments wholly below it)
 * and reads the cleaner's first dirty offsets. A damaged file is logged and
 * ignored. */
void br_logm_loaded(struct br_log_manager *lm);

/* Logs held, and the segments of them all. */
size_t br_logm_log_count(const struct br_log_manager *lm);
size_t br_logm_segment_count(const struct br_log_manager *lm);

/*
 * Starts the flusher thread and the cleaner's threads (none when the
 * cleaner is off; inline_jobs: no thread at all, jobs run on the calling
 * thread: an in-process broker). Their jobs come back through mb, whose
 * other messages are delivered with mail_ctx when br_logm_stop waits for
 * its own. Returns 0, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_logm_start(struct br_log_manager *lm, struct br_mailbox *mb, void *mail_ctx,
                                bool inline_jobs);

/* The schedule (about once a second): flushes due, the offset checkpoints
 * once their interval passed (or asked for), retention once its interval
 * passed, and the cleaner once its backoff passed. wall_ms: the clock
 * appends are stamped with; mono_ms: monotonic. */
void br_logm_tick(struct br_log_manager *lm, int64_t wall_ms, int64_t mono_ms);

/* The write-behind window the logs have now (0: off). */
int64_t br_logm_writebehind_window(const struct br_log_manager *lm);

/* Asks the next tick for the offset checkpoints (a log start moved). */
void br_logm_checkpoints_soon(struct br_log_manager *lm);

/* Stops the threads: the flushes and checkpoint writes under way end, a
 * cleaning under way is abandoned between two batches, the cleaner's
 * checkpoints are written; from here on every write is made at once.
 * Safe when br_logm_start was not called. */
void br_logm_stop(struct br_log_manager *lm);

/* Flushes every log now, on this thread; false when one failed (logged). */
bool br_logm_flush_all(struct br_log_manager *lm);

/* Writes the offset checkpoints of every dir now, on this thread. */
void br_logm_write_checkpoints(struct br_log_manager *lm);

/* Every log removed: writes the clean-shutdown mark in every dir when
 * clean, unlocks the dirs and frees the manager. NULL is a no-op. */
void br_logm_close(struct br_log_manager *lm, bool clean);

#endif
