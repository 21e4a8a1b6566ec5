/* sm-browser.c: the Messages page (see sm-browser.h). */
#include "sm-browser.h"

#include <string.h>

struct _SmBrowser {
    GtkBox parent_instance;
    SmCluster *cluster;
    GtkDropDown *topic;
    GtkSpinButton *partition;
    GtkDropDown *from;
    GtkEntry *at;
    GtkSpinButton *count;
    GtkLabel *status;
    GtkColumnView *view;
    GListStore *shown; /* SmMessage */
    GCancellable *reading;
};

G_DEFINE_FINAL_TYPE(SmBrowser, sm_browser, GTK_TYPE_BOX)

enum { PROP_0, PROP_CLUSTER, N_PROPS };
static GParamSpec *props[N_PROPS];

/* ------------------------------------------------------------ columns */

typedef char *(*MessageText)(const SmMessage *m);

static char *m_offset(const SmMessage *m)
{
    return g_strdup_printf("%" G_GINT64_FORMAT, m->offset);
}

static char *m_time(const SmMessage *m)
{
    g_autoptr(GDateTime) t = g_date_time_new_from_unix_local(m->timestamp_ms / 1000);
    return t != NULL ? g_date_time_format(t, "%Y-%m-%d %H:%M:%S") : g_strdup("—");
}

static char *m_key(const SmMessage *m) { return g_strdup(m->key); }
static char *m_value(const SmMessage *m) { return g_strdup(m->value); }
static char *m_headers(const SmMessage *m) { return g_strdup(m->headers); }

static const struct {
    const char *title;
    MessageText text;
    guint chars;
    gboolean expand;
} columns[] = {
    {"Offset", m_offset, 10, FALSE},   {"Timestamp", m_time, 19, FALSE},
    {"Key", m_key, 16, FALSE},         {"Value", m_value, 40, TRUE},
    {"Headers", m_headers, 24, FALSE},
};

static void cell_setup(GtkSignalListItemFactory *f, GtkListItem *li, gpointer ud)
{
    (void)f;
    guint i = GPOINTER_TO_UINT(ud);
    GtkWidget *w = gtk_inscription_new(NULL);
    gtk_inscription_set_min_chars(GTK_INSCRIPTION(w), MIN(columns[i].chars, 10u));
    gtk_inscription_set_nat_chars(GTK_INSCRIPTION(w), columns[i].chars);
    gtk_list_item_set_child(li, w);
}

static void cell_bind(GtkSignalListItemFactory *f, GtkListItem *li, gpointer ud)
{
    (void)f;
    guint i = GPOINTER_TO_UINT(ud);
    g_autofree char *text = columns[i].text(SM_MESSAGE(gtk_list_item_get_item(li)));
    gtk_inscription_set_text(GTK_INSCRIPTION(gtk_list_item_get_child(li)), text);
    gtk_widget_set_tooltip_text(gtk_list_item_get_child(li), text);
}

/* ------------------------------------------------------------ reading */

/* an offset, or a time: ISO 8601 (local when no zone), or ms since the epoch */
static gboolean parse_at(SmFrom from, const char *text, gint64 *out)
{
    if (from == SM_FROM_LATEST) {
        *out = 0;
        return TRUE;
    }
    gint64 v = 0;
    if (text != NULL && g_ascii_string_to_signed(text, 10, 0, G_MAXINT64, &v, NULL)) {
        *out = v;
        return TRUE;
    }
    if (from != SM_FROM_TIME || text == NULL) {
        return FALSE;
    }
    g_autoptr(GTimeZone) local = g_time_zone_new_local();
    g_autoptr(GDateTime) t = g_date_time_new_from_iso8601(text, local);
    if (t == NULL) {
        return FALSE;
    }
    *out = g_date_time_to_unix(t) * 1000 + g_date_time_get_microsecond(t) / 1000;
    return TRUE;
}

typedef struct {
    SmBrowser *self; /* referenced */
    char *what;      /* "orders-0 from offset 4,980" */
} Pending;

static void on_read(GObject *source, GAsyncResult *res, gpointer ud)
{
    (void)source;
    Pending *p = ud;
    g_autoptr(GError) err = NULL;
    g_autoptr(GListStore) got = sm_messages_read_finish(res, &err);
    SmBrowser *self = p->self;
    if (!g_error_matches(err, G_IO_ERROR, G_IO_ERROR_CANCELLED) && self->shown != NULL) {
        if (got == NULL) {
            g_autofree char *text = g_strdup_printf("could not read %s: %s", p->what, err->message);
            gtk_label_set_text(self->status, text);
            gtk_widget_add_css_class(GTK_WIDGET(self->status), "error");
        } else {
            guint n = g_list_model_get_n_items(G_LIST_MODEL(got));
            g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(g_object_unref);
            for (guint i = 0; i < n; i++) {
                g_ptr_array_add(items, g_list_model_get_item(G_LIST_MODEL(got), i));
            }
            g_list_store_splice(self->shown, 0,
                                g_list_model_get_n_items(G_LIST_MODEL(self->shown)), items->pdata,
                                n);
            g_autofree char *text =
                g_strdup_printf("%u record%s of %s", n, n == 1 ? "" : "s", p->what);
            gtk_label_set_text(self->status, text);
        }
    }
    g_object_unref(p->self);
    g_free(p->what);
    g_free(p);
}

static void start_read(SmBrowser *self, const char *topic, gint32 partition, SmFrom from,
                       const char *at_text, guint n)
{
    gtk_widget_remove_css_class(GTK_WIDGET(self->status), "error");
    gint64 at = 0;
    g_autofree char *servers = sm_cluster_bootstrap_servers(self->cluster);
    if (topic == NULL) {
        gtk_label_set_text(self->status, "choose a topic");
        return;
    }
    if (!parse_at(from, at_text, &at)) {
        gtk_label_set_text(self->status,
                           from == SM_FROM_TIME
                               ? "a time reads as 2026-12-06T09:30:00 or milliseconds since 1970"
                               : "an offset reads as a whole number");
        gtk_widget_add_css_class(GTK_WIDGET(self->status), "error");
        return;
    }
    if (servers == NULL) {
        gtk_label_set_text(self->status, "no broker alive to read from");
        gtk_widget_add_css_class(GTK_WIDGET(self->status), "error");
        return;
    }
    g_cancellable_cancel(self->reading);
    g_clear_object(&self->reading);
    self->reading = g_cancellable_new();
    Pending *p = g_new0(Pending, 1);
    p->self = g_object_ref(self);
    g_autofree char *at_shown = sm_format_count(at);
    p->what = from == SM_FROM_LATEST ? g_strdup_printf("%s-%d, the latest", topic, (int)partition)
              : from == SM_FROM_OFFSET
                  ? g_strdup_printf("%s-%d from offset %s", topic, (int)partition, at_shown)
                  : g_strdup_printf("%s-%d from %s", topic, (int)partition, at_text);
    g_autofree char *text = g_strdup_printf("reading %s …", p->what);
    gtk_label_set_text(self->status, text);
    sm_messages_read_async(servers, topic, partition, from, at, n, self->reading, on_read, p);
}

static const char *chosen_topic(SmBrowser *self)
{
    SmTopic *t = gtk_drop_down_get_selected_item(self->topic);
    return t != NULL ? t->name : NULL;
}

static void on_read_clicked(GtkButton *button, gpointer ud)
{
    (void)button;
    SmBrowser *self = SM_BROWSER(ud);
    start_read(self, chosen_topic(self), (gint32)gtk_spin_button_get_value_as_int(self->partition),
               (SmFrom)gtk_drop_down_get_selected(self->from),
               gtk_editable_get_text(GTK_EDITABLE(self->at)),
               (guint)gtk_spin_button_get_value_as_int(self->count));
}

void sm_browser_read(SmBrowser *self, const char *topic, gint32 partition, SmFrom from,
                     const char *at, guint n)
{
    g_return_if_fail(SM_IS_BROWSER(self));
    GListModel *topics = sm_cluster_get_topics(self->cluster);
    for (guint i = 0; i < g_list_model_get_n_items(topics); i++) {
        g_autoptr(SmTopic) t = g_list_model_get_item(topics, i);
        if (g_strcmp0(t->name, topic) == 0) {
            gtk_drop_down_set_selected(self->topic, i);
        }
    }
    gtk_spin_button_set_value(self->partition, partition);
    gtk_drop_down_set_selected(self->from, (guint)from);
    gtk_editable_set_text(GTK_EDITABLE(self->at), at != NULL ? at : "");
    gtk_spin_button_set_value(self->count, n);
    start_read(self, topic, partition, from, at, n);
}

const char *sm_browser_get_status(SmBrowser *self)
{
    return gtk_label_get_text(self->status);
}

/* ------------------------------------------------------------ the page */

static char *topic_name(SmTopic *t)
{
    return g_strdup(t != NULL ? t->name : "");
}

static void sm_browser_dispose(GObject *object)
{
    SmBrowser *self = SM_BROWSER(object);
    g_cancellable_cancel(self->reading);
    g_clear_object(&self->reading);
    g_clear_object(&self->shown);
    g_clear_object(&self->cluster);
    G_OBJECT_CLASS(sm_browser_parent_class)->dispose(object);
}

static void sm_browser_set_property(GObject *object, guint id, const GValue *value,
                                    GParamSpec *pspec)
{
    SmBrowser *self = SM_BROWSER(object);
    if (id == PROP_CLUSTER) {
        self->cluster = g_value_dup_object(value);
    } else {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void sm_browser_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    SmBrowser *self = SM_BROWSER(object);
    if (id == PROP_CLUSTER) {
        g_value_set_object(value, self->cluster);
    } else {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void sm_browser_constructed(GObject *object)
{
    SmBrowser *self = SM_BROWSER(object);
    G_OBJECT_CLASS(sm_browser_parent_class)->constructed(object);
    if (self->cluster == NULL) {
        self->cluster = sm_cluster_new();
    }
    gtk_drop_down_set_model(self->topic, sm_cluster_get_topics(self->cluster));
}

static void sm_browser_class_init(SmBrowserClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    oc->dispose = sm_browser_dispose;
    oc->set_property = sm_browser_set_property;
    oc->get_property = sm_browser_get_property;
    oc->constructed = sm_browser_constructed;
    props[PROP_CLUSTER] = g_param_spec_object("cluster", NULL, NULL, SM_TYPE_CLUSTER,
                                              G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                  G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(oc, N_PROPS, props);
}

static GtkWidget *labelled(GtkBox *row, const char *text, GtkWidget *w)
{
    gtk_box_append(row, gtk_label_new(text));
    gtk_box_append(row, w);
    gtk_accessible_update_property(GTK_ACCESSIBLE(w), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
    return w;
}

static void sm_browser_init(SmBrowser *self)
{
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    GtkBox *row = GTK_BOX(gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6));
    gtk_widget_set_margin_start(GTK_WIDGET(row), 12);
    gtk_widget_set_margin_end(GTK_WIDGET(row), 12);
    gtk_widget_set_margin_top(GTK_WIDGET(row), 6);
    gtk_widget_set_margin_bottom(GTK_WIDGET(row), 6);
    GtkExpression *name = gtk_cclosure_expression_new(G_TYPE_STRING, NULL, 0, NULL,
                                                      G_CALLBACK(topic_name), NULL, NULL);
    self->topic = GTK_DROP_DOWN(labelled(row, "Topic", gtk_drop_down_new(NULL, name)));
    self->partition = GTK_SPIN_BUTTON(
        labelled(row, "Partition", gtk_spin_button_new_with_range(0, 99999, 1)));
    const char *const froms[] = {"Latest", "From offset", "From time", NULL};
    self->from = GTK_DROP_DOWN(gtk_drop_down_new_from_strings(froms));
    gtk_box_append(row, GTK_WIDGET(self->from));
    gtk_accessible_update_property(GTK_ACCESSIBLE(self->from), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   "From", -1);
    self->at = GTK_ENTRY(gtk_entry_new());
    gtk_entry_set_placeholder_text(self->at, "offset, or time: 2026-12-06T09:30:00");
    gtk_widget_set_hexpand(GTK_WIDGET(self->at), TRUE);
    gtk_box_append(row, GTK_WIDGET(self->at));
    self->count = GTK_SPIN_BUTTON(
        labelled(row, "Records", gtk_spin_button_new_with_range(1, SM_MESSAGES_MAX, 1)));
    gtk_spin_button_set_value(self->count, 20);
    GtkWidget *read = gtk_button_new_with_label("Read");
    gtk_widget_add_css_class(read, "suggested-action");
    g_signal_connect(read, "clicked", G_CALLBACK(on_read_clicked), self);
    gtk_box_append(row, read);
    gtk_box_append(GTK_BOX(self), GTK_WIDGET(row));
    self->status = GTK_LABEL(gtk_label_new("Choose a partition and where to read from"));
    gtk_widget_set_name(GTK_WIDGET(self->status), "browser-status");
    gtk_label_set_xalign(self->status, 0);
    gtk_widget_set_margin_start(GTK_WIDGET(self->status), 12);
    gtk_widget_add_css_class(GTK_WIDGET(self->status), "caption");
    gtk_box_append(GTK_BOX(self), GTK_WIDGET(self->status));
    self->shown = g_list_store_new(SM_TYPE_MESSAGE);
    self->view = GTK_COLUMN_VIEW(gtk_column_view_new(GTK_SELECTION_MODEL(
        gtk_no_selection_new(G_LIST_MODEL(g_object_ref(self->shown))))));
    gtk_column_view_set_show_row_separators(self->view, TRUE);
    gtk_widget_add_css_class(GTK_WIDGET(self->view), "data-table");
    gtk_accessible_update_property(GTK_ACCESSIBLE(self->view), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   "Messages", -1);
    for (guint i = 0; i < G_N_ELEMENTS(columns); i++) {
        GtkListItemFactory *f = gtk_signal_list_item_factory_new();
        g_signal_connect(f, "setup", G_CALLBACK(cell_setup), GUINT_TO_POINTER(i));
        g_signal_connect(f, "bind", G_CALLBACK(cell_bind), GUINT_TO_POINTER(i));
        GtkColumnViewColumn *c = gtk_column_view_column_new(columns[i].title, f);
        gtk_column_view_column_set_expand(c, columns[i].expand);
        gtk_column_view_column_set_resizable(c, TRUE);
        gtk_column_view_append_column(self->view, c);
        g_object_unref(c);
    }
    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_widget_set_vexpand(scroll, TRUE);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), GTK_WIDGET(self->view));
    gtk_box_append(GTK_BOX(self), scroll);
}

GtkWidget *sm_browser_new(SmCluster *cluster)
{
    return g_object_new(SM_TYPE_BROWSER, "cluster", cluster, NULL);
}
