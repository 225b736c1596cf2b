#!/usr/bin/env bash
# Crash test: kill -9 a backend while its direct reads are in flight (in
# pg_dio_read and in a DirectSeqScan); the postmaster restarts the cluster;
# afterwards nothing is left in flight, the counters start from zero (the
# per-statement statistics too, which a clean restart keeps) and both work
# again.  Then a failed write-back in pg_dio_evict (injected) must
# PANIC, as core's failed fsyncs do.  Uses its own throwaway cluster
# ("crash"): its log is expected to show the crashes.  Prints "ok N - ..." / "not ok N - ..." lines.
set -uo pipefail
. "$(dirname "$0")/scripts/common.sh"

CLUSTER=crash
cleanup() { "$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1; }
trap cleanup EXIT
"$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1
eval "$("$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER")" || die "could not start the crash cluster"
export PGDATABASE=postgres
# every session: DirectSeqScan on this small table, reading directly
export PGOPTIONS="-c pg_dio.direct_scan_threshold=0 -c pg_dio.os_cache_check=off -c max_parallel_workers_per_gather=0"

n=0
failures=0
check() {			# check "description" "SQL returning t"
	n=$((n + 1))
	if [ "$(psql -X -At -c "$2" 2>&1)" = "t" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		failures=$((failures + 1))
	fi
}

wait_for_server() {
	for _ in $(seq 1 300); do
		psql -X -At -c "SELECT 1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

psql -X -q -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
CREATE EXTENSION pg_dio;
CREATE TABLE crash_t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO crash_t SELECT g, repeat('x', 300) FROM generate_series(1, 50000) g;
VACUUM (FREEZE) crash_t;
SQL

# pg_stat_dio_statements lives in core's cumulative statistics: kept across
# a clean restart (written out at shutdown, read back at start), discarded
# by crash recovery with core's own (checked after each crash below)
psql -X -q -c "SELECT blocks FROM pg_dio_read('crash_t')" >/dev/null
# its backend flushes its statistics as it exits, after psql has returned
# and after it has left pg_stat_activity (the exit callbacks run in that
# order): wait for the figure itself (at most 10 s), then check it
stmt_sql="SELECT sum(direct_blocks) = pg_relation_size('crash_t') / 8192 FROM pg_stat_dio_statements WHERE direct_blocks > 0"
for _ in $(seq 1 100); do
	[ "$(psql -X -At -c "$stmt_sql")" = t ] && break
	sleep 0.1
done
check "per-statement: pg_dio_read's statement counts its direct blocks" "$stmt_sql"
"$PG_DIO_ROOT/test/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1
eval "$("$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER")" || die "could not restart the crash cluster"
check "per-statement: kept across a clean restart" \
	"SELECT sum(direct_blocks) = pg_relation_size('crash_t') / 8192 FROM pg_stat_dio_statements WHERE direct_blocks > 0"

crash_during() {	# crash_during "description" "SQL that reads with the delay fault"
	local what=$1 sql=$2 pid
	psql -X -q -c "SET pg_dio.inject_fault = 'delay'" -c "SET pg_dio.inject_delay = '20s'" \
		-c "SELECT * FROM pg_dio_evict('crash_t')" -c "$sql" >/dev/null 2>&1 &
	pid=""
	for _ in $(seq 1 200); do
		pid=$(psql -X -At -c "SELECT pid FROM pg_stat_aios WHERE source = 'pg_dio' LIMIT 1" 2>/dev/null)
		[ -n "$pid" ] && break
		sleep 0.05
	done
	n=$((n + 1))
	if [ -z "$pid" ]; then
		echo "not ok $n - $what: reads in flight to crash into"
		failures=$((failures + 1))
		return
	fi
	echo "ok $n - $what: backend $pid has reads in flight"
	kill -9 "$pid"
	wait
	sleep 0.5
	n=$((n + 1))
	if wait_for_server; then
		echo "ok $n - $what: the cluster restarted after kill -9"
	else
		echo "not ok $n - $what: the cluster did not come back"
		failures=$((failures + 1))
		return
	fi
	check "$what: per-statement statistics discarded with core's" \
		"SELECT count(*) = 0 FROM pg_stat_dio_statements WHERE direct_blocks > 0"
	check "$what: nothing in flight after the restart" \
		"SELECT count(*) = 0 FROM pg_stat_aios WHERE source = 'pg_dio'"
	check "$what: cluster counters start again from zero" \
		"SELECT reads_submitted = 0 AND reads_in_flight = 0 FROM pg_dio_cluster_stats()"
	check "$what: pg_dio_read reads every block directly again" \
		"SELECT direct_blocks = blocks AND blocks = pg_relation_size('crash_t') / 8192 FROM pg_dio_read('crash_t')"
	check "$what: DirectSeqScan returns every row again" \
		"SELECT count(*) = 50000 AND sum(id) = 1250025000 FROM crash_t"
	n=$((n + 1))
	if psql -X -At -c "EXPLAIN SELECT count(*) FROM crash_t" | grep -q DirectSeqScan; then
		echo "ok $n - $what: (that was a DirectSeqScan)"
	else
		echo "not ok $n - $what: that was not a DirectSeqScan"
		failures=$((failures + 1))
	fi
}

crash_during "pg_dio_read" "SELECT * FROM pg_dio_read('crash_t')"
crash_during "DirectSeqScan" "SELECT count(*) FROM crash_t"
n=$((n + 1))
if grep -q "terminated by signal 9" "$(pg_dio_workdir)/.tmp/clusters/$CLUSTER/server.log"; then
	echo "ok $n - the server log shows the two crashes"
else
	echo "not ok $n - the server log shows the crashes"
	failures=$((failures + 1))
fi

# pg_dio_evict's write-back of a relation file fails: as a failed fsync of
# core's, a PANIC (data_sync_retry off), never a plain ERROR after which the
# checkpointer's next fsync could succeed with the write lost
log="$(pg_dio_workdir)/.tmp/clusters/$CLUSTER/server.log"
out=$(psql -X -At -c "SET pg_dio.inject_fault = 'fsync'" -c "SELECT * FROM pg_dio_evict('crash_t')" 2>&1)
n=$((n + 1))
if grep -q 'PANIC:  could not fdatasync file ".*": Input/output error' "$log"; then
	echo "ok $n - a failed write-back in pg_dio_evict is a PANIC"
else
	echo "not ok $n - a failed write-back in pg_dio_evict is a PANIC: $out"
	failures=$((failures + 1))
fi
n=$((n + 1))
if wait_for_server && [ "$(psql -X -At -c "SELECT count(*) = 50000 FROM crash_t")" = t ]; then
	echo "ok $n - the cluster restarted after the PANIC, its rows intact"
else
	echo "not ok $n - the cluster restarted after the PANIC"
	failures=$((failures + 1))
fi
[ "$failures" = 0 ]
