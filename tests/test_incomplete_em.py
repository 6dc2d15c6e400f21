"""Unlabelled rows and missing features together: ``unlabeled=`` with
``nan_policy="marginalize"`` and NaN in the labelled rows, the unlabelled rows, or both.

Every family is compared with an independent plain-numpy EM written here from the
formulas (the E-step by the marginal of the observed features; the M-step: for the
factorising models the available-case statistics with fractional memberships, for the
full-covariance Gaussian models the conditional means and covariances of the missing
values, Ghahramani & Jordan 1994), run to a fixed point; the fits run at the tightest
``em_tol`` and must agree to 1e-6 in the parameters.
"""

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.special import logsumexp

import fastgen
from fastgen import _small

WHERE = ["X", "U", "both"]


def incomplete_data(seed, where, d=3, K=3, n_lab=10, n_unl=30, p=0.2, all_missing=2,
                    offset=0.0, scale=1.0):
    """Labelled rows (n_lab per class) and unlabelled rows of K Gaussian classes, with
    values removed at random from X (``where`` "X" or "both"; every class keeps an
    observed value of every feature) and from U ("U" or "both", whose first
    ``all_missing`` rows lose every value)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 3.0, (K, d))
    A = rng.normal(0.0, 0.3, (K, d, d)) + np.eye(d)

    def draw(n):
        y = np.repeat(np.arange(K), n // K)
        return centres[y] + np.einsum("nij,nj->ni", A[y], rng.normal(size=(y.shape[0], d))), y

    X, y = draw(n_lab * K)
    U, _ = draw(n_unl)
    if where in ("X", "both"):
        while True:
            mask = rng.random(X.shape) < p
            if all((~mask[y == k]).sum(axis=0).min() >= 3 for k in range(K)):
                break
        X[mask] = np.nan
    if where in ("U", "both"):
        U[rng.random(U.shape) < p] = np.nan
        U[:all_missing] = np.nan
    return X * scale + offset, y, U * scale + offset


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        if sp.issparse(a):
            for part in (a.data, a.indices, a.indptr):
                h.update(part.tobytes())
        else:
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _rows(X, y, U, w, lam):
    """(x, label or None, weight) of every labelled and unlabelled row."""
    w = np.ones(X.shape[0]) if w is None else w
    return [(X[i], int(y[i]), float(w[i])) for i in range(X.shape[0])] + \
        [(u, None, lam) for u in U]


def _memberships(logp, label, weight):
    if label is None:
        return weight * np.exp(logp - logsumexp(logp))
    r = np.zeros(logp.shape[0])
    r[label] = weight
    return r


# --------------------------------------------- the references: plain numpy EMs

def _log_normal(x, mu, S):
    L = np.linalg.cholesky(S)
    z = np.linalg.solve(L, x - mu)
    return -0.5 * (z @ z + x.shape[0] * np.log(2 * np.pi)) - np.log(np.diag(L)).sum()


def _conditional(x, o, mu, S):
    """E[x | x_o] and Cov[x | x_o] (zero on the observed block) under N(mu, S)."""
    m = ~o
    xhat, C = x.copy(), np.zeros_like(S)
    if not m.any():
        return xhat, C
    if not o.any():
        return mu.copy(), S.copy()
    B = S[np.ix_(m, o)] @ np.linalg.inv(S[np.ix_(o, o)])
    xhat[m] = mu[m] + B @ (x[o] - mu[o])
    C[np.ix_(m, m)] = S[np.ix_(m, m)] - B @ S[np.ix_(o, m)]
    return xhat, C


def reference_full_em(X, y, U, K, pooled, w=None, lam=1.0, iters=3000, start=None):
    """The joint EM over missing labels and missing values, row by row, from the
    labelled-only maximum-likelihood fit (the same EM without U), as the fit starts:
    a Gaussian mixture has several fixed points."""
    c = np.nanmean(X, axis=0)  # second moments about c: no cancellation at offsets
    if start is None and U.shape[0]:
        start = reference_full_em(X, y, U[:0], K, pooled, w, lam, iters)
    if start is not None:
        start = (start[0], start[1] - c, start[2])
    X, U = X - c, U - c
    rows = _rows(X, y, U, w, lam)
    d = X.shape[1]
    wl = np.ones(X.shape[0]) if w is None else w
    if start is None:
        mu = np.array([np.nanmean(X[y == k], axis=0) for k in range(K)])
        S = np.array([np.diag(np.nanvar(X[y == k], axis=0)) for k in range(K)])
        if pooled:
            S[:] = S.mean(axis=0)
        pi = np.bincount(y, wl, K) / wl.sum()
    else:
        pi, mu, S = start
        S = np.broadcast_to(S, (K, d, d)).copy()
    for _ in range(iters):
        W, s1, s2 = np.zeros(K), np.zeros((K, d)), np.zeros((K, d, d))
        for x, label, weight in rows:
            o = ~np.isnan(x)
            logp = np.log(pi) + np.array(
                [_log_normal(x[o], mu[k][o], S[k][np.ix_(o, o)]) if o.any() else 0.0
                 for k in range(K)])
            r = _memberships(logp, label, weight)
            for k in range(K):
                if r[k] == 0.0:
                    continue
                xhat, C = _conditional(x, o, mu[k], S[k])
                W[k] += r[k]
                s1[k] += r[k] * xhat
                s2[k] += r[k] * (np.outer(xhat, xhat) + C)
        new_mu = s1 / W[:, None]
        outer = np.einsum("k,ki,kj->kij", W, new_mu, new_mu)
        new_S = (s2 - outer) / W[:, None, None]
        if pooled:
            new_S[:] = (s2 - outer).sum(axis=0) / W.sum()
        new_pi = W / W.sum()
        change = max(np.abs(new_mu - mu).max() / max(1.0, np.abs(mu).max()),
                     np.abs(new_S - S).max() / max(1.0, np.abs(S).max()),
                     np.abs(new_pi - pi).max())
        pi, mu, S = new_pi, new_mu, new_S
        if change < 1e-13:
            break
    return pi, mu + c, S[0] if pooled else S


def reference_diagonal_em(X, y, U, K, pooled, w=None, lam=1.0, iters=5000):
    """Available-case EM of the diagonal Gaussian models (no variance floor)."""
    Z = np.vstack([X, U])
    O = ~np.isnan(Z)
    Z0 = np.where(O, Z, 0.0)
    wl = np.ones(X.shape[0]) if w is None else w
    Rl = np.zeros((X.shape[0], K))
    Rl[np.arange(X.shape[0]), y] = wl
    R = np.vstack([Rl, np.zeros((U.shape[0], K))])
    mu = var = pi = None
    for _ in range(iters):
        if mu is not None:
            Ou, Zu = O[X.shape[0]:], Z0[X.shape[0]:]
            logp = np.log(pi) + np.stack(
                [(Ou * (-0.5 * np.log(2 * np.pi * var[k]) - (Zu - mu[k]) ** 2
                        / (2 * var[k]))).sum(axis=1) for k in range(K)], axis=1)
            R[X.shape[0]:] = lam * np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        else:
            R[X.shape[0]:] = 0.0  # the labelled-only start
        N = R.T @ O
        new_mu = (R.T @ Z0) / N
        sq = np.stack([R[:, k] @ (O * (Z0 - new_mu[k]) ** 2) for k in range(K)])
        new_var = sq.sum(axis=0) / N.sum(axis=0) * np.ones((K, 1)) if pooled else sq / N
        new_pi = R.sum(axis=0) / R.sum()
        if mu is not None and max(np.abs(new_mu - mu).max(), np.abs(new_var - var).max(),
                                  np.abs(new_pi - pi).max()) < 1e-14:
            mu, var, pi = new_mu, new_var, new_pi
            break
        mu, var, pi = new_mu, new_var, new_pi
    return pi, mu, var


def reference_bernoulli_em(X, y, U, K, t, alpha, w=None, lam=1.0, iters=5000):
    """EM of Bernoulli naive Bayes over the observed entries: p = (F + α)/(N_kj + 2α)."""
    Z = np.vstack([X, U])
    O = ~np.isnan(Z)
    B = (np.where(O, Z, -np.inf) > t).astype(float)
    wl = np.ones(X.shape[0]) if w is None else w
    n = X.shape[0]
    R = np.zeros((Z.shape[0], K))
    R[np.arange(n), y] = wl
    p = pi = None
    for _ in range(iters):
        if p is not None:
            logp = np.log(pi) + (O[n:] * B[n:]) @ np.log(p).T \
                + (O[n:] * (1 - B[n:])) @ np.log(1 - p).T
            R[n:] = lam * np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        new_p = (R.T @ B + alpha) / (R.T @ O + 2 * alpha)
        new_pi = R.sum(axis=0) / R.sum()
        done = p is not None and max(np.abs(new_p - p).max(),
                                     np.abs(new_pi - pi).max()) < 1e-14
        p, pi = new_p, new_pi
        if done:
            break
    return pi, p


def reference_categorical_em(X, y, U, K, alpha, w=None, lam=1.0, iters=5000):
    """EM of categorical naive Bayes over the observed codes."""
    Z = np.vstack([X, U])
    O = ~np.isnan(Z)
    codes = np.where(O, Z, 0).astype(int)
    m = codes.max(axis=0) + 1
    onehot = [np.stack([(codes[:, j] == c) & O[:, j] for c in range(m[j])], axis=1)
              .astype(float) for j in range(Z.shape[1])]
    wl = np.ones(X.shape[0]) if w is None else w
    n = X.shape[0]
    R = np.zeros((Z.shape[0], K))
    R[np.arange(n), y] = wl
    theta = pi = None
    for _ in range(iters):
        if theta is not None:
            logp = np.log(pi) + sum(onehot[j][n:] @ np.log(theta[j]).T
                                    for j in range(Z.shape[1]))
            R[n:] = lam * np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        counts = [R.T @ onehot[j] for j in range(Z.shape[1])]
        new_theta = [(c + alpha) / (c.sum(axis=1, keepdims=True) + alpha * c.shape[1])
                     for c in counts]
        new_pi = R.sum(axis=0) / R.sum()
        done = theta is not None and max(
            max(np.abs(a - b).max() for a, b in zip(new_theta, theta)),
            np.abs(new_pi - pi).max()) < 1e-14
        theta, pi = new_theta, new_pi
        if done:
            break
    return pi, np.hstack(theta)


# ------------------------------------------------------ agreement with the references

TIGHT = {"em_tol": 0.0, "em_max_iter": 5000, "nan_policy": "marginalize"}


def _close(a, b, what):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), b, rtol=1e-6, atol=1e-6,
                               err_msg=what)


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("covariance", ["pooled", "per_class"])
def test_full_covariance_em_matches_numpy(covariance, where):
    # per-class covariances need more labelled rows (ten per class leave one singular)
    X, y, U = incomplete_data(1, where, n_lab=10 if covariance == "pooled" else 20)
    p = fastgen.fit_gda(X, y, covariance, unlabeled=U, **TIGHT)
    pi, mu, S = reference_full_em(X, y, U, 3, covariance == "pooled")
    assert p.converged and p.history_monotone
    _close(p.priors, pi, "priors")
    _close(p.means, mu, "means")
    _close(p.covariance, S, "covariance")


@pytest.mark.parametrize("covariance", ["pooled", "per_class"])
def test_full_covariance_em_with_weights_and_lambda(covariance):
    X, y, U = incomplete_data(2, "both", n_lab=20, offset=50.0)
    X[[0, 25]] = np.nan  # labelled rows with every value missing count for the priors
    w = np.random.default_rng(2).uniform(0.5, 2.0, X.shape[0])
    p = fastgen.fit_gda(X, y, covariance, unlabeled=U, sample_weight=w,
                        unlabeled_weight=0.4, **TIGHT)
    pi, mu, S = reference_full_em(X, y, U, 3, covariance == "pooled", w=w, lam=0.4)
    _close(p.priors, pi, "priors")
    _close(p.means, mu, "means")
    _close(p.covariance, S, "covariance")


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("covariance", ["diagonal", "pooled_diagonal"])
def test_diagonal_em_matches_numpy(covariance, where):
    X, y, U = incomplete_data(3, where)
    w = np.random.default_rng(3).uniform(0.5, 2.0, X.shape[0])
    p = fastgen.fit_gda(X, y, covariance, unlabeled=U, var_smoothing=0.0,
                        sample_weight=w, unlabeled_weight=0.7, **TIGHT)
    pi, mu, var = reference_diagonal_em(X, y, U, 3, covariance == "pooled_diagonal",
                                        w=w, lam=0.7)
    assert p.converged and p.history_monotone
    _close(p.priors, pi, "priors")
    _close(p.means, mu, "means")
    _close(p.covariance, var[0] if covariance == "pooled_diagonal" else var, "variances")


@pytest.mark.parametrize("where", WHERE)
def test_gaussian_nb_em_matches_numpy(where):
    X, y, U = incomplete_data(4, where)
    p = fastgen.fit_gaussian_nb(X, y, unlabeled=U, var_smoothing=0.0, **TIGHT)
    pi, mu, var = reference_diagonal_em(X, y, U, 3, False)
    assert p.converged and p.history_monotone
    _close(np.exp(p.class_log_prior), pi, "priors")
    _close(p.means, mu, "means")
    _close(p.variances, var, "variances")


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("csr, t", [(False, 0.5), (False, -0.5), (True, 0.5)])
def test_bernoulli_em_matches_numpy(where, csr, t):
    """A negative threshold (dense only) counts a missing entry for neither F nor N."""
    X, y, U = incomplete_data(5, where)
    w = np.random.default_rng(5).uniform(0.5, 2.0, X.shape[0])
    Xf, Uf = (sp.csr_matrix(X), sp.csr_matrix(U)) if csr else (X, U)
    p = fastgen.fit_bernoulli_nb(Xf, y, binarize=t, alpha=0.5, unlabeled=Uf,
                                 sample_weight=w, unlabeled_weight=0.6, **TIGHT)
    pi, prob = reference_bernoulli_em(X, y, U, 3, t, 0.5, w=w, lam=0.6)
    assert p.converged and p.history_monotone
    _close(np.exp(p.class_log_prior), pi, "priors")
    _close(np.exp(p.feature_log_prob), prob, "p")
    _close(np.exp(p.neg_feature_log_prob), 1 - prob, "1 - p")


def _codes(A):
    return np.where(np.isnan(A), A, np.clip(np.round(A + 2.0), 0, 5))


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("csr", [False, True])
def test_categorical_em_matches_numpy(where, csr):
    X, y, U = incomplete_data(6, where)
    X, U = _codes(X), _codes(U)
    Xf, Uf = (sp.csr_matrix(X), sp.csr_matrix(U)) if csr else (X, U)
    p = fastgen.fit_categorical_nb(Xf, y, alpha=0.3, unlabeled=Uf, **TIGHT)
    pi, theta = reference_categorical_em(X, y, U, 3, 0.3)
    assert p.converged and p.history_monotone
    _close(np.exp(p.class_log_prior), pi, "priors")
    _close(np.exp(p.feature_log_prob), theta, "theta")


# ------------------------------------------------------------------ monotone history

FAMILIES = {
    "pooled": lambda X, y, U, **k: fastgen.fit_gda(X, y, "pooled", unlabeled=U, **k),
    "per_class": lambda X, y, U, **k: fastgen.fit_gda(X, y, "per_class", unlabeled=U, **k),
    "diagonal": lambda X, y, U, **k: fastgen.fit_gda(X, y, "diagonal", unlabeled=U,
                                                     var_smoothing=0.0, **k),
    "pooled_diagonal": lambda X, y, U, **k: fastgen.fit_gda(
        X, y, "pooled_diagonal", unlabeled=U, var_smoothing=0.0, **k),
    "gaussian_nb": lambda X, y, U, **k: fastgen.fit_gaussian_nb(
        X, y, unlabeled=U, var_smoothing=0.0, **k),
    "bernoulli": lambda X, y, U, **k: fastgen.fit_bernoulli_nb(
        X, y, binarize=0.0, unlabeled=U, **k),
    "categorical": lambda X, y, U, **k: fastgen.fit_categorical_nb(
        _codes(X), y, unlabeled=None if U is None else _codes(U), **k),
}


@given(seed=st.integers(0, 2**16), family=st.sampled_from(sorted(FAMILIES)),
       where=st.sampled_from(WHERE), p=st.floats(0.05, 0.5),
       lam=st.sampled_from([0.1, 1.0, 2.5]), offset=st.sampled_from([0.0, 1e3]),
       weighted=st.booleans())
def test_history_never_decreases(seed, family, where, p, lam, offset, weighted):
    """The observed-data log-likelihood (labelled rows' joint, unlabelled rows'
    marginal mixture, over the observed coordinates) never decreases."""
    X, y, U = incomplete_data(seed, where, p=p, n_lab=15, n_unl=40, offset=offset)
    w = np.random.default_rng(seed).uniform(0.2, 3.0, X.shape[0]) if weighted else None
    fit = FAMILIES[family]
    import warnings

    with warnings.catch_warnings():
        # a per-class mixture may stop on its collapse guard, or run out of
        # iterations; pairs never observed together only warn
        warnings.simplefilter("ignore")
        try:
            params = fit(X, y, U, nan_policy="marginalize", unlabeled_weight=lam,
                         sample_weight=w, em_max_iter=60)
        except fastgen.SingularCovarianceError:
            assume(False)  # the labelled rows alone give a singular start: no EM
    h = params.log_likelihood_history
    assert params.history_monotone is True
    assert h.shape == (params.n_iter + 1,)
    assert np.all(np.diff(h) >= -1e-9 * np.maximum(1.0, np.abs(h[1:])))


# ------------------------------------------------------------------- consistency

@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_without_nan_it_is_the_unlabelled_em(family):
    X, y, U = incomplete_data(7, "none")
    fit = FAMILIES[family]
    assert fit(X, y, U, nan_policy="marginalize") == fit(X, y, U)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_rows_missing_everything_leave_the_fixed_point(family):
    """Unlabelled rows with every value missing add nothing to the likelihood: with
    them, the combined EM reaches today's unlabelled EM (complete U) and, with no
    other unlabelled row, today's missing-feature fit."""
    X, y, U = incomplete_data(8, "none")
    blank = np.full((4, X.shape[1]), np.nan)
    fit = FAMILIES[family]
    tight = {"em_tol": 0.0, "em_max_iter": 5000}
    combined = fit(X, y, np.vstack([U, blank]), nan_policy="marginalize", **tight)
    today = fit(X, y, U, **tight)
    _same_model(combined, today)
    Xn, y, _ = incomplete_data(8, "X")
    alone = fit(Xn, y, blank, nan_policy="marginalize", **tight)
    missing_fit = fit(Xn, y, None, nan_policy="marginalize", **tight)
    _same_model(alone, missing_fit)


def _same_model(a, b):
    for name in ("priors", "class_log_prior", "means", "covariance", "variances",
                 "feature_log_prob", "neg_feature_log_prob"):
        if getattr(b, name, None) is not None:
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-6,
                                       atol=1e-6, err_msg=name)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_unlabelled_rows_or_zero_weight_is_the_missing_feature_fit(family):
    X, y, U = incomplete_data(9, "both")
    fit = FAMILIES[family]
    reference = fit(X, y, None, nan_policy="marginalize")
    assert fit(X, y, U, nan_policy="marginalize", unlabeled_weight=0.0) == reference
    assert fit(X, y, U[:0], nan_policy="marginalize") == reference


def test_reg_and_shrinkage_apply_to_the_converged_covariance(tmp_path):
    """Full kinds: EM runs on the maximum-likelihood estimates; reg and a float
    shrinkage apply once at the end, unbiased too; the record saves and loads."""
    X, y, U = incomplete_data(10, "both")
    ml = fastgen.fit_gda(X, y, "per_class", unlabeled=U, **TIGHT)
    reg = fastgen.fit_gda(X, y, "per_class", unlabeled=U, reg=0.3, **TIGHT)
    np.testing.assert_allclose(reg.covariance, 0.7 * ml.covariance + 0.3 * np.eye(3),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(reg.log_likelihood_history, ml.log_likelihood_history)
    assert reg.history_monotone
    ub = fastgen.fit_gda(X, y, "pooled", unlabeled=U, unbiased=True, **TIGHT)
    mlp = fastgen.fit_gda(X, y, "pooled", unlabeled=U, **TIGHT)
    W = mlp.n_per_class.sum()
    np.testing.assert_allclose(ub.covariance, mlp.covariance * W / (W - 3), rtol=1e-12)
    shrunk = fastgen.fit_gda(X, y, "pooled", unlabeled=U, shrinkage=0.2, **TIGHT)
    S = mlp.covariance
    np.testing.assert_allclose(
        shrunk.covariance, 0.8 * S + 0.2 * np.trace(S) / 3 * np.eye(3), rtol=1e-12)
    for p in (reg, ub, shrunk):
        fastgen.save_params(tmp_path / "p.npz", p)
        assert fastgen.load_params(tmp_path / "p.npz") == p


# --------------------------------------------------- small inputs: numpy, no kernels

def test_small_inputs_take_numpy_passes_and_agree_with_the_kernels(monkeypatch):
    X, y, U = incomplete_data(11, "both", n_lab=20, n_unl=60)
    fits = {name: FAMILIES[name] for name in ("pooled", "per_class", "diagonal",
                                              "gaussian_nb")}

    def run():
        return {name: fit(X, y, U, nan_policy="marginalize", em_tol=1e-12)
                for name, fit in fits.items()}

    monkeypatch.setattr(_small, "SMALL_VALUES", 1 << 40)
    import fastgen.kernels.missing as missing
    import fastgen.kernels.patterns as patterns

    def refuse(*args, **kwargs):
        raise AssertionError("small data reached the marginal kernels")

    for kernel in ("pooled_pattern_scores", "class_pattern_scores",
                   "diagonal_marginal_scores"):
        monkeypatch.setattr(missing, kernel, refuse)
    monkeypatch.setattr(patterns, "nan_keys", refuse)
    small = run()
    monkeypatch.undo()
    monkeypatch.setattr(_small, "SMALL_VALUES", -1)
    large = run()
    for name in fits:
        a, b = small[name], large[name]
        assert a.n_iter == b.n_iter, name
        np.testing.assert_allclose(a.log_likelihood_history, b.log_likelihood_history,
                                   rtol=1e-10, err_msg=name)
        _same_model(a, b)


# -------------------------------------------------------------------- bad input

def _bad_cases():
    X, y, U = incomplete_data(12, "both")
    inf = U.copy()
    inf[4, 2] = np.inf
    C, Cu = _codes(X), _codes(U)
    stray = Cu.copy()
    stray[6, 0] = 2.5
    return [
        ("infinity", lambda: fastgen.fit_gda(X, y, unlabeled=inf, nan_policy="marginalize"),
         (X, y, inf), r"unlabeled contains infinity at row 4, column 2"),
        ("infinity nb", lambda: fastgen.fit_gaussian_nb(X, y, unlabeled=inf,
                                                         nan_policy="marginalize"),
         (X, y, inf), r"unlabeled contains infinity at row 4, column 2"),
        ("nan raise", lambda: fastgen.fit_gda(np.nan_to_num(X), y, unlabeled=U),
         (X, y, U), "unlabeled contains NaN"),
        ("features", lambda: fastgen.fit_gda(X, y, unlabeled=U[:, :2],
                                             nan_policy="marginalize"),
         (X, y, U), "unlabeled has 2 features"),
        ("ledoit-wolf", lambda: fastgen.fit_gda(np.nan_to_num(X), y, unlabeled=U,
                                                shrinkage="ledoit-wolf",
                                                nan_policy="marginalize"),
         (X, y, U), "ledoit-wolf"),
        ("multinomial", lambda: fastgen.fit_multinomial_nb(
            np.abs(np.nan_to_num(C)), y, unlabeled=np.abs(Cu), nan_policy="marginalize"),
         (C, y, Cu), "unlabeled contains NaN and multinomial naive Bayes is not fitted"),
        ("multinomial raise", lambda: fastgen.fit_multinomial_nb(
            np.abs(np.nan_to_num(C)), y, unlabeled=np.abs(Cu)),
         (C, y, Cu), "unlabeled contains NaN"),
        ("complement", lambda: fastgen.fit_complement_nb(
            np.abs(np.nan_to_num(C)), y, unlabeled=np.abs(Cu), nan_policy="marginalize"),
         (C, y, Cu), "complement naive Bayes takes no unlabeled rows"),
        ("category", lambda: fastgen.fit_categorical_nb(C, y, unlabeled=stray,
                                                        nan_policy="marginalize"),
         (C, y, stray), "unlabeled"),
        ("not binary", lambda: fastgen.fit_bernoulli_nb(
            (np.nan_to_num(X) > 0).astype(float), y, binarize=None, unlabeled=U,
            nan_policy="marginalize"), (X, y, U), "binarize=None needs binary"),
        ("unobserved", lambda: fastgen.fit_gda(
            np.where(np.arange(3) == 1, np.where(y[:, None] == 0, np.nan, X), X), y,
            unlabeled=U, nan_policy="marginalize"),
         (X, y, U), "has no observed value of feature 1"),
    ]


@pytest.mark.parametrize("case", _bad_cases(), ids=lambda c: c[0])
def test_bad_input_is_refused_and_leaves_arrays_untouched(case):
    _, call, arrays, message = case
    before = _digest(*arrays)
    with pytest.raises(ValueError, match=message):
        call()
    assert _digest(*arrays) == before


def test_caller_arrays_untouched_by_a_successful_fit():
    X, y, U = incomplete_data(13, "both")
    before = _digest(X, y, U)
    for fit in FAMILIES.values():
        fit(X, y, U, nan_policy="marginalize")
    fastgen.fit_bernoulli_nb(sp.csr_matrix(X), y, unlabeled=sp.csr_matrix(U),
                             nan_policy="marginalize")
    assert _digest(X, y, U) == before


# ------------------------------------------------------------ scikit-learn estimators

@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("qda", [False, True])
def test_sklearn_unlabeled_label_with_nan(qda, where):
    from fastgen.sklearn import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

    X, y, U = incomplete_data(14, where, n_lab=20)
    Xall = np.vstack([X, U])
    y_semi = np.r_[y, np.full(U.shape[0], -1)]
    Est = QuadraticDiscriminantAnalysis if qda else LinearDiscriminantAnalysis
    est = Est(nan_policy="marginalize", unlabeled_label=-1).fit(Xall, y_semi)
    kind = "per_class" if qda else "pooled"
    tol = 0.0 if qda else 1e-4
    want = fastgen.fit_gda(X, y, kind, unlabeled=U, nan_policy="marginalize", tol=tol)
    np.testing.assert_array_equal(est.params_.means, want.means)
    np.testing.assert_array_equal(est.params_.covariance, want.covariance)
    assert est.params_.n_iter == want.n_iter and est.params_.history_monotone
    assert list(est.classes_) == [0, 1, 2]
    proba = est.predict_proba(Xall)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("covariance", ["per_class", "diagonal"])
def test_collapse_guard_stops_the_combined_em(covariance):
    """A class pulled onto one point by many unlabelled rows stops EM, as without NaN:
    the previous iteration's params, converged=False and a ConvergenceWarning."""
    rng = np.random.default_rng(2)
    X = np.r_[rng.normal(0, 1, (4, 2)), rng.normal(6, 1, (4, 2))]
    X[1, 0] = np.nan
    y = np.r_[np.zeros(4), np.ones(4)]
    U = np.r_[np.tile([[0.3, -0.2]], (100_000, 1)), rng.normal(6, 1, (20, 2))]
    U[-3:, 0] = np.nan
    with pytest.warns(fastgen.ConvergenceWarning, match="class 0.0 collapsed"):
        p = fastgen.fit_gda(X, y, covariance, unlabeled=U, nan_policy="marginalize")
    assert p.converged is False
    assert p.log_likelihood_history.shape == (p.n_iter + 1,)
    start = fastgen.fit_gda(X, y, covariance, nan_policy="marginalize")
    ratio = np.exp((p.log_det.astype(float) - start.log_det) / 2)  # the kept params
    assert np.all(ratio >= 1e-4)


# ------------------------------------ the soft statistics against their hard twins

@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_soft_available_moments_with_one_hot_memberships_are_the_hard_ones(offset):
    from fastgen.stats.available import available_case
    from fastgen.stats.soft import soft_available_moments

    X, y, _ = incomplete_data(15, "X", n_lab=30, offset=offset)
    w = np.random.default_rng(15).uniform(0.5, 2.0, X.shape[0])
    R = np.zeros((X.shape[0], 3))
    R[np.arange(X.shape[0]), y] = w
    soft = soft_available_moments(X, R)
    hard = available_case(X, np.isnan(X), y, w, 3, np.arange(3))
    for name in ("counts", "observed", "means"):
        np.testing.assert_allclose(getattr(soft, name), getattr(hard, name), rtol=1e-12)
    np.testing.assert_allclose(soft.sumsq, hard.sumsq, rtol=1e-9)
    # and the formula, plain
    O = ~np.isnan(X)
    for k in range(3):
        r = R[:, k][:, None] * O
        mu = np.nansum(r * np.nan_to_num(X), axis=0) / r.sum(axis=0)
        np.testing.assert_allclose(soft.means[k], mu, rtol=1e-12)
        np.testing.assert_allclose(
            soft.sumsq[k], (r * np.where(O, X - mu, 0.0) ** 2).sum(axis=0), rtol=1e-8)


@pytest.mark.parametrize("csr", [False, True])
def test_soft_counts_skip_missing_entries(csr):
    from fastgen.stats.soft import soft_binary_counts_observed, soft_category_counts_observed

    X, _, U = incomplete_data(16, "both")
    R = np.random.default_rng(16).dirichlet(np.ones(3), U.shape[0]) * 0.7
    A = sp.csr_matrix(U) if csr else U
    cc, F, N = soft_binary_counts_observed(A, R, binarize=0.3)
    O = ~np.isnan(U)
    np.testing.assert_allclose(cc, R.sum(axis=0))
    np.testing.assert_allclose(F, R.T @ (O & (np.nan_to_num(U, nan=-1e9) > 0.3)))
    np.testing.assert_allclose(N, R.T @ O)
    C = _codes(U)
    offsets = np.r_[0, np.cumsum([6, 6, 6])]
    counts = soft_category_counts_observed(sp.csr_matrix(C) if csr else C, R, offsets)
    for j in range(3):
        for c in range(6):
            np.testing.assert_allclose(counts[:, offsets[j] + c],
                                       R.T @ (O[:, j] & (np.nan_to_num(C[:, j]) == c)),
                                       atol=1e-12)


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("model", ["gaussian", "bernoulli", "categorical"])
def test_sklearn_naive_bayes_unlabeled_label_with_nan(model, where):
    from fastgen.sklearn import BernoulliNB, CategoricalNB, GaussianNB

    X, y, U = incomplete_data(17, where)
    if model == "categorical":
        X, U = _codes(X), _codes(U)
    Xall = np.vstack([X, U])
    y_semi = np.r_[y, np.full(U.shape[0], -1)]
    est, want = {
        "gaussian": (GaussianNB, lambda **k: fastgen.fit_gaussian_nb(X, y, **k)),
        "bernoulli": (BernoulliNB, lambda **k: fastgen.fit_bernoulli_nb(X, y, **k)),
        "categorical": (CategoricalNB, lambda **k: fastgen.fit_categorical_nb(X, y, **k)),
    }[model]
    e = est(nan_policy="marginalize", unlabeled_label=-1).fit(Xall, y_semi)
    p = want(unlabeled=U, nan_policy="marginalize")
    assert e.params_.n_iter == p.n_iter and e.params_.converged
    _same_model(e.params_, p)
    proba = e.predict_proba(Xall)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="fitted with unlabeled rows"):
        e.partial_fit(X[:3], y[:3])


def test_sklearn_multinomial_refuses_nan_in_unlabelled_rows():
    from fastgen.sklearn import MultinomialNB

    X, y, U = incomplete_data(18, "U")
    C, Cu = np.abs(_codes(np.nan_to_num(X))), np.abs(_codes(U))
    Xall = np.vstack([C, Cu])
    before = _digest(Xall)
    with pytest.raises(ValueError, match="unlabeled contains NaN and multinomial"):
        MultinomialNB(nan_policy="marginalize", unlabeled_label=-1).fit(
            Xall, np.r_[y, np.full(Cu.shape[0], -1)])
    assert _digest(Xall) == before
