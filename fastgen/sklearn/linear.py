"""scikit-learn's logistic regression interface on ``fastgen.fit_logistic`` (IRLS)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning as _SkConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.class_weight import compute_sample_weight

from .. import ConvergenceWarning as _FgConvergenceWarning
from .. import fit_logistic
from .._warn import warn
from .base import FastgenClassifier

__all__ = ["LogisticRegressionIRLS"]


class LogisticRegressionIRLS(LinearClassifierMixin, FastgenClassifier):
    """L2-penalised logistic regression by Newton's method (``fastgen.fit_logistic``).

    Minimises Σ_i w_i·(−log p(y_i | x_i)) + ‖coef‖² / (2C), scikit-learn's
    ``LogisticRegression`` objective (binary, or multinomial for more than two
    classes), so ``fastgen``'s ``l2 = 1 / C``; ``C = inf`` or ``penalty=None`` fit
    without penalty (``l2 = 0``).  Dense or CSR.

    Parameters
    ----------
    penalty : {"l2", None}, default "l2"
    C : float, default 1.0
        Inverse regularisation strength (> 0; ``np.inf`` for none).
    tol : float, default 1e-4
        Stop when max|∇f| / Σw ≤ tol and the Newton decrement / Σw ≤ tol
        (scikit-learn's newton-cholesky criterion).
    fit_intercept : bool, default True
    class_weight : dict, "balanced" or None, default None
        Multiplies the sample weights, as in scikit-learn.
    max_iter : int, default 100

    Attributes
    ----------
    params_ : fastgen.LogisticParams
    classes_, coef_, intercept_, n_iter_, n_features_in_, feature_names_in_ :
        As in scikit-learn.  With no penalty and more than two classes the coefficients
        are in the reference-class parametrisation (``coef_[0] = 0``; the optimum is not
        unique); probabilities are unaffected.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When Newton's method stops early, or the classes are separable without penalty.
    """

    _accept_sparse = True

    def __init__(self, penalty="l2", *, C=1.0, tol=1e-4, fit_intercept=True,
                 class_weight=None, max_iter=100):
        self.penalty = penalty
        self.C = C
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.max_iter = max_iter

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default None

        Returns
        -------
        self
        """
        if self.penalty not in ("l2", None):
            raise ValueError(f"penalty must be 'l2' or None; got {self.penalty!r}")
        if not (isinstance(self.C, (int, float, np.number)) and self.C > 0):
            raise ValueError(f"C must be a positive number (np.inf for no penalty); "
                             f"got {self.C!r}")
        X, y = self._validate_fit(X, y)
        if np.unique(y).shape[0] < 2:
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, but the data "
                "contains only one class"
            )
        l2 = 0.0 if self.penalty is None or np.isinf(self.C) else 1.0 / float(self.C)
        if self.class_weight is not None:
            cw = compute_sample_weight(self.class_weight, y)
            sample_weight = cw if sample_weight is None else cw * np.asarray(sample_weight)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            params = fit_logistic(X, y, l2=l2, fit_intercept=self.fit_intercept,
                                  sample_weight=sample_weight, max_iter=self.max_iter,
                                  tol=self.tol)
        for w in caught:
            cat = _SkConvergenceWarning if issubclass(w.category, _FgConvergenceWarning) \
                else w.category
            warn(str(w.message), cat)
        self.params_ = params
        self.classes_ = params.classes
        self.coef_ = params.coef
        self.intercept_ = params.intercept
        self.n_iter_ = np.array([params.n_iter], dtype=np.int32)
        return self

    def decision_function(self, X):
        """X·coef_ᵀ + intercept_ (for two classes the log-odds of ``classes_[1]``).

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return LinearClassifierMixin.decision_function(self, X)

    predict = FastgenClassifier.predict
    predict_proba = FastgenClassifier.predict_proba
    predict_log_proba = FastgenClassifier.predict_log_proba
