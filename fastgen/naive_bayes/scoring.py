"""The scorer of the naive Bayes models on counts and categories: their scoring
tables, and which kernels score them.

* :class:`LinearTables` (Bernoulli, multinomial, complement: jll = A·W + b, with A = X
  or X binarized) go to :data:`LINEAR_SCORER`: dense X by one GEMM, CSR X by the
  linear kernels of :mod:`fastgen.kernels.sparse` (predictions by the argmax kernels,
  on a float32 copy of the weights where that gives the same labels);
* :class:`CategoricalTables` go to :data:`CATEGORICAL_SCORER`: dense or CSR kernels
  that sum a table entry per feature.

Neither has device kernels: a device array is refused with the way to score it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._params import kernel_view
from .._runtime import kernel_module
from .._scorer import MODE_JLL, MODE_LOG_PROBA, MODE_PROBA, Scorer, derived
from .._validation import check_csr_indices, csr_arrays, is_sparse, report_nonfinite
from ..stats.category_counts import check_categories
from ..stats.feature_counts import check_binary_values

__all__ = ["LinearTables", "CategoricalTables", "LinearScorer", "CategoricalScorer",
           "LINEAR_SCORER", "CATEGORICAL_SCORER", "score_bounds", "report_negative"]

nb_kernels = kernel_module("nb")
sparse_kernels = kernel_module("sparse")
special_kernels = kernel_module("special")


class LinearTables(NamedTuple):
    """jll_ik = Σ_j a_ij W_jk + b_k, a_ij = [x_ij > threshold] if ``binarize`` else x_ij."""

    weights: np.ndarray  #: W (d, K) float64
    bias: np.ndarray  #: b (K,) float64
    binarize: bool
    threshold: float
    #: X must be binary (Bernoulli with binarize=None): any other value is refused
    binary_input: bool
    #: X must be counts (multinomial, complement): a negative value is refused
    nonneg_input: bool


class CategoricalTables(NamedTuple):
    """jll_ik = b_k + Σ_j T[offsets[j] + x_ij, k]."""

    table: np.ndarray  #: T (Σ_j m_j, K) float64: log p(x_j = c | k), classes contiguous
    offsets: np.ndarray  #: (d + 1,) int64: where each feature's categories start
    bias: np.ndarray  #: b (K,) float64: the class log priors
    n_categories: np.ndarray  #: m (d,) int64: codes of feature j are 0 … m_j − 1


#: Weights up to this size take the float32 table in CSR ``predict`` (far inside
#: float32's range, so no weight rounds to infinity); log-probabilities are never near.
_F32_WEIGHT_MAX = 1e30
# Stored values (plus rows) per work item in CSR scoring.
_SCORE_BLOCK_WORK = 1 << 15


def score_bounds(indptr):
    """Row ranges of CSR scoring: work items of about _SCORE_BLOCK_WORK rows + values."""
    n = indptr.shape[0] - 1
    blocks = max(1, (int(indptr[-1]) + n) // _SCORE_BLOCK_WORK)
    return sparse_kernels.nnz_balanced_bounds(indptr, blocks)


def _report_bad_rows(X):
    """Raise for the rows a CSR scoring kernel reported: a column index outside the
    matrix (the message validation gives), else a NaN/inf."""
    check_csr_indices(X)
    report_nonfinite(X)
    report_negative(X)


def report_negative(X):
    """Raise naming the first negative value of validated X (dense or CSR), if any:
    the multinomial and complement models score counts, as their fit reads them."""
    if is_sparse(X):
        neg = np.flatnonzero(X.data < 0)
        if not neg.size:
            return
        p = int(neg[0])
        row = int(np.searchsorted(X.indptr, p, side="right") - 1)
        col, value = int(X.indices[p]), X.data[p]
    else:
        flat = int(np.argmax(X.reshape(-1) < 0)) if X.size else 0
        if not (X.size and X.reshape(-1)[flat] < 0):
            return
        (row, col), value = divmod(flat, X.shape[1]), X.reshape(-1)[flat]
    raise ValueError(f"X contains the negative value {float(value):g} at row {row}, column "
                     f"{col} (0-based): this model scores counts (non-negative values, as its fit "
                     f"requires); pass counts")


#: scores below this cannot overflow on the way (a sum of terms each below it)
_SCORE_SAFE = 1e300


def _check_scores_overflow(out, mode, b):
    """Raise where the scores of finite X overflowed float64 (or float32).

    The weights of these models are finite and the bias ``b`` finite or −∞ (a zero
    prior), so the joint log-likelihood of finite X is finite, or −∞ in the columns
    of b_k = −∞, unless x·w overflowed; so are the log posteriors, and a posterior
    row sums to one (a row of zeros means every score overflowed to −∞).  One sum
    decides in the common case: finite, and for posteriors within 0.25 of the number
    of rows (a zero row takes 1 from it; rounding, at most n·K·ε, stays far below).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(out, dtype=np.float64))
    n = out.shape[0]
    if mode == MODE_PROBA:
        good = np.isfinite(total) and (abs(total - n) <= 0.25 or float(
            np.min(np.max(out, axis=1), initial=1.0)) > 0)
    elif np.isfinite(total):
        good = True
    else:
        zero_prior = np.isneginf(b)[None, :]
        good = bool(np.all(np.isfinite(out) | (zero_prior & np.isneginf(out))))
    if not good:
        raise ValueError(
            "X has values so large that the class scores (Σ_j x_ij·w_kj) overflow "
            f"{out.dtype}; rescale the features (e.g. divide each row by its sum)")


class LinearScorer(Scorer):
    """Scores from :class:`LinearTables`: dense X by one GEMM, CSR by the linear
    kernels."""

    accepts_sparse = True
    #: the CSR kernel checks stored values as it reads them; dense X is scanned in
    #: scores (binarizing would hide a NaN)
    checks_finite_scores = True
    #: the CSR kernels check each column index before they use it (one comparison per
    #: stored value) and count a row with a bad one as bad: validation skips its own
    #: scan of the indices, a second read of all of them (see check_X)
    checks_csr_indices = True

    @staticmethod
    def _form32(params):
        """A float32 copy of the weights with (max|W|, max|b|), for the CSR argmax;
        None if a weight is beyond float32's range (then the float64 kernel runs)."""
        def make():
            W, b = params.scoring_tables()[1][:2]
            wmax, bmax = sparse_kernels.argmax_f32_bound(W, b)
            if not wmax <= _F32_WEIGHT_MAX:
                return None
            W32 = W.astype(np.float32)
            W32.flags.writeable = False
            return kernel_view(W32), wmax, bmax
        return derived(params, "_scorer_form32", make)

    @staticmethod
    def _score_bound(params):
        """(max_k Σ_j |W_jk|, max_k |b_k|): |jll_ik| ≤ max|x|·the first + the second."""
        def make():
            W, b = params.scoring_tables()[1][:2]
            return float(np.max(np.abs(W).sum(axis=0), initial=0.0)), float(
                np.max(np.abs(b), initial=0.0))
        return derived(params, "_scorer_score_bound", make)

    def _bounded_scores(self, params):
        """True where no score can overflow: binarized (or binary) X has |x| ≤ 1, so
        |jll| ≤ Σ_j |w_kj| + |b_k|, finite for these weights (no check needed)."""
        t = params.scoring_tables()[1]
        if not (t.binarize or t.binary_input):
            return False
        wsum, bmax = self._score_bound(params)
        return wsum + bmax < _SCORE_SAFE

    def predict(self, params, X):
        if not is_sparse(X):
            return super().predict(params, X)
        W, b, binarize, threshold, binary_input, _ = params.scoring_tables()[1]
        if binary_input:
            check_binary_values(X)
        if not self._bounded_scores(params) and X.data.size:
            # the argmax kernels keep no scores: where max|x| could overflow a score,
            # score (which checks) and take the argmax of the scores
            wsum, bmax = self._score_bound(params)
            xmax = max(float(X.data.max()), -float(X.data.min()))
            if not xmax * wsum + bmax < _SCORE_SAFE:
                return params.classes[np.argmax(self.scores(params, X, MODE_JLL), axis=1)]
        indptr, indices, data = _csr_inputs(X, binarize, threshold)
        labels = np.empty(X.shape[0], dtype=np.int64)
        bounds = score_bounds(indptr)
        f32 = self._form32(params)
        if f32 is None:
            bad = sparse_kernels.csr_linear_argmax(indptr, indices, data, W, b, binarize,
                                                   threshold, bounds, labels)
        else:
            # same labels, proved row by row (see the kernel); faster
            # (benchmarks/NOTES.md)
            bad, _ = sparse_kernels.csr_linear_argmax_f32(
                indptr, indices, data, f32[0], W, b, binarize, threshold, f32[1], f32[2],
                bounds, labels)
        if bad:
            _report_bad_rows(X)
        return params.classes[labels]

    def small(self, params, X, mode):
        """The numpy scores of small X, after the kernels' checks of X (binary values,
        NaN/inf, column indices, negative counts) and of the scores (overflow)."""
        from .._small import finish_rows
        from .small import linear_jll  # numpy scores of small X

        W, b, binarize, threshold, binary_input, nonneg_input = params.scoring_tables()[1]
        if binary_input:
            check_binary_values(X)
        if is_sparse(X):
            _csr_inputs(X, binarize, threshold)  # refuses a threshold below 0
            check_csr_indices(X)
        report_nonfinite(X)
        if nonneg_input:
            values = X.data if is_sparse(X) else X
            if values.size and values.min() < 0:
                report_negative(X)
        out = linear_jll(W, b, binarize, threshold, X, params.dtype)
        if not self._bounded_scores(params):
            _check_scores_overflow(out, MODE_JLL, b)
        finish_rows(out, mode)
        return out

    def scores(self, params, X, mode):
        W, b, binarize, threshold, binary_input, nonneg_input = params.scoring_tables()[1]
        n, K = X.shape[0], b.shape[0]
        out = np.empty((n, K), dtype=params.dtype)
        if binary_input:
            check_binary_values(X)
        if is_sparse(X):
            indptr, indices, data = _csr_inputs(X, binarize, threshold)
            if sparse_kernels.csr_linear_scores(indptr, indices, data, W, b, binarize, threshold,
                                                mode, score_bounds(indptr), out):
                _report_bad_rows(X)
            if not self._bounded_scores(params):
                _check_scores_overflow(out, mode, b)
            return out
        report_nonfinite(X)
        if nonneg_input and X.size and X.min() < 0:  # BLAS cannot tell; O(nd)
            report_negative(X)
        A = (X > threshold).astype(X.dtype) if binarize else X
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            np.matmul(A, W.astype(X.dtype, copy=False), out=out)
            out += b.astype(X.dtype, copy=False)
        if not self._bounded_scores(params):
            _check_scores_overflow(out, MODE_JLL, b)
        if mode == MODE_LOG_PROBA:
            return special_kernels.log_normalize_rows(out, out)
        if mode == MODE_PROBA:
            return special_kernels.softmax_rows(out, out)
        return out


def _csr_inputs(X, binarize, threshold):
    if binarize and threshold < 0:
        raise ValueError(
            f"binarize={threshold} < 0 would turn the implicit zeros of sparse X "
            f"into ones; pass a dense array"
        )
    return csr_arrays(X)


class CategoricalScorer(Scorer):
    """Scores from :class:`CategoricalTables`, dense or CSR X of category codes."""

    accepts_sparse = True

    def small(self, params, X, mode):
        from .small import categorical_scores as numpy_scores  # small X: numpy

        return numpy_scores(params, X, mode)

    def scores(self, params, X, mode):
        table, offsets, bias, n_cat = params.scoring_tables()[1]
        check_categories(X, n_cat)
        out = np.empty((X.shape[0], bias.shape[0]), dtype=params.dtype)
        if is_sparse(X):
            indptr, indices, data = csr_arrays(X)
            base = bias + table[offsets[:-1]].sum(axis=0)
            return sparse_kernels.csr_categorical_scores(indptr, indices, data, table, offsets,
                                                         base, mode, score_bounds(indptr), out)
        return nb_kernels.categorical_scores(X, table, offsets, bias, mode, out)


#: The scorer of the Bernoulli, multinomial and complement models.
LINEAR_SCORER = LinearScorer()
#: The scorer of categorical naive Bayes.
CATEGORICAL_SCORER = CategoricalScorer()
