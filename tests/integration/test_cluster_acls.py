#!/usr/bin/env python3
"""ACLs on a cluster: three samsa-brokers and a real ZooKeeper, each with a
PLAINTEXT listener (the brokers' own, whose User:ANONYMOUS is a super user:
inter-broker TLS is not there yet) and a mutual TLS listener for clients
(principals User:CN=<name>), SimpleAclAuthorizer on all three.

- acls_kept_in_zookeeper: kafka-python's admin client, as the super user
  on broker 0, creates ACLs: they are in /kafka-acl/Topic/<name> and
  /kafka-acl-extended/prefixed/... in Kafka's JSON, announced in
  /kafka-acl-changes and /kafka-acl-extended-changes, and every broker
  enforces them (alice produces through broker 1 and 2 to a partition a
  third leads; bob is refused); ACLs written by hand with Kafka's znodes and
  notification (as kafka-acls.sh --authorizer-properties zookeeper.connect
  writes them) are honoured by every broker; DeleteAcls through broker 2
  removes alice's Write everywhere; a broker restarted reads every ACL back
  from ZooKeeper.

- acls_written_by_samsa_acls: `samsa acls --zookeeper` adds, lists and
  removes ACLs as kafka-acls.sh does, every broker following.

    test_cluster_acls.py path/to/samsa-broker [path/to/samsa] [-k NAME]
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, free_port, main  # noqa: E402
from test_acls import acl, admin, ck_conf, client_cert, libs, produce  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, led_everywhere, wait_for  # noqa: E402
from test_tls import make_certs  # noqa: E402


def acl_cluster_broker(t, certs):
    """The Cluster's make_broker: a PLAINTEXT listener for the brokers
    (User:ANONYMOUS a super user), a mutual TLS one for clients, the
    authorizer on."""
    def make_broker(i, cfg):
        b = t.broker(name="broker%d" % i, start=False, config=cfg)
        b.port = free_port()
        b.ssl_port = free_port()
        b.certs = certs
        b.extra_config.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d" % (b.port, b.ssl_port),
            "ssl.keystore.location": os.path.join(certs, "broker.pem"),
            "listener.name.ssl.ssl.client.auth": "required",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": os.path.join(certs, "ca.pem"),
            "authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer",
            "super.users": "User:ANONYMOUS;User:CN=admin",
        })
        return b
    return make_broker


def case_acls_kept_in_zookeeper(t):
    imports()
    ck, kadmin = libs()
    certs = make_certs(t.path("certs"))
    for who in ("alice", "bob", "admin"):
        client_cert(certs, who)

    c = Cluster(t, make_broker=acl_cluster_broker(t, certs))
    try:
        c.create_topic("orders", [[2, 0, 1]])
        c.create_topic("zt", [[0, 1, 2]])
        wait_for(lambda: led_everywhere(c, "orders", 1) and led_everywhere(c, "zt", 1), 60,
                 "orders and zt led everywhere")
        alice, bob = "User:CN=alice", "User:CN=bob"
        adm = admin(c.brokers[0], kadmin)
        res = adm.create_acls([acl(kadmin, "TOPIC", "orders", alice, "WRITE"),
                               acl(kadmin, "TOPIC", "ord", alice, "DESCRIBE", pattern="PREFIXED")])
        adm.close()
        eq((len(res["succeeded"]), len(res["failed"])), (2, 0), "ACLs created")
        lit = c.json("/kafka-acl/Topic/orders")
        eq(lit, {"version": 1, "acls": [{"principal": alice, "permissionType": "Allow",
                                         "operation": "Write", "host": "*"}]},
           "/kafka-acl/Topic/orders")
        pre = c.json("/kafka-acl-extended/prefixed/Topic/ord")
        eq(pre["acls"][0]["operation"], "Describe", "the prefixed ACL's operation")
        check(len(c.children("/kafka-acl-changes")) >= 1, "no literal change notification")
        check(len(c.children("/kafka-acl-extended-changes")) >= 1,
              "no extended change notification")
        # every broker: alice writes through broker 1 and 2, bob is refused
        for i in (1, 2):
            b = c.brokers[i]
            wait_for(lambda b=b: produce(ck, b, "alice", "orders", ["a%d" % i]) == [None], 60,
                     "alice's delivery through broker %d" % i)
            eq(set(produce(ck, b, "bob", "orders", ["b"])), {"TOPIC_AUTHORIZATION_FAILED"},
               "bob's delivery through broker %d" % i)
        # Kafka's own tools write the znode and the notification
        eq(set(produce(ck, c.brokers[1], "bob", "zt", ["z"])), {"TOPIC_AUTHORIZATION_FAILED"},
           "bob's delivery to zt before its ACL")
        c.kz.ensure_path(CHROOT + "/kafka-acl/Topic")
        c.kz.create(CHROOT + "/kafka-acl/Topic/zt", json.dumps(
            {"version": 1, "acls": [{"principal": bob, "permissionType": "Allow",
                                     "operation": "Write", "host": "*"}]}).encode())
        c.kz.create(CHROOT + "/kafka-acl-changes/acl_changes_", b"Topic:zt", sequence=True)
        for i in range(3):
            b = c.brokers[i]
            wait_for(lambda b=b: produce(ck, b, "bob", "zt", ["z"]) == [None], 60,
                     "bob's delivery to zt through broker %d after its znode" % i)
        # DeleteAcls through broker 2: alice's Write goes everywhere
        adm = admin(c.brokers[2], kadmin)
        dflt = kadmin.ACLFilter(principal=alice, host=None, operation=kadmin.ACLOperation.WRITE,
                                permission_type=kadmin.ACLPermissionType.ANY,
                                resource_pattern=kadmin.ResourcePatternFilter(
                                    kadmin.ResourceType.TOPIC, "orders",
                                    kadmin.ACLResourcePatternType.LITERAL))
        deleted = adm.delete_acls([dflt])
        adm.close()
        eq(len(deleted[0][1]), 1, "ACLs DeleteAcls matched")
        check(not c.exists("/kafka-acl/Topic/orders"), "the emptied znode is still there")
        for i in range(3):
            b = c.brokers[i]
            wait_for(lambda b=b: set(produce(ck, b, "alice", "orders", ["late"])) ==
                     {"TOPIC_AUTHORIZATION_FAILED"}, 60,
                     "alice refused through broker %d after the delete" % i)
        # a restarted broker reads every ACL back
        c.brokers[1].stop()
        c.brokers[1].start()
        wait_for(lambda: produce(ck, c.brokers[1], "bob", "zt", ["z2"]) == [None], 60,
                 "bob's delivery through the restarted broker")
        adm = admin(c.brokers[1], kadmin)
        flt = kadmin.ACLFilter(principal=None, host=None, operation=kadmin.ACLOperation.ANY,
                               permission_type=kadmin.ACLPermissionType.ANY,
                               resource_pattern=kadmin.ResourcePatternFilter(
                                   kadmin.ResourceType.ANY, None,
                                   kadmin.ACLResourcePatternType.ANY))
        acls, _ = adm.describe_acls(flt)
        adm.close()
        eq(sorted((a.resource_pattern.resource_name, a.principal) for a in acls),
           [("ord", alice), ("zt", bob)], "the ACLs the restarted broker lists")
    finally:
        c.close()


def case_acls_written_by_samsa_acls(t):
    """`samsa acls --zookeeper` (kafka-acls.sh's options): --add of alice's
    Write on a topic writes /kafka-acl/Topic/<t> and a notification, and
    every broker lets her produce; --producer adds Write, Describe and
    Create; a prefixed ACL on groups whose name holds a quote is announced
    in JSON the brokers read; --list prints AclCommand's lines; --remove of
    the Write refuses her again everywhere; an operation a resource type
    does not have, a principal without its type and a missing resource are
    refused."""
    import subprocess
    from broker import Skip
    if TOOL is None:
        raise Skip("needs the samsa tool")
    imports()
    ck, _ = libs()
    certs = make_certs(t.path("certs"))
    for who in ("alice", "bob", "admin"):
        client_cert(certs, who)
    c = Cluster(t, make_broker=acl_cluster_broker(t, certs))
    zk = c.zk.connect + CHROOT

    def tool(*args, rc=0):
        p = subprocess.run([TOOL, "acls", "--zookeeper", zk, *args], capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == rc, "samsa acls %s: exit %d (not %d): %s%s", " ".join(args),
              p.returncode, rc, p.stdout[-500:], p.stderr[-500:])
        return p.stdout + p.stderr
    try:
        c.create_topic("pay", [[2, 0, 1]])
        wait_for(lambda: led_everywhere(c, "pay", 1), 60, "pay led everywhere")
        alice = "User:CN=alice"
        eq(set(produce(ck, c.brokers[0], "alice", "pay", ["x"])), {"TOPIC_AUTHORIZATION_FAILED"},
           "alice's delivery before any ACL")
        out = tool("--add", "--allow-principal", alice, "--operation", "Write", "--topic", "pay")
        check("Adding ACLs for resource `Topic:LITERAL:pay`:" in out, "add's output: %s", out)
        eq(c.json("/kafka-acl/Topic/pay"), {"version": 1, "acls": [
            {"principal": alice, "permissionType": "Allow", "operation": "Write", "host": "*"}]},
           "/kafka-acl/Topic/pay")
        for i in range(3):
            b = c.brokers[i]
            wait_for(lambda b=b: produce(ck, b, "alice", "pay", ["a%d" % i]) == [None], 60,
                     "alice's delivery through broker %d" % i)
        tool("--add", "--allow-principal", "User:CN=bob", "--producer", "--topic", "pay")
        ops = sorted(a["operation"] for a in c.json("/kafka-acl/Topic/pay")["acls"]
                     if a["principal"] == "User:CN=bob")
        eq(ops, ["Create", "Describe", "Write"], "--producer's operations")
        tool("--add", "--allow-principal", alice, "--operation", "Read", "--group", 'g"1-',
             "--resource-pattern-type", "prefixed")
        check(c.exists('/kafka-acl-extended/prefixed/Group/g"1-'), "the prefixed znode")
        notes = c.children("/kafka-acl-extended-changes")
        last = json.loads(c.get("/kafka-acl-extended-changes/" + notes[-1])[0].decode())
        eq(last, {"version": 1, "resourceType": "Group", "name": 'g"1-',
                  "patternType": "PREFIXED"}, "the extended notification")
        out = tool("--list", "--topic", "pay")
        check("Current ACLs for resource `Topic:LITERAL:pay`:" in out and
              "User:CN=alice has Allow permission for operations: Write from hosts: *" in out,
              "--list: %s", out)
        out = tool("--list")
        check("`Group:PREFIXED:g\"1-`" in out, "--list of everything: %s", out)
        tool("--remove", "--allow-principal", alice, "--operation", "Write", "--topic", "pay")
        for i in range(3):
            b = c.brokers[i]
            wait_for(lambda b=b: set(produce(ck, b, "alice", "pay", ["late"])) ==
                     {"TOPIC_AUTHORIZATION_FAILED"}, 60,
                     "alice refused through broker %d after --remove" % i)
        check(len(c.json("/kafka-acl/Topic/pay")["acls"]) == 3, "bob's ACLs kept")
        tool("--remove", "--topic", "pay")
        check(not c.exists("/kafka-acl/Topic/pay"), "--remove of every ACL left the znode")
        out = tool("--add", "--allow-principal", alice, "--operation", "IdempotentWrite",
                   "--topic", "pay", rc=1)
        check("only supports" in out, "an operation Topic does not have: %s", out)
        tool("--add", "--allow-principal", "alice", "--topic", "pay", rc=2)
        tool("--add", "--allow-principal", alice, rc=2)
    finally:
        c.close()


TOOL = None

if __name__ == "__main__":
    if len(sys.argv) > 2 and not sys.argv[2].startswith("-"):
        TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_acls_kept_in_zookeeper, case_acls_written_by_samsa_acls]))
