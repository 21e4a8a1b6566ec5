"""libsamsa-streams on a 3-broker cluster (tests/integration/test_cluster.py's
Cluster: three samsa-brokers and a real ZooKeeper): the word count example
(client/streams/examples/wordcount.c) counts while the broker leading its
input, repartition and changelog partitions is killed (SIGKILL) mid-run;
the partitions get new leaders, the example's clients follow them, and the
final counts equal a Python oracle, no count ever above it.

    test_streams_cluster.py SAMSA_BROKER SAMSA_TOOL WORDCOUNT [-k CASE]
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
from test_cluster import Cluster, imports, led_everywhere, partitions_of, wait_for  # noqa: E402

import test_streams_integration as wc  # noqa: E402  (the word count's helpers)
import test_streams_recovery as rec  # noqa: E402

TIMEOUT = 120
SPREAD = [[0, 1, 2], [1, 2, 0], [2, 0, 1]]


def case_a_leader_failover_mid_run_keeps_the_counts_exact(t):
    imports()
    c = Cluster(t, config={
        "min.insync.replicas": "2",
        "default.replication.factor": "3",  # the internal topics the example creates
        "offsets.topic.num.partitions": "3",
        "group.initial.rebalance.delay.ms": "0",
        "group.min.session.timeout.ms": "1000",
    })
    app = None
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        for topic in ("lines", "counts"):
            c.create_topic(topic, SPREAD)
            wait_for(lambda topic=topic: led_everywhere(c, topic, 3), 60,
                     "%s's leaders known everywhere" % topic)
        bs = ",".join(c.bootstrap(i) for i in range(3))
        batches = [wc.lines_of(3000 + i, 1000) for i in range(3)]
        wc.produce(bs, "lines", batches[0])
        app = rec.Run(t, bs, 0)
        wc.wait_for_counts(bs, wc.oracle(batches[0]), app)
        for topic in ("wc-counts-repartition", "wc-counts-changelog"):
            wait_for(lambda topic=topic: led_everywhere(c, topic, 3), 60,
                     "%s's leaders known everywhere" % topic)
        # the leader of partition 0 of the changelog: it leads a partition
        # of every topic the example reads and writes (SPREAD, and the
        # internal topics spread alike by the broker)
        victim = partitions_of(c.bootstrap(0), "wc-counts-changelog")[0][1]
        led = {topic: sorted(p for p, v in partitions_of(c.bootstrap(0), topic).items()
                             if v[1] == victim)
               for topic in ("lines", "counts", "wc-counts-repartition", "wc-counts-changelog")}
        failed = []
        producer = threading.Thread(target=rec.produce_in_parts, args=(bs, batches[1], failed))
        producer.start()
        time.sleep(0.5)  # mid-batch
        c.brokers[victim].kill()
        producer.join(timeout=TIMEOUT)
        check(not failed, "producing during the failover: %s", failed)
        alive = [i for i in range(3) if i != victim]
        wait_for(lambda: all(v[1] in alive for v in
                             partitions_of(c.bootstrap(alive[0]), "wc-counts-changelog").values()),
                 60, "the changelog led by the live brokers")
        bs_alive = ",".join(c.bootstrap(i) for i in alive)
        wc.produce(bs_alive, "lines", batches[2])
        want = wc.oracle([line for b in batches for line in b])
        deadline = time.monotonic() + TIMEOUT
        seq = {}
        while time.monotonic() < deadline:
            check(app.proc.poll() is None, "wordcount exited: %s", open(app.log).read()[-2000:])
            seq = wc.read_output(bs_alive, "counts")
            if {k: v[-1] for k, v in seq.items()} == want:
                break
            rec.check_never_above(seq, want, "during the failover")
            time.sleep(0.5)
        rec.check_never_above(seq, want, "at the end")
        eq({k: v[-1] for k, v in seq.items()}, want, "the final counts")
        log = app.stop()
        print("  broker %d killed, it led %s; %d lines, %d words, %d updates written; %s"
              % (victim, led, sum(len(b) for b in batches), sum(want.values()),
                 sum(len(v) for v in seq.values()), log.strip().splitlines()[-1]))
    finally:
        if app is not None:
            app.kill()
        c.close()


if __name__ == "__main__":
    wc.WORDCOUNT = os.path.abspath(sys.argv.pop(3))
    wc.TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_a_leader_failover_mid_run_keeps_the_counts_exact]))
