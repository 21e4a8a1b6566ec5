#!/usr/bin/env python3
"""SSL listeners on a cluster: two samsa-brokers and a real ZooKeeper on
127.0.0.1, each with a PLAINTEXT listener (the brokers' own) and an SSL one.

- each broker registers both listeners in /brokers/ids/<id> with their
  security protocols, as Kafka's BrokerIdZNode holds them;
- Metadata on a broker's PLAINTEXT listener lists every broker's PLAINTEXT
  endpoint, on its SSL listener every broker's SSL endpoint (the controller
  carries all of them in UpdateMetadata);
- kcat over SSL, bootstrapped on broker 0, produces to and consumes from a
  partition that broker 1 leads and broker 0 follows (replicated over
  PLAINTEXT).

    test_cluster_tls.py path/to/samsa-broker [-k NAME]
"""

import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import eq, free_port, main  # noqa: E402
import kwire  # noqa: E402
from test_cluster import Cluster, imports, wait_for  # noqa: E402
from test_tls import kcat_roundtrip, make_certs, metadata_brokers, ssl_socket  # noqa: E402


def case_cluster_registers_and_serves_each_listener(t):
    imports()
    certs = make_certs(t.path("certs"))

    def make_broker(i, cfg):
        b = t.broker(name="broker%d" % i, start=False, config=cfg)
        b.port = free_port()
        b.ssl_port = free_port()
        b.certs = certs
        b.extra_config.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d" % (b.port, b.ssl_port),
            "ssl.keystore.location": os.path.join(certs, "broker.pem"),
        })
        return b

    c = Cluster(t, n=2, make_broker=make_broker)
    try:
        for i, b in enumerate(c.brokers):
            reg = c.json("/brokers/ids/%d" % i)
            eq(reg["endpoints"], ["PLAINTEXT://127.0.0.1:%d" % b.port,
                                  "SSL://127.0.0.1:%d" % b.ssl_port], "broker %d's endpoints" % i)
            eq(reg["listener_security_protocol_map"], {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"},
               "broker %d's protocol map" % i)
            eq((reg["host"], reg["port"]), ("127.0.0.1", b.port), "broker %d's host and port" % i)
        plain = sorted((i, "127.0.0.1", b.port) for i, b in enumerate(c.brokers))
        tls = sorted((i, "127.0.0.1", b.ssl_port) for i, b in enumerate(c.brokers))
        for b in c.brokers:
            def seen(b=b):
                with kwire.connect(b.port) as s:
                    return sorted(metadata_brokers(s)) == plain
            wait_for(seen, 60, "%s's Metadata on PLAINTEXT lists both brokers" % b.name)
            with ssl_socket(b) as s:
                eq(sorted(metadata_brokers(s)), tls, "%s's Metadata on SSL" % b.name)
        c.create_topic("cluster-tls", [[1, 0]])

        def led():
            with kwire.connect(c.brokers[0].port) as s:
                _, _, _, topics = kwire.parse_metadata_v1(
                    kwire.roundtrip(s, kwire.metadata_v1(5, ["cluster-tls"])))
            return topics.get("cluster-tls", (1, {}))[1].get(0) == (0, 1)
        wait_for(led, 60, "cluster-tls led by broker 1")
        kcat_roundtrip(c.brokers[0], "cluster-tls")
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_cluster_registers_and_serves_each_listener]))
