#!/usr/bin/env python3
"""Bar chart of docs/bench/engine.tsv (medians written by bench-engine.sh).

usage: plot_engine.py engine.tsv engine.png

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
    names = [r["workload"] for r in rows]
    fig, axes = plt.subplots(2, 1, figsize=(12, 8), sharex=True)
    width = 0.38
    xs = range(len(rows))
    for ax, op in zip(axes, ("set", "get")):
        ours = [int(r[f"memstored_{op}"]) / 1e6 for r in rows]
        theirs = [int(r[f"tkrzw_{op}"]) / 1e6 for r in rows]
        ax.bar([x - width / 2 for x in xs], ours, width, label="memstored", color="#d9534f")
        ax.bar([x + width / 2 for x in xs], theirs, width, label="Tkrzw 1.0.25", color="#5b7fb5")
        for x, r in zip(xs, rows):
            top = max(int(r[f"memstored_{op}"]), int(r[f"tkrzw_{op}"])) / 1e6
            ax.annotate(
                f"{float(r[f'{op}_ratio']):.2f}x",
                (x, top),
                ha="center",
                va="bottom",
                fontsize=8,
            )
        ax.set_ylabel(f"{op} (M ops/s)")
        ax.set_title(f"{op}: memstore perf sequence vs tkrzw_dbm_perf sequence (median)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="upper right")
        ax.margins(y=0.15)
    axes[1].set_xticks(list(xs))
    axes[1].set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"wrote {dst}", file=sys.stderr)


if __name__ == "__main__":
    main()
