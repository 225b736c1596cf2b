#!/usr/bin/env python3
"""What PrefetchIndexScan's trailing scan costs: index scans over dead rows.

Core's index scan marks an index entry dead (kill_prior_tuple) when the heap
tuple it returned is dead to everyone; later scans skip the entry.
PrefetchIndexScan reads the index ahead of the heap, so it marks them through
a trailing scan: a second scan of the index with the same keys that follows
the consumer to the dead TIDs (src/scan_prefetch_exec.c).  This experiment
times the scan that finds the dead rows, and the one after it, in shared
buffers (the trailing scan's cost is CPU: it reads index pages the scan has
just read):

  clean    no dead rows: no trailing scan runs (the node's own overhead)
  dead     every other row deleted (committed, dead to everyone): the first
           scan marks their entries, core's through kill_prior_tuple and
           pg_dio's through the trailing scan
  after    the same scan again: both sides skip the marked entries

Each run gets a fresh copy of the table (bench_trail_src: 400,000 rows of
about 120 bytes, its heap in the order of the indexed column), made and
vacuumed, then the DELETE where the experiment needs it, then a checkpoint
and EXPLAIN (ANALYZE, TIMING OFF) of `count(*), sum(length(pad))` over a
range of 200,000 rows, forced to an index scan.  core: pg_dio's scans off;
pg_dio: the defaults.  Rounds alternate A B / B A; the rows the two sides
return are compared.  The "after" run shows whether the entries were marked:
a scan that still visits the dead rows' heap tuples is as slow as "dead".

Needs: the bench cluster (test/bench/run.sh), psql.
"""
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(__file__))
from engine_vs_fio import psql, psql_script, summary, table_tagged, write_report  # noqa: E402

ROWS = 400000
RANGE = "k BETWEEN 100001 AND 300000"
SETS = ("SET max_parallel_workers_per_gather = 0; SET enable_seqscan = off; "
        "SET enable_bitmapscan = off; SET enable_indexonlyscan = off; ")
CONFIGS = {
    "core": "SET pg_dio.enable_direct_scan = off; SET pg_dio.enable_index_prefetch = off; ",
    "pg_dio": "",
}
QUERY = f"SELECT count(*), sum(length(pad)) FROM bench_trail WHERE {RANGE}"


def ensure_source():
    if table_tagged("bench_trail_src", f"rows={ROWS}"):
        return
    psql_script(f"""
DROP TABLE IF EXISTS bench_trail_src;
CREATE TABLE bench_trail_src AS
  SELECT g AS k, repeat(md5(g::text), 3) AS pad FROM generate_series(1, {ROWS}) g;
COMMENT ON TABLE bench_trail_src IS 'rows={ROWS}';
""")


def fresh(dead):
    """A new bench_trail, vacuumed and analyzed; every other row deleted if
    'dead' (after the VACUUM: the deleted rows stay, dead to everyone)."""
    psql_script(f"""
DROP TABLE IF EXISTS bench_trail;
CREATE TABLE bench_trail WITH (autovacuum_enabled = off) AS SELECT * FROM bench_trail_src;
CREATE INDEX bench_trail_k ON bench_trail (k);
VACUUM (ANALYZE) bench_trail;
{"DELETE FROM bench_trail WHERE k % 2 = 0;" if dead else ""}
CHECKPOINT;
""")
    # warm: the table and index in shared buffers, without an index scan
    psql_script("SET enable_indexscan = off; SET enable_bitmapscan = off; "
                "SELECT count(*) FROM bench_trail \\g /dev/null\n"
                "SELECT sum(length(pad)) FROM bench_trail \\g /dev/null\n"
                "SELECT * FROM pg_prewarm('bench_trail_k') \\g /dev/null\n")


def timed(config):
    """(execution seconds, result) of QUERY with config's settings."""
    out = psql_script(f"{SETS}{CONFIGS[config]}"
                      f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {QUERY};\n"
                      f"{SETS}{CONFIGS[config]}{QUERY};\n")
    plan = json.loads("\n".join(out[:-1]))
    return plan[0]["Execution Time"] / 1000.0, out[-1]


def main(out_dir):
    mode = os.environ.get("PG_DIO_BENCH_MODE", "quick")
    rounds = int(os.environ.get("PG_DIO_BENCH_TRAIL_ROUNDS", "0")) or (3 if mode == "quick" else 5)
    psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    ensure_source()
    res = {"rounds": rounds, "rows": ROWS, "query": QUERY, "runs": {}}
    results = {}
    for rnd in range(rounds):
        order = list(CONFIGS) if rnd % 2 == 0 else list(reversed(CONFIGS))
        for cfg in order:
            fresh(False)
            secs, r = timed(cfg)
            res["runs"].setdefault("clean", {}).setdefault(cfg, []).append(secs)
            if results.setdefault("clean", r) != r:
                sys.exit(f"clean: {cfg} returned {r}, another run {results['clean']}")
            fresh(True)
            for exp in ("dead", "after"):
                secs, r = timed(cfg)
                res["runs"].setdefault(exp, {}).setdefault(cfg, []).append(secs)
                if results.setdefault(exp, r) != r:
                    sys.exit(f"{exp}: {cfg} returned {r}, another run {results[exp]}")
            print(f"  round {rnd + 1} {cfg}: " + ", ".join(
                f"{e} {res['runs'][e][cfg][-1] * 1000:.0f} ms" for e in ("clean", "dead", "after")),
                flush=True)
    with open(os.path.join(out_dir, "trailing.json"), "w") as f:
        json.dump(res, f, indent=2)

    lines = ["## The trailing scan: index scans over dead rows, in shared buffers", "",
             f"`{QUERY}` forced to an index scan over a fresh copy of a {ROWS}-row table "
             f"each run; median of {rounds} alternated rounds (min–max). clean: no dead rows; "
             "dead: every other row deleted, the first scan after the delete (core marks the "
             "entries through kill_prior_tuple, PrefetchIndexScan through its trailing scan); "
             "after: the same scan once more.", "",
             "| run | core ms | pg_dio ms | pg_dio / core |", "|---|---|---|---|"]
    for exp in ("clean", "dead", "after"):
        c = summary(res["runs"][exp]["core"])
        p = summary(res["runs"][exp]["pg_dio"])
        lines.append(f"| {exp} | {c['median'] * 1000:.0f} ({c['min'] * 1000:.0f}–{c['max'] * 1000:.0f}) | "
                     f"{p['median'] * 1000:.0f} ({p['min'] * 1000:.0f}–{p['max'] * 1000:.0f}) | "
                     f"{p['median'] / c['median']:.2f} |")
    d = res["runs"]
    extra = (statistics.median(d["dead"]["pg_dio"]) - statistics.median(d["dead"]["core"])) - \
        (statistics.median(d["clean"]["pg_dio"]) - statistics.median(d["clean"]["core"]))
    lines += ["", f"The trailing scan's cost, as pg_dio's excess over core in the dead run less "
              f"its excess in the clean run: {extra * 1000:.0f} ms for "
              f"{ROWS // 4} dead rows in the range "
              f"({extra * 1e9 / (ROWS // 4):.0f} ns a dead row)."]
    write_report(out_dir, "trailing.md", lines)


if __name__ == "__main__":
    main(sys.argv[1])
