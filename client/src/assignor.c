/*
 * The classic consumer protocol's bytes (ConsumerProtocolSubscription and
 * ConsumerProtocolAssignment, reference §A4.2) and the range and roundrobin
 * assignors as Java's RangeAssignor and RoundRobinAssignor compute them.
 * Pure functions.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_TOPICS 100000
#define MAX_PARTS 1000000

static struct kp_str cstr(const char *s)
{
    return kp_str_c(s);
}

void sc_subscription_encode(struct kp_writer *w, char *const *topics, int topic_count,
                            const struct sc_tp *owned, int owned_count)
{
    kp_wr_i16(w, 1); /* v1: v0 + OwnedPartitions; readers of v0 ignore the rest */
    kp_wr_array_len(w, false, topic_count);
    for (int i = 0; i < topic_count; i++) {
        kp_wr_string(w, cstr(topics[i]));
    }
    kp_wr_bytes(w, (struct kp_bytes){(const uint8_t *)"", 0}); /* empty, not null, as librdkafka */
    /* OwnedPartitions grouped by topic, in the order given (callers sort). */
    int groups = 0;
    for (int i = 0; i < owned_count; i++) {
        if (i == 0 || strcmp(owned[i].topic, owned[i - 1].topic) != 0) {
            groups++;
        }
    }
    kp_wr_array_len(w, false, groups);
    for (int i = 0; i < owned_count;) {
        int j = i;
        while (j < owned_count && strcmp(owned[j].topic, owned[i].topic) == 0) {
            j++;
        }
        kp_wr_string(w, cstr(owned[i].topic));
        kp_wr_array_len(w, false, j - i);
        for (int k = i; k < j; k++) {
            kp_wr_i32(w, owned[k].partition);
        }
        i = j;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sc_subscription_decode(const uint8_t *p, size_t len, char ***topics_out, int *count_out)
{
    struct kp_reader r;
    kp_rd_init(&r, p, len);
    int16_t version = kp_rd_i16(&r);
    int32_t n = kp_rd_array_len(&r, false, false, MAX_TOPICS, 2);
    if (r.err != 0 || version < 0) {
        return SAMSA_ERR_BAD_RESPONSE;
    }
    char **topics = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*topics));
    if (topics == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    int got = 0;
    for (int32_t i = 0; i < n; i++) {
        struct kp_str s = kp_rd_string(&r);
        if (r.err != 0 || s.len < 0) {
            goto out_bad;
        }
        topics[got] = sc_strndup(s.ptr, (size_t)s.len);
        if (topics[got] == NULL) {
            goto out_bad;
        }
        got++;
    }
    /* UserData and the v1+ fields follow; this member's assignors do not
     * use them. */
    qsort(topics, (size_t)got, sizeof(*topics), cmp_str);
    *topics_out = topics;
    *count_out = got;
    return SAMSA_OK;
out_bad:
    for (int i = 0; i < got; i++) {
        kp_free(topics[i]);
    }
    kp_free(topics);
    return SAMSA_ERR_BAD_RESPONSE;
}

void sc_assignment_encode(struct kp_writer *w, const struct sc_tp *tps, int count)
{
    kp_wr_i16(w, 0);
    int groups = 0;
    for (int i = 0; i < count; i++) {
        if (i == 0 || strcmp(tps[i].topic, tps[i - 1].topic) != 0) {
            groups++;
        }
    }
    kp_wr_array_len(w, false, groups);
    for (int i = 0; i < count;) {
        int j = i;
        while (j < count && strcmp(tps[j].topic, tps[i].topic) == 0) {
            j++;
        }
        kp_wr_string(w, cstr(tps[i].topic));
        kp_wr_array_len(w, false, j - i);
        for (int k = i; k < j; k++) {
            kp_wr_i32(w, tps[k].partition);
        }
        i = j;
    }
    kp_wr_bytes(w, (struct kp_bytes){(const uint8_t *)"", 0});
}

void sc_tps_free(struct sc_tp *tps, int count)
{
    if (tps == NULL) {
        return;
    }
    for (int i = 0; i < count; i++) {
        kp_free(tps[i].topic);
    }
    kp_free(tps);
}

int sc_assignment_decode(const uint8_t *p, size_t len, struct sc_tp **out, int *count_out)
{
    *out = NULL;
    *count_out = 0;
    if (len == 0) {
        return SAMSA_OK; /* an empty assignment: nothing for this member */
    }
    struct kp_reader r;
    kp_rd_init(&r, p, len);
    int16_t version = kp_rd_i16(&r);
    int32_t nt = kp_rd_array_len(&r, false, false, MAX_TOPICS, 6);
    if (r.err != 0 || version < 0) {
        return SAMSA_ERR_BAD_RESPONSE;
    }
    /* Allocation follows the bytes present: each partition takes 4. */
    size_t cap = kp_rd_remaining(&r) / 4 + 1;
    struct sc_tp *tps = kp_calloc(cap, sizeof(*tps));
    if (tps == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    int n = 0;
    for (int32_t t = 0; t < nt; t++) {
        struct kp_str name = kp_rd_string(&r);
        int32_t np = kp_rd_array_len(&r, false, false, MAX_PARTS, 4);
        if (r.err != 0 || name.len < 0) {
            goto out_bad;
        }
        for (int32_t i = 0; i < np; i++) {
            int32_t part = kp_rd_i32(&r);
            if (r.err != 0 || (size_t)n >= cap) {
                goto out_bad;
            }
            tps[n].topic = sc_strndup(name.ptr, (size_t)name.len);
            if (tps[n].topic == NULL) {
                goto out_bad;
            }
            tps[n].partition = part;
            n++;
        }
    }
    *out = tps;
    *count_out = n;
    return SAMSA_OK;
out_bad:
    sc_tps_free(tps, n);
    return SAMSA_ERR_BAD_RESPONSE;
}

const char *sc_assignor_name(int assignor)
{
    return assignor == SC_ASSIGNOR_ROUNDROBIN ? "roundrobin" : "range";
}

void sc_member_clear(struct sc_member *m)
{
    kp_free(m->member_id);
    kp_free(m->instance_id);
    for (int i = 0; i < m->topic_count; i++) {
        kp_free(m->topics[i]);
    }
    kp_free(m->topics);
    sc_tps_free(m->assigned, m->assigned_count);
    memset(m, 0, sizeof(*m));
}

static int cmp_member(const void *a, const void *b)
{
    const struct sc_member *x = a;
    const struct sc_member *y = b;
    return strcmp(x->member_id, y->member_id);
}

static bool subscribes(const struct sc_member *m, const char *topic)
{
    for (int i = 0; i < m->topic_count; i++) {
        if (strcmp(m->topics[i], topic) == 0) {
            return true;
        }
    }
    return false;
}

static int add_tp(struct sc_member *m, const char *topic, int32_t partition, int *cap)
{
    if (m->assigned_count == *cap || m->assigned == NULL) {
        int ncap = *cap > 0 ? *cap * 2 : 8;
        struct sc_tp *n = kp_realloc(m->assigned, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            return SAMSA_ERR_NOMEM;
        }
        m->assigned = n;
        *cap = ncap;
    }
    m->assigned[m->assigned_count].topic = sc_strdup(topic);
    if (m->assigned[m->assigned_count].topic == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    m->assigned[m->assigned_count].partition = partition;
    m->assigned_count++;
    return SAMSA_OK;
}

static int cmp_count(const void *a, const void *b)
{
    return strcmp(((const struct sc_topic_count *)a)->topic,
                  ((const struct sc_topic_count *)b)->topic);
}

int sc_assign(int assignor, struct sc_member *members, int n, const struct sc_topic_count *counts,
              int count_n)
{
    int err = SAMSA_OK;
    qsort(members, (size_t)n, sizeof(*members), cmp_member);
    struct sc_topic_count *sorted = kp_calloc((size_t)(count_n > 0 ? count_n : 1), sizeof(*sorted));
    int *caps = kp_calloc((size_t)(n > 0 ? n : 1), sizeof(*caps));
    if (sorted == NULL || caps == NULL) {
        err = SAMSA_ERR_NOMEM;
        goto out;
    }
    memcpy(sorted, counts, (size_t)count_n * sizeof(*sorted));
    qsort(sorted, (size_t)count_n, sizeof(*sorted), cmp_count);
    for (int i = 0; i < n; i++) {
        sc_tps_free(members[i].assigned, members[i].assigned_count);
        members[i].assigned = NULL;
        members[i].assigned_count = 0;
    }
    if (assignor == SC_ASSIGNOR_RANGE) {
        /* Per topic: the subscribed members in member-id order take
         * P / C partitions each, the first P % C one more. */
        for (int t = 0; t < count_n && err == SAMSA_OK; t++) {
            int c = 0;
            for (int i = 0; i < n; i++) {
                c += subscribes(&members[i], sorted[t].topic) ? 1 : 0;
            }
            if (c == 0 || sorted[t].partitions <= 0) {
                continue;
            }
            int32_t per = sorted[t].partitions / c;
            int32_t extra = sorted[t].partitions % c;
            int k = 0;
            for (int i = 0; i < n && err == SAMSA_OK; i++) {
                if (!subscribes(&members[i], sorted[t].topic)) {
                    continue;
                }
                int32_t start = per * k + (k < extra ? k : extra);
                int32_t len = per + (k < extra ? 1 : 0);
                for (int32_t p = start; p < start + len && err == SAMSA_OK; p++) {
                    err = add_tp(&members[i], sorted[t].topic, p, &caps[i]);
                }
                k++;
            }
        }
    } else {
        /* Every partition of every topic, sorted by topic then partition,
         * dealt around the members in order, skipping members not
         * subscribed to its topic. */
        int next = 0;
        for (int t = 0; t < count_n && err == SAMSA_OK; t++) {
            for (int32_t p = 0; p < sorted[t].partitions && err == SAMSA_OK; p++) {
                int tries = 0;
                while (tries < n && !subscribes(&members[next], sorted[t].topic)) {
                    next = (next + 1) % n;
                    tries++;
                }
                if (tries == n) {
                    break; /* nobody subscribes to this topic */
                }
                err = add_tp(&members[next], sorted[t].topic, p, &caps[next]);
                next = (next + 1) % n;
            }
        }
    }
out:
    kp_free(sorted);
    kp_free(caps);
    return err;
}
