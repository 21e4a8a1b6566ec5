#!/usr/bin/env python3
"""SCRAM users of a cluster, kept in ZooKeeper as Kafka keeps them.

Three samsa-brokers and a real ZooKeeper on 127.0.0.1, each broker with a
PLAINTEXT listener (the brokers' own) and a SASL_PLAINTEXT one enabling
SCRAM-SHA-256 and SCRAM-SHA-512. `samsa users add --zookeeper` writes
/config/users/alice and a change notification; every broker then
authenticates alice (kcat, librdkafka's SaslHandshake v1 path), none did
before. A password changed on the same way: the old one is refused and the
new one served on every broker; `samsa users remove` locks alice out
everywhere. A credential written by hand in Kafka's znode format (as
kafka-configs.sh writes it) is honoured too.

    test_cluster_sasl.py path/to/samsa-broker [-k NAME]   ($SAMSA_TOOL: the samsa tool)
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, free_port, main  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, wait_for  # noqa: E402
from test_sasl import kcat, kcat_roundtrip, scram_credential  # noqa: E402


def samsa_users(c, *args):
    tool = os.environ.get("SAMSA_TOOL")
    if not tool:
        raise Skip("no samsa tool ($SAMSA_TOOL)")
    r = subprocess.run([tool, "users"] + list(args) + ["--zookeeper", c.zk.connect + CHROOT],
                       capture_output=True, timeout=60)
    eq(r.returncode, 0, "samsa users %s (%s)" % (args[0], r.stderr.decode(errors="replace")))


def props(mech, user, password):
    return {"security.protocol": "sasl_plaintext", "sasl.mechanism": mech,
            "sasl.username": user, "sasl.password": password}


def authenticates(b, mech, user, password):
    r = kcat(b.sasl_port, props(mech, user, password), "-L", "-m", "2")
    return r.returncode == 0


def case_scram_users_from_zookeeper_on_every_broker(t):
    imports()

    def make_broker(i, cfg):
        b = t.broker(name="broker%d" % i, start=False, config=cfg)
        b.port = free_port()
        b.sasl_port = free_port()
        b.extra_config.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d"
                         % (b.port, b.sasl_port),
            "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
        })
        return b

    c = Cluster(t, n=3, make_broker=make_broker)
    try:
        for b in c.brokers:
            check(not authenticates(b, "SCRAM-SHA-256", "alice", "first"),
                  "%s authenticated alice before she existed", b.name)
        samsa_users(c, "add", "--user", "alice", "--password", "first")
        reg = c.json("/config/users/alice")
        eq(sorted(reg["config"]), ["SCRAM-SHA-256", "SCRAM-SHA-512"], "the znode's mechanisms")
        check(any(json.loads(c.kz.get(CHROOT + "/config/changes/" + n)[0])["entity_path"]
                  == "users/alice" for n in c.children("/config/changes")),
              "no change notification for users/alice")
        for b in c.brokers:
            wait_for(lambda b=b: authenticates(b, "SCRAM-SHA-512", "alice", "first"), 30,
                     "%s authenticates alice" % b.name)
        kcat_roundtrip(c.brokers[1].sasl_port, props("SCRAM-SHA-256", "alice", "first"),
                       "scram-cluster")

        samsa_users(c, "change", "--user", "alice", "--password", "second",
                    "--mechanism", "SCRAM-SHA-256")
        for b in c.brokers:
            wait_for(lambda b=b: authenticates(b, "SCRAM-SHA-256", "alice", "second"), 30,
                     "%s takes alice's new password" % b.name)
            check(not authenticates(b, "SCRAM-SHA-256", "alice", "first"),
                  "%s still takes alice's old password", b.name)

        # by hand, in Kafka's format (kafka-configs.sh's znode and notification)
        cred = scram_credential("SCRAM-SHA-256", "bob-pw", iterations=8192)
        c.kz.create(CHROOT + "/config/users/bob",
                    json.dumps({"version": 1, "config": {"SCRAM-SHA-256": cred}}).encode())
        c.kz.create(CHROOT + "/config/changes/config_change_",
                    b'{"version":2,"entity_path":"users/bob"}', sequence=True)
        for b in c.brokers:
            wait_for(lambda b=b: authenticates(b, "SCRAM-SHA-256", "bob", "bob-pw"), 30,
                     "%s authenticates bob" % b.name)

        samsa_users(c, "remove", "--user", "alice")
        for b in c.brokers:
            wait_for(lambda b=b: not authenticates(b, "SCRAM-SHA-256", "alice", "second"), 30,
                     "%s refuses alice once removed" % b.name)
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_scram_users_from_zookeeper_on_every_broker]))
