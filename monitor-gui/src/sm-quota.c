/* sm-quota.c: SmQuota (sm-quota.h). */
#include "sm-quota.h"

#include "sm-series.h"

G_DEFINE_FINAL_TYPE(SmQuota, sm_quota, G_TYPE_OBJECT)

static guint changed_signal;

void sm_quota_emit_changed(SmQuota *self)
{
    g_signal_emit(self, changed_signal, 0);
}

char *sm_quota_format_bytes(double v)
{
    if (v < 0) {
        return g_strdup("—");
    }
    g_autofree char *n = sm_format_count((gint64)(v + 0.5));
    return g_strdup_printf("%s B/s", n);
}

char *sm_quota_format_percent(double v)
{
    return v < 0 ? g_strdup("—") : g_strdup_printf("%.0f %%", v);
}

static void sm_quota_finalize(GObject *object)
{
    SmQuota *self = SM_QUOTA(object);
    g_free(self->key);
    g_free(self->user);
    g_free(self->client_id);
    G_OBJECT_CLASS(sm_quota_parent_class)->finalize(object);
}

static void sm_quota_class_init(SmQuotaClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_quota_finalize;
    changed_signal = g_signal_new("changed", SM_TYPE_QUOTA, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                  G_TYPE_NONE, 0);
}

static void sm_quota_init(SmQuota *self)
{
    self->producer_byte_rate = -1;
    self->consumer_byte_rate = -1;
    self->request_percentage = -1;
    self->from = -1;
}
