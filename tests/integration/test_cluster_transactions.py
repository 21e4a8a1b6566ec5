"""Transactions on a cluster: three samsa-brokers, a real ZooKeeper and
confluent-kafka's transactional producer (librdkafka 2.0.2), read back by
read_committed consumers.

- coordinator_and_markers_across_brokers: __transaction_state is made
  through ZooKeeper (replicated 3 times, min.insync.replicas from
  transaction.state.log.min.isr); every broker names the same coordinator
  for a transactional id, the leader of its partition (Java's String hash);
  one producer commits, aborts and commits transactions over three
  partitions led by three brokers, so its markers go to the other leaders
  with WriteTxnMarkers: read_committed reads exactly the committed
  records, read_uncommitted all of them, and every partition's last
  stable offset reaches its high watermark.
- coordinator_killed_mid_transaction: the coordinator is killed (SIGKILL)
  with a transaction open; the producer's commit goes to the partition's
  new leader, which loaded the transaction from its replica of
  __transaction_state: both transactions are read by read_committed.
- coordinator_killed_between_commit_and_markers: the leader of the data
  partition is paused (SIGSTOP) so that its marker cannot be written; the
  producer's commit is answered once the PrepareCommit record is in the
  ISR; the coordinator is then killed (SIGKILL) before any marker could
  land, and the leader resumed (SIGCONT): the next coordinator reads
  PrepareCommit back, sends the markers, and read_committed reads the
  transaction (a coordinator that did not would leave the partition's
  last stable offset stuck before it for good).

Runs on Debian's /usr/bin/python3 with kafka-python, kazoo and
confluent-kafka. Every process is stopped by its PID.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, main  # noqa: E402
import kwire  # noqa: E402
from test_cluster import Cluster, led_everywhere, wait_for  # noqa: E402

TXN = "__transaction_state"
TXN_PARTITIONS = 4
CONFIG = {
    "transaction.state.log.num.partitions": str(TXN_PARTITIONS),
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "offsets.topic.num.partitions": "4",
    "offsets.topic.replication.factor": "3",
    # a paused follower leaves the ISR within seconds
    "replica.lag.time.max.ms": "2000",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
}


def confluent():
    try:
        import confluent_kafka
    except ImportError as e:
        raise Skip("needs confluent-kafka (%s)" % e)
    return confluent_kafka


def java_hash(s):
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def txn_partition(txn_id):
    h = java_hash(txn_id)
    return (0 if h == -(1 << 31) else abs(h)) % TXN_PARTITIONS


def find_txn_coordinator(port, txn_id):
    """(error, node id) of FindCoordinator v1 with key type 1."""
    with kwire.connect(port) as s:
        r = kwire.Reader(kwire.roundtrip(s, kwire.request(kwire.FIND_COORDINATOR, 1, 1,
                                                          kwire.string(txn_id) + kwire.i8(1))))
        r.i32()  # correlation id
        r.i32()  # throttle time
        err = r.i16()
        r.string()  # error message (nullable)
        return err, r.i32()


def coordinator(c, txn_id, brokers):
    """[the coordinator] every broker in brokers names for txn_id, once
    they agree and it leads the id's partition of __transaction_state;
    else None."""
    named = set()
    for i in brokers:
        err, node = find_txn_coordinator(c.brokers[i].port, txn_id)
        if err != 0:
            return None
        named.add(node)
    if len(named) != 1:
        return None
    node = named.pop()
    st = c.state(TXN, txn_partition(txn_id))
    return [node] if st is not None and st["leader"] == node else None


def new_coordinator(c, txn_id, brokers, old):
    """[the coordinator] as coordinator() names it, once it is not old."""
    got = coordinator(c, txn_id, brokers)
    return got if got is not None and got[0] != old else None


def producer(ck, bootstrap, txn_id):
    p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                     "transaction.timeout.ms": 60000, "linger.ms": 5})
    p.init_transactions(60)
    return p


def send_values(p, topic, values, partition):
    for v in values:
        p.produce(topic, value=v.encode(), partition=partition)
    check(p.flush(60) == 0, "records of %s left unsent", topic)


def read_all(ck, bootstrap, topic, partitions, isolation, want, timeout=60):
    """Every value of the partitions (from the start) a consumer with
    isolation reads until it has `want` values and then one more second;
    the values in order per partition."""
    cons = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "r-%f" % time.time(),
                        "enable.auto.commit": False, "auto.offset.reset": "earliest",
                        "isolation.level": isolation})
    got = {p: [] for p in partitions}
    try:
        cons.assign([ck.TopicPartition(topic, p, 0) for p in partitions])
        deadline = time.monotonic() + timeout
        quiet_until = None
        while time.monotonic() < deadline:
            m = cons.poll(0.2)
            if m is not None and m.error() is None:
                got[m.partition()].append(m.value().decode())
            if sum(len(v) for v in got.values()) >= want:
                if quiet_until is None:
                    quiet_until = time.monotonic() + 1.0
                elif time.monotonic() >= quiet_until:
                    break
    finally:
        cons.close()
    return got


def lso_and_hw(ck, bootstrap, topic, partition):
    """(read_committed end, read_uncommitted end) of a partition."""
    ends = []
    for iso in ("read_committed", "read_uncommitted"):
        cons = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "w",
                            "isolation.level": iso})
        try:
            ends.append(cons.get_watermark_offsets(ck.TopicPartition(topic, partition),
                                                   timeout=10)[1])
        finally:
            cons.close()
    return tuple(ends)


def case_coordinator_and_markers_across_brokers(t):
    ck = confluent()
    c = Cluster(t, config=CONFIG)
    try:
        # three partitions, each led by another broker
        c.create_topic("ct", [[0, 1, 2], [1, 2, 0], [2, 0, 1]], {"min.insync.replicas": "2"})
        wait_for(lambda: led_everywhere(c, "ct", 3), 60, "%s led everywhere" % "ct")
        txn_id = "copier-7"
        # the first FindCoordinator asks for __transaction_state
        [node] = wait_for(lambda: coordinator(c, txn_id, range(3)), 60,
                          "every broker naming one coordinator for %s" % txn_id)
        st = c.json("/brokers/topics/%s" % TXN)
        eq(len(st["partitions"]), TXN_PARTITIONS, "partitions of %s" % TXN)
        check(all(len(r) == 3 for r in st["partitions"].values()),
              "%s replicated 3 times: %s", TXN, st["partitions"])
        cfg = c.json("/config/topics/%s" % TXN)["config"]
        eq(cfg.get("min.insync.replicas"), "2", "%s's min.insync.replicas" % TXN)
        eq(cfg.get("cleanup.policy"), "compact", "%s's cleanup.policy" % TXN)
        print("coordinator of %s: broker %d (partition %d)" % (txn_id, node, txn_partition(txn_id)))
        # bootstrapped on a broker that is not the coordinator
        p = producer(ck, c.bootstrap((node + 1) % 3), txn_id)
        want = {0: [], 1: [], 2: []}
        everything = {0: [], 1: [], 2: []}
        for n, commit in enumerate((True, False, True)):
            p.begin_transaction()
            for part in range(3):
                vals = ["t%d-p%d-%d" % (n, part, i) for i in range(20)]
                send_values(p, "ct", vals, part)
                everything[part] += vals
                if commit:
                    want[part] += vals
            if commit:
                p.commit_transaction(60)
            else:
                p.abort_transaction(60)
        got = read_all(ck, c.bootstrap(0), "ct", range(3), "read_committed",
                       sum(len(v) for v in want.values()))
        eq(got, want, "what read_committed reads")
        got = read_all(ck, c.bootstrap(1), "ct", range(3), "read_uncommitted",
                       sum(len(v) for v in everything.values()))
        eq(got, everything, "what read_uncommitted reads")
        for part in range(3):
            # the markers are in: the last stable offset is the HW (60
            # records and 3 markers per partition)
            wait_for(lambda part=part: lso_and_hw(ck, c.bootstrap(2), "ct", part) == (63, 63),
                     30, "ct-%d's LSO at its HW of 63" % part)
    finally:
        c.close()


def coordinated_by_other_than(c, avoid):
    """A transactional id whose partition of __transaction_state is led
    by a broker not in avoid, with that broker."""
    for i in range(1000):
        txn_id = "tx-%d" % i
        st = c.state(TXN, txn_partition(txn_id))
        if st is not None and st["leader"] not in avoid:
            return txn_id, st["leader"]
    raise AssertionError("no transactional id is coordinated outside %s" % (avoid,))


def make_txn_topic(c, ck):
    """__transaction_state made (a FindCoordinator asks for it) and led
    everywhere."""
    wait_for(lambda: coordinator(c, "warm-up", range(3)), 60, "a transaction coordinator")
    wait_for(lambda: led_everywhere(c, TXN, TXN_PARTITIONS), 60, "%s led everywhere" % TXN)


def case_coordinator_killed_mid_transaction(t):
    ck = confluent()
    c = Cluster(t, config=CONFIG)
    try:
        make_txn_topic(c, ck)
        txn_id, coord = coordinated_by_other_than(c, ())
        other = [i for i in range(3) if i != coord]
        # the data partition led by another broker than the coordinator
        c.create_topic("ck", [[other[0], other[1], coord]], {"min.insync.replicas": "2"})
        wait_for(lambda: led_everywhere(c, "ck", 1), 60, "%s led everywhere" % "ck")
        p = producer(ck, c.bootstrap(other[0]), txn_id)
        p.begin_transaction()
        first = ["a-%d" % i for i in range(30)]
        send_values(p, "ck", first, 0)
        p.commit_transaction(60)
        p.begin_transaction()
        second = ["b-%d" % i for i in range(30)]
        send_values(p, "ck", second, 0)
        # the coordinator dies with the transaction open
        c.brokers[coord].kill()
        wait_for(lambda: new_coordinator(c, txn_id, other, coord), 60,
                 "a coordinator of %s other than broker %d" % (txn_id, coord))
        p.commit_transaction(90)
        got = read_all(ck, c.bootstrap(other[0]), "ck", [0], "read_committed", 60)
        eq(got[0], first + second, "what read_committed reads")
    finally:
        c.close()


def case_coordinator_killed_between_commit_and_markers(t):
    ck = confluent()
    c = Cluster(t, config=CONFIG)
    try:
        make_txn_topic(c, ck)
        txn_id, coord = coordinated_by_other_than(c, ())
        other = [i for i in range(3) if i != coord]
        data_leader, third = other
        # the data partition has one replica, on a broker that is not the
        # coordinator: paused, nobody can take its marker
        c.create_topic("cm", [[data_leader]])
        wait_for(lambda: led_everywhere(c, "cm", 1), 60, "%s led everywhere" % "cm")
        p = producer(ck, c.bootstrap(third), txn_id)
        p.begin_transaction()
        vals = ["m-%d" % i for i in range(25)]
        send_values(p, "cm", vals, 0)
        os.kill(c.brokers[data_leader].pid, signal.SIGSTOP)
        try:
            # answered once PrepareCommit is in the ISR (the paused broker
            # leaves it after replica.lag.time.max.ms); the markers wait
            t0 = time.monotonic()
            p.commit_transaction(60)
            print("commit answered in %.1f s with broker %d paused" %
                  (time.monotonic() - t0, data_leader))
            c.brokers[coord].kill()
        finally:
            os.kill(c.brokers[data_leader].pid, signal.SIGCONT)
        wait_for(lambda: new_coordinator(c, txn_id, other, coord), 60,
                 "a coordinator of %s other than broker %d" % (txn_id, coord))
        got = read_all(ck, c.bootstrap(third), "cm", [0], "read_committed", len(vals), timeout=90)
        eq(got[0], vals, "what read_committed reads after the coordinator's failover")
        # the marker may be there twice: the first coordinator's request
        # was in the paused broker's socket when it was killed (Kafka
        # appends a marker again as well)
        wait_for(lambda: lso_and_hw(ck, c.bootstrap(third), "cm", 0) in ((26, 26), (27, 27)), 30,
                 "cm-0's LSO at its HW after the markers")
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_coordinator_and_markers_across_brokers,
                   case_coordinator_killed_mid_transaction,
                   case_coordinator_killed_between_commit_and_markers]))
