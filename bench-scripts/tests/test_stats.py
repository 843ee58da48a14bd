"""Paired ratios, order-statistic intervals and verdicts, on matrices with
known answers."""

import random
import unittest

from flexbench import stats


def matrix(n, shift, spread, seed):
    """n interleaved pairs: a reference around 1000 tps with drift, the
    other run of the pair shifted by `shift` with multiplicative noise."""
    rnd = random.Random(seed)
    ref, other = {}, {}
    for rep in range(1, n + 1):
        drift = 1000 * rnd.uniform(0.9, 1.1)      # the machine moves; both runs of a pair see it
        ref[rep] = drift * rnd.gauss(1.0, spread)
        other[rep] = drift * shift * rnd.gauss(1.0, spread)
    return other, ref


class IntervalTest(unittest.TestCase):
    def test_coverage_is_binomial(self):
        self.assertEqual(stats.coverage(3, 1), 0.75)
        self.assertEqual(stats.coverage(6, 1), 1 - 2 / 64)
        self.assertAlmostEqual(stats.coverage(9, 2), 1 - 2 * 10 / 512)
        self.assertEqual(stats.min_pairs(), 5)

    def test_interval_is_order_statistics(self):
        self.assertEqual(stats.median_interval([3, 1, 2]), (2, 1, 3, 0.75))
        med, lo, hi, cov = stats.median_interval(list(range(1, 10)))
        self.assertEqual((med, lo, hi), (5, 2, 8))       # r(2)..r(8): 96.1% >= 95%
        self.assertIsNone(stats.median_interval([]))

    def test_pairs_by_repetition(self):
        self.assertEqual(stats.paired_ratios({1: 110, 2: 90, 3: 50}, {1: 100, 2: 100}), [1.1, 0.9])

    def test_reference(self):
        cfgs = {("vanilla", "stock"), ("patched", "stock"), ("patched", "walinsert-1")}
        self.assertEqual(stats.reference(("patched", "walinsert-1"), cfgs), ("patched", "stock"))
        self.assertEqual(stats.reference(("patched", "stock"), cfgs), ("vanilla", "stock"))
        self.assertIsNone(stats.reference(("vanilla", "stock"), cfgs))
        self.assertIsNone(stats.reference(("patched", "stock"), cfgs - {("vanilla", "stock")}))

    def test_bench_reference(self):
        """A variant whose config names flexlock_test.bench_reference is
        compared with that variant when it ran, else with stock."""
        self.assertEqual(stats.variant_reference("fastpath-off-lwspin"), "fastpath-off")
        self.assertEqual(stats.variant_reference("lwlock-spinlock"), "stock")
        self.assertEqual(stats.variant_reference("no-such-variant"), "stock")
        cfgs = {("patched", "stock"), ("patched", "fastpath-off"), ("patched", "fastpath-off-lwspin")}
        self.assertEqual(stats.reference(("patched", "fastpath-off-lwspin"), cfgs), ("patched", "fastpath-off"))
        self.assertEqual(stats.reference(("patched", "fastpath-off"), cfgs), ("patched", "stock"))
        cfgs.discard(("patched", "fastpath-off"))
        self.assertEqual(stats.reference(("patched", "fastpath-off-lwspin"), cfgs), ("patched", "stock"))


class VerdictTest(unittest.TestCase):
    def test_pure_noise_is_no_difference(self):
        other, ref = matrix(6, 1.0, 0.05, seed=1)
        c = stats.compare(other, ref)
        self.assertEqual(c["verdict"], "no difference")
        self.assertLess(c["low"], 1.0)
        self.assertGreater(c["high"], 1.0)

    def test_noise_is_rarely_called_an_effect(self):
        """Over 2000 null matrices of 6 pairs, an effect is claimed at most
        about as often as the interval's 3.1% non-coverage allows."""
        claimed = sum(stats.compare(*matrix(6, 1.0, 0.05, seed=s))["verdict"] != "no difference"
                      for s in range(2000))
        self.assertLess(claimed / 2000, 0.045)

    def test_twenty_percent_faster(self):
        c = stats.compare(*matrix(6, 1.2, 0.02, seed=2))
        self.assertEqual(c["verdict"], "faster")
        self.assertAlmostEqual(c["ratio"], 1.2, delta=0.05)
        self.assertEqual(c["n"], 6)
        self.assertAlmostEqual(c["coverage"], 0.96875)

    def test_twenty_percent_slower(self):
        self.assertEqual(stats.compare(*matrix(6, 0.8, 0.02, seed=3))["verdict"], "slower")

    def test_too_few_reps(self):
        # three 5-second runs: however clear the shift, min..max covers 75%
        c = stats.compare(*matrix(3, 1.2, 0.02, seed=4))
        self.assertEqual(c["verdict"], "too few reps")
        self.assertEqual(c["coverage"], 0.75)
        self.assertEqual(stats.compare(*matrix(4, 1.2, 0.02, seed=4))["verdict"], "too few reps")
        self.assertEqual(stats.compare(*matrix(5, 1.2, 0.02, seed=4))["verdict"], "faster")


class HistogramTest(unittest.TestCase):
    """Quantiles of the LWLock sleep-time histograms, as the views compute
    them: linear within a bucket."""

    def test_bounds(self):
        self.assertEqual(stats.hist_bounds_us(0), (0.0, 1.024))
        self.assertEqual(stats.hist_bounds_us(1), (1.024, 2.048))
        self.assertEqual(stats.hist_bounds_us(10), (524.288, 1048.576))

    def test_quantiles(self):
        self.assertIsNone(stats.hist_quantile_us({}, 0.99))
        self.assertEqual(stats.hist_quantile_us({1: 1}, 0.5), 2.048)
        h = {"0": 50, "10": 50}
        self.assertEqual(stats.hist_quantile_us(h, 0.5), 1.024)
        self.assertAlmostEqual(stats.hist_quantile_us(h, 0.99), 524.288 * 1.98)
        self.assertEqual(stats.hist_quantile_us(h, 1.0), 1048.576)
