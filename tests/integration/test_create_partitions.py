#!/usr/bin/python3
"""CreatePartitions (API 37) against the real broker: Kafka 2.0's answers,
the new partitions usable, and the count kept across SIGTERM and SIGKILL.

    test_create_partitions.py SAMSA_BROKER [-k CASE]

- kafka_python_admin: ApiVersions advertises CreatePartitions v0-v1;
  kafka-python's admin client takes a topic of 2 partitions to 5: kcat -L
  and Metadata show 5, the new directories exist, each new partition takes
  a Produce and reads it back. After SIGTERM and a start 5 are there with
  their records; partitions added to 7 then SIGKILL right after the answer:
  the next start has 7. Asking 7 again raises InvalidPartitionsError.
- errors: raw v0 and v1 requests, each answer Kafka 2.0's code and message:
  the current count or fewer is INVALID_PARTITIONS (37), an unknown topic
  UNKNOWN_TOPIC_OR_PARTITION (3), a topic named twice one INVALID_REQUEST
  (42) result, validate_only answers 0 and changes nothing, an assignment
  naming this broker is taken, one naming another broker, of the wrong
  length, with a repeated id or with no replica is INVALID_REPLICA_ASSIGNMENT
  (39), __consumer_offsets is INVALID_REQUEST; a timeout of 0 answers
  REQUEST_TIMED_OUT (7) at once and the partitions come all the same.
- connection_stays: a CreatePartitions followed on the same connection by
  a Metadata (what sarama does without asking ApiVersions first): both are
  answered (the broker used to close the connection).
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
from kwire import array, i8, i32, string  # noqa: E402

CREATE_PARTITIONS = 37
REQUEST_TIMED_OUT = 7
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_PARTITIONS = 37
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_REQUEST = 42


def kcat_partitions(b, topic):
    """kcat -L -J -t topic -> the partition ids librdkafka sees."""
    p = subprocess.run(["kcat", "-b", b.bootstrap, "-L", "-J", "-t", topic, "-m", "30"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    check(p.returncode == 0, "kcat -L exited with %d: %s", p.returncode, p.stderr[-2000:])
    doc = json.loads(p.stdout)
    (t,) = [t for t in doc["topics"] if t["topic"] == topic]
    check("error" not in t, "kcat -L: %r", t)
    return sorted(p["partition"] for p in t["partitions"])


def metadata_partitions(port, topic):
    """Metadata v1 -> {partition: (error, leader)} of the topic."""
    with kwire.connect(port) as s:
        resp = kwire.roundtrip(s, kwire.metadata_v1(5, [topic]))
    _, _, _, topics = kwire.parse_metadata_v1(resp)
    err, parts = topics[topic]
    eq(err, 0, "Metadata error of %s" % topic)
    return parts


def wait_partitions(port, topic, n, timeout=30.0):
    """Polls Metadata v1 until the topic has n partitions, each with a leader."""
    deadline = time.monotonic() + timeout
    parts = None
    while time.monotonic() < deadline:
        parts = metadata_partitions(port, topic)
        if sorted(parts) == list(range(n)) and all(v == (0, 0) for v in parts.values()):
            return
        time.sleep(0.05)
    raise AssertionError("%s: %r, not %d partitions" % (topic, parts, n))


def produce_and_read(port, topic, partition, value):
    kwire.produce(port, topic, partition, [(b"k", value)])
    got = [r[3] for r in kwire.read_partition(port, topic, partition)[0]]
    eq(got, [value], "records of %s-%d" % (topic, partition))


def one(results):
    check(len(results) == 1, "one result: %r", results)
    return results[0]


def case_kafka_python_admin(t):
    from kafka.admin import KafkaAdminClient, NewPartitions
    from kafka.errors import InvalidPartitionsError

    b = t.broker()
    with kwire.connect(b.port) as s:
        _, _, apis = kwire.parse_api_versions_v0(kwire.roundtrip(s, kwire.api_versions_v0(1)))
    eq(apis.get(CREATE_PARTITIONS), (0, 1), "CreatePartitions advertised")
    kwire.create_topic(b.port, "grow", 2)
    produce_and_read(b.port, "grow", 0, b"old-0")
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=30000)
    try:
        resp = admin.create_partitions({"grow": NewPartitions(total_count=5)},
                                       timeout_ms=10000)
        eq([(n, e) for n, e, *_ in resp.topic_errors], [("grow", 0)], "kafka-python's answer")
        eq(kcat_partitions(b, "grow"), [0, 1, 2, 3, 4], "kcat -L after the increase")
        eq(metadata_partitions(b.port, "grow"), {p: (0, 0) for p in range(5)},
           "Metadata v1: each partition led by broker 0")
        for p in range(5):
            check(os.path.isdir(os.path.join(b.log_dir, "grow-%d" % p)), "grow-%d made", p)
        for p in (2, 3, 4):
            produce_and_read(b.port, "grow", p, b"new-%d" % p)
        try:
            admin.create_partitions({"grow": NewPartitions(total_count=5)})
            check(False, "asking 5 again succeeded")
        except InvalidPartitionsError:
            pass
    finally:
        admin.close()

    b.stop()
    b.start()
    eq(kcat_partitions(b, "grow"), [0, 1, 2, 3, 4], "after SIGTERM and a start")
    for p in (0, 2, 4):
        got = [r[3] for r in kwire.read_partition(b.port, "grow", p)[0]]
        eq(got, [b"old-0" if p == 0 else b"new-%d" % p], "grow-%d after the start" % p)

    eq(one(kadmin.create_partitions(b.port, [("grow", 7, None)], version=1)),
       ("grow", 0, None), "to 7")
    b.kill()
    b.start()
    eq(kcat_partitions(b, "grow"), list(range(7)), "after SIGKILL and a start")
    produce_and_read(b.port, "grow", 6, b"after-kill")
    b.stop()


def case_errors(t):
    b = t.broker(overrides={"offsets.topic.num.partitions": "1"})
    kwire.create_topic(b.port, "e", 2)
    for version in (0, 1):
        cp = lambda topics, **kw: kadmin.create_partitions(b.port, topics, version=version, **kw)
        eq(one(cp([("e", 2, None)])),
           ("e", INVALID_PARTITIONS, "Topic already has 2 partitions."), "v%d same count" % version)
        eq(one(cp([("e", 1, None)])),
           ("e", INVALID_PARTITIONS,
            "Topic currently has 2 partitions, which is higher than the requested 1."),
           "v%d fewer" % version)
        eq(one(cp([("nope", 3, None)])),
           ("nope", UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist."),
           "v%d unknown topic" % version)
        eq(cp([("e", 3, None), ("e", 4, None)]),
           [("e", INVALID_REQUEST, "Duplicate topic in request.")], "v%d twice" % version)
        eq(one(cp([("e", 9, None)], validate_only=True)), ("e", 0, None),
           "v%d validate_only" % version)
        eq(sorted(metadata_partitions(b.port, "e")), [0, 1], "v%d validate_only changed nothing"
           % version)
        eq(one(cp([("e", 3, [[1]])])),
           ("e", INVALID_REPLICA_ASSIGNMENT, "Unknown broker(s) in replica assignment: 1."),
           "v%d another broker" % version)
        eq(one(cp([("e", 4, [[0]])])),
           ("e", INVALID_REPLICA_ASSIGNMENT,
            "Increasing the number of partitions by 2 but 1 assignments provided."),
           "v%d too few assignments" % version)
        eq(one(cp([("e", 3, [[0, 0]])])),
           ("e", INVALID_REPLICA_ASSIGNMENT,
            "Duplicate brokers not allowed in replica assignment: 0 for partition id 2."),
           "v%d repeated broker" % version)
        eq(one(cp([("e", 3, [[]])])),
           ("e", INVALID_REPLICA_ASSIGNMENT,
            "Cannot have replication factor of 0 for partition id 2."),
           "v%d no replica" % version)
        eq(sorted(metadata_partitions(b.port, "e")), [0, 1], "v%d refusals changed nothing"
           % version)
    # an assignment naming this broker, beside an unknown topic in the same request
    eq(kadmin.create_partitions(b.port, [("e", 4, [[0], [0]]), ("nope", 2, None)]),
       [("e", 0, None), ("nope", UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist.")],
       "assignment of this broker")
    eq(metadata_partitions(b.port, "e"), {p: (0, 0) for p in range(4)}, "4 partitions")
    kwire.wait_coordinator(b.port)
    eq(one(kadmin.create_partitions(b.port, [("__consumer_offsets", 3, None)])),
       ("__consumer_offsets", INVALID_REQUEST,
        "The number of partitions of the internal topic '__consumer_offsets' cannot be "
        "changed."), "internal topic")
    # timeout 0: answered at once, the partitions come all the same
    eq(one(kadmin.create_partitions(b.port, [("e", 6, None)], timeout_ms=0)),
       ("e", REQUEST_TIMED_OUT, None), "timeout 0")
    wait_partitions(b.port, "e", 6)
    produce_and_read(b.port, "e", 5, b"late")
    b.stop()


def case_connection_stays(t):
    b = t.broker()
    kwire.create_topic(b.port, "c", 1)
    body = array([string("c") + i32(3) + i32(-1)]) + i32(10000) + i8(0)
    with kwire.connect(b.port) as s:
        resp = kwire.roundtrip(s, kwire.request(CREATE_PARTITIONS, 0, 9, body))
        r = kwire.Reader(resp)
        eq(r.i32(), 9, "correlation id")
        r.i32()
        eq(r.array(lambda r: (r.string(), r.i16(), r.string())), [("c", 0, None)],
           "CreatePartitions answer")
        _, _, _, topics = kwire.parse_metadata_v1(kwire.roundtrip(s, kwire.metadata_v1(10, ["c"])))
        eq(sorted(topics["c"][1]), [0, 1, 2], "Metadata on the same connection")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_kafka_python_admin, case_errors, case_connection_stays]))
