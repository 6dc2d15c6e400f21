"""Separation is a property of the data, not of where the columns sit: classes that
overlap by a few hundred ulps of a column offset are not separated, at any offset and
unit, and truly separated classes are found at every offset and unit.

The family: offsets 0 … 1e8, units 1e-8 … 1e8, dense, CSR and weighted rows, binary
and multinomial; the overlapping fits are checked against a long-double Newton oracle
(tests/logistic/reference_newton.py).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference_newton import binary_mle

import fastgen
from tests.reference import require

OFFSETS = [0.0, 1e3, 1e6, 1e8]
UNITS = [1e-8, 1.0, 1e8]
LAYOUTS = ["dense", "csr", "weighted"]


def _columns(c, s, gap, seed=22, n=400):
    """One column: the negatives below −0.1, the positives above 0.1, and a pair that
    crosses the boundary by ``gap`` (a negative at +gap, a positive at −gap: the
    classes overlap when gap > 0, are separated by 2|gap| when gap < 0), shifted by
    ``c`` and multiplied by ``s``."""
    rng = np.random.default_rng(seed)
    x = np.r_[-np.abs(rng.normal(size=n // 2)) - 0.1, np.abs(rng.normal(size=n // 2)) + 0.1]
    y = np.r_[np.zeros(n // 2, dtype=np.int64), np.ones(n // 2, dtype=np.int64), 0, 1]
    X = ((np.r_[x, gap, -gap] + c) * s)[:, None]
    return X, y


def _overlap_gap(c):
    """A crossing of 100 ulps of the offset (1e-8 at offset 0)."""
    return max(100.0 * float(np.spacing(c)), 1e-8)


def _layout(X, y, layout, seed=3):
    w = None
    if layout == "weighted":
        w = np.random.default_rng(seed).integers(1, 4, size=y.shape[0]).astype(np.float64)
    return (sp.csr_matrix(X) if layout == "csr" else X), w


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("s", UNITS)
@pytest.mark.parametrize("c", OFFSETS)
def test_overlapping_classes_are_not_separated(c, s, layout):
    X, y = _columns(c, s, _overlap_gap(c))
    assert X[-2, 0] > X[-1, 0]  # the data as stored overlap: the MLE exists
    before = X.copy()
    Xf, w = _layout(X, y, layout)
    assert fastgen.detect_separation(Xf, y, sample_weight=w).kind == "none"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PerfectSeparationWarning, no other warning
        m = fastgen.fit_logistic(Xf, y, sample_weight=w, max_iter=200)
    assert m.converged
    coef, icpt, ll = binary_mle(X, y, w)
    # at the maximum of these data: the likelihood of the long-double optimum, to the
    # fit's tolerance (1e-8 nats; the slope itself is loosely determined, se ≫ 1)
    assert abs(m.log_likelihood - ll) <= 1e-7 * max(1.0, abs(ll))
    # the fitted probabilities of the MLE of the data as stored
    eta_ref = (X[:, 0] - X[:, 0].mean()) * coef[0] + (icpt + coef[0] * X[:, 0].mean())
    eta = (X[:, 0] - X[:, 0].mean()) * float(m.coef[0, 0]) + (
        float(m.intercept[0]) + float(m.coef[0, 0]) * X[:, 0].mean())
    np.testing.assert_allclose(1 / (1 + np.exp(-eta)), 1 / (1 + np.exp(-eta_ref)),
                               atol=1e-6)
    assert np.array_equal(X, before)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("s", UNITS)
@pytest.mark.parametrize("c", OFFSETS)
def test_separated_classes_are_found_at_every_offset_and_unit(c, s, layout):
    X, y = _columns(c, s, -1e-3)  # a gap of 2e-3 in units of the column's spread
    assert X[-2, 0] < X[-1, 0]
    Xf, w = _layout(X, y, layout)
    sep = fastgen.detect_separation(Xf, y, sample_weight=w)
    assert sep.kind == "complete"
    assert sep.coef_direction[0, 0] == 1
    with pytest.warns(fastgen.PerfectSeparationWarning, match="complete separation"):
        m = fastgen.fit_logistic(Xf, y, sample_weight=w)
    assert not m.converged


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("c", OFFSETS)
def test_tied_rows_on_the_boundary_are_quasi_complete(c, layout):
    X, y = _columns(c, 1.0, 0.0)  # one row of each class exactly at the boundary
    assert X[-2, 0] == X[-1, 0]
    Xf, w = _layout(X, y, layout)
    assert fastgen.detect_separation(Xf, y, sample_weight=w).kind == "quasi-complete"


def _three_classes(c, gap, seed=5, n=300):
    """Classes 0 and 1 as in :func:`_columns`; class 2 overlaps both broadly."""
    X, y = _columns(c, 1.0, gap, seed=seed, n=n)
    rng = np.random.default_rng(seed + 1)
    x2 = rng.normal(loc=0.5, scale=1.5, size=n // 2) + c
    return np.r_[X[:, 0], x2][:, None], np.r_[y, np.full(n // 2, 2)]


@pytest.mark.parametrize("c", OFFSETS)
def test_multinomial_overlap_by_ulps_is_not_separated(c):
    X, y = _three_classes(c, _overlap_gap(c))
    assert fastgen.detect_separation(X, y).kind == "none"
    assert fastgen.detect_separation(sp.csr_matrix(X), y).kind == "none"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = fastgen.fit_logistic(X, y, max_iter=300)
    assert m.converged
    # the same fit as on the centred column: the offset changes the intercepts only
    m0 = fastgen.fit_logistic(X - c, y, max_iter=300)
    np.testing.assert_allclose(m.coef, m0.coef, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("c", OFFSETS)
def test_multinomial_separation_is_found_at_every_offset(c):
    rng = np.random.default_rng(8)
    n = 90
    x = np.r_[rng.uniform(-3, -1, n), rng.uniform(1, 3, n), rng.uniform(-0.5, 0.5, n)]
    X = (x + c)[:, None]
    y = np.repeat([0, 1, 2], n)
    assert fastgen.detect_separation(X, y).separated
    with pytest.warns(fastgen.PerfectSeparationWarning):
        fastgen.fit_logistic(X, y)


@pytest.mark.parametrize("c", [0.0, 1e6, 1e8])
@pytest.mark.parametrize("case,want", [("overlap", "none"), ("gap", "complete"),
                                       ("tie", "quasi-complete")])
def test_dask_blocks_decide_as_memory_does(case, want, c):
    da = require("dask.array")
    import fastgen.dask as fd

    gap = {"overlap": _overlap_gap(c), "gap": -1e-3, "tie": 0.0}[case]
    X, y = _columns(c, 1.0, gap)
    got = fd.separation_over_blocks(da.from_array(X, chunks=(101, 1)), y, None,
                                    np.unique(y))
    assert got.kind == want == fastgen.detect_separation(X, y).kind
