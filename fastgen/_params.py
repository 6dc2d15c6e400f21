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

from ._validation import _kernel_view
from .kernels.special import (
    MODE_JLL,
    MODE_LOG_PROBA,
    MODE_PROBA,
    argmax_rows,
    finish_all_rows,
)

__all__ = ["FittedParams", "register_params", "PARAMS_TYPES", "kernel_view"]

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

    #: name of the (K, d) array field that fixes the model's width and dtype: its last
    #: axis has one entry per feature, its dtype is the one scoring computes in
    _feature_table: str

    @property
    def n_features_in(self) -> int:
        """Number of features d: the last axis of the ``_feature_table`` field."""
        return int(getattr(self, self._feature_table).shape[-1])

    @property
    def dtype(self) -> np.dtype:
        """The floating dtype scoring computes in (that of the fitted parameters)."""
        return getattr(self, self._feature_table).dtype

    def __post_init__(self):
        # a subclass with checks of its own overrides this and calls _check_arrays first
        self._check_arrays()

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
        """Reject object arrays (params must round-trip through npz without pickle) and
        make every array field read-only.

        Scoring tables derived from the fields are cached on the object at its first
        use, so a field edited in place would be silently ignored: in-place writes
        raise instead, and :func:`dataclasses.replace` (a new object, new caches) is the
        way to change a model.  A writeable array is copied first, so the params object
        holds memory no one else can write, and the caller's array stays writeable (the
        copies are of the parameters, K×d sized, never of the data).  An array that is
        already read-only is kept as it is.

        numba compiles a separate specialisation of a kernel for read-only arrays:
        fields and the tables derived from them reach kernels through
        :func:`kernel_view` (a writeable-flagged alias, no copy), so every kernel keeps
        one specialisation per dtype.
        """
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, np.ndarray):
                continue
            if v.dtype == object:
                raise ValueError(f"{type(self).__name__}.{f.name} must not be an object array")
            if v.flags.writeable:
                v = v.copy()
                v.flags.writeable = False
                object.__setattr__(self, f.name, v)


def kernel_view(*arrays):
    """Writeable-flagged aliases (no copy) of read-only arrays, for kernel calls.

    Kernels never write their table arguments; the alias keeps numba at one
    specialisation per dtype (see :meth:`FittedParams._check_arrays`).  Non-arrays pass
    through.  One argument gives one result, several a tuple.
    """
    out = tuple(_kernel_view(a) if isinstance(a, np.ndarray) else a for a in arrays)
    return out[0] if len(out) == 1 else out
