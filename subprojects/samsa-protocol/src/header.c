/* samsa-protocol: frames and headers (see header.h). */
#include <samsa-protocol/header.h>

int kp_frame_size(const uint8_t *p, size_t avail, int32_t max, int32_t *size)
{
    if (avail < 4) {
        return KP_AGAIN;
    }
    int32_t n = (int32_t)kp_load_be32(p);
    if (n < 0) {
        return KP_E_BAD_LENGTH;
    }
    if (n > max) {
        return KP_E_TOO_LARGE;
    }
    *size = n;
    return 0;
}

int16_t kp_request_header_version(int16_t api_key, int16_t api_version)
{
    const struct kp_api *api = kp_api_find(api_key);
    return kp_api_is_flexible(api, api_version) ? 2 : 1;
}

int16_t kp_response_header_version(int16_t api_key, int16_t api_version)
{
    if (api_key == 18) {
        return 0; /* ApiVersions: always v0, so that any client can read it */
    }
    const struct kp_api *api = kp_api_find(api_key);
    return kp_api_is_flexible(api, api_version) ? 1 : 0;
}

int kp_request_header_decode(struct kp_reader *r, struct kp_request_header *h,
                             int16_t *header_version)
{
    h->RequestApiKey = kp_rd_i16(r);
    h->RequestApiVersion = kp_rd_i16(r);
    h->CorrelationId = kp_rd_i32(r);
    h->ClientId = kp_rd_string(r);
    if (h->ClientId.len < 0) {
        h->ClientId.ptr = "";
        h->ClientId.len = 0;
    }
    int16_t hv = kp_request_header_version(h->RequestApiKey, h->RequestApiVersion);
    if (hv >= 2) {
        (void)kp_rd_skip_tags(r);
    }
    *header_version = hv;
    return r->err;
}

void kp_request_header_encode(struct kp_writer *w, int16_t header_version,
                              const struct kp_request_header *h)
{
    kp_wr_i16(w, h->RequestApiKey);
    kp_wr_i16(w, h->RequestApiVersion);
    kp_wr_i32(w, h->CorrelationId);
    if (header_version >= 1) {
        kp_wr_string(w, h->ClientId);
    }
    if (header_version >= 2) {
        kp_wr_empty_tags(w);
    }
}

int kp_response_header_decode(struct kp_reader *r, int16_t header_version,
                              struct kp_response_header *h)
{
    h->CorrelationId = kp_rd_i32(r);
    if (header_version >= 1) {
        (void)kp_rd_skip_tags(r);
    }
    return r->err;
}

void kp_response_header_encode(struct kp_writer *w, int16_t header_version,
                               const struct kp_response_header *h)
{
    kp_wr_i32(w, h->CorrelationId);
    if (header_version >= 1) {
        kp_wr_empty_tags(w);
    }
}

int kp_request_decode(const uint8_t *payload, size_t len, struct kp_arena *arena,
                      struct kp_request *out)
{
    struct kp_reader r;
    kp_rd_init(&r, payload, len);
    out->api = NULL;
    out->body = NULL;
    int err = kp_request_header_decode(&r, &out->header, &out->header_version);
    if (err != 0) {
        return err;
    }
    const struct kp_api *api = kp_api_find(out->header.RequestApiKey);
    if (api == NULL || out->header.RequestApiVersion < api->min_version ||
        out->header.RequestApiVersion > api->max_version) {
        out->api = api;
        return KP_E_UNSUPPORTED;
    }
    out->api = api;
    out->body = kp_arena_alloc(arena, api->request->body->size);
    if (out->body == NULL) {
        return KP_E_NOMEM;
    }
    return kp_msg_decode(api->request, out->header.RequestApiVersion, &r, arena, out->body);
}

int kp_response_decode(const uint8_t *payload, size_t len, int16_t api_key,
                       int16_t api_version, struct kp_arena *arena, struct kp_response_header *h,
                       void **body)
{
    struct kp_reader r;
    kp_rd_init(&r, payload, len);
    *body = NULL;
    const struct kp_api *api = kp_api_find(api_key);
    if (api == NULL || api_version < api->min_version || api_version > api->max_version) {
        return KP_E_UNSUPPORTED;
    }
    int err = kp_response_header_decode(&r, kp_response_header_version(api_key, api_version), h);
    if (err != 0) {
        return err;
    }
    void *b = kp_arena_alloc(arena, api->response->body->size);
    if (b == NULL) {
        return KP_E_NOMEM;
    }
    err = kp_msg_decode(api->response, api_version, &r, arena, b);
    if (err == 0) {
        *body = b;
    }
    return err;
}

/* Reserve the frame's size field; returns its position. */
static size_t frame_begin(struct kp_writer *w)
{
    size_t at = w->len;
    kp_wr_i32(w, 0);
    return at;
}

static int frame_end(struct kp_writer *w, size_t at)
{
    if (w->err == 0) {
        size_t n = w->len - at - 4;
        if (n > INT32_MAX) {
            kp_wr_fail(w, KP_E_TOO_LARGE);
        } else {
            kp_wr_patch_i32(w, at, (int32_t)n);
        }
    }
    return w->err;
}

int kp_request_encode(struct kp_writer *w, const struct kp_request_header *h, const void *body)
{
    const struct kp_api *api = kp_api_find(h->RequestApiKey);
    if (api == NULL) {
        kp_wr_fail(w, KP_E_UNSUPPORTED);
        return w->err;
    }
    size_t at = frame_begin(w);
    kp_request_header_encode(w, kp_request_header_version(h->RequestApiKey, h->RequestApiVersion),
                             h);
    int err = kp_msg_encode(api->request, h->RequestApiVersion, w, body);
    if (err != 0) {
        return err;
    }
    return frame_end(w, at);
}

int kp_response_encode(struct kp_writer *w, int16_t api_key, int16_t api_version,
                       int32_t correlation_id, const void *body)
{
    const struct kp_api *api = kp_api_find(api_key);
    if (api == NULL) {
        kp_wr_fail(w, KP_E_UNSUPPORTED);
        return w->err;
    }
    size_t at = frame_begin(w);
    struct kp_response_header h = {correlation_id};
    kp_response_header_encode(w, kp_response_header_version(api_key, api_version), &h);
    int err = kp_msg_encode(api->response, api_version, w, body);
    if (err != 0) {
        return err;
    }
    return frame_end(w, at);
}
