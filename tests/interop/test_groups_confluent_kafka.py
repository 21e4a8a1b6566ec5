#!/usr/bin/python3
"""confluent-kafka 1.7.0 (librdkafka 2.0.2) committed offsets without group
membership against samsa-broker.

    test_groups_confluent_kafka.py SAMSA_BROKER [-k CASE]

- manual_assign_commit: a Consumer with a group.id uses assign() only (it
  never joins the group) and commits explicit offsets, then its positions
  (OffsetCommit with generation -1 into a group the broker does not know,
  which becomes Empty); committed() reads each back; a second such consumer
  assigned without offsets starts at the committed ones; the broker
  describes the group Empty with no protocol type, and the offsets survive
  a broker restart.
- commit_into_live_group: the same commit into a group that has a member
  (kafka-python, subscribed) is refused with UNKNOWN_MEMBER_ID and changes
  nothing.
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition  # noqa: E402
from kafka import KafkaAdminClient, KafkaConsumer  # noqa: E402

CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "5",
}


def produce(b, topic, values, partitions):
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5})
    errors = []
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % partitions,
                  on_delivery=lambda err, msg: errors.append(err) if err else None)
    eq(p.flush(60), 0, "messages left unflushed")
    eq(errors, [], "delivery errors")


def consumer(b, group):
    return Consumer({"bootstrap.servers": b.bootstrap, "group.id": group,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                     "enable.partition.eof": False})


def consume(c, n, timeout=30):
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n:
        check(time.monotonic() < deadline, "consumed %d of %d", len(out), n)
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            raise AssertionError("consume error: %s" % m.error())
        out.append((m.partition(), m.offset(), m.value()))
    return out


def committed(c, topic, partitions):
    res = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=15)
    for tp in res:
        check(tp.error is None, "committed() error on partition %d: %s", tp.partition, tp.error)
    return {tp.partition: tp.offset for tp in res}


def case_manual_assign_commit(t):
    b = t.broker(config=CONFIG)
    topic, group = "ck-manual", "ck-manual-group"
    kwire.create_topic(b.port, topic, 2)
    produce(b, topic, [b"a-%d" % i for i in range(100)], 2)
    c = consumer(b, group)
    c.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
    got = consume(c, 100)
    eq(sorted((p, o) for p, o, _ in got), sorted((i % 2, i // 2) for i in range(100)),
       "records read")
    res = c.commit(offsets=[TopicPartition(topic, 0, 30), TopicPartition(topic, 1, 40)],
                   asynchronous=False)
    eq([(tp.partition, tp.offset, tp.error) for tp in res], [(0, 30, None), (1, 40, None)],
       "commit of explicit offsets")
    eq(committed(c, topic, 2), {0: 30, 1: 40}, "committed() after the explicit commit")
    res = c.commit(asynchronous=False)
    eq(sorted((tp.partition, tp.offset, tp.error) for tp in res), [(0, 50, None), (1, 50, None)],
       "commit of the positions")
    eq(committed(c, topic, 2), {0: 50, 1: 50}, "committed() after committing the positions")
    c.close()

    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        d = admin.describe_consumer_groups([group])[0]
        eq((d.state, d.protocol_type, list(d.members)), ("Empty", "", []),
           "a group used only for offsets")
        eq(dict(admin.list_consumer_groups()).get(group), "", "listed with no protocol type")
    finally:
        admin.close()

    produce(b, topic, [b"b-%d" % i for i in range(10)], 2)
    b.stop()
    b.start()
    c = consumer(b, group)
    eq(committed(c, topic, 2), {0: 50, 1: 50}, "committed() after a broker restart")
    c.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
    got = consume(c, 10)
    eq(sorted(v for _, _, v in got), sorted(b"b-%d" % i for i in range(10)),
       "a consumer assigned without offsets starts at the committed ones")
    c.commit(asynchronous=False)
    eq(committed(c, topic, 2), {0: 55, 1: 55}, "committed at the end")
    c.close()


def case_commit_into_live_group(t):
    b = t.broker(config=CONFIG)
    topic, group = "ck-live", "ck-live-group"
    kwire.create_topic(b.port, topic, 1)
    kwire.wait_coordinator(b.port)  # kafka-python's admin does not retry FindCoordinator
    produce(b, topic, [b"x"], 1)
    member = KafkaConsumer(topic, bootstrap_servers=b.bootstrap, group_id=group,
                           enable_auto_commit=False, auto_offset_reset="earliest",
                           session_timeout_ms=6000, heartbeat_interval_ms=500)
    stop = threading.Event()
    failure = []

    def run():
        try:
            while not stop.is_set():
                member.poll(timeout_ms=200)
        except Exception as e:
            failure.append(e)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        deadline = time.monotonic() + 30
        while admin.describe_consumer_groups([group])[0].state != "Stable":
            check(time.monotonic() < deadline, "the group never became Stable")
            time.sleep(0.1)
        c = consumer(b, group)
        try:
            c.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
            raise AssertionError("a generation -1 commit into a live group was accepted")
        except KafkaException as e:
            err = e.args[0]
            eq(err.code(), KafkaError.UNKNOWN_MEMBER_ID, "commit error (%s)" % err)
        c.close()
        eq(admin.list_consumer_group_offsets(group), {}, "offsets after the refused commit")
    finally:
        stop.set()
        th.join(30)
        member.close(autocommit=False)
        admin.close()
    eq(failure, [], "the member's poll loop")


if __name__ == "__main__":
    sys.exit(main([case_manual_assign_commit, case_commit_into_live_group]))
