"""Generative fits on Dask arrays: per-block sufficient statistics (class moments,
naive Bayes counts), merged exactly in a tree, finished on the client by the same
builders as the in-memory fits."""

from __future__ import annotations

from .._validation import check_class_weights, check_scalar
from ..gda import SCATTER_FOR, GDAParams, check_gda_options, gda_from_moments
from ..naive_bayes import nb_from_counts
from ..stats import class_moments, merge_counts, merge_moments, nb_counts
from .blocks import (
    SPLIT_EVERY,
    as_dask_vector,
    as_dask_X,
    classes_and_counts,
    map_rows,
    naming_first_nan,
    row_blocks,
    tree_reduce,
    with_nan_advice,
)
from .categories import category_widths_over_blocks
from .em import check_unlabeled_blocks, gda_em_on_blocks, nb_em_on_blocks
from .missing import (
    fit_bernoulli_nb_missing,
    fit_categorical_nb_missing,
    fit_gaussian_nb_missing,
    fit_gda_missing,
    marginalize_requested,
)

__all__ = ["fit_gda", "fit_gaussian_nb", "fit_multinomial_nb", "fit_bernoulli_nb",
           "fit_categorical_nb"]


def _block_moments(X, y, w, kind, covariance):
    if X.shape[0] == 0:
        return None
    return with_nan_advice(covariance, lambda: class_moments(X, y, kind=kind,
                                                             sample_weight=w))


@naming_first_nan
def fit_gda(X, y, covariance: str = "pooled", *, priors=None, sample_weight=None,
            reg: float = 0.0, shrinkage=None, unbiased: bool = False,
            var_smoothing: float = 1e-9, tol: float = 1e-4,
            split_every: int = SPLIT_EVERY, unlabeled=None, unlabeled_weight: float = 1.0,
            em_tol: float = 1e-8, em_max_iter: int = 100,
            nan_policy: str = "raise") -> GDAParams:
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
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize" (covariance "diagonal" or "pooled_diagonal"): NaN entries are
        missing values; each block gives its available-case sums
        (:mod:`fastgen.dask.missing`), equal to ``fastgen.fit_gda(...,
        nan_policy="marginalize")``.  "pooled" and "per_class" (EM) and unlabelled
        rows with NaN raise: fit those in memory.

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
    marginalize = marginalize_requested(nan_policy, covariance, unlabeled)
    X = as_dask_X(X)
    y = as_dask_vector(y, X, "y")
    w = as_dask_vector(sample_weight, X, "sample_weight")
    U, em = check_unlabeled_blocks(unlabeled, X, (unlabeled_weight, em_tol, em_max_iter))
    if marginalize:
        classes, _ = classes_and_counts(y, w)
        return fit_gda_missing(X, y, w, classes, covariance, {
            "priors": priors, "reg": reg, "shrinkage": shrinkage, "unbiased": unbiased,
            "var_smoothing": var_smoothing, "tol": tol}, split_every)
    kind = SCATTER_FOR[covariance]
    parts = map_rows(_block_moments, X, row_blocks(X, y, w), kind, covariance)
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


def _block_counts(X, y, w, model, binarize, classes, n_categories=None):
    if X.shape[0] == 0:
        return None
    if model == "categorical":
        return with_nan_advice(model, lambda: nb_counts(
            X, y, model, sample_weight=w, classes=classes, n_categories=n_categories))
    return with_nan_advice(model, lambda: nb_counts(X, y, model, sample_weight=w,
                                                    binarize=binarize, classes=classes))


@naming_first_nan
def _fit_nb(X, y, sample_weight, model, binarize, split_every, options,
            em_options=(None, 1.0, 1e-8, 100), min_categories=None, nan_policy="raise"):
    marginalize = marginalize_requested(nan_policy, model, em_options[0])
    X = as_dask_X(X)
    y = as_dask_vector(y, X, "y")
    w = as_dask_vector(sample_weight, X, "sample_weight")
    U, em = check_unlabeled_blocks(em_options[0], X, em_options[1:])
    classes, weights = classes_and_counts(y, w)
    check_class_weights(classes, weights)  # as the in-memory fits refuse a weightless class
    if marginalize and model == "gaussian":
        var_smoothing = check_scalar(options["var_smoothing"], "var_smoothing", low=0.0)
        return fit_gaussian_nb_missing(X, y, w, classes, options["priors"], var_smoothing,
                                       split_every)
    if marginalize and model == "categorical":
        return fit_categorical_nb_missing(X, y, w, classes, options["alpha"],
                                          min_categories, split_every)
    if marginalize:
        return fit_bernoulli_nb_missing(X, y, w, classes, options, binarize, split_every)
    blocks = row_blocks(X, y, w)
    n_cat = None
    if model == "categorical":
        n_cat = category_widths_over_blocks(X, blocks, min_categories, split_every)
    parts = map_rows(_block_counts, X, blocks, model, binarize, classes, n_cat)
    c = tree_reduce(parts, merge_counts, split_every).compute()
    params = nb_from_counts(c, **options)
    if U is None:
        return params
    return nb_em_on_blocks(params, c, X, y, w, U, em, options, split_every)


def fit_gaussian_nb(X, y, *, priors=None, var_smoothing=1e-9, sample_weight=None,
                    split_every: int = SPLIT_EVERY, unlabeled=None, unlabeled_weight=1.0,
                    em_tol=1e-8, em_max_iter=100, nan_policy="raise"):
    """Gaussian naive Bayes on a Dask array, equal to :func:`fastgen.fit_gaussian_nb`.

    Per block: diagonal class moments (N_k, μ_kj, S_kj) and, with weights, the
    unweighted moments of all rows; merged exactly in a tree; then on the client
    σ²_kj = S_kj / N_k + ε, ε = var_smoothing · max_j Var(x_j) over all rows.
    ``unlabeled`` (a Dask array), ``unlabeled_weight``, ``em_tol``, ``em_max_iter``:
    EM as :func:`fastgen.fit_gaussian_nb`, one pass over the blocks per iteration.
    ``nan_policy="marginalize"``: NaN entries are missing values, each block gives its
    available-case sums (:mod:`fastgen.dask.missing`), equal to
    ``fastgen.fit_gaussian_nb(..., nan_policy="marginalize")`` (not with unlabelled
    rows: fit those in memory).
    """
    return _fit_nb(X, y, sample_weight, "gaussian", None, split_every,
                   {"priors": priors, "var_smoothing": var_smoothing},
                   (unlabeled, unlabeled_weight, em_tol, em_max_iter),
                   nan_policy=nan_policy)


def fit_multinomial_nb(X, y, *, alpha=1.0, fit_prior=True, class_prior=None,
                       sample_weight=None, split_every: int = SPLIT_EVERY, unlabeled=None,
                       unlabeled_weight=1.0, em_tol=1e-8, em_max_iter=100,
                       nan_policy="raise"):
    """Multinomial naive Bayes on a Dask array (dense or CSR blocks).

    Per block N_k and N_kj = Σ_{i: y_i=k} w_i x_ij, summed in a tree; then
    log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d) on the client.  Equals
    :func:`fastgen.fit_multinomial_nb`, also with ``unlabeled`` (a Dask array, dense or
    CSR blocks), ``unlabeled_weight``, ``em_tol``, ``em_max_iter``: EM, one pass over
    the blocks per iteration.  ``nan_policy="marginalize"`` raises, as in memory: a
    missing count is not left out feature by feature.
    """
    return _fit_nb(X, y, sample_weight, "multinomial", None, split_every,
                   {"alpha": alpha, "fit_prior": fit_prior, "class_prior": class_prior},
                   (unlabeled, unlabeled_weight, em_tol, em_max_iter),
                   nan_policy=nan_policy)


def fit_bernoulli_nb(X, y, *, alpha=1.0, binarize=0.0, fit_prior=True, class_prior=None,
                     sample_weight=None, split_every: int = SPLIT_EVERY, unlabeled=None,
                     unlabeled_weight=1.0, em_tol=1e-8, em_max_iter=100,
                     nan_policy="raise"):
    """Bernoulli naive Bayes on a Dask array (dense or CSR blocks).

    Per block N_k and F_kj = Σ_{i: y_i=k} w_i [x_ij > binarize], summed in a tree; then
    p_kj = (F_kj + α) / (N_k + 2α) on the client.  Equals :func:`fastgen.fit_bernoulli_nb`,
    also with ``unlabeled`` (a Dask array), ``unlabeled_weight``, ``em_tol``,
    ``em_max_iter``: EM, one pass over the blocks per iteration.
    ``nan_policy="marginalize"``: NaN entries (dense, or stored in CSR) are missing
    values; each block gives F_kj and N_kj over its observed entries
    (:mod:`fastgen.dask.missing`), equal to ``fastgen.fit_bernoulli_nb(...,
    nan_policy="marginalize")`` (not with unlabelled rows: fit those in memory).
    """
    return _fit_nb(X, y, sample_weight, "bernoulli", binarize, split_every,
                   {"alpha": alpha, "fit_prior": fit_prior, "class_prior": class_prior},
                   (unlabeled, unlabeled_weight, em_tol, em_max_iter),
                   nan_policy=nan_policy)


def fit_categorical_nb(X, y, *, alpha=1.0, min_categories=None, sample_weight=None,
                       split_every: int = SPLIT_EVERY, nan_policy="raise"):
    """Categorical naive Bayes on a Dask array (dense or CSR blocks of category codes).

    One pass finds the number of categories m_j of each feature over all blocks (as
    :func:`fastgen.fit_categorical_nb` does, stray codes refused); then per block N_k
    and N_kjc = Σ_{i: y_i=k, x_ij=c} w_i in that one layout, summed in a tree, and
    log p(x_j = c | k) = log(N_kjc + α) − log(Σ_c N_kjc + α·m_j) on the client.
    Equals :func:`fastgen.fit_categorical_nb` (without ``unlabeled`` rows: their codes
    would widen the tables, one more pass; fit in memory for EM).
    ``nan_policy="marginalize"``: NaN entries are missing codes; the tables are laid
    out over X with NaN read as 0 and each block gives N_kjc over its observed entries
    (:mod:`fastgen.dask.missing`), equal to ``fastgen.fit_categorical_nb(...,
    nan_policy="marginalize")``.
    """
    return _fit_nb(X, y, sample_weight, "categorical", None, split_every,
                   {"alpha": alpha}, min_categories=min_categories, nan_policy=nan_policy)
