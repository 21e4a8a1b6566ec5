#!/usr/bin/python3
"""CreateTopics and DeleteTopics: Kafka's error codes, and deletes that
really delete, against the real broker.

    test_topics_errors.py SAMSA_BROKER [-k CASE]

- collision: a name that differs from an existing topic's only by '.' and
  '_' is INVALID_TOPIC_EXCEPTION (17) with Kafka's message ("Topic 'a.b'
  collides with existing topics: a_b"), also with validate_only and through
  auto-creation; kafka-python's admin client raises InvalidTopicError.
- config_twice: a config given twice takes the later value, as Kafka 2.0
  does (CreateTopicsRequest keeps the entries in a HashMap), even when the
  earlier one is invalid; an unknown config is INVALID_CONFIG (40).
- delete_long_names: topics of 247, 248 and 249 characters with records:
  DeleteTopics answers 0, their directories are gone, and the topic created
  again is empty, also after a restart.
- delete_failure: a delete whose metadata write fails (the file's temporary
  name taken by a directory) is answered KAFKA_STORAGE_ERROR and undone:
  the topic keeps its directories and records; once the write works, the
  delete goes through.
- manual_assignment: CreateTopics with a replica assignment naming this
  broker makes the topic; one naming another broker, a broker twice, or
  lists of different lengths is INVALID_REPLICA_ASSIGNMENT (39) with Kafka's
  message, and nothing is made.
- leftover_delete_dirs: directories with a delete name (Kafka's
  `<topic>-<p>.<uuid>-delete` and the older `<topic>-<p>-delete`) found at
  start-up are removed and never opened as partitions.
"""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
from kwire import array, i8, i16, i32, string  # noqa: E402

DELETE_TOPICS = 20
INVALID_TOPIC_EXCEPTION = 17
INVALID_CONFIG = 40
INVALID_REPLICA_ASSIGNMENT = 39
KAFKA_STORAGE_ERROR = 56


def create_topics_v2(port, topics, validate_only=False):
    """CreateTopics v2: topics [(name, partitions, [(key, value)])] ->
    {name: (err, message)}"""
    body = array([string(n) + i32(p) + i16(1) + array([])
                  + array([string(k) + string(v) for k, v in cfgs])
                  for n, p, cfgs in topics])
    body += i32(30000) + i8(1 if validate_only else 0)
    r = kadmin.call(port, kwire.CREATE_TOPICS, 2, body)
    r.i32()  # throttle
    return {n: (e, m) for n, e, m in r.array(lambda r: (r.string(), r.i16(), r.string()))}


def delete_topics(port, names):
    """DeleteTopics v1 -> {name: err}"""
    r = kadmin.call(port, DELETE_TOPICS, 1, array([string(n) for n in names]) + i32(30000))
    r.i32()  # throttle
    return dict(r.array(lambda r: (r.string(), r.i16())))


def high_watermark(port, topic):
    return kwire.list_offset(port, topic, 0, -1)[1]


def dirs_of(b, topic):
    """Entries of the log dir that belong to the topic, whatever their suffix
    (a delete name may cut the topic: compare a prefix of 200)."""
    return sorted(e for e in os.listdir(b.log_dir) if e.startswith(topic[:200]))


def case_collision(t):
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import InvalidTopicError

    b = t.broker()
    eq(create_topics_v2(b.port, [("a_b", 1, [])]), {"a_b": (0, None)}, "create a_b")
    want = (INVALID_TOPIC_EXCEPTION, "Topic 'a.b' collides with existing topics: a_b")
    eq(create_topics_v2(b.port, [("a.b", 1, [])]), {"a.b": want}, "create a.b")
    eq(create_topics_v2(b.port, [("a.b", 1, [])], validate_only=True), {"a.b": want},
       "create a.b, validate_only")
    # every colliding name is listed, the other way round too
    eq(create_topics_v2(b.port, [("x.y_z", 1, [])]), {"x.y_z": (0, None)}, "create x.y_z")
    eq(create_topics_v2(b.port, [("x_y.z", 1, [])]), {"x_y.z": (
        INVALID_TOPIC_EXCEPTION, "Topic 'x_y.z' collides with existing topics: x.y_z")},
        "create x_y.z")
    # auto-creation through Metadata answers the same code
    with kwire.connect(b.port) as s:
        _, _, _, topics = kwire.parse_metadata_v1(kwire.roundtrip(s, kwire.metadata_v1(5, ["a.b"])))
    eq(topics["a.b"][0], INVALID_TOPIC_EXCEPTION, "Metadata auto-creating a.b")

    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap)
    try:
        admin.create_topics([NewTopic("k_l", 1, 1)])
        try:
            admin.create_topics([NewTopic("k.l", 1, 1)])
        except InvalidTopicError as e:
            eq(e.errno, INVALID_TOPIC_EXCEPTION, "kafka-python's error code")
        else:
            raise AssertionError("kafka-python created k.l next to k_l")
    finally:
        admin.close()
    eq(sorted(kwire_topics(b.port)), ["a_b", "k_l", "x.y_z"], "topics on the broker")
    b.stop()


def kwire_topics(port):
    with kwire.connect(port) as s:
        _, _, _, topics = kwire.parse_metadata_v1(kwire.roundtrip(s, kwire.metadata_v1(6)))
    return topics


def case_config_twice(t):
    b = t.broker()
    eq(create_topics_v2(b.port, [("twice", 1, [("retention.ms", "1000"),
                                               ("retention.ms", "2000")])]),
       {"twice": (0, None)}, "retention.ms given twice")
    eq(kadmin.describe_configs(b.port, "twice", ["retention.ms"]),
       {"retention.ms": ("2000", 1)}, "retention.ms of twice")
    eq(create_topics_v2(b.port, [("twice-bad-first", 1, [("retention.ms", "abc"),
                                                         ("retention.ms", "3000")])]),
       {"twice-bad-first": (0, None)}, "an invalid value, then a valid one")
    eq(kadmin.describe_configs(b.port, "twice-bad-first", ["retention.ms"]),
       {"retention.ms": ("3000", 1)}, "retention.ms of twice-bad-first")
    got = create_topics_v2(b.port, [("unknown-config", 1, [("no.such.config", "1")])])
    eq(got["unknown-config"][0], INVALID_CONFIG, "an unknown config")
    b.stop()
    b.start()
    eq(kadmin.describe_configs(b.port, "twice", ["retention.ms"]),
       {"retention.ms": ("2000", 1)}, "retention.ms of twice after a restart")
    b.stop()


def case_delete_long_names(t):
    b = t.broker()
    names = [c * n for c, n in (("p", 247), ("q", 248), ("r", 249))]
    for n in names:
        eq(create_topics_v2(b.port, [(n, 1, [])]), {n: (0, None)}, "create %d chars" % len(n))
        kwire.wait_topic(b.port, n, 1)
        kwire.produce(b.port, n, 0, [(b"k", b"old %d" % i) for i in range(3)])
        eq(high_watermark(b.port, n), 3, "high watermark of %d chars" % len(n))
    eq(delete_topics(b.port, names), {n: 0 for n in names}, "DeleteTopics")
    for n in names:
        eq(dirs_of(b, n), [], "directories left by the %d-character topic" % len(n))
        eq(create_topics_v2(b.port, [(n, 1, [])]), {n: (0, None)}, "create again")
        kwire.wait_topic(b.port, n, 1)
        eq(high_watermark(b.port, n), 0, "high watermark of the new %d-character topic" % len(n))
        records, hw = kwire.read_partition(b.port, n, 0)
        eq((records, hw), ([], 0), "records of the new %d-character topic" % len(n))
    b.stop()
    b.start()
    for n in names:
        eq(high_watermark(b.port, n), 0, "%d characters after a restart" % len(n))
    b.stop()


def case_delete_failure(t):
    """A delete that cannot be stored is answered KAFKA_STORAGE_ERROR and
    undone: the topic keeps its directory and records."""
    b = t.broker()
    kwire.create_topic(b.port, "kept", 2)
    kwire.produce(b.port, "kept", 0, [(None, b"old")] * 3)
    # the metadata file's temporary name taken by a directory: its rewrite fails
    blocker = os.path.join(b.log_dir, "samsa-metadata.tmp")
    os.mkdir(blocker)
    eq(delete_topics(b.port, ["kept"]), {"kept": KAFKA_STORAGE_ERROR}, "DeleteTopics")
    kadmin.wait_log(b, "deleting topic kept from the metadata failed")
    eq(dirs_of(b, "kept"), ["kept-0", "kept-1"], "directories of kept")
    eq(high_watermark(b.port, "kept"), 3, "records of kept")
    got = create_topics_v2(b.port, [("other", 1, [])])
    eq(got["other"][0], KAFKA_STORAGE_ERROR, "CreateTopics while the metadata cannot be written")
    os.rmdir(blocker)
    eq(delete_topics(b.port, ["kept"]), {"kept": 0}, "DeleteTopics once it can be stored")
    eq(dirs_of(b, "kept"), [], "directories of kept")
    b.stop()
    b.start()
    eq(sorted(kwire_topics(b.port)), [], "topics after a restart")
    b.stop()


def create_assigned(port, name, assignment):
    """CreateTopics v2 of one topic with a manual assignment (partition p's
    replicas assignment[p]) -> (err, message)"""
    asg = array([i32(p) + array([i32(x) for x in ids]) for p, ids in enumerate(assignment)])
    body = array([string(name) + i32(-1) + i16(-1) + asg + array([])]) + i32(30000) + i8(0)
    r = kadmin.call(port, kwire.CREATE_TOPICS, 2, body)
    r.i32()  # throttle
    return {n: (e, m) for n, e, m in r.array(lambda r: (r.string(), r.i16(), r.string()))}[name]


def case_manual_assignment(t):
    b = t.broker()
    eq(create_assigned(b.port, "placed", [[0], [0]]), (0, None), "placed on broker 0")
    eq(kwire.wait_topic(b.port, "placed", 2), 2, "placed's partitions")
    for name, asg, says in (("elsewhere", [[1]], "Unknown broker(s) in replica assignment: 1."),
                            ("twice", [[0, 0]], "replica(s), where 1 to the 1 broker(s)"),
                            ("ragged", [[0], []],
                             "All partitions should have the same number of replicas")):
        err, msg = create_assigned(b.port, name, asg)
        eq(err, INVALID_REPLICA_ASSIGNMENT, "the error creating %s" % name)
        check(msg is not None and says in msg, "the reason for %s: %r", name, msg)
        eq(dirs_of(b, name), [], "%s's directories" % name)
    b.stop()


def case_leftover_delete_dirs(t):
    b = t.broker()
    for n in ("left", "older"):
        kwire.create_topic(b.port, n, 1)
        kwire.produce(b.port, n, 0, [(None, b"old")] * 5)
    b.stop()
    # what a delete interrupted before its directories were removed leaves
    kafka_style = os.path.join(b.log_dir, "left-0.0123456789abcdef0123456789abcdef-delete")
    older_style = os.path.join(b.log_dir, "older-0-delete")
    shutil.copytree(os.path.join(b.log_dir, "left-0"), kafka_style)
    os.rename(os.path.join(b.log_dir, "older-0"), older_style)
    b.start()
    # start-up is over once the broker answers: the scan came before
    for p in (kafka_style, older_style):
        check(not os.path.exists(p), "%s is still there", p)
    kadmin.wait_log(b, "removing a partition deleted before the last stop", count=2)
    eq(high_watermark(b.port, "left"), 5, "left, whose own directory stayed")
    eq(high_watermark(b.port, "older"), 0, "older, whose directory had a delete name")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_collision, case_config_twice, case_delete_long_names,
                   case_delete_failure, case_manual_assignment, case_leftover_delete_dirs]))
