/*
 * Samsa tests: the ops of a reactor (broker/src/reactor/net.h) whose user
 * takes no connection's frames and parks nothing on them: for unit tests
 * that need a reactor only for its timers and end-of-turn tasks (the
 * purgatory's).
 */
#ifndef SAMSA_TESTS_QUIET_NET_H
#define SAMSA_TESTS_QUIET_NET_H

#include <stddef.h>
#include <stdint.h>

#include "reactor/net.h"

static inline void st_quiet_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    (void)ctx;
    (void)c;
    (void)payload;
    (void)len;
}

static inline void st_quiet_cancel(void *ctx, void *parked)
{
    (void)ctx;
    (void)parked;
}

static inline void st_quiet_drain(void *ctx)
{
    (void)ctx;
}

static const struct br_net_ops st_quiet_net_ops = {st_quiet_frame, st_quiet_cancel,
                                                   st_quiet_drain, NULL};

#endif
