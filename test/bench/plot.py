#!/usr/bin/env python3
"""PNG plots of a bench run: pg_dio_read vs fio and pg_dio's read sizes
(engine.png), cold sequential scans (seqscan*.png) and cold index range
scans (indexscan*.png), TPC-H's per-query ratios (tpch-*.png), one plot per
seqscan*.json / indexscan*.json / tpch-*.json in the directory (e.g. test/bench/latest's seqscan-uring-pg19.json becomes
seqscan-uring-pg19.png).
Usage: plot.py RESULTS_DIR   (matplotlib from the project venv)"""
import glob
import json
import os
import itertools
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

CORE = "tab:blue"
PG_DIO = "tab:orange"


def build_text(path, r=None):
    """'PostgreSQL 19, io_method=io_uring' for results copied to a name like
    seqscan-uring-pg19.json; nothing for a run directory's own names; where
    a hot standby ran them (PG_DIO_BENCH_STANDBY=1), that."""
    m = re.search(r"-uring-pg(\d+)", path)
    text = f"PostgreSQL {m.group(1)}, io_method=io_uring" if m else ""
    if r and r.get("standby"):
        text += ("; " if text else "") + \
            f"on the hot standby {r['standby']['cluster']} of {r['standby']['primary']}"
    return text


# sequential-scan configurations (test/bench/seqscan.py) as a reader names them
SEQ_NAMES = {
    "core-sync": "core, io_method=sync",
    "core-worker": "core, worker, 128kB reads",
    "core-worker-1M": "core, worker, 1MB reads",
    "core-dio-1M": "core, worker, debug_io_direct, 1MB",
    "pg_dio": "DirectSeqScan",
    "uring/core": "core, io_uring, 128kB reads",
    "uring/core-1M": "core, io_uring, 1MB reads",
    "uring/core-dio-1M": "core, io_uring, debug_io_direct, 1MB",
    "uring/pg_dio": "DirectSeqScan (io_uring)",
}


def seqscan_plot(path):
    with open(path) as f:
        r = json.load(f)
    keys = []
    configs = []
    for k in r["cold"]:
        query, workers, c = k.split("/", 2)
        if f"{query}/{workers}" not in keys:
            keys.append(f"{query}/{workers}")
        if c not in configs:
            configs.append(c)
    # DirectSeqScan last, beside the best of core
    configs.sort(key=lambda c: c.endswith("pg_dio"))
    fig, ax = plt.subplots(figsize=(10, 5.2))
    width = 0.8 / len(configs)
    # as many colours as configurations: a standby run has nine
    core_colors = itertools.cycle(["tab:blue", "tab:green", "tab:red", "tab:purple", "tab:brown",
                                   "tab:pink", "tab:gray", "tab:olive", "tab:cyan"])
    dio_colors = itertools.cycle([PG_DIO, "saddlebrown"])
    for i, c in enumerate(configs):
        # a configuration not run for a query/workers pair (quick mode) is a gap
        nan = float("nan")
        runs = [[x["gib_s"] for x in r["cold"].get(f"{k}/{c}", [])] for k in keys]
        med = [statistics.median(g) if g else nan for g in runs]
        lo = [m - min(g) if g else 0 for g, m in zip(runs, med)]
        hi = [max(g) - m if g else 0 for g, m in zip(runs, med)]
        color = next(dio_colors) if c.endswith("pg_dio") else next(core_colors)
        ax.bar([j + i * width for j in range(len(keys))], med, width, yerr=[lo, hi],
               label=SEQ_NAMES.get(c, c), color=color, capsize=2)
    # the same figure as the report's: every fio run of the experiment (at the
    # start of each round and beside each query and worker count)
    fio_runs = r["fio"] + [x for v in r.get("fio_paired", {}).values() for x in v]
    fio = statistics.median(fio_runs)
    ax.axhline(fio, color="black", linestyle="--", linewidth=1,
               label=f"fio O_DIRECT 256kB×32, median {fio:.2f}")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
    ax.set_xticklabels([k.replace("/", ", workers=") for k in keys])
    ax.set_ylabel("GiB/s (median; bars: min–max)")
    title = f"Cold sequential scans of a {r['table_bytes'] / 2**30:.1f} GiB table, {r['rounds']} rounds"
    build = build_text(path, r)
    ax.set_title(title + (f"\n{build}" if build else ""))
    ax.set_ylim(0, max(ax.get_ylim()[1], fio * 1.15))
    # the legend below the axes, where no bar or error bar can be under it
    ax.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    fig.tight_layout()
    fig.savefig(path[:-len(".json")] + ".png", dpi=110)
    plt.close(fig)


def engine_plot(out):
    with open(os.path.join(out, "engine_vs_fio.json")) as f:
        r = json.load(f)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    labels = [(f"{c['io_size_kb'] // 1024}MB" if c["io_size_kb"] % 1024 == 0 else f"{c['io_size_kb']}kB")
              + f" × {c['depth']}" for c in r["configs"]]
    xs = range(len(labels))
    ax1.bar([x - 0.2 for x in xs], [c["fio_mib_s"]["median"] for c in r["configs"]], 0.4,
            label="fio", color=CORE)
    ax1.bar([x + 0.2 for x in xs], [c["pg_dio_mib_s"]["median"] for c in r["configs"]], 0.4,
            label="pg_dio_read", color=PG_DIO)
    ax1.set_xticks(list(xs))
    ax1.set_xticklabels(labels)
    ax1.set_xlabel("read size × reads in flight")
    ax1.set_ylabel("MiB/s (median)")
    ax1.set_title("O_DIRECT sequential reads of a 4 GiB table")
    top = max(max(c["fio_mib_s"]["median"], c["pg_dio_mib_s"]["median"]) for c in r["configs"])
    ax1.set_ylim(0, top * 1.2)
    ax1.legend(loc="upper center", ncol=2)
    hist = r.get("size_histogram", [])
    if hist:
        # bucket i holds reads of [8kB << i, 8kB << (i + 1)); the last is open
        names = []
        for i, h in enumerate(hist):
            lo = 8 << i
            if i == 0:
                names.append("8kB")
            elif i == len(hist) - 1:
                names.append(f"≥{lo // 1024}MB" if lo >= 1024 else f"≥{lo}kB")
            else:
                names.append(f"{lo}kB")
        ax2.bar(names, [h["count"] for h in hist], color=PG_DIO)
        ax2.set_title("pg_dio's read sizes over these runs")
        ax2.set_xlabel("read size (bucket from)")
        ax2.set_ylabel("reads")
        ax2.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "engine.png"), dpi=110)
    plt.close(fig)


# index-scan experiments and configurations (test/bench/indexscan.py)
IDX_EXPERIMENTS = {
    "random": "random: ~1% by a key in random heap order (half the pages all-visible)",
    "random_av": "random_av: the same on an all-visible copy",
    "index_only": "index_only: the same range, index-only (half the pages all-visible)",
    "correlated": "correlated: ~1% by a key in heap order",
}


def idx_label(config):
    """'sync/prefetch-nocombine-16' -> 'PrefetchIndexScan, no combining, eic 16 (sync)'."""
    method = "worker"
    if "/" in config:
        method, config = config.split("/", 1)
        method = "io_uring" if method == "uring" else method
    m = re.match(r"(.*?)(?:-(\d+))?$", config)
    base, eic = m.group(1), m.group(2)
    name = {
        "core-index": "core Index Scan",
        "core-ios": "core Index Only Scan",
        "core-bitmap": "core Bitmap Heap Scan",
        "prefetch": "PrefetchIndexScan",
        "prefetch-ios": "PrefetchIndexOnlyScan",
        "prefetch-direct": "PrefetchIndexScan, direct reads",
        "prefetch-nocombine": "PrefetchIndexScan, no combining",
    }.get(base, base)
    return name + (f", eic {eic}" if eic else "") + f" ({method})"


def indexscan_plot(path):
    with open(path) as f:
        r = json.load(f)
    groups = {}
    for k, runs in r["cold"].items():
        exp, config = k.split("/", 1)
        groups.setdefault(exp, []).append((config, [x["seconds"] for x in runs]))
    exps = [e for e in IDX_EXPERIMENTS if e in groups] + \
        [e for e in groups if e not in IDX_EXPERIMENTS]
    heights = [len(groups[e]) + 1.2 for e in exps]
    fig, axes = plt.subplots(len(exps), 1, figsize=(10, 0.28 * sum(heights) + 1.4),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    xmax = max(max(s) for e in exps for _, s in groups[e]) * 1.12
    for ax, exp in zip(axes[:, 0], exps):
        rows = groups[exp]
        med = [statistics.median(s) for _, s in rows]
        lo = [m - min(s) for (_, s), m in zip(rows, med)]
        hi = [max(s) - m for (_, s), m in zip(rows, med)]
        colors = [PG_DIO if c.split("/")[-1].startswith("prefetch") else CORE for c, _ in rows]
        ys = range(len(rows))
        ax.barh(ys, med, xerr=[lo, hi], color=colors, capsize=2)
        for y, m, h in zip(ys, med, hi):
            ax.text(m + h + xmax * 0.005, y, f"{m:.2f} s", va="center", fontsize=7)
        ax.set_yticks(list(ys))
        ax.set_yticklabels([idx_label(c) for c, _ in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, xmax)
        ax.set_title(IDX_EXPERIMENTS.get(exp, exp), fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
    axes[-1, 0].set_xlabel("seconds (median; bars: min–max; lower is better)")
    title = (f"Cold index range scans of ~1% of {r['rows']:,} rows "
             f"({r['table_bytes'] / 2**30:.1f} GiB table), {r['rounds']} rounds")
    build = build_text(path, r)
    fig.suptitle(title + (f"\n{build}" if build else "") +
                 "\ncore's scans blue, pg_dio's orange; io_method in brackets, "
                 "eic = effective_io_concurrency", fontsize=10)
    fig.tight_layout()
    fig.savefig(path[:-len(".json")] + ".png", dpi=110)
    plt.close(fig)


def tpch_plot(path):
    """Per query, core's time over pg_dio's (above 1: pg_dio faster), cold
    (median over the rounds; bars: the rounds' side-by-side pairs) and warm,
    on a log scale (twice as fast and half as fast equally far from 1); a
    query whose plan has no pg_dio node (the same plan on both sides) grey."""
    with open(path) as f:
        r = json.load(f)
    qs = [str(q) for q in r["queries"]]
    cold, lo, hi, warm = [], [], [], []
    for q in qs:
        runs = r["cold"][q]
        c = {x["round"]: x["seconds"] for x in runs["core"]}
        p = {x["round"]: x["seconds"] for x in runs["pg_dio"]}
        pairs = [c[k] / p[k] for k in c if k in p]
        m = statistics.median(c.values()) / statistics.median(p.values())
        cold.append(m)
        lo.append(max(m - min(pairs), 0))
        hi.append(max(max(pairs) - m, 0))
        w = r["warm"][q]
        warm.append(statistics.median(a / b for a, b in zip(w["core"], w["pg_dio"])))
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(qs) + 2), 4.6))
    xs = range(len(qs))
    none = [not r["plans"][q]["pg_dio_nodes"] for q in qs]
    # bars from 1 up (pg_dio faster) or down (slower)
    ax.bar([x - 0.2 for x in xs], [c - 1 for c in cold], 0.4, bottom=1, yerr=[lo, hi], capsize=2,
           color=["lightgray" if n else PG_DIO for n in none],
           label="cold (median; bars: the rounds' pairs; grey: no pg_dio node in the plan)")
    ax.bar([x + 0.2 for x in xs], [w - 1 for w in warm], 0.4, bottom=1, color=CORE,
           label="warm (median of the pairs)")
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log", base=2)
    span = max([2.0] + [c + h for c, h in zip(cold, hi)] + warm +
               [1 / max(c - l, 1e-3) for c, l in zip(cold, lo)] + [1 / w for w in warm])
    ax.set_ylim(1 / (span * 1.15), span * 1.15)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"Q{q}" for q in qs], fontsize=8)
    ax.set_ylabel("core time / pg_dio time (above 1: pg_dio faster)")
    pg = f"PostgreSQL {r['major']}, io_method={r['io_method']}"
    ax.set_title(f"TPC-H scale factor {r['sf']}, {r['rounds']} rounds: core's time over pg_dio's"
                 f"\n{pg}")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(path[:-len(".json")] + ".png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    out = sys.argv[1]
    jobs = [(engine_plot, out)]
    jobs += [(seqscan_plot, p) for p in sorted(glob.glob(os.path.join(out, "seqscan*.json")))]
    jobs += [(indexscan_plot, p) for p in sorted(glob.glob(os.path.join(out, "indexscan*.json")))]
    jobs += [(tpch_plot, p) for p in sorted(glob.glob(os.path.join(out, "tpch-*.json")))]
    for fn, arg in jobs:
        try:
            fn(arg)
        except FileNotFoundError as e:
            print(f"plot skipped: {e}")
    print("plots:", ", ".join(f for f in sorted(os.listdir(out)) if f.endswith(".png")))
