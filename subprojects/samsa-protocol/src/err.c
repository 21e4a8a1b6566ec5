/* samsa-protocol: error names and texts (see err.h). */
#include <samsa-protocol/err.h>

#include <stddef.h>

struct err_entry {
    int code;
    const char *name;
    const char *text;
};

/* Kafka names and meanings from Apache Kafka's Errors class. */
static const struct err_entry errors[] = {
    {KP_AGAIN, "AGAIN", "not an error: more input needed"},
    {KP_E_TRUNCATED, "E_TRUNCATED", "input ended inside a field"},
    {KP_E_BAD_LENGTH, "E_BAD_LENGTH", "negative or impossible length or count"},
    {KP_E_TOO_LARGE, "E_TOO_LARGE", "a length, count or size above its ceiling"},
    {KP_E_VARINT, "E_VARINT", "overlong or out-of-range varint"},
    {KP_E_NOMEM, "E_NOMEM", "allocation failed or arena/writer ceiling hit"},
    {KP_E_CRC, "E_CRC", "checksum mismatch"},
    {KP_E_MAGIC, "E_MAGIC", "unsupported record batch magic"},
    {KP_E_CORRUPT, "E_CORRUPT", "structurally invalid data"},
    {KP_E_UNSUPPORTED, "E_UNSUPPORTED", "API, version or codec we do not implement"},
    {KP_E_INVALID_ARG, "E_INVALID_ARG", "caller passed something that cannot be encoded"},
    {KP_E_COMPRESSION, "E_COMPRESSION", "a compressed payload failed to decompress"},
    {KP_E_TRAILING, "E_TRAILING", "bytes left over after a complete message"},
    {KP_ERR_UNKNOWN_SERVER_ERROR, "UNKNOWN_SERVER_ERROR", "the server experienced an unexpected error when processing the request"},
    {KP_ERR_NONE, "NONE", "no error"},
    {KP_ERR_OFFSET_OUT_OF_RANGE, "OFFSET_OUT_OF_RANGE", "the requested offset is not within the range of offsets maintained by the server"},
    {KP_ERR_CORRUPT_MESSAGE, "CORRUPT_MESSAGE", "the message contents do not match its CRC, or are otherwise corrupt"},
    {KP_ERR_UNKNOWN_TOPIC_OR_PARTITION, "UNKNOWN_TOPIC_OR_PARTITION", "this server does not host this topic-partition"},
    {KP_ERR_INVALID_FETCH_SIZE, "INVALID_FETCH_SIZE", "the requested fetch size is invalid"},
    {KP_ERR_LEADER_NOT_AVAILABLE, "LEADER_NOT_AVAILABLE", "there is no leader for this topic-partition, as a leader election is in progress"},
    {KP_ERR_NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER", "this server is not the leader or a follower of that partition"},
    {KP_ERR_REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT", "the request timed out"},
    {KP_ERR_BROKER_NOT_AVAILABLE, "BROKER_NOT_AVAILABLE", "the broker is not available"},
    {KP_ERR_REPLICA_NOT_AVAILABLE, "REPLICA_NOT_AVAILABLE", "the replica is not available for the requested topic-partition"},
    {KP_ERR_MESSAGE_TOO_LARGE, "MESSAGE_TOO_LARGE", "the request included a message larger than the server will accept"},
    {KP_ERR_STALE_CONTROLLER_EPOCH, "STALE_CONTROLLER_EPOCH", "the controller moved to another broker"},
    {KP_ERR_OFFSET_METADATA_TOO_LARGE, "OFFSET_METADATA_TOO_LARGE", "the committed offset metadata is too large"},
    {KP_ERR_NETWORK_EXCEPTION, "NETWORK_EXCEPTION", "the server disconnected before a response was received"},
    {KP_ERR_COORDINATOR_LOAD_IN_PROGRESS, "COORDINATOR_LOAD_IN_PROGRESS", "the coordinator is loading and cannot process requests"},
    {KP_ERR_COORDINATOR_NOT_AVAILABLE, "COORDINATOR_NOT_AVAILABLE", "the coordinator is not available"},
    {KP_ERR_NOT_COORDINATOR, "NOT_COORDINATOR", "this is not the correct coordinator"},
    {KP_ERR_INVALID_TOPIC_EXCEPTION, "INVALID_TOPIC_EXCEPTION", "the request attempted an operation on an invalid topic"},
    {KP_ERR_RECORD_LIST_TOO_LARGE, "RECORD_LIST_TOO_LARGE", "the request included a message batch larger than the configured segment size"},
    {KP_ERR_NOT_ENOUGH_REPLICAS, "NOT_ENOUGH_REPLICAS", "messages are rejected since there are fewer in-sync replicas than required"},
    {KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "messages are written to the log, but to fewer in-sync replicas than required"},
    {KP_ERR_INVALID_REQUIRED_ACKS, "INVALID_REQUIRED_ACKS", "the produce request specified an invalid value for required acks"},
    {KP_ERR_ILLEGAL_GENERATION, "ILLEGAL_GENERATION", "the generation id is not the current generation"},
    {KP_ERR_INCONSISTENT_GROUP_PROTOCOL, "INCONSISTENT_GROUP_PROTOCOL", "the group member's supported protocols are incompatible with those of existing members"},
    {KP_ERR_INVALID_GROUP_ID, "INVALID_GROUP_ID", "the configured group id is invalid"},
    {KP_ERR_UNKNOWN_MEMBER_ID, "UNKNOWN_MEMBER_ID", "the coordinator is not aware of this member"},
    {KP_ERR_INVALID_SESSION_TIMEOUT, "INVALID_SESSION_TIMEOUT", "the session timeout is not within the range allowed by the broker"},
    {KP_ERR_REBALANCE_IN_PROGRESS, "REBALANCE_IN_PROGRESS", "the group is rebalancing, so a rejoin is needed"},
    {KP_ERR_INVALID_COMMIT_OFFSET_SIZE, "INVALID_COMMIT_OFFSET_SIZE", "the committing offset data size is not valid"},
    {KP_ERR_TOPIC_AUTHORIZATION_FAILED, "TOPIC_AUTHORIZATION_FAILED", "topic authorization failed"},
    {KP_ERR_GROUP_AUTHORIZATION_FAILED, "GROUP_AUTHORIZATION_FAILED", "group authorization failed"},
    {KP_ERR_CLUSTER_AUTHORIZATION_FAILED, "CLUSTER_AUTHORIZATION_FAILED", "cluster authorization failed"},
    {KP_ERR_INVALID_TIMESTAMP, "INVALID_TIMESTAMP", "the timestamp of the message is out of acceptable range"},
    {KP_ERR_UNSUPPORTED_SASL_MECHANISM, "UNSUPPORTED_SASL_MECHANISM", "the broker does not support the requested SASL mechanism"},
    {KP_ERR_ILLEGAL_SASL_STATE, "ILLEGAL_SASL_STATE", "the request is not valid given the current SASL state"},
    {KP_ERR_UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION", "the version of the API is not supported"},
    {KP_ERR_TOPIC_ALREADY_EXISTS, "TOPIC_ALREADY_EXISTS", "the topic already exists"},
    {KP_ERR_INVALID_PARTITIONS, "INVALID_PARTITIONS", "the number of partitions is below 1"},
    {KP_ERR_INVALID_REPLICATION_FACTOR, "INVALID_REPLICATION_FACTOR", "the replication factor is below 1 or larger than the number of available brokers"},
    {KP_ERR_INVALID_REPLICA_ASSIGNMENT, "INVALID_REPLICA_ASSIGNMENT", "the replica assignment is invalid"},
    {KP_ERR_INVALID_CONFIG, "INVALID_CONFIG", "the configuration is invalid"},
    {KP_ERR_NOT_CONTROLLER, "NOT_CONTROLLER", "this is not the correct controller for this cluster"},
    {KP_ERR_INVALID_REQUEST, "INVALID_REQUEST", "the request is malformed or otherwise invalid"},
    {KP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT, "UNSUPPORTED_FOR_MESSAGE_FORMAT", "the message format version on the broker does not support the request"},
    {KP_ERR_POLICY_VIOLATION, "POLICY_VIOLATION", "the request parameters do not satisfy the configured policy"},
    {KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, "OUT_OF_ORDER_SEQUENCE_NUMBER", "the broker received an out of order sequence number"},
    {KP_ERR_DUPLICATE_SEQUENCE_NUMBER, "DUPLICATE_SEQUENCE_NUMBER", "the broker received a duplicate sequence number"},
    {KP_ERR_INVALID_PRODUCER_EPOCH, "INVALID_PRODUCER_EPOCH", "the producer's epoch is older than the broker's"},
    {KP_ERR_INVALID_TXN_STATE, "INVALID_TXN_STATE", "the producer attempted a transactional operation in an invalid state"},
    {KP_ERR_INVALID_PRODUCER_ID_MAPPING, "INVALID_PRODUCER_ID_MAPPING", "the producer id does not match the transactional id"},
    {KP_ERR_INVALID_TRANSACTION_TIMEOUT, "INVALID_TRANSACTION_TIMEOUT", "the transaction timeout is larger than the broker allows"},
    {KP_ERR_CONCURRENT_TRANSACTIONS, "CONCURRENT_TRANSACTIONS", "another transaction with this id is in progress"},
    {KP_ERR_TRANSACTION_COORDINATOR_FENCED, "TRANSACTION_COORDINATOR_FENCED", "the transaction coordinator is no longer the current one"},
    {KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "transactional id authorization failed"},
    {KP_ERR_SECURITY_DISABLED, "SECURITY_DISABLED", "security features are disabled"},
    {KP_ERR_OPERATION_NOT_ATTEMPTED, "OPERATION_NOT_ATTEMPTED", "the broker did not attempt this operation"},
    {KP_ERR_KAFKA_STORAGE_ERROR, "KAFKA_STORAGE_ERROR", "disk error when trying to access the log file"},
    {KP_ERR_LOG_DIR_NOT_FOUND, "LOG_DIR_NOT_FOUND", "the user-specified log directory is not found in the broker config"},
    {KP_ERR_SASL_AUTHENTICATION_FAILED, "SASL_AUTHENTICATION_FAILED", "SASL authentication failed"},
    {KP_ERR_UNKNOWN_PRODUCER_ID, "UNKNOWN_PRODUCER_ID", "the broker could not locate the producer metadata for this producer id"},
    {KP_ERR_REASSIGNMENT_IN_PROGRESS, "REASSIGNMENT_IN_PROGRESS", "a partition reassignment is in progress"},
    {KP_ERR_DELEGATION_TOKEN_AUTH_DISABLED, "DELEGATION_TOKEN_AUTH_DISABLED", "delegation token feature is not enabled"},
    {KP_ERR_DELEGATION_TOKEN_NOT_FOUND, "DELEGATION_TOKEN_NOT_FOUND", "delegation token is not found"},
    {KP_ERR_DELEGATION_TOKEN_OWNER_MISMATCH, "DELEGATION_TOKEN_OWNER_MISMATCH", "the owner of the delegation token does not match"},
    {KP_ERR_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", "delegation token requests are not allowed on this channel"},
    {KP_ERR_DELEGATION_TOKEN_AUTHORIZATION_FAILED, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", "delegation token authorization failed"},
    {KP_ERR_DELEGATION_TOKEN_EXPIRED, "DELEGATION_TOKEN_EXPIRED", "delegation token has expired"},
    {KP_ERR_INVALID_PRINCIPAL_TYPE, "INVALID_PRINCIPAL_TYPE", "the supplied principal type is not supported"},
    {KP_ERR_NON_EMPTY_GROUP, "NON_EMPTY_GROUP", "the group is not empty"},
    {KP_ERR_GROUP_ID_NOT_FOUND, "GROUP_ID_NOT_FOUND", "the group id does not exist"},
    {KP_ERR_FETCH_SESSION_ID_NOT_FOUND, "FETCH_SESSION_ID_NOT_FOUND", "the fetch session id was not found"},
    {KP_ERR_INVALID_FETCH_SESSION_EPOCH, "INVALID_FETCH_SESSION_EPOCH", "the fetch session epoch is invalid"},
    {KP_ERR_LISTENER_NOT_FOUND, "LISTENER_NOT_FOUND", "there is no listener on the leader broker that matches the listener the request was made on"},
    {KP_ERR_TOPIC_DELETION_DISABLED, "TOPIC_DELETION_DISABLED", "topic deletion is disabled"},
    {KP_ERR_FENCED_LEADER_EPOCH, "FENCED_LEADER_EPOCH", "the leader epoch in the request is older than the broker's"},
    {KP_ERR_UNKNOWN_LEADER_EPOCH, "UNKNOWN_LEADER_EPOCH", "the leader epoch in the request is newer than the broker's"},
    {KP_ERR_UNSUPPORTED_COMPRESSION_TYPE, "UNSUPPORTED_COMPRESSION_TYPE", "the requesting client does not support the compression type of the data"},
    {KP_ERR_STALE_BROKER_EPOCH, "STALE_BROKER_EPOCH", "the broker epoch has changed"},
    {KP_ERR_OFFSET_NOT_AVAILABLE, "OFFSET_NOT_AVAILABLE", "the leader high watermark has not caught up"},
    {KP_ERR_MEMBER_ID_REQUIRED, "MEMBER_ID_REQUIRED", "the group member needs a valid member id before joining"},
    {KP_ERR_PREFERRED_LEADER_NOT_AVAILABLE, "PREFERRED_LEADER_NOT_AVAILABLE", "the preferred leader was not available"},
    {KP_ERR_GROUP_MAX_SIZE_REACHED, "GROUP_MAX_SIZE_REACHED", "the group has reached its maximum size"},
    {KP_ERR_FENCED_INSTANCE_ID, "FENCED_INSTANCE_ID", "a newer instance with the same group.instance.id fenced this one"},
    {KP_ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE, "ELIGIBLE_LEADERS_NOT_AVAILABLE", "eligible topic partition leaders are not available"},
    {KP_ERR_ELECTION_NOT_NEEDED, "ELECTION_NOT_NEEDED", "leader election not needed for the topic partition"},
    {KP_ERR_NO_REASSIGNMENT_IN_PROGRESS, "NO_REASSIGNMENT_IN_PROGRESS", "no partition reassignment is in progress"},
    {KP_ERR_GROUP_SUBSCRIBED_TO_TOPIC, "GROUP_SUBSCRIBED_TO_TOPIC", "deleting offsets of a topic is forbidden while the group subscribes to it"},
    {KP_ERR_INVALID_RECORD, "INVALID_RECORD", "the record failed validation on the broker"},
    {KP_ERR_UNSTABLE_OFFSET_COMMIT, "UNSTABLE_OFFSET_COMMIT", "there are unstable offsets that need to be cleared"},
};

static const struct err_entry *find(int err)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        if (errors[i].code == err) {
            return &errors[i];
        }
    }
    return NULL;
}

const char *kp_err_name(int err)
{
    const struct err_entry *e = find(err);
    return e != NULL ? e->name : "UNKNOWN_ERROR_CODE";
}

const char *kp_err_str(int err)
{
    const struct err_entry *e = find(err);
    return e != NULL ? e->text : "unknown error code";
}

int kp_err_to_wire(int err)
{
    return err >= 0 ? err : -1;
}

int kp_err_from_wire(int wire)
{
    return wire == -1 ? KP_ERR_UNKNOWN_SERVER_ERROR : wire;
}
