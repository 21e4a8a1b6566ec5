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
"""

import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
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


CASES = [garbage_case("random", "sigterm"), garbage_case("zeros", "sigterm"),
         garbage_case("header", "sigterm"), garbage_case("random", "kill"),
         case_cut_last_batch, case_cut_earlier_batch, case_bad_crc_last_batch,
         case_damage_newest_of_several_segments]

if __name__ == "__main__":
    sys.exit(main(CASES))
