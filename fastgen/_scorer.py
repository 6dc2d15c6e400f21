"""The scoring protocol: params hand over their tables, a scorer picks the kernels.

Every params class answers :meth:`~fastgen._params.FittedParams.scoring_tables` with
``(kind, tables)``: the float64 tables of its scoring formula, and nothing about how
they are scored.  Each model family has one :class:`Scorer` (``params.scorer``),
which validates X once and picks the numpy passes for small X (at most
:data:`fastgen._small.SMALL_VALUES` values: nothing compiles), the host kernels (by the
sizes of X and the tables) or the device kernels of :mod:`fastgen.cuda` for a CUDA
array.  Choices about how to
score, such as the kernel for a size, belong to the scorer; :mod:`fastgen.scoring`
only checks the params and the column names and hands over.

Tables derived from the scoring tables for one kernel (a float32 copy, a transposed
layout) are computed once per params object by :func:`derived`.
"""

from __future__ import annotations

import numpy as np

from ._runtime import kernel_module
from ._small import is_small
from ._validation import check_n_features, check_X
from .cuda import is_device_array
from .kernels.modes import MODE_JLL, MODE_LOG_PROBA, MODE_PROBA

special_kernels = kernel_module("special")

__all__ = ["Scorer", "MODE_JLL", "MODE_LOG_PROBA", "MODE_PROBA", "MODE_PREDICT",
           "derived"]

#: Predicted labels (beside the three score modes of :mod:`fastgen.kernels.modes`).
MODE_PREDICT = 3


def derived(params, key, make):
    """``make()``, computed once per params object and kept on it under ``key`` (as
    :func:`functools.cached_property` keeps its values: not pickled, not compared)."""
    cache = params.__dict__
    if key not in cache:
        cache[key] = make()
    return cache[key]


class Scorer:
    """Scores of one model family: validation, then host or device kernels.

    A family overrides :meth:`scores` (fused kernels that finish the rows per mode) or
    :meth:`joint_log_likelihood`, and where it has them :meth:`decision_scores` (any
    scores with the posteriors' argmax) and :meth:`device`.
    """

    #: whether the host kernels take scipy CSR input
    accepts_sparse = False
    #: whether the host kernels find non-finite X through their own results, so that
    #: validation skips the up-front scan (a full extra read of X)
    checks_finite_scores = False
    #: whether the CSR kernels check each column index as they read it, so that
    #: validation skips its own scan of the indices
    checks_csr_indices = False

    def score(self, params, X, mode):
        """Scores (``MODE_JLL``, ``MODE_LOG_PROBA``, ``MODE_PROBA``) or labels
        (``MODE_PREDICT``) of X: device arrays to :meth:`device`, the rest validated
        once (:meth:`prepare`) and scored by :meth:`small` where X is small and the
        family has numpy scores, else by :meth:`host`."""
        if is_device_array(X):
            return self.device(params, X, mode)
        return self.validated(params, self.prepare(params, X), mode)

    def validated(self, params, X, mode):
        """Scores or labels of validated host X: :meth:`small` for small X where the
        family has numpy scores, else :meth:`host`."""
        if is_small(X):  # numpy scores: no compilation (fastgen._small)
            out = self.small(params, X, MODE_JLL if mode == MODE_PREDICT else mode)
            if out is not None:
                if mode != MODE_PREDICT:
                    return out
                return params.classes[np.argmax(out, axis=1) if out.shape[1] else
                                      np.zeros(out.shape[0], dtype=np.intp)]
        return self.host(params, X, mode)

    def prepare(self, params, X):
        """X checked and converted once: dense or (where the kernels take it) CSR, in
        the params' dtype, with the params' number of features."""
        X = check_X(X, allow_sparse=self.accepts_sparse, dtype=params.dtype,
                    finite=not self.checks_finite_scores,
                    csr_indices=not self.checks_csr_indices)
        check_n_features(X, params.n_features_in)
        return X

    def host(self, params, X, mode):
        """Scores or labels of validated host X."""
        if mode == MODE_PREDICT:
            return self.predict(params, X)
        if mode == MODE_JLL:
            return self.joint_log_likelihood(params, X)
        if mode == MODE_LOG_PROBA:
            return self.predict_log_proba(params, X)
        return self.predict_proba(params, X)

    def small(self, params, X, mode):
        """Scores (``MODE_JLL``, ``MODE_LOG_PROBA``, ``MODE_PROBA``) of validated small
        X by numpy passes, in the params' dtype, or None where the family has none (then
        :meth:`host` scores it).  Both paths agree to 1e-12 (tests/test_small_path.py)."""
        return None

    def device(self, params, X, mode):
        """Scores of device X: only the Gaussian families have device kernels."""
        raise ValueError(
            f"device arrays can be scored with GDAParams and GaussianNBParams; got "
            f"{type(params).__name__} (copy X to the host, e.g. cupy.asnumpy(X), to score it)"
        )

    def scores(self, params, X, mode):
        """Joint log-likelihoods, log posteriors or posteriors (``mode``) of validated
        X; the default normalises the rows of :meth:`joint_log_likelihood` in place."""
        jll = self.joint_log_likelihood(params, X)
        if mode != MODE_JLL:
            special_kernels.finish_all_rows(jll, mode)
        return jll

    def joint_log_likelihood(self, params, X):
        # a family overrides this or scores (defining neither would recurse)
        return self.scores(params, X, MODE_JLL)

    def predict_log_proba(self, params, X):
        return self.scores(params, X, MODE_LOG_PROBA)

    def predict_proba(self, params, X):
        return self.scores(params, X, MODE_PROBA)

    def predict(self, params, X):
        return params.classes[special_kernels.argmax_rows(self.decision_scores(params, X))]

    def decision_scores(self, params, X):
        """Scores whose row-wise argmax is the predicted class (default: the jll)."""
        return self.joint_log_likelihood(params, X)

