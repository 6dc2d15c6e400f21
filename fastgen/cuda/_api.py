"""Device implementations behind :mod:`fastgen.cuda` (imports numba.cuda).

Validation happens here, on the device, with the messages of :mod:`fastgen._validation`:
X is scanned for NaN/inf inside the moment and scoring kernels (no extra pass), labels
are coded by small kernels (integer labels; any other label type is copied to the host,
which costs n values, not n·d), sample weights are checked by one kernel.  Arrays in,
arrays out: the moments come back as small host arrays, which the statistics layer
(:mod:`fastgen.stats`) turns into ``ClassMoments`` and the models into params; scoring
takes the tables the params hand over (``params.scoring_tables()``, the tables the
CPU scoring uses) from the family's scorer, so no model code is duplicated or imported
here.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numba import cuda

from . import kernels as device_kernels
from ._detect import as_numba, is_device_array, like_caller

__all__ = [
    "device_X",
    "device_labels",
    "device_weights",
    "moments_arrays_device",
    "score_tables",
]

#: Threads per CUDA block.  Results do not depend on it (the work split and every
#: summation order are fixed by the problem size); the tests run the simulator with
#: fewer threads to save time.
THREADS = 128
#: Most row blocks of a moments pass, fewest rows per block, and the most float64 values
#: the per-block partial sums may hold (256 MiB).  Sizes only: never the device.
MAX_BLOCKS = 1024
MIN_BLOCK_ROWS = 64
PARTIAL_DOUBLES = 1 << 25

_KINDS = {"pooled": device_kernels.KIND_POOLED, "per_class": device_kernels.KIND_PER_CLASS,
          "diagonal": device_kernels.KIND_DIAGONAL}
_OVERFLOW = ("{name} has values so large that their squares overflow float64; rescale "
             "the features (e.g. divide by their standard deviation)")


# numba warns when a launch has few blocks ("Grid size N will likely result in GPU
# under-utilization"): fastgen picks the grid from the data, so on small inputs that is
# expected, and a caller's warnings-as-errors must not turn it into a failure.
_LOW_OCCUPANCY = r".*Grid size \d+ will likely result in GPU under-utilization"


def _quiet_launch(kernel, grid, *args):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_LOW_OCCUPANCY)
        kernel[grid, THREADS](*args)


def _launch(kernel, n_threads, *args):
    _quiet_launch(kernel, max(1, -(-int(n_threads) // THREADS)), *args)


def _host(a):
    return a.copy_to_host()


def _element(A, i, j=None):
    """One element of device array A, copied to the host."""
    if j is None:
        return _host(A[i:i + 1])[0]
    return _host(A[i:i + 1, j:j + 1])[0, 0]


# ----------------------------------------------------------------------- validation


def _raise_nonfinite(A, flat, name):
    i, j = divmod(int(flat), A.shape[1])
    what = "NaN" if np.isnan(_element(A, i, j)) else "infinity"
    raise ValueError(f"{name} contains {what} at row {i}, column {j}")


def _nonfinite_flat(A):
    n, d = A.shape
    flag = cuda.to_device(np.array([n * d], dtype=np.int64))
    _launch(device_kernels.nonfinite_index, n * d, A, flag)
    return int(_host(flag)[0])


def device_X(X, name="X", dtype=None):
    """Check a device data matrix as :func:`fastgen._validation.check_X` checks a host
    one (2-D, rows and features, real dtype; float32 stays float32, other real dtypes
    become float64, or ``dtype`` when given) and return it as a numba device array.

    NaN/inf are not scanned for here: the kernels find them on their way through X.
    """
    A = as_numba(X, name)
    if A.ndim != 2:
        hint = " (reshape a single feature with X.reshape(-1, 1))" if A.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got {A.ndim}-D{hint}")
    n, d = A.shape
    if n < 1:
        raise ValueError(f"{name} has {n} rows; at least 1 required")
    if d == 0:
        raise ValueError(f"{name} has 0 features (shape {tuple(A.shape)}); at least 1 required")
    dt = np.dtype(A.dtype)
    if dt.kind == "c":
        raise ValueError(f"{name} has complex dtype {dt}; only real-valued data is supported")
    if dt.kind not in "biuf":
        raise ValueError(
            f"{name} has dtype {dt}; expected a real numeric dtype (float, int or bool)"
        )
    if dtype is not None:
        target = np.dtype(dtype)
    else:
        target = dt if dt.type in (np.float32, np.float64) else np.dtype(np.float64)
    if dt == target:
        return A
    big = math.inf
    if dt.kind == "f" and dt.itemsize > target.itemsize:
        flat = _nonfinite_flat(A)
        if flat < n * d:
            _raise_nonfinite(A, flat, name)
        big = float(np.finfo(target).max)
    out = cuda.device_array((n, d), dtype=target)
    flag = cuda.to_device(np.array([n * d], dtype=np.int64))
    _launch(device_kernels.to_dtype, n * d, A, out, big, flag)
    flat = int(_host(flag)[0])
    if flat < n * d:
        i, j = divmod(flat, d)
        raise ValueError(
            f"{name} value at row {i}, column {j} ({_element(A, i, j):g}) overflows "
            f"{target} (the dtype the model was fitted in)"
        )
    return out


def device_labels(y, n, name="y"):
    """(classes on the host, int32 codes on the device), as
    :func:`fastgen._validation.check_y` gives them.

    Integer and bool labels on the device are coded there (a range, a presence table and
    a lookup, as the CPU's O(n) path); host labels, and device labels of any other
    dtype, go through ``check_y`` on the host.
    """
    from .._validation import check_y

    if not is_device_array(y):
        classes, codes = check_y(y, n, name=name)
        return classes, cuda.to_device(np.ascontiguousarray(codes, dtype=np.int32))
    Y = as_numba(y, name)
    if Y.ndim == 2 and Y.shape[1] == 1:
        Y = Y[:, 0]
    if Y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,); got shape {tuple(Y.shape)}")
    if Y.shape[0] != n:
        raise ValueError(
            f"{name} has {Y.shape[0]} labels but X has {n} rows; they must match"
        )
    dt = np.dtype(Y.dtype)
    if dt.kind not in "iub" or dt == np.uint64:
        classes, codes = check_y(_host(Y), n, name=name)
        return classes, cuda.to_device(np.ascontiguousarray(codes, dtype=np.int32))
    info = np.iinfo(np.int64)
    lohi = cuda.to_device(np.array([info.max, info.min], dtype=np.int64))
    _launch(device_kernels.label_range, n, Y, lohi)
    lo, hi = (int(v) for v in _host(lohi))
    span = hi - lo + 1
    if span > max(2 * n, 1 << 16):  # sparse integer labels: sort them on the host
        classes, codes = check_y(_host(Y), n, name=name)
        return classes, cuda.to_device(np.ascontiguousarray(codes, dtype=np.int32))
    present = cuda.to_device(np.zeros(span, dtype=np.uint8))
    _launch(device_kernels.label_present, n, Y, lo, present)
    where = np.flatnonzero(_host(present))
    classes = (where + lo).astype(dt) if dt.kind != "b" else where.astype(bool)
    remap = np.full(span, -1, dtype=np.int32)
    remap[where] = np.arange(where.shape[0], dtype=np.int32)
    codes = cuda.device_array(n, dtype=np.int32)
    _launch(device_kernels.label_codes, n, Y, lo, cuda.to_device(remap), codes)
    return classes, codes


def device_weights(sample_weight, n):
    """float64 device weights checked as :func:`fastgen._validation.check_sample_weight`
    checks host ones, or None for unit weights."""
    from .._validation import check_sample_weight

    if sample_weight is None:
        return None
    if not is_device_array(sample_weight):
        return cuda.to_device(check_sample_weight(sample_weight, n))
    w = as_numba(sample_weight, "sample_weight")
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(
            f"sample_weight must have shape ({n},), matching the rows of X; "
            f"got {tuple(w.shape)}"
        )
    dt = np.dtype(w.dtype)
    if dt.kind not in "biuf":
        raise ValueError(f"sample_weight has dtype {dt}; expected real numbers")
    if dt != np.float64:
        w64 = cuda.device_array((n, 1), dtype=np.float64)
        flag = cuda.to_device(np.array([n], dtype=np.int64))
        _launch(device_kernels.to_dtype, n, w.reshape(n, 1) if w.is_c_contiguous() else
                cuda.to_device(_host(w).reshape(n, 1)), w64, math.inf, flag)
        w = w64.reshape(n)
    flags = cuda.to_device(np.array([n, n, 0], dtype=np.int64))
    _launch(device_kernels.weight_check, n, w, flags)
    bad, neg, pos = (int(v) for v in _host(flags))
    if bad < n:
        raise ValueError(
            f"sample_weight contains a non-finite value at index {bad} "
            f"({_element(w, bad)}): a row's weight cannot be missing or infinite (NaN "
            f"marks a missing value in X only); give every row a finite weight >= 0 (0 "
            f"leaves a row out of the fit)")
    if neg < n:
        raise ValueError(
            f"sample_weight contains a negative value ({_element(w, neg)}) at index {neg}"
        )
    if not pos:
        raise ValueError("sample_weight is zero everywhere; at least one sample needs weight")
    return w


# ----------------------------------------------------------------------- moments


def _zeros(shape):
    a = cuda.device_array(shape, dtype=np.float64)
    _launch(device_kernels.fill_float, a.shape[0] * a.shape[1], a, 0.0)
    return a


def _merge_pairwise(part):
    """Slot 0 of ``part`` (B, E) becomes the sum of all slots, by a fixed binary tree."""
    B, E = part.shape
    stride = 1
    while stride < B:
        n_pairs = -(-B // (2 * stride))
        _launch(device_kernels.pairwise_level, n_pairs * E, part, stride)
        stride *= 2
    return _host(part[0:1])[0]


def block_rows(n, K, d, kind):
    """Rows per block of a moments pass: from the sizes only (never the device)."""
    P = d * (d + 1) // 2
    per_block = K + K * d + {"pooled": P, "per_class": K * P, "diagonal": K * d}[kind]
    max_blocks = max(1, min(MAX_BLOCKS, PARTIAL_DOUBLES // per_block))
    return max(MIN_BLOCK_ROWS, -(-n // max_blocks))


def moments_arrays_device(X, codes, w, K, kind, name="X"):
    """(W (K,), means (K, d), scatter) on the host, float64, from device X (float32 or
    float64), int32 device codes and float64 device weights (None: unit weights);
    the same arrays as :func:`fastgen.stats.moments.moments_arrays` gives for host data."""
    n, d = X.shape
    if kind != "diagonal" and d > device_kernels.SHARED_DOUBLES:
        raise ValueError(
            f"{name} has {d} features; full covariances on the device support at most "
            f"{device_kernels.SHARED_DOUBLES} (use covariance='diagonal' or fit on the host)"
        )
    if kind == "diagonal":
        pj = pl = cuda.to_device(np.zeros(1, dtype=np.int32))
        E = K * d
    else:
        tj, tl = np.triu_indices(d)
        pj = cuda.to_device(tj.astype(np.int32))
        pl = cuda.to_device(tl.astype(np.int32))
        E = tj.shape[0] * (K if kind == "per_class" else 1)
    R = block_rows(n, K, d, kind)
    B = -(-n // R)
    first = cuda.to_device(np.full(K, n, dtype=np.int64))
    _launch(device_kernels.first_rows, n, codes, first)
    shift = cuda.device_array((K, d), dtype=np.float64)
    _launch(device_kernels.gather_shift, K * d, X, first, shift)
    Wp, Sp, Mp = _zeros((B, K)), _zeros((B, K * d)), _zeros((B, E))
    bad = cuda.to_device(np.array([n * d], dtype=np.int64))
    weighted = w is not None
    wd = w if weighted else cuda.to_device(np.ones(1))
    _quiet_launch(device_kernels.moments_blocks, B, X, codes, wd, weighted, shift, R,
                  _KINDS[kind], pj, pl, Wp, Sp, Mp, bad)
    flat = int(_host(bad)[0])
    if flat < n * d:
        _raise_nonfinite(X, flat, name)
    W = _merge_pairwise(Wp)
    S = _merge_pairwise(Sp).reshape(K, d)
    M = _merge_pairwise(Mp)
    s = _host(shift)
    seen = W > 0
    D = np.zeros((K, d))
    D[seen] = S[seen] / W[seen, None]
    means = np.where(seen[:, None], s + D, 0.0)
    if kind == "diagonal":
        scatter = M.reshape(K, d) - W[:, None] * D * D
    elif kind == "pooled":
        scatter = _unpack(M, d, tj, tl) - (D * W[:, None]).T @ D
    else:
        P = tj.shape[0]
        scatter = np.stack([_unpack(M[k * P:(k + 1) * P], d, tj, tl)
                            - W[k] * np.outer(D[k], D[k]) for k in range(K)])
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.all(np.isfinite(means)) and np.all(np.isfinite(scatter))
    if not finite:
        raise ValueError(_OVERFLOW.format(name=name))
    return W, means, scatter


def _unpack(v, d, tj, tl):
    M = np.empty((d, d))
    M[tj, tl] = v
    M[tl, tj] = v
    return M


# ----------------------------------------------------------------------- scoring


def score_tables(kind, tables, X, mode, dtype, n_features):
    """Scores of device X from float64 scoring tables (see :func:`fastgen.cuda.score`):
    a device array of X's kind, or for ``MODE_PREDICT`` the host class codes."""
    from .._validation import check_n_features

    Xd = device_X(X, dtype=dtype)
    check_n_features(Xd, n_features)
    n, d = Xd.shape
    K = tables[1].shape[1] if kind == "pooled" else tables[0].shape[0]  # coef (d, K); μ (K, d)
    out = cuda.device_array((n, K), dtype=dtype)
    pred = cuda.device_array(n if mode == device_kernels.MODE_PREDICT else 1, dtype=np.int32)
    bad = cuda.to_device(np.array([n * d, n], dtype=np.int64))
    dev = [cuda.to_device(np.ascontiguousarray(t)) if isinstance(t, np.ndarray) else t
           for t in tables]
    kernel = {"diagonal": device_kernels.scores_diagonal,
              "pooled": device_kernels.scores_pooled,
              "per_class": device_kernels.scores_per_class}[kind]
    _launch(kernel, n, Xd, *dev, mode, out, pred, bad)
    flat, row = (int(v) for v in _host(bad))
    if flat < n * d:
        _raise_nonfinite(Xd, flat, "X")
    if row < n:  # X is finite, so its scores overflowed (as the CPU path reports it)
        raise ValueError(_OVERFLOW.format(name="X"))
    if mode == device_kernels.MODE_PREDICT:
        return _host(pred)
    return like_caller(out, X)
