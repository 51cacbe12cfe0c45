"""configs/h100.toml, the held-out second card (docs/validation.md, "A second card: the H100, held
out"): it has configs/h200.toml's structure and parts from it where the H100 does (its L2, its
DRAM, its clocks and launch overhead, the chases' latencies), simfa loads it and runs a small
workload on it, and tools/validate.py reads the H100's own measurements through --data.

  python3 tests/validation/h100_config_test.py SIMFA
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import tomllib
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
H100 = ROOT / "configs" / "h100.toml"
H200 = ROOT / "configs" / "h200.toml"
SESSION44 = ROOT / "validation" / "h100" / "session44"
SIMFA = None

# Every value in which h100.toml parts from h200.toml, and what it must be (the rest is the H200's,
# which the test holds by comparing the two files key by key).
H100_VALUES = {
    "gpu.name": "H100",
    "gpu.memory_clock_mhz": 1709,            # session44/clock_domains_pitch.csv lts_mhz
    "gpu.launch_overhead_ns": 3744,          # session44/launch_overhead.csv
    "gpu.l2_size": "50MiB",                  # session44/env.txt L2_cache_size=50MB
    "gpu.dram_bandwidth": "3.35TB/s",        # H100 SXM datasheet
    "memory.l2.size": "50MiB",
    "memory.l2.slices": 160,                 # 10 memory controllers x 16 slices
    "memory.l2.hit_latency": 297,            # session44/tma_chase.csv floor
    "memory.l2.far_latency": 147,            # session44/pointer_chase.csv shelf and plateau
    "memory.l2.requests_per_cycle": 0.2198,  # session44/bandwidth.csv tma_bulk_l2
    "memory.dram.preset": "H800_HBM3",       # five HBM3 stacks, 3.35 TB/s
    "memory.dram.nREFIpb": 80,               # 1.95 us / 32 banks at tCK 0.764
    "memory.dram.nRFCpb": 293,               # the H200's 224 ns at tCK 0.764
}


def flatten(table, prefix=""):
    out = {}
    for k, v in table.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def simfa(*args):
    return subprocess.run([SIMFA, *map(str, args)], capture_output=True, text=True, cwd=ROOT)


class H100ConfigTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(H100, "rb") as f:
            cls.h100 = flatten(tomllib.load(f))
        with open(H200, "rb") as f:
            cls.h200 = flatten(tomllib.load(f))

    def test_same_structure_as_h200(self):
        self.assertEqual(sorted(self.h100), sorted(self.h200))

    def test_parts_from_h200_exactly_where_the_h100_differs(self):
        differ = {k for k in self.h100 if self.h100[k] != self.h200[k]}
        # controller_latency_ns is calibrated on the H100's chase; it may or may not land on the
        # H200's 107 ns
        differ.discard("memory.dram.controller_latency_ns")
        self.assertEqual(sorted(differ), sorted(H100_VALUES))
        for key, value in H100_VALUES.items():
            self.assertEqual(self.h100[key], value, key)
        self.assertEqual(self.h200["memory.l2.size"], "60MiB")
        self.assertEqual(self.h200["memory.l2.slices"], 192)
        self.assertEqual(self.h200["memory.dram.preset"], "H200_HBM3e")

    def test_dram_preset_runs_at_the_h100s_clock(self):
        # hbm3_config.h's H800_HBM3 tCK against ncu's dram_mhz of the H100 (2 beats a CK pair:
        # nvidia-smi's and ncu's memory clock is 2 / tCK)
        header = (ROOT / "memory_models" / "dram" / "hbm3_config.h").read_text()
        m = re.search(r'\{"H800_HBM3".*?\.tCK_ns = ([0-9.]+)', header, re.S)
        self.assertIsNotNone(m, "no H800_HBM3 preset in hbm3_config.h")
        tck = float(m.group(1))
        import csv
        with open(SESSION44 / "clock_domains_pitch.csv") as f:
            mhz = sorted(float(r["dram_mhz"]) for r in csv.DictReader(f))
        self.assertAlmostEqual(2000 / tck / mhz[len(mhz) // 2], 1.0, delta=0.002)

    def test_loads_and_simulates(self):
        with tempfile.TemporaryDirectory() as tmp:
            times = {}
            for name, manifest in (("h100", H100), ("h200", H200)):
                stats = pathlib.Path(tmp) / f"{name}.json"
                r = simfa("run", manifest, "-q", "--workload", "gemm:m=256,n=256,k=512",
                          "--stats", stats)
                self.assertEqual(r.returncode, 0, r.stderr)
                st = json.loads(stats.read_text())
                st = st[0] if isinstance(st, list) else st
                resolved = st["manifest"]
                self.assertEqual(resolved["gpu"]["name"], name.upper())
                kernel = st["kernel"]
                self.assertGreater(kernel["time_us"], 0)
                times[name] = kernel
                if name == "h100":
                    self.assertEqual(resolved["memory"]["l2"]["slices"], 160)
                    self.assertEqual(resolved["memory"]["l2"]["size"], 50 << 20)
                    self.assertEqual(resolved["memory"]["dram"]["preset"], "H800_HBM3")
                    self.assertAlmostEqual(kernel["event_us"] - kernel["time_us"], 3.744, places=3)
            # a cold GEMM reads its operands from DRAM: the H100's slower memory shows
            self.assertNotEqual(times["h100"]["time_us"], times["h200"]["time_us"])

    def test_validate_reads_the_h100s_data(self):
        # the chase through --data validation/h100/session44 against its fast thresholds
        r = subprocess.run([sys.executable, "tools/validate.py", SIMFA, str(H100), "tma_chase",
                            "--fast", "--jobs", "2", "--data", str(SESSION44)],
                           capture_output=True, text=True, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        self.assertIn("validation/h100/session44/tma_chase.csv", r.stdout)
        self.assertIn("# simfa against validation/h100/session44: configs/h100.toml", r.stdout)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    SIMFA = sys.argv.pop(1)
    unittest.main()
