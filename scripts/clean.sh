#!/usr/bin/env bash
# scripts/clean.sh distclean — remove build/ and the cached source download.
#
# Refuses while build/src holds commits or edits that are not in patches/,
# unless FORCE=1: that work exists nowhere else.  ccache stays (it only makes
# the next build faster).

. "$(dirname "$0")/lib.sh"

[ "${1:-}" = distclean ] || die "usage: clean.sh distclean"

STATE=$TREE/.git/flexlock-series
if [ -z "${FORCE:-}" ] && [ -d "$TREE/.git" ] && [ -f "$STATE" ]; then
	read -r _ rec_head <"$STATE"
	if [ "$(git -C "$TREE" rev-parse HEAD)" != "$rec_head" ] ||
		[ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
		die "build/src has work that is not in patches/: 'make export-patches' first, or 'make distclean FORCE=1' to discard it"
	fi
fi
# the server of 'make server' lives in build/server
"$FLEXLOCK_TOP/scripts/server.sh" stop >/dev/null 2>&1 || true
rm -rf "$BUILD"
rm -rf "$CACHE/downloads" "$CACHE/apt"
say "removed $(rel "$BUILD") and the cached downloads in $CACHE (ccache kept)"
