"""tools/gemm_phases.py on a hand-made Proton trace and simfa timeline whose phases are known."""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import gemm_phases  # noqa: E402


def proton_cta(cta, t0):
    """Warp 0 of one CTA: 2 loads, then 3 k-tiles 1000 apart each led by a 100-cycle wait, then
    the store 1500 after the last k-tile's WGMMAs. ts / dur in thousands of cycles."""
    spans = [("tma_load_000", t0, 50), ("tma_load_001", t0 + 60, 50)]
    for k in range(3):
        w = t0 + 2000 + 1000 * k
        spans += [("wait_bar_004", w, 100), ("wgmma_005", w + 100, 300),
                  ("wgmma_wait_006", w + 400, 40), ("tma_load_007", w + 500, 50)]
    spans += [("tma_store_010", t0 + 2100 + 2000 + 1500, 100), ("tma_store_wait_011", t0 + 5700, 300)]
    return [{"ph": "X", "pid": f"k Core0 CTA{cta}", "tid": "warp 0 (line 0)", "name": n,
             "ts": ts / 1000.0, "dur": d / 1000.0} for n, ts, d in spans]


def timeline_cta(slot, t0):
    """One WarpGroup slot's CTA as simfa draws it: 2 issues, a 700-cycle wait, 2 k-tiles of 8
    WGMMAs 600 apart (the second after a tensor-core wait and a 200-cycle data wait), the store
    issue 900 after the last k-tile's WGMMAs, exit."""
    ev = [("tma_issue", t0, 1), ("tma_issue", t0 + 1, 1), ("wait:mb", t0 + 2, 700)]
    for k in range(2):
        w = t0 + 702 + 600 * k
        if k:
            ev.append(("wait:mb", w - 200, 200))
        ev += [("wgmma", w + i, 1) for i in range(4)] + [("wait:tensor_core", w + 4, 10)]
        ev += [("wgmma", w + 14 + i, 1) for i in range(4)] + [("tma_issue", w + 20, 1)]
    ev += [("tma_issue", t0 + 702 + 600 + 900, 1), ("exit", t0 + 702 + 600 + 900, 1)]
    return [{"ph": "X", "pid": 0, "tid": slot, "name": n, "ts": ts, "dur": d} for n, ts, d in ev]


class GemmPhasesTest(unittest.TestCase):
    def test_proton_phases(self):
        ctas = gemm_phases.proton_ctas(proton_cta(1, 5000) + proton_cta(0, 0))
        self.assertEqual(len(ctas), 2)
        p = gemm_phases.phases(ctas[0])
        self.assertAlmostEqual(p["to_loop"], 2100)
        self.assertEqual([round(x) for x in p["period"]], [1000, 1000])
        self.assertEqual([round(x) for x in p["wait"]], [100, 100])
        self.assertAlmostEqual(p["to_store"], 1500)
        self.assertAlmostEqual(p["cta"], 5600)

    def test_timeline_phases_one_span_per_k_tile(self):
        ctas = gemm_phases.timeline_ctas(timeline_cta(0, 0) + timeline_cta(0, 3000) + timeline_cta(1, 10))
        self.assertEqual(len(ctas), 3)
        self.assertEqual([c[0][1] for c in ctas], [0, 10, 3000])  # ordered by start
        p = gemm_phases.phases(ctas[0])
        self.assertEqual(p["to_loop"], 702)
        self.assertEqual(p["period"], [600])  # the tensor-core wait does not split a k-tile
        self.assertEqual(p["wait"], [200])
        self.assertEqual(p["to_store"], 1500 - 600)
        self.assertEqual(p["cta"], 2202)

    def test_script_prints_both_sources(self):
        with tempfile.TemporaryDirectory() as tmp:
            proton = pathlib.Path(tmp) / "p.json"
            timeline = pathlib.Path(tmp) / "t.json"
            proton.write_text(json.dumps({"traceEvents": proton_cta(0, 0) + proton_cta(1, 6000)}))
            timeline.write_text(json.dumps({"traceEvents": timeline_cta(0, 0) + timeline_cta(0, 3000)}))
            ctas = gemm_phases.timeline_ctas(gemm_phases.load_events(str(timeline)))
            self.assertEqual(gemm_phases.summary(ctas)[1]["cta"], 2202)
            hw = gemm_phases.proton_ctas(gemm_phases.load_events(str(proton)))
            self.assertEqual(gemm_phases.summary(hw[1:])[1]["to_store"], 1500)
            script = pathlib.Path(gemm_phases.__file__)
            out = subprocess.run([sys.executable, str(script), str(proton), str(timeline),
                                  "--first-wave-ctas", "1", "--device", "H100"],
                                 capture_output=True, text=True, check=True).stdout
            self.assertIn("| first wave | H100 (Proton) | 1 |", out)
            self.assertNotIn("H200", out)


if __name__ == "__main__":
    unittest.main()
