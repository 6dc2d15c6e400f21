"""Scoring functions shared by every params type.

Each validates X once (dense or, where the model allows, CSR; converted to the dtype
the params were fitted in) and calls the params object's kernels.

Feature names follow scikit-learn's rule.  Params fitted on a data frame whose column
names are all str keep them (``params.feature_names``); a data frame scored with other
names, or the same names in another order, is a ValueError that lists the missing,
unexpected and misplaced columns.  Scoring an array after a data-frame fit, or a data
frame after an array fit, warns (a UserWarning): the columns can then be counted but not
matched.
"""

from __future__ import annotations

import numpy as np

from . import _small
from . import cuda as _cuda
from ._params import FittedParams
from ._runtime import serial_for_small_inputs
from ._validation import check_feature_names, check_n_features, check_X, feature_names_of

__all__ = ["joint_log_likelihood", "predict_log_proba", "predict_proba", "predict"]


def _check_params(params):
    if not isinstance(params, FittedParams):
        raise ValueError(
            f"params must be a fitted fastgen params object (e.g. the result of fit_gda); "
            f"got {type(params).__name__}"
        )


def _check_names(params, X):
    """Check the column names of X (a data frame or not) against ``params.feature_names``
    (see the module docstring)."""
    names = feature_names_of(X)
    if names is not None or params.feature_names is not None:
        check_feature_names(params.feature_names, names, type(params).__name__)


def _prepare(params, X):
    X = check_X(X, allow_sparse=params.accepts_sparse, dtype=params.dtype,
                finite=not params.checks_finite_scores,
                csr_indices=not getattr(params, "checks_csr_indices", False))
    check_n_features(X, params.n_features_in)
    return X


def _score(params, X, name):
    """The scoring function ``name`` of X: device arrays go to :mod:`fastgen.cuda`'s
    function of that name, the rest is validated once and goes to the params object's
    ``_<name>`` method."""
    _check_params(params)
    _check_names(params, X)
    if _cuda.is_device_array(X):
        return getattr(_cuda, name)(params, X)
    X = _prepare(params, X)
    if _small.is_small(X):  # numpy scorers: no compilation (fastgen._small)
        from ._small_scoring import score

        return score(params, X, name)
    return getattr(params, "_" + name)(X)


@serial_for_small_inputs(1)
def joint_log_likelihood(params, X) -> np.ndarray:
    """log p(x, y=k) = log p(x | y=k) + log p(y=k) for each row and class, shape (n, K).

    For discriminative models (logistic regression) this is the unnormalised log
    posterior (the linear predictor of each class).
    """
    return _score(params, X, "joint_log_likelihood")


@serial_for_small_inputs(1)
def predict_log_proba(params, X) -> np.ndarray:
    """log p(y=k | x), shape (n, K), normalised with a stable log-sum-exp.

    A row for which every class has log-likelihood -inf gets -inf everywhere, not NaN.
    """
    return _score(params, X, "predict_log_proba")


@serial_for_small_inputs(1)
def predict_proba(params, X) -> np.ndarray:
    """p(y=k | x), shape (n, K); rows sum to one."""
    return _score(params, X, "predict_proba")


@serial_for_small_inputs(1)
def predict(params, X) -> np.ndarray:
    """The most probable class label of each row, taken from ``params.classes``."""
    return _score(params, X, "predict")
