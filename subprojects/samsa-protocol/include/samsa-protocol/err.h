/*
 * samsa-protocol: error codes.
 *
 * One number space for two kinds of error (STYLE.md rule 4):
 *   - Kafka's wire error codes, non-negative, exactly as Kafka numbers them
 *     (org.apache.kafka.common.protocol.Errors), 0 = no error;
 *   - Samsa's internal codes, negative (decode failures, resource ceilings).
 * KP_AGAIN ("need more bytes") is not an error: a frame is simply incomplete.
 */
#ifndef SAMSA_PROTOCOL_ERR_H
#define SAMSA_PROTOCOL_ERR_H

#if defined(__GNUC__) || defined(__clang__)
#define KP_MUST_CHECK __attribute__((warn_unused_result))
#else
#define KP_MUST_CHECK
#endif

enum kp_err {
    /* internal codes: negative */
    KP_AGAIN = -1,            /* not an error: more input needed */
    KP_E_TRUNCATED = -2,      /* input ended inside a field */
    KP_E_BAD_LENGTH = -3,     /* negative or impossible length or count */
    KP_E_TOO_LARGE = -4,      /* a length, count or size above its ceiling */
    KP_E_VARINT = -5,         /* overlong or out-of-range varint */
    KP_E_NOMEM = -6,          /* allocation failed or arena/writer ceiling hit */
    KP_E_CRC = -7,            /* checksum mismatch */
    KP_E_MAGIC = -8,          /* unsupported record batch magic */
    KP_E_CORRUPT = -9,        /* structurally invalid data */
    KP_E_UNSUPPORTED = -10,   /* API, version or codec we do not implement */
    KP_E_INVALID_ARG = -11,   /* caller passed something that cannot be encoded */
    KP_E_COMPRESSION = -12,   /* a compressed payload failed to decompress */
    KP_E_TRAILING = -13,      /* bytes left over after a complete message */

    /* Kafka wire codes: the ones Samsa uses by name */
    KP_ERR_UNKNOWN_SERVER_ERROR = -1000, /* Kafka's -1; kept apart from KP_AGAIN */
    KP_ERR_NONE = 0,
    KP_ERR_OFFSET_OUT_OF_RANGE = 1,
    KP_ERR_CORRUPT_MESSAGE = 2,
    KP_ERR_UNKNOWN_TOPIC_OR_PARTITION = 3,
    KP_ERR_INVALID_FETCH_SIZE = 4,
    KP_ERR_LEADER_NOT_AVAILABLE = 5,
    KP_ERR_NOT_LEADER_OR_FOLLOWER = 6,
    KP_ERR_REQUEST_TIMED_OUT = 7,
    KP_ERR_BROKER_NOT_AVAILABLE = 8,
    KP_ERR_REPLICA_NOT_AVAILABLE = 9,
    KP_ERR_MESSAGE_TOO_LARGE = 10,
    KP_ERR_STALE_CONTROLLER_EPOCH = 11,
    KP_ERR_OFFSET_METADATA_TOO_LARGE = 12,
    KP_ERR_NETWORK_EXCEPTION = 13,
    KP_ERR_COORDINATOR_LOAD_IN_PROGRESS = 14,
    KP_ERR_COORDINATOR_NOT_AVAILABLE = 15,
    KP_ERR_NOT_COORDINATOR = 16,
    KP_ERR_INVALID_TOPIC_EXCEPTION = 17,
    KP_ERR_RECORD_LIST_TOO_LARGE = 18,
    KP_ERR_NOT_ENOUGH_REPLICAS = 19,
    KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20,
    KP_ERR_INVALID_REQUIRED_ACKS = 21,
    KP_ERR_ILLEGAL_GENERATION = 22,
    KP_ERR_INCONSISTENT_GROUP_PROTOCOL = 23,
    KP_ERR_INVALID_GROUP_ID = 24,
    KP_ERR_UNKNOWN_MEMBER_ID = 25,
    KP_ERR_INVALID_SESSION_TIMEOUT = 26,
    KP_ERR_REBALANCE_IN_PROGRESS = 27,
    KP_ERR_INVALID_COMMIT_OFFSET_SIZE = 28,
    KP_ERR_TOPIC_AUTHORIZATION_FAILED = 29,
    KP_ERR_GROUP_AUTHORIZATION_FAILED = 30,
    KP_ERR_CLUSTER_AUTHORIZATION_FAILED = 31,
    KP_ERR_INVALID_TIMESTAMP = 32,
    KP_ERR_UNSUPPORTED_SASL_MECHANISM = 33,
    KP_ERR_ILLEGAL_SASL_STATE = 34,
    KP_ERR_UNSUPPORTED_VERSION = 35,
    KP_ERR_TOPIC_ALREADY_EXISTS = 36,
    KP_ERR_INVALID_PARTITIONS = 37,
    KP_ERR_INVALID_REPLICATION_FACTOR = 38,
    KP_ERR_INVALID_REPLICA_ASSIGNMENT = 39,
    KP_ERR_INVALID_CONFIG = 40,
    KP_ERR_NOT_CONTROLLER = 41,
    KP_ERR_INVALID_REQUEST = 42,
    KP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT = 43,
    KP_ERR_POLICY_VIOLATION = 44,
    KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER = 45,
    KP_ERR_DUPLICATE_SEQUENCE_NUMBER = 46,
    KP_ERR_INVALID_PRODUCER_EPOCH = 47,
    KP_ERR_INVALID_TXN_STATE = 48,
    KP_ERR_INVALID_PRODUCER_ID_MAPPING = 49,
    KP_ERR_INVALID_TRANSACTION_TIMEOUT = 50,
    KP_ERR_CONCURRENT_TRANSACTIONS = 51,
    KP_ERR_TRANSACTION_COORDINATOR_FENCED = 52,
    KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53,
    KP_ERR_SECURITY_DISABLED = 54,
    KP_ERR_OPERATION_NOT_ATTEMPTED = 55,
    KP_ERR_KAFKA_STORAGE_ERROR = 56,
    KP_ERR_LOG_DIR_NOT_FOUND = 57,
    KP_ERR_SASL_AUTHENTICATION_FAILED = 58,
    KP_ERR_UNKNOWN_PRODUCER_ID = 59,
    KP_ERR_REASSIGNMENT_IN_PROGRESS = 60,
    KP_ERR_DELEGATION_TOKEN_AUTH_DISABLED = 61,
    KP_ERR_DELEGATION_TOKEN_NOT_FOUND = 62,
    KP_ERR_DELEGATION_TOKEN_OWNER_MISMATCH = 63,
    KP_ERR_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64,
    KP_ERR_DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65,
    KP_ERR_DELEGATION_TOKEN_EXPIRED = 66,
    KP_ERR_INVALID_PRINCIPAL_TYPE = 67,
    KP_ERR_NON_EMPTY_GROUP = 68,
    KP_ERR_GROUP_ID_NOT_FOUND = 69,
    KP_ERR_FETCH_SESSION_ID_NOT_FOUND = 70,
    KP_ERR_INVALID_FETCH_SESSION_EPOCH = 71,
    KP_ERR_LISTENER_NOT_FOUND = 72,
    KP_ERR_TOPIC_DELETION_DISABLED = 73,
    KP_ERR_FENCED_LEADER_EPOCH = 74,
    KP_ERR_UNKNOWN_LEADER_EPOCH = 75,
    KP_ERR_UNSUPPORTED_COMPRESSION_TYPE = 76,
    KP_ERR_STALE_BROKER_EPOCH = 77,
    KP_ERR_OFFSET_NOT_AVAILABLE = 78,
    KP_ERR_MEMBER_ID_REQUIRED = 79,
    KP_ERR_PREFERRED_LEADER_NOT_AVAILABLE = 80,
    KP_ERR_GROUP_MAX_SIZE_REACHED = 81,
    KP_ERR_FENCED_INSTANCE_ID = 82,
    KP_ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE = 83,
    KP_ERR_ELECTION_NOT_NEEDED = 84,
    KP_ERR_NO_REASSIGNMENT_IN_PROGRESS = 85,
    KP_ERR_GROUP_SUBSCRIBED_TO_TOPIC = 86,
    KP_ERR_INVALID_RECORD = 87,
    KP_ERR_UNSTABLE_OFFSET_COMMIT = 88,
};

/* "UNKNOWN_TOPIC_OR_PARTITION"-style name of a code; never NULL. */
const char *kp_err_name(int err);

/* A human sentence for a code; never NULL. */
const char *kp_err_str(int err);

/* Kafka's wire value of a code: KP_ERR_UNKNOWN_SERVER_ERROR maps to -1,
 * internal codes map to -1 too (a peer must never see them). */
int kp_err_to_wire(int err);

/* Our code for a wire value (-1 becomes KP_ERR_UNKNOWN_SERVER_ERROR). */
int kp_err_from_wire(int wire);

#endif
