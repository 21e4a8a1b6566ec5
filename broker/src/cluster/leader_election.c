/* samsa-broker: the controller's leader elections, pure (see
 * leader_election.h). */
#include "cluster/leader_election.h"

static bool has(const int32_t *ids, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == id) {
            return true;
        }
    }
    return false;
}

/* The first assigned replica that is live, in the ISR when `in_isr`, and not
 * shutting down when `not_shutting`. */
static int32_t first_assigned(const struct br_election *e, bool in_isr, bool not_shutting)
{
    for (size_t i = 0; i < e->nassignment; i++) {
        int32_t id = e->assignment[i];
        if (has(e->live, e->nlive, id) && (!in_isr || has(e->isr, e->nisr, id)) &&
            (!not_shutting || !has(e->shutting, e->nshutting, id))) {
            return id;
        }
    }
    return BR_NO_LEADER;
}

int32_t br_elect_offline(const struct br_election *e, bool unclean, bool *was_unclean)
{
    *was_unclean = false;
    int32_t leader = first_assigned(e, true, true);
    if (leader == BR_NO_LEADER) {
        leader = first_assigned(e, true, false);
    }
    if (leader == BR_NO_LEADER && unclean) {
        leader = first_assigned(e, false, false);
        *was_unclean = leader != BR_NO_LEADER;
    }
    return leader;
}

int32_t br_elect_controlled_shutdown(const struct br_election *e)
{
    return first_assigned(e, true, true);
}

int32_t br_elect_preferred(const struct br_election *e)
{
    if (e->nassignment == 0) {
        return BR_NO_LEADER;
    }
    int32_t id = e->assignment[0];
    return has(e->live, e->nlive, id) && has(e->isr, e->nisr, id) ? id : BR_NO_LEADER;
}
