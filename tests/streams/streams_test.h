/*
 * Helpers the CUnit programs of libsamsa-streams share: a seeded random
 * source (the same input on every run) and a topology's build checked.
 */
#ifndef SAMSA_STREAMS_TEST_H
#define SAMSA_STREAMS_TEST_H

#include <samsa/streams.h>

#include <stdint.h>
#include <stdio.h>

#include "cunit_run.h"

static inline uint64_t rng_next(uint64_t *s)
{
    /* splitmix64: a fixed seed gives the same input on every run */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* t, once its build is known to have no error (the test stops otherwise). */
static inline samsa_st_topology *checked(samsa_st_topology *t)
{
    const char *msg = NULL;
    int err = samsa_st_topology_error(t, &msg);
    if (err != SAMSA_OK) {
        (void)fprintf(stderr, "topology: %s\n", msg);
    }
    CU_ASSERT_EQUAL_FATAL(err, SAMSA_OK);
    return t;
}

#endif
