"""scikit-learn's discriminant analysis estimators on ``fastgen.fit_gda``."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.linear_model._base import LinearClassifierMixin

from .. import fit_gda, joint_log_likelihood, lda_transform, linear_discriminant
from .._warn import warn
from .base import FastgenClassifier

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]

_LOG_2PI = float(np.log(2.0 * np.pi))


def _shrinkage(shrinkage):
    """scikit-learn's LDA/QDA shrinkage values to fastgen's."""
    if shrinkage is None or (isinstance(shrinkage, str) and shrinkage != "auto"):
        return shrinkage
    return "ledoit-wolf" if shrinkage == "auto" else shrinkage


class LinearDiscriminantAnalysis(ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                                 LinearClassifierMixin, FastgenClassifier):
    """Linear discriminant analysis: Gaussian classes with a shared covariance.

    ``fastgen.fit_gda(X, y, "pooled")`` behind scikit-learn's interface.  The covariance
    is the maximum-likelihood pooled within-class covariance (÷ n), as scikit-learn 1.9.

    Parameters
    ----------
    solver : {"svd", "lsqr", "eigen"}, default "svd"
        Accepted for compatibility; the model is the same for all three (fastgen
        factorises the covariance by Cholesky).  Only the parametrisation of ``coef_``
        and ``intercept_`` follows scikit-learn's solver: "svd" centres them on
        ``xbar_`` (coef_k = Σ⁻¹(μ_k − x̄)), "lsqr"/"eigen" do not (coef_k = Σ⁻¹μ_k);
        decision functions differ by a per-row constant, probabilities not at all.
        Unlike scikit-learn, "svd" accepts ``shrinkage`` and "lsqr" supports
        ``transform``.
    shrinkage : None, "auto" or float in [0, 1], default None
        Σ ← (1 − a)Σ + a·(tr Σ / d)·I.  "auto" is fastgen's Ledoit-Wolf intensity on
        the pooled within-class covariance of the raw features; scikit-learn
        standardises the features and applies Ledoit-Wolf to each class covariance, so
        "auto" gives a (slightly) different intensity.  A float gives the same model
        as scikit-learn when ``priors`` are the empirical ones (scikit-learn's
        lsqr/eigen solvers weight the class covariances by ``priors``).
    priors : array-like of shape (n_classes,), default None
        Class priors; renormalised with a warning if they do not sum to one.
    n_components : int, default None
        Dimensions kept by ``transform`` (at most min(n_classes − 1, n_features)).
    store_covariance : bool, default False
        Set ``covariance_`` (always set for solver "lsqr"/"eigen", as scikit-learn).
    tol : float, default 1e-4
        Accepted for compatibility; unused (a singular covariance raises
        ``fastgen.SingularCovarianceError``, a ``ValueError``; pass ``shrinkage``).

    Attributes
    ----------
    params_ : fastgen.GDAParams
    classes_, priors_, means_, xbar_, coef_, intercept_, covariance_ :
        As in scikit-learn (``coef_`` is (1, d) for two classes).
    n_features_in_, feature_names_in_ :
    """

    _min_samples = 2

    def __init__(self, solver="svd", shrinkage=None, priors=None, n_components=None,
                 store_covariance=False, tol=1e-4):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.n_components = n_components
        self.store_covariance = store_covariance
        self.tol = tol

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        if self.solver not in ("svd", "lsqr", "eigen"):
            raise ValueError(f"solver must be 'svd', 'lsqr' or 'eigen'; got {self.solver!r}")
        X, y = self._validate_fit(X, y)
        priors = self.priors
        if priors is not None:
            priors = np.asarray(priors, dtype=np.float64)
            if np.any(priors < 0):
                raise ValueError("priors must be non-negative")
            if abs(priors.sum() - 1.0) > 1e-5:
                warn("The priors do not sum to 1. Renormalizing", UserWarning)
            priors = priors / priors.sum()
        K = np.unique(y).shape[0]
        max_components = min(K - 1, X.shape[1])
        if self.n_components is not None and self.n_components > max_components:
            raise ValueError(
                "n_components cannot be larger than min(n_features, n_classes - 1)."
            )
        params = fit_gda(X, y, "pooled", priors=priors, shrinkage=_shrinkage(self.shrinkage))
        self.params_ = params
        self.classes_ = params.classes
        self.priors_ = params.priors
        self.means_ = params.means
        self.xbar_ = params.priors @ params.means
        if self.store_covariance or self.solver != "svd":
            self.covariance_ = params.covariance
        W, b = linear_discriminant(params)
        coef, intercept = W.T, b
        if self.solver == "svd":
            # scikit-learn's svd solver centres on x̄: Σ⁻¹(μ_k − x̄) and a shifted bias
            wbar = W @ params.priors
            coef = coef - wbar
            intercept = intercept + 0.5 * (self.xbar_ @ wbar)
        if self.classes_.shape[0] == 2:
            coef = coef[1:] - coef[:1]
            intercept = intercept[1:] - intercept[:1]
        self.coef_ = np.ascontiguousarray(coef)
        self.intercept_ = np.asarray(intercept)
        self._max_components = (max_components if self.n_components is None
                                else self.n_components)
        self._n_features_out = self._max_components
        return self

    def transform(self, X):
        """Project X onto the discriminant directions (``fastgen.lda_transform``).

        Equal to scikit-learn's ``transform`` up to the sign of each column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        X = self._validate_predict(X)
        return lda_transform(self.params_, X, self._max_components)

    def decision_function(self, X):
        """X·coef_ᵀ + intercept_ (for two classes the log-odds of ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return LinearClassifierMixin.decision_function(self, X)

    predict = FastgenClassifier.predict
    predict_proba = FastgenClassifier.predict_proba
    predict_log_proba = FastgenClassifier.predict_log_proba


class QuadraticDiscriminantAnalysis(FastgenClassifier):
    """Quadratic discriminant analysis: one Gaussian per class, each its own covariance.

    ``fastgen.fit_gda(X, y, "per_class", reg=reg_param)``.  Covariances are
    maximum-likelihood (÷ n_k), as scikit-learn 1.9 (earlier versions divided by
    n_k − 1: ``fastgen.fit_gda(..., unbiased=True)``).

    Parameters
    ----------
    solver : {"svd", "eigen"}, default "svd"
        Accepted for compatibility; the model is the same.
    shrinkage : None, "auto" or float in [0, 1], default None
        Per-class Σ_k ← (1 − a)Σ_k + a·(tr Σ_k / d)·I; "auto" is fastgen's
        Ledoit-Wolf on the raw features (scikit-learn standardises first).
    priors : array-like of shape (n_classes,), default None
    reg_param : float in [0, 1], default 0.0
        Σ_k ← (1 − reg_param)Σ_k + reg_param·I.
    store_covariance : bool, default False
        Set ``covariance_`` ((K, d, d); scikit-learn stores a list of (d, d) arrays).
    tol : float, default 1e-4
        Accepted for compatibility; unused (a singular covariance raises
        ``fastgen.SingularCovarianceError``; pass ``reg_param``).

    Attributes
    ----------
    params_ : fastgen.GDAParams
    classes_, priors_, means_, covariance_, n_features_in_, feature_names_in_ :
        As in scikit-learn.  ``rotations_`` and ``scalings_`` (eigen-decompositions) are
        not computed: fastgen keeps Cholesky factors (``params_.cholesky``).
    """

    def __init__(self, *, solver="svd", shrinkage=None, priors=None, reg_param=0.0,
                 store_covariance=False, tol=1e-4):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.reg_param = reg_param
        self.store_covariance = store_covariance
        self.tol = tol

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        if self.solver not in ("svd", "eigen"):
            raise ValueError(f"solver must be 'svd' or 'eigen'; got {self.solver!r}")
        X, y = self._validate_fit(X, y)
        if np.unique(y).shape[0] < 2:
            raise ValueError("The number of classes has to be greater than one. Got 1 class.")
        params = fit_gda(X, y, "per_class", priors=self.priors, reg=self.reg_param,
                         shrinkage=_shrinkage(self.shrinkage))
        self.params_ = params
        self.classes_ = params.classes
        self.priors_ = params.priors
        self.means_ = params.means
        if self.store_covariance:
            self.covariance_ = params.covariance
        return self

    def decision_function(self, X):
        """log p(x | y=k) + log p(y=k) without the −d/2·log 2π constant (scikit-learn's).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, the log-likelihood ratio of ``classes_[1]``.
        """
        X = self._validate_predict(X)
        jll = joint_log_likelihood(self.params_, X)
        if jll.shape[1] == 2:
            return jll[:, 1] - jll[:, 0]
        return jll + 0.5 * self.n_features_in_ * _LOG_2PI
