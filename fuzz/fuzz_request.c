/*
 * fuzz_request: one request frame's payload (the bytes after the 4-byte size)
 * dispatched as the broker dispatches it: kp_request_decode reads the request
 * header, then the body decoder of that API and version, into an arena with a
 * ceiling.
 *
 * Checks, beyond "no crash, no over-read, no leak":
 *   - a request that decodes encodes again (kp_request_encode), and the
 *     re-encoded frame decodes to an equal request: same header, and
 *     kp_msg_equal bodies;
 *   - kp_msg_format renders both decodes as the same text, every byte of it
 *     printable ASCII (the rendering is JSON with \u escapes).
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/schema.h>

/* As the broker will size a request's arena: a multiple of the frame. */
static size_t arena_max(size_t size)
{
    return size * 64 + (size_t)64 * 1024;
}

/* Renders `body` into a fresh writer of `max` bytes; the caller frees it. */
static void format_body(const struct kp_msg_desc *d, int16_t version, const void *body, size_t max,
                        struct kp_writer *out)
{
    kp_wr_init(out, max);
    kp_msg_format(d, version, body, out);
    if (out->err != 0) {
        return; /* the ceiling: a partial rendering says nothing */
    }
    for (size_t i = 0; i < out->len; i++) {
        fuzz_check(out->buf[i] >= 0x20 && out->buf[i] < 0x7f,
                   "kp_msg_format wrote a byte that is not printable ASCII", out->buf[i]);
    }
}

static bool same_header(const struct kp_request *a, const struct kp_request *b)
{
    return a->header.RequestApiKey == b->header.RequestApiKey &&
           a->header.RequestApiVersion == b->header.RequestApiVersion &&
           a->header.CorrelationId == b->header.CorrelationId &&
           kp_str_eq(a->header.ClientId, b->header.ClientId) &&
           a->header_version == b->header_version && a->api == b->api;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) {
        return 0;
    }
    struct kp_arena arena;
    struct kp_arena arena2;
    struct kp_writer frame;
    struct kp_writer text;
    struct kp_writer text2;
    kp_arena_init(&arena, arena_max(size));
    kp_arena_init(&arena2, arena_max(size));
    /* a decoded request never encodes larger than its input plus the size
     * field; the slack only keeps a codec bug from hiding behind the ceiling */
    kp_wr_init(&frame, size + (size_t)64 * 1024);
    kp_wr_init(&text, 0);
    kp_wr_init(&text2, 0);

    struct kp_request req;
    int rc = kp_request_decode(data, size, &arena, &req);
    if (rc != 0) {
        goto out_free;
    }
    fuzz_check(req.api != NULL && req.body != NULL, "a decoded request has no API or body", 0);
    const struct kp_msg_desc *d = req.api->request;
    int16_t version = req.header.RequestApiVersion;
    size_t text_max = (size_t)1024 * 1024 + size * 16;
    format_body(d, version, req.body, text_max, &text);

    rc = kp_request_encode(&frame, &req.header, req.body);
    fuzz_check(rc == 0, "a decoded request does not encode", rc);
    fuzz_check(frame.len >= 4 && frame.len - 4 <= size,
               "the re-encoded request is larger than the input", (int)frame.len);

    int32_t frame_size = 0;
    rc = kp_frame_size(frame.buf, frame.len, INT32_MAX, &frame_size);
    fuzz_check(rc == 0 && (size_t)frame_size == frame.len - 4,
               "kp_request_encode wrote a wrong frame size", rc);

    struct kp_request req2;
    rc = kp_request_decode(frame.buf + 4, frame.len - 4, &arena2, &req2);
    fuzz_check(rc == 0, "a re-encoded request does not decode", rc);
    fuzz_check(same_header(&req, &req2), "the request header changed in a round trip", 0);
    fuzz_check(kp_msg_equal(d, version, req.body, req2.body),
               "the request body changed in a round trip", req.header.RequestApiKey);

    format_body(d, version, req2.body, text_max, &text2);
    if (text.err == 0 && text2.err == 0) {
        fuzz_check(text.len == text2.len && memcmp(text.buf, text2.buf, text.len) == 0,
                   "equal requests are formatted differently", req.header.RequestApiKey);
    }

out_free:
    kp_wr_free(&text2);
    kp_wr_free(&text);
    kp_wr_free(&frame);
    kp_arena_free(&arena2);
    kp_arena_free(&arena);
    return 0;
}
