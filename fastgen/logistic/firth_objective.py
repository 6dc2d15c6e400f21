r"""Firth's penalised log-likelihood of binary logistic regression, as an objective of
the Newton loop (:func:`fastgen.logistic.penalised._newton`).

.. math::

    l^*(\beta) = l(\beta) + pw\,\log\det I(\beta),
    \qquad I(\beta) = \tilde X^\top \operatorname{diag}(w\,\pi(1-\pi))\,\tilde X,

with pw = ½ for Firth (1993).  :class:`_Penalised` evaluates l, the score and I in one
pass over X (:func:`fastgen.kernels.inference.inference_pass`), the modified score
:math:`U^* = U + 2\,pw\sum_i h_i(\tfrac12 - \pi_i)\tilde x_i` in a second
(:func:`fastgen.kernels.inference.firth_hat`), and on request l*'s own Hessian in a
third (:meth:`_Penalised.curvature`).  :func:`firth_null_loglik` is l* of the
intercept-only model in closed form.

Used by the binary fit (:mod:`fastgen.logistic.firth`), FLIC and FLAC
(:mod:`fastgen.logistic.bias_reduction`) and the profile
(:mod:`fastgen.logistic.firth_profile`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.special

from .._runtime import blas_single_thread, kernel_module, threads_for, threads_for_work
from .columns import check_curvature_diagonal, column_scales
from .data import column_abs_max
from .objectives import Evaluation
from .small import SmallInferenceData, packed_products

__all__ = ["firth_null_loglik", "CURVATURE_MAX_PARAMS"]

inference_kernels = kernel_module("inference")

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
    hold the sums (see :func:`fastgen.logistic.columns.column_scales`)."""
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
