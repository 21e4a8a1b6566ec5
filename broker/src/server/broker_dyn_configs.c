/* samsa-broker: the dynamic broker configs this broker read from
 * /config/brokers (cluster_broker_configs.c reads and applies them): looked
 * up by DescribeConfigs and freed at the stop. A leaf: the files that read,
 * describe and stop them all use it. */
#include "cluster/zk_json.h"
#include "server/cluster_wait.h"
#include "server/state.h"

#include <string.h>

const char *br_cluster_dynamic_value(const struct br_server *b, const char *name, int which)
{
    const char *found = NULL;
    for (size_t i = 0; i < b->ca.ndyn[which]; i++) {
        if (strcmp(b->ca.dyn[which][i].key, name) == 0) {
            found = b->ca.dyn[which][i].value; /* the last of repeats, as applied */
        }
    }
    return found;
}

void br_cluster_broker_configs_free(struct br_server *b)
{
    for (int which = 0; which < 2; which++) {
        br_zk_configs_free(b->ca.dyn[which], b->ca.ndyn[which]);
        b->ca.dyn[which] = NULL;
        b->ca.ndyn[which] = 0;
    }
}
