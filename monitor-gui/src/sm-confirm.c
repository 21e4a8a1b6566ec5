/* sm-confirm.c: the changes' confirmations (see sm-confirm.h). */
#include "sm-confirm.h"

#include "sm-changes.h"
#include "sm-client.h"

typedef struct {
    AdwToastOverlay *toasts; /* referenced */
    char *done;              /* the toast when it worked */
    char *what;              /* "Could not create topic x" */
} Change;

void sm_confirm_toast(AdwToastOverlay *toasts, const char *text)
{
    AdwToast *t = adw_toast_new(text);
    adw_toast_set_timeout(t, 10);
    adw_toast_overlay_add_toast(toasts, t);
}

/* the toast of how c went (err NULL: it did), then c freed */
static void change_done(Change *c, const GError *err)
{
    if (err == NULL) {
        sm_confirm_toast(c->toasts, c->done);
    } else {
        g_autofree char *text = g_strdup_printf("%s: %s", c->what, err->message);
        sm_confirm_toast(c->toasts, text);
    }
    g_object_unref(c->toasts);
    g_free(c->done);
    g_free(c->what);
    g_free(c);
}

static void on_changed(GObject *source, GAsyncResult *res, gpointer ud)
{
    (void)source;
    g_autoptr(GError) err = NULL;
    gboolean ok = sm_changes_finish(res, &err);
    change_done(ud, ok ? NULL : err);
}

static Change *change_new(AdwMessageDialog *d, char *done, char *what)
{
    Change *c = g_new0(Change, 1);
    c->toasts = g_object_ref(g_object_get_data(G_OBJECT(d), "sm-toasts"));
    c->done = done;
    c->what = what;
    return c;
}

/* the alive brokers of d's cluster to send a change to; NULL (said in a
 * toast) when none */
static char *servers_or_say(AdwMessageDialog *d)
{
    char *servers = sm_cluster_bootstrap_servers(g_object_get_data(G_OBJECT(d), "sm-cluster"));
    if (servers == NULL) {
        sm_confirm_toast(g_object_get_data(G_OBJECT(d), "sm-toasts"),
                         "No broker alive to send the change to");
    }
    return servers;
}

static AdwMessageDialog *confirm(const SmConfirmOn *on, const char *heading, const char *body,
                                 const char *action, const char *label, AdwResponseAppearance look)
{
    AdwMessageDialog *d = ADW_MESSAGE_DIALOG(adw_message_dialog_new(on->parent, heading, body));
    g_object_set_data_full(G_OBJECT(d), "sm-toasts", g_object_ref(on->toasts), g_object_unref);
    g_object_set_data_full(G_OBJECT(d), "sm-cluster", g_object_ref(on->cluster), g_object_unref);
    adw_message_dialog_add_responses(d, "cancel", "_Cancel", action, label, NULL);
    adw_message_dialog_set_response_appearance(d, action, look);
    adw_message_dialog_set_default_response(d, "cancel");
    adw_message_dialog_set_close_response(d, "cancel");
    return d;
}

static void on_create_response(AdwMessageDialog *d, const char *response, gpointer ud)
{
    (void)ud;
    if (g_strcmp0(response, "create") != 0) {
        return;
    }
    const char *name = gtk_editable_get_text(g_object_get_data(G_OBJECT(d), "sm-name"));
    gint32 parts =
        gtk_spin_button_get_value_as_int(g_object_get_data(G_OBJECT(d), "sm-partitions"));
    gint16 rf = (gint16)gtk_spin_button_get_value_as_int(g_object_get_data(G_OBJECT(d), "sm-rf"));
    g_autofree char *servers = servers_or_say(d);
    if (name == NULL || name[0] == '\0' || servers == NULL) {
        if (servers != NULL) {
            sm_confirm_toast(g_object_get_data(G_OBJECT(d), "sm-toasts"), "A topic needs a name");
        }
        return;
    }
    sm_changes_create_topic_async(
        servers, name, parts, rf, on_changed,
        change_new(d,
                   g_strdup_printf("Topic %s created: %d partitions, replication factor %d", name,
                                   (int)parts, (int)rf),
                   g_strdup_printf("Could not create topic %s", name)));
}

static GtkWidget *form_row(GtkGrid *grid, int row, const char *text, GtkWidget *w)
{
    GtkWidget *l = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(l), 1);
    gtk_grid_attach(grid, l, 0, row, 1, 1);
    gtk_grid_attach(grid, w, 1, row, 1, 1);
    gtk_accessible_update_property(GTK_ACCESSIBLE(w), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
    return w;
}

AdwMessageDialog *sm_confirm_create_topic(const SmConfirmOn *on, const char *name,
                                          gint32 partitions, gint16 replication_factor)
{
    AdwMessageDialog *d = confirm(on, "New Topic", "Created on the controller (CreateTopics).",
                                  "create", "C_reate", ADW_RESPONSE_SUGGESTED);
    GtkGrid *grid = GTK_GRID(gtk_grid_new());
    gtk_grid_set_row_spacing(grid, 6);
    gtk_grid_set_column_spacing(grid, 12);
    GtkWidget *entry = form_row(grid, 0, "Name", gtk_entry_new());
    gtk_editable_set_text(GTK_EDITABLE(entry), name != NULL ? name : "");
    GtkWidget *parts = form_row(grid, 1, "Partitions", gtk_spin_button_new_with_range(1, 10000, 1));
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(parts), MAX(partitions, 1));
    GtkWidget *rf =
        form_row(grid, 2, "Replication factor", gtk_spin_button_new_with_range(1, 32, 1));
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(rf), MAX(replication_factor, 1));
    g_object_set_data(G_OBJECT(d), "sm-name", entry);
    g_object_set_data(G_OBJECT(d), "sm-partitions", parts);
    g_object_set_data(G_OBJECT(d), "sm-rf", rf);
    adw_message_dialog_set_extra_child(d, GTK_WIDGET(grid));
    g_signal_connect(d, "response", G_CALLBACK(on_create_response), NULL);
    gtk_window_present(GTK_WINDOW(d));
    return d;
}

static void on_delete_response(AdwMessageDialog *d, const char *response, gpointer ud)
{
    (void)ud;
    const char *topic = g_object_get_data(G_OBJECT(d), "sm-topic");
    g_autofree char *servers = g_strcmp0(response, "delete") == 0 ? servers_or_say(d) : NULL;
    if (servers != NULL) {
        sm_changes_delete_topic_async(
            servers, topic, on_changed,
            change_new(d, g_strdup_printf("Topic %s deleted", topic),
                       g_strdup_printf("Could not delete topic %s", topic)));
    }
}

AdwMessageDialog *sm_confirm_delete_topic(const SmConfirmOn *on, const char *topic)
{
    g_return_val_if_fail(topic != NULL, NULL);
    SmTopic *t = sm_cluster_find_topic(on->cluster, topic);
    g_autofree char *heading = g_strdup_printf("Delete topic %s?", topic);
    g_autofree char *body = g_strdup_printf(
        "Its %u partitions and every record in them are deleted for good (DeleteTopics).",
        t != NULL ? t->parts->len : 0);
    AdwMessageDialog *d = confirm(on, heading, body, "delete", "_Delete", ADW_RESPONSE_DESTRUCTIVE);
    g_object_set_data_full(G_OBJECT(d), "sm-topic", g_strdup(topic), g_free);
    g_signal_connect(d, "response", G_CALLBACK(on_delete_response), NULL);
    gtk_window_present(GTK_WINDOW(d));
    return d;
}

static void on_reset_response(AdwMessageDialog *d, const char *response, gpointer ud)
{
    (void)ud;
    const char *group = g_object_get_data(G_OBJECT(d), "sm-group");
    gboolean earliest = gtk_drop_down_get_selected(g_object_get_data(G_OBJECT(d), "sm-to")) == 0;
    SmGroup *g = NULL;
    GListModel *groups = sm_cluster_get_groups(g_object_get_data(G_OBJECT(d), "sm-cluster"));
    for (guint i = 0; i < g_list_model_get_n_items(groups) && g == NULL; i++) {
        SmGroup *one = g_list_model_get_item(groups, i);
        if (g_strcmp0(one->group_id, group) == 0) {
            g = one;
        } else {
            g_object_unref(one);
        }
    }
    g_autofree char *servers =
        g_strcmp0(response, "reset") == 0 && g != NULL ? servers_or_say(d) : NULL;
    if (servers != NULL) {
        guint n = g->offsets->len;
        g_autofree const char **topics = g_new0(const char *, n + 1);
        g_autofree gint32 *parts = g_new0(gint32, n + 1);
        for (guint i = 0; i < n; i++) {
            const SmGroupOffset *o = &g_array_index(g->offsets, SmGroupOffset, i);
            topics[i] = o->topic != NULL ? o->topic : "";
            parts[i] = o->partition;
        }
        sm_changes_reset_offsets_async(
            servers, group, topics, parts, n, earliest, on_changed,
            change_new(d,
                       g_strdup_printf("Offsets of %s reset to the %s: %u partition%s", group,
                                       earliest ? "earliest" : "latest", n, n == 1 ? "" : "s"),
                       g_strdup_printf("Could not reset the offsets of %s", group)));
    }
    g_clear_object(&g);
}

AdwMessageDialog *sm_confirm_reset_offsets(const SmConfirmOn *on, const char *group,
                                           gboolean to_earliest)
{
    g_return_val_if_fail(group != NULL, NULL);
    g_autofree char *heading = g_strdup_printf("Reset the offsets of %s?", group);
    AdwMessageDialog *d = confirm(
        on, heading,
        "Every partition it has committed goes to its earliest or latest offset (OffsetCommit). "
        "Kafka takes it only while the group has no active member: stop its consumers first.",
        "reset", "_Reset", ADW_RESPONSE_DESTRUCTIVE);
    const char *const to[] = {"to the earliest", "to the latest", NULL};
    GtkWidget *choice = gtk_drop_down_new_from_strings(to);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(choice), to_earliest ? 0 : 1);
    gtk_accessible_update_property(GTK_ACCESSIBLE(choice), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   "Reset to", -1);
    adw_message_dialog_set_extra_child(d, choice);
    g_object_set_data(G_OBJECT(d), "sm-to", choice);
    g_object_set_data_full(G_OBJECT(d), "sm-group", g_strdup(group), g_free);
    g_signal_connect(d, "response", G_CALLBACK(on_reset_response), NULL);
    gtk_window_present(GTK_WINDOW(d));
    return d;
}

/* ------------------------------------------------------------ a transaction's abort */

static void on_aborted(GObject *source, GAsyncResult *res, gpointer ud)
{
    g_autoptr(GError) err = NULL;
    gboolean ok = sm_client_abort_transaction_finish(SM_CLIENT(source), res, &err);
    change_done(ud, ok ? NULL : err);
}

static void on_abort_response(AdwMessageDialog *d, const char *response, gpointer ud)
{
    (void)ud;
    if (g_strcmp0(response, "abort") != 0) {
        return;
    }
    SmClient *client = g_object_get_data(G_OBJECT(d), "sm-client");
    const char *id = g_object_get_data(G_OBJECT(d), "sm-txn");
    gint32 coordinator = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(d), "sm-coordinator"));
    if (client == NULL) {
        sm_confirm_toast(g_object_get_data(G_OBJECT(d), "sm-toasts"),
                         "Not connected to the cluster's admin API: nothing to abort through");
        return;
    }
    sm_client_abort_transaction_async(
        client, coordinator, id, on_aborted,
        change_new(d, g_strdup_printf("Transaction %s aborted: its producer is fenced", id),
                   g_strdup_printf("Could not abort transaction %s", id)));
}

AdwMessageDialog *sm_confirm_abort_transaction(const SmConfirmOn *on, SmClient *client,
                                               const SmTransaction *txn)
{
    g_return_val_if_fail(txn != NULL && txn->transactional_id != NULL, NULL);
    const char *id = txn->transactional_id;
    g_autofree char *heading = g_strdup_printf("Abort transaction %s?", id);
    g_autofree char *body = g_strdup_printf(
        "Its open records%s%s are aborted: read_committed consumers never see them, and the "
        "partitions' last stable offset moves on. Producer %" G_GINT64_FORMAT
        " (epoch %d) is fenced: its next send or commit fails. Broker %d, its transaction "
        "coordinator, does it as transaction.timeout.ms would (the admin API, with its token).",
        txn->partitions != NULL && txn->partitions[0] != '\0' ? " on " : "",
        txn->partitions != NULL ? txn->partitions : "", txn->producer_id,
        (int)txn->producer_epoch, (int)txn->coordinator);
    AdwMessageDialog *d = confirm(on, heading, body, "abort", "_Abort", ADW_RESPONSE_DESTRUCTIVE);
    if (client != NULL) {
        g_object_set_data_full(G_OBJECT(d), "sm-client", g_object_ref(client), g_object_unref);
    }
    g_object_set_data_full(G_OBJECT(d), "sm-txn", g_strdup(id), g_free);
    g_object_set_data(G_OBJECT(d), "sm-coordinator", GINT_TO_POINTER(txn->coordinator));
    g_signal_connect(d, "response", G_CALLBACK(on_abort_response), NULL);
    gtk_window_present(GTK_WINDOW(d));
    return d;
}
