"""Every message counts rows and columns as numpy indexes them, from 0, and says so.

"column 3" once meant ``X[:, 3]`` in one message and the third column (statsmodels'
``x3``, ``X[:, 2]``) in another.  The convention (docs/guide/inputs.rst): a position in
a message is numpy's, marked "(0-based)"; a data frame's column is named too; the
default names of logistic regression's tables, ``x1 … xd`` (statsmodels', counted from
1), are names, and messages give the position after them: ``'x4' (X[:, 3])``.

Checked two ways: every f-string in fastgen that puts a number after "column" or
"feature" says "0-based" (a source scan, so that a new message cannot slip), and the
messages of the public functions name the entry that is really at that position, on
dense, CSR and data-frame inputs, through the fits, scoring and the command line.
"""

import ast
import csv
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from fastgen import cli

ROOT = Path(__file__).resolve().parents[1]
_BEFORE_NUMBER = re.compile(r"\b(column|feature|features)\s*$")

#: f-strings whose number after "column"/"feature" is marked "(0-based)" by a part
#: computed elsewhere in the same message (file, text the f-string starts with)
_MARKED_ELSEWHERE = {
    ("fastgen/cli/csvio.py", "{}, line {}, column {}: the cell"),  # name or "j (0-based)"
    ("fastgen/stats/category_counts.py", "X has category code {}{}, but feature {}"),
}


def _unmarked_positions():
    for path in sorted((ROOT / "fastgen").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.JoinedStr):
                continue
            parts = node.values
            text = "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in parts)
            for a, b in zip(parts, parts[1:]):
                if (isinstance(a, ast.Constant) and isinstance(b, ast.FormattedValue)
                        and b.conversion != ord("r") and _BEFORE_NUMBER.search(a.value)
                        and "0-based" not in text
                        and not any(rel == f and text.startswith(t)
                                    for f, t in _MARKED_ELSEWHERE)):
                    yield f"{rel}:{node.lineno}: {text[:100]!r}"


def test_every_message_position_says_it_counts_from_zero():
    assert list(_unmarked_positions()) == []


def test_no_message_counts_columns_from_one():
    """A "+ 1" next to a column in a message is a 1-based position; only the default
    names of logistic regression (x1 … xd, statsmodels') count from 1."""
    hits = []
    for path in sorted((ROOT / "fastgen").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"(column|feature)s? \{\w+ \+ 1\}", line):
                hits.append(f"{rel}:{i}: {line.strip()}")
    assert hits == []


# ----------------------------------------------------------------- the messages

def _blobs(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return rng.standard_normal((n, d)) + y[:, None], y


def _message(call, *args, **kw):
    with pytest.raises(ValueError) as info:
        call(*args, **kw)
    return str(info.value)


@pytest.mark.parametrize("form", ["dense", "csr", "frame"])
@pytest.mark.parametrize("i, j", [(0, 0), (17, 2), (59, 3)])
@pytest.mark.parametrize("fit", ["gda", "gaussian_nb", "logistic", "multinomial_nb"])
def test_nan_is_named_at_its_numpy_position(form, i, j, fit):
    X, y = _blobs()
    X = np.abs(X)
    X[i, j] = np.nan
    names = [f"f{k}" for k in range(X.shape[1])]
    if form == "csr":
        if fit == "gda":
            pytest.skip("fit_gda takes dense X")
        Xin = sp.csr_matrix(X)
    elif form == "frame":
        pd = pytest.importorskip("pandas")
        Xin = pd.DataFrame(X, columns=names)
    else:
        Xin = X
    call = {"gda": fastgen.fit_gda, "gaussian_nb": fastgen.fit_gaussian_nb,
            "logistic": fastgen.fit_logistic,
            "multinomial_nb": fastgen.fit_multinomial_nb}[fit]
    if fit == "gaussian_nb" and form == "csr":
        pytest.skip("Gaussian naive Bayes takes dense X")
    msg = _message(call, Xin, y)
    found = re.search(r"row (\d+), column (\d+) \(0-based(?:, '([^']+)')?\)", msg)
    assert found, msg
    r, c = int(found.group(1)), int(found.group(2))
    assert np.isnan(X[r, c]) and (r, c) == (i, j)  # the entry at numpy's position
    if form == "frame" and found.group(3) is not None:
        assert found.group(3) == names[c]


@pytest.mark.parametrize("j", [0, 2])
def test_a_negative_count_and_a_scored_one_are_at_numpy_positions(j):
    X, y = _blobs()
    X = np.abs(X)
    X[5, j] = -2.0
    msg = _message(fastgen.fit_multinomial_nb, X, y)
    r, c = map(int, re.search(r"row (\d+), column (\d+) \(0-based\)", msg).groups())
    assert X[r, c] == -2.0
    model = fastgen.fit_multinomial_nb(np.abs(X), y)
    msg = _message(fastgen.predict, model, X)
    r, c = map(int, re.search(r"row (\d+), column (\d+) \(0-based\)", msg).groups())
    assert X[r, c] == -2.0


def test_a_constant_feature_is_named_at_its_numpy_position():
    X, y = _blobs()
    X[:, 1] = 3.0
    msg = _message(fastgen.fit_gda, X, y, "pooled_diagonal", var_smoothing=0.0)
    j = int(re.search(r"feature (\d+) \(0-based\)", msg).group(1))
    assert np.ptp(X[:, j]) == 0


@pytest.mark.parametrize("sparse", [False, True])
def test_logistic_names_unnamed_columns_by_name_and_position(sparse):
    """fit_logistic's CollinearityWarning, Firth's refusal and logistic_inference's
    refusal name the dependent column 'x3' and its position X[:, 2] alike, and the
    combination they state holds for those numpy columns."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 4))
    X[:, 2] = X[:, 0] + 2.0 * X[:, 1]
    y = (X[:, 0] + rng.standard_normal(300) > 0).astype(int)
    Xin = sp.csr_matrix(X) if sparse else X
    pattern = re.compile(r"'x(\d+)' \(X\[:, (\d+)\]\) = 1·'x(\d+)' \(X\[:, (\d+)\]\) "
                         r"\+ 2·'x(\d+)' \(X\[:, (\d+)\]\)")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        model = fastgen.fit_logistic(Xin, y)
    fit_msg = next(str(w.message) for w in rec
                   if issubclass(w.category, fastgen.CollinearityWarning))
    with pytest.raises(np.linalg.LinAlgError) as info:
        fastgen.logistic_inference(model, Xin, y)
    with pytest.raises(np.linalg.LinAlgError) as firth:
        fastgen.fit_logistic(Xin, y, penalty="firth")
    for msg in (fit_msg, str(info.value), str(firth.value)):
        found = pattern.search(msg)
        assert found, msg
        names, cols = [int(v) for v in found.groups()[::2]], [int(v) for v in
                                                              found.groups()[1::2]]
        assert names == [c + 1 for c in cols]  # statsmodels' names, numpy's positions
        np.testing.assert_allclose(X[:, cols[0]], X[:, cols[1]] + 2.0 * X[:, cols[2]])


def test_separation_names_the_position_of_a_default_name():
    X = np.array([[-2.0, 0.3], [-1.0, -0.2], [-0.5, 0.1], [0.5, 0.4], [1.0, -0.3],
                  [2.0, 0.2]])
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(fastgen.PerfectSeparationWarning) as rec:
        fastgen.fit_logistic(X, y)
    msg = str(rec[0].message)
    assert "+x1 (X[:, 0])" in msg, msg


# ----------------------------------------------------------------- the command line

def _csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return str(path)


def _cli_error(args, capsys):
    assert cli.main([str(a) for a in args]) == 2
    return capsys.readouterr().err.strip()


def test_cli_names_file_lines_and_column_names(tmp_path, capsys):
    rows = [[1, 2, 3, "a"], [2, 1, 3, "b"], [1, -6, 3, "a"], [2, 2, 3, "b"]]
    data = _csv(tmp_path / "d.csv", ["p", "q", "r", "y"], rows)
    err = _cli_error(["fit", "--model", "multinomial_nb", data, "--target", "y", "-o",
                      tmp_path / "m"], capsys)
    # the model's "row 2, column 1 (0-based)" is the file's line 4, column 'q'
    assert f"{data!r}, line 4, column 'q': X contains a negative value (-6.0);" in err, err
    assert "0-based" not in err


@pytest.mark.parametrize("message, said", [
    ("X value at row 1, column 0 (0-based; 1e+308) overflows float32",
     "'d.csv', line 4, column 'b': X value (1e+308) overflows float32"),
    ("X contains NaN at row 0, column 1 (0-based)",
     "'d.csv', line 2, column 'a': X contains NaN"),
    ("y contains NaN (a missing label) at row 1; every row needs a label",
     "'d.csv', line 4: y contains NaN (a missing label); every row needs a label"),
])
def test_cli_maps_a_zero_based_position_to_the_file(message, said):
    from fastgen.cli.commands import located

    assert located(message, "d.csv", [2, 4], ["b", "a"]) == said


def test_cli_collinear_columns_by_their_names(tmp_path, capsys):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(80), rng.standard_normal(80)
    y = (a + rng.standard_normal(80) > 0).astype(int)
    rows = [[a[i], b[i], a[i] + 2 * b[i], y[i]] for i in range(80)]
    data = _csv(tmp_path / "d.csv", ["a", "b", "c", "y"], rows)
    err = _cli_error(["fit", "--model", "logistic", "--firth", data, "--target", "y",
                      "-o", tmp_path / "m"], capsys)
    assert "'c' = 1·'a' + 2·'b'" in err and "X[:" not in err, err


@pytest.mark.parametrize("header, row, where", [
    (["a", "b", "y"], ["2\x00", "1", "0"], "line 2, column 'a'"),
    (["a", "b\x00", "y"], ["2", "1", "0"], "line 1, column 1 (0-based)"),
])
def test_cli_nul_cells_by_name_or_zero_based_position(tmp_path, capsys, header, row, where):
    data = _csv(tmp_path / "n.csv", header, [row, ["1", "2", "1"]])
    err = _cli_error(["fit", "--model", "lda", data, "--target", "y", "-o",
                      tmp_path / "m"], capsys)
    assert f"{data!r}, {where}: the cell" in err, err


def test_cli_unnamed_header_column_is_zero_based(tmp_path, capsys):
    data = _csv(tmp_path / "h.csv", ["a", "", "y"], [[1, 2, 0], [2, 1, 1]])
    err = _cli_error(["fit", "--model", "lda", data, "--target", "y", "-o",
                      tmp_path / "m"], capsys)
    assert err.endswith(f"{data!r}: column 1 (0-based) of the header has no name"), err


@pytest.mark.parametrize("fit", [
    lambda Z, y: fastgen.fit_gda(Z, y, "diagonal", var_smoothing=0.0),
    lambda Z, y: fastgen.fit_gda(Z, y, "pooled_diagonal", var_smoothing=0.0),
    lambda Z, y: fastgen.fit_gaussian_nb(Z, y, var_smoothing=0.0),
], ids=["diagonal", "pooled_diagonal", "gaussian_nb"])
@pytest.mark.parametrize("j", [0, 2])
def test_a_data_frames_column_is_named_with_its_position(fit, j):
    pd = pytest.importorskip("pandas")
    X, y = _blobs()
    X[:, j] = 2.5
    names = ["age", "height", "weight", "income"]
    array_msg = _message(fit, X, y)
    frame_msg = _message(fit, pd.DataFrame(X, columns=names), y)
    assert f"feature {j} (0-based) " in array_msg, array_msg
    assert f"feature {j} (0-based, {names[j]!r}) " in frame_msg, frame_msg
    assert frame_msg.replace(f", {names[j]!r}", "") == array_msg
