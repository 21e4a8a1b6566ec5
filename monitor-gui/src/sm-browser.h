/* sm-browser.h: the Messages page: the records of one partition of a
 * topic, the latest N, N from an offset or N from a time, with their key,
 * value and headers (sm-messages.h reads them with libsamsa, off the UI
 * thread). The brokers are the cluster's alive ones (host:port from
 * /v1/cluster).
 *
 * @locality GTK main thread */
#pragma once

#include <gtk/gtk.h>

#include "sm-cluster.h"
#include "sm-messages.h"

G_BEGIN_DECLS

#define SM_TYPE_BROWSER (sm_browser_get_type())
G_DECLARE_FINAL_TYPE(SmBrowser, sm_browser, SM, BROWSER, GtkBox)

/* (transfer floating) a browser of cluster's topics (the construct-only
 * property "cluster", referenced) */
GtkWidget *sm_browser_new(SmCluster *cluster);
/* reads as the Read button does, with these choices shown; at is parsed
 * as the page's entry is: an offset, or a time as ISO 8601 (local time
 * when no zone is given) or milliseconds since the epoch */
void sm_browser_read(SmBrowser *self, const char *topic, gint32 partition, SmFrom from,
                     const char *at, guint n);
/* (transfer none) "20 records of orders-0 from offset 4,980", "reading …",
 * or why it failed */
const char *sm_browser_get_status(SmBrowser *self);

G_END_DECLS
