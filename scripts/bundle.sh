#!/usr/bin/env bash
# scripts/bundle.sh — `make bundle`: one tarball to run the benchmark on
# another machine (x86-64 Linux with python3, no build tools needed).
#
#   BUNDLE_BUILDS="vanilla patched"   the installs to ship (default); make
#                                     check ships "vanilla cassert"; a build
#                                     of yours (make build) travels with its
#                                     record (flexlock-build.json), so the
#                                     other machine runs the same A/B
#   BUNDLE_OUT=dir                    where the tarball goes (build/bundle)
#
# Builds what is missing, then writes build/bundle/flexlock-bundle-<commit>-
# pg<version>-<arch>[-<builds>].tar.xz holding:
#
#   flexbench                the launcher (POSIX sh): checks python3, the
#                            installs and, as root, the unprivileged user, then
#                            runs bench-scripts/flexbench.py on this directory
#   bench-scripts/           the driver, workloads and presets (no tests/),
#                            variants/, patches/
#   build/install/NAME       the installs (relocatable, debug info stripped)
#   build/machine/pingpong   bench-scripts/machine/pingpong.c, linked statically:
#                            the machine profile (flexbench run measures the
#                            machine first; ./flexbench machine-profile)
#   build/pristine.origin    the PostgreSQL version and where its source came from
#   bundle.json              the series' identity (docs: README.md, "Running
#                            on another machine")
#   README.md                what it is, how to run it, what it writes
#
# Prints the tarball's path and size.

. "$(dirname "$0")/lib.sh"

read -r -a builds <<<"${BUNDLE_BUILDS:-vanilla patched}"
[ ${#builds[@]} -gt 0 ] || die "BUNDLE_BUILDS is empty; name the installs to ship (e.g. \"vanilla patched\")"
ours=()
for b in "${builds[@]}"; do
	case "$b" in
	vanilla | patched | cassert) ours+=("$b") ;;
	*)
		base=$("${FLEXLAB[@]}" build info "$b" --field base 2>/dev/null) ||
			die "BUNDLE_BUILDS: '$b' is not a build (make build NAME=$b PATCHES=... makes one)"
		[[ " ${builds[*]} " == *" $base "* ]] ||
			warn "BUNDLE_BUILDS: $b is laid on $base, which the bundle does not ship: its runs there have no reference to compare with (add $base)"
		;;
	esac
done
for tool in strip xz python3 gcc; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is missing; it is needed to make the bundle ('make deps')"
done

t0=$SECONDS
[ ${#ours[@]} -gt 0 ] && "$FLEXLOCK_TOP/scripts/build.sh" "${ours[@]}"
# a build of yours travels only with the base it was laid on as it is
for b in "${builds[@]}"; do
	case "$b" in vanilla | patched | cassert) ;; *) "${FLEXLAB[@]}" build check "$b" || exit 1 ;; esac
done

version=$(cut -f1 "$ORIGIN_FILE")
commit=$(git -C "$FLEXLOCK_TOP" describe --always --dirty 2>/dev/null || echo unknown)
arch=$(uname -m)
name=flexlock-bundle-$commit-pg$version-$arch
[ "${builds[*]}" = "vanilla patched" ] || name+=-$(IFS=-; echo "${builds[*]}")
out=${BUNDLE_OUT:-$BUILD/bundle}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d "$out/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
dir=$stage/$name
mkdir -p "$dir/build/install"

# The driver and its inputs, without tests (the results are not under
# bench-scripts/).
tar -C "$FLEXLOCK_TOP" -cf - --exclude=bench-scripts/tests \
	--exclude=__pycache__ --exclude='*.pyc' bench-scripts variants patches | tar -C "$dir" -xf -
cp "$ORIGIN_FILE" "$dir/build/pristine.origin"

# The machine profile's tool, static so that it runs on the other machine
# whatever its C library.
mkdir -p "$dir/build/machine"
run_logged "$LOGS/bundle-pingpong.log" "compiling bench-scripts/machine/pingpong.c (static)" \
	"the static C library is in libc6-dev" \
	gcc -O2 -Wall -static -o "$dir/build/machine/pingpong" "$FLEXLOCK_TOP/bench-scripts/machine/pingpong.c"

# The installs, debug info stripped (the debug info stays in build/install).
for b in "${builds[@]}"; do
	cp -a "$BUILD/install/$b" "$dir/build/install/$b"
	rm -f "$dir/build/install/$b/.flexlock-build"
	# the tests' own module (t/modules/flexlock_inject) stays home
	find "$dir/build/install/$b" -name 'flexlock_inject*' -delete
	find "$dir/build/install/$b" -type f \( -perm -u+x -o -name '*.so*' -o -name '*.a' \) -print0 |
		while IFS= read -r -d '' f; do
			if [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || [[ $f = *.a ]]; then
				strip --strip-debug "$f" || die "strip --strip-debug $f failed"
			fi
		done
done

# bundle.json: what a reader of the results needs to know about the series.
configures=()
for b in "${builds[@]}"; do
	configures+=("$b" "$("$BUILD/install/$b/bin/pg_config" --configure)")
done
series=$(git -C "$TREE" log --reverse --format='%H %s' vanilla..HEAD 2>/dev/null || true)
python3 - "$dir" "$commit" "$series" "${configures[@]}" <<'EOF' || die "writing bundle.json failed"
import datetime, hashlib, json, os, sys
from pathlib import Path
d, commit, series, rest = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
origin = (d / "build" / "pristine.origin").read_text().strip().split("\t")
info = {
    "flexlock_commit": commit,
    "series": series.splitlines(),
    "patches": {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted((d / "patches").glob("*.patch"))},
    "postgresql": {"version": origin[0], "source": origin},
    "builds": {rest[i]: {"configure": rest[i + 1], "debug": "stripped"} for i in range(0, len(rest), 2)},
    # a build of the user's (make build): its base and patches (its record)
    "own": {rest[i]: json.loads((d / "build" / "install" / rest[i] / "flexlock-build.json").read_text())
            for i in range(0, len(rest), 2)
            if (d / "build" / "install" / rest[i] / "flexlock-build.json").is_file()},
    "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "created_on": " ".join((os.uname().sysname, os.uname().release, os.uname().machine)),
}
(d / "bundle.json").write_text(json.dumps(info, indent=2) + "\n")
EOF

# The launcher.  POSIX sh, nothing but coreutils and util-linux before python3.
sed -e "s/@BUILDS@/${builds[*]}/" -e "s/@ARCH@/$arch/" >"$dir/flexbench" <<'EOF'
#!/bin/sh
# flexbench — the flexlock benchmark driver of this bundle (README.md).
#   ./flexbench run --preset seed-000      ./flexbench list      ./flexbench run --help
# Checks what the driver needs (python3, the installs, as root the
# unprivileged user that runs the servers), then runs
# bench-scripts/flexbench.py with this directory as the flexlock checkout.
BUILDS='@BUILDS@'
ARCH='@ARCH@'
die() { printf 'flexbench: %s\n' "$*" >&2; exit 1; }
self=$(readlink -f -- "$0" 2>/dev/null) || self=$0    # through a symlink too
case $self in */*) here=${self%/*} ;; *) here=. ;; esac
here=$(cd "$here" && pwd -P) || die "cannot enter the bundle directory of $0"

command -v python3 >/dev/null 2>&1 ||
	die "python3 is not installed; the driver needs python3 3.8 or newer (Debian/Ubuntu: apt-get install python3)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' 2>/dev/null ||
	die "$(command -v python3) is not python3 3.8 or newer; install a newer python3"
[ "$(uname -m)" = "$ARCH" ] || die "this bundle holds $ARCH programs; this machine is $(uname -m)"
for b in $BUILDS; do
	[ -x "$here/build/install/$b/bin/postgres" ] ||
		die "the $b install is missing ($here/build/install/$b/bin/postgres); unpack the bundle again"
done

# PostgreSQL refuses to run as root: the driver runs servers as FLEXLOCK_USER,
# which must exist and reach this directory.
if [ "$(id -u)" = 0 ]; then
	user=${FLEXLOCK_USER:-flexlock}
	command -v runuser >/dev/null 2>&1 || die "runuser (util-linux) is missing; it runs the servers as '$user'"
	if ! id -u "$user" >/dev/null 2>&1; then
		useradd --system --user-group --create-home --home-dir "/var/lib/$user" --shell /bin/sh "$user" >/dev/null 2>&1 ||
			die "could not create the unprivileged user '$user' that runs the servers (useradd failed); create it or set FLEXLOCK_USER"
		printf "flexbench: created unprivileged user '%s' to run servers (PostgreSQL refuses root)\n" "$user"
	fi
	# each directory from / down to the bundle, the first that denies it first
	d= rest=${here#/}
	while :; do
		d=$d/${rest%%/*}
		if ! runuser -u "$user" -- test -x "$d" 2>/dev/null; then
			command -v setfacl >/dev/null 2>&1 && setfacl -m "u:$user:x" "$d" 2>/dev/null ||
				die "'$user' cannot enter $d; unpack the bundle where it can (e.g. under /opt or /srv) or run: chmod o+x $d"
			printf "flexbench: granted '%s' search permission on %s (ACL)\n" "$user" "$d"
		fi
		case $rest in */*) rest=${rest#*/} ;; *) break ;; esac
	done
	for b in $BUILDS; do
		runuser -u "$user" -- test -x "$here/build/install/$b/bin/postgres" -a -r "$here/build/install/$b/bin/postgres" ||
			die "'$user' cannot run $here/build/install/$b/bin/postgres; run: chmod -R go+rX $here"
	done
	export FLEXLOCK_USER="$user"
fi

export FLEXLOCK_TOP="$here" FLEXLOCK_BUILD="$here/build"
exec python3 "$here/bench-scripts/flexbench.py" "$@"
EOF
chmod 755 "$dir/flexbench"

cat >"$dir/README.md" <<EOF
# flexlock bundle: the benchmark, ready to run

This is \`make bundle\` of flexlock $commit, a lab for
PostgreSQL lock scalability: PostgreSQL $version built as ${builds[*]}
(\`build/install/\`), the benchmark driver (\`bench-scripts/\`, with its workloads
and presets), the lock variants (\`variants/\`) and the patch series
(\`patches/\`).  The installs are relocatable and their debug info is stripped
(\`strip --strip-debug\`; it is not in the bundle).  \`bundle.json\` names the
series: its commits, the patches' checksums, PostgreSQL's version and source,
each install's configure flags.

Needs an $arch Linux machine with python3 (3.8 or newer; python3-matplotlib
for the plots), nothing else.  Unpack anywhere and run:

    ./flexbench list                         # workloads and presets
    ./flexbench run --preset seed-000        # prints an estimate, then runs
    ./flexbench run --workloads insert-10 --clients 1,8 --reps 3 --duration 10
    ./flexbench run --help
    ./flexbench machine-profile              # the machine's figures alone
    ./flexbench calibrate --clients \$(nproc) --out calibration.json
    ./flexbench trace --workload select-only,insert-1000 --variant stock

Every run first measures the machine (\`machine-profile.json\` in its run
directory, about a minute; \`--no-machine-profile\` skips it): the time a cache
line takes between two cores, an atomic operation on one, a process woken
through a semaphore, and the WAL device's flush (pg_test_fsync), with the
cores, CPU model, clock and kernel, so that results from this machine can be
modelled.  For the lab's simulator to predict this machine blind, record
with the runs a calibration (\`calibrate\`: the backends' and pgbench's CPU
time per transaction, with as many clients as cores) and lock traces of the
workloads (\`trace\`, one client, results/DATE-traces/); bring back
\`results/\` and \`calibration.json\`.

As root, the servers run as the unprivileged user \`flexlock\` (FLEXLOCK_USER),
created if missing; it must be able to enter this directory (an ACL is granted
where one is missing, or flexbench says what to do).  Results go to
\`results/DATE-PRESET/\` (or \`--out DIR\`): runs.csv, summary.md,
plots/, meta.json (machine, versions, series, settings) and raw/, the same run
directory as \`make bench\` writes in a checkout.  Data directories are under
\`build/bench/\`.
EOF

# Files readable by all (the servers' user reads them when run as root).
tarball=$out/$name.tar.xz
rm -f "$tarball"
tar -C "$stage" --owner=0 --group=0 --numeric-owner --mode='u+rwX,go+rX,go-w' --sort=name -cf - "$name" |
	xz -T"$JOBS" -6 >"$tarball.tmp" || die "writing $tarball failed"
mv "$tarball.tmp" "$tarball"
unpacked=$(du -sm "$dir" | cut -f1)
say "bundle: $(rel "$tarball")"
say "bundle size: $(du -m "$tarball" | cut -f1) MiB ($(stat -c %s "$tarball") bytes; $unpacked MiB unpacked; ${builds[*]}, debug info stripped) in $((SECONDS - t0)) s"
