#!/usr/bin/python3
"""A transactional copier, as Kafka 2.0's TransactionalMessageCopier
(tools/src/main/java/org/apache/kafka/tools/TransactionalMessageCopier.java):
reads one input partition read_committed from its group's committed offset,
writes each record to the output partition inside a transaction with the
consumer's offsets (send_offsets_to_transaction), N records per
transaction, and aborts one transaction in three at random (rewinding the
consumer to what the group committed). Ends with status 0 once the
committed offset reaches --until; a fatal error ends it with status 3, any
other trouble with 1 (the test starts it again).

    txn_copier.py BOOTSTRAP IN OUT TXN_ID GROUP --until N [--per-txn K] [--seed S]

Prints one line per committed transaction: "committed <offset>".
"""

import argparse
import random
import sys

import confluent_kafka as ck


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bootstrap")
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("txn_id")
    ap.add_argument("group")
    ap.add_argument("--until", type=int, required=True)
    ap.add_argument("--per-txn", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    cons = ck.Consumer({"bootstrap.servers": a.bootstrap, "group.id": a.group,
                        "enable.auto.commit": False, "auto.offset.reset": "earliest",
                        "isolation.level": "read_committed"})
    prod = ck.Producer({"bootstrap.servers": a.bootstrap, "transactional.id": a.txn_id,
                        "transaction.timeout.ms": 10000})
    src = ck.TopicPartition(a.src, 0)
    prod.init_transactions(60)
    committed = cons.committed([src], timeout=30)[0].offset
    start = committed if committed >= 0 else 0
    cons.assign([ck.TopicPartition(a.src, 0, start)])
    while start < a.until:
        prod.begin_transaction()
        n = 0
        while n < a.per_txn and start + n < a.until:
            m = cons.poll(10)
            if m is None:
                continue
            if m.error():
                raise SystemExit("consumer: %s" % m.error())
            prod.produce(a.dst, key=m.key(), value=m.value(), partition=0)
            n += 1
        pos = cons.position([src])
        prod.send_offsets_to_transaction(pos, cons.consumer_group_metadata(), 60)
        if rnd.random() < 1 / 3:
            prod.abort_transaction(60)
            cons.seek(ck.TopicPartition(a.src, 0, start))
            continue
        prod.commit_transaction(60)
        start = pos[0].offset
        print("committed %d" % start, flush=True)
    cons.close()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ck.KafkaException as e:
        err = e.args[0]
        print("copier: %s" % err, file=sys.stderr, flush=True)
        sys.exit(3 if err.fatal() else 1)
