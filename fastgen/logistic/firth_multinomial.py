r"""Multinomial bias reduction: the maximum of the Jeffreys-penalised likelihood for the
baseline-category logit (Kosmidis & Firth 2011; R's ``brglm2::brmultinom``).

With K classes, class 0 the reference, m = K − 1 equations of p coefficients
(η_ik = x̃_iᵀβ_k, β_0 = 0, π_i = softmax(η_i)) and frequency weights w_i,

.. math::

    l^*(\beta) = l(\beta) + \tfrac12\log\det I(\beta),\qquad
    I(\beta) = \sum_i w_i\,(\operatorname{diag}\pi_i - \pi_i\pi_i^\top)\otimes
    \tilde x_i\tilde x_i^\top

(π_i over classes 1..m).  For the multinomial logit, mean bias reduction by the
adjusted score equations and this maximum coincide (Kosmidis & Firth 2011, §3); the
estimate is finite under (quasi-)separation.  Jeffreys' prior is invariant, so any
other choice of reference class gives the same fitted probabilities.

The modified score (exact; :func:`_log_det_gradient`) is
:math:`U^* = U + \tfrac12\nabla\log\det I` with, for equation l,

.. math::

    \tfrac{\partial \log\det I}{\partial\beta_l} = \sum_i w_i\,s_{il}\,\tilde x_i,\qquad
    s_{il} = \pi_{il}\bigl[Q_{i,ll} - \textstyle\sum_k \pi_{ik}Q_{i,kk}
    - 2\,(a_{il} - \pi_i^\top a_i)\bigr],

where :math:`Q_{i,kk'} = \tilde x_i^\top (I^{-1})_{kk'}\tilde x_i` (blocks of the
inverse information) and :math:`a_i = Q_i\pi_i`; for m = 1 it is the binary
:math:`\sum_i h_i(1-2\pi_i)\tilde x_i`.  The fit is :mod:`fastgen.logistic.firth`'s
Newton loop on this objective: Fisher scoring (the Newton matrix I), switching where it
converges slowly (separated data) to l*'s Hessian by differences of the exact
modified score, when that is affordable (:data:`DIFFERENCE_MAX_WORK`); the same starts
(the prior, zero, a ridge estimate) where l* may have several maxima.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._runtime import kernel_threads, threads_for_work
from .._small import small_work
from .._validation import check_sample_weight, check_X, check_y
from .columns import check_curvature_diagonal
from .firth_objective import _column_scales, _Penalised, _penalised_state
from .firth_starts import MULTI_START_ETA, _best_of_starts, check_start, subsample_start
from .inference.passes import InferenceData
from .params import LogisticParams
from .penalised import _newton, warn_unconverged

__all__ = ["fit_firth_multinomial", "MultinomialPenalised", "DIFFERENCE_MAX_WORK",
           "modified_score_at"]

#: l*'s Hessian by differences costs q evaluations of the modified score (each a pass
#: of n·q² multiply-adds): taken only while n·q³ is below this.
DIFFERENCE_MAX_WORK = 4e9

#: See :meth:`MultinomialPenalised.curvature`.
CURVATURE_REUSE = 0.1

#: See :attr:`MultinomialPenalised.stale_correction`.
STALE_CORRECTION_STEP = 1e-2

#: Rows per chunk of the Q pass (rows × q doubles of products at a time).
_CHUNK_BYTES = 8 << 20


class MultinomialPenalised:
    """l*(β) = l(β) + pw·log det I(β) of the baseline-category logit on (X, y, w), β
    flat (m·p,: equation k's p coefficients at k·p, intercept last): evaluations and
    modified scores, with the interface of :class:`fastgen.logistic.firth_objective._Penalised`
    that the Newton loop uses."""

    def __init__(self, data, codes, w, pw, n_classes):
        self.data, self.codes, self.w, self.pw = data, codes, w, float(pw)
        self.m = int(n_classes) - 1
        self.q = self.m * data.p
        self.curved = False
        self.slow = False
        self.scale = np.tile(_column_scales(data, w), self.m)
        #: the Newton loop keeps the last correction while steps move a coefficient by
        #: more than this (column units): c changes by O(q·step) where U changes by
        #: O(n·step), so the step stays a good Newton step and saves a Q pass
        self.stale_correction = STALE_CORRECTION_STEP
        self._curvature = None  # (β, −∇²l*) last formed by differences

    def evaluate(self, beta):
        d = self.data
        B = np.ascontiguousarray(beta.reshape(self.m, d.p))
        llf, score, H, _, emax, _ = d.inference_pass(self.codes, self.w, B, False, False)
        check_curvature_diagonal(np.diag(H).reshape(self.m, d.p).sum(axis=0), d, None,
                                 self.w)
        return _penalised_state(beta, llf, np.ravel(score), H, emax, self.pw,
                                "the features are collinear or constant, or a class is absent")

    def modified_score(self, st):
        """U* = U + 2·pw·c, c = ½∇log det I (:func:`_log_det_gradient`)."""
        if self.pw == 0.0:
            return st.score
        Linv = scipy.linalg.solve_triangular(st.L, np.eye(self.q), lower=True,
                                             check_finite=False)
        st.Linv = Linv
        st.c = 0.5 * _log_det_gradient(self.data, self.w, st.beta.reshape(self.m, -1),
                                       Linv.T @ Linv).ravel()
        return st.score + 2.0 * self.pw * st.c

    def can_curve(self):
        return (self.pw > 0.0
                and float(self.data.n) * float(self.q) ** 3 <= DIFFERENCE_MAX_WORK)

    def curvature(self, st):
        """−∇²l* at st by forward differences of the exact modified score (steps of
        1e-6·(1 + |β_j r_j|)/r_j in each coefficient's column units), symmetrised.

        Kept and reused while the iterates stay within ``CURVATURE_REUSE`` of the point
        it was taken at (column units): the Newton matrix need not be exact (the
        modified score decides convergence), and the profile's constrained fits run
        many short Newton iterations near each other."""
        if self._curvature is not None:
            at, J = self._curvature
            if float(np.max(np.abs((st.beta - at) * self.scale))) <= CURVATURE_REUSE:
                return J
        q = self.q
        J = np.empty((q, q))
        U0 = st.score + 2.0 * self.pw * st.c
        with threads_for_work(self.data.n * q * q):
            for j in range(q):
                h = 1e-6 * (1.0 + abs(st.beta[j] * self.scale[j])) / self.scale[j]
                b = st.beta.copy()
                b[j] += h
                J[:, j] = (self.modified_score(self.evaluate(b)) - U0) / h
        J = -0.5 * (J + J.T)
        self._curvature = (st.beta.copy(), J)
        return J


def _log_det_gradient(data, w, B, Ainv):
    """∇_β log det I (m, p) at B (m, p), I⁻¹ = ``Ainv`` (q × q): the formula of the
    module docstring, in fixed row chunks (one BLAS product X̃_c A_k per equation k),
    spread over numba's thread count in Python threads (BLAS on one thread each) and
    summed in chunk order, so the result does not depend on the thread count."""
    m, p = B.shape
    n = data.n
    step = max(64, _CHUNK_BYTES // (8 * m * p))
    starts = range(0, n, step)

    def chunk(r0):
        return _log_det_gradient_rows(data, w, B, Ainv, r0, min(n, r0 + step))

    with threads_for_work(n * m * p * p):
        # small data: one thread, numba's pool never started (fastgen._small)
        workers = 1 if small_work(n * p) else min(kernel_threads(), len(starts))
        if workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                parts = list(pool.map(chunk, starts))
        else:
            parts = [chunk(r0) for r0 in starts]
    out = np.zeros((m, p))
    for part in parts:
        out += part
    return out


def _log_det_gradient_rows(data, w, B, Ainv, r0, r1):
    """Rows r0:r1's terms of :func:`_log_det_gradient`."""
    m, p = B.shape
    Xc = data.X[r0:r1]
    Xt = np.empty((r1 - r0, p))
    Xt[:, :data.d] = Xc.toarray() if data.sparse else Xc
    if data.fit_intercept:
        Xt[:, data.d] = 1.0
    eta = Xt @ B.T  # (rows, m)
    top = np.maximum(eta.max(axis=1, keepdims=True), 0.0)
    e = np.exp(eta - top)
    pi = e / (np.exp(-top) + e.sum(axis=1, keepdims=True))  # classes 1..m
    Q = np.empty((r1 - r0, m, m))
    for k in range(m):
        Mk = (Xt @ Ainv[k * p:(k + 1) * p, k * p:]).reshape(r1 - r0, m - k, p)
        Q[:, k, k:] = np.einsum("rlp,rp->rl", Mk, Xt)
        Q[:, k:, k] = Q[:, k, k:]
    qd = np.einsum("rkk->rk", Q)
    a = np.einsum("rkl,rl->rk", Q, pi)
    t = np.einsum("rk,rk->r", pi, a)
    s = pi * (qd - np.einsum("rk,rk->r", pi, qd)[:, None] - 2.0 * (a - t[:, None]))
    if w.shape[0]:
        s *= w[r0:r1, None]
    return s.T @ Xt


def _prior_start(codes, w, K, d, fit_intercept):
    """Zero slopes, intercepts at log(π_k/π_0) (clipped at 1e-12), flat (m·p,)."""
    p = d + (1 if fit_intercept else 0)
    B = np.zeros((K - 1, p))
    if fit_intercept:
        counts = np.bincount(codes, weights=w if w.shape[0] else None, minlength=K)
        pri = np.maximum(counts / counts.sum(), 1e-12)
        B[:, d] = np.log(pri[1:]) - np.log(pri[0])
    return B.ravel()


def _reference_init(init, classes, d, fit_intercept):
    """``init`` (LogisticParams or (coef, intercept), K rows) in the flat reference
    layout."""
    K = classes.shape[0]
    if isinstance(init, LogisticParams):
        if not np.array_equal(init.classes, classes):
            raise ValueError(f"init was fitted with classes {init.classes.tolist()} but y "
                             f"has classes {classes.tolist()}; they must match")
        coef, icpt = init.coef, init.intercept
    elif isinstance(init, tuple) and len(init) == 2:
        coef, icpt = init
    else:
        raise ValueError("init must be None, a LogisticParams, or a (coef, intercept) "
                         f"tuple; got {type(init).__name__}")
    coef = np.asarray(coef, dtype=np.float64)
    icpt = np.asarray(icpt, dtype=np.float64).reshape(-1)
    if coef.shape != (K, d) or icpt.shape != (K,):
        raise ValueError(f"init must have coef of shape ({K}, {d}) and intercept of shape "
                         f"({K},); got {coef.shape} and {icpt.shape}")
    B = np.column_stack([coef, icpt]) if fit_intercept else coef
    return (B[1:] - B[0]).ravel()


def fit_firth_multinomial(X, y, *, fit_intercept=True, sample_weight=None, max_iter=100,
                          tol=1e-8, init=None) -> LogisticParams:
    r"""Bias-reduced multinomial logistic regression: the maximum of
    :math:`l(\beta) + \tfrac12\log\det I(\beta)` (see the module docstring), which is
    ``brglm2::brmultinom(type = "AS_mean")``'s estimate.

    Reached through ``fastgen.fit_logistic(X, y, penalty="firth")`` with more than two
    classes.  Coefficients are reported against ``classes[0]`` (its row is zero), as
    for the unpenalised multinomial fit; :func:`fastgen.logistic_inference` gives Wald
    standard errors from :math:`I(\hat\beta)^{-1}` (brglm2's) and the penalised
    log-likelihood.  Convergence: ``max|U*_j| / (r_j Σw) ≤ tol`` and the last step moved
    no coefficient by more than ``tol · (1 + max|β|)`` (columns' units, as binary
    Firth).
    """
    X = check_X(X, allow_sparse=True)
    classes, codes = check_y(y, X.shape[0], min_classes=2)
    K = classes.shape[0]
    w = check_sample_weight(sample_weight, X.shape[0])
    sw = float(w.sum()) if w.shape[0] else float(X.shape[0])
    data = InferenceData(X, fit_intercept)
    if init is None:
        beta0 = _prior_start(codes, w, K, data.d, fit_intercept)
    else:
        beta0 = _reference_init(init, classes, data.d, fit_intercept)
    c0 = None
    if init is None:
        beta0, c0 = subsample_start(X, codes, w, fit_intercept, beta0, max_iter,
                                    lambda *a: MultinomialPenalised(*a, 0.5, K), K)
    obj = MultinomialPenalised(data, codes, w, 0.5, K)
    given = init is not None
    if given:
        beta0, given = check_start(obj, beta0,
                                   _prior_start(codes, w, K, data.d, fit_intercept))
    run = _newton(obj, beta0, np.arange(obj.q), max_iter, tol, sw, c0)
    if obj.slow or run[0].emax > MULTI_START_ETA:
        run = _best_of_starts(obj, run, X, codes, w, fit_intercept, beta0, max_iter, tol,
                              sw)
    st, U, converged, n_iter, hist, steps = run[:6]
    if not converged:
        warn_unconverged(run, tol, max_iter, init=given)
    d, p, m = data.d, data.p, K - 1
    Bref = st.beta.reshape(m, p)
    B = np.vstack([np.zeros((1, p)), Bref])
    model = LogisticParams(
        classes=classes, coef=np.ascontiguousarray(B[:, :d], dtype=np.float64),
        intercept=(B[:, d] if fit_intercept else np.zeros(K)).astype(np.float64),
        parametrization="reference", l2=0.0, fit_intercept=bool(fit_intercept),
        n_iter=int(n_iter), converged=bool(converged), log_likelihood=float(st.llf),
        objective_history=np.asarray(hist, dtype=np.float64),
        grad_norm_history=np.asarray([np.nan] * (len(hist) - 1)
                                     + [float(np.max(np.abs(U))) / sw], dtype=np.float64),
        step_size_history=np.asarray(steps, dtype=np.float64), solver="firth", n_hessp=0,
    )
    return model


def modified_score_at(data, codes, w, beta, llf, score, information, emax, n_classes):
    """Firth's modified score U* (flat, the reference layout) at ``beta`` from one pass's
    sums there (log-likelihood, score, information, max|η|), binary or multinomial: one
    more pass, for the leverages.  None where the information is singular."""
    obj = _Penalised(data, codes, w, 0.5) if n_classes == 2 else \
        MultinomialPenalised(data, codes, w, 0.5, n_classes)
    try:
        st = _penalised_state(np.ascontiguousarray(beta, dtype=np.float64), llf, score,
                              information, emax, 0.5, "")
        return np.asarray(obj.modified_score(st), dtype=np.float64)
    except np.linalg.LinAlgError:
        return None
