#!/usr/bin/env bash
# pg_stat_aios under a translated lc_messages: core's own reads, caught in
# pg_aios while a sequential scan has them in flight, read back through
# pg_stat_aios must have relation, fork and block filled, whatever language
# core described them in (pg_dio_aio_target reads the path and the integers
# of the description, never its words).  Uses its own throwaway cluster
# ("aios-lang"), restarted once per language.
#
#   test/aios_lang.sh [LANG ...]    default: de ja (Japanese names the file first)
#
# The PostgreSQL is PG_CONFIG's (else the suites' own); pg_dio must be
# installed in it.  Core translates only when built with NLS (configure
# --enable-nls, as test/scripts/build_pg.sh builds it; the PyPI wheel is not)
# and when its message catalog for the language has these messages.  The
# server gets LANGUAGE=<lang> in its environment and the session sets
# lc_messages to C.UTF-8: glibc's gettext follows LANGUAGE in every locale
# but C and POSIX, so no locale of the language need be installed (C.UTF-8
# is part of Debian's libc since 12).  A language whose catalog is missing
# is skipped, saying why; if every one is (or C.UTF-8 is missing), the
# script exits 77 and counts as skipped, never as passed.  Each run first
# reads the same way with lc_messages = C, where the descriptions must be
# English.  Prints "ok N - ..." / "not ok N - ..." lines.
set -uo pipefail
. "$(dirname "$0")/scripts/common.sh"

SKIP=77
LANGS=("$@")
[ ${#LANGS[@]} -gt 0 ] || LANGS=(de ja)
CLUSTER=aios-lang

PGC=$(find_pg_config 2>/dev/null) || die "PostgreSQL 18 not found: run test/setup.sh first"
MAJOR=$(pg_major "$PGC")
LOCALEDIR=$("$PGC" --localedir)
[ -f "$("$PGC" --sharedir)/extension/pg_dio.control" ] ||
	die "pg_dio is not installed in $("$PGC" --sharedir): make PG_CONFIG=$PGC install"

skip_all() { echo "# skipped: $*"; exit "$SKIP"; }

"$PGC" --configure | grep -q -- --enable-nls ||
	skip_all "PostgreSQL $MAJOR at $PGC was built without --enable-nls: its messages are never translated"

# the locale that lets LANGUAGE through: C.UTF-8, however this libc spells it
LC=$(locale -a 2>/dev/null | grep -iE '^c\.utf-?8$' | head -n 1)
[ -n "$LC" ] || skip_all "no C.UTF-8 locale here (locale -a), which LANGUAGE needs to take effect"

# the languages whose catalog translates core's AIO target descriptions
run_langs=()
for l in "${LANGS[@]}"; do
	mo="$LOCALEDIR/$l/LC_MESSAGES/postgres-$MAJOR.mo"
	if [ ! -f "$mo" ]; then
		echo "# $l skipped: $mo is absent: no $l catalog"
	elif ! grep -qaF 'blocks %u..%u in file' "$mo"; then
		echo "# $l skipped: $mo does not translate core's AIO target descriptions"
	else
		run_langs+=("$l")
	fi
done
[ ${#run_langs[@]} -gt 0 ] || skip_all "no message catalog of PostgreSQL $MAJOR ($PGC) for ${LANGS[*]} translates core's AIO target descriptions"

cleanup() { "$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$PG_DIO_ROOT/test/cluster.sh" destroy "$CLUSTER" >/dev/null 2>&1

export PGDATABASE=postgres PGCLIENTENCODING=UTF8
# core's sequential scan (not DirectSeqScan), in this backend only
export PGOPTIONS="-c pg_dio.enable_direct_scan=off -c max_parallel_workers_per_gather=0"

n=0
failures=0
check() {			# check "description" "SQL returning t"
	local got
	n=$((n + 1))
	got=$(psql -X -At -c "$2" 2>&1)
	if [ "$got" = "t" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		[ "$got" = f ] || echo "# ${got:-(no rows)}"
		failures=$((failures + 1))
	fi
}

# capture LC: read aios_lang with lc_messages = LC, sampling this backend's
# rows of pg_aios (raw descriptions) and of pg_stat_aios (taken apart) as
# the scan goes; a few tries, until some were caught in flight
capture() {
	psql -X -q -v ON_ERROR_STOP=1 -v lc="$1" <<'SQL'
SET lc_messages = :'lc';
DO $$
BEGIN
    FOR i IN 1..5 LOOP
        EXIT WHEN aios_lang_capture() > 0;
    END LOOP;
END $$;
SQL
}

setup() {
	psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION pg_dio;
CREATE TABLE aios_lang (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO aios_lang SELECT g, repeat('x', 400) FROM generate_series(1, 40000) g;
VACUUM (FREEZE) aios_lang;
CREATE TABLE aios_lang_desc (lc text, target_desc text);
CREATE TABLE aios_lang_rows (lc text, relation regclass, fork text, block bigint);
-- one pass over aios_lang, cold; every 20 rows the I/O this backend has in
-- flight (pg_aios keeps a read until its buffers are consumed); returns the
-- pg_stat_aios rows caught with the current lc_messages
CREATE FUNCTION aios_lang_capture() RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE
    r record;
    i bigint := 0;
BEGIN
    PERFORM pg_dio_evict('aios_lang');
    FOR r IN SELECT id FROM aios_lang LOOP
        i := i + 1;
        CONTINUE WHEN i % 20 <> 0;
        INSERT INTO aios_lang_desc
            SELECT current_setting('lc_messages'), a.target_desc
              FROM pg_aios a
             WHERE a.pid = pg_backend_pid() AND a.target_desc IS NOT NULL;
        INSERT INTO aios_lang_rows
            SELECT current_setting('lc_messages'), s.relation, s.fork, s.block
              FROM pg_stat_aios s
             WHERE s.source = 'core' AND s.pid = pg_backend_pid()
               AND s.operation IS NOT NULL;
    END LOOP;
    RETURN (SELECT count(*) FROM aios_lang_rows
             WHERE lc = current_setting('lc_messages'));
END $f$;
SQL
}

# check_rows LC WHAT: the pg_stat_aios rows caught with LC are all taken apart
check_rows() {
	local lc=$1 what=$2
	check "$what: core's reads caught in flight in pg_aios and pg_stat_aios" \
		"SELECT (SELECT count(*) FROM aios_lang_desc WHERE lc = '$lc') > 0
		    AND (SELECT count(*) FROM aios_lang_rows WHERE lc = '$lc') > 0"
	check "$what: every core row of pg_stat_aios has relation, fork and block" \
		"SELECT count(*) FILTER (WHERE relation IS NULL OR fork IS NULL OR block IS NULL) = 0
		   FROM aios_lang_rows WHERE lc = '$lc'"
	check "$what: the scanned table's rows name it, its main fork and blocks within it" \
		"SELECT count(*) > 0
		        AND bool_and(fork = 'main'
		                     AND block < pg_relation_size('aios_lang') / current_setting('block_size')::int)
		   FROM aios_lang_rows WHERE lc = '$lc' AND relation = 'aios_lang'::regclass"
	psql -X -At -c "SELECT '# $what: ' || count(*) || ' rows, e.g. ' || min(target_desc)
		FROM aios_lang_desc WHERE lc = '$lc'"
}

# io_method = sync does each read as it is issued: nothing stays in pg_aios
# for a query to see, so this cluster then uses worker
settings=()
if [ "${PG_DIO_IO_METHOD:-}" = sync ]; then
	echo "# io_method = sync leaves no read in flight to look at: this cluster uses io_method = worker"
	settings=("io_method = worker")
fi

first=1
for l in "${run_langs[@]}"; do
	"$PG_DIO_ROOT/test/cluster.sh" stop "$CLUSTER" >/dev/null 2>&1
	env_line=$(PG_DIO_SERVER_ENV="LANGUAGE=$l" "$PG_DIO_ROOT/test/cluster.sh" start "$CLUSTER" \
		"${settings[@]}") ||
		die "could not start the $CLUSTER cluster"
	eval "$env_line"
	if [ "$first" = 1 ]; then
		setup >/dev/null || die "could not set up the $CLUSTER cluster"
		first=0
	fi
	psql -X -q -c "TRUNCATE aios_lang_desc, aios_lang_rows" || die "psql failed"

	# with lc_messages = C, LANGUAGE is ignored: core's English
	capture C || die "the capture with lc_messages = C failed"
	check "LANGUAGE=$l, lc_messages=C: core describes its reads in English" \
		"SELECT bool_and(target_desc ~ '^(blocks? [0-9]+(\.\.[0-9]+)? in )?file \"')
		   FROM aios_lang_desc WHERE lc = 'C'"
	check_rows C "LANGUAGE=$l, lc_messages=C"

	capture "$LC" || die "the capture with lc_messages = $LC failed"
	# not English, and in the language's words where we know them
	case $l in
	de) word=Datei ;;
	ja) word=ファイル ;;
	*) word= ;;
	esac
	check "LANGUAGE=$l, lc_messages=$LC: core describes its reads in another language${word:+ ($word)}" \
		"SELECT bool_and(target_desc !~ '(^| )file \"' AND target_desc !~ '^blocks? [0-9]'
		                 AND strpos(target_desc, '$word') > 0)
		   FROM aios_lang_desc WHERE lc = '$LC'"
	check_rows "$LC" "LANGUAGE=$l, lc_messages=$LC"
done

echo "# aios_lang: $((n - failures)) passed, $failures failed"
[ "$failures" = 0 ]
