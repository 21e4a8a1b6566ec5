/*
 * samsa-protocol: bounded reader and writer with a sticky error.
 *
 * The reader walks untrusted bytes (STYLE.md rule 7). Every read checks
 * `len - off >= n`; the first failure records its code and detection site
 * in the reader, and every later read returns zeros/empty slices without
 * moving. Callers decode a whole message and check `r->err` once.
 *
 * The writer appends to a growable buffer that has a ceiling fixed when it
 * is created; the first failure (ceiling, allocation, caller error) sticks
 * and later writes are no-ops.
 *
 * Strings and bytes read from the wire are slices into the reader's buffer:
 * they live as long as that buffer.
 */
#ifndef SAMSA_PROTOCOL_BUF_H
#define SAMSA_PROTOCOL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

/* A string slice. len == -1 means null. Not NUL-terminated. */
struct kp_str {
    const char *ptr;
    int32_t len;
};

/* A byte slice. len == -1 means null. */
struct kp_bytes {
    const uint8_t *ptr;
    int32_t len;
};

struct kp_uuid {
    uint8_t b[16];
};

/* Slices from C strings (NULL gives a null slice). */
struct kp_str kp_str_c(const char *s);
bool kp_str_eq(struct kp_str a, struct kp_str b);
bool kp_str_eq_c(struct kp_str a, const char *s);
bool kp_bytes_eq(struct kp_bytes a, struct kp_bytes b);

#define KP_STR_NULL ((struct kp_str){NULL, -1})
#define KP_BYTES_NULL ((struct kp_bytes){NULL, -1})

/* ---------------------------------------------------------------- reader */

struct kp_reader {
    const uint8_t *buf;
    size_t len;
    size_t off;
    int err;              /* first error; 0 while all reads succeeded */
    const char *err_file; /* where the first error was detected */
    int err_line;
};

void kp_rd_init(struct kp_reader *r, const void *buf, size_t len);

static inline size_t kp_rd_remaining(const struct kp_reader *r)
{
    return r->err != 0 ? 0 : r->len - r->off;
}

/* Record the first error with its detection site; later calls are no-ops. */
void kp_rd_fail_at(struct kp_reader *r, int err, const char *file, int line);
#define kp_rd_fail(r, err) kp_rd_fail_at((r), (err), __FILE__, __LINE__)

int8_t kp_rd_i8(struct kp_reader *r);
int16_t kp_rd_i16(struct kp_reader *r);
int32_t kp_rd_i32(struct kp_reader *r);
int64_t kp_rd_i64(struct kp_reader *r);
uint16_t kp_rd_u16(struct kp_reader *r);
uint32_t kp_rd_u32(struct kp_reader *r);
bool kp_rd_bool(struct kp_reader *r);
double kp_rd_f64(struct kp_reader *r);
struct kp_uuid kp_rd_uuid(struct kp_reader *r);

/* Unsigned LEB128 varint, at most 5 bytes, value must fit 32 bits. */
uint32_t kp_rd_uvarint(struct kp_reader *r);
/* Unsigned varlong, at most 10 bytes. */
uint64_t kp_rd_uvarlong(struct kp_reader *r);
/* Zigzag-encoded signed varint (record fields), at most 5 bytes. */
int32_t kp_rd_varint(struct kp_reader *r);
/* Zigzag-encoded signed varlong, at most 10 bytes. */
int64_t kp_rd_varlong(struct kp_reader *r);

/* Classic nullable string: int16 length, -1 = null. */
struct kp_str kp_rd_string(struct kp_reader *r);
/* Compact nullable string: uvarint length+1, 0 = null. */
struct kp_str kp_rd_compact_string(struct kp_reader *r);
/* Classic nullable bytes: int32 length, -1 = null. */
struct kp_bytes kp_rd_bytes(struct kp_reader *r);
/* Compact nullable bytes: uvarint length+1, 0 = null. */
struct kp_bytes kp_rd_compact_bytes(struct kp_reader *r);
/* Record-style bytes: zigzag varint length, -1 = null. */
struct kp_bytes kp_rd_varint_bytes(struct kp_reader *r);

/* `n` raw bytes as a slice (n >= 0). */
struct kp_bytes kp_rd_raw(struct kp_reader *r, int32_t n);
void kp_rd_skip(struct kp_reader *r, size_t n);

/*
 * Array length: int32 (classic) or uvarint N+1 (compact). Returns -1 for a
 * null array (only accepted when `nullable`), fails with KP_E_TOO_LARGE above
 * `max`, and with KP_E_BAD_LENGTH when `count * min_elem_size` exceeds the
 * bytes left: a claimed count never drives more work than the bytes present.
 */
int32_t kp_rd_array_len(struct kp_reader *r, bool compact, bool nullable,
                        int32_t max, size_t min_elem_size);

/* Read and skip a tagged-field section; returns how many tags it held. */
uint32_t kp_rd_skip_tags(struct kp_reader *r);

/* ---------------------------------------------------------------- writer */

struct kp_writer {
    uint8_t *buf;
    size_t len;
    size_t cap;
    size_t max;     /* ceiling on len */
    int err;        /* first error */
    bool external;  /* buf is caller-owned and never grown */
};

/* A growable writer that never exceeds `max` bytes. */
void kp_wr_init(struct kp_writer *w, size_t max);
/* A writer over a caller-owned buffer of `cap` bytes. */
void kp_wr_init_fixed(struct kp_writer *w, void *buf, size_t cap);
/* Frees a growable writer's buffer; no-op for fixed ones and for NULL. */
void kp_wr_free(struct kp_writer *w);
/* Hands the buffer to the caller (caller frees with kp_free); resets w. */
uint8_t *kp_wr_steal(struct kp_writer *w, size_t *len_out);
void kp_wr_reset(struct kp_writer *w);

void kp_wr_fail(struct kp_writer *w, int err);

/* Makes room for n more bytes; returns a pointer to them or NULL on error. */
uint8_t *kp_wr_reserve(struct kp_writer *w, size_t n);

void kp_wr_raw(struct kp_writer *w, const void *p, size_t n);
void kp_wr_i8(struct kp_writer *w, int8_t v);
void kp_wr_i16(struct kp_writer *w, int16_t v);
void kp_wr_i32(struct kp_writer *w, int32_t v);
void kp_wr_i64(struct kp_writer *w, int64_t v);
void kp_wr_u16(struct kp_writer *w, uint16_t v);
void kp_wr_u32(struct kp_writer *w, uint32_t v);
void kp_wr_bool(struct kp_writer *w, bool v);
void kp_wr_f64(struct kp_writer *w, double v);
void kp_wr_uuid(struct kp_writer *w, struct kp_uuid v);
void kp_wr_uvarint(struct kp_writer *w, uint32_t v);
void kp_wr_uvarlong(struct kp_writer *w, uint64_t v);
void kp_wr_varint(struct kp_writer *w, int32_t v);
void kp_wr_varlong(struct kp_writer *w, int64_t v);
void kp_wr_string(struct kp_writer *w, struct kp_str s);
void kp_wr_compact_string(struct kp_writer *w, struct kp_str s);
void kp_wr_bytes(struct kp_writer *w, struct kp_bytes b);
void kp_wr_compact_bytes(struct kp_writer *w, struct kp_bytes b);
void kp_wr_varint_bytes(struct kp_writer *w, struct kp_bytes b);
/* count -1 writes a null array */
void kp_wr_array_len(struct kp_writer *w, bool compact, int32_t count);
/* An empty tagged-field section. */
void kp_wr_empty_tags(struct kp_writer *w);

/* Big-endian stores into an already written position (length prefixes). */
void kp_wr_patch_i32(struct kp_writer *w, size_t at, int32_t v);

/* Size of v as a varint / zigzag varint, for length prefixes. */
size_t kp_uvarint_size(uint32_t v);
size_t kp_varint_size(int32_t v);
size_t kp_varlong_size(int64_t v);

/* Unaligned big-endian loads and stores on raw memory the caller bounds. */
static inline uint16_t kp_load_be16(const uint8_t *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | (unsigned)p[1]);
}
static inline uint32_t kp_load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline uint64_t kp_load_be64(const uint8_t *p)
{
    return (uint64_t)kp_load_be32(p) << 32 | kp_load_be32(p + 4);
}
static inline void kp_store_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void kp_store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void kp_store_be64(uint8_t *p, uint64_t v)
{
    kp_store_be32(p, (uint32_t)(v >> 32));
    kp_store_be32(p + 4, (uint32_t)v);
}

#endif
