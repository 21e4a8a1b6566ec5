#!/usr/bin/python3
"""confluent-kafka 1.7 (Debian's python3-confluent-kafka, librdkafka 2.0.2)
against samsa-broker.

    test_confluent_kafka.py SAMSA_BROKER [-k CASE]

- idempotent_<codec> (none, zstd): a Producer with enable.idempotence=True
  sends 20,000 keyed messages to three partitions with up to five batches
  in flight; every delivery report is a success; the delivered offsets of
  each partition are 0..n-1, each once; on disk every batch carries a
  producer id and epoch and the codec (librdkafka sends a batch plain when
  compressing would not shrink it: batches of 50 records or more), and the
  base sequences of each producer's batches count up from 0 without gap or
  repeat; a Consumer with assign() from the
  beginning reads every message exactly once, none missing, with the
  delivered offset and the value sent.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition  # noqa: E402

PARTITIONS = 3
N_MESSAGES = 20_000


def value_of(i):
    return (b"value-%06d-" % i) + b"abcdefghij" * (i % 13)


def produce_idempotent(b, topic, codec):
    errors = []
    delivered = {}   # key -> (partition, offset)
    dup_reports = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append((msg.key(), str(err)))
            return
        k = msg.key()
        if k in delivered:
            dup_reports.append(k)
        delivered[k] = (msg.partition(), msg.offset())

    p = Producer({
        "bootstrap.servers": b.bootstrap,
        "enable.idempotence": True,
        "compression.codec": codec,
        "linger.ms": 2,
        "batch.num.messages": 200,
        "max.in.flight.requests.per.connection": 5,
        "message.timeout.ms": 60000,
    })
    for i in range(N_MESSAGES):
        while True:
            try:
                p.produce(topic, key=b"key-%06d" % i, value=value_of(i),
                          partition=i % PARTITIONS, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    left = p.flush(90)
    eq(left, 0, "messages still undelivered after flush")
    check(not errors, "%d delivery errors, first: %r", len(errors), errors[:3])
    check(not dup_reports, "duplicate delivery reports: %r", dup_reports[:5])
    eq(len(delivered), N_MESSAGES, "delivered messages")
    return delivered


def check_offsets(topic, delivered):
    per = {}
    for k, (part, off) in delivered.items():
        per.setdefault(part, []).append(off)
    for part in range(PARTITIONS):
        offs = sorted(per.get(part, []))
        n = len([i for i in range(N_MESSAGES) if i % PARTITIONS == part])
        eq(offs, list(range(n)), "%s-%d: delivered offsets" % (topic, part))


def check_disk(b, topic, codec):
    for part in range(PARTITIONS):
        batches = kwire.disk_batches(b.log_dir, topic, part)
        n = len([i for i in range(N_MESSAGES) if i % PARTITIONS == part])
        eq(sum(x.record_count for x in batches), n, "%s-%d: records on disk" % (topic, part))
        kwire.check_codec(batches, codec, "%s-%d on disk" % (topic, part))
        next_seq = {}
        expect = 0
        for x in batches:
            what = "%s-%d batch at offset %d" % (topic, part, x.base_offset)
            eq(x.base_offset, expect, what + ": base offset")
            expect = x.last_offset + 1
            check(x.producer_id >= 0, "%s: producer id %d (not idempotent)", what, x.producer_id)
            check(x.producer_epoch >= 0, "%s: producer epoch %d", what, x.producer_epoch)
            pe = (x.producer_id, x.producer_epoch)
            eq(x.base_sequence, next_seq.get(pe, 0), what + ": base sequence")
            next_seq[pe] = x.base_sequence + x.record_count


def consume_all(b, topic, delivered):
    c = Consumer({
        "bootstrap.servers": b.bootstrap,
        "group.id": "it-readback",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "error",
    })
    try:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        seen = {}
        eof = set()
        deadline = time.monotonic() + 90
        while len(eof) < PARTITIONS or len(seen) < N_MESSAGES:
            check(time.monotonic() < deadline, "read %d of %d messages (EOF on %r)",
                  len(seen), N_MESSAGES, sorted(eof))
            for m in c.consume(num_messages=1000, timeout=0.5):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        eof.add(m.partition())
                        continue
                    raise AssertionError("consumer error: %s" % m.error())
                k = m.key()
                check(k not in seen, "%r read twice: at %s-%d@%d and at %r", k, topic,
                      m.partition(), m.offset(), seen.get(k))
                seen[k] = (m.partition(), m.offset())
                i = int(k.split(b"-")[1])
                eq(m.value(), value_of(i), "value of %r" % k)
        missing = [k for k in delivered if k not in seen]
        check(not missing, "%d delivered messages never read, first: %r", len(missing),
              missing[:5])
        for k, where in seen.items():
            eq(where, delivered.get(k), "%r: where it was read vs. delivery report" % k)
    finally:
        c.close()


def idempotent_case(codec):
    def case(t):
        b = t.broker()
        topic = "ck-idem-" + codec
        kwire.create_topic(b.port, topic, PARTITIONS)
        delivered = produce_idempotent(b, topic, codec)
        check_offsets(topic, delivered)
        check_disk(b, topic, codec)
        consume_all(b, topic, delivered)
    case.__name__ = "case_idempotent_" + codec
    return case


CASES = [idempotent_case("none"), idempotent_case("zstd")]

if __name__ == "__main__":
    sys.exit(main(CASES))
