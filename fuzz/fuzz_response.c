/*
 * fuzz_response: every response decoder, as a client decodes a response to a
 * request it sent.
 *
 * Input: int16 API key, int16 version (big-endian; see fuzz_pick_api for how
 * any value maps onto a supported pair), then a response frame's payload
 * (header and body, without the 4-byte size) for kp_response_decode.
 *
 * Checks, beyond "no crash, no over-read, no leak": a response that decodes
 * encodes again (kp_response_encode), and the re-encoded frame decodes to an
 * equal response (CorrelationId and kp_msg_equal bodies).
 */
#include "fuzz.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/schema.h>

#define SELECTOR_SIZE 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < SELECTOR_SIZE || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    int16_t version = 0;
    const struct kp_api *api =
        fuzz_pick_api(fuzz_load_u16(data), fuzz_load_u16(data + 2), &version);
    const uint8_t *payload = data + SELECTOR_SIZE;
    size_t len = size - SELECTOR_SIZE;

    struct kp_arena arena;
    struct kp_arena arena2;
    struct kp_writer frame;
    kp_arena_init(&arena, len * 64 + (size_t)64 * 1024);
    kp_arena_init(&arena2, len * 64 + (size_t)64 * 1024);
    kp_wr_init(&frame, len + (size_t)64 * 1024);

    struct kp_response_header h;
    void *body = NULL;
    int rc = kp_response_decode(payload, len, api->key, version, &arena, &h, &body);
    if (rc != 0) {
        goto out_free;
    }
    fuzz_check(body != NULL, "a decoded response has no body", 0);

    rc = kp_response_encode(&frame, api->key, version, h.CorrelationId, body);
    fuzz_check(rc == 0, "a decoded response does not encode", rc);
    fuzz_check(frame.len >= 4 && frame.len - 4 <= len,
               "the re-encoded response is larger than the input", (int)frame.len);

    struct kp_response_header h2;
    void *body2 = NULL;
    rc = kp_response_decode(frame.buf + 4, frame.len - 4, api->key, version, &arena2, &h2, &body2);
    fuzz_check(rc == 0, "a re-encoded response does not decode", rc);
    fuzz_check(h.CorrelationId == h2.CorrelationId,
               "the response CorrelationId changed in a round trip", api->key);
    fuzz_check(kp_msg_equal(api->response, version, body, body2),
               "the response body changed in a round trip", api->key);

out_free:
    kp_wr_free(&frame);
    kp_arena_free(&arena2);
    kp_arena_free(&arena);
    return 0;
}
