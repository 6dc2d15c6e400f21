"""The ``reg`` a failed per-class fit suggests, at every scale of the data.

Σ_k ← (1 − reg)Σ_k + reg·I: reg adds reg·I in X's units and keeps (1 − reg) of each
class covariance.  The advice must (a) make the fit succeed when followed, (b) be on
the data's scale (not 1e-14 that merely passes the checks and leaves posteriors of 0 or
1), and (c) never swamp the covariances: at most 0.1 wherever a class has a spread of
its own (reg = 1 would replace every Σ_k by I).  Where no reg ≤ 0.1 is on the scale of
the features' variances, the advice is to standardise them first.  Where no class has
any spread, reg·I is every class's covariance, and the message says so.
"""

import hashlib
import re

import numpy as np
import pytest

import fastgen
from fastgen import SingularCovarianceError
from fastgen.gda.reg_advice import REG_MAX

_REG = re.compile(r"reg=([0-9.e+-]+) makes the fit succeed")
SCALES = [1e-6, 1e-4, 1e-2, 0.3, 1.0, 2.0, 5.0, 30.0, 1e2, 1e4, 1e6]


def _data(kind, scale, dtype=np.float64):
    rng = np.random.default_rng(11)
    if kind == "collinear":  # class 1 spans 3 of 4 directions
        y = np.arange(300) % 3
        X = rng.standard_normal((300, 4)) + y[:, None]
        X[y == 1, 3] = X[y == 1, 0] - 2.0 * X[y == 1, 1]
    elif kind == "few rows":  # class 2: 3 rows in 5 dimensions
        y = np.repeat(np.arange(3), [60, 60, 3])
        X = rng.standard_normal((123, 5)) + y[:, None]
    elif kind == "constant in a class":
        y = np.arange(300) % 3
        X = rng.standard_normal((300, 4)) + y[:, None]
        X[y == 0, 2] = 1.0
    elif kind == "one row of one class":  # the others have a spread
        y = np.repeat(np.arange(3), [50, 50, 1])
        X = rng.standard_normal((101, 3)) + y[:, None]
    else:
        raise AssertionError(kind)
    return (X * scale + 3.0 * scale).astype(dtype), y


def _within_median(X, y):
    """The median over features of the pooled within-class variance (÷n)."""
    X = X.astype(np.float64)
    R = X.copy()
    for k in np.unique(y):
        R[y == k] -= X[y == k].mean(axis=0)
    return float(np.median((R ** 2).mean(axis=0)))


def _follow(X, y, **kw):
    before = hashlib.sha256(X.tobytes()).hexdigest()
    with pytest.raises(SingularCovarianceError) as info:
        fastgen.fit_gda(X, y, "per_class", **kw)
    assert hashlib.sha256(X.tobytes()).hexdigest() == before
    msg = str(info.value)
    reg = float(_REG.search(msg).group(1))
    Z = X
    if "standardise the features" in msg:
        Z = (X.astype(np.float64) / X.astype(np.float64).std(axis=0)).astype(X.dtype)
    return msg, reg, Z, fastgen.fit_gda(Z, y, "per_class", **dict(kw, reg=reg))


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("kind", ["collinear", "few rows", "constant in a class",
                                  "one row of one class"])
@pytest.mark.parametrize("unbiased", [False, True])
def test_suggested_reg_fits_on_the_data_scale_without_swamping(kind, scale, unbiased):
    X, y = _data(kind, scale)
    if unbiased and kind == "one row of one class":
        pytest.skip("÷(n_k − 1) of a one-row class is refused before any reg advice")
    msg, reg, Z, p = _follow(X, y, unbiased=unbiased)
    assert 0 < reg <= REG_MAX, msg  # (1 − reg) keeps ≥ 90 % of every Σ_k
    # on the scale of the data it is applied to: near a tenth of the median
    # within-class variance, never orders of magnitude below it
    m = _within_median(Z, y)
    assert reg >= 1e-2 * min(m, 1.0), (msg, m)
    if Z is X:
        assert 10.0 ** np.round(np.log10(0.1 * m)) <= REG_MAX, msg
    else:
        # standardised only where no reg ≤ REG_MAX was on X's own scale
        assert 10.0 ** np.round(np.log10(0.1 * _within_median(X, y))) > REG_MAX, msg
    # the fit succeeds and keeps (1 − reg) of the class covariances it could estimate
    Zf = Z.astype(np.float64)
    for k in range(3):
        rows = Zf[y == k]
        if len(rows) > Z.shape[1]:
            S = np.cov(rows, rowvar=False, bias=not unbiased)
            np.testing.assert_allclose(p.covariance[k], (1 - reg) * S + reg * np.eye(len(S)),
                                       rtol=1e-9, atol=1e-12 * np.abs(S).max())
    P = fastgen.predict_proba(p, Z)
    assert np.all(np.isfinite(P))
    assert np.mean(P.max(axis=1) < 1 - 1e-9) > 0.1, msg  # graded, not all 0 or 1
    # a model like the pooled one on the same data (an independent fit)
    ref = fastgen.predict(fastgen.fit_gda(X, y, "pooled"), X)
    assert np.mean(fastgen.predict(p, Z) == ref) > 0.8


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float32_advice_is_followed_too(scale, dtype):
    X, y = _data("collinear", scale, dtype)
    msg, reg, Z, p = _follow(X, y)
    assert 0 < reg <= REG_MAX, msg
    assert np.all(np.isfinite(fastgen.predict_log_proba(p, Z)))


@pytest.mark.parametrize("scale", SCALES)
def test_too_small_reg_gets_a_larger_one_that_works(scale):
    X, y = _data("collinear", scale)
    # far below the data's scale, and not enough
    given = 1e-30
    msg, reg, Z, p = _follow(X, y, reg=given)
    assert f"reg={given:g} is not enough" in msg
    assert given < reg <= REG_MAX


@pytest.mark.parametrize("given", [0.1, 0.5])
def test_reg_at_the_cap_already_is_told_to_standardise(given):
    # variances 1e12: even reg = 0.5 adds nothing visible; no reg ≤ REG_MAX helps in
    # X's units, so the advice is the standardised one, and says a larger one swamps
    X, y = _data("collinear", 1e6)
    msg, reg, Z, p = _follow(X, y, reg=given)
    assert f"reg={given:g} is not enough" in msg
    assert "standardise the features" in msg and Z is not X
    assert 0 < reg <= REG_MAX
    assert "swamp" in msg


@pytest.mark.parametrize("scale", SCALES)
def test_no_class_with_spread_says_reg_is_the_whole_covariance(scale):
    """One row per class: no covariance can be estimated, per class or pooled; the
    message says reg·I is then each class's covariance, does not offer the pooled
    model (which fails too), and its reg gives graded posteriors."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((4, 3)) * scale + 3.0 * scale
    y = np.arange(4)
    msg, reg, Z, p = _follow(X, y)
    assert "no class has any spread" in msg and "covariance='pooled'" not in msg, msg
    with pytest.raises(SingularCovarianceError):
        fastgen.fit_gda(X, y, "pooled")
    assert 0 < reg <= 1.0
    # each class's covariance is reg·I, about the features' variance
    v = float(np.median(Z.astype(np.float64).var(axis=0)))
    np.testing.assert_allclose(p.covariance, np.broadcast_to(reg * np.eye(3), (4, 3, 3)))
    assert v / 10 ** 0.6 <= reg <= v * 10 ** 0.6, (msg, v)
    fresh = rng.standard_normal((400, 3)) * scale + 3.0 * scale
    if Z is not X:
        fresh = fresh / X.std(axis=0)
    assert np.median(fastgen.predict_proba(p, fresh).max(axis=1)) < 0.999


@pytest.mark.parametrize("scale", [1e-6, 3.0, 1e6])
def test_moments_route_gives_the_same_advice(scale):
    """gda_from_moments (streaming, Dask) builds the same per-class model: the same
    message, and its reg makes that route succeed too."""
    X, y = _data("collinear", scale)
    with pytest.raises(SingularCovarianceError) as direct:
        fastgen.fit_gda(X, y, "per_class")
    m = fastgen.class_moments(X, y, kind="per_class")
    with pytest.raises(SingularCovarianceError) as merged:
        fastgen.gda_from_moments(m, "per_class")
    assert str(merged.value) == str(direct.value)
    reg = float(_REG.search(str(merged.value)).group(1))
    assert reg <= REG_MAX
    if "standardise the features" in str(merged.value):
        Z = X / X.std(axis=0)
        m = fastgen.class_moments(Z, y, kind="per_class")
    fastgen.gda_from_moments(m, "per_class", reg=reg)
