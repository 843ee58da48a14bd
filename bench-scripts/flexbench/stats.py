"""Statistics: ratios of interleaved runs with a distribution-free interval.

Runs of the same workload, client count and repetition were made one after
the other (A B A B ...), so each repetition gives a natural pair and a ratio
r_i = tps(config) / tps(reference).  A point's ratio is the median of its n
paired ratios; its interval is the order-statistic (binomial) confidence
interval for that median: with the ratios sorted, [r_(k), r_(n+1-k)] covers
the true median with probability 1 - 2 P(B <= k - 1), B ~ Binomial(n, 1/2),
whatever the ratios' distribution (it assumes only independent pairs).  We
take the narrowest such interval covering at least TARGET_COVERAGE, or min..max
when none does, and report its actual coverage: n = 3 gives min..max at 75%,
n = 5 at 93.8%, n = 6 at 96.9%, n = 9 r_(2)..r_(8) at 96.1%.

The verdict never calls noise an effect: "faster" (or "slower") only when the
whole interval lies above (below) 1 and its coverage is at least
MIN_COVERAGE; "no difference" when the interval contains 1; "too few reps"
when n pairs cannot reach MIN_COVERAGE (fewer than 5).
"""

import math
import statistics

TARGET_COVERAGE = 0.95
MIN_COVERAGE = 0.90


def coverage(n, k):
    """Coverage of [x_(k), x_(n+1-k)] for the median of n samples."""
    if n < 1 or k < 1 or 2 * k > n + 1:
        return 0.0
    tail = sum(math.comb(n, i) for i in range(k)) / 2 ** n
    return 1.0 - 2.0 * tail


def median_interval(values):
    """(median, low, high, coverage) of values (any order); the interval as
    described above.  None for no values."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        return None
    k = 1
    while coverage(n, k + 1) >= TARGET_COVERAGE:
        k += 1
    return statistics.median(xs), xs[k - 1], xs[n - k], coverage(n, k)


def min_pairs():
    """The fewest pairs whose min..max reaches MIN_COVERAGE."""
    n = 1
    while coverage(n, 1) < MIN_COVERAGE:
        n += 1
    return n


def verdict(low, high, cov):
    if cov < MIN_COVERAGE:
        return "too few reps"
    if low > 1.0:
        return "faster"
    if high < 1.0:
        return "slower"
    return "no difference"


def paired_ratios(runs, ref_runs):
    """Ratios of runs to reference runs of the same repetition; runs and
    ref_runs are {rep: tps}.  Repetitions without a partner (an
    interrupted matrix) are left out."""
    return [runs[r] / ref_runs[r] for r in sorted(runs) if r in ref_runs and ref_runs[r] > 0]


def compare(runs, ref_runs):
    """{'ratio', 'low', 'high', 'coverage', 'n', 'verdict'} of one point, or
    None without pairs."""
    ratios = paired_ratios(runs, ref_runs)
    if not ratios:
        return None
    med, lo, hi, cov = median_interval(ratios)
    return {"ratio": med, "low": lo, "high": hi, "coverage": cov, "n": len(ratios),
            "verdict": verdict(lo, hi, cov)}


def variant_reference(variant):
    """The variant a variant is compared with: flexlock_test.bench_reference
    of variants/VARIANT.conf (a variant that changes one thing on top of
    another, e.g. spinlock LWLocks with the fast path off against the fast
    path off alone), else stock."""
    try:
        from flexbench import config
        ref = config.variant_conf(variant).get("flexlock_test.bench_reference")
    except Exception:  # a variant of an old run that no longer exists
        ref = None
    return ref or "stock"


def reference(cfg, cfgs):
    """The configuration a (build, variant) is compared with: a variant with
    its build's reference variant (variant_reference) if that ran, else its
    build's stock; a build's stock with its base's stock (vanilla/stock for
    ours, the base a user's build was laid on for theirs: flexbench/builds.py).
    None for the reference itself or when the reference did not run."""
    build, variant = cfg
    if variant != "stock":
        ref = (build, variant_reference(variant))
        if ref not in cfgs:
            ref = (build, "stock")
    else:
        from . import builds
        base = builds.base(build)
        if base is None:
            return None
        ref = (base, "stock")
    return ref if ref in cfgs else None


def method_text():
    return (f"Ratio: for each repetition, the run of a build/variant divided by the run of its reference "
            f"made right beside it (interleaved, so each repetition is a pair); the table shows the median "
            f"of these paired ratios and, in brackets, the order-statistic (binomial) confidence interval "
            f"for that median: the narrowest [r(k), r(n+1-k)] of the sorted ratios covering at least "
            f"{TARGET_COVERAGE:.0%}, or min..max when none does, with its exact coverage (n = 3 pairs: "
            f"min..max covers {coverage(3, 1):.0%}; n = 6: {coverage(6, 1):.1%}). It assumes only independent "
            f"pairs, no distribution. Verdict: *faster* or *slower* only when the whole interval lies above "
            f"or below 1 with coverage of at least {MIN_COVERAGE:.0%}; *no difference* when it contains 1; "
            f"*too few reps* below {min_pairs()} pairs, which cannot reach that coverage. Reference: a "
            f"variant is compared with its build's stock (or with the variant its config names in "
            f"flexlock_test.bench_reference, when that ran), a build's stock with vanilla/stock, "
            f"a build of your own (make build) with the stock of the build it was laid on.")


# The LWLock sleep-time histograms (storage/lockstats.h): bucket 0 below
# 2^10 ns, bucket b from 2^(b+9) to 2^(b+10) ns, the last (23) open.
HIST_FIRST_SHIFT = 10
HIST_BUCKETS = 24


def hist_bounds_us(b):
    """(lower, upper) of bucket b in microseconds; the open last bucket is
    given twice its lower bound, which a quantile there can only estimate."""
    lo = 0.0 if b == 0 else 2.0 ** (b + HIST_FIRST_SHIFT - 1) / 1000
    hi = 2.0 ** (b + HIST_FIRST_SHIFT) / 1000
    return lo, hi


def hist_quantile_us(buckets, q):
    """The q-quantile (0 < q <= 1) of a sleep-time histogram {bucket: count}
    in microseconds, interpolated linearly within its bucket, as the flexlock
    extension's views compute it (there capped by the longest sleep); None
    for an empty histogram."""
    counts = {int(b): int(n) for b, n in buckets.items() if int(n) > 0}
    total = sum(counts.values())
    if total == 0:
        return None
    target = max(1, math.ceil(q * total))
    cum = 0
    for b in sorted(counts):
        c = counts[b]
        if cum + c >= target:
            lo, hi = hist_bounds_us(b)
            return lo + (hi - lo) * (target - cum) / c
        cum += c
    return None
