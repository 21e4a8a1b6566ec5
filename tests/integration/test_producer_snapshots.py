"""Idempotent producers across restarts: producer state comes back from the
partition's <offset>.snapshot files and the log after the latest one
(Kafka 2.0's ProducerStateManager and Log.loadProducerState), however far
back a producer's last batch lies.

- retry_after_clean_restart: producer P (its id from InitProducerId) writes
  one batch of sequences 0-9; another producer then writes more than
  100,000 offsets to the same partition (small segments: they roll, and
  each roll takes a snapshot); the broker stops cleanly (a snapshot at the
  log end) and starts again; P's retry of its batch is answered as a
  duplicate with the original's offset and nothing is appended (the log
  end stays, the records read back are the same); P's next batch follows.
- retry_after_kill9: the same with SIGKILL instead of a clean stop: the
  state is the latest snapshot (a roll's) plus the batches after it.
- unknown_producer_must_start_at_zero: a producer the partition has never
  seen is refused with UNKNOWN_PRODUCER_ID unless its sequence is 0.

Usage: test_producer_snapshots.py <samsa-broker> [-k NAME]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import broker  # noqa: E402
import kwire  # noqa: E402
from broker import check, eq  # noqa: E402

UNKNOWN_PRODUCER_ID = 59
TOPIC = "idem"
# enough that P's batch lies more than 100,000 offsets behind the log end
OTHER_BATCHES = 101
OTHER_RECORDS = 1000
CONFIG = {
    "log.segment.bytes": "65536",
}


def snapshots(b):
    d = kwire.partition_dir(b.log_dir, TOPIC, 0)
    return sorted(int(n[:20]) for n in os.listdir(d) if n.endswith(".snapshot"))


def log_end(b):
    return kwire.list_offset(b.port, TOPIC, 0, -1)[1]


def p_batch(pid, epoch, seq):
    return dict(producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                base_timestamp=1700000000000)


def fill(b):
    """P's batch of sequences 0-9, then more than 100,000 offsets of
    another producer's. Returns (P's id, epoch, its batch's records, its
    base offset)."""
    kwire.create_topic(b.port, TOPIC, 1)
    pid, epoch = kwire.init_producer_id(b.port)
    records = [(None, b"p-%d" % i) for i in range(10)]
    base = kwire.produce(b.port, TOPIC, 0, records, **p_batch(pid, epoch, 0))
    qpid, qepoch = kwire.init_producer_id(b.port)
    other = [(None, b"q")] * OTHER_RECORDS
    with kwire.connect(b.port) as s:
        for i in range(OTHER_BATCHES):
            kwire.produce(b.port, TOPIC, 0, other, sock=s,
                          **p_batch(qpid, qepoch, i * OTHER_RECORDS))
    leo = log_end(b)
    check(leo - base > 100000, "P's batch at %d is only %d offsets behind the log end", base,
          leo - base)
    return pid, epoch, records, base


def retry_is_a_duplicate(b, pid, epoch, records, base, leo):
    got = kwire.produce(b.port, TOPIC, 0, records, **p_batch(pid, epoch, 0))
    eq(got, base, "the retry's offset (the original's)")
    eq(log_end(b), leo, "the log end after the retry")
    # the next batch follows at the log end
    nxt = kwire.produce(b.port, TOPIC, 0, [(None, b"p-10")], **p_batch(pid, epoch, 10))
    eq(nxt, leo, "P's next batch")
    recs, hw = kwire.read_partition(b.port, TOPIC, 0, start=base)
    eq(hw, leo + 1, "high watermark")
    mine = [r[3] for r in recs if r[3].startswith(b"p-")]
    eq(mine, [b"p-%d" % i for i in range(11)], "P's records read back")


def case_retry_after_clean_restart(t):
    b = t.broker(config=CONFIG)
    pid, epoch, records, base = fill(b)
    leo = log_end(b)
    b.stop()
    snaps = snapshots(b)
    b.start()
    retry_is_a_duplicate(b, pid, epoch, records, base, leo)
    check(len(snaps) >= 2, "snapshots after a clean stop: %r", snaps)
    eq(snaps[-1], leo, "the clean stop's snapshot (at the log end)")
    b.stop()


def case_retry_after_kill9(t):
    b = t.broker(config=CONFIG)
    pid, epoch, records, base = fill(b)
    leo = log_end(b)
    b.kill()
    snaps = snapshots(b)
    b.start()
    retry_is_a_duplicate(b, pid, epoch, records, base, leo)
    # P's batch lies below the latest snapshot (a roll's), which lies below
    # the log end: the state was that snapshot's plus the batches after it
    check(snaps and base < snaps[-1] < leo,
          "after kill -9 the latest snapshot is a roll's, below the log end %d: %r", leo, snaps)
    b.stop()


def case_unknown_producer_must_start_at_zero(t):
    b = t.broker(config=CONFIG)
    kwire.create_topic(b.port, TOPIC, 1)
    pid, epoch = kwire.init_producer_id(b.port)
    kwire.produce(b.port, TOPIC, 0, [(None, b"x")], expect_error=UNKNOWN_PRODUCER_ID,
                  **p_batch(pid, epoch, 5))
    eq(log_end(b), 0, "the log end after the refused batch")
    eq(kwire.produce(b.port, TOPIC, 0, [(None, b"x")], **p_batch(pid, epoch, 0)), 0,
       "sequence 0's offset")
    b.stop()


if __name__ == "__main__":
    sys.exit(broker.main([case_retry_after_clean_restart, case_retry_after_kill9,
                          case_unknown_producer_must_start_at_zero]))
