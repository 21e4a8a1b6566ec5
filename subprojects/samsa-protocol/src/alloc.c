/* samsa-protocol: allocation wrapper and arena (see alloc.h). */
#include <samsa-protocol/alloc.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef KP_ALLOC_TORTURE
/* Debug builds only: thread-local so that tests in parallel do not interfere. */
static _Thread_local unsigned long torture_countdown;
static _Thread_local unsigned long torture_count;

static int torture_fail(void)
{
    torture_count++;
    if (torture_countdown > 0) {
        torture_countdown--;
        if (torture_countdown == 0) {
            return 1;
        }
    }
    return 0;
}

unsigned long kp_alloc_torture_set(unsigned long n)
{
    unsigned long c = torture_count;
    torture_count = 0;
    torture_countdown = n;
    return c;
}
#else
static int torture_fail(void)
{
    return 0;
}

unsigned long kp_alloc_torture_set(unsigned long n)
{
    (void)n;
    return 0;
}
#endif

void *kp_malloc(size_t n)
{
    if (torture_fail()) {
        return NULL;
    }
    return malloc(n == 0 ? 1 : n);
}

void *kp_calloc(size_t nmemb, size_t size)
{
    if (torture_fail()) {
        return NULL;
    }
    if (nmemb == 0 || size == 0) {
        return calloc(1, 1);
    }
    return calloc(nmemb, size);
}

void *kp_realloc(void *p, size_t n)
{
    if (torture_fail()) {
        return NULL;
    }
    return realloc(p, n == 0 ? 1 : n);
}

void kp_free(void *p)
{
    free(p);
}

/* ---------------------------------------------------------------- arena */

#define ARENA_ALIGN 16u
#define ARENA_CHUNK 4096u

struct kp_arena_chunk {
    struct kp_arena_chunk *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    /* data follows, aligned */
};

static size_t chunk_header(void)
{
    return (sizeof(struct kp_arena_chunk) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

void kp_arena_init(struct kp_arena *a, size_t max)
{
    a->head = NULL;
    a->used = 0;
    a->max = max;
    a->refused = 0;
}

void *kp_arena_alloc(struct kp_arena *a, size_t n)
{
    if (n == 0) {
        n = 1;
    }
    if (n > SIZE_MAX - ARENA_ALIGN) {
        if (a->refused == 0) {
            a->refused = n;
        }
        return NULL;
    }
    size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (a->max - a->used < need || a->used > a->max) {
        if (a->refused == 0) {
            a->refused = n;
        }
        return NULL;
    }
    struct kp_arena_chunk *c = a->head;
    if (c == NULL || c->size - c->used < need) {
        size_t size = need > ARENA_CHUNK ? need : ARENA_CHUNK;
        c = kp_malloc(chunk_header() + size);
        if (c == NULL) {
            return NULL;
        }
        c->size = size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    uint8_t *p = (uint8_t *)c + chunk_header() + c->used;
    c->used += need;
    a->used += need;
    memset(p, 0, n);
    return p;
}

void kp_arena_reset(struct kp_arena *a)
{
    struct kp_arena_chunk *c = a->head;
    while (c != NULL) {
        struct kp_arena_chunk *next = c->next;
        kp_free(c);
        c = next;
    }
    a->head = NULL;
    a->used = 0;
    a->refused = 0;
}

void kp_arena_free(struct kp_arena *a)
{
    if (a != NULL) {
        kp_arena_reset(a);
    }
}
