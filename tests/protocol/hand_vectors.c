#include "hand_vectors.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

bool ints_are(const int32_t *items, int32_t count, const int32_t *want, int32_t n)
{
    if (count != n) {
        return false;
    }
    for (int32_t i = 0; i < n; i++) {
        if (items[i] != want[i]) {
            return false;
        }
    }
    return true;
}

void vectors_decode_and_reencode(const struct vector *vectors, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct vector *v = &vectors[i];
        struct kp_arena a;
        kp_arena_init(&a, 1 << 20);
        void *msg = kp_arena_alloc(&a, v->desc->body->size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
        struct kp_reader r;
        kp_rd_init(&r, v->bytes, v->len);
        int err = kp_msg_decode(v->desc, v->version, &r, &a, msg);
        if (err != 0) {
            fprintf(stderr, "\n  %s (%s v%d): %s at %s:%d\n", v->name, v->desc->name, v->version,
                    kp_err_name(err), r.err_file, r.err_line);
        }
        CU_ASSERT_EQUAL(err, 0);
        if (err == 0) {
            v->check(msg);
            struct kp_writer w;
            kp_wr_init(&w, 1 << 20);
            CU_ASSERT_EQUAL(kp_msg_encode(v->desc, v->version, &w, msg), 0);
            bool same = w.len == v->len && memcmp(w.buf, v->bytes, v->len) == 0;
            if (!same) {
                fprintf(stderr, "\n  %s (%s v%d): re-encoded %zu bytes, written out %zu\n", v->name,
                        v->desc->name, v->version, w.len, v->len);
            }
            CU_ASSERT(same);
            kp_wr_free(&w);
        }
        kp_arena_free(&a);
    }
}

void vectors_cut_short_or_extended_fail(const struct vector *vectors, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct vector *v = &vectors[i];
        uint8_t longer[512];
        CU_ASSERT_FATAL(v->len < sizeof longer);
        memcpy(longer, v->bytes, v->len);
        longer[v->len] = 0;
        for (size_t cut = 0; cut <= v->len + 1; cut++) {
            if (cut == v->len) {
                continue;
            }
            struct kp_arena a;
            kp_arena_init(&a, 1 << 20);
            void *msg = kp_arena_alloc(&a, v->desc->body->size);
            CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
            struct kp_reader r;
            kp_rd_init(&r, longer, cut);
            int err = kp_msg_decode(v->desc, v->version, &r, &a, msg);
            if (err == 0) {
                fprintf(stderr, "\n  %s: %zu of %zu bytes decoded\n", v->name, cut, v->len);
            }
            CU_ASSERT_NOT_EQUAL(err, 0);
            kp_arena_free(&a);
        }
    }
}

bool vectors_cover_every_version(const struct kp_api *api, const struct vector *vectors, size_t n)
{
    bool all = true;
    for (int16_t ver = api->min_version; ver <= api->max_version; ver++) {
        bool request = false;
        bool response = false;
        for (size_t i = 0; i < n; i++) {
            request = request || (vectors[i].desc == api->request && vectors[i].version == ver);
            response = response || (vectors[i].desc == api->response && vectors[i].version == ver);
        }
        if (!request || !response) {
            fprintf(stderr, "\n  %s v%d: no %s vector\n", api->name, ver,
                    request ? "response" : "request");
            all = false;
        }
    }
    return all;
}
