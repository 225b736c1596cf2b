#!/usr/bin/env python3
"""Build the bench's tables on the cluster PGHOST/PGPORT point at, as the
experiments would build them on first use: pgbench_accounts (seqscan) and
bench_idx, bench_idx_av (indexscan), each only if missing or of another
size (PG_DIO_BENCH_MODE, PG_DIO_BENCH_SCALE).  test/bench/run.sh runs it on
the primary before it makes the hot standby the experiments then run on
(PG_DIO_BENCH_STANDBY=1), which cannot write.

Usage: prepare.py seqscan|indexscan ...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from engine_vs_fio import bench_scale, ensure_table  # noqa: E402
import indexscan  # noqa: E402

if __name__ == "__main__":
    mode = os.environ.get("PG_DIO_BENCH_MODE", "quick")
    for what in sys.argv[1:]:
        if what == "seqscan":
            ensure_table(bench_scale(mode))
        elif what == "indexscan":
            indexscan.ensure_tables(indexscan.index_rows(mode))
        else:
            sys.exit(f"prepare.py: unknown experiment {what}")
