#!/usr/bin/python3
"""kafkajs 2.2.4 (Node.js) against samsa-broker.

    test_kafkajs.py SAMSA_BROKER [-k CASE]

kafkajs is installed from npm on first use into $SAMSA_NODE_DIR (meson
sets it to <builddir>/tests/interop/node), or a folder under the system's
temp folder, and reused while it holds kafkajs 2.2.4.

- admin_and_gzip_producer: kafkajs_client.js runs admin createTopics
  (true, then false for an existing topic), listTopics, fetchTopicMetadata
  (3 partitions, leader/replicas/ISR = broker 0), fetchTopicOffsets (0 before,
  the counts after), a producer sending 3,000 gzip messages with acks=-1
  (the acknowledged base offsets follow each other per partition),
  fetchTopicOffsetsByTimestamp, deleteTopics. kafkajs consumers need groups,
  so the messages are read back with raw Fetch requests and kafka-python's
  record decoder: keys, values, timestamps and headers as sent; the batches
  on disk are gzip.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

KAFKAJS_VERSION = "2.2.4"
PARTITIONS = 3
COUNT = 3000
BASE_TS = 1_650_000_000_000


def node_dir():
    d = os.environ.get("SAMSA_NODE_DIR") or os.path.join(tempfile.gettempdir(),
                                                         "samsa-kafkajs-%d" % os.getuid())
    pkg = os.path.join(d, "node_modules", "kafkajs", "package.json")
    try:
        with open(pkg) as f:
            if json.load(f).get("version") == KAFKAJS_VERSION:
                return d
    except (OSError, ValueError):
        pass
    os.makedirs(d, exist_ok=True)
    p = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", d,
                        "kafkajs@" + KAFKAJS_VERSION],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if p.returncode != 0:
        raise AssertionError("npm install kafkajs@%s into %s failed (%d):\n%s"
                             % (KAFKAJS_VERSION, d, p.returncode,
                                p.stdout.decode(errors="replace")[-3000:]))
    with open(pkg) as f:
        eq(json.load(f).get("version"), KAFKAJS_VERSION, "installed kafkajs version")
    return d


def value_of(j):
    return ("value-%d-" % j + "gzip me " * (j % 40)).encode()


def case_admin_and_gzip_producer(t):
    nd = node_dir()
    b = t.broker()
    topic, deleted = "kjs-main", "kjs-deleted"
    env = dict(os.environ, NODE_PATH=os.path.join(nd, "node_modules"),
               KAFKAJS_NO_PARTITIONER_WARNING="1")
    argv = ["node", os.path.join(HERE, "kafkajs_client.js"), b.bootstrap, topic, deleted,
            str(COUNT), str(BASE_TS)]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=180)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("kafkajs_client.js did not finish in 180 s; stderr:\n%s"
                             % (e.stderr or b"").decode(errors="replace")[-3000:])
    if p.returncode != 0:
        raise AssertionError("kafkajs_client.js exited with status %d:\n%s"
                             % (p.returncode, p.stderr.decode(errors="replace")[-4000:]))
    out = json.loads(p.stdout.decode().strip().splitlines()[-1])

    eq(out["created"], True, "createTopics of new topics")
    eq(out["createdAgain"], False, "createTopics of an existing topic")
    for name in (topic, deleted):
        check(name in out["listed"], "listTopics lacks %s: %r", name, out["listed"])
    eq([m["name"] for m in out["metadata"]], [topic], "fetchTopicMetadata topics")
    parts = sorted(out["metadata"][0]["partitions"], key=lambda x: x["partitionId"])
    eq([x["partitionId"] for x in parts], list(range(PARTITIONS)), "fetchTopicMetadata partitions")
    for x in parts:
        eq((x["leader"], x["replicas"], x["isr"], x["partitionErrorCode"]), (0, [0], [0], 0),
           "partition %d leader, replicas, isr, error" % x["partitionId"])
    before = {x["partition"]: (x["low"], x["high"]) for x in out["offsetsBefore"]}
    eq(before, {p: ("0", "0") for p in range(PARTITIONS)}, "fetchTopicOffsets before producing")

    per = {p: len(range(p, COUNT, PARTITIONS)) for p in range(PARTITIONS)}
    next_base = {p: 0 for p in range(PARTITIONS)}
    for send in out["acks"]:
        for a in send:
            p = a["partition"]
            eq(a["errorCode"], 0, "produce error code, partition %d" % p)
            eq(int(a["baseOffset"]), next_base[p], "acknowledged base offset, partition %d" % p)
            next_base[p] += a["count"]
    eq(next_base, per, "acknowledged messages per partition")
    after = {x["partition"]: (x["low"], x["high"]) for x in out["offsetsAfter"]}
    eq(after, {p: ("0", str(per[p])) for p in range(PARTITIONS)},
       "fetchTopicOffsets after producing")
    # Message j has timestamp BASE_TS + j and lies in partition j % 3 at
    # offset j // 3: the first at or after BASE_TS + 301 is j = 303, 301, 302.
    by_time = {x["partition"]: x["offset"] for x in out["offsetsByTime"]}
    eq(by_time, {0: "101", 1: "100", 2: "100"}, "fetchTopicOffsetsByTimestamp")
    check(deleted not in out["listedAfterDelete"], "listTopics still lists %s after "
          "deleteTopics: %r", deleted, out["listedAfterDelete"])

    for p in range(PARTITIONS):
        recs, hw = kwire.read_partition(b.port, topic, p)
        eq(hw, per[p], "%s-%d high watermark" % (topic, p))
        eq(len(recs), per[p], "%s-%d records read" % (topic, p))
        for o, ts, k, v, h in recs:
            j = PARTITIONS * o + p
            what = "%s-%d offset %d" % (topic, p, o)
            eq(k, b"kjs-%d" % j, what + " key")
            eq(v, value_of(j), what + " value")
            eq(ts, BASE_TS + j, what + " timestamp")
            eq(h, [("h", b"x%d" % j)] if j % 5 == 0 else [], what + " headers")
        kwire.check_codec(kwire.disk_batches(b.log_dir, topic, p), "gzip",
                          "%s-%d on disk" % (topic, p))


CASES = [case_admin_and_gzip_producer]

if __name__ == "__main__":
    sys.exit(main(CASES))
