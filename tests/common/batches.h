/*
 * Samsa tests: RecordBatch v2 batches built for the broker's unit tests, each
 * record "value" with no key.
 */
#ifndef SAMSA_TESTS_BATCHES_H
#define SAMSA_TESTS_BATCHES_H

#include <stdint.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/record_batch.h>

/* A batch of count records, of idempotent producer pid (epoch, first
 * sequence) when pid >= 0 (-1, -1, -1: none); its bytes in *len, the
 * caller's to kp_free. */
static inline uint8_t *st_producer_batch(int count, int64_t pid, int16_t epoch, int32_t seq,
                                         size_t *len)
{
    struct kp_batch_builder b;
    CU_ASSERT_EQUAL_FATAL(
        kp_batch_builder_init(&b, KP_CODEC_NONE, 0, 1000, pid, epoch, seq, 1 << 20), 0);
    for (int i = 0; i < count; i++) {
        struct kp_bytes v = {(const uint8_t *)"value", 5};
        CU_ASSERT_EQUAL_FATAL(
            kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, 1000 + i, KP_BYTES_NULL, v, NULL, 0), 0);
    }
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &w), 0);
    kp_batch_builder_free(&b);
    uint8_t *out = kp_wr_steal(&w, len);
    if (out == NULL) {
        abort();
    }
    return out;
}

#endif
