"""tools/validate.py's l2_writeback suite on inputs whose answers are known: an ncu --csv log read
launch by launch in the order ncu wrote them, its byte units, and the H100 settings the twin takes
from configs/h100.toml."""
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import validate  # noqa: E402

HEADER = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'


def metric(launch, name, unit, value):
    return f'"{launch}","reduce","{name}","{unit}","{value}"'


class L2WritebackTest(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_launches_in_the_order_ncu_wrote_them(self):
        path = self.write("\n".join([
            "==PROF== Connected to process 849",
            HEADER,
            metric(7, "dram__bytes_write.sum", "Mbyte", "24.03"),
            metric(7, "dram__bytes_read.sum", "Gbyte", "1.5"),
            metric(3, "dram__bytes_write.sum", "Kbyte", "480"),
            "==PROF== Disconnected"]) + "\n")
        launches = validate.ncu_launches(path)
        self.assertEqual(len(launches), 2)
        (first, first_line), (second, second_line) = launches
        self.assertEqual((first_line, second_line), (3, 5))
        self.assertEqual(validate.megabytes(*first["dram__bytes_write.sum"], "x"), 24.03)
        self.assertEqual(validate.megabytes(*first["dram__bytes_read.sum"], "x"), 1500.0)
        self.assertAlmostEqual(validate.megabytes(*second["dram__bytes_write.sum"], "x"), 0.48)

    def test_a_log_without_rows_or_columns_is_an_error(self):
        with self.assertRaisesRegex(validate.ValidationError, "no ncu CSV rows"):
            validate.ncu_launches(self.write("==PROF== nothing profiled\n"))
        with self.assertRaisesRegex(validate.ValidationError, r":2: no 'Metric Unit' column"):
            validate.ncu_launches(self.write('"ID","Metric Name","Metric Value"\n"1","a","2"\n'))
        with self.assertRaisesRegex(validate.ValidationError, "not a byte count"):
            validate.megabytes("1,024", "Tbyte", "here")

    def test_the_twin_takes_the_h100s_memory_system(self):
        settings = validate.h100_settings(validate.WRITEBACK_KEYS)
        self.assertEqual(len(settings), len(validate.WRITEBACK_KEYS))
        for expected in ("memory.l2.size=50MiB", "memory.l2.slices=160", "memory.dram.preset=H800_HBM3",
                         "memory.dram.nREFI=0"):
            self.assertIn(expected, settings)
        with self.assertRaisesRegex(validate.ValidationError, "no memory.l2.no_such_key"):
            validate.h100_settings(("memory.l2.no_such_key",))


if __name__ == "__main__":
    unittest.main()
