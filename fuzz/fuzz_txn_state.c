/*
 * fuzz_txn_state: the transaction coordinator's and the partitions' files
 * read back at start-up: records of __transaction_state (Kafka 2.0's
 * TransactionLog key and value, broker/src/txn/txn_log.c, applied with
 * br_txn_load_record) and `.txnindex` entries (storage/txn_index.c).
 *
 * Input: byte 0 picks the decoder (even: a record, odd: .txnindex bytes).
 * A record: bytes 1-2 the key's length (big-endian, clamped to what is
 * left), then the key, then the value (none left: a tombstone; byte 0's
 * bit 1 set: also a tombstone).
 *
 * Checks, beyond "no crash, no over-read, no leak":
 *   - a rejected record returns KP_E_CORRUPT and changes nothing (the
 *     coordinator holds what it held);
 *   - an accepted value holds a status in range; encoded again and decoded,
 *     it gives the same fields and partitions, and that encoding is a fixed
 *     point (encode(decode(encode(x))) == encode(x));
 *   - an accepted key names the id the coordinator then holds (or, for a
 *     tombstone or Dead, does not);
 *   - a .txnindex entry accepted (version 0) encodes back to its bytes.
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>

#include "base/logging.h"
#include "storage/txn_index.h"
#include "txn/coordinator.h"
#include "txn/txn_log.h"

static int no_pid(void *ctx, int64_t *id)
{
    (void)ctx;
    *id = -1;
    return KP_E_INVALID_ARG;
}

static int no_write(void *ctx, const char *id, size_t id_len, struct kp_bytes key,
                    struct kp_bytes value, int64_t *log_end)
{
    (void)ctx;
    (void)log_end;
    (void)id;
    (void)id_len;
    (void)key;
    (void)value;
    return KP_ERR_COORDINATOR_NOT_AVAILABLE;
}

static bool no_markers(void *ctx, const struct br_txn *t, bool commit)
{
    (void)ctx;
    (void)t;
    (void)commit;
    return false;
}

static const struct br_txn_ops ops = {no_pid, no_write, no_markers};

static void free_txn_parts(struct br_txn *t)
{
    for (size_t i = 0; i < t->nparts; i++) {
        kp_free(t->parts[i].topic);
    }
    kp_free(t->parts);
    t->parts = NULL;
    t->nparts = t->cap_parts = 0;
}

static void check_value(struct kp_bytes value)
{
    struct br_txn a;
    memset(&a, 0, sizeof a);
    int rc = br_txn_log_value_decode(value, &a);
    fuzz_check(rc == 0 || rc == KP_E_CORRUPT || rc == KP_E_NOMEM, "value decode's code", rc);
    if (rc != 0) {
        fuzz_check(a.nparts == 0 && a.parts == NULL, "a rejected value changed the record", rc);
        return;
    }
    fuzz_check(a.status >= BR_TXN_EMPTY && a.status <= BR_TXN_DEAD, "status out of range",
               (int)a.status);
    struct kp_writer w1;
    struct kp_writer w2;
    kp_wr_init(&w1, FUZZ_MAX_INPUT * 2);
    kp_wr_init(&w2, FUZZ_MAX_INPUT * 2);
    br_txn_log_value(&w1, &a);
    fuzz_check(w1.err == 0, "an accepted value does not encode", w1.err);
    struct br_txn b;
    memset(&b, 0, sizeof b);
    rc = br_txn_log_value_decode((struct kp_bytes){w1.buf, (int32_t)w1.len}, &b);
    fuzz_check(rc == 0, "an encoded value does not decode", rc);
    fuzz_check(b.producer_id == a.producer_id && b.epoch == a.epoch &&
                   b.timeout_ms == a.timeout_ms && b.status == a.status &&
                   b.update_ms == a.update_ms,
               "fields changed by a round trip", 0);
    size_t expect = a.status == BR_TXN_EMPTY ? 0 : a.nparts;
    fuzz_check(b.nparts == expect, "partitions changed by a round trip", (int)b.nparts);
    for (size_t i = 0; i < b.nparts; i++) {
        bool found = false;
        for (size_t j = 0; j < a.nparts && !found; j++) {
            found = a.parts[j].partition == b.parts[i].partition &&
                    strcmp(a.parts[j].topic, b.parts[i].topic) == 0;
        }
        fuzz_check(found, "a partition appeared in a round trip", (int)i);
    }
    br_txn_log_value(&w2, &b);
    fuzz_check(w2.err == 0 && w2.len == w1.len && memcmp(w1.buf, w2.buf, w1.len) == 0,
               "encoding is no fixed point", (int)w2.len);
    kp_wr_free(&w1);
    kp_wr_free(&w2);
    free_txn_parts(&a);
    free_txn_parts(&b);
}

static void check_record(const uint8_t *data, size_t size, bool tombstone)
{
    size_t klen = size >= 2 ? (size_t)data[0] << 8 | data[1] : 0;
    const uint8_t *rest = size >= 2 ? data + 2 : data;
    size_t left = size >= 2 ? size - 2 : 0;
    if (klen > left) {
        klen = left;
    }
    struct kp_bytes key = {rest, (int32_t)klen};
    struct kp_bytes value = {rest + klen, (int32_t)(left - klen)};
    if (tombstone || value.len == 0) {
        value = KP_BYTES_NULL;
    } else {
        check_value(value);
    }
    struct br_txn_coordinator c;
    br_txn_init(&c, &ops, NULL, 900000, 604800000, 1000);
    int rc = br_txn_load_record(&c, key, value);
    fuzz_check(rc == 0 || rc == KP_E_CORRUPT || rc == KP_E_NOMEM, "load's code", rc);
    struct kp_str id;
    bool key_ok = br_txn_log_key_decode(key, &id) == 0;
    if (rc == KP_E_CORRUPT) {
        fuzz_check(c.n == 0, "a rejected record left an id", (int)c.n);
    } else if (rc == 0) {
        fuzz_check(key_ok, "a record accepted with a bad key", 0);
        struct br_txn *t = br_txn_find(&c, id.ptr, (size_t)id.len);
        bool gone = value.len < 0;
        fuzz_check(gone ? t == NULL : (t != NULL || c.n == 0), "the id held after the load", 0);
        fuzz_check(t == NULL || t->status != BR_TXN_DEAD, "a Dead id is held", 0);
    }
    br_txn_fini(&c);
}

static void check_txnindex(const uint8_t *data, size_t size)
{
    for (size_t off = 0; off + BR_TXNIDX_ENTRY_BYTES <= size; off += BR_TXNIDX_ENTRY_BYTES) {
        struct br_aborted_txn e;
        int rc = br_txnidx_decode(data + off, &e);
        fuzz_check(rc == 0 || rc == KP_E_CORRUPT, ".txnindex decode's code", rc);
        if (rc == 0) {
            uint8_t back[BR_TXNIDX_ENTRY_BYTES];
            br_txnidx_encode(back, &e);
            fuzz_check(memcmp(back, data + off, sizeof back) == 0,
                       "a .txnindex entry does not encode back", (int)off);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool quiet;
    if (!quiet) {
        br_logging_set_level(BR_LOG_ERROR);
        quiet = true;
    }
    if (size < 1 || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    if (data[0] & 1) {
        check_txnindex(data + 1, size - 1);
    } else {
        check_record(data + 1, size - 1, (data[0] & 2) != 0);
    }
    return 0;
}
