r"""Profile-likelihood intervals and penalised likelihood-ratio tests for Firth's (and
the ordinary) logistic likelihood, as logistf reports them.

Profile-likelihood intervals solve :math:`\max_{\beta:\beta_j=b} l^*(\beta) =
l^*(\hat\beta) - \chi^2_{1,1-\alpha}/2` for b on each side by a safeguarded Newton
iteration whose derivative is the modified score :math:`U^*_j` at the constrained
optimum (the envelope theorem).  The search follows the constrained maximum from the
estimate (each fit starts from the nearest accepted point moved along the path's
tangent), takes a higher maximum where one is found, and returns a bound only at a
converged constrained fit where the statistic equals the quantile to
``PROFILE_STAT_TOL`` (:func:`_profile_bound`); otherwise NaN and a warning.  Penalised
likelihood-ratio p-values refit with :math:`\beta_j = 0`.  With ``penalty_weight = 0``
the same code profiles the ordinary likelihood.  The objective is
:mod:`fastgen.logistic.firth_objective`'s, its Newton loop
:mod:`fastgen.logistic.penalised`'s.  Under column offsets every constrained fit
evaluates l* on the centred data, in a frame (:class:`UserFrame`) where its
constraint fixes one coordinate and the free ones are well conditioned: the centred
frame for a slope, :func:`intercept_frame` for the user's intercept.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._runtime import single_thread_blas_call, threads_for
from .._warn import warn
from .firth_multinomial import MultinomialPenalised
from .firth_objective import _Penalised
from .firth_starts import _distinct
from .params import ConvergenceWarning
from .penalised import _newton
from .tails import chi2_isf, chi2_sf

__all__ = ["profile_inference", "PROFILE_STAT_TOL", "UserFrame", "intercept_frame"]


#: A profile bound is returned only where |2(l*max − l*_prof(b)) − χ²| is below this
#: (l*_prof(b) from a converged constrained fit).
PROFILE_STAT_TOL = 1e-7

#: A step of the profile search is on the path when the profile's change agrees with
#: the trapezoid rule on its slopes to this fraction (see :func:`_profile_bound`).
_PATH_TOL = 0.1

_PROFILE_MAX_TRIALS = 200


class _FrameState:
    """A state of the centred frame (``inner``) in a frame's coordinates."""

    __slots__ = ("beta", "llf", "lstar", "score", "H", "emax", "c", "inner")


class UserFrame:
    """A penalised likelihood l* on centred data (:mod:`fastgen.logistic.centring`),
    seen in coordinates φ with θ = Tφ (θ the centred frame's coordinates, T
    invertible; None: φ = θ), whose column scales are ``scale``.

    l*, its score and its information are always evaluated on the centred data and
    mapped (U_φ = TᵀU_θ, I_φ = TᵀI_θT), never summed over offset columns, where log
    det I and the score correction lose (offset/spread)² of their digits.  Every
    profile's and likelihood-ratio test's constrained fit runs on such a frame
    (:func:`_frames`): a slope's on the centred frame itself (a slope's constraint is
    the same there), the user's intercept's on :func:`intercept_frame`, where the
    user's intercept is a coordinate and the free coordinates are as well conditioned
    as the centred frame's.  A coefficient vector that is not finite (a failed solve)
    raises ``LinAlgError``, which the profile takes for a fit that did not converge."""

    def __init__(self, obj, T=None, scale=None):
        object.__setattr__(self, "obj", obj)
        object.__setattr__(self, "T", T)
        object.__setattr__(self, "scale", obj.scale if scale is None else scale)

    def __getattr__(self, name):  # pw, w, data, slow, curved, can_curve, ...
        return getattr(self.obj, name)

    def __setattr__(self, name, value):  # ``slow`` and ``curved`` belong to the objective
        setattr(self.obj, name, value)

    def evaluate(self, phi):
        T = self.T
        theta = phi if T is None else T @ phi
        if not np.all(np.isfinite(theta)):
            raise np.linalg.LinAlgError("a constrained fit reached non-finite coefficients")
        inner = self.obj.evaluate(theta)
        st = _FrameState()
        st.beta, st.llf, st.lstar, st.emax = phi, inner.llf, inner.lstar, inner.emax
        st.c, st.inner = None, inner
        if T is None:
            st.score, st.H = inner.score, inner.H
        else:
            st.score, st.H = T.T @ inner.score, T.T @ inner.H @ T
        return st

    def modified_score(self, st):
        U = self.obj.modified_score(st.inner)
        T = self.T
        if st.inner.c is not None:
            st.c = st.inner.c if T is None else T.T @ st.inner.c
        return U if T is None else T.T @ U

    def curvature(self, st):
        J = self.obj.curvature(st.inner)
        return J if self.T is None else self.T.T @ J @ self.T


def intercept_frame(obj, shift, j):
    r"""``(frame, T⁻¹)``: coordinates φ of the centred frame's θ in which φ_j is the
    user's intercept of j's equation, b = b_c − Σ_i m_i β_i (m the ``shift``), and
    the other coordinates are orthonormal in the centred frame's scaled units θ̃ =
    r·θ (r = ``obj.scale``).

    In θ̃ the constraint is aᵀθ̃ = b, with a_i = −m_i/r_i on the equation's slopes and
    a_j = 1.  The Householder reflection Q that maps a onto the axis j has, besides
    column j, columns that are orthonormal and orthogonal to a: they are the free
    coordinates; column j is replaced by a/|a|², so that θ̃ = Mφ has aᵀθ̃ = φ_j.  The
    user's coordinates (β, b) instead make the fits with b fixed as ill conditioned
    as (offset/spread)²: a change of β_i moves the centred intercept by m_i."""
    r = np.asarray(obj.scale, dtype=np.float64)
    q = r.shape[0]
    p = obj.data.p
    k0 = (j // p) * p
    a = np.zeros(q)
    a[k0:k0 + p - 1] = -shift / r[k0:k0 + p - 1]
    a[j] = 1.0
    na = float(np.linalg.norm(a))
    v = a.copy()
    v[j] += na  # a_j = 1 > 0: no cancellation
    Q = np.eye(q) - (2.0 / float(v @ v)) * np.outer(v, v)
    M = Q.copy()
    M[:, j] = a / (na * na)
    Minv = Q.copy()  # Q is symmetric and orthogonal
    Minv[j, :] = a
    scale = np.ones(q)
    scale[j] = 1.0 / na
    return UserFrame(obj, M / r[:, None], scale), Minv * r[None, :]


def _frames(obj, theta_hat, shift, which, polish):
    """For each coordinate j in ``which``: ``(frame, state at the estimate)``, the
    centred frame for a slope or where nothing is shifted, :func:`intercept_frame`
    for an intercept under a shift (its estimate mapped there and ``polish``-ed)."""
    centred = UserFrame(obj)
    st_c = polish(centred, theta_hat)
    p = obj.data.p
    out = {}
    for j in which:
        if shift is None or j % p != p - 1 or not obj.data.fit_intercept:
            out[j] = (centred, st_c)
        else:
            frame, Tinv = intercept_frame(obj, shift, j)
            out[j] = (frame, polish(frame, Tinv @ st_c.beta))
    return out


def _constrained(obj, beta_start, j, b, sw, tol, max_iter):
    beta = beta_start.copy()
    beta[j] = b
    free = np.delete(np.arange(beta.shape[0]), j)
    st, U, conv = _newton(obj, beta, free, max_iter, tol, sw)[:3]
    return st, U, conv


class _PathPoint:
    """A converged constrained fit at β_j = b: f = l*_prof(b) − target, and the
    profile's slope there, ∂l*/∂β_j at the constrained optimum (envelope theorem)."""

    __slots__ = ("b", "st", "f", "slope")

    def __init__(self, b, st, f, slope):
        self.b, self.st, self.f, self.slope = float(b), st, float(f), float(slope)


def _predict(pt, j, b):
    """Start of the constrained fit at β_j = b: pt's optimum moved along the tangent of
    the path of constrained maxima, dβ_free/db = −I_ff⁻¹ I_fj (the information at pt
    standing in for −∇²l*)."""
    beta = pt.st.beta.copy()
    free = np.delete(np.arange(beta.shape[0]), j)
    if free.size:
        H = pt.st.H
        try:
            t = -scipy.linalg.cho_solve(
                scipy.linalg.cho_factor(H[np.ix_(free, free)], lower=True),
                H[free, j], check_finite=False)
        except np.linalg.LinAlgError:
            t = np.zeros(free.size)
        if np.all(np.isfinite(t)):
            beta[free] += (b - pt.b) * t
    beta[j] = b
    return beta


def _profile_point(obj, base, st_hat, j, b, sw, tol, max_iter, check=False):
    """The profile at β_j = b: the highest converged constrained maximum of l* from
    the path's start (``base`` moved along the tangent, :func:`_predict`) and, with
    ``check``, from the estimate; ``(state, U*, several)``, ``several`` true when the
    starts reached different maxima, or None when no fit converged."""
    starts = [_predict(base, j, b)]
    if check:
        starts.append(st_hat.beta)
    found = []
    for b0 in starts:
        try:
            st, U, conv = _constrained(obj, b0, j, b, sw, tol, max_iter)
        except np.linalg.LinAlgError:
            continue
        if conv and np.isfinite(st.lstar):
            found.append((st, U))
    if not found:
        return None
    st, U = max(found, key=lambda r: r[0].lstar)
    several = any(r[0].lstar < st.lstar - _distinct(st.lstar) for r in found)
    return st, U, several


def _profile_bound(obj, st_hat, j, side, se, target, sw, tol, max_iter, notes):
    """b on ``side`` (±1) of β̂_j where the profile max_{β_j=b} l* equals ``target``;
    NaN, with the reason appended to ``notes``, where no such point is found.

    The profile is evaluated by :func:`_profile_point`, from the nearest accepted point
    of the search, so the search follows the constrained maximum continuously from the
    estimate.  A trial whose profile value lies below the trapezoid rule on the two
    slopes (exact for a quadratic profile) by more than ``_PATH_TOL`` of the change is
    not accepted: the fit may have landed on a lower branch of constrained maxima, and
    the step is halved.  The next trial is the Newton step of the accepted point nearer
    the root, safeguarded by the bracket once one is found.  The bound is returned where
    the profile statistic is within ``PROFILE_STAT_TOL`` of the χ² quantile.  Where l*
    showed evidence of several maxima (``obj.slow``), the fit at that point is repeated
    from the estimate first: if it reaches a higher maximum, that is the profile there,
    and the search goes on outwards from it.
    """
    bhat = float(st_hat.beta[j])
    inner = _PathPoint(bhat, st_hat, st_hat.lstar - target, 0.0)
    outer = None
    step = np.sqrt(2.0 * inner.f) * se  # the Wald distance of the bound
    ftol = 0.25 * PROFILE_STAT_TOL
    floor = 64 * np.finfo(np.float64).eps * max(1.0, abs(target))
    where = "lower" if side < 0 else "upper"
    seen_several = seen_failed = failed = False
    for _ in range(_PROFILE_MAX_TRIALS):
        if outer is None:
            base = inner
            s = inner.slope
            bn = inner.b - inner.f / s if s * side < 0 else inner.b + side * step
            if abs(bn - base.b) > step:
                bn = base.b + side * step
        else:
            lo, hi = sorted((inner.b, outer.b))
            base = inner if abs(inner.f) <= abs(outer.f) else outer
            bn = base.b - base.f / base.slope if base.slope != 0.0 else np.nan
            if not (np.isfinite(bn) and lo < bn < hi):
                bn = 0.5 * (lo + hi)
            if abs(bn - base.b) > step:
                bn = base.b + np.sign(bn - base.b) * step
        h = bn - base.b
        if abs(h) <= 1e-12 * max(1.0, abs(base.b)):
            notes.append(
                f"{where} bound: no bound returned: " + (
                    f"the constrained fits beyond {base.b:.6g} do not converge"
                    if failed else
                    f"the profile drops across the critical value at {base.b:.6g} (the "
                    f"constrained maximum followed from the estimate ends there)"))
            return np.nan
        got = _profile_point(obj, base, st_hat, j, bn, sw, tol, max_iter)
        failed = got is None
        if failed:
            if not seen_failed:
                seen_failed = True
                notes.append(f"{where} bound: the constrained fit at {bn:.6g} did not "
                             f"converge (the search took shorter steps)")
            step = 0.5 * abs(h)
            continue
        st, U, _ = got
        f = st.lstar - target
        slope = float(U[j])
        df = f - base.f
        trap = 0.5 * h * (slope + base.slope)
        if df < trap - _PATH_TOL * max(abs(df), abs(trap)) - floor:
            step = 0.5 * abs(h)  # perhaps a lower branch: approach in shorter steps
            continue
        step = max(step, 2.0 * abs(h))
        pt = _PathPoint(bn, st, f, slope)
        if f >= 0.0:
            if f > inner.f + floor:
                notes.append(f"{where} bound: the profile is not monotone: it rises again "
                             f"at {bn:.6g}" + (" above its value at the estimate (l* has "
                             "a higher maximum)" if f > st_hat.lstar - target + floor
                             else " (several constrained maxima)"))
            inner = pt
        else:
            outer = pt
        if abs(f) <= ftol:
            if obj.slow:  # l* may have several maxima: is this one the profile?
                alt = _profile_point(obj, pt, st_hat, j, bn, sw, tol, max_iter, True)
                if alt is not None and alt[0].lstar > st.lstar + max(ftol, floor):
                    if not seen_several:
                        seen_several = True
                        notes.append(f"{where} bound: the fits with the coefficient fixed "
                                     f"reached several maxima of l* (first at {bn:.6g}); "
                                     f"the profile takes the highest")
                    inner = _PathPoint(bn, alt[0], alt[0].lstar - target, alt[1][j])
                    outer = None
                    continue
            return bn
    notes.append(f"{where} bound: no crossing of the critical value found in "
                 f"{_PROFILE_MAX_TRIALS} constrained fits")
    return np.nan


@single_thread_blas_call
def profile_inference(data, codes, w, beta_hat, cov, alpha, penalty_weight, *,
                      tol=1e-10, max_iter=200, names=None, n_classes=2, which=None,
                      shift=None):
    """Profile-likelihood intervals and likelihood-ratio p-values, binary or
    multinomial (``n_classes > 2``: β flat in the reference layout, the objective
    :class:`~fastgen.logistic.firth_multinomial.MultinomialPenalised`; each of the q
    coefficients takes about ten constrained fits per bound, each a few passes over X,
    so this is affordable for small and moderate data).

    Its linear algebra between passes (p × p solves) runs with BLAS on one thread, as
    in the fit: BLAS threads woken by those small calls kept spinning and slowed every
    pass over X (benchmarks/NOTES.md).

    Parameters
    ----------
    data : InferenceData
    codes, w : the validated labels (0..K−1) and weights
    beta_hat : ndarray (p,) or (m·p,), intercept last (per equation)
        The (penalised) maximum-likelihood estimate.
    cov : ndarray (p, p)
        Its covariance (intercept last), for the first step of each search.
    alpha : float
    penalty_weight : float
        0.5 for Firth (Jeffreys prior), 0 for the ordinary likelihood.
    names : sequence of str, optional
        The coefficients' names (intercept last), for the warning.
    which : sequence of int, optional
        The coefficients to profile (default: all); the others get NaN.
    shift : ndarray (d,), optional
        ``data`` is centred by this shift while ``beta_hat`` and ``cov`` are in the
        user's coordinates: l* is evaluated on the centred data; the slopes are
        profiled in the centred frame, the user's intercepts in
        :func:`intercept_frame`, so that they are as accurate as the centred frame's.

    Returns
    -------
    ci : ndarray (p, 2), intercept last
        NaN where no bound was found (see :func:`_profile_bound`).
    lr_pvalues : ndarray (p,): χ²₁ upper tail of ``2(l*(β̂) − max_{β_j=0} l*)``.

    Warns
    -----
    ConvergenceWarning
        Once, naming the coefficients, where a search met a profile that is not
        monotone, a constrained fit that did not converge, several constrained maxima,
        or found no bound.
    """
    with threads_for(data.X):  # one scope for all the passes (see threads_for_work)
        return _profile_inference(data, codes, w, beta_hat, cov, alpha, penalty_weight,
                                  tol, max_iter, names, n_classes, which, shift)


def _profile_inference(data, codes, w, beta_hat, cov, alpha, penalty_weight, tol,
                       max_iter, names, n_classes=2, which=None, shift=None):
    m = n_classes - 1 if n_classes > 2 else 1
    if n_classes > 2:
        obj = MultinomialPenalised(data, codes, w, penalty_weight, n_classes)
    else:
        obj = _Penalised(data, codes, w, penalty_weight)
    sw = float(w.sum()) if w.shape[0] else float(data.n)
    p = beta_hat.shape[0]
    theta_hat = np.array(beta_hat, dtype=np.float64)
    if shift is not None:  # the estimate in the centred frame: b_c = b + Σ_i m_i β_i
        pe = data.p
        for k in range(m):
            theta_hat[k * pe + pe - 1] += float(shift @ theta_hat[k * pe:k * pe + pe - 1])
    every = np.arange(p)

    def polish(frame, start):  # the estimate polished to the profile tolerance
        return _newton(frame, start, every, max_iter, tol, sw)[0]

    which = range(p) if which is None else which
    frames = _frames(obj, theta_hat, shift, which, polish)
    crit = chi2_isf(alpha, 1)
    ci = np.full((p, 2), np.nan)
    lrp = np.full(p, np.nan)
    se = np.sqrt(np.diag(cov))
    notes = {}
    for j in which:
        frame, st_hat = frames[j]
        target = st_hat.lstar - 0.5 * crit
        nj = notes.setdefault(j, [])
        ci[j, 0] = _profile_bound(frame, st_hat, j, -1, se[j], target, sw, tol, max_iter,
                                  nj)
        ci[j, 1] = _profile_bound(frame, st_hat, j, +1, se[j], target, sw, tol, max_iter,
                                  nj)
        lrp[j] = _lr_pvalue(frame, st_hat, j, sw, tol, max_iter, nj)
    bad = [f"{names[j] if names is not None else j}: " + "; ".join(dict.fromkeys(v))
           for j, v in notes.items() if v]
    if bad:
        warn("logistic_inference(ci='profile'): " + " | ".join(bad), ConvergenceWarning)
    return ci, lrp


def _lr_pvalue(obj, st_hat, j, sw, tol, max_iter, notes):
    """χ²₁ upper tail of 2(l*(β̂) − max_{β_j=0} l*): the constrained fit from the
    estimate, and where l* showed evidence of several maxima (``obj.slow``) also from
    the path's tangent and from zero, the highest converged maximum (from the tangent
    also where the estimate's fit did not converge); NaN (noted) when none converged."""
    tangent = _predict(_PathPoint(st_hat.beta[j], st_hat, 0.0, 0.0), j, 0.0)
    starts = [st_hat.beta]
    if obj.slow:
        starts += [tangent, np.zeros_like(st_hat.beta)]
    best = None
    for k, b0 in enumerate(starts):
        try:
            st0, _, conv = _constrained(obj, b0, j, 0.0, sw, tol, max_iter)
        except np.linalg.LinAlgError:
            conv = False
        if conv and (best is None or st0.lstar > best):
            best = st0.lstar
        if k == 0 and not conv and not obj.slow:
            # β_j = 0 far from the estimate (a user's intercept under offset columns,
            # many standard errors out): the estimate with β_j moved alone saturates
            # every row; the path's tangent moves the others with it
            starts.append(tangent)
    if best is None:
        notes.append("the fit with the coefficient fixed at 0 did not converge; no "
                     "likelihood-ratio p-value")
        return np.nan
    return float(chi2_sf(max(2.0 * (st_hat.lstar - best), 0.0), 1))
