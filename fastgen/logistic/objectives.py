"""The penalised logistic objectives the Newton solver minimises: binary and multinomial.

Each objective holds a sample (any :class:`~fastgen.logistic.data.LogisticData`), the
ridge penalty ``l2`` (never on the intercept) and the choice between the explicit
Hessian with a Cholesky solve and Newton-CG on Hessian-vector products.  It answers the
solver's calls (:class:`~fastgen.logistic.newton.Objective`): ``evaluate`` (loss,
penalised objective, gradient), ``has_curvature``, ``gradient_scale`` and ``step`` (the
Newton direction).

Units.  Every solve works on the problem scaled column by column, so that neither a
tolerance nor a jitter depends on the units of X: Cholesky factorises the Hessian scaled
to a unit diagonal, CG is preconditioned by the Hessian's diagonal (binary) or by its
diagonal blocks per class, or the Böhning bound, scaled to a unit diagonal
(multinomial), and its residuals are measured
in the columns' units (:func:`~fastgen.logistic.columns.column_scales`).  Where float64
cannot hold the sums the Hessian is made of (x² times the weights overflows, or falls
below the normal range), the fit raises a ``ValueError`` that names the column and says
to rescale (``columns.py``).

Imports: ``columns``, ``linsolve``, ``newton`` (the forcing term) and scipy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .columns import check_curvature_diagonal, column_scales, identified_columns
from .linsolve import cholesky_factor, factor_solve, pcg
from .newton import forcing
from .precondition import apply_blocks, block_factors, unit_diagonal

__all__ = ["BINARY_EXPLICIT_MAX_P", "MULTINOMIAL_EXPLICIT_MAX", "BOHNING_FULL_MAX_P",
           "Evaluation", "BinaryObjective", "MultinomialObjective", "make_objective",
           "chord_certificate"]

#: Binary problems with at most this many parameters (d + intercept) use the explicit
#: Hessian and Cholesky; wider ones use Jacobi-preconditioned CG on Hessian-vector
#: products (the dense p × p Hessian of a 100 000-column text matrix would need 80 GB).
BINARY_EXPLICIT_MAX_P = 2048

#: Multinomial problems with K·p at most this use the explicit (K·p)² Hessian; larger
#: ones Böhning-preconditioned Newton-CG.  Cost model: the explicit Hessian takes about
#: n·(K·p)² flops per iteration at the GEMM rate, Newton-CG about 10–25 Hessian-vector
#: products of 4·n·K·p flops each at the loop rate, so the explicit form only wins for
#: small K·p.  On well-conditioned synthetic data CG wins at almost every K·p, but on
#: real data with few coefficients the explicit Hessian keeps the lead where CG needs
#: many products per step, so the threshold stays (the crossover is in
#: benchmarks/NOTES.md).
MULTINOMIAL_EXPLICIT_MAX = 64

#: Above this many parameters per class the Böhning preconditioner keeps only its
#: diagonal (the full p × p factor would not fit for wide sparse data).
BOHNING_FULL_MAX_P = 2048

#: Multinomial Newton-CG is preconditioned by the Hessian's diagonal blocks H_kk, read
#: on a fixed subsample of max(``BLOCK_PRECOND_ROWS``, 64·p) rows, at most
#: ``BLOCK_PRECOND_ENTRIES`` / p (:meth:`MultinomialObjective.block_preconditioner`),
#: where p is at most ``BLOCK_PRECOND_MAX_P`` and the K factors hold at most
#: ``BLOCK_PRECOND_MAX`` entries; elsewhere by the Böhning bound.
BLOCK_PRECOND_ROWS = 4096
BLOCK_PRECOND_ENTRIES = 1 << 22
BLOCK_PRECOND_MAX_P = 512
BLOCK_PRECOND_MAX = 1 << 22


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


def _penalised(loss, g, l2, pen, beta):
    """The objective loss + (l2/2)·Σ pen·β² and its gradient (the loss's alone when
    l2 = 0: β² may overflow where the features are tiny)."""
    if l2 == 0.0:
        return loss, g
    return loss + 0.5 * l2 * float(np.sum(pen * beta * beta)), g + l2 * pen * beta


def _penalty_mask(p, fit_intercept):
    """1 on the coefficients, 0 on the intercept (stored last)."""
    pen = np.ones(p)
    if fit_intercept:
        pen[-1] = 0.0
    return pen


def _put(x, k, v):
    x[k] = v
    return x


#: The most of tol² a chord step may leave of the decrement (:func:`chord_certificate`).
_CHORD_LEFT = 1e-2


def chord_certificate(data, change, rate, tol, solve, g):
    """``(x, δ, bound)`` of a chord step, x = solve() = −H₀⁻¹g from the previous point's
    Hessian H₀, when it certifies convergence at the current point, else None.

    ``change`` (p,) or (K, p), the move from the previous point, moves every row's
    predictors by at most m (``data.max_predictor_change``), which keeps the curvature
    within e^{±rate·m} of H₀'s, so ½gᵀH⁻¹g ≤ bound = e^{rate·m}·½gᵀH₀⁻¹g.  It
    certifies where bound ≤ tol and (e^{rate·m} − 1)²·bound ≤ ``_CHORD_LEFT``·tol²:
    the chord step leaves (e^{rate·m} − 1)² of the decrement where Newton's would leave
    about its square, so the returned point is within a tenth of √2·tol standard
    errors of the optimum (1.4e-9 at the default tol), without the Hessian pass a
    Newton step costs."""
    moved = getattr(data, "max_predictor_change", None)
    if moved is None or not tol > 0.0:
        return None
    m = rate * moved(change)
    if not m <= np.log(2.0):
        return None  # the curvature may have changed by more than 2×: no certificate
    grow = float(np.exp(m))
    x = solve()
    dec = 0.5 * float(-np.vdot(g, x))
    bound = grow * dec
    if not (bound <= tol and (grow - 1.0) ** 2 * bound <= _CHORD_LEFT * tol * tol):
        return None
    return x, dec, bound


class BinaryObjective:
    """Penalised binary negative log-likelihood over β = [coef, intercept] (p,).

    ``f(β) = Σ_i w_i (softplus(η_i) − y_i η_i) + (l2/2) Σ_j pen_j β_j²``, η = X̃β.
    Explicit: H = X̃ᵀdiag(wπ(1−π))X̃ + l2·diag(pen) with a Cholesky solve of H scaled to
    a unit diagonal; otherwise Jacobi-preconditioned CG on the products
    X̃ᵀdiag(s)X̃v + l2·pen∘v.  The column scales (:func:`column_scales`) come from the
    unpenalised Hessian's diagonal at the start.
    """

    def __init__(self, data, l2, explicit):
        self.data, self.l2, self.explicit = data, l2, explicit
        self.pen = _penalty_mask(data.p, data.fit_intercept)
        self.H = None
        self.s = None
        self.nprod = 0
        self.solver = "newton-cholesky" if explicit else "newton-cg"
        self.scale = None
        self.keep = None  # the identified columns (identified_columns), None: all
        self._diag = None  # unpenalised diagonal of the curvature at the latest evaluation
        self._start = None
        self._start_beta = None
        self.beta = None  # the latest evaluation's point
        self._chord_base = None  # (β₀, factor, indices, H) of the latest explicit solve

    def evaluate(self, beta, curvature):
        """Loss, objective and gradient at β (and the curvature there if asked)."""
        want = curvature and self.explicit
        loss, g, H, eta_max, s = self.data.binary(beta, want, not self.explicit)
        f, g = _penalised(loss, g, self.l2, self.pen, beta)
        self.s, self.beta = s, beta
        self._diag = None
        if want:
            self._diag = H.diagonal().copy()
            check_curvature_diagonal(self._diag, self.data)
            H[np.diag_indices_from(H)] += self.l2 * self.pen
            self.H = H
        elif self.explicit:
            self.H = None
        ev = Evaluation(loss, f, g, eta_max)
        if self._start is None:
            self._start, self._start_beta = ev, beta.copy()
        return ev

    def _curvature_diagonal(self):
        """diag X̃ᵀdiag(s)X̃ at the latest evaluation (computed once per evaluation)."""
        if self._diag is None:
            self._diag = self.data.weighted_sq_colsum(self.s)
            check_curvature_diagonal(self._diag, self.data)
        return self._diag

    def penalty(self, beta):
        """(l2/2)·Σ pen·β², the penalty part of the objective at β."""
        return 0.5 * self.l2 * float(np.sum(self.pen * beta * beta)) if self.l2 else 0.0

    def gradient_scale(self, sum_weights):
        """The column scales r (p,) from the curvature at the first evaluation, whose
        weights sum to its intercept entry (without an intercept: Σw/4, their sum at
        β = 0, the default start)."""
        if self.scale is None:
            C = self._curvature_diagonal()
            c0 = C[-1] if self.data.fit_intercept else 0.25 * sum_weights
            if not c0 > 0.0 and np.isfinite(c0) and np.any(self._start_beta):
                # a start that saturates every row (a far warm start) has no curvature
                # to measure the columns by: the design's own weights, at β = 0
                C = 0.25 * self.data.binary(np.zeros(self.data.p), True, False)[2].diagonal()
                c0 = C[-1] if self.data.fit_intercept else 0.25 * sum_weights
            self.scale = column_scales(C, c0, self.data, self._start,
                                       sum_weights=sum_weights)
            if self.explicit and self.l2 == 0.0:
                # the design's rank: the start's curvature is the design Gram up to a
                # factor where the start has no slopes (the default); else one pass
                d = self.data.d
                if not np.any(self._start_beta[:d]) and self.H is not None:
                    G = self.H
                else:
                    G = self.data.binary(np.zeros(self.data.p), True, False)[2]
                self.keep = identified_columns(G, self.data, self.l2)
        return self.scale

    def has_curvature(self):
        """Whether the latest evaluation left what ``step`` needs."""
        return self.H is not None or not self.explicit

    def curvature_gram(self):
        """``(G, is_design)``: a p × p matrix with the null space of the design, for the
        collinearity check of an unpenalised fit — the Hessian X̃ᵀdiag(wπ(1−π))X̃ at the
        latest evaluation (explicit solver; ``is_design`` False), or (None, False)."""
        H = self.H if self.H is not None or self._chord_base is None \
            else self._chord_base[3]
        if self.explicit and H is not None:
            return H - np.diag(self.l2 * self.pen), False
        return None, False

    def chord(self, g, tol):
        """``(x, δ, bound)`` where the previous point's Hessian certifies convergence at
        the latest evaluation, else None: x = −H₀⁻¹g, δ = ½gᵀH₀⁻¹g and ``bound`` =
        e^{m}·δ ≥ ½gᵀH⁻¹g, which must be ≤ ``tol``.

        A row's curvature π(1 − π) has d log/dη = 1 − 2π ∈ [−1, 1], so moving every
        predictor by at most m keeps it within e^{±m} (the penalty is fixed) and
        ½gᵀH⁻¹g ≤ e^{m}·δ.  The rest is :func:`chord_certificate`'s."""
        base = self._chord_base
        if base is None or base[0] is self.beta or self.H is not None:
            return None
        beta0, factor, k, _ = base
        x = np.zeros_like(g)
        return chord_certificate(self.data, self.beta - beta0, 1.0, tol,
                                 lambda: _put(x, k, factor_solve(factor, -g[k])), g)

    @property
    def inexact(self):
        """Whether ``step`` solves by CG (a relative residual ``rtol``)."""
        return not self.explicit

    def step(self, g, gscaled, rtol=None, atol=0.0, x0=None):
        """Newton direction x (H x = −g, inexactly for CG: relative residual ``rtol``,
        by default min(½, √gscaled), or max|residual| ≤ ``atol``, from ``x0``) and the
        decrement ½xᵀHx."""
        if self.explicit:
            if self.keep is None:
                k = slice(None)
                factor, x = cholesky_factor(self.H, -g, "Hessian")
            else:
                k = self.keep
                x = np.zeros_like(g)
                factor, x[k] = cholesky_factor(self.H[np.ix_(k, k)], -g[k], "Hessian")
            # an exact factor (no jitter) of the Hessian at β, for :meth:`chord`
            self._chord_base = (self.beta, factor, k, self.H) if factor[2] == 0.0 \
                else None
            return x, 0.5 * float(-g @ x)
        data, s = self.data, self.s
        diag = self._curvature_diagonal() + self.l2 * self.pen
        # floor at 1e-12 of the largest entry, both in the columns' units
        sq = self.scale * self.scale
        diag = diag + 1e-12 * max(float(np.max(diag / sq)), 1e-300) * sq
        x, dec, nprod = pcg(
            lambda v: data.binary_hessp(s, v) + self.l2 * self.pen * v,
            lambda r: r / diag, g, forcing(gscaled, rtol), max(10, min(g.size, 250)),
            atol, self.scale, x0)
        self.nprod += nprod
        return x, dec


class MultinomialObjective:
    """Penalised softmax negative log-likelihood over B (K, p), symmetric parametrisation.

    ``f(B) = −Σ_i w_i log softmax(B x̃_i)_{y_i} + (l2/2) Σ_k Σ_j pen_j B_kj²``.  Every
    iterate is kept centred over classes (Σ_k B_k = 0), the subspace on which the
    objective is strictly convex; the reference-class form is produced at the end.
    The column scales (:func:`column_scales`) come from Σ_k H_kk at the start (explicit)
    or from the Böhning bound ½X̃ᵀWX̃ (Newton-CG).
    """

    def __init__(self, data, l2, K, explicit):
        self.data, self.l2, self.K, self.explicit = data, l2, K, explicit
        self.pen = _penalty_mask(data.p, data.fit_intercept)
        self.B = None
        self.P = None
        self.nprod = 0
        self.solver = "newton-cholesky" if explicit else "newton-cg"
        self.scale = None
        self._precond = None
        self._sample = None  # the rows of the block preconditioner (row_sample)
        self._block = None  # its factors at the latest evaluation; False: not used
        self._blocks = None
        self._gram = None
        self._H = None  # the unpenalised Hessian at B (explicit), until the next evaluation
        self.keep = None  # the identified columns (identified_columns), None: all
        self._start = None
        self._start_B = None
        self._chord_base = None  # (B₀, factor, D, indices) of the latest explicit solve

    def evaluate(self, B, curvature):
        """Loss, objective and centred gradient at B (P kept for the curvature)."""
        loss, G, eta_max, P = self.data.multinomial(B)
        self.B, self.P = B, P
        if self._block is not False:
            self._block = None
        self._H = None
        f, G = _penalised(loss, G, self.l2, self.pen, B)
        G -= G.mean(axis=0)
        ev = Evaluation(loss, f, G, eta_max)
        if self._start is None:
            self._start, self._start_B = ev, B.copy()
        return ev

    def penalty(self, B):
        """(l2/2)·Σ_k Σ_j pen_j B_kj², the penalty part of the objective at B."""
        return 0.5 * self.l2 * float(np.sum(self.pen * B * B)) if self.l2 else 0.0

    def has_curvature(self):
        """Always: the curvature comes from the latest evaluation's point."""
        return True

    def gradient_scale(self, sum_weights):
        """The column scales r (p,) from Σ_k H_kk at the first evaluation (explicit;
        its intercept entry, or Σw(1 − 1/K) without one: the sum of its row weights
        w Σ_k P_k(1 − P_k) at B = 0), or from the Böhning bound ½X̃ᵀWX̃ (Newton-CG;
        ½Σw)."""
        if self.scale is None:
            if self.explicit:
                blocks = self._unpenalised_hessian_blocks()
                C = np.diag(blocks).copy()
                c0 = C[-1] if self.data.fit_intercept else sum_weights * (1 - 1 / self.K)
                if self.l2 == 0.0:
                    # Σ_k H_kk is the design Gram up to a factor at a start without
                    # slopes (the default); else one pass for the Gram
                    d = self.data.d
                    G = blocks if not np.any(self._start_B[:, :d]) \
                        else self.data.binary(np.zeros(self.data.p), True, False)[2]
                    self.keep = identified_columns(G, self.data, self.l2)
            elif self.data.p <= BOHNING_FULL_MAX_P:
                self._bohning()  # decides the identified columns too (unpenalised)
                C = np.diag(self._gram).copy()
                c0 = 0.5 * sum_weights
            else:
                C = self._bohning()[1][0]
                c0 = 0.5 * sum_weights
            self.scale = column_scales(C, c0, self.data, self._start,
                                       sum_weights=sum_weights)
        return self.scale

    def _unpenalised_hessian_blocks(self):
        """Σ_k H_kk at the latest evaluation (from the Hessian, computed once per point)."""
        if self._H is None:
            K, p = self.K, self.data.p
            self._H = self.data.multinomial_hessian(self.B, self.P)
            # Σ_k H_kk = X̃ᵀ diag(w Σ_k P_k(1 − P_k)) X̃: the design's null space (kept
            # for the collinearity check)
            self._blocks = np.einsum("kakb->ab", self._H.reshape(K, p, K, p))
            check_curvature_diagonal(np.diag(self._blocks), self.data)
        return self._blocks

    def hessian(self):
        """``(Hs, D)``: the penalised (K·p)² Hessian H at the latest evaluation scaled to
        D⁻¹HD⁻¹ and made definite, with D = 1 ⊗ d (d_j² the mean over classes of the
        diagonal entries of feature j), so that the Newton step is D⁻¹·solve(Hs, −D⁻¹g)."""
        K, p = self.K, self.data.p
        self._unpenalised_hessian_blocks()
        H, self._H = self._H, None  # scaled in place below
        H[np.diag_indices_from(H)] += self.l2 * np.tile(self.pen, K)
        d = unit_diagonal(np.diag(H).reshape(K, p).mean(axis=0))
        D = np.tile(d, K)
        H /= D[:, None]
        H /= D[None, :]
        # The objective is flat along B_k → B_k + v (same v for every class) except for
        # the penalty; adding μ·(11ᵀ/K ⊗ I) leaves steps within the centred subspace
        # unchanged and makes the system definite (μ = 1: the scaled diagonal's mean).
        Hr = H.reshape(K, p, K, p)
        for k in range(K):
            for m in range(K):
                Hr[k, :, m, :][np.diag_indices(p)] += 1.0 / K
        return H, D

    def _bohning(self):
        """The fixed Böhning bound A = ½X̃ᵀWX̃ + l2·diag(pen), factorised once scaled to a
        unit diagonal (with jitter 1e-10 there): ``("full", (factor, d))`` with
        A ≈ diag(d)·LLᵀ·diag(d), on the identified columns only; or, for wide data, its
        diagonal ``("diag", (A_jj, 1))``.

        The design Gram ½X̃ᵀWX̃ is also where an unpenalised Newton-CG fit decides the
        design's rank (:func:`identified_columns`, the explicit solvers' rule): CG then
        runs on the identified columns, as the explicit solves do.  On the full space
        CG met the null directions of a rank-deficient design in every product and
        every preconditioner solve, and its steps stalled where two or more
        dependencies were present."""
        if self._precond is None:
            data = self.data
            if data.p <= BOHNING_FULL_MAX_P:
                A = 0.5 * data.design_gram()  # ½ X̃ᵀWX̃
                self._gram = A.copy()
                check_curvature_diagonal(np.diag(A), data)
                self.keep = identified_columns(A, data, self.l2)
                if self.keep is not None:
                    A = A[np.ix_(self.keep, self.keep)]
                A[np.diag_indices_from(A)] += self.l2 * self.pen[self._kept()]
                d = unit_diagonal(np.diag(A).copy())
                A /= d[:, None]
                A /= d[None, :]
                A[np.diag_indices_from(A)] += 1e-10
                c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
                self._precond = ("full", (c, d))
            else:
                raw = 0.5 * data.weighted_sq_colsum(data.row_weights())
                check_curvature_diagonal(raw, data)
                diag = raw + self.l2 * self.pen
                diag = np.where(diag > 0.0, diag * (1.0 + 1e-10), 1.0)
                self._precond = ("diag", (raw, diag))
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

    def chord(self, G, tol):
        """``(X, δ, bound)`` where the previous point's Hessian certifies convergence at
        the latest evaluation, else None: X = −H₀⁻¹G (centred), δ = ½⟨G, −X⟩ and
        ``bound`` = e^{4m}·δ ≥ ½GᵀH⁻¹G, which must be ≤ ``tol``.

        A row's softmax curvature diag(P) − PPᵀ is ½Σ_kl P_k P_l (u_k − u_l)² as a form
        in u; moving the predictors by at most m keeps every P_k within e^{±2m}, so the
        curvature (the penalty is fixed) stays within e^{±4m} of H₀'s and ½GᵀH⁻¹G ≤
        e^{4m}·δ.  The rest is :func:`chord_certificate`'s."""
        base = self._chord_base
        if base is None or base[0] is self.B:
            return None
        B0, factor, D, k = base
        K, p = self.K, self.data.p

        def solve():
            x = np.zeros(K * p)
            x[k] = factor_solve(factor, -G.reshape(-1)[k] / D[k]) / D[k]
            x = x.reshape(K, p)
            return x - x.mean(axis=0)

        return chord_certificate(self.data, self.B - B0, 4.0, tol, solve, G)

    def block_preconditioner(self):
        """The factors ``[(c_k, d_k)]`` of the Hessian's diagonal blocks at the latest
        evaluation, H_kk ≈ (Σw/Σ_s w)·X̃_sᵀ diag(w P_k(1 − P_k)) X̃_s + l2·diag(pen) over
        the rows s of ``data.row_sample`` (all rows of a small sample), each scaled to
        a unit diagonal (d_k; jitter 1e-10 there), or None where the data have no
        ``row_sample``, the blocks would be too large (``BLOCK_PRECOND_MAX_P``,
        ``BLOCK_PRECOND_MAX``) or a block does not factorise.

        Block Jacobi follows the curvature of the current point class by class, where
        the Böhning bound ½X̃ᵀWX̃ fixes one shape for all: on the benchmarks it halves
        CG's products per step (benchmarks/NOTES.md).  A subsample serves: the
        preconditioner needs the blocks' shape, not their digits, and the rows are a
        fixed choice, so the fit stays deterministic.  On 4096 rows or more its K Grams
        cost less than a Hessian-vector product where n is large; on fewer rows CG
        needed more products (W9: 20 at 2048 rows, 14 at 4096, 28 by Böhning)."""
        if self._block is not None:
            return self._block or None
        data, K = self.data, self.K
        p = data.p
        sample = getattr(data, "row_sample", None)
        if sample is None or p > BLOCK_PRECOND_MAX_P or K * p * p > BLOCK_PRECOND_MAX:
            self._block = False
            return None
        if self._sample is None:
            rows = min(max(BLOCK_PRECOND_ROWS, 64 * p), BLOCK_PRECOND_ENTRIES // p)
            idx, Xs, ws = sample(rows)
            total = float(np.sum(data.w)) if data.w.shape[0] else float(data.n)
            sw = float(np.sum(ws))
            if not (sw > 0.0 and np.isfinite(total / sw)):
                self._block = False
                return None
            self._sample = (idx, Xs, ws * (total / sw))
        idx, Xs, ws = self._sample
        if self.keep is not None:  # the identified columns only (see _bohning)
            Xs = Xs[:, self.keep]
        Ps = self.P[idx]
        pen = self.l2 * self.pen[self._kept()]
        factors = block_factors(Xs, ws, Ps, pen)
        self._block = False if factors is None else factors
        return factors

    def _kept(self):
        """The identified columns as an index (all of them: ``slice(None)``)."""
        return slice(None) if self.keep is None else self.keep

    def _restrict(self, V):
        """V (K, p) with the columns outside the identified ones set to zero (V itself
        when every column is identified)."""
        if self.keep is None:
            return V
        out = np.zeros_like(V)
        out[:, self.keep] = V[:, self.keep]
        return out

    def _apply_precond(self, R):
        kept = self._kept()
        block = self.block_preconditioner()
        if block is not None:
            return apply_blocks(block, R, kept)
        kind, fac = self._bohning()
        Rc = R - R.mean(axis=0)
        if kind == "full":
            c, d = fac
            if self.keep is None:
                return scipy.linalg.cho_solve(c, (Rc / d).T, check_finite=False).T / d
            Z = np.zeros_like(R)
            Z[:, kept] = scipy.linalg.cho_solve(c, (Rc[:, kept] / d).T,
                                                check_finite=False).T / d
            return Z
        return Rc / fac[1]

    @property
    def inexact(self):
        """Whether ``step`` solves by CG (a relative residual ``rtol``)."""
        return not self.explicit

    def step(self, G, gscaled, rtol=None, atol=0.0, x0=None):
        """Centred Newton direction X (H X = −G, inexactly for CG: relative residual
        ``rtol``, by default min(½, √gscaled), or max|residual| ≤ ``atol``, from the
        centred ``x0``) and ½⟨X, HX⟩."""
        K, p = self.K, self.data.p
        if self.explicit:
            Hs, D = self.hessian()
            if self.keep is None:
                k = slice(None)
                factor, x = cholesky_factor(Hs, -G.reshape(-1) / D, "Hessian")
                x = (x / D).reshape(K, p)
            else:  # the identified columns of every class
                k = (np.arange(K)[:, None] * p + self.keep[None, :]).ravel()
                x = np.zeros(K * p)
                factor, xk = cholesky_factor(Hs[np.ix_(k, k)], -G.reshape(-1)[k] / D[k],
                                             "Hessian")
                x[k] = xk / D[k]
                x = x.reshape(K, p)
            # an exact factor (no jitter) of the Hessian at B, for :meth:`chord`
            self._chord_base = (self.B, factor, D, k) if factor[2] == 0.0 else None
            x -= x.mean(axis=0)
            return x, 0.5 * float(-np.vdot(G, x))
        data, P = self.data, self.P
        restrict = self._restrict  # the identified columns only (see _bohning)

        def hessp(V):
            HV = data.multinomial_hessp(P, restrict(V)) + self.l2 * self.pen * V
            return restrict(HV - HV.mean(axis=0))

        x, dec, nprod = pcg(hessp, self._apply_precond, restrict(G),
                            forcing(gscaled, rtol), max(10, min(G.size, 250)), atol,
                            self.scale, None if x0 is None else restrict(x0))
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
