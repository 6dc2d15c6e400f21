"""Exact checks of what the unpenalised maximum-likelihood estimate needs from the data:
no separation (:func:`detect_separation`) and a design of full column rank
(:func:`collinear_columns`).

Separation (Albert & Anderson 1984).  With X̃ = [X, 1] (the column of ones with an
intercept) and the reference-class form (β_0 = 0), the log-likelihood is bounded above
by 0 and is non-decreasing along a direction D = (d_1, …, d_{K−1}) exactly when

    (d_{y_i} − d_k)ᵀ x̃_i ≥ 0   for every row i and every class k ≠ y_i      (d_0 = 0),

for two classes ``(2y_i − 1)·dᵀx̃_i ≥ 0``.  If some such D makes one inequality strict,
the likelihood keeps rising along D and the estimate does not exist: the data are
*separated* (completely when every inequality can be strict at once, quasi-completely
otherwise).  If every such D makes all of them equalities, D is a flat direction
(collinear columns) and the estimate exists.  Konis (2007, as R's ``detectseparation``
uses it) decides this with one linear programme over the box −1 ≤ D ≤ 1::

    maximise Σ_{i,k} (d_{y_i} − d_k)ᵀ x̃_i   subject to every term ≥ 0.

D = 0 is feasible with value 0; the optimum is positive exactly when the data are
separated, and the coordinates of D that are non-zero there are the coefficients that
run to infinity, in the direction of their sign.  A second programme, maximise t subject
to every term ≥ t (0 ≤ t ≤ 1), tells complete (t* > 0) from quasi-complete separation.

Collinearity lives in :mod:`.collinearity` (its names are importable from here too).

Imports: ``fastgen._validation``, ``feature_labels``, ``collinearity`` and scipy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_sample_weight, check_X, check_y, is_sparse
from .collinearity import (
    COLLINEAR_TOL,
    ILL_CONDITIONED,
    Collinearity,
    collinear_columns,
    collinearity_from_gram,
    collinearity_in_order,
)
from .feature_labels import checked_feature_names, default_feature_names, design_column_label

__all__ = ["SeparationResult", "detect_separation", "Collinearity", "collinear_columns",
           "collinearity_from_gram", "collinearity_in_order", "default_feature_names",
           "separation_advice", "unconverged_message",
           "COLLINEAR_TOL", "ILL_CONDITIONED"]

#: On the column-equilibrated data (every column scaled to max|x| = 1) and D in the
#: unit box, an LP optimum above this means separation.  HiGHS' feasibility tolerance is
#: 1e-7 per row; a non-separated problem returns 0 to within ~1e-9 in the tests.
SEPARATION_TOL = 1e-6

#: A coordinate of the optimal D beyond this (in the unit box) is an infinite coefficient.
DIRECTION_TOL = 1e-6

# --------------------------------------------------------------------------- separation


@dataclass(frozen=True)
class SeparationResult:
    """The outcome of :func:`detect_separation`.

    Attributes
    ----------
    separated : bool
        The unpenalised maximum-likelihood estimate does not exist.
    complete : bool
        Complete separation: some coefficients classify every row strictly correctly.
        ``separated and not complete`` is quasi-complete separation.
    classes : ndarray (K,)
    coef_direction : ndarray (K', d) of int8
        +1 / −1 where the coefficient runs to +∞ / −∞ along the separating direction
        found, 0 where it stays finite; laid out as ``LogisticParams.coef`` of an
        unpenalised fit (K' = 1 for two classes; otherwise K rows against the reference
        class ``classes[0]``, whose row is 0).
    intercept_direction : ndarray (K',) of int8
        The same for the intercepts (0 without an intercept).
    feature_names : tuple of str or None
    optimum : float
        The LP optimum on the column-equilibrated data (0 when not separated).
    """

    separated: bool
    complete: bool
    classes: np.ndarray
    coef_direction: np.ndarray
    intercept_direction: np.ndarray
    feature_names: tuple | None
    optimum: float

    @property
    def kind(self) -> str:
        """"complete", "quasi-complete" or "none"."""
        if not self.separated:
            return "none"
        return "complete" if self.complete else "quasi-complete"

    def infinite_coefficients(self) -> list:
        """Names of the infinite coefficients with their direction, e.g. ``"+x1"`` or
        ``"-intercept"`` (``"+x1[class 2]"`` for more than two classes)."""
        out = []
        kk, d = self.coef_direction.shape
        names = self.feature_names
        for k in range(kk):
            lab = self.classes[k]
            lab = lab.item() if hasattr(lab, "item") else lab
            suffix = "" if kk == 1 else f"[class {lab!r}]"
            row = list(self.coef_direction[k]) + [self.intercept_direction[k]]
            for j, s in enumerate(row):
                if s:
                    out.append(("+" if s > 0 else "-") + design_column_label(names, j, d)
                               + suffix)
        return out

    def __bool__(self):
        return self.separated


def separation_design(X, fit_intercept, keep, scale=None):
    """X̃ = [X, 1] on the rows ``keep`` (None: all) as CSR with its columns divided by
    their max |x̃| (or by ``scale``, where the scales are taken over more rows than
    these: zero scales leave a column at zero), and the scales."""
    import scipy.sparse as sp

    if is_sparse(X):
        A = sp.csr_matrix(X, dtype=np.float64)
    else:
        A = sp.csr_matrix(np.asarray(X, dtype=np.float64))
    if keep is not None:
        A = A[keep]
    if fit_intercept:
        A = sp.hstack([A, np.ones((A.shape[0], 1))], format="csr")
    A.eliminate_zeros()
    if scale is None:
        scale = column_abs_max(A)
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1.0), 0.0)
    A = (A @ sp.diags(inv)).tocsr()
    return A, scale


def column_abs_max(A):
    """max |a_ij| of each column of a CSR matrix (0 for an empty column)."""
    scale = np.zeros(A.shape[1])
    if A.nnz:
        np.maximum.at(scale, A.indices, np.abs(A.data))
    return scale


def constraint_rows(A, codes, K):
    """The separation LP's constraint rows (d_{y_i} − d_k)ᵀ x̃_i, k ≠ y_i (CSR, over
    D = (d_1..d_{K−1})) of the design rows A, and an id per constraint, ``i·K + k``
    (``i`` for two classes): :func:`fastgen.dask.separation_over_blocks` builds the
    LP of :func:`detect_separation` from these, block by block."""
    G = _constraints(A, codes, K)
    n = A.shape[0]
    if K == 2:
        return G, np.arange(n, dtype=np.int64)
    ids = [np.flatnonzero(codes != k).astype(np.int64) * K + k for k in range(K)]
    return G, np.concatenate(ids)


def _constraints(A, codes, K):
    """The rows (d_{y_i} − d_k)ᵀ x̃_i, k ≠ y_i, as a CSR matrix over D = (d_1..d_{K−1})."""
    import scipy.sparse as sp

    n, p = A.shape
    if K == 2:
        sign = np.where(codes == 1, 1.0, -1.0)
        return (sp.diags(sign) @ A).tocsr()
    coo = A.tocoo()
    blocks = []
    for k in range(K):
        rows = np.flatnonzero(codes != k)
        pos = np.full(n, -1)
        pos[rows] = np.arange(rows.size)
        m = pos[coo.row] >= 0
        r, c, v = pos[coo.row[m]], coo.col[m], coo.data[m]
        cls = codes[coo.row[m]]
        parts_r, parts_c, parts_v = [], [], []
        own = cls != 0  # +x̃_i in the block of the row's own class
        parts_r.append(r[own]), parts_c.append(c[own] + (cls[own] - 1) * p)
        parts_v.append(v[own])
        if k != 0:  # −x̃_i in the block of class k
            parts_r.append(r), parts_c.append(c + (k - 1) * p), parts_v.append(-v)
        blocks.append(sp.csr_matrix(
            (np.concatenate(parts_v), (np.concatenate(parts_r), np.concatenate(parts_c))),
            shape=(rows.size, (K - 1) * p)))
    return sp.vstack(blocks, format="csr")


def _separation_lp(A, codes, K):
    """Solve the two LPs on the equilibrated design A; return (optimum, D, complete).

    The LP's answer is taken only where its direction separates exactly
    (:func:`exact_direction`): HiGHS accepts rows violated by up to its feasibility
    tolerance, so classes that overlap by less (a few hundred ulps of a column offset
    of 1e6) would otherwise be called separated."""
    p = A.shape[1]
    G = _constraints(A, codes, K)
    live = np.tile(np.asarray(abs(A).sum(axis=0)).ravel() > 0, K - 1)
    c = np.asarray(G.sum(axis=0)).ravel()
    opt, x = separation_lp(G, c, live)
    if opt > SEPARATION_TOL:
        x = exact_direction(G, x)
        if x is None:  # once more at HiGHS' tightest tolerances
            opt, x = separation_lp(G, c, live, _TIGHT)
            x = exact_direction(G, x) if opt > SEPARATION_TOL else None
        if x is None:
            opt = 0.0
        else:
            opt = float(c @ x)
    if opt <= SEPARATION_TOL:
        return 0.0, np.zeros((K - 1, p)), False
    D = x.reshape(K - 1, p)
    t, _ = margin_lp(G, live)
    return opt, D, t > SEPARATION_TOL


#: HiGHS' tightest feasibility tolerances, for the second solve of
#: :func:`_separation_lp`.
_TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}

#: Rows whose margin under the LP's direction is within this factor of its worst
#: violation are taken to lie on the separating hyperplane (:func:`exact_direction`).
_TIGHT_FACTOR = 16.0

#: Singular values of the tight rows below this (relative to the largest) count as zero
#: in :func:`exact_direction`'s projection: the centred, equilibrated design holds its
#: entries to a few ulps.
_NULL_RCOND = 1e-12

#: :func:`exact_direction` projects only where the LP has at most this many unknowns
#: (its q × q factor); wider programmes keep the LP's answer as it is.
_PROJECT_MAX_COLUMNS = 4096
_PROJECT_CHUNK_ROWS = 4096


def exact_direction(G, x):
    """The LP's direction ``x`` if it separates exactly, else its projection on the
    null space of the rows it nearly meets (the rows of a quasi-complete separation
    lie on the hyperplane, which HiGHS meets only to its tolerance) if that one does;
    None where neither does.

    "Exactly": every margin (G x)_i ≥ −8·(q+1)·ε·(|G||x|)_i (rounding in float64 of the
    centred, equilibrated design) and their sum above ``SEPARATION_TOL``.  Overlapping
    classes fail it: their rows cannot all be met, and the tight rows the direction
    misses span the direction away."""
    x = np.asarray(x, dtype=np.float64)

    def separates(v):
        m = G @ v
        slack = 8.0 * (G.shape[1] + 1) * np.finfo(np.float64).eps * (abs(G) @ np.abs(v))
        return bool(np.all(m >= -slack)) and float(m.sum()) > SEPARATION_TOL, m, slack

    ok, m, slack = separates(x)
    if ok:
        return x
    q = G.shape[1]
    if q > _PROJECT_MAX_COLUMNS:
        return x  # no q × q factor of the tight rows: the LP's answer, as it is
    worst = float(np.max(slack - m))  # the largest violation beyond rounding
    tight = np.flatnonzero(m <= _TIGHT_FACTOR * worst)
    # the tight rows' R factor, a chunk of rows at a time (memory O(chunk·q), however
    # many rows lie on the hyperplane), then the null space from its SVD
    R = np.zeros((0, q))
    for r0 in range(0, tight.shape[0], _PROJECT_CHUNK_ROWS):
        rows = tight[r0:r0 + _PROJECT_CHUNK_ROWS]
        block = G[rows].toarray() if hasattr(G, "toarray") else np.asarray(G)[rows]
        R = np.linalg.qr(np.vstack([R, block]), mode="r")
    sv, Vt = np.linalg.svd(R, full_matrices=False)[1:]
    rank = int(np.sum(sv > _NULL_RCOND * sv[0])) if sv.size and sv[0] > 0 else 0
    V = Vt[:rank]
    y = x - V.T @ (V @ x)
    ok, _, _ = separates(y)
    return y if ok else None


def separation_lp(G, c, live, options=None):
    """max cᵀD over −1 ≤ D ≤ 1 (D = 0 where not ``live``) subject to G D ≥ 0, by HiGHS
    (``options``: HiGHS' own): (optimum ≥ 0, D)."""
    from scipy.optimize import linprog

    bounds = [(-1.0, 1.0) if a else (0.0, 0.0) for a in live]
    rows = G.shape[0] > 0
    res = linprog(-np.asarray(c, dtype=np.float64), A_ub=-G if rows else None,
                  b_ub=np.zeros(G.shape[0]) if rows else None, bounds=bounds,
                  method="highs", options=options)
    if res.status != 0:
        raise RuntimeError(f"the separation LP failed: {res.message}")
    return max(-float(res.fun), 0.0), np.asarray(res.x, dtype=np.float64)


def margin_lp(G, live):
    """max t over 0 ≤ t ≤ 1 and the box of :func:`separation_lp` subject to G D ≥ t:
    (t, (D, t)); t > 0 is complete separation, NaN if HiGHS fails."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    q = G.shape[1]
    bounds = [(-1.0, 1.0) if a else (0.0, 0.0) for a in live]
    Gt = sp.hstack([-G, np.ones((G.shape[0], 1))], format="csr")
    ct = np.zeros(q + 1)
    ct[-1] = -1.0
    rows = G.shape[0] > 0
    rt = linprog(ct, A_ub=Gt if rows else None, b_ub=np.zeros(G.shape[0]) if rows else None,
                 bounds=bounds + [(0.0, 1.0)], method="highs")
    if rt.status != 0:
        return float("nan"), np.zeros(q + 1)
    return -float(rt.fun), np.asarray(rt.x, dtype=np.float64)


def detect_separation(X, y, *, fit_intercept=True, sample_weight=None,
                      feature_names=None) -> SeparationResult:
    r"""Exact test for complete and quasi-complete separation (Konis 2007).

    With :math:`\tilde x_i = [x_i, 1]` and two classes, the maximum-likelihood estimate
    of logistic regression exists unless some direction d makes
    :math:`(2y_i - 1)\,d^\top\tilde x_i \ge 0` for every row with at least one strict
    inequality (Albert & Anderson 1984).  The test solves the linear programme

    .. math::

        \max_{-1 \le d \le 1} \sum_i (2y_i - 1)\,d^\top\tilde x_i
        \quad\text{s.t.}\quad (2y_i - 1)\,d^\top\tilde x_i \ge 0 \;\forall i

    (scipy's HiGHS) on the columns scaled to max|x| = 1: a positive optimum means
    separation, and the non-zero coordinates of the optimal d are the coefficients that
    run to ±∞.  A second programme, :math:`\max t` subject to every term ≥ t, tells
    complete separation (t > 0: a hyperplane classifies every row strictly) from
    quasi-complete (some rows lie on every separating hyperplane).

    More than two classes: the multinomial model in the reference-class form
    (``classes[0]`` has coefficients 0, as an unpenalised :func:`fastgen.fit_logistic`
    reports them).  The joint programme over D = (d_1, …, d_{K−1}) has one constraint
    :math:`(d_{y_i} - d_k)^\top\tilde x_i \ge 0` per row and per other class k
    (:math:`d_0 = 0`); a positive optimum means that the multinomial estimate does not
    exist.  This is exact for the multinomial likelihood, and weaker than "some class
    is separated from the rest": a class can be separated from one other class only.
    The directions are reported per class, against ``classes[0]``.

    Parameters
    ----------
    X : array-like (n, d) or scipy sparse matrix
        Sparse input stays sparse (the LP takes a sparse constraint matrix).
    y : array-like (n,)
        At least two classes.
    fit_intercept : bool, default True
        Include the column of ones.
    sample_weight : array-like (n,), optional
        Rows with weight 0 are left out (they are not in the likelihood); positive
        weights do not change the answer.
    feature_names : sequence of str, optional
        Names for :meth:`SeparationResult.infinite_coefficients` (default ``x1 … xd``,
        ``x{j+1}`` for ``X[:, j]``, as every fastgen message and inference table).

    Returns
    -------
    SeparationResult
        ``separated``, ``complete``, ``kind``, and the signs of the infinite
        coefficients (``coef_direction``, ``intercept_direction``).

    Notes
    -----
    The LP has n·(K − 1) rows and (K − 1)·(d + 1) columns.  On large data it costs far
    more than a fit (benchmarks/NOTES.md), which is why
    :func:`fastgen.fit_logistic` runs it only when its iterations show the signs of
    separation.  With collinear columns the non-zero pattern of d is determined only up
    to the collinear combination (see :func:`collinear_columns`).  A separation whose
    margin is below ``SEPARATION_TOL`` (1e-6) on the equilibrated columns is not
    reported.

    References
    ----------
    Albert, A. & Anderson, J. A. (1984). On the existence of maximum likelihood estimates
    in logistic regression models. Biometrika 71(1), 1–10.
    Konis, K. (2007). Linear programming algorithms for detecting separated data in
    binary logistic regression models. DPhil thesis, University of Oxford.
    """
    X = check_X(X, allow_sparse=True)
    classes, codes = check_y(y, X.shape[0], min_classes=2)
    w = check_sample_weight(sample_weight, X.shape[0])
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be True or False; got {fit_intercept!r}")
    names = checked_feature_names(feature_names, X.shape[1])
    return separation_of(X, codes, w, classes, bool(fit_intercept), names)


def separation_of(X, codes, w, classes, fit_intercept, feature_names=None):
    """:func:`detect_separation` on validated inputs (X checked, int ``codes`` into
    ``classes``, ``w`` empty for unit weights)."""
    K = classes.shape[0]
    keep = np.flatnonzero(w > 0) if w.shape[0] else None
    codes = np.asarray(codes, dtype=np.int64)
    if keep is not None:
        codes = codes[keep]
    # the LP in the centred frame of the fits: separation does not change with offsets,
    # but an offset column beside the intercept would leave the LP a near-parallel pair
    from .centring import centred_frame

    Xc, shift = centred_frame(X, w, fit_intercept)
    A, scale = separation_design(Xc, fit_intercept, keep)
    opt, D, complete = _separation_lp(A, codes, K)
    if opt > SEPARATION_TOL:
        D = direction_in_user_frame(D, scale, shift, X.shape[1], K)
    return separation_result(opt, D, complete, classes, X.shape[1], fit_intercept,
                             feature_names)


def direction_in_user_frame(D, scale, shift, n_features, K):
    """A separating direction D ((K−1)·p, of the design equilibrated by ``scale`` and
    centred by ``shift``) with the intercept entries of the user's coordinates: the
    intercept b = b_c − Σ m_j β_j runs along d_0 − Σ m_j d_j (entries below 1e-9 of the
    direction's largest count as 0).  D itself where ``shift`` is None."""
    if shift is None or D is None:
        return D
    D = np.array(D, dtype=np.float64).reshape(K - 1, -1)
    d = int(n_features)
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1.0), 0.0)
    coef = D[:, :d] * inv[:d]  # the direction in the columns' own units
    D[:, d] = D[:, d] * inv[d] - coef @ shift
    big = np.abs(D).max(axis=1)
    D[:, d] = np.where(np.abs(D[:, d]) > 1e-9 * np.maximum(big, 1e-300), D[:, d], 0.0)
    return D


def separation_result(opt, D, complete, classes, n_features, fit_intercept,
                      feature_names=None):
    """:class:`SeparationResult` from the LP optimum, its D ((K−1, p), intercept last)
    and the complete-separation flag."""
    K = classes.shape[0]
    d = int(n_features)
    kk = 1 if K == 2 else K
    sign = np.zeros((kk, d + 1), dtype=np.int8)
    if opt > SEPARATION_TOL:
        D = np.asarray(D).reshape(K - 1, -1)
        p = D.shape[1]
        Dz = np.where(np.abs(D) > DIRECTION_TOL, np.sign(D), 0.0).astype(np.int8)
        if K == 2:
            sign[0, :p] = Dz[0]
        else:
            sign[1:, :p] = Dz
    else:
        opt, complete = 0.0, False
    if not fit_intercept:
        sign[:, d] = 0
    return SeparationResult(
        separated=opt > 0.0, complete=bool(complete), classes=classes,
        coef_direction=np.ascontiguousarray(sign[:, :d]),
        intercept_direction=sign[:, d].copy(), feature_names=feature_names,
        optimum=float(opt))


def separation_advice(n_classes, inference=False):
    """What to do about separated data, for two classes or more: a sentence for the
    fit's PerfectSeparationWarning (``inference=False``) or logistic_inference's error.

    Firth's penalty is advised for every number of classes (binary Firth, or multinomial
    bias reduction), then a ridge penalty or dropping/merging what separates."""
    find = "fastgen.detect_separation tells which"
    if n_classes == 2:
        if inference:
            return ("Fit Firth's bias-reduced estimate, fit_logistic(X, y, "
                    "penalty='firth'), which is finite under separation, and pass that "
                    "model (ci='profile' gives profile-likelihood intervals); l2 > 0 also "
                    "gives finite coefficients, for prediction only (logistic_inference "
                    f"does not take ridge fits); or drop the separating features ({find})")
        return ("Pass penalty='firth' (Firth's estimate: finite, with standard errors and "
                "profile intervals from logistic_inference) or l2 > 0 (finite, for "
                f"prediction), or drop the separating features ({find}).")
    if inference:
        return ("Fit the bias-reduced multinomial estimate, fit_logistic(X, y, "
                "penalty='firth') (the maximum of the Jeffreys-penalised likelihood, as "
                "R's brglm2::brmultinom), which is finite under separation, and pass that "
                "model for Wald standard errors; l2 > 0 also gives finite coefficients, "
                "for prediction only (logistic_inference does not take ridge fits); or "
                f"drop the separating features, or merge the classes they separate ({find})")
    return ("Pass penalty='firth' (the bias-reduced multinomial estimate: finite, with "
            "standard errors from logistic_inference) or l2 > 0 (finite, for prediction), "
            "or drop the separating features, or merge the classes they separate, and "
            f"refit ({find}).")


#: A decrement at or below this times max(1, |f|) is at the objective's rounding: no
#: number of iterations brings it lower (the advice of :func:`unconverged_message`).
_ROUNDING = 64 * np.finfo(np.float64).eps


def unconverged_message(what, cause, n_iter, max_iter, dec, tol, dec_tol, init,
                        objective="the objective", quantity="Newton decrement ½gᵀH⁻¹g",
                        value=None):
    """The text of a ConvergenceWarning of the Newton loop: the stopping rule's
    quantity, the decrement ½gᵀH⁻¹g, against the tolerance it was compared with, and
    advice that fits the cause: a far ``init`` creeps (dropping it helps where more
    iterations would not), and a decrement at the rounding of the objective's
    ``value`` shows a tol below float64's reach."""
    if dec_tol == tol:
        bound = f"tol = {tol:.3g}"
    else:
        bound = f"tol·(mean weight) = {dec_tol:.3g}, tol = {tol:.3g}"
    rule = f"stopping rule: {quantity} = {dec:.3g} > {bound}"
    if cause == "line search":
        return (f"{what} stopped after {n_iter} iterations: the line search could not "
                f"improve {objective} ({rule}); tol may be below the attainable "
                f"precision.")
    floor = None if value is None else _ROUNDING * max(1.0, abs(float(value)))
    if floor is not None and dec <= floor:
        advice = (f"tol is below the precision float64 gives the objective here (about "
                  f"{floor:.3g} nats); raise tol")
    elif init:
        advice = ("the start (init) may be far from the optimum: fit without init, "
                  "or start closer, or increase max_iter")
    else:
        advice = "increase max_iter"
    return (f"{what} did not converge in max_iter={max_iter} iterations ({rule}); "
            f"{advice}.")
