#!/usr/bin/env python3
"""Sequential scans: DirectSeqScan vs core, cold, OS-cached and warm.

Reproduces the Cybertec / AIO v2 experiments in small: `SELECT count(*)` and
`sum(abalance)` over pgbench_accounts, each configuration run in turn, round
after round (A B C ... A B C ...), so that drift of the (virtual) disk hits
every configuration alike:

  core-sync      io_method=sync
  core-worker    io_method=worker (the default)
  core-worker-1M io_method=worker, io_combine_limit=1MB
  core-dio-1M    io_method=worker, debug_io_direct=data, io_combine_limit=1MB
                 (a debug setting no production server runs: core's ceiling)
  pg_dio         DirectSeqScan (io_method=worker for what it reads buffered)

with 0 and 2 parallel workers.  Cold runs restart the server and evict
the table from shared buffers and the OS page cache with pg_dio_evict, and are
verified cold with pg_dio_residency before they start.  fio reads the table's segment files with O_DIRECT in every round
for the device's limit.  CPU is system-wide CPU time (/proc/stat) during the
query, so I/O workers and parallel workers count.

Needs: the bench cluster (test/bench/run.sh brings it up), psql, fio.
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from engine_vs_fio import (psql, psql_script, run_fio, segment_files,  # noqa: E402
                          summary, write_report)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "test", "cluster.sh")

# io_combine_limit is silently capped by io_max_combine_limit (server start,
# default 128kB): every configuration raises the cap to 1MB so that the
# session's io_combine_limit is what core really uses.
MAX_COMBINE = {"io_max_combine_limit": "1MB"}
# (in this order, configurations with the same server settings run one after
# the other without a restart)
CONFIGS = {
    "core-sync": ({**MAX_COMBINE, "io_method": "sync"}, {"pg_dio.enable_direct_scan": "off"}),
    "core-dio-1M": ({**MAX_COMBINE, "io_method": "worker", "debug_io_direct": "data"},
                    {"pg_dio.enable_direct_scan": "off", "io_combine_limit": "1MB"}),
    "core-worker": ({**MAX_COMBINE, "io_method": "worker"}, {"pg_dio.enable_direct_scan": "off"}),
    "core-worker-1M": ({**MAX_COMBINE, "io_method": "worker"},
                       {"pg_dio.enable_direct_scan": "off", "io_combine_limit": "1MB"}),
    "pg_dio": ({**MAX_COMBINE, "io_method": "worker"}, {"pg_dio.enable_direct_scan": "on"}),
}
CORE_BUFFERED = ("core-sync", "core-worker", "core-worker-1M")
# parallel workers per query: 0, 1 and 2; quick mode (10 minutes) runs sum
# with 0 and 2 only


def configs_for(w):
    """Quick mode measures io_method=sync serially only (it is the slowest
    everywhere and each switch to it costs a restart)."""
    quick = os.environ.get("PG_DIO_BENCH_MODE", "quick") == "quick"
    return [c for c in CONFIGS if not (quick and w > 0 and c == "core-sync")]


def workers_for(qname):
    if qname == "sum" and os.environ.get("PG_DIO_BENCH_MODE", "quick") == "quick":
        return (0, 2)
    return (0, 1, 2)


_current_server = None


def restart(server_settings, force=False):
    """Set the server-level settings (ALTER SYSTEM) and restart the cluster,
    unless it already runs with them (every cold run evicts the table from
    shared buffers and the OS cache anyway)."""
    global _current_server
    if not force and server_settings == _current_server:
        return
    _current_server = dict(server_settings)
    sql = ["ALTER SYSTEM RESET ALL;"]
    sql += [f"ALTER SYSTEM SET {k} = '{v}';" for k, v in sorted(server_settings.items())]
    psql_script("\n".join(sql))
    subprocess.run([CLUSTER, "stop", "bench"], check=True, capture_output=True)
    subprocess.run([CLUSTER, "start", "bench"], check=True, capture_output=True)


def make_cold():
    """Evict the table from shared buffers and the OS page cache with
    pg_dio_evict (no root needed), then verify with pg_dio_residency."""
    psql("SELECT * FROM pg_dio_evict('pgbench_accounts')")
    row = psql("SELECT shared_buffers || ' ' || coalesce(os_cache, -1) "
               "FROM pg_dio_residency('pgbench_accounts') WHERE fork = 'main'")
    shared, os_cached = (int(x) for x in row.split())
    if shared != 0 or os_cached != 0:
        sys.exit(f"not cold: {shared} blocks in shared buffers, {os_cached} in the OS cache")
    return True


def cpu_jiffies():
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    vals = [int(x) for x in fields]
    idle = vals[3] + vals[4]
    return sum(vals[:8]) - idle


def run_query(session, query, workers):
    """Run the query once; return (seconds, cpu_seconds, explain counters)."""
    sets = "".join(f"SET {k} = '{v}';\n" for k, v in session.items())
    sql = (f"{sets}SET max_parallel_workers_per_gather = {workers};\n"
           "SET enable_indexonlyscan = off; SET enable_indexscan = off; SET enable_bitmapscan = off;\n"
           "\\timing on\n"
           f"{query};\n")
    hz = os.sysconf("SC_CLK_TCK")
    c0 = cpu_jiffies()
    out = subprocess.run(["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1"], input=sql,
                         capture_output=True, text=True, check=True).stdout
    c1 = cpu_jiffies()
    ms = [float(line.split()[1]) for line in out.splitlines() if line.startswith("Time:")][-1]
    return ms / 1000.0, (c1 - c0) / hz


def plan_of(session, query, workers):
    sets = "".join(f"SET {k} = '{v}';\n" for k, v in session.items())
    sql = (f"{sets}SET max_parallel_workers_per_gather = {workers};\n"
           "SET enable_indexonlyscan = off; SET enable_indexscan = off; SET enable_bitmapscan = off;\n"
           f"EXPLAIN (COSTS OFF) {query};\n")
    return subprocess.run(["psql", "-X", "-At", "-q"], input=sql, capture_output=True,
                          text=True, check=True).stdout


def main(out_dir, scale, rounds, warm_scale):
    results = {"scale": scale, "rounds": rounds, "cold": {}, "os_cached": {}, "warm": {},
               "fio": [], "machine": {"cpus": os.cpu_count()}}
    restart(CONFIGS["core-worker"][0])
    from engine_vs_fio import ensure_table
    ensure_table(scale)
    files, nblocks = segment_files(os.environ["PG_DIO_DATA"])
    table_bytes = nblocks * 8192
    results["table_bytes"] = table_bytes
    gib = table_bytes / 2**30
    queries = {"count": "SELECT count(*) FROM pgbench_accounts",
               "sum": "SELECT sum(abalance) FROM pgbench_accounts"}
    cold_ok = True

    # the plan must be what we think it is
    for name, (srv, sess) in CONFIGS.items():
        if name != "pg_dio":
            continue
        for w in workers_for("count"):
            plan = plan_of(sess, queries["count"], w)
            if "DirectSeqScan" not in plan:
                sys.exit(f"pg_dio plan without DirectSeqScan:\n{plan}")

    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", flush=True)
        results["fio"].append(run_fio(files, 256, 32)["mib_s"] / 1024.0)
        for qname, q in queries.items():
            for w in workers_for(qname):
                for name in configs_for(w):
                    srv, sess = CONFIGS[name]
                    restart(srv)
                    cold_ok &= make_cold()
                    secs, cpu = run_query(sess, q, w)
                    key = f"{qname}/{w}/{name}"
                    results["cold"].setdefault(key, []).append(
                        {"seconds": secs, "gib_s": gib / secs, "cpu_s_per_gib": cpu / gib})
                    print(f"  cold {key}: {secs:.2f} s, {gib / secs:.2f} GiB/s, "
                          f"{cpu / gib:.2f} CPU s/GiB", flush=True)
    results["cold_verified"] = cold_ok

    # OS-cached: right after a priming run, shared buffers emptied by a restart
    for r in range(rounds):
        for name in ("core-worker", "pg_dio"):
            srv, sess = CONFIGS[name]
            restart(srv)
            run_query(CONFIGS["core-worker"][1], queries["count"], 0)	# prime the OS cache
            restart(srv, force=True)	# empty shared buffers
            secs, cpu = run_query(sess, queries["count"], 0)
            results["os_cached"].setdefault(name, []).append({"seconds": secs, "gib_s": gib / secs})
            print(f"  OS-cached {name}: {secs:.2f} s", flush=True)

    # warm: a table that fits in shared buffers, all resident
    restart({**CONFIGS["core-worker"][0], "shared_buffers": "2GB"})
    psql("CREATE TABLE IF NOT EXISTS warm_accounts AS SELECT * FROM pgbench_accounts "
         f"WHERE aid <= {warm_scale * 100000}")
    psql("VACUUM warm_accounts")
    psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    psql("SELECT pg_prewarm('warm_accounts')")
    wq = "SELECT count(*) FROM warm_accounts"
    for r in range(rounds):
        for name in ("core-worker", "pg_dio"):
            sess = dict(CONFIGS[name][1])
            sess["pg_dio.direct_scan_threshold"] = "0"
            secs, cpu = run_query(sess, wq, 0)
            results["warm"].setdefault(name, []).append({"seconds": secs})
            print(f"  warm {name}: {secs:.3f} s", flush=True)
    restart(CONFIGS["core-worker"][0])

    with open(os.path.join(out_dir, "seqscan.json"), "w") as f:
        json.dump(results, f, indent=2)

    def mm(xs, fmt="{:.2f}"):
        s = summary(xs)
        return (fmt + " (" + fmt + "–" + fmt + ")").format(s["median"], s["min"], s["max"])

    fio = summary(results["fio"])
    lines = [f"## Sequential scans: DirectSeqScan vs core ({gib:.2f} GiB pgbench_accounts, "
             f"scale {scale}, {rounds} rounds)", "",
             "Cold = table evicted from shared buffers and the OS "
             "cache (pg_dio_evict) and verified cold (pg_dio_residency) before every run; the server "
             "is restarted when a configuration changes its server settings. "
             f"fio O_DIRECT sequential 256kB×32 in the same rounds: {fio['median']:.2f} "
             f"({fio['min']:.2f}–{fio['max']:.2f}) GiB/s. Median (min–max).", "",
             "| query | workers | configuration | GiB/s | CPU s/GiB | vs best core buffered | vs fio |",
             "|---|---|---|---|---|---|---|"]
    for qname in queries:
        for w in workers_for(qname):
            best = max(statistics.median([x["gib_s"] for x in results["cold"][f"{qname}/{w}/{c}"]])
                       for c in CORE_BUFFERED if c in configs_for(w))
            for name in configs_for(w):
                runs = results["cold"][f"{qname}/{w}/{name}"]
                g = [x["gib_s"] for x in runs]
                lines.append(f"| {qname} | {w} | {name} | {mm(g)} | "
                             f"{mm([x['cpu_s_per_gib'] for x in runs])} | "
                             f"{statistics.median(g) / best:.2f} | "
                             f"{statistics.median(g) / fio['median']:.2f} |")
    lines += ["", "| OS-cached / warm (count, 0 workers) | core-worker s | pg_dio s | pg_dio/core |",
              "|---|---|---|---|"]
    for kind in ("os_cached", "warm"):
        c = statistics.median([x["seconds"] for x in results[kind]["core-worker"]])
        d = statistics.median([x["seconds"] for x in results[kind]["pg_dio"]])
        lines.append(f"| {kind} | {c:.3f} | {d:.3f} | {d / c:.2f} |")
    write_report(out_dir, "seqscan.md", lines)


if __name__ == "__main__":
    mode = os.environ.get("PG_DIO_BENCH_MODE", "quick")
    scale = 320 if mode == "quick" else 640
    main(sys.argv[1], scale, 3 if mode == "quick" else 5, 50)
