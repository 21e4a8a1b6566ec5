/*
 * Samsa tests: a scratch directory per test, removed with everything in it.
 * Include with _GNU_SOURCE (or _XOPEN_SOURCE >= 500) defined, for nftw(3).
 */
#ifndef SAMSA_TESTS_TMPDIR_H
#define SAMSA_TESTS_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static inline int st_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* mkdtemp of "/tmp/samsa-<name>-XXXXXX" into root (cap >= 64). NULL on failure. */
static inline char *st_tmpdir_make(char *root, size_t cap, const char *name)
{
    (void)snprintf(root, cap, "/tmp/samsa-%s-XXXXXX", name);
    return mkdtemp(root);
}

/* Removes root and everything under it: 0 or -1. */
static inline int st_tmpdir_remove(const char *root)
{
    return nftw(root, st_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
