#!/usr/bin/env bash
# pg_dio demo: a throwaway cluster with sample data, a relation read through
# the direct-I/O engine, and the diagnostics views.  Run via `make demo`.
set -euo pipefail
. "$(dirname "$0")/scripts/common.sh"

SCALE=${PG_DIO_DEMO_SCALE:-20}		# pgbench scale: 20 = ~260 MB of accounts
CLUSTER=demo

cleanup() { "$PG_DIO_ROOT/test/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1; }
trap cleanup EXIT
trap 'exit 130' INT TERM

"$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1 || true
eval "$("$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER")"

banner() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { psql -X -v ON_ERROR_STOP=1 "$@"; }

banner "sample data: pgbench -i -s $SCALE"
pgbench -i -q -s "$SCALE" >/dev/null 2>&1
run -q -c "VACUUM (ANALYZE) pgbench_accounts" -c "CREATE EXTENSION pg_dio"
run -c "SELECT pg_size_pretty(pg_relation_size('pgbench_accounts')) AS accounts_size, current_setting('data_checksums') AS data_checksums, current_setting('io_method') AS io_method"

banner "pg_dio_read: every block of pgbench_accounts with O_DIRECT through io_uring, verified, no shared buffers, no page cache"
run -x -c "SELECT * FROM pg_dio_read('pgbench_accounts')"

banner "the same read with 256kB reads and 32 in flight (pg_dio.io_size, pg_dio.queue_depth)"
run -c "SET pg_dio.io_size = '256kB'" -c "SET pg_dio.queue_depth = 32" \
	-c "SELECT blocks, reads, pg_size_pretty(avg_read_bytes) AS avg_read, direct_blocks, fallback_blocks, checksum_failures, round(mb_per_s) AS mb_per_s FROM pg_dio_read('pgbench_accounts')"

banner "a fault: io_uring unavailable -> every block falls back to the buffer manager, counted"
run -c "SET pg_dio.inject_fault = 'ring_setup'" \
	-c "SELECT blocks, reads, direct_blocks, fallback_blocks, fallback_reasons FROM pg_dio_read('pgbench_accounts')"

NOSEQ="SET max_parallel_workers_per_gather = 0; SET enable_indexonlyscan = off; SET enable_indexscan = off; SET enable_bitmapscan = off;"
evict() {
	run -q -c "SELECT * FROM pg_dio_evict('pgbench_accounts')" >/dev/null
}

banner "pg_dio_evict + pg_dio_residency: pgbench_accounts out of shared buffers and the OS page cache"
run -c "SELECT * FROM pg_dio_evict('pgbench_accounts')" -c "SELECT * FROM pg_dio_residency('pgbench_accounts')"

banner "EXPLAIN (ANALYZE, BUFFERS): DirectSeqScan, cold"
evict
run -q -c "$NOSEQ SET pg_dio.os_cache_check = off;" \
	-c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT sum(abalance) FROM pgbench_accounts"

banner "EXPLAIN (ANALYZE, BUFFERS): core's Seq Scan of the same table, cold"
evict
run -q -c "$NOSEQ SET pg_dio.enable_direct_scan = off;" \
	-c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT sum(abalance) FROM pgbench_accounts"

banner "DirectSeqScan when the table is in the OS page cache: read through core's buffered path"
run -q -c "SELECT * FROM pg_dio_evict('pgbench_accounts', os_cache => false)" >/dev/null
run -c "SELECT fork, blocks, shared_buffers, os_cache FROM pg_dio_residency('pgbench_accounts') WHERE fork = 'main'"
run -q -c "$NOSEQ" -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT sum(abalance) FROM pgbench_accounts"

banner "DirectSeqScan after pg_prewarm (what fits in shared buffers is read from there, the rest from the OS cache)"
run -q -c "CREATE EXTENSION pg_prewarm" -c "SELECT pg_prewarm('pgbench_accounts')" >/dev/null
run -q -c "$NOSEQ" -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT sum(abalance) FROM pgbench_accounts"

banner "index scans: a random-order index on pgbench_accounts (prefetch needs heap reads in index order)"
run -q -c "ALTER TABLE pgbench_accounts ADD COLUMN r int" \
	-c "UPDATE pgbench_accounts SET r = hashint4(aid) & 1048575" \
	-c "CREATE INDEX pgbench_accounts_r ON pgbench_accounts (r)" -c "VACUUM (ANALYZE) pgbench_accounts"
IDX="SET max_parallel_workers_per_gather = 0; SET enable_bitmapscan = off; SET enable_seqscan = off;"
evict_idx() {
	run -q -c "SELECT * FROM pg_dio_evict('pgbench_accounts')" -c "SELECT * FROM pg_dio_evict('pgbench_accounts_r')" >/dev/null
}

banner "EXPLAIN (ANALYZE, BUFFERS): PrefetchIndexScan, cold (heap blocks advised ahead, read in index order)"
evict_idx
run -q -c "$IDX" -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT sum(abalance) FROM pgbench_accounts WHERE r BETWEEN 100000 AND 110000"

banner "EXPLAIN (ANALYZE, BUFFERS): core's Index Scan of the same range, cold"
evict_idx
run -q -c "$IDX SET pg_dio.enable_index_prefetch = off;" \
	-c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT sum(abalance) FROM pgbench_accounts WHERE r BETWEEN 100000 AND 110000"

banner "pg_stat_aios: reads in flight, seen from another session (held by the test-only delay fault), then cancelled"
psql -X -q -c "SET pg_dio.inject_fault = 'delay'" -c "SET pg_dio.inject_delay = '5s'" \
	-c "SELECT blocks FROM pg_dio_read('pgbench_accounts')" >/dev/null 2>&1 &
bg=$!
sleep 1
run -c "SELECT source, pid, state, operation, relation, fork, block, blocks, pg_size_pretty(bytes) AS size, date_trunc('milliseconds', age) AS age FROM pg_stat_aios ORDER BY pid, block LIMIT 6"
run -q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_aios WHERE source = 'pg_dio' GROUP BY pid" >/dev/null
wait "$bg" || true
run -c "SELECT count(*) AS in_flight_after_cancel FROM pg_stat_aios WHERE source = 'pg_dio'"

banner "pg_stat_aio_backends: pg_dio's counters for this backend, beside core's per-backend I/O"
# core's per-backend I/O statistics are flushed when the backend goes idle;
# the helper queries' own results go to /dev/null (\o), only the view's row shows
run -x -q -c '\o /dev/null' -c "SELECT blocks FROM pg_dio_read('pgbench_accounts')" \
	-c "SELECT count(*) FROM pgbench_branches" -c "SELECT pg_stat_force_next_flush()" -c '\o' \
	-c "SELECT pid, backend_type, reads_submitted, reads_completed, pg_size_pretty(bytes_read) AS bytes_read, blocks_direct, blocks_fallback, submit_calls, wait_calls, round(wait_time_ms::numeric, 1) AS wait_time_ms, max_inflight, core_reads, pg_size_pretty(core_read_bytes) AS core_read_bytes, core_hits FROM pg_stat_aio_backends WHERE pid = pg_backend_pid()"

banner "cluster totals (exited backends included)"
run -x -c "SELECT reads_completed, pg_size_pretty(bytes_read) AS bytes_read, blocks_direct, blocks_fallback, errors, short_reads, max_inflight FROM pg_dio_cluster_stats()"

banner "pg_stat_aio_histogram: read latency (us) and read size (bytes), cluster-wide"
run -c "SELECT kind, lower_bound, upper_bound, count, repeat('#', (40 * count / max(count) OVER (PARTITION BY kind))::int) AS bar FROM pg_stat_aio_histogram WHERE pid IS NULL AND count > 0 ORDER BY kind, bucket"

echo
echo "pg_dio demo done; the cluster is stopped again.  For one to play with: make cluster"
