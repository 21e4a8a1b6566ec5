/*
 * Partitioners: keys placed exactly as the Java client places them
 * (org.apache.kafka.common.utils.Utils.murmur2, toPositive = & 0x7fffffff,
 * modulo all partitions), librdkafka's CRC32 "consistent" modes for mixed
 * fleets, and sticky placement of null keys (KIP-794: switch after
 * batch.size bytes).
 */
#include <string.h>

#include <samsa-protocol/crc.h>

#include "core/internal.h"

uint32_t samsa_murmur2(const void *data, size_t len)
{
    const uint8_t *p = data;
    const uint32_t seed = 0x9747b28cu;
    const uint32_t m = 0x5bd1e995u;
    const int r = 24;
    /* Java computes with int length; keys are bounded by message.max.bytes. */
    uint32_t h = seed ^ (uint32_t)len;
    size_t n4 = len / 4;
    for (size_t i = 0; i < n4; i++) {
        const uint8_t *q = p + 4 * i;
        uint32_t k = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
                     (uint32_t)q[3] << 24;
        k *= m;
        k ^= k >> r;
        k *= m;
        h *= m;
        h ^= k;
    }
    const uint8_t *tail = p + 4 * n4;
    /* The 1-3 byte tail, as Java's switch with fall-through. */
    size_t rem = len % 4;
    if (rem >= 3) {
        h ^= (uint32_t)tail[2] << 16;
    }
    if (rem >= 2) {
        h ^= (uint32_t)tail[1] << 8;
    }
    if (rem >= 1) {
        h ^= (uint32_t)tail[0];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

/* librdkafka's rd_fnv1a (src/rdfnv1a.c): FNV-1a 32, then the absolute value
 * of it as an int32 (Sarama's NewHashPartitioner), INT32_MIN staying itself. */
static uint32_t fnv1a_abs(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t h = 0x811C9DC5u;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x01000193u;
    }
    return (h & 0x80000000u) != 0 ? 0u - h : h;
}

int32_t samsa_partition_for_key(const void *key, size_t len, int32_t partition_count)
{
    if (partition_count <= 0 || (key == NULL && len > 0)) {
        return -1;
    }
    uint32_t h = samsa_murmur2(key, len) & 0x7fffffffu;
    return (int32_t)(h % (uint32_t)partition_count);
}

uint32_t sc_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

static int32_t sticky(struct sc_sticky *s, int32_t n, size_t record_bytes, size_t batch_size,
                      uint64_t *rng)
{
    if (s->partition < 0 || s->partition >= n || s->bytes >= batch_size) {
        int32_t next = (int32_t)(sc_rand(rng) % (uint32_t)n);
        if (n > 1 && next == s->partition) {
            next = (next + 1 + (int32_t)(sc_rand(rng) % (uint32_t)(n - 1))) % n;
        }
        s->partition = next;
        s->bytes = 0;
    }
    s->bytes += record_bytes;
    return s->partition;
}

int32_t sc_partition_choose(int partitioner, const void *key, size_t key_len,
                            int32_t partition_count, struct sc_sticky *s, size_t record_bytes,
                            size_t batch_size, uint64_t *rng)
{
    if (partition_count <= 0) {
        return -1;
    }
    switch (partitioner) {
    case SC_PART_MURMUR2_RANDOM:
        if (key == NULL) {
            return sticky(s, partition_count, record_bytes, batch_size, rng);
        }
        return samsa_partition_for_key(key, key_len, partition_count);
    case SC_PART_MURMUR2:
        /* librdkafka's murmur2: a null key hashes as an empty one. */
        return samsa_partition_for_key(key != NULL ? key : "", key != NULL ? key_len : 0,
                                       partition_count);
    case SC_PART_CONSISTENT_RANDOM:
        if (key == NULL || key_len == 0) {
            return sticky(s, partition_count, record_bytes, batch_size, rng);
        }
        return (int32_t)(kp_crc32(0, key, key_len) % (uint32_t)partition_count);
    case SC_PART_CONSISTENT:
        return (int32_t)(kp_crc32(0, key, key != NULL ? key_len : 0) % (uint32_t)partition_count);
    case SC_PART_FNV1A:
        return (int32_t)(fnv1a_abs(key != NULL ? key : "", key != NULL ? key_len : 0) %
                         (uint32_t)partition_count);
    case SC_PART_FNV1A_RANDOM:
        if (key == NULL) {
            return sticky(s, partition_count, record_bytes, batch_size, rng);
        }
        return (int32_t)(fnv1a_abs(key, key_len) % (uint32_t)partition_count);
    case SC_PART_RANDOM:
    default:
        return sticky(s, partition_count, record_bytes, batch_size, rng);
    }
}
