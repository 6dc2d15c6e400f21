"""Naive Bayes models from statistics: mergeable counts, streaming, the ``*_from_*`` builders.

Every naive Bayes model here is a function of additive statistics of the training rows:

* multinomial and complement: class counts N_k = Σ_{i: y_i=k} w_i and feature counts
  N_kj = Σ_{i: y_i=k} w_i x_ij;
* Bernoulli: N_k and document frequencies F_kj = Σ_{i: y_i=k} w_i [x_ij > t];
* Gaussian: the diagonal class moments (N_k, μ_kj, S_kj = Σ_{i: y_i=k} w_i (x_ij − μ_kj)²)
  plus the unweighted moments of all rows (n, m_j, S_j), for
  ε = var_smoothing · max_j S_j / n.

:func:`nb_counts` computes them for one chunk of rows, :func:`merge_counts` combines the
statistics of two disjoint chunks exactly (sums add; moments merge with the pairwise
update of Chan, Golub & LeVeque: W = Wa + Wb, δ = μb − μa, μ = μa + δ·Wb/W,
S = Sa + Sb + δ²·Wa·Wb/W), and :func:`nb_from_counts` turns merged statistics into the
params the in-memory ``fit_*_nb`` functions return.  A stream of chunks is therefore::

    c = None
    for X_chunk, y_chunk in chunks:
        ci = fastgen.nb_counts(X_chunk, y_chunk, "multinomial")
        c = ci if c is None else fastgen.merge_counts(c, ci)
    params = fastgen.nb_from_counts(c, alpha=1.0)

The Gaussian models of :mod:`fastgen.gda` stream the same way with
:func:`fastgen.class_moments`, :func:`fastgen.merge_moments` and
:func:`fastgen.gda_from_moments`.

The validated builders :func:`gaussian_nb_from_moments`, :func:`bernoulli_nb_from_counts`,
:func:`multinomial_nb_from_counts`, :func:`complement_nb_from_counts` and
:func:`categorical_nb_from_counts` rebuild a model from statistics a caller accumulated
itself (e.g. the ``class_count`` and ``feature_count`` of two fits, summed).

:func:`nb_counts` counts with the same kernels as the fits
(:func:`~fastgen.naive_bayes.discrete.discrete_counts`, :func:`fastgen.class_moments`)
and builds no model: no K × d logarithms for a chunk's counts.

Imports the shared core (``moments``, ``_validation``) and the model modules of this
package; ``fastgen.streaming`` re-exports the streaming names from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import (
    check_merge_operands,
    check_scalar,
    feature_names_of,
    merged_feature_names,
)
from ..moments import ClassMoments, class_moments, merge_moments
from .base import check_alpha, check_bool, fit_inputs
from .categorical import categorical_params
from .discrete import (
    bernoulli_params,
    check_binarize,
    check_binary_counts,
    complement_params,
    discrete_counts,
    multinomial_params,
)
from .gaussian import gaussian_params

__all__ = [
    "NB_MODELS",
    "NBCounts",
    "nb_counts",
    "merge_counts",
    "nb_from_counts",
    "gaussian_nb_from_moments",
    "bernoulli_nb_from_counts",
    "multinomial_nb_from_counts",
    "complement_nb_from_counts",
    "categorical_nb_from_counts",
]

#: the naive Bayes models whose statistics :func:`nb_counts` computes
NB_MODELS = ("gaussian", "multinomial", "complement", "bernoulli")


@dataclass(frozen=True)
class NBCounts:
    """Mergeable statistics of one naive Bayes model over a set of rows.

    Attributes
    ----------
    model : str
        One of :data:`NB_MODELS`.
    classes : ndarray (K,)
        Sorted class labels (a class may have zero count: known but not seen).
    class_count : ndarray (K,) float64
        N_k = Σ_{i: y_i=k} w_i.
    feature_count : ndarray (K, d) float64 or None
        N_kj = Σ_{i: y_i=k} w_i x_ij (multinomial, complement) or the document
        frequencies F_kj = Σ_{i: y_i=k} w_i [x_ij > binarize] (Bernoulli); None for
        the Gaussian model.
    moments : ClassMoments or None
        Gaussian model: weighted diagonal class moments (N_k, μ_kj, S_kj).
    feature_moments : ClassMoments or None
        Gaussian model with sample weights: the unweighted moments of all rows as a
        single class, so that Var(x_j) = S_j / n for ε = var_smoothing · max_j Var(x_j)
        (as :func:`fastgen.fit_gaussian_nb` takes it).  None when no weights were given:
        the moments of all rows are then those of the merged classes,
        n = Σ_k N_k, m = Σ_k N_k μ_k / n, S = Σ_k S_k + Σ_k N_k (μ_k − m)².
    binarize : float or None
        Bernoulli model: the threshold t used for F_kj (None: X taken as binary).
    dtype : str
        ``"float32"`` when every merged chunk was float32, else ``"float64"``: the
        dtype of the params :func:`nb_from_counts` returns.
    feature_names : tuple of str or None
        The column names of the data frame the counts were taken from, else None;
        counts merge only with counts of the same names, and the params built from
        them keep the names.
    """

    model: str
    classes: np.ndarray
    class_count: np.ndarray
    feature_count: np.ndarray | None = None
    moments: ClassMoments | None = None
    feature_moments: ClassMoments | None = None
    binarize: float | None = None
    dtype: str = "float64"
    feature_names: tuple | None = None

    def __post_init__(self):
        if self.model not in NB_MODELS:
            raise ValueError(f"model must be one of {NB_MODELS}; got {self.model!r}")
        K = self.classes.shape[0]
        if self.class_count.shape != (K,):
            raise ValueError(f"class_count must have shape ({K},); got {self.class_count.shape}")
        if self.model == "gaussian":
            if self.moments is None:
                raise ValueError("the gaussian model needs moments")
        elif self.feature_count is None or self.feature_count.shape[0] != K:
            raise ValueError(f"feature_count must have shape ({K}, n_features)")
        if self.feature_names is not None:
            names, d = tuple(self.feature_names), self.n_features
            if not all(isinstance(n, str) for n in names) or len(names) != d \
                    or len(set(names)) != d:
                raise ValueError(f"feature_names must be {d} distinct str")
            object.__setattr__(self, "feature_names", tuple(str(n) for n in names))

    @property
    def n_features(self) -> int:
        if self.model == "gaussian":
            return self.moments.n_features
        return int(self.feature_count.shape[1])


def _align_classes(classes, known):
    """Positions of the labels ``classes`` in the sorted label set ``known``."""
    known = np.asarray(known)
    if known.ndim != 1 or known.shape[0] == 0:
        raise ValueError("classes must be a non-empty 1-D array of labels")
    if np.any(known[1:] <= known[:-1]):
        raise ValueError("classes must be sorted and unique (as np.unique returns them)")
    try:
        pos = np.searchsorted(known, classes)
    except TypeError:
        raise ValueError("y's labels and classes have incompatible types") from None
    pos = np.minimum(pos, known.shape[0] - 1)
    missing = known[pos] != classes
    if np.any(missing):
        raise ValueError(
            f"y contains labels {classes[missing].tolist()} that are not in classes"
        )
    return known, pos


def _all_rows(c: NBCounts) -> ClassMoments:
    """Unweighted moments of all rows of a Gaussian chunk, as one class."""
    if c.feature_moments is not None:
        return c.feature_moments
    m = c.moments  # unweighted: fold the classes together
    n = m.counts.sum()
    mu = m.counts @ m.means / n
    S = m.scatter.sum(axis=0) + m.counts @ (m.means - mu) ** 2
    return ClassMoments(np.zeros(1, dtype=np.int8), np.array([n]), mu[None], S[None],
                        "diagonal", m.dtype, m.feature_names)


def _pad_rows(a, pos, K):
    out = np.zeros((K,) + a.shape[1:])
    out[pos] = a
    return out


def nb_counts(X, y, model: str = "multinomial", *, sample_weight=None, binarize=0.0,
              classes=None) -> NBCounts:
    """Mergeable statistics of a naive Bayes model over the rows of one chunk.

    Parameters
    ----------
    X : array-like (n, d), or scipy CSR for the count models
        One chunk of rows; the caller's array is never modified.
    y : array-like (n,)
        Labels of the chunk.
    model : {"gaussian", "multinomial", "complement", "bernoulli"}
        Which statistics to keep (see :class:`NBCounts`).
    sample_weight : array-like (n,), optional
        Non-negative weights; a weight of 2 counts a row twice.
    binarize : float or None, default 0.0
        Bernoulli model only: F_kj counts x_ij > binarize (None: X is binary).
    classes : array-like (K,), optional
        The full sorted label set.  The statistics then have one row per entry of
        ``classes`` (zero for labels absent from this chunk), so every chunk of a
        stream or a distributed array is laid out alike; labels of y outside
        ``classes`` are an error.

    Returns
    -------
    NBCounts
        With N_k = Σ_{i: y_i=k} w_i and the model's per-class sums; multinomial and
        complement: N_kj = Σ w_i x_ij; Bernoulli: F_kj = Σ w_i [x_ij > binarize];
        Gaussian: diagonal class moments and the unweighted moments of all rows.
    """
    if model not in NB_MODELS:
        raise ValueError(f"model must be one of {NB_MODELS}; got {model!r}")
    if model == "gaussian":
        mom = class_moments(X, y, kind="diagonal", sample_weight=sample_weight)
        feat = None
        if sample_weight is not None:
            # ε uses the unweighted variance of all rows: keep it separately
            n = np.shape(y)[0]
            feat = class_moments(X, np.zeros(n, dtype=np.int8), kind="diagonal")
        if classes is not None:
            known, pos = _align_classes(mom.classes, classes)
            K = known.shape[0]
            mom = ClassMoments(known, _pad_rows(mom.counts, pos, K),
                               _pad_rows(mom.means, pos, K), _pad_rows(mom.scatter, pos, K),
                               "diagonal", mom.dtype, mom.feature_names)
        return NBCounts("gaussian", mom.classes, mom.counts.copy(), moments=mom,
                        feature_moments=feat, dtype=mom.dtype,
                        feature_names=mom.feature_names)
    # the counts of the fits, from the same kernels, without building a model
    names = feature_names_of(X)
    X, cls, codes, w = fit_inputs(X, y, sample_weight, allow_sparse=True, csr_counts=True)
    if model == "bernoulli":
        binarize = check_binarize(binarize, X)
    else:
        binarize = None
    cc, fc = discrete_counts(X, codes, w, cls.shape[0], model, binarize=binarize)
    if model == "bernoulli" and binarize is None:
        # as fit_bernoulli_nb with its default alpha = 1, which counted chunks before
        check_binary_counts(cc, fc, 1.0)
    if classes is not None:
        known, pos = _align_classes(cls, classes)
        cc, fc, cls = _pad_rows(cc, pos, known.shape[0]), _pad_rows(fc, pos,
                                                                     known.shape[0]), known
    return NBCounts(model, cls, cc, feature_count=fc, binarize=binarize, dtype=str(X.dtype),
                    feature_names=names)


def merge_counts(a: NBCounts, b: NBCounts) -> NBCounts:
    """Statistics of the union of two disjoint sets of rows, exactly.

    Classes are matched by label (the union of both label sets); counts add,
    N_k = N_k^a + N_k^b and N_kj = N_kj^a + N_kj^b; Gaussian moments merge with
    :func:`fastgen.merge_moments` (δ = μ^b − μ^a, μ = μ^a + δ·W^b/W,
    S = S^a + S^b + δ²·W^a·W^b/W).  Associative and commutative up to rounding.
    """
    check_merge_operands(a, b, NBCounts, "counts", "model")
    names = merged_feature_names(a.feature_names, b.feature_names, "counts")
    if a.binarize != b.binarize:
        raise ValueError(
            f"cannot merge Bernoulli counts taken with binarize={a.binarize} and "
            f"binarize={b.binarize}"
        )
    dtype = "float32" if a.dtype == b.dtype == "float32" else "float64"
    if a.model == "gaussian":
        m = merge_moments(a.moments, b.moments)
        f = None
        if a.feature_moments is not None or b.feature_moments is not None:
            f = merge_moments(_all_rows(a), _all_rows(b))
        return NBCounts("gaussian", m.classes, m.counts.copy(), moments=m, feature_moments=f,
                        dtype=dtype, feature_names=names)
    if a.classes.dtype.kind in "biuf" and b.classes.dtype.kind not in "biuf" or \
            b.classes.dtype.kind in "biuf" and a.classes.dtype.kind not in "biuf":
        raise ValueError(
            f"cannot merge counts with incompatible label types ({a.classes.dtype} and "
            f"{b.classes.dtype})"
        )
    if a.classes.shape == b.classes.shape and np.array_equal(a.classes, b.classes):
        classes = a.classes
        cc, fc = a.class_count + b.class_count, a.feature_count + b.feature_count
    else:
        try:
            classes = np.union1d(a.classes, b.classes)
        except TypeError:
            raise ValueError("the two counts have class labels of incompatible types") from None
        K = classes.shape[0]
        pa, pb = np.searchsorted(classes, a.classes), np.searchsorted(classes, b.classes)
        cc = _pad_rows(a.class_count, pa, K)
        cc[pb] += b.class_count
        fc = _pad_rows(a.feature_count, pa, K)
        fc[pb] += b.feature_count
    return NBCounts(a.model, classes, cc, feature_count=fc, binarize=a.binarize, dtype=dtype,
                    feature_names=names)


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
      ``class_prior``: p_kj = (F_kj + α) / (N_k + 2α).

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
    return bernoulli_nb_from_counts(*args, binarize=counts.binarize, **kw, **options)


# ------------------------------------------------------------ models from statistics


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
