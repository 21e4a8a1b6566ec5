"""What the admin API shows of transactions, and an operator's abort
(broker/README.md, "The admin API"; Kafka 2.0's Replica.lastStableOffset
and TransactionCoordinator's timeout abort), against a standalone broker
with a real transactional producer (confluent-kafka on librdkafka) and
read_committed kcat.

- lso_held_and_operator_abort: a transaction held open after two
  committed records: the partition's last_stable_offset stays at the
  transaction's first offset while plain records move the high watermark
  on (topic document, /v1/partitions, /metrics); /v1/transactions shows the
  id Ongoing with its producer, epoch, partition and age, and the
  partition names it in open_transactions. POST
  /v1/transactions/{id}/abort needs the token (401 without it, 404 for an
  unknown id); with it the transaction is aborted: CompleteAbort in a
  bumped epoch, the LSO equals the HW, a read_committed kcat sees only
  the plain records, a second POST is 409 (nothing open), and the
  producer's commit fails (fenced).
- abort_needs_a_token: a broker without admin.auth.token refuses the
  POST (403) and aborts nothing.

Usage: test_admin_transactions.py <samsa-broker> [-k NAME]
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import broker  # noqa: E402
import kwire  # noqa: E402
from broker import check, eq  # noqa: E402
from test_admin_api import get, standalone  # noqa: E402
from test_transactions import wait_for  # noqa: E402

try:
    import confluent_kafka
except ImportError:  # pragma: no cover - Debian's python3-confluent-kafka
    confluent_kafka = None

TOKEN = "t0ken"


def need_clients():
    if confluent_kafka is None:
        raise broker.Skip("python3-confluent-kafka is not installed")


def request(url, token=None, method="GET"):
    """(status, parsed JSON or text) of test_admin_api's get; a POST has an
    empty body."""
    return get(url, token, method=method, data=b"" if method == "POST" else None)


def admin_broker(t, name, token):
    return standalone(t, name, **({"admin.auth.token": token} if token is not None else {}))


def partition_doc(url, topic, partition, token):
    st, d = request(url + "/v1/topics/" + topic, token)
    eq(st, 200, "GET /v1/topics/" + topic)
    return next(p for p in d["partitions"] if p["partition"] == partition)


def txn_doc(url, txn_id, token):
    st, d = request(url + "/v1/transactions", token)
    eq(st, 200, "GET /v1/transactions")
    return next((x for x in d["transactions"] if x["transactional_id"] == txn_id), None)


def metric(url, name, topic, partition, token):
    st, text = request(url + "/metrics", token)
    eq(st, 200, "/metrics")
    want = '%s{topic="%s",partition="%d"} ' % (name, topic, partition)
    for line in text.splitlines():
        if line.startswith(want):
            return int(line[len(want):])
    return None


def plain_produce(b, topic, vals):
    p = confluent_kafka.Producer({"bootstrap.servers": b.bootstrap, "acks": "all"})
    for v in vals:
        p.produce(topic, value=v.encode(), partition=0)
    eq(p.flush(30), 0, "plain records delivered")


def kcat_committed(b, topic):
    out = subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", topic, "-p", "0", "-e", "-q",
                          "-X", "isolation.level=read_committed", "-f", "%s\\n"],
                         capture_output=True, timeout=60, check=True).stdout
    return out.decode().splitlines()


# ---------------------------------------------------------------- cases


def case_lso_held_and_operator_abort(t):
    need_clients()
    b, url = admin_broker(t, "txnops", TOKEN)
    topic = "held"
    kwire.create_topic(b.port, topic, 1)
    plain_produce(b, topic, ["c0", "c1"])
    p = confluent_kafka.Producer({"bootstrap.servers": b.bootstrap, "transactional.id": "ops-1",
                                  "transaction.timeout.ms": 600000})
    p.init_transactions(30)
    before_ms = time.time() * 1000
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, value=b"open-%d" % i, partition=0)
    eq(p.flush(30), 0, "the transaction's records delivered")
    begun_ms = time.time() * 1000  # AddPartitionsToTxn answered: it started before this
    time.sleep(1.5)  # so that its age is more than a snapshot's
    plain_produce(b, topic, ["c2", "c3"])  # the HW moves on past the open transaction

    def held():
        d = partition_doc(url, topic, 0, TOKEN)
        return d if d["high_watermark"] == 7 else None
    d = wait_for("the HW at 7", held)
    eq(d["last_stable_offset"], 2, "the LSO held at the transaction's first offset")
    eq(d["open_transactions"], ["ops-1"], "the transaction holding it")
    st, led = request(url + "/v1/partitions", TOKEN)
    mine = [x for x in led["partitions"] if x["topic"] == topic]
    eq([(x["high_watermark"], x["last_stable_offset"]) for x in mine], [(7, 2)], "/v1/partitions")
    eq(metric(url, "samsa_partition_laststableoffset", topic, 0, TOKEN), 2, "the LSO gauge")
    eq(metric(url, "samsa_partition_highwatermark", topic, 0, TOKEN), 7, "the HW gauge")

    x = wait_for("ops-1 in /v1/transactions", lambda: txn_doc(url, "ops-1", TOKEN))
    eq(x["state"], "Ongoing", "its state")
    eq(x["partitions"], [{"topic": topic, "partition": 0}], "its partitions")
    check(x["producer_id"] >= 0 and x["producer_epoch"] >= 0, "its producer: %s", x)
    check(before_ms - 5 <= x["start_ms"] <= begun_ms + 5,
          "its start between begin_transaction and its records' delivery: %s", x)
    check(x["age_ms"] is not None and x["age_ms"] >= 1000 and x["age_ms"] < 60000,
          "its age (1.5 s and more since it began): %s", x)
    check(before_ms - 5 <= x["last_update_ms"] <= begun_ms + 5, "its last update: %s", x)
    eq(x["timeout_ms"], 600000, "its timeout")
    epoch = x["producer_epoch"]
    st, one = request(url + "/v1/transactions/ops-1", TOKEN)
    eq((st, one["state"]), (200, "Ongoing"), "GET /v1/transactions/ops-1")
    eq(kcat_committed(b, topic), ["c0", "c1"], "read_committed stops at the LSO")

    # the operator's abort: the token, then the id
    abort = url + "/v1/transactions/ops-1/abort"
    st, body = request(abort, None, "POST")
    eq((st, body["error"]["code"]), (401, "UNAUTHORIZED"), "POST without the token")
    st, body = request(url + "/v1/transactions/nobody/abort", TOKEN, "POST")
    eq(st, 404, "POST for an unknown id")
    for path in ("ops%2F1", "ops/1"):  # an id with a '/', as libsoup decodes the path
        st, body = request(url + "/v1/transactions/%s/abort" % path, TOKEN, "POST")
        eq((st, body["error"]["message"]), (404, "no such transactional id (this broker's "
                                                 "transaction coordinator does not know it)"),
           "POST for an unknown id " + path)
    st, body = request(url + "/v1/transactions/ops-1", TOKEN, "POST")
    eq(st, 405, "POST to a document")
    eq(txn_doc(url, "ops-1", TOKEN)["state"], "Ongoing", "still open after the refusals")
    st, body = request(abort, TOKEN, "POST")
    eq((st, body), (200, {"transactional_id": "ops-1", "result": "aborted"}), "the abort")

    def aborted():
        x = txn_doc(url, "ops-1", TOKEN)
        return x if x["state"] == "CompleteAbort" else None
    x = wait_for("ops-1 CompleteAbort", aborted)
    eq(x["producer_epoch"], epoch + 1, "the epoch bumped (the producer fenced)")
    eq((x["partitions"], x["age_ms"]), ([], None), "nothing open")

    def stable():
        d = partition_doc(url, topic, 0, TOKEN)
        return d if d["last_stable_offset"] == d["high_watermark"] else None
    d = wait_for("LSO = HW", stable)
    eq((d["high_watermark"], d["open_transactions"]), (8, []), "the ABORT marker, nothing open")
    eq(kcat_committed(b, topic), ["c0", "c1", "c2", "c3"], "read_committed sees none of it")
    st, body = request(abort, TOKEN, "POST")
    eq((st, body["error"]["code"]), (409, "INVALID_TXN_STATE"), "a second abort")

    fenced = None
    try:
        p.produce(topic, value=b"late", partition=0)
        p.commit_transaction(30)
    except confluent_kafka.KafkaException as e:
        fenced = e.args[0]
    del p
    check(fenced is not None, "the aborted producer's commit succeeded")
    check(fenced.fatal() or fenced.code() in (confluent_kafka.KafkaError._FENCED,
                                              confluent_kafka.KafkaError.INVALID_PRODUCER_EPOCH),
          "the fenced producer's error %s" % fenced)
    eq(kcat_committed(b, topic), ["c0", "c1", "c2", "c3"], "nothing of the fenced producer")
    check(b.alive(), "the broker is up")


def case_abort_needs_a_token(t):
    need_clients()
    b, url = admin_broker(t, "notoken", None)
    topic = "open"
    kwire.create_topic(b.port, topic, 1)
    p = confluent_kafka.Producer({"bootstrap.servers": b.bootstrap, "transactional.id": "ops-2",
                                  "transaction.timeout.ms": 600000})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce(topic, value=b"x", partition=0)
    eq(p.flush(30), 0, "delivered")
    wait_for("ops-2 Ongoing", lambda: (txn_doc(url, "ops-2", None) or {}).get("state") == "Ongoing")
    st, body = request(url + "/v1/transactions/ops-2/abort", None, "POST")
    eq((st, body["error"]["code"]), (403, "TOKEN_REQUIRED"), "POST without a token configured")
    eq(txn_doc(url, "ops-2", None)["state"], "Ongoing", "not aborted")
    p.commit_transaction(30)
    del p
    eq(kcat_committed(b, topic), ["x"], "committed")


if __name__ == "__main__":
    sys.exit(broker.main([case_lso_held_and_operator_abort, case_abort_needs_a_token]))
