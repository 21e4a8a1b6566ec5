/*
 * Control records: the transaction markers. Formats in control.h, from Kafka
 * 2.0's ControlRecordType.java and EndTransactionMarker.java.
 */
#include <samsa-protocol/control.h>

#include <string.h>

#define CONTROL_VERSION 0
#define TXN_MARKER_VERSION 0

void kp_control_key_encode(uint8_t key[KP_CONTROL_KEY_SIZE], int16_t type)
{
    kp_store_be16(key, CONTROL_VERSION);
    kp_store_be16(key + 2, (uint16_t)type);
}

int kp_control_key_decode(struct kp_bytes key, int16_t *type)
{
    if (key.len < KP_CONTROL_KEY_SIZE || key.ptr == NULL) {
        return KP_E_CORRUPT;
    }
    if ((int16_t)kp_load_be16(key.ptr) < 0) {
        return KP_E_CORRUPT;
    }
    *type = (int16_t)kp_load_be16(key.ptr + 2);
    return 0;
}

void kp_txn_marker_value_encode(uint8_t value[KP_TXN_MARKER_VALUE_SIZE], int32_t coordinator_epoch)
{
    kp_store_be16(value, TXN_MARKER_VERSION);
    kp_store_be32(value + 2, (uint32_t)coordinator_epoch);
}

int kp_txn_marker_decode(struct kp_bytes key, struct kp_bytes value, struct kp_txn_marker *out)
{
    int16_t type = 0;
    int rc = kp_control_key_decode(key, &type);
    if (rc != 0) {
        return rc;
    }
    if (type != KP_CONTROL_ABORT && type != KP_CONTROL_COMMIT) {
        return KP_E_CORRUPT;
    }
    if (value.len < KP_TXN_MARKER_VALUE_SIZE || value.ptr == NULL) {
        return KP_E_CORRUPT;
    }
    if ((int16_t)kp_load_be16(value.ptr) < 0) {
        return KP_E_CORRUPT;
    }
    out->type = type;
    out->coordinator_epoch = (int32_t)kp_load_be32(value.ptr + 2);
    return 0;
}

int kp_txn_marker_batch_write(struct kp_writer *out, int64_t base_offset, int32_t leader_epoch,
                              int64_t timestamp, int64_t producer_id, int16_t producer_epoch,
                              const struct kp_txn_marker *marker)
{
    if (marker->type != KP_CONTROL_ABORT && marker->type != KP_CONTROL_COMMIT) {
        return KP_E_INVALID_ARG;
    }
    uint8_t key[KP_CONTROL_KEY_SIZE];
    uint8_t value[KP_TXN_MARKER_VALUE_SIZE];
    kp_control_key_encode(key, marker->type);
    kp_txn_marker_value_encode(value, marker->coordinator_epoch);

    struct kp_batch_builder b;
    int rc = kp_batch_builder_init(&b, KP_CODEC_NONE, base_offset, timestamp, producer_id,
                                   producer_epoch, -1, KP_TXN_MARKER_BATCH_SIZE);
    if (rc == 0) {
        kp_batch_builder_set_flags(&b, true, true);
        kp_batch_builder_set_leader_epoch(&b, leader_epoch);
        rc = kp_batch_builder_add(&b, 0, timestamp, (struct kp_bytes){key, sizeof key},
                                  (struct kp_bytes){value, sizeof value}, NULL, 0);
    }
    if (rc == 0) {
        rc = kp_batch_builder_finish(&b, out);
    }
    kp_batch_builder_free(&b);
    return rc;
}

int kp_txn_marker_batch_read(const uint8_t *batch, size_t size, size_t max_decompressed,
                             struct kp_txn_marker *out)
{
    struct kp_batch_iter it;
    int rc = kp_batch_iter_init(&it, batch, size, max_decompressed);
    if (rc == 0 && !kp_batch_is_control(&it.h)) {
        rc = KP_E_INVALID_ARG;
    }
    if (rc == 0) {
        struct kp_record rec;
        rc = kp_batch_iter_next(&it, &rec);
        if (rc == KP_ITER_END) {
            rc = KP_E_CORRUPT;
        }
        if (rc == 0) {
            rc = kp_txn_marker_decode(rec.Key, rec.Value, out);
        }
    }
    kp_batch_iter_free(&it);
    return rc;
}
