#!/usr/bin/env python3
"""Renders docs/bench/replication.png and the numbers block of
docs/bench/replication.md from scripts/bench-replication.sh's raw TSV:
medians over the runs, the master's throughput with a replica against
without, and the lag percentiles under the paced load.

    python3 scripts/plot_replication.py docs/bench/replication-raw.tsv docs/bench
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

from plotlib import load_matplotlib


def load(path):
    rows = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            rows[r["mode"]].append(r)
    return rows


def med(rows, field):
    return statistics.median(float(r[field]) for r in rows)


def summary(rows):
    alone = med(rows["alone"], "writes_per_s")
    replica = med(rows["replica"], "writes_per_s")
    lag = rows["lag"]
    return {
        "alone": alone,
        "replica": replica,
        "ratio": replica / alone,
        "paced": med(lag, "writes_per_s"),
        "p50": med(lag, "lag_p50_ms"),
        "p99": med(lag, "lag_p99_ms"),
        "max": max(float(r["lag_max_ms"]) for r in lag),
        "p99_runs": [int(r["lag_p99_ms"]) for r in lag],
        "runs": len(lag),
    }


def chart(s, out_dir):
    plt = load_matplotlib()
    if plt is None:
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6))
    a.bar(["no replica", "one replica"], [s["alone"], s["replica"]], color=["#888", "#2a7"])
    a.set_ylabel("master writes/s (median)")
    a.set_title(f"master throughput: {s['ratio']:.2f}x with a replica (goal 0.8x)")
    a.title.set_fontsize(9)
    b.bar(["p50", "p99", "max"], [s["p50"], s["p99"], s["max"]], color="#27a")
    b.axhline(10, color="r", linestyle="--", linewidth=1)
    b.set_ylabel("replication lag, ms")
    b.set_title(f"lag at {s['paced']:.0f} writes/s (goal p99 < 10 ms)")
    b.title.set_fontsize(9)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "replication.png"), dpi=110)


def main():
    raw, out_dir = sys.argv[1], sys.argv[2]
    s = summary(load(raw))
    chart(s, out_dir)
    verdict = lambda ok: "met" if ok else "NOT met"
    print(f"| master writes/s without a replica (median of {s['runs']}) | {s['alone']:.0f} |")
    print(f"| master writes/s with one replica | {s['replica']:.0f} |")
    print(f"| ratio (goal at least 0.8x) | {s['ratio']:.2f}x: {verdict(s['ratio'] >= 0.8)} |")
    print(f"| paced load, writes/s | {s['paced']:.0f} |")
    print(f"| lag p50 / p99 / max, ms | {s['p50']:.0f} / {s['p99']:.0f} / {s['max']:.0f} |")
    print(f"| lag p99 per run, ms (goal under 10) | {s['p99_runs']}: {verdict(s['p99'] < 10)} |")


if __name__ == "__main__":
    main()
