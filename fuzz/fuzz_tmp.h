/*
 * Samsa fuzz harnesses: what the harnesses that write files share.
 * Include after fuzz.h, with _GNU_SOURCE (or _POSIX_C_SOURCE >= 200809L)
 * defined before the first include, for mkdtemp(3).
 */
#ifndef SAMSA_FUZZ_TMP_H
#define SAMSA_FUZZ_TMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * For the harnesses that write files: makes "<$TMPDIR or /tmp>/samsa-fuzz-<name>-XXXXXX"
 * with mkdtemp(3) into buf (cap >= 128), once per process: a later call with
 * buf already set does nothing. false when it cannot be made.
 */
static inline bool fuzz_make_tmp_dir(char *buf, size_t cap, const char *name)
{
    if (buf[0] != '\0') {
        return true;
    }
    const char *base = getenv("TMPDIR");
    (void)snprintf(buf, cap, "%s/samsa-fuzz-%s-XXXXXX",
                   base != NULL && strlen(base) < 64 ? base : "/tmp", name);
    if (mkdtemp(buf) == NULL) {
        buf[0] = '\0';
        return false;
    }
    return true;
}

#endif
