"""fastgen on the GPU: one-pass numba.cuda kernels for data that already lives there.

A provider, like :mod:`fastgen.kernels`: arrays in, arrays out; it imports no model,
no statistics and no adapter.  ``fastgen.class_moments`` (and through it
``fastgen.fit_gda`` and ``fastgen.fit_gaussian_nb``) and the four scoring functions hand
a CUDA array (anything with ``__cuda_array_interface__`` or a CUDA DLPack device: CuPy
arrays, PyTorch CUDA tensors, numba device arrays) to the functions of this package.

* The moments read X once on the device (:func:`device_rows`, :func:`moments_arrays`:
  shifted sums per class, per-block partials merged in a fixed pairwise tree: bitwise
  identical run to run; float32 X is accumulated in float64) and come back as small
  host arrays; the statistics layer and the models build the usual params from them,
  with the CPU path's code.
* Scoring takes its tables from the params object (``params.scoring_tables()``: the
  tables the CPU scoring uses, rank handling included).
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
    "joint_log_likelihood",
    "predict_log_proba",
    "predict_proba",
    "predict",
]


def device_rows(X, y, sample_weight=None):
    """(X, classes, codes, weights) of a device fit, checked on the device: X as a numba
    device array (float32 stays float32, other real dtypes become float64), the sorted
    labels on the host, int32 class codes on the device and float64 device weights (None
    for unit weights).  X is never copied to the host."""
    from ._api import device_labels, device_weights, device_X

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
