/* sm-member.c: SmMember (sm-member.h). */
#include "sm-member.h"

G_DEFINE_FINAL_TYPE(SmMember, sm_member, G_TYPE_OBJECT)

static void sm_member_finalize(GObject *object)
{
    SmMember *self = SM_MEMBER(object);
    g_free(self->member_id);
    g_free(self->client_id);
    g_free(self->host);
    g_free(self->assignment);
    G_OBJECT_CLASS(sm_member_parent_class)->finalize(object);
}

static void sm_member_class_init(SmMemberClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_member_finalize;
}

static void sm_member_init(SmMember *self)
{
    (void)self;
}
