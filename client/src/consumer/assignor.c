/*
 * The classic consumer protocol's bytes (ConsumerProtocolSubscription and
 * ConsumerProtocolAssignment, reference §A4.2), the range and roundrobin
 * assignors as Java's RangeAssignor and RoundRobinAssignor compute them, and
 * the eager sticky assignor (Kafka 2.0's "sticky": balanced, then keeping
 * as much of each member's previous assignment as balance allows), and
 * cooperative-sticky (the same assignment, then nothing handed to a new
 * owner in the generation its current owner gives it up: KIP-429).
 * Pure functions.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define MAX_TOPICS 100000
#define MAX_PARTS 1000000

static struct kp_str cstr(const char *s)
{
    return kp_str_c(s);
}

/* tps grouped by topic, in the order given: [topic STRING, partitions [INT32]] */
static void write_topic_partitions(struct kp_writer *w, const struct sc_tp *tps, int count)
{
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
}

void sc_subscription_encode(struct kp_writer *w, char *const *topics, int topic_count,
                            const struct sc_tp *owned, int owned_count)
{
    sc_subscription_encode_ud(w, topics, topic_count, owned, owned_count, NULL, 0);
}

void sc_subscription_encode_ud(struct kp_writer *w, char *const *topics, int topic_count,
                               const struct sc_tp *owned, int owned_count, const uint8_t *ud,
                               size_t ud_len)
{
    kp_wr_i16(w, 1); /* v1: v0 + OwnedPartitions; readers of v0 ignore the rest */
    kp_wr_array_len(w, false, topic_count);
    for (int i = 0; i < topic_count; i++) {
        kp_wr_string(w, cstr(topics[i]));
    }
    /* empty, not null, as librdkafka */
    kp_wr_bytes(w, (struct kp_bytes){ud != NULL ? ud : (const uint8_t *)"", (int32_t)ud_len});
    /* OwnedPartitions grouped by topic, in the order given (callers sort). */
    write_topic_partitions(w, owned, owned_count);
}

void sc_subscription_encode_v3(struct kp_writer *w, char *const *topics, int topic_count,
                               const struct sc_tp *owned, int owned_count, int32_t generation)
{
    kp_wr_i16(w, 3);
    kp_wr_array_len(w, false, topic_count);
    for (int i = 0; i < topic_count; i++) {
        kp_wr_string(w, cstr(topics[i]));
    }
    /* UserData as Java's CooperativeStickyAssignor writes it: the generation */
    uint8_t ud[4] = {(uint8_t)((uint32_t)generation >> 24), (uint8_t)((uint32_t)generation >> 16),
                     (uint8_t)((uint32_t)generation >> 8), (uint8_t)generation};
    kp_wr_bytes(w, (struct kp_bytes){ud, (int32_t)sizeof(ud)});
    write_topic_partitions(w, owned, owned_count);
    kp_wr_i32(w, generation);
    kp_wr_string(w, KP_STR_NULL); /* RackId */
}

/* OwnedPartitions as written on the wire: [topic STRING, partitions [INT32]]. */
static int read_topic_partitions(struct kp_reader *r, struct sc_tp **out, int *count_out)
{
    *out = NULL;
    *count_out = 0;
    int32_t nt = kp_rd_array_len(r, false, false, MAX_TOPICS, 6);
    if (r->err != 0) {
        return SAMSA_ERR_BAD_RESPONSE;
    }
    /* Allocation follows the bytes present: each partition takes 4. */
    size_t cap = kp_rd_remaining(r) / 4 + 1;
    struct sc_tp *tps = kp_calloc(cap, sizeof(*tps));
    if (tps == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    int n = 0;
    int err = SAMSA_ERR_BAD_RESPONSE;
    for (int32_t t = 0; t < nt; t++) {
        struct kp_str name = kp_rd_string(r);
        int32_t np = kp_rd_array_len(r, false, false, MAX_PARTS, 4);
        if (r->err != 0 || name.len < 0) {
            goto out_bad;
        }
        for (int32_t i = 0; i < np; i++) {
            int32_t part = kp_rd_i32(r);
            if (r->err != 0 || (size_t)n >= cap) {
                goto out_bad;
            }
            tps[n].topic = sc_strndup(name.ptr, (size_t)name.len);
            if (tps[n].topic == NULL) {
                err = SAMSA_ERR_NOMEM;
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
    return err;
}

/* A Subscription's fields up to its UserData (v0's whole): r is left after
 * them. SAMSA_ERR_BAD_RESPONSE when they do not decode. */
static int read_to_user_data(struct kp_reader *r, int16_t *version, struct kp_bytes *ud)
{
    *version = kp_rd_i16(r);
    int32_t n = kp_rd_array_len(r, false, false, MAX_TOPICS, 2);
    for (int32_t i = 0; i < n && r->err == 0; i++) {
        (void)kp_rd_string(r);
    }
    *ud = kp_rd_bytes(r);
    return r->err != 0 || *version < 0 ? SAMSA_ERR_BAD_RESPONSE : SAMSA_OK;
}

int sc_subscription_ownership(const uint8_t *p, size_t len, struct sc_tp **tps, int *count,
                              int32_t *generation)
{
    *tps = NULL;
    *count = 0;
    *generation = -1;
    struct kp_reader r;
    kp_rd_init(&r, p, len);
    int16_t version = 0;
    struct kp_bytes ud;
    if (read_to_user_data(&r, &version, &ud) != SAMSA_OK) {
        return SAMSA_ERR_BAD_RESPONSE;
    }
    struct sc_tp *owned = NULL;
    int owned_count = 0;
    int32_t gen = -1;
    if (version >= 1) {
        int err = read_topic_partitions(&r, &owned, &owned_count);
        if (err != SAMSA_OK) {
            return err;
        }
        if (version >= 2) {
            gen = kp_rd_i32(&r);
            if (r.err != 0) {
                sc_tps_free(owned, owned_count);
                return SAMSA_ERR_BAD_RESPONSE;
            }
        }
    }
    /* The fields win; the UserData fills in what they do not say. */
    if ((owned_count == 0 || gen < 0) && ud.len > 0) {
        if (ud.len == 4) {
            /* Java's CooperativeStickyAssignor: the generation alone */
            struct kp_reader u;
            kp_rd_init(&u, ud.ptr, (size_t)ud.len);
            int32_t ugen = kp_rd_i32(&u);
            gen = gen < 0 ? ugen : gen;
        } else {
            struct sc_tp *prev = NULL;
            int prev_count = 0;
            int32_t ugen = -1;
            int err = sc_sticky_user_data_decode(ud.ptr, (size_t)ud.len, &prev, &prev_count, &ugen);
            if (err == SAMSA_ERR_NOMEM) {
                sc_tps_free(owned, owned_count);
                return err;
            }
            if (err == SAMSA_OK && owned_count == 0) {
                sc_tps_free(owned, owned_count);
                owned = prev;
                owned_count = prev_count;
                prev = NULL;
                prev_count = 0;
            }
            sc_tps_free(prev, prev_count);
            gen = gen < 0 ? ugen : gen;
        }
    }
    *tps = owned;
    *count = owned_count;
    *generation = gen < 0 ? -1 : gen;
    return SAMSA_OK;
}

int sc_subscription_user_data(const uint8_t *p, size_t len, struct kp_bytes *ud)
{
    struct kp_reader r;
    kp_rd_init(&r, p, len);
    int16_t version = 0;
    struct kp_bytes b;
    if (read_to_user_data(&r, &version, &b) != SAMSA_OK) {
        return SAMSA_ERR_BAD_RESPONSE;
    }
    *ud = b.len > 0 ? b : (struct kp_bytes){(const uint8_t *)"", 0};
    return SAMSA_OK;
}

void sc_sticky_user_data_encode(struct kp_writer *w, const struct sc_tp *tps, int count,
                                int32_t generation)
{
    write_topic_partitions(w, tps, count);
    kp_wr_i32(w, generation);
}

int sc_sticky_user_data_decode(const uint8_t *p, size_t len, struct sc_tp **out, int *count_out,
                               int32_t *generation)
{
    *generation = -1;
    struct kp_reader r;
    kp_rd_init(&r, p, len);
    int err = read_topic_partitions(&r, out, count_out);
    if (err == SAMSA_OK && kp_rd_remaining(&r) >= 4) {
        *generation = kp_rd_i32(&r); /* the second layout */
    }
    return err;
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
    if (r.err != 0 || version < 0) {
        return SAMSA_ERR_BAD_RESPONSE;
    }
    /* AssignedPartitions; UserData after it is not read */
    return read_topic_partitions(&r, out, count_out);
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
    sc_tps_free(m->owned, m->owned_count);
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

/*
 * The sticky assignor, eager (Kafka 2.0's StickyAssignor as its documentation
 * describes it; this is our own construction):
 *   1. every member keeps the partitions its UserData says it had, when the
 *      partition still exists and the member still subscribes to its topic;
 *      a partition claimed twice goes to the claim of the higher generation,
 *      then to the member first in member-id order;
 *   2. the partitions nobody kept go, those with the fewest subscribed
 *      members first, each to the subscribed member with the fewest
 *      partitions (member-id order breaks ties);
 *   3. while a member has at least two more partitions than another that
 *      subscribes to the topic of one of them, one moves (one given out in
 *      step 2 rather than one kept, when it can). Every move lowers the sum
 *      of the squared counts, so this ends; when it does the assignment is
 *      balanced: no partition could go from a member to one with two fewer.
 * members are sorted by member id; sorted[] by topic.
 */
static int sticky_assign(struct sc_member *members, int n, const struct sc_topic_count *sorted,
                         int count_n, int *caps)
{
    int err = SAMSA_ERR_NOMEM;
    size_t total = 0;
    size_t *base = kp_calloc((size_t)count_n + 1, sizeof(*base));
    int *eligible = kp_calloc((size_t)count_n + 1, sizeof(*eligible));
    int *order = kp_calloc((size_t)n + 1, sizeof(*order));
    int *cnt = kp_calloc((size_t)n + 1, sizeof(*cnt));
    int *owner = NULL;
    int *tix = NULL; /* each partition's topic, an index of sorted[] */
    bool *kept = NULL;
    size_t *pending = NULL;
    if (base == NULL || eligible == NULL || order == NULL || cnt == NULL) {
        goto out;
    }
    for (int t = 0; t < count_n; t++) {
        base[t] = total;
        total += sorted[t].partitions > 0 ? (size_t)sorted[t].partitions : 0;
        for (int i = 0; i < n; i++) {
            eligible[t] += subscribes(&members[i], sorted[t].topic) ? 1 : 0;
        }
    }
    owner = kp_calloc(total + 1, sizeof(*owner));
    tix = kp_calloc(total + 1, sizeof(*tix));
    kept = kp_calloc(total + 1, sizeof(*kept));
    pending = kp_calloc(total + 1, sizeof(*pending));
    if (owner == NULL || tix == NULL || kept == NULL || pending == NULL) {
        goto out;
    }
    for (int t = 0; t < count_n; t++) {
        for (int32_t p = 0; p < sorted[t].partitions; p++) {
            owner[base[t] + (size_t)p] = -1;
            tix[base[t] + (size_t)p] = t;
        }
    }

    /* 1. claims, the higher generation first, then member-id order */
    for (int i = 0; i < n; i++) {
        int j = i;
        while (j > 0 && members[order[j - 1]].owned_generation < members[i].owned_generation) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (int k = 0; k < n; k++) {
        int i = order[k];
        for (int o = 0; o < members[i].owned_count; o++) {
            const struct sc_tp *tp = &members[i].owned[o];
            struct sc_topic_count key = {tp->topic, 0};
            const struct sc_topic_count *tc =
                bsearch(&key, sorted, (size_t)count_n, sizeof(*sorted), cmp_count);
            if (tc == NULL || tp->partition < 0 || tp->partition >= tc->partitions ||
                !subscribes(&members[i], tp->topic)) {
                continue;
            }
            size_t x = base[tc - sorted] + (size_t)tp->partition;
            if (owner[x] < 0) {
                owner[x] = i;
                kept[x] = true;
                cnt[i]++;
            }
        }
    }

    /* 2. the rest, the most constrained first */
    size_t np = 0;
    for (int e = 1; e <= n; e++) {
        for (int t = 0; t < count_n; t++) {
            if (eligible[t] != e) {
                continue;
            }
            for (int32_t p = 0; p < sorted[t].partitions; p++) {
                if (owner[base[t] + (size_t)p] < 0) {
                    pending[np++] = base[t] + (size_t)p;
                }
            }
        }
    }
    for (size_t k = 0; k < np; k++) {
        size_t x = pending[k];
        int best = -1;
        for (int i = 0; i < n; i++) {
            if ((best < 0 || cnt[i] < cnt[best]) &&
                subscribes(&members[i], sorted[tix[x]].topic)) {
                best = i;
            }
        }
        owner[x] = best;
        cnt[best]++;
    }

    /* 3. moves from the fullest to the emptiest that can take one */
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = 1; i < n; i++) { /* by count, descending; member-id order within */
            int v = order[i];
            int j = i;
            while (j > 0 && cnt[order[j - 1]] < cnt[v]) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = v;
        }
        for (int ai = 0; ai < n && !moved; ai++) {
            int a = order[ai];
            for (int bi = n - 1; bi > ai && !moved && cnt[a] - cnt[order[bi]] >= 2; bi--) {
                int b = order[bi];
                size_t pick = total;
                for (size_t x = 0; x < total; x++) {
                    if (owner[x] == a && (pick == total || kept[pick]) &&
                        subscribes(&members[b], sorted[tix[x]].topic)) {
                        pick = x;
                    }
                }
                if (pick < total) {
                    owner[pick] = b;
                    kept[pick] = false;
                    cnt[a]--;
                    cnt[b]++;
                    moved = true;
                }
            }
        }
    }

    err = SAMSA_OK;
    for (int t = 0; t < count_n && err == SAMSA_OK; t++) {
        for (int32_t p = 0; p < sorted[t].partitions && err == SAMSA_OK; p++) {
            int i = owner[base[t] + (size_t)p];
            if (i >= 0) {
                err = add_tp(&members[i], sorted[t].topic, p, &caps[i]);
            }
        }
    }
out:
    kp_free(base);
    kp_free(eligible);
    kp_free(order);
    kp_free(cnt);
    kp_free(owner);
    kp_free(tix);
    kp_free(kept);
    kp_free(pending);
    return err;
}

/* Whether another member than members[self] owns tp now. */
static bool owned_by_other(const struct sc_member *members, int n, int self, const struct sc_tp *tp)
{
    for (int i = 0; i < n; i++) {
        for (int o = 0; i != self && o < members[i].owned_count; o++) {
            if (members[i].owned[o].partition == tp->partition &&
                strcmp(members[i].owned[o].topic, tp->topic) == 0) {
                return true;
            }
        }
    }
    return false;
}

/*
 * cooperative-sticky's adjustment (KIP-429): a partition assigned to a
 * member that another member owns now is left out of this generation. Its
 * owner sees it missing, gives it up (revokes only what moved) and joins
 * again at once; the next generation, where nobody owns it, hands it over.
 * Any claim counts, also one the sticky step overruled (an older
 * generation's): no partition is ever consumed by two members at once.
 */
static void cooperative_adjust(struct sc_member *members, int n)
{
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int a = 0; a < members[i].assigned_count; a++) {
            struct sc_tp tp = members[i].assigned[a];
            bool mine = false;
            for (int o = 0; o < members[i].owned_count && !mine; o++) {
                mine = members[i].owned[o].partition == tp.partition &&
                       strcmp(members[i].owned[o].topic, tp.topic) == 0;
            }
            if (!mine && owned_by_other(members, n, i, &tp)) {
                kp_free(tp.topic);
                continue;
            }
            members[i].assigned[k++] = tp;
        }
        members[i].assigned_count = k;
    }
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
    if (assignor == SC_ASSIGNOR_STICKY) {
        err = sticky_assign(members, n, sorted, count_n, caps);
    } else if (assignor == SC_ASSIGNOR_COOPERATIVE_STICKY) {
        err = sticky_assign(members, n, sorted, count_n, caps);
        if (err == SAMSA_OK) {
            cooperative_adjust(members, n);
        }
    } else if (assignor == SC_ASSIGNOR_RANGE) {
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
