"""The block-Jacobi preconditioner of multinomial Newton-CG
(``MultinomialObjective.block_preconditioner``).

Its factors must be the Hessian's diagonal blocks of a plain-numpy transcription, read
on the documented fixed subsample; applied between two centrings it must be symmetric
and definite on the centred subspace (what CG needs); and Newton-CG with it must reach
an independent optimum to 1e-8 standard errors, for dense and CSR X, weights, ridge,
offsets and units, with the same answer as the Böhning preconditioner it replaces.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference_logistic import multinomial_objective

from fastgen.logistic import objectives
from fastgen.logistic.data import InMemoryData
from fastgen.logistic.newton import newton_solve


def _problem(K, seed, n, d=5, offset=0.0, scale=1.0, weighted=False):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    W = rng.normal(size=(d, K))
    y = np.argmax(Z @ W + rng.gumbel(size=(n, K)), axis=1)
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else np.empty(0)
    return Z * scale + offset, y, w


def _blocks_oracle(X, P, w, rows, l2, K):
    """H_kk on the rows ``rows``, scaled to the whole sample's weight, plus the ridge."""
    n, d = X.shape
    wv = w if w.shape[0] else np.ones(n)
    Xt = np.column_stack([X[rows], np.ones(rows.size)])
    ws = wv[rows] * (wv.sum() / wv[rows].sum())
    pen = np.r_[np.ones(d), 0.0]
    out = []
    for k in range(K):
        c = ws * P[rows, k] * (1 - P[rows, k])
        out.append(Xt.T @ (c[:, None] * Xt) + l2 * np.diag(pen))
    return out


@pytest.mark.parametrize("n", [300, 9000])
@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("l2", [0.0, 0.7])
def test_factors_are_the_diagonal_blocks_on_the_fixed_rows(n, csr, weighted, l2):
    """All rows of a small sample, every k-th row (k = ⌈n/4096⌉) of a large one."""
    K = 4
    X, y, w = _problem(K, seed=n + 2 * weighted, n=n, weighted=weighted)
    data = InMemoryData(sp.csr_matrix(X) if csr else X, y, w, True)
    obj = objectives.make_objective(data, l2, K, explicit=False)
    rng = np.random.default_rng(3)
    B = rng.normal(size=(K, data.p)) * 0.3
    obj.evaluate(B, True)
    factors = obj.block_preconditioner()
    assert factors is not None and len(factors) == K
    stride = -(-n // objectives.BLOCK_PRECOND_ROWS)
    rows = np.arange(0, n, stride)
    P = np.exp(np.column_stack([X, np.ones(n)]) @ B.T)
    P /= P.sum(axis=1, keepdims=True)
    for (c, d), A in zip(factors, _blocks_oracle(X, P, w, rows, l2, K), strict=True):
        L = np.tril(c[0])
        got = d[:, None] * (L @ L.T - 1e-10 * np.eye(d.size)) * d[None, :]
        np.testing.assert_allclose(got, A, rtol=1e-10, atol=1e-12 * np.abs(A).max())


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("l2", [0.0, 0.7])
def test_applied_it_is_symmetric_and_definite_on_centred_matrices(weighted, l2):
    K = 3
    X, y, w = _problem(K, seed=11 + weighted, n=700, d=3, weighted=weighted)
    data = InMemoryData(X, y, w, True)
    obj = objectives.make_objective(data, l2, K, explicit=False)
    obj.evaluate(np.zeros((K, data.p)), True)
    q = K * data.p
    M = np.column_stack([obj._apply_precond(e.reshape(K, data.p)).ravel()
                         for e in np.eye(q)])
    # every output is centred over classes
    np.testing.assert_allclose(M.reshape(K, data.p, q).sum(axis=0), 0.0,
                               atol=1e-12 * np.abs(M).max())
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-12 * np.abs(M).max())
    # definite on the centred subspace: an orthonormal basis of it
    C = np.kron(np.eye(K) - 1.0 / K, np.eye(data.p))
    U = np.linalg.svd(C)[0][:, :(K - 1) * data.p]
    ev = np.linalg.eigvalsh(U.T @ M @ U)
    assert ev.min() > 1e-9 * ev.max()


def _oracle_optimum(X, y, w, l2, K):
    """Newton on the plain-numpy objective in the reference-class layout (class 0
    fixed at 0; a ridge then penalises the other classes only, so the oracle runs on
    the symmetric layout when l2 > 0): (B centred or reference, se)."""
    n, d = X.shape
    p = d + 1
    ww = w if w.shape[0] else None
    B = np.zeros((K, p))
    if l2 == 0.0:
        keep = np.arange(p, K * p)
    else:
        keep = np.arange(K * p - 1)  # the intercepts' sum is free: fix the last one
    for _ in range(60):
        _, G, H = multinomial_objective(X, y, B, l2=l2, w=ww)
        g = G.ravel()[keep]
        Hk = H[np.ix_(keep, keep)]
        step = np.linalg.solve(Hk, -g)
        b = B.ravel().copy()
        b[keep] += step
        B = b.reshape(K, p)
        if np.max(np.abs(step) * np.sqrt(np.diag(Hk))) < 1e-14:
            break
    cov = np.zeros((K * p, K * p))
    cov[np.ix_(keep, keep)] = np.linalg.inv(H[np.ix_(keep, keep)])
    if l2 != 0.0:  # to the centred layout: B − mean over classes, per column
        T = np.kron(np.eye(K) - 1.0 / K, np.eye(p))
        B = B - B.mean(axis=0)
        cov = T @ cov @ T.T
    else:
        B = B - B[0]
    return B, np.sqrt(np.abs(np.diag(cov))).reshape(K, p)


def _cg_fit(X, y, w, l2, K, block):
    data = InMemoryData(X, y, w, True)
    if not block:  # the data without row_sample: the Böhning preconditioner
        data.row_sample = None
    obj = objectives.make_objective(data, l2, K, explicit=False)
    sw = float(w.sum()) if w.shape[0] else float(X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = newton_solve(obj, np.zeros((K, data.p)), max_iter=100, tol=1e-8,
                           sum_weights=sw, l2=l2)
    assert res.converged
    B = res.beta.copy()
    if l2 == 0.0:
        B = B - B[0]
    return B, obj


@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (0.0, 1e-3), (1e4, 1.0),
                                          (-50.0, 1e3)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("l2", [0.0, 1.0])
def test_newton_cg_with_it_reaches_the_optimum(offset, scale, weighted, l2):
    """n = 9000 > 4096: the preconditioner reads a subsample.  The data are in the
    centred frame the fit works in (the offset column is centred there), so the
    coefficients must agree with the oracle's to 1e-8 standard errors, and with the
    Böhning-preconditioned fit's."""
    K = 4
    X, y, w = _problem(K, seed=5 + weighted, n=9000, d=4, offset=offset, scale=scale,
                       weighted=weighted)
    wv = w if w.shape[0] else np.ones(X.shape[0])
    Xc = X - np.average(X, axis=0, weights=wv) if offset else X
    B, obj = _cg_fit(Xc, y, w, l2, K, block=True)
    assert obj.block_preconditioner() is not None
    ref, se = _oracle_optimum(Xc, y, w, l2, K)
    live = se > 0
    assert np.all(np.abs(B - ref)[live] <= 1e-8 * se[live])
    B0, obj0 = _cg_fit(Xc, y, w, l2, K, block=False)
    assert obj0.block_preconditioner() is None
    assert np.all(np.abs(B - B0)[live] <= 2e-8 * se[live])


def test_it_is_deterministic():
    """The rows are a fixed choice: two fits agree bit for bit."""
    K = 5
    X, y, w = _problem(K, seed=9, n=9000, d=6, weighted=True)
    a, _ = _cg_fit(X, y, w, 0.5, K, block=True)
    b, _ = _cg_fit(X, y, w, 0.5, K, block=True)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cg_from_a_start_refines_it(seed):
    """The certificate's solve starts from the loose step (``pcg(x0=…)``): it reaches
    the exact solution, its decrement stays a lower bound of ½gᵀH⁻¹g, and a start that
    is already accurate costs only its residual's product."""
    from fastgen.logistic.linsolve import pcg

    rng = np.random.default_rng(seed)
    A = rng.normal(size=(30, 12)) * np.logspace(0, 2, 12)
    H = A.T @ A + np.eye(12)
    g = rng.normal(size=12)
    exact = np.linalg.solve(H, -g)
    half = 0.5 * float(g @ np.linalg.solve(H, g))
    diag = np.diag(H)
    loose, dec0, _ = pcg(lambda v: H @ v, lambda r: r / diag, g, 0.5, 50)
    x, dec, nprod = pcg(lambda v: H @ v, lambda r: r / diag, g, 1e-12, 50, x0=loose)
    np.testing.assert_allclose(x, exact, rtol=1e-9, atol=1e-12 * np.abs(exact).max())
    assert dec0 <= half * (1 + 1e-12) and dec <= half * (1 + 1e-12)
    np.testing.assert_allclose(dec, half, rtol=1e-10)
    again, _, n_again = pcg(lambda v: H @ v, lambda r: r / diag, g, 1e-6, 50, x0=x)
    assert n_again == 1 and np.array_equal(again, x)
