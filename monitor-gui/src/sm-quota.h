/* sm-quota.h: a client quota entity in force, as a broker's /v1/quotas
 * lists it (broker/README.md, "The admin API"), a row of the quotas page.
 *
 * A plain record: SmCluster (sm-cluster.c) alone writes its fields, everyone
 * else reads them. It emits "changed" (no arguments) at most once per model
 * flush when any field moved.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SM_TYPE_QUOTA (sm_quota_get_type())
G_DECLARE_FINAL_TYPE(SmQuota, sm_quota, SM, QUOTA, GObject)

struct _SmQuota {
    GObject parent_instance;
    char *key; /* the model's: user and client id */
    /* as /config/users/<user>/clients/<client-id> names the entity: NULL
     * for a level it has not, "<default>" as Kafka writes it */
    char *user;
    char *client_id;
    /* each quota's value; < 0: not set */
    double producer_byte_rate;
    double consumer_byte_rate;
    double request_percentage;
    gint32 from; /* the broker whose document listed it last */
};

/* (transfer full) a rate for people, "51,200 B/s", "25 %"; "—" when not
 * set */
char *sm_quota_format_bytes(double v);
char *sm_quota_format_percent(double v);
/* emits "changed" (sm_cluster_flush) */
void sm_quota_emit_changed(SmQuota *self);

G_END_DECLS
