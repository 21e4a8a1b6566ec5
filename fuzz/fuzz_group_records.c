/*
 * fuzz_group_records: the records of __consumer_offsets that the group
 * coordinator loads at start-up (group/records.c): br_grp_record_decode,
 * br_grp_members_begin / br_grp_members_next, and br_grp_record_apply on a
 * coordinator of its own (struct br_groups of a broker without a network).
 *
 * Input: byte 0 selects the layout.
 *   bit 0 clear  one record: u16 K (big-endian; 0xffff: a null key), K key
 *                bytes, then the value: the rest of the input, or null (a
 *                tombstone) when bit 1 is set
 *   bit 0 set    a sequence of records, each u16 K (0xffff: null key), K key
 *                bytes, u16 V (0xffff: null value, a tombstone), V value bytes,
 *                until the input ends (at most MAX_RECORDS)
 *   bit 2        the records are loaded as at start-up: byte 1 (the records
 *                start after it) gives the batches' codec (bits 0-2, modulo
 *                the codecs), a commit marker batch after each (bit 3) and the
 *                records per batch (bits 4-7, plus one); the batches go into
 *                partition 0 of a one-partition __consumer_offsets with
 *                br_log_append and come back through br_grp_load_partition
 *                (load_partition, load_record). Otherwise each decoded record
 *                is applied with br_grp_record_apply.
 * Damaged batches are fuzz_record_batch's and fuzz_segment_recovery's.
 *
 * Checks, beyond "no crash, no over-read, no leak":
 *   - a record that does not decode fails with a documented code and the
 *     detection site; one that does has a known key and value version, the
 *     fields of its versions only, and every string and bytes slice inside
 *     its key or value (the members slice is the value's tail); members
 *     decode one by one with their slices inside it, and each member's
 *     assignment decodes as the admin API decodes it, or fails cleanly;
 *   - re-encoding with the broker's encoders (br_grp_enc_*) decodes to the
 *     same values: the key (byte for byte for key v1 and v2), an offset value
 *     (byte for byte when it is the version the broker writes), and a group
 *     value rebuilt as a group with those members (as far as the broker's
 *     C strings can hold them);
 *   - the coordinator's state after the records equals a model of the load
 *     rules: groups by id, each with its protocol type, generation, state
 *     timestamp and committed offsets (by topic and partition, sorted,
 *     unique), tombstones removing offsets and groups; the group table (list,
 *     hash, count) holds together;
 *   - what the broker would write for that state (every group's metadata and
 *     offsets, through the encoders) loads into a second coordinator as the
 *     same state.
 */
#define _GNU_SOURCE

#include "fuzz.h"
#include "fuzz_tmp.h"

#include <string.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/record_batch.h>

#include "base/logging.h"
#include "group/group.h"
#include "group/records.h"
#include "replica/partition.h"
#include "storage/log.h"

#define MAX_RECORDS 512
#define MAX_ROUND_TRIP_MEMBERS 4096
#define NULL_LEN 0xffff

/* ------------------------------------------------------------- helpers */

/* The slice lies inside buf[0..len) (a null one anywhere). */
static bool str_inside(struct kp_str s, struct kp_bytes buf)
{
    if (s.len < 0) {
        return s.len == -1;
    }
    const uint8_t *p = (const uint8_t *)s.ptr;
    return buf.len >= 0 && p >= buf.ptr && (size_t)(p - buf.ptr) <= (size_t)buf.len &&
           (size_t)s.len <= (size_t)buf.len - (size_t)(p - buf.ptr);
}

static bool bytes_inside(struct kp_bytes s, struct kp_bytes buf)
{
    struct kp_str v = {(const char *)s.ptr, s.len};
    return str_inside(v, buf);
}

static bool str_eq(struct kp_str a, struct kp_str b)
{
    if (a.len < 0 || b.len < 0) {
        return a.len < 0 && b.len < 0;
    }
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, (size_t)a.len) == 0);
}

static bool bytes_eq(struct kp_bytes a, struct kp_bytes b)
{
    struct kp_str x = {(const char *)a.ptr, a.len};
    struct kp_str y = {(const char *)b.ptr, b.len};
    return str_eq(x, y);
}

/* What a string becomes once the broker holds it as a C string: cut at the
 * first NUL, null as "". */
static struct kp_str cview(struct kp_str s)
{
    if (s.len <= 0) {
        struct kp_str e = {"", 0};
        return e;
    }
    const char *nul = memchr(s.ptr, '\0', (size_t)s.len);
    if (nul != NULL) {
        s.len = (int32_t)(nul - s.ptr);
    }
    return s;
}

/* A NUL-terminated copy (cut at the first NUL); NULL for a null string. */
static char *cdup(struct kp_str s)
{
    if (s.len < 0) {
        return NULL;
    }
    struct kp_str v = cview(s);
    char *c = kp_malloc((size_t)v.len + 1);
    fuzz_check(c != NULL, "out of memory", 0);
    if (v.len > 0) {
        memcpy(c, v.ptr, (size_t)v.len);
    }
    c[v.len] = '\0';
    return c;
}

static struct kp_str cstr_or_empty(const char *s)
{
    return kp_str_c(s != NULL ? s : "");
}

/* ------------------------------------------------------------- coordinators */

/* Coordinators of their own, without a network: a still clock, timers
 * that never fire, no partition to append to (nothing here appends). */
static int64_t still_clock(void *ctx)
{
    (void)ctx;
    return 1000;
}

static void no_timer(void *ctx, struct grp_timer *t)
{
    (void)ctx;
    (void)t;
}

static void no_timer_arm(void *ctx, struct grp_timer *t, int64_t deadline_ms)
{
    (void)ctx;
    (void)t;
    (void)deadline_ms;
}

static void no_join_answer(void *ctx, void *waiter, int err, const struct grp_group *g,
                           const struct grp_member *m)
{
    (void)ctx;
    (void)waiter;
    (void)err;
    (void)g;
    (void)m;
}

static void no_sync_answer(void *ctx, void *waiter, int err, const uint8_t *assignment, int32_t len)
{
    (void)ctx;
    (void)waiter;
    (void)err;
    (void)assignment;
    (void)len;
}

static void no_group_gone(void *ctx, struct grp_group *g)
{
    (void)ctx;
    (void)g;
}

static struct br_partition *no_partition(void *ctx, const char *id, size_t len, size_t *max,
                                         int *err)
{
    (void)ctx;
    (void)id;
    (void)len;
    *max = 0;
    *err = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    return NULL;
}

static const struct br_grp_ops fuzz_group_ops = {
    still_clock,    still_clock,    no_timer,      no_timer_arm, no_timer,
    no_join_answer, no_sync_answer, no_group_gone, no_partition, NULL,
};

static struct br_groups *groups_new(void)
{
    struct br_grp_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.offsets_retention_minutes = 10080;
    cfg.retention_check_interval_ms = 600000;
    struct br_groups *gs = br_groups_new(&fuzz_group_ops, NULL, &cfg, 1);
    fuzz_check(gs != NULL, "out of memory", 0);
    return gs;
}

/* ------------------------------------------------------------- the model */

struct m_offset {
    struct kp_str topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    struct kp_str metadata; /* as a C string: cut at the first NUL */
    int64_t commit_ts;
    int64_t expire_ts;
};

struct m_group {
    struct kp_str id;
    struct kp_str protocol_type; /* null: none */
    int32_t generation;
    int64_t state_ts;
    struct m_offset *offsets;
    size_t n;
    size_t cap;
};

struct model {
    struct m_group *groups; /* room for MAX_RECORDS */
    size_t n;
};

static struct m_group *m_find(struct model *m, struct kp_str id)
{
    for (size_t i = 0; i < m->n; i++) {
        if (str_eq(m->groups[i].id, id)) {
            return &m->groups[i];
        }
    }
    return NULL;
}

static struct m_group *m_get(struct model *m, struct kp_str id)
{
    struct m_group *g = m_find(m, id);
    if (g != NULL) {
        return g;
    }
    fuzz_check(m->n < MAX_RECORDS, "more groups than records", (int)m->n);
    g = &m->groups[m->n++];
    memset(g, 0, sizeof *g);
    g->id = id;
    g->protocol_type = KP_STR_NULL;
    g->state_ts = -1;
    return g;
}

static struct m_offset *m_offset_find(struct m_group *g, struct kp_str topic, int32_t partition)
{
    for (size_t i = 0; i < g->n; i++) {
        if (g->offsets[i].partition == partition && str_eq(g->offsets[i].topic, topic)) {
            return &g->offsets[i];
        }
    }
    return NULL;
}

/* The load rules of group/records.c, written out plainly. */
static void m_apply(struct model *m, const struct grp_record *r)
{
    if (r->key_version != GRP_KEY_GROUP_V2) {
        if (r->value_version < 0) {
            struct m_group *g = m_find(m, r->group);
            struct m_offset *o = g != NULL ? m_offset_find(g, r->topic, r->partition) : NULL;
            if (o != NULL) {
                *o = g->offsets[--g->n];
            }
            return;
        }
        struct m_group *g = m_get(m, r->group);
        struct m_offset *o = m_offset_find(g, r->topic, r->partition);
        if (o == NULL) {
            if (g->n == g->cap) {
                g->cap = g->cap == 0 ? 4 : 2 * g->cap;
                struct m_offset *more = kp_realloc(g->offsets, g->cap * sizeof *more);
                fuzz_check(more != NULL, "out of memory", 0);
                g->offsets = more;
            }
            o = &g->offsets[g->n++];
        }
        o->topic = r->topic;
        o->partition = r->partition;
        o->offset = r->offset;
        o->leader_epoch = r->leader_epoch;
        o->metadata = cview(r->metadata);
        o->commit_ts = r->commit_ts;
        o->expire_ts = r->expire_ts;
        return;
    }
    if (r->value_version < 0) {
        struct m_group *g = m_find(m, r->group);
        if (g != NULL) {
            kp_free(g->offsets);
            *g = m->groups[--m->n];
        }
        return;
    }
    struct m_group *g = m_get(m, r->group);
    g->protocol_type = r->protocol_type.len > 0 ? r->protocol_type : KP_STR_NULL;
    g->generation = r->generation;
    g->state_ts = r->state_ts;
}

static void m_free(struct model *m)
{
    for (size_t i = 0; i < m->n; i++) {
        kp_free(m->groups[i].offsets);
    }
    kp_free(m->groups);
}

/* ------------------------------------------------------------- state checks */

/* The order of g->offsets: group/offsets.c's offset_cmp. */
static int off_order(const struct grp_offset *a, const struct grp_offset *b)
{
    int c = strcmp(a->topic, b->topic);
    if (c != 0) {
        return c;
    }
    return a->partition < b->partition ? -1 : (a->partition > b->partition ? 1 : 0);
}

/* The coordinator's tables hold together: the list, the hash table, the
 * count, and each group's offsets sorted and unique. */
static void check_tables(struct br_groups *gs)
{
    size_t n = 0;
    const struct grp_group *prev = NULL;
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        fuzz_check(g->prev == prev, "the group list is broken", (int)n);
        fuzz_check(br_grp_find(gs, g->id, g->id_len) == g, "a listed group is not found", (int)n);
        fuzz_check(g->state == GRP_EMPTY && g->nmembers == 0, "loading made a group with members",
                   (int)n);
        for (size_t i = 0; i < g->noffsets; i++) {
            fuzz_check(g->offsets[i].topic != NULL && g->offsets[i].metadata != NULL,
                       "an offset without its strings", (int)i);
            fuzz_check(i == 0 || off_order(&g->offsets[i - 1], &g->offsets[i]) < 0,
                       "committed offsets not sorted and unique", (int)i);
        }
        prev = g;
        n++;
        fuzz_check(n <= gs->ngroups, "more groups listed than counted", (int)n);
    }
    fuzz_check(gs->last == prev && n == gs->ngroups, "groups counted wrong", (int)n);
}

/* The state equals the model. */
static void check_state(struct br_groups *gs, struct model *m)
{
    check_tables(gs);
    fuzz_check(gs->ngroups == m->n, "the coordinator holds other groups than loaded",
               (int)gs->ngroups);
    for (size_t i = 0; i < m->n; i++) {
        const struct m_group *mg = &m->groups[i];
        struct grp_group *g = br_grp_find(gs, mg->id.ptr, (size_t)mg->id.len);
        fuzz_check(g != NULL, "a loaded group is missing", (int)i);
        if (mg->protocol_type.len < 0) {
            fuzz_check(g->protocol_type == NULL, "a protocol type nobody set", (int)i);
        } else {
            fuzz_check(g->protocol_type != NULL &&
                           memcmp(g->protocol_type, mg->protocol_type.ptr,
                                  (size_t)mg->protocol_type.len) == 0 &&
                           g->protocol_type[mg->protocol_type.len] == '\0',
                       "the protocol type differs from the record's", (int)i);
        }
        fuzz_check(g->generation == mg->generation && g->state_ts == mg->state_ts,
                   "generation or state timestamp differ from the record's", (int)i);
        fuzz_check(g->noffsets == mg->n, "another number of committed offsets", (int)g->noffsets);
        for (size_t k = 0; k < mg->n; k++) {
            const struct m_offset *mo = &mg->offsets[k];
            const struct grp_offset *o = NULL;
            for (size_t j = 0; j < g->noffsets && o == NULL; j++) {
                const struct grp_offset *c = &g->offsets[j];
                if (c->partition == mo->partition && strlen(c->topic) == (size_t)mo->topic.len &&
                    memcmp(c->topic, mo->topic.ptr, (size_t)mo->topic.len) == 0) {
                    o = c;
                }
            }
            if (o == NULL) {
                fuzz_fail_at("a committed offset is missing", (int)k, __FILE__, __LINE__);
            }
            fuzz_check(o->offset == mo->offset && o->leader_epoch == mo->leader_epoch &&
                           o->commit_ts == mo->commit_ts && o->expire_ts == mo->expire_ts,
                       "a committed offset differs from its record", (int)k);
            fuzz_check(strlen(o->metadata) == (size_t)mo->metadata.len &&
                           memcmp(o->metadata, mo->metadata.ptr, (size_t)mo->metadata.len) == 0,
                       "committed metadata differs from its record", (int)k);
        }
    }
}

/* Decodes and applies one encoded record; it must decode. */
static void reload(struct br_groups *gs, const struct kp_writer *w, size_t kend)
{
    fuzz_check(w->err == 0, "the broker's encoder failed", w->err);
    struct kp_bytes key = {w->buf, (int32_t)kend};
    struct kp_bytes value = {w->buf + kend, (int32_t)(w->len - kend)};
    struct grp_record r;
    int rc = br_grp_record_decode(key, value, &r);
    fuzz_check(rc == 0, "a record the broker wrote does not decode", rc);
    rc = br_grp_record_apply(gs, &r);
    fuzz_check(rc == 0, "a record the broker wrote does not apply", rc);
}

/* What the broker would write for gs loads into a fresh coordinator as the
 * same state. */
static void check_state_round_trip(struct br_groups *gs)
{
    struct br_groups *again = groups_new();
    struct kp_writer w;
    kp_wr_init(&w, (size_t)64 << 20);
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        struct kp_str id = {g->id, (int32_t)g->id_len};
        kp_wr_reset(&w);
        br_grp_enc_group_key(&w, id);
        size_t kend = w.len;
        br_grp_enc_group_value(&w, g, 1000);
        reload(again, &w, kend);
        for (size_t i = 0; i < g->noffsets; i++) {
            const struct grp_offset *o = &g->offsets[i];
            kp_wr_reset(&w);
            br_grp_enc_offset_key(&w, id, kp_str_c(o->topic), o->partition);
            kend = w.len;
            br_grp_enc_offset_value(&w, o, kp_str_c(o->metadata));
            reload(again, &w, kend);
        }
    }
    kp_wr_free(&w);
    check_tables(again);
    fuzz_check(again->ngroups == gs->ngroups, "written groups load as other groups",
               (int)again->ngroups);
    for (struct grp_group *g = gs->first; g != NULL; g = g->next) {
        struct grp_group *h = br_grp_find(again, g->id, g->id_len);
        fuzz_check(h != NULL, "a written group does not load", 0);
        fuzz_check(
            strcmp(cstr_or_empty(g->protocol_type).ptr, cstr_or_empty(h->protocol_type).ptr) == 0 &&
                g->generation == h->generation &&
                (g->state_ts < 0 || br_grp_group_value_version(g) < 2 ||
                 g->state_ts == h->state_ts),
            "a written group loads different", 0);
        fuzz_check(h->noffsets == g->noffsets, "written offsets load as others", (int)h->noffsets);
        for (size_t i = 0; i < g->noffsets; i++) {
            const struct grp_offset *a = &g->offsets[i];
            const struct grp_offset *b = &h->offsets[i];
            int64_t expire = a->expire_ts >= 0 ? a->expire_ts : -1;
            fuzz_check(strcmp(a->topic, b->topic) == 0 && a->partition == b->partition &&
                           a->offset == b->offset && a->commit_ts == b->commit_ts &&
                           b->expire_ts == expire && strcmp(a->metadata, b->metadata) == 0,
                       "a written offset loads different", (int)i);
            /* v1 holds no epoch: a negative one (none) comes back as -1 */
            fuzz_check(b->leader_epoch ==
                           (expire >= 0 || a->leader_epoch < 0 ? -1 : a->leader_epoch),
                       "a written leader epoch loads different", (int)i);
        }
    }
    br_groups_free(again);
}

/* A member's assignment as the admin API decodes it (a consumer's
 * ConsumerProtocol Assignment): it decodes or fails cleanly, each
 * partition taking at least 4 of its bytes, each topic named within it. */
static void assignment_check(struct kp_bytes a)
{
    struct br_group_tp *tps = NULL;
    size_t n = 0;
    int rc = br_grp_assignment_decode(a.ptr, a.len, &tps, &n);
    if (rc != 0) {
        fuzz_check(tps == NULL && n == 0, "a failed assignment decode left partitions", (int)n);
        return;
    }
    fuzz_check(a.len >= 6 && n <= (size_t)a.len / 4, "more partitions than the bytes hold", (int)n);
    for (size_t i = 0; i < n; i++) {
        fuzz_check(tps[i].topic != NULL && strlen(tps[i].topic) <= (size_t)a.len,
                   "an assignment's topic longer than its bytes", (int)i);
    }
    br_group_tps_free(tps, n);
}

/* ------------------------------------------------------------- one record */

static void check_members(const struct grp_record *r)
{
    struct grp_member_iter it;
    int rc = br_grp_members_begin(r, &it);
    if (rc != 0) {
        fuzz_check(rc == KP_E_TRUNCATED || rc == KP_E_BAD_LENGTH || rc == KP_E_TOO_LARGE,
                   "members: an undocumented error", rc);
        fuzz_check(it.r.err_file != NULL && it.r.err_line > 0, "members: no detection site", rc);
        return;
    }
    fuzz_check(it.left >= 0 && (size_t)it.left <= (size_t)r->members.len / 18 + 1,
               "more members claimed than bytes", it.left);
    int32_t count = it.left;
    int32_t seen = 0;
    for (;;) {
        struct grp_record_member m;
        rc = br_grp_members_next(&it, &m);
        if (rc == KP_ITER_END) {
            fuzz_check(seen == count, "members end early", seen);
            break;
        }
        if (rc != 0) {
            fuzz_check(rc == KP_E_TRUNCATED || rc == KP_E_BAD_LENGTH,
                       "members: an undocumented error", rc);
            fuzz_check(it.r.err_file != NULL, "members: no detection site", rc);
            fuzz_check(br_grp_members_next(&it, &m) == rc, "a members error does not stick", rc);
            break;
        }
        seen++;
        fuzz_check(seen <= count, "more members than counted", seen);
        fuzz_check(
            str_inside(m.member_id, r->members) && str_inside(m.instance_id, r->members) &&
                str_inside(m.client_id, r->members) && str_inside(m.client_host, r->members) &&
                bytes_inside(m.subscription, r->members) && bytes_inside(m.assignment, r->members),
            "a member's slice outside the value", seen);
        fuzz_check(r->value_version >= 3 || m.instance_id.len == -1,
                   "an instance id before value v3", seen);
        fuzz_check(r->value_version >= 1 || m.rebalance_timeout_ms == m.session_timeout_ms,
                   "a v0 member's rebalance timeout is not its session timeout", seen);
        assignment_check(m.assignment);
    }
}

/* The key, re-encoded by the broker, decodes to the same fields; v1 and v2
 * keys (what the broker writes) come out byte for byte. */
static void key_round_trip(struct kp_bytes key, const struct grp_record *r)
{
    struct kp_writer w;
    kp_wr_init(&w, (size_t)1 << 20);
    bool offset_key = r->key_version != GRP_KEY_GROUP_V2;
    if (offset_key) {
        br_grp_enc_offset_key(&w, r->group, r->topic, r->partition);
    } else {
        br_grp_enc_group_key(&w, r->group);
    }
    fuzz_check(w.err == 0, "the key encoder failed", w.err);
    fuzz_check(w.len <= (size_t)key.len && w.len >= 2 &&
                   memcmp(w.buf + 2, key.ptr + 2, w.len - 2) == 0 &&
                   (r->key_version == GRP_KEY_OFFSET_V0 || memcmp(w.buf, key.ptr, 2) == 0),
               "a key does not re-encode to its own bytes", (int)w.len);
    struct kp_bytes k2 = {w.buf, (int32_t)w.len};
    struct grp_record r2;
    int rc = br_grp_record_decode(k2, KP_BYTES_NULL, &r2);
    fuzz_check(rc == 0 && str_eq(r2.group, r->group) &&
                   (!offset_key || (str_eq(r2.topic, r->topic) && r2.partition == r->partition)),
               "a re-encoded key decodes different", rc);
    kp_wr_free(&w);
}

/* An offset value, re-encoded by the broker, decodes to the same commit. */
static void offset_value_round_trip(struct kp_bytes value, const struct grp_record *r)
{
    struct grp_offset o;
    memset(&o, 0, sizeof o);
    o.partition = r->partition;
    o.offset = r->offset;
    o.leader_epoch = r->leader_epoch;
    o.commit_ts = r->commit_ts;
    o.expire_ts = r->expire_ts;
    struct kp_writer w;
    kp_wr_init(&w, (size_t)1 << 20);
    br_grp_enc_offset_key(&w, r->group, r->topic, r->partition);
    size_t kend = w.len;
    br_grp_enc_offset_value(&w, &o, r->metadata);
    fuzz_check(w.err == 0, "the offset value encoder failed", w.err);
    size_t vlen = w.len - kend;
    /* what the broker writes for this commit, with its fields as the broker
     * writes them (no expiry is -1, never another negative) */
    bool broker_version = (r->value_version == 1 && (r->expire_ts >= 0 || r->expire_ts == -1)) ||
                          (r->value_version == 3 && r->expire_ts < 0 && r->leader_epoch >= 0);
    if (broker_version) {
        fuzz_check(vlen <= (size_t)value.len && memcmp(w.buf + kend, value.ptr, vlen) == 0,
                   "an offset value does not re-encode to its own bytes", (int)vlen);
    }
    struct kp_bytes k2 = {w.buf, (int32_t)kend};
    struct kp_bytes v2 = {w.buf + kend, (int32_t)vlen};
    struct grp_record r2;
    int rc = br_grp_record_decode(k2, v2, &r2);
    fuzz_check(rc == 0, "a re-encoded offset value does not decode", rc);
    int64_t expire = r->expire_ts >= 0 ? r->expire_ts : -1;
    fuzz_check(r2.offset == r->offset && r2.commit_ts == r->commit_ts && r2.expire_ts == expire &&
                   str_eq(r2.metadata, r->metadata) &&
                   /* v1 holds no epoch: a negative one (none) comes back as -1 */
                   r2.leader_epoch == (expire >= 0 || r->leader_epoch < 0 ? -1 : r->leader_epoch),
               "a re-encoded offset value decodes different", r2.value_version);
    kp_wr_free(&w);
}

struct rt_group {
    struct grp_group g;
    struct grp_member **members;
    size_t n;
};

static void rt_free(struct rt_group *t)
{
    for (size_t i = 0; i < t->n; i++) {
        struct grp_member *m = t->members[i];
        kp_free(m->id);
        kp_free(m->instance_id);
        kp_free(m->client_id);
        kp_free(m->client_host);
        if (m->protocols != NULL) {
            kp_free(m->protocols[0].name);
            kp_free(m->protocols[0].metadata);
            kp_free(m->protocols);
        }
        kp_free(m->assignment);
        kp_free(m);
    }
    kp_free(t->members);
    kp_free(t->g.protocol_type);
    kp_free(t->g.protocol);
}

static uint8_t *bdup(struct kp_bytes b, int32_t *len)
{
    *len = b.len > 0 ? b.len : 0;
    if (b.len <= 0) {
        return NULL;
    }
    uint8_t *p = kp_malloc((size_t)b.len);
    fuzz_check(p != NULL, "out of memory", 0);
    memcpy(p, b.ptr, (size_t)b.len);
    return p;
}

/* The bytes the broker writes for a member's subscription or assignment. */
static bool bytes_as_written(struct kp_bytes got, struct kp_bytes had)
{
    struct kp_bytes want = had.len > 0 ? had : (struct kp_bytes){(const uint8_t *)"", 0};
    return bytes_eq(got, want);
}

/*
 * A group value rebuilt as the group it describes (its members as the
 * coordinator holds them) and written with br_grp_enc_group_value decodes
 * to the same values, each as a C string holds it; the leader when it is
 * one of the members, the subscriptions when there is a protocol.
 */
static void group_value_round_trip(const struct grp_record *r)
{
    struct grp_member_iter it;
    if (br_grp_members_begin(r, &it) != 0 || it.left > MAX_ROUND_TRIP_MEMBERS) {
        return;
    }
    struct grp_record_member *dm = kp_calloc((size_t)it.left + 1, sizeof *dm);
    fuzz_check(dm != NULL, "out of memory", 0);
    size_t n = 0;
    int rc = br_grp_members_next(&it, &dm[n]);
    while (rc == 0) {
        n++;
        rc = br_grp_members_next(&it, &dm[n]);
    }
    if (rc != KP_ITER_END) {
        kp_free(dm);
        return;
    }
    struct rt_group t;
    memset(&t, 0, sizeof t);
    t.g.protocol_type = cdup(r->protocol_type);
    t.g.generation = r->generation;
    t.g.protocol = cdup(r->protocol);
    t.g.state_ts = r->state_ts;
    t.members = kp_calloc(n + 1, sizeof(struct grp_member *));
    fuzz_check(t.members != NULL, "out of memory", 0);
    for (size_t i = 0; i < n; i++) {
        struct grp_member *m = kp_calloc(1, sizeof *m);
        fuzz_check(m != NULL, "out of memory", 0);
        t.members[t.n++] = m;
        /* the coordinator's members always have these three */
        m->id = cdup(cview(dm[i].member_id));
        m->instance_id = cdup(dm[i].instance_id);
        m->client_id = cdup(cview(dm[i].client_id));
        m->client_host = cdup(cview(dm[i].client_host));
        m->rebalance_timeout_ms = dm[i].rebalance_timeout_ms;
        m->session_timeout_ms = dm[i].session_timeout_ms;
        if (t.g.protocol != NULL) {
            m->protocols = kp_calloc(1, sizeof *m->protocols);
            fuzz_check(m->protocols != NULL, "out of memory", 0);
            m->nprotocols = 1;
            m->protocols[0].name = cdup(r->protocol);
            m->protocols[0].metadata = bdup(dm[i].subscription, &m->protocols[0].metadata_len);
        }
        m->assignment = bdup(dm[i].assignment, &m->assignment_len);
        if (r->leader.len >= 0 && t.g.leader == NULL &&
            str_eq(cview(dm[i].member_id), cview(r->leader))) {
            t.g.leader = m;
        }
    }
    t.g.members = t.members;
    t.g.nmembers = t.n;

    struct kp_writer w;
    kp_wr_init(&w, (size_t)64 << 20);
    br_grp_enc_group_key(&w, r->group);
    size_t kend = w.len;
    br_grp_enc_group_value(&w, &t.g, 1000);
    fuzz_check(w.err == 0, "the group value encoder failed", w.err);
    struct kp_bytes k2 = {w.buf, (int32_t)kend};
    struct kp_bytes v2 = {w.buf + kend, (int32_t)(w.len - kend)};
    struct grp_record r2;
    rc = br_grp_record_decode(k2, v2, &r2);
    int16_t want = br_grp_group_value_version(&t.g);
    fuzz_check(rc == 0 && r2.value_version == want, "a re-encoded group value does not decode", rc);
    fuzz_check(
        str_eq(r2.protocol_type, cview(r->protocol_type)) && r2.generation == r->generation &&
            (r->protocol.len < 0 ? r2.protocol.len == -1
                                 : str_eq(r2.protocol, cview(r->protocol))) &&
            (t.g.leader == NULL ? r2.leader.len == -1 : str_eq(r2.leader, cview(r->leader))) &&
            (r->state_ts < 0 || want < 2 || r2.state_ts == r->state_ts),
        "a re-encoded group value decodes different", 0);
    struct grp_member_iter it2;
    rc = br_grp_members_begin(&r2, &it2);
    fuzz_check(rc == 0 && it2.left == (int32_t)n, "re-encoded members do not decode", rc);
    for (size_t i = 0; i < n; i++) {
        struct grp_record_member m2;
        rc = br_grp_members_next(&it2, &m2);
        fuzz_check(rc == 0, "a re-encoded member does not decode", rc);
        const struct grp_record_member *m = &dm[i];
        bool ok = str_eq(m2.member_id, cview(m->member_id)) &&
                  (m->instance_id.len < 0 ? m2.instance_id.len == -1
                                          : str_eq(m2.instance_id, cview(m->instance_id))) &&
                  str_eq(m2.client_id, cview(m->client_id)) &&
                  str_eq(m2.client_host, cview(m->client_host)) &&
                  m2.rebalance_timeout_ms == m->rebalance_timeout_ms &&
                  m2.session_timeout_ms == m->session_timeout_ms &&
                  bytes_as_written(m2.subscription,
                                   t.g.protocol != NULL ? m->subscription : KP_BYTES_NULL) &&
                  bytes_as_written(m2.assignment, m->assignment);
        fuzz_check(ok, "a re-encoded member decodes different", (int)i);
    }
    struct grp_record_member end;
    rc = br_grp_members_next(&it2, &end);
    fuzz_check(rc == KP_ITER_END, "re-encoded members do not end", rc);
    kp_wr_free(&w);
    rt_free(&t);
    kp_free(dm);
}

/* Decodes one record and checks it; returns true when it decoded. */
static bool check_record(struct kp_bytes key, struct kp_bytes value, struct grp_record *r)
{
    int rc = br_grp_record_decode(key, value, r);
    if (rc != 0) {
        fuzz_check(rc == KP_E_UNSUPPORTED || rc == KP_E_CORRUPT || rc == KP_E_TRUNCATED ||
                       rc == KP_E_BAD_LENGTH,
                   "a record failed with an undocumented code", rc);
        fuzz_check(r->err_file != NULL && r->err_line > 0, "a decode error without its site", rc);
        return false;
    }
    bool offset_key = r->key_version == GRP_KEY_OFFSET_V0 || r->key_version == GRP_KEY_OFFSET_V1;
    fuzz_check(offset_key || r->key_version == GRP_KEY_GROUP_V2, "an unknown key version decoded",
               r->key_version);
    fuzz_check((value.len < 0) == (r->value_version == -1) && r->value_version <= 3,
               "a value version out of range", r->value_version);
    fuzz_check(r->group.len >= 0 && str_inside(r->group, key), "the group outside the key",
               r->group.len);
    if (offset_key) {
        fuzz_check(r->topic.len >= 0 && str_inside(r->topic, key), "the topic outside the key",
                   r->topic.len);
        fuzz_check(str_inside(r->metadata, value), "the metadata outside the value",
                   r->metadata.len);
        fuzz_check(r->leader_epoch == -1 || r->value_version == 3, "a leader epoch before v3",
                   r->value_version);
        fuzz_check(r->expire_ts == -1 || r->value_version == 1, "an expire timestamp but in v1",
                   r->value_version);
        fuzz_check(r->members.len == -1 && r->protocol_type.len == -1,
                   "group fields in an offset commit", 0);
    } else {
        fuzz_check(r->topic.len == -1 && r->metadata.len == -1, "offset fields in a group value",
                   0);
        fuzz_check(str_inside(r->protocol_type, value) && str_inside(r->protocol, value) &&
                       str_inside(r->leader, value),
                   "a group string outside the value", 0);
        fuzz_check(r->state_ts == -1 || r->value_version >= 2, "a state timestamp before v2",
                   r->value_version);
        if (r->value_version >= 0) {
            fuzz_check(r->members.len >= 0 && bytes_inside(r->members, value) &&
                           r->members.ptr + r->members.len == value.ptr + value.len,
                       "the members are not the value's tail", r->members.len);
            check_members(r);
        }
    }
    key_round_trip(key, r);
    if (r->value_version >= 0) {
        if (offset_key) {
            offset_value_round_trip(value, r);
        } else {
            group_value_round_trip(r);
        }
    }
    return true;
}

/* ------------------------------------------------------------- entry */

/* Reads a u16 length and that many bytes (0xffff: null); false at the end. */
static bool next_slice(const uint8_t *data, size_t size, size_t *pos, struct kp_bytes *out)
{
    if (size - *pos < 2) {
        return false;
    }
    size_t n = fuzz_load_u16(data + *pos);
    *pos += 2;
    if (n == NULL_LEN) {
        *out = KP_BYTES_NULL;
        return true;
    }
    if (n > size - *pos) {
        return false;
    }
    out->ptr = data + *pos;
    out->len = (int32_t)n;
    *pos += n;
    return true;
}

/* ------------------------------------------------------------- the log */

static char tmp_root[128];
static char part_dir[192];

static void remove_tmp_root(void)
{
    if (br_log_dir_remove(part_dir) != 0) {
        (void)fprintf(stderr, "fuzz_group_records: cannot remove %s\n", part_dir);
    }
    (void)rmdir(tmp_root);
}

static bool make_tmp_root(void)
{
    if (tmp_root[0] != '\0') {
        return true;
    }
    if (!fuzz_make_tmp_dir(tmp_root, sizeof tmp_root, "groups")) {
        return false;
    }
    (void)snprintf(part_dir, sizeof part_dir, "%s/%s-0", tmp_root, BR_OFFSETS_TOPIC);
    (void)atexit(remove_tmp_root);
    return true;
}

/* A record of the input: slices of it. */
struct rec {
    struct kp_bytes key;
    struct kp_bytes value;
};

/* Appends one batch of records [from, to) (a control batch, a commit
 * marker, when control). */
static void append_batch(struct br_log *log, int codec, const struct rec *recs, size_t from,
                         size_t to, bool control)
{
    static const uint8_t marker_key[] = {0, 0, 0, 1};
    static const uint8_t marker_value[] = {0, 0, 0, 0, 0, 5};
    struct kp_batch_builder b;
    int rc = kp_batch_builder_init(&b, control ? KP_CODEC_NONE : codec, 0, INT64_C(1700000000000),
                                   control ? 7 : -1, control ? 0 : -1, -1, FUZZ_MAX_INPUT * 2);
    fuzz_check(rc == 0, "builder", rc);
    if (control) {
        kp_batch_builder_set_flags(&b, true, true);
        struct kp_bytes k = {marker_key, (int32_t)sizeof marker_key};
        struct kp_bytes v = {marker_value, (int32_t)sizeof marker_value};
        rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, INT64_C(1700000000000), k, v, NULL, 0);
        fuzz_check(rc == 0, "builder add", rc);
    }
    for (size_t i = from; i < to && !control; i++) {
        rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, INT64_C(1700000000000), recs[i].key,
                                  recs[i].value, NULL, 0);
        fuzz_check(rc == 0, "builder add", rc);
    }
    struct kp_writer w;
    kp_wr_init(&w, FUZZ_MAX_INPUT * 4);
    rc = kp_batch_builder_finish(&b, &w);
    fuzz_check(rc == 0, "builder finish", rc);
    kp_batch_builder_free(&b);
    int64_t base = -1;
    rc = br_log_append(log, w.buf, w.len, 0, INT64_C(1700000000000), &base);
    fuzz_check(rc == 0, "br_log_append", rc);
    kp_wr_free(&w);
}

/*
 * Loads the records as the coordinator does at start-up: packed into
 * batches (`per` records each, `codec`; with `control`, a commit marker
 * batch after each) in partition 0 of a one-partition __consumer_offsets,
 * read back by br_grp_load_partition.
 */
static void load_through_log(struct br_groups *gs, const struct rec *recs, size_t n, uint8_t opts)
{
    int codec = (opts & 7) % (KP_CODEC_MAX + 1);
    bool control = (opts & 8) != 0;
    size_t per = (size_t)(opts >> 4) + 1;
    int rc = br_log_dir_remove(part_dir);
    fuzz_check(rc == 0, "cannot clear the partition dir", rc);
    struct br_log_config cfg;
    br_log_config_defaults(&cfg);
    struct br_log *log = NULL;
    rc = br_log_open(part_dir, &cfg, 0, NULL, &log);
    fuzz_check(rc == 0, "br_log_open", rc);
    for (size_t i = 0; i < n; i += per) {
        append_batch(log, codec, recs, i, i + per < n ? i + per : n, false);
        if (control) {
            append_batch(log, codec, recs, 0, 0, true);
        }
    }
    struct br_partition p;
    memset(&p, 0, sizeof p);
    p.log = log;
    p.hw = br_log_end_offset(log);
    struct grp_load_stats st = {0, 0};
    rc = br_grp_load_partition(gs, &p, &st);
    fuzz_check(rc == 0, "br_grp_load_partition failed", rc);
    br_log_close(log);
}

/* ------------------------------------------------------------- entry */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    br_logging_set_level(BR_LOG_ERROR);
    uint8_t sel = data[0];
    bool through_log = (sel & 4) != 0;
    if (through_log && !make_tmp_root()) {
        return 0;
    }
    struct rec *recs = kp_calloc(MAX_RECORDS, sizeof *recs);
    struct model m = {kp_calloc(MAX_RECORDS, sizeof(struct m_group)), 0};
    fuzz_check(recs != NULL && m.groups != NULL, "out of memory", 0);
    size_t pos = through_log ? 2 : 1;
    size_t n = 0;
    while (n < MAX_RECORDS) {
        struct kp_bytes key;
        struct kp_bytes value = KP_BYTES_NULL;
        if ((sel & 1) == 0) {
            if (n > 0 || !next_slice(data, size, &pos, &key)) {
                break;
            }
            if ((sel & 2) == 0) {
                value.ptr = data + pos;
                value.len = (int32_t)(size - pos);
            }
        } else if (!next_slice(data, size, &pos, &key) || !next_slice(data, size, &pos, &value)) {
            break;
        }
        recs[n].key = key;
        recs[n].value = value;
        n++;
    }

    struct br_groups *gs = groups_new();
    for (size_t i = 0; i < n; i++) {
        struct grp_record r;
        if (!check_record(recs[i].key, recs[i].value, &r)) {
            continue;
        }
        if (!through_log) {
            int rc = br_grp_record_apply(gs, &r);
            fuzz_check(rc == 0, "a decoded record does not apply", rc);
        }
        m_apply(&m, &r);
    }
    if (through_log) {
        load_through_log(gs, recs, n, data[1]);
    }
    check_state(gs, &m);
    check_state_round_trip(gs);
    br_groups_free(gs);
    m_free(&m);
    kp_free(recs);
    return 0;
}
