/*
 * samsa-broker: decimal integers parsed from text, the one parser the
 * broker's files, znodes and configs go through.
 *
 * The form is Java's Long.parseLong with radix 10: an optional '+' or '-'
 * and then one or more ASCII digits, nothing else (no spaces, no base
 * prefix, no trailing byte); leading zeros are allowed. The value must lie in
 * [min, max], without overflow on the way. A caller with a stricter form
 * (no sign, no leading zero, a fixed width) checks it before calling.
 * @locality any thread
 */
#ifndef SAMSA_BROKER_NUMBER_H
#define SAMSA_BROKER_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* s[0..len) as a signed decimal in [min, max]: true with *out; false, *out
 * untouched, for an empty text, a sign alone, any other byte, or a value
 * outside [min, max] or beyond 64 bits. */
__attribute__((warn_unused_result)) bool br_num_parse_i64(const char *s, size_t len, int64_t min,
                                                          int64_t max, int64_t *out);

/* The same for digits alone (no sign), in [0, max]. */
__attribute__((warn_unused_result)) bool br_num_parse_u64(const char *s, size_t len, uint64_t max,
                                                          uint64_t *out);

/* br_num_parse_i64 into an int32_t: [min, max] within 32 bits. */
__attribute__((warn_unused_result)) bool br_num_parse_i32(const char *s, size_t len, int32_t min,
                                                          int32_t max, int32_t *out);

/* qsort's comparison of two int64_t. */
int br_num_cmp_i64(const void *a, const void *b);

#endif
