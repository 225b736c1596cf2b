#!/usr/bin/env bash
# PostgreSQL's own regression suite (installcheck-parallel) and isolation
# suite, run twice on one server with pg_dio preloaded: pg_dio's scans off,
# then forced on.  The two runs' outputs, EXPLAIN normalized
# (test/core_regress/normalize.py), must be identical except for the entries
# of test/core_regress/allowed.txt.
#
#   test/core_regress.sh [--io-method M] [--suite regress|isolation|all]
#
# Needs a PostgreSQL built from source (test/scripts/build_pg.sh), whose build
# tree holds the suites; PG_CONFIG names its pg_config, or PG=18|19 picks the
# cached build.  Prints "N passed, N failed" (one test per suite and mode).
set -uo pipefail
. "$(dirname "$0")/scripts/common.sh"

IO_METHOD=worker
SUITES=all
while [ $# -gt 0 ]; do
	case "$1" in
	--io-method) IO_METHOD=$2; shift 2 ;;
	--suite) SUITES=$2; shift 2 ;;
	*) die "usage: $0 [--io-method worker|io_uring|sync] [--suite regress|isolation|all]" ;;
	esac
done

if [ -z "${PG_CONFIG:-}" ]; then
	PG_CONFIG=$("$PG_DIO_ROOT/test/scripts/build_pg.sh" "${PG:-18}") || exit 1
fi
export PG_CONFIG
PGC=$PG_CONFIG
BUILD=$(cd "$(dirname "$PGC")/../.." && pwd)/src
[ -f "$BUILD/src/test/regress/parallel_schedule" ] ||
	die "$PGC is not a build from source (no $BUILD/src/test/regress); use test/scripts/build_pg.sh"
BINDIR=$("$PGC" --bindir)
WORK=$(pg_dio_workdir)
CLUSTER="core$(pg_major "$PGC")-$IO_METHOD"
OUT="$WORK/.tmp/core-regress/$CLUSTER"
ALLOWED="$PG_DIO_ROOT/test/core_regress/allowed.txt"
NORMALIZE="$PG_DIO_ROOT/test/core_regress/normalize.py"

make -s -C "$PG_DIO_ROOT" PG_CONFIG="$PGC" install >/dev/null || die "pg_dio did not build against $PGC"

cleanup() { "$PG_DIO_ROOT/test/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1
# core's suites expect a server as installcheck makes it; what differs from
# initdb's defaults is what the suites need (prepared_xacts) or the mode, and
# compute_query_id = regress, as PostgreSQL's suites run where query IDs are
# computed (pg_dio computes them): EXPLAIN (VERBOSE) would print them, and
# they differ from run to run (they hash the OIDs of objects made anew)
eval "$("$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER" "io_method = $IO_METHOD" \
	"max_prepared_transactions = 10" "max_connections = 100" "compute_query_id = regress")" ||
	die "could not start the $IO_METHOD cluster"

rm -rf "$OUT"
mkdir -p "$OUT"
is_root && chown -R "$PG_DIO_OS_USER" "$OUT"

# as_user CMD...: as the server's account, which must write what the suites'
# COPY TO writes into the output directory
as_user() {
	if is_root; then
		runuser -u "$PG_DIO_OS_USER" -- env PATH="$BINDIR:$PATH" PGHOST="$PGHOST" PGPORT="$PGPORT" \
			PGUSER="$PGUSER" PGOPTIONS="${PGOPTIONS:-}" "$@"
	else
		"$@"
	fi
}

OFF="-c pg_dio.enable_direct_scan=off -c pg_dio.enable_index_prefetch=off -c pg_dio.enable_probe_prefetch=off"
ON="-c pg_dio.enable_direct_scan=on -c pg_dio.direct_scan_threshold=0 -c pg_dio.enable_index_prefetch=on -c pg_dio.index_prefetch_min_rows=0 -c pg_dio.enable_probe_prefetch=on -c pg_dio.probe_shared_memory=16MB"

# run_mode SUITE MODE OPTIONS: one run of a suite into $OUT/SUITE-MODE
run_mode() {
	local suite=$1 mode=$2 dir="$OUT/$1-$2"
	mkdir -p "$dir"
	is_root && chown "$PG_DIO_OS_USER" "$dir"
	case "$suite" in
	regress)
		PGOPTIONS=$3 as_user "$BUILD/src/test/regress/pg_regress" \
			--inputdir="$BUILD/src/test/regress" --bindir="$BINDIR" \
			--dlpath="$BUILD/src/test/regress" --outputdir="$dir" \
			--schedule="$BUILD/src/test/regress/parallel_schedule" \
			--max-concurrent-tests=20 >"$dir/log" 2>&1
		;;
	isolation)
		PGOPTIONS=$3 as_user "$BUILD/src/test/isolation/pg_isolation_regress" \
			--inputdir="$BUILD/src/test/isolation" --bindir="$BINDIR" \
			--outputdir="$dir" \
			--schedule="$BUILD/src/test/isolation/isolation_schedule" >"$dir/log" 2>&1
		;;
	esac
	echo "$suite $mode ($IO_METHOD): $(grep -cE '^ok ' "$dir/log") ok, $(grep -cE '^not ok ' "$dir/log") not ok against core's expected output"
}

passed=0
failed=0
for suite in regress isolation; do
	[ "$SUITES" = all ] || [ "$SUITES" = "$suite" ] || continue
	echo "== PostgreSQL's $suite suite, io_method=$IO_METHOD: pg_dio's scans off, then forced on"
	run_mode "$suite" off "$OFF"
	run_mode "$suite" on "$ON"
	if python3 "$NORMALIZE" --allowed "$ALLOWED" --suite "$suite" --io-method "$IO_METHOD" \
		"$OUT/$suite-off/results" "$OUT/$suite-on/results" >"$OUT/$suite.diff"; then
		passed=$((passed + 1))
		echo "ok: $suite forced on matches forced off ($IO_METHOD)"
	else
		failed=$((failed + 1))
		echo "not ok: $suite forced on differs from forced off ($IO_METHOD):"
		cat "$OUT/$suite.diff"
	fi
done
if grep -E "terminated by signal|PANIC" "$WORK/.tmp/clusters/$CLUSTER/server.log"; then
	echo "pg_dio: the server log shows a crash" >&2
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
