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
#
#   build.sh own NAME PATCHES BASE [cassert]    make build: a user's own build
#
# A user's build is its base's tree (build/src at HEAD for BASE=patched, at
# tag 'vanilla' for BASE=vanilla) with the patches applied, in
# build/builds/NAME/, configured as its base and installed in
# build/install/NAME with a record of what it is (flexlock-build.json,
# bench-scripts/flexbench/builds.py).  The patches are applied in a scratch
# clone first, so a patch that does not apply changes nothing.  The tree and
# objects mirror the base's layout under build/ (build/builds/NAME/src and
# obj/NAME as build/src and build/obj/patched; pristine for vanilla), so that
# ccache's paths, relative to build/, are the base's: the first build
# compiles only what the patches change.

. "$(dirname "$0")/lib.sh"

# How each build is configured: scripts/build-flags.sh (make layering
# configures its two builds from it too).
. "$(dirname "$0")/build-flags.sh"

# A fingerprint of the source a build is made from: for the git tree, its
# HEAD plus any uncommitted edits, so hacking on build/src triggers a rebuild.
source_id() {
	case "$1" in
		vanilla) cat "$ORIGIN_FILE" ;;
		patched | cassert) tree_id "$TREE" ;;
		*) tree_id "$OWN_SRC" ;;
	esac
}

tree_id() {
	{
		git -C "$1" rev-parse HEAD
		git -C "$1" diff HEAD
	} | sha256sum | awk '{print $1}'
}

# build_one NAME: ours by name; a user's build from OWN_SRC, OWN_OBJ and
# OWN_ASSERT (1 for a cassert twin).
build_one() {
	local name=$1 src obj inst cflags flags stamp id cc asserts=0
	obj=$BUILD/obj/$name
	inst=$BUILD/install/$name
	stamp=$inst/.flexlock-build
	case "$name" in
		vanilla) src=$PRISTINE; cflags=$O2_CFLAGS; flags=("${COMMON_FLAGS[@]}") ;;
		patched) src=$TREE; cflags=$O2_CFLAGS; flags=("${COMMON_FLAGS[@]}") ;;
		cassert) src=$TREE; cflags=$CASSERT_CFLAGS; flags=("${COMMON_FLAGS[@]}" "${CASSERT_FLAGS[@]}"); asserts=1 ;;
		*)
			src=$OWN_SRC obj=$OWN_OBJ asserts=$OWN_ASSERT
			if [ "$asserts" = 1 ]; then
				cflags=$CASSERT_CFLAGS; flags=("${COMMON_FLAGS[@]}" "${CASSERT_FLAGS[@]}")
			else
				cflags=$O2_CFLAGS; flags=("${COMMON_FLAGS[@]}")
			fi ;;
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
	if [ "$asserts" = 1 ]; then
		# injection_points is a test module our tests need installed; the
		# isolation tester is built here so that tests need no compiler.
		run_logged "$LOGS/build-$name-modules.log" "build of $name test modules" "" \
			make -C "$obj/src/test/modules/injection_points" -j"$JOBS" -s
		run_logged "$LOGS/build-$name-isolation.log" "build of the isolation tester" "" \
			make -C "$obj/src/test/isolation" -j"$JOBS" -s all
	fi
	rm -rf "$inst"
	run_logged "$LOGS/install-$name.log" "install of $name" "" make -C "$obj" -s install-world-bin
	if [ "$asserts" = 1 ]; then
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
	if [ "$name" = vanilla ] || [ "${OWN_SERIES:-yes}" = no ]; then
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

# --- make build: a user's own build -----------------------------------------

# own_apply DIR FILE KIND: one patch onto the tree DIR (git am for a mail,
# git apply and a commit named after the file for a plain diff).  Fixed
# dates and identity, so that the same patches on the same base give the
# same commits, and an unchanged build stays up to date.
own_apply() {
	local dir=$1 f=$2 kind=$3 log=$4
	export GIT_COMMITTER_NAME=flexlock GIT_COMMITTER_EMAIL=flexlock@localhost
	export GIT_COMMITTER_DATE=2000-01-01T00:00:00Z
	if [ "$kind" = mail ]; then
		git -C "$dir" am -q "$f" >"$log" 2>&1
	else
		# a diff made with a/ b/ prefixes (git diff), else one made inside
		# the tree without them (diff -u, git diff --no-prefix)
		local p=-p1
		git -C "$dir" apply --check -p1 "$f" >/dev/null 2>&1 ||
			! git -C "$dir" apply --check -p0 "$f" >/dev/null 2>&1 || p=-p0
		git -C "$dir" apply --index "$p" "$f" >"$log" 2>&1 &&
			GIT_AUTHOR_NAME=flexlock GIT_AUTHOR_EMAIL=flexlock@localhost GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE \
				git -C "$dir" commit -q --no-verify -m "$(basename "$f")" >>"$log" 2>&1
	fi
}

build_own() {
	local name=$1 patches=$2 base=$3 twin=${4:-} version major plan base_commit root srcname stage
	# every input is checked before anything is fetched, laid out or built
	# (builds.py); without source yet, no base is built either
	major=18
	[ -f "$ORIGIN_FILE" ] && major=$(cut -f1 "$ORIGIN_FILE" | sed 's/^\([0-9]*\).*/\1/')
	plan=$("${FLEXLAB[@]}" build plan --name "$name" --patches "$patches" --base "$base" --major "$major") || exit 1
	# git as git is here, not as the user's configuration would have it
	# (core.autocrlf, commit.gpgSign, am.threeWay, hooks of a template)
	export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
	mkdir -p "$LOGS"
	exec 9>"$LOGS/.build-$name.lock"
	flock -n 9 || die "another make build NAME=$name is running; wait for it"
	"$FLEXLOCK_TOP/scripts/get-source.sh"
	version=$(cut -f1 "$ORIGIN_FILE")
	# (made if missing; an existing build/src is left as it is)
	[ -d "$TREE/.git" ] || "$FLEXLOCK_TOP/scripts/tree.sh" ensure
	if [ "$base" = patched ]; then
		[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
			die "build/src has uncommitted changes, so the patched build is no commit to lay NAME=$name on: commit them and 'make patched' first"
		[ "$(cut -d'|' -f1 "$BUILD/install/patched/.flexlock-build" 2>/dev/null)" = "$(tree_id "$TREE")" ] ||
			die "the patched build is older than build/src: run 'make patched' first, so that $name is compared with what it is laid on"
		base_commit=$(git -C "$TREE" rev-parse HEAD) srcname=src
	else
		base_commit=$(git -C "$TREE" rev-parse vanilla) srcname=pristine
	fi

	root=$BUILD/builds/$name
	# work of the user's in the build's tree is not thrown away
	if [ -d "$root/$srcname/.git" ]; then
		local last
		last=$("${FLEXLAB[@]}" build info "$name" --field last-commit 2>/dev/null || true)
		if [ -n "$(git -C "$root/$srcname" status --porcelain --untracked-files=no)" ] ||
			{ [ -n "$last" ] && [ "$(git -C "$root/$srcname" rev-parse HEAD)" != "$last" ]; }; then
			die "$(rel "$root/$srcname") has work of yours (changes, or commits since make build made it): git format-patch it into your patches, or remove that directory, then make build again"
		fi
	fi
	mkdir -p "$BUILD/builds"
	stage=$(mktemp -d "$BUILD/builds/.stage-$name.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$stage'; rmdir '$BUILD/builds' 2>/dev/null || true" EXIT
	# the patches as they are now: applied and recorded from these copies
	local kind f n=0 files=() copy
	while IFS=$'\t' read -r kind f; do
		n=$((n + 1))
		copy=$stage/patches/$n/$(basename "$f")
		mkdir -p "$(dirname "$copy")" && cp "$f" "$copy"
		files+=("$kind" "$copy")
	done <<<"$plan"
	git clone -q --local --no-checkout --template= "$TREE" "$stage/tree"
	git -C "$stage/tree" checkout -q --detach "$base_commit"
	local i
	for ((i = 0; i < ${#files[@]}; i += 2)); do
		kind=${files[i]} f=${files[i + 1]}
		if ! own_apply "$stage/tree" "$f" "$kind" "$LOGS/build-$name-apply.log"; then
			local where
			where=$("${FLEXLAB[@]}" build failure --log "$LOGS/build-$name-apply.log" --patch "$f")
			die "$(basename "$f") (patch $((i / 2 + 1))) does not apply to the $base build (PostgreSQL $version): $where; nothing was changed: rebase it on $(rel "$TREE") ($([ "$base" = patched ] && echo HEAD || echo "tag vanilla")) (log: $(rel "$LOGS/build-$name-apply.log"))"
		fi
	done
	git -C "$stage/tree" log --reverse --format='%H %s' "$base_commit..HEAD" >"$stage/commits"

	# The tree: moved into place, or the existing one brought to the new
	# commits (git touches only the files that differ: make is incremental).
	if [ -d "$root/$srcname/.git" ]; then
		git -C "$root/$srcname" fetch -q "$stage/tree" HEAD
		git -C "$root/$srcname" reset -q --hard FETCH_HEAD
	else
		# (another base before: its tree and objects go)
		rm -rf "$root" && mkdir -p "$root"
		mv "$stage/tree" "$root/$srcname"
	fi
	local npatch=$((${#files[@]} / 2))
	say "$name: $(rel "$root/$srcname"): the $base build's tree + $npatch patch$([ $npatch = 1 ] || echo es)"

	local series=yes
	[ "$base" = vanilla ] && series=no
	local copies=()
	for ((i = 0; i < ${#files[@]}; i += 2)); do copies+=("${files[i + 1]}"); done
	OWN_SRC=$root/$srcname OWN_OBJ=$root/obj/$name OWN_ASSERT=0 OWN_SERIES=$series build_one "$name"
	"${FLEXLAB[@]}" build record --name "$name" --base "$base" --base-commit "$base_commit" \
		--version "$version" --given "$patches" \
		--commits "$stage/commits" --files "${copies[@]}"
	# the twin: on request, and whenever there is one, so that it is never
	# left with other patches than its build
	if [ "$twin" = cassert ] || [ -f "$BUILD/install/$name-cassert/flexlock-build.json" ]; then
		local b=$name-cassert tbase=vanilla
		[ "$base" = patched ] && tbase=cassert
		# the twin's objects mirror build/obj/cassert
		OWN_SRC=$root/$srcname OWN_OBJ=$root/obj/$b OWN_ASSERT=1 OWN_SERIES=$series build_one "$b"
		"${FLEXLAB[@]}" build record --name "$b" --base "$tbase" --base-commit "$base_commit" \
			--version "$version" --given "$patches" \
			--commits "$stage/commits" --files "${copies[@]}" --twin-of "$name"
	fi
	say "$name: $("${FLEXLAB[@]}" build info "$name")"
}

if [ "${1:-}" = own ]; then
	shift
	build_own "$@"
	exit 0
fi

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
