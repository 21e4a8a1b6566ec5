#!/usr/bin/python3
"""kafka-python 2.0.2 (Debian's python3-kafka) against samsa-broker.

    test_kafka_python.py SAMSA_BROKER [-k CASE]

- admin_topics: KafkaAdminClient creates topics (their partitions show in
  Metadata), refuses an existing name (TopicAlreadyExistsError), deletes
  them (gone from list_topics; deleting again: UnknownTopicOrPartitionError);
  a topic re-created under a deleted name starts empty.
- producer_codecs: KafkaProducer with default version probing (no
  api_version) infers a broker of at least 2.1 (needed for zstd); for each
  codec it supports (none, gzip, snappy, lz4, zstd) it sends 3,000 records
  (binary keys and values, null and empty ones, headers, explicit
  timestamps) to three partitions; the acknowledged offsets count up from 0
  per partition; batches on disk carry the codec (kafka-python sends a
  batch plain when compressing would not shrink it: batches of 50 records
  or more); a KafkaConsumer with
  assign() + seek_to_beginning() reads every record back unchanged.
- consumer_positions: beginning_offsets, end_offsets, offsets_for_times
  (the exact first record at or after a timestamp, also inside compressed
  batches; None after the last record), seek() into the middle of a batch,
  seek_to_end().
"""

import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402
from kafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError  # noqa: E402

PARTITIONS = 3
N_RECORDS = 3000
BASE_TS = 1_600_000_000_000


def admin_client(b):
    return KafkaAdminClient(bootstrap_servers=b.bootstrap, client_id="it-admin",
                            request_timeout_ms=15000)


def consumer(b):
    return KafkaConsumer(bootstrap_servers=b.bootstrap, client_id="it-consumer",
                         group_id=None, enable_auto_commit=False,
                         auto_offset_reset="earliest", request_timeout_ms=15000)


def make_records(seed, n):
    """n records (partition, key, value, headers, timestamp_ms)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        key = b"k%06d" % i + bytes(rng.randrange(256) for _ in range(rng.randrange(4)))
        if i % 97 == 1:
            key = None
        size = rng.randrange(300)
        value = bytes(rng.randrange(256) for _ in range(size // 3)) + b"payload " * (size // 24)
        if i % 101 == 0:
            value = None
        elif i % 103 == 0:
            value = b""
        headers = [("h%d" % (i % 3), b"x%d" % i)] if i % 7 == 0 else []
        out.append((i % PARTITIONS, key, value, headers, BASE_TS + i))
    return out


def send_all(producer, topic, records):
    """Sends every record, waits for each ack; returns {partition: [offsets]}
    in send order."""
    futures = [producer.send(topic, key=k, value=v, headers=h, partition=p, timestamp_ms=ts)
               for p, k, v, h, ts in records]
    producer.flush(timeout=60)
    acked = {}
    for fut, (p, _, _, _, _) in zip(futures, records):
        md = fut.get(timeout=30)
        eq(md.partition, p, "acknowledged partition")
        acked.setdefault(p, []).append(md.offset)
    return acked


def poll_all(c, expected_total, timeout=60.0):
    """Polls until expected_total records came in; {partition: [records]}."""
    got = {}
    n = 0
    deadline = time.monotonic() + timeout
    while n < expected_total:
        check(time.monotonic() < deadline, "read %d of %d records in %.0f s",
              n, expected_total, timeout)
        for tp, recs in c.poll(timeout_ms=500).items():
            got.setdefault(tp.partition, []).extend(recs)
            n += len(recs)
    # Nothing more must come.
    extra = c.poll(timeout_ms=500)
    check(not any(extra.values()), "records beyond the expected ones: %r", extra)
    return got


def check_read_back(topic, got, records):
    per = {}
    for r in records:
        per.setdefault(r[0], []).append(r)
    for p in range(PARTITIONS):
        recs = got.get(p, [])
        exp = per.get(p, [])
        eq(len(recs), len(exp), "%s-%d: records read" % (topic, p))
        for i, (rec, (_, k, v, h, ts)) in enumerate(zip(recs, exp)):
            what = "%s-%d offset %d" % (topic, p, rec.offset)
            eq(rec.offset, i, "%s-%d record %d offset" % (topic, p, i))
            eq(rec.key, k, what + " key")
            eq(rec.value, v, what + " value")
            eq(list(rec.headers), h, what + " headers")
            eq(rec.timestamp, ts, what + " timestamp")
            eq(rec.timestamp_type, 0, what + " timestamp type")


def create(admin, name, partitions):
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])


def case_admin_topics(t):
    b = t.broker()
    admin = admin_client(b)
    try:
        create(admin, "kp-admin-a", 3)
        create(admin, "kp-admin-b", 1)
        names = admin.list_topics()
        for n in ("kp-admin-a", "kp-admin-b"):
            check(n in names, "list_topics lacks %s: %r", n, names)
        desc = {d["topic"]: d for d in admin.describe_topics(["kp-admin-a", "kp-admin-b"])}
        eq(sorted(p["partition"] for p in desc["kp-admin-a"]["partitions"]), [0, 1, 2],
           "kp-admin-a partitions")
        eq(len(desc["kp-admin-b"]["partitions"]), 1, "kp-admin-b partition count")
        for d in desc.values():
            eq(d["error_code"], 0, "%s error" % d["topic"])
            for p in d["partitions"]:
                eq(p["leader"], 0, "%s-%d leader" % (d["topic"], p["partition"]))

        try:
            create(admin, "kp-admin-a", 3)
        except TopicAlreadyExistsError:
            pass
        else:
            raise AssertionError("creating kp-admin-a twice did not fail")

        # Data, then delete and re-create: the new topic is empty.
        prod = KafkaProducer(bootstrap_servers=b.bootstrap)
        for i in range(10):
            prod.send("kp-admin-b", value=b"v%d" % i, partition=0).get(timeout=30)
        prod.close()
        admin.delete_topics(["kp-admin-a", "kp-admin-b"])
        names = admin.list_topics()
        for n in ("kp-admin-a", "kp-admin-b"):
            check(n not in names, "%s still listed after delete_topics: %r", n, names)
        try:
            admin.delete_topics(["kp-admin-a"])
        except UnknownTopicOrPartitionError:
            pass
        else:
            raise AssertionError("deleting kp-admin-a twice did not fail")

        create(admin, "kp-admin-b", 1)
        c = consumer(b)
        tp = TopicPartition("kp-admin-b", 0)
        eq(c.end_offsets([tp]), {tp: 0}, "end offset of the re-created kp-admin-b")
        c.close()
    finally:
        admin.close()


def case_producer_codecs(t):
    b = t.broker()
    admin = admin_client(b)
    probe = KafkaProducer(bootstrap_servers=b.bootstrap)
    version = probe.config["api_version"]
    probe.close()
    check(version >= (2, 1, 0), "kafka-python inferred broker version %r, below 2.1 "
          "(no zstd, no Produce v7)", version)
    try:
        for codec in (None, "gzip", "snappy", "lz4", "zstd"):
            name = codec or "none"
            topic = "kp-" + name
            create(admin, topic, PARTITIONS)
            records = make_records(name, N_RECORDS)
            prod = KafkaProducer(bootstrap_servers=b.bootstrap, compression_type=codec,
                                 linger_ms=5, acks="all")
            eq(prod.config["api_version"], version, "probed version of a second producer")
            acked = send_all(prod, topic, records)
            prod.close()
            for p in range(PARTITIONS):
                eq(acked[p], list(range(N_RECORDS // PARTITIONS)),
                   "%s-%d: acknowledged offsets" % (topic, p))
                kwire.check_codec(kwire.disk_batches(b.log_dir, topic, p), name,
                                  "%s-%d on disk" % (topic, p))

            c = consumer(b)
            tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
            c.assign(tps)
            c.seek_to_beginning()
            check_read_back(topic, poll_all(c, N_RECORDS), records)
            c.close()
    finally:
        admin.close()


def case_consumer_positions(t):
    b = t.broker()
    admin = admin_client(b)
    try:
        for codec in (None, "gzip"):
            topic = "kp-pos-" + (codec or "none")
            create(admin, topic, PARTITIONS)
            records = make_records(topic, N_RECORDS)
            prod = KafkaProducer(bootstrap_servers=b.bootstrap, compression_type=codec,
                                 linger_ms=20, batch_size=64 * 1024)
            send_all(prod, topic, records)
            prod.close()

            c = consumer(b)
            tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
            per = N_RECORDS // PARTITIONS
            eq(c.beginning_offsets(tps), {tp: 0 for tp in tps}, topic + " beginning_offsets")
            eq(c.end_offsets(tps), {tp: per for tp in tps}, topic + " end_offsets")

            # Record j of partition p is record i = 3j + p, with timestamp
            # BASE_TS + i.
            q = {tps[0]: BASE_TS + 3 * 100 + 1,      # -> j = 101
                 tps[1]: BASE_TS,                    # -> j = 0
                 tps[2]: BASE_TS + 3 * (per - 1) + 2}  # -> the last record
            got = c.offsets_for_times(q)
            eq((got[tps[0]].offset, got[tps[0]].timestamp), (101, BASE_TS + 303),
               topic + "-0 offsets_for_times")
            eq((got[tps[1]].offset, got[tps[1]].timestamp), (0, BASE_TS + 1),
               topic + "-1 offsets_for_times")
            eq((got[tps[2]].offset, got[tps[2]].timestamp), (per - 1, BASE_TS + 3 * (per - 1) + 2),
               topic + "-2 offsets_for_times")
            after = c.offsets_for_times({tps[0]: BASE_TS + N_RECORDS + 1000})
            eq(after[tps[0]], None, topic + "-0 offsets_for_times after the last record")

            for tp, start in ((tps[0], 517), (tps[1], 0), (tps[2], per - 1)):
                c.assign([tp])
                c.seek(tp, start)
                rec = None
                deadline = time.monotonic() + 30
                while rec is None:
                    check(time.monotonic() < deadline, "%s: nothing read after seek(%d)",
                          tp, start)
                    recs = c.poll(timeout_ms=500, max_records=1).get(tp)
                    rec = recs[0] if recs else None
                eq(rec.offset, start, "%s: first offset after seek(%d)" % (tp, start))
                i = PARTITIONS * start + tp.partition
                eq((rec.key, rec.value, rec.timestamp), records[i][1:3] + (records[i][4],),
                   "%s: record after seek(%d)" % (tp, start))
            c.assign(tps)
            c.seek_to_end()
            for tp in tps:
                eq(c.position(tp), per, "%s: position after seek_to_end" % (tp,))
            c.close()
    finally:
        admin.close()


CASES = [case_admin_topics, case_producer_codecs, case_consumer_positions]

if __name__ == "__main__":
    sys.exit(main(CASES))
