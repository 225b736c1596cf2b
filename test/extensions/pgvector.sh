#!/usr/bin/env bash
# pgvector's regression suite (its Makefile's REGRESS, test/sql) with pg_dio's
# scans off, then forced on, against a throwaway cluster; the two runs'
# results must match (lib.sh's ext_regress_off_on).  Debian's pgvector source
# package, built with PGXS into the cache (lib.sh).
#
#   test/extensions/pgvector.sh        (ends with "N passed, M failed")
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# PostgreSQL 18's two changes that pgvector 0.8.0 (Debian 13's) predates:
# vacuum_delay_point() takes a flag, TupleDesc has no attrs array (later
# pgvector releases make the same two changes); nothing else is touched
pgvector_patch() {
	sed -i 's/vacuum_delay_point()/vacuum_delay_point(false)/' src/hnswvacuum.c src/ivfvacuum.c
	sed -i 's/buildstate->tupdesc->attrs\[0\]\.atttypid/TupleDescAttr(buildstate->tupdesc, 0)->atttypid/' src/ivfbuild.c
}

ext_init
echo "== pgvector: pg_dio's scans off, then forced on"
# unstable's (0.8.x for PostgreSQL 18); where the archive does not serve its
# files, Debian 13's 0.8.0 with pgvector_patch
if ! dsc=$(ext_debian_source pgvector) && ! dsc=$(ext_debian_source pgvector trixie); then
	ext_skip "pgvector: Debian's source package pgvector could not be fetched (above)"
	ext_summary
	exit
fi
ext_pgxs_suite pgvector "$dsc"
ext_summary
