"""A partition move as the admin API shows it, on four samsa-brokers and a
real ZooKeeper on 127.0.0.1 (issue 36; broker/README.md, "The admin API"):
every broker watches /admin/reassign_partitions and serves the moves under
way at /v1/reassignments, and each moving partition of /v1/topics/{t}
carries its "reassignment" (target, adding, removing).

Broker 3, the replica being added, fetches one record batch per 500 ms
(replica.fetch.max.bytes=1 with a replica.fetch.min.bytes no fetch reaches,
so the leader holds each fetch for replica.fetch.wait.max.ms): once the
leader has seen it fetch, it is paused (SIGSTOP) so that the move cannot
finish, and the leader's document shows it adding with its LEO below the HW.
Once it runs again the move finishes and the documents empty.

Usage: test_cluster_moves_admin.py SAMSA_BROKER [-k NAME]
"""

import json
import os
import signal
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, main  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, wait_for  # noqa: E402

REASSIGN = "/admin/reassign_partitions"
RECORDS = 12


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=10) as r:
        return json.loads(r.read())


def produce_batches(bootstrap, topic, n):
    """n records to partition 0, each acknowledged (acks=all) before the
    next is sent: one record batch each."""
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", api_version=(1, 0), linger_ms=0,
                      max_block_ms=30000, request_timeout_ms=30000)
    try:
        for i in range(n):
            p.send(topic, value=("r%d" % i).encode(), partition=0).get(timeout=30)
    finally:
        p.close()


def moves_of(url):
    return {(m["topic"], m["partition"]): m for m in get(url, "/v1/reassignments")["reassignments"]}


def case_move_under_way_in_the_admin_api(t):
    """shown-0 on [0,1,2] moved to [1,2,3] with broker 3 paused mid-catch-up:
    the leader's /v1/reassignments shows target [1,2,3], replicas
    [1,2,3,0], adding [3] with its LEO below the HW, removing [0]; another
    broker's the same without the LEOs; the topic document's partition its
    "reassignment"; both empty once broker 3 runs and the move is done."""
    imports()

    def make(i, cfg):
        cfg = {**cfg, "admin.listeners": "http://127.0.0.1:0"}
        if i == 3:
            # a fetch returns one batch and waits replica.fetch.wait.max.ms
            # (500) for bytes that never come; a session outliving the pause
            cfg.update({"replica.fetch.max.bytes": "1", "replica.fetch.min.bytes": "100000000",
                        "zookeeper.session.timeout.ms": "20000"})
        return t.broker(name="broker%d" % i, start=False, config=cfg)
    c = Cluster(t, n=4, make_broker=make)
    b3 = c.brokers[3]
    paused = False
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        if c.controller() == 3:
            b3.kill()
            wait_for(lambda: c.controller() not in (None, 3), 60, "a controller other than 3")
            b3.start()
            wait_for(lambda: "3" in c.children("/brokers/ids"), 60, "broker 3 registered")
        c.create_topic("shown", [[0, 1, 2]])
        wait_for(lambda: (c.state("shown", 0) or {}).get("leader") == 0 and
                 sorted(c.state("shown", 0)["isr"]) == [0, 1, 2], 60, "shown-0 led by 0, ISR 0,1,2")
        produce_batches(c.bootstrap(0), "shown", RECORDS)
        urls = {i: c.json("/brokers/ids/%d" % i)["admin_endpoint"] for i in range(4)}
        eq(moves_of(urls[0]), {}, "moves before the znode")

        c.kz.create(CHROOT + REASSIGN, json.dumps({"version": 1, "partitions": [
            {"topic": "shown", "partition": 0, "replicas": [1, 2, 3]}]}).encode())

        def fetched():
            m = moves_of(urls[0]).get(("shown", 0))
            leo = m.get("replica_leos", {}).get("3") if m is not None else None
            return m if leo is not None and leo >= 1 else None
        wait_for(fetched, 60, "the leader's document with broker 3's LEO from a fetch")
        os.kill(b3.pid, signal.SIGSTOP)
        paused = True
        m = moves_of(urls[0])[("shown", 0)]
        print("while paused: %s" % json.dumps(m, sort_keys=True), flush=True)
        eq((m["target"], m["replicas"], m["adding"], m["removing"], m["leader"], m["led_here"]),
           ([1, 2, 3], [1, 2, 3, 0], [3], [0], 0, True), "the move in the leader's document")
        eq(m["high_watermark"], RECORDS, "shown-0's HW")
        check(m["replica_leos"]["3"] < m["high_watermark"],
              "broker 3's LEO %r below the HW %r", m["replica_leos"]["3"], m["high_watermark"])
        eq({k: m["replica_leos"][k] for k in ("0", "1", "2")},
           {"0": RECORDS, "1": RECORDS, "2": RECORDS}, "the other replicas' LEOs")
        eq(sorted(m["in_sync"]), [0, 1, 2], "the ISR while 3 catches up")
        # a broker that does not lead it: the same move, no LEOs
        m1 = wait_for(lambda: moves_of(urls[1]).get(("shown", 0)), 30,
                      "the move in broker 1's document")
        eq((m1["target"], m1["adding"], m1["removing"], m1["led_here"], "replica_leos" in m1),
           ([1, 2, 3], [3], [0], False, False), "the move in broker 1's document")
        part = get(urls[0], "/v1/topics/shown")["partitions"][0]
        eq(part["reassignment"], {"target": [1, 2, 3], "adding": [3], "removing": [0]},
           "shown-0's reassignment in the topic document")
        os.kill(b3.pid, signal.SIGCONT)
        paused = False

        wait_for(lambda: not c.exists(REASSIGN), 120, "the reassignment's znode deleted")
        for i in range(4):
            wait_for(lambda i=i: moves_of(urls[i]) == {}, 30,
                     "broker %d's /v1/reassignments empty" % i)
        leader = c.state("shown", 0)["leader"]
        part = wait_for(lambda: (lambda p: p if p["reassignment"] is None and
                                 sorted(p["isr"]) == [1, 2, 3] else None)(
            get(urls[leader], "/v1/topics/shown")["partitions"][0]), 30,
            "shown-0 in its leader's topic document, moved")
        eq(sorted(r["broker"] for r in part["replicas"]), [1, 2, 3], "shown-0's replicas")
    finally:
        if paused:
            os.kill(b3.pid, signal.SIGCONT)
        c.close()


if __name__ == "__main__":
    main([case_move_under_way_in_the_admin_api])
