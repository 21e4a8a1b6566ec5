/*
 * samsa-protocol: the crate's one allocation wrapper and its arena.
 *
 * Every allocation of the crate goes through kp_malloc/kp_realloc/kp_free
 * (STYLE.md rule 12). Builds with -DKP_ALLOC_TORTURE can fail the Nth
 * allocation of the calling thread (kp_alloc_torture_set) to prove that every
 * failure path is handled.
 *
 * The arena holds what a decoded message points to (its arrays). It has a
 * ceiling set at creation; an allocation past it fails with NULL and the
 * arena remembers it (`refused`), so that a caller several calls up can
 * tell "over the ceiling" from "out of memory".
 * One arena per request: decode, handle, kp_arena_reset.
 */
#ifndef SAMSA_PROTOCOL_ALLOC_H
#define SAMSA_PROTOCOL_ALLOC_H

#include <stddef.h>

void *kp_malloc(size_t n);
void *kp_calloc(size_t nmemb, size_t size);
void *kp_realloc(void *p, size_t n);
void kp_free(void *p);

/* Torture mode (only with -DKP_ALLOC_TORTURE, else a no-op): the n-th next
 * allocation on this thread fails (n = 1: the very next), 0 disables.
 * Returns how many allocations were made since the last call. */
unsigned long kp_alloc_torture_set(unsigned long n);

struct kp_arena_chunk;

struct kp_arena {
    struct kp_arena_chunk *head;
    size_t used;    /* bytes handed out, all chunks */
    size_t max;     /* ceiling on used */
    size_t refused; /* bytes of the first allocation the ceiling refused; 0: none */
};

void kp_arena_init(struct kp_arena *a, size_t max);
/* Zeroed, max-aligned memory owned by the arena, or NULL at the ceiling. */
void *kp_arena_alloc(struct kp_arena *a, size_t n);
/* Frees everything but keeps the ceiling (and forgets `refused`); the arena
 * can be reused. */
void kp_arena_reset(struct kp_arena *a);
void kp_arena_free(struct kp_arena *a);

#endif
