"""`samsa reassign generate` (issue 36) against a real
ZooKeeper and four samsa-brokers on 127.0.0.1, as Kafka 2.0's
kafka-reassign-partitions.sh (ReassignPartitionsCommand.scala):

- generate: its two JSON documents parsed; the current one is
  /brokers/topics/<t>; the proposed one moves every partition onto the
  --broker-list brokers with the replication factor kept, one replica per
  rack (brokers 0 and 2 in rack r0, 1 and 3 in r1: AdminUtils' rack-aware
  placement), and nothing is written to ZooKeeper.

Usage: test_cluster_reassign.py SAMSA_BROKER SAMSA_TOOL [-k NAME]
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, main  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, wait_for  # noqa: E402

TOOL = None
ZNODE = "/admin/reassign_partitions"


def run(c, t, verb, *args):
    """samsa reassign VERB --zookeeper ... ARGS: (exit status, stdout, stderr)."""
    out = subprocess.run([TOOL, "reassign", verb, "--zookeeper", c.zk.connect + CHROOT, *args],
                         capture_output=True, text=True, timeout=60)
    print("$ samsa reassign %s %s -> %d\n%s%s" % (verb, " ".join(args), out.returncode,
                                                  out.stdout, out.stderr), flush=True)
    return out.returncode, out.stdout, out.stderr


def write(t, name, doc):
    path = t.path(name)
    with open(path, "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def rack(i):
    return "r%d" % (i % 2)


def cluster(t):
    imports()

    def make(i, cfg):
        return t.broker(name="broker%d" % i, start=False, config={**cfg, "broker.rack": rack(i)})
    c = Cluster(t, n=4, make_broker=make)
    wait_for(lambda: c.controller() is not None, 60, "a controller")
    return c


def assignment(c, topic):
    parts = c.json("/brokers/topics/" + topic)["partitions"]
    return {int(p): r for p, r in parts.items()}


def case_generate_moves_each_partition_onto_the_broker_list(t):
    c = cluster(t)
    try:
        c.create_topic("gen-a", [[0, 1], [1, 2], [2, 0], [0, 1], [1, 2], [2, 0]])
        c.create_topic("gen-b", [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
        topics = write(t, "topics.json", {"topics": [{"topic": "gen-a"}, {"topic": "gen-b"}],
                                          "version": 1})
        rc, out, err = run(c, t, "generate", "--topics-to-move-json-file", topics,
                           "--broker-list", "1,2,3")
        eq(rc, 0, "generate's exit status")
        lines = out.splitlines()
        eq(lines[0], "Current partition replica assignment", "the first heading")
        eq(lines[3], "Proposed partition reassignment configuration", "the second heading")
        current, proposed = json.loads(lines[1]), json.loads(lines[4])
        eq(current["version"], 1, "current's version")
        for doc in (current, proposed):
            for p in doc["partitions"]:
                eq(p["log_dirs"], ["any"] * len(p["replicas"]), "log_dirs of %r" % p)
        eq({(p["topic"], p["partition"]): p["replicas"] for p in current["partitions"]},
           {**{("gen-a", k): v for k, v in assignment(c, "gen-a").items()},
            **{("gen-b", k): v for k, v in assignment(c, "gen-b").items()}},
           "the current assignment against /brokers/topics")
        got = {(p["topic"], p["partition"]): p["replicas"] for p in proposed["partitions"]}
        eq(sorted(got), [("gen-a", p) for p in range(6)] + [("gen-b", p) for p in range(3)],
           "the proposed partitions")
        for (topic, p), replicas in got.items():
            rf = 2 if topic == "gen-a" else 3
            eq(len(replicas), rf, "%s-%d's replication factor" % (topic, p))
            eq(len(set(replicas)), rf, "%s-%d's replicas distinct" % (topic, p))
            check(set(replicas) <= {1, 2, 3}, "%s-%d on the broker list: %r", topic, p, replicas)
            # rack-aware: r0 has 2 alone among 1,2,3, r1 has 1 and 3
            check(2 in replicas, "%s-%d has a replica in rack r0: %r", topic, p, replicas)
        firsts = [got[("gen-a", p)][0] for p in range(6)]
        eq(sorted(set(firsts)), [1, 2, 3], "gen-a's first replicas spread over the brokers")
        check(not c.exists(ZNODE), "generate wrote %s", ZNODE)

        # without racks, a broker list of one rack is fine; one broker
        # cannot hold a replication factor of 2
        rc, out, _ = run(c, t, "generate", "--topics-to-move-json-file", topics,
                         "--broker-list", "1,3", "--disable-rack-aware")
        eq(rc, 1, "RF 3 over two brokers: exit status")
        rc, out, err = run(c, t, "generate", "--topics-to-move-json-file",
                           write(t, "a.json", {"topics": [{"topic": "gen-a"}]}),
                           "--broker-list", "1,3", "--disable-rack-aware")
        eq(rc, 0, "generate without racks")
        for p in json.loads(out.splitlines()[4])["partitions"]:
            eq(sorted(p["replicas"]), [1, 3], "gen-a-%d without racks" % p["partition"])
        rc, _, err = run(c, t, "generate", "--topics-to-move-json-file", topics,
                         "--broker-list", "1,1,2")
        check(rc == 1 and "Broker list contains duplicate entries: 1" in err,
              "a broker listed twice: %d %s", rc, err)
    finally:
        c.close()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: %s SAMSA_BROKER SAMSA_TOOL [-k NAME]" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_generate_moves_each_partition_onto_the_broker_list]))
