#!/usr/bin/python3
"""The records of __consumer_offsets in the versions Kafka 2.0 writes, read
raw as a tool built for Kafka 2.0 (Burrow 1.2.1) reads them, and groups
loaded back from them and from the v3 records older Samsa wrote.

    test_group_records.py SAMSA_BROKER [-k CASE]

- kafka_python_group: a kafka-python consumer in group "g20" reads 3
  records of "t" and commits. Fetched raw from __consumer_offsets: the
  offset commit is key v1 / value v1 (offset 3, metadata "", expire
  timestamp -1); the group metadata after the join is key v2 / value v1
  (GroupMetadataManager at 2.0.0), decoded with Kafka 2.0's v1 schema to
  its end: protocol type "consumer", protocol "range", the member as
  leader with its client id, host, rebalance timeout 300000 (kafka-python's
  max_poll_interval_ms), session timeout 10000, a subscription naming "t"
  and an assignment of t-0. After the consumer leaves, an empty v1 value.
  After SIGTERM and a start the group is loaded from those v1 records: the
  committed offset is 3 and DescribeGroups shows it Empty, "consumer".
- v3_records_of_older_samsa: group and offset records in the layout older
  Samsa wrote (group value v3 with current_state_timestamp and an instance
  id field, offset value v3 with a leader epoch) put in __consumer_offsets'
  segment while the broker is down: after the start the group is there
  (Empty, "consumer"), its offset 17 is committed, and a new commit by
  kafka-python is written as value v1 after them.
"""

import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

OFFSETS = "__consumer_offsets"
CONFIG = {"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1",
          "group.initial.rebalance.delay.ms": "0"}


class R:
    """Kafka's Struct reading: big-endian, int16-length strings."""

    def __init__(self, b):
        self.b, self.p = b, 0

    def take(self, fmt):
        (v,) = struct.unpack_from(">" + fmt, self.b, self.p)
        self.p += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.take("h")
        if n < 0:
            return None
        s = self.b[self.p:self.p + n].decode()
        self.p += n
        return s

    def bytes_(self):
        n = self.take("i")
        s = self.b[self.p:self.p + n]
        self.p += n
        return s

    def end(self, what):
        eq(self.p, len(self.b), "%s decoded to its end" % what)


def decode(key, value):
    """-> (key version, key fields, value version, value fields) as Kafka
    2.0's GroupMetadataManager (and Burrow) read them; value fields None for
    a tombstone or a version Kafka 2.0 cannot read."""
    k = R(key)
    kv = k.take("h")
    if kv in (0, 1):
        kf = (k.string(), k.string(), k.take("i"))
    else:
        kf = (k.string(),)
    k.end("key v%d" % kv)
    if value is None:
        return kv, kf, None, None
    v = R(value)
    vv = v.take("h")
    if kv in (0, 1) and vv == 1:
        vf = {"offset": v.take("q"), "metadata": v.string(), "commit_ts": v.take("q"),
              "expire_ts": v.take("q")}
        v.end("offset value v1")
    elif kv == 2 and vv in (0, 1):
        vf = {"protocol_type": v.string(), "generation": v.take("i"),
              "protocol": v.string(), "leader": v.string(), "members": []}
        for _ in range(v.take("i")):
            m = {"member_id": v.string(), "client_id": v.string(), "client_host": v.string()}
            if vv == 1:
                m["rebalance_timeout"] = v.take("i")
            m["session_timeout"] = v.take("i")
            m["subscription"] = v.bytes_()
            m["assignment"] = v.bytes_()
            vf["members"].append(m)
        v.end("group value v%d" % vv)
    else:
        vf = None
    return kv, kf, vv, vf


def offsets_records(port):
    recs, _ = kwire.read_partition(port, OFFSETS, 0)
    return [decode(r[2], r[3]) for r in recs]


def committed(bootstrap, group, topic):
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return c.committed(TopicPartition(topic, 0))
    finally:
        c.close()


def describe(bootstrap, group):
    """kafka-python's admin: (state, protocol_type) of the group."""
    from kafka.admin import KafkaAdminClient

    a = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        (g,) = a.describe_consumer_groups([group])
        return g.state, g.protocol_type
    finally:
        a.close()


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError("timed out waiting for %s" % what)


def case_kafka_python_group(t):
    from kafka import KafkaConsumer

    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "t", 1)
    kwire.produce(b.port, "t", 0, [(b"k", b"v%d" % i) for i in range(3)])
    c = KafkaConsumer("t", bootstrap_servers=b.bootstrap, group_id="g20",
                      client_id="g20-client", auto_offset_reset="earliest",
                      enable_auto_commit=False, session_timeout_ms=10000)
    got = []
    deadline = time.monotonic() + 60
    while len(got) < 3 and time.monotonic() < deadline:
        for recs in c.poll(timeout_ms=500).values():
            got += [r.value for r in recs]
    eq(got, [b"v0", b"v1", b"v2"], "consumed")
    c.commit()

    recs = offsets_records(b.port)
    offs = [r for r in recs if r[0] in (0, 1)]
    eq([(r[0], r[1], r[2]) for r in offs], [(1, ("g20", "t", 0), 1)],
       "offset commit records: key v1, value v1")
    v = offs[0][3]
    eq((v["offset"], v["metadata"], v["expire_ts"]), (3, "", -1), "offset value v1 fields")
    check(abs(v["commit_ts"] - time.time() * 1000) < 120000, "commit timestamp %d", v["commit_ts"])
    groups = [r for r in recs if r[0] == 2]
    check(groups, "no group metadata record: %r", recs)
    eq({(r[1], r[2]) for r in groups}, {(("g20",), 1)}, "group records: key v2, value v1")
    g = groups[-1][3]
    eq((g["protocol_type"], g["protocol"], g["generation"] >= 1, len(g["members"])),
       ("consumer", "range", True, 1), "group value v1")
    m = g["members"][0]
    eq(g["leader"], m["member_id"], "the member leads")
    check(m["member_id"].startswith("g20-client-"), "member id %r", m["member_id"])
    eq(m["client_id"], "g20-client", "client id")
    check(m["client_host"].startswith("/127.0.0.1"), "client host %r", m["client_host"])
    eq((m["rebalance_timeout"], m["session_timeout"]), (300000, 10000), "timeouts")
    check(b"\x00\x01t" in m["subscription"], "subscription %r", m["subscription"])
    check(b"\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x00" in m["assignment"],
          "assignment %r", m["assignment"])

    c.close()  # LeaveGroup: the group is empty
    recs = wait_for(lambda: (lambda rs: rs if rs[-1][0] == 2 and not rs[-1][3]["members"]
                             else None)(offsets_records(b.port)), 30, "the empty group record")
    eq((recs[-1][2], recs[-1][3]["protocol"]), (1, None), "the empty group's value v1")

    b.stop()
    b.start()
    kwire.wait_coordinator(b.port, "g20")
    eq(describe(b.bootstrap, "g20"), ("Empty", "consumer"), "group loaded from v1 records")
    eq(committed(b.bootstrap, "g20", "t"), 3, "offset loaded from a v1 record")
    b.stop()


def s16(s):
    if s is None:
        return struct.pack(">h", -1)
    return struct.pack(">h", len(s)) + s.encode()


def old_v3_records(now_ms):
    """The group "old3" and its offset of t-0 as older Samsa wrote them:
    group value v3 (Kafka 2.3's layout) and offset value v3 (2.1's)."""
    sub = struct.pack(">h", 0) + struct.pack(">i", 1) + s16("t") + struct.pack(">i", -1)
    asg = (struct.pack(">h", 0) + struct.pack(">i", 1) + s16("t") + struct.pack(">ii", 1, 0)
           + struct.pack(">i", -1))
    member = (s16("old3-client-1") + s16(None) + s16("old3-client") + s16("/127.0.0.1")
              + struct.pack(">ii", 300000, 10000)
              + struct.pack(">i", len(sub)) + sub + struct.pack(">i", len(asg)) + asg)
    group_v3 = (struct.pack(">h", 3) + s16("consumer") + struct.pack(">i", 4) + s16("range")
                + s16("old3-client-1") + struct.pack(">q", now_ms) + struct.pack(">i", 1)
                + member)
    # then the member left: generation 5, no protocol, no members
    empty_v3 = (struct.pack(">h", 3) + s16("consumer") + struct.pack(">i", 5) + s16(None)
                + s16(None) + struct.pack(">q", now_ms) + struct.pack(">i", 0))
    group_key = struct.pack(">h", 2) + s16("old3")
    offset_key = struct.pack(">h", 1) + s16("old3") + s16("t") + struct.pack(">i", 0)
    offset_v3 = struct.pack(">hqi", 3, 17, 0) + s16("") + struct.pack(">q", now_ms)
    return [(group_key, group_v3), (offset_key, offset_v3), (group_key, empty_v3)]


def case_v3_records_of_older_samsa(t):
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "t", 1)
    kwire.produce(b.port, "t", 0, [(b"k", b"v%d" % i) for i in range(20)])
    kwire.wait_coordinator(b.port)
    eq(kwire.list_offset(b.port, OFFSETS, 0, -1)[1], 0, "an empty __consumer_offsets")
    # SIGKILL: the next start recovers the segment and reads what it holds
    b.kill()
    seg = os.path.join(b.log_dir, OFFSETS + "-0", "%020d.log" % 0)
    eq(os.path.getsize(seg), 0, "the segment is empty")
    with open(seg, "ab") as f:
        f.write(kwire.record_batch(old_v3_records(int(time.time() * 1000))))
    b.start()
    kwire.wait_coordinator(b.port, "old3")
    eq([r[2] for r in offsets_records(b.port)], [3, 3, 3], "the v3 records are served")
    eq(describe(b.bootstrap, "old3"), ("Empty", "consumer"), "group loaded from v3 records")
    eq(committed(b.bootstrap, "old3", "t"), 17, "offset loaded from a v3 record")

    from kafka import KafkaConsumer, TopicPartition, OffsetAndMetadata

    c = KafkaConsumer(bootstrap_servers=b.bootstrap, group_id="old3", enable_auto_commit=False)
    c.commit({TopicPartition("t", 0): OffsetAndMetadata(19, "")})
    c.close()
    recs = offsets_records(b.port)
    eq((recs[-1][0], recs[-1][2]), (1, 1), "the new commit: key v1, value v1")
    eq(recs[-1][3]["offset"], 19, "the new commit's offset")
    b.stop()
    b.start()
    eq(committed(b.bootstrap, "old3", "t"), 19, "after a start: the v1 commit wins")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_kafka_python_group, case_v3_records_of_older_samsa]))
