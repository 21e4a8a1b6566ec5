#!/usr/bin/python3
"""kafka-python's consumer at its defaults, for tests/perf/consumer-defaults.

    consume_kafka_python.py BOOTSTRAP TOPIC PARTITIONS COUNT TIMEOUT_S

Assigns partitions 0..PARTITIONS-1 of TOPIC (no group: kafka-python needs
none for assign()), seeks to the beginning and polls until COUNT messages
arrived or TIMEOUT_S passed. Every consumer setting is kafka-python's
default (fetch_max_bytes 50 MiB, max_partition_fetch_bytes 1 MiB,
fetch_min_bytes 1, fetch_max_wait_ms 500, max_poll_records 500).
Throughput is from the assignment to the last message. Prints one line of
JSON; exits 0 when COUNT messages arrived, 1 when not.
"""

import json
import sys
import time

from kafka import KafkaConsumer, TopicPartition


def main(argv):
    if len(argv) != 5:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    bootstrap, topic = argv[0], argv[1]
    partitions, count, timeout_s = int(argv[2]), int(argv[3]), float(argv[4])
    deadline = time.monotonic() + timeout_s
    c = KafkaConsumer(bootstrap_servers=bootstrap, client_id="consumer-defaults")
    got = 0
    nbytes = 0
    cpu0 = time.process_time()
    t0 = time.monotonic()
    t_last = t0
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        while got < count and time.monotonic() < deadline:
            batches = c.poll(timeout_ms=500)
            for recs in batches.values():
                for r in recs:
                    got += 1
                    nbytes += len(r.value or b"") + len(r.key or b"")
            if batches:
                t_last = time.monotonic()
    finally:
        c.close()
    elapsed = t_last - t0
    out = {"client": "kafka-python", "complete": got >= count, "msgs": got, "bytes": nbytes,
           "elapsed_s": round(elapsed, 6),
           "msgs_per_s": round(got / elapsed, 1) if elapsed > 0 else 0.0,
           "client_cpu_s": round(time.process_time() - cpu0, 3)}
    print(json.dumps(out), flush=True)
    if got < count:
        print("consume_kafka_python.py: %d of %d messages before the deadline" % (got, count),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
