"""Transactions on a standalone broker, with real transactional clients
(kcat 1.7.1 and confluent-kafka on librdkafka 2.0.2) and read_committed
consumers (Kafka 2.0's KIP-98: the coordinator, markers, the last stable
offset, the aborted-transaction index).

- kcat_commit: kcat -X transactional.id puts N lines in one transaction;
  a read_committed kcat reads the N lines, and the commit marker after
  them is never shown; the LSO is the HW at the end.
- kcat_killed: a transactional kcat is SIGKILLed with its transaction
  open (its records are in the log: a read_uncommitted reader sees
  them); a read_committed reader sees none of them and its end (the LSO)
  stays at the transaction's first offset; once transaction.timeout.ms
  passes, the coordinator aborts it: the LSO moves to the HW and the
  records are never shown to a read_committed reader, while those of a
  transaction committed afterwards are.
- abort_hidden: confluent-kafka aborts one transaction and commits the
  next on two partitions; read_committed sees only the committed ones,
  read_uncommitted both; the `.txnindex` file read by an independent
  decoder (Kafka's 34-byte entries) names the aborted transaction's
  producer, first offset and marker; and the marker batches in the log
  decode as Kafka's control records (ABORT 0, COMMIT 1).
- fencing: a second producer with the same transactional.id fences the
  first (its commit fails; librdkafka reports it fatal); the first's open
  records are aborted, never visible to read_committed.
- restart_keeps_aborts: after a SIGKILL and a restart, the aborted
  transaction stays hidden from read_committed (the index is read back)
  and the log's committed records stay visible.
- list_offsets_isolation: with a transaction open, ListOffsets latest is
  the LSO (its first offset) for read_committed and the HW for
  read_uncommitted.
- coordinator_restart: the coordinator's records in __transaction_state
  (Kafka's format) bring a transactional id back after a clean stop and
  after a SIGKILL: InitProducerId gives the same producer id and the next
  epoch each time; the records decode as Kafka's TransactionLog.
- offsets_in_transactions: confluent-kafka's send_offsets_to_transaction
  (AddOffsetsToTxn, TxnOffsetCommit with the consumer's group metadata):
  the group's committed offsets move only when the transaction commits,
  not while it is open nor when it aborts, and after a SIGKILL and a
  restart they are what the last committed transaction set (the loader
  resolves the offsets by the markers in __consumer_offsets), and stay so
  when a new producer of the id aborts the transaction left open.
- produce_outside_its_transaction: a transactional batch of a producer
  whose transaction does not hold the partition (never added, or sent
  after the transaction ended: a request delayed past its commit) is
  refused with INVALID_TXN_STATE and opens no transaction (the LSO stays
  at the HW); an older epoch is INVALID_PRODUCER_EPOCH, an unknown id
  INVALID_PRODUCER_ID_MAPPING (the check Kafka 3.6's KIP-890 added,
  here on the standalone broker).
- write_txn_markers: WriteTxnMarkers v0, the request a transaction
  coordinator sends the partitions' leaders, ends a producer's open
  transaction on this broker's partition (ABORT: the LSO reaches the HW,
  read_committed sees nothing of it); a marker of an older epoch is
  INVALID_PRODUCER_EPOCH, of an unknown partition UNKNOWN_TOPIC_OR_PARTITION.
- open_transaction_across_kill9: a transaction open when the broker is
  SIGKILLed stays open after the restart (its records hidden from
  read_committed, the LSO at its first offset) until the coordinator,
  which read it back, aborts it at its timeout.

Usage: test_transactions.py <samsa-broker> [-k NAME]
"""

import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import broker  # noqa: E402
import kwire  # noqa: E402
from broker import check, eq  # noqa: E402

try:
    import confluent_kafka
except ImportError:  # pragma: no cover - Debian's python3-confluent-kafka
    confluent_kafka = None

CONFIG = {
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
}
DEADLINE = 60.0


def need_clients():
    if confluent_kafka is None:
        raise broker.Skip("python3-confluent-kafka is not installed")


def kcat_read(b, topic, isolation, partition=None):
    """Every record a kcat consumer with isolation.level sees up to its end
    (-e: the LSO for read_committed) -> [(partition, offset, value)]."""
    cmd = ["kcat", "-C", "-b", b.bootstrap, "-t", topic, "-e", "-q",
           "-X", "isolation.level=" + isolation, "-f", "%p %o %s\\n"]
    if partition is not None:
        cmd += ["-p", str(partition)]
    out = subprocess.run(cmd, capture_output=True, timeout=60, check=True).stdout
    rows = []
    for line in out.decode().splitlines():
        p, o, v = line.split(" ", 2)
        rows.append((int(p), int(o), v))
    return rows


def values(rows):
    return [v for _, _, v in rows]


def watermarks(b, topic, partition, isolation):
    """(low, high) by ListOffsets with isolation.level: high is the LSO
    for read_committed, the HW otherwise."""
    c = confluent_kafka.Consumer({"bootstrap.servers": b.bootstrap, "group.id": "wm",
                                  "isolation.level": isolation})
    try:
        return c.get_watermark_offsets(confluent_kafka.TopicPartition(topic, partition),
                                       timeout=10, cached=False)
    finally:
        c.close()


def wait_for(what, cond, deadline=DEADLINE):
    end = time.monotonic() + deadline
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.2)


def producer(b, txn_id, **extra):
    conf = {"bootstrap.servers": b.bootstrap, "transactional.id": txn_id,
            "transaction.timeout.ms": 10000}
    conf.update(extra)
    return confluent_kafka.Producer(conf)


def create(b, topic, partitions=1):
    kwire.create_topic(b.port, topic, partitions)


# ---------------------------------------------------------------- cases


def case_kcat_commit(t):
    b = t.broker(overrides=CONFIG)
    create(b, "tc")
    lines = ["line-%d" % i for i in range(200)]
    subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "tc", "-p", "0",
                    "-X", "transactional.id=kc-1"],
                   input=("\n".join(lines) + "\n").encode(), check=True, timeout=60,
                   capture_output=True)
    got = kcat_read(b, "tc", "read_committed")
    eq(values(got), lines, "what read_committed reads")
    # the COMMIT marker took the offset after the records: the log end
    # is one past them, and no reader is shown it
    eq(kwire.list_offset(b.port, "tc", 0, -1)[1], len(lines) + 1, "the HW")
    eq(values(kcat_read(b, "tc", "read_uncommitted")), lines, "what read_uncommitted reads")


def case_kcat_killed(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "tk")
    # a transaction committed first: it stays visible throughout
    subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "tk", "-p", "0",
                    "-X", "transactional.id=kc-before"],
                   input=b"c1\nc2\n", check=True, timeout=60, capture_output=True)
    first_open = kwire.list_offset(b.port, "tk", 0, -1)[1]
    eq(first_open, 3, "the log end after the first transaction and its marker")
    # kcat reads its input into one transaction: 30,000 lines, then it
    # waits for more (the pipe stays open; it reads its input in blocks,
    # so part of it is produced) and is killed
    kc = subprocess.Popen(["kcat", "-P", "-b", b.bootstrap, "-t", "tk", "-p", "0",
                           "-X", "transactional.id=kc-killed",
                           "-X", "transaction.timeout.ms=4000"],
                          stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    try:
        kc.stdin.write(b"".join(b"open-%d\n" % i for i in range(30000)))
        kc.stdin.flush()
        wait_for("kcat's records in the log",
                 lambda: len(kcat_read(b, "tk", "read_uncommitted")) >= 1002)
        os.kill(kc.pid, signal.SIGKILL)
    finally:
        kc.wait()
        kc.stdin.close()
    eq(values(kcat_read(b, "tk", "read_committed")), ["c1", "c2"],
       "read_committed with the killed producer's transaction open")
    low, lso = watermarks(b, "tk", 0, "read_committed")
    eq(lso, first_open, "the LSO: the open transaction's first offset")
    # the coordinator aborts it after transaction.timeout.ms (4 s)
    wait_for("the LSO to pass the aborted transaction",
             lambda: watermarks(b, "tk", 0, "read_committed")[1] > first_open)
    hw = kwire.list_offset(b.port, "tk", 0, -1)[1]
    eq(watermarks(b, "tk", 0, "read_committed")[1], hw, "the LSO after the abort")
    eq(values(kcat_read(b, "tk", "read_committed")), ["c1", "c2"],
       "read_committed after the abort")
    subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "tk", "-p", "0",
                    "-X", "transactional.id=kc-after"],
                   input=b"c3\n", check=True, timeout=60, capture_output=True)
    eq(values(kcat_read(b, "tk", "read_committed")), ["c1", "c2", "c3"],
       "read_committed after a later commit")
    check("open-0" in values(kcat_read(b, "tk", "read_uncommitted")),
          "read_uncommitted still shows the aborted records")


def decode_txnindex(path):
    """Kafka's TransactionIndex entries: version int16 (0), producer id,
    first offset, last offset, last stable offset (int64 each)."""
    with open(path, "rb") as f:
        data = f.read()
    eq(len(data) % 34, 0, "the .txnindex length, a multiple of 34")
    out = []
    for i in range(0, len(data), 34):
        version, pid, first, last, lso = struct.unpack(">hqqqq", data[i:i + 34])
        eq(version, 0, "a .txnindex entry's version")
        out.append((pid, first, last, lso))
    return out


def control_markers(b, topic, partition):
    """The log's control batches, decoded as Kafka's EndTransactionMarker:
    [(offset, producer id, type)] (type 0 ABORT, 1 COMMIT)."""
    out = []
    for bt in kwire.disk_batches(b.log_dir, topic, partition):
        if not bt.attributes & 0x20:
            continue
        check(bt.attributes & 0x10, "a control batch is transactional")
        check(bt.crc_ok(), "a marker batch's CRC")
        recs = bt.records()
        eq(len(recs), 1, "records in a marker batch")
        _, _, key, value = recs[0]
        version, ctype = struct.unpack(">hh", key)
        eq(version, 0, "a control key's version")
        vversion, _coordinator_epoch = struct.unpack(">hi", value)
        eq(vversion, 0, "a marker value's version")
        eq(bt.base_sequence, -1, "a marker's base sequence")
        out.append((bt.base_offset, bt.producer_id, ctype))
    return out


def case_abort_hidden(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "ta", 2)
    p = producer(b, "cf-1")
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(10):
        p.produce("ta", value=b"aborted-%d" % i, partition=i % 2)
    p.flush(30)
    p.abort_transaction(30)
    p.begin_transaction()
    for i in range(10):
        p.produce("ta", value=b"kept-%d" % i, partition=i % 2)
    p.commit_transaction(30)
    del p  # destroyed now, before the broker stops
    committed = sorted(values(kcat_read(b, "ta", "read_committed")))
    eq(committed, sorted("kept-%d" % i for i in range(10)), "read_committed")
    everything = values(kcat_read(b, "ta", "read_uncommitted"))
    eq(len(everything), 20, "read_uncommitted: both transactions")
    for part in (0, 1):
        markers = control_markers(b, "ta", part)
        eq([m[2] for m in markers], [0, 1], "partition %d's markers (ABORT, COMMIT)" % part)
        d = kwire.partition_dir(b.log_dir, "ta", part)
        idx = [n for n in os.listdir(d) if n.endswith(".txnindex")]
        eq(idx, ["%020d.txnindex" % 0], "partition %d's .txnindex files" % part)
        entries = decode_txnindex(os.path.join(d, idx[0]))
        eq(len(entries), 1, "partition %d's aborted transactions" % part)
        pid, first, last, lso = entries[0]
        eq(pid, markers[0][1], "the aborted transaction's producer id")
        eq(first, 0, "the aborted transaction's first offset")
        eq(last, markers[0][0], "the aborted transaction's marker offset")
        eq(lso, last + 1, "the LSO once it completed")


def case_fencing(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "tf")
    p1 = producer(b, "fence-me")
    p1.init_transactions(30)
    p1.begin_transaction()
    p1.produce("tf", value=b"zombie", partition=0)
    p1.flush(30)
    p2 = producer(b, "fence-me")
    p2.init_transactions(30)  # fences p1: its open transaction is aborted
    p2.begin_transaction()
    p2.produce("tf", value=b"winner", partition=0)
    p2.commit_transaction(30)
    fenced = None
    try:
        p1.produce("tf", value=b"zombie-2", partition=0)
        p1.commit_transaction(30)
    except confluent_kafka.KafkaException as e:
        fenced = e.args[0]
    del p1, p2
    check(fenced is not None, "the fenced producer's commit succeeded")
    check(fenced.fatal() or fenced.code() in (confluent_kafka.KafkaError._FENCED,
                                              confluent_kafka.KafkaError.INVALID_PRODUCER_EPOCH),
          "the fenced producer's error %s" % fenced)
    eq(values(kcat_read(b, "tf", "read_committed")), ["winner"], "read_committed")


def case_restart_keeps_aborts(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "tr")
    p = producer(b, "restart-1")
    p.init_transactions(30)
    p.begin_transaction()
    p.produce("tr", value=b"gone", partition=0)
    p.flush(30)
    p.abort_transaction(30)
    p.begin_transaction()
    p.produce("tr", value=b"stays", partition=0)
    p.commit_transaction(30)
    del p
    eq(values(kcat_read(b, "tr", "read_committed")), ["stays"], "read_committed before")
    b.kill()
    b.start()
    eq(values(kcat_read(b, "tr", "read_committed")), ["stays"], "read_committed after kill -9")
    b.stop()
    b.start()
    eq(values(kcat_read(b, "tr", "read_committed")), ["stays"], "read_committed after a stop")


def case_list_offsets_isolation(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "tl")
    p = producer(b, "lo-1")
    p.init_transactions(30)
    p.begin_transaction()
    p.produce("tl", value=b"a", partition=0)
    p.produce("tl", value=b"b", partition=0)
    p.flush(30)
    eq(watermarks(b, "tl", 0, "read_committed"), (0, 0), "read_committed watermarks")
    eq(watermarks(b, "tl", 0, "read_uncommitted"), (0, 2), "read_uncommitted watermarks")
    p.commit_transaction(30)
    del p
    eq(watermarks(b, "tl", 0, "read_committed"), (0, 3), "read_committed after the commit")


def txn_init(b, txn_id, timeout_ms=60000, deadline=DEADLINE):
    """InitProducerId v0 with a transactional id, retried while the
    coordinator is not available (its topic being made) -> (pid, epoch)."""
    end = time.monotonic() + deadline
    while True:
        with kwire.connect(b.port) as s:
            _, err, pid, epoch = kwire.parse_init_producer_id_v0(
                kwire.roundtrip(s, kwire.init_producer_id_v0(5, txn_id, timeout_ms)))
        if err == 0:
            return pid, epoch
        check(err == 15 and time.monotonic() < end,
              "InitProducerId %s: error %d" % (txn_id, err))
        time.sleep(0.2)


def txn_state_records(b):
    """Every record of __transaction_state's logs, decoded as Kafka's
    TransactionLog: [(transactional id, None or (pid, epoch, timeout,
    status, {topic: [partitions]}))]."""
    out = []
    for part in range(50):
        d = kwire.partition_dir(b.log_dir, "__transaction_state", part)
        if not os.path.isdir(d):
            continue
        for bt in kwire.disk_batches(b.log_dir, "__transaction_state", part):
            for _, _, key, value in bt.records():
                kv, klen = struct.unpack_from(">hh", key)
                eq(kv, 0, "a record key's version")
                tid = key[4:4 + klen].decode()
                eq(len(key), 4 + klen, "a record key's length")
                if value is None:
                    out.append((tid, None))
                    continue
                pos = 0
                (vv, pid, epoch, timeout, status, ntopics) = struct.unpack_from(">hqhibi", value)
                pos = 2 + 8 + 2 + 4 + 1 + 4
                eq(vv, 0, "a record value's version")
                parts = {}
                for _ in range(max(ntopics, 0)):
                    (tl,) = struct.unpack_from(">h", value, pos)
                    topic = value[pos + 2:pos + 2 + tl].decode()
                    pos += 2 + tl
                    (n,) = struct.unpack_from(">i", value, pos)
                    pos += 4
                    parts[topic] = list(struct.unpack_from(">%di" % n, value, pos))
                    pos += 4 * n
                pos += 16  # entry and start timestamps
                eq(pos, len(value), "a record value's length")
                if status == 0:
                    eq(ntopics, -1, "an Empty record's partitions (null)")
                out.append((tid, (pid, epoch, timeout, status, parts)))
    return out


def case_coordinator_restart(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "tcr")
    pid, epoch = txn_init(b, "survivor")
    p = producer(b, "survivor")
    p.init_transactions(30)  # epoch + 1
    p.begin_transaction()
    p.produce("tcr", value=b"one", partition=0)
    p.commit_transaction(30)
    del p
    recs = [r for r in txn_state_records(b) if r[0] == "survivor"]
    statuses = [r[1][3] for r in recs]
    # Empty (ours), Empty (the producer's), Ongoing, PrepareCommit, CompleteCommit
    eq(statuses, [0, 0, 1, 2, 4], "the id's records' statuses")
    eq(recs[2][1][4], {"tcr": [0]}, "the Ongoing record's partitions")
    check(all(r[1][0] == pid for r in recs), "every record names producer %d" % pid)
    b.stop()
    b.start()
    eq(txn_init(b, "survivor"), (pid, epoch + 2), "after a clean stop")
    b.kill()
    b.start()
    eq(txn_init(b, "survivor"), (pid, epoch + 3), "after kill -9")
    eq(values(kcat_read(b, "tcr", "read_committed")), ["one"], "read_committed")


def case_open_transaction_across_kill9(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "tok")
    subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "tok", "-p", "0",
                    "-X", "transactional.id=tok-before"],
                   input=b"before\n", check=True, timeout=60, capture_output=True)
    first_open = kwire.list_offset(b.port, "tok", 0, -1)[1]
    p = producer(b, "tok-open", **{"transaction.timeout.ms": 8000})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(20):
        p.produce("tok", value=b"open-%d" % i, partition=0)
    p.flush(30)
    b.kill()
    del p
    b.start()
    eq(values(kcat_read(b, "tok", "read_committed")), ["before"], "read_committed after kill -9")
    eq(watermarks(b, "tok", 0, "read_committed")[1], first_open,
       "the LSO after the restart: the open transaction's first offset")
    wait_for("the coordinator to abort the transaction it read back",
             lambda: watermarks(b, "tok", 0, "read_committed")[1] > first_open)
    eq(values(kcat_read(b, "tok", "read_committed")), ["before"], "read_committed after the abort")
    markers = control_markers(b, "tok", 0)
    eq([m[2] for m in markers], [1, 0], "the markers: the first COMMIT, then the ABORT")


def committed_offset(b, group, topic, partition):
    c = confluent_kafka.Consumer({"bootstrap.servers": b.bootstrap, "group.id": group,
                                  "enable.auto.commit": False})
    try:
        got = c.committed([confluent_kafka.TopicPartition(topic, partition)], timeout=10)
        return got[0].offset
    finally:
        c.close()


def case_offsets_in_transactions(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "oin")
    create(b, "oout")
    subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "oin", "-p", "0"],
                   input=b"".join(b"in-%d\n" % i for i in range(30)), check=True, timeout=60,
                   capture_output=True)
    cons = confluent_kafka.Consumer({"bootstrap.servers": b.bootstrap, "group.id": "copier",
                                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                     "isolation.level": "read_committed"})
    cons.assign([confluent_kafka.TopicPartition("oin", 0, 0)])
    p = producer(b, "copier-1")
    p.init_transactions(30)

    def copy(n, commit):
        p.begin_transaction()
        got = 0
        while got < n:
            m = cons.poll(10)
            check(m is not None, "a record of oin within 10 s")
            if m.error():
                continue
            p.produce("oout", value=m.value(), partition=0)
            got += 1
        pos = cons.position([confluent_kafka.TopicPartition("oin", 0)])
        p.send_offsets_to_transaction(pos, cons.consumer_group_metadata(), 30)
        if not commit:
            eq(committed_offset(b, "copier", "oin", 0),
               confluent_kafka.OFFSET_INVALID if copy.last is None else copy.last,
               "the committed offset while the transaction is open")
        if commit:
            p.commit_transaction(30)
            copy.last = pos[0].offset
        else:
            p.abort_transaction(30)
            # rewind to what the group committed, as a copier does
            cons.seek(confluent_kafka.TopicPartition("oin", 0, copy.last))
    copy.last = None

    copy(10, True)
    eq(committed_offset(b, "copier", "oin", 0), 10, "after the first commit")
    copy(10, False)
    eq(committed_offset(b, "copier", "oin", 0), 10, "after an abort")
    copy(10, True)
    eq(committed_offset(b, "copier", "oin", 0), 20, "after the second commit")
    eq(values(kcat_read(b, "oout", "read_committed")), ["in-%d" % i for i in range(20)],
       "the copy read read_committed")
    # a transaction with offsets left open when the broker dies
    p.begin_transaction()
    m = cons.poll(10)
    p.produce("oout", value=m.value(), partition=0)
    p.send_offsets_to_transaction(cons.position([confluent_kafka.TopicPartition("oin", 0)]),
                                  cons.consumer_group_metadata(), 30)
    p.flush(30)
    cons.close()
    b.kill()
    del p
    b.start()
    eq(committed_offset(b, "copier", "oin", 0), 20, "after kill -9 with offsets pending")
    # a newer producer of the id fences the old transaction (aborted): the
    # offsets stay where the last commit put them
    p2 = producer(b, "copier-1")
    p2.init_transactions(30)
    del p2
    eq(committed_offset(b, "copier", "oin", 0), 20, "after the open transaction's abort")
    b.stop()
    b.start()
    eq(committed_offset(b, "copier", "oin", 0), 20, "after a clean restart")


def case_produce_outside_its_transaction(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "tpo")
    subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "tpo", "-p", "0",
                    "-X", "transactional.id=tpo-1"],
                   input=b"a\nb\n", check=True, timeout=60, capture_output=True)
    hw = kwire.list_offset(b.port, "tpo", 0, -1)[1]
    pid, epoch = txn_init(b, "tpo-1")  # the id kcat used: its transaction ended
    batch = dict(producer_id=pid, producer_epoch=epoch, base_sequence=0, attributes=0x10)
    kwire.produce(b.port, "tpo", 0, [(None, b"late")], transactional_id="tpo-1",
                  expect_error=48, **batch)
    kwire.produce(b.port, "tpo", 0, [(None, b"zombie")], transactional_id="tpo-1",
                  expect_error=47, **dict(batch, producer_epoch=epoch - 1))
    kwire.produce(b.port, "tpo", 0, [(None, b"stranger")], transactional_id="nobody",
                  expect_error=49, **batch)
    eq(kwire.list_offset(b.port, "tpo", 0, -1)[1], hw, "the HW: nothing appended")
    eq(watermarks(b, "tpo", 0, "read_committed")[1], hw, "the LSO: no transaction opened")
    eq(values(kcat_read(b, "tpo", "read_committed")), ["a", "b"], "read_committed")


def case_write_txn_markers(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    create(b, "twm")
    p = producer(b, "twm-1")
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(3):
        p.produce("twm", value=b"open-%d" % i, partition=0)
    p.flush(30)
    eq(watermarks(b, "twm", 0, "read_committed")[1], 0, "the LSO with the transaction open")
    data = [bt for bt in kwire.disk_batches(b.log_dir, "twm", 0) if bt.attributes & 0x10]
    pid, epoch = data[0].producer_id, data[0].producer_epoch
    with kwire.connect(b.port) as s:
        _, errs = kwire.parse_write_txn_markers_v0(kwire.roundtrip(s, kwire.write_txn_markers_v0(
            9, [(pid, epoch, False, {"twm": [0], "nope": [0]}, 0)])))
        eq(errs, {(pid, "twm", 0): 0, (pid, "nope", 0): 3}, "WriteTxnMarkers' errors")
        _, errs = kwire.parse_write_txn_markers_v0(kwire.roundtrip(s, kwire.write_txn_markers_v0(
            10, [(pid, epoch - 1, True, {"twm": [0]}, 0)])))
        eq(errs, {(pid, "twm", 0): 47}, "an older epoch's marker")
    hw = kwire.list_offset(b.port, "twm", 0, -1)[1]
    eq(hw, 4, "three records and the ABORT")
    eq(watermarks(b, "twm", 0, "read_committed")[1], hw, "the LSO after the marker")
    eq(values(kcat_read(b, "twm", "read_committed")), [], "read_committed")
    eq([m[2] for m in control_markers(b, "twm", 0)], [0], "the marker written")
    del p


if __name__ == "__main__":
    sys.exit(broker.main([case_kcat_commit, case_kcat_killed, case_abort_hidden, case_fencing,
                          case_restart_keeps_aborts, case_list_offsets_isolation,
                          case_coordinator_restart, case_offsets_in_transactions,
                          case_produce_outside_its_transaction, case_write_txn_markers,
                          case_open_transaction_across_kill9]))
