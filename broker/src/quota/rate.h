/*
 * samsa-broker: Kafka's sampled rate (clients/.../metrics/stats/
 * SampledStat.java, Rate.java and SimpleRate.java in Kafka 2.0): the sum of
 * window_num samples of window_ms each over the time they span. The client
 * quotas (quota.h) and the replication quotas (replication_quota.h) measure
 * with it.
 *
 * A record goes into the current sample, or starts the next one once the
 * current has lasted a window; a sample older than the whole window
 * (window_num * window_ms) starts again from 0 when measured
 * (purgeObsoleteSamples). The rate is the sum over the time from the
 * oldest sample to now, at least min_windows whole windows: Rate takes
 * window_num - 1 (its windowSize), SimpleRate one.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_QUOTA_RATE_H
#define SAMSA_BROKER_QUOTA_RATE_H

#include <stdint.h>

#include <samsa-protocol/err.h>

struct br_rate_sample {
    int64_t start_ms; /* lastWindowMs: when the sample began */
    double value;
};

struct br_rate {
    struct br_rate_sample *samples; /* owned: window_num of them, the first nused used */
    int32_t window_num;
    int32_t nused;
    int32_t current;
    int32_t min_windows;
    int64_t window_ms;
};

/* r measures over window_num samples of window_ms; min_windows: Rate's
 * window_num - 1, SimpleRate's 1. 0, KP_E_INVALID_ARG (a count or a size
 * below 1) or KP_E_NOMEM (r then frees as empty). */
KP_MUST_CHECK int br_rate_init(struct br_rate *r, int32_t window_num, int64_t window_ms,
                               int32_t min_windows);
/* NULL-safe; r may be initialised again. */
void br_rate_free(struct br_rate *r);
/* SampledStat.record (a negative value takes bytes back). */
void br_rate_record(struct br_rate *r, double value, int64_t now_ms);
/* Rate.measure: per second at now_ms; *window_out (may be NULL) the span
 * in ms it divided by (Rate.windowSize). */
double br_rate_measure(struct br_rate *r, int64_t now_ms, int64_t *window_out);
/* The sum of the samples in the window at now_ms. */
double br_rate_total(struct br_rate *r, int64_t now_ms);

#endif
