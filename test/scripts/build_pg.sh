#!/usr/bin/env bash
# Build PostgreSQL from a source tarball (with liburing) into a cache outside
# the checkout, and print its pg_config.  Idempotent: a build whose key (the
# tarball's sha256 and the configure flags) is cached is reused.
#
#   test/scripts/build_pg.sh 18|19
#
# Sources: ../shared/pg-src/ beside the checkout (PG_DIO_PG_SRC overrides);
# for 18 without it, the current 18.x of Debian's postgresql-18 source
# package (unstable).  The cache: PG_DIO_PG_CACHE, default /var/cache/pg_dio as root, else
# ~/.cache/pg_dio.  The build tree is kept: PostgreSQL's own regression and
# isolation suites run from it (test/core_regress.sh).
set -euo pipefail
. "$(dirname "$0")/common.sh"

ver=${1:-}
SRC=${PG_DIO_PG_SRC:-$(cd "$PG_DIO_ROOT/.." && pwd)/shared/pg-src}
if is_root; then
	CACHE=${PG_DIO_PG_CACHE:-/var/cache/pg_dio}
else
	CACHE=${PG_DIO_PG_CACHE:-$HOME/.cache/pg_dio}
fi
mkdir -p "$CACHE"

# debian_source: the current 18.x release tarball from Debian's postgresql-18
# source package (unstable), fetched with an apt configuration of its own
debian_source() {
	local d="$CACHE/debian-src"
	mkdir -p "$d/lists/partial"
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: unstable\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		>"$d/unstable.sources"
	local apt=(apt-get -q -o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$d"
		-o Dir::State::Lists="$d/lists")
	"${apt[@]}" update >/dev/null 2>&1 &&
		(cd "$d" && "${apt[@]}" source --download-only postgresql-18 >/dev/null 2>&1) || return 1
	ls -t "$d"/postgresql-18_*.orig.tar.bz2 2>/dev/null | head -n 1
}

case "$ver" in
18)
	tarball="$SRC/postgresql-18.6.tar.bz2"
	if [ ! -f "$tarball" ]; then
		note "$tarball is absent; fetching Debian's postgresql-18 source package"
		tarball=$(debian_source) && [ -f "$tarball" ] ||
			die "no PostgreSQL 18 source: neither $SRC/postgresql-18.6.tar.bz2 nor Debian's postgresql-18 source package"
	fi
	;;
19)
	tarball="$SRC/postgresql-19-branchpoint.tar.xz"
	[ -f "$tarball" ] || die "no PostgreSQL 19 source: $tarball is absent (no 19 package or tarball is reachable here)"
	;;
*) die "usage: $0 18|19" ;;
esac
FLAGS="--with-liburing --without-icu --enable-nls --enable-debug"
key=$( { sha256sum "$tarball" | cut -c1-64; echo "$FLAGS"; } | sha256sum | cut -c1-16)
DIR="$CACHE/pg$ver-$key"
PGC="$DIR/install/bin/pg_config"

if [ -x "$PGC" ] && [ -f "$DIR/.complete" ]; then
	echo "$PGC"
	exit 0
fi
# one build of a key at a time; a second caller waits and then finds it
exec 9>"$CACHE/.pg$ver-$key.lock"
flock 9
if [ -x "$PGC" ] && [ -f "$DIR/.complete" ]; then
	echo "$PGC"
	exit 0
fi

pg_dio_apt_install liburing-dev bison flex gettext zlib1g-dev libreadline-dev pkg-config build-essential

note "building PostgreSQL $ver from $(basename "$tarball") into $DIR (about 3 minutes)"
rm -rf "$DIR"
mkdir -p "$DIR"
tar -C "$DIR" -xf "$tarball"
srcdir=$(find "$DIR" -mindepth 1 -maxdepth 1 -type d | head -n 1)
mv "$srcdir" "$DIR/src"
log="$DIR/build.log"
(
	# run from make (make test PG=..., the $(shell) that finds PG_CONFIG), the
	# inherited MAKELEVEL > 0 would make PostgreSQL's build skip its
	# generated headers (submake-generated-headers runs at level 0 only),
	# and MAKEFLAGS would pass the caller's flags and jobserver on
	unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
	cd "$DIR/src"
	# shellcheck disable=SC2086
	./configure --prefix="$DIR/install" $FLAGS
	make -j"$(nproc)" world-bin
	make install-world-bin
	# the regression suite's C functions and the isolation tester
	make -C src/test/regress all
	make -C src/test/isolation all
) >"$log" 2>&1 || { tail -n 40 "$log" >&2; die "PostgreSQL $ver build failed (log: $log)"; }
# the test account runs the server from here and reads the suites' data
chmod -R a+rX "$DIR"
touch "$DIR/.complete"
echo "$PGC"
