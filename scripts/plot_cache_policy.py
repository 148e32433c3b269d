#!/usr/bin/env python3
"""Renders docs/bench/cache-policy.png from scripts/bench-cache.py policy's
cache-policy.tsv and scripts/bench-cache-values.py's cache-values.tsv: hit
ratios by workload (the two servers at `-m 64`, LRU and S3-FIFO simulated
with as many items as memstored held), memcslap's misses by run, and items
kept under `-m 64` by value size.

    python3 scripts/plot_cache_policy.py [docs/bench]
"""
import csv
import sys
from pathlib import Path

from plotlib import load_matplotlib

CACHES = [("memstored", "tab:blue"), ("memcached", "tab:gray"),
          ("LRU", "tab:orange"), ("S3FIFO", "tab:green")]


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader([l for l in f if not l.startswith("#")], delimiter="\t"))


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent / "docs" / "bench")
    values = rows_of(out / "cache-values.tsv") if (out / "cache-values.tsv").exists() else []
    plt = load_matplotlib()
    if plt is None:
        return
    if values:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        values_panel(ax, values)
        fig.tight_layout()
        fig.savefig(out / "cache-values.png", dpi=100)
        print(f"wrote {out / 'cache-values.png'}")
    if not (out / "cache-policy.tsv").exists():
        return
    policy = rows_of(out / "cache-policy.tsv")
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    ratios = {}
    for r in policy:
        if "memcslap" in r["workload"] or r["cache"] in ("memstored items", "memcached items"):
            continue
        name = r["cache"].split(" ")[0]
        if r["cache"] in ("memstored", "memcached") or r["cache"].endswith("at memstored's items"):
            ratios.setdefault(r["workload"], {})[name] = float(r["value"])
    ax = axes[0]
    for i, (name, color) in enumerate(CACHES):
        xs = [w + (i - 1.5) * 0.2 for w in range(len(ratios))]
        ax.bar(xs, [v.get(name, 0) for v in ratios.values()], 0.2, label=name, color=color)
    ax.set_xticks(range(len(ratios)))
    ax.set_xticklabels([w.replace(", ", ",\n") for w in ratios], fontsize=8)
    ax.set_title("hit ratio, -m 64 (simulations: memstored's item count)")
    ax.legend(fontsize=8)
    ax = axes[1]
    runs = [r for r in policy if "memcslap" in r["workload"]]
    labels = list(dict.fromkeys(r["workload"].replace("memcslap ", "").replace(": misses", "")
                                for r in runs))
    for i, (side, color) in enumerate(CACHES[:2]):
        ys = [float(r["value"]) for r in runs if r["cache"] == side]
        ax.bar([x + (i - 0.5) * 0.4 for x in range(len(ys))], ys, 0.4, label=side, color=color)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([l.replace("round ", "r").replace(" concurrency ", " c") for l in labels],
                       fontsize=8)
    ax.set_ylim(bottom=0, top=max([float(r["value"]) for r in runs] + [10]) * 1.1)
    ax.set_title("memcslap churn on a warm 512 MiB server: misses per run")
    ax.legend(fontsize=8)
    values_panel(axes[2], values)
    fig.tight_layout()
    fig.savefig(out / "cache-policy.png", dpi=100)
    print(f"wrote {out / 'cache-policy.png'}")


def values_panel(ax, values):
    """Items kept under -m 64 by value size, both servers (log scale)."""
    if values:
        sizes = [r["value bytes"] for r in values]
        for i, (side, color) in enumerate(CACHES[:2]):
            ax.bar([x + (i - 0.5) * 0.4 for x in range(len(sizes))],
                   [int(r[f"{side} items"]) for r in values], 0.4, label=side, color=color)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels(sizes, fontsize=8)
        ax.set_yscale("log")
        ax.set_xlabel("value bytes")
        ax.legend(fontsize=8)
    ax.set_title("items kept under -m 64")


if __name__ == "__main__":
    main()
