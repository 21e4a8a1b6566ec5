/* sm-quota-rate.h: a rate one broker measures for client quotas, as its
 * /v1/quotas "clients" lists it (Kafka 2.0's Produce, Fetch and Request
 * sensors, tagged by user and client id), with the throttle time it
 * earned: a row of the quotas page, in amber while the client is
 * throttled.
 *
 * A plain record: SmCluster (sm-cluster.c) alone writes its fields, everyone
 * else reads them. It emits "changed" (no arguments) at most once per model
 * flush when any field moved.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SM_TYPE_QUOTA_RATE (sm_quota_rate_get_type())
G_DECLARE_FINAL_TYPE(SmQuotaRate, sm_quota_rate, SM, QUOTA_RATE, GObject)

struct _SmQuotaRate {
    GObject parent_instance;
    char *key;     /* the model's: broker, type, user, client id */
    gint32 broker; /* whose measure it is */
    char *type;    /* "Produce", "Fetch", "Request" */
    char *user;    /* "" for a level not used */
    char *client_id;
    double quota;  /* < 0: no quota holds it */
    double rate;   /* bytes (or percent) a second at the broker's snapshot */
    gint64 throttle_total_ms; /* throttle time earned since the rate was made */
    gint64 throttle_left_ms;  /* > 0: a connection of it is muted now */
};

/* TRUE while a connection of it is muted (throttle time left) */
gboolean sm_quota_rate_throttled(const SmQuotaRate *self);
/* (transfer full) its rate and quota for people: "52,011 B/s of 51,200",
 * "3 % of 25" for Request, "no quota" */
char *sm_quota_rate_format(const SmQuotaRate *self);
/* (transfer full) "throttled: 412 ms left" or "" */
char *sm_quota_rate_format_throttle(const SmQuotaRate *self);
/* emits "changed" (sm_cluster_flush) */
void sm_quota_rate_emit_changed(SmQuotaRate *self);

G_END_DECLS
