#!/usr/bin/env python3
"""TPC-H: the 22 queries with pg_dio's scans off (core's plan) and on.

The yardstick for "no query may get slower".  Data and query texts come from
PyPI only: DuckDB (`duckdb`) and its TPC-H extension as a pip package
(`duckdb-extension-tpch`, the same version), loaded from its installed path;
no extension is fetched at run time.  test/bench/run.sh installs both into
the project venv and runs this script with that venv's python.

  data     generated once per scale factor (PG_DIO_BENCH_TPCH_SF, default 1)
           into PG_DIO_BENCH_TPCH_CACHE/sf<SF>/ ('|'-separated CSV, one file
           a table, and q01.sql ... q22.sql), outside the checkout's tracked
           files; loaded into the database tpch of the bench cluster with
           COPY ... (FORMAT csv, DELIMITER '|'), primary keys and the usual
           foreign-key indexes, then VACUUM (FREEZE, ANALYZE); skipped when
           the database already holds that scale factor (its comment).
  cold     each query after a server restart with the OS page cache dropped
           (sync; echo 3 > /proc/sys/vm/drop_caches, as root; without root
           every table and index is evicted with pg_dio_evict), verified
           cold with pg_dio_residency, core and pg_dio alternated (A B, then
           B A in the next round), for each io_method in
           PG_DIO_BENCH_TPCH_IO (default "worker io_uring" where the server
           has io_uring, else worker); PG_DIO_BENCH_TPCH_ROUNDS rounds
           (default 5).  Every restart sets the server's settings, so the
           io_methods take turns within a round at no extra cost.
  warm     per io_method and query, one session: core and pg_dio once each
           (unmeasured warm-up), then PG_DIO_BENCH_TPCH_WARM pairs (default
           6: a query's warm pairs differ by 5-10%), alternated; warm time is
           the CPU part of the cold time, cold minus warm the I/O part; each
           warm run's CPU time of the session's backend is measured too
           (run_script's cpu: the whole query's with serial plans,
           PG_DIO_BENCH_TPCH_WORKERS=0; the leader's part otherwise).
  results  every run's rows are compared with core's first run of the query
           (in order where the query has a top-level ORDER BY, sorted
           otherwise); a difference stops the run, with both outputs and
           both plans written next to the report.
  fio      at the start of each round: sequential 256 kB x 32, random 8 kB at
           depth 1 and 32, O_DIRECT over lineitem's segment files (the
           helpers of engine_vs_fio.py).
  device   the bytes each cold run read from the block device that holds
           the data directory (/proc/diskstats, around the run), and the
           time pg_dio's bytes take at fio's sequential rate: no read path
           that reads them gets its I/O done sooner.

Server: shared_buffers = 512MB, max_parallel_workers_per_gather = 2 (ALTER
SYSTEM, reset at the end; PG_DIO_BENCH_TPCH_WORKERS sets another number of
workers per Gather, 0 for serial plans).  Reports: tpch-<io_method>-pg<major>.md
and .json in the output directory (with -workers<N> before the suffix when
N is not 2).  PG_DIO_BENCH_TPCH_QUERIES (e.g. "1,6,14") runs a
subset.

Usage: tpch.py OUT_DIR   (needs the bench cluster: PGHOST, PGPORT, PG_DIO_DATA)
"""
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from engine_vs_fio import (fio_mem_text, psql, psql_script, relation_segments,  # noqa: E402
                           reset_all_sql, run_fio, run_fio_random, server_started, settle,
                           settle_text, memory_state, walk, write_report)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "test", "cluster.sh")
BENCH_CLUSTER = os.environ.get("PG_DIO_BENCH_CLUSTER", "bench")
DB = "tpch"

# the server's settings in every run (io_method added per run)
WORKERS = os.environ.get("PG_DIO_BENCH_TPCH_WORKERS", "2").strip()
if not WORKERS.isdigit():
    sys.exit(f"PG_DIO_BENCH_TPCH_WORKERS={WORKERS}: a number of workers, e.g. 0 or 2")
SERVER = {"shared_buffers": "512MB", "max_parallel_workers_per_gather": WORKERS}
# the two sides: core's plan, and pg_dio's scans at their defaults
SIDES = {
    "core": {"pg_dio.enable_direct_scan": "off", "pg_dio.enable_index_prefetch": "off",
             "pg_dio.enable_probe_prefetch": "off"},
    "pg_dio": {"pg_dio.enable_direct_scan": "on", "pg_dio.enable_index_prefetch": "on",
               "pg_dio.enable_probe_prefetch": "on"},
}
PG_DIO_NODES = {"DirectSeqScan": "Seq Scan", "PrefetchIndexScan": "Index Scan",
                "PrefetchIndexOnlyScan": "Index Only Scan", "ProbePrefetch": None}

# TPC-H's tables in load order, with PostgreSQL column types (the
# specification's; variable-length text as varchar without a limit)
TABLES = {
    "region": [("r_regionkey", "integer"), ("r_name", "char(25)"), ("r_comment", "varchar")],
    "nation": [("n_nationkey", "integer"), ("n_name", "char(25)"), ("n_regionkey", "integer"),
               ("n_comment", "varchar")],
    "part": [("p_partkey", "integer"), ("p_name", "varchar"), ("p_mfgr", "char(25)"),
             ("p_brand", "char(10)"), ("p_type", "varchar"), ("p_size", "integer"),
             ("p_container", "char(10)"), ("p_retailprice", "numeric(15,2)"),
             ("p_comment", "varchar")],
    "supplier": [("s_suppkey", "integer"), ("s_name", "char(25)"), ("s_address", "varchar"),
                 ("s_nationkey", "integer"), ("s_phone", "char(15)"),
                 ("s_acctbal", "numeric(15,2)"), ("s_comment", "varchar")],
    "partsupp": [("ps_partkey", "integer"), ("ps_suppkey", "integer"), ("ps_availqty", "integer"),
                 ("ps_supplycost", "numeric(15,2)"), ("ps_comment", "varchar")],
    "customer": [("c_custkey", "integer"), ("c_name", "varchar"), ("c_address", "varchar"),
                 ("c_nationkey", "integer"), ("c_phone", "char(15)"),
                 ("c_acctbal", "numeric(15,2)"), ("c_mktsegment", "char(10)"),
                 ("c_comment", "varchar")],
    "orders": [("o_orderkey", "bigint"), ("o_custkey", "integer"), ("o_orderstatus", "char(1)"),
               ("o_totalprice", "numeric(15,2)"), ("o_orderdate", "date"),
               ("o_orderpriority", "char(15)"), ("o_clerk", "char(15)"),
               ("o_shippriority", "integer"), ("o_comment", "varchar")],
    "lineitem": [("l_orderkey", "bigint"), ("l_partkey", "integer"), ("l_suppkey", "integer"),
                 ("l_linenumber", "integer"), ("l_quantity", "numeric(15,2)"),
                 ("l_extendedprice", "numeric(15,2)"), ("l_discount", "numeric(15,2)"),
                 ("l_tax", "numeric(15,2)"), ("l_returnflag", "char(1)"),
                 ("l_linestatus", "char(1)"), ("l_shipdate", "date"), ("l_commitdate", "date"),
                 ("l_receiptdate", "date"), ("l_shipinstruct", "char(25)"),
                 ("l_shipmode", "char(10)"), ("l_comment", "varchar")],
}
PRIMARY_KEYS = {"region": "r_regionkey", "nation": "n_nationkey", "part": "p_partkey",
                "supplier": "s_suppkey", "partsupp": "ps_partkey, ps_suppkey",
                "customer": "c_custkey", "orders": "o_orderkey",
                "lineitem": "l_orderkey, l_linenumber"}
INDEXES = [("lineitem", "l_partkey, l_suppkey"), ("lineitem", "l_shipdate"),
           ("orders", "o_custkey"), ("orders", "o_orderdate"), ("partsupp", "ps_suppkey"),
           ("customer", "c_nationkey"), ("supplier", "s_nationkey")]


def die(msg):
    sys.exit(f"tpch.py: {msg}")


# every query's warm time at least this share of core's speed (issue 33's gate)
WARM_GATE = 0.98


def warm_pair_ratio(w):
    """core / pg_dio warm: the median of the alternated pairs' ratios."""
    return statistics.median(a / b for a, b in zip(w["core"], w["pg_dio"]))


def warm_check_pairs(warm):
    """PG_DIO_BENCH_TPCH_WARM_CHECK: the pairs a query below the warm gate
    gets in all (0: none added)."""
    v = os.environ.get("PG_DIO_BENCH_TPCH_WARM_CHECK", "24").strip()
    if not v.isdigit():
        die(f"PG_DIO_BENCH_TPCH_WARM_CHECK={v}: a number of warm pairs, e.g. 24, or 0")
    return max(int(v), warm) if int(v) > 0 else warm


def settings():
    """Scale factor (text as given, e.g. '1', '0.1'), rounds, warm pairs,
    query numbers, from the environment."""
    sf = os.environ.get("PG_DIO_BENCH_TPCH_SF", "1").strip()
    try:
        if float(sf) <= 0:
            raise ValueError
    except ValueError:
        die(f"PG_DIO_BENCH_TPCH_SF={sf}: a positive number, e.g. 1 or 0.1")
    rounds = int(os.environ.get("PG_DIO_BENCH_TPCH_ROUNDS", "5"))
    warm = int(os.environ.get("PG_DIO_BENCH_TPCH_WARM", "6"))
    if rounds < 1 or warm < 1:
        die("PG_DIO_BENCH_TPCH_ROUNDS and PG_DIO_BENCH_TPCH_WARM must be at least 1")
    qs = os.environ.get("PG_DIO_BENCH_TPCH_QUERIES", "").strip()
    queries = sorted({int(x) for x in re.split(r"[ ,]+", qs) if x}) if qs else list(range(1, 23))
    if any(q < 1 or q > 22 for q in queries):
        die(f"PG_DIO_BENCH_TPCH_QUERIES={qs}: query numbers 1 to 22")
    return sf, rounds, warm, queries


# --- data --------------------------------------------------------------------

def cache_root():
    c = os.environ.get("PG_DIO_BENCH_TPCH_CACHE")
    if not c:
        # beside the bench cluster: <work>/.tmp/clusters/<name>/data -> <work>/.tmp/tpch
        c = os.path.join(os.environ["PG_DIO_DATA"], "..", "..", "..", "tpch")
    return os.path.abspath(c)


def tpch_extension():
    """DuckDB and the path of the TPC-H extension the pip package installed
    for this DuckDB's version."""
    try:
        import duckdb
        import duckdb_extension_tpch
    except ImportError as e:
        die(f"{e}: test/bench/run.sh installs duckdb and duckdb-extension-tpch into the venv")
    path = os.path.join(os.path.dirname(duckdb_extension_tpch.__file__), "extensions",
                        f"v{duckdb.__version__}", "tpch.duckdb_extension")
    if not os.path.exists(path):
        die(f"{path} is missing: duckdb {duckdb.__version__} needs duckdb-extension-tpch "
            "of the same version")
    return duckdb, path


def generate(sf):
    """The data ('|' CSV per table) and q01.sql ... q22.sql of scale factor
    sf, generated once into the cache; returns the directory."""
    d = os.path.join(cache_root(), f"sf{sf}")
    if os.path.exists(os.path.join(d, "info.json")):
        return d
    duckdb, ext = tpch_extension()
    tmp = d + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    print(f"generating TPC-H at scale factor {sf} with duckdb {duckdb.__version__} "
          f"into {d} ...", flush=True)
    t0 = time.time()
    # a file-backed database: larger scale factors need not fit in memory;
    # nothing is installed or loaded from the network
    con = duckdb.connect(os.path.join(tmp, "gen.duckdb"),
                         config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute(f"LOAD '{ext}'")
    con.execute(f"CALL dbgen(sf = {sf})")
    rows = {}
    for t, cols in TABLES.items():
        names = ", ".join(c for c, _ in cols)
        con.execute(f"COPY (SELECT {names} FROM {t}) TO '{os.path.join(tmp, t + '.tbl')}' "
                    "(FORMAT csv, DELIMITER '|', HEADER false)")
        rows[t] = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
    for nr, q in con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall():
        with open(os.path.join(tmp, f"q{nr:02d}.sql"), "w") as f:
            f.write(q.strip() + "\n")
    con.close()
    for f in os.listdir(tmp):
        if f.startswith("gen.duckdb"):
            os.unlink(os.path.join(tmp, f))
    import importlib.metadata as md
    info = {"sf": sf, "duckdb": duckdb.__version__,
            "duckdb_extension_tpch": md.version("duckdb_extension_tpch"), "rows": rows,
            "seconds": round(time.time() - t0, 1)}
    with open(os.path.join(tmp, "info.json"), "w") as f:
        json.dump(info, f, indent=2)
    shutil.rmtree(d, ignore_errors=True)
    os.rename(tmp, d)
    print(f"  generated in {info['seconds']} s: {rows}", flush=True)
    return d


def db_psql(sql):
    return psql(sql, db=DB)


def db_script(script):
    return psql_script(script, db=DB)


def load(d, sf):
    """The database tpch at scale factor sf, loaded from d unless it already
    holds it (its comment says so once the load is complete)."""
    have = psql(f"SELECT shobj_description(oid, 'pg_database') FROM pg_database "
                f"WHERE datname = '{DB}'")
    if have == f"TPC-H sf={sf}":
        return False
    print(f"loading TPC-H at scale factor {sf} into the database {DB} ...", flush=True)
    t0 = time.time()
    psql(f"DROP DATABASE IF EXISTS {DB}")
    psql(f"CREATE DATABASE {DB}")
    ddl = ["CREATE EXTENSION IF NOT EXISTS pg_dio;"]
    for t, cols in TABLES.items():
        ddl.append(f"CREATE TABLE {t} ({', '.join(f'{c} {ty} NOT NULL' for c, ty in cols)});")
    db_script("\n".join(ddl))
    for t in TABLES:
        with open(os.path.join(d, f"{t}.tbl")) as f:
            subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", DB, "-c",
                            f"COPY {t} FROM STDIN (FORMAT csv, DELIMITER '|')"],
                           stdin=f, check=True)
    sql = ["SET maintenance_work_mem = '512MB';"]
    sql += [f"ALTER TABLE {t} ADD PRIMARY KEY ({k});" for t, k in PRIMARY_KEYS.items()]
    sql += [f"CREATE INDEX ON {t} ({cols});" for t, cols in INDEXES]
    sql += ["VACUUM (FREEZE, ANALYZE);", "CHECKPOINT;"]
    db_script("\n".join(sql))
    psql(f"COMMENT ON DATABASE {DB} IS 'TPC-H sf={sf}'")
    print(f"  loaded in {time.time() - t0:.0f} s", flush=True)
    return True


REL_FILTER = "c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')"


def sizes():
    """Per relation of the schema: bytes and, for tables, the share of
    all-visible blocks."""
    rows = db_script(
        "SELECT c.relname, c.relkind, pg_relation_size(c.oid), "
        "coalesce((SELECT all_visible::float8 / nullif(blocks, 0) FROM pg_dio_residency(c.oid) "
        "          WHERE fork = 'main'), 0) "
        f"FROM pg_class c WHERE {REL_FILTER} ORDER BY pg_relation_size(c.oid) DESC;")
    return [{"name": n, "kind": k, "bytes": int(b), "all_visible": float(v)}
            for n, k, b, v in (r.split("|") for r in rows)]


# --- the server ----------------------------------------------------------------

IS_ROOT = os.geteuid() == 0
# huge_pages_status after each restart with the run's settings (another
# cluster on the machine may have taken the huge pages run.sh reserved)
HUGE_PAGES = {}


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def restart(io_method, cold):
    """Restart the bench cluster with the run's settings and io_method; cold:
    drop the OS page cache while it is down (as root), or evict every table
    and index of the schema (pg_dio_evict), then check that none of their
    blocks is in shared buffers or the OS page cache."""
    sets = {**SERVER, "io_method": io_method}
    psql_script(reset_all_sql() + "".join(f"ALTER SYSTEM SET {k} = '{v}';\n"
                                          for k, v in sorted(sets.items())))
    subprocess.run([CLUSTER, "stop", BENCH_CLUSTER], check=True, capture_output=True)
    if cold and IS_ROOT:
        drop_caches()
    subprocess.run([CLUSTER, "start", BENCH_CLUSTER], check=True, capture_output=True)
    server_started()
    hp = psql("SHOW huge_pages_status")
    HUGE_PAGES[hp] = HUGE_PAGES.get(hp, 0) + 1
    if not cold:
        return
    if not IS_ROOT:
        db_psql(f"SELECT count(*) FROM pg_class c, pg_dio_evict(c.oid) WHERE {REL_FILTER}")
    row = db_psql("SELECT coalesce(sum(r.shared_buffers), 0) || ' ' || "
                  "coalesce(sum(coalesce(r.os_cache, -1)), 0) "
                  f"FROM pg_class c, pg_dio_residency(c.oid) r WHERE {REL_FILTER}")
    shared, os_cached = (int(x) for x in row.split())
    if shared != 0 or os_cached != 0:
        die(f"not cold: {shared} blocks of the TPC-H tables and indexes in shared buffers, "
            f"{os_cached} in the OS page cache")
    settle()


def data_device():
    """The /proc/diskstats name of the block device holding the data
    directory; None where it is not one listed there (e.g. an overlay)."""
    st = os.stat(psql("SHOW data_directory"))
    key = (os.major(st.st_dev), os.minor(st.st_dev))
    with open("/proc/diskstats") as f:
        for line in f:
            a = line.split()
            if (int(a[0]), int(a[1])) == key:
                return a[2]
    return None


def bytes_read(dev):
    """Bytes read from 'dev' since boot (its sectors are 512 bytes)."""
    if dev is None:
        return None
    with open("/proc/diskstats") as f:
        for line in f:
            a = line.split()
            if a[2] == dev:
                return int(a[5]) * 512
    return None


def query_text(d, nr):
    with open(os.path.join(d, f"q{nr:02d}.sql")) as f:
        return f.read().strip().rstrip(";")


def ordered(q):
    """Whether the query's result order is defined: an ORDER BY at the top
    level (not inside parentheses)."""
    depth, top = 0, False
    for tok in re.findall(r"\(|\)|\bORDER\s+BY\b", q, re.I):
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0:
            top = True
    return top


def session(side):
    return "".join(f"SET {k} = '{v}';\n" for k, v in SIDES[side].items())


MARK = "@@run "
CPU_MARK = "@@cpu "
# the backend's time on a CPU so far (ns), read after a short sleep: the
# kernel brings a task's figure up to date when it stops running, so read by
# the task itself it is current only right after it has slept
CPU_SQL = (f"SELECT '{CPU_MARK}' || split_part(pg_read_file('/proc/self/schedstat'), ' ', 1) "
           "FROM pg_sleep(0.002);\n")


def backend_cpu_readable(db=DB):
    """Can a session read its backend's CPU time (superuser, Linux)?"""
    out = subprocess.run(["psql", "-X", "-At", "-q", "-d", db, "-c", CPU_SQL],
                         capture_output=True, text=True)
    return out.returncode == 0 and out.stdout.startswith(CPU_MARK)


def run_script(runs, db=DB, cpu=False):
    """runs: [(label, side, query)], all in one session on database db, each
    timed (psql's \\timing: from sending the query to having its rows).
    Returns [(label, seconds, rows)]; with cpu, [(label, seconds, rows, CPU
    seconds)], the CPU time the session's backend spent on the run (only
    the leader's part of a parallel query)."""
    script = ""
    for label, side, q in runs:
        script += "\\timing off\n" + session(side) + (CPU_SQL if cpu else "") + \
            f"\\echo {MARK}{label}\n\\timing on\n{q};\n" + \
            ("\\timing off\n" + CPU_SQL if cpu else "")
    out = subprocess.run(["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1", "-d", db],
                         input=script, capture_output=True, text=True)
    if out.returncode:
        die(f"psql failed ({out.returncode}):\n{out.stderr[-3000:]}")
    res, cur, cpu0 = [], None, None
    for line in out.stdout.splitlines():
        if cpu and cur is None and line.startswith(CPU_MARK):
            ns = int(line[len(CPU_MARK):])
            if res and len(res[-1]) == 3:
                res[-1] = res[-1] + ((ns - cpu0) / 1e9,)
            else:
                cpu0 = ns
        elif line.startswith(MARK):
            cur = [line[len(MARK):], None, []]
        elif cur and cur[1] is None and re.match(r"^Time: [0-9.]+ ms", line):
            cur[1] = float(line.split()[1]) / 1000.0
            res.append(tuple(cur))
            cur = None
        elif cur:
            cur[2].append(line)
    if len(res) != len(runs) or (cpu and any(len(x) != 4 for x in res)):
        die(f"{len(res)} timed results for {len(runs)} runs:\n{out.stdout[-2000:]}")
    return res


def plan_of(q, side):
    out = db_script(session(side) + f"EXPLAIN (FORMAT JSON) {q};")
    return json.loads("\n".join(out))[0]["Plan"]


def plan_nodes(plan):
    """The plan's nodes in order: (name, the node as core would name it
    (None: a node core's plan does not have), parallel aware, relation,
    index)."""
    out = []
    for n in walk(plan):
        name = n["Node Type"]
        if name == "Custom Scan":
            name = n.get("Custom Plan Provider", name)
        out.append((name, PG_DIO_NODES.get(name, name), n.get("Parallel Aware", False),
                    n.get("Relation Name"), n.get("Index Name")))
    return out


def plan_text(q, side):
    return "\n".join(db_script(session(side) + f"EXPLAIN (COSTS OFF) {q};"))


class Checker:
    """Compares every run's rows with core's first run of the query."""

    def __init__(self, d, out_dir, texts):
        self.d, self.out_dir, self.texts = d, out_dir, texts
        self.ref = {}
        self.checked = 0

    def key(self, nr, rows):
        return rows if ordered(self.texts[nr]) else sorted(rows)

    def check(self, nr, side, what, rows):
        k = self.key(nr, rows)
        if nr not in self.ref:
            if side != "core":
                die(f"Q{nr}: no core result to compare with")
            self.ref[nr] = (k, what)
            return
        self.checked += 1
        ref, ref_what = self.ref[nr]
        if k == ref:
            return
        same_rows = sorted(k) == sorted(ref)
        base = os.path.join(self.out_dir, f"tpch-diff-q{nr:02d}")
        with open(base + "-reference.txt", "w") as f:
            f.write("\n".join(ref) + "\n")
        with open(base + f"-{side}.txt", "w") as f:
            f.write("\n".join(rows) + "\n")
        q = self.texts[nr]
        with open(base + "-plans.txt", "w") as f:
            for s in SIDES:
                f.write(f"-- {s}\n{plan_text(q, s)}\n\n")
        die(f"RESULTS DIFFER: Q{nr}, {what} ({side}) against {ref_what} (core): "
            + ("the same rows in another order" if same_rows else
               f"{len(rows)} rows against {len(ref)}, not the same")
            + f"; both outputs and plans in {base}-*.txt")


def digest(rows):
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


# --- fio ------------------------------------------------------------------------

def lineitem_files():
    return relation_segments(os.environ["PG_DIO_DATA"],
                             db_psql("SELECT pg_relation_filepath('lineitem')"))


def fio_round(files):
    settle()
    seq = run_fio(files, 256, 32)
    r1 = run_fio_random(files, 1, seconds=2)
    r32 = run_fio_random(files, 32, seconds=2)
    return {"seq_gib_s": seq["mib_s"] / 1024.0, "rand8k_d1_iops": r1, "rand8k_d32_iops": r32}


# --- the experiment ----------------------------------------------------------------

def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def main(out_dir):
    sf, rounds, warm_pairs, queries = settings()
    t_start = time.time()
    d = generate(sf)
    restart("worker", cold=False)
    uring = psql("SELECT 'io_uring' = ANY (enumvals) FROM pg_settings "
                 "WHERE name = 'io_method'") == "t"
    ios = os.environ.get("PG_DIO_BENCH_TPCH_IO", "worker io_uring" if uring else "worker").split()
    for io in ios:
        if io not in ("worker", "io_uring", "sync"):
            die(f"PG_DIO_BENCH_TPCH_IO: unknown io_method {io}")
        if io == "io_uring" and not uring:
            die("PG_DIO_BENCH_TPCH_IO asks for io_uring, which this server was built without "
                "(make bench PG=18 builds one with liburing)")
    loaded = load(d, sf)
    with open(os.path.join(d, "info.json")) as f:
        info = json.load(f)
    major = int(psql("SHOW server_version_num")) // 10000
    texts = {nr: query_text(d, nr) for nr in queries}
    checker = Checker(d, out_dir, texts)
    rel_sizes = sizes()
    files = lineitem_files()
    dev = data_device()
    warm_cpu = backend_cpu_readable()

    res = {io: {"io_method": io, "sf": sf, "rounds": rounds, "warm_pairs": warm_pairs,
                "queries": queries, "server_settings": {**SERVER, "io_method": io},
                "sides": SIDES, "postgres": psql("SELECT version()"), "major": major,
                "generator": info, "loaded_now": loaded, "relations": rel_sizes,
                "cold": {}, "warm": {}, "warm_cpu": {}, "warm_checked": {}, "plans": {},
                "results": {}, "fio": [],
                "device": dev,
                "cold_method": "drop_caches" if IS_ROOT else "pg_dio_evict",
                "loadavg": {"start": loadavg()}} for io in ios}

    # the plans (the same for every io_method; each report gets them)
    for nr in queries:
        p = {s: plan_of(texts[nr], s) for s in SIDES}
        nodes = {s: plan_nodes(p[s]) for s in SIDES}
        dio = [n[0] for n in nodes["pg_dio"] if n[0] in PG_DIO_NODES]
        same = ([n[1:] for n in nodes["pg_dio"] if n[1] is not None] ==
                [n[1:] for n in nodes["core"]])
        core_custom = [n[0] for n in nodes["core"] if n[0] in PG_DIO_NODES]
        if core_custom:
            die(f"Q{nr}: core's plan has pg_dio's nodes {core_custom}")
        for io in ios:
            res[io]["plans"][str(nr)] = {
                "pg_dio_nodes": {n: dio.count(n) for n in dict.fromkeys(dio)},
                "same_shape": same,
                "pg_dio": plan_text(texts[nr], "pg_dio"),
                "core_nodes": [n[0] for n in nodes["core"]]}
        print(f"Q{nr}: pg_dio nodes {', '.join(dio) or 'none'}"
              + ("" if same else "  (plan shape differs from core's!)"), flush=True)

    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", flush=True)
        f = fio_round(files)
        for io in ios:
            res[io]["fio"].append(f)
        print(f"  fio: sequential {f['seq_gib_s']:.2f} GiB/s, random 8 kB "
              f"{f['rand8k_d1_iops']:.0f} IOPS at depth 1, {f['rand8k_d32_iops']:.0f} at 32",
              flush=True)
        order = list(SIDES) if r % 2 == 0 else list(SIDES)[::-1]
        for nr in queries:
            for io in ios:
                line = []
                for side in order:
                    restart(io, cold=True)
                    b0 = bytes_read(dev)
                    (_, secs, rows), = run_script([(f"cold-{side}", side, texts[nr])])
                    b1 = bytes_read(dev)
                    checker.check(nr, side, f"cold run, round {r + 1}, {io}", rows)
                    res[io]["cold"].setdefault(str(nr), {}).setdefault(side, []).append(
                        {"round": r + 1, "seconds": secs, "rows": len(rows),
                         "device_bytes": None if b0 is None else b1 - b0})
                    res[io]["results"][str(nr)] = {"rows": len(rows), "sha256_16": digest(
                        checker.key(nr, rows))}
                    line.append(f"{side} {secs:.2f} s")
                print(f"  Q{nr} {io}: " + ", ".join(line), flush=True)

    # warm: in one session per query, after a warm-up of each side
    def warm_session(io, nr, pairs):
        runs = [(f"warmup-{s}", s, texts[nr]) for s in SIDES]
        for i in range(pairs):
            for s in (list(SIDES) if i % 2 == 0 else list(SIDES)[::-1]):
                runs.append((f"warm-{s}", s, texts[nr]))
        for label, secs, rows, *cpu in run_script(runs, cpu=warm_cpu):
            side = label.split("-", 1)[1]
            checker.check(nr, side, f"{label} run, {io}", rows)
            if label.startswith("warm-"):
                res[io]["warm"].setdefault(str(nr), {}).setdefault(side, []).append(secs)
                if cpu:
                    res[io]["warm_cpu"].setdefault(str(nr), {}).setdefault(side, []).append(cpu[0])

    # a query below the warm gate after its pairs gets more, in a session
    # of its own, up to warm_check pairs in all: a pair's ratio moves by
    # 5-15% on this machine, 4-6 pairs cannot tell 0.98 from 1.00
    warm_check = warm_check_pairs(warm_pairs)
    for io in ios:
        res[io]["warm_check"] = warm_check
        restart(io, cold=False)
        for nr in queries:
            warm_session(io, nr, warm_pairs)
            w = res[io]["warm"][str(nr)]
            if warm_pair_ratio(w) < WARM_GATE and warm_check > warm_pairs:
                warm_session(io, nr, warm_check - warm_pairs)
                res[io]["warm_checked"][str(nr)] = warm_check
            print(f"  warm Q{nr} {io}: core {statistics.median(w['core']):.3f} s, "
                  f"pg_dio {statistics.median(w['pg_dio']):.3f} s, "
                  f"{warm_pair_ratio(w):.2f} ({len(w['core'])} pairs)", flush=True)
        res[io]["loadavg"]["end"] = loadavg()

    # back to the cluster's own settings
    psql_script(reset_all_sql())
    subprocess.run([CLUSTER, "stop", BENCH_CLUSTER], check=True, capture_output=True)
    subprocess.run([CLUSTER, "start", BENCH_CLUSTER], check=True, capture_output=True)
    server_started()

    elapsed = time.time() - t_start
    for io in ios:
        r = res[io]
        r["results_checked"] = checker.checked
        r["settle_text"] = settle_text()
        r["elapsed_s"] = round(elapsed)
        r["memory"] = fio_mem_text()
        r["memory_state"] = memory_state()
        r["huge_pages_status"] = ", ".join(f"{k} ({v} starts)" for k, v in HUGE_PAGES.items())
        name = f"tpch-{io}-pg{major}" + ("" if WORKERS == "2" else f"-workers{WORKERS}")
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(r, f, indent=2)
        write_report(out_dir, name + ".md", report(r))


def report(r):
    io, sf, rounds = r["io_method"], r["sf"], r["rounds"]
    med = statistics.median

    def cold(nr, side):
        return [x["seconds"] for x in r["cold"][nr][side]]

    def round_ratios(nr):
        """core / pg_dio of the pair run side by side in each round."""
        c = {x["round"]: x["seconds"] for x in r["cold"][nr]["core"]}
        p = {x["round"]: x["seconds"] for x in r["cold"][nr]["pg_dio"]}
        return [c[k] / p[k] for k in sorted(c) if k in p]

    def warm_ratios(nr, what="warm"):
        w = r[what][nr]
        return [a / b for a, b in zip(w["core"], w["pg_dio"])]

    wcpu = r.get("warm_cpu") or {}
    serial = str(r["server_settings"]["max_parallel_workers_per_gather"]) == "0"

    checked = r.get("warm_checked") or {}

    def warm_text(nr):
        t = f"{med(warm_ratios(nr)):.2f}"
        return t + (f" ({checked[nr]} pairs)" if nr in checked else "")

    def cpu_ratio(nr):
        return f"{med(warm_ratios(nr, 'warm_cpu')):.2f}" if nr in wcpu else "—"

    fio = r["fio"]
    data_gib = sum(x["bytes"] for x in r["relations"]) / 2**30
    tables_gib = sum(x["bytes"] for x in r["relations"] if x["kind"] == "r") / 2**30
    av = min((x["all_visible"] for x in r["relations"] if x["kind"] == "r"
              and x["bytes"] > 0), default=0)
    cold_how = ("the server stopped, `sync; echo 3 > /proc/sys/vm/drop_caches`, started"
                if r["cold_method"] == "drop_caches" else
                "the server restarted, every table and index evicted with pg_dio_evict (not root)")
    lines = [f"## TPC-H, scale factor {sf}: core vs pg_dio, io_method={io}, "
             f"PostgreSQL {r['major']} ({rounds} rounds)", ""]
    if rounds < 3:
        lines += [f"**{rounds} round(s) only: a smoke run of the machinery; the issue's "
                  "yardstick needs at least 3 (PG_DIO_BENCH_TPCH_ROUNDS).**", ""]
    lines += [
        f"Data: DuckDB {r['generator']['duckdb']} with duckdb-extension-tpch "
        f"{r['generator']['duckdb_extension_tpch']} (PyPI), {r['generator']['rows']['lineitem']} "
        f"lineitem rows; {tables_gib:.2f} GiB of tables, {data_gib:.2f} GiB with indexes; every "
        f"table {av:.0%} or more all-visible (VACUUM (FREEZE, ANALYZE) after the load). "
        f"Server: shared_buffers = {r['server_settings']['shared_buffers']}, "
        f"max_parallel_workers_per_gather = {r['server_settings']['max_parallel_workers_per_gather']}, "
        f"huge_pages_status = {r['huge_pages_status']}; {r['postgres'].split(',')[0]}. "
        "core = `pg_dio.enable_direct_scan`, `pg_dio.enable_index_prefetch` and "
        "`pg_dio.enable_probe_prefetch` off (core's plan), pg_dio = all on (the defaults).", "",
        f"Cold: before every run {cold_how}, and no block of the TPC-H tables and indexes in "
        "shared buffers or the OS page cache (pg_dio_residency); core and pg_dio alternated "
        "(A B, then B A in the next round), each query's pair side by side in each round. "
        "Time: psql's `\\timing` in a new session (planning, execution, rows to the client). "
        f"Warm: one session per query, each side once to warm up, then {r['warm_pairs']} "
        "pair(s) alternated"
        + (f"; a query whose median pair ratio is then below {WARM_GATE} gets more pairs "
           f"in a second such session, to {r['warm_check']} in all (its warm ratio marked "
           "with the count)" if r.get("warm_check", 0) > r["warm_pairs"] else "")
        + ". CPU = the warm time, I/O = cold minus warm (medians). "
        + ("Warm CPU: the time the session's backend spent on a CPU in each warm run "
           "(/proc/self/schedstat, read after a 2 ms sleep before and after the run), the "
           "median of the pairs' ratios; not disturbed by what else the machine runs, "
           + ("and with serial plans the whole query's. " if serial else
              "but with parallel plans only the leader's part of the query. ")
           if wcpu else "Warm CPU: not measured (it needs a superuser session on Linux). "),
        f"Every run's rows equal core's first run's ({r['results_checked']} comparisons; in "
        "order where the query orders). " + r["settle_text"],
        "",
        f"The device: fio O_DIRECT over lineitem's files at the start of each round "
        f"({r['memory']}): sequential 256 kB × 32 "
        f"{med([x['seq_gib_s'] for x in fio]):.2f} ({min(x['seq_gib_s'] for x in fio):.2f}–"
        f"{max(x['seq_gib_s'] for x in fio):.2f}) GiB/s, random 8 kB at depth 1 "
        f"{med([x['rand8k_d1_iops'] for x in fio]):.0f} IOPS, at depth 32 "
        f"{med([x['rand8k_d32_iops'] for x in fio]):.0f} IOPS (medians over the rounds). "
        f"Load average {' / '.join(f'{x:.2f}' for x in r['loadavg']['start'])} at the start, "
        f"{' / '.join(f'{x:.2f}' for x in r['loadavg']['end'])} at the end "
        f"(the machine has {os.cpu_count()} CPUs); the whole experiment took "
        f"{r['elapsed_s'] / 60:.0f} minutes.", "",
        "Seconds are medians over the rounds; core/pg_dio > 1 means pg_dio was faster; the "
        "cold ratio is that of the medians, with the range of the rounds' pairs' ratios.", "",
        "MB read: what the cold run read from the device holding the data directory "
        f"(`{r.get('device') or 'not found'}` in /proc/diskstats, before and after it; median). "
        "At fio's rate: the time pg_dio's bytes take at fio's sequential rate (median): no read "
        "path that reads them has its I/O done sooner.", "",
        "| query | pg_dio nodes | core cold s | pg_dio cold s | core/pg_dio cold (rounds) | "
        "core warm s | pg_dio warm s | core/pg_dio warm | core/pg_dio warm CPU | "
        "core CPU + I/O s | pg_dio CPU + I/O s | MB read core / pg_dio | at fio's rate s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    seq_bps = med([x["seq_gib_s"] for x in fio]) * 2**30

    def mb_read(nr, side):
        v = [x["device_bytes"] for x in r["cold"][nr][side] if x.get("device_bytes") is not None]
        return med(v) / 2**20 if v else None
    tot = {"cc": 0.0, "pc": 0.0, "cw": 0.0, "pw": 0.0, "cm": 0.0, "pm": 0.0}
    slower, slower_all, shape, same_plan, warm_low = [], [], [], [], []
    for nr in map(str, r["queries"]):
        cc, pc = med(cold(nr, "core")), med(cold(nr, "pg_dio"))
        cw, pw = med(r["warm"][nr]["core"]), med(r["warm"][nr]["pg_dio"])
        rr = round_ratios(nr)
        if med(warm_ratios(nr)) < WARM_GATE:
            warm_low.append(f"Q{nr} {warm_text(nr)}")
        tot["cc"] += cc
        tot["pc"] += pc
        tot["cw"] += cw
        tot["pw"] += pw
        cm, pm = mb_read(nr, "core"), mb_read(nr, "pg_dio")
        if cm is None or pm is None:
            mbtext = "— | —"
            tot["cm"] = tot["pm"] = None
        else:
            mbtext = f"{cm:.0f} / {pm:.0f} | {pm * 2**20 / seq_bps:.2f}"
            if tot["cm"] is not None:
                tot["cm"] += cm
                tot["pm"] += pm
        nodes = r["plans"][nr]["pg_dio_nodes"]
        ntext = ", ".join(f"{n}" + (f" ×{c}" if c > 1 else "") for n, c in nodes.items()) or "—"
        if not r["plans"][nr]["same_shape"]:
            shape.append(f"Q{nr}")
        if not nodes:
            same_plan.append(cc / pc)
        elif max(rr) < 1:
            slower_all.append(f"Q{nr} {cc / pc:.2f} ({min(rr):.2f}–{max(rr):.2f})")
        elif cc / pc < 1:
            slower.append(f"Q{nr} {cc / pc:.2f}")
        lines.append(
            f"| Q{nr} | {ntext} | {cc:.2f} | {pc:.2f} | {cc / pc:.2f} ({min(rr):.2f}–{max(rr):.2f}) | "
            f"{cw:.3f} | {pw:.3f} | {warm_text(nr)} | {cpu_ratio(nr)} | "
            f"{cw:.2f} + {max(cc - cw, 0):.2f} | "
            f"{pw:.2f} + {max(pc - pw, 0):.2f} | {mbtext} |")
    lines.append(f"| all | | {tot['cc']:.2f} | {tot['pc']:.2f} | {tot['cc'] / tot['pc']:.2f} | "
                 f"{tot['cw']:.3f} | {tot['pw']:.3f} | {tot['cw'] / tot['pw']:.2f} | "
                 + (f"{sum(med(wcpu[n]['core']) for n in wcpu) / sum(med(wcpu[n]['pg_dio']) for n in wcpu):.2f} | "
                    if len(wcpu) == len(r["queries"]) else "— | ")
                 + f"{tot['cw']:.2f} + {max(tot['cc'] - tot['cw'], 0):.2f} | "
                 f"{tot['pw']:.2f} + {max(tot['pc'] - tot['pw'], 0):.2f} | "
                 + ("— | — |" if tot["cm"] is None else
                    f"{tot['cm']:.0f} / {tot['pm']:.0f} | {tot['pm'] * 2**20 / seq_bps:.2f} |"))
    lines += ["", "Slower with pg_dio, cold, in every round (each pair's core/pg_dio below 1): "
              + (", ".join(slower_all) if slower_all else "none") + ". "
              "Slower by the medians, not in every round: "
              + (", ".join(slower) if slower else "none") + ". "
              f"Warm below {WARM_GATE} (the median of the pairs' ratios): "
              + (", ".join(warm_low) if warm_low else "none") + ". "
              + (f"The queries without a pg_dio node run the same plan on both sides, so their "
                 f"cold ratios, {min(same_plan):.2f}–{max(same_plan):.2f} "
                 f"({len(same_plan)} queries), are this run's noise. " if same_plan else "")
              + ("pg_dio's plan differs from core's beyond its scan nodes in: " + ", ".join(shape)
                 if shape else "Every pg_dio plan is core's with its scans swapped (node by node).")]
    return lines


if __name__ == "__main__":
    if len(sys.argv) != 2:
        die("usage: tpch.py OUT_DIR")
    main(sys.argv[1])
