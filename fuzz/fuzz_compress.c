/*
 * fuzz_compress: kp_decompress on hostile input, for every codec.
 *
 * Input: one byte whose value modulo 5 picks the codec (0 none, 1 gzip,
 * 2 snappy, 3 lz4, 4 zstd: Kafka's numbers), then the compressed bytes.
 *
 * Checks, beyond "no crash, no over-read, no leak, no unbounded memory":
 *   - output is appended after what the writer held, never beyond the 1 MiB
 *     ceiling; a failure restores the writer's length and returns one of the
 *     documented codes;
 *   - the same input with a ceiling one byte below the output's size fails
 *     with KP_E_TOO_LARGE (the bomb limit is exact);
 *   - the output compresses (kp_compress), and that decompresses, with a
 *     ceiling of exactly its size, to the same bytes.
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/compress.h>
#include <samsa-protocol/err.h>

#define MAX_OUT ((size_t)1024 * 1024)

/* Bytes the output writer holds before decompression starts. */
static const uint8_t prefix[3] = {'p', 'f', 'x'};

static bool documented_error(int rc)
{
    return rc == KP_E_TOO_LARGE || rc == KP_E_COMPRESSION || rc == KP_E_UNSUPPORTED ||
           rc == KP_E_NOMEM;
}

/* Decompresses in[0..n) after `prefix` into a fresh writer `out` (the caller
 * frees it) and checks the writer contract; returns kp_decompress's code. */
static int decompress_checked(int codec, const uint8_t *in, size_t n, size_t max_out,
                              struct kp_writer *out)
{
    kp_wr_init(out, max_out + sizeof prefix + 64);
    kp_wr_raw(out, prefix, sizeof prefix);
    fuzz_check(out->err == 0, "the writer cannot take 3 bytes", out->err);
    int rc = kp_decompress(codec, in, n, max_out, out);
    fuzz_check(out->len >= sizeof prefix && memcmp(out->buf, prefix, sizeof prefix) == 0,
               "kp_decompress overwrote what the writer held", rc);
    if (rc != 0) {
        fuzz_check(documented_error(rc), "kp_decompress returned an undocumented code", rc);
        fuzz_check(out->len == sizeof prefix, "a failed kp_decompress left output in the writer",
                   (int)out->len);
    } else {
        fuzz_check(out->len - sizeof prefix <= max_out, "kp_decompress passed its ceiling",
                   (int)out->len);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    int codec = data[0] % (KP_CODEC_MAX + 1);
    const uint8_t *in = data + 1;
    size_t n = size - 1;

    struct kp_writer plain;
    struct kp_writer small;
    struct kp_writer packed;
    struct kp_writer again;
    kp_wr_init(&small, 0);
    kp_wr_init(&packed, 0);
    kp_wr_init(&again, 0);

    int rc = decompress_checked(codec, in, n, MAX_OUT, &plain);
    if (rc != 0) {
        goto out_free;
    }
    const uint8_t *out = plain.buf + sizeof prefix;
    size_t out_len = plain.len - sizeof prefix;

    if (out_len > 0) {
        kp_wr_free(&small);
        rc = decompress_checked(codec, in, n, out_len - 1, &small);
        fuzz_check(rc == KP_E_TOO_LARGE,
                   "a ceiling one byte below the output's size did not stop kp_decompress", rc);
    }

    /* worst cases: snappy n + n/6 + 32, lz4 and zstd about n + n/255 plus
     * their headers, gzip n + 5 per 16 KiB block + 18 */
    kp_wr_free(&packed);
    kp_wr_init(&packed, out_len + out_len / 4 + 4096);
    rc = kp_compress(codec, out, out_len, &packed);
    fuzz_check(rc == 0, "kp_compress failed on what kp_decompress produced", rc);

    kp_wr_free(&again);
    rc = decompress_checked(codec, packed.buf, packed.len, out_len, &again);
    fuzz_check(rc == 0, "kp_compress's output does not decompress", rc);
    fuzz_check(again.len - sizeof prefix == out_len &&
                   memcmp(again.buf + sizeof prefix, out, out_len) == 0,
               "compress then decompress changed the bytes", codec);

out_free:
    kp_wr_free(&again);
    kp_wr_free(&packed);
    kp_wr_free(&small);
    kp_wr_free(&plain);
    return 0;
}
