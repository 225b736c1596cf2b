#!/usr/bin/env bash
# Throwaway PostgreSQL 18 clusters with pg_dio preloaded.
#
#   test/cluster.sh start NAME [setting=value ...]   initdb (if needed) + start
#   test/cluster.sh stop NAME                        stop (and keep the files)
#   test/cluster.sh destroy NAME                     stop and remove
#   test/cluster.sh env NAME                         print export lines
#   test/cluster.sh standby NAME PRIMARY [setting=value ...]
#                 a streaming hot standby of the running cluster PRIMARY
#                 (pg_basebackup -R, its own port and socket) + start
#
# Clusters live in .tmp/clusters/NAME (git-ignored), listen on 127.0.0.1 on a
# free port and on a private unix-socket directory.  When run as root, the
# server runs as the unprivileged account $PG_DIO_OS_USER (PostgreSQL refuses
# root).  Callers that start a cluster install a trap that stops it.
#
# PG_DIO_SERVER_OPTIONS: command-line options of the server for this start
# (pg_ctl -o, e.g. "-c huge_pages=off"), which outrank the configuration
# files and are gone at the next start.
#
# PG_DIO_CLUSTER_PLAIN=1 (when the cluster is made): a cluster as a user
# would have one -- initdb's and PostgreSQL's defaults, without data
# checksums, and shared_preload_libraries = 'pg_dio' -- instead of the test
# settings (fsync off, 40 connections, 16 worker processes, data checksums).
set -euo pipefail
. "$(dirname "$0")/scripts/common.sh"

cmd=${1:-}; name=${2:-}
[ -n "$cmd" ] && [ -n "$name" ] || die "usage: $0 start|stop|destroy|env NAME [setting=value ...] | standby NAME PRIMARY [setting=value ...]"
shift 2
primary=
if [ "$cmd" = standby ]; then
	primary=${1:-}
	[ -n "$primary" ] || die "usage: $0 standby NAME PRIMARY [setting=value ...]"
	shift
fi

PGC=$(find_pg_config 2>/dev/null) || die "PostgreSQL 18 not found: run test/setup.sh first"
BINDIR=$("$PGC" --bindir)
WORK=$(pg_dio_workdir)
DIR="$WORK/.tmp/clusters/$name"
DATA="$DIR/data"
SOCK="$DIR/sock"

# PG_DIO_SERVER_ENV: extra environment for the server (e.g. LD_PRELOAD of a
# sanitizer runtime, see test/sanitize.sh)
as_server() {
	if is_root; then
		runuser -u "$PG_DIO_OS_USER" -- env ${PG_DIO_SERVER_ENV:-} "$@"
	else
		env ${PG_DIO_SERVER_ENV:-} "$@"
	fi
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# port_of DATADIR: the port a cluster's configuration gives it
port_of() {
	sed -n 's/^port = \([0-9]*\).*/\1/p' "$1/postgresql.auto.conf" "$1/pg_dio.conf" 2>/dev/null | tail -n 1
}

print_env() {
	echo "export PATH=$BINDIR:\$PATH PGHOST=$SOCK PGPORT=$(port_of "$DATA") PGUSER=$PG_DIO_DB_USER PGDATABASE=postgres"
}

# an empty cluster directory, the server's own, with a private socket directory
new_cluster_dir() {
	rm -rf "$DIR"
	mkdir -p "$DIR" "$SOCK"
	is_root && chown -R "$PG_DIO_OS_USER" "$DIR"
	chmod 700 "$SOCK"
}

# a data directory serves the major version that made it
if [ -f "$DATA/PG_VERSION" ] && { [ "$cmd" = start ] || [ "$cmd" = env ]; } &&
	[ "$(cat "$DATA/PG_VERSION")" != "$(pg_major "$PGC")" ]; then
	die "cluster $name was made by PostgreSQL $(cat "$DATA/PG_VERSION"), not $(pg_major "$PGC") ($PGC): test/cluster.sh destroy $name, or use another name"
fi

case "$cmd" in
start)
	if [ ! -f "$DATA/PG_VERSION" ]; then
		new_cluster_dir
		plain=${PG_DIO_CLUSTER_PLAIN:-0}
		as_server "$BINDIR/initdb" -D "$DATA" -U "$PG_DIO_DB_USER" --auth=trust \
			--encoding=UTF8 --locale=C --no-instructions \
			$([ "$plain" = 1 ] && echo --no-data-checksums) >"$DIR/initdb.log" 2>&1 ||
			{ cat "$DIR/initdb.log" >&2; die "initdb failed"; }
		{
			echo "# pg_dio throwaway cluster"
			echo "include_if_exists = 'pg_dio.conf'"
		} | as_server tee -a "$DATA/postgresql.conf" >/dev/null
		{
			echo "shared_preload_libraries = 'pg_dio'"
			echo "port = $(free_port)"
			echo "listen_addresses = '127.0.0.1'"
			echo "unix_socket_directories = '$SOCK'"
			if [ "$plain" != 1 ]; then
				echo "fsync = off"
				echo "logging_collector = off"
				echo "max_connections = 40"
				echo "max_worker_processes = 16"
				# PG_DIO_IO_METHOD: the io_method of every test cluster (make
				# test IO_METHOD=io_uring); a setting given here still wins
				[ -n "${PG_DIO_IO_METHOD:-}" ] && echo "io_method = $PG_DIO_IO_METHOD"
			fi
			for kv in "$@"; do echo "$kv"; done
		} | as_server tee "$DATA/pg_dio.conf" >/dev/null
		[ "$plain" = 1 ] && touch "$DIR/plain"
	fi
	if ! as_server "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
		# pg_dio registers each backend's I/O buffers with its ring: locked
		# memory, 8 MB for all of a user's processes by default (a server
		# would set LimitMEMLOCK); raise it for the throwaway cluster if we
		# can (not for a plain one: as a user's server would be started)
		[ -f "$DIR/plain" ] || ulimit -l unlimited 2>/dev/null || true
		as_server "$BINDIR/pg_ctl" -D "$DATA" -l "$DIR/server.log" \
			${PG_DIO_SERVER_OPTIONS:+-o "$PG_DIO_SERVER_OPTIONS"} -w -t 60 start >/dev/null ||
			{ tail -n 30 "$DIR/server.log" >&2; die "cluster $name did not start"; }
	fi
	print_env
	;;
standby)
	# A new copy each time: a standby made from an older base backup may
	# need WAL the primary no longer has.
	PDIR="$WORK/.tmp/clusters/$primary"
	[ -f "$PDIR/data/postmaster.pid" ] || die "cluster $primary is not running"
	"$0" stop "$name"
	new_cluster_dir
	as_server "$BINDIR/pg_basebackup" -h "$PDIR/sock" -p "$(port_of "$PDIR/data")" -U "$PG_DIO_DB_USER" \
		-D "$DATA" -R -X stream -c fast >"$DIR/basebackup.log" 2>&1 ||
		{ cat "$DIR/basebackup.log" >&2; die "pg_basebackup of $primary failed"; }
	{
		echo "# the standby's own (after the primary's, which they override)"
		echo "port = $(free_port)"
		echo "unix_socket_directories = '$SOCK'"
		echo "hot_standby = on"
		for kv in "$@"; do echo "$kv"; done
	} | as_server tee -a "$DATA/pg_dio.conf" >/dev/null
	[ -f "$PDIR/plain" ] && touch "$DIR/plain"
	exec "$0" start "$name"
	;;
stop)
	if [ -f "$DATA/postmaster.pid" ]; then
		as_server "$BINDIR/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null 2>&1 ||
			as_server "$BINDIR/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	;;
destroy)
	"$0" stop "$name"
	rm -rf "$DIR"
	;;
env)
	[ -f "$DATA/PG_VERSION" ] || die "no cluster $name"
	print_env
	;;
*)
	die "unknown command $cmd"
	;;
esac
