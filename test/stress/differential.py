#!/usr/bin/env python3
"""Differential stress driver: DirectSeqScan on vs off under concurrent change.

For a bounded time, readers run random queries twice inside one REPEATABLE
READ transaction -- once with pg_dio.enable_direct_scan on, once off -- and
compare the results (row count and an md5 over the sorted rows, or over the
rows in scan order for serial plans).  Meanwhile writers update, delete and
insert, and a maintenance session runs VACUUM, CHECKPOINT and evicts the
tables' buffers.  Readers also vary io_size, queue depth, parallelism and the
injected fault.  Any difference fails the run.

Needs a running cluster with pg_dio (PGHOST/PGPORT/PGUSER), psql on PATH.
Usage: differential.py [--seconds N] [--db NAME]
"""
import argparse
import random
import subprocess
import sys
import threading
import time

TABLES = ("stress_a", "stress_b")
FAULTS = ["none"] * 6 + ["eio", "short_read", "corrupt", "ring_setup", "odirect_einval"]


def psql(db, sql, check=True):
    r = subprocess.run(["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1", "-d", db],
                       input=sql, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"psql failed: {r.stderr.strip()}\n--- SQL:\n{sql}")
    return r


def setup(db):
    subprocess.run(["psql", "-X", "-q", "-d", "postgres", "-c", f"DROP DATABASE IF EXISTS {db}"],
                   check=True, capture_output=True)
    subprocess.run(["psql", "-X", "-q", "-d", "postgres", "-c", f"CREATE DATABASE {db}"],
                   check=True, capture_output=True)
    sql = ["CREATE EXTENSION pg_dio;", "CREATE EXTENSION pg_buffercache;",
           "CREATE EXTENSION amcheck;"]
    for t in TABLES:
        sql.append(f"""
CREATE TABLE {t} (id int, grp int, v bigint, note text)
    WITH (autovacuum_enabled = off, fillfactor = 90);
INSERT INTO {t} SELECT g, g % 97, g * 7,
       CASE WHEN g % 11 = 0 THEN NULL WHEN g % 301 = 0 THEN repeat(md5(g::text), 80)
            ELSE md5(g::text) END
  FROM generate_series(1, 60000) g;
CREATE INDEX {t}_id ON {t} (id);""")
    psql(db, "\n".join(sql))
    for t in TABLES:
        psql(db, f"VACUUM (FREEZE, ANALYZE) {t};")


def random_query(rng):
    t = rng.choice(TABLES)
    lo = rng.randint(-100, 70000)
    hi = lo + rng.choice([10, 1000, 20000, 100000])
    preds = [
        "true",
        f"id BETWEEN {lo} AND {hi}",
        f"grp = {rng.randint(0, 96)}",
        "note IS NULL",
        f"v % {rng.randint(2, 50)} = 0",
        f"length(note) > {rng.choice([32, 100])}",
    ]
    cols = rng.choice(["*", "id, v", "ctid, id, grp", "id, length(note), xmin"])
    kind = rng.random()
    if kind < 0.4:
        return f"SELECT {cols} FROM {t} WHERE {rng.choice(preds)}", True
    if kind < 0.7:
        return (f"SELECT grp, count(*), sum(v), count(note) FROM {t} "
                f"WHERE {rng.choice(preds)} GROUP BY grp"), False
    if kind < 0.85:
        return f"SELECT {cols} FROM {t} WHERE {rng.choice(preds)} LIMIT {rng.randint(1, 500)}", True
    other = "stress_b" if t == "stress_a" else "stress_a"
    return (f"SELECT a.id, b.v FROM {t} a JOIN {other} b USING (id) "
            f"WHERE a.id BETWEEN {lo} AND {hi} AND b.grp <> {rng.randint(0, 96)}"), False


def digest(q, ordered):
    order = "" if ordered else " ORDER BY x::text"
    return f"SELECT count(*) || ' ' || coalesce(md5(string_agg(x::text, '|'{order})), '-') FROM ({q}) x;"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.compares = 0
        self.writes = 0
        self.maint = 0
        self.failures = []


def reader(db, deadline, seed, stats):
    rng = random.Random(seed)
    while time.time() < deadline and not stats.failures:
        q, ordered = random_query(rng)
        parallel = rng.random() < 0.3
        # results of a parallel plan, or of LIMIT without ORDER BY under a
        # parallel plan, come in no promised order: compare as multisets;
        # LIMIT picks *which* rows only in a serial scan, so keep it serial
        if "LIMIT" in q:
            parallel = False
        ordered = ordered and not parallel
        settings = [
            f"SET LOCAL pg_dio.io_size = '{rng.choice([8, 64, 256, 1024])}kB';",
            f"SET LOCAL pg_dio.queue_depth = {rng.choice([1, 4, 32, 128])};",
            f"SET LOCAL pg_dio.inject_fault = '{rng.choice(FAULTS)}';",
            "SET LOCAL pg_dio.direct_scan_threshold = 0;",
            # the indexes are there for amcheck and the writers; scans compared here are seq scans
            "SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;",
            "SET LOCAL enable_indexonlyscan = off;",
            f"SET LOCAL pg_dio.os_cache_check = {rng.choice(['on', 'off', 'off'])};",
        ]
        if parallel:
            settings += ["SET LOCAL max_parallel_workers_per_gather = 2;",
                         "SET LOCAL parallel_setup_cost = 0;", "SET LOCAL parallel_tuple_cost = 0;",
                         "SET LOCAL min_parallel_table_scan_size = 0;"]
        else:
            settings.append("SET LOCAL max_parallel_workers_per_gather = 0;")
        sql = "\n".join(["BEGIN ISOLATION LEVEL REPEATABLE READ;"] + settings + [
            "SET LOCAL pg_dio.enable_direct_scan = on;",
            f"EXPLAIN (COSTS OFF) {q};",
            digest(q, ordered),
            "SET LOCAL pg_dio.enable_direct_scan = off;",
            digest(q, ordered),
            "COMMIT;"])
        r = psql(db, sql, check=False)
        if r.returncode != 0:
            with stats.lock:
                stats.failures.append(f"query failed: {r.stderr.strip()}\n{sql}")
            return
        lines = r.stdout.strip().splitlines()
        on, off = lines[-2], lines[-1]
        plan = "\n".join(lines[:-2])
        if "DirectSeqScan" not in plan:
            with stats.lock:
                stats.failures.append(f"no DirectSeqScan in the plan of {q}:\n{plan}")
            return
        with stats.lock:
            stats.compares += 1
            if on != off:
                stats.failures.append(f"DIFFERENT results for {q} (ordered={ordered}, "
                                      f"parallel={parallel}):\n direct: {on}\n core:   {off}\n{sql}")


def writer(db, deadline, seed, stats):
    rng = random.Random(seed)
    next_id = 100000 + (seed % 1000) * 1000000
    while time.time() < deadline and not stats.failures:
        t = rng.choice(TABLES)
        lo = rng.randint(1, 60000)
        op = rng.random()
        if op < 0.4:
            sql = f"UPDATE {t} SET v = v + 1 WHERE id BETWEEN {lo} AND {lo + rng.randint(0, 200)};"
        elif op < 0.6:
            sql = f"UPDATE {t} SET note = md5(random()::text) WHERE grp = {rng.randint(0, 96)} AND id < {lo};"
        elif op < 0.8:
            sql = f"DELETE FROM {t} WHERE id BETWEEN {lo} AND {lo + rng.randint(0, 50)};"
        else:
            n = rng.randint(1, 300)
            sql = (f"INSERT INTO {t} SELECT g, g % 97, g, md5(g::text) "
                   f"FROM generate_series({next_id}, {next_id + n - 1}) g;")
            next_id += n
        if rng.random() < 0.2:
            sql = f"BEGIN; {sql} SELECT pg_sleep(0.05); ROLLBACK;"
        r = psql(db, sql, check=False)
        if r.returncode != 0 and "deadlock" not in r.stderr:
            with stats.lock:
                stats.failures.append(f"writer failed: {r.stderr.strip()}\n{sql}")
            return
        with stats.lock:
            stats.writes += 1


def maintenance(db, deadline, seed, stats):
    rng = random.Random(seed)
    while time.time() < deadline and not stats.failures:
        t = rng.choice(TABLES)
        sql = rng.choice([f"VACUUM {t};", "CHECKPOINT;",
                          f"SELECT pg_buffercache_evict_relation('{t}');",
                          f"SELECT pg_buffercache_evict_relation('{t}');"])
        r = psql(db, sql, check=False)
        if r.returncode != 0:
            with stats.lock:
                stats.failures.append(f"maintenance failed: {r.stderr.strip()}\n{sql}")
            return
        with stats.lock:
            stats.maint += 1
        time.sleep(rng.uniform(0.05, 0.3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--db", default="pg_dio_stress")
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    args = ap.parse_args()

    print(f"differential stress: {args.seconds:.0f} s, seed {args.seed}", flush=True)
    setup(args.db)
    stats = Stats()
    deadline = time.time() + args.seconds
    threads = []
    for i in range(args.readers):
        threads.append(threading.Thread(target=reader, args=(args.db, deadline, args.seed + i, stats)))
    for i in range(args.writers):
        threads.append(threading.Thread(target=writer, args=(args.db, deadline, args.seed + 100 + i, stats)))
    threads.append(threading.Thread(target=maintenance, args=(args.db, deadline, args.seed + 200, stats)))
    for th in threads:
        th.start()
    for th in threads:
        th.join()

    # what pg_dio read must still be intact, and nothing left in flight
    r = psql(args.db, "SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio';")
    inflight = int(r.stdout.strip())
    # pg_dio writes no page: heap and indexes check clean after all that
    corrupt = 0
    for t in TABLES:
        r = psql(args.db, f"SELECT count(*) FROM verify_heapam('{t}');"
                          f"SELECT bt_index_check('{t}_id', true);")
        n = int(r.stdout.strip().splitlines()[0])
        if n:
            stats.failures.append(f"verify_heapam('{t}') reports {n} problems")
        corrupt += n
    print(f"{stats.compares} comparisons, {stats.writes} writes, {stats.maint} maintenance "
          f"commands, {len(stats.failures)} failures, {inflight} reads left in flight, "
          f"amcheck: {corrupt} problems")
    for f in stats.failures[:5]:
        print(f, file=sys.stderr)
    if stats.compares == 0:
        print("no comparison ran", file=sys.stderr)
        return 1
    return 1 if stats.failures or inflight else 0


if __name__ == "__main__":
    sys.exit(main())
