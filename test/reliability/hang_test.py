#!/usr/bin/env python3
"""Reads the kernel never completes: cancel, ROLLBACK and terminate still
return within seconds, and the backend (or its successor) works.

pg_dio.inject_fault = 'hang' (test only) points every read submitted under it
at an empty pipe and keeps the abort/exit drain from cancelling it: a device
whose reads hang and ignore cancellation.  The drain gives up on them after
5 s (DIO_DRAIN_TIMEOUT_MS), abandons their buffers and turns the engine off
in that process.  Three cases, each in a new backend:

  cancel     statement_timeout fires while a DirectSeqScan waits for a hung read
  rollback   a cursor (DirectSeqScan) read on past the reads that completed,
             with hung reads queued behind them; then ROLLBACK
  terminate  the same cursor, then pg_terminate_backend() from a monitor

Each must return (the process exit, for terminate) within 15 s.  Then:
  - the server log has the drain's message, and no crash;
  - cancel, rollback: the same backend answers the whole-table scan with
    core's result, now through the buffer manager (its fallback_no_uring
    grows), and its abandoned reads are still listed in pg_stat_aios (the
    kernel still owns their buffers);
  - terminate: the process is gone, pg_stat_aios lists nothing of it, a new
    backend reads directly again and answers core's result.

Needs a running cluster with pg_dio preloaded (PGHOST/PGPORT/PGUSER as
superuser, psql on PATH).  Usage: hang_test.py [--db NAME]
"""
import argparse
import os
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgsession import fresh_database, Session, psql_once, is_error, server_log_path, log_size, log_crashes  # noqa: E402

TABLE = "hang_t"
BOUND_S = 15
SETTINGS = ("SET pg_dio.direct_scan_threshold = 0; SET pg_dio.os_cache_check = off; "
            "SET pg_dio.io_size = '256kB'; SET pg_dio.queue_depth = 8; "
            "SET max_parallel_workers_per_gather = 0; SET enable_indexscan = off; "
            "SET enable_indexonlyscan = off; SET enable_bitmapscan = off;")
CHECK = f"SELECT count(*), sum(id), sum(octet_length(pad)) FROM {TABLE}"
DRAIN_MSG = "did not complete within"


class Failure(Exception):
    pass


def setup(db):
    fresh_database(db)
    psql_once(db, f"""
CREATE EXTENSION pg_dio;
CREATE TABLE {TABLE} (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO {TABLE} SELECT g, md5(g::text) || repeat('x', 100) FROM generate_series(1, 200000) g;
VACUUM (FREEZE, ANALYZE) {TABLE};""")
    return psql_once(db, f"SET pg_dio.enable_direct_scan = off; {CHECK};")


def stats(s):
    out = s.query("SELECT blocks_direct, fallback_no_uring FROM pg_stat_aio_backends "
                  "WHERE pid = pg_backend_pid();")
    return tuple(int(x) for x in out[0].split("|"))


def listed(monitor, pid):
    return int(monitor.query(f"SELECT count(*) FROM pg_stat_aios WHERE source = 'pg_dio' "
                             f"AND pid = {pid};")[0])


def cursor_with_hung_reads(s, monitor):
    """A DirectSeqScan cursor whose first reads completed, read on under the
    hang fault until hung reads are queued behind the completed ones."""
    s.query(f"SELECT pg_dio_evict('{TABLE}'); BEGIN; "
            f"DECLARE c NO SCROLL CURSOR FOR SELECT id FROM {TABLE}; FETCH 1 FROM c;")
    s.query("SET LOCAL pg_dio.inject_fault = 'hang'; FETCH 3000 FROM c;")
    n = listed(monitor, s.pid)
    if n == 0:
        raise Failure("no hung read in flight behind the cursor")
    return n


def timed(what, fn):
    t0 = time.monotonic()
    out = fn()
    secs = time.monotonic() - t0
    if secs > BOUND_S:
        raise Failure(f"{what} took {secs:.1f} s (bound {BOUND_S} s)")
    return out, secs


def check_after(s, monitor, ref, before, what):
    """The same backend answers core's result, through the buffer manager."""
    out = s.query(f"RESET pg_dio.inject_fault; {CHECK};", timeout=60)
    if out != ref:
        raise Failure(f"{what}: the backend answered {out}, core {ref}")
    after = stats(s)
    if after[1] <= before[1]:
        raise Failure(f"{what}: the scan after did not fall back (stats {before} -> {after})")
    if listed(monitor, s.pid) == 0:
        raise Failure(f"{what}: the abandoned reads are no longer listed in pg_stat_aios")


def case_cancel(db, monitor, ref):
    s = Session(db)
    try:
        s.query(SETTINGS + f" SELECT pg_dio_evict('{TABLE}');")
        before = stats(s)
        s.send(f"SET pg_dio.inject_fault = 'hang'; SET statement_timeout = '300ms'; {CHECK};")
        out, secs = timed("cancel", lambda: s.result(timeout=BOUND_S + 5))
        if not any("statement timeout" in l for l in out if is_error(l)):
            raise Failure(f"cancel: expected the statement timeout, got {out}")
        s.query("RESET statement_timeout;")
        check_after(s, monitor, ref, before, "cancel")
        return secs
    finally:
        s.close()


def case_rollback(db, monitor, ref):
    s = Session(db)
    try:
        s.query(SETTINGS)
        before = stats(s)
        cursor_with_hung_reads(s, monitor)
        _, secs = timed("ROLLBACK", lambda: s.query("ROLLBACK;", timeout=BOUND_S + 5))
        check_after(s, monitor, ref, before, "rollback")
        return secs
    finally:
        s.close()


def case_terminate(db, monitor, ref):
    s = Session(db)
    pid = s.pid
    try:
        s.query(SETTINGS)
        cursor_with_hung_reads(s, monitor)
        t0 = time.monotonic()
        if monitor.query(f"SELECT pg_terminate_backend({pid});") != ["t"]:
            raise Failure(f"terminate: pg_terminate_backend({pid}) failed")
        while os.path.exists(f"/proc/{pid}"):
            if time.monotonic() - t0 > BOUND_S:
                raise Failure(f"terminate: backend {pid} still there after {BOUND_S} s")
            time.sleep(0.01)
        secs = time.monotonic() - t0
    finally:
        s.close()
    if listed(monitor, pid) != 0:
        raise Failure(f"terminate: pg_stat_aios still lists reads of {pid}")
    n = Session(db)
    try:
        n.query(SETTINGS + f" SELECT pg_dio_evict('{TABLE}');")
        before = stats(n)
        out = n.query(f"{CHECK};")
        after = stats(n)
        if out != ref or after[0] <= before[0]:
            raise Failure(f"terminate: the next backend answered {out} (core {ref}), "
                          f"blocks read directly {before[0]} -> {after[0]}")
    finally:
        n.close()
    return secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", default="pg_dio_hang")
    args = ap.parse_args()
    log = server_log_path()
    start = log_size(log)
    ref = setup(args.db)
    monitor = Session(args.db)
    failed = False
    try:
        for name, fn in (("cancel", case_cancel), ("rollback", case_rollback),
                         ("terminate", case_terminate)):
            secs = fn(args.db, monitor, ref)
            print(f"  {name}: returned in {secs:.1f} s", flush=True)
        if log is not None:
            with open(log, "rb") as f:
                f.seek(start)
                text = f.read().decode("utf-8", "replace")
            n = text.count(DRAIN_MSG)
            if n < 3:
                raise Failure(f"the server log has the drain's message {n} times, want 3")
    except (Failure, RuntimeError, TimeoutError) as e:
        print(f"hang test FAILED: {e}", file=sys.stderr)
        failed = True
    finally:
        monitor.close()
        try:
            psql_once("postgres", f"DROP DATABASE IF EXISTS {args.db};")
            # the abandoned reads would stay in the cluster's totals as in flight
            psql_once("postgres", "CREATE EXTENSION IF NOT EXISTS pg_dio; SELECT pg_dio_stats_reset();")
        except RuntimeError as e:
            print(f"hang test: cleanup failed: {e}", file=sys.stderr)
            failed = True
    crashes = log_crashes(log, start)
    if crashes:
        print("hang test FAILED: the server log shows a crash:\n" + "\n".join(crashes[:5]),
              file=sys.stderr)
        failed = True
    if not failed:
        print("hang test ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
