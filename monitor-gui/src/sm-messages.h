/* sm-messages.h: the message browser's reading: records of one partition
 * read over the Kafka protocol with libsamsa's public API
 * (client/include/samsa/samsa.h), not through the admin API, on a worker
 * thread: the latest N, N from an offset, or N from the first record at or
 * after a time (ListOffsets, as kafka-console-consumer's --offset and
 * kcat's -o s@TIME do). No group: the partition is assigned, nothing is
 * committed.
 *
 * @locality sm_messages_read_async and _finish on the owner's thread; the
 * reading on a worker */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
    SM_FROM_LATEST, /* the last N before the high watermark */
    SM_FROM_OFFSET, /* N from an offset */
    SM_FROM_TIME,   /* N from the first at or after a time (ms since the epoch) */
} SmFrom;

#define SM_MESSAGES_MAX 1000 /* records read at once */

/* One record as people read it: key, value and headers as text (UTF-8
 * as it is, other bytes as \xNN, cut at 1,000 characters), "null" for a
 * null key or value. */
#define SM_TYPE_MESSAGE (sm_message_get_type())
G_DECLARE_FINAL_TYPE(SmMessage, sm_message, SM, MESSAGE, GObject)

struct _SmMessage {
    GObject parent_instance;
    gint32 partition;
    gint64 offset;
    gint64 timestamp_ms;
    char *key;
    char *value;
    char *headers; /* "trace=abc, source=web"; "" when none */
};

/* reads n (1 to SM_MESSAGES_MAX) records of topic's partition through the
 * brokers at bootstrap ("host:port,host:port"); at is the offset or the
 * time for SM_FROM_OFFSET and SM_FROM_TIME */
void sm_messages_read_async(const char *bootstrap, const char *topic, gint32 partition,
                            SmFrom from, gint64 at, guint n, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data);
/* (transfer full) a GListStore of SmMessage, oldest first (maybe empty);
 * NULL with error set when the partition could not be read */
GListStore *sm_messages_read_finish(GAsyncResult *result, GError **error);

G_END_DECLS
