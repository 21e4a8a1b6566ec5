/* sm-quota-rate.c: SmQuotaRate (sm-quota-rate.h). */
#include "sm-quota-rate.h"

#include "sm-series.h"

G_DEFINE_FINAL_TYPE(SmQuotaRate, sm_quota_rate, G_TYPE_OBJECT)

static guint changed_signal;

void sm_quota_rate_emit_changed(SmQuotaRate *self)
{
    g_signal_emit(self, changed_signal, 0);
}

gboolean sm_quota_rate_throttled(const SmQuotaRate *self)
{
    return self->throttle_left_ms > 0;
}

char *sm_quota_rate_format(const SmQuotaRate *self)
{
    gboolean percent = g_strcmp0(self->type, "Request") == 0;
    g_autofree char *rate = sm_format_count((gint64)(self->rate + 0.5));
    if (self->quota < 0) {
        return g_strdup_printf("%s %s, no quota", rate, percent ? "%" : "B/s");
    }
    g_autofree char *quota = sm_format_count((gint64)(self->quota + 0.5));
    return g_strdup_printf("%s %s of %s", rate, percent ? "%" : "B/s", quota);
}

char *sm_quota_rate_format_throttle(const SmQuotaRate *self)
{
    if (!sm_quota_rate_throttled(self)) {
        return g_strdup("");
    }
    g_autofree char *left = sm_format_count(self->throttle_left_ms);
    return g_strdup_printf("throttled: %s ms left", left);
}

static void sm_quota_rate_finalize(GObject *object)
{
    SmQuotaRate *self = SM_QUOTA_RATE(object);
    g_free(self->key);
    g_free(self->type);
    g_free(self->user);
    g_free(self->client_id);
    G_OBJECT_CLASS(sm_quota_rate_parent_class)->finalize(object);
}

static void sm_quota_rate_class_init(SmQuotaRateClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_quota_rate_finalize;
    changed_signal = g_signal_new("changed", SM_TYPE_QUOTA_RATE, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                  NULL, G_TYPE_NONE, 0);
}

static void sm_quota_rate_init(SmQuotaRate *self)
{
    self->broker = -1;
    self->quota = -1;
}
