"""client/examples/rdkafka_port.c, a librdkafka program ported to libsamsa by
renaming calls (its configuration and callbacks kept), built by meson and run
against the real samsa-broker: every record delivered on the partition its
topic's partitioner chose, then read back once by a group member, with
statistics documents and a rebalance on the way.

    test_client_example.py SAMSA_BROKER RDKAFKA_PORT [-k CASE]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import main  # noqa: E402

PORT = None


def case_ported_librdkafka_program_produces_and_consumes(t):
    b = t.broker(config={"group.initial.rebalance.delay.ms": "0",
                         "offsets.topic.num.partitions": "1", "num.partitions": "2",
                         "auto.create.topics.enable": "true"})
    p = subprocess.run([PORT, b.bootstrap, "port", "500"], capture_output=True, text=True,
                       timeout=120)
    print(p.stdout, end="")
    if p.returncode != 0:
        raise AssertionError("rdkafka_port: exit %d\n%s%s" % (p.returncode, p.stdout,
                                                               p.stderr[-3000:]))
    if "delivered 500, failed 0, on the wrong partition 0; read 500, twice 0" not in p.stdout:
        raise AssertionError("rdkafka_port: %s" % p.stdout)


if __name__ == "__main__":
    PORT = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_ported_librdkafka_program_produces_and_consumes]))
