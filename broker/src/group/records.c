/*
 * samsa-broker: the records of __consumer_offsets (see records.h).
 *
 * Records use Kafka's formats (GroupMetadataManager), all big-endian with
 * int16-length strings:
 *
 *   offset commit key v1   int16 1, string group, string topic, int32 partition
 *   offset value v1        int16 1, int64 offset, string metadata,
 *                          int64 commit_timestamp, int64 expire_timestamp
 *   offset value v3        int16 3, int64 offset, int32 leader_epoch,
 *                          string metadata, int64 commit_timestamp
 *   group metadata key v2  int16 2, string group
 *   group value v1         int16 1, string protocol_type, int32 generation,
 *                          nullable string protocol, nullable string leader,
 *                          members[string member_id, string client_id,
 *                          string client_host, int32 rebalance_timeout,
 *                          int32 session_timeout, bytes subscription,
 *                          bytes assignment]
 *   group value v3         int16 3, string protocol_type, int32 generation,
 *                          nullable string protocol, nullable string leader,
 *                          int64 current_state_timestamp, members[string
 *                          member_id, nullable string group_instance_id,
 *                          string client_id, string client_host, int32
 *                          rebalance_timeout, int32 session_timeout, bytes
 *                          subscription, bytes assignment]
 *
 * and, read when loading, the older versions: offset commit key v0 as v1;
 * offset value v0 and v2: int64 offset, string metadata, int64
 * commit_timestamp; group value v2 as v3 without group_instance_id, v1 as
 * v2 without current_state_timestamp, v0 as v1 without rebalance_timeout.
 *
 * A null value is a tombstone (DeleteGroups, expiry). Written are the
 * versions Kafka 2.0 writes (GroupMetadataManager at 2.0.0:
 * CURRENT_OFFSET_VALUE_SCHEMA_VERSION and CURRENT_GROUP_VALUE_SCHEMA_VERSION
 * are both 1), which the tools built for it decode (Burrow 1.2.1 knows
 * group values 0 and 1 only), unless the record holds a field only a later
 * version has: an offset value is v1 (expire_timestamp -1 when the commit
 * asked no retention: Kafka 2.1+ reads that as no expiry of its own) but v3
 * for a commit with a leader epoch (OffsetCommit v6+) and no expiry; a group
 * value is v1 but v3 when a member has a group instance id (JoinGroup v5).
 * A v1 group value has no current_state_timestamp: after a restart the
 * offsets of a group loaded from one expire from their commit time, as in
 * Kafka 2.0 (not from when the group became empty). Loading reads values
 * v0-v3 and group values v0-v3 (only the protocol type, generation and
 * state time: members are not restored). Decoding (br_grp_record_decode) is pure and apart from
 * applying a record to the coordinator's state (br_grp_record_apply, in
 * loader.c), so both can be tested alone.
 */
#include "group/records.h"

#include <samsa-protocol/alloc.h>

#include <string.h>

static struct kp_str cstr(const char *s)
{
    return kp_str_c(s != NULL ? s : "");
}

/* ---------------------------------------------------------------- encoding */

void br_grp_enc_offset_key(struct kp_writer *w, struct kp_str group, struct kp_str topic,
                           int32_t partition)
{
    kp_wr_i16(w, GRP_KEY_OFFSET_V1);
    kp_wr_string(w, group);
    kp_wr_string(w, topic);
    kp_wr_i32(w, partition);
}

void br_grp_enc_offset_value(struct kp_writer *w, const struct grp_offset *o,
                             struct kp_str metadata)
{
    /* Kafka 2.0's v1 (GroupMetadataManager.offsetCommitValue), unless the
     * commit carries a leader epoch, which only v3 holds. No expiry asked
     * is an expire_timestamp of -1, which Kafka 2.1+ reads as none. */
    if (o->expire_ts >= 0 || o->leader_epoch < 0) {
        kp_wr_i16(w, 1);
        kp_wr_i64(w, o->offset);
        kp_wr_string(w, metadata);
        kp_wr_i64(w, o->commit_ts);
        kp_wr_i64(w, o->expire_ts >= 0 ? o->expire_ts : -1);
    } else {
        kp_wr_i16(w, 3);
        kp_wr_i64(w, o->offset);
        kp_wr_i32(w, o->leader_epoch);
        kp_wr_string(w, metadata);
        kp_wr_i64(w, o->commit_ts);
    }
}

void br_grp_enc_group_key(struct kp_writer *w, struct kp_str group)
{
    kp_wr_i16(w, GRP_KEY_GROUP_V2);
    kp_wr_string(w, group);
}

int16_t br_grp_group_value_version(const struct grp_group *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->members[i]->instance_id != NULL) {
            return 3;
        }
    }
    return 1;
}

void br_grp_enc_group_value(struct kp_writer *w, const struct grp_group *g, int64_t now_wall_ms)
{
    int16_t version = br_grp_group_value_version(g);
    kp_wr_i16(w, version);
    kp_wr_string(w, cstr(g->protocol_type));
    kp_wr_i32(w, g->generation);
    kp_wr_string(w, g->protocol != NULL ? kp_str_c(g->protocol) : KP_STR_NULL);
    kp_wr_string(w, g->leader != NULL ? kp_str_c(g->leader->id) : KP_STR_NULL);
    if (version >= 2) {
        kp_wr_i64(w, g->state_ts >= 0 ? g->state_ts : now_wall_ms);
    }
    kp_wr_array_len(w, false, (int32_t)g->nmembers);
    for (size_t i = 0; i < g->nmembers; i++) {
        const struct grp_member *m = g->members[i];
        struct kp_bytes sub = {(const uint8_t *)"", 0};
        for (size_t k = 0; k < m->nprotocols && g->protocol != NULL; k++) {
            if (strcmp(m->protocols[k].name, g->protocol) == 0) {
                sub.ptr = m->protocols[k].metadata;
                sub.len = m->protocols[k].metadata_len;
            }
        }
        struct kp_bytes as = {m->assignment != NULL ? m->assignment : (const uint8_t *)"",
                              m->assignment != NULL ? m->assignment_len : 0};
        kp_wr_string(w, cstr(m->id));
        if (version >= 3) {
            kp_wr_string(w, m->instance_id != NULL ? kp_str_c(m->instance_id) : KP_STR_NULL);
        }
        kp_wr_string(w, cstr(m->client_id));
        kp_wr_string(w, cstr(m->client_host));
        kp_wr_i32(w, m->rebalance_timeout_ms);
        kp_wr_i32(w, m->session_timeout_ms);
        kp_wr_bytes(w, sub);
        kp_wr_bytes(w, as);
    }
}

/* ---------------------------------------------------------------- decoding */

/* Records the reader's error and its detection site in out. */
static int decode_fail(const struct kp_reader *r, int err, struct grp_record *out)
{
    out->err_file = r->err_file;
    out->err_line = r->err_line;
    return r->err != 0 ? r->err : err;
}

static int decode_offset_value(struct kp_reader *vr, struct grp_record *out)
{
    switch (out->value_version) {
    case 0:
    case 2:
        out->offset = kp_rd_i64(vr);
        out->metadata = kp_rd_string(vr);
        out->commit_ts = kp_rd_i64(vr);
        break;
    case 1:
        out->offset = kp_rd_i64(vr);
        out->metadata = kp_rd_string(vr);
        out->commit_ts = kp_rd_i64(vr);
        out->expire_ts = kp_rd_i64(vr);
        break;
    case 3:
        out->offset = kp_rd_i64(vr);
        out->leader_epoch = kp_rd_i32(vr);
        out->metadata = kp_rd_string(vr);
        out->commit_ts = kp_rd_i64(vr);
        break;
    default:
        kp_rd_fail(vr, KP_E_UNSUPPORTED);
        break;
    }
    return vr->err;
}

static int decode_group_value(struct kp_reader *vr, struct grp_record *out)
{
    if (out->value_version < 0 || out->value_version > 3) {
        kp_rd_fail(vr, KP_E_UNSUPPORTED);
        return vr->err;
    }
    out->protocol_type = kp_rd_string(vr);
    out->generation = kp_rd_i32(vr);
    out->protocol = kp_rd_string(vr);
    out->leader = kp_rd_string(vr);
    if (out->value_version >= 2) {
        out->state_ts = kp_rd_i64(vr);
    }
    if (vr->err == 0) {
        out->members.ptr = vr->buf + vr->off;
        out->members.len = (int32_t)(vr->len - vr->off);
    }
    return vr->err;
}

int br_grp_record_decode(struct kp_bytes key, struct kp_bytes value, struct grp_record *out)
{
    memset(out, 0, sizeof *out);
    out->value_version = -1;
    out->group = KP_STR_NULL;
    out->topic = KP_STR_NULL;
    out->partition = -1;
    out->leader_epoch = -1;
    out->metadata = KP_STR_NULL;
    out->expire_ts = -1;
    out->protocol_type = KP_STR_NULL;
    out->protocol = KP_STR_NULL;
    out->leader = KP_STR_NULL;
    out->state_ts = -1;
    out->members = KP_BYTES_NULL;
    struct kp_reader kr;
    kp_rd_init(&kr, key.ptr, key.len > 0 ? (size_t)key.len : 0);
    if (key.len < 0) {
        kp_rd_fail(&kr, KP_E_CORRUPT); /* a record of this topic always has a key */
        return decode_fail(&kr, KP_E_CORRUPT, out);
    }
    out->key_version = kp_rd_i16(&kr);
    bool offset_key =
        out->key_version == GRP_KEY_OFFSET_V0 || out->key_version == GRP_KEY_OFFSET_V1;
    if (offset_key) {
        out->group = kp_rd_string(&kr);
        out->topic = kp_rd_string(&kr);
        out->partition = kp_rd_i32(&kr);
        if (kr.err == 0 && (out->group.len < 0 || out->topic.len < 0)) {
            kp_rd_fail(&kr, KP_E_CORRUPT);
        }
        /* the cache keeps topics as C strings: a NUL would make "t\0x" the
         * key "t" and break the order of its offsets (no Kafka topic has one) */
        if (kr.err == 0 && out->topic.len > 0 &&
            memchr(out->topic.ptr, '\0', (size_t)out->topic.len) != NULL) {
            kp_rd_fail(&kr, KP_E_CORRUPT);
        }
    } else if (out->key_version == GRP_KEY_GROUP_V2) {
        out->group = kp_rd_string(&kr);
        if (kr.err == 0 && out->group.len < 0) {
            kp_rd_fail(&kr, KP_E_CORRUPT);
        }
    } else {
        kp_rd_fail(&kr, KP_E_UNSUPPORTED);
    }
    if (kr.err != 0) {
        return decode_fail(&kr, kr.err, out);
    }
    if (value.len < 0) {
        return 0; /* a tombstone */
    }
    struct kp_reader vr;
    kp_rd_init(&vr, value.ptr, (size_t)value.len);
    out->value_version = kp_rd_i16(&vr);
    int err = offset_key ? decode_offset_value(&vr, out) : decode_group_value(&vr, out);
    if (err != 0) {
        return decode_fail(&vr, err, out);
    }
    return 0;
}

/* The smallest member of each group value version, for the count check. */
static size_t member_min_size(int16_t version)
{
    /* strings 2 bytes each, int32 timeouts, bytes 4 each */
    switch (version) {
    case 0:
        return 3 * 2 + 4 + 2 * 4;
    case 1:
    case 2:
        return 3 * 2 + 2 * 4 + 2 * 4;
    default:
        return 4 * 2 + 2 * 4 + 2 * 4;
    }
}

int br_grp_members_begin(const struct grp_record *rec, struct grp_member_iter *it)
{
    memset(it, 0, sizeof *it);
    it->version = rec->value_version;
    kp_rd_init(&it->r, rec->members.ptr, rec->members.len > 0 ? (size_t)rec->members.len : 0);
    if (rec->key_version != GRP_KEY_GROUP_V2 || rec->value_version < 0 || rec->members.len < 0) {
        kp_rd_fail(&it->r, KP_E_INVALID_ARG);
        return it->r.err;
    }
    int32_t n =
        kp_rd_array_len(&it->r, false, false, GRP_MAX_MEMBERS, member_min_size(it->version));
    it->left = it->r.err == 0 ? n : 0;
    return it->r.err;
}

int br_grp_members_next(struct grp_member_iter *it, struct grp_record_member *m)
{
    memset(m, 0, sizeof *m);
    if (it->r.err != 0) {
        return it->r.err;
    }
    if (it->left <= 0) {
        return KP_ITER_END;
    }
    m->member_id = kp_rd_string(&it->r);
    m->instance_id = it->version >= 3 ? kp_rd_string(&it->r) : KP_STR_NULL;
    m->client_id = kp_rd_string(&it->r);
    m->client_host = kp_rd_string(&it->r);
    m->rebalance_timeout_ms = it->version >= 1 ? kp_rd_i32(&it->r) : 0;
    m->session_timeout_ms = kp_rd_i32(&it->r);
    if (it->version == 0) {
        m->rebalance_timeout_ms = m->session_timeout_ms;
    }
    m->subscription = kp_rd_bytes(&it->r);
    m->assignment = kp_rd_bytes(&it->r);
    if (it->r.err != 0) {
        return it->r.err;
    }
    it->left--;
    return 0;
}
