/* samsa-broker: the leader-epoch cache (see leader_epoch.h). */
#include "storage/leader_epoch.h"

#include <samsa-protocol/alloc.h>

#include <string.h>

/* More epochs than this in one partition means something is badly wrong. */
#define EPOCHS_MAX ((size_t)1 << 24)

void br_leader_epochs_init(struct br_leader_epochs *c)
{
    c->v = NULL;
    c->n = 0;
    c->cap = 0;
}

void br_leader_epochs_free(struct br_leader_epochs *c)
{
    kp_free(c->v);
    br_leader_epochs_init(c);
}

static int reserve(struct br_leader_epochs *c, size_t want)
{
    if (want <= c->cap) {
        return 0;
    }
    if (want > EPOCHS_MAX) {
        return KP_E_NOMEM;
    }
    size_t cap = c->cap > 0 ? c->cap : 8;
    while (cap < want) {
        cap *= 2;
    }
    struct br_epoch_entry *v = kp_realloc(c->v, cap * sizeof *v);
    if (v == NULL) {
        return KP_E_NOMEM;
    }
    c->v = v;
    c->cap = cap;
    return 0;
}

int br_leader_epochs_set(struct br_leader_epochs *c, const struct br_epoch_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (e[i].epoch < 0 || e[i].start_offset < 0) {
            return KP_E_INVALID_ARG;
        }
        if (i > 0 && (e[i].epoch <= e[i - 1].epoch || e[i].start_offset < e[i - 1].start_offset)) {
            return KP_E_INVALID_ARG;
        }
    }
    int rc = reserve(c, n);
    if (rc != 0) {
        return rc;
    }
    if (n > 0) {
        memcpy(c->v, e, n * sizeof *e);
    }
    c->n = n;
    return 0;
}

int br_leader_epochs_assign(struct br_leader_epochs *c, int32_t epoch, int64_t start_offset)
{
    if (epoch < 0 || start_offset < 0) {
        return KP_E_INVALID_ARG;
    }
    if (c->n > 0) {
        const struct br_epoch_entry *last = &c->v[c->n - 1];
        if (last->epoch == epoch && start_offset >= last->start_offset) {
            return 0;
        }
    }
    int rc = reserve(c, c->n + 1);
    if (rc != 0) {
        return rc;
    }
    while (c->n > 0 &&
           (c->v[c->n - 1].epoch >= epoch || c->v[c->n - 1].start_offset >= start_offset)) {
        c->n--;
    }
    c->v[c->n].epoch = epoch;
    c->v[c->n].start_offset = start_offset;
    c->n++;
    return 1;
}

bool br_leader_epochs_truncate_from_end(struct br_leader_epochs *c, int64_t end_offset)
{
    size_t n = c->n;
    while (c->n > 0 && c->v[c->n - 1].start_offset >= end_offset) {
        c->n--;
    }
    return c->n != n;
}

bool br_leader_epochs_truncate_from_start(struct br_leader_epochs *c, int64_t start_offset)
{
    size_t k = 0; /* entries starting at or before start_offset */
    while (k < c->n && c->v[k].start_offset <= start_offset) {
        k++;
    }
    if (k == 0) {
        return false;
    }
    bool changed = k > 1 || c->v[k - 1].start_offset != start_offset;
    struct br_epoch_entry keep = {c->v[k - 1].epoch, start_offset};
    memmove(c->v + 1, c->v + k, (c->n - k) * sizeof *c->v);
    c->v[0] = keep;
    c->n -= k - 1;
    return changed;
}

int32_t br_leader_epochs_latest(const struct br_leader_epochs *c)
{
    return c->n > 0 ? c->v[c->n - 1].epoch : BR_EPOCH_UNDEFINED;
}

void br_leader_epochs_end_offset_for(const struct br_leader_epochs *c, int32_t epoch, int64_t leo,
                                     int32_t *epoch_out, int64_t *end_offset)
{
    *epoch_out = BR_EPOCH_UNDEFINED;
    *end_offset = BR_EPOCH_OFFSET_UNDEFINED;
    if (epoch < 0 || c->n == 0) {
        return;
    }
    if (c->v[c->n - 1].epoch == epoch) {
        *epoch_out = epoch;
        *end_offset = leo;
        return;
    }
    /* the first entry with a larger epoch */
    size_t lo = 0;
    size_t hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->v[mid].epoch <= epoch) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == c->n) {
        return; /* above every known epoch */
    }
    *end_offset = c->v[lo].start_offset;
    *epoch_out = lo == 0 ? epoch : c->v[lo - 1].epoch;
}
