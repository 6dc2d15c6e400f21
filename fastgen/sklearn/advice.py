"""Errors and warnings of the model layer, reworded in the estimator's own parameters.

The model layer's messages say what to do in its own keywords (``reg>0``,
``covariance='pooled'``, ``em_tol``, ``unlabeled=``).  An estimator has other names
for some of them (QDA's ``reg_param``), and none at all for others (LDA has no
``reg``, no estimator has ``em_tol``): :func:`in_own_terms` raises such an error
again, and warns such a warning again, with the advice translated for the estimator.
The rules are per estimator (:data:`_RULES`), applied in order; a message they do not
touch passes unchanged, as the same exception object.
"""

from __future__ import annotations

import contextlib
import re
import warnings

import numpy as np

from .._validation.rows import retexted
from .._warn import warn

__all__ = ["in_own_terms", "reworded"]

_NB_FOR_DIAGONAL = "GaussianNB (variances per class and feature)"

# (pattern, replacement) pairs; a replacement may be a function of the match
_COMMON = [
    # no estimator has em_tol: its EM stops by em_max_iter or fastgen's default rule
    (r"raise em_max_iter or em_tol", "raise em_max_iter"),
    (r"NaN in X or in unlabeled\b", "NaN in X (in labelled or unlabeled rows)"),
    (r"another generative model with unlabeled=",
     "another generative estimator with unlabeled_label"),
]

_QDA = [
    (r"reg and shrinkage apply only after EM, so they cannot help here",
     "reg_param applies only after EM, so it cannot help here"),
    (r"\breg adds reg·I\b", "reg_param adds reg_param·I"),
    (r"\(Σ ← \(1−reg\)Σ \+ reg·I\)", "(Σ ← (1−reg_param)Σ + reg_param·I)"),
    (r"\breg([=>])", r"reg_param\1"),
    (r"or pass a float shrinkage, use covariance='pooled', or drop",
     "use LinearDiscriminantAnalysis (one covariance shared by the classes), or drop"),
    (r"covariance='pooled' or 'diagonal'",
     f"LinearDiscriminantAnalysis (one covariance shared by the classes) or "
     f"{_NB_FOR_DIAGONAL}"),
    (r"(?:use )?covariance='pooled'",
     "use LinearDiscriminantAnalysis (one covariance shared by the classes)"),
]

_LDA = [
    (r"reg and shrinkage apply only after EM, so they cannot help here",
     "shrinkage applies only after EM, so it cannot help here"),
    (r"pass reg>0 or check the data", "check the data"),
    (r"refit with reg>0 \(or drop the constant or collinear features\)",
     "refit with a float shrinkage in (0, 1] (or drop the constant or collinear "
     "features)"),
    (r"covariance='pooled_diagonal' or 'diagonal'", _NB_FOR_DIAGONAL),
    (r"\bpass reg>0\b", "pass a float shrinkage in (0, 1]"),
]

_FIRTH = [
    (r"fit_logistic\((?:X, y, )?penalty='firth', correction=('?\w+'?)\)",
     r"FirthLogisticRegression(correction=\1)"),
    (r"fit_logistic\((?:X, y, )?penalty='firth'\)", "FirthLogisticRegression"),
    (r"^fit_logistic: ", "fit: "),
    (r"^logistic_inference: ", "summary(): "),
    (r" \(ci='profile' gives profile-likelihood intervals\)", ""),
]

# LogisticRegression: fastgen's l2 is 1/C; Firth's fit is another estimator
def _c_of_l2(m):
    return f"fitted with C={1.0 / float(m.group(1)):g} (l2 = 1/C)"


_LOGISTIC = _FIRTH + [
    (r"^fit_logistic (did not converge|stopped after)", r"LogisticRegression \1"),
    (r"fitted with l2=([0-9.]+(?:e[+-]?\d+)?)", _c_of_l2),
    (r"refit with l2=0", "refit with C=np.inf"),
    (r"\(or penalty='firth'", "(or FirthLogisticRegression"),
    (r"Pass penalty='firth'", "Use FirthLogisticRegression"),
    (r"\bl2 > 0\b", "a finite C (l2 = 1/C > 0)"),
    (r"logistic_inference does not take ridge fits", "summary() needs C=np.inf"),
    (r"(standard errors|intervals) from logistic_inference\)", r"\1 from its summary())"),
    (r"\band pass that model\b", "and use its summary()"),
]

_RULES = {
    "QuadraticDiscriminantAnalysis": _QDA,
    "LinearDiscriminantAnalysis": _LDA,
    "LogisticRegression": _LOGISTIC,
    "LogisticRegressionIRLS": _LOGISTIC,
    "FirthLogisticRegression": _FIRTH,
}


def reworded(estimator, message: str, unlabeled_rows=None) -> str:
    """``message`` of the model layer in ``estimator``'s own terms.

    ``unlabeled_rows``: the rows of the estimator's X that ``fit`` handed to the model
    layer as ``unlabeled`` (in order), so that "unlabeled row 3" names its row of X.
    """
    out = message
    for pattern, repl in _RULES.get(type(estimator).__name__, []) + _COMMON:
        out = re.sub(pattern, repl, out)
    if unlabeled_rows is not None:
        label = getattr(estimator, "unlabeled_label", None)
        rows = np.asarray(unlabeled_rows)

        def row_of_x(m):
            i = int(m.group(1))
            where = f"row {int(rows[i])} of X" if i < rows.shape[0] else f"row {i}"
            return f"{where} (an unlabeled row, y == {label!r})"

        out = re.sub(r"\bunlabeled row (\d+)", row_of_x, out)
    return out


@contextlib.contextmanager
def in_own_terms(estimator, unlabeled_rows=None, warnings_too=True):
    """Within the block, a ValueError (LinAlgError included) or a warning of the model
    layer is raised or warned again with its advice in ``estimator``'s terms
    (:func:`reworded`); the exception type and warning category stay.  The warnings
    are recorded and warned again as the block ends (then through the caller's
    filters), before its error if it raises one; ``warnings_too=False`` leaves them
    alone (scoring, which warns nothing to reword, and may run in many threads)."""
    caught = []
    try:
        if warnings_too:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                yield
        else:
            yield
    except ValueError as exc:
        _warn_again(estimator, caught, unlabeled_rows)
        text = reworded(estimator, str(exc), unlabeled_rows)
        if text == str(exc):
            raise
        raise retexted(exc, text) from None
    except BaseException:
        _warn_again(estimator, caught, unlabeled_rows)
        raise
    _warn_again(estimator, caught, unlabeled_rows)


def _warn_again(estimator, caught, unlabeled_rows):
    for w in caught:  # at the caller's line, whatever the depth of the estimator's call
        warn(reworded(estimator, str(w.message), unlabeled_rows), w.category)
