/* sm-chart.c: a series drawn as columns over time (see sm-chart.h). */
#include "sm-chart.h"

#include <adwaita.h>

#define CHART_HEIGHT 96
#define HEADER_HEIGHT 20
#define SPARK_WIDTH 120
#define SPARK_HEIGHT 22
#define MIN_WIDTH 160
#define NAT_WIDTH 320

struct _SmChart {
    GtkWidget parent_instance;
    SmChartKind kind;
    gboolean sparkline;
    char *title;
    GObject *owner;          /* referenced while shown */
    const SmSeries *series;  /* the owner's */
    gulong owner_id;
    gulong dark_id;
    char *description;
};

G_DEFINE_FINAL_TYPE(SmChart, sm_chart, GTK_TYPE_WIDGET)

static const struct {
    const char *title;    /* the label's, lower case */
    const char *heading;  /* drawn above a full chart */
    SmUnit unit;
    const char *light, *dark;
} kinds[] = {
    [SM_CHART_MESSAGES_IN] = {"messages in", "Messages in", SM_UNIT_PER_S, "#1c71d8", "#62a0ea"},
    [SM_CHART_BYTES_IN] = {"bytes in", "Bytes in", SM_UNIT_BYTES_PER_S, "#1c71d8", "#62a0ea"},
    [SM_CHART_BYTES_OUT] = {"bytes out", "Bytes out", SM_UNIT_BYTES_PER_S, "#26a269", "#8ff0a4"},
    [SM_CHART_LAG] = {"lag", "Lag", SM_UNIT_COUNT, "#c64600", "#ffa348"},
};

static void update(SmChart *self)
{
    static const SmSeries empty;
    g_free(self->description);
    self->description =
        sm_series_describe(self->series != NULL ? self->series : &empty, self->title,
                           kinds[self->kind].unit);
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   self->description, -1);
    gtk_widget_set_tooltip_text(GTK_WIDGET(self), self->description);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_owner_signal(gpointer owner, gpointer ud)
{
    (void)owner;
    update(SM_CHART(ud));
}

static void on_dark(AdwStyleManager *style, GParamSpec *pspec, gpointer ud)
{
    (void)style;
    (void)pspec;
    gtk_widget_queue_draw(GTK_WIDGET(ud));
}

static void drop_owner(SmChart *self)
{
    if (self->owner != NULL) {
        g_clear_signal_handler(&self->owner_id, self->owner);
        g_clear_object(&self->owner);
    }
    self->series = NULL;
}

void sm_chart_set_series(SmChart *self, GObject *owner, const char *signal,
                         const SmSeries *series)
{
    g_return_if_fail(SM_IS_CHART(self));
    if (owner == self->owner && series == self->series) {
        return;
    }
    drop_owner(self);
    if (owner != NULL && series != NULL) {
        self->owner = g_object_ref(owner);
        self->series = series;
        self->owner_id = g_signal_connect(owner, signal, G_CALLBACK(on_owner_signal), self);
    }
    update(self);
}

void sm_chart_set_title(SmChart *self, const char *title)
{
    g_return_if_fail(SM_IS_CHART(self));
    g_free(self->title);
    self->title = g_strdup(title != NULL ? title : kinds[self->kind].title);
    update(self);
}

SmChartKind sm_chart_get_kind(SmChart *self)
{
    return self->kind;
}

const char *sm_chart_get_description(SmChart *self)
{
    return self->description != NULL ? self->description : "";
}

GtkWidget *sm_chart_new(SmChartKind kind, gboolean sparkline)
{
    SmChart *self = g_object_new(SM_TYPE_CHART, NULL);
    self->kind = CLAMP(kind, SM_CHART_MESSAGES_IN, SM_CHART_LAG);
    self->sparkline = sparkline;
    sm_chart_set_title(self, NULL);
    if (sparkline) {
        gtk_widget_add_css_class(GTK_WIDGET(self), "sparkline");
    }
    return GTK_WIDGET(self);
}

/* ------------------------------------------------------------ drawing */

static void measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                    int *natural, int *minimum_baseline, int *natural_baseline)
{
    (void)for_size;
    SmChart *self = SM_CHART(widget);
    if (orientation == GTK_ORIENTATION_HORIZONTAL) {
        *minimum = self->sparkline ? SPARK_WIDTH : MIN_WIDTH;
        *natural = self->sparkline ? SPARK_WIDTH : NAT_WIDTH;
    } else {
        *minimum = *natural = self->sparkline ? SPARK_HEIGHT : CHART_HEIGHT;
    }
    *minimum_baseline = *natural_baseline = -1;
}

static void header(SmChart *self, GtkSnapshot *s, float width, const GdkRGBA *fg)
{
    PangoLayout *layout = gtk_widget_create_pango_layout(GTK_WIDGET(self), NULL);
    const char *heading = kinds[self->kind].heading;
    g_autofree char *own = NULL;
    if (self->title[0] != '\0' && g_strcmp0(self->title, kinds[self->kind].title) != 0) {
        /* a title of its own ("lag of billing"), capitalised for the heading */
        own = g_strdup(self->title);
        own[0] = g_ascii_toupper(own[0]);
        heading = own;
    }
    pango_layout_set_text(layout, heading, -1);
    gtk_snapshot_append_layout(s, layout, fg);
    if (self->series != NULL && self->series->n > 0) {
        g_autofree char *now = sm_series_format_last(self->series, kinds[self->kind].unit);
        g_autofree char *peak = sm_format_value(sm_series_peak(self->series),
                                                kinds[self->kind].unit);
        g_autofree char *right = g_strdup_printf("%s   peak %s", now, peak);
        pango_layout_set_text(layout, right, -1);
        int w = 0;
        pango_layout_get_pixel_size(layout, &w, NULL);
        gtk_snapshot_save(s);
        gtk_snapshot_translate(s, &GRAPHENE_POINT_INIT(MAX(width - (float)w, 0), 0));
        gtk_snapshot_append_layout(s, layout, fg);
        gtk_snapshot_restore(s);
    }
    g_object_unref(layout);
}

static void snapshot(GtkWidget *widget, GtkSnapshot *s)
{
    SmChart *self = SM_CHART(widget);
    float width = (float)gtk_widget_get_width(widget);
    float height = (float)gtk_widget_get_height(widget);
    gboolean dark = adw_style_manager_get_dark(adw_style_manager_get_default());
    GdkRGBA fg, bar;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    (void)gdk_rgba_parse(&bar, dark ? kinds[self->kind].dark : kinds[self->kind].light);
    float top = 0;
    if (!self->sparkline) {
        header(self, s, width, &fg);
        top = HEADER_HEIGHT;
    }
    float area_h = MAX(height - top - 1, 1);
    GdkRGBA track = fg;
    track.alpha = 0.06f;
    gtk_snapshot_append_color(s, &track, &GRAPHENE_RECT_INIT(0, top, width, area_h));
    GdkRGBA base = fg;
    base.alpha = 0.35f;
    gtk_snapshot_append_color(s, &base, &GRAPHENE_RECT_INIT(0, top + area_h, width, 1));
    const SmSeries *series = self->series;
    if (series == NULL || series->n == 0) {
        return;
    }
    /* the peak a tenth below the top, so that it is seen as the peak */
    double peak = sm_series_peak(series);
    double scale = peak > 0 ? (double)area_h * 0.9 / peak : 0;
    float slot = width / (float)SM_SERIES_MAX;
    float first = (float)(SM_SERIES_MAX - series->n) * slot;
    for (guint i = 0; i < series->n; i++) {
        const SmPoint *p = sm_series_get(series, i);
        if (!p->known) {
            continue; /* no rate for that interval: nothing drawn */
        }
        float h = (float)(p->value * scale);
        if (p->value > 0) {
            h = MAX(h, 1); /* a rate above zero is seen, however small */
        }
        float x = first + (float)i * slot;
        /* a column as wide as its slot, rounded out so that neighbours meet */
        gtk_snapshot_append_color(s, &bar,
                                  &GRAPHENE_RECT_INIT(x, top + area_h - h, MAX(slot, 1) + 0.5f, h));
    }
    if (!self->sparkline && peak > 0) {
        GdkRGBA line = fg;
        line.alpha = 0.3f;
        float y = top + area_h - (float)(peak * scale);
        gtk_snapshot_append_color(s, &line, &GRAPHENE_RECT_INIT(0, y, width, 1));
    }
}

/* ------------------------------------------------------------ object */

static void sm_chart_dispose(GObject *object)
{
    SmChart *self = SM_CHART(object);
    drop_owner(self);
    g_clear_signal_handler(&self->dark_id, adw_style_manager_get_default());
    G_OBJECT_CLASS(sm_chart_parent_class)->dispose(object);
}

static void sm_chart_finalize(GObject *object)
{
    SmChart *self = SM_CHART(object);
    g_free(self->title);
    g_free(self->description);
    G_OBJECT_CLASS(sm_chart_parent_class)->finalize(object);
}

static void sm_chart_class_init(SmChartClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    oc->dispose = sm_chart_dispose;
    oc->finalize = sm_chart_finalize;
    wc->measure = measure;
    wc->snapshot = snapshot;
    gtk_widget_class_set_css_name(wc, "chart");
    gtk_widget_class_set_accessible_role(wc, GTK_ACCESSIBLE_ROLE_IMG);
}

static void sm_chart_init(SmChart *self)
{
    self->dark_id = g_signal_connect(adw_style_manager_get_default(), "notify::dark",
                                     G_CALLBACK(on_dark), self);
}
