"""`samsa reassign generate|execute|verify` (issue 36) against a real
ZooKeeper and four samsa-brokers on 127.0.0.1, as Kafka 2.0's
kafka-reassign-partitions.sh (ReassignPartitionsCommand.scala):

- generate: its two JSON documents parsed; the current one is
  /brokers/topics/<t>; the proposed one moves every partition onto the
  --broker-list brokers with the replication factor kept, one replica per
  rack (brokers 0 and 2 in rack r0, 1 and 3 in r1: AdminUtils' rack-aware
  placement), and nothing is written to ZooKeeper;
- execute: a reassignment naming an unknown topic or partition, a replica
  twice, a broker not registered, or replicas and log_dirs of different
  lengths is refused with Kafka's message and writes nothing; a valid one
  with --throttle prints the current assignment for rollback, writes the
  topic's leader/follower.replication.throttled.replicas and every
  involved broker's leader/follower.replication.throttled.rate beside the
  configs already in those znodes (kept), each with a /config/changes
  notification, kafka-python's DescribeConfigs of the topic and of broker
  1 then gives the configs each had (the brokers read the znodes again;
  the throttle keys themselves are checked there once the brokers list
  them, passed over and said so until then), and the controller carries
  the move out (cluster/controller_reassign.c): the znode deleted, the new
  assignment in /brokers/topics;
- verify after that move: every partition "completed successfully" (exit
  0), the throttle taken away ("Throttle was removed.", the other configs
  kept, DescribeConfigs again), nothing to remove a second time, and
  "failed" (exit 1) for replicas that are not the ones asked.

The znode's bytes, a second execute and verify's "in progress" want a
reassignment that stays: those run in a chroot of the same ZooKeeper that
no controller watches, holding copies of the cluster's registrations and
assignment, where /admin/reassign_partitions stays as the tool wrote it:
created byte for byte as Kafka's ReassignPartitionsZNode.encode writes it,
a second execute refused ("There is an existing assignment running.") with
the znode unchanged, verify "still in progress" (exit 3) for each
partition the znode holds and "completed successfully" for the one taken
out of it.

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
# Kafka's keys (LogConfig, DynamicConfig.Broker)
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"


def run(c, t, verb, *args, chroot=CHROOT):
    """samsa reassign VERB --zookeeper ... ARGS: (exit status, stdout, stderr)."""
    out = subprocess.run([TOOL, "reassign", verb, "--zookeeper", c.zk.connect + chroot, *args],
                         capture_output=True, text=True, timeout=60)
    print("$ samsa reassign %s %s (%s) -> %d\n%s%s" % (
        verb, " ".join(args), chroot, out.returncode, out.stdout, out.stderr), flush=True)
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


def notifications(c):
    """The entity paths of /config/changes' notifications, in order."""
    return [c.json("/config/changes/" + n)["entity_path"] for n in c.children("/config/changes")]


def described(c, kind, name, want):
    """Waits until kafka-python's DescribeConfigs of a TOPIC or BROKER
    resource gives, on every broker (for a broker resource: on it), want's
    keys want's values (None: the key at its default, not set). The
    throttle keys are the replication throttle's (issue 36): a broker that
    does not implement them yet does not list them, and they are passed
    over, said so; the other keys are checked everywhere."""
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
    rtype = ConfigResourceType.TOPIC if kind == "topic" else ConfigResourceType.BROKER
    on = range(len(c.brokers)) if kind == "topic" else [int(name)]
    for i in on:
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap(i), request_timeout_ms=30000)
        try:
            def entries():
                r = admin.describe_configs([ConfigResource(rtype, name)])[0]
                # name -> (value, is_default)
                return {e[0]: (e[1], e[3])  # DescribeConfigs v0: is_default
                        for e in r.resources[0][4]}

            def matches():
                got = entries()
                for k, v in want.items():
                    if k not in got and "throttled" in k:
                        continue
                    if k not in got or (got[k][0] != v if v is not None else not got[k][1]):
                        return None
                return got
            try:
                got = wait_for(matches, 30, "%s %s's configs on broker %d" % (kind, name, i))
            except AssertionError:
                raise AssertionError("broker %d describes %s %s as %r, not %r" % (
                    i, kind, name, entries(), want))
            unknown = sorted(k for k in want if k not in got)
            if unknown:
                print("broker %d does not list %s: passed over" % (i, ", ".join(unknown)),
                      flush=True)
        finally:
            admin.close()


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
        # usage errors (exit 2), as ReassignPartitionsCommand.validateAndParseArgs
        for args in (["generate", "--topics-to-move-json-file", topics],
                     ["verify", "--reassignment-json-file", topics, "--throttle", "1000"],
                     ["generate", "execute", "--reassignment-json-file", topics]):
            rc, _, err = run(c, t, *args)
            check(rc == 2 and "usage: samsa reassign" in err, "%s: %d %s", args, rc, err)
    finally:
        c.close()


# moving's partitions, before and after: partition 1 keeps its replicas
BEFORE = {0: [0, 1], 1: [1, 2], 2: [2, 0]}
TARGET = {0: [1, 3], 1: [1, 2], 2: [3, 2]}
# Kafka's bytes for TARGET (ReassignPartitionsZNode.encode: no log_dirs)
ZNODE_BYTES = json.dumps({"version": 1, "partitions": [
    {"topic": "moving", "partition": p, "replicas": r} for p, r in TARGET.items()]},
    separators=(",", ":")).encode()
# a chroot of the same ZooKeeper that no broker uses
STILL = "/still"


def moving_topic(c):
    """Topic moving on BEFORE with a config of its own, and broker 1 with a
    dynamic config of its own: what the throttle must keep."""
    c.create_topic("moving", [BEFORE[p] for p in sorted(BEFORE)],
                   config={"retention.ms": "86400000"})
    c.kz.create(CHROOT + "/config/brokers/1",
                json.dumps({"version": 1, "config": {"log.retention.ms": "604800000"}})
                .encode(), makepath=True)
    wait_for(lambda: all(c.state("moving", p) for p in BEFORE), 60, "moving's partitions led")


def still_copy(c):
    """STILL holding the cluster's registrations and moving's assignment,
    as the cluster's chroot has them: no controller acts there."""
    for b in c.children("/brokers/ids"):
        c.kz.create(STILL + "/brokers/ids/" + b, c.get("/brokers/ids/" + b)[0], makepath=True)
    c.kz.create(STILL + "/brokers/topics/moving", c.get("/brokers/topics/moving")[0],
                makepath=True)


def one(topic="moving", partition=0, replicas=(1, 3), **kw):
    return {"version": 1, "partitions": [{"topic": topic, "partition": partition,
                                          "replicas": list(replicas), **kw}]}


def plan_file(t):
    return write(t, "plan.json", {"version": 1, "partitions": [
        {"topic": "moving", "partition": p, "replicas": r, "log_dirs": ["any", "any"]}
        for p, r in TARGET.items()]})


def moved(c):
    """Waits until the controller has carried the move out."""
    wait_for(lambda: not c.exists(ZNODE) and assignment(c, "moving") == TARGET, 60,
             "moving reassigned by the controller")


def case_execute_writes_kafkas_znode_and_the_throttle(t):
    c = cluster(t)
    try:
        moving_topic(c)

        # refused, nothing written
        def refused(doc, message):
            rc, out, err = run(c, t, "execute", "--reassignment-json-file",
                               write(t, "bad.json", doc))
            check(rc == 1 and message in err, "%r: exit %d, %s", doc, rc, err)
            check(not c.exists(ZNODE), "%s written for %r", ZNODE, doc)

        refused(one(topic="nosuch"), "non-existent partitions: nosuch-0")
        refused(one(partition=7), "non-existent partitions: moving-7")
        refused(one(replicas=(1, 1)),
                "may not contain duplicate entries: moving-0 contains multiple entries for 1")
        refused(one(replicas=(1, 9)), "non-existent brokerIDs: 9")
        refused(one(log_dirs=["any"]), "is different from size of log dirs list")
        refused({"version": 1, "partitions": []}, "Partition reassignment data file is empty")
        refused("{\"version\":1,", "not valid JSON")

        # where no controller acts: Kafka's bytes, a second execute refused
        still_copy(c)
        plan = plan_file(t)
        rc, out, err = run(c, t, "execute", "--reassignment-json-file", plan, chroot=STILL)
        eq(rc, 0, "execute's exit status")
        eq(c.kz.get(STILL + ZNODE)[0], ZNODE_BYTES, ZNODE)
        rc, out, err = run(c, t, "execute", "--reassignment-json-file",
                           write(t, "again.json", one(replicas=(2, 3))), chroot=STILL)
        check(rc == 1 and "There is an existing assignment running." in out,
              "a second execute: %d %s %s", rc, out, err)
        eq(c.kz.get(STILL + ZNODE)[0], ZNODE_BYTES, ZNODE + " after a second execute")

        # on the cluster, with the throttle
        changes_before = len(c.children("/config/changes")) if c.exists("/config/changes") else 0
        rc, out, err = run(c, t, "execute", "--reassignment-json-file", plan,
                           "--throttle", "1000000")
        eq(rc, 0, "execute's exit status")
        lines = out.splitlines()
        eq(lines[:2], ["Current partition replica assignment", ""], "execute's heading")
        rollback = json.loads(lines[2])
        eq({p["partition"]: p["replicas"] for p in rollback["partitions"]}, BEFORE,
           "the rollback document")
        check("Save this to use as the --reassignment-json-file option during rollback" in out,
              "the rollback advice: %s", out)
        check("The inter-broker throttle limit was set to 1000000 B/s" in out, "%s", out)
        check(out.rstrip().endswith("Successfully started reassignment of partitions."), "%s", out)

        # the throttle: the moving partitions' current replicas (partition
        # 1 keeps its replicas: not moving) and the replicas they gain
        eq(c.json("/config/topics/moving")["config"],
           {"retention.ms": "86400000", LEADER_REPLICAS: "0:0,0:1,2:2,2:0",
            FOLLOWER_REPLICAS: "0:3,2:3"}, "moving's configs")
        for b in range(4):
            cfg = c.json("/config/brokers/%d" % b)["config"]
            eq({k: cfg.get(k) for k in (LEADER_RATE, FOLLOWER_RATE)},
               {LEADER_RATE: "1000000", FOLLOWER_RATE: "1000000"}, "broker %d's rates" % b)
        eq(c.json("/config/brokers/1")["config"].get("log.retention.ms"), "604800000",
           "broker 1's own config kept")
        notes = notifications(c)[changes_before:]
        eq(sorted(notes), sorted(["topics/moving"] + ["brokers/%d" % b for b in range(4)]),
           "the change notifications")
        # read again by the brokers at the notifications, their own keys kept
        described(c, "topic", "moving", {LEADER_REPLICAS: "0:0,0:1,2:2,2:0",
                                         FOLLOWER_REPLICAS: "0:3,2:3",
                                         "retention.ms": "86400000"})
        described(c, "broker", "1", {LEADER_RATE: "1000000", FOLLOWER_RATE: "1000000",
                                     "log.retention.ms": "604800000"})
        moved(c)
    finally:
        c.close()


def case_verify_reports_each_partition_and_removes_the_throttle(t):
    c = cluster(t)
    try:
        moving_topic(c)
        still_copy(c)
        plan = plan_file(t)

        # in progress while the znode holds the partitions (where no
        # controller takes them out of it)
        rc, _, _ = run(c, t, "execute", "--reassignment-json-file", plan, chroot=STILL)
        eq(rc, 0, "execute's exit status")
        rc, out, _ = run(c, t, "verify", "--reassignment-json-file", plan, chroot=STILL)
        eq(rc, 3, "verify's exit status while in progress")
        for p in TARGET:
            check("Reassignment of partition moving-%d is still in progress" % p in out, "%s",
                  out)
        # partition 1 out of it (it moves nowhere), the others still in
        c.kz.set(STILL + ZNODE, json.dumps({"version": 1, "partitions": [
            {"topic": "moving", "partition": p, "replicas": TARGET[p]} for p in (0, 2)]},
            separators=(",", ":")).encode())
        rc, out, _ = run(c, t, "verify", "--reassignment-json-file", plan, chroot=STILL)
        eq(rc, 3, "verify's exit status with two in progress")
        check("Reassignment of partition moving-1 completed successfully" in out, "%s", out)
        check("moving-0 is still in progress" in out and "moving-2 is still in progress" in out,
              "%s", out)

        # on the cluster: executed with a throttle, carried out by the
        # controller, then verified
        rc, out, _ = run(c, t, "execute", "--reassignment-json-file", plan,
                         "--throttle", "1000000")
        eq(rc, 0, "execute's exit status")
        moved(c)
        rc, out, _ = run(c, t, "verify", "--reassignment-json-file", plan)
        eq(rc, 0, "verify's exit status once done")
        for p in TARGET:
            check("Reassignment of partition moving-%d completed successfully" % p in out, "%s",
                  out)
        check("Throttle was removed." in out, "%s", out)
        eq(c.json("/config/topics/moving")["config"], {"retention.ms": "86400000"},
           "moving's configs after verify")
        for b in range(4):
            cfg = c.json("/config/brokers/%d" % b)["config"]
            eq(cfg, {"log.retention.ms": "604800000"} if b == 1 else {},
               "broker %d's configs after verify" % b)
        described(c, "topic", "moving", {LEADER_REPLICAS: None, FOLLOWER_REPLICAS: None,
                                         "retention.ms": "86400000"})
        described(c, "broker", "1", {LEADER_RATE: None, FOLLOWER_RATE: None,
                                     "log.retention.ms": "604800000"})
        rc, out, _ = run(c, t, "verify", "--reassignment-json-file", plan)
        check(rc == 0 and "Throttle was removed." not in out, "verify again: %d %s", rc, out)

        # replicas that are not the ones asked: failed
        rc, out, _ = run(c, t, "verify", "--reassignment-json-file",
                         write(t, "other.json", one(replicas=(2, 3))))
        eq(rc, 1, "verify's exit status for a move that did not happen")
        check("ERROR: Assigned replicas (1,3) don't match the list of replicas for "
              "reassignment (2,3) for partition moving-0" in out, "%s", out)
        check("Reassignment of partition moving-0 failed" in out, "%s", out)
    finally:
        c.close()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: %s SAMSA_BROKER SAMSA_TOOL [-k NAME]" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_generate_moves_each_partition_onto_the_broker_list,
                   case_execute_writes_kafkas_znode_and_the_throttle,
                   case_verify_reports_each_partition_and_removes_the_throttle]))
