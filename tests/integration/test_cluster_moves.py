"""Partition reassignment on a cluster of samsa-brokers and a real ZooKeeper
on 127.0.0.1 (issue 36; Kafka 2.0's KafkaController.onPartitionReassignment):

- a topic of 6 partitions on brokers {0,1,2} moved to {1,2,3} by
  /admin/reassign_partitions in Kafka's JSON while confluent-kafka produces
  to it with acks=all: every acknowledged record is read back, each
  partition's assignment and ISR are the new replicas, broker 0's
  directories of the topic are gone, the znode is deleted, and Metadata
  (librdkafka) names the new replicas;
- the controller killed in the middle of a move (the assignment grown to
  old + new, the new replica paused so it cannot catch up): the next
  controller resumes the move from ZooKeeper and finishes it;
- moves the controller refuses (a partition that does not exist, a broker
  that is not registered, the replicas a partition has) are taken out of
  the znode and nothing changes.

Usage: test_cluster_moves.py SAMSA_BROKER [-k NAME]
"""

import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, main  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, wait_for  # noqa: E402

REASSIGN = "/admin/reassign_partitions"


def write_move(c, moves):
    """moves: {(topic, partition): [replicas]} as kafka-reassign-partitions.sh
    --execute writes them."""
    doc = {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)}
        for (t, p), r in sorted(moves.items())]}
    c.kz.create(CHROOT + REASSIGN, json.dumps(doc).encode())


def assignment(c, topic):
    parts = c.json("/brokers/topics/%s" % topic)["partitions"]
    return {int(p): r for p, r in parts.items()}


def dirs_of(b, topic):
    if not os.path.isdir(b.log_dir):
        return []
    return sorted(d for d in os.listdir(b.log_dir) if d.startswith(topic + "-"))


class Load:
    """confluent-kafka producing numbered records with acks=all until
    stopped; acked holds (partition, value) of each acknowledged one."""

    def __init__(self, bootstrap, topic, partitions):
        import confluent_kafka
        self.topic = topic
        self.partitions = partitions
        self.acked = set()
        self.failed = 0
        self.stop = threading.Event()
        self.p = confluent_kafka.Producer({
            "bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
            "message.timeout.ms": 120000, "retry.backoff.ms": 100,
            "topic.metadata.refresh.interval.ms": 1000})
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def report(self, err, msg):
        if err is None:
            self.acked.add((msg.partition(), msg.value().decode()))
        else:
            self.failed += 1

    def run(self):
        n = 0
        while not self.stop.is_set():
            for part in range(self.partitions):
                try:
                    self.p.produce(self.topic, value=("v%d" % n).encode(), partition=part,
                                   on_delivery=self.report)
                except BufferError:
                    pass
                n += 1
            self.p.poll(0.01)

    def finish(self):
        self.stop.set()
        self.thread.join(30)
        left = self.p.flush(120)
        self.p = None  # closed before the brokers stop
        check(left == 0, "%d records still unanswered after 120 s", left)


def read_all(bootstrap, topic, partitions):
    """Every record of the topic (librdkafka): {(partition, value)}."""
    import confluent_kafka
    cons = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "reader",
                                     "enable.auto.commit": False,
                                     "enable.partition.eof": True})
    try:
        cons.assign([confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                     for p in range(partitions)])
        got = set()
        eof = set()
        deadline = time.monotonic() + 120
        while len(eof) < partitions and time.monotonic() < deadline:
            m = cons.poll(1.0)
            if m is None:
                continue
            if m.error():
                if m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                continue
            got.add((m.partition(), m.value().decode()))
        check(len(eof) == partitions, "read to the end of %d of %d partitions", len(eof),
              partitions)
        return got
    finally:
        cons.close()


def replicas_in_metadata(bootstrap, topic):
    import confluent_kafka.admin
    a = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})
    md = a.list_topics(topic, timeout=30)
    return {p: sorted(pm.replicas) for p, pm in md.topics[topic].partitions.items()}


def case_six_partitions_move_to_a_new_broker_under_load(t):
    """6 partitions on {0,1,2} moved to {1,2,3} while acks=all records flow:
    0 acknowledged records lost, the move visible everywhere, broker 0's
    replicas deleted."""
    imports()
    c = Cluster(t, n=4)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        old = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [1, 0, 2], [2, 1, 0]]
        new = [[1, 2, 3], [2, 3, 1], [3, 1, 2], [1, 3, 2], [2, 1, 3], [3, 2, 1]]
        c.create_topic("moved", old, {"min.insync.replicas": "2"})
        wait_for(lambda: all((c.state("moved", p) or {}).get("leader") == old[p][0]
                             for p in range(6)), 60, "moved's partitions led")
        load = Load(c.bootstrap(1), "moved", 6)
        try:
            wait_for(lambda: len(load.acked) >= 3000, 60, "3000 records acknowledged")
            began = time.monotonic()
            write_move(c, {("moved", p): new[p] for p in range(6)})
            wait_for(lambda: not c.exists(REASSIGN), 120, "the reassignment's znode deleted")
            print("6 partitions moved in %.2f s with %d records acknowledged so far" %
                  (time.monotonic() - began, len(load.acked)), flush=True)
            n_before = len(load.acked)
            wait_for(lambda: len(load.acked) >= n_before + 3000, 60,
                     "3000 more records acknowledged after the move")
        finally:
            load.finish()
        eq(assignment(c, "moved"), dict(enumerate(new)), "moved's assignment")
        for p in range(6):
            st = c.state("moved", p)
            check(st["leader"] in new[p], "moved-%d led by %r, not one of %r", p, st["leader"],
                  new[p])
            wait_for(lambda p=p: sorted(c.state("moved", p)["isr"]) == sorted(new[p]), 60,
                     "moved-%d's ISR %r" % (p, new[p]))
        wait_for(lambda: dirs_of(c.brokers[0], "moved") == [], 60,
                 "broker 0's directories of moved removed")
        for i in (1, 2, 3):
            eq(len(dirs_of(c.brokers[i], "moved")), 6, "broker %d's directories of moved" % i)
        for i in (0, 3):
            eq(wait_for(lambda i=i: (lambda m: m if m == {p: sorted(new[p]) for p in range(6)}
                                     else None)(replicas_in_metadata(c.bootstrap(i), "moved")),
                        30, "broker %d's Metadata with the new replicas" % i),
               {p: sorted(new[p]) for p in range(6)}, "replicas in broker %d's Metadata" % i)
        got = read_all(c.bootstrap(3), "moved", 6)
        lost = load.acked - got
        print("%d records acknowledged, %d read back, %d failed deliveries" %
              (len(load.acked), len(got), load.failed), flush=True)
        eq(sorted(lost)[:10], [], "acknowledged records missing (%d)" % len(lost))
    finally:
        c.close()


def case_controller_killed_in_the_middle_of_a_move(t):
    """The new replica (broker 3) paused, the move written, the assignment
    grown to old + new, the controller killed: the next controller resumes
    the move, which finishes once broker 3 runs and the killed broker is
    back."""
    imports()
    c = Cluster(t, n=4)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        if c.controller() == 3:
            c.brokers[3].kill()
            wait_for(lambda: c.controller() not in (None, 3), 60, "a controller other than 3")
            c.brokers[3].start()
            wait_for(lambda: "3" in c.children("/brokers/ids"), 60, "broker 3 registered")
        ctl = c.controller()
        c.create_topic("mid", [[0, 1, 2], [1, 2, 0]])
        wait_for(lambda: all((c.state("mid", p) or {}).get("leader") is not None
                             for p in range(2)), 60, "mid led")
        from test_cluster import produce
        acked = produce(c.bootstrap(0), "mid", [(p, "r%d" % i) for i in range(200)
                                                for p in range(2)], acks=-1)
        eq(sum(len(v) for v in acked.values()), 400, "records acknowledged")
        target = {0: [3, 1, 2], 1: [2, 3, 1]}
        b3 = c.brokers[3]
        os.kill(b3.pid, signal.SIGSTOP)
        try:
            write_move(c, {("mid", p): r for p, r in target.items()})
            wait_for(lambda: all(3 in assignment(c, "mid")[p] and len(assignment(c, "mid")[p]) > 3
                                 for p in range(2)), 30, "mid's assignment grown to old + new")
            c.brokers[ctl].kill()
        finally:
            os.kill(b3.pid, signal.SIGCONT)
        killed = time.monotonic()
        check(c.exists(REASSIGN), "the move finished with its new replica paused")
        wait_for(lambda: c.controller() not in (None, ctl), 60, "another controller")
        c.brokers[ctl].start()
        wait_for(lambda: not c.exists(REASSIGN), 120, "the reassignment's znode deleted")
        print("the move finished %.2f s after its controller was killed" %
              (time.monotonic() - killed), flush=True)
        eq(assignment(c, "mid"), target, "mid's assignment")
        for p in range(2):
            wait_for(lambda p=p: sorted(c.state("mid", p)["isr"]) == sorted(target[p]), 60,
                     "mid-%d's ISR %r" % (p, target[p]))
        wait_for(lambda: dirs_of(c.brokers[0], "mid") == [], 60,
                 "broker 0's directories of mid removed")
        got = read_all(c.bootstrap(3), "mid", 2)
        eq(len(got), 400, "records read back")
    finally:
        c.close()


def case_moves_the_controller_refuses(t):
    """A partition that does not exist, a broker that is not registered,
    and the replicas a partition has already: each is taken out of the
    znode, nothing moves."""
    imports()
    c = Cluster(t, n=3)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("stay", [[0, 1], [1, 2]])
        wait_for(lambda: all((c.state("stay", p) or {}).get("leader") is not None
                             for p in range(2)), 60, "stay led")
        write_move(c, {("stay", 0): [0, 1], ("stay", 1): [1, 7], ("stay", 5): [0, 1],
                       ("nosuch", 0): [0, 1]})
        wait_for(lambda: not c.exists(REASSIGN), 30, "the znode deleted")
        eq(assignment(c, "stay"), {0: [0, 1], 1: [1, 2]}, "stay's assignment")
        log = "".join(c.brokers[c.controller()].log_text() for _ in [0])
        for what in ("stay-0 to [0,1] is refused: it is assigned to these replicas already",
                     "stay-1 to [1,7] is refused: a replica it moves to is on a broker that is "
                     "not live",
                     "stay-5 to [0,1] is refused: the partition does not exist"):
            check(what in log, "the controller's log says %r", what)
    finally:
        c.close()


if __name__ == "__main__":
    main([case_six_partitions_move_to_a_new_broker_under_load,
          case_controller_killed_in_the_middle_of_a_move,
          case_moves_the_controller_refuses])
