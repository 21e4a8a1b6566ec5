#!/usr/bin/python3
"""Clean restarts of samsa-broker keep every message.

    test_restart.py SAMSA_BROKER [-k CASE]

- sigterm_restart: raw uncompressed batches into two partitions (small
  segments, so several per partition) and kcat gzip batches into a third
  topic, plus a topic that stays empty; SIGTERM (exit 0); the checkpoint
  files hold each partition's end offset; start again on the same folder:
  the same topics, the same records at the same offsets with the same
  timestamps; new appends continue at the old end; a second restart keeps
  those too.
- sigterm_under_load: SIGTERM while a librdkafka producer (acks=all) is
  sending: the broker exits 0; after a start every acknowledged message is
  at its acknowledged offset.
"""

import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402


def read_checkpoint(path):
    """Kafka's offset checkpoint file: version 0, a count, then
    "topic partition offset" lines -> {(topic, p): offset}."""
    with open(path) as f:
        lines = f.read().split("\n")
    eq(lines[0], "0", "%s: version line" % path)
    n = int(lines[1])
    out = {}
    for line in lines[2:2 + n]:
        topic, p, off = line.split(" ")
        out[(topic, int(p))] = int(off)
    eq(len(out), n, "%s: entries" % path)
    check(all(x == "" for x in lines[2 + n:]), "%s: lines after the %d entries", path, n)
    return out


def snapshot(b, parts):
    return {tp: kwire.read_partition(b.port, tp[0], tp[1]) for tp in parts}


def case_sigterm_restart(t):
    b = t.broker(config={"log.segment.bytes": "65536", "log.index.interval.bytes": "1024"})
    kwire.create_topic(b.port, "rs-raw", 2)
    kwire.create_topic(b.port, "rs-empty", 4)
    base_ts = 1_700_000_000_000
    for i in range(200):
        p = i % 2
        recs = [(b"k%d-%d" % (i, j), b"v%d-%d-" % (i, j) + b"." * (i % 97), base_ts + 10 * i + j)
                for j in range(10)]
        kwire.produce(b.port, "rs-raw", p, recs, base_timestamp=base_ts + 10 * i)
    lines = "".join("key%d:value %d %s\n" % (i, i, "z" * (i % 50)) for i in range(5000))
    subprocess.run(["kcat", "-b", b.bootstrap, "-P", "-t", "rs-gzip", "-p", "0", "-K:",
                    "-z", "gzip"], input=lines.encode(), check=True, timeout=60)
    parts = [("rs-raw", 0), ("rs-raw", 1), ("rs-gzip", 0)]
    before = snapshot(b, parts)
    eq([before[tp][1] for tp in parts], [1000, 1000, 5000], "high watermarks before the stop")
    for tp in parts[:2]:
        segs = kwire.segment_files(b.log_dir, *tp)
        check(len(segs) > 1, "%s-%d: %d segment(s) with log.segment.bytes=65536",
              tp[0], tp[1], len(segs))

    b.stop()
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        path = os.path.join(b.log_dir, name)
        check(os.path.exists(path), "no %s after SIGTERM", name)
        cp = read_checkpoint(path)
        for tp in parts:
            eq(cp.get(tp), before[tp][1], "%s entry for %s-%d" % (name, tp[0], tp[1]))

    b.start()
    eq(kwire.wait_topic(b.port, "rs-empty"), 4, "partitions of rs-empty after restart")
    eq(kwire.wait_topic(b.port, "rs-raw"), 2, "partitions of rs-raw after restart")
    after = snapshot(b, parts)
    for tp in parts:
        eq(after[tp][1], before[tp][1], "%s-%d high watermark after restart" % tp)
        check(after[tp][0] == before[tp][0], "%s-%d: records differ after restart", *tp)
        eq(kwire.list_offset(b.port, tp[0], tp[1], -1)[1], before[tp][1],
           "%s-%d latest offset after restart" % tp)
        eq(kwire.list_offset(b.port, tp[0], tp[1], -2)[1], 0,
           "%s-%d earliest offset after restart" % tp)
    # Time index after restart: the first record at or after batch 150's time.
    eq(kwire.list_offset(b.port, "rs-raw", 0, base_ts + 1500)[1], 750,
       "rs-raw-0 offset for a timestamp after restart")

    base = kwire.produce(b.port, "rs-raw", 1, [(b"new", b"after restart")])
    eq(base, 1000, "base offset of the first append after restart")
    b.stop()
    b.start()
    recs, hw = kwire.read_partition(b.port, "rs-raw", 1)
    eq(hw, 1001, "rs-raw-1 high watermark after the second restart")
    check(recs[:1000] == before[("rs-raw", 1)][0], "rs-raw-1 records changed")
    eq(recs[1000][2:4], (b"new", b"after restart"), "rs-raw-1 offset 1000")
    b.stop()


def case_sigterm_under_load(t):
    from confluent_kafka import Producer

    b = t.broker()
    topic = "rs-load"
    kwire.create_topic(b.port, topic, 3)
    acked = {}
    lock = threading.Lock()

    def on_delivery(err, msg):
        if err is None:
            with lock:
                acked[(msg.partition(), msg.offset())] = (msg.key(), msg.value())

    prod = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 2,
                     "message.timeout.ms": 4000, "retries": 0})
    stop_errors = []

    def stop():
        try:
            b.stop()
        except Exception as e:  # reported below, from the main thread
            stop_errors.append(e)

    i = 0
    stopped = False
    t_stop = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            prod.produce(topic, key=b"k%d" % i, value=b"value %d" % i, partition=i % 3,
                         on_delivery=on_delivery)
            i += 1
        except BufferError:
            prod.poll(0.01)
        prod.poll(0)
        if not stopped and len(acked) >= 20000:
            # SIGTERM from another thread while this one keeps producing.
            th = threading.Thread(target=stop)
            th.start()
            stopped = True
            t_stop = time.monotonic()
        if stopped and time.monotonic() - t_stop > 1.0:
            break
    check(stopped, "only %d messages acknowledged in 60 s", len(acked))
    th.join(60)
    prod.purge()
    prod.flush(10)
    if stop_errors:
        raise stop_errors[0]
    check(b.proc is None, "the broker did not stop")

    b.start()
    with lock:
        acked_now = dict(acked)
    for p in range(3):
        recs, hw = kwire.read_partition(b.port, topic, p)
        by_off = {r[0]: r for r in recs}
        mine = {o: kv for (pp, o), kv in acked_now.items() if pp == p}
        check(mine, "nothing acknowledged on partition %d", p)
        check(hw > max(mine), "%s-%d: high watermark %d, acknowledged up to %d",
              topic, p, hw, max(mine))
        for o, (k, v) in mine.items():
            r = by_off.get(o)
            check(r is not None and r[2:4] == (k, v), "%s-%d offset %d: acknowledged %r, "
                  "read %r", topic, p, o, (k, v), r and r[2:4])


CASES = [case_sigterm_restart, case_sigterm_under_load]

if __name__ == "__main__":
    sys.exit(main(CASES))
