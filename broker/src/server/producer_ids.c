/* samsa-broker: producer ids handed out by InitProducerId (see state.h). */
#define _GNU_SOURCE

#include "server/state.h"

#include "base/logging.h"
#include "base/number.h"
#include "server/admin_manager.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- producer ids */

#define PRODUCER_ID_BLOCK 1000
#define PRODUCER_ID_FILE "producer-id-block"

/* Producer ids start past every id reserved before (the block end kept in
 * <log dir>/producer-id-block), past every id found in the logs (whose
 * sequence state was just rebuilt), and at the start time in milliseconds
 * shifted left 12 bits (so a lost file still gives fresh ids). */
int br_producer_ids_load(struct br_server *b)
{
    int64_t next = br_now_wall_ms() << 12;
    if (b->rm.max_producer_id_seen >= next) {
        next = b->rm.max_producer_id_seen + 1;
    }
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/" PRODUCER_ID_FILE, b->cfg.log_dirs[0]);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        char line[64];
        int64_t v = -1;
        if (fgets(line, sizeof line, f) != NULL) {
            size_t len = strcspn(line, "\n");
            if (!br_num_parse_i64(line, len, 0, INT64_MAX, &v)) {
                v = -1;
            }
        }
        (void)fclose(f);
        if (v < 0) {
            br_warn("%s is not a producer id: ignored (ids start from the clock)", path);
        } else if (v >= next) {
            next = v;
        }
    }
    b->pids.next = next;
    b->pids.block_end = next; /* the first id reserves a block */
    return 0;
}

int br_broker_next_producer_id(struct br_server *b, int64_t *id)
{
    if (b->pids.next >= b->pids.block_end) {
        int64_t end = b->pids.next + PRODUCER_ID_BLOCK;
        char path[4096];
        char text[32];
        (void)snprintf(path, sizeof path, "%s/" PRODUCER_ID_FILE, b->cfg.log_dirs[0]);
        int n = snprintf(text, sizeof text, "%" PRId64 "\n", end);
        if (br_file_write_atomic(path, text, (size_t)n) != 0) {
            return KP_ERR_KAFKA_STORAGE_ERROR; /* logged there */
        }
        b->pids.block_end = end;
    }
    *id = b->pids.next++;
    return 0;
}

int br_standalone_init_producer_id(struct br_req *r)
{
    struct kp_InitProducerIdResponse resp;
    kp_InitProducerIdResponse_init(&resp);
    int64_t id = -1;
    int err = br_broker_next_producer_id(r->b, &id);
    resp.ErrorCode = (int16_t)kp_err_to_wire(err);
    resp.ProducerId = err == 0 ? id : -1;
    resp.ProducerEpoch = err == 0 ? 0 : -1;
    return br_respond(r, &resp);
}
