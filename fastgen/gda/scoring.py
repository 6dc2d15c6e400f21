"""The scorer of the Gaussian models (GDA and Gaussian naive Bayes): their scoring
tables, and which kernels score them.

The params hand over float64 tables of one of three kinds (:class:`PooledTables`,
:class:`PerClassTables`, :class:`DiagonalTables`); :data:`GAUSSIAN_SCORER` scores
host X with the CPU kernels, in the params' dtype, choosing by the sizes (one pass by
transposed tiles for the pooled posteriors of small d, the stacked per-class GEMM for
middle d, BLAS held at one thread around the kernels that call it, four classes per
sweep in the diagonal kernel), and device X with :func:`fastgen.cuda.score`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import cuda
from .._params import kernel_view
from .._runtime import blas_single_thread, kernel_module
from .._scorer import MODE_JLL, MODE_PREDICT, Scorer, derived
from .._validation import check_finite_result

__all__ = ["PooledTables", "PerClassTables", "DiagonalTables", "GaussianScorer",
           "GAUSSIAN_SCORER"]

gaussian_kernels = kernel_module("gaussian")
nb_kernels = kernel_module("nb")
special_kernels = kernel_module("special")
tile_kernels = kernel_module("tiles")


class PooledTables(NamedTuple):
    """jll_k(x) = (x − c)ᵀcoef_k + bias_k + const − ½‖M(x − c)‖², float64."""

    #: c (d,): the centre the scores are computed about
    center: np.ndarray
    #: coef (d, K) = Σ⁻¹(μ_k − c)
    coef: np.ndarray
    #: bias (K,) = −½(μ_k − c)ᵀΣ⁻¹(μ_k − c) + log p_k
    bias: np.ndarray
    #: M (d, d), lower triangular, MᵀM = Σ⁻¹ (on the retained subspace for rank < d)
    whitening: np.ndarray
    #: const = −½(log_det + rank·log 2π)
    const: float


class PerClassTables(NamedTuple):
    """jll_k(x) = bias_k − ½‖L_k⁻¹(x − μ_k)‖², float64."""

    means: np.ndarray  #: μ (K, d)
    inv_cholesky: np.ndarray  #: L⁻¹ (K, d, d)
    bias: np.ndarray  #: bias (K,) = log p_k − ½(log|Σ_k| + d·log 2π)
    center: np.ndarray  #: c (d,): the weighted mean of the classes (stacked kernel)


class DiagonalTables(NamedTuple):
    """jll_k(x) = const_k − ½ Σ_j (x_j − μ_kj)²/σ²_kj, float64."""

    means: np.ndarray  #: μ (K, d)
    inv_var: np.ndarray  #: 1/σ² (K, d)
    const: np.ndarray  #: const (K,) = log p_k − ½ Σ_j log 2πσ²_kj


def _check_rows(X, n_bad):
    """The kernels skip the up-front scan of X (``checks_finite_scores``): a row of
    scores with a NaN or a non-finite maximum can only come from a non-finite or
    overflowing x (every class with a positive prior scores finitely otherwise)."""
    if n_bad:
        check_finite_result(X, np.array([np.nan]))


def _pooled(params):
    """(coef, bias, M, const, c) in the params' dtype, as the CPU kernels take them."""
    def make():
        c, coef, bc, M, const = params.scoring_tables()[1]
        dt = params.dtype
        return (np.ascontiguousarray(coef, dtype=dt), bc.astype(dt),
                np.ascontiguousarray(M, dtype=dt), const, c.astype(dt))
    return derived(params, "_scorer_pooled", make)


def _pooled_coef_t(params):
    """coefᵀ (K, d), C-contiguous: the layout of the tiled posteriors."""
    return derived(params, "_scorer_pooled_coef_t",
                   lambda: np.ascontiguousarray(_pooled(params)[0].T))


def _per_class(params):
    """(μ, L⁻¹, bias) in the params' dtype."""
    def make():
        means, Linv, bias, _ = params.scoring_tables()[1]
        dt = params.dtype
        return (kernel_view(np.ascontiguousarray(means, dtype=dt)),
                np.ascontiguousarray(Linv, dtype=dt), bias.astype(dt))
    return derived(params, "_scorer_per_class", make)


def _stacked(params):
    """[L_1⁻ᵀ … L_K⁻ᵀ] (d, K·d), a_k = L_k⁻¹(μ_k − c) and c for the stacked kernel."""
    def make():
        means, _, _, c = params.scoring_tables()[1]
        Linv = _per_class(params)[1].astype(np.float64)
        K, d = means.shape
        stacked = np.ascontiguousarray(Linv.transpose(2, 0, 1).reshape(d, K * d))
        A = np.einsum("kjl,kl->kj", Linv, means - c)
        dt = params.dtype
        return stacked.astype(dt), np.ascontiguousarray(A), c.astype(dt)
    return derived(params, "_scorer_stacked", make)


class GaussianScorer(Scorer):
    """Scores from :class:`PooledTables`, :class:`PerClassTables` or
    :class:`DiagonalTables`, host or device."""

    #: NaN/inf in X is found through the scores (no separate scan of X)
    checks_finite_scores = True

    def device(self, params, X, mode):
        kind, tables = params.scoring_tables()
        if kind == "per_class":
            tables = tables[:3]  # the device kernel centres on each class's mean
        out = cuda.score(kind, tuple(tables), X, mode, params.dtype, params.n_features_in)
        return params.classes[out] if mode == MODE_PREDICT else out

    def small(self, params, X, mode):
        from .small import gaussian_scores  # numpy scores of small X

        return gaussian_scores(params, X, mode)

    def scores(self, params, X, mode):
        """Joint log-likelihoods (``MODE_JLL``), log posteriors or posteriors.

        The kernels write the scores; a second parallel pass normalises the rows (fusing
        the normalisation into the BLAS-based kernels did not pay: benchmarks/NOTES.md).
        The pooled model's posteriors on float64 data with d ≤ ``LINEAR_TILE_MAX_D`` go
        in one pass by transposed tiles instead, without BLAS (``linear_posteriors``).
        """
        kind, tables = params.scoring_tables()
        if (mode != MODE_JLL and kind == "pooled"
                and tile_kernels.serves_linear_posteriors(X, params.dtype)):
            # one pass by transposed tiles, no BLAS (see kernels.tiles.linear_posteriors)
            _, bc, _, _, c = _pooled(params)
            s = np.empty((X.shape[0], params.n_classes))
            coef_t = _pooled_coef_t(params)
            _check_rows(X, tile_kernels.linear_posteriors(X, c, coef_t, bc, mode, s))
            return s
        if kind == "diagonal":
            # the Gaussian naive Bayes kernels: the scores finished per mode in the
            # same pass (four classes per sweep from 16 features on)

            means, inv_var, const = tables
            s = np.empty((X.shape[0], const.shape[0]), dtype=params.dtype)
            kernel = nb_kernels.gaussian_nb_kernel_for(X.shape[1], const.shape[0])
            _check_rows(X, kernel(X, means, inv_var, const, mode, s))
            return s
        s = raw_scores(params, X, mode)
        _check_rows(X, special_kernels.finish_all_rows(s, mode))
        return s

    def decision_scores(self, params, X):
        if params.scoring_tables()[0] != "pooled":
            return self.scores(params, X, MODE_JLL)
        # any scores with the posteriors' row-wise argmax will do: for the pooled model
        # the linear part alone
        coef, bc, _, _, c = _pooled(params)
        dt = params.dtype
        out = np.empty((X.shape[0], params.n_classes), dtype=dt)
        with blas_single_thread():
            gaussian_kernels.pooled_scores(X, c, coef, bc, np.empty((0, 0), dt), 0.0, out)
        _check_rows(X, special_kernels.finish_all_rows(out, MODE_JLL))
        return out


def raw_scores(params, X, mode):
    """The pooled or per-class scores of validated X by the BLAS-based kernels, rows
    not yet finished (``mode`` other than ``MODE_JLL``: the pooled model's linear part
    only, the shared quadratic term cancelling in the posteriors)."""
    kind = params.scoring_tables()[0]
    dt = params.dtype
    out = np.empty((X.shape[0], params.n_classes), dtype=dt)
    if kind == "pooled":
        coef, bc, Linv, const, c = _pooled(params)
        if mode != MODE_JLL:
            Linv = np.empty((0, 0), dt)
        with blas_single_thread():
            return gaussian_kernels.pooled_scores(X, c, coef, bc, Linv, const, out)
    if kind == "per_class":
        means, Linv, bias = _per_class(params)
        d = X.shape[1]
        with blas_single_thread(d >= gaussian_kernels.TRMM_MIN_D):
            if gaussian_kernels.TRMM_MIN_D <= d < gaussian_kernels.STACKED_MAX_D:
                stacked, A, c = _stacked(params)
                return gaussian_kernels.per_class_scores_stacked(X, c, stacked, A, bias, out)
            return gaussian_kernels.per_class_scores(X, means, Linv, bias, out)
    raise AssertionError(f"no raw scores for tables of kind {kind!r}")


#: The one scorer of the Gaussian models.
GAUSSIAN_SCORER = GaussianScorer()
