"""fastgen on the GPU: one-pass numba.cuda kernels for data that already lives there.

``fastgen.fit_gda``, ``fastgen.fit_gaussian_nb`` and the four scoring functions hand a
CUDA array (anything with ``__cuda_array_interface__`` or a CUDA DLPack device: CuPy
arrays, PyTorch CUDA tensors, numba device arrays) to the functions of this package;
they can also be called directly.

* Fits read X once on the device (shifted sums per class, per-block partials merged in
  a fixed pairwise tree: bitwise identical run to run; float32 X is accumulated in
  float64) and return the usual params dataclasses of small host arrays; the d × d
  factorisations run on the host with the CPU path's code.
* ``joint_log_likelihood``, ``predict_log_proba`` and ``predict_proba`` return a device
  array of the caller's kind (CuPy in, CuPy out; PyTorch in, PyTorch out; numba in,
  numba out); ``predict`` returns host labels, since classes may be strings.
* Inputs are validated on the device with the CPU path's messages ("X contains NaN at
  row 17, column 3").  Labels may be on the host or the device.

Nothing here imports numba.cuda (or CuPy, or PyTorch) until a device array arrives:
``import fastgen`` never touches CUDA.  Needs ``pip install fastgen[cuda]`` (numba-cuda)
and a CUDA GPU, or numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, set before numba
is imported), on which the test suite runs these kernels.
"""

from __future__ import annotations

import numpy as np

from ._detect import is_device_array

__all__ = [
    "is_device_array",
    "device_rows",
    "moments_arrays",
    "zero_codes",
    "fit_gda",
    "fit_gaussian_nb",
    "class_moments",
    "joint_log_likelihood",
    "predict_log_proba",
    "predict_proba",
    "predict",
]


def fit_gda(X, y, covariance="pooled", *, priors=None, sample_weight=None, reg=0.0,
            shrinkage=None, unbiased=False, var_smoothing=1e-9, tol=1e-4):
    """:func:`fastgen.fit_gda` of device X; returns the same host ``GDAParams``.

    One read of X computes W_k = Σ w, μ_k and the scatter Σ w (x − μ_y)(x − μ_y)ᵀ
    (pooled, per class or diagonal) with shifted sums; ``shrinkage="ledoit-wolf"`` is
    not available on the device yet.
    """
    from ._api import fit_gda as impl

    return impl(X, y, covariance, priors=priors, sample_weight=sample_weight, reg=reg,
                shrinkage=shrinkage, unbiased=unbiased, var_smoothing=var_smoothing, tol=tol)


def fit_gaussian_nb(X, y, *, priors=None, var_smoothing=1e-9, sample_weight=None):
    """:func:`fastgen.fit_gaussian_nb` of device X; returns the same host
    ``GaussianNBParams`` (σ²_kj = S_kj/N_k + var_smoothing·max_j Var(x_j))."""
    from ._api import fit_gaussian_nb as impl

    return impl(X, y, priors=priors, var_smoothing=var_smoothing,
                sample_weight=sample_weight)


def class_moments(X, y, *, kind="pooled", sample_weight=None):
    """:func:`fastgen.class_moments` of device X (host ``ClassMoments``)."""
    from ._api import class_moments_device as impl

    return impl(X, y, kind=kind, sample_weight=sample_weight)


def device_rows(X, y, sample_weight=None):
    """(X, classes, codes, weights) of a device fit, checked on the device: X as a numba
    device array (float32 stays float32, other real dtypes become float64), the sorted
    labels on the host, int32 class codes on the device and float64 device weights (None
    for unit weights).  X is never copied to the host."""
    from ._api import device_X, device_labels, device_weights

    Xd = device_X(X)
    classes, codes = device_labels(y, Xd.shape[0])
    return Xd, classes, codes, device_weights(sample_weight, Xd.shape[0])


def moments_arrays(X, codes, w, K, kind):
    """(W (K,), means (K, d), scatter) as float64 host arrays, from the checked device
    arrays of :func:`device_rows`: the arrays
    :func:`fastgen.stats.moments.moments_arrays` gives for host data, in one read of X."""
    from ._api import moments_arrays_device

    return moments_arrays_device(X, codes, w, K, kind)


def zero_codes(n):
    """n int32 zeros on the device: every row in one class."""
    from numba import cuda

    return cuda.to_device(np.zeros(n, dtype=np.int32))


def joint_log_likelihood(params, X):
    """log p(x, y=k) for device X, shape (n, K), as a device array of X's kind."""
    from ._api import joint_log_likelihood as impl

    return impl(params, X)


def predict_log_proba(params, X):
    """log p(y=k | x) = jll − logsumexp(jll) (row maximum first) for device X; a row of
    all −inf gives −inf, not NaN."""
    from ._api import predict_log_proba as impl

    return impl(params, X)


def predict_proba(params, X):
    """p(y=k | x) for device X, as a device array of X's kind; rows sum to one."""
    from ._api import predict_proba as impl

    return impl(params, X)


def predict(params, X):
    """The most probable class of each row of device X, as host labels."""
    from ._api import predict as impl

    return impl(params, X)
