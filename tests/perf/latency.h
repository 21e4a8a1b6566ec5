/*
 * Latency samples in microseconds with exact percentiles: every sample is kept
 * (8 bytes each, the capacity fixed when created) and sorted once at the end.
 */
#ifndef SAMSA_TESTS_PERF_LATENCY_H
#define SAMSA_TESTS_PERF_LATENCY_H

#include <stddef.h>
#include <stdint.h>

struct perf_latency {
    int64_t *us;    /* samples; owned */
    size_t len;     /* samples held */
    size_t cap;     /* ceiling, fixed at init */
    size_t dropped; /* samples that arrived past the ceiling */
};

/* Allocates room for cap samples. 0 on success, -1 when out of memory. */
__attribute__((warn_unused_result)) int perf_latency_init(struct perf_latency *l, size_t cap);

/* Adds one sample; past the ceiling it only counts it as dropped. */
void perf_latency_add(struct perf_latency *l, int64_t us);

/* Sorts the samples; call once before perf_latency_pct. */
void perf_latency_sort(struct perf_latency *l);

/* The nearest-rank percentile pct (0 < pct <= 100) of sorted samples; -1 when there are none. */
int64_t perf_latency_pct(const struct perf_latency *l, double pct);

/* Frees the samples; a zeroed or freed struct is a no-op. */
void perf_latency_free(struct perf_latency *l);

#endif
