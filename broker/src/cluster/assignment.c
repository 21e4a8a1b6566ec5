/* samsa-broker: Kafka's replica assignment, rack-unaware and rack-aware
 * (see assignment.h). */
#include "cluster/assignment.h"

#include <samsa-protocol/alloc.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static size_t replica_index(size_t first, size_t shift, size_t j, size_t n)
{
    size_t s = 1 + (shift + j) % (n - 1);
    return (first + s) % n;
}

/* Kafka's walk over the partitions: partition p's first replica (an index
 * of the n brokers), the shift grown at each multiple of n reached after
 * the first partition placed. */
static size_t first_replica(size_t p, size_t start_index, size_t n, size_t *next_shift)
{
    if (p > 0 && p % n == 0) {
        (*next_shift)++;
    }
    return (p + start_index) % n;
}

int br_assign_replicas(const int32_t *brokers, size_t n, int32_t partitions, int32_t rf,
                       uint32_t start, uint32_t shift, int32_t *out)
{
    return br_assign_replicas_from(brokers, n, 0, partitions, rf, start, shift, out);
}

int br_assign_replicas_from(const int32_t *brokers, size_t n, int32_t first_partition,
                            int32_t partitions, int32_t rf, uint32_t start, uint32_t shift,
                            int32_t *out)
{
    if (n == 0 || partitions < 1 || rf < 1 || (size_t)rf > n || first_partition < 0) {
        return KP_E_INVALID_ARG;
    }
    size_t start_index = start % n;
    size_t next_shift = shift % n;
    for (int32_t i = 0; i < partitions; i++) {
        size_t first =
            first_replica((size_t)first_partition + (size_t)i, start_index, n, &next_shift);
        int32_t *row = &out[(size_t)i * (size_t)rf];
        row[0] = brokers[first];
        for (int32_t j = 0; j < rf - 1; j++) {
            row[j + 1] = brokers[replica_index(first, next_shift, (size_t)j, n)];
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- racks */

struct rack_slot {
    int32_t id;
    const char *rack;
};

static int cmp_rack_slot(const void *a, const void *b)
{
    const struct rack_slot *x = a;
    const struct rack_slot *y = b;
    int c = strcmp(x->rack, y->rack);
    return c != 0 ? c : (x->id > y->id) - (x->id < y->id);
}

/* Kafka's getRackAlternatedBrokerList: the racks in order, each one's
 * brokers ascending, taken one per rack in turn (rack1: 0,1,2 and rack2:
 * 3,4,5 give 0,3,1,4,2,5). by_rack: sorted by (rack, id); out_ids and
 * out_rack (the rack's index) of n each. Returns the number of racks. */
static size_t rack_alternated(const struct rack_slot *by_rack, size_t n, size_t *group_start,
                              int32_t *out_ids, size_t *out_rack)
{
    size_t nracks = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(by_rack[i].rack, by_rack[i - 1].rack) != 0) {
            group_start[nracks++] = i;
        }
    }
    group_start[nracks] = n;
    size_t k = 0;
    for (size_t round = 0; k < n; round++) {
        for (size_t g = 0; g < nracks; g++) {
            if (group_start[g] + round < group_start[g + 1]) {
                out_ids[k] = by_rack[group_start[g] + round].id;
                out_rack[k] = g;
                k++;
            }
        }
    }
    return nracks;
}

int br_assign_replicas_racks(const int32_t *brokers, const char *const *racks, size_t n,
                             int32_t first_partition, int32_t partitions, int32_t rf,
                             uint32_t start, uint32_t shift, int32_t *out)
{
    size_t with_rack = 0;
    for (size_t i = 0; racks != NULL && i < n; i++) {
        with_rack += racks[i] != NULL ? 1 : 0;
    }
    if (with_rack == 0) {
        return br_assign_replicas_from(brokers, n, first_partition, partitions, rf, start, shift,
                                       out);
    }
    if (n == 0 || partitions < 1 || rf < 1 || (size_t)rf > n || first_partition < 0) {
        return KP_E_INVALID_ARG;
    }
    if (with_rack != n) {
        return BR_ASSIGN_RACKS_INCOMPLETE;
    }
    struct rack_slot *by_rack = kp_calloc(n, sizeof *by_rack);
    size_t *group_start = kp_calloc(n + 1, sizeof *group_start);
    int32_t *ids = kp_calloc(n, sizeof *ids);
    size_t *rack_of = kp_calloc(n, sizeof *rack_of);
    bool *rack_used = kp_calloc(n, sizeof *rack_used);
    bool *broker_used = kp_calloc(n, sizeof *broker_used);
    int rc = KP_E_NOMEM;
    if (by_rack == NULL || group_start == NULL || ids == NULL || rack_of == NULL ||
        rack_used == NULL || broker_used == NULL) {
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        by_rack[i] = (struct rack_slot){brokers[i], racks[i]};
    }
    qsort(by_rack, n, sizeof *by_rack, cmp_rack_slot);
    size_t nracks = rack_alternated(by_rack, n, group_start, ids, rack_of);
    size_t start_index = start % n;
    size_t next_shift = shift % n;
    for (int32_t i = 0; i < partitions; i++) {
        size_t first =
            first_replica((size_t)first_partition + (size_t)i, start_index, n, &next_shift);
        int32_t *row = &out[(size_t)i * (size_t)rf];
        memset(rack_used, 0, n * sizeof *rack_used);
        memset(broker_used, 0, n * sizeof *broker_used);
        row[0] = ids[first];
        rack_used[rack_of[first]] = true;
        broker_used[first] = true;
        size_t racks_with = 1;
        size_t brokers_with = 1;
        size_t k = 0;
        for (int32_t j = 1; j < rf; j++) {
            /* AdminUtils.assignReplicasToBrokersRackAware: a broker is
             * skipped while its rack has a replica and another rack has
             * none, or while it has one and another broker has none */
            for (;; k++) {
                size_t at = replica_index(first, next_shift * nracks, k, n);
                size_t g = rack_of[at];
                if ((!rack_used[g] || racks_with == nracks) &&
                    (!broker_used[at] || brokers_with == n)) {
                    row[j] = ids[at];
                    racks_with += rack_used[g] ? 0 : 1;
                    brokers_with += broker_used[at] ? 0 : 1;
                    rack_used[g] = true;
                    broker_used[at] = true;
                    k++;
                    break;
                }
            }
        }
    }
    rc = 0;
out:
    kp_free(by_rack);
    kp_free(group_start);
    kp_free(ids);
    kp_free(rack_of);
    kp_free(rack_used);
    kp_free(broker_used);
    return rc;
}
