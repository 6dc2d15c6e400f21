"""The logistic passes over small X in numpy: no compilation.

:class:`SmallData` answers the :class:`~fastgen.logistic.data.LogisticData` calls of the
Newton solver and :class:`SmallInferenceData` the inference passes of
:class:`~fastgen.logistic.inference.passes.InferenceData` (and Firth's hat diagonal and
curvature products) with numpy and scipy on the design X̃ = [X, 1] (dense float64, or
CSR), for inputs of at most :data:`fastgen._small.SMALL_VALUES` values.  The formulas
are the kernels' (:mod:`fastgen.kernels.irls`, :mod:`fastgen.kernels.inference`,
:mod:`fastgen.kernels.firth`), vectorised; ``InMemoryData(X, …)`` and
``InferenceData(X, …)`` of small X are these classes.  Products run with BLAS on one
thread, so results do not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
import scipy.special

from .._small import numpy_scope
from .._validation import is_sparse
from .data import InMemoryData
from .inference.passes import InferenceData

__all__ = ["Design", "SmallData", "SmallInferenceData", "packed_products"]


class Design:
    """X̃ = [X, 1] (``fit_intercept``) or X, float64: dense (n, p) or CSR (n, p)."""

    def __init__(self, X, fit_intercept):
        n = X.shape[0]
        if is_sparse(X):
            Xt = scipy.sparse.csr_matrix(X, dtype=np.float64)
            if fit_intercept:
                Xt = scipy.sparse.hstack([Xt, np.ones((n, 1))], format="csr")
            self.sparse = True
        else:
            Xt = np.empty((n, X.shape[1] + (1 if fit_intercept else 0)))
            Xt[:, :X.shape[1]] = X
            if fit_intercept:
                Xt[:, -1] = 1.0
            self.sparse = False
        self.Xt = Xt

    def eta(self, B):
        """X̃Bᵀ (n, K) for B (K, p), or X̃β (n,) for β (p,)."""
        return np.asarray(self.Xt @ B.T)

    def tmul(self, R):
        """X̃ᵀR: (p,) for R (n,), (p, K) for R (n, K)."""
        out = self.Xt.T @ R
        return out.toarray() if scipy.sparse.issparse(out) else np.asarray(out)

    def gram(self, a):
        """X̃ᵀ diag(a) X̃ (p, p), exactly symmetric."""
        if self.sparse:
            G = (self.Xt.T @ self.Xt.multiply(a[:, None])).toarray()
        elif np.all(a >= 0):
            Z = self.Xt * np.sqrt(a)[:, None]
            return Z.T @ Z
        else:
            G = self.Xt.T @ (self.Xt * a[:, None])
        return 0.5 * (G + G.T)

    def sq_colsum(self, s):
        """Σ_i s_i x̃_ij² per column."""
        if self.sparse:
            return np.asarray(self.Xt.multiply(self.Xt).T @ s).reshape(-1)
        return (self.Xt * self.Xt).T @ s


def _log_softmax(E):
    """(log P, P) of the rows of E, stably."""
    top = E.max(axis=1, keepdims=True)
    lse = top + np.log(np.exp(E - top).sum(axis=1, keepdims=True))
    logP = E - lse
    return logP, np.exp(logP)


def _positive_max(v, w):
    """max of ``v`` over the rows of positive weight (all rows without weights), 0 if
    none."""
    if w.shape[0]:
        v = v[w > 0.0]
    return float(v.max()) if v.size else 0.0


class SmallData(InMemoryData):
    """:class:`~fastgen.logistic.data.InMemoryData` of small X, in numpy."""

    def __init__(self, X, y, w, fit_intercept):
        super().__init__(X, y, w, fit_intercept)
        self.design = Design(X, fit_intercept)
        self.wv = w if w.shape[0] else np.ones(self.n)

    def binary(self, beta, hessian, rows):
        """See :meth:`~fastgen.logistic.data.LogisticData.binary`."""
        with numpy_scope():
            eta = self.design.eta(beta)
            y = self.y == 1
            w = self.wv
            loss = float(np.sum(w * np.logaddexp(0.0, np.where(y, -eta, eta))))
            g = self.design.tmul(w * (scipy.special.expit(eta) - y))
            s = w * scipy.special.expit(eta) * scipy.special.expit(-eta)
            H = self.design.gram(s) if hessian else None
        return loss, g, H, _positive_max(np.abs(eta), self.w), (s if rows else None)

    def design_gram(self):
        """X̃ᵀ diag(w) X̃."""
        with numpy_scope():
            return self.design.gram(self.wv)

    def binary_hessp(self, s, v):
        """X̃ᵀ diag(s) X̃ v."""
        with numpy_scope():
            return self.design.tmul(s * self.design.eta(v))

    def weighted_sq_colsum(self, s):
        """Σ_i s_i x̃_ij² per column j."""
        with numpy_scope():
            return self.design.sq_colsum(s)

    def multinomial(self, B):
        """See :meth:`~fastgen.logistic.data.LogisticData.multinomial`."""
        with numpy_scope():
            E = self.design.eta(B)
            logP, P = _log_softmax(E)
            w = self.wv
            rows = np.arange(self.n)
            loss = float(-np.sum(w * logP[rows, self.y]))
            R = P.copy()
            R[rows, self.y] -= 1.0
            G = self.design.tmul(w[:, None] * R).T
            spread = E.max(axis=1) - E.min(axis=1)
        return loss, np.ascontiguousarray(G), _positive_max(spread, self.w), P

    def multinomial_hessp(self, P, V):
        """H V: Σ_i w_i x̃_i ⊗ (P_i ∘ u_i − P_i (P_i·u_i)), u_i = V x̃_i."""
        with numpy_scope():
            PU = P * self.design.eta(V)
            R = self.wv[:, None] * (PU - P * PU.sum(axis=1, keepdims=True))
            return np.ascontiguousarray(self.design.tmul(R).T)

    def multinomial_hessian(self, B, P):
        """Σ_i w_i (diag(P_i) − P_iP_iᵀ) ⊗ x̃_i x̃_iᵀ, (K·p)², index k·p + j."""
        K, p = P.shape[1], self.p
        H = np.empty((K * p, K * p))
        w = self.wv
        with numpy_scope():
            for k in range(K):
                for l in range(k, K):
                    a = w * P[:, k] * ((1.0 if k == l else 0.0) - P[:, l])
                    blk = self.design.gram(a)
                    H[k * p:(k + 1) * p, l * p:(l + 1) * p] = blk
                    H[l * p:(l + 1) * p, k * p:(k + 1) * p] = blk.T
        return H


class SmallInferenceData(InferenceData):
    """:class:`~fastgen.logistic.inference.passes.InferenceData` of small X, in numpy."""

    def __init__(self, X, fit_intercept):
        super().__init__(X, fit_intercept)
        self.design = Design(X, fit_intercept)

    def inference_pass(self, codes, w, B, want_meat, want_r, want_info=True):
        """See :meth:`InferenceData.inference_pass` (reference layout, P_i0 the
        reference class)."""
        n, m, p = self.n, B.shape[0], self.p
        wv = w if w.shape[0] else np.ones(n)
        with numpy_scope():
            eta = self.design.eta(B)
            logP, P = _log_softmax(np.column_stack([np.zeros(n), eta]))
            rows = np.arange(n)
            llf = float(np.sum(wv * logP[rows, codes]))
            Y = np.zeros((n, m + 1))
            Y[rows, codes] = 1.0
            r = Y[:, 1:] - P[:, 1:]
            wr = wv[:, None] * r
            g = self.design.tmul(wr).T.reshape(-1)
            H = np.zeros((m * p, m * p))
            for k in range(m if want_info else 0):
                # 1 − P_k summed from the other classes: no cancellation as P_k → 1
                Qk = np.delete(P, k + 1, axis=1).sum(axis=1)
                for l in range(k, m):
                    other = Qk if k == l else -P[:, l + 1]
                    blk = self.design.gram(wv * P[:, k + 1] * other)
                    H[k * p:(k + 1) * p, l * p:(l + 1) * p] = blk
                    H[l * p:(l + 1) * p, k * p:(k + 1) * p] = blk.T
            M = self._meat(wv, r) if want_meat else np.zeros((1, 1))
        R = wr if want_r else np.zeros((0, m))
        return llf, g, H, M, _positive_max(np.abs(eta).max(axis=1), w), R

    def _meat(self, wv, r):
        """Σ_i w_i (r_i ⊗ x̃_i)(r_i ⊗ x̃_i)ᵀ, index k·p + j."""
        m, p = r.shape[1], self.p
        M = np.empty((m * p, m * p))
        for k in range(m):
            for l in range(k, m):
                blk = self.design.gram(wv * r[:, k] * r[:, l])
                M[k * p:(k + 1) * p, l * p:(l + 1) * p] = blk
                M[l * p:(l + 1) * p, k * p:(k + 1) * p] = blk.T
        return M

    def cluster_scores(self, R, groups, n_groups):
        """(G, m·p): Σ over the rows of each cluster of the weighted scores r_i ⊗ x̃_i."""
        n, m = R.shape
        A = scipy.sparse.csr_matrix((np.ones(n), (groups, np.arange(n))),
                                    shape=(n_groups, n))
        out = np.empty((n_groups, m * self.p))
        with numpy_scope():
            for k in range(m):
                out[:, k * self.p:(k + 1) * self.p] = self.design.tmul(
                    A.T.multiply(R[:, k][:, None])).T
        return out

    def firth_hat(self, w, beta, Linv):
        """Firth's score correction c = Σ_i h_i (½ − π_i) x̃_i and Σ_i h_i, with the
        leverages h_i = s_i ‖L⁻¹x̃_i‖², s_i = w_i π_i(1 − π_i) (the kernel
        ``firth_hat``)."""
        with numpy_scope():
            eta = self.design.eta(beta)
            pi = scipy.special.expit(eta)
            s = (w if w.shape[0] else 1.0) * pi * scipy.special.expit(-eta)
            Z = np.asarray(self.design.Xt @ Linv.T)  # rows L⁻¹x̃_i
            h = s * np.einsum("ij,ij->i", Z, Z)
            return self.design.tmul(h * (0.5 - pi)), float(h.sum())


_SQRT2 = np.sqrt(2.0)


def packed_products(ZT, AX, G):
    """``G += P @ AX`` with P's rows the packed upper triangles of z_i z_iᵀ (√2 off the
    diagonal, j-major): the kernel ``firth_packed_products``, by one BLAS product."""
    p = ZT.shape[0]
    j, k = np.triu_indices(p)
    P = ZT[j] * ZT[k]
    P[j != k] *= _SQRT2
    with numpy_scope():
        G += P @ AX


# small inputs of InMemoryData(X, …) and InferenceData(X, …) are these classes
InMemoryData.small_class = SmallData
InferenceData.small_class = SmallInferenceData

