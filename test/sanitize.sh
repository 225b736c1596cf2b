#!/usr/bin/env bash
# pg_dio built with AddressSanitizer and UndefinedBehaviorSanitizer, the
# server run with the sanitizer runtime preloaded, the pg_regress suites run
# against it; fails if a sanitizer reports anything.  Rebuilds and reinstalls
# the normal library afterwards.  Run via `make sanitize`.
set -uo pipefail
. "$(dirname "$0")/scripts/common.sh"

pg_dio_suite_env
OUT="$WORK/.tmp/sanitize"
LOGS="$OUT/logs"
ASAN_LIB=$(gcc -print-file-name=libasan.so)
UBSAN_LIB=$(gcc -print-file-name=libubsan.so)
CLUSTER=sanitize

rebuild_normal() {
	(cd "$PG_DIO_ROOT" && make -s clean && make -s PG_CONFIG="$PGC" install) >/dev/null 2>&1
}
cleanup() {
	"$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1
	rebuild_normal
}
trap cleanup EXIT

rm -rf "$OUT"
mkdir -p "$LOGS"
chmod 777 "$LOGS"
(cd "$PG_DIO_ROOT" && make -s clean &&
	make -s PG_CONFIG="$PGC" install \
		PG_CPPFLAGS="-DPG_DIO_VERSION=\\\"$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" pg_dio.control)\\\" -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1 -g" \
		SHLIB_LINK="-luring -fsanitize=address,undefined") >/dev/null || die "sanitizer build failed"

export PG_DIO_SERVER_ENV="LD_PRELOAD=$ASAN_LIB:$UBSAN_LIB ASAN_OPTIONS=detect_leaks=0:log_path=$LOGS/asan:halt_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:log_path=$LOGS/ubsan"
"$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1
eval "$("$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER")" || die "the sanitized cluster did not start"
unset PG_DIO_SERVER_ENV

# the runtime must really be in the server, and pg_dio really instrumented
PM=$(head -n 1 "$WORK/.tmp/clusters/$CLUSTER/data/postmaster.pid")
[ "$(grep -c libasan "/proc/$PM/maps")" -gt 0 ] || die "the server runs without the ASan runtime"
[ "$(nm -D "$("$PGC" --pkglibdir)/pg_dio.so" | grep -c __asan_)" -gt 0 ] || die "pg_dio.so is not instrumented"

REGRESS=($(sed -n 's/^REGRESS *= *//p' "$PG_DIO_ROOT/Makefile"))
(cd "$PG_DIO_ROOT" && "$PGXSDIR/src/test/regress/pg_regress" --bindir="$BINDIR" --inputdir=. \
	--outputdir="$OUT/regress" --dbname=contrib_regression "${REGRESS[@]}")
rc=$?

# reports that name pg_dio's code (the server itself is not instrumented)
reports=$(grep -l -E "ERROR: AddressSanitizer|runtime error" "$LOGS"/* \
	"$WORK/.tmp/clusters/$CLUSTER/server.log" 2>/dev/null)
if [ -n "$reports" ]; then
	echo "sanitizer reports:"
	grep -h -B2 -A12 -E "ERROR: AddressSanitizer|runtime error" $reports | head -80
	rc=1
fi
echo "sanitizers: $( [ $rc = 0 ] && echo clean || echo FAILED ) (logs: $LOGS)"
exit $rc
