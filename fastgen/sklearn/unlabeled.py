"""Unlabelled rows in the scikit-learn estimators: ``unlabeled_label`` marks them in y.

``sklearn.semi_supervised`` marks an unlabelled row with the label -1.  fastgen's
generative estimators take ``unlabeled_label`` (default None: every label is a class,
as before; ``-1`` for scikit-learn's convention), ``unlabeled_weight`` (λ) and
``em_max_iter``; ``fit`` hands the marked rows to the model layer's EM (``unlabeled=``).
A parameter rather than scikit-learn's fixed -1, so that -1 stays an ordinary label by
default.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_sample_weight, check_y
from ..naive_bayes import (
    ALPHA_MIN,
    fit_bernoulli_nb,
    fit_categorical_nb,
    fit_gaussian_nb,
    fit_multinomial_nb,
)
from ..stats.missing import check_nan_policy, has_nan
from .advice import in_own_terms

__all__ = ["split_unlabeled", "unlabeled_rows", "em_keywords", "UnlabeledNB"]


def split_unlabeled(estimator, X, y, sample_weight=None):
    """``(X, y, sample_weight, U)``: the rows of validated X whose label in y is
    ``estimator.unlabeled_label`` taken out as U (None when there are none, or when
    ``unlabeled_label`` is None).

    Any label can mark them (-1 as ``sklearn.semi_supervised``, a string model's
    ``""``).  They are not a class: ``fit`` learns from them by EM, ``classes_`` holds
    the other labels, and ``partial_fit`` refuses them (EM needs all rows at once).
    Every row unlabelled, or a sample weight other than 1 on an unlabelled row (their
    weight is ``unlabeled_weight``), is a ValueError naming the caller's index."""
    label = getattr(estimator, "unlabeled_label", None)
    if label is None:
        return X, y, sample_weight, None
    y = np.asarray(y)
    mask = _unlabeled_mask(label, y)
    if not mask.any():
        return X, y, sample_weight, None
    if mask.all():
        raise ValueError(f"every row of y is unlabeled (unlabeled_label={label!r}); "
                         f"at least one labelled row per class is needed")
    if sample_weight is not None:
        # checked whole, so that messages name the caller's index, not the labelled one's
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        off = np.flatnonzero(mask & (sample_weight != 1.0))
        if off.size:
            i = int(off[0])
            raise ValueError(
                f"sample_weight of the unlabeled rows must be 1 (they all weigh "
                f"unlabeled_weight, default 1.0), but it is {sample_weight[i]:g} at index "
                f"{i}, an unlabeled row (y == {label!r}); set it to 1 there and choose "
                f"unlabeled_weight instead")
        sample_weight = sample_weight[~mask]
    rows = np.flatnonzero(~mask)
    return X[rows], y[rows], sample_weight, X[np.flatnonzero(mask)]


def unlabeled_rows(estimator, y):
    """The indices of the rows of y that ``split_unlabeled`` takes out as unlabelled
    (None: none), so that messages about them name their rows of X."""
    label = getattr(estimator, "unlabeled_label", None)
    if label is None:
        return None
    mask = _unlabeled_mask(label, np.asarray(y))
    return np.flatnonzero(mask) if mask.any() else None


def _unlabeled_mask(label, y):
    """The rows of y (an array) labelled ``label``."""
    return np.array([v == label for v in y], dtype=bool) if y.dtype == object else \
        np.asarray(y == label, dtype=bool).reshape(y.shape)


def _marked(estimator, y):
    label = getattr(estimator, "unlabeled_label", None)
    if label is None:
        return False
    y = np.asarray(y)
    return bool(np.any([v == label for v in y.ravel()] if y.dtype == object else y == label))


def em_keywords(estimator, U, refusal=None) -> dict:
    """The EM keywords of a model-layer fit for unlabelled rows U (none when U is None);
    ``refusal``: why this configuration of the estimator takes none, or None."""
    if U is None:
        return {}
    if refusal is not None:
        raise ValueError(f"{type(estimator).__name__} takes unlabeled rows only {refusal}")
    return {"unlabeled": U, "unlabeled_weight": estimator.unlabeled_weight,
            "em_max_iter": estimator.em_max_iter}


class UnlabeledNB:
    """``fit`` with unlabelled rows, or with missing values under
    ``nan_policy="marginalize"``, for the naive Bayes estimators: the model layer's fit
    of the estimator's ``_model`` (EM over the unlabelled rows, available-case
    statistics for NaN) in place of the streaming statistics, which have neither.
    ``partial_fit`` refuses unlabelled rows and NaN, and refuses to add to a model
    fitted so."""

    def fit(self, X, y, sample_weight=None):
        """Fit the model on (X, y), by EM when y marks unlabelled rows.

        Parameters
        ----------
        X : array-like or CSR (where the estimator takes it) of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels; the rows labelled ``unlabeled_label`` are unlabelled
            (:func:`split_unlabeled`).
        sample_weight : array-like of shape (n_samples,), default None
            Weights of the labelled rows (1 on the unlabelled ones).

        Returns
        -------
        self
        """
        self._fitted_by_em = None
        check_nan_policy(self._nan_policy())
        if self.unlabeled_label is not None or self._nan_policy() == "marginalize":
            Xv, yv = self._validate_fit(X, y)
            marked = unlabeled_rows(self, yv)
            Xl, yl, wl, U = split_unlabeled(self, Xv, yv, sample_weight)
            nan = self._nan_policy() == "marginalize" and has_nan(Xv)
            if U is not None or nan:
                self._reset()
                self.classes_ = check_y(yl)[0]
                self._check_inputs(Xl)
                with in_own_terms(self, marked):
                    self.params_ = self._em_params(Xl, yl, wl, em_keywords(self, U))
                self._set_attributes()
                self._fitted_by_em = "unlabeled rows (EM)" if U is not None else \
                    "missing values (NaN)"
                return self
        return super().fit(X, y, sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """As scikit-learn's ``partial_fit``; unlabelled rows are refused (EM needs all
        rows at once: use ``fit``)."""
        if _marked(self, y):
            raise ValueError(f"partial_fit cannot take unlabeled rows (y == "
                             f"{self.unlabeled_label!r}): EM needs all rows at once; "
                             f"use fit")
        how = self.__dict__.get("_fitted_by_em")
        if how:
            raise ValueError(f"this estimator was fitted with {how}; partial_fit cannot "
                             f"add to it: call fit on all rows")
        return super().partial_fit(X, y, classes=classes, sample_weight=sample_weight)

    def _em_params(self, X, y, sample_weight, em):
        """The params of the model layer's fit of this estimator's ``_model`` (EM with
        ``em``'s keywords; missing values as ``nan_policy`` says)."""
        em = {**em, "nan_policy": self._nan_policy()}
        if self._model == "gaussian":
            return fit_gaussian_nb(X, y, priors=self.priors,
                                   var_smoothing=self.var_smoothing,
                                   sample_weight=sample_weight, **em)
        alpha = self._model_alpha()
        if np.ndim(alpha):
            raise ValueError(f"{type(self).__name__} with unlabeled rows takes a scalar "
                             f"alpha (EM smooths every feature alike)")
        alpha = max(float(alpha), ALPHA_MIN)  # force_alpha: the model layer clips
        if self._model == "categorical":
            if self.class_prior is not None or not self.fit_prior:
                raise ValueError("CategoricalNB with unlabeled rows learns the class "
                                 "priors: pass fit_prior=True and class_prior=None")
            return fit_categorical_nb(X, y, alpha=alpha, min_categories=self.min_categories,
                                      sample_weight=sample_weight, **em)
        options = {"alpha": alpha, "fit_prior": self.fit_prior,
                   "class_prior": self.class_prior, "sample_weight": sample_weight, **em}
        if self._model == "bernoulli":
            return fit_bernoulli_nb(X, y, binarize=self.binarize, **options)
        return fit_multinomial_nb(X, y, **options)
