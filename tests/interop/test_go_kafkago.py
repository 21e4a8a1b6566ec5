#!/usr/bin/python3
"""segmentio kafka-go 0.2.1 (Debian's golang-github-segmentio-kafka-go-dev,
Go) against samsa-broker. kafka-go 0.2.1 always produces with Produce v2 and
magic 1 message sets, fetches with Fetch v2 and reads only magic 0 and 1
messages: it needs the broker to up-convert what it writes and to
down-convert what it reads, as Kafka 2.0 does. The client is
go/kafkago-client (built by meson); see goclients.py for the known messages.

    test_go_kafkago.py SAMSA_BROKER [-k CASE]

- kafkago_produce_read_<codec> (none, gzip, snappy, lz4): a Writer (acks=all)
  sends 300 messages into three partitions (kafka-go's compressed wrapper
  messages for the codecs); Readers without a group read exactly those 300
  back, in order, offsets 0..99 in each partition; kafka-python reads the
  same keys and values at the same offsets.
- kafkago_reads_record_batches: 300 messages produced by kafka-python
  (RecordBatch v2, with headers) are read by kafka-go's Readers, each once,
  in order, at the offsets kafka-python was given.
- kafkago_group: a Reader with GroupID reads the 300 messages kafka-python
  produced and commits each (CommitMessages); kafka-python's admin sees 100
  committed in each partition.
- kafkago_create_delete_topic: Conn.CreateTopics (3 partitions), then
  Conn.ReadPartitions lists 3; Conn.DeleteTopics removes it (kafka-python no
  longer lists it).
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from broker import check, eq, main  # noqa: E402
from goclients import (CONFIG, check_records, committed, create_topic, go_run,  # noqa: E402
                       produce_records)

N = 300
PARTS = 3


def kafkago(cmd, b, *args):
    return go_run("kafkago-client", cmd, "-brokers", b.bootstrap, *args)


def read_with_kafka_python(b, topic, n, partitions):
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False)
    try:
        c.assign([TopicPartition(topic, p) for p in range(partitions)])
        c.seek_to_beginning()
        seen = []
        deadline = time.monotonic() + 30
        while len(seen) < n and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=500).values():
                seen.extend(recs)
    finally:
        c.close()
    return seen


def make_produce_read(codec):
    def case(t):
        b = t.broker(config=CONFIG)
        topic = "kg-" + codec
        create_topic(b, topic, PARTS)
        eq(kafkago("produce", b, "-topic", topic, "-n", N, "-partitions", PARTS,
                   "-codec", codec), [{"written": N}], "Writer result")
        check_records(kafkago("read", b, "-topic", topic, "-partitions", PARTS), N, PARTS,
                      what="kafka-go Readers")
        seen = read_with_kafka_python(b, topic, N, PARTS)
        eq(len(seen), N, "records kafka-python read back")
        for r in seen:
            i = int(r.key[4:])
            eq((r.partition, r.offset, r.value), (i % PARTS, i // PARTS, b"value-%d" % i),
               "record %d as kafka-python reads it" % i)
    case.__name__ = "case_kafkago_produce_read_" + codec
    return case


def case_kafkago_reads_record_batches(t):
    b = t.broker(config=CONFIG)
    create_topic(b, "batches", PARTS)
    produce_records(b, "batches", N, PARTS)
    check_records(kafkago("read", b, "-topic", "batches", "-partitions", PARTS), N, PARTS,
                  what="kafka-go Readers")


def case_kafkago_group(t):
    b = t.broker(config=CONFIG)
    create_topic(b, "kg-group", PARTS)
    produce_records(b, "kg-group", N, PARTS)
    out = kafkago("group", b, "-topic", "kg-group", "-group", "kafka-go", "-expect", N)
    check_records(out, N, PARTS, what="kafka-go group Reader")
    eq(committed(b, "kafka-go"), {("kg-group", p): N // PARTS for p in range(PARTS)},
       "offsets committed, as kafka-python's admin reads them")


def case_kafkago_create_delete_topic(t):
    b = t.broker(config=CONFIG)
    eq(kafkago("create-topic", b, "-topic", "made", "-partitions", 3), [{"partitions": 3}],
       "ReadPartitions after CreateTopics")
    eq(kafkago("delete-topic", b, "-topic", "made"), [{"deleted": "made"}], "DeleteTopics")
    from kafka import KafkaConsumer
    c = KafkaConsumer(bootstrap_servers=b.bootstrap)
    try:
        deadline = time.monotonic() + 10
        while "made" in c.topics() and time.monotonic() < deadline:
            time.sleep(0.1)
        check("made" not in c.topics(), "the deleted topic is still listed")
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([make_produce_read(c) for c in ("none", "gzip", "snappy", "lz4")]
                  + [case_kafkago_reads_record_batches, case_kafkago_group,
                     case_kafkago_create_delete_topic]))
