#!/usr/bin/python3
"""Hostile input on raw sockets: samsa-broker closes the offending
connection (after an error response where the protocol has one), does not
allocate what a peer merely claims, and keeps serving everyone else.

    test_hostile.py SAMSA_BROKER [-k CASE]

After every case a "bystander" connection opened before the case, and a
fresh connection, are both served (ApiVersions v0 + Metadata v1), and the
broker process is alive.

"Closed" below means: the broker closes the connection within 5 s; any
response it sent before closing carries the offending request's
correlation id, and a request written after the offending one on the same
connection gets no response.
"""

import os
import random
import resource
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402
from kwire import array, header, i8, i16, i32, i64, string  # noqa: E402

# A peer may claim 2 GiB; the broker must not reserve anything like it.
MAX_VM_GROWTH_KIB = 512 * 1024


class Scene:
    """A broker with a bystander connection, and the check that both it and
    a fresh client are served."""

    def __init__(self, t, overrides=None):
        self.b = t.broker(overrides=overrides)
        self.bystander = kwire.connect(self.b.port)
        self.corr = 100
        self.served()
        self.vm0 = self.b.vm_peak_kib()

    def served(self):
        self.b.check_alive()
        self.corr += 1
        corr, err, apis = kwire.parse_api_versions_v0(
            kwire.roundtrip(self.bystander, kwire.api_versions_v0(self.corr)))
        eq((corr, err), (self.corr, 0), "bystander ApiVersions correlation id, error")
        with kwire.connect(self.b.port) as s:
            s.sendall(kwire.api_versions_v0(1) + kwire.metadata_v1(2, None))
            corr, err, apis = kwire.parse_api_versions_v0(kwire.recv_frame(s))
            eq((corr, err), (1, 0), "fresh client ApiVersions correlation id, error")
            check(3 in apis and 0 in apis, "ApiVersions lists neither Metadata nor Produce")
            corr, brokers, _, _ = kwire.parse_metadata_v1(kwire.recv_frame(s))
            eq(corr, 2, "fresh client Metadata correlation id")
            eq([(x[0], x[2]) for x in brokers], [(0, self.b.port)], "Metadata brokers")

    def check_memory(self):
        grown = self.b.vm_peak_kib() - self.vm0
        check(grown < MAX_VM_GROWTH_KIB, "the broker's peak virtual memory grew by %d MiB",
              grown // 1024)

    def expect_closed(self, data, corr=None, what=""):
        """Writes data on a new connection and expects the broker to close it.
        corr: the offending request's correlation id (None when the frame
        has none). A request with correlation id 0x7777 may follow the bad
        one in data; it must not be answered."""
        s = kwire.connect(self.b.port)
        try:
            try:
                s.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                pass
            frames = kwire.wait_closed(s, 5.0)
        except AssertionError as e:
            raise AssertionError("%s: %s" % (what, e))
        finally:
            s.close()
        for f in frames:
            got = kwire.correlation_id(f) if len(f) >= 4 else None
            check(got != 0x7777, "%s: the request after the bad one was answered", what)
            check(corr is not None and got == corr, "%s: response with correlation id %r "
                  "before the close (offending request: %r)", what, got, corr)
        self.served()


FOLLOWER = kwire.api_versions_v0(0x7777)


def case_frame_size_huge(t):
    sc = Scene(t)
    sc.expect_closed(i32(0x7FFFFFFF) + b"\x00\x12\x00\x00", what="size 0x7fffffff")
    sc.expect_closed(i32(0x7FFFFFFF), what="size 0x7fffffff, nothing more")
    sc.check_memory()


def case_frame_size_over_limit(t):
    sc = Scene(t, overrides={"socket.request.max.bytes": "1048576"})
    sc.expect_closed(i32(1048577) + header(18, 0, 5) + b"\x00" * 100, what="size limit + 1")
    sc.expect_closed(i32(100 << 20) + header(18, 0, 5), what="size 100 MiB")
    sc.check_memory()


def case_frame_size_negative(t):
    sc = Scene(t)
    for size in (-1, -2, -0x80000000):
        sc.expect_closed(i32(size) + FOLLOWER, what="size %d" % size)


def case_frame_size_zero_and_tiny(t):
    sc = Scene(t)
    sc.expect_closed(i32(0), what="size 0")
    sc.expect_closed(i32(0) + FOLLOWER, what="size 0, then a request")
    sc.expect_closed(i32(3) + b"\x00\x12\x00", what="size 3 (half a header)")
    sc.expect_closed(i32(7) + b"\x00\x12\x00\x00\x00\x00\x00" + FOLLOWER,
                     what="size 7 (no client id length)")


def case_unknown_api_key(t):
    sc = Scene(t)
    for key in (1000, 0x7FFF, -1, -32768):
        sc.expect_closed(kwire.request(key, 0, 61) + FOLLOWER, corr=61,
                         what="api key %d" % key)


def interbroker_requests(corr):
    """What a Kafka 2.0 controller (and a broker shutting down) sends, in
    Kafka 2.0's layouts: LeaderAndIsr v1, StopReplica v0, UpdateMetadata v4,
    ControlledShutdown v1; each names this broker (id 0) and topic t-0."""
    state = (string("t") + i32(0) + i32(1) + i32(0) + i32(1) + array([i32(0)]) + i32(0)
             + array([i32(0)]))
    return [
        ("LeaderAndIsr v1", kwire.request(4, 1, corr, i32(1) + i32(1) + array([state + i8(1)])
                                          + array([i32(0) + string("h") + i32(9092)]))),
        ("StopReplica v0", kwire.request(5, 0, corr, i32(1) + i32(1) + i8(1)
                                         + array([string("t") + i32(0)]))),
        ("UpdateMetadata v4", kwire.request(6, 4, corr, i32(1) + i32(1)
                                            + array([state + array([])])
                                            + array([i32(0) + array([i32(9092) + string("h")
                                                                     + string("PLAINTEXT")
                                                                     + i16(0)])
                                                     + i16(-1)]))),
        ("ControlledShutdown v1", kwire.request(7, 1, corr, i32(0))),
    ]


def case_interbroker_apis_not_served(t):
    """The protocol crate decodes LeaderAndIsr, StopReplica, UpdateMetadata
    and ControlledShutdown, but the broker does not handle them: it does not
    advertise them, and closes a connection that sends one, as for an API it
    does not know, without touching the partition named."""
    sc = Scene(t)
    with kwire.connect(sc.b.port) as s:
        _, _, apis = kwire.parse_api_versions_v0(kwire.roundtrip(s, kwire.api_versions_v0(1)))
        s.sendall(kwire.create_topics_v0(2, "t", 1))
        eq(kwire.parse_create_topics_v0(kwire.recv_frame(s)), (2, {"t": 0}), "CreateTopics t")
    for key in (4, 5, 6, 7):
        check(key not in apis, "ApiVersions advertises inter-broker API %d: %r", key, apis.get(key))
    for what, frame in interbroker_requests(64):
        sc.expect_closed(frame + FOLLOWER, corr=64, what=what)
    corr, _, _, topics = kwire.parse_metadata_v1(
        kwire.roundtrip(sc.bystander, kwire.metadata_v1(200, ["t"])))
    eq((corr, topics), (200, {"t": (0, {0: (0, 0)})}), "Metadata of t after the requests")


def case_unknown_version(t):
    sc = Scene(t)
    for key in (kwire.METADATA, kwire.PRODUCE, kwire.FETCH, kwire.LIST_OFFSETS):
        for ver in (100, 0x7FFF, -1):
            sc.expect_closed(kwire.request(key, ver, 62, b"\x00" * 16) + FOLLOWER, corr=62,
                             what="api key %d version %d" % (key, ver))
    # ApiVersions itself: a v0 body with UNSUPPORTED_VERSION listing key 18,
    # and the connection stays usable (librdkafka retries on it).
    with kwire.connect(sc.b.port) as s:
        for ver in (100, 0x7FFF):
            resp = kwire.roundtrip(s, kwire.request(kwire.API_VERSIONS, ver, 63))
            corr, err, apis = kwire.parse_api_versions_v0(resp)
            eq((corr, err), (63, kwire.UNSUPPORTED_VERSION),
               "ApiVersions v%d correlation id, error" % ver)
            check(kwire.API_VERSIONS in apis, "ApiVersions v%d error response lacks key 18: %r",
                  ver, apis)
        corr, err, _ = kwire.parse_api_versions_v0(kwire.roundtrip(s, kwire.api_versions_v0(64)))
        eq((corr, err), (64, 0), "ApiVersions v0 after the v%d error" % ver)
    sc.served()


def case_truncated_bodies(t):
    sc = Scene(t)
    kwire.create_topic(sc.b.port, "hostile", 1)
    batch = kwire.record_batch([(b"k", b"v")])
    produce_body = (string(None) + i16(1) + i32(5000)
                    + array([string("hostile") + array([i32(0) + kwire.nbytes(batch)])]))
    fetch_body = (i32(-1) + i32(100) + i32(1) + i32(1 << 20) + i8(0)
                  + array([string("hostile") + array([i32(0) + i64(0) + i32(1 << 20)])]))
    cases = [
        ("Metadata v1, 3 topics claimed, 1 present",
         kwire.frame(header(3, 1, 71) + i32(3) + string("hostile")), 71),
        ("Metadata v1, topic name longer than the frame",
         kwire.frame(header(3, 1, 72) + i32(1) + i16(500) + b"abc"), 72),
        ("Produce v3 cut after acks",
         kwire.frame(header(0, 3, 73) + produce_body[:4]), 73),
        ("Produce v3 cut inside the record batch",
         kwire.frame(header(0, 3, 74) + produce_body[:-20]), 74),
        ("Produce v3 records length beyond the frame",
         kwire.frame(header(0, 3, 75) + produce_body[:-len(batch) - 4] + i32(100000) + batch), 75),
        ("Fetch v4 cut inside a partition",
         kwire.frame(header(1, 4, 76) + fetch_body[:-6]), 76),
        ("ListOffsets v1 without partitions",
         kwire.frame(header(2, 1, 77) + i32(-1) + i32(1) + string("hostile")), 77),
        ("client id longer than the frame",
         kwire.frame(i16(18) + i16(0) + i32(78) + i16(300) + b"abc"), 78),
    ]
    for what, data, corr in cases:
        sc.expect_closed(data + FOLLOWER, corr=corr, what=what)


def case_huge_array_counts(t):
    sc = Scene(t)
    kwire.create_topic(sc.b.port, "hostile", 1)
    big = i32(0x7FFFFFFF)
    cases = [
        ("Metadata v1 topics", kwire.frame(header(3, 1, 81) + big + string("hostile")), 81),
        ("Metadata v4 topics", kwire.frame(header(3, 4, 82) + big), 82),
        ("Produce v3 topics", kwire.frame(header(0, 3, 83) + string(None) + i16(1) + i32(1000)
                                          + big), 83),
        ("Produce v3 partitions", kwire.frame(header(0, 3, 84) + string(None) + i16(1)
                                              + i32(1000) + i32(1) + string("hostile") + big), 84),
        ("Fetch v4 topics", kwire.frame(header(1, 4, 85) + i32(-1) + i32(100) + i32(1)
                                        + i32(1 << 20) + i8(0) + big), 85),
        ("Fetch v4 partitions", kwire.frame(header(1, 4, 86) + i32(-1) + i32(100) + i32(1)
                                            + i32(1 << 20) + i8(0) + i32(1) + string("hostile")
                                            + big + i32(0) + i64(0) + i32(100)), 86),
        ("ListOffsets v1 topics", kwire.frame(header(2, 1, 87) + i32(-1) + big), 87),
        ("CreateTopics v0 topics", kwire.frame(header(19, 0, 88) + big), 88),
        ("Produce v3 record count", None, 89),
    ]
    # A batch whose RecordCount claims 2^31-1 records (CRC made right).
    raw = bytearray(kwire.record_batch([(b"k", b"v")]))
    struct.pack_into(">i", raw, 57, 0x7FFFFFFF)
    struct.pack_into(">I", raw, 17, kwire.crc32c(bytes(raw[21:])))
    for what, data, corr in cases:
        if data is None:
            # Either an error for the partition, or a close.
            s = kwire.connect(sc.b.port)
            s.sendall(kwire.produce_v3(corr, "hostile", 0, bytes(raw)))
            try:
                resp = kwire.recv_frame(s, 5.0)
                c, parts = kwire.parse_produce_v3(resp)
                eq(c, corr, what + ": correlation id")
                check(parts[("hostile", 0)][0] != 0, "%s: accepted", what)
            except kwire.Closed:
                pass
            s.close()
            sc.served()
            continue
        sc.expect_closed(data + FOLLOWER, corr=corr, what=what)
    sc.check_memory()
    eq(kwire.list_offset(sc.b.port, "hostile", 0, -1)[1], 0, "hostile-0 latest offset")


def case_bad_crc_produce(t):
    sc = Scene(t)
    kwire.create_topic(sc.b.port, "crc", 1)
    good = kwire.record_batch([(b"k%d" % i, b"value %d" % i) for i in range(5)])
    bad = bytearray(good)
    bad[-3] ^= 0x01           # a byte of the last record: CRC no longer matches
    bad_crc = bytearray(good)
    bad_crc[17] ^= 0xFF       # the CRC field itself
    with kwire.connect(sc.b.port) as s:
        for n, data in enumerate((bytes(bad), bytes(bad_crc))):
            corr, parts = kwire.parse_produce_v3(kwire.roundtrip(
                s, kwire.produce_v3(90 + n, "crc", 0, data)))
            eq(corr, 90 + n, "Produce correlation id")
            eq(parts[("crc", 0)][0], kwire.CORRUPT_MESSAGE, "error for a batch with a bad CRC")
        # Same connection: nothing was appended, and a good batch goes in at 0.
        corr, parts = kwire.parse_produce_v3(kwire.roundtrip(s, kwire.produce_v3(
            92, "crc", 0, good)))
        eq(parts[("crc", 0)], (0, 0), "good batch after the bad ones: error, base offset")
    recs, hw = kwire.read_partition(sc.b.port, "crc", 0)
    eq(hw, 5, "crc-0 high watermark")
    eq([r[2:4] for r in recs], [(b"k%d" % i, b"value %d" % i) for i in range(5)], "crc-0 records")
    sc.served()


def case_half_frame_held_open(t):
    sc = Scene(t)
    req = kwire.api_versions_v0(95)
    held = []
    for cut in (2, 7, len(req) - 1):
        s = kwire.connect(sc.b.port)
        s.sendall(req[:cut])
        held.append((s, cut))
    s = kwire.connect(sc.b.port)
    s.sendall(i32(200) + header(3, 1, 96) + b"\x00" * 10)   # 200 claimed, 20 sent
    held.append((s, None))
    time.sleep(1.0)
    sc.served()
    # The held connections still complete their request when the rest comes.
    for s, cut in held:
        if cut is not None:
            s.sendall(req[cut:])
            corr, err, _ = kwire.parse_api_versions_v0(kwire.recv_frame(s, 10.0))
            eq((corr, err), (95, 0), "ApiVersions completed after a pause at byte %d" % cut)
        s.close()
    sc.served()


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        check(hard == resource.RLIM_INFINITY or hard >= n,
              "the file descriptor limit (%d) is below %d", hard, n)
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


def case_500_idle_connections(t):
    raise_fd_limit(4096)
    sc = Scene(t)
    conns = [kwire.connect(sc.b.port) for _ in range(500)]
    time.sleep(0.5)
    sc.served()
    rng = random.Random(5)
    for i in rng.sample(range(500), 25):
        corr, err, _ = kwire.parse_api_versions_v0(
            kwire.roundtrip(conns[i], kwire.api_versions_v0(1000 + i)))
        eq((corr, err), (1000 + i, 0), "ApiVersions on idle connection %d" % i)
    for s in conns:
        s.close()
    sc.served()


def case_max_connections(t):
    raise_fd_limit(4096)
    limit = 10
    b = t.broker(overrides={"max.connections": str(limit)})
    conns = []
    for i in range(limit):
        s = kwire.connect(b.port)
        corr, err, _ = kwire.parse_api_versions_v0(kwire.roundtrip(s, kwire.api_versions_v0(i)))
        eq((corr, err), (i, 0), "ApiVersions on connection %d of %d" % (i + 1, limit))
        conns.append(s)
    extra = kwire.connect(b.port)
    try:
        extra.sendall(kwire.api_versions_v0(99))
    except (BrokenPipeError, ConnectionResetError):
        pass
    frames = kwire.wait_closed(extra, 3.0)
    eq(frames, [], "responses on connection %d with max.connections=%d" % (limit + 1, limit))
    extra.close()
    # Closing one makes room for one.
    conns.pop().close()
    deadline = time.monotonic() + 5
    while True:
        try:
            with kwire.connect(b.port) as s:
                corr, err, _ = kwire.parse_api_versions_v0(
                    kwire.roundtrip(s, kwire.api_versions_v0(7), timeout=2.0))
                eq((corr, err), (7, 0), "ApiVersions after a connection was freed")
                break
        except (kwire.Closed, socket.timeout, ConnectionError):
            check(time.monotonic() < deadline, "no connection accepted 5 s after one closed")
            time.sleep(0.1)
    for i, s in enumerate(conns):
        corr, err, _ = kwire.parse_api_versions_v0(
            kwire.roundtrip(s, kwire.api_versions_v0(200 + i)))
        eq((corr, err), (200 + i, 0), "ApiVersions on held connection %d" % i)
        s.close()
    b.check_alive()


def case_null_client_id(t):
    sc = Scene(t)
    with kwire.connect(sc.b.port) as s:
        for n, cid in enumerate((None, "", "x" * 5000)):
            resp = kwire.roundtrip(s, kwire.request(18, 0, 300 + n, client_id=cid))
            corr, err, _ = kwire.parse_api_versions_v0(resp)
            eq((corr, err), (300 + n, 0), "ApiVersions with client id %r" % (cid and cid[:5]))
    sc.served()


def case_random_frames(t):
    """Small random frames on many connections: whatever each gets, the
    broker stays up and serves the others."""
    sc = Scene(t)
    rng = random.Random(1234)
    keys = [0, 1, 2, 3, 18, 19, 20, 22, 32, 5000]
    socks = []
    for n in range(300):
        key = rng.choice(keys)
        ver = rng.randrange(-1, 13)
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
        # Fetch with a random MaxWaitMs could park a long time: keep the
        # connection only briefly either way.
        data = kwire.request(key, ver, n, body)
        if rng.random() < 0.2:
            data = data[:rng.randrange(1, len(data))]
        s = kwire.connect(sc.b.port)
        try:
            s.sendall(data)
        except OSError:
            pass
        socks.append(s)
        if len(socks) >= 50:
            for x in socks:
                x.close()
            socks = []
            sc.served()
    for x in socks:
        x.close()
    sc.served()
    sc.check_memory()


CASES = [case_frame_size_huge, case_frame_size_over_limit, case_frame_size_negative,
         case_frame_size_zero_and_tiny, case_unknown_api_key, case_interbroker_apis_not_served,
         case_unknown_version,
         case_truncated_bodies, case_huge_array_counts, case_bad_crc_produce,
         case_half_frame_held_open, case_500_idle_connections, case_max_connections,
         case_null_client_id, case_random_frames]

if __name__ == "__main__":
    sys.exit(main(CASES))
