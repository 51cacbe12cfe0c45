"""Hand-made `tools/validate.py --csv` files for the tools' tests (validation_diff, ring_steps)."""
import csv
import os
import tempfile
import unittest

FIELDS = ["suite", "metric", "point", "source", "clock_mhz", "measured", "predicted", "error_pct", "unit",
          "simulated"]


class ValidateCsvCase(unittest.TestCase):
    def write(self, rows, fields=FIELDS):
        """A temporary CSV of `rows` under `fields`, removed after the test; its path."""
        f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="")
        w = csv.writer(f)
        w.writerow(fields)
        w.writerows(rows)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name
