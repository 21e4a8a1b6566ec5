/* samsa-broker: replication quotas (see replication_quota.h). */
#include "quota/replication_quota.h"

#include <math.h>

int br_repl_quota_init(struct br_repl_quota *q, int32_t window_num, int32_t window_size_s)
{
    *q = (struct br_repl_quota){0};
    if (window_size_s < 1) {
        return KP_E_INVALID_ARG;
    }
    /* SimpleRate (ReplicationQuotaManager.sensor): at least one window */
    return br_rate_init(&q->rate, window_num, (int64_t)window_size_s * 1000, 1);
}

void br_repl_quota_free(struct br_repl_quota *q)
{
    if (q != NULL) {
        br_rate_free(&q->rate);
    }
}

bool br_repl_quota_unbounded(int64_t bound)
{
    return bound < 0 || bound == INT64_MAX;
}

void br_repl_quota_record(struct br_repl_quota *q, int64_t bytes, int64_t now_ms)
{
    if (bytes > 0) {
        br_rate_record(&q->rate, (double)bytes, now_ms);
        q->bytes_total += bytes;
    }
}

double br_repl_quota_rate(struct br_repl_quota *q, int64_t now_ms)
{
    return br_rate_measure(&q->rate, now_ms, NULL);
}

bool br_repl_quota_exceeded(struct br_repl_quota *q, int64_t bound, int64_t now_ms)
{
    /* Quota.acceptable of an upper bound: value <= bound */
    return !br_repl_quota_unbounded(bound) && br_repl_quota_rate(q, now_ms) > (double)bound;
}

int64_t br_repl_quota_wait_ms(struct br_repl_quota *q, int64_t bound, int64_t now_ms)
{
    if (!br_repl_quota_exceeded(q, bound, now_ms)) {
        return 0;
    }
    int64_t w = 0;
    (void)br_rate_measure(&q->rate, now_ms, &w);
    double total = br_rate_total(&q->rate, now_ms);
    /* total * 1000 / (w + wait) <= bound; samples that expire meanwhile
     * only bring it sooner, and a window later it is measured again */
    double wait = ceil(total * 1000.0 / (double)bound) - (double)w;
    int64_t cap = q->rate.window_ms;
    if (!(wait < (double)cap)) {
        return cap;
    }
    return wait < 1 ? 1 : (int64_t)wait;
}

void br_repl_quota_throttled(struct br_repl_quota *q)
{
    q->throttled_total++;
}
