#!/usr/bin/python3
"""Protocol details the clients depend on (docs: the Kafka protocol
reference, sections 0, 1 and 6), on raw sockets against samsa-broker.

    test_protocol.py SAMSA_BROKER [-k CASE]

- api_versions_ranges: every advertised API starts at version 0; Produce
  includes v0 and v7 and Fetch reaches v10 (librdkafka enables gzip, snappy
  and lz4 only when Produce v0 is in range, zstd with Produce v7 + Fetch
  v10); FindCoordinator v0 is advertised (librdkafka 2.0.2 enables LZ4 only
  then); ApiVersions v3 (flexible request, v0 response header) answers with
  the same ranges.
- metadata_topic_arrays: Metadata v0 with an empty array lists all topics,
  v1 with an empty array none and with null all; the controller id is a
  listed broker.
- fetch_edges: a batch larger than partition_max_bytes and max_bytes still
  comes whole; a fetch offset inside a batch returns that whole batch;
  at the high watermark: no error, empty (not null) records; beyond it:
  OFFSET_OUT_OF_RANGE.
- fetch_max_bytes_broker: the broker's fetch.max.bytes (KIP-541) caps a
  response whatever MaxBytes the consumer asks for, yet a first batch larger
  than the cap still comes whole, and the rest is read by later fetches.
- produce_rejections: two batches in one partition's records, a magic 1
  message, empty records → INVALID_RECORD; acks=2 → INVALID_REQUIRED_ACKS;
  an unknown partition or topic → UNKNOWN_TOPIC_OR_PARTITION; nothing is
  appended and the connection keeps working.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402
from kwire import Reader, array, i8, i32, read_uvarint, uvarint  # noqa: E402

INVALID_RECORD = 87
INVALID_REQUIRED_ACKS = 21
OFFSET_OUT_OF_RANGE = 1


def case_api_versions_ranges(t):
    b = t.broker()
    apis = b.apis
    bad = {k: v for k, v in apis.items() if v[0] != 0}
    check(not bad, "APIs advertised with a minimum version above 0: %r", bad)
    check(kwire.PRODUCE in apis and apis[kwire.PRODUCE][1] >= 7,
          "Produce range %r does not reach v7", apis.get(kwire.PRODUCE))
    check(kwire.FETCH in apis and apis[kwire.FETCH][1] >= 10,
          "Fetch range %r does not reach v10", apis.get(kwire.FETCH))

    # ApiVersions v3 as librdkafka sends it: header v2 (client id, then an
    # empty tag section), compact strings client_software_name/version, tags.
    name, ver = b"librdkafka", b"2.0.2"
    body = (b"\x00" + uvarint(len(name) + 1) + name + uvarint(len(ver) + 1) + ver + b"\x00")
    with kwire.connect(b.port) as s:
        resp = kwire.roundtrip(s, kwire.request(kwire.API_VERSIONS, 3, 42, body))
    r = Reader(resp)
    eq(r.i32(), 42, "ApiVersions v3 correlation id (v0 response header: no tag byte)")
    eq(r.i16(), 0, "ApiVersions v3 error")
    n = read_uvarint(r) - 1
    v3 = {}
    for _ in range(n):
        k, lo, hi = r.i16(), r.i16(), r.i16()
        eq(read_uvarint(r), 0, "tag section of ApiVersions v3 entry %d" % k)
        v3[k] = (lo, hi)
    r.i32()  # throttle
    eq(read_uvarint(r), 0, "ApiVersions v3 trailing tag section")
    eq(r.remaining(), 0, "bytes after the ApiVersions v3 body")
    eq(v3, apis, "ApiVersions v3 ranges vs. v0")

    check(10 in apis, "FindCoordinator (10) is not advertised: librdkafka 2.0.2 then disables "
          "LZ4 and sends lz4 batches uncompressed (advertised: %r)", sorted(apis))


def parse_metadata_v0_topics(payload):
    r = Reader(payload)
    r.i32()
    r.array(lambda r: (r.i32(), r.string(), r.i32()))
    return [t[1] for t in r.array(lambda r: (r.i16(), r.string(), r.array(
        lambda r: (r.i16(), r.i32(), r.i32(), r.array(lambda r: r.i32()),
                   r.array(lambda r: r.i32())))))]


def case_metadata_topic_arrays(t):
    b = t.broker()
    for name, n in (("md-a", 1), ("md-b", 2)):
        kwire.create_topic(b.port, name, n)
    with kwire.connect(b.port) as s:
        topics = parse_metadata_v0_topics(kwire.roundtrip(s, kwire.request(3, 0, 1, array([]))))
        eq(sorted(topics), ["md-a", "md-b"], "Metadata v0 with an empty topic array")
        _, brokers, ctrl, topics = kwire.parse_metadata_v1(
            kwire.roundtrip(s, kwire.request(3, 1, 2, array([]))))
        eq(list(topics), [], "Metadata v1 with an empty topic array")
        _, brokers, ctrl, topics = kwire.parse_metadata_v1(
            kwire.roundtrip(s, kwire.metadata_v1(3, None)))
        eq(sorted(topics), ["md-a", "md-b"], "Metadata v1 with a null topic array")
        check(ctrl in [x[0] for x in brokers], "controller id %d is not a listed broker %r",
              ctrl, brokers)
        eq(sorted(topics["md-b"][1]), [0, 1], "md-b partitions")


def case_fetch_edges(t):
    b = t.broker()
    kwire.create_topic(b.port, "fe", 1)
    big = [(b"k%d" % i, b"x" * 1000) for i in range(10)]
    eq(kwire.produce(b.port, "fe", 0, big), 0, "base offset of the big batch")
    eq(kwire.produce(b.port, "fe", 0, [(b"small", b"y")]), 10, "base offset of the small batch")
    with kwire.connect(b.port) as s:
        for corr, offset in ((1, 0), (2, 7)):
            _, parts = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.fetch_v4(
                corr, "fe", 0, offset, max_bytes=100, partition_max_bytes=100)))
            err, hw, records = parts[("fe", 0)]
            eq((err, hw), (0, 11), "Fetch at %d with max bytes 100: error, high watermark" % offset)
            batches, tail = kwire.parse_batches(records)
            check(batches, "Fetch at %d with max bytes 100 returned no whole batch (%d bytes)",
                  offset, len(records))
            eq((batches[0].base_offset, batches[0].record_count), (0, 10),
               "first batch returned for offset %d" % offset)
            check(batches[0].crc_ok(), "CRC of the fetched batch")
        _, parts = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.fetch_v4(3, "fe", 0, 11)))
        eq(parts[("fe", 0)], (0, 11, b""), "Fetch at the high watermark")
        _, parts = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.fetch_v4(4, "fe", 0, 12)))
        eq(parts[("fe", 0)][:2], (OFFSET_OUT_OF_RANGE, 11), "Fetch beyond the high watermark")


def case_fetch_many_partitions(t):
    """One Fetch over 64 partitions that all hold data answers every one
    (the response's bookkeeping must not outgrow what the request allows)."""
    b = t.broker()
    n = 64
    kwire.create_topic(b.port, "many", n)
    for p in range(n):
        recs = [(b"k%d-%d" % (p, j), b"v" * 200) for j in range(50)]
        kwire.produce(b.port, "many", p, recs)
    parts = b"".join(kwire.i32(p) + kwire.i64(0) + kwire.i32(1 << 20) for p in range(n))
    body = (kwire.i32(-1) + kwire.i32(0) + kwire.i32(1) + kwire.i32(64 << 20) + kwire.i8(0)
            + kwire.i32(1) + kwire.string("many") + kwire.i32(n) + parts)
    s = kwire.connect(b.port)
    corr, out = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.request(kwire.FETCH, 4, 77, body)))
    eq(corr, 77, "correlation id")
    eq(len(out), n, "partitions answered")
    for p in range(n):
        err, hw, records = out[("many", p)]
        eq(err, 0, "error of many-%d" % p)
        eq(hw, 50, "high watermark of many-%d" % p)
        batches, tail = kwire.parse_batches(records)
        eq(tail, 0, "bytes after the last whole batch of many-%d" % p)
        eq(sum(x.record_count for x in batches), 50, "records of many-%d" % p)
    s.close()


def case_fetch_max_bytes_broker(t):
    b = t.broker(config={"fetch.max.bytes": "4096"})
    kwire.create_topic(b.port, "fmb", 2)
    for p in range(2):
        for i in range(6):  # six batches of about 1.1 kB each
            kwire.produce(b.port, "fmb", p, [(b"k%d" % i, b"v" * 1000)])
    big = [(b"b%d" % i, b"w" * 1000) for i in range(8)]  # one batch of about 8 kB
    eq(kwire.produce(b.port, "fmb", 0, big), 6, "base offset of the large batch")
    with kwire.connect(b.port) as s:
        parts = b"".join(kwire.i32(p) + kwire.i64(0) + kwire.i32(1 << 20) for p in range(2))
        body = (kwire.i32(-1) + kwire.i32(0) + kwire.i32(1) + kwire.i32(50 << 20) + kwire.i8(0)
                + kwire.array([kwire.string("fmb") + kwire.i32(2) + parts]))
        _, out = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.request(kwire.FETCH, 4, 5, body)))
        total = sum(len(out[("fmb", p)][2]) for p in range(2))
        check(0 < total <= 4096, "a 50 MB Fetch under fetch.max.bytes=4096 returned %d bytes",
              total)
        # read partition 0 to its end: the 8 kB batch comes whole on its own
        offset, seen, sizes = 0, 0, []
        while offset < 14:
            _, o = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.fetch_v4(
                6 + offset, "fmb", 0, offset, max_bytes=50 << 20)))
            err, hw, records = o[("fmb", 0)]
            eq((err, hw), (0, 14), "Fetch of fmb-0 at %d: error, high watermark" % offset)
            batches, tail = kwire.parse_batches(records)
            check(batches, "Fetch of fmb-0 at %d returned no whole batch", offset)
            sizes.append(len(records))
            for x in batches:
                seen += x.record_count
            offset = batches[-1].base_offset + batches[-1].record_count
        eq(seen, 14, "records of fmb-0 read under the cap")
        check(max(sizes) > 4096 and len(sizes) > 2,
              "the large batch came whole and the small ones in several fetches: %r", sizes)


def case_produce_rejections(t):
    b = t.broker()
    kwire.create_topic(b.port, "pr", 1)
    one = kwire.record_batch([(b"k", b"v")])
    magic1 = (kwire.i64(0) + i32(22) + i32(0) + i8(1) + i8(0) + kwire.i64(0)
              + i32(-1) + i32(0))   # offset, size, crc (wrong anyway), magic 1, attrs, ts, key, value
    cases = [
        ("two batches in one partition", "pr", 0, one + one, 1, INVALID_RECORD),
        ("a magic 1 message", "pr", 0, magic1, 1, INVALID_RECORD),
        ("empty records", "pr", 0, b"", 1, INVALID_RECORD),
        ("acks=2", "pr", 0, one, 2, INVALID_REQUIRED_ACKS),
        ("an unknown partition", "pr", 5, one, 1, kwire.UNKNOWN_TOPIC_OR_PARTITION),
        ("an unknown topic", "pr-none", 0, one, 1, kwire.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    with kwire.connect(b.port) as s:
        for n, (what, topic, p, records, acks, expect) in enumerate(cases):
            corr, parts = kwire.parse_produce_v3(kwire.roundtrip(
                s, kwire.produce_v3(n, topic, p, records, acks=acks)))
            eq(corr, n, what + ": correlation id")
            eq(parts[(topic, p)][0], expect, "Produce of " + what + ": error")
        corr, parts = kwire.parse_produce_v3(kwire.roundtrip(s, kwire.produce_v3(99, "pr", 0, one)))
        eq(parts[("pr", 0)], (0, 0), "a good Produce afterwards: error, base offset")
    _, hw = kwire.read_partition(b.port, "pr", 0)
    eq(hw, 1, "pr-0 high watermark")


CASES = [case_api_versions_ranges, case_metadata_topic_arrays, case_fetch_edges,
         case_fetch_many_partitions, case_fetch_max_bytes_broker, case_produce_rejections]

if __name__ == "__main__":
    sys.exit(main(CASES))
