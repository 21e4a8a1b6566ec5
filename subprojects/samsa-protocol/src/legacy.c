/*
 * samsa-protocol: MessageSet v0/v1 to and from RecordBatch v2 (legacy.h).
 *
 * Every byte of a message set is untrusted: messages are read through a
 * bounded reader framed by their MessageSize, each CRC is checked before
 * its fields are believed, and wrappers are decompressed under a ceiling
 * shared by the whole set.
 */
#include <samsa-protocol/alloc.h>
#include <samsa-protocol/compress.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/legacy.h>
#include <samsa-protocol/record_batch.h>

#include <string.h>

/* Offsets inside a message, from its start. */
#define OFF_SIZE 8
#define OFF_CRC 12
#define OFF_MAGIC 16

/* The LZ4 frame magic number (little-endian on the wire). */
#define LZ4_FRAME_MAGIC 0x184D2204u

/* ---------------------------------------------------------------- xxh32 */

#define XXH_P1 2654435761u
#define XXH_P2 2246822519u
#define XXH_P3 3266489917u
#define XXH_P4 668265263u
#define XXH_P5 374761393u

static uint32_t rotl32(uint32_t x, unsigned r)
{
    return (x << r) | (x >> (32u - r));
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t xxh_round(uint32_t acc, uint32_t in)
{
    return rotl32(acc + in * XXH_P2, 13) * XXH_P1;
}

uint32_t kp_xxh32(const void *vp, size_t n, uint32_t seed)
{
    const uint8_t *p = vp;
    size_t left = n;
    uint32_t h;
    if (left >= 16) {
        uint32_t v1 = seed + XXH_P1 + XXH_P2;
        uint32_t v2 = seed + XXH_P2;
        uint32_t v3 = seed;
        uint32_t v4 = seed - XXH_P1;
        while (left >= 16) {
            v1 = xxh_round(v1, load_le32(p));
            v2 = xxh_round(v2, load_le32(p + 4));
            v3 = xxh_round(v3, load_le32(p + 8));
            v4 = xxh_round(v4, load_le32(p + 12));
            p += 16;
            left -= 16;
        }
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = seed + XXH_P5;
    }
    h += (uint32_t)n;
    while (left >= 4) {
        h = rotl32(h + load_le32(p) * XXH_P3, 17) * XXH_P4;
        p += 4;
        left -= 4;
    }
    while (left > 0) {
        h = rotl32(h + (uint32_t)*p * XXH_P5, 11) * XXH_P1;
        p++;
        left--;
    }
    h ^= h >> 15;
    h *= XXH_P2;
    h ^= h >> 13;
    h *= XXH_P3;
    h ^= h >> 16;
    return h;
}

/*
 * Position of the header checksum byte of the LZ4 frame f[0..n), or 0 when
 * f does not start with a frame descriptor: magic(4) FLG BD
 * [content size(8)] [dictionary id(4)] HC.
 */
static size_t lz4_hc_pos(const uint8_t *f, size_t n)
{
    if (n < 7 || load_le32(f) != LZ4_FRAME_MAGIC) {
        return 0;
    }
    size_t pos = 6;
    if ((f[4] & 0x08) != 0) {
        pos += 8;
    }
    if ((f[4] & 0x01) != 0) {
        pos += 4;
    }
    return pos < n ? pos : 0;
}

/* The header checksum LZ4 defines (over the descriptor) or Kafka's magic-0
 * one (over the frame magic and the descriptor, KAFKA-3160). */
static uint8_t lz4_hc(const uint8_t *f, size_t hc_pos, bool broken)
{
    size_t from = broken ? 0 : 4;
    return (uint8_t)((kp_xxh32(f + from, hc_pos - from, 0) >> 8) & 0xff);
}

/* ---------------------------------------------------------------- reading */

struct message {
    int64_t Offset;
    int8_t Magic;
    int8_t Attributes;
    int64_t Timestamp; /* -1 in magic 0 */
    struct kp_bytes Key;
    struct kp_bytes Value;
};

/*
 * Reads the message at r's position, checking its framing and CRC.
 * Returns 0, KP_ITER_END at the end of the set, KP_E_CORRUPT or KP_E_CRC.
 */
static int read_message(struct kp_reader *r, struct message *m)
{
    size_t left = kp_rd_remaining(r);
    if (left == 0) {
        return KP_ITER_END;
    }
    if (left < KP_LEGACY_LOG_OVERHEAD) {
        return KP_E_CORRUPT;
    }
    const uint8_t *start = r->buf + r->off;
    m->Offset = kp_rd_i64(r);
    int32_t size = kp_rd_i32(r);
    if (size < KP_LEGACY_MIN_SIZE_V0 || (size_t)size > kp_rd_remaining(r)) {
        return KP_E_CORRUPT;
    }
    struct kp_reader mr;
    kp_rd_init(&mr, start + KP_LEGACY_LOG_OVERHEAD, (size_t)size);
    kp_rd_skip(r, (size_t)size);
    uint32_t crc = kp_rd_u32(&mr);
    if (kp_crc32(0, start + OFF_MAGIC, (size_t)size - 4) != crc) {
        return KP_E_CRC;
    }
    m->Magic = kp_rd_i8(&mr);
    m->Attributes = kp_rd_i8(&mr);
    if (m->Magic != 0 && m->Magic != 1) {
        return KP_E_CORRUPT;
    }
    m->Timestamp = m->Magic == 1 ? kp_rd_i64(&mr) : -1;
    m->Key = kp_rd_bytes(&mr);
    m->Value = kp_rd_bytes(&mr);
    if (mr.err != 0 || kp_rd_remaining(&mr) != 0) {
        return KP_E_CORRUPT;
    }
    return 0;
}

static int codec_of(const struct message *m)
{
    return m->Attributes & KP_LEGACY_ATTR_CODEC_MASK;
}

/* Decompresses a wrapper's value onto `plain` under *budget (reduced by
 * what it produced). */
static int inflate_wrapper(const struct message *m, struct kp_writer *plain, size_t *budget)
{
    int codec = codec_of(m);
    if (codec > KP_CODEC_LZ4) {
        return KP_E_CORRUPT;
    }
    if (m->Value.len < 0) {
        return KP_E_CORRUPT;
    }
    const uint8_t *in = m->Value.ptr;
    size_t in_len = (size_t)m->Value.len;
    uint8_t *fixed = NULL;
    if (codec == KP_CODEC_LZ4 && m->Magic == 0) {
        /* Kafka's magic-0 frames carry a checksum over the wrong bytes:
         * give a copy the right one so the LZ4 library takes it */
        size_t hc = lz4_hc_pos(in, in_len);
        if (hc != 0) {
            fixed = kp_malloc(in_len);
            if (fixed == NULL) {
                return KP_E_NOMEM;
            }
            memcpy(fixed, in, in_len);
            fixed[hc] = lz4_hc(fixed, hc, false);
            in = fixed;
        }
    }
    size_t before = plain->len;
    int err = kp_decompress(codec, in, in_len, *budget, plain);
    kp_free(fixed);
    if (err != 0) {
        return err;
    }
    *budget -= plain->len - before;
    return 0;
}

struct upconv {
    struct kp_batch_builder b;
    bool started;
    int codec;
    size_t max_batch;
    struct kp_legacy_info *info;
};

static int add_record(struct upconv *u, int64_t ts, const struct message *m)
{
    if (!u->started) {
        int err = kp_batch_builder_init(&u->b, u->codec, 0, ts, -1, -1, -1, u->max_batch);
        if (err != 0) {
            return err;
        }
        u->started = true;
    }
    int err = kp_batch_builder_add(&u->b, KP_OFFSET_DELTA_AUTO, ts, m->Key, m->Value, NULL, 0);
    if (err == KP_E_INVALID_ARG) {
        return KP_E_CORRUPT; /* a timestamp too far from the first one */
    }
    if (err == 0) {
        u->info->count++;
    }
    return err;
}

/* The inner messages of wrapper w, decompressed in plain[0..len). */
static int add_inner(struct upconv *u, const struct message *w, const uint8_t *plain, size_t len)
{
    struct kp_reader r;
    kp_rd_init(&r, plain, len);
    bool any = false;
    for (;;) {
        struct message m;
        int err = read_message(&r, &m);
        if (err == KP_ITER_END) {
            break;
        }
        if (err != 0) {
            return err;
        }
        if (codec_of(&m) != KP_CODEC_NONE || m.Magic != w->Magic) {
            /* Kafka: "Compressed outer record should not have an inner
             * record with a compression attribute set", and inner magic
             * must be the wrapper's */
            return KP_E_CORRUPT;
        }
        int64_t ts = m.Timestamp;
        if (w->Magic == 1 && (w->Attributes & KP_LEGACY_ATTR_LOG_APPEND_TIME) != 0) {
            ts = w->Timestamp;
        }
        err = add_record(u, ts, &m);
        if (err != 0) {
            return err;
        }
        any = true;
    }
    return any ? 0 : KP_E_CORRUPT;
}

int kp_legacy_upconvert(const uint8_t *set, size_t len, size_t max_decompressed,
                        size_t max_batch, struct kp_writer *out, struct kp_legacy_info *info)
{
    memset(info, 0, sizeof *info);
    struct upconv u;
    memset(&u, 0, sizeof u);
    u.max_batch = max_batch;
    u.info = info;
    u.codec = KP_CODEC_NONE;

    /* pass 1: framing, CRCs and the codec the batch will have */
    struct kp_reader r;
    kp_rd_init(&r, set, len);
    size_t n = 0;
    for (;;) {
        struct message m;
        int err = read_message(&r, &m);
        if (err == KP_ITER_END) {
            break;
        }
        if (err != 0) {
            return err;
        }
        if (codec_of(&m) > KP_CODEC_LZ4) {
            return KP_E_CORRUPT;
        }
        if (codec_of(&m) != KP_CODEC_NONE) {
            u.codec = codec_of(&m);
        }
        info->magic = m.Magic;
        n++;
    }
    info->codec = u.codec;
    if (n == 0) {
        return KP_E_CORRUPT;
    }

    /* pass 2: the records */
    struct kp_writer plain;
    kp_wr_init(&plain, max_decompressed);
    size_t budget = max_decompressed;
    int err = 0;
    kp_rd_init(&r, set, len);
    for (;;) {
        struct message m;
        err = read_message(&r, &m);
        if (err == KP_ITER_END) {
            err = 0;
            break;
        }
        if (err != 0) {
            break;
        }
        if (codec_of(&m) == KP_CODEC_NONE) {
            err = add_record(&u, m.Timestamp, &m);
        } else {
            kp_wr_reset(&plain);
            err = inflate_wrapper(&m, &plain, &budget);
            if (err == 0) {
                err = add_inner(&u, &m, plain.buf, plain.len);
            }
        }
        if (err != 0) {
            break;
        }
    }
    kp_wr_free(&plain);
    if (err == 0) {
        err = kp_batch_builder_finish(&u.b, out);
    }
    if (u.started) {
        kp_batch_builder_free(&u.b);
    }
    return err;
}

/* ---------------------------------------------------------------- writing */

/* Starts a message at w's end; returns its position. */
static size_t put_header(struct kp_writer *w, int8_t magic, int8_t attrs, int64_t offset,
                         int64_t ts)
{
    size_t at = w->len;
    kp_wr_i64(w, offset);
    kp_wr_i32(w, 0); /* MessageSize, patched by put_end */
    kp_wr_u32(w, 0); /* Crc, likewise */
    kp_wr_i8(w, magic);
    kp_wr_i8(w, attrs);
    if (magic == 1) {
        kp_wr_i64(w, ts);
    }
    return at;
}

/* Sets the MessageSize and Crc of the message started at `at`. */
static int put_end(struct kp_writer *w, size_t at)
{
    if (w->err != 0) {
        return w->err;
    }
    size_t size = w->len - at - KP_LEGACY_LOG_OVERHEAD;
    if (size > INT32_MAX) {
        return KP_E_TOO_LARGE;
    }
    kp_store_be32(w->buf + at + OFF_SIZE, (uint32_t)size);
    kp_store_be32(w->buf + at + OFF_CRC, kp_crc32(0, w->buf + at + OFF_MAGIC, size - 4));
    return 0;
}

static int put_message(struct kp_writer *w, int8_t magic, int8_t attrs, int64_t offset, int64_t ts,
                       struct kp_bytes key, struct kp_bytes value)
{
    size_t at = put_header(w, magic, attrs, offset, ts);
    kp_wr_bytes(w, key);
    kp_wr_bytes(w, value);
    return put_end(w, at);
}

/* The wrapper of inner[0..n) at `offset`, its value compressed with codec. */
static int put_wrapper(struct kp_writer *w, int8_t magic, int8_t attrs, int64_t offset, int64_t ts,
                       int codec, const uint8_t *inner, size_t n)
{
    size_t at = put_header(w, magic, (int8_t)(attrs | codec), offset, ts);
    kp_wr_i32(w, -1); /* null key */
    size_t vlen_at = w->len;
    kp_wr_i32(w, 0);
    if (w->err != 0) {
        return w->err;
    }
    int err = kp_compress(codec, inner, n, w);
    if (err != 0) {
        return err;
    }
    size_t vlen = w->len - vlen_at - 4;
    if (vlen > INT32_MAX) {
        return KP_E_TOO_LARGE;
    }
    kp_store_be32(w->buf + vlen_at, (uint32_t)vlen);
    if (codec == KP_CODEC_LZ4 && magic == 0) {
        /* what Kafka 2.0's KafkaLZ4BlockOutputStream writes for magic 0,
         * and what magic-0 readers (kafka-python's lz4_decode_old_kafka)
         * expect */
        uint8_t *f = w->buf + vlen_at + 4;
        size_t hc = lz4_hc_pos(f, vlen);
        if (hc != 0) {
            f[hc] = lz4_hc(f, hc, true);
        }
    }
    return put_end(w, at);
}

int kp_legacy_downconvert(const uint8_t *batch, size_t size, int8_t magic, int64_t first_offset,
                          size_t max_decompressed, struct kp_writer *out, int32_t *count)
{
    *count = 0;
    if (magic != 0 && magic != 1) {
        return KP_E_UNSUPPORTED;
    }
    if (out->err != 0) {
        return out->err;
    }
    size_t start_len = out->len;
    struct kp_batch_iter it;
    int err = kp_batch_iter_init(&it, batch, size, max_decompressed);
    if (err != 0) {
        kp_batch_iter_free(&it);
        return err;
    }
    const struct kp_batch_header *h = &it.h;
    int codec = kp_batch_codec(h);
    if (kp_batch_is_control(h)) {
        kp_batch_iter_free(&it); /* Kafka drops control batches below magic 2 */
        return 0;
    }
    if (codec > KP_CODEC_LZ4) {
        kp_batch_iter_free(&it);
        return KP_E_UNSUPPORTED;
    }
    bool log_append = kp_batch_timestamp_type(h) == KP_TS_LOG_APPEND_TIME;
    int8_t attrs = (int8_t)(magic == 1 && log_append ? KP_LEGACY_ATTR_LOG_APPEND_TIME : 0);
    struct kp_writer inner;
    kp_wr_init(&inner, out->max);
    struct kp_writer *dst = codec == KP_CODEC_NONE ? out : &inner;
    int64_t max_ts = -1;
    int64_t first = -1;
    int64_t last = -1;
    for (;;) {
        struct kp_record rec;
        err = kp_batch_iter_next(&it, &rec);
        if (err == KP_ITER_END) {
            err = 0;
            break;
        }
        if (err != 0) {
            break;
        }
        if (codec == KP_CODEC_NONE && rec.Offset < first_offset) {
            continue; /* RecordsUtil.downConvert: librdkafka relies on it */
        }
        if (first < 0) {
            first = rec.Offset;
        }
        last = rec.Offset;
        int64_t ts = magic == 1 ? rec.Timestamp : -1;
        if (ts > max_ts) {
            max_ts = ts;
        }
        /* magic-1 inner offsets are relative to the wrapper's first record
         * (MemoryRecordsBuilder's baseOffset: records.get(0).offset()) */
        int64_t off = codec != KP_CODEC_NONE && magic == 1 ? rec.Offset - first : rec.Offset;
        err = put_message(dst, magic, attrs, off, ts, rec.Key, rec.Value);
        if (err != 0) {
            break;
        }
        (*count)++;
    }
    if (err == 0 && codec != KP_CODEC_NONE && *count > 0) {
        int64_t wts = magic == 1 ? (log_append ? h->MaxTimestamp : max_ts) : -1;
        err = put_wrapper(out, magic, attrs, last, wts, codec, inner.buf, inner.len);
    }
    kp_wr_free(&inner);
    kp_batch_iter_free(&it);
    if (err != 0) {
        /* out as it was: a caller may keep what it held before */
        out->len = start_len;
        out->err = 0;
    }
    return err;
}
