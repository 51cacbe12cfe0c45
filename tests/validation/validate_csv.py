"""Hand-made `tools/validate.py --csv` files for the tools' tests (validation_diff, ring_steps), and
folders of measurement CSVs under their committed names (write_flush_cost, l2_request_split,
tma_misaligned)."""
import csv
import os
import pathlib
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

    def folder(self, files):
        """A temporary folder holding each CSV of `files` ({name: (fields, rows)}), removed after
        the test; its path."""
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        for name, (fields, rows) in files.items():
            with open(pathlib.Path(folder.name) / name, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(fields)
                w.writerows(rows)
        return folder.name
