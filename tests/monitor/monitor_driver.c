/* samsa-monitor's window and links, driven line by line from stdin for the
 * end-to-end test (test_monitor_e2e.py): every condition is read off the
 * model and off the widgets (the replica bars' accessible labels, the
 * brokers' rows), with a deadline. Answers on stdout, one line each:
 * "ok <ms>" (how long the condition took to hold) or "fail <why>".
 *
 *   ready TOPIC N SECS [STABLE]
 *                             N partitions shown from their leaders, all in sync
 *                             (for STABLE seconds on end)
 *   osr TOPIC P B SECS        replica B of P out of sync in the bar, its LEO behind the
 *                             HW and frozen while the HW moves on (10 or more)
 *   isr TOPIC P B SECS        replica B of P back in sync in the bar
 *   gone B TOPIC SECS         broker B shown gone, no partition of TOPIC led by B
 *   shot PREFIX [PAGE]        PREFIX-light.png, PREFIX-dark.png (and .node files) of
 *                             PAGE (default: partitions)
 *   rate SECS                 the cluster page's messages-in chart shows a rate above
 *                             zero ("ok <ms> <its accessible label>")
 *   status SECS TEXT...       the status line contains TEXT ("ok <ms> <status>")
 *   label SECS CLASS TEXT...  a label of the cluster page contains TEXT and has the style
 *                             class CLASS ("-": any) ("ok <ms> <its text>")
 *   plabel TOPIC SECS CLASS TEXT...  the same on the partitions page of TOPIC, its
 *                             expanders (the configs) opened
 *   row B SECS CLASS RE...    broker B's row on the cluster page has a cell matching the
 *                             regex RE (its text, or its sparkline's label) with the style
 *                             class CLASS ("-": any) ("ok <ms> <the row's texts>")
 *   browse SECS TOPIC P FROM AT N  the Messages page reads N records of TOPIC-P FROM
 *                             (latest, offset or time; AT "-" for latest) and shows
 *                             them ("ok <ms> <status> | <the rows' cells, | apart>")
 *   confirm SECS create NAME P RF | delete NAME | reset GROUP earliest|latest |
 *                abort TRANSACTIONAL-ID
 *                             opens the change's confirmation, answers it (create,
 *                             delete, reset, abort) and waits for its toast and, for a
 *                             topic, the topic shown or gone ("ok <ms> <heading> | <toast>")
 *   cell PAGE SECS CLASS TEXT...  a cell of PAGE ("partitions:TOPIC" for a topic's
 *                             partitions) contains TEXT and has the style class CLASS
 *                             ("-": any; "!warning": not that class) ("ok <ms> <its text>")
 *   nocell PAGE SECS TEXT...  no cell of PAGE (as for cell) contains TEXT any more
 *   shows PAGE SECS TEXT...   a label or cell of PAGE contains TEXT ("ok <ms> <its text>")
 *   stats                     "ok <flushes> <rows> <total_us> <max_us>"
 *   quit
 *
 * Usage: test_monitor_driver ADMIN-URL (under xvfb-run and dbus-run-session;
 * SAMSA_ADMIN_CA_FILE, when set, is the CA of an https admin API, as
 * samsa-monitor's --ca-file takes it.
 * SAMSA_ADMIN_TOKEN, when set, is the admin API's token, as samsa-monitor
 * takes it) */
#include <adwaita.h>
#include <gio/gunixinputstream.h>
#include <stdio.h>
#include <string.h>

#include "sm-client.h"
#include "sm-cluster.h"
#include "sm-test-ui.h"
#include "sm-window.h"

typedef struct {
    SmWindow *win;
    SmCluster *cluster;
    const char *topic;
    gint32 partition;
    gint32 broker;
    guint n;
    /* osr: the frozen LEO and the HW when first seen out of sync */
    gint64 frozen_leo;
    gint64 hw_then;
    gint64 seen_us;
    gint64 stable_us;
} Want;

static const SmReplica *replica_of(SmPartition *p, gint32 b)
{
    for (guint i = 0; p != NULL && i < p->replicas->len; i++) {
        if (g_array_index(p->replicas, SmReplica, i).broker == b) {
            return &g_array_index(p->replicas, SmReplica, i);
        }
    }
    return NULL;
}

static const char *bar_label(Want *w)
{
    SmReplicaBar *bar = smt_find_bar(GTK_WIDGET(w->win), w->topic, w->partition);
    return bar != NULL ? sm_replica_bar_get_description(bar) : "";
}

static gboolean all_in_sync(Want *w)
{
    SmTopic *t = sm_cluster_find_topic(w->cluster, w->topic);
    if (t == NULL || t->parts->len < w->n) {
        return FALSE;
    }
    for (guint i = 0; i < w->n; i++) {
        SmPartition *p = g_ptr_array_index(t->parts, i);
        if (!p->full_view || p->isr->len != p->replicas->len || p->high_watermark < 0) {
            return FALSE;
        }
    }
    return TRUE;
}

/* every replica in sync, continuously for w->stable_us */
static gboolean ready(gpointer ud)
{
    Want *w = ud;
    if (!all_in_sync(w)) {
        w->seen_us = 0;
        return FALSE;
    }
    gint64 now = g_get_monotonic_time();
    if (w->seen_us == 0) {
        w->seen_us = now;
    }
    return now - w->seen_us >= w->stable_us;
}

static gboolean osr(gpointer ud)
{
    Want *w = ud;
    SmPartition *p = sm_cluster_find_partition(w->cluster, w->topic, w->partition);
    const SmReplica *r = replica_of(p, w->broker);
    /* out of sync, or also offline once its broker's session expired (its
     * last known LEO) */
    char want[64], gone[64];
    (void)g_snprintf(want, sizeof want, "replica %d: out of sync, ", (int)w->broker);
    (void)g_snprintf(gone, sizeof gone, "replica %d: offline, out of sync, ", (int)w->broker);
    const char *label = bar_label(w);
    gboolean shown = r != NULL && p->full_view && !sm_partition_in_isr(p, w->broker) &&
                     r->log_end_offset >= 0 && r->log_end_offset < p->high_watermark &&
                     (strstr(label, want) != NULL || strstr(label, gone) != NULL) &&
                     strstr(label, "behind the high watermark");
    if (!shown) {
        w->frozen_leo = -1;
        return FALSE;
    }
    if (w->frozen_leo < 0 || r->log_end_offset != w->frozen_leo) {
        w->frozen_leo = r->log_end_offset;
        w->hw_then = p->high_watermark;
        w->seen_us = g_get_monotonic_time();
        return FALSE;
    }
    return p->high_watermark >= w->hw_then + 10;
}

static gboolean isr(gpointer ud)
{
    Want *w = ud;
    SmPartition *p = sm_cluster_find_partition(w->cluster, w->topic, w->partition);
    char want[64];
    (void)g_snprintf(want, sizeof want, "replica %d: in sync", (int)w->broker);
    return p != NULL && sm_partition_in_isr(p, w->broker) && strstr(bar_label(w), want) != NULL;
}

static gboolean gone(gpointer ud)
{
    Want *w = ud;
    SmBroker *b = sm_cluster_find_broker(w->cluster, w->broker);
    SmTopic *t = sm_cluster_find_topic(w->cluster, w->topic);
    if (b == NULL || b->alive || t == NULL) {
        return FALSE;
    }
    for (guint i = 0; i < t->parts->len; i++) {
        SmPartition *p = g_ptr_array_index(t->parts, i);
        if (p->leader == w->broker || p->leader < 0) {
            return FALSE;
        }
    }
    /* and the brokers' page says so */
    g_autoptr(GString) texts = g_string_new(NULL);
    sm_window_show_page(w->win, "cluster");
    smt_collect_texts(GTK_WIDGET(w->win), texts);
    return strstr(texts->str, "GONE") != NULL;
}

/* what the model shows of the brokers and the topic's leaders, for a failure */
static char *shown(Want *w)
{
    GString *s = g_string_new("brokers");
    GListModel *brokers = sm_cluster_get_brokers(w->cluster);
    for (guint i = 0; i < g_list_model_get_n_items(brokers); i++) {
        g_autoptr(SmBroker) b = g_list_model_get_item(brokers, i);
        g_string_append_printf(s, " %d:%s", (int)b->id, b->alive ? "alive" : "gone");
    }
    SmTopic *t = sm_cluster_find_topic(w->cluster, w->topic);
    for (guint i = 0; t != NULL && i < t->parts->len; i++) {
        SmPartition *p = g_ptr_array_index(t->parts, i);
        g_autofree char *isr_s = sm_partition_format_isr(p);
        g_string_append_printf(s, "; p%u leader %d epoch %d isr [%s]%s", i, (int)p->leader,
                               (int)p->leader_epoch, isr_s, p->full_view ? " (leader's view)" : "");
    }
    g_string_append_printf(s, "; bar: %s", bar_label(w));
    return g_string_free(s, FALSE);
}

static void answer_wait(gboolean (*cond)(gpointer), Want *w, double secs, const char *what)
{
    gint64 ms = smt_wait(cond, w, secs);
    if (ms < 0) {
        g_autofree char *state = shown(w);
        printf("fail %s not shown within %.0f s; %s\n", what, secs, state);
    } else if (cond == osr) {
        /* when it was first shown out of sync, not when the HW had moved on */
        gint64 shown = ms - (g_get_monotonic_time() - w->seen_us) / 1000;
        printf("ok %" G_GINT64_FORMAT " %s\n", MAX(shown, 0), bar_label(w));
    } else {
        printf("ok %" G_GINT64_FORMAT "\n", ms);
    }
    fflush(stdout);
}

/* the messages-in chart's label names a rate above zero */
static gboolean rate_shown(gpointer ud)
{
    Want *w = ud;
    const SmPoint *p = sm_series_last(&sm_cluster_get_rates(w->cluster)->messages_in);
    const char *label =
        sm_chart_get_description(SM_CHART(sm_window_get_chart(w->win, SM_CHART_MESSAGES_IN)));
    return p != NULL && p->known && p->value > 0 && g_str_has_prefix(label, "messages in: ") &&
           !g_str_has_prefix(label, "messages in: 0.0/s") &&
           !g_str_has_prefix(label, "messages in: no ");
}

static void shot(SmWindow *win, const char *prefix, const char *page)
{
    AdwStyleManager *style = adw_style_manager_get_default();
    const AdwColorScheme schemes[] = {ADW_COLOR_SCHEME_FORCE_LIGHT, ADW_COLOR_SCHEME_FORCE_DARK};
    const char *const names[] = {"light", "dark"};
    sm_window_show_page(win, page);
    /* the view switcher's highlight slides to the page: let it arrive (a
     * picture's look, not a condition tested) */
    gint64 until = g_get_monotonic_time() + 600 * G_TIME_SPAN_MILLISECOND;
    while (g_get_monotonic_time() < until) {
        (void)g_timeout_add(20, smt_wake, NULL);
        g_main_context_iteration(NULL, TRUE);
    }
    gboolean ok = TRUE;
    for (int i = 0; i < 2; i++) {
        adw_style_manager_set_color_scheme(style, schemes[i]);
        gtk_widget_queue_draw(GTK_WIDGET(win));
        gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
        g_autofree char *png = g_strdup_printf("%s-%s.png", prefix, names[i]);
        g_autofree char *node = g_strdup_printf("%s-%s.node", prefix, names[i]);
        ok = ok && smt_render(GTK_WIDGET(win), png, node);
    }
    adw_style_manager_set_color_scheme(style, ADW_COLOR_SCHEME_DEFAULT);
    printf(ok ? "ok 0\n" : "fail render\n");
    fflush(stdout);
}

typedef struct {
    SmWindow *win;
    SmCluster *cluster;
    SmClient *client;
    GDataInputStream *in;
    gboolean quit;
} Driver;

typedef struct {
    SmClient *client;
    const char *text;
} StatusWant;

static gboolean status_has(gpointer ud)
{
    StatusWant *s = ud;
    return strstr(sm_client_get_status(s->client), s->text) != NULL;
}

/* what the window shows: a label's or cell's text and its style class */
typedef struct {
    SmWindow *win;
    gint32 broker; /* row: whose; -1: label */
    const char *cls;
    const char *text;
    char *seen; /* what matched, or what the row shows */
} Look;

static gboolean styled(GtkWidget *w, const char *cls)
{
    return strcmp(cls, "-") == 0 || gtk_widget_has_css_class(w, cls);
}

/* a mapped label containing look's text with its class */
static gboolean is_label(GtkWidget *w, gconstpointer ud)
{
    const Look *look = ud;
    return GTK_IS_LABEL(w) && gtk_widget_get_mapped(w) &&
           strstr(gtk_label_get_text(GTK_LABEL(w)), look->text) != NULL && styled(w, look->cls);
}

static gboolean label_shown(gpointer ud)
{
    Look *look = ud;
    GtkWidget *l = smt_find_widget(GTK_WIDGET(look->win), is_label, look);
    if (l != NULL) {
        g_free(look->seen);
        look->seen = g_strdup(gtk_label_get_text(GTK_LABEL(l)));
    }
    return l != NULL;
}

/* a column view row's first cell, the broker's id (ud: "2") */
static gboolean is_id_cell(GtkWidget *w, gconstpointer ud)
{
    if (!GTK_IS_INSCRIPTION(w) || !gtk_widget_get_mapped(w)) {
        return FALSE;
    }
    GtkWidget *row = gtk_widget_get_parent(gtk_widget_get_parent(w));
    GtkWidget *first = gtk_widget_get_first_child(gtk_widget_get_first_child(row));
    return first == w && g_strcmp0(gtk_inscription_get_text(GTK_INSCRIPTION(w)), ud) == 0 &&
           gtk_widget_get_ancestor(w, GTK_TYPE_COLUMN_VIEW) != NULL;
}

/* the row widget (a column view's row: cells of inscriptions and charts)
 * whose first inscription is the broker's id; NULL when not shown */
static GtkWidget *broker_row(GtkWidget *w, gint32 broker)
{
    char id[16];
    (void)g_snprintf(id, sizeof id, "%d", (int)broker);
    GtkWidget *cell = smt_find_widget(w, is_id_cell, id);
    return cell != NULL ? gtk_widget_get_parent(gtk_widget_get_parent(cell)) : NULL;
}

static gboolean row_shows(gpointer ud)
{
    Look *look = ud;
    GtkWidget *row = broker_row(GTK_WIDGET(look->win), look->broker);
    if (row == NULL) {
        return FALSE;
    }
    GString *all = g_string_new(NULL);
    gboolean found = FALSE;
    for (GtkWidget *cell = gtk_widget_get_first_child(row); cell != NULL;
         cell = gtk_widget_get_next_sibling(cell)) {
        GtkWidget *c = gtk_widget_get_first_child(cell);
        const char *t = NULL;
        if (GTK_IS_INSCRIPTION(c)) {
            t = gtk_inscription_get_text(GTK_INSCRIPTION(c));
        } else if (SM_IS_CHART(c)) {
            t = sm_chart_get_description(SM_CHART(c));
        }
        t = t != NULL ? t : "";
        g_string_append_printf(all, "%s%s", all->len > 0 ? " | " : "", t);
        found = found || (g_regex_match_simple(look->text, t, 0, 0) && styled(c, look->cls));
    }
    g_free(look->seen);
    look->seen = g_string_free(all, FALSE);
    return found;
}

/* every expander under w opened (the topic's configs) */
static void open_expanders(GtkWidget *w)
{
    if (GTK_IS_EXPANDER(w)) {
        gtk_expander_set_expanded(GTK_EXPANDER(w), TRUE);
    }
    for (GtkWidget *c = gtk_widget_get_first_child(w); c != NULL; c = gtk_widget_get_next_sibling(c)) {
        open_expanders(c);
    }
}

static void answer_look(gboolean (*cond)(gpointer), Look *look, double secs, const char *page)
{
    sm_window_show_page(look->win, page);
    gint64 ms = smt_wait(cond, look, secs);
    if (ms < 0) {
        printf("fail '%s' (%s) not shown within %.0f s; shown: %s\n", look->text, look->cls,
               secs, look->seen != NULL ? look->seen : "nothing");
    } else {
        printf("ok %" G_GINT64_FORMAT " %s\n", ms, look->seen);
    }
    fflush(stdout);
    g_free(look->seen);
}

static GDataInputStream *in_stream(void)
{
    GInputStream *raw = g_unix_input_stream_new(0, FALSE);
    GDataInputStream *in = g_data_input_stream_new(raw);
    g_object_unref(raw);
    return in;
}

static void next_line(Driver *d);


static void browse(Driver *d, char **f)
{
    SmBrowser *b = smt_find_browser(GTK_WIDGET(d->win));
    SmFrom from = strcmp(f[4], "offset") == 0 ? SM_FROM_OFFSET
                  : strcmp(f[4], "time") == 0 ? SM_FROM_TIME
                                              : SM_FROM_LATEST;
    sm_window_show_page(d->win, "messages");
    sm_browser_read(b, f[2], (gint32)g_ascii_strtoll(f[3], NULL, 10), from,
                    strcmp(f[5], "-") == 0 ? NULL : f[5], (guint)g_ascii_strtoull(f[6], NULL, 10));
    gint64 ms = smt_wait(smt_browser_done, b, g_ascii_strtod(f[1], NULL));
    gtk_test_widget_wait_for_draw(GTK_WIDGET(d->win));
    g_autoptr(GString) texts = g_string_new(NULL);
    smt_collect_texts(GTK_WIDGET(b), texts);
    g_strdelimit(texts->str, "\n", '|');
    if (ms < 0) {
        printf("fail not read within %s s: %s\n", f[1], sm_browser_get_status(b));
    } else {
        printf("ok %" G_GINT64_FORMAT " %s | %s\n", ms, sm_browser_get_status(b), texts->str);
    }
    fflush(stdout);
}

/* a mapped label or cell containing ud */
static gboolean holds_text(GtkWidget *w, gconstpointer ud)
{
    const char *t = GTK_IS_LABEL(w)         ? gtk_label_get_text(GTK_LABEL(w))
                    : GTK_IS_INSCRIPTION(w) ? gtk_inscription_get_text(GTK_INSCRIPTION(w))
                                            : NULL;
    return t != NULL && gtk_widget_get_mapped(w) && strstr(t, ud) != NULL;
}

typedef struct {
    Driver *d;
    const char *text;  /* a label or cell holds it */
    const char *topic; /* NULL, or the topic known (want_topic) or not */
    gboolean want_topic;
    char *seen;
} Change;

static gboolean change_shown(gpointer ud)
{
    Change *c = ud;
    GtkWidget *w = NULL;
    GList *tops = gtk_window_list_toplevels();
    for (GList *l = tops; l != NULL && w == NULL; l = l->next) {
        w = smt_find_widget(l->data, holds_text, c->text);
    }
    g_list_free(tops);
    if (w != NULL) {
        g_free(c->seen);
        c->seen = g_strdup(GTK_IS_LABEL(w) ? gtk_label_get_text(GTK_LABEL(w))
                                           : gtk_inscription_get_text(GTK_INSCRIPTION(w)));
    }
    gboolean known = c->topic != NULL && sm_cluster_find_topic(c->d->cluster, c->topic) != NULL;
    return w != NULL && (c->topic == NULL || known == c->want_topic);
}

static void confirm(Driver *d, char **f, guint n)
{
    AdwMessageDialog *dlg = NULL;
    Change c = {d, NULL, NULL, FALSE, NULL};
    g_autofree char *toast = NULL;
    const char *response = f[2];
    if (n == 6 && strcmp(f[2], "create") == 0) {
        dlg = sm_window_confirm_create_topic(d->win, f[3], (gint32)g_ascii_strtoll(f[4], NULL, 10),
                                             (gint16)g_ascii_strtoll(f[5], NULL, 10));
        toast = g_strdup_printf("Topic %s created", f[3]);
        c.topic = f[3];
        c.want_topic = TRUE;
    } else if (n == 4 && strcmp(f[2], "delete") == 0) {
        dlg = sm_window_confirm_delete_topic(d->win, f[3]);
        toast = g_strdup_printf("Topic %s deleted", f[3]);
        c.topic = f[3];
    } else if (n == 5 && strcmp(f[2], "reset") == 0) {
        dlg = sm_window_confirm_reset_offsets(d->win, f[3], strcmp(f[4], "earliest") == 0);
        toast = g_strdup_printf("Offsets of %s reset", f[3]);
    } else if (n == 4 && strcmp(f[2], "abort") == 0) {
        sm_window_show_page(d->win, "transactions");
        dlg = sm_window_confirm_abort_transaction(d->win, f[3]);
        toast = g_strdup_printf("Transaction %s aborted", f[3]);
    }
    if (dlg == NULL) {
        printf("fail unknown change, or no such transactional id\n");
        fflush(stdout);
        return;
    }
    g_autofree char *heading = g_strdup(adw_message_dialog_get_heading(dlg));
    gtk_test_widget_wait_for_draw(GTK_WIDGET(dlg));
    gboolean shown = gtk_widget_get_mapped(GTK_WIDGET(dlg));
    adw_message_dialog_response(dlg, response);
    gtk_window_destroy(GTK_WINDOW(dlg));
    c.text = toast;
    gint64 ms = smt_wait(change_shown, &c, g_ascii_strtod(f[1], NULL));
    if (!shown || ms < 0) {
        /* a toast of a failure says why */
        g_autofree char *why = NULL;
        c.text = "Could not";
        c.topic = NULL;
        if (change_shown(&c)) {
            why = g_strdup(c.seen);
        }
        printf("fail %s; %s\n", shown ? "not done in time" : "the confirmation was not shown",
               why != NULL ? why : "no toast");
    } else {
        printf("ok %" G_GINT64_FORMAT " %s | %s\n", ms, heading, c.seen);
    }
    g_free(c.seen);
    fflush(stdout);
}

typedef struct {
    SmWindow *win;
    const char *cls;
    const char *text;
    char *seen;
} CellWant;

/* a mapped cell holding want->text, with (or, "!cls", without) its class */
static gboolean is_cell(GtkWidget *w, gconstpointer ud)
{
    const CellWant *c = ud;
    if (!GTK_IS_INSCRIPTION(w) || !gtk_widget_get_mapped(w)) {
        return FALSE;
    }
    const char *t = gtk_inscription_get_text(GTK_INSCRIPTION(w));
    if (t == NULL || strstr(t, c->text) == NULL) {
        return FALSE;
    }
    if (strcmp(c->cls, "-") == 0) {
        return TRUE;
    }
    return c->cls[0] == '!' ? !gtk_widget_has_css_class(w, c->cls + 1)
                            : gtk_widget_has_css_class(w, c->cls);
}

static gboolean cell_shown(gpointer ud)
{
    CellWant *c = ud;
    GtkWidget *w = smt_find_widget(GTK_WIDGET(c->win), is_cell, c);
    if (w != NULL) {
        g_free(c->seen);
        c->seen = g_strdup(gtk_inscription_get_text(GTK_INSCRIPTION(w)));
    }
    return w != NULL;
}

static void cell(Driver *d, char **f, guint n)
{
    g_autofree char *text = g_strjoinv(" ", f + 4);
    (void)n;
    if (g_str_has_prefix(f[1], "partitions:")) {
        sm_window_show_topic(d->win, f[1] + strlen("partitions:"));
        sm_window_show_page(d->win, "partitions");
    } else {
        sm_window_show_page(d->win, f[1]);
    }
    CellWant c = {d->win, f[3], text, NULL};
    gint64 ms = smt_wait(cell_shown, &c, g_ascii_strtod(f[2], NULL));
    if (ms < 0) {
        g_autoptr(GString) texts = g_string_new(NULL);
        smt_collect_texts(GTK_WIDGET(d->win), texts);
        g_strdelimit(texts->str, "\n", '|');
        printf("fail no cell '%s' (%s) on %s within %s s; the cells: %s\n", text, f[3], f[1],
               f[2], texts->str);
    } else {
        printf("ok %" G_GINT64_FORMAT " %s\n", ms, c.seen);
    }
    g_free(c.seen);
    fflush(stdout);
}

static gboolean cell_gone(gpointer ud)
{
    return !cell_shown(ud);
}

static void nocell(Driver *d, char **f)
{
    g_autofree char *text = g_strjoinv(" ", f + 3);
    if (g_str_has_prefix(f[1], "partitions:")) {
        sm_window_show_topic(d->win, f[1] + strlen("partitions:"));
        sm_window_show_page(d->win, "partitions");
    } else {
        sm_window_show_page(d->win, f[1]);
    }
    CellWant c = {d->win, "-", text, NULL};
    gint64 ms = smt_wait(cell_gone, &c, g_ascii_strtod(f[2], NULL));
    if (ms < 0) {
        printf("fail a cell of %s still shows '%s' after %s s: %s\n", f[1], text, f[2], c.seen);
    } else {
        printf("ok %" G_GINT64_FORMAT "\n", ms);
    }
    g_free(c.seen);
    fflush(stdout);
}

static void handle(Driver *d, char **f, guint n)
{
    Want w = {d->win, d->cluster, NULL, 0, -1, 0, -1, -1, 0, 0};
    if ((n == 4 || n == 5) && strcmp(f[0], "ready") == 0) {
        w.topic = f[1];
        w.n = (guint)g_ascii_strtoull(f[2], NULL, 10);
        w.stable_us = n == 5 ? (gint64)(g_ascii_strtod(f[4], NULL) * G_USEC_PER_SEC) : 0;
        sm_window_show_topic(d->win, w.topic);
        answer_wait(ready, &w, g_ascii_strtod(f[3], NULL), "the topic");
    } else if (n == 5 && (strcmp(f[0], "osr") == 0 || strcmp(f[0], "isr") == 0)) {
        w.topic = f[1];
        w.partition = (gint32)g_ascii_strtoll(f[2], NULL, 10);
        w.broker = (gint32)g_ascii_strtoll(f[3], NULL, 10);
        sm_window_show_topic(d->win, w.topic);
        sm_window_show_page(d->win, "partitions");
        answer_wait(f[0][0] == 'o' ? osr : isr, &w, g_ascii_strtod(f[4], NULL), f[0]);
    } else if (n == 4 && strcmp(f[0], "gone") == 0) {
        w.broker = (gint32)g_ascii_strtoll(f[1], NULL, 10);
        w.topic = f[2];
        answer_wait(gone, &w, g_ascii_strtod(f[3], NULL), "the broker gone");
    } else if ((n == 2 || n == 3) && strcmp(f[0], "shot") == 0) {
        shot(d->win, f[1], n == 3 ? f[2] : "partitions");
    } else if (n == 2 && strcmp(f[0], "rate") == 0) {
        sm_window_show_page(d->win, "cluster");
        gint64 ms = smt_wait(rate_shown, &w, g_ascii_strtod(f[1], NULL));
        const char *label = sm_chart_get_description(
            SM_CHART(sm_window_get_chart(d->win, SM_CHART_MESSAGES_IN)));
        if (ms < 0) {
            printf("fail no rate shown within %s s; the chart says '%s'\n", f[1], label);
        } else {
            printf("ok %" G_GINT64_FORMAT " %s\n", ms, label);
        }
        fflush(stdout);
    } else if (n >= 3 && strcmp(f[0], "status") == 0) {
        g_autofree char *text = g_strjoinv(" ", f + 2);
        StatusWant s = {d->client, text};
        gint64 ms = smt_wait(status_has, &s, g_ascii_strtod(f[1], NULL));
        if (ms < 0) {
            printf("fail status not '%s' but '%s'\n", text, sm_client_get_status(d->client));
        } else {
            printf("ok %" G_GINT64_FORMAT " %s\n", ms, sm_client_get_status(d->client));
        }
        fflush(stdout);
    } else if (n >= 4 && strcmp(f[0], "label") == 0) {
        g_autofree char *text = g_strjoinv(" ", f + 3);
        Look look = {d->win, -1, f[2], text, NULL};
        answer_look(label_shown, &look, g_ascii_strtod(f[1], NULL), "cluster");
    } else if (n >= 5 && strcmp(f[0], "plabel") == 0) {
        /* the partitions page of topic f[1] */
        g_autofree char *text = g_strjoinv(" ", f + 4);
        Look look = {d->win, -1, f[3], text, NULL};
        sm_window_show_topic(d->win, f[1]);
        open_expanders(GTK_WIDGET(d->win));
        answer_look(label_shown, &look, g_ascii_strtod(f[2], NULL), "partitions");
    } else if (n >= 5 && strcmp(f[0], "row") == 0) {
        g_autofree char *text = g_strjoinv(" ", f + 4);
        Look look = {d->win, (gint32)g_ascii_strtoll(f[1], NULL, 10), f[3], text, NULL};
        answer_look(row_shows, &look, g_ascii_strtod(f[2], NULL), "cluster");
    } else if (n >= 4 && strcmp(f[0], "nocell") == 0) {
        nocell(d, f);
    } else if (n >= 5 && strcmp(f[0], "cell") == 0) {
        cell(d, f, n);
    } else if (n >= 4 && strcmp(f[0], "confirm") == 0) {
        confirm(d, f, n);
    } else if (n >= 4 && strcmp(f[0], "shows") == 0) {
        g_autofree char *text = g_strjoinv(" ", f + 3);
        Change c = {d, text, NULL, FALSE, NULL};
        sm_window_show_page(d->win, f[1]);
        gint64 ms = smt_wait(change_shown, &c, g_ascii_strtod(f[2], NULL));
        if (ms < 0) {
            printf("fail '%s' not shown on %s within %s s\n", text, f[1], f[2]);
        } else {
            printf("ok %" G_GINT64_FORMAT " %s\n", ms, c.seen);
        }
        g_free(c.seen);
        fflush(stdout);
    } else if (n == 7 && strcmp(f[0], "browse") == 0) {
        browse(d, f);
    } else if (n == 1 && strcmp(f[0], "stats") == 0) {
        const SmFlushStats *s = sm_window_get_flush_stats(d->win);
        printf("ok %u %u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT "\n", s->flushes, s->rows,
               s->total_us, s->max_us);
        fflush(stdout);
    } else if (n == 1 && strcmp(f[0], "quit") == 0) {
        d->quit = TRUE;
    } else {
        printf("fail unknown command\n");
        fflush(stdout);
    }
}

static void got_line(GObject *source, GAsyncResult *res, gpointer ud)
{
    Driver *d = ud;
    g_autoptr(GError) err = NULL;
    g_autofree char *line =
        g_data_input_stream_read_line_finish(G_DATA_INPUT_STREAM(source), res, NULL, &err);
    if (line == NULL) {
        d->quit = TRUE; /* stdin closed: the test is over */
        return;
    }
    g_auto(GStrv) f = g_strsplit(g_strstrip(line), " ", -1);
    handle(d, f, g_strv_length(f));
    if (!d->quit) {
        next_line(d);
    }
}

static void next_line(Driver *d)
{
    g_data_input_stream_read_line_async(d->in, G_PRIORITY_DEFAULT, NULL, got_line, d);
}

int main(int argc, char **argv)
{
    gtk_init();
    adw_init();
    if (argc != 2) {
        fprintf(stderr, "usage: test_monitor_driver ADMIN-URL\n");
        return 2;
    }
    SmCluster *cluster = sm_cluster_new();
    SmClient *client = sm_client_new(cluster);
    SmWindow *win = sm_window_new(NULL, cluster, client);
    gtk_window_set_default_size(GTK_WINDOW(win), 1100, 640); /* the default-size setting */
    gtk_window_present(GTK_WINDOW(win));
    const char *token = g_getenv("SAMSA_ADMIN_TOKEN");
    if (token != NULL && token[0] != '\0') {
        sm_client_set_token(client, token);
    }
    /* as samsa-monitor's --ca-file: the CA of https admin listeners */
    const char *ca_file = g_getenv("SAMSA_ADMIN_CA_FILE");
    if (ca_file != NULL && ca_file[0] != '\0') {
        g_autoptr(GError) err = NULL;
        if (!sm_client_set_ca_file(client, ca_file, &err)) {
            fprintf(stderr, "test_monitor_driver: %s\n", err->message);
            return 2;
        }
    }
    sm_client_connect(client, argv[1]);
    Driver d = {win, cluster, client, in_stream(), FALSE};
    next_line(&d);
    while (!d.quit) {
        g_main_context_iteration(NULL, TRUE);
    }
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(d.in);
    g_object_unref(client);
    g_object_unref(cluster);
    return 0;
}
