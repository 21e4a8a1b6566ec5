/* sm-series.c: series of readings and numbers for people (sm-series.h). */
#include "sm-series.h"

#include <string.h>

char *sm_format_count(gint64 n)
{
    char digits[32];
    (void)g_snprintf(digits, sizeof digits, "%" G_GINT64_FORMAT, n < 0 ? -n : n);
    size_t len = strlen(digits);
    GString *s = g_string_sized_new(len + len / 3 + 2);
    if (n < 0) {
        g_string_append_c(s, '-');
    }
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) {
            g_string_append_c(s, ',');
        }
        g_string_append_c(s, digits[i]);
    }
    return g_string_free(s, FALSE);
}

void sm_series_push(SmSeries *s, gint64 from_ms, gint64 to_ms, double value, gboolean known)
{
    SmPoint *p = &s->points[s->head];
    p->from_ms = from_ms;
    p->to_ms = to_ms;
    p->value = known ? value : 0;
    p->known = known;
    s->head = (s->head + 1) % SM_SERIES_MAX;
    s->n = MIN(s->n + 1, (guint)SM_SERIES_MAX);
}

const SmPoint *sm_series_get(const SmSeries *s, guint i)
{
    if (i >= s->n) {
        return NULL;
    }
    return &s->points[(s->head + SM_SERIES_MAX - s->n + i) % SM_SERIES_MAX];
}

const SmPoint *sm_series_last(const SmSeries *s)
{
    return s->n > 0 ? sm_series_get(s, s->n - 1) : NULL;
}

void sm_series_replace_last(SmSeries *s, gint64 from_ms, gint64 to_ms, double value)
{
    if (s->n == 0) {
        sm_series_push(s, from_ms, to_ms, value, TRUE);
        return;
    }
    SmPoint *p = &s->points[(s->head + SM_SERIES_MAX - 1) % SM_SERIES_MAX];
    p->from_ms = MIN(p->from_ms, from_ms);
    p->to_ms = MAX(p->to_ms, to_ms);
    p->value = value;
    p->known = TRUE;
}

double sm_series_peak(const SmSeries *s)
{
    double peak = 0;
    for (guint i = 0; i < s->n; i++) {
        const SmPoint *p = sm_series_get(s, i);
        if (p->known) {
            peak = MAX(peak, p->value);
        }
    }
    return peak;
}

gint64 sm_series_span_ms(const SmSeries *s)
{
    if (s->n == 0) {
        return 0;
    }
    return MAX(sm_series_last(s)->to_ms - sm_series_get(s, 0)->from_ms, 0);
}

char *sm_format_span(gint64 ms)
{
    gint64 sec = (ms + 500) / 1000;
    if (sec < 90) {
        return g_strdup_printf("%d s", (int)MAX(sec, 1));
    }
    gint64 min = (sec + 30) / 60;
    if (min < 90) {
        return g_strdup_printf("%d minutes", (int)min);
    }
    return g_strdup_printf("%d hours", (int)((min + 30) / 60));
}

char *sm_format_value(double value, SmUnit unit)
{
    double v = MAX(value, 0);
    if (unit == SM_UNIT_BYTES_PER_S) {
        g_autofree char *size = g_format_size((guint64)(v + 0.5));
        return g_strconcat(size, "/s", NULL);
    }
    if (unit == SM_UNIT_PER_S && v < 10) {
        return g_strdup_printf("%.1f/s", v);
    }
    g_autofree char *count = sm_format_count((gint64)(MIN(v, 1e18) + 0.5));
    return unit == SM_UNIT_PER_S ? g_strconcat(count, "/s", NULL) : g_steal_pointer(&count);
}

static const SmPoint *last_known(const SmSeries *s)
{
    for (guint i = s->n; i > 0; i--) {
        const SmPoint *p = sm_series_get(s, i - 1);
        if (p->known) {
            return p;
        }
    }
    return NULL;
}

char *sm_series_format_last(const SmSeries *s, SmUnit unit)
{
    const SmPoint *p = sm_series_last(s);
    return p != NULL && p->known ? sm_format_value(p->value, unit) : g_strdup("—");
}

char *sm_series_describe(const SmSeries *s, const char *title, SmUnit unit)
{
    const SmPoint *p = last_known(s);
    if (p == NULL) {
        return g_strdup_printf("%s: no readings yet", title);
    }
    g_autofree char *span = sm_format_span(sm_series_span_ms(s));
    g_autofree char *peak = sm_format_value(sm_series_peak(s), unit);
    const SmPoint *last = sm_series_last(s);
    if (!last->known) {
        /* a gap of no length: the broker not heard (sm_cluster_broker_unheard) */
        return g_strdup_printf(
            "%s: no rate for the last reading (%s), peak %s over the last %s", title,
            last->from_ms == last->to_ms ? "the broker is not heard" : "a counter went down", peak,
            span);
    }
    g_autofree char *now = sm_format_value(p->value, unit);
    return g_strdup_printf("%s: %s over the last %s, peak %s", title, now, span, peak);
}
