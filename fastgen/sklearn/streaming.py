"""The streaming base of fastgen's scikit-learn naive Bayes estimators: ``fit`` and
``partial_fit`` as exact additions of per-batch statistics (:mod:`fastgen.sklearn.naive_bayes`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.utils.multiclass import unique_labels

from .. import (
    NBCounts,
    joint_log_likelihood,
    merge_counts,
    nb_counts,
    nb_from_counts,
)
from .._validation import check_y
from ..stats.missing import check_nan_policy, has_nan
from .base import FastgenClassifier

__all__ = ["StreamingNB", "MergedNB"]


class StreamingNB(FastgenClassifier):
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


class MergedNB(StreamingNB):
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
