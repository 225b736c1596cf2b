#!/usr/bin/env bash
# Run every pg_dio test suite against a throwaway cluster:
#   pg_regress (sql/, expected/), pgTAP (test/pgtap/), isolation (test/isolation/).
# Usage: test/run_tests.sh [regress tests...]   (the Makefile passes $(REGRESS))
# Exits non-zero if anything failed; prints regression.diffs on failure.
set -uo pipefail
. "$(dirname "$0")/scripts/common.sh"

pg_dio_suite_env
OUT="$WORK/.tmp/test-output"
TAP="$WORK/.tmp/pgtap"
CLUSTER=test

REGRESS=("$@")
[ ${#REGRESS[@]} -gt 0 ] || REGRESS=($(sed -n 's/^REGRESS *= *//p' "$PG_DIO_ROOT/Makefile"))
ISOLATION=($(cd "$PG_DIO_ROOT/test/isolation/specs" && ls *.spec | sed 's/\.spec$//'))

cleanup() {
	for c in "$CLUSTER" nopreload custom_nodes plain; do
		"$PG_DIO_ROOT/test/cluster.sh" stop "$c" >/dev/null 2>&1
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1
eval "$("$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER" \
	"max_parallel_workers_per_gather = 2" "log_min_messages = log")" || die "could not start the test cluster"
export PGDATABASE=postgres
rm -rf "$OUT"
mkdir -p "$OUT"

started=$(date +%s)
# section TITLE: a part of the run begins; the one before says its seconds
section_title=
section_start=$SECONDS
section() {
	local label=${section_title%% (*}
	label=${label%%: [0-9]* s}
	[ -z "$label" ] || echo "-- ${label:0:48}: $((SECONDS - section_start)) s"
	section_title=$1
	section_start=$SECONDS
	[ -z "$1" ] || echo "== $1"
}
passed=0
failed=0
failed_suites=()
skipped_suites=()

# run_suite NAME CMD...: run a pg_regress-style suite writing to $OUT/NAME,
# count its "ok"/"not ok" lines, print regression.diffs if it failed.  Exit
# status 77: the suite could not run here and said why; counted as skipped.
run_suite() {
	local name=$1 rc p f
	shift
	"$@" 2>&1 | tee "$OUT/$name.log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" = 77 ]; then
		skipped_suites+=("$name")
		return 0
	fi
	p=$(grep -cE '^ok [0-9]+' "$OUT/$name.log")
	f=$(grep -cE '^not ok [0-9]+' "$OUT/$name.log")
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" != 0 ] || [ "$p" = 0 ]; then
		failed_suites+=("$name")
		[ -f "$OUT/$name/regression.diffs" ] && cat "$OUT/$name/regression.diffs"
	fi
	return 0
}

# run_check NAME CMD...: a check that passes or fails as a whole (its exit
# status), its output in $OUT/NAME.log
run_check() {
	local name=$1
	shift
	if "$@" 2>&1 | tee "$OUT/$name.log"; [ "${PIPESTATUS[0]}" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_suites+=("$name")
	fi
}

pg_regress() {
	(cd "$PG_DIO_ROOT" && "$PGXSDIR/src/test/regress/pg_regress" --bindir="$BINDIR" --inputdir=. "$@")
}

# --- pg_regress ------------------------------------------------------------
section "pg_regress: ${REGRESS[*]}"
run_suite regress pg_regress --outputdir="$OUT/regress" --dbname=contrib_regression "${REGRESS[@]}"

# --- pgTAP -----------------------------------------------------------------
section "pgTAP: test/pgtap"
psql -X -q -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS pgtap_regression" \
	-c "CREATE DATABASE pgtap_regression" >/dev/null &&
	psql -X -q -v ON_ERROR_STOP=1 -d pgtap_regression \
		-c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION pg_dio" >/dev/null
PERL5LIB="$TAP/usr/share/perl5${PERL5LIB:+:$PERL5LIB}" \
	"$TAP/usr/bin/pg_prove" --psql-bin "$BINDIR/psql" -d pgtap_regression \
	"$PG_DIO_ROOT"/test/pgtap/*.sql 2>&1 | tee "$OUT/pgtap.log"
rc=${PIPESTATUS[0]}
# count individual pgTAP tests: "Files=4, Tests=262" and "Failed: N" lines
tests=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$OUT/pgtap.log")
bad=$(sed -n 's/.*(Wstat: .* Tests: [0-9]* Failed: \([0-9]*\)).*/\1/p' "$OUT/pgtap.log" |
	awk '{ s += $1 } END { print s + 0 }')
[ "$rc" != 0 ] && [ "$bad" = 0 ] && bad=1
passed=$((passed + ${tests:-0} - bad))
failed=$((failed + bad))
[ "$rc" != 0 ] && failed_suites+=(pgtap)

# --- isolation -------------------------------------------------------------
section "isolation: ${ISOLATION[*]}"
run_suite isolation "$PGXSDIR/src/test/isolation/pg_isolation_regress" --bindir="$BINDIR" \
	--inputdir="$PG_DIO_ROOT/test/isolation" --outputdir="$OUT/isolation" \
	--dbname=isolation_regression --load-extension=pg_dio "${ISOLATION[@]}"

# --- differential stress (DirectSeqScan on vs off under concurrent change) ---
STRESS_SECONDS=${PG_DIO_STRESS_SECONDS:-20}
section "differential stress: ${STRESS_SECONDS} s"
run_check stress python3 "$PG_DIO_ROOT/test/stress/differential.py" --seconds "$STRESS_SECONDS" \
	--max-seconds $((STRESS_SECONDS * 3))
# the same with the readers on a hot standby of a primary that writes (its own
# clusters stress-p and stress-s; at least 5000 comparisons in runs of 300 s)
section "differential stress on a hot standby: ${STRESS_SECONDS} s"
run_check standby-stress env PG_DIO_STRESS_SECONDS="$STRESS_SECONDS" "$PG_DIO_ROOT/test/stress/standby_stress.sh"

# --- reliability: leaks and cancellation loops (test/reliability) ----------
# leaks.py: one backend, every read path under every injected fault, memory /
# fds / mappings steady (its --self-test first: planted leaks must be caught);
# cancel_loops.py: statement_timeout, pg_cancel_backend, pg_terminate_backend
# with reads in flight.  Full counts in make test too (about 25 s and 50 s).
LEAK_RUNS=${PG_DIO_LEAK_RUNS:-1000}
CANCEL_COUNT=${PG_DIO_CANCEL_COUNT:-200}
section "reliability: leaks (${LEAK_RUNS} runs in one backend, after its self-test)"
leaks_with_self_test() {
	local st
	python3 "$PG_DIO_ROOT/test/reliability/leaks.py" --self-test --runs 300
	st=$?
	python3 "$PG_DIO_ROOT/test/reliability/leaks.py" --runs "$LEAK_RUNS" && [ "$st" = 0 ]
}
run_check leaks leaks_with_self_test
section "reliability: cancel loops (${CANCEL_COUNT} each of timeout, cancel, terminate, index)"
run_check cancel-loops python3 "$PG_DIO_ROOT/test/reliability/cancel_loops.py" --count "$CANCEL_COUNT"
# totals_race.py: cluster totals polled while backends exit
section "reliability: cluster totals while backends exit"
run_check totals-race python3 "$PG_DIO_ROOT/test/reliability/totals_race.py"
# hang_test.py: reads that never complete (after the cancel loops: the reads
# it abandons stay counted as in flight until it resets the counters)
section "reliability: reads that never complete (cancel, ROLLBACK, terminate)"
run_check hang python3 "$PG_DIO_ROOT/test/reliability/hang_test.py"
# replica_test.py: a primary and a hot standby of its own (replica-p,
# replica-s), stopped at its end
section "reliability: hot standby (direct reads, replay LSN bound, conflicts, promotion)"
run_check replica python3 "$PG_DIO_ROOT/test/reliability/replica_test.py"

# --- monitoring: postgres_exporter and Prometheus, the real programs --------
# (Debian's packages, unpacked by test/setup.sh); monitoring/'s collector files
# and dashboard against the views (test/monitoring/exporter_test.py)
section "monitoring: postgres_exporter, pg_exporter's collectors, Prometheus, the dashboard"
run_check monitoring env PG_DIO_PROMETHEUS_ROOT="$WORK/.tmp/prometheus" \
	python3 "$PG_DIO_ROOT/test/monitoring/exporter_test.py"

# --- kill -9 with reads in flight (a cluster of its own) ---------------------
section "crash: kill -9 with direct reads in flight"
run_suite crash "$PG_DIO_ROOT/test/crash_test.sh"

# regress_own_cluster NAME SETTING: the pg_regress suite NAME against a
# cluster of its own, NAME, started with SETTING and destroyed afterwards
regress_own_cluster() {
	local name=$1 env
	"$PG_DIO_ROOT/test/cluster.sh" destroy "$name" >/dev/null 2>&1
	if ! env=$("$PG_DIO_ROOT/test/cluster.sh" start "$name" "$2"); then
		failed=$((failed + 1))
		failed_suites+=("$name")
		return
	fi
	run_suite "$name" bash -c 'eval "$1"; shift; exec "$@"' _ "$env" \
		"$PGXSDIR/src/test/regress/pg_regress" --bindir="$BINDIR" --inputdir="$PG_DIO_ROOT" \
		--outputdir="$OUT/$name" --dbname=contrib_regression "$name"
	"$PG_DIO_ROOT/test/cluster.sh" destroy "$name" >/dev/null 2>&1
}

# --- without shared_preload_libraries --------------------------------------
section "pg_regress without shared_preload_libraries: nopreload"
regress_own_cluster nopreload "shared_preload_libraries = ''"

# --- beside another extension's custom node that pg_dio does not know -------
# (test/modules/dio_test_custom, preloaded before pg_dio)
section "pg_regress beside a custom node pg_dio does not know: custom_nodes"
# (built anew: objects left from a build against another PostgreSQL would
# install as they are, and that server would refuse to load them)
if { make -s -C "$PG_DIO_ROOT/test/modules/dio_test_custom" PG_CONFIG="$PGC" clean &&
	make -s -C "$PG_DIO_ROOT/test/modules/dio_test_custom" PG_CONFIG="$PGC" install; } \
	>"$OUT/custom_nodes_build.log" 2>&1; then
	regress_own_cluster custom_nodes "shared_preload_libraries = 'dio_test_custom,pg_dio'"
else
	cat "$OUT/custom_nodes_build.log"
	failed=$((failed + 1))
	failed_suites+=(custom_nodes)
fi

# --- pg_stat_aios under a translated lc_messages (test/aios_lang.sh) --------
# needs PostgreSQL built with NLS: skipped, saying why, with the PyPI wheel,
# which has none; then it runs against the source build below
section "pg_stat_aios under translated messages: test/aios_lang.sh"
run_suite aios-lang "$PG_DIO_ROOT/test/aios_lang.sh"

# --- make installcheck against a cluster with PostgreSQL's defaults ---------
# As a user runs it against their own server: initdb's defaults (no data
# checksums), PostgreSQL's settings, shared_preload_libraries = 'pg_dio',
# the account's locked-memory limit; the suites that need what such a server
# lacks say so and stop.  PG_DIO_INSTALLCHECK=0 skips it.
if [ "${PG_DIO_INSTALLCHECK:-1}" != 0 ]; then
	section "make installcheck against a cluster with PostgreSQL's defaults"
	"$PG_DIO_ROOT/test/cluster.sh" destroy plain >/dev/null 2>&1
	if plain_env=$(PG_DIO_CLUSTER_PLAIN=1 "$PG_DIO_ROOT/test/cluster.sh" start plain); then
		run_suite installcheck bash -c 'eval "$1"; shift; exec "$@"' _ "$plain_env" \
			make -C "$PG_DIO_ROOT" --no-print-directory installcheck PG_CONFIG="$PGC" \
			EXTRA_REGRESS_OPTS="--outputdir=$OUT/installcheck"
		if grep -E "terminated by signal|server process .* was terminated|PANIC" \
			"$WORK/.tmp/clusters/plain/server.log"; then
			echo "pg_dio: the plain cluster's server log shows a crash" >&2
			failed=$((failed + 1))
			failed_suites+=(installcheck-server-log)
		fi
	else
		failed=$((failed + 1))
		failed_suites+=(installcheck)
	fi
	"$PG_DIO_ROOT/test/cluster.sh" destroy plain >/dev/null 2>&1
fi

# --- PostgreSQL's own regression and isolation suites, forced on ------------
# (test/core_regress.sh) against PostgreSQL built from source with liburing
# (18.6, or $PG; test/scripts/build_pg.sh: about 4 minutes once, then cached),
# with io_method worker and io_uring.  PG_DIO_CORE_REGRESS=0 skips them.
if [ "${PG_DIO_CORE_REGRESS:-1}" != 0 ]; then
	section "PostgreSQL from source for its own suites (built once into the cache)"
	if SRC_PGC=$("$PG_DIO_ROOT/test/scripts/build_pg.sh" "${PG:-18}"); then
		for m in worker io_uring; do
			section "PostgreSQL's own suites, pg_dio forced on vs off, io_method=$m"
			PG_CONFIG=$SRC_PGC "$PG_DIO_ROOT/test/core_regress.sh" --io-method "$m" 2>&1 |
				tee "$OUT/core_regress_$m.log"
			p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$OUT/core_regress_$m.log" | tail -n 1)
			f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$OUT/core_regress_$m.log" | tail -n 1)
			passed=$((passed + ${p:-0}))
			if [ -z "$p" ] || [ "${f:-1}" != 0 ]; then
				failed=$((failed + ${f:-1}))
				failed_suites+=("core-regress-$m")
			fi
		done
		# pg_stat_aios under a translated lc_messages, if the suites' own
		# PostgreSQL could not show it: this build has NLS, and pg_dio
		# (installed here by test/core_regress.sh)
		if [[ " ${skipped_suites[*]} " == *" aios-lang "* ]]; then
			section "pg_stat_aios under translated messages, PostgreSQL from source: test/aios_lang.sh"
			run_suite aios-lang-src env PG_CONFIG="$SRC_PGC" "$PG_DIO_ROOT/test/aios_lang.sh"
		fi
	else
		echo "pg_dio: PostgreSQL's own suites need PostgreSQL built from source (see above); counted as failed" >&2
		failed=$((failed + 1))
		failed_suites+=(core-regress)
	fi
fi

section ""

# --- the server must have survived everything ------------------------------
if grep -E "terminated by signal|server process .* was terminated|PANIC" \
	"$WORK/.tmp/clusters/$CLUSTER/server.log"; then
	echo "pg_dio: the server log shows a crash" >&2
	failed=$((failed + 1))
	failed_suites+=(server-log)
fi

echo
echo "test output: $OUT ($(( $(date +%s) - started )) s)"
[ ${#failed_suites[@]} -gt 0 ] && echo "failed suites: ${failed_suites[*]}"
[ ${#skipped_suites[@]} -gt 0 ] && echo "skipped suites (their output says why): ${skipped_suites[*]}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ ${#failed_suites[@]} = 0 ]
