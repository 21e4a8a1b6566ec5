/*
 * Samsa fuzz harnesses: the entry point every harness defines and the checks
 * they share.
 *
 * Each fuzz_<name>.c defines LLVMFuzzerTestOneInput. Linked with libFuzzer
 * (clang -fsanitize=fuzzer) it is a fuzzer; linked with replay_main.c it is a
 * program that runs the files it is given (gcc builds, the unit suite's
 * replays, AFL++).
 *
 * A harness returns 0 for every input. Rejecting an input is never a finding;
 * a crash, a sanitizer report or a broken invariant is. Invariants are checked
 * with fuzz_check(), which prints what broke and where, then aborts, so that
 * libFuzzer and AFL++ keep the input and the unit suite's replay fails.
 */
#ifndef SAMSA_FUZZ_H
#define SAMSA_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <samsa-protocol/schema.h>

/* libFuzzer's entry point: called once per input; data[0..size) is only
 * valid during the call. Always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs above this size are skipped: every harness bounds its memory by a
 * multiple of the input size, and nothing deeper is reached by sheer bulk. */
#define FUZZ_MAX_INPUT ((size_t)8 * 1024 * 1024)

/* A finding: prints the broken invariant with its site and aborts. */
static inline _Noreturn void fuzz_fail_at(const char *what, int code, const char *file, int line)
{
    (void)fprintf(stderr, "%s:%d: fuzz invariant broken: %s (code %d)\n", file, line, what, code);
    (void)fflush(stderr);
    abort();
}

/* Aborts with `what` when `ok` is false; `code` is printed with it (an error
 * code, a length: whatever helps the reader of the report). */
static inline void fuzz_check_at(bool ok, const char *what, int code, const char *file, int line)
{
    if (!ok) {
        fuzz_fail_at(what, code, file, line);
    }
}

/* A macro around the _Noreturn call, so that static analysers see the path
 * end where the check fails. */
#define fuzz_check(ok, what, code)                                                                 \
    do {                                                                                           \
        if (!(ok)) {                                                                               \
            fuzz_fail_at((what), (code), __FILE__, __LINE__);                                      \
        }                                                                                          \
    } while (0)

static inline uint16_t fuzz_load_u16(const uint8_t *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | (unsigned)p[1]);
}

/*
 * The API and version a selector picks (fuzz_response, fuzz_roundtrip): an API
 * key Samsa speaks selects itself, any other value kp_apis[value % count]; a
 * version in the API's range selects itself, any other min + value % (the
 * range's size). So seeds carry the real key and version, and every value the
 * fuzzer tries lands on a supported pair.
 */
static inline const struct kp_api *fuzz_pick_api(uint16_t key, uint16_t version,
                                                 int16_t *version_out)
{
    const struct kp_api *api = kp_api_find((int16_t)key);
    if (api == NULL) {
        api = &kp_apis[key % kp_apis_count];
    }
    int32_t v = (int16_t)version;
    if (v < api->min_version || v > api->max_version) {
        int32_t range = api->max_version - api->min_version + 1;
        v = api->min_version + (int32_t)(version % (uint32_t)range);
    }
    *version_out = (int16_t)v;
    return api;
}

#endif
