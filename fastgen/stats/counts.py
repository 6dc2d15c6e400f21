"""Mergeable statistics of the naive Bayes models, for streaming and distributed fits.

Every naive Bayes model here is a function of additive statistics of the training rows:

* multinomial and complement: class counts N_k = Σ_{i: y_i=k} w_i and feature counts
  N_kj = Σ_{i: y_i=k} w_i x_ij;
* Bernoulli: N_k and document frequencies F_kj = Σ_{i: y_i=k} w_i [x_ij > t];
* categorical: N_k and the category counts N_kjc = Σ_{i: y_i=k, x_ij=c} w_i, one
  table of Σ_j m_j columns (feature j's m_j categories side by side);
* Gaussian: the diagonal class moments (N_k, μ_kj, S_kj = Σ_{i: y_i=k} w_i (x_ij − μ_kj)²)
  plus the unweighted moments of all rows (n, m_j, S_j), for
  ε = var_smoothing · max_j S_j / n.

:func:`nb_counts` computes them for one chunk of rows, :func:`merge_counts` combines the
statistics of two disjoint chunks exactly (sums add, categorical tables first widened
to the larger number of categories of each feature; moments merge with the pairwise
update of Chan, Golub & LeVeque: W = Wa + Wb, δ = μb − μa, μ = μa + δ·Wb/W,
S = Sa + Sb + δ²·Wa·Wb/W), and :func:`fastgen.nb_from_counts` (in
:mod:`fastgen.naive_bayes.from_counts`) turns merged statistics into the params the
in-memory ``fit_*_nb`` functions return.  A stream of chunks is therefore::

    c = None
    for X_chunk, y_chunk in chunks:
        ci = fastgen.nb_counts(X_chunk, y_chunk, "multinomial")
        c = ci if c is None else fastgen.merge_counts(c, ci)
    params = fastgen.nb_from_counts(c, alpha=1.0)

The Gaussian models of :mod:`fastgen.gda` stream the same way with
:func:`fastgen.class_moments`, :func:`fastgen.merge_moments` and
:func:`fastgen.gda_from_moments`.

:func:`nb_counts` counts with the same passes as the fits
(:func:`~fastgen.stats.feature_counts.discrete_counts`, :func:`fastgen.class_moments`)
and builds no model: no K × d logarithms for a chunk's counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._runtime import serial_for_small_inputs
from .._validation import (
    check_merge_operands,
    feature_names_of,
    merged_feature_names,
    stored_feature_names,
)
from .category_counts import (
    category_layout,
    category_offsets,
    check_categories,
    check_min_categories,
    count_categories,
    widen_categories,
)
from .feature_counts import check_binarize, check_binary_counts, discrete_counts, fit_inputs
from .moments import ClassMoments, class_moments, merge_moments, merged_labels

__all__ = ["NB_MODELS", "NBCounts", "nb_counts", "merge_counts"]

#: the naive Bayes models whose statistics :func:`nb_counts` computes
NB_MODELS = ("gaussian", "multinomial", "complement", "bernoulli", "categorical")


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
        frequencies F_kj = Σ_{i: y_i=k} w_i [x_ij > binarize] (Bernoulli), or the
        category counts N_kjc (categorical: (K, Σ_j n_categories[j]), feature j's
        categories in columns ``offsets[j]:offsets[j + 1]``, offsets = [0,
        cumsum(n_categories)]); None for the Gaussian model.
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
    n_categories : ndarray (d,) int64 or None
        Categorical model: the number of categories m_j of each feature.
    dtype : str
        ``"float32"`` when every merged chunk was float32, else ``"float64"``: the
        dtype of the params :func:`fastgen.nb_from_counts` returns.
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
    n_categories: np.ndarray | None = None

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
        if self.model == "categorical":
            m = self.n_categories
            if m is None or m.ndim != 1 or m.dtype != np.int64 or np.any(m < 1) or \
                    self.feature_count.shape[1] != int(m.sum()):
                raise ValueError("the categorical model needs n_categories, (d,) int64 "
                                 "positive, summing to the columns of feature_count")
        object.__setattr__(self, "feature_names", stored_feature_names(
            self.feature_names, self.n_features, "NBCounts"))

    @property
    def n_features(self) -> int:
        if self.model == "gaussian":
            return self.moments.n_features
        if self.model == "categorical":
            return int(self.n_categories.shape[0])
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


def _on_classes(cls, cc, fc, classes):
    """(classes, N_k, table) with one row per label of ``classes`` (zeros for labels
    absent from this chunk); unchanged when ``classes`` is None."""
    if classes is None:
        return cls, cc, fc
    known, pos = _align_classes(cls, classes)
    K = known.shape[0]
    return known, _pad_rows(cc, pos, K), _pad_rows(fc, pos, K)


@serial_for_small_inputs(0)
def nb_counts(X, y, model: str = "multinomial", *, sample_weight=None, binarize=0.0,
              classes=None, min_categories=None, n_categories=None) -> NBCounts:
    """Mergeable statistics of a naive Bayes model over the rows of one chunk.

    Parameters
    ----------
    X : array-like (n, d), or scipy CSR for the count models
        One chunk of rows; the caller's array is never modified.
    y : array-like (n,)
        Labels of the chunk.
    model : {"gaussian", "multinomial", "complement", "bernoulli", "categorical"}
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
    min_categories : int or array-like (d,) of int, optional
        Categorical model only: at least this many categories per feature (as for
        :func:`fastgen.fit_categorical_nb`, which also refuses stray codes).
    n_categories : array-like (d,) of int, optional
        Categorical model only: the number of categories of each feature, fixed for
        every chunk (e.g. from a first pass over all of them; a code past it is an
        error); default: from this chunk's codes and ``min_categories``.

    Returns
    -------
    NBCounts
        With N_k = Σ_{i: y_i=k} w_i and the model's per-class sums; multinomial and
        complement: N_kj = Σ w_i x_ij; Bernoulli: F_kj = Σ w_i [x_ij > binarize];
        Gaussian: diagonal class moments and the unweighted moments of all rows;
        categorical: N_kjc = Σ w_i [x_ij = c].
    """
    if model not in NB_MODELS:
        raise ValueError(f"model must be one of {NB_MODELS}; got {model!r}")
    if model != "categorical" and (min_categories is not None or n_categories is not None):
        raise ValueError("min_categories and n_categories are options of the categorical "
                         "model only")
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
    if model == "categorical":
        return _categorical_counts(X, y, sample_weight, classes, min_categories,
                                   n_categories)
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
    cls, cc, fc = _on_classes(cls, cc, fc, classes)
    return NBCounts(model, cls, cc, feature_count=fc, binarize=binarize, dtype=str(X.dtype),
                    feature_names=names)


def _categorical_counts(X, y, sample_weight, classes, min_categories, n_categories):
    """:func:`nb_counts` of the categorical model: the pass of
    :func:`fastgen.fit_categorical_nb`, with its checks."""
    names = feature_names_of(X)
    X, cls, codes, w = fit_inputs(X, y, sample_weight, allow_sparse=True)
    d = X.shape[1]
    if n_categories is None:
        n_cat = category_layout(X, check_min_categories(min_categories, d))
    else:
        if min_categories is not None:
            raise ValueError("pass min_categories or n_categories, not both: "
                             "n_categories fixes the widths")
        n_cat = check_min_categories(n_categories, d, "n_categories")
        if np.any(n_cat < 1):
            raise ValueError("n_categories must be positive")
        check_categories(X, n_cat, given=True)
    cc, fc = count_categories(X, codes, w, cls.shape[0], category_offsets(n_cat))
    cls, cc, fc = _on_classes(cls, cc, fc, classes)
    return NBCounts("categorical", cls, cc, feature_count=fc, dtype=str(X.dtype),
                    feature_names=names, n_categories=n_cat)


def merge_counts(a: NBCounts, b: NBCounts) -> NBCounts:
    """Statistics of the union of two disjoint sets of rows, exactly.

    Classes are matched by label (the union of both label sets); counts add,
    N_k = N_k^a + N_k^b and N_kj = N_kj^a + N_kj^b (categorical: each feature's
    categories widened to the larger count of the two first); Gaussian moments merge with
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
    n_cat = None
    fa, fb = a.feature_count, b.feature_count
    if a.model == "categorical":
        n_cat = np.maximum(a.n_categories, b.n_categories)
        fa = widen_categories(fa, a.n_categories, n_cat)
        fb = widen_categories(fb, b.n_categories, n_cat)
    ca, cb = a.classes, b.classes
    if ca.dtype.kind in "biuf":
        ca, cb = merged_labels(ca, cb, "counts")  # exact, or refused
    if ca.shape == cb.shape and np.array_equal(ca, cb):
        classes = ca
        cc, fc = a.class_count + b.class_count, fa + fb
    else:
        try:
            classes = np.union1d(ca, cb)
        except TypeError:
            raise ValueError("the two counts have class labels of incompatible types") from None
        K = classes.shape[0]
        pa, pb = np.searchsorted(classes, ca), np.searchsorted(classes, cb)
        cc = _pad_rows(a.class_count, pa, K)
        cc[pb] += b.class_count
        fc = _pad_rows(fa, pa, K)
        fc[pb] += fb
    return NBCounts(a.model, classes, cc, feature_count=fc, binarize=a.binarize, dtype=dtype,
                    feature_names=names, n_categories=n_cat)
