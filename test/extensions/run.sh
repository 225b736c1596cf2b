#!/usr/bin/env bash
# The regression suites of extensions users run beside pg_dio, each with
# pg_dio's scans off and then forced on against a throwaway cluster of its
# own; every pair of runs must give the same results (after
# test/core_regress/normalize.py; only test/extensions/allowed.txt may
# differ, each entry with its reason).  Against PostgreSQL built from source
# (test/scripts/build_pg.sh 18, or PG_CONFIG / PG=).
#
#   test/extensions/run.sh [SUITE ...]
#
# SUITE names a script test/extensions/SUITE.sh (pgvector, pg_hint_plan,
# contrib, ...); all of them by default.  Each prints its lines and its own
# "N passed, M failed" (one test per suite and comparison); this prints the
# totals last and exits 0 only when everything passed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

DIR=$PG_DIO_ROOT/test/extensions
if [ $# -eq 0 ]; then
	set --
	for f in "$DIR"/*.sh; do
		s=$(basename "$f" .sh)
		case "$s" in lib | run) ;; *) set -- "$@" "$s" ;; esac
	done
fi
for s in "$@"; do
	case "$s" in lib | run) die "no suite $s" ;; esac
	[ -f "$DIR/$s.sh" ] || die "no suite $s (no $DIR/$s.sh); usage: $0 [SUITE ...]"
done

if [ -z "${PG_CONFIG:-}" ]; then
	# once here rather than in each suite
	PG_CONFIG=$("$PG_DIO_ROOT/test/scripts/build_pg.sh" "${PG:-18}") || exit 1
fi
export PG_CONFIG

ext_server_account
LOGS=$(pg_dio_workdir)/.tmp/ext-regress
mkdir -p "$LOGS"
passed=0
failed=0
for s in "$@"; do
	start=$SECONDS
	bash "$DIR/$s.sh" 2>&1 | tee "$LOGS/$s.log"
	last=$(tail -n 1 "$LOGS/$s.log")
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		echo "not ok: $s: ended without its totals"
		failed=$((failed + 1))
	fi
	echo "-- $s: $((SECONDS - start)) s"
done
for s in "$@"; do grep -h '^skipped: ' "$LOGS/$s.log"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
