"""The samsa tool's group, topic alter, perf and header commands as an
operator runs them, against the real samsa-broker (with kcat reading the
headers samsa wrote, and kafka-python's admin client checking offsets).

    test_client_tool.py SAMSA_BROKER SAMSA_TOOL [-k CASE]
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, free_port, main  # noqa: E402

TOOL = None
CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "1",
}
FAST = ["-X", "heartbeat.interval.ms=200", "-X", "session.timeout.ms=6000",
        "-X", "fetch.wait.max.ms=100", "-X", "auto.commit.interval.ms=200"]


def samsa(*args, stdin=None, expect=0):
    p = subprocess.run([TOOL] + list(args), input=stdin, capture_output=True, timeout=90)
    if expect is not None and p.returncode != expect:
        raise AssertionError("samsa %s: exit %d (wanted %d)\nstdout: %s\nstderr: %s"
                             % (" ".join(args), p.returncode, expect, p.stdout[-2000:],
                                p.stderr[-2000:]))
    return p


def table(out):
    """Rows of a whitespace-separated table with a header line, as dicts."""
    lines = out.decode().splitlines()
    head = lines[0].split()
    return [dict(zip(head, l.split())) for l in lines[1:]]


def produce_to(bs, topic, partition, values):
    samsa("produce", "-b", bs, "-t", topic, "-p", str(partition),
          stdin="".join(v + "\n" for v in values).encode())


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("%s: timed out" % what)
        time.sleep(0.1)


def case_group_list_describe_reset_and_delete(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "gt", "--partitions", "3")
    for p in range(3):
        produce_to(bs, "gt", p, ["p%d-%d" % (p, i) for i in range(10)])
    got = samsa("consume", "-b", bs, "-t", "gt", "--group", "g1", "--from", "beginning",
                "--count", "12", *FAST).stdout.decode().split()
    eq(len(got), 12, "records read by the group member")
    check("g1" in samsa("group", "list", "-b", bs).stdout.decode().split(), "g1 not listed")
    listed = json.loads(samsa("group", "list", "-b", bs, "--json").stdout)
    check({"group": "g1", "protocol_type": "consumer"} in listed, "%s", listed)
    p = samsa("group", "describe", "-b", bs, "g1")
    eq(p.stdout.decode().splitlines()[0].split(),
       ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
        "HOST", "CLIENT-ID"], "describe's columns")
    check(b"has no active members" in p.stderr, "%s", p.stderr)
    rows = table(p.stdout)
    eq(sum(int(r["CURRENT-OFFSET"]) for r in rows), 12, "committed at exit, in total")
    for r in rows:
        eq((r["GROUP"], r["TOPIC"], r["LOG-END-OFFSET"], int(r["LAG"]), r["CONSUMER-ID"]),
           ("g1", "gt", "10", 10 - int(r["CURRENT-OFFSET"]), "-"), "row %s" % r)
    # A member running: its id, host and client id on its partitions.
    member = subprocess.Popen([TOOL, "consume", "-b", bs, "-t", "gt", "--group", "g1",
                               "--from", "beginning", "-X", "client.id=tool-member"] + FAST,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        def described():
            d = json.loads(samsa("group", "describe", "-b", bs, "g1", "--json").stdout)
            return d if d["state"] == "Stable" and len(d["members"]) == 1 else None
        d = wait_for(described, 30, "a Stable group with the member")
        eq(d["protocol"], "range", "assignor")
        eq(sorted(p["partition"] for p in d["members"][0]["partitions"]), [0, 1, 2],
           "the member's partitions")
        for row in d["partitions"]:
            eq((row["client_id"], row["log_end_offset"]), ("tool-member", 10), "json row")
            check(row["consumer_id"].startswith("tool-member-") and row["host"], "%s", row)
        rows = table(samsa("group", "describe", "-b", bs, "g1").stdout)
        eq(sorted(r["CLIENT-ID"] for r in rows), ["tool-member"] * 3, "CLIENT-ID column")
        state = table(samsa("group", "describe", "-b", bs, "g1", "--state").stdout)
        eq((state[0]["STATE"], state[0]["#MEMBERS"]), ("Stable", "1"), "--state")
        # Offsets cannot be reset under a member, not even as a dry run
        # (Kafka 2.0's ConsumerGroupCommand.resetOffsets); nor can the group go.
        for mode in ([], ["--execute"]):
            p = samsa("group", "reset-offsets", "-b", bs, "g1", "-t", "gt", "--to-earliest",
                      *mode, expect=1)
            eq(p.stderr.decode(), "samsa group reset-offsets: Assignments can only be reset if "
               "the group 'g1' is inactive, but the current state is Stable.\n",
               "reset-offsets %s under a member" % mode)
            eq(p.stdout, b"", "reset-offsets %s under a member prints no plan" % mode)
        p = samsa("group", "delete", "-b", bs, "g1", expect=1)
        check(b"NON_EMPTY_GROUP" in p.stderr or b"not empty" in p.stderr.lower(), "%s", p.stderr)

        def caught_up():
            rows = table(samsa("group", "describe", "-b", bs, "g1").stdout)
            return all(r["LAG"] == "0" for r in rows)
        wait_for(caught_up, 30, "the member to read and commit the rest")
    finally:
        member.send_signal(signal.SIGTERM)
        out, err = member.communicate(timeout=30)
    eq(member.returncode, 0, "the member's exit status (%s)" % err[-500:])
    eq(len(out.decode().split()), 30 - 12, "the member read the rest")
    committed = {int(r["PARTITION"]): int(r["CURRENT-OFFSET"])
                 for r in table(samsa("group", "describe", "-b", bs, "g1").stdout)}
    eq(committed, {0: 10, 1: 10, 2: 10}, "committed by the member at exit")
    # Dry run: printed, not done.
    rows = table(samsa("group", "reset-offsets", "-b", bs, "g1", "-t", "gt",
                       "--to-earliest").stdout)
    eq([(r["PARTITION"], r["NEW-OFFSET"]) for r in rows], [("0", "0"), ("1", "0"), ("2", "0")],
       "dry run")
    committed = {int(r["PARTITION"]): int(r["CURRENT-OFFSET"])
                 for r in table(samsa("group", "describe", "-b", bs, "g1").stdout)}
    eq(committed, {0: 10, 1: 10, 2: 10}, "a dry run changes nothing")
    # --group G and TOPIC:P,P as kafka-consumer-groups.sh spells them
    samsa("group", "reset-offsets", "-b", bs, "--group", "g1", "-t", "gt:0,2", "--to-offset",
          "4", "--execute")
    committed = {int(r["PARTITION"]): int(r["CURRENT-OFFSET"])
                 for r in table(samsa("group", "describe", "-b", bs, "g1").stdout)}
    eq(committed, {0: 4, 1: 10, 2: 4}, "after -t gt:0,2 --to-offset 4")
    samsa("group", "reset-offsets", "-b", bs, "g1", "-t", "gt:1", "--to-offset", "4", "--execute")
    samsa("group", "reset-offsets", "-b", bs, "g1", "-t", "gt", "-p", "1", "--shift-by", "-3",
          "--execute")
    p = samsa("group", "reset-offsets", "-b", bs, "g1", "-t", "gt:0,5", "--to-earliest",
              expect=1)
    eq(p.stderr, b"samsa group reset-offsets: topic gt has no partition 5\n", "gt:0,5")
    for bad in (["-t", "gt:0,x"], ["-t", "gt:"], ["-t", "gt:0", "-p", "1"]):
        p = samsa("group", "reset-offsets", "-b", bs, "g1", *bad, "--to-earliest", expect=2)
        check(b"bad -t" in p.stderr, "%s: %s", bad, p.stderr)
    rows = table(samsa("group", "reset-offsets", "-b", bs, "g1", "-t", "gt", "--to-offset",
                       "99").stdout)
    eq([r["NEW-OFFSET"] for r in rows], ["10", "10", "10"], "an offset past the end is clamped")
    # --all-topics: every partition the group has committed (a dry run)
    rows = table(samsa("group", "reset-offsets", "-b", bs, "g1", "--all-topics",
                       "--to-earliest").stdout)
    eq([(r["TOPIC"], r["PARTITION"], r["NEW-OFFSET"]) for r in rows],
       [("gt", "0", "0"), ("gt", "1", "0"), ("gt", "2", "0")], "--all-topics")
    p = samsa("group", "reset-offsets", "-b", bs, "nobody", "--all-topics", "--to-earliest",
              expect=1)
    eq(p.stderr, b"samsa group reset-offsets: group nobody has no committed offsets: "
       b"--all-topics has nothing to reset\n", "--all-topics of a group without offsets")
    samsa("group", "reset-offsets", "-b", bs, "g1", "--all-topics", "-t", "gt", "--to-earliest",
          expect=2)
    committed = {int(r["PARTITION"]): int(r["CURRENT-OFFSET"])
                 for r in table(samsa("group", "describe", "-b", bs, "g1").stdout)}
    eq(committed, {0: 4, 1: 1, 2: 4}, "after --to-offset 4 and -p 1 --shift-by -3")
    got = samsa("consume", "-b", bs, "-t", "gt", "--group", "g1", "--count", "21",
                *FAST).stdout.decode().split()
    eq(sorted(got), sorted(["p0-%d" % i for i in range(4, 10)] + ["p1-%d" % i for i in range(1, 10)]
                           + ["p2-%d" % i for i in range(4, 10)]), "read from the reset offsets")
    samsa("group", "delete", "-b", bs, "g1")
    check("g1" not in samsa("group", "list", "-b", bs).stdout.decode().split(), "g1 listed")
    p = samsa("group", "describe", "-b", bs, "g1", expect=1)
    check(b"does not exist" in p.stderr, "%s", p.stderr)
    samsa("group", "delete", "-b", bs, "g1", expect=1)
    samsa("group", "reset-offsets", "-b", bs, "g1", "-t", "gt", expect=2)
    samsa("group", "frob", "-b", bs, expect=2)


def case_two_consume_group_members_share_a_topic(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "shared", "--partitions", "4")
    members = [subprocess.Popen([TOOL, "consume", "-b", bs, "-t", "shared", "--group", "g2",
                                 "--from", "beginning", "-f", "%p %s\\n"] + FAST,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for _ in range(2)]
    try:
        def split():
            # the group exists once a member has joined: until then describe says
            # it does not (exit 1)
            p = samsa("group", "describe", "-b", bs, "g2", "--json", expect=None)
            if p.returncode != 0:
                return None
            d = json.loads(p.stdout)
            ok = d["state"] == "Stable" and [len(m["partitions"]) for m in d["members"]] == [2, 2]
            return d if ok else None
        wait_for(split, 30, "two members with two partitions each")
        for p in range(4):
            produce_to(bs, "shared", p, ["s%d-%d" % (p, i) for i in range(25)])

        def all_committed():
            rows = table(samsa("group", "describe", "-b", bs, "g2").stdout)
            return len(rows) == 4 and all(r["LAG"] == "0" for r in rows)
        wait_for(all_committed, 30, "the group to commit everything")
    finally:
        outs = []
        for m in members:
            m.send_signal(signal.SIGTERM)
            outs.append(m.communicate(timeout=30)[0].decode().splitlines())
    eq([m.returncode for m in members], [0, 0], "exit statuses")
    lines = outs[0] + outs[1]
    eq(sorted(l.split()[1] for l in lines),
       sorted("s%d-%d" % (p, i) for p in range(4) for i in range(25)), "each record once")
    for out in outs:
        eq(len({l.split()[0] for l in out}), 2, "partitions read by one member")


def case_topic_alter_configs_and_partitions(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "alt", "--partitions", "2")
    samsa("topic", "alter", "-b", bs, "alt", "--config", "retention.ms=86400000",
          "--config", "cleanup.policy=compact")
    out = samsa("topic", "describe", "-b", bs, "alt").stdout.decode()
    configs = out.splitlines()[0].split("Configs: ")[1].split(",")
    eq(sorted(configs), ["cleanup.policy=compact", "retention.ms=86400000"], "configs shown")
    samsa("topic", "alter", "-b", bs, "alt", "--delete-config", "cleanup.policy")
    d = json.loads(samsa("topic", "describe", "-b", bs, "alt", "--json").stdout)
    eq(d[0]["configs"], {"retention.ms": "86400000"}, "after --delete-config")
    p = samsa("topic", "alter", "-b", bs, "alt", "--config", "retention.ms=never", expect=1)
    check(b"INVALID_CONFIG" in p.stderr, "%s", p.stderr)
    samsa("topic", "alter", "-b", bs, "alt", "--partitions", "4")
    d = json.loads(samsa("topic", "describe", "-b", bs, "alt", "--json").stdout)
    eq(d[0]["partitions"], 4, "partitions after alter")
    p = samsa("topic", "alter", "-b", bs, "alt", "--partitions", "3", expect=1)
    check(b"INVALID_PARTITIONS" in p.stderr, "%s", p.stderr)
    samsa("topic", "alter", "-b", bs, "alt", expect=2)
    samsa("topic", "alter", "-b", bs, "alt", "--config", "novalue", expect=2)


def case_headers_on_produce_reach_kcat_and_consume(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("produce", "-b", bs, "-t", "hdr", "-p", "0", "-H", "trace=abc", "-H", "n=1",
          stdin=b"one\ntwo\n")
    out = samsa("consume", "-b", bs, "-t", "hdr", "--from", "beginning", "-e",
                "-f", "%h|%s\\n").stdout.decode().splitlines()
    eq(out, ["trace=abc,n=1|one", "trace=abc,n=1|two"], "headers printed by samsa")
    js = json.loads(samsa("consume", "-b", bs, "-t", "hdr", "--from", "beginning", "-e",
                          "--json").stdout.decode().splitlines()[0])
    eq(js["headers"], {"trace": "abc", "n": "1"}, "headers in --json")
    k = subprocess.run(["kcat", "-C", "-b", bs, "-t", "hdr", "-o", "beginning", "-e", "-q",
                        "-f", "%h %s\\n"], capture_output=True, timeout=60)
    eq(k.stdout.decode().splitlines(), ["trace=abc,n=1 one", "trace=abc,n=1 two"],
       "headers as kcat reads them")
    samsa("produce", "-b", bs, "-t", "hdr", "-H", "novalue", stdin=b"", expect=2)


def case_perf_produce_and_consume_report_progress_throughput_latency(t):
    bs = t.broker(config=CONFIG).bootstrap
    p = samsa("perf", "produce", "-b", bs, "-t", "perf", "--count", "200000", "--size", "100",
              "--interval", "20")
    progress = [l for l in p.stderr.decode().splitlines() if l.startswith("produced: ")]
    check(progress, "no progress line: %s", p.stderr[-500:])
    out = p.stdout.decode()
    check(out.startswith("200000 records produced (0 failed), 20.00 MB in "), "%s", out)
    check("records/s" in out and "delivery latency (ms): p50 " in out and "p99" in out, "%s", out)
    r = json.loads(samsa("perf", "produce", "-b", bs, "-t", "perf", "--count", "1000", "--json",
                         "-X", "acks=1").stdout)
    eq((r["produced"], r["failed"], r["bytes"]), (1000, 0, 100000), "perf produce --json")
    check(0 <= r["latency_ms"]["p50"] <= r["latency_ms"]["p99"] <= r["latency_ms"]["max"],
          "%s", r)
    r = json.loads(samsa("perf", "consume", "-b", bs, "-t", "perf", "-e", "--json",
                         "--interval", "20").stdout)
    eq((r["consumed"], r["bytes"]), (201000, 20100000), "perf consume -e --json")
    # A backlog: records and MB read, and no latency (its records' age is not one).
    eq((r["latency_records"], r["latency_ms"]), (0, None), "no latency over a backlog")
    p = samsa("perf", "consume", "-b", bs, "-t", "perf", "--count", "5000", "--interval", "10")
    out = p.stdout.decode()
    check(out.startswith("5000 records consumed, 0.50 MB in "), "%s", out)
    check("latency: none measured (no record was produced after the start)" in out, "%s", out)
    # Records produced while it runs: their latency, and only theirs.
    cons = subprocess.Popen([TOOL, "perf", "consume", "-b", bs, "-t", "perf", "--count", "202000",
                             "--interval", "20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # its first progress line comes once it started measuring (the pipe
        # reaches EOF if it died first): records produced from then on are new
        first = cons.stderr.readline()
        check(re.match(rb"consumed: \d+ records, \d+\.\d\d MB, \d+ records/s, \d+\.\d\d MB/s$",
                       first), "progress line %s", first)
        samsa("perf", "produce", "-b", bs, "-t", "perf", "--count", "1000")
        out, err = cons.communicate(timeout=60)
    finally:
        if cons.poll() is None:
            cons.kill()
            cons.wait()
    eq(cons.returncode, 0, "perf consume's exit status (%s)" % err[-300:])
    check(b"latency (ms) of the 1000 records produced after the start: p50" in out, "%s", out)


def case_help_and_exit_codes(t):
    for cmd in (["group", "--help"], ["perf", "--help"], ["topic", "--help"],
                ["group", "describe", "--help"], ["perf", "produce", "--help"],
                ["consume", "--help"], ["produce", "--help"]):
        p = samsa(*cmd)
        check(p.stdout.startswith(b"usage: samsa"), "%s: %s", cmd, p.stdout[:100])
    # Each verb's --help is its own: its usage line, no other verb's.
    for cmd, verbs in (("topic", ("create", "list", "describe", "alter", "delete", "offsets")),
                       ("group", ("list", "describe", "reset-offsets", "delete")),
                       ("perf", ("produce", "consume")), ("cluster", ("info", "metadata")),
                       ("configs", ("describe", "alter")), ("leaders", ("elect-preferred",))):
        for verb in verbs:
            out = samsa(cmd, verb, "--help").stdout.decode()
            check(out.startswith("usage: samsa %s %s " % (cmd, verb)), "%s %s: %s", cmd, verb, out)
            others = [v for v in verbs if v != verb and "samsa %s %s " % (cmd, v) in out]
            eq(others, [], "other verbs in `samsa %s %s --help`" % (cmd, verb))
        out = samsa(cmd, "--help").stdout.decode()
        check(all("samsa %s %s" % (cmd, v) in out for v in verbs), "samsa %s --help: %s", cmd, out)
    samsa("group", expect=2)
    # samsa leaders: --zookeeper and what to elect are required; a ZooKeeper
    # that cannot be reached is said once, without the client library's log
    samsa("leaders", "elect-preferred", "--all", expect=2)
    samsa("leaders", "elect-preferred", "--zookeeper", "127.0.0.1:1", expect=2)
    p = samsa("leaders", "elect-preferred", "--zookeeper", "127.0.0.1:%d" % free_port(), "--all",
              "--timeout", "1000", expect=1)
    eq(p.stderr.decode().strip().splitlines()[-1:],
       ["samsa leaders: cannot connect to ZooKeeper at 127.0.0.1:%s" %
        p.args[4].split(":")[1]], "stderr")
    check(b"ZOO_" not in p.stderr, "the client library's log: %s", p.stderr[:300])
    samsa("perf", expect=2)
    samsa("perf", "produce", "-b", "127.0.0.1:1", expect=2)  # no -t
    samsa("consume", "-b", "x:1", "-t", "t", "--group", "g", "-p", "0", expect=2)
    samsa("group", "describe", "-b", "127.0.0.1:1", "g", "--timeout", "1000", expect=1)


def case_unreachable_or_unresolvable_bootstrap_fails_at_once(t):
    # No broker needed: a port nothing listens on and a name that does not resolve.
    port = free_port()
    for cmd in (["topic", "list"], ["topic", "describe", "x"], ["cluster", "info"],
                ["group", "describe", "g"], ["consume", "-t", "x"], ["produce", "-t", "x"]):
        began = time.monotonic()
        p = samsa(*cmd, "-b", "127.0.0.1:%d,no-such-host.invalid:9092" % port, stdin=b"v\n",
                  expect=1)
        took = time.monotonic() - began
        check(took < 10, "%s took %.1f s", cmd, took)
        err = p.stderr.decode()
        check("127.0.0.1:%d: connection refused" % port in err, "%s: %s", cmd, err)
        check('cannot resolve "no-such-host.invalid"' in err, "%s: %s", cmd, err)
        check("timed out" not in err, "%s: %s", cmd, err)
    # One good address among bad ones is enough.
    bs = t.broker(config=CONFIG).bootstrap
    out = samsa("cluster", "info", "-b", "127.0.0.1:%d,%s" % (port, bs)).stdout.decode()
    check("CONTROLLER" in out, "%s", out)


def case_missing_topic_reads_does_not_exist(t):
    bs = t.broker(config=CONFIG).bootstrap
    for cmd in (["topic", "describe", "nosuch"], ["consume", "-t", "nosuch", "-e"],
                ["perf", "consume", "-t", "nosuch", "-e"],
                ["group", "reset-offsets", "g", "-t", "nosuch", "--to-earliest"],
                ["topic", "delete", "nosuch"], ["topic", "alter", "nosuch", "--partitions", "3"],
                ["topic", "alter", "nosuch", "--config", "retention.ms=1"],
                ["topic", "offsets", "nosuch"], ["configs", "describe", "-t", "nosuch"]):
        p = samsa(*cmd, "-b", bs, expect=1)
        check(b"Topic 'nosuch' does not exist" in p.stderr, "%s: %s", cmd, p.stderr)
        check(b"does not host" not in p.stderr, "%s: %s", cmd, p.stderr)


def aligned(lines, what):
    """Every row's cells start where the header's columns start."""
    starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
    for line in lines[1:]:
        eq([m.start() for m in re.finditer(r"\S+", line)], starts,
           "%s: columns of %r under %r" % (what, line, lines[0]))


def case_group_describe_several_all_groups_members_and_sized_columns(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "dt", "--partitions", "2")
    for p in range(2):
        produce_to(bs, "dt", p, ["d%d-%d" % (p, i) for i in range(5)])
    for g in ("ga", "gb"):
        samsa("consume", "-b", bs, "-t", "dt", "--group", g, "--from", "beginning",
              "--count", "4", *FAST)
    long_id = "an-operator-console-with-a-long-client-id"
    member = subprocess.Popen([TOOL, "consume", "-b", bs, "-t", "dt", "--group", "gc",
                               "--from", "beginning", "-X", "client.id=" + long_id] + FAST,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def stable():
            p = samsa("group", "describe", "-b", bs, "gc", "--json", expect=None)
            d = json.loads(p.stdout) if p.returncode == 0 else None
            return d if d and d["state"] == "Stable" and len(d["members"]) == 1 else None
        wait_for(stable, 30, "gc Stable with its member")
        # Two groups at once: two tables, a blank line between, each aligned.
        blocks = samsa("group", "describe", "-b", bs, "ga", "gb").stdout.decode().split("\n\n")
        eq(len(blocks), 2, "tables for ga gb")
        for g, block in zip(("ga", "gb"), blocks):
            lines = block.strip("\n").splitlines()
            eq({l.split()[0] for l in lines[1:]}, {g}, "rows of %s" % g)
            eq(sum(int(l.split()[3]) for l in lines[1:]), 4, "%s's committed offsets" % g)
            aligned(lines, g)
        # A member id longer than 40 characters keeps its columns aligned.
        lines = samsa("group", "describe", "-b", bs, "gc").stdout.decode().splitlines()
        check(len(lines[1].split()[6]) > 40, "%s", lines)
        aligned(lines, "gc")
        eq([l.split()[8] for l in lines[1:]], [long_id] * 2, "CLIENT-ID")
        lines = samsa("group", "describe", "-b", bs, "gc", "--members").stdout.decode().splitlines()
        eq(lines[0].split(), ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"],
           "--members columns")
        eq(len(lines), 2, "one member")
        row = lines[1].split()
        eq((row[0], row[3], row[4]), ("gc", long_id, "2"), "--members row")
        check(row[1].startswith(long_id + "-"), "%s", row)
        aligned(lines, "--members")
        # Every group, in text and JSON.
        out = samsa("group", "describe", "-b", bs, "--all-groups", "--state").stdout.decode()
        states = {l.split()[0]: l for l in out.splitlines() if l and not l.startswith("GROUP")}
        eq(sorted(states), ["ga", "gb", "gc"], "--all-groups --state")
        d = json.loads(samsa("group", "describe", "-b", bs, "--all-groups", "--json").stdout)
        eq(sorted(x["group"] for x in d), ["ga", "gb", "gc"], "--all-groups --json")
        d = json.loads(samsa("group", "describe", "-b", bs, "ga", "nosuch", "gb", "--json",
                             expect=1).stdout)
        eq([x["group"] for x in d], ["ga", "gb"], "the groups that exist, in JSON")
        p = samsa("group", "describe", "-b", bs, "ga", "nosuch", expect=1)
        check(b"'nosuch' does not exist" in p.stderr, "%s", p.stderr)
        check(p.stdout.startswith(b"GROUP"), "%s", p.stdout)
        samsa("group", "describe", "-b", bs, expect=2)
        samsa("group", "describe", "-b", bs, "ga", "--all-groups", expect=2)
    finally:
        member.send_signal(signal.SIGTERM)
        member.wait(timeout=30)


def case_topic_describe_filters_and_cluster_metadata(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "mi", "--partitions", "2", "--config",
          "min.insync.replicas=2")
    samsa("topic", "create", "-b", bs, "fine", "--partitions", "1")
    out = samsa("topic", "describe", "-b", bs, "--under-min-isr-partitions").stdout.decode()
    lines = out.splitlines()
    eq([l.split("\t")[1:3] for l in lines], [["Topic: mi", "Partition: 0"],
                                             ["Topic: mi", "Partition: 1"]],
       "--under-min-isr-partitions: %s" % out)
    d = json.loads(samsa("topic", "describe", "-b", bs, "fine", "mi", "--json",
                         "--under-min-isr-partitions").stdout)
    eq([(x["name"], [p["partition"] for p in x["partition_info"]]) for x in d], [("mi", [0, 1])],
       "--under-min-isr-partitions --json")
    # One broker, every partition led and in sync: nothing to list.
    for flag in ("--under-replicated-partitions", "--unavailable-partitions"):
        eq(samsa("topic", "describe", "-b", bs, flag).stdout, b"", flag)
    eq(samsa("topic", "describe", "-b", bs, "fine", "--under-min-isr-partitions").stdout, b"",
       "a healthy topic")
    out = samsa("topic", "describe", "-b", bs).stdout.decode()
    check("Topic: mi\tPartitionCount: 2" in out and "Topic: fine\tPartitionCount: 1" in out,
          "describe without a name: %s", out)
    # Every partition's leader, replicas and ISR, as kcat -L lists them.
    out = samsa("cluster", "metadata", "-b", bs).stdout.decode()
    for line in (" 1 brokers:", "  broker 0 at %s (controller)" % bs,
                 '  topic "mi" with 2 partitions:', "    partition 1, leader 0, replicas: 0, isrs: 0",
                 '  topic "fine" with 1 partitions:'):
        check(line + "\n" in out, "cluster metadata lacks %r: %s", line, out)
    d = json.loads(samsa("cluster", "metadata", "-b", bs, "-t", "mi", "--json").stdout)
    eq([(x["name"], x["partitions"]) for x in d["topics"]],
       [("mi", [{"partition": 0, "leader": 0, "replicas": [0], "isr": [0], "error": ""},
                {"partition": 1, "leader": 0, "replicas": [0], "isr": [0], "error": ""}])],
       "cluster metadata -t mi --json")
    p = samsa("cluster", "metadata", "-b", bs, "-t", "nosuch", expect=1)
    check(b"Topic 'nosuch' does not exist" in p.stderr, "%s", p.stderr)


def case_offsets_relative_start_and_until(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "ot", "--partitions", "2")
    for p in range(2):
        produce_to(bs, "ot", p, ["a%d-%d" % (p, i) for i in range(5)])
    # a time after every record of the first batch, before any of the second
    mid = int(time.time() * 1000) + 1
    wait_for(lambda: time.time() * 1000 > mid + 1, 5, "the clock past the mark")
    for p in range(2):
        produce_to(bs, "ot", p, ["b%d-%d" % (p, i) for i in range(3)])
    lines = samsa("topic", "offsets", "-b", bs, "ot").stdout.decode().splitlines()
    eq([l.split() for l in lines], [["TOPIC", "PARTITION", "EARLIEST", "LATEST"],
                                    ["ot", "0", "0", "8"], ["ot", "1", "0", "8"]], "offsets")
    aligned(lines, "offsets")
    d = json.loads(samsa("topic", "offsets", "-b", bs, "ot", "-p", "1", "--time", str(mid),
                         "--json").stdout)
    eq(d, [{"topic": "ot", "partition": 1, "time": mid, "offset": 5}], "offsets --time --json")
    rows = [l.split() for l in samsa("topic", "offsets", "-b", bs, "ot", "--time",
                                     str(mid + 3600000)).stdout.decode().splitlines()]
    eq(rows[1:], [["ot", "0", str(mid + 3600000), "-"], ["ot", "1", str(mid + 3600000), "-"]],
       "no record after --time")
    p = samsa("topic", "offsets", "-b", bs, "nosuch", expect=1)
    check(b"Topic 'nosuch' does not exist" in p.stderr, "%s", p.stderr)
    # group reset-offsets --to-datetime as kafka-consumer-groups.sh takes it
    # (YYYY-MM-DDTHH:mm:SS.sss, UTC without a zone), or in milliseconds
    def iso(ms, east_min=None):
        zone = "" if east_min is None else "%s%02d:%02d" % ("-" if east_min < 0 else "+",
                                                           abs(east_min) // 60, abs(east_min) % 60)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000 + (east_min or 0) * 60)) \
            + ".%03d" % (ms % 1000) + zone
    for when in (str(mid), iso(mid), iso(mid, 0).replace("+00:00", "Z"), iso(mid, 120),
                 iso(mid, -330)):
        rows = table(samsa("group", "reset-offsets", "-b", bs, "gdt", "-t", "ot",
                           "--to-datetime", when).stdout)
        eq([(r["PARTITION"], r["NEW-OFFSET"]) for r in rows], [("0", "5"), ("1", "5")],
           "--to-datetime %s" % when)
    for bad in ("2024-13-01T00:00:00.000", "2024-01-01 00:00:00", "2024-01-01T00:00:00.000+2"):
        p = samsa("group", "reset-offsets", "-b", bs, "gdt", "-t", "ot", "--to-datetime", bad,
                  expect=2)
        check(b"bad --to-datetime" in p.stderr, "%s: %s", bad, p.stderr)
    # The last N of each partition, as kcat -o -N.
    out = samsa("consume", "-b", bs, "-t", "ot", "-o", "-2", "-e").stdout.decode().split()
    eq(sorted(out), ["b0-1", "b0-2", "b1-1", "b1-2"], "-o -2")
    out = samsa("consume", "-b", bs, "-t", "ot", "-p", "0", "--from", "-100", "-e")
    eq(out.stdout.decode().split(), ["a0-%d" % i for i in range(5)] + ["b0-%d" % i for i in range(3)],
       "--from -100 on 8 records")
    # Up to a time: each partition stops before its first record at or after it.
    began = time.monotonic()
    out = samsa("consume", "-b", bs, "-t", "ot", "--from", "beginning", "--until",
                "@%d" % mid).stdout.decode().split()
    check(time.monotonic() - began < 20, "--until without -e did not end")
    eq(sorted(out), sorted("a%d-%d" % (p, i) for p in range(2) for i in range(5)), "--until")
    out = samsa("consume", "-b", bs, "-t", "ot", "-o", "-4", "--until", "@%d" % (mid + 3600000),
                "-e").stdout.decode().split()
    eq(sorted(out), sorted(["a0-4", "a1-4"] + ["b%d-%d" % (p, i) for p in range(2)
                                                for i in range(3)]), "-o -4 --until later -e")
    samsa("consume", "-b", bs, "-t", "ot", "--group", "g", "--until", "@1", expect=2)
    samsa("consume", "-b", bs, "-t", "ot", "--from", "-x", expect=2)


def case_configs_describe_of_brokers_and_topics(t):
    b = t.broker(config=CONFIG)
    bs = b.bootstrap
    lines = samsa("configs", "describe", "-b", bs, "--broker", "0").stdout.decode().splitlines()
    eq(lines[0].split(), ["NAME", "VALUE", "SOURCE"], "columns")
    aligned(lines, "configs describe --broker 0")
    rows = {l.split()[0]: l.split()[1:] for l in lines[1:]}
    eq(rows["listeners"], ["PLAINTEXT://" + bs, "STATIC_BROKER_CONFIG"], "listeners")
    eq(rows["group.initial.rebalance.delay.ms"], ["0", "STATIC_BROKER_CONFIG"], "a set config")
    check("reserved.broker.max.id" not in rows, "a default listed without --all: %s", lines)
    d = json.loads(samsa("configs", "describe", "-b", bs, "--broker", "0", "--all",
                         "--json").stdout)
    byname = {c["name"]: c for c in d}
    eq((byname["reserved.broker.max.id"]["value"], byname["reserved.broker.max.id"]["source"]),
       ("1000", "DEFAULT_CONFIG"), "--all --json")
    samsa("topic", "create", "-b", bs, "ct", "--config", "retention.ms=60000")
    lines = samsa("configs", "describe", "-b", bs, "-t", "ct").stdout.decode().splitlines()
    eq([l.split() for l in lines[1:]], [["retention.ms", "60000", "DYNAMIC_TOPIC_CONFIG"]],
       "a topic's own configs")
    began = time.monotonic()
    p = samsa("configs", "describe", "-b", bs, "--broker", "7", expect=1)
    check(b"broker 7 is not in the cluster (brokers: 0)" in p.stderr, "%s", p.stderr)
    check(time.monotonic() - began < 10, "an unknown broker took %.1f s", time.monotonic() - began)
    p = samsa("configs", "describe", "-b", bs, "-t", "nosuch", expect=1)
    check(b"Topic 'nosuch' does not exist" in p.stderr, "%s", p.stderr)
    samsa("configs", "describe", "-b", bs, expect=2)
    samsa("configs", "describe", "-b", bs, "--broker", "0", "-t", "ct", expect=2)
    samsa("configs", "alter", "-b", bs, "--broker", "0", expect=2)


def case_config_file_and_command_config(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "cf")
    home = os.path.join(t.dir, "xdg")
    os.makedirs(os.path.join(home, "samsa"))
    with open(os.path.join(home, "samsa", "config"), "w") as f:
        f.write("# the operator's cluster\n\nbootstrap.servers = %s\n! a comment\n"
                "socket.timeout.ms: 20000\nclient.id samsa-ops\n" % bs)
    env = dict(os.environ, XDG_CONFIG_HOME=home)
    env.pop("SAMSA_BROKERS", None)

    def run(*args, expect=0):
        p = subprocess.run([TOOL] + list(args), capture_output=True, timeout=60, env=env)
        eq(p.returncode, expect, "samsa %s: %s" % (" ".join(args), p.stderr[-500:]))
        return p
    # No -b: the file's bootstrap.servers.
    check("cf" in run("topic", "list").stdout.decode().split(), "topic list from the file")
    # --command-config comes after the file; -b after both.
    port = free_port()
    other = os.path.join(t.dir, "other.properties")
    with open(other, "w") as f:
        f.write("bootstrap.servers=127.0.0.1:%d\n" % port)
    p = run("topic", "list", "--command-config", other, expect=1)
    check(("127.0.0.1:%d: connection refused" % port).encode() in p.stderr, "%s", p.stderr)
    check("cf" in run("topic", "list", "--command-config", other, "-b", bs).stdout.decode().split(),
          "-b over --command-config")
    # A bad property is named with its file and line.
    bad = os.path.join(t.dir, "bad.properties")
    with open(bad, "w") as f:
        f.write("bootstrap.servers=%s\n\nacks=7\n" % bs)
    p = run("topic", "list", "--command-config", bad, expect=2)
    check(("%s:3: " % bad).encode() in p.stderr and b"acks" in p.stderr, "%s", p.stderr)
    p = run("topic", "list", "--command-config", os.path.join(t.dir, "none"), expect=2)
    check(b"No such file" in p.stderr, "%s", p.stderr)


def case_group_describe_leaves_out_a_deleted_topics_offsets(t):
    bs = t.broker(config=CONFIG).bootstrap
    for topic in ("gone", "kept"):
        samsa("topic", "create", "-b", bs, topic)
        produce_to(bs, topic, 0, ["v%d" % i for i in range(4)])
    samsa("consume", "-b", bs, "-t", "gone,kept", "--group", "gd", "--from", "beginning",
          "--count", "8", *FAST)
    samsa("topic", "delete", "-b", bs, "gone")
    p = samsa("group", "describe", "-b", bs, "gd")
    eq([(r["TOPIC"], r["LAG"]) for r in table(p.stdout)], [("kept", "0")], "rows")
    check(b"Topic 'gone' does not exist: its committed offsets are not shown" in p.stderr,
          "%s", p.stderr)


if __name__ == "__main__":
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_group_list_describe_reset_and_delete,
                   case_two_consume_group_members_share_a_topic,
                   case_topic_alter_configs_and_partitions,
                   case_headers_on_produce_reach_kcat_and_consume,
                   case_perf_produce_and_consume_report_progress_throughput_latency,
                   case_help_and_exit_codes,
                   case_unreachable_or_unresolvable_bootstrap_fails_at_once,
                   case_missing_topic_reads_does_not_exist,
                   case_group_describe_several_all_groups_members_and_sized_columns,
                   case_topic_describe_filters_and_cluster_metadata,
                   case_offsets_relative_start_and_until,
                   case_configs_describe_of_brokers_and_topics,
                   case_config_file_and_command_config,
                   case_group_describe_leaves_out_a_deleted_topics_offsets]))
