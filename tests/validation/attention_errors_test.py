"""tools/attention_errors.py on a hand-made validate.py CSV whose groups and split are known."""
import math
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import attention_errors  # noqa: E402

MHZ = 1000.0  # 1 us = 1000 cycles


def launch_cycles(n, step, fixed, first_extra, block_n=64):
    """1 x 32 x 8 x n x 128, one CTA an SM: ceil(32 n / 128 / 132) waves of fixed + steps, the
    first wave's CTA first_extra more (a one-wave launch only pays it here)."""
    waves = math.ceil(32 * n / 128 / 132)
    return waves * (fixed + n // block_n * step) + (first_extra if waves == 1 else 0)


def row(label, measured, predicted, metric="static_span"):
    return {"suite": "attention_triton", "metric": metric, "point": label, "source": "x",
            "clock_mhz": str(MHZ), "measured": str(measured / MHZ), "predicted": str(predicted / MHZ),
            "error_pct": str(100.0 * (predicted - measured) / measured), "unit": "us", "simulated": "k"}


def suite():
    rows = []
    for n in (512, 2048, 4096):
        label = f"Z1 HQ32 HKV8 L{n} D128 128x64 w8"
        rows.append(row(label, launch_cycles(n, 2000, 8000, 4000), launch_cycles(n, 2100, 5000, 1000)))
    rows.append(row("Z1 HQ32 HKV8 L1024 D128 causal 128x64 w8", 50000, 45000))
    rows.append(row("Z1 HQ32 HKV8 L1024 D128 causal 128x64 w8", 10.0, 20.0, metric="static_event"))
    rows.append({"suite": "gemm_suite", "metric": "static_span", "point": "not attention"})
    return rows


class AttentionErrorsTest(unittest.TestCase):
    def setUp(self):
        self.points = attention_errors.parse(suite(), "static_span")

    def test_only_the_suites_metric(self):
        self.assertEqual(len(self.points), 4)

    def test_groups_by_tile_and_length(self):
        g = attention_errors.groups(self.points)
        self.assertEqual(list(g), [("128x64 w8", "512"), ("128x64 w8", "1024"), ("128x64 w8", ">= 2048")])
        n, mean, mape, lacks = g[("128x64 w8", "1024")]
        self.assertEqual((n, lacks), (1, 5000))
        self.assertAlmostEqual(mean, -10.0)
        self.assertAlmostEqual(mape, 10.0)
        # 2048 and 4096 tokens: 4 and 8 waves; the H200's 4 x (8000 + 32 x 2000), 8 x (8000 + 64 x 2000).
        self.assertEqual(g[("128x64 w8", ">= 2048")][0], 2)

    def test_split_gives_back_the_step_and_the_fixed_costs(self):
        parts = attention_errors.split(self.points)
        key = (1, 32, 8, "128x64 w8")
        for who, (step, fixed, first) in (("measured", (2000, 8000, 12000)), ("predicted", (2100, 5000, 6000))):
            got = parts[(key, who)]
            self.assertAlmostEqual(got[0], step)
            self.assertAlmostEqual(got[1], fixed)
            self.assertAlmostEqual(got[2], first)

    def test_a_label_it_cannot_read_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "unexpected label"):
            attention_errors.parse([row("L512 somewhere", 1, 1)], "static_span")


if __name__ == "__main__":
    unittest.main()
