"""What every naive Bayes model shares: argument checks, priors, counting, linear scoring.

Imports the shared core only (``fastgen._params``, ``_runtime``, ``_validation``,
``kernels``); the model modules of this package import from here, never the reverse.
The names here are public within the package (its model and counts modules use them);
users reach the models through :mod:`fastgen.naive_bayes`.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .._params import FittedParams, kernel_view, log_normalised
from .._validation import (
    check_csr_indices,
    check_priors,
    check_scalar,
    csr_arrays,
    is_sparse,
    report_nonfinite,
)
from .._warn import warn
from ..kernels.nb import MODE_JLL, MODE_LOG_PROBA, MODE_PROBA
from ..kernels.sparse import (
    argmax_f32_bound,
    csr_linear_argmax,
    csr_linear_argmax_f32,
    csr_linear_scores,
    nnz_balanced_bounds,
)
from ..kernels.special import log_normalize_rows, softmax_rows
from ..stats.feature_counts import (  # the counting pass, shared with fastgen.nb_counts
    check_binary_values,
    class_feature_counts,
    fit_inputs,
    locate_flat,
    reject_bad_values,
    weighted_class_count,
)

__all__ = [
    "ALPHA_MIN",
    "AlphaClippedWarning",
    "LinearNB",
    "check_alpha",
    "check_bool",
    "class_feature_counts",
    "fit_inputs",
    "handed_over",
    "locate_flat",
    "log_allow_zero",
    "log_priors",
    "reject_bad_values",
    "score_bounds",
    "weighted_class_count",
]


def handed_over(a):
    """A fresh array no one else holds, made read-only, so that the params object keeps
    it without the defensive copy of
    :meth:`~fastgen._params.FittedParams._check_arrays`."""
    if isinstance(a, np.ndarray):
        a.flags.writeable = False
    return a


ALPHA_MIN = 1e-10

#: Weights up to this size take the float32 table in CSR ``predict`` (far inside
#: float32's range, so no weight rounds to infinity); log-probabilities are never near.
_F32_WEIGHT_MAX = 1e30
# Stored values (plus rows) per work item in CSR scoring.
_SCORE_BLOCK_WORK = 1 << 15


class AlphaClippedWarning(UserWarning):
    """``alpha`` was below 1e-10 and has been clipped to 1e-10."""


def check_alpha(alpha) -> float:
    """``alpha`` as a float >= 0, clipped to :data:`ALPHA_MIN` with a warning."""
    a = check_scalar(alpha, "alpha", low=0.0)
    if a < ALPHA_MIN:
        warn(
            f"alpha={alpha!r} is below {ALPHA_MIN:.0e} and would give log(0) for unseen "
            f"features; clipping alpha to {ALPHA_MIN:.0e}",
            AlphaClippedWarning,
        )
        a = ALPHA_MIN
    return a


def check_bool(value, name) -> bool:
    """``value`` as a bool; anything but True/False is a ValueError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def log_allow_zero(a):
    """log(a) with log(0) = −∞ and no divide warning."""
    with np.errstate(divide="ignore"):
        return np.log(a)


def log_priors(class_count, fit_prior, class_prior, classes=None):
    """log π_k: from ``class_prior`` if given (a sequence, or a mapping from the labels
    ``classes``), else N_k / Σ N_k (``fit_prior``) or 1/K."""
    K = class_count.shape[0]
    p = check_priors(class_prior, K if classes is None else classes, name="class_prior")
    if p is not None:
        return log_allow_zero(p)
    if fit_prior:
        return log_allow_zero(class_count) - np.log(class_count.sum())
    return np.full(K, -np.log(K))


def score_bounds(indptr):
    """Row ranges of CSR scoring: work items of about _SCORE_BLOCK_WORK rows + values."""
    n = indptr.shape[0] - 1
    blocks = max(1, (int(indptr[-1]) + n) // _SCORE_BLOCK_WORK)
    return nnz_balanced_bounds(indptr, blocks)


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
                     f"{col}: this model scores counts (non-negative values, as its fit "
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


class LinearNB(FittedParams):
    """Models whose joint log-likelihood is linear in (possibly binarized) features."""

    accepts_sparse = True
    #: the CSR kernel checks stored values as it reads them; dense X is scanned in
    #: _scores (binarizing would hide a NaN)
    checks_finite_scores = True
    #: the CSR kernels check each column index before they use it (one comparison per
    #: stored value) and count a row with a bad one as bad: validation skips its own
    #: scan of the indices, a second read of all of them (see check_X)
    checks_csr_indices = True
    _feature_table = "feature_log_prob"

    def _check_counts_and_tables(self, check, weights="log"):
        """The fields the count models share: N_k (K,), the feature counts (K, d),
        log π_k and the (K, d) table of ``weights`` ("log": log-probabilities, or
        "finite"), and α; returns the table's dtype."""
        dt = check.table("feature_log_prob", weights).dtype
        check.array("class_count", ("K",), "float", "nonneg")
        check.array("feature_count", ("K", "d"), "float", "nonneg")
        check.array("class_log_prior", ("K",), "float", "log")
        check.real("alpha", low=0.0)
        return dt

    def _check_derived(self, check):
        """The class log-priors are a distribution; each model adds its tables."""
        log_normalised(check, "class_log_prior", self.class_log_prior, 0, self.dtype)

    # (d, K) float64 weights, (K,) float64 bias, binarize flag, threshold
    def _linear_form(self):  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    @cached_property
    def _form(self):
        W, b, binarize, threshold = self._linear_form()
        W, b = kernel_view(np.ascontiguousarray(W, dtype=np.float64),
                           np.ascontiguousarray(b, dtype=np.float64))
        return W, b, bool(binarize), float(threshold)

    @cached_property
    def _form32(self):
        """A float32 copy of the weights with (max|W|, max|b|), for the CSR argmax;
        None if a weight is beyond float32's range (then the float64 kernel runs)."""
        W, b, _, _ = self._form
        wmax, bmax = argmax_f32_bound(W, b)
        if not wmax <= _F32_WEIGHT_MAX:
            return None
        W32 = W.astype(np.float32)
        W32.flags.writeable = False
        return kernel_view(W32), wmax, bmax

    @cached_property
    def _bounded_scores(self):
        """True where no score can overflow: binarized (or binary) X has |x| ≤ 1, so
        |jll| ≤ Σ_j |w_kj| + |b_k|, finite for these weights (no check needed)."""
        W, b, binarize, _ = self._form
        if not (binarize or self._binary_input):
            return False
        wsum, bmax = self._score_bound
        return wsum + bmax < _SCORE_SAFE

    @cached_property
    def _score_bound(self):
        """(max_k Σ_j |W_jk|, max_k |b_k|): |jll_ik| ≤ max|x|·the first + the second."""
        W, b, _, _ = self._form
        return float(np.max(np.abs(W).sum(axis=0), initial=0.0)), float(
            np.max(np.abs(b), initial=0.0))

    def _predict(self, X):
        if not is_sparse(X):
            return super()._predict(X)
        W, b, binarize, threshold = self._form
        if self._binary_input:
            check_binary_values(X)
        if not self._bounded_scores and X.data.size:
            # the argmax kernels keep no scores: where max|x| could overflow a score,
            # score (which checks) and take the argmax of the scores
            wsum, bmax = self._score_bound
            xmax = max(float(X.data.max()), -float(X.data.min()))
            if not xmax * wsum + bmax < _SCORE_SAFE:
                return self.classes[np.argmax(self._scores(X, MODE_JLL), axis=1)]
        indptr, indices, data = self._csr_inputs(X, binarize, threshold)
        labels = np.empty(X.shape[0], dtype=np.int64)
        bounds = score_bounds(indptr)
        f32 = self._form32
        if f32 is None:
            bad = csr_linear_argmax(indptr, indices, data, W, b, binarize, threshold,
                                    bounds, labels)
        else:
            # same labels, proved row by row (see the kernel); faster
            # (benchmarks/NOTES.md)
            bad, _ = csr_linear_argmax_f32(indptr, indices, data, f32[0], W, b, binarize,
                                           threshold, f32[1], f32[2], bounds, labels)
        if bad:
            _report_bad_rows(X)
        return self.classes[labels]

    @staticmethod
    def _csr_inputs(X, binarize, threshold):
        if binarize and threshold < 0:
            raise ValueError(
                f"binarize={threshold} < 0 would turn the implicit zeros of sparse X "
                f"into ones; pass a dense array"
            )
        return csr_arrays(X)

    #: True where the model reads X as binary without a threshold (Bernoulli with
    #: binarize=None): scoring then refuses any other value, as the fit does
    _binary_input = False
    #: True where the model scores counts (multinomial, complement): scoring refuses a
    #: negative value, as the fit does (the CSR kernel keeps a running minimum)
    _nonneg_input = False

    def _scores(self, X, mode):
        W, b, binarize, threshold = self._form
        n, K = X.shape[0], b.shape[0]
        out = np.empty((n, K), dtype=self.dtype)
        if self._binary_input:
            check_binary_values(X)
        if is_sparse(X):
            indptr, indices, data = self._csr_inputs(X, binarize, threshold)
            if csr_linear_scores(indptr, indices, data, W, b, binarize, threshold,
                                 mode, score_bounds(indptr), out):
                _report_bad_rows(X)
            if not self._bounded_scores:
                _check_scores_overflow(out, mode, b)
            return out
        report_nonfinite(X)
        if self._nonneg_input and X.size and X.min() < 0:  # BLAS cannot tell; O(nd)
            report_negative(X)
        A = (X > threshold).astype(X.dtype) if binarize else X
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            np.matmul(A, W.astype(X.dtype, copy=False), out=out)
            out += b.astype(X.dtype, copy=False)
        if not self._bounded_scores:
            _check_scores_overflow(out, MODE_JLL, b)
        if mode == MODE_LOG_PROBA:
            return log_normalize_rows(out, out)
        if mode == MODE_PROBA:
            return softmax_rows(out, out)
        return out

