"""Fits, scoring and logistic inference on Dask arrays: exact, out-of-core, distributed.

Every generative fit is a reduction of sufficient statistics and every Newton (IRLS)
iteration a reduction of a loss, a gradient and a Hessian, so a fit over the blocks of
a ``dask.array`` equals the in-memory fit on all rows (to rounding: sums are associated
differently).  Each function here

1. reads the labels once (cheap: y and the weights only) to fix the global sorted label
   set, so that every block codes its labels identically and a block that misses some
   classes still contributes correctly;
2. computes per-block statistics with fastgen's public model-layer functions
   (:func:`fastgen.class_moments`, :func:`fastgen.nb_counts`,
   :func:`fastgen.logistic.logistic_loss_grad_hess`) as Dask tasks;
3. combines them with a tree reduction (fan-in ``split_every``) of exact merges
   (:func:`fastgen.merge_moments`: W = Wa + Wb, δ = μb − μa, μ = μa + δ·Wb/W,
   M2 = M2a + M2b + δδᵀ·Wa·Wb/W; counts, gradients and Hessians add);
4. turns the merged statistics into params on the client.

Memory on the workers is a few blocks of X at a time; on the client O(K·d²) at most.
Any Dask scheduler works: the threaded default, ``processes``, or a
``dask.distributed`` cluster (workers load the compiled kernels from numba's on-disk
cache).  Progress bars: ``with dask.diagnostics.ProgressBar(): fit_gda(X, y)`` on the
local schedulers, ``distributed.progress`` on a cluster.

X must be a 2-D ``dask.array`` whose blocks are numpy arrays (or, for the naive Bayes
count models and logistic regression, scipy CSR matrices); column chunks are merged
into one.  y (and ``sample_weight``) may be Dask or numpy arrays; they are re-chunked
to X's row chunks.

Modules: ``blocks`` (checks, per-block calls, the tree reduction), ``files``
(:func:`from_npy`), ``fits`` (GDA and naive Bayes), ``missing`` (their available-case
sums with ``nan_policy="marginalize"``), ``categories`` (the categorical tables'
layout over the blocks), ``logistic`` (the Dask sample of a
logistic fit), ``separation`` (the exact separation test by passes), ``inference``
(:func:`logistic_inference`: summed passes, then the in-memory finish), ``scoring``.
"""

from __future__ import annotations

try:
    import dask.array  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "fastgen.dask needs Dask: pip install 'fastgen[dask]' (dask[array], distributed)"
    ) from exc

from .blocks import as_dask_vector, as_dask_X, in_rows, row_blocks, row_starts  # noqa: F401
from .files import from_npy
from .fits import (
    fit_bernoulli_nb,
    fit_categorical_nb,
    fit_gaussian_nb,
    fit_gda,
    fit_multinomial_nb,
)
from .inference import logistic_inference
from .logistic import MULTINOMIAL_MAX_KP, fit_logistic
from .scoring import joint_log_likelihood, predict, predict_log_proba, predict_proba
from .separation import separation_over_blocks

__all__ = [
    "fit_gda",
    "fit_gaussian_nb",
    "fit_multinomial_nb",
    "fit_bernoulli_nb",
    "fit_categorical_nb",
    "fit_logistic",
    "logistic_inference",
    "separation_over_blocks",
    "joint_log_likelihood",
    "predict_log_proba",
    "predict_proba",
    "predict",
    "MULTINOMIAL_MAX_KP",
    "from_npy",
]
