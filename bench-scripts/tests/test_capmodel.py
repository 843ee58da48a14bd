"""The cap model (flexbench/capmodel.py, MODEL.md of
results/2026-11-25-caps-2core) on known answers: the prediction is the
smallest of the CPU cap C / D and the lowest lock cap, with what binds."""

import unittest

from flexbench import capmodel


class CapModelTest(unittest.TestCase):
    def test_predict(self):
        caps = [{"tranche": "WALInsert", "own_cap_tps": 9000.0}, {"tranche": "WALWrite", "own_cap_tps": 2000.0}]
        # D = 1 ms of CPU per transaction: 2000 tps on 2 cores, 16000 on 16
        p = capmodel.predict(0.001, caps, [1, 2, 16])
        self.assertEqual(p[1], {"cpu_cap": 1000.0, "pred": 1000.0, "binds": "CPU"})
        self.assertEqual(p[2]["binds"], "CPU", "a tie goes to the CPU, as capcheck had it")
        self.assertEqual(p[16], {"cpu_cap": 16000.0, "pred": 2000.0, "binds": "WALWrite"})
        # no sampled tranche with a cap: the CPU alone
        self.assertEqual(capmodel.predict(0.0001, [], [64])[64], {"cpu_cap": 640000.0, "pred": 640000.0,
                                                                 "binds": "CPU"})
        # no CPU demand measured: the lock cap alone
        self.assertEqual(capmodel.predict(None, caps, [16])[16]["binds"], "WALWrite")

    def test_cpu_demand(self):
        # user, nice, system, idle, iowait, irq, softirq, steal (clock ticks)
        t0 = [100, 0, 50, 1000, 10, 0, 0, 0]
        t1 = [250, 10, 120, 1200, 60, 5, 15, 7]
        busy, D = capmodel.cpu_demand(t0, t1, 500, 100)
        self.assertAlmostEqual(busy, (150 + 10 + 70 + 5 + 15) / 100)
        self.assertAlmostEqual(D, 2.5 / 500)
        self.assertEqual(capmodel.cpu_demand(t0, t1, 0, 100)[1], None)


if __name__ == "__main__":
    unittest.main()
