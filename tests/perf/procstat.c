/*
 * Clocks, CPU time, memory and small checks shared by the perf tools (see procstat.h).
 */
#define _GNU_SOURCE /* clock_gettime, getrusage */

#include "procstat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

int64_t perf_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + (int64_t)ts.tv_nsec;
}

double perf_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        return 0.0;
    }
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

int64_t perf_status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) {
        return -1;
    }
    char line[256];
    size_t flen = strlen(field);
    int64_t kb = -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            char *end = NULL;
            long long v = strtoll(line + flen + 1, &end, 10);
            if (end != line + flen + 1) {
                kb = v;
            }
            break;
        }
    }
    fclose(f);
    return kb;
}

uint64_t perf_next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(2685821657736338717);
}

bool perf_label_ok(const char *s)
{
    for (const char *p = s; *p != '\0'; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == ':' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

bool perf_one_of(const char *s, const char *const *names)
{
    for (size_t i = 0; names[i] != NULL; i++) {
        if (strcmp(s, names[i]) == 0) {
            return true;
        }
    }
    return false;
}
