"""Logistic regression by Newton's method (IRLS), binary and multinomial, dense and CSR.

The discriminative partner of the generative models: with the same X and y,
``fit_logistic`` estimates p(y | x) directly, so the generative-vs-discriminative
comparison needs one package.

Objective (minimised)::

    f(β) = −Σ_i w_i log p(y_i | x_i; β) + (l2 / 2) · ‖coef‖²

the negative log-likelihood summed over samples plus a ridge penalty on the
coefficients (never on the intercept), so ``l2 = 1 / C`` in scikit-learn's terms.

Solver (glum's shape: data + state + a short loop): evaluate loss, gradient and
curvature in one fused pass over X → Newton step → Armijo backtracking (step halving) →
convergence check → record the iteration.

* Binary, p = d + 1 ≤ ``BINARY_EXPLICIT_MAX_P``: explicit Hessian
  ``X̃ᵀ diag(w π(1−π)) X̃`` (one √s-scaled GEMM per fixed row block) and a Cholesky solve
  (jitter ``1e-10·tr(H)/p`` and up if the factorisation fails).  Wider problems (sparse
  text data) use conjugate gradients on Hessian-vector products with a Jacobi
  preconditioner.
* Multinomial: for K·p ≤ ``MULTINOMIAL_EXPLICIT_MAX`` the explicit (K·p)² Hessian and a
  Cholesky solve; above, Newton-CG on Hessian-vector products (one fused pass over X
  each) preconditioned by the fixed Böhning bound ``½(I − 11ᵀ/K) ⊗ (X̃ᵀWX̃) + l2·I``
  (Böhning 1992; Krishnapuram et al. 2005), factorised once, with the forcing term
  ``min(0.5, √(max|g|/Σw))`` (inexact Newton).  The crossover between the two is
  discussed at ``MULTINOMIAL_EXPLICIT_MAX``.

Stopping rule (scikit-learn's newton-cholesky rule on the weight-normalised objective):
converged when ``max|∇f| / Σw ≤ tol`` and the Newton decrement ``½ΔᵀHΔ / Σw ≤ tol``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ._params import FittedParams, register_params
from ._threads import blas_single_thread, serial_for_small_inputs, single_thread_blas_call
from ._validation import (
    check_n_features,
    check_sample_weight,
    check_scalar,
    check_X,
    check_y,
    csr_arrays,
    is_sparse,
)
from .kernels import irls as _k
from .kernels import irls_sparse as _ks

__all__ = ["LogisticParams", "ConvergenceWarning", "fit_logistic", "irls_step",
           "logistic_loss_grad_hess"]

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
#: 0.47 s; 320: 2.62 vs 0.83 s.  (W9, K·p = 650, uses CG.)
MULTINOMIAL_EXPLICIT_MAX = 64

#: Above this many parameters per class the Böhning preconditioner keeps only its
#: diagonal (the full p × p factor would not fit for wide sparse data).
BOHNING_FULL_MAX_P = 2048

#: Separation heuristic: with l2 = 0, a linear predictor beyond this (in absolute value,
#: for softmax the spread between classes) means probabilities saturated at 1 − 1e-13.
_SEPARATION_ETA = 30.0

_MAX_HALVINGS = 40
_ARMIJO = 1e-4
_GROUP_MAX = 16
_SLOT_BUDGET = 8 * 1024 * 1024  # float64 entries over all partial slots (64 MB)


class ConvergenceWarning(UserWarning):
    """The solver stopped before meeting its convergence criterion."""


# --------------------------------------------------------------------------- params


@register_params
@dataclass(frozen=True)
class LogisticParams(FittedParams):
    """A fitted logistic-regression model.

    Binary (two classes): one coefficient vector, ``p(y = classes[1] | x) =
    σ(coef[0]·x + intercept[0])``.  Multinomial (K > 2): ``p(y = k | x) ∝
    exp(coef[k]·x + intercept[k])``; with ``l2 > 0`` the symmetric parametrisation
    (every class has its coefficients, which sum to zero over classes at the optimum;
    the intercepts are centred to sum to zero), with ``l2 = 0`` the reference-class one
    (``coef[0]`` and ``intercept[0]`` are zero, the others are log-odds against
    ``classes[0]``, as statsmodels' MNLogit reports them).

    Attributes
    ----------
    classes : ndarray (K,)
    coef : ndarray (K', d)
        K' = 1 for binary, K otherwise; dtype float32 when fitted on float32 data.
    intercept : ndarray (K',)
    parametrization : str
        "binary", "symmetric" or "reference".
    l2, fit_intercept :
        The fit's options.
    n_iter : int
        Newton steps taken.
    converged : bool
    log_likelihood : float
        Σ_i w_i log p(y_i | x_i) at the solution (no penalty).
    objective_history, grad_norm_history : ndarray (n_iter + 1,)
        Penalised objective and max|∇f| / Σw at the start and after each step.
    step_size_history : ndarray (n_iter,)
        Accepted line-search step of each iteration (1 = full Newton step).
    solver : str
        "newton-cholesky" or "newton-cg".
    n_hessp : int
        Hessian-vector products used (Newton-CG only).
    """

    classes: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    parametrization: str
    l2: float
    fit_intercept: bool
    n_iter: int
    converged: bool
    log_likelihood: float
    objective_history: np.ndarray
    grad_norm_history: np.ndarray
    step_size_history: np.ndarray
    solver: str
    n_hessp: int

    accepts_sparse = True

    def __post_init__(self):
        self._check_arrays()
        K = self.classes.shape[0]
        kk = 1 if K == 2 else K
        if self.coef.ndim != 2 or self.coef.shape[0] != kk:
            raise ValueError(
                f"LogisticParams.coef must have shape ({kk}, n_features) for {K} classes; "
                f"got {self.coef.shape}"
            )
        if self.intercept.shape != (kk,):
            raise ValueError(
                f"LogisticParams.intercept must have shape ({kk},); got {self.intercept.shape}"
            )

    @property
    def n_features_in(self) -> int:
        return int(self.coef.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return self.coef.dtype

    def decision_function(self, X):
        """Linear predictor ``X·coefᵀ + intercept`` on already validated X, shape (n, K')."""
        eta = X @ self.coef.T
        eta = np.asarray(eta)
        eta += self.intercept
        return eta

    def _joint_log_likelihood(self, X):
        eta = self.decision_function(X)
        if eta.shape[1] == 1:
            return np.concatenate([np.zeros_like(eta), eta], axis=1)
        return eta

    def _predict_proba(self, X):
        eta = self.decision_function(X)
        if eta.shape[1] == 1:
            from scipy.special import expit  # lazily: keeps `import fastgen` light

            return np.concatenate([expit(-eta), expit(eta)], axis=1)
        return super()._predict_proba(X)

    def _predict_log_proba(self, X):
        eta = self.decision_function(X)
        if eta.shape[1] == 1:
            return np.concatenate([-np.logaddexp(0, eta), -np.logaddexp(0, -eta)], axis=1)
        return super()._predict_log_proba(X)


# --------------------------------------------------------------------------- data


class _Data:
    """X (dense or CSR) with its fixed work split; calls the kernels."""

    def __init__(self, X, fit_intercept):
        self.sparse = is_sparse(X)
        self.n, self.d = X.shape
        self.fi = bool(fit_intercept)
        self.p = self.d + (1 if fit_intercept else 0)
        if self.sparse:
            self.csr = (*csr_arrays(X), self.d)
            self.block = 1
        else:
            self.X = X
            # Rows per GEMM block: about 256 KB of float64 per block, 64..2048 rows.
            blk = (1 << 15) // max(self.p, 1)
            self.block = int(min(2048, max(64, 1 << max(0, blk.bit_length() - 1))))
        self._bounds = {}

    def bounds(self, slot_size):
        """Row offsets of the groups: fixed by n, the block and the slot size alone."""
        G = max(1, min(_GROUP_MAX, _SLOT_BUDGET // max(slot_size, 1)))
        key = G
        if key in self._bounds:
            return self._bounds[key]
        n = self.n
        if self.sparse:
            indptr = self.csr[0]
            cost = indptr.astype(np.float64) + np.arange(n + 1)
            targets = cost[-1] * np.arange(1, G) / G
            inner = np.searchsorted(cost, targets)
            b = np.unique(np.concatenate([[0], inner, [n]])).astype(np.int64)
        else:
            nb = -(-n // self.block)
            G = min(G, nb)
            per = -(-nb // G)
            b = np.minimum(np.arange(0, nb + per, per) * self.block, n)
            b = np.unique(b).astype(np.int64)
        self._bounds[key] = b
        return b

    def binary(self, y, w, beta, want_hess, s_out):
        hp = self.p if want_hess else 1
        bounds = self.bounds(hp * hp + self.p)
        if self.sparse:
            return _ks.binary_loss_grad_hess_csr(*self.csr, y, w, beta, self.fi, bounds,
                                                 want_hess, s_out)
        with blas_single_thread(want_hess):
            return _k.binary_loss_grad_hess(self.X, y, w, beta, self.fi, bounds, self.block,
                                            want_hess, s_out)

    def binary_hessp(self, s, v):
        bounds = self.bounds(self.p)
        if self.sparse:
            return _ks.binary_hessp_csr(*self.csr, s, v, self.fi, bounds)
        return _k.binary_hessp(self.X, s, v, self.fi, bounds)

    def sq_colsum(self, s):
        bounds = self.bounds(self.p)
        if self.sparse:
            return _ks.weighted_sq_colsum_csr(*self.csr, s, self.fi, bounds)
        return _k.weighted_sq_colsum(self.X, s, self.fi, bounds)

    def multinomial(self, y, w, B, P_out):
        bounds = self.bounds(B.size)
        if self.sparse:
            return _ks.multinomial_loss_grad_csr(*self.csr, y, w, B, self.fi, bounds, P_out)
        return _k.multinomial_loss_grad(self.X, y, w, B, self.fi, bounds, P_out)

    def multinomial_hessp(self, w, P, V):
        bounds = self.bounds(V.size)
        if self.sparse:
            return _ks.multinomial_hessp_csr(*self.csr, w, P, V, self.fi, bounds)
        return _k.multinomial_hessp(self.X, w, P, V, self.fi, bounds)

    def multinomial_hessian(self, w, P):
        Kp = P.shape[1] * self.p
        bounds = self.bounds(Kp * Kp)
        if self.sparse:
            return _ks.multinomial_hessian_csr(*self.csr, w, P, self.fi, bounds)
        with blas_single_thread():
            return _k.multinomial_hessian(self.X, w, P, self.fi, bounds, self.block)


def _cholesky_solve(H, rhs, what):
    """Solve H x = rhs by Cholesky, adding jitter 1e-10·tr(H)/q (then ×100) on failure."""
    q = H.shape[0]
    scale = max(np.trace(H) / q, np.finfo(np.float64).tiny)
    jitter = 0.0
    for _ in range(6):
        try:
            A = H if jitter == 0.0 else H + jitter * np.eye(q)
            c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
            x = scipy.linalg.cho_solve(c, rhs, check_finite=False)
            if np.all(np.isfinite(x)):
                return x
        except np.linalg.LinAlgError:
            pass
        jitter = 1e-10 * scale if jitter == 0.0 else jitter * 100.0
    raise np.linalg.LinAlgError(
        f"the {what} is singular even with jitter {jitter:.3g}: the features are (nearly) "
        f"collinear or constant; pass l2 > 0"
    )


def _pcg(hessp, precond, g, rtol, maxiter):
    """Preconditioned CG for H x = −g.  Returns (x, ½xᵀHx, number of products)."""
    x = np.zeros_like(g)
    r = -g
    z = precond(r)
    dirn = z.copy()
    rz = float(np.vdot(r, z))
    gnorm = float(np.linalg.norm(g))
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
        if np.linalg.norm(r) <= rtol * gnorm:
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


# --------------------------------------------------------------------------- objectives


class _Binary:
    """Penalised binary negative log-likelihood over β = [coef, intercept]."""

    def __init__(self, data, y, w, l2, explicit):
        self.data, self.y, self.w, self.l2 = data, y, w, l2
        self.explicit = explicit
        self.pen = np.ones(data.p)
        if data.fi:
            self.pen[-1] = 0.0
        self.s = np.empty(data.n) if not explicit else np.empty(0)
        self.H = None
        self.nprod = 0
        self.solver = "newton-cholesky" if explicit else "newton-cg"

    def evaluate(self, beta, curvature):
        want = curvature and self.explicit
        loss, g, H, emax = self.data.binary(self.y, self.w, beta, want, self.s)
        f = loss + 0.5 * self.l2 * float(np.sum(self.pen * beta * beta))
        g = g + self.l2 * self.pen * beta
        if want:
            H[np.diag_indices_from(H)] += self.l2 * self.pen
            self.H = H
        elif self.explicit:
            self.H = None
        return loss, f, g, emax

    def has_curvature(self):
        return self.H is not None or not self.explicit

    def step(self, g, gscaled):
        if self.explicit:
            x = _cholesky_solve(self.H, -g, "Hessian")
            return x, 0.5 * float(-g @ x)
        diag = self.data.sq_colsum(self.s) + self.l2 * self.pen
        diag = diag + 1e-12 * max(float(diag.max()), 1e-300)
        x, dec, nprod = _pcg(
            lambda v: self.data.binary_hessp(self.s, v) + self.l2 * self.pen * v,
            lambda r: r / diag, g, min(0.5, np.sqrt(gscaled)), max(10, min(g.size, 250)))
        self.nprod += nprod
        return x, dec

    def hessian(self):
        return self.H


class _Multinomial:
    """Penalised softmax negative log-likelihood over B (K, p), symmetric parametrisation.

    Every iterate is kept centred over classes (Σ_k B_k = 0), the subspace on which the
    objective is strictly convex; the reference-class form is produced at the end.
    """

    def __init__(self, data, y, w, l2, K, explicit):
        self.data, self.y, self.w, self.l2, self.K = data, y, w, l2, K
        self.explicit = explicit
        p = data.p
        self.pen = np.ones(p)
        if data.fi:
            self.pen[-1] = 0.0
        self.P = np.empty((data.n, K))
        self.nprod = 0
        self.solver = "newton-cholesky" if explicit else "newton-cg"
        self._precond = None

    def evaluate(self, B, curvature):
        loss, G, emax = self.data.multinomial(self.y, self.w, B, self.P)
        f = loss + 0.5 * self.l2 * float(np.sum(self.pen * B * B))
        G = G + self.l2 * self.pen * B
        G -= G.mean(axis=0)
        return loss, f, G, emax

    def has_curvature(self):
        return True

    def hessian(self):
        K, p = self.K, self.data.p
        H = self.data.multinomial_hessian(self.w, self.P)
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
        if self._precond is None:
            data = self.data
            if data.p <= BOHNING_FULL_MAX_P:
                _, _, H0, _ = data.binary(self.y, self.w, np.zeros(data.p), True, np.empty(0))
                A = 2.0 * H0  # X̃ᵀ diag(w/4) X̃ at β = 0, doubled: ½ X̃ᵀWX̃
                A[np.diag_indices_from(A)] += self.l2 * self.pen
                A[np.diag_indices_from(A)] += 1e-10 * max(np.trace(A) / data.p, 1e-300)
                c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
                self._precond = ("full", c)
            else:
                wv = self.w if self.w.shape[0] else np.ones(data.n)
                diag = 0.5 * data.sq_colsum(wv) + self.l2 * self.pen
                diag += 1e-10 * max(float(diag.mean()), 1e-300)
                self._precond = ("diag", diag)
        return self._precond

    def _apply_precond(self, R):
        kind, fac = self._bohning()
        Rc = R - R.mean(axis=0)
        if kind == "full":
            return scipy.linalg.cho_solve(fac, Rc.T, check_finite=False).T
        return Rc / fac

    def step(self, G, gscaled):
        K, p = self.K, self.data.p
        if self.explicit:
            H = self.hessian()
            x = _cholesky_solve(H, -G.reshape(-1), "Hessian").reshape(K, p)
            x -= x.mean(axis=0)
            return x, 0.5 * float(-np.vdot(G, x))

        def hessp(V):
            HV = self.data.multinomial_hessp(self.w, self.P, V) + self.l2 * self.pen * V
            return HV - HV.mean(axis=0)

        x, dec, nprod = _pcg(hessp, self._apply_precond, G, min(0.5, np.sqrt(gscaled)),
                             max(10, min(G.size, 250)))
        self.nprod += nprod
        x -= x.mean(axis=0)
        return x, dec


# --------------------------------------------------------------------------- solver


def _newton(obj, beta, max_iter, tol, sw, l2, check_separation=True):
    """The Newton loop.  Returns (beta, loss, history dict, converged, n_iter)."""
    loss, f, g, emax = obj.evaluate(beta, True)
    fh, gh, th = [f], [float(np.max(np.abs(g))) / sw], []
    converged = False
    cause = None
    aligned = 0
    eps = np.finfo(np.float64).eps
    n_iter = 0
    while True:
        gscaled = float(np.max(np.abs(g))) / sw
        if not obj.has_curvature():
            loss, f, g, emax = obj.evaluate(beta, True)
        step, dec = obj.step(g, gscaled)
        if gscaled <= tol and dec / sw <= tol:
            converged = True
            break
        if (check_separation and l2 == 0.0 and emax > _SEPARATION_ETA
                and (f / sw < 1e-10 or aligned >= 3)):
            cause = "separation"
            break
        if n_iter >= max_iter:
            break
        slope = float(np.vdot(g, step))
        t = 1.0
        accepted = False
        gmax = float(np.max(np.abs(g)))
        for ls in range(_MAX_HALVINGS):
            bt = beta + t * step
            lt, ft, gt, et = obj.evaluate(bt, ls == 0)
            if ft <= f + _ARMIJO * t * slope:
                accepted = True
            elif abs(ft - f) <= 64 * eps * abs(f) and float(np.max(np.abs(gt))) < gmax:
                accepted = True  # objective flat to rounding: accept if the gradient shrinks
            if accepted:
                break
            t *= 0.5
        if not accepted:
            obj.evaluate(beta, True)  # restore the curvature at the current point
            cause = "line search"
            break
        # Alignment of the step with the iterate: along a separating direction the
        # iterates grow without bound in a fixed direction.
        # (normalise each vector first: with features near 1e150 both norms are near
        # 1e-150 and their product underflows to 0)
        nb, ns = np.linalg.norm(beta), np.linalg.norm(step)
        cos = float(np.vdot(step / ns, beta / nb)) if nb > 0 and ns > 0 else 0.0
        aligned = aligned + 1 if cos > 0.9 else 0
        beta, loss, f, g, emax = bt, lt, ft, gt, et
        n_iter += 1
        fh.append(f)
        gh.append(float(np.max(np.abs(g))) / sw)
        th.append(t)
    if not converged:
        if cause is None and l2 == 0.0 and emax > _SEPARATION_ETA:
            cause = "separation"
        if cause == "separation":
            msg = (
                f"fit_logistic stopped after {n_iter} iterations: the classes are (quasi-)"
                f"perfectly separable, so the unpenalised maximum-likelihood estimate does "
                f"not exist (coefficients grow without bound; some samples have |linear "
                f"predictor| > {emax:.3g}). The returned coefficients are finite but "
                f"arbitrary in scale; pass l2 > 0 for a unique solution."
            )
        elif cause == "line search":
            msg = (
                f"fit_logistic stopped after {n_iter} iterations: the line search could not "
                f"decrease the objective (max|gradient|/sum(w) = {gscaled:.3g} > tol = "
                f"{tol:.3g}); the data may be badly scaled, or tol below the attainable "
                f"precision."
            )
        else:
            msg = (
                f"fit_logistic did not converge in max_iter={max_iter} iterations "
                f"(max|gradient|/sum(w) = {gscaled:.3g}, tol = {tol:.3g}); increase max_iter."
            )
        warnings.warn(msg, ConvergenceWarning, stacklevel=3)
    hist = {
        "objective_history": np.asarray(fh, dtype=np.float64),
        "grad_norm_history": np.asarray(gh, dtype=np.float64),
        "step_size_history": np.asarray(th, dtype=np.float64),
    }
    return beta, loss, hist, converged, n_iter


# --------------------------------------------------------------------------- public API


def _check_options(l2, fit_intercept, max_iter, tol):
    l2 = check_scalar(l2, "l2", low=0.0)
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be True or False; got {fit_intercept!r}")
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, (int, np.integer)):
        raise ValueError(f"max_iter must be a non-negative integer; got {max_iter!r}")
    if max_iter < 0:
        raise ValueError(f"max_iter must be >= 0; got {max_iter}")
    tol = check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    return l2, bool(fit_intercept), int(max_iter), tol


def _initial(init, classes, d, fit_intercept, codes, w, K):
    """Starting point in the internal (centred) layout, shape (K', p)."""
    kk = 1 if K == 2 else K
    p = d + (1 if fit_intercept else 0)
    B = np.zeros((kk, p))
    if init is None:
        if fit_intercept:
            counts = np.bincount(codes, weights=w if w.shape[0] else None, minlength=K)
            pri = np.maximum(counts / counts.sum(), 1e-12)
            if K == 2:
                B[0, d] = np.log(pri[1]) - np.log(pri[0])
            else:
                B[:, d] = np.log(pri) - np.log(pri).mean()
        return B
    if isinstance(init, LogisticParams):
        if not np.array_equal(init.classes, classes):
            raise ValueError(
                f"init was fitted with classes {init.classes.tolist()} but y has classes "
                f"{classes.tolist()}; they must match"
            )
        coef, icpt = init.coef, init.intercept
    elif isinstance(init, tuple) and len(init) == 2:
        coef, icpt = (np.asarray(a, dtype=np.float64) for a in init)
    else:
        raise ValueError(
            "init must be None, a LogisticParams, or a (coef, intercept) tuple; "
            f"got {type(init).__name__}"
        )
    coef = np.asarray(coef, dtype=np.float64)
    icpt = np.asarray(icpt, dtype=np.float64).reshape(-1)
    if coef.shape != (kk, d) or icpt.shape != (kk,):
        raise ValueError(
            f"init must have coef of shape ({kk}, {d}) and intercept of shape ({kk},); "
            f"got {coef.shape} and {icpt.shape}"
        )
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(icpt))):
        raise ValueError("init contains NaN or infinity")
    B[:, :d] = coef
    if fit_intercept:
        B[:, d] = icpt
    if kk > 1:
        B -= B.mean(axis=0)
    return B


def _prepare(X, y, sample_weight, l2, fit_intercept, max_iter, tol):
    l2, fit_intercept, max_iter, tol = _check_options(l2, fit_intercept, max_iter, tol)
    X = check_X(X, allow_sparse=True)
    classes, codes = check_y(y, X.shape[0], min_classes=2)
    w = check_sample_weight(sample_weight, X.shape[0])
    if w.shape[0]:
        # a class whose rows all have weight 0 is absent from the likelihood: its
        # intercept would run to -inf (the fit would stop at once at a clipped prior)
        absent = np.flatnonzero(np.bincount(codes, weights=w, minlength=len(classes)) <= 0)
        if absent.size:
            label = classes[absent[0]]
            label = label.item() if hasattr(label, "item") else label
            raise ValueError(
                f"class {label!r} has zero total weight (sample_weight is 0 on all its "
                f"rows); logistic regression needs every class of y to carry weight"
            )
    sw = float(w.sum()) if w.shape[0] else float(X.shape[0])
    return X, classes, codes, w, sw, l2, fit_intercept, max_iter, tol


def _finish(B, data, classes, dtype, l2, loss, hist, converged, n_iter, obj):
    K = classes.shape[0]
    d = data.d
    B = B.copy()
    if K > 2:
        param = "symmetric" if l2 > 0 else "reference"
        if l2 > 0:
            B -= B.mean(axis=0)
        else:
            B -= B[0]
    else:
        param = "binary"
    coef = np.ascontiguousarray(B[:, :d], dtype=dtype)
    icpt = (B[:, d] if data.fi else np.zeros(B.shape[0])).astype(dtype)
    return LogisticParams(
        classes=classes, coef=coef, intercept=icpt, parametrization=param, l2=float(l2),
        fit_intercept=data.fi, n_iter=int(n_iter), converged=bool(converged),
        log_likelihood=float(-loss), solver=obj.solver, n_hessp=int(obj.nprod), **hist,
    )


def _objective(data, codes, w, l2, K, explicit=None):
    if K == 2:
        if explicit is None:
            explicit = data.p <= BINARY_EXPLICIT_MAX_P
        return _Binary(data, codes, w, l2, explicit)
    if explicit is None:
        explicit = K * data.p <= MULTINOMIAL_EXPLICIT_MAX
    return _Multinomial(data, codes, w, l2, K, explicit)


@serial_for_small_inputs(0)
@single_thread_blas_call
def fit_logistic(X, y, *, l2=0.0, fit_intercept=True, sample_weight=None, max_iter=100,
                 tol=1e-8, init=None, penalty=None) -> LogisticParams:
    r"""Fit logistic regression by Newton's method (IRLS).

    Minimises the penalised negative log-likelihood

    .. math::

        f(\beta) = -\sum_i w_i \log p(y_i \mid x_i) + \tfrac{l2}{2}\,\lVert W\rVert_F^2,

    with :math:`p(y=1 \mid x) = \sigma(w^\top x + b)` for two classes and
    :math:`p(y=k \mid x) = \exp(w_k^\top x + b_k) / \sum_l \exp(w_l^\top x + b_l)` for more
    (multinomial).  The intercept is never penalised; ``l2 = 1 / C`` in scikit-learn's
    terms.  Each Newton step solves :math:`H\Delta = -g` with the gradient
    :math:`g = \tilde X^\top W(\pi - y)` and Hessian
    :math:`H = \tilde X^\top \operatorname{diag}(w\,\pi(1-\pi))\tilde X + l2\,I`
    (binary), computed in one fused pass over X, followed by step halving until the
    Armijo condition holds.

    Parameters
    ----------
    X : array-like (n, d) or scipy sparse matrix
        float32 data gives float32 coefficients (accumulation is always float64).
    y : array-like (n,)
        Labels; two distinct values give binary, more give multinomial regression.
    l2 : float, default 0
        Ridge penalty on the coefficients.  With ``l2 = 0`` and more than two classes the
        coefficients are reported against ``classes[0]`` (reference class: its row is
        zero, as in statsmodels' MNLogit); with ``l2 > 0`` in the symmetric
        parametrisation (one row per class, as in scikit-learn).
    fit_intercept : bool, default True
    sample_weight : array-like (n,), optional
        Non-negative weights; a weight of 2 is the same as repeating the row.
    max_iter : int, default 100
        Maximum Newton steps.
    tol : float, default 1e-8
        Converged when ``max|∇f| / Σw ≤ tol`` and the Newton decrement
        ``½ΔᵀHΔ / Σw ≤ tol`` (scikit-learn's newton-cholesky criterion).
    init : LogisticParams or (coef, intercept), optional
        Starting point (default: zero coefficients, intercepts at the log prior odds).
    penalty : None or "firth", default None
        ``"firth"``: Firth's bias-reduced estimate (binary y, ``l2 = 0``), finite under
        separation; see :func:`fastgen.firth.fit_firth`.

    Returns
    -------
    LogisticParams

    Warns
    -----
    ConvergenceWarning
        If max_iter is reached, the line search fails, or (with ``l2 = 0``) the classes
        are perfectly or quasi-perfectly separable, in which case the maximum-likelihood
        estimate does not exist (Albert & Anderson 1984).  The warning names the cause;
        the returned coefficients are finite.  Detected when some sample's linear
        predictor exceeds 30 in absolute value while either the mean loss is below
        1e-10 or three successive Newton steps point along the current coefficients.

    Raises
    ------
    ValueError
        For invalid inputs (the message names the argument).
    numpy.linalg.LinAlgError
        If the Hessian is singular even after jitter (collinear features with l2 = 0).
    """
    if penalty is not None:
        if penalty != "firth" or l2 != 0:
            raise ValueError(f"penalty must be None or 'firth' (with l2=0); got "
                             f"penalty={penalty!r}, l2={l2!r}")
        from .firth import fit_firth

        return fit_firth(X, y, fit_intercept=fit_intercept, sample_weight=sample_weight,
                         max_iter=max_iter, tol=tol, init=init)
    X, classes, codes, w, sw, l2, fit_intercept, max_iter, tol = _prepare(
        X, y, sample_weight, l2, fit_intercept, max_iter, tol)
    K = classes.shape[0]
    data = _Data(X, fit_intercept)
    B0 = _initial(init, classes, data.d, fit_intercept, codes, w, K)
    obj = _objective(data, codes, w, l2, K)
    beta0 = B0[0] if K == 2 else B0
    beta, loss, hist, converged, n_iter = _newton(obj, beta0, max_iter, tol, sw, l2)
    B = beta.reshape(1, -1) if K == 2 else beta
    return _finish(B, data, classes, X.dtype, l2, loss, hist, converged, n_iter, obj)


@serial_for_small_inputs(1)
@single_thread_blas_call
def irls_step(params, X, y, *, l2=0.0, sample_weight=None) -> LogisticParams:
    r"""Take exactly one Newton (IRLS) step from ``params`` on (X, y).

    Uses the explicit Hessian and a Cholesky solve,
    :math:`\beta \leftarrow \beta + t\,\Delta` with :math:`H\Delta = -g` and t the first of
    1, ½, ¼, … satisfying the Armijo condition, for solvers that embed logistic
    regression in a larger loop.  The objective is that of :func:`fit_logistic`.

    Parameters
    ----------
    params : LogisticParams
        The current iterate; its classes must equal those of y, its number of features
        that of X, and its ``fit_intercept`` is kept.
    X, y, l2, sample_weight :
        As for :func:`fit_logistic`.

    Returns
    -------
    LogisticParams
        ``n_iter`` is one more than that of ``params`` (unchanged if the line search
        found no decrease); ``converged`` tells whether max|∇f|/Σw ≤ 1e-8 at the new
        point.  Histories describe this step only.
    """
    if not isinstance(params, LogisticParams):
        raise ValueError(
            f"params must be a LogisticParams (the result of fit_logistic); "
            f"got {type(params).__name__}"
        )
    X, classes, codes, w, sw, l2, _, _, _ = _prepare(
        X, y, sample_weight, l2, params.fit_intercept, 1, 1e-8)
    check_n_features(X, params.n_features_in)
    K = classes.shape[0]
    if not np.array_equal(classes, params.classes):
        raise ValueError(
            f"y has classes {classes.tolist()} but params were fitted with "
            f"{params.classes.tolist()}; they must match"
        )
    data = _Data(X, params.fit_intercept)
    B0 = _initial(params, classes, data.d, params.fit_intercept, codes, w, K)
    obj = _objective(data, codes, w, l2, K, explicit=True)
    beta0 = B0[0] if K == 2 else B0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        beta, loss, hist, _, n_iter = _newton(obj, beta0, 1, -1.0, sw, l2,
                                              check_separation=False)
    B = beta.reshape(1, -1) if K == 2 else beta
    converged = hist["grad_norm_history"][-1] <= 1e-8
    return _finish(B, data, classes, X.dtype, l2, loss, hist, converged,
                   params.n_iter + n_iter, obj)


def logistic_loss_grad_hess(X, codes, beta, *, n_classes, fit_intercept=True,
                            sample_weight=None, hessian=True):
    r"""Unpenalised loss, gradient and Hessian of one block of rows, for distributed IRLS.

    With X̃ = [X, 1] (the column of ones only if ``fit_intercept``), η = X̃β and weights
    w_i, the block's contribution to the objective of :func:`fit_logistic` before the
    penalty.  Binary (``n_classes == 2``, β of shape (p,), π = σ(η))::

        loss = Σ_i w_i (softplus(η_i) − y_i η_i),   g = X̃ᵀ w(π − y),
        H = X̃ᵀ diag(w π (1 − π)) X̃.

    Multinomial (β of shape (K, p), P = softmax(η) row-wise, Y one-hot)::

        loss = −Σ_i w_i log P_{i,y_i},   G = (w(P − Y))ᵀ X̃  (K, p),
        H_{(k,a),(l,b)} = Σ_i w_i P_ik (δ_kl − P_il) x̃_ia x̃_ib  (K·p, K·p).

    All three are sums over rows, so the values of disjoint blocks add up to those of
    their union; a Newton step needs their sums and the penalty ``l2`` on the client.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR
    codes : array-like (n,) of int
        Class indices in ``[0, n_classes)`` (positions in the global sorted label set).
    beta : ndarray (p,) or (K, p) float64
        Coefficients with the intercept last, p = d + fit_intercept.
    n_classes : int
    fit_intercept : bool, default True
    sample_weight : array-like (n,), optional
    hessian : bool, default True
        Also return H (else None).

    Returns
    -------
    loss : float
    grad : ndarray (p,) or (K, p)
    hess : ndarray (p, p) or (K·p, K·p), or None
    eta_max : float
        max_i |η_i| (binary) or the largest spread of η across classes (multinomial),
        used to detect separation.
    """
    X = check_X(X, allow_sparse=True)
    n = X.shape[0]
    K = int(n_classes)
    c = np.asarray(codes)
    if c.shape != (n,) or c.dtype.kind not in "iu" or (n and (c.min() < 0 or c.max() >= K)):
        raise ValueError(f"codes must be {n} integers in [0, {K})")
    c = np.ascontiguousarray(c, dtype=np.int32)
    w = check_sample_weight(sample_weight, n)
    data = _Data(X, bool(fit_intercept))
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    shape = (data.p,) if K == 2 else (K, data.p)
    if beta.shape != shape:
        raise ValueError(f"beta must have shape {shape}; got {beta.shape}")
    if K == 2:
        loss, g, H, emax = data.binary(c, w, beta, bool(hessian), np.empty(0))
        return float(loss), g, (H if hessian else None), float(emax)
    P = np.empty((n, K))
    loss, G, emax = data.multinomial(c, w, beta, P)
    H = data.multinomial_hessian(w, P) if hessian else None
    return float(loss), G, H, float(emax)
