"""Sparse X: the integrity of CSR/CSC/COO arrays, canonical CSR, and the arrays the CSR
kernels take (see :mod:`fastgen._validation`)."""

from __future__ import annotations

import numpy as np

from .._runtime import kernel_module
from .arrays import _check_fits, _check_size_and_dtype, report_infinite, report_nonfinite

__all__ = ["csr_arrays", "check_csr_indices"]

sparse_kernels = kernel_module("sparse")


def _check_csr(X, *, name, dtype, min_samples, finite=True, csr_indices=True,
               missing=False):
    target = _check_size_and_dtype(X, name, dtype, min_samples)
    fmt = X.format
    # scipy trusts the arrays of a sparse matrix: broken ones make its own conversions
    # and every kernel read or write outside them, so they are checked before any use
    if fmt in ("csr", "csc"):
        X = _check_compressed(X, name, csr_indices=csr_indices)
    elif fmt == "coo":
        _check_coo(X, name)
    if fmt != "csr":
        X = X.tocsr()  # a new object: the caller's matrix is untouched
    copied = fmt != "csr"
    if X.dtype.kind == "f" and X.dtype.itemsize > target.itemsize:
        # before the cast turns a large value into infinity (``missing``: NaN marks a
        # missing value, only infinity is named here)
        if not missing:
            report_nonfinite(X, name)
        else:
            report_infinite(X, name)
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
STRUCTURE_KERNEL_NNZ = 1 << 19
_STRUCTURE_PIECE_NNZ = 1 << 18


def _check_compressed(X, name, csr_indices=True):
    """Check the three arrays of a CSR (or CSC) matrix; return the matrix.

    Raises a ValueError naming the problem (and the row, or column for CSC): index
    arrays of the wrong type or length, an ``indptr`` that does not start at 0, does
    not end at the number of stored values or decreases (the first such row), or an
    index outside the matrix (the first stored one).  Storage beyond ``indptr[-1]`` is
    dropped as scipy drops it (``prune``), without a copy.

    ``csr_indices=False`` leaves out the scan of the column indices (one read of all of
    them) for a CSR matrix with int32 indices, whose caller's kernel checks each index
    before it uses it and then calls :func:`check_csr_indices` for the message.  Only
    then: scipy's conversions of CSC input write through the indices, and int64
    indices are narrowed to int32 by :func:`csr_arrays`, where a bad value could wrap
    into range.  Everything fastgen and scipy do with a CSR matrix before such a kernel
    (the canonical-format test, sorting, summing duplicates, casting the values) reads
    the indices only inside the rows ``indptr`` gives, compares them and moves them,
    never uses one as a position, so ``indptr`` is still checked here.
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
    scan = csr_indices or csc or indices.dtype != np.int32
    if nnz < STRUCTURE_KERNEL_NNZ or not scan:
        down = np.flatnonzero(ptr[1:] < ptr[:-1])
        row = int(down[0]) if down.size else -1
        lo, hi = ((int(indices.min()), int(indices.max())) if scan and nnz and row < 0
                  else (0, -1))  # (0, -1): no index outside the matrix
    else:
        idx = indices if indices.dtype in (np.int32, np.int64) else indices.astype(np.int64)
        row, lo, hi = sparse_kernels.csr_structure(
            ptr, idx, max(1, min(64, nnz // _STRUCTURE_PIECE_NNZ)))
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


def check_csr_indices(X, name: str = "X") -> None:
    """Raise the ValueError of a malformed CSR matrix X (validated with
    ``csr_indices=False``) if one of its column indices is outside the matrix: for a
    kernel that found such an index (and did not use it)."""
    _check_compressed(X, name)


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


def csr_arrays(X, float64_values=False):
    """(indptr, indices, data) of a validated CSR matrix, as every CSR kernel takes them:
    indptr as int64 and indices as int32 (int64 only past 2**31 features).

    Normalising here keeps one kernel specialisation per data dtype; an int64 matrix
    costs one copy of its indices.  ``float64_values``: float32 data widened to float64
    (a copy of the values only), for kernels that compute in float64 from the values
    whatever their dtype (the logistic passes): the same bits, and one specialisation.
    """
    indptr = X.indptr.astype(np.int64, copy=False)
    indices = X.indices
    if indices.dtype != np.int32 and X.shape[1] <= np.iinfo(np.int32).max:
        indices = indices.astype(np.int32)
    data = X.data.astype(np.float64, copy=False) if float64_values else X.data
    return indptr, indices, data
