"""tools/validate.py's tma_cold suite on a hand-made tma_first.csv: box 0's median and slowest CTA
and the mean of boxes 1-5, read off each SM's MB_WAIT stall (LOADS=1 and LOADS=6 by difference,
plus the two issues), one twin per grid at its row's clock; the fast subset keeps 132 CTAs; a
grid without boxes 0-5 is an error naming the file."""
import pathlib
import sys
import unittest
from unittest import mock

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
from validate_csv import ValidateCsvCase  # noqa: E402
import validate  # noqa: E402

FIELDS = ["mode", "grid", "box", "cycles_med", "cycles_min", "cycles_max", "reps", "sm_mhz"]


def cold(grid, medians, slowest, mhz):
    return [["cold", grid, b, m, m, slowest if b == 0 else m, 5, mhz] for b, m in enumerate(medians)]


def stats(waits):
    return {f"sm[{i}]": {"stall": {"mb_wait": w}} for i, w in enumerate(waits)}


class TmaColdTest(ValidateCsvCase):
    def build(self, rows, fast=False):
        folder = self.folder({"tma_first.csv": (FIELDS, rows)})
        with mock.patch.object(validate, "H200", pathlib.Path(folder)):
            return validate.build_tma_cold(None, fast)

    def test_box_zero_and_the_later_boxes_of_each_grid(self):
        rows = ([["warm", 1, b, 500, 500, 500, 5, 1920] for b in range(6)]
                + cold(1, [1393, 1403, 1368, 1377, 1359, 1378], 1393, 1944)
                + cold(3, [3000, 2000, 2100, 2000, 1900, 2000], 4000, 1969))
        points, notes = self.build(rows)
        self.assertEqual(notes, [])
        self.assertEqual([(p.metric, p.label) for p in points],
                         [("median", "1 CTA, box 0"), ("median", "1 CTA, boxes 1-5"),
                          ("median", "3 CTAs, box 0"), ("median", "3 CTAs, boxes 1-5"),
                          ("slowest", "3 CTAs, box 0")])
        first, later, slowest = points[2], points[3], points[4]
        self.assertEqual(first.measured, 3000)
        self.assertAlmostEqual(later.measured, (2000 + 2100 + 2000 + 1900 + 2000) / 5)
        self.assertEqual(slowest.measured, 4000)
        self.assertEqual(first.clock_mhz, 1969)
        self.assertIn("GRID=3 LOADS=1", first.sims[0].workload)
        self.assertIn("GRID=3 LOADS=6", later.sims[1].workload)
        one, six = stats([2500, 2900, 2700]), stats([2500 + 5 * 1998, 2900 + 5 * 2198, 2700 + 5 * 2098])
        self.assertEqual(first.predict([one])[0], 2702)      # the median SM's stall + 2 issues
        self.assertEqual(slowest.predict([one])[0], 2902)
        self.assertAlmostEqual(later.predict([one, six])[0], 2100)

    def test_the_fast_subset_keeps_the_full_gpu(self):
        rows = cold(1, [1393] * 6, 1393, 1944) + cold(132, [3252] + [2000] * 5, 4179, 1969)
        points, _ = self.build(rows, fast=True)
        self.assertEqual({p.label.split(",")[0] for p in points}, {"132 CTAs"})
        self.assertEqual(len(points), 3)

    def test_a_grid_missing_a_box_is_an_error(self):
        with self.assertRaisesRegex(validate.ValidationError, r"tma_first\.csv:2: .*not boxes 0-5"):
            self.build(cold(16, [1543] * 5, 1841, 1953))


if __name__ == "__main__":
    unittest.main()
