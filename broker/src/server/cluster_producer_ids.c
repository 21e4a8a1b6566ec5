/* samsa-broker: producer ids of a cluster, unique across its brokers:
 * blocks of 1000 claimed by a conditional write of
 * /latest_producer_id_block, as Kafka 2.0's ProducerIdManager claims them
 * (see request.h, cluster_wait.h). */
#define _GNU_SOURCE

#include "base/logging.h"
#include "cluster/zk_json.h"
#include "server/cluster_wait.h"
#include "server/topic_admin.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define BLOCK_PATH "/latest_producer_id_block"
/* ProducerIdManager.PidBlockSize */
#define BLOCK_SIZE 1000
/* Claims lost to other brokers in a row before the waiting requests are
 * answered with an error (Kafka's loop has no end). */
#define MAX_ATTEMPTS 20

static void claim(struct br_server *b);

/* Ids to the InitProducerId requests waiting, as far as the block goes. */
static void hand_out(struct br_server *b, int code)
{
    bool waiting = false;
    for (struct br_cwait *w = b->ca.cwaits; w != NULL;) {
        struct br_cwait *next = w->next;
        if (w->api_key == KP_API_INIT_PRODUCER_ID && w->n == 1 && w->e[0].pending) {
            if (code != 0) {
                br_cwait_done(w, 0, code, NULL);
            } else if (b->pids.zk_next < b->pids.zk_end) {
                w->producer_id = b->pids.zk_next++;
                br_cwait_done(w, 0, 0, NULL);
            } else {
                waiting = true;
            }
        }
        w = next;
    }
    if (waiting) {
        claim(b); /* more requests than the block had ids */
    }
}

static void claim_failed(struct br_server *b, const char *why)
{
    br_error("claiming a block of producer ids in %s: %s", BLOCK_PATH, why);
    b->pids.zk_claiming = false;
    hand_out(b, KP_ERR_COORDINATOR_NOT_AVAILABLE);
}

static void block_read(struct br_zk_call *call, const struct br_zk_result *r);

static int read_block(struct br_cop *op)
{
    op->call.done = block_read;
    if (!br_cluster_zk_alive(op->b)) {
        return -1;
    }
    return br_zk_get(op->b->zk, BLOCK_PATH, false, br_zk_call_tag(&op->call));
}

static void won(struct br_cop *op)
{
    struct br_server *b = op->b;
    b->pids.zk_next = op->block_start;
    b->pids.zk_end = op->block_end + 1;
    b->pids.zk_claiming = false;
    br_info("producer ids %" PRId64 "-%" PRId64 " claimed in %s", op->block_start, op->block_end,
            BLOCK_PATH);
    br_cop_free(op);
    hand_out(b, 0);
}

static void block_written(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    if (r->rc == BR_ZK_OK) {
        won(op);
        return;
    }
    if (r->rc == BR_ZK_CONNECTIONLOSS && ++op->attempts < MAX_ATTEMPTS) {
        /* the answer lost: ZooKeeper may have applied the claim. Read back
         * once reconnected: the block is this broker's only when the znode
         * holds exactly what was written (Kafka 2.0's ProducerIdManager
         * checks its conditional update with checkProducerIdBlockZkData);
         * otherwise the next block is claimed, never this one again */
        op->written_unknown = true;
        if (read_block(op) == 0) {
            return;
        }
    }
    if ((r->rc == BR_ZK_BADVERSION || r->rc == BR_ZK_NODEEXISTS) && ++op->attempts < MAX_ATTEMPTS) {
        /* another broker claimed the block first: the next one */
        if (read_block(op) == 0) {
            return;
        }
    }
    br_cop_free(op);
    claim_failed(b, br_zk_rc_name(r->rc));
}

/* Kafka's ProducerIdManager.getNewProducerIdBlock: the block after the one
 * written last (the first, 0-999, when none was), written conditionally on
 * the version read. */
static void block_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    char err[256] = "";
    int64_t start = 0;
    if (r->rc == BR_ZK_CONNECTIONLOSS && ++op->attempts < MAX_ATTEMPTS && read_block(op) == 0) {
        return;
    }
    if (op->written_unknown && r->rc == BR_ZK_OK && !r->data_null && r->data_len == op->data_len &&
        memcmp(r->data, op->data, op->data_len) == 0) {
        br_info("producer ids: the claim whose answer was lost was applied");
        won(op);
        return;
    }
    op->written_unknown = false;
    if (r->rc == BR_ZK_OK && !r->data_null && r->data_len > 0) {
        struct br_zk_producer_id_block last;
        if (br_zk_producer_id_block_decode(r->data, r->data_len, r->path, &last, err, sizeof err) !=
            0) {
            br_cop_free(op);
            claim_failed(b, err);
            return;
        }
        if (last.block_end > INT64_MAX - BLOCK_SIZE) {
            br_cop_free(op);
            claim_failed(b, "every producer id was handed out");
            return;
        }
        start = last.block_end + 1;
    } else if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
        br_cop_free(op);
        claim_failed(b, br_zk_rc_name(r->rc));
        return;
    }
    struct br_zk_producer_id_block next = {b->node_id, start, start + BLOCK_SIZE - 1};
    char *json = NULL;
    size_t len = 0;
    if (br_zk_producer_id_block_encode(&next, &json, &len) != 0) {
        br_cop_free(op);
        claim_failed(b, "cannot encode the block");
        return;
    }
    kp_free(op->data);
    op->data = json;
    op->data_len = len;
    op->block_start = next.block_start;
    op->block_end = next.block_end;
    op->call.done = block_written;
    /* every broker makes the znode at start (empty); made here when it is
     * missing all the same */
    int zrc = !br_cluster_zk_ready(b) ? KP_E_INVALID_ARG
              : r->rc == BR_ZK_OK
                  ? br_zk_set(b->zk, BLOCK_PATH, json, len, r->stat.version,
                              br_zk_call_tag(&op->call))
                  : br_zk_create(b->zk, BLOCK_PATH, json, len, BR_ZK_PERSISTENT,
                                 br_zk_call_tag(&op->call));
    if (zrc != 0) {
        br_cop_free(op);
        claim_failed(b, "cannot write to ZooKeeper");
    }
}

static void claim(struct br_server *b)
{
    if (b->pids.zk_claiming) {
        return;
    }
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, block_read);
    if (op == NULL) {
        claim_failed(b, "out of memory");
        return;
    }
    b->pids.zk_claiming = true;
    if (read_block(op) != 0) {
        br_cop_free(op);
        claim_failed(b, "not connected to ZooKeeper");
    }
}

int br_cluster_init_producer_id(struct br_req *r)
{
    struct br_server *b = r->b;
    struct br_cwait *w = br_cwait_new(r, 1);
    if (w == NULL) {
        return KP_E_NOMEM;
    }
    if (b->pids.zk_next < b->pids.zk_end) {
        w->producer_id = b->pids.zk_next++;
        br_cwait_done(w, 0, 0, NULL);
    } else {
        claim(b); /* the request waits for the block */
    }
    /* no timeout comes with the request: as AlterConfigs, the answer
     * waits at most BR_ALTER_CONFIGS_WAIT_MS */
    return br_cwait_park(w, r, BR_ALTER_CONFIGS_WAIT_MS);
}
