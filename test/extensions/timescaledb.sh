#!/usr/bin/env bash
# pg_dio beside TimescaleDB 2.29.2 (../shared/ext-src/), built against
# PostgreSQL 18 from source (test/scripts/build_pg.sh 18):
#   1. hypertable: ChunkAppend and ConstraintAwareAppend queries read cold
#      with DirectSeqScan / PrefetchIndexScan below them, SkipScan keeps its
#      index scan, and every query returns the rows it returns with pg_dio's
#      scans off (test/extensions/timescaledb/hypertable.sql);
#   2. TimescaleDB's own regression suites (Apache: regresscheck, TSL:
#      regresscheck-t) in temporary instances preloading timescaledb and
#      pg_dio, once with pg_dio's scans off and once forced on, compared with
#      test/core_regress/normalize.py; TSDB_TESTS narrows them to name
#      patterns (pg_regress.sh's TESTS), TSDB_SUITES to apache or tsl.
#
#   test/extensions/timescaledb.sh [hypertable] [suites]
#
# Prints "N passed, M failed".
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(hypertable suites)
TARBALL=${PG_DIO_TSDB_TARBALL:-$(cd "$PG_DIO_ROOT/.." && pwd)/shared/ext-src/timescaledb-2.29.2.tar.gz}
[ -f "$TARBALL" ] || die "TimescaleDB source: $TARBALL is absent"

PGC=$("$PG_DIO_ROOT/test/scripts/build_pg.sh" 18) || exit 1
export PG_CONFIG=$PGC
BINDIR=$("$PGC" --bindir)
WORK=$(pg_dio_workdir)
OUT="$WORK/.tmp/extensions/timescaledb"
CACHE=$(dirname "$(dirname "$(dirname "$PGC")")")
key=$(sha256sum "$TARBALL" | cut -c1-16)
TSDB="$CACHE/timescaledb-$key"

# --- build (cached beside the PostgreSQL build it was built against) -------
build_tsdb() {
	[ -f "$TSDB/.complete" ] && return 0
	dpkg -s cmake >/dev/null 2>&1 || {
		is_root || die "cmake is missing; run: sudo apt-get install -y cmake"
		note "installing Debian packages: cmake"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake >/dev/null
	}
	note "building TimescaleDB from $(basename "$TARBALL") into $TSDB (about 8 minutes)"
	rm -rf "$TSDB"
	mkdir -p "$TSDB"
	tar -C "$TSDB" -xzf "$TARBALL"
	mv "$TSDB"/timescaledb-* "$TSDB/src"
	(
		unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
		cd "$TSDB/src" &&
			./bootstrap -DPG_CONFIG="$PGC" -DREGRESS_CHECKS=ON -DTAP_CHECKS=OFF \
				-DWARNINGS_AS_ERRORS=OFF -DUSE_OPENSSL=0 -DSEND_TELEMETRY_DEFAULT=NO &&
			make -C build -j"$(nproc)" && make -C build install
	) >"$TSDB/build.log" 2>&1 || { tail -n 40 "$TSDB/build.log" >&2; die "TimescaleDB build failed (log: $TSDB/build.log)"; }
	touch "$TSDB/.complete"
}
build_tsdb
make -s -C "$PG_DIO_ROOT" PG_CONFIG="$PGC" install >/dev/null || die "pg_dio did not build against $PGC"

mkdir -p "$OUT"
is_root && chown "$PG_DIO_OS_USER" "$OUT"
passed=0
failed=0
count() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi; }

# as_user CMD...: as the account that runs servers (pg_regress starts its
# temporary instances as the caller)
as_user() {
	if is_root; then
		runuser -u "$PG_DIO_OS_USER" -- env PATH="$BINDIR:$PATH" "$@"
	else
		"$@"
	fi
}

# --- 1. hypertable queries, cold, with pg_dio's scans -----------------------
hypertable() {
	local cluster=tsdb env rc
	"$PG_DIO_ROOT/test/cluster.sh" destroy "$cluster" >/dev/null 2>&1
	env=$("$PG_DIO_ROOT/test/cluster.sh" start "$cluster" \
		"shared_preload_libraries = 'timescaledb,pg_dio'" "timescaledb.telemetry_level = off") ||
		{ count 1; return; }
	(
		eval "$env"
		"$PGXSDIR/src/test/regress/pg_regress" --bindir="$BINDIR" \
			--inputdir="$PG_DIO_ROOT/test/extensions/timescaledb" \
			--outputdir="$OUT/hypertable" --dbname=tsdb_regression hypertable
	)
	rc=$?
	[ "$rc" != 0 ] && [ -f "$OUT/hypertable/regression.diffs" ] && cat "$OUT/hypertable/regression.diffs"
	count "$rc"
	"$PG_DIO_ROOT/test/cluster.sh" destroy "$cluster" >/dev/null 2>&1
}

# --- 2. TimescaleDB's own suites, pg_dio's scans off and forced on ----------
OFF="pg_dio.enable_direct_scan = off
pg_dio.enable_index_prefetch = off"
ON="pg_dio.enable_direct_scan = on
pg_dio.direct_scan_threshold = 0
pg_dio.enable_index_prefetch = on"

# run_suite NAME TARGET CONFDIR MODE SETTINGS: make TARGET in TimescaleDB's
# build with pg_dio preloaded after timescaledb and SETTINGS in the
# temporary instance's configuration; its results into $OUT/NAME-MODE
run_suite() {
	local name=$1 target=$2 conf="$TSDB/src/build/$3/postgresql.conf" mode=$4 settings=$5
	local dir="$OUT/$name-$mode"
	[ -f "$conf.orig" ] || cp "$conf" "$conf.orig"
	{
		sed 's/^shared_preload_libraries *= *timescaledb *$/shared_preload_libraries = '"'"'timescaledb,pg_dio'"'"'/' "$conf.orig"
		echo "$settings"
	} >"$conf"
	grep -q "^shared_preload_libraries = 'timescaledb,pg_dio'" "$conf" || die "$conf: no shared_preload_libraries line to extend"
	rm -rf "$TSDB/src/build/$3/results" "$dir"
	ulimit -l unlimited 2>/dev/null || true
	as_user make -C "$TSDB/src/build" "$target" TESTS="${TSDB_TESTS:-}" >"$OUT/$name-$mode.log" 2>&1
	mkdir -p "$dir"
	cp -r "$TSDB/src/build/$3/results" "$dir/results"
	[ -f "$TSDB/src/build/$3/regression.diffs" ] && cp "$TSDB/src/build/$3/regression.diffs" "$dir/"
	echo "$name $mode: $(grep -cE '^ok ' "$OUT/$name-$mode.log") ok, $(grep -cE '^not ok ' "$OUT/$name-$mode.log") not ok against TimescaleDB's expected output"
}

suites() {
	local s name target confdir
	is_root && chown -R "$PG_DIO_OS_USER" "$TSDB/src"
	for s in ${TSDB_SUITES:-apache tsl}; do
		case "$s" in
		apache) name=tsdb-apache target=regresscheck confdir=test ;;
		tsl) name=tsdb-tsl target=regresscheck-t confdir=tsl/test ;;
		*) die "TSDB_SUITES: apache or tsl, not $s" ;;
		esac
		echo "== TimescaleDB's $s suite: pg_dio's scans off, then forced on"
		run_suite "$name" "$target" "$confdir" off "$OFF"
		run_suite "$name" "$target" "$confdir" on "$ON"
		cp "$TSDB/src/build/$confdir/postgresql.conf.orig" "$TSDB/src/build/$confdir/postgresql.conf"
		if python3 "$PG_DIO_ROOT/test/core_regress/normalize.py" \
			--allowed "$PG_DIO_ROOT/test/extensions/allowed.txt" --suite "$name" --io-method worker \
			"$OUT/$name-off/results" "$OUT/$name-on/results" >"$OUT/$name.diff"; then
			echo "ok: $s forced on matches forced off ($(ls "$OUT/$name-on/results" | wc -l) result files)"
			count 0
		else
			echo "not ok: $s forced on differs from forced off:"
			cat "$OUT/$name.diff"
			count 1
		fi
	done
}

PGXSDIR=$(dirname "$("$PGC" --pgxs)")/../..
for part in "${PARTS[@]}"; do
	case "$part" in
	hypertable) echo "== hypertable queries beside TimescaleDB"; hypertable ;;
	suites) suites ;;
	*) die "usage: $0 [hypertable] [suites]" ;;
	esac
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
