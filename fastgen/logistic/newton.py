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

Stopping rule (scikit-learn's newton-cholesky rule on the weight-normalised objective,
in the units of the data): converged when ``max_j |∂f/∂β_j| / (r_j·Σw) ≤ tol`` and the
Newton decrement ``½ΔᵀHΔ / Σw ≤ tol``.  ``r_j`` is column j's root-mean-square, taken
from the curvature at the start (:meth:`Objective.gradient_scale`; 1 for the intercept
and for standardised features, where the rule is scikit-learn's).  Both tests are then
unit-free: rescaling a column by c rescales its gradient and its r_j by c, and leaves
the decrement unchanged, so a fit stops at the same iterate whatever the units of X.
The linear solves are unit-free too: :func:`cholesky_solve` factorises the Hessian
scaled to a unit diagonal, and :func:`pcg` measures residuals in the same units as the
gradient test.

The solver sees the problem only through an :class:`Objective`; it never touches X, so
the in-memory, CSR and Dask fits share it.  The linear solvers the objectives use for
the direction (:func:`cholesky_solve`, :func:`pcg`) live here too.

Imports: ``params`` (the warning) only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import scipy.linalg

from .._warn import warn
from .diagnostics import separation_advice
from .params import ConvergenceWarning, PerfectSeparationWarning

__all__ = ["Objective", "NewtonState", "LineSearchStep", "NewtonResult", "newton_solve",
           "direction", "converged_on_loose_check", "is_converged", "separation_suspected",
           "line_search", "update", "cholesky_solve", "pcg"]

#: In-loop trigger of the exact separation test (see the module docstring): this many
#: steps, the last ``_SUSPECT_ALIGNED`` along β, and some |η| above ``_SUSPECT_ETA``.
_SUSPECT_MIN_ITER = 15
_SUSPECT_ALIGNED = 5
_SUSPECT_ETA = 10.0

#: Trigger at a converged stop: the last Newton step longer than this times ‖β‖.
_FINAL_REL_STEP = 1e-3

_MAX_HALVINGS = 40
_ARMIJO = 1e-4

#: The convergence check of a Newton-CG fit (:func:`converged_on_loose_check`): CG's
#: relative residual, and the margin below tol its decrement estimate must reach.
_CHECK_RTOL = 0.5
_CHECK_MARGIN = 1e-2

#: End-game accuracy of a Newton-CG step: CG may stop once its residual r = −g − HΔ
#: (the gradient the quadratic model predicts at β + Δ) has max|r| ≤ this fraction of
#: tol·Σw, whatever its relative size: a more accurate solve cannot make the next
#: iterate pass the test sooner; without it the last solve takes about twice the
#: Hessian-vector products (benchmarks/NOTES.md).
_END_MARGIN = 0.1


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
        max|residual| ≤ ``atol``."""

    def gradient_scale(self, sum_weights):
        """The column scales r (broadcastable to β) of the gradient test, taken from the
        first evaluation (with its curvature) and fixed from then on; raises a
        ``ValueError`` naming the column where float64 cannot hold the fit's sums."""

    # Optional: an attribute ``inexact`` (true when ``step`` solves by CG) lets the loop
    # test convergence with a loose solve first (:func:`converged_on_loose_check`); an
    # objective without it is solved at full accuracy at every step.


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

    def histories(self) -> dict:
        """The three histories by their LogisticParams field names."""
        return {"objective_history": self.objective_history,
                "grad_norm_history": self.grad_norm_history,
                "step_size_history": self.step_size_history}


# --------------------------------------------------------------------------- linear solves


def cholesky_solve(H, rhs, what):
    """Solve H x = rhs by Cholesky of H scaled to a unit diagonal, D⁻¹HD⁻¹ (D² = diag H),
    adding jitter 1e-10·I (then ×100) to the scaled matrix if the factorisation fails.

    The scaled matrix, hence whether it factorises and how much jitter it takes, does
    not depend on the units of the columns (a zero diagonal entry keeps scale 1)."""
    q = H.shape[0]
    dg = np.diag(H)
    D = np.sqrt(np.where((dg > 0.0) & np.isfinite(dg), dg, 1.0))
    Hs = H / D[:, None] / D[None, :]
    bs = rhs / D
    jitter = 0.0
    for _ in range(6):
        try:
            A = Hs if jitter == 0.0 else Hs + jitter * np.eye(q)
            c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
            x = scipy.linalg.cho_solve(c, bs, check_finite=False) / D
            if np.all(np.isfinite(x)):
                return x
        except np.linalg.LinAlgError:
            pass
        jitter = 1e-10 if jitter == 0.0 else jitter * 100.0
    raise np.linalg.LinAlgError(
        f"the {what} is singular even with jitter {jitter:.3g} (relative to its "
        f"diagonal): the features are (nearly) collinear or constant; pass l2 > 0"
    )


def pcg(hessp, precond, g, rtol, maxiter, atol=0.0, scale=1.0):
    """Preconditioned CG for H x = −g.  Returns (x, ½xᵀHx, number of products).

    Stops when ‖r/scale‖ ≤ rtol·‖g/scale‖ or max|r/scale| ≤ ``atol``, after ``maxiter``
    products, or on non-positive curvature; falls back to the preconditioned
    steepest-descent step if no progress was made.  ``scale`` (broadcastable to g, the
    gradient test's column scales) makes both tests unit-free.
    """
    x = np.zeros_like(g)
    r = -g
    z = precond(r)
    dirn = z.copy()
    rz = float(np.vdot(r, z))
    gnorm = float(np.linalg.norm(g / scale))
    nprod = 0
    for _ in range(maxiter):
        Hd = hessp(dirn)
        nprod += 1
        dHd = float(np.vdot(dirn, Hd))
        if not dHd > 0.0:
            break
        alpha = rz / dHd
        x += alpha * dirn
        r -= alpha * Hd
        rs = r / scale
        if np.linalg.norm(rs) <= rtol * gnorm or float(np.max(np.abs(rs))) <= atol:
            break
        z = precond(r)
        rz_new = float(np.vdot(r, z))
        dirn *= rz_new / rz
        dirn += z
        rz = rz_new
    if nprod == 0 or not np.any(x):
        x = precond(-g)  # preconditioned steepest descent as a fallback
    # Hx = −g − r, so ½xᵀHx = ½(−gᵀx − rᵀx)
    dec = 0.5 * float(-np.vdot(g, x) - np.vdot(r, x))
    return x, max(dec, 0.0), nprod


# --------------------------------------------------------------------------- the steps


def direction(objective, state, rtol=None, tol=None):
    """The Newton step Δ and decrement ½ΔᵀHΔ at the current iterate (re-evaluating the
    curvature there first if the latest evaluation did not keep it); ``rtol`` for CG.

    With ``tol`` (the stopping tolerance) and a gradient that fails the test, CG also
    stops once its residual predicts max|g/r|/Σw ≤ ``_END_MARGIN``·tol at β + Δ.  Not at
    a point that passes the gradient test: there the decrement of an accurate solve
    decides (:func:`is_converged`), and an early stop would underestimate it.
    """
    gscaled = state.grad_scaled
    if not objective.has_curvature():
        state.current = objective.evaluate(state.beta, True)
    atol = 0.0
    if rtol is None and tol is not None and gscaled > tol:
        atol = _END_MARGIN * tol * state.sum_weights
    return objective.step(state.current.grad, gscaled, rtol, atol)


def converged_on_loose_check(objective, state, tol):
    """At a point whose gradient passes the test, whether a loose CG solve (relative
    residual ``_CHECK_RTOL``) already shows the decrement below ``_CHECK_MARGIN·tol``.

    CG's decrement estimate only grows towards the exact ½gᵀH⁻¹g, by a factor of at
    least about 4/κ after one product (κ the preconditioned condition number), so the
    margin covers κ up to a few hundred.  At a converged point the gradient is orders
    below tol and the decrement, quadratic in it, far below the margin: the test costs
    one to three Hessian-vector products instead of the ten or more that the step's
    usual accuracy √(max|g|/Σw) would take (benchmarks/NOTES.md).  If the loose test
    fails, the loop solves again at the usual accuracy.
    """
    if not getattr(objective, "inexact", False) or state.grad_scaled > tol:
        return False, None
    step, dec = direction(objective, state, _CHECK_RTOL)
    return dec / state.sum_weights <= _CHECK_MARGIN * tol, step


def is_converged(state, decrement, tol):
    """max|∇f| / Σw ≤ tol and ½ΔᵀHΔ / Σw ≤ tol."""
    return state.grad_scaled <= tol and decrement / state.sum_weights <= tol


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
    nb = float(np.linalg.norm(state.beta * state.gscale))  # lengths in the columns' units
    ns = float(np.linalg.norm(step * state.gscale))
    return ns > _FINAL_REL_STEP * nb


def line_search(objective, state, step):
    """Armijo backtracking: the first t in 1, ½, ¼, … with f(β + tΔ) ≤ f + 1e-4·t·gᵀΔ
    (or, with f flat to rounding, a smaller max|g|).  None if no t in 40 halvings."""
    cur = state.current
    f, g = cur.objective, cur.grad
    slope = float(np.vdot(g, step))
    gmax = float(np.max(np.abs(g / state.gscale)))
    eps = np.finfo(np.float64).eps
    t = 1.0
    for ls in range(_MAX_HALVINGS):
        bt = state.beta + t * step
        ev = objective.evaluate(bt, ls == 0)
        if ev.objective <= f + _ARMIJO * t * slope:
            return LineSearchStep(bt, ev, t)
        if (abs(ev.objective - f) <= 64 * eps * abs(f)
                and float(np.max(np.abs(ev.grad / state.gscale))) < gmax):
            return LineSearchStep(bt, ev, t)  # objective flat to rounding, gradient shrinks
        t *= 0.5
    return None


def update(state, step, accepted):
    """Move to the accepted point, count the step and record it."""
    # Alignment of the step with the iterate: along a separating direction the
    # iterates grow without bound in a fixed direction.  Both in the columns' units
    # (β_j·r_j), so the angle does not depend on the units of X; each normalised first,
    # so that no product of two norms underflows.
    beta = state.beta * state.gscale
    step = step * state.gscale
    nb, ns = np.linalg.norm(beta), np.linalg.norm(step)
    cos = float(np.vdot(step / ns, beta / nb)) if nb > 0 and ns > 0 else 0.0
    state.aligned = state.aligned + 1 if cos > 0.9 else 0
    state.beta, state.current = accepted.beta, accepted.evaluation
    state.n_iter += 1
    state.record()
    state.step_size_history.append(accepted.t)


# --------------------------------------------------------------------------- the loop


def newton_solve(objective, beta0, *, max_iter, tol, sum_weights, l2,
                 separation=None, what="fit_logistic") -> NewtonResult:
    """Minimise ``objective`` from ``beta0`` by damped Newton steps.

    Parameters
    ----------
    objective : Objective
    beta0 : ndarray
        Starting point.
    max_iter : int
        Maximum steps.
    tol : float
        Stopping tolerance (see the module docstring); negative never converges.
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
    while True:
        done, step = converged_on_loose_check(objective, state, tol)
        if done:
            converged = True
            break
        step, dec = direction(objective, state, tol=tol)
        if is_converged(state, dec, tol):
            converged = True
            break
        if not checked and separation_suspected(state, l2, step):
            checked, sep = True, separation()
            if sep is not None and sep.separated:
                break
        if state.n_iter >= max_iter:
            break
        accepted = line_search(objective, state, step)
        if accepted is None:
            objective.evaluate(state.beta, True)  # restore the curvature at the iterate
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
        _warn_stopped(cause, state, max_iter, tol, sep, what)
    return NewtonResult(
        beta=state.beta, loss=state.current.loss, converged=converged, n_iter=state.n_iter,
        cause=None if converged else cause,
        objective_history=np.asarray(state.objective_history, dtype=np.float64),
        grad_norm_history=np.asarray(state.grad_norm_history, dtype=np.float64),
        step_size_history=np.asarray(state.step_size_history, dtype=np.float64),
        separation=sep,
    )


def _warn_stopped(cause, state, max_iter, tol, sep, what):
    n_iter, gscaled = state.n_iter, state.grad_scaled
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
    elif cause == "line search":
        msg = (
            f"{what} stopped after {n_iter} iterations: the line search could not "
            f"decrease the objective (max|gradient|/sum(w) = {gscaled:.3g} > tol = "
            f"{tol:.3g}, each column's gradient in units of its root-mean-square); tol "
            f"may be below the attainable precision."
        )
    else:
        msg = (
            f"{what} did not converge in max_iter={max_iter} iterations "
            f"(max|gradient|/sum(w) = {gscaled:.3g}, tol = {tol:.3g}); increase max_iter."
        )
    warn(msg, ConvergenceWarning)
