#!/usr/bin/env python3
"""Bar chart of seed 004's table as docs/bench/bindings.md records it: set and
get QPS per implementation, 1 and 4 threads.

usage: plot-bindings.py [bindings.md] [bindings.png]

Reads every table of bench-bindings.sh's output (header "| impl | threads |
set QPS | get QPS | RSS MiB |") in document order; a later row for the same
implementation and thread count replaces an earlier one, so each bar is that
implementation's latest median. Tables were measured under different machine
loads (the doc says which), and the chart says so too.
"""
import sys

from plotlib import load_matplotlib

HEADER = "| impl | threads | set QPS | get QPS | RSS MiB |"


def parse(path):
    """{impl: {threads: (set_qps, get_qps, section)}} from the doc's tables."""
    latest, section, in_table = {}, "", False
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("## "):
                section = line[3:]
            if line == HEADER:
                in_table = True
                continue
            if not line.startswith("|"):
                in_table = False
            if not in_table or line.startswith("|---"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            impl, threads = cells[0], int(cells[1])
            qps = [float(c.replace(",", "")) for c in cells[2:4]]
            latest.setdefault(impl, {})[threads] = (qps[0], qps[1], section)
    return latest


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/bench/bindings.md"
    dst = sys.argv[2] if len(sys.argv) > 2 else "docs/bench/bindings.png"
    latest = parse(src)
    if not latest:
        sys.exit(f"no '{HEADER}' table in {src}")
    names = sorted(latest, key=lambda s: (s.lower().startswith("tkrzw"), s.lower()))
    plt = load_matplotlib()
    if plt is None:
        return
    fig, axes = plt.subplots(2, 1, figsize=(13, 9), sharex=True)
    width = 0.38
    xs = range(len(names))
    for ax, (op, col) in zip(axes, (("set", 0), ("get", 1))):
        for k, threads in enumerate((1, 4)):
            vals = [latest[n].get(threads, (0, 0, ""))[col] / 1000 for n in names]
            ax.bar([x + (k - 0.5) * width for x in xs], vals, width, label=f"{threads} thread(s)")
        ax.set_ylabel(f"{op} kQPS")
        ax.grid(axis="y", alpha=0.3)
        ax.legend()
    axes[-1].set_xticks(list(xs))
    # Which table each bar comes from: bars from different tables ran under different loads.
    tags = [latest[n][min(latest[n])][2].split("(")[0].strip() for n in names]
    labels = [f"{n}\n[{t}]" for n, t in zip(names, tags)]
    axes[-1].set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    fig.suptitle(
        "Seed 004's workload (hash file, %08d keys/values), each implementation's latest\n"
        "table in docs/bench/bindings.md; tables ran under different machine loads and N",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(dst, dpi=100)
    print(f"wrote {dst}: {', '.join(names)}")


if __name__ == "__main__":
    main()
