"""A cluster's admin requests through ZooKeeper and the controller: three
samsa-brokers and a real ZooKeeper on 127.0.0.1 (test_cluster.py's harness).

- DeleteTopics (confluent-kafka's AdminClient, which sends it to the
  controller): the topic leaves every broker's Metadata, its znodes go
  (/brokers/topics/<t>, /config/topics/<t>, /admin/delete_topics/<t>),
  every replica's directory is removed, and the name can be used again at
  once; a broker that is not the controller answers NOT_CONTROLLER, an
  unknown topic UNKNOWN_TOPIC_OR_PARTITION; a replica whose broker is down
  keeps the deletion waiting (the request times out, the marker stays) and
  it completes once the broker is back;
- CreatePartitions: 3 -> 6 with the new replicas placed as Kafka's
  AdminZkClient.addPartitions places them, every broker's Metadata shows
  the six led, partition 5 takes records; Kafka's errors for the same
  count, an unknown broker, and validate_only;
- AlterConfigs and IncrementalAlterConfigs: /config/topics/<t> and a
  /config/changes/config_change_ znode in Kafka's JSON, every broker's
  DescribeConfigs shows the change and its logs apply it (segment.bytes
  rolls segments on every replica); an invalid value changes nothing;
  notifications older than config.change.expiration.ms (3 s here, Kafka's
  15 min) are deleted once the next change is read;
- DescribeConfigs of a topic a broker hosts no replica of: answered from
  ZooKeeper, the same as its host answers, alone or beside hosted and
  unknown topics in one request, and a change shows at once;
- InitProducerId: ids from blocks of /latest_producer_id_block, different
  on every broker, and idempotent producers bootstrapped on different
  brokers write different producer ids.

Runs on Debian's /usr/bin/python3 (kazoo, kafka-python, confluent-kafka).
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
from kwire import array, i8, i32, string  # noqa: E402
from test_cluster import (Cluster, consume, imports, led_everywhere, metadata,  # noqa: E402
                          partitions_of, produce, wait_for)

DELETE_TOPICS = 20
NOT_CONTROLLER = 41
INVALID_PARTITIONS = 37
INVALID_REPLICA_ASSIGNMENT = 39
REQUEST_TIMED_OUT = 7
DYNAMIC_TOPIC_CONFIG = 1


def confluent():
    imports()
    try:
        import confluent_kafka  # noqa: F401
        from confluent_kafka import admin  # noqa: F401
    except ImportError as e:
        raise Skip("needs confluent-kafka (%s)" % e)


def controller_of(c):
    return wait_for(lambda: [c.controller()] if c.controller() is not None else None, 60,
                    "a controller")[0]


def everyone_knows_everyone(c):
    wait_for(lambda: all(sorted(metadata(c.bootstrap(i))[0]) == [0, 1, 2] for i in range(3)),
             60, "every broker knows the three")


def admin_client(c, i):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": c.bootstrap(i)})


def result(futures, what, timeout=60):
    """The outcome of one AdminClient call: None, or the KafkaError."""
    from confluent_kafka import KafkaException
    for _, f in futures.items():
        try:
            f.result(timeout=timeout)
        except KafkaException as e:
            return e.args[0]
    return None


def create(c, name, partitions, rf, config=None, via=0):
    from confluent_kafka.admin import NewTopic
    a = admin_client(c, via)
    err = result(a.create_topics([NewTopic(name, partitions, rf, config=config or {})]),
                 "create %s" % name)
    check(err is None, "creating %s: %s", name, err)
    wait_for(lambda: led_everywhere(c, name, partitions), 60, "%s led everywhere" % name)


def delete_topics_raw(port, topics, timeout_ms):
    """DeleteTopics v1 -> {topic: error}"""
    r = kadmin.call(port, DELETE_TOPICS, 1, array([string(t) for t in topics]) + i32(timeout_ms))
    r.i32()  # throttle
    return dict(r.array(lambda r: (r.string(), r.i16())))


def topic_dirs(b, topic):
    """The directories of topic's partitions (and of their deleted remains)
    in a broker's log dir."""
    try:
        names = os.listdir(b.log_dir)
    except OSError:
        return []
    return sorted(d for d in names if d.startswith(topic + "-"))


def gone_everywhere(c, topic):
    for i, b in enumerate(c.brokers):
        if not b.alive():
            continue
        got = metadata(c.bootstrap(i), [topic])[2].get(topic)
        if got != 3:  # UNKNOWN_TOPIC_OR_PARTITION
            return False
    return True


def case_delete_topic_everywhere_and_make_it_again(t):
    confluent()
    c = Cluster(t)
    try:
        ctl = controller_of(c)
        everyone_knows_everyone(c)
        create(c, "doomed", 3, 3, config={"retention.ms": "3600000"})
        produce(c.bootstrap(0), "doomed", [(p, "old-%d" % p) for p in range(3)], acks="all")
        for b in c.brokers:
            eq(topic_dirs(b, "doomed"), ["doomed-0", "doomed-1", "doomed-2"],
               "replicas of doomed in %s" % b.log_dir)
        # a broker that is not the controller refuses, as Kafka 2.0's does
        other = (ctl + 1) % 3
        eq(delete_topics_raw(c.brokers[other].port, ["doomed"], 10000),
           {"doomed": NOT_CONTROLLER}, "DeleteTopics to broker %d (not the controller)" % other)
        eq(delete_topics_raw(c.brokers[ctl].port, ["never-was"], 10000),
           {"never-was": 3}, "DeleteTopics of an unknown topic")
        check(c.exists("/brokers/topics/doomed"), "a refused deletion deleted the topic")
        # librdkafka's AdminClient finds the controller itself
        a = admin_client(c, other)
        err = result(a.delete_topics(["doomed"], operation_timeout=30), "delete doomed")
        check(err is None, "deleting doomed: %s", err)
        # answered once the znodes are gone: no waiting needed for them
        for path in ("/brokers/topics/doomed", "/config/topics/doomed",
                     "/admin/delete_topics/doomed"):
            check(not c.exists(path), "%s is still there after DeleteTopics answered", path)
        wait_for(lambda: gone_everywhere(c, "doomed"), 30, "doomed gone from every Metadata")
        for b in c.brokers:
            wait_for(lambda b=b: topic_dirs(b, "doomed") == [], 30,
                     "doomed's directories gone from %s" % b.log_dir)
        # the name again, a new topic: empty, with the default configs
        create(c, "doomed", 1, 3, via=ctl)
        eq(c.json("/config/topics/doomed"), {"version": 1, "config": {}},
           "the new doomed's configs")
        offsets = produce(c.bootstrap(1), "doomed", [(0, "new")], acks="all")
        eq(offsets, {0: [0]}, "the new doomed starts at offset 0")
        got = consume(c.bootstrap(2), "doomed", [0], 1)
        eq([v for _, _, v in got], ["new"], "records of the new doomed")
    finally:
        c.close()


def case_deletion_waits_for_a_broker_that_is_down(t):
    imports()
    c = Cluster(t)
    try:
        ctl = controller_of(c)
        everyone_knows_everyone(c)
        down = (ctl + 1) % 3
        create(c, "patient", 2, 3, via=ctl)
        c.brokers[down].stop()
        wait_for(lambda: c.children("/brokers/ids") == sorted(str(i) for i in range(3)
                                                                if i != down),
                 60, "broker %d deregistered" % down)
        # the replica on the stopped broker cannot be deleted: the request
        # times out, the deletion stays queued
        eq(delete_topics_raw(c.brokers[ctl].port, ["patient"], 3000),
           {"patient": REQUEST_TIMED_OUT}, "DeleteTopics with a replica's broker down")
        check(c.exists("/admin/delete_topics/patient"), "the deletion's marker was lost")
        check(c.exists("/brokers/topics/patient"), "deleted without broker %d" % down)
        wait_for(lambda: gone_everywhere(c, "patient"), 30,
                 "patient gone from the live brokers' Metadata")
        eq(topic_dirs(c.brokers[down], "patient"), ["patient-0", "patient-1"],
           "the stopped broker's replicas")
        # back: its replicas are deleted and the deletion completes
        c.brokers[down].start()
        wait_for(lambda: not c.exists("/admin/delete_topics/patient"), 90,
                 "the deletion completed")
        check(not c.exists("/brokers/topics/patient"), "/brokers/topics/patient is left")
        check(not c.exists("/config/topics/patient"), "/config/topics/patient is left")
        wait_for(lambda: topic_dirs(c.brokers[down], "patient") == [], 30,
                 "the returning broker's replicas removed")
        wait_for(lambda: gone_everywhere(c, "patient"), 30, "patient gone from every Metadata")
    finally:
        c.close()


def kafka_add_partitions(brokers, existing, first_replica, count, rf):
    """Kafka 2.0's AdminZkClient.addPartitions placement, written out:
    AdminUtils.assignReplicasToBrokersRackUnaware with fixedStartIndex the
    index of the first broker whose id >= partition 0's first replica, and
    startPartitionId the existing count."""
    n = len(brokers)
    start = max(0, next((i for i, b in enumerate(brokers) if b >= first_replica), -1))
    shift = start
    out = {}
    for p in range(existing, existing + count):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        reps = [brokers[first]]
        for j in range(rf - 1):
            reps.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out[str(p)] = reps
    return out


def case_create_topics_with_a_manual_assignment(t):
    """CreateTopics with replicasAssignments (kafka-topics.sh
    --replica-assignment, NewTopic(replica_assignment=...)) on four brokers:
    placed as asked, each partition led by its first replica; the lists
    Kafka refuses are refused with INVALID_REPLICA_ASSIGNMENT and nothing
    written."""
    confluent()
    from confluent_kafka.admin import NewTopic
    c = Cluster(t, n=4)
    try:
        wait_for(lambda: all(sorted(metadata(c.bootstrap(i))[0]) == [0, 1, 2, 3]
                             for i in range(4)), 60, "every broker knows the four")
        a = admin_client(c, 3)
        want = [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
        err = result(a.create_topics([NewTopic("placed", len(want), replica_assignment=want)]),
                     "create placed")
        check(err is None, "creating placed: %s", err)
        parts = c.json("/brokers/topics/placed")["partitions"]
        eq({int(p): r for p, r in parts.items()}, dict(enumerate(want)),
           "placed's replicas in ZooKeeper")
        wait_for(lambda: all((c.state("placed", p) or {}).get("leader") == want[p][0]
                             for p in range(3)), 60, "each partition led by its first replica")
        wait_for(lambda: led_everywhere(c, "placed", 3), 60, "placed led everywhere")
        # ValidateOnly checks the same and writes nothing
        err = result(a.create_topics([NewTopic("checked", 1, replica_assignment=[[3, 1]])],
                                     validate_only=True), "validate checked")
        check(err is None, "validating checked: %s", err)
        for name, asg, says in (("unknown", [[0, 7]], "Unknown broker(s) in replica assignment: 7."),
                                ("twice", [[1, 1]], "Duplicate replica assignment found"),
                                ("ragged", [[0, 1], [1]],
                                 "All partitions should have the same number of replicas")):
            err = result(a.create_topics([NewTopic(name, len(asg), replica_assignment=asg)]),
                         "create %s" % name)
            check(err is not None, "%s (%r) was created", name, asg)
            eq(err.name(), "INVALID_REPLICA_ASSIGNMENT", "the error creating %s" % name)
            check(says in err.str(), "the reason for %s: %r", name, err.str())
        for name in ("checked", "unknown", "twice", "ragged"):
            eq(c.json_or_none("/brokers/topics/" + name), None, "%s in ZooKeeper" % name)
    finally:
        c.close()


def case_create_partitions_three_to_six(t):
    confluent()
    from confluent_kafka.admin import NewPartitions
    c = Cluster(t)
    try:
        ctl = controller_of(c)
        everyone_knows_everyone(c)
        create(c, "grow", 3, 2)
        before = c.json("/brokers/topics/grow")["partitions"]
        a = admin_client(c, (ctl + 2) % 3)
        err = result(a.create_partitions([NewPartitions("grow", 6)], operation_timeout=30),
                     "grow to 6")
        check(err is None, "growing grow to 6: %s", err)
        parts = c.json("/brokers/topics/grow")["partitions"]
        eq(sorted(parts, key=int), [str(p) for p in range(6)], "grow's partitions in ZooKeeper")
        for p in range(3):
            eq(parts[str(p)], before[str(p)], "grow-%d's replicas kept" % p)
        want = kafka_add_partitions([0, 1, 2], 3, before["0"][0], 3, 2)
        eq({p: parts[p] for p in ("3", "4", "5")}, want, "the new replicas, placed as Kafka does")
        eq(sorted(parts[p][0] for p in ("3", "4", "5")), [0, 1, 2],
           "the new partitions' preferred leaders spread over the brokers")
        # answered once led: every broker's Metadata shows six with a leader
        wait_for(lambda: led_everywhere(c, "grow", 6), 30, "grow's six partitions everywhere")
        for i in range(3):
            got = partitions_of(c.bootstrap(i), "grow")
            for p in range(3, 6):
                eq(got[p][2], parts[str(p)], "replicas of grow-%d in broker %d's Metadata" % (p, i))
        offsets = produce(c.bootstrap(0), "grow", [(5, "five-a"), (5, "five-b")], acks="all")
        eq(offsets, {5: [0, 1]}, "records in grow-5")
        got = consume(c.bootstrap(1), "grow", [5], 2)
        eq([v for _, _, v in got], ["five-a", "five-b"], "grow-5 read back")
        # Kafka's errors
        err = result(a.create_partitions([NewPartitions("grow", 6)]), "grow to 6 again")
        check(err is not None and err.code() == INVALID_PARTITIONS,
              "the same count again: %s", err)
        err = result(a.create_partitions([NewPartitions("grow", 8)], validate_only=True),
                     "validate grow to 8")
        check(err is None, "validate_only 8: %s", err)
        eq(len(c.json("/brokers/topics/grow")["partitions"]), 6, "validate_only changed grow")
        res = kadmin.create_partitions(c.brokers[ctl].port, [("grow", 7, [[0, 9]])])
        eq([(n, e) for n, e, _ in res], [("grow", INVALID_REPLICA_ASSIGNMENT)],
           "an assignment naming broker 9")
        check("Unknown broker(s) in replica assignment: 9" in (res[0][2] or ""),
              "message: %r", res[0][2])
        res = kadmin.create_partitions(c.brokers[(ctl + 1) % 3].port, [("grow", 7, None)])
        eq([(n, e) for n, e, _ in res], [("grow", NOT_CONTROLLER)],
           "CreatePartitions to a broker that is not the controller")
        # the client's own placement is taken
        res = kadmin.create_partitions(c.brokers[ctl].port, [("grow", 7, [[2, 0]])])
        eq([(n, e) for n, e, _ in res], [("grow", 0)], "an explicit assignment")
        eq(c.json("/brokers/topics/grow")["partitions"]["6"], [2, 0], "grow-6's replicas")
        wait_for(lambda: led_everywhere(c, "grow", 7), 30, "grow-6 led everywhere")
    finally:
        c.close()


def segments(b, topic, p):
    try:
        return sorted(f for f in os.listdir(os.path.join(b.log_dir, "%s-%d" % (topic, p)))
                      if f.endswith(".log"))
    except OSError:
        return []


def case_alter_configs_reach_every_broker(t):
    confluent()
    from confluent_kafka.admin import ConfigResource
    c = Cluster(t)
    try:
        controller_of(c)
        everyone_knows_everyone(c)
        create(c, "conf", 1, 3)
        changes_before = set(c.children("/config/changes"))
        a = admin_client(c, 1)
        res = ConfigResource(ConfigResource.Type.TOPIC, "conf",
                             set_config={"retention.ms": "3600000", "cleanup.policy": "compact"})
        err = result(a.alter_configs([res]), "alter conf")
        check(err is None, "AlterConfigs: %s", err)
        eq(c.json("/config/topics/conf"), {"version": 1, "config": {
            "cleanup.policy": "compact", "retention.ms": "3600000"}}, "/config/topics/conf")
        new = sorted(set(c.children("/config/changes")) - changes_before)
        eq(len(new), 1, "new config change notifications %r" % new)
        check(new[0].startswith("config_change_") and len(new[0]) == len("config_change_") + 10,
              "notification name %r", new[0])
        eq(c.json("/config/changes/" + new[0]), {"version": 2, "entity_path": "topics/conf"},
           "the notification")

        def described(i, want):
            got = kadmin.describe_configs(c.brokers[i].port, "conf", list(want))
            return all(got.get(k) == v for k, v in want.items())
        for i in range(3):
            wait_for(lambda i=i: described(i, {
                "retention.ms": ("3600000", DYNAMIC_TOPIC_CONFIG),
                "cleanup.policy": ("compact", DYNAMIC_TOPIC_CONFIG)}), 30,
                "broker %d's DescribeConfigs of conf" % i)
        # incremental: one key removed, one set; the others stay
        res = kadmin.incremental_alter_configs(c.brokers[2].port, [
            (kadmin.TOPIC, "conf", [("cleanup.policy", 1, None), ("segment.bytes", 0, "2000")])])
        eq(res, {(kadmin.TOPIC, "conf"): (0, None)}, "IncrementalAlterConfigs")
        eq(c.json("/config/topics/conf"), {"version": 1, "config": {
            "retention.ms": "3600000", "segment.bytes": "2000"}}, "/config/topics/conf after")
        for i in range(3):
            wait_for(lambda i=i: described(i, {"segment.bytes": ("2000", DYNAMIC_TOPIC_CONFIG),
                                               "cleanup.policy": ("delete", 5)}), 30,
                     "broker %d's DescribeConfigs after the incremental change" % i)
        # applied to the live logs: 2000-byte segments roll on every replica
        for i in range(10):  # one batch each: a batch is never split over segments
            produce(c.bootstrap(0), "conf", [(0, "%d" % i + "x" * 500)], acks="all")
        for b in c.brokers:
            wait_for(lambda b=b: len(segments(b, "conf", 0)) >= 3, 30,
                     "segments of conf-0 in %s" % b.log_dir)
        # an invalid value: Kafka's error, nothing written, the broker serves on
        version = c.get("/config/topics/conf")[1].version
        res = kadmin.alter_configs(c.brokers[0].port,
                                   [(kadmin.TOPIC, "conf", {"retention.ms": "soon"})])
        eq(res[(kadmin.TOPIC, "conf")][0], kadmin.INVALID_CONFIG, "an invalid retention.ms")
        eq(c.get("/config/topics/conf")[1].version, version, "a refused change was written")
        res = kadmin.alter_configs(c.brokers[0].port,
                                   [(kadmin.TOPIC, "absent", {"retention.ms": "1"})])
        eq(res[(kadmin.TOPIC, "absent")][0], kadmin.UNKNOWN_TOPIC_OR_PARTITION, "an unknown topic")
        check(not c.exists("/config/topics/absent"), "configs written for an unknown topic")
        eq(len(partitions_of(c.bootstrap(0), "conf")), 1, "broker 0 still serves")

        # a topic on one broker: the two others answer DescribeConfigs from
        # ZooKeeper, as every Kafka broker does (AdminClient asks any broker)
        create(c, "lone", 1, 1, config={"retention.ms": "7200000"})
        host = partitions_of(c.bootstrap(0), "lone")[0][2][0]
        others = [i for i in range(3) if i != host]
        want = {"retention.ms": ("7200000", DYNAMIC_TOPIC_CONFIG), "cleanup.policy": ("delete", 5)}
        full = kadmin.describe_configs(c.brokers[host].port, "lone")
        check(len(full) > 10, "the host's configs of lone: %r", full)
        for i in others:
            eq(kadmin.describe_configs(c.brokers[i].port, "lone", list(want)), want,
               "broker %d's DescribeConfigs of lone, hosted by %d" % (i, host))
            eq(kadmin.describe_configs(c.brokers[i].port, "lone"), full,
               "broker %d's every config of lone" % i)
            # several resources in one request, one of them hosted here
            got = describe_raw(c.brokers[i].port, [("lone", ["retention.ms"]),
                                                   ("conf", ["segment.bytes"]),
                                                   ("absent", None)])
            eq(got, [(0, "lone", {"retention.ms": "7200000"}),
                     (0, "conf", {"segment.bytes": "2000"}),
                     (kadmin.UNKNOWN_TOPIC_OR_PARTITION, "absent", {})],
               "broker %d's DescribeConfigs of three topics" % i)
        # a change shows at once on a broker that does not host the topic
        res = kadmin.incremental_alter_configs(c.brokers[host].port, [
            (kadmin.TOPIC, "lone", [("retention.ms", 0, "60000")])])
        eq(res, {(kadmin.TOPIC, "lone"): (0, None)}, "IncrementalAlterConfigs of lone")
        for i in others:
            eq(kadmin.describe_configs(c.brokers[i].port, "lone", ["retention.ms"]),
               {"retention.ms": ("60000", DYNAMIC_TOPIC_CONFIG)},
               "broker %d's DescribeConfigs of lone after the change" % i)
    finally:
        c.close()


def describe_raw(port, resources):
    """DescribeConfigs v0 of [(topic, keys or None)] -> [(error, topic,
    {key: value})] in the answer's order."""
    body = array([i8(kadmin.TOPIC) + string(t)
                  + array(None if keys is None else [string(k) for k in keys])
                  for t, keys in resources])
    r = kadmin.call(port, kadmin.DESCRIBE_CONFIGS, 0, body)
    r.i32()  # throttle

    def entry(r):
        name, value = r.string(), r.string()
        r.i8(), r.i8(), r.i8()  # read only, default, sensitive
        return name, value
    return [(err, name, dict(entries)) for err, _msg, _type, name, entries
            in r.array(lambda r: (r.i16(), r.string(), r.i8(), r.string(), r.array(entry)))]


def init_producer_id(port):
    with kwire.connect(port) as s:
        payload = kwire.roundtrip(s, kwire.init_producer_id_v0(5), timeout=30)
    _, err, pid, epoch = kwire.parse_init_producer_id_v0(payload)
    eq(err, 0, "InitProducerId error")
    eq(epoch, 0, "producer epoch")
    return pid


def case_producer_ids_are_unique_across_the_cluster(t):
    confluent()
    import confluent_kafka
    c = Cluster(t)
    try:
        controller_of(c)
        everyone_knows_everyone(c)
        ids = {}
        for i in range(3):
            ids[i] = [init_producer_id(c.brokers[i].port) for _ in range(3)]
        flat = [x for i in range(3) for x in ids[i]]
        eq(len(set(flat)), 9, "nine InitProducerId answers, nine ids: %r" % ids)
        for i in range(3):
            eq(ids[i], [ids[i][0], ids[i][0] + 1, ids[i][0] + 2], "broker %d's ids in a row" % i)
            eq(ids[i][0] % 1000, 0, "broker %d's first id starts a block" % i)
        eq(sorted(ids[i][0] for i in range(3)), [0, 1000, 2000], "the three blocks")
        block = c.json("/latest_producer_id_block")
        eq(sorted(block), ["block_end", "block_start", "broker", "version"], "block's keys")
        eq(block["version"], 1, "block version")
        eq((block["block_start"], block["block_end"]), ("2000", "2999"),
           "the last block, as strings")
        check(block["broker"] == [i for i in range(3) if ids[i][0] == 2000][0],
              "the last block's broker: %r", block)
        # idempotent producers bootstrapped on different brokers
        create(c, "idem", 1, 3)
        pids = []
        for i in (0, 1):
            prod = confluent_kafka.Producer({"bootstrap.servers": c.bootstrap(i),
                                             "enable.idempotence": True, "acks": "all"})
            prod.produce("idem", value=b"from-%d" % i, partition=0)
            eq(prod.flush(30), 0, "producer %d's message unflushed" % i)
        batches = kwire.disk_batches(c.brokers[0].log_dir, "idem", 0)
        pids = [b.producer_id for b in batches]
        eq(len(pids), 2, "batches of idem-0")
        check(pids[0] != pids[1] and min(pids) >= 0, "producer ids %r", pids)
        check(not set(pids) & set(flat), "the producers' ids %r were handed out before", pids)
    finally:
        c.close()


def case_old_config_changes_are_purged(t):
    """config.change.expiration.ms at 3 s where Kafka's is 15 min: the
    notifications older than that go when the next change is read."""
    confluent()
    expiry_ms = 3000
    c = Cluster(t, config={"config.change.expiration.ms": str(expiry_ms)})
    try:
        controller_of(c)
        everyone_knows_everyone(c)
        create(c, "aged", 1, 3)

        def alter(value):
            before = set(c.children("/config/changes"))
            res = kadmin.alter_configs(c.brokers[0].port,
                                       [(kadmin.TOPIC, "aged", {"retention.ms": value})])
            eq(res[(kadmin.TOPIC, "aged")][0], 0, "AlterConfigs retention.ms=%s" % value)
            new = sorted(set(c.children("/config/changes")) - before)
            eq(len(new), 1, "notifications of retention.ms=%s: %r" % (value, new))
            return new[0]

        first = alter("3600000")
        # old enough by ZooKeeper's clock, which stamps the znode
        ctime_ms = c.get("/config/changes/" + first)[1].ctime
        wait_for(lambda: time.time() * 1000 - ctime_ms > expiry_ms + 500, 30,
                 "the first notification to age past %d ms" % expiry_ms)
        check(c.exists("/config/changes/" + first), "%s purged before any change came", first)
        second = alter("7200000")
        wait_for(lambda: not c.exists("/config/changes/" + first), 30,
                 "%s purged once %s was read" % (first, second))
        check(c.exists("/config/changes/" + second), "the new notification %s purged", second)
        # the new one still reached every broker
        for i in range(3):
            wait_for(lambda i=i: kadmin.describe_configs(c.brokers[i].port, "aged",
                                                         ["retention.ms"]).get("retention.ms")
                     == ("7200000", DYNAMIC_TOPIC_CONFIG), 30,
                     "broker %d's retention.ms of aged" % i)
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_delete_topic_everywhere_and_make_it_again,
                   case_deletion_waits_for_a_broker_that_is_down,
                   case_create_topics_with_a_manual_assignment,
                   case_create_partitions_three_to_six,
                   case_alter_configs_reach_every_broker,
                   case_old_config_changes_are_purged,
                   case_producer_ids_are_unique_across_the_cluster]))
