/* samsa-broker: appends waiting for the ISR (delayed_produce.h). */
#include "replica/delayed_produce.h"

static bool ready(void *ctx, struct br_delayed *d)
{
    (void)ctx;
    const struct br_delayed_produce *dp = d->owner;
    return br_delayed_produce_settled(dp);
}

static void complete(void *ctx, struct br_delayed *d, bool expired)
{
    (void)ctx;
    struct br_delayed_produce *dp = d->owner;
    dp->done(dp, expired);
}

static const struct br_delayed_ops delayed_produce_ops = {
    .name = "appends waiting for the ISR",
    .ready = ready,
    .complete = complete,
};

void br_delayed_produce_init(struct br_delayed_produce *dp, struct br_append_wait *waits,
                             struct br_delay_link *links, size_t n, br_delayed_produce_done done,
                             void *owner)
{
    dp->waits = waits;
    dp->links = links;
    dp->nwaits = n;
    dp->done = done;
    dp->owner = owner;
    br_delayed_init(&dp->delayed, &delayed_produce_ops, dp, links, n);
}

bool br_delayed_produce_settled(const struct br_delayed_produce *dp)
{
    for (size_t i = 0; i < dp->nwaits; i++) {
        const struct br_append_wait *w = &dp->waits[i];
        if (!br_partition_append_settled(w->p, w->required, w->term)) {
            return false;
        }
    }
    return true;
}

void br_delayed_produce_park(struct br_purgatory *pg, struct br_delayed_produce *dp,
                             int64_t deadline_ms)
{
    for (size_t i = 0; i < dp->nwaits; i++) {
        br_delayed_watch(&dp->delayed, i, &dp->waits[i].p->delayed);
    }
    br_purgatory_park(pg, &dp->delayed, deadline_ms);
}

void br_delayed_produce_cancel(struct br_purgatory *pg, struct br_delayed_produce *dp)
{
    br_purgatory_cancel(pg, &dp->delayed);
}
