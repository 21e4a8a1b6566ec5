/* samsa-broker: Kafka's sampled rate (see rate.h). */
#include "quota/rate.h"

#include <samsa-protocol/alloc.h>

int br_rate_init(struct br_rate *r, int32_t window_num, int64_t window_ms, int32_t min_windows)
{
    *r = (struct br_rate){0};
    if (window_num < 1 || window_ms < 1 || min_windows < 0) {
        return KP_E_INVALID_ARG;
    }
    r->samples = kp_calloc((size_t)window_num, sizeof *r->samples);
    if (r->samples == NULL) {
        return KP_E_NOMEM;
    }
    r->window_num = window_num;
    r->window_ms = window_ms;
    r->min_windows = min_windows;
    return 0;
}

void br_rate_free(struct br_rate *r)
{
    if (r != NULL) {
        kp_free(r->samples);
        *r = (struct br_rate){0};
    }
}

/* Samples older than the whole window start again (purgeObsoleteSamples). */
static void purge(struct br_rate *r, int64_t now_ms)
{
    int64_t expire = (int64_t)r->window_num * r->window_ms;
    for (int32_t i = 0; i < r->nused; i++) {
        if (now_ms - r->samples[i].start_ms >= expire) {
            r->samples[i] = (struct br_rate_sample){now_ms, 0};
        }
    }
}

void br_rate_record(struct br_rate *r, double value, int64_t now_ms)
{
    if (r->samples == NULL) {
        return;
    }
    if (r->nused == 0) {
        r->samples[0] = (struct br_rate_sample){now_ms, 0};
        r->nused = 1;
        r->current = 0;
    }
    if (now_ms - r->samples[r->current].start_ms >= r->window_ms) {
        r->current = (r->current + 1) % r->window_num;
        if (r->current >= r->nused) {
            r->nused = r->current + 1;
        }
        r->samples[r->current] = (struct br_rate_sample){now_ms, 0};
    }
    r->samples[r->current].value += value;
}

double br_rate_total(struct br_rate *r, int64_t now_ms)
{
    purge(r, now_ms);
    double total = 0;
    for (int32_t i = 0; i < r->nused; i++) {
        total += r->samples[i].value;
    }
    return total;
}

/* Rate.windowSize and SimpleRate.windowSize: from the oldest sample to
 * now, at least min_windows whole windows. */
static int64_t window_size(struct br_rate *r, int64_t now_ms)
{
    purge(r, now_ms);
    int64_t oldest = now_ms;
    for (int32_t i = 0; i < r->nused; i++) {
        if (r->samples[i].start_ms < oldest) {
            oldest = r->samples[i].start_ms;
        }
    }
    int64_t elapsed = now_ms - oldest;
    int64_t full = elapsed / r->window_ms;
    if (full < r->min_windows) {
        if (r->min_windows == 1) {
            elapsed = r->window_ms; /* SimpleRate: max(elapsed, one window) */
        } else {
            elapsed += (r->min_windows - full) * r->window_ms;
        }
    }
    return elapsed;
}

double br_rate_measure(struct br_rate *r, int64_t now_ms, int64_t *window_out)
{
    if (r->samples == NULL) {
        if (window_out != NULL) {
            *window_out = 0;
        }
        return 0;
    }
    int64_t w = window_size(r, now_ms);
    double total = br_rate_total(r, now_ms);
    if (window_out != NULL) {
        *window_out = w;
    }
    return w > 0 ? total * 1000.0 / (double)w : 0;
}
