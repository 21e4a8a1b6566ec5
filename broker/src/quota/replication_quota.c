/* samsa-broker: replication quotas (see replication_quota.h). */
#include "quota/replication_quota.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    return bound <= 0 || bound == INT64_MAX;
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

/* ------------------------------------------------------------ the lists */

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    return s;
}

/* An unsigned decimal at *s (at most 10 digits): its value, and *s past it;
 * -1 when there is none. */
static int64_t read_id(const char **s)
{
    const char *p = *s;
    int64_t v = 0;
    int n = 0;
    while (*p >= '0' && *p <= '9' && n < 10) {
        v = v * 10 + (*p - '0');
        p++;
        n++;
    }
    if (n == 0 || (*p >= '0' && *p <= '9')) {
        return -1;
    }
    *s = p;
    return v;
}

/* One "p:b" item at *s (spaces around it skipped): 0 and *s at the ',' or
 * the end after it, or -1. */
static int read_item(const char **s, int64_t *partition, int64_t *broker)
{
    const char *p = skip_space(*s);
    *partition = read_id(&p);
    if (*partition < 0 || *p != ':') {
        return -1;
    }
    p++;
    *broker = read_id(&p);
    if (*broker < 0) {
        return -1;
    }
    p = skip_space(p);
    if (*p != ',' && *p != '\0') {
        return -1;
    }
    *s = p;
    return 0;
}

int br_repl_throttled_validate(const char *list, char *msg, size_t msglen)
{
    const char *s = skip_space(list);
    if (*s == '\0' || (*s == '*' && *skip_space(s + 1) == '\0')) {
        return 0;
    }
    for (;;) {
        int64_t partition = 0;
        int64_t broker = 0;
        if (read_item(&s, &partition, &broker) != 0) {
            /* Kafka's message (ThrottledReplicaListValidator) */
            (void)snprintf(msg, msglen,
                           "must be the literal '*' or a list of replicas in the following "
                           "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
            return KP_E_INVALID_ARG;
        }
        if (*s == '\0') {
            return 0;
        }
        s++; /* the ',' */
    }
}

bool br_repl_throttled(const char *list, int32_t partition, int32_t broker)
{
    if (list == NULL) {
        return false;
    }
    const char *s = skip_space(list);
    if (*s == '\0') {
        return false;
    }
    if (*s == '*') {
        return true;
    }
    while (*s != '\0') {
        int64_t p = 0;
        int64_t b = 0;
        if (read_item(&s, &p, &b) != 0) {
            return false; /* validated when set: not reached */
        }
        if (p == partition && b == broker) {
            return true;
        }
        if (*s == ',') {
            s++;
        }
    }
    return false;
}
