/*
 * samsa-broker: the aborted-transaction index, Kafka 2.0's `.txnindex`
 * files (core/src/main/scala/kafka/log/TransactionIndex.scala,
 * AbortedTxn; LogSegment.updateTxnIndex).
 *
 * Each ABORT marker a partition appends adds one entry to the `.txnindex`
 * file of the segment it lands in (`<20-digit base offset>.txnindex`);
 * COMMITs are not indexed. An entry is 34 bytes, big-endian:
 *
 *     int16  version = 0
 *     int64  producer_id
 *     int64  first_offset         the transaction's first offset here
 *     int64  last_offset          the ABORT marker's offset
 *     int64  last_stable_offset   the partition's LSO once it completed
 *
 * A read_committed Fetch answers, beside its records, every aborted
 * transaction that overlaps them (TransactionIndex.collectAbortedTxns:
 * last_offset >= fetch offset and first_offset < the offset after the
 * records): the consumer drops that producer's batches from first_offset
 * until it meets the ABORT marker.
 *
 * Files are appended to (no fsync: the log's own recovery rebuilds an
 * entry lost with the page cache, br_partition_load_producers); a file
 * read back is hostile input: a length that is no multiple of 34, or a
 * version other than 0, ends the file's entries there with a warning.
 *
 * @locality any thread (no shared state); the functions take the
 * partition directory's path.
 */
#ifndef SAMSA_BROKER_STORAGE_TXN_INDEX_H
#define SAMSA_BROKER_STORAGE_TXN_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#define BR_TXNIDX_SUFFIX ".txnindex"
#define BR_TXNIDX_ENTRY_BYTES 34

struct br_aborted_txn {
    int64_t producer_id;
    int64_t first_offset;
    int64_t last_offset;
    int64_t last_stable_offset;
};

/* Encodes / decodes one entry (decode: 0 or KP_E_CORRUPT, a version
 * other than 0). */
void br_txnidx_encode(uint8_t out[BR_TXNIDX_ENTRY_BYTES], const struct br_aborted_txn *e);
KP_MUST_CHECK int br_txnidx_decode(const uint8_t in[BR_TXNIDX_ENTRY_BYTES],
                                   struct br_aborted_txn *e);

/* Appends e to dir's `.txnindex` of the segment based at seg_base. 0 or
 * KP_ERR_KAFKA_STORAGE_ERROR (logged). */
KP_MUST_CHECK int br_txnidx_append(const char *dir, int64_t seg_base,
                                   const struct br_aborted_txn *e);

/* Every entry of dir's `.txnindex` files whose marker lies in
 * [from, to), in the files' order (ascending marker offsets), into *out
 * (kp_free; NULL when none). Entries at or past `to` describe markers a
 * truncation or a crash's recovery removed: they are cut from their files
 * (a file left without entries is deleted). 0, KP_E_NOMEM or
 * KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_txnidx_load(const char *dir, int64_t from, int64_t to,
                                 struct br_aborted_txn **out, size_t *n);

/* Deletes the `.txnindex` of the segment based at seg_base, if any (the
 * segment was deleted). 0 or KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_txnidx_unlink(const char *dir, int64_t seg_base);

#endif
