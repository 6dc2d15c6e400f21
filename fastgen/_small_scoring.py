"""Scoring of small inputs by the families' numpy scorers (see :mod:`fastgen._small`):
the scoring functions of :mod:`fastgen.scoring` send validated X of at most
``SMALL_VALUES`` values here, and nothing compiles."""

from __future__ import annotations

import numpy as np

from ._small import MODE_JLL, MODE_LOG_PROBA, MODE_PROBA
from .gda.small import gaussian_scores
from .logistic.small import logistic_scores
from .naive_bayes.small import nb_scores

__all__ = ["score"]

_MODES = {"joint_log_likelihood": MODE_JLL, "predict_log_proba": MODE_LOG_PROBA,
          "predict_proba": MODE_PROBA, "predict": MODE_JLL}


def score(params, X, name):
    """The scoring function ``name`` of validated small X by the numpy scorer of the
    params' family (the params' own method where a family has none)."""
    mode = _MODES[name]
    for scorer in (gaussian_scores, nb_scores, logistic_scores):
        out = scorer(params, X, mode)
        if out is not None:
            break
    else:
        return getattr(params, "_" + name)(X)
    if name == "predict":
        return params.classes[np.argmax(out, axis=1) if out.shape[1] else
                              np.zeros(out.shape[0], dtype=np.intp)]
    return out
