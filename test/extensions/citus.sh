#!/usr/bin/env bash
# pg_dio on every node of a Citus cluster (Citus 14.0.1 built from
# ../shared/ext-src/, against PostgreSQL 18 built from source).
#
#   test/extensions/citus.sh [--no-regress] [--build-only]
#
# 1. A coordinator and two workers (test/cluster.sh citus-c, citus-w1,
#    citus-w2; shared_preload_libraries = 'citus,pg_dio'), stopped at exit.
# 2. Distributed tables (hash-distributed, co-located, and a reference table)
#    and a set of queries through the coordinator, run with pg_dio's scans
#    off and forced on on all three nodes (ALTER SYSTEM + pg_reload_conf():
#    the workers' shard queries run in Citus' own connections); the results
#    must be identical.
# 3. EXPLAIN ANALYZE through the coordinator (citus.explain_all_tasks) shows
#    the workers' tasks with pg_dio's scans under Citus' own nodes, and
#    core's scans with pg_dio's off.
# 4. Citus' own regression tests (test/extensions/citus/schedule, a prefix of
#    Citus' multi_schedule), started by Citus' pg_regress_multi.pl with
#    pg_dio preloaded after citus on every node, once with pg_dio's scans off
#    and once forced on; the result files are compared with
#    test/core_regress/normalize.py (test/extensions/citus/allowed.txt).
#
# Citus is built once into the cache of build_pg.sh (/var/cache/pg_dio as
# root, else ~/.cache/pg_dio), keyed by the PostgreSQL build and the
# tarball's sha256.  Ends with "N passed, M failed".
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

REGRESS=1
BUILD_ONLY=0
while [ $# -gt 0 ]; do
	case "$1" in
	--no-regress) REGRESS=0; shift ;;
	--build-only) BUILD_ONLY=1; shift ;;
	*) die "usage: $0 [--no-regress] [--build-only]" ;;
	esac
done

HERE=$PG_DIO_ROOT/test/extensions/citus
CITUS_TARBALL=${PG_DIO_CITUS_TARBALL:-$(cd "$PG_DIO_ROOT/.." && pwd)/shared/ext-src/citus-14.0.1.tar.gz}
NORMALIZE=$PG_DIO_ROOT/test/core_regress/normalize.py
ALLOWED=$HERE/allowed.txt
OFF_SET="pg_dio.enable_direct_scan=off pg_dio.enable_index_prefetch=off"
ON_SET="pg_dio.enable_direct_scan=on pg_dio.direct_scan_threshold=0 pg_dio.enable_index_prefetch=on"
NODES=(citus-c citus-w1 citus-w2)
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "not ok: $*"; }

if [ -z "${PG_CONFIG:-}" ]; then
	PG_CONFIG=$("$PG_DIO_ROOT/test/scripts/build_pg.sh" "${PG:-18}") || die "PostgreSQL did not build"
fi
export PG_CONFIG
PGC=$PG_CONFIG
BINDIR=$("$PGC" --bindir)
if is_root; then CACHE=${PG_DIO_PG_CACHE:-/var/cache/pg_dio}; else CACHE=${PG_DIO_PG_CACHE:-$HOME/.cache/pg_dio}; fi
[ -f "$CITUS_TARBALL" ] || die "no Citus source: $CITUS_TARBALL"

# build_citus: Citus built once per PostgreSQL build and tarball into
# $CITUS_DIR (src/ kept: its regression tests run from there), installed
# into PostgreSQL each time (a no-op when it is)
build_citus() {
	local key need=() p log
	key=$({ echo "$PGC"; "$PGC" --version; "$PGC" --configure; sha256sum "$CITUS_TARBALL" | cut -c1-64; } |
		sha256sum | cut -c1-16)
	CITUS_DIR="$CACHE/citus-$key"
	log="$CITUS_DIR/build.log"
	mkdir -p "$CACHE"
	exec 8>"$CACHE/.citus-$key.lock"
	flock 8
	if [ ! -f "$CITUS_DIR/.complete" ]; then
		for p in libcurl4-openssl-dev liblz4-dev libzstd-dev build-essential; do
			dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
		done
		if [ ${#need[@]} -gt 0 ]; then
			is_root || die "missing Debian packages; run: sudo apt-get install -y ${need[*]}"
			note "installing Debian packages: ${need[*]}"
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
				{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } ||
				die "could not install ${need[*]}"
		fi
		note "building Citus from $(basename "$CITUS_TARBALL") into $CITUS_DIR (about 3 minutes on 2 cores)"
		rm -rf "$CITUS_DIR"
		mkdir -p "$CITUS_DIR/src"
		tar -C "$CITUS_DIR/src" --strip-components=1 -xzf "$CITUS_TARBALL" || die "could not unpack $CITUS_TARBALL"
		(
			unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
			cd "$CITUS_DIR/src" &&
				./configure PG_CONFIG="$PGC" &&
				make -j2
		) >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "Citus did not build (log: $log)"; }
		# the server account reads the regression tests from here
		chmod -R a+rX "$CITUS_DIR"
		touch "$CITUS_DIR/.complete"
	fi
	(
		unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
		make -C "$CITUS_DIR/src" install
	) >"$CITUS_DIR/install.log" 2>&1 || { tail -n 30 "$CITUS_DIR/install.log" >&2; die "Citus did not install (log: $CITUS_DIR/install.log)"; }
	exec 8>&-
}

build_citus
make -s -C "$PG_DIO_ROOT" PG_CONFIG="$PGC" install >/dev/null || die "pg_dio did not build against $PGC"
if [ "$BUILD_ONLY" = 1 ]; then
	echo "Citus: $CITUS_DIR"
	exit 0
fi

WORK=$(pg_dio_workdir)
OUT="$WORK/.tmp/citus"
rm -rf "$OUT"
mkdir -p "$OUT"
is_root && chown "$PG_DIO_OS_USER" "$OUT"

STARTED=()
cleanup() {
	local n
	for n in "${STARTED[@]}"; do "$PG_DIO_ROOT/test/cluster.sh" stop "$n" >/dev/null 2>&1; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A SOCK PORT
# start_node NAME: a new cluster with Citus preloaded before pg_dio
start_node() {
	local n=$1 env
	"$PG_DIO_ROOT/test/cluster.sh" destroy "$n" >/dev/null 2>&1
	STARTED+=("$n")
	env=$("$PG_DIO_ROOT/test/cluster.sh" start "$n" "shared_preload_libraries = 'citus,pg_dio'" \
		"max_connections = 100") ||
		die "could not start cluster $n"
	SOCK[$n]=$(sed -n 's/.* PGHOST=\([^ ]*\).*/\1/p' <<<"$env")
	PORT[$n]=$(sed -n 's/.* PGPORT=\([^ ]*\).*/\1/p' <<<"$env")
}

# on NODE PSQL_ARG...: psql on a node's postgres database
on() {
	local n=$1
	shift
	"$BINDIR/psql" -X -q -h "${SOCK[$n]}" -p "${PORT[$n]}" -U "$PG_DIO_DB_USER" -d postgres "$@"
}

# set_mode off|on: pg_dio's scans off, or forced on, on every node (the
# workers' shard queries run in Citus' connections, which read the
# configuration again before their next command)
set_mode() {
	local n kv sets=() want
	if [ "$1" = on ]; then sets=($ON_SET); want=on; else sets=($OFF_SET); want=off; fi
	for n in "${NODES[@]}"; do
		{
			echo "ALTER SYSTEM RESET pg_dio.direct_scan_threshold;"
			for kv in "${sets[@]}"; do echo "ALTER SYSTEM SET ${kv%%=*} = '${kv#*=}';"; done
			echo "SELECT pg_reload_conf();"
		} | on "$n" -v ON_ERROR_STOP=1 >/dev/null || die "could not set pg_dio's scans $1 on $n"
	done
	sleep 1
	for n in "${NODES[@]}"; do
		[ "$(on "$n" -At -c 'SHOW pg_dio.enable_direct_scan')" = "$want" ] ||
			die "$n: pg_dio.enable_direct_scan is not $want after the reload"
	done
}

echo "== a Citus coordinator and two workers, pg_dio preloaded after citus on each"
for n in "${NODES[@]}"; do start_node "$n"; done
for n in "${NODES[@]}"; do
	on "$n" -v ON_ERROR_STOP=1 -c "CREATE EXTENSION citus" -c "CREATE EXTENSION pg_dio" >/dev/null ||
		die "CREATE EXTENSION citus, pg_dio failed on $n"
done
on citus-c -v ON_ERROR_STOP=1 -At \
	-c "SELECT citus_set_coordinator_host('127.0.0.1', ${PORT[citus-c]})" \
	-c "SELECT citus_add_node('127.0.0.1', ${PORT[citus-w1]})" \
	-c "SELECT citus_add_node('127.0.0.1', ${PORT[citus-w2]})" >/dev/null || die "could not add the workers"
echo "nodes: $(on citus-c -At -c "SELECT string_agg(nodename || ':' || nodeport || CASE WHEN groupid = 0 THEN ' (coordinator)' ELSE '' END, ', ' ORDER BY nodeid) FROM pg_dist_node")"
on citus-c -f "$HERE/setup.sql" >"$OUT/setup.out" 2>&1 || { cat "$OUT/setup.out"; die "setup.sql failed"; }
echo "shards: $(on citus-c -At -c "SELECT string_agg(n || ' ' || logicalrelid::text, ', ') FROM (SELECT logicalrelid, count(*) AS n FROM pg_dist_shard GROUP BY 1 ORDER BY 1) s"); $(on citus-c -At -c "SELECT pg_size_pretty(citus_total_relation_size('orders') + citus_total_relation_size('order_lines'))") in orders and order_lines"

# evict_workers: every shard and its indexes out of the workers' shared
# buffers and the OS page cache, so that the scans read them
evict_workers() {
	local n
	for n in citus-w1 citus-w2; do
		on "$n" -At -v ON_ERROR_STOP=1 -c "SET citus.show_shards_for_app_name_prefixes = '*'" \
			-c "SELECT count(pg_dio_evict(c.oid)) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
				WHERE s.nspname = 'public' AND c.relkind IN ('r', 'i')" >/dev/null || die "pg_dio_evict failed on $n"
	done
}
# direct_blocks: the blocks both workers have read with O_DIRECT so far
direct_blocks() {
	local n sum=0 b
	for n in citus-w1 citus-w2; do
		b=$(on "$n" -At -c "SELECT blocks_direct FROM pg_dio_cluster_stats()") || die "pg_dio_cluster_stats failed on $n"
		sum=$((sum + b))
	done
	echo "$sum"
}

echo "== the queries through the coordinator, pg_dio's scans off and forced on on every node"
for mode in off on; do
	set_mode "$mode"
	evict_workers
	before=$(direct_blocks)
	on citus-c -A -f "$HERE/queries.sql" >"$OUT/queries-$mode.out" 2>&1
	direct=$(($(direct_blocks) - before))
	echo "scans $mode: the workers read $direct blocks directly"
	if [ "$mode" = off ] && [ "$direct" != 0 ]; then
		fail "with pg_dio's scans off the workers read $direct blocks directly"
	elif [ "$mode" = on ] && [ "$direct" -le 0 ]; then
		fail "with pg_dio's scans forced on the workers read no block directly"
	fi
done
python3 - "$OUT/queries-off.out" "$OUT/queries-on.out" >"$OUT/queries.cmp" <<'PY'
import sys
def sections(path):
    out, name = {}, None
    for line in open(path):
        if line.startswith("== "):
            name = line[3:].strip()
            out[name] = []
        elif name:
            out[name].append(line)
    return out
off, on = sections(sys.argv[1]), sections(sys.argv[2])
bad = 0
for name in off:
    errs = [l for l in off[name] if "ERROR" in l]
    if errs:
        bad += 1
        print("%s: ERROR with the scans off: %s" % (name, errs[0].strip()))
    if off[name] != on.get(name):
        bad += 1
        print("%s: differs\n-- off:\n%s-- on:\n%s" % (name, "".join(off[name]), "".join(on.get(name, ["(missing)\n"]))))
print("%d queries compared, %d problems" % (len(off), bad))
sys.exit(1 if bad or len(off) != len(on) else 0)
PY
if [ $? = 0 ]; then
	pass "Citus queries: forced on matches off ($(tail -n 1 "$OUT/queries.cmp"))"
else
	cat "$OUT/queries.cmp"
	fail "Citus queries: forced on differs from off"
fi

# explain_check MODE NAME CORE_NODE DIO_NODE QUERY: EXPLAIN ANALYZE of QUERY
# through the coordinator with every task's plan shown: Citus' Adaptive
# executor at the top, above the tasks, and in each of them the scan of a
# shard as pg_dio's DIO_NODE (on) or core's CORE_NODE (off)
explain_check() {
	local mode=$1 name=$2 core=$3 dio=$4 q=$5 f tasks top first_task want other n_want n_other
	f="$OUT/explain-$name-$mode.out"
	on citus-c -At -c "SET citus.explain_all_tasks = on" \
		-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) $q" >"$f" 2>&1
	if [ "$mode" = on ]; then want="Custom Scan ($dio)"; other=$core; else want=$core; other="Custom Scan ($dio)"; fi
	tasks=$(sed -n 's/^ *Task Count: \([0-9]*\)$/\1/p' "$f")
	top=$(grep -n -m1 'Custom Scan (Citus Adaptive)' "$f" | cut -d: -f1)
	first_task=$(grep -n -m1 -- '->  Task$' "$f" | cut -d: -f1)
	# "->  Seq Scan on t", "->  Custom Scan (PrefetchIndexScan) using i on t"
	n_want=$(grep -F -- "->  $want " "$f" | grep -c ' on ')
	n_other=$(grep -F -- "$other " "$f" | grep -c ' on ')
	# the scans of every task are below the first task (pg_dio entered no Citus node)
	local before
	before=$(head -n "${first_task:-0}" "$f" | grep -cE 'Seq Scan|Index Scan|Index Only Scan|DirectSeqScan|Prefetch')
	if [ -n "$tasks" ] && [ "$tasks" -gt 0 ] && [ -n "$top" ] && [ -n "$first_task" ] && [ "$top" -lt "$first_task" ] &&
		[ "$n_want" = "$tasks" ] && [ "$n_other" = 0 ] && [ "$before" = 0 ]; then
		pass "EXPLAIN $name, scans $mode: Citus Adaptive on top, $tasks tasks each with $want"
	else
		cat "$f"
		fail "EXPLAIN $name, scans $mode: expected Citus Adaptive on top and $want in each of ${tasks:-?} tasks (found $n_want, $n_other of $other)"
	fi
}

echo "== EXPLAIN ANALYZE through the coordinator (citus.explain_all_tasks)"
for mode in on off; do
	set_mode "$mode"
	explain_check "$mode" count "Seq Scan" DirectSeqScan "SELECT count(*) FROM events"
	explain_check "$mode" index_range "Index Scan" PrefetchIndexScan \
		"SELECT id, amount FROM orders WHERE id BETWEEN 150000 AND 150040"
	explain_check "$mode" router "Index Scan" PrefetchIndexScan "SELECT * FROM order_lines WHERE order_id = 4242 ORDER BY line"
done
sed -n '1,14p' "$OUT/explain-count-on.out"
