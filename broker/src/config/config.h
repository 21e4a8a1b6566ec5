/*
 * samsa-broker: the broker's configuration, read from a Kafka-style
 * server.properties.
 *
 *   samsa-broker server.properties --override log.dirs=/data --override broker.id=2
 *
 * Keys, types and defaults are Kafka 2.0's (KafkaConfig), plus four of
 * Samsa's own: admin.listeners, log.level, log.open.files.max and
 * response.max.bytes. The file is read
 * as java.util.Properties reads it: `key=value`, `key: value` or `key value`;
 * `#` and `!` start comment lines; leading whitespace is skipped; a line
 * ending in an odd number of backslashes continues on the next one; the
 * escapes \t \n \r \f \\ \uXXXX (and \x for any other x) are understood.
 * Values are then trimmed as Kafka's ConfigDef trims them. Unlike Java, bytes
 * are taken as they are (UTF-8 passes through; Java would read Latin-1).
 *
 * The input is hostile: the file is at most BR_CONFIG_MAX_FILE_BYTES, a
 * logical line (continuations joined) at most BR_CONFIG_MAX_LINE_BYTES, NUL
 * bytes are refused, numbers are parsed strictly (decimal only, the whole
 * value, the key's range). An unknown key or a bad value stops start-up with
 * one message that names the key and where it was set ("server.properties:12:
 * log.segment.bytes: 'abc' is not an integer"). A key given twice keeps its
 * later value, with a warning. A fixed list of Kafka keys that Samsa has no
 * use for (thread counts, socket buffers, transaction-log settings, quotas,
 * metrics: see br_config_key_ignored() and config_keys.c) is accepted, each with an
 * INFO line saying it has no effect in Samsa.
 *
 * Overrides (`--override key=value`) are applied after the file, in order; a
 * later one wins. Their values are taken literally (no escapes) and trimmed.
 *
 * Defaults are Kafka 2.0's where later releases changed them:
 * message.max.bytes 1000012 (later 1048588), zookeeper.session.timeout.ms
 * 6000 (later 18000), replica.lag.time.max.ms 10000 (later 30000),
 * group.max.session.timeout.ms 300000 (later 1800000). max.connections is
 * the one key taken from a later release (2.3).
 *
 * TLS (the SSL listeners): Kafka 2.7's key names (SslConfigs.java,
 * BrokerSecurityConfigs.java), each also per listener as
 * listener.name.<listener in lower case>.ssl.<...> (Kafka's
 * ListenerName.configPrefix), the override winning:
 *   ssl.keystore.type    PEM (the default when unset, where Kafka's is JKS)
 *                        or PKCS12; JKS is refused with a hint to convert.
 *   ssl.keystore.location, ssl.keystore.password (PKCS12),
 *   ssl.keystore.key, ssl.keystore.certificate.chain (inline PEM),
 *   ssl.key.password     (an encrypted PEM key)
 *   ssl.truststore.type/location/password/certificates  the CAs of client
 *                        certificates (PEM or PKCS12)
 *   ssl.client.auth      none, requested, required
 *   ssl.enabled.protocols TLSv1.2,TLSv1.3 (default); older are refused
 *   ssl.cipher.suites    IANA or OpenSSL names; unset: OpenSSL's defaults
 *   ssl.endpoint.identification.algorithm  a broker's connections to the
 *                        other brokers' TLS inter-broker listener: https
 *                        (Kafka 2.0's default) checks the certificate names
 *                        the address, "" does not
 * Passwords and inline keys are sensitive: DescribeConfigs shows null.
 *
 * SASL (the SASL_PLAINTEXT and SASL_SSL listeners; Kafka 2.0's
 * BrokerSecurityConfigs.java and SaslConfigs.java, broker/README.md):
 *   sasl.enabled.mechanisms  PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; Kafka's
 *                        default GSSAPI is not there: a SASL listener
 *                        without this key stops start-up.
 *   sasl.jaas.config     PlainLoginModule's user_<name>="<password>"
 *                        entries, the PLAIN users; best given per listener
 *                        and mechanism (listener.name.<l>.plain.sasl.jaas.config).
 *   sasl.scram.credentials.file  Samsa's own: the SCRAM credentials of a
 *                        standalone broker, one user a line in Kafka's
 *                        znode JSON (security/credentials.h).
 *   sasl.server.max.receive.size  (Kafka 3.4) the largest frame before
 *                        authentication, 524288.
 *   connection.failed.authentication.delay.ms  (Kafka 2.1) how long a
 *                        failed authentication waits before its answer
 *                        and close, 100.
 *   connections.max.unauthenticated.ms  Samsa's own: a connection of a SASL
 *                        listener not authenticated within this long is
 *                        closed, 10000 (Kafka 2.0 has no such deadline).
 *   sasl.mechanism.inter.broker.protocol  PLAIN, SCRAM-SHA-256 or
 *                        SCRAM-SHA-512 when the inter-broker listener is
 *                        SASL (Kafka's default GSSAPI stops start-up); the
 *                        broker logs in with the username and password of
 *                        listener.name.<l>.<mechanism>.sasl.jaas.config.
 *
 * Samsa's decisions where Kafka leaves room:
 *   broker.id            -1 (Kafka's default) means "not configured": with
 *                        ZooKeeper the broker generates one above
 *                        reserved.broker.max.id, standalone it uses 0.
 *   broker.rack          the broker's rack, registered in /brokers/ids/<id>
 *                        and used by rack-aware replica assignment; empty
 *                        or unset: none (Kafka reads "" as a rack named "").
 *   listeners            PLAINTEXT://:9092 when unset. Every listener's
 *                        security protocol (through
 *                        listener.security.protocol.map) must be PLAINTEXT
 *                        or SSL: SASL_PLAINTEXT and SASL_SSL are refused
 *                        (not there yet). An empty host means all
 *                        interfaces; IPv6 hosts go in brackets.
 *   inter.broker.listener.name, security.inter.broker.protocol
 *                        the inter-broker listener must be a PLAINTEXT one:
 *                        brokers do not speak TLS to each other yet.
 *   advertised.listeners unset: the listeners (an empty host or port 0 is
 *                        then the broker's to fill in: its host name, the
 *                        bound port).
 *   zookeeper.connect    unset or empty: standalone, metadata in
 *                        <first log dir>/samsa-metadata. So
 *                        `--override zookeeper.connect=` runs a Kafka
 *                        configuration standalone. Set: the broker is a
 *                        member of the cluster whose ZooKeeper it names
 *                        (host:port,...[/chroot]), and broker.id must be
 *                        set (br_config_check_available).
 *   admin.listeners      Samsa's own: where the admin HTTP/WebSocket API
 *                        listens, a comma list of http://host:port; default
 *                        http://127.0.0.1:9095 (the Kafka port + 3); empty
 *                        or 0 turns the API off; port 0 picks a free port.
 *   admin.auth.token     Samsa's own: the bearer token every admin request
 *                        must carry; required when an admin listener is not
 *                        a loopback address. Sensitive: never shown.
 *   admin.max.connections, admin.stream.max.clients  Samsa's own: the most
 *                        HTTP connections (default 32) and WebSocket stream
 *                        clients (default 8) the admin API serves at once.
 *   admin.connections.max.idle.ms  Samsa's own: an admin HTTP connection
 *                        with no request under way for this long is closed
 *                        (default 60000; 0: never); stream clients are not.
 *   admin.stream.max.stall.ms  Samsa's own: a stream client that has left
 *                        at least 64 KiB unread at every check for this long
 *                        is cut off (default 30000, at least 1000).
 *   log.level            Samsa's own: debug, info (default), warn, error.
 *   log.open.files.max   Samsa's own: how many segment files the logs keep
 *                        open at once (fileref.h), 1..2^31-1; unset: half
 *                        the open file limit (RLIMIT_NOFILE, after start-up
 *                        raised its soft limit to the hard one).
 *   response.max.bytes   Samsa's own: the most memory one response may take
 *                        while it is built and the most bytes it may take
 *                        encoded (the records a Fetch sends from the log are
 *                        not counted: fetch.max.bytes bounds them). Default
 *                        64 MiB: a Metadata of 10,000 partitions takes 0.3 MB
 *                        encoded and under 1 MiB while built. Kafka has no
 *                        such ceiling; a response above it is answered as
 *                        Kafka answers a failed request (respond_error.c).
 *   default.replication.factor, offsets.topic.replication.factor
 *                        1..32767 (the wire's int16). Kafka's default of 3
 *                        for the offsets topic is kept; the broker caps it by
 *                        the number of live brokers when it creates the topic.
 *   log.cleaner.min.cleanable.ratio
 *                        must lie in [0, 1], as its topic counterpart must.
 *   group.min.session.timeout.ms must not exceed group.max.session.timeout.ms.
 *   connections.max.idle.ms
 *                        -1 never closes idle connections (Kafka's Selector
 *                        does so for any negative value); 0, which Kafka
 *                        takes and then closes every connection as soon as
 *                        it pauses, is refused; below -1 is out of range.
 *   queued.max.request.bytes
 *                        what all connections' input buffers may hold before
 *                        the broker stops reading (see net.h). Kafka's default
 *                        is -1 (unbounded); Samsa's is 104857600 (100 MiB),
 *                        raised to socket.request.max.bytes when that is
 *                        larger and the key is unset (DescribeConfigs still
 *                        shows the default's text). -1 or 0: no limit. A
 *                        value set below socket.request.max.bytes is refused,
 *                        as KafkaConfig refuses it.
 *
 * Effective values: fields documented "effective" hold what Kafka computes
 * from several keys (log.retention.ms over minutes over hours, -1 forever;
 * log.roll.ms over log.roll.hours; log.flush.interval.ms unset = the
 * scheduler interval, Long.MAX_VALUE = never; ...). br_config_is_set() tells
 * whether the operator set a key.
 *
 * DescribeConfigs: br_config_entry() describes key k of BR_CFG__COUNT: its
 * name, its value as text (as the operator wrote it, trimmed, or the
 * default's text; NULL for null), its source (STATIC_BROKER_CONFIG when set
 * in the file or an override, DEFAULT_CONFIG otherwise), read-only (always:
 * Samsa has no dynamic broker configs) and sensitive (no key is, today).
 *
 * @locality loaded once by the main thread before other threads start; the
 * result is immutable afterwards and may be read from any thread.
 */
#ifndef SAMSA_BROKER_CONFIG_H
#define SAMSA_BROKER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

/* Input ceilings. */
#define BR_CONFIG_MAX_FILE_BYTES ((size_t)1024 * 1024)
#define BR_CONFIG_MAX_LINE_BYTES ((size_t)64 * 1024)
/* The longest SASL mechanism name ("SCRAM-SHA-512"). */
#define BR_SASL_MECHANISM_MAX 20
/* Entries of one listener list, directories of log.dirs. */
#define BR_CONFIG_MAX_LISTENERS 16
#define BR_CONFIG_MAX_IP_OVERRIDES 64 /* max.connections.per.ip.overrides */
#define BR_CONFIG_MAX_LOG_DIRS 64
/* Bytes of one log directory path, of a listener name, of a host. */
#define BR_CONFIG_MAX_PATH 4095
#define BR_LISTENER_NAME_MAX 32
#define BR_HOST_MAX 255
/* Bytes of a message format version such as "2.0-IV1", of zookeeper.connect. */
#define BR_FORMAT_VERSION_MAX 15
#define BR_ZK_CONNECT_MAX 4096
/* Bytes of broker.rack (the registration's limit, BR_ZK_RACK_MAX). */
#define BR_RACK_MAX 255

/* DescribeConfigs' ConfigSource, Kafka's numbers. */
enum br_config_source {
    BR_CONFIG_SOURCE_UNKNOWN = 0,
    BR_CONFIG_SOURCE_DYNAMIC_TOPIC = 1,
    BR_CONFIG_SOURCE_DYNAMIC_BROKER = 2,
    BR_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER = 3,
    BR_CONFIG_SOURCE_STATIC_BROKER = 4,
    BR_CONFIG_SOURCE_DEFAULT = 5,
};

/* cleanup.policy as flags: "delete", "compact", both, or neither (empty). */
enum br_cleanup_policy {
    BR_CLEANUP_DELETE = 1u << 0,
    BR_CLEANUP_COMPACT = 1u << 1,
};

/* message.timestamp.type; the numbers are the batch Attributes bit. */
enum br_timestamp_type {
    BR_TIMESTAMP_CREATE_TIME = 0,
    BR_TIMESTAMP_LOG_APPEND_TIME = 1,
};

/* compression.type; codecs carry Kafka's numbers (enum kp_codec). */
enum br_compression {
    BR_COMPRESSION_PRODUCER = -1, /* keep the producer's codec */
    BR_COMPRESSION_UNCOMPRESSED = 0,
    BR_COMPRESSION_GZIP = 1,
    BR_COMPRESSION_SNAPPY = 2,
    BR_COMPRESSION_LZ4 = 3,
    BR_COMPRESSION_ZSTD = 4,
};

/* Every key Samsa understands, in the order DescribeConfigs lists them. */
enum br_config_key {
    /* server */
    BR_CFG_BROKER_ID,
    BR_CFG_BROKER_RACK,
    BR_CFG_BROKER_ID_GENERATION_ENABLE,
    BR_CFG_RESERVED_BROKER_MAX_ID,
    BR_CFG_LISTENERS,
    BR_CFG_ADVERTISED_LISTENERS,
    BR_CFG_LISTENER_SECURITY_PROTOCOL_MAP,
    BR_CFG_INTER_BROKER_LISTENER_NAME,
    BR_CFG_SECURITY_INTER_BROKER_PROTOCOL,
    BR_CFG_ADMIN_LISTENERS,
    BR_CFG_ADMIN_AUTH_TOKEN,
    BR_CFG_ADMIN_MAX_CONNECTIONS,
    BR_CFG_ADMIN_STREAM_MAX_CLIENTS,
    BR_CFG_ADMIN_CONNECTIONS_MAX_IDLE_MS,
    BR_CFG_ADMIN_STREAM_MAX_STALL_MS,
    BR_CFG_ADMIN_SSL_KEYSTORE_LOCATION,
    BR_CFG_ADMIN_SSL_TRUSTSTORE_LOCATION,
    BR_CFG_ADMIN_SSL_CLIENT_AUTH,
    BR_CFG_LOG_LEVEL,
    BR_CFG_SOCKET_REQUEST_MAX_BYTES,
    BR_CFG_MAX_CONNECTIONS,
    BR_CFG_MAX_CONNECTIONS_PER_IP,
    BR_CFG_MAX_CONNECTIONS_PER_IP_OVERRIDES,
    BR_CFG_CONNECTIONS_MAX_IDLE_MS,
    BR_CFG_QUEUED_MAX_REQUEST_BYTES,
    BR_CFG_MESSAGE_MAX_BYTES,
    BR_CFG_FETCH_MAX_BYTES,
    BR_CFG_RESPONSE_MAX_BYTES,
    BR_CFG_AUTO_CREATE_TOPICS_ENABLE,
    BR_CFG_NUM_PARTITIONS,
    BR_CFG_DEFAULT_REPLICATION_FACTOR,
    BR_CFG_DELETE_TOPIC_ENABLE,
    BR_CFG_COMPRESSION_TYPE,
    BR_CFG_CONTROLLED_SHUTDOWN_ENABLE,
    BR_CFG_CONTROLLED_SHUTDOWN_MAX_RETRIES,
    BR_CFG_CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS,
    BR_CFG_CONTROLLER_SOCKET_TIMEOUT_MS,
    BR_CFG_AUTO_LEADER_REBALANCE_ENABLE,
    BR_CFG_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE,
    BR_CFG_LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS,
    /* log */
    BR_CFG_LOG_DIR,
    BR_CFG_LOG_DIRS,
    BR_CFG_LOG_SEGMENT_BYTES,
    BR_CFG_LOG_ROLL_MS,
    BR_CFG_LOG_ROLL_HOURS,
    BR_CFG_LOG_ROLL_JITTER_MS,
    BR_CFG_LOG_ROLL_JITTER_HOURS,
    BR_CFG_LOG_INDEX_INTERVAL_BYTES,
    BR_CFG_LOG_INDEX_SIZE_MAX_BYTES,
    BR_CFG_LOG_FLUSH_INTERVAL_MESSAGES,
    BR_CFG_LOG_FLUSH_INTERVAL_MS,
    BR_CFG_LOG_FLUSH_SCHEDULER_INTERVAL_MS,
    BR_CFG_LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS,
    BR_CFG_LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS,
    BR_CFG_LOG_RETENTION_HOURS,
    BR_CFG_LOG_RETENTION_MINUTES,
    BR_CFG_LOG_RETENTION_MS,
    BR_CFG_LOG_RETENTION_BYTES,
    BR_CFG_LOG_RETENTION_CHECK_INTERVAL_MS,
    BR_CFG_LOG_SEGMENT_DELETE_DELAY_MS,
    BR_CFG_LOG_CLEANUP_POLICY,
    BR_CFG_LOG_CLEANER_ENABLE,
    BR_CFG_LOG_CLEANER_THREADS,
    BR_CFG_LOG_CLEANER_BACKOFF_MS,
    BR_CFG_LOG_CLEANER_MIN_CLEANABLE_RATIO,
    BR_CFG_LOG_CLEANER_DELETE_RETENTION_MS,
    BR_CFG_LOG_CLEANER_MIN_COMPACTION_LAG_MS,
    BR_CFG_LOG_MESSAGE_TIMESTAMP_TYPE,
    BR_CFG_LOG_MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS,
    BR_CFG_LOG_MESSAGE_FORMAT_VERSION,
    BR_CFG_LOG_MESSAGE_DOWNCONVERSION_ENABLE,
    BR_CFG_LOG_PREALLOCATE,
    BR_CFG_LOG_OPEN_FILES_MAX,
    BR_CFG_LOG_WRITEBEHIND_ENABLE,
    BR_CFG_LOG_WRITEBEHIND_WINDOW_BYTES,
    BR_CFG_LOG_WRITEBEHIND_BUDGET_BYTES,
    /* replication */
    BR_CFG_UNCLEAN_LEADER_ELECTION_ENABLE,
    BR_CFG_MIN_INSYNC_REPLICAS,
    BR_CFG_REPLICA_LAG_TIME_MAX_MS,
    BR_CFG_REPLICA_FETCH_MAX_BYTES,
    BR_CFG_REPLICA_FETCH_MIN_BYTES,
    BR_CFG_REPLICA_FETCH_WAIT_MAX_MS,
    BR_CFG_REPLICA_FETCH_BACKOFF_MS,
    BR_CFG_REPLICA_FETCH_RESPONSE_MAX_BYTES,
    BR_CFG_REPLICA_SOCKET_TIMEOUT_MS,
    BR_CFG_REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS,
    BR_CFG_NUM_REPLICA_FETCHERS,
    /* groups and offsets */
    BR_CFG_OFFSETS_TOPIC_NUM_PARTITIONS,
    BR_CFG_OFFSETS_TOPIC_REPLICATION_FACTOR,
    BR_CFG_OFFSETS_RETENTION_MINUTES,
    BR_CFG_OFFSETS_RETENTION_CHECK_INTERVAL_MS,
    BR_CFG_TRANSACTION_MAX_TIMEOUT_MS,
    BR_CFG_TRANSACTION_ABORT_CLEANUP_INTERVAL_MS,
    BR_CFG_TRANSACTIONAL_ID_EXPIRATION_MS,
    BR_CFG_TRANSACTION_STATE_LOG_NUM_PARTITIONS,
    BR_CFG_TRANSACTION_STATE_LOG_REPLICATION_FACTOR,
    BR_CFG_TRANSACTION_STATE_LOG_SEGMENT_BYTES,
    BR_CFG_TRANSACTION_STATE_LOG_MIN_ISR,
    BR_CFG_OFFSET_METADATA_MAX_BYTES,
    BR_CFG_OFFSETS_COMMIT_TIMEOUT_MS,
    BR_CFG_GROUP_INITIAL_REBALANCE_DELAY_MS,
    BR_CFG_GROUP_MIN_SESSION_TIMEOUT_MS,
    BR_CFG_GROUP_MAX_SESSION_TIMEOUT_MS,
    /* client quotas (quota/quota.h) */
    BR_CFG_QUOTA_PRODUCER_DEFAULT,
    BR_CFG_QUOTA_CONSUMER_DEFAULT,
    BR_CFG_QUOTA_WINDOW_NUM,
    BR_CFG_QUOTA_WINDOW_SIZE_SECONDS,
    BR_CFG_QUOTA_CONFIG_FILE,
    /* replication quotas (quota/replication_quota.h) */
    BR_CFG_LEADER_REPLICATION_THROTTLED_RATE,
    BR_CFG_FOLLOWER_REPLICATION_THROTTLED_RATE,
    BR_CFG_REPLICATION_QUOTA_WINDOW_NUM,
    BR_CFG_REPLICATION_QUOTA_WINDOW_SIZE_SECONDS,
    /* ZooKeeper */
    BR_CFG_ZOOKEEPER_CONNECT,
    BR_CFG_ZOOKEEPER_SESSION_TIMEOUT_MS,
    BR_CFG_ZOOKEEPER_CONNECTION_TIMEOUT_MS,
    BR_CFG_CONFIG_CHANGE_EXPIRATION_MS,
    /* TLS of the SSL listeners (each may be given per listener as
     * listener.name.<listener>.<key>); BR_CFG_SSL_FIRST..BR_CFG_SSL_LAST */
    BR_CFG_SSL_KEYSTORE_TYPE,
    BR_CFG_SSL_KEYSTORE_LOCATION,
    BR_CFG_SSL_KEYSTORE_PASSWORD,
    BR_CFG_SSL_KEYSTORE_KEY,
    BR_CFG_SSL_KEYSTORE_CERTIFICATE_CHAIN,
    BR_CFG_SSL_KEY_PASSWORD,
    BR_CFG_SSL_TRUSTSTORE_TYPE,
    BR_CFG_SSL_TRUSTSTORE_LOCATION,
    BR_CFG_SSL_TRUSTSTORE_PASSWORD,
    BR_CFG_SSL_TRUSTSTORE_CERTIFICATES,
    BR_CFG_SSL_CLIENT_AUTH,
    BR_CFG_SSL_ENABLED_PROTOCOLS,
    BR_CFG_SSL_CIPHER_SUITES,
    BR_CFG_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM,
    /* SASL of the SASL_PLAINTEXT and SASL_SSL listeners: the first two also
     * per listener (listener.name.<listener>.), sasl.jaas.config also per
     * listener and mechanism (listener.name.<listener>.<mechanism>.) */
    BR_CFG_SASL_ENABLED_MECHANISMS,
    BR_CFG_SASL_JAAS_CONFIG,
    BR_CFG_SASL_MECHANISM_INTER_BROKER_PROTOCOL,
    BR_CFG_SASL_SCRAM_CREDENTIALS_FILE,
    BR_CFG_SASL_SERVER_MAX_RECEIVE_SIZE,
    BR_CFG_CONNECTION_FAILED_AUTHENTICATION_DELAY_MS,
    BR_CFG_CONNECTIONS_MAX_UNAUTHENTICATED_MS,
    BR_CFG_AUTHORIZER_CLASS_NAME,
    BR_CFG_SUPER_USERS,
    BR_CFG_ALLOW_EVERYONE_IF_NO_ACL_FOUND,
    BR_CFG__COUNT
};

/* Kafka's security protocols, with its ids (SecurityProtocol.java). */
enum br_security_protocol {
    BR_SECURITY_PLAINTEXT = 0,
    BR_SECURITY_SSL = 1,
    BR_SECURITY_SASL_PLAINTEXT = 2,
    BR_SECURITY_SASL_SSL = 3,
};

/* "PLAINTEXT", "SSL", ...; "UNKNOWN" out of range. */
const char *br_security_protocol_name(int protocol);

/* One endpoint of listeners, advertised.listeners or admin.listeners. */
struct br_listener {
    char name[BR_LISTENER_NAME_MAX + 1]; /* upper case: "PLAINTEXT", "HTTP" */
    char host[BR_HOST_MAX + 1];          /* "" = all interfaces; no brackets */
    uint16_t port;                       /* 0 = any free port */
    int16_t security_protocol;           /* enum br_security_protocol (admin: 0) */
};

/*
 * The typed configuration. Owns its strings: release with br_config_free().
 * Field comments give the key; "effective" marks a value computed from
 * several keys.
 */
struct br_config {
    /* server */
    int32_t broker_id;                                     /* broker.id; -1 = not configured */
    bool broker_id_generation_enable;                      /* broker.id.generation.enable */
    int32_t reserved_broker_max_id;                        /* reserved.broker.max.id */
    struct br_listener listeners[BR_CONFIG_MAX_LISTENERS]; /* listeners */
    size_t n_listeners;                                    /* >= 1 */
    struct br_listener advertised_listeners[BR_CONFIG_MAX_LISTENERS]; /* effective */
    size_t n_advertised_listeners;                                    /* >= 1 */
    char inter_broker_listener_name[BR_LISTENER_NAME_MAX + 1];        /* effective */
    struct br_listener admin_listeners[BR_CONFIG_MAX_LISTENERS];      /* admin.listeners */
    size_t n_admin_listeners;                                         /* 0 = admin API off */
    int32_t admin_max_connections;      /* admin.max.connections */
    int32_t admin_stream_max_clients;   /* admin.stream.max.clients */
    int64_t admin_connections_max_idle_ms; /* admin.connections.max.idle.ms, 0: never */
    int64_t admin_stream_max_stall_ms;     /* admin.stream.max.stall.ms */
    int log_level;                                /* log.level: an enum br_level */
    int32_t socket_request_max_bytes;             /* socket.request.max.bytes */
    int32_t max_connections;                      /* max.connections */
    int32_t max_connections_per_ip;               /* max.connections.per.ip */
    /* max.connections.per.ip.overrides: IPv4 as IPv4-mapped IPv6 */
    uint8_t ip_override_addr[BR_CONFIG_MAX_IP_OVERRIDES][16];
    int32_t ip_override_max[BR_CONFIG_MAX_IP_OVERRIDES];
    size_t n_ip_overrides;
    int64_t connections_max_idle_ms;              /* connections.max.idle.ms; -1 = never */
    int32_t sasl_server_max_receive_size;         /* sasl.server.max.receive.size */
    int64_t connection_failed_authentication_delay_ms; /* (Kafka 2.1) */
    int64_t connections_max_unauthenticated_ms;        /* Samsa's own; 0 = never */
    int64_t queued_max_request_bytes;             /* effective; <= 0 = no limit */
    int32_t message_max_bytes;                    /* message.max.bytes */
    int32_t fetch_max_bytes;                      /* fetch.max.bytes (KIP-541) */
    int32_t response_max_bytes;                   /* response.max.bytes (Samsa's own) */
    bool auto_create_topics_enable;               /* auto.create.topics.enable */
    int32_t num_partitions;                       /* num.partitions */
    int16_t default_replication_factor;           /* default.replication.factor */
    bool delete_topic_enable;                     /* delete.topic.enable */
    int compression_type;                         /* compression.type: enum br_compression */
    bool controlled_shutdown_enable;              /* controlled.shutdown.enable */
    int32_t controlled_shutdown_max_retries;      /* controlled.shutdown.max.retries */
    int64_t controlled_shutdown_retry_backoff_ms; /* controlled.shutdown.retry.backoff.ms */
    int32_t controller_socket_timeout_ms;         /* controller.socket.timeout.ms */
    bool auto_leader_rebalance_enable;            /* auto.leader.rebalance.enable */
    int32_t leader_imbalance_per_broker_percentage; /* leader.imbalance.per.broker.percentage */
    int64_t leader_imbalance_check_interval_seconds; /* leader.imbalance.check.interval.seconds */

    /* log */
    char **log_dirs;                                 /* effective: log.dirs, else log.dir */
    size_t n_log_dirs;                               /* >= 1 */
    int32_t log_segment_bytes;                       /* log.segment.bytes */
    int64_t log_roll_ms;                             /* effective: log.roll.ms, log.roll.hours */
    int64_t log_roll_jitter_ms;                      /* effective: log.roll.jitter.ms/.hours */
    int32_t log_index_interval_bytes;                /* log.index.interval.bytes */
    int32_t log_index_size_max_bytes;                /* log.index.size.max.bytes */
    int64_t log_flush_interval_messages;             /* log.flush.interval.messages */
    int64_t log_flush_interval_ms;                   /* effective: unset = the scheduler's */
    int64_t log_flush_scheduler_interval_ms;         /* INT64_MAX = never */
    int32_t log_flush_offset_checkpoint_interval_ms; /* ...offset.checkpoint... */
    int32_t log_flush_start_offset_checkpoint_interval_ms;
    int64_t log_retention_ms;    /* effective; -1 = forever */
    int64_t log_retention_bytes; /* log.retention.bytes; -1 = no limit */
    int64_t log_retention_check_interval_ms;
    int64_t log_segment_delete_delay_ms;
    unsigned log_cleanup_policy; /* enum br_cleanup_policy flags */
    bool log_cleaner_enable;
    int32_t log_cleaner_threads;
    int64_t log_cleaner_backoff_ms;
    double log_cleaner_min_cleanable_ratio;
    int64_t log_cleaner_delete_retention_ms;
    int64_t log_cleaner_min_compaction_lag_ms;
    int log_message_timestamp_type; /* enum br_timestamp_type */
    int64_t log_message_timestamp_difference_max_ms;
    char log_message_format_version[BR_FORMAT_VERSION_MAX + 1];
    bool log_message_downconversion_enable;
    bool log_preallocate;
    int32_t log_open_files_max; /* log.open.files.max; 0 = unset: derived at start-up */
    bool log_writebehind_enable;            /* log.writebehind.enable (Samsa's own) */
    int64_t log_writebehind_window_bytes;   /* log.writebehind.window.bytes (Samsa's own) */
    int64_t log_writebehind_budget_bytes;   /* log.writebehind.budget.bytes (Samsa's own) */

    /* replication */
    bool unclean_leader_election_enable;
    int32_t min_insync_replicas;
    int64_t replica_lag_time_max_ms;
    int32_t replica_fetch_max_bytes;
    int32_t replica_fetch_min_bytes;
    int32_t replica_fetch_wait_max_ms;
    int32_t replica_fetch_backoff_ms;
    int32_t replica_fetch_response_max_bytes;
    int32_t replica_socket_timeout_ms;
    int64_t replica_high_watermark_checkpoint_interval_ms;
    int32_t num_replica_fetchers;

    /* groups and offsets */
    int32_t offsets_topic_num_partitions;
    int16_t offsets_topic_replication_factor;
    int32_t offsets_retention_minutes;
    int64_t offsets_retention_check_interval_ms;

    /* transactions (Kafka 2.0's KafkaConfig: transaction.max.timeout.ms,
     * transaction.abort.timed.out.transaction.cleanup.interval.ms,
     * transactional.id.expiration.ms) */
    int32_t transaction_max_timeout_ms;
    int32_t transaction_abort_cleanup_interval_ms;
    int32_t transactional_id_expiration_ms;
    /* __transaction_state (transaction.state.log.num.partitions,
     * .replication.factor, .segment.bytes) */
    int32_t transaction_state_log_num_partitions;
    int16_t transaction_state_log_replication_factor;
    int32_t transaction_state_log_segment_bytes;
    int32_t transaction_state_log_min_isr; /* __transaction_state's min.insync.replicas */
    int32_t offset_metadata_max_bytes;
    int32_t offsets_commit_timeout_ms; /* a cluster's commit waits this long for the ISR */
    int32_t group_initial_rebalance_delay_ms;
    int32_t group_min_session_timeout_ms;
    int32_t group_max_session_timeout_ms;

    /* client quotas */
    int64_t quota_producer_default;   /* quota.producer.default (Long.MaxValue: none) */
    int64_t quota_consumer_default;   /* quota.consumer.default */
    int32_t quota_window_num;         /* quota.window.num */
    int32_t quota_window_size_s;      /* quota.window.size.seconds */
    /* quota.config.file (Samsa's, standalone): raw[BR_CFG_QUOTA_CONFIG_FILE] */

    /* replication quotas: bytes per second of the throttled replicas
     * (Long.MaxValue: none), dynamic; their sampled rate's windows */
    int64_t leader_replication_throttled_rate;   /* leader.replication.throttled.rate */
    int64_t follower_replication_throttled_rate; /* follower.replication.throttled.rate */
    int32_t replication_quota_window_num;        /* replication.quota.window.num */
    int32_t replication_quota_window_size_s;     /* replication.quota.window.size.seconds */

    /* ZooKeeper */
    char *zookeeper_connect; /* NULL = standalone */
    /* authorizer.class.name names Kafka's SimpleAclAuthorizer (or 2.4's
     * AclAuthorizer): ACLs are checked; super.users stays in raw[] */
    bool authorizer;
    bool allow_everyone_if_no_acl_found;
    int32_t zookeeper_session_timeout_ms;
    int32_t zookeeper_connection_timeout_ms; /* effective: unset = session's */
    int64_t config_change_expiration_ms;     /* config.change.expiration.ms (Samsa's) */

    /* listener.name.<listener>.ssl.* keys (and the sasl.* ones, with a
     * mechanism for listener.name.<listener>.<mechanism>.sasl.jaas.config):
     * the value of such a key for one listener (br_config_listener_value) */
    struct br_listener_override {
        char listener[BR_LISTENER_NAME_MAX + 1]; /* upper case */
        char mechanism[BR_SASL_MECHANISM_MAX + 1]; /* upper case, "" for none */
        int key;                                 /* an enum br_config_key of the ssl.* ones */
        char *value;                             /* owned */
    } *listener_overrides;
    size_t n_listener_overrides;

    /* What the operator wrote, for DescribeConfigs: the trimmed value of
     * every key set in the file or an override, NULL for the others. */
    char *raw[BR_CFG__COUNT];
};

/*
 * Reads the file at `path`, applies `overrides` ("key=value", n_overrides
 * of them; may be NULL when 0) and fills *out, which the caller releases
 * with br_config_free() whatever the result (it is left empty on failure).
 * Returns 0; KP_ERR_INVALID_CONFIG for a bad file, key or value (err says
 * which, where, and why); KP_ERR_KAFKA_STORAGE_ERROR when the file cannot
 * be read; KP_E_NOMEM.
 */
KP_MUST_CHECK int br_config_load(const char *path, const char *const *overrides, size_t n_overrides,
                                 struct br_config *out, char *err, size_t errlen);

/*
 * br_config_load on bytes in memory: buf[0..len) is the file's content (not
 * NUL-terminated; NULL is fine when len is 0), `name` what messages call it.
 */
KP_MUST_CHECK int br_config_parse_buffer(const char *buf, size_t len, const char *name,
                                         const char *const *overrides, size_t n_overrides,
                                         struct br_config *out, char *err, size_t errlen);

/*
 * Refuses combinations Samsa does not run, which a broker must not start
 * with as if they meant something else: zookeeper.connect set with no
 * broker.id (Kafka would generate one from /brokers/seqid). Returns 0, or
 * KP_ERR_INVALID_CONFIG with err saying what to do.
 */
KP_MUST_CHECK int br_config_check_available(const struct br_config *c, char *err, size_t errlen);

/* Kafka's defaults: an empty file and no overrides. */
KP_MUST_CHECK int br_config_defaults(struct br_config *out, char *err, size_t errlen);

/* Whether key k may change without a restart (dynamic broker configs,
 * KIP-226: Kafka 2.0's DynamicLogConfig.ReconfigurableConfigs that Samsa
 * has, config_dynamic.c lists them). */
bool br_config_key_dynamic(enum br_config_key k);

/*
 * The dynamic broker configs names[i] = values[i] (i < n; the later of two
 * for a key wins) laid over c's static values of those keys (the text c
 * was loaded with, raw[]): validated as server.properties' values are
 * (INVALID_CONFIG with the loader's message), a key that is not dynamic
 * refused (INVALID_REQUEST, Kafka's "Cannot update these configs
 * dynamically"). With apply, c's typed values of every dynamic key are
 * replaced by the result (a key without a dynamic value gets back its
 * static one); raw[] is left as it is. Returns 0, KP_ERR_INVALID_CONFIG,
 * KP_ERR_INVALID_REQUEST or KP_E_NOMEM (err says why).
 */
KP_MUST_CHECK int br_config_dynamic(struct br_config *c, const char *const *names,
                                    const char *const *values, size_t n, bool apply, char *err,
                                    size_t errlen);

/* Frees what *c owns and empties it; safe on an empty or failed config. */
void br_config_free(struct br_config *c);

/* True when the operator set key k (in the file or an override). */
bool br_config_is_set(const struct br_config *c, enum br_config_key k);

/* The key's name ("log.retention.ms"), or NULL when k is out of range. */
const char *br_config_key_name(enum br_config_key k);

/* The key named `name`, or -1 when Samsa does not know it. */
int br_config_find(const char *name);

/* Key k (an ssl.* one) for `listener`: its listener.name.<listener>.
 * override, else the key's value, else its default; NULL when none. */
const char *br_config_listener_value(const struct br_config *c, const char *listener,
                                     enum br_config_key k);
/* The same for `mechanism` ("PLAIN"): listener.name.<listener>.<mechanism>.
 * first (Kafka's order for sasl.jaas.config), then as above. */
const char *br_config_listener_mechanism_value(const struct br_config *c, const char *listener,
                                               const char *mechanism, enum br_config_key k);

/* True for the Kafka keys Samsa accepts without using them. */
bool br_config_key_ignored(const char *name);

/* One row of DescribeConfigs. Pointers live as long as the config. */
struct br_config_entry {
    const char *name;
    const char *value; /* NULL: null (unset key without a default) */
    int8_t source;     /* BR_CONFIG_SOURCE_STATIC_BROKER or _DEFAULT */
    bool read_only;
    bool sensitive; /* when true, value is NULL */
};

/* Describes key k (0 <= k < BR_CFG__COUNT) of c into *out. */
void br_config_entry(const struct br_config *c, enum br_config_key k, struct br_config_entry *out);

/*
 * Value parsers with Kafka's rules (ConfigDef.parseType and the key's
 * validator), shared with topic_config.c. Each takes a trimmed,
 * NUL-terminated value and returns 0, or -1 with the reason in msg
 * ("'12x' is not an integer"). On failure *out is untouched.
 */
/* Decimal, optional sign, the whole string, within [min, max]. */
KP_MUST_CHECK int br_config_parse_long(const char *s, int64_t min, int64_t max, int64_t *out,
                                       char *msg, size_t msglen);
/* "true" or "false", any case. */
KP_MUST_CHECK int br_config_parse_bool(const char *s, bool *out, char *msg, size_t msglen);
/* A decimal number in [0, 1]. */
KP_MUST_CHECK int br_config_parse_ratio(const char *s, double *out, char *msg, size_t msglen);
/* A comma list of "delete" and "compact" (may be empty) -> flags. */
KP_MUST_CHECK int br_config_parse_cleanup_policy(const char *s, unsigned *out, char *msg,
                                                 size_t msglen);
/* producer, uncompressed, gzip, snappy, lz4, zstd -> enum br_compression. */
KP_MUST_CHECK int br_config_parse_compression(const char *s, int *out, char *msg, size_t msglen);
/* CreateTime, LogAppendTime -> enum br_timestamp_type. */
KP_MUST_CHECK int br_config_parse_timestamp_type(const char *s, int *out, char *msg, size_t msglen);
/* A Kafka ApiVersion such as "0.10.2", "1.1-IV0", "2.0-IV1", "2.0". */
KP_MUST_CHECK int br_config_parse_format_version(const char *s, char out[BR_FORMAT_VERSION_MAX + 1],
                                                 char *msg, size_t msglen);

/* Names of the values above, for rendering: "compact,delete" (into buf),
 * "gzip", "LogAppendTime". */
const char *br_cleanup_policy_str(unsigned flags, char *buf, size_t buflen);
const char *br_compression_str(int compression);
const char *br_timestamp_type_str(int type);

#endif
