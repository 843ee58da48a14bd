#!/usr/bin/env bash
# scripts/layering.sh — does splitting lwlock.c into a lower layer
# (flexlock.c) and the LWLock add anything to the uncontended paths?
#
# Compares two commits of build/src:
#   BEFORE  the parent of "Prepare lwlock.c to be split into a lower layer and
#           the LWLock" (the edits), i.e. the series before the split;
#   AFTER   "Move the lower layer of lightweight locks into flexlock.c" (the
#           pure move), i.e. the split done.
# BEFORE=REV and AFTER=REV (any git revision of build/src) override them.
#
# Each is checked out as a detached worktree of build/src in
# build/layering/src-{before,after}, configured exactly like the `patched`
# build (COMMON_FLAGS and O2_CFLAGS of scripts/build-flags.sh, ccache) and
# installed (core only) in build/layering/install-{before,after}; a source
# tree already installed there is not rebuilt.  Then, for both installs:
#
#   1. the generated code: the LWLock entry points and the helpers they call
#      (with their .cold/.part parts) disassembled with objdump, normalised so
#      that only opcodes and operands modulo addresses remain (branch targets
#      inside a listed function become instruction indexes; RIP-relative
#      displacements, symbol offsets, string constants' addresses and the
#      line numbers given to errfinish() are dropped), and compared;
#   2. callgrind, as scripts/overhead.sh does it: postgres --single runs N
#      fixed select-only and TPC-B-like transactions and none; per lock
#      function the calls, self and inclusive instructions, the calls the
#      entry points make, and instructions per transaction ((N transactions
#      - none) / N), also without the clock-driven statistics flushes.
#
# Writes results/DATE-layering/ (override with RESULTS=): RESULT.md,
# a unified diff per function whose code differs (code/FUNCTION.diff), and
# the figures as TSV.  The normalised listings themselves (before/; after/
# only where the code differs) go to build/layering/code/, not to the
# results: run after run they were the same files again.
# N_SELECT and N_TPCB size the runs; LAYERING_EXTRA_FUNCS="f g" compares
# more functions as entry points.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/callgrind.sh"

N_SELECT=${N_SELECT:-4000}
N_TPCB=${N_TPCB:-1000}
RESULTS=${RESULTS:-$FLEXLOCK_TOP/results/$(date -u +%F)-layering}
WORK=$BUILD/layering
RUN=$WORK/run

PREPARE_SUBJECT="Prepare lwlock.c to be split into a lower layer and the LWLock"
MOVE_SUBJECT="Move the lower layer of lightweight locks into flexlock.c"

# The entry points whose code must not change, and the helpers they call
# (LAYERING_FUNCS and LAYERING_HELPERS name others, e.g. the executor's;
# LAYERING_EXTRA_FUNCS adds functions to the default entry points, e.g. the
# heavyweight lock and WAL functions a change touches too).
CODE_FUNCS=${LAYERING_FUNCS:-"LWLockAcquire LWLockConditionalAcquire LWLockAcquireOrWait LWLockRelease
	LWLockReleaseClearVar LWLockWaitForVar LWLockUpdateVar LWLockDisown
	LWLockReleaseDisowned LWLockHeldByMe LWLockHeldByMeInMode ${LAYERING_EXTRA_FUNCS:-}"}
HELPER_FUNCS=${LAYERING_HELPERS:-"LWLockAttemptLock LWLockWaitListLock LWLockQueueSelf LWLockDequeueSelf LWLockWakeup
	LWLockWaitListUnlock LWLockWakeList LWLockSleep"}

# Configure exactly as the patched build does: the flags of
# scripts/build-flags.sh, which scripts/build.sh reads too.
. "$(dirname "$0")/build-flags.sh"

command -v valgrind >/dev/null 2>&1 || die "valgrind is not installed ('make layering' installs it, or apt-get install valgrind)"
command -v objdump >/dev/null 2>&1 || die "objdump is not installed (apt-get install binutils)"
command -v python3 >/dev/null 2>&1 || die "python3 is not installed ('make deps')"
git -C "$TREE" rev-parse --verify -q HEAD >/dev/null 2>&1 ||
	die "$(rel "$TREE") is not a git tree with commits: run 'make tree' first"

# --- the two commits --------------------------------------------------------

# commit_by_subject SUBJECT: the one commit reachable from build/src's HEAD
# whose subject is exactly SUBJECT.
commit_by_subject() {
	local found
	found=$(git -C "$TREE" log --format='%H %s' HEAD |
		awk -v s="$1" '{ h = $1; sub(/^[^ ]* /, ""); if ($0 == s) print h }')
	[ -n "$found" ] || die "no commit \"$1\" in $(rel "$TREE") (run 'make tree' first, or name the commits with BEFORE= and AFTER=)"
	[ "$(printf '%s\n' "$found" | wc -l)" -eq 1 ] ||
		die "more than one commit \"$1\" in $(rel "$TREE"): name the commits with BEFORE= and AFTER="
	printf '%s\n' "$found"
}

resolve() {
	git -C "$TREE" rev-parse --verify -q "$1^{commit}" ||
		die "'$1' is not a commit of $(rel "$TREE")"
}

if [ -n "${BEFORE:-}" ]; then
	before=$(resolve "$BEFORE")
else
	prepare=$(commit_by_subject "$PREPARE_SUBJECT")
	before=$(resolve "$prepare^")
fi
if [ -n "${AFTER:-}" ]; then
	after=$(resolve "$AFTER")
else
	after=$(commit_by_subject "$MOVE_SUBJECT")
fi
[ "$before" != "$after" ] || die "BEFORE and AFTER are the same commit ($before)"
git -C "$TREE" merge-base --is-ancestor "$before" "$after" ||
	warn "BEFORE ($before) is not an ancestor of AFTER ($after)"
declare -A COMMIT=([before]=$before [after]=$after)
for b in before after; do
	say "$b: $(git -C "$TREE" log -1 --format='%h %s' "${COMMIT[$b]}")"
done

# --- builds -----------------------------------------------------------------

# checkout NAME COMMIT: build/layering/src-NAME is a detached worktree of
# build/src at COMMIT, without edits; recreated otherwise.
checkout() {
	local name=$1 commit=$2 wt=$WORK/src-$1
	if [ -f "$wt/.git" ] &&
		[ "$(git -C "$wt" rev-parse --verify -q HEAD 2>/dev/null)" = "$commit" ] &&
		[ -z "$(git -C "$wt" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		return 0
	fi
	if [ -e "$wt" ]; then
		git -C "$TREE" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
	fi
	mkdir -p "$WORK"
	# -f: the path may still be registered if build/layering was removed.
	run_logged "$LOGS/layering-worktree-$name.log" "checkout of $name ($commit)" "" \
		git -C "$TREE" worktree add -f --detach "$wt" "$commit"
}

build_one() {
	local name=$1 commit=$2 src=$WORK/src-$1 obj=$WORK/obj-$1 inst=$WORK/install-$1
	local stamp=$WORK/install-$1/.flexlock-layering flags id cc conf t0=$SECONDS
	# shellcheck disable=SC2206
	flags=("${COMMON_FLAGS[@]}" --prefix="$inst" ${PG_CONFIGURE_EXTRA:-})
	# the tree, not the commit: a reworded or rebased commit with the same
	# content needs no new build
	id="$(git -C "$TREE" rev-parse "$commit^{tree}")|${flags[*]}|$O2_CFLAGS"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$id" ] && [ -x "$inst/bin/postgres" ]; then
		say "$name: the tree of $(git -C "$TREE" log -1 --format=%h "$commit") is already installed ($(rel "$inst"))"
		return 0
	fi
	checkout "$name" "$commit"
	ccache_env >/dev/null
	cc=$(ccache_env)
	conf="$(git -C "$TREE" rev-parse "$commit^{tree}")|$cc|${flags[*]}|$O2_CFLAGS"
	if [ ! -f "$obj/config.status" ] || [ "$(cat "$obj/.flexlock-configure" 2>/dev/null)" != "$conf" ]; then
		say "$name: configuring"
		rm -rf "$obj" && mkdir -p "$obj"
		(cd "$obj" && run_logged "$LOGS/layering-configure-$name.log" "configure of the $name build" \
			"install what it names ('make deps') or adjust PG_CONFIGURE_EXTRA" \
			"$src/configure" "${flags[@]}" CC="$cc" CFLAGS="$O2_CFLAGS")
		echo "$conf" >"$obj/.flexlock-configure"
	fi
	say "$name: building with $JOBS jobs (log: $(rel "$LOGS/layering-build-$name.log"))"
	run_logged "$LOGS/layering-build-$name.log" "build of $name" "" make -C "$obj" -s -j"$JOBS"
	rm -rf "$inst"
	run_logged "$LOGS/layering-install-$name.log" "install of $name" "" make -C "$obj" -s install
	echo "$id" >"$stamp"
	say "$name: installed in $(rel "$inst") ($((SECONDS - t0)) s)"
}

for b in before after; do
	build_one "$b" "${COMMIT[$b]}"
done

# --- analysis (python) -------------------------------------------------------

# analyse MODE ARGS...: the analysis, bench-scripts/flexbench/layering.py
# (its docstring says what each mode reads and writes).
analyse() {
	"${FLEXLAB[@]}" layering \
		--funcs "$CODE_FUNCS" --helpers "$HELPER_FUNCS" "$@"
}

mkdir -p "$RESULTS"
rm -rf "$RESULTS/code" "$WORK/code"
mkdir -p "$RESULTS/code" "$WORK/code"
say "comparing the generated code"
analyse code "$RESULTS/code" "$WORK/code" \
	--bin before="$WORK/install-before/bin/postgres" --bin after="$WORK/install-after/bin/postgres" \
	>"$RESULTS/code.tsv" ||
	die "disassembly failed"

# --- callgrind ----------------------------------------------------------------

ensure_test_user
rm -rf "$RUN" && mkdir -p "$RUN"
hand_over "$RUN"

cg_scripts "$RUN" "$N_SELECT" "$N_TPCB"
trap cg_cleanup EXIT

# instructions BUILD WORKLOAD: total instructions of one single-user run; the
# profile is left in $RUN/BUILD-WORKLOAD.callgrind.out.  Both builds run in
# the same data directory path: path lengths change the instructions string
# functions take.
instructions() {
	cg_instructions "$WORK/install-$1/bin/postgres" "$RUN/$1/template" "$RUN/data" "$RUN/$2.sql" \
		"$RUN/$1-$2.callgrind" --dump-instr=no
}

: >"$RESULTS/totals.tsv"
for b in before after; do
	bin=$WORK/install-$b/bin
	say "$b: initialising pgbench data (scale 1)"
	mkdir -p "$RUN/$b" && hand_over "$RUN/$b"
	cg_template "$bin" "$RUN/$b/template" 5497 "$RUN/$b-init.log"
	base=$(instructions "$b" empty)
	for w in select tpcb; do
		n=$N_SELECT; [ "$w" = tpcb ] && n=$N_TPCB
		say "$b: $w, $n transactions under callgrind"
		total=$(instructions "$b" "$w")
		printf '%s\t%s\t%d\t%d\t%d\t%d\n' "$b" "$w" "$n" "$total" "$base" $(((total - base) / n)) >>"$RESULTS/totals.tsv"
	done
done

say "reading the profiles"
analyse calls "$RESULTS/callgrind.tsv" "$RESULTS/callees.tsv" "$RESULTS/flush.tsv" \
	"before:empty=$RUN/before-empty.callgrind.out" "after:empty=$RUN/after-empty.callgrind.out" \
	"before:select=$RUN/before-select.callgrind.out" "after:select=$RUN/after-select.callgrind.out" \
	"before:tpcb=$RUN/before-tpcb.callgrind.out" "after:tpcb=$RUN/after-tpcb.callgrind.out" ||
	die "reading the callgrind profiles failed"

# --- the report -----------------------------------------------------------------

{
	echo "# ${LAYERING_TITLE:-Splitting lwlock.c: the uncontended LWLock paths before and after}"
	echo
	echo "Measured $(date -u +%Y-%m-%d) with \`make layering\` (scripts/layering.sh)."
	echo
	echo "- before: $(git -C "$TREE" log -1 --format='%h (%s)' "$before")"
	echo "- after: $(git -C "$TREE" log -1 --format='%h (%s)' "$after")"
	echo "- commits in between (after back to before, exclusive):"
	git -C "$TREE" log --format='  - %h %s' "$before..$after"
	echo
	echo "Callgrind (valgrind --tool=callgrind --dump-instr=no) counts instructions (Ir) exactly.  Single-user"
	echo "mode (\`postgres --single\`), one process, so every lock acquisition is uncontended; the same"
	echo "statements for both builds, as in \`make overhead\`.  Instructions per transaction: (instructions"
	echo "of N transactions - instructions of none) / N.  Per function, over the whole run of N"
	echo "transactions (start-up and shut-down included), summed over all callers: calls, self Ir (the"
	echo "function's own instructions) and inclusive Ir (with the functions it calls).  A function the"
	echo "compiler inlined into its caller is not a function here: its cost is its caller's.  A jump into"
	echo "another function (a tail call, a .cold part) counts as a call."
	echo
	echo "Not everything is deterministic.  A backend flushes its pending statistics from"
	echo "pgstat_report_stat() at most once a second of wall-clock time (PGSTAT_MIN_INTERVAL), taking the"
	echo "entries' locks (LWLockConditionalAcquire, LWLockAcquire), and the next transactions create the"
	echo "flushed entries again.  Under valgrind the number of flushes follows the machine's speed and"
	echo "load, so two runs of the same build differ a little in the calls of those functions and in"
	echo "instructions per transaction; the instructions per call of code on a fixed path do not differ."
	echo "Instructions per transaction are also given without pgstat_report_stat() and its callees,"
	echo "which removes most of that variation, not all of it."
	echo
	echo "Generated code: \`objdump -d --no-show-raw-insn\` of each function and its compiler-made parts"
	echo "(.cold, .part.N), normalised: addresses dropped, branch targets inside a listed function"
	echo "written as instruction indexes (<fn:Ln>), other targets as symbols without offset, RIP-relative"
	echo "displacements as ADDR(%rip), data symbols without address, offset and .N numbering, and the"
	echo "source line number passed to errfinish() (an ereport's __LINE__, which moves with the source) as"
	echo "\$LINE.  A unified diff per function that differs is in code/FUNCTION.diff.  The listings"
	echo "themselves are not kept here: \`make layering BEFORE=rev AFTER=rev\` writes them to"
	echo "build/layering/code/before, and to code/after where the code differs; the figures as TSV in"
	echo "totals.tsv, callgrind.tsv (build, workload,"
	echo "function, symbol, calls, self Ir, inclusive Ir), callees.tsv (calls the entry points make),"
	echo "flush.tsv (build, workload, total Ir, inclusive Ir of pgstat_report_stat) and code.tsv."
	echo
	analyse report "$RESULTS/code.tsv" "$RESULTS/callgrind.tsv" "$RESULTS/callees.tsv" "$RESULTS/totals.tsv" "$RESULTS/flush.tsv" ||
		die "writing the report failed"
	echo
	echo "## Settings and builds"
	echo
	echo "- select: pgbench's select-only transaction ($N_SELECT); tpcb: pgbench's TPC-B-like transaction, 5 statements ($N_TPCB)."
	echo "- Settings: ${CG_SETTINGS[*]}; data from initdb --no-sync and pgbench -i -s 1, then VACUUM ANALYZE and CHECKPOINT."
	echo "- Both builds: $("$WORK/install-after/bin/pg_config" --version) from $(rel "$TREE"), configured like \`patched\`: $(sed -n 's/^  \$ .*configure //p' "$WORK/obj-after/config.log" | head -n1 | sed "s|$WORK/install-after|PREFIX|")"
	echo "- Compiler: $(gcc --version | head -n1); $(objdump --version | head -n1)"
	echo "- Machine: $(cg_machine)"
} >"$RESULTS/RESULT.md.new"
mv "$RESULTS/RESULT.md.new" "$RESULTS/RESULT.md"
cat "$RESULTS/RESULT.md"
