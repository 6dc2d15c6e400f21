""":func:`fastgen.detect_separation`'s exact test on a Dask array, by passes over its row
blocks (constraint generation on the same linear programme)."""

from __future__ import annotations

import dask
import numpy as np

from .._validation import check_sample_weight, check_X
from ..logistic import diagnostics
from ..logistic.centring import centre
from .blocks import (
    as_dask_vector,
    as_dask_X,
    in_rows,
    map_rows,
    row_blocks,
    row_starts,
    shift_over_blocks,
)

__all__ = ["separation_over_blocks"]


#: Constraint generation for the separation LP: each round adds at most this many of a
#: block's most violated constraint rows (times K − 1 classes), and a row counts as
#: violated below −``_VIOLATION`` (HiGHS's own feasibility tolerance is 1e-7).
_ROWS_PER_BLOCK = 256
_VIOLATION = 1e-7
_MAX_ROUNDS = 100


def _block_design(xb, yb, wb, classes, fit_intercept, shift=None):
    """A block's validated design rows of positive weight (CSR, unscaled) and codes, in
    the centred frame of ``shift`` (:mod:`fastgen.logistic.centring`)."""
    X = check_X(xb, allow_sparse=True, min_samples=0)
    if shift is not None and X.shape[0]:
        X = centre(X, shift)
    yb = np.asarray(yb)
    codes = np.searchsorted(classes, yb)
    if np.any(codes >= classes.shape[0]) or np.any(
            classes[np.minimum(codes, classes.shape[0] - 1)] != yb):
        raise ValueError(f"y has labels outside the classes {classes.tolist()}")
    w = check_sample_weight(wb, X.shape[0])
    keep = np.flatnonzero(w > 0) if w.shape[0] else np.arange(X.shape[0])
    A, _ = diagnostics.separation_design(X, fit_intercept, keep,
                                         np.ones(X.shape[1] + fit_intercept))
    return A, codes[keep].astype(np.int64), keep


def _block_objective(xb, yb, wb, classes, fit_intercept, shift):
    """A block's column max |x̃| and its constraint rows' column sums (unscaled)."""
    A, codes, _ = _block_design(xb, yb, wb, classes, fit_intercept, shift)
    G, _ = diagnostics.constraint_rows(A, codes, classes.shape[0])
    return diagnostics.column_abs_max(A), np.asarray(G.sum(axis=0)).ravel()


def _block_violations(start, xb, yb, wb, classes, fit_intercept, scale, x, margin,
                      shift, exact=False):
    """The block's constraint rows (scaled) most violated by x (``G x[:q] − t < 0``,
    t = x[q] when ``margin``), at most ``_ROWS_PER_BLOCK·(K−1)``, with their ids.
    ``exact``: violated beyond float64's rounding, not HiGHS' tolerance (the test of
    :func:`fastgen.logistic.diagnostics.exact_direction`)."""
    A, codes, keep = _block_design(xb, yb, wb, classes, fit_intercept, shift)
    K = classes.shape[0]
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1.0), 0.0)
    A = (A @ _sparse_diag(inv)).tocsr()
    G, ids = diagnostics.constraint_rows(A, codes, K)
    q = G.shape[1]
    v = G @ x[:q] - (x[q] if margin else 0.0)
    if exact:
        slack = 8.0 * (q + 1) * np.finfo(np.float64).eps * (abs(G) @ np.abs(x[:q]))
        bad = np.flatnonzero(v < -slack)
    else:
        bad = np.flatnonzero(v < -_VIOLATION)
    bad = bad[np.argsort(v[bad], kind="stable")[:_ROWS_PER_BLOCK * (K - 1)]]
    # ids in X's rows: the block's kept row i is X's row start + keep[i]
    rows, k = np.divmod(ids[bad], K) if K > 2 else (ids[bad], np.zeros(bad.size, int))
    gid = (start + keep[rows]) * K + k
    return G[bad], gid


def _sparse_diag(v):
    import scipy.sparse as sp

    return sp.diags(v)


def separation_over_blocks(X, y, sample_weight, classes, fit_intercept=True,
                           feature_names=None, shift=None):
    r""":func:`fastgen.detect_separation`'s exact test on a Dask array, by passes over its
    row blocks: the same linear programme on the same column-equilibrated design, and
    the same decision (optimum above ``SEPARATION_TOL``).

    One pass gives every column's max |x̃| (the equilibration) and the objective, the
    column sums of the constraint rows.  The programme is then solved by constraint
    generation: solve it on the rows gathered so far (none at first: the box alone),
    make a pass that returns each block's most violated constraint rows at that
    solution, add them, and repeat until no row is violated (by more than HiGHS's
    feasibility tolerance); the last solution is then the optimum over all rows.  The
    complete-separation programme follows the same way from the rows gathered.  Memory
    on the client: the gathered rows, a few hundred per block and round at most.

    Parameters
    ----------
    X : dask.array.Array (n, d), dense or CSR blocks
    y, sample_weight : dask or numpy arrays (n,), or None for the weights
    classes : ndarray
        The sorted labels.
    fit_intercept : bool
    feature_names : sequence of str, optional
    shift : ndarray (d,), optional
        The centred frame's shift (:func:`shift_over_blocks`), as the in-memory test
        takes it; computed by one more pass when None (with an intercept).

    Returns
    -------
    SeparationResult or None
        None when constraint generation did not finish in ``_MAX_ROUNDS`` rounds.
    """
    import scipy.sparse as sp

    X = as_dask_X(X)
    yd = as_dask_vector(y, X, "y")
    wd = as_dask_vector(sample_weight, X, "sample_weight")
    blocks = row_blocks(X, yd, wd)
    K = classes.shape[0]
    if shift is None and fit_intercept:
        shift = shift_over_blocks(X, blocks)
    parts = dask.compute(*map_rows(_block_objective, X, blocks, classes, fit_intercept,
                                   shift))
    scale = np.max([pt[0] for pt in parts], axis=0)
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1.0), 0.0)
    c = np.sum([pt[1] for pt in parts], axis=0) * np.tile(inv, K - 1)
    live = np.tile(scale > 0, K - 1)
    q = c.shape[0]
    rows = sp.csr_matrix((0, q))
    seen = set()
    starts = row_starts(X)

    def violated(x, margin, exact=False):
        """Add the rows x violates that are not gathered yet; whether there were any."""
        nonlocal rows
        got = dask.compute(*[
            dask.delayed(in_rows, pure=True)(
                start, _block_violations, start, xb, yb, wb, classes, fit_intercept,
                scale, x, margin, shift, exact)
            for start, (xb, yb, wb) in zip(starts, blocks, strict=True)])
        new = [(Gb[i], gid) for Gb, ids in got for i, gid in enumerate(ids)
               if gid not in seen]
        seen.update(gid for _, gid in new)
        if new:
            rows = sp.vstack([rows] + [g for g, _ in new], format="csr")
        return bool(new) or (exact and any(ids.size for _, ids in got))

    def generate(solve, margin):
        for _ in range(_MAX_ROUNDS):
            x = solve(rows)
            if not violated(x, margin):
                return x
        return None

    def exact(x):
        """The direction once it separates every row exactly (the in-memory test's
        :func:`~fastgen.logistic.diagnostics.exact_direction` on the rows gathered,
        checked by a pass), or None: overlapping classes are not called separated."""
        for _ in range(_MAX_ROUNDS):
            if not violated(x, False, True):
                return x
            x = diagnostics.exact_direction(rows, x[:q])
            if x is None:
                return None
        return None

    opt = None

    def first(G):
        nonlocal opt
        opt, x = diagnostics.separation_lp(G, c, live)
        return x

    x = generate(first, False)
    if x is None:
        return None
    if opt > diagnostics.SEPARATION_TOL:
        x = exact(x)
        opt = 0.0 if x is None else float(c @ x[:q])
        x = np.zeros(q) if x is None else x
    complete = False
    if opt > diagnostics.SEPARATION_TOL:
        xt = generate(lambda G: diagnostics.margin_lp(G, live)[1], True)
        complete = xt is not None and xt[q] > diagnostics.SEPARATION_TOL
    if opt > diagnostics.SEPARATION_TOL:
        x = diagnostics.direction_in_user_frame(x[:q], scale, shift, X.shape[1], K)
    return diagnostics.separation_result(opt, x, complete, classes, X.shape[1],
                                         fit_intercept, feature_names)
