#!/usr/bin/python3
"""kafka-python 2.0.2 consumer groups against samsa-broker.

    test_groups_kafka_python.py SAMSA_BROKER [-k CASE]

- subscribe_commit_resume: KafkaConsumer(group_id) subscribes to a
  3-partition topic, reads part of it and commits; a second consumer of the
  group resumes exactly after the committed offsets (nothing committed is
  read again, nothing is missed) and commits; it stays up while the broker
  restarts, rejoins, reads what is produced after the restart and commits
  again; a third consumer after another broker restart reads only what came
  after the last commit. committed() matches at every step.
- admin_list_describe: two consumers share a 4-partition topic; the
  KafkaAdminClient lists the group (protocol type "consumer") and describes
  it (Stable, protocol "range", both members with client id, client host,
  subscription and disjoint assignments covering every partition);
  delete_consumer_groups refuses a group with members (NON_EMPTY_GROUP) and
  an unknown one (GROUP_ID_NOT_FOUND), and deletes it once the members left
  (gone from the list; its offsets read back as none).
- manual_assign_commit: assign() without subscribe, commit() of explicit
  offsets with metadata (generation -1, an Empty group): committed() and
  list_consumer_group_offsets() read them back.
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.errors import CommitFailedError  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "5",
}
GROUP_NOT_FOUND = 69
NON_EMPTY_GROUP = 68


def produce(b, topic, values, partitions):
    p = KafkaProducer(bootstrap_servers=b.bootstrap, client_id="kp-producer",
                      request_timeout_ms=15000)
    try:
        futs = [p.send(topic, value=v, partition=i % partitions) for i, v in enumerate(values)]
        p.flush(timeout=60)
        for f in futs:
            f.get(timeout=30)
    finally:
        p.close()


def consumer(b, group, client_id, **kw):
    args = dict(bootstrap_servers=b.bootstrap, group_id=group, client_id=client_id,
                enable_auto_commit=False, auto_offset_reset="earliest",
                session_timeout_ms=6000, heartbeat_interval_ms=500,
                request_timeout_ms=30000, max_poll_records=40,
                reconnect_backoff_ms=100, reconnect_backoff_max_ms=1000,
                metadata_max_age_ms=5000)
    args.update(kw)
    return KafkaConsumer(**args)


def poll_until(c, pred, timeout, what):
    """Polls c, collecting (partition, offset, value), until pred(got)."""
    got = []
    deadline = time.monotonic() + timeout
    while not pred(got):
        if time.monotonic() > deadline:
            raise AssertionError("%s: timed out with %d record(s)" % (what, len(got)))
        for tp, recs in c.poll(timeout_ms=300).items():
            got.extend((tp.partition, r.offset, r.value) for r in recs)
    return got


def positions(c, topic, partitions):
    return {p: c.position(TopicPartition(topic, p)) for p in range(partitions)}


def committed(c, topic, partitions):
    return {p: c.committed(TopicPartition(topic, p)) for p in range(partitions)}


def case_subscribe_commit_resume(t):
    b = t.broker(config=CONFIG)
    topic, group = "kp-resume", "kp-resume-group"
    kwire.create_topic(b.port, topic, 3)
    first = [b"first-%d" % i for i in range(300)]
    produce(b, topic, first, 3)

    c1 = consumer(b, group, "kp-c1")
    c1.subscribe([topic])
    got1 = poll_until(c1, lambda g: len(g) >= 120, 60, "first consumer")
    c1.commit()
    pos1 = positions(c1, topic, 3)
    eq(committed(c1, topic, 3), pos1, "committed offsets after the first commit")
    c1.close(autocommit=False)
    eq(sum(pos1.values()), len(got1), "records read against the committed positions")

    c2 = consumer(b, group, "kp-c2")
    c2.subscribe([topic])
    got2 = poll_until(c2, lambda g: len(got1) + len(g) >= len(first), 60, "second consumer")
    seen1 = {(p, o) for p, o, _ in got1}
    again = [x for x in got2 if (x[0], x[1]) in seen1]
    eq(again, [], "records read again after the commit")
    eq(sorted(v for _, _, v in got1 + got2), sorted(first), "every record exactly once")
    for p, o, _ in got2:
        check(o >= pos1[p], "partition %d offset %d is below the committed %d", p, o, pos1[p])
    c2.commit()
    eq(committed(c2, topic, 3), {0: 100, 1: 100, 2: 100}, "committed offsets at the end")

    # the broker restarts under the live consumer: membership lives in the
    # broker's memory, so the consumer finds itself unknown and rejoins; a
    # commit of the old generation fails once (CommitFailedError) and the
    # rejoined consumer reads again from the committed offsets
    b.stop()
    b.start()
    second = [b"second-%d" % i for i in range(90)]
    produce(b, topic, second, 3)
    got3 = poll_until(c2, lambda g: {v for _, _, v in g} >= set(second), 90,
                      "the consumer after a restart")
    eq({v for _, _, v in got3}, set(second), "records after the broker restart")
    for p, o, _ in got3:
        check(o >= 100, "partition %d offset %d is below the committed 100", p, o)
    deadline = time.monotonic() + 60
    while True:
        try:
            c2.commit()
            break
        except CommitFailedError:
            check(time.monotonic() < deadline, "commits keep failing after the restart")
            # the next poll rejoins; what it reads again starts at 100
            for tp, recs in c2.poll(timeout_ms=500).items():
                got3.extend((tp.partition, r.offset, r.value) for r in recs)
    want = {0: 130, 1: 130, 2: 130}
    if positions(c2, topic, 3) != want:
        got3 += poll_until(c2, lambda g: positions(c2, topic, 3) == want, 60, "catch up")
        c2.commit()
    eq(committed(c2, topic, 3), want, "committed after the restart")
    c2.close(autocommit=False)

    # another restart; a new consumer reads only what came after the commit
    b.stop()
    b.start()
    produce(b, topic, [b"third-0", b"third-1", b"third-2"], 3)
    c3 = consumer(b, group, "kp-c3")
    c3.subscribe([topic])
    got4 = poll_until(c3, lambda g: len(g) >= 3, 60, "a new consumer after a broker restart")
    eq(sorted(v for _, _, v in got4), [b"third-0", b"third-1", b"third-2"],
       "what a new consumer reads after the committed offsets")
    eq(sorted((p, o) for p, o, _ in got4), [(0, 130), (1, 130), (2, 130)], "their offsets")
    c3.close(autocommit=False)


class Poller(threading.Thread):
    """Polls a consumer in its own thread until stopped."""

    def __init__(self, c):
        super().__init__(daemon=True)
        self.c = c
        self.stop_flag = threading.Event()
        self.error = None

    def run(self):
        try:
            while not self.stop_flag.is_set():
                self.c.poll(timeout_ms=200)
        except Exception as e:  # reported by the test
            self.error = e

    def finish(self):
        self.stop_flag.set()
        self.join(30)
        check(not self.is_alive(), "a poller did not stop")
        if self.error is not None:
            raise AssertionError("poller failed: %r" % self.error)
        self.c.close(autocommit=False)


def case_admin_list_describe(t):
    b = t.broker(config=CONFIG)
    topic, group = "kp-admin-topic", "kp-admin-group"
    kwire.create_topic(b.port, topic, 4)
    kwire.wait_coordinator(b.port)  # kafka-python's admin does not retry FindCoordinator
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, client_id="kp-admin",
                             request_timeout_ms=15000)
    pollers = []
    try:
        for cid in ("kp-a", "kp-b"):
            c = consumer(b, group, cid)
            c.subscribe([topic])
            pollers.append(Poller(c))
            pollers[-1].start()

        def stable_with_two():
            d = admin.describe_consumer_groups([group])[0]
            return d if d.state == "Stable" and len(d.members) == 2 else None

        deadline = time.monotonic() + 60
        d = None
        while d is None:
            check(time.monotonic() < deadline, "the group never became Stable with 2 members")
            d = stable_with_two()
            if d is None:
                time.sleep(0.2)
        eq((d.error_code, d.group, d.protocol_type, d.protocol), (0, group, "consumer", "range"),
           "described group")
        eq(sorted(m.client_id for m in d.members), ["kp-a", "kp-b"], "members' client ids")
        parts = []
        for m in d.members:
            eq(m.client_host, "/127.0.0.1", "client host")
            check(m.member_id.startswith(m.client_id + "-"), "member id %r", m.member_id)
            eq(list(m.member_metadata.subscription), [topic], "member subscription")
            for tname, ps in m.member_assignment.assignment:
                eq(tname, topic, "assigned topic")
                parts.extend(ps)
        eq(sorted(parts), [0, 1, 2, 3], "assignments: disjoint and complete")
        listed = dict(admin.list_consumer_groups())
        eq(listed.get(group), "consumer", "the group in list_consumer_groups")
        res = dict(admin.delete_consumer_groups([group, "kp-no-such-group"]))
        eq(res[group].errno, NON_EMPTY_GROUP, "deleting a group with members")
        eq(res["kp-no-such-group"].errno, GROUP_NOT_FOUND, "deleting an unknown group")
        # commit something as a member so the group has offsets
        pollers[0].stop_flag.set()
        pollers[0].join(30)
        c = pollers[0].c
        c.commit({TopicPartition(topic, p): OffsetAndMetadata(0, "") for p in
                  [tp.partition for tp in c.assignment()]})
        for p in pollers:
            p.finish()
        pollers = []
        res = dict(admin.delete_consumer_groups([group]))
        eq(res[group].errno, 0, "deleting the group once empty")
        check(group not in dict(admin.list_consumer_groups()), "a deleted group is listed")
        eq(admin.list_consumer_group_offsets(group), {}, "offsets of a deleted group")
    finally:
        for p in pollers:
            p.stop_flag.set()
        admin.close()


def case_manual_assign_commit(t):
    b = t.broker(config=CONFIG)
    topic, group = "kp-manual", "kp-manual-group"
    kwire.create_topic(b.port, topic, 2)
    produce(b, topic, [b"x%d" % i for i in range(20)], 2)
    c = consumer(b, group, "kp-manual")
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    c.assign(tps)
    c.seek_to_beginning()
    got = poll_until(c, lambda g: len(g) >= 20, 30, "manual consumer")
    eq(len(got), 20, "records read")
    c.commit({tps[0]: OffsetAndMetadata(7, "seven"), tps[1]: OffsetAndMetadata(3, None)})
    eq((c.committed(tps[0]), c.committed(tps[1])), (7, 3), "committed() after a manual commit")
    c.close(autocommit=False)
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        offs = admin.list_consumer_group_offsets(group)
        eq({tp.partition: (om.offset, om.metadata) for tp, om in offs.items()},
           {0: (7, "seven"), 1: (3, "")}, "list_consumer_group_offsets")
        d = admin.describe_consumer_groups([group])[0]
        eq((d.state, d.protocol_type, list(d.members)), ("Empty", "", []),
           "an offsets-only group")
    finally:
        admin.close()
    # a new manual consumer resumes from the committed offsets
    c = consumer(b, group, "kp-manual-2")
    c.assign(tps)
    got = poll_until(c, lambda g: len(g) >= 20 - 7 - 3, 30, "second manual consumer")
    eq(sorted((p, o) for p, o, _ in got), sorted([(0, o) for o in range(7, 10)]
                                                  + [(1, o) for o in range(3, 10)]),
       "resumed at the committed offsets")
    c.close(autocommit=False)


if __name__ == "__main__":
    sys.exit(main([case_subscribe_commit_resume, case_admin_list_describe,
                   case_manual_assign_commit]))
