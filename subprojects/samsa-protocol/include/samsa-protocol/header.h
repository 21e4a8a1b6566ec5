/*
 * samsa-protocol: frames, request and response headers, and whole messages.
 *
 * A frame is an int32 size followed by that many bytes. Request headers:
 *   v0: RequestApiKey, RequestApiVersion, CorrelationId
 *   v1: v0 + ClientId (nullable string, int16 length)
 *   v2: v1 + a tagged-field section (flexible requests; ClientId stays a
 *       classic string)
 * Response headers: v0: CorrelationId; v1: v0 + tagged fields. ApiVersions
 * responses always use v0, whatever their body's version.
 */
#ifndef SAMSA_PROTOCOL_HEADER_H
#define SAMSA_PROTOCOL_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/schema.h>

struct kp_request_header {
    int16_t RequestApiKey;
    int16_t RequestApiVersion;
    int32_t CorrelationId;
    struct kp_str ClientId; /* v1+; a null one is read as "" */
};

struct kp_response_header {
    int32_t CorrelationId;
};

/*
 * Size of the frame starting at p: KP_AGAIN while fewer than 4 bytes are
 * there; KP_E_BAD_LENGTH for a negative size, KP_E_TOO_LARGE above `max`.
 * Otherwise 0 and *size is the payload length (the caller waits for
 * 4 + *size bytes). Checked before anything is allocated.
 */
KP_MUST_CHECK int kp_frame_size(const uint8_t *p, size_t avail, int32_t max, int32_t *size);

/* Header versions for an API and version Samsa knows (ControlledShutdown v0's
 * header v0, without ClientId, is never used: Samsa speaks ControlledShutdown
 * v1 only). For an unknown API or version the request header is read as v1,
 * which every non-flexible API uses. */
int16_t kp_request_header_version(int16_t api_key, int16_t api_version);
int16_t kp_response_header_version(int16_t api_key, int16_t api_version);

/* Decode the request header at the start of a frame's payload, choosing the
 * header version from the API table. *header_version receives it. */
KP_MUST_CHECK int kp_request_header_decode(struct kp_reader *r, struct kp_request_header *h,
                                           int16_t *header_version);
void kp_request_header_encode(struct kp_writer *w, int16_t header_version,
                              const struct kp_request_header *h);
KP_MUST_CHECK int kp_response_header_decode(struct kp_reader *r, int16_t header_version,
                                            struct kp_response_header *h);
void kp_response_header_encode(struct kp_writer *w, int16_t header_version,
                               const struct kp_response_header *h);

/* A decoded request: header plus body. */
struct kp_request {
    struct kp_request_header header;
    int16_t header_version;
    const struct kp_api *api; /* NULL when the API key is unknown */
    void *body;               /* the kp_<Api>Request struct, in the arena */
};

/*
 * Decode one request frame payload (without the 4-byte size) the way a broker
 * dispatches it: header, then the body decoder of that API and version.
 * Returns 0; KP_E_UNSUPPORTED when the API or version is not supported (the
 * header is still filled in, so an error response can be correlated); or a
 * decode error (the header may be filled in when it decoded).
 */
KP_MUST_CHECK int kp_request_decode(const uint8_t *payload, size_t len, struct kp_arena *arena,
                                    struct kp_request *out);

/* Decode a response payload for the API and version of the request it
 * answers; *body points to the kp_<Api>Response struct in the arena. */
KP_MUST_CHECK int kp_response_decode(const uint8_t *payload, size_t len, int16_t api_key,
                                     int16_t api_version, struct kp_arena *arena,
                                     struct kp_response_header *h, void **body);

/* Append a whole request frame (size, header, body) / response frame. */
KP_MUST_CHECK int kp_request_encode(struct kp_writer *w, const struct kp_request_header *h,
                                    const void *body);
KP_MUST_CHECK int kp_response_encode(struct kp_writer *w, int16_t api_key, int16_t api_version,
                                     int32_t correlation_id, const void *body);

#endif
