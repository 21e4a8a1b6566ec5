/*
 * libsamsa internals: what the modules of client/src share.
 *
 * Threading model (the whole contract):
 *   - Every handle has one I/O thread (client.c) that owns the sockets, the
 *     in-flight requests and the decoders. It never calls user code.
 *   - Everything the user's threads and the I/O thread both touch lives in
 *     struct sc_client and is guarded by sc_client.lock: the configuration
 *     is immutable after _new; topics, partition queues, the op queue and
 *     the event queues are only read or written with the lock held. The I/O
 *     thread holds the lock while it works and releases it around poll(2),
 *     send(2)/recv(2) and the encoding of cut producer batches: what it
 *     touches then (sockets, connection buffers, a batch cut from its
 *     queue) belongs to it alone; a user call that changes what the I/O
 *     thread should do writes to the wake eventfd.
 *   - User-facing results (delivery reports, errors, consumed messages)
 *     are queued by the I/O thread and handed to callbacks or returned only
 *     inside the user's poll-like calls (cond var `ev_cond` wakes them).
 *
 * Memory: every allocation goes through kp_malloc/kp_calloc/kp_free (the
 * protocol crate's wrapper, so a torture build fails them in turn).
 */
#ifndef SAMSA_CLIENT_INTERNAL_H
#define SAMSA_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <samsa/samsa.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>
#include <samsa-protocol/record_batch.h>

#define SC_MUST_CHECK KP_MUST_CHECK

/* ------------------------------------------------------------------- time */

/* Monotonic milliseconds (timers, linger, timeouts). */
int64_t sc_now_ms(void);
/* Wall-clock milliseconds since the epoch (record timestamps). */
int64_t sc_wall_ms(void);

/* Formats into buf like snprintf, never overflowing; no-op when buf NULL. */
void sc_errf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same with a va_list. */
void sc_verrf(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* A NUL-terminated copy (kp_malloc) or NULL on allocation failure. */
char *sc_strdup(const char *s);
char *sc_strndup(const char *s, size_t n);

/* Kafka wire error (from a response) to our code: -1 -> SAMSA_ERR_UNKNOWN. */
int sc_err_from_wire(int16_t wire);
/* What the application is given for err (samsa.h's rule): Kafka's
 * UNKNOWN_TOPIC_OR_PARTITION (3) becomes SAMSA_ERR_UNKNOWN_TOPIC; every
 * other code is itself. */
int sc_err_public(int err);

/* ---------------------------------------------------------- configuration */

enum sc_partitioner {
    SC_PART_MURMUR2_RANDOM = 0, /* Java's placement; null keys sticky */
    SC_PART_MURMUR2,            /* null keys all to one partition */
    SC_PART_CONSISTENT_RANDOM,  /* librdkafka's default: CRC32; empty/null keys sticky */
    SC_PART_CONSISTENT,         /* CRC32 of any key, null included */
    SC_PART_RANDOM,             /* keys ignored, sticky */
    SC_PART_FNV1A,              /* librdkafka's (Sarama's hash): null keys to one partition */
    SC_PART_FNV1A_RANDOM,       /* the same, null keys sticky */
};

enum sc_offset_reset {
    SC_RESET_EARLIEST = 0,
    SC_RESET_LATEST = 1,
    SC_RESET_ERROR = 2,
};

enum sc_assignor {
    SC_ASSIGNOR_RANGE = 0,
    SC_ASSIGNOR_ROUNDROBIN = 1,
    SC_ASSIGNOR_STICKY = 2, /* Kafka 2.0's StickyAssignor ("sticky"), eager */
    SC_ASSIGNOR_COOPERATIVE_STICKY = 3, /* KIP-429's "cooperative-sticky", incremental */
    SC_ASSIGNOR_COUNT = 4,
};

/* Whether an assignor's group runs incremental (cooperative) rebalances. */
static inline bool sc_assignor_cooperative(int assignor)
{
    return assignor == SC_ASSIGNOR_COOPERATIVE_STICKY;
}

static inline const char *sc_assignor_name(int assignor)
{
    return assignor == SC_ASSIGNOR_ROUNDROBIN               ? "roundrobin"
           : assignor == SC_ASSIGNOR_STICKY                 ? "sticky"
           : assignor == SC_ASSIGNOR_COOPERATIVE_STICKY     ? "cooperative-sticky"
                                                            : "range";
}

#define SC_MAX_ASSIGNORS 4

/* Parsed values; every field has the default of the key it is named after. */
struct sc_conf_values {
    char *bootstrap_servers;
    char *client_id;
    int acks;                  /* -1 all, 0, 1 */
    bool enable_idempotence;
    int linger_ms;
    int batch_size;
    int batch_num_messages;
    int compression;           /* enum kp_codec */
    int max_in_flight;
    int message_timeout_ms;
    int retries;
    int retry_backoff_ms;
    int request_timeout_ms;
    int socket_timeout_ms;
    int metadata_max_age_ms;
    int queue_max_messages;
    int64_t queue_max_bytes;
    int partitioner;           /* enum sc_partitioner */
    int message_max_bytes;
    char *group_id;
    char *group_instance_id;
    int auto_offset_reset;     /* enum sc_offset_reset */
    bool enable_auto_commit;
    bool enable_auto_offset_store; /* poll stores the offset after each message */
    int auto_commit_interval_ms;
    int session_timeout_ms;
    int heartbeat_interval_ms;
    int max_poll_interval_ms;
    int assignors[SC_MAX_ASSIGNORS]; /* enum sc_assignor, in preference order */
    int assignor_count;
    int fetch_wait_max_ms;
    int fetch_min_bytes;
    int fetch_max_bytes;
    int max_partition_fetch_bytes;
    int isolation_level;       /* 0 read_uncommitted, 1 read_committed */
    int64_t queued_max_bytes;  /* consumer: fetched, not yet polled */
    bool allow_auto_create_topics;
    int reconnect_backoff_ms;
    int reconnect_backoff_max_ms;
    char *debug;
    bool socket_keepalive;     /* SO_KEEPALIVE on every broker socket */
    int log_level;             /* syslog levels: lines above it are dropped */
    int unsupported_rdkafka;   /* 0 error, 1 warn */
    int statistics_interval_ms; /* 0: no statistics */
    char *transactional_id;    /* "": not transactional */
    int transaction_timeout_ms;
    /* security (tls.c, sasl.c): librdkafka's names and defaults */
    int security_protocol;     /* enum sc_security_protocol */
    char *ssl_ca_location;     /* "": OpenSSL's default paths */
    char *ssl_certificate_location;
    char *ssl_key_location;
    char *ssl_key_password;
    int ssl_endpoint_identification; /* 1 https (host name / IP checked), 0 none */
    bool enable_ssl_certificate_verification;
    int sasl_mechanism;        /* enum sc_sasl_mechanism */
    char *sasl_username;
    char *sasl_password;
};

enum sc_security_protocol {
    SC_SEC_PLAINTEXT = 0,
    SC_SEC_SSL = 1,
    SC_SEC_SASL_PLAINTEXT = 2,
    SC_SEC_SASL_SSL = 3,
};
#define SC_SEC_USES_TLS(p) ((p) == SC_SEC_SSL || (p) == SC_SEC_SASL_SSL)
#define SC_SEC_USES_SASL(p) ((p) == SC_SEC_SASL_PLAINTEXT || (p) == SC_SEC_SASL_SSL)

enum sc_sasl_mechanism {
    SC_SASL_PLAIN = 0,
    SC_SASL_SCRAM_SHA_256 = 256,
    SC_SASL_SCRAM_SHA_512 = 512,
};

#define SC_CONF_MAX_KEYS 64

struct samsa_conf {
    struct sc_conf_values v;
    char *str[SC_CONF_MAX_KEYS]; /* each key's value as set (or its default) */
    uint64_t set_mask;           /* bit i: key i was set by the user */
    samsa_delivery_cb *dr_cb;
    void *dr_opaque;
    samsa_error_cb *error_cb;
    void *error_opaque;
    samsa_rebalance_cb *rebalance_cb;
    void *rebalance_opaque;
    samsa_log_cb *log_cb;
    void *log_opaque;
    samsa_stats_cb *stats_cb;
    void *stats_opaque;
    samsa_partitioner_cb *partitioner_cb;
    void *partitioner_opaque;
    struct samsa_topic_conf *topic_confs; /* samsa_conf_set_topic_conf, newest first */
};

/* A topic's own settings (samsa_topic_conf_*), as librdkafka's
 * rd_kafka_topic_conf_t: what is not set is the handle's. */
struct samsa_topic_conf {
    struct samsa_topic_conf *next; /* in samsa_conf.topic_confs */
    char *topic;                   /* NULL until bound to a topic */
    int partitioner;               /* enum sc_partitioner; -1: the handle's */
    samsa_partitioner_cb *partitioner_cb;
    void *partitioner_opaque;
};

/* The settings of topic in conf, NULL when it has none of its own. */
const struct samsa_topic_conf *sc_conf_topic(const samsa_conf *conf, const char *topic);

/* Whether the user set `key` (by its name or an alias). */
bool sc_conf_is_set(const samsa_conf *conf, const char *key);

struct sc_kind_ops;
/* Cross-key checks and derived values for a handle of `kind` on a private
 * copy: the common ones (bootstrap.servers), then the kind's own. */
SC_MUST_CHECK int sc_conf_finalize_for(samsa_conf *conf, const struct sc_kind_ops *kind,
                                       char *errstr, size_t errstr_size);
/* The same by the kind's letter ('p'roducer, 'c'onsumer, 'a'dmin; handles.c). */
SC_MUST_CHECK int sc_conf_finalize(samsa_conf *conf, char kind, char *errstr, size_t errstr_size);

/* "host:port,host:port" into hosts/ports (each host kp_malloc'd); at most max. */
SC_MUST_CHECK int sc_parse_brokers(const char *list, char **hosts, int *ports, int max, int *count,
                                   char *errstr, size_t errstr_size);

/* ------------------------------------------------------------ partitioner */

/* Keyless placement state of one topic. */
struct sc_sticky {
    int32_t partition; /* -1: none chosen yet */
    size_t bytes;      /* produced to it since it was chosen */
};

/* xorshift64* state; never 0. */
uint32_t sc_rand(uint64_t *state);

/*
 * The partition for a record with no explicit partition, as `partitioner`
 * places it among partition_count partitions. key NULL is a null key.
 * Null keys (and keys the mode ignores) use the sticky state: one random
 * partition until batch_size bytes went to it, then another (KIP-794).
 */
int32_t sc_partition_choose(int partitioner, const void *key, size_t key_len,
                            int32_t partition_count, struct sc_sticky *sticky, size_t record_bytes,
                            size_t batch_size, uint64_t *rng);

/* ---------------------------------------------- producer queues (pure) */

/* One queued record. key, value and encoded headers follow in data[]. */
struct sc_msg {
    /* what cutting and encoding a batch read, together in the first 48
     * bytes (one cache line from the start of the allocation): a batch is
     * cut by walking next and size */
    struct sc_msg *next;
    size_t size;          /* what it counts against queue.buffering.max.kbytes */
    int32_t key_len;      /* -1: null */
    int32_t value_len;    /* -1: null */
    uint32_t header_count;
    uint32_t headers_len; /* bytes of packed headers after the value */
    int64_t timestamp;    /* record timestamp, wall ms */
    int64_t enq_ms;       /* monotonic time of samsa_produce */
    void *opaque;
    struct sc_ptopic *topic; /* the topic it was produced to (for reports) */
    int32_t partition;    /* -1 while the partitioner has not run */
    int32_t run;          /* on the report queue: this record and the run - 1 after
                           * it share err, their offsets follow from offset (-1
                           * stays -1); only the first of a run carries them, so
                           * a batch is reported without touching each record */
    int err;              /* delivery result */
    int32_t status;       /* SAMSA_MSG_*, with SC_MSG_LOG_APPEND_TIME when the run's
                           * timestamp (the first's) is the broker's: as err, only on
                           * the first of a run (in the padding before offset: no
                           * bigger record) */
    int64_t offset;
    uint8_t data[];       /* key, value, headers: (u32 nlen, name, i32 vlen, value)* */
};

#define SC_MSG_LOG_APPEND_TIME 0x10 /* in sc_msg.status */

struct sc_msgq {
    struct sc_msg *head, *tail;
    int32_t count;
    size_t bytes;
};

void sc_msgq_push(struct sc_msgq *q, struct sc_msg *m);
struct sc_msg *sc_msgq_pop(struct sc_msgq *q);
/* Appends all of src to dst and empties src. */
void sc_msgq_concat(struct sc_msgq *dst, struct sc_msgq *src);

/* A batch: records of one partition sent (and retried) together. */
struct sc_batch {
    struct sc_batch *next;
    struct sc_msgq msgs;
    int32_t base_seq;     /* -1 when not idempotent */
    int attempts;         /* sends so far */
    int64_t retry_at_ms;  /* not before this time */
    int64_t first_enq_ms; /* of its oldest record */
    bool sent;            /* was on the wire at least once */
    bool possibly;        /* an attempt ended with no answer: possibly written */
};

/* Batching rules; a copy of the configuration's. */
struct sc_batch_rules {
    int linger_ms;
    size_t batch_size;
    int32_t batch_num_messages;
    int max_in_flight;
    bool idempotent;
};

/* One partition's producer state. */
struct sc_ppart {
    struct sc_msgq queue;      /* records not yet in a batch */
    struct sc_batch *retry;    /* batches to send again, by base_seq */
    int inflight;              /* batches on the wire */
    int32_t next_seq;
    int32_t leader;            /* -1: unknown */
    int8_t txn;                /* transactional producer: SC_PPART_TXN_* */
};

/* Where a partition stands in the open transaction (producer/txn.c): its
 * records are sent only once the coordinator added it. */
#define SC_PPART_TXN_NONE 0
#define SC_PPART_TXN_ADDING 1
#define SC_PPART_TXN_ADDED 2

/*
 * Whether pp has a batch to send now, and if not, *wake_at (when not NULL)
 * is lowered to the time it will (linger or retry backoff). Retried batches
 * go first and only once nothing of the partition is in flight, so the
 * partition's order is kept; new records wait behind them.
 */
bool sc_ppart_ready(const struct sc_ppart *pp, const struct sc_batch_rules *rules, int64_t now,
                    bool flushing, int64_t *wake_at);

/* The next batch to send (sc_ppart_ready said so): a retried one, or new
 * records cut from the queue (at most batch_size bytes or
 * batch_num_messages records, at least one record), numbered from next_seq.
 * Counts it in flight. NULL on allocation failure. */
struct sc_batch *sc_ppart_next_batch(struct sc_ppart *pp, const struct sc_batch_rules *rules,
                                     int64_t now);

/* A batch came back: it is done (caller reports and frees it) ... */
void sc_ppart_batch_done(struct sc_ppart *pp);
/* ... or it goes back, in sequence order, to be sent after backoff_ms. */
void sc_ppart_batch_retry(struct sc_ppart *pp, struct sc_batch *b, int64_t now, int backoff_ms);

/* Renumbers the retried batches from sequence 0 (a new producer id). */
void sc_ppart_reset_sequence(struct sc_ppart *pp);

/* Marks every record of q possibly written (SAMSA_MSG_POSSIBLY_PERSISTED). */
void sc_msgq_mark_possibly(struct sc_msgq *q);

/* Moves records queued longer than timeout_ms, and retried batches whose
 * oldest record is, to *expired. Returns true when one of those batches had
 * been sent (an idempotent producer then needs a new producer id). */
bool sc_ppart_expire(struct sc_ppart *pp, int64_t now, int timeout_ms, struct sc_msgq *expired);

void sc_batch_free(struct sc_batch *b); /* frees the batch, not its records */

/* Sequence after seq + n, wrapping at INT32_MAX as Kafka does. */
int32_t sc_seq_add(int32_t seq, int32_t n);

/* ------------------------------------------------- group protocol (pure) */

struct sc_tp {
    char *topic;
    int32_t partition;
};

/* One member's view, as the leader sees it. */
struct sc_member {
    char *member_id;
    char *instance_id; /* NULL when none */
    char **topics;     /* its Subscription, sorted */
    int topic_count;
    struct sc_tp *assigned; /* output of an assignor */
    int assigned_count;
    struct sc_tp *owned;    /* sticky: what its UserData says it had; cooperative-sticky:
                             * what it owns now (OwnedPartitions, else UserData) */
    int owned_count;
    int32_t owned_generation; /* of that assignment; -1 when not said */
};

/* A topic's partition count, for the assignors. */
struct sc_topic_count {
    const char *topic;
    int32_t partitions;
};

/* Encode a Subscription v1 (Topics sorted, empty UserData, OwnedPartitions)
 * into w; Decode one of any version >= 0 (fields we do not use skipped).
 * Decoded topics are kp_malloc'd. */
void sc_subscription_encode(struct kp_writer *w, char *const *topics, int topic_count,
                            const struct sc_tp *owned, int owned_count);
SC_MUST_CHECK int sc_subscription_decode(const uint8_t *p, size_t len, char ***topics,
                                         int *topic_count);
/* The same with UserData (ud: a copy, or NULL with 0 for none). */
void sc_subscription_encode_ud(struct kp_writer *w, char *const *topics, int topic_count,
                               const struct sc_tp *owned, int owned_count, const uint8_t *ud,
                               size_t ud_len);
/* A Subscription's UserData, borrowed from p (null and empty: len 0). */
SC_MUST_CHECK int sc_subscription_user_data(const uint8_t *p, size_t len, struct kp_bytes *ud);

/*
 * cooperative-sticky's Subscription, v3 as librdkafka writes it: Topics,
 * UserData (Java's CooperativeStickyAssignor layout: INT32 generation),
 * OwnedPartitions (owned[], grouped by topic in the order given: callers
 * sort by topic then partition), GenerationId, RackId null.
 */
void sc_subscription_encode_v3(struct kp_writer *w, char *const *topics, int topic_count,
                               const struct sc_tp *owned, int owned_count, int32_t generation);
/*
 * What a member owns, as a cooperative leader reads it from the member's
 * Subscription: OwnedPartitions (v1+) and GenerationId (v2+) when present,
 * else the UserData, in either layout (Java's cooperative INT32 generation,
 * or the eager sticky layout with its partitions). *tps are kp_malloc'd;
 * *generation is -1 when nothing says it.
 */
SC_MUST_CHECK int sc_subscription_ownership(const uint8_t *p, size_t len, struct sc_tp **tps,
                                            int *count, int32_t *generation);

/*
 * The sticky assignor's UserData: Kafka 2.0's layout (previous_assignment:
 * [topic STRING, partitions [INT32]], tps grouped by topic in the order
 * given) followed by the generation INT32 of Kafka 2.3's second layout
 * (which 2.0's reader leaves unread and kafka-python's needs). Decode takes
 * either (generation -1 without one); tps are kp_malloc'd.
 */
void sc_sticky_user_data_encode(struct kp_writer *w, const struct sc_tp *tps, int count,
                                int32_t generation);
SC_MUST_CHECK int sc_sticky_user_data_decode(const uint8_t *p, size_t len, struct sc_tp **tps,
                                             int *count, int32_t *generation);

void sc_assignment_encode(struct kp_writer *w, const struct sc_tp *tps, int count);
SC_MUST_CHECK int sc_assignment_decode(const uint8_t *p, size_t len, struct sc_tp **tps,
                                       int *count);

/* Runs assignor on members[0..n) (sorted inside by member id, as Java
 * does), filling each member's `assigned`. counts[] gives every subscribed
 * topic's partition count (a topic missing from it gets nothing).
 * cooperative-sticky leaves out of a member's `assigned` every partition
 * another member owns now: that one gives it up first, and a later
 * generation hands it over. */
SC_MUST_CHECK int sc_assign(int assignor, struct sc_member *members, int n,
                            const struct sc_topic_count *counts, int count_n);

void sc_tps_free(struct sc_tp *tps, int count);
void sc_member_clear(struct sc_member *m);

/* ------------------------------------------------------------ the client */

struct sc_client;
struct sc_conn;

/* A response handler. err is 0 with body decoded (it and everything it
 * points to live until the handler returns), or SAMSA_ERR_TRANSPORT /
 * _TIMED_OUT / _BAD_RESPONSE with body NULL. Runs on the I/O thread with
 * the client's lock held. */
typedef void sc_resp_fn(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx);

struct sc_req {
    struct sc_req *next;
    int32_t corr;
    int16_t api_key;
    int16_t api_version;
    int64_t deadline;
    sc_resp_fn *fn;
    void *ctx;
};

enum sc_conn_state {
    SC_CONN_DOWN = 0,
    SC_CONN_CONNECTING,
    SC_CONN_HANDSHAKE, /* ApiVersions sent */
    SC_CONN_UP,
};

#define SC_API_KEYS 64

/* A connection's SASL exchange (sasl.c): SCRAM's nonce, the
 * client-first-message-bare and the signature the broker must prove. */
struct sc_sasl_state {
    int step;                 /* 0 none; 1 client-first sent; 2 the last token sent */
    char nonce[48];
    char first_bare[600];
    uint8_t server_sig[64];
};

struct sc_conn {
    struct sc_conn *next;
    int32_t node_id; /* bootstrap servers have ids <= -2 */
    char *host;
    int port;
    int fd;
    int state;
    int64_t next_attempt_ms;
    int backoff_ms;
    bool wanted;               /* someone needs it: connect */
    struct kp_writer out;      /* bytes to send; out_off sent already */
    size_t out_off;
    uint8_t *in;
    size_t in_len, in_cap;
    struct sc_req *reqs, *reqs_tail; /* in flight, in send order */
    int req_count;
    int produce_inflight;
    bool fetch_inflight;
    uint32_t fetch_rotate;     /* where the next Fetch's partition list starts */
    bool coordinator;          /* the group coordinator's own connection */
    int16_t api_max[SC_API_KEYS]; /* -1: not supported */
    int16_t api_min[SC_API_KEYS];
    /* statistics (stats.c), written on the I/O thread */
    uint64_t tx, rx;           /* requests sent, responses read */
    uint64_t tx_bytes, rx_bytes;
    uint64_t connects, disconnects;
    /* security (tls.c, sasl.c) */
    struct ssl_st *ssl;        /* security.protocol ssl / sasl_ssl; else NULL */
    short tls_want;            /* handshaking: POLLIN or POLLOUT; 0 when done */
    bool tls_fatal;            /* the last TLS error was the protocol's, not the socket's */
    char tls_err[256];         /* why the last TLS read or write failed */
    struct sc_sasl_state sasl; /* authenticating (sasl.c); wiped when it closes */
};

/* Producer topic with its partitions. */
struct sc_ptopic {
    struct sc_ptopic *next;
    char *name;
    int32_t partition_count;   /* 0: metadata not known yet */
    struct sc_ppart *parts;
    struct sc_msgq unassigned; /* records waiting for the partition count */
    struct sc_sticky sticky;
    int partitioner;           /* enum sc_partitioner: the topic's, else the handle's */
    samsa_partitioner_cb *partitioner_cb; /* the topic's, else the handle's; NULL: none */
    void *partitioner_opaque;
    int err;                   /* last metadata error */
    int64_t md_time;           /* last metadata answer (monotonic), 0: never */
};

/* Consumer partition state. */
enum sc_cpart_state {
    SC_CP_NEED_OFFSET = 0, /* reset pending: ListOffsets or OffsetFetch */
    SC_CP_QUERYING,
    SC_CP_ACTIVE,
    SC_CP_STOPPED,         /* offset out of range with auto.offset.reset=error */
};

struct sc_cpart {
    char *topic;
    int32_t partition;
    int state;
    int64_t position;  /* next offset to fetch */
    int64_t reset;     /* when NEED_OFFSET: SAMSA_OFFSET_*, or a timestamp >= 0 */
    bool reset_is_ts;
    int64_t hwm;       /* -1 until a fetch answered */
    int64_t lso;
    int64_t log_start;
    int32_t leader;
    int epoch;         /* bumps on seek: stale fetched messages are dropped */
    bool fetching;
    bool paused;       /* samsa_consumer_pause: not fetched until resumed */
    bool revoking;     /* cooperative rebalance: being given up, not fetched */
    int queued;        /* messages of it waiting in the consumer queue */
    int64_t app_offset;/* offset after the last message handed out; -1: none */
    int64_t stored;    /* the offset a commit of the assignment sends (librdkafka's
                        * stored offset); -1: none */
    int64_t committed; /* last committed by us, -1 */
    int64_t retry_at;
    bool missing_reported; /* its topic or partition not in the cluster: told
                            * the error callback (again once it was seen) */
};

/* A consumed message as queued (the public struct first). */
struct sc_cmsg {
    samsa_message pub;
    struct sc_cmsg *next;
    struct sc_cpart *part;
    int epoch;
    size_t size;
};

/* A request from a user thread to the I/O thread, with its result. */
struct sc_op_ops;

struct sc_op {
    struct sc_op *next;
    const struct sc_op_ops *ops; /* what its kind does (serve, free_arg) */
    int kind;
    int err;
    int stage;      /* kind-specific progress */
    bool done;
    bool abandoned; /* the caller timed out: the I/O thread frees it */
    bool sent;
    int64_t deadline;
    int64_t retry_at;
    char errstr[512];
    void *arg;      /* kind-specific, owned by the op */
};

struct sc_err_ev {
    struct sc_err_ev *next;
    int err;
    bool rebalance;    /* a rebalance notice, not an error */
    bool stats;        /* a statistics document (reason), not an error */
    bool assigned;
    bool ack;          /* count it in rebalance_acks once its callback ran */
    struct samsa_partition *parts;
    size_t part_count;
    char reason[];
};

struct sc_group; /* consumer/group.h */

struct sc_broker_md {
    int32_t id;
    char *host;
    int32_t port;
};

struct sc_client {
    const struct sc_kind_ops *kind_ops; /* what the handle adds to the core */
    char kind; /* its tag, 'p', 'c' or 'a': log lines and tests */
    bool detached; /* no I/O thread, no sockets: driven by sc_client_run_once
                    * and sc_conn_feed (the fuzz harness) */
    samsa_conf *conf;
    const struct sc_conf_values *v;

    pthread_t thread;
    bool thread_started;
    int wake_fd;
    pthread_mutex_t lock;
    pthread_cond_t ev_cond;   /* events queued, ops done */
    bool terminate;
    bool closing;             /* the handle's _close is waiting for the calls
                               * of other threads to leave: waits give up */

    /* I/O state (lock held) */
    struct ssl_ctx_st *ssl_ctx; /* TLS (tls.c); NULL for plaintext and sasl_plaintext */
    /* the SASL exchange after ApiVersions (sasl.c's sc_sasl_start, set by
     * client.c for sasl_plaintext and sasl_ssl; io.c calls it through here) */
    void (*authenticate)(struct sc_client *c, struct sc_conn *conn);
    int auth_err;               /* a TLS or SASL failure that ended the handle's work:
                                 * calls fail with it, nothing reconnects (sc_auth_failed) */
    char auth_reason[512];
    struct sc_conn *conns;
    int32_t next_corr;
    struct kp_arena arena;
    uint64_t rng;
    int32_t controller_id;
    struct sc_broker_md *brokers;
    int broker_count;
    bool md_wanted;        /* a metadata refresh is wanted now */
    int64_t md_next_ms;    /* next periodic refresh */
    bool md_inflight;
    int64_t md_last_ms;
    int md_gap_ms;         /* between wanted refreshes: retry.backoff.ms, doubled
                            * while they follow one another (metadata_serve) */
    int all_down_reported;

    /* statistics (stats.c; lock held) */
    int64_t stats_next_ms;           /* next document due (monotonic); 0: not started */
    int64_t created_ms;
    struct sc_err_ev *stats_pending; /* the document queued and not served yet */
    uint64_t tx, rx, tx_bytes, rx_bytes; /* of every connection, closed ones too */
    uint64_t txmsgs, txmsg_bytes;    /* records delivered (reports served) */
    uint64_t rxmsgs, rxmsg_bytes;    /* messages handed out by samsa_consumer_poll */

    /* ops (user -> I/O) */
    struct sc_op *ops, *ops_tail;

    /* events (I/O -> user) */
    struct sc_msgq dr;               /* delivery reports ready */
    uint64_t dr_failed;              /* failed delivery reports served so far */
    int64_t wall_minus_mono_ms;      /* sc_wall_ms() - sc_now_ms(), as of the I/O
                                      * thread's last turn: samsa_produce stamps
                                      * records from the one clock it reads */
    struct sc_err_ev *errs, *errs_tail;

    /* producer */
    struct sc_ptopic *ptopics;
    size_t outq_msgs;                /* produced, report not served */
    size_t outq_bytes;
    int flushing;
    int64_t pid;
    int16_t pid_epoch;
    bool pid_inflight;
    bool pid_reset;                  /* drain, then ask for a new id */
    const char *idemp_state;         /* the id's state as the statistics name it,
                                      * and since when (send.c, each turn) */
    int64_t idemp_state_ms;
    uint64_t pid_assigned;           /* producer ids received */
    bool purge_inflight;             /* samsa_producer_purge_flags waits for the
                                      * I/O thread to fail what is in flight */
    bool fatal;
    char fatal_reason[256];
    struct sc_txn *txn;              /* transactional.id set (producer/txn.c); else NULL */
    struct sc_batch_rules rules;
    /* The I/O thread's buffer (used without the lock, as the batches it
     * encodes) for a compressed batch's records before they are
     * compressed, lent to its kp_batch_builder and kept from one batch to
     * the next. Uncompressed batches are built in the connection's buffer. */
    struct kp_writer enc_records;

    /* consumer */
    struct sc_cpart **cparts;
    int cpart_count;
    struct sc_cmsg *cq, *cq_tail;
    size_t cq_bytes;
    struct sc_group *group;
    bool subscribed;
    uint64_t rebalance_acks;         /* rebalance events with `ack` served */
    bool polled_at_end;
};

/*
 * What a public handle's calls pass through, so that a call racing the
 * handle's _close, or made after it, is refused (SAMSA_ERR_DESTROYED)
 * instead of touching a freed client:
 *   - every call but _close and _destroy enters (sc_gate_enter) before it
 *     reads `c` and leaves (sc_gate_leave) when it no longer uses it;
 *   - _close marks the gate closed (new calls are refused), sets
 *     c->closing so that calls waiting inside give up, waits until none is
 *     inside, then tears the client down. While it does, the closing
 *     thread alone may call in (a callback run by _close may commit or read
 *     the outq), then the gate shuts for every thread;
 *   - the handle's memory stays until _destroy, the one call that must not
 *     race any other.
 * calls and closed are seq_cst atomics: a caller increments calls then
 * reads closed, _close sets closed then reads calls, so one of the two
 * sees the other.
 */
struct sc_gate {
    _Atomic int calls;          /* calls inside the library now */
    _Atomic bool closed;        /* _close began */
    _Atomic bool closer_may_call; /* the closing thread's callbacks may call */
    pthread_t closer;           /* written once, by the winner of `closed`,
                                 * before closer_may_call is set */
};

/* The public handles: a client core each, behind its gate. */
struct samsa_producer {
    struct sc_client *c;
    struct sc_gate gate;
    size_t undelivered; /* what _close counted (a second _close returns 0) */
};
struct samsa_consumer {
    struct sc_client *c;
    struct sc_gate gate;
};
struct samsa_admin {
    struct sc_client *c;
    struct sc_gate gate;
};

/* A consumer's group for the transactional producer's send_offsets
 * (consumer.c makes them, txn_api.c reads them). */
struct samsa_consumer_group_metadata {
    char *group_id;
    int32_t generation; /* -1: not a member */
    char *member_id;    /* "" when not a member */
};

/* Whether a call may go on: false (and nothing to leave) once the handle
 * is closing or closed, except on the closing thread inside _close. */
SC_MUST_CHECK bool sc_gate_enter(struct sc_gate *g);
void sc_gate_leave(struct sc_gate *g);
/* Begins _close: true for the one call that closes (it then owns the
 * teardown); false when the handle was closed already. On true, calls of
 * other threads have left and new ones are refused; c's waits are woken
 * for that, then c->closing is cleared again for the teardown. */
SC_MUST_CHECK bool sc_gate_close(struct sc_gate *g, struct sc_client *c);
/* Ends _close's teardown: from now on every call is refused. */
void sc_gate_shut(struct sc_gate *g);

/* Creates the client core of a handle of kind (copies conf), starts the
 * I/O thread. */
SC_MUST_CHECK int sc_client_create(const struct sc_kind_ops *kind, const samsa_conf *conf,
                                   struct sc_client **out, char *errstr, size_t errstr_size);
/* The same by the kind's letter ('p', 'c', 'a'; handles.c), for the unit
 * tests and the fuzz harness. */
SC_MUST_CHECK int sc_client_new(char kind, const samsa_conf *conf, struct sc_client **out,
                                char *errstr, size_t errstr_size);
/* Stops the I/O thread and frees everything. */
void sc_client_destroy(struct sc_client *c);

/*
 * A client without its I/O thread and without sockets, for a harness that
 * plays the network: connecting puts a connection straight into the
 * handshake with ApiVersions queued; requests accumulate in conn->out (the
 * harness takes them from there); responses come from sc_conn_feed. The
 * random generator has a fixed seed. Everything else is the real code.
 */
SC_MUST_CHECK int sc_client_create_detached(const struct sc_kind_ops *kind,
                                            const samsa_conf *conf, struct sc_client **out,
                                            char *errstr, size_t errstr_size);
/* The same by the kind's letter (handles.c). */
SC_MUST_CHECK int sc_client_new_detached(char kind, const samsa_conf *conf,
                                         struct sc_client **out, char *errstr,
                                         size_t errstr_size);
/* One turn of the I/O loop without poll(2): timers, connections, metadata,
 * ops and the handle's own work at time `now` (lock held). Returns when it
 * next wants to run. */
int64_t sc_client_run_once(struct sc_client *c, int64_t now);
/* Bytes from the broker on conn, as recv(2) would have given them: whole
 * frames are handled at once, a partial one is kept (lock held). */
void sc_conn_feed(struct sc_client *c, struct sc_conn *conn, const uint8_t *p, size_t n);
/* The connection is lost (lock held). */
void sc_conn_fail(struct sc_client *c, struct sc_conn *conn, const char *why);
void sc_wake(struct sc_client *c);
/* Waits on ev_cond until deadline (INT64_MAX: a second at most), lock held
 * (a user thread). */
void sc_wait_cond(struct sc_client *c, int64_t deadline);

/* Queues ev (an error, a rebalance notice, a statistics document) for the
 * user's next poll-like call and wakes it (lock held). */
void sc_post_event(struct sc_client *c, struct sc_err_ev *ev);
/* Queues an error event for the user (lock held). */
void sc_post_error(struct sc_client *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Runs queued error/rebalance callbacks (lock held on entry and exit; it is
 * released while a callback runs). Returns how many ran. */
int sc_serve_errors(struct sc_client *c);

/* Queues a rebalance notice of parts[0..n) (copied) for the rebalance
 * callback (lock held). With `ack`, c->rebalance_acks counts it once the
 * callback ran. Returns false when it could not be queued. */
bool sc_post_rebalance(struct sc_client *c, bool assigned, const struct samsa_partition *parts,
                       size_t n, bool ack);

/* Connections (io.c; lock held). */
struct sc_conn *sc_conn_get(struct sc_client *c, int32_t node_id); /* wanted, maybe not up */
/* The group coordinator's own connection to node_id (wanted, maybe not up):
 * requests parked by the coordinator (JoinGroup, SyncGroup) then never
 * hold up fetches, nor a long-poll Fetch the heartbeats, as the Java
 * client's separate coordinator connection. NULL when the node is unknown. */
struct sc_conn *sc_conn_get_coordinator(struct sc_client *c, int32_t node_id);
struct sc_conn *sc_conn_any_up(struct sc_client *c);               /* NULL: none yet */
/* Highest version both sides speak in [lo, hi], or -1. */
int16_t sc_conn_version(const struct sc_conn *conn, int16_t api, int16_t lo, int16_t hi);
/* Encodes and queues a request; fn (may be NULL for acks=0 produce:
 * then no response is read) is called once. Returns 0 or an error (fn is
 * then not called). */
SC_MUST_CHECK int sc_conn_send(struct sc_client *c, struct sc_conn *conn, int16_t api,
                               int16_t version, const void *body, sc_resp_fn *fn, void *ctx);
/* A request written by its sender straight into the connection's buffer
 * (the producer's, whose batches are built in place): sc_conn_out gives
 * the buffer to write one frame at its end, correlation id c->next_corr
 * (NULL when the connection is not up); sc_conn_send_written then queues
 * the frame that starts at `start` as sc_conn_send would (on failure the
 * caller drops it: out->len = start). */
struct kp_writer *sc_conn_out(struct sc_conn *conn);
SC_MUST_CHECK int sc_conn_send_written(struct sc_client *c, struct sc_conn *conn, int16_t api,
                                       int16_t version, size_t start, sc_resp_fn *fn, void *ctx);
/* Bytes queued on conn and not written to its socket yet. */
size_t sc_conn_unsent(const struct sc_conn *conn);
bool sc_conn_is_up(const struct sc_conn *conn);
/* conn is down after an attempt that failed since its last success: the
 * node Metadata named died or moved, so a caller holding that node (the
 * controller, a leader, a coordinator) should ask Metadata again rather
 * than wait for it. False for NULL and for a connection still being made. */
bool sc_conn_failed(const struct sc_client *c, const struct sc_conn *conn);

/*
 * The connection to node_id, a partition's leader that Metadata named, when
 * it is up; NULL while it is not. A leader that cannot be reached (its
 * connection failed since its last success, or Metadata does not list it)
 * asks Metadata again, and again while it stays so (metadata_serve spaces
 * the refreshes): the controller elects another within its ZooKeeper
 * session, and nothing else would tell us. So does Kafka 2.0's Java client
 * (NetworkClient.handleDisconnections: a metadata update at every
 * disconnect, a refused connection included), and librdkafka's fast leader
 * query (rdkafka_metadata.c) refreshes while a leader is unavailable.
 */
struct sc_conn *sc_conn_leader(struct sc_client *c, int32_t node_id);

/* The brokers the handle knows (io.c). Asks for a Metadata refresh soon. */
void sc_metadata_want(struct sc_client *c);
const struct sc_broker_md *sc_broker_find(const struct sc_client *c, int32_t id);

/* The pieces of the loop (client.c) in io.c, events.c and metadata.c. */
struct sc_conn *sc_conn_new(struct sc_client *c, int32_t node_id, const char *host, int port);
void sc_conn_free(struct sc_conn *conn);
/* Fails every request in flight on conn with err (their callbacks run). */
void sc_conn_fail_requests(struct sc_client *c, struct sc_conn *conn, int err);
void sc_conn_close(struct sc_client *c, struct sc_conn *conn, int err, const char *why);
/* Writes what conn has queued, as far as the socket takes it. */
void sc_conn_write(struct sc_client *c, struct sc_conn *conn);
/* poll(2) reported revents on conn: a connect completed or failed, room to
 * write, bytes to read. */
void sc_conn_ready(struct sc_client *c, struct sc_conn *conn, short revents);
/* Which poll(2) events conn waits for. */
short sc_conn_events(const struct sc_conn *conn);
/* A TLS or SASL failure the configuration will meet again (a certificate
 * that does not verify, a refused password): posted to the error callback,
 * conn closed, and the handle's calls failed with err from now on instead of
 * waiting on reconnects (Kafka 2.0's clients raise an AuthenticationException
 * to the caller alike). */
void sc_auth_failed(struct sc_client *c, struct sc_conn *conn, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The connection's ApiVersions (and SASL) done: it takes requests (io.c). */
void sc_conn_up(struct sc_client *c, struct sc_conn *conn);
/* sc_conn_send before the connection is up: the SASL exchange (sasl.c). */
int sc_conn_send_auth(struct sc_client *c, struct sc_conn *conn, int16_t api, int16_t version,
                      const void *body, sc_resp_fn *fn, void *ctx);
/* SASL (sasl.c): SaslHandshake v1 then SaslAuthenticate v0 with
 * sasl.mechanisms; sc_conn_up when the broker accepted us. */
void sc_sasl_start(struct sc_client *c, struct sc_conn *conn);

/* TLS (tls.c): the handle's context from the ssl.* keys (at _new: a file
 * that cannot be read is the _new's error), a connection's SSL object,
 * its handshake step (enum sc_tls_step; conn->tls_err says why it failed),
 * whether OpenSSL holds bytes poll(2) will not announce, and reads and
 * writes as recv/send (-1 with errno EAGAIN or EPROTO, conn->tls_err and
 * conn->tls_fatal saying why). */
enum sc_tls_step {
    SC_TLS_DONE = 0,
    SC_TLS_AGAIN = 1,         /* conn->tls_want says which way */
    SC_TLS_LOST = 2,          /* the connection went away: tried again later */
    SC_TLS_REFUSED = 3,       /* verification or the protocol failed: sc_auth_failed */
};
int sc_tls_ctx_new(struct sc_client *c, char *errstr, size_t errstr_size);
void sc_tls_ctx_free(struct sc_client *c);
int sc_tls_start(struct sc_client *c, struct sc_conn *conn);
void sc_tls_close(struct sc_conn *conn);
int sc_tls_handshake(struct sc_client *c, struct sc_conn *conn);
bool sc_tls_pending(const struct sc_conn *conn);
ssize_t sc_tls_write(struct sc_conn *conn, const uint8_t *buf, size_t len);
ssize_t sc_tls_read(struct sc_conn *conn, uint8_t *buf, size_t len);

/* Connects, reconnects and times out connections and requests; returns
 * when it next wants to run. */
int64_t sc_conn_timeouts(struct sc_client *c, int64_t now);
/* Sends the Metadata refresh when it is due; returns when it next wants
 * to run. */
int64_t sc_metadata_serve(struct sc_client *c, int64_t now);
void sc_err_ev_free(struct sc_err_ev *ev);

/*
 * What a kind of handle (producer, consumer, admin) adds to the core. The
 * core reaches a handle's own state only through its table (filled by
 * producer.c, consumer.c and admin.c), never by asking which kind it is.
 * Every hook but check_conf runs on the I/O loop with the lock held; a NULL
 * hook is one the kind does without.
 */
/* What a kind adds to the statistics document (stats.c writes it), with
 * librdkafka's names (STATISTICS.md): `cgrp` for a consumer with group.id,
 * `eos` for an idempotent producer. */
struct sc_kind_stats {
    bool cgrp;
    const char *state;            /* the coordinator: init, query-coord, wait-broker-transport, up */
    const char *join_state;       /* init, wait-join, wait-metadata, wait-sync, steady,
                                   * wait-unassign-call */
    const char *samsa_state;      /* the group's own state (consumer/group.h) */
    int64_t stateage_ms;          /* since the last change of the group's state */
    int64_t rebalance_age_ms;     /* since the last assignment or revocation; -1: none */
    int64_t rebalance_cnt;        /* assignments and revocations */
    const char *rebalance_reason; /* the last rejoin's reason, "" when none */
    int32_t generation;
    int assignment_size;
    bool eos;
    const char *idemp_state;      /* librdkafka's names: RequestPID, WaitPID, Assigned,
                                   * DrainReset, FatalError */
    int64_t idemp_stateage_ms;
    int64_t producer_id;          /* -1: none */
    int producer_epoch;           /* -1: none */
    uint64_t epoch_cnt;           /* producer ids assigned since the start */
    const char *txn_state;        /* librdkafka's names (rdkafka_txnmgr.h); NULL: Init */
    bool txn_may_enq;             /* samsa_produce may queue records now */
};

#define SC_ALL_TOPICS (-1)

struct sc_kind_ops {
    char tag; /* 'p', 'c', 'a': the handle's letter in log lines */
    const char *type; /* "producer", "consumer", "admin": the statistics' type */
    /* The kind's cross-key checks and derived values at _new, after the
     * common ones (sc_conf_finalize). */
    int (*check_conf)(samsa_conf *conf, char *errstr, size_t errstr_size);
    /* The topics the Metadata refresh asks for, appended to names (at most
     * max); SC_ALL_TOPICS: every topic of the cluster (a regular expression
     * in a subscription). NULL: the handle keeps no metadata of its own
     * (admin: each op asks for what it needs). */
    int (*want_topics)(struct sc_client *c, const char **names, int max);
    /* The refresh may create the topics it asks for whatever
     * allow.auto.create.topics says (the producer, as Java's). */
    bool auto_create_topics;
    /* Metadata arrived: leaders and partition counts. */
    void (*on_metadata)(struct sc_client *c, const struct kp_MetadataResponse *md);
    /* The handle's own work in a turn of the loop; returns when it next
     * wants to run (INT64_MAX: only on events). */
    int64_t (*serve)(struct sc_client *c, int64_t now);
    /* Teardown of the handle's state (thread stopped). */
    void (*free_state)(struct sc_client *c);
    /* The kind's blocks of the statistics document; NULL: none. */
    void (*stats)(const struct sc_client *c, int64_t now, struct sc_kind_stats *out);
};

/* The three kinds (producer.c, consumer.c, admin.c). */
extern const struct sc_kind_ops sc_producer_kind;
extern const struct sc_kind_ops sc_consumer_kind;
extern const struct sc_kind_ops sc_admin_kind;

int64_t sc_ops_serve(struct sc_client *c, int64_t now);

/* Ops (ops.c). Queues op and waits up to timeout_ms; returns op->err and
 * frees the op unless it was abandoned (SAMSA_ERR_TIMED_OUT). */
enum sc_op_kind {
    SC_OP_METADATA = 0,
    SC_OP_CREATE_TOPIC,
    SC_OP_DELETE_TOPIC,
    SC_OP_LIST_OFFSETS,
    SC_OP_COMMIT,
    SC_OP_COMMITTED,
    SC_OP_LEAVE_GROUP,
    SC_OP_DESCRIBE_CONFIGS, /* admin_ops.c, all with a struct sc_admin_arg */
    SC_OP_ALTER_CONFIGS,
    SC_OP_CREATE_PARTITIONS,
    SC_OP_DELETE_RECORDS,
    SC_OP_LIST_GROUPS,
    SC_OP_DESCRIBE_GROUP,
    SC_OP_GROUP_OFFSETS,
    SC_OP_ALTER_GROUP_OFFSETS,
    SC_OP_DELETE_GROUP,
    SC_OP_TXN,              /* producer/txn.c: the transactional producer's calls */
    SC_OP_KIND_COUNT,
};
/* On SAMSA_ERR_TIMED_OUT the op may have been abandoned to the I/O thread:
 * then *opp is set to NULL. Otherwise the caller reads its results and frees
 * it with sc_op_free. */
SC_MUST_CHECK int sc_op_run(struct sc_client *c, struct sc_op **opp, int timeout_ms, char *errstr,
                            size_t errstr_size);
/*
 * What an op of one kind does on the I/O loop, in a const table of the
 * module that owns the kind: the op runtime (ops.c) serves and frees every
 * op through it and names none.
 */
struct sc_op_ops {
    /* Carries the op on (lock held); returns when it next wants to run.
     * It may finish the op (sc_op_finish), which may free it. */
    int64_t (*serve)(struct sc_client *c, struct sc_op *op, int64_t now);
    /* Frees the op's argument (NULL: it has none to free). */
    void (*free_arg)(void *arg);
};
/* An op of kind on arg (owned by the op from here; NULL: out of memory, arg
 * untouched). */
struct sc_op *sc_op_create(const struct sc_op_ops *ops, int kind, void *arg);
/* The same with the table of kind looked up (handles.c), for the unit tests
 * and the fuzz harness. */
struct sc_op *sc_op_new(int kind, void *arg);
/* The kinds' tables: metadata, create/delete topic, ListOffsets (ops.c);
 * commit and committed offsets (consumer/offsets.c); LeaveGroup
 * (consumer/heartbeat.c); the admin calls on configs, partitions and
 * records, groups (admin/admin_configs.c, admin_records.c, admin_groups.c). */
extern const struct sc_op_ops sc_metadata_op;
extern const struct sc_op_ops sc_topic_op;
extern const struct sc_op_ops sc_list_offsets_op;
extern const struct sc_op_ops sc_commit_op;
extern const struct sc_op_ops sc_committed_op;
extern const struct sc_op_ops sc_leave_op;
extern const struct sc_op_ops sc_configs_op;
extern const struct sc_op_ops sc_create_partitions_op;
extern const struct sc_op_ops sc_delete_records_op;
extern const struct sc_op_ops sc_list_groups_op;
extern const struct sc_op_ops sc_group_op;
extern const struct sc_op_ops sc_txn_op;
void sc_op_commit_arg_free(void *arg);
void sc_op_finish(struct sc_client *c, struct sc_op *op, int err);
void sc_op_free(struct sc_op *op);
/* A retriable failure: try again after retry.backoff.ms, or finish with err
 * once the deadline has passed. Returns when the op wants to run. */
int64_t sc_op_retry(struct sc_client *c, struct sc_op *op, int err, int64_t now);
/* The node discovery named (the controller, a leader, a coordinator) could
 * not be reached since: true after sending op back to discovery (stage 0;
 * *wake: when to serve it again). A node killed is not waited for until the
 * deadline; the one that took over is asked for. */
bool sc_op_node_failed(struct sc_client *c, struct sc_op *op, int32_t id, int64_t now,
                       int64_t *wake);
/* Metadata request of names[0..n) (NULL: all topics) without creating any. */
SC_MUST_CHECK int sc_send_metadata(struct sc_client *c, struct sc_conn *conn, char *const *names,
                                   int n, sc_resp_fn *fn, void *ctx);
/* FindCoordinator of key (key_type 0 a group, 1 a transactional id) on
 * conn: SAMSA_ERR_UNSUPPORTED when conn lacks a version for that type. */
SC_MUST_CHECK int sc_send_find_coordinator(struct sc_client *c, struct sc_conn *conn,
                                           const char *key, int8_t key_type, sc_resp_fn *fn,
                                           void *ctx);
/* Remembers the brokers (and controller) of a Metadata answer (io.c); false
 * when out of memory (the old list kept). A broker without a host or a
 * valid port is left out. */
bool sc_record_brokers(struct sc_client *c, const struct kp_MetadataResponse *md);
/* Adds broker id at host:port to the known brokers unless it is known. */
void sc_broker_learn(struct sc_client *c, int32_t id, struct kp_str host, int32_t port);

/* Admin ops (admin/admin_ops.c and the files it names). */
struct sc_admin_arg {
    char *name;          /* topic, group or resource name */
    int8_t resource_type;
    int32_t total;       /* CreatePartitions: the new partition count */
    char **cfg_names;    /* alter configs: the changes (value NULL: back to default) */
    char **cfg_values;
    int cfg_count;
    char **cur_names;    /* alter configs without API 44: the dynamic configs now */
    char **cur_values;
    int cur_count;
    struct samsa_partition *parts; /* topics owned (kp_malloc) */
    size_t part_count;
    int32_t *leaders;    /* delete records: each part's leader */
    size_t next;         /* the part (delete records) or broker (list groups) being done */
    int32_t node;        /* the coordinator or controller asked */
    int32_t *nodes;      /* list groups: every broker */
    int node_count;
    int first_err;
    /* results, taken by the caller */
    samsa_configs *configs;
    samsa_group_list *groups;
    size_t groups_cap;
    samsa_group_description *desc;
    struct samsa_partition *out;
    size_t out_count;
};
/* Frees a struct sc_admin_arg (NULL: nothing). */
void sc_admin_arg_free(void *arg);

/* Op arguments and results (owned by their op). */
struct sc_md_arg {
    char **topics; /* NULL: all topics */
    int count;
    samsa_metadata *md; /* result */
};

struct sc_topic_arg {
    char *name;
    int32_t partitions;
    int16_t replication_factor;
    char **cfg_names;
    char **cfg_values;
    int cfg_count;
};

struct sc_lo_arg {
    char *topic;
    int32_t partition;
    int64_t timestamp; /* -2 earliest, -1 latest, or a time */
    bool watermarks;   /* both -2 and -1: low and high */
    int32_t leader;
    int64_t offset;    /* result for `timestamp` */
    int64_t low, high; /* results for watermarks */
};

samsa_metadata *sc_metadata_copy(const struct kp_MetadataResponse *r);

static inline int64_t sc_min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Statistics (stats.c): the JSON document of c into a kp_malloc'd string
 * (NULL: out of memory), and the turn of the I/O loop that queues one for
 * the stats callback every statistics.interval.ms (lock held; returns when
 * it next wants to run). */
char *sc_stats_json(struct sc_client *c, int64_t now, size_t *len);
int64_t sc_stats_serve(struct sc_client *c, int64_t now);

/* Debug log to stderr when `debug` is set (lock may be held). */
void sc_log(const struct sc_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
