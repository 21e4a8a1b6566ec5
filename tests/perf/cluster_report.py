#!/usr/bin/env python3
"""Turns ci/bench's cluster runs into the RF=3 against RF=1 tables.

    cluster_report.py --results CLUSTER.jsonl --machine MACHINE.json [--out DIR]
                      [--readme README.md]

CLUSTER.jsonl holds one line per run: the side ("rf3": three brokers, a topic of
replication factor 3 with min.insync.replicas=2; "rf1": one broker, replication factor
1), the scenario, the round, how many brokers the side has, their CPU seconds summed
over the run, ZooKeeper's, and samsa-loadgen's own JSON fields. MACHINE.json has the
rounds, the partition count and the load averages before and after. Each figure is the
median over rounds (min-max beside); RF=3/RF=1 ratios are taken per round (the runs of
a round ran back to back) and summarised the same way, then set against issue 14's
targets. With --out it writes cluster.md and cluster.jsonl (the raw lines) there; with
--readme it also puts the tables between the cluster markers of that file. It always
prints the tables. Standard library only.
"""

import argparse
import json
import os
import shutil
import statistics
import sys

README_BEGIN = "<!-- ci/bench cluster results: begin -->"
README_END = "<!-- ci/bench cluster results: end -->"

# (side, acks) in the order the rows are shown, with their labels
SETUPS = (
    ("rf1", "1", "RF=1 acks=1 (1 broker)"),
    ("rf1", "all", "RF=1 acks=all"),
    ("rf3", "1", "RF=3 acks=1 (3 brokers)"),
    ("rf3", "all", "RF=3 acks=all, min.insync.replicas=2"),
)
# issue 14: RF=3 acks=all at least this share of RF=1's throughput; e2e p99 at most this
THROUGHPUT_TARGET = 0.6
E2E_P99_TARGET_MS = 3.0


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def summary(values, digits, unit=""):
    if not values:
        return "-"
    m = statistics.median(values)
    if len(values) == 1:
        return f"{m:,.{digits}f}{unit}"
    return f"{m:,.{digits}f}{unit} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def median(values, digits):
    return f"{statistics.median(values):,.{digits}f}" if values else "-"


def per_million(r, key):
    return r[key] / r["msgs"] * 1e6 if r.get("msgs") else None


def base_name(scenario):
    """produce-100B-6p-acksall -> produce-100B-6p"""
    for suffix in ("-acksall", "-acks1"):
        if scenario.endswith(suffix):
            return scenario[: -len(suffix)]
    return scenario


def describe(name, machine):
    parts = name.split("-")
    if name.startswith("e2e"):
        return "end to end, 10,000 msg/s"
    count = {"100B": "1 M x 100 B", "1KB": "300 k x 1 KB"}.get(parts[1], parts[1])
    if machine.get("scale_div", 1) != 1:
        count += f" / {machine['scale_div']}"
    return f"produce {count}, {machine.get('partitions', '?')} partitions"


class Runs:
    """Complete runs by (scenario base, side, acks), then by round."""

    def __init__(self, rows):
        self.order = []
        self.runs = {}
        self.failed = {}
        for r in rows:
            name = base_name(r["scenario"])
            if name not in self.order:
                self.order.append(name)
            key = (name, r["side"], str(r.get("acks", "")).replace("-1", "all"))
            if r.get("complete"):
                self.runs.setdefault(key, {})[r["round"]] = r
            else:
                self.failed[key] = self.failed.get(key, 0) + 1

    def get(self, name, side, acks):
        return self.runs.get((name, side, acks), {})

    def values(self, name, side, acks, fn):
        return [v for v in (fn(r) for r in self.get(name, side, acks).values()) if v is not None]

    def ratios(self, name, a, b, fn):
        """fn(run of a) / fn(run of b) for every round both completed."""
        ra, rb = self.get(name, *a), self.get(name, *b)
        out = []
        for rnd, x in ra.items():
            y = rb.get(rnd)
            if y is None:
                continue
            vx, vy = fn(x), fn(y)
            if vx is not None and vy:
                out.append(vx / vy)
        return out


def ms(key):
    return lambda r: r[key] / 1000 if key in r else None


def tables(rows, machine):
    runs = Runs(rows)
    md = []
    rate = lambda r: r.get("msgs_per_s")  # noqa: E731
    cpu = lambda r: per_million(r, "server_cpu_s")  # noqa: E731
    ccpu = lambda r: per_million(r, "client_cpu_s")  # noqa: E731
    md += [
        "| scenario | setup | msg/s (min-max) | MB/s | delivery p50 ms | p99 ms "
        "| brokers' CPU s / M msgs | client CPU s / M msgs |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    targets = []
    for name in runs.order:
        if name.startswith("e2e"):
            continue
        first = True
        for side, acks, label in SETUPS:
            if not runs.get(name, side, acks) and not runs.failed.get((name, side, acks)):
                continue
            md.append(
                f"| {describe(name, machine) if first else ''} | {label} "
                f"| {summary(runs.values(name, side, acks, rate), 0)} "
                f"| {median(runs.values(name, side, acks, lambda r: r.get('mb_per_s')), 1)} "
                f"| {summary(runs.values(name, side, acks, ms('dr_p50_us')), 1)} "
                f"| {summary(runs.values(name, side, acks, ms('dr_p99_us')), 1)} "
                f"| {summary(runs.values(name, side, acks, cpu), 2)} "
                f"| {summary(runs.values(name, side, acks, ccpu), 2)} |")
            first = False
            if runs.failed.get((name, side, acks)):
                md.append(f"|  | {label}: failed runs | {runs.failed[(name, side, acks)]} "
                          "| | | | | |")
        for a, b, label in ((("rf3", "all"), ("rf1", "1"), "RF=3 acks=all / RF=1 acks=1"),
                            (("rf3", "all"), ("rf1", "all"), "RF=3 acks=all / RF=1 acks=all"),
                            (("rf3", "1"), ("rf1", "1"), "RF=3 acks=1 / RF=1 acks=1")):
            r = runs.ratios(name, a, b, rate)
            c = runs.ratios(name, a, b, cpu)
            md.append(f"|  | **{label}** | **{summary(r, 2)}** | | | | {summary(c, 2)} | |")
            if a == ("rf3", "all") and b == ("rf1", "1"):
                targets.append((f"{describe(name, machine)}: RF=3 acks=all / RF=1 acks=1 msg/s",
                                r, summary(r, 2), f">= {THROUGHPUT_TARGET}",
                                bool(r) and statistics.median(r) >= THROUGHPUT_TARGET))
    md.append("")
    md += [
        "| end to end, 30 k x 100 B at 10,000 msg/s, linger.ms=0, acks=all, 1 partition "
        "| msg/s | p50 ms | p99 ms | p99.9 ms | max ms | brokers' CPU s / M msgs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in runs.order:
        if not name.startswith("e2e"):
            continue
        for side, label in (("rf1", "RF=1 (1 broker)"),
                            ("rf3", "RF=3, min.insync.replicas=2 (3 brokers)")):
            md.append(
                f"| {label} | {summary(runs.values(name, side, 'all', rate), 0)} "
                f"| {summary(runs.values(name, side, 'all', ms('e2e_p50_us')), 2)} "
                f"| {summary(runs.values(name, side, 'all', ms('e2e_p99_us')), 2)} "
                f"| {summary(runs.values(name, side, 'all', ms('e2e_p999_us')), 2)} "
                f"| {summary(runs.values(name, side, 'all', ms('e2e_max_us')), 2)} "
                f"| {summary(runs.values(name, side, 'all', cpu), 1)} |")
            if runs.failed.get((name, side, "all")):
                md.append(f"| {label}: failed runs | {runs.failed[(name, side, 'all')]} "
                          "| | | | | |")
        p99 = runs.values(name, "rf3", "all", ms("e2e_p99_us"))
        targets.append(("end-to-end p99 at 10,000 msg/s, RF=3 acks=all", p99,
                        summary(p99, 2, " ms"), f"<= {E2E_P99_TARGET_MS:g} ms",
                        bool(p99) and statistics.median(p99) <= E2E_P99_TARGET_MS))
    md.append("")
    md += ["| target (issue 14) | measured | goal | met |", "|---|---|---|---|"]
    missed = []
    for label, vals, shown, goal, met in targets:
        md.append(f"| {label} | {shown} | {goal} | {'yes' if met else '**no**'} |")
        if not met:
            missed.append(label)
    return md, missed


def header(machine):
    rounds = machine.get("rounds", "?")
    return (
        f"Rounds: {rounds}, RF=3 and RF=1 alternating which runs first; medians over the "
        "rounds (min-max), ratios taken per round. Load average (1, 5, 15 min) before the "
        f"step: {machine.get('load_before', '?')}, after: {machine.get('load_after', '?')}; "
        f"{machine.get('cores', '?')} cores shared by ZooKeeper, four brokers, the load "
        f"generator and everything else on the machine; the step took "
        f"{machine.get('minutes', '?')} minutes.")


def embed(readme, md):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    start = text.find(README_BEGIN)
    end = text.find(README_END)
    if start < 0 or end < start:
        print(f"cluster_report.py: no cluster markers in {readme}; left as it is",
              file=sys.stderr)
        return
    text = text[:start] + README_BEGIN + "\n" + "\n".join(md) + "\n" + text[end:]
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"updated the cluster results in {readme}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("--out")
    ap.add_argument("--readme")
    args = ap.parse_args()
    rows = load(args.results)
    with open(args.machine, encoding="utf-8") as f:
        machine = json.load(f)
    body, missed = tables(rows, machine)
    md = [header(machine), ""] + body
    text = "\n".join(md) + "\n"
    print(text, end="")
    print(f"targets missed: {'; '.join(missed)}" if missed else "every target met")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "cluster.md"), "w", encoding="utf-8") as f:
            f.write(text)
        shutil.copyfile(args.results, os.path.join(args.out, "cluster.jsonl"))
        print(f"wrote {args.out}/cluster.md, cluster.jsonl")
        if args.readme:
            embed(args.readme, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
