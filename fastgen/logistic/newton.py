"""The Newton solver: a state, a result and a loop in named steps.

The loop (glum's shape) repeats: :func:`direction` (the Newton step from the objective's
curvature) → :func:`is_converged` → :func:`separation_suspected` (then the exact test) →
:func:`line_search` (Armijo backtracking by step halving) → :func:`update` (move, record
the iteration).  It stops with :class:`~fastgen.logistic.params.ConvergenceWarning` when
it cannot go on, :class:`~fastgen.logistic.params.PerfectSeparationWarning` when the
data are separated.

Separation (unpenalised fits only).  The exact test (a linear programme on the data,
:func:`fastgen.detect_separation`) is a property of the data, so it runs at most once
per fit, and only when the iterations show its signature; a fit that converges the
usual way never pays for it.  Along a separating direction the loss decays like e^{−t}
and Newton's step on it has a constant length, so the coefficients grow linearly:
‖β_k‖ ≈ c·k and the step stays about ‖β‖/k long.  An ordinary fit converges
quadratically and its last step is ≤ 1e-6·‖β‖ (1e-7 … 1e-14 on the tests' data, where
separated data end at 0.05 … 0.15).  The
rule (:func:`separation_suspected`):

* during the loop, after ``_SUSPECT_MIN_ITER`` (15) steps of which the last 5 pointed
  along β (cosine > 0.9) while some |η| > 10 — the exact test then stops the fit early;
* at the stop, when the fit did not converge, or converged with a last Newton step
  longer than ``_FINAL_REL_STEP`` (1e-3) × ‖β‖ (the gradient of a separated fit becomes
  small while its coefficients still march).

Stopping rule: a certificate at return.  The fit is ``converged`` only when an
accurate solve of the Newton system at the returned point's predecessor shows the
Newton decrement

    λ²/2 = ½ gᵀH⁻¹g ≤ tol,

in units of the objective (nats of log-likelihood), not divided by Σw.  For a convex
objective that is close to quadratic there, λ²/2 is the objective's excess over its
minimum, and the coefficients' distance from the optimum in standard-error units is
about λ (H⁻¹ is their covariance).  The decrement does not change under any invertible
linear change of coordinates (units, offsets, the reference class), so neither does the
stop; and it is a sum, not a mean, so rare events count as much as common ones.  The
step that certifies is then taken, at no cost (:func:`final_step`: no evaluation, the
model's value is reported): Newton's quadratic convergence makes the returned point's
distance from the optimum about λ² instead of λ.  The explicit solvers are exact; a
Newton-CG fit first solves loosely, and since CG's decrement estimate only grows
towards ½gᵀH⁻¹g, an estimate above tol proves the point unconverged, and one below it
is confirmed by a solve, started from the loose step, to relative residual
min(``_CERT_RTOL``, ``_FINAL_ERROR``/λ) (:func:`final_rtol`): the certifying step's own
error, about that residual times λ standard errors, then stays below 1e-10 however
close to tol the certified decrement is.  An explicit solver may certify without the
new point's Hessian (:meth:`Objective.chord`): the previous point's factor gives
½gᵀH₀⁻¹g, and the row curvatures of the logistic and softmax losses change by at most
e^{±c·m} when no predictor moves by more than m, which bounds ½gᵀH⁻¹g; the chord step
then taken leaves the point as close as Newton's would.  A step whose decrement is
≤ √tol is therefore evaluated without its curvature.  The gradient's column scales r_j
(:meth:`Objective.gradient_scale`, each column's root-mean-square) only measure CG's
residuals and the separation signals in the columns' own units.

The solver sees the problem only through an :class:`Objective`; it never touches X, so
the in-memory, CSR and Dask fits share it.  The linear solvers the objectives use for
the direction (Cholesky of the scaled Hessian, preconditioned CG) are in ``linsolve.py``.

Imports: ``params`` (the warnings) and ``diagnostics`` (the separation advice).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .._warn import warn
from .diagnostics import separation_advice, unconverged_message
from .params import ConvergenceWarning, PerfectSeparationWarning

__all__ = ["Objective", "NewtonState", "LineSearchStep", "NewtonResult", "newton_solve",
           "direction", "certified_direction", "is_converged", "separation_suspected",
           "line_search", "capped_step", "final_step", "update", "forcing",
           "stopping_tolerance"]

#: In-loop trigger of the exact separation test (see the module docstring): this many
#: steps, the last ``_SUSPECT_ALIGNED`` along β, and some |η| above ``_SUSPECT_ETA``.
_SUSPECT_MIN_ITER = 15
_SUSPECT_ALIGNED = 5
_SUSPECT_ETA = 10.0

#: Trigger at a converged stop: the last Newton step longer than this times ‖β‖.
_FINAL_REL_STEP = 1e-3

_MAX_HALVINGS = 40
_ARMIJO = 1e-4

#: A line search that fails along a Newton step longer than this (in the columns'
#: units) is tried again along the step cut to this length (Firth's fits cap every
#: step so, logistf's ``maxstep``).
_STEP_CAP = 5.0

#: CG's relative residual in the solve that certifies convergence: the decrement it
#: gives is short of ½gᵀH⁻¹g by about rtol²·κ of it (1e-6·κ, κ the preconditioned
#: condition number).  A step whose own forcing term was already this small certifies
#: as it is; near the optimum the forcing term √(max|g|/Σw) usually is.
_CERT_RTOL = 1e-3

#: The certifying step's error the solve allows, in the objective's metric
#: (‖Δ − Δ*‖_H, standard errors): its relative residual is min(``_CERT_RTOL``,
#: ``_FINAL_ERROR``/λ), λ = √(2·decrement), so that the returned point's distance from
#: the optimum stays about λ² + ``_FINAL_ERROR``, a small part of the 1e-8 standard
#: errors it is tested to, also where the certified point's λ is near √(2·tol)
#: (:func:`final_rtol`).
_FINAL_ERROR = 1e-10


class Objective(Protocol):
    """What the solver needs from a penalised objective f(β) (see ``objectives.py``)."""

    def evaluate(self, beta, curvature: bool):
        """An :class:`~fastgen.logistic.objectives.Evaluation` at β; with ``curvature``
        also the curvature there, for the next :meth:`step`."""

    def has_curvature(self) -> bool:
        """Whether the latest evaluation left what :meth:`step` needs."""

    def step(self, g, gscaled, rtol=None, atol=0.0):
        """The Newton direction Δ (HΔ = −g) at the latest curvature, and ½ΔᵀHΔ; an
        inexact objective solves to relative residual ``rtol`` or, sooner, to
        max|residual| ≤ ``atol``, and also takes a start ``x0=`` (its earlier step)."""

    def gradient_scale(self, sum_weights):
        """The column scales r (broadcastable to β) of the gradient test, taken from the
        first evaluation (with its curvature) and fixed from then on; raises a
        ``ValueError`` naming the column where float64 cannot hold the fit's sums."""

    # Optional: an attribute ``inexact`` (true when ``step`` solves by CG) makes the loop
    # confirm a small decrement by a solve at the certificate's residual
    # (:func:`certified_direction`); an objective without it solves exactly.


@dataclass
class NewtonState:
    """The current iterate and the record of the iterations so far.

    Attributes
    ----------
    beta : ndarray
        Current coefficients (intercept last).
    current : Evaluation
        The objective at ``beta``.
    sum_weights : float
        Σw, which normalises gradient and decrement in the stopping rule.
    gscale : ndarray or float
        The column scales r_j the gradient is divided by (see the module docstring).
    n_iter : int
        Steps taken.
    aligned : int
        Successive steps nearly parallel to β (cosine > 0.9): a separation signal.
    objective_history, grad_norm_history, step_size_history : list of float
    """

    beta: np.ndarray
    current: object
    sum_weights: float
    gscale: object = 1.0
    n_iter: int = 0
    aligned: int = 0
    objective_history: list = field(default_factory=list)
    grad_norm_history: list = field(default_factory=list)
    step_size_history: list = field(default_factory=list)

    @property
    def grad_scaled(self) -> float:
        """max_j |∂f/∂β_j| / (r_j·Σw) at the current iterate."""
        return float(np.max(np.abs(self.current.grad / self.gscale))) / self.sum_weights

    def record(self):
        """Append the current objective and scaled gradient to the histories."""
        self.objective_history.append(self.current.objective)
        self.grad_norm_history.append(self.grad_scaled)


@dataclass(frozen=True)
class LineSearchStep:
    """An accepted trial point: β + t·Δ and the objective there."""

    beta: np.ndarray
    evaluation: object
    t: float


@dataclass(frozen=True)
class _Predicted:
    """The quadratic model's value at the point the certifying step reaches (its
    gradient and η are those of the certified point: not evaluated there)."""

    loss: float
    objective: float
    at: object

    @property
    def grad(self):
        return self.at.grad

    @property
    def eta_max(self):
        return self.at.eta_max


@dataclass(frozen=True)
class NewtonResult:
    """What :func:`newton_solve` returns.

    Attributes
    ----------
    beta : ndarray
        The last iterate.
    loss : float
        Unpenalised loss there.
    converged : bool
    n_iter : int
    cause : str or None
        Why it stopped early: "separation", "line search", "max_iter", or None.
    objective_history, grad_norm_history, step_size_history : ndarray
    separation : SeparationResult or None
        The exact test's answer when it ran (see the module docstring), else None.
    decrement : float
        ½gᵀH⁻¹g of the last solve (at the certified point when converged).
    gram : (ndarray, bool) or None
        The objective's ``curvature_gram()`` at the certified point (None when not
        converged), for the rank checks after the fit.
    """

    beta: np.ndarray
    loss: float
    converged: bool
    n_iter: int
    cause: str | None
    objective_history: np.ndarray
    grad_norm_history: np.ndarray
    step_size_history: np.ndarray
    separation: object = None
    decrement: float = float("nan")
    gram: object = None

    def histories(self) -> dict:
        """The three histories by their LogisticParams field names."""
        return {"objective_history": self.objective_history,
                "grad_norm_history": self.grad_norm_history,
                "step_size_history": self.step_size_history}


# --------------------------------------------------------------------------- the steps


def direction(objective, state, rtol=None, x0=None):
    """The Newton step Δ and decrement ½ΔᵀHΔ at the current iterate (re-evaluating the
    curvature there first if the latest evaluation did not keep it); ``rtol`` for CG
    (default: the objective's forcing term), and ``x0`` its start (a CG objective's
    earlier solve at the same point)."""
    if not objective.has_curvature():
        state.current = objective.evaluate(state.beta, True)
    if x0 is not None:
        return objective.step(state.current.grad, state.grad_scaled, rtol, x0=x0)
    return objective.step(state.current.grad, state.grad_scaled, rtol)


def certified_direction(objective, state, step, dec, tol):
    """``(step, dec, certified)``: whether ½gᵀH⁻¹g ≤ ``tol`` at the current iterate,
    with the step of the solve that decides it.

    An exact solver's decrement decides at once.  A CG decrement estimate is a lower
    bound of ½gᵀH⁻¹g, so an estimate above tol decides "no"; one at or below tol is
    confirmed by a solve to relative residual :func:`final_rtol` (at most
    :data:`_CERT_RTOL`), unless the step's own forcing term (:func:`forcing`) was
    already that small; that solve starts from the step it refines."""
    if dec > tol:
        return step, dec, False
    if getattr(objective, "inexact", False):
        used = forcing(state.grad_scaled)
        for _ in range(3):  # a more accurate decrement is larger, so may ask for more
            rtol = final_rtol(dec)
            if not used > 2.0 * rtol or dec > tol:  # (a little larger: as accurate)
                break
            step, dec = direction(objective, state, rtol, x0=step)
            used = rtol
    return step, dec, is_converged(dec, tol)


def final_rtol(dec):
    """The relative residual of a CG solve that certifies at decrement ``dec``:
    min(:data:`_CERT_RTOL`, :data:`_FINAL_ERROR`/√(2·dec)), so that the certifying
    step's own error, about the residual times λ = √(2·dec) standard errors, stays
    below ``_FINAL_ERROR``."""
    lam = float(np.sqrt(2.0 * max(float(dec), 0.0)))
    return _CERT_RTOL if not lam > _FINAL_ERROR / _CERT_RTOL else _FINAL_ERROR / lam


def forcing(gscaled, rtol=None):
    """CG's relative residual for a Newton step: ``rtol`` if given, else
    min(½, √(max|g|/Σw)) (superlinear convergence of the inexact Newton iteration),
    never below :data:`_CERT_RTOL`: a step that accurate certifies (or is one step
    from certifying), and a tighter solve only buys products."""
    if rtol is not None:
        return rtol
    return min(0.5, max(float(np.sqrt(gscaled)), _CERT_RTOL))


def stopping_tolerance(tol, mean_weight=1.0):
    """What the decrement is compared with: ``tol·min(1, mean_weight)`` (see
    :func:`newton_solve`'s ``mean_weight``)."""
    return tol * min(1.0, float(mean_weight))


def is_converged(decrement, tol):
    """The stopping rule: the Newton decrement ½gᵀH⁻¹g of an accurate solve ≤ tol."""
    return decrement <= tol


def separation_suspected(state, l2, step, stopping=False, converged=False):
    """Whether to run the exact separation test now (unpenalised fits only).

    In the loop (``stopping=False``): ``_SUSPECT_MIN_ITER`` steps taken, the last
    ``_SUSPECT_ALIGNED`` nearly parallel to β, and some |η| > ``_SUSPECT_ETA``.  At the
    stop: not ``converged``, or the last Newton step ‖Δ‖ > ``_FINAL_REL_STEP``·‖β‖.
    """
    if l2 != 0.0:
        return False
    if not stopping:
        return (state.n_iter >= _SUSPECT_MIN_ITER and state.aligned >= _SUSPECT_ALIGNED
                and state.current.eta_max > _SUSPECT_ETA)
    if not converged:
        return True
    nb = _norm(state.beta * state.gscale)  # lengths in the columns' units
    ns = _norm(step * state.gscale)
    return ns > _FINAL_REL_STEP * nb


def line_search(objective, state, step, curvature=True):
    """Armijo backtracking: the first t in 1, ½, ¼, … with f(β + tΔ) ≤ f + 1e-4·t·gᵀΔ
    (or, with f flat to rounding, a smaller max|g|).  None if no t in 40 halvings.
    ``curvature``: evaluate the full step's curvature with it (an explicit solver's
    next step needs it; one its ``chord`` will likely certify does not)."""
    cur = state.current
    f, g = cur.objective, cur.grad
    slope = float(np.vdot(g, step))
    gmax = float(np.max(np.abs(g / state.gscale)))
    eps = np.finfo(np.float64).eps
    t = 1.0
    for ls in range(_MAX_HALVINGS):
        bt = state.beta + t * step
        ev = objective.evaluate(bt, curvature and ls == 0)
        if ev.objective <= f + _ARMIJO * t * slope:
            return LineSearchStep(bt, ev, t)
        if (abs(ev.objective - f) <= 64 * eps * abs(f)
                and float(np.max(np.abs(ev.grad / state.gscale))) < gmax):
            return LineSearchStep(bt, ev, t)  # objective flat to rounding, gradient shrinks
        t *= 0.5
    return None


def capped_step(step, gscale, cap=None):
    """The step scaled so that no coefficient moves by more than ``cap`` (default
    :data:`_STEP_CAP`) in its column's units (β_j·r_j), or None where it already does
    not."""
    cap = _STEP_CAP if cap is None else cap
    big = float(np.max(np.abs(step * gscale), initial=0.0))
    if not (big > cap and np.isfinite(big)):
        return None
    return step * (cap / big)


def final_step(objective, state, step, dec):
    """Take the step that certified convergence.

    The certified point is within ½gᵀH⁻¹g ≤ tol of the minimum, well inside the region
    where Newton's quadratic model holds; the step from it squares its distance from
    the optimum.  It costs nothing to take: the objective there is the model's,
    f − ½gᵀH⁻¹g (exact to O(λ³)), and the loss that minus the objective's
    ``penalty(β)`` where it has one.  An objective with ``predict_final(β, step)``
    (Firth's, whose penalty needs a pass to evaluate) predicts its own evaluation
    there."""
    bt = state.beta + step
    predict = getattr(objective, "predict_final", None)
    if predict is not None:
        ev = predict(bt, step)
        f = ev.objective
    else:
        f = state.current.objective - dec
        penalty = getattr(objective, "penalty", None)
        loss = f - penalty(bt) if penalty is not None else state.current.loss - dec
        ev = _Predicted(loss, f, state.current)
    update(state, step, LineSearchStep(bt, ev, 1.0), record=False)
    state.objective_history.append(f)
    state.grad_norm_history.append(float("nan"))  # not evaluated there


def _norm(v):
    """‖v‖₂ without overflow or underflow in its squares (the largest entry factored
    out): far starts and constrained fits reach coefficients near float64's limits."""
    big = float(np.max(np.abs(v), initial=0.0))
    if not (big > 0.0 and np.isfinite(big)):
        return big
    return big * float(np.linalg.norm(v / big))


def update(state, step, accepted, record=True):
    """Move to the accepted point, count the step and (``record``) record it."""
    # Alignment of the step with the iterate: along a separating direction the
    # iterates grow without bound in a fixed direction.  Both in the columns' units
    # (β_j·r_j), so the angle does not depend on the units of X; each normalised first,
    # so that no product of two norms underflows.
    beta = state.beta * state.gscale
    step = step * state.gscale
    nb, ns = _norm(beta), _norm(step)
    cos = float(np.vdot(step / ns, beta / nb)) if nb > 0 and ns > 0 else 0.0
    state.aligned = state.aligned + 1 if cos > 0.9 else 0
    state.beta, state.current = accepted.beta, accepted.evaluation
    state.n_iter += 1
    if record:
        state.record()
    state.step_size_history.append(accepted.t)


# --------------------------------------------------------------------------- the loop


def newton_solve(objective, beta0, *, max_iter, tol, sum_weights, l2,
                 separation=None, what="fit_logistic", mean_weight=1.0,
                 quiet=False, start_given=False) -> NewtonResult:
    """Minimise ``objective`` from ``beta0`` by damped Newton steps.

    Parameters
    ----------
    objective : Objective
    beta0 : ndarray
        Starting point.
    max_iter : int
        Maximum steps.
    tol : float
        Stopping tolerance on the Newton decrement ½gᵀH⁻¹g, in the objective's units
        (see the module docstring); negative never converges.
    sum_weights : float
        Σw.
    l2 : float
        The penalty (separation is looked for only when it is 0).
    separation : callable, optional
        ``separation()`` → the exact test's result (an object with ``separated``,
        ``kind`` and ``infinite_coefficients()``, or None when it cannot tell), called at
        most once, when :func:`separation_suspected`.  None: no separation check.
    what : str
        The public function named in warnings.
    mean_weight : float, default 1
        Σw / n: the decrement is compared with ``tol·min(1, mean_weight)``, nats per
        unit-weight row: weights that are scaled down (relative weights, 1e-280 or
        1/n) certify no sooner than unit weights; frequency weights (≥ 1) count in
        nats, as their repeated rows would.
    quiet : bool, default False
        No warning when it stops unconverged (for fits inside other fits, whose caller
        reads ``converged``).
    start_given : bool, default False
        ``beta0`` is the caller's ``init``: a warning at ``max_iter`` then says that the
        start may be far (:func:`~fastgen.logistic.diagnostics.unconverged_message`).

    Objective policies, each optional (``PenalisedObjective`` of Firth's fits has
    them): ``limit_step(step)`` caps a step before its line search; ``make_exact()``
    says whether the latest evaluation's gradient was an approximation (an evaluation
    marks one with ``approximate``) and replaces it by the exact one, which alone may
    certify convergence or end a failed line search; ``predict_final(beta, step)``
    predicts the evaluation at the point the certifying step reaches (see
    :func:`final_step`).

    Returns
    -------
    NewtonResult

    Warns
    -----
    PerfectSeparationWarning
        If the exact test finds the data separated (``converged`` is then False).
    ConvergenceWarning
        If it stops unconverged otherwise: failed line search, or ``max_iter``.
    """
    state = NewtonState(beta0, objective.evaluate(beta0, True), float(sum_weights))
    state.gscale = objective.gradient_scale(state.sum_weights)
    state.record()
    converged, cause, sep = False, None, None
    checked = separation is None or l2 != 0.0
    dec = np.inf
    gram = None
    dec_tol = stopping_tolerance(tol, mean_weight)
    make_exact = getattr(objective, "make_exact", None)
    limit_step = getattr(objective, "limit_step", None)
    chord = getattr(objective, "chord", None)
    while True:
        cert = chord(state.current.grad, dec_tol) if chord is not None else None
        if cert is not None:  # the previous point's Hessian certifies (Objective.chord)
            step, model, dec = cert
            converged = True
        else:
            step, dec = direction(objective, state)
            step, dec, converged = certified_direction(objective, state, step, dec,
                                                       dec_tol)
            model = dec
            if converged and make_exact is not None and make_exact():
                continue  # an approximate gradient never certifies: solve again, exactly
        if converged:
            # the curvature at (or next to) the certified point, for the rank checks
            gram = objective.curvature_gram() if hasattr(objective, "curvature_gram") \
                else None
            final_step(objective, state, step, model)
            break
        if not checked and separation_suspected(state, l2, step):
            checked, sep = True, separation()
            if sep is not None and sep.separated:
                break
        if state.n_iter >= max_iter:
            break
        # a step this close to the optimum leaves about dec² (Newton's quadratic
        # convergence): the next point's chord will likely certify, without curvature
        accepted = line_search(objective, state,
                               step if limit_step is None else limit_step(step),
                               chord is None or not dec <= np.sqrt(max(dec_tol, 0.0)))
        if accepted is None and not getattr(state.current, "approximate", False):
            # from saturated probabilities the Newton step can be astronomically long
            # (the curvature vanishes, the gradient does not): search along it again,
            # capped at _STEP_CAP in the columns' units
            short = capped_step(step, state.gscale)
            if short is not None:
                accepted = line_search(objective, state, short)
        if accepted is None:
            approximate = getattr(state.current, "approximate", False)
            current = objective.evaluate(state.beta, True)  # the curvature at the iterate
            if approximate and make_exact is not None:
                make_exact()
                state.current = current
                continue  # the approximate gradient misled: solve again, exactly
            cause = "line search"
            break
        update(state, step, accepted)
    if not checked and separation_suspected(state, l2, step, True, converged):
        sep = separation()
    if sep is not None and sep.separated:
        converged, cause = False, "separation"
    if not converged:
        if cause is None:
            cause = "max_iter"
        if not quiet:
            _warn_stopped(cause, state, max_iter, tol, sep, what, dec, dec_tol,
                          start_given)
    return NewtonResult(
        beta=state.beta, loss=state.current.loss, converged=converged, n_iter=state.n_iter,
        cause=None if converged else cause,
        objective_history=np.asarray(state.objective_history, dtype=np.float64),
        grad_norm_history=np.asarray(state.grad_norm_history, dtype=np.float64),
        step_size_history=np.asarray(state.step_size_history, dtype=np.float64),
        separation=sep, decrement=float(dec), gram=gram,
    )


def _warn_stopped(cause, state, max_iter, tol, sep, what, dec, dec_tol, start_given):
    n_iter = state.n_iter
    if cause == "separation":
        inf = sep.infinite_coefficients()
        shown = ", ".join(inf[:10]) + (f", … ({len(inf)} in all)" if len(inf) > 10 else "")
        msg = (
            f"{what}: {sep.kind} separation: the classes are perfectly separable, so "
            f"the unpenalised maximum-likelihood estimate does not exist; these "
            f"coefficients run to ±infinity: {shown}. Stopped after {n_iter} "
            f"iterations; the returned coefficients are finite but arbitrary in scale. "
            f"{separation_advice(sep.classes.shape[0])}"
        )
        warn(msg, PerfectSeparationWarning)
        return
    warn(unconverged_message(what, cause, n_iter, max_iter, dec, tol, dec_tol,
                             start_given, value=state.current.objective),
         ConvergenceWarning)
