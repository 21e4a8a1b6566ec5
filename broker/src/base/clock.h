/*
 * samsa-broker: the clocks.
 * @locality any thread
 */
#ifndef SAMSA_BROKER_CLOCK_H
#define SAMSA_BROKER_CLOCK_H

#include <stdint.h>

/* Monotonic milliseconds (deadlines, intervals). */
int64_t br_now_mono_ms(void);
/* Monotonic microseconds (request timing). */
int64_t br_now_mono_us(void);
/* Wall-clock milliseconds since the epoch (timestamps). */
int64_t br_now_wall_ms(void);

#endif
