/*
 * samsa-broker: the records of __consumer_offsets, in Kafka's formats
 * (GroupMetadataManager; the versions are listed in records.c): encoders
 * for what the coordinator appends, a pure decoder for what it loads, and
 * applying a decoded record to the coordinator's state (loader.c). Tools, tests and
 * the fuzz harnesses use them alone.
 * @locality any thread for the encoders and the decoder; the reactor's for
 * br_grp_record_apply
 */
#ifndef SAMSA_BROKER_GROUP_RECORDS_H
#define SAMSA_BROKER_GROUP_RECORDS_H

#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/record_batch.h>

#include "group/group.h"

/* Record format versions (Kafka's GroupMetadataManager). */
#define GRP_KEY_OFFSET_V0 0
#define GRP_KEY_OFFSET_V1 1
#define GRP_KEY_GROUP_V2 2

/*
 * The records of __consumer_offsets (Kafka's GroupMetadataManager formats,
 * listed in records.c). The encoders write what the coordinator
 * appends, in the versions Kafka 2.0 writes unless a field only a later
 * version holds is there: offset commit key v1, offset value v1 (v3 for a
 * commit with a leader epoch and no expire timestamp), group metadata key
 * v2 and group value v1 (v3 when a member has a group instance id; it also
 * holds the current state timestamp, now_wall_ms when g->state_ts < 0), the
 * group's members each with the metadata of the chosen protocol as its
 * subscription. Errors stick in the writer.
 */
void br_grp_enc_offset_key(struct kp_writer *w, struct kp_str group, struct kp_str topic,
                           int32_t partition);
void br_grp_enc_offset_value(struct kp_writer *w, const struct grp_offset *o,
                             struct kp_str metadata);
void br_grp_enc_group_key(struct kp_writer *w, struct kp_str group);
void br_grp_enc_group_value(struct kp_writer *w, const struct grp_group *g, int64_t now_wall_ms);
/* The group value version br_grp_enc_group_value writes for g: 1 or 3. */
int16_t br_grp_group_value_version(const struct grp_group *g);

/* A record of __consumer_offsets as br_grp_record_decode reads it. Strings
 * and bytes are slices of the key and value it was given (len -1: null),
 * valid as long as those are. */
struct grp_record {
    int16_t key_version;   /* GRP_KEY_OFFSET_V0, GRP_KEY_OFFSET_V1 or GRP_KEY_GROUP_V2 */
    int16_t value_version; /* 0-3; -1: a tombstone (null value) */
    struct kp_str group;   /* never null */
    /* offset commit key and value (key versions 0 and 1) */
    struct kp_str topic; /* never null */
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* value v3; -1 below */
    struct kp_str metadata;
    int64_t commit_ts;
    int64_t expire_ts; /* value v1; -1 otherwise */
    /* group metadata value (key version 2) */
    struct kp_str protocol_type;
    int32_t generation;
    struct kp_str protocol;  /* nullable */
    struct kp_str leader;    /* nullable */
    int64_t state_ts;        /* value v2 and v3; -1 below */
    struct kp_bytes members; /* the rest of the value: see br_grp_members_begin */
    /* on failure: where the key or value stopped decoding */
    const char *err_file;
    int err_line;
};

/*
 * Decodes one record of __consumer_offsets: the key (offset commit v0/v1 or
 * group metadata v2), then, unless the value is null (a tombstone), the
 * value of that key's kind (offset commit v0-v3, group metadata v0-v3 up to
 * its members). Bytes after the fields Kafka defines are ignored, as Kafka
 * does. Pure: no state, no allocation.
 * Returns 0; KP_E_UNSUPPORTED (an unknown key or value version);
 * KP_E_CORRUPT (a null key, group or topic, a topic with a NUL byte, which
 * no Kafka topic has and the cache's C strings cannot hold); a reader error
 * (KP_E_TRUNCATED, KP_E_BAD_LENGTH) for a key or value cut short. On an
 * error out->err_file and out->err_line give the detection site.
 */
KP_MUST_CHECK int br_grp_record_decode(struct kp_bytes key, struct kp_bytes value,
                                       struct grp_record *out);

/*
 * Applies a decoded record as the coordinator loads __consumer_offsets: an
 * offset commit sets the group's committed offset (creating the group), its
 * tombstone removes it; a group value sets the group's protocol type,
 * generation and state timestamp (members are not restored: they rejoin),
 * its tombstone removes the group with its offsets. Returns 0, KP_E_NOMEM
 * (also at GRP_MAX_GROUPS) or KP_E_TOO_LARGE (GRP_MAX_OFFSETS).
 */
KP_MUST_CHECK int br_grp_record_apply(struct br_groups *gs, const struct grp_record *rec);
/* The same for a record at log_offset of a transactional batch of
 * producer_id: an offset staged until the transaction's marker
 * (br_grp_txn_complete); a group record as br_grp_record_apply. */
KP_MUST_CHECK int br_grp_record_apply_txn(struct br_groups *gs, const struct grp_record *rec,
                                          int64_t producer_id, int64_t log_offset);

/* One member of a group metadata value (slices of the value). */
struct grp_record_member {
    struct kp_str member_id;
    struct kp_str instance_id; /* value v3; null below */
    struct kp_str client_id;
    struct kp_str client_host;
    int32_t rebalance_timeout_ms; /* value v0: the session timeout, as Kafka reads it */
    int32_t session_timeout_ms;
    struct kp_bytes subscription;
    struct kp_bytes assignment;
};

struct grp_member_iter {
    struct kp_reader r;
    int16_t version;
    int32_t left;
};

/*
 * The members of a decoded group metadata value (the coordinator does not
 * restore them; tools and tests read them). begin reads the array's count,
 * at most GRP_MAX_MEMBERS and no more than the bytes can hold; next gives
 * one member at a time. Both return 0 or a reader error, which sticks in
 * it->r (with its detection site); next returns KP_ITER_END after the last.
 */
KP_MUST_CHECK int br_grp_members_begin(const struct grp_record *rec, struct grp_member_iter *it);
KP_MUST_CHECK int br_grp_members_next(struct grp_member_iter *it, struct grp_record_member *m);

#endif
