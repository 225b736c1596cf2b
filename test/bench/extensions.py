#!/usr/bin/env python3
"""TimescaleDB and Citus: cold scans with pg_dio's scans off (core) and on.

test/bench/extensions.sh builds everything, starts the clusters (TimescaleDB:
one; Citus: a coordinator and two workers) and runs

  extensions.py timescaledb|citus OUT_DIR NODE...   (the queries go to the first NODE)

timescaledb  the hypertable m (time, dev, val, filler): PG_DIO_BENCH_EXT_ROWS
             rows (default 7.5M: about 1.5 GiB), one second apart, 200k rows
             a chunk (38 chunks of ~40 MB), dev cycling through 1000 devices
             in a scattered order, an index on (dev, time DESC) beside
             TimescaleDB's on time.  Queries: count(*) and sum(val) of the hypertable; a
             time range (the newest three quarters, "time < now()", so that
             ChunkAppend excludes chunks at executor start-up); the newest
             rows of one device (ChunkAppend in time order over an index scan
             of each chunk, each row on a page of its own).
citus        the table ev (id, key, val, filler), as many rows, hash-distributed
             by id over 32 shards on the two workers, key in random heap order
             with an index on it.  Queries: count(*) and sum(val); the first rows
             by key from a point on (ORDER BY key, id LIMIT: each shard reads
             its index on key in order, its rows scattered over the heap).
cold         before every run: every node stopped, sync, echo 3 >
             /proc/sys/vm/drop_caches (as root; otherwise every table and
             index evicted with pg_dio_evict after the start), started; no
             block of the data's tables and indexes in shared buffers or the
             OS page cache on any node (pg_dio_residency); the settle wait.
             The side's settings are set with ALTER SYSTEM on every node (a
             client's SET does not reach Citus' own connections to the
             workers) and checked with SHOW after the start.
rounds       PG_DIO_BENCH_EXT_ROUNDS (default 3): each query core then
             pg_dio, pg_dio then core in the next round.
results      every run's rows equal core's first run's (every query's order
             is defined); a difference stops the run.
plans        EXPLAIN with each side's settings before the rounds: pg_dio's
             plan has the query's pg_dio node (with Citus, in every task:
             citus.explain_all_tasks), core's no pg_dio node; after the
             rounds EXPLAIN (ANALYZE, BUFFERS) of each query with pg_dio's
             scans, cold, goes to <exp>-explain.txt, checked the same way.
fio          at the start of each round over the data's files: sequential
             256 kB x 32 and random 8 kB at depth 1 and 32, O_DIRECT
             (tpch.py's fio_round).

Reports: <exp>-pg<major>.md and .json in OUT_DIR.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from engine_vs_fio import (fio_mem_text, psql, psql_script, relation_segments,  # noqa: E402
                           settle, settle_text, write_report)
from tpch import SIDES, drop_caches, fio_round, loadavg, run_script  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "test", "cluster.sh")
IS_ROOT = os.geteuid() == 0
ROWS = int(os.environ.get("PG_DIO_BENCH_EXT_ROWS", "7500000"))
ROUNDS = int(os.environ.get("PG_DIO_BENCH_EXT_ROUNDS", "3"))
PG_DIO_NODE = re.compile(r"Custom Scan \((DirectSeqScan|PrefetchIndexScan|PrefetchIndexOnlyScan)\)")
# the rows of a filler column: ~200-byte rows, ~40 a page
FILLER = "repeat(md5(g::text), 4)"
T0 = "2025-01-01 00:00:00+00"


def die(msg):
    sys.exit(f"extensions.py: {msg}")


# --- the experiments ------------------------------------------------------------

def tsdb_setup(nodes):
    chunk_rows = max(ROWS // 40, 200000)
    return [f"""
CREATE EXTENSION timescaledb;
CREATE EXTENSION pg_dio;
CREATE TABLE m (time timestamptz NOT NULL, dev int NOT NULL, val int NOT NULL, filler text NOT NULL);
SELECT count(*) FROM create_hypertable('m', 'time', chunk_time_interval => interval '{chunk_rows} seconds');
INSERT INTO m SELECT timestamptz '{T0}' + g * interval '1 second', (g::bigint * 7919) % 1000, g % 100000, {FILLER}
  FROM generate_series(1, {ROWS}) g;
CREATE INDEX m_dev_time ON m (dev, time DESC);
VACUUM (FREEZE, ANALYZE) m;
CHECKPOINT;
"""]


def citus_setup(nodes):
    ports = {n: ENV[n]["PGPORT"] for n in nodes}
    return [
        "CREATE EXTENSION citus; CREATE EXTENSION pg_dio;",
        f"SELECT citus_set_coordinator_host('127.0.0.1', {ports[nodes[0]]});"
        + "".join(f"SELECT citus_add_node('127.0.0.1', {ports[w]});" for w in nodes[1:]),
        f"""
SET citus.shard_count = 32;
CREATE TABLE ev (id bigint NOT NULL, key int NOT NULL, val int NOT NULL, filler text NOT NULL);
SELECT create_distributed_table('ev', 'id');
INSERT INTO ev SELECT g, (g::bigint * 7919) % 1000003, g % 100000, {FILLER} FROM generate_series(1, {ROWS}) g;
CREATE INDEX ev_key ON ev (key);
VACUUM (FREEZE, ANALYZE) ev;
"""]


EXPERIMENTS = {
    "timescaledb": {
        "title": "TimescaleDB 2.29.2: a hypertable read cold through ChunkAppend",
        "setup": tsdb_setup,
        # the data's relations on a node (with what a session needs to see them)
        "prelude": "",
        "relations": "(c.relnamespace = 'public'::regnamespace OR "
                     "(c.relnamespace = '_timescaledb_internal'::regnamespace AND c.relname LIKE '\\_hyper\\_%'))",
        "parts": "SELECT count(*) FROM show_chunks('m')",
        "parts_name": "chunks",
        "explain": "",
        "queries": [
            # (count(*) alone reads an index only)
            ("count", "SELECT count(*), sum(val) FROM m", ["DirectSeqScan"]),
            ("time_range", f"SELECT count(*), sum(val) FROM m WHERE time >= timestamptz '{T0}' "
             f"+ interval '{ROWS // 4} seconds' AND time < now()", ["DirectSeqScan"]),
            ("device_newest", "SELECT time, val FROM m WHERE dev = 7 ORDER BY time DESC LIMIT "
             f"{max(ROWS // 1500, 100)}", ["PrefetchIndexScan"]),
        ],
    },
    "citus": {
        "title": "Citus 14.0.1: a distributed table read cold on two workers",
        "setup": citus_setup,
        "prelude": "SET citus.show_shards_for_app_name_prefixes = '*';\n",
        "relations": "c.relnamespace = 'public'::regnamespace",
        "parts": "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'ev'::regclass",
        "parts_name": "shards",
        "explain": "SET citus.explain_all_tasks = on;\n",
        "queries": [
            # (count(*) alone reads the index on key only, in parallel:
            # core's Parallel Index Only Scan)
            ("count", "SELECT count(*), sum(val) FROM ev", ["DirectSeqScan"]),
            # the first rows by key from a point on: ORDER BY and LIMIT go
            # down to each shard, which reads its index on key in order (a
            # range counted instead is read by a bitmap scan)
            ("key_range", "SELECT id, key, val FROM ev WHERE key >= 500000 ORDER BY key, id "
             f"LIMIT {max(ROWS // 15000, 10)}", ["PrefetchIndexScan"]),
        ],
    },
}

# --- the nodes ------------------------------------------------------------------

ENV = {}                        # node -> PGHOST, PGPORT, PGUSER


def node_env(name):
    out = subprocess.run([CLUSTER, "env", name], check=True, capture_output=True,
                         text=True).stdout
    kv = dict(x.split("=", 1) for x in out.split() if "=" in x)
    return {k: kv[k] for k in ("PGHOST", "PGPORT", "PGUSER")}


def use(node):
    """psql (engine_vs_fio's and tpch's helpers) connects to node from now on."""
    os.environ.update(ENV[node])


def on(node, sql):
    use(node)
    try:
        return psql_script(sql)
    except subprocess.CalledProcessError as e:
        die(f"{node}: psql failed: {e.stderr.strip()}\n{sql}")


def rel_filter(exp):
    return f"{exp['relations']} AND c.relkind IN ('r', 'i')"


def set_side(nodes, side, reload):
    """The side's settings on every node (ALTER SYSTEM), in force at the next
    start, or at once with reload."""
    sql = "".join(f"ALTER SYSTEM SET {k} = '{v}';\n" for k, v in SIDES[side].items())
    for n in nodes:
        on(n, sql + ("SELECT pg_reload_conf();" if reload else ""))
    if reload:
        time.sleep(1)
        check_side(nodes, side)


def check_side(nodes, side):
    for n in nodes:
        for k, v in SIDES[side].items():
            if on(n, f"SHOW {k}") != [v]:
                die(f"{n}: {k} is not {v}")


def restart_cold(exp, nodes):
    """Every node stopped, the OS page cache dropped (as root), started; no
    block of the data in shared buffers or the OS page cache anywhere."""
    for n in nodes:
        subprocess.run([CLUSTER, "stop", n], check=True, capture_output=True)
    if IS_ROOT:
        drop_caches()
    for n in nodes:
        subprocess.run([CLUSTER, "start", n], check=True, capture_output=True)
    for n in nodes:
        if not IS_ROOT:
            on(n, exp["prelude"] + f"SELECT count(pg_dio_evict(c.oid)) FROM pg_class c WHERE {rel_filter(exp)};")
        warm = on(n, exp["prelude"] + "SELECT c.relname, r.fork, r.shared_buffers, r.os_cache "
                  f"FROM pg_class c, pg_dio_residency(c.oid) r WHERE {rel_filter(exp)} "
                  "AND (r.shared_buffers <> 0 OR r.os_cache IS DISTINCT FROM 0);")
        if warm:
            die(f"{n} not cold: blocks of the data in shared buffers or the OS page cache "
                "(relation|fork|shared buffers|OS cache):\n" + "\n".join(warm))
    settle()


def data_files(exp, nodes):
    files, sizes = [], {"r": 0, "i": 0}
    for n in nodes:
        data = on(n, "SHOW data_directory")[0]
        for line in on(n, exp["prelude"] + "SELECT c.relkind, pg_relation_size(c.oid), "
                       f"pg_relation_filepath(c.oid) FROM pg_class c WHERE {rel_filter(exp)};"):
            kind, size, path = line.split("|")
            sizes[kind] += int(size)
            if kind == "r" and int(size) > 0:
                files += relation_segments(data, path)
    return files, sizes


# --- plans ------------------------------------------------------------------------

def explain(exp, nodes, side, q, analyze):
    use(nodes[0])
    opts = "ANALYZE, BUFFERS, COSTS OFF" if analyze else "COSTS OFF"
    return "\n".join(psql_script("".join(f"SET {k} = '{v}';\n" for k, v in SIDES[side].items())
                                 + exp["explain"] + f"EXPLAIN ({opts}) {q};"))


def custom_nodes(text):
    """The plan's Custom Scan nodes by name, with their counts."""
    names = re.findall(r"Custom Scan \(([^)]+)\)", text)
    return {n: names.count(n) for n in dict.fromkeys(names)}


def check_plan(name, side, want, text):
    """pg_dio's plan has pg_dio nodes, all of them of the names in want (with
    Citus one in each task); core's has none."""
    dio = PG_DIO_NODE.findall(text)
    tasks = re.search(r"Task Count: (\d+)", text)
    if side == "core":
        ok = not dio
    else:
        ok = dio and set(dio) <= set(want) and (tasks is None or len(dio) == int(tasks.group(1)))
    if not ok:
        print(text)
        die(f"{name}: the {side} plan has the pg_dio nodes {dio}; expected "
            + ("none" if side == "core" else f"{' or '.join(want)} (in each task)"))


def check_io(name, want, text):
    """EXPLAIN ANALYZE of a cold pg_dio run: its DirectSeqScans read blocks
    with O_DIRECT, its PrefetchIndexScans asked for heap blocks."""
    direct = sum(int(x) for x in re.findall(r"Direct I/O: blocks=(\d+)", text))
    requested = sum(int(x) for x in re.findall(r"Heap Blocks: requested=(\d+)", text))
    if ("DirectSeqScan" in want and direct == 0) or ("PrefetchIndexScan" in want and requested == 0):
        print(text)
        die(f"{name}: pg_dio's scans read {direct} blocks directly and asked for {requested} "
            "heap blocks")


# --- the experiment ------------------------------------------------------------------

def main(name, out_dir, nodes):
    exp = EXPERIMENTS[name]
    if ROUNDS < 1 or ROWS < 1000:
        die("PG_DIO_BENCH_EXT_ROUNDS must be at least 1, PG_DIO_BENCH_EXT_ROWS 1000")
    t_start = time.time()
    for n in nodes:
        ENV[n] = node_env(n)
    loads = {"start": loadavg()}
    print(f"{name}: loading {ROWS} rows ...", flush=True)
    for i, sql in enumerate(exp["setup"](nodes)):
        # the first statement (the extensions) on every node, the rest through the first
        for n in (nodes if i == 0 else nodes[:1]):
            on(n, sql)
    for n in nodes:
        on(n, "CHECKPOINT")
    load_s = time.time() - t_start
    files, sizes = data_files(exp, nodes)
    use(nodes[0])
    parts = psql(exp["parts"])
    print(f"  loaded in {load_s:.0f} s: {sizes['r'] / 2**30:.2f} GiB of tables, "
          f"{sizes['i'] / 2**30:.2f} GiB of indexes, {parts} {exp['parts_name']}", flush=True)

    res = {"experiment": name, "title": exp["title"], "rows": ROWS, "rounds": ROUNDS,
           "nodes": nodes, "postgres": psql("SELECT version()"),
           "major": int(psql("SHOW server_version_num")) // 10000,
           "io_method": psql("SHOW io_method"), "shared_buffers": psql("SHOW shared_buffers"),
           "max_parallel_workers_per_gather": psql("SHOW max_parallel_workers_per_gather"),
           "huge_pages_status": psql("SHOW huge_pages_status"),
           "preload": psql("SHOW shared_preload_libraries"), "parts": int(parts),
           "parts_name": exp["parts_name"],
           "table_bytes": sizes["r"], "index_bytes": sizes["i"], "load_s": round(load_s),
           "cold_method": "drop_caches" if IS_ROOT else "pg_dio_evict", "sides": SIDES,
           "queries": {}, "fio": [], "loadavg": loads}
    for qname, q, want in exp["queries"]:
        res["queries"][qname] = {"sql": q, "want": want, "core": [], "pg_dio": []}
    for side in SIDES:
        set_side(nodes, side, reload=True)
        for qname, q, want in exp["queries"]:
            text = explain(exp, nodes, side, q, analyze=False)
            check_plan(qname, side, want, text)
            res["queries"][qname]["nodes_" + side] = custom_nodes(text)

    ref = {}
    for r in range(ROUNDS):
        print(f"round {r + 1}/{ROUNDS}", flush=True)
        try:
            f = fio_round(files)
        except subprocess.CalledProcessError as e:
            die(f"fio failed: {e.stderr.strip()}")
        res["fio"].append(f)
        print(f"  fio: sequential {f['seq_gib_s']:.2f} GiB/s, random 8 kB "
              f"{f['rand8k_d1_iops']:.0f} IOPS at depth 1, {f['rand8k_d32_iops']:.0f} at 32",
              flush=True)
        order = list(SIDES) if r % 2 == 0 else list(SIDES)[::-1]
        for qname, q, _ in exp["queries"]:
            line = []
            for side in order:
                set_side(nodes, side, reload=False)
                restart_cold(exp, nodes)
                check_side(nodes, side)
                use(nodes[0])
                (_, secs, rows), = run_script([(qname, side, q)], db="postgres")
                if qname not in ref:
                    ref[qname] = (rows, f"{side}, round {r + 1}")
                elif rows != ref[qname][0]:
                    base = os.path.join(out_dir, f"{name}-diff-{qname}")
                    for suffix, rr in (("reference", ref[qname][0]), (side, rows)):
                        with open(f"{base}-{suffix}.txt", "w") as fh:
                            fh.write("\n".join(rr) + "\n")
                    die(f"RESULTS DIFFER: {qname}, {side} in round {r + 1} against "
                        f"{ref[qname][1]}; both in {base}-*.txt")
                res["queries"][qname][side].append({"round": r + 1, "seconds": secs})
                res["queries"][qname]["rows"] = len(rows)
                line.append(f"{side} {secs:.2f} s")
            print(f"  {qname}: " + ", ".join(line), flush=True)

    # EXPLAIN ANALYZE of a cold pg_dio run of each query
    explain_file = os.path.join(out_dir, f"{name}-explain.txt")
    set_side(nodes, "pg_dio", reload=False)
    with open(explain_file, "w") as fh:
        for qname, q, want in exp["queries"]:
            restart_cold(exp, nodes)
            text = explain(exp, nodes, "pg_dio", q, analyze=True)
            check_plan(qname, "pg_dio", want, text)
            check_io(qname, want, text)
            fh.write(f"-- {qname}, cold, pg_dio's scans at their defaults\n"
                     f"{exp['explain']}EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {q};\n{text}\n\n")
    loads["end"] = loadavg()
    res["settle_text"] = settle_text()
    res["memory"] = fio_mem_text()
    res["elapsed_s"] = round(time.time() - t_start)
    base = f"{name}-pg{res['major']}"
    with open(os.path.join(out_dir, base + ".json"), "w") as fh:
        json.dump(res, fh, indent=2)
    write_report(out_dir, base + ".md", report(res, os.path.basename(explain_file)))


def report(r, explain_file):
    med = statistics.median
    fio = r["fio"]
    cold_how = ("every node stopped, `sync; echo 3 > /proc/sys/vm/drop_caches`, started"
                if r["cold_method"] == "drop_caches" else
                "every node restarted, every table and index evicted with pg_dio_evict (not root)")
    lines = [f"## {r['title']}: core vs pg_dio, cold ({r['rounds']} rounds)", ""]
    if r["rounds"] < 3:
        lines += [f"**{r['rounds']} round(s) only: a smoke run of the machinery.**", ""]
    lines += [
        f"Data: {r['rows']} rows, {r['table_bytes'] / 2**30:.2f} GiB of tables and "
        f"{r['index_bytes'] / 2**30:.2f} GiB of indexes in {r['parts']} {r['parts_name']} "
        f"(loaded in {r['load_s']} s). {'Nodes' if len(r['nodes']) > 1 else 'Cluster'}: "
        f"{', '.join(r['nodes'])}, {'each ' if len(r['nodes']) > 1 else ''}with "
        f"shared_preload_libraries = '{r['preload']}', shared_buffers = {r['shared_buffers']}, "
        f"io_method = {r['io_method']}, max_parallel_workers_per_gather = "
        f"{r['max_parallel_workers_per_gather']}, huge_pages_status = {r['huge_pages_status']}; "
        f"{r['postgres'].split(',')[0]}. core = `pg_dio.enable_direct_scan`, "
        "`pg_dio.enable_index_prefetch` and `pg_dio.enable_probe_prefetch` off, pg_dio = all on "
        "(the defaults), set with ALTER "
        "SYSTEM on every node.", "",
        f"Cold: before every run {cold_how}, and no block of the data's tables and indexes in "
        "shared buffers or the OS page cache of any node (pg_dio_residency); core and pg_dio "
        "alternated (A B, then B A in the next round). Time: psql's `\\timing` in a new session "
        "(planning, execution, rows to the client). Every run's rows equal core's first run's. "
        + r["settle_text"], "",
        f"The device: fio O_DIRECT over the data's table files at the start of each round "
        f"({r['memory']}): sequential 256 kB × 32 {med([x['seq_gib_s'] for x in fio]):.2f} "
        f"({min(x['seq_gib_s'] for x in fio):.2f}–{max(x['seq_gib_s'] for x in fio):.2f}) GiB/s, "
        f"random 8 kB at depth 1 {med([x['rand8k_d1_iops'] for x in fio]):.0f} IOPS, at depth 32 "
        f"{med([x['rand8k_d32_iops'] for x in fio]):.0f} IOPS (medians over the rounds). Load "
        f"average {' / '.join(f'{x:.2f}' for x in r['loadavg']['start'])} at the start, "
        f"{' / '.join(f'{x:.2f}' for x in r['loadavg']['end'])} at the end ({os.cpu_count()} "
        f"CPUs); the experiment took {r['elapsed_s'] / 60:.0f} minutes. EXPLAIN (ANALYZE) of a "
        f"cold pg_dio run of each query: `{explain_file}`.", "",
        "Seconds: median (min–max) over the rounds; core/pg_dio > 1 means pg_dio was faster: "
        "the ratio of the medians, with the range of the rounds' side-by-side pairs.", "",
        "| query | rows | pg_dio's plan | core cold s | pg_dio cold s | core/pg_dio (pairs) |",
        "|---|---|---|---|---|---|"]
    for qname, d in r["queries"].items():
        c = [x["seconds"] for x in d["core"]]
        p = [x["seconds"] for x in d["pg_dio"]]
        pc = {x["round"]: x["seconds"] for x in d["pg_dio"]}
        pairs = [x["seconds"] / pc[x["round"]] for x in d["core"]]
        nodes = ", ".join(f"{n}" + (f" ×{k}" if k > 1 else "") for n, k in d["nodes_pg_dio"].items())
        lines.append(f"| {qname}: `{d['sql']}` | {d['rows']} | {nodes} | {med(c):.2f} "
                     f"({min(c):.2f}–{max(c):.2f}) | {med(p):.2f} ({min(p):.2f}–{max(p):.2f}) | "
                     f"{med(c) / med(p):.2f} ({min(pairs):.2f}–{max(pairs):.2f}) |")
    return lines


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in EXPERIMENTS:
        die("usage: extensions.py timescaledb|citus OUT_DIR NODE...")
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
