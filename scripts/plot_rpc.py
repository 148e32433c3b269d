#!/usr/bin/env python3
"""Bar chart of docs/bench/rpc.tsv (medians written by bench-rpc.sh).

usage: plot_rpc.py rpc.tsv rpc.png

Top: records per second (tkrzw_dbm_remote_perf's qps); bottom: server CPU
microseconds per record. Installs matplotlib with pip if it is missing.
"""
import csv
import sys

from plotlib import load_matplotlib

COLORS = {"memstored": "#d9534f", "tkrzw_server": "#5b7fb5"}


def panel(ax, rows, key, label, ratio, scale=1.0):
    """One bar pair per row: memstored's figure beside tkrzw_server's, the ratio above them."""
    xs = range(len(rows))
    width = 0.38
    pairs = [(float(r[f"memstored_{key}"]) / scale, float(r[f"tkrzw_{key}"]) / scale) for r in rows]
    ax.bar([x - width / 2 for x in xs], [p[0] for p in pairs], width, label="memstored", color=COLORS["memstored"])
    ax.bar([x + width / 2 for x in xs], [p[1] for p in pairs], width, label="tkrzw_server 0.9.10", color=COLORS["tkrzw_server"])
    for x, r, pair in zip(xs, rows, pairs):
        ax.annotate(f"{float(r[ratio]):.2f}x", (x, max(pair)), ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(label)
    ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="best")
    ax.margins(y=0.2)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    plt = load_matplotlib()
    if plt is None:
        return
    fig, axes = plt.subplots(2, 1, figsize=(11, 8), sharex=True)
    panel(axes[0], rows, "qps", "k records/s (higher is better)", "qps_ratio", scale=1e3)
    panel(axes[1], rows, "cpu_us", "server CPU µs per record (lower is better)", "cpu_ratio")
    axes[0].set_title("Tkrzw-RPC: memstored vs tkrzw_server (tkrzw_dbm_remote_perf, median; ratio = memstored / tkrzw_server)")
    axes[1].set_xticks(range(len(rows)))
    axes[1].set_xticklabels([f"{r['phase']}\nmulti {r['multi']}, {r['threads']}t" for r in rows], fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
