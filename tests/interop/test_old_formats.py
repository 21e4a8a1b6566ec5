#!/usr/bin/python3
"""Clients speaking the old message formats against samsa-broker: kafka-python
2.0.2 told api_version=(0,9) (Produce v0 with magic-0 message sets, Fetch v0)
or (0,10) (Produce v2 with magic 1, Fetch v2), and kcat 1.7.1 (librdkafka
2.0.2) with api.version.request=false and broker.version.fallback=0.9.0
(Produce v1 with magic-0 message sets, Fetch v1). With a fallback of 0.10.0
or later librdkafka asks ApiVersions anyway and uses RecordBatch v2, so
there is no magic-1 kcat case.

    test_old_formats.py SAMSA_BROKER [-k CASE]

- kafka_python_0_9 / kafka_python_0_10: a producer of that version sends
  400 records per codec (none, gzip, snappy; lz4 too at 0.10: kafka-python's
  magic-0 lz4 needs python3-xxhash, which Debian's python3-kafka does not
  pull in) with null keys and values and (0.10) explicit timestamps; the
  acknowledged offsets count up from 0; the log holds RecordBatch v2 with
  the codec; a consumer of the same version reads every record back with
  its offset, key, value and timestamp (0.9: none), and a consumer of the
  current protocol (Fetch v4+) reads the same (0.9's timestamps as -1).
- kafka_python_new_to_old: records from a current producer (headers,
  timestamps; none, gzip, snappy, lz4) read by 0.9 (not lz4: xxhash) and
  0.10 consumers (down-converted).
- kcat_0_9: kcat -P with each codec and kcat -C with the same fallback;
  the log holds RecordBatch v2; exact offsets, keys and values, and no
  timestamps (kcat prints 0 for "not available").
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402

from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402

N = 400
BASE_TS = 1_600_000_000_000


def records(n, with_ts):
    out = []
    for i in range(n):
        key = None if i % 37 == 3 else b"key-%05d" % i
        value = None if i % 53 == 7 else b"value %d " % i + b"abc" * (i % 20)
        out.append((key, value, BASE_TS + 1000 * i if with_ts else None))
    return out


def produce(b, version, topic, codec, recs):
    p = KafkaProducer(bootstrap_servers=b.bootstrap, api_version=version,
                      compression_type=codec, linger_ms=50, batch_size=16384,
                      request_timeout_ms=15000)
    try:
        futures = [p.send(topic, key=k, value=v, partition=0, timestamp_ms=ts)
                   for k, v, ts in recs]
        p.flush(30)
        return [f.get(timeout=30).offset for f in futures]
    finally:
        p.close(10)


def consume(b, version, topic, n):
    kw = {} if version is None else {"api_version": version}
    c = KafkaConsumer(bootstrap_servers=b.bootstrap, group_id=None, enable_auto_commit=False,
                      request_timeout_ms=15000, consumer_timeout_ms=15000, **kw)
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        out = []
        deadline = time.monotonic() + 60
        while len(out) < n and time.monotonic() < deadline:
            for msgs in c.poll(timeout_ms=1000).values():
                out += [(m.offset, m.key, m.value, m.timestamp) for m in msgs]
        return out
    finally:
        c.close()


def kafka_python_case(t, version, codecs):
    b = t.broker()
    magic = 0 if version < (0, 10) else 1
    for codec in codecs:
        topic = "kp-%d%d-%s" % (version[0], version[1], codec or "none")
        eq(kadmin.create_topic(b.port, topic), 0, "create " + topic)
        recs = records(N, magic == 1)
        offsets = produce(b, version, topic, codec, recs)
        eq(offsets, list(range(N)), topic + ": acknowledged offsets")
        batches = kwire.disk_batches(b.log_dir, topic, 0)
        eq({x.magic for x in batches}, {2}, topic + ": magic on disk")
        want_codec = {None: 0, "gzip": 1, "snappy": 2, "lz4": 3}[codec]
        eq({x.codec for x in batches}, {want_codec}, topic + ": codec on disk")
        check(all(x.crc_ok() for x in batches), "%s: a stored batch with a bad CRC", topic)
        # kafka-python gives magic-0 messages the timestamp None, the
        # current protocol -1 (Kafka's NO_TIMESTAMP)
        old_ts = [ts if magic == 1 else None for _, _, ts in recs]
        new_ts = [ts if magic == 1 else -1 for _, _, ts in recs]
        want = [(i, k, v) for i, (k, v, _) in enumerate(recs)]
        got = consume(b, version, topic, N)
        eq([g[:3] for g in got], want, topic + ": read back with api_version %r" % (version,))
        eq([g[3] for g in got], old_ts, topic + ": timestamps, api_version %r" % (version,))
        got = consume(b, None, topic, N)
        eq([g[:3] for g in got], want, topic + ": read back with the current protocol")
        eq([g[3] for g in got], new_ts, topic + ": timestamps, current protocol")


def case_kafka_python_0_9(t):
    kafka_python_case(t, (0, 9), [None, "gzip", "snappy"])


def case_kafka_python_0_10(t):
    kafka_python_case(t, (0, 10), [None, "gzip", "snappy", "lz4"])


def case_kafka_python_new_to_old(t):
    b = t.broker()
    for codec in (None, "gzip", "snappy", "lz4"):
        topic = "kp-new-" + (codec or "none")
        eq(kadmin.create_topic(b.port, topic), 0, "create " + topic)
        recs = records(N, True)
        p = KafkaProducer(bootstrap_servers=b.bootstrap, compression_type=codec, linger_ms=50)
        try:
            for k, v, ts in recs:
                p.send(topic, key=k, value=v, partition=0, timestamp_ms=ts,
                       headers=[("h", b"x")])
            p.flush(30)
        finally:
            p.close(10)
        want = [(i, k, v) for i, (k, v, _) in enumerate(recs)]
        for version in ((0, 9), (0, 10)):
            if version == (0, 9) and codec == "lz4":
                continue  # kafka-python's magic-0 lz4 needs python3-xxhash
            got = consume(b, version, topic, N)
            eq([g[:3] for g in got], want, "%s: api_version %r" % (topic, version))
            eq([g[3] for g in got], [ts if version >= (0, 10) else None for _, _, ts in recs],
               "%s: timestamps, api_version %r" % (topic, version))


def kcat(b, fallback, args, data=None):
    argv = ["kcat", "-b", b.bootstrap, "-X", "api.version.request=false",
            "-X", "broker.version.fallback=" + fallback] + args
    p = subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0 or "ERROR" in err or "Delivery failed" in err:
        raise AssertionError("%s: status %d\n%s" % (" ".join(argv), p.returncode, err[-3000:]))
    return p.stdout


def case_kcat_0_9(t):
    fallback = "0.9.0"
    b = t.broker()
    for codec in ("none", "gzip", "snappy", "lz4"):
        topic = "kcat-%s-%s" % (fallback, codec)
        eq(kadmin.create_topic(b.port, topic), 0, "create " + topic)
        msgs = [("k%04d" % i, "value %d %s" % (i, "xyz" * (i % 17))) for i in range(N)]
        kcat(b, fallback, ["-P", "-t", topic, "-p", "0", "-K", ":", "-z", codec],
             "".join("%s:%s\n" % kv for kv in msgs).encode())
        batches = kwire.disk_batches(b.log_dir, topic, 0)
        check(batches, "%s: nothing stored", topic)
        eq({x.magic for x in batches}, {2}, topic + ": magic on disk")
        out = kcat(b, fallback, ["-C", "-q", "-e", "-t", topic, "-p", "0", "-o", "beginning",
                                 "-f", r"%o\t%T\t%k\t%s\n"])
        rows = [line.split("\t", 3) for line in out.decode().split("\n")[:-1]]
        eq([(int(o), k, v) for o, _, k, v in rows], [(i, k, v) for i, (k, v) in enumerate(msgs)],
           topic + ": read back")
        # magic 0 has no timestamp: kcat prints 0 for "not available"
        eq({int(ts) for _, ts, _, _ in rows}, {0}, topic + ": magic-0 timestamps")


if __name__ == "__main__":
    sys.exit(main([case_kafka_python_0_9, case_kafka_python_0_10, case_kafka_python_new_to_old,
                   case_kcat_0_9]))
