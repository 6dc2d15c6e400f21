r"""Firth's bias-reduced binary logistic regression: the penalised objective and its
Newton loop.

Firth (1993) maximises the log-likelihood penalised by Jeffreys' invariant prior,

.. math::

    l^*(\beta) = l(\beta) + \tfrac12 \log\det I(\beta),
    \qquad I(\beta) = \tilde X^\top \operatorname{diag}(w\,\pi(1-\pi))\,\tilde X,

whose estimate is finite even when the classes are separated (Heinze & Schemper 2002)
and whose first-order bias is zero.  Its gradient is the modified score

.. math::

    U^*(\beta) = \sum_i \bigl[w_i (y_i - \pi_i) + h_i(\tfrac12 - \pi_i)\bigr]\tilde x_i,

with :math:`h_i` the diagonal of the hat matrix
:math:`W^{1/2}\tilde X I^{-1}\tilde X^\top W^{1/2}`.  Each Newton iteration
:math:`\beta \leftarrow \beta + t\,I^{-1}U^*` (logistf's, with the step capped at 5 and
halved until :math:`l^*` does not decrease) makes two passes over X: one for
:math:`l`, the score and :math:`I` (:func:`fastgen.kernels.inference.inference_pass`),
one for the hat diagonal and the correction
(:func:`fastgen.kernels.inference.firth_hat`).  Where that Fisher-scoring iteration
converges slowly (separated data, on which the penalty carries the optimum), the
Newton matrix becomes l*'s own Hessian (:meth:`_Penalised.curvature`, one more pass).

l* need not be concave, and on separated data it can have several local maxima: where
the first run shows that the penalty shapes l*, the fit also starts from zero and from a
ridge estimate and returns the highest maximum, with a warning when they differ
(:func:`_best_of_starts`).

Profile-likelihood intervals and penalised likelihood-ratio tests on this objective:
:mod:`fastgen.logistic.firth_profile`.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.special

from .._runtime import blas_single_thread, threads_for, threads_for_work
from .._validation import check_sample_weight, check_X, check_y, is_sparse
from .._warn import warn
from ..kernels import inference as inference_kernels
from .data import column_abs_max
from .inference.passes import InferenceData
from .objectives import Evaluation, check_curvature_diagonal, column_scales
from .params import ConvergenceWarning, LogisticParams
from .penalised import _newton
from .ridge import ridge_fit
from .small import SmallInferenceData, packed_products

__all__ = ["fit_firth", "firth_null_loglik", "subsample_start"]

#: A Firth fit without ``init`` on n rows starts from a fit on every
#: ``WARM_START_STRIDE``-th row when that subsample has at least
#: ``WARM_START_ROWS_PER_COEF`` rows per coefficient: Newton converges quadratically
#: from there, so the full-data fit takes about three steps instead of five or six, for
#: about one full pass on the subsample (benchmarks/NOTES.md).  Every k-th row rather
#: than a random draw: deterministic, and spread over the whole data whatever its order.
WARM_START_STRIDE = 20
WARM_START_ROWS_PER_COEF = 100

#: Tolerance of the subsample fit: its estimate is off the full-data one by sampling
#: error (~1e-2 at these sizes) anyway; 1e-3 takes one Newton step fewer on the
#: subsample than 1e-4 and the same full-data steps (benchmarks/NOTES.md).
_WARM_START_TOL = 1e-3


#: l*(β) need not be concave: on separated or nearly separated data the penalty shapes
#: it, and Newton from different starts can stop at different local maxima (standardised
#: breast cancer: l* = -27.40 from zero, -24.92 from the ridge start).  A fit tries the
#: fixed set of starts of :func:`_best_of_starts` and returns the highest maximum when
#: its first run shows that evidence: Fisher scoring converged slowly (``penalised._SLOW_RATE``),
#: or some fitted |η| exceeds this (probabilities within 3e-7 of 0 or 1).  Ordinary
#: fits (max|η| of a few units, fast Fisher scoring) make one run only.
MULTI_START_ETA = 15.0

#: The ridge start: l2 on the columns scaled to unit standard deviation (a N(0, 1)
#: prior on each standardised coefficient).
RIDGE_START_L2 = 1.0


#: l*'s Hessian is formed only up to this many coefficients: its pass costs
#: n·p²(p+1)/2 multiply-adds, (p+1)/2 times the information's, and holds a
#: p(p+1)/2 × p matrix (8.4 MiB at 128).  Wider fits keep Fisher scoring.
CURVATURE_MAX_PARAMS = 128

#: Rows per chunk of the curvature pass (rows · (p(p+1)/2 + 2p) doubles of this size):
#: each task of its packed products holds rows · (p − j) doubles of z-products.
_CURVATURE_CHUNK_BYTES = 4 << 20


def _column_scales(data, w):
    """Each column's root-mean-square r_j = √(Σ w x_j² / Σw) (1 for the intercept; one
    pass over X): the units in which :func:`_newton` measures the score, the steps and
    ``MAX_STEP``, so that none depends on the units of X.  Raises where float64 cannot
    hold the sums (see :func:`fastgen.logistic.objectives.column_scales`)."""
    X = data.X
    sw = float(w.sum()) if w.shape[0] else float(data.n)
    with np.errstate(over="ignore", invalid="ignore"):
        if data.sparse:
            sq = X.multiply(X).T
            C = np.asarray(sq @ w if w.shape[0] else sq.sum(axis=1), dtype=np.float64)
        elif w.shape[0]:
            C = np.einsum("ij,ij,i->j", X, X, w, dtype=np.float64)
        else:
            C = np.einsum("ij,ij->j", X, X, dtype=np.float64)
    C = np.append(C.reshape(-1), sw) if data.fit_intercept else C.reshape(-1)
    g = np.zeros(data.p)
    return column_scales(C, sw, data, Evaluation(0.0, 0.0, g, 0.0),
                         lambda j: column_abs_max(X, w, j), w)


class _State:
    __slots__ = ("beta", "llf", "lstar", "score", "H", "L", "Linv", "emax", "c")


def _penalised_state(beta, llf, score, H, emax, pw, singular_reason):
    """The state at β: l, score, information I; with pw > 0, I's Cholesky factor and
    l* = l + pw·log det I (the error names ``singular_reason``)."""
    st = _State()
    st.beta, st.llf, st.score, st.H, st.emax = beta, float(llf), score, H, float(emax)
    st.L = st.Linv = st.c = None
    st.lstar = st.llf
    if pw > 0.0:
        try:
            L = np.linalg.cholesky(H)
        except np.linalg.LinAlgError:
            raise np.linalg.LinAlgError(f"the Fisher information is singular: {singular_reason} "
                                        "(Firth's penalty log det I is undefined); drop them"
                                        ) from None
        st.L, st.lstar = L, st.llf + pw * 2.0 * float(np.sum(np.log(np.diag(L))))
    return st


class _Penalised:
    """l*(β) = l(β) + pw·log det I(β) on (X, y, w): evaluations and modified scores."""

    def __init__(self, data, codes, w, pw):
        self.data, self.codes, self.w, self.pw = data, codes, w, float(pw)
        self.bounds = data.bounds(data.p * data.p)
        # set once Fisher scoring proved slow on these data: later runs on the same
        # objective (the profile's constrained fits) take l*'s Hessian from the start
        self.curved = False
        # set on the same evidence whatever the width (``curved`` needs p ≤
        # CURVATURE_MAX_PARAMS): the penalty shapes the optimum, so l* may have several
        # maxima and the fit and the profile try more starts (see ``fit_firth``)
        self.slow = False
        self.scale = _column_scales(data, w)

    def evaluate(self, beta):
        llf, score, H, _, emax, _ = self.data.inference_pass(
            self.codes, self.w, beta.reshape(1, -1), False, False)
        check_curvature_diagonal(np.diag(H), self.data, None, self.w)
        return _penalised_state(beta, llf, score, H, emax, self.pw,
                                "the features are collinear or constant")

    def modified_score(self, st):
        if self.pw == 0.0:
            return st.score
        p = st.H.shape[0]
        Linv = scipy.linalg.solve_triangular(st.L, np.eye(p), lower=True,
                                             check_finite=False)
        Linv = np.ascontiguousarray(Linv)
        st.Linv = Linv
        d = self.data
        if isinstance(d, SmallInferenceData):  # numpy passes: no compilation
            st.c = d.firth_hat(self.w, st.beta, Linv)[0]
            return st.score + 2.0 * self.pw * st.c
        with threads_for(d.X):
            if d.sparse:
                c, _ = inference_kernels.firth_hat_csr(*d.csr, self.w, st.beta, Linv,
                                                       d.fit_intercept, self.bounds,
                                                       np.empty(0))
            else:
                with blas_single_thread():
                    c, _ = inference_kernels.firth_hat(d.X, self.w, st.beta, Linv,
                                                       d.fit_intercept, self.bounds, d.block,
                                                       np.empty(0))
        st.c = c
        return st.score + 2.0 * self.pw * c

    def can_curve(self):
        return self.pw > 0.0 and self.data.p <= CURVATURE_MAX_PARAMS

    def curvature(self, st):
        r"""−∇²l* at st (after :meth:`modified_score`): :math:`I - pw\,(B - C)`.

        With :math:`a_i = w_i\pi_i(1-\pi_i)(1-2\pi_i)` and
        :math:`b_i = w_i\pi_i(1-\pi_i)(1-6\pi_i(1-\pi_i))` the first and second
        derivatives of row i's information weight in η_i, :math:`I = LL^\top`,
        :math:`z_i = L^{-1}\tilde x_i` and :math:`q_i = \lVert z_i\rVert^2`, the
        Hessian of :math:`\log\det I` is
        :math:`\operatorname{tr}(I^{-1}\partial_{jk}I) -
        \operatorname{tr}(I^{-1}\partial_j I\,I^{-1}\partial_k I) = B_{jk} - C_{jk}`:

        - :math:`B = \sum_i b_i q_i \tilde x_i\tilde x_i^\top`;
        - :math:`C_{jk} = \langle M_j, M_k\rangle_F` with
          :math:`M_j = L^{-1}(\partial_j I)L^{-\top} = \sum_i a_i\tilde x_{ij}
          z_iz_i^\top`, so :math:`C = G^\top G` where G's rows are the packed upper
          triangles of the :math:`M_j` (off-diagonal entries scaled by √2).

        One pass over X in row chunks: B by one BLAS product per chunk, G by
        :func:`fastgen.kernels.inference.firth_packed_products` (``rows · p(p+1)/2 ×
        p`` multiply-adds, the pass's cost, split over numba's threads, each calling
        BLAS on one thread; faster than the numpy form, see benchmarks/NOTES.md).
        """
        d = self.data
        p = d.p
        m = p * (p + 1) // 2
        G = np.zeros((m, p))
        B = np.zeros((p, p))
        step = max(16, _CURVATURE_CHUNK_BYTES // (8 * (m + 2 * p)))
        # numba's threads by the pass's own work (p(p+1)/2 · n · p multiply-adds), not
        # by X's size, which would put a small X's (costly) pass on one thread
        with blas_single_thread(), threads_for_work(m * d.n * p // 64):
            for r0 in range(0, d.n, step):
                self._curvature_chunk(st, r0, min(d.n, r0 + step), B, G)
        return st.H - self.pw * (B - G.T @ G)

    def _curvature_chunk(self, st, r0, r1, B, G):
        """Rows r0:r1's terms of :meth:`curvature`'s B and G, added in place."""
        d = self.data
        p = d.p
        Xc = d.X[r0:r1]
        Xt = np.empty((r1 - r0, p))
        Xt[:, :d.d] = Xc.toarray() if d.sparse else Xc
        if d.fit_intercept:
            Xt[:, d.d] = 1.0
        eta = Xt @ st.beta
        pi = scipy.special.expit(eta)
        u = pi * scipy.special.expit(-eta)  # π(1−π) without 1 − π's cancellation
        v = u * self.w[r0:r1] if self.w.shape[0] else u
        a = v * (1.0 - 2.0 * pi)
        b = v * (1.0 - 6.0 * u)
        ZT = st.Linv @ Xt.T  # (p, rows): z_i in columns, C-contiguous
        q = np.einsum("ji,ji->i", ZT, ZT)
        B += Xt.T @ ((b * q)[:, None] * Xt)
        # the packed upper triangles of z_i z_iᵀ times a_i x̃_i, summed over the rows
        if isinstance(d, SmallInferenceData):  # numpy: no compilation
            packed_products(ZT, a[:, None] * Xt, G)
        else:
            inference_kernels.firth_packed_products(ZT, a[:, None] * Xt, G)


def firth_null_loglik(counts, penalty_weight=0.5):
    r"""Penalised log-likelihood of the intercept-only model, in closed form.

    With total weight N, N_k of it on class k (K classes, m = K − 1 free intercepts):
    log det I = m log N + Σ_k log π_k, and the modified score gives
    :math:`\hat\pi_k = (N_k + pw)/(N + K\,pw)` (binary: :math:`(N_1 + pw)/(N + 2pw)`).
    """
    counts = np.asarray(counts, dtype=np.float64)
    N = float(counts.sum())
    K = counts.shape[0]
    if K == 2:
        n1 = float(counts[1])
        pi = (n1 + penalty_weight) / (N + 2.0 * penalty_weight)
        ll = n1 * np.log(pi) + (N - n1) * np.log1p(-pi)
        return float(ll + penalty_weight * np.log(N * pi * (1.0 - pi)))
    pi = (counts + penalty_weight) / (N + K * penalty_weight)
    ll = float(np.sum(counts * np.log(pi)))
    return float(ll + penalty_weight * ((K - 1) * np.log(N) + np.sum(np.log(pi))))


def _initial(init, classes, d, fit_intercept, codes, w):
    p = d + (1 if fit_intercept else 0)
    beta = np.zeros(p)
    if init is None:
        if fit_intercept:
            counts = np.bincount(codes, weights=w if w.shape[0] else None, minlength=2)
            pri = np.clip(counts / counts.sum(), 1e-12, 1.0)
            beta[d] = np.log(pri[1]) - np.log(pri[0])
        return beta
    if isinstance(init, LogisticParams):
        coef, icpt = init.coef, init.intercept
    elif isinstance(init, tuple) and len(init) == 2:
        coef, icpt = init
    else:
        raise ValueError("init must be None, a LogisticParams, or a (coef, intercept) tuple; "
                         f"got {type(init).__name__}")
    coef = np.asarray(coef, dtype=np.float64).reshape(-1)
    icpt = np.asarray(icpt, dtype=np.float64).reshape(-1)
    if coef.shape != (d,) or icpt.shape != (1,):
        raise ValueError(f"init must have coef of shape (1, {d}) and intercept of shape "
                         f"(1,); got {coef.shape} and {icpt.shape}")
    beta[:d] = coef
    if fit_intercept:
        beta[d] = icpt[0]
    return beta


def check_start(obj, beta0):
    """Raise a ``ValueError`` naming ``init`` where the start's Fisher information is
    singular (its probabilities are 0 or 1 to float64 on the rows that carry a
    column), so the penalty is undefined there; the default start never is."""
    try:
        obj.evaluate(np.array(beta0, dtype=np.float64))
    except np.linalg.LinAlgError:
        raise ValueError(
            "init puts the fitted probabilities at 0 or 1 (to float64) on the rows that "
            "carry some column, where the Fisher information, hence Firth's penalty "
            "log det I, is undefined; start closer to the data (e.g. from an unpenalised "
            "or ridge fit) or without init") from None


def fit_firth(X, y, *, fit_intercept=True, sample_weight=None, max_iter=100, tol=1e-8,
              init=None) -> LogisticParams:
    r"""Firth's bias-reduced binary logistic regression (see the module docstring).

    Maximises :math:`l(\beta) + \tfrac12\log\det I(\beta)` by Newton steps
    :math:`I^{-1}U^*` with step halving; two passes over X per iteration (three, with
    l*'s exact Hessian in place of I, once these steps shrink slowly: see
    ``penalised._SLOW_RATE``).  Without
    ``init``, a fit on n ≥ ``WARM_START_STRIDE · WARM_START_ROWS_PER_COEF · p`` rows
    starts from the fit on every ``WARM_START_STRIDE``-th row (two full-data
    iterations saved; ``n_iter`` counts the full-data ones).  Reached through
    ``fastgen.fit_logistic(X, y, penalty="firth")``.

    Parameters
    ----------
    X, y, fit_intercept, sample_weight, max_iter, init :
        As for :func:`fastgen.fit_logistic`; y must have two classes.  Weights are
        frequency weights (they enter the information matrix, hence the penalty).
    tol : float, default 1e-8
        Converged when ``max|U*| / Σw ≤ tol`` and the last step moved no coefficient by
        more than ``tol · (1 + max|β|)``.

    Returns
    -------
    LogisticParams
        ``solver == "firth"``, ``l2 == 0``; ``log_likelihood`` is the unpenalised
        log-likelihood at the estimate and ``objective_history`` the negative penalised
        one.  Pass it to :func:`fastgen.logistic_inference` for standard errors,
        profile intervals and penalised likelihood-ratio tests.
    """
    X = check_X(X, allow_sparse=True)
    classes, codes = check_y(y, X.shape[0], min_classes=2)
    if classes.shape[0] != 2:
        raise ValueError(
            f"fit_firth is the binary fit; y has {classes.shape[0]} classes: call "
            f"fit_logistic(X, y, penalty='firth'), which fits the multinomial one"
        )
    w = check_sample_weight(sample_weight, X.shape[0])
    sw = float(w.sum()) if w.shape[0] else float(X.shape[0])
    data = InferenceData(X, fit_intercept)
    beta0 = _initial(init, classes, data.d, fit_intercept, codes, w)
    c0 = None
    if init is None:
        beta0, c0 = subsample_start(X, codes, w, fit_intercept, beta0, max_iter,
                                    lambda *a: _Penalised(*a, 0.5), 2)
    obj = _Penalised(data, codes, w, 0.5)
    free = np.arange(data.p)
    if init is not None:
        check_start(obj, beta0)
    run = _newton(obj, beta0, free, max_iter, tol, sw, c0)
    if obj.slow or run[0].emax > MULTI_START_ETA:
        run = _best_of_starts(obj, run, X, codes, w, fit_intercept, beta0, max_iter, tol,
                              sw)
    st, U, converged, n_iter, hist, steps = run
    if not converged:
        warnings.warn(
            f"fit_logistic(penalty='firth') did not converge in {n_iter} iterations "
            f"(max|modified score|/sum(w) = {float(np.max(np.abs(U))) / sw:.3g}, tol = "
            f"{tol:.3g}); increase max_iter", ConvergenceWarning, stacklevel=3)
    d = data.d
    beta = st.beta
    gh = [float(np.max(np.abs(U))) / sw]
    model = LogisticParams(
        classes=classes, coef=beta[:d].reshape(1, -1).astype(X.dtype),
        intercept=np.array([beta[d] if fit_intercept else 0.0], dtype=X.dtype),
        parametrization="binary", l2=0.0, fit_intercept=bool(fit_intercept),
        n_iter=int(n_iter), converged=bool(converged), log_likelihood=float(st.llf),
        objective_history=np.asarray(hist, dtype=np.float64),
        grad_norm_history=np.asarray([np.nan] * (len(hist) - 1) + gh, dtype=np.float64),
        step_size_history=np.asarray(steps, dtype=np.float64), solver="firth", n_hessp=0,
    )
    return model


def _ridge_start(X, codes, w, fit_intercept):
    """The ridge estimate with ``l2 = RIDGE_START_L2`` on the columns scaled to unit
    (weighted) standard deviation, in X's units; None if that fit fails.

    Finite under separation, and equivariant: rescaling a column of X rescales its
    start by the inverse factor, so the start set does not depend on the units.
    Binary codes give a (p,) vector, more classes the flat reference layout (m·p,)."""
    import scipy.sparse as sp

    n = X.shape[0]
    wv = w if w.shape[0] else np.ones(n)
    sw = float(wv.sum())
    if is_sparse(X):
        mean = np.asarray(X.T @ wv, dtype=np.float64).ravel() / sw
        sq = np.asarray(X.multiply(X).T @ wv, dtype=np.float64).ravel() / sw
    else:
        mean = (wv @ X) / sw
        sq = (wv @ (X * X)) / sw
    sd = np.sqrt(np.maximum(sq - mean * mean, 0.0))
    sd = np.where(sd > 0.0, sd, 1.0)
    Xs = X @ sp.diags(1.0 / sd) if is_sparse(X) else X / sd
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            B = ridge_fit(Xs, codes, w, fit_intercept, RIDGE_START_L2)
    except (ValueError, np.linalg.LinAlgError):
        return None
    d = X.shape[1]
    B = B.reshape(-1, B.shape[-1])
    beta = np.column_stack([B[:, :d] / sd, B[:, d:]])
    beta = beta[0] if B.shape[0] == 1 else (beta[1:] - beta[0]).ravel()
    return beta if np.all(np.isfinite(beta)) else None


def _best_of_starts(obj, first, X, codes, w, fit_intercept, beta0, max_iter, tol, sw):
    """The highest maximum of l* that Newton reaches from the fixed set of starts
    (:data:`MULTI_START_ETA` explains when it is tried), given the run from the
    default start ``first``; warns when the starts reach different maxima.

    The starts, in order: the default one (``beta0``: the caller's ``init``, or zero
    slopes with the intercept at the log prior odds, or the subsample fit from there);
    zero (every coefficient and the intercept, when that differs from ``beta0``); and
    :func:`_ridge_start`.  A run that raises (a singular information on the way) or
    does not converge is left out unless no run converges."""
    p = beta0.shape[0]
    free = np.arange(p)
    runs = [("the default start", first)]
    starts = []
    if np.any(beta0 != 0.0):
        starts.append(("zero", lambda: np.zeros(p)))
    starts.append(("the ridge start", lambda: _ridge_start(X, codes, w, fit_intercept)))
    for label, make in starts:
        b0 = make()
        if b0 is None:
            continue
        try:
            runs.append((label, _newton(obj, b0, free, max_iter, tol, sw)))
        except np.linalg.LinAlgError:
            continue
    good = [r for r in runs if r[1][2]] or runs[:1]
    best = max(good, key=lambda r: r[1][0].lstar)
    top = best[1][0].lstar
    others = [r for r in good if r[1][0].lstar < top - _distinct(top)]
    if others:
        found = "; ".join(f"{label}: {r[0].lstar:.10g}" for label, r in good)
        warn(f"fit_logistic(penalty='firth'): the penalised log-likelihood "
             f"l*(beta) = l(beta) + 0.5 log det I(beta) has several local maxima; Newton "
             f"from the starts tried reached different ones ({found}); the highest "
             f"({top:.10g}, from {best[0]}) is returned. l* is not concave on these "
             f"(separated or nearly separated) data, and a maximum higher still may "
             f"exist", ConvergenceWarning)
    return best[1]


def _distinct(lstar):
    """Two maxima of l* are different when their values differ by more than this."""
    return 1e-8 * max(1.0, abs(lstar))


def subsample_start(X, codes, w, fit_intercept, beta0, max_iter, penalised, n_classes):
    """The Firth estimate on every ``WARM_START_STRIDE``-th row, as a starting point,
    and the subsample's score correction there (``(beta0, None)`` when the data are too
    small, the subsample lacks a class, or its fit fails, e.g. a column constant on the
    subsample); ``penalised(data, codes, w)`` builds the objective (binary or
    multinomial) on the subsample.

    The correction ``c = Σ_i h_i (½ − π_i) x̃_i`` is of order p whatever the number of
    rows (the leverages h_i sum to p), and the subsample's estimates the full data's at
    the same point to its sampling error: good enough for the first full-data Newton
    step, whose error is dominated by the start's distance from the optimum anyway
    (see :func:`_newton`'s ``c0``)."""
    n = X.shape[0]
    p = X.shape[1] + (1 if fit_intercept else 0)  # rows per coefficient of one equation
    k = WARM_START_STRIDE
    if n // k < WARM_START_ROWS_PER_COEF * p:
        return beta0, None
    rows = slice(0, n, k)
    cs = np.ascontiguousarray(codes[rows])
    if np.unique(cs).shape[0] < n_classes:
        return beta0, None
    Xs = X[rows] if is_sparse(X) else np.ascontiguousarray(X[rows])
    ws = np.ascontiguousarray(w[rows]) if w.shape[0] else w
    sws = float(ws.sum()) if ws.shape[0] else float(cs.shape[0])
    obj = penalised(InferenceData(Xs, fit_intercept), cs, ws)
    try:
        st, _, _, _, _, _ = _newton(obj, beta0, np.arange(beta0.shape[0]), max_iter,
                                    _WARM_START_TOL, sws)
    except np.linalg.LinAlgError:
        return beta0, None
    if not (np.all(np.isfinite(st.beta)) and st.c is not None and np.all(np.isfinite(st.c))):
        return beta0, None
    return st.beta, st.c
