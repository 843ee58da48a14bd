"""make layering's analysis: the generated code and the callgrind profiles
of two builds of the LWLock paths, compared function by function.

scripts/layering.sh builds the two commits, runs them under callgrind and
calls the three steps here, each a subcommand:

  code OUTDIR LISTDIR --bin before=POSTGRES --bin after=POSTGRES
      disassemble the entry points (--funcs) and the helpers they call
      (--helpers), with their compiler-made parts (.cold, .part.N), from
      both binaries; normalise the listings so that only opcodes and
      operands modulo addresses remain; write a unified diff per function
      that differs to OUTDIR, the listings to LISTDIR/before (and
      LISTDIR/after where they differ), and print code.tsv;
  calls FUNCTIONS_TSV CALLEES_TSV FLUSH_TSV BUILD:WORKLOAD=CALLGRIND_OUT...
      read callgrind's profiles: per listed function the calls, self and
      inclusive instructions; the calls the entry points make; the
      statistics flushes' share of each run;
  report CODE_TSV FUNCTIONS_TSV CALLEES_TSV TOTALS_TSV FLUSH_TSV
      print RESULT.md's tables and its reading.

The rules of the normalisation and of the verdicts are the functions below;
bench-scripts/tests/test_layering.py checks them on known inputs.
"""

import argparse
import collections
import difflib
import os
import re
import subprocess
import sys

# the entry points and the helpers they call: set by main() (--funcs,
# --helpers), or by a caller through set_functions()
CODE = []
HELPERS = []
BUILDS = ("before", "after")


def set_functions(code, helpers):
    CODE[:] = code
    HELPERS[:] = helpers


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


def code(outdir, listdir, bins):
    """bins: {"before": path, "after": path} of the two postgres binaries"""
    listings, names = {}, {}
    for b in BUILDS:
        binary = bins[b]
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



def main(argv=None):
    ap = argparse.ArgumentParser(prog="flexlock-lab layering",
                                 description="make layering's analysis (scripts/layering.sh)")
    ap.add_argument("--funcs", required=True, help="the entry points, separated by spaces")
    ap.add_argument("--helpers", required=True, help="the helpers they call, separated by spaces")
    sub = ap.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("code", help="compare the generated code; prints code.tsv")
    c.add_argument("outdir")
    c.add_argument("listdir")
    c.add_argument("--bin", action="append", required=True, metavar="BUILD=PATH",
                   help="the postgres binary of before and of after")
    k = sub.add_parser("calls", help="read the callgrind profiles into TSV")
    k.add_argument("functions_tsv")
    k.add_argument("callees_tsv")
    k.add_argument("flush_tsv")
    k.add_argument("specs", nargs="+", metavar="BUILD:WORKLOAD=FILE")
    r = sub.add_parser("report", help="print the report's tables and reading")
    for f in ("code_tsv", "functions_tsv", "callees_tsv", "totals_tsv", "flush_tsv"):
        r.add_argument(f)
    a = ap.parse_args(argv)
    set_functions(a.funcs.split(), a.helpers.split())
    if a.mode == "code":
        bins = dict(s.split("=", 1) for s in a.bin)
        if sorted(bins) != sorted(BUILDS):
            ap.error("--bin must name before and after, once each")
        code(a.outdir, a.listdir, bins)
    elif a.mode == "calls":
        calls(a.functions_tsv, a.callees_tsv, a.flush_tsv, *a.specs)
    else:
        report(a.code_tsv, a.functions_tsv, a.callees_tsv, a.totals_tsv, a.flush_tsv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
