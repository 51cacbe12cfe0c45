"""tools/attention_phases.py on hand-made %clock64 stamps whose phases, waves and gaps are known."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import attention_phases  # noqa: E402


def cta(smid, start, L=512, block_n=64, q=2000, pro=1100, k0=600, step=1900, last=2500, end=1700):
    """One CTA's stamps: every step `step` cycles, the first one starting with k0's wait."""
    steps = L // block_n
    c_q = start + q
    c_loop0 = c_q + pro
    c_loop1 = c_loop0 + step
    c_looplast = c_loop1 + (steps - 2) * step
    c_loopend = c_looplast + last
    return dict(Z=1, HQ=32, HKV=8, L=L, D=128, block_m=128, block_n=block_n, warps=8, stages=3,
                c_start=start, c_q=c_q, c_loop0=c_loop0, c_dot0=c_loop0 + k0, c_loop1=c_loop1,
                c_looplast=c_looplast, c_loopend=c_loopend, c_end=c_loopend + end,
                g_start=0, g_end=0, smid=smid, cta=0)


class AttentionPhasesTest(unittest.TestCase):
    def test_phases_waves_and_gaps(self):
        first = cta(3, 100)
        second = cta(3, first["c_end"] + 531, q=5000)
        other = cta(7, 50)
        out = attention_phases.phases([second, other, first], 64)
        self.assertEqual(sorted((p["wave"], p["q"]) for p in out), [(0, 2000), (0, 2000), (1, 5000)])
        p1 = next(p for p in out if p["wave"] == 1)
        self.assertEqual(p1["gap"], 531)
        self.assertEqual((p1["pro"], p1["k0"], p1["step0"], p1["step"], p1["last"], p1["end"]),
                         (1100, 600, 1900, 1900, 2500, 1700))
        self.assertEqual(p1["cta"], 5000 + 1100 + 7 * 1900 + 2500 + 1700)
        self.assertTrue(all(p["gap"] is None for p in out if p["wave"] == 0))

    def test_medians_skip_missing(self):
        self.assertEqual(attention_phases.med([None, 3, 1, 2]), 2)
        self.assertIsNone(attention_phases.med([None]))


if __name__ == "__main__":
    unittest.main()
