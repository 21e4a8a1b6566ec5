/* samsa-broker: the reactor's timers, in an intrusive pairing heap: arming
 * cannot fail; and the end-of-turn tasks' queue, which net.c runs (see
 * net.h). */
#define _GNU_SOURCE

#include "reactor/net_internal.h"

/* ---------------------------------------------------------------- timers */

void br_timer_init(struct br_timer *t, const struct br_timer_ops *ops, void *owner)
{
    t->deadline_ms = 0;
    t->ops = ops;
    t->owner = owner;
    t->child = NULL;
    t->next = NULL;
    t->prev = NULL;
    t->armed = false;
}

bool br_timer_armed(const struct br_timer *t)
{
    return t->armed;
}

/* The root of the two heaps a and b (detached roots, either NULL): the
 * later one becomes the leftmost child of the earlier. */
static struct br_timer *heap_meld(struct br_timer *a, struct br_timer *b)
{
    if (a == NULL) {
        return b;
    }
    if (b == NULL) {
        return a;
    }
    if (b->deadline_ms < a->deadline_ms) {
        struct br_timer *t = a;
        a = b;
        b = t;
    }
    b->prev = a;
    b->next = a->child;
    if (a->child != NULL) {
        a->child->prev = b;
    }
    a->child = b;
    return a;
}

/* The two-pass pairing of a list of siblings into one heap: pairs melded
 * left to right, then the pairs melded right to left (what bounds the
 * amortized cost of removing the minimum to O(log n)). */
static struct br_timer *heap_merge_pairs(struct br_timer *first)
{
    struct br_timer *stack = NULL;
    while (first != NULL) {
        struct br_timer *a = first;
        struct br_timer *b = a->next;
        first = b != NULL ? b->next : NULL;
        a->next = NULL;
        a->prev = NULL;
        if (b != NULL) {
            b->next = NULL;
            b->prev = NULL;
        }
        a = heap_meld(a, b);
        a->next = stack; /* a root: its sibling link is free to chain the pairs */
        stack = a;
    }
    struct br_timer *root = NULL;
    while (stack != NULL) {
        struct br_timer *s = stack;
        stack = s->next;
        s->next = NULL;
        root = heap_meld(root, s);
    }
    return root;
}

void br_timer_cancel(struct br_net *n, struct br_timer *t)
{
    if (!t->armed) {
        return;
    }
    if (t == n->timers) {
        n->timers = heap_merge_pairs(t->child);
    } else {
        if (t->prev->child == t) {
            t->prev->child = t->next;
        } else {
            t->prev->next = t->next;
        }
        if (t->next != NULL) {
            t->next->prev = t->prev;
        }
        n->timers = heap_meld(n->timers, heap_merge_pairs(t->child));
    }
    t->child = NULL;
    t->next = NULL;
    t->prev = NULL;
    t->armed = false;
}

void br_timer_arm(struct br_net *n, struct br_timer *t, int64_t deadline_ms)
{
    br_timer_cancel(n, t);
    t->deadline_ms = deadline_ms;
    t->armed = true;
    n->timers = heap_meld(n->timers, t);
}

/* ---------------------------------------------------------------- tasks */

void br_task_init(struct br_task *t, const struct br_task_ops *ops, void *owner)
{
    t->ops = ops;
    t->owner = owner;
    t->next = NULL;
    t->posted = false;
}

void br_task_post(struct br_net *n, struct br_task *t)
{
    if (t->posted) {
        return;
    }
    t->posted = true;
    t->next = NULL;
    if (n->tasks_tail != NULL) {
        n->tasks_tail->next = t;
    } else {
        n->tasks = t;
    }
    n->tasks_tail = t;
}

void br_task_cancel(struct br_net *n, struct br_task *t)
{
    if (!t->posted) {
        return;
    }
    struct br_task *prev = NULL;
    for (struct br_task *each = n->tasks; each != NULL; prev = each, each = each->next) {
        if (each != t) {
            continue;
        }
        if (prev != NULL) {
            prev->next = t->next;
        } else {
            n->tasks = t->next;
        }
        if (n->tasks_tail == t) {
            n->tasks_tail = prev;
        }
        if (n->run_last == t) {
            n->run_last = prev;
        }
        break;
    }
    t->next = NULL;
    t->posted = false;
}
