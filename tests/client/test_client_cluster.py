"""libsamsa and the samsa tool against a cluster: three samsa-brokers and a
real ZooKeeper (tests/integration/test_cluster.py's Cluster), a topic of
three partitions with replication factor 3 and min.insync.replicas=2.

- a leader killed and a leader bounced: cluster_producer.c (libsamsa's
  defaults: idempotent, acks=all) produces throughout while the leader of
  partition 0 is killed (SIGKILL) and restarted, then stopped cleanly
  (SIGTERM: a controlled shutdown) and restarted. Every record a delivery
  report said delivered is in the log exactly once at the offset the report
  gave, per key in the order produced, nothing in the log twice; the
  producer acknowledged records after each fault and delivered everything
  at its close. A libsamsa group member (group_member.c) reads the topic
  meanwhile: its fetches follow the moved leaders and it reads every
  delivered record;
- the group's coordinator killed, then bounced: the member finds the new
  coordinator (its log names it), its committed offsets are there (a
  member that rejoins starts where it last committed), and it reads every
  delivered record; `samsa group describe` run right after the kill answers
  within its timeout, and at the end shows the last commits;
- the samsa tool: `cluster info` lists the three brokers and the
  controller, `topic create --replication-factor 3`, `topic describe`
  (replicas, ISR), `topic alter` (configs and partitions, checked in
  ZooKeeper), `topic delete` through a broker that is not the controller,
  and right after the controller was killed; `group list` then returns
  at once with the live brokers' groups and names the dead one;
- `samsa topic describe --under-replicated-partitions / --unavailable-partitions
  / --under-min-isr-partitions` list nothing on a healthy cluster, and once a
  broker is killed exactly the partitions it leaves short of their replicas,
  without a leader, or below min.insync.replicas; `samsa cluster metadata`
  shows the leaderless partition and the shrunk ISRs;
- `samsa group describe --timeout 3000` while the leader of three of the
  group's partitions is stopped (SIGSTOP): one deadline for the command, so
  it ends within three times its timeout (the figure printed), prints the
  other log ends, names those three partitions on stderr and exits 1.
- `samsa group describe` (default --timeout, 30 s) while the group's
  coordinator is stopped (SIGSTOP): each request to the coordinator has its
  own deadline, so it says it asks again and answers from the broker that
  took the group over, within 25 s (the figure printed), exit 0.

    test_client_cluster.py SAMSA_BROKER SAMSA_TOOL CLUSTER_PRODUCER GROUP_MEMBER [-k CASE]

Each producing case prints its figures (delivered, lost, duplicated).
Every process is stopped by its PID; waits are conditions with deadlines.
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, led_everywhere, partitions_of, wait_for  # noqa: E402
from test_cluster_groups import OFFSETS, OFFSETS_PARTITIONS, group_partition  # noqa: E402
from test_faults import (PARTITIONS, TOPIC, confluent, in_sync, leader_of,  # noqa: E402
                         partition_bytes, read_back)

TOOL = PRODUCER = MEMBER = None
DEADLINE = 90
CONFIG = {
    "min.insync.replicas": "2",
    "replica.lag.time.max.ms": "3000",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": str(OFFSETS_PARTITIONS),
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
}
MEMBER_ARGS = ["--commit", "sync", "-X", "heartbeat.interval.ms=300",
               "-X", "session.timeout.ms=10000", "-X", "fetch.wait.max.ms=100",
               "-X", "debug=all"]


class Proc:
    """A test program; its stdout lines collected as they come, stderr to
    NAME.err in the case's folder."""

    def __init__(self, t, name, argv):
        self.name = name
        self.err_path = t.path(name + ".err")
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.err)
        self.out = []
        self.times = []  # time.monotonic() at which each line of out came
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.out.append(line.decode(errors="replace").rstrip("\n"))
                self.times.append(time.monotonic())

    def lines(self, kind=None):
        with self.lock:
            out = list(self.out)
        return [l for l in out if kind is None or l.split(" ", 1)[0] == kind]

    def first(self, kind, pred):
        """The time the first line of `kind` whose fields (after the kind)
        satisfy pred came, or None."""
        with self.lock:
            out = list(zip(self.out, self.times))
        for l, at in out:
            f = l.split(" ")
            if f[0] == kind and pred(f[1:]):
                return at
        return None

    def log(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=240):
        """SIGTERM by PID, then its exit status once its output is read."""
        if self.alive():
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        finally:
            self.reader.join(10)
            self.err.close()
        return rc

    def kill(self):
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)
        self.err.close()


def acked(prod):
    """[(partition, offset, value)] of the producer's delivered reports."""
    out = []
    for l in prod.lines("ack"):
        _, p, o, v = l.split(" ", 3)
        out.append((int(p), int(o), v))
    return out


def msgs(member):
    """[(partition, offset, value)] the member read."""
    out = []
    for l in member.lines("msg"):
        _, _t, p, o, v = l.split(" ", 4)
        out.append((int(p), int(o), v))
    return out


def progress(prod, more=150):
    base = len(prod.lines("ack"))
    wait_for(lambda: len(prod.lines("ack")) >= base + more or not prod.alive(), DEADLINE,
             "%d more deliveries (have %d)" % (more, base))
    check(prod.alive(), "the producer exited: %s", prod.lines()[-5:])


def start(t):
    imports()
    ck = confluent()
    c = Cluster(t, config={**CONFIG,
                           "log.level": os.environ.get("SAMSA_TEST_LOG_LEVEL", "info")})
    try:
        wait_for(lambda: c.controller() is not None, DEADLINE, "a controller")
        c.create_topic(TOPIC, [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
        wait_for(lambda: led_everywhere(c, TOPIC, PARTITIONS), DEADLINE, "the topic's leaders")
        wait_for(lambda: in_sync(c), DEADLINE, "every replica in sync")
        # a partition the controller brought online before it saw its
        # preferred replica's registration is led by the next one: the
        # cases want each broker leading one partition, so a preferred
        # election is asked for as an operator would (Kafka's znode)
        if any(leader_of(c, p) != p for p in range(PARTITIONS)):
            c.kz.ensure_path(CHROOT + "/admin")
            c.kz.create(CHROOT + "/admin/preferred_replica_election", json.dumps(
                {"version": 1, "partitions": [{"topic": TOPIC, "partition": p}
                                              for p in range(PARTITIONS)]}).encode())
            wait_for(lambda: all(leader_of(c, p) == p for p in range(PARTITIONS)), DEADLINE,
                     "each partition led by its preferred replica")
    except BaseException:
        c.close()
        raise
    return ck, c


def everyone(c):
    return ",".join(c.bootstrap(i) for i in range(len(c.brokers)))


def check_producer(name, ck, c, prod, t0):
    """The producer stopped; the idempotent producer's invariants, its
    figures printed. Returns the delivered values."""
    rc = prod.stop()
    got = acked(prod)
    failed = prod.lines("fail")
    closed = prod.lines("closed")
    eq(failed[:10], [], "reports saying not delivered (%d in all)" % len(failed))
    eq(len(closed), 1, "the producer's close line (%s)" % prod.lines()[-3:])
    offered, undelivered = (int(x) for x in closed[0].split()[1:])
    eq((rc, undelivered), (0, 0), "exit status and records undelivered at close")
    eq(len(got), offered, "delivery reports saying delivered, of %d offered" % offered)
    live = [i for i, b in enumerate(c.brokers) if b.alive()]
    wait_for(lambda: in_sync(c, len(live)), DEADLINE, "every partition's ISR full again")
    logs = read_back(ck, c.bootstrap(live[0]), len(got))
    read = [v for p in range(PARTITIONS) for _, v in logs[p]]
    seen = {}
    for v in read:
        seen[v] = seen.get(v, 0) + 1
    values = [v for _, _, v in got]
    lost = [v for v in values if v not in seen]
    duplicated = sorted(v for v, n in seen.items() if n > 1)
    print("    %s: %d delivered, %d lost, %d duplicated, %d in the log, %.0f s in all"
          % (name, len(got), len(lost), len(duplicated), len(read), time.monotonic() - t0),
          flush=True)
    eq(lost[:10], [], "delivered records lost (%d in all)" % len(lost))
    eq(duplicated[:10], [], "records in the log twice (%d in all)" % len(duplicated))
    eq(len(set(values)), len(values), "values delivered twice")
    # every report's offset holds what it reported
    where = {(p, off): v for p in range(PARTITIONS) for off, v in logs[p]}
    wrong = [(p, o, v) for p, o, v in got if where.get((p, o)) != v]
    eq(wrong[:10], [], "reported offsets holding other records")
    # per key, in the order produced, one partition per key
    last, part_of = {}, {}
    for p in range(PARTITIONS):
        for _, v in logs[p]:
            k, s = v.split(":")
            check(part_of.setdefault(k, p) == p, "key %s in partitions %d and %d", k,
                  part_of[k], p)
            check(int(s) > last.get(k, -1), "partition %d: %s read after %s:%d", p, v, k,
                  last.get(k, -1))
            last[k] = int(s)
    for p in range(PARTITIONS):
        wait_for(lambda p=p: len({partition_bytes(c.brokers[i], p) for i in live}) == 1,
                 DEADLINE, "the replicas of %s-%d identical" % (TOPIC, p))
    return values


def check_member(member, values):
    """The member read every delivered record; a member that (re)joined
    started each partition where its commits say: not before its last
    successful commit, not after its last attempted one. Returns (records
    read, read twice)."""
    wait_for(lambda: set(values) <= {v for _, _, v in msgs(member)} or not member.alive(),
             DEADLINE, "the member reading every delivered record")
    got = {v for _, _, v in msgs(member)}
    missing = sorted(set(values) - got)
    eq(missing[:10], [], "delivered records the member never read (%d in all)" % len(missing))
    eq(member.stop(), 0, "the member's exit status")
    committed_ok = {}   # partition: offset of the last successful commit
    attempted = {}      # partition: offset after the last record read
    joined = False
    first_after_join = set()
    for l in member.lines():
        kind = l.split(" ", 1)[0]
        if kind == "assigned":
            joined = True
            first_after_join = {int(x.rsplit(":", 1)[1]) for x in l.split()[1:]}
        elif kind == "committed":
            _, _t, p, o = l.split()
            committed_ok[int(p)] = int(o)
        elif kind == "msg":
            _, _t, p, o, _v = l.split(" ", 4)
            p, o = int(p), int(o)
            if joined and p in first_after_join:
                first_after_join.discard(p)
                check(committed_ok.get(p, 0) <= o <= attempted.get(p, 0),
                      "partition %d resumed at %d: last commit %d, last read up to %d", p, o,
                      committed_ok.get(p, 0), attempted.get(p, 0))
            else:
                check(o == attempted.get(p, o), "partition %d: read %d after %d", p, o,
                      attempted.get(p, 0))
            attempted[p] = o + 1
    reads = msgs(member)
    return len(reads), len(reads) - len({v for _, _, v in reads})


def check_both(name, ck, c, prod, m, t0):
    """check_producer, then check_member on what it delivered, the member's
    figures printed. Returns the delivered values."""
    values = check_producer(name, ck, c, prod, t0)
    n, twice = check_member(m, values)
    print("    member: %d records read, %d of them again after a rejoin" % (n, twice),
          flush=True)
    return values


def kill_all(*procs):
    for p in procs:
        if p is not None:
            p.kill()


def producer(t, c, name="producer"):
    return Proc(t, name, [PRODUCER, everyone(c), TOPIC])


def member(t, c, group, name="member"):
    return Proc(t, name, [MEMBER, everyone(c), group, TOPIC, "-X", "client.id=" + name]
                + MEMBER_ARGS)


def case_idempotent_producer_through_a_killed_and_a_bounced_leader(t):
    ck, c = start(t)
    prod = m = None
    try:
        t0 = time.monotonic()
        prod = producer(t, c)
        m = member(t, c, "cc-fetch")
        progress(prod, 300)
        # SIGKILL, then SIGTERM (a controlled shutdown) of partition 0's leader
        for how in ("kill", "bounce"):
            old = leader_of(c)
            if how == "kill":
                c.brokers[old].kill()
            else:
                c.brokers[old].stop()
                check("every partition this broker led is led elsewhere" in
                      c.brokers[old].log_text(),
                      "broker %d stopped without handing its leaderships over", old)
            wait_for(lambda: leader_of(c) not in (old, -1), DEADLINE, "a new leader after %d" % old)
            progress(prod)
            c.brokers[old].start()
            wait_for(lambda: in_sync(c), DEADLINE, "broker %d back in every ISR" % old)
            progress(prod)
        # the member's fetches followed: it reads what is produced now
        check_both("leader killed, then bounced", ck, c, prod, m, t0)
    finally:
        kill_all(prod, m)
        c.close()


def coordinator_of(c, group):
    """The group's coordinator: the leader of its partition of the offsets
    topic, as ZooKeeper has it (-1: none now)."""
    st = c.state(OFFSETS, group_partition(group))
    return st["leader"] if st is not None else -1


def case_group_member_follows_its_coordinator(t):
    ck, c = start(t)
    group = "cc-coord"
    prod = m = None
    try:
        t0 = time.monotonic()
        prod = producer(t, c)
        m = member(t, c, group)
        # every partition committed at least once: the describe below lists the
        # group's committed offsets, and a partition the member has not reached
        # yet (it hands out one partition's fetched records before the next) has none
        wait_for(lambda: len(m.lines("committed")) >= 100
                 and {int(l.split()[2]) for l in m.lines("committed")} == set(range(PARTITIONS)),
                 DEADLINE, "the member committing on every partition")
        for how in ("kill", "bounce"):
            old = coordinator_of(c, group)
            check(old >= 0, "the group's partition has no leader")
            base = len(m.lines("committed"))
            log_at = len(m.log())
            if how == "kill":
                c.brokers[old].kill()
                # the tool's FindCoordinator still names the dead one: it
                # answers from the next coordinator within its timeout
                describe_in_time(c, group, 20000)
            else:
                c.brokers[old].stop()
            new = wait_for(lambda: [n for n in [coordinator_of(c, group)] if n not in (-1, old)],
                           DEADLINE, "a new coordinator after %d" % old)[0]
            # the member found it and commits there
            wait_for(lambda: "group %s: coordinator is node %d" % (group, new) in m.log()[log_at:],
                     DEADLINE, "the member finding coordinator %d" % new)
            wait_for(lambda: len(m.lines("committed")) >= base + 100, DEADLINE,
                     "the member committing through coordinator %d" % new)
            seen = sorted({w for w in ("NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE",
                                       "coordinator %d lost" % old) if w in m.log()[log_at:]})
            print("    coordinator %d %s: %d took over, the member saw %s"
                  % (old, "killed" if how == "kill" else "bounced", new, seen), flush=True)
            c.brokers[old].start()
            wait_for(lambda: in_sync(c), DEADLINE, "broker %d back in every ISR" % old)
        values = check_both("coordinator killed, then bounced", ck, c, prod, m, t0)
        # its last commits (at close) are what the coordinator has
        last = {}
        for l in m.lines("committed"):
            _, _t, p, o = l.split()
            last[int(p)] = int(o)
        d = json.loads(samsa("group", "describe", "-b", everyone(c), group, "--json").stdout)
        got = {r["partition"]: r["current_offset"] for r in d["partitions"]
               if r["topic"] == TOPIC}
        eq(got, last, "the group's committed offsets")
    finally:
        kill_all(prod, m)
        c.close()


# seconds: the member and the producer resume a partition within this of its
# new leader in Metadata (libsamsa's own bound is a refresh: at most 500 ms)
RESUME_S = 20


def write_marker(ck, bootstrap, partition):
    """One record written to partition by librdkafka (acks=all); its offset.
    Whatever reads or acknowledges an offset at or after it went through the
    partition's new leader."""
    p = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    got = []
    p.produce(TOPIC, value=b"marker:0", partition=partition,
              on_delivery=lambda err, msg: got.append((err, msg.offset())))
    p.flush(DEADLINE)
    check(len(got) == 1 and got[0][0] is None, "the marker record: %s", got)
    return got[0][1]


def describe_in_time(c, group, timeout_ms):
    """`samsa group describe --json` with --timeout timeout_ms: it exits
    within the timeout (and a second of slack) and says where every
    partition's log ends. Returns the seconds it took."""
    start = time.monotonic()
    p = samsa("group", "describe", "-b", everyone(c), group, "--json", "--timeout",
              str(timeout_ms), "-X", "debug=all", expect=None, timeout=timeout_ms / 1000 + 60)
    took = time.monotonic() - start
    err = p.stderr.decode(errors="replace")
    rows = []
    if p.returncode == 0:
        rows = [(r["partition"], r["log_end_offset"]) for r in json.loads(p.stdout)["partitions"]
                if r["topic"] == TOPIC]
    print("    group describe: exit %d in %.1f s (--timeout %d ms), log ends %s"
          % (p.returncode, took, timeout_ms, rows), flush=True)
    check(took <= timeout_ms / 1000 + 1, "group describe took %.1f s with --timeout %d ms (%s)",
          took, timeout_ms, err[-1500:])
    eq(p.returncode, 0, "group describe's exit status (%s)" % err[-1500:])
    eq(sorted(p for p, _ in rows), list(range(PARTITIONS)), "the partitions described")
    eq([p for p, end in rows if end is None], [], "partitions without a log end")
    return took


def case_member_producer_and_describe_resume_after_a_leader_dies(t):
    """The leader of one partition, neither the controller nor the group's
    coordinator, is killed (SIGKILL) and stays dead: nothing else changes
    leaders, so only a client that asks Metadata again while that leader
    cannot be reached learns of the new one. Once every live broker's
    Metadata names the new leader, librdkafka writes a marker record there
    (acks=all); the member must read it (or a later record) and the
    producer have a later record acknowledged within RESUME_S; `samsa group describe` started right after the kill answers
    within its timeout with every partition's log end; every delivered
    record is in the log once and read by the member."""
    ck, c = start(t)
    group = "cc-resume"
    prod = m = None
    try:
        t0 = time.monotonic()
        prod = producer(t, c)
        m = member(t, c, group)
        progress(prod, 300)
        wait_for(lambda: {p for p, _, _ in msgs(m)} == set(range(PARTITIONS)), DEADLINE,
                 "the member reading every partition")
        coord = wait_for(lambda: [n for n in [coordinator_of(c, group)] if n >= 0], DEADLINE,
                         "the group's coordinator")[0]
        ctl = c.controller()
        victim = [i for i in range(len(c.brokers)) if i not in (coord, ctl)][0]
        led = [p for p in range(PARTITIONS) if leader_of(c, p) == victim]
        check(len(led) == 1, "broker %d leads partitions %s", victim, led)
        part = led[0]
        c.brokers[victim].kill()
        killed = time.monotonic()
        # at once, beside the rest: the tool's Metadata still names the dead
        # leader (its verdict comes after the member's and the producer's)
        described = []

        def describe():
            try:
                describe_in_time(c, group, 15000)
                described.append(None)
            except AssertionError as e:
                described.append(e)
        describer = threading.Thread(target=describe, daemon=True)
        describer.start()
        new = wait_for(lambda: [n for n in [leader_of(c, part)] if n not in (-1, victim)],
                       DEADLINE, "a new leader of partition %d" % part)[0]
        live = [i for i in range(len(c.brokers)) if i != victim]

        def shown():
            return all(partitions_of(c.bootstrap(i), TOPIC).get(part, (0, -1))[1] == new
                       for i in live)
        wait_for(shown, DEADLINE, "the live brokers' Metadata naming leader %d" % new)
        at = time.monotonic()
        marker = write_marker(ck, c.bootstrap(new), part)
        # acks=all: once the marker is acknowledged the high watermark covers
        # it and a fetch returns it; what the new leader took to get there
        # (its followers' first fetches) is the broker's, not the clients'
        written = time.monotonic()
        print("    partition %d: leader %d killed (controller %d, coordinator %d), leader %d in "
              "Metadata %.1f s later, the marker at offset %d acknowledged %.2f s after that"
              % (part, victim, ctl, coord, new, at - killed, marker, written - at), flush=True)

        figures = {}
        for who, proc, kind, pi, oi in (("member", m, "msg", 1, 2),
                                        ("producer", prod, "ack", 0, 1)):
            def resumed(proc=proc, kind=kind, pi=pi, oi=oi):
                return proc.first(kind, lambda f: int(f[pi]) == part and int(f[oi]) >= marker)
            try:
                wait_for(resumed, RESUME_S - (time.monotonic() - written),
                         "the %s resuming partition %d" % (who, part))
            except AssertionError:
                pass
            got = resumed()
            figures[who] = None if got is None else max(0.0, got - written)
        print("    resumed after the new leader showed in Metadata and the marker was "
              "acknowledged: %s"
              % ", ".join("%s %s" % (w, "not within %d s" % RESUME_S if f is None
                                     else "%.2f s" % f) for w, f in figures.items()),
              flush=True)
        describer.join(DEADLINE)
        check(described, "group describe still running")
        if described[0] is not None:
            raise described[0]
        for who, f in figures.items():
            check(f is not None and f <= RESUME_S, "the %s did not resume partition %d within "
                  "%d s of its new leader in Metadata", who, part, RESUME_S)
        progress(prod)
        check_both("a leader killed for good", ck, c, prod, m, t0)
    finally:
        kill_all(prod, m)
        c.close()


def samsa(*args, expect=0, timeout=90):
    p = subprocess.run([TOOL] + list(args), capture_output=True, timeout=timeout)
    if expect is not None and p.returncode != expect:
        raise AssertionError("samsa %s: exit %d (wanted %d)\nstdout: %s\nstderr: %s"
                             % (" ".join(args), p.returncode, expect, p.stdout[-2000:],
                                p.stderr[-2000:]))
    return p


def case_group_describe_keeps_its_timeout_with_a_stopped_leader(t):
    """`samsa group describe --timeout 3000` while the leader of three of the
    group's nine partitions is stopped (SIGSTOP: its connections hang, they
    are not refused) and is neither the controller nor the coordinator. The
    whole command keeps to its --timeout (asserted under three times it, the
    figure printed), prints the log ends it could read, names on stderr each
    partition whose log end it could not, with the reason, and exits 1."""
    imports()
    c = Cluster(t, config=CONFIG)
    group = "cc-stalled"
    topic = "stalled"
    stopped = None
    try:
        wait_for(lambda: c.controller() is not None, DEADLINE, "a controller")
        # each broker leads three partitions: p % 3
        c.create_topic(topic, [[p % 3] for p in range(9)])
        wait_for(lambda: led_everywhere(c, topic, 9), DEADLINE, "the topic's leaders")
        bs = everyone(c)
        samsa("group", "reset-offsets", "-b", bs, group, "-t", topic, "--to-earliest",
              "--execute")
        coord = wait_for(lambda: [n for n in [coordinator_of(c, group)] if n >= 0], DEADLINE,
                         "the group's coordinator")[0]
        ctl = c.controller()
        victim = [i for i in range(3) if i not in (coord, ctl)][0]
        lost = [p for p in range(9) if p % 3 == victim]
        # the stopped broker last in -b: bootstrap goes to a live one first
        live_first = ",".join(c.bootstrap(i) for i in [*[i for i in range(3) if i != victim],
                                                       victim])
        timeout_ms = 3000
        os.kill(c.brokers[victim].pid, signal.SIGSTOP)
        stopped = victim
        start = time.monotonic()
        p = samsa("group", "describe", "-b", live_first, group, "--timeout", str(timeout_ms),
                  expect=None, timeout=120)
        took = time.monotonic() - start
        err = p.stderr.decode(errors="replace")
        out = p.stdout.decode(errors="replace")
        print("    group describe, broker %d (leading %s) stopped, controller %d, coordinator "
              "%d: exit %d in %.2f s with --timeout %d ms; stderr %r"
              % (victim, lost, ctl, coord, p.returncode, took, timeout_ms, err[-600:]),
              flush=True)
        check(took < 3 * timeout_ms / 1000, "group describe took %.2f s with --timeout %d ms",
              took, timeout_ms)
        eq(p.returncode, 1, "group describe's exit status with log ends missing (stdout %s)"
           % out[-1500:])
        for part in lost:
            check("%s [%d]" % (topic, part) in err,
                  "stderr does not name partition %d, whose leader is stopped: %s", part, err)
        # the live leaders' log ends are printed, the stopped one's are "-"
        rows = {int(f[2]): f[4] for f in (line.split() for line in out.splitlines()[1:])
                if len(f) >= 5 and f[1] == topic}
        eq(sorted(rows), list(range(9)), "the partitions described (stdout %s)" % out)
        eq(sorted(p for p, end in rows.items() if end == "-"), lost,
           "partitions printed without a log end")
    finally:
        if stopped is not None:
            os.kill(c.brokers[stopped].pid, signal.SIGCONT)
        c.close()


def case_group_describe_through_a_stopped_coordinator(t):
    """`samsa group describe` (default --timeout, 30 s) while the group's
    coordinator is stopped (SIGSTOP: its connections hang, they are not
    refused) and is not the controller: each request to the coordinator
    has its own deadline, so once the coordinator's session expired and
    another broker took the group over the command answers from it, well
    within its --timeout, saying on stderr that it asked again, instead of
    waiting on the stopped one for 30 s and failing. The topic's leader
    is the controller, so only the coordinator is stopped."""
    imports()
    c = Cluster(t, config=CONFIG)
    topic = "coordstop"
    stopped = None
    try:
        ctl = wait_for(lambda: [c.controller()] if c.controller() is not None else None,
                       DEADLINE, "a controller")[0]
        c.create_topic(topic, [[ctl]] * 3)
        wait_for(lambda: led_everywhere(c, topic, 3), DEADLINE, "the topic's leader")
        bs = everyone(c)
        group = None
        for i in range(20):
            name = "cs-%d" % i
            samsa("group", "reset-offsets", "-b", bs, name, "-t", topic, "--to-offset", "0",
                  "--execute")
            coord = wait_for(lambda: [n for n in [coordinator_of(c, name)] if n >= 0],
                             DEADLINE, "the group's coordinator")[0]
            if coord != ctl:
                group = name
                break
        check(group is not None, "no group of 20 has a coordinator other than the controller")
        wait_for(lambda: len((c.state(OFFSETS, group_partition(group)) or {}).get("isr", []))
                 == 3, DEADLINE, "the group's offsets partition in sync on three brokers")
        os.kill(c.brokers[coord].pid, signal.SIGSTOP)
        stopped = coord
        start = time.monotonic()
        p = samsa("group", "describe", "-b", bs, group, "--json", expect=None, timeout=120)
        took = time.monotonic() - start
        err = p.stderr.decode(errors="replace")
        print("    group describe, coordinator %d stopped (controller %d): exit %d in %.1f s; "
              "stderr %r" % (coord, ctl, p.returncode, took, err[-600:]), flush=True)
        eq(p.returncode, 0, "group describe's exit status (stderr %s)" % err[-1500:])
        check(took < 25, "group describe took %.1f s with the default --timeout of 30 s", took)
        check("asking again" in err, "stderr does not say it asked again: %s", err)
        got = {r["partition"]: r["current_offset"] for r in json.loads(p.stdout)["partitions"]}
        eq(got, {0: 0, 1: 0, 2: 0}, "the group's committed offsets")
    finally:
        if stopped is not None:
            os.kill(c.brokers[stopped].pid, signal.SIGCONT)
        c.close()


def case_tool_administers_the_cluster(t):
    imports()
    c = Cluster(t, config=CONFIG)
    try:
        ctl = wait_for(lambda: [c.controller()] if c.controller() is not None else None,
                       DEADLINE, "a controller")[0]
        bs = everyone(c)
        # a broker lists the others once the controller's UpdateMetadata came
        info = wait_for(lambda: [i for i in [json.loads(samsa("cluster", "info", "-b", bs,
                                                              "--json").stdout)]
                                 if len(i["brokers"]) == 3 and i["controller"] == ctl],
                        DEADLINE, "cluster info listing three brokers")[0]
        print("    cluster info: %s" % info, flush=True)
        eq(sorted(b["id"] for b in info["brokers"]), [0, 1, 2], "brokers")
        eq({b["id"]: b["port"] for b in info["brokers"]},
           {i: c.brokers[i].port for i in range(3)}, "ports")
        eq(info["controller"], ctl, "controller")
        text = samsa("cluster", "info", "-b", bs).stdout.decode()
        check("CONTROLLER: %d" % ctl in text and
              all("127.0.0.1:%d" % b.port in text for b in c.brokers) and
              "127.0.0.1:%d (controller)" % c.brokers[ctl].port in text,
              "cluster info: %s", text)
        # through the broker that is not the controller, each admin call
        other = c.bootstrap((ctl + 1) % 3)
        samsa("topic", "create", "-b", other, "tt", "--partitions", "3",
              "--replication-factor", "3")
        asg = wait_for(lambda: c.exists("/brokers/topics/tt") and c.json("/brokers/topics/tt"),
                       DEADLINE, "tt in ZooKeeper")
        eq(sorted(len(r) for r in asg["partitions"].values()), [3, 3, 3], "tt's replicas")

        def described():
            # CreateTopics went to the controller: the other broker learns of
            # the topic from its UpdateMetadata, a moment later
            p = samsa("topic", "describe", "-b", other, "tt", "--json", expect=None)
            if p.returncode != 0:
                check(b"Topic 'tt' does not exist" in p.stderr, "%s", p.stderr)
                return None
            d = json.loads(p.stdout)[0]
            return d if all(len(p["isr"]) == 3 for p in d["partition_info"]) else None
        d = wait_for(described, DEADLINE, "tt described with full ISRs")
        print("    describe: %s" % d, flush=True)
        eq((d["partitions"], d["replication_factor"], len(d["partition_info"])), (3, 3, 3),
           "tt's partitions and replication factor")
        for p in d["partition_info"]:
            eq(sorted(p["replicas"]), [0, 1, 2], "replicas of tt-%d" % p["partition"])
            eq(p["replicas"], asg["partitions"][str(p["partition"])],
               "replicas of tt-%d as ZooKeeper has them" % p["partition"])
            check(p["leader"] in p["isr"], "tt-%d: leader %d not in ISR", p["partition"],
                  p["leader"])
        table = samsa("topic", "describe", "-b", other, "tt").stdout.decode()
        check("Replicas" in table and "Isr" in table, "describe's table: %s", table)
        samsa("topic", "alter", "-b", other, "tt", "--config", "retention.ms=123456789")
        wait_for(lambda: c.json("/config/topics/tt")["config"].get("retention.ms") ==
                 "123456789", DEADLINE, "retention.ms in ZooKeeper")
        samsa("topic", "alter", "-b", other, "tt", "--delete-config", "retention.ms")
        wait_for(lambda: "retention.ms" not in c.json("/config/topics/tt")["config"],
                 DEADLINE, "retention.ms gone from ZooKeeper")
        samsa("topic", "alter", "-b", other, "tt", "--partitions", "5")
        eq(len(c.json("/brokers/topics/tt")["partitions"]), 5, "tt's partitions in ZooKeeper")
        wait_for(lambda: len(partitions_of(c.bootstrap(ctl), "tt")) == 5, DEADLINE,
                 "five partitions in the controller's Metadata")
        p = samsa("topic", "alter", "-b", other, "tt", "--partitions", "4", expect=1)
        check(b"INVALID_PARTITIONS" in p.stderr or b"partitions" in p.stderr.lower(),
              "fewer partitions: %s", p.stderr)
        samsa("topic", "delete", "-b", other, "tt")
        check(not c.exists("/brokers/topics/tt"), "tt still in ZooKeeper after the delete")
        # the controller killed: the tool's first Metadata may still name it
        survivors = [i for i in range(3) if i != ctl]
        c.create_topic("gone", [survivors])
        wait_for(lambda: led_everywhere(c, "gone", 1, survivors), DEADLINE, "gone's leader")
        c.brokers[ctl].kill()
        # group list at once: Metadata may still name the dead broker, whose
        # connection is refused; the list comes back promptly (not at the
        # 60 s timeout) with the live brokers' groups and says which failed
        start = time.monotonic()
        p = samsa("group", "list", "-b", ",".join(c.bootstrap(i) for i in survivors),
                  "--timeout", "60000", timeout=120, expect=None)
        took = time.monotonic() - start
        print("    group list after the kill: exit %d in %.1f s, stderr %r"
              % (p.returncode, took, p.stderr.decode()[-300:]), flush=True)
        check(took < 20, "group list took %.1f s with a dead broker", took)
        if p.returncode == 1:
            check(("node %d (127.0.0.1:%d)" % (ctl, c.brokers[ctl].port)).encode() in p.stderr,
                  "group list does not name the dead broker: %s", p.stderr)
        else:
            eq(p.returncode, 0, "group list's exit (Metadata no longer naming the dead broker)")
        p = samsa("topic", "delete", "-b", ",".join(c.bootstrap(i) for i in survivors), "gone",
                  "--timeout", "60000", "-X", "debug=all", timeout=120, expect=None)
        with open(t.path("delete.err"), "wb") as f:
            f.write(p.stderr)
        eq(p.returncode, 0, "samsa topic delete right after the controller's loss (delete.err)")
        check(not c.exists("/brokers/topics/gone"), "gone still in ZooKeeper after the delete")
        new = c.controller()
        check(new in survivors, "controller after the kill: %r", new)
        info = json.loads(samsa("cluster", "info", "-b", c.bootstrap(survivors[0]),
                                "--json").stdout)
        eq((sorted(b["id"] for b in info["brokers"]), info["controller"]), (survivors, new),
           "cluster info after the kill")
    finally:
        c.close()


def listed(bs, flag):
    """{(topic, partition)} that topic describe FLAG lists (its partition lines only)."""
    out = samsa("topic", "describe", "-b", bs, flag).stdout.decode()
    got = set()
    for line in out.splitlines():
        m = re.match(r"\tTopic: (\S+)\tPartition: (\d+)\tLeader: ", line)
        check(m, "%s: a line that is not a partition's: %r", flag, line)
        got.add((m.group(1), int(m.group(2))))
    return got


def case_tool_lists_under_replicated_unavailable_and_under_min_isr(t):
    imports()
    c = Cluster(t, config=CONFIG)
    try:
        ctl = wait_for(lambda: [c.controller()] if c.controller() is not None else None,
                       DEADLINE, "a controller")[0]
        victim = (ctl + 1) % 3
        live = [i for i in range(3) if i != victim]
        c.create_topic("ur", [[0, 1, 2], [1, 2, 0], [2, 0, 1]], {"min.insync.replicas": "3"})
        c.create_topic("solo", [[victim]], {"min.insync.replicas": "1"})
        wait_for(lambda: led_everywhere(c, "ur", 3) and led_everywhere(c, "solo", 1), DEADLINE,
                 "ur and solo led")
        bs = ",".join(c.bootstrap(i) for i in live)
        flags = ("--under-replicated-partitions", "--unavailable-partitions",
                 "--under-min-isr-partitions")
        # every ISR full: nothing listed (the ISRs may still be filling)
        wait_for(lambda: all(listed(bs, f) == set() for f in flags), DEADLINE,
                 "a healthy cluster listing nothing")
        c.brokers[victim].kill()
        ur = {("ur", p) for p in range(3)}
        wait_for(lambda: listed(bs, "--under-replicated-partitions") == ur, DEADLINE,
                 "ur's partitions under-replicated")
        eq(listed(bs, "--unavailable-partitions"), {("solo", 0)}, "--unavailable-partitions")
        under_min = listed(bs, "--under-min-isr-partitions")
        check(ur <= under_min <= ur | {("solo", 0)}, "--under-min-isr-partitions: %s", under_min)
        out = samsa("cluster", "metadata", "-b", bs).stdout.decode()
        print("    cluster metadata after the kill:\n%s" % out, flush=True)
        check(" 2 brokers:\n" in out and "    partition 0, leader -1, replicas: %d," % victim
              in out, "cluster metadata: %s", out)
        for p in range(3):
            check(re.search(r"    partition %d, leader \d, replicas: [\d,]+, isrs: \d,\d\n" % p,
                            out.split('topic "ur"')[1]), "ur-%d: %s", p, out)
    finally:
        c.close()


if __name__ == "__main__":
    MEMBER = os.path.abspath(sys.argv.pop(4))
    PRODUCER = os.path.abspath(sys.argv.pop(3))
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_idempotent_producer_through_a_killed_and_a_bounced_leader,
                   case_member_producer_and_describe_resume_after_a_leader_dies,
                   case_group_member_follows_its_coordinator,
                   case_group_describe_keeps_its_timeout_with_a_stopped_leader,
                   case_group_describe_through_a_stopped_coordinator,
                   case_tool_administers_the_cluster,
                   case_tool_lists_under_replicated_unavailable_and_under_min_isr]))
