#!/usr/bin/env python3
"""pg_dio on a hot standby: a primary and a streaming standby of its own
(test/cluster.sh: replica-p, replica-s), always stopped at the end.

Cases (each prints "ok" or "FAILED"; any failure: exit status 1):

  seqscan       DirectSeqScan, serial and parallel, reads directly on the
                standby after pg_dio_evict and returns core's rows (count and
                an md5 over the sorted rows) in the same REPEATABLE READ
                transaction
  index         PrefetchIndexScan with advice on/off, combining on/off,
                direct heap reads (direct blocks > 0), and
                PrefetchIndexOnlyScan return core's Index Scan's rows in its
                order, in the same REPEATABLE READ transaction
  tools         pg_dio_read, pg_dio_evict, pg_dio_residency, the views and
                the statistics functions on the standby
  lsn-bound     a cursor's DirectSeqScan whose blocks VACUUM (FREEZE) on the
                primary rewrote after the scan started: the new images are
                newer than the scan's replay bound and are read again through
                the buffer manager (verification fallbacks), rows are core's
  conflict      replay cancels a DirectSeqScan, then a PrefetchIndexScan with
                direct heap reads, while their reads are held in flight
                (SQLSTATE 40001); none stays in flight, the backend reads
                directly again with core's rows
  promote       pg_promote() while a cursor's DirectSeqScan is half read:
                the rest comes back as core's scan gives it in that
                transaction; the promoted server writes and reads directly
  feedback      seqscan and index again with hot_standby_feedback on (on a
                new standby; they ran first with it off)

No server's log (primary, promoted standby, new standby) may show a crash.  Needs what make cluster
needs (PG_CONFIG or the project venv); run as root or as the server's user.
Usage: replica_test.py [--keep]   (--keep: leave the clusters' files)
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgsession import Session, SessionGone, is_error, log_size, log_crashes  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER_SH = os.path.join(ROOT, "test", "cluster.sh")
PRIMARY, STANDBY = "replica-p", "replica-s"
DB = "pg_dio_replica"
STANDBY_SETTINGS = ("max_standby_streaming_delay = 100ms", "hot_standby_feedback = off")

ROWS = 100000
PR_ROWS = 60000
# DirectSeqScan on small tables, no OS-cache shortcut, no index paths
SEQ_SETTINGS = ("SET pg_dio.direct_scan_threshold = 0; SET pg_dio.os_cache_check = off; "
                "SET enable_indexscan = off; SET enable_indexonlyscan = off; "
                "SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0;")
PARALLEL_SETTINGS = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
                     "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;")
INDEX_SETTINGS = ("SET enable_seqscan = off; SET enable_bitmapscan = off; "
                  "SET max_parallel_workers_per_gather = 0; SET pg_dio.os_cache_check = off; "
                  "SET pg_dio.index_prefetch_min_rows = 0;")
SEQ_CHECK = "SELECT count(*), md5(string_agg(t::text, ',' ORDER BY id)) FROM rt t"
# no ORDER BY in the aggregate: the md5 covers the scan's order
INDEX_CHECK = ("SELECT count(*), md5(string_agg(t::text, ',')) FROM "
               "(SELECT * FROM rt WHERE id BETWEEN 1000 AND 40000) t")
INDEX_ONLY_CHECK = ("SELECT count(*), md5(string_agg(id::text, ',')) FROM "
                    "(SELECT id FROM rt WHERE id BETWEEN 1000 AND 40000) t")


class Failure(Exception):
    pass


# --- clusters ---------------------------------------------------------------

def cluster_sh(*args):
    r = subprocess.run([CLUSTER_SH, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"test/cluster.sh {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


class Server:
    """A cluster made by test/cluster.sh: its environment for psql, its log."""

    def __init__(self, name, export_line):
        self.name = name
        self.env = dict(os.environ)
        for kv in export_line.strip().splitlines()[-1].removeprefix("export ").split():
            k, v = kv.split("=", 1)
            self.env[k] = v.replace("$PATH", os.environ.get("PATH", ""))
        self.env.pop("PGOPTIONS", None)
        self.log = os.path.join(os.path.dirname(self.env["PGHOST"]), "server.log")
        self.log_start = log_size(self.log)

    def psql(self, sql, db=DB):
        """Run a script in a new psql; its output lines (raises on any error)."""
        r = subprocess.run(["psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1", "-d", db],
                           input=sql, capture_output=True, text=True, env=self.env)
        if r.returncode != 0:
            raise Failure(f"{self.name}: psql failed: {r.stderr.strip()}\n--- SQL:\n{sql}")
        return r.stdout.strip().splitlines()

    def session(self):
        return Session(DB, env=self.env)

    def crashes(self):
        return log_crashes(self.log, self.log_start)


def wait_replayed(primary, standby, timeout=30):
    """Wait until the standby has replayed everything the primary logged.
    A VACUUM's records may sit in WAL buffers, behind pg_current_wal_lsn()
    (the write position), and so may a commit that wrote no other WAL: a
    flushed logical message writes them out first."""
    lsn = primary.psql("SELECT pg_logical_emit_message(false, 'pg_dio', '', true) \\g /dev/null\n"
                       "SELECT pg_current_wal_lsn();", db="postgres")[0]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if standby.psql(f"SELECT pg_last_wal_replay_lsn() >= '{lsn}';", db="postgres") == ["t"]:
            return
        time.sleep(0.02)
    raise Failure(f"the standby did not replay up to {lsn} within {timeout} s")


def make_standby():
    return Server(STANDBY, cluster_sh("standby", STANDBY, PRIMARY, *STANDBY_SETTINGS))


def setup(primary):
    primary.psql(f"DROP DATABASE IF EXISTS {DB};", db="postgres")
    primary.psql(f"CREATE DATABASE {DB};", db="postgres")
    # rt: heap order differs from index order; a few pages not all-visible
    # (updated after the VACUUM), so the scans mix direct and buffered blocks
    primary.psql(f"""
CREATE EXTENSION pg_dio;
CREATE TABLE rt (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO rt SELECT g, md5(g::text) || repeat('x', 100)
  FROM generate_series(1, {ROWS}) g ORDER BY hashint4(g);
CREATE INDEX rt_id ON rt (id);
VACUUM (ANALYZE) rt;
UPDATE rt SET pad = 'updated ' || id WHERE id % 500 = 0;
CREATE TABLE pr_t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO pr_t SELECT g, repeat('p', 60) || g FROM generate_series(1, {PR_ROWS}) g;
VACUUM pr_t;
CHECKPOINT;""")


# --- output parsing ---------------------------------------------------------

def direct_io_blocks(plan):
    """Blocks DirectSeqScan read directly (EXPLAIN ANALYZE's Direct I/O lines)."""
    return sum(int(m.group(1)) for l in plan for m in [re.search(r"Direct I/O: blocks=(\d+)", l)] if m)


def heap_direct_blocks(plan):
    """Heap blocks PrefetchIndexScan read directly (Heap Blocks: ... direct=N)."""
    return sum(int(m.group(1)) for l in plan for m in [re.search(r"Heap Blocks:.* direct=(\d+)", l)] if m)


def has_node(plan, node):
    return any(node in l for l in plan)


def backend_stat(s, column):
    """A counter of pg_dio_backend_stats for the session's own backend."""
    return int(s.query(f"SELECT {column} FROM pg_dio_backend_stats(pg_backend_pid());")[0])


def open_slow_cursor(s, table, select):
    """Begin a REPEATABLE READ transaction with 'table' evicted and a NO
    SCROLL cursor c over 'select', read in 8 kB reads, four in flight (a
    FETCH reads only a little ahead); return the table's blocks."""
    s.query(SEQ_SETTINGS + "SET pg_dio.io_size = '8kB'; SET pg_dio.queue_depth = 4;")
    nblocks = int(s.query(f"SELECT pg_relation_size('{table}') / 8192;")[0])
    s.query("BEGIN ISOLATION LEVEL REPEATABLE READ;")
    s.query(f"SELECT pg_dio_evict('{table}') \\g /dev/null")
    s.query(f"DECLARE c NO SCROLL CURSOR FOR {select};")
    return nblocks


class Run:
    def __init__(self):
        self.failed = []
        self.passed = 0

    def case(self, name, fn, *args):
        started = time.monotonic()
        try:
            fn(*args)
        except (Failure, RuntimeError, TimeoutError, SessionGone) as e:
            print(f"FAILED {name}: {e}", flush=True)
            self.failed.append(name)
            return
        self.passed += 1
        print(f"ok {name} ({time.monotonic() - started:.1f} s)", flush=True)


# --- 1. DirectSeqScan, serial and parallel ----------------------------------

def case_seqscan(standby, parallel):
    """Direct reads on the standby (fails: Direct I/O blocks=0, as before
    325990e, or a missing DirectSeqScan node); rows as core's in the same
    snapshot (fails: a wrong or missing row changes count or md5)."""
    s = standby.session()
    try:
        s.query(SEQ_SETTINGS + (PARALLEL_SETTINGS if parallel else ""))
        s.query("BEGIN ISOLATION LEVEL REPEATABLE READ;")
        s.query("SELECT pg_dio_evict('rt') \\g /dev/null")
        plan = s.query(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {SEQ_CHECK};")
        node = "Parallel Custom Scan (DirectSeqScan)" if parallel else "Custom Scan (DirectSeqScan)"
        if not has_node(plan, node) or (parallel and not has_node(plan, "Workers Launched: 2")):
            raise Failure(f"not a {node} with 2 workers:\n" + "\n".join(plan))
        if direct_io_blocks(plan) == 0:
            raise Failure("no block read directly:\n" + "\n".join(plan))
        # the compared run itself read directly (counters of all processes)
        s.query("SELECT pg_dio_evict('rt') \\g /dev/null")
        before = int(s.query("SELECT blocks_direct FROM pg_dio_cluster_stats();")[0])
        got = s.query(f"{SEQ_CHECK};")
        after = int(s.query("SELECT blocks_direct FROM pg_dio_cluster_stats();")[0])
        s.query("SET pg_dio.enable_direct_scan = off;")
        if not has_node(s.query(f"EXPLAIN (COSTS OFF) {SEQ_CHECK};"), "Seq Scan on rt"):
            raise Failure("core's scan is not a Seq Scan")
        want = s.query(f"{SEQ_CHECK};")
        s.query("COMMIT;")
        if after <= before:
            raise Failure("the compared DirectSeqScan read nothing directly")
        if got != want or got[0].split("|")[0] == "0":
            raise Failure(f"DirectSeqScan returned {got}, core's Seq Scan {want}")
    finally:
        s.close()


# --- 2. PrefetchIndexScan in every mode -------------------------------------

INDEX_MODES = (
    ("advice, combining", "", "PrefetchIndexScan", INDEX_CHECK),
    ("advice, no combining", "SET pg_dio.index_prefetch_combine = off;", "PrefetchIndexScan",
     INDEX_CHECK),
    ("read stream", "SET pg_dio.index_prefetch_advice = off;", "PrefetchIndexScan", INDEX_CHECK),
    ("direct heap reads", "SET pg_dio.index_direct_read = on;", "PrefetchIndexScan", INDEX_CHECK),
    ("index-only", "", "PrefetchIndexOnlyScan", INDEX_ONLY_CHECK),
)


def case_index(standby):
    """Each mode's rows and order equal core's Index Scan in the same snapshot
    (fails: a row missing, extra, changed or out of index order changes the
    md5); direct heap reads happen on the standby (fails: direct=0)."""
    s = standby.session()
    try:
        s.query(INDEX_SETTINGS)
        for mode, settings, node, check in INDEX_MODES:
            s.query("BEGIN ISOLATION LEVEL REPEATABLE READ;")
            s.query(settings)
            s.query("SELECT pg_dio_evict('rt') \\g /dev/null")
            plan = s.query(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {check};")
            if not has_node(plan, f"Custom Scan ({node})"):
                raise Failure(f"{mode}: not a {node}:\n" + "\n".join(plan))
            if "index_direct_read" in settings and heap_direct_blocks(plan) == 0:
                raise Failure(f"{mode}: no heap block read directly:\n" + "\n".join(plan))
            s.query("SELECT pg_dio_evict('rt') \\g /dev/null")
            before = backend_stat(s, "blocks_direct")
            got = s.query(f"{check};")
            after = backend_stat(s, "blocks_direct")
            # the compared run itself read directly in that mode, and only there
            if ("index_direct_read" in settings) != (after > before):
                raise Failure(f"{mode}: the compared run read {after - before} blocks directly")
            s.query("SET LOCAL pg_dio.enable_index_prefetch = off;")
            core = "Index Only Scan" if node == "PrefetchIndexOnlyScan" else "Index Scan"
            if not has_node(s.query(f"EXPLAIN (COSTS OFF) {check};"), f"{core} using rt_id"):
                raise Failure(f"{mode}: core's scan is not an {core}")
            want = s.query(f"{check};")
            s.query("ROLLBACK;")   # also undoes the mode's SETs
            if got != want or got[0].split("|")[0] == "0":
                raise Failure(f"{mode}: {node} returned {got}, core's {core} {want}")
    finally:
        s.close()


# --- 3. tools and views -----------------------------------------------------

def case_tools(standby):
    """Each call works during recovery and says what it must (fails: an
    error such as 'cannot ... during recovery', or counts that do not add
    up)."""
    s = standby.session()
    try:
        s.query(SEQ_SETTINGS + "SET pg_dio.enable_direct_scan = off;")
        nblocks = int(s.query("SELECT pg_relation_size('rt') / current_setting('block_size')::int;")[0])
        # core's scan made rt resident: evict drops it from shared buffers
        # and the OS page cache; residency sees that, and the VM's bits
        s.query("SELECT count(*) FROM rt;")
        res = s.query("SELECT shared_buffers > 0, all_visible > 0, blocks "
                      "FROM pg_dio_residency('rt') WHERE fork = 'main';")
        if res != [f"t|t|{nblocks}"]:
            raise Failure(f"pg_dio_residency before the eviction: {res}, want t|t|{nblocks}")
        ev = s.query("SELECT buffers_evicted > 0, os_cached_blocks_after FROM pg_dio_evict('rt');")
        if ev != ["t|0"]:
            raise Failure(f"pg_dio_evict: {ev}, want t|0")
        res = s.query("SELECT shared_buffers, os_cache FROM pg_dio_residency('rt') "
                      "WHERE fork = 'main';")
        if res != ["0|0"]:
            raise Failure(f"pg_dio_residency after the eviction: {res}, want 0|0")
        # pg_dio_read reads and verifies every block directly
        rd = s.query("SELECT blocks, direct_blocks, fallback_blocks, checksum_failures "
                     "FROM pg_dio_read('rt');")
        if rd != [f"{nblocks}|{nblocks}|0|0"]:
            raise Failure(f"pg_dio_read: {rd}, want {nblocks}|{nblocks}|0|0")
        mine = s.query("SELECT blocks_direct >= %d, reads_in_flight FROM pg_dio_backend_stats(%d);"
                       % (nblocks, s.pid))
        if mine != ["t|0"]:
            raise Failure(f"pg_dio_backend_stats of the reader: {mine}")
        views = s.query(f"""
SELECT (SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio'),
       (SELECT blocks_direct >= {nblocks} FROM pg_stat_aio_backends WHERE pid = {s.pid}),
       (SELECT sum(count) > 0 FROM pg_stat_aio_histogram WHERE pid = {s.pid}),
       (SELECT reads_submitted = reads_completed FROM pg_dio_cluster_stats()),
       (SELECT count(*) > 0 FROM pg_stat_aio_backends WHERE backend_type = 'startup');""")
        if views != ["0|t|t|t|t"]:
            raise Failure(f"views: {views}, want 0|t|t|t|t")
        # what pg_stat_aios does with a core read's target in pg_aios
        tgt = s.query("SELECT pg_dio_relation(t.reltablespace, t.reldatabase, t.relfilenode), "
                      "t.fork, t.block FROM pg_dio_aio_target("
                      "format('block 7 in file \"%s\"', pg_relation_filepath('rt'))) t;")
        if tgt != ["rt|main|7"]:
            raise Failure(f"pg_dio_aio_target and pg_dio_relation: {tgt}, want rt|main|7")
    finally:
        s.close()


# --- 4. the LSN bound -------------------------------------------------------

def case_lsn_bound(primary, standby):
    """A cursor's scan takes its replay bound at the start; VACUUM (FREEZE)
    on the primary then rewrites every page (new LSNs; the tuples were
    already visible to everyone, so replay cancels nothing), the standby
    replays it, writes and evicts the pages.  The rest of the scan reads
    images newer than its bound: each is read again through the buffer
    manager and counted as a verification fallback.  Without the bound
    (dio_direct_image_usable skipping the LSN test) those images would pass
    (checksum ok, PD_ALL_VISIBLE set) and fallback_verify would not grow:
    the check fails.  Rows must still equal core's scan in the snapshot."""
    primary.psql("""
DROP TABLE IF EXISTS lsn_t;
CREATE TABLE lsn_t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO lsn_t SELECT g, repeat('y', 60) || g FROM generate_series(1, 40000) g;
VACUUM lsn_t;""")
    wait_replayed(primary, standby)
    s = standby.session()
    try:
        nblocks = open_slow_cursor(s, "lsn_t", "SELECT id, pad FROM lsn_t")
        v0 = backend_stat(s, "fallback_verify")
        d0 = backend_stat(s, "blocks_direct")
        plan = s.query("EXPLAIN (COSTS OFF) SELECT id, pad FROM lsn_t;")
        if not has_node(plan, "DirectSeqScan"):
            raise Failure("not a DirectSeqScan:\n" + "\n".join(plan))
        # a dozen pages (the counters move as runs are finished)
        rows = s.query("FETCH 1000 FROM c;")
        d1, vmid = map(int, s.query("SELECT blocks_direct, fallback_verify "
                                    "FROM pg_dio_backend_stats(pg_backend_pid());")[0].split("|"))
        # unchanged pages: no fallback yet (else the growth below proves nothing)
        if vmid != v0:
            raise Failure(f"{vmid - v0} verification fallbacks before the freeze")
        if d1 <= d0:
            raise Failure("the cursor's first blocks were not read directly")
        primary.psql("VACUUM (FREEZE, TRUNCATE false) lsn_t; CHECKPOINT;")
        wait_replayed(primary, standby)
        standby.psql("CHECKPOINT;")
        s.query("SELECT pg_dio_evict('lsn_t') \\g /dev/null")
        rows += s.query("FETCH ALL FROM c;")
        v1 = backend_stat(s, "fallback_verify")
        s.query("CLOSE c; SET pg_dio.enable_direct_scan = off;")
        want = s.query("SELECT id, pad FROM lsn_t;")
        s.query("COMMIT;")
        if rows != want:
            first = next((i for i, (a, b) in enumerate(zip(rows, want)) if a != b),
                         min(len(rows), len(want)))
            raise Failure(f"the cursor returned {len(rows)} rows, core's scan {len(want)}; "
                          f"first difference at row {first}")
        # most blocks were still to be read when the freeze was replayed
        if v1 - v0 < nblocks // 2:
            raise Failure(f"verification fallbacks grew by {v1 - v0} of {nblocks} blocks "
                          "of the rest")
    finally:
        s.close()


# --- 5. recovery-conflict cancel with reads in flight -----------------------

CONFLICT_KINDS = {
    # kind: (settings, cursor query, pg_dio node, check query)
    "DirectSeqScan": (SEQ_SETTINGS, "SELECT * FROM cf_t", "DirectSeqScan",
                      "SELECT count(*), md5(string_agg(t::text, ',' ORDER BY id)) FROM cf_t t"),
    "PrefetchIndexScan": (INDEX_SETTINGS + "SET pg_dio.index_direct_read = on;",
                          "SELECT * FROM cf_t WHERE id > 0", "PrefetchIndexScan",
                          "SELECT count(*), md5(string_agg(t::text, ',')) FROM "
                          "(SELECT * FROM cf_t WHERE id > 0) t"),
}


def case_conflict(primary, standby, kind):
    """A standby backend whose cursor's FETCH waits on direct reads held in
    flight (the delay fault) is cancelled by replay of a VACUUM that removes
    rows its snapshot sees.  The FETCH is running (not waiting for client
    input), so core raises ERROR 40001 "canceling statement due to conflict
    with recovery" and keeps the session (FATAL is for a backend idle in its
    transaction).  Fails: no error within 10 s (reads not cancelled, replay
    stuck), another error, a FATAL, reads of the backend still listed in
    pg_stat_aios, or the next scan not direct or not core's rows."""
    settings, cursor_sql, node, check = CONFLICT_KINDS[kind]
    primary.psql("""
DROP TABLE IF EXISTS cf_t;
CREATE TABLE cf_t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO cf_t SELECT g, repeat('z', 200) FROM generate_series(1, 30000) g ORDER BY hashint4(g);
CREATE INDEX cf_t_id ON cf_t (id);
VACUUM (ANALYZE) cf_t;""")
    wait_replayed(primary, standby)
    victim = standby.session()
    monitor = standby.session()
    try:
        victim.query("\\set VERBOSITY verbose\n" + settings)
        victim.query("BEGIN ISOLATION LEVEL REPEATABLE READ;")
        victim.query("SELECT pg_dio_evict('cf_t') \\g /dev/null")
        victim.query("SELECT count(*) FROM pg_class;")      # the snapshot, before the DELETE
        plan = victim.query(f"EXPLAIN (COSTS OFF) {cursor_sql};")
        if not has_node(plan, node):
            raise Failure(f"not a {node}:\n" + "\n".join(plan))
        victim.query("SET LOCAL pg_dio.inject_fault = 'delay'; SET LOCAL pg_dio.inject_delay = '30s';")
        victim.query(f"DECLARE c NO SCROLL CURSOR FOR {cursor_sql};")
        # until a delayed read blocks it (the index scan's first blocks are
        # read through the buffer manager)
        victim.send("FETCH ALL FROM c \\g /dev/null")
        deadline = time.monotonic() + 10
        while True:
            n = int(monitor.query(f"SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio' "
                                  f"AND pid = {victim.pid};")[0])
            if n > 0:
                break
            if victim.has_output() or time.monotonic() > deadline:
                out = victim.result(timeout=1) if victim.has_output() else "(still running)"
                raise Failure(f"no direct read of the victim in flight: {out}")
            time.sleep(0.01)
        primary.psql("DELETE FROM cf_t WHERE id % 3 = 0; VACUUM (TRUNCATE false) cf_t;")
        try:
            out = victim.result(timeout=10)
        except TimeoutError as e:
            raise Failure(f"the victim was not cancelled within 10 s: {e}")
        errors = [l for l in out if is_error(l)]
        if not errors or "ERROR:  40001: canceling statement due to conflict with recovery" not in errors[0]:
            raise Failure(f"expected ERROR 40001 canceling statement due to conflict with recovery, "
                          f"got {out}")
        # the snapshot conflict (a lock or buffer-pin conflict says otherwise)
        if not any("User query might have needed to see row versions that must be removed" in l
                   for l in out):
            raise Failure(f"not a snapshot conflict: {out}")
        left = monitor.query(f"SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio' "
                             f"AND pid = {victim.pid};")
        if left != ["0"]:
            raise Failure(f"{left[0]} reads of the cancelled backend still in flight")
        victim.query("ROLLBACK;")
        # the same backend: a new snapshot (the DELETE replayed), direct again
        wait_replayed(primary, standby)
        victim.query("BEGIN ISOLATION LEVEL REPEATABLE READ;")
        victim.query("SELECT pg_dio_evict('cf_t') \\g /dev/null")
        plan = victim.query(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {check};")
        direct = direct_io_blocks(plan) if node == "DirectSeqScan" else heap_direct_blocks(plan)
        if not has_node(plan, node) or direct == 0:
            raise Failure("after the cancel: no direct read:\n" + "\n".join(plan))
        got = victim.query(f"{check};")
        victim.query("SET LOCAL pg_dio.enable_direct_scan = off; "
                     "SET LOCAL pg_dio.enable_index_prefetch = off;")
        want = victim.query(f"{check};")
        victim.query("COMMIT;")
        on_primary = primary.psql(f"{settings} {check};")
        if got != want or want != on_primary:
            raise Failure(f"after the cancel: {node} {got}, core's scan {want}, the primary {on_primary}")
    finally:
        victim.close()
        monitor.close()


# --- 6. promotion during a scan ---------------------------------------------

def case_promote(standby):
    """A REPEATABLE READ cursor half through a DirectSeqScan of an
    all-visible table (its current page a direct image: no buffer pin to
    hold VACUUM back) when the standby is promoted; the promoted server then
    updates and deletes rows and freezes every other page (still
    all-visible, LSNs past the scan's bound).  The rest of the scan comes
    back with no error and with exactly core's rows in that transaction
    (fails: an error, a row missing, extra or changed), the frozen pages
    read again through the buffer manager (fails: the bound ignored once
    recovery has ended).  Then the promoted server writes, and a new
    snapshot (not taken during recovery) reads directly with core's rows
    (fails: no direct read, other rows)."""
    check = "SELECT count(*), md5(string_agg(t::text, ',' ORDER BY id)) FROM pr_t t"
    s = standby.session()
    other = standby.session()
    try:
        nblocks = open_slow_cursor(s, "pr_t", "SELECT * FROM pr_t")
        rows = s.query("FETCH 1000 FROM c;")
        v0 = backend_stat(s, "fallback_verify")
        if other.query("SELECT pg_promote(true, 30);") != ["t"]:
            raise Failure("pg_promote() failed")
        if other.query("SELECT pg_is_in_recovery();") != ["f"]:
            raise Failure("still in recovery after pg_promote()")
        other.query("UPDATE pr_t SET pad = 'after promotion' WHERE id % 1000 = 1; "
                    "DELETE FROM pr_t WHERE id % 1000 = 2; VACUUM (FREEZE) pr_t; CHECKPOINT;",
                    timeout=20)
        other.query("SELECT pg_dio_evict('pr_t') \\g /dev/null")
        try:
            rows += s.query("FETCH ALL FROM c;")
        except RuntimeError as e:
            raise Failure(f"the scan failed after the promotion: {e}")
        v1 = backend_stat(s, "fallback_verify")
        s.query("CLOSE c; SET LOCAL pg_dio.enable_direct_scan = off;")
        want = s.query("SELECT * FROM pr_t;")
        s.query("COMMIT;")
        if rows != want or len(rows) != PR_ROWS:
            raise Failure(f"after the promotion the cursor returned {len(rows)} rows, core's scan "
                          f"{len(want)} (of {PR_ROWS}), or others")
        if v1 - v0 < nblocks // 2:
            raise Failure(f"{v1 - v0} of {nblocks} pages the promoted server froze were read again "
                          f"through the buffer manager")
        # the promoted server: new writes, then direct reads with core's rows
        other.query("INSERT INTO pr_t SELECT g, 'new ' || g FROM generate_series(1000001, 1010000) g; "
                    "VACUUM pr_t;")
        s.query("BEGIN ISOLATION LEVEL REPEATABLE READ;")
        s.query("SELECT pg_dio_evict('pr_t') \\g /dev/null")
        plan = s.query(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {check};")
        if direct_io_blocks(plan) == 0:
            raise Failure("the promoted server read nothing directly:\n" + "\n".join(plan))
        got = s.query(f"{check};")
        s.query("SET LOCAL pg_dio.enable_direct_scan = off;")
        want = s.query(f"{check};")
        s.query("COMMIT;")
        expect = PR_ROWS - PR_ROWS // 1000 + 10000
        if got != want or got[0].split("|")[0] != str(expect):
            raise Failure(f"the promoted server: DirectSeqScan {got}, core's {want}, "
                          f"want {expect} rows")
    finally:
        s.close()
        other.close()


# --- 7. hot_standby_feedback ------------------------------------------------

def set_feedback(primary, standby, on):
    """ALTER SYSTEM + reload on the standby; the primary sees the standby's
    xmin exactly when feedback is on (fails: the setting not taking effect)."""
    value = "on" if on else "off"
    standby.psql(f"ALTER SYSTEM SET hot_standby_feedback = {value}; SELECT pg_reload_conf();",
                 db="postgres")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        shown = standby.psql("SHOW hot_standby_feedback;", db="postgres")
        xmin = primary.psql("SELECT backend_xmin IS NOT NULL FROM pg_stat_replication;",
                            db="postgres")
        if shown == [value] and xmin == (["t"] if on else ["f"]):
            return
        # a standby reports its xmin on wal_receiver_status_interval or on WAL
        primary.psql("SELECT txid_current();", db="postgres")
        time.sleep(0.1)
    raise Failure(f"hot_standby_feedback {value} did not take effect: SHOW {shown}, "
                  f"backend_xmin reported {xmin}")


def no_crash(server):
    """Fails: PANIC, a process killed by a signal, a crash restart."""
    crashes = server.crashes()
    if crashes:
        raise Failure("\n".join(crashes[:5]))


def cases_1_2(run, primary, standby, label):
    run.case(f"seqscan serial ({label})", case_seqscan, standby, False)
    run.case(f"seqscan parallel ({label})", case_seqscan, standby, True)
    run.case(f"index scans ({label})", case_index, standby)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the clusters' files at the end")
    args = ap.parse_args()

    # Ctrl-C, SIGTERM and SIGHUP end the run through the finally below (also
    # when started in the background, where SIGINT comes ignored)
    def stop(signum, frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)

    started = time.monotonic()
    run = Run()
    servers = []
    try:
        for name in (STANDBY, PRIMARY):
            cluster_sh("destroy", name)
        primary = Server(PRIMARY, cluster_sh("start", PRIMARY, "autovacuum = off"))
        servers.append(primary)
        setup(primary)
        standby = make_standby()
        servers.append(standby)
        wait_replayed(primary, standby)

        run.case("feedback off", set_feedback, primary, standby, False)
        cases_1_2(run, primary, standby, "hot_standby_feedback off")
        run.case("tools and views", case_tools, standby)
        run.case("lsn bound", case_lsn_bound, primary, standby)
        run.case("conflict DirectSeqScan", case_conflict, primary, standby, "DirectSeqScan")
        run.case("conflict PrefetchIndexScan", case_conflict, primary, standby, "PrefetchIndexScan")
        run.case("promote", case_promote, standby)
        run.case("no crash in the promoted standby's log", no_crash, standby)
        # a new standby (replacing the promoted one's files) of the primary for the rest
        standby = make_standby()
        servers.append(standby)
        wait_replayed(primary, standby)
        run.case("feedback on", set_feedback, primary, standby, True)
        cases_1_2(run, primary, standby, "hot_standby_feedback on")

        run.case("no crash in the primary's log", no_crash, primary)
        run.case("no crash in the new standby's log", no_crash, standby)
    except (Failure, RuntimeError, TimeoutError, SessionGone) as e:
        print(f"FAILED setup: {e}", flush=True)
        run.failed.append("setup")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        run.failed.append("interrupted")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for name in (STANDBY, PRIMARY):
            subprocess.run([CLUSTER_SH, "stop" if args.keep or run.failed else "destroy", name],
                           capture_output=True)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    elapsed = time.monotonic() - started
    if run.failed:
        print(f"replica: {run.passed} passed, {len(run.failed)} FAILED ({', '.join(run.failed)}); "
              f"{elapsed:.1f} s; logs in {os.path.join(ROOT, '.tmp', 'clusters')}")
        return 1
    print(f"replica ok: {run.passed} cases, {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
