"""Scoring of small inputs by the families' numpy scorers (see :mod:`fastgen._small`):
the scoring functions of :mod:`fastgen.scoring` send validated X of at most
``SMALL_VALUES`` values here, and nothing compiles.  Each family's scorer is imported
when its params are scored (importing every family would cost a first call more than
the scoring)."""

from __future__ import annotations

import numpy as np

from ._small import MODE_JLL, MODE_LOG_PROBA, MODE_PROBA

__all__ = ["score"]

_MODES = {"joint_log_likelihood": MODE_JLL, "predict_log_proba": MODE_LOG_PROBA,
          "predict_proba": MODE_PROBA, "predict": MODE_JLL}


def _scorer(params):
    """The numpy scorer of the params' family, or None."""
    if hasattr(params, "scoring_tables"):  # GDA and Gaussian naive Bayes
        from .gda.small import gaussian_scores

        return gaussian_scores
    module = type(params).__module__
    if module.startswith("fastgen.naive_bayes."):
        from .naive_bayes.small import nb_scores

        return nb_scores
    if module.startswith("fastgen.logistic."):
        from .logistic.small import logistic_scores

        return logistic_scores
    return None


def score(params, X, name):
    """The scoring function ``name`` of validated small X by the numpy scorer of the
    params' family (the params' own method where a family has none)."""
    scorer = _scorer(params)
    out = None if scorer is None else scorer(params, X, _MODES[name])
    if out is None:
        return getattr(params, "_" + name)(X)
    if name == "predict":
        return params.classes[np.argmax(out, axis=1) if out.shape[1] else
                              np.zeros(out.shape[0], dtype=np.intp)]
    return out
