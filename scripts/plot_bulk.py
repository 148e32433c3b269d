#!/usr/bin/env python3
"""Renders docs/bench/bulk.md and bulk.png from scripts/bench-bulk.sh's raw
numbers: medians over the repetitions, ratios against memcached's same
protocol and bulk size, and the goal verdicts.

    python3 scripts/plot_bulk.py docs/bench/bulk-raw.tsv docs/bench/bulk-meta.txt docs/bench
"""
import csv
import json
import os
import statistics
import sys
from collections import defaultdict

from plotlib import load_matplotlib


def load_raw(path):
    rows = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            key = (r["server"], r["protocol"], int(r["bulk"]), r["phase"])
            rows[key].append(r)
    return rows


def load_meta(path):
    meta = defaultdict(list)
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("\t")
            meta[k].append(v)
    return meta


def med(rs, field):
    return statistics.median(float(r[field]) for r in rs)


def fmt_rate(x):
    return f"{x:,.0f}"


MEMCACHED_SERIES = [
    ("memstored", "binary", "#1f77b4"),
    ("memcached", "binary", "#aec7e8"),
    ("memstored", "text", "#2ca02c"),
    ("memcached", "text", "#98df8a"),
    ("memstored", "rpc", "#d62728"),
]
KT_SERIES = [
    ("memstored", "kt-http", "#1f77b4"),
    ("ktserver", "kt-http", "#aec7e8"),
    ("memstored", "kt-binary", "#2ca02c"),
    ("ktserver", "kt-binary", "#98df8a"),
    ("memstored", "rpc", "#d62728"),
]


def plot(rows, bulks, out_png, series=MEMCACHED_SERIES,
         title="1M records, 4 threads: memstored vs memcached (memstore bench)"):
    plt = load_matplotlib()
    if plt is None:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    width = 0.8 / len(series)
    for ax, phase in zip(axes, ["set", "get"]):
        for i, (srv, proto, color) in enumerate(series):
            xs, ys = [], []
            for j, b in enumerate(bulks):
                rs = rows.get((srv, proto, b, phase))
                if rs:
                    xs.append(j + (i - len(series) / 2 + 0.5) * width)
                    ys.append(med(rs, "records_per_sec"))
            ax.bar(xs, ys, width, label=f"{srv} {proto}", color=color)
        ax.set_xticks(range(len(bulks)))
        ax.set_xticklabels([f"bulk {b}" for b in bulks])
        ax.set_yscale("log")
        ax.set_title(f"{phase}: records/s (median)")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("records / second (log)")
    axes[1].legend(fontsize=8, loc="upper left")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    return True


KT_PROTOCOLS = [("kt-http", "KT HTTP RPC"), ("kt-binary", "KT binary"), ("rpc", "msgpack-rpc")]


def kt_section(w, rows, bulks, m1, out_dir):
    """Seed 003's table: set and get over KT's HTTP RPC, KT's binary protocol
    and msgpack-rpc, bulk 1/10/100, memstored beside ktserver."""
    if not any(k[1].startswith("kt-") for k in rows):
        w("## Seed 003's table (Kyoto Tycoon's protocols)\n")
        w("Not run: the script was given no Kyoto Tycoon build (`KT_DIR`).\n")
        return
    w("## Seed 003's table: KT HTTP RPC, KT binary, msgpack-rpc\n")
    w("```")
    for k in ("kt_memstored_cmd", "kt_ktserver_cmd", "kt_bench_cmd"):
        w(m1(k))
    w("```\n")
    w(f"- {m1('kt_version')}; load after these runs: `{m1('load_after_kt')}`")
    w(
        "- KT rows: Kyoto Tycoon's own client against both servers; msgpack-rpc rows: "
        "`memstore bench --protocol rpc` (ktserver has no msgpack-rpc without the "
        "kt-msgpack plugin, not built here). Median of the runs.\n"
    )
    w("| protocol | bulk | phase | memstored records/s | ktserver records/s | memstored / ktserver |")
    w("|---|---:|---|---:|---:|---:|")
    ratios = []
    for proto, label in KT_PROTOCOLS:
        for b in bulks:
            for phase in ("set", "get"):
                ms = rows.get(("memstored", proto, b, phase))
                kt = rows.get(("ktserver", proto, b, phase))
                if not ms and not kt:
                    continue
                cells = [label, str(b), phase]
                cells += [fmt_rate(med(rs, "records_per_sec")) if rs else "—" for rs in (ms, kt)]
                if ms and kt:
                    r = med(ms, "records_per_sec") / med(kt, "records_per_sec")
                    ratios.append((label, b, phase, r))
                    cells.append(f"{r:.2f}")
                else:
                    cells.append("—")
                w("| " + " | ".join(cells) + " |")
    w("")
    w("### Goals (issue 13)\n")
    rpc_set = rows.get(("memstored", "rpc", 100, "set"))
    if rpc_set:
        rate = med(rpc_set, "records_per_sec")
        w(
            f"- msgpack-rpc bulk-100 set ≥ 1,500,000 records/s: "
            f"**{'met' if rate >= 1_500_000 else 'not met'}** ({fmt_rate(rate)} records/s)."
        )
    short = [x for x in ratios if x[3] < 1.5]
    if ratios:
        verdict = "met" if not short else "not met"
        detail = ", ".join(f"{l} bulk {b} {p} ({r:.2f}x)" for l, b, p, r in short)
        w(
            f"- every memstored row ≥ 1.5x ktserver's same row: **{verdict}**"
            + (f" in {len(short)} of {len(ratios)} rows: {detail}." if short else f" in all {len(ratios)} rows.")
        )
    w("")
    title = "Seed 003's table: 1M records, 4 threads, memstored vs ktserver"
    if plot(rows, bulks, os.path.join(out_dir, "bulk-kt.png"), KT_SERIES, title):
        w("![seed 003's table: records/s](bulk-kt.png)\n")


def main():
    raw, meta_path, out_dir = sys.argv[1:4]
    rows = load_raw(raw)
    meta = load_meta(meta_path)
    m1 = lambda k, d="": (meta.get(k) or [d])[0]  # noqa: E731
    bulks = sorted({k[2] for k in rows})
    records = int(m1("threads", "4")) * int(m1("iter", "250000"))

    out = []
    w = out.append
    w("# Bulk operations over the network: memstored vs memcached\n")
    w(
        "The Kyoto Tycoon / kt-msgpack bulk table (shared/seeds/003) redone on this "
        "machine with one client for every server, `memstore bench`, plus the "
        "Tkrzw-RPC sharding run (shared/seeds/002) scaled down. Generated by "
        "`scripts/bench-bulk.sh` (rendering: `scripts/plot_bulk.py`); raw numbers in "
        "`bulk-raw.tsv`, run facts in `bulk-meta.txt`.\n"
    )
    w(f"- date: {m1('date')}; commit {m1('commit')}")
    w(f"- machine: {m1('cpu')}, {m1('memory')}; shared with other jobs, so noisy")
    w(f"- load before: `{m1('load_before')}`")
    w(f"- load after the bulk runs: `{m1('load_after_bulk')}`")
    w(f"- load at the end: `{m1('load_after')}`")
    w(f"- {m1('memcached')}; median of {m1('reps')} runs, servers alternating run by run\n")
    w("## Commands\n")
    w("```")
    w(m1("memstored_cmd"))
    w(m1("memcached_cmd"))
    w(m1("bench_cmd") + "    # P = binary|text|rpc, B = 1|10|100")
    w("```\n")
    w(
        f"Each bench run sets {records:,} records (keys `%08d`, 8-byte values) and then "
        "gets them, THREADS threads with one connection each and one batch in flight. "
        "A batch of B is: binary, B x SETQ/GETKQ + NOOP; text, B-1 `set ... noreply` "
        "+ one `set`, or one `get k1 ... kB`; RPC, `set_bulk` / `get_bulk` (B = 1: the "
        "plain SET/GET, `set`/`get`). Latency is per request, i.e. per batch round trip. "
        "Small figures after a rate: the lowest and highest of the runs.\n"
    )

    verdict_rows = []
    for phase in ["set", "get"]:
        w(f"## {phase}\n")
        w(
            "| protocol | bulk | memstored s | memstored records/s | p99 µs | memcached s "
            "| memcached records/s | p99 µs | memstored / memcached |"
        )
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for proto in ["binary", "text", "rpc"]:
            for b in bulks:
                ms = rows.get(("memstored", proto, b, phase))
                mc = rows.get(("memcached", proto, b, phase))
                if not ms and not mc:
                    continue
                cells = [proto, str(b)]
                for rs in (ms, mc):
                    if rs:
                        rates = [float(r["records_per_sec"]) for r in rs]
                        spread = (
                            f" <sub>{min(rates) / 1000:,.0f}k–{max(rates) / 1000:,.0f}k</sub>"
                            if len(rates) > 1
                            else ""
                        )
                        cells += [
                            f"{med(rs, 'seconds'):.2f}",
                            fmt_rate(med(rs, "records_per_sec")) + spread,
                            f"{med(rs, 'p99_us'):.0f}",
                        ]
                    else:
                        cells += ["—", "—", "—"]
                if ms and mc:
                    ratio = med(ms, "records_per_sec") / med(mc, "records_per_sec")
                    cells.append(f"{ratio:.2f}")
                    verdict_rows.append((phase, proto, b, ratio))
                else:
                    cells.append("—")
                w("| " + " | ".join(cells) + " |")
        w("")
        errs = sum(int(r["errors"]) for rs in rows.values() for r in rs if r["phase"] == phase)
        w(f"Errors in {phase} runs: {errs}.\n")
    w("![records/s by protocol and bulk size](bulk.png)\n")

    w("## Goal\n")
    rpc_set = rows.get(("memstored", "rpc", 100, "set"))
    if rpc_set:
        rate = med(rpc_set, "records_per_sec")
        ok = rate >= 1_000_000
        w(
            f"- bulk-100 RPC set ≥ 1,000,000 records/s: **{'met' if ok else 'not met'}** "
            f"({fmt_rate(rate)} records/s)."
        )
    behind = [v for v in verdict_rows if v[3] < 1.0]
    if verdict_rows:
        if behind:
            lst = ", ".join(f"{p} {pr} bulk {b} ({r:.2f}x)" for p, pr, b, r in behind)
            w(
                f"- every memstored protocol ≥ memcached's same protocol and bulk: "
                f"**not met** in {len(behind)} of {len(verdict_rows)} cells: {lst}."
            )
        else:
            w(
                f"- every memstored protocol ≥ memcached's same protocol and bulk: "
                f"**met** in all {len(verdict_rows)} cells."
            )
    w("")

    kt_section(w, rows, bulks, m1, out_dir)

    w("## Sharding run (Tkrzw-RPC article, scaled)\n")
    w("```")
    w(m1("shard_server_cmd"))
    w(m1("shard_load_cmd"))
    for op in meta.get("shard_op", []):
        w(op.split("\t")[2])
    w(m1("shard_gets_cmd") + "    # alongside the three")
    w("```\n")
    try:
        load = json.loads(m1("shard_load"))
        p = load["phases"][0]
        w(
            f"- load: {p['records']:,} records in {p['seconds']:.2f} s = "
            f"{fmt_rate(p['records_per_sec'])} records/s "
            f"(the article: 100M in 128 s = 781k/s with 4 threads on its machine)"
        )
    except (ValueError, KeyError, IndexError):
        w("- load: no result")
    for op in meta.get("shard_op", []):
        name, secs = op.split("\t")[:2]
        w(f"- `{name}`: {secs} s")
    try:
        g = json.loads(m1("shard_gets"))["phases"][0]
        l = g["latency_us"]
        w(
            f"- gets alongside (binary, one record per request, 1 thread): {g['records']:,} "
            f"gets, {g['hits']:,} hits, {fmt_rate(g['records_per_sec'])}/s; latency p50 "
            f"{l['p50']} µs, p99 {l['p99']} µs, p99.9 {l['p999']} µs, **worst {l['max'] / 1000:.1f} ms**"
        )
    except (ValueError, KeyError, IndexError):
        w("- gets alongside: no result")
    w(f"- files: {m1('shard_files')}\n")

    notes = os.path.join(out_dir, "bulk-notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            w(f.read())

    with open(os.path.join(out_dir, "bulk.md"), "w") as f:
        f.write("\n".join(out).rstrip() + "\n")
    if not plot(rows, bulks, os.path.join(out_dir, "bulk.png")):
        print("no chart written", file=sys.stderr)


if __name__ == "__main__":
    main()
