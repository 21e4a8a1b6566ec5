"""libsamsa and transactions against the real samsa-broker (Kafka 2.0's
KIP-98), with confluent-kafka (librdkafka 2.0.2) and kcat as the other side.

- read_committed_drops_aborted_transactions: two confluent-kafka
  transactional producers interleave their transactions on one partition
  (one aborts, the other commits, then the first commits another), with a
  kcat transaction before them; `samsa consume` (read_committed, the
  default) reads exactly the committed records in offset order, also when
  each Fetch answer holds one batch (the aborted transaction spans
  answers); with isolation.level=read_uncommitted it reads every data
  record in order, and never a control record.
- read_committed_ends_at_the_last_stable_offset: with a transaction left
  open, `samsa consume -e` under read_committed stops at its first offset
  (the LSO) and shows none of it; read_uncommitted reads it to the HW.
- producer_commit_is_visible_abort_is_not: libsamsa's transactional
  producer (txn_producer.c) commits 500 records, then another producer
  aborts 300: a read_committed kcat reads the 500 (and each producer's
  next, committed, transaction), read_uncommitted all of them.
- samsa_produce_transactional_id: `samsa produce --transactional-id` puts
  1000 lines in one transaction, read back by kcat and samsa
  read_committed.
- samsa_produce_killed_mid_input_is_never_visible: the tool, SIGKILLed with
  its transaction open and records in the log, never has one of them
  shown to read_committed kcat or samsa, before or after the coordinator
  aborts it (transaction.timeout.ms), after which later transactions are.
- second_producer_fences_the_first: a second producer with the same
  transactional.id fences the first: its commit is a fatal FENCED error,
  samsa_produce then says FATAL; only the second's records are visible.
- calls_out_of_order_are_refused: produce, begin, commit before
  init_transactions, init twice, produce outside a transaction, begin
  twice: SAMSA_ERR_STATE; an empty transaction commits.
- send_offsets_commits_the_groups_offsets: a record and a group's offset
  in one transaction; after the commit the group's committed offset is
  the one sent; another sent in an aborted transaction changes nothing.
- copier_writes_the_input_exactly_once: Kafka 2.0's copier on libsamsa (a
  group member reading, a transactional producer writing with the member's
  offsets, one transaction in three aborted and read again): the output
  read_committed equals the input once in order; the group's offset is the
  input's end.

    test_client_txn.py SAMSA_BROKER SAMSA_TOOL TXN_PRODUCER [-k CASE]
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import broker  # noqa: E402
import kwire  # noqa: E402
import test_client_integration  # noqa: E402 (its samsa())
from broker import check, eq  # noqa: E402

try:
    import confluent_kafka
except ImportError:  # pragma: no cover - Debian's python3-confluent-kafka
    confluent_kafka = None

TOOL = None
TXN_PRODUCER = None
TIMEOUT = 60
# the coordinator's timeout scan, often enough for the short timeouts below
CONFIG = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"}


def need_clients():
    if confluent_kafka is None:
        raise broker.Skip("python3-confluent-kafka is not installed")


def samsa(*args, stdin=None, expect=0):
    test_client_integration.TOOL = TOOL
    return test_client_integration.samsa(*args, stdin=stdin, expect=expect)


def samsa_read(b, topic, *extra):
    """What `samsa consume -e` reads from the beginning -> [(offset, value)]."""
    out = samsa("consume", "-b", b.bootstrap, "-t", topic, "--from", "beginning", "-e",
                "-f", "%o %s\\n", *extra).stdout.decode()
    rows = []
    for line in out.splitlines():
        o, v = line.split(" ", 1)
        rows.append((int(o), v))
    return rows


def ck_producer(b, txn_id):
    p = confluent_kafka.Producer({"bootstrap.servers": b.bootstrap, "transactional.id": txn_id,
                                  "transaction.timeout.ms": 60000})
    p.init_transactions(30)
    return p


def send(p, topic, *vals):
    for v in vals:
        p.produce(topic, value=v.encode(), partition=0)
    p.flush(30)


# ---------------------------------------------------------------- cases


def case_read_committed_drops_aborted_transactions(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "rc", 1)
    subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "rc", "-p", "0",
                    "-X", "transactional.id=rc-kcat"],
                   input=b"k1\nk2\n", check=True, timeout=TIMEOUT, capture_output=True)
    pa = ck_producer(b, "rc-a")
    pb = ck_producer(b, "rc-b")
    pa.begin_transaction()
    pb.begin_transaction()
    send(pa, "rc", "a-aborted-1", "a-aborted-2")
    send(pb, "rc", "b-1")
    send(pa, "rc", "a-aborted-3")
    send(pb, "rc", "b-2")
    pa.abort_transaction(30)
    send(pb, "rc", "b-3")
    pb.commit_transaction(30)
    pa.begin_transaction()
    send(pa, "rc", "a-kept-1")
    pb.begin_transaction()
    send(pb, "rc", "b-aborted-4")
    send(pa, "rc", "a-kept-2")
    pa.commit_transaction(30)
    pb.abort_transaction(30)
    del pa, pb
    committed = ["k1", "k2", "b-1", "b-2", "b-3", "a-kept-1", "a-kept-2"]
    data = ["k1", "k2", "a-aborted-1", "a-aborted-2", "b-1", "a-aborted-3", "b-2", "b-3",
            "a-kept-1", "b-aborted-4", "a-kept-2"]
    rows = samsa_read(b, "rc")
    eq([v for _, v in rows], committed, "read_committed (the default)")
    check(all(x[0] < y[0] for x, y in zip(rows, rows[1:])), "offsets in order: %s" % rows)
    # one batch per Fetch answer: the aborted transactions span answers
    eq([v for _, v in samsa_read(b, "rc", "-X", "max.partition.fetch.bytes=1")], committed,
       "read_committed, one batch per answer")
    eq([v for _, v in samsa_read(b, "rc", "-X", "isolation.level=read_committed")], committed,
       "isolation.level=read_committed")
    rows = samsa_read(b, "rc", "-X", "isolation.level=read_uncommitted")
    eq([v for _, v in rows], data, "read_uncommitted: every data record, no control record")
    # kcat (librdkafka) agrees on both
    out = subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", "rc", "-e", "-q",
                          "-f", "%s\\n"], capture_output=True, timeout=TIMEOUT,
                         check=True).stdout.decode().splitlines()
    eq(out, committed, "kcat read_committed")


def case_read_committed_ends_at_the_last_stable_offset(t):
    need_clients()
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "lso", 1)
    p = ck_producer(b, "lso-1")
    p.begin_transaction()
    send(p, "lso", "c-1", "c-2")
    p.commit_transaction(30)
    p.begin_transaction()
    send(p, "lso", "open-1", "open-2")
    # -e ends at the LSO (the open transaction's first offset, 3): nothing
    # of the open transaction, and no wait for it
    eq(samsa_read(b, "lso"), [(0, "c-1"), (1, "c-2")], "read_committed with a transaction open")
    eq([v for _, v in samsa_read(b, "lso", "-X", "isolation.level=read_uncommitted")],
       ["c-1", "c-2", "open-1", "open-2"], "read_uncommitted with a transaction open")
    p.commit_transaction(30)
    del p
    eq([v for _, v in samsa_read(b, "lso")], ["c-1", "c-2", "open-1", "open-2"],
       "read_committed after the commit")


def txn_producer(b, topic, txn_id, *scenario, expect=0):
    p = subprocess.run([TXN_PRODUCER, b.bootstrap, topic, txn_id] + [str(a) for a in scenario],
                       capture_output=True, timeout=TIMEOUT * 2)
    out = p.stdout.decode()
    if expect is not None and p.returncode != expect:
        raise AssertionError("txn_producer %s: exit %d (wanted %d)\nstdout: %s\nstderr: %s"
                             % (" ".join(scenario), p.returncode, expect, out,
                                p.stderr.decode()[-2000:]))
    return out


def kcat_values(b, topic, isolation="read_committed"):
    return subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", topic, "-e", "-q",
                           "-X", "isolation.level=" + isolation, "-f", "%s\\n"],
                          capture_output=True, timeout=TIMEOUT,
                          check=True).stdout.decode().splitlines()


def case_producer_commit_is_visible_abort_is_not(t):
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "pc", 1)
    out = txn_producer(b, "pc", "t-commit", "commit", 500)
    check("p commit ok" in out, out)
    out = txn_producer(b, "pc", "t-abort", "abort", 300)
    check("p abort ok" in out, out)
    got = kcat_values(b, "pc")
    eq(got, ["t-commit-%d" % i for i in range(500)] + ["after-0", "after-0"],
       "kcat read_committed: the committed transactions, none of the aborted one")
    everything = kcat_values(b, "pc", "read_uncommitted")
    eq(len(everything), 500 + 300 + 2, "kcat read_uncommitted: every record")
    check("t-abort-0" in everything, "the aborted records are in the log")
    # the markers: COMMIT, COMMIT, ABORT, COMMIT (each transaction ends with one)
    eq(kwire.list_offset(b.port, "pc", 0, -1)[1], 500 + 300 + 2 + 4, "the log end")


def case_samsa_produce_transactional_id(t):
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "sp", 1)
    lines = ["line-%d" % i for i in range(1000)]
    p = samsa("produce", "-b", b.bootstrap, "-t", "sp", "--transactional-id", "tool-1",
              stdin=("\n".join(lines) + "\n").encode())
    check(b"transaction committed" in p.stderr, p.stderr)
    eq(kcat_values(b, "sp"), lines, "kcat read_committed after samsa produce --transactional-id")
    eq([v for _, v in samsa_read(b, "sp")], lines, "samsa read_committed")


def case_samsa_produce_killed_mid_input_is_never_visible(t):
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "kill", 1)
    samsa("produce", "-b", b.bootstrap, "-t", "kill", "--transactional-id", "before",
          stdin=b"c1\nc2\n")
    first_open = kwire.list_offset(b.port, "kill", 0, -1)[1]
    eq(first_open, 3, "the log end after the first transaction and its marker")
    # the input stays open: the tool keeps its transaction open, its
    # records are sent (linger), then it is killed
    proc = subprocess.Popen([TOOL, "produce", "-b", b.bootstrap, "-t", "kill",
                             "--transactional-id", "killed", "-X", "transaction.timeout.ms=3000"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(b"".join(b"open-%d\n" % i for i in range(5000)))
        proc.stdin.flush()
        end = time.monotonic() + TIMEOUT
        while len(kcat_values(b, "kill", "read_uncommitted")) < 1000:
            check(time.monotonic() < end, "the killed producer's records never reached the log")
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
        proc.stdin.close()
    eq(kcat_values(b, "kill"), ["c1", "c2"], "read_committed with the killed transaction open")
    eq([v for _, v in samsa_read(b, "kill")], ["c1", "c2"], "samsa read_committed, open")
    # the coordinator aborts it after transaction.timeout.ms: the LSO moves on
    end = time.monotonic() + TIMEOUT
    while True:
        samsa("produce", "-b", b.bootstrap, "-t", "kill", "--transactional-id", "after",
              stdin=b"c3\n")
        if kcat_values(b, "kill")[-1:] == ["c3"]:
            break
        check(time.monotonic() < end, "the LSO never passed the killed transaction")
        time.sleep(1)
    got = kcat_values(b, "kill")
    check(not any(v.startswith("open-") for v in got), "a killed record was shown: %s" % got[:5])
    check(got[:2] == ["c1", "c2"] and set(got[2:]) == {"c3"}, "read_committed at the end: %s" % got)
    check(not any(v.startswith("open-") for _, v in samsa_read(b, "kill")),
          "samsa read_committed showed a killed record")


def case_second_producer_fences_the_first(t):
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "fence", 1)
    out = txn_producer(b, "fence", "fence-me", "fence")
    check("fenced yes" in out, out)
    eq(kcat_values(b, "fence"), ["winner-0", "winner-1"], "read_committed after the fencing")


def case_calls_out_of_order_are_refused(t):
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "st", 1)
    out = txn_producer(b, "st", "states-1", "states")
    for line in ["produce before init STATE", "p begin-before-init error STATE",
                 "p commit-before-init error STATE", "p init ok", "p init-again error STATE",
                 "produce outside a transaction STATE", "p begin-twice error STATE",
                 "p commit-empty ok"]:
        check(line in out, "%r not in:\n%s" % (line, out))


def committed_offset(b, group, topic):
    c = confluent_kafka.Consumer({"bootstrap.servers": b.bootstrap, "group.id": group})
    try:
        return c.committed([confluent_kafka.TopicPartition(topic, 0)], timeout=10)[0].offset
    finally:
        c.close()


def case_send_offsets_commits_the_groups_offsets(t):
    """send_offsets_to_transaction: AddOffsetsToTxn then TxnOffsetCommit; the
    group's offset is committed with the transaction, and dropped with an
    abort."""
    need_clients()
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "so", 1)
    out = txn_producer(b, "so", "offsets-1", "offsets", "copier", 42)
    check("p send_offsets ok" in out and "p commit ok" in out, out)
    eq(committed_offset(b, "copier", "so"), 42, "the group's offset after the commit")
    out = txn_producer(b, "so", "offsets-1", "offsets", "copier", 99, "abort")
    check("p send_offsets ok" in out and "p abort ok" in out, out)
    eq(committed_offset(b, "copier", "so"), 42, "the group's offset after an abort")
    eq(kcat_values(b, "so"), ["offsets-1-0"], "read_committed: the committed record only")


def case_copier_writes_the_input_exactly_once(t):
    """Kafka 2.0's TransactionalMessageCopier, on libsamsa: a group member
    reads the input, a transactional producer writes it to the output in
    transactions of 10 with the member's offsets (send_offsets with
    samsa_consumer_group_metadata_get), one transaction in three aborted
    and its records read again: read_committed sees the output equal to
    the input, once, in order; the group's offset is the input's end."""
    need_clients()
    b = t.broker(overrides=CONFIG)
    kwire.create_topic(b.port, "cin", 1)
    kwire.create_topic(b.port, "cout", 1)
    lines = ["in-%d" % i for i in range(95)]
    subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "cin", "-p", "0"],
                   input=("\n".join(lines) + "\n").encode(), check=True, timeout=TIMEOUT)
    out = txn_producer(b, "cin", "copier-0", "copy", "cout", "copiers", len(lines))
    check("copied 95" in out, out)
    check(out.count("p abort ok") >= 3, "aborted transactions: %s" % out)
    eq(kcat_values(b, "cout"), lines, "the output, read_committed")
    check(len(kcat_values(b, "cout", "read_uncommitted")) > len(lines),
          "the aborted copies are in the log")
    eq(committed_offset(b, "copiers", "cin"), len(lines), "the group's offset")


if __name__ == "__main__":
    TOOL = os.path.abspath(sys.argv.pop(2))
    TXN_PRODUCER = os.path.abspath(sys.argv.pop(2))
    sys.exit(broker.main([case_read_committed_drops_aborted_transactions,
                          case_read_committed_ends_at_the_last_stable_offset,
                          case_producer_commit_is_visible_abort_is_not,
                          case_samsa_produce_transactional_id,
                          case_samsa_produce_killed_mid_input_is_never_visible,
                          case_second_producer_fences_the_first,
                          case_calls_out_of_order_are_refused,
                          case_send_offsets_commits_the_groups_offsets,
                          case_copier_writes_the_input_exactly_once]))
