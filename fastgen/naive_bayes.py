"""Naive Bayes: Gaussian, Bernoulli, multinomial, complement and categorical models.

Every ``fit_*`` function validates its input once, runs one counting kernel over the
data (reading each stored value once, dense or CSR) and returns a frozen params
dataclass whose vocabulary follows scikit-learn (``classes``, ``class_count``,
``class_log_prior``, ``feature_count``, ``feature_log_prob``, ...).  The scoring
functions of :mod:`fastgen.scoring` accept all of them; the Bernoulli, multinomial,
complement and categorical models score scipy CSR input without densifying it.

Smoothing: ``alpha = 1`` is Laplace smoothing (a feature never seen with a class in
training still gets a finite log-probability), ``0 < alpha < 1`` Lidstone smoothing.
``alpha`` below 1e-10 (including 0) is clipped to 1e-10 with an
:class:`AlphaClippedWarning`, as scikit-learn does with ``force_alpha=False``.

float32 data gives float32 parameters and float32 scores; counts are accumulated in
float64 and kept in float64.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._params import FittedParams, register_params
from ._threads import serial_for_small_inputs, ufunc_inplace
from ._validation import (
    check_finite_result,
    check_priors,
    check_sample_weight,
    check_scalar,
    check_X,
    check_y,
    csr_arrays,
    is_sparse,
    report_nonfinite,
)
from .kernels.nb import (
    MODE_LOG_PROBA,
    MODE_PROBA,
    categorical_counts,
    categorical_scores,
    dense_class_counts,
    gaussian_nb_scores,
)
from .kernels.sparse import (
    COUNT_CHUNK_NNZ,
    csr_categorical_counts,
    csr_categorical_scores,
    csr_class_counts,
    csr_linear_argmax,
    csr_linear_scores,
    nnz_balanced_bounds,
)
from .kernels.special import log_normalize_rows, softmax_rows

__all__ = [
    "AlphaClippedWarning",
    "GaussianNBParams",
    "BernoulliNBParams",
    "MultinomialNBParams",
    "ComplementNBParams",
    "CategoricalNBParams",
    "fit_gaussian_nb",
    "fit_bernoulli_nb",
    "fit_multinomial_nb",
    "fit_complement_nb",
    "fit_categorical_nb",
    "gaussian_nb_from_moments",
    "bernoulli_nb_from_counts",
    "multinomial_nb_from_counts",
    "complement_nb_from_counts",
    "categorical_nb_from_counts",
]

#: Smallest alpha used; smaller values (0 included) are clipped to it with a warning.
ALPHA_MIN = 1e-10

# Work split of the counting reductions: at most _MAX_GROUPS row ranges of at least
# _MIN_GROUP_WORK stored values each, and at most _GROUP_BUFFER_BYTES of (K, d) float64
# partial sums.  These depend on the problem size only, never on the thread count.
_MAX_GROUPS = 8
_MIN_GROUP_WORK = 1 << 17
_GROUP_BUFFER_BYTES = 1 << 26
# Stored values (plus rows) per work item in CSR scoring.
_SCORE_BLOCK_WORK = 1 << 15


class AlphaClippedWarning(UserWarning):
    """``alpha`` was below 1e-10 and has been clipped to 1e-10."""


# --------------------------------------------------------------------------- helpers


def _check_alpha(alpha) -> float:
    a = check_scalar(alpha, "alpha", low=0.0)
    if a < ALPHA_MIN:
        warnings.warn(
            f"alpha={alpha!r} is below {ALPHA_MIN:.0e} and would give log(0) for unseen "
            f"features; clipping alpha to {ALPHA_MIN:.0e}",
            AlphaClippedWarning,
            stacklevel=3,
        )
        a = ALPHA_MIN
    return a


def _check_bool(value, name) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def _fit_inputs(X, y, sample_weight, *, allow_sparse, finite=True, csr_counts=False):
    # csr_counts: the fit runs csr_class_counts, which checks the stored values on its
    # way (see _reject_bad_values), so sparse X is not scanned here
    X = check_X(X, allow_sparse=allow_sparse,
                finite=finite and not (csr_counts and is_sparse(X)))
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    return X, classes, codes, w


def _class_count(codes, w, K):
    return np.bincount(codes, weights=w if w.shape[0] else None, minlength=K).astype(
        np.float64
    )


def _log(a):
    with np.errstate(divide="ignore"):
        return np.log(a)


def _class_log_prior(class_count, fit_prior, class_prior):
    K = class_count.shape[0]
    p = check_priors(class_prior, K, name="class_prior")
    if p is not None:
        return _log(p)
    if fit_prior:
        return _log(class_count) - np.log(class_count.sum())
    return np.full(K, -np.log(K))


def _n_groups(work, K, d):
    g = min(_MAX_GROUPS, max(1, work // _MIN_GROUP_WORK))
    cap = max(1, _GROUP_BUFFER_BYTES // (8 * K * d))
    return int(min(g, cap))


def _dense_bounds(n, G):
    return np.array([n * g // G for g in range(G + 1)], dtype=np.int64)


def _score_bounds(indptr):
    n = indptr.shape[0] - 1
    blocks = max(1, (int(indptr[-1]) + n) // _SCORE_BLOCK_WORK)
    return nnz_balanced_bounds(indptr, blocks)


def _locate(X, flat):
    """(row, column) of flat position ``flat`` (dense: i·d + j; CSR: index into data)."""
    if is_sparse(X):
        row = int(np.searchsorted(X.indptr, flat, side="right") - 1)
        return row, int(X.indices[flat])
    return divmod(int(flat), X.shape[1])


def _value_at(X, flat):
    return X.data[flat] if is_sparse(X) else X.reshape(-1)[flat]


def _feature_counts(X, codes, w, K, *, binarize=False, threshold=0.0):
    """(K, d) float64 weighted feature sums and the flat position of a negative value."""
    d = X.shape[1]
    if is_sparse(X):
        indptr, indices, data = csr_arrays(X)
        # pieces of >= COUNT_CHUNK_NNZ stored values, at most ~64 of them
        chunk = max(COUNT_CHUNK_NNZ, data.shape[0] // 64)
        return csr_class_counts(indptr, indices, data, codes, w, d, K, bool(binarize),
                                float(threshold), chunk)
    n = X.shape[0]
    G = _n_groups(n * d, K, d)
    return dense_class_counts(X, codes, w, K, bool(binarize), float(threshold),
                              _dense_bounds(n, G))


def _reject_bad_values(X, first, model, *, negative=True):
    """Raise for the value the count kernels flagged at flat position ``first``.

    The CSR kernel flags NaN/inf (not scanned for beforehand) as well as negative
    values: a non-finite stored value is named as :func:`check_X` would name it.
    """
    if first < 0:
        return
    if is_sparse(X):  # dense X was scanned by check_X
        report_nonfinite(X)
    if negative:
        i, j = _locate(X, first)
        raise ValueError(
            f"X contains a negative value ({float(_value_at(X, first))!r}) at row {i}, column "
            f"{j}; {model} naive Bayes needs non-negative feature counts"
        )


class _LinearNB(FittedParams):
    """Models whose joint log-likelihood is linear in (possibly binarized) features."""

    accepts_sparse = True
    #: the CSR kernel checks stored values as it reads them; dense X is scanned in
    #: _scores (binarizing would hide a NaN)
    checks_finite_scores = True

    @property
    def n_features_in(self) -> int:
        return int(self.feature_log_prob.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return self.feature_log_prob.dtype

    # (d, K) float64 weights, (K,) float64 bias, binarize flag, threshold
    def _linear_form(self):  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    @cached_property
    def _form(self):
        W, b, binarize, threshold = self._linear_form()
        return np.ascontiguousarray(W, dtype=np.float64), np.ascontiguousarray(
            b, dtype=np.float64), bool(binarize), float(threshold)

    def _predict(self, X):
        if not is_sparse(X):
            return super()._predict(X)
        W, b, binarize, threshold = self._form
        indptr, indices, data = self._csr_inputs(X, binarize, threshold)
        labels = np.empty(X.shape[0], dtype=np.int64)
        if csr_linear_argmax(indptr, indices, data, W, b, binarize, threshold,
                             _score_bounds(indptr), labels):
            report_nonfinite(X)
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
                                 mode, _score_bounds(indptr), out):
                report_nonfinite(X)
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


# --------------------------------------------------------------------------- Gaussian


@register_params
@dataclass(frozen=True)
class GaussianNBParams(FittedParams):
    """Gaussian naive Bayes: x_j | y=k ~ N(μ_kj, σ²_kj), features independent.

    Attributes
    ----------
    classes : (K,) original labels
    class_count : (K,) float64 weighted number of samples per class
    class_log_prior : (K,) log π_k (float64)
    means : (K, d) μ_kj
    variances : (K, d) σ²_kj = (1/N_k) Σ_{i: y_i=k} w_i (x_ij − μ_kj)² + ε
    epsilon : float
        ε = var_smoothing · max_j Var(x_j), the variance of each feature over all rows
        (unweighted), as scikit-learn.
    var_smoothing : float
    """

    #: NaN/inf in X is found through the scores (no separate scan of X)
    checks_finite_scores = True

    classes: np.ndarray
    class_count: np.ndarray
    class_log_prior: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    epsilon: float
    var_smoothing: float

    accepts_sparse = False

    def __post_init__(self):
        self._check_arrays()

    @property
    def n_features_in(self) -> int:
        return int(self.means.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return self.means.dtype

    @cached_property
    def _tables(self):
        var = self.variances.astype(np.float64)
        means = np.ascontiguousarray(self.means, dtype=np.float64)
        const = self.class_log_prior.astype(np.float64) - 0.5 * np.sum(
            np.log(2.0 * np.pi * var), axis=1
        )
        return means, np.ascontiguousarray(1.0 / var), const

    def _scores(self, X, mode):
        means, inv_var, const = self._tables
        out = np.empty((X.shape[0], const.shape[0]), dtype=self.dtype)
        if gaussian_nb_scores(X, means, inv_var, const, mode, out):
            check_finite_result(X, np.array([np.nan]))  # names the bad entry of X
        return out


@serial_for_small_inputs(0)
def fit_gaussian_nb(X, y, *, priors=None, var_smoothing=1e-9, sample_weight=None):
    """Fit Gaussian naive Bayes.

    For each class k and feature j, with weights w_i (1 if not given)::

        N_k = Σ_{i: y_i=k} w_i,     μ_kj = (1/N_k) Σ_{i: y_i=k} w_i x_ij,
        σ²_kj = (1/N_k) Σ_{i: y_i=k} w_i (x_ij − μ_kj)² + ε,
        ε = var_smoothing · max_j Var(x_j)   (unweighted variance over all rows),
        π_k = N_k / Σ_k N_k   unless ``priors`` is given.

    The class moments come from the same one-pass kernel as
    ``fit_gda(covariance="diagonal")`` (shifted sums per group of rows and class,
    merged pairwise: the variances keep their digits when |μ| ≫ σ, and the result is
    the same for any number of threads).  Var(x_j) over all rows follows exactly from
    merging the class moments; with sample weights, scikit-learn's unweighted variance
    takes one more pass.

    Parameters
    ----------
    X : array-like (n, d)
        Dense real data; float32 stays float32.
    y : array-like (n,)
        Class labels.
    priors : array-like (K,), optional
        Class prior probabilities (non-negative, summing to 1).
    var_smoothing : float, default 1e-9
        Fraction of the largest feature variance added to every variance.
    sample_weight : array-like (n,), optional

    Returns
    -------
    GaussianNBParams
    """
    from .moments import ClassMoments, moments_arrays

    # finiteness is checked through the moments (NaN/inf make them non-finite): no
    # separate pass over X
    X, classes, codes, w = _fit_inputs(X, y, sample_weight, allow_sparse=False,
                                       finite=False)
    var_smoothing = check_scalar(var_smoothing, "var_smoothing", low=0.0)
    K = classes.shape[0]
    check_priors(priors, K)
    W, means, scatter = moments_arrays(X, codes, w, K, "diagonal")
    check_finite_result(X, means, scatter)  # NaN/inf in X, or squares that overflow
    moments = ClassMoments(classes, W, means, scatter, "diagonal", str(X.dtype))
    feature_variance = None  # unweighted: the total variance implied by the moments
    if w.shape[0]:
        n = X.shape[0]
        _, _, m2 = moments_arrays(X, np.zeros(n, np.int32), np.empty(0), 1, "diagonal")
        feature_variance = m2[0] / n
    return gaussian_nb_from_moments(moments, priors=priors, var_smoothing=var_smoothing,
                                    feature_variance=feature_variance)


# --------------------------------------------------------------------------- Bernoulli


@register_params
@dataclass(frozen=True)
class BernoulliNBParams(_LinearNB):
    """Bernoulli naive Bayes (McCallum & Nigam 1998) on binary features.

    Attributes
    ----------
    classes : (K,)
    class_count : (K,) float64 N_k
    feature_count : (K, d) float64 F_kj, weighted number of class-k rows with x_j = 1
    class_log_prior : (K,) float64 log π_k
    feature_log_prob : (K, d) log p_kj = log(F_kj + α) − log(N_k + 2α)
    neg_feature_log_prob : (K, d) log(1 − p_kj) = log(N_k − F_kj + α) − log(N_k + 2α)
    alpha : float
    binarize : float or None
        Threshold applied to X at fit and predict time (x > binarize means 1); None
        takes X as already binary.

    Scores: jll_ik = log π_k + Σ_j log(1 − p_kj) + Σ_{j: x_ij=1} (log p_kj − log(1 − p_kj)),
    the middle sum precomputed per class so that absent features cost nothing.
    """

    classes: np.ndarray
    class_count: np.ndarray
    feature_count: np.ndarray
    class_log_prior: np.ndarray
    feature_log_prob: np.ndarray
    neg_feature_log_prob: np.ndarray
    alpha: float
    binarize: float | None

    def __post_init__(self):
        self._check_arrays()

    def _linear_form(self):
        flp = self.feature_log_prob.astype(np.float64)
        neg = self.neg_feature_log_prob.astype(np.float64)
        W = (flp - neg).T
        b = self.class_log_prior + neg.sum(axis=1)
        binarize = self.binarize is not None
        return W, b, binarize, self.binarize if binarize else 0.0


@serial_for_small_inputs(0)
def fit_bernoulli_nb(X, y, *, alpha=1.0, binarize=0.0, fit_prior=True, class_prior=None,
                     sample_weight=None):
    """Fit Bernoulli naive Bayes.

    With b_ij = [x_ij > binarize] (or x_ij itself when ``binarize`` is None)::

        N_k = Σ_{i: y_i=k} w_i,   F_kj = Σ_{i: y_i=k} w_i b_ij,
        p_kj = (F_kj + α) / (N_k + 2α),
        log(1 − p_kj) = log(N_k − F_kj + α) − log(N_k + 2α),

    the last taken from the counts rather than as log(1 − exp(log p)), which loses
    digits as p → 1.  X is binarized on the fly and never modified.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR matrix/array
    y : array-like (n,)
    alpha : float, default 1.0
        Additive smoothing: 1 is Laplace, below 1 Lidstone; < 1e-10 is clipped.
    binarize : float or None, default 0.0
        Threshold for binarizing X (must be >= 0 for sparse X); None if X is binary.
    fit_prior : bool, default True
        Learn class priors from the (weighted) class counts; False gives uniform priors.
    class_prior : array-like (K,), optional
        Fixed class priors (non-negative, summing to 1); overrides ``fit_prior``.
    sample_weight : array-like (n,), optional

    Returns
    -------
    BernoulliNBParams
    """
    X, classes, codes, w = _fit_inputs(X, y, sample_weight, allow_sparse=True,
                                         csr_counts=True)
    alpha = _check_alpha(alpha)
    fit_prior = _check_bool(fit_prior, "fit_prior")
    if binarize is not None:
        binarize = check_scalar(binarize, "binarize")
        if is_sparse(X) and binarize < 0:
            raise ValueError(
                f"binarize={binarize} < 0 would turn the implicit zeros of sparse X into "
                f"ones; use binarize >= 0 or pass a dense array"
            )
    K = classes.shape[0]
    fc, bad = _feature_counts(X, codes, w, K, binarize=binarize is not None,
                              threshold=binarize if binarize is not None else 0.0)
    # NaN/inf in CSR X; negative values with binarize=None fail the binary check below
    _reject_bad_values(X, bad, "Bernoulli", negative=False)
    cc = _class_count(codes, w, K)
    return _bernoulli_from_counts(classes, cc, fc, alpha, binarize, fit_prior, class_prior,
                                  X.dtype)


def _bernoulli_from_counts(classes, cc, fc, alpha, binarize, fit_prior, class_prior, dtype):
    clp = _class_log_prior(cc, fit_prior, class_prior)
    if binarize is None and np.any(cc[:, None] - fc + alpha <= 0):
        raise ValueError(
            "binarize=None needs binary features (0 or 1), but the feature counts of X "
            "exceed the class counts; pass a binarize threshold"
        )
    log_denom = _log(cc + 2.0 * alpha)[:, None]
    # in place: each (K, d) temporary is a full pass over a table as large as X's rows
    flp = ufunc_inplace(np.log, np.add(fc, alpha))
    flp -= log_denom
    neg = np.subtract(cc[:, None], fc)  # N_k − F_kj first: exact for counts near N_k
    neg += alpha
    ufunc_inplace(np.log, neg)
    neg -= log_denom
    return BernoulliNBParams(
        classes=classes,
        class_count=cc,
        feature_count=fc,
        class_log_prior=clp,
        feature_log_prob=flp.astype(dtype, copy=False),
        neg_feature_log_prob=neg.astype(dtype, copy=False),
        alpha=alpha,
        binarize=binarize,
    )


# ------------------------------------------------------------------------- multinomial


@register_params
@dataclass(frozen=True)
class MultinomialNBParams(_LinearNB):
    """Multinomial naive Bayes on feature counts.

    Attributes
    ----------
    classes : (K,)
    class_count : (K,) float64 N_k
    feature_count : (K, d) float64 N_kj = Σ_{i: y_i=k} w_i x_ij
    class_log_prior : (K,) float64 log π_k
    feature_log_prob : (K, d) log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d)
    alpha : float

    Scores: jll_ik = log π_k + Σ_j x_ij log θ_kj.
    """

    classes: np.ndarray
    class_count: np.ndarray
    feature_count: np.ndarray
    class_log_prior: np.ndarray
    feature_log_prob: np.ndarray
    alpha: float

    def __post_init__(self):
        self._check_arrays()

    def _linear_form(self):
        return self.feature_log_prob.T, self.class_log_prior, False, 0.0


@serial_for_small_inputs(0)
def fit_multinomial_nb(X, y, *, alpha=1.0, fit_prior=True, class_prior=None,
                       sample_weight=None):
    """Fit multinomial naive Bayes.

    ::

        N_kj = Σ_{i: y_i=k} w_i x_ij,
        log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d),
        log π_k = log N_k − log Σ_k N_k   (``fit_prior``), or fixed / uniform.

    The counts take one parallel pass over the stored values (dense or CSR), with
    per-range (K, d) buffers merged in a fixed order.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR matrix/array
        Non-negative feature counts (a negative value is an error).
    y : array-like (n,)
    alpha : float, default 1.0
        Additive smoothing: 1 is Laplace, below 1 Lidstone; < 1e-10 is clipped.
    fit_prior : bool, default True
    class_prior : array-like (K,), optional
    sample_weight : array-like (n,), optional

    Returns
    -------
    MultinomialNBParams
    """
    X, classes, codes, w = _fit_inputs(X, y, sample_weight, allow_sparse=True,
                                         csr_counts=True)
    alpha = _check_alpha(alpha)
    fit_prior = _check_bool(fit_prior, "fit_prior")
    K = classes.shape[0]
    fc, neg = _feature_counts(X, codes, w, K)
    _reject_bad_values(X, neg, "multinomial")
    cc = _class_count(codes, w, K)
    return _multinomial_from_counts(classes, cc, fc, alpha, fit_prior, class_prior, X.dtype)


def _multinomial_from_counts(classes, cc, fc, alpha, fit_prior, class_prior, dtype):
    clp = _class_log_prior(cc, fit_prior, class_prior)
    flp = np.add(fc, alpha)  # smoothed counts, then their logs in place
    log_total = np.log(flp.sum(axis=1))[:, None]
    ufunc_inplace(np.log, flp)
    flp -= log_total
    return MultinomialNBParams(
        classes=classes,
        class_count=cc,
        feature_count=fc,
        class_log_prior=clp,
        feature_log_prob=flp.astype(dtype, copy=False),
        alpha=alpha,
    )


# -------------------------------------------------------------------------- complement


@register_params
@dataclass(frozen=True)
class ComplementNBParams(_LinearNB):
    """Complement naive Bayes (Rennie et al. 2003), as scikit-learn scores it.

    Attributes
    ----------
    classes : (K,)
    class_count : (K,) float64
    feature_count : (K, d) float64 N_kj
    feature_all : (d,) float64 Σ_k N_kj
    class_log_prior : (K,) float64, used in the scores only when K = 1
    feature_log_prob : (K, d) weights w_kj: with c_kj = Σ_k' N_k'j − N_kj + α and
        ℓ_kj = log(c_kj / Σ_j c_kj), w_kj = −ℓ_kj, or ℓ_kj / Σ_j ℓ_kj if ``norm``
    alpha : float
    norm : bool

    Scores: jll_ik = Σ_j x_ij w_kj (argmax is the prediction).
    """

    classes: np.ndarray
    class_count: np.ndarray
    feature_count: np.ndarray
    feature_all: np.ndarray
    class_log_prior: np.ndarray
    feature_log_prob: np.ndarray
    alpha: float
    norm: bool

    def __post_init__(self):
        self._check_arrays()

    def _linear_form(self):
        K = self.class_log_prior.shape[0]
        b = self.class_log_prior if K == 1 else np.zeros(K)
        return self.feature_log_prob.T, b, False, 0.0


@serial_for_small_inputs(0)
def fit_complement_nb(X, y, *, alpha=1.0, norm=False, sample_weight=None):
    """Fit complement naive Bayes.

    ::

        c_kj = Σ_k' N_k'j + α − N_kj,     ℓ_kj = log(c_kj / Σ_j c_kj),
        w_kj = −ℓ_kj,  or with ``norm``  w_kj = ℓ_kj / Σ_j ℓ_kj.

    Class priors are the empirical ones and enter the scores only when there is a
    single class, as in scikit-learn.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR matrix/array
        Non-negative feature counts.
    y : array-like (n,)
    alpha : float, default 1.0
    norm : bool, default False
        Second normalisation of the weights (Rennie et al. §3.3).
    sample_weight : array-like (n,), optional

    Returns
    -------
    ComplementNBParams
    """
    X, classes, codes, w = _fit_inputs(X, y, sample_weight, allow_sparse=True,
                                         csr_counts=True)
    alpha = _check_alpha(alpha)
    norm = _check_bool(norm, "norm")
    K = classes.shape[0]
    fc, neg = _feature_counts(X, codes, w, K)
    _reject_bad_values(X, neg, "complement")
    cc = _class_count(codes, w, K)
    return _complement_from_counts(classes, cc, fc, alpha, norm, True, None, X.dtype)


def _complement_from_counts(classes, cc, fc, alpha, norm, fit_prior, class_prior, dtype):
    clp = _class_log_prior(cc, fit_prior, class_prior)
    feature_all = fc.sum(axis=0)
    comp = feature_all + alpha - fc
    logged = np.log(comp / comp.sum(axis=1, keepdims=True))
    flp = logged / logged.sum(axis=1, keepdims=True) if norm else -logged
    return ComplementNBParams(
        classes=classes,
        class_count=cc,
        feature_count=fc,
        feature_all=feature_all,
        class_log_prior=clp,
        feature_log_prob=flp.astype(dtype),
        alpha=alpha,
        norm=norm,
    )


# ------------------------------------------------------------------------- categorical


def _check_categories(X, n_categories=None):
    """Raise unless every value of X is a non-negative integer (< n_categories[j])."""
    if is_sparse(X):
        vals, cols = X.data, X.indices
    else:
        vals, cols = X.reshape(-1), None
    if vals.size == 0:
        return
    bad = (vals < 0) | (vals != np.floor(vals))
    if n_categories is not None:
        limit = n_categories[cols] if cols is not None else np.tile(n_categories,
                                                                     X.shape[0])
        bad |= vals >= limit
    if not bad.any():
        return
    flat = int(np.argmax(bad))
    i, j = _locate(X, flat)
    v = vals[flat]
    if v < 0 or v != np.floor(v):
        kind = "a negative" if v < 0 else "a non-integer"
        raise ValueError(
            f"X contains {kind} category code ({float(v)!r}) at row {i}, column {j}; categorical "
            f"naive Bayes needs integer codes 0, 1, 2, ... (e.g. from an ordinal encoder)"
        )
    raise ValueError(
        f"X has category {int(v)} at row {i}, column {j}, but feature {j} was fitted with "
        f"{int(n_categories[j])} categories (0..{int(n_categories[j]) - 1}); refit with "
        f"min_categories covering it"
    )


def _check_min_categories(min_categories, d):
    if min_categories is None:
        return None
    m = np.asarray(min_categories)
    if m.dtype.kind not in "iu":
        raise ValueError(f"min_categories must be integers; got dtype {m.dtype}")
    if m.ndim == 0:
        m = np.full(d, int(m))
    if m.shape != (d,):
        raise ValueError(
            f"min_categories must be an int or have shape ({d},), one per feature; got "
            f"shape {m.shape}"
        )
    if np.any(m < 0):
        raise ValueError("min_categories must be non-negative")
    return m.astype(np.int64)


@register_params
@dataclass(frozen=True)
class CategoricalNBParams(FittedParams):
    """Categorical naive Bayes on integer category codes (implicit CSR zeros are category 0).

    The per-feature tables are stored flat: feature j's categories are columns
    ``offsets[j]:offsets[j + 1]`` of ``category_count`` and ``feature_log_prob``.

    Attributes
    ----------
    classes : (K,)
    class_count : (K,) float64 N_k
    category_count : (K, C) float64 N_kjc, C = Σ_j n_categories[j]
    class_log_prior : (K,) float64
    feature_log_prob : (K, C) log p(x_j = c | k) = log(N_kjc + α) − log(N_k' + α·m_j),
        N_k' = Σ_c N_kjc and m_j the number of categories of feature j
    n_categories : (d,) int64
    offsets : (d + 1,) int64
    alpha : float
    """

    classes: np.ndarray
    class_count: np.ndarray
    category_count: np.ndarray
    class_log_prior: np.ndarray
    feature_log_prob: np.ndarray
    n_categories: np.ndarray
    offsets: np.ndarray
    alpha: float

    accepts_sparse = True

    def __post_init__(self):
        self._check_arrays()

    @property
    def n_features_in(self) -> int:
        return int(self.n_categories.shape[0])

    @property
    def dtype(self) -> np.dtype:
        return self.feature_log_prob.dtype

    @cached_property
    def _table(self):
        return np.ascontiguousarray(self.feature_log_prob.T, dtype=np.float64)

    def _scores(self, X, mode):
        _check_categories(X, self.n_categories)
        table = self._table
        bias = self.class_log_prior.astype(np.float64)
        out = np.empty((X.shape[0], bias.shape[0]), dtype=self.dtype)
        if is_sparse(X):
            indptr, indices, data = csr_arrays(X)
            base = bias + table[self.offsets[:-1]].sum(axis=0)
            return csr_categorical_scores(indptr, indices, data, table, self.offsets, base,
                                          mode, _score_bounds(indptr), out)
        return categorical_scores(X, table, self.offsets, bias, mode, out)


@serial_for_small_inputs(0)
def fit_categorical_nb(X, y, *, alpha=1.0, min_categories=None, sample_weight=None):
    """Fit categorical naive Bayes.

    Feature j takes categories 0 … m_j − 1 with m_j = max(max_i x_ij + 1,
    min_categories[j]); then::

        N_kjc = Σ_{i: y_i=k, x_ij=c} w_i,
        log p(x_j = c | y = k) = log(N_kjc + α) − log(Σ_c N_kjc + α·m_j),
        log π_k = log N_k − log Σ_k N_k.

    CSR input is accepted (scikit-learn documents but rejects it): implicit zeros are
    category 0, and their count is N_k minus the counts of the stored categories.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR matrix/array
        Non-negative integer category codes (floats holding integers are fine).
    y : array-like (n,)
    alpha : float, default 1.0
    min_categories : int or array-like (d,) of int, optional
        Minimum number of categories per feature, for categories absent in training.
    sample_weight : array-like (n,), optional

    Returns
    -------
    CategoricalNBParams
    """
    X, classes, codes, w = _fit_inputs(X, y, sample_weight, allow_sparse=True)
    alpha = _check_alpha(alpha)
    d = X.shape[1]
    min_cat = _check_min_categories(min_categories, d)
    _check_categories(X)
    K = classes.shape[0]
    if is_sparse(X):
        colmax = np.zeros(d)
        if X.data.size:
            np.maximum.at(colmax, X.indices, X.data)
    else:
        colmax = X.max(axis=0)
    n_cat = colmax.astype(np.int64) + 1
    if min_cat is not None:
        n_cat = np.maximum(n_cat, min_cat)
    offsets = np.zeros(d + 1, dtype=np.int64)
    np.cumsum(n_cat, out=offsets[1:])
    cc = _class_count(codes, w, K)
    if is_sparse(X):
        indptr, indices, data = csr_arrays(X)
        counts = csr_categorical_counts(indptr, indices, data, codes, w, K, offsets, cc)
    else:
        counts = categorical_counts(X, codes, w, K, offsets)
    return _categorical_from_counts(classes, cc, counts, n_cat, offsets, alpha, True, None,
                                    X.dtype)


def _categorical_from_counts(classes, cc, counts, n_cat, offsets, alpha, fit_prior,
                             class_prior, dtype):
    smoothed = counts + alpha
    sums = np.add.reduceat(smoothed, offsets[:-1], axis=1)
    flp = np.log(smoothed) - np.log(np.repeat(sums, n_cat, axis=1))
    return CategoricalNBParams(
        classes=classes,
        class_count=cc,
        category_count=counts,
        class_log_prior=_class_log_prior(cc, fit_prior, class_prior),
        feature_log_prob=flp.astype(dtype),
        n_categories=n_cat,
        offsets=offsets,
        alpha=alpha,
    )



# ------------------------------------------------------------ models from statistics
#
# Naive Bayes models are functions of additive statistics (class counts, feature
# counts, diagonal class moments).  Statistics of disjoint batches add (or merge, for
# moments), so streaming and ``partial_fit`` fits are: count each batch, add, rebuild.


def _check_counts(classes, class_count, table, name):
    classes = np.asarray(classes)
    if classes.ndim != 1 or classes.dtype == object:
        raise ValueError("classes must be a 1-D array of numbers or strings")
    cc = np.ascontiguousarray(class_count, dtype=np.float64)
    fc = np.ascontiguousarray(table, dtype=np.float64)
    K = classes.shape[0]
    if cc.shape != (K,):
        raise ValueError(f"class_count must have shape ({K},), one per class; got {cc.shape}")
    if fc.ndim != 2 or fc.shape[0] != K:
        raise ValueError(f"{name} must have shape ({K}, n); got {fc.shape}")
    if not (np.all(np.isfinite(cc)) and np.all(np.isfinite(fc))) or np.any(cc < 0) \
            or np.any(fc < 0):
        raise ValueError(f"class_count and {name} must be finite and non-negative")
    return classes, cc, fc


def _check_dtype(dtype):
    dt = np.dtype(dtype)
    if dt.type not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64; got {dt}")
    return dt


def gaussian_nb_from_moments(moments, *, priors=None, var_smoothing=1e-9,
                             feature_variance=None):
    """Gaussian naive Bayes from (possibly merged) diagonal class moments.

    With N_k, μ_kj and S_kj = Σ_{i: y_i=k} w_i (x_ij − μ_kj)² from ``moments``::

        σ²_kj = S_kj / N_k + ε,   ε = var_smoothing · max_j feature_variance_j,
        π_k = N_k / Σ_k N_k   unless ``priors`` is given.

    A class with zero weight (known but not yet seen in a stream) gets π_k = 0, μ_k = 0
    and σ²_k = ε, as in scikit-learn's ``partial_fit``.

    Parameters
    ----------
    moments : ClassMoments
        Of kind ``"diagonal"`` (from ``class_moments(X, y, kind="diagonal")`` and
        ``merge_moments``).
    priors : array-like (K,), optional
    var_smoothing : float, default 1e-9
    feature_variance : array-like (d,), optional
        Var(x_j) over all rows, used for ε.  :func:`fit_gaussian_nb` uses the unweighted
        variance; the default is the weighted total variance implied by the moments
        (Σ_k S_kj + Σ_k N_k (μ_kj − μ_j)²) / Σ_k N_k, the same when there are no weights.

    Returns
    -------
    GaussianNBParams
        In the data's dtype (``moments.dtype``).
    """
    from .moments import ClassMoments, variance_floor

    if not isinstance(moments, ClassMoments) or moments.kind != "diagonal":
        raise ValueError(
            "moments must be ClassMoments of kind 'diagonal' "
            "(class_moments(X, y, kind='diagonal'))"
        )
    var_smoothing = check_scalar(var_smoothing, "var_smoothing", low=0.0)
    cc = moments.counts.astype(np.float64)
    K, d = moments.means.shape
    p = check_priors(priors, K)
    if cc.sum() <= 0:
        raise ValueError("moments have zero total weight; fit at least one sample")
    if feature_variance is None:
        mu = cc @ moments.means / cc.sum()
        with np.errstate(over="ignore"):
            total = moments.scatter.sum(axis=0) + cc @ (moments.means - mu) ** 2
        if not np.all(np.isfinite(total)):
            raise ValueError(
                "the feature variances overflow float64 (X has values near 1e154 or "
                "larger); rescale the features (e.g. divide by their standard deviation)"
            )
        feature_variance = total / cc.sum()
    fv = np.asarray(feature_variance, dtype=np.float64)
    if fv.shape != (d,) or not np.all(np.isfinite(fv)) or np.any(fv < 0):
        raise ValueError(
            f"feature_variance must have shape ({d},) with finite non-negative entries"
        )
    epsilon = variance_floor(var_smoothing, fv)  # the rule shared with fit_gda
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.where(cc[:, None] > 0, moments.scatter / cc[:, None], 0.0)
    var += epsilon
    if not np.all(var > 0):
        k, j = np.argwhere(~(var > 0))[0]
        raise ValueError(
            f"feature {j} has zero variance in class {moments.classes[k].item()!r} and "
            f"var_smoothing={var_smoothing} adds nothing (every feature is constant, as with "
            f"one sample); pass var_smoothing > 0 with non-constant data"
        )
    dt = np.dtype(moments.dtype)
    small = np.argwhere(var < 1.0 / np.finfo(dt).max)  # 1/σ² would overflow
    if small.size:
        k, j = small[0]
        raise ValueError(
            f"the variance of feature {j} in class {moments.classes[k].item()!r} is "
            f"{float(var[k, j]):.3g}, too small for {dt} (its reciprocal overflows); "
            f"rescale the features (e.g. divide by their standard deviation)"
        )
    if dt != np.float64 and not (np.all(var <= np.finfo(dt).max)
                                 and np.all(np.abs(moments.means) <= np.finfo(dt).max)):
        raise ValueError(
            f"the fitted means or variances overflow {dt} (the dtype of X); pass X as "
            f"float64 or rescale the features"
        )
    if p is None:
        p = cc / cc.sum()
    return GaussianNBParams(
        classes=moments.classes,
        class_count=cc,
        class_log_prior=_log(p),
        means=moments.means.astype(dt),
        variances=var.astype(dt),
        epsilon=float(epsilon),
        var_smoothing=float(var_smoothing),
    )


def bernoulli_nb_from_counts(classes, class_count, feature_count, *, alpha=1.0,
                             binarize=0.0, fit_prior=True, class_prior=None,
                             dtype=np.float64):
    """Bernoulli naive Bayes from class counts N_k and feature counts F_kj.

    The formulas of :func:`fit_bernoulli_nb`; the counts of disjoint batches add, so
    this rebuilds a model from accumulated counts (e.g. the ``class_count`` and
    ``feature_count`` of two fitted models, summed).  ``binarize`` is only stored, to
    be applied at prediction time.  ``dtype`` is that of the scoring tables.
    """
    classes, cc, fc = _check_counts(classes, class_count, feature_count, "feature_count")
    alpha = _check_alpha(alpha)
    if binarize is not None:
        binarize = check_scalar(binarize, "binarize")
    if np.any(fc > cc[:, None]):
        raise ValueError("feature_count exceeds class_count: F_kj <= N_k is required")
    return _bernoulli_from_counts(classes, cc, fc, alpha, binarize,
                                  _check_bool(fit_prior, "fit_prior"), class_prior,
                                  _check_dtype(dtype))


def multinomial_nb_from_counts(classes, class_count, feature_count, *, alpha=1.0,
                               fit_prior=True, class_prior=None, dtype=np.float64):
    """Multinomial naive Bayes from class counts N_k and feature counts N_kj.

    The formulas of :func:`fit_multinomial_nb`, log θ_kj = log(N_kj + α) −
    log(Σ_j N_kj + α·d), on counts accumulated over batches.
    """
    classes, cc, fc = _check_counts(classes, class_count, feature_count, "feature_count")
    return _multinomial_from_counts(classes, cc, fc, _check_alpha(alpha),
                                    _check_bool(fit_prior, "fit_prior"), class_prior,
                                    _check_dtype(dtype))


def complement_nb_from_counts(classes, class_count, feature_count, *, alpha=1.0,
                              norm=False, fit_prior=True, class_prior=None,
                              dtype=np.float64):
    """Complement naive Bayes from class counts and feature counts N_kj.

    The formulas of :func:`fit_complement_nb`.  ``fit_prior`` and ``class_prior`` set
    ``class_log_prior``, which enters the scores only when there is a single class.
    """
    classes, cc, fc = _check_counts(classes, class_count, feature_count, "feature_count")
    return _complement_from_counts(classes, cc, fc, _check_alpha(alpha),
                                   _check_bool(norm, "norm"),
                                   _check_bool(fit_prior, "fit_prior"), class_prior,
                                   _check_dtype(dtype))


def categorical_nb_from_counts(classes, class_count, category_count, n_categories, *,
                               alpha=1.0, fit_prior=True, class_prior=None,
                               dtype=np.float64):
    """Categorical naive Bayes from class counts and per-category counts N_kjc.

    ``category_count`` is (K, Σ_j n_categories[j]), feature j's categories in columns
    ``offsets[j]:offsets[j + 1]`` with ``offsets = [0, cumsum(n_categories)]`` (the
    layout of :class:`CategoricalNBParams`).  The formulas of
    :func:`fit_categorical_nb`; ``fit_prior=False`` gives uniform priors and
    ``class_prior`` fixed ones.
    """
    classes, cc, counts = _check_counts(classes, class_count, category_count,
                                        "category_count")
    n_cat = np.asarray(n_categories)
    if n_cat.ndim != 1 or n_cat.dtype.kind not in "iu" or np.any(n_cat < 1):
        raise ValueError("n_categories must be a 1-D array of positive integers")
    n_cat = n_cat.astype(np.int64)
    offsets = np.zeros(n_cat.shape[0] + 1, dtype=np.int64)
    np.cumsum(n_cat, out=offsets[1:])
    if counts.shape[1] != offsets[-1]:
        raise ValueError(
            f"category_count has {counts.shape[1]} columns but n_categories sums to "
            f"{int(offsets[-1])}"
        )
    return _categorical_from_counts(classes, cc, counts, n_cat, offsets, _check_alpha(alpha),
                                    _check_bool(fit_prior, "fit_prior"), class_prior,
                                    _check_dtype(dtype))
