#!/usr/bin/python3
"""The group coordinator of samsa-broker, on the wire (raw requests).

    test_groups_protocol.py SAMSA_BROKER [-k CASE]

What the real clients of the other test_groups_* scripts cannot show
directly: exact error codes per version and state, response order on a
connection with parked requests, timeouts, and the records in
__consumer_offsets.

- coordinator: the first FindCoordinator answers COORDINATOR_NOT_AVAILABLE
  while __consumer_offsets is being made (as Kafka); then FindCoordinator
  v0-v2 answer this broker, as Metadata does; __consumer_offsets appears
  (internal, offsets.topic.num.partitions partitions,
  cleanup.policy=compact); key type 1 (transactions) is refused. Every
  other case starts once the coordinator is there, as a client would.
- join_rules: INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT, UNKNOWN_MEMBER_ID;
  MEMBER_ID_REQUIRED (79) with a generated id for v4+ only (v0-v3 join at
  once); INCONSISTENT_GROUP_PROTOCOL for another protocol type or no common
  protocol.
- vote_and_leader: three members; the protocol most prefer among those all
  support wins; only the leader gets members[] with each member's metadata
  (BYTES with NULs) for that protocol; v5 carries group_instance_id.
- sync_and_order: followers' SyncGroup parks until the leader's; a request
  pipelined behind a parked SyncGroup on the same connection is answered
  after it; each member gets its own assignment (one left out gets empty
  bytes); DescribeGroups v0-v4 (Stable, protocol_data = the assignor,
  members, client host "/127.0.0.1"); ListGroups v0-v2.
- heartbeat_states: 0 in Stable and CompletingRebalance, 27 only in
  PreparingRebalance, 22 for a stale generation, 25 for unknown members,
  groups and Empty groups; LeaveGroup v0-v3.
- v0_rebalance_timeout: with JoinGroup v0 the rebalance waits for a member
  that keeps heartbeating but does not rejoin for its session timeout,
  then goes on without it.
- session_timeout: a member that stops heartbeating is removed after its
  session timeout (not before) and the group rebalances without it.
- disconnect_keeps_member: a JoinGroup parked on a connection that dies is
  cancelled (later requests on it too) but the member stays: it is part of
  the next generation and leaves only at its session timeout.
- initial_delay: group.initial.rebalance.delay.ms holds the first
  generation of a new group; members joining meanwhile share it.
- commit_rules: generation -1 commits to an unknown group (which becomes
  Empty) and to an Empty one; to a group with members: 25/22/27 or 0 by
  member, generation and state; OffsetCommit v0-v7 and OffsetFetch v0-v5
  (no offset: -1/""; null topics = all; leader epoch; metadata too large;
  unknown topic).
- records_and_partition: the records in __consumer_offsets partition
  abs(String.hashCode(group)) % partitions (group ids with non-ASCII, a
  surrogate pair, and one whose hash is Integer.MIN_VALUE), Kafka's key and
  value formats, tombstones after DeleteGroups; restart (SIGTERM and
  SIGKILL) loads them; DeleteGroups 68/69.
- expiry: offsets committed with a retention time (OffsetCommit v2) expire
  once the group is Empty (tombstone on disk, gone after a restart); the
  same in a group with a live member stay; default retention stays.
- shutdown_answers_parked: SIGTERM answers a parked JoinGroup with
  NOT_COORDINATOR and exits 0.
- many_groups: 5,000 offsets-only groups (commits pipelined on one
  connection) are all in ListGroups v0-v2 and DescribeGroups, a response far
  larger than its request.
"""

import os
import socket
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402
from kwire import array, i8, i16, i32, i64, nbytes, string  # noqa: E402

OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN_GROUP = 8, 9, 10, 11
HEARTBEAT, LEAVE_GROUP, SYNC_GROUP, DESCRIBE_GROUPS, LIST_GROUPS = 12, 13, 14, 15, 16
DELETE_GROUPS = 42

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
OFFSET_METADATA_TOO_LARGE = 12
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
REBALANCE_IN_PROGRESS = 27
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
MEMBER_ID_REQUIRED = 79

BASE_CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "7",
}


def java_hash(s):
    """Java's String.hashCode over UTF-16 code units."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group, partitions):
    h = java_hash(group)
    a = 0 if h == -(1 << 31) else abs(h)
    return a % partitions


# ---------------------------------------------------------------------------
# A connection speaking the group APIs


class Conn:
    def __init__(self, port, client_id="grp-it"):
        self.sock = kwire.connect(port)
        self.client_id = client_id
        self.corr = 0
        self.sent = []   # [(corr, api, version)] awaiting responses, in order

    def close(self):
        self.sock.close()

    def send(self, api, version, body):
        self.corr += 1
        self.sock.sendall(kwire.request(api, version, self.corr, body, client_id=self.client_id))
        self.sent.append((self.corr, api, version))
        return self.corr

    def recv(self, timeout=15.0):
        """The next response: (corr, api, version, kwire.Reader after the
        correlation id). Asserts it answers the oldest request sent."""
        payload = kwire.recv_frame(self.sock, timeout)
        corr, api, version = self.sent.pop(0)
        eq(kwire.correlation_id(payload), corr, "correlation id of the next response")
        return api, version, kwire.Reader(payload, 4)

    def call(self, api, version, body, timeout=15.0):
        self.send(api, version, body)
        return self.recv(timeout)[2]


# request bodies

def find_coordinator_req(version, key, key_type=0):
    return string(key) + (i8(key_type) if version >= 1 else b"")


def join_req(version, group, member_id="", session_ms=6000, rebalance_ms=10000,
             protocol_type="consumer", protocols=(("range", b"\x00meta\x00"),),
             instance_id=None):
    body = string(group) + i32(session_ms)
    if version >= 1:
        body += i32(rebalance_ms)
    body += string(member_id)
    if version >= 5:
        body += string(instance_id)
    body += string(protocol_type)
    body += array([string(n) + nbytes(m) for n, m in protocols])
    return body


def sync_req(version, group, generation, member_id, assignments=()):
    body = string(group) + i32(generation) + string(member_id)
    if version >= 3:
        body += string(None)
    return body + array([string(m) + nbytes(a) for m, a in assignments])


def heartbeat_req(version, group, generation, member_id):
    body = string(group) + i32(generation) + string(member_id)
    if version >= 3:
        body += string(None)
    return body


def leave_req(version, group, member_ids):
    if version < 3:
        return string(group) + string(member_ids[0])
    return string(group) + array([string(m) + string(None) for m in member_ids])


def commit_req(version, group, offsets, generation=-1, member_id="", retention_ms=-1,
               leader_epoch=-1):
    """offsets: {(topic, partition): (offset, metadata)}"""
    by_topic = {}
    for (t, p), (off, md) in sorted(offsets.items()):
        by_topic.setdefault(t, []).append((p, off, md))
    body = string(group)
    if version >= 1:
        body += i32(generation) + string(member_id)
    if version >= 7:
        body += string(None)
    if 2 <= version <= 4:
        body += i64(retention_ms)

    def part(x):
        p, off, md = x
        b = i32(p) + i64(off)
        if version >= 6:
            b += i32(leader_epoch)
        if version == 1:
            b += i64(-1)
        return b + string(md)

    return body + array([string(t) + array(ps, part) for t, ps in by_topic.items()])


def fetch_offsets_req(version, group, topics):
    """topics: {topic: [partitions]} or None (v2+: all)."""
    if topics is None:
        return string(group) + i32(-1)
    return string(group) + array([string(t) + array([i32(p) for p in ps])
                                  for t, ps in topics.items()])


def describe_req(version, groups):
    body = array([string(g) for g in groups])
    if version >= 3:
        body += i8(0)
    return body


# response parsers (the Reader stands after the correlation id)

def parse_find_coordinator(version, r):
    if version >= 1:
        r.i32()
    err = r.i16()
    msg = r.string() if version >= 1 else None
    return {"error": err, "message": msg, "node": r.i32(), "host": r.string(), "port": r.i32()}


def parse_join(version, r):
    if version >= 2:
        r.i32()
    out = {"error": r.i16(), "generation": r.i32(), "protocol": r.string(),
           "leader": r.string(), "member_id": r.string()}

    def member(r):
        mid = r.string()
        iid = r.string() if version >= 5 else None
        return (mid, iid, r.bytes_())

    out["members"] = r.array(member)
    eq(r.remaining(), 0, "bytes left after a JoinGroup v%d response" % version)
    return out


def parse_sync(version, r):
    if version >= 1:
        r.i32()
    err = r.i16()
    a = r.bytes_()
    eq(r.remaining(), 0, "bytes left after a SyncGroup v%d response" % version)
    return err, a


def parse_error_only(version, r, throttle_from=1):
    if version >= throttle_from:
        r.i32()
    return r.i16()


def parse_leave(version, r):
    if version >= 1:
        r.i32()
    err = r.i16()
    members = None
    if version >= 3:
        members = r.array(lambda r: (r.string(), r.string(), r.i16()))
    return err, members


def parse_commit(version, r):
    if version >= 3:
        r.i32()
    out = {}
    for t, parts in r.array(lambda r: (r.string(), r.array(lambda r: (r.i32(), r.i16())))):
        for p, err in parts:
            out[(t, p)] = err
    return out


def parse_fetch_offsets(version, r):
    if version >= 3:
        r.i32()

    def part(r):
        p = r.i32()
        off = r.i64()
        epoch = r.i32() if version >= 5 else None
        return p, (off, epoch, r.string(), r.i16())

    out = {}
    for t, parts in r.array(lambda r: (r.string(), r.array(part))):
        for p, v in parts:
            out[(t, p)] = v
    top = r.i16() if version >= 2 else None
    eq(r.remaining(), 0, "bytes left after an OffsetFetch v%d response" % version)
    return out, top


def parse_describe(version, r):
    if version >= 1:
        r.i32()

    def member(r):
        m = {"member_id": r.string()}
        if version >= 4:
            m["instance_id"] = r.string()
        m["client_id"] = r.string()
        m["client_host"] = r.string()
        m["metadata"] = r.bytes_()
        m["assignment"] = r.bytes_()
        return m

    def group(r):
        g = {"error": r.i16(), "group": r.string(), "state": r.string(),
             "protocol_type": r.string(), "protocol": r.string(), "members": r.array(member)}
        if version >= 3:
            g["authorized_operations"] = r.i32()
        return g

    out = r.array(group)
    eq(r.remaining(), 0, "bytes left after a DescribeGroups v%d response" % version)
    return out


def parse_list_groups(version, r):
    if version >= 1:
        r.i32()
    err = r.i16()
    return err, dict(r.array(lambda r: (r.string(), r.string())))


def parse_delete_groups(r):
    r.i32()
    return dict(r.array(lambda r: (r.string(), r.i16())))


# composite steps

def join(conn, group, version=3, member_id="", **kw):
    return parse_join(version, conn.call(JOIN_GROUP, version,
                                         join_req(version, group, member_id, **kw)))


def heartbeat(conn, group, generation, member_id, version=1):
    return parse_error_only(version, conn.call(HEARTBEAT, version,
                                               heartbeat_req(version, group, generation,
                                                             member_id)))


def sync(conn, group, generation, member_id, assignments=(), version=1):
    return parse_sync(version, conn.call(SYNC_GROUP, version,
                                         sync_req(version, group, generation, member_id,
                                                  assignments)))


def describe(conn, groups, version=2):
    return parse_describe(version, conn.call(DESCRIBE_GROUPS, version,
                                             describe_req(version, groups)))


def commit(conn, group, offsets, version=2, **kw):
    return parse_commit(version, conn.call(OFFSET_COMMIT, version,
                                           commit_req(version, group, offsets, **kw)))


def fetch_offsets(conn, group, topics, version=1):
    return parse_fetch_offsets(version, conn.call(OFFSET_FETCH, version,
                                                  fetch_offsets_req(version, group, topics)))


def list_groups(conn, version=0):
    return parse_list_groups(version, conn.call(LIST_GROUPS, version, b""))


def delete_groups(conn, groups, version=1):
    return parse_delete_groups(conn.call(DELETE_GROUPS, version,
                                         array([string(g) for g in groups])))


def stable_single(conn, group, **kw):
    """One member joins alone and syncs: (member_id, generation)."""
    j = join(conn, group, **kw)
    eq(j["error"], NONE, "JoinGroup error")
    err, _ = sync(conn, group, j["generation"], j["member_id"],
                  [(j["member_id"], b"assignment")])
    eq(err, NONE, "SyncGroup error")
    return j["member_id"], j["generation"]


def wait_for(cond, timeout, what, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(interval)
    raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))


def wait_members(conn, group, n, state="PreparingRebalance", timeout=10):
    """Polls DescribeGroups until the group has n members in `state`: the
    requests sent on other connections have been handled."""
    def ok():
        g = describe(conn, [group])[0]
        return g["state"] == state and len(g["members"]) == n
    wait_for(ok, timeout, "%s to have %d member(s) in %s" % (group, n, state), interval=0.05)


def decode_offsets_topic(log_dir, partition):
    """Every record of __consumer_offsets-partition on disk, decoded:
    [("offset", group, topic, p, value dict | None) | ("group", group, dict | None)]."""
    out = []
    for b in kwire.disk_batches(log_dir, "__consumer_offsets", partition):
        check(b.crc_ok(), "batch at %d has a bad CRC", b.base_offset)
        for _, _, key, value in b.records():
            k = kwire.Reader(key)
            kv = k.i16()
            if kv in (0, 1):
                group, topic, p = k.string(), k.string(), k.i32()
                eq(k.remaining(), 0, "bytes after an offset key")
                v = None
                if value is not None:
                    r = kwire.Reader(value)
                    vv = r.i16()
                    if vv == 1:
                        v = {"version": 1, "offset": r.i64(), "metadata": r.string(),
                             "commit": r.i64(), "expire": r.i64()}
                    elif vv == 3:
                        v = {"version": 3, "offset": r.i64(), "epoch": r.i32(),
                             "metadata": r.string(), "commit": r.i64()}
                    else:
                        raise AssertionError("offset value version %d" % vv)
                    eq(r.remaining(), 0, "bytes after an offset value")
                out.append(("offset", group, topic, p, v))
            elif kv == 2:
                group = k.string()
                eq(k.remaining(), 0, "bytes after a group key")
                v = None
                if value is not None:
                    # v1 (Kafka 2.0's, what the broker writes) or v3 (a member
                    # with a group instance id); members as v3's tuple, the
                    # instance id None in v1
                    r = kwire.Reader(value)
                    gv = r.i16()
                    if gv not in (1, 3):
                        raise AssertionError("group value version %d" % gv)
                    v = {"version": gv, "protocol_type": r.string(),
                         "generation": r.i32(), "protocol": r.string(), "leader": r.string(),
                         "state_ts": r.i64() if gv == 3 else None}
                    v["members"] = r.array(
                        lambda r: (r.string(), r.string() if gv == 3 else None, r.string(),
                                   r.string(), r.i32(), r.i32(), r.bytes_(), r.bytes_()))
                    eq(r.remaining(), 0, "bytes after a group value")
                out.append(("group", group, v))
            else:
                raise AssertionError("key version %d in __consumer_offsets" % kv)
    return out


def coordinated_broker(t, config):
    """A broker whose group coordinator is ready: __consumer_offsets is made
    on the first FindCoordinator, which a client sends before any group
    request (and retries while COORDINATOR_NOT_AVAILABLE, as here)."""
    b = t.broker(config=config)
    kwire.wait_coordinator(b.port)
    return b


# ---------------------------------------------------------------------------
# Cases


def case_coordinator(t):
    b = t.broker(config=BASE_CONFIG)
    c = Conn(b.port)
    # the first one starts making __consumer_offsets: not available until
    # it exists (Kafka's answer too), then this broker
    fc = parse_find_coordinator(0, c.call(FIND_COORDINATOR, 0, find_coordinator_req(0, "g")))
    eq((fc["error"], fc["node"]), (COORDINATOR_NOT_AVAILABLE, -1),
       "FindCoordinator before __consumer_offsets exists")
    waited = kwire.wait_coordinator(b.port)
    print("  FindCoordinator answered COORDINATOR_NOT_AVAILABLE %d more time(s)" % waited)
    for v in (0, 1, 2):
        fc = parse_find_coordinator(v, c.call(FIND_COORDINATOR, v, find_coordinator_req(v, "g")))
        eq((fc["error"], fc["node"], fc["host"], fc["port"]), (NONE, 0, "127.0.0.1", b.port),
           "FindCoordinator v%d" % v)
    fc = parse_find_coordinator(2, c.call(FIND_COORDINATOR, 2,
                                          find_coordinator_req(2, "txn", key_type=1)))
    eq(fc["error"], COORDINATOR_NOT_AVAILABLE, "FindCoordinator for a transactional id")
    # Metadata v1: the same broker, and the internal topic
    r = c.call(kwire.METADATA, 1, array([string("__consumer_offsets")]))
    brokers = r.array(lambda r: (r.i32(), r.string(), r.i32(), r.string()))
    eq([x[:3] for x in brokers], [(0, "127.0.0.1", b.port)], "Metadata brokers")
    r.i32()

    def part(r):
        r.i16()
        p = r.i32()
        r.i32()
        r.array(lambda r: r.i32())
        r.array(lambda r: r.i32())
        return p

    topics = r.array(lambda r: (r.i16(), r.string(), r.i8(), r.array(part)))
    eq(len(topics), 1, "topics in Metadata")
    err, name, internal, parts = topics[0]
    eq((err, name, internal, sorted(parts)), (NONE, "__consumer_offsets", 1, list(range(7))),
       "__consumer_offsets in Metadata")
    c.close()
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        res = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC,
                                                     "__consumer_offsets")])
        entries = {e[0]: e[1] for e in res[0].resources[0][4]}
        eq(entries.get("cleanup.policy"), "compact", "cleanup.policy of __consumer_offsets")
    finally:
        admin.close()


def case_join_rules(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    c = Conn(b.port)
    eq(join(c, "")["error"], INVALID_GROUP_ID, "JoinGroup with an empty group id")
    eq(join(c, "g", session_ms=100)["error"], INVALID_SESSION_TIMEOUT,
       "JoinGroup below group.min.session.timeout.ms")
    eq(join(c, "g", session_ms=400000)["error"], INVALID_SESSION_TIMEOUT,
       "JoinGroup above group.max.session.timeout.ms")
    eq(join(c, "g", member_id="nobody")["error"], UNKNOWN_MEMBER_ID,
       "JoinGroup with an unknown member id")
    # v4 and v5: the id first
    for v in (4, 5):
        j = join(c, "g%d" % v, version=v)
        eq(j["error"], MEMBER_ID_REQUIRED, "JoinGroup v%d without a member id" % v)
        check(j["member_id"].startswith("grp-it-") and len(j["member_id"]) == len("grp-it-") + 36,
              "generated member id %r is not <client id>-<uuid>", j["member_id"])
        eq(j["generation"], -1, "generation with MEMBER_ID_REQUIRED")
        j2 = join(c, "g%d" % v, version=v, member_id=j["member_id"])
        eq((j2["error"], j2["member_id"], j2["generation"], j2["leader"]),
           (NONE, j["member_id"], 1, j["member_id"]), "JoinGroup v%d with the given id" % v)
        eq(j2["members"], [(j["member_id"], None, b"\x00meta\x00")], "leader's members v%d" % v)
    # v0..v3: joined at once, never MEMBER_ID_REQUIRED
    for v in (0, 1, 2, 3):
        j = join(c, "h%d" % v, version=v)
        eq((j["error"], j["generation"]), (NONE, 1), "JoinGroup v%d without a member id" % v)
        eq(j["leader"], j["member_id"], "leader of a one-member group v%d" % v)
    # protocols must agree with the group's
    c2 = Conn(b.port)
    eq(join(c2, "h3", protocol_type="connect")["error"], INCONSISTENT_GROUP_PROTOCOL,
       "JoinGroup with another protocol type")
    eq(join(c2, "h3", protocols=(("other", b""),))["error"], INCONSISTENT_GROUP_PROTOCOL,
       "JoinGroup without a common protocol")
    eq(join(c2, "fresh", protocols=())["error"], INCONSISTENT_GROUP_PROTOCOL,
       "JoinGroup without protocols")
    c.close()
    c2.close()


def case_vote_and_leader(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    ca, cb, cc = Conn(b.port, "a"), Conn(b.port, "b"), Conn(b.port, "c")
    meta = {("a", "range"): b"A\x00r", ("a", "roundrobin"): b"A\x00rr",
            ("b", "roundrobin"): b"B\x00rr", ("b", "range"): b"B\x00r",
            ("b", "sticky"): b"B\x00s", ("c", "roundrobin"): b"\x00C\x00rr\xff",
            ("c", "range"): b"C\x00r"}
    prefs = {"a": ["range", "roundrobin"], "b": ["sticky", "roundrobin", "range"],
             "c": ["roundrobin", "range"]}

    def protos(who):
        return tuple((p, meta[(who, p)]) for p in prefs[who])

    ja = join(ca, "vote", version=5, member_id="", protocols=protos("a"))
    ja = join(ca, "vote", version=5, member_id=ja["member_id"], protocols=protos("a"))
    eq((ja["error"], ja["generation"], ja["protocol"]), (NONE, 1, "range"), "first generation")
    # b and c join: a must rejoin for the rebalance to end
    ids = {"a": ja["member_id"]}
    for who, conn in (("b", cb), ("c", cc)):
        j = join(conn, "vote", version=5, protocols=protos(who))
        eq(j["error"], MEMBER_ID_REQUIRED, "first join of %s" % who)
        ids[who] = j["member_id"]
        conn.send(JOIN_GROUP, 5, join_req(5, "vote", ids[who], protocols=protos(who)))
    wait_members(ca, "vote", 3)
    ca.send(JOIN_GROUP, 5, join_req(5, "vote", ids["a"], protocols=protos("a")))
    results = {}
    for who, conn in (("a", ca), ("b", cb), ("c", cc)):
        _, v, r = conn.recv()
        results[who] = parse_join(v, r)
    for who in "abc":
        j = results[who]
        eq((j["error"], j["generation"], j["member_id"]), (NONE, 2, ids[who]),
           "generation 2 join of %s" % who)
        # votes: a -> range, b -> roundrobin (sticky is not common), c -> roundrobin
        eq(j["protocol"], "roundrobin", "protocol chosen by vote (%s)" % who)
        eq(j["leader"], ids["a"], "the leader stays the leader (%s)" % who)
    eq(sorted(results["a"]["members"]),
       sorted((ids[w], None, meta[(w, "roundrobin")]) for w in "abc"),
       "the leader's members[]: each member's roundrobin metadata")
    eq(results["b"]["members"], [], "a follower's members[]")
    eq(results["c"]["members"], [], "a follower's members[]")
    for conn in (ca, cb, cc):
        conn.close()


def case_sync_and_order(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    cl, cf1, cf2 = Conn(b.port, "leader"), Conn(b.port, "f1"), Conn(b.port, "f2")
    jl = join(cl, "sync")
    # two followers join; the leader rejoins to end the rebalance
    cf1.send(JOIN_GROUP, 3, join_req(3, "sync"))
    cf2.send(JOIN_GROUP, 3, join_req(3, "sync"))
    wait_members(cl, "sync", 3)
    jl = join(cl, "sync", member_id=jl["member_id"])
    j1 = parse_join(3, cf1.recv()[2])
    j2 = parse_join(3, cf2.recv()[2])
    gen = jl["generation"]
    eq((jl["error"], j1["error"], j2["error"], j1["generation"], j2["generation"]),
       (NONE, NONE, NONE, gen, gen), "generation of all three")
    eq(len(jl["members"]), 3, "members the leader got")
    # followers sync first: parked; a request behind it on the same
    # connection waits for it
    cf1.send(SYNC_GROUP, 1, sync_req(1, "sync", gen, j1["member_id"]))
    cf1.send(kwire.API_VERSIONS, 0, b"")
    cf2.send(SYNC_GROUP, 3, sync_req(3, "sync", gen, j2["member_id"]))
    for conn in (cf1, cf2):
        conn.sock.settimeout(0.5)
        try:
            data = conn.sock.recv(1, socket.MSG_PEEK)
            raise AssertionError("a follower got %r before the leader's SyncGroup" % data)
        except socket.timeout:
            pass
    # heartbeats in CompletingRebalance answer 0
    eq(heartbeat(cl, "sync", gen, jl["member_id"]), NONE, "heartbeat in CompletingRebalance")
    # the leader assigns to itself and f1 only
    err, mine = sync(cl, "sync", gen, jl["member_id"],
                     [(jl["member_id"], b"L\x00"), (j1["member_id"], b"\x00F1"),
                      ("not-a-member", b"x")])
    eq((err, mine), (NONE, b"L\x00"), "leader's SyncGroup")
    api, v, r = cf1.recv()
    eq((api, parse_sync(v, r)), (SYNC_GROUP, (NONE, b"\x00F1")), "f1's parked SyncGroup")
    api, v, r = cf1.recv()
    eq(api, kwire.API_VERSIONS, "the request after f1's SyncGroup")
    eq(parse_sync(3, cf2.recv()[2]), (NONE, b""), "f2's SyncGroup (left out: empty)")
    # Stable: a late SyncGroup is answered at once
    eq(sync(cf2, "sync", gen, j2["member_id"], version=3), (NONE, b""), "SyncGroup in Stable")
    eq(sync(cf2, "sync", gen + 1, j2["member_id"]), (ILLEGAL_GENERATION, b""),
       "SyncGroup of another generation")
    eq(sync(cf2, "sync", gen, "nobody"), (UNKNOWN_MEMBER_ID, b""), "SyncGroup of a stranger")
    for v in range(0, 5):
        d = describe(cl, ["sync", "unknown-group"], version=v)
        g = d[0]
        eq((g["error"], g["group"], g["state"], g["protocol_type"], g["protocol"]),
           (NONE, "sync", "Stable", "consumer", "range"), "DescribeGroups v%d" % v)
        members = {m["member_id"]: m for m in g["members"]}
        eq(set(members), {jl["member_id"], j1["member_id"], j2["member_id"]},
           "described members v%d" % v)
        eq(members[j1["member_id"]]["client_id"], "f1", "client id")
        eq(members[j1["member_id"]]["client_host"], "/127.0.0.1", "client host")
        eq(members[j1["member_id"]]["metadata"], b"\x00meta\x00", "member metadata")
        eq(members[j1["member_id"]]["assignment"], b"\x00F1", "member assignment")
        if v >= 3:
            eq(g["authorized_operations"], -(1 << 31), "authorized operations v%d" % v)
        if v >= 4:
            eq(members[j1["member_id"]]["instance_id"], None, "group instance id v4")
        eq((d[1]["error"], d[1]["state"], d[1]["members"]), (NONE, "Dead", []),
           "DescribeGroups of an unknown group v%d" % v)
    for v in (0, 1, 2):
        err, groups = list_groups(cl, v)
        eq((err, groups.get("sync")), (NONE, "consumer"), "ListGroups v%d" % v)
    for conn in (cl, cf1, cf2):
        conn.close()


def case_heartbeat_states(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    ca, cb = Conn(b.port, "a"), Conn(b.port, "b")
    ma, gen = stable_single(ca, "hb")
    for v in range(0, 4):
        eq(heartbeat(ca, "hb", gen, ma, version=v), NONE, "heartbeat v%d in Stable" % v)
    eq(heartbeat(ca, "hb", gen - 1, ma), ILLEGAL_GENERATION, "heartbeat, old generation")
    eq(heartbeat(ca, "hb", gen, "nobody"), UNKNOWN_MEMBER_ID, "heartbeat of a stranger")
    eq(heartbeat(ca, "no-such-group", 1, ma), UNKNOWN_MEMBER_ID, "heartbeat, unknown group")
    eq(heartbeat(ca, "", 1, ma), INVALID_GROUP_ID, "heartbeat, empty group id")
    # b joins: PreparingRebalance until a rejoins
    cb.send(JOIN_GROUP, 3, join_req(3, "hb"))
    wait_members(ca, "hb", 2)
    for v in range(0, 4):
        eq(heartbeat(ca, "hb", gen, ma, version=v), REBALANCE_IN_PROGRESS,
           "heartbeat v%d in PreparingRebalance" % v)
    ja = join(ca, "hb", member_id=ma)
    jb = parse_join(3, cb.recv()[2])
    gen2 = ja["generation"]
    eq((ja["error"], jb["error"], gen2), (NONE, NONE, gen + 1), "the rebalance")
    eq(heartbeat(cb, "hb", gen2, jb["member_id"]), NONE, "heartbeat in CompletingRebalance")
    eq(heartbeat(ca, "hb", gen, ma), ILLEGAL_GENERATION, "heartbeat, old generation")
    eq(sync(ca, "hb", gen2, ma, [(ma, b"a"), (jb["member_id"], b"b")]), (NONE, b"a"), "sync")
    eq(sync(cb, "hb", gen2, jb["member_id"]), (NONE, b"b"), "sync b")
    # LeaveGroup v1 (b), then v3 with an unknown member and a: Empty
    err, _ = parse_leave(1, cb.call(LEAVE_GROUP, 1, leave_req(1, "hb", [jb["member_id"]])))
    eq(err, NONE, "LeaveGroup v1")
    err, _ = parse_leave(1, cb.call(LEAVE_GROUP, 1, leave_req(1, "hb", [jb["member_id"]])))
    eq(err, UNKNOWN_MEMBER_ID, "LeaveGroup v1 again")
    eq(heartbeat(ca, "hb", gen2, ma), REBALANCE_IN_PROGRESS, "heartbeat after a leave")
    ja = join(ca, "hb", member_id=ma)
    eq((ja["error"], ja["generation"]), (NONE, gen2 + 1), "rejoin after the leave")
    err, members = parse_leave(3, ca.call(LEAVE_GROUP, 3, leave_req(3, "hb", ["ghost", ma])))
    eq((err, members), (NONE, [("ghost", None, UNKNOWN_MEMBER_ID), (ma, None, NONE)]),
       "LeaveGroup v3")
    g = describe(ca, ["hb"])[0]
    eq((g["state"], g["members"], g["protocol_type"]), ("Empty", [], "consumer"),
       "the group after the last member left")
    eq(heartbeat(ca, "hb", gen2 + 2, ma), UNKNOWN_MEMBER_ID, "heartbeat in an Empty group")
    err, _ = parse_leave(0, ca.call(LEAVE_GROUP, 0, leave_req(0, "no-such-group", ["x"])),)
    eq(err, UNKNOWN_MEMBER_ID, "LeaveGroup v0 of an unknown group")
    ca.close()
    cb.close()


def case_v0_rebalance_timeout(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    ca, cb = Conn(b.port, "a"), Conn(b.port, "b")
    session = 3000
    ja = join(ca, "v0", version=0, session_ms=session)
    eq(ja["error"], NONE, "a joins (v0)")
    eq(sync(ca, "v0", ja["generation"], ja["member_id"], version=0)[0], NONE, "a syncs")
    # b joins with v0: a keeps heartbeating (27) but never rejoins
    t0 = time.monotonic()
    cb.send(JOIN_GROUP, 0, join_req(0, "v0", session_ms=session))
    wait_members(ca, "v0", 2)
    answered = None
    while answered is None and time.monotonic() - t0 < 20:
        err = heartbeat(ca, "v0", ja["generation"], ja["member_id"], version=0)
        check(err in (REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID), "heartbeat error %d", err)
        cb.sock.settimeout(0.2)
        try:
            cb.sock.recv(1, socket.MSG_PEEK)
            answered = time.monotonic() - t0
        except socket.timeout:
            pass
    check(answered is not None, "b's JoinGroup v0 was never answered")
    jb = parse_join(0, cb.recv()[2])
    eq((jb["error"], jb["generation"], jb["leader"]), (NONE, 2, jb["member_id"]),
       "b's join after the rebalance timeout")
    eq([m[0] for m in jb["members"]], [jb["member_id"]], "generation 2 without a")
    check(answered >= session / 1000.0 - 0.3,
          "the v0 rebalance ended after %.2f s, before the session timeout (%d ms)",
          answered, session)
    check(answered < session / 1000.0 + 3,
          "the v0 rebalance took %.2f s for a %d ms session timeout", answered, session)
    eq(heartbeat(ca, "v0", ja["generation"], ja["member_id"], version=0), UNKNOWN_MEMBER_ID,
       "a after it was left out")
    ca.close()
    cb.close()


def case_session_timeout(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    ca, cb = Conn(b.port, "a"), Conn(b.port, "b")
    ja = join(ca, "st", session_ms=10000)
    cb.send(JOIN_GROUP, 3, join_req(3, "st", session_ms=2000))
    wait_members(ca, "st", 2)
    ja = join(ca, "st", member_id=ja["member_id"], session_ms=10000)
    jb = parse_join(3, cb.recv()[2])
    gen = ja["generation"]
    ma, mb = ja["member_id"], jb["member_id"]
    eq(sync(ca, "st", gen, ma, [(ma, b"p0,p1"), (mb, b"p2,p3")]), (NONE, b"p0,p1"), "a syncs")
    eq(sync(cb, "st", gen, mb), (NONE, b"p2,p3"), "b syncs")
    eq(heartbeat(cb, "st", gen, mb), NONE, "b's last heartbeat")
    last_b = time.monotonic()
    # b goes silent (its connection stays open); a heartbeats on
    rebalancing_after = None
    while time.monotonic() - last_b < 15:
        err = heartbeat(ca, "st", gen, ma)
        if err == REBALANCE_IN_PROGRESS:
            rebalancing_after = time.monotonic() - last_b
            break
        eq(err, NONE, "a's heartbeat while b is silent")
        time.sleep(0.2)
    check(rebalancing_after is not None, "b was never removed")
    check(rebalancing_after >= 2.0 - 0.3, "b was removed %.2f s after its last heartbeat, "
          "before its 2 s session timeout", rebalancing_after)
    ja = join(ca, "st", member_id=ma, session_ms=10000)
    eq((ja["error"], ja["generation"], [m[0] for m in ja["members"]]), (NONE, gen + 1, [ma]),
       "the generation after b's removal")
    eq(sync(ca, "st", gen + 1, ma, [(ma, b"p0,p1,p2,p3")]), (NONE, b"p0,p1,p2,p3"),
       "a takes b's partitions")
    eq(heartbeat(cb, "st", gen, mb), UNKNOWN_MEMBER_ID, "b after its removal")
    ca.close()
    cb.close()


def case_disconnect_keeps_member(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    ca = Conn(b.port, "a")
    ma, gen = stable_single(ca, "dc", session_ms=10000)
    # b joins and parks; a request is pipelined behind it; then b's
    # connection dies
    cb = Conn(b.port, "b")
    cb.send(JOIN_GROUP, 3, join_req(3, "dc", session_ms=2500))
    cb.send(kwire.API_VERSIONS, 0, b"")
    wait_members(ca, "dc", 2)
    cb.close()
    # a rejoins: b still counts as joined, as in Kafka
    ja = join(ca, "dc", member_id=ma, session_ms=10000)
    eq((ja["error"], ja["generation"], len(ja["members"])), (NONE, gen + 1, 2),
       "the generation after b's connection died")
    mb = [m[0] for m in ja["members"] if m[0] != ma][0]
    eq(sync(ca, "dc", gen + 1, ma, [(ma, b"x"), (mb, b"y")]), (NONE, b"x"), "a syncs")
    # b never heartbeats: it goes after its session timeout
    t0 = time.monotonic()

    def rebalancing():
        return heartbeat(ca, "dc", gen + 1, ma) == REBALANCE_IN_PROGRESS

    wait_for(rebalancing, 15, "b's removal")
    check(time.monotonic() - t0 >= 2.0, "b was removed %.2f s after the generation started, "
          "before its 2.5 s session timeout", time.monotonic() - t0)
    ja = join(ca, "dc", member_id=ma, session_ms=10000)
    eq((ja["error"], [m[0] for m in ja["members"]]), (NONE, [ma]), "a alone again")
    # the broker still serves new connections
    c = Conn(b.port)
    eq(kwire.parse_api_versions_v0(kwire.roundtrip(c.sock, kwire.api_versions_v0(1)))[1], 0,
       "ApiVersions on a new connection")
    c.close()
    ca.close()


def case_initial_delay(t):
    cfg = dict(BASE_CONFIG)
    cfg["group.initial.rebalance.delay.ms"] = "1500"
    b = coordinated_broker(t, config=cfg)
    ca, cb = Conn(b.port, "a"), Conn(b.port, "b")
    t0 = time.monotonic()
    ca.send(JOIN_GROUP, 3, join_req(3, "delay", rebalance_ms=20000))
    time.sleep(0.5)
    cb.send(JOIN_GROUP, 3, join_req(3, "delay", rebalance_ms=20000))
    ja = parse_join(3, ca.recv(timeout=30)[2])
    took = time.monotonic() - t0
    jb = parse_join(3, cb.recv(timeout=30)[2])
    eq((ja["error"], jb["error"], ja["generation"], jb["generation"]), (NONE, NONE, 1, 1),
       "both members in the first generation")
    eq(sorted(m[0] for m in ja["members"]), sorted([ja["member_id"], jb["member_id"]]),
       "the leader's members")
    check(took >= 1.5, "the first generation came after %.2f s, before the 1.5 s delay", took)
    ca.close()
    cb.close()


def case_commit_rules(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    kwire.create_topic(b.port, "ct", 2)
    c = Conn(b.port)
    tp0, tp1 = ("ct", 0), ("ct", 1)
    # generation -1 to an unknown group: it becomes Empty
    eq(commit(c, "admin-only", {tp0: (5, "m5"), tp1: (7, None)}), {tp0: NONE, tp1: NONE},
       "commit -1 to an unknown group")
    d = describe(c, ["admin-only"])[0]
    eq((d["state"], d["protocol_type"], d["members"]), ("Empty", "", []), "the offsets-only group")
    offs, _ = fetch_offsets(c, "admin-only", {"ct": [0, 1, 5], "nope": [0]}, version=1)
    eq(offs, {("ct", 0): (5, None, "m5", NONE), ("ct", 1): (7, None, "", NONE),
              ("ct", 5): (-1, None, "", NONE), ("nope", 0): (-1, None, "", NONE)},
       "OffsetFetch v1")
    for v in range(0, 8):
        res = commit(c, "admin-only", {tp0: (10 + v, "v%d" % v)}, version=v, leader_epoch=3)
        eq(res, {tp0: NONE}, "OffsetCommit v%d" % v)
        offs, top = fetch_offsets(c, "admin-only", {"ct": [0]}, version=min(v, 5))
        epoch = (3 if v >= 6 else -1) if v >= 5 else None
        eq(offs[tp0], (10 + v, epoch if min(v, 5) >= 5 else None, "v%d" % v, NONE),
           "OffsetFetch after OffsetCommit v%d" % v)
    for v in (2, 3, 4, 5):
        offs, top = fetch_offsets(c, "admin-only", None, version=v)
        eq((sorted(offs), top), ([tp0, tp1], NONE), "OffsetFetch v%d of all partitions" % v)
    offs, top = fetch_offsets(c, "no-such-group", None, version=2)
    eq((offs, top), ({}, NONE), "OffsetFetch of all partitions of an unknown group")
    eq(commit(c, "admin-only", {tp0: (1, "x" * 5000)}), {tp0: OFFSET_METADATA_TOO_LARGE},
       "metadata above offset.metadata.max.bytes")
    eq(commit(c, "admin-only", {("nope", 0): (1, ""), ("ct", 9): (1, "")}),
       {("nope", 0): UNKNOWN_TOPIC_OR_PARTITION, ("ct", 9): UNKNOWN_TOPIC_OR_PARTITION},
       "commit to partitions that do not exist")
    eq(commit(c, "never-seen", {tp0: (1, "")}, generation=3, member_id="m"),
       {tp0: ILLEGAL_GENERATION}, "commit of a generation to an unknown group")
    # a group with a member
    cm = Conn(b.port, "member")
    jm = join(cm, "live")
    gen, mid = jm["generation"], jm["member_id"]
    eq(commit(c, "live", {tp0: (1, "")}, generation=gen, member_id=mid),
       {tp0: REBALANCE_IN_PROGRESS}, "commit in CompletingRebalance")
    eq(sync(cm, "live", gen, mid, [(mid, b"")])[0], NONE, "sync")
    eq(commit(c, "live", {tp0: (1, "")}), {tp0: UNKNOWN_MEMBER_ID},
       "commit -1 to a group with members")
    eq(commit(c, "live", {tp0: (1, "")}, generation=gen + 5, member_id=mid),
       {tp0: ILLEGAL_GENERATION}, "commit of another generation")
    eq(commit(c, "live", {tp0: (1, "")}, generation=gen, member_id="x"),
       {tp0: UNKNOWN_MEMBER_ID}, "commit of a stranger")
    eq(commit(c, "live", {tp0: (42, "")}, generation=gen, member_id=mid), {tp0: NONE},
       "commit of the member")
    # PreparingRebalance: commits of the current generation still go
    c2 = Conn(b.port, "other")
    c2.send(JOIN_GROUP, 3, join_req(3, "live"))
    wait_members(c, "live", 2)
    eq(commit(c, "live", {tp0: (43, "")}, generation=gen, member_id=mid, version=5),
       {tp0: NONE}, "commit in PreparingRebalance")
    eq(fetch_offsets(c, "live", {"ct": [0]}, version=3)[0][tp0][0], 43, "committed offset")
    eq(commit(c, "", {tp0: (1, "")}), {tp0: NONE}, "commit to the empty group id")
    for conn in (c, cm, c2):
        conn.close()


def case_records_and_partition(t):
    cfg = dict(BASE_CONFIG)
    cfg.pop("offsets.topic.num.partitions")   # Kafka's default: 50
    b = coordinated_broker(t, config=cfg)
    kwire.create_topic(b.port, "rt", 3)
    c = Conn(b.port)
    groups = ["plain-group", "grüppe-Ω", "emoji-\U0001F600-group", "polygenelubricants"]
    eq(java_hash("polygenelubricants"), -(1 << 31), "Java hash of polygenelubricants")
    for i, g in enumerate(groups):
        eq(commit(c, g, {("rt", 0): (100 + i, "md-%d" % i), ("rt", 2): (200 + i, "")},
                  version=5), {("rt", 0): NONE, ("rt", 2): NONE}, "commit of %s" % g)
    eq(commit(c, "retained", {("rt", 1): (9, "")}, version=2, retention_ms=86400000),
       {("rt", 1): NONE}, "commit with a retention time")
    cm = Conn(b.port, "m")
    ms, gen = stable_single(cm, "with-members", session_ms=60000)
    log_dir = b.log_dir
    eq(len([d for d in os.listdir(log_dir) if d.startswith("__consumer_offsets-")]), 50,
       "partitions of __consumer_offsets")
    for i, g in enumerate(groups):
        p = partition_for(g, 50)
        recs = [x for x in decode_offsets_topic(log_dir, p) if x[1] == g]
        eq([(x[0], x[2], x[3], x[4]["version"], x[4]["offset"], x[4]["metadata"])
            for x in recs],
           [("offset", "rt", 0, 1, 100 + i, "md-%d" % i), ("offset", "rt", 2, 1, 200 + i, "")],
           "records of %s in __consumer_offsets-%d (Kafka 2.0's value v1)" % (g, p))
        check(all(x[4]["expire"] == -1 and abs(x[4]["commit"] - time.time() * 1000) < 60000
                  for x in recs), "values of %s: %r", g, recs)
        for q in range(50):
            if q != p:
                check(not any(x[1] == g for x in decode_offsets_topic(log_dir, q)),
                      "a record of %s in __consumer_offsets-%d", g, q)
    eq(partition_for("polygenelubricants", 50), 0, "partition of a MIN_VALUE hash")
    rec = [x for x in decode_offsets_topic(log_dir, partition_for("retained", 50))
           if x[1] == "retained"]
    eq((rec[0][4]["version"], rec[0][4]["expire"] - rec[0][4]["commit"]), (1, 86400000),
       "value v1 with an expire timestamp")
    grec = [x for x in decode_offsets_topic(log_dir, partition_for("with-members", 50))
            if x[0] == "group" and x[1] == "with-members"]
    check(grec and grec[-1][2]["version"] == 1 and grec[-1][2]["generation"] == gen
          and grec[-1][2]["protocol"] == "range"
          and grec[-1][2]["members"][0][0] == ms and grec[-1][2]["members"][0][7] == b"assignment",
          "group metadata record: %r", grec)
    # DeleteGroups
    eq(delete_groups(c, ["grüppe-Ω", "with-members", "nobody"], version=0),
       {"grüppe-Ω": NONE, "with-members": NON_EMPTY_GROUP, "nobody": GROUP_ID_NOT_FOUND},
       "DeleteGroups v0")
    eq(delete_groups(c, ["grüppe-Ω"]), {"grüppe-Ω": GROUP_ID_NOT_FOUND}, "DeleteGroups again")
    eq(describe(c, ["grüppe-Ω"])[0]["state"], "Dead", "a deleted group")
    check("grüppe-Ω" not in list_groups(c)[1], "a deleted group in ListGroups")
    p = partition_for("grüppe-Ω", 50)
    tail = [x for x in decode_offsets_topic(log_dir, p) if x[1] == "grüppe-Ω"][-3:]
    eq(sorted((x[0], x[-1]) for x in tail),
       [("group", None), ("offset", None), ("offset", None)], "tombstones after DeleteGroups")
    c.close()
    cm.close()
    # restarts: SIGTERM, then SIGKILL
    for how in ("stop", "kill"):
        getattr(b, how)()
        b.start()
        c = Conn(b.port)
        for i, g in enumerate(groups):
            offs, _ = fetch_offsets(c, g, {"rt": [0, 1, 2]}, version=5)
            want = {("rt", 0): (100 + i, -1, "md-%d" % i, NONE), ("rt", 1): (-1, -1, "", NONE),
                    ("rt", 2): (200 + i, -1, "", NONE)}
            if g == "grüppe-Ω":
                want = {k: (-1, -1, "", NONE) for k in want}
            eq(offs, want, "offsets of %s after %s and start" % (g, how))
        check("grüppe-Ω" not in list_groups(c)[1], "deleted group after %s" % how)
        err, gl = list_groups(c)
        eq(gl.get("with-members"), "consumer", "restored protocol type after %s" % how)
        c.close()


def case_expiry(t):
    cfg = dict(BASE_CONFIG)
    cfg["offsets.retention.check.interval.ms"] = "300"
    b = coordinated_broker(t, config=cfg)
    kwire.create_topic(b.port, "ex", 1)
    c = Conn(b.port)
    tp = ("ex", 0)
    eq(commit(c, "short", {tp: (5, "")}, version=2, retention_ms=1500), {tp: NONE}, "commit")
    eq(commit(c, "long", {tp: (6, "")}, version=2), {tp: NONE}, "commit, default retention")
    cm = Conn(b.port, "m")
    mid, gen = stable_single(cm, "busy")
    eq(commit(c, "busy", {tp: (7, "")}, version=2, generation=gen, member_id=mid,
              retention_ms=1500), {tp: NONE}, "commit of a member")
    t0 = time.monotonic()

    def expired():
        eq(heartbeat(cm, "busy", gen, mid), NONE, "heartbeat of the busy member")
        return fetch_offsets(c, "short", {"ex": [0]})[0][tp][0] == -1

    wait_for(expired, 20, "the short retention to expire", interval=0.2)
    check(time.monotonic() - t0 >= 1.0, "expired after %.2f s", time.monotonic() - t0)
    eq(fetch_offsets(c, "long", {"ex": [0]})[0][tp][0], 6, "offset with the default retention")
    eq(fetch_offsets(c, "busy", {"ex": [0]})[0][tp][0], 7,
       "an expired offset of a group with members stays")
    wait_for(lambda: "short" not in list_groups(c)[1], 10, "the empty group to go")
    recs = [x for x in decode_offsets_topic(b.log_dir, partition_for("short", 7))
            if x[1] == "short"]
    eq(recs[-1][0:4] + (recs[-1][4],), ("offset", "short", "ex", 0, None), "tombstone on disk")
    cm.close()
    c.close()
    b.stop()
    b.start()
    c = Conn(b.port)
    eq(fetch_offsets(c, "short", {"ex": [0]})[0][tp][0], -1, "expired offset after a restart")
    eq(fetch_offsets(c, "long", {"ex": [0]})[0][tp][0], 6, "kept offset after a restart")
    c.close()


def case_shutdown_answers_parked(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    ca, cb = Conn(b.port, "a"), Conn(b.port, "b")
    ma, gen = stable_single(ca, "sd")
    cb.send(JOIN_GROUP, 3, join_req(3, "sd"))
    wait_members(ca, "sd", 2)
    ca.close()
    t0 = time.monotonic()
    b.stop(timeout=10)
    check(time.monotonic() - t0 < 4, "stopping took %.1f s", time.monotonic() - t0)
    jb = parse_join(3, cb.recv()[2])
    eq(jb["error"], NOT_COORDINATOR, "a parked JoinGroup at shutdown")
    cb.close()


def case_many_groups(t):
    b = coordinated_broker(t, config=BASE_CONFIG)
    kwire.create_topic(b.port, "many", 1)
    c = Conn(b.port)
    names = ["many-groups-%05d" % i for i in range(5000)]
    for start in range(0, len(names), 500):
        chunk = names[start:start + 500]
        for g in chunk:
            c.send(OFFSET_COMMIT, 2, commit_req(2, g, {("many", 0): (len(g), "")}))
        for g in chunk:
            eq(parse_commit(2, c.recv()[2]), {("many", 0): NONE}, "commit of %s" % g)
    for v in (0, 1, 2):
        err, groups = list_groups(c, v)
        eq((err, sorted(groups)), (NONE, names), "ListGroups v%d of 5000 groups" % v)
        check(all(groups[g] == "" for g in names), "protocol types of offsets-only groups")
    d = describe(c, names, version=1)
    eq([(x["group"], x["state"]) for x in d], [(g, "Empty") for g in names],
       "DescribeGroups of 5000 groups")
    c.close()


if __name__ == "__main__":
    sys.exit(main([case_coordinator, case_join_rules, case_vote_and_leader, case_sync_and_order,
                   case_heartbeat_states, case_v0_rebalance_timeout, case_session_timeout,
                   case_disconnect_keeps_member, case_initial_delay, case_commit_rules,
                   case_records_and_partition, case_expiry, case_shutdown_answers_parked,
                   case_many_groups]))
