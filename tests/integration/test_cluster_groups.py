"""Consumer groups on a cluster: three samsa-brokers and a real ZooKeeper.

- __consumer_offsets is made through ZooKeeper on a group's first
  FindCoordinator, with offsets.topic.replication.factor replicas and its
  own settings (compacted); every broker names the same coordinator for a
  group: the leader of partition abs(hashCode(group)) % partitions; a
  broker that is not it answers NOT_COORDINATOR;
- a librdkafka consumer group reads a replicated topic and commits; the
  commits are replicated (acks=all) to the partition's followers;
- the coordinator killed (SIGKILL): the partition's new leader loads the
  group from its copy, every committed offset is still there, and the group
  goes on from where it committed;
- a commit whose records do not reach the ISR in offsets.commit.timeout.ms
  (the group partition's followers paused) fails with REQUEST_TIMED_OUT, as
  Kafka 2.0 answers, and OffsetFetch goes on returning the commit before
  it: a commit is visible only once replicated;
- a generation completes only once its group record is replicated: with
  the same followers paused, the leader's SyncGroup gets no assignment but
  REBALANCE_IN_PROGRESS after offsets.commit.timeout.ms (Kafka 2.0's
  storeGroup callback) and the group rebalances; the followers resumed,
  the member's next round gets its assignment.

Runs on Debian's /usr/bin/python3 with kafka-python, kazoo and
confluent-kafka. Every process is stopped by its PID.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, main  # noqa: E402
from test_cluster import Cluster, java_partition, imports, led_everywhere, partitions_of, send, wait_for  # noqa: E402

OFFSETS = "__consumer_offsets"
OFFSETS_PARTITIONS = 6


def group_partition(group):
    return java_partition(group, OFFSETS_PARTITIONS)


def confluent():
    try:
        import confluent_kafka
    except ImportError as e:
        raise Skip("needs confluent-kafka (%s)" % e)
    return confluent_kafka


def find_coordinator(bootstrap, group):
    """(error, node id) of FindCoordinator v0 for group (kafka-python's v1
    response lacks the throttle time)."""
    from kafka.protocol.commit import GroupCoordinatorRequest
    r = send(bootstrap, GroupCoordinatorRequest[0](group))
    return r.error_code, r.coordinator_id


def coordinator_everywhere(c, group, brokers):
    """[the coordinator] every broker in brokers names for group, once they
    agree and it is the offsets partition's leader; else None."""
    named = set()
    for i in brokers:
        err, node = find_coordinator(c.bootstrap(i), group)
        if err != 0:
            return None
        named.add(node)
    if len(named) != 1:
        return None
    node = named.pop()
    st = c.state(OFFSETS, group_partition(group))
    return [node] if st is not None and st["leader"] == node else None


def consume_group(ck, bootstrap, group, topic, want, extra=None):
    """A librdkafka member of group subscribed to topic: reads until it has
    `want` distinct values, commits synchronously, and returns them."""
    cons = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                        "enable.auto.commit": False, "auto.offset.reset": "earliest",
                        "session.timeout.ms": 10000, **(extra or {})})
    got = set()
    try:
        cons.subscribe([topic])
        deadline = time.monotonic() + 90
        while len(got) < want and time.monotonic() < deadline:
            m = cons.poll(1.0)
            if m is not None and m.error() is None:
                got.add(m.value())
        check(len(got) >= want, "group %s read %d of %d records", group, len(got), want)
        # a commit may meet a coordinator still loading or moving: retried
        deadline = time.monotonic() + 60
        while True:
            try:
                cons.commit(asynchronous=False)
                break
            except ck.KafkaException as e:
                check(time.monotonic() < deadline, "commit of group %s failed: %s", group, e)
                time.sleep(0.5)
    finally:
        cons.close()
    return got


def committed(ck, bootstrap, group, topic, partitions):
    """{partition: committed offset} of group, asked of its coordinator by
    a librdkafka consumer (OffsetFetch)."""
    cons = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                        "enable.auto.commit": False})
    try:
        tps = cons.committed([ck.TopicPartition(topic, p) for p in partitions], timeout=30)
        return {tp.partition: tp.offset for tp in tps if tp.error is None}
    finally:
        cons.close()


def produce_all(ck, bootstrap, topic, n, prefix):
    errors = []
    prod = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all",
                        "enable.idempotence": True, "linger.ms": 5})
    for i in range(n):
        prod.produce(topic, key=b"%s-%d" % (prefix.encode(), i),
                     value=b"%s-%d" % (prefix.encode(), i),
                     on_delivery=lambda err, _m: errors.append(err) if err else None)
        prod.poll(0)
    eq(prod.flush(60), 0, "messages left unflushed")
    eq(errors, [], "delivery errors")


def start_cluster(t, extra=None):
    imports()
    ck = confluent()
    c = Cluster(t, config={"min.insync.replicas": "2",
                           "offsets.topic.num.partitions": str(OFFSETS_PARTITIONS),
                           "group.initial.rebalance.delay.ms": "0", **(extra or {})})
    return ck, c


def case_groups_are_coordinated_by_the_offsets_leaders(t):
    ck, c = start_cluster(t)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("grp", [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
        wait_for(lambda: led_everywhere(c, "grp", 3), 60, "grp's leaders known everywhere")
        check(not c.exists("/brokers/topics/" + OFFSETS), "%s made before a group asked", OFFSETS)
        # the first FindCoordinator makes the topic, through ZooKeeper
        err, _ = find_coordinator(c.bootstrap(1), "g-one")
        eq(err, 15, "FindCoordinator before the offsets topic exists (COORDINATOR_NOT_AVAILABLE)")
        asg = wait_for(lambda: c.exists("/brokers/topics/" + OFFSETS) and
                       c.json("/brokers/topics/" + OFFSETS), 60, "the offsets topic in ZooKeeper")
        eq(len(asg["partitions"]), OFFSETS_PARTITIONS, "partitions of " + OFFSETS)
        for p, reps in asg["partitions"].items():
            eq(sorted(reps), [0, 1, 2], "replicas of %s-%s (offsets.topic.replication.factor 3)"
               % (OFFSETS, p))
        eq(c.json("/config/topics/" + OFFSETS)["config"].get("cleanup.policy"), "compact",
           "the offsets topic's cleanup.policy")
        wait_for(lambda: led_everywhere(c, OFFSETS, OFFSETS_PARTITIONS), 60,
                 "the offsets topic led everywhere")
        # every broker names the same coordinator: the partition's leader
        groups = ["g-one", "g-two", "g-three", "g-four"]
        coords = {}
        for g in groups:
            coords[g] = wait_for(lambda g=g: coordinator_everywhere(c, g, (0, 1, 2)), 60,
                                 "one coordinator for " + g)[0]
        check(len(set(coords.values())) > 1 or len(set(group_partition(g) for g in groups)) == 1,
              "every group on one broker: %r", coords)
        # a broker that is not the coordinator refuses the group
        from kafka.protocol.group import JoinGroupRequest
        other = next(i for i in range(3) if i != coords["g-one"])
        r = send(c.bootstrap(other), JoinGroupRequest[1]("g-one", 10000, 10000, "", "consumer",
                                                        [("range", b"")]))
        eq(r.error_code, 16, "JoinGroup to a broker that is not the coordinator (NOT_COORDINATOR)")
        # a librdkafka group reads everything and commits, through any broker
        produce_all(ck, c.bootstrap(0), "grp", 300, "a")
        got = consume_group(ck, c.bootstrap(other), "g-one", "grp", 300)
        eq(len(got), 300, "records the group read")
        offs = committed(ck, c.bootstrap(2), "g-one", "grp", range(3))
        eq(sum(offs.values()), 300, "committed offsets %r" % offs)
        # the commit's records are on every replica of the group's partition
        gp = group_partition("g-one")

        def offsets_log_everywhere():
            ends = []
            for b in c.brokers:
                d = os.path.join(b.log_dir, "%s-%d" % (OFFSETS, gp))
                ends.append(sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
                                if f.endswith(".log")) if os.path.isdir(d) else 0)
            return ends[0] > 0 and len(set(ends)) == 1
        wait_for(offsets_log_everywhere, 60, "the group's records on the three replicas")
    finally:
        c.close()


def group_with_commits(ck, c, topic, group, n):
    """A topic of 3 partitions replicated on the 3 brokers, n records in it
    read and committed by group: (its coordinator, {partition: committed})."""
    wait_for(lambda: c.controller() is not None, 60, "a controller")
    c.create_topic(topic, [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
    wait_for(lambda: led_everywhere(c, topic, 3), 60, "%s's leaders known everywhere" % topic)
    produce_all(ck, c.bootstrap(0), topic, n, "before")
    got = consume_group(ck, c.bootstrap(0), group, topic, n)
    eq(len(got), n, "records read by %s" % group)
    coord = wait_for(lambda: coordinator_everywhere(c, group, (0, 1, 2)), 60,
                     "the group's coordinator")[0]
    before = committed(ck, c.bootstrap(coord), group, topic, range(3))
    eq(sum(before.values()), n, "committed by %s: %r" % (group, before))
    return coord, before


def case_committed_offsets_survive_the_coordinators_loss(t):
    ck, c = start_cluster(t)
    try:
        group = "survivor"
        coord, before = group_with_commits(ck, c, "keep", group, 200)
        # the coordinator dies without a word: the ISR's next member leads
        # the group's partition and loads the group from its copy
        c.brokers[coord].kill()
        alive = tuple(i for i in range(3) if i != coord)
        gp = group_partition(group)
        wait_for(lambda: (c.state(OFFSETS, gp) or {}).get("leader", coord) not in (coord, -1),
                 60, "a new leader for %s-%d" % (OFFSETS, gp))
        moved = wait_for(lambda: coordinator_everywhere(c, group, alive), 60,
                         "the group's new coordinator")[0]
        check(moved != coord, "the coordinator did not move")
        after = wait_for(lambda: committed(ck, c.bootstrap(alive[0]), group, "keep", range(3)) or
                         None, 60, "committed offsets from the new coordinator")
        eq(after, before, "committed offsets after the coordinator's loss")
        # the partitions the dead broker led have new leaders; the group
        # goes on from its commits: it reads only what came after
        wait_for(lambda: all(v[0] == 0 for v in partitions_of(c.bootstrap(alive[0]),
                                                               "keep").values()),
                 60, "keep led by the live brokers")
        produce_all(ck, c.bootstrap(alive[0]), "keep", 50, "after")
        got = consume_group(ck, c.bootstrap(alive[1]), group, "keep", 50)
        eq(got, {b"after-%d" % i for i in range(50)}, "records the group read after the loss")
    finally:
        c.close()


def case_committed_offsets_survive_a_restart_of_every_broker(t):
    """Every broker stopped and started again: each is given the leadership
    of its __consumer_offsets partitions in its first LeaderAndIsr (no
    broker was left to lead them meanwhile), and loads their groups then,
    as a broker that becomes their leader later does: the group's committed
    offsets are there after the restart."""
    ck, c = start_cluster(t)
    try:
        group = "restarted"
        _, before = group_with_commits(ck, c, "again", group, 90)
        for b in c.brokers:
            b.kill()
        for b in c.brokers:
            b.start()
        gp = group_partition(group)
        wait_for(lambda: (c.state(OFFSETS, gp) or {}).get("leader", -1) >= 0 and
                 len((c.state(OFFSETS, gp) or {}).get("isr", [])) == 3, 90,
                 "%s-%d led again with its ISR whole" % (OFFSETS, gp))
        wait_for(lambda: coordinator_everywhere(c, group, (0, 1, 2)), 60,
                 "the group's coordinator after the restart")
        after = wait_for(lambda: committed(ck, c.bootstrap(0), group, "again", range(3)) or None,
                         60, "committed offsets after the restart")
        eq(after, before, "committed offsets after every broker restarted")
    finally:
        c.close()


def commit_offset(bootstrap, group, topic, partition, offset):
    """The error of an OffsetCommit v2 of one offset by a group that only
    stores offsets (generation -1), and how long its answer took (s)."""
    from kafka.protocol.commit import OffsetCommitRequest
    t0 = time.monotonic()
    r = send(bootstrap, OffsetCommitRequest[2](group, -1, "", -1,
                                               [(topic, [(partition, offset, "")])]))
    return r.topics[0][1][0][1], time.monotonic() - t0


def fetch_offset(bootstrap, group, topic, partition):
    """(error, committed offset) of OffsetFetch v1 for one partition."""
    from kafka.protocol.commit import OffsetFetchRequest
    r = send(bootstrap, OffsetFetchRequest[1](group, [(topic, [partition])]))
    _p, offset, _md, err = r.topics[0][1][0]
    return err, offset


COMMIT_TIMEOUT_MS = 2000


def coordinator_and_followers(c, group):
    """The group's coordinator (made with the offsets topic), the two
    followers of its __consumer_offsets partition and that partition, once its
    ISR is whole in the coordinator's metadata: what a commit or a group
    record waits for."""
    find_coordinator(c.bootstrap(0), group)  # makes the offsets topic
    coord = wait_for(lambda: coordinator_everywhere(c, group, (0, 1, 2)), 60,
                     "the group's coordinator")[0]
    gp = group_partition(group)
    isr = wait_for(lambda: (lambda p: p[3] if p[0] == 0 and len(p[3]) == 3 else None)(
                       partitions_of(c.bootstrap(coord), OFFSETS).get(gp, (-1,))),
                   60, "%s-%d's ISR whole in the coordinator's metadata" % (OFFSETS, gp))
    followers = [i for i in isr if i != coord]
    eq(len(followers), 2, "followers of %s-%d" % (OFFSETS, gp))
    return coord, followers, gp


def case_a_commit_not_replicated_is_never_visible(t):
    """The followers of the group's partition paused (SIGSTOP), still in
    the ISR (replica.lag.time.max.ms far above offsets.commit.timeout.ms):
    the commit's records stay above the high watermark, the commit fails
    with REQUEST_TIMED_OUT after offsets.commit.timeout.ms (Kafka 2.0's
    GroupMetadataManager.storeOffsets passes the timeout on), and
    OffsetFetch returns the offset committed before it, not the failed one
    (Kafka keeps such a commit pending: GroupMetadata.pendingOffsetCommits).
    The followers resumed, commits are served again."""
    _, c = start_cluster(t, {"offsets.commit.timeout.ms": str(COMMIT_TIMEOUT_MS),
                             "replica.lag.time.max.ms": "60000"})
    paused = []
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("pend", [[0, 1, 2]])
        wait_for(lambda: led_everywhere(c, "pend", 1), 60, "pend-0 led everywhere")
        group = "pending-commits"
        coord, followers, gp = coordinator_and_followers(c, group)
        boot = c.bootstrap(coord)
        err, _ = wait_for(lambda: (lambda e: e if e[0] == 0 else None)(
                              commit_offset(boot, group, "pend", 0, 10)),
                          60, "the first commit")
        eq(fetch_offset(boot, group, "pend", 0), (0, 10), "OffsetFetch after the first commit")

        for i in followers:
            os.kill(c.brokers[i].pid, signal.SIGSTOP)
            paused.append(i)
        err, took = commit_offset(boot, group, "pend", 0, 20)
        print("    the commit with the followers paused: error %d after %.2f s" % (err, took),
              flush=True)
        eq(fetch_offset(boot, group, "pend", 0), (0, 10),
           "OffsetFetch after the commit that failed (the one before it)")
        eq(err, 7, "a commit not replicated in offsets.commit.timeout.ms (REQUEST_TIMED_OUT)")
        check(took >= COMMIT_TIMEOUT_MS / 1000.0 * 0.9, "the commit failed after %.2f s", took)
        st = c.state(OFFSETS, gp)
        eq(sorted(st["isr"]), [0, 1, 2], "%s-%d's ISR while the followers are paused"
           % (OFFSETS, gp))

        for i in followers:
            os.kill(c.brokers[i].pid, signal.SIGCONT)
        paused.clear()
        wait_for(lambda: commit_offset(boot, group, "pend", 0, 30)[0] == 0, 60,
                 "a commit served once the followers are back")
        eq(fetch_offset(boot, group, "pend", 0), (0, 30), "OffsetFetch once the followers are back")
    finally:
        for i in paused:
            os.kill(c.brokers[i].pid, signal.SIGCONT)
        c.close()


def join_group(bootstrap, group, member_id=""):
    """(error, generation, member id, leader id, took s) of a JoinGroup v1
    of a consumer with one protocol (session 10 s, rebalance 30 s)."""
    from kafka.protocol.group import JoinGroupRequest
    t0 = time.monotonic()
    r = send(bootstrap, JoinGroupRequest[1](group, 10000, 30000, member_id, "consumer",
                                            [("range", b"meta")]))
    return r.error_code, r.generation_id, r.member_id, r.leader_id, time.monotonic() - t0


def sync_group(bootstrap, group, generation, member_id, assignment):
    """(error, assignment, took s) of the SyncGroup v0 of the group's only
    member, its leader, giving itself assignment."""
    from kafka.protocol.group import SyncGroupRequest
    t0 = time.monotonic()
    r = send(bootstrap, SyncGroupRequest[0](group, generation, member_id,
                                            [(member_id, assignment)]))
    return r.error_code, r.member_assignment, time.monotonic() - t0


def heartbeat(bootstrap, group, generation, member_id):
    from kafka.protocol.group import HeartbeatRequest
    return send(bootstrap, HeartbeatRequest[0](group, generation, member_id)).error_code


def case_a_generation_completes_once_its_record_is_replicated(t):
    """The followers of the group's partition paused (SIGSTOP), still in
    the ISR: a JoinGroup and SyncGroup round of a one-member group whose
    group record cannot reach the ISR. The SyncGroup must not get its
    assignment: the group stays in CompletingRebalance until the record is
    replicated, and after offsets.commit.timeout.ms the sync is answered
    REBALANCE_IN_PROGRESS (Kafka 2.0's storeGroup maps the append's
    REQUEST_TIMED_OUT so) and the group prepares a rebalance (the member's
    heartbeat says so). The followers resumed, the member's next round
    completes with its assignment."""
    _, c = start_cluster(t, {"offsets.commit.timeout.ms": str(COMMIT_TIMEOUT_MS),
                             "replica.lag.time.max.ms": "60000"})
    paused = []
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        group = "pending-sync"
        coord, followers, gp = coordinator_and_followers(c, group)
        boot = c.bootstrap(coord)

        for i in followers:
            os.kill(c.brokers[i].pid, signal.SIGSTOP)
            paused.append(i)
        err, gen, member, leader, _ = join_group(boot, group)
        eq(err, 0, "JoinGroup with the followers paused")
        eq(leader, member, "the only member leads")
        err, assignment, took = sync_group(boot, group, gen, member, b"mine")
        print("    the SyncGroup with the followers paused: error %d, assignment %r after %.2f s"
              % (err, assignment, took), flush=True)
        check(err != 0 or took >= COMMIT_TIMEOUT_MS / 1000.0 * 0.9,
              "the SyncGroup got its assignment after %.2f s, before its group record was "
              "replicated", took)
        eq(err, 27, "a SyncGroup whose record was not replicated in offsets.commit.timeout.ms "
                    "(REBALANCE_IN_PROGRESS)")
        eq(assignment, b"", "the assignment of a SyncGroup that failed")
        check(took >= COMMIT_TIMEOUT_MS / 1000.0 * 0.9, "the SyncGroup failed after %.2f s", took)
        eq(heartbeat(boot, group, gen, member), 27,
           "a heartbeat after the failed SyncGroup (the group prepares a rebalance)")
        st = c.state(OFFSETS, gp)
        eq(sorted(st["isr"]), [0, 1, 2], "%s-%d's ISR while the followers are paused"
           % (OFFSETS, gp))

        for i in followers:
            os.kill(c.brokers[i].pid, signal.SIGCONT)
        paused.clear()

        def one_round():
            # the followers catch up first: a round may fail as the first did
            err, gen2, member2, _, _ = join_group(boot, group, member)
            eq((err, member2), (0, member), "the member's JoinGroup once the followers are back")
            check(gen2 > gen, "the next generation %d after %d", gen2, gen)
            err, assignment, took = sync_group(boot, group, gen2, member, b"mine")
            print("    a SyncGroup once the followers are back: error %d after %.2f s"
                  % (err, took), flush=True)
            return (gen2, assignment) if err == 0 else None

        gen2, assignment = wait_for(one_round, 60, "a round once the followers are back")
        eq(assignment, b"mine", "the assignment once the followers are back")
        eq(heartbeat(boot, group, gen2, member), 0, "a heartbeat of the Stable group")
    finally:
        for i in paused:
            os.kill(c.brokers[i].pid, signal.SIGCONT)
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_groups_are_coordinated_by_the_offsets_leaders,
                   case_committed_offsets_survive_the_coordinators_loss,
                   case_committed_offsets_survive_a_restart_of_every_broker,
                   case_a_commit_not_replicated_is_never_visible,
                   case_a_generation_completes_once_its_record_is_replicated]))
