"""One pass over in-memory X at the estimate: the sums every inference is built from.

:class:`InferenceData` holds validated X (dense or CSR) with its fixed work split and
calls the inference kernels (:mod:`fastgen.kernels.inference`); :class:`PassSums` is what
a pass (or the sum of the passes over a Dask array's blocks) hands to the shared finish.

Imports: the kernels, ``fastgen._validation`` and ``fastgen._runtime`` only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._runtime import blas_single_thread, kernel_module, threads_for
from ..._small import is_small
from ..._validation import csr_arrays, is_sparse

__all__ = ["InferenceData", "PassSums", "reference_coef"]

inference_kernels = kernel_module("inference")

_GROUP_MAX = 16
_SLOT_BUDGET = 8 * 1024 * 1024


def reference_coef(model):
    """The model's coefficients in the reference layout, (m, p), intercept last."""
    coef = np.asarray(model.coef, dtype=np.float64)
    icpt = np.asarray(model.intercept, dtype=np.float64)
    if coef.shape[0] > 1:
        coef = coef[1:] - coef[0]
        icpt = icpt[1:] - icpt[0]
    if model.fit_intercept:
        return np.ascontiguousarray(np.column_stack([coef, icpt]))
    return np.array(coef, order="C")  # a writeable copy: params fields are read-only


@dataclass(frozen=True)
class PassSums:
    """Sums over the rows of the sample at the estimate B (reference layout, (m, p)).

    ``information`` and ``meat`` are (q, q) with q = m·p, index ``k·p + j``, intercept
    last; ``cluster_scores`` (G, q) holds the weighted score sum of each cluster;
    ``class_counts`` the (weighted) number of rows of each class.
    """

    loglik: float
    score: np.ndarray
    information: np.ndarray
    meat: np.ndarray | None
    max_abs_eta: float
    cluster_scores: np.ndarray | None
    class_counts: np.ndarray
    n_groups: int


class InferenceData:
    """Validated X (dense or CSR) with its fixed work split; calls the inference kernels.

    The row groups depend on n, p and the slot size only, never on the thread count.
    """

    #: the class small inputs get instead (numpy passes, no compilation:
    #: :class:`fastgen.logistic.small.SmallInferenceData`, which sets this when the
    #: package imports it)
    small_class = None

    def __new__(cls, X, *args, **kwargs):
        if cls is InferenceData and cls.small_class is not None and is_small(X):
            cls = cls.small_class
        return super().__new__(cls)

    def __init__(self, X, fit_intercept):
        self.sparse = is_sparse(X)
        self.n, self.d = X.shape
        self.fit_intercept = bool(fit_intercept)
        self.p = self.d + (1 if self.fit_intercept else 0)
        self.X = X
        if self.sparse:
            # float64 values: the passes compute in float64 (the same bits),
            # and float32 values would compile every CSR pass again
            self.csr = (*csr_arrays(X, float64_values=True), self.d)
            self.block = 1
        else:
            blk = (1 << 15) // max(self.p, 1)
            self.block = int(min(2048, max(64, 1 << max(0, blk.bit_length() - 1))))

    def bounds(self, slot_size):
        """Row offsets of the groups: fixed by n, the block and the slot size alone."""
        G = max(1, min(_GROUP_MAX, _SLOT_BUDGET // max(slot_size, 1)))
        n = self.n
        if self.sparse:
            cost = self.csr[0].astype(np.float64) + np.arange(n + 1)
            inner = np.searchsorted(cost, cost[-1] * np.arange(1, G) / G)
            b = np.concatenate([[0], inner, [n]])
        else:
            nb = -(-n // self.block)
            G = max(1, min(G, nb))
            per = -(-nb // G)
            b = np.minimum(np.arange(0, nb + per, per) * self.block, n)
        return np.unique(b).astype(np.int64)

    def inference_pass(self, codes, w, B, want_meat, want_r, want_info=True):
        """(llf, score, information, meat, max|η|, R) at the reference-layout B (m, p).

        ``want_info=False``: the information is not formed (zero), the rest is the same
        to the last bit (the tiled multinomial kernel forms it anyway)."""
        m = B.shape[0]
        q = m * self.p
        R = np.zeros((self.n, m)) if want_r else np.zeros((0, m))
        slot = q * q * (2 if want_meat else 1)
        bounds = self.bounds(slot)
        fit_intercept = self.fit_intercept
        with threads_for(self.X):
            if self.sparse:
                out = inference_kernels.inference_pass_csr(
                    *self.csr, codes, w, B, fit_intercept, bounds, want_meat, R, want_info)
            else:
                with blas_single_thread():
                    if inference_kernels.use_tiles(m, self.p):
                        out = inference_kernels.inference_pass_tiles(
                            self.X, codes, w, B, fit_intercept, bounds,
                            inference_kernels.INFERENCE_TILE_ROWS, want_meat, R)
                    else:
                        # the kernel of this m only: the other is not compiled
                        kernel = (inference_kernels.inference_pass_binary if m == 1
                                  else inference_kernels.inference_pass_multinomial)
                        out = kernel(self.X, codes, w, B, fit_intercept, bounds,
                                     self.block, want_meat, R, want_info)
        return (*out, R)

    def cluster_scores(self, R, groups, n_groups):
        """(G, q): Σ over the rows of each cluster of the weighted scores r_i ⊗ x̃_i."""
        if self.sparse:
            return inference_kernels.cluster_scores_csr(*self.csr, R, groups, n_groups,
                                                        self.fit_intercept)
        return inference_kernels.cluster_scores(self.X, R, groups, n_groups,
                                                self.fit_intercept)

    def sums(self, codes, w, B, n_classes, want_meat, groups=None, n_groups=0):
        """:class:`PassSums` of one pass at B; cluster score sums when ``n_groups``."""
        llf, g, H, M, max_abs_eta, R = self.inference_pass(codes, w, B, want_meat,
                                                           n_groups > 0)
        S = self.cluster_scores(R, groups, n_groups) if n_groups else None
        counts = np.bincount(codes, weights=w if w.shape[0] else None,
                             minlength=n_classes)
        return PassSums(llf, g, H, M, max_abs_eta, S, counts, n_groups)
