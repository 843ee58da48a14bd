#!/usr/bin/env bash
# scripts/build.sh NAME... — configure, build and install PostgreSQL builds.
#
#   vanilla   the unmodified source (build/pristine), -O2
#   patched   build/src (vanilla + patches/), -O2, configured exactly as vanilla
#   cassert   build/src with assertions, debug info, TAP tests and injection
#             points: the build every test runs against
#
# Objects in build/obj/NAME (out of tree), installs in build/install/NAME.
# A build whose source has not changed since it was installed is skipped;
# otherwise make runs incrementally (ccache makes rebuilds cheap).
# Extra configure flags for all builds: PG_CONFIGURE_EXTRA.

. "$(dirname "$0")/lib.sh"

# How each build is configured: scripts/build-flags.sh (make layering
# configures its two builds from it too).
. "$(dirname "$0")/build-flags.sh"

# A fingerprint of the source a build is made from: for the git tree, its
# HEAD plus any uncommitted edits, so hacking on build/src triggers a rebuild.
source_id() {
	case "$1" in
		vanilla) cat "$ORIGIN_FILE" ;;
		*) {
			git -C "$TREE" rev-parse HEAD
			git -C "$TREE" diff HEAD
		} | sha256sum | awk '{print $1}' ;;
	esac
}

build_one() {
	local name=$1 src obj inst cflags flags stamp id cc
	obj=$BUILD/obj/$name
	inst=$BUILD/install/$name
	stamp=$inst/.flexlock-build
	case "$name" in
		vanilla) src=$PRISTINE; cflags=$O2_CFLAGS; flags=("${COMMON_FLAGS[@]}") ;;
		patched) src=$TREE; cflags=$O2_CFLAGS; flags=("${COMMON_FLAGS[@]}") ;;
		cassert) src=$TREE; cflags=$CASSERT_CFLAGS; flags=("${COMMON_FLAGS[@]}" "${CASSERT_FLAGS[@]}") ;;
		*) die "unknown build '$name' (known: vanilla patched cassert)" ;;
	esac
	# shellcheck disable=SC2206
	flags+=("${RPATH_FLAGS[@]}" --prefix="$inst" ${PG_CONFIGURE_EXTRA:-})

	id="$(source_id "$name")|${flags[*]}|$cflags"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$id" ] && [ -x "$inst/bin/postgres" ]; then
		# the extension is ours: always bring it up to date (make is quick)
		install_extension "$name"
		say "$name: up to date ($(rel "$inst"))"
		return 0
	fi

	ccache_env >/dev/null
	cc=$(ccache_env)
	mkdir -p "$obj"
	local flagfile=$obj/.flexlock-configure
	if [ ! -f "$obj/config.status" ] || [ "$(cat "$flagfile" 2>/dev/null)" != "$cc|${flags[*]}|$cflags" ]; then
		say "$name: configuring"
		rm -rf "$obj" && mkdir -p "$obj"
		(cd "$obj" && run_logged "$LOGS/configure-$name.log" "configure of the $name build" \
			"install what it names ('make deps') or adjust PG_CONFIGURE_EXTRA" \
			"$src/configure" "${flags[@]}" CC="$cc" CFLAGS="$cflags")
		echo "$cc|${flags[*]}|$cflags" >"$flagfile"
	fi

	local log=$LOGS/build-$name.log t0=$SECONDS
	say "$name: building with $JOBS jobs (log: $(rel "$log"))"
	run_logged "$log" "build of $name" "read the log; for a patch error fix it in build/src" \
		make -C "$obj" -j"$JOBS" -s world-bin
	if [ "$name" = cassert ]; then
		# injection_points is a test module our tests need installed; the
		# isolation tester is built here so that tests need no compiler.
		run_logged "$LOGS/build-$name-modules.log" "build of $name test modules" "" \
			make -C "$obj/src/test/modules/injection_points" -j"$JOBS" -s
		run_logged "$LOGS/build-$name-isolation.log" "build of the isolation tester" "" \
			make -C "$obj/src/test/isolation" -j"$JOBS" -s all
	fi
	rm -rf "$inst"
	run_logged "$LOGS/install-$name.log" "install of $name" "" make -C "$obj" -s install-world-bin
	if [ "$name" = cassert ]; then
		run_logged "$LOGS/install-$name.log" "install of $name test modules" "" \
			make -C "$obj/src/test/modules/injection_points" -s install
	fi
	install_extension "$name"
	echo "$id" >"$stamp"
	say "$name: installed in $(rel "$inst") ($((SECONDS - t0)) s)"
}

# The flexlock extension (contrib_flexlock/), built out of tree per build.
# Vanilla lacks the core patch it reads, so it gets only the control and SQL
# files: CREATE EXTENSION there must refuse with a clear message.
install_extension() {
	local name=$1 inst=$BUILD/install/$1 dir=$BUILD/ext/$1 ext=$FLEXLOCK_TOP/contrib_flexlock
	if [ "$name" = vanilla ]; then
		install -m 644 "$ext/flexlock.control" "$ext"/flexlock--*.sql "$("$inst/bin/pg_config" --sharedir)/extension/"
		return
	fi
	# Always from scratch: PGXS does not track the server headers, and the
	# counters' layout (storage/lockstats.h) changes with the series.
	rm -rf "$dir" && mkdir -p "$dir"
	run_logged "$LOGS/extension-$name.log" "build of the flexlock extension for $name" "" \
		make -C "$dir" -f "$ext/Makefile" VPATH="$ext" PG_CONFIG="$inst/bin/pg_config" -s all install
	# The tests' own module (t/modules/): injection point actions and the
	# locks the tests take on purpose; on patched too, for the extension's
	# installcheck and make overhead.
	local m mdir
	for m in "$FLEXLOCK_TOP"/t/modules/*/; do
		m=${m%/}
		mdir=$BUILD/ext/$name-$(basename "$m")
		rm -rf "$mdir" && mkdir -p "$mdir"
		run_logged "$LOGS/extension-$name-$(basename "$m").log" "build of the test module $(basename "$m") for $name" "" \
			make -C "$mdir" -f "$m/Makefile" VPATH="$m" PG_CONFIG="$inst/bin/pg_config" -s all install
	done
}

[ $# -gt 0 ] || die "usage: build.sh vanilla|patched|cassert ..."
for n in "$@"; do
	case "$n" in vanilla|patched|cassert) ;; *) die "unknown build '$n' (known: vanilla patched cassert)" ;; esac
done

"$FLEXLOCK_TOP/scripts/get-source.sh"
for n in "$@"; do
	case "$n" in patched|cassert) "$FLEXLOCK_TOP/scripts/tree.sh" ensure; break ;; esac
done
for n in "$@"; do
	build_one "$n"
done
