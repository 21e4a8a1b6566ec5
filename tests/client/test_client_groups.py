"""libsamsa consumer-group members against the real samsa-broker, alone, with
each other, and in one group with kcat -G (librdkafka) and kafka-python
members (range, roundrobin; sticky with kafka-python, librdkafka having no
eager sticky; cooperative-sticky alone, together and with kcat -G);
commits (sync, async, auto) across restarts.

    test_client_groups.py SAMSA_BROKER GROUP_MEMBER [-k CASE]

GROUP_MEMBER is tests/client/group_member.c (libsamsa's public API): it
prints "assigned/revoked T:P ...", "msg T P OFFSET VALUE", "error ..." lines.
SAMSA_TEST_DEBUG=1 in the environment adds -X debug=all (the members' logs
go to NAME.err in the case's folder).
"""
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

MEMBER = None
CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "1",
}
FAST = ["-X", "heartbeat.interval.ms=200", "-X", "session.timeout.ms=6000",
        "-X", "fetch.wait.max.ms=100", "-X", "auto.commit.interval.ms=200"]


class Member:
    """A group_member process; its stdout lines are collected as they come."""

    def __init__(self, t, b, group, topic, name, args=()):
        self.name = name
        self.err_path = t.path(name + ".err")
        self.err = open(self.err_path, "wb")
        argv = [MEMBER, b.bootstrap, group, topic, "-X", "client.id=" + name] + FAST + list(args)
        if os.environ.get("SAMSA_TEST_DEBUG"):
            argv += ["-X", "debug=all"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.err)
        self.out = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.out.append(line.decode(errors="replace").rstrip("\n"))

    def lines(self, kind=None):
        with self.lock:
            out = list(self.out)
        return [l for l in out if kind is None or l.split(" ", 1)[0] == kind]

    def msgs(self):
        """[(topic, partition, offset, value)]"""
        out = []
        for l in self.lines("msg"):
            _, t, p, o, v = l.split(" ", 4)
            out.append((t, int(p), int(o), v))
        return out

    def assignment(self):
        """The partitions of the last "assigned" line (a revoke empties it)."""
        cur = set()
        for l in self.lines():
            kind = l.split(" ", 1)[0]
            if kind == "assigned":
                cur = {(x.rsplit(":", 1)[0], int(x.rsplit(":", 1)[1])) for x in l.split()[1:]}
            elif kind == "revoked":
                cur = set()
        return cur

    def incremental(self):
        """The partitions held under cooperative-sticky, whose events are
        the changes only: "assigned" adds, "revoked" removes."""
        cur = set()
        for l in self.lines():
            kind = l.split(" ", 1)[0]
            if kind in ("assigned", "revoked"):
                tps = {(x.rsplit(":", 1)[0], int(x.rsplit(":", 1)[1])) for x in l.split()[1:]}
                cur = cur | tps if kind == "assigned" else cur - tps
        return cur

    def events(self, kind):
        """[set of (topic, partition)] of each "assigned" or "revoked" line."""
        return [{(x.rsplit(":", 1)[0], int(x.rsplit(":", 1)[1])) for x in l.split()[1:]}
                for l in self.lines(kind)]

    def alive(self):
        return self.proc.poll() is None

    def check_alive(self):
        check(self.alive(), "%s exited (%s): %s %s", self.name, self.proc.returncode,
              self.lines()[-5:], self.stderr())

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")[-2000:]

    def stop(self, timeout=30):
        if self.alive():
            os.kill(self.proc.pid, signal.SIGTERM)
        return self.wait(timeout)

    def wait(self, timeout=30):
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("%s did not exit within %d s" % (self.name, timeout))
        self.reader.join(10)
        self.err.close()
        return rc

    def kill(self):
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.reader.join(10)
        self.err.close()


def wait_for(pred, timeout, what, members=()):
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("%s: timed out" % what)
        for m in members:
            reader = getattr(m, "reader", None)
            if reader is not None and not m.alive():
                # it may have printed what pred waits for and exited (--count)
                # between pred() and now: ask again once its output is all read
                reader.join(10)
                got = pred()
                if got:
                    return got
            m.check_alive()
        time.sleep(0.05)


def produce(b, topic, values, partitions):
    """values[i] to partition i % partitions, acknowledged."""
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=b.bootstrap, request_timeout_ms=15000, linger_ms=5)
    try:
        futs = [p.send(topic, value=v.encode(), partition=i % partitions)
                for i, v in enumerate(values)]
        p.flush(timeout=60)
        for f in futs:
            f.get(timeout=30)
    finally:
        p.close()


def covers(members, topic, partitions):
    """True when the members' assignments are disjoint and cover every
    partition of topic."""
    seen = []
    for m in members:
        seen.extend(p for t, p in m.assignment() if t == topic)
    return sorted(seen) == list(range(partitions))


def describe(admin, group):
    """(state, protocol, {client_id: (member_id, [partitions])})"""
    from kafka.coordinator.protocol import ConsumerProtocolMemberAssignment
    d = admin.describe_consumer_groups([group])[0]
    members = {}
    for m in d.members:
        parts = []
        a = m.member_assignment
        if isinstance(a, bytes):
            a = ConsumerProtocolMemberAssignment.decode(a) if a else None
        if a is not None:
            for _, ps in a.assignment:
                parts.extend(ps)
        members[m.client_id] = (m.member_id, sorted(parts))
    return d.state, d.protocol, members


def wait_stable(admin, group, clients, partitions, timeout=60, procs=()):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        for m in procs:
            m.check_alive()
        state, proto, ms = describe(admin, group)
        last = (state, proto, ms)
        parts = sorted(p for _, ps in ms.values() for p in ps)
        if state == "Stable" and sorted(ms) == sorted(clients) and \
                parts == list(range(partitions)):
            return proto, ms
        time.sleep(0.1)
    raise AssertionError("group %s never Stable with %s over %d partitions; last %r"
                         % (group, clients, partitions, last))


def range_assignment(member_ids, partitions):
    """Java's RangeAssignor for one topic: member ids sorted, P // C each,
    the first P % C one more."""
    ids = sorted(member_ids)
    per, extra = divmod(partitions, len(ids))
    out, start = {}, 0
    for i, mid in enumerate(ids):
        n = per + (1 if i < extra else 0)
        out[mid] = list(range(start, start + n))
        start += n
    return out


def roundrobin_assignment(member_ids, partitions):
    ids = sorted(member_ids)
    out = {mid: [] for mid in ids}
    for p in range(partitions):
        out[ids[p % len(ids)]].append(p)
    return out


def case_two_members_share_partitions_and_read_each_record_once_across_a_leave(t):
    b = t.broker(config=CONFIG)
    topic, group = "two-members", "g-two"
    kwire.create_topic(b.port, topic, 6)
    a = Member(t, b, group, topic, "a")
    c = None
    try:
        wait_for(lambda: covers([a], topic, 6), 30, "a alone holds all six", [a])
        c = Member(t, b, group, topic, "c")
        wait_for(lambda: covers([a, c], topic, 6) and a.assignment() and c.assignment(), 30,
                 "a and c share the six partitions", [a, c])
        eq(sorted(len(m.assignment()) for m in (a, c)), [3, 3], "partitions per member")
        first = ["r-%d" % i for i in range(600)]
        produce(b, topic, first, 6)
        wait_for(lambda: len(a.msgs()) + len(c.msgs()) >= 600, 30, "600 records read", [a, c])
        for m in (a, c):
            mine = {p for _, p in m.assignment()}
            for _, p, _, v in m.msgs():
                check(p in mine, "%s read %s of partition %d, not its own", m.name, v, p)
        # More records while a leaves: c takes a's partitions over and
        # resumes exactly where a committed at close.
        more = ["s-%d" % i for i in range(1200)]
        producer = threading.Thread(target=produce, args=(b, topic, more, 6))
        producer.start()
        eq(a.stop(), 0, "a's exit status")
        producer.join(60)
        wait_for(lambda: covers([c], topic, 6), 30, "c holds all six after a left", [c])
        wait_for(lambda: len(a.msgs()) + len(c.msgs()) >= 1800, 30, "1800 records read", [c])
        time.sleep(0.3)  # a duplicate would show up now
        values = [m[3] for m in a.msgs() + c.msgs()]
        eq(len(values), 1800, "records read by a and c together")
        eq(sorted(values), sorted(first + more), "each record read exactly once")
        check("closed" in a.lines(), "a did not close: %s", a.lines()[-3:])
        eq(c.stop(), 0, "c's exit status")
    finally:
        for m in (a, c):
            if m is not None and m.alive():
                m.kill()


COOP = ["-X", "partition.assignment.strategy=cooperative-sticky"]


def case_cooperative_member_keeps_its_partitions_while_a_second_joins(t):
    """cooperative-sticky: a holds six partitions and reads on while b joins;
    a gives up only the three that move (one "revoked" event of those), b
    gets them in the next generation, 3/3; every record is read, and none of
    a kept partition twice."""
    b = t.broker(config=CONFIG)
    topic, group = "coop-two", "g-coop-two"
    kwire.create_topic(b.port, topic, 6)
    a = Member(t, b, group, topic, "a", COOP)
    c = None
    producer = None
    try:
        wait_for(lambda: len(a.incremental()) == 6, 30, "a alone holds all six", [a])
        eq(a.lines("revoked"), [], "a's revocations before c joins")
        first = ["r-%d" % i for i in range(600)]
        produce(b, topic, first, 6)
        wait_for(lambda: len(a.msgs()) >= 600, 30, "a reads the first 600", [a])
        # records keep coming while c joins and the partitions move
        more = ["s-%d" % i for i in range(3000)]

        def trickle():
            for i in range(0, len(more), 300):
                produce(b, topic, more[i:i + 300], 6)
                time.sleep(0.1)
        producer = threading.Thread(target=trickle)
        producer.start()
        c = Member(t, b, group, topic, "c", COOP)
        wait_for(lambda: len(a.incremental()) == 3 and len(c.incremental()) == 3, 60,
                 "a and c hold three each", [a, c])
        producer.join(120)
        check(not producer.is_alive(), "the producer did not finish")
        mine_a, mine_c = a.incremental(), c.incremental()
        eq(sorted(p for _, p in mine_a | mine_c), list(range(6)), "a and c cover the six")
        # a was told of exactly the three that moved, once; never of a kept one
        eq(a.events("revoked"), [mine_c], "a's revoked events (c ends with %r)" % sorted(mine_c))
        eq([x for x in a.events("assigned") if x], [{(topic, p) for p in range(6)}],
           "a's non-empty assigned events")
        eq([x for x in c.events("revoked")], [], "c's revoked events")
        everything = first + more
        wait_for(lambda: set(everything) <= {m[3] for m in a.msgs() + c.msgs()}, 60,
                 "every record read", [a, c])
        time.sleep(0.3)  # a duplicate would show up now
        moved = {p for _, p in mine_c}
        reads = {}
        for who, m in (("a", a), ("c", c)):
            for _, p, o, v in m.msgs():
                reads.setdefault((p, o), []).append((who, v))
        twice = {k: v for k, v in reads.items() if len(v) > 1}
        kept_twice = sorted(k for k in twice if k[0] not in moved)
        eq(kept_twice, [], "records of a kept partition read twice")
        # a moved partition: c starts where a's commit before giving it up
        # left it, so what both read is only what a read after that commit
        for p in moved:
            a_offs = sorted(o for _, q, o, _ in a.msgs() if q == p)
            c_offs = sorted(o for _, q, o, _ in c.msgs() if q == p)
            if c_offs and a_offs:
                check(c_offs[0] <= a_offs[-1] + 1, "partition %d: a read to %d, c began at %d "
                      "(a gap)", p, a_offs[-1], c_offs[0])
                check(all(o >= c_offs[0] for o in a_offs if (p, o) in twice),
                      "partition %d: read twice before c's start", p)
        for _, p, o, _ in c.msgs():
            check(p in moved, "c read partition %d, not its own", p)
        eq(sorted(set(v for v in [m[3] for m in a.msgs() + c.msgs()])), sorted(everything),
           "the records read")
        print("  cooperative handover: %d record(s) of moved partitions read twice"
              % len(twice))
        eq(c.stop(), 0, "c's exit status")
        eq(a.stop(), 0, "a's exit status")
    finally:
        if producer is not None:
            producer.join(120)
        for m in (a, c):
            if m is not None and m.alive():
                m.kill()


def case_cooperative_three_members_join_and_leave_without_revoking_what_stays(t):
    """cooperative-sticky with three libsamsa members: a third joins (2/2/2),
    then the first leaves (3/3). A member is only ever told "revoked" of
    partitions that end with the member that joined; when one leaves, the
    others get its partitions added and nothing revoked. Every record
    produced throughout is read."""
    b = t.broker(config=CONFIG)
    topic, group = "coop-three", "g-coop-three"
    kwire.create_topic(b.port, topic, 6)
    ms = []
    values = []
    try:
        def batch(tag, n=300):
            vals = ["%s-%d" % (tag, i) for i in range(n)]
            produce(b, topic, vals, 6)
            values.extend(vals)
        ms.append(Member(t, b, group, topic, "a", COOP))
        ms.append(Member(t, b, group, topic, "b", COOP))
        wait_for(lambda: sorted(len(m.incremental()) for m in ms) == [3, 3], 60,
                 "a and b hold three each", ms)
        batch("one")
        two = {m.name: m.incremental() for m in ms}
        # (a may have held all six and given three to b before: only what
        # comes after this point is about c)
        seen = {m.name: len(m.events("revoked")) for m in ms}
        ms.append(Member(t, b, group, topic, "c", COOP))
        batch("two")
        wait_for(lambda: sorted(len(m.incremental()) for m in ms) == [2, 2, 2], 60,
                 "two each over three", ms)
        batch("three")
        three = {m.name: m.incremental() for m in ms}
        eq(sorted(p for s in three.values() for _, p in s), list(range(6)), "six covered")
        for m in ms[:2]:
            check(three[m.name] <= two[m.name], "%s got new partitions: %r -> %r", m.name,
                  two[m.name], three[m.name])
            revoked = set().union(set(), *m.events("revoked")[seen[m.name]:])
            eq(revoked, two[m.name] - three[m.name], "%s's revoked partitions" % m.name)
            eq(revoked - three["c"], set(), "%s revoked what c did not get" % m.name)
        # a leaves: b and c take its two over, nothing revoked from them
        eq(ms[0].stop(), 0, "a's exit status")
        rest = ms[1:]
        before = {m.name: len(m.events("revoked")) for m in rest}
        wait_for(lambda: sorted(len(m.incremental()) for m in rest) == [3, 3], 60,
                 "b and c hold three each after a left", rest)
        batch("four")
        for m in rest:
            eq(len(m.events("revoked")), before[m.name], "%s's revoked events after a left"
               % m.name)
            check(three[m.name] <= m.incremental(), "%s lost some of %r", m.name,
                  three[m.name])
        wait_for(lambda: set(values) <= {x[3] for m in ms for x in m.msgs()}, 60,
                 "every record read", rest)
        for m in rest:
            eq(m.stop(), 0, "%s's exit status" % m.name)
    finally:
        for m in ms:
            if m.alive():
                m.kill()


def coop_with_kcat(t, b, admin, topic, group, libsamsa_first):
    """A libsamsa member and kcat -G, both cooperative-sticky, in one group
    (either leading): both get partitions, together all six, and every
    record produced then is read once, by the member that owns its
    partition."""
    kwire.create_topic(b.port, topic, 6)
    kwire.wait_coordinator(b.port, group)
    members = []
    try:
        def add(name):
            if name == "samsa-m":
                members.append(Member(t, b, group, topic, name, COOP))
            else:
                members.append(KcatMember(t, b, group, topic, name, "cooperative-sticky"))
        names = ["samsa-m", "kcat-m"] if libsamsa_first else ["kcat-m", "samsa-m"]
        add(names[0])
        wait_stable(admin, group, names[:1], 6, procs=members)
        add(names[1])
        proto, ms = wait_stable(admin, group, names, 6, procs=members)
        eq(proto, "cooperative-sticky", "the protocol the group chose")
        eq(sorted(len(ps) for _, ps in ms.values()), [3, 3], "six partitions over two")
        samsa_m = [m for m in members if isinstance(m, Member)][0]
        wait_for(lambda: {p for _, p in samsa_m.incremental()} == set(ms["samsa-m"][1]), 30,
                 "libsamsa's rebalance events add up to its described partitions", members)
        if libsamsa_first:
            # it kept three of its six: never told that one of those went
            kept = {(topic, p) for p in ms["samsa-m"][1]}
            for r in samsa_m.events("revoked"):
                eq(r & kept, set(), "partitions libsamsa keeps but was told were revoked")
        values = ["k-%d" % i for i in range(600)]
        produce(b, topic, values, 6)

        def seen():
            got = []
            for m in members:
                got.extend((m.name, int(x[1]), x[3]) for x in m.msgs())
            return got if len(got) >= 600 else None
        got = wait_for(seen, 60, "600 records read by the two members", members)
        time.sleep(0.3)  # a duplicate would show up now
        got = seen()
        eq(sorted(v for _, _, v in got), sorted(values), "each record read once")
        owner = {p: cid for cid, (_, ps) in ms.items() for p in ps}
        bad = [(who, p) for who, p, _ in got if owner[p] != who]
        eq(bad, [], "records read by a member that does not own their partition")
    finally:
        for m in members:
            m.stop() if not isinstance(m, Member) or m.alive() else None


def case_cooperative_group_with_kcat_either_leading(t):
    from kafka import KafkaAdminClient
    b = t.broker(config=CONFIG)
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        coop_with_kcat(t, b, admin, "coop-samsa-leads", "g-coop-1", True)
        coop_with_kcat(t, b, admin, "coop-kcat-leads", "g-coop-2", False)
    finally:
        admin.close()


class KcatMember:
    def __init__(self, t, b, group, topic, name, strategy):
        self.name = name
        self.out_path = t.path(name + ".out")
        self.out = open(self.out_path, "wb")
        self.err = open(t.path(name + ".err"), "wb")
        self.proc = subprocess.Popen(
            ["kcat", "-b", b.bootstrap, "-G", group, "-u", "-q", "-f", "%t %p %o %s\\n",
             "-X", "client.id=" + name, "-X", "auto.offset.reset=earliest",
             "-X", "partition.assignment.strategy=" + strategy,
             "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=200",
             "-X", "fetch.wait.max.ms=100", topic],
            stdin=subprocess.DEVNULL, stdout=self.out, stderr=self.err)

    def msgs(self):
        with open(self.out_path, "rb") as f:
            data = f.read().decode(errors="replace")
        return [tuple(l.split(" ", 3)) for l in data.split("\n")[:-1]]

    def check_alive(self):
        check(self.proc.poll() is None, "kcat %s exited (%s)", self.name, self.proc.returncode)

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.out.close()
        self.err.close()


class PythonMember:
    """A kafka-python KafkaConsumer polled on a thread of the test."""

    def __init__(self, b, group, topic, name, assignors):
        from kafka import KafkaConsumer
        self.name = name
        self.c = KafkaConsumer(topic, bootstrap_servers=b.bootstrap, group_id=group,
                               client_id=name, auto_offset_reset="earliest",
                               session_timeout_ms=6000, heartbeat_interval_ms=200,
                               partition_assignment_strategy=assignors,
                               fetch_max_wait_ms=100, metadata_max_age_ms=2000)
        self.got = []
        self.halt = False
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.halt:
                for tp, recs in self.c.poll(timeout_ms=100).items():
                    self.got.extend((tp.topic, tp.partition, r.offset, r.value.decode())
                                    for r in recs)
        except Exception as e:  # reported by check_alive
            self.error = e

    def check_alive(self):
        check(self.error is None, "kafka-python %s failed: %r", self.name, self.error)

    def stop(self):
        self.halt = True
        self.thread.join(30)
        self.c.close()


def mixed_group(t, strategy, libsamsa_first):
    from kafka import KafkaAdminClient
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    b = t.broker(config=CONFIG)
    topic, group = "mixed-" + strategy, "g-mixed-" + strategy
    kwire.create_topic(b.port, topic, 6)
    # kafka-python's admin does not retry COORDINATOR_NOT_AVAILABLE, which the broker
    # answers while it makes __consumer_offsets (as Kafka does)
    kwire.wait_coordinator(b.port, group)
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    assignors = [RangePartitionAssignor if strategy == "range" else RoundRobinPartitionAssignor]
    members = []
    try:
        if libsamsa_first:
            members.append(Member(t, b, group, topic, "samsa-m",
                                  ["-X", "partition.assignment.strategy=" + strategy]))
            wait_stable(admin, group, ["samsa-m"], 6, procs=members)
            members.append(KcatMember(t, b, group, topic, "kcat-m", strategy))
        else:
            members.append(KcatMember(t, b, group, topic, "kcat-m", strategy))
            wait_stable(admin, group, ["kcat-m"], 6, procs=members)
            members.append(Member(t, b, group, topic, "samsa-m",
                                  ["-X", "partition.assignment.strategy=" + strategy]))
        members.append(PythonMember(b, group, topic, "python-m", assignors))
        proto, ms = wait_stable(admin, group, ["samsa-m", "kcat-m", "python-m"], 6,
                                procs=members)
        eq(proto, strategy, "the protocol the group chose")
        compute = range_assignment if strategy == "range" else roundrobin_assignment
        want = compute([mid for mid, _ in ms.values()], 6)
        eq({cid: ps for cid, (_, ps) in ms.items()},
           {cid: want[mid] for cid, (mid, _) in ms.items()},
           "the assignment as %s computes it" % strategy)
        samsa_m = members[0] if libsamsa_first else members[1]
        wait_for(lambda: {p for _, p in samsa_m.assignment()} == set(ms["samsa-m"][1]), 30,
                 "libsamsa's rebalance callback shows its described partitions", members)
        values = ["x-%d" % i for i in range(600)]
        produce(b, topic, values, 6)

        def seen():
            got = []
            for m in members:
                got.extend((int(x[1]), x[3]) for x in m.msgs()) if not isinstance(
                    m, PythonMember) else got.extend((x[1], x[3]) for x in m.got)
            return got if len(got) >= 600 else None
        got = wait_for(seen, 60, "600 records read by the three members", members)
        eq(sorted(v for _, v in got), sorted(values), "each record read once")
        owner = {}
        for cid, (_, ps) in ms.items():
            for p in ps:
                owner[p] = cid
        for m in members:
            mine = [int(x[1]) for x in m.msgs()] if not isinstance(m, PythonMember) \
                else [x[1] for x in m.got]
            bad = [p for p in mine if owner[p] != m.name]
            eq(bad, [], "partitions %s read by a member that does not own them" % m.name)
    finally:
        for m in members:
            m.stop() if not isinstance(m, Member) or m.alive() else None
        admin.close()


def case_mixed_group_range_with_libsamsa_leading_kcat_and_kafka_python(t):
    mixed_group(t, "range", True)


def case_mixed_group_roundrobin_with_kcat_leading(t):
    mixed_group(t, "roundrobin", False)


def kafka_python_sticky():
    """A fresh class of kafka-python 2.0.2's sticky assignor (its state lives on the
    class), with metadata() mended: 2.0.2's hands the UserData encoder a dict
    iterator, a TypeError on Python 3 as soon as the member has an assignment."""
    from kafka.coordinator.assignors.sticky.sticky_assignor import (
        StickyAssignorUserDataV1, StickyPartitionAssignor)
    from kafka.coordinator.protocol import ConsumerProtocolMemberMetadata

    class Sticky(StickyPartitionAssignor):
        member_assignment = None
        generation = StickyPartitionAssignor.DEFAULT_GENERATION_ID

        @classmethod
        def metadata(cls, topics):
            user_data = b""
            if cls.member_assignment is not None:
                by_topic = {}
                for tp in cls.member_assignment:
                    by_topic.setdefault(tp.topic, []).append(tp.partition)
                # held in a name: Struct.encode is a weak method of it
                data = StickyAssignorUserDataV1(list(by_topic.items()), cls.generation)
                user_data = data.encode()
            return ConsumerProtocolMemberMetadata(cls.version, list(topics), user_data)
    return Sticky


def sticky_phase(t, b, admin, topic, group, python_first):
    """Members of one sticky group joining one at a time (kafka-python's member
    first when python_first, so that it computes the assignments; else a
    libsamsa member leads): every assignment balanced, and a member that stays
    keeps what it had but for what balance moves."""
    sticky = kafka_python_sticky()
    kwire.create_topic(b.port, topic, 6)
    kwire.wait_coordinator(b.port, group)
    args = ["-X", "partition.assignment.strategy=sticky"]
    members = []
    try:
        def add(name):
            if name == "python-m":
                members.append(PythonMember(b, group, topic, name, [sticky]))
            else:
                members.append(Member(t, b, group, topic, name, args))
        names = ["python-m", "samsa-a", "samsa-b"] if python_first else \
            ["samsa-a", "python-m", "samsa-b"]
        add(names[0])
        proto, ms1 = wait_stable(admin, group, names[:1], 6, procs=members)
        add(names[1])
        proto, ms2 = wait_stable(admin, group, names[:2], 6, procs=members)
        eq(proto, "sticky", "the protocol the group chose")
        eq(sorted(len(ps) for _, ps in ms2.values()), [3, 3], "six partitions over two")
        check(set(ms2[names[0]][1]) <= set(ms1[names[0]][1]), "%s kept three of its six: %r",
              names[0], ms2)
        add(names[2])
        proto, ms3 = wait_stable(admin, group, names, 6, procs=members)
        eq(sorted(len(ps) for _, ps in ms3.values()), [2, 2, 2], "six over three")
        for cid in names[:2]:
            eq(len(set(ms3[cid][1]) & set(ms2[cid][1])), 2,
               "%s keeps two of its three (%r then %r)" % (cid, ms2, ms3))
        # the second to join leaves: the others keep theirs and share its two
        gone = members.pop(1)
        gone.stop()
        rest = [names[0], names[2]]
        proto, ms4 = wait_stable(admin, group, rest, 6, procs=members)
        eq(sorted(len(ps) for _, ps in ms4.values()), [3, 3], "six over the two left")
        for cid in rest:
            check(set(ms3[cid][1]) <= set(ms4[cid][1]), "%s lost some of %r: %r", cid,
                  ms3[cid][1], ms4[cid][1])
        wait_for(lambda: {p for _, p in members[-1].assignment()} == set(ms4[names[2]][1]), 30,
                 "libsamsa's rebalance callback shows its described partitions", members)
    finally:
        for m in members:
            m.stop() if not isinstance(m, Member) or m.alive() else None


def case_sticky_group_with_kafka_python_balanced_and_sticky_either_leading(t):
    from kafka import KafkaAdminClient
    b = t.broker(config=CONFIG)
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        sticky_phase(t, b, admin, "sticky-samsa-leads", "g-sticky-1", False)
        sticky_phase(t, b, admin, "sticky-python-leads", "g-sticky-2", True)
    finally:
        admin.close()


def read_all_in_runs(t, b, topic, group, mode, n_total, per_run, extra=()):
    """Members of `group` with --commit mode, one after the other, each
    reading per_run records then closing. Returns the values read."""
    got = []
    run = 0
    while len(got) < n_total:
        m = Member(t, b, group, topic, "%s-%d" % (mode, run),
                   ["--commit", mode, "--count", str(per_run)] + list(extra))
        want = min(per_run, n_total - len(got))
        wait_for(lambda: len(m.msgs()) >= want, 30, "%s run %d" % (mode, run), [m])
        if want < per_run:
            m.stop()
        eq(m.wait(30), 0, "exit status of %s run %d" % (mode, run))
        errors = m.lines("commit-error") + m.lines("error")
        eq(errors, [], "errors of %s run %d" % (mode, run))
        got.extend(x[3] for x in m.msgs())
        run += 1
    return got


def case_committed_offsets_survive_restarts_with_sync_async_and_auto_commit(t):
    b = t.broker(config=CONFIG)
    for mode in ("sync", "async", "auto"):
        topic = "resume-" + mode
        kwire.create_topic(b.port, topic, 3)
        values = ["%s-%d" % (mode, i) for i in range(300)]
        produce(b, topic, values, 3)
        got = read_all_in_runs(t, b, topic, "g-resume-" + mode, mode, 300, 70)
        eq(len(got), 300, "%s: records read over the restarts" % mode)
        eq(sorted(got), sorted(values), "%s: each record read once" % mode)


def case_auto_commit_commits_while_running(t):
    """A member killed (no close) after auto.commit.interval.ms left its
    offsets committed: a successor reads only the rest."""
    from kafka import KafkaAdminClient
    b = t.broker(config=CONFIG)
    topic, group = "autocommit", "g-autocommit"
    kwire.create_topic(b.port, topic, 2)
    values = ["a-%d" % i for i in range(200)]
    produce(b, topic, values, 2)
    # kafka-python's admin does not retry COORDINATOR_NOT_AVAILABLE, which the broker
    # answers while it makes __consumer_offsets (as Kafka does)
    kwire.wait_coordinator(b.port, group)
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    m = Member(t, b, group, topic, "auto-0", ["--commit", "auto"])
    try:
        wait_for(lambda: len(m.msgs()) >= 200, 30, "200 records", [m])

        def committed():
            offs = {tp.partition: om.offset
                    for tp, om in admin.list_consumer_group_offsets(group).items()}
            return offs if offs == {0: 100, 1: 100} else None
        wait_for(committed, 30, "auto commit of both partitions' ends")
    finally:
        m.kill()
        admin.close()


def case_member_rejoins_after_the_broker_restarts(t):
    """The coordinator goes away (connection lost, then UNKNOWN_MEMBER_ID:
    membership lives in the broker's memory): the member finds it again,
    rejoins and goes on reading."""
    b = t.broker(config=CONFIG)
    topic, group = "restart", "g-restart"
    kwire.create_topic(b.port, topic, 2)
    m = Member(t, b, group, topic, "r", ["--commit", "sync",
                                         "-X", "reconnect.backoff.max.ms=500"])
    try:
        wait_for(lambda: covers([m], topic, 2), 30, "assigned", [m])
        produce(b, topic, ["before-%d" % i for i in range(20)], 2)
        wait_for(lambda: len(m.msgs()) >= 20, 30, "20 before", [m])
        b.stop()
        b.start()
        produce(b, topic, ["after-%d" % i for i in range(20)], 2)
        want = ["before-%d" % i for i in range(20)] + ["after-%d" % i for i in range(20)]
        # Wait for every distinct record, not a count: a record whose commit
        # failed across the restart is read twice and would make a count of 40
        # come before the last record.
        wait_for(lambda: set(want) <= {x[3] for x in m.msgs()}, 60,
                 "the 20 records after the restart", [m])
        vals = [x[3] for x in m.msgs()]
        eq(sorted(set(vals)), sorted(want), "records read across the restart")
        # A record read again is one whose commit failed: read while the
        # membership was already gone with the broker's memory.
        lines, failed = m.lines(), set()
        for i, l in enumerate(lines):
            if l.startswith("msg ") and i + 1 < len(lines) and \
                    lines[i + 1].startswith("commit-error"):
                failed.add(l.split(" ", 4)[4])
        again = {v for v in vals if vals.count(v) > 1}
        check(again <= failed, "read twice though committed: %s", sorted(again - failed))
        check(len([l for l in m.lines("assigned")]) >= 2, "no second assignment: %s", m.lines())
        eq(m.stop(), 0, "exit status")
    finally:
        if m.alive():
            m.kill()


def case_a_member_that_stops_polling_leaves_and_comes_back(t):
    b = t.broker(config=CONFIG)
    topic, group = "stall", "g-stall"
    kwire.create_topic(b.port, topic, 4)
    produce(b, topic, ["v-%d" % i for i in range(8)], 4)
    s = Member(t, b, group, topic, "staller", ["--commit", "sync", "--stall-after", "1",
                                               "--stall-ms", "3000",
                                               "-X", "max.poll.interval.ms=1000"])
    o = None
    try:
        wait_for(lambda: s.lines("error"), 30, "staller's MAX_POLL_EXCEEDED", [s])
        check(s.lines("error")[0].startswith("error MAX_POLL_EXCEEDED"), "%s", s.lines("error"))
        o = Member(t, b, group, topic, "other", ["--commit", "sync"])
        wait_for(lambda: len(s.msgs()) + len(o.msgs()) >= 8, 30, "the 8 records", [s, o])
        # after its stall the staller polls again and gets a share back
        wait_for(lambda: covers([s, o], topic, 4) and s.assignment() and o.assignment(), 30,
                 "staller back in the group", [s, o])
        eq(sorted(x[3] for x in s.msgs() + o.msgs()), sorted("v-%d" % i for i in range(8)),
           "each record read once")
    finally:
        for m in (s, o):
            if m is not None and m.alive():
                m.kill()


if __name__ == "__main__":
    MEMBER = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_two_members_share_partitions_and_read_each_record_once_across_a_leave,
                   case_mixed_group_range_with_libsamsa_leading_kcat_and_kafka_python,
                   case_mixed_group_roundrobin_with_kcat_leading,
                   case_sticky_group_with_kafka_python_balanced_and_sticky_either_leading,
                   case_cooperative_member_keeps_its_partitions_while_a_second_joins,
                   case_cooperative_three_members_join_and_leave_without_revoking_what_stays,
                   case_cooperative_group_with_kcat_either_leading,
                   case_committed_offsets_survive_restarts_with_sync_async_and_auto_commit,
                   case_auto_commit_commits_while_running,
                   case_member_rejoins_after_the_broker_restarts,
                   case_a_member_that_stops_polling_leaves_and_comes_back]))
