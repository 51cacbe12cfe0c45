"""tools/slice_battery.py: its folds give tests/memory/slice_test.cpp's slices on single lines (the
C++ maps it stands for), its busiest-over-mean on windows whose answer is known, and its battery
holds the strides that decide between the maps."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import slice_battery as battery  # noqa: E402


class SliceBatteryTest(unittest.TestCase):
    def test_the_folds_are_slice_folds(self):
        # slice_test.cpp FormulasOnSingleLines: fold 1000 -> 47 of 96, combine = add -> 89 of 96
        self.assertEqual(battery.xor_fold(1000) % 96, 47)
        self.assertEqual(battery.add_fold(1000) % 96, 89)
        self.assertEqual(battery.xor_fold(1000, 3) % 96, 59)

    def test_busiest_over_the_mean(self):
        self.assertEqual(battery.busiest(lambda line: line, 4, [0, 1, 2, 3]), 1.0)
        self.assertEqual(battery.busiest(lambda line: 0, 4, [0, 1, 2, 3]), 4.0)
        # slice_test.cpp AddedCopiesSpreadTheStrideTheXorFoldsTogether: 1536 lines 129 apart
        lines = [129 * k for k in range(1536)]
        self.assertEqual(battery.busiest(battery.xor_fold, 192, lines), 24.0)
        self.assertEqual(battery.busiest(battery.add_fold, 192, lines), 17 / 8)

    def test_rows_inside_a_line_touch_two_and_the_blind_strides_are_there(self):
        names = {}
        for name, lines in battery.windows():
            names[name] = lines
        one = names["pitch 8208 B, 1 column, 1536 rows"]
        self.assertEqual(len(one), 1536 + 1344)   # 7 rows in 8 start inside a line
        for pitch in (8320, 16512, 32896):
            self.assertIn(f"pitch {pitch} B, 4 columns, 16896 rows", names)


if __name__ == "__main__":
    unittest.main()
