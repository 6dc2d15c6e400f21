"""Scoring functions shared by every params type.

Each checks the params and X's column names, then hands X to the params' scorer
(``params.scorer``, :mod:`fastgen._scorer`), which validates X once (dense or, where
the model allows, CSR; converted to the dtype the params were fitted in) and scores it
with the params' tables: by numpy passes for small X (at most
:data:`fastgen._small.SMALL_VALUES` stored values, nothing compiles), else on the host
kernels, or on the device kernels of :mod:`fastgen.cuda` for a CUDA array.

Feature names follow scikit-learn's rule.  Params fitted on a data frame whose column
names are all str keep them (``params.feature_names``); a data frame scored with other
names, or the same names in another order, is a ValueError that lists the missing,
unexpected and misplaced columns.  Scoring an array after a data-frame fit, or a data
frame after an array fit, warns (a UserWarning): the columns can then be counted but not
matched.

``nan_policy="marginalize"`` scores a row with NaN by the marginal likelihood of its
observed features (:mod:`fastgen.scoring_missing`); the default "raise" refuses NaN.
"""

from __future__ import annotations

import numpy as np

from ._params import FittedParams
from ._runtime import serial_for_small_inputs
from ._scorer import MODE_JLL, MODE_LOG_PROBA, MODE_PREDICT, MODE_PROBA
from ._validation import check_feature_names, feature_names_of
from .scoring_missing import check_nan_policy, score_marginal

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


def _score(params, X, mode, nan_policy="raise"):
    """Scores (or labels, ``MODE_PREDICT``) of X by the params' scorer (with
    ``nan_policy="marginalize"``, rows with NaN through
    :func:`fastgen.scoring_missing.score_marginal`)."""
    _check_params(params)
    check_nan_policy(nan_policy)
    _check_names(params, X)
    if nan_policy == "marginalize":
        return score_marginal(params, X, mode)
    return params.scorer.score(params, X, mode)


@serial_for_small_inputs(1)
def joint_log_likelihood(params, X, *, nan_policy="raise") -> np.ndarray:
    """log p(x, y=k) = log p(x | y=k) + log p(y=k) for each row and class, shape (n, K).

    For discriminative models (logistic regression) this is the unnormalised log
    posterior (the linear predictor of each class).

    ``nan_policy``: "raise" refuses NaN in X; "marginalize" integrates the missing
    features out (see the module docstring).
    """
    return _score(params, X, MODE_JLL, nan_policy)


@serial_for_small_inputs(1)
def predict_log_proba(params, X, *, nan_policy="raise") -> np.ndarray:
    """log p(y=k | x), shape (n, K), normalised with a stable log-sum-exp.

    A row for which every class has log-likelihood -inf gets -inf everywhere, not NaN.

    ``nan_policy``: "raise" refuses NaN in X; "marginalize" integrates the missing
    features out (see the module docstring).
    """
    return _score(params, X, MODE_LOG_PROBA, nan_policy)


@serial_for_small_inputs(1)
def predict_proba(params, X, *, nan_policy="raise") -> np.ndarray:
    """p(y=k | x), shape (n, K); rows sum to one.

    ``nan_policy``: "raise" refuses NaN in X; "marginalize" integrates the missing
    features out (see the module docstring).
    """
    return _score(params, X, MODE_PROBA, nan_policy)


@serial_for_small_inputs(1)
def predict(params, X, *, nan_policy="raise") -> np.ndarray:
    """The most probable class label of each row, taken from ``params.classes``.

    ``nan_policy``: "raise" refuses NaN in X; "marginalize" integrates the missing
    features out (see the module docstring).
    """
    return _score(params, X, MODE_PREDICT, nan_policy)
