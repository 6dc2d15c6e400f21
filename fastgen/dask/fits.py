"""Generative fits on Dask arrays: per-block sufficient statistics (class moments,
naive Bayes counts), merged exactly in a tree, finished on the client by the same
builders as the in-memory fits."""

from __future__ import annotations

from ..gda import SCATTER_FOR, GDAParams, check_gda_options, gda_from_moments
from ..naive_bayes import nb_from_counts
from ..stats import class_moments, merge_counts, merge_moments, nb_counts
from .blocks import (
    SPLIT_EVERY,
    as_dask_vector,
    as_dask_X,
    classes_and_counts,
    map_rows,
    row_blocks,
    tree_reduce,
)
from .em import check_unlabeled_blocks, gda_em_on_blocks, nb_em_on_blocks

__all__ = ["fit_gda", "fit_gaussian_nb", "fit_multinomial_nb", "fit_bernoulli_nb"]


def _block_moments(X, y, w, kind):
    if X.shape[0] == 0:
        return None
    return class_moments(X, y, kind=kind, sample_weight=w)


def fit_gda(X, y, covariance: str = "pooled", *, priors=None, sample_weight=None,
            reg: float = 0.0, shrinkage=None, unbiased: bool = False,
            var_smoothing: float = 1e-9, tol: float = 1e-4,
            split_every: int = SPLIT_EVERY, unlabeled=None, unlabeled_weight: float = 1.0,
            em_tol: float = 1e-8, em_max_iter: int = 100) -> GDAParams:
    """Gaussian discriminant analysis on a Dask array, equal to :func:`fastgen.fit_gda`.

    Each block of rows gives its class moments (W_k, μ_k, scatter M2) with
    :func:`fastgen.class_moments`; the moments are merged in a tree,
    W = Wa + Wb, δ = μb − μa, μ = μa + δ·Wb/W, M2 = M2a + M2b + δδᵀ·Wa·Wb/W
    (Chan, Golub & LeVeque), and :func:`fastgen.gda_from_moments` finishes on the
    client: φ_k = W_k / W, Σ = M2 / W (pooled) or M2_k / W_k (per class).

    Parameters
    ----------
    X : dask.array.Array (n, d)
        Dense blocks; float32 stays float32.
    y : dask.array.Array or array-like (n,)
    covariance, priors, sample_weight, reg, shrinkage, unbiased, var_smoothing, tol :
        As for :func:`fastgen.fit_gda` (constant or collinear features give the same
        reduced-rank pooled model, and diagonal models the same variance floor), except
        ``shrinkage="ledoit-wolf"`` (it needs a second pass over X for fourth moments;
        use ``"oas"`` or a float).
    split_every : int, default 8
        Fan-in of the tree reduction.
    unlabeled : dask.array.Array (m, d), optional
        Rows without labels: EM as :func:`fastgen.fit_gda` with ``unlabeled``, each
        iteration one pass over the blocks of X and of ``unlabeled``
        (:mod:`fastgen.dask.em`).
    unlabeled_weight, em_tol, em_max_iter :
        As for :func:`fastgen.fit_gda`.

    Returns
    -------
    GDAParams
    """
    # the options are checked before the pass over X (the priors, which need the
    # classes, once the moments are in)
    check_gda_options(covariance, None, reg, shrinkage, unbiased, 1, var_smoothing, tol)
    if shrinkage == "ledoit-wolf":
        raise ValueError("shrinkage='ledoit-wolf' is not available on Dask arrays (it needs "
                         "a second pass for fourth moments); use 'oas' or a float")
    X = as_dask_X(X)
    y = as_dask_vector(y, X, "y")
    w = as_dask_vector(sample_weight, X, "sample_weight")
    U, em = check_unlabeled_blocks(unlabeled, X, (unlabeled_weight, em_tol, em_max_iter))
    kind = SCATTER_FOR[covariance]
    parts = map_rows(_block_moments, X, row_blocks(X, y, w), kind)
    m = tree_reduce(parts, merge_moments, split_every).compute()
    if m is None:
        raise ValueError("X has no rows")
    options = {"priors": priors, "reg": reg, "shrinkage": shrinkage, "unbiased": unbiased,
               "var_smoothing": var_smoothing, "tol": tol}
    params = gda_from_moments(m, covariance, **options)
    if U is None:
        return params
    return gda_em_on_blocks(params, m, X, y, w, U, em, covariance, options, split_every)


# --------------------------------------------------------------------------- naive Bayes


def _block_counts(X, y, w, model, binarize, classes):
    if X.shape[0] == 0:
        return None
    return nb_counts(X, y, model, sample_weight=w, binarize=binarize, classes=classes)


def _fit_nb(X, y, sample_weight, model, binarize, split_every, options, em_options):
    X = as_dask_X(X)
    y = as_dask_vector(y, X, "y")
    w = as_dask_vector(sample_weight, X, "sample_weight")
    U, em = check_unlabeled_blocks(em_options[0], X, em_options[1:])
    classes, _ = classes_and_counts(y, w)
    parts = map_rows(_block_counts, X, row_blocks(X, y, w), model, binarize, classes)
    c = tree_reduce(parts, merge_counts, split_every).compute()
    params = nb_from_counts(c, **options)
    if U is None:
        return params
    return nb_em_on_blocks(params, c, X, y, w, U, em, options, split_every)


def fit_gaussian_nb(X, y, *, priors=None, var_smoothing=1e-9, sample_weight=None,
                    split_every: int = SPLIT_EVERY, unlabeled=None, unlabeled_weight=1.0,
                    em_tol=1e-8, em_max_iter=100):
    """Gaussian naive Bayes on a Dask array, equal to :func:`fastgen.fit_gaussian_nb`.

    Per block: diagonal class moments (N_k, μ_kj, S_kj) and, with weights, the
    unweighted moments of all rows; merged exactly in a tree; then on the client
    σ²_kj = S_kj / N_k + ε, ε = var_smoothing · max_j Var(x_j) over all rows.
    ``unlabeled`` (a Dask array), ``unlabeled_weight``, ``em_tol``, ``em_max_iter``:
    EM as :func:`fastgen.fit_gaussian_nb`, one pass over the blocks per iteration.
    """
    return _fit_nb(X, y, sample_weight, "gaussian", None, split_every,
                   {"priors": priors, "var_smoothing": var_smoothing},
                   (unlabeled, unlabeled_weight, em_tol, em_max_iter))


def fit_multinomial_nb(X, y, *, alpha=1.0, fit_prior=True, class_prior=None,
                       sample_weight=None, split_every: int = SPLIT_EVERY, unlabeled=None,
                       unlabeled_weight=1.0, em_tol=1e-8, em_max_iter=100):
    """Multinomial naive Bayes on a Dask array (dense or CSR blocks).

    Per block N_k and N_kj = Σ_{i: y_i=k} w_i x_ij, summed in a tree; then
    log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d) on the client.  Equals
    :func:`fastgen.fit_multinomial_nb`, also with ``unlabeled`` (a Dask array, dense or
    CSR blocks), ``unlabeled_weight``, ``em_tol``, ``em_max_iter``: EM, one pass over
    the blocks per iteration.
    """
    return _fit_nb(X, y, sample_weight, "multinomial", None, split_every,
                   {"alpha": alpha, "fit_prior": fit_prior, "class_prior": class_prior},
                   (unlabeled, unlabeled_weight, em_tol, em_max_iter))


def fit_bernoulli_nb(X, y, *, alpha=1.0, binarize=0.0, fit_prior=True, class_prior=None,
                     sample_weight=None, split_every: int = SPLIT_EVERY, unlabeled=None,
                     unlabeled_weight=1.0, em_tol=1e-8, em_max_iter=100):
    """Bernoulli naive Bayes on a Dask array (dense or CSR blocks).

    Per block N_k and F_kj = Σ_{i: y_i=k} w_i [x_ij > binarize], summed in a tree; then
    p_kj = (F_kj + α) / (N_k + 2α) on the client.  Equals :func:`fastgen.fit_bernoulli_nb`,
    also with ``unlabeled`` (a Dask array), ``unlabeled_weight``, ``em_tol``,
    ``em_max_iter``: EM, one pass over the blocks per iteration.
    """
    return _fit_nb(X, y, sample_weight, "bernoulli", binarize, split_every,
                   {"alpha": alpha, "fit_prior": fit_prior, "class_prior": class_prior},
                   (unlabeled, unlabeled_weight, em_tol, em_max_iter))

