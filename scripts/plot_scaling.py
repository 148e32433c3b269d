#!/usr/bin/env python3
"""Medians and chart of scripts/bench-scaling.sh's raw TSV.

usage: plot_scaling.py scaling-raw.tsv scaling.tsv scaling.png

Writes the medians per (kind, workload, threads, side) as a TSV, prints them
as a Markdown table (for docs/bench/scaling.md) and draws throughput against
threads, one panel per workload and phase, with the linear line from the
one-thread median for reference.
"""
import csv
import statistics
import sys
from collections import defaultdict

from plotlib import load_matplotlib

ANCHOR = {"server": "memcached", "engine": "tkrzw"}


def medians(src):
    runs = defaultdict(lambda: defaultdict(list))
    with open(src, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    for r in csv.DictReader(lines, delimiter="\t"):
        key = (r["kind"], r["workload"], int(r["threads"]), r["side"])
        for col in ("set_per_sec", "get_per_sec", "cpu_us_per_req"):
            if r[col] not in ("-", ""):
                runs[key][col].append(float(r[col]))
        runs[key]["pinned"] = [r["pinned"]]
    return {k: {c: (statistics.median(v) if c != "pinned" else v[0]) for c, v in cols.items()}
            for k, cols in runs.items()}


def table(med):
    out = ["| kind | workload | threads | phase | memstored /s | anchor /s | ratio | memstored vs linear |",
           "|---|---|---|---|---|---|---|---|"]
    for kind, wl in sorted({(k[0], k[1]) for k in med}):
        threads = sorted({k[2] for k in med if k[:2] == (kind, wl)})
        for phase in ("set", "get"):
            one = med.get((kind, wl, threads[0], "memstored"), {}).get(f"{phase}_per_sec")
            for n in threads:
                ours = med.get((kind, wl, n, "memstored"), {})
                theirs = med.get((kind, wl, n, ANCHOR[kind]), {})
                a, b = ours.get(f"{phase}_per_sec"), theirs.get(f"{phase}_per_sec")
                if a is None or b is None:
                    continue
                lin = a / (one * n / threads[0]) if one else 0
                pin = "" if ours.get("pinned", "-") in ("yes", "-") else " (unpinned)"
                out.append(f"| {kind} | {wl}{pin} | {n} | {phase} | {a:,.0f} | {b:,.0f} | {a / b:.2f}x "
                           f"| {lin:.2f} |")
    return "\n".join(out)


def cpu_table(med):
    out = ["| workers | memstored µs CPU/request | memcached µs CPU/request | ratio |", "|---|---|---|---|"]
    for k in sorted(k for k in med if k[0] == "server" and k[3] == "memstored"):
        a = med[k].get("cpu_us_per_req")
        b = med.get((k[0], k[1], k[2], "memcached"), {}).get("cpu_us_per_req")
        if a and b:
            out.append(f"| {k[2]} | {a:.2f} | {b:.2f} | {a / b:.2f}x |")
    return "\n".join(out)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, tsv, png = sys.argv[1:]
    med = medians(src)
    with open(tsv, "w") as f:
        f.write("kind\tworkload\tthreads\tside\tset_per_sec\tget_per_sec\tcpu_us_per_req\n")
        for k in sorted(med):
            m = med[k]
            f.write("\t".join(map(str, k)) + "\t" + "\t".join(
                f"{m.get(c, 0):.2f}" for c in ("set_per_sec", "get_per_sec", "cpu_us_per_req")) + "\n")
    print(table(med))
    print()
    print(cpu_table(med))
    plt = load_matplotlib()
    if plt is None:
        return
    panels = sorted({(k[0], k[1]) for k in med})
    fig, axes = plt.subplots(2, len(panels), figsize=(4.5 * len(panels), 7), squeeze=False)
    for col, (kind, wl) in enumerate(panels):
        for row, phase in enumerate(("set", "get")):
            ax = axes[row][col]
            for side, color in (("memstored", "#d9534f"), (ANCHOR[kind], "#5b7bb2")):
                pts = sorted((k[2], m[f"{phase}_per_sec"] / 1e6) for k, m in med.items()
                             if k[:2] == (kind, wl) and k[3] == side and f"{phase}_per_sec" in m)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=side)
                if side == "memstored" and pts:
                    ax.plot([p[0] for p in pts], [pts[0][1] * p[0] / pts[0][0] for p in pts], ":",
                            color=color, alpha=0.5, label="memstored linear")
            ax.set_xscale("log", base=2)
            ax.set_title(f"{kind} {wl}: {phase}")
            ax.set_xlabel("threads")
            ax.set_ylabel("M per second")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=90)


if __name__ == "__main__":
    main()
