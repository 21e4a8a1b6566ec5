/*
 * samsa-broker: the functions the group coordinator's files share
 * (group_table.c: the groups table, the timers and the waiters;
 * members.c: members, pending member ids and the state machine;
 * coordinator.c: the lifecycle and the events members send). Calls go one
 * way: coordinator.c -> members.c -> group_table.c. Not for the
 * coordinator's users: they include group.h.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_GROUP_COORDINATOR_INTERNAL_H
#define SAMSA_BROKER_GROUP_COORDINATOR_INTERNAL_H

#include "group/group.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* group_table.c */
void grp_answer_join_waiter(struct br_groups *gs, struct grp_member *m, int err);
void grp_answer_sync_waiter(struct br_groups *gs, struct grp_member *m, int err,
                            const uint8_t *assignment, int32_t len);
char *grp_dup_mem(const void *p, size_t n);
uint64_t grp_fnv1a(const char *s, size_t len);
bool grp_kstr_is(struct kp_str a, const char *s);
void grp_member_answer_waiters(struct br_groups *gs, struct grp_member *m, int err);
int64_t grp_now_mono(const struct br_groups *gs);
void grp_set_state(struct br_groups *gs, struct grp_group *g, enum grp_state s);
int grp_table_grow(struct br_groups *gs);
void grp_timer_arm(struct br_groups *gs, struct grp_timer *t, int64_t deadline_ms);
void grp_timer_cancel(struct br_groups *gs, struct grp_timer *t);
void grp_timer_init(struct br_groups *gs, struct grp_timer *t, enum grp_timer_kind kind, void *obj);

/* members.c */
void grp_check_join_complete(struct br_groups *gs, struct grp_group *g);
void grp_heartbeat_reset(struct br_groups *gs, struct grp_member *m);
void grp_join_timer_fired(struct br_groups *gs, struct grp_group *g);
char *grp_make_member_id(struct br_groups *gs, struct kp_str client_id);
void grp_maybe_prepare_rebalance(struct br_groups *gs, struct grp_group *g, const char *reason);
struct grp_member *grp_member_by_instance(struct grp_group *g, struct kp_str iid);
void grp_member_free(struct br_groups *gs, struct grp_member *m);
bool grp_member_matches(const struct grp_member *m, const struct grp_join_req *q);
void grp_member_remove(struct br_groups *gs, struct grp_group *g, struct grp_member *m, int err);
void grp_member_set_assignment(struct grp_member *m, uint8_t *a, int32_t len);
int grp_member_set_protocols(struct grp_member *m, const struct grp_join_req *q);
int grp_pending_add(struct br_groups *gs, struct grp_group *g, char *id, int64_t deadline);
bool grp_pending_take(struct br_groups *gs, struct grp_group *g, struct kp_str id);
void grp_remove_member_and_update(struct br_groups *gs, struct grp_group *g, struct grp_member *m,
                                  const char *reason);
void grp_session_expired(struct br_groups *gs, struct grp_member *m);
void grp_store_done(struct br_groups *gs, struct grp_group *g, int err);

#endif
