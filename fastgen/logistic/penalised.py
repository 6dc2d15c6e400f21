r"""A penalised log-likelihood l* as an objective of the one Newton loop
(:func:`~fastgen.logistic.newton.newton_solve`): :class:`PenalisedObjective` and
:func:`_newton`, which every Firth-type fit, its starts, FLIC's intercept refit and the
profile's constrained fits run.

Imports: ``newton`` only (the objectives it wraps come from ``firth`` and
``firth_multinomial``, which import this module).
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np
import scipy.linalg

from .._warn import warn
from .diagnostics import unconverged_message
from .newton import capped_step, newton_solve, stopping_tolerance
from .params import ConvergenceWarning

__all__ = ["PenalisedObjective", "PenalisedRun", "MAX_STEP", "warn_unconverged"]

#: Largest change of any coefficient in one Newton step (logistf's ``maxstep``).
MAX_STEP = 5.0

#: Fisher scoring (the Newton matrix I) converges linearly where the penalty carries
#: the optimum, as on separated data: its rate is the share of l*'s curvature that I
#: leaves out.  After ``_SLOW_STEPS`` accepted steps in a row that each left more than
#: ``_SLOW_RATE`` of the previous max|U*|, the iteration takes l*'s own Hessian
#: (:meth:`_Penalised.curvature`) and converges quadratically.  Where I is a good
#: model (rows ≫ coefficients, no separation) the ratios fall fast and the extra pass
#: is never made (benchmarks/NOTES.md).
_SLOW_RATE = 0.25
_SLOW_STEPS = 2


class _LazyEvaluation:
    """l* at one point as the Newton loop sees it (it minimises f = −l*): ``loss`` = −l,
    ``objective`` = −l*, ``eta_max``, and ``grad`` = −U* on the free coordinates (0 on
    the fixed ones), whose score correction (a pass over X) is computed on first use:
    a trial point the line search rejects costs one pass, not two."""

    __slots__ = ("owner", "st", "stand_in", "_grad")

    def __init__(self, owner, st, stand_in):
        self.owner, self.st, self.stand_in, self._grad = owner, st, stand_in, None

    @property
    def loss(self):
        return -self.st.llf

    @property
    def objective(self):
        return -self.st.lstar

    @property
    def eta_max(self):
        return self.st.emax

    @property
    def approximate(self):
        """Whether ``grad`` uses a stand-in score correction."""
        return self.stand_in is not None

    @property
    def grad(self):
        if self._grad is None:
            self._grad = self.owner.gradient_of(self)
        return self._grad


class PenalisedObjective:
    """A penalised likelihood l* (binary :class:`_Penalised` or
    :class:`~fastgen.logistic.firth_multinomial.MultinomialPenalised`) as an objective
    of :func:`~fastgen.logistic.newton.newton_solve`, over the coordinates ``free``
    (the others stay at their start: the profile's constrained fits, FLIC's intercept).

    Firth's needs are this objective's policies, the loop is the solver's:

    * the Newton matrix is the Fisher information I (Fisher scoring) until the steps
      show it converging slowly (``_SLOW_RATE``), then l*'s own Hessian (``curved``);
    * :meth:`limit_step` caps a step at ``MAX_STEP`` in the columns' units (logistf's
      ``maxstep``);
    * a stand-in score correction (``c0``: the subsample's at the start, and the last
      exact one while steps are longer than the objective's ``stale_correction``) saves
      a hat pass per step; it never certifies convergence nor ends a line search
      (:meth:`make_exact`).
    """

    inexact = False

    def __init__(self, obj, free, c0=None, tol=0.0):
        self.obj = obj
        self.tol = float(tol)
        self._dec_prev = None  # the Fisher decrement at the previous exact step
        self.free = np.asarray(free, dtype=np.int64)
        self.solver = "firth"
        self.nprod = 0
        self._stand_in = c0  # the correction to use at the next evaluation, if any
        self._anchor = None  # (β, c) of the latest exact correction
        self._last_at = None  # β of the latest evaluation whose gradient was taken
        self._latest = None
        self._g_prev = None  # max|U*_free / r|/Σw at the previous exact step
        self._prev_at = None
        self._slow = 0
        #: whether the latest decrement is Fisher scoring's scaled for its linear rate
        #: (:meth:`_fisher_decrement`), not a Newton step's own
        self.rate_scaled = False
        #: (δ_F, δ_F/(1 − ρ), ρ) of the latest rate-scaled decrement, for the warning
        self.rate_parts = None
        self.sw = float(obj.w.sum()) if obj.w.shape[0] else float(obj.data.n)

    # -- the solver's protocol
    def evaluate(self, beta, curvature=False):
        st = self.obj.evaluate(np.array(beta, dtype=np.float64))
        stand_in = self._stand_in
        self._stand_in = None
        stale = getattr(self.obj, "stale_correction", None)
        if (stand_in is None and stale is not None and self._anchor is not None
                and self._last_at is not None):
            # a long step from the last iterate: keep the last exact correction
            if float(np.max(np.abs((st.beta - self._last_at) * self.obj.scale))) > stale:
                stand_in = self._anchor[1]
        ev = _LazyEvaluation(self, st, stand_in)
        self._latest = ev
        return ev

    def predict_final(self, beta, step):
        """The point the certifying step reaches, predicted from the certified one,
        whose evaluation (exact, by :meth:`make_exact`) the step came from.

        l there is its quadratic model l + Uᵀs − ½sᵀIs (I is −∇²l for the logistic
        and softmax likelihoods, so it is exact to O(‖s‖³)); the penalty moves by the
        gradient of log det I along s, (U* − U)ᵀs.  The step is within tol of zero in
        nats, so these are as exact as an evaluation would be, for the pass over X one
        costs.  The information, the score and its correction stay the certified
        point's."""
        ev = self._latest
        st = ev.st
        new = copy.copy(st)
        s = np.asarray(step, dtype=np.float64).reshape(-1)
        new.beta = np.array(beta, dtype=np.float64)
        gain = float(st.score @ s) - 0.5 * float(s @ (st.H @ s))
        new.llf = st.llf + gain
        new.lstar = st.lstar + gain + float(-ev.grad.reshape(-1) @ s - st.score @ s)
        final = _LazyEvaluation(self, new, None)
        final._grad = ev.grad
        self._latest = final
        return final

    def gradient_of(self, ev):
        """−U* of an evaluation (exact, or with its stand-in correction), 0 on the
        fixed coordinates."""
        obj, st = self.obj, ev.st
        self._last_at = st.beta  # gradients are taken at the iterates
        if ev.stand_in is None or obj.pw == 0.0:
            U = obj.modified_score(st)
            if obj.pw > 0.0:
                self._anchor = (st.beta.copy(), st.c)
        else:
            U = st.score + 2.0 * obj.pw * ev.stand_in
            st.c = ev.stand_in
        g = np.zeros_like(U)
        g[self.free] = -U[self.free]
        return g

    def has_curvature(self):
        return True

    def gradient_scale(self, sum_weights):
        return self.obj.scale

    def make_exact(self):
        """Whether the latest evaluation used a stand-in correction; if so it gets the
        exact one (its gradient is recomputed on next use)."""
        ev = self._latest
        if ev is None or ev.stand_in is None:
            return False
        ev.stand_in, ev._grad = None, None
        return True

    def step(self, g, gscaled, rtol=None, atol=0.0):
        """Δ on the free coordinates from I Δ = U* (or l*'s Hessian once Fisher scoring
        proved slow), and ½U*ᵀΔ."""
        obj, free, ev = self.obj, self.free, self._latest
        st = ev.st
        x = np.zeros_like(g)
        if free.size == 0:
            return x, 0.0
        Uf = -g[free]
        exact = ev.stand_in is None
        new_point = exact and self._prev_at is not st
        if new_point:
            gmax = float(np.max(np.abs(Uf / obj.scale[free]))) / self.sw
            if self._g_prev is not None and not obj.curved:
                self._slow = self._slow + 1 if gmax > _SLOW_RATE * self._g_prev else 0
                obj.slow = obj.slow or self._slow >= _SLOW_STEPS
                obj.curved = self._slow >= _SLOW_STEPS and obj.can_curve()
            self._g_prev, self._prev_at = gmax, st
        delta = None
        if obj.curved and exact:
            J = obj.curvature(st)[np.ix_(free, free)]
            try:
                delta = scipy.linalg.cho_solve(scipy.linalg.cho_factor(J, lower=True),
                                               Uf, check_finite=False)
                x[free] = delta
                self.rate_scaled = False
                return x, max(0.5 * float(Uf @ delta), 0.0)
            except np.linalg.LinAlgError:
                pass  # l* not concave here: Fisher scoring's step
        if delta is None:
            Hff = st.H[np.ix_(free, free)]
            try:
                delta = scipy.linalg.cho_solve(scipy.linalg.cho_factor(Hff, lower=True),
                                               Uf, check_finite=False)
            except np.linalg.LinAlgError:
                delta = np.linalg.lstsq(Hff, Uf, rcond=None)[0]
        x[free] = delta
        return x, self._fisher_decrement(max(0.5 * float(Uf @ delta), 0.0), new_point)

    def _fisher_decrement(self, dec, new_point):
        """The decrement a Fisher-scoring step certifies with.

        Fisher scoring converges linearly, at the rate ρ of I − I⁻¹J (J = −∇²l*), which
        the ratio of successive Fisher decrements estimates (ρ² ≈ δ_k/δ_{k−1}).  Its
        decrement δ_F = ½U*ᵀI⁻¹U* is about (1 − ρ) times l*'s own ½U*ᵀJ⁻¹U*, and the
        step it takes leaves ρ² of that.  So the step certifies with δ_F/(1 − ρ), made
        large enough that the certified point, after its step, is within tol² as a
        Newton step would leave it: ``δ_F/(1 − ρ)·max(1, ρ²/tol)``.

        Without the penalty (pw = 0: FLIC's intercept refit, the profile's ordinary
        fits) I is −∇²l itself (the logistic and softmax links are canonical): the
        step is Newton's and δ_F l's own decrement.  Decrements at the objective's
        rounding carry no rate: their ratio is noise, and the previous point was
        already as converged as f can show."""
        self.rate_scaled = False
        if not new_point or self.obj.pw == 0.0:
            return dec
        prev, self._dec_prev = self._dec_prev, dec
        if not prev or not np.isfinite(prev) or prev <= 0.0:
            return dec
        f = abs(float(self._latest.st.lstar))
        if prev <= 64.0 * np.finfo(np.float64).eps * max(f, 1.0):
            return dec
        self.rate_scaled = True
        rho2 = min(dec / prev, 0.98)
        est = dec / (1.0 - np.sqrt(rho2))
        self.rate_parts = (dec, est, float(np.sqrt(rho2)))
        return est * max(1.0, rho2 / self.tol) if self.tol > 0 else est

    def limit_step(self, step):
        """The step scaled so that no coefficient moves by more than ``MAX_STEP`` in
        its column's units."""
        short = capped_step(step, self.obj.scale, MAX_STEP)
        return step if short is None else short

    # -- the state at the end
    def state(self):
        """The latest evaluation's state and its exact modified score U* (every
        coordinate, the fixed ones too: the profile's slope)."""
        ev, obj = self._latest, self.obj
        st = ev.st
        if obj.pw == 0.0:
            return st, st.score
        if ev._grad is not None and st.c is not None:
            return st, st.score + 2.0 * obj.pw * st.c
        return st, obj.modified_score(st)


class PenalisedRun(NamedTuple):
    """What :func:`_newton` returns: the last state and its exact modified score U*,
    whether the stopping rule certified it, the steps taken, the histories of −l* and
    of the step sizes, and the stopping rule's last reading: the Newton decrement
    ``decrement`` it compared with ``dec_tol`` (``tol`` times min(1, mean weight)),
    and why it stopped early (``cause``: "line search", "max_iter" or None)."""

    state: object
    score: np.ndarray
    converged: bool
    n_iter: int
    history: list
    steps: list
    decrement: float
    dec_tol: float
    cause: str | None
    rate_scaled: bool = False
    rate_parts: tuple | None = None


def _newton(obj, beta0, free, max_iter, tol, sw, c0=None) -> PenalisedRun:
    """Maximise l* over the coordinates ``free`` (others fixed) from beta0, by
    :func:`~fastgen.logistic.newton.newton_solve` on :class:`PenalisedObjective`:
    converged when the Newton decrement ½U*ᵀΔ ≤ tol (per unit of mean weight below 1),
    the certifying step then taken.  ``c0`` stands in for Firth's score correction at
    beta0 (the subsample fit's, see :func:`~fastgen.logistic.firth_starts.subsample_start`)."""
    target = PenalisedObjective(obj, free, c0, tol)
    n = obj.data.n
    mean_weight = sw / n if n else 1.0
    res = newton_solve(target, np.array(beta0, dtype=np.float64), max_iter=max_iter,
                       tol=tol, sum_weights=sw, l2=1.0, quiet=True,
                       mean_weight=mean_weight)
    st, U = target.state()
    return PenalisedRun(st, U, res.converged, res.n_iter, list(res.objective_history),
                        list(res.step_size_history), res.decrement,
                        stopping_tolerance(tol, mean_weight), res.cause,
                        target.rate_scaled, target.rate_parts)


def warn_unconverged(run: PenalisedRun, tol, max_iter, what="fit_logistic(penalty='firth')",
                     init=False):
    """The ConvergenceWarning of a penalised fit that stopped unconverged: the quantity
    its stopping rule compares (the Newton decrement ½U*ᵀΔ, in nats of l*) and the
    tolerance it compares it with, and what to do for the cause.  A Fisher-scoring
    decrement scaled for its linear rate is reported with its parts: the decrement
    itself and the estimated distance from the maximum in nats of l* (the rule
    multiplies that by max(1, ρ²/tol), which is large for a point far away and says
    nothing of the distance)."""
    quantity = "Newton decrement ½U*ᵀΔ"
    if run.rate_scaled and run.rate_parts is not None:
        dec, est, rho = run.rate_parts
        quantity = (f"Newton decrement of Fisher scoring ½U*ᵀI⁻¹U* = {dec:.3g} (l* "
                    f"about {est:.3g} below its maximum at the estimated linear rate "
                    f"ρ = {rho:.2g}) scaled for that rate by the factor "
                    f"(1 − ρ)⁻¹·max(1, ρ²/tol)")
    elif run.rate_scaled:
        quantity = "Newton decrement of Fisher scoring ½U*ᵀI⁻¹U* scaled for its linear rate"
    warn(unconverged_message(what, run.cause or "max_iter", run.n_iter, max_iter,
                             run.decrement, tol, run.dec_tol, init, "l*", quantity,
                             value=run.history[-1] if run.history else None),
         ConvergenceWarning)
