/* samsa-protocol: the table-driven codec (see schema.h). */
#include <samsa-protocol/schema.h>

#include <inttypes.h>
#include <stdio.h> /* snprintf into local buffers only: no I/O */
#include <string.h>

/* Nesting deeper than this is never produced by our descriptors; it bounds
 * recursion should a descriptor ever be wrong. */
#define MAX_DEPTH 16

struct ctx {
    int16_t version;
    bool flexible;
    struct kp_arena *arena;
    const struct kp_splice_hook *hook; /* encode only; may be NULL */
};

size_t kp_type_size(int type)
{
    switch (type) {
    case KP_T_BOOL:
        return sizeof(bool);
    case KP_T_INT8:
        return sizeof(int8_t);
    case KP_T_INT16:
        return sizeof(int16_t);
    case KP_T_UINT16:
        return sizeof(uint16_t);
    case KP_T_INT32:
        return sizeof(int32_t);
    case KP_T_INT64:
        return sizeof(int64_t);
    case KP_T_FLOAT64:
        return sizeof(double);
    case KP_T_STRING:
        return sizeof(struct kp_str);
    case KP_T_BYTES:
    case KP_T_RECORDS:
        return sizeof(struct kp_bytes);
    case KP_T_UUID:
        return sizeof(struct kp_uuid);
    case KP_T_ARRAY:
        return sizeof(struct kp_array_any);
    default:
        return 0;
    }
}

const struct kp_api *kp_api_find(int16_t key)
{
    size_t lo = 0;
    size_t hi = kp_apis_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (kp_apis[mid].key == key) {
            return &kp_apis[mid];
        }
        if (kp_apis[mid].key < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

/* ------------------------------------------------- the smallest wire size */

/* The fewest bytes one element of `type` can take on the wire: bounds how
 * many elements a claimed array count may announce. */
static size_t min_wire_scalar(int type, bool flexible)
{
    switch (type) {
    case KP_T_BOOL:
    case KP_T_INT8:
        return 1;
    case KP_T_INT16:
    case KP_T_UINT16:
        return 2;
    case KP_T_INT32:
        return 4;
    case KP_T_INT64:
    case KP_T_FLOAT64:
        return 8;
    case KP_T_UUID:
        return 16;
    case KP_T_STRING:
        return flexible ? 1 : 2;
    case KP_T_BYTES:
    case KP_T_RECORDS:
    case KP_T_ARRAY:
        return flexible ? 1 : 4;
    default:
        return 1;
    }
}

static size_t min_wire_struct(const struct kp_struct_desc *s, const struct ctx *c)
{
    size_t n = c->flexible ? 1 : 0; /* the tag section */
    for (uint32_t i = 0; i < s->nfields; i++) {
        const struct kp_field *f = &s->fields[i];
        if (kp_field_in(f, c->version)) {
            n += min_wire_scalar(f->type, c->flexible);
        }
    }
    return n > 0 ? n : 1;
}

/* ------------------------------------------------------- value accessors */

static void put(void *base, uint32_t off, const void *v, size_t n)
{
    memcpy((uint8_t *)base + off, v, n);
}

static void get(const void *base, uint32_t off, void *v, size_t n)
{
    memcpy(v, (const uint8_t *)base + off, n);
}

static int64_t get_int(const void *base, uint32_t off, int type)
{
    switch (type) {
    case KP_T_BOOL: {
        bool v;
        get(base, off, &v, sizeof v);
        return v ? 1 : 0;
    }
    case KP_T_INT8: {
        int8_t v;
        get(base, off, &v, sizeof v);
        return v;
    }
    case KP_T_INT16: {
        int16_t v;
        get(base, off, &v, sizeof v);
        return v;
    }
    case KP_T_UINT16: {
        uint16_t v;
        get(base, off, &v, sizeof v);
        return v;
    }
    case KP_T_INT32: {
        int32_t v;
        get(base, off, &v, sizeof v);
        return v;
    }
    case KP_T_INT64: {
        int64_t v;
        get(base, off, &v, sizeof v);
        return v;
    }
    default:
        return 0;
    }
}

static void set_int(void *base, uint32_t off, int type, int64_t x)
{
    switch (type) {
    case KP_T_BOOL: {
        bool v = x != 0;
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_INT8: {
        int8_t v = (int8_t)x;
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_INT16: {
        int16_t v = (int16_t)x;
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_UINT16: {
        uint16_t v = (uint16_t)x;
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_INT32: {
        int32_t v = (int32_t)x;
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_INT64: {
        put(base, off, &x, sizeof x);
        break;
    }
    default:
        break;
    }
}

static bool is_int_type(int type)
{
    return type == KP_T_BOOL || type == KP_T_INT8 || type == KP_T_INT16 ||
           type == KP_T_UINT16 || type == KP_T_INT32 || type == KP_T_INT64;
}

/* --------------------------------------------------------------- defaults */

static void init_struct(const struct kp_struct_desc *s, void *base)
{
    memset(base, 0, s->size);
    for (uint32_t i = 0; i < s->nfields; i++) {
        const struct kp_field *f = &s->fields[i];
        if (is_int_type(f->type)) {
            set_int(base, f->offset, f->type, f->dflt);
        } else if (f->type == KP_T_STRING) {
            struct kp_str v = {"", 0};
            if (f->dflt != 0) {
                v = KP_STR_NULL;
            }
            put(base, f->offset, &v, sizeof v);
        } else if (f->type == KP_T_BYTES || f->type == KP_T_RECORDS) {
            struct kp_bytes v = {NULL, 0};
            if (f->dflt != 0) {
                v = KP_BYTES_NULL;
            }
            put(base, f->offset, &v, sizeof v);
        }
        /* arrays: {NULL, 0}, floats 0.0, uuids zero: memset did it */
    }
}

void kp_msg_init(const struct kp_msg_desc *d, void *msg)
{
    init_struct(d->body, msg);
}

/* ------------------------------------------------------------------ decode */

static void decode_struct(const struct kp_struct_desc *s, const struct ctx *c,
                          struct kp_reader *r, void *base, int depth);

static void decode_scalar(int type, const struct kp_field *f, const struct ctx *c,
                          struct kp_reader *r, void *base, uint32_t off)
{
    bool nullable = kp_field_nullable(f, c->version);
    switch (type) {
    case KP_T_BOOL:
    case KP_T_INT8: {
        int8_t v = kp_rd_i8(r);
        if (type == KP_T_BOOL) {
            bool b = v != 0;
            put(base, off, &b, sizeof b);
        } else {
            put(base, off, &v, sizeof v);
        }
        break;
    }
    case KP_T_INT16: {
        int16_t v = kp_rd_i16(r);
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_UINT16: {
        uint16_t v = kp_rd_u16(r);
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_INT32: {
        int32_t v = kp_rd_i32(r);
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_INT64: {
        int64_t v = kp_rd_i64(r);
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_FLOAT64: {
        double v = kp_rd_f64(r);
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_UUID: {
        struct kp_uuid v = kp_rd_uuid(r);
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_STRING: {
        struct kp_str v = c->flexible ? kp_rd_compact_string(r) : kp_rd_string(r);
        if (v.len < 0 && !nullable && r->err == 0) {
            kp_rd_fail(r, KP_E_BAD_LENGTH);
        }
        put(base, off, &v, sizeof v);
        break;
    }
    case KP_T_BYTES:
    case KP_T_RECORDS: {
        struct kp_bytes v = c->flexible ? kp_rd_compact_bytes(r) : kp_rd_bytes(r);
        if (v.len < 0 && !nullable && r->err == 0) {
            kp_rd_fail(r, KP_E_BAD_LENGTH);
        }
        put(base, off, &v, sizeof v);
        break;
    }
    default:
        kp_rd_fail(r, KP_E_CORRUPT);
        break;
    }
}

static void decode_array(const struct kp_field *f, const struct ctx *c, struct kp_reader *r,
                         void *base, int depth)
{
    struct kp_array_any arr = {NULL, 0};
    size_t min_elem = f->sub != NULL ? min_wire_struct(f->sub, c)
                                     : min_wire_scalar(f->elem, c->flexible);
    int32_t n = kp_rd_array_len(r, c->flexible, kp_field_nullable(f, c->version), f->max_count,
                                min_elem);
    if (r->err != 0) {
        return;
    }
    arr.count = n;
    if (n > 0) {
        size_t esize = f->sub != NULL ? f->sub->size : kp_type_size(f->elem);
        /* n is bounded by the bytes present (min_elem >= 1) and esize is a
         * small struct size: the product fits comfortably in size_t */
        arr.items = kp_arena_alloc(c->arena, (size_t)n * esize);
        if (arr.items == NULL) {
            kp_rd_fail(r, KP_E_NOMEM);
            return;
        }
        for (int32_t i = 0; i < n && r->err == 0; i++) {
            void *item = (uint8_t *)arr.items + (size_t)i * esize;
            if (f->sub != NULL) {
                decode_struct(f->sub, c, r, item, depth + 1);
            } else {
                decode_scalar(f->elem, f, c, r, item, 0);
            }
        }
    }
    put(base, f->offset, &arr, sizeof arr);
}

static void decode_struct(const struct kp_struct_desc *s, const struct ctx *c,
                          struct kp_reader *r, void *base, int depth)
{
    if (depth > MAX_DEPTH) {
        kp_rd_fail(r, KP_E_CORRUPT);
        return;
    }
    init_struct(s, base);
    for (uint32_t i = 0; i < s->nfields && r->err == 0; i++) {
        const struct kp_field *f = &s->fields[i];
        if (!kp_field_in(f, c->version)) {
            continue;
        }
        if (f->type == KP_T_ARRAY) {
            decode_array(f, c, r, base, depth);
        } else {
            decode_scalar(f->type, f, c, r, base, f->offset);
        }
    }
    if (c->flexible) {
        (void)kp_rd_skip_tags(r);
    }
}

static int decode(const struct kp_msg_desc *d, int16_t version, struct kp_reader *r,
                  struct kp_arena *arena, void *out, bool whole)
{
    if (version < d->min_version || version > d->max_version) {
        kp_rd_fail(r, KP_E_UNSUPPORTED);
        return r->err;
    }
    struct ctx c = {version, version >= d->first_flexible, arena, NULL};
    decode_struct(d->body, &c, r, out, 0);
    if (r->err == 0 && whole && r->off != r->len) {
        kp_rd_fail(r, KP_E_TRAILING);
    }
    return r->err;
}

int kp_msg_decode(const struct kp_msg_desc *d, int16_t version, struct kp_reader *r,
                  struct kp_arena *arena, void *out)
{
    return decode(d, version, r, arena, out, true);
}

int kp_msg_decode_prefix(const struct kp_msg_desc *d, int16_t version, struct kp_reader *r,
                         struct kp_arena *arena, void *out)
{
    return decode(d, version, r, arena, out, false);
}

/* ------------------------------------------------------------------ encode */

static void encode_struct(const struct kp_struct_desc *s, const struct ctx *c,
                          struct kp_writer *w, const void *base, int depth);

static void encode_scalar(int type, const struct kp_field *f, const struct ctx *c,
                          struct kp_writer *w, const void *base, uint32_t off)
{
    bool nullable = kp_field_nullable(f, c->version);
    switch (type) {
    case KP_T_BOOL:
    case KP_T_INT8:
        kp_wr_i8(w, (int8_t)get_int(base, off, type));
        break;
    case KP_T_INT16:
        kp_wr_i16(w, (int16_t)get_int(base, off, type));
        break;
    case KP_T_UINT16:
        kp_wr_u16(w, (uint16_t)get_int(base, off, type));
        break;
    case KP_T_INT32:
        kp_wr_i32(w, (int32_t)get_int(base, off, type));
        break;
    case KP_T_INT64:
        kp_wr_i64(w, get_int(base, off, type));
        break;
    case KP_T_FLOAT64: {
        double v;
        get(base, off, &v, sizeof v);
        kp_wr_f64(w, v);
        break;
    }
    case KP_T_UUID: {
        struct kp_uuid v;
        get(base, off, &v, sizeof v);
        kp_wr_uuid(w, v);
        break;
    }
    case KP_T_STRING: {
        struct kp_str v;
        get(base, off, &v, sizeof v);
        if (v.len < 0 && !nullable) {
            kp_wr_fail(w, KP_E_INVALID_ARG);
            break;
        }
        if (c->flexible) {
            kp_wr_compact_string(w, v);
        } else {
            kp_wr_string(w, v);
        }
        break;
    }
    case KP_T_BYTES:
    case KP_T_RECORDS: {
        struct kp_bytes v;
        get(base, off, &v, sizeof v);
        if (v.len < 0 && !nullable) {
            kp_wr_fail(w, KP_E_INVALID_ARG);
            break;
        }
        if (type == KP_T_RECORDS && v.ptr == NULL && v.len > 0) {
            /* spliced records: write the length here, the bytes come later
             * from elsewhere (a file) at this position of the output */
            if (c->hook == NULL) {
                kp_wr_fail(w, KP_E_INVALID_ARG);
                break;
            }
            if (c->flexible) {
                kp_wr_uvarint(w, (uint32_t)v.len + 1);
            } else {
                kp_wr_i32(w, v.len);
            }
            if (w->err == 0) {
                c->hook->splice(c->hook->ctx, w->len, v.len);
            }
            break;
        }
        if (c->flexible) {
            kp_wr_compact_bytes(w, v);
        } else {
            kp_wr_bytes(w, v);
        }
        break;
    }
    default:
        kp_wr_fail(w, KP_E_INVALID_ARG);
        break;
    }
}

static void encode_array(const struct kp_field *f, const struct ctx *c, struct kp_writer *w,
                         const void *base, int depth)
{
    struct kp_array_any arr;
    get(base, f->offset, &arr, sizeof arr);
    if (arr.count < 0 && !kp_field_nullable(f, c->version)) {
        kp_wr_fail(w, KP_E_INVALID_ARG);
        return;
    }
    if (arr.count > 0 && arr.items == NULL) {
        kp_wr_fail(w, KP_E_INVALID_ARG);
        return;
    }
    kp_wr_array_len(w, c->flexible, arr.count < 0 ? -1 : arr.count);
    size_t esize = f->sub != NULL ? f->sub->size : kp_type_size(f->elem);
    for (int32_t i = 0; i < arr.count && w->err == 0; i++) {
        const void *item = (const uint8_t *)arr.items + (size_t)i * esize;
        if (f->sub != NULL) {
            encode_struct(f->sub, c, w, item, depth + 1);
        } else {
            encode_scalar(f->elem, f, c, w, item, 0);
        }
    }
}

static void encode_struct(const struct kp_struct_desc *s, const struct ctx *c,
                          struct kp_writer *w, const void *base, int depth)
{
    if (depth > MAX_DEPTH) {
        kp_wr_fail(w, KP_E_INVALID_ARG);
        return;
    }
    for (uint32_t i = 0; i < s->nfields && w->err == 0; i++) {
        const struct kp_field *f = &s->fields[i];
        if (!kp_field_in(f, c->version)) {
            continue;
        }
        if (f->type == KP_T_ARRAY) {
            encode_array(f, c, w, base, depth);
        } else {
            encode_scalar(f->type, f, c, w, base, f->offset);
        }
    }
    if (c->flexible) {
        kp_wr_empty_tags(w);
    }
}

int kp_msg_encode(const struct kp_msg_desc *d, int16_t version, struct kp_writer *w,
                  const void *msg)
{
    if (version < d->min_version || version > d->max_version) {
        kp_wr_fail(w, KP_E_UNSUPPORTED);
        return w->err;
    }
    struct ctx c = {version, version >= d->first_flexible, NULL, NULL};
    encode_struct(d->body, &c, w, msg, 0);
    return w->err;
}

int kp_msg_encode_spliced(const struct kp_msg_desc *d, int16_t version, struct kp_writer *w,
                          const void *msg, const struct kp_splice_hook *hook)
{
    if (version < d->min_version || version > d->max_version) {
        kp_wr_fail(w, KP_E_UNSUPPORTED);
        return w->err;
    }
    struct ctx c = {version, version >= d->first_flexible, NULL, hook};
    encode_struct(d->body, &c, w, msg, 0);
    return w->err;
}

/* ------------------------------------------------------------------- equal */

static bool equal_struct(const struct kp_struct_desc *s, int16_t version, const void *a,
                         const void *b, int depth);

static bool equal_scalar(int type, const void *a, const void *b, uint32_t off)
{
    switch (type) {
    case KP_T_STRING: {
        struct kp_str x;
        struct kp_str y;
        get(a, off, &x, sizeof x);
        get(b, off, &y, sizeof y);
        return kp_str_eq(x, y);
    }
    case KP_T_BYTES:
    case KP_T_RECORDS: {
        struct kp_bytes x;
        struct kp_bytes y;
        get(a, off, &x, sizeof x);
        get(b, off, &y, sizeof y);
        return kp_bytes_eq(x, y);
    }
    case KP_T_UUID:
        return memcmp((const uint8_t *)a + off, (const uint8_t *)b + off, 16) == 0;
    case KP_T_FLOAT64: {
        /* compare bit patterns: a NaN equals itself after a round trip */
        uint64_t x;
        uint64_t y;
        get(a, off, &x, sizeof x);
        get(b, off, &y, sizeof y);
        return x == y;
    }
    default:
        return get_int(a, off, type) == get_int(b, off, type);
    }
}

static bool equal_struct(const struct kp_struct_desc *s, int16_t version, const void *a,
                         const void *b, int depth)
{
    if (depth > MAX_DEPTH) {
        return false;
    }
    for (uint32_t i = 0; i < s->nfields; i++) {
        const struct kp_field *f = &s->fields[i];
        if (!kp_field_in(f, version)) {
            continue;
        }
        if (f->type != KP_T_ARRAY) {
            if (!equal_scalar(f->type, a, b, f->offset)) {
                return false;
            }
            continue;
        }
        struct kp_array_any x;
        struct kp_array_any y;
        get(a, f->offset, &x, sizeof x);
        get(b, f->offset, &y, sizeof y);
        if (x.count != y.count) {
            return false;
        }
        size_t esize = f->sub != NULL ? f->sub->size : kp_type_size(f->elem);
        for (int32_t j = 0; j < x.count; j++) {
            const void *xi = (const uint8_t *)x.items + (size_t)j * esize;
            const void *yi = (const uint8_t *)y.items + (size_t)j * esize;
            bool same = f->sub != NULL ? equal_struct(f->sub, version, xi, yi, depth + 1)
                                       : equal_scalar(f->elem, xi, yi, 0);
            if (!same) {
                return false;
            }
        }
    }
    return true;
}

bool kp_msg_equal(const struct kp_msg_desc *d, int16_t version, const void *a, const void *b)
{
    return equal_struct(d->body, version, a, b, 0);
}

/* ------------------------------------------------------------------ format */

static void put_text(struct kp_writer *out, const char *s)
{
    kp_wr_raw(out, s, strlen(s));
}

static void put_fmt_i64(struct kp_writer *out, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    if (n > 0) {
        kp_wr_raw(out, tmp, (size_t)n);
    }
}

static void put_json_string(struct kp_writer *out, const char *p, int32_t len)
{
    static const char hex[] = "0123456789abcdef";
    kp_wr_i8(out, '"');
    for (int32_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '"' || ch == '\\') {
            kp_wr_i8(out, '\\');
            kp_wr_i8(out, (int8_t)ch);
        } else if (ch < 0x20 || ch >= 0x7f) {
            char esc[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
            kp_wr_raw(out, esc, sizeof esc);
        } else {
            kp_wr_i8(out, (int8_t)ch);
        }
    }
    kp_wr_i8(out, '"');
}

static void format_bytes(struct kp_writer *out, struct kp_bytes v, bool records)
{
    static const char hex[] = "0123456789abcdef";
    if (v.len < 0) {
        put_text(out, "null");
        return;
    }
    if (records) {
        put_text(out, "\"<records ");
        put_fmt_i64(out, v.len);
        put_text(out, " bytes>\"");
        return;
    }
    kp_wr_i8(out, '"');
    int32_t shown = v.len > 64 ? 64 : v.len;
    for (int32_t i = 0; i < shown; i++) {
        char pair[2] = {hex[v.ptr[i] >> 4], hex[v.ptr[i] & 15]};
        kp_wr_raw(out, pair, 2);
    }
    if (shown < v.len) {
        put_text(out, "...(");
        put_fmt_i64(out, v.len);
        put_text(out, " bytes)");
    }
    kp_wr_i8(out, '"');
}

static void format_scalar(int type, const void *base, uint32_t off, struct kp_writer *out)
{
    switch (type) {
    case KP_T_BOOL:
        put_text(out, get_int(base, off, type) != 0 ? "true" : "false");
        break;
    case KP_T_STRING: {
        struct kp_str v;
        get(base, off, &v, sizeof v);
        if (v.len < 0) {
            put_text(out, "null");
        } else {
            put_json_string(out, v.ptr, v.len);
        }
        break;
    }
    case KP_T_BYTES:
    case KP_T_RECORDS: {
        struct kp_bytes v;
        get(base, off, &v, sizeof v);
        format_bytes(out, v, type == KP_T_RECORDS);
        break;
    }
    case KP_T_UUID: {
        struct kp_bytes v = {(const uint8_t *)base + off, 16};
        format_bytes(out, v, false);
        break;
    }
    case KP_T_FLOAT64: {
        double v;
        char tmp[40];
        get(base, off, &v, sizeof v);
        int n = snprintf(tmp, sizeof tmp, "%.17g", v);
        if (n > 0) {
            kp_wr_raw(out, tmp, (size_t)n);
        }
        break;
    }
    default:
        put_fmt_i64(out, get_int(base, off, type));
        break;
    }
}

static void format_struct(const struct kp_struct_desc *s, int16_t version, const void *base,
                          struct kp_writer *out, int depth)
{
    if (depth > MAX_DEPTH) {
        put_text(out, "{}");
        return;
    }
    kp_wr_i8(out, '{');
    bool first = true;
    for (uint32_t i = 0; i < s->nfields; i++) {
        const struct kp_field *f = &s->fields[i];
        if (!kp_field_in(f, version)) {
            continue;
        }
        if (!first) {
            put_text(out, ", ");
        }
        first = false;
        put_json_string(out, f->name, (int32_t)strlen(f->name));
        put_text(out, ": ");
        if (f->type != KP_T_ARRAY) {
            format_scalar(f->type, base, f->offset, out);
            continue;
        }
        struct kp_array_any arr;
        get(base, f->offset, &arr, sizeof arr);
        if (arr.count < 0) {
            put_text(out, "null");
            continue;
        }
        kp_wr_i8(out, '[');
        size_t esize = f->sub != NULL ? f->sub->size : kp_type_size(f->elem);
        for (int32_t j = 0; j < arr.count; j++) {
            const void *item = (const uint8_t *)arr.items + (size_t)j * esize;
            if (j > 0) {
                put_text(out, ", ");
            }
            if (f->sub != NULL) {
                format_struct(f->sub, version, item, out, depth + 1);
            } else {
                format_scalar(f->elem, item, 0, out);
            }
        }
        kp_wr_i8(out, ']');
    }
    kp_wr_i8(out, '}');
}

void kp_msg_format(const struct kp_msg_desc *d, int16_t version, const void *msg,
                   struct kp_writer *out)
{
    format_struct(d->body, version, msg, out, 0);
}
