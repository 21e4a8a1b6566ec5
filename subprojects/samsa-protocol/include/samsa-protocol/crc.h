/*
 * samsa-protocol: checksums.
 *
 * CRC-32C (Castagnoli) guards RecordBatch v2 (bytes [21, end) of a batch);
 * CRC-32 (IEEE) guards the legacy MessageSet v0/v1 (magic through the end of
 * the message).
 *
 * Both are incremental in the zlib style: start with 0 and feed the result of
 * one call into the next:
 *
 *     uint32_t c = kp_crc32c(0, a, na);
 *     c = kp_crc32c(c, b, nb);        == kp_crc32c(0, a||b, na + nb)
 *
 * All functions are pure and thread-safe; `p` may be NULL only when n == 0.
 */
#ifndef SAMSA_PROTOCOL_CRC_H
#define SAMSA_PROTOCOL_CRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CRC-32C of p[0..n) continuing from `crc`. Uses the SSE4.2 crc32
 * instruction when the CPU has it (x86-64), on three interleaved streams for
 * buffers of 256 bytes and more when it also has PCLMULQDQ; else
 * kp_crc32c_sw. */
uint32_t kp_crc32c(uint32_t crc, const void *p, size_t n);

/* The same, always computed by the portable slicing-by-8 code. */
uint32_t kp_crc32c_sw(uint32_t crc, const void *p, size_t n);

/* True when kp_crc32c runs on the CPU's crc32 instruction. */
bool kp_crc32c_hw_available(void);

/* The implementations kp_crc32c chooses between, named so that tests and
 * benchmarks can run each one on any length. */
enum kp_crc32c_impl {
    KP_CRC32C_SW,      /* kp_crc32c_sw: portable slicing-by-8 */
    KP_CRC32C_HW,      /* SSE4.2 crc32, one dependency chain */
    KP_CRC32C_HW_3WAY, /* SSE4.2 crc32 on three streams merged with PCLMULQDQ;
                        * one chain for what is left below 96 bytes */
};

/* True when this CPU (and build) can run impl. */
bool kp_crc32c_impl_available(enum kp_crc32c_impl impl);

/* kp_crc32c computed by impl; an impl that is not available falls back to
 * kp_crc32c_sw (same result). */
uint32_t kp_crc32c_with(enum kp_crc32c_impl impl, uint32_t crc, const void *p, size_t n);

/*
 * CRC-32C of A||B from crc1 = kp_crc32c(0, A, |A|), crc2 = kp_crc32c(0, B,
 * len2). Costs O(log len2), independent of the data: used to rewrite a few
 * bytes at the front of a batch while checking the old CRC in the same pass.
 */
uint32_t kp_crc32c_combine(uint32_t crc1, uint32_t crc2, size_t len2);

/* CRC-32 (IEEE 802.3, zlib's crc32) of p[0..n) continuing from `crc`. */
uint32_t kp_crc32(uint32_t crc, const void *p, size_t n);

#endif
