"""tools/validate.py's tma_misaligned suite on a hand-made tma_loaded_misaligned.csv: each ring at
an odd pitch over the same ring at 8192 B, its twin's workloads (COLS = pitch / 2, the H100's
memory system), the prediction as the ratio of the two twins' cycles a box, and a ring whose
8192 B row is missing left out with a note."""
import pathlib
import sys
import unittest
from unittest import mock

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
from validate_csv import ValidateCsvCase  # noqa: E402
import validate  # noqa: E402

FIELDS = ["mode", "ctas", "stages", "boxes", "box_cycles_med", "op_cycles_med", "op_cycles_p90", "GBps",
          "sm_mhz", "pitch"]


class FakeSimulator:
    def has_key(self, _):
        return True


class FakeContext:
    sim = FakeSimulator()

    def clean_l2(self):
        return ("memory.l2.start_dirty=0",)


class TmaMisalignedTest(ValidateCsvCase):
    def build(self, rows, fast=False):
        folder = self.folder({"tma_loaded_misaligned.csv": (FIELDS, rows)})
        with mock.patch.object(validate, "MISALIGNED_DATA", pathlib.Path(folder)):
            return validate.build_tma_misaligned(FakeContext(), fast)

    def test_each_odd_pitch_over_the_aligned_ring(self):
        rows = [["own_warm", 1, 1, 128, 744, 0, 0, 0, 1980, 8192],
                ["own_warm", 1, 1, 128, 925, 0, 0, 0, 1980, 8208],
                ["own_warm", 1, 1, 128, 791, 0, 0, 0, 1979, 8256]]
        points, notes = self.build(rows, fast=True)
        self.assertEqual(len(points), 2)
        odd = points[0]
        self.assertEqual(odd.label, "own_warm, 1 x 1, pitch 8208 B")
        self.assertAlmostEqual(odd.measured, 925 / 744)
        # two passes and one at each pitch, the odd one first, all with the H100's memory system
        self.assertEqual(len(odd.sims), 4)
        self.assertIn("COLS=4104", odd.sims[0].workload)
        self.assertIn("COLS=4096", odd.sims[2].workload)
        self.assertIn("memory.l2.slices=160", odd.sims[0].sets)
        stats = [{"kernel": {"cycles": c}} for c in (3000, 1000, 2200, 1000)]  # 2000 / 1200 a pass
        value, _ = odd.predict(stats)
        self.assertAlmostEqual(value, 2000 / 1200)
        # the fast subset's other ring has no rows here: a note for each pitch, not a point
        self.assertEqual(len(notes), 2)
        self.assertTrue(all("no own_warm ring of 132 CTAs x 2" in n for n in notes))

    def test_a_ring_without_its_aligned_row_is_left_out_with_a_note(self):
        rows = [["own", 1, 1, 128, 1827, 0, 0, 0, 1979, 8208]]
        points, notes = self.build(rows)
        self.assertEqual(points, [])
        self.assertTrue(any("no own ring of 1 CTAs x 1 at 8192 and 8208 B" in n for n in notes))


if __name__ == "__main__":
    unittest.main()
