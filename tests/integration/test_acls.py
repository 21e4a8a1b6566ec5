#!/usr/bin/env python3
"""ACLs on a standalone broker (Kafka 2.0's SimpleAclAuthorizer rules),
the principals those of mutual TLS ("User:CN=alice").

    test_acls.py path/to/samsa-broker [-k NAME]

- acls_through_kafka_python: authorizer.class.name set, super.users the
  admin's certificate; kafka-python's admin client (as the super user)
  creates ACLs (CreateAcls v1: a literal topic, a prefixed one, a group)
  and reads them back (DescribeAcls); confluent-kafka as alice produces
  to and reads, in a group, the topic she may use, while bob is refused
  with Kafka's errors (TOPIC_AUTHORIZATION_FAILED in his delivery report,
  GROUP_AUTHORIZATION_FAILED or a topic denial for his group) and his
  all-topics Metadata does not list it; a prefixed ACL grants every topic
  its prefix starts; DeleteAcls removes alice's Write and her next
  produce is refused; after a restart the ACLs are read back from the
  broker's acls.json; an invalid binding (a Cluster named otherwise) is
  refused with INVALID_REQUEST.
- acls_through_librdkafka_and_kafkajs: librdkafka's C admin API
  (acl_rdkafka.c: rd_kafka_CreateAcls, DescribeAcls, DeleteAcls) and
  kafkajs's (acl_kafkajs.js: createAcls, describeAcls, deleteAcls) as the
  super user create, list and delete ACLs, literal and prefixed, each
  change seen in alice's deliveries; bob, no super user, is refused by both
  with CLUSTER_AUTHORIZATION_FAILED.
- authorizers_refused_at_start: an unknown authorizer class and a damaged
  acls.json stop start-up with a sentence.
- acl_requests_without_an_authorizer: DescribeAcls answers
  SECURITY_DISABLED (kafka-python raises it).

Every process is stopped by its PID.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, main  # noqa: E402
from test_tls import make_certs, openssl, tls_broker  # noqa: E402


def client_cert(d, cn):
    """d/<cn>.crt and .key, signed by the test CA, subject CN=<cn>."""
    if not os.path.exists(os.path.join(d, cn + ".crt")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", cn + ".key", "-out", cn + ".csr", "-subj", "/CN=" + cn, cwd=d)
        with open(os.path.join(d, cn + ".ext"), "w") as f:
            f.write("extendedKeyUsage=clientAuth\n")
        openssl("x509", "-req", "-in", cn + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", cn + ".crt", "-days", "2", "-extfile", cn + ".ext",
                cwd=d)
    return os.path.join(d, cn + ".crt"), os.path.join(d, cn + ".key")


def libs():
    try:
        import confluent_kafka
        import kafka.admin
    except ImportError as e:
        raise Skip("needs kafka-python and confluent-kafka (%s)" % e)
    return confluent_kafka, kafka.admin


def acl_broker(t):
    certs = make_certs(t.path("certs"))
    for who in ("alice", "bob", "admin"):
        client_cert(certs, who)
    return tls_broker(t, extra={
        "listener.name.ssl.ssl.client.auth": "required",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": os.path.join(certs, "ca.pem"),
        "authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer",
        "super.users": "User:CN=admin;User:CN=nobody",
    })


def ck_conf(b, who):
    crt, key = client_cert(b.certs, who)
    return {"bootstrap.servers": "127.0.0.1:%d" % b.ssl_port, "security.protocol": "ssl",
            "ssl.ca.location": os.path.join(b.certs, "ca.pem"),
            "ssl.certificate.location": crt, "ssl.key.location": key}


def admin(b, kadmin, who="admin"):
    crt, key = client_cert(b.certs, who)
    return kadmin.KafkaAdminClient(
        bootstrap_servers="127.0.0.1:%d" % b.ssl_port, security_protocol="SSL",
        ssl_cafile=os.path.join(b.certs, "ca.pem"), ssl_certfile=crt, ssl_keyfile=key,
        api_version=(2, 0, 0), request_timeout_ms=20000)


def produce(ck, b, who, topic, values):
    """The error names of the delivery reports (None: delivered)."""
    p = ck.Producer(dict(ck_conf(b, who), **{"message.timeout.ms": 10000,
                                             "enable.idempotence": False, "acks": "all"}))
    errs = []
    for v in values:
        p.produce(topic, v.encode(), on_delivery=lambda e, m: errs.append(
            None if e is None else e.name()))
    p.flush(30)
    return errs


def group_read(ck, b, who, topic, group, want):
    c = ck.Consumer(dict(ck_conf(b, who), **{"group.id": group, "auto.offset.reset": "earliest",
                                             "enable.auto.commit": False}))
    got, errors = [], []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 30
        while len(got) < want and time.monotonic() < deadline and not errors:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error() is not None:
                errors.append(m.error().name())
            else:
                got.append(m.value().decode())
    finally:
        c.close()
    return got, errors


def listed_topics(ck, b, who):
    import confluent_kafka.admin as cka
    a = cka.AdminClient(ck_conf(b, who))
    return set(a.list_topics(timeout=20).topics)


def acl(kadmin, rtype, name, principal, op, perm="ALLOW", pattern="LITERAL"):
    return kadmin.ACL(principal=principal, host="*",
                      operation=getattr(kadmin.ACLOperation, op),
                      permission_type=getattr(kadmin.ACLPermissionType, perm),
                      resource_pattern=kadmin.ResourcePattern(
                          getattr(kadmin.ResourceType, rtype), name,
                          getattr(kadmin.ACLResourcePatternType, pattern)))


def case_acls_through_kafka_python(t):
    ck, kadmin = libs()
    b = acl_broker(t)
    adm = admin(b, kadmin)
    # the super user makes the topics
    adm.create_topics([kadmin.NewTopic("orders", 1, 1), kadmin.NewTopic("pay-eu", 1, 1)])
    alice, bob = "User:CN=alice", "User:CN=bob"
    res = adm.create_acls([
        acl(kadmin, "TOPIC", "orders", alice, "WRITE"),
        acl(kadmin, "TOPIC", "orders", alice, "READ"),
        acl(kadmin, "GROUP", "g-alice", alice, "READ"),
        acl(kadmin, "TOPIC", "pay-", bob, "WRITE", pattern="PREFIXED"),
        acl(kadmin, "CLUSTER", "not-the-cluster", bob, "ALTER"),
    ])
    eq(len(res["succeeded"]), 4, "ACLs created")
    eq(len(res["failed"]), 1, "ACLs refused")
    check(getattr(res["failed"][0][1], "__name__", "") == "InvalidRequestError",
          "a Cluster named otherwise refused with %r", res["failed"][0][1])
    flt = kadmin.ACLFilter(principal=None, host=None, operation=kadmin.ACLOperation.ANY,
                           permission_type=kadmin.ACLPermissionType.ANY,
                           resource_pattern=kadmin.ResourcePatternFilter(
                               kadmin.ResourceType.ANY, None, kadmin.ACLResourcePatternType.ANY))
    acls, err = adm.describe_acls(flt)
    check(err.__name__ == "NoError", "DescribeAcls: %s", err)
    eq(sorted((a.resource_pattern.resource_name, a.principal, a.operation.name) for a in acls),
       [("g-alice", alice, "READ"), ("orders", alice, "READ"), ("orders", alice, "WRITE"),
        ("pay-", bob, "WRITE")], "the ACLs DescribeAcls lists")
    # alice writes and reads in her group; bob is refused
    eq(produce(ck, b, "alice", "orders", ["a%d" % i for i in range(20)]), [None] * 20,
       "alice's deliveries")
    got, errors = group_read(ck, b, "alice", "orders", "g-alice", 20)
    eq((sorted(got), errors), (sorted("a%d" % i for i in range(20)), []), "what alice read")
    eq(set(produce(ck, b, "bob", "orders", ["b"])), {"TOPIC_AUTHORIZATION_FAILED"},
       "bob's delivery to orders")
    got, errors = group_read(ck, b, "bob", "orders", "g-alice", 1)
    check(got == [] and errors != [], "bob read %r from orders (errors %r)", got, errors)
    check("orders" not in listed_topics(ck, b, "bob"), "bob's Metadata lists orders")
    check("orders" in listed_topics(ck, b, "alice"), "alice's Metadata lacks orders")
    # the prefixed ACL: bob writes pay-eu
    eq(produce(ck, b, "bob", "pay-eu", ["p"]), [None], "bob's delivery to pay-eu")
    # DeleteAcls: alice's Write goes
    dflt = kadmin.ACLFilter(principal=alice, host=None, operation=kadmin.ACLOperation.WRITE,
                            permission_type=kadmin.ACLPermissionType.ANY,
                            resource_pattern=kadmin.ResourcePatternFilter(
                                kadmin.ResourceType.TOPIC, "orders",
                                kadmin.ACLResourcePatternType.LITERAL))
    deleted = adm.delete_acls([dflt])
    eq(len(deleted[0][1]), 1, "ACLs DeleteAcls matched")
    adm.close()
    eq(set(produce(ck, b, "alice", "orders", ["late"])), {"TOPIC_AUTHORIZATION_FAILED"},
       "alice's delivery after her Write went")
    with open(os.path.join(b.log_dir, "acls.json")) as f:
        on_disk = json.load(f)
    eq(len(on_disk["acls"]), 3, "the ACLs in acls.json")
    # a restart reads them back
    b.stop()
    b.start()
    got, errors = group_read(ck, b, "alice", "orders", "g-alice-2", 0)
    adm = admin(b, kadmin)
    acls, err = adm.describe_acls(flt)
    adm.close()
    eq(len(acls), 3, "ACLs after a restart")
    eq(produce(ck, b, "bob", "pay-eu", ["p2"]), [None], "bob's delivery after the restart")
    b.stop()


HERE = os.path.dirname(os.path.abspath(__file__))


def rdkafka_acl(b, who, *args):
    """acl_rdkafka's answer, as `who` (librdkafka's C admin API)."""
    import subprocess
    exe = os.environ.get("SAMSA_ACL_RDKAFKA")
    if not exe or not os.access(exe, os.X_OK):
        raise Skip("acl_rdkafka not built (no librdkafka development files)")
    props = os.path.join(b.dir, "rdkafka-%s.properties" % who)
    with open(props, "w") as f:
        for k, v in ck_conf(b, who).items():
            f.write("%s=%s\n" % (k, v))
    p = subprocess.run([exe, props, *args], capture_output=True, timeout=60)
    check(p.returncode == 0, "acl_rdkafka %s exited with %d: %s", " ".join(args), p.returncode,
          p.stderr.decode(errors="replace")[-1000:])
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def kafkajs_acl(b, who, *args):
    """acl_kafkajs.js's answer, as `who`."""
    import subprocess
    try:
        sys.path.insert(0, os.path.join(HERE, "..", "interop"))
        from test_kafkajs import node_dir
        nd = node_dir()
    except Exception as e:  # no npm, no network: as the interop tests
        raise Skip("no kafkajs: %s" % str(e).splitlines()[0][:200])
    crt, key = client_cert(b.certs, who)
    env = dict(os.environ, NODE_PATH=os.path.join(nd, "node_modules"))
    p = subprocess.run(["node", os.path.join(HERE, "acl_kafkajs.js"),
                        "127.0.0.1:%d" % b.ssl_port, os.path.join(b.certs, "ca.pem"), crt, key,
                        *args], capture_output=True, env=env, timeout=120)
    check(p.returncode == 0, "acl_kafkajs.js %s exited with %d: %s", " ".join(args),
          p.returncode, p.stderr.decode(errors="replace")[-1000:])
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def case_acls_through_librdkafka_and_kafkajs(t):
    """librdkafka's C admin API (as the super user) creates alice's Write on
    "ledger" and describes it; kafkajs describes it too and, as the super
    user, deletes it; bob, no super user, is refused by both clients with
    CLUSTER_AUTHORIZATION_FAILED; each ACL change is seen in alice's
    deliveries (TOPIC_AUTHORIZATION_FAILED without it)."""
    ck, kadmin = libs()
    b = acl_broker(t)
    adm = admin(b, kadmin)
    adm.create_topics([kadmin.NewTopic("ledger", 1, 1)])
    adm.close()
    alice = "User:CN=alice"
    eq(set(produce(ck, b, "alice", "ledger", ["x"])), {"TOPIC_AUTHORIZATION_FAILED"},
       "alice's delivery before any ACL")
    grant = ("Topic", "ledger", "Literal", alice, "Write", "Allow")
    eq(rdkafka_acl(b, "bob", "create", *grant)["error"], "CLUSTER_AUTHORIZATION_FAILED",
       "bob's CreateAcls through librdkafka")
    r = rdkafka_acl(b, "admin", "create", *grant)
    eq(r["error"], None, "CreateAcls through librdkafka (%s)" % r["message"])
    eq(produce(ck, b, "alice", "ledger", ["a%d" % i for i in range(5)]), [None] * 5,
       "alice's deliveries once librdkafka created her ACL")
    r = rdkafka_acl(b, "admin", "describe", "Any", "-", "Any", "-", "Any", "Any")
    eq(r["acls"], [["TOPIC", "ledger", "LITERAL", alice, "*", "WRITE", "ALLOW"]],
       "DescribeAcls through librdkafka")
    r = kafkajs_acl(b, "admin", "describe", "ANY", "-", "ANY", "-", "ANY", "ANY")
    eq(r["acls"], [["TOPIC", "ledger", "LITERAL", alice, "*", "WRITE", "ALLOW"]],
       "DescribeAcls through kafkajs")
    eq(kafkajs_acl(b, "bob", "create", "TOPIC", "ledger", "LITERAL", "User:CN=bob", "WRITE",
                   "ALLOW")["error"], "CLUSTER_AUTHORIZATION_FAILED",
       "bob's CreateAcls through kafkajs")
    eq(kafkajs_acl(b, "bob", "describe", "ANY", "-", "ANY", "-", "ANY", "ANY")["error"],
       "CLUSTER_AUTHORIZATION_FAILED", "bob's DescribeAcls through kafkajs")
    r = kafkajs_acl(b, "admin", "delete", "TOPIC", "ledger", "LITERAL", alice, "WRITE", "ANY")
    eq((r["error"], r["acls"]),
       (None, [["TOPIC", "ledger", "LITERAL", alice, "*", "WRITE", "ALLOW"]]),
       "DeleteAcls through kafkajs")
    eq(set(produce(ck, b, "alice", "ledger", ["late"])), {"TOPIC_AUTHORIZATION_FAILED"},
       "alice's delivery once kafkajs deleted her ACL")
    r = kafkajs_acl(b, "admin", "create", "TOPIC", "led", "PREFIXED", alice, "WRITE", "ALLOW")
    eq(r["error"], None, "CreateAcls (prefixed) through kafkajs (%s)" % r["message"])
    eq(produce(ck, b, "alice", "ledger", ["p"]), [None],
       "alice's delivery under kafkajs's prefixed ACL")
    r = rdkafka_acl(b, "admin", "delete", "Topic", "led", "Prefixed", "-", "Any", "Any")
    eq((r["error"], len(r["acls"])), (None, 1), "DeleteAcls through librdkafka")
    b.stop()


def case_acl_requests_without_an_authorizer(t):
    _, kadmin = libs()
    certs = make_certs(t.path("certs"))
    client_cert(certs, "admin")
    b = tls_broker(t, extra={"listener.name.ssl.ssl.client.auth": "required",
                             "ssl.truststore.type": "PEM",
                             "ssl.truststore.location": os.path.join(certs, "ca.pem")})
    adm = admin(b, kadmin)
    flt = kadmin.ACLFilter(principal=None, host=None, operation=kadmin.ACLOperation.ANY,
                           permission_type=kadmin.ACLPermissionType.ANY,
                           resource_pattern=kadmin.ResourcePatternFilter(
                               kadmin.ResourceType.ANY, None, kadmin.ACLResourcePatternType.ANY))
    try:
        adm.describe_acls(flt)
        raise AssertionError("DescribeAcls without an authorizer answered")
    except Exception as e:  # kafka-python raises the broker's error class
        check(type(e).__name__ == "SecurityDisabledError", "DescribeAcls raised %r", e)
    adm.close()
    b.stop()


def case_authorizers_refused_at_start(t):
    """An authorizer class Samsa does not have stops start-up with a
    sentence; so does an ACL file that does not parse."""
    refused = [
        ({"authorizer.class.name": "com.example.MyAuthorizer"}, "SimpleAclAuthorizer"),
    ]
    for i, (cfg, needle) in enumerate(refused):
        b = t.broker(name="refused%d" % i, start=False)
        b.extra_config.update(cfg)
        rc = b.run_to_exit()
        check(rc != 0, "%r: the broker started", cfg)
        check(needle in b.log_text(), "%r: no %r in its log: %s", cfg, needle,
              b.log_text()[-400:])
    b = t.broker(name="badfile", start=False)
    os.makedirs(b.log_dir, exist_ok=True)
    with open(os.path.join(b.log_dir, "acls.json"), "w") as f:
        f.write('{"version":1,"acls":[{"resourceType":"Topik"}]}')
    b.extra_config["authorizer.class.name"] = "kafka.security.auth.SimpleAclAuthorizer"
    check(b.run_to_exit() != 0, "the broker started with a damaged acls.json")
    check("the ACLs cannot be read" in b.log_text(), "no sentence about acls.json: %s",
          b.log_text()[-400:])


if __name__ == "__main__":
    sys.exit(main([case_acls_through_kafka_python, case_acls_through_librdkafka_and_kafkajs,
                   case_acl_requests_without_an_authorizer,
                   case_authorizers_refused_at_start]))
