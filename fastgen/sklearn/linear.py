"""scikit-learn's logistic regression interface on ``fastgen.fit_logistic`` (IRLS)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning as _SkConvergenceWarning
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted

from .. import ConvergenceWarning as _FgConvergenceWarning
from .. import fit_logistic, logistic_inference
from .._validation import check_sample_weight
from .._warn import warn
from .advice import in_own_terms, reworded
from .base import LinearFastgenClassifier

__all__ = ["LogisticRegression", "LogisticRegressionIRLS", "FirthLogisticRegression"]

_SOLVERS = ("lbfgs", "liblinear", "newton-cg", "newton-cholesky", "sag", "saga")


class LogisticRegression(LinearFastgenClassifier):
    """L2-penalised logistic regression by Newton's method (``fastgen.fit_logistic``).

    scikit-learn 1.9's ``LogisticRegression`` name, parameters and deprecations, so that
    swapping the import is enough.  Minimises Σ_i w_i·(−log p(y_i | x_i)) + ‖coef‖² / (2C),
    scikit-learn's objective (binary, or multinomial for more than two classes), so
    ``fastgen``'s ``l2 = 1 / C``; ``C = inf`` fits without penalty (``l2 = 0``).
    Dense or CSR.  ``LogisticRegressionIRLS`` is another name of this class.

    Parameters
    ----------
    penalty : {"l2", None}, default "deprecated"
        Deprecated in scikit-learn 1.8 (a FutureWarning, as there): use ``C=np.inf``
        for no penalty.  "l1" and "elasticnet" are not available (ValueError).
    C : float, default 1.0
        Inverse regularisation strength (> 0; ``np.inf`` for none).
    l1_ratio : float, default 0.0
        Only 0 (the L2 penalty) is available; ``None`` is deprecated as in scikit-learn.
    dual : bool, default False
        Only the primal problem is solved (``dual=True`` raises).
    tol : float, default 1e-4
        Passed to :func:`fastgen.fit_logistic` as it is: converged when the Newton
        decrement ½gᵀH⁻¹g ≤ tol in nats (per unit of mean sample weight below 1), and
        the certifying step is then taken, so the returned coefficients lie far
        closer to the optimum than scikit-learn's newton-cholesky tol of the same
        value gives (its rule divides the gradient by Σw).
    fit_intercept : bool, default True
    intercept_scaling : float, default 1
        Accepted for compatibility (scikit-learn uses it with liblinear only); unused.
    class_weight : dict, "balanced" or None, default None
        Multiplies the sample weights, as in scikit-learn.
    random_state : None
        Accepted for compatibility; Newton's method is deterministic.
    solver : {"lbfgs", "liblinear", "newton-cg", "newton-cholesky", "sag", "saga"}, \
default "lbfgs"
        Accepted for compatibility: every solver name fits by fastgen's Newton/IRLS
        (the optimum is the same; scikit-learn's solvers reach it to within ``tol``).
    max_iter : int, default 100
        Maximum Newton steps.
    verbose : int, default 0
        Accepted for compatibility; unused.
    warm_start : bool, default False
        Start from the previous fit's coefficients when the classes and features are
        the same (``fastgen.fit_logistic(..., init=params_)``).
    n_jobs : None
        Deprecated in scikit-learn 1.8 and without effect (a FutureWarning when set).

    Attributes
    ----------
    params_ : fastgen.LogisticParams
    inference_ : fastgen.LogisticInference or None
        With no penalty (``C=np.inf``): statsmodels-style inference of the fit
        (labelled by column, pandas, when fitted on a DataFrame)
        (``fastgen.logistic_inference`` on the training data, sample weights as frequency
        weights), also printed by :meth:`summary`.  None for a penalised fit, or when
        inference is undefined (separated classes, collinear columns): :meth:`summary`
        then raises the reason.  Its estimates are those of the fit, converged to
        ``tol``: lower ``tol`` (e.g. 1e-10) for statsmodels' digits.
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

    def __init__(self, penalty="deprecated", *, C=1.0, l1_ratio=0.0, dual=False, tol=1e-4,
                 fit_intercept=True, intercept_scaling=1, class_weight=None,
                 random_state=None, solver="lbfgs", max_iter=100, verbose=0,
                 warm_start=False, n_jobs=None):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs

    def _l2(self):
        """The ridge penalty 1/C (0 for none), after scikit-learn 1.9's deprecations."""
        if not (isinstance(self.C, (int, float, np.number)) and not isinstance(self.C, bool)
                and self.C > 0):
            raise ValueError(f"C must be a positive number (np.inf for no penalty); "
                             f"got {self.C!r}")
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {self.solver!r}")
        if self.dual:
            raise ValueError("dual=True is not supported: fastgen solves the primal problem")
        l1_ratio = self.l1_ratio
        if self.penalty == "deprecated":
            if l1_ratio is None:
                warnings.warn("'l1_ratio=None' was deprecated in version 1.8 and will "
                              "trigger an error in 1.10. Use 0<=l1_ratio<=1 instead.",
                              FutureWarning, stacklevel=3)
                l1_ratio = 0.0
            penalty = None if np.isinf(self.C) else ("l2" if l1_ratio == 0 else "l1/enet")
        else:
            penalty = self.penalty
            warnings.warn(
                "'penalty' was deprecated in version 1.8 and will be removed in 1.10. To "
                "avoid this warning, leave 'penalty' set to its default value and use "
                "'l1_ratio' or 'C' instead. Use l1_ratio=0 instead of penalty='l2', "
                "l1_ratio=1 instead of penalty='l1', l1_ratio set to a float between 0 "
                "and 1 instead of penalty='elasticnet', and C=np.inf instead of "
                "penalty=None.", FutureWarning, stacklevel=3)
            if penalty is None and self.C != 1.0:
                warnings.warn("Setting penalty=None will ignore the C and l1_ratio "
                              "parameters", UserWarning, stacklevel=3)
        if penalty not in ("l2", None) or (penalty == "l2" and l1_ratio not in (0, None)):
            raise ValueError(
                f"only the L2 penalty is available (penalty={self.penalty!r}, "
                f"l1_ratio={self.l1_ratio!r}); fastgen fits l1_ratio=0"
            )
        if self.n_jobs is not None:
            warnings.warn("'n_jobs' has no effect since 1.8 and will be removed in 1.10. "
                          f"You provided 'n_jobs={self.n_jobs}', please leave it "
                          "unspecified.", FutureWarning, stacklevel=3)
        return 0.0 if penalty is None or np.isinf(self.C) else 1.0 / float(self.C)

    def _penalty(self):
        """(l2, further keywords of fit_logistic): the ridge penalty 1/C."""
        return self._l2(), {}

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
        l2, penalty = self._penalty()
        X, y = self._validate_fit(X, y)
        if np.unique(y).shape[0] < 2:
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, but the data "
                "contains only one class"
            )
        if sample_weight is not None:  # its own errors first, as fit_logistic's
            sample_weight = check_sample_weight(sample_weight, X.shape[0])
        if self.class_weight is not None:
            cw = compute_sample_weight(self.class_weight, y)
            sample_weight = cw if sample_weight is None else cw * np.asarray(sample_weight)
        _check_class_weights(y, sample_weight)
        init = None
        old = getattr(self, "params_", None)
        if self.warm_start and old is not None and old.n_features_in == X.shape[1] \
                and np.array_equal(old.classes, np.unique(y)) \
                and bool(old.fit_intercept) == bool(self.fit_intercept):
            init = old
        names = getattr(self, "feature_names_in_", None)
        # the fit and the inference see the columns by name, so that the separation
        # warning, the collinearity warning and the errors name them alike
        Xn = _named(X, names)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with in_own_terms(self, warnings_too=False):
                params = fit_logistic(Xn, y, l2=l2, fit_intercept=self.fit_intercept,
                                      sample_weight=sample_weight, max_iter=self.max_iter,
                                      tol=self.tol, init=init, **penalty)
        for w in caught:
            cat = _SkConvergenceWarning if issubclass(w.category, _FgConvergenceWarning) \
                else w.category
            warn(reworded(self, str(w.message)), cat)
        if params.feature_names is not None:
            # the estimator checks the names itself (feature_names_in_) and scores the
            # validated arrays
            params = dataclasses.replace(params, feature_names=None)
        self.params_ = params
        self.classes_ = params.classes
        self.coef_ = params.coef
        self.intercept_ = params.intercept
        self.n_iter_ = np.array([params.n_iter], dtype=np.int32)
        self.inference_, self._inference_error = None, None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                self.inference_ = logistic_inference(params, Xn, y,
                                                     sample_weight=sample_weight)
            except ValueError as exc:  # penalised, separated or collinear: no inference
                self._inference_error = reworded(self, str(exc))
        for w in caught:  # in the estimator's terms, as the fit's
            warn(reworded(self, str(w.message)), w.category)
        return self

    def summary(self):
        """The statsmodels-style results table of an unpenalised fit (``C=np.inf``).

        Returns
        -------
        fastgen.logistic.inference.Summary
            ``str()`` of it is the text table.

        Raises
        ------
        ValueError
            For a penalised fit (Wald inference of a ridge estimator is not what it
            seems), or where the maximum-likelihood inference is undefined (separated
            classes, collinear columns); the message says why.
        """
        check_is_fitted(self, "params_")
        if self.inference_ is None:
            raise ValueError(self._inference_error)
        return self.inference_.summary()


def _named(X, names):
    """X as a DataFrame of the columns ``names`` (no copy), for dense X with names;
    else X."""
    if names is None or hasattr(X, "tocsr"):
        return X
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - names from another frame library
        return X
    return pd.DataFrame(X, columns=[str(c) for c in names], copy=False)


def _check_class_weights(y, sample_weight):
    """Raise, naming the class, where sample_weight is zero on every row of a class
    (fit_logistic says so too, but Firth's penalty first finds the Fisher information
    singular, a message that hides the cause)."""
    if sample_weight is None:
        return
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (y.shape[0],):
        return  # fit_logistic names the shape problem
    classes, codes = np.unique(y, return_inverse=True)
    total = np.bincount(codes.reshape(-1), weights=w, minlength=classes.shape[0])
    empty = np.flatnonzero(~(total > 0))
    if empty.size:
        c = classes[empty[0]]
        raise ValueError(
            f"class {c.item() if hasattr(c, 'item') else c!r} has zero total weight "
            f"(sample_weight is 0 on all its rows); logistic regression needs every class "
            f"of y to carry weight")


#: the name this estimator had before it took scikit-learn's (kept for existing code)
LogisticRegressionIRLS = LogisticRegression


class FirthLogisticRegression(LogisticRegression):
    """Firth's bias-reduced logistic regression (``fastgen.fit_logistic(X, y,
    penalty="firth", correction=correction)``): binary, or the multinomial bias
    reduction (brglm2's ``brmultinom``) for more classes; finite under separation.

    Parameters
    ----------
    correction : {None, "flic", "flac"}, default None
        Binary y only: Puhr et al.'s intercept (FLIC) or added-covariate (FLAC)
        correction, whose mean predicted probability equals the event rate.
    fit_intercept : bool, default True
    tol : float, default 1e-8
        Converged when max|U*_j| / (r_j Σw) ≤ tol (the modified score in its column's
        units) and the last step moved no coefficient by more than tol·(1 + max|β|).
    max_iter : int, default 100
    class_weight : dict, "balanced" or None, default None
        Multiplies the sample weights, as in scikit-learn.
    warm_start : bool, default False

    Attributes
    ----------
    params_ : fastgen.LogisticParams
    inference_ : fastgen.LogisticInference
        ``fastgen.logistic_inference`` on the training data: Firth's Wald inference, or
        logistf's for FLIC and FLAC; printed by :meth:`summary`.
    classes_, coef_, intercept_, n_iter_, n_features_in_, feature_names_in_ :
        As in scikit-learn; more than two classes: reference-class layout
        (``coef_[0] = 0``).
    """

    def __init__(self, *, correction=None, fit_intercept=True, tol=1e-8, max_iter=100,
                 class_weight=None, warm_start=False):
        self.correction = correction
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.warm_start = warm_start

    def _penalty(self):
        return 0.0, {"penalty": "firth", "correction": self.correction}
