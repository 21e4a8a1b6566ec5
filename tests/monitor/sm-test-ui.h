/* Helpers of samsa-monitor's display tests: find widgets, wait with a
 * deadline, render a widget to a PNG and to a render-node file. */
#pragma once

#include <gtk/gtk.h>

#include "sm-browser.h"
#include "sm-chart.h"
#include "sm-replica-bar.h"

/* every mapped SmChart under w, in tree order */
static inline void smt_collect_charts(GtkWidget *w, GPtrArray *out)
{
    if (SM_IS_CHART(w) && gtk_widget_get_mapped(w)) {
        g_ptr_array_add(out, w);
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c != NULL; c = gtk_widget_get_next_sibling(c)) {
        smt_collect_charts(c, out);
    }
}

/* every SmReplicaBar under w that shows a partition, in tree order */
static inline void smt_collect_bars(GtkWidget *w, GPtrArray *out)
{
    if (SM_IS_REPLICA_BAR(w) && sm_replica_bar_get_partition(SM_REPLICA_BAR(w)) != NULL &&
        gtk_widget_get_mapped(w)) {
        g_ptr_array_add(out, w);
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c != NULL; c = gtk_widget_get_next_sibling(c)) {
        smt_collect_bars(c, out);
    }
}

/* every mapped GtkInscription's text under w, "\n"-joined into out */
static inline void smt_collect_texts(GtkWidget *w, GString *out)
{
    if (GTK_IS_INSCRIPTION(w) && gtk_widget_get_mapped(w)) {
        const char *t = gtk_inscription_get_text(GTK_INSCRIPTION(w));
        g_string_append_printf(out, "%s\n", t != NULL ? t : "");
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c != NULL; c = gtk_widget_get_next_sibling(c)) {
        smt_collect_texts(c, out);
    }
}

/* the first widget under w (w itself included, in tree order) that
 * match(widget, ud) accepts, or NULL */
static inline GtkWidget *smt_find_widget(GtkWidget *w, gboolean (*match)(GtkWidget *, gconstpointer),
                                         gconstpointer ud)
{
    if (match(w, ud)) {
        return w;
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c != NULL; c = gtk_widget_get_next_sibling(c)) {
        GtkWidget *found = smt_find_widget(c, match, ud);
        if (found != NULL) {
            return found;
        }
    }
    return NULL;
}

/* the SmReplicaBar of partition p of topic under w, or NULL */
static inline SmReplicaBar *smt_find_bar(GtkWidget *w, const char *topic, gint32 p)
{
    g_autoptr(GPtrArray) bars = g_ptr_array_new();
    smt_collect_bars(w, bars);
    for (guint i = 0; i < bars->len; i++) {
        SmPartition *part = sm_replica_bar_get_partition(bars->pdata[i]);
        if (part->partition == p && g_strcmp0(part->topic, topic) == 0) {
            return bars->pdata[i];
        }
    }
    return NULL;
}

static inline gboolean smt_is_browser(GtkWidget *w, gconstpointer ud)
{
    (void)ud;
    return SM_IS_BROWSER(w);
}

/* the Messages page's browser under w, or NULL */
static inline SmBrowser *smt_find_browser(GtkWidget *w)
{
    GtkWidget *b = smt_find_widget(w, smt_is_browser, NULL);
    return b != NULL ? SM_BROWSER(b) : NULL;
}

/* the browser's read ended: "N records of ..." or "could not read ..." */
static inline gboolean smt_browser_done(gpointer ud)
{
    const char *status = sm_browser_get_status(ud);
    return g_ascii_isdigit(status[0]) || g_str_has_prefix(status, "could not");
}

static inline gboolean smt_wake(gpointer ud)
{
    (void)ud;
    return G_SOURCE_REMOVE;
}

/* runs the main loop until done(ud) or the deadline; returns the
 * milliseconds it took, or -1 on timeout */
static inline gint64 smt_wait(gboolean (*done)(gpointer), gpointer ud, double seconds)
{
    gint64 t0 = g_get_monotonic_time();
    gint64 deadline = t0 + (gint64)(seconds * G_USEC_PER_SEC);
    while (!done(ud)) {
        if (g_get_monotonic_time() > deadline) {
            return -1;
        }
        /* blocks at most until the next source is due; the timeout keeps
         * the deadline honest while nothing happens */
        (void)g_timeout_add(50, smt_wake, NULL);
        g_main_context_iteration(NULL, TRUE);
    }
    return (g_get_monotonic_time() - t0) / 1000;
}

static inline gboolean smt_render(GtkWidget *w, const char *png, const char *node_file)
{
    int width = gtk_widget_get_width(w);
    int height = gtk_widget_get_height(w);
    if (width <= 0 || height <= 0) {
        return FALSE;
    }
    GdkPaintable *paintable = gtk_widget_paintable_new(w);
    GtkSnapshot *s = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, s, width, height);
    GskRenderNode *node = gtk_snapshot_free_to_node(s);
    g_object_unref(paintable);
    if (node == NULL) {
        return FALSE;
    }
    GskRenderer *r = gtk_native_get_renderer(gtk_widget_get_native(w));
    GdkTexture *tex = gsk_renderer_render_texture(r, node, &GRAPHENE_RECT_INIT(0, 0, (float)width, (float)height));
    gboolean ok = gdk_texture_save_to_png(tex, png);
    g_object_unref(tex);
    if (ok && node_file != NULL) {
        GBytes *b = gsk_render_node_serialize(node);
        ok = g_file_set_contents(node_file, g_bytes_get_data(b, NULL), (gssize)g_bytes_get_size(b), NULL);
        g_bytes_unref(b);
    }
    gsk_render_node_unref(node);
    return ok;
}
