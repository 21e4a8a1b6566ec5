#!/usr/bin/env python3
"""samsa-dump prints what transactions leave on disk, as Kafka 2.0 writes it.

    check_dump_txn.py SAMSA_DUMP

The bytes are built here with struct.pack from Kafka 2.0.0's layouts, a
route that owes nothing to the protocol crate's encoder:

- RecordBatch v2 (DefaultRecordBatch.java, DefaultRecord.java, CRC-32C
  over attributes..end computed here), a transactional data batch, then a
  COMMIT and an ABORT control batch (EndTransactionMarker.java: key
  version 0 + type, ABORT 0 / COMMIT 1; value version 0 + coordinator
  epoch): samsa-dump prints each marker with its coordinator epoch.
- A `.txnindex` (TransactionIndex.scala, AbortedTxn: version int16 0,
  producer id, first offset, last offset, last stable offset; 34 bytes):
  printed entry by entry; a partial entry or an unknown version is an
  error (exit status 1).
- A segment of `__transaction_state-7` (TransactionLog.scala, key and value
  version 0): an Ongoing transaction on two topics, an Empty one (null
  partitions), a tombstone, each decoded; the same bytes outside such a
  directory are not decoded unless --transaction-state asks.
"""

import os
import struct
import subprocess
import sys
import tempfile


# ------------------------------------------------------------ CRC-32C


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# ------------------------------------------------------------ record batches


def varint(v):
    z = (v << 1) ^ (v >> 63)
    out = b""
    while True:
        if z < 0x80:
            return out + bytes([z])
        out += bytes([(z & 0x7F) | 0x80])
        z >>= 7


def vbytes(b):
    return varint(-1) if b is None else varint(len(b)) + b


def record(offset_delta, key, value, ts_delta=0):
    body = (b"\x00" + varint(ts_delta) + varint(offset_delta) + vbytes(key) + vbytes(value)
            + varint(0))
    return varint(len(body)) + body


TRANSACTIONAL = 0x10
CONTROL = 0x20


def batch(base_offset, records, attributes=0, producer_id=-1, producer_epoch=-1,
          base_sequence=-1, timestamp=1700000000000, leader_epoch=0):
    recs = b"".join(record(i, k, v) for i, (k, v) in enumerate(records))
    after_crc = (struct.pack(">hiqqqhii", attributes, len(records) - 1, timestamp, timestamp,
                             producer_id, producer_epoch, base_sequence, len(records)) + recs)
    tail = struct.pack(">ib", leader_epoch, 2) + struct.pack(">I", crc32c(after_crc)) + after_crc
    return struct.pack(">qi", base_offset, len(tail)) + tail


def marker(base_offset, commit, coordinator_epoch, producer_id, producer_epoch):
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, coordinator_epoch)
    return batch(base_offset, [(key, value)], TRANSACTIONAL | CONTROL, producer_id,
                 producer_epoch)


# ------------------------------------------------------------ TransactionLog


def string(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def txn_key(txn_id):
    return struct.pack(">h", 0) + string(txn_id)


def txn_value(pid, epoch, timeout, status, partitions, entry_ts, start_ts):
    v = struct.pack(">hqhib", 0, pid, epoch, timeout, status)
    if partitions is None:
        v += struct.pack(">i", -1)
    else:
        v += struct.pack(">i", len(partitions))
        for topic, ids in partitions:
            v += string(topic) + struct.pack(">i", len(ids))
            v += b"".join(struct.pack(">i", i) for i in ids)
    return v + struct.pack(">qq", entry_ts, start_ts)


def aborted_txn(pid, first, last, lso, version=0):
    return struct.pack(">hqqqq", version, pid, first, last, lso)


# ------------------------------------------------------------ checks


def fail(fmt, *args):
    print("FAIL: " + (fmt % args if args else fmt), file=sys.stderr)
    sys.exit(1)


def dump(exe, *args, want_rc=0):
    r = subprocess.run([exe] + list(args), capture_output=True, timeout=30)
    out = r.stdout.decode()
    if r.returncode != want_rc:
        fail("samsa-dump %s: exit %d, want %d\n%s%s", " ".join(args), r.returncode, want_rc,
             out, r.stderr.decode())
    return out


def expect_lines(out, lines, what):
    got = [ln.strip() for ln in out.splitlines()]
    for ln in lines:
        if ln not in got:
            fail("%s: no line %r in:\n%s", what, ln, out)
    print("ok   " + what)


def main():
    if len(sys.argv) != 2:
        print("usage: check_dump_txn.py SAMSA_DUMP", file=sys.stderr)
        return 2
    exe = sys.argv[1]
    pid, epoch = 4000, 3
    with tempfile.TemporaryDirectory(prefix="check_dump_txn-") as tmp:
        # a transaction's data, its COMMIT, then an aborted one's ABORT
        seg = os.path.join(tmp, "00000000000000000000.log")
        with open(seg, "wb") as f:
            f.write(batch(0, [(None, b"a"), (None, b"b")], TRANSACTIONAL, pid, epoch, 0))
            f.write(marker(2, True, 7, pid, epoch))
            f.write(batch(3, [(None, b"c")], TRANSACTIONAL, pid, epoch, 2))
            f.write(marker(4, False, 8, pid, epoch))
        out = dump(exe, seg)
        expect_lines(out, ["COMMIT marker, CoordinatorEpoch 7",
                           "ABORT marker, CoordinatorEpoch 8"], "markers")
        batches = [ln for ln in out.splitlines() if ln.startswith("position")]
        if len(batches) != 4 or not all("transactional" in b for b in batches) or \
                [("control" in b) for b in batches] != [False, True, False, True]:
            fail("batch lines:\n%s", out)
        markers = [ln for ln in out.splitlines() if "marker" in ln]
        if len(markers) != 2:
            fail("one marker line per control batch, got:\n%s", out)
        out = dump(exe, "--records", seg)
        expect_lines(out, ['offset 1 timestamp 1700000000000 key null value "b" headers 0',
                           "ABORT marker, CoordinatorEpoch 8"], "markers with --records")

        # a control batch whose record is no marker (a type Kafka 2.0 does not know)
        odd = os.path.join(tmp, "odd.log")
        with open(odd, "wb") as f:
            f.write(batch(0, [(struct.pack(">hh", 0, 5), struct.pack(">hi", 0, 1))],
                          TRANSACTIONAL | CONTROL, pid, epoch))
        out = dump(exe, odd, want_rc=1)
        check = [ln for ln in out.splitlines() if "not a transaction marker" in ln]
        if len(check) != 1:
            fail("an unknown control type is said:\n%s", out)
        print("ok   an unknown control record")

        # the aborted-transaction index
        idx = os.path.join(tmp, "00000000000000000000.txnindex")
        with open(idx, "wb") as f:
            f.write(aborted_txn(pid, 3, 4, 5))
            f.write(aborted_txn(9001, 10, 20, 21))
        out = dump(exe, idx)
        expect_lines(out, [
            "entry 0 @0: ABORT ProducerId 4000 FirstOffset 3 LastOffset 4 LastStableOffset 5",
            "entry 1 @34: ABORT ProducerId 9001 FirstOffset 10 LastOffset 20 "
            "LastStableOffset 21"], ".txnindex entries")
        same = os.path.join(tmp, "index.bin")
        with open(same, "wb") as f, open(idx, "rb") as g:
            f.write(g.read())
        if dump(exe, "--txnindex", same).splitlines()[1:] != out.splitlines()[1:]:
            fail("--txnindex reads a file of any name the same")
        with open(same, "ab") as f:
            f.write(b"\x00" * 10)
        out = dump(exe, "--txnindex", same, want_rc=1)
        expect_lines(out, ["position 68: partial entry (10 bytes left)"], "a partial entry")
        with open(same, "wb") as f:
            f.write(aborted_txn(pid, 3, 4, 5, version=1))
        out = dump(exe, "--txnindex", same, want_rc=1)
        expect_lines(out, ["entry 0 @0: version 1 unknown (TransactionIndex reads version 0)"],
                     "an unknown entry version")

        # a partition of __transaction_state
        part = os.path.join(tmp, "__transaction_state-7")
        os.mkdir(part)
        tlog = os.path.join(part, "00000000000000000000.log")
        recs = [
            (txn_key("copier-1"), txn_value(pid, epoch, 60000, 1,
                                            [("orders", [0, 2]), ("out", [1])],
                                            1700000000500, 1700000000100)),
            (txn_key("idle"), txn_value(77, 0, 10000, 0, None, 1700000000600, -1)),
            (txn_key("gone"), None),
        ]
        with open(tlog, "wb") as f:
            f.write(batch(0, recs[:2]))
            f.write(batch(2, recs[2:]))
        lines = [
            'offset 0 transactional_id "copier-1" producer_id 4000 producer_epoch 3 '
            'transaction_timeout_ms 60000 status Ongoing (1) partitions [orders:0,2 out:1] '
            'entry_timestamp 1700000000500 start_timestamp 1700000000100',
            'offset 1 transactional_id "idle" producer_id 77 producer_epoch 0 '
            'transaction_timeout_ms 10000 status Empty (0) partitions null '
            'entry_timestamp 1700000000600 start_timestamp -1',
            'offset 2 transactional_id "gone" tombstone (the id expired)',
        ]
        expect_lines(dump(exe, tlog), lines, "__transaction_state records")
        plain = os.path.join(tmp, "copy.log")
        with open(plain, "wb") as f, open(tlog, "rb") as g:
            f.write(g.read())
        out = dump(exe, plain)
        if "transactional_id" in out:
            fail("a segment of another topic decoded as TransactionLog:\n%s", out)
        expect_lines(dump(exe, "--transaction-state", plain), lines, "--transaction-state")

        # a value cut short is an error, said on its line
        bad = os.path.join(part, "00000000000000000003.log")
        with open(bad, "wb") as f:
            f.write(batch(3, [(txn_key("cut"), txn_value(1, 0, 100, 1, [("t", [0])], 1, 1)[:20])]))
        out = dump(exe, bad, want_rc=1)
        if "value cut short" not in out:
            fail("a cut value:\n%s", out)
        print("ok   a cut TransactionLog value")
    return 0


if __name__ == "__main__":
    sys.exit(main())
