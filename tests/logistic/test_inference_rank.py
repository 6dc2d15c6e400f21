"""One rank rule for fit_logistic's CollinearityWarning and logistic_inference's error.

Both factorise a matrix with the design's null space scaled to unit diagonal, in the
order intercept, x1, x2, …, and call a column dependent when its 1 − R² on the kept
columns before it is ≤ COLLINEAR_TOL² (1e-12): the same columns, the same rank and the
same names (``x{j+1}`` for numpy column j, a DataFrame's own names), whatever the fit's
tolerance.  A full-rank information matrix whose unit-diagonal condition number is
above ILL_CONDITIONED makes inference warn, naming the nearly collinear columns.
"""

import re
import warnings

import numpy as np
import pytest
from reference import require

import fastgen
from fastgen.logistic import diagnostics

COLLINEAR_TOL = diagnostics.COLLINEAR_TOL
ILL_CONDITIONED = getattr(diagnostics, "ILL_CONDITIONED", 1e8)

pd = require("pandas")


def _fit_warning(X, y, **kw):
    """fastgen's fit and the text of its CollinearityWarning ('' without one).  A fit
    asked for a tight tol on a nearly singular design may stop at max_iter (a plain
    ConvergenceWarning): inference is still computed at its coefficients."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        m = fastgen.fit_logistic(X, y, **kw)
    col = [str(w.message) for w in rec if issubclass(w.category, fastgen.CollinearityWarning)]
    other = [str(w.message) for w in rec
             if w.category is not fastgen.CollinearityWarning
             and not (w.category is fastgen.ConvergenceWarning
                      and "did not converge" in str(w.message))]
    assert not other, other
    assert len(col) <= 1
    return m, (col[0] if col else "")


def _dependent(msg):
    """The dependent columns a message names, and its rank."""
    names = re.findall(r"'([^']+)'(?: \(X\[:, \d+\]\))? (?:=|is zero)", msg)
    rank = re.search(r"rank (\d+) of (\d+)", msg)
    return names, (int(rank.group(1)), int(rank.group(2))) if rank else None


def _design(kind, seed=0, n=400, r=0.0):
    """Designs with exact and near dependencies; r: relative size of the noise added to
    the last column of a combination."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    g = rng.integers(0, 3, n)
    h = rng.integers(0, 4, n)
    if kind == "one-hot":  # a full one-hot block beside the intercept
        X = np.column_stack([np.eye(3)[g], x[:, :2]])
    elif kind == "sum":  # x4 = x1 + x2 (+ noise)
        s = x[:, 0] + x[:, 1]
        X = np.column_stack([x[:, :3], s + r * np.linalg.norm(s) / np.sqrt(n)
                             * rng.normal(size=n)])
    elif kind == "two blocks and a near copy":
        # rank 13 of 16 (+1): two one-hot blocks (one dependent each) and a copy of a
        # feature up to relative 1e-9, which the fit's rule calls dependent
        c = x[:, 0] * (1 + 1e-9 * rng.normal(size=n))
        X = np.column_stack([np.eye(3)[g], np.eye(4)[h], x, c, x[:, 1:] @ [1.0, 2, -1]])
    else:
        raise ValueError(kind)
    eta = x[:, 0] - 0.5 * x[:, 1] + 0.3 * g
    y = (eta + rng.logistic(size=n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("frame", [False, True])
@pytest.mark.parametrize("kind", ["one-hot", "sum", "two blocks and a near copy"])
@pytest.mark.parametrize("tol", [1e-8, 1e-12])
def test_fit_and_inference_name_the_same_columns(kind, frame, tol):
    X, y = _design(kind)
    if frame:
        X = pd.DataFrame(X, columns=[f"c_{j}" for j in range(X.shape[1])])
    m, msg = _fit_warning(X, y, tol=tol)
    names, rank = _dependent(msg)
    assert names and rank
    with pytest.raises(np.linalg.LinAlgError, match="rank-deficient") as exc:
        fastgen.logistic_inference(m, X, y)
    assert _dependent(str(exc.value)) == (names, rank)
    if not frame:
        d = X.shape[1]
        assert set(names) <= {f"x{j}" for j in range(1, d + 1)} | {"intercept"}


@pytest.mark.parametrize("r", [1e-11, 1e-9, 1e-8, 1e-7, 3e-7])
@pytest.mark.parametrize("tol", [1e-8, 1e-10])
def test_near_collinear_is_refused_by_the_rule_not_by_rounding(r, tol):
    """x4 = x1 + x2 up to relative noise r: dependent by the rule (r ≤ 1e-6) for the
    fit and for inference, after a fit at either tolerance."""
    assert r < COLLINEAR_TOL
    X, y = _design("sum", seed=3, r=r)
    m, msg = _fit_warning(X, y, tol=tol)
    assert _dependent(msg)[0] == ["x4"]
    with pytest.raises(np.linalg.LinAlgError, match=r"'x4' \(X\[:, 3\]\) = .*'x1'.*'x2'"):
        fastgen.logistic_inference(m, X, y)


@pytest.mark.parametrize("r", [3e-6, 1e-5, 3e-5])
def test_ill_conditioned_information_warns_naming_the_columns(r):
    """Above the rank rule but with the scaled information's condition number above
    ILL_CONDITIONED: inference warns and names x1, x2, x4 (not x3); the standard errors
    are still returned."""
    X, y = _design("sum", seed=4, r=r)
    m, msg = _fit_warning(X, y, tol=1e-10)
    assert msg == ""
    with pytest.warns(fastgen.CollinearityWarning, match="ill-conditioned") as rec:
        res = fastgen.logistic_inference(m, X, y)
    text = str(rec[0].message)
    involved = re.search(r"the columns \[([^\]]*)\]", text).group(1)
    assert involved == "'x1', 'x2', 'x4'"
    assert np.all(np.isfinite(res.bse))


@pytest.mark.parametrize("r", [1e-3, 1e-1])
def test_well_conditioned_information_is_quiet(r):
    X, y = _design("sum", seed=4, r=r)
    m, msg = _fit_warning(X, y)
    assert msg == ""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fastgen.logistic_inference(m, X, y)


def test_threshold_is_the_scaled_condition_number():
    """The warning follows the condition number of the unit-diagonal information, not
    the units: a column multiplied by 1e6 changes nothing."""
    X, y = _design("sum", seed=4, r=1e-2)
    X[:, 2] *= 1e6
    m, _ = _fit_warning(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fastgen.logistic_inference(m, X, y)
    H = np.linalg.inv(res.cov_params)
    s = np.sqrt(np.diag(H))
    assert np.linalg.cond(H / s[:, None] / s[None, :]) < ILL_CONDITIONED


def test_multinomial_names_the_design_column_once():
    rng = np.random.default_rng(7)
    n = 600
    x = rng.normal(size=(n, 3))
    X = np.column_stack([x, x[:, 0] - 2 * x[:, 2]])
    eta = x @ rng.normal(size=(3, 3))
    y = np.argmax(eta + rng.gumbel(size=(n, 3)), axis=1)
    m, msg = _fit_warning(X, y)
    names, rank = _dependent(msg)
    assert names == ["x4"]
    with pytest.raises(np.linalg.LinAlgError, match="rank-deficient") as exc:
        fastgen.logistic_inference(m, X, y)
    assert _dependent(str(exc.value)) == (names, rank)
