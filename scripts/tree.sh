#!/usr/bin/env bash
# scripts/tree.sh — the patch workflow.
#
#   tree.sh ensure    build/src exists and carries the series of patches/
#                     (used by the builds; never throws away unexported work)
#   tree.sh reset     recreate build/src from vanilla + patches/ (make tree FORCE=1)
#   tree.sh export    write build/src's commits since 'vanilla' to patches/
#   tree.sh check [TARBALL]
#                     apply the series to a pristine copy of the source
#
# build/src is a git repository: the first commit is the vanilla source, tagged
# 'vanilla'; each patch of patches/ is one commit on branch 'flexlock', applied
# with git am.  .git/flexlock-series records which patches/ the tree was made
# from (a hash of the patch files) and the commit that made, so that a changed
# patches/ directory re-applies only while the tree has no work of its own.

. "$(dirname "$0")/lib.sh"

STATE=$TREE/.git/flexlock-series

patch_files() {
	find "$PATCHES" -maxdepth 1 -name '*.patch' -type f 2>/dev/null | LC_ALL=C sort
}

patches_hash() {
	local f
	{
		for f in $(patch_files); do
			basename "$f"
			cat "$f"
		done
	} | sha256sum | awk '{print $1}'
}

# Use the developer's git identity if there is one, a neutral one otherwise.
git_identity() {
	if ! git -C "$1" var GIT_COMMITTER_IDENT >/dev/null 2>&1; then
		export GIT_COMMITTER_NAME=flexlock GIT_COMMITTER_EMAIL=flexlock@localhost
		export GIT_AUTHOR_NAME=flexlock GIT_AUTHOR_EMAIL=flexlock@localhost
	fi
}

# init_vanilla SRC DIR VERSION: make DIR a git repository whose only commit
# is the contents of SRC, tagged 'vanilla'.
init_vanilla() {
	local src=$1 dir=$2 v=$3
	rm -rf "$dir" && mkdir -p "$dir"
	tar -C "$src" -cf - . | tar -C "$dir" -xf -
	git -C "$dir" init -q --initial-branch=flexlock
	git -C "$dir" config core.abbrev 12
	git_identity "$dir"
	git -C "$dir" add -A -f
	GIT_AUTHOR_NAME="PostgreSQL Global Development Group" \
		GIT_AUTHOR_EMAIL="pgsql-hackers@lists.postgresql.org" \
		GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" \
		git -C "$dir" commit -q --no-verify -m "PostgreSQL $v, vanilla" \
		-m "Unmodified source as obtained by flexlock (see build/pristine.origin)."
	git -C "$dir" tag vanilla
}

# apply_series DIR: git am every patch onto DIR; on failure, say which patch.
apply_series() {
	local dir=$1 log=$LOGS/git-am.log files
	mapfile -t files < <(patch_files)
	[ ${#files[@]} -gt 0 ] || return 0
	git_identity "$dir"
	if ! git -C "$dir" am -q --whitespace=error-all "${files[@]}" >"$log" 2>&1; then
		local bad
		bad=$(sed -n 's/^Patch failed at [0-9]* \(.*\)/\1/p' "$log" | head -n1)
		[ -n "$bad" ] || bad=$(grep -m1 -iE 'error|whitespace' "$log" || true)
		git -C "$dir" am --abort >/dev/null 2>&1 || true
		die "the series does not apply to PostgreSQL $(source_version "$dir"): '$bad' fails (log: $(rel "$log")); fix it in build/src and 'make export-patches'"
	fi
}

record_state() {
	printf '%s %s\n' "$(patches_hash)" "$(git -C "$TREE" rev-parse HEAD)" >"$STATE"
}

make_tree() {
	"$FLEXLOCK_TOP/scripts/get-source.sh"
	local v
	v=$(cut -f1 "$ORIGIN_FILE")
	say "laying out build/src: PostgreSQL $v + $(patch_files | wc -l) patches"
	init_vanilla "$PRISTINE" "$TREE" "$v"
	apply_series "$TREE"
	record_state
}

tree_dirty() {
	[ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]
}

cmd_ensure() {
	if [ ! -d "$TREE/.git" ] || [ ! -f "$STATE" ]; then
		make_tree
		return
	fi
	local rec_hash rec_head
	read -r rec_hash rec_head <"$STATE"
	[ "$rec_hash" = "$(patches_hash)" ] && return 0
	if [ "$(git -C "$TREE" rev-parse HEAD)" = "$rec_head" ] && ! tree_dirty; then
		say "patches/ changed: re-applying the series in build/src"
		git -C "$TREE" am --abort >/dev/null 2>&1 || true
		git -C "$TREE" reset -q --hard vanilla
		apply_series "$TREE"
		record_state
	else
		die "patches/ changed, and build/src has work of its own: export it first ('make export-patches') or start over ('make tree FORCE=1', which discards it)"
	fi
}

cmd_reset() {
	make_tree
}

cmd_export() {
	[ -d "$TREE/.git" ] || die "no build/src yet: run 'make tree' first"
	tree_dirty && die "build/src has uncommitted changes: commit them (git -C build/src commit -a) before exporting"
	git -C "$TREE" rev-parse -q --verify vanilla >/dev/null || die "build/src has no 'vanilla' tag: recreate it with 'make tree FORCE=1'"
	local tmp n
	tmp=$(mktemp -d)
	# Stable output: no numbering in subjects, no commit ids, no git
	# version signature, fixed abbreviation; names follow the subjects.
	git -C "$TREE" -c core.abbrev=12 -c diff.noprefix=false format-patch -q \
		--no-numbered --zero-commit --no-signature --no-renames \
		-o "$tmp" vanilla..HEAD
	mkdir -p "$PATCHES"
	find "$PATCHES" -maxdepth 1 -name '*.patch' -delete
	n=0
	for f in "$tmp"/*.patch; do
		[ -f "$f" ] || continue
		mv "$f" "$PATCHES/"
		n=$((n + 1))
	done
	rmdir "$tmp"
	record_state
	say "exported $n patches to $(rel "$PATCHES")/ (review with: git diff --stat -- patches/)"
}

cmd_check() {
	local tb=${1:-${PG_TARBALL:-}} src kind loc dir v n
	dir=$BUILD/check-patches
	rm -rf "$dir"
	if [ -n "$tb" ]; then
		[ -f "$tb" ] || die "no such tarball: $tb"
		src=$BUILD/check-patches.src
		rm -rf "$src" && mkdir -p "$src"
		tar -xf "$tb" -C "$src" || die "could not unpack $tb"
		src=$(find "$src" -mindepth 1 -maxdepth 1 -type d | head -n1)
		loc=$tb
	else
		"$FLEXLOCK_TOP/scripts/get-source.sh"
		IFS=$'\t' read -r v kind loc _ <"$ORIGIN_FILE"
		if [ "$kind" = tarball ] && [ -f "$loc" ]; then
			src=$BUILD/check-patches.src
			rm -rf "$src" && mkdir -p "$src"
			tar -xf "$loc" -C "$src" || die "could not unpack $loc"
			src=$(find "$src" -mindepth 1 -maxdepth 1 -type d | head -n1)
		else
			src=$PRISTINE
		fi
	fi
	v=$(source_version "$src")
	is_pg18 "$v" || die "$loc is PostgreSQL ${v:-?}, not 18"
	init_vanilla "$src" "$dir" "$v"
	apply_series "$dir"
	n=$(patch_files | wc -l)
	rm -rf "$dir" "$BUILD/check-patches.src"
	say "$n patches apply cleanly to PostgreSQL $v ($loc)"
}

case "${1:-}" in
	ensure) cmd_ensure ;;
	reset) cmd_reset ;;
	export) cmd_export ;;
	check) shift; cmd_check "$@" ;;
	*) die "usage: tree.sh ensure|reset|export|check [TARBALL]" ;;
esac
