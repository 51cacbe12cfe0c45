"""tools/l2_request_split.py: the two rules' requests for rows at known offsets, and its table on a
hand-made gemm_ncu.csv whose sectors a request and merged shares are known."""
import contextlib
import io
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
from validate_csv import ValidateCsvCase  # noqa: E402
import l2_request_split as split  # noqa: E402

FIELDS = ["M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps", "group_m",
          split.REQUESTS, split.SECTORS, split.COALESCABLE, split.FORWARDED]


class RowRequestsTest(unittest.TestCase):
    def test_an_aligned_row_is_one_request_under_either_rule(self):
        self.assertEqual(split.row_requests(0, 128, "line"), [4])
        self.assertEqual(split.row_requests(0, 128, "half"), [4])

    def test_a_row_16_bytes_in_is_cut_at_each_64_byte_boundary(self):
        # bytes 16..143: [16, 64) two sectors, [64, 128) two, [128, 144) one
        self.assertEqual(split.row_requests(16, 128, "half"), [2, 2, 1])
        self.assertEqual(split.row_requests(16, 128, "line"), [4, 4])

    def test_a_row_at_the_half_line_is_two_halves(self):
        self.assertEqual(split.row_requests(64, 128, "half"), [2, 2])

    def test_the_pitch_visits_every_offset_of_its_class(self):
        # pitch 6000 B (K = 3000): 6000 mod 128 = 112 visits all eight 16-byte offsets; one
        # aligned row of 1 request, six of 3 and one (offset 64) of 2
        self.assertEqual(split.per_row(6000, 128, "half"), (2.625, 4.5))
        self.assertEqual(split.per_row(3008, 128, "half"), (1.5, 4.0))
        self.assertEqual(split.per_row(8192, 128, "line"), (1.0, 4.0))


class TableTest(ValidateCsvCase):
    def table(self, rows):
        folder = self.folder({"gemm_ncu.csv": (FIELDS, rows)})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            split.main(["--data", folder])
        return [line.split(" | ") for line in out.getvalue().splitlines()[2:]]

    def test_launches_group_by_pitch_class_with_their_medians(self):
        rows = [[1024, 1024, 4096, 128, 128, 64, 3, 4, 1, 1000, 4000, 8000, 6000],
                [2048, 2048, 4096, 128, 128, 64, 3, 4, 1, 1000, 3900, 8000, 4000],
                [1000, 4000, 3000, 64, 128, 64, 4, 4, 1, 1000, 1710, 8000, 7600]]
        table = self.table(rows)
        self.assertEqual(len(table), 2)
        aligned, misaligned = table
        self.assertEqual(aligned[:4], ["| 0", "128", "2", "3.95"])
        self.assertEqual(aligned[-1], "37.5% |")   # medians of 25% and 50%
        self.assertEqual(misaligned[:6], ["| 112", "128", "1", "1.71", "4.00", "1.71"])
        self.assertEqual(misaligned[-1], "5.0% |")

    def test_a_file_without_the_request_counter_is_an_error_naming_it(self):
        folder = self.folder({"gemm_ncu.csv": (["M", "N", "K"], [[1, 2, 3]])})
        with self.assertRaises(SystemExit) as caught:
            split.main(["--data", folder])
        self.assertIn(split.REQUESTS, str(caught.exception))


if __name__ == "__main__":
    unittest.main()
