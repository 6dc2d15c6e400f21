"""What every naive Bayes model shares: argument checks, priors, counting, linear scoring.

Imports the shared core only (``fastgen._params``, ``_runtime``, ``_validation``,
``kernels``); the model modules of this package import from here, never the reverse.
The names here are public within the package (its model and counts modules use them);
users reach the models through :mod:`fastgen.naive_bayes`.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .._params import FittedParams, kernel_view
from .._validation import (
    check_csr_indices,
    check_priors,
    check_sample_weight,
    check_scalar,
    check_X,
    check_y,
    csr_arrays,
    is_sparse,
    report_nonfinite,
)
from .._warn import warn
from ..kernels.nb import MODE_LOG_PROBA, MODE_PROBA, dense_class_counts
from ..kernels.sparse import (
    LOGS_BERNOULLI,
    LOGS_NONE,
    argmax_f32_bound,
    count_plan,
    csr_class_tables,
    csr_linear_argmax,
    csr_linear_argmax_f32,
    csr_linear_scores,
    nnz_balanced_bounds,
)
from ..kernels.special import log_normalize_rows, softmax_rows

__all__ = [
    "ALPHA_MIN",
    "AlphaClippedWarning",
    "LinearNB",
    "check_alpha",
    "check_bool",
    "class_feature_counts",
    "fit_inputs",
    "locate_flat",
    "log_allow_zero",
    "log_priors",
    "reject_bad_values",
    "score_bounds",
    "weighted_class_count",
]

ALPHA_MIN = 1e-10

# Work split of the counting reductions: at most _MAX_GROUPS row ranges of at least
# _MIN_GROUP_WORK stored values each, and at most _GROUP_BUFFER_BYTES of (K, d) float64
# partial sums.  These depend on the problem size only, never on the thread count.
_MAX_GROUPS = 8
_MIN_GROUP_WORK = 1 << 17
_GROUP_BUFFER_BYTES = 1 << 26

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


def fit_inputs(X, y, sample_weight, *, allow_sparse, finite=True, csr_counts=False):
    """Validated (X, classes, codes, w) of a fit; w is empty when no weights were given."""
    # csr_counts: the fit runs csr_class_counts, which checks the stored values on its
    # way (see reject_bad_values), so sparse X is not scanned here
    X = check_X(X, allow_sparse=allow_sparse,
                finite=finite and not (csr_counts and is_sparse(X)))
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    return X, classes, codes, w


def weighted_class_count(codes, w, K):
    """(K,) float64 N_k = Σ_{i: y_i=k} w_i (w_i = 1 when ``w`` is empty)."""
    return np.bincount(codes, weights=w if w.shape[0] else None, minlength=K).astype(
        np.float64
    )


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


def _n_groups(work, K, d):
    g = min(_MAX_GROUPS, max(1, work // _MIN_GROUP_WORK))
    cap = max(1, _GROUP_BUFFER_BYTES // (8 * K * d))
    return int(min(g, cap))


def _dense_bounds(n, G):
    return np.array([n * g // G for g in range(G + 1)], dtype=np.int64)


def score_bounds(indptr):
    """Row ranges of CSR scoring: work items of about _SCORE_BLOCK_WORK rows + values."""
    n = indptr.shape[0] - 1
    blocks = max(1, (int(indptr[-1]) + n) // _SCORE_BLOCK_WORK)
    return nnz_balanced_bounds(indptr, blocks)


def locate_flat(X, flat):
    """(row, column) of flat position ``flat`` (dense: i·d + j; CSR: index into data)."""
    if is_sparse(X):
        row = int(np.searchsorted(X.indptr, flat, side="right") - 1)
        return row, int(X.indices[flat])
    return divmod(int(flat), X.shape[1])


def _value_at(X, flat):
    return X.data[flat] if is_sparse(X) else X.reshape(-1)[flat]


def class_feature_counts(X, codes, w, K, *, binarize=False, threshold=0.0, logs=None):
    """(K, d) float64 weighted feature sums and the flat position of a negative value.

    CSR X with ``logs`` (see :func:`~fastgen.kernels.sparse.csr_class_tables`) also
    returns the log tables, from the same pass: ``(counts, log_a, log_b, first)``.
    """
    d = X.shape[1]
    if is_sparse(X):
        indptr, indices, data = csr_arrays(X)
        kind = LOGS_NONE if logs is None else logs[0]
        # fresh tables from numpy, which asks for huge pages (arrays numba allocates get
        # 4 KB pages: a page fault per 4 KB on first touch)
        out = np.empty((K, d))
        log_a = np.empty((K, d) if kind != LOGS_NONE else (0, 0))
        log_b = np.empty((K, d) if kind == LOGS_BERNOULLI else (0, 0))
        first = csr_class_tables(indptr, indices, data, codes, w, bool(binarize),
                                 float(threshold), csr_count_split(X, K),
                                 _NO_LOGS if logs is None else logs, out, log_a, log_b)
        return (out, first) if logs is None else (out, log_a, log_b, first)
    n = X.shape[0]
    G = _n_groups(n * d, K, d)
    return dense_class_counts(X, codes, w, K, bool(binarize), float(threshold),
                              _dense_bounds(n, G))


_NO_LOGS = (LOGS_NONE, 1.0, np.empty((2, 0)), np.empty(0))


def csr_count_split(X, K):
    """The ``split`` of the CSR count kernel for X and K classes (see
    :func:`~fastgen.kernels.sparse.count_plan`): at least one work item per numba
    thread, prefetches sized to X's rows.  None of it changes the counts, so this may
    follow the thread count."""
    import numba

    col_blocks = max(1, min(X.shape[1], -(-numba.get_num_threads() // K)))
    return count_plan(X.nnz, X.shape[0], col_blocks)


def reject_bad_values(X, first, model, *, negative=True):
    """Raise for the value the count kernels flagged at flat position ``first``.

    The CSR kernel flags NaN/inf (not scanned for beforehand) as well as negative
    values: a non-finite stored value is named as :func:`check_X` would name it.
    """
    if first < 0:
        return
    if is_sparse(X):  # dense X was scanned by check_X
        report_nonfinite(X)
    if negative:
        i, j = locate_flat(X, first)
        raise ValueError(
            f"X contains a negative value ({float(_value_at(X, first))!r}) at row {i}, column "
            f"{j}; {model} naive Bayes needs non-negative feature counts"
        )


def _report_bad_rows(X):
    """Raise for the rows a CSR scoring kernel reported: a column index outside the
    matrix (the message validation gives), else a NaN/inf."""
    check_csr_indices(X)
    report_nonfinite(X)


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

    def _predict(self, X):
        if not is_sparse(X):
            return super()._predict(X)
        W, b, binarize, threshold = self._form
        indptr, indices, data = self._csr_inputs(X, binarize, threshold)
        labels = np.empty(X.shape[0], dtype=np.int64)
        bounds = score_bounds(indptr)
        f32 = self._form32
        if f32 is None:
            bad = csr_linear_argmax(indptr, indices, data, W, b, binarize, threshold,
                                    bounds, labels)
        else:
            # same labels, proved row by row (see the kernel); 10-15 % faster on W7
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

    def _scores(self, X, mode):
        W, b, binarize, threshold = self._form
        n, K = X.shape[0], b.shape[0]
        out = np.empty((n, K), dtype=self.dtype)
        if is_sparse(X):
            indptr, indices, data = self._csr_inputs(X, binarize, threshold)
            if csr_linear_scores(indptr, indices, data, W, b, binarize, threshold,
                                 mode, score_bounds(indptr), out):
                _report_bad_rows(X)
            return out
        report_nonfinite(X)
        A = (X > threshold).astype(X.dtype) if binarize else X
        np.matmul(A, W.astype(X.dtype, copy=False), out=out)
        out += b.astype(X.dtype, copy=False)
        if mode == MODE_LOG_PROBA:
            return log_normalize_rows(out, out)
        if mode == MODE_PROBA:
            return softmax_rows(out, out)
        return out

