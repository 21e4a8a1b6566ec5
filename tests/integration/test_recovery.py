#!/usr/bin/python3
"""samsa-broker starts on a damaged log, serves the valid prefix and
accepts new appends.

    test_recovery.py SAMSA_BROKER [-k CASE]

Each case writes 30 batches of 10 records (batch i has timestamps
BASE_TS + 1000 i + j) into one partition through Produce, stops the broker,
damages the newest segment (<logdir>/rc-0/00000000000000000000.log or the
newest of several), and starts it again on the same folder. Then: the
broker is up; Fetch returns exactly the records before the damage;
ListOffsets latest is the end of that prefix and by timestamp finds
records inside the prefix but nothing past it; a new Produce gets the next
offset; after another SIGTERM and start all of it is still there; and the
segment files hold whole batches only.

- garbage_random_after_sigterm, garbage_zeros_after_sigterm,
  garbage_header_after_sigterm (a plausible batch header claiming 1 MiB),
  garbage_random_after_kill: bytes appended after the last batch.
- cut_last_batch: the segment cut in the middle of its last batch.
- cut_earlier_batch: cut in the middle of batch 20 (dense offset and time
  indexes then point past the end: they must be rebuilt).
- bad_crc_last_batch: one byte of the last batch's records flipped.
- damage_newest_of_several_segments: small segments; the newest is cut
  mid-batch, the older ones are served whole.
- torn_older_segment: a batch header overwritten in the middle of the
  oldest of several segments after SIGTERM (not scanned at start-up): a
  Fetch or a ListOffsets by time at it (or after it in that segment)
  answers CORRUPT_MESSAGE, the log says it once, the rest is served, kcat
  reports it and exits, DeleteRecords past the segment clears it.
"""

import os
import random
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402

TOPIC = "rc"
BATCHES = 30
PER_BATCH = 10
BASE_TS = 1_700_000_000_000


def batch_records(i):
    return [(b"key-%d-%d" % (i, j), b"value-%d-%d-" % (i, j) + b"r" * (7 * i + j),
             BASE_TS + 1000 * i + j) for j in range(PER_BATCH)]


def fill(t, config=None):
    cfg = {"log.index.interval.bytes": "64"}
    cfg.update(config or {})
    b = t.broker(config=cfg)
    kwire.create_topic(b.port, TOPIC, 1)
    for i in range(BATCHES):
        base = kwire.produce(b.port, TOPIC, 0, batch_records(i), base_timestamp=BASE_TS + 1000 * i)
        eq(base, i * PER_BATCH, "base offset of batch %d" % i)
    return b


def newest_segment(b):
    return kwire.segment_files(b.log_dir, TOPIC, 0)[-1]


def segment_batches(path):
    with open(path, "rb") as f:
        data = f.read()
    batches, tail = kwire.parse_batches(data)
    eq(tail, 0, "bytes after the last batch of %s before damaging it" % path)
    return batches


def append(path, data):
    with open(path, "ab") as f:
        f.write(data)


def cut(path, size):
    with open(path, "r+b") as f:
        f.truncate(size)


def expected_records(n_batches):
    out = []
    for i in range(n_batches):
        for j, (k, v, ts) in enumerate(batch_records(i)):
            out.append((i * PER_BATCH + j, ts, k, v, []))
    return out


def check_recovered(b, n_batches):
    """After the damage and a start: the prefix of n_batches batches, then
    appends, then a clean restart."""
    n = n_batches * PER_BATCH
    recs, hw = kwire.read_partition(b.port, TOPIC, 0)
    eq(hw, n, "high watermark after recovery")
    check(recs == expected_records(n_batches), "records after recovery differ from the "
          "first %d batches (read %d records)", n_batches, len(recs))
    eq(kwire.list_offset(b.port, TOPIC, 0, -1)[1], n, "latest offset after recovery")
    eq(kwire.list_offset(b.port, TOPIC, 0, -2)[1], 0, "earliest offset after recovery")
    mid = n_batches // 2
    eq(kwire.list_offset(b.port, TOPIC, 0, BASE_TS + 1000 * mid + 3),
       (BASE_TS + 1000 * mid + 3, mid * PER_BATCH + 3), "offset for a timestamp in the prefix")
    eq(kwire.list_offset(b.port, TOPIC, 0, BASE_TS + 1000 * n_batches)[1], -1,
       "offset for a timestamp past the prefix")

    new = [(b"new-%d" % j, b"appended after recovery %d" % j) for j in range(5)]
    eq(kwire.produce(b.port, TOPIC, 0, new), n, "base offset of the first append after recovery")
    b.stop()
    b.start()
    recs, hw = kwire.read_partition(b.port, TOPIC, 0)
    eq(hw, n + 5, "high watermark after appending and restarting")
    check(recs[:n] == expected_records(n_batches), "prefix changed after restart")
    eq([r[2:4] for r in recs[n:]], new, "appended records after restart")
    b.stop()
    for path in kwire.segment_files(b.log_dir, TOPIC, 0):
        with open(path, "rb") as f:
            _, tail = kwire.parse_batches(f.read())
        eq(tail, 0, "bytes after the last whole batch of %s" % path)


def garbage_case(kind, stop):
    def case(t):
        b = fill(t)
        if stop == "sigterm":
            b.stop()
        else:
            b.kill()
        path = newest_segment(b)
        segment_batches(path)
        if kind == "random":
            data = bytes(random.Random(7).randrange(256) for _ in range(1500))
        elif kind == "zeros":
            data = bytes(4096)
        else:
            # BaseOffset 300, BatchLength 1 MiB, epoch 0, magic 2, then little.
            data = struct.pack(">qiib", BATCHES * PER_BATCH, 1 << 20, 0, 2) + b"\x55" * 200
        append(path, data)
        b.start()
        check_recovered(b, BATCHES)
    case.__name__ = "case_garbage_%s_after_%s" % (kind, stop)
    return case


def case_cut_last_batch(t):
    b = fill(t)
    b.stop()
    path = newest_segment(b)
    last = segment_batches(path)[-1]
    cut(path, last.position + last.size // 2)
    b.start()
    check_recovered(b, BATCHES - 1)


def case_cut_earlier_batch(t):
    b = fill(t)
    b.kill()
    path = newest_segment(b)
    x = segment_batches(path)[20]
    cut(path, x.position + x.size // 2)
    b.start()
    check_recovered(b, 20)


def case_bad_crc_last_batch(t):
    b = fill(t)
    b.stop()
    path = newest_segment(b)
    last = segment_batches(path)[-1]
    pos = last.position + last.size - 5
    with open(path, "r+b") as f:
        f.seek(pos)
        byte = f.read(1)
        f.seek(pos)
        f.write(bytes([byte[0] ^ 0x5A]))
    b.start()
    check_recovered(b, BATCHES - 1)


def case_damage_newest_of_several_segments(t):
    b = fill(t, {"log.segment.bytes": "2048"})
    b.stop()
    segs = kwire.segment_files(b.log_dir, TOPIC, 0)
    check(len(segs) >= 3, "only %d segments with log.segment.bytes=2048", len(segs))
    batches = segment_batches(segs[-1])
    first_in_newest = batches[0].base_offset // PER_BATCH
    last = batches[-1]
    cut(segs[-1], last.position + 30)
    b.start()
    check(first_in_newest > 0, "the newest segment starts at offset 0")
    check_recovered(b, BATCHES - 1)


def fetch(b, offset, sock):
    """One Fetch v4 of TOPIC-0 at offset -> (error code, high watermark,
    batches)."""
    got_corr, parts = kwire.parse_fetch_v4(kwire.roundtrip(sock, kwire.fetch_v4(
        9, TOPIC, 0, offset, max_bytes=1 << 20, partition_max_bytes=1 << 20)))
    eq(got_corr, 9, "Fetch correlation id")
    err, hw, records = parts[(TOPIC, 0)]
    batches, _ = kwire.parse_batches(records or b"")
    return err, hw, batches


def check_kafka_python_raises(b, offset, timeout=30.0):
    """kafka-python's consumer at offset raises CorruptRecordException from
    poll() (its Fetcher raises what the broker answers) within timeout."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import CorruptRecordException
    tp = TopicPartition(TOPIC, 0)
    c = KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False,
                      api_version=(2, 0, 0), fetch_max_wait_ms=100)
    try:
        c.assign([tp])
        c.seek(tp, offset)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                got = c.poll(timeout_ms=500)
            except CorruptRecordException:
                return
            check(not got, "kafka-python got records at the damaged offset %d: %r", offset, got)
        raise AssertionError("kafka-python did not report the damage within %.0f s" % timeout)
    finally:
        c.close()


def case_torn_older_segment(t):
    """A batch header overwritten in an older segment after a clean stop
    (recovery does not scan below the recovery point): a fetch at it gets
    CORRUPT_MESSAGE, as Kafka answers for a corrupt batch (so do the
    offsets after it in that segment, which a read reaches only across it),
    and the log says so once with the file and position, however often it
    is asked; the offsets before it, the newer segments and the other
    partitions are served; a real consumer reports the error instead of
    waiting forever; DeleteRecords past the segment is the way out."""
    b = fill(t, {"log.segment.bytes": "4096"})
    kwire.create_topic(b.port, "other", 1)
    for i in range(3):
        kwire.produce(b.port, "other", 0, [(b"o%d" % i, b"other %d" % i)])
    b.stop()
    segs = kwire.segment_files(b.log_dir, TOPIC, 0)
    check(len(segs) >= 3, "only %d segments with log.segment.bytes=4096", len(segs))
    batches = segment_batches(segs[0])
    check(len(batches) >= 3, "only %d batches in the oldest segment", len(batches))
    k = len(batches) // 2
    x = batches[k]
    bad = x.base_offset
    with open(segs[0], "r+b") as f:
        f.seek(x.position + 8)  # BatchLength on: no batch has that length or magic
        f.write(b"\xab" * 16)
    b.start()
    check("recovering" not in b.log_text(), "the clean stop was not found:\n%s", b.log_text())
    n = BATCHES * PER_BATCH
    with kwire.connect(b.port) as s:
        for offset in [bad] * 20 + [bad + 3] * 5:
            err, hw, got = fetch(b, offset, s)
            eq(err, kwire.CORRUPT_MESSAGE, "Fetch error at offset %d (damaged batch)" % offset)
            eq(hw, n, "high watermark with the error")
            eq(got, [], "batches sent with the error")
        # before the damage: the batches up to it, no error
        err, _, got = fetch(b, 0, s)
        eq(err, kwire.NONE, "Fetch error at offset 0")
        eq([g.base_offset for g in got], [g.base_offset for g in batches[:k]],
           "batches served from offset 0 of the damaged segment")
        # after it in the same segment: a read must cross the damaged batch
        # to find them (its index entry cannot be told from a false one),
        # so they answer the same, without another log line
        for later in batches[k + 1:]:
            err, _, got = fetch(b, later.base_offset, s)
            eq(err, kwire.CORRUPT_MESSAGE, "Fetch error at %d, after the damage" % later.base_offset)
    # the newer segments and the other partition, whole
    with open(segs[1], "rb") as f:
        start = kwire.parse_batches(f.read())[0][0].base_offset
    recs, hw = kwire.read_partition(b.port, TOPIC, 0, start=start)
    check(recs == expected_records(BATCHES)[start:], "records from offset %d differ", start)
    recs, _ = kwire.read_partition(b.port, "other", 0)
    eq([r[3] for r in recs], [b"other %d" % i for i in range(3)], "the other topic")
    # ListOffsets by time: a timestamp in the damaged batch, and a later one
    with kwire.connect(b.port) as s:
        ts = BASE_TS + 1000 * (bad // PER_BATCH) + 5
        _, parts = kwire.parse_list_offsets_v1(kwire.roundtrip(
            s, kwire.list_offsets_v1(7, TOPIC, 0, ts)))
        eq(parts[(TOPIC, 0)][0], kwire.CORRUPT_MESSAGE, "ListOffsets for a time in the damage")
    late = BASE_TS + 1000 * (BATCHES - 2) + 4
    eq(kwire.list_offset(b.port, TOPIC, 0, late), (late, (BATCHES - 2) * PER_BATCH + 4),
       "ListOffsets for a time in a newer segment")
    # a real consumer from the beginning reports the error and does not hang
    kc = subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", TOPIC, "-p", "0", "-o",
                         "beginning", "-e", "-q", "-f", "%o\\n"],
                        capture_output=True, timeout=60)
    out = kc.stdout.decode().split()
    err_text = kc.stderr.decode()
    # (librdkafka calls error 2 "Invalid message", RD_KAFKA_RESP_ERR_INVALID_MSG)
    check(kc.returncode != 0 and "Invalid message" in err_text,
          "kcat exited %d without reporting the corrupt batch: %s", kc.returncode, err_text)
    eq([int(o) for o in out], list(range(bad)), "offsets kcat consumed before the damage")
    check_kafka_python_raises(b, bad)
    # the log names the file and position once
    name = os.path.basename(segs[0])
    lines = [ln for ln in b.log_text().splitlines() if name in ln and "position" in ln]
    eq(len(lines), 1, "log lines about the damage (%s)" % lines)
    check("position %d:" % x.position in lines[0], "the position is not named: %s", lines[0])
    # the way out: DeleteRecords up to the next segment drops the damaged one
    res = kadmin.delete_records(b.port, {(TOPIC, 0): start})
    eq(res[(TOPIC, 0)], (kwire.NONE, start), "DeleteRecords up to the next segment")
    recs, hw = kwire.read_partition(b.port, TOPIC, 0, start=start)
    eq(hw, n, "high watermark after DeleteRecords")
    kc = subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", TOPIC, "-p", "0", "-o",
                         "beginning", "-e", "-q", "-f", "%o\\n"],
                        capture_output=True, timeout=60)
    eq(kc.returncode, 0, "kcat status after DeleteRecords (%s)" % kc.stderr.decode())
    eq([int(o) for o in kc.stdout.decode().split()], list(range(start, n)),
       "offsets kcat consumed after DeleteRecords")
    b.stop()


CASES = [garbage_case("random", "sigterm"), garbage_case("zeros", "sigterm"),
         garbage_case("header", "sigterm"), garbage_case("random", "kill"),
         case_cut_last_batch, case_cut_earlier_batch, case_bad_crc_last_batch,
         case_damage_newest_of_several_segments, case_torn_older_segment]

if __name__ == "__main__":
    sys.exit(main(CASES))
