#!/usr/bin/env python3
"""TLS and SASL between brokers: three samsa-brokers and a real ZooKeeper on
127.0.0.1 whose replica fetchers, controller channel and transaction
marker sender speak the inter-broker listener's security protocol.

- SASL_SSL only: every broker's one listener is SASL_SSL with
  SCRAM-SHA-512; the brokers' own user (`broker`) and a client's
  (`alice`) are in /config/users before the brokers start, written in
  Kafka's format as kafka-configs.sh (or zkCli) writes them. A topic of
  RF 3 is replicated (acks=all answered through confluent-kafka, the
  replicas' logs identical, every ISR full), the leader killed hands over
  to an ISR member (the controller's LeaderAndIsr reached the others)
  while the producer goes on, and a transaction across partitions led by
  different brokers commits (WriteTxnMarkers over SASL_SSL).
- A broker restarted with a wrong inter-broker password never joins an
  ISR and says why in its log.
- SSL with ssl.client.auth=required: the inter-broker listener wants the
  broker's own certificate as client certificate (its keystore), checks
  the server's against the truststore and its IP SAN
  (ssl.endpoint.identification.algorithm=https); a topic of RF 3
  replicates and fails over.

    test_cluster_interbroker.py path/to/samsa-broker [-k NAME]
"""

import os
import socket
import ssl
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import BrokerError, check, eq, free_port, main  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, produce, wait_for  # noqa: E402
from test_faults import confluent, partition_bytes  # noqa: E402
from test_sasl import scram_credential  # noqa: E402
from test_tls import make_certs  # noqa: E402
import zookeeper  # noqa: E402

MECH = "SCRAM-SHA-512"
USERS = {"broker": "broker-secret", "alice": "alice-secret"}
DEADLINE = 90


def write_users(connect, users):
    """/config/users/<user> in Kafka's format (ConfigCommand's znode)."""
    import json
    from kazoo.client import KazooClient
    kz = KazooClient(hosts=connect)
    kz.start(timeout=30)
    try:
        for user, password in users.items():
            kz.ensure_path(CHROOT + "/config/users")
            kz.create(CHROOT + "/config/users/" + user,
                      json.dumps({"version": 1, "config": {
                          MECH: scram_credential(MECH, password)}}).encode())
    finally:
        kz.stop()
        kz.close()


def tls_ready(b, timeout):
    """The harness's readiness probe (ApiVersions v0) over TLS: a
    SASL_SSL listener answers it before authentication."""
    ctx = ssl.create_default_context(cafile=os.path.join(b.certs, "ca.pem"))
    req = struct.pack(">ihhih", 10, 18, 0, 0x5A5A, 0)
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if b.proc.poll() is not None:
            raise BrokerError("%s exited with status %d during start-up"
                              % (b.name, b.proc.returncode))
        try:
            raw = socket.create_connection(("127.0.0.1", b.port), timeout=2)
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                s.sendall(req)
                head = s.recv(4)
                if len(head) == 4:
                    return {}
        except (OSError, ssl.SSLError) as e:
            last = e
        time.sleep(0.05)
    raise BrokerError("%s did not answer over TLS within %.0f s (last: %s)"
                      % (b.name, timeout, last))


def jaas_line(user, password):
    return ('org.apache.kafka.common.security.scram.ScramLoginModule required '
            'username="%s" password="%s";' % (user, password))


def sasl_ssl_cluster(t, password=USERS["broker"], config=None, plaintext=False):
    """A cluster whose inter-broker listener is SASL_SSL (SCRAM-SHA-512),
    the users written before the brokers start. plaintext: a PLAINTEXT
    listener too, first, where the harness's probes and kafka-python go
    (the fault suite's mode); else SASL_SSL is the one listener."""
    imports()
    certs = make_certs(t.path("certs"))
    zk = zookeeper.ZooKeeper(t.path("zk"))

    def make_broker(i, cfg):
        if i == 0:
            write_users(zk.connect, USERS)
        b = t.broker(name="broker%d" % i, start=False, config=cfg)
        b.certs = certs
        b.sasl_ssl_port = free_port()
        if plaintext:
            b.port = free_port()
            listeners = "PLAINTEXT://127.0.0.1:%d,SASL_SSL://127.0.0.1:%d" % (
                b.port, b.sasl_ssl_port)
        else:
            b.port = b.sasl_ssl_port
            listeners = "SASL_SSL://127.0.0.1:%d" % b.port
            b._wait_ready = lambda timeout, b=b: tls_ready(b, timeout)
        b.extra_config.update({
            "listeners": listeners,
            "inter.broker.listener.name": "SASL_SSL",
            "sasl.enabled.mechanisms": MECH,
            "sasl.mechanism.inter.broker.protocol": MECH,
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":
                jaas_line("broker", password),
            "ssl.keystore.location": os.path.join(certs, "broker.pem"),
            "ssl.truststore.location": os.path.join(certs, "ca.pem"),
            **(config or {}),
        })
        return b

    return Cluster(t, n=3, zk=zk, make_broker=make_broker)


def client_conf(c, user="alice"):
    """confluent-kafka's settings for the cluster's SASL_SSL listeners."""
    return {"bootstrap.servers": ",".join("127.0.0.1:%d" % b.sasl_ssl_port for b in c.brokers),
            "security.protocol": "SASL_SSL", "sasl.mechanism": MECH,
            "sasl.username": user, "sasl.password": USERS[user],
            "ssl.ca.location": os.path.join(c.brokers[0].certs, "ca.pem")}


def in_sync(c, topic, parts, replicas):
    for p in range(parts):
        st = c.state(topic, p)
        if st is None or st["leader"] < 0 or sorted(st["isr"]) != sorted(replicas):
            return False
    return True


def replicated(c, topic, parts, brokers=(0, 1, 2)):
    """Every replica's log of every partition is its leader's, byte for
    byte: the followers' log end reached the high watermark."""
    for p in range(parts):
        logs = {partition_bytes(c.brokers[i], p, topic) for i in brokers}
        if len(logs) != 1 or None in logs:
            return False
    return True


def ck_produce(ck, conf, topic, values, partition=None):
    p = ck.Producer(dict(conf, **{"acks": "all", "message.timeout.ms": 60000}))
    errors = []
    acked = []

    def report(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked.append((msg.partition(), msg.offset()))
    for v in values:
        kw = {} if partition is None else {"partition": partition}
        p.produce(topic, value=v.encode(), on_delivery=report, **kw)
    left = p.flush(90)
    eq((left, len(errors), errors[:3]), (0, 0, []), "acks=all produce to %s (left, failed, "
       "the first failures)" % topic)
    return acked


def ck_read(ck, conf, topic, parts, want, isolation="read_committed"):
    cons = ck.Consumer(dict(conf, **{"group.id": "reader-%s" % topic,
                                     "enable.auto.commit": False,
                                     "isolation.level": isolation}))
    got = []
    try:
        cons.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(parts)])
        deadline = time.monotonic() + DEADLINE
        while len(got) < want and time.monotonic() < deadline:
            m = cons.poll(1.0)
            if m is not None and m.error() is None:
                got.append(m.value().decode())
    finally:
        cons.close()
    return sorted(got)


def case_sasl_ssl_only_cluster_replicates_fails_over_and_commits(t):
    ck = confluent()
    c = sasl_ssl_cluster(t)
    try:
        wait_for(lambda: c.controller() is not None, DEADLINE, "a controller")
        conf = client_conf(c)
        c.create_topic("ib", [[0, 1, 2], [1, 2, 0], [2, 0, 1]],
                       config={"min.insync.replicas": "2"})
        wait_for(lambda: in_sync(c, "ib", 3, [0, 1, 2]), DEADLINE, "ib's ISRs full")
        values = ["v%d" % i for i in range(300)]
        acked = ck_produce(ck, conf, "ib", values)
        check(len({p for p, _ in acked}) > 0, "nothing acknowledged")
        wait_for(lambda: replicated(c, "ib", 3), DEADLINE,
                 "every replica of ib identical to its leader's")
        eq(in_sync(c, "ib", 3, [0, 1, 2]), True, "ib's ISRs after acks=all")
        for b in c.brokers:
            check("authenticated as User:broker with SCRAM-SHA-512 on listener SASL_SSL"
                  in b.log_text(), "%s never authenticated another broker", b.name)

        # the leader of ib-0 killed: the controller's LeaderAndIsr names
        # another ISR member, and the producer goes on
        old = c.state("ib", 0)["leader"]
        c.brokers[old].kill()
        st = wait_for(lambda: c.state("ib", 0)["leader"] not in (old, -1) and c.state("ib", 0),
                      DEADLINE, "a new leader of ib-0")
        check(st["leader"] in (0, 1, 2) and old not in st["isr"], "ib-0 after the kill: %r", st)
        more = ["after-%d" % i for i in range(50)]
        ck_produce(ck, conf, "ib", more, partition=0)
        got = ck_read(ck, conf, "ib", 3, len(values) + len(more), isolation="read_uncommitted")
        eq(got, sorted(values + more), "what was acknowledged, read back after the failover")
        c.brokers[old].start()
        wait_for(lambda: in_sync(c, "ib", 3, [0, 1, 2]), DEADLINE,
                 "broker %d back in every ISR" % old)

        # a transaction over partitions led by the three brokers: the
        # coordinator's markers go to each leader over SASL_SSL
        c.create_topic("ib-txn", [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
        wait_for(lambda: in_sync(c, "ib-txn", 3, [0, 1, 2]), DEADLINE, "ib-txn's ISRs full")
        p = ck.Producer(dict(conf, **{"transactional.id": "ib-tx", "acks": "all"}))
        p.init_transactions(60)
        p.begin_transaction()
        for i in range(30):
            p.produce("ib-txn", value=b"t%d" % i, partition=i % 3)
        p.commit_transaction(60)
        got = ck_read(ck, conf, "ib-txn", 3, 30)
        eq(got, sorted("t%d" % i for i in range(30)), "the committed transaction, read committed")
        wait_for(lambda: replicated(c, "ib-txn", 3), DEADLINE,
                 "ib-txn's replicas (markers included) identical")
    finally:
        c.close()


def case_wrong_inter_broker_password_never_joins_the_isr(t):
    imports()
    c = sasl_ssl_cluster(t)
    try:
        wait_for(lambda: c.controller() is not None, DEADLINE, "a controller")
        c.create_topic("ib-pw", [[0, 1, 2]])
        wait_for(lambda: in_sync(c, "ib-pw", 1, [0, 1, 2]), DEADLINE, "ib-pw's ISR full")
        ctl = c.controller()
        bad = next(i for i in (2, 1, 0) if i != ctl and c.state("ib-pw", 0)["leader"] != i)
        b = c.brokers[bad]
        b.stop()
        wait_for(lambda: bad not in c.state("ib-pw", 0)["isr"], DEADLINE,
                 "broker %d out of the ISR" % bad)
        b.extra_config["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"] = \
            jaas_line("broker", "not-the-password")
        mark = len(b.log_text())
        b.start()
        wait_for(lambda: "SASL SCRAM-SHA-512 with 127.0.0.1:" in b.log_text()[mark:], DEADLINE,
                 "broker %d logs its failed inter-broker authentication" % bad)
        line = next(x for x in b.log_text()[mark:].splitlines()
                    if "SASL SCRAM-SHA-512 with 127.0.0.1:" in x)
        check("as user broker failed: SASL_AUTHENTICATION_FAILED" in line,
              "the failure's line: %r", line)
        # it stays out: several fetch backoffs later, still not in the ISR
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            check(bad not in c.state("ib-pw", 0)["isr"],
                  "broker %d joined the ISR with a wrong password", bad)
            time.sleep(0.5)
    finally:
        c.close()


def case_ssl_inter_broker_listener_with_client_auth_required(t):
    imports()
    certs = make_certs(t.path("certs"))

    def make_broker(i, cfg):
        b = t.broker(name="broker%d" % i, start=False, config=cfg)
        b.port = free_port()
        b.ssl_port = free_port()
        b.extra_config.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d" % (b.port, b.ssl_port),
            "inter.broker.listener.name": "SSL",
            "ssl.client.auth": "required",
            "ssl.endpoint.identification.algorithm": "https",
            "ssl.keystore.location": os.path.join(certs, "broker.pem"),
            "ssl.truststore.location": os.path.join(certs, "ca.pem"),
        })
        return b

    c = Cluster(t, n=3, make_broker=make_broker,
                config={"min.insync.replicas": "2", "replica.lag.time.max.ms": "3000"})
    try:
        wait_for(lambda: c.controller() is not None, DEADLINE, "a controller")
        c.create_topic("ib-ssl", [[0, 1, 2], [1, 2, 0]])
        wait_for(lambda: in_sync(c, "ib-ssl", 2, [0, 1, 2]), DEADLINE, "ib-ssl's ISRs full")
        acked = [(i % 2, "s-%d" % i) for i in range(200)]
        offsets = produce(c.bootstrap(2), "ib-ssl", acked, acks="all")
        eq(sorted(offsets), [0, 1], "partitions acknowledged")
        wait_for(lambda: replicated(c, "ib-ssl", 2), DEADLINE,
                 "every replica of ib-ssl identical to its leader's")
        old = c.state("ib-ssl", 0)["leader"]
        c.brokers[old].kill()
        wait_for(lambda: c.state("ib-ssl", 0)["leader"] not in (old, -1), DEADLINE,
                 "a new leader of ib-ssl-0")
        live = [i for i in range(3) if i != old]
        produce(c.bootstrap(live[0]), "ib-ssl", [(0, "after")], acks="all")
        wait_for(lambda: replicated(c, "ib-ssl", 2, brokers=live), DEADLINE,
                 "the two live replicas identical after the failover")
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_sasl_ssl_only_cluster_replicates_fails_over_and_commits,
                   case_wrong_inter_broker_password_never_joins_the_isr,
                   case_ssl_inter_broker_listener_with_client_auth_required]))
