/* samsa-broker: Kafka's rack-unaware replica assignment (see
 * assignment.h). */
#include "cluster/assignment.h"

static size_t replica_index(size_t first, size_t shift, size_t j, size_t n)
{
    size_t s = 1 + (shift + j) % (n - 1);
    return (first + s) % n;
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
        size_t p = (size_t)first_partition + (size_t)i;
        /* Kafka's rule: the shift grows at each multiple of n reached
         * after the first partition placed */
        if (p > 0 && p % n == 0) {
            next_shift++;
        }
        size_t first = (p + start_index) % n;
        int32_t *row = &out[(size_t)i * (size_t)rf];
        row[0] = brokers[first];
        for (int32_t j = 0; j < rf - 1; j++) {
            row[j + 1] = brokers[replica_index(first, next_shift, (size_t)j, n)];
        }
    }
    return 0;
}
