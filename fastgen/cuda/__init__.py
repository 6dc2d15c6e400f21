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
* Scoring (:func:`score`) takes the tables a params object hands over
  (``params.scoring_tables()``: the tables the CPU scoring uses, rank handling
  included), from the scorer of the model family, which picks these kernels for a
  device array.  Scores come back as a device array of the caller's kind (CuPy in,
  CuPy out; PyTorch in, PyTorch out; numba in, numba out), predictions as host class
  codes, which the scorer turns into labels (classes may be strings).
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
    "score",
    "MODE_JLL",
    "MODE_LOG_PROBA",
    "MODE_PROBA",
    "MODE_PREDICT",
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


#: What :func:`score` returns: joint log-likelihoods, log posteriors, posteriors, or
#: the class code of each row.
MODE_JLL, MODE_LOG_PROBA, MODE_PROBA, MODE_PREDICT = 0, 1, 2, 3


def score(kind, tables, X, mode, dtype, n_features):
    """Scores of device X from the float64 tables a params object hands over
    (``params.scoring_tables()``), checked on the device.

    ``kind`` ``"pooled"``: (c, coef, bc, M, const), jll_k(x) = (x − c)ᵀcoef_k + bc_k +
    const − ½‖M(x − c)‖²; ``"per_class"``: (μ, L⁻¹, bias), jll_k(x) = bias_k −
    ½‖L_k⁻¹(x − μ_k)‖²; ``"diagonal"``: (μ, 1/σ², const), jll_k(x) = const_k −
    ½ Σ_j (x_j − μ_kj)²/σ²_kj.  X is converted to ``dtype`` and must have
    ``n_features`` columns.  Returns a device array of X's kind (``MODE_JLL``,
    ``MODE_LOG_PROBA``: jll − logsumexp(jll), a row of all −inf giving −inf;
    ``MODE_PROBA``), or for ``MODE_PREDICT`` the host class code of each row."""
    from ._api import score_tables

    return score_tables(kind, tables, X, mode, dtype, n_features)
