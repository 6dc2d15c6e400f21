"""The penalised logistic objectives the Newton solver minimises: binary and multinomial.

Each objective holds a sample (any :class:`~fastgen.logistic.data.LogisticData`), the
ridge penalty ``l2`` (never on the intercept) and the choice between the explicit
Hessian with a Cholesky solve and Newton-CG on Hessian-vector products.  It answers the
solver's three calls (:class:`~fastgen.logistic.newton.Objective`): ``evaluate`` (loss,
penalised objective, gradient), ``has_curvature`` and ``step`` (the Newton direction).

Imports: ``newton`` (its linear solvers) and scipy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .newton import cholesky_solve, pcg

__all__ = ["BINARY_EXPLICIT_MAX_P", "MULTINOMIAL_EXPLICIT_MAX", "BOHNING_FULL_MAX_P",
           "Evaluation", "BinaryObjective", "MultinomialObjective", "make_objective"]

#: Binary problems with at most this many parameters (d + intercept) use the explicit
#: Hessian and Cholesky; wider ones use Jacobi-preconditioned CG on Hessian-vector
#: products (the dense p × p Hessian of a 100 000-column text matrix would need 80 GB).
BINARY_EXPLICIT_MAX_P = 2048

#: Multinomial problems with K·p at most this use the explicit (K·p)² Hessian; larger
#: ones Böhning-preconditioned Newton-CG.  Cost model: the explicit Hessian takes about
#: n·(K·p)² flops per iteration at the GEMM rate, Newton-CG about 10–25 Hessian-vector
#: products of 4·n·K·p flops each at the loop rate, so the explicit form only wins for
#: small K·p.  Measured crossover (n = 200 000, l2 = 1, 2 cores, whole fit, explicit vs
#: CG): K·p = 33: 0.19 vs 0.21 s; 64: 0.30 vs 0.30 s; 105: 0.51 vs 0.43 s; 160: 0.74 vs
#: 0.47 s; 320: 2.62 vs 0.83 s.  (W9, K·p = 650, uses CG.)  Since the Hessian-vector
#: products go by transposed tiles, CG wins on well-conditioned synthetic data at every
#: K·p from 6 up (n = 2e5: 55 vs 151 ms at K·p = 33, 76 vs 283 ms at 64); but on real
#: data the explicit Hessian keeps the lead where CG needs many products per step
#: (unscaled wine, K·p = 42: 5.3 vs 11.3 ms at l2 = 1 with 113 products, 8.8 vs 27.8 ms
#: at l2 = 1e-4; iris 3.6 vs 5.4 ms), so the threshold stays.
MULTINOMIAL_EXPLICIT_MAX = 64

#: Above this many parameters per class the Böhning preconditioner keeps only its
#: diagonal (the full p × p factor would not fit for wide sparse data).
BOHNING_FULL_MAX_P = 2048


@dataclass(frozen=True)
class Evaluation:
    """The objective at one point.

    Attributes
    ----------
    loss : float
        Unpenalised negative log-likelihood Σ_i w_i (−log p(y_i | x_i)).
    objective : float
        loss + (l2 / 2)·‖coef‖².
    grad : ndarray
        Gradient of ``objective``, shaped like β.
    eta_max : float
        max|η| (binary) or the largest spread of η across classes: the separation
        signal.
    """

    loss: float
    objective: float
    grad: np.ndarray
    eta_max: float


def _forcing(gscaled, rtol):
    """CG's relative residual: ``rtol`` if given, else min(½, √(max|g|/Σw)) (superlinear
    convergence of the inexact Newton iteration)."""
    return min(0.5, np.sqrt(gscaled)) if rtol is None else rtol


def _penalty_mask(p, fit_intercept):
    """1 on the coefficients, 0 on the intercept (stored last)."""
    pen = np.ones(p)
    if fit_intercept:
        pen[-1] = 0.0
    return pen


class BinaryObjective:
    """Penalised binary negative log-likelihood over β = [coef, intercept] (p,).

    ``f(β) = Σ_i w_i (softplus(η_i) − y_i η_i) + (l2/2) Σ_j pen_j β_j²``, η = X̃β.
    Explicit: H = X̃ᵀdiag(wπ(1−π))X̃ + l2·diag(pen) with a Cholesky solve; otherwise
    Jacobi-preconditioned CG on the products X̃ᵀdiag(s)X̃v + l2·pen∘v.
    """

    def __init__(self, data, l2, explicit):
        self.data, self.l2, self.explicit = data, l2, explicit
        self.pen = _penalty_mask(data.p, data.fit_intercept)
        self.H = None
        self.s = None
        self.nprod = 0
        self.solver = "newton-cholesky" if explicit else "newton-cg"

    def evaluate(self, beta, curvature):
        """Loss, objective and gradient at β (and the curvature there if asked)."""
        want = curvature and self.explicit
        loss, g, H, emax, s = self.data.binary(beta, want, not self.explicit)
        f = loss + 0.5 * self.l2 * float(np.sum(self.pen * beta * beta))
        g = g + self.l2 * self.pen * beta
        self.s = s
        if want:
            H[np.diag_indices_from(H)] += self.l2 * self.pen
            self.H = H
        elif self.explicit:
            self.H = None
        return Evaluation(loss, f, g, emax)

    def has_curvature(self):
        """Whether the latest evaluation left what ``step`` needs."""
        return self.H is not None or not self.explicit

    def curvature_gram(self):
        """``(G, is_design)``: a p × p matrix with the null space of the design, for the
        collinearity check of an unpenalised fit — the Hessian X̃ᵀdiag(wπ(1−π))X̃ at the
        latest evaluation (explicit solver; ``is_design`` False), or (None, False)."""
        if self.explicit and self.H is not None:
            return self.H - np.diag(self.l2 * self.pen), False
        return None, False

    @property
    def inexact(self):
        """Whether ``step`` solves by CG (a relative residual ``rtol``)."""
        return not self.explicit

    def step(self, g, gscaled, rtol=None, atol=0.0):
        """Newton direction x (H x = −g, inexactly for CG: relative residual ``rtol``,
        by default min(½, √gscaled), or max|residual| ≤ ``atol``) and the decrement
        ½xᵀHx."""
        if self.explicit:
            x = cholesky_solve(self.H, -g, "Hessian")
            return x, 0.5 * float(-g @ x)
        data, s = self.data, self.s
        diag = data.weighted_sq_colsum(s) + self.l2 * self.pen
        diag = diag + 1e-12 * max(float(diag.max()), 1e-300)
        x, dec, nprod = pcg(
            lambda v: data.binary_hessp(s, v) + self.l2 * self.pen * v,
            lambda r: r / diag, g, _forcing(gscaled, rtol), max(10, min(g.size, 250)),
            atol)
        self.nprod += nprod
        return x, dec


class MultinomialObjective:
    """Penalised softmax negative log-likelihood over B (K, p), symmetric parametrisation.

    ``f(B) = −Σ_i w_i log softmax(B x̃_i)_{y_i} + (l2/2) Σ_k Σ_j pen_j B_kj²``.  Every
    iterate is kept centred over classes (Σ_k B_k = 0), the subspace on which the
    objective is strictly convex; the reference-class form is produced at the end.
    """

    def __init__(self, data, l2, K, explicit):
        self.data, self.l2, self.K, self.explicit = data, l2, K, explicit
        self.pen = _penalty_mask(data.p, data.fit_intercept)
        self.B = None
        self.P = None
        self.nprod = 0
        self.solver = "newton-cholesky" if explicit else "newton-cg"
        self._precond = None
        self._blocks = None
        self._gram = None

    def evaluate(self, B, curvature):
        """Loss, objective and centred gradient at B (P kept for the curvature)."""
        loss, G, emax, P = self.data.multinomial(B)
        self.B, self.P = B, P
        f = loss + 0.5 * self.l2 * float(np.sum(self.pen * B * B))
        G = G + self.l2 * self.pen * B
        G -= G.mean(axis=0)
        return Evaluation(loss, f, G, emax)

    def has_curvature(self):
        """Always: the curvature comes from the latest evaluation's point."""
        return True

    def hessian(self):
        """The penalised (K·p)² Hessian at the latest evaluation, made definite."""
        K, p = self.K, self.data.p
        H = self.data.multinomial_hessian(self.B, self.P)
        # Σ_k H_kk = X̃ᵀ diag(w Σ_k P_k(1 − P_k)) X̃: the design's null space (kept for
        # the collinearity check)
        self._blocks = np.einsum("kakb->ab", H.reshape(K, p, K, p))
        H[np.diag_indices_from(H)] += self.l2 * np.tile(self.pen, K)
        # The objective is flat along B_k → B_k + v (same v for every class) except for
        # the penalty; adding μ·(11ᵀ/K ⊗ I) leaves steps within the centred subspace
        # unchanged and makes the system definite.
        mu = max(np.trace(H) / (K * p), 1.0)
        Hr = H.reshape(K, p, K, p)
        for k in range(K):
            for m in range(K):
                Hr[k, :, m, :][np.diag_indices(p)] += mu / K
        return H

    def _bohning(self):
        """The fixed Böhning bound ½X̃ᵀWX̃ + l2·diag(pen), factorised once (or its diagonal)."""
        if self._precond is None:
            data = self.data
            if data.p <= BOHNING_FULL_MAX_P:
                A = 0.5 * data.design_gram()  # ½ X̃ᵀWX̃
                self._gram = A.copy()
                A[np.diag_indices_from(A)] += self.l2 * self.pen
                A[np.diag_indices_from(A)] += 1e-10 * max(np.trace(A) / data.p, 1e-300)
                c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
                self._precond = ("full", c)
            else:
                diag = 0.5 * data.weighted_sq_colsum(data.row_weights()) + self.l2 * self.pen
                diag += 1e-10 * max(float(diag.mean()), 1e-300)
                self._precond = ("diag", diag)
        return self._precond

    def curvature_gram(self):
        """``(G, is_design)`` for the collinearity check: Σ_k H_kk at the latest explicit
        step (a Hessian), the design Gram ½X̃ᵀWX̃ of the Böhning preconditioner
        (``is_design`` True), or (None, False)."""
        if self.explicit and self._blocks is not None:
            return self._blocks, False
        if self._gram is not None:
            return self._gram, True
        return None, False

    def _apply_precond(self, R):
        kind, fac = self._bohning()
        Rc = R - R.mean(axis=0)
        if kind == "full":
            return scipy.linalg.cho_solve(fac, Rc.T, check_finite=False).T
        return Rc / fac

    @property
    def inexact(self):
        """Whether ``step`` solves by CG (a relative residual ``rtol``)."""
        return not self.explicit

    def step(self, G, gscaled, rtol=None, atol=0.0):
        """Centred Newton direction X (H X = −G, inexactly for CG: relative residual
        ``rtol``, by default min(½, √gscaled), or max|residual| ≤ ``atol``) and
        ½⟨X, HX⟩."""
        K, p = self.K, self.data.p
        if self.explicit:
            H = self.hessian()
            x = cholesky_solve(H, -G.reshape(-1), "Hessian").reshape(K, p)
            x -= x.mean(axis=0)
            return x, 0.5 * float(-np.vdot(G, x))
        data, P = self.data, self.P

        def hessp(V):
            HV = data.multinomial_hessp(P, V) + self.l2 * self.pen * V
            return HV - HV.mean(axis=0)

        x, dec, nprod = pcg(hessp, self._apply_precond, G, _forcing(gscaled, rtol),
                            max(10, min(G.size, 250)), atol)
        self.nprod += nprod
        x -= x.mean(axis=0)
        return x, dec


def make_objective(data, l2, n_classes, explicit=None):
    """The objective for ``n_classes`` on ``data``; ``explicit=None`` picks the solver
    by size (:data:`BINARY_EXPLICIT_MAX_P`, :data:`MULTINOMIAL_EXPLICIT_MAX`)."""
    if n_classes == 2:
        if explicit is None:
            explicit = data.p <= BINARY_EXPLICIT_MAX_P
        return BinaryObjective(data, l2, explicit)
    if explicit is None:
        explicit = n_classes * data.p <= MULTINOMIAL_EXPLICIT_MAX
    return MultinomialObjective(data, l2, n_classes, explicit)
