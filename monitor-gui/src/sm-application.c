/* sm-application.c: samsa-monitor's application (see sm-application.h). */
#include "sm-application.h"

#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gsettingsbackend.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sm-client.h"
#include "sm-cluster.h"
#include "sm-window.h"

struct _SmApplication {
    AdwApplication parent_instance;
    GSettings *settings;
    SmCluster *cluster;
    SmClient *client;
    SmWindow *window;
    char *topic;
};

G_DEFINE_FINAL_TYPE(SmApplication, sm_application, ADW_TYPE_APPLICATION)

static const GOptionEntry options[] = {
    {"topic", 't', 0, G_OPTION_ARG_STRING, NULL, "Show the partitions of TOPIC", "TOPIC"},
    {"page", 'p', 0, G_OPTION_ARG_STRING, NULL,
     "Open on PAGE (cluster, topics, partitions, groups, transactions, moves, quotas, messages, "
     "events)", "PAGE"},
    {"token-file", 0, 0, G_OPTION_ARG_FILENAME, NULL,
     "Read the admin API's token (admin.auth.token) from PATH; or set SAMSA_ADMIN_TOKEN. "
     "Never give it on the command line: other users can read it there.",
     "PATH"},
    {"ca-file", 0, 0, G_OPTION_ARG_FILENAME, NULL,
     "Trust the CA certificate(s) in PATH (PEM) for https:// admin URLs instead of the "
     "system's",
     "PATH"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static gboolean style_to_scheme(GValue *value, GVariant *variant, gpointer ud)
{
    (void)ud;
    const char *s = g_variant_get_string(variant, NULL);
    AdwColorScheme scheme = ADW_COLOR_SCHEME_DEFAULT;
    if (g_strcmp0(s, "light") == 0) {
        scheme = ADW_COLOR_SCHEME_FORCE_LIGHT;
    } else if (g_strcmp0(s, "dark") == 0) {
        scheme = ADW_COLOR_SCHEME_FORCE_DARK;
    }
    g_value_set_enum(value, (gint)scheme);
    return TRUE;
}

static void remember(SmApplication *self, const char *url)
{
    g_settings_set_string(self->settings, "last-cluster", url);
    g_auto(GStrv) known = g_settings_get_strv(self->settings, "known-clusters");
    if (!g_strv_contains((const char *const *)known, url)) {
        g_autoptr(GStrvBuilder) b = g_strv_builder_new();
        g_strv_builder_add(b, url);
        for (guint i = 0; i < 9 && known[i] != NULL; i++) {
            g_strv_builder_add(b, known[i]);
        }
        g_auto(GStrv) next = g_strv_builder_end(b);
        g_settings_set_strv(self->settings, "known-clusters", (const char *const *)next);
    }
}

static void ask_for_token(SmApplication *self, const char *url);

static void on_unauthorized(SmClient *client, const char *url, gpointer ud)
{
    (void)client;
    ask_for_token(SM_APPLICATION(ud), url);
}

static void ensure_window(SmApplication *self)
{
    if (self->window == NULL) {
        self->cluster = sm_cluster_new();
        self->client = sm_client_new(self->cluster);
        g_signal_connect(self->client, "unauthorized", G_CALLBACK(on_unauthorized), self);
        g_settings_bind(self->settings, "refresh-seconds", self->client, "refresh-seconds",
                        G_SETTINGS_BIND_GET);
        g_settings_bind(self->settings, "chart-seconds", self->client, "chart-seconds",
                        G_SETTINGS_BIND_GET);
        self->window = sm_window_new(GTK_APPLICATION(self), self->cluster, self->client);
        g_object_add_weak_pointer(G_OBJECT(self->window), (gpointer *)&self->window);
        g_settings_bind(self->settings, "window-width", self->window, "default-width",
                        G_SETTINGS_BIND_DEFAULT);
        g_settings_bind(self->settings, "window-height", self->window, "default-height",
                        G_SETTINGS_BIND_DEFAULT);
    }
    gtk_window_present(GTK_WINDOW(self->window));
}

static void open_cluster(SmApplication *self, const char *url)
{
    ensure_window(self);
    sm_client_disconnect(self->client);
    sm_client_connect(self->client, url);
    remember(self, url);
}

static void connect_response(AdwMessageDialog *dialog, const char *response, gpointer ud)
{
    SmApplication *self = SM_APPLICATION(ud);
    GtkEditable *entry = GTK_EDITABLE(adw_message_dialog_get_extra_child(dialog));
    if (g_strcmp0(response, "connect") == 0) {
        const char *url = gtk_editable_get_text(entry);
        if (url != NULL && url[0] != '\0') {
            open_cluster(self, url);
        }
    }
}

/* A message dialog asking for one entry: Cancel or Connect (the default),
 * its response to on_response. */
static void present_entry_dialog(GtkWidget *d, GtkWidget *entry, GCallback on_response,
                                 SmApplication *self)
{
    adw_message_dialog_set_extra_child(ADW_MESSAGE_DIALOG(d), entry);
    adw_message_dialog_add_responses(ADW_MESSAGE_DIALOG(d), "cancel", "Cancel", "connect",
                                     "Connect", NULL);
    adw_message_dialog_set_default_response(ADW_MESSAGE_DIALOG(d), "connect");
    adw_message_dialog_set_response_appearance(ADW_MESSAGE_DIALOG(d), "connect",
                                               ADW_RESPONSE_SUGGESTED);
    g_signal_connect(d, "response", on_response, self);
    gtk_window_present(GTK_WINDOW(d));
}

static void ask_for_cluster(SmApplication *self)
{
    ensure_window(self);
    GtkWidget *d = adw_message_dialog_new(GTK_WINDOW(self->window), "Connect to a Cluster",
                                          "The admin API of any of its brokers "
                                          "(admin.listeners, by default http://127.0.0.1:9095)");
    GtkWidget *entry = gtk_entry_new();
    g_autofree char *last = g_settings_get_string(self->settings, "last-cluster");
    gtk_editable_set_text(GTK_EDITABLE(entry), last[0] ? last : "http://127.0.0.1:9095");
    gtk_entry_set_activates_default(GTK_ENTRY(entry), TRUE);
    present_entry_dialog(d, entry, G_CALLBACK(connect_response), self);
}

static void token_response(AdwMessageDialog *dialog, const char *response, gpointer ud)
{
    SmApplication *self = SM_APPLICATION(ud);
    GtkEditable *entry = GTK_EDITABLE(adw_message_dialog_get_extra_child(dialog));
    if (g_strcmp0(response, "connect") == 0 && self->client != NULL) {
        /* in memory only: the client keeps it, nothing stores it */
        sm_client_set_token(self->client, gtk_editable_get_text(entry));
    }
    gtk_editable_set_text(entry, "");
}

/* a broker answered 401: its admin API has admin.auth.token set */
static void ask_for_token(SmApplication *self, const char *url)
{
    if (self->window == NULL) {
        return;
    }
    g_autofree char *body = g_strdup_printf(
        "%s refused the monitor (401 Unauthorized): its admin API needs the token set as "
        "admin.auth.token in the brokers' configuration. It is kept in memory only.",
        url);
    GtkWidget *d = adw_message_dialog_new(GTK_WINDOW(self->window), "Admin Token Needed", body);
    GtkWidget *entry = gtk_password_entry_new();
    gtk_password_entry_set_show_peek_icon(GTK_PASSWORD_ENTRY(entry), TRUE);
    gtk_accessible_update_property(GTK_ACCESSIBLE(entry), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                   "Admin token", -1);
    g_object_set(entry, "activates-default", TRUE, NULL);
    present_entry_dialog(d, entry, G_CALLBACK(token_response), self);
}

static int command_line(GApplication *app, GApplicationCommandLine *cmd)
{
    SmApplication *self = SM_APPLICATION(app);
    GVariantDict *opts = g_application_command_line_get_options_dict(cmd);
    const char *topic = NULL;
    const char *page = NULL;
    (void)g_variant_dict_lookup(opts, "topic", "&s", &topic);
    (void)g_variant_dict_lookup(opts, "page", "&s", &page);
    const char *token_file = NULL;
    (void)g_variant_dict_lookup(opts, "token-file", "^&ay", &token_file);
    g_autofree char *token = NULL;
    if (token_file != NULL) {
        g_autoptr(GError) err = NULL;
        token = sm_client_read_token_file(token_file, &err);
        if (token == NULL) {
            g_application_command_line_printerr(cmd, "samsa-monitor: --token-file: %s\n",
                                                err->message);
            return 2;
        }
    } else {
        const char *env = g_application_command_line_getenv(cmd, "SAMSA_ADMIN_TOKEN");
        token = env != NULL && env[0] != '\0' ? g_strstrip(g_strdup(env)) : NULL;
    }
    const char *ca_file = NULL;
    (void)g_variant_dict_lookup(opts, "ca-file", "^&ay", &ca_file);
    int argc = 0;
    g_auto(GStrv) argv = g_application_command_line_get_arguments(cmd, &argc);
    if (argc > 2) {
        g_application_command_line_printerr(cmd, "usage: samsa-monitor [ADMIN-URL]\n");
        return 2;
    }
    g_autofree char *last = g_settings_get_string(self->settings, "last-cluster");
    const char *url = argc == 2 ? argv[1] : (last[0] != '\0' ? last : NULL);
    if (url != NULL) {
        if (!g_str_has_prefix(url, "http://") && !g_str_has_prefix(url, "https://")) {
            g_application_command_line_printerr(
                cmd, "samsa-monitor: %s: not an admin URL (http://host:port or https://host:port)\n",
                url);
            return 2;
        }
    }
    ensure_window(self);
    if (ca_file != NULL) {
        g_autoptr(GError) err = NULL;
        if (!sm_client_set_ca_file(self->client, ca_file, &err)) {
            g_application_command_line_printerr(cmd, "samsa-monitor: --ca-file: %s\n",
                                                err->message);
            if (token != NULL) {
                memset(token, 0, strlen(token));
            }
            return 2;
        }
    }
    if (url != NULL) {
        if (token != NULL) {
            sm_client_set_token(self->client, token);
        }
        open_cluster(self, url);
    } else {
        if (token != NULL) {
            sm_client_set_token(self->client, token);
        }
        ask_for_cluster(self);
    }
    if (token != NULL) {
        memset(token, 0, strlen(token));
    }
    if (topic != NULL) {
        sm_window_show_topic(self->window, topic);
        sm_window_show_page(self->window, "partitions");
    }
    if (page != NULL) {
        sm_window_show_page(self->window, page);
    }
    return 0;
}

static void activate(GApplication *app)
{
    SmApplication *self = SM_APPLICATION(app);
    if (self->window != NULL) {
        gtk_window_present(GTK_WINDOW(self->window));
    }
}

static void on_connect(GSimpleAction *a, GVariant *p, gpointer ud)
{
    (void)a;
    (void)p;
    ask_for_cluster(SM_APPLICATION(ud));
}

static void on_quit(GSimpleAction *a, GVariant *p, gpointer ud)
{
    (void)a;
    (void)p;
    g_application_quit(G_APPLICATION(ud));
}

static const GActionEntry actions[] = {
    {"connect", on_connect, NULL, NULL, NULL, {0}},
    {"quit", on_quit, NULL, NULL, NULL, {0}},
};

#define SCHEMA_ID "org.samsa.Monitor"

/* the schema the program was built with (gschemas.compiled, in its
 * resources): GSettings reads schemas from a directory only, so it is
 * written to a private one, opened (mapped) and removed at once */
static GSettingsSchema *built_in_schema(void)
{
    g_autoptr(GBytes) compiled =
        g_resources_lookup_data("/org/samsa/Monitor/gschemas.compiled", 0, NULL);
    g_autofree char *dir = compiled != NULL ? g_dir_make_tmp("samsa-monitor-XXXXXX", NULL) : NULL;
    if (dir == NULL) {
        return NULL;
    }
    g_autofree char *path = g_build_filename(dir, "gschemas.compiled", NULL);
    GSettingsSchemaSource *source = NULL;
    if (g_file_set_contents(path, g_bytes_get_data(compiled, NULL),
                            (gssize)g_bytes_get_size(compiled), NULL)) {
        source = g_settings_schema_source_new_from_directory(dir, NULL, FALSE, NULL);
    }
    (void)g_remove(path);
    (void)g_rmdir(dir);
    if (source == NULL) {
        return NULL;
    }
    GSettingsSchema *schema = g_settings_schema_source_lookup(source, SCHEMA_ID, FALSE);
    g_settings_schema_source_unref(source);
    return schema;
}

/* the settings; when the schema is not installed (run from the build tree
 * without GSETTINGS_SCHEMA_DIR), the defaults in memory with a warning,
 * instead of GLib's abort in g_settings_new */
static GSettings *open_settings(void)
{
    GSettingsSchemaSource *installed = g_settings_schema_source_get_default();
    g_autoptr(GSettingsSchema) schema =
        installed != NULL ? g_settings_schema_source_lookup(installed, SCHEMA_ID, TRUE) : NULL;
    if (schema != NULL) {
        return g_settings_new_full(schema, NULL, NULL);
    }
    g_warning("Settings schema '%s' is not installed (meson install, or "
              "GSETTINGS_SCHEMA_DIR=<build>/monitor-gui/data): using the defaults; "
              "settings are not kept",
              SCHEMA_ID);
    schema = built_in_schema();
    if (schema == NULL) {
        g_error("Settings schema '%s': the built-in copy is unreadable", SCHEMA_ID);
    }
    g_autoptr(GSettingsBackend) memory = g_memory_settings_backend_new();
    return g_settings_new_full(schema, memory, NULL);
}

static void startup(GApplication *app)
{
    SmApplication *self = SM_APPLICATION(app);
    G_APPLICATION_CLASS(sm_application_parent_class)->startup(app); /* adw_init */
    self->settings = open_settings();
    g_settings_bind_with_mapping(self->settings, "style", adw_style_manager_get_default(),
                                 "color-scheme", G_SETTINGS_BIND_GET, style_to_scheme, NULL, NULL,
                                 NULL);
    g_action_map_add_action_entries(G_ACTION_MAP(app), actions, G_N_ELEMENTS(actions), app);
    GAction *style = g_settings_create_action(self->settings, "style");
    g_action_map_add_action(G_ACTION_MAP(app), style);
    g_object_unref(style);
    const char *quit[] = {"<Control>q", NULL};
    gtk_application_set_accels_for_action(GTK_APPLICATION(app), "app.quit", quit);
}

static void shutdown(GApplication *app)
{
    SmApplication *self = SM_APPLICATION(app);
    if (self->client != NULL) {
        sm_client_disconnect(self->client);
    }
    G_APPLICATION_CLASS(sm_application_parent_class)->shutdown(app);
}

static void sm_application_dispose(GObject *object)
{
    SmApplication *self = SM_APPLICATION(object);
    g_clear_object(&self->client);
    g_clear_object(&self->cluster);
    g_clear_object(&self->settings);
    G_OBJECT_CLASS(sm_application_parent_class)->dispose(object);
}

static void sm_application_class_init(SmApplicationClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = sm_application_dispose;
    G_APPLICATION_CLASS(klass)->startup = startup;
    G_APPLICATION_CLASS(klass)->shutdown = shutdown;
    G_APPLICATION_CLASS(klass)->activate = activate;
    G_APPLICATION_CLASS(klass)->command_line = command_line;
}

static void sm_application_init(SmApplication *self)
{
    g_application_add_main_option_entries(G_APPLICATION(self), options);
    g_application_set_option_context_parameter_string(G_APPLICATION(self), "[ADMIN-URL]");
    g_application_set_option_context_summary(
        G_APPLICATION(self),
        "Watch a Samsa cluster: brokers, topics, each replica's log against the high "
        "watermark, consumer groups.\nADMIN-URL is any broker's admin API "
        "(e.g. http://127.0.0.1:9095); without it, the last one.");
}

SmApplication *sm_application_new(void)
{
    return g_object_new(SM_TYPE_APPLICATION, "application-id", "org.samsa.Monitor", "flags",
                        G_APPLICATION_HANDLES_COMMAND_LINE | G_APPLICATION_NON_UNIQUE,
                        "resource-base-path", "/org/samsa/Monitor", NULL);
}
