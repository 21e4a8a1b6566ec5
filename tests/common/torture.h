/*
 * Allocation torture for unit suites of code that allocates through
 * samsa-protocol's wrapper (kp_malloc, kp_realloc, the arena, zlib's
 * allocator): built with -Dsamsa-protocol:alloc_torture=true, the wrapper
 * can fail the Nth allocation of the calling thread (alloc.h).
 *
 * st_torture_each_allocation(work, ctx, name) first runs work once with
 * nothing failing, counting its allocations (N), then N times more, the
 * i-th allocation failing in run i: each of those runs must return
 * KP_E_NOMEM (not crash, not succeed with a half-built result, not leak:
 * the torture build runs under ASan's leak checker). A last run with the
 * count set past N must succeed again. work must free everything it made
 * before it returns, whatever happened.
 *
 * Without torture built in, work runs once and must succeed; the return
 * value (the number of failing runs) is then 0. ci/test's torture step
 * builds the suites that use this with torture on (tests/README.md).
 */
#ifndef SAMSA_TESTS_TORTURE_H
#define SAMSA_TESTS_TORTURE_H

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include <stdbool.h>
#include <stdio.h>

#include "cunit_run.h"

/* Whether this build fails allocations on request. */
static inline bool st_torture_enabled(void)
{
    (void)kp_alloc_torture_set(1);
    void *p = kp_malloc(1);
    (void)kp_alloc_torture_set(0);
    kp_free(p);
    return p == NULL;
}

/* Returns how many runs had an allocation failed (0 without torture). */
static inline unsigned long st_torture_each_allocation(int (*work)(void *ctx), void *ctx,
                                                      const char *name)
{
    (void)kp_alloc_torture_set(0);
    int rc = work(ctx);
    unsigned long n = kp_alloc_torture_set(0);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    if (!st_torture_enabled()) {
        return 0;
    }
    /* a torture run that counts nothing proves nothing */
    CU_ASSERT_FATAL(n > 0);
    unsigned long failed_runs = 0;
    for (unsigned long nth = 1; nth <= n; nth++) {
        (void)kp_alloc_torture_set(nth);
        rc = work(ctx);
        unsigned long made = kp_alloc_torture_set(0);
        if (rc != KP_E_NOMEM) {
            (void)fprintf(stderr, "\n%s: allocation %lu of %lu failed, yet the result is %s\n",
                          name, nth, n, kp_err_name(rc));
        }
        CU_ASSERT_EQUAL_FATAL(rc, KP_E_NOMEM);
        /* the failure stopped the work: it made at most the failed one */
        CU_ASSERT(made >= nth && made <= n);
        failed_runs++;
    }
    (void)kp_alloc_torture_set(n + 1);
    rc = work(ctx);
    CU_ASSERT_EQUAL(kp_alloc_torture_set(0), n);
    CU_ASSERT_EQUAL(rc, 0);
    return failed_runs;
}

#endif
