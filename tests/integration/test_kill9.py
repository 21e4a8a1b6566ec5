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
- idempotent_retry_after_kill, idempotent_retry_after_sigterm: the same on
  raw sockets, deterministically: a producer id from InitProducerId writes
  sequences 0, 10, 20; after the broker restarts, the batches with
  sequences 20 and 10 sent again are answered with their original offsets
  and not appended (Kafka rebuilds the producer state of the last five
  batches from the log), sequence 30 goes on at offset 30, sequence 50 is
  OUT_OF_ORDER_SEQUENCE_NUMBER; a new producer (InitProducerId right after
  the restart) has its first batch, sequence 0, accepted. Both starts fall
  in the same wall-clock second when the machine is quick enough.
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
                     "linger.ms": 1, "batch.num.messages": 100,
                     "queue.buffering.max.messages": 2000,
                     "message.timeout.ms": 90000, "reconnect.backoff.max.ms": 200})
    killed = False
    i = 0
    deadline = time.monotonic() + 120
    while i < n or not killed:
        check(time.monotonic() < deadline, "%d delivered after 120 s", len(delivered))
        if i < n:
            try:
                prod.produce(topic, key=b"key-%05d" % i, value=b"value-%05d" % i,
                             partition=i % PARTITIONS, on_delivery=on_delivery)
                i += 1
            except BufferError:
                prod.poll(0.001)
        else:
            prod.poll(0.001)
        prod.poll(0)
        if not killed and len(delivered) >= n // 4:
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


def seq_case(stop):
    def case(t):
        # Start on a fresh wall-clock second: the whole case, restart
        # included, then fits in one second, as an immediate restart by a
        # supervisor would.
        time.sleep(1.02 - time.time() % 1.0)
        b = t.broker()
        topic = "k9-seq"
        kwire.create_topic(b.port, topic, 1)
        pid, epoch = kwire.init_producer_id(b.port)

        def send(seq, expect_error=0):
            recs = [(b"seq-%d" % (seq + j), b"v") for j in range(10)]
            return kwire.produce(b.port, topic, 0, recs, producer_id=pid, producer_epoch=epoch,
                                 base_sequence=seq, expect_error=expect_error)

        for seq in (0, 10, 20):
            eq(send(seq), seq, "base offset of the batch with sequence %d" % seq)
        eq(send(10), 10, "a retry of sequence 10 before the %s: base offset" % stop)
        if stop == "kill":
            b.kill()
        else:
            b.stop()
        b.start()
        eq(send(20), 20, "a retry of the last batch (sequence 20) after the %s: base offset"
           % stop)
        eq(send(10), 10, "a retry of sequence 10 after the %s: base offset" % stop)
        eq(send(30), 30, "the next batch (sequence 30) after the %s: base offset" % stop)
        send(50, expect_error=45)   # OUT_OF_ORDER_SEQUENCE_NUMBER
        recs, hw = kwire.read_partition(b.port, topic, 0)
        eq([r[2] for r in recs], [b"seq-%d" % i for i in range(40)], "keys in the log")
        # A new producer after the restart starts at sequence 0: its id and
        # epoch must not be those whose state the broker just recovered.
        pid2, epoch2 = kwire.init_producer_id(b.port)
        recs = [(b"new-producer", b"v")]
        with kwire.connect(b.port) as s:
            _, parts = kwire.parse_produce_v3(kwire.roundtrip(s, kwire.produce_v3(
                5, topic, 0, kwire.record_batch(recs, producer_id=pid2, producer_epoch=epoch2,
                                                base_sequence=0))))
        err, base = parts[(topic, 0)]
        check(err == 0, "the first batch (sequence 0) of a new producer (id %d epoch %d from "
              "InitProducerId after the %s; the producer before it: id %d epoch %d) was "
              "refused with error %d", pid2, epoch2, stop, pid, epoch, err)
        eq(base, 40, "base offset of the new producer's first batch")
        b.stop()
    case.__name__ = "case_idempotent_retry_after_" + stop
    return case


CASES = [kill_case("1"), kill_case("all"), case_idempotent_across_kill, seq_case("kill"),
         seq_case("sigterm")]

if __name__ == "__main__":
    sys.exit(main(CASES))
