"""tools/validation_diff.py on two hand-made validate.py --csv runs whose errors are known."""
import contextlib
import io
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
from validate_csv import ValidateCsvCase  # noqa: E402
import validation_diff  # noqa: E402


def row(suite, metric, point, line, error):
    return [suite, metric, point, f"validation/h200/x.csv:{line}", 1980, 100, 100 + error, error, "us",
            "kernel.time_us"]


BEFORE = [row("gemm", "span", "1x1x1 128x128x64", 2, -10.0),
          row("gemm", "span", "2x2x2 128x128x64", 3, +6.0),
          row("gemm", "span", "3x3x3 64x128x64", 4, -2.0),
          row("gemm", "span", "gone 64x128x64", 5, +50.0),
          row("tma", "box", "ring", 2, +1.0)]
AFTER = [row("gemm", "span", "1x1x1 128x128x64", 2, -4.0),
         row("gemm", "span", "2x2x2 128x128x64", 3, +2.0),
         row("gemm", "span", "3x3x3 64x128x64", 4, -14.0),
         row("gemm", "span", "new 64x128x64", 6, +1.0),
         row("tma", "box", "ring", 2, +1.0)]


class ValidationDiffTest(ValidateCsvCase):
    def setUp(self):
        self.before = validation_diff.load(self.write(BEFORE))
        self.after = validation_diff.load(self.write(AFTER))

    def test_each_metric_compares_only_the_points_both_runs_have(self):
        rows = {(r["suite"], r["metric"]): r for r in validation_diff.by_metric(self.before, self.after)}
        gemm = rows["gemm", "span"]
        self.assertEqual(gemm["points"], 3)
        self.assertEqual((gemm["only_before"], gemm["only_after"]), (1, 1))
        self.assertAlmostEqual(gemm["mape_before"], 6.0)   # 10, 6, 2: the +50% point is not in both
        self.assertAlmostEqual(gemm["mape_after"], 20 / 3)  # 4, 2, 14
        self.assertEqual((gemm["max_before"], gemm["max_after"]), (10.0, 14.0))
        self.assertAlmostEqual(rows["tma", "box"]["mape_after"], 1.0)

    def test_the_most_moved_points_come_first(self):
        top = validation_diff.moved(self.before, self.after, 2)
        self.assertEqual([k[2] for k, _, _ in top], ["3x3x3 64x128x64", "1x1x1 128x128x64"])
        self.assertEqual(top[0][1:], (-2.0, -14.0))

    def test_groups_take_the_first_match_of_the_pattern(self):
        g = validation_diff.groups(self.before, self.after, r"\d+x\d+x64")
        n, mean_b, mean_a, mape_b, mape_a = g["gemm", "span", "128x128x64"]
        self.assertEqual(n, 2)
        self.assertAlmostEqual(mean_b, -2.0)
        self.assertAlmostEqual(mean_a, -1.0)
        self.assertAlmostEqual(mape_b, 8.0)
        self.assertAlmostEqual(mape_a, 3.0)
        self.assertEqual(g["tma", "box", "-"][0], 1)

    def test_a_file_that_is_not_a_validate_csv_is_refused_with_its_name(self):
        path = self.write([["a", "b"]], fields=["suite", "point"])
        with self.assertRaisesRegex(ValueError, r"\.csv: not a validate.py --csv file \(no column metric"):
            validation_diff.load(path)
        bad = self.write([row("gemm", "span", "p", 2, 1.0)[:7] + ["n/a", "us", "s"]])
        with self.assertRaisesRegex(ValueError, r"\.csv:2: error_pct 'n/a' is not a number"):
            validation_diff.load(bad)

    def test_main_prints_the_tables_and_fails_cleanly_on_a_missing_file(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = validation_diff.main([self.write(BEFORE), self.write(AFTER), "--group", r"\d+x\d+x64"])
        self.assertEqual(rc, 0)
        self.assertIn("| gemm | span | 3 | 6.0% | 6.7% | 10.0% | 14.0% | 1 / 1 |", out.getvalue())
        self.assertIn("| gemm.span | 64x128x64 | 1 | -2.0% | -14.0% | 2.0% | 14.0% |", out.getvalue())
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = validation_diff.main(["/nonexistent/before.csv", self.write(AFTER)])
        self.assertEqual(rc, 2)
        self.assertIn("/nonexistent/before.csv", err.getvalue())


if __name__ == "__main__":
    unittest.main()
