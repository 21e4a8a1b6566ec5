#!/usr/bin/python3
"""sarama 1.22.1 (Debian's golang-github-shopify-sarama-dev, Go) against
samsa-broker, at several Config.Version settings. The client is
go/sarama-client (built by meson); see goclients.py for the known messages.

    test_go_sarama.py SAMSA_BROKER [-k CASE]

For each Config.Version V0_10_0_0, V0_11_0_0, V1_0_0_0 and V2_0_0_0 (below
V0_11 sarama sends Produce v2 with magic 1 message sets and reads with Fetch
v2/v3; from V0_11 on RecordBatch v2 with headers):

- sarama_<V>_produce_consume: a SyncProducer (acks=all) sends 300 messages
  with explicit CreateTimes into three partitions; every send reports the
  offset i // 3 in partition i % 3; partition consumers from the oldest
  offset read exactly those 300, in order, with their keys, values, CreateTimes
  and (from V0_11) headers; kafka-python reads the same records back.
- sarama_<V>_log_append_time (V0_10_0_0 and V2_0_0_0): into a topic with
  message.timestamp.type=LogAppendTime, 30 messages sent with CreateTimes a
  day old carry the broker's append time when read back (by sarama and by
  kafka-python, which also sees the timestamp type), not the CreateTimes.
- sarama_<V>_group (V0_10_2_0, V0_11_0_0, V1_0_0_0, V2_0_0_0; sarama's
  ConsumerGroup needs at least V0_10_2_0): 300 messages produced by
  kafka-python are read exactly once by one ConsumerGroup member, which
  commits them as it leaves; sarama's offset manager and kafka-python's admin
  both see 100 committed in each partition.

At V2_0_0_0:
- sarama_offset_for_time: Client.GetOffset by a message's CreateTime finds that
  message's offset (sarama sends MaxTimestamp -1 in its batch headers), and -1
  after the last.
- sarama_admin_create_list_describe: ClusterAdmin CreateTopic (3 partitions),
  ListTopics (which also sends DescribeConfigs for every topic) and
  DescribeConfig of the topic (cleanup.policy=delete, retention.ms given).
- sarama_admin_create_partitions: CreatePartitions from 2 to 4, then
  DescribeTopics on the same admin client shows 4; so does kafka-python.
- sarama_admin_list_topics_many: ListTopics with 120 topics (one DescribeConfigs
  request for all 120 behind it) lists all 120.
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
MANY = 120
PARTS = 3


def sarama(cmd, b, version, *args):
    return go_run("sarama-client", cmd, "-brokers", b.bootstrap, "-version", version, *args)


def version_name(v):
    parts = v.split(".")
    while len(parts) < 4:
        parts.append("0")
    return "v" + "_".join(parts)


def at_least(v, *want):
    return tuple(int(x) for x in v.split(".")) >= want


def make_produce_consume(version):
    def case(t):
        b = t.broker(config=CONFIG)
        topic = "pc-" + version_name(version)
        create_topic(b, topic, PARTS)
        ts_base = int(time.time() * 1000) - 100000
        out = sarama("produce", b, version, "-topic", topic, "-n", N,
                     "-partitions", PARTS, "-ts-base", ts_base)
        eq([(o["i"], o["partition"], o["offset"]) for o in out],
           [(i, i % PARTS, i // PARTS) for i in range(N)], "partition and offset of each send")
        got = check_records(sarama("consume", b, version, "-topic", topic, "-partitions", PARTS),
                            N, PARTS, headers=at_least(version, 0, 11), what="sarama consumer")
        for p, rows in got.items():
            for o in rows:
                i = int(o["key"][4:])
                eq(o["timestamp_ms"], ts_base + i, "CreateTime of %s" % o["key"])
        # the broker holds what sarama meant, whoever reads it
        from kafka import KafkaConsumer, TopicPartition
        c = KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False,
                          consumer_timeout_ms=5000)
        try:
            tps = [TopicPartition(topic, p) for p in range(PARTS)]
            c.assign(tps)
            c.seek_to_beginning()
            seen = []
            deadline = time.monotonic() + 30
            while len(seen) < N and time.monotonic() < deadline:
                for recs in c.poll(timeout_ms=500).values():
                    seen.extend(recs)
        finally:
            c.close()
        eq(len(seen), N, "records kafka-python read back")
        for r in seen:
            i = int(r.key[4:])
            eq((r.partition, r.offset, r.value, r.timestamp),
               (i % PARTS, i // PARTS, b"value-%d" % i, ts_base + i), "record %d" % i)
            if at_least(version, 0, 11):
                eq(list(r.headers), [("seq", b"%d" % i)], "headers of record %d" % i)
    case.__name__ = "case_sarama_%s_produce_consume" % version_name(version)
    return case


def make_log_append_time(version):
    def case(t):
        b = t.broker(config=CONFIG)
        topic = "lat-" + version_name(version)
        create_topic(b, topic, 1, {"message.timestamp.type": "LogAppendTime"})
        ts_base = int(time.time() * 1000) - 86400000
        before = int(time.time() * 1000)
        sarama("produce", b, version, "-topic", topic, "-n", 30, "-partitions", 1,
               "-ts-base", ts_base)
        after = int(time.time() * 1000)
        got = check_records(sarama("consume", b, version, "-topic", topic, "-partitions", 1),
                            30, 1, what="sarama consumer")
        for o in got[0]:
            check(before - 1000 <= o["timestamp_ms"] <= after + 1000,
                  "%s: timestamp %d is not the append time (produced between %d and %d; "
                  "its CreateTime was %d)", o["key"], o["timestamp_ms"], before, after,
                  ts_base + int(o["key"][4:]))
        from kafka import KafkaConsumer, TopicPartition
        c = KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False)
        try:
            c.assign([TopicPartition(topic, 0)])
            c.seek_to_beginning()
            seen = []
            deadline = time.monotonic() + 30
            while len(seen) < 30 and time.monotonic() < deadline:
                for recs in c.poll(timeout_ms=500).values():
                    seen.extend(recs)
        finally:
            c.close()
        eq(len(seen), 30, "records kafka-python read back")
        for r in seen:
            eq(r.timestamp_type, 1, "timestamp type of offset %d (1 = LogAppendTime)" % r.offset)
            check(before - 1000 <= r.timestamp <= after + 1000,
                  "offset %d: timestamp %d is not the append time", r.offset, r.timestamp)
    case.__name__ = "case_sarama_%s_log_append_time" % version_name(version)
    return case


def make_group(version):
    def case(t):
        b = t.broker(config=CONFIG)
        topic = "grp-" + version_name(version)
        group = "sarama-" + version_name(version)
        create_topic(b, topic, PARTS)
        produce_records(b, topic, N, PARTS)
        out = sarama("group", b, version, "-topic", topic, "-group", group,
                     "-expect", N, "-partitions", PARTS)
        check_records(out, N, PARTS, headers=at_least(version, 0, 11),
                      what="sarama ConsumerGroup")
        claims = [o for o in out if "claims" in o]
        check(claims, "no group session was set up")
        eq(sorted(claims[0]["claims"].get(topic, [])), list(range(PARTS)), "claimed partitions")
        eq(out[-1].get("committed"), {str(p): N // PARTS for p in range(PARTS)},
           "offsets committed, as sarama's offset manager reads them")
        eq(committed(b, group), {(topic, p): N // PARTS for p in range(PARTS)},
           "offsets committed, as kafka-python's admin reads them")
    case.__name__ = "case_sarama_%s_group" % version_name(version)
    return case


def case_sarama_offset_for_time(t):
    b = t.broker(config=CONFIG)
    topic = "times"
    create_topic(b, topic, 1)
    ts_base = int(time.time() * 1000) - 50000
    sarama("produce", b, "2.0.0", "-topic", topic, "-n", 10, "-partitions", 1,
           "-ts-base", ts_base)
    for k in (0, 5, 9):
        out = sarama("offset-for-time", b, "2.0.0", "-topic", topic, "-ts", ts_base + k)
        eq(out[0]["offset"], k, "GetOffset(CreateTime of message %d)" % k)
    out = sarama("offset-for-time", b, "2.0.0", "-topic", topic, "-ts", ts_base + 10)
    eq(out[0]["offset"], -1, "GetOffset(after the last CreateTime)")


def case_sarama_admin_create_list_describe(t):
    b = t.broker(config=CONFIG)
    eq(sarama("create-topic", b, "2.0.0", "-topic", "adm", "-partitions", 3),
       [{"created": "adm"}], "CreateTopic")
    topics = sarama("list-topics", b, "2.0.0")[0]["topics"]
    eq(topics.get("adm"), 3, "partitions of adm in ListTopics")
    configs = sarama("describe-config", b, "2.0.0", "-topic", "adm")[0]["configs"]
    eq(configs.get("cleanup.policy"), "delete", "cleanup.policy in DescribeConfig")
    check("retention.ms" in configs, "DescribeConfig lists no retention.ms: %r", configs)


def case_sarama_admin_create_partitions(t):
    b = t.broker(config=CONFIG)
    sarama("create-topic", b, "2.0.0", "-topic", "grow", "-partitions", 2)
    eq(sarama("create-partitions", b, "2.0.0", "-topic", "grow", "-partitions", 4),
       [{"partitions": 4}], "partitions DescribeTopics reports after CreatePartitions")
    from kafka import KafkaConsumer
    c = KafkaConsumer(bootstrap_servers=b.bootstrap)
    try:
        eq(c.partitions_for_topic("grow"), {0, 1, 2, 3}, "partitions kafka-python sees")
    finally:
        c.close()


def case_sarama_admin_list_topics_many(t):
    b = t.broker(config=CONFIG)
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    a = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=30000)
    try:
        a.create_topics([NewTopic("many-%03d" % i, 1, 1) for i in range(MANY)])
    finally:
        a.close()
    topics = sarama("list-topics", b, "2.0.0")[0]["topics"]
    eq({k: v for k, v in topics.items() if k.startswith("many-")},
       {"many-%03d" % i: 1 for i in range(MANY)}, "topics ListTopics lists")


VERSIONS = ["0.10.0.0", "0.11.0.0", "1.0.0", "2.0.0"]
GROUP_VERSIONS = ["0.10.2.0", "0.11.0.0", "1.0.0", "2.0.0"]

if __name__ == "__main__":
    sys.exit(main([make_produce_consume(v) for v in VERSIONS]
                  + [make_log_append_time(v) for v in ("0.10.0.0", "2.0.0")]
                  + [make_group(v) for v in GROUP_VERSIONS]
                  + [case_sarama_offset_for_time, case_sarama_admin_create_list_describe,
                     case_sarama_admin_create_partitions, case_sarama_admin_list_topics_many]))
