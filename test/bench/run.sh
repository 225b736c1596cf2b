#!/usr/bin/env bash
# pg_dio benchmark suite (make bench).  Brings up a throwaway cluster, builds
# the data set, runs the experiments side by side and writes a report.
#   PG_DIO_BENCH_MODE=quick (default) | full
set -euo pipefail
. "$(dirname "$0")/../scripts/common.sh"

MODE=${PG_DIO_BENCH_MODE:-quick}
# one bench cluster per PostgreSQL major version (a data directory serves one)
PGC=$(find_pg_config) || die "PostgreSQL not found: run test/setup.sh first"
MAJOR=$(pg_major "$PGC")
CLUSTER=bench
[ "$MAJOR" = 18 ] || CLUSTER=bench-pg$MAJOR
export PG_DIO_BENCH_CLUSTER=$CLUSTER
WORK=$(pg_dio_workdir)
OUT="$PG_DIO_ROOT/bench-results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"

# Huge pages, as a production server has them: PostgreSQL's shared memory
# (huge_pages = try takes them when they are reserved) and fio's buffers.  A
# read into 4 kB pages is a scatter list of one segment per page, and this
# virtio disk does 256kB x 32 O_DIRECT reads at about a quarter of the speed
# it does them into huge pages (the README's Performance section), so fio
# without them is not the device's limit.  Reserving them needs root; the
# reservation is given back at the end.
HUGE_OLD=
# a bench cluster left running would hold on to huge pages it took before
"$PG_DIO_ROOT/test/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1 || true
if is_root && [ -w /proc/sys/vm/nr_hugepages ]; then
	HUGE_OLD=$(cat /proc/sys/vm/nr_hugepages)
	# 256MB shared_buffers need ~142 pages of 2 MB, fio's buffers up to 16
	echo $((HUGE_OLD + 200)) > /proc/sys/vm/nr_hugepages || true
	if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -ge 190 ]; then
		export PG_DIO_FIO_MEM=shmhuge
	fi
fi

cleanup() {
	"$PG_DIO_ROOT/test/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1
	[ -z "$HUGE_OLD" ] || echo "$HUGE_OLD" > /proc/sys/vm/nr_hugepages || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v fio >/dev/null || die "fio is missing: run test/setup.sh (or apt-get install fio)"
eval "$("$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER" "shared_buffers = '256MB'")"
export PG_DIO_DATA="$WORK/.tmp/clusters/$CLUSTER/data"
# every experiment needs the extension (PG_DIO_BENCH_ONLY may skip the engine's)
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pg_dio"

# PG_DIO_BENCH_ONLY: a comma-separated subset of engine,seqscan,combine,indexscan
ONLY=",${PG_DIO_BENCH_ONLY:-engine,seqscan,combine,indexscan},"
# (if-blocks, not "&&" lists: under set -e a failing experiment must stop the run)
if [[ $ONLY == *,engine,* ]]; then
	python3 "$PG_DIO_ROOT/test/bench/engine_vs_fio.py" --mode "$MODE" --out "$OUT"
fi
if [[ $ONLY == *,seqscan,* ]]; then
	PG_DIO_BENCH_MODE=$MODE python3 "$PG_DIO_ROOT/test/bench/seqscan.py" "$OUT"
fi
if [[ $ONLY == *,combine,* ]]; then
	PG_DIO_BENCH_MODE=$MODE python3 "$PG_DIO_ROOT/test/bench/combine.py" "$OUT"
fi
if [[ $ONLY == *,indexscan,* ]]; then
	PG_DIO_BENCH_MODE=$MODE python3 "$PG_DIO_ROOT/test/bench/indexscan.py" "$OUT"
fi
cat "$OUT"/report.md "$OUT"/seqscan.md "$OUT"/combine.md "$OUT"/indexscan.md \
	> "$OUT/README.md" 2>/dev/null || true

# plots: matplotlib from PyPI in the project venv
VENV="$WORK/.venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import matplotlib' 2>/dev/null ||
	"$VENV/bin/pip" install -q --disable-pip-version-check matplotlib
"$VENV/bin/python" "$PG_DIO_ROOT/test/bench/plot.py" "$OUT"
echo "bench results: $OUT"
