/* samsa-protocol: bounded reader and ceilinged writer (see buf.h). */
#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>

#include <string.h>

struct kp_str kp_str_c(const char *s)
{
    struct kp_str r = KP_STR_NULL;
    if (s != NULL) {
        size_t n = strlen(s);
        r.ptr = s;
        r.len = n > INT32_MAX ? INT32_MAX : (int32_t)n;
    }
    return r;
}

bool kp_str_eq(struct kp_str a, struct kp_str b)
{
    if (a.len != b.len) {
        return false;
    }
    return a.len <= 0 || memcmp(a.ptr, b.ptr, (size_t)a.len) == 0;
}

bool kp_str_eq_c(struct kp_str a, const char *s)
{
    return kp_str_eq(a, kp_str_c(s));
}

bool kp_bytes_eq(struct kp_bytes a, struct kp_bytes b)
{
    if (a.len != b.len) {
        return false;
    }
    return a.len <= 0 || memcmp(a.ptr, b.ptr, (size_t)a.len) == 0;
}

/* ---------------------------------------------------------------- reader */

void kp_rd_init(struct kp_reader *r, const void *buf, size_t len)
{
    r->buf = buf;
    r->len = buf != NULL ? len : 0;
    r->off = 0;
    r->err = 0;
    r->err_file = NULL;
    r->err_line = 0;
}

void kp_rd_fail_at(struct kp_reader *r, int err, const char *file, int line)
{
    if (r->err == 0) {
        r->err = err;
        r->err_file = file;
        r->err_line = line;
    }
}

/* Returns a pointer to the next n bytes and consumes them, or NULL. */
static const uint8_t *take(struct kp_reader *r, size_t n, const char *file, int line)
{
    if (r->err != 0) {
        return NULL;
    }
    if (r->len - r->off < n) {
        kp_rd_fail_at(r, KP_E_TRUNCATED, file, line);
        return NULL;
    }
    const uint8_t *p = r->buf + r->off;
    r->off += n;
    return p;
}

#define TAKE(r, n) take((r), (n), __FILE__, __LINE__)

int8_t kp_rd_i8(struct kp_reader *r)
{
    const uint8_t *p = TAKE(r, 1);
    return p != NULL ? (int8_t)p[0] : 0;
}

int16_t kp_rd_i16(struct kp_reader *r)
{
    const uint8_t *p = TAKE(r, 2);
    return p != NULL ? (int16_t)kp_load_be16(p) : 0;
}

uint16_t kp_rd_u16(struct kp_reader *r)
{
    const uint8_t *p = TAKE(r, 2);
    return p != NULL ? kp_load_be16(p) : 0;
}

int32_t kp_rd_i32(struct kp_reader *r)
{
    const uint8_t *p = TAKE(r, 4);
    return p != NULL ? (int32_t)kp_load_be32(p) : 0;
}

uint32_t kp_rd_u32(struct kp_reader *r)
{
    const uint8_t *p = TAKE(r, 4);
    return p != NULL ? kp_load_be32(p) : 0;
}

int64_t kp_rd_i64(struct kp_reader *r)
{
    const uint8_t *p = TAKE(r, 8);
    return p != NULL ? (int64_t)kp_load_be64(p) : 0;
}

bool kp_rd_bool(struct kp_reader *r)
{
    const uint8_t *p = TAKE(r, 1);
    return p != NULL && p[0] != 0;
}

double kp_rd_f64(struct kp_reader *r)
{
    const uint8_t *p = TAKE(r, 8);
    double d = 0.0;
    if (p != NULL) {
        uint64_t u = kp_load_be64(p);
        memcpy(&d, &u, sizeof d);
    }
    return d;
}

struct kp_uuid kp_rd_uuid(struct kp_reader *r)
{
    struct kp_uuid u;
    const uint8_t *p = TAKE(r, 16);
    if (p != NULL) {
        memcpy(u.b, p, 16);
    } else {
        memset(u.b, 0, 16);
    }
    return u;
}

uint64_t kp_rd_uvarlong(struct kp_reader *r)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 10; i++) {
        const uint8_t *p = TAKE(r, 1);
        if (p == NULL) {
            return 0;
        }
        if (i == 9 && p[0] > 1) {
            /* the tenth byte may only carry bit 63 */
            kp_rd_fail(r, KP_E_VARINT);
            return 0;
        }
        v |= (uint64_t)(p[0] & 0x7f) << (7 * i);
        if ((p[0] & 0x80) == 0) {
            return v;
        }
    }
    kp_rd_fail(r, KP_E_VARINT);
    return 0;
}

uint32_t kp_rd_uvarint(struct kp_reader *r)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < 5; i++) {
        const uint8_t *p = TAKE(r, 1);
        if (p == NULL) {
            return 0;
        }
        if (i == 4 && p[0] > 0x0f) {
            /* the fifth byte may only carry bits 28-31 */
            kp_rd_fail(r, KP_E_VARINT);
            return 0;
        }
        v |= (uint32_t)(p[0] & 0x7f) << (7 * i);
        if ((p[0] & 0x80) == 0) {
            return v;
        }
    }
    kp_rd_fail(r, KP_E_VARINT);
    return 0;
}

int32_t kp_rd_varint(struct kp_reader *r)
{
    uint32_t u = kp_rd_uvarint(r);
    return (int32_t)((u >> 1) ^ (~(u & 1) + 1));
}

int64_t kp_rd_varlong(struct kp_reader *r)
{
    uint64_t u = kp_rd_uvarlong(r);
    return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

static struct kp_str str_of_len(struct kp_reader *r, int64_t n, const char *file, int line)
{
    struct kp_str s = KP_STR_NULL;
    if (r->err != 0 || n == -1) {
        return s;
    }
    if (n < -1 || n > INT32_MAX) {
        kp_rd_fail_at(r, KP_E_BAD_LENGTH, file, line);
        return s;
    }
    const uint8_t *p = take(r, (size_t)n, file, line);
    if (p != NULL) {
        s.ptr = (const char *)p;
        s.len = (int32_t)n;
    }
    return s;
}

struct kp_str kp_rd_string(struct kp_reader *r)
{
    int16_t n = kp_rd_i16(r);
    return str_of_len(r, n, __FILE__, __LINE__);
}

struct kp_str kp_rd_compact_string(struct kp_reader *r)
{
    uint32_t n = kp_rd_uvarint(r);
    return str_of_len(r, (int64_t)n - 1, __FILE__, __LINE__);
}

static struct kp_bytes bytes_of(struct kp_str s)
{
    struct kp_bytes b = {(const uint8_t *)s.ptr, s.len};
    return b;
}

struct kp_bytes kp_rd_bytes(struct kp_reader *r)
{
    int32_t n = kp_rd_i32(r);
    return bytes_of(str_of_len(r, n, __FILE__, __LINE__));
}

struct kp_bytes kp_rd_compact_bytes(struct kp_reader *r)
{
    uint32_t n = kp_rd_uvarint(r);
    return bytes_of(str_of_len(r, (int64_t)n - 1, __FILE__, __LINE__));
}

struct kp_bytes kp_rd_varint_bytes(struct kp_reader *r)
{
    int32_t n = kp_rd_varint(r);
    return bytes_of(str_of_len(r, n, __FILE__, __LINE__));
}

struct kp_bytes kp_rd_raw(struct kp_reader *r, int32_t n)
{
    if (n < 0) {
        kp_rd_fail(r, KP_E_BAD_LENGTH);
        return KP_BYTES_NULL;
    }
    return bytes_of(str_of_len(r, n, __FILE__, __LINE__));
}

void kp_rd_skip(struct kp_reader *r, size_t n)
{
    (void)TAKE(r, n);
}

int32_t kp_rd_array_len(struct kp_reader *r, bool compact, bool nullable, int32_t max,
                        size_t min_elem_size)
{
    int64_t n;
    if (compact) {
        n = (int64_t)kp_rd_uvarint(r) - 1;
    } else {
        n = kp_rd_i32(r);
    }
    if (r->err != 0) {
        return 0;
    }
    if (n == -1) {
        if (!nullable) {
            kp_rd_fail(r, KP_E_BAD_LENGTH);
            return 0;
        }
        return -1;
    }
    if (n < -1) {
        kp_rd_fail(r, KP_E_BAD_LENGTH);
        return 0;
    }
    if (n > max) {
        kp_rd_fail(r, KP_E_TOO_LARGE);
        return 0;
    }
    /* n <= INT32_MAX and min_elem_size is small: no overflow in 64 bits */
    if (min_elem_size > 0 && (uint64_t)n > (r->len - r->off) / min_elem_size) {
        kp_rd_fail(r, KP_E_BAD_LENGTH);
        return 0;
    }
    return (int32_t)n;
}

uint32_t kp_rd_skip_tags(struct kp_reader *r)
{
    uint32_t count = kp_rd_uvarint(r);
    /* each tag takes at least two bytes: bound the loop by the input */
    if (r->err == 0 && count > (r->len - r->off) / 2) {
        kp_rd_fail(r, KP_E_BAD_LENGTH);
        return 0;
    }
    uint32_t prev = 0;
    for (uint32_t i = 0; i < count && r->err == 0; i++) {
        uint32_t tag = kp_rd_uvarint(r);
        if (i > 0 && tag <= prev) {
            /* tags must be strictly ascending */
            kp_rd_fail(r, KP_E_CORRUPT);
            return 0;
        }
        prev = tag;
        uint32_t size = kp_rd_uvarint(r);
        kp_rd_skip(r, size);
    }
    return r->err == 0 ? count : 0;
}

/* ---------------------------------------------------------------- writer */

/* Zigzag without shifting negative values: the sign becomes all-ones or 0. */
static uint32_t zigzag32(int32_t v)
{
    uint32_t u = (uint32_t)v;
    return (u << 1) ^ (0u - (u >> 31));
}

static uint64_t zigzag64(int64_t v)
{
    uint64_t u = (uint64_t)v;
    return (u << 1) ^ (0u - (u >> 63));
}

void kp_wr_init(struct kp_writer *w, size_t max)
{
    w->buf = NULL;
    w->len = 0;
    w->cap = 0;
    w->max = max;
    w->err = 0;
    w->external = false;
}

void kp_wr_init_fixed(struct kp_writer *w, void *buf, size_t cap)
{
    w->buf = buf;
    w->len = 0;
    w->cap = cap;
    w->max = cap;
    w->err = 0;
    w->external = true;
}

void kp_wr_free(struct kp_writer *w)
{
    if (w == NULL) {
        return;
    }
    if (!w->external) {
        kp_free(w->buf);
        w->buf = NULL;
        w->cap = 0;
    }
    w->len = 0;
}

uint8_t *kp_wr_steal(struct kp_writer *w, size_t *len_out)
{
    uint8_t *b = w->buf;
    *len_out = w->len;
    w->buf = NULL;
    w->len = 0;
    w->cap = 0;
    w->err = 0;
    return b;
}

void kp_wr_reset(struct kp_writer *w)
{
    w->len = 0;
    w->err = 0;
}

void kp_wr_fail(struct kp_writer *w, int err)
{
    if (w->err == 0) {
        w->err = err;
    }
}

uint8_t *kp_wr_reserve(struct kp_writer *w, size_t n)
{
    if (w->err != 0) {
        return NULL;
    }
    if (w->max - w->len < n) {
        kp_wr_fail(w, KP_E_TOO_LARGE);
        return NULL;
    }
    if (w->cap - w->len < n) {
        if (w->external) {
            kp_wr_fail(w, KP_E_TOO_LARGE);
            return NULL;
        }
        size_t want = w->len + n;
        size_t ncap = w->cap < 256 ? 256 : w->cap;
        while (ncap < want) {
            ncap = ncap > SIZE_MAX / 2 ? want : ncap * 2;
        }
        if (ncap > w->max) {
            ncap = w->max;
        }
        uint8_t *nb = kp_realloc(w->buf, ncap);
        if (nb == NULL) {
            kp_wr_fail(w, KP_E_NOMEM);
            return NULL;
        }
        w->buf = nb;
        w->cap = ncap;
    }
    uint8_t *p = w->buf + w->len;
    w->len += n;
    return p;
}

void kp_wr_raw(struct kp_writer *w, const void *p, size_t n)
{
    if (n == 0) {
        return;
    }
    uint8_t *d = kp_wr_reserve(w, n);
    if (d != NULL) {
        memcpy(d, p, n);
    }
}

void kp_wr_i8(struct kp_writer *w, int8_t v)
{
    uint8_t *d = kp_wr_reserve(w, 1);
    if (d != NULL) {
        d[0] = (uint8_t)v;
    }
}

void kp_wr_bool(struct kp_writer *w, bool v)
{
    kp_wr_i8(w, v ? 1 : 0);
}

void kp_wr_u16(struct kp_writer *w, uint16_t v)
{
    uint8_t *d = kp_wr_reserve(w, 2);
    if (d != NULL) {
        kp_store_be16(d, v);
    }
}

void kp_wr_i16(struct kp_writer *w, int16_t v)
{
    kp_wr_u16(w, (uint16_t)v);
}

void kp_wr_u32(struct kp_writer *w, uint32_t v)
{
    uint8_t *d = kp_wr_reserve(w, 4);
    if (d != NULL) {
        kp_store_be32(d, v);
    }
}

void kp_wr_i32(struct kp_writer *w, int32_t v)
{
    kp_wr_u32(w, (uint32_t)v);
}

void kp_wr_i64(struct kp_writer *w, int64_t v)
{
    uint8_t *d = kp_wr_reserve(w, 8);
    if (d != NULL) {
        kp_store_be64(d, (uint64_t)v);
    }
}

void kp_wr_f64(struct kp_writer *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    kp_wr_i64(w, (int64_t)u);
}

void kp_wr_uuid(struct kp_writer *w, struct kp_uuid v)
{
    kp_wr_raw(w, v.b, 16);
}

void kp_wr_uvarlong(struct kp_writer *w, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    kp_wr_raw(w, tmp, n);
}

void kp_wr_uvarint(struct kp_writer *w, uint32_t v)
{
    kp_wr_uvarlong(w, v);
}

void kp_wr_varint(struct kp_writer *w, int32_t v)
{
    kp_wr_uvarlong(w, zigzag32(v));
}

void kp_wr_varlong(struct kp_writer *w, int64_t v)
{
    kp_wr_uvarlong(w, zigzag64(v));
}

size_t kp_uvarint_size(uint32_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t kp_varint_size(int32_t v)
{
    return kp_uvarint_size(zigzag32(v));
}

size_t kp_varlong_size(int64_t v)
{
    uint64_t u = zigzag64(v);
    size_t n = 1;
    while (u >= 0x80) {
        u >>= 7;
        n++;
    }
    return n;
}

void kp_wr_string(struct kp_writer *w, struct kp_str s)
{
    if (s.len < 0) {
        kp_wr_i16(w, -1);
        return;
    }
    if (s.len > INT16_MAX) {
        kp_wr_fail(w, KP_E_TOO_LARGE);
        return;
    }
    kp_wr_i16(w, (int16_t)s.len);
    kp_wr_raw(w, s.ptr, (size_t)s.len);
}

void kp_wr_compact_string(struct kp_writer *w, struct kp_str s)
{
    if (s.len < 0) {
        kp_wr_uvarint(w, 0);
        return;
    }
    kp_wr_uvarint(w, (uint32_t)s.len + 1);
    kp_wr_raw(w, s.ptr, (size_t)s.len);
}

void kp_wr_bytes(struct kp_writer *w, struct kp_bytes b)
{
    if (b.len < 0) {
        kp_wr_i32(w, -1);
        return;
    }
    kp_wr_i32(w, b.len);
    kp_wr_raw(w, b.ptr, (size_t)b.len);
}

void kp_wr_compact_bytes(struct kp_writer *w, struct kp_bytes b)
{
    if (b.len < 0) {
        kp_wr_uvarint(w, 0);
        return;
    }
    kp_wr_uvarint(w, (uint32_t)b.len + 1);
    kp_wr_raw(w, b.ptr, (size_t)b.len);
}

void kp_wr_varint_bytes(struct kp_writer *w, struct kp_bytes b)
{
    if (b.len < 0) {
        kp_wr_varint(w, -1);
        return;
    }
    kp_wr_varint(w, b.len);
    kp_wr_raw(w, b.ptr, (size_t)b.len);
}

void kp_wr_array_len(struct kp_writer *w, bool compact, int32_t count)
{
    if (count < -1) {
        kp_wr_fail(w, KP_E_INVALID_ARG);
        return;
    }
    if (compact) {
        kp_wr_uvarint(w, (uint32_t)(count + 1));
    } else {
        kp_wr_i32(w, count);
    }
}

void kp_wr_empty_tags(struct kp_writer *w)
{
    kp_wr_uvarint(w, 0);
}

void kp_wr_patch_i32(struct kp_writer *w, size_t at, int32_t v)
{
    if (w->err != 0) {
        return;
    }
    if (w->len < 4 || at > w->len - 4) {
        kp_wr_fail(w, KP_E_INVALID_ARG);
        return;
    }
    kp_store_be32(w->buf + at, (uint32_t)v);
}
