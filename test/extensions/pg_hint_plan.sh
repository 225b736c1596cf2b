#!/usr/bin/env bash
# pg_hint_plan beside pg_dio, against a throwaway cluster that preloads both.
#
# - pg_hint_plan's regression suite (its Makefile's REGRESS and REGRESS_OPTS,
#   the settings of its --temp-config file) with pg_dio's scans off, then
#   forced on; the two runs' results must match.  Its expected files hold
#   plans, so the match with them is printed for information only.  It needs
#   Debian's source package pg-hint-plan-NN (NN: the server's major
#   version), built with PGXS into the cache (lib.sh).  Where the archive
#   lists it but does not serve its files, pg_hint_plan comes from Debian's
#   binary package postgresql-NN-pg-hint-plan (unstable, else experimental)
#   instead, and its suite is reported as skipped.
# - Our own files (test/extensions/pg_hint_plan/): hints.sql, hinted plans of
#   every kind, off and forced on, must give the same plans (pg_dio's nodes
#   named as core's) and rows, match the expected output off, and show
#   pg_dio's nodes on; set_hints.sql, pg_hint_plan's Set hints on pg_dio's
#   settings, must match its expected output off and on, with pg_hint_plan
#   preloaded after pg_dio and, on a second cluster, before it.
#
#   test/extensions/pg_hint_plan.sh    (ends with "N passed, M failed")
set -uo pipefail
. "$(dirname "$0")/lib.sh"

OWN=$EXT_DIR/pg_hint_plan

# hp_matches NAME TEST...: every TEST of both of NAME's runs matched its expected output
hp_matches() {
	local name=$1 mode t out
	shift
	out=$WORK/.tmp/ext-regress/$name
	for mode in off on; do
		for t in "$@"; do
			grep -qE "^ok [0-9]+ +- +$t " "$out/$mode/log" ||
				{ ext_fail "$name $mode: $t differs from its expected output ($out/$mode/regression.diffs)"; return; }
		done
	done
	ext_pass "$name: $* match their expected output, pg_dio's scans off and forced on"
}

ext_init
major=$(pg_major "$PGC")
echo "== pg_hint_plan: pg_dio's scans off, then forced on"
if dsc=$(ext_debian_source "pg-hint-plan-$major"); then
	ext_pgxs_suite pg_hint_plan "$dsc" "shared_preload_libraries = 'pg_dio,pg_hint_plan'"
elif tree=$(ext_debian_binary "postgresql-$major-pg-hint-plan") && ext_install_binary "$tree"; then
	ext_skip "pg_hint_plan's own suite: Debian's source package pg-hint-plan-$major could not be fetched (above); pg_hint_plan from $(basename "${tree%.d}")"
	ext_cluster_start ext-pg_hint_plan "shared_preload_libraries = 'pg_dio,pg_hint_plan'"
else
	ext_skip "pg_hint_plan: neither Debian's source package pg-hint-plan-$major nor its binary package could be fetched (above)"
	ext_summary
	exit
fi

echo "-- our hinted queries, pg_hint_plan preloaded after pg_dio"
ext_regress_off_on pg_hint_plan-dio "$OWN" hints set_hints
hp_matches pg_hint_plan-dio set_hints
# off, the hinted plans are core's (the expected output); on, pg_dio's nodes
# stand in them
on=$WORK/.tmp/ext-regress/pg_hint_plan-dio/on/results/hints.out
if grep -qE '^ok [0-9]+ +- +hints ' "$WORK/.tmp/ext-regress/pg_hint_plan-dio/off/log"; then
	ext_pass "pg_hint_plan-dio off: hints matches its expected output"
else
	ext_fail "pg_hint_plan-dio off: hints differs from its expected output"
fi
missing=
for n in DirectSeqScan PrefetchIndexScan PrefetchIndexOnlyScan ProbePrefetch; do
	grep -q "Custom Scan ($n)" "$on" 2>/dev/null || missing+=" $n"
done
if [ -z "$missing" ]; then
	ext_pass "pg_hint_plan-dio on: the hinted plans hold pg_dio's four nodes"
else
	ext_fail "pg_hint_plan-dio on: no$missing in the hinted plans ($on)"
fi
ext_check_crash ext-pg_hint_plan

echo "-- pg_hint_plan preloaded before pg_dio"
ext_cluster_start ext-pg_hint_plan-first "shared_preload_libraries = 'pg_hint_plan,pg_dio'"
ext_regress_off_on pg_hint_plan-first "$OWN" set_hints
hp_matches pg_hint_plan-first set_hints
ext_check_crash ext-pg_hint_plan-first
ext_summary
