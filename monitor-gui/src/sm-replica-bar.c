/* sm-replica-bar.c: a partition's replicas as bars (see sm-replica-bar.h). */
#include "sm-replica-bar.h"

#include <adwaita.h>

#define ROW_HEIGHT 10
#define ROW_GAP 3
#define LABEL_WIDTH 30
#define MIN_BAR_WIDTH 160
#define HATCH 6

struct _SmReplicaBar {
    GtkWidget parent_instance;
    SmPartition *partition;
    gulong changed_id;
    char *description;
};

G_DEFINE_FINAL_TYPE(SmReplicaBar, sm_replica_bar, GTK_TYPE_WIDGET)

static void update(SmReplicaBar *self)
{
    g_free(self->description);
    self->description = self->partition != NULL ? sm_partition_describe(self->partition)
                                                : g_strdup("");
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   self->description, -1);
    g_autofree char *tip = NULL;
    if (self->partition != NULL) {
        g_auto(GStrv) lines = g_strsplit(self->description, "; ", -1);
        tip = g_strjoinv("\n", lines);
    }
    gtk_widget_set_tooltip_text(GTK_WIDGET(self), tip);
    gtk_widget_queue_resize(GTK_WIDGET(self));
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_changed(SmPartition *partition, gpointer ud)
{
    (void)partition;
    update(SM_REPLICA_BAR(ud));
}

void sm_replica_bar_set_partition(SmReplicaBar *self, SmPartition *partition)
{
    g_return_if_fail(SM_IS_REPLICA_BAR(self));
    if (self->partition == partition) {
        return;
    }
    if (self->partition != NULL) {
        g_clear_signal_handler(&self->changed_id, self->partition);
        g_clear_object(&self->partition);
    }
    if (partition != NULL) {
        self->partition = g_object_ref(partition);
        self->changed_id = g_signal_connect(partition, "changed", G_CALLBACK(on_changed), self);
    }
    update(self);
}

SmPartition *sm_replica_bar_get_partition(SmReplicaBar *self)
{
    return self->partition;
}

const char *sm_replica_bar_get_description(SmReplicaBar *self)
{
    return self->description != NULL ? self->description : "";
}

GtkWidget *sm_replica_bar_new(void)
{
    return g_object_new(SM_TYPE_REPLICA_BAR, NULL);
}

/* ------------------------------------------------------------ drawing */

typedef struct {
    GdkRGBA fg, in_sync, out_of_sync, track, hw;
} Palette;

static void palette(GtkWidget *w, Palette *p)
{
    gboolean dark = adw_style_manager_get_dark(adw_style_manager_get_default());
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(w), &p->fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    /* blue and orange: told apart by most colour-blind eyes, and the
     * hatching tells them apart without colour */
    (void)gdk_rgba_parse(&p->in_sync, dark ? "#62a0ea" : "#1c71d8");
    (void)gdk_rgba_parse(&p->out_of_sync, dark ? "#ffa348" : "#c64600");
    p->track = p->fg;
    p->track.alpha = 0.12f;
    p->hw = p->fg;
}

static void measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                    int *natural, int *minimum_baseline, int *natural_baseline)
{
    (void)for_size;
    SmReplicaBar *self = SM_REPLICA_BAR(widget);
    guint n = self->partition != NULL ? MAX(self->partition->replicas->len, 1) : 1;
    if (orientation == GTK_ORIENTATION_HORIZONTAL) {
        *minimum = *natural = LABEL_WIDTH + MIN_BAR_WIDTH;
    } else {
        *minimum = *natural = (int)n * (ROW_HEIGHT + ROW_GAP) + ROW_GAP;
    }
    *minimum_baseline = *natural_baseline = -1;
}

static void hatched(GtkSnapshot *s, const graphene_rect_t *r, const GdkRGBA *c)
{
    GdkRGBA faint = *c;
    faint.alpha = 0.25f;
    gtk_snapshot_append_color(s, &faint, r);
    /* stripes: one cell repeated over the bar */
    graphene_rect_t cell = GRAPHENE_RECT_INIT(r->origin.x, r->origin.y, HATCH, r->size.height);
    gtk_snapshot_push_repeat(s, r, &cell);
    gtk_snapshot_append_color(s, c, &GRAPHENE_RECT_INIT(r->origin.x, r->origin.y, 2,
                                                        r->size.height));
    gtk_snapshot_pop(s);
    /* a dashed-looking outline: top and bottom edges only */
    gtk_snapshot_append_color(s, c, &GRAPHENE_RECT_INIT(r->origin.x, r->origin.y, r->size.width, 1));
    gtk_snapshot_append_color(s, c, &GRAPHENE_RECT_INIT(r->origin.x,
                                                        r->origin.y + r->size.height - 1,
                                                        r->size.width, 1));
}

/* a word right-aligned at a track's end */
static void track_mark(GtkSnapshot *s, PangoLayout *layout, const char *text, float end, float y,
                       const GdkRGBA *fg)
{
    int tw = 0;
    pango_layout_set_text(layout, text, -1);
    pango_layout_get_pixel_size(layout, &tw, NULL);
    gtk_snapshot_save(s);
    gtk_snapshot_translate(s, &GRAPHENE_POINT_INIT(end - (float)tw - 4, y - 2));
    gtk_snapshot_append_layout(s, layout, fg);
    gtk_snapshot_restore(s);
}

static void snapshot(GtkWidget *widget, GtkSnapshot *s)
{
    SmReplicaBar *self = SM_REPLICA_BAR(widget);
    SmPartition *p = self->partition;
    if (p == NULL || p->replicas->len == 0) {
        return;
    }
    Palette pal;
    palette(widget, &pal);
    float width = (float)gtk_widget_get_width(widget);
    float bar_x = LABEL_WIDTH;
    float bar_w = MAX(width - bar_x - 4, 10);
    /* one scale for every replica: from the log start to the furthest LEO or HW */
    gint64 lo = MAX(p->log_start_offset, 0);
    gint64 hi = MAX(p->high_watermark, lo);
    for (guint i = 0; i < p->replicas->len; i++) {
        hi = MAX(hi, g_array_index(p->replicas, SmReplica, i).log_end_offset);
    }
    double span = (double)MAX(hi - lo, 1);
    PangoLayout *layout = gtk_widget_create_pango_layout(widget, NULL);
    PangoFontDescription *font = pango_font_description_from_string("Sans 7");
    pango_layout_set_font_description(layout, font);
    pango_font_description_free(font);
    for (guint i = 0; i < p->replicas->len; i++) {
        const SmReplica *r = &g_array_index(p->replicas, SmReplica, i);
        float y = (float)(ROW_GAP + i * (ROW_HEIGHT + ROW_GAP));
        gboolean in_isr = sm_partition_in_isr(p, r->broker);
        char label[32];
        (void)g_snprintf(label, sizeof label, "%d%s", (int)r->broker,
                         r->broker == p->leader ? " \u2605" : "");
        pango_layout_set_text(layout, label, -1);
        gtk_snapshot_save(s);
        gtk_snapshot_translate(s, &GRAPHENE_POINT_INIT(2, y - 2));
        gtk_snapshot_append_layout(s, layout, &pal.fg);
        gtk_snapshot_restore(s);
        graphene_rect_t track = GRAPHENE_RECT_INIT(bar_x, y, bar_w, ROW_HEIGHT);
        gtk_snapshot_append_color(s, &pal.track, &track);
        /* at the track's right end: offline (the bar of its last known LEO
         * left of it), or what a move under way does with the replica
         * (over its bar: a replica leaving may be at the HW) */
        const char *mark = r->offline                                ? "offline"
                           : sm_partition_adding(p, r->broker)   ? "adding"
                           : sm_partition_removing(p, r->broker) ? "removing"
                                                                 : NULL;
        if (r->offline) {
            track_mark(s, layout, mark, bar_x + bar_w, y, &pal.fg);
        }
        if (r->log_end_offset >= 0) {
            float len = (float)((double)(r->log_end_offset - lo) / span * bar_w);
            graphene_rect_t bar = GRAPHENE_RECT_INIT(bar_x, y, MAX(len, 1), ROW_HEIGHT);
            if (in_isr) {
                gtk_snapshot_append_color(s, &pal.in_sync, &bar);
            } else {
                hatched(s, &bar, &pal.out_of_sync);
            }
        }
        if (mark != NULL && !r->offline) {
            track_mark(s, layout, mark, bar_x + bar_w, y, &pal.fg);
        }
    }
    g_object_unref(layout);
    if (p->high_watermark >= 0) {
        float x = bar_x + (float)((double)(p->high_watermark - lo) / span * bar_w);
        float h = (float)(p->replicas->len * (ROW_HEIGHT + ROW_GAP) + ROW_GAP);
        gtk_snapshot_append_color(s, &pal.hw, &GRAPHENE_RECT_INIT(MIN(x, bar_x + bar_w - 2) , 0, 2, h));
    }
}

/* ------------------------------------------------------------ object */

static void sm_replica_bar_dispose(GObject *object)
{
    SmReplicaBar *self = SM_REPLICA_BAR(object);
    if (self->partition != NULL) {
        g_clear_signal_handler(&self->changed_id, self->partition);
        g_clear_object(&self->partition);
    }
    G_OBJECT_CLASS(sm_replica_bar_parent_class)->dispose(object);
}

static void sm_replica_bar_finalize(GObject *object)
{
    g_free(SM_REPLICA_BAR(object)->description);
    G_OBJECT_CLASS(sm_replica_bar_parent_class)->finalize(object);
}

static void sm_replica_bar_class_init(SmReplicaBarClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    oc->dispose = sm_replica_bar_dispose;
    oc->finalize = sm_replica_bar_finalize;
    wc->measure = measure;
    wc->snapshot = snapshot;
    gtk_widget_class_set_css_name(wc, "replicabar");
    gtk_widget_class_set_accessible_role(wc, GTK_ACCESSIBLE_ROLE_IMG);
}

static void sm_replica_bar_init(SmReplicaBar *self)
{
    self->description = g_strdup("");
}
