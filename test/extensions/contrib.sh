#!/usr/bin/env bash
# Two of PostgreSQL's contrib modules that hook the executor, beside pg_dio's
# scans, against PostgreSQL built from source (test/scripts/build_pg.sh):
#   - pg_stat_statements: its regression suite (REGRESS of its Makefile in the
#     build tree, the settings of its --temp-config file, the library
#     preloaded) with pg_dio's scans off, then forced on; results must match;
#   - auto_explain, which has no pg_regress suite: test/extensions/
#     auto_explain.py runs a few queries with auto_explain loaded
#     (log_min_duration 0, log_analyze) off and forced on, and reads the
#     plans back from the server log.
#
#   test/extensions/contrib.sh         (ends with "N passed, M failed")
set -uo pipefail
. "$(dirname "$0")/lib.sh"

ext_init
TREE=$(cd "$(dirname "$PGC")/../.." && pwd)/src
PSS=$TREE/contrib/pg_stat_statements
[ -f "$PSS/Makefile" ] || die "$PGC is not a build from source (no $PSS); use test/scripts/build_pg.sh"

echo "== pg_stat_statements: pg_dio's scans off, then forced on"
read -ra opts <<<"$(ext_make_var "$PSS" REGRESS_OPTS USE_PGXS=)"
read -ra tests <<<"$(ext_make_var "$PSS" REGRESS USE_PGXS=)"
mapfile -t conf < <(ext_temp_config "$PSS" "${opts[@]}")
grep -q pg_stat_statements <<<"${conf[*]}" || conf+=("shared_preload_libraries = 'pg_dio,pg_stat_statements'")
echo "pg_stat_statements ($("$PGC" --version)): ${#tests[@]} tests, settings: ${conf[*]}"
ext_cluster_start ext-contrib "${conf[@]}"
ext_regress_off_on pg_stat_statements "$PSS" "${opts[@]}" "${tests[@]}"

echo "== auto_explain: plans logged with pg_dio's scans off, then forced on"
out=$(ext_outdir auto_explain)
if python3 "$EXT_DIR/auto_explain.py" --log "$(ext_cluster_log ext-contrib)" --out "$out" \
	--off "$EXT_OFF" --on "$EXT_ON"; then
	ext_pass "auto_explain: forced on logs the plans of forced off with pg_dio's nodes, the same rows, no ERROR"
else
	ext_fail "auto_explain: see above"
fi
ext_check_crash ext-contrib
ext_summary
