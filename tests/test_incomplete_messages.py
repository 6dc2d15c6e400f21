"""The messages of incomplete-data fits and scores say what is wrong with what: a
rank-deficient model (not each row), a covariance that EM cannot estimate (with
advice that names other kinds than the failing one, and that works)."""

import re
import warnings

import numpy as np
import pytest

import fastgen
from fastgen import _small

_KINDS = ("pooled", "per_class", "diagonal", "pooled_diagonal")


def _collinear(seed, n=200, offset=0.0):
    """Two classes, feature 2 = feature 0 + feature 1 exactly: a pooled model of rank 2."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 3)) + y[:, None] + offset
    X[:, 2] = X[:, 0] + X[:, 1]
    return X, y


def _with_holes(X, seed, frac=0.2):
    Xm = X.copy()
    Xm[np.random.default_rng(seed).random(X.shape) < frac] = np.nan
    Xm[0] = X[0]  # one complete row
    Xm[1, 1] = np.nan
    return Xm


@pytest.mark.parametrize("seed,offset", [(0, 0.0), (1, 50.0), (2, -1e3)])
@pytest.mark.parametrize("size", ["small", "kernel"])
def test_rank_deficient_model_message_is_about_the_model(seed, offset, size):
    X, y = _collinear(seed, offset=offset)
    p = fastgen.fit_gda(X, y, "pooled")
    assert p.rank == 2
    rows = 8 if size == "small" else max(_small.SMALL_VALUES // 3 + 1, 4000)
    Q = np.repeat(_with_holes(X[:8], seed), rows // 8 + 1, axis=0)[:rows]
    before = Q.copy()
    for score in (fastgen.predict, fastgen.predict_proba, fastgen.joint_log_likelihood):
        with pytest.raises(ValueError) as info:
            score(p, Q, nan_policy="marginalize")
        msg = str(info.value)
        assert "this pooled model cannot score any of them" in msg
        assert "rank 2 < 3" in msg and "no marginal density over any subset" in msg
        assert "of a row" not in msg
        assert "reg>0" in msg
    np.testing.assert_array_equal(Q, before)
    # the advice works: with reg the model has full rank and scores the rows
    q = fastgen.fit_gda(X, y, "pooled", reg=1e-3)
    assert np.all(np.isfinite(fastgen.predict_proba(q, Q, nan_policy="marginalize")))
    # complete rows are scored by the rank-2 model as before
    assert np.all(np.isfinite(fastgen.predict_proba(p, X[:5], nan_policy="marginalize")))


@pytest.mark.parametrize("kind", ["per_class", "diagonal", "pooled_diagonal"])
def test_only_pooled_models_can_be_rank_deficient(kind):
    """The other kinds have full rank or refuse to fit: none raises the message."""
    X, y = _collinear(3)
    try:
        p = fastgen.fit_gda(X, y, kind)
    except fastgen.SingularCovarianceError:
        assert kind == "per_class"
        p = fastgen.fit_gda(X, y, kind, reg=1e-3)
    assert p.rank == 3
    out = fastgen.predict_proba(p, _with_holes(X[:8], 3), nan_policy="marginalize")
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-12)


def test_singular_start_of_the_combined_em_names_the_model():
    X, y = _collinear(4)
    U = _with_holes(X[100:], 4)
    with pytest.raises(fastgen.SingularCovarianceError) as info:
        fastgen.fit_gda(X[:100], y[:100], "pooled", nan_policy="marginalize", unlabeled=U)
    msg = str(info.value)
    assert "no marginal density over any subset of the features" in msg
    assert "of a row" not in msg
    # the pooled model itself failed: the advice names other kinds, which work
    kinds = re.findall(r"'(\w+)'", msg.split("use ")[-1])
    assert kinds and "pooled" not in kinds
    for kind in kinds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
            fastgen.fit_gda(X[:100], y[:100], kind, nan_policy="marginalize", unlabeled=U)


def _few_rows(seed):
    """Six rows per class in five dimensions, 40 % missing: EM's covariances head for
    singular matrices, where the likelihood is unbounded."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 5))
    X[rng.random(X.shape) < 0.4] = np.nan
    return X, np.arange(12) % 2


def _collinear_class(seed):
    """Class 1 with feature 2 = 2·feature 0 − feature 1 exactly, 5 % missing."""
    rng = np.random.default_rng(seed)
    y = np.arange(60) % 2
    X = rng.normal(size=(60, 3)) + y[:, None]
    X[y == 1, 2] = 2.0 * X[y == 1, 0] - X[y == 1, 1]
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y


# (data, how EM fails): the likelihood falls by rounding near a singular covariance
# (it used to fail as a "damaged file" history), a singular block of Σ_k that only some
# rows' patterns need (it used to be a StopIteration), a covariance not positive definite
_EM_FAILURES = [
    (_few_rows(0), "is close to singular after"),
    (_few_rows(8), "is close to singular after"),
    (_collinear_class(16), "is numerically singular on the observed features of some rows"),
    (_collinear_class(0), "is not positive definite after"),
]


@pytest.mark.parametrize("case", range(4))
@pytest.mark.parametrize("reg", [0.0, 0.1])
def test_em_that_cannot_estimate_a_covariance_says_so(case, reg):
    """A clear SingularCovarianceError naming the class and EM (never a "damaged
    file" error of the params, nor a StopIteration), whatever reg (it applies after
    EM); the kinds it advises fit the same data."""
    (X, y), how = _EM_FAILURES[case]
    before = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(fastgen.SingularCovarianceError) as info:
            fastgen.fit_gda(X, y, "per_class", nan_policy="marginalize", reg=reg)
    msg = str(info.value)
    assert msg.startswith("EM with missing features: the covariance of class ")
    assert how in msg
    assert "damaged" not in msg
    assert "covariance='pooled' or 'diagonal'" in msg
    np.testing.assert_array_equal(X, before)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind in ("pooled", "diagonal"):
            p = fastgen.fit_gda(X, y, kind, nan_policy="marginalize")
            assert np.all(np.isfinite(p.covariance))


@pytest.mark.parametrize("seed", [8, 11, 16])
def test_pooled_em_failure_advises_other_kinds(seed):
    """Eight rows in five dimensions, 40 % missing: EM cannot estimate the pooled
    covariance (close to singular, or singular from the start or on the way)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(8, 5))
    X[rng.random(X.shape) < 0.4] = np.nan
    y = np.arange(8) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(fastgen.SingularCovarianceError) as info:
            fastgen.fit_gda(X, y, "pooled", nan_policy="marginalize")
        msg = str(info.value)
        assert msg.startswith("EM with missing features: the pooled covariance is ")
        assert "covariance='pooled_diagonal' or 'diagonal'" in msg
        for kind in ("pooled_diagonal", "diagonal"):
            fastgen.fit_gda(X, y, kind, nan_policy="marginalize")
