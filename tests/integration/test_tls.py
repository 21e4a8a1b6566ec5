#!/usr/bin/env python3
"""Listeners with security protocols, and TLS on the SSL ones.

    test_tls.py path/to/samsa-broker [-k NAME]

Each client gets the endpoints of the listener it came in on in Metadata
(Kafka's MetadataCache.getAliveBrokers(listenerName)). On an SSL listener
kcat, kafka-python and confluent-kafka produce and consume; mutual TLS
(ssl.client.auth=required) serves a client with a certificate and refuses
one without, kcat, kafkajs and sarama alike; librdkafka's hostname check refuses a broker certificate
without the IP SAN; garbage and a stalled half-handshake on the SSL port
do not disturb another client. The certificates (ECDSA P-256) are made by
each run with the openssl CLI: a CA, a broker certificate with IP SAN
127.0.0.1, one without it, and a client certificate.
"""

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, free_port, main  # noqa: E402
import kwire  # noqa: E402


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certs(d):
    """ca.pem; broker.pem (key + chain, IP SAN 127.0.0.1); nosan.pem (the
    same without the SAN); client.crt/client.key. Made once per folder.
    Returns d."""
    if os.path.exists(os.path.join(d, "client.crt")):
        return d
    os.makedirs(d, exist_ok=True)
    if shutil.which("openssl") is None:
        raise Skip("no openssl CLI")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=samsa-test-ca",
            cwd=d)

    def leaf(name, cn, ext):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + cn, cwd=d)
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(ext)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", name + ".crt", "-days", "2", "-extfile", name + ".ext",
                cwd=d)

    leaf("broker", "127.0.0.1", "subjectAltName=IP:127.0.0.1\n")
    leaf("nosan", "broker.invalid", "basicConstraints=CA:FALSE\n")
    leaf("client", "samsa-test-client", "extendedKeyUsage=clientAuth\n")
    for name in ("broker", "nosan"):
        with open(os.path.join(d, name + ".pem"), "w") as out:
            for part in (name + ".key", name + ".crt", "ca.pem"):
                with open(os.path.join(d, part)) as f:
                    out.write(f.read())
    return d


def tls_broker(t, cert="broker", extra=None):
    """A broker with PLAINTEXT (b.port, where start() probes) and SSL
    (b.ssl_port) listeners; the certificates in b.certs."""
    certs = make_certs(t.path("certs"))
    b = t.broker(start=False)
    b.port = free_port()
    b.ssl_port = free_port()
    b.certs = certs
    b.extra_config.update({
        "listeners": "PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d" % (b.port, b.ssl_port),
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": os.path.join(certs, cert + ".pem"),
    })
    b.extra_config.update(extra or {})
    b.start()
    return b


def ssl_socket(b, cert=False):
    """A TLS socket to b's SSL listener, verified against the test CA."""
    ctx = ssl.create_default_context(cafile=os.path.join(b.certs, "ca.pem"))
    if cert:
        ctx.load_cert_chain(os.path.join(b.certs, "client.crt"),
                            os.path.join(b.certs, "client.key"))
    raw = socket.create_connection(("127.0.0.1", b.ssl_port), timeout=10)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def kcat(b, *args, props=None, data=None, timeout=60):
    if shutil.which("kcat") is None:
        raise Skip("no kcat")
    argv = ["kcat", "-b", "127.0.0.1:%d" % b.ssl_port, "-X", "security.protocol=ssl",
            "-X", "ssl.ca.location=" + os.path.join(b.certs, "ca.pem")]
    for k, v in (props or {}).items():
        argv += ["-X", "%s=%s" % (k, v)]
    return subprocess.run(argv + list(args), input=data, capture_output=True, timeout=timeout)


def kcat_roundtrip(b, topic, props=None):
    lines = b"".join(b"m%d\n" % i for i in range(100))
    r = kcat(b, "-P", "-t", topic, props=props, data=lines)
    eq(r.returncode, 0, "kcat -P exit (%s)" % r.stderr.decode(errors="replace")[-300:])
    r = kcat(b, "-C", "-t", topic, "-o", "beginning", "-e", "-q", props=props)
    eq(r.returncode, 0, "kcat -C exit (%s)" % r.stderr.decode(errors="replace")[-300:])
    eq(r.stdout, lines, "what kcat read back over TLS")


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


def case_kcat_over_ssl(t):
    b = tls_broker(t)
    kcat_roundtrip(b, "kcat-tls")
    b.stop()


def case_kafka_python_over_ssl(t):
    try:
        import kafka
    except ImportError:
        raise Skip("no kafka-python")
    b = tls_broker(t)
    common = dict(bootstrap_servers="127.0.0.1:%d" % b.ssl_port, security_protocol="SSL",
                  ssl_cafile=os.path.join(b.certs, "ca.pem"), api_version=(2, 0, 0))
    p = kafka.KafkaProducer(**common)
    for i in range(50):
        p.send("kp-tls", b"v%d" % i)
    p.flush(30)
    p.close()
    c = kafka.KafkaConsumer("kp-tls", auto_offset_reset="earliest", consumer_timeout_ms=15000,
                            **common)
    got = [m.value for m in c]
    c.close()
    eq(got, [b"v%d" % i for i in range(50)], "what kafka-python read over TLS")
    b.stop()


def case_confluent_kafka_over_ssl(t):
    try:
        import confluent_kafka
    except ImportError:
        raise Skip("no confluent-kafka")
    b = tls_broker(t)
    conf = {"bootstrap.servers": "127.0.0.1:%d" % b.ssl_port, "security.protocol": "ssl",
            "ssl.ca.location": os.path.join(b.certs, "ca.pem")}
    p = confluent_kafka.Producer(conf)
    for i in range(50):
        p.produce("ck-tls", b"c%d" % i)
    eq(p.flush(30), 0, "messages left unsent")
    c = confluent_kafka.Consumer(dict(conf, **{"group.id": "g", "auto.offset.reset": "earliest"}))
    c.subscribe(["ck-tls"])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 50 and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is not None and m.error() is None:
            got.append(m.value())
    c.close()
    eq(got, [b"c%d" % i for i in range(50)], "what confluent-kafka read over TLS")
    b.stop()


def case_mutual_tls_required(t):
    """ssl.client.auth=required, given for the SSL listener alone
    (listener.name.ssl.): a client without a certificate is refused, one
    with a certificate of the trusted CA is served."""
    certs = make_certs(t.path("certs"))
    b = tls_broker(t, extra={
        "listener.name.ssl.ssl.client.auth": "required",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": os.path.join(certs, "ca.pem"),
    })
    r = kcat(b, "-L", "-m", "5")
    check(r.returncode != 0, "kcat without a certificate was served: %r", r.stdout[-200:])
    mine = {"ssl.certificate.location": os.path.join(certs, "client.crt"),
            "ssl.key.location": os.path.join(certs, "client.key")}
    kcat_roundtrip(b, "mtls", props=mine)
    check("handshake failed" in b.log_text(), "no log line for the refused handshake")
    # the PLAINTEXT listener asks for nothing
    with kwire.connect(b.port) as s:
        eq(metadata_brokers(s), [(0, "127.0.0.1", b.port)], "brokers seen on PLAINTEXT")
    b.stop()


HERE = os.path.dirname(os.path.abspath(__file__))


def mtls_broker(t):
    """A broker whose SSL listener requires a client certificate of the test CA."""
    certs = make_certs(t.path("certs"))
    return tls_broker(t, extra={
        "listener.name.ssl.ssl.client.auth": "required",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": os.path.join(certs, "ca.pem"),
    })


def case_kafkajs_over_tls_and_mutual_tls(t):
    """kafkajs 2.2.4 (Node's TLS) with the test CA and a client certificate
    produces to and reads back from a listener that requires one; without
    the certificate it is refused."""
    try:
        sys.path.insert(0, os.path.join(HERE, "..", "interop"))
        from test_kafkajs import node_dir
        nd = node_dir()
    except Exception as e:  # no npm, no network: as the interop tests
        raise Skip("no kafkajs: %s" % str(e).splitlines()[0][:200])
    b = mtls_broker(t)
    env = dict(os.environ, NODE_PATH=os.path.join(nd, "node_modules"),
               KAFKAJS_NO_PARTITIONER_WARNING="1")

    def run(*tls):
        p = subprocess.run(["node", os.path.join(HERE, "sasl_kafkajs.js"),
                            "127.0.0.1:%d" % b.ssl_port, "-", "-", "-", "kjs-tls", "20", *tls],
                           capture_output=True, env=env, timeout=120)
        check(p.returncode == 0, "sasl_kafkajs.js exited with %d: %s", p.returncode,
              p.stderr.decode(errors="replace")[-1000:])
        return json.loads(p.stdout.decode().strip().splitlines()[-1])
    ca = os.path.join(b.certs, "ca.pem")
    got = run(ca, os.path.join(b.certs, "client.crt"), os.path.join(b.certs, "client.key"))
    eq(got.get("values"), ["--%d" % i for i in range(20)], "what kafkajs read over mutual TLS")
    refused = run(ca)
    check("error" in refused, "kafkajs without a certificate was served: %r", refused)
    b.stop()


def case_sarama_over_tls_and_mutual_tls(t):
    """sarama 1.22 (Go's crypto/tls, the broker checked by its IP SAN) with a
    client certificate produces to and reads back from a listener that
    requires one; without the certificate it is refused. Run by
    interop-tls-sarama, where the Go clients are built ($SAMSA_GO_CLIENTS)."""
    try:
        sys.path.insert(0, os.path.join(HERE, "..", "interop"))
        from goclients import go_run
    except ImportError:
        raise Skip("no goclients")
    if not os.environ.get("SAMSA_GO_CLIENTS"):
        raise Skip("the Go clients are not built here ($SAMSA_GO_CLIENTS)")
    b = mtls_broker(t)
    brokers = "127.0.0.1:%d" % b.ssl_port
    tls = ["-tls-ca", os.path.join(b.certs, "ca.pem"),
           "-tls-cert", os.path.join(b.certs, "client.crt"),
           "-tls-key", os.path.join(b.certs, "client.key")]
    out = go_run("sarama-client", "produce", "-brokers", brokers, "-topic", "sarama-tls",
                 "-n", 20, "-partitions", 1, *tls)
    eq(len(out), 20, "messages sarama acknowledged")
    got = go_run("sarama-client", "consume", "-brokers", brokers, "-topic", "sarama-tls",
                 "-partitions", 1, *tls)
    eq([m["value"] for m in got if "value" in m], ["value-%d" % i for i in range(20)],
       "what sarama read")
    r = None
    try:
        go_run("sarama-client", "list-topics", "-brokers", brokers, *tls[:2], timeout=60)
    except AssertionError as e:
        r = str(e)
    check(r is not None, "sarama without a certificate was served")
    b.stop()


def case_certificate_without_ip_san_refused(t):
    """librdkafka checks the broker's name (ssl.endpoint.identification.
    algorithm=https): a certificate without IP SAN 127.0.0.1 is refused."""
    b = tls_broker(t, cert="nosan")
    r = kcat(b, "-L", "-m", "5", props={"ssl.endpoint.identification.algorithm": "https"})
    check(r.returncode != 0, "kcat accepted a certificate without the SAN: %r", r.stdout[-200:])
    b.stop()


def case_plaintext_and_ssl_side_by_side(t):
    """One broker, a PLAINTEXT and an SSL listener: Metadata on each names
    that listener's port."""
    b = tls_broker(t)
    with kwire.connect(b.port) as s:
        eq(metadata_brokers(s), [(0, "127.0.0.1", b.port)], "brokers seen on PLAINTEXT")
    with ssl_socket(b) as s:
        eq(metadata_brokers(s), [(0, "127.0.0.1", b.ssl_port)], "brokers seen on SSL")
    b.stop()


def case_hostile_handshakes_do_not_harm_others(t):
    """Garbage, a plaintext Kafka request and a half-handshake that stalls,
    all on the SSL port, while a TLS client produces and reads back: it is
    served, and the broken connections are closed with a log line each."""
    b = tls_broker(t)
    stalled = socket.create_connection(("127.0.0.1", b.ssl_port), timeout=10)
    # the first bytes of a ClientHello record, then nothing
    stalled.sendall(bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]))
    closed = []
    for junk in (os.urandom(600), kwire.api_versions_v0(1)):
        g = socket.create_connection(("127.0.0.1", b.ssl_port), timeout=10)
        g.sendall(junk)
        kwire.wait_closed(g, timeout=10)
        closed.append(g)
    kwire.create_topic(b.port, "hostile-tls", 1)
    with ssl_socket(b) as s:
        for i in range(20):
            kwire.produce(b.ssl_port, "hostile-tls", 0, [(None, b"r%d" % i)], sock=s)
        _, parts = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.fetch_v4(4, "hostile-tls", 0, 0)))
        err, hw, records = parts[("hostile-tls", 0)]
        eq((err, hw), (0, 20), "fetch over TLS: error and high watermark")
        batches, tail = kwire.parse_batches(records)
        eq((len(batches), tail), (20, 0), "batches read back over TLS, bytes after them")
    for g in closed:
        g.close()
    stalled.close()
    deadline = time.monotonic() + 10
    while b.log_text().count("handshake failed") < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    check(b.log_text().count("handshake failed") >= 2, "the refused handshakes were not logged")
    b.stop()


def case_bytes_openssl_holds_are_read_after_a_held_request(t):
    """One TLS write: a long-poll Fetch (parked 1.5 s), a Metadata of about
    100 KB (held until the Fetch is answered, as every request behind an
    unanswered one is) and an ApiVersions. The Metadata's frame ends inside
    a TLS record, so the ApiVersions is decrypted and held by OpenSSL while
    the socket has nothing more to report: it must still be answered once
    the Metadata is."""
    b = tls_broker(t)
    kwire.create_topic(b.port, "held-tls", 1)
    names = ["held-tls-absent-%04d-%s" % (i, "x" * 180) for i in range(500)]
    metadata = kwire.request(kwire.METADATA, 4, 2,
                             kwire.array([kwire.string(n) for n in names]) + kwire.i8(0))
    check(len(metadata) > 90000, "the Metadata is only %d bytes", len(metadata))
    with ssl_socket(b) as s:
        s.sendall(kwire.fetch_v4(1, "held-tls", 0, 0, max_wait_ms=1500)
                  + metadata + kwire.api_versions_v0(3))
        got = [kwire.correlation_id(kwire.recv_frame(s, timeout=15)) for _ in range(3)]
    eq(got, [1, 2, 3], "correlation ids answered, in order")
    b.stop()


def case_pkcs12_and_inline_pem_keystores(t):
    """ssl.keystore.type=PKCS12 with its password, and the PEM key and chain
    given inline (ssl.keystore.key, ssl.keystore.certificate.chain, the
    newlines written as \\n as java.util.Properties reads them): kcat is
    served over both."""
    certs = make_certs(t.path("certs"))
    openssl("pkcs12", "-export", "-inkey", "broker.key", "-in", "broker.crt", "-certfile",
            "ca.pem", "-out", "broker.p12", "-passout", "pass:p12secret", cwd=certs)
    b = tls_broker(t, extra={
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": os.path.join(certs, "broker.p12"),
        "ssl.keystore.password": "p12secret",
    })
    kcat_roundtrip(b, "p12-tls")
    b.stop()

    def inline(name):
        with open(os.path.join(certs, name)) as f:
            return f.read().strip().replace("\n", "\\n")
    b2 = t.broker(name="inline", start=False)
    b2.port = free_port()
    b2.ssl_port = free_port()
    b2.certs = certs
    b2.extra_config.update({
        "listeners": "PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d" % (b2.port, b2.ssl_port),
        "listener.name.ssl.ssl.keystore.type": "PEM",
        "listener.name.ssl.ssl.keystore.key": inline("broker.key"),
        "listener.name.ssl.ssl.keystore.certificate.chain": inline("broker.crt"),
    })
    b2.start()
    kcat_roundtrip(b2, "inline-tls")
    b2.stop()


def case_protocols_and_cipher_suites(t):
    """ssl.enabled.protocols=TLSv1.2 and one suite by its IANA (Java) name:
    the handshake uses that version and that suite."""
    b = tls_broker(t, extra={"ssl.enabled.protocols": "TLSv1.2",
                             "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"})
    with ssl_socket(b) as s:
        eq((s.version(), s.cipher()[0]), ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384"),
           "the version and suite negotiated")
        eq(metadata_brokers(s), [(0, "127.0.0.1", b.ssl_port)], "brokers seen on SSL")
    b.stop()


def case_configurations_refused_at_start(t):
    """What Samsa cannot honour stops start-up with a message that says
    what to do: a JKS keystore, TLSv1.1, ssl.client.auth=required without a
    truststore, a SASL listener, a wrong PEM key password."""
    certs = make_certs(t.path("certs"))
    openssl("pkey", "-in", "broker.key", "-out", "broker-enc.key", "-aes256", "-passout",
            "pass:right", cwd=certs)
    with open(os.path.join(certs, "broker-enc.pem"), "w") as out:
        for part in ("broker-enc.key", "broker.crt"):
            with open(os.path.join(certs, part)) as f:
                out.write(f.read())
    base = {"ssl.keystore.location": os.path.join(certs, "broker.pem")}
    refused = [
        ({"ssl.keystore.type": "JKS"}, "keytool -importkeystore"),
        ({"ssl.enabled.protocols": "TLSv1.1"}, "TLSv1.1 is not offered"),
        ({"ssl.client.auth": "required"}, "needs a truststore"),
        ({"ssl.keystore.location": os.path.join(certs, "broker-enc.pem"),
          "ssl.key.password": "wrong"}, "wrong ssl.key.password"),
        ({"listeners": "PLAINTEXT://127.0.0.1:%d,SASL_SSL://127.0.0.1:%d"
          % (free_port(), free_port())}, "set sasl.enabled.mechanisms"),
    ]
    for i, (cfg, needle) in enumerate(refused):
        b = t.broker(name="refused%d" % i, start=False)
        b.port = free_port()
        b.extra_config.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d" % (b.port, free_port())})
        b.extra_config.update(base)
        b.extra_config.update(cfg)
        rc = b.run_to_exit()
        check(rc != 0, "%r: the broker started", cfg)
        check(needle in b.log_text(), "%r: no %r in its log: %s", cfg, needle,
              b.log_text()[-400:])
    # the right password reads the encrypted key
    b = tls_broker(t, extra={"ssl.keystore.location": os.path.join(certs, "broker-enc.pem"),
                             "ssl.key.password": "right"})
    with ssl_socket(b) as s:
        eq(metadata_brokers(s), [(0, "127.0.0.1", b.ssl_port)], "brokers seen on SSL")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([
        case_each_listener_answers_with_its_own_endpoints,
        case_plaintext_and_ssl_side_by_side,
        case_kcat_over_ssl,
        case_kafka_python_over_ssl,
        case_confluent_kafka_over_ssl,
        case_mutual_tls_required,
        case_kafkajs_over_tls_and_mutual_tls,
        case_sarama_over_tls_and_mutual_tls,
        case_certificate_without_ip_san_refused,
        case_hostile_handshakes_do_not_harm_others,
        case_bytes_openssl_holds_are_read_after_a_held_request,
        case_pkcs12_and_inline_pem_keystores,
        case_protocols_and_cipher_suites,
        case_configurations_refused_at_start,
    ]))
