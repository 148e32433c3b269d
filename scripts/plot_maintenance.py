#!/usr/bin/env python3
"""Writes docs/bench/maintenance.md and maintenance.png from the raw TSV of
scripts/bench-maintenance.sh: per store and phase, the worst request latency
of the 4 probes over all runs, their p99.9 (the larger of the setting and
the getting probes', median over the runs), and the goal (worst during
maintenance at most 2x the idle worst and under 50 ms).

    python3 scripts/plot_maintenance.py RAW.tsv OUT_DIR "COMMAND LINE"
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

from plotlib import load_matplotlib

PHASES = ["idle", "sync", "backup", "rebuild"]
WHAT = {
    "idle": "no maintenance",
    "sync": "`sync --hard`",
    "backup": '`sync "make_backup="`',
    "rebuild": "`rebuild`",
}
LIMIT_MS = 50.0


def load(path):
    """{(kind, phase): {run: [rows of its probes]}}"""
    cells = defaultdict(lambda: defaultdict(list))
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            cells[(r["kind"], r["phase"])][r["run"]].append(r)
    return cells


def summary(cells):
    out = {}
    for (kind, phase), runs in cells.items():
        rows = [r for probes in runs.values() for r in probes]
        out[(kind, phase)] = {
            "worst_ms": max(float(r["max_us"]) for r in rows) / 1000,
            "p999_ms": statistics.median(
                max(float(r["p999_us"]) for r in probes) for probes in runs.values()
            )
            / 1000,
            "p50_ms": statistics.median(float(r["p50_us"]) for r in rows) / 1000,
            "secs": statistics.median(float(r["maint_s"]) for r in rows),
            "errors": sum(int(r["errors"]) for r in rows),
            "requests": sum(int(r["requests"]) for r in rows),
            "runs": len(runs),
            "loads": sorted({r["load_before"] for r in rows} | {r["load_after"] for r in rows}, key=float),
        }
    return out


def verdict(s, kind, phase):
    if phase == "idle":
        return ""
    worst = s[(kind, phase)]["worst_ms"]
    idle = s[(kind, "idle")]["worst_ms"]
    ok = worst <= 2 * idle and worst < LIMIT_MS
    return f"{'met' if ok else 'NOT met'} ({worst / idle:.1f}x idle)"


def chart(s, kinds, out_dir):
    plt = load_matplotlib()
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.8 * len(kinds), 3.8), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        phases = [p for p in PHASES if (kind, p) in s]
        xs = range(len(phases))
        worst = [s[(kind, p)]["worst_ms"] for p in phases]
        p999 = [s[(kind, p)]["p999_ms"] for p in phases]
        ax.bar([x - 0.2 for x in xs], worst, 0.4, label="worst", color="#c43")
        ax.bar([x + 0.2 for x in xs], p999, 0.4, label="p99.9", color="#27a")
        ax.axhline(LIMIT_MS, color="k", linestyle="--", linewidth=1, label="50 ms")
        if (kind, "idle") in s:
            ax.axhline(2 * s[(kind, "idle")]["worst_ms"], color="#c43", linestyle=":",
                       linewidth=1, label="2x idle worst")
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(phases)
        ax.set_ylabel("probe request latency, ms")
        ax.set_title(f".{kind} store")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "maintenance.png"), dpi=110)


def main():
    raw, out_dir, command = sys.argv[1], sys.argv[2], sys.argv[3]
    s = summary(load(raw))
    kinds = sorted({k for k, _ in s})
    chart(s, kinds, out_dir)
    lines = [
        "# Clients during maintenance",
        "",
        "Four probe clients (2 setting, 2 getting random loaded keys, one record per",
        "request, paced) against a memstored serving a 100-shard store, with no",
        "maintenance and during each maintenance call. Goal (issue 40): the worst",
        "latency during maintenance at most 2x the idle worst and under 50 ms.",
        "A `.tkmt` has no log to compact: its `rebuild` returns at once.",
        "",
    ]
    if os.environ.get("NOTE"):
        lines += [f"**Note:** {os.environ['NOTE']}", ""]
    lines += [
        f"Command: `{command}`; raw rows: `maintenance-raw.tsv` (1-minute load",
        "average before and after each phase in its last two columns).",
        "",
        "![worst and p99.9 latency per phase](maintenance.png)",
        "",
        "| store | phase | maintenance took (s) | p50 ms | p99.9 ms | worst ms | goal | load averages |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind in kinds:
        for phase in PHASES:
            c = s.get((kind, phase))
            if c is None:
                continue
            errors = f" ({c['errors']} errors)" if c["errors"] else ""
            lines.append(
                f"| .{kind} | {WHAT[phase]}{errors} | {c['secs']:.2f} | {c['p50_ms']:.2f} | "
                f"{c['p999_ms']:.2f} | {c['worst_ms']:.2f} | {verdict(s, kind, phase)} | "
                f"{', '.join(c['loads'])} |"
            )
    runs = max(c["runs"] for c in s.values())
    lines += [
        "",
        f"Worst: over all {runs} run(s) and probes. p99.9: the larger of the setting and",
        "the getting probes' p99.9, median over the runs.",
        "",
    ]
    with open(os.path.join(out_dir, "maintenance.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
