#!/usr/bin/env python3
"""Turns ci/bench's raw results into its table, a markdown page and a PNG chart.

    report.py --results RESULTS.jsonl --machine MACHINE.json [--out DIR]

RESULTS.jsonl holds one line per run: the target ("samsa" or "mock"), the scenario,
the round, the server's CPU seconds and peak RSS during the run, and samsa-loadgen's
own JSON fields. Each scenario is summarised per target by the median over rounds
(min-max beside), and Samsa/mock ratios are taken per round (the two runs of a round
ran back to back) and summarised the same way. With --out it writes latest.md,
latest.png and latest.jsonl (the raw lines) there; it always prints the table.
Standard library only; the chart needs gnuplot.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

TARGETS = ("samsa", "mock")



def load(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def med(values):
    return statistics.median(values) if values else None


def spread(values):
    return (min(values), max(values)) if values else (None, None)


def per_million(row):
    msgs = row.get("msgs", 0)
    if not msgs or "server_cpu_s" not in row:
        return None
    return row["server_cpu_s"] / msgs * 1e6


def latency_prefix(scenario):
    return "e2e" if scenario.startswith("e2e") else "dr"


def summarise(rows):
    """{scenario: {target: {...}, "ratio": {...}}} in first-seen scenario order."""
    order = []
    runs = {}
    for r in rows:
        sc = r["scenario"]
        if sc not in runs:
            order.append(sc)
            runs[sc] = {t: {} for t in TARGETS}
        runs[sc].setdefault(r["target"], {})[r["round"]] = r
    out = {}
    for sc in order:
        entry = {}
        lat = latency_prefix(sc)
        for t in TARGETS:
            done = [r for r in runs[sc][t].values() if r.get("complete")]
            failed = len(runs[sc][t]) - len(done)
            rate = [r["msgs_per_s"] for r in done if "msgs_per_s" in r]
            entry[t] = {
                "runs": len(runs[sc][t]),
                "failed": failed,
                "msgs_per_s": med(rate),
                "msgs_per_s_range": spread(rate),
                "mb_per_s": med([r["mb_per_s"] for r in done if "mb_per_s" in r]),
                "p50_us": med([r[lat + "_p50_us"] for r in done if lat + "_p50_us" in r]),
                "p99_us": med([r[lat + "_p99_us"] for r in done if lat + "_p99_us" in r]),
                "p999_us": med([r[lat + "_p999_us"] for r in done if lat + "_p999_us" in r]),
                "dr_p50_us": med([r["dr_p50_us"] for r in done if "dr_p50_us" in r]),
                "dr_p99_us": med([r["dr_p99_us"] for r in done if "dr_p99_us" in r]),
                "cpu_per_m": med([v for v in (per_million(r) for r in done) if v is not None]),
                "client_cpu_per_m": med(
                    [r["client_cpu_s"] / r["msgs"] * 1e6 for r in done if r.get("msgs")]
                ),
                "hwm_mb": max([r["server_hwm_kb"] / 1024 for r in done if "server_hwm_kb" in r],
                              default=None),
                "empty_rss_mb": med([r["empty_rss_kb"] / 1024 for r in done
                                     if "empty_rss_kb" in r]),
                "idle_rss_mb": med([r["idle_rss_kb"] / 1024 for r in done if "idle_rss_kb" in r]),
            }
        ratio = {}
        pairs = [(runs[sc]["samsa"].get(k), runs[sc]["mock"].get(k)) for k in runs[sc]["samsa"]]
        pairs = [(s, m) for s, m in pairs if s and m and s.get("complete") and m.get("complete")]

        def paired(fn):
            vals = []
            for s, m in pairs:
                a, b = fn(s), fn(m)
                if a is not None and b:
                    vals.append(a / b)
            return vals

        for key, fn in (
            ("msgs_per_s", lambda r: r.get("msgs_per_s")),
            ("cpu_per_m", per_million),
            ("p99_us", lambda r: r.get(lat + "_p99_us")),
            ("idle_rss_mb", lambda r: r.get("idle_rss_kb")),
        ):
            vals = paired(fn)
            ratio[key] = (med(vals),) + spread(vals) if vals else None
        entry["ratio"] = ratio
        out[sc] = entry
    return out


def fmt_num(v, digits=0):
    if v is None:
        return "-"
    if digits == 0:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def fmt_ms(us):
    if us is None:
        return "-"
    return f"{us / 1000:.2f}" if us < 100000 else f"{us / 1000:.0f}"


def fmt_ratio(r):
    if r is None:
        return "-"
    m, lo, hi = r
    digits = 2 if m >= 0.1 else 3 if m >= 0.001 else 5
    return f"{m:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def fmt_range(rng):
    lo, hi = rng
    if lo is None:
        return ""
    return f"{lo / 1e3:,.0f}k-{hi / 1e3:,.0f}k"


HEADER = ["scenario", "server", "msg/s (min-max)", "MB/s", "p50 ms", "p99 ms", "p99.9 ms",
          "server CPU s / M msgs", "client CPU s / M msgs", "server peak RSS MiB"]


def table_rows(summary):
    rows = []
    for sc, e in summary.items():
        if sc.startswith("idle"):
            continue
        for t in TARGETS:
            s = e[t]
            rate = "failed" if s["msgs_per_s"] is None else (
                f"{fmt_num(s['msgs_per_s'])} ({fmt_range(s['msgs_per_s_range'])})")
            if s["failed"] and s["msgs_per_s"] is not None:
                rate += f" [{s['failed']} failed]"
            rows.append([sc, "Samsa" if t == "samsa" else "mock", rate, fmt_num(s["mb_per_s"], 1),
                         fmt_ms(s["p50_us"]), fmt_ms(s["p99_us"]), fmt_ms(s["p999_us"]),
                         fmt_num(s["cpu_per_m"], 2), fmt_num(s["client_cpu_per_m"], 2),
                         fmt_num(s["hwm_mb"], 0)])
        r = e["ratio"]
        rows.append([sc, "Samsa/mock", fmt_ratio(r["msgs_per_s"]), "", "",
                     fmt_ratio(r["p99_us"]), "", fmt_ratio(r["cpu_per_m"]), "", ""])
    return rows


def print_table(header, rows, out=sys.stdout):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line, file=out)
    print("  ".join("-" * w for w in widths), file=out)
    last = None
    for row in rows:
        cells = list(row)
        if cells[0] == last:
            cells[0] = ""
        else:
            last = cells[0]
        print("  ".join(str(c).ljust(w) for c, w in zip(cells, widths)), file=out)


def md_table(header, rows, code_first=False):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    last = None
    for row in rows:
        cells = list(row)
        if cells[0] == last:
            cells[0] = ""
        else:
            last = cells[0]
            if code_first:
                cells[0] = f"`{cells[0]}`"
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def targets_check(summary, machine):
    """The issue's targets: (what, measured, goal, met or None when not measurable)."""
    checks = []

    def ratio(sc, key):
        e = summary.get(sc)
        return e["ratio"][key] if e and e["ratio"].get(key) else None

    r = ratio("produce-100B-1p-acks1", "msgs_per_s")
    checks.append(("produce 100 B x 1 M, acks=1, 1 partition: Samsa/mock msg/s",
                   fmt_ratio(r), ">= 1.2", None if r is None else r[0] >= 1.2))
    for sc, what in (("consume-100B-32p", "consumer defaults"),
                     ("consume-100B-32p-tuned", "consumer tuned")):
        r = ratio(sc, "msgs_per_s")
        e = summary.get(sc)
        if e is None:
            continue
        measured = fmt_ratio(r)
        if r is None and e["samsa"]["failed"]:
            measured = f"Samsa failed {e['samsa']['failed']} of {e['samsa']['runs']} runs"
        checks.append((f"consume 1 M from 32 partitions ({what}): Samsa/mock msg/s", measured,
                       ">= 2", None if r is None else r[0] >= 2.0))
    r = ratio("produce-100B-1p-acks1", "cpu_per_m")
    checks.append(("server CPU per million produced (100 B, 1 partition): Samsa/mock",
                   fmt_ratio(r), "<= 1", None if r is None else r[0] <= 1.0))
    e = summary.get("produce-1KB-1p-acks1")
    loop = machine.get("loopback_bytes_per_s") or 0
    if e and e["samsa"]["mb_per_s"] is not None and loop > 0:
        share = e["samsa"]["mb_per_s"] * 1e6 / loop
        mock_share = (e["mock"]["mb_per_s"] or 0) * 1e6 / loop
        checks.append(("produce 1 KB, 1 partition: Samsa MB/s as a share of loopback TCP",
                       f"{share:.0%} (mock {mock_share:.0%})", ">= 70%", share >= 0.7))
    else:
        checks.append(("produce 1 KB, 1 partition: share of loopback TCP", "-", ">= 70%", None))
    return checks


def idle_lines(summary):
    e = summary.get("idle-1000p")
    if not e:
        return []
    out = []
    for t in TARGETS:
        s = e[t]
        out.append((("Samsa" if t == "samsa" else "mock"), fmt_num(s["empty_rss_mb"], 1),
                    fmt_num(s["idle_rss_mb"], 1)))
    return out


def write_chart(summary, path):
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        print("report.py: gnuplot not found, no chart", file=sys.stderr)
        return False
    names = [sc for sc, e in summary.items() if not sc.startswith("idle")]
    labels = {sc: sc + (" (Samsa failed)" if summary[sc]["samsa"]["msgs_per_s"] is None else "")
              for sc in names}
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "ratios.dat")
        with open(dat, "w", encoding="utf-8") as f:
            for sc in names:
                r = summary[sc]["ratio"]
                t = r.get("msgs_per_s") or (0, 0, 0)
                c = r.get("cpu_per_m") or (0, 0, 0)
                f.write(f'"{labels[sc]}" {t[0]:.4f} {t[1]:.4f} {t[2]:.4f} '
                        f'{c[0]:.4f} {c[1]:.4f} {c[2]:.4f}\n')
        script = f"""
set terminal pngcairo size 1200,900 font "sans,10"
set output "{path}"
set multiplot layout 2,1
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.7 border -1
set boxwidth 0.8
set grid ytics
set xtics rotate by -35 left nomirror
set key off
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set title "Samsa/mock throughput (msg/s), median and min-max over rounds: above 1 is faster"
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 front
plot "{dat}" using 2:3:4:xtic(1) lc rgb "#3b6ea5"
set title "Samsa/mock server CPU per message: below 1 is cheaper"
plot "{dat}" using 5:6:7:xtic(1) lc rgb "#c0504d"
unset multiplot
"""
        gp = os.path.join(tmp, "chart.gp")
        with open(gp, "w", encoding="utf-8") as f:
            f.write(script)
        res = subprocess.run([gnuplot, gp], capture_output=True, text=True, check=False)
        if res.returncode != 0:
            print("report.py: gnuplot failed:\n" + res.stderr, file=sys.stderr)
            return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("--out")
    ap.add_argument("--readme", help="replace the text between README_BEGIN and README_END "
                    "markers in this file with the markdown written to --out")
    a = ap.parse_args()
    rows = load(a.results)
    with open(a.machine, encoding="utf-8") as f:
        machine = json.load(f)
    summary = summarise(rows)
    trows = table_rows(summary)
    loop = machine.get("loopback_bytes_per_s", 0) / 1e6
    disk = machine.get("disk_write_bytes_per_s", 0) / 1e6
    pagecache = machine.get("pagecache_write_bytes_per_s", 0) / 1e6
    limits = (f"machine: {machine.get('cores')} cores, loopback TCP {loop:,.0f} MB/s (iperf3, one "
              f"stream), disk sequential write {disk:,.0f} MB/s (fio, 1 MiB blocks, fsync at end), "
              f"buffered write into a new file {pagecache:,.0f} MB/s (dd, no fsync)")

    print(limits)
    print()
    print_table(HEADER, trows)
    idle = idle_lines(summary)
    if idle:
        print()
        print_table(["idle", "RSS MiB, no topics", "RSS MiB, 1,000 partitions"],
                    [list(x) for x in idle])
    print()
    checks = targets_check(summary, machine)
    print_table(["target", "measured", "goal", "met"],
                [[c[0], c[1], c[2], "-" if c[3] is None else ("yes" if c[3] else "NO")]
                 for c in checks])

    if not a.out:
        return 0
    os.makedirs(a.out, exist_ok=True)
    shutil.copyfile(a.results, os.path.join(a.out, "latest.jsonl"))
    chart_ok = write_chart(summary, os.path.join(a.out, "latest.png"))
    md = []
    md.append(f"Rounds: {machine.get('rounds')}, Samsa and the mock alternating which runs "
              "first. Values are medians over the rounds; ratios are taken per round and "
              "shown as median (min-max).")
    md.append("")
    md.append(f"Machine limits, measured in the same run: loopback TCP **{loop:,.0f} MB/s** "
              f"(iperf3, one stream), sequential disk write **{disk:,.0f} MB/s** (fio, 1 MiB "
              f"blocks, fsync at the end), buffered `write(2)` into a new file "
              f"**{pagecache:,.0f} MB/s** (dd, 1 GiB, no fsync), {machine.get('cores')} cores "
              "shared by server, client and everything else on the machine.")
    md.append("")
    md.append(md_table(HEADER, trows, code_first=True))
    md.append("")
    if idle:
        md.append(md_table(["idle server", "RSS MiB, no topics", "RSS MiB, one topic of "
                            "1,000 partitions"], [list(x) for x in idle]))
        md.append("")
    md.append(md_table(["target (issue 7)", "measured", "goal", "met"],
                       [[c[0], c[1], c[2], "-" if c[3] is None else ("yes" if c[3] else "**no**")]
                        for c in checks]))
    md.append("")
    if chart_ok:
        md.append("Chart: [latest.png](latest.png)")
    with open(os.path.join(a.out, "latest.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    print(f"\nwrote {a.out}/latest.md, latest.png, latest.jsonl")
    if a.readme:
        return embed(a.readme, md, os.path.relpath(a.out, os.path.dirname(os.path.abspath(a.readme))))
    return 0


README_BEGIN = "<!-- ci/bench results: begin -->"
README_END = "<!-- ci/bench results: end -->"


def embed(readme, md, rel):
    """Puts the results between the markers of docs/benchmarks.md."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    start = text.find(README_BEGIN)
    end = text.find(README_END)
    if start < 0 or end < start:
        print(f"report.py: no results markers in {readme}; left as it is", file=sys.stderr)
        return 0
    body = "\n".join(md).replace("[latest.png](latest.png)",
                                 f"[{rel}/latest.png]({rel}/latest.png)")
    text = text[:start] + README_BEGIN + "\n" + body + "\n" + text[end:]
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"updated the results in {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
