"""FLIC and FLAC (Puhr, Heinze, Nold, Lusa & Geroldinger 2017): ``fit_logistic(X, y,
penalty="firth", correction="flic" | "flac")`` and their inference as logistf's.

References: values recorded from R (logistf's flic.R and flac.R steps on brglm2's Firth
fit and glm, tests/data/brmultinom/make.R), numpy/scipy transcriptions of the paper's
definitions, and the defining property: the mean predicted probability equals the
(weighted) event rate.
"""

import pathlib

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
import scipy.special
import scipy.stats

import fastgen

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "brmultinom"


def _read(name, what):
    d = np.genfromtxt(DATA / f"{name}_data.csv", delimiter=",", names=True)
    X = np.column_stack([d[c] for c in d.dtype.names if c.startswith("x")])
    coef = np.genfromtxt(DATA / f"{name}_{what}_coef.csv", delimiter=",", skip_header=1)
    se = np.genfromtxt(DATA / f"{name}_{what}_se.csv", delimiter=",", skip_header=1)
    return X, d["y"].astype(int), d["w"], coef, se  # intercept first, as R


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


def _rare(seed, n=400, rate=-3.5, weighted=False, separated=False):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.normal(size=n) * 10.0,
                         rng.integers(0, 2, n)])
    y = (rate + X[:, 0] - 0.05 * X[:, 1] + 0.5 * X[:, 2] + rng.logistic(size=n)
         > 0).astype(int)
    y[:2] = [0, 1]
    if separated:  # every event has x3 = 1 ... and x1 above all non-events' x1
        y = (X[:, 0] > np.quantile(X[:, 0], 0.95)).astype(int)
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    return X, y, w


@pytest.mark.parametrize("kind", ["dense", "csr"])
@pytest.mark.parametrize("what", ["firth", "flic", "flac"])
@pytest.mark.parametrize("name", ["rare", "separated2"])
def test_matches_the_r_transcription_of_logistf(name, what, kind):
    """Coefficients and standard errors equal those of logistf's steps run in R, to 1e-6
    relative: FLIC's intercept error from (X̃ᵀWX̃)⁻¹ at its fit, its slopes' from Firth;
    FLAC's from the augmented ML fit."""
    X, y, w, coef, se = _read(name, what)
    Xf = sp.csr_matrix(X) if kind == "csr" else X
    m = fastgen.fit_logistic(Xf, y, penalty="firth", sample_weight=w,
                             correction=None if what == "firth" else what, tol=1e-11)
    assert m.converged and m.solver == what
    assert rel(np.r_[m.intercept, m.coef[0]], coef) < 1e-6
    res = fastgen.logistic_inference(m, Xf, y, sample_weight=w)
    assert rel(res.bse, se) < 1e-6
    assert rel(res.params, coef) < 1e-6
    if what == "flic":
        p0 = np.genfromtxt(DATA / f"{name}_flic_p.csv", skip_header=1)
        assert abs(res.pvalues[0] - p0) <= 1e-6 * p0


CASES = [dict(seed=s, weighted=wt, separated=sep, rate=r)
         for s, wt, sep, r in [(0, False, False, -3.5), (1, True, False, -4.5),
                               (2, False, True, -3.0), (3, True, True, -3.0),
                               (4, True, False, -2.0), (5, False, False, -5.5)]]


@pytest.mark.parametrize("kind", ["dense", "csr"])
@pytest.mark.parametrize("correction", ["flic", "flac"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: str(tuple(c.values())))
def test_mean_prediction_is_the_event_rate(case, correction, kind):
    """The (weighted) mean predicted probability equals the event rate to 1e-10, where
    Firth's exceeds it; rare events, separated data, weights."""
    X, y, w = _rare(**case)
    Xf = sp.csr_matrix(X) if kind == "csr" else X
    m = fastgen.fit_logistic(Xf, y, penalty="firth", correction=correction,
                             sample_weight=w)
    f = fastgen.fit_logistic(Xf, y, penalty="firth", sample_weight=w)
    rate = np.average(y, weights=w)
    assert abs(np.average(fastgen.predict_proba(m, Xf)[:, 1], weights=w) - rate) < 1e-10
    assert np.average(fastgen.predict_proba(f, Xf)[:, 1], weights=w) > rate + 1e-6


def _firth_hat(X, y, w, beta):
    Xt = np.column_stack([np.ones(len(y)), X])
    pi = scipy.special.expit(Xt @ beta)
    v = w * pi * (1 - pi)
    Iinv = np.linalg.inv(Xt.T @ (v[:, None] * Xt))
    return v * np.einsum("ij,jk,ik->i", Xt, Iinv, Xt)


@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: str(tuple(c.values())))
def test_transcriptions_of_the_definitions(case):
    """FLIC: Firth's slopes, the intercept the root of Σw(y − σ(b + xᵀβ)) (brentq).
    FLAC: the ML fit (scipy) on the data augmented by the pseudo-rows of weight h/2
    with responses 1 and 0 and the indicator g."""
    X, y, w = _rare(**case)
    wv = np.ones(len(y)) if w is None else w
    f = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w, tol=1e-12)
    flic = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w, correction="flic",
                                tol=1e-12)
    assert np.array_equal(flic.coef, f.coef)
    off = X @ f.coef[0]
    edge = np.max(np.abs(off)) + 50.0
    b = scipy.optimize.brentq(lambda b: wv @ (y - scipy.special.expit(b + off)), -edge,
                              edge, xtol=1e-14)
    assert abs(flic.intercept[0] - b) < 1e-9 * max(1.0, abs(b))

    flac = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w, correction="flac",
                                tol=1e-12)
    h = _firth_hat(X, y, wv, np.r_[f.intercept, f.coef[0]])
    n = len(y)
    Xa = np.column_stack([np.ones(3 * n), np.vstack([X, X, X]),
                          np.r_[np.zeros(n), np.ones(2 * n)]])
    ya = np.r_[y, np.ones(n), np.zeros(n)]
    wa = np.r_[wv, h / 2, h / 2]

    def nll(b):
        eta = Xa @ b
        return float(wa @ (np.logaddexp(0, eta) - ya * eta))

    def grad(b):
        return Xa.T @ (wa * (scipy.special.expit(Xa @ b) - ya))

    r = scipy.optimize.minimize(nll, np.zeros(Xa.shape[1]), jac=grad, method="BFGS",
                                options={"gtol": 1e-10, "maxiter": 5000})
    got = np.r_[flac.intercept, flac.coef[0]]
    assert rel(got, r.x[:-1]) < 1e-6


def test_inference_conventions():
    """FLIC: the slopes' errors, tests and profile intervals are the Firth fit's, the
    intercept's interval is Wald with its own error, its covariances with the slopes
    NaN; FLAC: the augmented fit's; both report Firth's penalised likelihoods."""
    X, y, w = _rare(7, weighted=True)
    f = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w)
    rf = fastgen.logistic_inference(f, X, y, sample_weight=w, ci="profile")
    m = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w, correction="flic")
    r = fastgen.logistic_inference(m, X, y, sample_weight=w, ci="profile")
    assert r.method == "FLIC"
    assert np.array_equal(r.bse[1:], rf.bse[1:]) and np.array_equal(r.pvalues[1:],
                                                                    rf.pvalues[1:])
    assert np.array_equal(r.conf_int()[1:], rf.conf_int()[1:])
    z = scipy.stats.norm.isf(0.025)
    assert np.allclose(r.conf_int()[0], r.params[0] + np.array([-z, z]) * r.bse[0],
                       rtol=1e-12)
    assert np.all(np.isnan(r.cov_params[0, 1:]))
    assert r.llf == rf.llf and r.llnull == rf.llnull
    a = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w, correction="flac")
    ra = fastgen.logistic_inference(a, X, y, sample_weight=w)
    assert ra.method == "FLAC" and ra.params.shape == (4,) and ra.llf == rf.llf
    assert rel(ra.params, np.r_[a.intercept, a.coef[0]]) < 1e-9
    assert ra.summary()  # the table renders


def test_errors():
    X, y, _ = _rare(0)
    with pytest.raises(ValueError, match="correction"):
        fastgen.fit_logistic(X, y, correction="flic")
    with pytest.raises(ValueError, match="correction"):
        fastgen.fit_logistic(X, y, penalty="firth", correction="lasso")
    with pytest.raises(ValueError, match="fit_intercept"):
        fastgen.fit_logistic(X, y, penalty="firth", correction="flac", fit_intercept=False)
    m = fastgen.fit_logistic(X, y, penalty="firth", correction="flic")
    with pytest.raises(ValueError, match="nonrobust"):
        fastgen.logistic_inference(m, X, y, cov_type="HC0")


@pytest.mark.parametrize("correction", ["flic", "flac"])
def test_inference_with_text_labels_equals_that_with_codes(correction):
    """Labels such as the command line reads ('0', '1', or 'no', 'yes') give the
    inference of the codes 0 and 1 (FLAC's augmented fit compared its 0/1 responses
    with the text labels and refused them)."""
    X, y, w = _rare(1, weighted=True)
    text = np.where(y == 1, "yes", "no")
    m = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w, correction=correction)
    t = fastgen.fit_logistic(X, text, penalty="firth", sample_weight=w,
                             correction=correction)
    a = fastgen.logistic_inference(m, X, y, sample_weight=w)
    b = fastgen.logistic_inference(t, X, text, sample_weight=w)
    for field in ("params", "bse", "pvalues"):
        np.testing.assert_array_equal(getattr(b, field), getattr(a, field))
