/*
 * Command-line numbers and lists for the perf tools (see args.h).
 */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int perf_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (s == NULL || *s == '\0') {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') {
        return -1;
    }
    if (v < min || v > max) {
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

int perf_parse_double(const char *s, double min, double max, double *out)
{
    if (s == NULL || *s == '\0') {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) {
        return -1;
    }
    if (v < min || v > max) {
        return -1;
    }
    *out = v;
    return 0;
}

/* Reads one decimal id at *p in [0, limit), advancing *p past it. */
static int parse_id(const char **p, int32_t limit, int32_t *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9') {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || v < 0 || v >= (long)limit) {
        return -1;
    }
    *p = end;
    *out = (int32_t)v;
    return 0;
}

int perf_parse_id_list(const char *s, int32_t limit, int32_t *ids, size_t cap, size_t *n)
{
    if (s == NULL || *s == '\0') {
        return -1;
    }
    size_t count = 0;
    const char *p = s;
    for (;;) {
        int32_t lo = 0;
        int32_t hi = 0;
        if (parse_id(&p, limit, &lo) != 0) {
            return -1;
        }
        hi = lo;
        if (*p == '-') {
            p++;
            if (parse_id(&p, limit, &hi) != 0 || hi < lo) {
                return -1;
            }
        }
        for (int32_t id = lo; id <= hi; id++) {
            if (count >= cap) {
                return -1;
            }
            ids[count++] = id;
        }
        if (*p == '\0') {
            break;
        }
        if (*p != ',') {
            return -1;
        }
        p++;
    }
    *n = count;
    return 0;
}
