#!/usr/bin/env python3
"""Turns ci/bench's client runs into the libsamsa/librdkafka table.

    client_report.py --results CLIENTS.jsonl [--out DIR]

CLIENTS.jsonl holds one line per run: the client ("libsamsa" or "librdkafka"), the
scenario, the round, the broker's CPU seconds during the run and the load generator's
own JSON fields (samsa-loadgen-libsamsa and samsa-loadgen print the same ones). Each
figure is the median over rounds (min-max beside); libsamsa/librdkafka ratios are taken
per round (the two runs of a round ran back to back against the same broker) and
summarised the same way, then set against issue 17's targets. With --out it writes
clients.md and clients.jsonl (the raw lines) there; it always prints the table.
Standard library only.
"""

import argparse
import json
import os
import shutil
import statistics
import sys

CLIENTS = ("libsamsa", "librdkafka")

# figure: (label, function of one run, target ratio, "min" = at least / "max" = at most)
FIGURES = {
    "throughput": ("msgs/s", lambda r: r.get("msgs_per_s"), 1.2, "min"),
    "mb": ("MB/s", lambda r: r.get("mb_per_s"), None, None),
    "cpu": ("client CPU s per M msgs",
            lambda r: r["client_cpu_s"] / r["msgs"] * 1e6 if r.get("msgs") else None, 0.7, "max"),
    "rss": ("VmRSS MB, all queued",
            lambda r: r["queued_rss_kb"] / 1024 if r.get("queued_rss_kb", -1) > 0 else None,
            1.0, "max"),
    "hwm": ("VmHWM MB, all queued",
            lambda r: r["queued_hwm_kb"] / 1024 if r.get("queued_hwm_kb", -1) > 0 else None,
            None, None),
    "server_cpu": ("broker CPU s per M msgs",
                   lambda r: r["server_cpu_s"] / r["msgs"] * 1e6 if r.get("msgs") else None,
                   None, None),
}


def figures_of(scenario):
    if scenario.startswith("queued"):
        return ("rss", "hwm", "throughput", "cpu")
    return ("throughput", "mb", "cpu", "server_cpu")


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def summary(values, digits):
    if not values:
        return "-"
    m = statistics.median(values)
    if len(values) == 1:
        return f"{m:,.{digits}f}"
    return f"{m:,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def table(rows):
    order = []
    runs = {}
    for r in rows:
        sc = r["scenario"]
        if sc not in runs:
            order.append(sc)
            runs[sc] = {c: {} for c in CLIENTS}
        runs[sc].setdefault(r["client"], {})[r["round"]] = r
    lines = [
        "| scenario | figure | librdkafka | libsamsa | libsamsa/librdkafka | target |",
        "|---|---|---:|---:|---:|---|",
    ]
    missed = []
    for sc in order:
        ok = {c: {k: v for k, v in runs[sc][c].items() if v.get("complete")} for c in CLIENTS}
        failed = {c: len(runs[sc][c]) - len(ok[c]) for c in CLIENTS}
        for key in figures_of(sc):
            label, fn, target, sense = FIGURES[key]
            digits = 0 if key == "throughput" else 2 if key in ("cpu", "server_cpu") else 1
            vals = {c: [v for v in (fn(r) for r in ok[c].values()) if v is not None]
                    for c in CLIENTS}
            ratios = []
            for rnd, a in ok["libsamsa"].items():
                b = ok["librdkafka"].get(rnd)
                if b is None:
                    continue
                x, y = fn(a), fn(b)
                if x is not None and y:
                    ratios.append(x / y)
            verdict = ""
            if target is not None:
                if ratios:
                    m = statistics.median(ratios)
                    met = m >= target if sense == "min" else m <= target
                    verdict = f"{'>=' if sense == 'min' else '<='} {target}: " + (
                        "met" if met else "missed")
                    if not met:
                        missed.append(f"{sc} {label}")
                else:
                    verdict = f"{'>=' if sense == 'min' else '<='} {target}: no pair"
            lines.append(f"| {sc} | {label} | {summary(vals['librdkafka'], digits)} | "
                         f"{summary(vals['libsamsa'], digits)} | {summary(ratios, 2)} | "
                         f"{verdict} |")
        for c in CLIENTS:
            if failed[c]:
                lines.append(f"| {sc} | failed runs | {c}: {failed[c]} | | | |")
    return lines, missed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = load(args.results)
    lines, missed = table(rows)
    rounds = max((r["round"] for r in rows), default=0)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    print(f"targets missed: {', '.join(missed)}" if missed else "every target met")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "clients.md"), "w", encoding="utf-8") as f:
            f.write(f"Median of {rounds} round(s) (min-max); ratios per round.\n\n")
            f.write(text)
        shutil.copyfile(args.results, os.path.join(args.out, "clients.jsonl"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
