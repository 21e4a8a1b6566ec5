/*
 * What the perf tools measure of themselves and the little they share besides
 * their options: the monotonic clock, this process's CPU time and memory, a
 * cheap pseudo-random sequence, and checks of option words.
 */
#ifndef SAMSA_TESTS_PERF_PROCSTAT_H
#define SAMSA_TESTS_PERF_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t perf_now_ns(void);

/* CPU seconds (user + system) used so far by this process, every thread included. */
double perf_cpu_seconds(void);

/* One kB figure of /proc/self/status (VmRSS, VmHWM); -1 when it cannot be read. */
int64_t perf_status_kb(const char *field);

/* xorshift64*: payload contents and offsets; not for anything that needs secrecy. */
uint64_t perf_next_random(uint64_t *state);

/* A --label value: only [A-Za-z0-9_.:-], so it goes into the JSON line unquoted-safe. */
bool perf_label_ok(const char *s);

/* Whether s is one of names[], a NULL-terminated list. */
bool perf_one_of(const char *s, const char *const *names);

#endif
