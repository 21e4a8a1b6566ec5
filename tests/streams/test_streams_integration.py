"""libsamsa-streams against the real samsa-broker: the word count example
(client/streams/examples/wordcount.c) reads lines the samsa tool produced,
its output is read back with kcat as Java longs (kcat -s value='>q') and
compared to word counts computed here; then it is stopped, more lines come,
and it is started again: its store comes back from the changelog and the
counts go on from where they were.

The enrichment example (client/streams/examples/enrich.c) joins orders
with a customers table: its output is compared to the join computed here.

The windowed page-view example (client/streams/examples/pageviews.c)
writes one final count per page and window, compared to counts computed
here from the views' timestamps as the broker stored them.

    test_streams_integration.py SAMSA_BROKER SAMSA_TOOL WORDCOUNT ENRICH PAGEVIEWS \
        REPARTITION_SIZES [-k CASE]
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import Skip, check, eq, main  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "client"))
from test_client_mock import murmur2  # noqa: E402  (Java's Utils.murmur2)

TOOL = None
WORDCOUNT = None
ENRICH = None
PAGEVIEWS = None
REPARTITION_SIZES = None
QUERY = None
TIMEOUT = 60
CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "1",
    "num.partitions": "1",
}
VOCABULARY = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
              "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau",
              "upsilon", "phi", "chi", "psi", "omega", "Alpha", "BETA"]


def samsa(*args, stdin=None):
    p = subprocess.run([TOOL] + list(args), input=stdin, capture_output=True, timeout=TIMEOUT)
    if p.returncode != 0:
        raise AssertionError("samsa %s: exit %d\nstdout: %s\nstderr: %s"
                             % (" ".join(args), p.returncode, p.stdout[-2000:],
                                p.stderr[-2000:]))
    return p


def lines_of(seed, n):
    """n lines of Zipf-like words, punctuation and case mixed in."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        words = [VOCABULARY[min(int(rnd.paretovariate(1.2)) - 1, len(VOCABULARY) - 1)]
                 for _ in range(rnd.randint(0, 9))]
        out.append(rnd.choice([" ", ", ", "  ", "; "]).join(words) + rnd.choice(["", ".", "!"]))
    return out


def oracle(lines):
    """Kafka's WordCountDemo: toLowerCase, split on \\W+, count."""
    counts = {}
    for line in lines:
        for w in re.split(r"\W+", line.lower()):
            if w:
                counts[w] = counts.get(w, 0) + 1
    return counts


def produce(bs, topic, lines, key=False):
    """Each line a record; key: the text before its first ':' is the key."""
    args = ["-K", ":"] if key else []
    p = samsa("produce", "-b", bs, "-t", topic, *args,
              stdin=("\n".join(lines) + "\n").encode())
    check(("%d delivered, 0 failed" % len(lines)).encode() in p.stderr, "produce: %s", p.stderr)


def read_output(bs, topic):
    """Every record of topic, per key the counts in offset order."""
    p = subprocess.run(["kcat", "-C", "-b", bs, "-t", topic, "-o", "beginning", "-e", "-q",
                        "-s", "value=>q", "-f", "%k %s\\n"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    check(p.returncode == 0, "kcat: exit %d: %s", p.returncode, p.stderr)
    seq = {}
    for line in p.stdout.splitlines():
        k, v = line.rsplit(" ", 1)
        seq.setdefault(k, []).append(int(v))
    return seq


class App:
    """The word count example as a process of its own, stopped by its PID."""

    def __init__(self, t, bs, n, inputs="lines", extra=()):
        self.log = t.path("wordcount-%d.log" % n)
        self.err = open(self.log, "w")
        # a short session: a killed member's partitions move within 6 s
        self.proc = subprocess.Popen([WORDCOUNT, bs, inputs, "counts", "wc", "200",
                                      "session.timeout.ms=6000"] + list(extra),
                                     stdout=subprocess.DEVNULL, stderr=self.err)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=TIMEOUT)
        self.err.close()
        text = open(self.log).read()
        eq(rc, 0, "wordcount's exit status (log: %s)" % text[-2000:])
        return text

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=TIMEOUT)
        self.err.close()


def wait_for_counts(bs, want, app, reached=lambda last, want: last == want):
    deadline = time.monotonic() + TIMEOUT
    last = None
    while time.monotonic() < deadline:
        check(app.proc.poll() is None, "wordcount exited: %s", open(app.log).read()[-2000:])
        seq = read_output(bs, "counts")
        last = {k: v[-1] for k, v in seq.items()}
        if reached(last, want):
            return seq
        time.sleep(0.2)
    raise AssertionError("counts not reached in %d s: want %r, last %r" % (TIMEOUT, want, last))


def check_each_count_once(seq, want):
    """A clean run and a clean restart write per word 1, 2, ..., its count:
    nothing counted twice, nothing skipped."""
    for k, values in seq.items():
        eq(values, list(range(1, want[k] + 1)), "the counts written for %r" % k)


def topic_config(bs, topic):
    p = samsa("topic", "describe", "-b", bs, topic, "--json")
    return json.loads(p.stdout)


def case_word_count_then_restart_restores_from_the_changelog(t, extra=(), lmdb=False):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "lines", "--partitions", "3")
    samsa("topic", "create", "-b", bs, "counts", "--partitions", "3")
    first = lines_of(1, 3000)
    produce(bs, "lines", first)
    app = App(t, bs, 1, extra=extra)
    try:
        want = oracle(first)
        seq = wait_for_counts(bs, want, app)
        check_each_count_once(seq, want)
        log = app.stop()
    finally:
        app.kill()
    # each line once, then each word once more through the repartition topic
    words_first = sum(want.values())
    check("processed %d restored 0" % (len(first) + words_first) in log, "first run: %s",
          log[-2000:])
    # the internal topics as Kafka Streams names them: the changelog
    # compacted, both with the input's partition count
    changelog = topic_config(bs, "wc-counts-changelog")[0]
    eq(changelog["configs"].get("cleanup.policy"), "compact", "the changelog's cleanup.policy")
    eq(changelog["partitions"], 3, "the changelog's partitions")
    eq(topic_config(bs, "wc-counts-repartition")[0]["partitions"], 3,
       "the repartition topic's partitions")

    second = lines_of(2, 2000)
    produce(bs, "lines", second)
    app = App(t, bs, 2, extra=extra)
    try:
        want = oracle(first + second)
        seq = wait_for_counts(bs, want, app)
        check_each_count_once(seq, want)
        log = app.stop()
    finally:
        app.kill()
    m = re.search(r"processed (\d+) restored (\d+)", log)
    check(m is not None, "second run: %s", log[-2000:])
    processed, restored = int(m.group(1)), int(m.group(2))
    # from the committed offsets on: the second batch only, nothing again
    eq(processed, len(second) + sum(oracle(second).values()), "records the second run processed")
    if lmdb:
        # the LMDB file holds the state and the positions it reflects: the
        # changelog's tail past them is empty
        eq(restored, 0, "changelog records restored over the LMDB file")
    else:
        # the store came back from the changelog (one record per update of
        # the first run, the topic not compacted yet)
        eq(restored, words_first, "changelog records restored")
    print("  %d + %d lines, %d words, %d changelog records restored"
          % (len(first), len(second), len(want), restored))

def case_word_count_on_lmdb_then_restart(t):
    """The same with the store in LMDB files (state.dir): the second run
    finds the first run's file, with the positions of its last commit, and
    restores nothing (the changelog has nothing past them)."""
    state = t.path("state")
    case_word_count_then_restart_restores_from_the_changelog(t, extra=["state.dir=" + state],
                                                             lmdb=True)
    check(os.path.exists(os.path.join(state, "wc", "1_0", "data.mdb")),
          "no LMDB file under %s", state)


def case_kill_9_then_restart_loses_no_count(t):
    """Killed with SIGKILL while lines come, started again once more lines
    came, the word count restores its store and goes on from the positions
    its changelog records carry: what the killed run applied is not applied
    again (Kafka Streams' at-least-once would count it twice), so the counts
    end equal to the oracle (streams-recovery kills it 20 times)."""
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "lines", "--partitions", "3")
    samsa("topic", "create", "-b", bs, "counts", "--partitions", "3")
    batches = [lines_of(100 + i, 500) for i in range(40)]
    want = oracle([line for b in batches for line in b])
    total = sum(want.values())
    failed = []

    def produce_first_half():
        try:
            for b in batches[:20]:
                produce(bs, "lines", b)
                time.sleep(0.1)  # pacing only: lines keep coming for a few seconds
        except Exception as e:  # noqa: BLE001 (reported by the main thread)
            failed.append(e)

    app = App(t, bs, 1)
    producer = threading.Thread(target=produce_first_half)
    producer.start()
    try:
        # killed once some updates are out, lines perhaps still coming
        wait_for_counts(bs, want, app, lambda last, want: sum(last.values()) >= total // 20)
        app.proc.kill()
        app.proc.wait(timeout=TIMEOUT)
    finally:
        app.kill()
        producer.join(timeout=TIMEOUT)
    check(not failed, "producing: %s", failed)
    written = sum(len(v) for v in read_output(bs, "counts").values())
    for b in batches[20:]:
        produce(bs, "lines", b)
    app = App(t, bs, 2)
    try:
        seq = wait_for_counts(bs, want, app, lambda last, want: set(last) == set(want) and all(
            last[k] >= want[k] for k in want))
        log = app.stop()
    finally:
        app.kill()
    last = {k: v[-1] for k, v in seq.items()}
    m = re.search(r"processed (\d+) restored (\d+)", log)
    check(m is not None, "second run: %s", log[-2000:])
    check(int(m.group(2)) > 0, "the second run restored nothing: %s", log[-2000:])
    print("  killed after %d of %d updates were out; the second run restored %s changelog "
          "records, processed %s records; %d updates counted twice"
          % (written, total, m.group(2), m.group(1), sum(last[k] - want[k] for k in want)))
    eq(last, want, "the counts after the restart")
    for k, values in seq.items():
        check(max(values) <= want[k], "%r written as %d, the lines hold %d", k, max(values),
              want[k])


def check_refused(app, sentence):
    """app exits with status 1 at start, saying sentence."""
    try:
        rc = app.proc.wait(timeout=TIMEOUT)
    finally:
        app.kill()
    log = open(app.log).read()
    eq(rc, 1, "the exit status (log: %s)" % log)
    check(sentence in log, "the refusal: %s", log)


def case_source_topics_with_other_partition_counts_are_refused(t):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "lines", "--partitions", "3")
    samsa("topic", "create", "-b", bs, "more-lines", "--partitions", "2")
    check_refused(App(t, bs, 1, inputs="lines,more-lines"),
                  "must have the same partition count: more-lines has 2, lines has 3")


def kcat_lines(bs, topic, fmt):
    """Every record of topic formatted by kcat's -f fmt, one line each, in
    offset order per partition; none while the topic is not there yet (the
    app creates its internal topics)."""
    p = subprocess.run(["kcat", "-C", "-b", bs, "-t", topic, "-o", "beginning", "-e", "-q",
                        "-f", fmt + "\n"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode != 0 and ("Leader not available" in p.stderr
                              or "Unknown topic" in p.stderr):
        return []
    check(p.returncode == 0, "kcat: exit %d: %s", p.returncode, p.stderr)
    return p.stdout.splitlines()


def read_text(bs, topic):
    """Every record of topic as (key, value) text."""
    return [tuple(line.split("\t", 1)) for line in kcat_lines(bs, topic, "%k\t%s")]


class Enrich(App):
    """The enrichment example: orders joined with the customers table."""

    def __init__(self, t, bs, n, app_id="shop", rekey=False):  # pylint: disable=super-init-not-called
        self.log = t.path("enrich-%d.log" % n)
        self.err = open(self.log, "w")
        self.proc = subprocess.Popen([ENRICH] + (["--rekey"] if rekey else []) +
                                     [bs, "orders", "customers", "enriched", app_id,
                                      "200", "session.timeout.ms=6000"],
                                     stdout=subprocess.DEVNULL, stderr=self.err)


def wait_for(what, fn, app):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        check(app.proc.poll() is None, "the app exited: %s", open(app.log).read()[-2000:])
        got = fn()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("%s not reached in %d s" % (what, TIMEOUT))


def case_enrichment_join_equals_the_oracle(t):
    """Orders (key: customer id) left-joined with the customers table: each
    order is written with the name the table had when the order was
    processed, "unknown" for a customer the table lacks. The table is read
    in before the orders come (its changelog holds every customer), then a
    customer is renamed and another deleted: later orders carry the change,
    the earlier outputs stay."""
    bs = t.broker(config=CONFIG).bootstrap
    for topic in ("orders", "customers", "enriched"):
        samsa("topic", "create", "-b", bs, topic, "--partitions", "3")
    rnd = random.Random(5)
    names = {"c%d" % i: "name-%d" % i for i in range(40)}
    produce(bs, "customers", ["%s:%s" % kv for kv in names.items()], key=True)
    app = Enrich(t, bs, 1)
    try:
        # the table is in the store once its changelog holds every customer
        wait_for("the customers table read in",
                 lambda: len(read_text(bs, "shop-customers-changelog")) == len(names), app)
        orders = [("c%d" % rnd.randrange(50), "order-%d" % i) for i in range(400)]
        produce(bs, "orders", ["%s:%s" % kv for kv in orders], key=True)
        want = [(k, "%s,%s" % (v, names.get(k, "unknown"))) for k, v in orders]
        got = wait_for("400 enriched orders",
                       lambda: (lambda r: r if len(r) >= len(want) else None)(
                           read_text(bs, "enriched")), app)
        eq(sorted(got), sorted(want), "the enriched orders")
        # a renamed customer: the later orders carry the new name
        names["c1"] = "renamed"
        produce(bs, "customers", ["c1:renamed"], key=True)
        wait_for("the rename read in",
                 lambda: len(read_text(bs, "shop-customers-changelog")) == len(names) + 1, app)
        more = [("c1", "late-%d" % i) for i in range(20)]
        produce(bs, "orders", ["%s:%s" % kv for kv in more], key=True)
        want += [(k, "%s,renamed" % v) for k, v in more]
        got = wait_for("420 enriched orders",
                       lambda: (lambda r: r if len(r) >= len(want) else None)(
                           read_text(bs, "enriched")), app)
        eq(sorted(got), sorted(want), "the enriched orders after the rename")
        app.stop()
    finally:
        app.kill()
    print("  %d orders enriched, %d of them for unknown customers"
          % (len(want), sum(1 for _, v in want if v.endswith(",unknown"))))


def case_rekeyed_orders_go_through_a_repartition_topic(t):
    """Orders keyed by order id, their customer first in the value, from a
    topic of 4 partitions: select_key and the repartition topic
    shop-orders-by-customer-repartition bring each to the task of its
    customer. The topic has the customers table's 3 partitions (read with
    it, it takes its count) and each record sits in the partition Java's
    producer picks for its key (murmur2); the output equals the oracle."""
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "orders", "--partitions", "4")
    samsa("topic", "create", "-b", bs, "customers", "--partitions", "3")
    samsa("topic", "create", "-b", bs, "enriched", "--partitions", "3")
    rnd = random.Random(8)
    names = {"c%d" % i: "name-%d" % i for i in range(30)}
    produce(bs, "customers", ["%s:%s" % kv for kv in names.items()], key=True)
    app = Enrich(t, bs, 1, rekey=True)
    try:
        wait_for("the customers table read in",
                 lambda: len(read_text(bs, "shop-customers-changelog")) == len(names), app)
        orders = [("o%d" % i, "c%d item-%d" % (rnd.randrange(36), i)) for i in range(300)]
        produce(bs, "orders", ["%s:%s" % kv for kv in orders], key=True)
        want = sorted((v.split(" ")[0], "%s,%s" % (v, names.get(v.split(" ")[0], "unknown")))
                      for _, v in orders)
        got = wait_for("300 enriched orders",
                       lambda: (lambda r: r if len(r) >= len(want) else None)(
                           read_text(bs, "enriched")), app)
        eq(sorted(got), want, "the enriched orders")
        app.stop()
    finally:
        app.kill()
    topic = "shop-orders-by-customer-repartition"
    eq(topic_config(bs, topic)[0]["partitions"], 3, "the repartition topic's partitions")
    p = subprocess.run(["kcat", "-C", "-b", bs, "-t", topic, "-o", "beginning", "-e", "-q",
                        "-f", "%p\t%k\n"], capture_output=True, text=True, timeout=TIMEOUT)
    check(p.returncode == 0, "kcat: %s", p.stderr)
    placed = [line.split("\t") for line in p.stdout.splitlines()]
    eq(len(placed), len(orders), "records in the repartition topic")
    for part, key in placed:
        eq(int(part), (murmur2(key.encode()) & 0x7fffffff) % 3, "the partition of %r" % key)
    print("  %d orders through %s, each in murmur2(key) %% 3" % (len(placed), topic))


def case_join_inputs_with_other_partition_counts_are_refused(t):
    """A stream-table join reads both topics in one task per partition: a
    table of 2 partitions for orders of 3 is refused at start, naming both."""
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "orders", "--partitions", "3")
    samsa("topic", "create", "-b", bs, "customers", "--partitions", "2")
    check_refused(Enrich(t, bs, 1),
                  "co-partitioned topics (read by one sub-topology: a join, or one source of "
                  "several topics) must have the same partition count: customers has 2, "
                  "orders has 3")


class PageViews(App):
    """The windowed page-view example: 1 s windows, grace 2 s."""

    def __init__(self, t, bs, n, extra=()):  # pylint: disable=super-init-not-called
        self.log = t.path("pageviews-%d.log" % n)
        self.err = open(self.log, "w")
        self.proc = subprocess.Popen([PAGEVIEWS, bs, "views", "page-counts", "pv", "1000", "2000"]
                                     + list(extra) + ["session.timeout.ms=6000"],
                                     stdout=subprocess.DEVNULL, stderr=self.err)


def case_windowed_page_views_final_counts_equal_the_oracle(t):
    """Views (key: user, value: page) into 3 partitions, grouped by page
    through a repartition topic, counted in 1 s windows, suppressed until
    each window closes: once views 3.5 s later moved every task's stream
    time past end + grace, each window of the first views comes out exactly
    once with its count, equal to the counts of the views' stored
    timestamps; the later views' windows, still open, do not."""
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "views", "--partitions", "3")
    samsa("topic", "create", "-b", bs, "page-counts", "--partitions", "3")
    rnd = random.Random(12)
    pages = ["/home", "/cart", "/search", "/help", "/about", "/blog"]
    app = PageViews(t, bs, 1)
    try:
        for _ in range(6):  # views over about 1.5 s: two or three windows per page
            produce(bs, "views", ["u%d:%s" % (rnd.randrange(40), rnd.choice(pages))
                                  for _ in range(100)], key=True)
            time.sleep(0.25)
        p = subprocess.run(["kcat", "-C", "-b", bs, "-t", "views", "-o", "beginning", "-e", "-q",
                            "-f", "%T\t%s\n"], capture_output=True, text=True, timeout=TIMEOUT)
        check(p.returncode == 0, "kcat: %s", p.stderr)
        views = [(int(ts), page) for ts, page in
                 (line.split("\t") for line in p.stdout.splitlines())]
        eq(len(views), 600, "views stored")
        want = {}
        for ts, page in views:
            key = "%s@%d" % (page, ts - ts % 1000)
            want[key] = want.get(key, 0) + 1
        # later views, for every page: each task's stream time passes the
        # first views' windows' end + grace
        time.sleep(max(0.0, (max(ts for ts, _ in views) + 3500) / 1000.0 - time.time()))
        produce(bs, "views", ["late-user:%s" % page for page in pages], key=True)
        got = wait_for("the final counts",
                       lambda: (lambda r: r if len(r) >= len(want) else None)(
                           read_text(bs, "page-counts")), app)
        time.sleep(1)  # nothing more comes: no window twice, none of the open ones
        got = read_text(bs, "page-counts")
        log = app.stop()
    finally:
        app.kill()
    eq(len(got), len(set(k for k, _ in got)), "final results per window (one each)")
    eq({k: int(v) for k, v in got}, want, "the final counts")
    check("dropped 0" in log, "late views dropped: %s", log[-2000:])
    print("  600 views, %d windows of %d pages, one final count each" % (len(want), len(pages)))


def case_late_views_go_to_the_dead_letter_topic(t):
    """The page-view example with late.topic=pv-late: views a minute older
    than what each task has seen are too late for their window (grace 2 s);
    each goes to pv-late once, as it reached the aggregation (keyed by page
    after group_by, its value and timestamp), with the header samsa.late
    naming the store, and the count of them equals the app's dropped count."""
    try:
        import confluent_kafka
    except ImportError as e:
        raise Skip("needs confluent-kafka (%s)" % e)
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "views", "--partitions", "3")
    samsa("topic", "create", "-b", bs, "page-counts", "--partitions", "3")
    pages = ["/home", "/cart", "/search", "/help", "/about", "/blog"]
    app = PageViews(t, bs, 1, extra=["late.topic=pv-late"])
    try:
        # every page seen now: each task's stream time is now
        produce(bs, "views", ["u%d:%s" % (i, p) for i in range(5) for p in pages], key=True)
        wait_for("the views counted", lambda: processed_views(bs) >= 30, app)
        old = int(time.time() * 1000) - 60000
        late = [("late%d" % i, pages[i % len(pages)], old + i) for i in range(40)]
        pr = confluent_kafka.Producer({"bootstrap.servers": bs})
        for user, page, ts in late:
            pr.produce("views", key=user, value=page, timestamp=ts)
        eq(pr.flush(TIMEOUT), 0, "late views not delivered")
        got = wait_for("the late views in pv-late",
                       lambda: (lambda r: r if len(r) >= len(late) else None)(
                           read_late(bs, "pv-late")), app)
        time.sleep(1)  # nothing more comes
        got = read_late(bs, "pv-late")
        log = app.stop()
    finally:
        app.kill()
    # as they reached the aggregation: keyed by page (group_by), the view's value and timestamp
    eq(sorted(got), sorted((p, p, ts, "views") for _, p, ts in late),
       "the dead-letter records (key, value, timestamp, samsa.late)")
    check("dropped %d" % len(late) in log, "the dropped count: %s", log[-2000:])
    print("  %d late views in pv-late, %d dropped" % (len(got), len(late)))


def processed_views(bs):
    """How many views went through the repartition topic."""
    return len(read_text(bs, "pv-by-page-repartition"))


def read_late(bs, topic):
    """(key, value, timestamp, samsa.late header) of every record of topic."""
    out = []
    for line in kcat_lines(bs, topic, "%k\t%s\t%T\t%h"):
        k, v, ts, h = line.split("\t", 3)
        out.append((k, v, int(ts), h.split("=", 1)[1] if h.startswith("samsa.late=") else h))
    return out


def case_a_repartition_topic_takes_the_count_of_what_feeds_it(t):
    """A topology of two parts: topic a (2 partitions) rekeyed through
    sizes-rekey-repartition and counted, topic b (5 partitions) copied. The
    repartition topic gets a's 2 partitions, the count of the topic feeding
    it, not the largest of the topology (b's 5); the counts are right."""
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "a", "--partitions", "2")
    samsa("topic", "create", "-b", bs, "b", "--partitions", "5")
    samsa("topic", "create", "-b", bs, "counts-out", "--partitions", "2")
    samsa("topic", "create", "-b", bs, "b-copy", "--partitions", "5")
    produce(bs, "a", ["x", "y", "x", "z", "x"])
    log = t.path("sizes.log")
    with open(log, "w") as err:
        proc = subprocess.Popen([REPARTITION_SIZES, bs, "a", "b", "sizes"],
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + TIMEOUT
            last = {}
            while time.monotonic() < deadline and last != {"x": 3, "y": 1, "z": 1}:
                check(proc.poll() is None, "repartition_sizes exited: %s", open(log).read())
                last = {k: v[-1] for k, v in read_output(bs, "counts-out").items()}
                time.sleep(0.2)
            eq(last, {"x": 3, "y": 1, "z": 1}, "the counts")
            proc.send_signal(signal.SIGTERM)
            eq(proc.wait(timeout=TIMEOUT), 0, "the exit status (log: %s)" % open(log).read())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=TIMEOUT)
    eq(topic_config(bs, "sizes-rekey-repartition")[0]["partitions"], 2,
       "the repartition topic's partitions")
    eq(topic_config(bs, "sizes-counts-changelog")[0]["partitions"], 2,
       "the changelog's partitions")


def case_a_store_queried_from_another_thread_while_it_runs(t):
    """tests/streams/query_while_running.c: a word count runs on a thread of
    its own while the main thread asks its store (samsa_st_app_query) for
    every word until each count equals the oracle; every answer is a count
    that never goes down and never exceeds the oracle. Lines come in parts
    while it queries; in memory, then with LMDB stores."""
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "words", "--partitions", "3")
    samsa("topic", "create", "-b", bs, "word-counts", "--partitions", "3")
    rnd = random.Random(7)
    lines = [" ".join(rnd.choice(VOCABULARY[:20]).lower() for _ in range(rnd.randint(1, 8)))
             for _ in range(2000)]
    for n, extra in enumerate(([], ["state.dir=" + t.path("state")])):
        part = lines[:1000] if n == 0 else lines[1000:]
        done = lines[:1000] if n == 1 else []
        want = oracle(done + part)
        failed = []

        def produce_parts(part=part, failed=failed):
            try:
                for i in range(0, len(part), 100):
                    produce(bs, "words", part[i:i + 100])
                    time.sleep(0.1)
            except Exception as e:  # noqa: BLE001 (reported by the main thread)
                failed.append(e)

        producer = threading.Thread(target=produce_parts)
        producer.start()
        try:
            p = subprocess.run([QUERY, bs, "words", "word-counts", "iq"] + extra,
                               input="".join("%s %d\n" % kv for kv in want.items()),
                               capture_output=True, text=True, timeout=TIMEOUT * 2)
        finally:
            producer.join(timeout=TIMEOUT)
        check(not failed, "producing: %s", failed)
        check(p.returncode == 0, "query_while_running: exit %d: %s%s", p.returncode,
              p.stdout, p.stderr[-3000:])
        print("  %s: %s" % ("LMDB" if extra else "in memory", p.stdout.strip()))


if __name__ == "__main__":
    QUERY = os.path.abspath(sys.argv.pop(7))
    REPARTITION_SIZES = os.path.abspath(sys.argv.pop(6))
    PAGEVIEWS = os.path.abspath(sys.argv.pop(5))
    ENRICH = os.path.abspath(sys.argv.pop(4))
    WORDCOUNT = os.path.abspath(sys.argv.pop(3))
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_word_count_then_restart_restores_from_the_changelog,
                   case_word_count_on_lmdb_then_restart,
                   case_kill_9_then_restart_loses_no_count,
                   case_source_topics_with_other_partition_counts_are_refused,
                   case_enrichment_join_equals_the_oracle,
                   case_rekeyed_orders_go_through_a_repartition_topic,
                   case_join_inputs_with_other_partition_counts_are_refused,
                   case_windowed_page_views_final_counts_equal_the_oracle,
                   case_late_views_go_to_the_dead_letter_topic,
                   case_a_repartition_topic_takes_the_count_of_what_feeds_it,
                   case_a_store_queried_from_another_thread_while_it_runs]))
