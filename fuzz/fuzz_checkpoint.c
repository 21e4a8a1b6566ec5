/*
 * fuzz_checkpoint: the broker's checkpoint files (checkpoint.h): the
 * topic-partition format of recovery-point-offset-checkpoint,
 * replication-offset-checkpoint and log-start-offset-checkpoint, and the
 * leader-epoch-checkpoint format.
 *
 * Input: a file's bytes, handed to both parsers.
 *
 * Checks, beyond "no crash, no over-read, no leak":
 *   - a rejected file returns KP_E_CORRUPT (or KP_E_NOMEM), no entries, and
 *     an error naming a line of the file (or 0) and a reason with its
 *     detection site;
 *   - an accepted file is canonical: encoding its entries gives back exactly
 *     the input bytes (the parser admits one spelling per content);
 *   - accepted entries keep the documented ranges (valid topics, partitions
 *     and epochs in [0, INT32_MAX], offsets >= 0, epochs increasing);
 *   - for inputs up to 64 KiB, reading the bytes from a file agrees with
 *     parsing them, and writing the entries atomically and reading them back
 *     gives the same entries.
 */
#define _GNU_SOURCE

#include "fuzz.h"
#include "fuzz_tmp.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

#include "base/logging.h"
#include "storage/checkpoint.h"

#define MAX_ENTRIES 1000
#define FILE_ROUND_TRIP_MAX ((size_t)64 * 1024)

static char tmp_root[128];

static void remove_tmp_root(void)
{
    char path[256];
    static const char *const names[] = {"cp", "cp.tmp", "ep", "ep.tmp"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        (void)snprintf(path, sizeof path, "%s/%s", tmp_root, names[i]);
        (void)unlink(path);
    }
    (void)rmdir(tmp_root);
}

static bool make_tmp_root(void)
{
    if (tmp_root[0] != '\0') {
        return true;
    }
    if (!fuzz_make_tmp_dir(tmp_root, sizeof tmp_root, "ckpt")) {
        return false;
    }
    (void)atexit(remove_tmp_root);
    return true;
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    fuzz_check(fd >= 0, "cannot create the input file", errno);
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        fuzz_check(w > 0, "cannot write the input file", errno);
        done += (size_t)w;
    }
    (void)close(fd);
}

static void check_rejection(int rc, const void *out, size_t n,
                            const struct br_checkpoint_error *err)
{
    fuzz_check(rc == KP_E_CORRUPT || rc == KP_E_NOMEM, "undocumented error", rc);
    fuzz_check(out == NULL && n == 0, "a rejected file returned entries", rc);
    fuzz_check(err->reason != NULL && err->src_file != NULL && err->src_line > 0,
               "a rejection without a reason or detection site", rc);
    fuzz_check(err->line >= 0, "a rejection at a negative line", err->line);
}

static void check_canonical(const struct kp_writer *w, const uint8_t *data, size_t size)
{
    fuzz_check(w->err == 0, "encoding failed", w->err);
    fuzz_check(w->len == size && (size == 0 || memcmp(w->buf, data, size) == 0),
               "an accepted file is not what its entries encode to", (int)w->len);
}

static void fuzz_topics(const uint8_t *data, size_t size)
{
    struct br_checkpoint_entry *e = NULL;
    size_t n = 0;
    struct br_checkpoint_error err;
    int rc = br_checkpoint_parse((const char *)data, size, MAX_ENTRIES, &e, &n, &err);
    if (rc != 0) {
        check_rejection(rc, e, n, &err);
    } else {
        fuzz_check((n == 0) == (e == NULL), "entry array and count disagree", (int)n);
        fuzz_check(n <= MAX_ENTRIES, "more entries than the maximum", (int)n);
        for (size_t i = 0; i < n; i++) {
            size_t tl = strnlen(e[i].topic, sizeof e[i].topic);
            fuzz_check(tl < sizeof e[i].topic && br_topic_name_valid(e[i].topic, tl),
                       "an accepted invalid topic", (int)i);
            fuzz_check(e[i].partition >= 0 && e[i].offset >= 0, "an accepted negative value",
                       (int)i);
        }
        struct kp_writer w;
        kp_wr_init(&w, size + 64);
        int erc = br_checkpoint_encode(e, n, &w);
        fuzz_check(erc == 0, "accepted entries do not encode", erc);
        check_canonical(&w, data, size);
        kp_wr_free(&w);
    }

    if (size <= FILE_ROUND_TRIP_MAX && make_tmp_root()) {
        char path[256];
        (void)snprintf(path, sizeof path, "%s/cp", tmp_root);
        write_file(path, data, size);
        struct br_checkpoint_entry *f = NULL;
        size_t fn = 0;
        struct br_checkpoint_error ferr;
        int frc = br_checkpoint_read(path, MAX_ENTRIES, &f, &fn, &ferr);
        fuzz_check((frc == 0) == (rc == 0), "reading the file disagrees with parsing it", frc);
        fuzz_check(fn == n, "reading the file gives another count", (int)fn);
        br_checkpoint_free(f);
        if (rc == 0) {
            int wrc = br_checkpoint_write(path, e, n);
            fuzz_check(wrc == 0, "writing accepted entries failed", wrc);
            frc = br_checkpoint_read(path, MAX_ENTRIES, &f, &fn, &ferr);
            fuzz_check(frc == 0 && fn == n, "a written checkpoint does not read back", frc);
            for (size_t i = 0; i < n; i++) {
                fuzz_check(strcmp(f[i].topic, e[i].topic) == 0 &&
                               f[i].partition == e[i].partition && f[i].offset == e[i].offset,
                           "a written entry reads back different", (int)i);
            }
            br_checkpoint_free(f);
        }
    }
    br_checkpoint_free(e);
}

static void fuzz_epochs(const uint8_t *data, size_t size)
{
    struct br_epoch_entry *e = NULL;
    size_t n = 0;
    struct br_checkpoint_error err;
    int rc = br_epoch_checkpoint_parse((const char *)data, size, MAX_ENTRIES, &e, &n, &err);
    if (rc != 0) {
        check_rejection(rc, e, n, &err);
        return;
    }
    fuzz_check((n == 0) == (e == NULL), "entry array and count disagree", (int)n);
    for (size_t i = 0; i < n; i++) {
        fuzz_check(e[i].epoch >= 0 && e[i].start_offset >= 0, "an accepted negative value", (int)i);
        fuzz_check(i == 0 ||
                       (e[i].epoch > e[i - 1].epoch && e[i].start_offset >= e[i - 1].start_offset),
                   "accepted epochs out of order", (int)i);
    }
    struct kp_writer w;
    kp_wr_init(&w, size + 64);
    int erc = br_epoch_checkpoint_encode(e, n, &w);
    fuzz_check(erc == 0, "accepted epochs do not encode", erc);
    check_canonical(&w, data, size);
    kp_wr_free(&w);

    if (size <= FILE_ROUND_TRIP_MAX && make_tmp_root()) {
        char path[256];
        (void)snprintf(path, sizeof path, "%s/ep", tmp_root);
        int wrc = br_epoch_checkpoint_write(path, e, n);
        fuzz_check(wrc == 0, "writing accepted epochs failed", wrc);
        struct br_epoch_entry *f = NULL;
        size_t fn = 0;
        int frc = br_epoch_checkpoint_read(path, MAX_ENTRIES, &f, &fn, &err);
        fuzz_check(frc == 0 && fn == n, "a written epoch checkpoint does not read back", frc);
        for (size_t i = 0; i < n; i++) {
            fuzz_check(f[i].epoch == e[i].epoch && f[i].start_offset == e[i].start_offset,
                       "a written epoch reads back different", (int)i);
        }
        br_checkpoint_free(f);
    }
    br_checkpoint_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) {
        return 0;
    }
    br_logging_set_level(BR_LOG_ERROR);
    fuzz_topics(data, size);
    fuzz_epochs(data, size);
    return 0;
}
