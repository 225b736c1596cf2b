#!/usr/bin/env python3
"""Differential stress driver: pg_dio's scans on vs off under concurrent change.

For a bounded time, readers run random queries twice inside one REPEATABLE
READ transaction -- once with pg_dio's scan on, once off -- and compare the
results (row count and an md5 over the sorted rows, or over the rows in
output order for serial plans / ORDER BY).  Two kinds of queries:

  - sequential scans: pg_dio.enable_direct_scan on vs off (DirectSeqScan),
    varying io_size, queue depth, parallelism, the injected fault and how
    resident blocks are found (pg_dio.resident_sweep);
  - index scans: pg_dio.enable_index_prefetch on vs off (PrefetchIndexScan /
    PrefetchIndexOnlyScan vs core's Index Scan / Index Only Scan): random
    ranges, IN-lists and = ANY, ORDER BY ... LIMIT, index-only shapes,
    multi-column conditions and nestloop joins with an index inner, LATERAL
    and partitionwise joins with parameterized inner scans (stress_pa,
    stress_pb), casts in index keys, grouping sets over index scans, varying
    effective_io_concurrency, pg_dio.index_prefetch_advice,
    pg_dio.index_prefetch_combine and pg_dio.index_direct_read (all-visible
    heap blocks read with O_DIRECT).

Cursors are compared too: one declared neither SCROLL nor NO SCROLL, moved
forward and backward (and its pg_cursors.is_scrollable), and a NO SCROLL one
whose current row an UPDATE ... WHERE CURRENT OF changes, through each of
pg_dio's scans.  A loop of aborted inserts read by index scans must leave
the index as large, with as many entries marked dead, as core's scans leave
it (kill_prior_tuple).

Meanwhile writers update (HOT and non-HOT, also moving index keys), delete
and insert, and a maintenance session runs VACUUM, CHECKPOINT and evicts the
tables from shared buffers and the OS cache.  Any difference fails the run,
as does a compared plan with pg_dio's node when it is switched off, or a run
in which no compared index query used PrefetchIndexScan/PrefetchIndexOnlyScan.
A tenth of the index queries without LIMIT are also compared (in any order)
with a plan without index scans: an index entry PrefetchIndexScan wrongly
marked dead would hide a row from core's index scan as well.  At the end
amcheck must find heap and indexes clean, with every heap tuple's live index
entry (bt_index_check heapallindexed).

With --standby-host/--standby-port the readers run on a hot standby of that
server (test/stress/standby_stress.sh makes both): the writers and VACUUM
run on the primary, the maintenance session also evicts the tables from the
standby's shared buffers and OS page cache, runs CHECKPOINT there
(restartpoints) and switches its hot_standby_feedback on and off, with
max_standby_streaming_delay short (--standby-delay).  The rounds that write
(WHERE CURRENT OF, aborted inserts) do not run there.  A round cancelled by
a recovery conflict (SQLSTATE 40001) is no difference: it is counted and run
again.  The run fails unless compared sequential and index scans on the
standby read blocks directly; at the end, once the standby has replayed
everything, amcheck runs on both servers.  Past --seconds the readers read on
until the run has compared what it must (coverage_missing) and, with
--min-comparisons N, made N comparisons, for at most --max-seconds.

Needs a running cluster with pg_dio (PGHOST/PGPORT/PGUSER), psql on PATH.
Usage: differential.py [--seconds N] [--db NAME] [--seed N]
                       [--standby-host H --standby-port P] [--min-comparisons N]
The seed is printed; a failing run repeats its choices with --seed (the
interleaving of the concurrent sessions is the scheduler's).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import threading
import time

TABLES = ("stress_a", "stress_b")
PARTED = ("stress_pa", "stress_pb")
FAULTS = ["none"] * 6 + ["eio", "short_read", "corrupt", "ring_setup", "odirect_einval"]


def psql(db, sql, check=True):
    """Run a script, stopping at the first error (reported with its SQLSTATE).
    db: a database name or a connection string."""
    r = subprocess.run(["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose",
                        "-d", db], input=sql, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"psql failed: {r.stderr.strip()}\n--- SQL:\n{sql}")
    return r


# A hot standby cancels a query whose snapshot, locks or buffer pins the
# replay of a record conflicts with (SQLSTATE 40001, the statement or the
# session): no difference, the round is run again.  A conflict while a new
# session starts fails its connection with the same message, before psql can
# show SQLSTATEs (the one other code with that wording, 57P04, is for a
# dropped database).
RECOVERY_CONFLICT = re.compile(r"(ERROR|FATAL):  (40001: )?(canceling statement|terminating connection) "
                               r"due to conflict with recovery")
CONFLICT_RETRIES = 20


def psql_retrying(db, sql, stats, on_standby, counter="cancels"):
    """psql(db, sql, check=False), run again while a recovery conflict cancels
    it (on a standby only; each cancel counted in stats.<counter>).  None if
    it never finished (counted in stats.gave_up)."""
    for attempt in range(CONFLICT_RETRIES):
        r = psql(db, sql, check=False)
        if not on_standby or r.returncode == 0 or not RECOVERY_CONFLICT.search(r.stderr):
            return r
        with stats.lock:
            setattr(stats, counter, getattr(stats, counter) + 1)
        time.sleep(0.05 * attempt)
    with stats.lock:
        stats.gave_up += 1
    return None


def setup(db):
    subprocess.run(["psql", "-X", "-q", "-d", "postgres", "-c", f"DROP DATABASE IF EXISTS {db}"],
                   check=True, capture_output=True)
    subprocess.run(["psql", "-X", "-q", "-d", "postgres", "-c", f"CREATE DATABASE {db}"],
                   check=True, capture_output=True)
    sql = ["CREATE EXTENSION pg_dio;", "CREATE EXTENSION pg_buffercache;",
           "CREATE EXTENSION amcheck;", "CREATE EXTENSION pageinspect;"]
    # partitioned alike, for partitionwise joins (no writer changes them)
    for t in PARTED:
        sql.append(f"""
CREATE TABLE {t} (id int, grp int, v bigint, note text) PARTITION BY RANGE (id);
CREATE TABLE {t}_1 PARTITION OF {t} FOR VALUES FROM (MINVALUE) TO (20000)
    WITH (autovacuum_enabled = off);
CREATE TABLE {t}_2 PARTITION OF {t} FOR VALUES FROM (20000) TO (40000)
    WITH (autovacuum_enabled = off);
CREATE TABLE {t}_3 PARTITION OF {t} FOR VALUES FROM (40000) TO (MAXVALUE)
    WITH (autovacuum_enabled = off);
INSERT INTO {t} SELECT g, g % 25, g * 3, md5(g::text) FROM generate_series(1, 60000, 2) g;
CREATE INDEX {t}_id ON {t} (id);
CREATE INDEX {t}_grp ON {t} (grp, id);
VACUUM (ANALYZE) {t};""")
    for t in TABLES:
        sql.append(f"""
CREATE TABLE {t} (id int, grp int, v bigint, note text)
    WITH (autovacuum_enabled = off, fillfactor = 90);
INSERT INTO {t} SELECT g, g % 97, g * 7,
       CASE WHEN g % 11 = 0 THEN NULL WHEN g % 301 = 0 THEN repeat(md5(g::text), 80)
            ELSE md5(g::text) END
  FROM generate_series(1, 60000) g;
CREATE INDEX {t}_id ON {t} (id);
CREATE INDEX {t}_grp_id ON {t} (grp, id);""")
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


def random_index_query(rng):
    """A query whose plan has index scans (with seq/bitmap scans disabled):
    (sql, ordered, join)."""
    t = rng.choice(TABLES)
    other = "stress_b" if t == "stress_a" else "stress_a"
    lo = rng.randint(-100, 62000)
    hi = lo + rng.choice([0, 5, 100, 2000, 30000])
    ids = sorted({rng.randint(-10, 65000) for _ in range(rng.randint(1, 40))})
    if rng.random() < 0.2:
        ids += [lo + i for i in range(rng.randint(1, 30))]		# runs of neighbours
    inlist = ", ".join(str(i) for i in ids)
    grps = ", ".join(str(rng.randint(0, 99)) for _ in range(rng.randint(1, 4)))
    cols = rng.choice(["*", "id, v", "ctid, id, grp, note", "id, length(note), xmin"])
    order = rng.choice(["", " ORDER BY id"])
    kind = rng.randrange(12)
    if kind == 9:			# partitionwise LATERAL join, parameterized inner
        return (f"SELECT t1.id, s.id, s.v FROM stress_pa t1 LEFT JOIN LATERAL "
                f"(SELECT t1.grp AS g1, t2.* FROM stress_pb t2) s ON t1.id = s.id "
                f"WHERE s.g1 = s.grp AND t1.id BETWEEN {lo} AND {hi}"), False, True
    if kind == 10:			# casts and relabels in index keys
        return rng.choice([
            (f"SELECT {cols} FROM {t} WHERE id::bigint BETWEEN {lo} AND {hi}{order}", bool(order), False),
            (f"SELECT id, v FROM {t} WHERE id::oid::integer BETWEEN {lo} AND {hi}{order}",
             bool(order), False),
            (f"SELECT id FROM {t} WHERE id::numeric = ANY (ARRAY[{inlist}]){order}", bool(order), False),
        ])
    if kind == 11:			# grouping sets over an index scan (placeholders)
        return (f"SELECT x, y, count(*) FROM (SELECT id::oid AS x, grp AS y FROM {t}) s "
                f"WHERE x::integer BETWEEN {lo} AND {hi} GROUP BY GROUPING SETS (x, y) "
                f"ORDER BY 1, 2"), True, False
    if kind == 0:			# a range
        return f"SELECT {cols} FROM {t} WHERE id BETWEEN {lo} AND {hi}{order}", bool(order), False
    if kind == 1:			# IN-list / = ANY
        pred = rng.choice([f"id IN ({inlist})", f"id = ANY (ARRAY[{inlist}, NULL])"])
        return f"SELECT {cols} FROM {t} WHERE {pred}{order}", bool(order), False
    if kind == 2:			# ORDER BY ... LIMIT
        return (f"SELECT {cols} FROM {t} WHERE id > {lo} ORDER BY id "
                f"LIMIT {rng.choice([1, 5, 50, 500])}"), True, False
    if kind == 3:			# index-only
        return rng.choice([
            (f"SELECT id FROM {t} WHERE id BETWEEN {lo} AND {hi}{order}", bool(order), False),
            (f"SELECT count(*), sum(id) FROM {t} WHERE id BETWEEN {lo} AND {hi}", False, False),
            (f"SELECT id FROM {t} WHERE id IN ({inlist}) ORDER BY id", True, False),
        ])
    if kind == 4:			# multi-column, index-only or not
        c = rng.choice(["grp, id", "*"])
        o = rng.choice(["", " ORDER BY grp, id"])
        return f"SELECT {c} FROM {t} WHERE grp IN ({grps}) AND id BETWEEN {lo} AND {hi}{o}", bool(o), False
    if kind == 5:			# a filter besides the index condition
        return (f"SELECT {cols} FROM {t} WHERE id BETWEEN {lo} AND {hi} AND v % {rng.randint(2, 9)} = 0"
                f"{order}"), bool(order), False
    if kind == 6:			# nestloop with an index inner, parameterized
        return (f"SELECT a.id, b.id, b.v, b.note FROM {t} a JOIN {other} b ON b.id = a.id "
                f"WHERE a.id BETWEEN {lo} AND {lo + rng.choice([10, 300, 3000])}"), False, True
    if kind == 7:			# nestloop, range inner, index-only inner
        return (f"SELECT a.id, b.id FROM {t} a JOIN {other} b ON b.id BETWEEN a.id AND a.id + 3 "
                f"WHERE a.grp = {rng.randint(0, 96)} AND a.id < {lo + 5000}"), False, True
    # LATERAL ORDER BY ... LIMIT: the inner stops early and is rescanned
    return (f"SELECT a.id, l.* FROM {t} a, LATERAL (SELECT id, v FROM {other} b "
            f"WHERE b.id >= a.id ORDER BY b.id LIMIT 3) l WHERE a.id BETWEEN {lo} AND {lo + 200}"), False, True


def split_marks(out):
    """psql output split at the lines "@@name" a script echoed: name -> text."""
    parts = {}
    key = None
    for line in out.splitlines():
        if line.startswith("@@"):
            key = line[2:]
            parts[key] = []
        elif key:
            parts[key].append(line)
    return {k: "\n".join(v) for k, v in parts.items()}


def digest(q, ordered):
    order = "" if ordered else " ORDER BY x::text"
    return f"SELECT count(*) || ' ' || coalesce(md5(string_agg(x::text, '|'{order})), '-') FROM ({q}) x;"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.compares = 0
        self.seq_direct = 0
        self.index_compares = 0
        self.index_prefetch = 0
        self.index_probe = 0
        self.index_probe_shared = 0
        self.index_direct = 0
        self.index_seq_compares = 0
        self.cursor_compares = 0
        self.current_of_compares = 0
        self.current_of_retried = []
        self.kill_compares = 0
        self.writes = 0
        self.maint = 0
        self.failures = []
        # on a standby
        self.cancels = 0
        self.maint_cancels = 0
        self.gave_up = 0
        self.standby_maint = 0
        self.feedback_switches = 0

    def comparisons(self):
        return (self.compares + self.index_compares + self.cursor_compares +
                self.current_of_compares + self.kill_compares)


class Clock:
    """When the sessions stop: the readers (and the aborted-insert loops) at
    the deadline, or, past it, once that many comparisons ('target') are made
    and what the run must have compared ('covered') has been, but no later
    than 'limit' seconds after the start; the writers and the maintenance
    session only once every reader has stopped, so that the primary writes
    throughout; everyone at the first failure."""

    def __init__(self, seconds, target, limit, covered):
        self.start = time.time()
        self.deadline = self.start + seconds
        self.limit = self.start + max(limit, seconds)
        self.target = target
        self.covered = covered
        self.readers_done = threading.Event()

    def reading(self, stats):
        if stats.failures:
            return False
        now = time.time()
        return now < self.deadline or (now < self.limit and (
            stats.comparisons() < self.target or not self.covered(stats)))

    def writing(self, stats):
        return not self.readers_done.is_set() and not stats.failures


SEQ_LEG_SHARE = float(os.environ.get("PG_DIO_STRESS_SEQ_LEG", "0.1"))


def index_reader_round(db, rng, stats, on_standby=False):
    """One index query, prefetch on vs off in one REPEATABLE READ transaction.
    The plans explained are those of the digest statements that run."""
    q, ordered, join = random_index_query(rng)
    d = digest(q, ordered)
    # the same rows without any index scan (in any order): an index entry
    # wrongly marked dead (kill_prior_tuple) would hide a row from both
    # index legs alike.  Not with LIMIT: ties at the limit may differ.  In a
    # tenth of the rounds (PG_DIO_STRESS_SEQ_LEG): the leg costs several times
    # the two index legs.  (amcheck at the end finds such entries too.)
    seq_leg = []
    if "LIMIT" not in q and rng.random() < SEQ_LEG_SHARE:
        du = digest(q, False)
        seq_leg = [
            "SET LOCAL pg_dio.enable_index_prefetch = on;",
            "SET LOCAL pg_dio.index_prefetch_min_rows = 0;",
            "\\echo @@rows_on_u",
            du,
            "SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off;",
            "SET LOCAL enable_seqscan = on; SET LOCAL enable_hashjoin = on;",
            "SET LOCAL enable_mergejoin = on;",
            "\\echo @@rows_seq",
            du]
    # on a standby, whose replay keeps the blocks it changes in shared
    # buffers, direct heap reads (and the advice they need) more often
    on_share = ["on", "off"] + (["on"] if on_standby else [])
    settings = [
        "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;",
        "SET LOCAL max_parallel_workers_per_gather = 0;",
        f"SET LOCAL effective_io_concurrency = {rng.choice([0, 1, 16, 64])};",
        # io_method=worker: on = advised reads by the scan, off = the read stream
        f"SET LOCAL pg_dio.index_prefetch_advice = {rng.choice(on_share)};",
        # direct heap reads (with the advice; off by default): on in half
        # (two thirds on a standby, the advice too)
        f"SET LOCAL pg_dio.index_direct_read = {rng.choice(on_share)};",
        # the index read further ahead and neighbouring blocks advised
        # together (with the advice, not with direct reads; on by default)
        f"SET LOCAL pg_dio.index_prefetch_combine = {rng.choice(['on', 'on', 'on', 'off'])};",
        # blocks the OS page cache has (the kernel reads ahead of the
        # buffered reads of these tables, in heap order) are read from it, not
        # directly: checked in half the rounds
        f"SET LOCAL pg_dio.os_cache_check = {rng.choice(['on', 'off'])};",
        f"SET LOCAL pg_dio.enable_direct_scan = {rng.choice(['on', 'off'])};",
        "SET LOCAL pg_dio.direct_scan_threshold = 0;",
        # ProbePrefetch's direct chunks for a forward-walking inner (on by
        # default; with os_cache_check off, never: it needs the page-cache probe)
        f"SET LOCAL pg_dio.probe_direct_read = {rng.choice(['on', 'on', 'off'])};",
        # below a parallel-aware outer, chunk images shared in the query's DSM
        # (none by default: advice)
        f"SET LOCAL pg_dio.probe_shared_memory = '{rng.choice(['16MB', '16MB', '0'])}';",
    ]
    if join:
        settings.append("SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off;")
        settings.append(f"SET LOCAL enable_partitionwise_join = {rng.choice(['on', 'off'])};")
        settings.append(f"SET LOCAL enable_memoize = {rng.choice(['on', 'off'])};")
        settings.append(f"SET LOCAL enable_material = {rng.choice(['on', 'off'])};")
        # a parallel plan in a third of the join rounds: a ProbePrefetch over
        # a parallel-aware outer shares its direct chunks between the processes
        if rng.random() < 1 / 3:
            settings.append("SET LOCAL max_parallel_workers_per_gather = 2; "
                            "SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0; "
                            "SET LOCAL min_parallel_table_scan_size = 0; "
                            "SET LOCAL min_parallel_index_scan_size = 0;")
    # in a third of the rounds (two thirds on a standby) both tables leave
    # shared buffers and the OS page cache first, so that the prefetch leg
    # has blocks to read (directly)
    if rng.random() < (2 / 3 if on_standby else 1 / 3):
        settings += [f"SELECT count(*) FROM pg_dio_evict('{t}');" for t in TABLES]
    sql = "\n".join(["BEGIN ISOLATION LEVEL REPEATABLE READ;"] + settings + [
        "SET LOCAL pg_dio.enable_index_prefetch = on;",
        "SET LOCAL pg_dio.index_prefetch_min_rows = 0;",
        "\\echo @@plan_on",
        f"EXPLAIN (COSTS OFF) {d}",
        "\\echo @@rows_on",
        d,
        # heap blocks this backend (a new one each round) has read directly
        "\\echo @@direct_on",
        "SELECT blocks_direct FROM pg_dio_backend_stats(pg_backend_pid());",
        "SET LOCAL pg_dio.enable_index_prefetch = off;",
        "SET LOCAL pg_dio.enable_probe_prefetch = off;",
        "\\echo @@plan_off",
        f"EXPLAIN (COSTS OFF) {d}",
        "\\echo @@rows_off",
        d] + seq_leg + ["COMMIT;"])
    r = psql_retrying(db, sql, stats, on_standby)
    if r is None:
        return
    if r.returncode != 0:
        with stats.lock:
            stats.failures.append(f"index query failed: {r.stderr.strip()}\n{sql}")
        return
    parts = split_marks(r.stdout)
    plan_on = parts.get("plan_on", "")
    plan_off = parts.get("plan_off", "")
    on = parts.get("rows_on", "")
    off = parts.get("rows_off", "")
    with stats.lock:
        if "Prefetch" in plan_off:
            stats.failures.append(f"PrefetchIndex scan although disabled: {q}\n{plan_off}")
            return
        stats.index_compares += 1
        if "ProbePrefetch" in plan_on:
            stats.index_probe += 1
        if "Parallel Custom Scan (ProbePrefetch)" in plan_on:
            stats.index_probe_shared += 1
        if "PrefetchIndex" in plan_on:
            stats.index_prefetch += 1
            # (a DirectSeqScan in the plan would have read directly too)
            direct = parts.get("direct_on", "").split()
            if "DirectSeqScan" not in plan_on and direct and direct[0] != "0":
                stats.index_direct += 1
        if on != off or not on:
            stats.failures.append(f"DIFFERENT results for index query {q} (ordered={ordered}):\n"
                                  f" prefetch: {on}\n core:     {off}\n{plan_on}\n{sql}")
        elif seq_leg:
            on_u = parts.get("rows_on_u", "")
            seq = parts.get("rows_seq", "")
            stats.index_seq_compares += 1
            if on_u != seq or not seq:
                stats.failures.append(f"DIFFERENT results for index query {q} without index scans:\n"
                                      f" prefetch: {on_u}\n no index: {seq}\n{sql}")


def cursor_query(rng):
    """A cursor's query and which of pg_dio's scans it is for."""
    t = rng.choice(TABLES)
    lo = rng.randint(-100, 62000)
    hi = lo + rng.choice([5, 100, 2000])
    return rng.choice([
        (f"SELECT id, v FROM {t} WHERE id BETWEEN {lo} AND {hi}", "index"),
        (f"SELECT id FROM {t} WHERE id BETWEEN {lo} AND {hi}", "index-only"),
        (f"SELECT id, v FROM {t} WHERE v % 997 = {rng.randint(0, 996)}", "seq"),
    ])


def run_marked(db, sql):
    """Run a script without stopping at errors; its output split at @@marks."""
    r = subprocess.run(["psql", "-X", "-At", "-q", "-d", db], input=sql,
                       capture_output=True, text=True)
    return split_marks(r.stdout), r


# Core's seq scan of a table larger than shared_buffers / 4 starts where a
# concurrent scan of it is (synchronized scans); a DirectSeqScan always starts
# at block 0.  Either order is core's to give for a query without ORDER BY,
# so the rounds that compare order turn synchronized scans off.
NO_SYNC_SCAN = "SET LOCAL synchronize_seqscans = off;"

CURSOR_SETTINGS = [
    NO_SYNC_SCAN,
    "SET LOCAL pg_dio.direct_scan_threshold = 0;",
    "SET LOCAL enable_bitmapscan = off;",
    "SET LOCAL max_parallel_workers_per_gather = 0;",
]


def cursor_round(db, rng, stats, on_standby=False):
    """A cursor declared neither SCROLL nor NO SCROLL, moved both ways, with
    pg_dio's scans on and off in one REPEATABLE READ transaction: the same
    rows and the same scrollability (such a cursor keeps core's scans)."""
    q, _ = cursor_query(rng)
    moves = []
    for _ in range(rng.randint(2, 6)):
        moves.append(rng.choice([f"FETCH {rng.randint(1, 20)} FROM c;",
                                 f"FETCH BACKWARD {rng.randint(1, 10)} FROM c;",
                                 "FETCH PRIOR FROM c;", "MOVE LAST IN c;", "FETCH FIRST FROM c;",
                                 f"FETCH ABSOLUTE {rng.randint(-5, 30)} FROM c;"]))
    legs = []
    for leg in ("on", "off"):
        legs += [f"SET LOCAL pg_dio.enable_index_prefetch = {leg};",
                 "SET LOCAL pg_dio.index_prefetch_min_rows = 0;",
                 f"SET LOCAL pg_dio.enable_direct_scan = {leg};",
                 f"DECLARE c CURSOR FOR {q};",
                 f"\\echo @@{leg}",
                 "SELECT is_scrollable FROM pg_cursors WHERE name = 'c';"] + moves + ["CLOSE c;"]
    sql = "\n".join(["BEGIN ISOLATION LEVEL REPEATABLE READ;"] + CURSOR_SETTINGS + legs + ["COMMIT;"])
    r = psql_retrying(db, sql, stats, on_standby)
    if r is None:
        return
    parts = split_marks(r.stdout)
    with stats.lock:
        if r.returncode != 0:
            stats.failures.append(f"cursor round failed: {r.stderr.strip()}\n{sql}")
        elif parts.get("on") != parts.get("off"):
            stats.failures.append(f"DIFFERENT cursor results for {q}:\n pg_dio: {parts.get('on')}\n"
                                  f" core:   {parts.get('off')}\n{sql}")
        else:
            stats.cursor_compares += 1


def current_of_round(db, rng, stats, again=None):
    """UPDATE ... WHERE CURRENT OF a NO SCROLL cursor (which gets pg_dio's
    scan), pg_dio on and off in one REPEATABLE READ transaction, the first
    leg rolled back to a savepoint: the same row changed, or the same error.
    A round whose legs differ is run once more ('again': its query, kind and
    fetch count); only a second difference fails."""
    q, kind, k = again or (*cursor_query(rng), rng.randint(1, 4))
    t = q.split(" FROM ")[1].split()[0]
    legs = []
    for leg in ("on", "off"):
        legs += ["SAVEPOINT s;",
                 f"SET LOCAL pg_dio.enable_index_prefetch = {leg};",
                 "SET LOCAL pg_dio.index_prefetch_min_rows = 0;",
                 f"SET LOCAL pg_dio.enable_probe_prefetch = {leg};",
                 f"SET LOCAL pg_dio.enable_direct_scan = {leg};",
                 f"\\echo @@plan_{leg}",
                 f"EXPLAIN (COSTS OFF) DECLARE c NO SCROLL CURSOR FOR {q};",
                 f"DECLARE c NO SCROLL CURSOR FOR {q};",
                 f"\\echo @@{leg}",
                 f"FETCH {k} FROM c;",
                 f"UPDATE {t} SET v = v + 1000000 WHERE CURRENT OF c RETURNING id, v;",
                 "\\echo :SQLSTATE",
                 "ROLLBACK TO s;"]
    # a first read of the rows: the heap pages it fetches are pruned, and on
    # PostgreSQL 19 may be set all-visible, which decides which TID an
    # index-only scan (core's or pg_dio's) gives WHERE CURRENT OF
    warm = [f"SELECT count(*) FROM ({q}) w;"]
    sql = "\n".join(["BEGIN ISOLATION LEVEL REPEATABLE READ;"] + CURSOR_SETTINGS + warm + legs +
                    ["ROLLBACK;"])
    parts, r = run_marked(db, sql)
    on, off = parts.get("on", ""), parts.get("off", "")
    with stats.lock:
        # a row a writer changed since the snapshot: both legs alike, or a
        # change between them (40001 in either)
        if "40001" in on or "40001" in off or "40P01" in on or "40P01" in off:
            return
        if "PrefetchIndex" in parts.get("plan_off", "") or "DirectSeqScan" in parts.get("plan_off", ""):
            stats.failures.append(f"pg_dio's scan although disabled: {q}")
            return
        if on == off and on:
            stats.current_of_compares += 1
            return
        if again is not None:
            stats.failures.append(f"DIFFERENT WHERE CURRENT OF ({kind}) for {q}, twice:\n"
                                  f" pg_dio: {on}\n core:   {off}\n{r.stderr}\n{sql}")
            return
        # the legs may have found the pages in different states (on
        # PostgreSQL 19 a page's visibility map bit decides the TID an
        # index-only scan gives): reported, and the round run once more
        stats.current_of_retried.append(f"{kind}: {q} FETCH {k}: pg_dio {on!r} core {off!r}")
    current_of_round(db, rng, stats, again=(q, kind, k))


KILL_LOOP = """
DO $$
BEGIN
    FOR i IN 1..40 LOOP
        BEGIN
            IF EXISTS (SELECT * FROM {t} WHERE key > 0 AND key < 100) THEN
                RAISE EXCEPTION 'rows of aborted inserts seen';
            END IF;
            INSERT INTO {t} SELECT g, 'aborted' FROM generate_series(1, 100) g;
            RAISE SQLSTATE 'P0099';
        EXCEPTION WHEN SQLSTATE 'P0099' THEN
        END;
    END LOOP;
END
$$;"""


def kill_check(db, clock, seed, stats):
    """Loops of aborted inserts read by index scans, pg_dio's and core's, each
    on a table of its own: the indexes end as large, with as many entries
    marked dead."""
    rng = random.Random(seed)
    n = 0
    while clock.reading(stats):
        n += 1
        res = {}
        advice = rng.choice(["on", "off"])
        for leg in ("on", "off"):
            t = f"stress_kill_{leg}"
            sql = "\n".join([
                f"DROP TABLE IF EXISTS {t};",
                f"CREATE TABLE {t} (key int, data text) WITH (autovacuum_enabled = off);",
                f"CREATE INDEX {t}_key ON {t} (key);",
                f"INSERT INTO {t} VALUES (-1, 'metapage');",
                "BEGIN;",
                "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;",
                "SET LOCAL enable_indexonlyscan = off;",
                f"SET LOCAL pg_dio.enable_index_prefetch = {leg};",
                "SET LOCAL pg_dio.index_prefetch_min_rows = 0;",
                f"SET LOCAL pg_dio.index_prefetch_advice = {advice};",
                KILL_LOOP.format(t=t),
                f"SELECT pg_relation_size('{t}_key'), (SELECT count(*) FILTER (WHERE i.dead) "
                f"FROM generate_series(1, pg_relation_size('{t}_key') / 8192 - 1) b, "
                f"bt_page_items('{t}_key', b::int) i);",
                "COMMIT;",
                f"DROP TABLE {t};"])
            r = psql(db, sql, check=False)
            if r.returncode != 0:
                with stats.lock:
                    stats.failures.append(f"kill check failed: {r.stderr.strip()}")
                return
            res[leg] = r.stdout.strip()
        with stats.lock:
            if res["on"] != res["off"]:
                stats.failures.append(f"index after aborted inserts (advice {advice}): "
                                      f"pg_dio {res['on']} vs core {res['off']} (size|dead entries)")
            else:
                stats.kill_compares += 1
        time.sleep(rng.uniform(0.5, 2.0))


def reader(db, clock, seed, stats, on_standby):
    rng = random.Random(seed)
    while clock.reading(stats):
        x = rng.random()
        if x < 0.05:
            cursor_round(db, rng, stats, on_standby)
            continue
        # UPDATE ... WHERE CURRENT OF writes: not on a standby (an index
        # round instead)
        if x < 0.1 and not on_standby:
            current_of_round(db, rng, stats)
            continue
        if x < 0.55:
            index_reader_round(db, rng, stats, on_standby)
            continue
        q, ordered = random_query(rng)
        parallel = rng.random() < 0.3
        # results of a parallel plan, or of LIMIT without ORDER BY under a
        # parallel plan, come in no promised order: compare as multisets;
        # LIMIT picks *which* rows only in a serial scan, so keep it serial
        if "LIMIT" in q:
            parallel = False
        ordered = ordered and not parallel
        settings = [
            NO_SYNC_SCAN,
            f"SET LOCAL pg_dio.io_size = '{rng.choice([8, 64, 256, 1024])}kB';",
            f"SET LOCAL pg_dio.queue_depth = {rng.choice([1, 4, 32, 128])};",
            f"SET LOCAL pg_dio.inject_fault = '{rng.choice(FAULTS)}';",
            "SET LOCAL pg_dio.direct_scan_threshold = 0;",
            # the indexes are there for amcheck and the writers; scans compared here are seq scans
            "SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;",
            "SET LOCAL enable_indexonlyscan = off;",
            f"SET LOCAL pg_dio.os_cache_check = {rng.choice(['on', 'off', 'off'])};",
            # shared buffers found by one sweep at the scan's start, or per block
            f"SET LOCAL pg_dio.resident_sweep = {rng.choice(['on', 'off', 'auto'])};",
        ]
        if parallel:
            settings += ["SET LOCAL max_parallel_workers_per_gather = 2;",
                         "SET LOCAL parallel_setup_cost = 0;", "SET LOCAL parallel_tuple_cost = 0;",
                         "SET LOCAL min_parallel_table_scan_size = 0;"]
        else:
            settings.append("SET LOCAL max_parallel_workers_per_gather = 0;")
        sql = "\n".join(["BEGIN ISOLATION LEVEL REPEATABLE READ;"] + settings + [
            "SET LOCAL pg_dio.enable_direct_scan = on;",
            "\\echo @@plan",
            f"EXPLAIN (COSTS OFF) {q};",
            "\\echo @@on",
            digest(q, ordered),
            # blocks this backend (a new one each round; not its parallel
            # workers) has read directly
            "\\echo @@direct",
            "SELECT blocks_direct FROM pg_dio_backend_stats(pg_backend_pid());",
            "SET LOCAL pg_dio.enable_direct_scan = off;",
            "\\echo @@off",
            digest(q, ordered),
            "COMMIT;"])
        r = psql_retrying(db, sql, stats, on_standby)
        if r is None:
            continue
        if r.returncode != 0:
            with stats.lock:
                stats.failures.append(f"query failed: {r.stderr.strip()}\n{sql}")
            return
        parts = split_marks(r.stdout)
        on, off, plan = parts.get("on", ""), parts.get("off", ""), parts.get("plan", "")
        if "DirectSeqScan" not in plan:
            with stats.lock:
                stats.failures.append(f"no DirectSeqScan in the plan of {q}:\n{plan}")
            return
        with stats.lock:
            stats.compares += 1
            if parts.get("direct", "0").strip() not in ("", "0"):
                stats.seq_direct += 1
            if on != off or not on:
                stats.failures.append(f"DIFFERENT results for {q} (ordered={ordered}, "
                                      f"parallel={parallel}):\n direct: {on}\n core:   {off}\n{sql}")


def writer(db, clock, seed, stats, narrow):
    """Updates, deletes and inserts; 'narrow': the updates of a grp confined
    to 3000 ids instead of all ids below one, so that VACUUM leaves much of
    the tables all-visible (for a standby's direct reads)."""
    rng = random.Random(seed)
    next_id = 100000 + (seed % 1000) * 1000000
    while clock.writing(stats):
        t = rng.choice(TABLES)
        lo = rng.randint(1, 60000)
        op = rng.random()
        if op < 0.4:
            sql = f"UPDATE {t} SET v = v + 1 WHERE id BETWEEN {lo} AND {lo + rng.randint(0, 200)};"
        elif op < 0.6:
            ids = f"BETWEEN {lo} AND {lo + 3000}" if narrow else f"< {lo}"
            sql = f"UPDATE {t} SET note = md5(random()::text) WHERE grp = {rng.randint(0, 96)} AND id {ids};"
        elif op < 0.7:
            sql = f"DELETE FROM {t} WHERE id BETWEEN {lo} AND {lo + rng.randint(0, 50)};"
        elif op < 0.8:
            # non-HOT: the (grp, id) key changes, or id itself moves
            sql = rng.choice([
                f"UPDATE {t} SET grp = (grp + 1) % 97 WHERE id BETWEEN {lo} AND {lo + rng.randint(0, 100)};",
                f"UPDATE {t} SET id = id + {rng.choice([1, -3, 50000])} "
                f"WHERE id BETWEEN {lo} AND {lo + rng.randint(0, 20)};"])
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


def set_feedback(sdb, on):
    """hot_standby_feedback of the standby, in effect once its walreceiver
    has reloaded the configuration."""
    return psql(sdb, f"ALTER SYSTEM SET hot_standby_feedback = {'on' if on else 'off'};\n"
                "SELECT pg_reload_conf();", check=False)


def maintenance(db, sdb, clock, seed, stats):
    """VACUUM (which sets visibility-map bits; the writers clear them),
    CHECKPOINT and evictions on the primary; with a standby (sdb) also
    evictions from its shared buffers and OS page cache and CHECKPOINT there
    (a restartpoint writes the replayed pages), and hot_standby_feedback
    switched every few seconds: off, the primary's VACUUM removes rows the
    standby's snapshots may need, and replay cancels them."""
    rng = random.Random(seed)
    feedback = rng.choice([False, True])
    next_switch = 0
    while clock.writing(stats):
        t = rng.choice(TABLES)
        if sdb and time.time() >= next_switch:
            feedback = not feedback
            r = set_feedback(sdb, feedback)
            if r.returncode != 0:
                with stats.lock:
                    stats.failures.append(f"hot_standby_feedback switch failed: {r.stderr.strip()}")
                return
            with stats.lock:
                stats.feedback_switches += 1
            next_switch = time.time() + rng.uniform(2, 6)
        if sdb and rng.random() < 0.4:
            sql = rng.choice(["CHECKPOINT;",
                              f"SELECT pg_buffercache_evict_relation('{t}');",
                              f"SELECT pg_dio_evict('{t}');",
                              f"SELECT pg_dio_evict('{t}');"])
            r = psql_retrying(sdb, sql, stats, True, "maint_cancels")
            where, counter = "maintenance on the standby", "standby_maint"
        else:
            # with a standby VACUUM more often: the visibility-map bits its
            # records set are what the standby's direct reads rest on, and
            # its cleanup records conflict with the standby's snapshots
            sql = rng.choice([f"VACUUM {t};"] * (3 if sdb else 1) + ["CHECKPOINT;",
                              f"SELECT pg_buffercache_evict_relation('{t}');",
                              f"SELECT pg_buffercache_evict_relation('{t}');",
                              f"SELECT pg_dio_evict('{t}');"])		# also from the OS cache
            r = psql(db, sql, check=False)
            where, counter = "maintenance", "maint"
        # (r is None: a standby command given up after repeated cancels)
        if r is not None and r.returncode != 0:
            with stats.lock:
                stats.failures.append(f"{where} failed: {r.stderr.strip()}\n{sql}")
            return
        with stats.lock:
            setattr(stats, counter, getattr(stats, counter) + 1)
        time.sleep(rng.uniform(0.05, 0.3))


def wait_for_replay(db, sdb, timeout=120):
    """Wait until the standby has replayed everything the primary has
    written so far; False if it has not within 'timeout' seconds."""
    lsn = psql(db, "SELECT pg_current_wal_insert_lsn();").stdout.strip()
    end = time.time() + timeout
    while time.time() < end:
        r = psql(sdb, f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn;", check=False)
        if r.returncode == 0 and r.stdout.strip() == "t":
            return True
        time.sleep(0.2)
    return False


def check_server(db, stats, on_standby, where):
    """Nothing of pg_dio's left in flight, and amcheck finds heap and indexes
    clean, every heap tuple with its live index entry (read-only: on a
    standby too).  pg_dio writes no page (it only has core prune pages and
    mark index entries dead, as core's scans do).  The number of problems."""
    problems = 0
    r = psql_retrying(db, "SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio';",
                      stats, on_standby, "maint_cancels")
    if r is None or r.returncode != 0 or r.stdout.strip() != "0":
        stats.failures.append(f"{where}: pg_dio reads left in flight: "
                              f"{r.stdout.strip() + r.stderr.strip() if r else 'no answer'}")
        problems += 1
    for t in TABLES:
        checks = [(f"verify_heapam('{t}')", f"SELECT count(*) FROM verify_heapam('{t}');")]
        checks += [(f"bt_index_check('{idx}', true)", f"SELECT bt_index_check('{idx}', true);")
                   for idx in (f"{t}_id", f"{t}_grp_id")]
        for name, sql in checks:
            r = psql_retrying(db, sql, stats, on_standby, "maint_cancels")
            if r is None or r.returncode != 0:
                stats.failures.append(f"{where}: {name}: {r.stderr.strip() if r else 'cancelled'}")
                problems += 1
            elif name.startswith("verify_heapam") and r.stdout.strip() != "0":
                stats.failures.append(f"{where}: {name} reports {r.stdout.strip()} problems")
                problems += int(r.stdout.strip())
    return problems


def coverage_missing(stats, on_standby):
    """What the run has not compared yet of what it must have; a run that
    ends without it fails."""
    missing = []
    if stats.compares == 0 or stats.index_compares == 0:
        missing.append("no sequential or no index comparison completed")
    if not on_standby and stats.kill_compares == 0:
        missing.append("no aborted-insert loop was compared")
    if stats.index_prefetch == 0:
        missing.append("no compared index query used PrefetchIndexScan/PrefetchIndexOnlyScan")
    # a standby run proves something only if pg_dio read directly there
    if on_standby and (stats.seq_direct == 0 or stats.index_direct == 0):
        missing.append("on the standby no compared sequential scan or no compared index scan "
                       "read blocks directly")
    return missing


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--db", default="pg_dio_stress")
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--standby-host", help="the readers run on this hot standby of the server "
                    "PGHOST/PGPORT name (which the writers and the maintenance session use)")
    ap.add_argument("--standby-port", type=int)
    ap.add_argument("--standby-delay", default="200ms",
                    help="max_standby_streaming_delay set on the standby for the run")
    ap.add_argument("--min-comparisons", type=int, default=0,
                    help="read on past --seconds until this many comparisons are made "
                    "(for at most --max-seconds); fewer fail the run")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="how long the readers may read on past --seconds for "
                    "--min-comparisons and what the run must compare (default: not at all)")
    args = ap.parse_args()

    sdb = None
    if args.standby_host or args.standby_port:
        if not (args.standby_host and args.standby_port):
            ap.error("--standby-host and --standby-port go together")
        sdb = f"dbname={args.db} host={args.standby_host} port={args.standby_port}"
    rdb = sdb or args.db
    where = "the standby" if sdb else "the server"

    print(f"differential stress: {args.seconds:.0f} s, seed {args.seed}"
          f"{', readers on the standby ' + args.standby_host + ':' + str(args.standby_port) if sdb else ''}",
          flush=True)
    setup(args.db)
    stats = Stats()
    if sdb:
        print("on the standby: no UPDATE ... WHERE CURRENT OF rounds and no aborted-insert loops "
              "(they write)", flush=True)
        if not wait_for_replay(args.db, sdb):
            print("FAIL: the standby did not replay the setup within 120 s", file=sys.stderr)
            return 1
        r = psql(sdb, f"ALTER SYSTEM SET max_standby_streaming_delay = '{args.standby_delay}';\n"
                 "SELECT pg_reload_conf();", check=False)
        if r.returncode != 0:
            print(f"FAIL: could not set max_standby_streaming_delay: {r.stderr.strip()}", file=sys.stderr)
            return 1
    clock = Clock(args.seconds, args.min_comparisons, args.max_seconds,
                  lambda st: not coverage_missing(st, bool(sdb)))
    readers = [threading.Thread(target=reader, args=(rdb, clock, args.seed + i, stats, bool(sdb)))
               for i in range(args.readers)]
    # the aborted-insert loops write: on the primary only
    if not sdb:
        readers.append(threading.Thread(target=kill_check, args=(args.db, clock, args.seed + 300, stats)))
    others = [threading.Thread(target=writer, args=(args.db, clock, args.seed + 100 + i, stats, bool(sdb)))
              for i in range(args.writers)]
    others.append(threading.Thread(target=maintenance, args=(args.db, sdb, clock, args.seed + 200, stats)))
    for th in readers + others:
        th.start()
    # progress once a minute (long runs)
    next_report = clock.start + 60
    while any(th.is_alive() for th in readers):
        time.sleep(0.5)
        if time.time() >= next_report:
            next_report += 60
            print(f"{time.time() - clock.start:.0f} s: {stats.comparisons()} comparisons"
                  f"{f', {stats.cancels} cancelled by recovery conflicts' if sdb else ''}", flush=True)
    clock.readers_done.set()
    for th in others:
        th.join()
    elapsed = time.time() - clock.start

    corrupt = check_server(args.db, stats, False, "the primary" if sdb else "the server")
    if sdb:
        # what the standby replayed must check clean as well, all of it
        if wait_for_replay(args.db, sdb):
            corrupt += check_server(sdb, stats, True, "the standby")
        else:
            stats.failures.append("the standby did not catch up within 120 s")
        # as the standby was before the run (the settings of its files)
        r = psql(sdb, "ALTER SYSTEM RESET max_standby_streaming_delay;\n"
                 "ALTER SYSTEM RESET hot_standby_feedback;\nSELECT pg_reload_conf();", check=False)
        if r.returncode != 0:
            stats.failures.append(f"could not reset the standby's settings: {r.stderr.strip()}")
    print(f"{stats.comparisons()} comparisons on {where} in {elapsed:.0f} s: "
          f"{stats.compares} sequential ({stats.seq_direct} reading blocks directly), "
          f"{stats.index_compares} index "
          f"({stats.index_prefetch} with PrefetchIndexScan/PrefetchIndexOnlyScan, "
          f"{stats.index_probe} with ProbePrefetch ({stats.index_probe_shared} sharing direct chunks "
          f"between parallel processes), "
          f"{stats.index_direct} of them reading heap blocks directly, "
          f"{stats.index_seq_compares} also against a plan without index scans), "
          f"{stats.cursor_compares} scrolling cursors, {stats.current_of_compares} WHERE CURRENT OF "
          f"({len(stats.current_of_retried)} differed once and agreed when run again), "
          f"{stats.kill_compares} aborted-insert loops; "
          f"{stats.writes} writes, {stats.maint} maintenance commands{' on the primary' if sdb else ''}, "
          f"{len(stats.failures)} failures, amcheck: {corrupt} problems")
    if sdb:
        print(f"on the standby: {stats.cancels} comparisons cancelled by recovery conflicts "
              f"and run again, {stats.maint_cancels} maintenance and check commands likewise, "
              f"{stats.gave_up} given up after {CONFLICT_RETRIES} cancels; "
              f"{stats.standby_maint} maintenance commands, "
              f"{stats.feedback_switches} hot_standby_feedback switches")
    # "FAIL: " starts each: .ci/run repeats such lines at the end of its log
    for f in stats.failures[:5]:
        print(f"FAIL: {f}", file=sys.stderr)
    for f in stats.current_of_retried[:5]:
        print(f"WHERE CURRENT OF differed once: {f}")
    bad = False
    for m in coverage_missing(stats, bool(sdb)):
        print(f"FAIL: {m}", file=sys.stderr)
        bad = True
    if args.min_comparisons and stats.comparisons() < args.min_comparisons:
        print(f"FAIL: {stats.comparisons()} comparisons, fewer than {args.min_comparisons}", file=sys.stderr)
        bad = True
    return 1 if stats.failures or bad else 0


if __name__ == "__main__":
    sys.exit(main())
