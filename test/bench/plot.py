#!/usr/bin/env python3
"""PNG plots of a bench run: throughput per configuration (sequential scans,
cold), pg_dio_read vs fio, and the read sizes pg_dio issued (its size
histogram).  Usage: plot.py RESULTS_DIR   (matplotlib from the project venv)"""
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def seqscan_plot(out):
    with open(os.path.join(out, "seqscan.json")) as f:
        r = json.load(f)
    keys = sorted({k.rsplit("/", 1)[0] for k in r["cold"]})
    configs = []
    for k in r["cold"]:
        c = k.rsplit("/", 1)[1]
        if c not in configs:
            configs.append(c)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(configs)
    for i, c in enumerate(configs):
        # a configuration not run for a query/workers pair (quick mode) is a gap
        nan = float("nan")
        runs = [[x["gib_s"] for x in r["cold"].get(f"{k}/{c}", [])] for k in keys]
        med = [statistics.median(g) if g else nan for g in runs]
        lo = [m - min(g) if g else 0 for g, m in zip(runs, med)]
        hi = [max(g) - m if g else 0 for g, m in zip(runs, med)]
        ax.bar([j + i * width for j in range(len(keys))], med, width, yerr=[lo, hi],
               label=c, capsize=2)
    fio = statistics.median(r["fio"])
    ax.axhline(fio, color="black", linestyle="--", linewidth=1, label=f"fio O_DIRECT ({fio:.2f})")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
    ax.set_xticklabels([k.replace("/", ", workers=") for k in keys])
    ax.set_ylabel("GiB/s (median, min–max)")
    ax.set_title(f"Cold sequential scans, {r['table_bytes'] / 2**30:.1f} GiB pgbench_accounts")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "seqscan.png"), dpi=110)


def engine_plot(out):
    with open(os.path.join(out, "engine_vs_fio.json")) as f:
        r = json.load(f)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    labels = [f"{c['io_size_kb']}kB×{c['depth']}" for c in r["configs"]]
    xs = range(len(labels))
    ax1.bar([x - 0.2 for x in xs], [c["fio_mib_s"]["median"] for c in r["configs"]], 0.4, label="fio")
    ax1.bar([x + 0.2 for x in xs], [c["pg_dio_mib_s"]["median"] for c in r["configs"]], 0.4,
            label="pg_dio_read")
    ax1.set_xticks(list(xs))
    ax1.set_xticklabels(labels)
    ax1.set_ylabel("MiB/s (median)")
    ax1.set_title("O_DIRECT sequential reads")
    ax1.legend()
    hist = r.get("size_histogram", [])
    if hist:
        ax2.bar([h["label"] for h in hist], [h["count"] for h in hist])
        ax2.set_title("pg_dio read sizes (size histogram)")
        ax2.set_ylabel("reads")
        ax2.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "engine.png"), dpi=110)


def indexscan_plot(out):
    with open(os.path.join(out, "indexscan.json")) as f:
        r = json.load(f)
    keys = list(r["cold"])
    med = [statistics.median(x["seconds"] for x in r["cold"][k]) for k in keys]
    lo = [m - min(x["seconds"] for x in r["cold"][k]) for k, m in zip(keys, med)]
    hi = [max(x["seconds"] for x in r["cold"][k]) - m for k, m in zip(keys, med)]
    colors = ["tab:orange" if "prefetch" in k else "tab:blue" for k in keys]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.barh(range(len(keys)), med, xerr=[lo, hi], color=colors, capsize=2)
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels(keys, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds (median, min–max; lower is better)")
    ax.set_title(f"Cold index range scans (~1% of {r['rows']} rows, "
                 f"{r['table_bytes'] / 2**30:.1f} GiB): core (blue) vs PrefetchIndexScan (orange)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "indexscan.png"), dpi=110)


if __name__ == "__main__":
    out = sys.argv[1]
    for fn in (engine_plot, seqscan_plot, indexscan_plot):
        try:
            fn(out)
        except FileNotFoundError as e:
            print(f"plot skipped: {e}")
    print("plots:", ", ".join(f for f in sorted(os.listdir(out)) if f.endswith(".png")))
