#!/usr/bin/env python3
"""Index scans: PrefetchIndexScan vs core's Index Scan and Bitmap Heap Scan.

A table of >= 2 GiB (bench_idx) with two indexes: bench_idx_r on a column in
random order relative to the heap, bench_idx_id on a column in heap order
(correlated).  After it was vacuumed, one row on every other page was
updated, so about half of the pages are not all-visible (the index-only
scans visit those).  bench_idx_av is the same table and index on r, vacuumed
and left so: every page all-visible, as a table is after its load and
VACUUM.  The experiments, each configuration in turn within a round
(A B C ... A B C ...), rounds repeated:

  random, cold   SELECT sum(length(filler)) over ~1% of the rows by r:
                 core Index Scan, core Bitmap Heap Scan, PrefetchIndexScan,
                 with effective_io_concurrency 16 and 64, io_method worker
                 and sync; fio random 8 kB O_DIRECT reads at depth 1, 16, 64
                 over the table's files at the start of each round, and at
                 the scan's depth right after each PrefetchIndexScan run
                 (its "IOPS vs fio": the disk swings minute to minute).
                 prefetch-direct-16 is PrefetchIndexScan reading the
                 all-visible heap blocks that are not in shared buffers with
                 O_DIRECT (pg_dio.index_direct_read on; off by default).
  random_av      the same on bench_idx_av, every block of which is
                 all-visible.
  index-only     SELECT sum(r) over the same range (Index Only Scan vs
                 PrefetchIndexOnlyScan), cold.
  correlated     the same share of rows by id (heap order), cold.
  cached         a smaller range that fits in shared buffers, run twice,
                 the second run timed (random, correlated, index-only).

Cold = the table and its indexes evicted from shared buffers and the OS page
cache with pg_dio_evict and verified with pg_dio_residency before every run.
Cold runs and fio are pinned to the CPU that takes the disk's interrupts
(see engine_vs_fio.reader_cpu; PG_DIO_BENCH_CPU=N or none): the postmaster,
so every backend it forks, and fio.  The OS-cached and cached pairs, which
wait for no device, are not.
The server is restarted only to change io_method.  Every query runs as
EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON): the execution time and
the blocks read come from the same run; IOPS = heap blocks read / seconds.

On a hot standby (test/bench/run.sh with PG_DIO_BENCH_STANDBY=1, which
sets PG_DIO_BENCH_PRIMARY): the cold random experiment only, every
connection, restart, eviction and fio run on the standby, the tables built
on the primary before (test/bench/prepare.py); indexscan-standby.md and .json.

Needs: the bench cluster (test/bench/run.sh brings it up), psql, fio.
"""
import json
import re
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from engine_vs_fio import (PRIMARY, REPORT_SUFFIX, bench_scale, memory_text,  # noqa: E402
                           pin_server, placement_text, psql, psql_script, reader_cpu,
                           replay_lsn, reset_all_sql, run_fio_random, server_started,
                           settle, settle_text, standby_text, summary, walk, write_report)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "test", "cluster.sh")
# the bench cluster of the PostgreSQL major version under test (test/bench/run.sh)
BENCH_CLUSTER = os.environ.get("PG_DIO_BENCH_CLUSTER", "bench")

BASE = {"enable_seqscan": "off", "max_parallel_workers_per_gather": "0", "jit": "off"}
CORE_INDEX = {**BASE, "pg_dio.enable_index_prefetch": "off", "enable_bitmapscan": "off"}
CORE_BITMAP = {**BASE, "pg_dio.enable_index_prefetch": "off", "enable_indexscan": "off",
               "enable_indexonlyscan": "off"}
PREFETCH = {**BASE, "pg_dio.enable_index_prefetch": "on", "enable_bitmapscan": "off"}


def configs(mode):
    """name -> (io_method, session settings, plan node that must appear)."""
    c = {
        "core-index": ("worker", CORE_INDEX, "Index Scan"),
        "core-bitmap-16": ("worker", {**CORE_BITMAP, "effective_io_concurrency": "16"},
                           "Bitmap Heap Scan"),
        "core-bitmap-64": ("worker", {**CORE_BITMAP, "effective_io_concurrency": "64"},
                           "Bitmap Heap Scan"),
        "prefetch-16": ("worker", {**PREFETCH, "effective_io_concurrency": "16"},
                        "PrefetchIndexScan"),
        "prefetch-64": ("worker", {**PREFETCH, "effective_io_concurrency": "64"},
                        "PrefetchIndexScan"),
        "prefetch-direct-16": ("worker", {**PREFETCH, "effective_io_concurrency": "16",
                                          "pg_dio.index_direct_read": "on"},
                               "PrefetchIndexScan"),
        "sync/core-index": ("sync", CORE_INDEX, "Index Scan"),
        "sync/core-bitmap-16": ("sync", {**CORE_BITMAP, "effective_io_concurrency": "16"},
                                "Bitmap Heap Scan"),
        "sync/prefetch-16": ("sync", {**PREFETCH, "effective_io_concurrency": "16"},
                             "PrefetchIndexScan"),
        # without combining neighbouring blocks into one advice: what
        # combining gains under sync, where advice is the only read-ahead
        "sync/prefetch-nocombine-16": ("sync", {**PREFETCH, "effective_io_concurrency": "16",
                                                "pg_dio.index_prefetch_combine": "off"},
                                       "PrefetchIndexScan"),
        "sync/core-bitmap-64": ("sync", {**CORE_BITMAP, "effective_io_concurrency": "64"},
                                "Bitmap Heap Scan"),
        "sync/prefetch-64": ("sync", {**PREFETCH, "effective_io_concurrency": "64"},
                             "PrefetchIndexScan"),
    }
    if URING:
        # io_method=io_uring: the scan hands its blocks to core's read stream,
        # which does the I/O asynchronously (a server built with liburing)
        for eic in ("16", "64"):
            c[f"uring/core-bitmap-{eic}"] = ("io_uring", {**CORE_BITMAP, "effective_io_concurrency": eic},
                                             "Bitmap Heap Scan")
            c[f"uring/prefetch-{eic}"] = ("io_uring", {**PREFETCH, "effective_io_concurrency": eic},
                                          "PrefetchIndexScan")
        c["uring/core-index"] = ("io_uring", CORE_INDEX, "Index Scan")
    if mode == "full":
        c["prefetch-nocombine-16"] = ("worker", {**PREFETCH, "effective_io_concurrency": "16",
                                                 "pg_dio.index_prefetch_combine": "off"},
                                      "PrefetchIndexScan")
    return c


IOS_CONFIGS = {
    "core-ios": ("worker", CORE_INDEX, "Index Only Scan"),
    "prefetch-ios-16": ("worker", {**PREFETCH, "effective_io_concurrency": "16"},
                        "PrefetchIndexOnlyScan"),
    "prefetch-ios-64": ("worker", {**PREFETCH, "effective_io_concurrency": "64"},
                        "PrefetchIndexOnlyScan"),
    # core's bitmap heap scan reads every block of the range (PG 18 has no
    # skip-fetch for all-visible pages); the index-only scans read only those
    # that are not all-visible
    "core-bitmap-16": ("worker", {**CORE_BITMAP, "effective_io_concurrency": "16"},
                       "Bitmap Heap Scan"),
    "core-bitmap-64": ("worker", {**CORE_BITMAP, "effective_io_concurrency": "64"},
                       "Bitmap Heap Scan"),
    "sync/core-ios": ("sync", CORE_INDEX, "Index Only Scan"),
    "sync/core-bitmap-16": ("sync", {**CORE_BITMAP, "effective_io_concurrency": "16"},
                            "Bitmap Heap Scan"),
    "sync/prefetch-ios-16": ("sync", {**PREFETCH, "effective_io_concurrency": "16"},
                             "PrefetchIndexOnlyScan"),
}
CORR_CONFIGS = {
    "core-index": ("worker", CORE_INDEX, "Index Scan"),
    "prefetch-16": ("worker", {**PREFETCH, "effective_io_concurrency": "16"},
                    "PrefetchIndexScan"),
}

current_io_method = None
CPU = reader_cpu()
URING = False               # the server offers io_method=io_uring (main)
# PG_DIO_BENCH_CONFIGS: a regular expression; only the configurations of the
# cold experiments it matches run (e.g. '^uring/')
ONLY_CONFIGS = re.compile(os.environ.get("PG_DIO_BENCH_CONFIGS", ""))
# PG_DIO_BENCH_COLD_ONLY=1: the cold experiments only (no OS-cached, cached
# or instruction counts); on a hot standby always
COLD_ONLY = os.environ.get("PG_DIO_BENCH_COLD_ONLY") == "1" or bool(PRIMARY)


def start_server():
    subprocess.run([CLUSTER, "start", BENCH_CLUSTER], check=True, capture_output=True)
    server_started()


def restart(io_method):
    global current_io_method
    if io_method == current_io_method:
        return
    psql_script(f"{reset_all_sql()}ALTER SYSTEM SET io_method = '{io_method}';")
    subprocess.run([CLUSTER, "stop", BENCH_CLUSTER], check=True, capture_output=True)
    start_server()
    current_io_method = io_method


def ensure_table(name, nrows, after_load=""):
    """Table `name` of `nrows` rows (id in heap order, r random) with an index
    on r, vacuumed, then `after_load` run; built again only if missing or of
    another size."""
    have = psql(f"SELECT count(*) FROM pg_class WHERE relname = '{name}'")
    if have == "1" and psql(f"SELECT obj_description('{name}'::regclass)") == f"rows={nrows}":
        return
    if PRIMARY:
        sys.exit(f"no {name} of {nrows} rows on the standby: test/bench/prepare.py "
                 "builds it on the primary first")
    print(f"building {name} ({nrows} rows) ...", flush=True)
    psql_script(f"""
DROP TABLE IF EXISTS {name};
CREATE TABLE {name} (id bigint, r int, val int, filler char(180))
    WITH (autovacuum_enabled = off, fillfactor = 100);
SELECT setseed(0.42);
INSERT INTO {name} SELECT g, (random() * {nrows})::int, g % 1000, 'x'
  FROM generate_series(1, {nrows}) g;
CREATE INDEX {name}_r ON {name} (r);
VACUUM (ANALYZE) {name};
{after_load}
CHECKPOINT;
COMMENT ON TABLE {name} IS 'rows={nrows}';
""")


def ensure_tables(nrows):
    ensure_table("bench_idx", nrows, """
CREATE INDEX bench_idx_id ON bench_idx (id);
-- one row on every other page: about half the pages stop being all-visible
UPDATE bench_idx SET val = val + 1
 WHERE ctid = ANY (SELECT format('(%s,1)', b)::tid
                     FROM generate_series(0, pg_relation_size('bench_idx') / 8192 - 1, 2) b);
ANALYZE bench_idx;""")
    # every page all-visible, as after a load and VACUUM
    ensure_table("bench_idx_av", nrows)


COLD_RELS = ("bench_idx", "bench_idx_r", "bench_idx_id", "bench_idx_av", "bench_idx_av_r")


def table_files():
    data = os.environ["PG_DIO_DATA"]
    rel = psql("SELECT pg_relation_filepath('bench_idx')")
    files, seg = [], 0
    while os.path.exists(os.path.join(data, rel + (f".{seg}" if seg else ""))):
        files.append(os.path.join(data, rel + (f".{seg}" if seg else "")))
        seg += 1
    return files


def make_cold():
    psql_script("".join(f"SELECT * FROM pg_dio_evict('{rel}') \\g /dev/null\n"
                        for rel in COLD_RELS))
    for rel in COLD_RELS:
        row = psql("SELECT shared_buffers || ' ' || coalesce(os_cache, -1) "
                   f"FROM pg_dio_residency('{rel}') WHERE fork = 'main'")
        shared, os_cached = (int(x) for x in row.split())
        if shared != 0 or os_cached != 0:
            sys.exit(f"not cold: {rel}: {shared} blocks in shared buffers, "
                     f"{os_cached} in the OS cache")
    settle()


def session_sets(session):
    """The SET statements of a configuration's session settings."""
    return "".join(f"SET {k} = '{v}';\n" for k, v in session.items())


CACHED_PAIRS = 20
CACHED_WARM = 3


OS_CACHED_PAIRS = 4


def os_cached_prime(query):
    """SQL run before each OS-cached run: core's scan reads the blocks into
    shared buffers and the OS page cache, then the table leaves shared
    buffers (its OS-cached pages stay)."""
    return (f"RESET ALL;\n{session_sets(CORE_INDEX)}{query} \\g /dev/null\n"
            "SELECT * FROM pg_dio_evict('bench_idx', false) \\g /dev/null\n")


def cached_pairs(core, pf, query, pairs, warm=None, before=""):
    """Core's scan and ours alternating (A B B A ...) in one session, which
    the first `warm` pairs (CACHED_WARM) warm up: [{name: seconds}] per later
    pair; `before` runs ahead of every run.
    Seconds are EXPLAIN ANALYZE's execution time without per-node timing.
    One session for all runs: a new backend's start-up (its catalog caches,
    its ring) would be timed with its first query."""
    warm = CACHED_WARM if warm is None else warm
    explain = f"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) {query};\n"
    script, names = "", []
    for i in range(warm + pairs):
        for name, (iom, sess, node) in (core, pf) if i % 2 == 0 else (pf, core):
            script += before
            script += "RESET ALL;\n" + session_sets(sess)
            script += explain
            names.append(name)
    ms = [float(line.split()[2]) for line in psql_script(script)
          if line.strip().startswith("Execution Time:")]
    if len(ms) != len(names):
        sys.exit(f"cached pairs: {len(ms)} execution times for {len(names)} runs")
    out = []
    for i in range(warm, warm + pairs):
        out.append({names[2 * i]: ms[2 * i] / 1000.0, names[2 * i + 1]: ms[2 * i + 1] / 1000.0})
    return out


def cached_experiments(q_rand_c, q_corr_c, q_ios_c):
    """(experiment, query, (core name, config), (prefetch name, config))"""
    return [("random", q_rand_c, ("core-index", CORR_CONFIGS["core-index"]),
             ("prefetch-16", CORR_CONFIGS["prefetch-16"])),
            ("correlated", q_corr_c, ("core-index", CORR_CONFIGS["core-index"]),
             ("prefetch-16", CORR_CONFIGS["prefetch-16"])),
            ("index_only", q_ios_c, ("core-ios", IOS_CONFIGS["core-ios"]),
             ("prefetch-ios-16", IOS_CONFIGS["prefetch-ios-16"]))]


def instructions(exps, repeat=3):
    """Instructions per query (valgrind's callgrind) of each cached query with
    core's scan and with ours: a single-user backend on the bench cluster's
    data runs the query once to warm shared buffers and then `repeat` times;
    the same without the repeats is subtracted.  Stops the cluster meanwhile.
    {} when valgrind is missing."""
    if subprocess.run(["sh", "-c", "command -v valgrind"], capture_output=True).returncode:
        print("  instructions: valgrind missing, skipped", flush=True)
        return {}
    pg_config = subprocess.run(["bash", os.path.join(ROOT, "test", "scripts", "pg_config.sh")],
                               capture_output=True, text=True).stdout.strip()
    postgres = os.path.join(os.path.dirname(pg_config), "postgres")
    data = os.environ["PG_DIO_DATA"]
    user = ["runuser", "-u", os.environ.get("PG_DIO_OS_USER", "pgdio"), "--"] \
        if os.geteuid() == 0 else []
    out = f"/tmp/pg_dio-callgrind-{os.getpid()}.out"
    subprocess.run([CLUSTER, "stop", BENCH_CLUSTER], check=True, capture_output=True)

    def count(sess, q, n):
        stmts = [f"SET {k} = '{v}'" for k, v in sess.items()] + [q] * (1 + n)
        subprocess.run(user + ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                               postgres, "--single", "-D", data, "postgres"],
                       input="\n".join(stmts) + "\n", text=True, check=True,
                       capture_output=True)
        with open(out) as f:
            return next(int(l.split()[1]) for l in f if l.startswith("summary:"))

    res = {}
    try:
        for exp, q, core, pf in exps:
            per = {}
            for name, (iom, sess, node) in (core, pf):
                per[name] = (count(sess, q, repeat) - count(sess, q, 0)) / repeat
            res[exp] = {"core": per[core[0]], "prefetch": per[pf[0]],
                        "ratio": per[pf[0]] / per[core[0]]}
            print(f"  instructions {exp}: core {per[core[0]]:.0f}, prefetch "
                  f"{per[pf[0]]:.0f} per query, {res[exp]['ratio']:.3f}", flush=True)
    finally:
        if os.path.exists(out):
            os.unlink(out)
        start_server()
    return res


def run(session, query):
    """EXPLAIN ANALYZE the query: seconds, heap+index blocks read, node type,
    prefetch counters."""
    out = psql_script(session_sets(session) +
                      f"EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) {query};\n")
    top = json.loads("\n".join(out))[0]
    nodes = list(walk(top["Plan"]))
    scan = next(n for n in nodes if n["Node Type"] in
                ("Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Custom Scan"))
    name = scan.get("Custom Plan Provider", scan["Node Type"])
    return {"seconds": top["Execution Time"] / 1000.0,
            # a node's buffer counts include its children's (the bitmap index
            # scan); heap blocks PrefetchIndexScan read directly are not
            # buffer reads (pg_dio.index_direct_read)
            "blocks_read": scan.get("Shared Read Blocks", 0) + scan.get("Heap Blocks Direct", 0),
            "heap_read": scan.get("Heap Blocks Read"),
            "heap_direct": scan.get("Heap Blocks Direct"),
            "prefetch_avg": scan.get("Prefetch Average"),
            "node": name, "rows": top["Plan"].get("Actual Rows")}


def index_rows(mode):
    """Rows of the index-scan tables: 10.5M (quick), 21M (full), or in
    proportion to PG_DIO_BENCH_SCALE (10.5M at 320)."""
    return bench_scale(mode) * 10_500_000 // 320


def main(out_dir, mode):
    global URING
    # PG_DIO_BENCH_INDEX_ROUNDS: other than the mode's rounds (3 quick, 5 full)
    rounds = int(os.environ.get("PG_DIO_BENCH_INDEX_ROUNDS", "0")) or (3 if mode == "quick" else 5)
    nrows = index_rows(mode)
    restart("worker")
    lsn0 = replay_lsn() if PRIMARY else None
    URING = psql("SELECT 'io_uring' = ANY (enumvals) FROM pg_settings "
                 "WHERE name = 'io_method'") == "t"
    ensure_tables(nrows)
    table_bytes = int(psql("SELECT pg_relation_size('bench_idx')"))
    files = table_files()
    span = nrows // 100             # ~1% of the rows
    lo = nrows // 3
    q_rand = f"SELECT sum(length(filler)) FROM bench_idx WHERE r BETWEEN {lo} AND {lo + span}"
    q_av = q_rand.replace("FROM bench_idx ", "FROM bench_idx_av ")
    q_ios = f"SELECT sum(r::bigint) FROM bench_idx WHERE r BETWEEN {lo} AND {lo + span}"
    q_corr = f"SELECT sum(length(filler)) FROM bench_idx WHERE id BETWEEN {lo} AND {lo + span}"
    small = span // 10              # fits in shared buffers
    q_rand_c = f"SELECT sum(length(filler)) FROM bench_idx WHERE r BETWEEN {lo} AND {lo + small}"
    q_ios_c = f"SELECT sum(r::bigint) FROM bench_idx WHERE r BETWEEN {lo} AND {lo + small}"
    q_corr_c = f"SELECT sum(length(filler)) FROM bench_idx WHERE id BETWEEN {lo} AND {lo + small}"
    res = {"mode": mode, "rounds": rounds, "table_bytes": table_bytes, "rows": nrows,
           "reader_cpu": CPU,
           "queries": {"random": q_rand, "random_av": q_av, "index_only": q_ios, "correlated": q_corr},
           "fio_iops": {}, "fio_paired": {}, "cold": {}, "cached": {}}
    def only(cfgs):
        return {k: v for k, v in cfgs.items() if ONLY_CONFIGS.search(k)}

    cold_cfg = only(configs(mode))
    experiments = [(e, q, c) for e, q, c in
                   [("random", q_rand, cold_cfg), ("random_av", q_av, cold_cfg),
                    ("index_only", q_ios, only(IOS_CONFIGS)),
                    ("correlated", q_corr, only(CORR_CONFIGS))] if c]
    if PRIMARY:
        # on a hot standby: the cold random range only
        experiments = [x for x in experiments if x[0] == "random"]

    # every configuration's plan must be the one it claims
    for exp, q, cfgs in experiments:
        for name, (iom, sess, node) in cfgs.items():
            if iom != "worker":
                continue
            plan = "\n".join(psql_script(session_sets(sess) + f"EXPLAIN (COSTS OFF) {q};"))
            if node not in plan:
                sys.exit(f"{exp}/{name}: expected {node} in the plan:\n{plan}")

    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", flush=True)
        pin_server(CPU)
        settle()                # nothing is freed between these three
        for depth in (1, 16, 64):
            res["fio_iops"].setdefault(str(depth), []).append(
                run_fio_random(files, depth, seconds=2, cpu=CPU))
        for iom in ("worker", "sync") + (("io_uring",) if URING else ()):
            for exp, q, cfgs in experiments:
                # reversed in odd rounds, as in the seqscan experiment
                items = list(cfgs.items())
                for name, (cfg_iom, sess, node) in (items if r % 2 == 0 else items[::-1]):
                    if cfg_iom != iom:
                        continue
                    restart(iom)
                    make_cold()
                    x = run(sess, q)
                    x["iops"] = x["blocks_read"] / x["seconds"]
                    res["cold"].setdefault(f"{exp}/{name}", []).append(x)
                    direct = f" ({x['heap_direct']} direct)" if x.get("heap_direct") else ""
                    print(f"  cold {exp}/{name}: {x['seconds']:.2f} s, {x['rows']} rows, "
                          f"{x['blocks_read']} blocks read{direct}, {x['iops']:.0f} IOPS", flush=True)
                    eic = sess.get("effective_io_concurrency")
                    if "prefetch" in name and eic:
                        # the device right after the run, at its depth: the
                        # disk swings minute to minute
                        settle()
                        f = run_fio_random(files, int(eic), seconds=2, cpu=CPU)
                        res["fio_paired"].setdefault(f"{exp}/{name}", []).append(f)
                        print(f"  fio random depth {eic}: {f:.0f} IOPS", flush=True)
        restart("worker")
        pin_server(None)
        if COLD_ONLY:
            continue
        # OS-cached: out of shared buffers, in the OS page cache (primed just
        # before), OS_CACHED_PAIRS pairs alternated in one session
        core = ("core-index", CORR_CONFIGS["core-index"])
        pf = ("prefetch-16", CORR_CONFIGS["prefetch-16"])
        for pair in cached_pairs(core, pf, q_rand, OS_CACHED_PAIRS, warm=1,
                                 before=os_cached_prime(q_rand)):
            for name in (core[0], pf[0]):
                res.setdefault("os_cached", {}).setdefault(f"random/{name}", []).append(
                    {"seconds": pair[name]})
            res.setdefault("os_cached_ratio", []).append(pair[pf[0]] / pair[core[0]])
        print(f"  OS-cached random: prefetch/core median "
              f"{statistics.median(res['os_cached_ratio']):.3f}", flush=True)
        # cached: core and prefetch alternating, CACHED_PAIRS pairs per round
        for exp, q, core, pf in cached_experiments(q_rand_c, q_corr_c, q_ios_c):
            for pair in cached_pairs(core, pf, q, CACHED_PAIRS):
                for name in (core[0], pf[0]):
                    res["cached"].setdefault(f"{exp}/{name}", []).append(
                        {"seconds": pair[name]})
                res.setdefault("cached_ratio", {}).setdefault(exp, []).append(
                    pair[pf[0]] / pair[core[0]])
            print(f"  cached {exp}: prefetch/core median "
                  f"{statistics.median(res['cached_ratio'][exp]):.3f}", flush=True)

    # cached, counted in instructions: noise-free where times swing
    res["instructions"] = ({} if COLD_ONLY else
                           instructions(cached_experiments(q_rand_c, q_corr_c, q_ios_c)))

    if PRIMARY:
        res["standby"] = {"cluster": BENCH_CLUSTER, "primary": PRIMARY,
                          "replay_lsn": [lsn0, replay_lsn()]}
    with open(os.path.join(out_dir, f"indexscan{REPORT_SUFFIX}.json"), "w") as f:
        json.dump(res, f, indent=2)

    def med(key, field="seconds", kind="cold"):
        return statistics.median(x[field] for x in res[kind][key])

    def mm(key, field="seconds", kind="cold", fmt="{:.2f}"):
        s = summary([x[field] for x in res[kind][key]])
        return (fmt + " (" + fmt + "–" + fmt + ")").format(s["median"], s["min"], s["max"])

    fio = {d: statistics.median(v) for d, v in res["fio_iops"].items()}

    def iops_vs_fio(key, eic):
        """A run's IOPS over fio's at its depth: the median of the ratios to the
        fio run right after each (PrefetchIndexScan), else to the rounds' fio
        (depth 1 for core's scans, which have no eic)."""
        if key in res["fio_paired"]:
            return "{:.2f}".format(statistics.median(
                x["iops"] / f for x, f in zip(res["cold"][key], res["fio_paired"][key])))
        if eic:
            return f"{med(key, 'iops') / fio[eic]:.2f}"
        return f"{med(key, 'iops') / fio['1']:.2f} (depth 1)"
    gib = table_bytes / 2**30
    lines = [f"## Index scans{' on a hot standby' if PRIMARY else ''}: PrefetchIndexScan vs "
             f"core ({gib:.2f} GiB table, {nrows} rows, {rounds} rounds)", "",
             (standby_text(BENCH_CLUSTER, *res["standby"]["replay_lsn"]) if PRIMARY else "")
             + f"Range scans returning ~1% of the rows ({span} by r in random heap order; the "
             "same by id in heap order). Cold = table and indexes evicted from shared "
             "buffers and the OS cache (pg_dio_evict) and verified cold (pg_dio_residency) "
             "before every run. Seconds: median (min–max). IOPS = blocks read / seconds. "
             "IOPS vs fio: PrefetchIndexScan's runs against a fio run at their depth "
             "right after each (median of the ratios: the disk swings minute to minute), "
             "core's against the rounds' fio. fio random 8 kB O_DIRECT at the start of each round: "
             + ", ".join(f"depth {d}: {fio[d]:.0f} IOPS" for d in ("1", "16", "64")) + "; "
             + memory_text() + " " + placement_text(CPU)[0].upper() + placement_text(CPU)[1:]
             + ". " + settle_text(), "",
             "Configurations: io_method worker unless named sync/ or uring/ (io_uring). ",
             "",
             "| experiment | configuration | seconds | IOPS | vs core Index Scan (same io_method) | "
             "vs core Bitmap (same eic) | IOPS vs fio (same depth) |",
             "|---|---|---|---|---|---|---|"]
    for exp, q, cfgs in experiments:
        for name in cfgs:
            key = f"{exp}/{name}"
            if key not in res["cold"]:
                continue
            s = med(key)
            prefix = name.split("/")[0] + "/" if "/" in name else ""
            # against core's Index Scan with the same io_method
            base = prefix + ("core-ios" if exp == "index_only" else "core-index")
            # (a PG_DIO_BENCH_CONFIGS selection may leave core's Index Scan out)
            vs_index = (f"{med(f'{exp}/{base}') / s:.2f}×"
                        if f"{exp}/{base}" in res["cold"] else "")
            eic = name.rsplit("-", 1)[-1] if name.rsplit("-", 1)[-1] in ("16", "64") else None
            bkey = f"{exp}/{prefix}core-bitmap-{eic}"
            vs_bitmap = f"{med(bkey) / s:.2f}" if eic and bkey in res["cold"] else ""
            vs_fio = iops_vs_fio(key, eic)
            lines.append(f"| {exp} | {name} | {mm(key)} | {med(key, 'iops'):.0f} | "
                         f"{vs_index} | {vs_bitmap} | {vs_fio} |")
    if COLD_ONLY:
        write_report(out_dir, f"indexscan{REPORT_SUFFIX}.md", lines)
        return
    c = med("random/core-index", kind="os_cached")
    p = med("random/prefetch-16", kind="os_cached")
    lines += ["", f"OS-cached (random, table out of shared buffers but in the OS page cache, "
              f"primed by core's scan right before each run; core and PrefetchIndexScan "
              f"alternating in one session, 1 pair to warm up, then {OS_CACHED_PAIRS} pairs per "
              f"round): core Index Scan {c:.2f} s, PrefetchIndexScan {p:.2f} s (medians), "
              f"prefetch/core {statistics.median(res['os_cached_ratio']):.3f} (median of the "
              f"pairs' ratios)."]
    lines += ["", f"Cached (range of {small} rows, all in shared buffers; core and "
              f"PrefetchIndexScan alternating in one session, {CACHED_WARM} pairs to warm up, "
              f"then {CACHED_PAIRS} pairs per round timed (EXPLAIN ANALYZE execution time, "
              f"TIMING OFF); prefetch/core = median of the pairs' ratios; "
              "instructions per query counted by valgrind's callgrind in a single-user "
              "backend, which no other process disturbs):", "",
              "| experiment | core ms | PrefetchIndexScan ms | prefetch/core time | "
              "core instructions | PrefetchIndexScan instructions | prefetch/core instructions |",
              "|---|---|---|---|---|---|---|"]
    for exp, core, pf in (("random", "core-index", "prefetch-16"),
                          ("correlated", "core-index", "prefetch-16"),
                          ("index_only", "core-ios", "prefetch-ios-16")):
        c = med(f"{exp}/{core}", kind="cached")
        p = med(f"{exp}/{pf}", kind="cached")
        ins = res["instructions"].get(exp)
        cols = (f"{ins['core'] / 1e6:.2f} M | {ins['prefetch'] / 1e6:.2f} M | {ins['ratio']:.3f}"
                if ins else " | | ")
        lines.append(f"| {exp} | {c * 1000:.1f} | {p * 1000:.1f} | "
                     f"{statistics.median(res['cached_ratio'][exp]):.3f} | {cols} |")
    write_report(out_dir, f"indexscan{REPORT_SUFFIX}.md", lines)


if __name__ == "__main__":
    main(sys.argv[1], os.environ.get("PG_DIO_BENCH_MODE", "quick"))
