#!/usr/bin/env python3
"""Seed 003's table from bulk-seed003.tsv (scripts/lib/seed003.sh): per row,
the medians of wall time, records/s and server CPU per record for memstored
and ktserver, the CPU ratio, and issue 47's goals. Markdown on stdout.

  scripts/seed003_table.py docs/bench/bulk-seed003.tsv [CHART.png]

With CHART.png, also draws server CPU per record of every KT row, memstored
beside ktserver (log scale: bulk 1 costs ~40x bulk 100).
"""
import collections
import csv
import os
import statistics
import sys

NAMES = {"kt-http": "KT HTTP", "kt-binary": "KT binary", "rpc": "msgpack-rpc"}


def main():
    rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
    runs = collections.defaultdict(list)
    for r in rows:
        runs[(r["protocol"], int(r["bulk"]), r["phase"], r["server"])].append(r)

    def med(key, field):
        v = [float(r[field]) for r in runs.get(key, [])]
        return statistics.median(v) if v else None

    def f(x, fmt):
        return "—" if x is None else format(x, fmt)

    print("| protocol | bulk | phase | memstored wall s | ktserver wall s | memstored records/s "
          "| memstored CPU µs/record | ktserver CPU µs/record | CPU memstored / ktserver | errors |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    missed = []
    rpc100 = None
    chart = []
    for proto in ["kt-http", "kt-binary", "rpc"]:
        for bulk in sorted({k[1] for k in runs}):
            for phase in ["set", "get"]:
                ms, kt = (proto, bulk, phase, "memstored"), (proto, bulk, phase, "ktserver")
                if ms not in runs:
                    continue
                mcpu, kcpu = med(ms, "server_cpu_us_per_record"), med(kt, "server_cpu_us_per_record")
                ratio = mcpu / kcpu if mcpu is not None and kcpu else None
                errors = sum(int(r["errors"]) for k in (ms, kt) for r in runs.get(k, []))
                print(f"| {NAMES[proto]} | {bulk} | {phase} | {f(med(ms, 'wall_s'), '.2f')} | "
                      f"{f(med(kt, 'wall_s'), '.2f')} | {f(med(ms, 'records_per_s'), ',.0f')} | "
                      f"{f(mcpu, '.2f')} | {f(kcpu, '.2f')} | {f(ratio, '.2f')} | {errors} |")
                if proto != "rpc" and (ratio is None or ratio > 0.67):
                    missed.append(f"{NAMES[proto]} bulk {bulk} {phase} ({f(ratio, '.2f')}x)")
                if proto == "rpc" and bulk == 100 and phase == "set":
                    rpc100 = med(ms, "records_per_s")
                if proto != "rpc":
                    chart.append((f"{NAMES[proto]}\nbulk {bulk} {phase}", mcpu, kcpu))
    print()
    print("Goals (issue 47):")
    print(f"- server CPU per record at most 0.67x ktserver's in every KT row: "
          f"{'**met**' if not missed else '**not met** in ' + ', '.join(missed)}")
    if rpc100 is not None:
        print(f"- msgpack-rpc bulk-100 set at least 1.5M records/s: "
              f"{'**met**' if rpc100 >= 1.5e6 else '**not met**'} ({rpc100:,.0f} records/s)")
    if len(sys.argv) > 2:
        draw(chart, sys.argv[2])


def draw(chart, path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from plotlib import load_matplotlib

    plt = load_matplotlib()
    if plt is None or not chart:
        return
    labels = [c[0] for c in chart]
    xs = range(len(chart))
    fig, ax = plt.subplots(figsize=(12, 4.5))
    ax.bar([x - 0.2 for x in xs], [c[1] or 0 for c in chart], 0.4, label="memstored")
    ax.bar([x + 0.2 for x in xs], [c[2] or 0 for c in chart], 0.4, label="ktserver 0.9.56b")
    ax.set_yscale("log")
    ax.set_ylabel("server CPU µs per record (lower is better)")
    ax.set_title("Seed 003's bulk rows: server CPU per record (ktremotetest bulk -th 4, 1M records)")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
