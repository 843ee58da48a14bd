# scripts/lib.sh — shared helpers for the flexlock build and test scripts.
#
# Sourced, never run.  Every script reports failure with die(): one line that
# says what failed and what to do, with the log file where details are.  Long
# output goes to build/logs/, never to the terminal.

set -euo pipefail

# We may be run from make; sub-makes of PostgreSQL's tree must start fresh
# (its temp-install only happens at MAKELEVEL 0, and our -j must not leak).
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS 2>/dev/null || true

FLEXLOCK_TOP=${FLEXLOCK_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${FLEXLOCK_BUILD:-$FLEXLOCK_TOP/build}
CACHE=${FLEXLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flexlock}
PATCHES=${FLEXLOCK_PATCHES:-$FLEXLOCK_TOP/patches}
FLEXLOCK_USER=${FLEXLOCK_USER:-flexlock}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
LOGS=$BUILD/logs

# The lab's command line, bench-scripts/flexlab (flexlock-lab when
# installed), run from the checkout without installing:
# "${FLEXLAB[@]}" bench run ...  (the system's python3 first: its matplotlib)
FLEXLAB_PY=/usr/bin/python3
[ -x "$FLEXLAB_PY" ] || FLEXLAB_PY=python3
FLEXLAB=(env "PYTHONPATH=$FLEXLOCK_TOP/bench-scripts${PYTHONPATH:+:$PYTHONPATH}" "FLEXLOCK_BUILD=$BUILD"
	"$FLEXLAB_PY" -m flexlab)

PRISTINE=$BUILD/pristine        # vanilla source, never modified
TREE=$BUILD/src                 # git tree: vanilla commit + the series
ORIGIN_FILE=$BUILD/pristine.origin

say() { printf 'flexlock: %s\n' "$*"; }
warn() { printf 'flexlock: warning: %s\n' "$*" >&2; }
die() { printf 'flexlock: %s\n' "$*" >&2; exit 1; }

# Path relative to the checkout, for messages.
rel() { local p=$1; printf '%s' "${p#"$FLEXLOCK_TOP"/}"; }

is_root() { [ "$(id -u)" = 0 ]; }

# run_logged LOG DESCRIPTION HINT CMD...: run CMD with all output in LOG; on
# failure print one line naming the step, the first error in the log and the log.
run_logged() {
	local log=$1 what=$2 hint=$3
	shift 3
	mkdir -p "$(dirname "$log")"
	if ! "$@" >"$log" 2>&1; then
		local first
		first=$(grep -m1 -E '(error|Error|ERROR|FATAL|fatal|No such file|not found)' "$log" | cut -c1-160 || true)
		die "$what failed${first:+: $first}${hint:+; $hint} (log: $(rel "$log"))"
	fi
}

# Version of a PostgreSQL source tree, from configure's PACKAGE_VERSION.
source_version() {
	sed -n "s/^PACKAGE_VERSION='\([^']*\)'.*/\1/p" "$1/configure" 2>/dev/null | head -n1
}

is_pg18() { case "$1" in 18.*|18beta*|18rc*|18devel) return 0 ;; *) return 1 ;; esac; }

# Known checksum for a tarball base name, or empty.
known_sha256() {
	awk -v f="$1" '$2 == f { print $1 }' "$FLEXLOCK_TOP/checksums/SHA256SUMS"
}

# Newest version we hold a checksum for.
newest_known_version() {
	sed -n 's/.*postgresql-\(18\.[0-9]*\)\.tar\.bz2$/\1/p' "$FLEXLOCK_TOP/checksums/SHA256SUMS" |
		sort -t. -k1,1n -k2,2n | tail -n1
}

# ccache_env: the compiler command (ccache in front if there is ccache), with
# ccache's settings exported; call it once outside $(...) too, or the
# exports stay in the subshell.  Builds of one source in several build
# directories (a second checkout, a build directory per experiment) share
# the cache: paths are relative to BUILD, and the directory is not hashed.
ccache_env() {
	if command -v ccache >/dev/null 2>&1; then
		export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
		export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$BUILD}
		export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
		mkdir -p "$CCACHE_DIR"
		echo "ccache ${CC_BASE:-gcc}"
	else
		echo "${CC_BASE:-gcc}"
	fi
}

# --- running servers as an unprivileged user ------------------------------
#
# initdb and postgres refuse to run as root.  As root we create (once) the
# user $FLEXLOCK_USER and run everything that starts a server as that user;
# otherwise we run as ourselves.

ensure_test_user() {
	is_root || return 0
	# flexbench/servers.py's prepare_run_user, the benchmark's too: it
	# creates the user and grants search permission on each ancestor
	# directory of the build tree that denies it (e.g. /root), nothing more
	FLEXLOCK_USER=$FLEXLOCK_USER "${FLEXLAB[@]}" server user || exit 1
}

# Give the test user the parts of the build tree that tests write into.
hand_over() {
	is_root || return 0
	local p
	for p in "$@"; do
		[ -e "$p" ] && chown -R "$FLEXLOCK_USER:" "$p"
	done
	return 0
}

# Run a command as the test user (as ourselves when not root).  The
# environment is kept; HOME, USER and LOGNAME become the user's.
as_user() {
	if is_root; then
		runuser -u "$FLEXLOCK_USER" -- env CCACHE_DISABLE=1 "$@"
	else
		"$@"
	fi
}
