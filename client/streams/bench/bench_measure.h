/*
 * What the streams bench programs measure with (samsa-streams-bench and
 * samsa-streams-bench-rdkafka): the monotonic clock, this process's CPU
 * time (user + system, every thread: getrusage) and its peak RSS (VmHWM).
 */
#ifndef SAMSA_STREAMS_BENCH_MEASURE_H
#define SAMSA_STREAMS_BENCH_MEASURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline double now_s(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        return 0;
    }
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static inline long hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
        }
    }
    if (f != NULL) {
        (void)fclose(f);
    }
    return kb;
}

#endif
