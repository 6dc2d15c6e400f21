"""One scoring protocol: every params class hands over its tables by
``scoring_tables()``, and its family's scorer picks the host or device kernels.

The tables are checked against plain-numpy transcriptions of each formula (so they are
the model, not a kernel's private layout), and the device route is exercised on the
host with a fake device array whose ``fastgen.cuda.score`` is a numpy transcription."""

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import log_softmax, softmax

import fastgen
from fastgen._scorer import MODE_JLL, MODE_LOG_PROBA, MODE_PREDICT, MODE_PROBA, Scorer

RNG = np.random.default_rng(41)


def _gaussian(n=400, d=6, K=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, d) + rng.normal(size=(K, d))[y] + 20.0
    return X, y


def _counts(n=300, d=12, K=3, seed=1):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = rng.poisson(rng.uniform(0.2, 3.0, (K, d))[y]).astype(np.float64)
    return X, y


def _numpy_jll(kind, t, X):
    """jll of X from the handed-over tables, by the formula each kind documents."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if kind == "pooled":
        Z = X - t.center
        quad = np.sum((Z @ t.whitening.T) ** 2, axis=1)
        return Z @ t.coef + t.bias + t.const - 0.5 * quad[:, None]
    if kind == "per_class":
        return np.stack([t.bias[k] - 0.5 * np.sum(((X - t.means[k]) @ t.inv_cholesky[k].T)
                                                  ** 2, axis=1)
                         for k in range(t.bias.shape[0])], axis=1)
    if kind == "diagonal":
        return t.const - 0.5 * np.stack([np.sum((X - t.means[k]) ** 2 * t.inv_var[k], axis=1)
                                         for k in range(t.const.shape[0])], axis=1)
    if kind == "linear":
        A = (X > t.threshold).astype(np.float64) if t.binarize else X
        return A @ t.weights + t.bias
    if kind == "categorical":
        idx = t.offsets[:-1] + X.astype(np.int64)
        return t.bias + t.table[idx].sum(axis=1)
    if kind == "logistic":
        eta = X @ t.coef.T + t.intercept
        return np.concatenate([np.zeros_like(eta), eta], axis=1) if eta.shape[1] == 1 else eta
    raise AssertionError(kind)


def _models():
    Xg, yg = _gaussian()
    Xw, yw = _gaussian(d=40, seed=2)  # per-class: the stacked kernel (4 <= d < 64)
    Xn, yn = _gaussian(d=70, seed=3)  # per-class: one class at a time (d >= 64)
    Xc, yc = _counts()
    Xcat = np.minimum(Xc, 4.0)
    return [
        ("gda pooled", fastgen.fit_gda(Xg, yg), Xg),
        ("gda pooled rank", fastgen.fit_gda(np.c_[Xg, Xg[:, 0]], yg), np.c_[Xg, Xg[:, 0]]),
        ("gda per_class", fastgen.fit_gda(Xg, yg, "per_class"), Xg),
        ("gda per_class stacked", fastgen.fit_gda(Xw, yw, "per_class"), Xw),
        ("gda per_class wide", fastgen.fit_gda(Xn, yn, "per_class", reg=0.1), Xn),
        ("gda diagonal", fastgen.fit_gda(Xg, yg, "diagonal"), Xg),
        ("gda pooled_diagonal", fastgen.fit_gda(Xg, yg, "pooled_diagonal"), Xg),
        ("gda float32", fastgen.fit_gda(Xg.astype(np.float32), yg), Xg.astype(np.float32)),
        ("gaussian nb", fastgen.fit_gaussian_nb(Xg, yg), Xg),
        ("multinomial", fastgen.fit_multinomial_nb(Xc, yc), Xc),
        ("multinomial csr", fastgen.fit_multinomial_nb(sp.csr_matrix(Xc), yc),
         sp.csr_matrix(Xc)),
        ("complement", fastgen.fit_complement_nb(Xc, yc, norm=True), Xc),
        ("bernoulli", fastgen.fit_bernoulli_nb(Xc, yc, binarize=1.0), Xc),
        ("bernoulli csr", fastgen.fit_bernoulli_nb(Xc, yc), sp.csr_matrix(Xc)),
        ("categorical", fastgen.fit_categorical_nb(Xcat, yc), Xcat),
        ("categorical csr", fastgen.fit_categorical_nb(sp.csr_matrix(Xcat), yc),
         sp.csr_matrix(Xcat)),
        ("logistic", fastgen.fit_logistic(Xg - 20.0, yg % 2), Xg - 20.0),
        ("logistic multinomial", fastgen.fit_logistic(Xg - 20.0, yg), Xg - 20.0),
        ("logistic csr", fastgen.fit_logistic(sp.csr_matrix(Xc), yc), sp.csr_matrix(Xc)),
    ]


MODELS = _models()


@pytest.mark.parametrize("name,params,X", MODELS, ids=[m[0] for m in MODELS])
def test_tables_are_the_formula(name, params, X):
    """Every params class hands over named tables from which numpy's transcription of
    the model's formula gives fastgen's scores, and names a Scorer."""
    kind, tables = params.scoring_tables()
    assert isinstance(params.scorer, Scorer)
    assert isinstance(tables, tuple) and hasattr(tables, "_fields")
    if kind in ("pooled", "per_class", "diagonal"):
        assert all(np.asarray(t).dtype == np.float64 for t in tables)
    want = _numpy_jll(kind, tables, X)
    got = fastgen.joint_log_likelihood(params, X)
    tol = 1e-4 if got.dtype == np.float32 else 1e-9
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    np.testing.assert_allclose(fastgen.predict_log_proba(params, X), log_softmax(want, axis=1),
                               rtol=tol, atol=tol * 10)
    # the public functions are the scorer's, one call each
    for mode, fn in ((MODE_JLL, fastgen.joint_log_likelihood),
                     (MODE_PROBA, fastgen.predict_proba),
                     (MODE_LOG_PROBA, fastgen.predict_log_proba),
                     (MODE_PREDICT, fastgen.predict)):
        a, b = fn(params, X), params.scorer.score(params, X, mode)
        assert a.dtype == b.dtype and np.array_equal(a, b)


class FakeDevice:
    """A 'device array' that lives on the host: the fake device scores it."""

    def __init__(self, a):
        self.a = a


@pytest.fixture
def fake_device(monkeypatch):
    """fastgen.cuda.score replaced by a numpy transcription of the device kernels'
    formula (the float64 tables, X in the params' dtype), recording its calls."""
    import fastgen._scorer as scorer_module
    import fastgen.cuda as cuda

    calls = []

    def score(kind, tables, X, mode, dtype, n_features):
        assert isinstance(X, FakeDevice) and X.a.shape[1] == n_features
        calls.append(kind)
        named = {"pooled": "PooledTables", "per_class": "PerClassTables",
                 "diagonal": "DiagonalTables"}[kind]
        from fastgen.gda import scoring

        if kind == "per_class":  # the device kernel takes (μ, L⁻¹, bias)
            tables = (*tables, np.zeros(n_features))
        jll = _numpy_jll(kind, getattr(scoring, named)(*tables), X.a.astype(dtype))
        if mode == MODE_PREDICT:
            return np.argmax(jll, axis=1)
        out = {MODE_JLL: jll, MODE_LOG_PROBA: log_softmax(jll, axis=1),
               MODE_PROBA: softmax(jll, axis=1)}[mode]
        return out.astype(dtype)

    monkeypatch.setattr(cuda, "score", score)
    monkeypatch.setattr(scorer_module, "is_device_array", lambda X: isinstance(X, FakeDevice))
    return calls


@pytest.mark.parametrize("name,params,X", [m for m in MODELS if m[0].startswith(("gda", "gauss"))],
                         ids=[m[0] for m in MODELS if m[0].startswith(("gda", "gauss"))])
def test_device_route_takes_the_same_tables(name, params, X, fake_device):
    """A device array goes to fastgen.cuda.score with the tables the host kernels use;
    predictions come back as labels of params.classes."""
    tol = 1e-4 if params.dtype == np.float32 else 1e-9
    for fn in (fastgen.joint_log_likelihood, fastgen.predict_log_proba, fastgen.predict_proba):
        got, want = fn(params, FakeDevice(X)), fn(params, X)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    labels = fastgen.predict(params, FakeDevice(X))
    np.testing.assert_array_equal(labels, fastgen.predict(params, X))
    assert labels.dtype == params.classes.dtype
    assert fake_device == [params.scoring_tables()[0]] * 4


@pytest.mark.parametrize("name,params,X",
                         [m for m in MODELS if not m[0].startswith(("gda", "gauss"))],
                         ids=[m[0] for m in MODELS if not m[0].startswith(("gda", "gauss"))])
def test_families_without_device_kernels_refuse_device_arrays(name, params, X, fake_device):
    A = X.toarray() if sp.issparse(X) else X
    for fn in (fastgen.joint_log_likelihood, fastgen.predict):
        with pytest.raises(ValueError, match="device arrays can be scored with GDAParams and "
                                             "GaussianNBParams.*copy X to the host"):
            fn(params, FakeDevice(A))
    assert fake_device == []


def test_kernel_choices_live_in_the_scorers():
    """The params modules hold tables, not kernel-selection thresholds or kernels."""
    import fastgen.gda.params as gda_params
    import fastgen.naive_bayes.gaussian as gnb

    for module in (gda_params, gnb):
        src = inspect.getsource(module)
        for name in ("TRMM_MIN_D", "STACKED_MAX_D", "serves_linear_posteriors",
                     "gaussian_nb_kernel_for", "blas_single_thread", "linear_posteriors"):
            assert name not in src, (module.__name__, name)
    for cls in (fastgen.GDAParams, fastgen.MultinomialNBParams, fastgen.LogisticParams):
        assert not any(hasattr(cls, a) for a in ("_scores", "_predict", "_raw_scores"))
