#!/usr/bin/python3
"""Transactions with three client families against a standalone
samsa-broker (issue 34's tests 2 and 3, standalone):

    test_txn_clients.py SAMSA_BROKER [-k CASE]

- copier_exactly_once: Kafka 2.0's transactions system test
  (tests/kafkatest/tests/core/transactions_test.py) on one broker and one
  partition (its check_order variant): 2,000 records in an input topic;
  txn_copier.py (confluent-kafka on librdkafka 2.0.2) copies them to an
  output topic in transactions of 50 with its consumer's offsets, aborting
  one transaction in three at random; meanwhile the copier is SIGKILLed
  twice, the broker SIGKILLed and started again (a hard bounce) and stopped
  and started (a clean bounce); a copier that exits (killed, or ended by a
  fatal error as Kafka's does) is started again until it has committed
  everything. Afterwards the output equals the input exactly once and in
  order, read by three families: librdkafka (kcat, read_committed by
  default), a kafkajs 2.2.4 read_committed group member and sarama 1.22
  (Consumer.IsolationLevel ReadCommitted, go/sarama-client); the group's
  committed offset is the input's end.
- kafkajs_send_offsets: a kafkajs transactional producer's
  transaction.sendOffsets with a group: committed, the group's offset is
  the one sent and the record is visible to read_committed; aborted, the
  offset stays and the record is never visible.
"""

import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kwire  # noqa: E402
from broker import Skip, check, eq, main  # noqa: E402

try:
    import confluent_kafka as ck
except ImportError:  # pragma: no cover
    ck = None

from goclients import go_run  # noqa: E402
from test_kafkajs import node_dir  # noqa: E402

CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
}
N = 2000
DEADLINE = 240.0


def need():
    if ck is None:
        raise Skip("python3-confluent-kafka is not installed")


def kcat_values(b, topic):
    out = subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", topic, "-p", "0", "-e", "-q",
                          "-X", "isolation.level=read_committed", "-f", "%s\\n"],
                         capture_output=True, timeout=120, check=True).stdout
    return out.decode().splitlines()


def kafkajs(b, *args):
    nd = node_dir()
    env = dict(os.environ, NODE_PATH=os.path.join(nd, "node_modules"))
    p = subprocess.run(["node", os.path.join(HERE, "txn_kafkajs.js"), b.bootstrap] +
                       [str(a) for a in args], capture_output=True, timeout=120, env=env)
    if p.returncode != 0:
        raise AssertionError("txn_kafkajs.js %s: exit %d\n%s" % (
            args[0], p.returncode, p.stderr.decode(errors="replace")[-2000:]))
    return [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]


def committed(b, group, topic):
    c = ck.Consumer({"bootstrap.servers": b.bootstrap, "group.id": group})
    try:
        return c.committed([ck.TopicPartition(topic, 0)], timeout=20)[0].offset
    finally:
        c.close()


class Copier:
    """txn_copier.py as a child process, its progress read from its output."""

    def __init__(self, b, seed):
        self.b = b
        self.seed = seed
        self.proc = None
        self.progress = 0
        self.starts = 0
        self.log = open(os.path.join(b.dir, "copier.log"), "ab")

    def start(self):
        self.starts += 1
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", os.path.join(HERE, "txn_copier.py"), self.b.bootstrap, "cin",
             "cout", "copier-0", "copier-group", "--until", str(N), "--per-txn", "50",
             "--seed", str(self.seed + self.starts)],
            stdout=subprocess.PIPE, stderr=self.log)
        os.set_blocking(self.proc.stdout.fileno(), False)

    def poll(self):
        """Reads what it printed; returns its exit status once it ended."""
        try:
            chunk = self.proc.stdout.read()
        except (BlockingIOError, ValueError):
            chunk = None
        for line in (chunk or b"").decode().splitlines():
            if line.startswith("committed "):
                self.progress = max(self.progress, int(line.split()[1]))
        return self.proc.poll()

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def case_copier_exactly_once(t):
    need()
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "cin", 1)
    kwire.create_topic(b.port, "cout", 1)
    p = ck.Producer({"bootstrap.servers": b.bootstrap, "enable.idempotence": True})
    for i in range(N):
        p.produce("cin", key=b"k-%d" % i, value=b"v-%d" % i, partition=0)
    eq(p.flush(60), 0, "input records not delivered")
    del p
    c = Copier(b, seed=34)
    c.start()
    # the faults, each once the copier passed a share of the input
    faults = [(0.2, "kill copier"), (0.35, "hard bounce"), (0.55, "clean bounce"),
              (0.75, "kill copier")]
    end = time.monotonic() + DEADLINE
    try:
        while True:
            status = c.poll()
            if status == 0:
                break
            if status is not None:
                c.start()  # it died (killed, or a fatal error): again
            if faults and c.progress >= faults[0][0] * N:
                _, what = faults.pop(0)
                if what == "kill copier":
                    c.kill()
                elif what == "hard bounce":
                    b.kill()
                    b.start()
                else:
                    b.stop()
                    b.start()
            check(time.monotonic() < end, "the copier reached %d of %d in %d s (%d starts)",
                  c.progress, N, DEADLINE, c.starts)
            time.sleep(0.1)
    finally:
        c.kill()
    eq(faults, [], "faults not injected")
    want = ["v-%d" % i for i in range(N)]
    got = kcat_values(b, "cout")
    eq(len(got), N, "records kcat reads read_committed")
    eq(got, want, "the output read by librdkafka (kcat)")
    js = kafkajs(b, "read", "cout", "js-verifier", N)
    eq([r["value"] for r in js], want, "the output read by kafkajs")
    sar = [r for r in go_run("sarama-client", "consume", "-brokers", b.bootstrap, "-topic", "cout",
                             "-partitions", 1, "-read-committed", "-expect", N)
           if "value" in r]
    eq([r["value"] for r in sar], want, "the output read by sarama")
    eq(committed(b, "copier-group", "cin"), N, "the copier group's committed offset")
    check(c.starts >= 3, "the copier was started %d times", c.starts)


def case_kafkajs_send_offsets(t):
    need()
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "ksrc", 1)
    kwire.create_topic(b.port, "kout", 1)
    eq(kafkajs(b, "send-offsets", "kout", "ksrc", "kjs-group", "kjs-1", 5, "commit"),
       [{"done": "commit"}], "the committed transaction")
    eq(committed(b, "kjs-group", "ksrc"), 5, "the group's offset after the commit")
    eq(kafkajs(b, "send-offsets", "kout", "ksrc", "kjs-group", "kjs-1", 9, "abort"),
       [{"done": "abort"}], "the aborted transaction")
    eq(committed(b, "kjs-group", "ksrc"), 5, "the group's offset after the abort")
    eq(kcat_values(b, "kout"), ["via-5"], "kout read_committed")


if __name__ == "__main__":
    sys.exit(main([case_copier_exactly_once, case_kafkajs_send_offsets]))
