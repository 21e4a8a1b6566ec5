/*
 * samsa-protocol: compression codecs (see compress.h).
 *
 * Decompression writes straight into the caller's writer through a "sink":
 * the writer's ceiling is lowered to min(its ceiling, current length +
 * max_out) for the duration of the call, so the buffer can never grow past
 * the decompression limit, and each codec call gets a bounded window at the
 * end of it. Once the limit is reached the codec is handed a one-byte probe:
 * if it writes anything there, the output would have exceeded the limit
 * (KP_E_TOO_LARGE); if it finishes without writing, the output was exactly
 * at the limit and is accepted.
 */
#define ZLIB_CONST

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/compress.h>

#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/* Output a codec may produce per call: small enough to stop a bomb early,
 * large enough that big batches take few calls. */
#define WINDOW_MIN ((size_t)64 * 1024)
#define WINDOW_MAX ((size_t)1 << 30)

/*
 * zstd frames may ask for a window of up to 2^ZSTD_WINDOW_LOG_FLOOR at any
 * ceiling, more when the ceiling is larger. Levels 1-19 never use more than
 * 2^23 even for inputs of unknown size; frames from the "ultra" levels
 * 20-22 (windows up to 2^27) are refused below a ceiling of that size.
 */
#define ZSTD_WINDOW_LOG_FLOOR 23
#define ZSTD_WINDOW_LOG_CEIL 27

/* xerial/snappy-java framing: magic, then i32 version and i32 compat. */
static const uint8_t xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
#define XERIAL_HEADER_SIZE 16

const char *kp_codec_name(int codec)
{
    switch (codec) {
    case KP_CODEC_NONE:
        return "none";
    case KP_CODEC_GZIP:
        return "gzip";
    case KP_CODEC_SNAPPY:
        return "snappy";
    case KP_CODEC_LZ4:
        return "lz4";
    case KP_CODEC_ZSTD:
        return "zstd";
    default:
        return "unknown";
    }
}

/* ---------------------------------------------------------------- sink */

struct sink {
    struct kp_writer *w;
    size_t start;     /* w->len at entry */
    size_t saved_max; /* w->max at entry */
    uint8_t *p;       /* current window */
    size_t room;      /* its size */
    bool probing;     /* the window is `probe`: the limit is reached */
    uint8_t probe;
};

static int sink_open(struct sink *s, struct kp_writer *w, size_t max_out)
{
    s->w = w;
    s->start = w->len;
    s->saved_max = w->max;
    s->p = NULL;
    s->room = 0;
    s->probing = false;
    s->probe = 0;
    if (w->err != 0) {
        return w->err;
    }
    if (w->max < w->len) {
        /* a writer never grows past its ceiling; this one is damaged */
        return KP_E_INVALID_ARG;
    }
    if (w->max - w->len > max_out) {
        w->max = w->len + max_out;
    }
    return 0;
}

/* Bytes that may still be appended before the limit. */
static size_t sink_left(const struct sink *s)
{
    return s->w->max - s->w->len;
}

/* Opens the next output window at the end of the writer. */
static int sink_window(struct sink *s)
{
    size_t left = sink_left(s);
    if (left == 0) {
        s->p = &s->probe;
        s->room = 1;
        s->probing = true;
        return 0;
    }
    /* use the capacity already there, at least WINDOW_MIN */
    size_t want = s->w->cap - s->w->len;
    if (want < WINDOW_MIN) {
        want = WINDOW_MIN;
    }
    if (want > WINDOW_MAX) {
        want = WINDOW_MAX;
    }
    if (want > left) {
        want = left;
    }
    uint8_t *p = kp_wr_reserve(s->w, want);
    if (p == NULL) {
        return s->w->err != 0 ? s->w->err : KP_E_NOMEM;
    }
    s->p = p;
    s->room = want;
    s->probing = false;
    return 0;
}

/* Keeps the first `used` bytes of the window. */
static int sink_commit(struct sink *s, size_t used)
{
    if (s->probing) {
        /* anything written past the limit means the output is too large */
        return used > 0 ? KP_E_TOO_LARGE : 0;
    }
    s->w->len -= s->room - used;
    s->room = 0;
    return 0;
}

/* Restores the writer's ceiling, and its length when rc is an error. */
static int sink_close(struct sink *s, int rc)
{
    s->w->max = s->saved_max;
    if (rc != 0) {
        s->w->len = s->start;
    }
    return rc;
}

/* ---------------------------------------------------------------- zlib */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    if (size != 0 && items > SIZE_MAX / size) {
        return Z_NULL;
    }
    return kp_malloc((size_t)items * size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    kp_free(p);
}

static void z_stream_setup(z_stream *zs)
{
    memset(zs, 0, sizeof *zs);
    zs->zalloc = z_alloc;
    zs->zfree = z_free;
    zs->opaque = Z_NULL;
}

static int gzip_decompress(const uint8_t *in, size_t in_len, struct sink *s)
{
    z_stream zs;
    z_stream_setup(&zs);
    /* 15 + 32: a 32 KiB window, gzip or zlib header detected automatically */
    int zrc = inflateInit2(&zs, 15 + 32);
    if (zrc != Z_OK) {
        return zrc == Z_MEM_ERROR ? KP_E_NOMEM : KP_E_COMPRESSION;
    }

    size_t fed = 0; /* input bytes handed to zlib so far */
    int rc = 0;
    for (;;) {
        if (zs.avail_in == 0 && fed < in_len) {
            size_t n = in_len - fed;
            if (n > UINT_MAX) {
                n = UINT_MAX;
            }
            zs.next_in = in + fed;
            zs.avail_in = (uInt)n;
            fed += n;
        }
        rc = sink_window(s);
        if (rc != 0) {
            break;
        }
        zs.next_out = s->p;
        zs.avail_out = (uInt)s->room; /* room <= WINDOW_MAX < UINT_MAX */
        uInt in_before = zs.avail_in;

        zrc = inflate(&zs, Z_NO_FLUSH);

        size_t used = s->room - zs.avail_out;
        bool consumed = zs.avail_in != in_before;
        rc = sink_commit(s, used);
        if (rc != 0) {
            break;
        }
        if (zrc == Z_STREAM_END) {
            if (zs.avail_in == 0 && fed == in_len) {
                break;
            }
            /* another gzip member follows (Java's reader accepts these) */
            if (inflateReset(&zs) != Z_OK) {
                rc = KP_E_COMPRESSION;
                break;
            }
            continue;
        }
        if (zrc == Z_MEM_ERROR) {
            rc = KP_E_NOMEM;
            break;
        }
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            /* Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR */
            rc = KP_E_COMPRESSION;
            break;
        }
        if (!consumed && used == 0) {
            /* no progress with output room: the input ends inside the stream */
            rc = KP_E_COMPRESSION;
            break;
        }
    }
    (void)inflateEnd(&zs);
    return rc;
}

/* ---------------------------------------------------------------- zstd */

static int zstd_decompress(const uint8_t *in, size_t in_len, size_t max_out, struct sink *s)
{
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (dctx == NULL) {
        return KP_E_NOMEM;
    }
    /* bound the decoder's own window buffer by the ceiling (or 8 MiB) */
    int wlog = ZSTD_WINDOW_LOG_FLOOR;
    while (wlog < ZSTD_WINDOW_LOG_CEIL && ((size_t)1 << wlog) < max_out) {
        wlog++;
    }
    if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, wlog))) {
        ZSTD_freeDCtx(dctx);
        return KP_E_COMPRESSION;
    }

    ZSTD_inBuffer ib = {in, in_len, 0};
    int rc = 0;
    for (;;) {
        rc = sink_window(s);
        if (rc != 0) {
            break;
        }
        ZSTD_outBuffer ob = {s->p, s->room, 0};
        size_t in_before = ib.pos;

        size_t zr = ZSTD_decompressStream(dctx, &ob, &ib);

        if (ZSTD_isError(zr)) {
            rc = ZSTD_getErrorCode(zr) == ZSTD_error_memory_allocation ? KP_E_NOMEM
                                                                       : KP_E_COMPRESSION;
            break;
        }
        rc = sink_commit(s, ob.pos);
        if (rc != 0) {
            break;
        }
        if (zr == 0 && ib.pos == ib.size) {
            /* the last frame is complete and flushed */
            break;
        }
        if (ib.pos == in_before && ob.pos == 0) {
            /* no progress with output room: truncated frame */
            rc = KP_E_COMPRESSION;
            break;
        }
    }

    ZSTD_freeDCtx(dctx);
    return rc;
}

/* ---------------------------------------------------------------- lz4 */

static int lz4_decompress(const uint8_t *in, size_t in_len, struct sink *s)
{
    LZ4F_dctx *dctx = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
        return KP_E_NOMEM;
    }

    size_t off = 0;
    int rc = 0;
    for (;;) {
        rc = sink_window(s);
        if (rc != 0) {
            break;
        }
        size_t dst_size = s->room;
        size_t src_size = in_len - off;

        size_t hint = LZ4F_decompress(dctx, s->p, &dst_size, in + off, &src_size, NULL);

        if (LZ4F_isError(hint)) {
            rc = KP_E_COMPRESSION;
            break;
        }
        off += src_size;
        rc = sink_commit(s, dst_size);
        if (rc != 0) {
            break;
        }
        if (hint == 0 && off == in_len) {
            /* the last frame is complete and flushed */
            break;
        }
        if (src_size == 0 && dst_size == 0) {
            /* no progress with output room: truncated frame */
            rc = KP_E_COMPRESSION;
            break;
        }
    }
    (void)LZ4F_freeDecompressionContext(dctx);
    return rc;
}

/* ---------------------------------------------------------------- snappy */

/* One raw snappy block: its claimed size is checked against the limit
 * before any memory is reserved for it. */
static int snappy_raw_decompress(const uint8_t *in, size_t in_len, struct sink *s)
{
    const char *src = (const char *)in;
    size_t n = 0;
    if (snappy_uncompressed_length(src, in_len, &n) != SNAPPY_OK) {
        return KP_E_COMPRESSION;
    }
    if (n > sink_left(s)) {
        return KP_E_TOO_LARGE;
    }
    char none = 0;
    char *dst = &none;
    if (n > 0) {
        uint8_t *p = kp_wr_reserve(s->w, n);
        if (p == NULL) {
            return s->w->err != 0 ? s->w->err : KP_E_NOMEM;
        }
        dst = (char *)p;
    }
    size_t got = n;
    if (snappy_uncompress(src, in_len, dst, &got) != SNAPPY_OK || got != n) {
        return KP_E_COMPRESSION;
    }
    return 0;
}

static int snappy_xerial_decompress(const uint8_t *in, size_t in_len, struct sink *s)
{
    struct kp_reader r;
    kp_rd_init(&r, in, in_len);
    /* version and compat are not checked: writers disagree even on their
     * byte order */
    kp_rd_skip(&r, XERIAL_HEADER_SIZE);
    while (r.err == 0 && kp_rd_remaining(&r) > 0) {
        int32_t n = kp_rd_i32(&r);
        struct kp_bytes chunk = kp_rd_raw(&r, n); /* n < 0 or past the end fails */
        if (r.err != 0) {
            return KP_E_COMPRESSION;
        }
        int rc = snappy_raw_decompress(chunk.ptr, (size_t)chunk.len, s);
        if (rc != 0) {
            return rc;
        }
    }
    return r.err != 0 ? KP_E_COMPRESSION : 0;
}

static int snappy_decompress(const uint8_t *in, size_t in_len, struct sink *s)
{
    if (in_len >= XERIAL_HEADER_SIZE && memcmp(in, xerial_magic, sizeof xerial_magic) == 0) {
        return snappy_xerial_decompress(in, in_len, s);
    }
    return snappy_raw_decompress(in, in_len, s);
}

/* ---------------------------------------------------------------- decompress */

static int copy_out(const uint8_t *in, size_t in_len, struct sink *s)
{
    if (in_len > sink_left(s)) {
        return KP_E_TOO_LARGE;
    }
    kp_wr_raw(s->w, in, in_len);
    return s->w->err;
}

int kp_decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out,
                  struct kp_writer *out)
{
    if (codec < KP_CODEC_NONE || codec > KP_CODEC_MAX) {
        return KP_E_UNSUPPORTED;
    }
    if (in == NULL && in_len > 0) {
        return KP_E_INVALID_ARG;
    }
    struct sink s;
    int rc = sink_open(&s, out, max_out);
    if (rc != 0) {
        return sink_close(&s, rc);
    }
    if (in_len == 0) {
        /* no codec has an empty encoding; "none" of nothing is nothing */
        return sink_close(&s, codec == KP_CODEC_NONE ? 0 : KP_E_COMPRESSION);
    }
    switch (codec) {
    case KP_CODEC_GZIP:
        rc = gzip_decompress(in, in_len, &s);
        break;
    case KP_CODEC_SNAPPY:
        rc = snappy_decompress(in, in_len, &s);
        break;
    case KP_CODEC_LZ4:
        rc = lz4_decompress(in, in_len, &s);
        break;
    case KP_CODEC_ZSTD:
        rc = zstd_decompress(in, in_len, max_out, &s);
        break;
    default:
        rc = copy_out(in, in_len, &s);
        break;
    }
    return sink_close(&s, rc);
}

/* ---------------------------------------------------------------- compress */

/*
 * Where a compressor writes: `bound` bytes at the end of `out` when they fit
 * under its ceiling, else a temporary buffer that is copied over once the
 * real (smaller) size is known.
 */
struct dst {
    struct kp_writer *out;
    struct kp_writer tmp;
    struct kp_writer *w; /* out or &tmp */
    size_t start;        /* w->len before the reservation */
    uint8_t *p;
};

static int dst_open(struct dst *d, struct kp_writer *out, size_t bound)
{
    d->out = out;
    kp_wr_init(&d->tmp, bound);
    d->w = out->max - out->len >= bound ? out : &d->tmp;
    d->start = d->w->len;
    d->p = kp_wr_reserve(d->w, bound);
    if (d->p == NULL) {
        return d->w->err != 0 ? d->w->err : KP_E_NOMEM;
    }
    return 0;
}

/* Keeps `used` bytes when rc == 0, drops the reservation otherwise. */
static int dst_close(struct dst *d, size_t used, int rc)
{
    if (d->w == d->out) {
        d->out->len = d->start + (rc == 0 ? used : 0);
    } else if (rc == 0) {
        if (d->out->max - d->out->len < used) {
            rc = KP_E_TOO_LARGE;
        } else {
            kp_wr_raw(d->out, d->tmp.buf, used);
            rc = d->out->err;
        }
    }
    kp_wr_free(&d->tmp);
    return rc;
}

static int gzip_compress(const uint8_t *in, size_t in_len, struct kp_writer *out)
{
    z_stream zs;
    z_stream_setup(&zs);
    /* 15 + 16: a gzip (RFC 1952) wrapper, as Kafka's GZIPOutputStream writes */
    int zrc = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    if (zrc != Z_OK) {
        return zrc == Z_MEM_ERROR ? KP_E_NOMEM : KP_E_COMPRESSION;
    }
    size_t bound = deflateBound(&zs, (uLong)in_len);
    if (bound > UINT_MAX) {
        (void)deflateEnd(&zs);
        return KP_E_TOO_LARGE;
    }
    struct dst d;
    int rc = dst_open(&d, out, bound);
    size_t used = 0;
    if (rc == 0) {
        zs.next_in = in;
        zs.avail_in = (uInt)in_len; /* in_len <= INT32_MAX */
        zs.next_out = d.p;
        zs.avail_out = (uInt)bound;
        zrc = deflate(&zs, Z_FINISH);
        if (zrc != Z_STREAM_END) {
            rc = zrc == Z_MEM_ERROR ? KP_E_NOMEM : KP_E_COMPRESSION;
        }
        used = bound - zs.avail_out;
    }
    rc = dst_close(&d, used, rc);
    (void)deflateEnd(&zs);
    return rc;
}

static int snappy_compress_raw(const uint8_t *in, size_t in_len, struct kp_writer *out)
{
    size_t bound = snappy_max_compressed_length(in_len);
    struct dst d;
    int rc = dst_open(&d, out, bound);
    size_t used = bound;
    if (rc == 0 && snappy_compress((const char *)in, in_len, (char *)d.p, &used) != SNAPPY_OK) {
        rc = KP_E_COMPRESSION;
    }
    return dst_close(&d, used, rc);
}

static int lz4_compress(const uint8_t *in, size_t in_len, struct kp_writer *out)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    /* Kafka's Java reader decodes each block on its own: no linked blocks */
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    size_t bound = LZ4F_compressFrameBound(in_len, &prefs);
    struct dst d;
    int rc = dst_open(&d, out, bound);
    size_t used = 0;
    if (rc == 0) {
        size_t n = LZ4F_compressFrame(d.p, bound, in, in_len, &prefs);
        if (LZ4F_isError(n)) {
            rc = KP_E_COMPRESSION;
        } else {
            used = n;
        }
    }
    return dst_close(&d, used, rc);
}

static int zstd_compress(const uint8_t *in, size_t in_len, struct kp_writer *out)
{
    size_t bound = ZSTD_compressBound(in_len);
    struct dst d;
    int rc = dst_open(&d, out, bound);
    size_t used = 0;
    if (rc == 0) {
        size_t n = ZSTD_compress(d.p, bound, in, in_len, ZSTD_CLEVEL_DEFAULT);
        if (ZSTD_isError(n)) {
            rc = ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? KP_E_NOMEM
                                                                      : KP_E_COMPRESSION;
        } else {
            used = n;
        }
    }
    return dst_close(&d, used, rc);
}

int kp_compress(int codec, const uint8_t *in, size_t in_len, struct kp_writer *out)
{
    static const uint8_t empty[1] = {0};

    if (codec < KP_CODEC_NONE || codec > KP_CODEC_MAX) {
        return KP_E_UNSUPPORTED;
    }
    if (in == NULL && in_len > 0) {
        return KP_E_INVALID_ARG;
    }
    if (out->err != 0) {
        return out->err;
    }
    if (in_len > INT32_MAX) {
        return KP_E_TOO_LARGE;
    }
    if (in_len == 0) {
        in = empty; /* the libraries want a valid pointer even for nothing */
    }
    size_t start = out->len;
    int rc;
    switch (codec) {
    case KP_CODEC_GZIP:
        rc = gzip_compress(in, in_len, out);
        break;
    case KP_CODEC_SNAPPY:
        rc = snappy_compress_raw(in, in_len, out);
        break;
    case KP_CODEC_LZ4:
        rc = lz4_compress(in, in_len, out);
        break;
    case KP_CODEC_ZSTD:
        rc = zstd_compress(in, in_len, out);
        break;
    default:
        if (out->max - out->len < in_len) {
            rc = KP_E_TOO_LARGE;
        } else {
            kp_wr_raw(out, in, in_len);
            rc = out->err;
        }
        break;
    }
    if (rc != 0 && out->len > start) {
        out->len = start;
    }
    return rc;
}
