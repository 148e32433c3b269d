#!/usr/bin/env python3
"""Bar chart of docs/bench/server.tsv (medians written by bench-server.sh).

usage: plot_server.py server.tsv server.png

Top: throughput the client saw; bottom: server CPU microseconds per request.
Installs matplotlib with pip if it is missing.
"""
import csv
import sys

from plotlib import load_matplotlib


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    plt = load_matplotlib()
    if plt is None:
        return
    names = [f"{r['pairing']}\n{r['workload'].replace(' binary', '')}" for r in rows]
    # A row where either server answered errors is not a comparison.
    invalid = [int(r.get("memstored_errors", 0)) + int(r.get("memcached_errors", 0)) > 0 for r in rows]
    fig, axes = plt.subplots(2, 1, figsize=(13, 9), sharex=True)
    width = 0.38
    xs = list(range(len(rows)))
    panels = (
        ("tps", 1e3, "throughput (k TPS, higher is better)", "tps_ratio"),
        ("cpu_us", 1.0, "server CPU µs per request (lower is better)", "cpu_ratio"),
    )
    for ax, (key, scale, label, ratio) in zip(axes, panels):
        ours = [float(r[f"memstored_{key}"]) / scale for r in rows]
        theirs = [float(r[f"memcached_{key}"]) / scale for r in rows]
        bars = ax.bar([x - width / 2 for x in xs], ours, width, label="memstored", color="#d9534f")
        ax.bar([x + width / 2 for x in xs], theirs, width, label="memcached 1.6", color="#5b7fb5")
        for bar, bad in zip(bars, invalid):
            if bad:
                bar.set_hatch("//")
                bar.set_alpha(0.4)
        for x, r, a, b, bad in zip(xs, rows, ours, theirs, invalid):
            ax.annotate(
                "invalid:\nerror replies" if bad else f"{float(r[ratio]):.2f}x",
                (x, max(a, b)),
                ha="center",
                va="bottom",
                fontsize=8,
            )
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
        # Explicit legend patches: the first memstored bar may be hatched.
        from matplotlib.patches import Patch

        ax.legend(
            handles=[
                Patch(color="#d9534f", label="memstored"),
                Patch(color="#5b7fb5", label="memcached 1.6"),
            ],
            loc="upper right",
        )
        ax.margins(y=0.15)
    axes[0].set_title("memstored vs memcached (median; ratio = memstored / memcached)")
    axes[1].set_xticks(xs)
    axes[1].set_xticklabels(names, fontsize=7)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main()
