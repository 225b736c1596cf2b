#!/usr/bin/env python3
"""Sequential scans: DirectSeqScan vs core, cold, OS-cached and warm.

Reproduces the Cybertec / AIO v2 experiments in small: `SELECT count(*)` and
`sum(abalance)` over pgbench_accounts, each configuration run in turn, round
after round (A B C ... C B A ...), so that drift of the (virtual) disk hits
every configuration alike:

  core-sync      io_method=sync
  core-worker    io_method=worker (the default)
  core-worker-1M io_method=worker, io_combine_limit=1MB
  core-dio-1M    io_method=worker, debug_io_direct=data, io_combine_limit=1MB
                 (a debug setting no production server runs: core's ceiling)
  pg_dio         DirectSeqScan (io_method=worker for what it reads buffered)

with 0 and 2 parallel workers.  Cold runs restart the server and evict
the table from shared buffers and the OS page cache with pg_dio_evict, and are
verified cold with pg_dio_residency before they start.  fio reads the
table's segment files with O_DIRECT at the start of every round and right after
each query and worker count's runs, for the device's limit; "vs fio" compares a
run with the fio run that followed its group in the same round, since the disk
swings minute to minute.  CPU is system-wide CPU time (/proc/stat) during the
query, so I/O workers and parallel workers count.  Serial runs and the fio
runs beside them are pinned to the CPU that takes the disk's interrupts
(engine_vs_fio.reader_cpu; PG_DIO_BENCH_CPU=N or none): a reader on the other
CPU is woken cross-CPU on this VM and ran ~30% slower.  Parallel runs are not
(their workers would share the CPU).

OS-cached (the table in the OS page cache, evicted from shared buffers only,
pg_dio_evict(rel, false), before every query) and warm (a 5M-row table in
shared_buffers = 2GB): DirectSeqScan on and off alternated in one psql session
(A B A B ..., PAIRS pairs after one unmeasured pair), count and sum, 0 and 2
workers; the report gives the median of the pairs' ratios.  The OS-cached pairs
run right after a priming read: the VM reclaims an idle page cache in ~30 s.

On a hot standby (test/bench/run.sh with PG_DIO_BENCH_STANDBY=1, which
sets PG_DIO_BENCH_PRIMARY): cold count(*) only, every connection, restart,
eviction and fio run on the standby, the table built on the primary before
(test/bench/prepare.py); seqscan-standby.md and .json.

Needs: the bench cluster (test/bench/run.sh brings it up), psql, fio.
"""
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from engine_vs_fio import (PRIMARY, REPORT_SUFFIX, bench_scale, memory_text,  # noqa: E402
                           pin_server, psql, psql_script, replay_lsn, reset_all_sql, settle,
                           settle_text, reader_cpu, run_fio, segment_files, server_started,
                           standby_text, summary, write_report)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "test", "cluster.sh")
# the bench cluster of the PostgreSQL major version under test (test/bench/run.sh)
BENCH_CLUSTER = os.environ.get("PG_DIO_BENCH_CLUSTER", "bench")
CPU = reader_cpu()

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
# io_method=io_uring, on a server built with liburing (added in main)
URING_CONFIGS = {
    "uring/core": ({**MAX_COMBINE, "io_method": "io_uring"}, {"pg_dio.enable_direct_scan": "off"}),
    "uring/core-1M": ({**MAX_COMBINE, "io_method": "io_uring"},
                      {"pg_dio.enable_direct_scan": "off", "io_combine_limit": "1MB"}),
    "uring/core-dio-1M": ({**MAX_COMBINE, "io_method": "io_uring", "debug_io_direct": "data"},
                          {"pg_dio.enable_direct_scan": "off", "io_combine_limit": "1MB"}),
    "uring/pg_dio": ({**MAX_COMBINE, "io_method": "io_uring"}, {"pg_dio.enable_direct_scan": "on"}),
}
CORE_URING = ("uring/core", "uring/core-1M", "uring/core-dio-1M")
# PG_DIO_BENCH_CONFIGS: a regular expression; only the configurations it
# matches run (e.g. '^uring/')
ONLY_CONFIGS = re.compile(os.environ.get("PG_DIO_BENCH_CONFIGS", ""))
# OS-cached and warm: alternated pairs per query and worker count
PAIRS = 10
# parallel workers per query: 0, 1 and 2; quick mode (10 minutes) runs sum
# with 0 and 2 only


def configs_for(w):
    """Quick mode measures io_method=sync serially only (it is the slowest
    everywhere and each switch to it costs a restart)."""
    quick = os.environ.get("PG_DIO_BENCH_MODE", "quick") == "quick"
    return [c for c in CONFIGS if not (quick and w > 0 and c == "core-sync")
            and ONLY_CONFIGS.search(c)]


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
    sql = [reset_all_sql()]
    sql += [f"ALTER SYSTEM SET {k} = '{v}';" for k, v in sorted(server_settings.items())]
    psql_script("\n".join(sql))
    subprocess.run([CLUSTER, "stop", BENCH_CLUSTER], check=True, capture_output=True)
    subprocess.run([CLUSTER, "start", BENCH_CLUSTER], check=True, capture_output=True)
    server_started()


def make_cold():
    """Evict the table from shared buffers and the OS page cache with
    pg_dio_evict (no root needed), then verify with pg_dio_residency."""
    psql("SELECT * FROM pg_dio_evict('pgbench_accounts')")
    row = psql("SELECT shared_buffers || ' ' || coalesce(os_cache, -1) "
               "FROM pg_dio_residency('pgbench_accounts') WHERE fork = 'main'")
    shared, os_cached = (int(x) for x in row.split())
    if shared != 0 or os_cached != 0:
        sys.exit(f"not cold: {shared} blocks in shared buffers, {os_cached} in the OS cache")
    settle()
    return True


def direct_blocks():
    """Blocks pg_dio read with O_DIRECT so far, all processes of the server."""
    return int(psql("SELECT blocks_direct FROM pg_dio_cluster_stats()"))


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


def alternated_pairs(query, workers, pairs, before="", table="pgbench_accounts"):
    """DirectSeqScan on and off alternated (A B A B ...) in one psql session,
    after one unmeasured pair: [(on_seconds, off_seconds)] per pair.  On a
    noisy machine only such same-run pairs compare; 'before' runs untimed
    ahead of every query (e.g. evicting the table from shared buffers)."""
    lines = [f"SET max_parallel_workers_per_gather = {workers};",
             "SET enable_indexonlyscan = off; SET enable_indexscan = off; SET enable_bitmapscan = off;",
             "SET pg_dio.direct_scan_threshold = 0;"]
    for i in range(pairs + 1):
        for on in ("on", "off"):
            lines.append(f"SET pg_dio.enable_direct_scan = {on};")
            if before:
                lines.append(before)
            if i == 0:
                lines.append(f"{query};")
            else:
                lines += ["\\timing on", "\\echo MARK", f"{query};", "\\timing off"]
    out = subprocess.run(["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout
    times, mark = [], False
    for line in out.splitlines():
        if line == "MARK":
            mark = True
        elif mark and line.startswith("Time:"):
            times.append(float(line.split()[1]) / 1000.0)
            mark = False
    if len(times) != 2 * pairs:
        sys.exit(f"alternated_pairs: {len(times)} timings for {pairs} pairs of {query}")
    return list(zip(times[0::2], times[1::2]))


def plan_of(session, query, workers):
    sets = "".join(f"SET {k} = '{v}';\n" for k, v in session.items())
    sql = (f"{sets}SET max_parallel_workers_per_gather = {workers};\n"
           "SET enable_indexonlyscan = off; SET enable_indexscan = off; SET enable_bitmapscan = off;\n"
           f"EXPLAIN (COSTS OFF) {query};\n")
    return subprocess.run(["psql", "-X", "-At", "-q"], input=sql, capture_output=True,
                          text=True, check=True).stdout


def main(out_dir, scale, rounds, warm_scale):
    results = {"scale": scale, "rounds": rounds, "cold": {}, "os_cached": {}, "warm": {},
               "fio": [], "fio_paired": {}, "machine": {"cpus": os.cpu_count()}}
    restart(CONFIGS["core-worker"][0])
    lsn0 = replay_lsn() if PRIMARY else None
    if psql("SELECT 'io_uring' = ANY (enumvals) FROM pg_settings WHERE name = 'io_method'") == "t":
        CONFIGS.update(URING_CONFIGS)
    from engine_vs_fio import ensure_table
    ensure_table(scale)
    files, nblocks = segment_files(os.environ["PG_DIO_DATA"])
    table_bytes = nblocks * 8192
    results["table_bytes"] = table_bytes
    gib = table_bytes / 2**30
    queries = {"count": "SELECT count(*) FROM pgbench_accounts",
               "sum": "SELECT sum(abalance) FROM pgbench_accounts"}
    if PRIMARY:
        # on a hot standby: cold count(*) only
        del queries["sum"]
    cold_ok = True

    # the plan must be what we think it is
    for name, (srv, sess) in CONFIGS.items():
        if name != "pg_dio" or not ONLY_CONFIGS.search(name):
            continue
        for w in workers_for("count"):
            plan = plan_of(sess, queries["count"], w)
            if "DirectSeqScan" not in plan:
                sys.exit(f"pg_dio plan without DirectSeqScan:\n{plan}")

    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", flush=True)
        settle()
        results["fio"].append(run_fio(files, 256, 32)["mib_s"] / 1024.0)
        for qname, q in queries.items():
            for w in workers_for(qname):
                # serial runs and their fio on the CPU that takes the disk's
                # interrupts; parallel ones where the scheduler puts them
                cpu = CPU if w == 0 else None
                pin_server(cpu)
                # A B C ... in even rounds, ... C B A in odd ones: no
                # configuration always runs right after the same other one
                # (the one before leaves the host and the VM in its state)
                names = configs_for(w)
                for name in (names if r % 2 == 0 else names[::-1]):
                    srv, sess = CONFIGS[name]
                    restart(srv)
                    cold_ok &= make_cold()
                    d0 = direct_blocks() if PRIMARY else 0
                    secs, cpu_s = run_query(sess, q, w)
                    key = f"{qname}/{w}/{name}"
                    x = {"seconds": secs, "gib_s": gib / secs, "cpu_s_per_gib": cpu_s / gib}
                    if PRIMARY:
                        # on a standby: how much of the table was read directly
                        x["direct_share"] = (direct_blocks() - d0) / nblocks
                    results["cold"].setdefault(key, []).append(x)
                    print(f"  cold {key}: {secs:.2f} s, {gib / secs:.2f} GiB/s, "
                          f"{cpu_s / gib:.2f} CPU s/GiB"
                          + (f", {x['direct_share']:.0%} of the blocks direct" if PRIMARY else ""),
                          flush=True)
                # the device right after this group's runs: the disk swings
                # minute to minute, so "vs fio" compares within a group
                settle()
                fio_now = run_fio(files, 256, 32, cpu=cpu)["mib_s"] / 1024.0
                results["fio_paired"].setdefault(f"{qname}/{w}", []).append(fio_now)
                print(f"  fio {qname}/{w}: {fio_now:.2f} GiB/s", flush=True)
    results["cold_verified"] = cold_ok
    pin_server(None)

    # OS-cached (in the OS page cache, not in shared buffers: evicted from
    # shared buffers only before every query) and warm (all in shared
    # buffers): DirectSeqScan on/off alternated in one session right after a
    # priming read, since the VM reclaims an idle page cache within ~30 s
    # (PG_DIO_BENCH_COLD_ONLY=1: the cold runs only)
    cold_only = os.environ.get("PG_DIO_BENCH_COLD_ONLY") == "1" or bool(PRIMARY)
    if not cold_only:
        restart({**CONFIGS["core-worker"][0], "shared_buffers": "2GB"})
        psql("CREATE TABLE IF NOT EXISTS warm_accounts AS SELECT * FROM pgbench_accounts "
             f"WHERE aid <= {warm_scale * 100000}")
        psql("VACUUM warm_accounts")
        psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    for qname in (() if cold_only else queries):
        for w in (0, 2):
            key = f"{qname}/{w}"
            wq = queries[qname].replace("pgbench_accounts", "warm_accounts")
            psql("SELECT pg_prewarm('warm_accounts')")
            results["warm"][key] = alternated_pairs(wq, w, PAIRS)
            run_query(CONFIGS["core-worker"][1], queries[qname], 0)	# prime the OS cache
            results["os_cached"][key] = alternated_pairs(
                queries[qname], w, PAIRS,
                before="SELECT 1 FROM pg_dio_evict('pgbench_accounts', false);")
            for kind in ("warm", "os_cached"):
                r = [on / off for on, off in results[kind][key]]
                print(f"  {kind} {key}: pg_dio/core median {statistics.median(r):.3f} "
                      f"({min(r):.3f}-{max(r):.3f}), {len(r)} pairs", flush=True)
    restart(CONFIGS["core-worker"][0])
    if PRIMARY:
        results["standby"] = {"cluster": BENCH_CLUSTER, "primary": PRIMARY,
                              "replay_lsn": [lsn0, replay_lsn()]}

    with open(os.path.join(out_dir, f"seqscan{REPORT_SUFFIX}.json"), "w") as f:
        json.dump(results, f, indent=2)

    def mm(xs, fmt="{:.2f}"):
        s = summary(xs)
        return (fmt + " (" + fmt + "–" + fmt + ")").format(s["median"], s["min"], s["max"])

    fio = summary(results["fio"] + [x for v in results["fio_paired"].values() for x in v])

    def vs_fio(key, group):
        """Median over rounds of GiB/s over the fio run of the same round and group."""
        return statistics.median(x["gib_s"] / f for x, f in
                                 zip(results["cold"][key], results["fio_paired"][group]))

    lines = [f"## Sequential scans{' on a hot standby' if PRIMARY else ''}: DirectSeqScan "
             f"vs core ({gib:.2f} GiB pgbench_accounts, scale {scale}, {rounds} rounds)", "",
             (standby_text(BENCH_CLUSTER, *results["standby"]["replay_lsn"]) if PRIMARY else "")
             + "Cold = table evicted from shared buffers and the OS "
             "cache (pg_dio_evict) and verified cold (pg_dio_residency) before every run; the server "
             "is restarted when a configuration changes its server settings. "
             f"fio O_DIRECT sequential 256kB×32 at the start of each round and right after "
             f"each query and worker count's runs: {fio['median']:.2f} "
             f"({fio['min']:.2f}–{fio['max']:.2f}) GiB/s; {memory_text()} "
             + ("Serial runs and the fio runs beside them pinned to CPU "
                f"{CPU}, which takes the disk's interrupts (new backends through the "
                "postmaster; PG_DIO_BENCH_CPU); parallel ones not. " if CPU is not None
                else "Readers not pinned to a CPU. ")
             + "Median (min–max). "
             "vs fio: median over the rounds of each run's GiB/s over the fio run that "
             "followed its query and worker count in the same round (the disk swings minute "
             "to minute). " + settle_text(), "",
             "Configurations: io_method worker unless named core-sync or uring/ "
             "(io_uring); vs best core io_uring: over the best of uring/core (128kB), "
             "uring/core-1M and uring/core-dio-1M (debug_io_direct = data).", "",
             "| query | workers | configuration | GiB/s | CPU s/GiB | vs best core buffered | "
             "vs best core io_uring | vs fio |",
             "|---|---|---|---|---|---|---|---|"]

    def best_of(qname, w, names):
        ran = [c for c in names if c in configs_for(w)]
        return max((statistics.median([x["gib_s"] for x in results["cold"][f"{qname}/{w}/{c}"]])
                    for c in ran), default=None)

    for qname in queries:
        for w in workers_for(qname):
            best = best_of(qname, w, CORE_BUFFERED)
            best_uring = best_of(qname, w, CORE_URING)
            for name in configs_for(w):
                runs = results["cold"][f"{qname}/{w}/{name}"]
                g = [x["gib_s"] for x in runs]
                vs_b = f"{statistics.median(g) / best:.2f}" if best else ""
                vs_u = f"{statistics.median(g) / best_uring:.2f}" if best_uring else ""
                lines.append(f"| {qname} | {w} | {name} | {mm(g)} | "
                             f"{mm([x['cpu_s_per_gib'] for x in runs])} | {vs_b} | {vs_u} | "
                             f"{vs_fio(f'{qname}/{w}/{name}', f'{qname}/{w}'):.2f} |")
    if PRIMARY:     # (cold only: no OS-cached or warm table)
        shares = {name: [x["direct_share"] for k, v in results["cold"].items()
                         if k.split("/", 2)[2] == name for x in v]
                  for name in dict.fromkeys(k.split("/", 2)[2] for k in results["cold"])}
        lines += ["", "Blocks read with O_DIRECT (pg_dio_cluster_stats() before and after each "
                  "run, over the table's blocks), fewest–most over the runs: " +
                  ", ".join(f"{n} {min(v):.0%}–{max(v):.0%}" for n, v in shares.items()) + "."]
        write_report(out_dir, f"seqscan{REPORT_SUFFIX}.md", lines)
        return
    lines += ["", f"OS-cached ({gib:.2f} GiB table, evicted from shared buffers only before each "
              f"query) and warm ({warm_scale * 100000} rows in shared_buffers = 2GB): DirectSeqScan "
              f"on and off alternated in one session, {PAIRS} pairs after one unmeasured pair; "
              "median of the pairs' ratios (min–max), medians of the times.", "",
              "| kind | query | workers | pg_dio/core | core s | pg_dio s |",
              "|---|---|---|---|---|---|"]
    for kind in ("os_cached", "warm"):
        for key, runs in results[kind].items():
            qname, w = key.split("/")
            r = [on / off for on, off in runs]
            lines.append(f"| {kind} | {qname} | {w} | {mm(r, '{:.3f}')} | "
                         f"{statistics.median([off for _, off in runs]):.3f} | "
                         f"{statistics.median([on for on, _ in runs]):.3f} |")
    write_report(out_dir, f"seqscan{REPORT_SUFFIX}.md", lines)


if __name__ == "__main__":
    mode = os.environ.get("PG_DIO_BENCH_MODE", "quick")
    scale = bench_scale(mode)
    # PG_DIO_BENCH_ROUNDS: more rounds than the mode's (3 quick, 5 full)
    rounds = int(os.environ.get("PG_DIO_BENCH_ROUNDS", "0")) or (3 if mode == "quick" else 5)
    main(sys.argv[1], scale, rounds, 50)
