#!/usr/bin/env bash
# pgvector's regression suite (its Makefile's REGRESS, test/sql) with pg_dio's
# scans off, then forced on, against a throwaway cluster; the two runs'
# results must match (lib.sh's ext_regress_off_on).  Debian's pgvector source
# package, built with PGXS into the cache (lib.sh).
#
#   test/extensions/pgvector.sh        (ends with "N passed, M failed")
set -uo pipefail
. "$(dirname "$0")/lib.sh"

ext_init
echo "== pgvector: pg_dio's scans off, then forced on"
if ! dsc=$(ext_debian_source pgvector); then
	ext_fail "pgvector: Debian's source package pgvector could not be fetched"
	ext_summary
	exit
fi
src=$(ext_build pgvector "$dsc") || { ext_fail "pgvector: did not build"; ext_summary; exit; }
read -ra opts <<<"$(ext_make_var "$src" REGRESS_OPTS)"
read -ra tests <<<"$(ext_make_var "$src" REGRESS)"
mapfile -t conf < <(ext_temp_config "$src" "${opts[@]}")
echo "pgvector $(basename "$dsc" .dsc | cut -d_ -f2): ${#tests[@]} tests"
ext_cluster_start ext-pgvector "${conf[@]}"
ext_regress_off_on pgvector "$src" "${opts[@]}" "${tests[@]}"
ext_check_crash ext-pgvector
ext_summary
