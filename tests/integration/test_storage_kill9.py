#!/usr/bin/python3
"""kill -9 of samsa-broker while its log cleaner works: every restart yields
a consistent compacted log with the latest value of every key.

    test_storage_kill9.py SAMSA_BROKER [-k CASE]

- kill_during_cleaning: a compacted topic (segment.bytes 100 kB,
  min.cleanable.dirty.ratio 0.01, log.cleaner.backoff.ms 50, log.level
  debug so the broker says when a cleaning job starts). Each of 20 rounds
  produces a burst of 20,000 updates over 500 keys (2% tombstones) with
  acks=1, in gzip batches every other round so that rewrites recompress,
  waits for a cleaning job to be under way, and SIGKILLs the broker at a
  random moment within the job's expected duration (learnt from the
  previous jobs' "cleaned ..." lines). The partition folder is inspected
  (cleaned segments being written, swaps decided) and the broker started
  again on it. After each restart: no ".cleaned" or ".swap" file is left,
  every batch validates (CRC) and offsets strictly increase, and every key
  reads back its last acknowledged value (a tombstone: null). The rounds
  that caught the cleaner with files on disk are counted and printed.

SAMSA_KILL9_ROUNDS (default 20) and SAMSA_KILL9_SEED (default: the time,
printed) make a run longer or repeatable.
"""

import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402

ROUNDS = 20
KEYS = 500
BURST = 20000
PER_BATCH = 500
TOPIC = "k9-compacted"


def gzip_batch(recs, ts):
    from kafka.record.default_records import DefaultRecordBatchBuilder
    bb = DefaultRecordBatchBuilder(magic=2, compression_type=1, is_transactional=False,
                                   producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                   batch_size=1 << 30)
    for i, (k, v) in enumerate(recs):
        bb.append(i, ts, k, v, [])
    return bytes(bb.build())


def burst(b, rnd, round_no, acked):
    """BURST acknowledged updates; acked[key] follows them."""
    gzip = round_no % 2 == 0
    with kwire.connect(b.port) as s:
        n = 0
        while n < BURST:
            recs = []
            for _ in range(PER_BATCH):
                k = b"key-%d" % rnd.randrange(KEYS)
                v = None if rnd.random() < 0.02 else (
                    b"r%d-n%d-" % (round_no, n) + b"#" * rnd.randrange(200))
                recs.append((k, v))
                n += 1
            ts = int(time.time() * 1000)
            batch = gzip_batch(recs, ts) if gzip else kwire.record_batch(recs, base_timestamp=ts)
            _, parts = kwire.parse_produce_v3(kwire.roundtrip(
                s, kwire.produce_v3(55, TOPIC, 0, batch)))
            eq(parts[(TOPIC, 0)][0], 0, "produce error")
            for k, v in recs:
                acked[k] = v


def jobs(b):
    """(started, finished, [(bytes rewritten, ms)]) of this run's cleaning
    jobs."""
    text = b.log_text()
    started = text.count("cleaning %s-0 (dirty ratio" % TOPIC)
    done = re.findall(r"cleaned %s-0: .*records, (\d+) -> \d+ bytes.* keys mapped, (\d+) ms"
                      % TOPIC, text)
    finished = len(done) + text.count("cleaning of %s-0 discarded" % TOPIC)
    return started, finished, [(int(x), int(y)) for x, y in done]


def disk_size(b):
    """Bytes of the partition's .log files now. The broker is running: a
    file listed may be gone (a swap or a deletion) before it is measured,
    and then counts for nothing."""
    d = kwire.partition_dir(b.log_dir, TOPIC, 0)
    total = 0
    for f in os.listdir(d):
        if f.endswith(".log"):
            try:
                total += os.path.getsize(os.path.join(d, f))
            except FileNotFoundError:
                pass
    return total


def leftovers(b):
    d = kwire.partition_dir(b.log_dir, TOPIC, 0)
    names = os.listdir(d)
    return ([n for n in names if n.endswith(".cleaned")],
            [n for n in names if n.endswith(".swap")])


def verify(b, acked, what):
    cleaned, swaps = leftovers(b)
    check(not cleaned and not swaps, "%s: files left after the restart: %r", what,
          cleaned + swaps)
    recs, hw = kwire.read_partition(b.port, TOPIC, 0)
    offs = [r[0] for r in recs]
    check(all(x < y for x, y in zip(offs, offs[1:])), "%s: offsets do not strictly increase",
          what)
    last = {}
    for r in recs:
        last[r[2]] = r[3]
    for k, v in acked.items():
        check(k in last, "%s: %r is gone (last acknowledged %r)", what, k, v)
        eq(last[k], v, "%s: value of %r" % (what, k))
    extra = [k for k in last if k not in acked]
    check(not extra, "%s: keys never written: %r", what, extra[:5])
    return len(recs), hw


def case_kill_during_cleaning(t):
    rounds = int(os.environ.get("SAMSA_KILL9_ROUNDS", ROUNDS))
    seed = int(os.environ.get("SAMSA_KILL9_SEED", int(time.time())))
    print("  seed %d, %d rounds" % (seed, rounds))
    rnd = random.Random(seed)
    b = t.broker(config={"log.cleaner.backoff.ms": "50", "log.level": "debug",
                         "log.retention.check.interval.ms": "1000"})
    eq(kadmin.create_topic(b.port, TOPIC, 1, {
        "cleanup.policy": "compact", "segment.bytes": "100000",
        "min.cleanable.dirty.ratio": "0.01"}), 0, "CreateTopics")
    acked = {}
    durations = []
    caught_cleaned = caught_swap = in_job = 0
    for round_no in range(1, rounds + 1):
        burst(b, rnd, round_no, acked)
        # a job under way: started and not finished (or give up after 5 s)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            started, finished, _ = jobs(b)
            if started > finished:
                break
            time.sleep(0.005)
        # the job rewrites the whole log: its duration at the speed seen so far
        big = [(x, y) for x, y in durations if y >= 5]
        speed = sum(x for x, _ in big) / sum(y for _, y in big) if big else 20000.0
        est = disk_size(b) / speed
        time.sleep(rnd.uniform(0, 1.2 * est) / 1000.0)
        started, finished, done = jobs(b)
        b.kill()
        durations.extend(done)
        in_job += 1 if started > finished else 0
        cleaned, swaps = leftovers(b)
        caught_cleaned += 1 if cleaned else 0
        caught_swap += 1 if swaps else 0
        b.start()
        n, hw = verify(b, acked, "round %d" % round_no)
        print("  round %2d: killed %s a job, with %d cleaned and %d swap file(s) on disk; "
              "%d records, high watermark %d"
              % (round_no, "inside" if started > finished else "outside", len(cleaned),
                 len(swaps), n, hw), flush=True)
    logs = [b.log_text(i + 1) for i in range(b.runs)]
    recoveries = sum(x.count("completing an interrupted cleaner swap") for x in logs)
    discarded = sum(x.count("a cleaned segment whose swap was not decided") for x in logs)
    ms = sorted(y for _, y in durations)
    print("  %d rounds of %d updates, %d jobs swapped in (median %d ms, longest %d ms); killed "
          "inside a job %d time(s), with cleaned segments on disk %d time(s), with a decided "
          "swap %d time(s); at start-up %d swap(s) completed, %d undecided cleaned file(s) "
          "removed"
          % (rounds, BURST, len(durations), ms[len(ms) // 2] if ms else 0, ms[-1] if ms else 0,
             in_job, caught_cleaned, caught_swap, recoveries, discarded))
    check(durations, "the cleaner never swapped anything in")
    check(in_job > 0, "no kill landed inside a cleaning job")
    b.stop()
    b.start()
    verify(b, acked, "after a clean stop")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_kill_during_cleaning]))
