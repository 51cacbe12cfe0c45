"""tools/ring_steps.py on a hand-made validate.py --csv run whose rings follow a known law."""
import contextlib
import io
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
from validate_csv import ValidateCsvCase  # noqa: E402
import ring_steps  # noqa: E402


def ring(mode, n, s, l1, step_measured, step_predicted):
    """A ring point whose latency is l1 + (s - 1) x step, as cycles a box (latency / s)."""
    measured = (l1 + (s - 1) * step_measured) / s
    predicted = (l1 + (s - 1) * step_predicted) / s
    return ["tma_loaded", "box", f"{mode}, {n} CTA{'s' if n > 1 else ''}, {s} stage{'s' if s > 1 else ''}",
            "validation/h200/tma_loaded.csv:2", 1960, measured, predicted,
            100 * (predicted - measured) / measured, "cycles", "kernel.cycles / boxes"]


# 33 CTAs: the H200's law (a step of n x 16 KiB at 2048 B a cycle = 264) against a model's 80;
# an 8-stage row past --max-stages that would bend the fit if it were taken.
ROWS = ([ring("own", 33, s, 1570, 264, 80) for s in (1, 2, 3, 4)] +
        [["tma_loaded", "box", "own, 33 CTAs, 8 stages", "x:9", 1960, 427, 423, -1, "cycles", "k"]] +
        [ring("own", 1, s, 1384, 18, 18) for s in (1, 2)] +
        [ring("own_warm", 33, s, 560, 240, 10) for s in (1, 2)] +
        [["tma_ring", "box", "ring", "x:2", 1960, 1, 1, 0, "cycles", "k"]])


class RingStepsTest(ValidateCsvCase):
    def run_tool(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = ring_steps.main(list(args))
        return rc, out.getvalue(), err.getvalue()

    def test_the_step_and_its_rate_come_from_the_stages_up_to_the_limit(self):
        rc, out, _ = self.run_tool(self.write(ROWS))
        self.assertEqual(rc, 0)
        row = next(line for line in out.splitlines() if line.startswith("| 33 |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        self.assertEqual(cells, ["33", "1570", "1570", "264", "80", f"{33 * 16384 / 264:.0f}",
                                 f"{33 * 16384 / 80:.0f}"])

    def test_a_mode_picks_its_own_rings(self):
        rc, out, _ = self.run_tool(self.write(ROWS), "--mode", "own_warm")
        self.assertEqual(rc, 0)
        self.assertIn("| 33 | 560 | 560 | 240 | 10 |", out)
        self.assertNotIn("| 1 |", out)

    def test_one_stage_alone_has_no_step(self):
        rc, out, _ = self.run_tool(self.write(ROWS), "--max-stages", "1")
        self.assertEqual(rc, 0)
        self.assertIn("| 33 | 1570 | 1570 | - | - | - | - |", out)

    def test_a_file_that_is_not_a_validate_csv_is_refused(self):
        rc, _, err = self.run_tool(self.write([["a", "b"]], fields=["x", "y"]))
        self.assertEqual(rc, 2)
        self.assertIn("not a tools/validate.py --csv file", err)

    def test_a_missing_file_or_no_rings_exit_2(self):
        rc, _, err = self.run_tool("/nonexistent/run.csv")
        self.assertEqual(rc, 2)
        self.assertIn("/nonexistent/run.csv", err)
        rc, _, err = self.run_tool(self.write(ROWS[-1:]))
        self.assertEqual(rc, 2)
        self.assertIn("no tma_loaded 'own' points", err)

    def test_a_label_out_of_form_is_an_error_not_a_skip(self):
        bad = [["tma_loaded", "box", "own 33 CTAs", "x:2", 1960, 1, 1, 0, "cycles", "k"]]
        rc, _, err = self.run_tool(self.write(bad))
        self.assertEqual(rc, 2)
        self.assertIn("unexpected tma_loaded label", err)


if __name__ == "__main__":
    unittest.main()
