/* sm-application.h: samsa-monitor's GtkApplication (an AdwApplication):
 * the command line, the settings (org.samsa.Monitor), the style, and one
 * window on one cluster.
 *
 * @locality GTK main thread */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define SM_TYPE_APPLICATION (sm_application_get_type())
G_DECLARE_FINAL_TYPE(SmApplication, sm_application, SM, APPLICATION, AdwApplication)

/* (transfer full) */
SmApplication *sm_application_new(void);

G_END_DECLS
