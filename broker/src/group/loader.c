/*
 * samsa-broker: a partition of __consumer_offsets read into the group
 * coordinator when this broker comes to lead it (Kafka 2.0's
 * GroupMetadataManager.loadGroupsAndOffsets): each record decoded
 * (records.c) and applied to the groups (coordinator.c) and their committed
 * offsets (offsets.c). It uses those three; none of them uses it.
 */
#define _GNU_SOURCE

#include "group/group.h"

#include "base/fileref.h"
#include "base/logging.h"
#include "group/records.h"
#include "replica/partition.h"
#include "replica/partition_read.h"
#include "replica/replica_manager.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/control.h>
#include <samsa-protocol/record_batch.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


/* The committed offset an offset commit record holds; log_offset its
 * place in the log (-1: older than any record appended after the load). */
static struct grp_offset offset_of(const struct grp_record *rec, int64_t log_offset)
{
    struct grp_offset v;
    memset(&v, 0, sizeof v);
    v.partition = rec->partition;
    v.offset = rec->offset;
    v.leader_epoch = rec->leader_epoch;
    v.commit_ts = rec->commit_ts;
    v.expire_ts = rec->expire_ts;
    v.log_offset = log_offset;
    return v;
}

int br_grp_record_apply_txn(struct br_groups *gs, const struct grp_record *rec,
                            int64_t producer_id, int64_t log_offset)
{
    if (rec->group.len < 0 || rec->key_version == GRP_KEY_GROUP_V2 || rec->value_version < 0) {
        return br_grp_record_apply(gs, rec);
    }
    /* its place in the log orders it against the offsets committed around
     * it once its marker commits it */
    struct grp_offset v = offset_of(rec, log_offset);
    struct grp_group *g = br_grp_get_or_create(gs, rec->group.ptr, (size_t)rec->group.len);
    if (g == NULL) {
        return KP_E_NOMEM;
    }
    return br_grp_offset_stage_txn(g, producer_id, rec->topic, rec->metadata, &v);
}

int br_grp_record_apply(struct br_groups *gs, const struct grp_record *rec)
{
    if (rec->group.len < 0) {
        return 0; /* not a decoded record */
    }
    size_t glen = (size_t)rec->group.len;
    if (rec->key_version != GRP_KEY_GROUP_V2) {
        if (rec->value_version < 0) {
            struct grp_group *g = br_grp_find(gs, rec->group.ptr, glen);
            if (g != NULL) {
                br_grp_offset_remove(g, rec->topic, rec->partition);
            }
            return 0;
        }
        struct grp_offset v = offset_of(rec, -1);
        struct grp_group *g = br_grp_get_or_create(gs, rec->group.ptr, glen);
        if (g == NULL) {
            return KP_E_NOMEM;
        }
        return br_grp_offset_set(g, rec->topic, rec->metadata, &v);
    }
    if (rec->value_version < 0) {
        struct grp_group *g = br_grp_find(gs, rec->group.ptr, glen);
        if (g != NULL) {
            br_grp_remove(gs, g, KP_ERR_UNKNOWN_MEMBER_ID);
        }
        return 0;
    }
    /* members are not restored: after a restart they rejoin */
    struct grp_group *g = br_grp_get_or_create(gs, rec->group.ptr, glen);
    if (g == NULL) {
        return KP_E_NOMEM;
    }
    char *pt = NULL;
    if (rec->protocol_type.len > 0 && (pt = br_grp_dup_kstr(rec->protocol_type)) == NULL) {
        return KP_E_NOMEM;
    }
    kp_free(g->protocol_type);
    g->protocol_type = pt;
    g->generation = rec->generation;
    g->state_ts = rec->state_ts;
    return 0;
}

/* ---------------------------------------------------------------- loading */

struct grp_loading {
    struct br_groups *gs;
    struct grp_load_stats *st;
    int32_t partitions; /* of __consumer_offsets */
    int32_t index;      /* the one being read */
};

/* Applies one record of the topic (of a transaction of producer_id when
 * >= 0); malformed ones are skipped. */
static int load_record(struct br_groups *gs, const struct kp_record *rec, int64_t producer_id,
                       struct grp_load_stats *st)
{
    st->records++;
    struct grp_record r;
    if (br_grp_record_decode(rec->Key, rec->Value, &r) != 0) {
        st->skipped++;
        return 0;
    }
    return producer_id >= 0 ? br_grp_record_apply_txn(gs, &r, producer_id, rec->Offset)
                            : br_grp_record_apply(gs, &r);
}

/* br_grp_load_partition's record callback: a transaction's offsets wait
 * for its marker, which commits or drops them (Kafka's
 * loadGroupsAndOffsets: pendingOffsets by producer id). */
static int load_one(void *ctx, const struct kp_batch_header *h, const struct kp_record *rec)
{
    struct grp_loading *l = ctx;
    if (kp_batch_is_control(h)) {
        int16_t type = -1;
        if (kp_control_key_decode(rec->Key, &type) == 0 &&
            (type == KP_CONTROL_COMMIT || type == KP_CONTROL_ABORT)) {
            (void)br_grp_txn_complete(l->gs, l->partitions, l->index, h->ProducerId,
                                      type == KP_CONTROL_COMMIT);
        }
        return 0;
    }
    return load_record(l->gs, rec, kp_batch_is_transactional(h) ? h->ProducerId : -1, l->st);
}

int br_grp_load_partition(struct br_groups *gs, struct br_partition *p, struct grp_load_stats *st)
{
    /* a partition without its topic (a harness's) stands alone */
    struct grp_loading l = {gs, st, p->topic != NULL ? p->topic->npartitions : 1,
                            p->topic != NULL ? p->index : 0};
    return br_partition_read_records(p, BR_OFFSETS_TOPIC, load_one, &l);
}
