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

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/record_batch.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOAD_READ_BYTES (1 << 20)
#define LOAD_MAX_BATCH_BYTES ((size_t)256 << 20)
#define LOAD_MAX_DECOMPRESSED ((size_t)256 << 20)

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
        struct grp_offset v;
        memset(&v, 0, sizeof v);
        v.partition = rec->partition;
        v.offset = rec->offset;
        v.leader_epoch = rec->leader_epoch;
        v.commit_ts = rec->commit_ts;
        v.expire_ts = rec->expire_ts;
        v.log_offset = -1; /* older than any record appended after the load */
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

/* Applies one record of the topic; malformed ones are skipped. */
static int load_record(struct br_groups *gs, const struct kp_record *rec, struct grp_load_stats *st)
{
    st->records++;
    struct grp_record r;
    if (br_grp_record_decode(rec->Key, rec->Value, &r) != 0) {
        st->skipped++;
        return 0;
    }
    return br_grp_record_apply(gs, &r);
}

static int read_fully(int fd, uint8_t *buf, size_t len, int64_t pos)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(pos + (int64_t)got));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

int br_grp_load_partition(struct br_groups *gs, struct br_partition *p, struct grp_load_stats *st)
{
    int64_t offset = br_log_start_offset(p->log);
    int64_t end = br_log_end_offset(p->log);
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    while (offset < end && rc == 0) {
        struct br_log_slice sl;
        int err = br_log_read(p->log, offset, end, LOAD_READ_BYTES, true, &sl);
        if (err != 0) {
            br_error("%s-%" PRId32 ": reading offset %" PRId64 " failed: %s", BR_OFFSETS_TOPIC,
                     p->index, offset, err < 0 ? kp_err_str(err) : kp_err_name(err));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        if (sl.len <= 0 || sl.next_offset <= offset) {
            br_log_slice_release(&sl);
            break;
        }
        size_t len = (size_t)sl.len;
        if (len > LOAD_MAX_BATCH_BYTES) {
            br_warn("%s-%" PRId32 ": a batch of %zu bytes at offset %" PRId64 " skipped",
                    BR_OFFSETS_TOPIC, p->index, len, offset);
            offset = sl.next_offset;
            br_log_slice_release(&sl);
            continue;
        }
        if (len > cap) {
            uint8_t *nb = kp_realloc(buf, len);
            if (nb == NULL) {
                br_log_slice_release(&sl);
                rc = KP_E_NOMEM;
                break;
            }
            buf = nb;
            cap = len;
        }
        if (read_fully(br_fileref_fd(sl.file), buf, len, sl.file_pos) != 0) {
            br_error("%s-%" PRId32 ": reading %zu bytes at position %" PRId64 " failed: %s",
                     BR_OFFSETS_TOPIC, p->index, len, sl.file_pos, strerror(errno));
            br_log_slice_release(&sl);
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        size_t pos = 0;
        while (pos < len && rc == 0) {
            struct kp_batch_header h;
            size_t size = 0;
            int e = kp_batch_parse_lenient(buf + pos, len - pos, &h, &size);
            if (e != 0) {
                /* the log validated these bytes when it opened: note and go on */
                br_warn("%s-%" PRId32 ": a damaged batch at file position %" PRId64
                        " (%s): the rest of this read is skipped",
                        BR_OFFSETS_TOPIC, p->index, sl.file_pos + (int64_t)pos, kp_err_str(e));
                break;
            }
            if (!kp_batch_is_control(&h)) {
                struct kp_batch_iter it;
                e = kp_batch_iter_init(&it, buf + pos, size, LOAD_MAX_DECOMPRESSED);
                struct kp_record rec;
                while (e == 0 && rc == 0) {
                    e = kp_batch_iter_next(&it, &rec);
                    if (e == 0) {
                        rc = load_record(gs, &rec, st);
                    }
                }
                if (e != 0 && e != KP_ITER_END) {
                    br_warn("%s-%" PRId32 ": records of the batch at offset %" PRId64
                            " do not decode (%s, %s:%d): the rest of it is skipped",
                            BR_OFFSETS_TOPIC, p->index, h.BaseOffset, kp_err_str(e),
                            it.err_file != NULL ? it.err_file : "?", it.err_line);
                }
                kp_batch_iter_free(&it);
            }
            pos += size;
        }
        offset = sl.next_offset;
        br_log_slice_release(&sl);
    }
    kp_free(buf);
    return rc;
}
