"""scikit-learn estimators backed by fastgen's models (install the ``sklearn`` extra).

Each estimator validates its input the scikit-learn way (``validate_data``,
``check_classification_targets``), calls the fastgen model layer, keeps the fitted
params dataclass as ``params_`` and exposes scikit-learn's fitted attributes, so that
replacing ``from sklearn.naive_bayes import GaussianNB`` by
``from fastgen.sklearn import GaussianNB`` is enough for existing code::

    from fastgen.sklearn import QuadraticDiscriminantAnalysis
    clf = QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    clf.predict_proba(X_test)
    fastgen.save_params("qda.npz", clf.params_)

Where the meaning differs from scikit-learn 1.9, the class docstring says so.  The
estimators pass ``sklearn.utils.estimator_checks.check_estimator``; the few checks that
cannot pass are listed, with the reason, by :func:`expected_failed_checks`.

Importing this module imports scikit-learn; ``import fastgen`` does not.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.exceptions import ConvergenceWarning as _SkConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_non_negative, validate_data

from . import naive_bayes as _nb
from ._validation import check_y
from .gda import fit_gda, lda_transform, linear_discriminant
from .logistic import ConvergenceWarning as _FgConvergenceWarning
from .logistic import fit_logistic
from .moments import ClassMoments, class_moments, merge_moments
from .scoring import joint_log_likelihood, predict, predict_log_proba, predict_proba

__all__ = [
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "GaussianNB",
    "BernoulliNB",
    "MultinomialNB",
    "ComplementNB",
    "CategoricalNB",
    "LogisticRegressionIRLS",
    "expected_failed_checks",
]

_FLOATS = [np.float64, np.float32]
_LOG_2PI = float(np.log(2.0 * np.pi))


def _shrinkage(shrinkage):
    """scikit-learn's LDA/QDA shrinkage values to fastgen's."""
    if shrinkage is None or (isinstance(shrinkage, str) and shrinkage != "auto"):
        return shrinkage
    return "ledoit-wolf" if shrinkage == "auto" else shrinkage


class _FastgenClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict plumbing: validate, call the model layer, map attributes."""

    _accept_sparse = False
    _min_samples = 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accept_sparse
        return tags

    def _validate_fit(self, X, y, reset=True):
        X, y = validate_data(self, X, y, reset=reset, dtype=_FLOATS,
                             accept_sparse="csr" if self._accept_sparse else False,
                             ensure_min_samples=self._min_samples)
        check_classification_targets(y)
        return X, y

    def _validate_predict(self, X):
        check_is_fitted(self, "params_")
        return validate_data(self, X, reset=False, dtype=_FLOATS,
                             accept_sparse="csr" if self._accept_sparse else False)

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
        return predict(self.params_, X)

    def predict_proba(self, X):
        """Class probabilities p(y = k | x), rows summing to one.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        X = self._validate_predict(X)
        return predict_proba(self.params_, X)

    def predict_log_proba(self, X):
        """Log class probabilities log p(y = k | x) (a stable log-sum-exp, not log(proba)).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        X = self._validate_predict(X)
        return predict_log_proba(self.params_, X)


# ------------------------------------------------------------------ discriminant analysis


class LinearDiscriminantAnalysis(ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                                 LinearClassifierMixin, _FastgenClassifier):
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
                warnings.warn("The priors do not sum to 1. Renormalizing", UserWarning,
                              stacklevel=2)
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

    predict = _FastgenClassifier.predict
    predict_proba = _FastgenClassifier.predict_proba
    predict_log_proba = _FastgenClassifier.predict_log_proba


class QuadraticDiscriminantAnalysis(_FastgenClassifier):
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


# ------------------------------------------------------------------------- naive Bayes


class _StreamingNB(_FastgenClassifier):
    """``fit`` and ``partial_fit`` as additions of per-batch statistics."""

    def fit(self, X, y, sample_weight=None):
        """Fit the model on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default None

        Returns
        -------
        self
        """
        return self._partial_fit(X, y, None, sample_weight, first=True)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Update the model with a batch; equal to ``fit`` on all batches together.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default None
            Every class of the stream; required on the first call, ignored afterwards.
        sample_weight : array-like of shape (n_samples,), default None

        Returns
        -------
        self
        """
        first = not hasattr(self, "params_")
        if first and classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        return self._partial_fit(X, y, classes, sample_weight, first=first)

    def _partial_fit(self, X, y, classes, sample_weight, first):
        X, y = self._validate_fit(X, y, reset=first)
        if first:
            self._reset()
            self.classes_ = check_y(y if classes is None else np.asarray(classes))[0]
        stats = self._batch_statistics(X, y, sample_weight)
        known = np.isin(stats.classes, self.classes_)
        if not np.all(known):
            raise ValueError(
                f"The target label(s) {stats.classes[~known]} in y do not exist in the "
                f"initial classes {self.classes_}"
            )
        self._accumulate(stats, np.searchsorted(self.classes_, stats.classes))
        self.params_ = self._build(X.dtype)
        self._set_attributes()
        return self


class GaussianNB(_StreamingNB):
    """Gaussian naive Bayes (``fastgen.gaussian_nb_from_moments`` on mergeable moments).

    ``fit`` and ``partial_fit`` accumulate diagonal class moments
    (``fastgen.class_moments(..., kind="diagonal")``, merged exactly by
    ``fastgen.merge_moments``), so ``partial_fit`` over batches equals ``fit`` on their
    concatenation, including ε = var_smoothing·max_j Var(x_j) over all rows seen
    (scikit-learn's ``partial_fit`` takes ε from the latest batch).

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default None
    var_smoothing : float, default 1e-9

    Attributes
    ----------
    params_ : fastgen.GaussianNBParams
    moments_ : fastgen.ClassMoments
        The accumulated (weighted) diagonal class moments.
    classes_, class_count_, class_prior_, theta_, var_, epsilon_,
    n_features_in_, feature_names_in_ :
        As in scikit-learn.
    """

    def __init__(self, *, priors=None, var_smoothing=1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    def _reset(self):
        for name in ("moments_", "_feature_moments"):
            self.__dict__.pop(name, None)

    def _batch_statistics(self, X, y, sample_weight):
        m = class_moments(X, y, kind="diagonal", sample_weight=sample_weight)
        # unweighted moments of all rows (one "class"): the variance behind ε
        f = class_moments(X, np.zeros(X.shape[0], dtype=np.int8), kind="diagonal")
        self._batch_feature_moments = f
        return m

    def _accumulate(self, m, pos):
        K, d = self.classes_.shape[0], m.n_features
        if not hasattr(self, "moments_"):
            self.moments_ = ClassMoments(self.classes_, np.zeros(K), np.zeros((K, d)),
                                         np.zeros((K, d)), "diagonal", m.dtype)
            self._feature_moments = self._batch_feature_moments
        else:
            self._feature_moments = merge_moments(self._feature_moments,
                                                  self._batch_feature_moments)
        self.moments_ = merge_moments(self.moments_, m)
        del self._batch_feature_moments

    def _build(self, dtype):
        f = self._feature_moments
        return _nb.gaussian_nb_from_moments(
            self.moments_, priors=self.priors, var_smoothing=self.var_smoothing,
            feature_variance=f.scatter[0] / f.counts[0])

    def _set_attributes(self):
        p = self.params_
        self.class_count_ = p.class_count
        self.class_prior_ = np.exp(p.class_log_prior)
        self.theta_ = p.means
        self.var_ = p.variances
        self.epsilon_ = p.epsilon


class _CountNB(_StreamingNB):
    """Discrete naive Bayes: class and feature counts add over batches."""

    _accept_sparse = True
    _positive_only = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        tags.input_tags.positive_only = self._positive_only
        return tags

    def _validate_fit(self, X, y, reset=True):
        X, y = super()._validate_fit(X, y, reset=reset)
        if self._positive_only:
            check_non_negative(X, f"{type(self).__name__} (input X)")
        return X, y

    def _reset(self):
        for name in ("_class_count", "_feature_count"):
            self.__dict__.pop(name, None)

    def _batch_statistics(self, X, y, sample_weight):
        return self._count(X, y, sample_weight)

    def _accumulate(self, stats, pos):
        K = self.classes_.shape[0]
        if not hasattr(self, "_class_count"):
            self._class_count = np.zeros(K)
            self._feature_count = np.zeros((K, stats.feature_count.shape[1]))
        self._class_count[pos] += stats.class_count
        self._feature_count[pos] += stats.feature_count

    def _set_attributes(self):
        p = self.params_
        self.class_count_ = p.class_count
        self.feature_count_ = p.feature_count
        self.class_log_prior_ = p.class_log_prior
        self.feature_log_prob_ = p.feature_log_prob


class BernoulliNB(_CountNB):
    """Bernoulli naive Bayes (``fastgen.fit_bernoulli_nb``), dense or CSR.

    Parameters
    ----------
    alpha : float, default 1.0
        Additive smoothing; values below 1e-10 are clipped to 1e-10 with a
        ``fastgen.AlphaClippedWarning`` (scikit-learn's ``force_alpha=False``).
    binarize : float or None, default 0.0
    fit_prior : bool, default True
    class_prior : array-like of shape (n_classes,), default None

    Attributes
    ----------
    params_ : fastgen.BernoulliNBParams
    classes_, class_count_, feature_count_, class_log_prior_, feature_log_prob_,
    n_features_in_, feature_names_in_ :
        As in scikit-learn.
    """

    def __init__(self, *, alpha=1.0, binarize=0.0, fit_prior=True, class_prior=None):
        self.alpha = alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _count(self, X, y, sample_weight):
        return _nb.fit_bernoulli_nb(X, y, binarize=self.binarize, sample_weight=sample_weight)

    def _build(self, dtype):
        return _nb.bernoulli_nb_from_counts(
            self.classes_, self._class_count, self._feature_count, alpha=self.alpha,
            binarize=self.binarize, fit_prior=self.fit_prior, class_prior=self.class_prior,
            dtype=dtype)


class MultinomialNB(_CountNB):
    """Multinomial naive Bayes (``fastgen.fit_multinomial_nb``), dense or CSR.

    Parameters
    ----------
    alpha : float, default 1.0
        Values below 1e-10 are clipped to 1e-10 with a ``fastgen.AlphaClippedWarning``.
    fit_prior : bool, default True
    class_prior : array-like of shape (n_classes,), default None

    Attributes
    ----------
    params_ : fastgen.MultinomialNBParams
    classes_, class_count_, feature_count_, class_log_prior_, feature_log_prob_,
    n_features_in_, feature_names_in_ :
        As in scikit-learn.
    """

    def __init__(self, *, alpha=1.0, fit_prior=True, class_prior=None):
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    _positive_only = True

    def _count(self, X, y, sample_weight):
        return _nb.fit_multinomial_nb(X, y, sample_weight=sample_weight)

    def _build(self, dtype):
        return _nb.multinomial_nb_from_counts(
            self.classes_, self._class_count, self._feature_count, alpha=self.alpha,
            fit_prior=self.fit_prior, class_prior=self.class_prior, dtype=dtype)


class ComplementNB(_CountNB):
    """Complement naive Bayes (``fastgen.fit_complement_nb``), dense or CSR.

    Parameters
    ----------
    alpha : float, default 1.0
    fit_prior : bool, default True
        Only used when there is a single class, as in scikit-learn.
    class_prior : array-like of shape (n_classes,), default None
    norm : bool, default False

    Attributes
    ----------
    params_ : fastgen.ComplementNBParams
    classes_, class_count_, feature_count_, feature_all_, class_log_prior_,
    feature_log_prob_, n_features_in_, feature_names_in_ :
        As in scikit-learn.
    """

    def __init__(self, *, alpha=1.0, fit_prior=True, class_prior=None, norm=False):
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm

    _positive_only = True

    def _count(self, X, y, sample_weight):
        return _nb.fit_complement_nb(X, y, sample_weight=sample_weight)

    def _build(self, dtype):
        return _nb.complement_nb_from_counts(
            self.classes_, self._class_count, self._feature_count, alpha=self.alpha,
            norm=self.norm, fit_prior=self.fit_prior, class_prior=self.class_prior,
            dtype=dtype)

    def _set_attributes(self):
        super()._set_attributes()
        self.feature_all_ = self.params_.feature_all


class CategoricalNB(_CountNB):
    """Categorical naive Bayes on integer category codes (``fastgen.fit_categorical_nb``).

    Unlike scikit-learn's, CSR input is accepted (implicit zeros are category 0), and
    non-integer codes are rejected with a ``ValueError`` (scikit-learn truncates them).

    Parameters
    ----------
    alpha : float, default 1.0
    fit_prior : bool, default True
    class_prior : array-like of shape (n_classes,), default None
    min_categories : int or array-like of shape (n_features,), default None

    Attributes
    ----------
    params_ : fastgen.CategoricalNBParams
    classes_, class_count_, class_log_prior_, n_categories_, n_features_in_,
    feature_names_in_ :
        As in scikit-learn.
    category_count_, feature_log_prob_ : list of ndarray of shape (n_classes, n_categories_[j])
        Views of the flat tables of ``params_``, one per feature, as in scikit-learn.
    """

    def __init__(self, *, alpha=1.0, fit_prior=True, class_prior=None, min_categories=None):
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories

    _positive_only = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        return tags

    def _reset(self):
        super()._reset()
        self.__dict__.pop("_n_categories", None)

    def _count(self, X, y, sample_weight):
        # a later batch is counted with at least the categories seen so far, so that the
        # accumulated table only ever grows
        mc = getattr(self, "_n_categories", self.min_categories)
        p = _nb.fit_categorical_nb(X, y, min_categories=mc, sample_weight=sample_weight)
        if hasattr(self, "_n_categories") and not np.array_equal(p.n_categories,
                                                                 self._n_categories):
            old, new = self._n_categories, p.n_categories
            old_off = np.concatenate([[0], np.cumsum(old)])
            cols = (np.repeat(p.offsets[:-1], old)
                    + np.arange(old_off[-1]) - np.repeat(old_off[:-1], old))
            grown = np.zeros((self._feature_count.shape[0], int(p.offsets[-1])))
            grown[:, cols] = self._feature_count
            self._feature_count = grown
            self._n_categories = new
        self._n_categories = p.n_categories
        return _CategoryCounts(p.classes, p.class_count, p.category_count)

    def _build(self, dtype):
        return _nb.categorical_nb_from_counts(
            self.classes_, self._class_count, self._feature_count, self._n_categories,
            alpha=self.alpha, fit_prior=self.fit_prior, class_prior=self.class_prior,
            dtype=dtype)

    def _set_attributes(self):
        p = self.params_
        split = p.offsets[1:-1]
        self.class_count_ = p.class_count
        self.class_log_prior_ = p.class_log_prior
        self.n_categories_ = p.n_categories
        self.category_count_ = np.split(p.category_count, split, axis=1)
        self.feature_log_prob_ = np.split(p.feature_log_prob, split, axis=1)


class _CategoryCounts:
    """A batch's class counts and flat category counts (``feature_count`` slot)."""

    def __init__(self, classes, class_count, feature_count):
        self.classes = classes
        self.class_count = class_count
        self.feature_count = feature_count


# ---------------------------------------------------------------- logistic regression


class LogisticRegressionIRLS(LinearClassifierMixin, _FastgenClassifier):
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
            warnings.warn(str(w.message), cat, stacklevel=2)
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

    predict = _FastgenClassifier.predict
    predict_proba = _FastgenClassifier.predict_proba
    predict_log_proba = _FastgenClassifier.predict_log_proba


# ---------------------------------------------------------------- estimator checks

_NON_INTEGER_CODES = (
    "the check fits on non-integer floats; fastgen rejects non-integer category codes "
    "with a ValueError where scikit-learn silently truncates them to integers"
)

_EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
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
