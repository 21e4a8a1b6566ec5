/* Unit tests for samsa-protocol's CRC-32C and CRC-32 (crc.h). */
#include <samsa-protocol/crc.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_run.h"

/* RFC 3720 appendix B.4: the iSCSI SCSI Read (10) command PDU. */
static const uint8_t iscsi_read_pdu[48] = {
    0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
    0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

struct crc_vector {
    const char *name;
    uint8_t data[48];
    size_t len;
    uint32_t crc;
};

static void fill_vectors(struct crc_vector v[6])
{
    memset(v, 0, 6 * sizeof v[0]);
    v[0].name = "32 zeros";
    v[0].len = 32;
    v[0].crc = 0x8A9136AAu;

    v[1].name = "32 x 0xff";
    memset(v[1].data, 0xff, 32);
    v[1].len = 32;
    v[1].crc = 0x62A8AB43u;

    v[2].name = "0..31";
    for (unsigned i = 0; i < 32; i++) {
        v[2].data[i] = (uint8_t)i;
    }
    v[2].len = 32;
    v[2].crc = 0x46DD794Eu;

    v[3].name = "31..0";
    for (unsigned i = 0; i < 32; i++) {
        v[3].data[i] = (uint8_t)(31 - i);
    }
    v[3].len = 32;
    v[3].crc = 0x113FDB5Cu;

    v[4].name = "iSCSI read PDU";
    memcpy(v[4].data, iscsi_read_pdu, sizeof iscsi_read_pdu);
    v[4].len = sizeof iscsi_read_pdu;
    v[4].crc = 0xD9963A56u;

    v[5].name = "123456789";
    memcpy(v[5].data, "123456789", 9);
    v[5].len = 9;
    v[5].crc = 0xE3069283u;
}

/* Every implementation kp_crc32c may choose; kp_crc32c_with falls back to
 * the portable one for those this CPU lacks. */
static const enum kp_crc32c_impl all_impls[] = {KP_CRC32C_SW, KP_CRC32C_HW, KP_CRC32C_HW_3WAY};
#define N_IMPLS (sizeof all_impls / sizeof all_impls[0])

static void test_crc32c_matches_rfc3720_vectors(void)
{
    struct crc_vector v[6];
    fill_vectors(v);
    for (size_t i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(kp_crc32c(0, v[i].data, v[i].len), v[i].crc);
        CU_ASSERT_EQUAL(kp_crc32c_sw(0, v[i].data, v[i].len), v[i].crc);
        for (size_t k = 0; k < N_IMPLS; k++) {
            CU_ASSERT_EQUAL(kp_crc32c_with(all_impls[k], 0, v[i].data, v[i].len), v[i].crc);
        }
    }
}

static void test_crc32c_of_nothing_is_identity(void)
{
    CU_ASSERT_EQUAL(kp_crc32c(0, NULL, 0), 0u);
    CU_ASSERT_EQUAL(kp_crc32c_sw(0, NULL, 0), 0u);
    CU_ASSERT_EQUAL(kp_crc32c(0xE3069283u, "", 0), 0xE3069283u);
    CU_ASSERT_EQUAL(kp_crc32c_sw(0xE3069283u, "", 0), 0xE3069283u);
}

static void test_crc32c_incremental_equals_one_shot(void)
{
    struct crc_vector v[6];
    fill_vectors(v);
    for (size_t i = 0; i < 6; i++) {
        for (size_t cut = 0; cut <= v[i].len; cut++) {
            uint32_t hw = kp_crc32c(0, v[i].data, cut);
            hw = kp_crc32c(hw, v[i].data + cut, v[i].len - cut);
            uint32_t sw = kp_crc32c_sw(0, v[i].data, cut);
            sw = kp_crc32c_sw(sw, v[i].data + cut, v[i].len - cut);
            CU_ASSERT_EQUAL(hw, v[i].crc);
            CU_ASSERT_EQUAL(sw, v[i].crc);
        }
    }
    /* byte by byte */
    uint32_t c = 0;
    for (size_t k = 0; k < v[4].len; k++) {
        c = kp_crc32c(c, &v[4].data[k], 1);
    }
    CU_ASSERT_EQUAL(c, 0xD9963A56u);
}

/* A small deterministic generator for test data (no global state). */
static uint32_t next_rand(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static void test_crc32c_hw_and_sw_paths_agree(void)
{
    static uint8_t buf[4096 + 16];
    uint32_t seed = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] = (uint8_t)next_rand(&seed);
    }
    /* every alignment and every length up to 300, then some long ones */
    for (size_t align = 0; align < 16; align++) {
        for (size_t len = 0; len <= 300; len++) {
            CU_ASSERT_EQUAL_FATAL(kp_crc32c(0, buf + align, len),
                                  kp_crc32c_sw(0, buf + align, len));
        }
        CU_ASSERT_EQUAL(kp_crc32c(7, buf + align, 4096), kp_crc32c_sw(7, buf + align, 4096));
    }
    /* the hardware path is exercised whenever the CPU has it */
    if (!kp_crc32c_hw_available()) {
        CU_PASS("no SSE4.2 on this CPU: only the portable path was compared");
    }
}

/* Byte i of the known-answer buffers below. */
static uint8_t pattern_byte(size_t i)
{
    return (uint8_t)(i * 7 + (i >> 9));
}

/* CRC-32C of long buffers over the pattern above, computed independently of
 * this code (a short reference implementation in Python, checked against
 * the bit-at-a-time definition); long enough that the three-stream path
 * takes full blocks, a last block of its own size and a tail. */
static void test_crc32c_matches_known_values_of_long_buffers(void)
{
    static const struct {
        size_t len;
        uint32_t crc;
    } known[] = {
        {4096, 0xDE7178CCu},
        {65536 + 7, 0x9D5C8D96u},
        {((size_t)1 << 20) + 3, 0x4B43222Au},
    };
    size_t max = known[2].len;
    uint8_t *buf = malloc(max);
    if (buf == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    for (size_t i = 0; i < max; i++) {
        buf[i] = pattern_byte(i);
    }
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        CU_ASSERT_EQUAL(kp_crc32c(0, buf, known[i].len), known[i].crc);
        for (size_t k = 0; k < N_IMPLS; k++) {
            CU_ASSERT_EQUAL(kp_crc32c_with(all_impls[k], 0, buf, known[i].len), known[i].crc);
        }
    }
    free(buf);
}

/*
 * One random case: impl over buf[align, align + len) from a random start
 * value, one shot and cut in two at a random point (chaining), against the
 * portable code in one shot. Returns false on a mismatch.
 */
static bool impl_agrees_with_sw(enum kp_crc32c_impl impl, const uint8_t *buf, size_t len,
                                uint32_t *seed)
{
    size_t align = next_rand(seed) % 16;
    uint32_t init = next_rand(seed) ^ (next_rand(seed) << 8);
    size_t cut = len > 0 ? next_rand(seed) % (len + 1) : 0;
    uint32_t want = kp_crc32c_sw(init, buf + align, len);
    uint32_t whole = kp_crc32c_with(impl, init, buf + align, len);
    uint32_t front = kp_crc32c_with(impl, init, buf + align, cut);
    uint32_t chained = kp_crc32c_with(impl, front, buf + align + cut, len - cut);
    return whole == want && chained == want && kp_crc32c(init, buf + align, len) == want;
}

/*
 * The hardware paths against the portable one over random bytes: every
 * length 0..4096; lengths 24k..24k+23 for every k up to 4096/8 + 1, so the
 * three-stream path runs a last block of every per-stream length it can
 * choose (each with its own shift constant); then long buffers (full blocks
 * followed by a short last block, or by a tail under 96 bytes).
 */
static void test_crc32c_hw_paths_agree_with_sw_at_every_length(void)
{
    /* 12288 bytes: one full block of three 4096-byte streams */
    static const size_t long_lens[] = {
        12288,
        12288 + 95,
        12288 + 96,
        (size_t)5 * 12288 + 50,
        65536 + 7,
        (size_t)1 << 20,
        ((size_t)1 << 20) + 3,
    };
    size_t max = ((size_t)1 << 20) + 3 + 16;
    uint8_t *buf = malloc(max);
    if (buf == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    uint32_t seed = 2024;
    for (size_t i = 0; i < max; i++) {
        buf[i] = (uint8_t)next_rand(&seed);
    }
    size_t tried = 0;
    for (size_t k = 0; k < N_IMPLS; k++) {
        enum kp_crc32c_impl impl = all_impls[k];
        if (impl == KP_CRC32C_SW || !kp_crc32c_impl_available(impl)) {
            continue;
        }
        tried++;
        size_t bad = 0;
        for (size_t len = 0; len <= 4096; len++) {
            bad += impl_agrees_with_sw(impl, buf, len, &seed) ? 0 : 1;
        }
        for (size_t blocks = 1; blocks <= 4096 / 8 + 1; blocks++) {
            size_t len = 24 * blocks + next_rand(&seed) % 24;
            bad += impl_agrees_with_sw(impl, buf, len, &seed) ? 0 : 1;
        }
        for (size_t i = 0; i < sizeof long_lens / sizeof long_lens[0]; i++) {
            bad += impl_agrees_with_sw(impl, buf, long_lens[i], &seed) ? 0 : 1;
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
    free(buf);
    if (tried < N_IMPLS - 1) {
        CU_PASS("this CPU lacks SSE4.2 or PCLMULQDQ: a hardware path was not compared");
    }
}

static void test_crc32c_combine_matches_concatenation(void)
{
    uint8_t buf[200];
    uint32_t seed = 99;
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] = (uint8_t)next_rand(&seed);
    }
    for (size_t cut = 0; cut <= sizeof buf; cut += 7) {
        uint32_t a = kp_crc32c(0, buf, cut);
        uint32_t b = kp_crc32c(0, buf + cut, sizeof buf - cut);
        CU_ASSERT_EQUAL(kp_crc32c_combine(a, b, sizeof buf - cut), kp_crc32c(0, buf, sizeof buf));
    }
}

static void test_crc32_ieee_check_value(void)
{
    CU_ASSERT_EQUAL(kp_crc32(0, "123456789", 9), 0xCBF43926u);
    uint32_t c = kp_crc32(0, "1234", 4);
    CU_ASSERT_EQUAL(kp_crc32(c, "56789", 5), 0xCBF43926u);
    CU_ASSERT_EQUAL(kp_crc32(0, NULL, 0), 0u);
}

static CU_TestInfo tests[] = {
    {"test_crc32c_matches_rfc3720_vectors", test_crc32c_matches_rfc3720_vectors},
    {"test_crc32c_of_nothing_is_identity", test_crc32c_of_nothing_is_identity},
    {"test_crc32c_incremental_equals_one_shot", test_crc32c_incremental_equals_one_shot},
    {"test_crc32c_hw_and_sw_paths_agree", test_crc32c_hw_and_sw_paths_agree},
    {"test_crc32c_matches_known_values_of_long_buffers",
     test_crc32c_matches_known_values_of_long_buffers},
    {"test_crc32c_hw_paths_agree_with_sw_at_every_length",
     test_crc32c_hw_paths_agree_with_sw_at_every_length},
    {"test_crc32c_combine_matches_concatenation", test_crc32c_combine_matches_concatenation},
    {"test_crc32_ieee_check_value", test_crc32_ieee_check_value},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("protocol-crc", tests);
}
