/*
 * samsa-broker: what the log directories hold at start-up, checked before
 * any partition is opened.
 *
 * Directories with a delete name (br_log_dir_is_deleted) hold partitions
 * deleted before the last stop whose removal did not finish: they are
 * removed and never opened, as Kafka's LogManager.loadLogs schedules them
 * for deletion.
 *
 * @locality the main thread, during br_broker_start (blocking I/O)
 */
#ifndef SAMSA_BROKER_LOG_DIRS_H
#define SAMSA_BROKER_LOG_DIRS_H

#include "broker.h"

/* Scans every log dir: removes the leftover delete directories. Returns 0
 * or -1 (a log dir that cannot be read; logged). */
KP_MUST_CHECK int br_log_dirs_scan(struct br_broker *b);

#endif
