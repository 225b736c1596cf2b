#!/usr/bin/env bash
# The differential stress run with its readers on a hot standby
# (test/stress/differential.py --standby-host/--standby-port): a primary
# (cluster stress-p) that the writers and the maintenance session change, and
# its streaming standby (stress-s) where pg_dio's scans are compared; both
# made afresh and always stopped again.
#
#   PG_DIO_STRESS_SECONDS   how long the readers compare (default 20)
#   PG_DIO_STANDBY_MIN_COMPARISONS   read on until that many comparisons
#                           (default: 5000 for runs of 300 s or more, else none)
# Further arguments go to differential.py (e.g. --seed N).
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

CLUSTER_SH=$PG_DIO_ROOT/test/cluster.sh
WORK=$(pg_dio_workdir)
STRESS_SECONDS=${PG_DIO_STRESS_SECONDS:-20}
if [ "$STRESS_SECONDS" -ge 300 ]; then
	MIN_COMPARISONS=${PG_DIO_STANDBY_MIN_COMPARISONS:-5000}
else
	MIN_COMPARISONS=${PG_DIO_STANDBY_MIN_COMPARISONS:-0}
fi

driver=
cleanup() {
	[ -n "$driver" ] && kill "$driver" 2>/dev/null
	"$CLUSTER_SH" stop stress-s >/dev/null 2>&1
	"$CLUSTER_SH" stop stress-p >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$CLUSTER_SH" destroy stress-s >/dev/null 2>&1
"$CLUSTER_SH" destroy stress-p >/dev/null 2>&1
primary_env=$("$CLUSTER_SH" start stress-p "max_parallel_workers_per_gather = 2") ||
	die "could not start the primary stress-p"
standby_env=$("$CLUSTER_SH" standby stress-s stress-p) || die "could not start the standby stress-s"
standby_host=$(eval "$standby_env"; echo "$PGHOST")
standby_port=$(eval "$standby_env"; echo "$PGPORT")
eval "$primary_env"

# in the background, so that a signal stops it and the clusters at once
# (bash runs a trap only once the foreground command has ended)
rc=0
python3 "$PG_DIO_ROOT/test/stress/differential.py" --seconds "$STRESS_SECONDS" \
	--standby-host "$standby_host" --standby-port "$standby_port" \
	--min-comparisons "$MIN_COMPARISONS" --max-seconds $((STRESS_SECONDS * 3)) "$@" &
driver=$!
wait "$driver" || rc=1
driver=

# neither server may have crashed
for c in stress-p stress-s; do
	if grep -E "terminated by signal|server process .* was terminated|PANIC" \
		"$WORK/.tmp/clusters/$c/server.log"; then
		echo "FAIL: the server log of $c shows a crash" >&2
		rc=1
	fi
done
exit "$rc"
