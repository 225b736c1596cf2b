#!/usr/bin/env python3
"""The io_combine_limit experiment: read size against throughput.

Cold `SELECT count(*) FROM pgbench_accounts` (0 workers): core with
io_method=worker at io_combine_limit 32kB, 128kB, 256kB, 1MB (the server's
io_max_combine_limit raised to 1MB, or the session setting would be capped at
128kB) against DirectSeqScan with pg_dio.io_size at the same sizes, each
configuration in turn within a round.  The read sizes are read off
pg_stat_io (reads and read_bytes of relation bulk reads, summed over all
backend types, so I/O workers count; pg_dio reports its direct reads there
too) and, for pg_dio, its own size histogram -- no strace.

Needs: the bench cluster (test/bench/run.sh brings it up) with
pgbench_accounts built (seqscan.py or engine_vs_fio.py builds it), psql.
"""
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from engine_vs_fio import (bench_scale, ensure_table, psql, psql_script, settle, settle_text,  # noqa: E402
                           write_report)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "test", "cluster.sh")
# the bench cluster of the PostgreSQL major version under test (test/bench/run.sh)
BENCH_CLUSTER = os.environ.get("PG_DIO_BENCH_CLUSTER", "bench")
SIZES_FULL = ("32kB", "128kB", "256kB", "1MB")
SIZES_QUICK = ("32kB", "128kB", "1MB")     # quick mode stays within 10 minutes


def restart():
    psql_script("ALTER SYSTEM RESET ALL;\nALTER SYSTEM SET io_method = 'worker';\n"
                "ALTER SYSTEM SET io_max_combine_limit = '1MB';")
    subprocess.run([CLUSTER, "stop", BENCH_CLUSTER], check=True, capture_output=True)
    subprocess.run([CLUSTER, "start", BENCH_CLUSTER], check=True, capture_output=True)


def io_totals():
    """(reads, read_bytes) of relation bulk reads in pg_stat_io, all backends."""
    time.sleep(1.2)         # let I/O workers and the backend flush their stats
    row = psql("SELECT pg_stat_clear_snapshot(); SELECT coalesce(sum(reads), 0) || ' ' || "
               "coalesce(sum(read_bytes), 0) FROM pg_stat_io "
               "WHERE object = 'relation' AND context = 'bulkread'").splitlines()[-1]
    reads, nbytes = row.split()
    return int(reads), int(float(nbytes))


def make_cold():
    psql("SELECT * FROM pg_dio_evict('pgbench_accounts')")
    row = psql("SELECT shared_buffers || ' ' || coalesce(os_cache, -1) "
               "FROM pg_dio_residency('pgbench_accounts') WHERE fork = 'main'")
    if row.split() != ["0", "0"]:
        sys.exit(f"not cold: {row}")
    settle()


def run(session):
    sets = "".join(f"SET {k} = '{v}';\n" for k, v in session.items())
    r0 = io_totals()
    h0 = psql("SELECT reads_completed FROM pg_dio_cluster_stats()")
    out = psql_script(sets + "SET max_parallel_workers_per_gather = 0;\n"
                      "SET enable_indexonlyscan = off; SET enable_indexscan = off; "
                      "SET enable_bitmapscan = off;\n\\timing on\n"
                      "SELECT count(*) FROM pgbench_accounts;")
    secs = [float(x.split()[1]) for x in out if x.startswith("Time:")][-1] / 1000.0
    r1 = io_totals()
    h1 = psql("SELECT reads_completed FROM pg_dio_cluster_stats()")
    reads, nbytes = r1[0] - r0[0], r1[1] - r0[1]
    return {"seconds": secs, "reads": reads, "read_bytes": nbytes,
            "avg_read_kb": nbytes / reads / 1024 if reads else 0.0,
            "pg_dio_reads": int(h1) - int(h0)}


def main(out_dir, mode):
    rounds = 3 if mode == "quick" else 5
    restart()
    ensure_table(bench_scale(mode))
    table_bytes = int(psql("SELECT pg_relation_size('pgbench_accounts')"))
    gib = table_bytes / 2**30
    sizes = SIZES_QUICK if mode == "quick" else SIZES_FULL
    cfgs = {}
    for s in sizes:
        cfgs[f"core io_combine_limit={s}"] = {"pg_dio.enable_direct_scan": "off",
                                              "io_combine_limit": s}
        cfgs[f"pg_dio io_size={s}"] = {"pg_dio.enable_direct_scan": "on", "pg_dio.io_size": s}
    res = {"mode": mode, "rounds": rounds, "table_bytes": table_bytes, "runs": {}}
    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", flush=True)
        for name, sess in cfgs.items():
            make_cold()
            x = run(sess)
            x["gib_s"] = gib / x["seconds"]
            res["runs"].setdefault(name, []).append(x)
            print(f"  {name}: {x['seconds']:.2f} s, {x['gib_s']:.2f} GiB/s, {x['reads']} reads "
                  f"of {x['avg_read_kb']:.0f} kB on average", flush=True)
    hist = psql_script("SELECT lower_bound || '-' || upper_bound || ' ' || sum(count) "
                       "FROM pg_stat_aio_histogram WHERE kind = 'size' "
                       "GROUP BY lower_bound, upper_bound HAVING sum(count) > 0 ORDER BY lower_bound")
    res["pg_dio_size_histogram"] = hist
    with open(os.path.join(out_dir, "combine.json"), "w") as f:
        json.dump(res, f, indent=2)

    lines = [f"## io_combine_limit vs pg_dio.io_size (cold count(*), {gib:.2f} GiB, "
             f"0 workers, {rounds} rounds)", "",
             "Read sizes from pg_stat_io (relation bulk reads, all backend types). " +
             settle_text() + "GiB/s: median (min–max).", "",
             "| size | core GiB/s | core avg read | pg_dio GiB/s | pg_dio avg read | pg_dio/core |",
             "|---|---|---|---|---|---|"]
    for s in sizes:
        c = res["runs"][f"core io_combine_limit={s}"]
        d = res["runs"][f"pg_dio io_size={s}"]

        def mm(xs):
            g = [x["gib_s"] for x in xs]
            return f"{statistics.median(g):.2f} ({min(g):.2f}–{max(g):.2f})"

        cg = statistics.median(x["gib_s"] for x in c)
        dg = statistics.median(x["gib_s"] for x in d)
        lines.append(f"| {s} | {mm(c)} | {statistics.median(x['avg_read_kb'] for x in c):.0f} kB | "
                     f"{mm(d)} | {statistics.median(x['avg_read_kb'] for x in d):.0f} kB | "
                     f"{dg / cg:.2f} |")
    write_report(out_dir, "combine.md", lines)


if __name__ == "__main__":
    main(sys.argv[1], os.environ.get("PG_DIO_BENCH_MODE", "quick"))
