#!/usr/bin/env bash
# pg_dio beside TimescaleDB 2.29.2 (../shared/ext-src/), built with cmake
# against PostgreSQL 18 from source into the cache (lib.sh):
#   - hypertable (test/extensions/timescaledb/): a hypertable read cold
#     through ChunkAppend and ConstraintAwareAppend with DirectSeqScan /
#     PrefetchIndexScan below them, SkipScan left with the index scan it
#     requires, every query's rows equal to those with pg_dio's scans off;
#   - suites: TimescaleDB's own regression suites (Apache: regresscheck, TSL:
#     regresscheck-t), each in pg_regress's temporary instances with
#     timescaledb and pg_dio preloaded, once with pg_dio's scans off and once
#     forced on, the results compared (lib.sh's ext_compare).
#     TSDB_SUITES="apache tsl" picks suites, TSDB_TESTS name patterns
#     (TimescaleDB's pg_regress.sh TESTS, e.g. "*append* skip_scan*").
#
#   - build: only build and install TimescaleDB, not pg_dio (make bench's
#     timescaledb experiment, test/bench/extensions.sh; .ci/run ahead of
#     the suites).
#
#   test/extensions/timescaledb.sh [build] [hypertable] [suites]
#   (hypertable and suites by default)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(hypertable suites)
TARBALL=${PG_DIO_TSDB_TARBALL:-$(cd "$PG_DIO_ROOT/.." && pwd)/shared/ext-src/timescaledb-2.29.2.tar.gz}

if [ "${PARTS[*]}" = build ]; then ext_init build-only; else ext_init; fi
[ -f "$TARBALL" ] || die "TimescaleDB source: $TARBALL is absent"
TSDB=$(ext_cache_dir timescaledb "$(sha256sum "$TARBALL" | cut -c1-64)")
BUILD=$TSDB/src/build

# build_tsdb: TimescaleDB built (once) and installed into PostgreSQL
build_tsdb() {
	mkdir -p "$(dirname "$TSDB")"
	# one build at a time; a second caller waits and then finds it
	exec 8>"$TSDB.lock"
	flock 8
	if [ ! -f "$TSDB/.complete" ]; then
		pg_dio_apt_install cmake
		note "building TimescaleDB from $(basename "$TARBALL") into $TSDB (about 3 minutes on 2 cores)"
		rm -rf "$TSDB"
		mkdir -p "$TSDB"
		tar -C "$TSDB" -xzf "$TARBALL"
		mv "$TSDB"/timescaledb-* "$TSDB/src"
		(
			unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
			cd "$TSDB/src" &&
				./bootstrap -DPG_CONFIG="$PGC" -DREGRESS_CHECKS=ON -DTAP_CHECKS=OFF \
					-DWARNINGS_AS_ERRORS=OFF -DUSE_OPENSSL=0 -DSEND_TELEMETRY_DEFAULT=NO &&
				make -C build -j2
		) >"$TSDB/build.log" 2>&1 || { tail -n 40 "$TSDB/build.log" >&2; die "TimescaleDB did not build (log: $TSDB/build.log)"; }
		touch "$TSDB/.complete"
	fi
	(unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS; make -C "$BUILD" install) >"$TSDB/install.log" 2>&1 ||
		{ tail -n 30 "$TSDB/install.log" >&2; die "TimescaleDB did not install (log: $TSDB/install.log)"; }
	exec 8>&-
}

hypertable() {
	local out
	echo "== TimescaleDB: hypertable queries, cold, with pg_dio's scans"
	ext_cluster_start ext-tsdb "shared_preload_libraries = 'timescaledb,pg_dio'" \
		"timescaledb.telemetry_level = off"
	out=$(ext_outdir tsdb-hypertable)
	if (cd "$EXT_DIR/timescaledb" && ext_as_server "$PG_REGRESS" --inputdir=. --bindir="$BINDIR" \
		--dbname=tsdb_regression --outputdir="$out" hypertable) >"$out/log" 2>&1; then
		ext_pass "timescaledb hypertable"
	else
		cat "$out/log" "$out/regression.diffs" 2>/dev/null
		ext_fail "timescaledb hypertable"
	fi
	ext_check_crash ext-tsdb
}

# suite NAME TARGET CONFDIR: make TARGET of TimescaleDB's build twice, with
# pg_dio added to the temporary instance's configuration (CONFDIR's
# postgresql.conf) and its scans off, then forced on
suite() {
	local name=$1 target=$2 conf="$BUILD/$3/postgresql.conf" out mode
	out=$(ext_outdir "$name")
	[ -f "$conf.orig" ] || cp "$conf" "$conf.orig"
	for mode in off on; do
		{
			sed -E "s/^shared_preload_libraries *= *timescaledb *$/shared_preload_libraries = 'timescaledb,pg_dio'/" "$conf.orig"
			if [ $mode = off ]; then echo "$EXT_OFF"; else echo "$EXT_ON"; fi | sed 's/-c //g; s/ /\n/g'
		} >"$conf"
		grep -q "^shared_preload_libraries = 'timescaledb,pg_dio'" "$conf" ||
			die "$conf: no shared_preload_libraries line to extend"
		rm -rf "$BUILD/$3/results"
		# pg_regress starts its temporary instance as the caller
		ext_as_server make -C "$BUILD" "$target" TESTS="${TSDB_TESTS:-}" >"$out/$mode.log" 2>&1
		mkdir -p "$out/$mode"
		cp -r "$BUILD/$3/results" "$out/$mode/results"
		echo "$name $mode: $(grep -cE '^ok ' "$out/$mode.log") of $(grep -cE '^(not )?ok ' "$out/$mode.log") tests match TimescaleDB's expected output"
	done
	cp "$conf.orig" "$conf"
	ext_compare "$name" "$out/off/results" "$out/on/results" "$out/compare.txt"
}

suites() {
	local s
	# the temporary instances, their output and the tests' files are the server account's
	is_root && chown -R "$PG_DIO_OS_USER" "$TSDB/src"
	ulimit -l unlimited 2>/dev/null || true
	for s in ${TSDB_SUITES:-apache tsl}; do
		echo "== TimescaleDB's $s suite: pg_dio's scans off, then forced on"
		case "$s" in
		apache) suite timescaledb-apache regresscheck test ;;
		tsl) suite timescaledb-tsl regresscheck-t tsl/test ;;
		*) die "TSDB_SUITES: apache or tsl, not $s" ;;
		esac
	done
}

build_tsdb
for part in "${PARTS[@]}"; do
	case "$part" in
	build) echo "TimescaleDB: $TSDB" ;;
	hypertable) hypertable ;;
	suites) suites ;;
	*) die "usage: $0 [build] [hypertable] [suites]" ;;
	esac
done
ext_summary
