#!/usr/bin/python3
"""max.connections.per.ip and max.connections.per.ip.overrides (Kafka 2.0's
SocketServer ConnectionQuotas) on raw sockets from 127.0.0.1.

    test_connections_per_ip.py SAMSA_BROKER [-k CASE]

With max.connections.per.ip=3 three connections are served and the fourth
is closed by the broker at accept, while the three are served still;
closing one lets a new one in; the refusals are counted in the admin API's
broker document and /metrics and logged as Kafka logs them. With an
override for 127.0.0.1 (and max.connections.per.ip=0, which Kafka allows
only with overrides) the limit is the override's.
"""

import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, main  # noqa: E402
from test_admin_api import get, standalone  # noqa: E402
from test_cluster import wait_for  # noqa: E402
from test_connections import peer_closed, served  # noqa: E402


def connections(url):
    """The broker document's connection counts (its first snapshot waited
    for: before it the document is a 503)."""
    def doc():
        st, body = get(url + "/v1/brokers/0")
        return body if st == 200 else None
    return wait_for(doc, 10, "the broker document")["connections"]


def connect(b):
    return socket.create_connection(("127.0.0.1", b.port), timeout=10)


def closed_by_broker(s, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if peer_closed(s):
            return True
        time.sleep(0.05)
    return False


def fill_and_refuse(b, url, limit):
    """limit connections served, the next one closed; returns the served."""
    # the start-up probe's connections gone first: they count too
    wait_for(lambda: connections(url)["open"] == 0, 15, "no connection open")
    socks = []
    for i in range(limit):
        s = connect(b)
        served(b, s, 10 * i + 1)
        socks.append(s)
    extra = connect(b)
    check(closed_by_broker(extra), "connection %d from 127.0.0.1 not closed (limit %d)",
          limit + 1, limit)
    extra.close()
    for i, s in enumerate(socks):
        served(b, s, 100 + 10 * i)  # the others are served on
    return socks


def case_fourth_connection_closed_and_a_closed_one_makes_room(t):
    b, url = standalone(t, "perip", **{"max.connections.per.ip": "3"})
    socks = fill_and_refuse(b, url, 3)
    socks[0].close()

    def one_more():
        s = connect(b)
        if closed_by_broker(s, 0.5):
            s.close()
            return None
        return s
    s = wait_for(one_more, 15, "a new connection served once one closed")
    served(b, s, 500)
    c = wait_for(lambda: (lambda c: c if c["refused_per_ip"] >= 1 else None)(connections(url)),
                 10, "the refusal counted")
    check(c["refused"] >= c["refused_per_ip"], "refused counts the per-ip refusals: %r", c)
    st, text = get(url + "/metrics")
    line = [x for x in text.splitlines()
            if x.startswith("samsa_server_connections_refused_per_ip_total ")]
    check(line and float(line[0].split()[1]) >= 1, "the metric: %r", line)
    check("Rejected connection from 127.0.0.1, address already has the configured maximum of "
          "3 connections" in b.log_text(), "the refusal logged as Kafka logs it: %s",
          b.log_text()[-500:])
    for x in socks[1:] + [s]:
        x.close()
    b.stop()


def case_override_for_the_address_is_its_limit(t):
    b, url = standalone(t, "override", **{
        "max.connections.per.ip": "0",
        "max.connections.per.ip.overrides": "10.9.8.7:50, 127.0.0.1:2"})
    socks = fill_and_refuse(b, url, 2)
    check("maximum of 2 connections (max.connections.per.ip.overrides" in b.log_text(),
          "the override named in the log: %s", b.log_text()[-500:])
    for s in socks:
        s.close()
    b.stop()


def case_many_addresses_counted_apart(t):
    """One connection from each of 150 loopback addresses (127.0.0.2 up:
    the per-address table grows past its first 64 slots), a second from
    any of them closed; every other one closed, then each address served
    again (counts given back, the table's slots emptied and moved)."""
    b, url = standalone(t, "many", **{"max.connections.per.ip": "1"})
    wait_for(lambda: connections(url)["open"] == 0, 15, "no connection open")
    n = 150

    def from_addr(i):
        s = socket.socket()
        s.settimeout(10)
        s.bind(("127.0.0.%d" % (2 + i), 0))
        s.connect(("127.0.0.1", b.port))
        return s
    socks = [from_addr(i) for i in range(n)]
    for i, s in enumerate(socks):
        served(b, s, 1000 + 2 * i)
    for i in (0, 63, 64, 149):
        extra = from_addr(i)
        check(closed_by_broker(extra), "a second connection from 127.0.0.%d served", 2 + i)
        extra.close()
    for i in range(0, n, 2):
        socks[i].close()
    wait_for(lambda: connections(url)["open"] == n // 2, 15, "half of them closed")
    for i in range(0, n, 2):
        socks[i] = from_addr(i)
        served(b, socks[i], 5000 + 2 * i)
    for i in range(1, n, 2):
        served(b, socks[i], 9000 + 2 * i)  # the others served on
    for s in socks:
        s.close()
    b.stop()  # with connections still counted at exit (no leak under ASan)


if __name__ == "__main__":
    sys.exit(main([case_fourth_connection_closed_and_a_closed_one_makes_room,
                   case_override_for_the_address_is_its_limit,
                   case_many_addresses_counted_apart]))
