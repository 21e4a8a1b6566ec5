#!/usr/bin/python3
"""CreateTopics runs off the reactor: while thousands of partitions are made
(directories, segment and index files, fsyncs, the metadata file rewritten),
every other client keeps being served.

    test_create_topics.py SAMSA_BROKER [-k CASE]

- others_served_while_creating: CreateTopics of 40 topics x 100 partitions
  (4,000 partitions) on one connection; meanwhile a second connection does
  ApiVersions and Produce round trips on an existing topic without pause.
  No round trip may take 1 s or more (the reactor used to be blocked for the
  whole creation: seconds); prints p50/p99/max of the round trips during
  the creation and its total time. Afterwards every topic has its 100
  partitions, each with a leader, and partitions of every topic take a
  Produce and give the records back.
- same_name_while_creating: while a topic of 500 partitions is being
  made, a CreateTopics of the same name from another connection is answered
  TOPIC_ALREADY_EXISTS at once (before the first is answered), Metadata names
  the topic as LEADER_NOT_AVAILABLE without partitions (never a part of
  them) and does not auto-create it; then it has its 500 partitions.
- closed_while_parked: the connection that sent a CreateTopics closes before
  the answer: the creation still completes (the topics appear with all their
  partitions), other connections are served meanwhile, and SIGTERM then
  stops the broker with status 0.
- sigkill_during_creation: SIGKILL while 10 x 100 partitions are being made;
  the next start succeeds, and each topic is either absent (no directory of
  it left on disk) or complete (every partition served, Produce accepted).
- sigterm_during_creation: SIGTERM while 5 x 100 are being made: the broker
  finishes the creation, exits 0, and after a start every topic is there.
- timeout_zero: CreateTopics with timeout 0 is answered at once with
  REQUEST_TIMED_OUT for the topics whose creation started (Kafka 2.0's
  AdminManager.createTopics) and the creation goes on to the end; with a
  timeout of 20 ms the topics not made by then are REQUEST_TIMED_OUT
  (DelayedCreatePartitions) and are made all the same.
- delete_while_serving: DeleteTopics of 10 topics x 100 partitions (and an
  unknown one) while another client's round trips go on (none reaches 1 s):
  answered NONE (UNKNOWN_TOPIC_OR_PARTITION) only once no directory of them
  is left; the topics are gone, and a topic made again under one of the
  names is empty.

Topics have at most 500 partitions here, so that Metadata of one topic
stays small.

Partitions hold a few descriptors each: the broker's RLIMIT_NOFILE is
raised (prlimit) to its hard limit, and the sizes shrink when that is too
low for 4,000 partitions.
"""

import os
import resource
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402
from kwire import array, i16, i32, string  # noqa: E402

DELETE_TOPICS = 20
TOPIC_ALREADY_EXISTS = 36
LEADER_NOT_AVAILABLE = 5
REQUEST_TIMED_OUT = 7

BOUND_S = 1.0          # no round trip of another client may take this long
FDS_PER_PARTITION = 4  # what a partition holds (log, index, time index, directory)


def raise_fd_limit(b, partitions):
    """Sets the broker's soft RLIMIT_NOFILE to its hard limit; returns how
    many partitions fit under it."""
    soft, hard = resource.prlimit(b.pid, resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if want > soft:
        resource.prlimit(b.pid, resource.RLIMIT_NOFILE, (want, hard))
    fit = (want - 300) // FDS_PER_PARTITION
    if fit < partitions:
        print("RLIMIT_NOFILE hard limit %d: %d partitions instead of %d"
              % (want, fit, partitions))
    return min(fit, partitions)


def start(t, **config):
    b = t.broker(config=config or None)
    return b


def create_request(corr, topics, timeout_ms):
    """CreateTopics v0 of [(name, partitions)], replication factor 1."""
    body = (array([string(n) + i32(p) + i16(1) + array([]) + array([]) for n, p in topics])
            + i32(timeout_ms))
    return kwire.request(kwire.CREATE_TOPICS, 0, corr, body)


def metadata_topic(sock, corr, topic):
    """Metadata v1 of one topic -> (err, {p: (err, leader)})."""
    _, _, _, topics = kwire.parse_metadata_v1(kwire.roundtrip(sock, kwire.metadata_v1(corr,
                                                                                    [topic])))
    return topics.get(topic, (None, {}))


def layout(total, ntopics):
    per = max(1, total // ntopics)
    return ["big%02d" % i for i in range(ntopics)], per


class Prober(threading.Thread):
    """ApiVersions and Produce round trips on an existing topic, one after
    the other on one connection, each timed."""

    def __init__(self, port, topic):
        super().__init__(daemon=True)
        self.port = port
        self.topic = topic
        self.samples = []  # (start, seconds)
        self.error = None
        self.stop_at = None
        self._halt = threading.Event()

    def run(self):
        try:
            with kwire.connect(self.port, timeout=60.0) as s:
                corr = 0
                batch = kwire.record_batch([(b"k", b"probe")])
                while not self._halt.is_set():
                    corr += 1
                    if corr % 2:
                        req = kwire.api_versions_v0(corr)
                    else:
                        req = kwire.produce_v3(corr, self.topic, 0, batch)
                    t0 = time.monotonic()
                    resp = kwire.roundtrip(s, req, timeout=120.0)
                    dt = time.monotonic() - t0
                    eq(kwire.correlation_id(resp), corr, "probe correlation id")
                    if corr % 2 == 0:
                        _, parts = kwire.parse_produce_v3(resp)
                        eq(parts[(self.topic, 0)][0], kwire.NONE, "probe Produce error")
                    self.samples.append((t0, dt))
                    time.sleep(0.005)
        except Exception as e:  # reported by the case
            self.error = e

    def halt(self):
        self._halt.set()
        self.join(180)
        if self.error is not None:
            raise AssertionError("the probe client failed: %r" % (self.error,))

    def during(self, t0, t1):
        return [dt for start, dt in self.samples if start + dt >= t0 and start <= t1]


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def check_topics(port, names, per, produce=True):
    """Every topic has `per` partitions with a leader; the first and last
    partition of each take a Produce and give the record back."""
    with kwire.connect(port) as s:
        corr = 0
        for n in names:
            corr += 1
            err, parts = metadata_topic(s, corr, n)
            eq(err, kwire.NONE, "Metadata error of %s" % n)
            eq(len(parts), per, "partitions of %s" % n)
            check(all(e == kwire.NONE and leader == 0 for e, leader in parts.values()),
                  "%s: a partition without its leader: %r", n, parts)
    if not produce:
        return
    for n in names:
        for p in sorted({0, per - 1}):
            base = kwire.produce(port, n, p, [(b"key", b"value of %s-%d" % (n.encode(), p))])
            recs, hw = kwire.read_partition(port, n, p, start=base)
            eq(hw, base + 1, "high watermark of %s-%d" % (n, p))
            eq(recs[0][3], b"value of %s-%d" % (n.encode(), p), "record of %s-%d" % (n, p))


def case_others_served_while_creating(t):
    b = start(t)
    total = raise_fd_limit(b, 4000)
    names, per = layout(total, 40)
    kwire.create_topic(b.port, "probe", 1)
    prober = Prober(b.port, "probe")
    prober.start()
    while len(prober.samples) < 20:
        check(prober.error is None, "probe failed: %r", prober.error)
        time.sleep(0.01)
    with kwire.connect(b.port, timeout=600.0) as s:
        t0 = time.monotonic()
        resp = kwire.roundtrip(s, create_request(1, [(n, per) for n in names], 600000),
                               timeout=600.0)
        t1 = time.monotonic()
    _, errs = kwire.parse_create_topics_v0(resp)
    eq(errs, {n: kwire.NONE for n in names}, "CreateTopics results")
    time.sleep(0.2)  # a few more probes after the answer
    prober.halt()
    during = prober.during(t0, t1)
    print("created %d topics x %d partitions in %.2f s; %d round trips of another client "
          "meanwhile: p50 %.1f ms, p99 %.1f ms, max %.1f ms"
          % (len(names), per, t1 - t0, len(during), 1000 * pct(during or [0], 50),
             1000 * pct(during or [0], 99), 1000 * max(during or [0])), flush=True)
    worst = max(dt for _, dt in prober.samples)
    check(worst < BOUND_S, "a round trip of another client took %.2f s while topics were "
          "being created (bound %.1f s)", worst, BOUND_S)
    check(len(during) >= 2 or t1 - t0 < 0.2,
          "only %d round trips of the other client during a creation of %.2f s",
          len(during), t1 - t0)
    check_topics(b.port, names, per)
    b.stop()


def case_same_name_while_creating(t):
    b = start(t)
    per = raise_fd_limit(b, 500)
    first = kwire.connect(b.port, timeout=600.0)
    with first:
        t0 = time.monotonic()
        first.sendall(create_request(1, [("same", per)], 600000))
        with kwire.connect(b.port) as other:
            resp = kwire.roundtrip(other, create_request(2, [("same", 1)], 600000))
            t_dup = time.monotonic() - t0
            _, errs = kwire.parse_create_topics_v0(resp)
            eq(errs, {"same": TOPIC_ALREADY_EXISTS}, "a second CreateTopics of the name")
            err, parts = metadata_topic(other, 3, "same")
        first.settimeout(600.0)
        resp = kwire.recv_frame(first, timeout=600.0)
        t_first = time.monotonic() - t0
    _, errs = kwire.parse_create_topics_v0(resp)
    eq(errs, {"same": kwire.NONE}, "the first CreateTopics of the name")
    print("second CreateTopics answered after %.3f s, the first after %.2f s; Metadata "
          "meanwhile: error %r with %d partition(s)" % (t_dup, t_first, err, len(parts)))
    check(t_dup < t_first, "the second CreateTopics waited for the first (%.2f s, %.2f s)",
          t_dup, t_first)
    check(parts == {} and err in (LEADER_NOT_AVAILABLE, kwire.NONE),
          "Metadata of a topic being made: error %r, %d partition(s)", err, len(parts))
    if err == kwire.NONE:
        raise AssertionError("the creation ended before Metadata asked: nothing was shown")
    check_topics(b.port, ["same"], per, produce=False)
    b.stop()


def case_closed_while_parked(t):
    b = start(t)
    total = raise_fd_limit(b, 500)
    names, per = layout(total, 5)
    s = kwire.connect(b.port)
    s.sendall(create_request(1, [(n, per) for n in names], 600000))
    s.close()
    deadline = time.monotonic() + 300
    with kwire.connect(b.port) as o:
        corr = 0
        while True:
            corr += 1
            t0 = time.monotonic()
            kwire.roundtrip(o, kwire.api_versions_v0(corr))
            check(time.monotonic() - t0 < BOUND_S, "ApiVersions took %.2f s",
                  time.monotonic() - t0)
            corr += 1
            err, parts = metadata_topic(o, corr, names[-1])
            if err == kwire.NONE and len(parts) == per:
                break
            check(time.monotonic() < deadline, "the topics of a closed connection never came")
            time.sleep(0.05)
    check_topics(b.port, names, per, produce=False)
    b.stop()
    check("ERROR" not in b.log_text(), "ERROR lines in the broker's log")


def wait_for_dirs(b, prefix, count, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = sum(1 for d in os.listdir(b.log_dir) if d.startswith(prefix))
        if n >= count:
            return n
        time.sleep(0.002)
    raise AssertionError("no %d directories %s* within %.0f s" % (count, prefix, timeout))


def topic_state(port, names):
    """{name: partitions} of the topics Metadata knows (auto-creation off)."""
    out = {}
    with kwire.connect(port) as s:
        for i, n in enumerate(names):
            err, parts = metadata_topic(s, i + 1, n)
            if err == kwire.UNKNOWN_TOPIC_OR_PARTITION:
                continue
            eq(err, kwire.NONE, "Metadata error of %s" % n)
            out[n] = len(parts)
    return out


def case_sigkill_during_creation(t):
    b = start(t, **{"auto.create.topics.enable": "false"})
    total = raise_fd_limit(b, 1000)
    names, per = layout(total, 10)
    with kwire.connect(b.port) as s:
        s.sendall(create_request(1, [(n, per) for n in names], 600000))
        seen = wait_for_dirs(b, "big", total // 3)
        b.kill()
    print("SIGKILL with %d partition directories on disk" % seen)
    b.start(timeout=300)
    raise_fd_limit(b, total)
    state = topic_state(b.port, names)
    for n in names:
        dirs = [d for d in os.listdir(b.log_dir) if d.rsplit("-", 1)[0] == n]
        if n in state:
            eq(state[n], per, "partitions of %s after the restart" % n)
            eq(len(dirs), per, "directories of %s after the restart" % n)
        else:
            eq(dirs, [], "directories of %s, a topic that does not exist" % n)
    print("after the restart: %d of %d topics exist, all complete" % (len(state), len(names)))
    check_topics(b.port, sorted(state), per)
    b.stop()


def case_sigterm_during_creation(t):
    b = start(t, **{"auto.create.topics.enable": "false"})
    total = raise_fd_limit(b, 500)
    names, per = layout(total, 5)
    with kwire.connect(b.port, timeout=600.0) as s:
        s.sendall(create_request(1, [(n, per) for n in names], 600000))
        wait_for_dirs(b, "big", total // 4)
        b.stop(timeout=300)
    b.start(timeout=300)
    raise_fd_limit(b, total)
    eq(topic_state(b.port, names), {n: per for n in names}, "topics after SIGTERM and a start")
    check_topics(b.port, names[:2], per)
    b.stop()


def case_timeout_zero(t):
    b = start(t, **{"auto.create.topics.enable": "false"})
    total = raise_fd_limit(b, 200)
    names, per = layout(total, 4)
    with kwire.connect(b.port) as s:
        t0 = time.monotonic()
        _, errs = kwire.parse_create_topics_v0(
            kwire.roundtrip(s, create_request(1, [(n, per) for n in names] + [("bad!", 1)], 0)))
        dt = time.monotonic() - t0
    eq(errs, dict({n: REQUEST_TIMED_OUT for n in names}, **{"bad!": 17}),
       "CreateTopics with timeout 0")
    print("CreateTopics with timeout 0 answered in %.3f s" % dt)
    for n in names:
        kwire.wait_topic(b.port, n, per, timeout=120)
    # a timeout shorter than the creation: REQUEST_TIMED_OUT when it passes
    more = ["late%d" % i for i in range(4)]
    with kwire.connect(b.port) as s:
        t0 = time.monotonic()
        _, errs = kwire.parse_create_topics_v0(
            kwire.roundtrip(s, create_request(2, [(n, per) for n in more], 20)))
        dt = time.monotonic() - t0
    print("CreateTopics with timeout 20 ms answered in %.3f s: %r" % (dt, errs))
    check(set(errs) == set(more) and set(errs.values()) <= {kwire.NONE, REQUEST_TIMED_OUT},
          "CreateTopics with timeout 20 ms: %r", errs)
    check(REQUEST_TIMED_OUT in errs.values(), "every topic made within 20 ms: %r", errs)
    for n in more:
        kwire.wait_topic(b.port, n, per, timeout=120)
    b.stop()


def delete_request(corr, names, timeout_ms):
    """DeleteTopics v0."""
    body = array([string(n) for n in names]) + i32(timeout_ms)
    return kwire.request(DELETE_TOPICS, 0, corr, body)


def case_delete_while_serving(t):
    b = start(t, **{"auto.create.topics.enable": "false"})
    total = raise_fd_limit(b, 1000)
    names, per = layout(total, 10)
    with kwire.connect(b.port, timeout=600.0) as s:
        _, errs = kwire.parse_create_topics_v0(
            kwire.roundtrip(s, create_request(1, [(n, per) for n in names], 600000),
                            timeout=600.0))
    eq(errs, {n: kwire.NONE for n in names}, "CreateTopics results")
    for n in names:
        kwire.produce(b.port, n, 0, [(b"k", b"old data of " + n.encode())])
    kwire.create_topic(b.port, "probe", 1)
    prober = Prober(b.port, "probe")
    prober.start()
    while len(prober.samples) < 20:
        check(prober.error is None, "probe failed: %r", prober.error)
        time.sleep(0.01)
    with kwire.connect(b.port, timeout=600.0) as s:
        t0 = time.monotonic()
        r = kwire.Reader(kwire.roundtrip(s, delete_request(2, names + ["nope"], 600000),
                                         timeout=600.0))
        t1 = time.monotonic()
    r.i32()
    errs = dict(r.array(lambda r: (r.string(), r.i16())))
    # answered only once every directory is gone
    left = [d for d in os.listdir(b.log_dir) if d.startswith("big")]
    prober.halt()
    during = prober.during(t0, t1)
    print("deleted %d topics x %d partitions in %.2f s; %d round trips meanwhile: p50 %.1f ms, "
          "max %.1f ms" % (len(names), per, t1 - t0, len(during),
                           1000 * pct(during or [0], 50), 1000 * max(during or [0])))
    eq(errs, dict({n: kwire.NONE for n in names}, nope=kwire.UNKNOWN_TOPIC_OR_PARTITION),
       "DeleteTopics results")
    eq(left, [], "directories left when DeleteTopics answered")
    worst = max(dt for _, dt in prober.samples)
    check(worst < BOUND_S, "a round trip took %.2f s during the deletion", worst)
    eq(topic_state(b.port, names), {}, "topics after the deletion")
    # made again, it is a new, empty topic
    with kwire.connect(b.port, timeout=120.0) as s:
        _, errs = kwire.parse_create_topics_v0(
            kwire.roundtrip(s, create_request(3, [(names[0], 2)], 60000), timeout=120.0))
    eq(errs, {names[0]: kwire.NONE}, "CreateTopics of a deleted name")
    recs, hw = kwire.read_partition(b.port, names[0], 0)
    eq((recs, hw), ([], 0), "records of a topic made again")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_others_served_while_creating, case_same_name_while_creating,
                   case_closed_while_parked, case_sigkill_during_creation,
                   case_sigterm_during_creation, case_timeout_zero,
                   case_delete_while_serving]))
