/*
 * samsa-broker: request and message rates over the last minute, for the
 * broker document (Kafka's JMX meters give each count a OneMinuteRate;
 * the snapshots only carry counts since the start).
 *
 * Each snapshot the admin thread takes in is sampled (its time, every
 * API's request count, the messages and bytes in and out over every
 * topic), at most one sample a second, and the samples of the last
 * BR_ADMIN_RATES_WINDOW_MS are kept (and the one just before, so the
 * window is full once the broker has run that long). A rate is the
 * difference between the newest sample and the oldest kept over the time
 * between them: a mean over the last minute, or since the start for a
 * broker younger than that (window_ms says which).
 *
 * @locality the admin thread
 */
#ifndef SAMSA_BROKER_ADMIN_RATES_H
#define SAMSA_BROKER_ADMIN_RATES_H

#include <glib.h>

#include "admin/snapshot.h"

#define BR_ADMIN_RATES_WINDOW_MS ((gint64)60 * 1000)

struct br_admin_rates;

struct br_admin_rates *br_admin_rates_new(void);
void br_admin_rates_free(struct br_admin_rates *r); /* NULL: a no-op */

/* Samples snap (one a second at most; a snapshot older than the newest
 * sample, or from another start of the broker, starts the samples anew). */
void br_admin_rates_add(struct br_admin_rates *r, const struct br_snapshot *snap);

/* The time the rates are taken over, in ms: 0 while fewer than two
 * samples are kept (every rate is then 0). */
gint64 br_admin_rates_window_ms(const struct br_admin_rates *r);

/* Requests of API key a second over the window (0 when not known). */
double br_admin_rates_api(const struct br_admin_rates *r, int16_t key);

/* Messages and bytes taken as leader, and bytes sent, a second over the
 * window, over every topic. */
void br_admin_rates_totals(const struct br_admin_rates *r, double *messages_in, double *bytes_in,
                           double *bytes_out);

#endif
