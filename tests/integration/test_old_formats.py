#!/usr/bin/python3
"""The old message formats (MessageSet v0/v1) on raw sockets against
samsa-broker, as Kafka 2.0 handles them.

    test_old_formats.py SAMSA_BROKER [-k CASE]

- produce_up_converted: Produce v0 (magic 0) and v2 (magic 1) message sets,
  uncompressed and in gzip, snappy and lz4 wrappers (magic-0 lz4 with
  Kafka's broken header checksum), with null keys and values, are stored as
  one RecordBatch v2 each (the wrapper's codec kept): exact offsets, keys,
  values and timestamps (magic 0: -1) read back with Fetch v4; MaxTimestamp
  is the records' largest.
- produce_log_append_time: magic-1 messages to a LogAppendTime topic get
  the broker's time (Produce v2's log_append_time), read back as such.
- produce_bad_crc: a message whose CRC is wrong, a wrapper whose inner
  message's CRC is wrong, a truncated message → CORRUPT_MESSAGE; nothing is
  appended and the connection (and another client) goes on.
- fetch_down_converted: the same records fetched with Fetch v0/v1 come as
  magic-0 messages, with v2/v3 as magic-1 messages, uncompressed or in one
  wrapper per batch with the batch's codec; a fetch from the middle of an
  uncompressed batch starts at the offset asked.
- fetch_down_conversion_limits: Fetch v0 and v3 respect the partition's
  max bytes (and MaxBytes) over many batches, the first batch always whole;
  message.downconversion.enable=false answers UNSUPPORTED_VERSION.
- max_timestamp_from_records: v2 batches (uncompressed, and gzip with
  timestamps decreasing) whose MaxTimestamp is -1 (as sarama sends it) are
  stored with their records' largest timestamp and a valid CRC, so
  ListOffsets by timestamp finds them.
- acks0_failure_closes: an acks=0 Produce that fails (unknown topic, bad
  CRC) closes the connection as Kafka does; one that succeeds does not.
"""

import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
from kwire import CODECS, legacy_message, legacy_wrapper  # noqa: E402

from kafka.record import MemoryRecords  # noqa: E402

MESSAGE_TOO_LARGE = 10
UNSUPPORTED_VERSION = 35

TOPIC = "old"


def stored(port, topic, offset=0):
    """Fetch v4 of partition 0 from offset: [(batch, [(offset, ts, key, value)])]."""
    with kwire.connect(port) as s:
        _, parts = kwire.parse_fetch_v4(kwire.roundtrip(
            s, kwire.fetch_v4(1, topic, 0, offset, partition_max_bytes=8 << 20)))
    err, _, records = parts[(topic, 0)]
    eq(err, 0, "Fetch v4 error")
    out = []
    mr = MemoryRecords(records)
    while mr.has_next():
        batch = mr.next_batch()
        if batch is None:
            break
        check(batch.validate_crc(), "stored batch at %d: bad CRC", batch.base_offset)
        out.append((batch, [(r.offset, r.timestamp, r.key, r.value) for r in batch]))
    return out


def produce(port, version, topic, records, acks=1):
    with kwire.connect(port) as s:
        _, parts = kwire.parse_produce_v(version, kwire.roundtrip(
            s, kwire.produce_v(version, 7, topic, 0, records, acks)))
    return parts[(topic, 0)]


def sample(magic, n, base_ts):
    """n (key, value, timestamp) with a null key and a null value among them."""
    out = []
    for i in range(n):
        key = None if i == 1 else b"k%d" % i
        value = None if i == 2 else b"value-%d-" % i + b"x" * (i * 7)
        out.append((key, value, base_ts + 10 * i if magic == 1 else -1))
    return out


def message_set(magic, codec, msgs, first_offset=0):
    """msgs as a message set: plain messages, or one wrapper of them."""
    if codec == 0:
        return b"".join(legacy_message(magic, k, v, first_offset + i, ts)
                        for i, (k, v, ts) in enumerate(msgs))
    # inner offsets: relative in magic 1, absolute (whatever) in magic 0
    inner = b"".join(legacy_message(magic, k, v, i, ts) for i, (k, v, ts) in enumerate(msgs))
    wts = max(ts for _, _, ts in msgs) if magic == 1 else -1
    return legacy_wrapper(magic, codec, inner, len(msgs) - 1, wts)


def case_produce_up_converted(t):
    b = t.broker()
    eq(kadmin.create_topic(b.port, TOPIC), 0, "create topic")
    next_offset = 0
    base_ts = 1_600_000_000_000
    for magic, version in ((0, 0), (1, 2)):
        for codec_name in ("none", "gzip", "snappy", "lz4"):
            codec = CODECS[codec_name]
            msgs = sample(magic, 5, base_ts)
            what = "magic %d %s" % (magic, codec_name)
            err, base, lat = produce(b.port, version, TOPIC, message_set(magic, codec, msgs))
            eq((err, base), (0, next_offset), what + ": Produce v%d error, base offset" % version)
            if version >= 2:
                eq(lat, -1, what + ": log_append_time of a CreateTime topic")
            batches = stored(b.port, TOPIC, next_offset)
            batch, recs = batches[0]
            eq(batch.magic, 2, what + ": stored magic")
            eq(batch.compression_type, codec, what + ": stored codec")
            eq(batch.base_offset, next_offset, what + ": BaseOffset")
            eq(recs, [(next_offset + i, ts, k, v) for i, (k, v, ts) in enumerate(msgs)],
               what + ": records")
            eq(batch.max_timestamp, max(ts for _, _, ts in msgs), what + ": MaxTimestamp")
            next_offset += len(msgs)
            base_ts += 1000
    # two wrappers in one set (kafka-python sends one; Kafka takes many)
    msgs = sample(1, 4, base_ts)
    two = message_set(1, CODECS["gzip"], msgs[:2]) + message_set(1, CODECS["gzip"], msgs[2:])
    eq(produce(b.port, 1, TOPIC, two)[:2], (0, next_offset), "two wrappers")
    _, recs = stored(b.port, TOPIC, next_offset)[0]
    eq([r[2:] for r in recs], [(k, v) for k, v, _ in msgs], "two wrappers: records")


def case_produce_log_append_time(t):
    b = t.broker()
    eq(kadmin.create_topic(b.port, TOPIC, configs={"message.timestamp.type": "LogAppendTime"}),
       0, "create topic")
    msgs = sample(1, 3, 1_500_000_000_000)
    for codec in (0, CODECS["gzip"]):
        before = int(time.time() * 1000)
        err, base, lat = produce(b.port, 2, TOPIC, message_set(1, codec, msgs))
        after = int(time.time() * 1000)
        eq(err, 0, "Produce v2 error")
        check(before <= lat <= after, "log_append_time %d not in [%d, %d]", lat, before, after)
        batch, recs = stored(b.port, TOPIC, base)[0]
        eq(batch.timestamp_type, 1, "stored timestamp type")
        eq([r[1] for r in recs], [lat] * 3, "timestamps read back")
        # Fetch v2: magic 1 with the broker's time and the LogAppendTime bit
        with kwire.connect(b.port) as s:
            _, parts = kwire.parse_fetch_v(2, kwire.roundtrip(s, kwire.fetch_v(2, 1, TOPIC, 0,
                                                                                  base)))
        msgs_back = kwire.flatten_message_set(kwire.parse_message_set(parts[(TOPIC, 0)][2]))
        eq([(m[3], m[2] & kwire.LOG_APPEND_TIME_ATTR) for m in msgs_back[:3]],
           [(lat, kwire.LOG_APPEND_TIME_ATTR)] * 3, "Fetch v2 timestamps and attributes")


def case_produce_bad_crc(t):
    b = t.broker()
    eq(kadmin.create_topic(b.port, TOPIC), 0, "create topic")
    good = legacy_message(1, b"k", b"v", 0, 1000)
    bad = bytearray(good)
    bad[20] ^= 0xFF  # inside the CRC
    inner_bad = bytearray(legacy_message(1, b"k", b"v", 0, 1000))
    inner_bad[-1] ^= 0x01  # a value byte: the inner CRC no longer matches
    wrapper_bad = legacy_wrapper(1, CODECS["gzip"], bytes(inner_bad), 0, 1000)
    cases = [("bad CRC", bytes(bad)),
             ("bad CRC after a good message", good + bytes(bad)),
             ("inner message with a bad CRC", wrapper_bad),
             ("truncated message", good[:-3]),
             ("magic-0 bad CRC", legacy_message(0, None, b"v", 0, crc=12345))]
    with kwire.connect(b.port) as s:
        for i, (what, records) in enumerate(cases):
            _, parts = kwire.parse_produce_v(2, kwire.roundtrip(
                s, kwire.produce_v(2, 10 + i, TOPIC, 0, records)))
            eq(parts[(TOPIC, 0)][0], kwire.CORRUPT_MESSAGE, what)
        # the same connection goes on, and so does another client
        _, parts = kwire.parse_produce_v(2, kwire.roundtrip(
            s, kwire.produce_v(2, 99, TOPIC, 0, good)))
        eq(parts[(TOPIC, 0)][:2], (0, 0), "a good message after the bad ones")
    eq(produce(b.port, 0, TOPIC, legacy_message(0, b"a", b"b"))[:2], (0, 1),
       "another connection")
    recs = [r for _, rs in stored(b.port, TOPIC) for r in rs]
    eq(recs, [(0, 1000, b"k", b"v"), (1, -1, b"a", b"b")], "only the good messages stored")


def produce_v3_batch(port, topic, batch):
    with kwire.connect(port) as s:
        _, parts = kwire.parse_produce_v3(kwire.roundtrip(s, kwire.produce_v3(1, topic, 0,
                                                                               batch)))
    return parts[(topic, 0)]


def fetch_old(port, version, topic, offset, **kw):
    with kwire.connect(port) as s:
        _, parts = kwire.parse_fetch_v(version, kwire.roundtrip(
            s, kwire.fetch_v(version, 1, topic, 0, offset, **kw)))
    return parts[(topic, 0)]


def case_fetch_down_converted(t):
    b = t.broker()
    eq(kadmin.create_topic(b.port, TOPIC), 0, "create topic")
    expected = []  # (offset, ts, key, value)
    base_ts = 1_600_000_000_000
    codecs = ("none", "gzip", "snappy", "lz4")
    for codec_name in codecs:
        msgs = sample(1, 4, base_ts)
        err, base, _ = produce(b.port, 2, TOPIC, message_set(1, CODECS[codec_name], msgs))
        eq(err, 0, "produce " + codec_name)
        expected += [(base + i, ts, k, v) for i, (k, v, ts) in enumerate(msgs)]
        base_ts += 1000
    # a native v2 batch (Produce v3)
    rb = bytearray(kwire.record_batch([(b"h", b"with-header", base_ts)], base_timestamp=base_ts))
    err, base = produce_v3_batch(b.port, TOPIC, bytes(rb))[:2]
    eq(err, 0, "produce v3")
    expected.append((base, base_ts, b"h", b"with-header"))
    for version in (0, 1, 2, 3):
        magic = 0 if version <= 1 else 1
        err, hw, records = fetch_old(b.port, version, TOPIC, 0)
        eq((err, hw), (0, len(expected)), "Fetch v%d error, high watermark" % version)
        entries = kwire.parse_message_set(records)
        # one wrapper per compressed batch, with the batch's codec
        wrappers = [(e[3] & 7, e[2]) for e in entries if e[0] == "wrapper"]
        eq(wrappers, [(CODECS[c], magic) for c in codecs[1:]], "Fetch v%d wrappers" % version)
        got = kwire.flatten_message_set(entries)
        eq({m[1] for m in got}, {magic}, "Fetch v%d magic" % version)
        want = [(o, ts if magic == 1 else None, k, v) for o, ts, k, v in expected]
        eq([(m[0], m[3], m[4], m[5]) for m in got], want, "Fetch v%d messages" % version)
    # from the middle of an uncompressed batch: from the offset asked
    err, _, records = fetch_old(b.port, 2, TOPIC, 2)
    got = kwire.flatten_message_set(kwire.parse_message_set(records))
    eq([m[0] for m in got][:2], [2, 3], "Fetch v2 from offset 2")


def case_fetch_down_conversion_limits(t):
    b = t.broker(overrides={"fetch.max.bytes": "20000"})
    eq(kadmin.create_topic(b.port, TOPIC), 0, "create topic")
    # 40 batches of 10 records of 100 B: about 1.2 KB each in magic 1
    for n in range(40):
        rb = kwire.record_batch([(None, b"%04d-%03d" % (n, i) + b"v" * 92) for i in range(10)])
        eq(produce_v3_batch(b.port, TOPIC, rb)[0], 0, "produce")
    for version, kw in ((0, {"partition_max_bytes": 5000}), (3, {"max_bytes": 3000}),
                        (2, {"partition_max_bytes": 1 << 20})):
        offset = 0
        seen = []
        rounds = 0
        while offset < 400:
            err, _, records = fetch_old(b.port, version, TOPIC, offset, **kw)
            eq(err, 0, "Fetch v%d error" % version)
            limit = min(kw.get("partition_max_bytes", 1 << 20), kw.get("max_bytes", 1 << 20),
                        20000)
            msgs = kwire.flatten_message_set(kwire.parse_message_set(records))
            check(msgs, "Fetch v%d at %d: no message", version, offset)
            check(len(records) <= max(limit, 1300), "Fetch v%d: %d bytes over %d", version,
                  len(records), limit)
            seen += [m[0] for m in msgs]
            offset = msgs[-1][0] + 1
            rounds += 1
        eq(seen, list(range(400)), "Fetch v%d offsets" % version)
        check(rounds > 1, "Fetch v%d: one round", version)
    # one batch larger than the limits still comes whole
    big = kwire.record_batch([(None, b"B" * 3000) for _ in range(3)])
    eq(produce_v3_batch(b.port, TOPIC, big)[0], 0, "produce big")
    err, _, records = fetch_old(b.port, 0, TOPIC, 400, partition_max_bytes=100)
    eq([m[0] for m in kwire.flatten_message_set(kwire.parse_message_set(records))],
       [400, 401, 402], "a first batch over the limit")
    # message.downconversion.enable=false: UNSUPPORTED_VERSION, v4 unaffected
    eq(kadmin.create_topic(b.port, "noconv", configs={"message.downconversion.enable": "false"}),
       0, "create noconv")
    eq(produce(b.port, 2, "noconv", legacy_message(1, b"k", b"v", 0, 5))[:2], (0, 0),
       "produce noconv")
    eq(fetch_old(b.port, 1, "noconv", 0)[0], UNSUPPORTED_VERSION, "Fetch v1, conversion off")
    eq(stored(b.port, "noconv")[0][1], [(0, 5, b"k", b"v")], "Fetch v4, conversion off")


def case_max_timestamp_from_records(t):
    b = t.broker()
    eq(kadmin.create_topic(b.port, TOPIC), 0, "create topic")
    base = 1_700_000_000_000
    for n in range(3):
        recs = [(b"k", b"v%d" % i, base + 100 * n + 10 * i) for i in range(3)]
        rb = bytearray(kwire.record_batch(recs, base_timestamp=base + 100 * n))
        struct.pack_into(">q", rb, 35, -1)  # MaxTimestamp as sarama writes it
        struct.pack_into(">I", rb, 17, kwire.crc32c(bytes(rb[21:])))
        eq(produce_v3_batch(b.port, TOPIC, bytes(rb))[:2], (0, 3 * n), "produce %d" % n)
    # a gzip batch too (the broker decompresses it when MaxTimestamp is
    # below BaseTimestamp, as here)
    from kafka.record.default_records import DefaultRecordBatchBuilder
    gz = DefaultRecordBatchBuilder(2, 1, False, -1, -1, -1, 1 << 20)
    for i in range(3):
        gz.append(i, base + 300 + 10 * (2 - i), b"k", b"gz%d" % i, [])
    rb = bytearray(gz.build())
    struct.pack_into(">q", rb, 35, -1)
    struct.pack_into(">I", rb, 17, kwire.crc32c(bytes(rb[21:])))
    eq(produce_v3_batch(b.port, TOPIC, bytes(rb))[:2], (0, 9), "produce gzip")
    for batch, recs in stored(b.port, TOPIC):
        eq(batch.max_timestamp, max(r[1] for r in recs), "stored MaxTimestamp")
    with kwire.connect(b.port) as s:
        for ts, want in ((base + 15, (base + 20, 2)), (base + 120, (base + 120, 5)),
                         (base + 221, (base + 320, 9)), (base + 321, (-1, -1))):
            _, parts = kwire.parse_list_offsets_v1(kwire.roundtrip(
                s, kwire.list_offsets_v1(2, TOPIC, 0, ts)))
            eq(parts[(TOPIC, 0)], (0,) + want, "ListOffsets at %d" % ts)


def case_acks0_failure_closes(t):
    b = t.broker()
    eq(kadmin.create_topic(b.port, TOPIC), 0, "create topic")
    good = kwire.record_batch([(b"k", b"v")])
    with kwire.connect(b.port) as s:
        s.sendall(kwire.produce_v3(1, TOPIC, 0, good, acks=0))
        # still open: a Metadata on the same connection is answered
        eq(kwire.correlation_id(kwire.roundtrip(s, kwire.metadata_v1(2, [TOPIC]))), 2,
           "the connection after a good acks=0 produce")
        s.sendall(kwire.produce_v3(3, "no-such-topic", 0, good, acks=0))
        kwire.wait_closed(s, timeout=10.0)
    with kwire.connect(b.port) as s:
        bad = bytearray(legacy_message(1, b"k", b"v", 0, 5))
        bad[13] ^= 0xFF
        s.sendall(kwire.produce_v(2, 4, TOPIC, 0, bytes(bad), acks=0))
        kwire.wait_closed(s, timeout=10.0)
    eq([r[2:] for _, rs in stored(b.port, TOPIC) for r in rs], [(b"k", b"v")],
       "what was stored")


if __name__ == "__main__":
    sys.exit(main([case_produce_up_converted, case_produce_log_append_time, case_produce_bad_crc,
                   case_fetch_down_converted, case_fetch_down_conversion_limits,
                   case_max_timestamp_from_records, case_acks0_failure_closes]))
