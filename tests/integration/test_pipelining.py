#!/usr/bin/python3
"""Pipelined requests on one connection: samsa-broker answers strictly in
request order, sends nothing for acks=0 Produce, and keeps that order while
a long-poll Fetch is parked.

    test_pipelining.py SAMSA_BROKER [-k CASE]

- mixed_pipeline: ApiVersions, Metadata, Produce acks=1, Produce acks=0,
  ListOffsets, Fetch, ApiVersions written in one go: six responses in
  order, none for the acks=0 Produce, whose records are nonetheless
  appended before the ListOffsets that follows it.
- many_in_one_write: 200 requests of five kinds (a fifth of them acks=0
  Produce) in one write: every other one answered, in order; every batch
  appended in request order.
- long_poll_blocks_pipeline: Fetch (MaxWaitMs 2000, MinBytes 1) on an empty
  partition, then ApiVersions, on one connection: another connection is
  served meanwhile; the Fetch answers (empty records, not null) only after
  waiting, and the ApiVersions response comes after it.
- metadata_behind_a_long_poll_tells_what_came_before_it: Fetch (MaxWaitMs
  3000) on an empty partition, then Metadata of a topic that does not exist
  yet, a Produce and a ListOffsets, on one connection; the topic is made
  from another connection while the Fetch waits: the Metadata, handled only
  once the Fetch is answered (as Kafka reads a connection's next request
  only then), names it, and the ListOffsets sees the Produce.
- long_poll_woken_by_produce: the same with MaxWaitMs 10000; a Produce from
  another connection wakes the Fetch well before its timeout, with the
  produced records; the ApiVersions follows.
- long_poll_min_bytes: MinBytes 4000: a 100-byte append does not end the
  wait; a later append that brings the total past 4000 bytes does.
- long_poll_counts_appends: one Fetch parked on three partitions (MinBytes
  3000, PartitionMaxBytes 1500): appends of about 1000 bytes add up across
  partitions, each partition counting at most its PartitionMaxBytes (two
  appends to one partition are not enough, nor is a second partition); the
  third partition's append answers it, with every record appended.
- join_parked_connection_closes: a JoinGroup parks for the group's initial
  rebalance delay; its connection closes while it waits; the broker keeps
  serving, and a second member's JoinGroup, pipelined with an ApiVersions,
  is answered (no error, a generation) after the delay, before the
  ApiVersions.
"""

import os
import select
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402


def recs(n, tag):
    return [(b"%s-%d" % (tag, i), b"value %s %d" % (tag, i)) for i in range(n)]


def decode(records):
    batches, tail = kwire.parse_batches(records)
    eq(tail, 0, "bytes after the last whole batch in a Fetch response")
    out = []
    for x in batches:
        check(x.crc_ok(), "batch at %d has a bad CRC", x.base_offset)
        out.extend((o, k, v) for o, _, k, v in x.records())
    return out


def case_mixed_pipeline(t):
    b = t.broker()
    topic = "pl-mixed"
    kwire.create_topic(b.port, topic, 1)
    first, second = recs(3, b"a"), recs(2, b"b")
    data = (kwire.api_versions_v0(1)
            + kwire.metadata_v1(2, [topic])
            + kwire.produce_v3(3, topic, 0, kwire.record_batch(first), acks=1)
            + kwire.produce_v3(4, topic, 0, kwire.record_batch(second), acks=0)
            + kwire.list_offsets_v1(5, topic, 0, -1)
            + kwire.fetch_v4(6, topic, 0, 0, max_wait_ms=0)
            + kwire.api_versions_v0(7))
    with kwire.connect(b.port) as s:
        s.sendall(data)
        frames = [kwire.recv_frame(s) for _ in range(6)]
        eq([kwire.correlation_id(f) for f in frames], [1, 2, 3, 5, 6, 7],
           "correlation ids of the responses")
        eq(kwire.parse_api_versions_v0(frames[0])[1], 0, "ApiVersions error")
        _, _, _, topics = kwire.parse_metadata_v1(frames[1])
        eq(topics[topic][0], 0, "Metadata topic error")
        eq(kwire.parse_produce_v3(frames[2])[1][(topic, 0)], (0, 0), "Produce acks=1 result")
        eq(kwire.parse_list_offsets_v1(frames[3])[1][(topic, 0)][2], 5,
           "latest offset after both produces")
        err, hw, records = kwire.parse_fetch_v4(frames[4])[1][(topic, 0)]
        eq((err, hw), (0, 5), "Fetch error, high watermark")
        eq([r[1:] for r in decode(records)], first + second, "fetched records")
        # Nothing more: the acks=0 Produce has no response.
        s.sendall(kwire.api_versions_v0(8))
        eq(kwire.correlation_id(kwire.recv_frame(s)), 8, "next response's correlation id")


def case_many_in_one_write(t):
    b = t.broker()
    topic = "pl-many"
    kwire.create_topic(b.port, topic, 1)
    data = bytearray()
    expect = []
    batches = []
    produced = 0
    for corr in range(1, 201):
        kind = corr % 5
        if kind == 0:
            r = recs(2, b"z%d" % corr)
            data += kwire.produce_v3(corr, topic, 0, kwire.record_batch(r), acks=0)
            batches.append(r)
            produced += 2
            continue
        expect.append((corr, kind, produced))
        if kind == 1:
            data += kwire.api_versions_v0(corr)
        elif kind == 2:
            data += kwire.metadata_v1(corr, [topic])
        elif kind == 3:
            r = recs(1, b"o%d" % corr)
            data += kwire.produce_v3(corr, topic, 0, kwire.record_batch(r), acks=1)
            batches.append(r)
            produced += 1
        else:
            data += kwire.list_offsets_v1(corr, topic, 0, -1)
    with kwire.connect(b.port) as s:
        s.sendall(bytes(data))
        for corr, kind, before in expect:
            f = kwire.recv_frame(s)
            eq(kwire.correlation_id(f), corr, "correlation id of the next response")
            if kind == 3:
                eq(kwire.parse_produce_v3(f)[1][(topic, 0)], (0, before),
                   "Produce %d error, base offset" % corr)
            elif kind == 4:
                eq(kwire.parse_list_offsets_v1(f)[1][(topic, 0)][2], before,
                   "ListOffsets %d latest offset" % corr)
        s.sendall(kwire.api_versions_v0(999))
        eq(kwire.correlation_id(kwire.recv_frame(s)), 999, "response after the pipeline")
    got, hw = kwire.read_partition(b.port, topic, 0)
    eq(hw, produced, "high watermark")
    eq([r[2:4] for r in got], [kv for r in batches for kv in r], "records in request order")


def readable(s):
    return bool(select.select([s], [], [], 0)[0])


def case_long_poll_blocks_pipeline(t):
    b = t.broker()
    topic = "pl-lp"
    kwire.create_topic(b.port, topic, 1)
    with kwire.connect(b.port) as a:
        t0 = time.monotonic()
        a.sendall(kwire.fetch_v4(10, topic, 0, 0, max_wait_ms=2000, min_bytes=1)
                  + kwire.api_versions_v0(11))
        time.sleep(0.3)
        with kwire.connect(b.port) as other:
            corr, err, _ = kwire.parse_api_versions_v0(
                kwire.roundtrip(other, kwire.api_versions_v0(12)))
            eq((corr, err), (12, 0), "another connection's ApiVersions during the long poll")
        check(not readable(a), "the long-poll connection got a response before MaxWaitMs "
              "with no data (after %.2f s)", time.monotonic() - t0)
        f = kwire.recv_frame(a, 15.0)
        waited = time.monotonic() - t0
        eq(kwire.correlation_id(f), 10, "first response on the long-poll connection")
        check(waited >= 1.5, "Fetch with MaxWaitMs 2000 and no data answered after %.2f s",
              waited)
        err, hw, records = kwire.parse_fetch_v4(f)[1][(topic, 0)]
        eq((err, hw, records), (0, 0, b""), "empty Fetch: error, high watermark, records")
        eq(kwire.correlation_id(kwire.recv_frame(a)), 11, "second response")


def case_metadata_behind_a_long_poll_tells_what_came_before_it(t):
    """A request other than Produce and Fetch waits for the answers before
    it on its connection, as a Kafka broker reads a connection's next
    request only once it answered the one before: a Metadata behind a
    parked Fetch names a topic created while the Fetch waited; a Produce
    behind that Metadata is appended only after it (ListOffsets after both
    sees it)."""
    b = t.broker(config={"auto.create.topics.enable": "false"})
    topic, late = "pl-md", "pl-md-late"
    kwire.create_topic(b.port, topic, 1)
    with kwire.connect(b.port) as a:
        a.sendall(kwire.fetch_v4(30, topic, 0, 0, max_wait_ms=3000, min_bytes=1)
                  + kwire.metadata_v1(31, [late])
                  + kwire.produce_v3(32, topic, 0, kwire.record_batch(recs(2, b"md")))
                  + kwire.list_offsets_v1(33, topic, 0, -1))
        time.sleep(0.3)
        check(not readable(a), "the Fetch answered before MaxWaitMs with no data")
        kwire.create_topic(b.port, late, 2)  # from another connection, while the Fetch waits
        f = kwire.recv_frame(a, 15.0)
        eq(kwire.correlation_id(f), 30, "first response")
        err, hw, records = kwire.parse_fetch_v4(f)[1][(topic, 0)]
        eq((err, records), (0, b""), "the Fetch: error, records (it waited for MaxWaitMs)")
        corr, _, _, topics = kwire.parse_metadata_v1(kwire.recv_frame(a))
        eq(corr, 31, "second response")
        eq(topics.get(late), (0, {0: (0, 0), 1: (0, 0)}),
           "the Metadata of the topic created while the Fetch before it waited")
        corr, parts = kwire.parse_produce_v3(kwire.recv_frame(a))
        eq((corr, parts[(topic, 0)]), (32, (0, 0)), "third response: the Produce's")
        corr, offs = kwire.parse_list_offsets_v1(kwire.recv_frame(a))
        eq((corr, offs[(topic, 0)][0], offs[(topic, 0)][2]), (33, 0, 2),
           "the ListOffsets (latest) after the Produce: correlation, error, offset")


def case_long_poll_woken_by_produce(t):
    b = t.broker()
    topic = "pl-wake"
    kwire.create_topic(b.port, topic, 1)
    with kwire.connect(b.port) as a:
        a.sendall(kwire.fetch_v4(20, topic, 0, 0, max_wait_ms=10000, min_bytes=1)
                  + kwire.api_versions_v0(21))
        time.sleep(0.5)
        check(not readable(a), "the Fetch answered before any data came")
        r = recs(3, b"w")
        t_produce = time.monotonic()
        eq(kwire.produce(b.port, topic, 0, r), 0, "base offset of the waking produce")
        f = kwire.recv_frame(a, 15.0)
        waited = time.monotonic() - t_produce
        eq(kwire.correlation_id(f), 20, "first response on the long-poll connection")
        check(waited < 8.0, "the Fetch was answered %.1f s after the produce: not woken "
              "(MaxWaitMs 10000)", waited)
        err, hw, records = kwire.parse_fetch_v4(f)[1][(topic, 0)]
        eq((err, hw), (0, 3), "woken Fetch error, high watermark")
        eq([x[1:] for x in decode(records)], r, "records of the woken Fetch")
        eq(kwire.correlation_id(kwire.recv_frame(a)), 21, "second response")


def case_long_poll_min_bytes(t):
    b = t.broker()
    topic = "pl-minbytes"
    kwire.create_topic(b.port, topic, 1)
    with kwire.connect(b.port) as a:
        t0 = time.monotonic()
        a.sendall(kwire.fetch_v4(30, topic, 0, 0, max_wait_ms=3000, min_bytes=4000))
        time.sleep(0.3)
        kwire.produce(b.port, topic, 0, [(b"small", b"x" * 20)])
        time.sleep(0.5)
        check(not readable(a), "Fetch with MinBytes 4000 answered after a 100-byte append")
        f = kwire.recv_frame(a, 15.0)
        waited = time.monotonic() - t0
        check(waited >= 2.5, "Fetch with MinBytes 4000, MaxWaitMs 3000 answered after "
              "%.2f s with ~100 bytes available", waited)
        err, hw, records = kwire.parse_fetch_v4(f)[1][(topic, 0)]
        eq((err, hw, len(decode(records))), (0, 1, 1), "Fetch after MaxWaitMs")

        a.sendall(kwire.fetch_v4(31, topic, 0, 1, max_wait_ms=10000, min_bytes=4000))
        time.sleep(0.3)
        kwire.produce(b.port, topic, 0, [(b"small2", b"y" * 20)])
        time.sleep(0.3)
        check(not readable(a), "Fetch with MinBytes 4000 answered after a 100-byte append")
        t_big = time.monotonic()
        kwire.produce(b.port, topic, 0, [(b"big", b"z" * 5000)])
        f = kwire.recv_frame(a, 15.0)
        check(time.monotonic() - t_big < 8.0, "Fetch not woken once MinBytes was reached")
        eq(kwire.correlation_id(f), 31, "correlation id")
        err, hw, records = kwire.parse_fetch_v4(f)[1][(topic, 0)]
        eq((err, hw), (0, 3), "Fetch error, high watermark")
        eq([x[1] for x in decode(records)], [b"small2", b"big"], "keys fetched")


def case_long_poll_counts_appends(t):
    b = t.broker()
    topic = "pl-counts"
    kwire.create_topic(b.port, topic, 3)
    with kwire.connect(b.port) as a:
        a.sendall(kwire.fetch_v4_many(40, [(topic, 0, 0), (topic, 1, 0), (topic, 2, 0)],
                                      max_wait_ms=60000, min_bytes=3000,
                                      partition_max_bytes=1500))
        sent = {0: [], 1: [], 2: []}
        for p, tag in ((0, b"a"), (0, b"b"), (1, b"c")):
            r = [(tag, tag * 900)]
            kwire.produce(b.port, topic, p, r)
            sent[p] += r
            time.sleep(0.3)
            check(not readable(a), "Fetch with MinBytes 3000 answered after the append "
                  "%r to partition %d (at most 2500 bytes count)", tag, p)
        r = [(b"d", b"d" * 900)]
        kwire.produce(b.port, topic, 2, r)
        sent[2] += r
        f = kwire.recv_frame(a, 30.0)
        eq(kwire.correlation_id(f), 40, "correlation id")
        got = kwire.parse_fetch_v4(f)[1]
        for p in range(3):
            err, hw, records = got[(topic, p)]
            eq((err, hw), (0, len(sent[p])), "partition %d error, high watermark" % p)
            keys = [x[1] for x in decode(records)]
            # partition 0 holds two batches of about 1 kB against a 1500-byte
            # share: the first whole, the second as the share allows
            check(keys == [k for k, _ in sent[p]] or (p == 0 and keys == [b"a"]),
                  "partition %d keys fetched: %r", p, keys)


JOIN_GROUP = 11


def join_group_v0(corr, group, member_id=""):
    body = (kwire.string(group) + kwire.i32(30000) + kwire.string(member_id)
            + kwire.string("consumer")
            + kwire.array([kwire.string("range") + kwire.nbytes(b"\x00\x00")]))
    return kwire.request(JOIN_GROUP, 0, corr, body)


def parse_join_group_v0(payload):
    """-> (corr, error, generation, member id)"""
    r = kwire.Reader(payload)
    corr, err, gen = r.i32(), r.i16(), r.i32()
    r.string()  # protocol
    r.string()  # leader
    return corr, err, gen, r.string()


def case_join_parked_connection_closes(t):
    b = t.broker(config={"group.initial.rebalance.delay.ms": "1500"})
    group = "pl-join"
    kwire.wait_coordinator(b.port, group)  # as a client asks first
    with kwire.connect(b.port) as a:
        a.sendall(join_group_v0(50, group))
        time.sleep(0.3)
        check(not readable(a), "JoinGroup answered before the initial rebalance delay")
    # a's connection is closed with its JoinGroup parked
    with kwire.connect(b.port) as c:
        c.sendall(join_group_v0(51, group) + kwire.api_versions_v0(52))
        with kwire.connect(b.port) as other:
            eq(kwire.correlation_id(kwire.roundtrip(other, kwire.api_versions_v0(53))), 53,
               "ApiVersions on another connection while the JoinGroup waits")
        f = kwire.recv_frame(c, 30.0)
        corr, err, gen, member = parse_join_group_v0(f)
        eq((corr, err), (51, 0), "second member's JoinGroup: correlation id, error")
        check(gen >= 1 and member != "", "JoinGroup answered generation %d, member %r",
              gen, member)
        eq(kwire.correlation_id(kwire.recv_frame(c, 10.0)), 52, "the ApiVersions after it")


CASES = [case_mixed_pipeline, case_many_in_one_write, case_long_poll_blocks_pipeline,
         case_metadata_behind_a_long_poll_tells_what_came_before_it,
         case_long_poll_woken_by_produce, case_long_poll_min_bytes,
         case_long_poll_counts_appends, case_join_parked_connection_closes]

if __name__ == "__main__":
    sys.exit(main(CASES))
