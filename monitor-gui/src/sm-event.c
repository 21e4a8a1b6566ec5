/* sm-event.c: SmEvent (sm-event.h). */
#include "sm-event.h"

#include <string.h>

G_DEFINE_FINAL_TYPE(SmEvent, sm_event, G_TYPE_OBJECT)

static guint changed_signal;

void sm_event_emit_changed(SmEvent *self)
{
    g_signal_emit(self, changed_signal, 0);
}

static void sm_event_finalize(GObject *object)
{
    SmEvent *self = SM_EVENT(object);
    g_free(self->topic);
    g_free(self->text);
    g_clear_object(&self->children);
    G_OBJECT_CLASS(sm_event_parent_class)->finalize(object);
}

static void sm_event_class_init(SmEventClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_event_finalize;
    changed_signal = g_signal_new("changed", SM_TYPE_EVENT, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                  G_TYPE_NONE, 0);
}

static void sm_event_init(SmEvent *self)
{
    self->partition = -1;
    self->subject = -1;
}

const char *sm_event_kind_name(SmEventKind kind)
{
    switch (kind) {
    case SM_EVENT_ISR_SHRINK:
        return "ISR shrink";
    case SM_EVENT_ISR_EXPAND:
        return "ISR expand";
    case SM_EVENT_ISR_CHANGE:
        return "ISR change";
    case SM_EVENT_LEADER_CHANGE:
        return "leader change";
    case SM_EVENT_BROKER_DOWN:
        return "broker gone";
    case SM_EVENT_BROKER_UP:
        return "broker up";
    case SM_EVENT_CONTROLLER_CHANGE:
        return "controller change";
    case SM_EVENT_TOPIC_CREATED:
        return "topic created";
    case SM_EVENT_TOPIC_DELETED:
        return "topic deleted";
    case SM_EVENT_GROUP_LOST:
        return "broker lost";
    case SM_EVENT_GROUP_BACK:
        return "broker back";
    }
    return "event";
}

gboolean sm_event_is_alert(const SmEvent *self)
{
    return self->kind == SM_EVENT_ISR_SHRINK || self->kind == SM_EVENT_BROKER_DOWN ||
           self->kind == SM_EVENT_LEADER_CHANGE;
}

/* "12 leader changes": a kind's count in a group's text */
static void append_count(GString *s, guint n, const char *one, const char *many)
{
    if (n == 0) {
        return;
    }
    g_string_append(s, s->str[s->len - 1] == ':' ? " " : ", ");
    if (many == NULL) {
        g_string_append(s, one); /* "gone", "up": once */
    } else {
        g_string_append_printf(s, "%u %s", n, n == 1 ? one : many);
    }
}

static void group_text(SmEvent *g)
{
    GString *s = g_string_new(NULL);
    gboolean lost = g->kind == SM_EVENT_GROUP_LOST;
    g_string_append_printf(s, "broker %d %s:", (int)g->subject, lost ? "lost" : "back");
    append_count(s, g->counts[SM_EVENT_BROKER_DOWN], "gone", NULL);
    append_count(s, g->counts[SM_EVENT_BROKER_UP], "up", NULL);
    append_count(s, g->counts[SM_EVENT_LEADER_CHANGE], "leader change", "leader changes");
    append_count(s, g->counts[SM_EVENT_ISR_SHRINK], "ISR shrink", "ISR shrinks");
    append_count(s, g->counts[SM_EVENT_ISR_EXPAND], "ISR expansion", "ISR expansions");
    append_count(s, g->counts[SM_EVENT_ISR_CHANGE], "ISR change", "ISR changes");
    g_free(g->text);
    g->text = g_string_free(s, FALSE);
}

SmEvent *sm_event_new_group(gint32 subject, gboolean lost, SmEvent *first)
{
    SmEvent *g = g_object_new(SM_TYPE_EVENT, NULL);
    g->kind = lost ? SM_EVENT_GROUP_LOST : SM_EVENT_GROUP_BACK;
    g->subject = subject;
    g->time_ms = first->time_ms;
    g->reported_by = first->reported_by;
    g->children = g_list_store_new(SM_TYPE_EVENT);
    sm_event_group_add(g, first);
    return g;
}

void sm_event_group_add(SmEvent *group, SmEvent *child)
{
    g_return_if_fail(sm_event_is_group(group) && !sm_event_is_group(child));
    g_list_store_insert(group->children, 0, child);
    guint n = g_list_model_get_n_items(G_LIST_MODEL(group->children));
    if (n > SM_EVENT_GROUP_MAX) {
        g_list_store_remove(group->children, n - 1);
    }
    group->counts[child->kind]++;
    group_text(group);
}

gboolean sm_event_is_group(const SmEvent *self)
{
    return self->children != NULL;
}

static gboolean text_holds(const char *text, const char *needle)
{
    g_autofree char *folded = g_utf8_casefold(text != NULL ? text : "", -1);
    return strstr(folded, needle) != NULL;
}

gboolean sm_event_matches(const SmEvent *self, const char *needle)
{
    if (needle == NULL || *needle == '\0') {
        return TRUE;
    }
    g_autofree char *folded = g_utf8_casefold(needle, -1);
    if (text_holds(self->text, folded)) {
        return TRUE;
    }
    guint n = self->children != NULL ? g_list_model_get_n_items(G_LIST_MODEL(self->children)) : 0;
    for (guint i = 0; i < n; i++) {
        g_autoptr(SmEvent) c = g_list_model_get_item(G_LIST_MODEL(self->children), i);
        if (text_holds(c->text, folded)) {
            return TRUE;
        }
    }
    return FALSE;
}
