"""What every naive Bayes model shares: argument checks, priors, counting, and
``LinearNB``, the params base of the models linear in their features.

Imports the shared core only (``fastgen._params``, ``_runtime``, ``_validation``,
``kernels``); the model modules of this package import from here, never the reverse.
The names here are public within the package (its model and counts modules use them);
users reach the models through :mod:`fastgen.naive_bayes`.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .._params import FittedParams, kernel_view, log_normalised
from .._validation import check_priors, check_scalar
from .._warn import warn
from ..stats.feature_counts import (  # the counting pass, shared with fastgen.nb_counts
    class_feature_counts,
    fit_inputs,
    locate_flat,
    reject_bad_values,
    weighted_class_count,
)
from .scoring import LINEAR_SCORER, LinearTables

__all__ = [
    "ALPHA_MIN",
    "AlphaClippedWarning",
    "LinearNB",
    "check_alpha",
    "check_bool",
    "class_feature_counts",
    "fit_inputs",
    "handed_over",
    "locate_flat",
    "log_allow_zero",
    "log_priors",
    "reject_bad_values",
    "weighted_class_count",
]


def handed_over(a):
    """A fresh array no one else holds, made read-only, so that the params object keeps
    it without the defensive copy of
    :meth:`~fastgen._params.FittedParams._check_arrays`."""
    if isinstance(a, np.ndarray):
        a.flags.writeable = False
    return a


ALPHA_MIN = 1e-10

class AlphaClippedWarning(UserWarning):
    """``alpha`` was below 1e-10 and has been clipped to 1e-10."""


def check_alpha(alpha) -> float:
    """``alpha`` as a float >= 0, clipped to :data:`ALPHA_MIN` with a warning."""
    a = check_scalar(alpha, "alpha", low=0.0)
    if a < ALPHA_MIN:
        warn(
            f"alpha={alpha!r} is below {ALPHA_MIN:.0e} and would give log(0) for unseen "
            f"features; clipping alpha to {ALPHA_MIN:.0e}",
            AlphaClippedWarning,
        )
        a = ALPHA_MIN
    return a


def check_bool(value, name) -> bool:
    """``value`` as a bool; anything but True/False is a ValueError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def log_allow_zero(a):
    """log(a) with log(0) = −∞ and no divide warning."""
    with np.errstate(divide="ignore"):
        return np.log(a)


def log_priors(class_count, fit_prior, class_prior, classes=None):
    """log π_k: from ``class_prior`` if given (a sequence, or a mapping from the labels
    ``classes``), else N_k / Σ N_k (``fit_prior``) or 1/K."""
    K = class_count.shape[0]
    p = check_priors(class_prior, K if classes is None else classes, name="class_prior")
    if p is not None:
        return log_allow_zero(p)
    if fit_prior:
        return log_allow_zero(class_count) - np.log(class_count.sum())
    return np.full(K, -np.log(K))


class LinearNB(FittedParams):
    """Models whose joint log-likelihood is linear in (possibly binarized) features."""

    scorer = LINEAR_SCORER
    _feature_table = "feature_log_prob"

    def _check_counts_and_tables(self, check, weights="log"):
        """The fields the count models share: N_k (K,), the feature counts (K, d),
        log π_k and the (K, d) table of ``weights`` ("log": log-probabilities, or
        "finite"), and α; returns the table's dtype."""
        dt = check.table("feature_log_prob", weights).dtype
        check.array("class_count", ("K",), "float", "nonneg")
        check.array("feature_count", ("K", "d"), "float", "nonneg")
        check.array("class_log_prior", ("K",), "float", "log")
        check.real("alpha", low=0.0)
        return dt

    def _check_derived(self, check):
        """The class log-priors are a distribution; each model adds its tables."""
        log_normalised(check, "class_log_prior", self.class_log_prior, 0, self.dtype)

    #: True where the model reads X as binary without a threshold (Bernoulli with
    #: binarize=None): scoring then refuses any other value, as the fit does
    _binary_input = False
    #: True where the model scores counts (multinomial, complement): scoring refuses a
    #: negative value, as the fit does (the CSR kernel keeps a running minimum)
    _nonneg_input = False

    # (d, K) float64 weights, (K,) float64 bias, binarize flag, threshold
    def _linear_form(self):  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def scoring_tables(self):
        """("linear", :class:`~fastgen.naive_bayes.scoring.LinearTables`): the weights
        W (d, K) and bias b (K,) in float64 with jll = A·W + b (A = X, or X binarized),
        and what X must hold, for :data:`~fastgen.naive_bayes.scoring.LINEAR_SCORER`."""
        return self._scoring_tables

    @cached_property
    def _scoring_tables(self):
        W, b, binarize, threshold = self._linear_form()
        W, b = kernel_view(np.ascontiguousarray(W, dtype=np.float64),
                           np.ascontiguousarray(b, dtype=np.float64))
        return "linear", LinearTables(W, b, bool(binarize), float(threshold),
                                      bool(self._binary_input), bool(self._nonneg_input))
