/*
 * Vectors written out by hand from Kafka's Struct schemas (test_interbroker.c,
 * test_txn.c): each is the body of one request or response version, and a
 * function that checks its decoded fields one by one.
 */
#ifndef SAMSA_TESTS_PROTOCOL_HAND_VECTORS_H
#define SAMSA_TESTS_PROTOCOL_HAND_VECTORS_H

#include <samsa-protocol/schema.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vector {
    const struct kp_msg_desc *desc;
    int16_t version;
    const uint8_t *bytes;
    size_t len;
    const char *name;               /* the array's name, for messages */
    void (*check)(const void *msg); /* the decoded fields, one by one */
};

#define VECTOR(desc, version, bytes, check)                                                        \
    {                                                                                              \
        &(desc), (version), (bytes), sizeof(bytes), #bytes, (check)                                \
    }

/* items[0..count) is want[0..n). */
bool ints_are(const int32_t *items, int32_t count, const int32_t *want, int32_t n);

/* Each vector decodes, passes its check and re-encodes to the same bytes. */
void vectors_decode_and_reencode(const struct vector *vectors, size_t n);

/* Every strict prefix of each vector, and it with one byte more, fail to
 * decode. */
void vectors_cut_short_or_extended_fail(const struct vector *vectors, size_t n);

/* vectors hold a request and a response of every version of api (those
 * missing are named on stderr). */
bool vectors_cover_every_version(const struct kp_api *api, const struct vector *vectors, size_t n);

#endif
