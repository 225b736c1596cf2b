#!/usr/bin/env bash
# pg_hint_plan's regression suite (its Makefile's REGRESS and REGRESS_OPTS,
# the settings of its --temp-config file) with pg_dio's scans off, then
# forced on, against a throwaway cluster that preloads pg_dio and
# pg_hint_plan; the two runs' results must match.  Its expected files hold
# plans, so the match with them is printed for information only.  Debian's
# source package pg-hint-plan-NN (NN: the server's major version), built with
# PGXS into the cache (lib.sh).
#
#   test/extensions/pg_hint_plan.sh    (ends with "N passed, M failed")
set -uo pipefail
. "$(dirname "$0")/lib.sh"

ext_init
pkg=pg-hint-plan-$(pg_major "$PGC")
echo "== pg_hint_plan: pg_dio's scans off, then forced on"
if ! dsc=$(ext_debian_source "$pkg"); then
	ext_skip "pg_hint_plan: Debian's source package $pkg could not be fetched (above)"
	ext_summary
	exit
fi
# the suite needs the library preloaded (a temp config that preloads it
# already says so, after this)
ext_pgxs_suite pg_hint_plan "$dsc" "shared_preload_libraries = 'pg_dio,pg_hint_plan'"
ext_summary
