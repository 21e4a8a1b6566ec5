#!/usr/bin/python3
"""samsa-broker as a storage system: compaction, retention, DeleteRecords,
topic configs and DescribeLogDirs, against the real broker.

    test_storage.py SAMSA_BROKER [-k CASE]

- compaction: a compacted topic (small segments, min.cleanable.dirty.ratio
  0.01, log.cleaner.backoff.ms 100) gets 40,000 updates over 400 keys, then
  tombstones for 40 of them, then other records so their segment closes.
  Once the cleaner has passed the tombstones: every live key reads back its
  latest value (raw Fetch and a kafka-python consumer), a tombstoned key
  shows nothing older than its tombstone, offsets strictly increase, the log
  is a fraction of its size (DescribeLogDirs and the files). After
  delete.retention.ms more data makes the log dirty again and the next
  cleaning removes the tombstoned keys altogether.
- retention_bytes: retention.bytes drops the oldest segments (what stays is
  at least retention.bytes, by less than a segment), ListOffsets earliest
  and the first segment's base offset follow, Fetch below it is
  OFFSET_OUT_OF_RANGE, and a kafka-python consumer positioned at 0 with
  auto_offset_reset='earliest' resets to the log start.
- retention_ms: segments whose largest timestamp is past retention.ms go,
  the newer ones stay; retention.ms lowered live (IncrementalAlterConfigs)
  empties the log (the active segment is rolled), and a consumer below the
  new start resets and reads what comes next.
- delete_records: DeleteRecords v0/v1: an offset, -1 (the high watermark),
  past the high watermark (OFFSET_OUT_OF_RANGE), below the start (no-op),
  unknown partition, a compacted-only topic (POLICY_VIOLATION); segments
  below the start are deleted; the start survives SIGTERM and kill -9.
- describe_log_dirs: v0/v1, all and filtered: each partition's size is its
  segment files' size.
- topic_configs: IncrementalAlterConfigs v0/v1 (SET, DELETE, APPEND and
  SUBTRACT on cleanup.policy, validate_only, the errors), AlterConfigs
  (replaces the whole set), DescribeConfigs sources, configs applied live
  (segment.bytes, message.timestamp.type=LogAppendTime) and persisted
  across a restart.
"""

import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402

FAST = {
    "log.cleaner.backoff.ms": "100",
    "log.retention.check.interval.ms": "500",
}

DYNAMIC_TOPIC = 1
DEFAULT_CONFIG = 5


def disk_size(b, topic, p):
    return sum(os.path.getsize(f) for f in kwire.segment_files(b.log_dir, topic, p))


def log_dir_size(b, topic, p):
    dirs = kadmin.describe_log_dirs(b.port, {topic: [p]})
    eq(list(dirs), [b.log_dir], "log dirs")
    err, sizes = dirs[b.log_dir]
    eq(err, 0, "DescribeLogDirs error")
    return sizes[(topic, p)]


def earliest(b, topic, p=0):
    return kwire.list_offset(b.port, topic, p, -2)[1]


def fetch_error(b, topic, p, offset):
    with kwire.connect(b.port) as s:
        _, parts = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.fetch_v4(5, topic, p, offset)))
    return parts[(topic, p)][0]


def cleaned_ranges(b, topic, p=0):
    """(start, end) of each "cleaned <topic>-<p>: offsets [a, b)" log line."""
    out = []
    for ln in kadmin.log_lines(b, "cleaned %s-%d: offsets [" % (topic, p)):
        rng = ln.split("offsets [", 1)[1].split(")", 1)[0]
        a, z = rng.split(", ")
        out.append((int(a), int(z)))
    return out


def wait_cleaned_past(b, topic, offset, timeout=60.0):
    """Waits for a cleaning whose range reaches past offset."""
    deadline = time.monotonic() + timeout
    while True:
        if any(z > offset for _, z in cleaned_ranges(b, topic)):
            return
        b.check_alive()
        check(time.monotonic() < deadline, "no cleaning of %s past offset %d in %.0f s: %r",
              topic, offset, timeout, cleaned_ranges(b, topic))
        time.sleep(0.1)


def wait_until(what, fn, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        check(time.monotonic() < deadline, "%s: not within %.0f s", what, timeout)
        time.sleep(0.1)


def consume_all(b, topic, p, start, count_hint=None, timeout=30.0):
    """kafka-python: assign, seek to `start`, read to the high watermark.
    Returns [(offset, key, value)]."""
    from kafka import KafkaConsumer, TopicPartition
    tp = TopicPartition(topic, p)
    c = KafkaConsumer(bootstrap_servers=b.bootstrap, auto_offset_reset="earliest",
                      enable_auto_commit=False, api_version=(2, 0, 0),
                      fetch_max_wait_ms=100)
    try:
        c.assign([tp])
        hw = c.end_offsets([tp])[tp]
        c.seek(tp, start)
        out = []
        deadline = time.monotonic() + timeout
        while c.position(tp) < hw:
            check(time.monotonic() < deadline, "consumer stuck at %d of %d", c.position(tp), hw)
            for recs in c.poll(timeout_ms=500).values():
                out.extend((r.offset, r.key, r.value) for r in recs)
        return out
    finally:
        c.close()


# ---------------------------------------------------------------------------


def case_compaction(t):
    b = t.broker(config=FAST)
    topic = "compacted"
    eq(kadmin.create_topic(b.port, topic, 1, {
        "cleanup.policy": "compact", "segment.bytes": "65536",
        "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "5000"}), 0, "CreateTopics")
    rnd = random.Random(4)
    latest = {}
    # what the records hold before any cleaning (a lower bound of the log's
    # size then): the cleaner may start while they are still being written,
    # so the files cannot be measured before it
    raw_bytes = 0
    with kwire.connect(b.port) as s:
        for i in range(400):
            recs = []
            for j in range(100):
                k = b"k%d" % rnd.randrange(400)
                v = b"update %d of %s " % (i * 100 + j, k) + b"#" * rnd.randrange(60)
                recs.append((k, v))
                latest[k] = v
                raw_bytes += len(k) + len(v)
            kwire.produce(b.port, topic, 0, recs, sock=s)
        eq(len(latest), 400, "keys written")
        tomb_at = kwire.produce(b.port, topic, 0, [(b"k%d" % k, None) for k in range(40)], sock=s)
        t_tombs = time.monotonic()
        for i in range(10):
            # 100 KB in all: the tombstones' segment closes
            kwire.produce(b.port, topic, 0,
                          [(b"fill", b"fill %d " % j + b"#" * 100) for j in range(100)], sock=s)
    hw = 40000 + 40 + 1000
    wait_cleaned_past(b, topic, tomb_at + 39)

    recs, got_hw = kwire.read_partition(b.port, topic, 0)
    eq(got_hw, hw, "high watermark after cleaning")
    offs = [r[0] for r in recs]
    check(all(x < y for x, y in zip(offs, offs[1:])), "offsets do not strictly increase")
    check(len(recs) < 2000, "%d records left of %d", len(recs), hw)
    seen = {}
    for o, _ts, k, v, _h in recs:
        seen[k] = v
    for k, v in latest.items():
        if int(k[1:]) < 40:
            check(seen.get(k) is None, "%r: tombstoned but reads %r", k, seen.get(k))
        else:
            eq(seen.get(k), v, "latest value of %r" % k)
    size_after = log_dir_size(b, topic, 0)
    eq(size_after, disk_size(b, topic, 0), "DescribeLogDirs size = segment files")
    check(size_after * 5 < raw_bytes, "log %d bytes after cleaning, %d bytes of keys and values "
          "written", size_after, raw_bytes)
    print("  compaction: %d records -> %d, %d bytes of keys and values -> %d bytes of log"
          % (hw, len(recs), raw_bytes, size_after))

    # a Kafka client reads the compacted log (gaps, rebuilt batches). The
    # cleaner may run again meanwhile (the fill records are dirty, the
    # tombstones may pass delete.retention.ms): the consumer then sees fewer
    # records than the raw read, never other ones, and every key's latest
    # value where the raw read had it
    consumed = consume_all(b, topic, 0, 0)
    coffs = [c[0] for c in consumed]
    check(all(x < y for x, y in zip(coffs, coffs[1:])), "consumer offsets do not increase")
    check(set(coffs) <= set(offs), "consumer offsets %s not in the log",
          sorted(set(coffs) - set(offs))[:10])
    last_at = {}
    for o, _ts, k, v, _h in recs:
        last_at[k] = o
    missing = [o for k, o in last_at.items() if seen[k] is not None and o not in set(coffs)]
    eq(missing, [], "offsets of latest values the consumer skipped")
    cvals = {c[1]: c[2] for c in consumed}
    check(set(cvals) <= set(seen), "consumer keys not in the log: %s", set(cvals) - set(seen))
    for k, v in seen.items():
        if v is None:
            check(cvals.get(k) is None, "%r: tombstoned but the consumer reads %r", k, cvals.get(k))
        else:
            eq(cvals.get(k), v, "kafka-python consumer value of %r" % k)

    # after delete.retention.ms the tombstones go at the next cleaning
    time.sleep(max(0.0, 5.5 - (time.monotonic() - t_tombs)))
    with kwire.connect(b.port) as s:
        more_at = None
        for i in range(3):
            # 150 KB: at least one more segment closes, dirty
            base = kwire.produce(b.port, topic, 0,
                                 [(b"fill2", b"more %d " % j + b"#" * 500) for j in range(100)],
                                 sock=s)
            more_at = base if more_at is None else more_at
    wait_cleaned_past(b, topic, more_at)
    recs, _ = kwire.read_partition(b.port, topic, 0)
    keys = {r[2] for r in recs}
    gone = [k for k in keys if k is not None and k.startswith(b"k") and int(k[1:]) < 40]
    check(not gone, "tombstoned keys still present: %r", gone[:5])
    final = {}
    for r in recs:
        final[r[2]] = r[3]
    for k, v in latest.items():
        if int(k[1:]) >= 40:
            eq(final.get(k), v, "latest value of %r after the second cleaning" % k)
    b.stop()


def case_retention_bytes(t):
    b = t.broker(config=FAST)
    topic = "by-size"
    eq(kadmin.create_topic(b.port, topic, 1, {"retention.bytes": "40000",
                                              "segment.bytes": "10000"}), 0, "CreateTopics")
    with kwire.connect(b.port) as s:
        for i in range(100):
            kwire.produce(b.port, topic, 0, [(b"k%d" % j, b"v" * 80) for j in range(20)],
                          sock=s)
    start = wait_until("log start moves", lambda: earliest(b, topic))
    time.sleep(1.5)  # one more check: nothing more goes
    start = earliest(b, topic)
    size = log_dir_size(b, topic, 0)
    check(40000 <= size < 40000 + 10000, "log holds %d bytes with retention.bytes 40000", size)
    first = os.path.basename(kwire.segment_files(b.log_dir, topic, 0)[0])
    eq(int(first.split(".")[0]), start, "first segment's base offset = log start")
    eq(fetch_error(b, topic, 0, 0), kadmin.OFFSET_OUT_OF_RANGE, "Fetch below the log start")
    eq(fetch_error(b, topic, 0, start), 0, "Fetch at the log start")
    consumed = consume_all(b, topic, 0, 0)
    eq(consumed[0][0], start, "consumer below the log start resets to")
    eq(consumed[-1][0], 1999, "consumer reads to")
    b.stop()


def case_retention_ms(t):
    b = t.broker(config=FAST)
    topic = "by-time"
    eq(kadmin.create_topic(b.port, topic, 1, {"retention.ms": "600000",
                                              "segment.bytes": "10000"}), 0, "CreateTopics")
    now = int(time.time() * 1000)
    with kwire.connect(b.port) as s:
        for i in range(50):
            kwire.produce(b.port, topic, 0, [(b"old", b"o" * 80)] * 20, sock=s,
                          base_timestamp=now - 3600 * 1000)
        for i in range(50):
            kwire.produce(b.port, topic, 0, [(b"new", b"n" * 80)] * 20, sock=s)
    start = wait_until("log start moves", lambda: earliest(b, topic))
    check(0 < start <= 1000, "log start %d: the old segments only", start)
    recs, hw = kwire.read_partition(b.port, topic, 0, start)
    eq(hw, 2000, "high watermark")
    check(all(r[2] == b"new" for r in recs if r[0] >= 1000), "new records lost")

    # lowered live: everything goes, the active segment is rolled
    res = kadmin.incremental_alter_configs(
        b.port, [(kadmin.TOPIC, topic, [("retention.ms", kadmin.SET, "1000")])])
    eq(res[(kadmin.TOPIC, topic)][0], 0, "IncrementalAlterConfigs retention.ms")
    wait_until("log emptied", lambda: earliest(b, topic) == 2000, timeout=20)
    eq(log_dir_size(b, topic, 0), 0, "size of the emptied log")
    eq(fetch_error(b, topic, 0, 1500), kadmin.OFFSET_OUT_OF_RANGE, "Fetch below the log start")
    kwire.produce(b.port, topic, 0, [(b"later", b"l")])
    consumed = consume_all(b, topic, 0, 0)
    eq([(c[0], c[1]) for c in consumed], [(2000, b"later")], "consumer after the reset")
    b.stop()


def case_delete_records(t):
    b = t.broker(config=FAST)
    topic = "dr"
    eq(kadmin.create_topic(b.port, topic, 2, {"segment.bytes": "10000"}), 0, "CreateTopics")
    eq(kadmin.create_topic(b.port, "dr-compact", 1, {"cleanup.policy": "compact"}), 0,
       "CreateTopics")
    with kwire.connect(b.port) as s:
        for i in range(50):
            kwire.produce(b.port, topic, 0, [(b"k", b"v" * 80)] * 20, sock=s)
            kwire.produce(b.port, topic, 1, [(b"k", b"v" * 80)] * 20, sock=s)
    kwire.produce(b.port, "dr-compact", 0, [(b"k", b"v")] * 5)
    nsegs = len(kwire.segment_files(b.log_dir, topic, 0))
    res = kadmin.delete_records(b.port, {(topic, 0): 150}, version=0)
    eq(res, {(topic, 0): (0, 150)}, "DeleteRecords v0 to 150")
    eq(earliest(b, topic), 150, "ListOffsets earliest")
    eq(fetch_error(b, topic, 0, 149), kadmin.OFFSET_OUT_OF_RANGE, "Fetch at 149")
    recs, _ = kwire.read_partition(b.port, topic, 0, 150)
    eq(recs[0][0], 150, "first record read")
    check(len(kwire.segment_files(b.log_dir, topic, 0)) < nsegs, "no segment deleted")
    res = kadmin.delete_records(b.port, {(topic, 0): 100, (topic, 1): -1, ("nope", 0): 1,
                                         (topic, 7): 1, ("dr-compact", 0): 1}, version=1)
    eq(res[(topic, 0)], (0, 150), "DeleteRecords below the start")
    eq(res[(topic, 1)], (0, 1000), "DeleteRecords to the high watermark")
    eq(res[("nope", 0)][0], kadmin.UNKNOWN_TOPIC_OR_PARTITION, "unknown topic")
    eq(res[(topic, 7)][0], kadmin.UNKNOWN_TOPIC_OR_PARTITION, "unknown partition")
    eq(res[("dr-compact", 0)][0], kadmin.POLICY_VIOLATION, "compacted topic")
    res = kadmin.delete_records(b.port, {(topic, 0): 1001})
    eq(res[(topic, 0)][0], kadmin.OFFSET_OUT_OF_RANGE, "DeleteRecords past the high watermark")
    eq(earliest(b, topic, 1), 1000, "partition 1 emptied")
    eq(log_dir_size(b, topic, 1), 0, "partition 1's size")
    b.stop()
    b.start()
    eq(earliest(b, topic), 150, "log start after a restart")
    eq(earliest(b, topic, 1), 1000, "log start of partition 1 after a restart")
    res = kadmin.delete_records(b.port, {(topic, 0): 321})
    eq(res[(topic, 0)], (0, 321), "DeleteRecords to 321")
    time.sleep(2.0)  # the next housekeeping tick writes the checkpoint
    b.kill()
    b.start()
    eq(earliest(b, topic), 321, "log start after kill -9")
    b.stop()


def case_describe_log_dirs(t):
    b = t.broker()
    for topic in ("dl-a", "dl-b"):
        eq(kadmin.create_topic(b.port, topic, 2, {"segment.bytes": "5000"}), 0, "CreateTopics")
        for p in range(2):
            for i in range(5 + 10 * p):
                kwire.produce(b.port, topic, p, [(b"k", b"v" * 100)] * 10)
    for version in (0, 1):
        dirs = kadmin.describe_log_dirs(b.port, None, version)
        eq(list(dirs), [b.log_dir], "log dirs (v%d)" % version)
        err, sizes = dirs[b.log_dir]
        eq(err, 0, "error")
        for topic in ("dl-a", "dl-b"):
            for p in range(2):
                eq(sizes[(topic, p)], disk_size(b, topic, p), "%s-%d size" % (topic, p))
                check(sizes[(topic, p)] > 0, "empty %s-%d", topic, p)
    dirs = kadmin.describe_log_dirs(b.port, {"dl-b": [1, 5], "nope": [0]})
    eq(sorted(dirs[b.log_dir][1]), [("dl-b", 1)], "filtered DescribeLogDirs")
    b.stop()


def case_topic_configs(t):
    b = t.broker(config=FAST)
    topic = "cfg"
    eq(kadmin.create_topic(b.port, topic, 1, {"retention.ms": "123456"}), 0, "CreateTopics")
    d = kadmin.describe_configs(b.port, topic)
    eq(d["retention.ms"], ("123456", DYNAMIC_TOPIC), "retention.ms after CreateTopics")
    eq(d["cleanup.policy"], ("delete", DEFAULT_CONFIG), "cleanup.policy default")

    tp = (kadmin.TOPIC, topic)
    res = kadmin.incremental_alter_configs(b.port, [(kadmin.TOPIC, topic, [
        ("retention.bytes", kadmin.SET, "1000000"),
        ("cleanup.policy", kadmin.APPEND, "compact"),
        ("retention.ms", kadmin.DELETE, None),
        ("unclean.leader.election.enable", kadmin.SET, "true"),
        ("min.insync.replicas", kadmin.SET, "1")])], version=1)
    eq(res, {tp: (0, None)}, "IncrementalAlterConfigs v1")
    d = kadmin.describe_configs(b.port, topic)
    eq(d["retention.bytes"], ("1000000", DYNAMIC_TOPIC), "retention.bytes")
    eq(d["cleanup.policy"], ("compact,delete", DYNAMIC_TOPIC), "cleanup.policy appended")
    eq(d["retention.ms"], ("604800000", DEFAULT_CONFIG), "retention.ms deleted")
    eq(d["unclean.leader.election.enable"], ("true", DYNAMIC_TOPIC), "unclean.leader...")
    eq(d["min.insync.replicas"], ("1", DYNAMIC_TOPIC), "min.insync.replicas")

    res = kadmin.incremental_alter_configs(
        b.port, [(kadmin.TOPIC, topic, [("cleanup.policy", kadmin.SUBTRACT, "delete")])],
        version=0)
    eq(res, {tp: (0, None)}, "IncrementalAlterConfigs v0")
    eq(kadmin.describe_configs(b.port, topic, ["cleanup.policy"]),
       {"cleanup.policy": ("compact", DYNAMIC_TOPIC)}, "cleanup.policy subtracted")

    res = kadmin.incremental_alter_configs(
        b.port, [(kadmin.TOPIC, topic, [("segment.bytes", kadmin.SET, "2000")])],
        validate_only=True)
    eq(res[tp][0], 0, "validate_only")
    eq(kadmin.describe_configs(b.port, topic, ["segment.bytes"])["segment.bytes"][1],
       DEFAULT_CONFIG, "segment.bytes after validate_only")

    errors = [
        ([("retention.ms", kadmin.APPEND, "5")], kadmin.INVALID_REQUEST),
        ([("no.such.key", kadmin.SET, "5")], kadmin.INVALID_CONFIG),
        ([("retention.ms", kadmin.SET, "soon")], kadmin.INVALID_CONFIG),
        ([("retention.ms", kadmin.SET, None)], kadmin.INVALID_REQUEST),
        ([("cleanup.policy", kadmin.APPEND, "shred")], kadmin.INVALID_CONFIG),
        ([("retention.ms", kadmin.SET, "5"), ("retention.ms", kadmin.SET, "6")],
         kadmin.INVALID_REQUEST),
        ([("retention.ms", 9, "5")], kadmin.INVALID_REQUEST),
        ([("segment.bytes", kadmin.SET, "5"), ("retention.ms", kadmin.SET, "7")],
         kadmin.INVALID_CONFIG),
    ]
    for cfgs, code in errors:
        res = kadmin.incremental_alter_configs(b.port, [(kadmin.TOPIC, topic, cfgs)])
        eq(res[tp][0], code, "IncrementalAlterConfigs %r" % (cfgs,))
        check(res[tp][1], "no error message for %r", cfgs)
    eq(kadmin.describe_configs(b.port, topic, ["retention.ms"])["retention.ms"][1],
       DEFAULT_CONFIG, "retention.ms after refused changes (all or nothing)")
    res = kadmin.incremental_alter_configs(b.port, [
        (kadmin.BROKER, "0", [("log.retention.ms", kadmin.SET, "5")]),
        (kadmin.TOPIC, "nope", [("retention.ms", kadmin.SET, "5")]),
        (7, "x", [])])
    eq(res[(kadmin.BROKER, "0")][0], kadmin.INVALID_REQUEST, "broker resource")
    eq(res[(kadmin.TOPIC, "nope")][0], kadmin.UNKNOWN_TOPIC_OR_PARTITION, "unknown topic")
    eq(res[(7, "x")][0], kadmin.INVALID_REQUEST, "unknown resource type")

    # AlterConfigs replaces the whole set
    for version in (0, 1):
        res = kadmin.alter_configs(b.port, [(kadmin.TOPIC, topic, {
            "segment.bytes": "20000", "message.timestamp.type": "LogAppendTime"})],
            version=version)
        eq(res, {tp: (0, None)}, "AlterConfigs v%d" % version)
    d = kadmin.describe_configs(b.port, topic)
    eq(d["segment.bytes"], ("20000", DYNAMIC_TOPIC), "segment.bytes")
    eq(d["cleanup.policy"], ("delete", DEFAULT_CONFIG), "cleanup.policy reset by AlterConfigs")
    eq(d["retention.bytes"], ("-1", DEFAULT_CONFIG), "retention.bytes reset by AlterConfigs")
    res = kadmin.alter_configs(b.port, [(kadmin.BROKER, "0", {"log.retention.ms": "5"})])
    eq(res[(kadmin.BROKER, "0")][0], kadmin.INVALID_REQUEST, "AlterConfigs of the broker")

    # applied live: segments roll at 20000 bytes; LogAppendTime rewrites
    old = int(time.time() * 1000) - 3600 * 1000
    with kwire.connect(b.port) as s:
        for i in range(40):
            kwire.produce(b.port, topic, 0, [(b"k", b"v" * 100)] * 10, sock=s,
                          base_timestamp=old)
    sizes = [os.path.getsize(f) for f in kwire.segment_files(b.log_dir, topic, 0)]
    check(len(sizes) >= 2 and max(sizes[:-1]) <= 20000, "segment sizes %r with segment.bytes "
          "20000", sizes)
    recs, _ = kwire.read_partition(b.port, topic, 0)
    check(all(r[1] > old + 3000 * 1000 for r in recs), "LogAppendTime not applied: %r",
          recs[0][1])

    # persisted
    b.stop()
    b.start()
    d = kadmin.describe_configs(b.port, topic)
    eq(d["segment.bytes"], ("20000", DYNAMIC_TOPIC), "segment.bytes after a restart")
    eq(d["message.timestamp.type"], ("LogAppendTime", DYNAMIC_TOPIC),
       "message.timestamp.type after a restart")
    eq(d["unclean.leader.election.enable"], ("false", DEFAULT_CONFIG),
       "unclean.leader.election.enable (reset by AlterConfigs) after a restart")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_compaction, case_retention_bytes, case_retention_ms,
                   case_delete_records, case_describe_log_dirs, case_topic_configs]))
