/*
 * Shared CUnit runner for Samsa's unit suites: one suite per test program,
 * verbose output, exit status = number of failed assertions (capped), so that
 * meson counts each program as one pass or fail.
 *
 * Usage:
 *   static CU_TestInfo tests[] = { {"name", fn}, ..., CU_TEST_INFO_NULL };
 *   int main(void) { return st_run_suite("protocol-buf", tests); }
 */
#ifndef SAMSA_TESTS_CUNIT_RUN_H
#define SAMSA_TESTS_CUNIT_RUN_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

static inline int st_run_suite(const char *name, CU_TestInfo *tests)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        return 2;
    }
    CU_SuiteInfo suites[] = {
        {name, NULL, NULL, NULL, NULL, tests},
        CU_SUITE_INFO_NULL,
    };
    if (CU_register_suites(suites) != CUE_SUCCESS) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    unsigned run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (run == 0) {
        return 3; /* a suite that ran nothing has failed */
    }
    return failed > 0 ? 1 : 0;
}

#endif
