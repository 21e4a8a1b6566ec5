/*
 * samsa-protocol: the compression codecs of Kafka record batches.
 *
 * The codec numbers are Kafka's (bits 0-2 of a batch's Attributes). What each
 * codec means on the wire:
 *   gzip    an RFC 1952 gzip stream (a zlib stream is accepted too, and
 *           concatenated gzip members);
 *   snappy  raw snappy (librdkafka) or the xerial/snappy-java framing
 *           "\x82SNAPPY\0" + i32 version + i32 compat + (i32 BE len + raw
 *           snappy chunk)* (kafka-python's default); the version and compat
 *           fields are ignored, some writers store them little-endian;
 *   lz4     LZ4 frames (magic >= 1 batches; never the broken magic-0 variant);
 *   zstd    zstd frames.
 *
 * Decompression treats its input as hostile: output is produced in bounded
 * steps and stops as soon as it would pass the caller's ceiling, so a
 * "decompression bomb" costs at most the ceiling in memory. The codecs'
 * own working memory is bounded too: zlib's by its fixed 32 KiB window,
 * lz4's by the 4 MiB largest block, zstd's by refusing frames whose window
 * exceeds max(8 MiB, the ceiling rounded up to a power of two), at most
 * 128 MiB.
 * zlib allocates through kp_malloc; snappy, lz4 and zstd use their own
 * allocator for their working memory.
 *
 * Output is appended to a kp_writer and is subject to its ceiling too. On
 * failure the writer's length is restored to its value at entry.
 */
#ifndef SAMSA_PROTOCOL_COMPRESS_H
#define SAMSA_PROTOCOL_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

enum kp_codec {
    KP_CODEC_NONE = 0,
    KP_CODEC_GZIP = 1,
    KP_CODEC_SNAPPY = 2,
    KP_CODEC_LZ4 = 3,
    KP_CODEC_ZSTD = 4,
};

/* Highest codec number Samsa knows. */
#define KP_CODEC_MAX KP_CODEC_ZSTD

/* "none", "gzip", "snappy", "lz4", "zstd", or "unknown"; never NULL. */
const char *kp_codec_name(int codec);

/*
 * Decompresses in[0..in_len) with `codec` and appends the result to `out`.
 * KP_CODEC_NONE copies. Returns 0, or
 *   KP_E_TOO_LARGE    the output would exceed max_out bytes (or the
 *                     writer's ceiling); stops there;
 *   KP_E_COMPRESSION  corrupt or truncated input;
 *   KP_E_UNSUPPORTED  unknown codec;
 *   KP_E_NOMEM        allocation failed;
 *   out->err          when the writer had already failed.
 */
KP_MUST_CHECK int kp_decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out,
                                struct kp_writer *out);

/*
 * Compresses in[0..in_len) with `codec` and appends the result to `out`:
 * a gzip stream, raw snappy, an LZ4 frame (independent blocks, the layout
 * Kafka's Java reader accepts) or a zstd frame at the default level.
 * KP_CODEC_NONE copies. in_len is at most INT32_MAX (KP_E_TOO_LARGE).
 * Returns 0, KP_E_UNSUPPORTED, KP_E_TOO_LARGE (writer ceiling),
 * KP_E_COMPRESSION (the library failed), KP_E_NOMEM, or out->err.
 */
KP_MUST_CHECK int kp_compress(int codec, const uint8_t *in, size_t in_len, struct kp_writer *out);

#endif
