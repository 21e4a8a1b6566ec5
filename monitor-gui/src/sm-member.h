/* sm-member.h: one member of a consumer group, as /v1/groups/{g}'s
 * member_list shows it: a row of the groups page's members list. Written by
 * SmCluster (sm-cluster.c) only, replaced with the group's document.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SM_TYPE_MEMBER (sm_member_get_type())
G_DECLARE_FINAL_TYPE(SmMember, sm_member, SM, MEMBER, GObject)

struct _SmMember {
    GObject parent_instance;
    char *member_id;
    char *client_id;
    char *host;       /* the broker's client_host, "/127.0.0.1" */
    char *assignment; /* "orders-0, orders-1" (at most 64 named, then "… (N)") */
    guint assigned;   /* partitions assigned */
};

G_END_DECLS
