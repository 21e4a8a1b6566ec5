/* samsa-broker: decimal integers parsed from text (see number.h). */
#include "base/number.h"

bool br_num_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    if (len == 0) {
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        uint64_t digit = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - digit) / 10) {
            return false;
        }
        v = v * 10 + digit;
    }
    if (v > max) {
        return false;
    }
    *out = v;
    return true;
}

bool br_num_parse_i64(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
    if (len == 0) {
        return false;
    }
    size_t i = 0;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    /* the magnitude, at most 2^63 (INT64_MIN's) */
    uint64_t mag = 0;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (!br_num_parse_u64(s + i, len - i, limit, &mag)) {
        return false;
    }
    int64_t v = 0;
    if (!neg) {
        v = (int64_t)mag;
    } else if (mag == (uint64_t)INT64_MAX + 1) {
        v = INT64_MIN;
    } else {
        v = -(int64_t)mag;
    }
    if (v < min || v > max) {
        return false;
    }
    *out = v;
    return true;
}

bool br_num_parse_i32(const char *s, size_t len, int32_t min, int32_t max, int32_t *out)
{
    int64_t v = 0;
    if (min > max || !br_num_parse_i64(s, len, min, max, &v)) {
        return false;
    }
    *out = (int32_t)v;
    return true;
}

int br_num_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}
