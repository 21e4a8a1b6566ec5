/* samsa-broker: the records of __transaction_state (see txn_log.h). */
#include "txn/txn_log.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

#define RECORD_VERSION 0

void br_txn_log_key(struct kp_writer *w, const char *id, size_t len)
{
    kp_wr_i16(w, RECORD_VERSION);
    kp_wr_string(w, (struct kp_str){id, (int32_t)len});
}

/* Whether partition i's topic came earlier in t's list (its group was
 * written then). */
static bool topic_seen_before(const struct br_txn *t, size_t i)
{
    for (size_t j = 0; j < i; j++) {
        if (strcmp(t->parts[j].topic, t->parts[i].topic) == 0) {
            return true;
        }
    }
    return false;
}

void br_txn_log_value(struct kp_writer *w, const struct br_txn *t)
{
    kp_wr_i16(w, RECORD_VERSION);
    kp_wr_i64(w, t->producer_id);
    kp_wr_i16(w, t->epoch);
    kp_wr_i32(w, t->timeout_ms);
    kp_wr_i8(w, (int8_t)t->status);
    if (t->status == BR_TXN_EMPTY) {
        kp_wr_i32(w, -1); /* null: an Empty transaction has no partitions */
    } else {
        /* grouped by topic, in the order first added */
        int32_t ntopics = 0;
        for (size_t i = 0; i < t->nparts; i++) {
            ntopics += topic_seen_before(t, i) ? 0 : 1;
        }
        kp_wr_i32(w, ntopics);
        for (size_t i = 0; i < t->nparts; i++) {
            if (topic_seen_before(t, i)) {
                continue;
            }
            kp_wr_string(w, kp_str_c(t->parts[i].topic));
            int32_t n = 0;
            for (size_t j = i; j < t->nparts; j++) {
                n += strcmp(t->parts[j].topic, t->parts[i].topic) == 0 ? 1 : 0;
            }
            kp_wr_i32(w, n);
            for (size_t j = i; j < t->nparts; j++) {
                if (strcmp(t->parts[j].topic, t->parts[i].topic) == 0) {
                    kp_wr_i32(w, t->parts[j].partition);
                }
            }
        }
    }
    kp_wr_i64(w, t->update_ms);
    kp_wr_i64(w, t->status == BR_TXN_EMPTY ? -1 : t->start_ms);
}

int br_txn_log_key_decode(struct kp_bytes key, struct kp_str *id)
{
    if (key.len < 0) {
        return KP_E_CORRUPT;
    }
    struct kp_reader r;
    kp_rd_init(&r, key.ptr, (size_t)key.len);
    int16_t version = kp_rd_i16(&r);
    *id = kp_rd_string(&r);
    if (r.err != 0 || version != RECORD_VERSION || id->len < 0 || kp_rd_remaining(&r) != 0) {
        return KP_E_CORRUPT;
    }
    return 0;
}

static void free_parts(struct br_txn_partition *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kp_free(parts[i].topic);
    }
    kp_free(parts);
}

int br_txn_log_value_decode(struct kp_bytes value, struct br_txn *t)
{
    if (value.len < 0) {
        return KP_E_CORRUPT;
    }
    struct kp_reader r;
    kp_rd_init(&r, value.ptr, (size_t)value.len);
    int16_t version = kp_rd_i16(&r);
    int64_t pid = kp_rd_i64(&r);
    int16_t epoch = kp_rd_i16(&r);
    int32_t timeout = kp_rd_i32(&r);
    int8_t status = kp_rd_i8(&r);
    int32_t ntopics = kp_rd_i32(&r);
    if (r.err != 0 || version != RECORD_VERSION || status < BR_TXN_EMPTY || status > BR_TXN_DEAD ||
        ntopics < -1) {
        return KP_E_CORRUPT;
    }
    struct br_txn_partition *parts = NULL;
    size_t nparts = 0;
    size_t cap = 0;
    for (int32_t i = 0; i < ntopics && r.err == 0; i++) {
        struct kp_str topic = kp_rd_string(&r);
        int32_t n = kp_rd_i32(&r);
        /* each partition id takes 4 bytes: a count beyond what is left is
         * corrupt before anything is allocated for it */
        if (r.err != 0 || topic.len < 0 || n < 0 || (size_t)n > kp_rd_remaining(&r) / 4) {
            free_parts(parts, nparts);
            return KP_E_CORRUPT;
        }
        if (nparts + (size_t)n > cap) {
            size_t ncap = nparts + (size_t)n + 4;
            struct br_txn_partition *v = kp_realloc(parts, ncap * sizeof *v);
            if (v == NULL) {
                free_parts(parts, nparts);
                return KP_E_NOMEM;
            }
            parts = v;
            cap = ncap;
        }
        for (int32_t j = 0; j < n; j++) {
            char *name = kp_malloc((size_t)topic.len + 1);
            if (name == NULL) {
                free_parts(parts, nparts);
                return KP_E_NOMEM;
            }
            memcpy(name, topic.ptr, (size_t)topic.len);
            name[topic.len] = '\0';
            parts[nparts++] = (struct br_txn_partition){name, kp_rd_i32(&r)};
        }
    }
    int64_t entry_ts = kp_rd_i64(&r);
    int64_t start_ts = kp_rd_i64(&r);
    if (r.err != 0 || kp_rd_remaining(&r) != 0) {
        free_parts(parts, nparts);
        return KP_E_CORRUPT;
    }
    for (size_t i = 0; i < t->nparts; i++) {
        kp_free(t->parts[i].topic);
    }
    kp_free(t->parts);
    t->parts = parts;
    t->nparts = nparts;
    t->cap_parts = cap;
    t->producer_id = pid;
    t->epoch = epoch;
    t->timeout_ms = timeout;
    t->status = (enum br_txn_status)status;
    t->update_ms = entry_ts;
    t->start_ms = start_ts;
    return 0;
}
