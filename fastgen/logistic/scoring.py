"""The scorer of logistic regression: its scoring tables, and which kernels score them.

The params hand over :class:`LogisticTables` (coef, intercept); :data:`LOGISTIC_SCORER`
scores host X (dense or CSR) from the linear predictor η = X·coefᵀ + intercept: binary
posteriors by expit, multinomial posteriors of small dense float64 X in one pass by
transposed tiles, the rest by normalising η's rows.  There are no device kernels: a
device array is refused with the way to score it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._params import kernel_view
from .._runtime import kernel_module
from .._scorer import MODE_JLL, MODE_PROBA, Scorer
from .._validation import report_nonfinite

__all__ = ["LogisticTables", "LogisticScorer", "LOGISTIC_SCORER", "linear_predictor"]

tile_kernels = kernel_module("tiles")


class LogisticTables(NamedTuple):
    """η = X·coefᵀ + intercept, in the params' dtype; one column (class 1 against
    class 0) for two classes, else one per class."""

    coef: np.ndarray  #: (K', d)
    intercept: np.ndarray  #: (K',)


#: Rows per block of float32 X cast to float64 for the linear predictor (bounds the
#: temporary; X itself is never copied whole).
_CAST_ROWS = 4096


def linear_predictor(params, X):
    """η = X·coefᵀ + intercept (n, K') of validated X, float64 (the coefficients are
    float64; float32 X is cast a block of rows at a time, so η is exactly that of the
    same values in float64).  A NaN or an infinity in η
    raises a ``ValueError``: naming the first NaN or infinity of X, or else the row
    whose products overflow (rescale), as GDA and naive Bayes do."""
    coef, intercept = params.scoring_tables()[1]
    with np.errstate(over="ignore", invalid="ignore"):  # found just below
        if X.dtype == coef.dtype:
            eta = np.asarray(X @ coef.T)
        else:
            eta = np.empty((X.shape[0], coef.shape[0]), dtype=coef.dtype)
            for r0 in range(0, X.shape[0], _CAST_ROWS):
                block = X[r0:r0 + _CAST_ROWS].astype(coef.dtype)
                eta[r0:r0 + _CAST_ROWS] = np.asarray(block @ coef.T)
        eta += intercept
    if not np.isfinite(eta).all():
        report_nonfinite(X)
        i = int(np.flatnonzero(~np.isfinite(eta).all(axis=1))[0])
        row = X[i].toarray().ravel() if hasattr(X, "toarray") else X[i]
        raise ValueError(
            f"X has values so large that the linear predictor X·coefᵀ + intercept "
            f"overflows {eta.dtype} at row {i} (|x| up to "
            f"{float(np.max(np.abs(row), initial=0.0)):.3g}); rescale the features "
            f"(e.g. divide by their standard deviation) and refit")
    return eta


class LogisticScorer(Scorer):
    """Scores from :class:`LogisticTables`, dense or CSR X: float64 scores of float64
    coefficients, float32 X kept float32 (:func:`linear_predictor`)."""

    def prepare(self, params, X):
        """X checked once; float32 X stays float32 (the scores are float64 all the
        same), other X becomes the params' dtype."""
        from .._validation import check_n_features, check_X

        X = check_X(X, allow_sparse=self.accepts_sparse,
                    dtype=None if params.dtype == np.float64 else params.dtype,
                    finite=not self.checks_finite_scores,
                    csr_indices=not self.checks_csr_indices)
        check_n_features(X, params.n_features_in)
        return X

    accepts_sparse = True
    #: scoring finds non-finite X through the linear predictor (a NaN or an infinity in
    #: x_i makes η_i non-finite whatever the coefficients: 0·inf is NaN too) and scans X
    #: only then, to name the entry; finite X whose η overflows is scored as before
    checks_finite_scores = True

    def scores(self, params, X, mode):
        """Multinomial posteriors of dense float64 X with at most ``LINEAR_TILE_MAX_D``
        features in one pass by transposed tiles (scores, exponentials and normalisation
        in L1, the output written once, where the BLAS product, the intercept's
        addition and a normalising pass each read and write the scores); everything
        else by normalising the rows of the joint log-likelihood."""
        coef, intercept = params.scoring_tables()[1]
        if (mode != MODE_JLL and coef.shape[0] > 1
                and tile_kernels.serves_linear_posteriors(X, coef.dtype)):
            out = np.empty((X.shape[0], coef.shape[0]))
            coef, intercept = kernel_view(np.ascontiguousarray(coef),
                                          np.ascontiguousarray(intercept))
            bad = tile_kernels.linear_posteriors(X, np.zeros(X.shape[1]), coef, intercept,
                                                 mode, out)
            # A score that overflowed to −∞ below a finite maximum leaves a posterior of
            # exactly 0 (a log-posterior of −∞), which the kernel does not flag; exact
            # zeros need a spread of scores above 745 otherwise, so such rows are rare
            # enough to be rescored from η, which is checked (one reduction of ``out``).
            if not bad and out.size:
                with np.errstate(over="ignore", invalid="ignore"):
                    bad = (out.min() == 0.0 if mode == MODE_PROBA
                           else not np.isfinite(out.sum()))
            if bad:
                return super().scores(params, X, mode)
            return out
        return super().scores(params, X, mode)

    def small(self, params, X, mode):
        """Numpy scores of small X: the binary posteriors as on the kernels' path (numpy
        already), the multinomial rows normalised by numpy."""
        from .._small import finish_rows

        if params.scoring_tables()[1].coef.shape[0] == 1 and mode != MODE_JLL:
            return (self.predict_proba(params, X) if mode == MODE_PROBA
                    else self.predict_log_proba(params, X))
        s = np.array(self.joint_log_likelihood(params, X))  # the model's dtype
        finish_rows(s, mode)
        return s

    def joint_log_likelihood(self, params, X):
        eta = linear_predictor(params, X)
        if eta.shape[1] == 1:
            return np.concatenate([np.zeros_like(eta), eta], axis=1)
        return eta

    def predict_proba(self, params, X):
        if params.scoring_tables()[1].coef.shape[0] == 1:
            from scipy.special import expit  # lazily: keeps `import fastgen` light

            eta = linear_predictor(params, X)
            return np.concatenate([expit(-eta), expit(eta)], axis=1)
        return super().predict_proba(params, X)

    def predict_log_proba(self, params, X):
        if params.scoring_tables()[1].coef.shape[0] == 1:
            eta = linear_predictor(params, X)
            return np.concatenate([-np.logaddexp(0, eta), -np.logaddexp(0, -eta)], axis=1)
        return super().predict_log_proba(params, X)


#: The one scorer of logistic regression.
LOGISTIC_SCORER = LogisticScorer()
