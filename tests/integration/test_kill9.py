#!/usr/bin/python3
"""kill -9 of samsa-broker in the middle of a produce stream loses no
acknowledged message.

    test_kill9.py SAMSA_BROKER [-k CASE]

- acks_1, acks_all: a librdkafka producer (confluent-kafka) streams keyed
  messages to three partitions, recording each delivery report; once enough
  are acknowledged the broker gets SIGKILL while requests are in flight.
  Start again on the same folder: every acknowledged message is at its
  acknowledged offset with its key and value, the high watermark is past
  it, and new appends go after it. Two rounds, the second on the recovered
  log.
- idempotent_across_kill: an idempotent producer keeps running while the
  broker is killed and started again; it delivers all 20,000 messages, and
  each is in the log exactly once (batches it retries after the kill must
  not be appended a second time).
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

from confluent_kafka import Producer  # noqa: E402

PARTITIONS = 3


class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.acked = {}      # (partition, offset) -> (key, value)
        self.failed = 0

    def __call__(self, err, msg):
        with self.lock:
            if err is None:
                self.acked[(msg.partition(), msg.offset())] = (msg.key(), msg.value())
            else:
                self.failed += 1

    def count(self):
        with self.lock:
            return len(self.acked)


def stream_and_kill(b, topic, acks, round_no, kill_after):
    """Produces until kill_after more messages are acknowledged, SIGKILLs the
    broker, keeps producing for half a second, then gives up on what is
    left. Returns the Recorder."""
    rec = Recorder()
    prod = Producer({"bootstrap.servers": b.bootstrap, "acks": acks, "linger.ms": 1,
                     "batch.num.messages": 500, "message.timeout.ms": 3000,
                     "retries": 0})
    i = 0
    killed_at = None
    deadline = time.monotonic() + 60
    while True:
        check(time.monotonic() < deadline, "only %d messages acknowledged in 60 s", rec.count())
        try:
            prod.produce(topic, key=b"r%d-k%d" % (round_no, i),
                         value=b"round %d value %d " % (round_no, i) + b"#" * (i % 200),
                         partition=i % PARTITIONS, on_delivery=rec)
            i += 1
        except BufferError:
            prod.poll(0.005)
        prod.poll(0)
        if killed_at is None and rec.count() >= kill_after:
            b.kill()
            killed_at = time.monotonic()
        if killed_at is not None and time.monotonic() - killed_at > 0.5:
            break
    prod.purge()
    prod.flush(10)
    return rec


def verify(b, topic, acked):
    """Every acknowledged message readable at its offset; returns the high
    watermarks."""
    hws = {}
    for p in range(PARTITIONS):
        recs, hw = kwire.read_partition(b.port, topic, p)
        hws[p] = hw
        offs = [r[0] for r in recs]
        eq(offs, list(range(hw)), "%s-%d: offsets read" % (topic, p))
        mine = {o: kv for (pp, o), kv in acked.items() if pp == p}
        check(mine, "nothing acknowledged on %s-%d", topic, p)
        check(hw > max(mine), "%s-%d: high watermark %d, but offset %d was acknowledged",
              topic, p, hw, max(mine))
        lost = [o for o, kv in mine.items() if recs[o][2:4] != kv]
        check(not lost, "%s-%d: %d acknowledged messages lost or changed, first at offset "
              "%d: acknowledged %r, read %r", topic, p, len(lost), lost and lost[0],
              lost and mine[lost[0]], lost and recs[lost[0]][2:4])
    return hws


def kill_case(acks):
    def case(t):
        b = t.broker()
        topic = "k9-acks-" + acks
        kwire.create_topic(b.port, topic, PARTITIONS)
        acked = {}
        for round_no in (1, 2):
            rec = stream_and_kill(b, topic, acks, round_no, kill_after=15000)
            check(b.proc is None, "broker still running after SIGKILL")
            acked.update(rec.acked)
            b.start()
            hws = verify(b, topic, acked)
            for p in range(PARTITIONS):
                base = kwire.produce(b.port, topic, p, [(b"after-kill-%d" % round_no, b"x")])
                eq(base, hws[p], "%s-%d: base offset of an append after restart" % (topic, p))
                acked[(p, base)] = (b"after-kill-%d" % round_no, b"x")
        b.stop()
    case.__name__ = "case_acks_" + acks
    return case


def case_idempotent_across_kill(t):
    b = t.broker()
    topic = "k9-idem"
    kwire.create_topic(b.port, topic, PARTITIONS)
    n = 20000
    errors = []
    delivered = {}

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            delivered[msg.key()] = (msg.partition(), msg.offset())

    prod = Producer({"bootstrap.servers": b.bootstrap, "enable.idempotence": True,
                     "linger.ms": 1, "batch.num.messages": 200,
                     "message.timeout.ms": 90000, "reconnect.backoff.max.ms": 200})
    killed = False
    for i in range(n):
        while True:
            try:
                prod.produce(topic, key=b"key-%05d" % i, value=b"value-%05d" % i,
                             partition=i % PARTITIONS, on_delivery=on_delivery)
                break
            except BufferError:
                prod.poll(0.01)
        prod.poll(0)
        if not killed and len(delivered) >= 5000:
            b.kill()
            killed = True
            time.sleep(0.3)
            b.start()
    check(killed, "the broker was never killed (%d delivered)", len(delivered))
    left = prod.flush(120)
    eq(left, 0, "messages undelivered after flush")
    check(not errors, "%d delivery errors, first %r", len(errors), errors[:3])
    eq(len(delivered), n, "delivered messages")

    seen = {}
    for p in range(PARTITIONS):
        recs, hw = kwire.read_partition(b.port, topic, p)
        for o, _, k, v, _ in recs:
            check(k not in seen, "%r is in the log twice: %s-%d@%d and %r", k, topic, p, o,
                  seen.get(k))
            seen[k] = (p, o)
            eq(v, b"value-" + k[4:], "value of %r" % k)
        eq(hw, len(recs), "%s-%d high watermark" % (topic, p))
    missing = [k for k in delivered if k not in seen]
    check(not missing, "%d delivered messages missing, first %r", len(missing), missing[:3])
    eq(len(seen), n, "messages in the log")
    for k, where in delivered.items():
        eq(seen[k], where, "%r: offset in the log vs. delivery report" % k)
    b.stop()


CASES = [kill_case("1"), kill_case("all"), case_idempotent_across_kill]

if __name__ == "__main__":
    sys.exit(main(CASES))
