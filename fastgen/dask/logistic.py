"""Logistic regression on Dask arrays: the sample as a
:class:`~fastgen.logistic.data.LogisticData` whose every call is one reduction over the
blocks, fitted by :func:`fastgen.logistic.api.fit_from_data` (the solver and finish of
:func:`fastgen.fit_logistic`)."""

from __future__ import annotations

import numpy as np

from .._validation import check_class_weights, check_X
from ..logistic import LogisticParams, logistic_loss_grad_hess
from ..logistic.api import (
    ParamsSpec,
    check_fit_options,
    fit_from_data,
    prior_start,
    to_user_params,
)
from ..logistic.centring import centre
from ..logistic.objectives import BINARY_EXPLICIT_MAX_P
from .blocks import (
    SPLIT_EVERY,
    as_dask_vector,
    as_dask_X,
    classes_and_counts,
    map_rows,
    naming_first_nan,
    row_blocks,
    shift_over_blocks,
    tree_reduce,
)
from .separation import separation_over_blocks

__all__ = ["fit_logistic", "DaskLogisticData", "MULTINOMIAL_MAX_KP"]

#: Multinomial logistic regression on Dask forms the explicit (K·p)² Hessian on the
#: workers and solves it on the client; above this K·p that would exceed 128 MB.
MULTINOMIAL_MAX_KP = 4096


def block_loss_grad_hess(X, y, w, classes, beta, fit_intercept, hessian, shift=None):
    """One block's (loss, gradient, Hessian or None, max |η|) in the centred frame of
    ``shift`` (:mod:`fastgen.logistic.centring`; the block is centred on a copy);
    None for an empty block."""
    if X.shape[0] == 0:
        return None
    if shift is not None:
        X = centre(check_X(X, allow_sparse=True), shift)
    codes = np.searchsorted(classes, np.asarray(y))
    return logistic_loss_grad_hess(X, codes, beta, n_classes=classes.shape[0],
                                   fit_intercept=fit_intercept, sample_weight=w,
                                   hessian=hessian)


def add_loss_grad_hess(a, b):
    """The sums of two blocks' (loss, gradient, Hessian or None) and their larger max |η|."""
    H = None if a[2] is None else a[2] + b[2]
    return a[0] + b[0], a[1] + b[1], H, max(a[3], b[3])


class DaskLogisticData:
    """The sample of a Dask fit as a :class:`fastgen.logistic.data.LogisticData`.

    Every call is one Dask reduction of :func:`fastgen.logistic.logistic_loss_grad_hess`
    over the blocks at the point it is given; no per-row quantities come back to the
    client, so Newton-CG (Hessian-vector products) is not offered.
    """

    supports_hessp = False

    def __init__(self, X, y, w, classes, fit_intercept, split_every, shift=None):
        self.X = X
        self.shift = shift
        self.blocks = row_blocks(X, y, w)
        self.classes = classes
        self.n, self.d = X.shape
        self.fit_intercept = fit_intercept
        self.p = self.d + (1 if fit_intercept else 0)
        self.split_every = split_every

    def _reduce(self, beta, hessian):
        beta = np.array(beta, dtype=np.float64)
        parts = map_rows(block_loss_grad_hess, self.X, self.blocks, self.classes, beta,
                         self.fit_intercept, hessian, self.shift)
        return tree_reduce(parts, add_loss_grad_hess, self.split_every).compute()

    def binary(self, beta, hessian, rows):
        loss, g, H, max_abs_eta = self._reduce(beta, hessian)
        return loss, g, H, max_abs_eta, None

    def multinomial(self, B):
        loss, G, _, max_abs_eta = self._reduce(B, False)
        return loss, G, max_abs_eta, None

    def multinomial_hessian(self, B, P):
        return self._reduce(B, True)[2]


@naming_first_nan
def fit_logistic(X, y, *, l2=0.0, fit_intercept=True, sample_weight=None, max_iter=100,
                 tol=1e-8, split_every: int = SPLIT_EVERY) -> LogisticParams:
    r"""Logistic regression by distributed Newton (IRLS) on a Dask array.

    Each Newton iteration maps :func:`fastgen.logistic.logistic_loss_grad_hess` over
    the blocks (one pass over X: loss, gradient :math:`g = \tilde X^\top w(\pi - y)` and
    Hessian :math:`H = \tilde X^\top \operatorname{diag}(w\pi(1-\pi))\tilde X`), sums the
    results in a tree, and on the client adds the penalty, solves
    :math:`(H + l2\,I)\Delta = -g` by Cholesky and backtracks (Armijo) with further
    loss-only passes — the solver of :func:`fastgen.fit_logistic` with its explicit
    Hessian, so results equal the in-memory fit wherever that uses the explicit
    Hessian (binary with p ≤ 2048, multinomial with K·p ≤ 64) and otherwise converge to
    the same optimum.  Multinomial models take a second pass per iteration for the
    (K·p)² Hessian.  Each pass re-reads X: ``X.persist()`` first if it fits in the
    cluster's memory.

    Parameters
    ----------
    X : dask.array.Array (n, d), dense or CSR blocks
    y : dask.array.Array or array-like (n,)
    l2, fit_intercept, sample_weight, max_iter, tol :
        As for :func:`fastgen.fit_logistic`.
    split_every : int, default 8
        Fan-in of the tree reduction.

    Returns
    -------
    LogisticParams

    Warns
    -----
    PerfectSeparationWarning, CollinearityWarning, ConvergenceWarning
        As for :func:`fastgen.fit_logistic`.  The exact separation test runs by passes
        over the blocks (:func:`separation_over_blocks`); the collinearity check uses
        the Hessian at the solution.
    """
    opt = check_fit_options(l2, fit_intercept, max_iter, tol)
    X = as_dask_X(X)
    y = as_dask_vector(y, X, "y")
    w = as_dask_vector(sample_weight, X, "sample_weight")
    classes, counts = classes_and_counts(y, w)
    K = classes.shape[0]
    if K < 2:
        raise ValueError(f"y has {K} class; logistic regression needs at least 2")
    check_class_weights(classes, counts, "logistic")  # as fastgen.fit_logistic
    # one more pass: the centred frame of fastgen.fit_logistic
    shift = shift_over_blocks(X, row_blocks(X, y, w), split_every) \
        if opt.fit_intercept else None
    data = DaskLogisticData(X, y, w, classes, opt.fit_intercept, split_every, shift)
    p = data.p
    if K == 2 and p > BINARY_EXPLICIT_MAX_P:
        raise ValueError(f"fastgen.dask.fit_logistic forms the explicit Hessian: at most "
                         f"{BINARY_EXPLICIT_MAX_P} parameters; got {p}")
    if K > 2 and K * p > MULTINOMIAL_MAX_KP:
        raise ValueError(f"fastgen.dask.fit_logistic forms the explicit (K·p)² Hessian: "
                         f"K·p at most {MULTINOMIAL_MAX_KP}; got {K * p}")
    B0 = prior_start(counts, data.d, opt.fit_intercept)  # as fastgen.fit_logistic starts

    def separation():
        # the exact test, by passes over the blocks (separation_over_blocks)
        return separation_over_blocks(X, y, w, classes, opt.fit_intercept, shift=shift)

    dtype = np.float32 if X.dtype == np.float32 else np.float64
    params = fit_from_data(
        data, ParamsSpec(classes, data.d, opt.fit_intercept, opt.l2, np.float64), B0, opt,
        sum_weights=float(counts.sum()), separation=separation, explicit=True,
        what="fastgen.dask.fit_logistic", confirm_collinearity=False, shift=shift)
    return to_user_params(params, shift, dtype)
