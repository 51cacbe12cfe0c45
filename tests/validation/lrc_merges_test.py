"""tools/lrc_merges.py on hand-made stats and a hand-made gemm_ncu.csv: the H200's merged share
(1 - lrc2xbar / xbar2gpc sectors) beside the model's (coalescer merged / requests) per kind of
launch, a launch the cache lacks left out, and a cache with no GEMM's stats an error."""
import contextlib
import io
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
from validate_csv import ValidateCsvCase  # noqa: E402
import lrc_merges  # noqa: E402
from validate import ValidationError  # noqa: E402

FIELDS = ["M", "N", "K", "block_m", "block_n", lrc_merges.RETURNED, lrc_merges.FORWARDED]


def stats(m, n, k, bm, bn, merged, requests):
    args = f"a_desc.shape={m}x{k};b_desc.shape={n}x{k};c_desc.shape={m}x{n};M={m};N={n};K={k}"
    return {"workload": {"file": f"ttgir/gemm_bm{bm}_bn{bn}_bk64_s3_w4_g1.ttgir", "args": args},
            "memory": {"coalescer": {"merged": merged, "requests": requests, "forwarded": requests - merged}}}


class LrcMergesTest(ValidateCsvCase):
    def run_tool(self, rows, cached, points=False):
        data = self.folder({"gemm_ncu.csv": (FIELDS, rows)})
        cache = tempfile.TemporaryDirectory()
        self.addCleanup(cache.cleanup)
        for i, s in enumerate(cached):
            (pathlib.Path(cache.name) / f"{i}.json").write_text(json.dumps(s))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            lrc_merges.main([cache.name, "--data", data] + (["--points"] if points else []))
        return out.getvalue()

    def test_groups_by_kind_of_launch(self):
        rows = [[1024, 1024, 1024, 128, 128, 1000, 700],   # one wave (64 CTAs): H200 30%
                [4096, 4096, 512, 128, 128, 1000, 600],    # 1024 CTAs: 40%
                [1000, 1000, 1000, 128, 128, 1000, 900],   # 2000 B rows: inside a line, 10%
                [2048, 2048, 2048, 128, 128, 1000, 500]]   # not in the cache: left out
        cached = [stats(1024, 1024, 1024, 128, 128, 60, 100), stats(4096, 4096, 512, 128, 128, 25, 100),
                  stats(1000, 1000, 1000, 128, 128, 50, 100)]
        out = self.run_tool(rows, cached)
        self.assertIn("| one wave | 1 | 30.0% | 60.0% |", out)
        self.assertIn("| several waves | 1 | 40.0% | 25.0% |", out)
        self.assertIn("| rows inside a line | 1 | 10.0% | 50.0% |", out)
        listed = self.run_tool(rows, cached, points=True)
        self.assertIn("| 1000x1000x1000 128x128 | rows inside a line | 10.0% | 50.0% |", listed)
        self.assertNotIn("2048x2048x2048", listed)

    def test_a_cache_without_gemm_stats_is_an_error(self):
        with self.assertRaisesRegex(ValidationError, "no stats of a gemm_ncu launch"):
            self.run_tool([[1024, 1024, 1024, 128, 128, 1000, 700]], [{"workload": "trace", "memory": {}}])


if __name__ == "__main__":
    import unittest
    unittest.main()
