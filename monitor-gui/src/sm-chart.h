/* sm-chart.h: a series (sm-items.h's SmSeries) drawn as columns over time,
 * the newest on the right, one slot per point of the series' capacity, so
 * a chart fills from the right as readings come. Gaps (a counter reset) are
 * left empty. Full size it has its title and newest value above the
 * columns and a line at the peak; as a sparkline (a row's cell) only the
 * columns. Role img, its accessible label (and tooltip) in words: "bytes
 * in: 1.2 MB/s over the last 2 minutes, peak 3.4 MB/s". Colours follow the
 * light or dark style.
 *
 * The series is borrowed from its owner (an SmBroker, SmGroup or the
 * SmCluster), which the chart references while it shows it, and the chart
 * is drawn again on the owner's signal ("changed" on a row, "flushed" on
 * the cluster).
 *
 * @locality GTK main thread */
#pragma once

#include <gtk/gtk.h>

#include "sm-items.h"

G_BEGIN_DECLS

typedef enum {
    SM_CHART_MESSAGES_IN,
    SM_CHART_BYTES_IN,
    SM_CHART_BYTES_OUT,
    SM_CHART_LAG,
} SmChartKind;

#define SM_TYPE_CHART (sm_chart_get_type())
G_DECLARE_FINAL_TYPE(SmChart, sm_chart, SM, CHART, GtkWidget)

/* (transfer full) */
GtkWidget *sm_chart_new(SmChartKind kind, gboolean sparkline);
/* shows series, owned by owner (referenced), redrawn on owner's signal;
 * owner NULL: none ("no readings yet") */
void sm_chart_set_series(SmChart *self, GObject *owner, const char *signal,
                         const SmSeries *series);
/* what the label starts with: "messages in" by default, "lag of billing" */
void sm_chart_set_title(SmChart *self, const char *title);
SmChartKind sm_chart_get_kind(SmChart *self);
/* (transfer none) the accessible label */
const char *sm_chart_get_description(SmChart *self);

G_END_DECLS
