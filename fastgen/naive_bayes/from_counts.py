"""Naive Bayes params from statistics: :func:`nb_from_counts` and the validated builders.

:func:`nb_from_counts` turns the mergeable statistics of :mod:`fastgen.stats.counts`
(:class:`~fastgen.stats.counts.NBCounts`, from ``nb_counts`` and ``merge_counts``) into
the params the in-memory ``fit_*_nb`` functions return.  The validated builders
:func:`gaussian_nb_from_moments`, :func:`bernoulli_nb_from_counts`,
:func:`multinomial_nb_from_counts`, :func:`complement_nb_from_counts` and
:func:`categorical_nb_from_counts` rebuild a model from statistics a caller accumulated
itself (e.g. the ``class_count`` and ``feature_count`` of two fits, summed).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_scalar
from ..stats.counts import NBCounts
from ..stats.moments import ClassMoments
from .base import check_alpha, check_bool
from .bernoulli import bernoulli_params
from .categorical import categorical_params
from .discrete import complement_params, multinomial_params
from .gaussian import gaussian_params

__all__ = [
    "nb_from_counts",
    "gaussian_nb_from_moments",
    "bernoulli_nb_from_counts",
    "multinomial_nb_from_counts",
    "complement_nb_from_counts",
    "categorical_nb_from_counts",
    "check_counts",
    "check_dtype",
]


def nb_from_counts(counts: NBCounts, **options):
    """The params of ``counts.model`` from (merged) statistics.

    Gives what the in-memory fit on all rows returns (equal to rounding: the sums are
    associated differently):

    * ``"gaussian"`` → :class:`GaussianNBParams`, options ``priors``, ``var_smoothing``:
      σ²_kj = S_kj / N_k + ε with ε = var_smoothing · max_j S_j / n;
    * ``"multinomial"`` → :class:`MultinomialNBParams`, options ``alpha``, ``fit_prior``,
      ``class_prior``: log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d);
    * ``"complement"`` → :class:`ComplementNBParams`, options ``alpha``, ``norm``;
    * ``"bernoulli"`` → :class:`BernoulliNBParams`, options ``alpha``, ``fit_prior``,
      ``class_prior``: p_kj = (F_kj + α) / (N_k + 2α);
    * ``"categorical"`` → :class:`CategoricalNBParams`, options ``alpha``,
      ``fit_prior``, ``class_prior``: log p(x_j = c | k) = log(N_kjc + α) −
      log(Σ_c N_kjc + α·m_j).

    Parameters
    ----------
    counts : NBCounts
    **options
        The model's options, as for the matching ``fit_*_nb`` function.
    """
    if not isinstance(counts, NBCounts):
        raise ValueError(f"counts must be NBCounts; got {type(counts).__name__}")
    if counts.model == "gaussian":
        f = counts.feature_moments
        fv = None if f is None else f.scatter[0] / f.counts[0]
        return gaussian_nb_from_moments(counts.moments, feature_variance=fv, **options)
    args = (counts.classes, counts.class_count, counts.feature_count)
    kw = {"dtype": np.dtype(counts.dtype), "feature_names": counts.feature_names}
    if counts.model == "multinomial":
        return multinomial_nb_from_counts(*args, **kw, **options)
    if counts.model == "complement":
        return complement_nb_from_counts(*args, **kw, **options)
    if counts.model == "categorical":
        return categorical_nb_from_counts(*args, counts.n_categories, **kw, **options)
    return bernoulli_nb_from_counts(*args, binarize=counts.binarize, **kw, **options)


def check_counts(classes, class_count, table, name):
    """(classes, N_k, table) checked: shapes (K,), (K,), (K, m), finite, non-negative."""
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


def check_dtype(dtype):
    """``dtype`` as np.float32 or np.float64 (the dtype of the scoring tables)."""
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
    if not isinstance(moments, ClassMoments) or moments.kind != "diagonal":
        raise ValueError(
            "moments must be ClassMoments of kind 'diagonal' "
            "(class_moments(X, y, kind='diagonal'))"
        )
    var_smoothing = check_scalar(var_smoothing, "var_smoothing", low=0.0)
    return gaussian_params(moments, priors, var_smoothing, feature_variance)


def bernoulli_nb_from_counts(classes, class_count, feature_count, *, alpha=1.0,
                             binarize=0.0, fit_prior=True, class_prior=None,
                             dtype=np.float64, feature_names=None):
    """Bernoulli naive Bayes from class counts N_k and feature counts F_kj.

    The formulas of :func:`fit_bernoulli_nb`; the counts of disjoint batches add, so
    this rebuilds a model from accumulated counts (e.g. the ``class_count`` and
    ``feature_count`` of two fitted models, summed).  ``binarize`` is only stored, to
    be applied at prediction time.  ``dtype`` is that of the scoring tables;
    ``feature_names`` (d str, optional) the names scoring checks X's columns against.
    """
    classes, cc, fc = check_counts(classes, class_count, feature_count, "feature_count")
    alpha = check_alpha(alpha)
    if binarize is not None:
        binarize = check_scalar(binarize, "binarize")
    if np.any(fc > cc[:, None]):
        raise ValueError("feature_count exceeds class_count: F_kj <= N_k is required")
    return bernoulli_params(classes, cc, fc, alpha, binarize,
                                  check_bool(fit_prior, "fit_prior"), class_prior,
                                  check_dtype(dtype), feature_names)


def multinomial_nb_from_counts(classes, class_count, feature_count, *, alpha=1.0,
                               fit_prior=True, class_prior=None, dtype=np.float64,
                               feature_names=None):
    """Multinomial naive Bayes from class counts N_k and feature counts N_kj.

    The formulas of :func:`fit_multinomial_nb`, log θ_kj = log(N_kj + α) −
    log(Σ_j N_kj + α·d), on counts accumulated over batches.  ``dtype`` and
    ``feature_names`` as in :func:`bernoulli_nb_from_counts`.
    """
    classes, cc, fc = check_counts(classes, class_count, feature_count, "feature_count")
    return multinomial_params(classes, cc, fc, check_alpha(alpha),
                                    check_bool(fit_prior, "fit_prior"), class_prior,
                                    check_dtype(dtype), feature_names)


def complement_nb_from_counts(classes, class_count, feature_count, *, alpha=1.0,
                              norm=False, fit_prior=True, class_prior=None,
                              dtype=np.float64, feature_names=None):
    """Complement naive Bayes from class counts and feature counts N_kj.

    The formulas of :func:`fit_complement_nb`.  ``fit_prior`` and ``class_prior`` set
    ``class_log_prior``, which enters the scores only when there is a single class.
    ``dtype`` and ``feature_names`` as in :func:`bernoulli_nb_from_counts`.
    """
    classes, cc, fc = check_counts(classes, class_count, feature_count, "feature_count")
    return complement_params(classes, cc, fc, check_alpha(alpha),
                                   check_bool(norm, "norm"),
                                   check_bool(fit_prior, "fit_prior"), class_prior,
                                   check_dtype(dtype), feature_names)


def categorical_nb_from_counts(classes, class_count, category_count, n_categories, *,
                               alpha=1.0, fit_prior=True, class_prior=None,
                               dtype=np.float64, feature_names=None):
    """Categorical naive Bayes from class counts and per-category counts N_kjc.

    ``category_count`` is (K, Σ_j n_categories[j]), feature j's categories in columns
    ``offsets[j]:offsets[j + 1]`` with ``offsets = [0, cumsum(n_categories)]`` (the
    layout of :class:`CategoricalNBParams`).  The formulas of
    :func:`fit_categorical_nb`; ``fit_prior=False`` gives uniform priors and
    ``class_prior`` fixed ones.  ``dtype`` and ``feature_names`` as in
    :func:`bernoulli_nb_from_counts`.
    """
    classes, cc, counts = check_counts(classes, class_count, category_count,
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
    return categorical_params(classes, cc, counts, n_cat, offsets, check_alpha(alpha),
                                    check_bool(fit_prior, "fit_prior"), class_prior,
                                    check_dtype(dtype), feature_names)
