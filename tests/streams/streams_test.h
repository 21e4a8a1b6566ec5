/*
 * Helpers the CUnit programs of libsamsa-streams share: a seeded random
 * source (the same input on every run), a topology's build checked, and
 * drivers keeping their stores in LMDB files for the cases run on_lmdb.
 */
#ifndef SAMSA_STREAMS_TEST_H
#define SAMSA_STREAMS_TEST_H

#include <samsa/streams.h>

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Where the cases running on LMDB keep their stores (NULL: in memory). */
static const char *lmdb_dir;

static inline samsa_st_driver *new_driver(samsa_st_topology *t, const char *application_id)
{
    samsa_st_driver *d = samsa_st_driver_new(t, application_id, 0);
    if (d != NULL && lmdb_dir != NULL) {
        CU_ASSERT_EQUAL(samsa_st_driver_set_state_dir(d, lmdb_dir), SAMSA_OK);
    }
    return d;
}

static inline int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Runs case_fn with its stores in LMDB files under a fresh folder. */
static inline void on_lmdb(void (*case_fn)(void))
{
    char dir[] = "/tmp/samsa-streams-lmdb-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    lmdb_dir = dir;
    case_fn();
    lmdb_dir = NULL;
    CU_ASSERT_EQUAL(nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

#endif
