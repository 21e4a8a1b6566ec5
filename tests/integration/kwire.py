"""Kafka wire bytes written and read by hand, for tests that talk to the broker
over raw sockets (hostile input, pipelining) and for reading segment files.

Only what the tests need: request headers v1, the request bodies of
ApiVersions v0, Metadata v1/v4, Produce v0-v3, Fetch v0-v4, ListOffsets v1 and
FindCoordinator v0 (wait_coordinator), their responses, RecordBatch v2 (build uncompressed batches, walk the headers of any
batch), MessageSet v0/v1 (build messages and compressed wrappers of every
legacy codec, Kafka's magic-0 lz4 framing included; walk and decompress them)
and the Kafka log layout on disk.

Runs on Debian's /usr/bin/python3. CRC-32C: python3-crcmod's C extension
when it is installed, else kafka-python's pure-Python one (slow on big
reads).
"""

import os
import socket
import struct
import time

from kafka.record import _crc32c

try:
    import crcmod.predefined
    crc32c = crcmod.predefined.mkCrcFun("crc-32c")
except ImportError:
    crc32c = _crc32c.crc

# API keys
PRODUCE = 0
FETCH = 1
LIST_OFFSETS = 2
METADATA = 3
API_VERSIONS = 18
FIND_COORDINATOR = 10
CREATE_TOPICS = 19
INIT_PRODUCER_ID = 22
WRITE_TXN_MARKERS = 27

# Error codes
NONE = 0
CORRUPT_MESSAGE = 2
UNKNOWN_TOPIC_OR_PARTITION = 3
COORDINATOR_NOT_AVAILABLE = 15
UNSUPPORTED_VERSION = 35

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


# ---------------------------------------------------------------------------
# Encoding


def i8(v):
    return struct.pack(">b", v)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def u32(v):
    return struct.pack(">I", v)


def i64(v):
    return struct.pack(">q", v)


def string(s):
    """STRING / NULLABLE_STRING (None = null)."""
    if s is None:
        return i16(-1)
    b = s.encode() if isinstance(s, str) else s
    return i16(len(b)) + b


def nbytes(b):
    """BYTES / NULLABLE_BYTES (None = null)."""
    if b is None:
        return i32(-1)
    return i32(len(b)) + b


def array(items, enc=lambda x: x):
    """ARRAY of already-encoded items (None = null)."""
    if items is None:
        return i32(-1)
    return i32(len(items)) + b"".join(enc(x) for x in items)


def uvarint(v):
    """An unsigned varint (flexible versions' lengths and tag counts)."""
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_uvarint(r):
    """An unsigned varint from a Reader."""
    shift = 0
    v = 0
    while True:
        b = r.i8() & 0xFF
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v


def zigzag_varint(v):
    """A signed varint (zigzag, protobuf style), as records use."""
    z = (v << 1) ^ (v >> 63)
    z &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def header(api_key, version, corr, client_id="samsa-it"):
    """Request header v1."""
    return i16(api_key) + i16(version) + i32(corr) + string(client_id)


def frame(payload):
    return i32(len(payload)) + payload


def request(api_key, version, corr, body=b"", client_id="samsa-it"):
    """A whole framed request."""
    return frame(header(api_key, version, corr, client_id) + body)


def api_versions_v0(corr):
    return request(API_VERSIONS, 0, corr)


def metadata_v1(corr, topics=None):
    """topics None = all topics."""
    return request(METADATA, 1, corr,
                   array(None if topics is None else [string(t) for t in topics]))


def metadata_v4(corr, topics=None, allow_auto_create=True):
    return request(METADATA, 4, corr,
                   array(None if topics is None else [string(t) for t in topics])
                   + i8(1 if allow_auto_create else 0))


def produce_v3(corr, topic, partition, records, acks=1, timeout_ms=10000,
               transactional_id=None):
    body = (string(transactional_id) + i16(acks) + i32(timeout_ms)
            + array([string(topic) + array([i32(partition) + nbytes(records)])]))
    return request(PRODUCE, 3, corr, body)


def fetch_v4(corr, topic, partition, offset, max_wait_ms=0, min_bytes=1,
             max_bytes=1 << 20, partition_max_bytes=1 << 20):
    body = (i32(-1) + i32(max_wait_ms) + i32(min_bytes) + i32(max_bytes) + i8(0)
            + array([string(topic) + array([i32(partition) + i64(offset)
                                            + i32(partition_max_bytes)])]))
    return request(FETCH, 4, corr, body)


def fetch_v4_many(corr, wanted, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                  partition_max_bytes=1 << 20):
    """One Fetch v4 for wanted = [(topic, partition, offset)], in that order
    (a topic's partitions are grouped under its first appearance)."""
    topics = {}
    for t, p, off in wanted:
        topics.setdefault(t, []).append(i32(p) + i64(off) + i32(partition_max_bytes))
    body = (i32(-1) + i32(max_wait_ms) + i32(min_bytes) + i32(max_bytes) + i8(0)
            + array([string(t) + array(parts) for t, parts in topics.items()]))
    return request(FETCH, 4, corr, body)


def list_offsets_v1(corr, topic, partition, timestamp):
    """timestamp -1 = latest, -2 = earliest."""
    body = i32(-1) + array([string(topic) + array([i32(partition) + i64(timestamp)])])
    return request(LIST_OFFSETS, 1, corr, body)


def create_topics_v0(corr, topic, partitions, replication=1, timeout_ms=10000):
    return create_topics_v0_batch(corr, [(topic, partitions)], replication, timeout_ms)


def create_topics_v0_batch(corr, topics, replication=1, timeout_ms=10000):
    """One CreateTopics v0 for [(topic, partitions)]."""
    body = (array([string(t) + i32(n) + i16(replication) + array([]) + array([])
                   for t, n in topics])
            + i32(timeout_ms))
    return request(CREATE_TOPICS, 0, corr, body)


def write_txn_markers_v0(corr, markers):
    """markers: [(producer_id, epoch, commit, {topic: [partitions]}, coordinator_epoch)]"""
    body = array([i64(pid) + i16(epoch) + i8(1 if commit else 0)
                  + array([string(t) + array([i32(p) for p in parts])
                           for t, parts in topics.items()])
                  + i32(coord_epoch)
                  for pid, epoch, commit, topics, coord_epoch in markers])
    return request(WRITE_TXN_MARKERS, 0, corr, body)


def parse_write_txn_markers_v0(payload):
    """-> (corr, {(producer_id, topic, partition): error})"""
    r = Reader(payload)
    corr = r.i32()
    out = {}
    for _ in range(r.i32()):
        pid = r.i64()
        for _ in range(r.i32()):
            topic = r.string()
            for _ in range(r.i32()):
                part = r.i32()
                out[(pid, topic, part)] = r.i16()
    return corr, out


def init_producer_id_v0(corr, transactional_id=None, timeout_ms=-1):
    return request(INIT_PRODUCER_ID, 0, corr, string(transactional_id) + i32(timeout_ms))


# ---------------------------------------------------------------------------
# RecordBatch v2


BATCH_OVERHEAD = 61


def record_batch(records, base_timestamp=None, producer_id=-1, producer_epoch=-1,
                 base_sequence=-1, attributes=0):
    """An uncompressed RecordBatch v2 with BaseOffset 0.

    records: list of (key, value) or (key, value, timestamp_ms); key/value
    bytes or None.
    """
    if base_timestamp is None:
        base_timestamp = int(time.time() * 1000)
    body = bytearray()
    max_ts = base_timestamp
    for delta, rec in enumerate(records):
        key, value = rec[0], rec[1]
        ts = rec[2] if len(rec) > 2 else base_timestamp
        max_ts = max(max_ts, ts)
        r = bytearray()
        r += i8(0)
        r += zigzag_varint(ts - base_timestamp)
        r += zigzag_varint(delta)
        if key is None:
            r += zigzag_varint(-1)
        else:
            r += zigzag_varint(len(key)) + key
        if value is None:
            r += zigzag_varint(-1)
        else:
            r += zigzag_varint(len(value)) + value
        r += zigzag_varint(0)
        body += zigzag_varint(len(r)) + r
    after_crc = (i16(attributes) + i32(len(records) - 1) + i64(base_timestamp) + i64(max_ts)
                 + i64(producer_id) + i16(producer_epoch) + i32(base_sequence)
                 + i32(len(records)) + bytes(body))
    crc = crc32c(after_crc)
    rest = i32(0) + i8(2) + u32(crc) + after_crc   # PartitionLeaderEpoch, Magic, CRC
    return i64(0) + i32(len(rest)) + rest


class Batch:
    """The header of one RecordBatch v2, and where it lies in its buffer."""

    __slots__ = ("position", "size", "base_offset", "length", "leader_epoch", "magic",
                 "crc", "attributes", "last_offset_delta", "base_timestamp",
                 "max_timestamp", "producer_id", "producer_epoch", "base_sequence",
                 "record_count", "raw")

    @property
    def codec(self):
        return self.attributes & 7

    @property
    def last_offset(self):
        return self.base_offset + self.last_offset_delta

    def crc_ok(self):
        return crc32c(bytes(self.raw[21:])) == self.crc

    def records(self):
        """Decodes the records of an uncompressed batch:
        list of (offset, timestamp, key, value)."""
        if self.codec != 0:
            raise ValueError("compressed batch")
        out = []
        pos = BATCH_OVERHEAD
        raw = self.raw
        for _ in range(self.record_count):
            length, pos = read_zigzag(raw, pos)
            end = pos + length
            pos += 1  # attributes
            ts_delta, pos = read_zigzag(raw, pos)
            off_delta, pos = read_zigzag(raw, pos)
            klen, pos = read_zigzag(raw, pos)
            key = None
            if klen >= 0:
                key = bytes(raw[pos:pos + klen])
                pos += klen
            vlen, pos = read_zigzag(raw, pos)
            value = None
            if vlen >= 0:
                value = bytes(raw[pos:pos + vlen])
                pos += vlen
            out.append((self.base_offset + off_delta, self.base_timestamp + ts_delta,
                        key, value))
            pos = end
        return out


def read_zigzag(buf, pos):
    shift = 0
    z = 0
    while True:
        b = buf[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return (z >> 1) ^ -(z & 1), pos


def parse_batches(buf):
    """Walks the RecordBatch v2 headers in buf. Returns (batches, tail): tail
    is the number of bytes after the last whole batch."""
    out = []
    pos = 0
    n = len(buf)
    while n - pos >= BATCH_OVERHEAD:
        base, length = struct.unpack_from(">qi", buf, pos)
        if length < BATCH_OVERHEAD - 12 or n - pos - 12 < length:
            break
        b = Batch()
        b.position = pos
        b.size = 12 + length
        b.base_offset = base
        b.length = length
        (b.leader_epoch, b.magic, b.crc, b.attributes, b.last_offset_delta,
         b.base_timestamp, b.max_timestamp, b.producer_id, b.producer_epoch,
         b.base_sequence, b.record_count) = struct.unpack_from(">ibIhiqqqhii", buf, pos + 12)
        b.raw = memoryview(buf)[pos:pos + b.size]
        out.append(b)
        pos += b.size
    return out, n - pos


def partition_dir(log_dir, topic, partition):
    return os.path.join(log_dir, "%s-%d" % (topic, partition))


def segment_files(log_dir, topic, partition):
    """The .log files of a partition, oldest first."""
    d = partition_dir(log_dir, topic, partition)
    names = sorted(f for f in os.listdir(d) if f.endswith(".log"))
    return [os.path.join(d, f) for f in names]


def disk_batches(log_dir, topic, partition):
    """Every batch of every segment of a partition, in order. Raises when a
    segment holds bytes that are not whole batches."""
    out = []
    for path in segment_files(log_dir, topic, partition):
        with open(path, "rb") as f:
            data = f.read()
        batches, tail = parse_batches(data)
        if tail:
            raise AssertionError("%s: %d bytes after the last whole batch" % (path, tail))
        out.extend(batches)
    return out


def check_codec(batches, codec, what, min_records=50):
    """The broker stores producers' batches verbatim, so the batches on disk
    carry the producer's codec. Clients send a batch plain when compressing
    would not shrink it (librdkafka, kafka-python), which happens to small
    batches: every batch of min_records records or more must carry the
    codec, and so must at least one batch."""
    want = CODECS[codec]
    if not batches:
        raise AssertionError("%s: no batches" % what)
    for x in batches:
        if x.codec != want and (want == 0 or x.record_count >= min_records):
            raise AssertionError("%s: the %d-record batch at offset %d has codec %d, expected %d"
                                 % (what, x.record_count, x.base_offset, x.codec, want))
    if not any(x.codec == want for x in batches):
        raise AssertionError("%s: no batch has codec %d (%s)" % (what, want, codec))


# ---------------------------------------------------------------------------
# Reading


class Reader:
    def __init__(self, buf, pos=0):
        self.buf = buf
        self.pos = pos

    def _take(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def i8(self):
        return self._take(">b")

    def i16(self):
        return self._take(">h")

    def i32(self):
        return self._take(">i")

    def i64(self):
        return self._take(">q")

    def string(self):
        n = self.i16()
        if n < 0:
            return None
        s = bytes(self.buf[self.pos:self.pos + n]).decode()
        self.pos += n
        return s

    def bytes_(self):
        n = self.i32()
        if n < 0:
            return None
        b = bytes(self.buf[self.pos:self.pos + n])
        if len(b) != n:
            raise ValueError("truncated bytes")
        self.pos += n
        return b

    def array(self, fn):
        n = self.i32()
        if n < 0:
            return None
        return [fn(self) for _ in range(n)]

    def remaining(self):
        return len(self.buf) - self.pos


def parse_api_versions_v0(payload):
    """-> (corr, error, {key: (min, max)})"""
    r = Reader(payload)
    corr = r.i32()
    err = r.i16()
    apis = r.array(lambda r: (r.i16(), r.i16(), r.i16()))
    return corr, err, {k: (lo, hi) for k, lo, hi in (apis or [])}


def parse_metadata_v1(payload):
    """-> (corr, brokers [(id, host, port)], controller, {topic: (err, {p: (err, leader)})})"""
    r = Reader(payload)
    corr = r.i32()
    brokers = r.array(lambda r: (r.i32(), r.string(), r.i32(), r.string())[:3])
    controller = r.i32()

    def partition(r):
        err = r.i16()
        p = r.i32()
        leader = r.i32()
        r.array(lambda r: r.i32())
        r.array(lambda r: r.i32())
        return p, (err, leader)

    def topic(r):
        err = r.i16()
        name = r.string()
        r.i8()
        return name, (err, dict(r.array(partition)))

    topics = dict(r.array(topic))
    return corr, brokers, controller, topics


def parse_produce_v3(payload):
    """-> (corr, {(topic, p): (err, base_offset)})"""
    r = Reader(payload)
    corr = r.i32()
    out = {}
    for name, parts in r.array(lambda r: (r.string(), r.array(
            lambda r: (r.i32(), r.i16(), r.i64(), r.i64())))):
        for p, err, base, _ in parts:
            out[(name, p)] = (err, base)
    r.i32()
    return corr, out


def parse_fetch_v4(payload):
    """-> (corr, {(topic, p): (err, high_watermark, records bytes)})"""
    r = Reader(payload)
    corr = r.i32()
    r.i32()  # throttle
    out = {}

    def partition(r):
        p = r.i32()
        err = r.i16()
        hw = r.i64()
        r.i64()  # last stable offset
        r.array(lambda r: (r.i64(), r.i64()))
        records = r.bytes_()
        return p, err, hw, records

    for name, parts in r.array(lambda r: (r.string(), r.array(partition))):
        for p, err, hw, records in parts:
            out[(name, p)] = (err, hw, records)
    return corr, out


def parse_list_offsets_v1(payload):
    """-> (corr, {(topic, p): (err, timestamp, offset)})"""
    r = Reader(payload)
    corr = r.i32()
    out = {}
    for name, parts in r.array(lambda r: (r.string(), r.array(
            lambda r: (r.i32(), r.i16(), r.i64(), r.i64())))):
        for p, err, ts, off in parts:
            out[(name, p)] = (err, ts, off)
    return corr, out


def parse_create_topics_v0(payload):
    """-> (corr, {topic: err})"""
    r = Reader(payload)
    corr = r.i32()
    return corr, dict(r.array(lambda r: (r.string(), r.i16())))


def parse_init_producer_id_v0(payload):
    """-> (corr, error, producer_id, producer_epoch)"""
    r = Reader(payload)
    corr = r.i32()
    r.i32()  # throttle
    return corr, r.i16(), r.i64(), r.i16()


def correlation_id(payload):
    return struct.unpack_from(">i", payload, 0)[0]


# ---------------------------------------------------------------------------
# Sockets


class Closed(Exception):
    """The peer closed the connection."""


def connect(port, host="127.0.0.1", timeout=10.0):
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exact(sock, n, timeout):
    """n bytes, or Closed when the peer closes first (a reset counts as a
    close); socket.timeout when they do not come in time."""
    deadline = time.monotonic() + timeout
    buf = bytearray()
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out after %d of %d bytes" % (len(buf), n))
        sock.settimeout(left)
        try:
            chunk = sock.recv(n - len(buf))
        except (ConnectionResetError, BrokenPipeError):
            raise Closed("connection reset after %d of %d bytes" % (len(buf), n))
        if not chunk:
            raise Closed("connection closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return bytes(buf)


def recv_frame(sock, timeout=10.0):
    """One response payload (without the size)."""
    size = struct.unpack(">i", recv_exact(sock, 4, timeout))[0]
    if size < 4 or size > 256 * 1024 * 1024:
        raise AssertionError("response frame size %d is out of range" % size)
    return recv_exact(sock, size, timeout)


def roundtrip(sock, req, timeout=10.0):
    sock.sendall(req)
    return recv_frame(sock, timeout)


def wait_closed(sock, timeout=5.0):
    """Reads until the peer closes the connection. Returns the complete
    response frames that came before the close. Raises AssertionError when
    the connection is still open after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    frames = []
    buf = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("the broker kept the connection open for %.1f s" % timeout)
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            chunk = b""
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 4:
            size = struct.unpack_from(">i", buf, 0)[0]
            if size < 0 or len(buf) - 4 < size:
                break
            frames.append(bytes(buf[4:4 + size]))
            del buf[:4 + size]
    return frames


# ---------------------------------------------------------------------------
# Reading a whole partition back with raw Fetch v4 requests


def read_partition(port, topic, partition, start=0, timeout=30.0):
    """Every record of a partition from `start` up to its high watermark, by
    Fetch v4 on a connection of its own; compressed batches are decoded by
    kafka-python's record code. Returns (records, high_watermark) with
    records a list of (offset, timestamp, key, value, headers), headers a
    list of (str, bytes). Raises when the broker
    answers with an error, sends a batch with a bad CRC, or stops making
    progress."""
    from kafka.record.memory_records import MemoryRecords

    out = []
    offset = start
    deadline = time.monotonic() + timeout
    corr = 1000
    with connect(port) as s:
        while True:
            if time.monotonic() > deadline:
                raise AssertionError("%s-%d: reading stopped at offset %d"
                                     % (topic, partition, offset))
            corr += 1
            resp = roundtrip(s, fetch_v4(corr, topic, partition, offset, max_wait_ms=0,
                                         max_bytes=4 << 20, partition_max_bytes=4 << 20))
            got_corr, parts = parse_fetch_v4(resp)
            if got_corr != corr:
                raise AssertionError("Fetch correlation id %d, sent %d" % (got_corr, corr))
            err, hw, records = parts[(topic, partition)]
            if err != NONE:
                raise AssertionError("Fetch %s-%d at %d: error %d" % (topic, partition, offset, err))
            if records is None:
                raise AssertionError("Fetch %s-%d: records is null" % (topic, partition))
            if offset >= hw:
                return out, hw
            batches, _ = parse_batches(records)
            for x in batches:
                if x.magic != 2 or not x.crc_ok():
                    raise AssertionError("Fetch %s-%d: batch at offset %d has magic %d or a "
                                         "bad CRC" % (topic, partition, x.base_offset, x.magic))
            mr = MemoryRecords(records)
            progressed = False
            while mr.has_next():
                batch = mr.next_batch()
                if batch is None:
                    break
                for rec in batch:
                    if rec.offset < offset:
                        continue
                    if rec.offset >= hw:
                        break
                    out.append((rec.offset, rec.timestamp, rec.key, rec.value, list(rec.headers)))
                    offset = rec.offset + 1
                    progressed = True
            if not progressed:
                raise AssertionError("Fetch %s-%d at %d (high watermark %d) returned no "
                                     "record at or after the offset" % (topic, partition, offset, hw))


def list_offset(port, topic, partition, timestamp):
    """ListOffsets v1 on a connection of its own -> (timestamp, offset)."""
    with connect(port) as s:
        corr, parts = parse_list_offsets_v1(roundtrip(s, list_offsets_v1(7, topic, partition,
                                                                          timestamp)))
    err, ts, off = parts[(topic, partition)]
    if err != NONE:
        raise AssertionError("ListOffsets %s-%d ts %d: error %d" % (topic, partition, timestamp, err))
    return ts, off


def produce(port, topic, partition, records, acks=1, sock=None, expect_error=NONE,
            transactional_id=None, **batch_args):
    """One Produce v3 of one uncompressed batch -> base offset. Raises
    unless the partition's error code is expect_error."""
    req = produce_v3(55, topic, partition, record_batch(records, **batch_args), acks=acks,
                     transactional_id=transactional_id)
    if sock is None:
        with connect(port) as s:
            resp = roundtrip(s, req)
    else:
        resp = roundtrip(sock, req)
    corr, parts = parse_produce_v3(resp)
    err, base = parts[(topic, partition)]
    if err != expect_error:
        raise AssertionError("Produce %s-%d: error %d, expected %d"
                             % (topic, partition, err, expect_error))
    return base


def init_producer_id(port):
    """InitProducerId v0 for an idempotent producer -> (producer_id, epoch)."""
    with connect(port) as s:
        corr, err, pid, epoch = parse_init_producer_id_v0(roundtrip(s, init_producer_id_v0(9)))
    if err != NONE:
        raise AssertionError("InitProducerId: error %d" % err)
    if pid < 0 or epoch < 0:
        raise AssertionError("InitProducerId: producer id %d, epoch %d" % (pid, epoch))
    return pid, epoch


def create_topic(port, topic, partitions, timeout=15.0):
    """Creates a topic by CreateTopics v0 and waits until Metadata shows a
    leader for each of its partitions."""
    with connect(port) as s:
        _, errs = parse_create_topics_v0(roundtrip(s, create_topics_v0(3, topic, partitions)))
    if errs.get(topic) != NONE:
        raise AssertionError("CreateTopics %s: error %r" % (topic, errs.get(topic)))
    return wait_topic(port, topic, partitions, timeout)


def wait_coordinator(port, group="any", timeout=30.0):
    """FindCoordinator v0 until it names a coordinator: the first one makes
    __consumer_offsets, and the answer is COORDINATOR_NOT_AVAILABLE until
    that topic exists (as Kafka answers). Returns how many answers were
    COORDINATOR_NOT_AVAILABLE."""
    deadline = time.monotonic() + timeout
    waited = 0
    with connect(port) as s:
        corr = 0
        while True:
            corr += 1
            r = Reader(roundtrip(s, request(FIND_COORDINATOR, 0, corr, string(group))))
            r.i32()
            err = r.i16()
            if err == NONE:
                return waited
            if err != COORDINATOR_NOT_AVAILABLE:
                raise AssertionError("FindCoordinator: error %d" % err)
            if time.monotonic() > deadline:
                raise AssertionError("no coordinator within %.0f s" % timeout)
            waited += 1
            time.sleep(0.05)


def wait_topic(port, topic, partitions=None, timeout=15.0):
    """Asks Metadata v1 for the topic (which creates it when the broker runs
    with auto.create.topics.enable=true) until every partition has a leader.
    Returns the partition count."""
    deadline = time.monotonic() + timeout
    last = None
    with connect(port) as s:
        corr = 0
        while time.monotonic() < deadline:
            corr += 1
            _, _, _, topics = parse_metadata_v1(roundtrip(s, metadata_v1(corr, [topic])))
            err, parts = topics.get(topic, (None, {}))
            last = (err, parts)
            if err == NONE and parts and all(e == NONE and leader >= 0
                                             for e, leader in parts.values()):
                if partitions is not None and len(parts) != partitions:
                    raise AssertionError("topic %s has %d partitions, expected %d"
                                         % (topic, len(parts), partitions))
                return len(parts)
            time.sleep(0.1)
    raise AssertionError("topic %s not ready: last metadata %r" % (topic, last))


# ---------------------------------------------------------------------------
# MessageSet v0/v1 (magic 0 and 1), Produce v0-v2 and Fetch v0-v3

LOG_APPEND_TIME_ATTR = 0x08


def _xxh32(data, seed=0):
    """XXH32 (the LZ4 frame's header checksum), for Kafka's magic-0 framing."""
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    m = 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & m

    n = len(data)
    pos = 0
    if n >= 16:
        v = [(seed + p1 + p2) & m, (seed + p2) & m, seed, (seed - p1) & m]
        while n - pos >= 16:
            for i in range(4):
                w = struct.unpack_from("<I", data, pos + 4 * i)[0]
                v[i] = (rotl((v[i] + w * p2) & m, 13) * p1) & m
            pos += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
    else:
        h = (seed + p5) & m
    h = (h + n) & m
    while n - pos >= 4:
        w = struct.unpack_from("<I", data, pos)[0]
        h = (rotl((h + w * p3) & m, 17) * p4) & m
        pos += 4
    while pos < n:
        h = (rotl((h + data[pos] * p5) & m, 11) * p1) & m
        pos += 1
    h ^= h >> 15
    h = (h * p2) & m
    h ^= h >> 13
    h = (h * p3) & m
    h ^= h >> 16
    return h


def legacy_compress(codec, data, magic):
    """A wrapper's value as Kafka's producers write it: gzip, xerial-framed
    snappy, an LZ4 frame (magic 0: Kafka's broken header checksum,
    KAFKA-3160)."""
    if codec == CODECS["gzip"]:
        import gzip
        return gzip.compress(data)
    if codec == CODECS["snappy"]:
        import snappy
        chunk = snappy.compress(data)
        return b"\x82SNAPPY\x00" + i32(1) + i32(1) + i32(len(chunk)) + chunk
    if codec == CODECS["lz4"]:
        import lz4.frame
        f = bytearray(lz4.frame.compress(data, content_checksum=False,
                                         store_size=False))
        if magic == 0:
            hc = 6 + (8 if f[4] & 0x08 else 0) + (4 if f[4] & 0x01 else 0)
            f[hc] = (_xxh32(bytes(f[0:hc])) >> 8) & 0xFF
        return bytes(f)
    raise ValueError("codec %r" % codec)


def legacy_decompress(codec, data, magic):
    if codec == CODECS["gzip"]:
        import gzip
        return gzip.decompress(data)
    if codec == CODECS["snappy"]:
        from kafka.codec import snappy_decode
        return snappy_decode(data)
    if codec == CODECS["lz4"]:
        import lz4.frame
        f = bytearray(data)
        hc = 6 + (8 if f[4] & 0x08 else 0) + (4 if f[4] & 0x01 else 0)
        want_broken = (_xxh32(bytes(f[0:hc])) >> 8) & 0xFF
        if magic == 0:
            if f[hc] != want_broken:
                raise AssertionError("magic-0 LZ4 frame without Kafka's header checksum")
            f[hc] = (_xxh32(bytes(f[4:hc])) >> 8) & 0xFF
        return lz4.frame.decompress(bytes(f))
    raise ValueError("codec %r" % codec)


def legacy_message(magic, key, value, offset=0, timestamp=-1, attributes=0, crc=None):
    """One message of magic 0 or 1; crc overrides the computed CRC-32."""
    import zlib
    body = i8(magic) + i8(attributes)
    if magic == 1:
        body += i64(timestamp)
    body += nbytes(key) + nbytes(value)
    c = zlib.crc32(body) if crc is None else crc
    msg = u32(c) + body
    return i64(offset) + i32(len(msg)) + msg


def legacy_wrapper(magic, codec, inner, offset=0, timestamp=-1, attributes=0):
    """A compressed message holding the message set `inner`."""
    return legacy_message(magic, None, legacy_compress(codec, inner, magic), offset,
                          timestamp, attributes | codec)


def parse_message_set(buf, check_crc=True):
    """Walks a magic 0/1 message set, wrappers decompressed, into a list of
    (offset, magic, attributes, timestamp, key, value): magic-1 inner offsets
    made absolute, as consumers do. A trailing partial message is dropped
    (Fetch may end with one). Raises AssertionError on a bad CRC or a magic
    other than 0 and 1."""
    import zlib
    out = []
    pos = 0
    while len(buf) - pos >= 12:
        offset, size = struct.unpack_from(">qi", buf, pos)
        if len(buf) - pos - 12 < size:
            break
        msg = buf[pos + 12:pos + 12 + size]
        pos += 12 + size
        crc = struct.unpack_from(">I", msg, 0)[0]
        if check_crc and zlib.crc32(msg[4:]) != crc:
            raise AssertionError("message at offset %d: bad CRC" % offset)
        r = Reader(msg, 4)
        magic = r.i8()
        attrs = r.i8()
        if magic not in (0, 1):
            raise AssertionError("message at offset %d has magic %d" % (offset, magic))
        ts = r.i64() if magic == 1 else None
        key = r.bytes_()
        value = r.bytes_()
        codec = attrs & 7
        if codec == 0:
            out.append((offset, magic, attrs, ts, key, value))
            continue
        inner = parse_message_set(legacy_decompress(codec, value, magic), check_crc)
        if magic == 1:
            # relative inner offsets; the wrapper's is the last one's
            last = inner[-1][0]
            inner = [(offset - last + x[0],) + x[1:] for x in inner]
        out.append(("wrapper", offset, magic, attrs, ts, inner))
    return out


def flatten_message_set(entries):
    """parse_message_set's entries with the wrappers replaced by their
    inner messages."""
    out = []
    for e in entries:
        if e[0] == "wrapper":
            out.extend(e[5])
        else:
            out.append(e)
    return out


def produce_v(version, corr, topic, partition, records, acks=1, timeout_ms=10000):
    """Produce v0-v2 (no transactional id)."""
    body = (i16(acks) + i32(timeout_ms)
            + array([string(topic) + array([i32(partition) + nbytes(records)])]))
    return request(PRODUCE, version, corr, body)


def parse_produce_v(version, payload):
    """-> (corr, {(topic, p): (err, base_offset, log_append_time or None)})"""
    r = Reader(payload)
    corr = r.i32()
    out = {}

    def partition(r):
        p, err, base = r.i32(), r.i16(), r.i64()
        lat = r.i64() if version >= 2 else None
        return p, err, base, lat

    for name, parts in r.array(lambda r: (r.string(), r.array(partition))):
        for p, err, base, lat in parts:
            out[(name, p)] = (err, base, lat)
    return corr, out


def fetch_v(version, corr, topic, partition, offset, max_wait_ms=0, min_bytes=1,
            max_bytes=1 << 20, partition_max_bytes=1 << 20):
    """Fetch v0-v4 of one partition (MaxBytes from v3, isolation from v4)."""
    body = i32(-1) + i32(max_wait_ms) + i32(min_bytes)
    if version >= 3:
        body += i32(max_bytes)
    if version >= 4:
        body += i8(0)
    body += array([string(topic) + array([i32(partition) + i64(offset)
                                          + i32(partition_max_bytes)])])
    return request(FETCH, version, corr, body)


def parse_fetch_v(version, payload):
    """Fetch v0-v3 -> (corr, {(topic, p): (err, high_watermark, records)})"""
    r = Reader(payload)
    corr = r.i32()
    if version >= 1:
        r.i32()  # throttle
    out = {}
    for name, parts in r.array(lambda r: (r.string(), r.array(
            lambda r: (r.i32(), r.i16(), r.i64(), r.bytes_())))):
        for p, err, hw, records in parts:
            out[(name, p)] = (err, hw, records)
    return corr, out
