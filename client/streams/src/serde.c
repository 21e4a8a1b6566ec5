/* The built-in serdes, in Java's formats (Kafka 2.0's
 * clients/src/main/java/org/apache/kafka/common/serialization/
 * StringSerializer.java: UTF-8; LongSerializer.java, IntegerSerializer.java:
 * big-endian two's complement; DoubleSerializer.java: the IEEE 754 bits of
 * Double.doubleToLongBits, big-endian), and the windowed key of
 * streams/.../kstream/TimeWindowedSerializer.java (key bytes, then the
 * window start as a big-endian long). */
#include "internal.h"

#include <string.h>

void st_put_be64(uint8_t out[8], uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        out[i] = (uint8_t)(v & 0xff);
        v >>= 8;
    }
}

uint64_t st_get_be64(const uint8_t in[8])
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | in[i];
    }
    return v;
}

void samsa_st_long_encode(int64_t v, uint8_t out[8])
{
    st_put_be64(out, (uint64_t)v);
}

bool samsa_st_long_decode(struct samsa_st_bytes b, int64_t *out)
{
    if (b.data == NULL || b.len != 8) {
        return false;
    }
    *out = (int64_t)st_get_be64(b.data);
    return true;
}

void samsa_st_int_encode(int32_t v, uint8_t out[4])
{
    uint32_t u = (uint32_t)v;
    for (int i = 3; i >= 0; i--) {
        out[i] = (uint8_t)(u & 0xff);
        u >>= 8;
    }
}

bool samsa_st_int_decode(struct samsa_st_bytes b, int32_t *out)
{
    if (b.data == NULL || b.len != 4) {
        return false;
    }
    const uint8_t *p = b.data;
    *out = (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
                     (uint32_t)p[3]);
    return true;
}

void samsa_st_double_encode(double v, uint8_t out[8])
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    st_put_be64(out, bits);
}

bool samsa_st_double_decode(struct samsa_st_bytes b, double *out)
{
    if (b.data == NULL || b.len != 8) {
        return false;
    }
    uint64_t bits = st_get_be64(b.data);
    memcpy(out, &bits, sizeof bits);
    return true;
}

struct samsa_st_bytes samsa_st_str(const char *s)
{
    struct samsa_st_bytes b = {s, s != NULL ? strlen(s) : 0};
    return b;
}

bool samsa_st_windowed_key_split(struct samsa_st_bytes b, struct samsa_st_bytes *key,
                                 int64_t *window_start)
{
    if (b.data == NULL || b.len < 8) {
        return false;
    }
    key->data = b.data;
    key->len = b.len - 8;
    *window_start = (int64_t)st_get_be64((const uint8_t *)b.data + b.len - 8);
    return true;
}

static size_t string_serialize(const void *value, void *buf, size_t cap)
{
    size_t n = strlen(value);
    if (n <= cap) {
        memcpy(buf, value, n);
    }
    return n;
}

static int string_deserialize(struct samsa_st_bytes bytes, void *out)
{
    *(struct samsa_st_bytes *)out = bytes;
    return SAMSA_OK;
}

static size_t long_serialize(const void *value, void *buf, size_t cap)
{
    if (cap >= 8) {
        samsa_st_long_encode(*(const int64_t *)value, buf);
    }
    return 8;
}

static int long_deserialize(struct samsa_st_bytes bytes, void *out)
{
    return samsa_st_long_decode(bytes, out) ? SAMSA_OK : SAMSA_ERR_INVALID_ARG;
}

static size_t int_serialize(const void *value, void *buf, size_t cap)
{
    if (cap >= 4) {
        samsa_st_int_encode(*(const int32_t *)value, buf);
    }
    return 4;
}

static int int_deserialize(struct samsa_st_bytes bytes, void *out)
{
    return samsa_st_int_decode(bytes, out) ? SAMSA_OK : SAMSA_ERR_INVALID_ARG;
}

static size_t double_serialize(const void *value, void *buf, size_t cap)
{
    if (cap >= 8) {
        samsa_st_double_encode(*(const double *)value, buf);
    }
    return 8;
}

static int double_deserialize(struct samsa_st_bytes bytes, void *out)
{
    return samsa_st_double_decode(bytes, out) ? SAMSA_OK : SAMSA_ERR_INVALID_ARG;
}

const struct samsa_st_serde samsa_st_serde_string = {"string", string_serialize,
                                                     string_deserialize};
const struct samsa_st_serde samsa_st_serde_long = {"long", long_serialize, long_deserialize};
const struct samsa_st_serde samsa_st_serde_int = {"int", int_serialize, int_deserialize};
const struct samsa_st_serde samsa_st_serde_double = {"double", double_serialize,
                                                     double_deserialize};
