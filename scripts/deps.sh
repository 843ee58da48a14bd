#!/usr/bin/env bash
# scripts/deps.sh — install (as root) or check (otherwise) the packages that
# building PostgreSQL 18 and running its test suites need.
#
# As root on Debian/Ubuntu: apt-get install what is missing.  Not root: name the
# missing packages and exit non-zero.  FLEXLOCK_DEPS_EXTRA adds packages
# (space separated) to the list, e.g. for the benchmark's plotting.

. "$(dirname "$0")/lib.sh"

# Package -> why.  We build without ICU and readline (identical flags for the
# compared builds, and installs that travel to other machines), so their -dev
# packages are not needed.
PKGS=(
	gcc make		# compiler and make
	bison flex		# parser generators (needed for git checkouts)
	zlib1g-dev		# --with-zlib (the default)
	pkg-config
	perl libipc-run-perl	# TAP tests (--enable-tap-tests)
	ccache			# fast rebuilds
	git			# make tree / export-patches / check-patches
	bzip2 xz-utils		# tarballs
	ca-certificates		# download from the PostgreSQL site, if reachable
	acl			# let the test user reach a checkout under /root
	util-linux		# runuser
	python3 python3-matplotlib	# the benchmark driver and its plots
)
# shellcheck disable=SC2206
PKGS+=(${FLEXLOCK_DEPS_EXTRA:-})

if ! command -v dpkg-query >/dev/null 2>&1; then
	# Not Debian: check commands instead and let the user sort it out.
	missing=()
	for c in gcc make bison flex perl git bzip2; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	perl -MIPC::Run -e 1 2>/dev/null || missing+=("perl-IPC-Run")
	[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (not a Debian/Ubuntu system: install them with your package manager)"
	exit 0
fi

missing=()
for p in "${PKGS[@]}"; do
	case "$p" in \#*) continue ;; esac
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! is_root; then
	die "missing packages: ${missing[*]} (run 'sudo make deps' or: sudo apt-get install ${missing[*]})"
fi

say "installing: ${missing[*]}"
mkdir -p "$LOGS"
export DEBIAN_FRONTEND=noninteractive
log=$LOGS/deps.log
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
	run_logged "$log" "apt-get update" "check your apt sources" apt-get update -q
	run_logged "$log" "apt-get install ${missing[*]}" "install them by hand" \
		apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
