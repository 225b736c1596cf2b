#!/usr/bin/env bash
# pg_dio on every node of a Citus cluster: Citus 14.0.1 (from
# ../shared/ext-src/, PG_DIO_CITUS_TARBALL) against PostgreSQL 18 built from
# source (test/scripts/build_pg.sh, or PG_CONFIG).
#
#   test/extensions/citus.sh [--no-regress] [--build-only]
#
# 1. A coordinator and two workers (test/cluster.sh citus-c, citus-w1,
#    citus-w2; shared_preload_libraries = 'citus,pg_dio'), stopped at exit.
# 2. Distributed tables (citus/setup.sql: hash-distributed and co-located,
#    and a reference table) and the queries of citus/queries.sql through the
#    coordinator, with pg_dio's scans off and then forced on on all three
#    nodes (ALTER SYSTEM + pg_reload_conf(): the workers' shard queries run
#    in Citus' own connections, not the client's), the workers' shards
#    evicted first; the outputs must be identical, and with the scans on the
#    workers must have read blocks directly.
# 3. EXPLAIN ANALYZE through the coordinator (citus.explain_all_tasks): Citus'
#    Adaptive executor on top, every task's scan pg_dio's with the scans on
#    and core's with them off.
# 4. Citus' own regression tests (the schedule of citus/schedule.conf),
#    started by Citus' pg_regress_multi.pl with pg_dio preloaded after citus
#    on every node (--server-option), once with pg_dio's scans off and once
#    forced on; the result files, after Citus' own normalize.sed, are
#    compared by test/core_regress/normalize.py (citus/allowed.txt).  A
#    timing-dependent test (citus/racy.txt) that differs is run again, off
#    and on, up to 3 times, and passes only if a rerun's outputs match.
#
# Citus is built once into the cache of build_pg.sh (ext/citus-KEY, keyed by
# the PostgreSQL build and the tarball's sha256).  Ends with
# "N passed, M failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

REGRESS=1
BUILD_ONLY=0
while [ $# -gt 0 ]; do
	case "$1" in
	--no-regress) REGRESS=0; shift ;;
	--build-only) BUILD_ONLY=1; shift ;;
	*) die "usage: $0 [--no-regress] [--build-only]" ;;
	esac
done

HERE=$EXT_DIR/citus
CITUS_TARBALL=${PG_DIO_CITUS_TARBALL:-$(cd "$PG_DIO_ROOT/.." && pwd)/shared/ext-src/citus-14.0.1.tar.gz}
[ -f "$CITUS_TARBALL" ] || die "no Citus source: $CITUS_TARBALL"
NODES=(citus-c citus-w1 citus-w2)

if [ "$BUILD_ONLY" = 1 ]; then ext_init build-only; else ext_init; fi

# build_citus: Citus built once per PostgreSQL build and tarball into
# $CITUS_DIR/src (kept: its regression tests run from a copy of it),
# installed into PostgreSQL each time (a no-op when it is)
build_citus() {
	local log
	CITUS_DIR=$(ext_cache_dir citus "$(sha256sum "$CITUS_TARBALL" | cut -c1-64)")
	log="$CITUS_DIR/build.log"
	mkdir -p "$(dirname "$CITUS_DIR")"
	# one build at a time; a second caller waits and then finds it
	exec 8>"$CITUS_DIR.lock"
	flock 8
	if [ ! -f "$CITUS_DIR/.complete" ]; then
		pg_dio_apt_install libcurl4-openssl-dev liblz4-dev libzstd-dev build-essential
		note "building Citus from $(basename "$CITUS_TARBALL") into $CITUS_DIR (about 3 minutes on 2 cores)"
		rm -rf "$CITUS_DIR"
		mkdir -p "$CITUS_DIR/src"
		tar -C "$CITUS_DIR/src" --strip-components=1 -xzf "$CITUS_TARBALL" || die "could not unpack $CITUS_TARBALL"
		(
			unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
			cd "$CITUS_DIR/src" && ./configure PG_CONFIG="$PGC" && make -j2
		) >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "Citus did not build (log: $log)"; }
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
if [ "$BUILD_ONLY" = 1 ]; then
	echo "Citus: $CITUS_DIR"
	exit 0
fi
OUT=$(ext_outdir citus)

declare -A SOCK PORT
# on NODE PSQL_ARG...: psql on a node's postgres database
on() {
	local n=$1
	shift
	"$BINDIR/psql" -X -q -h "${SOCK[$n]}" -p "${PORT[$n]}" -U "$PG_DIO_DB_USER" -d postgres "$@"
}

# set_mode off|on: pg_dio's scans off, or forced on, on every node (Citus'
# connections to the workers read the configuration again before their next
# command)
set_mode() {
	local n kv sets=() want
	if [ "$1" = on ]; then read -ra sets <<<"${EXT_ON//-c /}"; want=on; else read -ra sets <<<"${EXT_OFF//-c /}"; want=off; fi
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

# explain_check MODE NAME CORE_NODE DIO_NODE QUERY: EXPLAIN ANALYZE of QUERY
# through the coordinator with every task's plan shown: Citus' Adaptive
# executor on top, above the tasks, nothing of pg_dio's or core's scans
# above the first task, and in each task the scan of a shard as pg_dio's
# DIO_NODE (on) or core's CORE_NODE (off)
explain_check() {
	local mode=$1 name=$2 core=$3 dio=$4 q=$5 f tasks top first_task want other n_want n_other before
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
	before=$(head -n "${first_task:-0}" "$f" | grep -cE 'Seq Scan|Index Scan|Index Only Scan|DirectSeqScan|Prefetch')
	if [ -n "$tasks" ] && [ "$tasks" -gt 0 ] && [ -n "$top" ] && [ -n "$first_task" ] && [ "$top" -lt "$first_task" ] &&
		[ "$n_want" = "$tasks" ] && [ "$n_other" = 0 ] && [ "$before" = 0 ]; then
		ext_pass "EXPLAIN $name, scans $mode: Citus Adaptive on top, $tasks tasks each with $want"
	else
		cat "$f"
		ext_fail "EXPLAIN $name, scans $mode: expected Citus Adaptive on top and $want in each of ${tasks:-?} tasks (found $n_want, and $n_other of $other)"
	fi
}

echo "== a Citus coordinator and two workers, pg_dio preloaded after citus on each"
for n in "${NODES[@]}"; do
	ext_cluster_start "$n" "shared_preload_libraries = 'citus,pg_dio'" "max_connections = 100"
	SOCK[$n]=$PGHOST
	PORT[$n]=$PGPORT
done
unset PGHOST PGPORT
for n in "${NODES[@]}"; do
	on "$n" -v ON_ERROR_STOP=1 -c "CREATE EXTENSION citus" -c "CREATE EXTENSION pg_dio" >/dev/null ||
		die "CREATE EXTENSION citus, pg_dio failed on $n"
done
on citus-c -v ON_ERROR_STOP=1 -At \
	-c "SELECT citus_set_coordinator_host('127.0.0.1', ${PORT[citus-c]})" \
	-c "SELECT citus_add_node('127.0.0.1', ${PORT[citus-w1]})" \
	-c "SELECT citus_add_node('127.0.0.1', ${PORT[citus-w2]})" >/dev/null || die "could not add the workers"
echo "nodes: $(on citus-c -At -c "SELECT string_agg(nodename || ':' || nodeport || CASE WHEN groupid = 0 THEN ' (coordinator)' ELSE '' END, ', ' ORDER BY nodeid) FROM pg_dist_node")"
on citus-c -f "$HERE/setup.sql" >"$OUT/setup.out" 2>&1 || { cat "$OUT/setup.out"; die "citus/setup.sql failed"; }
echo "shards: $(on citus-c -At -c "SELECT string_agg(n || ' of ' || logicalrelid::text, ', ') FROM (SELECT logicalrelid, count(*) AS n FROM pg_dist_shard GROUP BY 1 ORDER BY 1) s"); $(on citus-c -At -c "SELECT pg_size_pretty(sum(citus_total_relation_size(logicalrelid))) FROM pg_dist_partition") in all"

echo "== the queries through the coordinator, pg_dio's scans off and forced on on every node"
for mode in off on; do
	set_mode "$mode"
	evict_workers
	before=$(direct_blocks)
	on citus-c -A -f "$HERE/queries.sql" >"$OUT/queries-$mode.out" 2>&1
	direct=$(($(direct_blocks) - before))
	echo "scans $mode: the workers read $direct blocks directly"
	if [ "$mode" = off ] && [ "$direct" != 0 ]; then
		ext_fail "with pg_dio's scans off the workers read $direct blocks directly"
	elif [ "$mode" = on ] && [ "$direct" -le 0 ]; then
		ext_fail "with pg_dio's scans forced on the workers read no block directly"
	fi
done
# each query's output (from its "== NAME" line to the next) off and on
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
	ext_pass "Citus queries: forced on matches off ($(tail -n 1 "$OUT/queries.cmp"))"
else
	cat "$OUT/queries.cmp"
	ext_fail "Citus queries: forced on differs from off"
fi

echo "== EXPLAIN ANALYZE through the coordinator (citus.explain_all_tasks)"
for mode in on off; do
	set_mode "$mode"
	explain_check "$mode" count "Seq Scan" DirectSeqScan "SELECT count(*) FROM events"
	explain_check "$mode" index_range "Index Scan" PrefetchIndexScan \
		"SELECT id, amount FROM orders WHERE id BETWEEN 150000 AND 150040"
	explain_check "$mode" router "Index Scan" PrefetchIndexScan "SELECT * FROM order_lines WHERE order_id = 4242 ORDER BY line"
done
for n in "${NODES[@]}"; do ext_check_crash "$n"; done
ext_stop_clusters

[ "$REGRESS" = 1 ] || { ext_summary; exit; }

# Citus' own tests: pg_regress_multi.pl starts a coordinator (port 57636)
# and two workers (57637, 57638) of its own in tmp_check/, writes its
# settings and the --server-option ones (last, so they win) into each
# postgresql.conf, and stops them at its end.  It runs from a copy of the
# regress directory that the server account owns: pg_regress writes results/
# there, and Citus' diff (bin/diff, first in PATH) writes its normalized
# copies beside the expected files.
SCHEDULE=${PG_DIO_CITUS_SCHEDULE:-multi_schedule}
PGBUILD=$(cd "$(dirname "$PGC")/../.." && pwd)/src
SHAREDIR=$("$PGC" --sharedir)
# what pg_regress_multi.pl preloads (citus, then pg_stat_statements and hll
# where installed), then pg_dio
PRELOAD=citus
for lib in pg_stat_statements hll; do
	[ -f "$SHAREDIR/extension/$lib.control" ] && PRELOAD="$PRELOAD,$lib"
done
PRELOAD="$PRELOAD,pg_dio"
ROUT="$OUT/regress"

# stop_regress_servers: the servers pg_regress_multi.pl left running (it
# stops them at its end; not when it is killed)
stop_regress_servers() {
	local d
	for d in "$ROUT"/*/regress/tmp_check/*/data; do
		[ -f "$d/postmaster.pid" ] || continue
		as_regress_user "$BINDIR/pg_ctl" -D "$d" -m immediate -w stop >/dev/null 2>&1
	done
}
trap 'ext_stop_clusters; stop_regress_servers' EXIT

# crashes DIR: the lines of the servers' logs under DIR that show a crash
crashes() { grep -hE "terminated by signal|PANIC" "$1"/regress/tmp_check/*/log/postmaster.log 2>/dev/null; }

# rerun_schedule TEST: what TEST needs before it, as Citus' run_test.py
# (DEPS) says: a schedule (minimal_schedule unless named; none for None)
# and direct extra tests, one "test:" line each, on stdout
rerun_schedule() {
	python3 - "$CITUS_DIR/src/src/test/regress/citus_tests/run_test.py" "$1" <<'PY'
import ast, sys
path, test = sys.argv[1:]
sched, extra = "minimal_schedule", []
for node in ast.walk(ast.parse(open(path).read())):
    if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
            and any(isinstance(t, ast.Name) and t.id == "DEPS" for t in node.targets)):
        for k, v in zip(node.value.keys, node.value.values):
            if isinstance(k, ast.Constant) and k.value == test and isinstance(v, ast.Call) and v.args:
                sched = v.args[0].value
                if len(v.args) > 1:
                    extra = [e.value for e in v.args[1].elts]
print(sched or "")
for t in extra:
    print("test:", t)
PY
}

# CITUS_PORTS: the fixed ports pg_regress_multi.pl's servers listen on.
# A client socket that used one of them as its ephemeral local port (a
# connection of the clusters above, say) holds it in TIME-WAIT for 60 s,
# and a listener cannot bind it until then.
CITUS_PORTS="57636 57637 57638"

# wait_ports_free: wait, at most 90 s, until a listener can bind every port
# of CITUS_PORTS on 127.0.0.1; what holds one is printed when it gives up
wait_ports_free() {
	python3 - $CITUS_PORTS <<'PY'
import socket, subprocess, sys, time
ports = [int(p) for p in sys.argv[1:]]
def busy():
    out = []
    for p in ports:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", p))
        except OSError:
            out.append(p)
        finally:
            s.close()
    return out
deadline = time.monotonic() + 90
while busy() and time.monotonic() < deadline:
    time.sleep(1)
left = busy()
if left:
    print("ports still in use after 90 s: %s" % left)
    ss = subprocess.run(["ss", "-tanp"], capture_output=True, text=True).stdout
    print("".join(l + "\n" for l in ss.splitlines() if any(":%d " % p in l for p in left)), end="")
    sys.exit(1)
PY
}

# citus_regress MODE SETTING...: one run of the schedule $SCHEDULE (or, with
# RERUN=TEST, of what TEST needs (rerun_schedule) and then TEST) into
# $ROUT/MODE; run again once when a server could not bind its port
citus_regress() {
	local try
	for try in 1 2; do
		wait_ports_free || { ext_fail "Citus $SCHEDULE $1: its servers' ports stay in use"; return; }
		citus_regress_once "$@"
		grep -qs "could not create any TCP/IP sockets" "$ROUT/$1/log" "$ROUT/$1"/regress/tmp_check/*/log/postmaster.log || break
		echo "Citus $SCHEDULE $1: a server could not bind its port; once more"
	done
	grep -q "shared_preload_libraries='$PRELOAD'" "$ROUT/$1/regress/tmp_check/worker.57637/data/postgresql.conf" ||
		ext_fail "Citus $SCHEDULE $1: the workers did not preload $PRELOAD"
}

citus_regress_once() {
	local mode=$1 dir="$ROUT/$1" s opts=() start=$SECONDS sched=$SCHEDULE
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a "$CITUS_DIR/src/src/test/regress" "$dir/regress"
	if [ -n "${RERUN:-}" ]; then
		sched=pg_dio_rerun_schedule
		{
			rerun_schedule "$RERUN" | while read -r line; do
				case "$line" in
				test:*) echo "$line" ;;
				?*) cat "$dir/regress/$line" ;;
				esac
			done
			echo "test: $RERUN"
		} >"$dir/regress/$sched"
	fi
	is_root && chown -R "$PG_DIO_OS_USER" "$dir"
	opts=("--server-option=shared_preload_libraries='$PRELOAD'")
	for s in "$@"; do opts+=("--server-option=$s"); done
	(
		cd "$dir/regress" || exit 1
		as_regress_user env PATH="$dir/regress/bin:$BINDIR:$PATH" \
			perl pg_regress_multi.pl --pgxsdir="$("$PGC" --pkglibdir)/pgxs" --bindir="$BINDIR" \
			--libdir="$("$PGC" --libdir)" --majorversion="$(pg_major "$PGC")" \
			--postgres-builddir="$PGBUILD" --postgres-srcdir="$PGBUILD" --citus_abs_srcdir="$dir/regress" \
			--load-extension=citus "${opts[@]}" \
			-- --inputdir="$dir/regress" --launcher="$dir/regress/log_test_times" \
			--schedule="$dir/regress/$sched"
	) >"$dir/log" 2>&1
	echo "Citus $sched, pg_dio's scans $mode: $(grep -cE '^(not )?ok ' "$dir/log") tests ran, $(grep -cE '^ok ' "$dir/log") match Citus' expected output, $(grep -cE '^not ok ' "$dir/log") do not ($((SECONDS - start)) s)"
}

# as_regress_user CMD...: CMD as the server account, without the
# connection settings of the clusters above
as_regress_user() {
	if is_root; then
		runuser -u "$PG_DIO_OS_USER" -- env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE -u PGOPTIONS "$@"
	else
		env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE -u PGOPTIONS "$@"
	fi
}

echo "== Citus' own tests ($SCHEDULE), pg_dio preloaded after citus on every node: scans off, then forced on"
read -ra off_set <<<"${EXT_OFF//-c /}"
read -ra on_set <<<"${EXT_ON//-c /}"
citus_regress off "${off_set[@]}"
citus_regress on "${on_set[@]}"
grep -E '^not ok ' "$ROUT/off/log" | sed 's/^/off: /'
# both runs' raw result files (Citus' diff leaves them as X.out.unmodified
# and its normalized copy as X.out) through Citus' own normalization
# (shard and placement ids, ports, pids, ...), without psql's "(N rows)"
# footers: normalize.py subtracts the pg_dio-only lines it drops from the
# next footer, which after a stretch of \a\t output (no footers) is another
# statement's (multi_explain: "(-20 rows)" on, "(-5 rows)" off); a footer
# only repeats the number of rows, which are compared themselves
normalize_results() {
	local mode f raw
	for mode in "$@"; do
		mkdir -p "$ROUT/$mode/normalized"
		for f in "$ROUT/$mode"/regress/results/*.out; do
			raw=$f
			[ -f "$f.unmodified" ] && raw=$f.unmodified
			sed -Ef "$ROUT/$mode/regress/bin/normalize.sed" "$raw" | grep -vE '^\([0-9]+ rows?\)$' \
				>"$ROUT/$mode/normalized/$(basename "$f")"
		done
	done
}
normalize_results off on
# A test of citus/racy.txt that differs is run again, off and on, after
# what it needs (rerun_schedule), up to 3 times: it passes if a rerun's two
# outputs match after normalize.py, as the full run's must.  Any other difference fails at once.
racy() { sed -n "s/^citus\/\([a-z0-9_]*\):.*/\1/p" "$HERE/racy.txt" | grep -qx "$1"; }
if ! python3 "$EXT_NORMALIZE" --allowed "$HERE/allowed.txt" --suite citus \
	--io-method "$IO_METHOD" "$ROUT/off/normalized" "$ROUT/on/normalized" >"$ROUT/compare.txt"; then
	mapfile -t differ < <(sed -n 's/^=== \(.*\): differs (not allowed)$/\1/p' "$ROUT/compare.txt")
	others=()
	for t in "${differ[@]}"; do racy "$t" || others+=("$t"); done
	if [ "${#differ[@]}" = 0 ] || [ "${#others[@]}" -gt 0 ]; then
		cat "$ROUT/compare.txt"
		ext_fail "citus: forced on differs from forced off"
	else
		grep -A30 '^=== .*(not allowed)' "$ROUT/compare.txt"
		for t in "${differ[@]}"; do
			same=0
			for try in 1 2 3; do
				for mode in off on; do
					[ $mode = off ] && set_args=("${off_set[@]}") || set_args=("${on_set[@]}")
					RERUN=$t citus_regress "rerun-$t-$try-$mode" "${set_args[@]}"
				done
				normalize_results "rerun-$t-$try-off" "rerun-$t-$try-on"
				# as the full run is compared: pg_dio's nodes under core's names
				if python3 "$EXT_NORMALIZE" --files "$ROUT/rerun-$t-$try-off/normalized/$t.out" \
					"$ROUT/rerun-$t-$try-on/normalized/$t.out"; then
					same=$try
					break
				fi
			done
			if [ "$same" -gt 0 ]; then
				ext_pass "citus/$t (citus/racy.txt) differed in the full run; run again after what it needs, off and on match (try $same)"
			else
				ext_fail "citus/$t differs off and on in the full run and in 3 reruns"
			fi
		done
		sed -i '/(not allowed)/d' "$ROUT/compare.txt"
		ext_pass "citus: forced on matches forced off but for citus/racy.txt's tests above"
		grep '^=== ' "$ROUT/compare.txt"
	fi
else
	ext_pass "citus: forced on matches forced off ($(tail -n 1 "$ROUT/compare.txt"))"
	grep '^=== ' "$ROUT/compare.txt"
fi
# an allowed test may differ only as citus/allowed/TEST.diff says: the
# lines that differ after normalize.py, with 3 lines of context, hunk
# positions left out; under another schedule (PG_DIO_CITUS_SCHEDULE) one
# that ran in neither run is skipped
python3 - "$EXT_NORMALIZE" "$HERE" "$IO_METHOD" "$ROUT/off/normalized" "$ROUT/on/normalized" "$SCHEDULE" <<'PY'
import difflib, os, sys
norm, here, io_method, off, on, schedule = sys.argv[1:]
sys.path.insert(0, os.path.dirname(norm))
import normalize
bad = 0
for test in sorted(normalize.read_allowed(os.path.join(here, "allowed.txt"), "citus", io_method)):
    if schedule != "multi_schedule" and not any(
            os.path.exists(os.path.join(d, test + ".out")) for d in (off, on)):
        print("skipped: citus/%s is not in %s" % (test, schedule))
        continue
    a, b = (normalize.normalize(open(os.path.join(d, test + ".out"), errors="replace").readlines())
            for d in (off, on))
    got = [l if l.endswith("\n") else l + "\n" for l in difflib.unified_diff(a, b, n=3)
           if not l.startswith(("---", "+++", "@@"))]
    want = open(os.path.join(here, "allowed", test + ".diff")).readlines()
    if got == want:
        print("ok: citus/%s differs exactly as citus/allowed/%s.diff" % (test, test))
    else:
        bad += 1
        print("not ok: citus/%s differs otherwise than citus/allowed/%s.diff:" % (test, test))
        sys.stdout.writelines(difflib.unified_diff(want, got, "allowed", "now"))
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] || ext_fail "Citus $SCHEDULE: an allowed test differs otherwise than its allowed diff"
n_off=$(grep -cE '^(not )?ok ' "$ROUT/off/log")
n_on=$(grep -cE '^(not )?ok ' "$ROUT/on/log")
if [ "$n_off" -gt 0 ] && [ "$n_off" = "$n_on" ]; then
	ext_pass "Citus $SCHEDULE: $n_on tests ran in both runs"
else
	tail -n 20 "$ROUT/on/log"
	ext_fail "Citus $SCHEDULE: $n_off tests ran off, $n_on on"
fi
if crashes "$ROUT/on"; then
	ext_fail "Citus $SCHEDULE: a server crashed with pg_dio's scans on"
fi
crashes "$ROUT/off" && note "(a server crashed with the scans off too)"
ext_summary
