"""The base class of every fitted-parameter dataclass.

A params object is a frozen dataclass whose fields are numpy arrays or plain scalars
(int, float, bool, str).  It knows how to score already-validated data; the public
functions in :mod:`fastgen.scoring` validate X once and call these methods.

Subclasses implement ``_joint_log_likelihood(X)`` and may override
``_predict_log_proba`` / ``_predict_proba`` with faster fused paths (the pooled GDA
model, for instance, needs only ``X·W + b`` for posteriors).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .kernels.special import (
    MODE_JLL,
    MODE_LOG_PROBA,
    MODE_PROBA,
    argmax_rows,
    finish_all_rows,
)

__all__ = ["FittedParams", "register_params", "PARAMS_TYPES"]

# name -> class, for load_params.
PARAMS_TYPES: dict[str, type] = {}


def register_params(cls):
    """Class decorator: make a params dataclass known to save/load."""
    PARAMS_TYPES[cls.__name__] = cls
    return cls


class FittedParams:
    """Mixin for frozen parameter dataclasses."""

    #: whether scoring accepts scipy CSR input
    accepts_sparse: bool = False
    #: whether scoring finds non-finite X through its own results, so that validation
    #: can skip the up-front scan (a full extra read of X)
    checks_finite_scores: bool = False

    @property
    def n_features_in(self) -> int:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    @property
    def dtype(self) -> np.dtype:
        """The floating dtype scoring computes in (that of the fitted parameters)."""
        raise NotImplementedError  # pragma: no cover

    @property
    def n_classes(self) -> int:
        return int(self.classes.shape[0])

    def _scores(self, X, mode):
        """Joint log-likelihoods, log posteriors or posteriors (``mode``, see
        :mod:`fastgen.kernels.special`) of validated X.

        Models with fused scoring kernels override this; the default normalises the rows
        of :meth:`_joint_log_likelihood` in place.
        """
        jll = self._joint_log_likelihood(X)
        if mode != MODE_JLL:
            finish_all_rows(jll, mode)
        return jll

    def _joint_log_likelihood(self, X):
        # a subclass overrides this or _scores (defining neither would recurse)
        return self._scores(X, MODE_JLL)

    def _predict_log_proba(self, X):
        return self._scores(X, MODE_LOG_PROBA)

    def _predict_proba(self, X):
        return self._scores(X, MODE_PROBA)

    def _predict(self, X):
        return self.classes[argmax_rows(self._decision_scores(X))]

    def _decision_scores(self, X):
        """Scores whose row-wise argmax is the predicted class (default: the jll)."""
        return self._joint_log_likelihood(X)

    def _check_arrays(self):
        """Reject object arrays (params must round-trip through npz without pickle).

        Arrays are left writeable on purpose: numba compiles a separate specialisation
        for read-only arrays, and every kernel would then be compiled twice.
        """
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray) and v.dtype == object:
                raise ValueError(f"{type(self).__name__}.{f.name} must not be an object array")
