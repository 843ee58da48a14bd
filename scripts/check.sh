#!/usr/bin/env bash
# scripts/check.sh — every test of the project, against the cassert build
# (the README's tour in the tap suite runs on the patched build).
#
# Suites (SUITES selects some; default all):
#   patches     the series applies with git am to the pristine source
#   tooling     the build scripts' own tests (t/tooling/*.pl): bad input, checksums,
#               relocatable installs (each install copied elsewhere and run there)
#   bench       the benchmark driver's tests (bench-scripts/tests): pgbench output
#               parsing, usage errors, reports, a smoke run on the cassert build
#   gucs        PostgreSQL's check that every GUC is in postgresql.conf.sample
#               and documented (test_misc/t/003_check_guc.pl)
#   regress     PostgreSQL's core regression suite        } once per variant
#   isolation   PostgreSQL's isolation suite              } config file in
#   amcheck     contrib/amcheck's regression and TAP tests } variants/ (VARIANTS
#   sql         this project's pg_regress tests (sql/)     } selects some)
#   recovery    PostgreSQL's recovery TAP tests that a variant names in
#               flexlock_test.recovery_tests (src/test/recovery/t/NAME.pl)
#   tap         this project's TAP tests (t/*.pl); t/015 runs the README's tour
#               on the patched build, which is built for it
#   bundle      `make bundle` end to end (t/bundle/*.pl): a bundle of vanilla and
#               cassert (BUNDLE_BUILDS) unpacked in temporary directories and
#               run with its launcher, as root and as a normal user; bad input
#               (no python3, a missing install) refused with one clear line
#   own         a build of your own (t/own/*.pl, docs/your-patch.md): bad input to
#               make build refused with one line and nothing changed (listing and
#               checksums of the installs and trees), then the example patch built
#               on both bases, the README's three commands (make build, make bench
#               PRESET=quick BUILDS="patched example", make server BUILD=example),
#               flexlock_report() and the record, make trace and make predict of
#               it, and a bundle of it run where the build tree is hidden
#   aarch64     the aarch64 cross build under qemu (scripts/check-aarch64.sh): core
#               regress and the LWLock torture of each lock type; only in the full
#               matrix (`make check-full`) or by name (SUITES=aarch64)
#
# A variant file is appended to postgresql.conf of every test server through
# TEMP_CONFIG, exactly as PostgreSQL's buildfarm does, and each per-variant
# suite checks on its own server that the file's settings took effect
# (scripts/variant-check.pl).
#
# CHECK_MATRIX=light (the default, `make check`) or full (`make check-full`):
# in the light matrix a variant that sets flexlock_test.light_suites runs
# only those of the per-variant suites (none if empty), and its recovery
# tests are flexlock_test.light_recovery_tests where set; in the full matrix
# every variant runs every per-variant suite (or flexlock_test.full_suites
# where set) and all its recovery tests.  This keeps `make check` on a fresh
# clone within CI's hour while new variants still get PostgreSQL's suites.
#
# The last line of the output is "N passed, N failed" (suites counted); the
# exit status is non-zero if any suite failed.  Logs and regression.diffs of failed suites are kept
# under build/check/.

. "$(dirname "$0")/lib.sh"

ALL_SUITES="patches tooling bench gucs regress isolation amcheck sql recovery tap bundle own aarch64"
if [ "${CHECK_MATRIX:-light}" = full ]; then default_suites=$ALL_SUITES; else default_suites=${ALL_SUITES% aarch64}; fi
SUITES=${SUITES:-$default_suites}
CHK=$BUILD/check
OBJ=$BUILD/obj/cassert
INST=$BUILD/install/cassert

# Variants: stock first, then the others in name order.
if [ -n "${VARIANTS:-}" ]; then
	read -r -a variants <<<"$VARIANTS"
else
	variants=()
	[ -f "$FLEXLOCK_TOP/variants/stock.conf" ] && variants+=(stock)
	for f in "$FLEXLOCK_TOP"/variants/*.conf; do
		v=$(basename "$f" .conf)
		[ "$v" = stock ] || variants+=("$v")
	done
fi
for v in "${variants[@]}"; do
	[ -f "$FLEXLOCK_TOP/variants/$v.conf" ] ||
		die "unknown variant '$v' (known: $(cd "$FLEXLOCK_TOP/variants" && ls -- *.conf | sed 's/\.conf$//' | tr '\n' ' '))"
done
for s in $SUITES; do
	case " $ALL_SUITES " in *" $s "*) ;; *) die "unknown suite '$s' (known: $ALL_SUITES)" ;; esac
done
want() { case " $SUITES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

CHECK_MATRIX=${CHECK_MATRIX:-light}
case $CHECK_MATRIX in
light | full) ;;
*) die "CHECK_MATRIX must be light or full, not '$CHECK_MATRIX'" ;;
esac
# (scripts/soak.sh: the input checked before its runs start)
[ -z "${FLEXLOCK_CHECK_VALIDATE_ONLY:-}" ] || exit 0

# variant_key CONF KEY: the value of flexlock_test.KEY in CONF, and status 1
# if CONF does not set it
variant_key() {
	grep -q "^flexlock_test\.$2 *=" "$1" || return 1
	sed -n "s/^flexlock_test\.$2 *= *'\(.*\)'.*/\1/p" "$1"
}

# want_v SUITE: whether this variant runs SUITE in this matrix
want_v() {
	want "$1" || return 1
	case " $variant_suites " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}

t_start=$SECONDS
# Each suite's outcome, one line each ("ok NAME" or "FAIL NAME: LOGDIR/"):
# a file, so that suites run in the second lane (below) count too.
RESULTS=$CHK/results.txt
mkdir -p "$CHK" && : >"$RESULTS"

# suite NAME KEEP CMD...: run CMD as the test user with output in a log; on
# failure copy KEEP (files or directories, may be absent) next to the log.
# With SUITE_AS_SELF=1, run CMD as ourselves (it starts no server).
suite() {
	local name=$1 keep=$2
	shift 2
	local dir=$CHK/logs/$name t0=$SECONDS rc=0
	rm -rf "$dir" && mkdir -p "$dir"
	hand_over "$dir"
	if [ -n "${SUITE_AS_SELF:-}" ]; then
		"$@" >"$dir/output.log" 2>&1 || rc=$?
	else
		as_user "$@" >"$dir/output.log" 2>&1 || rc=$?
	fi
	local secs=$((SECONDS - t0))
	if [ $rc -eq 0 ]; then
		echo "ok $name" >>"$RESULTS"
		printf 'ok    %-24s %4d s\n' "$name" "$secs"
	else
		local k
		for k in $keep; do
			[ -e "$k" ] && cp -r "$k" "$dir/" 2>/dev/null
		done
		echo "FAIL $name: $(rel "$dir")/" >>"$RESULTS"
		printf 'FAIL  %-24s %4d s  -> %s/\n' "$name" "$secs" "$(rel "$dir")"
		grep -E '(^not ok|Failed test|^FATAL|FAILED|^# [0-9]+ of [0-9]+ tests failed|^not ok [0-9]+ +[-+] )' \
			"$dir/output.log" | head -n 8 | sed 's/^/      /' || true
	fi
}

# --- the build --------------------------------------------------------------

# The tap suite also needs a server without the patches (the extension must
# refuse it cleanly), the bundle suite ships it: the vanilla build, cheap once
# ccache is warm.  The README's tour (t/015) runs on the patched build, the
# one make server, make bench and the bundle use: built here so that it is
# tested too.
builds=(cassert)
if want tap || want bundle || want own; then
	builds+=(vanilla)
fi
if want tap && case " ${TAP_TESTS:-t/015_readme_tour.pl} " in *015_readme_tour.pl*) true ;; *) false ;; esac; then
	builds+=(patched)
fi
# a build of one's own is laid on patched (and on vanilla)
if want own && [[ " ${builds[*]} " != *" patched "* ]]; then
	builds+=(patched)
fi
"$FLEXLOCK_TOP/scripts/build.sh" "${builds[@]}"
ensure_test_user
mkdir -p "$CHK"
hand_over "$CHK" "$OBJ"

# One temporary installation (core, all of contrib, injection_points) serves
# every suite of PostgreSQL's tree; the suites then run with NO_TEMP_INSTALL.
if want regress || want isolation || want amcheck || want gucs || want recovery; then
	say "preparing the temporary installation for PostgreSQL's suites"
	as_user make -C "$OBJ" temp-install \
		EXTRA_INSTALL="contrib src/test/modules/injection_points" >"$CHK/temp-install.log" 2>&1 ||
		die "temp-install of the cassert build failed (log: $(rel "$CHK/temp-install.log"), and $(rel "$OBJ")/tmp_install/log/)"
fi

pgxs_dir=$(dirname "$("$INST/bin/pg_config" --pgxs)")/../..
pgxs_dir=$(cd "$pgxs_dir" && pwd)
pg_regress=$pgxs_dir/src/test/regress/pg_regress

say "running: $SUITES; variants: ${variants[*]}"

if want patches; then
	SUITE_AS_SELF=1 suite patches "" "$FLEXLOCK_TOP/scripts/tree.sh" check
fi

run_prove() {
	# run_prove NAME DIR FILES...: prove with PostgreSQL's TAP environment.
	local name=$1 dir=$2
	shift 2
	suite "$name" "$dir/tmp_check/log" \
		env -C "$dir" PATH="$INST/bin:$PATH" PG_REGRESS="$pg_regress" \
		TESTLOGDIR="$dir/tmp_check/log" TESTDATADIR="$dir/tmp_check" \
		FLEXLOCK_TOP="$FLEXLOCK_TOP" FLEXLOCK_BUILD="$BUILD" FLEXLOCK_CHECK_MATRIX="$CHECK_MATRIX" \
		prove -I "$pgxs_dir/src/test/perl" -I "$FLEXLOCK_TOP/t/lib" "$@"
}

if want tooling; then
	d=$CHK/tooling
	rm -rf "$d" && mkdir -p "$d" && hand_over "$d"
	run_prove tooling "$d" "$FLEXLOCK_TOP"/t/tooling/*.pl
fi

if want bench; then
	mkdir -p "$BUILD/bench" && hand_over "$BUILD/bench"
	suite bench "" env -C "$FLEXLOCK_TOP/bench-scripts/tests" FLEXBENCH_SMOKE=1 PYTHONDONTWRITEBYTECODE=1 \
		PYTHONPATH="$FLEXLOCK_TOP/bench-scripts" FLEXLOCK_TOP="$FLEXLOCK_TOP" FLEXLOCK_BUILD="$BUILD" \
		/usr/bin/python3 -m unittest -v test_flexbench
fi

if want gucs; then
	suite gucs "$OBJ/src/test/modules/test_misc/tmp_check/log" \
		make -C "$OBJ/src/test/modules/test_misc" check NO_TEMP_INSTALL=1 PROVE_TESTS=t/003_check_guc.pl
fi

# Each per-variant suite proves its variant was on: scripts/variant-check.pl
# writes a check that compares every setting of the config with the server's,
# run as one more test of the suite on the suite's own server (pg_regress
# finds a test's files in its output directory first): the test
# flexlock_variant ends regress, isolation (a spec) and sql and starts
# amcheck, and t/variant/applied.pl, a node made as theirs are, joins the
# recovery tests.  A config that does not reach the servers, or a setting
# that does not take, fails the suite.
vcheck_into() {
	# vcheck_into KIND DIR: the check's files for a suite that runs in DIR
	local kind=$1 dir=$2
	case $kind in
	sql) mkdir -p "$dir/sql" "$dir/expected"
		cp "$vc/sql/flexlock_variant.sql" "$dir/sql/"
		cp "$vc/expected/flexlock_variant.out" "$dir/expected/" ;;
	spec) mkdir -p "$dir/specs" "$dir/expected"
		cp "$vc/specs/flexlock_variant.spec" "$dir/specs/"
		cp "$vc/expected-iso/flexlock_variant.out" "$dir/expected/" ;;
	esac
	hand_over "$dir"
}

per_variant_suites="regress isolation amcheck sql recovery"

# The per-variant suites run in two lanes: regress and the recovery tests
# (027_stream_regress is regress again), which keep both CPUs of a small
# machine busy, in this shell, and isolation, amcheck and sql (they wait on
# round trips and initdb, about one CPU between them) beside it, each
# variant's two lanes joined before the next variant starts.  PostgreSQL's
# suites are written to run side by side (meson test runs them so); every
# suite has its own directory, server and socket directory.  CHECK_LANES=1
# runs them one after another (docs/tests.md, "Two lanes").
CHECK_LANES=${CHECK_LANES:-2}
case $CHECK_LANES in
1 | 2) ;;
*) die "CHECK_LANES must be 1 or 2, not '$CHECK_LANES'" ;;
esac

lane_cpu() {
	if want_v regress; then
		vcheck_into sql "$OBJ/src/test/regress"
		suite "regress[$v]" "$OBJ/src/test/regress/regression.diffs $OBJ/src/test/regress/log" \
			make -C "$OBJ/src/test/regress" check NO_TEMP_INSTALL=1 NO_LOCALE=1 TEMP_CONFIG="$conf" \
			EXTRA_TESTS=flexlock_variant
	fi
	if want_v recovery && [ -n "$prove_tests" ]; then
		suite "recovery[$v]" "$OBJ/src/test/recovery/tmp_check/log" \
			env FLEXLOCK_VARIANT_CHECK="$vc/check.sql" \
			make -C "$OBJ/src/test/recovery" check NO_TEMP_INSTALL=1 PROVE_TESTS="$prove_tests" TEMP_CONFIG="$conf"
	fi
}

lane_others() {
	if want_v isolation; then
		vcheck_into spec "$OBJ/src/test/isolation/output_iso"
		suite "isolation[$v]" "$OBJ/src/test/isolation/output_iso/regression.diffs $OBJ/src/test/isolation/output_iso/log" \
			make -C "$OBJ/src/test/isolation" check NO_TEMP_INSTALL=1 NO_LOCALE=1 TEMP_CONFIG="$conf" \
			EXTRA_REGRESS_OPTS=flexlock_variant
	fi
	if want_v amcheck; then
		vcheck_into sql "$OBJ/contrib/amcheck"
		suite "amcheck[$v]" "$OBJ/contrib/amcheck/regression.diffs $OBJ/contrib/amcheck/log $OBJ/contrib/amcheck/tmp_check/log" \
			make -C "$OBJ/contrib/amcheck" check NO_TEMP_INSTALL=1 NO_LOCALE=1 TEMP_CONFIG="$conf" \
			EXTRA_REGRESS_OPTS=flexlock_variant
	fi
	if want_v sql; then
		tests=$(cd "$FLEXLOCK_TOP/sql" && ls -- *.sql 2>/dev/null | sed 's/\.sql$//' | tr '\n' ' ')
		d=$CHK/sql-$v
		rm -rf "$d" && mkdir -p "$d" && hand_over "$d"
		vcheck_into sql "$d"
		# (expected/ of $d has the check's only: the others are found in inputdir)
		# shellcheck disable=SC2086
		suite "sql[$v]" "$d/regression.diffs $d/log" \
			"$pg_regress" --temp-instance="$d/tmp" --bindir="$INST/bin" \
			--inputdir="$FLEXLOCK_TOP" --expecteddir="$d" --outputdir="$d" \
			--temp-config="$conf" --no-locale $tests flexlock_variant
	fi
}

for v in "${variants[@]}"; do
	conf=$FLEXLOCK_TOP/variants/$v.conf
	vc=$CHK/variant-check/$v
	rm -rf "$vc"
	perl "$FLEXLOCK_TOP/scripts/variant-check.pl" "$conf" "$vc" ||
		die "could not write the check of variants/$v.conf (scripts/variant-check.pl)"
	hand_over "$vc"
	if [ "$CHECK_MATRIX" = light ]; then
		variant_suites=$(variant_key "$conf" light_suites) || variant_suites=$per_variant_suites
		rtests=$(variant_key "$conf" light_recovery_tests) || rtests=$(variant_key "$conf" recovery_tests) || rtests=
	else
		variant_suites=$(variant_key "$conf" full_suites) || variant_suites=$per_variant_suites
		rtests=$(variant_key "$conf" recovery_tests) || rtests=
	fi
	prove_tests=
	if want_v recovery && [ -n "$rtests" ]; then
		for t in $rtests; do
			[ -f "$TREE/src/test/recovery/t/$t.pl" ] ||
				die "variants/$v.conf names recovery test '$t', which $(rel "$TREE")/src/test/recovery/t/ lacks"
			prove_tests+="${prove_tests:+ }t/$t.pl"
		done
		prove_tests+=" $FLEXLOCK_TOP/t/variant/applied.pl"
	fi
	if [ "$CHECK_LANES" = 2 ]; then
		# the second lane's lines are printed when the variant is done
		lane_others >"$CHK/lane.out" 2>&1 &
		lane=$!
		lane_cpu
		wait $lane
		cat "$CHK/lane.out"
	else
		lane_cpu
		lane_others
	fi
done

if want tap; then
	d=$CHK/tap
	rm -rf "$d" && mkdir -p "$d" && hand_over "$d"
	# TAP_TESTS="t/005_wal_insert_locks.pl ..." runs some of them
	tap_files=()
	for f in ${TAP_TESTS:-$(cd "$FLEXLOCK_TOP" && echo t/*.pl)}; do
		f=${f#"$FLEXLOCK_TOP"/}
		[ -f "$FLEXLOCK_TOP/$f" ] || die "TAP_TESTS: no such test '$f'"
		tap_files+=("$FLEXLOCK_TOP/$f")
	done
	run_prove tap "$d" "${tap_files[@]}"
fi

if want bundle; then
	# As ourselves: the test runs the bundle as root (when we are) and as
	# the unprivileged user.
	SUITE_AS_SELF=1 suite bundle "" env FLEXLOCK_TOP="$FLEXLOCK_TOP" FLEXLOCK_BUILD="$BUILD" \
		BUNDLE_BUILDS="${BUNDLE_BUILDS:-vanilla cassert}" FLEXLOCK_USER="$FLEXLOCK_USER" \
		prove "$FLEXLOCK_TOP"/t/bundle/*.pl
fi

if want own; then
	# As ourselves: make build writes the build tree (root's in CI); its
	# servers run as the test user
	SUITE_AS_SELF=1 suite own "" env FLEXLOCK_TOP="$FLEXLOCK_TOP" FLEXLOCK_BUILD="$BUILD" \
		FLEXLOCK_USER="$FLEXLOCK_USER" prove "$FLEXLOCK_TOP"/t/own/*.pl
fi

if want aarch64; then
	# As ourselves: it builds the aarch64 install if needed and registers qemu
	# with binfmt_misc (root); its servers and tests run as the test user.
	SUITE_AS_SELF=1 suite aarch64 "$CHK/aarch64/regression.diffs $CHK/aarch64/regress.log $CHK/aarch64/server.log" \
		"$FLEXLOCK_TOP/scripts/check-aarch64.sh"
fi

total=$((SECONDS - t_start))
passed=$(grep -c '^ok ' "$RESULTS" || true)
failed=$(grep -c '^FAIL ' "$RESULTS" || true)
echo
if [ "$failed" -gt 0 ]; then
	echo "Failed suites (logs, and regression.diffs where there are any):"
	sed -n 's/^FAIL /  /p' "$RESULTS"
fi
echo "make check took $((total / 60)) min $((total % 60)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
