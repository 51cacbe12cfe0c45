"""tools/sm_active.py: ncu's busy cycles read from a committed opmix page, the work an SM does,
and the split into a step and a tile, on values whose answers are known."""
import pathlib
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import sm_active  # noqa: E402


class SmActiveTest(unittest.TestCase):
    def test_reads_the_committed_opmix_point(self):
        # validation/h200/opmix/s26_attn0: cuDNN 1 x 32 x 8 x 1024 x 128 causal, 31.072 us at
        # 1.774681 GHz; sm__cycles_active 36338.015152 avg, 27686 min, 52696 max.
        p = sm_active.ncu_point(str(ROOT / "validation/h200/opmix"), "s26_attn0")
        self.assertEqual(p["shape"], (1, 32, 8, 1024, 128, 1))
        self.assertAlmostEqual(p["mhz"], 1774.681, places=3)
        self.assertAlmostEqual(p["span"], 31.072 * 1774.681, delta=1)
        self.assertEqual([round(x) for x in p["active"]], [36338, 27686, 52696])

    def test_work_counts_causal_steps_as_a_triangle(self):
        # 1024 tokens: 8 Q tiles a head; full 64 steps a head, causal 1 + ... + 8 = 36.
        steps, tiles = sm_active.work((1, 32, 8, 1024, 128, 0))
        self.assertAlmostEqual(steps, 32 * 64 / 132)
        self.assertAlmostEqual(tiles, 32 * 8 / 132)
        steps, tiles = sm_active.work((4, 16, 16, 1024, 64, 1))
        self.assertAlmostEqual(steps, 4 * 16 * 36 / 132)
        self.assertAlmostEqual(tiles, 4 * 16 * 8 / 132)

    def test_fit_recovers_a_step_and_a_tile(self):
        rows = [(s, t, 2400 * s + 9000 * t) for s, t in ((248.2, 7.76), (128.0, 7.76), (8.7, 1.9))]
        a, b = sm_active.fit(rows)
        self.assertAlmostEqual(a, 2400, places=6)
        self.assertAlmostEqual(b, 9000, places=6)

    def test_reads_the_committed_tilecost_points(self):
        # validation/h100/tilecost: 13 points of 2 launches each; 1 x 32 x 8, seqlen_q 4096,
        # seqlen_k 512, D = 128: sm__cycles_active.avg 106782.333333 and 107088.803030.
        points = sm_active.tilecost_points(str(ROOT / "validation/h100/tilecost"))
        self.assertEqual(len(points), 13)
        p = next(q for q in points if q["shape"] == (1, 32, 8, 4096, 512, 128, 0))
        self.assertEqual([round(x) for x in p["runs"]], [106782, 107089])
        self.assertAlmostEqual(p["active"][0], (106782.333333 + 107088.803030) / 2, places=3)

    def test_work_counts_seqlen_k_apart(self):
        # 4096 queries, 512 keys: 32 Q tiles of 4 KV steps a head.
        steps, tiles = sm_active.work((1, 32, 8, 4096, 512, 128, 0))
        self.assertAlmostEqual(steps, 32 * 32 * 4 / 132)
        self.assertAlmostEqual(tiles, 32 * 32 / 132)
        # The same shape given as one seqlen counts as before.
        self.assertEqual(sm_active.work((1, 32, 8, 1024, 1024, 128, 1)),
                         sm_active.work((1, 32, 8, 1024, 128, 1)))

    def test_fit3_recovers_a_step_a_tile_and_a_constant(self):
        pts = ((31.0, 7.76), (62.1, 7.76), (248.2, 7.76), (62.1, 1.94), (62.1, 31.03))
        rows = [(s, t, 2609 * s + 2249 * t + 7235) for s, t in pts]
        a, b, c = sm_active.fit3(rows)
        self.assertAlmostEqual(a, 2609, places=6)
        self.assertAlmostEqual(b, 2249, places=6)
        self.assertAlmostEqual(c, 7235, places=5)


if __name__ == "__main__":
    unittest.main()
