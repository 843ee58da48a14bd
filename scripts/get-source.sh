#!/usr/bin/env bash
# scripts/get-source.sh — obtain PostgreSQL 18 source into build/pristine.
#
# Where the source comes from, first match wins:
#   1. PG_SRC=/path       an existing PostgreSQL 18 source tree or git checkout
#   2. PG_TARBALL=/path   an upstream tarball (postgresql-18.x.tar.bz2)
#   3. a tarball cached by an earlier run (~/.cache/flexlock/downloads)
#   4. Debian's source package postgresql-18 (apt-get source --download-only),
#      through a private apt configuration whose deb-src entries are derived
#      from the machine's own apt sources (suite sid, and the machine's suites)
#   5. the PostgreSQL download site, for machines with the internet
# Tarballs are verified against checksums/SHA256SUMS when we know the version.
# PG_VERSION=18.x restricts 3 and 5 to that minor release.
#
# Prints the version used and where it came from; build/pristine.origin keeps it.

. "$(dirname "$0")/lib.sh"

DL=$CACHE/downloads

# A tarball's version from its file name (postgresql-18.6.tar.bz2 -> 18.6).
tarball_version() {
	basename "$1" | sed -n 's/^postgresql-\([0-9][0-9a-z.]*\)\.tar\.\(bz2\|gz\|xz\)$/\1/p'
}

# verify_tarball FILE: check FILE against our checksum list.  Prints a word
# describing the verification; dies on a mismatch.
verify_tarball() {
	local f=$1 name want got
	name=$(basename "$f")
	want=$(known_sha256 "$name")
	if [ -z "$want" ]; then
		echo "unverified (no checksum for $name in checksums/SHA256SUMS)"
		return 0
	fi
	got=$(sha256sum "$f" | awk '{print $1}')
	[ "$got" = "$want" ] ||
		die "checksum mismatch for $f (sha256 $got, expected $want): the file is corrupt or not the upstream tarball; delete it and try again"
	echo "sha256 verified"
}

# extract_tarball FILE: unpack into build/pristine.
extract_tarball() {
	local f=$1 tmp top
	tmp=$BUILD/pristine.tmp
	rm -rf "$tmp" && mkdir -p "$tmp"
	tar -xf "$f" -C "$tmp" 2>"$LOGS/extract.log" ||
		die "could not unpack $f (see $(rel "$LOGS/extract.log")); is it a PostgreSQL tarball?"
	top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n1)
	[ -n "$top" ] && [ -f "$top/configure" ] ||
		die "$f does not contain a PostgreSQL source tree (no configure at its top)"
	mv "$top" "$PRISTINE"
	rm -rf "$tmp"
}

check_version() {
	local v=$1 what=$2
	[ -n "$v" ] || die "$what: cannot tell its PostgreSQL version (no PACKAGE_VERSION in configure)"
	is_pg18 "$v" || die "$what is PostgreSQL $v, not 18: the series targets PostgreSQL 18.x"
}

record_origin() {
	# version, kind, location, verification
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >"$ORIGIN_FILE"
	say "using PostgreSQL $1 from $2 $3 ($4)"
}

# --- the candidates -----------------------------------------------------

from_tree() {
	local src=$1 v
	[ -d "$src" ] || die "PG_SRC=$src is not a directory; point it at a PostgreSQL 18 source tree"
	src=$(cd "$src" && pwd)
	[ -f "$src/configure" ] && [ -f "$src/src/backend/storage/lmgr/lwlock.c" ] ||
		die "PG_SRC=$src is not a PostgreSQL source tree (no configure or src/backend)"
	v=$(source_version "$src")
	check_version "$v" "PG_SRC=$src"
	if [ -f "$src/config.status" ] || [ -f "$src/GNUmakefile" ]; then
		die "PG_SRC=$src is configured in place; run 'make distclean' there first (we build out of tree)"
	fi
	local rev=""
	if [ -d "$src/.git" ] && command -v git >/dev/null; then
		rev=" at $(git -C "$src" describe --always --dirty 2>/dev/null || echo '?')"
	fi
	rm -rf "$PRISTINE" && mkdir -p "$PRISTINE"
	tar -C "$src" --exclude=./.git -cf - . | tar -C "$PRISTINE" -xf -
	record_origin "$v" "source tree" "$src$rev" "not a tarball: no checksum"
}

from_tarball() {
	local f=$1 how v
	[ -f "$f" ] || die "PG_TARBALL=$f does not exist"
	f=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
	v=$(tarball_version "$f")
	if [ -n "$v" ]; then
		check_version "$v" "PG_TARBALL=$f"
	fi
	how=$(verify_tarball "$f")
	extract_tarball "$f"
	v=$(source_version "$PRISTINE")
	if ! is_pg18 "$v"; then
		rm -rf "$PRISTINE"
		check_version "$v" "PG_TARBALL=$f"
	fi
	record_origin "$v" "tarball" "$f" "$how"
}

newest_cached() {
	local want=${PG_VERSION:-}
	find "$DL" -maxdepth 1 -name "postgresql-${want:-18.*}.tar.bz2" 2>/dev/null |
		sort -V | tail -n1
}

# Debian's source package, with a private apt configuration so that neither
# the machine's sources nor its lists change (and no root is needed).
from_apt() {
	command -v apt-get >/dev/null 2>&1 || return 1
	local apt=$CACHE/apt out list
	out=$DL/apt
	list=$apt/sources.list
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$out"
	: >"$list"

	# deb822 sources: URIs / Suites / Signed-By of each stanza.
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v out="$list" '
			function flush() {
				if (types ~ /deb/ && uris != "") {
					n = split(uris, u, " ");
					for (i = 1; i <= n; i++) {
						if (u[i] ~ /security/) continue;
						opt = signed != "" ? "[signed-by=" signed "] " : "";
						print "deb-src " opt u[i] " sid main" >> out;
						m = split(suites, s, " ");
						for (j = 1; j <= m; j++)
							if (s[j] !~ /security/)
								print "deb-src " opt u[i] " " s[j] " main" >> out;
					}
				}
				types = uris = suites = signed = "";
			}
			/^[ \t]*$/ { flush(); next }
			/^Types:/ { types = $0 }
			/^URIs:/ { sub(/^URIs:[ \t]*/, ""); uris = $0 }
			/^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
			/^Signed-By:/ { sub(/^Signed-By:[ \t]*/, ""); signed = $0 }
			END { flush() }' "$f"
	done
	# one-line sources
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" {
				opt = "";
				i = 2;
				if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opt = opt $i " "; i++ } opt = opt $i " "; i++ }
				if ($i ~ /security/ || $(i+1) ~ /security/) next;
				print "deb-src " opt $i " sid main";
				print "deb-src " opt $i " " $(i+1) " main";
			}' "$f" >>"$list"
	done
	sort -u -o "$list" "$list"
	[ -s "$list" ] || return 1

	local o=(-q -o "Dir::Etc::SourceList=$list" -o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
		-o "APT::Sandbox::User=$(id -un)" -o "Debug::NoLocking=1")
	say "fetching Debian's source package postgresql-18 (apt-get source --download-only)" >&2
	apt-get "${o[@]}" update >"$LOGS/apt-source.log" 2>&1 || true
	(cd "$out" && rm -f ./*.orig.tar.* && apt-get "${o[@]}" source --download-only postgresql-18) \
		>>"$LOGS/apt-source.log" 2>&1 || return 1
	local orig v
	orig=$(find "$out" -maxdepth 1 -name 'postgresql-18_*.orig.tar.bz2' | sort -V | tail -n1)
	[ -n "$orig" ] || return 1
	v=$(basename "$orig" | sed -n 's/^postgresql-18_\(.*\)\.orig\.tar\.bz2$/\1/p')
	# The Debian orig tarball is the upstream tarball under another name.
	mv "$orig" "$DL/postgresql-$v.tar.bz2"
	echo "$DL/postgresql-$v.tar.bz2"
}

from_web() {
	local v=${PG_VERSION:-$(newest_known_version)} url f
	url="https://ftp.postgresql.org/pub/source/v$v/postgresql-$v.tar.bz2"
	f=$DL/postgresql-$v.tar.bz2
	say "downloading $url" >&2
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL --retry 2 --connect-timeout 15 -o "$f.part" "$url" 2>>"$LOGS/download.log" || { rm -f "$f.part"; return 1; }
	elif command -v wget >/dev/null 2>&1; then
		wget -q -T 15 -O "$f.part" "$url" 2>>"$LOGS/download.log" || { rm -f "$f.part"; return 1; }
	else
		return 1
	fi
	mv "$f.part" "$f"
	echo "$f"
}

# --- main ---------------------------------------------------------------

mkdir -p "$BUILD" "$LOGS" "$DL"

# Already have source?  Keep it unless the user asked for a different one.
if [ -d "$PRISTINE" ] && [ -f "$ORIGIN_FILE" ]; then
	IFS=$'\t' read -r have_v have_kind have_loc have_how <"$ORIGIN_FILE"
	want=""
	[ -n "${PG_SRC:-}" ] && want=$(cd "$PG_SRC" 2>/dev/null && pwd || echo "$PG_SRC")
	[ -n "${PG_TARBALL:-}" ] && want=$(cd "$(dirname "$PG_TARBALL")" 2>/dev/null && pwd)/$(basename "$PG_TARBALL")
	if [ -n "$want" ] && [ "${have_loc%% at *}" != "$want" ]; then
		die "build/ holds PostgreSQL $have_v from $have_loc, not $want: run 'make distclean' (or remove build/) to switch source"
	fi
	if [ -n "${PG_VERSION:-}" ] && [ "$have_v" != "$PG_VERSION" ]; then
		die "build/ holds PostgreSQL $have_v, not PG_VERSION=$PG_VERSION: run 'make distclean' to switch"
	fi
	exit 0
fi
rm -rf "$PRISTINE"

if [ -n "${PG_SRC:-}" ]; then
	from_tree "$PG_SRC"
elif [ -n "${PG_TARBALL:-}" ]; then
	from_tarball "$PG_TARBALL"
else
	tried=()
	tb=$(newest_cached)
	if [ -z "$tb" ]; then
		tried+=("cache $DL")
		if tb=$(from_apt); then :; else
			tb=""
			tried+=("apt-get source postgresql-18 (log: $(rel "$LOGS/apt-source.log"))")
		fi
		if [ -n "$tb" ] && [ -n "${PG_VERSION:-}" ] && [ "$(tarball_version "$tb")" != "$PG_VERSION" ]; then
			tried+=("apt offered $(tarball_version "$tb"), not $PG_VERSION")
			tb=""
		fi
	fi
	if [ -z "$tb" ]; then
		if tb=$(from_web); then :; else
			tb=""
			tried+=("the PostgreSQL download site")
		fi
	fi
	[ -n "$tb" ] ||
		die "could not obtain PostgreSQL 18 source (tried: $(IFS=';'; echo "${tried[*]}")); set PG_SRC=/path/to/source or PG_TARBALL=/path/to/postgresql-18.x.tar.bz2"
	from_tarball "$tb"
fi
