"""The linear dependency a CollinearityWarning (or inference's rank error, or
:func:`fastgen.logistic.collinear_columns`) reports reads the same at every column
offset: no spurious ``-2.98e-06·'intercept'`` from the offsets' rounding, and a real
constant term kept.

The family: offsets 0 … 1e8 on the collinear columns, dependencies with and without a
constant, dense, CSR and weighted rows, binary and multinomial fits, inference; the
expected combination is the one the data were built with, checked independently by
least squares on the centred columns.
"""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from fastgen.logistic import collinear_columns

OFFSETS = [0.0, 1e2, 1e4, 1e6, 1e7, 1e8]


def _data(c, const, K=2, seed=11, n=1500):
    """x3 = x1 + x2 + const, with x1 and x2 offset by c (x3 by 2c + const)."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    if K == 2:
        y = (rng.random(n) < 1 / (1 + np.exp(-(Z @ [1.0, -0.5, 0.2])))).astype(np.int64)
    else:
        y = rng.integers(0, K, size=n)
    x1, x2 = Z[:, 0] + c, Z[:, 1] + c
    X = np.c_[x1, x2, x1 + x2 + const, 3.0 * Z[:, 2] + c]
    w = rng.integers(1, 4, size=n).astype(np.float64)
    return X, y, w


def _terms(text):
    """{name: coefficient} of the first combination of a message: ``'x3' = …``."""
    m = re.search(r"'x3' = ([^.;]*(?:\.\d[^.;]*)*?)(?:\. |;|$)", text)
    assert m, text
    out = {}
    for sign, val, name in re.findall(r"([+-]?)\s*([0-9.e+-]+)·'(\w+)'", m.group(1)):
        out[name] = float(val) * (-1.0 if sign == "-" else 1.0)
    return out


def _lstsq_terms(X, w):
    """The combination x3 = Σ a_i x_i + b by weighted least squares on centred columns
    (an independent transcription): {name: coefficient}, the intercept only where it
    is resolved above the offsets' rounding."""
    m = np.average(X, axis=0, weights=w)
    Xc = X - m
    sw = np.sqrt(w)[:, None]
    a = np.linalg.lstsq(Xc[:, :2] * sw, Xc[:, 2] * sw[:, 0], rcond=None)[0]
    a = np.round(a, 8)
    b = m[2] - a @ m[:2]
    out = {"x1": float(a[0]), "x2": float(a[1])}
    if abs(b) > 1e-8 * (abs(m[2]) + np.abs(a) @ np.abs(m[:2])):
        out["intercept"] = float(b)
    return out


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("const", [0.0, 5.0])
@pytest.mark.parametrize("c", OFFSETS)
def test_fit_warning_reads_the_same_at_every_offset(c, const, layout):
    X, y, w = _data(c, const)
    w = w if layout == "weighted" else None
    Xf = sp.csr_matrix(X) if layout == "csr" else X
    with pytest.warns(fastgen.CollinearityWarning) as rec:
        fastgen.fit_logistic(Xf, y, sample_weight=w)
    text = str(rec[0].message)
    got = _terms(text)
    want = {"x1": 1.0, "x2": 1.0} if const == 0.0 else {"intercept": 5.0, "x1": 1.0,
                                                         "x2": 1.0}
    assert set(got) == set(want), text
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-3), text
    # the intercept's term, when there, comes first, as at offset 0
    assert ("'x3' = 5·'intercept'" in text) == (const != 0.0), text
    ref = _lstsq_terms(X, np.ones(X.shape[0]) if w is None else w)
    assert set(ref) == set(got)


@pytest.mark.parametrize("c", OFFSETS)
def test_collinear_columns_and_the_multinomial_fit_agree(c):
    X, y, _ = _data(c, 0.0, K=3)
    col = collinear_columns(X)
    assert col.describe() == "'x3' = 1·'x1' + 1·'x2'"
    with pytest.warns(fastgen.CollinearityWarning, match=r"'x3' = 1·'x1' \+ 1·'x2'\. "):
        fastgen.fit_logistic(X, y)


@pytest.mark.parametrize("const", [0.0, 5.0])
@pytest.mark.parametrize("c", OFFSETS)
def test_inference_rank_error_reads_the_same(c, const):
    X, y, _ = _data(c, const)
    Xr = np.c_[X[:, :2], X[:, 3]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = fastgen.fit_logistic(Xr, y)
    # the model of three columns, given the design whose third is their sum: widen it
    import dataclasses

    wide = dataclasses.replace(
        m, coef=np.c_[m.coef[:, :2], np.zeros((1, 1)), m.coef[:, 2:]])
    with pytest.raises(np.linalg.LinAlgError) as exc:
        fastgen.logistic_inference(wide, X, y)
    got = _terms(str(exc.value))
    assert ("intercept" in got) == (const != 0.0), str(exc.value)
    assert got["x1"] == pytest.approx(1.0) and got["x2"] == pytest.approx(1.0)
