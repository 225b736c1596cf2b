#!/usr/bin/env python3
"""Nested-loop probes, cold: ProbePrefetch against core.

20,000 outer rows (bench_probe_o, random values) drive a nested loop into
bench_idx, indexscan.py's table of >= 2 GiB, through an index whose order is
unrelated to the outer's, so every probe reads a random heap block (and, in
an index of that size, usually a random leaf):

  probe1   one row a probe: bench_idx.id = o.id (with pg_dio a
           PrefetchIndexScan inner that may take ProbePrefetch's direct
           chunks, since id follows the heap's order)
  probe8   about eight rows a probe: bench_idx.r BETWEEN o.r AND o.r + 7
           (core's Index Scan inner below the ProbePrefetch)

core: pg_dio's scans and ProbePrefetch off; pg_dio: the defaults.  Hash and
merge joins, bitmap scans, Memoize and parallel workers off, so that both run
the same nested loop.  Each round runs fio's random 8 kB O_DIRECT reads over
the table's files at depth 1 and 64 (the device's speed and its gain from
queue depth change minute to minute), then, for each io_method
(PG_DIO_BENCH_PROBE_IO, default "worker io_uring" where the server has
io_uring, else worker), each experiment's two configurations, alternating
A B / B A across rounds, each run cold (indexscan.make_cold, the outer table
evicted too).  The results are compared.  Every run is EXPLAIN (ANALYZE,
TIMING OFF, FORMAT JSON): execution time.

Needs: the bench cluster (test/bench/run.sh), psql, fio.
"""
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(__file__))
import indexscan  # noqa: E402
from engine_vs_fio import (memory_text, pin_server, placement_text, psql,  # noqa: E402
                           psql_script, run_fio_random, settle, settle_text, summary,
                           table_tagged, write_report)

OUTER_ROWS = 20000
FIO_DEPTHS = (1, 64)
JOIN_SETS = ("SET max_parallel_workers_per_gather = 0; SET enable_hashjoin = off; "
             "SET enable_mergejoin = off; SET enable_bitmapscan = off; SET enable_memoize = off; ")
CONFIGS = {
    "core": "SET pg_dio.enable_direct_scan = off; SET pg_dio.enable_index_prefetch = off; "
            "SET pg_dio.enable_probe_prefetch = off; ",
    "pg_dio": "",
}


def ensure_outer(nrows):
    if table_tagged("bench_probe_o", f"rows={OUTER_ROWS} of {nrows}"):
        return
    psql_script(f"""
DROP TABLE IF EXISTS bench_probe_o;
SELECT setseed(0.17);
CREATE TABLE bench_probe_o AS
  SELECT (random() * ({nrows} - 1))::bigint + 1 AS id, (random() * {nrows})::int AS r
    FROM generate_series(1, {OUTER_ROWS});
VACUUM (ANALYZE) bench_probe_o;
COMMENT ON TABLE bench_probe_o IS 'rows={OUTER_ROWS} of {nrows}';
""")


def run(config, query):
    """(seconds, result, the pg_dio node names in the plan) of one cold run."""
    indexscan.make_cold()
    psql_script("SELECT * FROM pg_dio_evict('bench_probe_o') \\g /dev/null\n")
    settle()
    out = psql_script(f"{JOIN_SETS}{CONFIGS[config]}"
                      f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {query};\n"
                      f"{JOIN_SETS}{CONFIGS[config]}{query};\n")
    plan = json.loads("\n".join(out[:-1]))
    nodes = sorted({n.get("Custom Plan Provider") for n in walk_plans(plan[0]["Plan"])} - {None})
    return plan[0]["Execution Time"] / 1000.0, out[-1], nodes


def walk_plans(node):
    yield node
    for child in node.get("Plans", []):
        yield from walk_plans(child)


def main(out_dir):
    mode = os.environ.get("PG_DIO_BENCH_MODE", "quick")
    rounds = int(os.environ.get("PG_DIO_BENCH_PROBE_ROUNDS", "0")) or (3 if mode == "quick" else 5)
    nrows = indexscan.index_rows(mode)
    uring = psql("SELECT 'io_uring' = ANY (enumvals) FROM pg_settings WHERE name = 'io_method'") == "t"
    ios = os.environ.get("PG_DIO_BENCH_PROBE_IO", "worker io_uring" if uring else "worker").split()
    for io in ios:
        if io not in ("worker", "io_uring", "sync"):
            sys.exit(f"PG_DIO_BENCH_PROBE_IO: unknown io_method {io}")
    indexscan.restart(ios[0])
    indexscan.ensure_tables(nrows)
    ensure_outer(nrows)
    files = indexscan.table_files()
    queries = {
        "probe1": "SELECT sum(length(b.filler)) FROM bench_probe_o o JOIN bench_idx b ON b.id = o.id",
        "probe8": "SELECT sum(length(b.filler)) FROM bench_probe_o o "
                  "JOIN bench_idx b ON b.r BETWEEN o.r AND o.r + 7",
    }
    # cold[io_method][experiment][configuration]: seconds of each round
    res = {"mode": mode, "rounds": rounds, "rows": nrows, "outer_rows": OUTER_ROWS,
           "table_bytes": int(psql("SELECT pg_relation_size('bench_idx')")),
           "io_methods": ios, "queries": queries, "fio_iops": {d: [] for d in FIO_DEPTHS},
           "cold": {}, "nodes": {}}
    results = {}
    pin_server(indexscan.CPU)
    for rnd in range(rounds):
        for d in FIO_DEPTHS:
            settle()
            res["fio_iops"][d].append(run_fio_random(files, d, cpu=indexscan.CPU))
        for io in ios:
            indexscan.restart(io)
            for exp, q in queries.items():
                order = list(CONFIGS) if rnd % 2 == 0 else list(reversed(CONFIGS))
                for cfg in order:
                    secs, result, nodes = run(cfg, q)
                    res["cold"].setdefault(io, {}).setdefault(exp, {}).setdefault(cfg, []).append(secs)
                    res["nodes"].setdefault(exp, {})[cfg] = nodes
                    if results.setdefault(exp, result) != result:
                        sys.exit(f"{exp}: {cfg} with {io} returned {result}, another run {results[exp]}")
                    print(f"  round {rnd + 1} {io} {exp} {cfg}: {secs:.2f} s {nodes}", flush=True)
    pin_server(None)
    with open(os.path.join(out_dir, "probe.json"), "w") as f:
        json.dump(res, f, indent=2)

    fio = {d: statistics.median(v) for d, v in res["fio_iops"].items()}
    fio_gain = fio[FIO_DEPTHS[-1]] / fio[1]
    lines = ["## Nested-loop probes (ProbePrefetch), cold", "",
             f"{OUTER_ROWS} outer rows probing bench_idx ({res['table_bytes'] / 2**30:.1f} GiB, "
             f"{nrows} rows) through an index unrelated to the outer's order; median of "
             f"{rounds} alternated rounds, each run cold; io_method {', '.join(ios)}. "
             f"{placement_text(indexscan.CPU)}. {memory_text()} {settle_text()}", "",
             "| probe | io_method | core s | pg_dio s | core / pg_dio | of fio's gain | pg_dio's nodes |",
             "|---|---|---|---|---|---|---|"]
    for exp in queries:
        for io in ios:
            c = summary(res["cold"][io][exp]["core"])
            p = summary(res["cold"][io][exp]["pg_dio"])
            ratio = c['median'] / p['median']
            lines.append(f"| {exp} | {io} | {c['median']:.2f} ({c['min']:.2f}–{c['max']:.2f}) | "
                         f"{p['median']:.2f} ({p['min']:.2f}–{p['max']:.2f}) | "
                         f"{ratio:.2f} | {ratio / fio_gain:.2f} | "
                         f"{', '.join(res['nodes'][exp]['pg_dio'])} |")
    lines += ["", "fio, random 8 kB reads over the table's files (median IOPS): " +
              ", ".join(f"depth {d} {fio[d]:.0f}" for d in FIO_DEPTHS) +
              f"; depth {FIO_DEPTHS[-1]} gains {fio_gain:.2f}x over depth 1 (the column "
              "\"of fio's gain\": core / pg_dio divided by it).", "",
              "Queries: " + "; ".join(f"{k}: `{v}`" for k, v in queries.items()) + "."]
    write_report(out_dir, "probe.md", lines)


if __name__ == "__main__":
    main(sys.argv[1])
