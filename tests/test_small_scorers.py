"""Each family's scorer takes the numpy path for small X (``Scorer.small``) and the
kernels otherwise, with the same scores and the same refusals of bad X on both."""

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from fastgen import _small
from fastgen._scorer import MODE_JLL, MODE_LOG_PROBA, MODE_PREDICT, MODE_PROBA

MODES = [MODE_JLL, MODE_LOG_PROBA, MODE_PROBA]


def _fits():
    rng = np.random.default_rng(3)
    n, d = 240, 5
    y = np.arange(n) % 3
    X = rng.standard_normal((n, d)) + 0.8 * y[:, None]
    C = np.floor(rng.random((n, d)) * 4.0) * (rng.random((n, d)) < 0.6)
    C[y == 1, 0] += 2.0
    Q = np.minimum(C, 3.0)
    return [
        ("gda-pooled", fastgen.fit_gda(X, y, "pooled"), X),
        ("gda-per_class", fastgen.fit_gda(X, y, "per_class"), X),
        ("gaussian_nb", fastgen.fit_gaussian_nb(X, y), X),
        ("multinomial-csr", fastgen.fit_multinomial_nb(sp.csr_matrix(C), y), sp.csr_matrix(C)),
        ("bernoulli", fastgen.fit_bernoulli_nb(C, y, binarize=0.5), C),
        ("complement", fastgen.fit_complement_nb(C, y), C),
        ("categorical-csr", fastgen.fit_categorical_nb(sp.csr_matrix(Q), y), sp.csr_matrix(Q)),
        ("logistic-binary", fastgen.fit_logistic(X, (y > 0).astype(int)), X),
        ("logistic-multinomial", fastgen.fit_logistic(X, y), X),
    ]


@pytest.mark.parametrize("case", range(9))
def test_each_scorer_has_a_numpy_path_that_agrees_with_its_kernels(case):
    name, p, X = _fits()[case]
    scorer = p.scorer
    Xv = scorer.prepare(p, X)
    for mode in MODES:
        small = scorer.small(p, Xv, mode)
        assert small is not None, name
        host = scorer.host(p, Xv, mode)
        assert small.dtype == host.dtype and small.shape == host.shape, name
        fin = np.isfinite(host)
        np.testing.assert_array_equal(np.isfinite(small), fin, err_msg=name)
        scale = float(np.max(np.abs(host[fin]), initial=1.0))
        np.testing.assert_allclose(small[fin], host[fin], rtol=0, atol=1e-11 * scale,
                                   err_msg=f"{name} mode {mode}")
    np.testing.assert_array_equal(scorer.score(p, X, MODE_PREDICT),
                                  scorer.host(p, Xv, MODE_PREDICT))


@pytest.mark.parametrize("case", range(9))
def test_small_inputs_do_not_reach_the_host_kernels(monkeypatch, case):
    name, p, X = _fits()[case]
    scorer = p.scorer

    def refuse(*args, **kwargs):
        raise AssertionError(f"{name}: small X reached the host kernels")

    monkeypatch.setattr(type(scorer), "host", refuse)
    out = fastgen.predict_proba(p, X)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-12)
    monkeypatch.setattr(_small, "SMALL_VALUES", -1)
    with pytest.raises(AssertionError, match="reached the host kernels"):
        fastgen.predict_proba(p, X)


@pytest.mark.parametrize("path", ["numpy", "kernels"])
@pytest.mark.parametrize("case", [0, 2, 4, 6, 8])
def test_bad_x_is_refused_on_both_paths_and_left_untouched(monkeypatch, path, case):
    name, p, X = _fits()[case]
    monkeypatch.setattr(_small, "SMALL_VALUES", (1 << 62) if path == "numpy" else -1)
    Xd = X.toarray() if sp.issparse(X) else X.copy()
    Xd[7, 1] = np.nan
    Xs = sp.csr_matrix(Xd) if sp.issparse(X) else Xd
    before = Xd.copy()
    with pytest.raises(ValueError, match=r"NaN|nan|non-integer|category"):
        fastgen.predict_proba(p, Xs)
    np.testing.assert_array_equal(Xd, before)


def _em_fits(monkeypatch, small):
    """EM fits with unlabelled rows of every generative family, on the numpy path
    (``small``) or the kernels'."""
    monkeypatch.setattr(_small, "SMALL_VALUES", (1 << 62) if small else -1)
    rng = np.random.default_rng(11)
    n, d = 200, 4
    y = np.arange(n) % 2
    X = rng.standard_normal((n, d)) + 1.5 * y[:, None]
    U = rng.standard_normal((60, d)) + 1.5 * (np.arange(60) % 2)[:, None]
    C = np.floor(np.exp(X))
    Cu = np.floor(np.exp(U))
    return [fastgen.fit_gda(X, y, "pooled", unlabeled=U),
            fastgen.fit_gda(X, y, "per_class", unlabeled=U),
            fastgen.fit_gaussian_nb(X, y, unlabeled=U),
            fastgen.fit_multinomial_nb(sp.csr_matrix(C), y, unlabeled=sp.csr_matrix(Cu)),
            fastgen.fit_bernoulli_nb(C, y, binarize=1.5, unlabeled=Cu),
            fastgen.fit_categorical_nb(np.minimum(C, 3), y, unlabeled=np.minimum(Cu, 3))]


def test_em_on_small_data_scores_by_numpy_and_agrees_with_the_kernels(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("small data reached the host kernels")

    for scorer in {type(p.scorer) for p in _em_fits(monkeypatch, True)}:
        monkeypatch.setattr(scorer, "host", refuse)
    numpy_fits = _em_fits(monkeypatch, True)
    monkeypatch.undo()
    kernel_fits = _em_fits(monkeypatch, False)
    for a, b in zip(numpy_fits, kernel_fits):
        assert a.n_iter == b.n_iter and a.n_iter > 0, type(a).__name__
        for name in ("class_log_prior", "feature_log_prob", "means", "covariance"):
            if hasattr(a, name) and getattr(a, name) is not None:
                np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-9,
                                           atol=1e-12, err_msg=f"{type(a).__name__}.{name}")
