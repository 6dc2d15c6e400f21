"""The shared base of fastgen's scikit-learn estimators, and the list of known check failures.

:class:`FastgenClassifier` validates input the scikit-learn way (``validate_data``,
``check_classification_targets``) and scores with fastgen's public scoring functions;
:func:`expected_failed_checks` names the ``check_estimator`` checks an estimator cannot
pass, with the reason.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import predict, predict_log_proba, predict_proba
from .advice import in_own_terms
from .ranges import check_param_ranges

__all__ = ["FLOATS", "FastgenClassifier", "LinearFastgenClassifier", "expected_failed_checks"]

#: the dtypes the estimators keep (float32 stays float32); others become float64
FLOATS = [np.float64, np.float32]


class FastgenClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict plumbing: validate, call the model layer, map attributes.

    A subclass fits the model layer's params into ``params_`` and sets scikit-learn's
    attributes from them; ``predict``, ``predict_proba`` and ``predict_log_proba`` call
    fastgen's scoring functions on ``params_``.  Class attributes: ``_accept_sparse``
    (CSR input), ``_min_samples`` (rows ``fit`` needs).
    """

    _accept_sparse = False
    _min_samples = 1

    def _nan_policy(self):
        """The estimator's ``nan_policy`` ("raise" for those without one)."""
        return getattr(self, "nan_policy", "raise")

    def _finite(self):
        """scikit-learn's ``ensure_all_finite``: NaN passes with "marginalize"."""
        return "allow-nan" if self._nan_policy() == "marginalize" else True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accept_sparse
        tags.input_tags.allow_nan = self._nan_policy() == "marginalize"
        return tags

    def _validate_fit(self, X, y, reset=True):
        check_param_ranges(self)
        X, y = validate_data(self, X, y, reset=reset, dtype=FLOATS,
                             accept_sparse="csr" if self._accept_sparse else False,
                             ensure_min_samples=self._min_samples,
                             ensure_all_finite=self._finite())
        check_classification_targets(y)
        return X, y

    def _validate_predict(self, X):
        check_is_fitted(self, "params_")
        return validate_data(self, X, reset=False, dtype=FLOATS,
                             accept_sparse="csr" if self._accept_sparse else False,
                             ensure_all_finite=self._finite())

    def predict(self, X):
        """Most probable class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        X = self._validate_predict(X)
        with in_own_terms(self, warnings_too=False):
            return predict(self.params_, X, nan_policy=self._nan_policy())

    def predict_proba(self, X):
        """Class probabilities p(y = k | x), rows summing to one: an ndarray of shape
        (n_samples, n_classes), columns in the order of ``classes_``, for X as in
        :meth:`predict`."""
        X = self._validate_predict(X)
        with in_own_terms(self, warnings_too=False):
            return predict_proba(self.params_, X, nan_policy=self._nan_policy())

    def predict_log_proba(self, X):
        """Log class probabilities log p(y = k | x) (a stable log-sum-exp, not log(proba)).

        X and the result are as in :meth:`predict_proba`.
        """
        X = self._validate_predict(X)
        with in_own_terms(self, warnings_too=False):
            return predict_log_proba(self.params_, X, nan_policy=self._nan_policy())


class LinearFastgenClassifier(LinearClassifierMixin, FastgenClassifier):
    """A :class:`FastgenClassifier` whose scores are linear in x, f(x) = X·coef_ᵀ + intercept_.

    scikit-learn's ``LinearClassifierMixin`` gives ``decision_function`` from the
    subclass's ``coef_`` and ``intercept_``; the class predictions and probabilities
    still come from fastgen's scoring of ``params_``.
    """

    def decision_function(self, X):
        """X·coef_ᵀ + intercept_ (for two classes the log-odds of ``classes_[1]``).

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            CSR only where the estimator accepts sparse input.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            With ``nan_policy="marginalize"``, a row with NaN gets its log posteriors
            (for two classes the log-odds) from the marginal of its observed features:
            X·coef_ᵀ + intercept_ of a complete row is the same up to a constant per row.
        """
        if self._nan_policy() != "marginalize":
            return LinearClassifierMixin.decision_function(self, X)
        X = self._validate_predict(X)
        incomplete = np.isnan(X).any(axis=1)
        out = X.copy()
        out[incomplete] = 0.0
        scores = out @ self.coef_.T + self.intercept_
        if incomplete.any():
            with in_own_terms(self, warnings_too=False):
                lp = predict_log_proba(self.params_, X[incomplete], nan_policy="marginalize")
            scores[incomplete] = lp[:, 1:] - lp[:, :1] if scores.shape[1] == 1 else lp
        return scores.ravel() if scores.shape[1] == 1 else scores

    predict = FastgenClassifier.predict
    predict_proba = FastgenClassifier.predict_proba
    predict_log_proba = FastgenClassifier.predict_log_proba


# ---------------------------------------------------------------- estimator checks

_NON_INTEGER_CODES = (
    "the check fits on non-integer floats; fastgen rejects non-integer category codes "
    "with a ValueError where scikit-learn silently truncates them to integers"
)

_FIRTH_P_ABOVE_N = (
    "the check fits 30 features on 15 rows (fewer with zero weights): the Fisher "
    "information is singular when there are more coefficients than rows, so Firth's "
    "penalty ½·log det I is undefined; fastgen raises LinAlgError (a ValueError) naming "
    "the cause rather than fit a penalty that does not exist"
)

_EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    "FirthLogisticRegression": {
        "check_sample_weight_equivalence_on_dense_data": _FIRTH_P_ABOVE_N,
        "check_sample_weight_equivalence_on_sparse_data": _FIRTH_P_ABOVE_N,
    },
    "CategoricalNB": {
        "check_sample_weight_equivalence_on_dense_data": _NON_INTEGER_CODES,
        "check_sample_weight_equivalence_on_sparse_data": _NON_INTEGER_CODES,
        "check_classifiers_one_label_sample_weights": _NON_INTEGER_CODES,
    },
}


def expected_failed_checks(estimator) -> dict[str, str]:
    """The scikit-learn estimator checks that ``estimator`` is known to fail, with reasons.

    For ``check_estimator(est, expected_failed_checks=expected_failed_checks(est))``
    and ``parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)``.

    Parameters
    ----------
    estimator : BaseEstimator

    Returns
    -------
    dict
        Check name → reason.
    """
    return dict(_EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {}))
