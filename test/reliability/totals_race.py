#!/usr/bin/env python3
"""Cluster totals never miss an exiting backend.

Backends come and go, each reading a small table with pg_dio_read() (so it
has counters to fold into the exited totals when it exits), while a reader
polls pg_dio_cluster_stats() as fast as it can.  Without a reset, the
cluster's reads_submitted and blocks_direct can only grow: a poll that saw
less than the one before missed a backend that exited between the moments
the totals were read.

Needs a running cluster with pg_dio preloaded (PGHOST/PGPORT/PGUSER as
superuser, psql on PATH).  Usage: totals_race.py [--backends N] [--db NAME]
"""
import argparse
import os
import subprocess
import sys
import threading

sys.dont_write_bytecode = True     # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgsession import fresh_database, Session, psql_once  # noqa: E402

POLL = ("SELECT reads_submitted, blocks_direct FROM pg_dio_cluster_stats();")


def churn(db, n, errors):
    for _ in range(n):
        r = subprocess.run(["psql", "-X", "-At", "-q", "-d", db, "-c",
                            "SELECT direct_blocks FROM pg_dio_read('race_t');"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(r.stderr.strip())
            return


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", type=int, default=400)
    ap.add_argument("--db", default="pg_dio_race")
    args = ap.parse_args()
    fresh_database(args.db)
    psql_once(args.db, "CREATE EXTENSION pg_dio; CREATE TABLE race_t AS "
                       "SELECT g FROM generate_series(1, 2000) g;")
    errors = []
    threads = [threading.Thread(target=churn, args=(args.db, args.backends // 2, errors))
               for _ in range(2)]
    reader = Session(args.db)
    polls = dips = 0
    first = None
    last = (0, 0)
    try:
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            cur = tuple(int(x) for x in reader.query(POLL)[0].split("|"))
            first = first or cur
            polls += 1
            if cur[0] < last[0] or cur[1] < last[1]:
                dips += 1
                if dips <= 3:
                    print(f"  totals went back: {last} -> {cur}", flush=True)
            last = max(last, cur)
    finally:
        for t in threads:
            t.join()
        reader.close()
        psql_once("postgres", f"DROP DATABASE IF EXISTS {args.db};")
    grown = last[0] - first[0] if first else 0
    print(f"  {args.backends} backends, {polls} polls, totals grew by {grown} reads, "
          f"{dips} went back")
    if errors:
        print(f"totals race FAILED: a backend failed: {errors[0]}", file=sys.stderr)
        return 1
    if dips or grown <= 0:
        print("totals race FAILED: " + (f"{dips} polls missed an exiting backend" if dips
                                        else "the totals did not grow"), file=sys.stderr)
        return 1
    print("totals race ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
