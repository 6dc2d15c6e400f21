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
  of H scaled to a unit diagonal (jitter ``1e-10`` there and up if the factorisation
  fails).  Wider problems (sparse
  text data) use conjugate gradients on Hessian-vector products with a Jacobi
  preconditioner.
* Multinomial: for K·p ≤ ``MULTINOMIAL_EXPLICIT_MAX`` the explicit (K·p)² Hessian and a
  Cholesky solve; above, Newton-CG on Hessian-vector products (one fused pass over X
  each) preconditioned by the fixed Böhning bound ``½(I − 11ᵀ/K) ⊗ (X̃ᵀWX̃) + l2·I``
  (Böhning 1992; Krishnapuram et al. 2005), factorised once scaled to a unit diagonal,
  with the forcing term ``min(0.5, √(max|g|/Σw))`` (inexact Newton).  The crossover
  between the two is discussed at ``MULTINOMIAL_EXPLICIT_MAX``.

Stopping rule: a certificate.  Converged only when an accurate solve shows the Newton
decrement ½gᵀH⁻¹g ≤ tol (nats; per unit of mean weight where that is below 1), after
which the certifying step is taken (see ``newton``).  Fits and inference run in the
centred frame of ``centring`` (columns whose mean exceeds their spread are centred,
the intercept mapped back), and every solve on the Hessian scaled to a unit diagonal,
so neither the answer nor the stop depends on the units or offsets of X.

Modules, each importing only those above it in this list (plus ``fastgen._params``,
``fastgen._validation``, ``fastgen._runtime`` and the kernels):

* ``params``      LogisticParams (the fitted model) and ConvergenceWarning;
* ``newton``      the solver: Objective protocol, NewtonState, NewtonResult,
  ``newton_solve`` and its steps (direction, line search, update, convergence check),
  and the linear solvers (Cholesky with jitter, preconditioned CG);
* ``data``        the LogisticData protocol and InMemoryData (dense or CSR, the kernels);
* ``small``       the same passes (and the inference passes) in numpy, for small inputs;
* ``centring``    the centred frame: which columns are centred, the centred copy of X,
  and the exact maps of intercepts and covariances back to the user's coordinates;
* ``objectives``  BinaryObjective, MultinomialObjective, ``make_objective`` and the
  size thresholds between explicit Hessian and Newton-CG;
* ``feature_labels`` the names of design columns in messages;
* ``collinearity`` the rank rule and collinear_columns (in-order Cholesky of the scaled
  Gram);
* ``diagnostics`` detect_separation (Konis' linear programme), and the collinearity
  names again;
* ``api``         fit_logistic, irls_step, logistic_loss_grad_hess and the public
  assembly steps (options, inputs, starting point, params from a result, the
  collinearity check after an unpenalised fit);
* ``inference``   (a package) logistic_inference and LogisticInference: statsmodels-style
  Wald, robust (HC0/HC1/cluster) and likelihood-ratio inference at the optimum, and
  ``finish_inference``, the finish ``fastgen.dask.logistic_inference`` shares;
* ``penalised``   l* as an objective of the one loop (PenalisedObjective: Firth's step
  policies), run by every Firth-type fit, FLIC's intercept and the profile;
* ``firth``       Firth's bias-reduced binary fit (``fit_logistic(penalty="firth")``);
  ``firth_objective`` its penalised likelihood l* (an objective of the loop),
  ``firth_starts`` where a Firth fit starts and which maximum of l* it keeps,
  ``firth_multinomial`` the multinomial fit, ``bias_reduction`` FLIC and FLAC,
  ``firth_profile`` profile-likelihood intervals (imported by ``api`` and ``inference``
  on use).

An unpenalised fit (``l2 = 0``, no Firth penalty) warns with ``PerfectSeparationWarning``
when the data are separated (converged False) and with ``CollinearityWarning`` when the design is
rank-deficient; both subclass ``ConvergenceWarning``.
"""

from . import small  # noqa: F401 - small inputs' numpy passes (see data.InMemoryData)
from .api import fit_logistic, irls_step, logistic_loss_grad_hess
from .diagnostics import (
    Collinearity,
    SeparationResult,
    collinear_columns,
    detect_separation,
)
from .inference import LogisticInference, logistic_inference
from .objectives import BINARY_EXPLICIT_MAX_P, BOHNING_FULL_MAX_P, MULTINOMIAL_EXPLICIT_MAX
from .params import (
    CollinearityWarning,
    ConvergenceWarning,
    LogisticParams,
    PerfectSeparationWarning,
)

__all__ = ["LogisticParams", "ConvergenceWarning", "PerfectSeparationWarning",
           "CollinearityWarning", "fit_logistic", "irls_step", "logistic_loss_grad_hess",
           "detect_separation", "SeparationResult", "collinear_columns", "Collinearity",
           "LogisticInference", "logistic_inference", "BINARY_EXPLICIT_MAX_P",
           "MULTINOMIAL_EXPLICIT_MAX", "BOHNING_FULL_MAX_P"]
