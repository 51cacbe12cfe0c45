"""tools/softmax_offsets.py on hand-made stamps whose steps, lags and resting points are known."""
import csv
import gzip
import io
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import softmax_offsets  # noqa: E402

FIELDS = ["block_m", "block_n", "warps", "delay", "rep", "step", "warp", "stamp"]


def launch(rows, bn, delay, rep, step, lag, jump_at=None, jump=0, steps=256):
    """Warps 0-3 top every `step` cycles from 1000; warps 4-7 `lag` later (+ `jump` from step
    `jump_at` on)."""
    for i in range(steps):
        for w in range(8):
            late = lag + (jump if jump_at is not None and i >= jump_at else 0) if w >= 4 else 0
            rows.append([128, bn, 8, delay, rep, i, w, 1000 + i * step + late])


def write(test, rows, gz):
    """The stamps as a CSV (gzipped or not) in a temporary file the test removes."""
    text = io.StringIO()
    wr = csv.writer(text)
    wr.writerow(FIELDS)
    wr.writerows(rows)
    f = tempfile.NamedTemporaryFile(suffix=".csv.gz" if gz else ".csv", delete=False)
    f.write(gzip.compress(text.getvalue().encode()) if gz else text.getvalue().encode())
    f.close()
    test.addCleanup(os.unlink, f.name)
    return f.name


class SoftmaxOffsetsTest(unittest.TestCase):
    def setUp(self):
        rows = []
        launch(rows, 64, 0, 1, 860, 950)              # one step and 90 cycles behind: 0.10
        launch(rows, 64, 0, 2, 716, 358)              # half a step: 0.50
        launch(rows, 64, 160, 1, 716, 3222)           # 4.5 steps: 0.50
        launch(rows, 128, 0, 1, 1470, 1470 * 3 - 29)  # just under three steps: 0.98 -> 0.00
        launch(rows, 128, 640, 1, 1350, 20000, jump_at=150, jump=-700)
        self.rows = rows

    def test_a_launch_settles_at_its_step_lag_and_phase(self):
        launches = softmax_offsets.load(write(self, self.rows, gz=True))
        s = softmax_offsets.settle(launches[128, 64, 0, 1], 32, 200)
        self.assertEqual(s["step"], 860)
        self.assertEqual(s["lag"], 950)
        self.assertAlmostEqual(s["phase"], 90 / 860)
        self.assertEqual(s["drift"], 0)

    def test_drift_is_the_move_between_the_first_and_last_quarter(self):
        launches = softmax_offsets.load(write(self, self.rows, gz=False))
        s = softmax_offsets.settle(launches[128, 128, 640, 1], 32, 200)
        self.assertEqual(s["drift"], -700)
        self.assertEqual(softmax_offsets.settle(launches[128, 64, 160, 1], 32, 200)["drift"], 0)

    def test_resting_points_group_launches_by_phase_with_one_as_zero(self):
        points = softmax_offsets.resting_points(
            softmax_offsets.settle_all(softmax_offsets.load(write(self, self.rows, gz=True))))
        self.assertEqual(dict(points[128, 64]), {0.1: [860], 0.5: [716, 716]})
        self.assertEqual(sorted(points[128, 128]), [0.0, 0.8])

    def test_no_settled_step_is_an_error(self):
        launches = softmax_offsets.load(write(self, self.rows, gz=True))
        with self.assertRaises(ValueError):
            softmax_offsets.settle(launches[128, 64, 0, 1], 300, 400)


if __name__ == "__main__":
    unittest.main()
