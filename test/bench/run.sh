#!/usr/bin/env bash
# pg_dio benchmark suite (make bench).  Brings up a throwaway cluster, builds
# the data set, runs the experiments side by side and writes a report.
#   PG_DIO_BENCH_MODE=quick (default) | full
#   PG_DIO_BENCH_STANDBY=1: the seqscan and indexscan experiments (cold) run
#     on a hot standby of the bench cluster, made for the run and destroyed
#   PG_DIO_BENCH_ONLY: a comma-separated subset of engine,seqscan,combine,
#     indexscan, probe, trailing (the default: all six) and, only when named, tpch
#     (TPC-H, test/bench/tpch.py, PG_DIO_BENCH_TPCH_* settings), timescaledb
#     and citus (test/bench/extensions.sh: PostgreSQL 18.6 from source and
#     clusters of their own, PG_DIO_BENCH_EXT_* settings)
set -euo pipefail
. "$(dirname "$0")/../scripts/common.sh"

MODE=${PG_DIO_BENCH_MODE:-quick}
# one bench cluster per PostgreSQL major version (a data directory serves one)
PGC=$(find_pg_config) || die "PostgreSQL not found: run test/setup.sh first"
MAJOR=$(pg_major "$PGC")
CLUSTER=bench
[ "$MAJOR" = 18 ] || CLUSTER=bench-pg$MAJOR
export PG_DIO_BENCH_CLUSTER=$CLUSTER
# standby mode: the tables are built on the bench cluster (the primary), then
# every experiment runs on a streaming hot standby of it (bench-standby,
# bench-pg19-standby); the primary stays running and idle
STANDBY=
[ "${PG_DIO_BENCH_STANDBY:-0}" = 1 ] && STANDBY=$CLUSTER-standby
WORK=$(pg_dio_workdir)
# PG_DIO_BENCH_ONLY: a comma-separated subset of engine,seqscan,combine,indexscan,probe,trailing,tpch,timescaledb,citus
ONLY=",${PG_DIO_BENCH_ONLY:-engine,seqscan,combine,indexscan,probe,trailing},"
# the bench cluster serves every experiment but timescaledb and citus
BENCH_CLUSTER=0
for e in engine seqscan combine indexscan probe trailing tpch; do
	[[ $ONLY != *,$e,* ]] || BENCH_CLUSTER=1
done
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
[ -z "$STANDBY" ] || "$PG_DIO_ROOT/test/cluster.sh" destroy "$STANDBY" >/dev/null 2>&1 || true
if is_root && [ -w /proc/sys/vm/nr_hugepages ]; then
	HUGE_OLD=$(cat /proc/sys/vm/nr_hugepages)
	# 256MB shared_buffers need ~142 pages of 2 MB, fio's buffers up to 16;
	# the TPC-H experiment's 512MB ~272, the Citus experiment's three
	# nodes' 256MB (and 100 connections) ~450
	HUGE_ADD=200
	[[ $ONLY != *,tpch,* ]] || HUGE_ADD=350
	[[ $ONLY != *,citus,* ]] || HUGE_ADD=520
	echo $((HUGE_OLD + HUGE_ADD)) > /proc/sys/vm/nr_hugepages || true
	if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -ge 190 ]; then
		export PG_DIO_FIO_MEM=shmhuge
	fi
fi

cleanup() {
	[ -z "$STANDBY" ] || "$PG_DIO_ROOT/test/cluster.sh" destroy "$STANDBY" >/dev/null 2>&1
	"$PG_DIO_ROOT/test/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1
	[ -z "$HUGE_OLD" ] || echo "$HUGE_OLD" > /proc/sys/vm/nr_hugepages || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v fio >/dev/null || die "fio is missing: run test/setup.sh (or apt-get install fio)"
# (a standby's primary leaves the huge pages to the standby, which is
# measured, and runs no autovacuum, which would write WAL for it to replay)
if [ "$BENCH_CLUSTER" = 1 ] || [ -n "$STANDBY" ]; then
	eval "$(PG_DIO_SERVER_OPTIONS=${STANDBY:+"-c huge_pages=off -c autovacuum=off"} \
		"$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER" "shared_buffers = '256MB'")"
	export PG_DIO_DATA="$WORK/.tmp/clusters/$CLUSTER/data"
	# every experiment needs the extension (PG_DIO_BENCH_ONLY may skip the engine's)
	psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pg_dio"
fi

# the project venv: the PyPI packages of the experiments and the plots
VENV="$WORK/.venv"
# venv_need REQUIREMENT...: install those (name or name==version) the venv lacks
venv_need() {
	[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
	local missing=() r
	for r in "$@"; do
		"$VENV/bin/python" -c 'import importlib.metadata as m, sys
name, _, ver = sys.argv[1].partition("==")
have = m.version(name)
sys.exit(1 if ver and have != ver else 0)' "$r" 2>/dev/null || missing+=("$r")
	done
	[ ${#missing[@]} -eq 0 ] ||
		"$VENV/bin/pip" install -q --disable-pip-version-check "${missing[@]}"
}
if [ -n "$STANDBY" ]; then
	# on the standby: the seqscan and indexscan experiments (cold; the
	# engine's and combine's are not made for a standby)
	[[ $ONLY != *,engine,* && $ONLY != *,combine,* && $ONLY != *,tpch,* &&
		$ONLY != *,trailing,* && $ONLY != *,timescaledb,* && $ONLY != *,citus,* ]] ||
		note "standby mode: the engine, combine, trailing, tpch, timescaledb and citus experiments do not run"
	for e in engine combine trailing tpch timescaledb citus; do ONLY=${ONLY//,$e,/,}; done
	exps=()
	[[ $ONLY != *,seqscan,* ]] || exps+=(seqscan)
	[[ $ONLY != *,indexscan,* ]] || exps+=(indexscan)
	[ ${#exps[@]} -gt 0 ] || die "standby mode runs seqscan and indexscan: PG_DIO_BENCH_ONLY=$PG_DIO_BENCH_ONLY has neither"
	# the tables, on the primary (which cannot write afterwards: it must stay idle)
	PG_DIO_BENCH_MODE=$MODE python3 "$PG_DIO_ROOT/test/bench/prepare.py" "${exps[@]}"
	P_HOST=$PGHOST P_PORT=$PGPORT
	eval "$("$PG_DIO_ROOT/test/cluster.sh" standby "$STANDBY" "$CLUSTER")"
	export PG_DIO_DATA="$WORK/.tmp/clusters/$STANDBY/data"
	export PG_DIO_BENCH_CLUSTER=$STANDBY PG_DIO_BENCH_PRIMARY=$CLUSTER
	# caught up: replayed all the primary has written
	target=$(psql -X -At -h "$P_HOST" -p "$P_PORT" -c "SELECT pg_current_wal_lsn()")
	for _ in $(seq 600); do
		[ "$(psql -X -At -c "SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= '$target'")" = t ] && break
		sleep 0.1
	done
	[ "$(psql -X -At -c "SELECT pg_last_wal_replay_lsn() >= '$target'")" = t ] ||
		die "standby $STANDBY did not catch up with $CLUSTER (at $target)"
	echo "hot standby $STANDBY of $CLUSTER (caught up at $target)"
fi
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
if [[ $ONLY == *,probe,* ]]; then
	PG_DIO_BENCH_MODE=$MODE python3 "$PG_DIO_ROOT/test/bench/probe.py" "$OUT"
fi
if [[ $ONLY == *,trailing,* ]]; then
	PG_DIO_BENCH_MODE=$MODE python3 "$PG_DIO_ROOT/test/bench/trailing.py" "$OUT"
fi
if [[ $ONLY == *,tpch,* ]]; then
	# TPC-H's data and queries from DuckDB and its tpch extension, both from
	# PyPI (the extension loaded from the package's files, never downloaded)
	venv_need duckdb==1.5.5 duckdb-extension-tpch==1.5.5
	PG_DIO_BENCH_TPCH_CACHE=${PG_DIO_BENCH_TPCH_CACHE:-$WORK/.tmp/tpch} \
		"$VENV/bin/python" "$PG_DIO_ROOT/test/bench/tpch.py" "$OUT"
fi
for e in timescaledb citus; do
	if [[ $ONLY == *,$e,* ]]; then
		"$PG_DIO_ROOT/test/bench/extensions.sh" "$e" "$OUT"
	fi
done
cat "$OUT"/report.md "$OUT"/seqscan.md "$OUT"/combine.md "$OUT"/indexscan.md "$OUT"/probe.md "$OUT"/trailing.md \
	"$OUT"/seqscan-standby.md "$OUT"/indexscan-standby.md "$OUT"/tpch-*.md \
	"$OUT"/timescaledb-*.md "$OUT"/citus-*.md > "$OUT/README.md" 2>/dev/null || true

# plots: matplotlib from PyPI in the project venv
venv_need matplotlib
"$VENV/bin/python" "$PG_DIO_ROOT/test/bench/plot.py" "$OUT"
echo "bench results: $OUT"
