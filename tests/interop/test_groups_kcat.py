#!/usr/bin/python3
"""kcat 1.7.1 (librdkafka 2.0.2) balanced consumers (-G) against samsa-broker.

    test_groups_kcat.py SAMSA_BROKER [-k CASE]

- three_members_six_partitions: three `kcat -G` members share a
  6-partition topic (the broker describes the group Stable, two partitions
  each, disjoint); 1,200 messages produced afterwards are each consumed
  exactly once, by the member that holds the partition; on SIGTERM each
  member commits and leaves (exit 0; the committed offsets are the
  partitions' ends; the group is Empty); after 60 more messages a new
  member reads exactly those, resuming after the committed offsets.
- stopped_member_is_replaced: one of three members is stopped (SIGSTOP)
  while its connection stays open; once its session timeout has passed the
  group is Stable again with the two others holding all six partitions
  (not before the timeout), and every message produced after the stop,
  also to the stopped member's partitions, is consumed by them.
"""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

from kafka import KafkaAdminClient, KafkaProducer  # noqa: E402
from kafka.coordinator.protocol import ConsumerProtocolMemberAssignment  # noqa: E402

SESSION_MS = 4000
CONFIG = {
    "group.initial.rebalance.delay.ms": "500",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "5",
}


class Member:
    """A `kcat -G` process writing "<partition> <offset> <value>" lines."""

    def __init__(self, t, b, group, topic, name):
        self.name = name
        self.out_path = t.path(name + ".out")
        self.err_path = t.path(name + ".err")
        argv = ["kcat", "-b", b.bootstrap, "-G", group, "-u", "-q",
                "-f", "%p %o %s\\n",
                "-X", "client.id=" + name,
                "-X", "auto.offset.reset=earliest",
                "-X", "session.timeout.ms=%d" % SESSION_MS,
                "-X", "heartbeat.interval.ms=300",
                "-X", "auto.commit.interval.ms=200",
                "-X", "fetch.wait.max.ms=100",
                "-X", "topic.metadata.refresh.interval.ms=2000",
                topic]
        self.out = open(self.out_path, "wb")
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.err)

    def lines(self):
        with open(self.out_path, "rb") as f:
            data = f.read()
        out = []
        for line in data.split(b"\n")[:-1]:   # a partial last line waits
            p, o, v = line.split(b" ", 2)
            out.append((int(p), int(o), v))
        return out

    def signal(self, sig):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def stop(self, timeout=30):
        """SIGTERM: kcat commits and leaves the group. Returns the status."""
        self.signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("%s did not exit within %d s of SIGTERM" % (self.name, timeout))
        self.out.close()
        self.err.close()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.out.close()
        self.err.close()

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")[-2000:]


def produce(b, topic, values, partitions):
    p = KafkaProducer(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        futs = [p.send(topic, value=v, partition=i % partitions) for i, v in enumerate(values)]
        p.flush(timeout=60)
        for f in futs:
            f.get(timeout=30)
    finally:
        p.close()


def describe(admin, group):
    d = admin.describe_consumer_groups([group])[0]
    members = {}
    for m in d.members:
        parts = []
        a = m.member_assignment
        if isinstance(a, bytes):
            # kafka-python decodes only what it can: empty outside Stable
            a = ConsumerProtocolMemberAssignment.decode(a) if a else None
        if a is not None:
            for _, ps in a.assignment:
                parts.extend(ps)
        members[m.client_id + "/" + m.member_id] = sorted(parts)
    return d.state, members


def wait_stable(admin, group, n, partitions, timeout, members=None):
    """Waits until the group is Stable with n members whose assignments are
    disjoint and cover range(partitions). Returns {client_id: [partitions]}."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        for m in members or []:
            check(m.proc.poll() is None, "%s exited (%s): %s", m.name, m.proc.returncode,
                  m.stderr())
        state, ms = describe(admin, group)
        last = (state, ms)
        parts = sorted(p for ps in ms.values() for p in ps)
        if state == "Stable" and len(ms) == n and parts == list(range(partitions)):
            return {k.split("/")[0]: v for k, v in ms.items()}
        time.sleep(0.2)
    raise AssertionError("group %s never became Stable with %d members over %d partitions; "
                         "last: %r" % (group, n, partitions, last))


def wait_lines(members, pred, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        got = {m.name: m.lines() for m in members}
        if pred(got):
            return got
        if time.monotonic() > deadline:
            raise AssertionError("%s: timed out; lines per member: %r"
                                 % (what, {k: len(v) for k, v in got.items()}))
        for m in members:
            check(m.proc.poll() is None, "%s exited (%s): %s", m.name, m.proc.returncode,
                  m.stderr())
        time.sleep(0.1)


def committed(admin, group):
    return {tp.partition: om.offset for tp, om in admin.list_consumer_group_offsets(group).items()}


def case_three_members_six_partitions(t):
    b = t.broker(config=CONFIG)
    topic, group = "kcat-group-topic", "kcat-group"
    kwire.create_topic(b.port, topic, 6)
    kwire.wait_coordinator(b.port)  # kafka-python's admin does not retry FindCoordinator
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    members = []
    try:
        members = [Member(t, b, group, topic, "m%d" % i) for i in range(3)]
        assignment = wait_stable(admin, group, 3, 6, 60, members)
        eq(sorted(len(v) for v in assignment.values()), [2, 2, 2], "partitions per member")
        values = [b"v-%d" % i for i in range(1200)]
        produce(b, topic, values, 6)

        def all_there(got):
            return sum(len(v) for v in got.values()) >= len(values)

        got = wait_lines(members, all_there, 60, "consuming 1200 messages")
        consumed = [x for v in got.values() for x in v]
        eq(sorted(x[2] for x in consumed), sorted(values), "messages consumed exactly once")
        for name, lines in got.items():
            for p, o, v in lines:
                eq(p in assignment[name], True, "%s consumed %s from partition %d" % (name, v, p))
                i = int(v[2:])
                eq((p, o), (i % 6, i // 6), "partition and offset of %s" % v)
        for m in members:
            eq(m.stop(), 0, "exit status of %s after SIGTERM" % m.name)
        eq(committed(admin, group), {p: 200 for p in range(6)},
           "offsets committed by the members on exit")
        state, ms = describe(admin, group)
        eq((state, ms), ("Empty", {}), "the group after the members left")
        # a new member resumes after the committed offsets
        more = [b"w-%d" % i for i in range(60)]
        produce(b, topic, more, 6)
        late = Member(t, b, group, topic, "late")
        members.append(late)
        got = wait_lines([late], lambda g: len(g["late"]) >= len(more), 60, "the new member")
        eq(late.stop(), 0, "exit status of the new member")
        lines = late.lines()
        eq(sorted(v for _, _, v in lines), sorted(more), "what the new member read")
        eq(sorted((p, o) for p, o, _ in lines), sorted((i % 6, 200 + i // 6) for i in range(60)),
           "where the new member started")
        eq(committed(admin, group), {p: 210 for p in range(6)}, "committed by the new member")
    finally:
        for m in members:
            if m.proc.poll() is None:
                m.kill()
        admin.close()


def case_stopped_member_is_replaced(t):
    b = t.broker(config=CONFIG)
    topic, group = "kcat-stop-topic", "kcat-stop"
    kwire.create_topic(b.port, topic, 6)
    kwire.wait_coordinator(b.port)  # kafka-python's admin does not retry FindCoordinator
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    members = []
    try:
        members = [Member(t, b, group, topic, "s%d" % i) for i in range(3)]
        assignment = wait_stable(admin, group, 3, 6, 60, members)
        victim, others = members[1], [members[0], members[2]]
        lost = assignment[victim.name]
        victim.signal(signal.SIGSTOP)
        stopped_at = time.monotonic()
        values = [b"after-stop-%d" % i for i in range(600)]
        produce(b, topic, values, 6)
        assignment2 = wait_stable(admin, group, 2, 6, 60, others)
        took = time.monotonic() - stopped_at
        check(took >= SESSION_MS / 1000.0 - 0.5,
              "the stopped member was replaced %.2f s after SIGSTOP, before its %d ms "
              "session timeout", took, SESSION_MS)
        eq(sorted(assignment2), ["s0", "s2"], "members after the session timeout")
        for p in lost:
            check(any(p in v for v in assignment2.values()),
                  "partition %d of the stopped member went to nobody", p)

        def all_there(got):
            seen = {v for lines in got.values() for _, _, v in lines}
            return seen >= set(values)

        got = wait_lines(others, all_there, 60, "the others to consume everything")
        taken_over = {p for lines in got.values() for p, _, v in lines
                      if v.startswith(b"after-stop-") and p in lost}
        eq(sorted(taken_over), sorted(lost), "the stopped member's partitions read by the others")
        check(not [x for x in victim.lines() if x[2].startswith(b"after-stop-")],
              "the stopped member consumed while stopped")
        victim.kill()
        for m in others:
            eq(m.stop(), 0, "exit status of %s" % m.name)
    finally:
        for m in members:
            if m.proc.poll() is None:
                m.kill()
        admin.close()


if __name__ == "__main__":
    sys.exit(main([case_three_members_six_partitions, case_stopped_member_is_replaced]))
