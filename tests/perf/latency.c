/*
 * Latency samples with exact percentiles (see latency.h).
 */
#include "latency.h"

#include <math.h>
#include <stdlib.h>

int perf_latency_init(struct perf_latency *l, size_t cap)
{
    l->len = 0;
    l->dropped = 0;
    l->cap = cap;
    l->us = calloc(cap > 0 ? cap : 1, sizeof(*l->us));
    return l->us != NULL ? 0 : -1;
}

void perf_latency_add(struct perf_latency *l, int64_t us)
{
    if (l->len < l->cap) {
        l->us[l->len++] = us;
    } else {
        l->dropped++;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void perf_latency_sort(struct perf_latency *l)
{
    if (l->len > 1) {
        qsort(l->us, l->len, sizeof(*l->us), cmp_i64);
    }
}

int64_t perf_latency_pct(const struct perf_latency *l, double pct)
{
    if (l->len == 0) {
        return -1;
    }
    /* nearest rank: the smallest sample with at least pct % of samples at or below it */
    double rank = ceil(pct / 100.0 * (double)l->len);
    size_t idx = rank < 1.0 ? 0 : (size_t)rank - 1;
    if (idx >= l->len) {
        idx = l->len - 1;
    }
    return l->us[idx];
}

void perf_latency_free(struct perf_latency *l)
{
    free(l->us);
    l->us = NULL;
    l->len = 0;
    l->cap = 0;
}
