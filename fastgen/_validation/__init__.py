"""The one place where inputs are checked and converted.

Every public function passes its arguments through these helpers exactly once; kernels
never validate.  The rules (docs/guide/inputs.rst):

* X is 2-D and finite.  float32 stays float32, float64 stays float64, every other real
  dtype (integers, bool, float16) becomes float64.  Complex and object arrays are
  rejected.  The result is C-contiguous; a C-contiguous float32/float64 input (read-only
  memmaps included) is used as it is, without a copy.
* Sparse X is a scipy CSR matrix or array with int32 or int64 indices; CSC/COO/... are
  converted once; non-canonical input (unsorted or duplicate indices) is canonicalised
  on a copy.  Sparse input is never densified.
* y holds hashable labels; ``classes`` are the sorted unique labels and ``codes`` are
  int32 indices into them.
* sample_weight is finite, >= 0, not all zero and as long as y.

Every rejection is a ``ValueError`` whose message names the argument and the problem.
The caller's arrays are never modified.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers
import sys

import numpy as np

from .arrays import (  # noqa: F401 - report_nonfinite, writeable_view re-exported
    _check_fits,
    _check_size_and_dtype,
    _missing_name,
    _report_nonfinite,
    is_sparse,
    report_infinite,
    report_nonfinite,
    writeable_view,
)
from .labels import LABEL_TYPES, check_class_weights, check_y  # noqa: F401 - re-exported
from .names import (  # noqa: F401 - re-exported
    _listed,
    check_feature_names,
    feature_names_of,
    merged_feature_names,
    stored_feature_names,
)
from .sparse import (  # noqa: F401 - re-exported
    _check_csr,
    check_csr_indices,
    csr_arrays,
)

__all__ = [
    "check_X",
    "check_y",
    "check_class_weights",
    "check_X_y",
    "check_sample_weight",
    "check_priors",
    "check_n_features",
    "check_scalar",
    "check_merge_operands",
    "is_sparse",
    "csr_arrays",
    "check_csr_indices",
    "feature_names_of",
    "check_feature_names",
    "merged_feature_names",
    "stored_feature_names",
]


#: Arrays :func:`check_X` has validated, which a caller passes on to functions that
#: validate their input again (see :func:`validated`).
_VALIDATED = contextvars.ContextVar("fastgen_validated", default=())


def validated(*arrays):
    """Within the block, :func:`check_X` returns these arrays at once.

    For a public function that validated X (``check_X``'s result, or an array derived
    from it that ``check_X`` would return unchanged) and then calls a function of the
    same package that validates its input again: inputs are read once for validation.
    """
    return _scoped(_VALIDATED, _VALIDATED.get() + arrays)


@contextlib.contextmanager
def _scoped(var, value):
    """``var`` set to ``value`` within the block (and in no other thread or task)."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def check_X(
    X,
    *,
    name: str = "X",
    allow_sparse: bool = False,
    dtype=None,
    min_samples: int = 1,
    finite: bool = True,
    csr_indices: bool = True,
    missing: bool = False,
):
    """Validate and convert a 2-D data matrix.

    Parameters
    ----------
    X : array-like or scipy sparse matrix
    name : str
        The argument's name, used in error messages.
    allow_sparse : bool
        Accept scipy sparse input (returned as canonical CSR).
    dtype : None, np.float32 or np.float64
        Force this floating dtype (used at predict time to match the fitted params);
        None applies the float32-stays-float32 rule.
    min_samples : int
        Minimum number of rows.
    finite : bool
        Scan X (dense, or the stored values of sparse X) for NaN/inf now.  A caller
        whose kernel finds non-finite values itself (through its small results, or on
        its way through X) passes False and then calls :func:`check_finite_result` or
        :func:`report_nonfinite`, saving a full read of X; the caller's contract is
        unchanged.
    missing : bool
        NaN marks a missing value (``nan_policy="marginalize"``; with ``finite=False``):
        a data frame's own markers (pd.NA, None) become NaN, and a narrowing cast names
        only infinity.
    csr_indices : bool
        Scan the column indices of CSR X now (with int32 indices; other sparse input is
        always scanned).  A caller whose kernel checks each index before it uses it
        passes False and, when the kernel reports a bad row, calls
        :func:`check_csr_indices` for the message, saving a full read of the indices.
        The row pointers are checked either way.

    Returns
    -------
    ndarray (C-contiguous float32/float64) or scipy.sparse.csr_matrix/csr_array
    """
    if any(X is a for a in _VALIDATED.get()):
        return X
    if is_sparse(X):
        if not allow_sparse:
            raise ValueError(
                f"{name} is a scipy sparse matrix, which this function does not accept; "
                f"pass a dense array (e.g. {name}.toarray()) if it fits in memory"
            )
        return _check_csr(X, name=name, dtype=dtype, min_samples=min_samples,
                          finite=finite, csr_indices=csr_indices, missing=missing)
    if isinstance(X, np.ndarray):
        A = X
    else:
        try:
            A = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} could not be converted to an array: {exc}") from None
    if A.dtype == object:
        A = _object_to_float(A, X, name, missing_ok=missing)
    if A.ndim != 2:
        hint = " (reshape a single feature with X.reshape(-1, 1))" if A.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got {A.ndim}-D{hint}")
    target = _check_size_and_dtype(A, name, dtype, min_samples)
    if A.dtype != target or not A.flags.c_contiguous:
        if A.dtype.kind == "f" and A.dtype.itemsize > target.itemsize:
            # NaN and infinity are named as such before a narrowing cast (``missing``:
            # NaN marks a missing value and casts as it is)
            if missing:
                report_infinite(A, name)
            else:
                _report_nonfinite(np.ascontiguousarray(A), name)
            _check_fits(A, target, name)
        A = np.ascontiguousarray(A, dtype=target)
    if finite:
        _report_nonfinite(A, name)
    return writeable_view(A)


def _column_label(X, j):
    """``column j``, with the data frame's name of the column when X has one."""
    cols = getattr(X, "columns", None)
    if cols is not None and not isinstance(X, np.ndarray):
        try:
            return f"column {j} ({list(cols)[j]!r})"
        except (IndexError, TypeError):
            pass
    return f"column {j}"


def _object_to_float(A, X, name, missing_ok=False):
    """An object array as float64; a missing-value marker (None, pd.NA, NaN, NaT) or
    a non-number is named with its row and column.  ``missing_ok`` (NaN allowed: a
    missing value, ``nan_policy="marginalize"``): the markers become NaN."""
    try:
        F = A.astype(np.float64)
    except (TypeError, ValueError):
        F = None
    if F is not None and (missing_ok or not np.isnan(F).any()):
        return F
    if missing_ok:
        try:
            return np.array([np.nan if _missing_name(v) is not None else v
                             for v in A.reshape(-1).tolist()],
                            dtype=np.float64).reshape(A.shape)
        except (TypeError, ValueError):
            pass  # a non-number: named below
    # the slow path only where conversion failed or made a NaN: name the first culprit
    for pos, v in enumerate(A.reshape(-1).tolist()):
        missing = _missing_name(v)
        if missing is not None and missing_ok:
            continue
        if missing is None:
            if F is not None:
                continue
            try:
                float(v)
                continue
            except (TypeError, ValueError):
                pass
        i, j = divmod(pos, A.shape[1]) if A.ndim == 2 else (pos, 0)
        where = f"row {i}, {_column_label(X, j)}" if A.ndim == 2 else f"index {pos}"
        if missing is not None:
            raise ValueError(
                f"{name} contains a missing value ({missing}) at {where}; every value is "
                f"needed: drop or impute the missing ones first"
            )
        raise ValueError(
            f"{name} has dtype object with non-numeric entries ({v!r} at {where}); "
            f"expected real numbers"
        )
    return F  # its NaN came from a number (e.g. the string "nan"): named later


def check_finite_result(X: np.ndarray, *results, name: str = "X",
                        sample_weight=None) -> None:
    """Validate X after a fit that skipped the up-front scan (``finite=False``).

    NaN or infinity anywhere in X makes sums over it non-finite, so finite results
    prove finite input.  Otherwise scan X to name the first bad entry; if X is finite
    after all, the sums overflowed (the message names the weights too when
    ``sample_weight``, the validated weights, exceed 1: their products overflowed).
    """
    if all(np.all(np.isfinite(r)) for r in results):
        return
    _report_nonfinite(X, name)
    w = sample_weight
    if w is not None and w.shape[0] and float(np.max(w)) > 1.0:
        raise ValueError(
            f"{name} has values so large that their squares overflow float64 once "
            f"weighted (sample_weight up to {float(np.max(w)):.3g}); rescale the "
            f"features (e.g. divide by their standard deviation) or sample_weight "
            f"(e.g. divide it by its mean)"
        )
    raise ValueError(
        f"{name} has values so large that their squares overflow float64; rescale the "
        f"features (e.g. divide by their standard deviation)"
    )


#: Set while validating one part of a larger sample (a Dask block), whose weights may
#: all be zero; the caller checks the whole (see :func:`weights_of_a_part`).
_PART_OF_A_WHOLE = contextvars.ContextVar("fastgen_part_of_a_whole", default=False)


def weights_of_a_part():
    """Within the block, :func:`check_sample_weight` accepts weights that are zero
    everywhere: the rows are one part of a sample whose total weight the caller
    checks (a block of a Dask array, whose boundaries the user does not choose)."""
    return _scoped(_PART_OF_A_WHOLE, True)


def check_sample_weight(sample_weight, n_samples: int):
    """Return a float64 weight vector, or an empty array meaning "all ones".

    Kernels take the empty array as the unweighted case, so each has a single signature.
    """
    if sample_weight is None:
        return np.empty(0, dtype=np.float64)
    w = np.asarray(sample_weight)
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), matching the rows of X; "
            f"got {w.shape}"
        )
    if w.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight has dtype {w.dtype}; expected real numbers")
    w = np.ascontiguousarray(w, dtype=np.float64)
    if not np.all(np.isfinite(w)):
        i = int(np.flatnonzero(~np.isfinite(w))[0])
        raise ValueError(
            f"sample_weight contains a non-finite value at index {i} ({w[i]}): a row's "
            f"weight cannot be missing or infinite (NaN marks a missing value in X "
            f"only); give every row a finite weight >= 0 (0 leaves a row out of the "
            f"fit)")
    if np.any(w < 0):
        i = int(np.flatnonzero(w < 0)[0])
        raise ValueError(f"sample_weight contains a negative value ({w[i]}) at index {i}")
    if not np.any(w > 0):
        if not _PART_OF_A_WHOLE.get():
            raise ValueError(
                "sample_weight is zero everywhere; at least one sample needs weight")
        return writeable_view(w)
    with np.errstate(over="ignore"):
        total = float(w.sum())
    if not np.isfinite(total):
        raise ValueError(
            f"sample_weight is too large for float64: its sum overflows (largest weight "
            f"{float(w.max()):.3g}); rescale it (e.g. divide it by its mean)")
    if float(w.max()) < _MIN_WEIGHT:
        raise ValueError(
            f"sample_weight is too small for float64: its largest value "
            f"{float(w.max()):.3g} is below {_MIN_WEIGHT:.3g} (2^-970), where weighted "
            f"sums come within 2^52 of the subnormal range and lose precision; rescale "
            f"it (e.g. divide it by its largest value)")
    return writeable_view(w)  # read-only weights (a pandas column) reach kernels writeable


#: The largest sample weight must reach 2^-970 ≈ 1.0e-292 (see check_sample_weight).
_MIN_WEIGHT = 2.0 ** -970


def check_X_y(X, y, sample_weight=None, *, allow_sparse=False, min_classes=1):
    """Validate X, y and sample_weight together; return (X, classes, codes, w)."""
    X = check_X(X, allow_sparse=allow_sparse)
    classes, codes = check_y(y, X.shape[0], min_classes=min_classes)
    w = check_sample_weight(sample_weight, X.shape[0])
    return X, classes, codes, w


def check_priors(priors, classes, *, name: str = "priors"):
    """Validate user class priors: shape (K,), finite, >= 0, summing to one.

    ``classes`` are the class labels (or just their number K).  ``priors`` is a
    sequence in the order of the classes, or a mapping (a dict or a pandas Series)
    from each class label to its prior, returned in the order of the classes.
    """
    if priors is None:
        return None
    n_classes = classes if isinstance(classes, numbers.Integral) else len(classes)
    if _is_mapping(priors):
        priors = _priors_in_class_order(priors, classes, name)
    try:
        p = np.asarray(priors, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be {n_classes} numbers in the order of the classes, or a dict "
            f"from class label to prior; got {type(priors).__name__}"
        ) from None
    if p.ndim != 1 or p.shape[0] != n_classes:
        raise ValueError(f"{name} must have shape ({n_classes},), one per class; got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be finite and non-negative; got {p}")
    total = p.sum()
    if not np.isclose(total, 1.0, rtol=0, atol=1e-8):
        raise ValueError(f"{name} must sum to 1; they sum to {total:.10g}")
    return p / total


def _is_mapping(obj):
    import collections.abc

    if isinstance(obj, collections.abc.Mapping):
        return True
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.Series)


def _priors_in_class_order(priors, classes, name):
    """The values of a {class label: prior} mapping in the order of ``classes``."""
    if isinstance(classes, numbers.Integral):
        raise ValueError(f"{name} given as a mapping needs the class labels; pass a "
                         f"sequence in the order of the classes")
    given = dict(priors.items())
    labels = list(classes)  # numpy scalars: equal (and hash equal) to Python's values
    shown = classes.tolist()
    try:
        missing = [shown[i] for i, c in enumerate(labels) if c not in given]
        known = set(labels)
        extra = [k for k in given if k not in known]
    except TypeError as exc:  # an unhashable key
        raise ValueError(f"{name} has a key that is not a class label: {exc}") from None
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"no entry for the class(es) {_listed(missing)}")
        if extra:
            parts.append(f"entries for {_listed(extra)}, which are not classes of y")
        raise ValueError(f"{name} has {' and '.join(parts)}; the classes are "
                         f"{_listed(shown)}")
    return [given[c] for c in labels]


def check_n_features(X, n_features: int, *, name: str = "X"):
    """Raise unless X has the number of features the model was fitted on."""
    if X.shape[1] != n_features:
        raise ValueError(
            f"{name} has {X.shape[1]} features, but the model was fitted with {n_features}"
        )


def check_scalar(value, name, *, low=None, high=None, low_inclusive=True, high_inclusive=True):
    """Validate a real scalar option and return it as float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {value!r}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite; got {value!r}")
    if low is not None and (v < low or (v == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}; got {value!r}")
    if high is not None and (v > high or (v == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {op} {high}; got {value!r}")
    return v


def check_merge_operands(a, b, cls, noun: str, kind: str) -> None:
    """Check the two operands of an exact merge of statistics.

    Both must be ``cls`` instances with the same ``kind`` attribute (the kind of
    statistics: "kind" of :class:`~fastgen.ClassMoments`, "model" of
    :class:`~fastgen.NBCounts`) and the same ``n_features``; ``noun`` names the
    statistics in the messages ("moments", "counts").
    """
    for name, m in (("a", a), ("b", b)):
        if not isinstance(m, cls):
            raise ValueError(f"{name} must be {cls.__name__}; got {type(m).__name__}")
    ka, kb = getattr(a, kind), getattr(b, kind)
    if ka != kb:
        raise ValueError(f"cannot merge {noun} of {kind} {ka!r} with {kind} {kb!r}")
    if a.n_features != b.n_features:
        raise ValueError(
            f"cannot merge {noun} with {a.n_features} and {b.n_features} features"
        )
