#!/usr/bin/python3
"""Kafka 2.0's transactions system test on a cluster (issue 34's test 2 on
three brokers):

    test_txn_cluster.py SAMSA_BROKER [-k CASE]

- copier_on_a_cluster: three samsa-brokers and a real ZooKeeper; the
  input and output topics and __transaction_state replicated 3 times
  (min.insync.replicas 2). txn_copier.py (confluent-kafka on librdkafka
  2.0.2) copies 2,000 records in transactions of 50 with its consumer's
  offsets, aborting one in three at random, while the copier is SIGKILLed,
  the copier's transaction coordinator is SIGKILLed and started again (a
  hard bounce), the output partition's leader is stopped and started (a
  clean bounce) and the copier is SIGKILLed again; a copier that exits is
  started again until it committed everything. Afterwards the output
  equals the input exactly once and in order, read read_committed by
  librdkafka (kcat), kafkajs and sarama; the group's committed offset is
  the input's end.

Every process is stopped by its PID.
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from broker import check, eq, main  # noqa: E402
from test_cluster import Cluster, led_everywhere, wait_for  # noqa: E402
from test_txn_clients import (  # noqa: E402
    N, Copier, ck, committed, go_run, kafkajs, kcat_values, need)

TXN_PARTITIONS = 3
CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "3",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.num.partitions": str(TXN_PARTITIONS),
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
}
DEADLINE = 300.0


def java_hash(s):
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


class Bootstrap:
    """What the copier and the readers take of a broker: its bootstrap
    list (here every broker's) and a folder for the copier's log."""

    def __init__(self, c, folder, brokers=None):
        self.bootstrap = ",".join(c.bootstrap(i) for i in (brokers or range(len(c.brokers))))
        self.dir = folder
        os.makedirs(folder, exist_ok=True)


def leader(c, topic, partition):
    st = c.state(topic, partition)
    return None if st is None else st["leader"]


def case_copier_on_a_cluster(t):
    need()
    c = Cluster(t, config=CONFIG)
    try:
        c.create_topic("cin", [[0, 1, 2]], {"min.insync.replicas": "2"})
        c.create_topic("cout", [[1, 2, 0]], {"min.insync.replicas": "2"})
        wait_for(lambda: led_everywhere(c, "cin", 1) and led_everywhere(c, "cout", 1), 60,
                 "cin and cout led everywhere")
        b = Bootstrap(c, t.path("copier"))
        p = ck.Producer({"bootstrap.servers": b.bootstrap, "enable.idempotence": True})
        for i in range(N):
            p.produce("cin", key=b"k-%d" % i, value=b"v-%d" % i, partition=0)
        eq(p.flush(60), 0, "input records not delivered")
        del p
        h = java_hash("copier-0")
        txn_partition = (0 if h == -(1 << 31) else abs(h)) % TXN_PARTITIONS
        cp = Copier(b, seed=35)
        cp.start()
        faults = [(0.15, "kill copier"), (0.35, "hard bounce coordinator"),
                  (0.55, "clean bounce cout leader"), (0.75, "kill copier")]
        end = time.monotonic() + DEADLINE
        try:
            while True:
                status = cp.poll()
                if status == 0:
                    break
                if status is not None:
                    cp.start()
                if faults and cp.progress >= faults[0][0] * N:
                    _, what = faults.pop(0)
                    if what == "kill copier":
                        cp.kill()
                    elif what == "hard bounce coordinator":
                        n = leader(c, "__transaction_state", txn_partition)
                        check(n is not None, "no coordinator for copier-0")
                        print("SIGKILL of broker %d, the coordinator" % n)
                        c.brokers[n].kill()
                        c.brokers[n].start()
                    else:
                        n = leader(c, "cout", 0)
                        check(n is not None, "no leader of cout-0")
                        print("SIGTERM of broker %d, cout-0's leader" % n)
                        c.brokers[n].stop()
                        c.brokers[n].start()
                check(time.monotonic() < end, "the copier reached %d of %d in %d s (%d starts)",
                      cp.progress, N, DEADLINE, cp.starts)
                time.sleep(0.1)
        finally:
            cp.kill()
        eq(faults, [], "faults not injected")
        want = ["v-%d" % i for i in range(N)]
        # kafkajs and sarama-client take one bootstrap broker
        b = Bootstrap(c, t.path("copier"), brokers=[2])
        got = kcat_values(b, "cout")
        eq(len(got), N, "records kcat reads read_committed")
        eq(got, want, "the output read by librdkafka (kcat)")
        js = kafkajs(b, "read", "cout", "js-verifier", N)
        eq([r["value"] for r in js], want, "the output read by kafkajs")
        sar = [r for r in go_run("sarama-client", "consume", "-brokers", b.bootstrap, "-topic",
                                 "cout", "-partitions", 1, "-read-committed", "-expect", N)
               if "value" in r]
        eq([r["value"] for r in sar], want, "the output read by sarama")
        eq(committed(b, "copier-group", "cin"), N, "the copier group's committed offset")
        print("copier started %d times" % cp.starts)
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_copier_on_a_cluster]))
