"""The range checks of the estimators' hyper-parameters that every ``fit`` (and
``partial_fit``) runs first, by attribute name, so that an out-of-range value is a
ValueError naming it rather than a failure further in (scikit-learn's ranges: QDA's
``reg_param`` in [0, 1], ``tol`` >= 0, ``n_components`` >= 1, flags True or False).
The model layer checks the rest (``alpha``, ``var_smoothing``, ``C``, ``priors``)."""

from __future__ import annotations

import numbers

import numpy as np

from .._em import check_em_options
from .._validation import check_scalar

__all__ = ["check_param_ranges"]

_FLAGS = ("store_covariance", "warm_start", "force_alpha", "fit_prior", "fit_intercept")


def check_param_ranges(est) -> None:
    """ValueError naming the first hyper-parameter of ``est`` outside its range."""
    name = type(est).__name__
    if hasattr(est, "reg_param"):
        check_scalar(est.reg_param, f"{name}: reg_param", low=0.0, high=1.0)
    if hasattr(est, "tol"):
        check_scalar(est.tol, f"{name}: tol", low=0.0)
    if getattr(est, "n_components", None) is not None:
        n = est.n_components
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"{name}: n_components must be None or an integer >= 1; "
                             f"got {n!r}")
    for flag in _FLAGS:
        if hasattr(est, flag) and not isinstance(getattr(est, flag), (bool, np.bool_)):
            raise ValueError(f"{name}: {flag} must be True or False; "
                             f"got {getattr(est, flag)!r}")
    if hasattr(est, "unlabeled_weight") or hasattr(est, "em_max_iter"):
        try:
            check_em_options(getattr(est, "unlabeled_weight", 1.0), 0.0,
                             getattr(est, "em_max_iter", 0))
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
