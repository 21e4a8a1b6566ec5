/* samsa-broker: the controller's topic deletion decisions, pure (see
 * topic_deletion.h). */
#include "cluster/topic_deletion.h"

static bool has(const int32_t *ids, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == id) {
            return true;
        }
    }
    return false;
}

size_t br_deletion_replica_count(const struct br_deletion_replicas *parts, int32_t nparts)
{
    size_t n = 0;
    for (int32_t p = 0; p < nparts; p++) {
        n += parts[p].n > 0 ? (size_t)parts[p].n : 0;
    }
    return n;
}

size_t br_deletion_brokers(const struct br_deletion_replicas *parts, int32_t nparts, int32_t *out)
{
    size_t n = 0;
    for (int32_t p = 0; p < nparts; p++) {
        for (int32_t r = 0; r < parts[p].n; r++) {
            if (!has(out, n, parts[p].ids[r])) {
                out[n++] = parts[p].ids[r];
            }
        }
    }
    return n;
}

int32_t br_deletion_partitions_of(const struct br_deletion_replicas *parts, int32_t nparts,
                                  int32_t broker, int32_t *out)
{
    int32_t n = 0;
    for (int32_t p = 0; p < nparts; p++) {
        if (parts[p].n > 0 && has(parts[p].ids, (size_t)parts[p].n, broker)) {
            out[n++] = p;
        }
    }
    return n;
}

void br_deletion_resume(struct br_deletion_progress *p, const int32_t *live, size_t nlive,
                        struct br_deletion_step *out)
{
    out->nask = 0;
    out->nwaits = 0;
    out->done = true;
    for (size_t k = 0; k < p->n; k++) {
        if (p->state[k] == DEL_DONE) {
            continue;
        }
        out->done = false;
        if (p->state[k] == DEL_STARTED) {
            continue; /* its answer is awaited */
        }
        if (!has(live, nlive, p->brokers[k])) {
            if (p->state[k] != DEL_INELIGIBLE) {
                out->waits[out->nwaits++] = p->brokers[k];
            }
            p->state[k] = DEL_INELIGIBLE;
            continue;
        }
        p->state[k] = DEL_STARTED;
        out->ask[out->nask++] = p->brokers[k];
    }
}

size_t br_deletion_answer(struct br_deletion_progress *p, uint64_t answer_gen, int32_t broker,
                          bool ok)
{
    if (answer_gen != p->gen) {
        return 0;
    }
    size_t changed = 0;
    for (size_t k = 0; k < p->n; k++) {
        if (p->brokers[k] == broker && p->state[k] == DEL_STARTED) {
            p->state[k] = ok ? DEL_DONE : DEL_INELIGIBLE;
            changed++;
        }
    }
    return changed;
}

void br_deletion_lost_broker(struct br_deletion_progress *p, int32_t broker)
{
    for (size_t k = 0; k < p->n; k++) {
        if (p->brokers[k] == broker && p->state[k] == DEL_STARTED) {
            p->state[k] = DEL_INELIGIBLE;
        }
    }
}
