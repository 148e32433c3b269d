#!/usr/bin/env python3
"""Renders docs/bench/cache.png from scripts/bench-cache.py's cache.tsv:
one panel per kind of measurement (items kept, bytes of RSS per item, hit
ratio), memstored's bar beside memcached's.

    python3 scripts/plot_cache.py [docs/bench]
"""
import csv
import sys
from pathlib import Path

from plotlib import load_matplotlib

PANELS = [("items kept", "items kept"), ("bytes per item", "RSS bytes per item"),
          ("hit ratio", "hit ratio")]


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent / "docs" / "bench")
    rows = {}
    with open(out / "cache.tsv") as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines, delimiter="\t"):
        rows.setdefault(r["measurement"], {})[r["side"]] = float(r["value"])
    plt = load_matplotlib()
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(PANELS), figsize=(15, 4.5))
    for ax, (needle, title) in zip(axes, PANELS):
        names = [m for m in rows if needle in m]
        xs = range(len(names))
        for offset, side, color in ((-0.2, "memstored", "tab:blue"), (0.2, "memcached", "tab:gray")):
            ax.bar([x + offset for x in xs], [rows[m].get(side, 0) for m in names], 0.4,
                   label=side, color=color)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([m.split(":")[0].replace(", ", "\n") for m in names], fontsize=8)
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.suptitle("memstored *#capsiz= vs memcached -m, 16-byte keys, 100-byte values")
    fig.tight_layout()
    fig.savefig(out / "cache.png", dpi=100)
    print(f"wrote {out / 'cache.png'}")


if __name__ == "__main__":
    main()
