"""The one place where inputs are checked and converted.

Every public function passes its arguments through these helpers exactly once; kernels
never validate.  The rules (see README, "What fastgen promises about input"):

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

import numbers
import sys

import numpy as np

from .kernels.labels import _SCAN_BLOCK, first_nonfinite, int_label_codes, nonfinite_block

__all__ = [
    "check_X",
    "check_y",
    "check_X_y",
    "check_sample_weight",
    "check_priors",
    "check_n_features",
    "check_scalar",
    "check_merge_operands",
    "is_sparse",
    "csr_arrays",
    "feature_names_of",
    "check_feature_names",
    "merged_feature_names",
]

_FLOAT_TYPES = (np.float32, np.float64)


def is_sparse(X) -> bool:
    """True for any scipy sparse matrix or array.

    scipy.sparse is not imported here (it costs a noticeable part of ``import fastgen``):
    if nobody has imported it, X cannot be a sparse matrix.
    """
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def _dense_dtype(dtype: np.dtype, name: str) -> np.dtype:
    if dtype.kind == "c":
        raise ValueError(f"{name} has complex dtype {dtype}; only real-valued data is supported")
    if dtype.kind not in "biuf":
        raise ValueError(
            f"{name} has dtype {dtype}; expected a real numeric dtype (float, int or bool)"
        )
    if dtype.type in _FLOAT_TYPES:
        return dtype
    return np.dtype(np.float64)


def _first_nonfinite_flat(a: np.ndarray) -> int:
    """Index of the first NaN/inf of a contiguous 1-D float array, or -1."""
    if a.dtype.type not in _FLOAT_TYPES:  # long double: no kernel specialisation
        bad = np.flatnonzero(~np.isfinite(a))
        return int(bad[0]) if bad.size else -1
    a = _kernel_view(a)  # one specialisation for read-only inputs too
    if a.shape[0] < 2 * _SCAN_BLOCK:  # too small to be worth waking the thread pool
        return int(first_nonfinite(a))
    if a.dtype == np.float64:
        b = nonfinite_block(a.view(np.int64), np.int64(0x7FF0000000000000))
    else:
        b = nonfinite_block(a.view(np.int32), np.int32(0x7F800000))
    if b < 0:
        return -1
    lo = b * _SCAN_BLOCK
    return lo + int(first_nonfinite(a[lo:lo + _SCAN_BLOCK]))


def _report_nonfinite(A: np.ndarray, name: str) -> None:
    """Raise naming the first non-finite entry of a C-contiguous 2-D float array."""
    flat = _first_nonfinite_flat(A.reshape(-1))
    if flat >= 0:
        i, j = divmod(int(flat), A.shape[1])
        what = "NaN" if np.isnan(A[i, j]) else "infinity"
        raise ValueError(f"{name} contains {what} at row {i}, column {j}")


def check_X(
    X,
    *,
    name: str = "X",
    allow_sparse: bool = False,
    dtype=None,
    min_samples: int = 1,
    finite: bool = True,
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

    Returns
    -------
    ndarray (C-contiguous float32/float64) or scipy.sparse.csr_matrix/csr_array
    """
    if is_sparse(X):
        if not allow_sparse:
            raise ValueError(
                f"{name} is a scipy sparse matrix, which this function does not accept; "
                f"pass a dense array (e.g. {name}.toarray()) if it fits in memory"
            )
        return _check_csr(X, name=name, dtype=dtype, min_samples=min_samples,
                          finite=finite)
    if isinstance(X, np.ndarray):
        A = X
    else:
        try:
            A = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} could not be converted to an array: {exc}") from None
    if A.dtype == object:
        A = _object_to_float(A, X, name)
    if A.ndim != 2:
        hint = " (reshape a single feature with X.reshape(-1, 1))" if A.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got {A.ndim}-D{hint}")
    target = _check_size_and_dtype(A, name, dtype, min_samples)
    if A.dtype != target or not A.flags.c_contiguous:
        if A.dtype.kind == "f" and A.dtype.itemsize > target.itemsize:
            _report_nonfinite(np.ascontiguousarray(A), name)
            _check_fits(A, target, name)
        A = np.ascontiguousarray(A, dtype=target)
    if finite:
        _report_nonfinite(A, name)
    return _kernel_view(A)


def _missing_name(v):
    """How to name ``v`` if it is a missing-value marker (None, NaN, pd.NA, NaT), else
    None."""
    if v is None:
        return "None"
    kind = type(v).__name__
    if kind in ("NAType", "NaTType"):
        return "pd.NA" if kind == "NAType" else "NaT"
    if isinstance(v, (float, np.floating)) and v != v:
        return "NaN"
    if isinstance(v, (np.datetime64, np.timedelta64)) and np.isnat(v):
        return "NaT"
    return None


def _column_label(X, j):
    """``column j``, with the data frame's name of the column when X has one."""
    cols = getattr(X, "columns", None)
    if cols is not None and not isinstance(X, np.ndarray):
        try:
            return f"column {j} ({list(cols)[j]!r})"
        except (IndexError, TypeError):
            pass
    return f"column {j}"


def _object_to_float(A, X, name):
    """An object array as float64; a missing-value marker (None, pd.NA, NaN, NaT) or
    a non-number is named with its row and column."""
    try:
        F = A.astype(np.float64)
    except (TypeError, ValueError):
        F = None
    if F is not None and not np.isnan(F).any():
        return F
    # the slow path only where conversion failed or made a NaN: name the first culprit
    for pos, v in enumerate(A.reshape(-1).tolist()):
        missing = _missing_name(v)
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


def _number(v):
    """A float for a message, long doubles beyond float64's range included."""
    if np.asarray(v).dtype.itemsize <= 8 or abs(v) <= np.finfo(np.float64).max:
        return f"{float(v):g}"
    return str(v)


def _fits_hint(target):
    if target == np.float32:
        return " (the dtype the model was fitted in)"
    return " (fastgen computes in float64 at most; rescale the features)"


def _check_fits(A: np.ndarray, target: np.dtype, name: str) -> None:
    """Raise if a finite value of A (dense, or CSR) overflows the narrower float dtype
    ``target``."""
    big = np.finfo(target).max
    if is_sparse(A):
        over = np.flatnonzero(np.abs(A.data) > big)
        if over.size:
            pos = int(over[0])
            row = int(np.searchsorted(A.indptr, pos, side="right") - 1)
            raise ValueError(
                f"{name} value at row {row}, column {int(A.indices[pos])} "
                f"({_number(A.data[pos])}) overflows {target}"
                + _fits_hint(target)
            )
        return
    for r0 in range(0, A.shape[0], 65536):  # bounded temporaries
        blk = np.abs(A[r0:r0 + 65536]) > big
        if blk.any():
            i, j = np.argwhere(blk)[0]
            raise ValueError(
                f"{name} value at row {r0 + i}, column {j} ({_number(A[r0 + i, j])}) overflows "
                f"{target}"
                + _fits_hint(target)
            )


def _kernel_view(A: np.ndarray) -> np.ndarray:
    """A writeable-flagged alias of a read-only array (no copy).

    numba compiles a separate specialisation of every kernel for read-only arrays, which
    would double compile time for memmaps and other read-only inputs.  Kernels never
    write to their inputs, so they get an alias that carries the same memory with the
    writeable flag set; the caller's array object itself is untouched.
    """
    if A.flags.writeable:
        return A
    iface = dict(A.__array_interface__)
    iface["data"] = (iface["data"][0], False)

    class _Alias:
        __array_interface__ = iface

        def __init__(self, base):
            self.base = base  # keeps the memory alive as long as the alias

    return np.asarray(_Alias(A))


def _check_size_and_dtype(X, name, dtype, min_samples):
    """Check the shape of 2-D X (dense or CSR) and its dtype; return the dtype to
    compute in (``dtype`` if given, else X's own float dtype, other reals as float64)."""
    n, d = X.shape
    if n < min_samples:
        raise ValueError(f"{name} has {n} rows; at least {min_samples} required")
    if d == 0:
        raise ValueError(f"{name} has 0 features (shape {X.shape}); at least 1 required")
    target = np.dtype(dtype) if dtype is not None else _dense_dtype(X.dtype, name)
    if dtype is not None:
        _dense_dtype(X.dtype, name)
    return target


def _check_csr(X, *, name, dtype, min_samples, finite=True):
    target = _check_size_and_dtype(X, name, dtype, min_samples)
    fmt = X.format
    # scipy trusts the arrays of a sparse matrix: broken ones make its own conversions
    # and every kernel read or write outside them, so they are checked before any use
    if fmt in ("csr", "csc"):
        X = _check_compressed(X, name)
    elif fmt == "coo":
        _check_coo(X, name)
    if fmt != "csr":
        X = X.tocsr()  # a new object: the caller's matrix is untouched
    copied = fmt != "csr"
    if X.dtype.kind == "f" and X.dtype.itemsize > target.itemsize:
        report_nonfinite(X, name)  # before the cast turns a large value into infinity
        _check_fits(X, target, name)
    if X.dtype != target:
        X = X.astype(target)
        copied = True
    if X.indices.dtype not in (np.int32, np.int64) or X.indptr.dtype != X.indices.dtype:
        X = X.copy() if not copied else X
        X.indices = X.indices.astype(np.int64)
        X.indptr = X.indptr.astype(np.int64)
        copied = True
    if not X.has_canonical_format:
        X = X.copy() if not copied else X
        X.sum_duplicates()  # sorts indices and merges duplicates, on our copy
        copied = True
    if finite:
        report_nonfinite(X, name)
    return X


#: Matrices with fewer stored values are checked by numpy (no kernel to compile); larger
#: ones by one parallel read of the indices (numpy's min and max would take two), in
#: pieces of _STRUCTURE_PIECE_NNZ values (at most 64).
_STRUCTURE_KERNEL_NNZ = 1 << 19
_STRUCTURE_PIECE_NNZ = 1 << 18


def _check_compressed(X, name):
    """Check the three arrays of a CSR (or CSC) matrix; return the matrix.

    Raises a ValueError naming the problem (and the row, or column for CSC): index
    arrays of the wrong type or length, an ``indptr`` that does not start at 0, does
    not end at the number of stored values or decreases (the first such row), or an
    index outside the matrix (the first stored one).  Storage beyond ``indptr[-1]`` is
    dropped as scipy drops it (``prune``), without a copy.
    """
    csc = X.format == "csc"
    major, minor = ("column", "row") if csc else ("row", "column")
    n_major, n_minor = (X.shape[1], X.shape[0]) if csc else X.shape
    what = f"{name} (a {X.format.upper()} matrix)"
    indptr, indices, data = X.indptr, X.indices, X.data
    for arr, arr_name in ((indptr, "indptr"), (indices, "indices"), (data, "data")):
        if not isinstance(arr, np.ndarray) or arr.ndim != 1:
            raise ValueError(f"{what} has a {arr_name} that is not a 1-D array")
    for arr, arr_name in ((indptr, "indptr"), (indices, "indices")):
        if arr.dtype.kind not in "iu":
            raise ValueError(f"{what} has {arr_name} of dtype {arr.dtype}; expected integers")
    if indptr.shape[0] != n_major + 1:
        raise ValueError(
            f"{what} has {n_major} {major}s but an indptr of length {indptr.shape[0]}; "
            f"it must have length {n_major + 1}"
        )
    if indices.shape[0] != data.shape[0]:
        raise ValueError(
            f"{what} has {indices.shape[0]} indices but {data.shape[0]} data values; "
            f"they must match"
        )
    if indptr[0] != 0:
        raise ValueError(f"{what} has indptr[0] = {indptr[0]}; it must be 0")
    nnz = int(indptr[-1])
    if not 0 <= nnz <= indices.shape[0]:
        raise ValueError(
            f"{what} has indptr[-1] = {nnz} but {indices.shape[0]} stored values; "
            f"indptr[-1] must be the number of stored values"
        )
    if nnz < indices.shape[0]:  # unused storage at the end: views of the used part
        indices, data = indices[:nnz], data[:nnz]
        X = type(X)((data, indices, indptr), shape=X.shape, copy=False)
    ptr = indptr.astype(np.int64, copy=False)
    if nnz < _STRUCTURE_KERNEL_NNZ:
        down = np.flatnonzero(ptr[1:] < ptr[:-1])
        row = int(down[0]) if down.size else -1
        lo, hi = (int(indices.min()), int(indices.max())) if nnz and row < 0 else (0, -1)
    else:
        from .kernels.sparse import csr_structure

        idx = indices if indices.dtype in (np.int32, np.int64) else indices.astype(np.int64)
        row, lo, hi = csr_structure(ptr, idx, max(1, min(64, nnz // _STRUCTURE_PIECE_NNZ)))
    if row >= 0:
        raise ValueError(
            f"{what} has a decreasing indptr at {major} {row} (indptr[{row}] = "
            f"{ptr[row]}, indptr[{row + 1}] = {ptr[row + 1]}); indptr must be "
            f"non-decreasing"
        )
    if lo >= 0 and hi < n_minor:
        return X
    pos = int(np.flatnonzero((indices < 0) | (indices >= n_minor))[0])
    row = int(np.searchsorted(ptr, pos, side="right") - 1)
    raise ValueError(
        f"{what} has {minor} index {int(indices[pos])} in {major} {row}, outside "
        f"0..{n_minor - 1} (it has {n_minor} {minor}s); the matrix's indices are corrupt"
    )


def _check_coo(X, name):
    """Raise unless the coordinates of a COO matrix lie inside its shape."""
    for axis, (coord, size) in enumerate(zip(X.coords, X.shape)):
        word = ("row", "column")[axis]
        if coord.ndim != 1 or coord.shape[0] != X.data.shape[0]:
            raise ValueError(f"{name} (a COO matrix) has {word} coordinates that do not "
                             f"match its {X.data.shape[0]} stored values")
        if coord.size and (coord.min() < 0 or coord.max() >= size):
            bad = int(np.flatnonzero((coord < 0) | (coord >= size))[0])
            raise ValueError(
                f"{name} (a COO matrix) has {word} index {int(coord[bad])} at stored value "
                f"{bad}, outside 0..{size - 1}"
            )


def csr_arrays(X):
    """(indptr, indices, data) of a validated CSR matrix, as every CSR kernel takes them:
    indptr as int64 and indices as int32 (int64 only past 2**31 features).

    Normalising here keeps one kernel specialisation per data dtype; an int64 matrix
    costs one copy of its indices.
    """
    indptr = X.indptr.astype(np.int64, copy=False)
    indices = X.indices
    if indices.dtype != np.int32 and X.shape[1] <= np.iinfo(np.int32).max:
        indices = indices.astype(np.int32)
    return indptr, indices, X.data


def report_nonfinite(X, name: str = "X") -> None:
    """Raise naming the first NaN/inf of validated X (C-contiguous 2-D array or
    canonical CSR matrix), if it holds one; return otherwise."""
    if not is_sparse(X):
        _report_nonfinite(X, name)
        return
    data = X.data
    bad = _first_nonfinite_flat(np.ascontiguousarray(data)) if data.size else -1
    if bad >= 0:
        row = int(np.searchsorted(X.indptr, bad, side="right") - 1)
        col = int(X.indices[bad])
        what = "NaN" if np.isnan(data[bad]) else "infinity"
        raise ValueError(f"{name} contains {what} at row {row}, column {col}")


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
            present, codes = int_label_codes(_kernel_view(np.ascontiguousarray(ai)), lo, span)
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
        raise ValueError(f"sample_weight contains a non-finite value at index {i}")
    if np.any(w < 0):
        i = int(np.flatnonzero(w < 0)[0])
        raise ValueError(f"sample_weight contains a negative value ({w[i]}) at index {i}")
    if not np.any(w > 0):
        raise ValueError("sample_weight is zero everywhere; at least one sample needs weight")
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
    return w


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


# ------------------------------------------------------------------ feature names
#
# scikit-learn's rule: a data frame whose column names are all strings has feature
# names; anything else (arrays, sparse matrices, frames with integer columns) has none.


def feature_names_of(X):
    """The column names of a data frame X as a tuple of str, or None.

    Names count only where every column name is a str and they are distinct (a frame
    with repeated names has no usable names).  Mixing str and other column names is an
    error, as in scikit-learn.  Arrays and sparse matrices have no names.
    """
    if isinstance(X, np.ndarray) or is_sparse(X):
        return None
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(X, pd.DataFrame):
        cols = list(X.columns)
    elif hasattr(X, "__dataframe__"):
        cols = getattr(X, "columns", None)
        if cols is None:
            cols = X.__dataframe__().column_names()
        cols = list(cols)
    else:
        return None
    if not cols:
        return None
    is_str = [isinstance(c, str) for c in cols]
    if not all(is_str):
        if any(is_str):
            kinds = sorted({type(c).__name__ for c in cols})
            raise ValueError(
                f"X has column names of the types {kinds}; feature names must all be "
                f"str (convert them with X.columns = X.columns.astype(str)) or none be str"
            )
        return None
    names = tuple(str(c) for c in cols)
    return names if len(set(names)) == len(names) else None


def _listed(names, limit=8):
    shown = ", ".join(repr(n) for n in names[:limit])
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return f"[{shown}{more}]"


def check_feature_names(fitted, names, owner, *, name="X"):
    """Check the names of data scored by a model fitted with names ``fitted``.

    ``names`` are the names of the data (:func:`feature_names_of`), ``owner`` the
    model's type name for the messages.  Names that differ from the fitted ones in
    membership or order raise a ValueError listing the missing, the unexpected and the
    misplaced columns.  Names on one side only warn, as scikit-learn does (the columns
    cannot be matched, only counted).
    """
    from ._warn import warn

    if fitted is None and names is None:
        return
    if fitted is None:
        warn(f"{name} has feature names, but {owner} was fitted without feature names",
             UserWarning)
        return
    if names is None:
        warn(f"{name} does not have valid feature names, but {owner} was fitted with "
             f"feature names", UserWarning)
        return
    if tuple(names) == tuple(fitted):
        return
    known, given = set(fitted), set(names)
    missing = [n for n in fitted if n not in given]
    unexpected = [n for n in names if n not in known]
    fix = f"pass the fitted columns in the fitted order, e.g. {name}[list(params.feature_names)]"
    if missing or unexpected:
        parts = ([f"missing {_listed(missing)}"] if missing else []) + (
            [f"unexpected {_listed(unexpected)}"] if unexpected else [])
        raise ValueError(f"the columns of {name} do not match the feature names {owner} "
                         f"was fitted with: {'; '.join(parts)}; {fix}")
    moved = [f"column {j} is {n!r} where the fit had {f!r}"
             for j, (n, f) in enumerate(zip(names, fitted)) if n != f]
    extra = f" ({len(moved) - 3} more)" if len(moved) > 3 else ""
    raise ValueError(f"the columns of {name} are those {owner} was fitted with in another "
                     f"order ({'; '.join(moved[:3])}{extra}); {fix}")


def merged_feature_names(a, b, noun):
    """The feature names of the merge of two sets of statistics with names ``a``, ``b``.

    Different names are an error (the columns would be added up wrongly); names on one
    side only warn and are kept, as scoring unnamed data after a named fit warns.
    """
    from ._warn import warn

    if a == b:
        return a
    if a is None or b is None:
        warn(f"merging {noun} with feature names and {noun} without; the merged {noun} "
             f"keep the names {_listed(a if b is None else b)}", UserWarning)
        return a if b is None else b
    known, other = set(a), set(b)
    missing = [n for n in a if n not in other]
    unexpected = [n for n in b if n not in known]
    parts = ([f"only in the first {_listed(missing)}"] if missing else []) + (
        [f"only in the second {_listed(unexpected)}"] if unexpected else [])
    what = "; ".join(parts) or "the same names in another order"
    raise ValueError(f"cannot merge {noun} with different feature names: {what}")
