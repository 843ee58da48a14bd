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
# build (scripts/build.sh's COMMON_FLAGS and O2_CFLAGS, ccache) and installed
# (core only) in build/layering/install-{before,after}; a source tree already
# installed there is not rebuilt.  Then, for both installs:
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

# Configure exactly as the patched build does: take the flags from build.sh
# itself, so that the two cannot drift apart.
COMMON_FLAGS=()
eval "$(sed -n -e '/^COMMON_FLAGS=(/p' -e '/^O2_CFLAGS=/p' "$FLEXLOCK_TOP/scripts/build.sh")"
if [ ${#COMMON_FLAGS[@]} -eq 0 ] || [ -z "${O2_CFLAGS:-}" ]; then
	die "could not read COMMON_FLAGS and O2_CFLAGS from scripts/build.sh"
fi

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

# analyse MODE ARGS...: see the modes at the end of the program.
analyse() {
	CODE_FUNCS="$CODE_FUNCS" HELPER_FUNCS="$HELPER_FUNCS" python3 - "$@" <<'PY'
import collections, difflib, os, re, subprocess, sys

CODE = os.environ["CODE_FUNCS"].split()
HELPERS = os.environ["HELPER_FUNCS"].split()
BUILDS = ("before", "after")


def die(msg):
    sys.exit("flexlock: " + msg)


def parts_of(base, names):
    """base and its compiler-made parts (base.cold, base.part.0, ...)"""
    found = [n for n in names if n == base or n.startswith(base + ".")]
    return sorted(found, key=lambda n: (n != base, n))


def base_of(name):
    for base in CODE + HELPERS:
        if name == base or name.startswith(base + "."):
            return base
    return None


# --- generated code ---------------------------------------------------------

def text_symbols(binary):
    syms = {}
    out = subprocess.run(["nm", "-S", "--defined-only", binary], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTW":
            if f[3] in syms and syms[f[3]] != (int(f[0], 16), int(f[1], 16)):
                syms[f[3]] = None           # ambiguous: two local symbols
            else:
                syms[f[3]] = (int(f[0], 16), int(f[1], 16))
    return syms


INSN = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
TARGET = re.compile(r"\b([0-9a-f]+) <([^>+]+)(\+0x[0-9a-f]+)?>")
RIP = re.compile(r"-?0x[0-9a-f]+\(%rip\)")
IMM = re.compile(r"\$-?0x[0-9a-f]+")


def disassemble(binary, addr, size):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                          "--start-address=%#x" % addr,
                          "--stop-address=%#x" % (addr + size), binary],
                         check=True, capture_output=True, text=True).stdout
    return [(int(m.group(1), 16), m.group(2))
            for m in map(INSN.match, out.splitlines()) if m]


def rodata_ranges(binary):
    out = subprocess.run(["objdump", "-h", binary], check=True,
                         capture_output=True, text=True).stdout
    ranges = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0].isdigit() and f[1].startswith(".rodata"):
            ranges.append((int(f[3], 16), int(f[3], 16) + int(f[2], 16)))
    return ranges


def normalise(text, index, rodata):
    """opcode and operands modulo addresses; index: address -> (part, n)"""
    text, _, comment = text.partition("#")

    def target(m):
        addr, sym, off = int(m.group(1), 16), m.group(2), m.group(3)
        if addr in index:
            part, n = index[addr]
            return "<%s>" % part if n == 0 else "<%s:L%d>" % (part, n)
        return "<%s%s>" % (sym, "+OFF" if off else "")

    text = RIP.sub("ADDR(%rip)", TARGET.sub(target, text))
    text = " ".join(text.split())
    m = re.search(r"([0-9a-f]+) <([^>+]+)(\+0x[0-9a-f]+)?>", comment)
    if m:
        addr = int(m.group(1), 16)
        if m.group(3) and any(lo <= addr < hi for lo, hi in rodata):
            # inside a read-only object, or an anonymous constant (a string
            # literal) that objdump names after the nearest symbol
            text += " # <.rodata>"
        else:
            # data: keep the symbol, not its address, offset or numbering
            text += " # <%s>" % re.sub(r"\.\d+$", ".N", m.group(2))
    return text


def source_lines(listing):
    """errfinish(filename, lineno, funcname): the line number of an ereport
    is where the source sits in its file, not code; write it as $LINE"""
    out = list(listing)
    for i, insn in enumerate(out):
        if insn == "call <errfinish>":
            for j in range(i - 1, max(i - 8, -1), -1):
                if re.match(r"mov \$0x[0-9a-f]+,%esi$", out[j]):
                    out[j] = "mov $LINE,%esi"
                    break
    return out


def code(outdir, listdir):
    listings, names = {}, {}
    for b in BUILDS:
        binary = os.environ["BIN_" + b]
        syms = text_symbols(binary)
        wanted = {}
        for base in CODE + HELPERS:
            for p in parts_of(base, syms):
                if syms[p] is None:
                    die("%s: more than one symbol %s" % (binary, p))
                wanted[p] = syms[p]
        insns = {p: disassemble(binary, *wanted[p]) for p in wanted}
        index = {a: (p, n) for p in insns for n, (a, _) in enumerate(insns[p])}
        rodata = rodata_ranges(binary)
        for p in insns:
            listings[b, p] = source_lines([normalise(t, index, rodata) for _, t in insns[p]])
        names[b] = set(wanted)
    for base in CODE + HELPERS:
        for p in parts_of(base, names["before"] | names["after"]):
            lb, la = listings.get(("before", p)), listings.get(("after", p))
            for b, lst in (("before", lb), ("after", la)):
                # code/after holds only what differs from code/before
                if lst is not None and not (b == "after" and lst == lb):
                    os.makedirs(os.path.join(listdir, b), exist_ok=True)
                    with open(os.path.join(listdir, b, p + ".s"), "w") as f:
                        f.write("".join(x + "\n" for x in lst))
            if lb is None or la is None:
                status = "only " + ("after" if lb is None else "before")
            elif lb == la:
                status = "identical"
            elif [IMM.sub("$IMM", x) for x in lb] == [IMM.sub("$IMM", x) for x in la]:
                status = "constants"
            else:
                status = "differs"
            plus = minus = 0
            if status in ("differs", "constants"):
                diff = list(difflib.unified_diff(
                    lb or [], la or [], "before/%s.s" % p, "after/%s.s" % p, lineterm=""))
                plus = sum(1 for x in diff if x.startswith("+") and not x.startswith("+++"))
                minus = sum(1 for x in diff if x.startswith("-") and not x.startswith("---"))
                with open(os.path.join(outdir, p + ".diff"), "w") as f:
                    f.write("".join(x + "\n" for x in diff))
            print("\t".join(map(str, (base, p, len(lb) if lb is not None else -1,
                                      len(la) if la is not None else -1, status, plus, minus))))


# --- callgrind --------------------------------------------------------------

def parse_callgrind(path):
    """Per function: self cost (Ir), calls received, and the inclusive cost
    of the calls it makes; per caller and callee: calls.  A jump into another
    function (a tail call, a .cold part) is a call for callgrind."""
    ids = {}
    selfc, ncalls, callcost = collections.Counter(), collections.Counter(), collections.Counter()
    calleecost = collections.Counter()
    edges = collections.Counter()
    fn = cfn = None
    npos, ev, total, incall = 1, 0, None, False

    def name(s):
        m = re.match(r"\((\d+)\)(?: (.*))?$", s.strip())
        if not m:
            return s.strip()
        if m.group(2) is not None:
            ids[m.group(1)] = m.group(2)
        return ids[m.group(1)]

    with open(path) as f:
        for line in f:
            c = line[:1]
            if c and (c.isdigit() or c in "+-*"):
                v = line.split()
                cost = int(v[npos + ev]) if len(v) > npos + ev else 0
                if incall:          # the inclusive cost of the call just read
                    callcost[fn] += cost
                    calleecost[cfn] += cost
                    incall = False
                else:
                    selfc[fn] += cost
            elif line.startswith("fn="):
                fn = name(line[3:])
            elif line.startswith("cfn="):
                cfn = name(line[4:])
            elif line.startswith("calls="):
                n = int(line[6:].split()[0])
                ncalls[cfn] += n
                edges[fn, cfn] += n
                incall = True
            elif line.startswith("positions:"):
                npos = len(line.split()) - 1
            elif line.startswith("events:"):
                ev = line.split()[1:].index("Ir")
            elif line.startswith(("totals:", "summary:")):
                total = int(line.split()[1 + ev])
    if total is None or sum(selfc.values()) != total:
        die("%s: self costs add up to %d, not the total %s" % (path, sum(selfc.values()), total))
    return selfc, ncalls, callcost, edges, total, calleecost[FLUSH]


# A backend flushes its pending statistics from here, at most once a second
# of wall-clock time: the one part of a run that depends on the clock.
FLUSH = "pgstat_report_stat"


def calls(functions_tsv, callees_tsv, flush_tsv, *specs):
    """specs: BUILD:WORKLOAD=FILE"""
    data, names = {}, set()
    for spec in specs:
        key, path = spec.split("=", 1)
        b, w = key.split(":")
        data[b, w] = parse_callgrind(path)
        names |= {n for n in list(data[b, w][0]) + list(data[b, w][1]) if n}
    with open(flush_tsv, "w") as out:
        for (b, w), d in data.items():
            out.write("\t".join(map(str, (b, w, d[4], d[5]))) + "\n")
    data = {k: v for k, v in data.items() if k[1] != "empty"}
    with open(functions_tsv, "w") as out:
        for (b, w), (selfc, ncalls, callcost, _, _, _) in data.items():
            for base in CODE + HELPERS:
                for p in parts_of(base, names):
                    out.write("\t".join(map(str, (b, w, base, p, ncalls[p], selfc[p],
                                                  selfc[p] + callcost[p]))) + "\n")
    pairs = sorted({(caller, callee) for (_, _, _, e, _, _) in data.values() for caller, callee in e
                    if caller and callee and base_of(caller) in CODE},
                   key=lambda x: (CODE.index(base_of(x[0])), x[0], x[1]))
    with open(callees_tsv, "w") as out:
        for (b, w), (_, _, _, edges, _, _) in data.items():
            for caller, callee in pairs:
                out.write("\t".join(map(str, (b, w, caller, callee, edges[caller, callee]))) + "\n")


# --- report -----------------------------------------------------------------

def read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def per_call(ir, n):
    return "%.2f" % (ir / n) if n else "—"


def delta(a, b, pct=True):
    d = b - a
    if d == 0:
        return "0"
    s = "%+d" % d
    return s + (" (%+.2f%%)" % (d * 100 / a) if pct and a else "")


def per_call_delta(ia, na, ib, nb):
    """difference of ib/nb and ia/na, exactly 0 when equal"""
    if not (na and nb):
        return "—"
    if ib * na == ia * nb:
        return "0"
    d = ib / nb - ia / na
    s = ("%+.2f" if abs(d) >= 0.005 else "%+.1e") % d
    return s + (" (%+.2f%%)" % (d * 100 / (ia / na)) if ia else "")


def report(code_tsv, functions_tsv, callees_tsv, totals_tsv, flush_tsv):
    out = []
    workloads, fns, cg = [], collections.defaultdict(list), {}
    for b, w, base, p, n, s, i in read_tsv(functions_tsv):
        cg[b, w, p] = (int(n), int(s), int(i))
        if (base, p) not in fns[w]:
            fns[w].append((base, p))
        if w not in workloads:
            workloads.append(w)
    edges, pairs = {}, collections.defaultdict(list)
    for b, w, caller, callee, n in read_tsv(callees_tsv):
        edges[b, w, caller, callee] = int(n)
        if (caller, callee) not in pairs[w]:
            pairs[w].append((caller, callee))
    totals = {(b, w): (int(n), int(t), int(e), int(pt))
              for b, w, n, t, e, pt in read_tsv(totals_tsv)}
    code_rows = [(base, p, int(nb), int(na), st, int(pl), int(mi))
                 for base, p, nb, na, st, pl, mi in read_tsv(code_tsv)]
    flush = {(b, w): (int(t), int(f)) for b, w, t, f in read_tsv(flush_tsv)}

    def noflush(b, w):
        """instructions per transaction without the statistics flushes"""
        (t, f), (te, fe) = flush[b, w], flush[b, "empty"]
        return ((t - f) - (te - fe)) // totals[b, w][0]

    out.append("## Instructions per transaction")
    out.append("")
    out.append("The last three columns leave out %s() and what it calls (the statistics flushes, "
               "whose number follows the wall clock)." % FLUSH)
    out.append("")
    out.append("| workload | transactions | before | after | difference | before, no flushes "
               "| after, no flushes | difference |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for w in workloads:
        n, pb, pa = totals["before", w][0], totals["before", w][3], totals["after", w][3]
        qb, qa = noflush("before", w), noflush("after", w)
        out.append("| %s | %d | %d | %d | %s | %d | %d | %s |" % (w, n, pb, pa, delta(pb, pa), qb, qa, delta(qb, qa)))
    out.append("")

    changed = collections.defaultdict(list)
    for w in workloads:
        out.append("## Lock functions, %s" % w)
        out.append("")
        out.append("%d transactions; calls over the whole run (start-up and shut-down included); "
                   "Ir per call: self (the function's own instructions) and inclusive (with what it calls)."
                   % totals["before", w][0])
        out.append("")
        out.append("| function | calls before | calls after | self Ir/call before | self Ir/call after "
                   "| self difference | incl. Ir/call before | incl. Ir/call after | incl. difference |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for base, p in fns[w]:
            nb, sb, ib = cg.get(("before", w, p), (0, 0, 0))
            na, sa, ia = cg.get(("after", w, p), (0, 0, 0))
            if nb == na == 0 and sb == sa == 0:
                continue
            out.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s |" % (
                p, nb, na, per_call(sb, nb), per_call(sa, na), per_call_delta(sb, nb, sa, na),
                per_call(ib, nb), per_call(ia, na), per_call_delta(ib, nb, ia, na)))
            if nb != na or sb * na != sa * nb or ib * na != ia * nb or (nb == 0) != (na == 0):
                changed[w].append((base, p, nb, na, sb, sa, ib, ia))
        absent = [f for f in CODE + HELPERS
                  if not any(base == f and (cg.get(("before", w, p), (0,))[0] or cg.get(("after", w, p), (0,))[0])
                             for base, p in fns[w])]
        if absent:
            out.append("")
            out.append("Not called as a function in this workload by either build (inlined into its "
                       "callers, or not reached): %s." % ", ".join(absent))
        out.append("")
        out.append("Calls made by the entry points (callee: calls before -> after):")
        out.append("")
        out.append("| caller | callee | calls before | calls after |")
        out.append("|---|---|---:|---:|")
        for caller, callee in pairs[w]:
            cb, ca = edges.get(("before", w, caller, callee), 0), edges.get(("after", w, caller, callee), 0)
            out.append("| %s | %s | %d | %d |" % (caller, callee, cb, ca))
        out.append("")

    out.append("## Generated code (objdump, normalised)")
    out.append("")
    out.append("The entry points first, then the helpers they call (static, or in flexlock.c after the move).")
    out.append("")
    out.append("| function | instructions before | instructions after | normalised code |")
    out.append("|---|---:|---:|---|")
    for base, p, nb, na, st, pl, mi in code_rows:
        note = {"differs": "differs: -%d +%d lines, [diff](code/%s.diff)" % (mi, pl, p),
                "constants": "same instructions, %d with other constants, [diff](code/%s.diff)" % (pl, p)}.get(st, st)
        out.append("| %s | %s | %s | %s |" % (p, nb if nb >= 0 else "—", na if na >= 0 else "—", note))
    missing = [f for f in CODE + HELPERS if not any(r[0] == f for r in code_rows)]
    if missing:
        out.append("")
        out.append("No symbol in either binary (inlined into every caller): %s." % ", ".join(missing))
    out.append("")

    out.append("## Reading")
    out.append("")
    diff_code = [r for r in code_rows if r[4] != "identical"]
    same_code = {r[1]: r[4] == "identical" for r in code_rows}
    if not diff_code:
        out.append("- Generated code: all %d listed functions (%d symbols with their .cold/.part parts) are "
                   "identical before and after, instruction for instruction, modulo addresses."
                   % (len({r[0] for r in code_rows}), len(code_rows)))
    else:
        out.append("- Generated code: %d of %d symbols (the functions and their .cold/.part parts) are "
                   "identical modulo addresses; these are not:" % (len(code_rows) - len(diff_code), len(code_rows)))
        for base, p, nb, na, st, pl, mi in diff_code:
            if st == "constants":
                out.append("  - %s: the same %d instructions, %d of them with other immediate constants "
                           "(code/%s.diff)." % (p, nb, pl, p))
            elif st == "differs":
                out.append("  - %s: %d -> %d instructions (%s); the normalised listings differ in %d "
                           "removed and %d added lines (code/%s.diff)." % (p, nb, na, delta(nb, na, False), mi, pl, p))
            else:
                out.append("  - %s: exists %s." % (p, st))
    for w in workloads:
        api = [c for c in changed[w] if c[0] in CODE]
        if not changed[w]:
            out.append("- Callgrind, %s: every listed function has the same calls and the same self and "
                       "inclusive instructions before and after." % w)
            continue
        out.append("- Callgrind, %s: %s" % (w, "the entry points are unchanged; helpers differ:" if not api
                                            else "these differ (calls, self and inclusive Ir per call):"))
        for base, p, nb, na, sb, sa, ib, ia in changed[w]:
            note = ""
            if same_code.get(p) and nb and na:
                note = " Its code is identical: the difference is in the calls it gets (their number or the paths they take)."
            out.append("  - %s: calls %d -> %d (%s); self Ir/call %s -> %s (%s); inclusive Ir/call %s -> %s (%s); "
                       "self Ir over the run %d -> %d (%s).%s"
                       % (p, nb, na, delta(nb, na), per_call(sb, nb), per_call(sa, na),
                          per_call_delta(sb, nb, sa, na), per_call(ib, nb), per_call(ia, na),
                          per_call_delta(ib, nb, ia, na), sb, sa, delta(sb, sa, False), note))
    for w in workloads:
        n, pb, pa = totals["before", w][0], totals["before", w][3], totals["after", w][3]
        tb = sum(cg.get(("before", w, p), (0, 0, 0))[1] for _, p in fns[w])
        ta = sum(cg.get(("after", w, p), (0, 0, 0))[1] for _, p in fns[w])
        ob, oa = totals["before", w][1] - tb, totals["after", w][1] - ta
        qb, qa = noflush("before", w), noflush("after", w)
        out.append("- Instructions per transaction, %s: %d -> %d (%s); without the statistics flushes %d -> %d "
                   "(%s).  Over the whole run of %d transactions, the listed lock functions' self Ir went "
                   "%d -> %d (%s, %+.1f per transaction), all other functions' %d -> %d (%s, %+.1f per "
                   "transaction)."
                   % (w, pb, pa, delta(pb, pa), qb, qa, delta(qb, qa), n, tb, ta, delta(tb, ta), (ta - tb) / n,
                      ob, oa, delta(ob, oa), (oa - ob) / n))
    api_const = sorted({r[0] for r in diff_code if r[0] in CODE and r[4] == "constants"})
    api_code = sorted({r[0] for r in diff_code if r[0] in CODE and r[4] != "constants"})
    api_const = [f for f in api_const if f not in api_code]
    api_cg = sorted({c[0] for w in workloads for c in changed[w]
                     if c[0] in CODE and c[6] * c[3] != c[7] * c[2]})
    if not api_code and not api_cg:
        out.append("- Uncontended paths: unchanged.  The entry points' code is identical modulo addresses%s, "
                   "and they execute the same instructions per call, callees included, in both workloads."
                   % (" (but for immediate constants in %s)" % ", ".join(api_const) if api_const else ""))
    else:
        same = [f for f in api_cg if f not in api_code]
        out.append("- Uncontended paths: not shown unchanged.  Code differs in: %s%s.  Inclusive instructions "
                   "per call differ in: %s%s." % (
                       ", ".join(api_code) or "none",
                       " (and only in immediate constants in %s)" % ", ".join(api_const) if api_const else "",
                       ", ".join(f for f in api_cg if f in api_code) or "none",
                       "; and in %s, whose code is identical (other calls, or calls on other paths)" % ", ".join(same)
                       if same else ""))
    print("\n".join(out))


mode, args = sys.argv[1], sys.argv[2:]
{"code": code, "calls": calls, "report": report}[mode](*args)
PY
}

mkdir -p "$RESULTS"
rm -rf "$RESULTS/code" "$WORK/code"
mkdir -p "$RESULTS/code" "$WORK/code"
say "comparing the generated code"
BIN_before=$WORK/install-before/bin/postgres BIN_after=$WORK/install-after/bin/postgres \
	analyse code "$RESULTS/code" "$WORK/code" >"$RESULTS/code.tsv" ||
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
