"""Device implementations behind :mod:`fastgen.cuda` (imports numba.cuda).

Validation happens here, on the device, with the messages of :mod:`fastgen._validation`:
X is scanned for NaN/inf inside the moment and scoring kernels (no extra pass), labels
are coded by small kernels (integer labels; any other label type is copied to the host,
which costs n values, not n·d), sample weights are checked by one kernel.  The d × d
factorisations and every other O(K·d²) step run on the host with the CPU path's own
functions (:func:`fastgen.gda_from_moments`,
:func:`fastgen.naive_bayes.gaussian_nb_from_moments`), so a device fit and a host fit
of the same data give the same kind of params object, checked the same way.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from numba import cuda

from . import kernels as _k
from ._detect import as_numba, is_device_array, like_caller

__all__ = [
    "fit_gda",
    "fit_gaussian_nb",
    "class_moments_device",
    "joint_log_likelihood",
    "predict_log_proba",
    "predict_proba",
    "predict",
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

_KINDS = {"pooled": _k.KIND_POOLED, "per_class": _k.KIND_PER_CLASS,
          "diagonal": _k.KIND_DIAGONAL}
_LOG_2PI = math.log(2.0 * math.pi)
_OVERFLOW = ("{name} has values so large that their squares overflow float64; rescale "
             "the features (e.g. divide by their standard deviation)")


def _launch(kernel, n_threads, *args):
    blocks = max(1, -(-int(n_threads) // THREADS))
    kernel[blocks, THREADS](*args)


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
    _launch(_k.nonfinite_index, n * d, A, flag)
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
    _launch(_k.to_dtype, n * d, A, out, big, flag)
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
    _launch(_k.label_range, n, Y, lohi)
    lo, hi = (int(v) for v in _host(lohi))
    span = hi - lo + 1
    if span > max(2 * n, 1 << 16):  # sparse integer labels: sort them on the host
        classes, codes = check_y(_host(Y), n, name=name)
        return classes, cuda.to_device(np.ascontiguousarray(codes, dtype=np.int32))
    present = cuda.to_device(np.zeros(span, dtype=np.uint8))
    _launch(_k.label_present, n, Y, lo, present)
    where = np.flatnonzero(_host(present))
    classes = (where + lo).astype(dt) if dt.kind != "b" else where.astype(bool)
    remap = np.full(span, -1, dtype=np.int32)
    remap[where] = np.arange(where.shape[0], dtype=np.int32)
    codes = cuda.device_array(n, dtype=np.int32)
    _launch(_k.label_codes, n, Y, lo, cuda.to_device(remap), codes)
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
        _launch(_k.to_dtype, n, w.reshape(n, 1) if w.is_c_contiguous() else
                cuda.to_device(_host(w).reshape(n, 1)), w64, math.inf, flag)
        w = w64.reshape(n)
    flags = cuda.to_device(np.array([n, n, 0], dtype=np.int64))
    _launch(_k.weight_check, n, w, flags)
    bad, neg, pos = (int(v) for v in _host(flags))
    if bad < n:
        raise ValueError(f"sample_weight contains a non-finite value at index {bad}")
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
    _launch(_k.fill_float, a.shape[0] * a.shape[1], a, 0.0)
    return a


def _merge_pairwise(part):
    """Slot 0 of ``part`` (B, E) becomes the sum of all slots, by a fixed binary tree."""
    B, E = part.shape
    stride = 1
    while stride < B:
        n_pairs = -(-B // (2 * stride))
        _launch(_k.pairwise_level, n_pairs * E, part, stride)
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
    the same arrays as :func:`fastgen.moments.moments_arrays` gives for host data."""
    n, d = X.shape
    if kind != "diagonal" and d > _k.SHARED_DOUBLES:
        raise ValueError(
            f"{name} has {d} features; full covariances on the device support at most "
            f"{_k.SHARED_DOUBLES} (use covariance='diagonal' or fit on the host)"
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
    _launch(_k.first_rows, n, codes, first)
    shift = cuda.device_array((K, d), dtype=np.float64)
    _launch(_k.gather_shift, K * d, X, first, shift)
    Wp, Sp, Mp = _zeros((B, K)), _zeros((B, K * d)), _zeros((B, E))
    bad = cuda.to_device(np.array([n * d], dtype=np.int64))
    weighted = w is not None
    wd = w if weighted else cuda.to_device(np.ones(1))
    _k.moments_blocks[B, THREADS](X, codes, wd, weighted, shift, R, _KINDS[kind], pj, pl,
                                  Wp, Sp, Mp, bad)
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


def class_moments_device(X, y, *, kind="pooled", sample_weight=None):
    """:func:`fastgen.class_moments` of device X (see :mod:`fastgen.cuda`)."""
    from ..stats.moments import SCATTER_KINDS, ClassMoments

    if kind not in SCATTER_KINDS:
        raise ValueError(f"kind must be one of {SCATTER_KINDS}; got {kind!r}")
    Xd = device_X(X)
    classes, codes = device_labels(y, Xd.shape[0])
    w = device_weights(sample_weight, Xd.shape[0])
    W, means, scatter = moments_arrays_device(Xd, codes, w, classes.shape[0], kind)
    return ClassMoments(classes, W, means, scatter, kind, str(np.dtype(Xd.dtype)))


def fit_gda(X, y, covariance="pooled", *, priors=None, sample_weight=None, reg=0.0,
            shrinkage=None, unbiased=False, var_smoothing=1e-9, tol=1e-4):
    """:func:`fastgen.fit_gda` for device X (see :mod:`fastgen.cuda`)."""
    from ..gda import COVARIANCE_TYPES, SCATTER_FOR, gda_from_moments

    if not isinstance(covariance, str) or covariance not in COVARIANCE_TYPES:
        raise ValueError(f"covariance must be one of {COVARIANCE_TYPES}; got {covariance!r}")
    if isinstance(shrinkage, str) and shrinkage == "ledoit-wolf":
        raise ValueError(
            "shrinkage='ledoit-wolf' is not available for device arrays yet (it needs a "
            "second pass for the fourth moments); use shrinkage='oas' or a float, or fit "
            "on the host"
        )
    m = class_moments_device(X, y, kind=SCATTER_FOR[covariance], sample_weight=sample_weight)
    return gda_from_moments(m, covariance, priors=priors, reg=reg, shrinkage=shrinkage,
                            unbiased=unbiased, var_smoothing=var_smoothing, tol=tol)


def fit_gaussian_nb(X, y, *, priors=None, var_smoothing=1e-9, sample_weight=None):
    """:func:`fastgen.fit_gaussian_nb` for device X (see :mod:`fastgen.cuda`)."""
    from .._validation import check_priors, check_scalar
    from ..stats.moments import ClassMoments
    from ..naive_bayes import gaussian_nb_from_moments

    Xd = device_X(X)
    n = Xd.shape[0]
    classes, codes = device_labels(y, n)
    w = device_weights(sample_weight, n)
    var_smoothing = check_scalar(var_smoothing, "var_smoothing", low=0.0)
    K = classes.shape[0]
    check_priors(priors, classes)
    W, means, scatter = moments_arrays_device(Xd, codes, w, K, "diagonal")
    fv = None
    if w is not None:  # scikit-learn's epsilon uses the unweighted variance: one more pass
        zero = cuda.to_device(np.zeros(n, dtype=np.int32))
        _, _, m2 = moments_arrays_device(Xd, zero, None, 1, "diagonal")
        fv = m2[0] / n
    moments = ClassMoments(classes, W, means, scatter, "diagonal", str(np.dtype(Xd.dtype)))
    return gaussian_nb_from_moments(moments, priors=priors, var_smoothing=var_smoothing,
                                    feature_variance=fv)


# ----------------------------------------------------------------------- scoring


def _log(a):
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(a, dtype=np.float64))


def scoring_tables(params):
    """(kernel name, float64 host tables) for scoring ``params`` on the device."""
    from ..gda import GDAParams
    from ..naive_bayes import GaussianNBParams

    if isinstance(params, GaussianNBParams):
        var = params.variances.astype(np.float64)
        const = params.class_log_prior.astype(np.float64) - 0.5 * np.sum(
            np.log(2.0 * np.pi * var), axis=1)
        return "diagonal", (params.means.astype(np.float64), 1.0 / var, const)
    if not isinstance(params, GDAParams):
        raise ValueError(
            f"device arrays can be scored with GDAParams and GaussianNBParams; got "
            f"{type(params).__name__} (copy X to the host, e.g. cupy.asnumpy(X), to score it)"
        )
    K, d = params.means.shape
    logp = _log(params.priors)
    means = params.means.astype(np.float64)
    log_det = params.log_det.astype(np.float64)
    cov = params.covariance_type
    if cov == "pooled":
        w = params.n_per_class.astype(np.float64)
        c = (w @ means) / w.sum()
        L = params.cholesky.astype(np.float64)
        Linv = scipy.linalg.solve_triangular(L, np.eye(d), lower=True)
        A = Linv @ (means - c).T
        Wc = Linv.T @ A
        bc = -0.5 * np.einsum("dk,dk->k", A, A) + logp
        const = -0.5 * (float(log_det[0]) + d * _LOG_2PI)
        return "pooled", (c, np.ascontiguousarray(Wc), bc, np.ascontiguousarray(Linv), const)
    bias = logp - 0.5 * (log_det + d * _LOG_2PI)
    if cov == "per_class":
        eye = np.eye(d)
        Linv = np.stack([scipy.linalg.solve_triangular(Lk, eye, lower=True)
                         for Lk in params.cholesky.astype(np.float64)])
        return "per_class", (means, Linv, bias)
    var = np.broadcast_to(params.covariance.astype(np.float64), (K, d))
    return "diagonal", (np.ascontiguousarray(means), np.ascontiguousarray(1.0 / var), bias)


def _score(params, X, mode):
    from .._params import FittedParams
    from .._validation import check_n_features

    if not isinstance(params, FittedParams):
        raise ValueError(
            f"params must be a fitted fastgen params object (e.g. the result of fit_gda); "
            f"got {type(params).__name__}"
        )
    kernel, tables = scoring_tables(params)
    Xd = device_X(X, dtype=params.dtype)
    check_n_features(Xd, params.n_features_in)
    n, d = Xd.shape
    K = params.n_classes
    out = cuda.device_array((n, K), dtype=params.dtype)
    pred = cuda.device_array(n if mode == _k.MODE_PREDICT else 1, dtype=np.int32)
    bad = cuda.to_device(np.array([n * d, n], dtype=np.int64))
    dev = [cuda.to_device(np.ascontiguousarray(t)) if isinstance(t, np.ndarray) else t
           for t in tables]
    if kernel == "diagonal":
        _launch(_k.scores_diagonal, n, Xd, *dev, mode, out, pred, bad)
    elif kernel == "pooled":
        _launch(_k.scores_pooled, n, Xd, *dev, mode, out, pred, bad)
    else:
        _launch(_k.scores_per_class, n, Xd, *dev, mode, out, pred, bad)
    flat, row = (int(v) for v in _host(bad))
    if flat < n * d:
        _raise_nonfinite(Xd, flat, "X")
    if row < n:  # X is finite, so its scores overflowed (as the CPU path reports it)
        raise ValueError(_OVERFLOW.format(name="X"))
    if mode == _k.MODE_PREDICT:
        return params.classes[_host(pred)]
    return like_caller(out, X)


def joint_log_likelihood(params, X):
    """:func:`fastgen.joint_log_likelihood` of device X: a device array of X's kind."""
    return _score(params, X, _k.MODE_JLL)


def predict_log_proba(params, X):
    """:func:`fastgen.predict_log_proba` of device X: a device array of X's kind."""
    return _score(params, X, _k.MODE_LOG_PROBA)


def predict_proba(params, X):
    """:func:`fastgen.predict_proba` of device X: a device array of X's kind."""
    return _score(params, X, _k.MODE_PROBA)


def predict(params, X):
    """:func:`fastgen.predict` of device X: labels on the host (classes may be strings)."""
    return _score(params, X, _k.MODE_PREDICT)
