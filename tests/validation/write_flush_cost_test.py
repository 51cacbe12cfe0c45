"""tools/write_flush_cost.py on hand-made gemm_suite.csv / gemm_ncu.csv files whose differences are
known: the span minus ncu's time by category, a launch at another clock left out, the model's
difference from two validate.py runs."""
import contextlib
import io
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
from validate_csv import ValidateCsvCase  # noqa: E402
import write_flush_cost  # noqa: E402

SUITE = ["M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps", "group_m", "category",
         "span_us", "inkernel_sm_mhz"]
NCU = ["M", "N", "K", "block_m", "block_n", "block_k", "stages", "warps", "group_m", "gpu_time_us",
       "gpc_mhz"]


def launch(m, category, span, ncu_time, ncu_mhz=1800):
    config = [m, 128, 4096, 128, 128, 64, 3, 4, 1]
    return (config + [category, span, 1800], config + [ncu_time, ncu_mhz])


class WriteFlushCostTest(ValidateCsvCase):
    def table(self, launches, runs=()):
        folder = self.folder({"gemm_suite.csv": (SUITE, [s for s, _ in launches]),
                              "gemm_ncu.csv": (NCU, [n for _, n in launches])})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            write_flush_cost.main(["--data", folder, *runs])
        return {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in out.getvalue().splitlines()[2:]}

    def test_medians_by_category_and_the_clock_filter(self):
        rows = self.table([launch(128, "skinny", 50.0, 45.0), launch(256, "skinny", 60.0, 54.0),
                           launch(512, "skinny", 70.0, 62.0), launch(1024, "skinny", 80.0, 10.0, 1700),
                           launch(2048, "tiny", 5.0, 5.5)])
        self.assertEqual(rows["skinny"][0], "3")
        self.assertEqual(rows["skinny"][1], "+6.00 (+10.0%)")
        self.assertEqual(rows["tiny"][1], "-0.50 (-10.0%)")
        self.assertEqual(rows["tiny"][2].rstrip(" |"), "-")

    def test_the_models_difference_from_two_runs(self):
        point = "128x128x4096 128x128x64 s3 w4 g1"
        dirty = self.write([["gemm_suite", "static_span", point, "x:2", 1800, 50, 52.0, 4, "us", "kernel.time_us"]])
        clean = self.write([["gemm_suite", "static_span", point, "x:2", 1800, 50, 48.0, -4, "us", "kernel.time_us"]])
        rows = self.table([launch(128, "skinny", 50.0, 45.0)], (dirty, clean))
        self.assertEqual(rows["skinny"][2].rstrip(" |"), "+4.00 (+8.0%)")


if __name__ == "__main__":
    unittest.main()
