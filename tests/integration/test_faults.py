"""The fault suite: what a cluster acknowledged survives its faults.

In the spirit of Kafka's replication_test.py: three samsa-brokers and a
real ZooKeeper on 127.0.0.1, a topic of three partitions with replication
factor 3 and min.insync.replicas=2, an idempotent acks=all producer
(librdkafka) running throughout each case, and a checker that reads the
topic back after the faults:

- every acknowledged message is read back exactly once, and no message is
  in the log twice;
- per key, the acknowledged messages are read in the order they were
  produced;
- the producer kept going: it acknowledged messages after the last fault;
- the replicas' logs converge: each partition's bytes are the same on the
  three brokers.

Faults, one case each: the leader killed (SIGKILL) and restarted three
times in a row, the controller killed and restarted, a clean bounce of the
leader (SIGTERM) twice, a follower paused (SIGSTOP) and resumed, ZooKeeper
restarted (the brokers go on serving while it is away).

SAMSA_FAULTS_SECURITY=sasl_ssl runs the suite over SASL_SSL (the
cluster-faults-sasl-ssl test): the brokers replicate, the controller
sends and the markers go over a SASL_SSL inter-broker listener
(SCRAM-SHA-512, test_cluster_interbroker.py's cluster), and the producer
and the checker are clients of it; a PLAINTEXT listener stays for the
harness's own probes.

Each case prints its figures: acknowledged, lost, duplicated, and the
unavailability (the longest gap between two acknowledgements). Every
process is stopped by its PID; waits are conditions with deadlines.
"""

import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, main  # noqa: E402
from test_cluster import Cluster, imports, led_everywhere, wait_for  # noqa: E402

TOPIC = "faults"
PARTITIONS = 3
KEYS = 12
RATE = 400  # messages per second offered by the producer
DEADLINE = 90  # seconds for any one condition


def confluent():
    try:
        import confluent_kafka
    except ImportError as e:
        raise Skip("needs confluent-kafka (%s)" % e)
    return confluent_kafka


class Producer(threading.Thread):
    """An idempotent acks=all librdkafka producer offering RATE messages a
    second, values "<key>:<seq>" with seq counting per key, until stopped.
    Remembers what was acknowledged and when."""

    def __init__(self, ck, bootstrap, extra=None):
        super().__init__(daemon=True)
        self.p = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all",
                              "enable.idempotence": True, "linger.ms": 2,
                              "message.timeout.ms": 180000,
                              "topic.metadata.refresh.interval.ms": 1000, **(extra or {})})
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()
        self.acked = []  # (partition, offset, value)
        self.ack_times = []
        self.failed = []
        self.sent = 0
        self.t0 = time.monotonic()

    def report(self, err, msg):
        now = time.monotonic()
        with self.lock:
            if err is not None:
                self.failed.append((msg.value().decode(), str(err)))
            else:
                self.acked.append((msg.partition(), msg.offset(), msg.value().decode()))
                self.ack_times.append((msg.partition(), now))

    def event(self, what):
        """A step of the fault, printed with the time since the producer
        started (to read beside the unavailability)."""
        print("      %5.1f s: %s" % (time.monotonic() - self.t0, what), flush=True)

    def count(self):
        with self.lock:
            return len(self.acked)

    def counts(self):
        """{partition: acknowledgements}"""
        with self.lock:
            out = {}
            for p, _, _ in self.acked:
                out[p] = out.get(p, 0) + 1
            return out

    def run(self):
        seq = [0] * KEYS
        period = 1.0 / RATE
        next_at = time.monotonic()
        i = 0
        while not self.stop_flag.is_set():
            k = i % KEYS
            value = "k%d:%d" % (k, seq[k])
            try:
                self.p.produce(TOPIC, key=b"k%d" % k, value=value.encode(),
                               on_delivery=self.report)
                seq[k] += 1
                i += 1
                self.sent += 1
            except BufferError:
                pass
            self.p.poll(0)
            next_at += period
            delay = next_at - time.monotonic()
            if delay > 0:
                self.p.poll(delay)
            else:
                next_at = time.monotonic()
        self.left = self.p.flush(180)

    def finish(self):
        self.stop_flag.set()
        self.join(240)
        check(not self.is_alive(), "the producer did not finish")

    def longest_gap(self):
        """The unavailability: the longest time a partition went without an
        acknowledgement (the producer offers every partition messages all
        the time), as (seconds, partition, when it began on the monotonic
        clock)."""
        with self.lock:
            t = list(self.ack_times)
        longest = (0.0, -1, 0.0)
        for p in {p for p, _ in t}:
            times = [x for q, x in t if q == p]
            for a, b in zip(times, times[1:]):
                if b - a > longest[0]:
                    longest = (b - a, p, a)
        return longest


def read_back(ck, bootstrap, want):
    """Every record of the topic: {partition: [(offset, value)] in offset
    order}."""
    cons = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "fault-checker",
                        "enable.auto.commit": False, "auto.offset.reset": "earliest", **CLIENT})
    got = {p: [] for p in range(PARTITIONS)}
    try:
        cons.assign([ck.TopicPartition(TOPIC, p, ck.OFFSET_BEGINNING) for p in range(PARTITIONS)])
        n = 0
        deadline = time.monotonic() + DEADLINE
        while n < want and time.monotonic() < deadline:
            m = cons.poll(1.0)
            if m is not None and m.error() is None:
                got[m.partition()].append((m.offset(), m.value().decode()))
                n += 1
        # whatever else is there (messages written but not acknowledged)
        quiet = time.monotonic() + 3
        while time.monotonic() < quiet:
            m = cons.poll(0.5)
            if m is not None and m.error() is None:
                got[m.partition()].append((m.offset(), m.value().decode()))
                quiet = time.monotonic() + 3
    finally:
        cons.close()
    return {p: sorted(vals) for p, vals in got.items()}


def partition_bytes(b, p, topic=TOPIC):
    """The concatenated segments of topic-p on broker b."""
    d = os.path.join(b.log_dir, "%s-%d" % (topic, p))
    if not os.path.isdir(d):
        return None
    out = b""
    for f in sorted(os.listdir(d)):
        if f.endswith(".log"):
            with open(os.path.join(d, f), "rb") as fh:
                out += fh.read()
    return out


def in_sync(c, n=3):
    """Every partition's state znode has n replicas in its ISR and a leader."""
    for p in range(PARTITIONS):
        st = c.state(TOPIC, p)
        if st is None or st["leader"] < 0 or len(st["isr"]) != n:
            return False
    return True


def leader_of(c, p=0):
    st = c.state(TOPIC, p)
    return st["leader"] if st is not None else -1


def progress(prod, more=40, partitions=None):
    """Waits until the producer had `more` messages acknowledged beyond
    now on every partition (or on those named): a fault comes only once the
    last one's partitions are served again, so each fault's unavailability
    is its own (with a count over all partitions, a partition's new leader
    could be stopped before the producer found it, and one gap spanned
    them)."""
    want = list(range(PARTITIONS)) if partitions is None else list(partitions)
    base = prod.counts()
    wait_for(lambda: all(prod.counts().get(p, 0) >= base.get(p, 0) + more for p in want),
             DEADLINE, "%d more acknowledgements on partitions %s (have %s)" % (more, want, base))


def check_outcome(name, ck, c, prod, t0):
    """The invariants, and the case's figures printed."""
    prod.finish()
    with prod.lock:
        acked = list(prod.acked)
        failed = list(prod.failed)
    eq(failed, [], "messages the producer gave up on")
    eq(prod.left, 0, "messages left unflushed")
    live = [i for i, b in enumerate(c.brokers) if b.alive()]
    wait_for(lambda: in_sync(c, len(live)), DEADLINE, "every partition's ISR full again")
    logs = read_back(ck, c.bootstrap(live[0]), len(acked))
    read = [v for p in range(PARTITIONS) for _, v in logs[p]]
    seen = {}
    for v in read:
        seen[v] = seen.get(v, 0) + 1
    acked_values = [v for _, _, v in acked]
    lost = [v for v in acked_values if v not in seen]
    duplicated = sorted(v for v, n in seen.items() if n > 1)
    gap, gap_p, gap_at = prod.longest_gap()
    print("    %s: %d acknowledged, %d lost, %d duplicated, %d in the log, unavailability "
          "%.2f s (partition %d, from %.1f s), %.0f s in all"
          % (name, len(acked), len(lost), len(duplicated), len(read), gap, gap_p, gap_at - t0,
             time.monotonic() - t0), flush=True)
    eq(lost[:10], [], "acknowledged messages lost (%d in all)" % len(lost))
    eq(duplicated[:10], [], "messages in the log twice (%d in all)" % len(duplicated))
    # per key, the acknowledged ones in production order
    acked_set = set(acked_values)
    for p in range(PARTITIONS):
        last = {}
        for _, v in logs[p]:
            if v not in acked_set:
                continue
            k, s = v.split(":")
            check(int(s) > last.get(k, -1), "partition %d: %s read after %s:%d", p, v, k,
                  last.get(k, -1))
            last[k] = int(s)
    # every acknowledgement's offset holds what it acknowledged
    where = {(p, off): v for p in range(PARTITIONS) for off, v in logs[p]}
    wrong = [(p, o, v) for p, o, v in acked if where.get((p, o)) != v]
    eq(wrong[:10], [], "acknowledged offsets holding other messages")
    # the replicas converge byte for byte
    for p in range(PARTITIONS):
        wait_for(lambda p=p: len({partition_bytes(c.brokers[i], p) for i in live}) == 1,
                 DEADLINE, "the replicas of %s-%d identical" % (TOPIC, p))


SECURITY = os.environ.get("SAMSA_FAULTS_SECURITY", "plaintext")
# the clients' settings and bootstrap (the SASL_SSL mode's: set in fault_case)
CLIENT = {}


def fault_case(t, name, fault):
    imports()
    ck = confluent()
    # SAMSA_TEST_LOG_LEVEL=debug keeps the brokers' every step for a failure's study
    config = {"min.insync.replicas": "2", "replica.lag.time.max.ms": "3000",
              "offsets.topic.replication.factor": "3",
              "log.level": os.environ.get("SAMSA_TEST_LOG_LEVEL", "info")}
    CLIENT.clear()
    if SECURITY == "sasl_ssl":
        from test_cluster_interbroker import client_conf, sasl_ssl_cluster
        c = sasl_ssl_cluster(t, config=config, plaintext=True)
        CLIENT.update(client_conf(c))
    else:
        c = Cluster(t, config=config)
    try:
        wait_for(lambda: c.controller() is not None, DEADLINE, "a controller")
        c.create_topic(TOPIC, [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
        wait_for(lambda: led_everywhere(c, TOPIC, PARTITIONS), DEADLINE, "the topic's leaders")
        wait_for(lambda: in_sync(c), DEADLINE, "every replica in sync")
        bootstrap = ",".join(c.bootstrap(i) for i in range(3))
        prod = Producer(ck, bootstrap, extra=CLIENT)
        prod.start()
        t0 = prod.t0
        try:
            progress(prod, 200)
            fault(c, prod)
            progress(prod, 200)
        except BaseException:
            prod.stop_flag.set()
            raise
        check_outcome(name, ck, c, prod, t0)
    finally:
        c.close()


def restart(c, i):
    c.brokers[i].start()


def stop_and_restart_leader(c, prod, times, stop):
    """times in a row: the leader of partition 0 stopped by stop(broker),
    another leads, it starts again and rejoins every ISR."""
    for _ in range(times):
        old = leader_of(c)
        others = [b for i, b in enumerate(c.brokers) if i != old]
        marks = [len(b.log_text()) for b in others]
        stop(c.brokers[old])
        prod.event("broker %d stopped" % old)
        wait_for(lambda: leader_of(c) not in (old, -1), DEADLINE, "a new leader after %d" % old)
        prod.event("partition 0 led by %d" % leader_of(c))
        progress(prod)
        # a broker that is going or gone is never taken back into an ISR
        # (acks=all would wait for it until replica.lag.time.max.ms)
        for b, mark in zip(others, marks):
            joined = "broker %d caught up with the high watermark" % old
            check(joined not in b.log_text()[mark:], "%s took broker %d back into an ISR "
                  "while it was stopped", b.name, old)
        restart(c, old)
        prod.event("broker %d started" % old)
        wait_for(lambda: in_sync(c), DEADLINE, "broker %d back in every ISR" % old)
        prod.event("every ISR full")
        progress(prod)


def case_leader_killed_and_restarted_three_times(t):
    fault_case(t, "leader killed and restarted 3x",
               lambda c, prod: stop_and_restart_leader(c, prod, 3, lambda b: b.kill()))


def case_controller_killed_and_restarted(t):
    def fault(c, prod):
        old = c.controller()
        c.brokers[old].kill()
        wait_for(lambda: c.controller() not in (None, old), DEADLINE, "a new controller")
        progress(prod)
        restart(c, old)
        wait_for(lambda: in_sync(c), DEADLINE, "broker %d back in every ISR" % old)
    fault_case(t, "controller killed and restarted", fault)


def case_leader_bounced_cleanly_twice(t):
    def bounce(b):
        b.stop()
        # a controlled shutdown: the leaderships moved before it stopped
        check("every partition this broker led is led elsewhere" in b.log_text(),
              "%s stopped without handing its leaderships over", b.name)
    fault_case(t, "leader bounced (SIGTERM) 2x",
               lambda c, prod: stop_and_restart_leader(c, prod, 2, bounce))


def case_follower_paused_and_resumed(t):
    def fault(c, prod):
        st = c.state(TOPIC, 0)
        follower = next(r for r in st["isr"] if r != st["leader"])
        # the partitions it leads wait for it: a paused leader keeps its
        # connections, and the producer's requests to it wait for their
        # timeout even once another broker leads (past the session)
        others = [p for p in range(PARTITIONS) if c.state(TOPIC, p)["leader"] != follower]
        os.kill(c.brokers[follower].pid, signal.SIGSTOP)
        prod.event("broker %d paused" % follower)
        try:
            wait_for(lambda: all(follower not in c.state(TOPIC, p)["isr"]
                                 or c.state(TOPIC, p)["leader"] == follower
                                 for p in range(PARTITIONS)),
                     DEADLINE, "broker %d out of the ISRs it follows in" % follower)
            prod.event("broker %d out of the ISRs it follows in" % follower)
            progress(prod, partitions=others)
        finally:
            os.kill(c.brokers[follower].pid, signal.SIGCONT)
            prod.event("broker %d resumed" % follower)
        wait_for(lambda: in_sync(c), DEADLINE, "broker %d back in every ISR" % follower)
    fault_case(t, "follower paused and resumed", fault)


def case_zookeeper_restarted(t):
    def fault(c, prod):
        c.kz.stop()
        c.zk.stop()
        try:
            # the leaders go on acknowledging while ZooKeeper is away
            progress(prod)
        finally:
            c.zk.restart()
            c.kz.start(timeout=30)
        wait_for(lambda: c.controller() is not None, DEADLINE, "a controller after the restart")
        wait_for(lambda: in_sync(c), DEADLINE, "every replica in sync after the restart")
    fault_case(t, "ZooKeeper restarted", fault)


if __name__ == "__main__":
    sys.exit(main([case_leader_killed_and_restarted_three_times,
                   case_controller_killed_and_restarted,
                   case_leader_bounced_cleanly_twice,
                   case_follower_paused_and_resumed,
                   case_zookeeper_restarted]))
