/*
 * Command-line numbers and lists for the perf tools: strtoll/strtod with every
 * check (whole string consumed, no overflow, within [min, max]).
 */
#ifndef SAMSA_TESTS_PERF_ARGS_H
#define SAMSA_TESTS_PERF_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* Parses a decimal integer in [min, max] into *out. 0 on success, -1 otherwise (*out untouched). */
__attribute__((warn_unused_result)) int perf_parse_i64(const char *s, int64_t min, int64_t max,
                                                       int64_t *out);

/* Parses a finite decimal number in [min, max] into *out. 0 on success, -1 otherwise. */
__attribute__((warn_unused_result)) int perf_parse_double(const char *s, double min, double max,
                                                          double *out);

/*
 * Parses a partition list such as "0-31" or "0,4,7-9" into ids[0..*n), each in
 * [0, limit), at most cap entries. 0 on success, -1 otherwise.
 */
__attribute__((warn_unused_result)) int perf_parse_id_list(const char *s, int32_t limit,
                                                           int32_t *ids, size_t cap, size_t *n);

#endif
