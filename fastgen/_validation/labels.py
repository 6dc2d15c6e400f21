"""Labels: ``y`` to sorted classes and int32 codes, and the label types accepted
(see :mod:`fastgen._validation`)."""

from __future__ import annotations

import numpy as np

from .. import _small as small
from .._runtime import kernel_module
from .arrays import _missing_name, is_sparse, writeable_view

label_kernels = kernel_module("labels")

__all__ = ["check_y", "LABEL_TYPES", "check_class_weights"]


def check_y(y, n_samples: int | None = None, *, name: str = "y", min_classes: int = 1):
    """Validate labels; return ``(classes, codes)`` with int32 codes.

    Integer labels with a compact range take an O(n) path (no sort); anything else goes
    through ``np.unique``.
    """
    if is_sparse(y):
        raise ValueError(f"{name} must be a 1-D array of labels, not a sparse matrix")
    a = y if isinstance(y, np.ndarray) else np.asarray(y)
    if isinstance(y, (list, tuple)) and a.ndim == 1 and a.dtype.kind in "fUS" and (
            a.tolist() != list(y)):
        # numpy's conversion changed a label (integers past 64 bits or mixed with floats
        # made floats, a str lost a trailing NUL) or met a NaN: the object path below
        # refuses with the reason
        a = np.empty(len(y), dtype=object)
        a[:] = y
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        hint = ""
        if isinstance(y, (list, tuple)) and y and isinstance(y[0], tuple):
            hint = f"; tuples are not accepted as labels ({_LABEL_HINTS['tuple']})"
        raise ValueError(f"{name} must be 1-D (n_samples,); got shape {a.shape}{hint}")
    if n_samples is not None and a.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {a.shape[0]} labels but X has {n_samples} rows; they must match"
        )
    if a.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    if a.dtype.kind in "iub":
        ai = a.view(np.uint8) if a.dtype.kind == "b" else a
        lo, hi = int(ai.min()), int(ai.max())
        span = hi - lo + 1
        # labels past int64 (uint64 near 2**64) go through np.unique, which keeps them
        if span <= max(2 * ai.shape[0], 1 << 16) and hi <= np.iinfo(np.int64).max:
            # one integer dtype for the kernel (every label dtype would compile its own
            # specialisation); the values are the same
            coder = small.int_label_codes if small.small_work(span + ai.shape[0]) \
                else label_kernels.int_label_codes  # numpy for small inputs: nothing to compile
            present, codes = coder(
                writeable_view(np.ascontiguousarray(ai, dtype=np.int64)), lo, span)
            classes = (np.flatnonzero(present) + lo).astype(ai.dtype)
            if a.dtype.kind == "b":
                classes = classes.astype(bool)
            _check_n_classes(classes, name, min_classes)
            return classes, codes
    elif a.dtype.kind == "f":
        if not np.all(np.isfinite(a)):
            i = int(np.flatnonzero(~np.isfinite(a))[0])
            if np.isnan(a[i]):
                raise ValueError(f"{name} contains NaN (a missing label) at row {i}; every "
                                 f"sample needs a label")
            raise ValueError(f"{name} contains infinity at row {i}; labels must be finite")
    elif a.dtype.kind in "mM":
        if np.isnat(a).any():
            i = int(np.flatnonzero(np.isnat(a))[0])
            raise ValueError(f"{name} contains NaT (a missing label) at row {i}; every "
                             f"sample needs a label")
    elif a.dtype.kind == "c":
        raise ValueError(f"{name} has complex dtype {a.dtype}; labels must be real or hashable")
    elif a.dtype == object:
        return check_y(_object_labels(a, name), n_samples, name=name,
                       min_classes=min_classes)
    elif a.dtype.kind not in "US":
        raise ValueError(f"{name} has dtype {a.dtype}; labels must be {LABEL_TYPES}")
    try:
        classes, codes = np.unique(a, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"{name} labels cannot be sorted: {exc}") from None
    _check_n_classes(classes, name, min_classes)
    return classes, codes.reshape(-1).astype(np.int32)


#: The label types fastgen accepts (the types a params file stores without pickle).
LABEL_TYPES = ("bool, integers, floats, str, bytes, or numpy datetime64 / timedelta64 "
               "values")

_NUMBER_TYPES = (bool, int, float, np.bool_, np.integer, np.floating)


def _label_kind(v):
    """The family of a label: "number", "str", "bytes", "datetime64", "timedelta64",
    or None for a type fastgen does not accept."""
    if isinstance(v, (str, bytes)):  # np.str_ and np.bytes_ included
        return "str" if isinstance(v, str) else "bytes"
    if isinstance(v, _NUMBER_TYPES):
        return "number"
    if isinstance(v, np.datetime64):
        return "datetime64"
    if isinstance(v, np.timedelta64):
        return "timedelta64"
    return None


_LABEL_HINTS = {
    "date": "convert dates with np.asarray(y, dtype='datetime64[D]')",
    "datetime": "convert them with np.asarray(y, dtype='datetime64[us]')",
    "Timestamp": "convert them with np.asarray(y, dtype='datetime64[ns]')",
    "Decimal": "convert them to float, or to str to keep every digit",
    "Fraction": "convert them to float, or to str",
    "tuple": "join each tuple into one str, or number the combinations",
}


def _object_labels(a, name):
    """An object array of labels (what pandas gives) as a plain numpy array of one of
    the accepted label types, so that classes are saved without pickle; a missing label
    or a type outside :data:`LABEL_TYPES` is named with its row."""
    values = a.tolist()
    kinds = {}
    for i, v in enumerate(values):
        missing = _missing_name(v)
        if missing is not None:
            raise ValueError(f"{name} contains {missing} (a missing label) at row {i}; "
                             f"every sample needs a label")
        kind = _label_kind(v)
        if kind is None:
            t = type(v).__name__
            hint = _LABEL_HINTS.get(t)
            raise ValueError(
                f"{name} has a label of type {t} at row {i} ({v!r}); labels must be "
                f"{LABEL_TYPES}" + (f": {hint}" if hint else "")
            )
        kinds.setdefault(kind, type(v).__name__)
    if len(kinds) > 1:
        names = sorted(kinds.values())
        raise ValueError(f"{name} mixes label types {names}; use one type for all labels")
    kind = next(iter(kinds))
    if kind in ("str", "bytes"):
        nul = "\0" if kind == "str" else b"\0"
        for i, v in enumerate(values):
            if v.endswith(nul):
                raise ValueError(
                    f"{name} has a label ending in a NUL character at row {i} ({v!r}); "
                    f"numpy string arrays drop trailing NULs, which would merge classes"
                )
        return np.array(values, dtype=str if kind == "str" else bytes)
    conv = np.array(values)
    floats = kind == "number" and any(isinstance(v, (float, np.floating)) for v in values)
    if conv.dtype == object or kind == "number" and conv.dtype.kind == "f" and not floats:
        raise ValueError(
            f"{name} has integer labels from {min(values)} to {max(values)}, which no "
            f"64-bit integer type holds; labels must be {LABEL_TYPES}"
        )
    if floats and conv.tolist() != values:
        i = next(i for i, (c, v) in enumerate(zip(conv.tolist(), values)) if c != v)
        raise ValueError(
            f"{name} mixes integer and float labels, and the integer {values[i]!r} at row "
            f"{i} has no exact float64 value; use one type for all labels"
        )
    return conv


def _check_n_classes(classes, name, min_classes):
    if classes.shape[0] < min_classes:
        raise ValueError(
            f"{name} has {classes.shape[0]} distinct class(es); "
            f"at least {min_classes} are needed to fit a classifier"
        )


#: What a class without weight leaves unestimable, per model family (the end of the
#: message of :func:`check_class_weights`).
NO_WEIGHT = {
    "generative": "a generative model cannot estimate its prior or its class-conditional "
                  "distribution (every class needs at least one sample with positive "
                  "weight)",
    "logistic": "logistic regression needs every class of y to carry weight (its "
                "intercept would run to -infinity)",
}


def check_class_weights(classes, weights, family: str = "generative") -> None:
    """Raise ValueError naming the first class whose total weight ``weights[k]`` (K,)
    is not positive: every model fitted to labelled rows refuses such a class, whose
    rows all have sample_weight 0 (``family``: a key of :data:`NO_WEIGHT`)."""
    absent = np.flatnonzero(~(np.asarray(weights, dtype=np.float64) > 0))
    if not absent.size:
        return
    label = classes[absent[0]] if classes is not None else absent[0]
    label = label.item() if hasattr(label, "item") else label
    raise ValueError(
        f"class {label!r} has zero total weight (sample_weight is 0 on all its rows): "
        f"{NO_WEIGHT[family]}; drop its rows from X and y, or give them positive weight"
    )
