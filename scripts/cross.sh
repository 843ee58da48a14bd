#!/usr/bin/env bash
# scripts/cross.sh — the aarch64 build: build/src (the patched tree, the
# source of the cassert build) cross-compiled with Debian's
# gcc-aarch64-linux-gnu, run on this x86 host under qemu's user-mode
# emulation (qemu-user-static through binfmt_misc).
#
#   cross.sh build    install the cross compiler and qemu if missing (root),
#                     configure, build and install build/install/aarch64 with
#                     contrib, injection_points and the flexlock extension
#                     (make aarch64); fails if the compiler warned about a
#                     file of the series or of contrib_flexlock
#   cross.sh binfmt   make aarch64 binaries runnable: mount binfmt_misc and
#                     register qemu-aarch64-static for aarch64 ELF (root), then
#                     check that the install runs, also as the test user
#
# Configured like cassert (assertions, debug info, injection points) but
# without what the cross environment lacks: only libc6-dev-arm64-cross comes
# with the compiler, so no ICU, readline or zlib (PG_CONFIGURE_EXTRA is not
# used here).  The time zone files are compiled at install time by the
# host's zic (ZIC=), not by the aarch64 one the build makes.  Objects in
# build/obj/aarch64, install in build/install/aarch64, logs
# build/logs/*-aarch64*.log.  Running an aarch64 binary needs the aarch64
# libraries: QEMU_LD_PREFIX=/usr/aarch64-linux-gnu (set here and by
# check-aarch64.sh, inherited by every process initdb, pg_ctl and pg_regress
# start).

. "$(dirname "$0")/lib.sh"

NAME=aarch64
TRIPLET=aarch64-linux-gnu
SYSROOT=/usr/$TRIPLET
OBJ=$BUILD/obj/$NAME
INST=$BUILD/install/$NAME
DEPS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static"
# --build too: configure then knows it cross-compiles and runs no test
# program, whether or not binfmt would run it (the same result either way).
# Its linker checks are test programs too, and in a cross build it assumes
# "no": give the answers of the native build (same GNU ld).  Without
# --export-dynamic the postgres executable exports no symbol, and no module
# (dict_snowball in initdb already) can be loaded.
FLAGS=(--build="$(gcc -dumpmachine)" --host="$TRIPLET" --enable-cassert --enable-debug --enable-injection-points --enable-depend
	--without-icu --without-readline --without-zlib --prefix="$INST"
	pgac_cv_prog_cc_LDFLAGS_EX_BE__Wl___export_dynamic=yes pgac_cv_prog_cc_LDFLAGS__Wl___as_needed=yes)
CFLAGS_AARCH64=${CASSERT_CFLAGS:--O2}
BINFMT=/proc/sys/fs/binfmt_misc

export QEMU_LD_PREFIX=$SYSROOT
ZIC=$(command -v zic || echo /usr/sbin/zic)
export ZIC

# The fingerprint of build/src, edits included (as build.sh's source_id)
source_id() {
	{
		git -C "$TREE" rev-parse HEAD
		git -C "$TREE" diff HEAD
	} | sha256sum | awk '{print $1}'
}

# check_warnings LOG...: fail on a compiler warning about a file the series
# changes or about contrib_flexlock; name the others (PostgreSQL's own code).
check_warnings() {
	local ours=() other=() line path f series
	series=$(git -C "$TREE" diff --name-only vanilla)
	while IFS= read -r line; do
		path=${line%%:*}
		# paths are absolute, or relative to an object directory
		while :; do
			case $path in ./*) path=${path#./} ;; ../*) path=${path#../} ;; *) break ;; esac
		done
		f=
		case $path in
			*contrib_flexlock/*) f=1 ;;
			*) while IFS= read -r s; do
				[ -n "$s" ] || continue
				case /$path in */"$s") f=1; break ;; esac
			done <<<"$series" ;;
		esac
		if [ -n "$f" ]; then ours+=("$line"); else other+=("$line"); fi
	done < <(grep -h 'warning:' "$@" | sort -u)
	if [ ${#other[@]} -gt 0 ]; then
		warn "$NAME: ${#other[@]} compiler warning(s) in PostgreSQL's own code, not the series: ${other[0]}$([ ${#other[@]} -gt 1 ] && echo ' ...') (logs: $(rel "$1"))"
	fi
	if [ ${#ours[@]} -gt 0 ]; then
		printf '%s\n' "${ours[@]}" >"$LOGS/warnings-$NAME.log"
		die "$NAME: ${#ours[@]} compiler warning(s) in the series or the extension, first: ${ours[0]} (all: $(rel "$LOGS/warnings-$NAME.log"))"
	fi
	rm -f "$LOGS/warnings-$NAME.log"
}

# The flexlock extension with PGXS of the cross install.  pg_config is an
# aarch64 binary: PGXS runs it through qemu explicitly (no binfmt needed).
install_extension() {
	local dir=$BUILD/ext/$NAME ext=$FLEXLOCK_TOP/contrib_flexlock pgc=$OBJ/flexlock-pg_config
	printf '#!/bin/sh\nexec qemu-aarch64-static -L %s %s "$@"\n' "$SYSROOT" "$INST/bin/pg_config" >"$pgc"
	chmod +x "$pgc"
	"$pgc" --version >/dev/null 2>&1 ||
		die "$NAME: the aarch64 pg_config does not run under qemu-aarch64-static ($pgc --version)"
	rm -rf "$dir" && mkdir -p "$dir"
	run_logged "$LOGS/extension-$NAME.log" "build of the flexlock extension for $NAME" "" \
		make -C "$dir" -f "$ext/Makefile" VPATH="$ext" PG_CONFIG="$pgc" all install
}

build() {
	FLEXLOCK_DEPS_EXTRA="${FLEXLOCK_DEPS_EXTRA:-} $DEPS" "$FLEXLOCK_TOP/scripts/deps.sh"
	command -v "$TRIPLET-gcc" >/dev/null 2>&1 || die "no $TRIPLET-gcc (install gcc-aarch64-linux-gnu)"
	"$FLEXLOCK_TOP/scripts/get-source.sh"
	"$FLEXLOCK_TOP/scripts/tree.sh" ensure

	local stamp=$INST/.flexlock-build id cc t0=$SECONDS
	id="$(source_id)|${FLAGS[*]}|$CFLAGS_AARCH64"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$id" ] && [ -f "$INST/bin/postgres" ]; then
		# the extension is ours: always bring it up to date (make is quick)
		install_extension
		check_warnings "$LOGS/extension-$NAME.log"
		say "$NAME: up to date ($(rel "$INST"))"
		return 0
	fi

	# ccache_env in this shell too: its exports (CCACHE_DIR under the cache,
	# CCACHE_BASEDIR) are lost in the command substitution alone
	CC_BASE=$TRIPLET-gcc ccache_env >/dev/null
	cc=$(CC_BASE=$TRIPLET-gcc ccache_env)
	mkdir -p "$OBJ"
	local flagfile=$OBJ/.flexlock-configure
	if [ ! -f "$OBJ/config.status" ] || [ "$(cat "$flagfile" 2>/dev/null)" != "$cc|${FLAGS[*]}|$CFLAGS_AARCH64" ]; then
		say "$NAME: configuring (cross, --host=$TRIPLET)"
		rm -rf "$OBJ" && mkdir -p "$OBJ"
		(cd "$OBJ" && run_logged "$LOGS/configure-$NAME.log" "configure of the $NAME build" \
			"install what it names (make aarch64 installs $DEPS as root)" \
			"$TREE/configure" "${FLAGS[@]}" CC="$cc" CFLAGS="$CFLAGS_AARCH64")
		echo "$cc|${FLAGS[*]}|$CFLAGS_AARCH64" >"$flagfile"
	fi

	local log=$LOGS/build-$NAME.log
	say "$NAME: cross-compiling with $JOBS jobs (log: $(rel "$log"))"
	run_logged "$log" "build of $NAME" "read the log; for a patch error fix it in build/src" \
		make -C "$OBJ" -j"$JOBS" -s world-bin
	run_logged "$LOGS/build-$NAME-modules.log" "build of $NAME test modules" "" \
		make -C "$OBJ/src/test/modules/injection_points" -j"$JOBS" -s
	check_warnings "$log" "$LOGS/build-$NAME-modules.log"
	rm -rf "$INST"
	run_logged "$LOGS/install-$NAME.log" "install of $NAME" "" make -C "$OBJ" -s install-world-bin
	run_logged "$LOGS/install-$NAME.log" "install of $NAME test modules" "" \
		make -C "$OBJ/src/test/modules/injection_points" -s install
	install_extension
	check_warnings "$LOGS/extension-$NAME.log"
	file -L "$INST/bin/postgres" | grep -q 'ARM aarch64' ||
		die "$NAME: $(rel "$INST")/bin/postgres is not an aarch64 executable: $(file -b "$INST/bin/postgres")"
	echo "$id" >"$stamp"
	say "$NAME: installed in $(rel "$INST") ($((SECONDS - t0)) s, no compiler warning in the series)"
}

# runs_here [as_user]: whether the install's pg_config runs through binfmt
runs_here() {
	"$@" "$INST/bin/pg_config" --version >/dev/null 2>&1
}

binfmt() {
	[ -x "$INST/bin/pg_config" ] || die "$NAME: no install in $(rel "$INST") (make aarch64)"
	if runs_here && runs_here as_user; then
		return 0
	fi
	is_root || die "aarch64 binaries do not run here: qemu-aarch64-static must be registered with binfmt_misc, which needs root (sudo scripts/cross.sh binfmt)"
	command -v qemu-aarch64-static >/dev/null 2>&1 || die "no qemu-aarch64-static (apt-get install qemu-user-static)"
	if [ ! -e "$BINFMT/register" ]; then
		mount -t binfmt_misc binfmt_misc "$BINFMT" ||
			die "could not mount binfmt_misc on $BINFMT (mount -t binfmt_misc binfmt_misc $BINFMT)"
		say "mounted binfmt_misc on $BINFMT"
	fi
	# A registration that is there but does not work (disabled, or an
	# interpreter without F that other users or mount namespaces cannot
	# open) is replaced by ours.
	if [ -e "$BINFMT/qemu-aarch64" ]; then
		echo -1 >"$BINFMT/qemu-aarch64" || die "could not remove the registration $BINFMT/qemu-aarch64"
	fi
	# Debian's line (its interpreter keeps argv[0], flags OPF); F opens the
	# interpreter now, so it works for any user and in any mount namespace.
	local line conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	if [ -f "$conf" ]; then
		line=$(grep -m1 '^:qemu-aarch64:' "$conf")
	else
		line=':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$(command -v qemu-aarch64-static)"':F'
	fi
	case ${line##*:} in *F*) ;; *) line=${line}F ;; esac
	printf '%s\n' "$line" >"$BINFMT/register" ||
		die "could not register qemu-aarch64 with binfmt_misc ($BINFMT/register)"
	say "registered qemu-aarch64 for aarch64 executables ($BINFMT/qemu-aarch64: $(sed -n 's/^interpreter //p' "$BINFMT/qemu-aarch64"), flags $(sed -n 's/^flags: //p' "$BINFMT/qemu-aarch64"))"
	runs_here || die "aarch64 binaries still do not run after registering qemu-aarch64 ($INST/bin/pg_config --version with QEMU_LD_PREFIX=$SYSROOT)"
	runs_here as_user || die "aarch64 binaries do not run as '$FLEXLOCK_USER' ($INST/bin/pg_config --version)"
}

case "${1:-}" in
	build) build ;;
	binfmt) ensure_test_user; binfmt ;;
	*) die "usage: cross.sh build|binfmt" ;;
esac
