"""The sample a logistic objective is evaluated on: the data protocol and its in-memory
implementation (dense or CSR X, held with its labels and weights).

The Newton solver never touches X.  An objective (``objectives.py``) asks the data for
unpenalised sums over rows at a point; anything that answers the calls of
:class:`LogisticData` can be fitted: :class:`InMemoryData` calls the numba kernels,
``fastgen.dask`` reduces the same sums over the blocks of a Dask array.

Imports: the kernels, ``fastgen._validation`` and ``fastgen._runtime`` only.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .._runtime import blas_single_thread, kernel_module
from .._small import is_small
from .._validation import csr_arrays, is_sparse

__all__ = ["LogisticData", "InMemoryData", "column_abs_max"]

irls = kernel_module("irls")
irls_sparse = kernel_module("irls_sparse")

_GROUP_MAX = 16
_SLOT_BUDGET = 8 * 1024 * 1024  # float64 entries over all partial slots (64 MB)


def column_abs_max(X, w, j):
    """max |x_ij| over the rows i of positive weight ``w`` (empty: every row) of a
    validated dense X or CSR X (the matrix or its ``(indptr, indices, data, …)``
    arrays), for error messages: one read of column j."""
    if isinstance(X, tuple) or is_sparse(X):
        indptr, indices, values = X[:3] if isinstance(X, tuple) else csr_arrays(X)[:3]
        at = np.flatnonzero(indices == j)
        rows = np.searchsorted(indptr, at, side="right") - 1
        v = values[at]
    else:
        rows, v = slice(None), X[:, j]
    v = np.abs(v).astype(np.float64)
    if w.shape[0]:
        v = v[w[rows] > 0.0]
    return float(v.max()) if v.size else 0.0


class LogisticData(Protocol):
    """What an objective needs from a sample (X̃, y, w), X̃ = [X, 1] if ``fit_intercept``.

    All sums run over the rows i with weights w_i (1 when no weights were given); β has
    the intercept last, p = d + fit_intercept entries (binary) or shape (K, p).

    Every implementation provides the explicit-Hessian calls (``binary``,
    ``multinomial``, ``multinomial_hessian``).  Implementations with
    ``supports_hessp = True`` also provide the Hessian-vector calls of Newton-CG
    (``binary_hessp``, ``weighted_sq_colsum``, ``row_weights``, ``multinomial_hessp``),
    which take the per-row quantities an evaluation returned, and ``design_gram`` (the
    X̃ᵀ diag(w) X̃ of the multinomial Böhning preconditioner).  An implementation with
    ``row_sample`` (a fixed subsample of the rows, see :meth:`InMemoryData.row_sample`)
    gives multinomial Newton-CG its block preconditioner.

    Per-row results (``s`` of ``binary``, ``P`` of ``multinomial``) may live in buffers
    the data reuses: they describe the latest evaluation only.
    """

    d: int
    p: int
    fit_intercept: bool
    supports_hessp: bool

    def binary(self, beta, hessian: bool, rows: bool):
        """At β, π = σ(X̃β): ``(loss, g, H or None, eta_max, s or None)`` with
        loss = Σ w (softplus(η) − yη), g = X̃ᵀw(π − y), H = X̃ᵀdiag(wπ(1−π))X̃ if
        ``hessian``, eta_max = max|η|, and s = wπ(1−π) per row if ``rows``."""

    def multinomial(self, B):
        """At B (K, p), P = softmax(X̃Bᵀ): ``(loss, G, eta_max, P or None)`` with
        loss = −Σ w log P_{i,y_i}, G = (w(P − Y))ᵀX̃ (K, p) and eta_max the largest spread
        of η across classes; P (n, K) where the data keeps rows, else None."""

    def multinomial_hessian(self, B, P):
        """The (K·p)² Hessian Σ_i w_i (diag(P_i) − P_iP_iᵀ) ⊗ x̃_i x̃_iᵀ at B, where P is
        what ``multinomial(B)`` returned."""


class InMemoryData:
    """X (dense or CSR) in memory with codes y and weights w; calls the kernels.

    Implements :class:`LogisticData`, Hessian-vector products included.  The work split
    (row groups of ``bounds``) depends on n, the block and the slot size alone, so
    results are bitwise identical for any thread count.

    Parameters
    ----------
    X : validated ndarray (n, d) or scipy CSR
    y : ndarray (n,) int32
        Class codes.
    w : ndarray (n,) float64
        Sample weights, or an empty array for unit weights.
    fit_intercept : bool
    """

    supports_hessp = True

    #: the class small inputs get instead (numpy passes, no compilation:
    #: :class:`fastgen.logistic.small.SmallData`, which sets this when the package
    #: imports it)
    small_class = None

    def __new__(cls, X, *args, **kwargs):
        if cls is InMemoryData and cls.small_class is not None and is_small(X):
            cls = cls.small_class
        return super().__new__(cls)

    def __init__(self, X, y, w, fit_intercept):
        self.sparse = is_sparse(X)
        self.n, self.d = X.shape
        self.y, self.w = y, w
        self.fit_intercept = bool(fit_intercept)
        self.p = self.d + (1 if fit_intercept else 0)
        if self.sparse:
            # float64 values: the passes compute in float64 (the same bits),
            # and float32 values would compile every CSR pass again
            self.csr = (*csr_arrays(X, float64_values=True), self.d)
            self.block = 1
        else:
            self.X = X
            # Rows per GEMM block: about 256 KB of float64 per block, 64..2048 rows.
            blk = (1 << 15) // max(self.p, 1)
            self.block = int(min(2048, max(64, 1 << max(0, blk.bit_length() - 1))))
        self._bounds = {}
        self._s = None
        self._P = None

    def bounds(self, slot_size):
        """Row offsets of the groups: fixed by n, the block and the slot size alone."""
        G = max(1, min(_GROUP_MAX, _SLOT_BUDGET // max(slot_size, 1)))
        if G in self._bounds:
            return self._bounds[G]
        n = self.n
        if self.sparse:
            indptr = self.csr[0]
            cost = indptr.astype(np.float64) + np.arange(n + 1)
            targets = cost[-1] * np.arange(1, G) / G
            inner = np.searchsorted(cost, targets)
            b = np.unique(np.concatenate([[0], inner, [n]])).astype(np.int64)
        else:
            nb = -(-n // self.block)
            Gd = min(G, nb)
            per = -(-nb // Gd)
            b = np.minimum(np.arange(0, nb + per, per) * self.block, n)
            b = np.unique(b).astype(np.int64)
        self._bounds[G] = b
        return b

    def binary(self, beta, hessian, rows):
        """See :meth:`LogisticData.binary`."""
        if rows and self._s is None:
            self._s = np.empty(self.n)
        s_out = self._s if rows else np.empty(0)
        hp = self.p if hessian else 1
        bounds = self.bounds(hp * hp + self.p)
        if self.sparse:
            loss, g, H, eta_max = irls_sparse.binary_loss_grad_hess_csr(
                *self.csr, self.y, self.w, beta, self.fit_intercept, bounds, hessian, s_out)
        else:
            with blas_single_thread(hessian):
                loss, g, H, eta_max = irls.binary_loss_grad_hess(
                    self.X, self.y, self.w, beta, self.fit_intercept, bounds, self.block,
                    hessian, s_out)
        return loss, g, (H if hessian else None), eta_max, (s_out if rows else None)

    def design_gram(self):
        """X̃ᵀ diag(w) X̃: dense by its own SYRK pass, CSR as 4× the binary Hessian at
        β = 0 (the same matrix)."""
        if self.sparse:
            return 4.0 * self.binary(np.zeros(self.p), True, False)[2]
        bounds = self.bounds(self.p * self.p)
        with blas_single_thread():
            return irls.weighted_gram(self.X, self.w, self.fit_intercept, bounds, self.block)

    def binary_hessp(self, s, v):
        """X̃ᵀ diag(s) X̃ v."""
        bounds = self.bounds(self.p)
        if self.sparse:
            return irls_sparse.binary_hessp_csr(*self.csr, s, v, self.fit_intercept, bounds)
        return irls.binary_hessp(self.X, s, v, self.fit_intercept, bounds)

    def weighted_sq_colsum(self, s):
        """Σ_i s_i x̃_ij² per column j: the diagonal of X̃ᵀ diag(s) X̃."""
        bounds = self.bounds(self.p)
        if self.sparse:
            return irls_sparse.weighted_sq_colsum_csr(*self.csr, s, self.fit_intercept, bounds)
        return irls.weighted_sq_colsum(self.X, s, self.fit_intercept, bounds)

    def column_abs_max(self, j):
        """max |x_ij| over the rows of positive weight (see :func:`column_abs_max`)."""
        return column_abs_max(self.csr if self.sparse else self.X, self.w, j)

    def max_predictor_change(self, change):
        """max_i |x̃_iᵀc| for c = ``change`` (p,), or max_ik |x̃_iᵀc_k| for (K, p): how
        far moving the coefficients by ``change`` moves any row's predictors."""
        C = np.atleast_2d(change)
        d = self.d
        with blas_single_thread():
            if self.sparse:
                import scipy.sparse as sp

                indptr, indices, values = self.csr[:3]
                E = sp.csr_matrix((values, indices, indptr), shape=(self.n, d)) @ C[:, :d].T
            else:
                E = self.X @ C[:, :d].T
        if self.fit_intercept:
            E = E + C[:, d]
        return float(np.max(np.abs(E), initial=0.0))

    def row_sample(self, max_rows):
        """``(rows, X̃_s, w_s)``: every k-th row (k = ⌈n / max_rows⌉, so at most
        ``max_rows`` rows, all of them when n ≤ max_rows), as a dense float64 X̃_s with
        the intercept's column of ones, and their weights (ones when none were given).
        A fixed choice, so that whatever is built from it is deterministic."""
        stride = max(1, -(-self.n // max(int(max_rows), 1)))
        rows = np.arange(0, self.n, stride)
        Xs = np.empty((rows.shape[0], self.p))
        if self.sparse:
            import scipy.sparse as sp

            indptr, indices, values = self.csr[:3]
            sub = sp.csr_matrix((values, indices, indptr), shape=(self.n, self.d))[rows]
            Xs[:, :self.d] = sub.toarray()
        else:
            Xs[:, :self.d] = self.X[rows]
        if self.fit_intercept:
            Xs[:, self.d] = 1.0
        ws = self.w[rows] if self.w.shape[0] else np.ones(rows.shape[0])
        return rows, Xs, np.asarray(ws, dtype=np.float64)

    def row_weights(self):
        """The weights w as a full vector (ones when none were given)."""
        return self.w if self.w.shape[0] else np.ones(self.n)

    def multinomial(self, B):
        """See :meth:`LogisticData.multinomial`."""
        K = B.shape[0]
        if self._P is None or self._P.shape[1] != K:
            self._P = np.empty((self.n, K))
        bounds = self.bounds(B.size)
        if self.sparse:
            loss, G, eta_max = irls_sparse.multinomial_loss_grad_csr(
                *self.csr, self.y, self.w, B, self.fit_intercept, bounds, self._P)
        else:
            loss, G, eta_max = irls.multinomial_loss_grad(
                self.X, self.y, self.w, B, self.fit_intercept, bounds, self._P)
        return loss, G, eta_max, self._P

    def multinomial_hessp(self, P, V):
        """H V for V (K, p): Σ_i w_i x̃_i ⊗ (P_i ∘ u_i − P_i (P_i·u_i)), u_i = V x̃_i."""
        bounds = self.bounds(V.size)
        if self.sparse:
            return irls_sparse.multinomial_hessp_csr(*self.csr, self.w, P, V,
                                                     self.fit_intercept, bounds)
        return irls.multinomial_hessp(self.X, self.w, P, V, self.fit_intercept, bounds)

    def multinomial_hessian(self, B, P):
        """See :meth:`LogisticData.multinomial_hessian` (P is used, B is not needed)."""
        Kp = P.shape[1] * self.p
        bounds = self.bounds(Kp * Kp)
        if self.sparse:
            return irls_sparse.multinomial_hessian_csr(*self.csr, self.w, P,
                                                       self.fit_intercept, bounds)
        with blas_single_thread():
            return irls.multinomial_hessian(self.X, self.w, P, self.fit_intercept, bounds,
                                            self.block)
