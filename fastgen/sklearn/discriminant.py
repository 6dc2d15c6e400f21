"""scikit-learn's discriminant analysis estimators on ``fastgen.fit_gda``.

The default paths (LDA without a covariance estimator or "auto" shrinkage, QDA's svd
solver) fit through :func:`fastgen.fit_gda` / :func:`fastgen.gda_from_moments` and
keep fastgen's memory bound.  scikit-learn's estimator-based covariances
(``shrinkage="auto"``, ``covariance_estimator``, LDA's lsqr/eigen with user priors) are
built the way scikit-learn builds them, one covariance per class, and handed to
:func:`fastgen.gda_from_moments` as moments, so scoring is always fastgen's.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.linalg
import scipy.special
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .. import (
    ClassMoments,
    SingularCovarianceError,
    class_moments,
    fit_gda,
    gda_from_moments,
    joint_log_likelihood,
    lda_transform,
    linear_discriminant,
)
from .._warn import warn
from ..stats.missing import check_nan_policy
from .advice import in_own_terms
from .base import FastgenClassifier, LinearFastgenClassifier
from .covariance import (
    check_estimator_and_shrinkage,
    check_shrinkage,
    class_covariances,
    moments_with,
    total_covariance,
)
from .unlabeled import em_keywords, split_unlabeled, unlabeled_rows

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]

_LOG_2PI = float(np.log(2.0 * np.pi))


class _DiscriminantAnalysis:
    """The hyper-parameters both discriminant analyses take, and their ``fit``: check
    the hyper-parameters (``_check_params``), validate X and y, then fit on the
    validated data (``_fit``)."""

    def __init__(self, *, solver, shrinkage, priors, store_covariance, tol,
                 covariance_estimator, nan_policy, unlabeled_label, unlabeled_weight,
                 em_max_iter):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator
        self.nan_policy = nan_policy
        self.unlabeled_label = unlabeled_label
        self.unlabeled_weight = unlabeled_weight
        self.em_max_iter = em_max_iter

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
        self._check_params()
        check_nan_policy(self.nan_policy)
        X, y = self._validate_fit(X, y)
        nan = self.nan_policy == "marginalize" and bool(np.isnan(X).any())
        marked = unlabeled_rows(self, y)
        X, y, _, U = split_unlabeled(self, X, y)
        self._missing = nan
        if self._missing and not (self.solver == "svd" and self.covariance_estimator is None
                                  and not isinstance(self.shrinkage, str)):
            raise ValueError(
                "X contains NaN: with nan_policy='marginalize' the model is fitted by EM "
                "(fastgen.fit_gda), which takes solver='svd' without a covariance "
                "estimator or estimated shrinkage")
        with in_own_terms(self, marked):
            return self._fit(X, y, U)


# ------------------------------------------------------------------------------ LDA


class LinearDiscriminantAnalysis(ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                                 _DiscriminantAnalysis, LinearFastgenClassifier):
    """Linear discriminant analysis: Gaussian classes with a shared covariance.

    ``fastgen.fit_gda(X, y, "pooled")`` behind scikit-learn's interface.  The covariance
    is the maximum-likelihood pooled within-class covariance (÷ n), as scikit-learn 1.9.

    Parameters
    ----------
    solver : {"svd", "lsqr", "eigen"}, default "svd"
        The fitted covariance follows scikit-learn's solver:

        * "svd": the count-weighted pooled covariance (``fastgen.fit_gda``);
          ``scalings_`` whiten it on the correlation scale, dropping directions whose
          singular value is below ``tol``, as scikit-learn's svd solver; ``coef_`` and
          ``intercept_`` are centred on ``xbar_``.
        * "lsqr": the priors-weighted class covariances Σ = Σ_k p_k Σ_k (with the
          empirical priors, the pooled covariance); coef_k = Σ⁻¹μ_k.
        * "eigen": as "lsqr", and ``scalings_`` are the generalised eigenvectors of
          (S_total − Σ, Σ) in decreasing order, so ``transform`` (X·scalings_) is
          scikit-learn's eigen transform.

        Deliberate differences from scikit-learn: "svd" accepts ``shrinkage`` (the
        covariance is then that of "lsqr" with the same shrinkage, in the svd
        parametrisation), and "lsqr" supports ``transform`` (``fastgen.lda_transform``,
        equal to the svd transform up to column signs), where scikit-learn raises
        NotImplementedError.
    shrinkage : None, "auto" or float in [0, 1], default None
        A float a: each class covariance Σ_k ← (1 − a)Σ_k + a·(tr Σ_k / d)·I.  "auto":
        scikit-learn's estimate, Ledoit-Wolf on each class's *standardised* features,
        rescaled, and summed weighted by the priors (see
        :func:`standardised_ledoit_wolf`).  This mode (like ``covariance_estimator``
        and lsqr/eigen with user ``priors``) holds K per-class (d, d) covariances, K·d²
        memory; every other mode keeps fastgen's pooled moments only.
        ``fastgen.fit_gda(..., shrinkage="ledoit-wolf")`` follows the same idea
        (standardise, estimate the intensity, shrink the correlations; unit-invariant)
        on the pooled covariance once, in fastgen's memory bound, rather than on each
        class: a different estimate.
    priors : array-like of shape (n_classes,), default None
        Class priors; renormalised with a warning if they do not sum to one.
    n_components : int, default None
        Dimensions kept by ``transform`` (at most min(n_classes − 1, n_features)).
    store_covariance : bool, default False
        Set ``covariance_`` (always set for solver "lsqr"/"eigen", as scikit-learn).
    tol : float, default 1e-4
        The svd solver's rank threshold for ``scalings_`` (singular values of the
        standardised within-class data; between-class singular values below tol times
        the largest).
    covariance_estimator : estimator with ``fit`` and ``covariance_``, default None
        Estimates each class covariance (solvers "lsqr" and "eigen").
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN in X marks missing values (the ``allow_nan`` tag).  ``fit``
        estimates by EM (``fastgen.fit_gda(..., nan_policy="marginalize")``; solver
        "svd", no covariance estimator or estimated shrinkage), and ``predict``,
        ``predict_proba`` and ``predict_log_proba`` score each row by the marginal
        Gaussian of its observed features.  With unlabelled rows too
        (``unlabeled_label``), EM over both (NaN in the labelled rows, the unlabelled
        ones, or both; solver "svd").
    unlabeled_label, unlabeled_weight, em_max_iter : default None, 1.0, 100
        EM over the rows of y labelled ``unlabeled_label`` (e.g. -1, as
        ``sklearn.semi_supervised``): :mod:`fastgen.sklearn.unlabeled`
        (``em_max_iter`` bounds the EM over missing values too).  Solvers
        "svd" and "lsqr", with a float or no shrinkage, no covariance estimator
        (and for lsqr no priors): the pooled model of :func:`fastgen.fit_gda`.

    Attributes
    ----------
    params_ : fastgen.GDAParams
    classes_, priors_, means_, xbar_, coef_, intercept_, covariance_, scalings_,
    explained_variance_ratio_ :
        As in scikit-learn (``coef_`` is (1, d) for two classes).
    n_features_in_, feature_names_in_ :
    """

    _min_samples = 2

    def __init__(self, solver="svd", shrinkage=None, priors=None, n_components=None,
                 store_covariance=False, tol=1e-4, covariance_estimator=None,
                 nan_policy="raise", *, unlabeled_label=None, unlabeled_weight=1.0,
                 em_max_iter=100):
        super().__init__(solver=solver, shrinkage=shrinkage, priors=priors,
                         store_covariance=store_covariance, tol=tol,
                         covariance_estimator=covariance_estimator, nan_policy=nan_policy,
                         unlabeled_label=unlabeled_label, unlabeled_weight=unlabeled_weight,
                         em_max_iter=em_max_iter)
        self.n_components = n_components

    def _check_params(self):
        if self.solver not in ("svd", "lsqr", "eigen"):
            raise ValueError(f"solver must be 'svd', 'lsqr' or 'eigen'; got {self.solver!r}")
        check_shrinkage(self.shrinkage)
        if self.covariance_estimator is not None and self.solver == "svd":
            raise ValueError("covariance estimator is not supported with svd solver. "
                             "Try another solver")
        check_estimator_and_shrinkage(self.covariance_estimator, self.shrinkage)

    def _fit(self, X, y, U=None):
        classes = np.unique(y)
        n, d = X.shape
        K = classes.shape[0]
        if n == K:
            raise ValueError("The number of samples must be more than the number of classes.")
        priors = self.priors
        if priors is not None:
            priors = np.asarray(priors, dtype=np.float64)
            if np.any(priors < 0):
                raise ValueError("priors must be non-negative")
            if abs(priors.sum() - 1.0) > 1e-5:
                warn("The priors do not sum to 1. Renormalizing", UserWarning)
            priors = priors / priors.sum()
        max_components = min(K - 1, d)
        if self.n_components is not None and self.n_components > max_components:
            raise ValueError(
                "n_components cannot be larger than min(n_features, n_classes - 1)."
            )
        self._max_components = (max_components if self.n_components is None
                                else self.n_components)
        est, shrinkage = self.covariance_estimator, self.shrinkage
        by_class = (est is not None or (isinstance(shrinkage, str) and shrinkage == "auto")
                    or (priors is not None and self.solver != "svd"))
        # the svd solver's tol is fastgen's rank rule (eigenvalues of the correlation
        # matrix above tol²), so params_ (which predict and predict_proba score) drops
        # the directions scalings_ drops; lsqr and eigen ignore tol and solve with the
        # whole covariance, as scikit-learn: only directions at the working precision
        # (d·ε, tol=0) are dropped
        rank_tol = self.tol if self.solver == "svd" else 0.0
        em = em_keywords(self, U, None if not (by_class or self.solver == "eigen") else
                         "with solver 'svd' or 'lsqr', a float or no shrinkage, no "
                         "covariance_estimator (and for lsqr no priors)")
        if by_class:
            m = class_moments(X, y, kind="per_class")
            p = m.counts / m.counts.sum() if priors is None else priors
            Sw = np.einsum("k,kij->ij", p, class_covariances(X, y, m, shrinkage, est))
            params = gda_from_moments(moments_with(m, Sw, "pooled"), "pooled",
                                      priors=priors, tol=rank_tol)
        else:
            if self._missing and not em:  # the missing-feature EM: em_max_iter too
                em = {"em_max_iter": self.em_max_iter}
            params = fit_gda(X, y, "pooled", priors=priors, shrinkage=shrinkage,
                             tol=rank_tol, nan_policy=self.nan_policy, **em)
        self.params_ = params
        self.classes_ = params.classes
        self.priors_ = params.priors
        self.means_ = params.means
        self.xbar_ = params.priors @ params.means
        Sw = params.covariance.astype(np.float64)
        if self.store_covariance or self.solver != "svd":
            self.covariance_ = params.covariance
        self._scores_from_coef = False
        if self.solver == "svd":
            coef, intercept = self._svd_tables(Sw, n)
        else:
            W, b = linear_discriminant(params)
            coef, intercept = W.T.astype(np.float64), b.astype(np.float64)
            if self.solver == "eigen":
                St = total_covariance(X, shrinkage, est)
                evals, evecs = scipy.linalg.eigh(St - Sw, Sw)
                order = np.argsort(evals)[::-1]
                self.explained_variance_ratio_ = (evals[order] / evals.sum())[
                    : self._max_components]
                self.scalings_ = evecs[:, order]
        if K == 2:
            coef = coef[1:] - coef[:1]
            intercept = intercept[1:] - intercept[:1]
        self.coef_ = np.ascontiguousarray(coef, dtype=X.dtype)
        self.intercept_ = np.asarray(intercept, dtype=X.dtype)
        self._n_features_out = self._max_components
        return self

    def _svd_tables(self, Sw, n):
        """scalings_, explained_variance_ratio_, coef_ and intercept_ of the svd solver.

        With D = diag(√Σ_jj) (1 where 0) and the correlation matrix R = D⁻¹ΣD⁻¹ = VΛVᵀ,
        the within-class whitening is A = D⁻¹V_r Λ_r^{-1/2} over the r eigenvalues with
        √λ > tol (scikit-learn's singular values of the standardised centred data).
        The between-class matrix B with rows √(n·p_k/(K−1))·(μ_k − x̄)ᵀA has the SVD
        B = USVᵀ; scalings_ = A·V (columns with s > tol·s_1), and the ratio of each s²
        to Σs² is explained_variance_ratio_.  Then coef_k = Gᵀ scalings_ᵀ with
        G_k = scalings_ᵀ(μ_k − x̄), and intercept_k = −½‖G_k‖² + log p_k − x̄ᵀcoef_k.
        """
        p = self.priors_.astype(np.float64)
        mu = self.means_.astype(np.float64)
        xbar = p @ mu
        K = mu.shape[0]
        std = np.sqrt(np.clip(np.diag(Sw), 0.0, None))
        std = np.where(std == 0, 1.0, std)
        lam, V = np.linalg.eigh(Sw / std[:, None] / std[None, :])
        lam, V = lam[::-1], V[:, ::-1]
        s = np.sqrt(np.clip(lam, 0.0, None))
        r = int(np.sum(s > self.tol))
        A = (V[:, :r] / s[:r]) / std[:, None]
        fac = 1.0 if K == 1 else 1.0 / (K - 1)
        B = (np.sqrt(n * p * fac)[:, None] * (mu - xbar)) @ A
        _, sb, Vt = np.linalg.svd(B, full_matrices=False)
        if self._max_components == 0:
            self.explained_variance_ratio_ = np.empty((0,))
        else:
            self.explained_variance_ratio_ = (sb**2 / np.sum(sb**2))[: self._max_components]
        rb = int(np.sum(sb > self.tol * sb[0]))
        # scikit-learn also drops between-class directions with s ≤ tol·s_1; params_
        # cannot (it keeps every direction of the retained within-class subspace), so
        # when that drops a direction, the class scores come from coef_
        # (see _log_posteriors)
        self._scores_from_coef = rb < min(K - 1, r, sb.shape[0])
        self.scalings_ = (A @ Vt.T[:, :rb]).astype(self.means_.dtype)
        G = (mu - xbar) @ self.scalings_.astype(np.float64)
        coef = G @ self.scalings_.T.astype(np.float64)
        intercept = -0.5 * np.sum(G**2, axis=1) + np.log(p) - coef @ xbar
        return coef, intercept

    def _log_posteriors(self, X):
        """log p(y = k | x) from decision_function (scikit-learn's svd posteriors: the
        softmax of X·coef_ᵀ + intercept_, or for two classes the logistic of the
        log-odds), in a stable log-sum-exp; for X validated by the caller."""
        # X·coef_ᵀ + intercept_ as decision_function computes it, on X validated
        # once (decision_function would validate again, and warn about the names of a
        # frame already converted)
        if np.isnan(X).any():  # posteriors from coef_: tol dropped a direction
            raise ValueError("X contains NaN, which these posteriors cannot score")
        f = X.astype(np.float64) @ self.coef_.T.astype(np.float64) + self.intercept_
        if len(self.classes_) == 2:
            f = np.column_stack([np.zeros(f.shape[0]), f[:, 0]])
        return scipy.special.log_softmax(f, axis=1).astype(X.dtype)

    def predict(self, X):
        """Most probable class of each row (see :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if not getattr(self, "_scores_from_coef", False):
            return LinearFastgenClassifier.predict(self, X)
        X = self._validate_predict(X)
        return self.classes_[np.argmax(self._log_posteriors(X), axis=1)]

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes).

        From ``params_`` (fastgen's scoring), except where the svd solver's ``tol``
        dropped a between-class direction: then the softmax of
        :meth:`decision_function`, as scikit-learn.
        """
        if not getattr(self, "_scores_from_coef", False):
            return LinearFastgenClassifier.predict_proba(self, X)
        X = self._validate_predict(X)
        return np.exp(self._log_posteriors(X))

    def predict_log_proba(self, X):
        """Log class probabilities (a stable log-sum-exp), as :meth:`predict_proba`."""
        if not getattr(self, "_scores_from_coef", False):
            return LinearFastgenClassifier.predict_log_proba(self, X)
        X = self._validate_predict(X)
        return self._log_posteriors(X)

    def transform(self, X):
        """Project X onto the discriminant directions.

        "svd": (X − xbar_)·scalings_; "eigen": X·scalings_ (scikit-learn's transforms);
        "lsqr": ``fastgen.lda_transform`` (scikit-learn raises there), with at most
        min(n_classes − 1, rank) components when constant or collinear features make
        the model's rank smaller (as the svd solver, which keeps the between-class
        directions above ``tol``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)

        A projection has no marginal over missing features: X with NaN is refused
        whatever ``nan_policy`` says.
        """
        X = self._validate_predict(X)
        if np.isnan(X).any():
            i, j = np.argwhere(np.isnan(X))[0]
            raise ValueError(f"X contains NaN at row {i}, column {j}: transform projects "
                             f"complete rows only (nan_policy applies to the scores); "
                             f"impute or drop the row")
        if self.solver == "lsqr":
            K = self.params_.means.shape[0]
            return lda_transform(self.params_, X,
                                 min(self._max_components, K - 1, self.params_.rank))
        S = self.scalings_.astype(X.dtype)
        if self.solver == "svd":
            out = (X - self.xbar_.astype(X.dtype)) @ S
        else:
            out = X @ S
        return out[:, : self._max_components]


# ------------------------------------------------------------------------------ QDA


class QuadraticDiscriminantAnalysis(_DiscriminantAnalysis, FastgenClassifier):
    """Quadratic discriminant analysis: one Gaussian per class, each its own covariance.

    ``fastgen.gda_from_moments(class_moments(X, y, kind="per_class"), "per_class")``.
    Covariances are maximum-likelihood (÷ n_k), as scikit-learn 1.9 (earlier versions
    divided by n_k − 1: ``fastgen.fit_gda(..., unbiased=True)``).

    Parameters
    ----------
    solver : {"svd", "eigen"}, default "svd"
        "svd": Σ_k ← (1 − reg_param)Σ_k + reg_param·I; as scikit-learn's svd solver it
        sees only min(n_k, d) singular values, so a class with n_k ≤ d rows is rank
        deficient whatever ``reg_param``.  "eigen": Σ_k from ``shrinkage`` or
        ``covariance_estimator`` (``reg_param`` unused, as scikit-learn).
    shrinkage : None, "auto" or float in [0, 1], default None
        Solver "eigen" only (NotImplementedError with "svd", as scikit-learn).  A float
        a: Σ_k ← (1 − a)Σ_k + a·(tr Σ_k / d)·I; "auto": scikit-learn's Ledoit-Wolf on
        each class's standardised features, rescaled.
    priors : array-like of shape (n_classes,), default None
    reg_param : float in [0, 1], default 0.0
    store_covariance : bool, default False
        Set ``covariance_`` ((K, d, d); scikit-learn stores a list of (d, d) arrays).
    tol : float, default 1e-4
        A class whose covariance has an eigenvalue ≤ tol raises scikit-learn's
        LinAlgError ("The covariance matrix of class … is not full rank").
    covariance_estimator : estimator with ``fit`` and ``covariance_``, default None
        Solver "eigen" only.
    nan_policy : {"raise", "marginalize"}, default "raise"
        As in :class:`LinearDiscriminantAnalysis`; ``reg_param`` applies once, to the
        converged per-class covariances.
    unlabeled_label, unlabeled_weight, em_max_iter : default None, 1.0, 100
        EM over the rows of y labelled ``unlabeled_label`` (e.g. -1, as
        ``sklearn.semi_supervised``): :mod:`fastgen.sklearn.unlabeled`
        (``em_max_iter`` bounds the EM over missing values too).  Solver
        "svd": the per-class model of :func:`fastgen.fit_gda` with ``reg=reg_param``
        (and its collapse guard); ``rotations_`` and ``scalings_`` then come from
        the EM covariances.

    Attributes
    ----------
    params_ : fastgen.GDAParams
    classes_, priors_, means_, covariance_, rotations_, scalings_, n_features_in_,
    feature_names_in_ :
        As in scikit-learn: ``rotations_[k]`` and ``scalings_[k]`` are the eigenvectors
        and eigenvalues of Σ_k in decreasing order (scoring uses the Cholesky factors
        ``params_.cholesky``).
    """

    # kept separate on purpose from LDA's: scikit-learn's signatures differ (LDA's is
    # positional with n_components, QDA's keyword-only with reg_param)
    def __init__(self, *, solver="svd", shrinkage=None, priors=None, reg_param=0.0,
                 store_covariance=False, tol=1e-4, covariance_estimator=None,
                 nan_policy="raise", unlabeled_label=None, unlabeled_weight=1.0,
                 em_max_iter=100):
        super().__init__(solver=solver, shrinkage=shrinkage, priors=priors,
                         store_covariance=store_covariance, tol=tol,
                         covariance_estimator=covariance_estimator, nan_policy=nan_policy,
                         unlabeled_label=unlabeled_label, unlabeled_weight=unlabeled_weight,
                         em_max_iter=em_max_iter)
        self.reg_param = reg_param

    def _check_params(self):
        if self.solver not in ("svd", "eigen"):
            raise ValueError(f"solver must be 'svd' or 'eigen'; got {self.solver!r}")
        check_shrinkage(self.shrinkage)
        if self.solver == "svd":
            if self.shrinkage is not None:
                raise NotImplementedError("shrinkage not supported with 'svd' solver.")
            if self.covariance_estimator is not None:
                raise ValueError("covariance_estimator is not supported with solver='svd'. "
                                 "Try solver='eigen' instead.")
        check_estimator_and_shrinkage(self.covariance_estimator, self.shrinkage)

    def _fit(self, X, y, U=None):
        if np.unique(y).shape[0] < 2:
            raise ValueError("The number of classes has to be greater than one. Got 1 class.")
        em = em_keywords(self, U, None if self.solver == "svd" else "with solver 'svd'")
        r = float(self.reg_param) if self.solver == "svd" else 0.0
        filled, ml_cov = self._missing_feature_fit(X, y, r) if self._missing else (None,
                                                                                   None)
        m = class_moments(X, y, kind="per_class") if filled is None else moments_with(
            ClassMoments(filled.classes, filled.n_per_class.astype(np.float64),
                         filled.means.astype(np.float64), np.zeros(filled.covariance.shape),
                         "per_class", str(X.dtype)), ml_cov, "per_class")
        d = X.shape[1]
        for k, c in enumerate(m.classes):
            if m.counts[k] == 1:
                raise ValueError(f"y has only 1 sample in class {c}, covariance is ill "
                                 "defined.")
        if self.solver == "svd":
            covs = m.scatter / m.counts[:, None, None]
        else:
            covs = class_covariances(X, y, m, self.shrinkage, self.covariance_estimator)
        rotations, scalings = [], []
        for k, c in enumerate(m.classes):
            lam, V = np.linalg.eigh(covs[k])
            lam, V = lam[::-1], V[:, ::-1]
            n_k = int(m.counts[k])
            if self.solver == "svd":
                # the svd of the n_k centred rows has min(n_k, d) singular values
                lam, V = lam[: min(n_k, d)], V[:, : min(n_k, d)]
                lam = (1.0 - r) * np.clip(lam, 0.0, None) + r
            rank = int(np.sum(lam > self.tol))
            if rank < d:
                if self.solver == "svd" and n_k <= d:
                    raise np.linalg.LinAlgError(
                        f"The covariance matrix of class {c} is not full rank. When using "
                        f"`solver='svd'` the number of samples in each class should be "
                        f"more than the number of features, but class {c} has {n_k} "
                        f"samples and {d} features. Try using `solver='eigen'` and "
                        f"setting the parameter `shrinkage` for regularization."
                    )
                param = "shrinkage" if self.solver == "eigen" else "reg_param"
                raise np.linalg.LinAlgError(
                    f"The covariance matrix of class {c} is not full rank (rank {rank} of "
                    f"{d} at tol={self.tol:g}). Increase the value of `{param}` to reduce "
                    f"the collinearity."
                )
            rotations.append(V)
            scalings.append(lam)
        # the rank was decided above by scikit-learn's rule (eigenvalues of Σ_k above
        # the absolute tol); fastgen's own rule then only guards the working precision
        if em:
            params = fit_gda(X, y, "per_class", priors=self.priors, reg=r, tol=0.0,
                             nan_policy=self.nan_policy, **em)
            rotations, scalings = [], []
            for cov in params.covariance.astype(np.float64):
                lam, V = np.linalg.eigh(cov)
                rotations.append(V[:, ::-1])
                scalings.append(lam[::-1])
        elif self.solver == "svd":
            params = gda_from_moments(m, "per_class", priors=self.priors, reg=r, tol=0.0)
            if filled is not None:  # the record of the missing-feature EM fit
                params = dataclasses.replace(
                    params, n_iter=filled.n_iter, converged=filled.converged,
                    log_likelihood_history=filled.log_likelihood_history,
                    history_monotone=filled.history_monotone)
        else:
            params = gda_from_moments(moments_with(m, covs, "per_class"), "per_class",
                                      priors=self.priors, tol=0.0)
        self.params_ = params
        self.classes_ = params.classes
        self.priors_ = params.priors
        self.means_ = params.means
        self.rotations_ = rotations
        self.scalings_ = scalings
        if self.store_covariance:
            self.covariance_ = params.covariance
        return self

    def _missing_feature_fit(self, X, y, r):
        """(params, (K, d, d) float64 covariances) of the EM fit of X with NaN: the
        maximum-likelihood covariances, to which ``_fit`` applies ``reg_param`` as to
        complete-data ones.  Where they are singular and ``reg_param`` > 0, EM's
        converged covariances with ``reg_param`` applied (which the model layer checks)
        give them back as (Σ_reg − r·I)/(1 − r) (0 where r = 1: Σ = I)."""
        options = {"priors": self.priors, "tol": 0.0, "nan_policy": "marginalize",
                   "em_max_iter": self.em_max_iter}
        try:
            filled = fit_gda(X, y, "per_class", **options)
            return filled, filled.covariance.astype(np.float64)
        except SingularCovarianceError as exc:
            if not r > 0 or "EM with missing features" in str(exc):
                raise  # EM itself failed: reg_param applies after it, and cannot help
        filled = fit_gda(X, y, "per_class", reg=r, **options)
        cov = filled.covariance.astype(np.float64)
        if r >= 1.0:
            return filled, np.zeros_like(cov)
        return filled, (cov - r * np.eye(cov.shape[-1])) / (1.0 - r)

    def decision_function(self, X):
        """log p(x | y=k) + log p(y=k) without the −d/2·log 2π constant (scikit-learn's),
        for X as in :meth:`predict`: an ndarray of shape (n_samples, n_classes), or for two
        classes of shape (n_samples,), the log-likelihood ratio of ``classes_[1]``."""
        check_is_fitted(self, "params_")
        X = self._validate_predict(X)
        with in_own_terms(self, warnings_too=False):
            jll = joint_log_likelihood(self.params_, X, nan_policy=self._nan_policy())
        if jll.shape[1] == 2:
            return jll[:, 1] - jll[:, 0]
        return jll + 0.5 * self.n_features_in_ * _LOG_2PI
