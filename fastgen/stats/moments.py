"""Per-class sufficient statistics: the mergeable core of every Gaussian fit.

``class_moments`` reads X once; ``merge_moments`` combines two sets of moments exactly
(the pairwise update of Chan, Golub & LeVeque), so streaming, chunked and distributed
fits are merges of these; ``fastgen.gda_from_moments`` turns moments into a model.

X may be a host array (the CPU kernels of :mod:`fastgen.kernels.moments`) or a CUDA
device array (the kernels of :mod:`fastgen.cuda`, without a host copy of X): the fits
of the Gaussian models read X only through :func:`class_rows` and its methods.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .. import cuda as device
from .._runtime import blas_single_thread, kernel_module, serial_for_small_inputs
from .._small import is_small, small_work
from .._validation import (
    check_finite_result,
    check_merge_operands,
    check_sample_weight,
    check_X,
    check_y,
    feature_names_of,
    merged_feature_names,
    stored_feature_names,
)
from . import numpy_passes

moment_kernels = kernel_module("moments")

__all__ = ["ClassMoments", "ClassRows", "class_moments", "class_rows", "merge_moments",
           "moments_arrays", "SCATTER_KINDS", "total_variance", "variance_floor",
           "check_variances_representable"]

#: what each scatter kind stores, and which covariance models it can give
SCATTER_KINDS = ("pooled", "per_class", "diagonal")

# Bound on the doubles held by per-group partial buffers (256 MB); the number of
# groups is derived from the problem size alone, never from the thread count.
_GROUP_BUDGET = 32 * 1024 * 1024


@dataclass(frozen=True)
class ClassMoments:
    """Weighted per-class moments of a data set.

    Attributes
    ----------
    classes : ndarray (K,)
        Sorted class labels.
    counts : ndarray (K,) float64
        Total sample weight of each class (the number of rows when unweighted).
    means : ndarray (K, d) float64
        Class means μmoment_kernels.
    scatter : ndarray float64
        ``kind == "pooled"``: (d, d) Σ_i w_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ;
        ``"per_class"``: (K, d, d), one such sum per class;
        ``"diagonal"``: (K, d), the per-class per-feature sums of squares.
    kind : str
        One of ``"pooled"``, ``"per_class"``, ``"diagonal"``.
    dtype : str
        The floating dtype of the data (``"float32"`` or ``"float64"``); the moments
        themselves are always float64.
    feature_names : tuple of str or None
        The column names of the data frame the moments were computed from, else
        None; moments merge only with moments of the same names, and the models built
        from them keep the names (and check them when scoring).
    """

    classes: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    scatter: np.ndarray
    kind: str
    dtype: str = "float64"
    feature_names: tuple | None = None

    def __post_init__(self):
        if self.kind not in SCATTER_KINDS:
            raise ValueError(f"kind must be one of {SCATTER_KINDS}; got {self.kind!r}")
        K, d = self.means.shape
        shapes = {"pooled": (d, d), "per_class": (K, d, d), "diagonal": (K, d)}
        if self.counts.shape != (K,) or self.classes.shape != (K,):
            raise ValueError("counts and classes must have one entry per row of means")
        if self.scatter.shape != shapes[self.kind]:
            raise ValueError(
                f"scatter of kind {self.kind!r} must have shape {shapes[self.kind]}; "
                f"got {self.scatter.shape}"
            )
        object.__setattr__(self, "feature_names",
                           stored_feature_names(self.feature_names, d, "ClassMoments"))

    @property
    def n_features(self) -> int:
        return int(self.means.shape[1])

    @property
    def total(self) -> float:
        """Total weight (the number of rows when unweighted)."""
        return float(self.counts.sum())


def moments_arrays(X, codes, w, K, kind):
    """(weights, means, scatter) of validated X by the moments kernel of ``kind``.

    X is C-contiguous float32/float64, ``codes`` intp class codes in ``[0, K)``, ``w`` the
    sample weights (empty for unit weights); ``kind`` is "pooled", "per_class" or
    "diagonal".  Used by every family that needs class moments (GDA, Gaussian naive Bayes).
    """
    n, d = X.shape
    if is_small(X):  # no compilation for small X (fastgen._small)
        return getattr(numpy_passes, "moments_" + kind)(X, codes, w, K)
    if kind == "pooled":
        G = moment_kernels.n_row_groups(n, K * (2 * d + 1) + d * d + 128 * d, _GROUP_BUDGET)
        with blas_single_thread(d >= moment_kernels.GEMM_MIN_D):
            return moment_kernels.moments_pooled(X, codes, w, K, G)
    if kind == "diagonal":
        G = moment_kernels.n_row_groups(n, 3 * K * d + K, _GROUP_BUDGET)
        return moment_kernels.moments_diagonal(X, codes, w, K, G)
    groups = max(1, min(16, _GROUP_BUDGET // max(d * d + moment_kernels.CLASS_BLOCK_DOUBLES, 1)))
    with blas_single_thread(d >= moment_kernels.GEMM_MIN_D):
        return moment_kernels.moments_per_class(X, codes, w, K, groups)


@dataclass(frozen=True)
class ClassRows:
    """The checked rows of a fit, which the statistics read: X once per statistic.

    ``X`` is C-contiguous float32/float64 on the host, or a numba device array
    (``on_device``); ``codes`` the class codes of the rows in ``[0, K)`` (host or
    device); ``weights`` the sample weights (host: empty for unit weights; device: None
    for unit weights); ``classes`` the sorted labels (host); ``feature_names`` the
    column names of a data frame, else None.
    """

    X: object
    classes: np.ndarray
    codes: object
    weights: object
    feature_names: tuple | None
    on_device: bool

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def weighted(self) -> bool:
        """Whether sample weights were given."""
        return self.weights is not None if self.on_device else bool(self.weights.shape[0])

    def moments(self, kind: str) -> ClassMoments:
        """The :class:`ClassMoments` of kind ``kind`` (one read of X); NaN/inf in X or
        an overflow raise a ValueError naming the entry."""
        K = self.classes.shape[0]
        if self.on_device:
            W, means, scatter = device.moments_arrays(self.X, self.codes, self.weights, K,
                                                      kind)
        else:
            W, means, scatter = moments_arrays(self.X, self.codes, self.weights, K, kind)
            check_finite_result(self.X, means, scatter, sample_weight=self.weights)
        return ClassMoments(self.classes, W, means, scatter, kind,
                            str(np.dtype(self.X.dtype)), self.feature_names)

    def unweighted_variance(self) -> np.ndarray:
        """(d,) Var(x_j) over all rows, unweighted (one more read of X); for the
        variance floor of a weighted Gaussian naive Bayes fit, as scikit-learn's."""
        n = self.n_rows
        if self.on_device:
            _, _, m2 = device.moments_arrays(self.X, device.zero_codes(n), None, 1,
                                             "diagonal")
        else:
            _, _, m2 = moments_arrays(self.X, np.zeros(n, np.int32), np.empty(0), 1,
                                      "diagonal")
        return m2[0] / n

    def standardised_fourth_moment(self, means, inverse_sd) -> np.ndarray:
        """(K,) Σ_{i∈k} w_i ‖D_k⁻¹(x_i − μ_k)‖⁴ with D_k⁻¹ = diag(``inverse_sd[k]``)
        (:func:`fastgen.kernels.moments.standardised_fourth_moment`; one more read of
        X, host only)."""
        if self.on_device:
            raise ValueError("the fourth moments are not available for device arrays")
        K = self.classes.shape[0]
        if is_small(self.X):
            return numpy_passes.standardised_fourth_moment(self.X, self.codes, self.weights,
                                                           means, inverse_sd)
        G = moment_kernels.n_row_groups(self.n_rows, K, 1 << 20)
        return moment_kernels.standardised_fourth_moment(self.X, self.codes, self.weights,
                                                         means, inverse_sd, G)


def class_rows(X, y, sample_weight=None) -> ClassRows:
    """X, y and sample_weight checked for the statistics, on the host or on the device.

    Host X is checked as :func:`fastgen._validation.check_X` checks it, except for
    NaN/inf, which the moments find on their way (no extra pass over X); device X is
    checked on the device with the same messages, and never copied to the host.
    """
    if device.is_device_array(X):
        Xd, classes, codes, w = device.device_rows(X, y, sample_weight)
        return ClassRows(Xd, classes, codes, w, None, True)
    names = feature_names_of(X)
    X = check_X(X, finite=False)  # checked through the moments: no extra pass over X
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    return ClassRows(X, classes, codes, w, names, False)


@serial_for_small_inputs(0)
def class_moments(X, y, *, kind: str = "pooled", sample_weight=None) -> ClassMoments:
    """Per-class weighted counts, means and scatter in one read of X.

    Parameters
    ----------
    X : array-like (n, d), or a CUDA device array
        Data; float32 stays float32 for later fits (moments are float64).  Device X
        (CuPy, PyTorch, numba) is read on the device, where the moments are computed;
        only the (K, d) and (d, d) results come to the host.
    y : array-like (n,)
        Class labels (host or device).
    kind : {"pooled", "per_class", "diagonal"}
        Which scatter to keep: one pooled (d, d) matrix (never K×d×d, so thousands of
        classes are fine), one (d, d) per class, or per-class per-feature sums.
    sample_weight : array-like (n,), optional
        Non-negative weights; a weight of 2 counts a row twice.

    Returns
    -------
    ClassMoments
        counts W_k = Σ_{i∈k} w_i, means μ_k = Σ_{i∈k} w_i x_i / W_k and the scatter
        Σ_{i∈k} w_i (x_i − μ_k)(x_i − μ_k)ᵀ (summed over k when pooled).
    """
    if kind not in SCATTER_KINDS:
        raise ValueError(f"kind must be one of {SCATTER_KINDS}; got {kind!r}")
    return class_rows(X, y, sample_weight).moments(kind)


def _aligned(m: ClassMoments, classes: np.ndarray) -> ClassMoments:
    """The same moments over a superset of classes (absent ones get zero weight)."""
    if m.classes.shape == classes.shape and np.array_equal(m.classes, classes):
        return m
    K, d = classes.shape[0], m.n_features
    pos = np.searchsorted(classes, m.classes)
    counts = np.zeros(K)
    counts[pos] = m.counts
    means = np.zeros((K, d))
    means[pos] = m.means
    if m.kind == "per_class":
        scatter = np.zeros((K, d, d))
        scatter[pos] = m.scatter
    elif m.kind == "diagonal":
        scatter = np.zeros((K, d))
        scatter[pos] = m.scatter
    else:
        scatter = m.scatter
    return dataclasses.replace(m, classes=classes, counts=counts, means=means,
                               scatter=scatter)


def merged_labels(a: np.ndarray, b: np.ndarray, what: str):
    """``(a, b)`` cast to one dtype that holds every label of both exactly.

    Two integer dtypes take int64 (or uint64 where a label is beyond int64); a float
    side takes their common dtype, where every label keeps its value.  Anything else
    raises: numpy's common type of int64 and uint64 (or float) is float64, where the
    labels 2⁵³ and 2⁵³ + 1 are one class.
    """
    if a.dtype == b.dtype:
        return a, b
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        big = np.iinfo(np.int64).max
        beyond = any(x.dtype.kind == "u" and x.size and int(x.max()) > big for x in (a, b))
        negative = any(x.dtype.kind == "i" and x.size and int(x.min()) < 0 for x in (a, b))
        if not beyond:
            return a.astype(np.int64), b.astype(np.int64)
        if not negative:
            return a.astype(np.uint64), b.astype(np.uint64)
        raise ValueError(
            f"cannot merge {what} whose labels are {a.dtype} and {b.dtype}: a negative "
            f"label and one beyond int64 have no common integer dtype (float64 would "
            f"merge distinct labels); give both chunks labels of one dtype")
    dt = np.result_type(a.dtype, b.dtype)
    for x in (a, b):
        with np.errstate(invalid="ignore", over="ignore"):
            y = x.astype(dt)
            back = y.astype(x.dtype) if np.all(np.isfinite(y)) else None
        if back is None or not np.array_equal(back, x):
            bad = (x[0] if back is None else x[back != x][0]).item()
            raise ValueError(
                f"cannot merge {what} whose labels are {a.dtype} and {b.dtype}: the "
                f"label {bad!r} has no exact {dt} value, so distinct labels could merge "
                f"into one class; give both chunks labels of one dtype (e.g. int64)")
    return a.astype(dt), b.astype(dt)


def merge_moments(a: ClassMoments, b: ClassMoments) -> ClassMoments:
    """Moments of the union of two data sets, exactly (associative and commutative up
    to rounding).

    Classes are matched by label; a class present in only one side is carried over.
    Feature names must agree (different names raise a ValueError; names on one side
    only warn, and the merge keeps them).
    With W = Wa + Wb and δ = μb − μa per class: μ = μa + δ·Wb/W and
    M2 = M2a + M2b + δδᵀ·Wa·Wb/W (summed over classes for the pooled scatter).
    """
    check_merge_operands(a, b, ClassMoments, "moments", "kind")
    names = merged_feature_names(a.feature_names, b.feature_names, "moments")
    def family(c):
        return "number" if c.dtype.kind in "biuf" else c.dtype.kind

    if family(a.classes) != family(b.classes):
        raise ValueError(
            f"cannot merge moments with incompatible label types ({a.classes.dtype} and "
            f"{b.classes.dtype}): 1 and '1' would be taken for the same class"
        )
    if family(a.classes) == "number":
        la, lb = merged_labels(a.classes, b.classes, "moments")
        a, b = dataclasses.replace(a, classes=la), dataclasses.replace(b, classes=lb)
    try:
        classes = np.union1d(a.classes, b.classes)
    except TypeError:
        raise ValueError("the two moments have class labels of incompatible types") from None
    A, B = _aligned(a, classes), _aligned(b, classes)
    W, means, scatter = A.counts.copy(), A.means.copy(), A.scatter.copy()
    if small_work(scatter.size + means.size):  # tables, not X: numpy (fastgen._small)
        numpy_passes.merge_moments_into(a.kind, W, means, scatter, B.counts, B.means,
                                        B.scatter)
    else:
        merge = {"pooled": moment_kernels.merge_pooled,
                 "per_class": moment_kernels.merge_per_class,
                 "diagonal": moment_kernels.merge_diagonal}[a.kind]
        merge(W, means, scatter, B.counts, B.means, B.scatter)
    dtype = "float64" if "float64" in (a.dtype, b.dtype) else "float32"
    return ClassMoments(classes, W, means, scatter, a.kind, dtype, names)


def total_variance(m: ClassMoments) -> np.ndarray:
    """Var(x_j) of each feature over all rows, from the class moments alone.

    With W = Σ_k W_k and μ̄ = Σ_k W_k μ_k / W (the law of total variance)::

        Var(x_j) = (Σ_k S_kjj + Σ_k W_k (μ_kj − μ̄_j)²) / W,

    where S_kjj is the within-class sum of squares of feature j (the diagonal of the
    scatter, whatever its ``kind``).  With sample weights this is the weighted variance
    (a weight of 2 counts the row twice).  Raises ``ValueError`` if it overflows.
    """
    W = m.counts.astype(np.float64)
    tot = float(W.sum())
    if m.kind == "pooled":
        within = np.diag(m.scatter).copy()
    elif m.kind == "per_class":
        within = np.einsum("kjj->j", m.scatter)
    else:
        within = m.scatter.sum(axis=0)
    mu = (W @ m.means) / tot
    with np.errstate(over="ignore", invalid="ignore"):
        v = (within + W @ (m.means - mu) ** 2) / tot
    if not np.all(np.isfinite(v)):
        raise ValueError(
            "the feature variances overflow float64 (X has values near 1e154 or larger); "
            "rescale the features (e.g. divide by their standard deviation)"
        )
    return v


def variance_floor(var_smoothing: float, feature_variance) -> float:
    """The variance floor of the diagonal Gaussian models (scikit-learn's rule).

    ε = var_smoothing · max_j Var(x_j), added to every per-class (or pooled) variance
    by ``fit_gda(..., "diagonal" | "pooled_diagonal")``, :func:`fastgen.gda_from_moments`
    and :func:`fastgen.fit_gaussian_nb`.  Because ε is the same for every class, a
    feature that is constant in the training data adds the same term to every class's
    score, and a feature constant inside one class no longer gives that class a zero
    density elsewhere.  ``var_smoothing=0`` gives ε = 0: the pure maximum-likelihood
    variances (and an error on a zero variance).
    """
    fv = np.asarray(feature_variance, dtype=np.float64)
    eps = float(var_smoothing) * float(np.max(fv)) if fv.size else 0.0
    check_floor_finite(eps, var_smoothing, float(np.max(fv)) if fv.size else 0.0)
    return eps


def check_floor_finite(value, var_smoothing, largest_variance):
    """Raise, naming ``var_smoothing``, where the floor ε (or a variance plus ε) is not
    finite: var_smoothing times the largest feature variance overflowed float64."""
    if not np.all(np.isfinite(value)):
        raise ValueError(
            f"var_smoothing={var_smoothing:g} is too large: var_smoothing × the largest "
            f"feature variance ({largest_variance:.3g}) overflows float64; pass a "
            f"smaller var_smoothing (the default is 1e-9)")


_TINY = np.finfo(np.float64).tiny
#: a feature whose class means are below this (√tiny/ε ≈ 7e-139) and whose variance came
#: out as zero may have had deviations whose squares underflowed to zero
_UNDERFLOW_MEAN = float(np.sqrt(_TINY) / np.finfo(np.float64).eps)


def check_variances_representable(variances, mean_size, final, where, error=ValueError):
    """Raise a "rescale the features" error where a variance lost its digits to underflow.

    ``variances`` are the maximum-likelihood within-class variances as the moments give
    them, ``mean_size`` the matching |class mean| (the largest over the classes for a
    pooled variance), ``final`` the variances the model will use (after any floor,
    shrinkage or ``reg``); all of one shape.  A variance is lost when it is below the
    smallest normal float64 (its squares were subnormal) or when it is zero for a
    feature whose means are nonzero but below √tiny/ε (its deviations may have squared
    to zero: X scaled by 1e-170, or subnormal X).  It matters unless what is added to it
    is so large that the lost part is below rounding (``final`` ≥ tiny/ε), as a
    ``var_smoothing`` floor set by other features is.  A feature that is exactly
    constant (zero variance, zero or ordinary means) is left to the caller.
    ``where(index)`` names the entry for the message, e.g. " in class 'a'".
    """
    v = np.asarray(variances, dtype=np.float64)
    size = np.asarray(mean_size, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        lost = (v < _TINY) & ((v > 0) | ((size > 0) & (size < _UNDERFLOW_MEAN)))
        bad = np.argwhere(lost & ~(np.asarray(final) >= _TINY / np.finfo(np.float64).eps))
    if bad.size:
        idx = tuple(bad[0])
        raise error(
            f"feature {idx[-1]} (0-based){where(idx)} is too small for float64 (class mean "
            f"{float(size[idx]):.3g}, variance {float(v[idx]):.3g}): the squares of its "
            f"deviations underflow, so its variance cannot be computed; rescale the "
            f"features (e.g. divide by their standard deviation)"
        )
