"""The CLI's messages about a fit name the CSV's columns, not the model layer's default
names ('x1' for column 0) of the array it fits."""

import subprocess
import sys

import numpy as np
import pytest


@pytest.fixture
def duplicated(tmp_path):
    rng = np.random.default_rng(0)
    age, bmi = rng.normal(size=(2, 80))
    y = np.where(age + bmi + rng.normal(size=80) > 0, "yes", "no")
    path = tmp_path / "dup.csv"
    lines = ["age,bmi,bmi_again,y"] + [f"{a:.17g},{b:.17g},{b:.17g},{c}" for a, b, c in
                                      zip(age, bmi, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("firth", [False, True])
def test_collinear_columns_are_named_by_the_csv(duplicated, firth):
    cmd = [sys.executable, "-m", "fastgen", "fit", "--model", "logistic", "--summary",
           str(duplicated), "--target", "y"] + (["--firth"] if firth else [])
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 2
    assert "'bmi_again' = 1·'bmi'" in res.stderr
    assert "'x" not in res.stderr
