# shellcheck shell=bash
# Shared helpers of the extension suites (test/extensions/*.sh): fetch a
# Debian source package, build it with PGXS into a cache, run a pg_regress
# suite with pg_dio's scans off and then forced on against a throwaway
# cluster, and compare the two runs (test/core_regress/normalize.py, with
# test/extensions/allowed.txt).  A suite script sources it,
# calls ext_init first, its steps, and ext_summary last.
#
# Each comparison counts as one test: EXT_PASSED, EXT_FAILED.

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"

EXT_DIR=$PG_DIO_ROOT/test/extensions
EXT_ALLOWED=$EXT_DIR/allowed.txt
EXT_NORMALIZE=$PG_DIO_ROOT/test/core_regress/normalize.py
EXT_OFF="-c pg_dio.enable_direct_scan=off -c pg_dio.enable_index_prefetch=off -c pg_dio.enable_probe_prefetch=off"
EXT_ON="-c pg_dio.enable_direct_scan=on -c pg_dio.direct_scan_threshold=0 -c pg_dio.enable_index_prefetch=on -c pg_dio.index_prefetch_min_rows=0 -c pg_dio.enable_probe_prefetch=on -c pg_dio.probe_shared_memory=16MB"
EXT_PASSED=0
EXT_FAILED=0
EXT_CLUSTERS=()

# ext_pass MSG / ext_fail MSG: count one comparison and print "ok:" / "not ok:"
ext_pass() { EXT_PASSED=$((EXT_PASSED + 1)); echo "ok: $*"; }
ext_fail() { EXT_FAILED=$((EXT_FAILED + 1)); echo "not ok: $*"; }
# ext_skip MSG: a suite that cannot run here (its source is not to be had), said as "skipped: MSG"
ext_skip() { echo "skipped: $*"; }

# ext_cache_root: the cache of build_pg.sh (PG_DIO_PG_CACHE, /var/cache/pg_dio as root, else ~/.cache/pg_dio)
ext_cache_root() {
	local c
	if is_root; then c=${PG_DIO_PG_CACHE:-/var/cache/pg_dio}; else c=${PG_DIO_PG_CACHE:-$HOME/.cache/pg_dio}; fi
	mkdir -p "$c" && echo "$c"
}

# ext_server_account: as root, create the unprivileged account $PG_DIO_OS_USER that runs the clusters (as test/setup.sh does)
ext_server_account() {
	if is_root && ! id "$PG_DIO_OS_USER" >/dev/null 2>&1; then
		note "creating the unprivileged account $PG_DIO_OS_USER that runs test clusters"
		useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_DIO_OS_USER" || die "useradd failed"
	fi
}

# ext_init [build-only]: set PGC, BINDIR, PG_REGRESS, WORK, IO_METHOD; build PostgreSQL 18 (cached) unless PG_CONFIG is set, install pg_dio into it (not with build-only: an extension's build needs only PostgreSQL, and pg_dio's objects are built in the checkout, which another build may be using), make the server account
ext_init() {
	if [ -z "${PG_CONFIG:-}" ]; then
		PG_CONFIG=$("$PG_DIO_ROOT/test/scripts/build_pg.sh" "${PG:-18}") || die "PostgreSQL did not build"
	fi
	export PG_CONFIG
	PGC=$PG_CONFIG
	BINDIR=$("$PGC" --bindir)
	PG_REGRESS=$(dirname "$("$PGC" --pgxs)")/../test/regress/pg_regress
	[ -x "$PG_REGRESS" ] || die "no pg_regress at $PG_REGRESS"
	IO_METHOD=${PG_DIO_IO_METHOD:-worker}
	ext_server_account
	WORK=$(pg_dio_workdir)
	mkdir -p "$WORK/.tmp"
	[ "$WORK" = "$PG_DIO_ROOT" ] || chmod 755 "$WORK"
	[ "${1:-}" = build-only ] ||
		make -s -C "$PG_DIO_ROOT" PG_CONFIG="$PGC" install >/dev/null || die "pg_dio did not build against $PGC"
	trap ext_stop_clusters EXIT
	trap 'exit 130' INT TERM
}

# ext_debian_source PKG [SUITE]: print the .dsc of Debian's source package PKG: the newest PKG_*.dsc in PG_DIO_EXT_SRC (default ../shared/ext-src beside the checkout), else SUITE's (unstable by default), fetched with an apt configuration of our own (as build_pg.sh fetches postgresql-18)
ext_debian_source() {
	local pkg=$1 suite=${2:-unstable} local_src d apt v dsc
	local_src=${PG_DIO_EXT_SRC:-$(cd "$PG_DIO_ROOT/.." && pwd)/shared/ext-src}
	dsc=$(ls -t "$local_src/${pkg}"_*.dsc 2>/dev/null | head -n 1)
	if [ -n "$dsc" ]; then
		echo "$dsc"
		return 0
	fi
	d="$(ext_cache_root)/ext-debian-src/$suite"
	mkdir -p "$d/lists/partial" "$d/cache" "$d/$pkg"
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$suite" >"$d/$suite.sources"
	apt=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$d" -o Dir::State::Lists="$d/lists"
		-o Dir::Cache="$d/cache")
	# the lists at most once an hour; offline, the lists at hand
	if [ -z "$(find "$d/lists" -maxdepth 1 -name '*Sources*' -mmin -60 2>/dev/null)" ]; then
		apt-get -q "${apt[@]}" update >"$d/update.log" 2>&1 ||
			note "apt-get update of Debian's source lists failed (see $d/update.log); using the lists at hand"
	fi
	v=$(apt-cache "${apt[@]}" showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	[ -n "$v" ] || { note "Debian $suite lists no source package $pkg"; return 1; }
	dsc="$d/$pkg/${pkg}_${v#*:}.dsc"
	# apt-get source skips the files it has with the right checksums
	if [ -f "$dsc.ok" ] ||
		{ (cd "$d/$pkg" && apt-get -q "${apt[@]}" source --download-only "$pkg=$v") >"$d/$pkg/fetch.log" 2>&1 &&
			[ -f "$dsc" ] && touch "$dsc.ok"; }; then
		echo "$dsc"
		return 0
	fi
	note "$pkg $v: not fetched: $(grep -m1 -A1 -E '^(Err|E):' "$d/$pkg/fetch.log" | tr -s ' \n' ' ')(log: $d/$pkg/fetch.log)"
	return 1
}

# ext_debian_binary PKG [SUITE...]: unpack Debian's binary package PKG (amd64) of the first SUITE that lists it (unstable, then experimental, by default), fetched with an apt configuration of our own, and print the unpacked tree
ext_debian_binary() {
	local pkg=$1 d apt v= deb suite
	shift
	d="$(ext_cache_root)/ext-debian-bin"
	mkdir -p "$d/lists/partial" "$d/cache" "$d/parts" "$d/pkg"
	printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: unstable experimental\nComponents: main\nArchitectures: amd64\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		>"$d/parts/debian.sources"
	apt=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$d/parts" -o Dir::State::Lists="$d/lists"
		-o Dir::Cache="$d/cache")
	# the lists at most once an hour; offline, the lists at hand
	if [ -z "$(find "$d/lists" -maxdepth 1 -name '*Packages*' -mmin -60 2>/dev/null)" ]; then
		apt-get -q "${apt[@]}" update >"$d/update.log" 2>&1 ||
			note "apt-get update of Debian's package lists failed (see $d/update.log); using the lists at hand"
	fi
	local suites=("$@")
	[ ${#suites[@]} -gt 0 ] || suites=(unstable experimental)
	for suite in "${suites[@]}"; do
		v=$(apt-cache "${apt[@]}" madison "$pkg" 2>/dev/null |
			awk -F'|' -v s=" $suite/main " 'index($3, s) { gsub(/ /, "", $2); print $2; exit }')
		[ -n "$v" ] && break
	done
	[ -n "$v" ] || { note "Debian lists no package $pkg (${suites[*]})"; return 1; }
	deb="$d/pkg/${pkg}_${v#*:}_amd64.deb"
	if [ ! -f "$deb.ok" ]; then
		(cd "$d/pkg" && apt-get -q "${apt[@]}" download "$pkg=$v") >"$d/pkg/$pkg.log" 2>&1 && [ -f "$deb" ] ||
			{ note "$pkg $v: not fetched: $(grep -m1 -E '^(Err|E):' "$d/pkg/$pkg.log") (log: $d/pkg/$pkg.log)"; return 1; }
		rm -rf "$deb.d"
		dpkg-deb -x "$deb" "$deb.d" || { note "could not unpack $deb"; return 1; }
		touch "$deb.ok"
	fi
	echo "$deb.d"
}

# ext_install_binary TREE: install the libraries and extension files of an unpacked Debian package for the server's major version into PostgreSQL
ext_install_binary() {
	local tree=$1 major f n=0
	major=$(pg_major "$PGC")
	for f in "$tree/usr/lib/postgresql/$major/lib"/*.so; do
		[ -f "$f" ] && install -m 755 "$f" "$("$PGC" --pkglibdir)/" && n=$((n + 1))
	done
	for f in "$tree/usr/share/postgresql/$major/extension"/*; do
		[ -f "$f" ] && install -m 644 "$f" "$("$PGC" --sharedir)/extension/"
	done
	[ "$n" -gt 0 ] || { note "$tree holds no library for PostgreSQL $major"; return 1; }
}

# ext_pg_key: what identifies the PostgreSQL build (pg_config's path, version and configure flags)
ext_pg_key() {
	{ echo "$PGC"; "$PGC" --version; "$PGC" --configure; } | sha256sum | cut -c1-16
}

# ext_cache_dir NAME [KEY...]: the cache directory of NAME's build for this PostgreSQL build and KEYs (e.g. a source's checksum)
ext_cache_dir() {
	local name=$1
	shift
	echo "$(ext_cache_root)/ext/$name-$({ ext_pg_key; printf '%s\n' "$@"; } | sha256sum | cut -c1-16)"
}

# ext_build NAME DSC [MAKE_ARG...]: unpack a Debian source package into its cache directory, run the function NAME_patch in the tree if the suite defines one, build it with PGXS (once) and install it into PostgreSQL (each time; a no-op when installed); print the source tree
ext_build() {
	local name=$1 dsc=$2 dir src log patch=
	shift 2
	declare -F "${name}_patch" >/dev/null && patch=${name}_patch
	dir=$(ext_cache_dir "$name" "$(sha256sum "$dsc" | cut -c1-64)" "$@" "${patch:+$(declare -f "$patch")}")
	src="$dir/src"
	log="$dir/build.log"
	if [ ! -f "$dir/.complete" ]; then
		pg_dio_apt_install dpkg-dev build-essential
		note "building $name from $(basename "$dsc") into $dir"
		rm -rf "$dir"
		mkdir -p "$dir"
		dpkg-source -x "$dsc" "$src" >"$log" 2>&1 || { cat "$log" >&2; die "could not unpack $dsc"; }
		[ -z "$patch" ] || (cd "$src" && "$patch") >>"$log" 2>&1 || { cat "$log" >&2; die "$patch failed"; }
		(
			unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
			make -C "$src" -j2 USE_PGXS=1 PG_CONFIG="$PGC" "$@"
		) >>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "$name did not build (log: $log)"; }
		# the server account reads the suite's files
		chmod -R a+rX "$dir"
		touch "$dir/.complete"
	fi
	(
		unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
		make -C "$src" USE_PGXS=1 PG_CONFIG="$PGC" "$@" install
	) >"$dir/install.log" 2>&1 || { tail -n 30 "$dir/install.log" >&2; die "$name did not install (log: $dir/install.log)"; }
	echo "$src"
}

# ext_make_var DIR VAR [MAKE_ARG...]: the value of make variable VAR of DIR's Makefile, read with PGXS (USE_PGXS= reads a contrib module in its build tree)
ext_make_var() {
	local dir=$1 var=$2
	shift 2
	(
		unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
		cd "$dir" && printf 'ext-print-var:\n\t@echo $(%s)\n' "$var" |
			make -s --no-print-directory -f Makefile -f - USE_PGXS=1 PG_CONFIG="$PGC" "$@" ext-print-var
	)
}

# ext_temp_config DIR OPTS...: the settings of the --temp-config files among pg_regress options OPTS (relative to DIR), one a line, pg_dio added to shared_preload_libraries; installcheck ignores them, so the cluster must have them
ext_temp_config() {
	local dir=$1 o f next=0
	shift
	for o in "$@"; do
		f=
		if [ "$next" = 1 ]; then f=$o; next=0
		elif [ "$o" = --temp-config ]; then next=1
		else case "$o" in --temp-config=*) f=${o#--temp-config=} ;; esac
		fi
		[ -n "$f" ] || continue
		case "$f" in /*) ;; *) f="$dir/$f" ;; esac
		[ -f "$f" ] || die "no temp config $f"
		# pg_dio stays preloaded beside what the file preloads
		grep -vE '^\s*(#|$)' "$f" |
			sed -E "s/^\s*shared_preload_libraries\s*=\s*'([^']*)'/shared_preload_libraries = 'pg_dio,\1'/"
	done
}

# ext_cluster_start NAME SETTING...: a new throwaway cluster (test/cluster.sh, pg_dio preloaded, SETTINGs added), stopped on exit; sets PGHOST, PGPORT, PGUSER.
# compute_query_id = regress (a suite's SETTINGs may say otherwise): pg_dio
# computes query IDs, which EXPLAIN (VERBOSE) would print and which differ
# from run to run (core_regress.sh says the same)
ext_cluster_start() {
	local name=$1
	shift
	"$PG_DIO_ROOT/test/cluster.sh" destroy "$name" >/dev/null 2>&1
	EXT_CLUSTERS+=("$name")
	eval "$("$PG_DIO_ROOT/test/cluster.sh" start "$name" "io_method = $IO_METHOD" \
		"compute_query_id = regress" "$@")" ||
		die "could not start cluster $name"
	export PGHOST PGPORT PGUSER
}

# ext_cluster_log NAME: the server log of cluster NAME
ext_cluster_log() { echo "$WORK/.tmp/clusters/$1/server.log"; }

# ext_stop_clusters: stop every cluster ext_cluster_start started (the EXIT trap)
ext_stop_clusters() {
	local c
	for c in "${EXT_CLUSTERS[@]}"; do "$PG_DIO_ROOT/test/cluster.sh" stop "$c" >/dev/null 2>&1; done
}

# ext_check_crash NAME: fail if cluster NAME's server log shows a crash
ext_check_crash() {
	if grep -E "terminated by signal|PANIC" "$(ext_cluster_log "$1")"; then
		ext_fail "$1: the server log shows a crash"
	fi
}

# ext_as_server CMD...: run CMD as the server's account (as root) with the cluster's connection settings (where ext_cluster_start set them: a suite with a temporary instance of its own has none) and PGOPTIONS
ext_as_server() {
	local vars=(PATH="$BINDIR:$PATH" PGOPTIONS="${PGOPTIONS:-}")
	[ -z "${PGHOST:-}" ] || vars+=(PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER")
	if is_root; then
		runuser -u "$PG_DIO_OS_USER" -- env "${vars[@]}" "$@"
	else
		env PATH="$BINDIR:$PATH" "$@"
	fi
}

# ext_outdir NAME: an empty output directory for NAME's runs, writable by the server's account
ext_outdir() {
	local d="$WORK/.tmp/ext-regress/$1"
	rm -rf "$d"
	mkdir -p "$d"
	is_root && chown "$PG_DIO_OS_USER" "$d"
	echo "$d"
}

# ext_regress_off_on NAME DIR [OPTION...] TEST...: run pg_regress (options as in DIR's Makefile's REGRESS_OPTS, their paths taken from DIR; --inputdir DIR unless an option sets it; in the output directory, where a suite's relative paths such as results/ lead) with pg_dio's scans off, then forced on, against the running cluster, and compare the results: one test
ext_regress_off_on() {
	local name=$1 dir=$2 out mode opts=() tests=() a n arg=
	shift 2
	for a in "$@"; do
		if [ -n "$arg" ]; then
			a="$arg=$a"
			arg=
		fi
		case "$a" in
		--inputdir=[!/]* | --expecteddir=[!/]* | --schedule=[!/]* | --temp-config=[!/]* | --dlpath=[!/]*)
			opts+=("${a%%=*}=$dir/${a#*=}") ;;
		--*=*) opts+=("$a") ;;
		# pg_regress's options that take a value, written "--option value"
		--bindir | --dbname | --dlpath | --encoding | --expecteddir | --host | --inputdir | --launcher | \
			--load-extension | --max-connections | --max-concurrent-tests | --outputdir | --port | \
			--schedule | --temp-instance | --temp-config | --user) arg=$a ;;
		--*) opts+=("$a") ;;
		*) tests+=("$a") ;;
		esac
	done
	out=$(ext_outdir "$name")
	for mode in off on; do
		mkdir -p "$out/$mode"
		is_root && chown "$PG_DIO_OS_USER" "$out/$mode"
		if [ $mode = off ]; then PGOPTIONS=$EXT_OFF; else PGOPTIONS=$EXT_ON; fi
		(cd "$out/$mode" && PGOPTIONS=$PGOPTIONS ext_as_server "$PG_REGRESS" --inputdir="$dir" --bindir="$BINDIR" \
			--dbname=contrib_regression "${opts[@]}" --outputdir="$out/$mode" "${tests[@]}") \
			>"$out/$mode/log" 2>&1
		n=$(grep -cE '^(not )?ok ' "$out/$mode/log")
		echo "$name $mode: $(grep -cE '^ok ' "$out/$mode/log") of $n tests match their expected output"
		[ "$n" = "${#tests[@]}" ] || { sed -n '1,30p' "$out/$mode/log"; ext_fail "$name $mode: pg_regress ran $n of ${#tests[@]} tests"; return; }
	done
	ext_compare "$name" "$out/off/results" "$out/on/results" "$out/compare.txt"
}

# ext_compare NAME OFF_RESULTS ON_RESULTS REPORT: compare two runs' result files (normalize.py, allowed.txt): one test
ext_compare() {
	if python3 "$EXT_NORMALIZE" --allowed "$EXT_ALLOWED" --suite "$1" --io-method "$IO_METHOD" \
		"$2" "$3" >"$4"; then
		ext_pass "$1: forced on matches forced off ($(tail -n 1 "$4"))"
		grep '^=== ' "$4"
	else
		cat "$4"
		ext_fail "$1: forced on differs from forced off"
	fi
}

# ext_pgxs_suite NAME DSC [SETTING...]: build Debian source package DSC (ext_build), then its Makefile's REGRESS with its REGRESS_OPTS and the settings of its --temp-config files plus SETTINGs on a cluster of its own, off and on (ext_regress_off_on)
ext_pgxs_suite() {
	local name=$1 dsc=$2 src opts tests conf
	shift 2
	src=$(ext_build "$name" "$dsc") || { ext_fail "$name: did not build"; return; }
	read -ra opts <<<"$(ext_make_var "$src" REGRESS_OPTS)"
	read -ra tests <<<"$(ext_make_var "$src" REGRESS)"
	mapfile -t conf < <(ext_temp_config "$src" "${opts[@]}")
	echo "$name $(basename "$dsc" .dsc | cut -d_ -f2): ${#tests[@]} tests"
	ext_cluster_start "ext-$name" "$@" "${conf[@]}"
	ext_regress_off_on "$name" "$src" "${opts[@]}" "${tests[@]}"
	ext_check_crash "ext-$name"
}

# ext_summary: print "N passed, M failed" and return non-zero on a failure (a suite script's last line)
ext_summary() {
	echo "$EXT_PASSED passed, $EXT_FAILED failed"
	[ "$EXT_FAILED" = 0 ]
}
