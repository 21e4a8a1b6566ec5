#!/usr/bin/env python3
"""Listeners with security protocols, and TLS on the SSL ones.

    test_tls.py path/to/samsa-broker [-k NAME]

Each client gets the endpoints of the listener it came in on in Metadata
(Kafka's MetadataCache.getAliveBrokers(listenerName)).
"""

import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, free_port, main  # noqa: E402
import kwire  # noqa: E402


def metadata_brokers(sock):
    """The (id, host, port) brokers of a Metadata v1 on sock."""
    _, brokers, _, _ = kwire.parse_metadata_v1(kwire.roundtrip(sock, kwire.metadata_v1(7, [])))
    return brokers


def case_each_listener_answers_with_its_own_endpoints(t):
    """Two listeners of different names: a client that came in on one sees
    that listener's advertised endpoint, not the other's."""
    ext = free_port()
    b = t.broker(config={
        "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
    }, start=False)
    b.port = free_port()
    b.extra_config["listeners"] = "INTERNAL://127.0.0.1:%d,EXTERNAL://127.0.0.1:%d" % (b.port, ext)
    b.extra_config["advertised.listeners"] = ("INTERNAL://127.0.0.1:%d,EXTERNAL://localhost:%d"
                                              % (b.port, ext))
    b.start()
    with kwire.connect(b.port) as s:
        eq(metadata_brokers(s), [(0, "127.0.0.1", b.port)], "brokers seen on INTERNAL")
    with kwire.connect(ext) as s:
        eq(metadata_brokers(s), [(0, "localhost", ext)], "brokers seen on EXTERNAL")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([
        case_each_listener_answers_with_its_own_endpoints,
    ]))
