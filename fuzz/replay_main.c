/*
 * replay_main: main() for the harnesses when libFuzzer does not provide one:
 * gcc builds, the unit suite's replays of seeds and regressions, AFL++.
 *
 *   replay_<name> PATH...   runs each file, and each file of each directory
 *                           (in name order, not recursing, dot files skipped),
 *                           through LLVMFuzzerTestOneInput
 *   replay_<name>           runs one input read from stdin
 *
 * Each input is handed over in a heap buffer of exactly its size, as libFuzzer
 * does, so that a sanitizer build sees a one-byte over-read. A finding aborts
 * (the harness's fuzz_check, or a sanitizer) with the file name already
 * printed. Otherwise the exit status is 1 when a path could not be read, 0
 * when every input ran.
 *
 * Built by afl-clang-fast (__AFL_COMPILER), the program runs AFL++'s
 * persistent loop over shared-memory test cases when no path is given
 * (`afl-fuzz -i DIR -o OUT -- fuzz_<name>`), and the files one by one when
 * paths are given (`afl-fuzz ... -- fuzz_<name> @@`).
 */
#define _POSIX_C_SOURCE 200809L

#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef __AFL_COMPILER
#include <unistd.h> /* read(), used by __AFL_FUZZ_TESTCASE_LEN */
#endif

/* Larger inputs are refused: no harness needs them, and a mistaken path to
 * a huge file should not eat the machine. */
#define MAX_FILE ((size_t)64 * 1024 * 1024)

/* Runs one input from a copy of exactly `len` bytes. */
static void run_one(const uint8_t *data, size_t len)
{
    uint8_t *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL) {
        (void)fprintf(stderr, "replay: out of memory for %zu bytes\n", len);
        abort();
    }
    if (len > 0) {
        memcpy(copy, data, len);
    }
    (void)LLVMFuzzerTestOneInput(copy, len);
    free(copy);
}

/* Reads all of `f` (at most MAX_FILE bytes) into a buffer the caller frees.
 * Returns 0, or -1 with errno set. */
static int read_all(FILE *f, uint8_t **out, size_t *out_len)
{
    size_t cap = (size_t)64 * 1024;
    size_t len = 0;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) {
        return -1;
    }
    for (;;) {
        if (len == cap) {
            if (cap >= MAX_FILE) {
                free(buf);
                errno = EFBIG;
                return -1;
            }
            uint8_t *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                return -1;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            break;
        }
    }
    if (ferror(f)) {
        free(buf);
        errno = EIO;
        return -1;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

/* Replays one file; returns 0 or -1 (reported). */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        (void)fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = read_all(f, &buf, &len);
    int saved = errno;
    (void)fclose(f);
    if (rc != 0) {
        (void)fprintf(stderr, "replay: %s: %s\n", path, strerror(saved));
        return -1;
    }
    /* printed first, so that a crash report names its input */
    (void)fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    run_one(buf, len);
    free(buf);
    return 0;
}

static int skip_dot_files(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* Replays every regular file of a directory in name order; returns the
 * number replayed, or -1 (reported). */
static long replay_dir(const char *dir)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, skip_dot_files, alphasort);
    if (n < 0) {
        (void)fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    long done = 0;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        size_t plen = strlen(dir) + strlen(names[i]->d_name) + 2;
        char *path = malloc(plen);
        struct stat st;
        if (path == NULL) {
            (void)fprintf(stderr, "replay: out of memory\n");
            rc = -1;
        } else {
            (void)snprintf(path, plen, "%s/%s", dir, names[i]->d_name);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (replay_file(path) == 0) {
                    done++;
                } else {
                    rc = -1;
                }
            }
        }
        free(path);
        free(names[i]);
    }
    free(names);
    return rc == 0 ? done : -1;
}

#ifdef __AFL_COMPILER
/* AFL++'s shared-memory test case buffer. The macro's expansion ends with its
 * own semicolon (hence none here) and defines globals the fuzzer fills. */
__AFL_FUZZ_INIT()

/*
 * AFL++'s persistent loop: up to 10000 test cases per process. The AFL++
 * macros are written with GNU statement expressions and casts that drop
 * const: those warnings are silenced here, around them only.
 */
static void afl_loop(void)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wconversion"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-statement-expression"
#endif
    __AFL_INIT();
    const uint8_t *buf = __AFL_FUZZ_TESTCASE_BUF;
    while (__AFL_LOOP(10000)) {
        size_t len = __AFL_FUZZ_TESTCASE_LEN;
        run_one(buf, len);
    }
#pragma GCC diagnostic pop
}
#endif

int main(int argc, char **argv)
{
    if (argc < 2) {
#ifdef __AFL_COMPILER
        afl_loop();
        return 0;
#else
        uint8_t *buf = NULL;
        size_t len = 0;
        if (read_all(stdin, &buf, &len) != 0) {
            (void)fprintf(stderr, "replay: stdin: %s\n", strerror(errno));
            return 1;
        }
        run_one(buf, len);
        free(buf);
        (void)fprintf(stderr, "replay: 1 input from stdin, no finding\n");
        return 0;
#endif
    }
    long total = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            (void)fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            failed = 1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            long n = replay_dir(argv[i]);
            if (n < 0) {
                failed = 1;
            } else {
                total += n;
            }
        } else if (replay_file(argv[i]) == 0) {
            total++;
        } else {
            failed = 1;
        }
    }
    (void)fprintf(stderr, "replay: %ld inputs, no finding%s\n", total,
                  failed ? " (some paths could not be read)" : "");
    return failed;
}
