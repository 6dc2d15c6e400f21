"""Firth's estimate and its profile-likelihood intervals on separated and nearly
separated data, against an independent optimiser of the penalised log-likelihood.

The reference is a plain-numpy transcription of l*(β) = l(β) + ½ log det I(β) and of
its gradient U*(β), maximised by scipy's BFGS from many starts.  On these data l* is
not concave and can have several local maxima, both over all coefficients and with one
coefficient fixed, so:

- the fit must return the highest maximum that its fixed set of starts reaches, be a
  maximum (scipy started there does not move), reach at least what scipy reaches from
  the other starts and what firthmodels reports, and warn when its starts disagree;
- each profile bound must be where 2(l*max − max_{β_j=b} l*) equals the χ² quantile,
  to 1e-6, and the statistic must be below the quantile between the estimate and it.
"""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from reference import require
from scipy.special import expit, log_expit

import fastgen
from fastgen.logistic import firth_profile, firth_starts

firthmodels = require("firthmodels")
datasets = require("sklearn.datasets")

CRIT = scipy.stats.chi2.isf(0.05, 1)


# --------------------------------------------------------------------------- reference


class Lstar:
    """l*(β) and U*(β) by numpy on the design [X, 1] (intercept last)."""

    def __init__(self, X, y):
        self.Xt = np.column_stack([X, np.ones(len(y))])
        self.y = np.asarray(y, dtype=float)

    def value(self, b):
        eta = self.Xt @ b
        ll = np.sum(self.y * log_expit(eta) + (1 - self.y) * log_expit(-eta))
        v = expit(eta) * expit(-eta)
        sign, logdet = np.linalg.slogdet(self.Xt.T @ (v[:, None] * self.Xt))
        return ll + 0.5 * logdet if sign > 0 else -np.inf

    def grad(self, b):
        eta = self.Xt @ b
        pi = expit(eta)
        v = pi * expit(-eta)
        info = self.Xt.T @ (v[:, None] * self.Xt)
        h = v * np.einsum("ij,ji->i", self.Xt, np.linalg.solve(info, self.Xt.T))
        return self.Xt.T @ (self.y - pi + h * (0.5 - pi))

    def maximise(self, start, fixed=None):
        """BFGS on −l* over the coordinates not in ``fixed`` ({j: b}); (l*, β)."""
        p = self.Xt.shape[1]
        fixed = fixed or {}
        free = np.array([k for k in range(p) if k not in fixed])
        full = np.zeros(p)
        for k, v in fixed.items():
            full[k] = v

        def put(z):
            b = full.copy()
            b[free] = z
            return b

        def fun(z):
            v = self.value(put(z))
            return -v if np.isfinite(v) else 1e300

        def jac(z):
            try:
                return -self.grad(put(z))[free]
            except np.linalg.LinAlgError:
                return np.zeros(free.size)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = scipy.optimize.minimize(fun, np.asarray(start, float)[free], jac=jac,
                                        method="BFGS",
                                        options={"gtol": 1e-11, "maxiter": 20000})
        return -float(r.fun), put(r.x)

    def starts(self, rng, around, n_random=8):
        p = self.Xt.shape[1]
        scale = np.r_[1.0 / np.maximum(self.Xt[:, :-1].std(0), 1e-12), 1.0]
        out = [np.zeros(p), np.asarray(around, float)]
        out += [rng.normal(scale=s, size=p) * scale for s in (1.0, 3.0)
                for _ in range(n_random // 2)]
        return out

    def profile(self, j, b, bhat, rng, n_random=6, steps=8):
        """max_{β_j=b} l*: the best of BFGS from zero, the estimate, random starts and
        a numpy continuation from the estimate in ``steps`` warm-started steps."""
        best = -np.inf
        for s in self.starts(rng, bhat, n_random):
            s = s.copy()
            s[j] = b
            best = max(best, self.maximise(s, {j: b})[0])
        cur = np.asarray(bhat, float).copy()
        for t in np.linspace(0, 1, steps + 1)[1:]:
            bt = bhat[j] + t * (b - bhat[j])
            v, cur = self.maximise(cur, {j: bt})
        return max(best, v)


def _beta(m):
    return np.r_[np.asarray(m.coef[0], float), np.asarray(m.intercept, float)]


def _firthmodels(X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return firthmodels.FirthLogisticRegression(
            backend="numpy", gtol=1e-12, xtol=1e-12, max_iter=300).fit(X, y)


def _fit(X, y):
    """fastgen's Firth fit and whether it warned of several maxima."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        m = fastgen.fit_logistic(X, y, penalty="firth")
    several = [w for w in rec if "several local maxima" in str(w.message)]
    other = [w for w in rec if w not in several]
    assert not other, [str(w.message) for w in other]
    return m, bool(several)


# --------------------------------------------------------------------------- data


def _standardised(X):
    return (X - X.mean(0)) / X.std(0)


def _iris(a, b, cols):
    X, y = datasets.load_iris(return_X_y=True)
    keep = (y == a) | (y == b)
    return X[keep][:, cols], (y[keep] == b).astype(int)


def _wine(k, cols, std=True):
    X, y = datasets.load_wine(return_X_y=True)
    X = _standardised(X) if std else X
    return X[:, cols], (y == k).astype(int)


def _cancer(cols, std=True):
    X, y = datasets.load_breast_cancer(return_X_y=True)
    X = _standardised(X) if std else X
    return X[:, cols], y


def _separated(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


def _quasi(n=60, seed=3):
    """A binary indicator with no events when it is 1: quasi-complete separation."""
    rng = np.random.default_rng(seed)
    g = (rng.random(n) < 0.2).astype(float)
    x = rng.normal(size=n)
    y = ((x + rng.logistic(size=n) > 0) & (g == 0)).astype(int)
    return np.column_stack([g, x]), y


#: Separated and nearly separated data: real subsets that sklearn ships and synthetic
#: ones; ``several`` marks those on which l* has several maxima that Newton from zero
#: and from the ridge start tell apart (the fit must warn there).
FITS = {
    "iris setosa/versicolor sepal": (lambda: _iris(0, 1, [0, 1]), False),
    "iris versicolor/virginica petal": (lambda: _iris(1, 2, [2, 3]), False),
    "wine 0 raw": (lambda: _wine(0, [0, 6, 9, 12], std=False), False),
    "wine 2 even columns": (lambda: _wine(2, list(range(0, 13, 2))), True),
    "breast cancer worst": (lambda: _cancer(list(range(20, 30))), True),
    "breast cancer all": (lambda: _cancer(list(range(30))), True),
    "breast cancer raw 9": (lambda: _cancer([1, 2, 3, 9, 11, 12, 13, 22, 23], std=False),
                            True),
    "complete separation": (_separated, False),
    "quasi-complete separation": (_quasi, False),
}


@pytest.mark.parametrize("name", list(FITS))
def test_fit_returns_the_highest_maximum_found(name):
    make, several = FITS[name]
    X, y = make()
    m, warned = _fit(X, y)
    assert m.converged
    assert warned == several
    ref = Lstar(X, y)
    beta = _beta(m)
    top = ref.value(beta)
    tol = 1e-9 * max(1.0, abs(top))
    # a maximum: the gradient vanishes and scipy started there does not climb
    assert np.max(np.abs(ref.grad(beta))) / len(y) < 1e-7
    assert ref.maximise(beta)[0] <= top + tol
    # at least as high as scipy from zero, from firthmodels' estimate and random starts,
    # and as firthmodels' own estimate
    f = _firthmodels(X, y)
    fm = np.r_[f.coef_, f.intercept_]
    assert ref.value(fm) <= top + tol
    rng = np.random.default_rng(0)
    for s in ref.starts(rng, fm, n_random=2):
        assert ref.maximise(s)[0] <= top + 1e-7 * max(1.0, abs(top)), name
    if abs(ref.value(fm) - top) <= tol:  # the same maximum: the same coefficients
        assert np.max(np.abs(beta - fm)) <= 1e-5 * np.max(np.abs(fm))


def test_the_start_set_is_tried_only_on_evidence(monkeypatch):
    """Ordinary data (rows ≫ coefficients, Fisher scoring fast, |η| moderate) make one
    run; separated data try the other starts."""
    calls = {"n": 0}
    ridge = firth_starts._ridge_start

    def counting(*args):
        calls["n"] += 1
        return ridge(*args)

    monkeypatch.setattr(firth_starts, "_ridge_start", counting)
    rng = np.random.default_rng(5)
    for n, d in [(4000, 3), (20000, 16)]:
        X = rng.normal(size=(n, d))
        y = (X @ rng.normal(size=d) / np.sqrt(d) + rng.logistic(size=n) > 0).astype(int)
        fastgen.fit_logistic(X, y, penalty="firth")
    assert calls["n"] == 0
    fastgen.fit_logistic(*_separated(), penalty="firth")
    assert calls["n"] == 1


@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_start_is_equivariant_to_units(sparse):
    """The ridge start is taken on the columns scaled to unit standard deviation:
    rescaling a column of X by c rescales its start by 1/c, so the start set finds
    the same maxima whatever the units."""
    import scipy.sparse as sp

    X, y = _cancer(list(range(20, 30)), std=False)
    c = np.logspace(-4, 4, X.shape[1])
    w = np.random.default_rng(0).integers(1, 3, y.shape[0]).astype(float)
    conv = sp.csr_matrix if sparse else np.ascontiguousarray
    codes = y.astype(np.int32)
    a = firth_starts._ridge_start(conv(X), codes, w, True)
    b = firth_starts._ridge_start(conv(X * c), codes, w, True)
    np.testing.assert_allclose(b[:-1] * c, a[:-1], rtol=1e-6)
    np.testing.assert_allclose(b[-1], a[-1], rtol=1e-6)


# --------------------------------------------------------------------------- profile


def _profile(X, y):
    m, _ = _fit(X, y)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = fastgen.logistic_inference(m, X, y, ci="profile")
    notes = [str(w.message) for w in rec]
    return m, res, notes


PROFILES = {
    "iris setosa/versicolor sepal": lambda: _iris(0, 1, [0, 1]),
    "iris versicolor/virginica sepal": lambda: _iris(1, 2, [0, 1]),
    "complete separation": _separated,
    "quasi-complete separation": _quasi,
    "one feature, quasi-separated": lambda: (
        np.array([[0.0], [0], [0], [1], [1], [1], [0.5], [0.2]]),
        np.array([0, 0, 0, 1, 1, 1, 1, 0])),
}


@pytest.mark.parametrize("name", list(PROFILES))
def test_profile_bounds_are_where_the_statistic_is_the_quantile(name):
    X, y = PROFILES[name]()
    m, res, notes = _profile(X, y)
    ref = Lstar(X, y)
    bhat = _beta(m)
    lmax = ref.value(bhat)
    p = bhat.shape[0]
    rng = np.random.default_rng(1)
    ci = np.r_[res.profile_ci[1:], res.profile_ci[:1]]  # intercept last, as bhat
    assert np.all(np.isfinite(ci)) or notes
    for j in range(p):
        for side in (0, 1):
            b = ci[j, side]
            if not np.isfinite(b):
                continue
            stat = 2.0 * (lmax - ref.profile(j, b, bhat, rng))
            assert abs(stat - CRIT) <= 1e-6, (name, j, side, b, stat)
            for t in (0.5, 0.95):  # inside: the statistic below the quantile
                bt = bhat[j] + t * (b - bhat[j])
                assert 2.0 * (lmax - ref.profile(j, bt, bhat, rng, n_random=4)) < CRIT
        # the penalised likelihood-ratio p-value of β_j = 0
        lr = max(2.0 * (lmax - ref.profile(j, 0.0, bhat, rng)), 0.0)
        lrp = np.r_[res.lr_pvalues[1:], res.lr_pvalues[:1]][j]
        assert abs(lrp - scipy.stats.chi2.sf(lr, 1)) <= 1e-6 * max(1.0, lrp) + 1e-12


def test_issue_example_sepal_length_bound_is_firthmodels():
    """Iris, setosa against versicolor, the two sepal features: the upper bound of
    sepal length is 31.65 (firthmodels' bound; the search once stopped at 24.67, where
    the statistic is 2.97), and the search says that l* has several constrained maxima
    there."""
    X, y = _iris(0, 1, [0, 1])
    m, res, notes = _profile(X, y)
    f = _firthmodels(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ci = f.conf_int(method="pl", tol=1e-10, max_iter=200)
    assert abs(res.profile_ci[1, 1] - ci[0, 1]) <= 1e-6 * abs(ci[0, 1])
    assert res.profile_ci[1, 1] == pytest.approx(31.651, abs=1e-3)
    assert any("several maxima" in n for n in notes)


def test_no_bound_without_a_converged_fit(monkeypatch):
    """Constrained fits that stop short are never taken as the profile: the search
    warns, and each bound it still returns is where the statistic is the quantile."""
    X, y = _iris(1, 2, [0, 1])
    m, _ = _fit(X, y)
    bhat = _beta(m)
    se = fastgen.logistic_inference(m, X, y).bse[1]
    constrained = firth_profile._constrained

    def failing(obj, beta_start, j, b, sw, tol, max_iter):
        st, U, conv = constrained(obj, beta_start, j, b, sw, tol, max_iter)
        # beyond 1.5 estimated standard errors on the upper side, nothing converges
        return st, U, conv and not (j == 0 and b > bhat[0] + 1.5 * se)

    monkeypatch.setattr(firth_profile, "_constrained", failing)
    with pytest.warns(fastgen.ConvergenceWarning, match="did not converge"):
        res = fastgen.logistic_inference(m, X, y, ci="profile")
    assert np.isnan(res.profile_ci[1, 1])
    ref = Lstar(X, y)
    lo = res.profile_ci[1, 0]
    stat = 2.0 * (ref.value(bhat) - ref.profile(0, lo, bhat, np.random.default_rng(2)))
    assert abs(stat - CRIT) <= 1e-6


def test_non_monotone_profile_warns(monkeypatch):
    """A profile that rises again on its way out (here a wiggle added to the constrained
    l*, with its slope) is reported, and a bound returned beyond it is still where the
    (wiggled) statistic is the quantile."""
    X, y = _iris(1, 2, [0, 1])
    m, res0, _ = _profile(X, y)
    b_hat = m.coef[0, 0]
    span = res0.profile_ci[1, 1] - b_hat
    point = firth_profile._profile_point
    amp, k = 2.5, 2.5  # +2.5 at the bound: above the estimate's value there

    def wiggled(obj, base, st_hat, j, b, *args):
        got = point(obj, base, st_hat, j, b, *args)
        if got is None or j != 0 or b <= b_hat:
            return got
        st, U, several = got
        t = (b - b_hat) / span
        st.lstar = st.lstar + amp * np.sin(np.pi * k * t) ** 2
        U = U.copy()
        U[0] += amp * np.pi * k / span * np.sin(2 * np.pi * k * t)
        return st, U, several

    monkeypatch.setattr(firth_profile, "_profile_point", wiggled)
    with pytest.warns(fastgen.ConvergenceWarning, match="not monotone"):
        fastgen.logistic_inference(m, X, y, ci="profile")
