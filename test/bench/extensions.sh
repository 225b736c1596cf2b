#!/usr/bin/env bash
# make bench's TimescaleDB and Citus experiments (PG_DIO_BENCH_ONLY=timescaledb
# or citus): PostgreSQL 18.6 built from source, pg_dio and the extension
# built and installed through test/extensions/ (all cached), the experiment's
# own throwaway clusters with the extension first in shared_preload_libraries
# and pg_dio after it, then test/bench/extensions.py measures.  The clusters
# are destroyed at the end.
#
#   test/bench/extensions.sh timescaledb|citus OUT_DIR
set -uo pipefail
. "$(dirname "$0")/../extensions/lib.sh"

exp=${1:-}
out=${2:-}
[ -n "$out" ] && [ -d "$out" ] || die "usage: $0 timescaledb|citus OUT_DIR"
# TimescaleDB 2.29.2 and Citus 14.0.1 are built against 18, whatever PG says
PG_CONFIG=$("$PG_DIO_ROOT/test/scripts/build_pg.sh" 18) || die "PostgreSQL 18 did not build"
ext_init
export PATH="$BINDIR:$PATH"

# what both experiments' clusters have beside the preloads
SETTINGS=("shared_buffers = '256MB'" "max_connections = 100")
case "$exp" in
timescaledb)
	"$EXT_DIR/timescaledb.sh" build >/dev/null || die "TimescaleDB did not build"
	NODES=(bench-tsdb)
	PRELOAD="shared_preload_libraries = 'timescaledb,pg_dio'"
	SETTINGS+=("timescaledb.telemetry_level = off")
	;;
citus)
	"$EXT_DIR/citus.sh" --build-only >/dev/null || die "Citus did not build"
	# the coordinator first: the queries go to it
	NODES=(bench-citus-c bench-citus-w1 bench-citus-w2)
	PRELOAD="shared_preload_libraries = 'citus,pg_dio'"
	;;
*) die "usage: $0 timescaledb|citus OUT_DIR" ;;
esac
destroy_nodes() {
	local n
	for n in "${NODES[@]}"; do "$PG_DIO_ROOT/test/cluster.sh" destroy "$n" >/dev/null 2>&1; done
}
trap destroy_nodes EXIT
for n in "${NODES[@]}"; do
	ext_cluster_start "$n" "$PRELOAD" "${SETTINGS[@]}"
done
unset PGHOST PGPORT
python3 "$PG_DIO_ROOT/test/bench/extensions.py" "$exp" "$out" "${NODES[@]}"
