/* sm-series.h: a bounded series of readings over time (the charts'
 * and the lag history's), the rates and totals a broker's readings give, and
 * numbers formatted for people.
 * Plain C: no GObject.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SM_OFFSET_UNKNOWN ((gint64)-1)

/* A bounded series of readings over time, for the charts: the last
 * SM_SERIES_MAX points, each the value over an interval of the broker's
 * clock (snapshot.taken_ms), so that a chart's span is the brokers' time,
 * not the monitor's arrival times. A point not known is a gap: a counter
 * that went down (a restart, a deleted topic), no rate for that interval. */
#define SM_SERIES_MAX 120

typedef struct {
    gint64 from_ms; /* the interval the value stands for */
    gint64 to_ms;
    double value;
    gboolean known;
} SmPoint;

typedef struct {
    SmPoint points[SM_SERIES_MAX]; /* a ring */
    guint head;                    /* where the next point goes */
    guint n;
} SmSeries;

void sm_series_push(SmSeries *s, gint64 from_ms, gint64 to_ms, double value, gboolean known);
/* (transfer none) point i, 0 the oldest; NULL past the newest */
const SmPoint *sm_series_get(const SmSeries *s, guint i);
/* (transfer none) the newest point, NULL when empty */
const SmPoint *sm_series_last(const SmSeries *s);
/* the newest point replaced (the same round of readings); pushed when empty */
void sm_series_replace_last(SmSeries *s, gint64 from_ms, gint64 to_ms, double value);
/* the largest known value, 0 when none */
double sm_series_peak(const SmSeries *s);
/* from the oldest point's start to the newest's end, 0 when empty */
gint64 sm_series_span_ms(const SmSeries *s);
/* "45 s", "2 minutes", "3 hours": a span for people (caller frees) */
char *sm_format_span(gint64 ms);

typedef enum {
    SM_UNIT_PER_S,       /* "1,204/s" */
    SM_UNIT_BYTES_PER_S, /* "1.2 MB/s" */
    SM_UNIT_COUNT,       /* "1,204" */
} SmUnit;

/* a value for people, "1.2 MB/s" (caller frees) */
char *sm_format_value(double value, SmUnit unit);
/* the newest value, "—" when none or a gap (caller frees) */
char *sm_series_format_last(const SmSeries *s, SmUnit unit);
/* a chart's accessible label: "bytes in: 1.2 MB/s over the last 2
 * minutes, peak 3.4 MB/s", "bytes in: no readings yet", or when the
 * newest point is a gap "bytes in: no rate for the last reading (a counter
 * went down), peak 3.4 MB/s over the last 2 minutes" ("the broker is not
 * heard" when the gap has no length: sm_cluster_broker_unheard) (caller
 * frees) */
char *sm_series_describe(const SmSeries *s, const char *title, SmUnit unit);

/* messages in, bytes in and bytes out a second, per broker and for the
 * cluster (broker/README.md: /v1/brokers/{id}'s totals) */
typedef struct {
    SmSeries messages_in;
    SmSeries bytes_in;
    SmSeries bytes_out;
} SmRates;

/* a broker's last reading of its own totals: cumulative since it started */
typedef struct {
    gint64 taken_ms; /* the broker's clock; 0: no reading yet */
    gint64 started_ms;
    gint64 messages_in;
    gint64 bytes_in;
    gint64 bytes_out;
} SmTotals;

/* "1,204": offsets and counts for people (caller frees) */
char *sm_format_count(gint64 n);

G_END_DECLS
