"""Fits and scoring on Dask arrays: exact, out-of-core and distributed.

Every generative fit is a reduction of sufficient statistics and every Newton (IRLS)
iteration a reduction of a loss, a gradient and a Hessian, so a fit over the blocks of
a ``dask.array`` equals the in-memory fit on all rows (to rounding: sums are associated
differently).  Each function here

1. reads the labels once (cheap: y and the weights only) to fix the global sorted label
   set, so that every block codes its labels identically and a block that misses some
   classes still contributes correctly;
2. computes per-block statistics with fastgen's public model-layer functions
   (:func:`fastgen.class_moments`, :func:`fastgen.nb_counts`,
   :func:`fastgen.logistic.logistic_loss_grad_hess`) as Dask tasks;
3. combines them with a tree reduction (fan-in ``split_every``) of exact merges
   (:func:`fastgen.merge_moments`: W = Wa + Wb, δ = μb − μa, μ = μa + δ·Wb/W,
   M2 = M2a + M2b + δδᵀ·Wa·Wb/W; counts, gradients and Hessians add);
4. turns the merged statistics into params on the client.

Memory on the workers is a few blocks of X at a time; on the client O(K·d²) at most.
Any Dask scheduler works: the threaded default, ``processes``, or a
``dask.distributed`` cluster (workers load the compiled kernels from numba's on-disk
cache).  Progress bars: ``with dask.diagnostics.ProgressBar(): fit_gda(X, y)`` on the
local schedulers, ``distributed.progress`` on a cluster.

X must be a 2-D ``dask.array`` whose blocks are numpy arrays (or, for the naive Bayes
count models and logistic regression, scipy CSR matrices); column chunks are merged
into one.  y (and ``sample_weight``) may be Dask or numpy arrays; they are re-chunked
to X's row chunks.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "fastgen.dask needs Dask: pip install 'fastgen[dask]' (dask[array], distributed)"
    ) from exc

from . import scoring as _scoring
from ._validation import check_feature_names
from .gda import SCATTER_FOR, GDAParams, check_gda_options, gda_from_moments
from .logistic import LogisticParams, logistic_loss_grad_hess
from .logistic.api import (
    ParamsSpec,
    check_collinearity,
    check_fit_options,
    params_from_result,
    prior_start,
)
from .logistic import diagnostics as _diag
from .logistic.newton import newton_solve
from .logistic.objectives import BINARY_EXPLICIT_MAX_P, make_objective
from .moments import class_moments, merge_moments
from .streaming import merge_counts, nb_counts, nb_from_counts

__all__ = [
    "fit_gda",
    "fit_gaussian_nb",
    "fit_multinomial_nb",
    "fit_bernoulli_nb",
    "fit_logistic",
    "joint_log_likelihood",
    "predict_log_proba",
    "predict_proba",
    "predict",
    "MULTINOMIAL_MAX_KP",
    "from_npy",
]

#: Multinomial logistic regression on Dask forms the explicit (K·p)² Hessian on the
#: workers and solves it on the client; above this K·p that would exceed 128 MB.
MULTINOMIAL_MAX_KP = 4096

_SPLIT_EVERY = 8


# --------------------------------------------------------------------------- inputs


def as_dask_X(X):
    if not isinstance(X, da.Array):
        raise ValueError(f"X must be a dask.array.Array; got {type(X).__name__} "
                         f"(use fastgen.fit_* for in-memory data)")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got {X.ndim}-D")
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def as_dask_vector(v, X, name):
    """v as a 1-D Dask array with X's row chunks (None stays None)."""
    if v is None:
        return None
    if not isinstance(v, da.Array):
        v = np.asarray(v)
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-D (n_samples,); got shape {v.shape}")
        if v.shape[0] != X.shape[0]:
            raise ValueError(f"{name} has {v.shape[0]} entries but X has {X.shape[0]} rows; "
                             f"they must match")
        return da.from_array(v, chunks=(X.chunks[0],))
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,); got {v.ndim}-D")
    if v.shape[0] != X.shape[0]:
        raise ValueError(f"{name} has {v.shape[0]} entries but X has {X.shape[0]} rows; "
                         f"they must match")
    if v.chunks[0] != X.chunks[0]:
        v = v.rechunk((X.chunks[0],))
    return v


def row_blocks(X, y, w):
    """Delayed (X block, y block, w block or None) triples, one per row block."""
    xs = X.to_delayed().ravel()
    ys = y.to_delayed().ravel()
    ws = w.to_delayed().ravel() if w is not None else [None] * len(xs)
    return list(zip(xs, ys, ws, strict=True))


def row_starts(X):
    """The first row of each of X's row blocks, in X's rows."""
    return [int(r) for r in np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]])]


_ROW = re.compile(r"\brow (\d+)")


def in_rows(start, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on the row block that starts at row ``start`` of X: a
    ValueError naming a row of the block (validation's "X contains NaN at row 3,
    column 1") is raised again naming that row of X (row 103)."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        msg = str(exc)
        shifted = _ROW.sub(lambda m: f"row {int(m.group(1)) + start}", msg)
        if start == 0 or shifted == msg:
            raise
        try:
            new = type(exc)(shifted)
        except Exception:  # an exception type with its own constructor arguments
            new = ValueError(shifted)
        raise new from None


def _map_rows(fn, X, blocks, *args):
    """Delayed ``in_rows(start, fn, xb, yb, wb, *args)``, one per row block of X."""
    f = dask.delayed(in_rows, pure=True)
    return [f(start, fn, xb, yb, wb, *args)
            for start, (xb, yb, wb) in zip(row_starts(X), blocks, strict=True)]


def _label_stats(y, w):
    """Per block: its sorted labels and their (weighted) counts."""
    from ._validation import check_y

    if np.asarray(y).shape[0]:
        check_y(y)  # a missing label is named at its row here, not among the labels
    labels, inverse = np.unique(np.asarray(y), return_inverse=True)
    wts = None if w is None else np.asarray(w, dtype=np.float64)
    return labels, np.bincount(inverse.reshape(-1), weights=wts, minlength=labels.shape[0])


def _merge_label_stats(parts):
    parts = [p for p in parts if p[0].shape[0]]
    labels = parts[0][0]
    for p in parts[1:]:
        labels = np.union1d(labels, p[0])
    counts = np.zeros(labels.shape[0])
    for lab, cnt in parts:
        counts[np.searchsorted(labels, lab)] += cnt
    return labels, counts


def _merge_all(merge, parts):
    """Merge a list of partial statistics in order, skipping empty blocks (None)."""
    acc = None
    for p in parts:
        if p is not None:
            acc = p if acc is None else merge(acc, p)
    return acc


def _tree_reduce(parts, merge, split_every=_SPLIT_EVERY):
    """Delayed tree reduction of ``parts`` with fan-in ``split_every``."""
    combine = dask.delayed(_merge_all, pure=True)
    parts = list(parts)
    while len(parts) > 1:
        parts = [combine(merge, parts[i:i + split_every])
                 for i in range(0, len(parts), split_every)]
    return parts[0]


def _classes_and_counts(y, w):
    """Global sorted labels and weighted class counts: one pass over y (and w)."""
    from ._validation import check_y

    starts = np.concatenate([[0], np.cumsum(y.chunks[0])[:-1]])
    f = dask.delayed(in_rows, pure=True)
    parts = [f(int(start), _label_stats, yb, wb)
             for start, yb, wb in zip(starts, y.to_delayed().ravel(),
                                      w.to_delayed().ravel() if w is not None
                                      else [None] * y.numblocks[0], strict=True)]
    labels, counts = _tree_reduce(parts, _merge_label_pair).compute()
    classes, _ = check_y(labels)  # the same validation and label types as in memory
    return classes, counts


def _merge_label_pair(a, b):
    return _merge_label_stats([a, b])


# --------------------------------------------------------------------------- files


class _NpyFile:
    """A 2-D C-order ``.npy`` file as an array-like whose ``__getitem__`` reads rows
    into a fresh buffer with ``pread`` (nothing stays mapped; picklable by path)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            major, _ = np.lib.format.read_magic(f)
            read = (np.lib.format.read_array_header_1_0 if major == 1
                    else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read(f)
            self.offset = f.tell()
        if fortran or len(shape) != 2 or dtype.hasobject:
            raise ValueError(f"{path} must hold a 2-D C-order numeric array")
        self.path, self.shape, self.dtype, self.ndim = str(path), shape, dtype, 2

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        start, stop, step = key[0].indices(self.shape[0])
        out = np.empty((max(0, stop - start), self.shape[1]), dtype=self.dtype)
        rowbytes = self.shape[1] * self.dtype.itemsize
        with open(self.path, "rb", buffering=0) as f:
            f.seek(self.offset + start * rowbytes)
            view, got = memoryview(out).cast("B"), 0
            while got < view.nbytes:
                k = f.readinto(view[got:])
                if not k:
                    raise ValueError(f"{self.path} is shorter than its header says")
                got += k
        if step != 1:
            out = out[::step]
        return out[(slice(None),) + key[1:]] if len(key) > 1 else out


def from_npy(path, chunk_rows: int):
    """A Dask array over a 2-D ``.npy`` file, read chunk by chunk from disk.

    Each task reads its ``chunk_rows`` rows into a fresh buffer, so memory holds only
    the chunks being processed.  (``da.from_array(np.load(path, mmap_mode="r"))``
    copies the whole memmap into memory in recent Dask versions, and the pages of a
    memmap count towards the process's RSS while mapped.)

    Parameters
    ----------
    path : str or path-like
        The file, as written by ``np.save`` or ``np.lib.format.open_memmap``.
    chunk_rows : int
        Rows per block (all columns in one block).

    Returns
    -------
    dask.array.Array
    """
    f = _NpyFile(path)
    return da.from_array(f, chunks=(int(chunk_rows), f.shape[1]), asarray=True, lock=False,
                         name=f"from_npy-{dask.base.tokenize(f.path, f.shape, f.dtype.str)}")


# --------------------------------------------------------------------------- GDA


def _block_moments(X, y, w, kind):
    if X.shape[0] == 0:
        return None
    return class_moments(X, y, kind=kind, sample_weight=w)


def fit_gda(X, y, covariance: str = "pooled", *, priors=None, sample_weight=None,
            reg: float = 0.0, shrinkage=None, unbiased: bool = False,
            var_smoothing: float = 1e-9, tol: float = 1e-4,
            split_every: int = _SPLIT_EVERY) -> GDAParams:
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
    kind = SCATTER_FOR[covariance]
    parts = _map_rows(_block_moments, X, row_blocks(X, y, w), kind)
    m = _tree_reduce(parts, merge_moments, split_every).compute()
    if m is None:
        raise ValueError("X has no rows")
    return gda_from_moments(m, covariance, priors=priors, reg=reg, shrinkage=shrinkage,
                            unbiased=unbiased, var_smoothing=var_smoothing, tol=tol)


# --------------------------------------------------------------------------- naive Bayes


def _block_counts(X, y, w, model, binarize, classes):
    if X.shape[0] == 0:
        return None
    return nb_counts(X, y, model, sample_weight=w, binarize=binarize, classes=classes)


def _fit_nb(X, y, sample_weight, model, binarize, split_every, options):
    X = as_dask_X(X)
    y = as_dask_vector(y, X, "y")
    w = as_dask_vector(sample_weight, X, "sample_weight")
    classes, _ = _classes_and_counts(y, w)
    parts = _map_rows(_block_counts, X, row_blocks(X, y, w), model, binarize, classes)
    c = _tree_reduce(parts, merge_counts, split_every).compute()
    return nb_from_counts(c, **options)


def fit_gaussian_nb(X, y, *, priors=None, var_smoothing=1e-9, sample_weight=None,
                    split_every: int = _SPLIT_EVERY):
    """Gaussian naive Bayes on a Dask array, equal to :func:`fastgen.fit_gaussian_nb`.

    Per block: diagonal class moments (N_k, μ_kj, S_kj) and, with weights, the
    unweighted moments of all rows; merged exactly in a tree; then on the client
    σ²_kj = S_kj / N_k + ε, ε = var_smoothing · max_j Var(x_j) over all rows.
    """
    return _fit_nb(X, y, sample_weight, "gaussian", None, split_every,
                   {"priors": priors, "var_smoothing": var_smoothing})


def fit_multinomial_nb(X, y, *, alpha=1.0, fit_prior=True, class_prior=None,
                       sample_weight=None, split_every: int = _SPLIT_EVERY):
    """Multinomial naive Bayes on a Dask array (dense or CSR blocks).

    Per block N_k and N_kj = Σ_{i: y_i=k} w_i x_ij, summed in a tree; then
    log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d) on the client.  Equals
    :func:`fastgen.fit_multinomial_nb`.
    """
    return _fit_nb(X, y, sample_weight, "multinomial", None, split_every,
                   {"alpha": alpha, "fit_prior": fit_prior, "class_prior": class_prior})


def fit_bernoulli_nb(X, y, *, alpha=1.0, binarize=0.0, fit_prior=True, class_prior=None,
                     sample_weight=None, split_every: int = _SPLIT_EVERY):
    """Bernoulli naive Bayes on a Dask array (dense or CSR blocks).

    Per block N_k and F_kj = Σ_{i: y_i=k} w_i [x_ij > binarize], summed in a tree; then
    p_kj = (F_kj + α) / (N_k + 2α) on the client.  Equals :func:`fastgen.fit_bernoulli_nb`.
    """
    return _fit_nb(X, y, sample_weight, "bernoulli", binarize, split_every,
                   {"alpha": alpha, "fit_prior": fit_prior, "class_prior": class_prior})


# --------------------------------------------------------------------------- logistic


def _block_lgh(X, y, w, classes, beta, fit_intercept, hessian):
    if X.shape[0] == 0:
        return None
    codes = np.searchsorted(classes, np.asarray(y))
    return logistic_loss_grad_hess(X, codes, beta, n_classes=classes.shape[0],
                                   fit_intercept=fit_intercept, sample_weight=w,
                                   hessian=hessian)


def _add_lgh(a, b):
    H = None if a[2] is None else a[2] + b[2]
    return a[0] + b[0], a[1] + b[1], H, max(a[3], b[3])


class _DaskLogisticData:
    """The sample of a Dask fit as a :class:`fastgen.logistic.data.LogisticData`.

    Every call is one Dask reduction of :func:`fastgen.logistic.logistic_loss_grad_hess`
    over the blocks at the point it is given; no per-row quantities come back to the
    client, so Newton-CG (Hessian-vector products) is not offered.
    """

    supports_hessp = False

    def __init__(self, X, y, w, classes, fit_intercept, split_every):
        self.X = X
        self.blocks = row_blocks(X, y, w)
        self.classes = classes
        self.d = X.shape[1]
        self.fit_intercept = fit_intercept
        self.p = self.d + (1 if fit_intercept else 0)
        self.split_every = split_every

    def _reduce(self, beta, hessian):
        beta = np.array(beta, dtype=np.float64)
        parts = _map_rows(_block_lgh, self.X, self.blocks, self.classes, beta,
                          self.fit_intercept, hessian)
        return _tree_reduce(parts, _add_lgh, self.split_every).compute()

    def binary(self, beta, hessian, rows):
        loss, g, H, emax = self._reduce(beta, hessian)
        return loss, g, H, emax, None

    def multinomial(self, B):
        loss, G, _, emax = self._reduce(B, False)
        return loss, G, emax, None

    def multinomial_hessian(self, B, P):
        return self._reduce(B, True)[2]


# --------------------------------------------------------------------------- separation

#: Constraint generation for the separation LP: each round adds at most this many of a
#: block's most violated constraint rows (times K − 1 classes), and a row counts as
#: violated below −``_VIOLATION`` (HiGHS's own feasibility tolerance is 1e-7).
_ROWS_PER_BLOCK = 256
_VIOLATION = 1e-7
_MAX_ROUNDS = 100


def _block_design(xb, yb, wb, classes, fit_intercept):
    """A block's validated design rows of positive weight (CSR, unscaled) and codes."""
    from ._validation import check_sample_weight, check_X

    X = check_X(xb, allow_sparse=True, min_samples=0)
    yb = np.asarray(yb)
    codes = np.searchsorted(classes, yb)
    if np.any(codes >= classes.shape[0]) or np.any(
            classes[np.minimum(codes, classes.shape[0] - 1)] != yb):
        raise ValueError(f"y has labels outside the classes {classes.tolist()}")
    w = check_sample_weight(wb, X.shape[0])
    keep = np.flatnonzero(w > 0) if w.shape[0] else np.arange(X.shape[0])
    A, _ = _diag.separation_design(X, fit_intercept, keep, np.ones(X.shape[1] + fit_intercept))
    return A, codes[keep].astype(np.int64), keep


def _block_objective(xb, yb, wb, classes, fit_intercept):
    """A block's column max |x̃| and its constraint rows' column sums (unscaled)."""
    A, codes, _ = _block_design(xb, yb, wb, classes, fit_intercept)
    G, _ = _diag.constraint_rows(A, codes, classes.shape[0])
    return _diag.column_abs_max(A), np.asarray(G.sum(axis=0)).ravel()


def _block_violations(start, xb, yb, wb, classes, fit_intercept, scale, x, margin):
    """The block's constraint rows (scaled) most violated by x (``G x[:q] − t < 0``,
    t = x[q] when ``margin``), at most ``_ROWS_PER_BLOCK·(K−1)``, with their ids."""
    A, codes, keep = _block_design(xb, yb, wb, classes, fit_intercept)
    K = classes.shape[0]
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1.0), 0.0)
    A = (A @ _sparse_diag(inv)).tocsr()
    G, ids = _diag.constraint_rows(A, codes, K)
    q = G.shape[1]
    v = G @ x[:q] - (x[q] if margin else 0.0)
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
                           feature_names=None):
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
    parts = dask.compute(*_map_rows(_block_objective, X, blocks, classes, fit_intercept))
    scale = np.max([pt[0] for pt in parts], axis=0)
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1.0), 0.0)
    c = np.sum([pt[1] for pt in parts], axis=0) * np.tile(inv, K - 1)
    live = np.tile(scale > 0, K - 1)
    q = c.shape[0]
    rows = sp.csr_matrix((0, q))
    seen = set()
    starts = row_starts(X)

    def generate(solve, margin):
        nonlocal rows
        for _ in range(_MAX_ROUNDS):
            x = solve(rows)
            got = dask.compute(*[
                dask.delayed(in_rows, pure=True)(
                    start, _block_violations, start, xb, yb, wb, classes, fit_intercept,
                    scale, x, margin)
                for start, (xb, yb, wb) in zip(starts, blocks, strict=True)])
            new = [(Gb[i], gid) for Gb, ids in got for i, gid in enumerate(ids)
                   if gid not in seen]
            if not new:
                return x
            seen.update(gid for _, gid in new)
            rows = sp.vstack([rows] + [g for g, _ in new], format="csr")
        return None

    opt = None

    def first(G):
        nonlocal opt
        opt, x = _diag.separation_lp(G, c, live)
        return x

    x = generate(first, False)
    if x is None:
        return None
    complete = False
    if opt > _diag.SEPARATION_TOL:
        xt = generate(lambda G: _diag.margin_lp(G, live)[1], True)
        complete = xt is not None and xt[q] > _diag.SEPARATION_TOL
    return _diag.separation_result(opt, x, complete, classes, X.shape[1], fit_intercept,
                                   feature_names)


def fit_logistic(X, y, *, l2=0.0, fit_intercept=True, sample_weight=None, max_iter=100,
                 tol=1e-8, split_every: int = _SPLIT_EVERY) -> LogisticParams:
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
    classes, counts = _classes_and_counts(y, w)
    K = classes.shape[0]
    if K < 2:
        raise ValueError(f"y has {K} class; logistic regression needs at least 2")
    data = _DaskLogisticData(X, y, w, classes, opt.fit_intercept, split_every)
    p = data.p
    if K == 2 and p > BINARY_EXPLICIT_MAX_P:
        raise ValueError(f"fastgen.dask.fit_logistic forms the explicit Hessian: at most "
                         f"{BINARY_EXPLICIT_MAX_P} parameters; got {p}")
    if K > 2 and K * p > MULTINOMIAL_MAX_KP:
        raise ValueError(f"fastgen.dask.fit_logistic forms the explicit (K·p)² Hessian: "
                         f"K·p at most {MULTINOMIAL_MAX_KP}; got {K * p}")
    B0 = prior_start(counts, data.d, opt.fit_intercept)  # as fastgen.fit_logistic starts
    obj = make_objective(data, opt.l2, K, explicit=True)

    def separation():
        # the exact test, by passes over the blocks (separation_over_blocks)
        return separation_over_blocks(X, y, w, classes, opt.fit_intercept)

    result = newton_solve(obj, B0[0] if K == 2 else B0, max_iter=opt.max_iter, tol=opt.tol,
                          sum_weights=float(counts.sum()), l2=opt.l2, separation=separation,
                          what="fastgen.dask.fit_logistic")
    if result.cause != "separation":
        check_collinearity(obj, data, opt.l2, what="fastgen.dask.fit_logistic",
                           confirm=False)
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    return params_from_result(
        result, obj, ParamsSpec(classes, data.d, opt.fit_intercept, opt.l2, dtype))


# --------------------------------------------------------------------------- scoring


def _score_block(X, params, fn, block_info=None):
    start = block_info[0]["array-location"][0][0] if block_info else 0
    return in_rows(start, fn, params, X)


def _check_params_X(params, X):
    """X as a Dask array of the params' width, and the params its blocks are scored
    with: a Dask array has no column names, so params fitted with names warn once here
    (as :func:`fastgen.predict` does for an array) and the blocks go without them."""
    X = as_dask_X(X)
    if X.shape[1] != params.n_features_in:
        raise ValueError(f"X has {X.shape[1]} features but the params were fitted with "
                         f"{params.n_features_in}")
    if getattr(params, "feature_names", None) is not None:
        check_feature_names(params.feature_names, None, type(params).__name__)
        params = dataclasses.replace(params, feature_names=None)
    return X, params


def _map_scores(params, X, fn):
    X, params = _check_params_X(params, X)
    K = params.classes.shape[0]
    dt = np.dtype(params.dtype)
    return X.map_blocks(_score_block, params, fn, dtype=dt, chunks=(X.chunks[0], (K,)),
                        meta=np.empty((0, 0), dtype=dt))


# The four scoring functions mirror fastgen.scoring's (and fastgen.cuda's) by name, kept
# separate on purpose: each is a public function of this module; the work is _map_scores.
def joint_log_likelihood(params, X):
    """log p(x, y=k) of every row of a Dask array, as a Dask array (n, K), block by block
    (:func:`dask.array.map_blocks` of :func:`fastgen.joint_log_likelihood`)."""
    return _map_scores(params, X, _scoring.joint_log_likelihood)


def predict_log_proba(params, X):
    """log p(y=k | x) of every row of a Dask array, as a lazy Dask array (n, K)."""
    return _map_scores(params, X, _scoring.predict_log_proba)


def predict_proba(params, X):
    """p(y=k | x) of every row of a Dask array, as a lazy Dask array (n, K)."""
    return _map_scores(params, X, _scoring.predict_proba)


def predict(params, X):
    """The most probable label of every row of a Dask array, as a lazy Dask array (n,)."""
    X, params = _check_params_X(params, X)
    dt = params.classes.dtype
    return X.map_blocks(_score_block, params, _scoring.predict, dtype=dt, drop_axis=1,
                        chunks=(X.chunks[0],), meta=np.empty((0,), dtype=dt))
