/*
 * fuzz_roundtrip: decode, encode, decode again, encode again, for the body of
 * every request and every response of every supported version.
 *
 * Input: int16 API key, then uint16 whose top bit picks the direction (0:
 * request, 1: response) and whose low 15 bits are the version (see
 * fuzz_pick_api for how any value maps onto a supported pair), then a message
 * body (no frame size, no header) for kp_msg_decode.
 *
 * Checks, beyond "no crash, no over-read, no leak": a body that decodes
 * encodes; that encoding decodes to an equal message (kp_msg_equal) and
 * encodes to the very same bytes; and kp_msg_decode_prefix reads the first
 * encoding whole, followed by any bytes, without touching those bytes.
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/schema.h>

#define SELECTOR_SIZE 4
#define RESPONSE_BIT 0x8000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < SELECTOR_SIZE || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    uint16_t sel = fuzz_load_u16(data + 2);
    int16_t version = 0;
    const struct kp_api *api =
        fuzz_pick_api(fuzz_load_u16(data), (uint16_t)(sel & ~RESPONSE_BIT), &version);
    const struct kp_msg_desc *d = (sel & RESPONSE_BIT) != 0 ? api->response : api->request;
    const uint8_t *in = data + SELECTOR_SIZE;
    size_t len = size - SELECTOR_SIZE;

    /* one arena per decode, each with the ceiling a broker would give the
     * input: the re-decodes need exactly what the first one needed */
    struct kp_arena a1;
    struct kp_arena a2;
    struct kp_arena a3;
    kp_arena_init(&a1, len * 64 + (size_t)64 * 1024);
    kp_arena_init(&a2, len * 64 + (size_t)64 * 1024);
    kp_arena_init(&a3, len * 64 + (size_t)64 * 1024);
    struct kp_writer enc1;
    struct kp_writer enc2;
    /* an encoding is never larger than what it was decoded from; the slack
     * only keeps a codec bug from hiding behind the ceiling */
    kp_wr_init(&enc1, len + (size_t)64 * 1024);
    kp_wr_init(&enc2, len + (size_t)64 * 1024);
    void *m1 = kp_arena_alloc(&a1, d->body->size);
    void *m2 = kp_arena_alloc(&a2, d->body->size);
    void *m3 = kp_arena_alloc(&a3, d->body->size);
    fuzz_check(m1 != NULL && m2 != NULL && m3 != NULL, "an arena cannot hold a message",
               (int)d->body->size);

    struct kp_reader r;
    kp_rd_init(&r, in, len);
    int rc = kp_msg_decode(d, version, &r, &a1, m1);
    if (rc != 0) {
        fuzz_check(r.err == rc, "kp_msg_decode's result differs from the reader's error", rc);
        goto out_free;
    }
    fuzz_check(r.off == len, "kp_msg_decode succeeded without reading every byte", (int)r.off);

    rc = kp_msg_encode(d, version, &enc1, m1);
    fuzz_check(rc == 0, "a decoded message does not encode", rc);
    fuzz_check(enc1.len <= len, "the encoding is larger than its input", (int)enc1.len);

    kp_rd_init(&r, enc1.buf, enc1.len);
    rc = kp_msg_decode(d, version, &r, &a2, m2);
    fuzz_check(rc == 0, "an encoded message does not decode", rc);
    fuzz_check(kp_msg_equal(d, version, m1, m2), "the message changed in a round trip", api->key);

    rc = kp_msg_encode(d, version, &enc2, m2);
    fuzz_check(rc == 0, "a re-decoded message does not encode", rc);
    fuzz_check(enc1.len == enc2.len && (enc1.len == 0 || memcmp(enc1.buf, enc2.buf, enc1.len) == 0),
               "two encodings of one message differ", api->key);

    /* the same encoding with a trailer: the prefix decoder must stop at the
     * message's end and leave the trailer unread */
    static const uint8_t trailer[3] = {0xff, 0x00, 0x7f};
    kp_wr_raw(&enc2, trailer, sizeof trailer);
    fuzz_check(enc2.err == 0, "the writer cannot take a 3-byte trailer", enc2.err);
    kp_rd_init(&r, enc2.buf, enc2.len);
    rc = kp_msg_decode_prefix(d, version, &r, &a3, m3);
    fuzz_check(rc == 0 && r.off == enc1.len,
               "kp_msg_decode_prefix does not stop at the message's end", rc);
    fuzz_check(kp_msg_equal(d, version, m1, m3), "kp_msg_decode_prefix read another message",
               api->key);

out_free:
    kp_wr_free(&enc2);
    kp_wr_free(&enc1);
    kp_arena_free(&a3);
    kp_arena_free(&a2);
    kp_arena_free(&a1);
    return 0;
}
