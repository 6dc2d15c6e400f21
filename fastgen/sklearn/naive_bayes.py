"""scikit-learn's naive Bayes estimators on fastgen's mergeable naive Bayes statistics.

``fit`` and ``partial_fit`` are one path: each batch's statistics
(``fastgen.nb_counts``: class and feature counts, or diagonal class moments for the
Gaussian model) are merged exactly into the running total (``fastgen.merge_counts``),
and the params are rebuilt from the total (``fastgen.nb_from_counts``).  So
``partial_fit`` over batches equals ``fit`` on their concatenation.  The categorical
model, whose count table grows with the categories seen, accumulates
``fastgen.fit_categorical_nb``'s counts and rebuilds with
``fastgen.naive_bayes.categorical_nb_from_counts``.
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings

import numpy as np
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_non_negative

from .. import (
    AlphaClippedWarning,
    ClassMoments,
    NBCounts,
    joint_log_likelihood,
    merge_counts,
    nb_counts,
    nb_from_counts,
)
from .._validation import check_y
from .._warn import warn
from ..naive_bayes import ALPHA_MIN
from ..stats.missing import check_nan_policy, has_nan
from .base import FastgenClassifier
from .unlabeled import UnlabeledNB

__all__ = ["GaussianNB", "BernoulliNB", "MultinomialNB", "ComplementNB", "CategoricalNB"]


class _StreamingNB(FastgenClassifier):
    """``fit`` and ``partial_fit`` as additions of per-batch statistics.

    A subclass says how to take a batch's statistics (``_batch``: an object with the
    batch's sorted ``classes``), add them to the total (``_accumulate``), build the params
    from the total (``_build``) and map them to scikit-learn's attributes
    (``_set_attributes``).
    """

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
        if not first and classes is not None \
                and not np.array_equal(self.classes_, unique_labels(classes)):
            raise ValueError(
                f"`classes={classes!r}` is not the same as on last call to partial_fit, "
                f"was: {self.classes_!r}"
            )
        return self._partial_fit(X, y, classes, sample_weight, first=first)

    def predict_joint_log_proba(self, X):
        """Joint log-likelihoods log p(x, y = k) = log p(x | y = k) + log p(y = k).

        X and the result are as in :meth:`predict_proba`: one row per row of X, one
        column per class of ``classes_``.
        """
        X = self._validate_predict(X)
        return joint_log_likelihood(self.params_, X, nan_policy=self._nan_policy())

    def _check_class_prior(self, prior, gaussian=False):
        """scikit-learn's checks (and messages) of user priors; the model layer checks again."""
        if prior is None:
            return
        prior = np.asarray(prior, dtype=np.float64)
        if prior.ndim != 1 or prior.shape[0] != self.classes_.shape[0]:
            raise ValueError("Number of priors must match number of classes.")
        if gaussian:
            if not np.isclose(prior.sum(), 1.0):
                raise ValueError("The sum of the priors should be 1.")
            if (prior < 0).any():
                raise ValueError("Priors must be non-negative.")

    def _partial_fit(self, X, y, classes, sample_weight, first):
        X, y = self._validate_fit(X, y, reset=first)
        if check_nan_policy(self._nan_policy()) == "marginalize":
            if has_nan(X):
                raise ValueError(f"{type(self).__name__}.partial_fit cannot take missing "
                                 f"values (NaN): its statistics add up over batches only "
                                 f"for complete rows; call fit on all rows")
        if first:
            self._reset()
            self.classes_ = check_y(y if classes is None else np.asarray(classes))[0]
            self._check_inputs(X)
        batch = self._batch(X, y, sample_weight)
        known = np.isin(batch.classes, self.classes_)
        if not np.all(known):
            raise ValueError(
                f"The target label(s) {batch.classes[~known]} in y do not exist in the "
                f"initial classes {self.classes_}"
            )
        self._accumulate(batch, np.searchsorted(self.classes_, batch.classes))
        self.params_ = self._build(X.dtype)
        self._set_attributes()
        return self


    def _check_inputs(self, X):
        """Checks of the options against the first batch (scikit-learn's messages)."""
        self._check_class_prior(getattr(self, "class_prior", None))


class _MergedNB(_StreamingNB):
    """A model of ``fastgen.nb_counts``: the total is an ``NBCounts`` over ``classes_``."""

    _model = "multinomial"  # the model name of fastgen.nb_counts

    def _reset(self):
        self.__dict__.pop("_counts", None)

    def _batch(self, X, y, sample_weight):
        return nb_counts(X, y, self._model, sample_weight=sample_weight,
                         binarize=getattr(self, "binarize", 0.0))

    def _empty(self, batch):
        """Zero statistics for every class of ``classes_``, laid out like ``batch``."""
        K, d = self.classes_.shape[0], batch.n_features
        return NBCounts(self._model, self.classes_, np.zeros(K),
                        feature_count=np.zeros((K, d)), binarize=batch.binarize,
                        dtype=batch.dtype)

    def _accumulate(self, batch, pos):
        total = self.__dict__.get("_counts")
        if total is None:
            total = self._empty(batch)
        self._counts = merge_counts(total, batch)

    def _options(self):
        """The options of ``fastgen.nb_from_counts`` for this model."""
        return {"alpha": self.alpha, "fit_prior": self.fit_prior,
                "class_prior": self.class_prior}

    def _build(self, dtype):
        # the params take the dtype of the latest batch, as fitting that batch alone would
        counts = dataclasses.replace(self._counts, dtype=str(dtype))
        return nb_from_counts(counts, **self._options())


class GaussianNB(UnlabeledNB, _MergedNB):
    """Gaussian naive Bayes (``fastgen.nb_from_counts`` on mergeable moments).

    ``fit`` and ``partial_fit`` accumulate diagonal class moments
    (``fastgen.class_moments(..., kind="diagonal")``, merged exactly by
    ``fastgen.merge_moments``), so ``partial_fit`` over batches equals ``fit`` on their
    concatenation, including ε = var_smoothing·max_j Var(x_j) over all rows seen
    (scikit-learn's ``partial_fit`` takes ε from the latest batch).

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default None
    var_smoothing : float, default 1e-9
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN in X marks a missing value (the ``allow_nan`` tag).  Scores
        leave out the missing features (the exact marginal; ``nan_policy`` of
        ``fastgen.predict_proba``), and ``fit`` takes the available-case statistics of each feature
        (``fastgen.fit_gaussian_nb(..., nan_policy="marginalize")``); ``partial_fit``
        refuses NaN.
    unlabeled_label, unlabeled_weight, em_max_iter : default None, 1.0, 100
        EM over the rows of y labelled ``unlabeled_label`` (e.g. -1, as
        ``sklearn.semi_supervised``): :mod:`fastgen.sklearn.unlabeled`.

    Attributes
    ----------
    params_ : fastgen.GaussianNBParams
    moments_ : fastgen.ClassMoments or None
        The accumulated (weighted) diagonal class moments (None after EM).
    classes_, class_count_, class_prior_, theta_, var_, epsilon_,
    n_features_in_, feature_names_in_ :
        As in scikit-learn.
    """

    _model = "gaussian"

    def __init__(self, *, priors=None, var_smoothing=1e-9, nan_policy="raise",
                 unlabeled_label=None, unlabeled_weight=1.0, em_max_iter=100):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.nan_policy = nan_policy
        self.unlabeled_label = unlabeled_label
        self.unlabeled_weight = unlabeled_weight
        self.em_max_iter = em_max_iter

    def _reset(self):
        super()._reset()
        self.__dict__.pop("moments_", None)

    def _empty(self, batch):
        K, d = self.classes_.shape[0], batch.n_features

        def zero(classes):
            k = classes.shape[0]
            return ClassMoments(classes, np.zeros(k), np.zeros((k, d)), np.zeros((k, d)),
                                "diagonal", batch.dtype)

        # the moments of all rows start empty too (one class, count 0), so that merging
        # never derives them from an empty total
        return NBCounts("gaussian", self.classes_, np.zeros(K), moments=zero(self.classes_),
                        feature_moments=zero(np.zeros(1, dtype=np.int8)), dtype=batch.dtype)

    def _check_inputs(self, X):
        self._check_class_prior(self.priors, gaussian=True)

    def _options(self):
        return {"priors": self.priors, "var_smoothing": self.var_smoothing}

    def _build(self, dtype):
        return nb_from_counts(self._counts, **self._options())

    def _set_attributes(self):
        p = self.params_
        counts = self.__dict__.get("_counts")
        self.moments_ = None if counts is None else counts.moments
        self.class_count_ = p.class_count
        self.class_prior_ = np.exp(p.class_log_prior)
        self.theta_ = p.means
        self.var_ = p.variances
        self.epsilon_ = p.epsilon


class _DiscreteNB(_StreamingNB):
    """Discrete naive Bayes: sparse input, optionally non-negative only."""

    _accept_sparse = True
    _positive_only = False

    def __init__(self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

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

    def _set_attributes(self):
        p = self.params_
        self.class_count_ = p.class_count
        self.feature_count_ = p.feature_count
        self.class_log_prior_ = p.class_log_prior
        self.feature_log_prob_ = p.feature_log_prob

    #: whether an array ``alpha`` (one value per feature) is supported
    _array_alpha = False

    def _check_alpha(self):
        """``alpha`` as scikit-learn's ``_check_alpha`` gives it (its messages too).

        Negative values raise; an array needs one value per feature; with
        ``force_alpha=False`` values below 1e-10 become 1e-10 with a UserWarning.
        """
        alpha = self.alpha
        if isinstance(alpha, numbers.Real) and not isinstance(alpha, bool):
            if alpha < 0:
                raise ValueError(f"alpha must be >= 0; got {alpha!r}")
            alpha_min = float(alpha)
        else:
            alpha = np.asarray(alpha, dtype=np.float64)
            if alpha.ndim != 1 or alpha.shape[0] != self.n_features_in_:
                raise ValueError(
                    "When alpha is an array, it should contains `n_features`. "
                    f"Got {alpha.size} elements instead."
                )
            if np.min(alpha) < 0:
                raise ValueError("All values in alpha must be greater than 0.")
            alpha_min = float(np.min(alpha))
        if alpha_min < ALPHA_MIN and not self.force_alpha:
            warn(
                "alpha too small will result in numeric errors, setting alpha = "
                f"{ALPHA_MIN:.1e}. Use `force_alpha=True` to keep alpha unchanged.",
                UserWarning,
            )
            return np.maximum(alpha, ALPHA_MIN)
        return alpha

    def _model_alpha(self):
        """The scalar alpha handed to the model layer (which clips below 1e-10 itself)."""
        alpha = self._check_alpha()
        if np.ndim(alpha) and not self._array_alpha:
            raise ValueError(
                f"{type(self).__name__} takes a scalar alpha; an array of per-feature "
                "values is supported by MultinomialNB"
            )
        return alpha


class _CountNB(_DiscreteNB, _MergedNB):
    """Bernoulli, multinomial and complement naive Bayes: counts add over batches."""

    def _options(self):
        return {**super()._options(), "alpha": self._model_alpha()}

    def _build(self, dtype):
        options = self._options()
        alpha = options["alpha"]
        counts = dataclasses.replace(self._counts, dtype=str(dtype))
        with warnings.catch_warnings():
            # force_alpha=True below 1e-10: the model layer still clips (log 0 otherwise)
            warnings.simplefilter("ignore", AlphaClippedWarning)
            if not np.ndim(alpha):
                return nb_from_counts(counts, **options)
            # per-feature alpha_j: add alpha_j - a0 to the counts and smooth with a0, so
            # log θ_kj = log(N_kj + α_j) − log(N_k + Σ_j α_j); feature_count stays N
            a0 = float(np.min(alpha))
            shifted = dataclasses.replace(
                counts, feature_count=counts.feature_count + (alpha - a0)[None, :])
            params = nb_from_counts(shifted, **{**options, "alpha": a0})
            return dataclasses.replace(params, feature_count=counts.feature_count)


class BernoulliNB(UnlabeledNB, _CountNB):
    """Bernoulli naive Bayes (``fastgen.fit_bernoulli_nb``), dense or CSR.

    Parameters
    ----------
    alpha : float, default 1.0
        Additive smoothing (a scalar; arrays are supported by MultinomialNB only).
    force_alpha : bool, default True
        As scikit-learn: False clips alpha below 1e-10 to 1e-10 with a UserWarning;
        True keeps it, except that fastgen's model layer still clips values below
        1e-10 (silently here), so that no log-probability is log 0.
    binarize : float or None, default 0.0
        Threshold: x > binarize counts as 1; None takes X as already binary.
        Deliberate difference from scikit-learn: with None, a value other than 0 or 1
        raises ValueError (naming its row and column) in ``fit``, ``partial_fit`` and
        scoring, where scikit-learn counts it as it is (a count below zero or above its
        class count, so probabilities that can be NaN or mean nothing).
    fit_prior : bool, default True
        Learn the class priors from the (weighted) class counts; False: uniform priors.
    class_prior : array-like of shape (n_classes,), default None
        Fixed class priors (non-negative, summing to 1); they override ``fit_prior``.
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN in X marks a missing value (the ``allow_nan`` tag).  Scores
        leave out the missing features (the exact marginal; ``nan_policy`` of
        ``fastgen.predict_proba``), and ``fit`` takes the available-case statistics of each feature
        (``fastgen.fit_bernoulli_nb(..., nan_policy="marginalize")``); ``partial_fit``
        refuses NaN.
    unlabeled_label, unlabeled_weight, em_max_iter : default None, 1.0, 100
        EM over the rows of y labelled ``unlabeled_label`` (e.g. -1, as
        ``sklearn.semi_supervised``): :mod:`fastgen.sklearn.unlabeled`.

    Attributes
    ----------
    params_ : fastgen.BernoulliNBParams
    classes_, class_count_, feature_count_, class_log_prior_, feature_log_prob_,
    n_features_in_, feature_names_in_ :
        As in scikit-learn.
    """

    _model = "bernoulli"

    def __init__(self, *, alpha=1.0, force_alpha=True, binarize=0.0, fit_prior=True,
                 class_prior=None, nan_policy="raise", unlabeled_label=None,
                 unlabeled_weight=1.0, em_max_iter=100):
        super().__init__(alpha=alpha, force_alpha=force_alpha, fit_prior=fit_prior,
                         class_prior=class_prior)
        self.binarize = binarize
        self.nan_policy = nan_policy
        self.unlabeled_label = unlabeled_label
        self.unlabeled_weight = unlabeled_weight
        self.em_max_iter = em_max_iter


class MultinomialNB(UnlabeledNB, _CountNB):
    """Multinomial naive Bayes (``fastgen.fit_multinomial_nb``), dense or CSR.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default 1.0
        Additive smoothing, one value for all features or one per feature:
        log θ_kj = log(N_kj + α_j) − log(N_k + Σ_j α_j).  With an array,
        ``params_.alpha`` is min_j α_j and the log-probabilities carry the rest (the
        model layer takes a scalar alpha).
    force_alpha : bool, default True
        Whether alpha below 1e-10 is kept, as in :class:`BernoulliNB`.
    fit_prior, class_prior :
        The class priors, as in :class:`BernoulliNB`.
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN in X marks a missing value (the ``allow_nan`` tag).  Scores
        leave out the missing features (the exact marginal; ``nan_policy`` of
        ``fastgen.predict_proba``), renormalising θ over the observed features; ``fit`` refuses NaN
        (a missing count's expectation depends on the row's unknown total).
    unlabeled_label, unlabeled_weight, em_max_iter : default None, 1.0, 100
        EM over the rows of y labelled ``unlabeled_label`` (e.g. -1, as
        ``sklearn.semi_supervised``): :mod:`fastgen.sklearn.unlabeled`.
        EM takes a scalar ``alpha``.

    Attributes
    ----------
    params_ : fastgen.MultinomialNBParams
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        log θ_kj, smoothed with each feature's own α_j when ``alpha`` is an array.
    classes_, class_count_, feature_count_, class_log_prior_, n_features_in_,
    feature_names_in_ :
        As in scikit-learn.
    """

    _model = "multinomial"
    _positive_only = True
    _array_alpha = True

    def __init__(self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None,
                 nan_policy="raise", unlabeled_label=None, unlabeled_weight=1.0,
                 em_max_iter=100):
        super().__init__(alpha=alpha, force_alpha=force_alpha, fit_prior=fit_prior,
                         class_prior=class_prior)
        self.nan_policy = nan_policy
        self.unlabeled_label = unlabeled_label
        self.unlabeled_weight = unlabeled_weight
        self.em_max_iter = em_max_iter


class ComplementNB(_CountNB):
    """Complement naive Bayes (``fastgen.fit_complement_nb``), dense or CSR.

    Parameters
    ----------
    alpha : float, default 1.0
    force_alpha : bool, default True
        Whether alpha below 1e-10 is kept, as in :class:`BernoulliNB`.
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

    _model = "complement"
    _positive_only = True

    def __init__(self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None,
                 norm=False):
        super().__init__(alpha=alpha, force_alpha=force_alpha, fit_prior=fit_prior,
                         class_prior=class_prior)
        self.norm = norm

    def _options(self):
        return {**super()._options(), "norm": self.norm}

    def _set_attributes(self):
        super()._set_attributes()
        self.feature_all_ = self.params_.feature_all


class CategoricalNB(UnlabeledNB, _DiscreteNB):
    """Categorical naive Bayes on integer category codes (``fastgen.fit_categorical_nb``).

    Unlike scikit-learn's, CSR input is accepted (implicit zeros are category 0), and
    non-integer codes are rejected with a ``ValueError`` (scikit-learn truncates them).

    Parameters
    ----------
    alpha : float, default 1.0
    force_alpha : bool, default True
        Whether alpha below 1e-10 is kept, as in :class:`BernoulliNB`.
    fit_prior, class_prior :
        The class priors, as in :class:`BernoulliNB`.
    min_categories : int or array-like of shape (n_features,), default None
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN in X marks a missing value (the ``allow_nan`` tag).  Scores
        leave out the missing features (the exact marginal; ``nan_policy`` of
        ``fastgen.predict_proba``), and ``fit`` takes the available-case statistics of each feature
        (``fastgen.fit_categorical_nb(..., nan_policy="marginalize")``); ``partial_fit``
        refuses NaN.
    unlabeled_label, unlabeled_weight, em_max_iter : default None, 1.0, 100
        EM over the rows of y labelled ``unlabeled_label`` (e.g. -1, as
        ``sklearn.semi_supervised``): :mod:`fastgen.sklearn.unlabeled`.

    Attributes
    ----------
    params_ : fastgen.CategoricalNBParams
    classes_, class_count_, class_log_prior_, n_categories_, n_features_in_,
    feature_names_in_ :
        As in scikit-learn.
    category_count_, feature_log_prob_ : list of ndarray of shape (n_classes, n_categories_[j])
        Views of the flat tables of ``params_``, one per feature, as in scikit-learn.
    """

    def __init__(self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None,
                 min_categories=None, nan_policy="raise", unlabeled_label=None,
                 unlabeled_weight=1.0, em_max_iter=100):
        super().__init__(alpha=alpha, force_alpha=force_alpha, fit_prior=fit_prior,
                         class_prior=class_prior)
        self.min_categories = min_categories
        self.nan_policy = nan_policy
        self.unlabeled_label = unlabeled_label
        self.unlabeled_weight = unlabeled_weight
        self.em_max_iter = em_max_iter

    _positive_only = True
    _model = "categorical"  # the EM fit of fastgen.sklearn.unlabeled

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        return tags

    def _reset(self):
        self.__dict__.pop("_counts", None)

    def _batch(self, X, y, sample_weight):
        # a later batch is counted with at least the categories seen so far (as its
        # min_categories: the fit's check of stray codes allows them)
        total = self.__dict__.get("_counts")
        mc = self.min_categories if total is None else total.n_categories
        return nb_counts(X, y, "categorical", sample_weight=sample_weight,
                         min_categories=mc)

    def _accumulate(self, batch, pos):
        total = self.__dict__.get("_counts")
        if total is None:
            K = self.classes_.shape[0]
            total = NBCounts("categorical", self.classes_, np.zeros(K),
                             feature_count=np.zeros((K, batch.feature_count.shape[1])),
                             dtype=batch.dtype, n_categories=batch.n_categories)
        self._counts = merge_counts(total, batch)  # widens each feature's categories

    def _build(self, dtype):
        counts = dataclasses.replace(self._counts, dtype=str(dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AlphaClippedWarning)
            return nb_from_counts(counts, alpha=self._model_alpha(), fit_prior=self.fit_prior,
                                  class_prior=self.class_prior)

    def _check_inputs(self, X):
        super()._check_inputs(X)
        mc = self.min_categories
        if mc is not None and np.ndim(mc):
            mc = np.asarray(mc)
            if mc.shape != (X.shape[1],):
                raise ValueError(
                    f"'min_categories' should have shape ({X.shape[1]},) when an "
                    f"array-like is provided. Got {mc.shape} instead."
                )

    def _validate_predict(self, X):
        X = super()._validate_predict(X)
        check_non_negative(X, f"{type(self).__name__} (input X)")
        return X

    def _set_attributes(self):
        p = self.params_
        split = p.offsets[1:-1]
        self.class_count_ = p.class_count
        self.class_log_prior_ = p.class_log_prior
        self.n_categories_ = p.n_categories
        self.category_count_ = np.split(p.category_count, split, axis=1)
        self.feature_log_prob_ = np.split(p.feature_log_prob, split, axis=1)

