#!/usr/bin/env python3
"""Cancellation loops: statement_timeout, pg_cancel_backend and
pg_terminate_backend hit backends while many pg_dio reads are in flight, and
pg_cancel_backend hits PrefetchIndexScans while core's reads are in flight;
--count times each (default 200).

Kinds (each with its own victim session, a long-lived psql):

  timeout    statement_timeout (--timeout-ms, default 50) fires while the
             reads are held in flight by pg_dio.inject_fault = 'delay'
  cancel     pg_cancel_backend() from the monitor session
  terminate  pg_terminate_backend(pid) from the monitor session, then wait
             (at most 5 s) until the process is gone; a new
             victim session (a new backend) each time
  index      pg_cancel_backend() of a PrefetchIndexScan over a table just
             evicted from shared buffers and the OS cache (pg_dio_evict):
             its heap reads are core's AIO through a read stream

The dio kinds rotate through pg_dio_read, DirectSeqScan and Parallel
DirectSeqScan (2 workers) on a 32 MB table, with pg_dio.inject_fault =
'delay' and inject_delay = 30s (reads stay in flight until cancelled),
queue_depth 32, io_size 256kB.  The monitor waits until pg_stat_aios shows at
least --min-inflight (default 1) of the victim's reads (source 'pg_dio', the
victim or its parallel workers; source 'core', not completed, for the index
kind) and their number stops growing (two polls in a row see the same
number: the submission burst is over) before it cancels or terminates (for
timeout: before the timer fires), at most 5 s.  How many that is depends on
the statement: pg_dio_read fills its queue (32 reads), a DirectSeqScan ramps
up (7 reads when the first ones never complete), a parallel one 1 to 32 per
process; the summary prints the average and the maximum.  If the
statement ended before that (it can happen only to a timeout on a starved
machine, or to an index scan that finished), the iteration is repeated (not
counted; at most --count more such misses).

After each iteration:
  - the victim got the expected error within 5 s (no stuck backend);
  - pg_stat_aios has no pg_dio rows for the victim or its workers (pg_dio
    lists a read only while it is in flight); for the index kind, none of
    core's I/Os of the victim is still in flight 2 s later -- with
    io_method=io_uring, once the victim has run its next scan instead: the
    kernel completes them, and a backend reaps completions only when it next
    waits for I/O (core's own cancelled scans leave theirs SUBMITTED in
    pg_aios until then just the same).  (Core keeps the
    handles of completed I/Os listed, state COMPLETED_SHARED, until their
    owner reuses them -- after a cancelled core SeqScan just the same -- so
    those are not counted; the summary prints how many were listed at most.)
  - timeout/cancel/index: the same backend answers SELECT 1 and a real scan
    (DirectSeqScan, direct reads; the PrefetchIndexScan for the index kind)
    whose result equals core's; terminate: the terminated backend's
    process is gone (/proc) within 5 s, pg_stat_activity no longer lists it,
    and the next victim, a new backend, runs the real scan before its own
    statement.
At the end: nothing of pg_dio is in flight anywhere, the cluster counters say
every read submitted was reaped, the reused victims' fds (as leaks.py counts
them) did not grow from iteration 10 to the last and their memory did not
grow by more than 64 kB, and the server log has no crash since the start
(PANIC, "terminated by signal", a crash restart).

Needs a running cluster with pg_dio preloaded (PGHOST/PGPORT/PGUSER as
superuser, psql on PATH), on the server's machine (reads /proc/<pid>/fd).
Usage: cancel_loops.py [--count N] [--kinds timeout,cancel,terminate,index] [--db NAME]
"""
import argparse
import os
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgsession import (fresh_database, Session, psql_once, SessionGone, is_error, fd_counts, server_log_path,  # noqa: E402
                       log_size, log_crashes)

TABLE = "cancel_t"
ROWS = 200000
KINDS = ("timeout", "cancel", "terminate", "index")
STATEMENTS = ("pg_dio_read", "seqscan", "parallel")

DIO_SETTINGS = ("SET pg_dio.inject_fault = 'delay'; SET pg_dio.inject_delay = '30s'; "
                "SET pg_dio.queue_depth = 32; SET pg_dio.io_size = '256kB'; "
                "SET pg_dio.direct_scan_threshold = 0; SET pg_dio.os_cache_check = off; "
                "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
                "SET min_parallel_table_scan_size = 0; SET enable_indexscan = off; "
                "SET enable_indexonlyscan = off; SET enable_bitmapscan = off;")
INDEX_SETTINGS = ("SET enable_seqscan = off; SET enable_bitmapscan = off; "
                  "SET max_parallel_workers_per_gather = 0; SET pg_dio.inject_fault = 'none';")
STATEMENT_SQL = {
    "pg_dio_read": f"SET max_parallel_workers_per_gather = 0; "
                   f"SELECT blocks FROM pg_dio_read('{TABLE}');",
    "seqscan": f"SET max_parallel_workers_per_gather = 0; SELECT count(*) FROM {TABLE};",
    "parallel": f"SET max_parallel_workers_per_gather = 2; SELECT count(*) FROM {TABLE};",
}
PLAN_NODE = {
    "seqscan": "Custom Scan (DirectSeqScan)",
    "parallel": "Parallel Custom Scan (DirectSeqScan)",
}
CHECK_SCAN = f"SELECT count(*), sum(id), sum(octet_length(pad)) FROM {TABLE}"
INDEX_SCAN = f"SELECT count(*), sum(octet_length(pad)) FROM {TABLE} WHERE id > 0"
INDEX_CHECK = (f"SELECT count(*), sum(id), sum(octet_length(pad)), md5(string_agg(id::text, ',')) "
               f"FROM {TABLE} WHERE id BETWEEN 5000 AND 7000")
EXPECTED_ERROR = {
    "timeout": "canceling statement due to statement timeout",
    "cancel": "canceling statement due to user request",
    "index": "canceling statement due to user request",
    "terminate": "terminating connection due to administrator command",
}


class Failure(Exception):
    pass


def process_alive(pid):
    """Is the process there (and not a zombie waiting for the postmaster)?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def setup(db):
    fresh_database(db)
    psql_once(db, f"""
CREATE EXTENSION pg_dio;
CREATE TABLE {TABLE} (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO {TABLE} SELECT g, md5(g::text) || repeat('x', 100)
  FROM generate_series(1, {ROWS}) g ORDER BY hashint4(g);
CREATE INDEX {TABLE}_id ON {TABLE} (id);
VACUUM (FREEZE, ANALYZE) {TABLE};
VACUUM (ANALYZE);""")
    off = "SET pg_dio.enable_direct_scan = off; SET pg_dio.enable_index_prefetch = off;"
    ref = {"check": psql_once(db, f"{off} {CHECK_SCAN};"),
           "index": psql_once(db, f"{off} {INDEX_SETTINGS} {INDEX_CHECK};")}
    size = int(psql_once(db, f"SELECT pg_relation_size('{TABLE}');")[0])
    return ref, size


class Loop:
    def __init__(self, args, ref):
        self.args = args
        self.ref = ref
        self.monitor = Session(args.db)
        self.done = {k: 0 for k in KINDS}
        self.misses = {k: 0 for k in KINDS}
        self.max_seen = {k: 0 for k in KINDS}
        self.sum_seen = {k: 0 for k in KINDS}
        self.core_linger = 0        # index kind: core's I/Os still in flight right after the error
        self.core_listed = 0        # index kind: most completed core handles listed afterwards
        # io_uring: the kernel completes core's I/Os, and a backend reaps the
        # completions (pg_aios: SUBMITTED until then) only when it next waits
        # for I/O; core's own scans, cancelled, leave theirs so just the same
        self.io_uring = self.monitor.query("SHOW io_method;") == ["io_uring"]
        self.elapsed = {k: 0.0 for k in KINDS}
        self.victim_samples = {}    # kind -> [(iteration, fds, memory)]

    # --- the monitor's view of the victim's I/O ---------------------------------

    def inflight(self, pid, source):
        """pids of the I/Os in flight of a backend and its parallel workers
        (core lists its completed handles until their owner reuses them:
        those are not in flight)"""
        out = self.monitor.query(
            f"SELECT pid FROM pg_stat_aios WHERE source = '{source}' "
            f"AND state NOT LIKE 'COMPLETED%' AND (pid = {pid} OR pid IN "
            f"(SELECT pid FROM pg_stat_activity WHERE leader_pid = {pid}));")
        return [int(x) for x in out]

    def wait_inflight(self, victim, source, want):
        """Wait until at least 'want' reads of the victim (or its workers) are
        in flight; return their pids (one per read), or None if the statement
        ended first or 5 s passed."""
        deadline = time.monotonic() + 5
        last = 0
        self.history = []
        while time.monotonic() < deadline:
            pids = self.inflight(victim.pid, source)
            if not self.history or self.history[-1] != len(pids):
                self.history.append(len(pids))
            # enough, and no more coming (the submission burst is over)
            if len(pids) >= want and len(pids) <= last:
                return pids
            last = len(pids)
            if victim.has_output():
                return None
        return None

    def left_inflight(self, pids, source):
        """Rows of pg_stat_aios for these pids: all of pg_dio's (it lists a
        read only while it is in flight); core's that are not completed."""
        ids = ",".join(str(p) for p in pids)
        active = " AND state NOT LIKE 'COMPLETED%'" if source == "core" else ""
        return self.monitor.query(f"SELECT pid, io_id, state FROM pg_stat_aios "
                                  f"WHERE source = '{source}' AND pid IN ({ids}){active};")

    def seen(self, kind, pids):
        self.max_seen[kind] = max(self.max_seen[kind], len(pids))
        self.sum_seen[kind] += len(pids)

    # --- checks -------------------------------------------------------------------

    def expect_error(self, kind, out, what):
        errors = [l for l in out if is_error(l)]
        if not any(EXPECTED_ERROR[kind] in l for l in errors):
            raise Failure(f"{kind}: {what}: expected '{EXPECTED_ERROR[kind]}', got {out}")

    def check_backend(self, victim, kind):
        """The backend still works: SELECT 1 and a real scan equal to core's."""
        if kind == "index":
            sql = f"SELECT 1; {INDEX_CHECK};"
            want = self.ref["index"]
        else:
            sql = (f"RESET statement_timeout; SET pg_dio.inject_fault = 'none'; "
                   f"SET max_parallel_workers_per_gather = 0; SELECT 1; {CHECK_SCAN}; "
                   f"SET pg_dio.inject_fault = 'delay';")
            want = self.ref["check"]
        out = victim.query(sql, timeout=30)
        if out != ["1"] + want:
            raise Failure(f"{kind}: after the cancel the backend answered {out}, want {['1'] + want}")

    def sample_victim(self, kind, victim, i):
        core, fds = fd_counts(victim.pid)
        mem = int(victim.query("SELECT sum(total_bytes) FROM pg_backend_memory_contexts;")[0])
        self.victim_samples.setdefault(kind, []).append((i, fds, mem))

    # --- one iteration per kind ---------------------------------------------------------

    def dio_iteration(self, kind, victim, i):
        """timeout or cancel on a reused victim; True if it counted."""
        stmt = STATEMENT_SQL[STATEMENTS[i % len(STATEMENTS)]]
        if kind == "timeout":
            stmt = f"SET statement_timeout = '{self.args.timeout_ms}ms'; {stmt}"
        victim.send(stmt)
        pids = self.wait_inflight(victim, "pg_dio", self.args.min_inflight)
        if pids is None and kind == "cancel":
            # the statement cannot end by itself: something is wrong
            out = victim.result(timeout=1) if victim.has_output() else "(still running)"
            raise Failure(f"cancel: no reads of {victim.pid} in flight within 5 s "
                          f"({STATEMENTS[i % len(STATEMENTS)]}): {out}")
        if pids is not None:
            self.seen(kind, pids)
        if kind == "cancel":
            if self.monitor.query(f"SELECT pg_cancel_backend({victim.pid});") != ["t"]:
                raise Failure(f"cancel: pg_cancel_backend({victim.pid}) failed")
        try:
            out = victim.result(timeout=5)
        except TimeoutError as e:
            raise Failure(f"{kind}: backend {victim.pid} stuck after the cancel: {e}")
        self.expect_error(kind, out, STATEMENTS[i % len(STATEMENTS)])
        left = self.left_inflight(set(pids or []) | {victim.pid}, "pg_dio")
        if left:
            raise Failure(f"{kind}: pg_stat_aios still shows reads after the cancel: {left}")
        self.check_backend(victim, kind)
        return pids is not None     # else the timer fired before we saw the reads: repeat

    def terminate_iteration(self, i):
        victim = Session(self.args.db)
        try:
            # a new backend works: a real scan with the right result first
            victim.query(DIO_SETTINGS)
            self.check_backend(victim, "terminate")
            name = STATEMENTS[i % len(STATEMENTS)]
            victim.send(STATEMENT_SQL[name])
            pids = self.wait_inflight(victim, "pg_dio", self.args.min_inflight)
            if pids is None:
                out = victim.result(timeout=1) if victim.has_output() else "(still running)"
                state = self.monitor.query(f"SELECT pid, backend_type, state, wait_event "
                                           f"FROM pg_stat_activity WHERE pid = {victim.pid} "
                                           f"OR leader_pid = {victim.pid};")
                raise Failure(f"terminate: no reads of {victim.pid} in flight within 5 s "
                              f"({name}): {out}; reads seen {self.history}; {state}")
            self.seen("terminate", pids)
            if self.monitor.query(f"SELECT pg_terminate_backend({victim.pid});") != ["t"]:
                raise Failure(f"terminate: pg_terminate_backend({victim.pid}) failed")
            # (pg_terminate_backend's own wait polls every 100 ms: poll faster)
            deadline = time.monotonic() + 5
            while process_alive(victim.pid):
                if time.monotonic() > deadline:
                    raise Failure(f"terminate: backend {victim.pid} did not exit within 5 s")
                time.sleep(0.002)
            try:
                out = victim.result(timeout=5)
                raise Failure(f"terminate: the session survived: {out}")
            except SessionGone as e:
                out = str(e).splitlines()
            except TimeoutError as e:
                raise Failure(f"terminate: psql still waiting after the backend exited: {e}")
            self.expect_error("terminate", out, name)
            left = self.left_inflight(set(pids) | {victim.pid}, "pg_dio")
            if left:
                raise Failure(f"terminate: pg_stat_aios still shows reads of the terminated "
                              f"backend: {left}")
            gone = self.monitor.query(f"SELECT count(*) FROM pg_stat_activity "
                                      f"WHERE pid = {victim.pid};")
            if gone != ["0"]:
                raise Failure(f"terminate: backend {victim.pid} still in pg_stat_activity")
        finally:
            victim.close()
        return True

    def index_iteration(self, victim, i):
        self.monitor.query(f"SELECT pg_dio_evict('{TABLE}') \\g /dev/null")
        victim.send(f"{INDEX_SCAN};")
        pids = self.wait_inflight(victim, "core", 1)
        if pids is None:
            out = victim.result(timeout=30)
            if any(is_error(l) for l in out):
                raise Failure(f"index: the scan failed: {out}")
            return False        # it finished before we saw a read: repeat
        self.seen("index", pids)
        if self.monitor.query(f"SELECT pg_cancel_backend({victim.pid});") != ["t"]:
            raise Failure(f"index: pg_cancel_backend({victim.pid}) failed")
        try:
            out = victim.result(timeout=5)
        except TimeoutError as e:
            raise Failure(f"index: backend {victim.pid} stuck after the cancel: {e}")
        self.expect_error("index", out, "PrefetchIndexScan")
        # core's I/Os issued before the cancel complete in the I/O workers;
        # the handles stay listed (COMPLETED_SHARED) until the backend reuses
        # them, as after core's own scans: none may stay in flight
        left = self.left_inflight({victim.pid}, "core")
        if left:
            self.core_linger += 1
            deadline = time.monotonic() + 2
            while left and not self.io_uring and time.monotonic() < deadline:
                time.sleep(0.01)
                left = self.left_inflight({victim.pid}, "core")
            if left and not self.io_uring:
                raise Failure(f"index: core's I/Os of {victim.pid} still in flight 2 s after "
                              f"the cancel: {left}")
        if self.left_inflight({victim.pid}, "pg_dio"):
            raise Failure("index: pg_dio reads in flight after the cancel")
        self.check_backend(victim, "index")
        # io_uring: the backend has waited for I/O again (its next scan); by
        # now every I/O it submitted before the cancel is reaped
        left = self.left_inflight({victim.pid}, "core") if self.io_uring else []
        if left:
            raise Failure(f"index: core's I/Os of {victim.pid} still in flight after its next "
                          f"scan (io_uring): {left}")
        listed = int(self.monitor.query(f"SELECT count(*) FROM pg_stat_aios "
                                        f"WHERE pid = {victim.pid};")[0])
        self.core_listed = max(self.core_listed, listed)
        return True

    # --- driver -------------------------------------------------------------------

    def run_kind(self, kind):
        count = self.args.count
        started = time.monotonic()
        victim = None
        if kind in ("timeout", "cancel", "terminate"):
            # out of shared buffers, so that DirectSeqScan reads directly
            self.monitor.query(f"SELECT pg_dio_evict('{TABLE}', false) \\g /dev/null")
        if kind in ("timeout", "cancel"):
            victim = Session(self.args.db)
            victim.query(DIO_SETTINGS)
            for name, node in PLAN_NODE.items():
                sql = STATEMENT_SQL[name].replace("SELECT", "EXPLAIN (COSTS OFF) SELECT")
                out = victim.query(sql)
                if not any(node in l for l in out):
                    raise Failure(f"{kind}: {name} is not a {node}: {out}")
        elif kind == "index":
            victim = Session(self.args.db)
            victim.query(INDEX_SETTINGS)
            out = victim.query(f"EXPLAIN (COSTS OFF) {INDEX_SCAN};")
            if not any("PrefetchIndexScan" in l for l in out):
                raise Failure(f"index: not a PrefetchIndexScan: {out}")
        i = 0
        try:
            while self.done[kind] < count:
                if self.misses[kind] > count:
                    raise Failure(f"{kind}: {self.misses[kind]} iterations ended before their "
                                  f"reads were seen in flight")
                if kind == "terminate":
                    ok = self.terminate_iteration(i)
                elif kind == "index":
                    ok = self.index_iteration(victim, i)
                else:
                    ok = self.dio_iteration(kind, victim, i)
                i += 1
                if ok:
                    self.done[kind] += 1
                else:
                    self.misses[kind] += 1
                if victim is not None and (self.done[kind] == min(10, count - 1) and ok
                                           or self.done[kind] == count):
                    self.sample_victim(kind, victim, self.done[kind])
        finally:
            if victim is not None:
                victim.close()
            self.elapsed[kind] = time.monotonic() - started


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=200, help="iterations per kind (default 200)")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--timeout-ms", type=int, default=50, help="statement_timeout of 'timeout'")
    ap.add_argument("--min-inflight", type=int, default=1,
                    help="pg_dio reads in flight to wait for before cancelling")
    ap.add_argument("--db", default="pg_dio_cancel")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            ap.error(f"unknown kind {k}")

    log = server_log_path()
    log_start = log_size(log)
    ref, size = setup(args.db)
    print(f"cancel loops: {args.count} each of {', '.join(kinds)}; {TABLE} "
          f"{size // (1024 * 1024)} MB", flush=True)
    loop = Loop(args, ref)
    failed = False
    try:
        for kind in kinds:
            loop.run_kind(kind)
            s = loop.victim_samples.get(kind)
            extra = ""
            if s and len(s) >= 2:
                extra = (f"; victim {s[0][0]}th/{s[-1][0]}th: fds {s[0][1]}/{s[-1][1]}, "
                         f"memory {s[0][2]}/{s[-1][2]} bytes")
            linger = (f"; core's I/Os still in flight right after the cancel {loop.core_linger}x, "
                      f"completed handles listed until reuse: at most {loop.core_listed}") \
                if kind == "index" else ""
            print(f"  {kind}: {loop.done[kind]} in {loop.elapsed[kind]:.1f} s "
                  f"({loop.misses[kind]} repeated), reads in flight when hit: average "
                  f"{loop.sum_seen[kind] / max(1, loop.done[kind]):.1f}, max {loop.max_seen[kind]}"
                  f"{linger}{extra}", flush=True)
            if s and len(s) >= 2:
                if s[-1][1] > s[0][1]:
                    raise Failure(f"{kind}: the victim's fds grew from {s[0][1]} to {s[-1][1]}")
                if s[-1][2] - s[0][2] > 64 * 1024:
                    raise Failure(f"{kind}: the victim's memory grew from {s[0][2]} to {s[-1][2]}")
        left = loop.monitor.query("SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio';")
        stats = loop.monitor.query("SELECT reads_submitted = reads_completed AND reads_in_flight = 0 "
                                   "FROM pg_dio_cluster_stats();")
        if left != ["0"] or stats != ["t"]:
            raise Failure(f"reads left in flight at the end: pg_stat_aios {left}, "
                          f"cluster counters reaped {stats}")
    except (Failure, RuntimeError, TimeoutError, SessionGone) as e:
        print(f"cancel loops FAILED: {e}", file=sys.stderr)
        failed = True
    finally:
        loop.monitor.close()

    crashes = log_crashes(log, log_start)
    if crashes:
        print("cancel loops FAILED: the server log shows a crash:\n" + "\n".join(crashes[:5]),
              file=sys.stderr)
        failed = True
    if not failed:
        print(f"cancel loops ok ({sum(loop.elapsed.values()):.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
