/* sm-partition.c: SmPartition (sm-partition.h). */
#include "sm-partition.h"

#include <string.h>

G_DEFINE_FINAL_TYPE(SmPartition, sm_partition, G_TYPE_OBJECT)

static guint changed_signal;

void sm_partition_emit_changed(SmPartition *self)
{
    g_signal_emit(self, changed_signal, 0);
}

static void sm_partition_finalize(GObject *object)
{
    SmPartition *self = SM_PARTITION(object);
    g_free(self->topic);
    g_free(self->held_by);
    g_array_unref(self->replicas);
    g_array_unref(self->isr);
    g_array_unref(self->target);
    g_free(self->throttled);
    G_OBJECT_CLASS(sm_partition_parent_class)->finalize(object);
}

static void sm_partition_class_init(SmPartitionClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_partition_finalize;
    changed_signal = g_signal_new("changed", SM_TYPE_PARTITION, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                  NULL, G_TYPE_NONE, 0);
}

static void sm_partition_init(SmPartition *self)
{
    self->leader = -1;
    self->leader_epoch = -1;
    self->high_watermark = SM_OFFSET_UNKNOWN;
    self->last_stable_offset = SM_OFFSET_UNKNOWN;
    self->log_start_offset = SM_OFFSET_UNKNOWN;
    self->log_end_offset = SM_OFFSET_UNKNOWN;
    self->size_bytes = SM_OFFSET_UNKNOWN;
    self->view_of = -1;
    self->replicas = g_array_new(FALSE, TRUE, sizeof(SmReplica));
    self->isr = g_array_new(FALSE, TRUE, sizeof(gint32));
    self->target = g_array_new(FALSE, TRUE, sizeof(gint32));
}

gboolean sm_partition_in_isr(const SmPartition *self, gint32 broker)
{
    for (guint i = 0; i < self->isr->len; i++) {
        if (g_array_index(self->isr, gint32, i) == broker) {
            return TRUE;
        }
    }
    return FALSE;
}

gboolean sm_partition_lso_held(const SmPartition *self)
{
    return self->last_stable_offset >= 0 && self->high_watermark >= 0 &&
           self->last_stable_offset < self->high_watermark;
}

char *sm_partition_format_lso(const SmPartition *self)
{
    if (self->last_stable_offset < 0) {
        return g_strdup("—");
    }
    g_autofree char *lso = sm_format_count(self->last_stable_offset);
    if (!sm_partition_lso_held(self)) {
        return g_steal_pointer(&lso);
    }
    return g_strdup_printf("%s (%s)", lso,
                           self->held_by != NULL ? self->held_by : "an open transaction");
}

guint sm_partition_under_replicated(const SmPartition *self)
{
    return self->isr->len < self->replicas->len ? 1 : 0;
}

static char *join_ids(const gint32 *ids, guint n)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        g_string_append_printf(s, i > 0 ? ", %d" : "%d", (int)ids[i]);
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_format_replicas(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->replicas->len; i++) {
        g_string_append_printf(s, i > 0 ? ", %d" : "%d",
                               (int)g_array_index(self->replicas, SmReplica, i).broker);
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_format_isr(const SmPartition *self)
{
    return join_ids((const gint32 *)(const void *)self->isr->data, self->isr->len);
}

char *sm_partition_format_osr(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    gboolean first = TRUE;
    for (guint i = 0; i < self->replicas->len; i++) {
        gint32 b = g_array_index(self->replicas, SmReplica, i).broker;
        if (!sm_partition_in_isr(self, b)) {
            g_string_append_printf(s, first ? "%d" : ", %d", (int)b);
            first = FALSE;
        }
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_format_leos(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->replicas->len; i++) {
        const SmReplica *r = &g_array_index(self->replicas, SmReplica, i);
        g_autofree char *leo =
            r->log_end_offset == SM_OFFSET_UNKNOWN ? g_strdup("—") : sm_format_count(r->log_end_offset);
        g_string_append_printf(s, "%s%d: %s%s", i > 0 ? ", " : "", (int)r->broker, leo,
                               r->offline ? " (offline)" : "");
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_format_behind(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->replicas->len; i++) {
        const SmReplica *r = &g_array_index(self->replicas, SmReplica, i);
        if (r->log_end_offset == SM_OFFSET_UNKNOWN || self->high_watermark == SM_OFFSET_UNKNOWN ||
            r->log_end_offset >= self->high_watermark) {
            continue;
        }
        g_autofree char *n = sm_format_count(self->high_watermark - r->log_end_offset);
        g_string_append_printf(s, "%s%d: %s", s->len > 0 ? ", " : "", (int)r->broker, n);
    }
    return g_string_free(s, FALSE);
}

static gboolean has_id(const GArray *ids, gint32 id)
{
    for (guint i = 0; i < ids->len; i++) {
        if (g_array_index(ids, gint32, i) == id) {
            return TRUE;
        }
    }
    return FALSE;
}

gboolean sm_partition_is_moving(const SmPartition *self)
{
    return self->target->len > 0;
}

gboolean sm_partition_adding(const SmPartition *self, gint32 broker)
{
    return has_id(self->target, broker) && !sm_partition_in_isr(self, broker);
}

gboolean sm_partition_removing(const SmPartition *self, gint32 broker)
{
    return sm_partition_is_moving(self) && !has_id(self->target, broker);
}

char *sm_partition_format_target(const SmPartition *self)
{
    return join_ids((const gint32 *)(const void *)self->target->data, self->target->len);
}

char *sm_partition_format_adding(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->target->len; i++) {
        gint32 b = g_array_index(self->target, gint32, i);
        if (!sm_partition_adding(self, b)) {
            continue;
        }
        g_string_append_printf(s, "%s%d: ", s->len > 0 ? ", " : "", (int)b);
        gint64 leo = SM_OFFSET_UNKNOWN;
        for (guint k = 0; k < self->replicas->len; k++) {
            const SmReplica *r = &g_array_index(self->replicas, SmReplica, k);
            if (r->broker == b) {
                leo = r->log_end_offset;
            }
        }
        gint64 hw = self->high_watermark;
        g_autofree char *hw_text = hw < 0 ? g_strdup("—") : sm_format_count(hw);
        if (leo < 0) {
            g_string_append_printf(s, "— of %s", hw_text);
        } else if (hw >= 0 && leo >= hw) {
            g_string_append(s, "caught up");
        } else {
            g_autofree char *leo_text = sm_format_count(leo);
            g_string_append_printf(s, "%s of %s", leo_text, hw_text);
            if (hw >= 0) {
                g_autofree char *behind = sm_format_count(hw - leo);
                g_string_append_printf(s, " (%s behind)", behind);
            }
        }
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_format_removing(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->replicas->len; i++) {
        gint32 b = g_array_index(self->replicas, SmReplica, i).broker;
        if (sm_partition_removing(self, b)) {
            g_string_append_printf(s, "%s%d", s->len > 0 ? ", " : "", (int)b);
        }
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_format_move(const SmPartition *self)
{
    if (!sm_partition_is_moving(self)) {
        return g_strdup("");
    }
    g_autofree char *target = sm_partition_format_target(self);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "to %s", target);
    GString *adding = g_string_new(NULL);
    for (guint i = 0; i < self->target->len; i++) {
        gint32 b = g_array_index(self->target, gint32, i);
        if (sm_partition_adding(self, b)) {
            g_string_append_printf(adding, "%s%d", adding->len > 0 ? ", " : "", (int)b);
        }
    }
    g_autofree char *removing = sm_partition_format_removing(self);
    const char *sep = ": ";
    if (adding->len > 0) {
        g_string_append_printf(s, "%sadding %s", sep, adding->str);
        sep = ", ";
    }
    if (removing[0] != '\0') {
        g_string_append_printf(s, "%sremoving %s", sep, removing);
    }
    g_string_free(adding, TRUE);
    return g_string_free(s, FALSE);
}

char *sm_partition_describe_replica(const SmPartition *self, guint i)
{
    g_return_val_if_fail(i < self->replicas->len, NULL);
    const SmReplica *r = &g_array_index(self->replicas, SmReplica, i);
    gboolean in_isr = sm_partition_in_isr(self, r->broker);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "replica %d: ", (int)r->broker);
    if (r->broker == self->leader) {
        g_string_append(s, "leader, ");
    }
    if (r->offline) {
        g_string_append(s, "offline, ");
    }
    if (sm_partition_adding(self, r->broker)) {
        g_string_append(s, "being added, ");
    } else if (sm_partition_removing(self, r->broker)) {
        g_string_append(s, "being removed, ");
    }
    g_string_append(s, in_isr ? "in sync" : "out of sync");
    if (r->log_end_offset == SM_OFFSET_UNKNOWN || self->high_watermark == SM_OFFSET_UNKNOWN) {
        g_string_append(s, ", log end offset unknown");
    } else {
        gint64 d = self->high_watermark - r->log_end_offset;
        g_autofree char *n = sm_format_count(d < 0 ? -d : d);
        if (r->last_known) {
            g_string_append(s, ", last known");
        }
        if (d > 0) {
            g_string_append_printf(s, ", %s behind the high watermark", n);
        } else if (d < 0) {
            g_string_append_printf(s, ", %s ahead of the high watermark", n);
        } else {
            g_string_append(s, ", at the high watermark");
        }
    }
    return g_string_free(s, FALSE);
}

char *sm_partition_describe(const SmPartition *self)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->replicas->len; i++) {
        g_autofree char *one = sm_partition_describe_replica(self, i);
        if (i > 0) {
            g_string_append(s, "; ");
        }
        g_string_append(s, one);
    }
    return g_string_free(s, FALSE);
}
