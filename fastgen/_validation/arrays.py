"""Array primitives of the validation layer: dtypes, finiteness scans, the float32
range check and the read-only kernel view (see :mod:`fastgen._validation`)."""

from __future__ import annotations

import sys

import numpy as np

from .. import _small as small
from .._runtime import kernel_module

label_kernels = kernel_module("labels")

__all__ = ["is_sparse", "report_nonfinite", "report_infinite", "first_nonfinite_flat"]

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


def first_nonfinite_flat(a: np.ndarray) -> int:
    """Index of the first NaN/inf of a contiguous 1-D float array, or -1."""
    if a.dtype.type not in _FLOAT_TYPES:  # long double: no kernel specialisation
        bad = np.flatnonzero(~np.isfinite(a))
        return int(bad[0]) if bad.size else -1
    if small.small_work(a.shape[0]):  # numpy for small inputs: nothing to compile
        return small.first_nonfinite(a)
    a = writeable_view(a)  # one specialisation for read-only inputs too
    block = label_kernels.NONFINITE_SCAN_BLOCK
    if a.shape[0] < 2 * block:  # too small to be worth waking the thread pool
        return int(label_kernels.first_nonfinite(a))
    if a.dtype == np.float64:
        b = label_kernels.nonfinite_block(a.view(np.int64), np.int64(0x7FF0000000000000))
    else:
        b = label_kernels.nonfinite_block(a.view(np.int32), np.int32(0x7F800000))
    if b < 0:
        return -1
    lo = b * block
    return lo + int(label_kernels.first_nonfinite(a[lo:lo + block]))


def _report_nonfinite(A: np.ndarray, name: str) -> None:
    """Raise naming the first non-finite entry of a C-contiguous 2-D float array."""
    flat = first_nonfinite_flat(A.reshape(-1))
    if flat >= 0:
        i, j = divmod(int(flat), A.shape[1])
        what = "NaN" if np.isnan(A[i, j]) else "infinity"
        raise ValueError(f"{name} contains {what} at row {i}, column {j} (0-based)")


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
                f"(0-based; {_number(A.data[pos])}) overflows {target}"
                + _fits_hint(target)
            )
        return
    for r0 in range(0, A.shape[0], 65536):  # bounded temporaries
        blk = np.abs(A[r0:r0 + 65536]) > big
        if blk.any():
            i, j = np.argwhere(blk)[0]
            raise ValueError(
                f"{name} value at row {r0 + i}, column {j} (0-based; {_number(A[r0 + i, j])}) "
                f"overflows {target}"
                + _fits_hint(target)
            )


def writeable_view(A: np.ndarray) -> np.ndarray:
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


def report_infinite(X, name: str = "X") -> None:
    """Raise naming the first infinite entry of 2-D X (dense, or the stored values of
    CSR; NaN allowed: a missing value), if it holds one; return otherwise."""
    sparse = is_sparse(X)
    bad = np.flatnonzero(np.isinf(X.data if sparse else X.reshape(-1)))
    if not bad.size:
        return
    p = int(bad[0])
    if sparse:
        row, col = int(np.searchsorted(X.indptr, p, side="right") - 1), int(X.indices[p])
    else:
        row, col = divmod(p, X.shape[1])
    raise ValueError(f"{name} contains infinity at row {row}, column {col} (0-based)")


def report_nonfinite(X, name: str = "X") -> None:
    """Raise naming the first NaN/inf of validated X (C-contiguous 2-D array or
    canonical CSR matrix), if it holds one; return otherwise."""
    if not is_sparse(X):
        _report_nonfinite(X, name)
        return
    data = X.data
    bad = first_nonfinite_flat(np.ascontiguousarray(data)) if data.size else -1
    if bad >= 0:
        row = int(np.searchsorted(X.indptr, bad, side="right") - 1)
        col = int(X.indices[bad])
        what = "NaN" if np.isnan(data[bad]) else "infinity"
        raise ValueError(f"{name} contains {what} at row {row}, column {col} (0-based)")


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
