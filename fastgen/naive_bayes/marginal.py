"""Scores of naive Bayes for rows with missing features (NaN in X, dense or stored in
CSR), from the params' public fields.

* Gaussian, Bernoulli and categorical: the features are independent given the class,
  so the marginal of the observed features leaves out the terms of the missing ones.
* Multinomial: the observed counts x_o are scored under θ_k renormalised over the
  observed features, the exact conditional distribution of x_o given their total
  N_o = Σ_{j∈o} x_j (a multinomial with N_o trials)::

      jll_k(x) = log π_k + Σ_{j∈o} x_j log θ_kj − N_o · log Σ_{l∈o} θ_kl,

  without the multinomial coefficient, as the complete-data scores (it is the same for
  every class).  The total number of trials of a row with a missing count is unknown,
  so p(x_o | y) itself is not defined by the model; given N_o it is.
* Complement naive Bayes has no generative likelihood to marginalise: refused.

A row with every feature missing gets log π_k.  CSR: the implicit zeros are observed
zeros, a stored NaN is missing.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from .._validation import is_sparse
from ..stats.available import filled, missing_matrix
from ..stats.category_counts import check_categories
from ..stats.feature_counts import check_binary_values
from ..stats.missing import diagonal_marginal_jll
from .scoring import report_negative

__all__ = ["marginal_joint_log_likelihood", "gaussian_marginal_scores"]

_BLOCK = 1 << 14


def _filled(X, missing):
    """X with its NaN entries set to 0 (a copy) and the missing mask as float64 (dense
    or CSR, like X)."""
    return filled(X), missing_matrix(X)


def _dot(A, B):
    """A @ B as a dense float64 array (A dense or CSR)."""
    out = A @ B
    return np.asarray(out.toarray() if scipy.sparse.issparse(out) else out, dtype=np.float64)


def _all_missing(X, missing):
    if is_sparse(X):
        nan = np.isnan(X.data).astype(np.int64)
        per_row = np.add.reduceat(nan, X.indptr[:-1]) if X.data.size else np.zeros(0)
        counts = np.zeros(X.shape[0], np.int64)
        has = np.diff(X.indptr) > 0
        counts[has] = per_row[has] if per_row.size else 0
        return counts == X.shape[1]
    return missing.all(axis=1)


def gaussian_marginal_scores(params, X, mode, relative=False):
    """Scores of validated dense X with NaN under Gaussian naive Bayes, finished per
    ``mode`` (as :func:`fastgen.gda.marginal.marginal_scores`): (scores, the complete
    rows, whose scores are placeholders) or None where X holds no NaN."""
    from ..gda.marginal import diagonal_marginal_scores

    return diagonal_marginal_scores(X, params.means, params.variances,
                                    params.class_log_prior, mode)


def _gaussian(params, X, missing):
    return diagonal_marginal_jll(X, params.means, params.variances, params.class_log_prior)


def _bernoulli(params, X, missing):
    Xf, M = _filled(X, missing)
    if params.binarize is None:
        check_binary_values(Xf)
        A = Xf
    elif is_sparse(Xf):
        if params.binarize < 0:
            raise ValueError(f"binarize={params.binarize} < 0 would turn the implicit zeros "
                             f"of sparse X into ones; pass a dense array")
        A = Xf.copy()
        A.data = (X.data > params.binarize).astype(Xf.dtype)
    else:
        A = (X > params.binarize).astype(np.float64)  # NaN > t is False
    flp = params.feature_log_prob.astype(np.float64)
    neg = params.neg_feature_log_prob.astype(np.float64)
    base = params.class_log_prior + neg.sum(axis=1)
    return base + _dot(A, (flp - neg).T) - _dot(M, neg.T)


def _multinomial(params, X, missing):
    Xf, M = _filled(X, missing)
    report_negative(Xf)
    flp = params.feature_log_prob.astype(np.float64)
    theta = np.exp(flp)
    miss = np.clip(_dot(M, theta.T), 0.0, 1.0)  # Σ_{l∈m} θ_kl
    with np.errstate(divide="ignore"):
        log_obs = np.log1p(-miss)
        if not is_sparse(X):  # most of the mass missing: the observed sum directly
            far = miss > 0.5
            if far.any():
                log_obs[far] = np.log(_dot(1.0 - M, theta.T))[far]
    total = np.asarray(Xf.sum(axis=1), dtype=np.float64).reshape(-1, 1)
    log_obs[total[:, 0] == 0] = 0.0  # no observed count: the priors (set below)
    out = params.class_log_prior + _dot(Xf, flp.T) - total * log_obs
    out[total[:, 0] == 0] = np.broadcast_to(params.class_log_prior, (1, flp.shape[0]))
    return out


def _categorical(params, X, missing):
    Xf, _ = _filled(X, missing)
    check_categories(Xf, params.n_categories)
    flp = params.feature_log_prob.astype(np.float64)
    off = params.offsets
    K, C = flp.shape
    if is_sparse(X):
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        keep = ~np.isnan(X.data)
        cols = off[X.indices]
        # +1 at the observed category, −1 at category 0 (counted in the base) for every
        # stored entry: a missing one then contributes nothing
        S = scipy.sparse.csr_matrix(
            (np.concatenate([np.ones(keep.sum()), -np.ones(rows.shape[0])]),
             (np.concatenate([rows[keep], rows]),
              np.concatenate([cols[keep] + Xf.data[keep].astype(np.int64), cols]))),
            shape=(X.shape[0], C))
        base = params.class_log_prior + flp[:, off[:-1]].sum(axis=1)
        return base + _dot(S, flp.T)
    table = np.vstack([flp.T, np.zeros((1, K))])  # row C: a missing feature adds 0
    idx = np.where(missing, C, off[:-1] + Xf.astype(np.int64))
    out = np.empty((X.shape[0], K))
    for b in range(0, X.shape[0], _BLOCK):
        out[b:b + _BLOCK] = table[idx[b:b + _BLOCK]].sum(axis=1)
    return out + params.class_log_prior


_SCORERS = {"GaussianNBParams": _gaussian, "BernoulliNBParams": _bernoulli,
            "MultinomialNBParams": _multinomial, "CategoricalNBParams": _categorical}


def marginal_joint_log_likelihood(params, X, missing, relative=False) -> np.ndarray:
    """(n, K) float64 joint log-likelihoods of validated X (dense, or CSR where the
    model takes it) with the NaN entries integrated out (see the module docstring);
    ``missing`` is the (n, d) bool NaN mask of dense X (None for CSR).  (``relative``:
    scores up to a constant per row would do; these are exact either way.)"""
    name = type(params).__name__
    if name == "ComplementNBParams":
        raise ValueError(
            "X contains NaN and complement naive Bayes cannot score it: its weights are "
            "not the log-probabilities of a generative model, so there is no likelihood "
            "of the observed features to marginalise; impute the missing values or use "
            "MultinomialNB")
    out = _SCORERS[name](params, X, missing)
    every = _all_missing(X, missing)
    if every.any():
        out[every] = params.class_log_prior.astype(np.float64)
    return out
