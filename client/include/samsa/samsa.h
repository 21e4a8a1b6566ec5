/*
 * libsamsa: Samsa's C client library for Kafka-protocol brokers.
 * Reference: samsa(3) and a page per section below (`man samsa`), written
 * from this header's comments and installed with the library.
 *
 * Three kinds of handle, each with one background I/O thread of its own:
 *   samsa_producer  asynchronous produce with a delivery report per record
 *   samsa_consumer  manual assignment or a consumer-group member; fetch, seek, commit
 *   samsa_admin     topics, partitions, configs, groups, records, cluster metadata
 *
 * Configuration is a samsa_conf of string keys, named and defaulted as
 * librdkafka and the Java client name them (bootstrap.servers, acks,
 * linger.ms, ...; samsa_conf(3) lists every key). A handle copies the
 * configuration it is created with: the caller keeps ownership of its
 * samsa_conf and may destroy it right after the _new call.
 *
 * Threads. Every call on one handle may be made from any thread, but the
 * poll-like calls (samsa_producer_poll, _flush, _close, samsa_consumer_poll,
 * _close) are where callbacks run: callbacks never run on a library thread,
 * only inside those calls, on the caller's thread (the log and partitioner
 * callbacks excepted: see samsa_conf_set_log_cb and
 * samsa_conf_set_partitioner_cb). Every callback gets the
 * cb_opaque set with it (an application that wants its handle there points
 * cb_opaque at a struct and stores the handle in it after _new).
 *
 * Lifetimes, as librdkafka's rd_kafka_consumer_close + rd_kafka_destroy.
 * samsa_X_close(h) stops handle h (flushes or leaves the group as said
 * there, stops its I/O thread, frees what it held) but not h itself:
 *   - close may be called while other threads are inside calls on h: a
 *     samsa_produce racing close either queued its record before close
 *     began (the record is flushed or reported PURGED) or returns
 *     SAMSA_ERR_DESTROYED; a call waiting inside (a poll, a flush, an admin
 *     call, a seek) returns at once, with nothing or SAMSA_ERR_DESTROYED;
 *   - every call on a closed handle is refused without touching what close
 *     freed: SAMSA_ERR_DESTROYED (functions with errstr say "the handle is
 *     closed"), NULL, false or 0 for those returning no error code; a
 *     second close returns SAMSA_ERR_DESTROYED (0 for the producer's);
 *   - callbacks run by close may call in on the closing thread (commit,
 *     outq_len...); close itself must not be called from a callback (it
 *     would wait for the call the callback runs in);
 *   - samsa_X_destroy(h) frees h (closing it first if needed: the
 *     producer's with a 0 ms flush, the consumer's with no timeout of its
 *     own): the one call that must come after every other call on h has
 *     returned, and the last one.
 *
 * Errors: one rule for every call's result, delivery report and error
 * callback. An int that can carry an error is SAMSA_OK (0), a negative
 * SAMSA_ERR_* for what the library itself decided or saw (an argument, the
 * configuration, a deadline, a connection, the handle's state, what
 * Metadata says the cluster lacks), or a positive Kafka error code exactly
 * as Kafka numbers it for what a broker answered (6 NOT_LEADER_OR_FOLLOWER,
 * 36 TOPIC_ALREADY_EXISTS, ...), with one exception: a topic or partition
 * the cluster lacks is always SAMSA_ERR_UNKNOWN_TOPIC (whether Metadata
 * left it out or a broker answered Kafka's UNKNOWN_TOPIC_OR_PARTITION, 3,
 * which is never handed out) or SAMSA_ERR_UNKNOWN_PARTITION (the topic is
 * known, the partition is not). SAMSA_ERR_TIMED_OUT is a call's own
 * timeout_ms running out; a record not delivered within message.timeout.ms
 * is SAMSA_ERR_MSG_TIMED_OUT. samsa_err_name() gives the code's name
 * ("QUEUE_FULL", "NOT_LEADER_OR_FOLLOWER") and samsa_err_str() a sentence:
 * "Local: ..." for the library's codes, Kafka's own description (its
 * Errors class) for a broker's. Functions that take `char *errstr, size_t
 * errstr_size` also write a sentence saying what went wrong, with the
 * broker's message when it sent one (always NUL-terminated when
 * errstr_size > 0; errstr may be NULL).
 *
 * Ownership is written on every function: "caller owns" means the caller
 * frees it with the named function; "borrowed" means the pointer stays valid
 * only as long as said and must not be freed.
 */
#ifndef SAMSA_SAMSA_H
#define SAMSA_SAMSA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SAMSA_MUST_CHECK __attribute__((warn_unused_result))
#else
#define SAMSA_MUST_CHECK
#endif

#define SAMSA_VERSION_STR "0.1.0"
#define SAMSA_VERSION_NUM 0x000100

/* The library's version string, e.g. "0.1.0". Static storage. */
const char *samsa_version(void);

/* ------------------------------------------------------------------ errors */

enum samsa_err {
    SAMSA_OK = 0,
    SAMSA_ERR_UNKNOWN = -1,          /* Kafka's UNKNOWN_SERVER_ERROR (-1 on the wire) */
    SAMSA_ERR_INVALID_ARG = -100,    /* a NULL or out-of-range argument */
    SAMSA_ERR_UNKNOWN_CONFIG = -101, /* no such configuration key */
    SAMSA_ERR_INVALID_CONFIG = -102, /* a value the key does not accept */
    SAMSA_ERR_QUEUE_FULL = -103,     /* producer queue at its bound: poll, then retry */
    SAMSA_ERR_MSG_TOO_LARGE = -104,  /* record above message.max.bytes */
    SAMSA_ERR_TIMED_OUT = -105,      /* the deadline passed first */
    SAMSA_ERR_TRANSPORT = -106,      /* a connection failed or was closed */
    SAMSA_ERR_ALL_BROKERS_DOWN = -107,
    SAMSA_ERR_UNKNOWN_TOPIC = -108,      /* the cluster does not know the topic */
    SAMSA_ERR_UNKNOWN_PARTITION = -109,  /* the topic has no such partition */
    SAMSA_ERR_NOMEM = -110,
    SAMSA_ERR_STATE = -111,          /* not allowed in this handle's state */
    SAMSA_ERR_PURGED = -112,         /* dropped by close before it was delivered */
    SAMSA_ERR_BAD_RESPONSE = -113,   /* a broker sent bytes that do not decode */
    SAMSA_ERR_UNSUPPORTED = -114,    /* the broker lacks a needed API version */
    SAMSA_ERR_FATAL = -115,          /* the producer cannot go on (idempotence broken) */
    SAMSA_ERR_NOT_IMPLEMENTED = -116,/* a feature libsamsa does not have yet */
    SAMSA_ERR_DESTROYED = -117,      /* the handle is closing or closed */
    SAMSA_ERR_MAX_POLL_EXCEEDED = -118, /* no poll for max.poll.interval.ms: left the group */
    SAMSA_ERR_MSG_TIMED_OUT = -119,     /* a record not delivered within message.timeout.ms */
    SAMSA_ERR_FENCED = -120,            /* a newer producer with the same transactional.id
                                         * fenced this one (librdkafka's ERR__FENCED) */
    SAMSA_ERR_SSL = -121,               /* a TLS handshake failed: the reason says why
                                         * (librdkafka's ERR__SSL) */
};

/* "Local: ..." for the library's codes, Kafka's description for a broker's. Static. */
const char *samsa_err_str(int err);
/* "QUEUE_FULL" / "NOT_LEADER_OR_FOLLOWER". Static. */
const char *samsa_err_name(int err);

/* ----------------------------------------------------------- configuration */

typedef struct samsa_conf samsa_conf;

/* A configuration with every default. Caller owns: samsa_conf_destroy. */
samsa_conf *samsa_conf_new(void);
/* A copy of conf. Caller owns. NULL on allocation failure. */
samsa_conf *samsa_conf_dup(const samsa_conf *conf);
/* Frees conf; NULL is a no-op. */
void samsa_conf_destroy(samsa_conf *conf);

/*
 * Sets key to value (both copied). Returns SAMSA_OK, SAMSA_ERR_UNKNOWN_CONFIG
 * (no such key: errstr names it) or SAMSA_ERR_INVALID_CONFIG (errstr says what
 * the key accepts). Aliases are accepted (metadata.broker.list for
 * bootstrap.servers, queue.buffering.max.ms for linger.ms, ...).
 */
SAMSA_MUST_CHECK int samsa_conf_set(samsa_conf *conf, const char *key, const char *value,
                                    char *errstr, size_t errstr_size);

/*
 * Copies key's current value (default or set) into buf[0..*size) with a NUL.
 * On entry *size is buf's size; on return it is the size needed including
 * the NUL (so a call with buf NULL asks for it). SAMSA_ERR_UNKNOWN_CONFIG if
 * no such key.
 */
SAMSA_MUST_CHECK int samsa_conf_get(const samsa_conf *conf, const char *key, char *buf,
                                    size_t *size);

/* ------------------------------------------------------------------ records */

/* Offsets with a meaning, for seek and assign. */
#define SAMSA_OFFSET_BEGINNING (-2)
#define SAMSA_OFFSET_END (-1)
#define SAMSA_OFFSET_STORED (-1000) /* the group's committed offset, else auto.offset.reset */

/* "Let the partitioner choose" (produce). */
#define SAMSA_PARTITION_ANY (-1)

/* One record header. name is NUL-terminated; value NULL means a null value. */
struct samsa_header {
    const char *name;
    const void *value;
    size_t value_len;
};

/*
 * Growable structs: the ABI policy (also "Installing" in the source's
 * client/README.md). The structs handed across the API one at a time by
 * pointer (samsa_record, samsa_delivery, samsa_message) begin with
 * `size_t struct_size` and grow only at their end, without a new SONAME:
 *   - a struct the application fills (samsa_record) is initialised with its
 *     SAMSA_*_INIT macro, which sets struct_size to the sizeof the program
 *     was compiled with. The library reads only that many bytes and takes
 *     every field past them as 0 (its default), so a program built against
 *     an older samsa.h runs unchanged on a newer libsamsa.so.0; struct_size
 *     0 (no macro) or below the SAMSA_0 size is SAMSA_ERR_INVALID_ARG;
 *   - a struct the library fills (samsa_delivery, samsa_message) carries
 *     the struct_size of the library that filled it. The application only
 *     ever holds a pointer to one (never allocates, copies or embeds it),
 *     and reads a field added after SAMSA_0 only where
 *     SAMSA_HAS_FIELD(type, ptr, field) says the library it runs on wrote it
 *     (fields come whole: a struct_size past a field's offset holds all of it).
 * The structs that travel in arrays (samsa_header, samsa_partition,
 * samsa_lag, the admin and metadata results) keep their layout for SONAME 0:
 * what they lack comes as new functions, as librdkafka leaves
 * rd_kafka_message_t fixed and adds accessors.
 */
#define SAMSA_HAS_FIELD(type, ptr, field) ((ptr)->struct_size > offsetof(type, field))

/*
 * A record to produce, initialised with SAMSA_RECORD_INIT (sets
 * struct_size), e.g.
 *     struct samsa_record r = {SAMSA_RECORD_INIT, .topic = "t", .value = v, .value_len = n};
 * Every pointer is borrowed for the duration of samsa_produce only: the
 * library copies topic, key, value and headers.
 */
#define SAMSA_RECORD_INIT .struct_size = sizeof(struct samsa_record)
struct samsa_record {
    size_t struct_size; /* SAMSA_RECORD_INIT sets it (see "Growable structs") */
    const char *topic;
    int32_t partition;  /* SAMSA_PARTITION_ANY: the partitioner (samsa_conf(3)) */
    const void *key;    /* NULL: a null key (sticky partitioning) */
    size_t key_len;
    const void *value;  /* NULL: a null value (a tombstone) */
    size_t value_len;
    const struct samsa_header *headers;
    size_t header_count;
    int64_t timestamp;  /* milliseconds since the epoch; 0: now */
    void *opaque;       /* handed back, untouched, in the delivery report */
};

/*
 * A delivery report: what became of one produced record. Borrowed for the
 * duration of the callback only (copy the fields you keep, not the struct:
 * see "Growable structs").
 */
struct samsa_delivery {
    size_t struct_size;   /* the library's sizeof (see "Growable structs") */
    int err;              /* SAMSA_OK, or why the record was not written */
    const char *topic;
    int32_t partition;    /* -1 if it never had one */
    int64_t offset;       /* -1 when unknown (acks=0, error) */
    int64_t timestamp;
    const void *key;      /* the record's key and value as produced */
    size_t key_len;
    const void *value;
    size_t value_len;
    void *opaque;         /* samsa_record.opaque */
    int status;           /* SAMSA_MSG_*_PERSISTED: whether the record may be in the log */
    int timestamp_type;   /* 0 CreateTime (the record's), 1 LogAppendTime: timestamp is the
                           * broker's (a topic with message.timestamp.type=LogAppendTime) */
    const struct samsa_header *headers; /* the record's headers as produced (NULL when
                                         * none, or when there was no memory to list them) */
    size_t header_count;
};

/*
 * A delivery report's status, as librdkafka's rd_kafka_message_status (and
 * its numbers): NOT_PERSISTED, the record is not in the log (never sent, or
 * the broker answered that it did not write it); POSSIBLY_PERSISTED, it
 * was sent and no answer says what became of it (the connection lost, the
 * request timed out, expired or purged while in flight): a retry may
 * duplicate it (acks=0 too: nothing acknowledges it); PERSISTED, the broker
 * acknowledged it (err SAMSA_OK).
 */
#define SAMSA_MSG_NOT_PERSISTED 0
#define SAMSA_MSG_POSSIBLY_PERSISTED 1
#define SAMSA_MSG_PERSISTED 2

typedef void samsa_delivery_cb(const struct samsa_delivery *report, void *cb_opaque);

/*
 * Errors that do not belong to one record or message (a broker down, a
 * rebalance failure, an offset reset). Informational unless err is
 * SAMSA_ERR_FATAL. `reason` is borrowed for the duration of the callback.
 */
typedef void samsa_error_cb(int err, const char *reason, void *cb_opaque);

/* Callbacks run only inside the handle's poll-like calls. cb may be NULL. */
void samsa_conf_set_delivery_cb(samsa_conf *conf, samsa_delivery_cb *cb, void *cb_opaque);
void samsa_conf_set_error_cb(samsa_conf *conf, samsa_error_cb *cb, void *cb_opaque);

/* Log levels, as syslog(3) numbers them (librdkafka's log_level too). */
#define SAMSA_LOG_ERR 3
#define SAMSA_LOG_WARNING 4
#define SAMSA_LOG_INFO 6
#define SAMSA_LOG_DEBUG 7

/*
 * One log line (`line` borrowed for the call). Without a log callback the
 * lines go to stderr. What is logged: the client's events when `debug` is
 * set (SAMSA_LOG_DEBUG), and a librdkafka property ignored under
 * unsupported.librdkafka.properties=warn (SAMSA_LOG_WARNING, dropped when
 * log_level is below 4), and a TLS handshake or SASL authentication that
 * failed, with its reason (SAMSA_LOG_ERR, as librdkafka logs them; the
 * handle's calls fail with that error from then on). The one exception to "callbacks run only inside
 * poll-like calls", as librdkafka's log_cb without log.queue: it runs where
 * the line is made, on the handle's I/O thread too and with the handle's
 * lock held, so it must be quick and must not call libsamsa.
 */
typedef void samsa_log_cb(int level, const char *line, void *cb_opaque);
void samsa_conf_set_log_cb(samsa_conf *conf, samsa_log_cb *cb, void *cb_opaque);

/*
 * Statistics, as librdkafka's stats_cb: every statistics.interval.ms (0, the
 * default: never) the handle's I/O thread writes a JSON document of the
 * handle's counters, and the next poll-like call hands it to cb (json is
 * NUL-terminated, json_len its length without the NUL; borrowed for the
 * call). librdkafka's field names where they mean the same (STATISTICS.md):
 * name, client_id, type, ts (monotonic microseconds), time (seconds since
 * the epoch), age, msg_cnt, msg_size, msg_max, msg_size_max, tx, tx_bytes,
 * rx, rx_bytes, txmsgs, txmsg_bytes, rxmsgs, rxmsg_bytes, brokers{"host:port/id":
 * {name, nodeid, nodename, state, outbuf_cnt, waitresp_cnt, tx, txbytes, rx,
 * rxbytes, connects, disconnects}}, topics{name: {topic, partitions{"N":
 * {partition, leader, msgq_cnt, msgq_bytes, next_offset, app_offset,
 * stored_offset, committed_offset, lo_offset, hi_offset, ls_offset,
 * consumer_lag}}}} (offsets -1 when unknown), with the broker admin API's
 * names beside them (high_watermark, log_start_offset); a consumer with
 * group.id adds cgrp{state, stateage, join_state, rebalance_age,
 * rebalance_cnt, rebalance_reason, assignment_size, with samsa_state and
 * generation}, an idempotent producer eos{idemp_state, idemp_stateage,
 * txn_state ("Init": no transactions), txn_stateage, txn_may_enq,
 * producer_id, producer_epoch, epoch_cnt}. One document waits
 * at most: while one is not served, no newer one is made.
 */
typedef void samsa_stats_cb(const char *json, size_t json_len, void *cb_opaque);
void samsa_conf_set_stats_cb(samsa_conf *conf, samsa_stats_cb *cb, void *cb_opaque);

/*
 * A custom partitioner, as librdkafka's rd_kafka_topic_conf_set_partitioner_cb
 * (for every topic): for a record produced with SAMSA_PARTITION_ANY, once its
 * topic's partition count is known, cb gets the topic, the key (NULL: a null
 * key), the partition count, cb_opaque and the record's opaque, and returns
 * a partition in [0, partition_count). It replaces `partitioner`
 * (samsa_partition_for_key is Java's placement, for a cb that wants it). A
 * return outside that range fails the record with
 * SAMSA_ERR_UNKNOWN_PARTITION in its delivery report. As librdkafka's, cb
 * runs where the record is placed: inside samsa_produce, or on the I/O
 * thread when the topic's metadata arrives, with the handle's lock held; it
 * must be quick and must not call libsamsa.
 */
typedef int32_t samsa_partitioner_cb(const char *topic, const void *key, size_t key_len,
                                     int32_t partition_count, void *cb_opaque,
                                     void *msg_opaque);
void samsa_conf_set_partitioner_cb(samsa_conf *conf, samsa_partitioner_cb *cb, void *cb_opaque);

/*
 * A topic's own settings, as librdkafka's rd_kafka_topic_conf_t: made with
 * samsa_topic_conf_new (caller owns it, samsa_topic_conf_destroy frees
 * it), given a partitioner by name (samsa_topic_conf_set(tconf,
 * "partitioner", "murmur2", ...): the names of `partitioner`; any other
 * key is SAMSA_ERR_INVALID_CONFIG, the handle's settings are the handle's)
 * or a callback (samsa_topic_conf_set_partitioner_cb, as librdkafka's
 * rd_kafka_topic_conf_set_partitioner_cb), then bound to a topic of a conf
 * with samsa_conf_set_topic_conf (copied; tconf stays the caller's; a later
 * call for the same topic replaces it). Where librdkafka takes the topic
 * conf at rd_kafka_topic_new, libsamsa has no topic handles: a producer made
 * from conf places that topic's records produced with SAMSA_PARTITION_ANY
 * with the topic's callback, else its named partitioner, instead of the
 * handle's (samsa_conf_set_partitioner_cb, `partitioner`). The callback
 * runs as the handle's does (see above).
 */
typedef struct samsa_topic_conf samsa_topic_conf;
samsa_topic_conf *samsa_topic_conf_new(void);
samsa_topic_conf *samsa_topic_conf_dup(const samsa_topic_conf *tconf);
void samsa_topic_conf_destroy(samsa_topic_conf *tconf);
SAMSA_MUST_CHECK int samsa_topic_conf_set(samsa_topic_conf *tconf, const char *key,
                                          const char *value, char *errstr, size_t errstr_size);
void samsa_topic_conf_set_partitioner_cb(samsa_topic_conf *tconf, samsa_partitioner_cb *cb,
                                         void *cb_opaque);
SAMSA_MUST_CHECK int samsa_conf_set_topic_conf(samsa_conf *conf, const char *topic,
                                               const samsa_topic_conf *tconf);

/* ----------------------------------------------------------------- producer */

typedef struct samsa_producer samsa_producer;

/*
 * A producer with a copy of conf (conf stays the caller's). Caller owns the
 * result: samsa_producer_destroy. NULL with errstr on a bad configuration
 * (e.g. no bootstrap.servers, enable.idempotence=true with acks=1).
 * Connecting happens in the background: the call does not wait for brokers.
 */
SAMSA_MUST_CHECK samsa_producer *samsa_producer_new(const samsa_conf *conf, char *errstr,
                                                    size_t errstr_size);

/*
 * Queues one record (copied) and returns at once. SAMSA_OK means a delivery
 * report will follow (from samsa_producer_poll, _flush or _close). Errors:
 *   SAMSA_ERR_QUEUE_FULL      queue.buffering.max.messages records, or
 *                             queue.buffering.max.kbytes of them, are queued or
 *                             waiting for their report: call samsa_producer_poll
 *                             to serve reports, then retry;
 *   SAMSA_ERR_MSG_TOO_LARGE   key + value + headers above message.max.bytes;
 *   SAMSA_ERR_UNKNOWN_PARTITION  an explicit partition the topic lacks (when
 *                             metadata is known; otherwise reported later);
 *   SAMSA_ERR_INVALID_ARG, SAMSA_ERR_FATAL, SAMSA_ERR_DESTROYED.
 */
SAMSA_MUST_CHECK int samsa_produce(samsa_producer *p, const struct samsa_record *rec);

/* Serves delivery reports and errors, waiting up to timeout_ms (0: do not
 * wait, -1: forever) for the first. Returns how many callbacks ran. */
int samsa_producer_poll(samsa_producer *p, int timeout_ms);

/* Sends everything queued now (ignoring linger.ms) and serves reports until
 * none is outstanding: SAMSA_OK, or SAMSA_ERR_TIMED_OUT after timeout_ms
 * (-1: no limit) with samsa_producer_outq_len() records still outstanding. */
SAMSA_MUST_CHECK int samsa_producer_flush(samsa_producer *p, int timeout_ms);

/* Records produced whose delivery report has not been served yet. */
size_t samsa_producer_outq_len(samsa_producer *p);

/* librdkafka's rd_kafka_purge(RD_KAFKA_PURGE_F_QUEUE): every record queued
 * and not sent yet is dropped, its delivery report (SAMSA_ERR_PURGED)
 * served by the next poll-like call. Records on their way to a broker, or
 * sent and waiting to be retried, are not touched (their outcome is the
 * broker's). SAMSA_OK, or SAMSA_ERR_DESTROYED on a closed producer. */
int samsa_producer_purge(samsa_producer *p);

/*
 * librdkafka's rd_kafka_purge(p, flags), its flag values:
 * SAMSA_PURGE_QUEUE is samsa_producer_purge; SAMSA_PURGE_INFLIGHT fails the
 * records sent and not answered yet, and those sent and waiting to be
 * retried, with SAMSA_ERR_PURGED and SAMSA_MSG_POSSIBLY_PERSISTED (a broker
 * may have written them; their answers are not waited for: the connections
 * that carry them are closed and made again). An idempotent producer then
 * takes a new producer id before it sends again, so the sequence numbers
 * it skipped cannot fail later records. The call returns once the I/O thread
 * has done it (the reports come with the next poll-like call). SAMSA_OK,
 * SAMSA_ERR_INVALID_ARG for an unknown flag, SAMSA_ERR_DESTROYED.
 */
#define SAMSA_PURGE_QUEUE 0x1
#define SAMSA_PURGE_INFLIGHT 0x2
int samsa_producer_purge_flags(samsa_producer *p, int flags);

/*
 * Flushes for up to timeout_ms, fails what is left with SAMSA_ERR_PURGED
 * (their reports are served before it returns), stops the I/O thread and
 * frees what p held; p itself stays for samsa_producer_destroy (see
 * "Lifetimes" above). Returns how many of the reports served inside the
 * call said a record was not delivered (0: all were), purged or failed
 * while flushing. p NULL or already closed: returns 0.
 */
size_t samsa_producer_close(samsa_producer *p, int timeout_ms);

/* Frees p (samsa_producer_close(p, 0) first if it was not closed: what is
 * queued is reported PURGED). The last call on p. NULL is a no-op. */
void samsa_producer_destroy(samsa_producer *p);

/*
 * Transactions (Kafka 2.0's KIP-98), as librdkafka's transactional API
 * (rd_kafka_init_transactions, _begin_transaction,
 * _send_offsets_to_transaction, _commit_transaction, _abort_transaction):
 * a producer whose conf sets transactional.id (idempotence implied;
 * transaction.timeout.ms, 60000 by default, is the coordinator's limit on
 * an open transaction) calls init_transactions once, then for each
 * transaction begin, samsa_produce records (to any partitions), optionally
 * send_offsets, then commit or abort. A read_committed consumer sees the
 * records of committed transactions only. samsa_produce outside a
 * transaction: SAMSA_ERR_STATE.
 *
 * Each call returns NULL on success, else an error the caller owns
 * (samsa_txn_error_destroy), with librdkafka's rd_kafka_error_t queries:
 *   fatal             the producer cannot go on (fenced by a newer producer
 *                     with the same transactional.id: SAMSA_ERR_FENCED; the
 *                     coordinator forgot its producer id); destroy it;
 *   txn_requires_abort  the transaction cannot commit (a record's delivery
 *                     failed, or the coordinator refused it): abort it,
 *                     then begin another;
 *   retriable         the call may be made again (it timed out: its work
 *                     goes on in the background).
 * CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR
 * and COORDINATOR_NOT_AVAILABLE are retried inside the call, after
 * retry.backoff.ms, until its timeout.
 */
typedef struct samsa_txn_error samsa_txn_error;

/* The error's code (enum samsa_err, or Kafka's) and its sentence (owned by e). */
int samsa_txn_error_code(const samsa_txn_error *e);
const char *samsa_txn_error_string(const samsa_txn_error *e);
/* 1 or 0, as librdkafka's rd_kafka_error_is_fatal, _is_retriable,
 * _txn_requires_abort. */
int samsa_txn_error_is_fatal(const samsa_txn_error *e);
int samsa_txn_error_is_retriable(const samsa_txn_error *e);
int samsa_txn_error_txn_requires_abort(const samsa_txn_error *e);
/* Frees e. NULL is a no-op. */
void samsa_txn_error_destroy(samsa_txn_error *e);

/* A consumer's group as send_offsets needs it (librdkafka's
 * rd_kafka_consumer_group_metadata_t): its group.id, and while it is a
 * member its generation and member id. */
typedef struct samsa_consumer_group_metadata samsa_consumer_group_metadata;
struct samsa_partition; /* below, with the consumer */

/*
 * Finds the transaction coordinator of transactional.id (FindCoordinator
 * key type 1) and takes a producer id and epoch from it (InitProducerId):
 * an earlier producer with the same id is fenced, and its open
 * transaction aborted. Once per producer, before anything is produced.
 */
SAMSA_MUST_CHECK samsa_txn_error *samsa_producer_init_transactions(samsa_producer *p,
                                                                   int timeout_ms);

/* Begins a transaction (local: the coordinator hears of it with its first
 * partition). */
SAMSA_MUST_CHECK samsa_txn_error *samsa_producer_begin_transaction(samsa_producer *p);

/*
 * Puts the consumer offsets offsets[0..count) (each the next offset to
 * read) of md's group in the transaction: they become the group's
 * committed offsets with the commit, and are dropped by an abort
 * (AddOffsetsToTxn to the transaction coordinator, then TxnOffsetCommit to
 * the group's coordinator).
 */
SAMSA_MUST_CHECK samsa_txn_error *samsa_producer_send_offsets_to_transaction(
    samsa_producer *p, const struct samsa_partition *offsets, size_t count,
    const samsa_consumer_group_metadata *md, int timeout_ms);

/*
 * Flushes (every record of the transaction acknowledged, delivery reports
 * served), then commits (EndTxn). A record whose delivery failed makes the
 * transaction abortable instead: the error says txn_requires_abort. On a
 * timeout (retriable) call it again.
 */
SAMSA_MUST_CHECK samsa_txn_error *samsa_producer_commit_transaction(samsa_producer *p,
                                                                    int timeout_ms);

/*
 * Drops what is queued and not sent (reported SAMSA_ERR_PURGED), waits for
 * what is in flight, then aborts the transaction (EndTxn): its records are
 * never shown to a read_committed consumer.
 */
SAMSA_MUST_CHECK samsa_txn_error *samsa_producer_abort_transaction(samsa_producer *p,
                                                                   int timeout_ms);

/* ----------------------------------------------------------------- consumer */

typedef struct samsa_consumer samsa_consumer;

/* A consumed record. Caller owns: samsa_message_free. Every pointer inside
 * lives as long as the message. Only the library allocates one (see
 * "Growable structs"). */
typedef struct samsa_message {
    size_t struct_size;     /* the library's sizeof (see "Growable structs") */
    const char *topic;
    int32_t partition;
    int64_t offset;
    int64_t timestamp;      /* milliseconds since the epoch */
    int timestamp_type;     /* 0 CreateTime, 1 LogAppendTime */
    const void *key;        /* NULL: a null key */
    size_t key_len;
    const void *value;      /* NULL: a null value */
    size_t value_len;
    size_t header_count;
    const struct samsa_header *headers;
} samsa_message;

void samsa_message_free(samsa_message *msg);

/* One partition of one topic; offset's meaning depends on the call. */
struct samsa_partition {
    const char *topic;
    int32_t partition;
    int64_t offset;
};

/*
 * A subscribed consumer's rebalances, called inside samsa_consumer_poll (and
 * samsa_consumer_close). The library assigns and revokes by itself: the
 * callback observes, and may commit or seek. `parts` is borrowed for the
 * duration of the callback.
 *   assigned = true: the group gave this member parts (already applied;
 *     offset SAMSA_OFFSET_STORED: each starts at the group's committed
 *     offset, else where auto.offset.reset says). A seek inside moves one.
 *   assigned = false: parts are being taken away (offset: the position, the
 *     next offset the application would have got). Fetching has stopped;
 *     they stay assigned while the callback runs, so that
 *     samsa_consumer_commit(c, NULL, 0, false, ms) commits their positions
 *     in this generation; the member joins again once it returned. When the
 *     membership was lost instead (no heartbeat answered within
 *     session.timeout.ms, the coordinator forgot the member, no poll within
 *     max.poll.interval.ms) the callback comes after the fact and nothing
 *     can be committed for them any more.
 * With partition.assignment.strategy=cooperative-sticky (incremental
 * rebalancing) the lists are the changes only, and partitions the member
 * keeps are fetched on through every rebalance without an event:
 *   assigned = true: the partitions added by this generation (possibly
 *     none); the others are still assigned.
 *   assigned = false: only the partitions moving to another member. Their
 *     fetching has stopped; they stay assigned (and committable, as above)
 *     while the callback runs, then the member joins again at once so that
 *     their new owner gets them. A lost membership revokes everything, as
 *     above.
 * The library applies both changes itself: unlike librdkafka's
 * rd_kafka_incremental_assign/_unassign, there is nothing to call back, and
 * nothing a callback could get wrong by calling samsa_consumer_assign (which
 * is refused while subscribed).
 */
typedef void samsa_rebalance_cb(bool assigned, const struct samsa_partition *parts, size_t count,
                                void *cb_opaque);
void samsa_conf_set_rebalance_cb(samsa_conf *conf, samsa_rebalance_cb *cb, void *cb_opaque);

/* A consumer with a copy of conf. Caller owns: samsa_consumer_destroy. */
SAMSA_MUST_CHECK samsa_consumer *samsa_consumer_new(const samsa_conf *conf, char *errstr,
                                                    size_t errstr_size);

/*
 * Replaces the assignment with parts[0..count) (copied); count 0 clears it.
 * Each offset is absolute, SAMSA_OFFSET_BEGINNING, _END or _STORED (the
 * group's committed offset; needs group.id). Not allowed while subscribed.
 */
SAMSA_MUST_CHECK int samsa_consumer_assign(samsa_consumer *c, const struct samsa_partition *parts,
                                           size_t count);

/*
 * Joins group.id as a member of the classic consumer group protocol,
 * subscribed to topics[0..count) (copied; topics the cluster lacks get
 * partitions once they exist and the next metadata refresh shows them).
 * A name starting with ^ is a regular expression (librdkafka's convention;
 * POSIX extended, the whole name with its ^; one that does not compile is
 * SAMSA_ERR_INVALID_ARG): it is matched against every topic of each
 * Metadata answer (internal topics left out, as Java's
 * exclude.internal.topics), the first join waits for the first answer, and
 * when a refresh (metadata.max.age.ms) finds the matches changed, a topic
 * created or deleted, the member joins again with them.
 * Asynchronous: partitions arrive through samsa_consumer_poll (see the
 * rebalance callback). The assignors are partition.assignment.strategy's, in
 * its order; the coordinator picks the one every member supports. Calling it
 * again with other topics rejoins with them. Heartbeats run on the I/O
 * thread; samsa_consumer_poll must be called at least every
 * max.poll.interval.ms, else the member leaves the group
 * (SAMSA_ERR_MAX_POLL_EXCEEDED to the error callback) and the next poll joins
 * again. Returns SAMSA_ERR_INVALID_CONFIG without group.id, SAMSA_ERR_STATE
 * with a manual assignment in place.
 */
SAMSA_MUST_CHECK int samsa_consumer_subscribe(samsa_consumer *c, const char *const *topics,
                                              size_t count);

/* The next message, or NULL when none arrived within timeout_ms (-1: wait
 * forever). Callbacks (errors, rebalances) run inside. Caller owns the
 * message. */
samsa_message *samsa_consumer_poll(samsa_consumer *c, int timeout_ms);

/*
 * Moves an assigned partition's position: offset absolute,
 * SAMSA_OFFSET_BEGINNING or SAMSA_OFFSET_END. Messages already fetched for
 * it are dropped. Waits up to timeout_ms for the offset to be resolved.
 */
SAMSA_MUST_CHECK int samsa_consumer_seek(samsa_consumer *c, const char *topic, int32_t partition,
                                         int64_t offset, int timeout_ms);

/* Moves an assigned partition to the first offset whose timestamp is at or
 * after timestamp_ms (ListOffsets); to its end when there is none. */
SAMSA_MUST_CHECK int samsa_consumer_seek_timestamp(samsa_consumer *c, const char *topic,
                                                   int32_t partition, int64_t timestamp_ms,
                                                   int timeout_ms);

/* True when every assigned partition's position has reached the end (high
 * watermark) last reported by its leader and no message is waiting in the
 * queue: what `-e` (exit at the end) needs. False with no assignment. */
bool samsa_consumer_at_end(samsa_consumer *c);

/*
 * Commits the positions of every assigned partition (offsets NULL: the
 * stored offset of each: with enable.auto.offset.store=true, the default,
 * the offset after the last message samsa_consumer_poll returned) or
 * offsets[0..count) (offset = the next one to read) for group.id. A
 * subscribed member commits with its generation and member id:
 * Kafka's REBALANCE_IN_PROGRESS (27) while it is between generations,
 * ILLEGAL_GENERATION (22) / UNKNOWN_MEMBER_ID (25) when the group moved on.
 * async false: waits up to timeout_ms for the coordinator's answer;
 * async true: returns at once, a failure goes to the error callback (and
 * samsa_consumer_close waits for those still on their way).
 */
SAMSA_MUST_CHECK int samsa_consumer_commit(samsa_consumer *c, const struct samsa_partition *offsets,
                                           size_t count, bool async, int timeout_ms);

/*
 * The offset store, as librdkafka's rd_kafka_offsets_store: with
 * enable.auto.offset.store=false, samsa_consumer_poll no longer stores the
 * offset after each message it returns, and a commit of the assignment
 * (samsa_consumer_commit with offsets NULL, auto commit, the commit at a
 * revocation and at close) sends only what the application stored:
 * offsets[i].offset is the next offset to read (a message's offset + 1).
 * Only assigned partitions: SAMSA_ERR_STATE (nothing stored) when one is
 * not; SAMSA_ERR_INVALID_ARG for a negative offset, and, as librdkafka,
 * while enable.auto.offset.store is true. samsa_consumer_store_message stores
 * msg->offset + 1 of msg's partition (librdkafka's rd_kafka_offset_store_message).
 */
SAMSA_MUST_CHECK int samsa_consumer_store_offsets(samsa_consumer *c,
                                                  const struct samsa_partition *offsets,
                                                  size_t count);
SAMSA_MUST_CHECK int samsa_consumer_store_message(samsa_consumer *c, const samsa_message *msg);

/* The committed offsets of parts[0..count) for group.id, written into each
 * element's offset (-1001 when none is committed). */
SAMSA_MUST_CHECK int samsa_consumer_committed(samsa_consumer *c, struct samsa_partition *parts,
                                              size_t count, int timeout_ms);

/* Low and high watermark of one partition, asked of its leader. */
SAMSA_MUST_CHECK int samsa_consumer_watermarks(samsa_consumer *c, const char *topic,
                                               int32_t partition, int64_t *low, int64_t *high,
                                               int timeout_ms);

/*
 * librdkafka's rd_kafka_offsets_for_times: on entry each parts[i].offset is
 * a time in ms (or SAMSA_OFFSET_BEGINNING / _END); on return it is the
 * first offset whose timestamp is at or after it (ListOffsets of the
 * partition's leader), or -1 when the partition has none (librdkafka's
 * RD_KAFKA_OFFSET_END). One timeout_ms for all; returns the first error
 * (the partitions after it keep their times). Any partition, assigned or not.
 */
SAMSA_MUST_CHECK int samsa_consumer_offsets_for_times(samsa_consumer *c,
                                                      struct samsa_partition *parts, size_t count,
                                                      int timeout_ms);

/*
 * Stops fetching parts[0..count) (their offsets are ignored) until
 * samsa_consumer_resume: messages of them already fetched and not yet
 * returned are dropped and fetched again after the resume, so nothing is
 * skipped. Only assigned partitions: SAMSA_ERR_STATE (and nothing changed)
 * when one is not. A new assignment from the group starts unpaused.
 */
SAMSA_MUST_CHECK int samsa_consumer_pause(samsa_consumer *c, const struct samsa_partition *parts,
                                          size_t count);
SAMSA_MUST_CHECK int samsa_consumer_resume(samsa_consumer *c, const struct samsa_partition *parts,
                                           size_t count);

/* The current assignment; each offset is the position (the next offset
 * samsa_consumer_poll returns), or SAMSA_OFFSET_BEGINNING / _END / _STORED
 * while that is not resolved yet. *parts is the caller's:
 * samsa_partitions_free(*parts, *count). */
SAMSA_MUST_CHECK int samsa_consumer_assignment(samsa_consumer *c, struct samsa_partition **parts,
                                               size_t *count);

/* Frees an array of partitions a samsa_* call returned (with its topics). */
void samsa_partitions_free(struct samsa_partition *parts, size_t count);

/* How far one assigned partition's consumer is behind its log. */
struct samsa_lag {
    int64_t position;       /* next offset samsa_consumer_poll returns; -1 unknown */
    int64_t high_watermark; /* as the leader last reported it; -1 before a fetch answered */
    int64_t last_stable;    /* likewise (read_committed reads up to it); -1 unknown */
    int64_t lag;            /* end - position, end being last_stable with
                             * isolation.level=read_committed, else the high
                             * watermark; -1 while either is unknown */
    bool paused;
};

/* The lag of one assigned partition (SAMSA_ERR_STATE when not assigned),
 * from what the last fetch answer said: no request is sent. */
SAMSA_MUST_CHECK int samsa_consumer_lag(samsa_consumer *c, const char *topic, int32_t partition,
                                        struct samsa_lag *out);

/*
 * A subscribed member gives its partitions up (the rebalance callback runs
 * inside), commits them when enable.auto.commit, waits for asynchronous
 * commits on their way, sends LeaveGroup (not a static member:
 * group.instance.id), then stops the I/O thread and frees what c held; c
 * itself stays for samsa_consumer_destroy (see "Lifetimes" above). All of
 * it within timeout_ms (-1: each step bounded by request.timeout.ms, the
 * LeaveGroup by 10 s): a coordinator that is gone costs the timeout, not
 * more. Returns SAMSA_OK when the final commit and the LeaveGroup were
 * answered (or there was nothing to send), SAMSA_ERR_TIMED_OUT when one was
 * not within the time, else the first error of them; the consumer is closed
 * in every case. SAMSA_ERR_INVALID_ARG for c NULL, SAMSA_ERR_DESTROYED when
 * it was closed already.
 */
int samsa_consumer_close(samsa_consumer *c, int timeout_ms);

/* Frees c (samsa_consumer_close(c, -1) first if it was not closed). The
 * last call on c. NULL is a no-op. */
void samsa_consumer_destroy(samsa_consumer *c);

/* c's group for samsa_producer_send_offsets_to_transaction (librdkafka's
 * rd_kafka_consumer_group_metadata): NULL when c has no group.id (or out
 * of memory). Free it with samsa_consumer_group_metadata_destroy. */
samsa_consumer_group_metadata *samsa_consumer_group_metadata_get(samsa_consumer *c);
/* A group's metadata by its id alone (librdkafka's
 * rd_kafka_consumer_group_metadata_new), for offsets of a consumer without
 * membership. NULL for NULL or out of memory. */
samsa_consumer_group_metadata *samsa_consumer_group_metadata_new(const char *group_id);
void samsa_consumer_group_metadata_destroy(samsa_consumer_group_metadata *md);

/* -------------------------------------------------------------------- admin */

typedef struct samsa_admin samsa_admin;

SAMSA_MUST_CHECK samsa_admin *samsa_admin_new(const samsa_conf *conf, char *errstr,
                                              size_t errstr_size);
/* Stops a's I/O thread and frees what a held; a stays for
 * samsa_admin_destroy (see "Lifetimes" above). NULL is a no-op. */
void samsa_admin_close(samsa_admin *a);
/* Frees a (closing it first if needed). The last call on a. */
void samsa_admin_destroy(samsa_admin *a);

/* A topic to create; config[] holds "key=value" strings (may be NULL). */
struct samsa_new_topic {
    const char *name;
    int32_t partitions;         /* -1: the broker's num.partitions */
    int16_t replication_factor; /* -1: the broker's default */
    const char *const *config;
    size_t config_count;
};

/* Creates one topic on the controller. Kafka's error (36
 * TOPIC_ALREADY_EXISTS, 37 INVALID_PARTITIONS, ...) with the broker's message
 * in errstr. */
SAMSA_MUST_CHECK int samsa_admin_create_topic(samsa_admin *a, const struct samsa_new_topic *t,
                                              int timeout_ms, char *errstr, size_t errstr_size);

SAMSA_MUST_CHECK int samsa_admin_delete_topic(samsa_admin *a, const char *name, int timeout_ms,
                                              char *errstr, size_t errstr_size);

/* Cluster metadata: brokers, topics, partitions. Caller owns:
 * samsa_metadata_free. Every pointer inside lives as long as it. */
struct samsa_broker_info {
    int32_t id;
    const char *host;
    int32_t port;
    const char *rack; /* NULL when none */
};

struct samsa_partition_info {
    int32_t id;
    int err;        /* Kafka error for this partition, 0 if none */
    int32_t leader; /* -1: none */
    size_t replica_count;
    const int32_t *replicas;
    size_t isr_count;
    const int32_t *isrs;
};

struct samsa_topic_info {
    const char *name;
    int err;
    bool internal;
    size_t partition_count;
    const struct samsa_partition_info *partitions;
};

typedef struct samsa_metadata {
    const char *cluster_id; /* NULL when the broker has none */
    int32_t controller_id;  /* -1 when unknown */
    size_t broker_count;
    const struct samsa_broker_info *brokers;
    size_t topic_count;
    const struct samsa_topic_info *topics;
} samsa_metadata;

/*
 * Metadata of topics[0..count), or of every topic when topics is NULL.
 * Topics are never created by this call. *out is the caller's
 * (samsa_metadata_free) on SAMSA_OK.
 */
SAMSA_MUST_CHECK int samsa_admin_metadata(samsa_admin *a, const char *const *topics, size_t count,
                                          int timeout_ms, samsa_metadata **out);
void samsa_metadata_free(samsa_metadata *md);

/* Low and high watermark of one partition. */
SAMSA_MUST_CHECK int samsa_admin_watermarks(samsa_admin *a, const char *topic, int32_t partition,
                                            int64_t *low, int64_t *high, int timeout_ms);

/* The offset of one partition for timestamp (ListOffsets): SAMSA_OFFSET_BEGINNING
 * the log start, SAMSA_OFFSET_END the end (high watermark, last stable offset
 * with isolation.level=read_committed), or a time in ms: the first offset
 * whose timestamp is at or after it (-1 when there is none). */
SAMSA_MUST_CHECK int samsa_admin_list_offset(samsa_admin *a, const char *topic, int32_t partition,
                                             int64_t timestamp, int64_t *offset, int timeout_ms);

/*
 * Raises topic's partition count to total (CreatePartitions, on the
 * controller). Kafka's INVALID_PARTITIONS (37) when total is not above the
 * current count; SAMSA_ERR_UNSUPPORTED, saying so in errstr, when the broker
 * does not offer CreatePartitions (API 37).
 */
SAMSA_MUST_CHECK int samsa_admin_create_partitions(samsa_admin *a, const char *topic,
                                                   int32_t total, int timeout_ms, char *errstr,
                                                   size_t errstr_size);

/*
 * Deletes the records before parts[i].offset of each partition
 * (DeleteRecords, on each leader; SAMSA_OFFSET_END: every record). On
 * return each offset is the partition's new low watermark, or -1 where it
 * failed. Returns the first error.
 */
SAMSA_MUST_CHECK int samsa_admin_delete_records(samsa_admin *a, struct samsa_partition *parts,
                                                size_t count, int timeout_ms, char *errstr,
                                                size_t errstr_size);

/* Configuration resources, as Kafka numbers them. */
enum samsa_resource_type {
    SAMSA_RESOURCE_TOPIC = 2,
    SAMSA_RESOURCE_BROKER = 4, /* name: the broker id, e.g. "0" */
};

struct samsa_config_entry {
    const char *name;
    const char *value; /* NULL: none, or sensitive */
    int source;        /* Kafka's ConfigSource: 1 topic (dynamic), 2 dynamic broker, 3 dynamic
                        * default broker, 4 static broker, 5 default; -1 unknown */
    bool is_default;
    bool read_only;
    bool sensitive;
};

/* Caller owns: samsa_configs_free. Pointers inside live as long as it. */
typedef struct samsa_configs {
    size_t count;
    const struct samsa_config_entry *entries;
} samsa_configs;

/* Every configuration of a topic or broker (DescribeConfigs), in the
 * broker's order. SAMSA_ERR_UNKNOWN_TOPIC for no such topic. */
SAMSA_MUST_CHECK int samsa_admin_describe_configs(samsa_admin *a, int resource_type,
                                                  const char *name, int timeout_ms,
                                                  samsa_configs **out, char *errstr,
                                                  size_t errstr_size);
void samsa_configs_free(samsa_configs *configs);

/* One change: name to value, or back to its default when value is NULL. */
struct samsa_config_op {
    const char *name;
    const char *value;
};

/*
 * Changes configurations of a topic or broker, leaving the others as they
 * are: IncrementalAlterConfigs (API 44) when the broker has it, else
 * AlterConfigs (API 33) on the dynamic configurations DescribeConfigs
 * reported, with ops applied. Kafka's INVALID_CONFIG (40) with the broker's
 * message in errstr for a value it refuses.
 */
SAMSA_MUST_CHECK int samsa_admin_alter_configs(samsa_admin *a, int resource_type, const char *name,
                                               const struct samsa_config_op *ops, size_t count,
                                               int timeout_ms, char *errstr, size_t errstr_size);

/* -------------------------------------------------------- admin: groups */

struct samsa_group_listing {
    const char *group_id;
    const char *protocol_type; /* "consumer" for consumer groups; "" for offsets only */
};

/* A broker that did not answer ListGroups: its groups are missing from the
 * list (librdkafka's ListConsumerGroups result carries these as `errors`). */
struct samsa_broker_error {
    int32_t node_id;
    const char *host;
    int port;
    int err;            /* SAMSA_ERR_TRANSPORT (connection refused or lost), or the
                         * broker's Kafka error */
    const char *reason; /* "node 2 (10.0.0.3:9092): connection refused: ..." */
};

/* Caller owns: samsa_group_list_free. */
typedef struct samsa_group_list {
    size_t count;
    const struct samsa_group_listing *groups;
    size_t error_count; /* 0: every broker answered, the list is complete */
    const struct samsa_broker_error *errors;
} samsa_group_list;

/* Every group of the cluster (ListGroups asked of every broker Metadata
 * names, in turn). A broker that cannot be reached (its connection refused
 * or lost) or answers with an error does not hold the call up until the
 * timeout: SAMSA_OK once every broker answered or failed, with the groups
 * of those that answered and one (*out)->errors entry per broker that did
 * not. Errors of the call itself (no Metadata within timeout_ms) are
 * returned as usual. */
SAMSA_MUST_CHECK int samsa_admin_list_groups(samsa_admin *a, int timeout_ms, samsa_group_list **out,
                                             char *errstr, size_t errstr_size);
void samsa_group_list_free(samsa_group_list *list);

struct samsa_group_member {
    const char *member_id;
    const char *instance_id; /* NULL when none */
    const char *client_id;
    const char *client_host;
    size_t assignment_count;  /* decoded from the consumer protocol; 0 otherwise */
    const struct samsa_partition *assignment; /* offsets -1 */
};

/* Caller owns: samsa_group_description_free. */
typedef struct samsa_group_description {
    const char *group_id;
    const char *state;         /* Empty, PreparingRebalance, CompletingRebalance, Stable, Dead */
    const char *protocol_type; /* "consumer" */
    const char *protocol;      /* the assignor chosen, e.g. "range" */
    int32_t coordinator_id;
    size_t member_count;
    const struct samsa_group_member *members;
} samsa_group_description;

/* One group as its coordinator describes it (DescribeGroups). An unknown
 * group is described as state "Dead" with no members, as Kafka does. */
SAMSA_MUST_CHECK int samsa_admin_describe_group(samsa_admin *a, const char *group, int timeout_ms,
                                                samsa_group_description **out, char *errstr,
                                                size_t errstr_size);
void samsa_group_description_free(samsa_group_description *desc);

/* Every offset group has committed (OffsetFetch of all its partitions).
 * *parts is the caller's: samsa_partitions_free(*parts, *count). */
SAMSA_MUST_CHECK int samsa_admin_list_group_offsets(samsa_admin *a, const char *group,
                                                    int timeout_ms, struct samsa_partition **parts,
                                                    size_t *count, char *errstr,
                                                    size_t errstr_size);

/* Commits parts[0..count) (offset: the next one to read) for group, as a
 * tool does for a group without members (generation -1): Kafka's
 * UNKNOWN_MEMBER_ID (25) or REBALANCE_IN_PROGRESS (27) while it has some. */
SAMSA_MUST_CHECK int samsa_admin_alter_group_offsets(samsa_admin *a, const char *group,
                                                     const struct samsa_partition *parts,
                                                     size_t count, int timeout_ms, char *errstr,
                                                     size_t errstr_size);

/* Deletes a group without members and its offsets (DeleteGroups): Kafka's
 * NON_EMPTY_GROUP (68) while it has members, GROUP_ID_NOT_FOUND (69). */
SAMSA_MUST_CHECK int samsa_admin_delete_group(samsa_admin *a, const char *group, int timeout_ms,
                                              char *errstr, size_t errstr_size);

/* ------------------------------------------------------------- partitioner */

/* Java's murmur2 (Utils.murmur2) of data[0..len). */
uint32_t samsa_murmur2(const void *data, size_t len);

/* The partition the Java client (and librdkafka's murmur2_random) places a
 * non-null key on: (murmur2(key) & 0x7fffffff) % partition_count. */
int32_t samsa_partition_for_key(const void *key, size_t len, int32_t partition_count);

#ifdef __cplusplus
}
#endif

#endif
