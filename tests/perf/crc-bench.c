/*
 * crc-bench: CRC-32C throughput of each implementation behind kp_crc32c
 * (crc.h) on warm buffers of a few sizes, in GB/s (10^9 bytes per second).
 *
 *     crc-bench [SECONDS]
 *
 * Each (size, implementation) pair is timed twice over SECONDS (default
 * 0.2) of calls on the same buffer: independent calls (the CPU may overlap
 * one call with the next, as when the broker checks one batch after
 * another) and chained calls (each continues from the previous result, so
 * every call's latency counts). The best of 5 runs of each is printed, with
 * its ratio to the one-stream crc32 instruction (KP_CRC32C_HW, what
 * kp_crc32c used before the three-stream path). An implementation this CPU
 * lacks is listed as "n/a".
 * Exit status: 0, or 2 on a bad argument or a failed allocation.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <samsa-protocol/crc.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 5

struct impl {
    const char *name;
    enum kp_crc32c_impl impl;
    bool dispatch; /* kp_crc32c itself, whatever it chooses */
};

static const struct impl impls[] = {
    {"sw (slicing-by-8)", KP_CRC32C_SW, false},
    {"hw 1 stream", KP_CRC32C_HW, false},
    {"hw 3 streams", KP_CRC32C_HW_3WAY, false},
    {"kp_crc32c", KP_CRC32C_SW, true},
};

static double now_s(void)
{
    struct timespec t;
    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint32_t run(const struct impl *im, uint32_t crc, const uint8_t *buf, size_t n)
{
    return im->dispatch ? kp_crc32c(crc, buf, n) : kp_crc32c_with(im->impl, crc, buf, n);
}

/* Bytes per second of the best of RUNS runs of about `seconds` each. */
static double measure(const struct impl *im, const uint8_t *buf, size_t n, bool chained,
                      double seconds, volatile uint32_t *sink)
{
    double best = 0;
    for (int r = 0; r < RUNS; r++) {
        uint64_t calls = 0;
        uint32_t acc = 0;
        double t0 = now_s();
        double t = t0;
        while (t - t0 < seconds) {
            /* a batch of calls between clock reads keeps the clock's cost out */
            for (int i = 0; i < 64; i++) {
                if (chained) {
                    acc = run(im, acc, buf, n);
                } else {
                    acc ^= run(im, 0, buf, n);
                }
            }
            calls += 64;
            t = now_s();
        }
        *sink ^= acc;
        double rate = (double)calls * (double)n / (t - t0);
        if (rate > best) {
            best = rate;
        }
    }
    return best;
}

int main(int argc, char **argv)
{
    double seconds = 0.2;
    if (argc > 2) {
        fprintf(stderr, "usage: crc-bench [SECONDS]\n");
        return 2;
    }
    if (argc == 2) {
        char *end = NULL;
        errno = 0;
        seconds = strtod(argv[1], &end);
        if (errno != 0 || end == argv[1] || *end != '\0' || !(seconds > 0 && seconds <= 60)) {
            fprintf(stderr, "crc-bench: SECONDS must be a number in (0, 60], not '%s'\n", argv[1]);
            return 2;
        }
    }
    static const size_t sizes[] = {256, 1024, 16384, (size_t)1 << 20};
    size_t max = sizes[sizeof sizes / sizeof sizes[0] - 1];
    uint8_t *buf = malloc(max);
    if (buf == NULL) {
        fprintf(stderr, "crc-bench: out of memory\n");
        return 2;
    }
    uint32_t x = 1;
    for (size_t i = 0; i < max; i++) {
        x = x * 1664525u + 1013904223u;
        buf[i] = (uint8_t)(x >> 24);
    }
    volatile uint32_t sink = 0; /* results go somewhere, so no call is dropped */
    printf("%-8s %-18s %12s %8s %12s %8s\n", "size", "implementation", "independent", "vs hw 1",
           "chained", "vs hw 1");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        double base[2] = {0, 0};
        for (size_t k = 0; k < sizeof impls / sizeof impls[0]; k++) {
            const struct impl *im = &impls[k];
            printf("%-8zu %-18s", sizes[s], im->name);
            if (!im->dispatch && !kp_crc32c_impl_available(im->impl)) {
                printf(" %12s\n", "n/a");
                continue;
            }
            for (int chained = 0; chained < 2; chained++) {
                double rate = measure(im, buf, sizes[s], chained != 0, seconds, &sink);
                if (!im->dispatch && im->impl == KP_CRC32C_HW) {
                    base[chained] = rate;
                }
                printf(" %7.2f GB/s", rate / 1e9);
                if (base[chained] > 0) {
                    printf(" %7.2fx", rate / base[chained]);
                } else {
                    printf(" %8s", "-");
                }
            }
            printf("\n");
        }
    }
    free(buf);
    return 0;
}
